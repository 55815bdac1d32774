"""Compiled power iterations of :func:`~kernlearn.solvers._dirty.top_eigenvalue_bound`.

A GrFL master bounds the top eigenvalue of its bordered Gram once per solve,
a few hundred times per fit: the NumPy loop cost some thirty microseconds of
call overhead for a few microseconds of products.  Same iterations and
certificates, the products through BLAS (``np.dot``).
"""

import math

import numpy as np

from ..utils._numba_cache import njit_cached

__all__ = []

# What the iterations ended with (``_power_iterations``): a Kato-Temple bound,
# a candidate bound for the Cholesky certificate, or nothing (exact value).
KATO_TEMPLE, CHOLESKY, EXACT = 0, 1, 2


@njit_cached
def _power_iterations(G, v, rtol, max_iter):
    """Power iterations on the symmetric PSD ``G`` from the unit vector ``v``.

    Returns ``(code, bound, v)``: ``code`` :data:`KATO_TEMPLE` with the
    certified ``bound``; :data:`CHOLESKY` with the candidate
    ``theta + r + rtol theta`` that a Cholesky factorisation of
    ``bound I - G`` certifies; :data:`EXACT` when the iterations did not
    converge (``bound`` unused).  ``v`` is the last iterate (normalised).
    """
    fro2 = np.vdot(G.ravel(), G.ravel())  # the sum of the squared eigenvalues
    theta, r = 0.0, np.inf
    for i in range(max_iter):
        w = np.dot(G, v)
        theta, r_prev = np.dot(v, w), r
        e = w - theta * v
        r = math.sqrt(np.dot(e, e))
        v = w / max(math.sqrt(np.dot(w, w)), 1e-300)
        # every other eigenvalue is at most mu in magnitude (lambda_max >= theta)
        mu = math.sqrt(max(fro2 - theta * theta, 0.0))
        if 0.0 < theta and mu <= 0.5 * theta and r * r <= rtol * theta * (theta - mu):
            # Kato-Temple: lambda_max <= theta + r^2 / (theta - mu)
            return KATO_TEMPLE, theta + r * r / (theta - mu) + rtol * theta, v
        if r <= rtol * theta:
            break
        rate = r / r_prev
        if i >= 2 and (rate >= 1.0 or r * rate ** (max_iter - i) > rtol * theta):
            break  # too small an eigengap to converge in time: LAPACK instead
    if not (theta > 0.0 and r <= rtol * theta):
        return EXACT, 0.0, v
    return CHOLESKY, theta + r + rtol * theta, v
