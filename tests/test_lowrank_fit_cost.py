"""The low-rank estimators' cheaper fixed fit cost leaves every number as it was.

The dense content hash of ``kernlearn.families._content_sample`` ranks a block
of columns per NumPy call (it looped over the columns), and
``kernlearn.widths.pairwise_spread_ratio`` computes its squared distances in
place over a kept mask of the pairs ``i < j``.  Each is checked against the
per-column / direct computation it replaced, bit for bit, and the fitted
models against fits that use those references.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor, widths
from kernlearn.families import _content_sample as cs
from kernlearn.families._content_sample import (
    _dense_row_hashes,
    _mix,
    _positional,
    _profile,
    _sparse_row_hashes,
)
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
    monkeypatch.setattr(slkl, "pairwise_spread_ratio", _reference_spread_ratio)
    ref = Est(random_state=0).fit(X, y)
    np.testing.assert_array_equal(fast.column_indices_, ref.column_indices_)
    np.testing.assert_array_equal(fast.center_factors_, ref.center_factors_)
    out = "predict" if task == "reg" else "decision_function"
    np.testing.assert_array_equal(getattr(fast, out)(Xt), getattr(ref, out)(Xt))
