"""Loose ends that the thirty-second pass left (each test here failed before its fix).

* ``PNormMKLClassifier``: a zero sample weight removes its row.  The row was
  read before the stochastic steps (which never draw it): the standardisation,
  the widths (``gamma="scale"``), the normalised linear kernel (a zero-weight
  row with entries near 1e200 was refused as an overflow) and the weighted
  draws' indices (the same kept rows gave another sequence, so another model).
  The fit now sees the rows of positive weight only; ``support_`` counts the
  user's rows and a class weighed out stays in ``classes_``.
* ``MultitaskMKL*`` with ``formulation="independent"``: ``tol`` was accepted
  and never read (the average kernel is fitted once, exactly: ``tol=100`` gave
  the model of ``tol=0``); a warning now names it, as it named ``max_iter``.
  Every numeric setting is refused out of range on every formulation (one
  place, the parameter constraints).
* ``MultitaskMKL*CV`` with an int ``cv``: scikit-learn's "The least populated
  class in y has only 3 members, which is less than n_splits=5" about a task
  of 3 rows (a regressor's targets have no class; the classifier's labels had
  plenty).  Nothing is wrong then (every row is validated once; the training
  folds are checked to fit every task): the same folds, without the warning.
* Settings unread beside precomputed kernels, now named by a warning (as
  ``degree`` beside ``kernel="rbf"``): ``PNormMKLClassifier``'s
  ``normalize``, ``standardize`` and ``cache_size``; the classifiers'
  ``standardize`` (``LowRankKernelClassifier``, ``MultitaskMKLClassifier``
  and its CV).  The regressors read ``standardize`` (their targets).
  And ``PNormMKLClassifier``'s ``eta`` with ``max_iter_online=0`` (stage 1,
  which reads it, does not run), as with ``pegasos=True``; and
  ``LowRankKernel*``'s ``gamma_factors`` beside a kernel without a width
  (``"linear"``, ``"precomputed"``), as ``gamma`` there; and
  ``FGMClassifier``'s ``n_jobs`` where no one-vs-rest problems run (two
  classes, or ``multiclass="shared"``).
"""

import warnings

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import threadpool_limits

import kernlearn as kl
from kernlearn.estimators._renamed import UnusedParameterWarning

# (short fits: their stops at max_iter are not what these tests look at)
_unconverged = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _binary(n=70, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4)
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.4 * rng.randn(n) > 0).astype(int)
    # unequal positive weights (the weighted draws index the rows), three zeros
    w = rng.uniform(0.5, 2.0, size=n)
    w[[3, 20, 41]] = 0.0
    return X, y, w


def _linear_grams(X, Xt):
    A, B = X / np.sqrt(X.shape[1]), Xt / np.sqrt(X.shape[1])
    return [A @ A.T, np.exp(-0.5 * ((A[:, None] - A[None]) ** 2).sum(-1))], \
        [B @ A.T, np.exp(-0.5 * ((B[:, None] - A[None]) ** 2).sum(-1))]


# ------------------------------------ OBSCURE: a zero weight equals a removed row
@_unconverged
@pytest.mark.parametrize("kernels", [None, "precomputed"])
def test_obscure_zero_weight_fit_equals_the_fit_without_the_rows(kernels):
    X, y, w = _binary()
    keep = w > 0
    Xt = np.random.RandomState(1).randn(15, 4)
    est = kl.PNormMKLClassifier(kernels=kernels, max_iter=30, probability=True,
                                random_state=0)
    with threadpool_limits(1):
        if kernels is None:
            a = est.fit(X, y, sample_weight=w)
            da, pa = a.decision_function(Xt), a.predict_proba(Xt)
            b = kl.PNormMKLClassifier(**est.get_params()).fit(X[keep], y[keep],
                                                              sample_weight=w[keep])
            db, pb = b.decision_function(Xt), b.predict_proba(Xt)
        else:
            G, Gt = _linear_grams(X, Xt)
            a = est.fit(G, y, sample_weight=w)
            # test Grams: one column per user's training row (the removed ones too)
            da, pa = a.decision_function(Gt), a.predict_proba(Gt)
            b = kl.PNormMKLClassifier(**est.get_params()).fit(
                [g[np.ix_(keep, keep)] for g in G], y[keep], sample_weight=w[keep])
            db = b.decision_function([g[:, keep] for g in Gt])
            pb = b.predict_proba([g[:, keep] for g in Gt])
    np.testing.assert_array_equal(da, db)
    np.testing.assert_array_equal(pa, pb)
    # support_ in the user's row numbers
    np.testing.assert_array_equal(a.support_, np.flatnonzero(keep)[b.support_])
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    np.testing.assert_array_equal(a.kernel_weights_, b.kernel_weights_)


@_unconverged
def test_obscure_zero_weight_row_far_out_is_not_read():
    X, y, w = _binary()
    X = X.copy()
    X[20] = [1e200, -1e200, 3e199, 1e200]  # weight zero (w[20] == 0)
    est = kl.PNormMKLClassifier(max_iter=20, random_state=0)
    with threadpool_limits(1):
        a = est.fit(X, y, sample_weight=w)  # was refused: "kernels[3] ... overflow"
        b = kl.PNormMKLClassifier(**est.get_params()).fit(X[w > 0], y[w > 0],
                                                          sample_weight=w[w > 0])
    np.testing.assert_array_equal(a.decision_function(X[:10]), b.decision_function(X[:10]))
    np.testing.assert_array_equal(a.x_mean_, b.x_mean_)


@_unconverged
@pytest.mark.parametrize("far", [1e5, 1e200])
@pytest.mark.parametrize("gamma", [0.3, "scale", "mean"])
def test_obscure_distance_shift_and_widths_ignore_zero_weight_rows(gamma, far):
    # rows at 1e7 with a unit spread: the RBF distances subtract the training
    # rows' mean first (distance_shift), which a zero-weight row moved (or, at
    # 1e200, overflowed to no shift): the kept rows' distances lost their
    # digits, 0.18-0.26 on the decision values
    X, y, w = _binary()
    w = (w > 0).astype(float)  # equal weights: the same draws as without the rows
    X = X + 1e7
    X[20] = far  # weight zero
    kernels = [("rbf", {"gamma": gamma})]
    a = kl.PNormMKLClassifier(kernels, standardize=False, max_iter=5,
                              random_state=0).fit(X, y, sample_weight=w)
    b = kl.PNormMKLClassifier(kernels, standardize=False, max_iter=5,
                              random_state=0).fit(X[w > 0], y[w > 0], sample_weight=w[w > 0])
    assert a.kernel_params_ == b.kernel_params_
    np.testing.assert_array_equal(a.decision_function(X[w > 0]),
                                  b.decision_function(X[w > 0]))


@_unconverged
@pytest.mark.parametrize("n_classes", [3, 4])
def test_obscure_class_weighed_out_is_kept_and_never_predicted(n_classes):
    rng = np.random.RandomState(2)
    X = rng.randn(90, 4)
    y = np.argmax(X[:, :n_classes] + 0.3 * rng.randn(90, n_classes), axis=1)
    w = np.ones(90)
    w[y == 1] = 0.0  # class 1 weighed out: removed with its rows
    keep = w > 0
    with threadpool_limits(1):
        a = kl.PNormMKLClassifier(max_iter=20, random_state=0).fit(X, y, sample_weight=w)
        b = kl.PNormMKLClassifier(max_iter=20, random_state=0).fit(X[keep], y[keep],
                                                                   sample_weight=w[keep])
    np.testing.assert_array_equal(a.classes_, np.arange(n_classes))
    assert a.dual_coef_.shape[0] == n_classes
    assert not np.any(a.predict(X) == 1)
    # the classes fitted: the model of the fit without the class's rows
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.support_, np.flatnonzero(keep)[b.support_])
    if n_classes == 4:  # Crammer-Singer on the three others, a zero row for class 1
        np.testing.assert_array_equal(a.dual_coef_[[0, 2, 3]], b.dual_coef_)
        assert not np.any(a.dual_coef_[1])
    else:  # the two others' hinge model written as Crammer-Singer outputs -f/2, f/2
        np.testing.assert_array_equal(a.dual_coef_[[0, 2]], [-0.5 * b.dual_coef_[0],
                                                             0.5 * b.dual_coef_[0]])
        f = b.decision_function(X)
        D = a.decision_function(X)
        np.testing.assert_allclose(D[:, 2] - D[:, 0], f, rtol=1e-12, atol=1e-12)


# ------------------------------- multitask MKL: tol on formulation="independent"
_RNG = np.random.default_rng(33)
_X = _RNG.normal(size=(60, 3))
_YR = _X[:, 0] + 0.1 * _RNG.normal(size=60)
_YC = np.where(_X[:, 0] + 0.3 * _RNG.normal(size=60) > 0, 1, -1)
_T = np.repeat([0, 1], 30)


def _mt_output(est):
    if hasattr(est, "classes_"):
        return est.decision_function(_X, task_index=_T)
    return est.predict(_X, task_index=_T)


def _fit_quiet(est):
    """Fit with an ``UnusedParameterWarning`` made an error (none may be given)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedParameterWarning)
        return est.fit(_X, _YC if "Classifier" in type(est).__name__ else _YR,
                       task_index=_T)


_MT_CLASSES = [kl.MultitaskMKLRegressor, kl.MultitaskMKLClassifier,
               kl.MultitaskMKLRegressorCV, kl.MultitaskMKLClassifierCV]
_MT_IDS = ["regressor", "classifier", "regressor-cv", "classifier-cv"]


def _mt(cls, **kw):
    grid = {"Cs": [0.5, 2.0], "cv": 2} if cls.__name__.endswith("CV") else {}
    if cls is kl.MultitaskMKLRegressorCV:
        grid["kernel_selection"] = "objective"  # (the leave-one-out search is MK-MTFL's)
    return cls(kernels=["rbf", "linear"], **grid, **kw)


@pytest.mark.parametrize("cls", _MT_CLASSES, ids=_MT_IDS)
def test_multitask_independent_tol_is_named_and_unread(cls):
    est = _mt(cls, formulation="independent", tol=0.5)
    y = _YC if "Classifier" in cls.__name__ else _YR
    with threadpool_limits(1):
        with pytest.warns(UnusedParameterWarning,
                          match="tol=0.5 not used with formulation='independent'") as rec:
            est.fit(_X, y, task_index=_T)
        plain = _fit_quiet(_mt(cls, formulation="independent"))
        np.testing.assert_array_equal(_mt_output(est), _mt_output(plain))
    assert len([r for r in rec if r.category is UnusedParameterWarning]) == 1
    assert rec[0].filename == __file__


@pytest.mark.parametrize("formulation", ["mtfl", "mkl", "mtsfl"])
def test_multitask_tol_read_elsewhere_is_not_named(formulation):
    _fit_quiet(_mt(kl.MultitaskMKLClassifier, formulation=formulation, tol=0.5))


@pytest.mark.parametrize("cls", _MT_CLASSES, ids=_MT_IDS)
@pytest.mark.parametrize("formulation", ["mtfl", "mtsfl", "mkl", "independent"])
@pytest.mark.parametrize("setting", [
    {"tol": -1.0}, {"tol": float("nan")}, {"max_iter": 0}, {"max_iter": -1},
    {"inner_max_iter": 0}, {"p": 1.5}, {"p": float("nan")}, {"q": 2.5},
    {"q": float("nan")}, {"max_rank": 0}, {"verbose": -1},
], ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_multitask_bad_setting_is_refused_on_every_formulation(cls, formulation, setting):
    name = next(iter(setting))
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {cls.__name__}"):
        _fit_quiet(_mt(cls, formulation=formulation, **setting))


# ----------------------- multitask CV: scikit-learn's "least populated class" warning
def _small_task(classifier):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(64, 3))
    t = np.r_[np.zeros(30), np.ones(30), np.full(4, 2)].astype(int)
    if not classifier:
        return X[:63], X[:63, 0] + 0.1 * rng.normal(size=63), t[:63]  # task 2: 3 rows
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=64) > 0, 1, -1)
    y[60:] = [1, -1, -1, 1]  # task 2: two rows of each class, fewer than 5 folds
    return X, y, t


@pytest.mark.parametrize("cls", [kl.MultitaskMKLRegressorCV, kl.MultitaskMKLClassifierCV],
                         ids=["regressor", "classifier"])
def test_multitask_cv_short_task_gives_no_class_warning(cls):
    from sklearn.model_selection import StratifiedKFold

    classifier = cls is kl.MultitaskMKLClassifierCV
    X, y, t = _small_task(classifier)
    kw = dict(kernels=["linear"], Cs=[0.1, 1.0])
    if not classifier:
        kw["kernel_selection"] = "objective"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # was: UserWarning "least populated class"
        a = cls(cv=5, **kw).fit(X, y, task_index=t)
    # the folds are scikit-learn's StratifiedKFold(5) folds of the strata, as before
    strata = 2 * t + (y > 0) if classifier else t
    with pytest.warns(UserWarning, match="least populated class"):
        pairs = list(StratifiedKFold(5).split(X, strata))
    b = cls(cv=pairs, **kw).fit(X, y, task_index=t)
    for key in ("mean_test_score", *(f"split{k}_test_score" for k in range(5))):
        np.testing.assert_array_equal(a.cv_results_[key], b.cv_results_[key])


@pytest.mark.parametrize("seed", range(6))
def test_multitask_cv_folds_are_stratified_kfolds(seed):
    from sklearn.model_selection import StratifiedKFold
    from kernlearn.estimators.mtmkl_cv import _Stratified

    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 7))
    # strata in any order, some shorter than k (seeds 0-2) or none (3-5)
    sizes = rng.integers(1 if seed < 3 else k, 3 * k, size=int(rng.integers(1, 6)))
    sizes[0] = max(sizes[0], k)
    strata = rng.permutation(np.repeat(rng.permutation(20)[:len(sizes)], sizes))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (scikit-learn's, short strata)
        want = list(StratifiedKFold(k).split(np.zeros((len(strata), 1)), strata))
    got = _Stratified(k).split(None, strata)
    assert len(got) == len(want) == k
    for (tr, te), (tr0, te0) in zip(got, want):
        np.testing.assert_array_equal(tr, tr0)
        np.testing.assert_array_equal(te, te0)


# --------------------------------------- settings unread beside precomputed kernels
def _gram_data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 3)) * [1.0, 5.0, 20.0] + 3.0
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 3.0, 1, -1)
    A = (X - X.mean(0)) / X.std(0)
    return A, y, [A @ A.T / 3.0, np.exp(-0.3 * ((A[:, None] - A[None]) ** 2).sum(-1))]


_T60 = np.repeat([0, 1], 30)
_PRE = [
    (lambda **kw: kl.PNormMKLClassifier("precomputed", random_state=0, max_iter=20, **kw),
     {"normalize": False}, "normalize=False not used with kernels='precomputed'", {}),
    (lambda **kw: kl.PNormMKLClassifier("precomputed", random_state=0, max_iter=20, **kw),
     {"standardize": False, "cache_size": 8.0},
     "standardize=False, cache_size=8.0 not used with kernels='precomputed'", {}),
    (lambda **kw: kl.LowRankKernelClassifier("precomputed", random_state=0, **kw),
     {"standardize": False}, "standardize=False not used with kernel='precomputed' in a "
     "classifier", {}),
    (lambda **kw: kl.MultitaskMKLClassifier("precomputed", **kw),
     {"standardize": False}, "standardize=False not used with kernels='precomputed' in a "
     "classifier", {"task_index": _T60}),
    (lambda **kw: kl.MultitaskMKLClassifierCV("precomputed", Cs=[0.5, 2.0], cv=2, **kw),
     {"standardize": False}, "standardize=False not used with kernels='precomputed' in a "
     "classifier", {"task_index": _T60}),
]


@_unconverged
@pytest.mark.parametrize("make, setting, said, kw", _PRE,
                         ids=["pnorm-normalize", "pnorm-standardize-cache", "lowrank",
                              "multitask", "multitask-cv"])
def test_setting_unread_beside_precomputed_kernels_is_named(make, setting, said, kw):
    _, y, G = _gram_data()
    X = G[1] if "LowRank" in type(make()).__name__ else G
    with threadpool_limits(1):
        with pytest.warns(UnusedParameterWarning, match=said) as rec:
            est = make(**setting).fit(X, y, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnusedParameterWarning)
            plain = make().fit(X, y, **kw)
        np.testing.assert_array_equal(est.decision_function(X, **kw),
                                      plain.decision_function(X, **kw))
    assert len([r for r in rec if r.category is UnusedParameterWarning]) == 1
    assert rec[0].filename == __file__


@pytest.mark.parametrize("make, kw", [
    (lambda: kl.LowRankKernelRegressor("precomputed", random_state=0, standardize=False),
     {}),
    (lambda: kl.MultitaskMKLRegressor("precomputed", standardize=False),
     {"task_index": _T60}),
    (lambda: kl.PNormMKLClassifier(standardize=False, normalize=False, cache_size=8.0,
                                   max_iter=5, random_state=0), {}),
], ids=["lowrank-regressor", "multitask-regressor", "pnorm-rows"])
@_unconverged
def test_setting_read_is_not_named(make, kw):
    A, y, G = _gram_data()
    est = make()
    X = A if isinstance(est, kl.PNormMKLClassifier) else (
        G if isinstance(est, kl.MultitaskMKLRegressor) else G[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedParameterWarning)
        est.fit(X, y * 2.0 + 5.0 if not isinstance(est, kl.PNormMKLClassifier) else y, **kw)


@_unconverged
def test_obscure_eta_without_stage_one_is_named():
    A, y, _ = _gram_data()
    make = lambda **kw: kl.PNormMKLClassifier(max_iter_online=0, max_iter=20,  # noqa: E731
                                              random_state=0, **kw)
    with threadpool_limits(1):
        with pytest.warns(UnusedParameterWarning,
                          match="eta=0.1 not used with max_iter_online=0") as rec:
            est = make(eta=0.1).fit(A, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnusedParameterWarning)
            plain = make().fit(A, y)
            # read when stage 1 runs: not named, and another model
            other = kl.PNormMKLClassifier(eta=0.1, max_iter=20, random_state=0).fit(A, y)
        np.testing.assert_array_equal(est.decision_function(A), plain.decision_function(A))
    assert not np.array_equal(other.decision_function(A),
                              kl.PNormMKLClassifier(max_iter=20, random_state=0).fit(
                                  A, y).decision_function(A))
    assert len([r for r in rec if r.category is UnusedParameterWarning]) == 1
    assert rec[0].filename == __file__


@pytest.mark.parametrize("kernel", ["linear", "precomputed"])
def test_lowrank_gamma_factors_without_a_width_is_named(kernel):
    A, _, G = _gram_data()
    y = A[:, 0] + 0.1 * A[:, 1]
    X = G[0] if kernel == "precomputed" else A
    with threadpool_limits(1):
        with pytest.warns(UnusedParameterWarning,
                          match=rf"gamma_factors=\(1.0, 3.0\) not used with kernel='{kernel}'") \
                as rec:
            est = kl.LowRankKernelRegressor(kernel, gamma_factors=(1.0, 3.0),
                                            random_state=0).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnusedParameterWarning)
            plain = kl.LowRankKernelRegressor(kernel, random_state=0).fit(X, y)
            # read by a kernel with a width: not named
            kl.LowRankKernelRegressor("poly", gamma_factors=(1.0, 3.0),
                                      random_state=0).fit(A, y)
        np.testing.assert_array_equal(est.predict(X), plain.predict(X))
    assert len([r for r in rec if r.category is UnusedParameterWarning]) == 1
    assert rec[0].filename == __file__


@pytest.mark.parametrize("n_classes, multiclass, said", [
    (2, "ovr", "n_jobs=2 not used with two classes"),
    (3, "shared", "n_jobs=2 not used with multiclass='shared'"),
    (3, "auto", "n_jobs=2 not used with multiclass='auto'"),
], ids=["binary", "shared", "auto"])
def test_fgm_n_jobs_without_one_vs_rest_problems_is_named(n_classes, multiclass, said):
    A, _, _ = _gram_data()
    y = np.argmax(A[:, :n_classes], axis=1)
    make = lambda **kw: kl.FGMClassifier(B=2, max_iter=3, multiclass=multiclass,  # noqa: E731
                                         **kw)
    with pytest.warns(UnusedParameterWarning, match=said) as rec:
        est = make(n_jobs=2).fit(A, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedParameterWarning)
        plain = make().fit(A, y)
        # read by three one-vs-rest problems: not named
        make(n_jobs=2).set_params(multiclass="ovr").fit(A, np.argmax(A[:, :3], axis=1))
    np.testing.assert_array_equal(est.decision_function(A), plain.decision_function(A))
    assert len([r for r in rec if r.category is UnusedParameterWarning]) == 1
    assert rec[0].filename == __file__
