"""The low-rank estimators do not depend on the order of the training rows.

SLKL samples ``M`` candidate columns and, with ``gamma_factors="auto"``, deals
them in turn to two or three widths; the coordinate sequence names columns by
their place in the sample.  That place was the row's rank in row order, so on
small data (``M = n``: every row a centre, where a seed only moves the
coordinate sequence) the same rows in another order gave a model 10-25 times
as far away as a change of ``random_state`` did (audit 59).  The sample is now
taken in the order of its rows' kernel values against one another
(:func:`kernlearn.families.nystrom.content_order`), so a permutation of the
rows gives the same model when every row is sampled; since the twenty-sixth
pass the sample itself is keyed by the rows' content, so at ``M < n`` too
(``tests/test_lowrank_row_sample.py``).
"""

from itertools import pairwise

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor
from kernlearn.families.nystrom import content_order, kernel_block
from kernlearn.kernels import pairwise_kernel
from kernlearn.methods.slkl import AUTO_GAMMA_FACTORS, fit_slkl

_RNG = np.random.default_rng(7)
X = _RNG.normal(size=(60, 3))
Y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * _RNG.normal(size=60)
YC = (Y > np.median(Y)).astype(int)
Y3 = np.digitize(Y, np.quantile(Y, [1 / 3, 2 / 3]))
XT = _RNG.normal(size=(25, 3))
PERMS = [np.random.default_rng(100 + k).permutation(60) for k in range(3)]


def _out(est, Xp):
    f = getattr(est, "decision_function", None)
    return np.asarray(f(Xp) if f is not None else est.predict(Xp), dtype=float)


CASES = {
    "regressor": (LowRankKernelRegressor(random_state=0), Y),
    "regressor on demand": (LowRankKernelRegressor(precompute=False, random_state=0), Y),
    "regressor two outputs": (LowRankKernelRegressor(random_state=0),
                              np.column_stack([Y, np.cos(X[:, 2])])),
    "regressor nu path given": (LowRankKernelRegressor(nu=(0.1, 0.01), random_state=0), Y),
    "classifier": (LowRankKernelClassifier(random_state=0), YC),
    "classifier three classes": (LowRankKernelClassifier(random_state=0), Y3),
    "classifier ovr": (LowRankKernelClassifier(multiclass="ovr", random_state=0), Y3),
    "classifier balanced": (LowRankKernelClassifier(class_weight="balanced",
                                                    random_state=0), Y3),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_row_sampled_a_permutation_gives_the_same_model(case):
    """M = n (60 rows, the default M): the same model to round-off, same seed."""
    est, y = CASES[case]
    base = clone(est).fit(X, y)
    assert len(base.column_indices_) == 60
    assert len(set(base.center_factors_)) == 2  # (both widths in use)
    p0 = _out(base, XT)
    for perm in PERMS:
        other = clone(est).fit(X[perm], y[perm])
        np.testing.assert_allclose(_out(other, XT), p0, rtol=0, atol=1e-7)
        # the same rows sampled, in the same order, at the same widths
        np.testing.assert_array_equal(perm[other.column_indices_], base.column_indices_)
        np.testing.assert_array_equal(other.center_factors_, base.center_factors_)


def test_weights_sparse_precomputed_and_three_widths_keep_the_model():
    rng = np.random.default_rng(3)
    w = rng.uniform(0.5, 2.0, 60)
    w[::7] = 0.0  # rows left out of the sample and the fit
    heavy = np.exp(2 * X)  # (heavy tails: the third, narrower width)
    K = pairwise_kernel(X, X, "rbf", gamma=0.5)
    for kind in ("weights", "sparse", "precomputed", "heavy"):
        kw, fit_kw, Xf, Xp = {}, {}, X, XT
        if kind == "weights":
            fit_kw = {"sample_weight": w}
        elif kind == "sparse":
            Xf, Xp = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X)), sp.csr_matrix(XT)
        elif kind == "precomputed":
            kw, Xf, Xp = {"kernel": "precomputed"}, K, pairwise_kernel(XT, X, "rbf", gamma=0.5)
        else:
            Xf, Xp = heavy, np.exp(2 * XT)
        est = LowRankKernelRegressor(random_state=1, **kw)
        base = clone(est).fit(Xf, Y, **fit_kw)
        if kind == "heavy":
            assert len(set(base.center_factors_)) == 3
        p0 = _out(base, Xp)
        for perm in PERMS[:2]:
            Xq = Xf[perm][:, perm] if kind == "precomputed" else Xf[perm]
            Xpq = Xp[:, perm] if kind == "precomputed" else Xp
            q_kw = {"sample_weight": w[perm]} if kind == "weights" else {}
            other = clone(est).fit(Xq, Y[perm], **q_kw)
            np.testing.assert_allclose(_out(other, Xpq), p0, rtol=0, atol=1e-7,
                                       err_msg=kind)


def test_fewer_columns_than_rows_a_permutation_keeps_the_model():
    """M < n: the sample is keyed by the rows' content (twenty-sixth pass; it was
    drawn by position, and a permutation moved the model as a seed does)."""
    rng = np.random.default_rng(11)
    Xb = rng.normal(size=(150, 3))
    yb = np.sin(2 * Xb[:, 0]) + Xb[:, 1] ** 2 + 0.1 * rng.normal(size=150)
    Xt = rng.normal(size=(50, 3))
    est = LowRankKernelRegressor(n_columns=40, random_state=0)
    p0 = _out(clone(est).fit(Xb, yb), Xt)
    by_seed, by_order = [], []
    for k in range(1, 6):
        by_seed.append(np.mean(np.abs(
            _out(clone(est).set_params(random_state=k).fit(Xb, yb), Xt) - p0)))
        perm = np.random.default_rng(200 + k).permutation(150)
        by_order.append(np.max(np.abs(_out(clone(est).fit(Xb[perm], yb[perm]), Xt) - p0)))
    assert max(by_order) < 1e-7, by_order
    assert min(by_seed) > 1e-3, by_seed  # (a seed still moves it)


def test_the_widths_follow_the_documented_order():
    """column_indices_ is the sample in content order; column j has factor j % K."""
    res = fit_slkl(X, Y[:, None], n_columns=30, nu=1e-3, seed=4)
    S = res.column_indices
    # the key: each sampled row's sorted kernel values against the sample
    B = kernel_block(X[S], X[S], "rbf", res.kernel_params)
    keys = np.sort(B, axis=1)
    for a, b in pairwise(keys):
        k = np.flatnonzero(np.abs(a - b) > 1e-12)
        assert k.size and a[k[0]] < b[k[0]]  # lexicographically increasing
    factors = np.resize(AUTO_GAMMA_FACTORS, 30)
    place = {i: j for j, i in enumerate(S)}
    np.testing.assert_array_equal(
        res.center_factors, factors[[place[i] for i in res.center_indices]])


def test_content_order_is_the_same_for_equal_data_handed_over_differently():
    idx = np.arange(60)
    params = {"gamma": 0.3}
    ref = content_order(X, idx, "rbf", params)
    for perm in PERMS:
        np.testing.assert_array_equal(perm[content_order(X[perm], idx, "rbf", params)], ref)
    # columns permuted, float32, sparse, the Gram matrix: the kernel's values
    np.testing.assert_array_equal(content_order(X[:, [2, 0, 1]], idx, "rbf", params), ref)
    np.testing.assert_array_equal(content_order(X.astype(np.float32), idx, "rbf", params),
                                  ref)
    np.testing.assert_array_equal(content_order(sp.csr_matrix(X), idx, "rbf", params), ref)
    K = pairwise_kernel(X, X, "rbf", gamma=0.3)
    np.testing.assert_array_equal(content_order(K, idx, "precomputed", {}), ref)
    # a subset keeps its own order (keys against the subset)
    sub = content_order(X, idx[::2], "rbf", params)
    assert sorted(sub) == list(idx[::2])


def test_equal_rows_are_interchangeable():
    """Duplicated rows tie; whichever comes first, the model is the same."""
    Xd = np.vstack([X[:40], X[:20]])
    yd = np.concatenate([Y[:40], Y[:20]])
    est = LowRankKernelRegressor(random_state=2)
    p0 = _out(clone(est).fit(Xd, yd), XT)
    for perm in PERMS:
        np.testing.assert_allclose(_out(clone(est).fit(Xd[perm], yd[perm]), XT), p0,
                                   rtol=0, atol=1e-7)


@pytest.mark.parametrize(("est", "phrase"), [
    (LowRankKernelRegressor, "the same rows in another order give the same model"),
    (LowRankKernelClassifier, "the same rows in another order give the same decision"),
])
def test_random_state_says_when_the_row_order_does_not_matter(est, phrase):
    doc = " ".join(est.__doc__.split())
    assert phrase in doc
    assert "at any ``M``" in doc
