"""The faster SVM / SVR duals of the multitask formulations (issue 24).

The compiled SMO of :mod:`kernlearn.methods.mtmkl._smo` now shrinks its
active set (libsvm's heuristic) and takes Newton steps on the face of the
free duals between pair updates, and MK-MTFL starts each evaluation's duals
from the previous one's; the effective kernels and quadratic forms of an
evaluation come from compiled passes over the packed kernel triangles.  None
of it may change the optimum: these tests hold the duals to libsvm's
(scikit-learn's ``SVC`` / ``SVR``), to the KKT conditions recomputed from
scratch, a warm start to a cold one, the counters to what happened, and the
packed passes to their NumPy definitions.
"""

import numpy as np
import pytest
from conftest import assert_same_task_decisions

from kernlearn.methods.mtmkl import mtfl
from kernlearn.methods.mtmkl._smo import libsvm_buckets, smo_buckets

EPS = 0.1


def _degenerate_bucket(seed=0, T=3, m=120):
    """Tasks of categorical rows (many repeated: a kernel of low rank) with
    overlapping classes: the problems whose SMO tails were long."""
    rng = np.random.default_rng(seed)
    K = np.zeros((T, m, m))
    labels, targets = np.zeros((T, m)), np.zeros((T, m))
    sizes = np.array([m - 7 * a for a in range(T)])
    for a, mt in enumerate(sizes):
        X = np.column_stack([rng.integers(0, 3, mt), rng.integers(0, 2, mt),
                             rng.integers(0, 4, mt), rng.normal(size=mt).round(0)])
        X = (X - X.mean(0)) / X.std(0)
        score = X @ [0.6, -0.4, 0.3, 0.3] + rng.normal(size=mt)
        D = ((X[:, None] - X[None]) ** 2).sum(-1)
        K[a, :mt, :mt] = 0.3 * X @ X.T / 4 + 0.7 * np.exp(-D / 4)
        labels[a, :mt] = np.where(score > 0, 1.0, -1.0)
        targets[a, :mt] = score
    return K, labels, targets, sizes


def _kkt_violation(K, y, beta, C, sizes, regression):
    """libsvm's maximal KKT violation of each task, the gradient from scratch."""
    out = []
    for a, m in enumerate(sizes):
        Ka = K[a, :m, :m].astype(np.float32).astype(float)
        f = Ka @ beta[a, :m]
        Ca = np.broadcast_to(C, y.shape)[a, :m]
        if regression:  # variables (alpha, alpha*), s = (1, -1)
            s = np.r_[np.ones(m), -np.ones(m)]
            al = np.r_[np.maximum(beta[a, :m], 0), np.maximum(-beta[a, :m], 0)]
            G = np.r_[f + EPS - y[a, :m], -f + EPS + y[a, :m]]
            Cv = np.r_[Ca, Ca]
        else:
            s, al, G, Cv = y[a, :m], beta[a, :m] * y[a, :m], y[a, :m] * f - 1.0, Ca
        up = ((s > 0) & (al < Cv)) | ((s < 0) & (al > 0))
        low = ((s > 0) & (al > 0)) | ((s < 0) & (al < Cv))
        out.append((-s * G)[up].max() - (-s * G)[low].min())
    return np.array(out)


def _dual(K, y, beta, regression):
    Kf = K.astype(np.float32).astype(float)
    lin = ((y * beta).sum(1) - EPS * np.abs(beta).sum(1) if regression
           else np.abs(beta).sum(1))
    return lin - 0.5 * np.einsum("ti,tij,tj->t", beta, Kf, beta)


@pytest.mark.parametrize("regression", [False, True])
def test_duals_meet_the_kkt_conditions_and_libsvm(regression):
    K, labels, targets, sizes = _degenerate_bucket()
    y = targets if regression else labels
    C = 10.0
    beta, b, n_iter, ok, n_face = smo_buckets(K, y, sizes, C, regression, EPS, tol=1e-8,
                                              return_face_steps=True)
    assert ok.all() and (n_iter > 0).all()
    if not regression:
        # the path under test: face steps taken on these tasks
        assert n_face.sum() > 0
    # KKT from scratch (not the solver's running gradient), the constraints
    assert np.all(_kkt_violation(K, y, beta, C, sizes, regression) < 1e-8 + 1e-10)
    mask = np.arange(K.shape[1])[None] < sizes[:, None]
    np.testing.assert_allclose(beta.sum(1), 0.0, atol=1e-10)
    assert np.all(np.abs(beta) <= C * (1 + 1e-12)) and np.all(beta[~mask] == 0)
    if not regression:
        assert np.all(beta * labels >= 0)
    # libsvm on the same duals (its tolerance 1e-5 here: scikit-learn's SVC)
    ref, ref_b, *_ = libsvm_buckets(K, y, sizes, C, regression, EPS, tol=1e-8)
    np.testing.assert_allclose(_dual(K, y, beta, regression),
                               _dual(K, y, ref, regression), rtol=1e-9)
    assert_same_task_decisions(K, sizes, [(beta, b), (ref, ref_b)], atol=1e-5)


@pytest.mark.parametrize("regression", [False, True])
def test_warm_start_on_a_moved_kernel_reaches_the_cold_optimum(regression):
    # MK-MTFL now starts each evaluation from the previous duals: the kernel
    # weights have moved, the optimum must not depend on the start
    K, labels, targets, sizes = _degenerate_bucket(seed=1)
    y = targets if regression else labels
    K2 = 0.8 * K + 0.2 * K * K
    start, *_ = smo_buckets(K, y, sizes, 10.0, regression, EPS, tol=1e-8)
    cold, b_cold, *_ = smo_buckets(K2, y, sizes, 10.0, regression, EPS, tol=1e-8)
    warm, b_warm, _, ok = smo_buckets(K2, y, sizes, 10.0, regression, EPS,
                                            tol=1e-8, beta0=start)
    assert ok.all()
    assert np.all(_kkt_violation(K2, y, warm, 10.0, sizes, regression) < 1e-8 + 1e-10)
    np.testing.assert_allclose(_dual(K2, y, warm, regression),
                               _dual(K2, y, cold, regression), rtol=1e-10)
    assert_same_task_decisions(K2, sizes, [(warm, b_warm), (cold, b_cold)], atol=1e-6)


def test_counters_count_pair_updates_and_face_steps():
    # two rows: one pair update ends it, no face step (none before 10 pair
    # updates); from the optimum, neither
    K = np.array([[[1.0, 0.2], [0.2, 1.0]]])
    y = np.array([[1.0, -1.0]])
    beta, _, n_iter, ok, n_face = smo_buckets(K, y, np.array([2]), 10.0, tol=1e-8,
                                              return_face_steps=True)
    assert ok.all() and n_iter.tolist() == [1] and n_face.tolist() == [0]
    # the closed form: alpha_1 = alpha_2 = 2 / (K11 + K22 - 2 K12), below C
    np.testing.assert_allclose(beta[0], [1 / 0.8, -1 / 0.8])
    again = smo_buckets(K, y, np.array([2]), 10.0, tol=1e-8, beta0=beta,
                        return_face_steps=True)
    assert again[2].tolist() == [0] and again[4].tolist() == [0]
    # the face steps are an extra return: the default one is unchanged
    Kd, labels, _, sizes = _degenerate_bucket(seed=2)
    out4 = smo_buckets(Kd, labels, sizes, 10.0, tol=1e-8)
    out5 = smo_buckets(Kd, labels, sizes, 10.0, tol=1e-8, return_face_steps=True)
    assert len(out4) == 4 and len(out5) == 5
    np.testing.assert_array_equal(out4[2], out5[2])
    assert out5[4].dtype.kind == "i" and (out5[4] >= 0).all()


def test_packed_passes_equal_their_numpy_definitions():
    rng = np.random.default_rng(0)
    T, k, m = 3, 2, 70  # (m past the 64-row tile: a partial tile too)
    A = rng.normal(size=(k, T, m, 5))
    grams = np.einsum("ktid,ktjd->ktij", A, A)
    Gb = mtfl._task_major([grams])[0]
    W = rng.uniform(0.1, 2.0, (T, k))
    out = np.empty((T, m, m))
    mtfl._unpack_effective(W, Gb, out)
    np.testing.assert_allclose(out, np.einsum("tk,ktij->tij", W, grams), rtol=1e-13,
                               atol=1e-12)
    np.testing.assert_array_equal(out, out.transpose(0, 2, 1))
    beta = rng.normal(size=(T, m))
    S = np.empty((k, T))
    mtfl._packed_quadratic(Gb, beta, S)
    np.testing.assert_allclose(S, np.einsum("ti,ktij,tj->kt", beta, grams, beta),
                               rtol=1e-11)


def test_mtfl_hinge_fit_agrees_with_the_per_task_libsvm_fit(monkeypatch):
    # the whole MK-MTFL fit (warm-started compiled duals, face steps, packed
    # passes) against the per-task scikit-learn solves the first code made
    from kernlearn.methods import mtmkl as M
    from kernlearn.methods.mtmkl import _smo

    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 3, 240), rng.normal(size=240)])
    rows = [np.arange(0, 130), np.arange(130, 240)]
    y = np.where(X[:, 0] - 1 + X[:, 1] + rng.normal(size=240) > 0, 1.0, -1.0)
    pos = np.repeat([0, 1], [130, 110])

    def fit():
        kern = M.TaskKernels([("rbf", {"gamma": 0.5}), "linear"])
        kern, blocks, model = M.fit_multitask(kern, X, y, rows, "mtfl", "hinge", 10.0)
        return model, model.decision(kern, blocks, X + 0.05, pos)

    new, f_new = fit()
    monkeypatch.setattr(_smo, "smo_buckets", _smo.libsvm_buckets)
    old, f_old = fit()
    np.testing.assert_allclose(new.objective, old.objective, rtol=1e-6)
    np.testing.assert_allclose(new.kernel_weights, old.kernel_weights, atol=1e-4)
    np.testing.assert_allclose(f_new, f_old, atol=1e-3)
    np.testing.assert_array_equal(np.sign(f_new), np.sign(f_old))
