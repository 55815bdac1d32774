"""The multitask leave-one-out search's faster pieces: the batched SPD inverse
(``utils._linalg``), the grid of starts from one eigendecomposition per task, and
the search's criterion and gradient through batched products."""

import numpy as np
import pytest

from kernlearn.utils import _linalg
from kernlearn.utils._linalg import spd_inverse

# one size on each side of the switch to the Cholesky path
SMALL, LARGE = _linalg._CHOLESKY_FROM - 1, _linalg._CHOLESKY_FROM + 6


@pytest.mark.parametrize("m", [SMALL, LARGE])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2), (0,)])
def test_equals_the_lu_inverse_and_is_symmetric(batch, m):
    rng = np.random.default_rng(0)
    G = rng.standard_normal(batch + (m, m))
    A = G @ np.swapaxes(G, -1, -2) + 0.5 * np.eye(m)
    inv = spd_inverse(A)
    assert inv.shape == A.shape
    np.testing.assert_allclose(inv, np.linalg.inv(A), rtol=1e-8, atol=1e-10)
    if m == LARGE:  # symmetric by construction on the Cholesky path
        np.testing.assert_array_equal(inv, np.swapaxes(inv, -1, -2))
    if A.size:
        np.testing.assert_allclose(A @ inv, np.broadcast_to(np.eye(m), A.shape), atol=1e-8)


def test_the_cholesky_path_is_taken_from_its_size(monkeypatch):
    calls = []
    potrf = _linalg.scipy.linalg.lapack.dpotrf
    monkeypatch.setattr(_linalg.scipy.linalg.lapack, "dpotrf",
                        lambda *a, **k: calls.append(1) or potrf(*a, **k))
    for m in (SMALL, LARGE):
        spd_inverse(np.eye(m)[None].repeat(2, 0))
    assert len(calls) == 2  # the two matrices of the large batch only


def test_a_matrix_that_is_not_positive_definite_is_inverted_by_lu():
    # indefinite (one eigenvalue -1): Cholesky fails, LU does not; its batch
    # neighbour keeps the Cholesky path
    rng = np.random.default_rng(2)
    Qm, _ = np.linalg.qr(rng.standard_normal((LARGE, LARGE)))
    ev = np.linspace(1.0, 3.0, LARGE)
    bad = (Qm * np.r_[-1.0, ev[1:]]) @ Qm.T
    good = (Qm * ev) @ Qm.T
    A = np.stack([bad, good])
    np.testing.assert_allclose(spd_inverse(A), np.linalg.inv(A), rtol=1e-8, atol=1e-10)


def test_the_input_is_left_untouched():
    rng = np.random.default_rng(1)
    G = rng.standard_normal((2, LARGE, LARGE))
    A = np.asfortranarray(G @ G.transpose(0, 2, 1) + np.eye(LARGE))
    before = A.copy()
    spd_inverse(np.asfortranarray(A[0]))
    spd_inverse(A)
    np.testing.assert_array_equal(A, before)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("case", ["within", "shared_off", "shared_on"])
def test_the_grid_of_starts_equals_the_criterion_at_each_point(case, weighted):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_mtmkl_selection import _bucket_grams, _tasks

    from kernlearn.methods import mtmkl as M
    from kernlearn.methods.mtmkl.selection import _loo_objective, _loo_on_a_ray

    rng = np.random.default_rng(3)
    X, y, t = _tasks(T=3, m=9)
    rows = [np.flatnonzero(t == v) for v in np.unique(t)]
    rows[1] = rows[1][:6]  # tasks of different sizes: padding in the bucket
    specs = ["linear", ("rbf", {"gamma": 0.5})]
    grams, y_b, masks, blocks = _bucket_grams(specs, X, y, rows)
    shared = [] if case == "within" else [
        M.gather_rows(blocks, M.TaskKernels(specs).fit(X).factor(0))]
    shape = {"within": np.r_[0.5, 0.5], "shared_off": np.r_[0.5, 0.5, 0.0],
             "shared_on": np.full(3, 1 / 3)}[case]
    w_b = blocks.gather(rng.uniform(0.5, 2.0, len(y)) if weighted else np.ones(len(y)))
    scales = np.logspace(-3, 4, 8)
    ray = _loo_on_a_ray(grams, y_b, w_b, masks, shared, shape, scales)
    ref = [_loo_objective(c * shape, grams, y_b, w_b, masks, grad=False, shared=shared)
           for c in scales]
    np.testing.assert_allclose(ray, ref, rtol=1e-10)


def test_a_ray_needs_equal_within_task_weights():
    from kernlearn.methods.mtmkl.selection import _loo_on_a_ray

    K = np.zeros((2, 1, 3, 3))
    with pytest.raises(ValueError, match="equal"):
        _loo_on_a_ray([K], [np.zeros((1, 3))], [np.ones((1, 3))], [np.ones((1, 3), bool)],
                      [], np.r_[0.3, 0.7], [1.0])
