"""SLKL's Gram-mode steps at one output (issue 24, thirty-sixth pass): same numbers, faster.

Three loops of :mod:`kernlearn.methods._slkl_compiled` ran, at one output
(every ``LowRankKernelRegressor`` and every two-class
``LowRankKernelClassifier``), an inner loop over the outputs inside the loop
over the active slots, two of them with the running sum kept in memory: the
correlation ``a = (Q_j - P_jA V / lam) / lam`` of every step
(:func:`_corr_one`), ``v'Q_A`` of an entering column (:func:`_dot_in_order`)
and the rank-one update of ``V`` (:func:`_rank1` through
:func:`_axpy_in_order`).  The new loops must give the old values to the last
bit: the old loops are kept here, compiled with the kernel's fast-math flags,
as the reference.
"""

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from kernlearn.methods import _slkl_compiled as sc
from kernlearn.methods._slkl_state import SLKLState


@numba.njit(fastmath=sc._FAST)
def _old_corr(P, Q, V, idx, m, j, lam):  # pragma: no cover - compiled
    """The correlation loop of ``_gram_steps`` before this pass (any ``T``)."""
    T = Q.shape[1]
    a = np.empty(T)
    for r in range(T):
        a[r] = Q[j, r]
    for i in range(m):
        p = P[j, idx[i]] / lam
        for r in range(T):
            a[r] -= p * V[i, r]
    return a


@numba.njit(fastmath=sc._FAST)
def _old_vq(u, V, m):  # pragma: no cover - compiled
    """Case 4's ``v'Q_A`` loop before this pass."""
    T = V.shape[1]
    vQ = np.empty(T)
    for r in range(T):
        vQ[r] = 0.0
    for i in range(m):
        p = u[i]
        for r in range(T):
            vQ[r] += p * V[i, r]
    return vQ


@numba.njit(fastmath=sc._FAST)
def _old_rank1(A, alpha, x, y):  # pragma: no cover - compiled
    """``_rank1`` before this pass."""
    for i in range(A.shape[0]):
        ax = alpha * x[i]
        for k in range(A.shape[1]):
            A[i, k] += ax * y[k]


def _data(seed, M=150, cap=160):
    rng = np.random.default_rng(seed)
    C = rng.random((M, 60))
    P = C @ C.T
    idx = rng.permutation(M)
    V = rng.standard_normal((cap, 1))
    Q = rng.standard_normal((M, 1))
    return P, Q, V, idx


@pytest.mark.parametrize("lam", [1.0, 0.7, 3.3])
@pytest.mark.parametrize("m", [0, 1, 7, 8, 9, 33, 150])
def test_the_correlation_of_one_output_is_the_old_loop_s_to_the_bit(m, lam):
    P, Q, V, idx = _data(m)
    for j in (0, 5, 149):
        old = _old_corr(P, Q, V, idx, m, j, lam)[0]
        new = sc._corr_one(P, Q, V, idx, m, j, 1.0 / lam)
        assert new == old, (j, new - old)


@pytest.mark.parametrize("m", [0, 1, 7, 9, 64, 150])
def test_case_four_s_sum_of_one_output_is_the_old_loop_s_to_the_bit(m):
    P, Q, V, idx = _data(m + 1)
    u = P[3, idx]
    assert sc._dot_in_order(u, V, m) == _old_vq(u, V, m)[0]


@pytest.mark.parametrize("T", [1, 3])
@pytest.mark.parametrize("m", [1, 9, 150])
def test_rank_one_updates_of_v_are_the_old_loop_s_to_the_bit(m, T):
    rng = np.random.default_rng(m + T)
    A = rng.standard_normal((m, T))
    x, y, alpha = rng.standard_normal(m), rng.standard_normal(T), -0.37
    old, new = A.copy(), A.copy()
    _old_rank1(old, alpha, x, y)
    sc._rank1(new, alpha, x, y)
    assert np.array_equal(new, old)


def test_a_step_s_violation_is_the_ordered_sum_of_the_state():
    """In the compiled steps themselves: a drawn coordinate's KKT violation
    ``|nu - a^2|`` (active) or ``max(a^2 - nu, 0)`` (inactive) is made of
    ``a = Q_j - sum_i P_j,idx_i V_i`` summed in slot order (lam = 1), as the
    old loop summed it (a vectorised, reassociated sum differs in the last
    bits on nearly every coordinate)."""
    rng = np.random.default_rng(0)
    C = np.exp(-3.0 * rng.random((40, 300)))
    Y = rng.standard_normal((300, 1))
    Y -= Y.mean()
    with threadpool_limits(1):
        state = SLKLState(Y, 40, nu=0.01, columns=C, gram=C @ C.T)
        state._gram_run(rng.integers(0, 40, 400))
        assert state.m0 > 10
        checked = 0
        for j in range(40):
            probe = state.copy()
            a = float(probe._Q[j, 0])
            for i in range(probe.m0):
                a -= float(probe._P[j, probe._idx[i]]) * float(probe._V[i, 0])
            d1 = probe.nu - a * a
            want = abs(d1) if probe.mu[j] > 0 else max(-d1, 0.0)
            probe._gram_run(np.array([j]))
            assert probe.kkt[j] == want, (j, probe.kkt[j] - want)
            checked += want > 0
        assert checked > 10
