"""The compiled cos/sin of Fourier columns against the C library's."""

import numpy as np
import pytest

from kernlearn.families.fourier import _REDUCE_BELOW, _cos_sin


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cos_sin_matches_the_c_library_at_every_magnitude(dtype):
    rng = np.random.default_rng(0)
    # tiny, ordinary, large phases; the quadrant boundaries and their
    # neighbours; magnitudes at and beyond the reduction's range (C library)
    scales = (1e-8, 1.0, 10.0, 1e3, 1e5, 4e5, 1e6, 1e12)
    P = np.concatenate([rng.normal(size=(20, 64)) * s for s in scales])
    k = np.arange(-40, 41)
    edges = np.concatenate([k * np.pi / 2, k * np.pi / 4, np.nextafter(k * np.pi / 2, np.inf)])
    P[0, :] = 0.0
    P[1:5].flat[: edges.size] = edges  # (243 of the 4 x 64 entries)
    P[5, :4] = [_REDUCE_BELOW, -_REDUCE_BELOW, np.nextafter(_REDUCE_BELOW, 0), -0.0]
    out = np.empty((P.shape[0], 2 * P.shape[1]), dtype=dtype)
    sq = np.zeros(out.shape[1])
    _cos_sin(P, out, np.empty(0), sq)
    # one rounding of the result (float64: within an ulp of the C library's)
    tol = 2.3e-16 if dtype == np.float64 else 6e-8
    np.testing.assert_allclose(out[:, 0::2], np.cos(P), rtol=0, atol=tol)
    np.testing.assert_allclose(out[:, 1::2], np.sin(P), rtol=0, atol=tol)
    # the squared norms of the stored columns, summed in float64
    np.testing.assert_allclose(sq, (out.astype(float) ** 2).sum(axis=0), rtol=1e-13)


def test_cos_sin_weighted_squared_norms_add_up():
    rng = np.random.default_rng(1)
    P = rng.normal(size=(40, 7)) * 3
    w = rng.uniform(0.1, 3.0, size=40)
    out = np.empty((40, 14))
    sq = np.full(14, 0.5)  # added to, not overwritten
    _cos_sin(P, out, w, sq)
    np.testing.assert_allclose(sq, 0.5 + w @ out**2, rtol=1e-13)
    # cos^2 + sin^2 = 1 row by row: each pair's norms add up to the weights' sum
    np.testing.assert_allclose(sq[0::2] + sq[1::2] - 1.0, w.sum(), rtol=1e-13)


def test_cos_sin_of_non_finite_phases_is_nan():
    P = np.array([[np.inf, -np.inf, np.nan, 1.0]])
    out = np.empty((1, 8))
    _cos_sin(P, out, np.empty(0), np.zeros(8))
    assert np.isnan(out[0, :6]).all()
    np.testing.assert_allclose(out[0, 6:], [np.cos(1.0), np.sin(1.0)], atol=2.3e-16)
