"""Kernels, normalisation, bandwidth scaling and the cached / on-the-fly KernelList."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.kernels import (
    KERNELS,
    KernelList,
    PrecomputedKernelList,
    distance_to_kernel,
    kernel_diag,
    mean_pairwise_sq_distance,
    normalize_kernel,
    pairwise_kernel,
    rbf_kernel,
)

PARAMS = {
    "constant": {},
    "linear": {},
    "rbf": {"gamma": 0.3},
    "poly": {"degree": 3, "gamma": 0.5, "coef0": 1.0},
    "hik": {"beta": 1.0},
    "additive_chi2": {},
}


def _naive(name, x, y, **p):
    if name == "constant":
        return 1.0
    if name == "linear":
        return x @ y
    if name == "rbf":
        return np.exp(-p["gamma"] * np.sum((x - y) ** 2))
    if name == "poly":
        return (p["gamma"] * x @ y + p["coef0"]) ** p["degree"]
    if name == "hik":
        return np.sum(np.minimum(np.abs(x) ** p["beta"], np.abs(y) ** p["beta"]))
    s = x + y
    return np.sum(np.where(s > 0, 2 * x * y / np.where(s > 0, s, 1), 0))


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernels_match_naive_and_diag(name, container, rng):
    X = np.abs(rng.normal(size=(7, 4)))
    X[0, 1] = 0.0
    Y = np.abs(rng.normal(size=(5, 4)))
    K = pairwise_kernel(container(X), container(Y), name, **PARAMS[name])
    ref = np.array([[_naive(name, x, y, **PARAMS[name]) for y in Y] for x in X])
    np.testing.assert_allclose(K, ref, rtol=1e-10, atol=1e-12)
    d = kernel_diag(container(X), name, **PARAMS[name])
    np.testing.assert_allclose(
        d, np.diag(pairwise_kernel(X, X, name, **PARAMS[name])), rtol=1e-10
    )


def test_kernel_diag_callable_by_blocks(rng):
    X = rng.normal(size=(11, 3))

    def cubic(A, B):
        return (A @ B.T + 2.0) ** 3

    np.testing.assert_allclose(kernel_diag(X, cubic, block=4), np.diag(cubic(X, X)))


def test_normalize_kernel_unit_diagonal(rng):
    X = rng.normal(size=(6, 3))
    K = pairwise_kernel(X, X, "poly", degree=2)
    Kn = normalize_kernel(K, np.diag(K))
    np.testing.assert_allclose(np.diag(Kn), 1.0)
    np.testing.assert_allclose(Kn[1, 2], K[1, 2] / np.sqrt(K[1, 1] * K[2, 2]))
    # a zero point keeps a zero row instead of NaN
    Z = normalize_kernel(np.zeros((2, 2)), np.zeros(2))
    assert np.all(Z == 0)


def test_mean_pairwise_sq_distance(container, rng):
    X = rng.normal(size=(9, 4))
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    ref = D[~np.eye(9, dtype=bool)].mean()
    assert mean_pairwise_sq_distance(container(X)) == pytest.approx(ref, rel=1e-10)


def test_gamma_mean_is_inverse_mean_sq_distance(rng):
    X = rng.normal(size=(20, 3))
    kl = KernelList([("rbf", {"gamma": "mean"})]).fit(X)
    assert kl.params_[0]["gamma"] == pytest.approx(1.0 / mean_pairwise_sq_distance(X))
    # the paper's pendigits kernel exp(-||x - y||^2 / mean d^2)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.testing.assert_allclose(
        kl.gram()[0], np.exp(-D / D[~np.eye(20, dtype=bool)].mean())
    )


def test_distance_to_kernel(rng):
    D = np.abs(rng.normal(size=(5, 5)))
    D = D + D.T
    np.fill_diagonal(D, 0)
    gamma = D[~np.eye(5, dtype=bool)].mean()
    np.testing.assert_allclose(distance_to_kernel(D), np.exp(-D / gamma))
    with pytest.raises(ValueError, match="non-negative"):
        distance_to_kernel(-D)


def _specs():
    return [
        "linear",
        ("rbf", {"gamma": "mean"}, [0, 2]),
        ("poly", {"degree": 2}, slice(1, 4)),
        ("hik", {}, np.array([True, False, True, True])),
    ]


def test_kernel_list_views_normalised(container, rng):
    X = np.abs(rng.normal(size=(15, 4)))
    kl = KernelList(_specs()).fit(container(X))
    K = kl.gram()
    assert K.shape == (4, 15, 15)
    np.testing.assert_allclose(np.einsum("jii->ji", K), 1.0)
    Kp = pairwise_kernel(X[:, 1:4], X[:, 1:4], "poly", degree=2)
    np.testing.assert_allclose(K[2], normalize_kernel(Kp, np.diag(Kp)))
    Kh = pairwise_kernel(X[:, [0, 2, 3]], X[:, [0, 2, 3]], "hik")
    np.testing.assert_allclose(K[3], normalize_kernel(Kh, np.diag(Kh)))


def test_kernel_list_on_the_fly_equals_cached(rng):
    X = rng.normal(size=(40, 4))
    cached = KernelList(_specs()[:3]).fit(X)
    tiny = 3 * 40 * 8 * 7 / 2**20  # room for 7 rows of 3 kernels
    fly = KernelList(_specs()[:3], cache_size=tiny).fit(X)
    assert cached.gram_ is not None and fly.gram_ is None
    assert fly.block_size() == 7
    order = rng.permutation(40)
    seen = []
    for ids, rows, local in fly.iter_blocks(order):
        assert rows.nbytes <= tiny * 2**20
        np.testing.assert_allclose(rows[:, local], cached.gram_[:, ids], rtol=1e-12)
        seen += list(ids)
    assert seen == list(order)
    Xt = rng.normal(size=(6, 4))
    np.testing.assert_allclose(fly.cross(Xt), cached.cross(Xt))


def test_kernel_list_cross_matches_pairwise(container, rng):
    X, Xt = rng.normal(size=(10, 3)), rng.normal(size=(4, 3))
    kl = KernelList([("poly", {"degree": 3})]).fit(container(X))
    K = pairwise_kernel(Xt, X, "poly", degree=3)
    dt = np.diag(pairwise_kernel(Xt, Xt, "poly", degree=3))
    dx = np.diag(pairwise_kernel(X, X, "poly", degree=3))
    np.testing.assert_allclose(
        kl.cross(container(Xt), support=[1, 5])[0],
        normalize_kernel(K, dt, dx)[:, [1, 5]],
    )


@pytest.mark.parametrize(
    "specs, err, match",
    [
        (["nope"], ValueError, "unknown kernel"),
        ([42], TypeError, "kernels\\[0\\]"),
        ([("rbf", "gamma")], TypeError, "params must be a dict"),
        ([("linear", {}, [0, 9])], ValueError, "out of range"),
        ([("linear", {}, np.array([True, False]))], ValueError, "boolean column mask"),
        ([("poly", {"gamma": "mean"})], ValueError, "only defined for 'rbf'"),
        ([], ValueError, "at least one kernel"),
        ("rbf", TypeError, "list of kernel specs"),
    ],
)
def test_kernel_list_bad_specs(specs, err, match, rng):
    X = rng.normal(size=(5, 3))
    with pytest.raises(err, match=match):
        KernelList(specs).fit(X)


def test_kernel_list_nan_kernel(rng):
    def bad(A, B):
        K = A @ B.T
        K[0, 0] = np.nan
        return K

    with pytest.raises(
        ValueError, match="kernels\\[1\\].*non-finite|kernels\\[1\\].*NaN"
    ):
        KernelList(["linear", bad], normalize=False).fit(rng.normal(size=(5, 2)))


def test_precomputed_kernel_list_validation(rng):
    A = rng.normal(size=(6, 6))
    K = A @ A.T
    pk = PrecomputedKernelList([K, 2 * K]).fit()
    np.testing.assert_allclose(pk.rows([2, 0])[1], 2 * K[[2, 0]])
    np.testing.assert_allclose(pk.kdiag_[0], np.diag(K))
    with pytest.raises(ValueError, match="square"):
        PrecomputedKernelList([K[:, :5]]).fit()
    with pytest.raises(ValueError, match="not symmetric"):
        PrecomputedKernelList([K, A]).fit()
    with pytest.raises(ValueError, match="mismatched sizes"):
        PrecomputedKernelList([K, K[:5, :5]]).fit()
    bad = K.copy()
    bad[1, 2] = bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        PrecomputedKernelList([K, bad]).fit()
    with pytest.raises(TypeError, match="list of Gram matrices"):
        PrecomputedKernelList(K[0]).fit()
    with pytest.raises(ValueError, match="Expected 2 test Gram"):
        pk.cross([K])
    with pytest.raises(ValueError, match="n_test, n_train"):
        pk.cross([K[:3], K[:3, :4]])
    # cross keeps the support's columns of each test Gram, kernels first
    np.testing.assert_array_equal(
        pk.cross([K[:3], 3 * K[:3]], support=[0, 4]),
        np.stack([K[:3][:, [0, 4]], 3 * K[:3][:, [0, 4]]]))
    # a sparse Gram matrix is read as its dense values
    sparse = PrecomputedKernelList([sp.csr_matrix(K)]).fit()
    assert sparse.n_samples == 6 and sparse.n_kernels == 1
    np.testing.assert_array_equal(sparse.rows(np.arange(6))[0], K)
    np.testing.assert_array_equal(sparse.kdiag_[0], np.diag(K))


def test_check_psd_gram_is_cheap_and_rejects_clearly_non_psd():
    from kernlearn.kernels import check_psd_gram, rbf_kernel

    rng = np.random.default_rng(0)
    n = 900  # above the exact-check size: certificates only
    X = rng.normal(size=(n, 4))
    check_psd_gram(rbf_kernel(X, X, gamma=0.5))
    check_psd_gram(X @ X.T)  # rank 4: eigenvalues 0 up to round-off pass
    v = rng.normal(size=n)
    v /= np.linalg.norm(v)
    # one eigenvalue -0.5, spread over all rows (the submatrix alone sees less)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        check_psd_gram(X @ X.T - 0.5 * np.outer(v, v))
    A = rng.normal(size=(n, n))
    with pytest.raises(ValueError, match="not positive semi-definite"):
        check_psd_gram(A + A.T)
    with pytest.raises(ValueError, match="not symmetric"):
        check_psd_gram(A)


def test_distance_to_kernel_takes_the_scale_from_training_distances():
    # issue 13, defect 4: the default scale was the mean of whatever matrix was
    # passed, so test kernels used the test distances' scale
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(20, 3)), rng.normal(size=(7, 3)) * 5
    D_tr = np.sqrt(((A[:, None] - A[None]) ** 2).sum(-1))
    D_te = np.sqrt(((B[:, None] - A[None]) ** 2).sum(-1))
    K_tr, gamma = distance_to_kernel(D_tr, return_gamma=True)
    assert gamma == pytest.approx(D_tr[~np.eye(20, dtype=bool)].mean())
    np.testing.assert_allclose(distance_to_kernel(D_te, gamma=gamma), np.exp(-D_te / gamma))
    with pytest.raises(ValueError, match="training scale"):
        distance_to_kernel(D_te)


# --- issue 22: one width resolver, one kernel-list base ------------------------------


def test_resolve_gamma_is_the_one_width_rule(rng):
    from kernlearn.kernels import resolve_gamma, scale_gamma

    X = rng.normal(size=(40, 3)) * [1.0, 2.0, 3.0]
    assert resolve_gamma("scale", X) == pytest.approx(1.0 / (3 * X.var()))
    assert resolve_gamma(None, X) == resolve_gamma("scale", X)
    w = rng.uniform(0.5, 2, size=40)
    assert resolve_gamma("scale", X, sample_weight=w) == pytest.approx(scale_gamma(X, w))
    assert resolve_gamma("mean", X) == pytest.approx(1.0 / mean_pairwise_sq_distance(X))
    assert resolve_gamma(2, X) == 2.0
    # the lists resolve through it: "scale", "mean" and numbers agree
    kl = KernelList([("rbf", {"gamma": "scale"}), ("rbf", {"gamma": "mean"}),
                     ("poly", {"gamma": 0.5})]).fit(X)
    assert [p["gamma"] for p in kl.params_] == [
        resolve_gamma("scale", X), resolve_gamma("mean", X), 0.5]
    for bad in (0.0, -1.0, np.nan, np.inf, "wide", True):
        with pytest.raises(ValueError, match="must be a positive number"):
            resolve_gamma(bad, X)
    with pytest.raises(ValueError, match="only defined for 'rbf'"):
        resolve_gamma("mean", X, kernel="poly")
    with pytest.raises(ValueError, match="pass X"):
        resolve_gamma("scale")


def test_resolve_gamma_names_an_overflowing_spread(rng):
    # issue 23 item 11: X * 1e300 gave "rbf gamma must be positive, got 0.0"
    from kernlearn.kernels import resolve_gamma

    X = rng.normal(size=(20, 3)) * 1e300
    for g in ("scale", "mean"):
        with pytest.raises(ValueError, match="overflows.*rescale"):
            resolve_gamma(g, X)
    with pytest.raises(ValueError, match=r"kernels\[0\]: gamma='scale'.*overflows"):
        KernelList([("rbf", {"gamma": "scale"})]).fit(X)


def test_resolve_gamma_warns_when_one_column_dominates(rng):
    # issue 23 item 8: columns on scales 1e-4..1e6 made "scale" see one column
    from kernlearn.kernels import resolve_gamma

    X = rng.normal(size=(50, 4)) * np.array([1e-4, 1.0, 1e2, 1e6])
    with pytest.warns(UserWarning, match="column 3 holds"):
        resolve_gamma("scale", X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resolve_gamma("scale", rng.normal(size=(50, 4)))  # comparable columns: quiet
        resolve_gamma(0.5, X)  # a given width: the user chose it


def test_bare_rbf_in_a_list_takes_the_scale_width(rng):
    # issue 23 item 9: kernels=["linear", "rbf"] raised KeyError: 'gamma'
    from kernlearn.kernels import resolve_gamma

    X = rng.normal(size=(30, 3))
    kl = KernelList(["linear", "rbf"], precompute=False).fit(X)
    assert kl.params_[1]["gamma"] == pytest.approx(resolve_gamma("scale", X))
    ref = rbf_kernel(X, X[:4], gamma=kl.params_[1]["gamma"])
    np.testing.assert_allclose(kl.rows(np.arange(4))[1], ref.T, rtol=1e-12)


@pytest.mark.parametrize("which", ["computed", "precomputed"])
def test_kernel_list_factor_reproduces_the_gram(which, rng):
    from kernlearn.kernels import BaseKernelList

    X = rng.normal(size=(25, 3))
    kl = KernelList([("rbf", {"gamma": 0.3}), "linear"]).fit(X)
    if which == "precomputed":
        kl = PrecomputedKernelList(list(kl.gram())).fit()
    assert isinstance(kl, BaseKernelList)
    G = kl.gram()
    for j in range(2):
        A = kl.factor(j)
        np.testing.assert_allclose(A @ A.T, G[j], atol=1e-9)
    assert kl.factor(1).shape[1] == 3  # the linear kernel on 3 features has rank 3
    A2 = kl.factor(0, max_rank=2)
    s = np.linalg.eigvalsh(G[0])[::-1]
    # the best rank-2 approximation: error = the remaining eigenvalues
    assert np.linalg.norm(G[0] - A2 @ A2.T) == pytest.approx(np.sqrt(np.sum(s[2:] ** 2)))
    assert kl.factor(0, max_rank=2) is A2  # owned by the list: computed once


# --- issue 23 items 9, 11, 12: kernel specs refused or accepted with clear words -----


def test_non_psd_kernel_callable_is_refused_like_the_precomputed_matrix(rng):
    X = rng.normal(size=(40, 3))

    def negative(A, B):  # -x'y: symmetric but negative definite
        return -(A @ B.T)

    def asymmetric(A, B):
        return A @ B.T + np.outer(A[:, 0], np.ones(len(B)))

    with pytest.raises(ValueError, match=r"kernel callable kernels\[1\] is not positive"):
        KernelList(["linear", negative]).fit(X)
    with pytest.raises(ValueError, match=r"kernels\[0\] is not symmetric"):
        KernelList([asymmetric]).fit(X)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        PrecomputedKernelList([negative(X, X)]).fit()
    # a valid callable passes and gives the named kernel's values
    kl = KernelList([lambda A, B: A @ B.T], normalize=False).fit(X)
    np.testing.assert_allclose(kl.gram()[0], X @ X.T)


def test_kernel_callable_of_the_wrong_shape_is_named(rng):
    X = rng.normal(size=(30, 3))

    def transposed_features(A, B):
        return A.T @ B  # (3, 3): not (len(A), len(B))

    with pytest.raises(ValueError, match=r"returned shape \(3, 3\).*shape \(len\(X\), len\(Y\)\)"):
        KernelList([transposed_features]).fit(X)


@pytest.mark.parametrize("params, match", [
    ({"degree": -2}, "non-negative integer"),
    ({"degree": 1.5}, "non-negative integer"),
    ({"coef0": -1.0}, "non-negative"),
])
def test_indefinite_poly_parameters_are_refused(params, match, rng):
    with pytest.raises(ValueError, match=match):
        KernelList([("poly", params)]).fit(rng.normal(size=(10, 2)))
