"""Defects a new user met in a second user-level audit of the Python API and
the CLI; each test names what went wrong."""

import numpy as np
import pytest

from conftest import run_cli as _run, one_error as _one_error


@pytest.mark.parametrize("name", ["LowRankKernelRegressor", "LowRankKernelClassifier"])
def test_slkl_with_fewer_columns_than_width_factors(name):
    # n_columns=1 (valid) with the two default width factors, or a regressor
    # on one row, failed with "n_columns=0 must be between 1 and n_samples"
    import kernlearn

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    if name.endswith("Classifier"):
        y = y > 0
    est = getattr(kernlearn, name)(n_columns=1, random_state=0).fit(X, y)
    # the one column is at the first factor, 1.0 (column j has factor j % 2)
    assert est.center_factors_.tolist() in ([], [1.0])
    two = getattr(kernlearn, name)(n_columns=2, random_state=0).fit(X, y)
    assert two.center_factors_.tolist() in ([], [1.0], [0.1], [1.0, 0.1])
    if name.endswith("Regressor"):
        one = kernlearn.LowRankKernelRegressor(random_state=0).fit([[1.0, 2.0]], [3.0])
        # one row: its target is the intercept, whatever the input
        assert one.predict([[0.0, 0.0], [5.0, -1.0]]).tolist() == [3.0, 3.0]


def test_saving_an_unfitted_estimator_is_refused(tmp_path):
    # the file was written and every later load failed ("the model holds no
    # fitted attributes"): the user learned it only when using the model
    from sklearn.exceptions import NotFittedError

    from kernlearn import FGMClassifier
    from kernlearn.io import save_model

    with pytest.raises(NotFittedError):
        save_model(FGMClassifier(), tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def _mt_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    t = np.arange(80) % 2
    return X, X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=80), t


def _kernels():
    from kernlearn.kernels import linear_kernel, rbf_kernel

    return [linear_kernel, (rbf_kernel, {"gamma": 0.5})]


@pytest.mark.parametrize("kw", [{}, {"C": "auto"}, {"formulation": "mtsfl"}])
def test_multitask_square_loss_on_extreme_target_scales(kw):
    # a constant target of 1e200 overflowed the dual and the model predicted
    # 0 (MK-MTSFL crashed with a KeyError); targets near 1e-300 got other
    # kernel weights: both without a word.  Now refused, and the square loss
    # is scale-equivariant wherever float64 holds the squares.
    from kernlearn import MultitaskMKLRegressor

    X, y, t = _mt_data()

    def fit(target):
        return MultitaskMKLRegressor(kernels=_kernels(), max_iter=5, **kw).fit(
            X, target, task_index=t)

    ref = fit(y)
    for s in (1e-140, 1e140):
        est = fit(y * s)
        # (C="auto" stops L-BFGS-B at a relative tolerance: 1e-7 apart)
        np.testing.assert_allclose(est.kernel_weights_, ref.kernel_weights_, atol=1e-6)
        np.testing.assert_allclose(est.predict(X, task_index=t) / s,
                                   ref.predict(X, task_index=t), rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="too large for the square loss"):
        fit(np.full(80, 1e200))
    with pytest.raises(ValueError, match="varies too little for the square loss"):
        fit(y * 1e-300)
    # a constant target needs no squares of its spread: any scale
    np.testing.assert_allclose(fit(np.full(80, 1e-300)).predict(X[:2], task_index=t[:2]),
                               1e-300, rtol=1e-12)
