"""Groups and the norm behind each penalty (shared by the penalty tests)."""

import numpy as np
import pytest

# Contiguous groups of a 9-vector: sizes 3, 1, 3, 2.
INDPTR = np.array([0, 3, 4, 7, 9])


def degree(pen, rng):
    """Degree of homogeneity of ``pen`` (1 for norms, 2 for squared norms), measured."""
    w = rng.standard_normal(INDPTR[-1])
    ratio = pen.value(2.0 * w, INDPTR) / pen.value(w, INDPTR)
    deg = int(round(np.log2(ratio)))
    assert deg in (1, 2) and ratio == pytest.approx(2.0**deg, rel=1e-10)
    return deg


def gauge(pen, x, deg):
    """The norm ``N`` behind ``pen``: ``alpha N`` (degree 1) or ``alpha/2 N^2`` (degree 2)."""
    v = pen.value(x, INDPTR) / pen.alpha
    return v if deg == 1 else np.sqrt(2.0 * v)
