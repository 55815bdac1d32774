"""A twenty-first user's audit: kernels a researcher brings.

A researcher brought her own kernels: scikit-learn's pairwise functions,
``functools.partial`` with fixed parameters, lambdas, precomputed Gram
matrices, kernel specs with data-derived widths, and her own feature
families written by ``doc/extending.md``.  Most of it held (the precomputed
path equals the callable path on the same Grams, train and test, for the MKL
estimators; malformed callables are refused naming their position); each
test here failed before its fix.
"""

import functools
import warnings

import numpy as np
import pytest
from sklearn.metrics import pairwise

from kernlearn import LowRankKernelClassifier
from kernlearn.families import BaseFamily


def _binary(n=80, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.standard_normal(n) > 0.4).astype(int)
    return X, y


# ------------------------------------------- SLKL and the width the user fixed
def test_low_rank_keeps_the_width_a_partial_kernel_binds():
    # kernel=partial(rbf_kernel, gamma=0.03): gamma="scale" (1/5 here) was
    # passed over the bound 0.03 and half the columns put at a tenth of it;
    # the model differed from the one on the same kernel precomputed by up to
    # 0.85 in the decision values
    X, y = _binary()
    k = functools.partial(pairwise.rbf_kernel, gamma=0.03)
    a = LowRankKernelClassifier(kernel=k, standardize=False, random_state=0).fit(X, y)
    b = LowRankKernelClassifier(kernel="precomputed", random_state=0).fit(k(X, X), y)
    assert a.kernel_params_ == {"gamma": 0.03}
    X_new = X[:7] + 0.1
    np.testing.assert_allclose(a.decision_function(X_new),
                               b.decision_function(k(X_new, X)), atol=1e-8)


@pytest.mark.parametrize("kw", [
    {"kernel_params": {"gamma": 0.03}},
    {"kernel": pairwise.rbf_kernel, "kernel_params": {"gamma": 0.03}},
], ids=["rbf", "callable"])
def test_low_rank_width_given_in_kernel_params_is_the_only_width(kw):
    # gamma_factors="auto" spreads the columns over several widths around
    # the default width only; a width given in kernel_params had half its
    # columns at gamma / 10 without a word (gamma=0.03 had not)
    X, y = _binary()
    a = LowRankKernelClassifier(standardize=False, random_state=0, **kw).fit(X, y)
    b = LowRankKernelClassifier(gamma=0.03, standardize=False, random_state=0).fit(X, y)
    np.testing.assert_array_equal(np.unique(a.center_factors_), [1.0])
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-10)


# -------------------------------------------------- kernel callables' failures
def _nonnegative(n=60, d=4, seed=1):
    """Histogram-like data: non-negative counts (what chi2 kernels are for)."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(3.0, size=(n, d)).astype(float)
    return X, (X[:, 0] > X[:, 1]).astype(int)


def _estimators(kernel):
    from kernlearn import LowRankKernelRegressor, MultitaskMKLClassifier, PNormMKLClassifier

    return [(PNormMKLClassifier(kernels=["linear", kernel]), {}, r"kernels\[1\]"),
            (MultitaskMKLClassifier(kernels=["linear", kernel]),
             {"task_index": np.arange(60) % 2}, r"kernels\[1\]"),
            (LowRankKernelRegressor(kernel=kernel), {}, "")]


@pytest.mark.parametrize("which", [0, 1, 2], ids=["pnorm", "multitask", "low_rank"])
def test_an_exception_a_kernel_callable_raises_names_the_kernel(which):
    # scikit-learn's chi2_kernel on the standardised (centred) columns said
    # "X contains negative values." of an X that has none, naming no kernel
    X, y = _nonnegative()
    est, kw, where = _estimators(pairwise.chi2_kernel)[which]
    with pytest.raises(ValueError, match=where + r".*chi2_kernel.*raised ValueError .*"
                       r"standardize=True centres .*X contains negative values"):
        est.fit(X, y, **kw)
    est.set_params(standardize=False).fit(X, y, **kw)  # the kernel's own data: fitted


@pytest.mark.parametrize("which", [0, 1, 2], ids=["pnorm", "multitask", "low_rank"])
def test_a_kernel_callable_returning_complex_numbers_is_refused(which):
    # the MKL estimators kept the real parts under a ComplexWarning (a
    # precomputed complex matrix is refused); SLKL stopped in a numba
    # "No definition for lowering" error
    X, y = _nonnegative()
    est, kw, where = _estimators(lambda A, B: pairwise.rbf_kernel(A, B).astype(complex))[
        which]
    with pytest.raises(ValueError, match=where + ".*returned complex numbers"):
        est.fit(X, y, **kw)


# ------------------------------------------------------ a family of one's own
class _Squares(BaseFamily):
    """A finite family written by doc/extending.md: ``x_k`` and ``x_k^2`` per input."""

    def fit(self, X):
        X = np.asarray(X, dtype=float)
        self.n_features_, self.width_, self.n_virtual_ = X.shape[1], 2, 2 * X.shape[1]
        self.X_ = X
        return self

    def raw_columns(self, ids, X):
        feats, power = np.divmod(np.asarray(ids, dtype=int), 2)
        return np.asarray(X, dtype=float)[:, feats] ** (power + 1)

    def column_indices(self, candidates):
        from kernlearn.families._base import as_params

        feats = np.asarray(as_params(candidates), dtype=int)
        return (feats[:, None] * 2 + np.arange(2)).ravel(), np.ones(2 * feats.size)

    def columns(self, candidates, X):
        return self.raw_columns(self.column_indices(candidates)[0], X)

    def price(self, grad, k, rng=None, exclude=None, X=None):
        from kernlearn.families._base import top_candidates

        S = self.columns(np.arange(self.n_features_), self.X_).T @ np.asarray(grad)
        scores = np.sqrt((S.reshape(self.n_features_, -1) ** 2).sum(axis=1))
        return top_candidates(scores, k, exclude, group_size=2)


def test_a_users_family_without_a_method_fgm_needs_is_told_which():
    # "cannot be used by FGM ... Sampled families such as random Fourier
    # features are for InfiniteFeatureClassifier" of a finite family that
    # only lacked raw_columns (or column_indices), naming neither
    from kernlearn import FGMClassifier

    X, y = _binary()
    assert FGMClassifier(family=_Squares(), B=2).fit(X, y).score(X, y) > 0.7
    for gone in ("raw_columns", "column_indices"):
        family = type("Partial", (_Squares,), {gone: None})()
        with pytest.raises(TypeError, match=f"Partial does not implement {gone} "
                           r"\(the contract: doc/extending.md"):
            FGMClassifier(family=family).fit(X, y)


def test_a_family_left_at_the_base_classes_stubs_names_the_method():
    # BaseFamily's and InfiniteFamily's unimplemented methods raised a bare
    # NotImplementedError() (FGM) or "'NoColumns' object has no attribute
    # '_columns'" (GrFL)
    from kernlearn import FGMClassifier, InfiniteFeatureClassifier
    from kernlearn.families._infinite import InfiniteFamily

    X, y = _binary()

    class NoPrice(BaseFamily):
        def fit(self, X):
            return self
        column_indices = raw_columns = _Squares.column_indices

    with pytest.raises(TypeError, match="NoPrice does not implement price"):
        FGMClassifier(family=NoPrice()).fit(X, y)

    class NoColumns(InfiniteFamily):
        def sample(self, k, rng):
            return rng.standard_normal((k, X.shape[1]))

    with pytest.raises(NotImplementedError, match=r"NoColumns does not implement "
                       r"_columns\(params, X\), which the family contract requires"):
        InfiniteFeatureClassifier(family=NoColumns(), max_features=2).fit(X, y)


# ------------------------------- the additive chi2 kernel on standardised columns
def _mkl_on_counts(name, kernel):
    """An MKL estimator of ``["linear", kernel]``, non-negative data, its fit kwargs."""
    import kernlearn

    X, y = _nonnegative()
    kw = {"task_index": np.arange(60) % 2} if name.startswith("Multitask") else {}
    return getattr(kernlearn, name)(kernels=["linear", kernel]), X, y, kw


@pytest.mark.parametrize("name", ["PNormMKLClassifier", "MultitaskMKLClassifier"])
def test_additive_chi2_on_standardised_columns_names_the_kernel_and_the_cause(name):
    # negative values: "additive_chi2 kernel needs non-negative features." (PNorm)
    # and "a kernel has a negative diagonal: it is not PSD." (multitask), naming
    # neither kernel nor cause.  (Counts with the default standardize=True were
    # refused too, centred; since the thirty-sixth pass the histogram kernels
    # see the columns scaled, never centred, and counts fit.)
    est, X, y, kw = _mkl_on_counts(name, "additive_chi2")
    est.fit(X, y, **kw)
    with pytest.raises(ValueError, match=r"kernels\[1\]: the columns additive_chi2 sees "
                       r"have negative values \(column 0 of its view first.*never centred"):
        est.fit(X - X[:, :1].mean(), y, **kw)
    est.set_params(standardize=False).fit(X, y, **kw)


# ------------------------------------------------- precomputed test Gram matrices
def test_a_transposed_precomputed_test_gram_is_not_asked_to_be_square():
    # K(X_train, X_test) of shape (60, 20) was told test Gram matrices "must
    # all be (n_test, n_train) = (60, 60)": the training Gram's shape
    from kernlearn import PNormMKLClassifier

    X, y = _binary(n=60)
    X_new = X[:20] + 0.1
    k = functools.partial(pairwise.rbf_kernel, gamma=0.2)
    est = PNormMKLClassifier(kernels="precomputed", random_state=0).fit(
        [k(X, X), X @ X.T], y)
    assert est.predict([k(X_new, X), X_new @ X.T]).shape == (20,)
    with pytest.raises(ValueError, match=r"X\[0\] has shape \(60, 20\); test Gram matrices "
                       r"are K\(X_test, X_train\) of shape \(n_test, n_train\) = "
                       r"\(n_test, 60\): one column per training sample"):
        est.predict([k(X, X_new), X @ X_new.T])
    with pytest.raises(ValueError, match=r"X\[1\] has 19 rows and X\[0\] 20"):
        est.predict([k(X_new, X), X_new[:-1] @ X.T])


# ----------------------------------------------------------------- kernel specs
def test_width_messages_read_and_a_list_of_widths_says_how_to_write_it():
    # "gamma must be a positive number, 'scale', got -1.0." (poly); a list of
    # widths was refused without a word on writing one kernel per width
    from kernlearn import PNormMKLClassifier

    X, y = _binary()
    with pytest.raises(ValueError, match=r"kernels\[0\]: gamma must be a positive number "
                       r"or 'scale', got -1.0\.$"):
        PNormMKLClassifier(kernels=[("poly", {"gamma": -1.0})]).fit(X, y)
    with pytest.raises(ValueError, match=r"got \[0.1, 1.0\] \(several widths are several "
                       "kernels: one spec per width"):
        PNormMKLClassifier(kernels=[("rbf", {"gamma": [0.1, 1.0]})]).fit(X, y)


@pytest.mark.parametrize("kw, named", [
    ({"gamma": 0.1, "bandwidth": 1.0}, "gamma and bandwidth"),
    ({"bandwidth": 1.0, "bandwidth_range": (1.0, 5.0)}, "bandwidth and bandwidth_range"),
])
def test_fourier_family_given_two_widths_is_refused(kw, named):
    # gamma=0.1 with bandwidth=1.0 fitted the bandwidth (sigma = 1, gamma 0.5)
    # as if gamma had not been given
    from kernlearn import InfiniteFeatureClassifier
    from kernlearn.families import RandomFourierFeatures

    X, y = _binary()
    with pytest.raises(ValueError, match=f"give one of gamma, bandwidth and "
                       f"bandwidth_range; got {named}"):
        InfiniteFeatureClassifier(family=RandomFourierFeatures(**kw),
                                  max_features=2).fit(X, y)


# ---------------------------------------------- kernel callables on sparse input
@pytest.mark.parametrize("name", ["PNormMKLClassifier", "LowRankKernelClassifier"])
def test_a_kernel_callable_on_sparse_columns_it_sees_uncentred_is_warned_of(name):
    # standardize=True centres dense columns and only scales sparse ones; the
    # named kernels subtract the means themselves, a callable cannot: the same
    # data dense and sparse gave two models (decision values 0.29 apart with
    # polynomial_kernel) without a word
    import scipy.sparse as sp

    import kernlearn

    X, y = _binary()
    X[:, 0] += 3.0
    kw = ({"kernels": [pairwise.polynomial_kernel, "rbf"]} if name.startswith("PNorm")
          else {"kernel": pairwise.polynomial_kernel})
    est = getattr(kernlearn, name)(random_state=0, **kw)
    with pytest.warns(UserWarning, match="kernel callable sees the sparse X's columns "
                      "scaled but not centred"):
        est.fit(sp.csr_matrix(X), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # dense input, or a shift-invariant kernel: silent
        est.fit(X, y)
        est.set_params(**{k: ([pairwise.rbf_kernel, "rbf"] if k == "kernels"
                              else pairwise.laplacian_kernel) for k in kw})
        est.fit(sp.csr_matrix(X), y)


@pytest.mark.parametrize("name", ["PNormMKLClassifier", "MultitaskMKLClassifier"])
def test_hik_on_standardised_columns_is_warned_of(name):
    # hik compares |x|: on columns with negative values x and -x looked alike
    # to it, without a word (the columns standardize=True centred before the
    # thirty-sixth pass; now those of the data itself)
    est, X, y, kw = _mkl_on_counts(name, "hik")
    with pytest.warns(UserWarning, match=r"kernels\[1\]: the columns hik sees have negative "
                      r"values \(column 0 of its view first.*\(hik compares their absolute"):
        est.fit(X - X[:, :1].mean(), y, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est.fit(X, y, **kw)
        est.set_params(standardize=False).fit(X, y, **kw)


def test_a_kernel_view_by_column_names_says_columns_are_positions():
    # ("rbf", {}, ["V1", "V2"]) on a DataFrame: "columns must be a non-empty
    # 1-D index array." of a non-empty 1-D list, not saying names are not read
    pd = pytest.importorskip("pandas")
    from kernlearn import PNormMKLClassifier

    X, y = _binary()
    df = pd.DataFrame(X, columns=[f"V{j}" for j in range(X.shape[1])])
    with pytest.raises(ValueError, match=r"columns are positions, not names "
                       r"\(\['V0', 'V2'\]\)"):
        PNormMKLClassifier(kernels=[("rbf", {}, ["V0", "V2"]), "linear"]).fit(df, y)
    with pytest.raises(ValueError, match=r"one column is a list of one, \[0\]"):
        PNormMKLClassifier(kernels=[("rbf", {}, 0), "linear"]).fit(df, y)


def test_loading_a_model_of_an_unregistered_family_says_to_register_it(tmp_path):
    # a model file of a family of one's own, loaded by a program that has not
    # imported the module registering it: "class 'family/...' is not in the
    # allow-list of model components.", not saying what would put it there
    from kernlearn import FGMClassifier
    from kernlearn.families import FAMILIES
    from kernlearn.io import load_model, save_model

    X, y = _binary()
    FAMILIES.register("audit21_squares")(_Squares)
    try:
        save_model(FGMClassifier(family=_Squares(), B=2).fit(X, y), tmp_path / "m.npz")
    finally:
        FAMILIES._classes.pop("audit21_squares")
    with pytest.raises(ValueError, match=r"class 'family/audit21_squares' is not in the "
                       r"allow-list \(a family of your own: import the module registering "
                       "it before loading"):
        load_model(tmp_path / "m.npz")


@pytest.mark.parametrize("name", ["PNormMKLClassifier", "MultitaskMKLClassifier"])
def test_a_kernel_added_to_kernels_by_name_is_checked_as_a_callable(name):
    # KERNELS["mine"] = f, then kernels=["mine"]: a name skipped the check a
    # callable gets, and an indefinite kernel (1 - |x - y| / 2) was fitted
    import kernlearn
    from kernlearn.kernels import KERNELS

    def indefinite(A, B):
        d2 = (A ** 2).sum(1)[:, None] + (B ** 2).sum(1)[None, :] - 2 * A @ B.T
        return 1.0 - 0.5 * np.sqrt(np.maximum(d2, 0.0))

    X, y = _binary()
    kw = {"task_index": np.arange(len(y)) % 2} if name.startswith("Multitask") else {}
    KERNELS["audit21_indefinite"] = indefinite
    try:
        with pytest.raises(ValueError, match=r"kernel callable kernels\[0\] is not positive "
                           "semi-definite"):
            getattr(kernlearn, name)(kernels=["audit21_indefinite", "linear"]).fit(X, y, **kw)
    finally:
        KERNELS.pop("audit21_indefinite")
