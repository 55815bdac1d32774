"""The low-rank estimators' cheaper fixed fit cost leaves every number as it was.

The dense content hash of ``kernlearn.families._content_sample`` ranks a block
of columns per NumPy call (it looped over the columns), and
``kernlearn.widths.pairwise_spread_ratio`` computes its squared distances in
place over a kept mask of the pairs ``i < j``.  Each is checked against the
per-column / direct computation it replaced, bit for bit, and the fitted
models against fits that use those references.  So are the refreshes' triangle
mirror and diagonal shift (``kernlearn.methods._slkl_state``) and the estimators'
kept integer seed (issue 24, the twenty-ninth pass).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

import kernlearn.methods._slkl_state as slkl_state
from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor, widths
from kernlearn.estimators.lowrank import _fit_seed
from kernlearn.families import _content_sample as cs
from kernlearn.families._content_sample import (
    _dense_row_hashes,
    _mix,
    _positional,
    _profile,
    _sparse_row_hashes,
)
from kernlearn.methods._slkl_state import _mirrored, _shifted_inverse
from kernlearn.utils._sparse import distance_shift, shift_rows


def _reference_row_hashes(A):
    """The hash one column at a time (the implementation before the blocks)."""
    n, d = A.shape
    ranks, prof, where = [], [], []
    for j in range(d):
        col = np.ascontiguousarray(A[:, j])
        order = np.argsort(col)
        s = col[order]
        new = s[1:] != s[:-1]
        if not new.any():
            continue
        rank = np.empty(n, dtype=np.uint64)
        rank[order] = _mix(np.r_[0, np.cumsum(new)])
        starts = np.r_[0, np.flatnonzero(new) + 1, n]
        prof.append(_profile(np.diff(starts), np.array([0, len(starts) - 1]))[0])
        ranks.append(rank)
        where.append(j)
    rows = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for rank, p in zip(ranks, prof):
            rows += _mix(rank ^ p)
        b = _mix(rows)
        salt = [_mix(p + _mix((rank * b).sum(dtype=np.uint64)))
                for rank, p in zip(ranks, prof)]
        rows[:] = 0
        for rank, t in zip(ranks, salt):
            rows += _mix(rank ^ t)
        pos = np.zeros(n, dtype=np.uint64)
        for rank, t in zip(ranks, _positional(np.array(where, dtype=np.uint64))):
            pos += _mix(rank ^ t)
    return rows, pos


def _reference_spread_ratio(X, rows=None, max_rows=widths.SPREAD_ROWS):
    """The ratio through ``triu_indices`` and fresh temporaries (before)."""
    rows = np.arange(X.shape[0]) if rows is None else np.asarray(rows)
    n = len(rows)
    if n < 2:
        return 1.0
    rows = rows[np.unique(np.linspace(0, n - 1, min(n, int(max_rows))).astype(int))]
    S = X[rows]
    S = S if sp.issparse(S) else shift_rows(distance_shift(S), np.asarray(S, dtype=float))[0]
    sq = widths._row_sq_norms(S)
    inner = S @ S.T
    inner = inner.toarray() if sp.issparse(inner) else np.asarray(inner)
    D = sq[:, None] + sq[None, :] - 2.0 * inner
    d = np.maximum(D[np.triu_indices(len(rows), 1)], 0.0)
    med = float(np.median(d))
    if not (med > 0 and np.isfinite(med)):
        return 1.0
    return float(np.mean(d)) / med


def _matrices():
    rng = np.random.default_rng(0)
    return {
        "normal": rng.standard_normal((300, 12)),
        "ties": rng.integers(0, 3, (200, 7)).astype(float),
        "constant columns": np.c_[np.ones(40), rng.integers(0, 2, (40, 3)), np.full(40, 2.0)],
        "all constant": np.ones((6, 3)),
        "signed zeros": np.array([[0.0, 1.0], [-0.0, 2.0], [1.0, 2.0]]),
        "one row": rng.standard_normal((1, 4)),
        "no rows": np.zeros((0, 3)),
        "no columns": np.zeros((5, 0)),
        "mirror rows": np.array([[1.0, 2.0], [2.0, 1.0], [1.0, 1.0], [2.0, 2.0]]),
    }


@pytest.mark.parametrize("name", list(_matrices()))
@pytest.mark.parametrize("block", [1 << 20, 1, 3, 50])
def test_blocked_hash_equals_per_column_hash(monkeypatch, name, block):
    # blocks of 1, 3 or 50 entries put 1 .. n columns in a block (the last
    # one short): the hashes must not depend on where the blocks end
    monkeypatch.setattr(cs, "_BLOCK_ENTRIES", block)
    A = _matrices()[name]
    got, want = _dense_row_hashes(A), _reference_row_hashes(A)
    for g, w in zip(got, want):
        assert g.dtype == np.uint64 and g.shape == (A.shape[0],)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", ["normal", "ties", "constant columns", "mirror rows"])
def test_blocked_hash_equals_sparse_hash(name):
    # the sparse hash is an independent computation of the same numbers
    A = _matrices()[name]
    for g, w in zip(_dense_row_hashes(A), _sparse_row_hashes(sp.csr_matrix(A))):
        np.testing.assert_array_equal(g, w)


def test_blocked_hash_tells_apart_what_it_did():
    # not a constant: other data, other hashes; a column permutation keeps the
    # content hash but not the positional one
    A = _matrices()["normal"]
    rows, pos = _dense_row_hashes(A)
    rows_p, pos_p = _dense_row_hashes(A[:, ::-1])
    np.testing.assert_array_equal(rows, rows_p)
    assert not np.array_equal(pos, pos_p)
    assert len(np.unique(rows)) == A.shape[0]


def _spread_cases():
    rng = np.random.default_rng(1)
    return [
        (rng.standard_normal((700, 9)), None),
        (np.exp(3 * rng.standard_normal((400, 8))), None),
        (np.exp(3 * rng.standard_normal((400, 8))), np.arange(0, 400, 3)),
        (rng.integers(0, 2, (60, 3)).astype(float), None),
        (np.ones((9, 2)), None),
        (rng.standard_normal((2, 3)), None),
        (rng.standard_normal((300, 5)) + 1e8, None),
        (rng.standard_normal((300, 5)).astype(np.float32), None),
        (sp.random(300, 40, density=0.1, random_state=0, format="csr"), None),
        (sp.random(300, 40, density=0.1, random_state=0, format="csr", dtype=np.float32),
         np.arange(0, 300, 2)),
    ]


@pytest.mark.parametrize("k", range(len(_spread_cases())))
def test_spread_ratio_equals_direct_computation(k):
    X, rows = _spread_cases()[k]
    assert widths.pairwise_spread_ratio(X, rows) == _reference_spread_ratio(X, rows)
    # again, through the kept mask
    assert widths.pairwise_spread_ratio(X, rows) == _reference_spread_ratio(X, rows)


def test_spread_mask_is_the_upper_pairs_and_read_only():
    mask = widths._upper_pairs(6)
    i, j = np.nonzero(mask)
    np.testing.assert_array_equal(i, np.triu_indices(6, 1)[0])
    np.testing.assert_array_equal(j, np.triu_indices(6, 1)[1])
    assert not mask.flags.writeable
    assert widths._upper_pairs(6) is mask


@pytest.mark.parametrize("Est, task", [(LowRankKernelRegressor, "reg"),
                                       (LowRankKernelClassifier, "clf")])
def test_model_equal_with_the_reference_computations(monkeypatch, Est, task):
    rng = np.random.default_rng(3)
    # heavy-tailed columns (the third width, from the spread ratio) and a
    # column of ties (the hash's runs)
    X = np.c_[np.exp(3 * rng.standard_normal((260, 6))), rng.integers(0, 4, (260, 1)),
              rng.standard_normal((260, 1))]
    y = X[:, 6] + np.sin(X[:, 7]) + 0.1 * rng.standard_normal(260)
    y = y if task == "reg" else (y > np.median(y)).astype(int)
    Xt = rng.standard_normal((40, 8))
    fast = Est(random_state=0).fit(X, y)
    assert len(np.unique(fast.center_factors_)) == 3  # (the spread ratio above 3)
    monkeypatch.setattr(cs, "_dense_row_hashes", _reference_row_hashes)
    from kernlearn.methods import slkl
    monkeypatch.setattr(slkl, "pairwise_spread_ratio",  # (the fit asks with a bound)
                        lambda X, rows=None, at_most=None: _reference_spread_ratio(X, rows))
    ref = Est(random_state=0).fit(X, y)
    np.testing.assert_array_equal(fast.column_indices_, ref.column_indices_)
    np.testing.assert_array_equal(fast.center_factors_, ref.center_factors_)
    out = "predict" if task == "reg" else "decision_function"
    np.testing.assert_array_equal(getattr(fast, out)(Xt), getattr(ref, out)(Xt))


# -- Issue 24, the twenty-ninth pass: the refreshes' triangle mirror, the diagonal
# shift and the kept integer seed agree with the paths they replaced, bit for bit
# at one BLAS thread (to round-off at the machine's threads), and nothing kept
# between fits goes stale.

def _old_mirrored(A, lower):
    # the expressions the masked copy replaced
    return np.tril(A) + np.tril(A, -1).T if lower else np.triu(A) + np.triu(A, 1).T


def _old_shifted_inverse(BtB, lam):
    import scipy.linalg

    m = len(BtB)
    c, info = scipy.linalg.lapack.dpotrf(BtB + lam * np.eye(m), lower=False)
    inv, info = scipy.linalg.lapack.dpotri(c, lower=False)
    assert info == 0
    return np.triu(inv) + np.triu(inv, 1).T


@pytest.mark.parametrize("order", ["C", "F"])
def test_mirrored_equals_the_triangle_sums_at_any_size(order):
    rng = np.random.default_rng(0)
    # sizes up and down: the kept mask grows and its corner serves smaller sizes
    for m in (1, 3, 40, 7, 130, 2, 64):
        A = np.asarray(rng.standard_normal((m, m)), order=order)
        before = A.copy()
        for lower in (True, False):
            got = _mirrored(A, lower)
            ref = _old_mirrored(A, lower)
            assert got.tobytes() == ref.tobytes(), (m, lower)
            assert got.flags.c_contiguous  # (as the sum: the layout decides BLAS rounding)
            np.testing.assert_array_equal(got, got.T)
        np.testing.assert_array_equal(A, before)  # the input is not written


def test_mirrored_on_a_view_of_a_larger_buffer():
    # G's lower triangle is read from the top-left corner of a larger buffer
    rng = np.random.default_rng(1)
    buf = rng.standard_normal((50, 50))
    for m in (10, 31, 50):
        L = buf[:m, :m]
        assert _mirrored(L, True).tobytes() == _old_mirrored(L, True).tobytes()


@pytest.mark.parametrize("m", [1, 5, 60, 150])
def test_shifted_inverse_equals_the_identity_sum_path(m):
    rng = np.random.default_rng(m)
    B = rng.standard_normal((m + 5, m))
    BtB = B.T @ B
    for lam in (1.0, 0.3):
        inv, solve = _shifted_inverse(BtB, lam)
        assert inv.tobytes() == _old_shifted_inverse(BtB, lam).tobytes()
        R = rng.standard_normal((m, 2))
        np.testing.assert_allclose(solve(R), inv @ R, rtol=1e-8, atol=1e-10)


def _fits(old, monkeypatch):
    """Predictions, dual coefficients and weights of a few fits, with the old
    triangle sums (``old``) or the masked copies."""
    if old:
        monkeypatch.setattr(slkl_state, "_mirrored", _old_mirrored)
    else:
        monkeypatch.undo()
    X, y = make_regression(n_samples=260, n_features=6, noise=1.0, random_state=2)
    Y = np.column_stack([y, np.sin(y / 50)])
    Xc, yc = make_classification(n_samples=240, n_features=5, n_informative=3,
                                 n_redundant=0, n_classes=3, random_state=2)
    out = []
    for kw in ({}, {"precompute": False}, {"nu": 0.01}):
        est = LowRankKernelRegressor(random_state=0, **kw).fit(X, y)
        out += [est.predict(X), est.dual_coef_, np.asarray(est.mu_)]
    est = LowRankKernelRegressor(random_state=1).fit(X, Y)
    out += [est.predict(X), est.dual_coef_]
    clf = LowRankKernelClassifier(random_state=0).fit(Xc, yc)
    out += [clf.decision_function(Xc)]
    return out


def test_models_bit_for_bit_with_the_old_triangle_sums_at_one_thread(monkeypatch):
    with threadpool_limits(1):
        old = _fits(True, monkeypatch)
        new = _fits(False, monkeypatch)
    assert len(old) == len(new)
    for a, b in zip(old, new):
        assert a.shape == b.shape and a.tobytes() == b.tobytes()


def test_models_to_round_off_with_the_old_triangle_sums_at_default_threads(monkeypatch):
    old = _fits(True, monkeypatch)
    new = _fits(False, monkeypatch)
    for a, b in zip(old, new):
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 42, 2**31 - 2, np.int64(7), np.int32(3)])
def test_kept_integer_seed_is_the_drawn_one(seed):
    ref = check_random_state(seed).randint(np.iinfo(np.int32).max)
    assert _fit_seed(seed) == ref
    assert _fit_seed(seed) == ref  # (the kept value, a second time)


def test_generator_and_none_seeds_draw_anew():
    rs = np.random.RandomState(5)
    ref = np.random.RandomState(5)
    for _ in range(3):  # a RandomState advances: each fit its own seed
        assert _fit_seed(rs) == ref.randint(np.iinfo(np.int32).max)
    draws = {_fit_seed(None) for _ in range(5)}
    assert len(draws) > 1


def test_negative_seed_still_rejected():
    with pytest.raises(ValueError):
        _fit_seed(-1)
    with pytest.raises(ValueError):
        _fit_seed(-1)  # (an error is not kept as a value)


def test_refit_with_another_seed_or_data_is_a_fresh_fit():
    # nothing of a fit is reused by the next: another random_state, other
    # rows or another size give the model of a fresh estimator
    X, y = make_regression(n_samples=150, n_features=4, noise=1.0, random_state=3)
    X2, y2 = make_regression(n_samples=90, n_features=4, noise=1.0, random_state=4)
    est = LowRankKernelRegressor(random_state=0).fit(X, y)
    first = est.predict(X)
    est.set_params(random_state=1).fit(X, y)
    fresh = LowRankKernelRegressor(random_state=1).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), fresh.predict(X))
    assert not np.array_equal(est.predict(X), first)
    est.set_params(random_state=0).fit(X2, y2)
    np.testing.assert_array_equal(
        est.predict(X2), LowRankKernelRegressor(random_state=0).fit(X2, y2).predict(X2))
    est.fit(X, y)
    np.testing.assert_array_equal(est.predict(X), first)

