"""Audit 60: a hostile review of the twenty-fourth pass's merges.

The leave-one-out search's batched products, Cholesky inverses and rays of
starts; MK-MTFL's kernel rows on demand and the mirror descent's certificate at
``max_iter``; compiled PCG64 normal draws; sizes refused beyond the physical
memory; Platt folds with a third label weighed out.  Three defects (the tests
named ``*_defect_*``), the rest pinned as checked.
"""

import os
import pickle
import warnings

import numpy as np
import pytest
import scipy.optimize
from conftest import one_error, run_cli
from sklearn.exceptions import ConvergenceWarning

KERNELS = ["linear", ("rbf", {"gamma": 0.5})]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


# ---------------------------------------------------------------- defects


def test_defect_platt_folds_keep_an_int_key_of_a_text_label():
    # class_weight={2: 0, 1: 3.0} on labels "0", "1", "2": the fit weighs label
    # "1" by key 1 (scikit-learn's lookup: a class as an int, or as text), the
    # Platt folds dropped the key by equality (1 != "1") and fitted without the
    # weight: probabilities 0.15 away from those of the same labels as ints
    from kernlearn import MultitaskMKLClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=90) > 0).astype(int)
    y[::10] = 2
    t = np.repeat([0, 1, 2], 30)
    kw = {"probability": True, "class_weight": {2: 0, 1: 3.0}}
    a = MultitaskMKLClassifier(["linear"], **kw).fit(X, y, task_index=t)
    b = MultitaskMKLClassifier(["linear"], **kw).fit(X, y.astype(str), task_index=t)
    np.testing.assert_array_equal(b.classes_, ["0", "1"])
    np.testing.assert_array_equal(a.decision_function(X, task_index=t),
                                  b.decision_function(X, task_index=t))
    np.testing.assert_allclose(b.predict_proba(X, task_index=t),
                               a.predict_proba(X, task_index=t), rtol=0, atol=1e-12)
    # (and the key still weighs the folds: without it the probabilities move)
    c = MultitaskMKLClassifier(["linear"], probability=True, class_weight={2: 0}).fit(
        X, y.astype(str), task_index=t)
    assert np.abs(c.predict_proba(X, task_index=t)
                  - b.predict_proba(X, task_index=t)).max() > 1e-3


def test_defect_one_generator_listed_twice_draws_its_rows_in_turn():
    # a list of generators, one per row, drew each row from the state read up
    # front: the same generator twice gave both rows the same numbers (and
    # advanced once), where the small-row and other-generator routes draw
    # them one after another
    from kernlearn.families.fourier import scaled_normals

    g, ref = np.random.default_rng(5), np.random.default_rng(5)
    out = np.empty((2, 20_000))
    scaled_normals([g, g], out, np.array([1.0, 2.0]))
    np.testing.assert_array_equal(out, ref.standard_normal((2, 20_000)) / [[1.0], [2.0]])
    assert g.bit_generator.state == ref.bit_generator.state


def test_defect_an_unknown_physical_memory_refuses_nothing(monkeypatch):
    # sysconf answers -1 (without an error) for a limit it does not know: the
    # product was a negative budget, and every setting was refused
    from kernlearn import InfiniteFeatureRegressor
    from kernlearn.utils import _memory

    monkeypatch.setattr(_memory.os, "sysconf", lambda name: -1)
    assert _memory.physical_memory() is None
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    InfiniteFeatureRegressor(max_features=2).fit(X, X[:, 0])


# ------------------------------------------------------- checked clean


def test_spd_inverse_edges():
    from kernlearn.utils._linalg import spd_inverse

    rng = np.random.default_rng(0)
    for m in (5, 70):  # LU below 64 rows, Cholesky from there
        B = rng.normal(size=(3, m, m))
        A = B @ B.transpose(0, 2, 1) + np.eye(m)
        np.testing.assert_allclose(spd_inverse(A), np.linalg.inv(A), atol=1e-10)
        out = spd_inverse(A.astype(np.float32))
        assert out.dtype == np.float64
        if m >= 64:  # (potri's triangle mirrored: exactly symmetric)
            np.testing.assert_array_equal(out, out.swapaxes(1, 2))
        assert spd_inverse(np.zeros((0, m, m))).shape == (0, m, m)
        np.testing.assert_allclose(spd_inverse(A[0]), np.linalg.inv(A[0]), atol=1e-10)
    indefinite = A[0] - 30 * np.eye(70)  # (potrf fails: LU)
    np.testing.assert_allclose(spd_inverse(indefinite), np.linalg.inv(indefinite), atol=1e-10)
    with pytest.raises(np.linalg.LinAlgError):
        spd_inverse(np.zeros((70, 70)))
    nan = A.copy()
    nan[1, 5, 5] = np.nan  # (NaN fails the factorisation; LU as before)
    assert np.isfinite(spd_inverse(nan)).all(axis=(1, 2)).tolist() == [True, False, True]


def _buckets(rows, X, y, w, shared):
    from kernlearn.methods import mtmkl as M

    kern = M.TaskKernels(KERNELS).fit(X)
    blocks = M.TaskBuckets(rows)
    grams = [np.stack([kern.blocks(j, idx, mask) for j in range(len(KERNELS))])
             for _, idx, mask in blocks.buckets]
    masks = [mask for *_, mask in blocks.buckets]
    sh = [M.gather_rows(blocks, kern.factor(0))] if shared else []
    return grams, blocks.gather(y), masks, blocks.gather(w), sh


@pytest.mark.parametrize("shared", [False, True])
def test_loo_ray_equals_the_criterion_across_the_cholesky_threshold(shared):
    # tasks of 2, 30 and 70 rows (LU and Cholesky buckets), weights from 1e-6
    # to 1e4, C from 1e-6 to 1e6: the ray's values are the criterion's
    from kernlearn.methods.mtmkl.selection import _loo_objective, _loo_on_a_ray

    rng = np.random.default_rng(1)
    X = rng.normal(size=(102, 3))
    y = X[:, 0] + np.sin(X[:, 1]) + 0.3 * rng.normal(size=102)
    w = rng.uniform(0.5, 2.0, 102)
    w[3:6], w[40:42] = 1e-6, 1e4
    X[10:15] = X[9]  # duplicate rows: a singular kernel block
    rows = [np.arange(0, 2), np.arange(2, 32), np.arange(32, 102)]
    grams, y_b, masks, w_b, sh = _buckets(rows, X, y, w, shared)
    Cs = np.logspace(-6, 6, 7)
    shapes = [np.r_[0.5, 0.5, np.zeros(len(sh))]] + ([np.full(3, 1 / 3)] if sh else [])
    for shape in shapes:
        ray = _loo_on_a_ray(grams, y_b, w_b, masks, sh, shape, 2 * Cs)
        direct = [_loo_objective(2 * C * shape, grams, y_b, w_b, masks, grad=False,
                                 shared=sh) for C in Cs]
        # (to 1e-6: duplicate rows at C = 1e6 are ill-conditioned systems, both
        # routes then rounding at 1e-8 of the value)
        np.testing.assert_allclose(ray, direct, rtol=1e-6)
    with pytest.raises(ValueError, match="within-task weights of a ray must be equal"):
        _loo_on_a_ray(grams, y_b, w_b, masks, sh, np.r_[0.2, 0.8, np.zeros(len(sh))], Cs)


def test_loo_search_from_the_ray_equals_the_search_from_direct_starts(monkeypatch):
    # near-zero and huge weights, a two-row task: the search started from the
    # ray's values ends where the one started from the criterion's values does
    from kernlearn.methods.mtmkl import selection

    rng = np.random.default_rng(2)
    X = rng.normal(size=(72, 2))
    y = X[:, 0] + 0.2 * rng.normal(size=72)
    w = np.ones(72)
    w[5:8], w[20] = 1e-9, 1e5
    rows = [np.arange(0, 2), np.arange(2, 72)]
    grams, y_b, masks, w_b, sh = _buckets(rows, X, y, w, True)
    got = selection.learn_loo_weights(grams, y_b, masks, w_b, shared=sh)

    def direct(grams, y_b, w_b, masks, shared, shape, scales):
        return [selection._loo_objective(c * shape, grams, y_b, w_b, masks, grad=False,
                                         shared=shared) for c in scales]

    monkeypatch.setattr(selection, "_loo_on_a_ray", direct)
    ref = selection.learn_loo_weights(grams, y_b, masks, w_b, shared=sh)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-6, atol=1e-9)
    assert got[1] == pytest.approx(ref[1], rel=1e-6) and got[2] == pytest.approx(ref[2])


def _packed(rng, T, m, k, sizes):
    from kernlearn.methods.mtmkl.mtfl import _unpack_effective

    mask = np.arange(m)[None] < sizes[:, None]
    Ks = []
    for j in range(k):
        Z = rng.normal(size=(T, m, 2)) * mask[:, :, None]
        D = ((Z[:, :, None] - Z[:, None]) ** 2).sum(-1)
        Ks.append(np.exp(-0.3 * (j + 1) * D) * (mask[:, :, None] & mask[:, None]))
    iu = np.triu_indices(m)
    Gp = np.stack([np.stack([K[t][iu] for K in Ks]) for t in range(T)])
    W = rng.uniform(0.1, 2.0, (T, k))
    K = np.empty((T, m, m))
    _unpack_effective(W, Gp, K)
    return W, Gp, K, mask


def test_smo_rows_on_demand_equal_the_assembled_kernel():
    # per-row C with zeros, a task of one class, SVR, warm starts after the
    # kernel weights change: the packed route's duals and biases are the
    # assembled kernel's, bit for bit
    from kernlearn.methods.mtmkl._smo import smo_buckets
    from kernlearn.methods.mtmkl.mtfl import _unpack_effective

    rng = np.random.default_rng(1)
    sizes = np.array([40, 25, 7])
    W, Gp, K, mask = _packed(rng, 3, 40, 3, sizes)
    for case in range(6):
        reg = case == 5
        y = (rng.normal(size=(3, 40)) if reg
             else np.where(rng.random((3, 40)) < 0.5, -1.0, 1.0)) * mask
        if case == 1:
            y[1] = mask[1]  # one class only
        C = rng.uniform(0.01, 10, (3, 40)) * mask
        if case % 2 == 0:
            C[:, ::3] = 0.0
        a = smo_buckets(K, y, sizes, C, regression=reg, tol=1e-8)
        b = smo_buckets(None, y, sizes, C, regression=reg, tol=1e-8, packed=(W, Gp))
        W2 = W * rng.uniform(0.5, 1.5, W.shape)
        K2 = np.empty_like(K)
        _unpack_effective(W2, Gp, K2)
        c = smo_buckets(K2, y, sizes, C, regression=reg, tol=1e-8, beta0=a[0])
        d = smo_buckets(None, y, sizes, C, regression=reg, tol=1e-8, beta0=a[0],
                        packed=(W2, Gp))
        for u, v in ((a, b), (c, d)):
            for x, z in zip(u, v):
                np.testing.assert_array_equal(x, z)


def test_cutting_plane_bound_edges(monkeypatch):
    from kernlearn.solvers import mirror_descent as md

    rng = np.random.default_rng(0)
    g = rng.normal(size=4)
    # one linearisation: its minimum over the vertices; the same one repeated too
    assert md.cutting_plane_bound(np.array([0.3]), g[None]) == pytest.approx(0.3 + g.min())
    assert md.cutting_plane_bound(np.full(5, 0.3), np.tile(g, (5, 1))) == pytest.approx(
        0.3 + g.min())
    # a convex quadratic: the bound of all cuts lies between the single cuts' best
    # and the true minimum
    Q = rng.normal(size=(4, 4))
    Q = Q @ Q.T
    f = lambda x: 0.5 * x @ Q @ x
    xs = rng.dirichlet(np.ones(4), size=30)
    a = np.array([f(x) - (Q @ x) @ x for x in xs])
    G = np.array([Q @ x for x in xs])
    bound = md.cutting_plane_bound(a, G)
    grid = rng.dirichlet(np.ones(4), size=20_000)
    assert (a + G.min(1)).max() - 1e-12 <= bound <= min(f(x) for x in grid) + 1e-12
    assert md.cutting_plane_bound(np.array([np.nan]), g[None]) == -np.inf

    class Failed:
        x = None

    monkeypatch.setattr(scipy.optimize, "linprog", lambda *args, **kw: Failed())
    assert md.cutting_plane_bound(a, G) == -np.inf


def test_mirror_descent_certificate_at_max_iter_one():
    # max_iter=1 on a linear function: the certificate is the vertex minimum,
    # a valid bound, and no error
    from kernlearn.solvers.mirror_descent import simplex_mirror_descent

    c = np.array([[3.0, 1.0, 2.0]])

    def oracle(x, it):
        val = (c * x).sum(1)
        return val, c.min(1), c.copy()

    res = simplex_mirror_descent(oracle, 1, 3, max_iter=1, tol=1e-6)
    assert res.n_iter == 1 and not res.converged
    assert res.lower[0] == pytest.approx(1.0) and res.value[0] == pytest.approx(2.0)


def test_pcg64_route_with_spawned_buffered_and_pickled_generators(monkeypatch):
    from kernlearn.families._pcg64_normals import pcg64_scaled_normals

    gens = [np.random.Generator(np.random.PCG64(s))
            for s in np.random.SeedSequence(123).spawn(3)]
    gens[1].integers(0, 10, dtype=np.uint32)  # a buffered 32-bit half
    gens[2] = pickle.loads(pickle.dumps(np.random.Generator(gens[2].bit_generator.jumped())))
    refs = [pickle.loads(pickle.dumps(g)) for g in gens]
    out, sigma = np.empty((3, 5000)), np.array([1.0, 2.0, 3.0])
    assert pcg64_scaled_normals(gens, out, sigma)
    np.testing.assert_array_equal(
        out, np.stack([r.standard_normal(5000) / s for r, s in zip(refs, sigma)]))
    for g, r in zip(gens, refs):
        assert g.bit_generator.state == r.bit_generator.state
    # other bit generators and NUMBA_DISABLE_JIT: the former route
    assert not pcg64_scaled_normals([np.random.Generator(np.random.MT19937(0))], out, sigma)
    import numba

    monkeypatch.setattr(numba.config, "DISABLE_JIT", True)
    assert not pcg64_scaled_normals(refs, out, sigma)


def test_expansion_width_counts_the_stored_entries_of_sparse_input(monkeypatch):
    import scipy.sparse as sp

    from kernlearn.families import AdditiveKernelExpansion, explicit

    X = sp.random(200, 50, density=0.01, format="csr", random_state=0)
    monkeypatch.setattr(explicit, "physical_memory", lambda: 8 * 200 * 50 * 100 - 1)
    AdditiveKernelExpansion(n_bins=100).fit(X)  # 100 stored entries x 100 bins
    with pytest.raises(ValueError, match=r"n_bins=100 would need .* lower n_bins"):
        AdditiveKernelExpansion(n_bins=100).fit(X.toarray())


def test_cli_refuses_a_huge_n_candidates_in_one_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    data = tmp_path / "d.csv"
    np.savetxt(data, np.c_[X, X[:, 0]], delimiter=",", header="a,b,c,y", comments="")
    code, _, err = run_cli(["fit", data, "--format", "csv", "--label", "y",
                              "--estimator", "infinite-regressor", "--param",
                              "n_candidates=10000000000000", "-m", tmp_path / "m.kl"],
                             capsys)
    assert code == 6 and one_error(err) and "n_candidates=10000000000000" in err
    assert not os.path.exists(tmp_path / "m.kl")


def test_platt_still_refuses_a_typo_key_beside_a_weighed_out_label():
    from kernlearn import MultitaskMKLClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    y[::10] = 2
    t = np.repeat([0, 1], 30)
    with pytest.raises(ValueError, match="class_weight names 7"):
        MultitaskMKLClassifier(["linear"], probability=True,
                               class_weight={2: 0, 7: 1.0}).fit(X, y, task_index=t)


@pytest.mark.parametrize("kernel", ["hik", "additive_chi2", "additive_gaussian"])
def test_defect_an_expansion_fitted_on_a_nested_list_equals_the_array_fit(kernel):
    # a list died in ``X.shape`` (AttributeError); it is read as the array it holds
    from kernlearn.families import AdditiveKernelExpansion

    X = np.random.default_rng(0).uniform(0.0, 1.0, (12, 3))
    a = AdditiveKernelExpansion(kernel=kernel).fit(X)
    b = AdditiveKernelExpansion(kernel=kernel).fit(X.tolist())
    np.testing.assert_array_equal(a.scale_, b.scale_)
    assert b.n_features_ == 3
