"""The low-rank estimators' column sample does not depend on the row order.

With fewer candidate columns than rows (``M < n``: the default beyond 192 rows
for the regressor, 128 for the classifier) SLKL drew its sample by position,
``rng.choice(n, M)``: the same rows in another order (a file sorted
differently) gave other centres and moved the model as far as a change of
``random_state``.  The sample is now the ``M`` rows of smallest seeded key, a
hash of each row's inputs (each value's rank in its column) and its
occurrence number among rows of equal inputs, ordered by target and weight
(``kernlearn.families._content_sample``), so a permutation gives the same
model to round-off at any ``M``, and a seed still draws a uniform sample.
"""

from itertools import pairwise

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor
from kernlearn.kernels import pairwise_kernel

_RNG = np.random.default_rng(21)
N = 160
# (a column far from zero: its standardised values differ in round-off
# between row orders, which the key's grid must absorb)
X = _RNG.normal(size=(N, 4)) * [1.0, 3.0, 0.2, 0.5] + [0.0, 2000.0, 0.0, -40.0]
Y = np.sin(2 * X[:, 0]) + ((X[:, 1] - 2000) / 3) ** 2 + 0.1 * _RNG.normal(size=N)
YC = (Y > np.median(Y)).astype(int)
Y3 = np.digitize(Y, np.quantile(Y, [1 / 3, 2 / 3]))
XT = _RNG.normal(size=(30, 4)) * [1.0, 3.0, 0.2, 0.5] + [0.0, 2000.0, 0.0, -40.0]
W = _RNG.uniform(0.5, 2.0, N)
W[::6] = 0.0  # (rows out of the sample and of the fit)
PERMS = [np.random.default_rng(300 + k).permutation(N) for k in range(3)]
#: round-off: X * (1 + 1e-15) moves the fits by up to 7e-6 (on demand: the
#: same sampled rows, the solver's path amplifies it; a seed moves them by 0.1-1)
ATOL = 1e-4
SPARSE = np.where(np.abs(X - X.mean(axis=0)) < 0.4 * X.std(axis=0), 0.0, X - [0, 2000, 0, -40])


def _out(est, Xp):
    f = getattr(est, "decision_function", None)
    return np.asarray(f(Xp) if f is not None else est.predict(Xp), dtype=float)


def _rbf(A, B, gamma=0.3):
    return pairwise_kernel(A, B, "rbf", gamma=gamma)


CASES = {
    "regressor": (LowRankKernelRegressor(n_columns=40, random_state=0), Y, {}),
    "regressor on demand": (LowRankKernelRegressor(n_columns=40, precompute=False,
                                                   random_state=0), Y, {}),
    "regressor weights": (LowRankKernelRegressor(n_columns=40, random_state=1), Y,
                          {"sample_weight": W}),
    "regressor two outputs": (LowRankKernelRegressor(n_columns=40, random_state=0),
                              np.column_stack([Y, np.cos(X[:, 2])]), {}),
    "regressor nu path weights": (LowRankKernelRegressor(n_columns=40, nu=(0.1, 0.01),
                                                         random_state=3), Y,
                                  {"sample_weight": W}),
    "classifier": (LowRankKernelClassifier(n_columns=40, random_state=0), YC, {}),
    "classifier weights": (LowRankKernelClassifier(n_columns=40, random_state=2), YC,
                           {"sample_weight": W}),
    "classifier three classes": (LowRankKernelClassifier(n_columns=40, random_state=0),
                                 Y3, {}),
    "classifier ovr": (LowRankKernelClassifier(n_columns=40, multiclass="ovr",
                                               random_state=0), Y3, {}),
    "classifier default M": (LowRankKernelClassifier(random_state=4), YC, {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fewer_columns_than_rows_a_permutation_gives_the_same_model(case):
    """Fails before the twenty-sixth pass: other rows sampled, the model of
    another seed (decision values apart by 0.1-1)."""
    est, y, kw = CASES[case]
    base = clone(est).fit(X, y, **kw)
    M = len(base.column_indices_)
    assert M < N
    if "sample_weight" in kw:  # (never a row of zero weight)
        assert np.all(W[base.column_indices_] > 0)
    p0 = _out(base, XT)
    for perm in PERMS:
        kq = {"sample_weight": W[perm]} if "sample_weight" in kw else {}
        other = clone(est).fit(X[perm], y[perm], **kq)
        # the same rows, in the same order (content order), the same model
        np.testing.assert_array_equal(perm[other.column_indices_], base.column_indices_)
        np.testing.assert_allclose(_out(other, XT), p0, rtol=0, atol=ATOL, err_msg=case)


@pytest.mark.parametrize("kind", ["sparse", "precomputed", "callable", "columns"])
def test_sparse_precomputed_callable_and_column_order_keep_the_sample(kind):
    est = LowRankKernelRegressor(n_columns=30, random_state=5)
    Xf, Xp = X, XT
    if kind == "sparse":
        Xf = sp.csr_matrix(SPARSE)
        Xp = sp.csr_matrix(np.where(np.abs(XT) < 0.3, 0.0, XT - [0, 2000, 0, -40]))
    elif kind == "precomputed":
        # a Gram row has no content but its kernel values: each against a
        # training row known by its own content, so rows and columns permuted
        # together key alike
        Z = (X - X.mean(axis=0)) / X.std(axis=0)
        est.set_params(kernel="precomputed")
        Xf, Xp = _rbf(Z, Z), _rbf((XT - X.mean(axis=0)) / X.std(axis=0), Z)
    elif kind == "callable":
        est.set_params(kernel=_rbf)
    base = clone(est).fit(Xf, Y)
    p0 = _out(base, Xp)
    if kind == "columns":  # (the columns in another order: the same sample)
        cols = [3, 0, 2, 1]
        other = clone(est).fit(X[:, cols], Y)
        np.testing.assert_array_equal(other.column_indices_, base.column_indices_)
        np.testing.assert_allclose(_out(other, XT[:, cols]), p0, rtol=0, atol=ATOL)
        return
    for perm in PERMS[:2]:
        Xq = Xf[perm][:, perm] if kind == "precomputed" else Xf[perm]
        Xpq = Xp[:, perm] if kind == "precomputed" else Xp
        other = clone(est).fit(Xq, Y[perm])
        np.testing.assert_array_equal(perm[other.column_indices_], base.column_indices_)
        np.testing.assert_allclose(_out(other, Xpq), p0, rtol=0, atol=ATOL, err_msg=kind)


@pytest.mark.parametrize("make", [LowRankKernelRegressor, LowRankKernelClassifier])
def test_integer_and_categorical_columns_keep_the_sample(make):
    """Counts, codes and a binary column (many equal values, standardised: their
    round-off differs between row orders) and a row order sorted by a column, as
    a file sorted differently would be."""
    rng = np.random.default_rng(12)
    Xi = np.column_stack([rng.integers(0, 17, N), rng.integers(0, 3, N),
                          rng.integers(0, 2, N), 1990 + rng.integers(0, 30, N),
                          rng.normal(size=N)]).astype(float)
    yi = Xi[:, 0] / 4 + Xi[:, 2] - (Xi[:, 3] - 2005) / 10 + rng.normal(size=N)
    yi = yi if make is LowRankKernelRegressor else (yi > np.median(yi)).astype(int)
    est = make(n_columns=50, random_state=8)
    base = clone(est).fit(Xi, yi)
    p0 = _out(base, Xi[:30])
    for perm in PERMS[:2] + [np.lexsort(Xi.T[:4])]:
        other = clone(est).fit(Xi[perm], yi[perm])
        np.testing.assert_array_equal(np.sort(perm[other.column_indices_]),
                                      np.sort(base.column_indices_))
        np.testing.assert_allclose(_out(other, Xi[:30]), p0, rtol=0, atol=ATOL)


def test_housing_a_permutation_keeps_the_sample():
    """Housing (506 rows; integer, binary and rounded columns): a column's salt
    from a histogram of its standardised values moved the whole sample when
    round-off put a value across a bin edge (two of three permutations)."""
    from conftest import real_data

    data = real_data("housing")
    Xh = data.data.toarray() if sp.issparse(data.data) else np.asarray(data.data)
    yh = np.asarray(data.target, dtype=float)
    est = LowRankKernelRegressor(random_state=0)
    base = clone(est).fit(Xh, yh)
    assert len(base.column_indices_) < len(yh)
    p0 = base.predict(Xh)
    for k in range(3):
        perm = np.random.default_rng(k).permutation(len(yh))
        other = clone(est).fit(Xh[perm], yh[perm])
        np.testing.assert_array_equal(np.sort(perm[other.column_indices_]),
                                      np.sort(base.column_indices_))
        np.testing.assert_allclose(other.predict(Xh), p0, rtol=0, atol=1e-4)


def _sample(Xs, M, seed, tie=None, pool=None):
    from kernlearn.families._content_sample import content_sample

    pool = np.arange(Xs.shape[0]) if pool is None else pool
    return content_sample(Xs, pool, M, seed, tie)


def test_duplicated_rows_are_not_sampled_together():
    """Rows of equal inputs share a hash but not a key (their occurrence
    number is hashed too): a row given four times is taken 0-4 times."""
    base = _RNG.normal(size=(50, 3))
    Xd = np.repeat(base, 4, axis=0)  # (each row four times, targets too)
    yd = np.repeat(_RNG.normal(size=50), 4)
    counts = []
    for seed in range(20):
        S = _sample(Xd, 50, seed, yd[:, None])
        counts.append(np.bincount(S // 4, minlength=50))
    counts = np.array(counts)
    assert np.mean((counts > 0) & (counts < 4)) > 0.2, counts  # (partly taken)
    assert counts.max() >= 2  # (and a row twice: copies are not excluded either)
    # through the estimator: the copies are interchangeable, a permutation
    # of the rows (copies included) keeps the model
    est = LowRankKernelRegressor(n_columns=50, random_state=6)
    p0 = est.fit(Xd, yd).predict(XT[:, :3])
    copies = np.bincount(est.column_indices_ // 4, minlength=50)
    assert np.any((copies > 0) & (copies < 4))
    perm = np.random.default_rng(9).permutation(200)
    other = clone(est).fit(Xd[perm], yd[perm]).predict(XT[:, :3])
    np.testing.assert_allclose(other, p0, rtol=0, atol=ATOL)


def test_the_key_is_deterministic_in_the_seed_and_changes_with_it():
    tie = Y[:, None]
    S0 = _sample(X, 40, 7, tie)
    np.testing.assert_array_equal(_sample(X, 40, 7, tie), S0)
    np.testing.assert_array_equal(_sample(X.copy(order="F"), 40, 7, tie), S0)
    others = [set(_sample(X, 40, s, tie)) for s in range(8, 13)]
    for o in others:
        assert o != set(S0)
        assert len(o & set(S0)) < 25  # (about 40 * 40 / 160 = 10 in common)
    # the inputs are the content, through each column's ranks and the
    # histogram of its values: an increasing affine map of a column
    # (standardisation, a sparse column scaled where a dense one is centred
    # too) or float32 copies keep the sample; the targets only order rows of
    # equal inputs (one output of a multi-output problem samples as the whole
    # problem does)
    np.testing.assert_array_equal(_sample(X, 40, 7, -3 * tie), S0)
    np.testing.assert_array_equal(_sample((X - 5) * [0.37, 2, 1e3, 1], 40, 7, tie), S0)
    np.testing.assert_array_equal(_sample(X.astype(np.float32), 40, 7, tie), S0)
    # (another column, other keys)
    assert set(_sample(X[:, :3], 40, 7, tie)) != set(S0)
    # the estimator: another random_state, another sample
    a = LowRankKernelRegressor(n_columns=40, random_state=0).fit(X, Y)
    b = LowRankKernelRegressor(n_columns=40, random_state=1).fit(X, Y)
    assert set(a.column_indices_) != set(b.column_indices_)


@pytest.mark.parametrize("kind", ["continuous", "categorical", "sparse"])
def test_the_sample_is_uniform_over_seeds(kind):
    """Each row's inclusion frequency over 2,000 seeds is M/n to within 6
    standard errors (M/n = 0.25: 0.0097), and so is a pair's joint frequency
    on average (no rows drawn together)."""
    rng = np.random.default_rng(5)
    n, M, seeds = 80, 20, 2000
    if kind == "continuous":
        Xu = rng.normal(size=(n, 3))
    elif kind == "categorical":  # (many rows equal but for one column)
        Xu = rng.integers(0, 3, size=(n, 4)).astype(float)
        Xu[:, 3] = np.arange(n) % 7
    else:
        Xu = sp.random(n, 30, density=0.1, format="csr", random_state=3)
    y = rng.normal(size=(n, 1))
    hits = np.zeros((seeds, n), dtype=bool)
    for s in range(seeds):
        S = _sample(Xu, M, s, y)
        assert len(np.unique(S)) == M
        hits[s, S] = True
    freq = hits.mean(axis=0)
    se = np.sqrt(0.25 * 0.75 / seeds)
    assert np.all(np.abs(freq - 0.25) < 6 * se), (freq.min(), freq.max())
    joint = (hits.T.astype(float) @ hits) / seeds
    off = joint[~np.eye(n, dtype=bool)]
    expect = M * (M - 1) / (n * (n - 1))
    assert abs(off.mean() - expect) < 0.005
    assert off.max() < expect + 0.06  # (no pair taken together far more often)


def test_the_pool_is_the_rows_of_positive_weight():
    pool = np.flatnonzero(W > 0)
    S = _sample(X, 30, 3, np.column_stack([Y, W]), pool)
    assert set(S) <= set(pool) and len(S) == 30
    # every row when M is the pool's size (in the pool's order)
    np.testing.assert_array_equal(_sample(X, len(pool), 3, None, pool), pool)


def _reference_order(Xs, idx, params, tie=None):
    """content_order as one lexicographic sort of all its keys (its definition)."""
    from kernlearn.families.nystrom import _KEY_BITS, kernel_block

    block = kernel_block(Xs[idx], Xs[idx], "rbf", params)
    mant, expo = np.frexp(0.5 * (block + block.T))
    keys = np.sort(np.ldexp(np.round(np.ldexp(mant, _KEY_BITS)), expo - _KEY_BITS),
                   axis=1).T[::-1]
    if tie is not None:
        keys = np.vstack([tie[idx].T[::-1], keys])
    keys = np.vstack([np.asarray(Xs[idx]).T[::-1], keys])
    return idx[np.lexsort(keys)]


def test_content_order_is_one_sort_of_all_keys():
    """Sorting by the 8 smallest values first, then all the values of the rows
    that tie on those, is the same order (categorical rows: many ties)."""
    from kernlearn.families.nystrom import content_order

    rng = np.random.default_rng(8)
    Xc = rng.integers(0, 3, size=(400, 3)).astype(float)
    yc = rng.integers(0, 2, size=(400, 1)).astype(float)
    for Xs, tie in ((X, Y[:, None]), (Xc, None), (Xc, yc)):
        for idx in (np.arange(len(Xs)), np.arange(len(Xs))[::3], np.arange(5)):
            got = content_order(Xs, idx, "rbf", {"gamma": 0.3}, tie=tie)
            np.testing.assert_array_equal(got, _reference_order(Xs, idx, {"gamma": 0.3},
                                                                tie))
    # (the categorical rows tie on their 8 smallest values: the second sort ran)
    B = np.sort(_rbf(Xc, Xc), axis=1)[:, :8]
    assert any(np.array_equal(a, b) for a, b in pairwise(B[np.lexsort(B.T[::-1])]))
