"""Fourier columns evaluated by blocks of rows: the same bits as row by row.

``_cos_sin`` (the columns a GrFL master adds, the held-out and prediction
columns) evaluates the cos/sin pairs of many rows' phases by one call of
``_cos_sin_row`` instead of one call per row (800 rows, 4 phases: 61 -> 12 us),
and ``_cos_sin_sums`` (pricing) those of its four rows at a time.  Each pair's
value does not depend on its neighbours and the norms and correlations are
still summed row after row, so the results must equal, bit for bit, the
row-by-row evaluation of the same compiled cos/sin written out here, at every
block boundary, for float32 columns, weights, and phases beyond the
polynomial's range (the C library's cos/sin) or not finite.
"""

import numpy as np
import pytest

from kernlearn.families import fourier


def _phases(n, k, dtype, seed):
    rng = np.random.default_rng(seed)
    P = (rng.normal(size=(n, k)) * 5).astype(dtype)
    if P.size >= 4:  # the C library's range, and non-finite phases
        P.flat[:4] = [3e6, np.inf, np.nan, -4e6]
    return P


def _pairs_row_by_row(P):
    """cos and sin of ``P`` (float64), one ``_cos_sin_row`` call per row."""
    c, s = np.empty(P.shape), np.empty(P.shape)
    for i in range(P.shape[0]):
        fourier._cos_sin_row(P[i], c[i], s[i])
    return c, s


_BLOCK = fourier._COS_SIN_BLOCK
# (rows, phases per row): one block, several blocks with a short last one,
# rows longer than a block, no rows, no phases
_SHAPES = [(1, 3), (7, 4), (2 * _BLOCK // 3 + 5, 3), (900, 16), (3, _BLOCK + 7), (0, 5), (5, 0)]


@pytest.mark.parametrize("n,k", _SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
def test_blocked_columns_equal_the_row_by_row_columns_and_norms(n, k, dtype, weighted):
    P = _phases(n, k, dtype, seed=n + k)
    w = np.random.default_rng(1).uniform(0.2, 2.0, size=n) if weighted else np.empty(0)
    out, sq = np.empty((n, 2 * k), dtype=dtype), np.zeros(2 * k)
    fourier._cos_sin(P, out, w, sq)
    c, s = _pairs_row_by_row(P)
    ref = np.empty((n, 2 * k), dtype=dtype)
    ref[:, 0::2], ref[:, 1::2] = c, s  # (rounded to the columns' type)
    sq_ref = np.zeros(2 * k)
    for i in range(n):  # the norms of the stored values, row after row
        r = ref[i].astype(np.float64)
        sq_ref += (w[i] if weighted else 1.0) * (r * r)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(sq, sq_ref)


@pytest.mark.parametrize("n", [1, 4, 6, 103])  # the four-row blocks and their tail
@pytest.mark.parametrize("T", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_pricing_sums_equal_the_row_by_row_sums(n, T, weighted):
    k = 37
    P = _phases(n, k, np.float64, seed=n)
    rng = np.random.default_rng(T)
    G = rng.normal(size=(n, T))
    w = rng.uniform(0.2, 2.0, size=n) if weighted else np.empty(0)
    HG, sq = np.full((k, 2, T), np.nan), np.full((k, 2), np.nan)
    fourier._cos_sin_sums(P, G, w, HG, sq)
    c, s = _pairs_row_by_row(P)
    qc, qs = np.zeros(k), np.zeros(k)
    for i in range(n):
        wi = w[i] if weighted else 1.0
        qc += wi * (c[i] * c[i])
        qs += wi * (s[i] * s[i])
    # the correlations: four rows a step, each step's products added in row
    # order (rows past n are zeros)
    m = -(-n // 4) * 4
    cz, sz, gz = np.zeros((m, k)), np.zeros((m, k)), np.zeros((m, T))
    cz[:n], sz[:n], gz[:n] = c, s, G
    hc, hs = np.zeros((T, k)), np.zeros((T, k))
    for i0 in range(0, m, 4):
        for t in range(T):
            g = gz[i0:i0 + 4, t]
            hc[t] = (((hc[t] + cz[i0] * g[0]) + cz[i0 + 1] * g[1]) + cz[i0 + 2] * g[2]) \
                + cz[i0 + 3] * g[3]
            hs[t] = (((hs[t] + sz[i0] * g[0]) + sz[i0 + 1] * g[1]) + sz[i0 + 2] * g[2]) \
                + sz[i0 + 3] * g[3]
    np.testing.assert_array_equal(sq, np.stack([qc, qs], axis=1))
    np.testing.assert_array_equal(HG[:, 0, :], hc.T)
    np.testing.assert_array_equal(HG[:, 1, :], hs.T)
