"""The kernel regressors' ``out_of_bounds``: inputs beyond the training range.

``InfiniteFeatureRegressor`` and ``LowRankKernelRegressor`` predict on
inputs clipped to each column's training range (``x_range_``).  A user whose
trend goes on past the data could neither turn that off nor be told of such
rows.  ``out_of_bounds`` (scikit-learn's ``IsotonicRegression`` precedent)
chooses: ``"clip"`` (the default), ``"raise"`` (the first row clipping
would change, named by row and column, in all of a Dask array's rows) and
``"extend"`` (the model's own function, unclipped).  One function decides
(``_input_range.bounded_inputs``), in the decision objects that predict in
memory and on the Dask workers.
"""

import copy
import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError

from kernlearn import InfiniteFeatureRegressor, LowRankKernelRegressor
from kernlearn.io import load_model, save_model

ESTIMATORS = {
    "InfiniteFeatureRegressor": lambda **kw: InfiniteFeatureRegressor(random_state=0, **kw),
    "LowRankKernelRegressor": lambda **kw: LowRankKernelRegressor(random_state=0, **kw),
}
MODES = ("clip", "raise", "extend")


def _data(sparse=False):
    """Training rows in [0.5, 3] (column 2: stored values only, so the range
    excludes 0), rows inside the range, and rows beyond it."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 3.0, (120, 3))
    if sparse:
        X[:, :2][rng.random((120, 2)) < 0.3] = 0.0  # (columns 0 and 1 hold zeros; 2 not)
    y = 2.0 * X[:, 0] + np.sin(X[:, 1]) + 0.1 * X[:, 2]
    inside = X[:10] * 0.9 + 0.1
    far = inside.copy()
    far[3, 1] = 7.5  # the first value beyond the range: row 3, column 1
    far[6, 0] = -4.0
    if sparse:
        far[8, 2] = 0.0  # an implicit zero below column 2's range
        return sp.csr_matrix(X), y, sp.csr_matrix(inside), sp.csr_matrix(far)
    return X, y, inside, far


@pytest.fixture(scope="module")
def fitted():
    """Each regressor fitted with each mode, on dense and on sparse rows."""
    out = {}
    for name, make in ESTIMATORS.items():
        for sparse in (False, True):
            X, y, _, _ = _data(sparse)
            for mode in MODES:
                out[name, sparse, mode] = make(out_of_bounds=mode).fit(X, y)
    return out


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_each_mode_in_memory(fitted, name, sparse):
    _, _, inside, far = _data(sparse)
    clip, refuse, extend = (fitted[name, sparse, m] for m in MODES)
    # the parameter changes no fitted number: rows inside the range agree
    np.testing.assert_array_equal(clip.x_range_, extend.x_range_)
    want = clip.predict(inside)
    np.testing.assert_array_equal(refuse.predict(inside), want)
    np.testing.assert_array_equal(extend.predict(inside), want)
    # "clip" predicts the rows clipped by hand
    edge = np.clip(_dense(far), *clip.x_range_)
    np.testing.assert_allclose(clip.predict(far), clip.predict(edge), rtol=1e-12, atol=1e-12)
    # "extend" is the unclipped model (no range: the prediction before clipping)
    unclipped = copy.deepcopy(clip)
    unclipped.x_range_ = None
    np.testing.assert_array_equal(extend.predict(far), unclipped.predict(far))
    moved = np.flatnonzero(np.any(_dense(far) != edge, axis=1))
    assert set(moved) == ({3, 6, 8} if sparse else {3, 6})
    assert not np.allclose(extend.predict(far)[moved], clip.predict(far)[moved])
    with pytest.raises(ValueError, match=r"at row 3, column 1: 7\.5, outside \["):
        refuse.predict(far)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_raise_names_the_row_column_value_and_range(fitted, name, sparse):
    est = fitted[name, sparse, "raise"]
    _, _, inside, far = _data(sparse)
    lo, hi = map(float, est.x_range_[:, 1])
    with pytest.raises(ValueError) as info:
        est.predict(far)
    msg = str(info.value)
    # (the numbers exactly: a value a hair beyond the range is not its twin)
    assert f"row 3, column 1: 7.5, outside [{lo!r}, {hi!r}]" in msg
    assert f"({3 if sparse else 2} row(s) beyond it in all)" in msg
    assert name in msg and "out_of_bounds='clip'" in msg and "'extend'" in msg
    # an implicit zero of sparse X below a column's range (0 outside it) is refused
    if sparse:
        only = sp.csr_matrix(_dense(inside))
        only[8, 2] = 0.0
        only.eliminate_zeros()
        with pytest.raises(ValueError, match=r"at row 8, column 2: 0\.0, outside"):
            est.predict(only)


def test_raise_names_a_dataframe_column_and_grfl_transform_follows(fitted):
    pd = pytest.importorskip("pandas")
    X, y, inside, far = _data()
    cols = ["income", "age", "size"]
    est = InfiniteFeatureRegressor(random_state=0, out_of_bounds="raise").fit(
        pd.DataFrame(X, columns=cols), y)
    with pytest.raises(ValueError, match="at row 3, column 'age': 7.5"):
        est.predict(pd.DataFrame(far, columns=cols))
    with pytest.raises(ValueError, match="at row 3, column 'age': 7.5"):
        est.transform(pd.DataFrame(far, columns=cols))
    # transform: clipped by "clip", the unclipped columns with "extend"
    clip, extend = fitted["InfiniteFeatureRegressor", False, "clip"], \
        fitted["InfiniteFeatureRegressor", False, "extend"]
    edge = np.clip(far, *clip.x_range_)
    np.testing.assert_allclose(clip.transform(far), clip.transform(edge), atol=1e-12)
    unclipped = copy.deepcopy(clip)
    unclipped.x_range_ = None
    np.testing.assert_array_equal(extend.transform(far), unclipped.transform(far))
    assert not np.allclose(extend.transform(far), clip.transform(far))


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_an_unknown_value_is_refused(fitted, name):
    X, y, _, far = _data()
    with pytest.raises(InvalidParameterError, match="'out_of_bounds' parameter"):
        ESTIMATORS[name](out_of_bounds="nearest").fit(X, y)
    # set after the fit (which validates it): refused by the prediction
    est = copy.deepcopy(fitted[name, False, "clip"]).set_params(out_of_bounds="Clip")
    with pytest.raises(ValueError, match="'out_of_bounds' parameter .* got 'Clip'"):
        est.predict(far)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_a_model_file_keeps_the_mode_and_an_old_one_clips(fitted, name, tmp_path,
                                                          monkeypatch):
    _, _, _, far = _data()
    for mode in ("raise", "extend"):
        save_model(fitted[name, False, mode], tmp_path / f"{mode}.npz")
        again = load_model(tmp_path / f"{mode}.npz")
        assert again.out_of_bounds == mode
    with pytest.raises(ValueError, match="at row 3, column 1"):
        again_raise = load_model(tmp_path / "raise.npz")
        again_raise.predict(far)
    np.testing.assert_array_equal(again.predict(far),
                                  fitted[name, False, "extend"].predict(far))
    # a file written before the parameter (its params without it): the default,
    # the clipping that model had
    est = copy.deepcopy(fitted[name, False, "extend"])
    del est.out_of_bounds
    cls = type(est)
    monkeypatch.setattr(cls, "get_params", lambda self, deep=True: {
        k: getattr(self, k) for k in cls._get_param_names() if k != "out_of_bounds"})
    save_model(est, tmp_path / "old.npz")
    monkeypatch.undo()
    old = load_model(tmp_path / "old.npz")
    assert old.out_of_bounds == "auto"  # (the RBF/Fourier models': "clip")
    np.testing.assert_array_equal(old.predict(far),
                                  fitted[name, False, "clip"].predict(far))


def test_the_command_line_sets_it():
    from kernlearn.cli import CLIError, build_estimator

    for short in ("infinite-regressor", "lowrank-regressor"):
        _, est = build_estimator(short, ["out_of_bounds=extend"])
        assert est.out_of_bounds == "extend"
        with pytest.raises(CLIError, match="out_of_bounds"):
            build_estimator(short, ["out_of_bounds=nearest"])


# ---------------------------------------------------------------- Dask arrays

# conftest's module-scoped client: one light cluster (one one-thread worker in this process)
DASK_CLUSTER = dict(n_workers=1, processes=False)


def _dask_far(sparse):
    """40 rows in blocks of 16, the last ten those of ``far`` (rows 32 to 39)."""
    import dask.array as da

    _, _, inside, far = _data(sparse)
    rows = [_dense(inside)] * 3 + [_dense(far)[:10]]
    X = np.vstack(rows)  # far's row 3 is X's row 33, its row 6 X's 36
    X = sp.csr_matrix(X) if sparse else X
    return X, da.from_array(X, chunks=(16, 3), asarray=False)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_each_mode_on_a_dask_array(client, fitted, name, sparse):
    import dask.array as da

    X, lazy_X = _dask_far(sparse)
    for mode in ("clip", "extend"):
        est = fitted[name, sparse, mode]
        lazy = est.predict(lazy_X)
        assert isinstance(lazy, da.Array)
        np.testing.assert_allclose(lazy.compute(), est.predict(X), rtol=1e-12, atol=1e-12)
    est = fitted[name, sparse, "raise"]
    lazy = est.predict(lazy_X)  # (lazy: raised when computed)
    with pytest.raises(ValueError) as info:
        lazy.compute()
    lo, hi = map(float, est.x_range_[:, 1])
    # the row in all of X (row 1 of block 2), as the in-memory prediction names it
    assert re.search(rf"at row 33, column 1: 7\.5, outside \[{re.escape(repr(lo))}, "
                     rf"{re.escape(repr(hi))}\] "
                     r"\(\d row\(s\) beyond it in row block 2\)", str(info.value)), \
        str(info.value)
    with pytest.raises(ValueError, match="at row 33, column 1: 7.5"):
        est.predict(X)


def test_the_dask_graph_of_raise_carries_no_scikit_learn(fitted, tmp_path):
    # the decision object carries the mode to the workers, which must not
    # import scikit-learn where it is unpickled
    import subprocess
    import sys

    cloudpickle = pytest.importorskip("cloudpickle")
    _, lazy_X = _dask_far(False)
    for name in ESTIMATORS:
        lazy = fitted[name, False, "raise"].predict(lazy_X)
        (tmp_path / "tasks").write_bytes(cloudpickle.dumps(dict(lazy.__dask_graph__())))
        check = ("import pickle, sys; pickle.loads(open(sys.argv[1], 'rb').read()); "
                 "print('sklearn' in sys.modules)")
        out = subprocess.run([sys.executable, "-c", check, str(tmp_path / "tasks")],
                             capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "False", out.stdout
