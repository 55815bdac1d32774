"""Sample weights, class weights and probabilities on every estimator (issue 14).

The mathematics first (the weighted loss, its gradient, prox and dual bound,
Platt's fit), then the estimator-level contracts: integer weights equal
repeated rows, zero weights equal removed rows, ``class_weight`` acts as
documented, and the probabilities are what scikit-learn's meta-estimators
need (AdaBoost, soft voting, log-loss scoring).
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import expit
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_blobs, make_classification
from sklearn.ensemble import AdaBoostClassifier, VotingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import log_loss, recall_score
from sklearn.model_selection import cross_val_score

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    MultitaskMKLClassifier,
    MultitaskMKLRegressor,
    PNormMKLClassifier,
)
from kernlearn.estimators._base import fit_sample_weight, platt_sigmoid
from kernlearn.kernels import linear_kernel, rbf_kernel
from kernlearn.losses import (
    Hinge,
    Logistic,
    MulticlassHinge,
    Square,
    SquaredHinge,
    WeightedLoss,
)

_KERN = [linear_kernel, (rbf_kernel, {"gamma": 0.5})]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


# ------------------------------------------------------------ the weighted loss
@pytest.mark.parametrize("loss", [SquaredHinge(), Logistic(), Square()])
def test_weighted_loss_derivatives_match_finite_differences(loss, rng):
    n = 40
    m = rng.normal(size=n) * 2
    y = rng.normal(size=n) if isinstance(loss, Square) else np.sign(rng.normal(size=n))
    w = rng.uniform(0, 3, size=n)
    w[:5] = 0.0
    wl = WeightedLoss(loss, w)
    h = 1e-6
    fd = (wl.value(m + h, y) - wl.value(m - h, y)) / (2 * h)
    np.testing.assert_allclose(wl.grad_margin(m, y), fd, atol=1e-6)
    np.testing.assert_allclose(wl.grad_margin(m, y), w * loss.grad_margin(m, y))
    # the Hessian away from the squared hinge's kink
    away = np.abs(1 - y * m) > 1e-3
    fd2 = (wl.grad_margin(m + h, y) - wl.grad_margin(m - h, y)) / (2 * h)
    np.testing.assert_allclose(wl.hess_margin(m, y)[away], fd2[away], atol=1e-5)
    # the objective is sum_i w_i l_i: integer weights are repeated rows
    k = rng.integers(0, 4, size=n)
    assert np.isclose(WeightedLoss(loss, k).value(m, y).sum(),
                      loss.value(np.repeat(m, k), np.repeat(y, k)).sum())


@pytest.mark.parametrize("loss", [SquaredHinge(), Logistic(), Square()])
def test_weighted_prox_solves_its_definition(loss, rng):
    z = rng.normal(size=12) * 2
    y = rng.normal(size=12) if isinstance(loss, Square) else np.sign(rng.normal(size=12))
    w = np.r_[0.0, rng.uniform(0.1, 4, size=11)]
    step = 0.7
    p = WeightedLoss(loss, w).prox(z, y, step)
    for i in range(12):
        ref = minimize_scalar(lambda v: step * w[i] * loss.value(np.array([v]), y[i:i + 1])[0]
                              + 0.5 * (v - z[i]) ** 2, bracket=(z[i] - 5, z[i] + 5),
                              options={"xtol": 1e-12}).x
        assert abs(p[i] - ref) < 1e-6


def test_weighted_loss_conjugate_is_fenchel_young_and_broadcasts(rng):
    # conjugate_at_grad = m g - value with g the weighted gradient (the term
    # of FGM's dual bound), also for margin matrices (one column per output)
    M = rng.normal(size=(30, 3))
    Y = np.sign(rng.normal(size=(30, 3)))
    w = rng.uniform(0, 2, size=30)
    wl = WeightedLoss(Logistic(), w)
    np.testing.assert_allclose(wl.conjugate_at_grad(M, Y),
                               M * wl.grad_margin(M, Y) - wl.value(M, Y), atol=1e-12)
    # multiclass losses return one value per sample
    yi = rng.integers(0, 3, size=30)
    mh = WeightedLoss(MulticlassHinge(), w)
    np.testing.assert_allclose(mh.value(M, yi), w * MulticlassHinge().value(M, yi))
    np.testing.assert_allclose(mh.grad_margin(M, yi), w[:, None] * MulticlassHinge().grad_margin(M, yi))
    # optional methods exist exactly when the loss has them
    assert not hasattr(WeightedLoss(Hinge(), w), "prox")
    assert hasattr(WeightedLoss(Logistic(), w), "prox")


def test_sample_weight_validation():
    with pytest.raises(ValueError, match="[Nn]egative"):
        fit_sample_weight(np.array([1.0, -1.0, 2.0]), 3)
    with pytest.raises(ValueError, match="NaN|infinity"):
        fit_sample_weight(np.array([1.0, np.nan, 2.0]), 3)
    with pytest.raises(ValueError, match="shape|samples"):
        fit_sample_weight(np.ones(4), 3)
    with pytest.raises(ValueError, match="non-zero"):
        fit_sample_weight(np.zeros(3), 3)
    with pytest.raises(ValueError, match="zero weight"):
        fit_sample_weight([1, 1, 0], 3, np.array([0, 0, 1]), {0: 0.0, 1: 1.0})
    assert fit_sample_weight(None, 3) is None
    y = np.array([0, 0, 0, 1])
    np.testing.assert_allclose(fit_sample_weight(None, 4, y, "balanced"),
                               [4 / 6, 4 / 6, 4 / 6, 2.0])
    np.testing.assert_allclose(fit_sample_weight([1, 2, 1, 1], 4, y, {1: 3.0}),
                               [1, 2, 1, 3])
    X, yy = make_blobs(30, random_state=0)
    with pytest.raises(ValueError, match="[Nn]egative"):
        FGMClassifier().fit(X, yy, sample_weight=-np.ones(30))


# --------------------------------------------------------------- FGM's bounds
@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
def test_fgm_weighted_bounds_meet_and_stay_valid(loss, rng):
    # Theorem 2 with weights: the lower bound uses the conjugate of w_i l,
    # w_i l*(s / w_i); it stays below the weighted optimum and meets it.
    X = rng.normal(size=(150, 60))
    y = np.sign(X[:, :4].sum(1) + 0.5 * rng.normal(size=150))
    w = rng.uniform(0, 3, size=150)
    w[:10] = 0.0
    # C=1: the bound is the same at any C, and at C=10 the APG master (more
    # columns than rows) needs about 2,000 iterations to close the gap to 1e-4
    clf = FGMClassifier(B=4, C=1.0, loss=loss, tol=None, max_iter=100, inner_tol=1e-12,
                        inner_max_iter=200).fit(X, y, sample_weight=w)
    h = clf.history_
    upper, lower = h["objective"][-1], h["final_lower_bound"][0]
    assert clf.converged_
    assert lower <= upper * (1 + 1e-9) and (upper - lower) / upper < 1e-4
    assert np.all(h["lower_bound"] <= upper * (1 + 1e-9))


# ------------------------------------------- integer weights == repeated rows
def _data(rng, n=40, d=6, classes=2):
    X = rng.normal(size=(n, d))
    score = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n)
    if classes == 2:
        y = (score > 0).astype(int)
    else:
        y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    return X, y


def _outputs(est, X, **kw):
    f = getattr(est, "decision_function", None) or est.predict
    return np.asarray(f(X, **kw))


@pytest.mark.parametrize("est", [
    FGMClassifier(B=3, max_iter=4),
    FGMClassifier(B=3, loss="logistic", max_iter=4, refit=True),
    # a fixed C: C="auto" cross-validates, and a repeated row may fall in
    # two folds where its weighted copy falls in one
    FGMRegressor(B=3, max_iter=4, C=1.0),
], ids=["fgm-sqhinge", "fgm-logistic-refit", "fgm-reg"])
def test_fgm_integer_weights_are_repeated_rows_exactly(est, rng):
    X, y = _data(rng, classes=3 if est.__class__ is FGMClassifier else 2)
    if isinstance(est, FGMRegressor):
        y = X[:, 0] + rng.normal(size=len(y))
    k = rng.integers(0, 4, size=len(y))
    a = clone(est).fit(X, y, sample_weight=k)
    b = clone(est).fit(np.repeat(X, k, 0), np.repeat(y, k))
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(_outputs(a, X), _outputs(b, X), rtol=1e-7, atol=1e-9)


# GrFL's sample weights are relative (rescaled to mean one over the rows with a
# positive weight, as glmnet does), so scikit-learn's repeated-rows check holds
# at lambda_p * sqrt(mean weight), not at the same lambda_p:
# tests/test_grfl_settings.py checks that relation and the scale invariance.


def test_slkl_integer_weights_are_repeated_rows_to_solver_tolerance(rng):
    X, _ = _data(rng, n=50)
    y = X[:, 0] + 0.3 * rng.normal(size=50)
    k = rng.integers(0, 4, size=50)
    # a fixed nu: nu="auto" chooses by leave-one-out error, and leaving out one
    # of k repeated rows is not leaving out a row of weight k; one width: with
    # several, widths are dealt to the sampled positions, and a row repeated k
    # times (k candidates) would get other widths than its one weighted copy
    est = LowRankKernelRegressor(random_state=0, tol=1e-10, max_iter=500, nu=0.01,
                                 gamma_factors=(1.0,))
    a = clone(est).fit(X, y, sample_weight=k)
    b = clone(est).fit(np.repeat(X, k, 0), np.repeat(y, k))
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-3)


def test_multitask_integer_weights_are_repeated_rows(rng):
    X, y = _data(rng, n=60)
    t = np.repeat([0, 1, 2], 20)
    k = rng.integers(1, 4, size=60)
    for est, target in [(MultitaskMKLRegressor(kernels=_KERN, max_iter=10), X[:, 0]),
                        (MultitaskMKLClassifier(kernels=_KERN, max_iter=10), y)]:
        a = clone(est).fit(X, target, task_index=t, sample_weight=k)
        b = clone(est).fit(np.repeat(X, k, 0), np.repeat(target, k),
                           task_index=np.repeat(t, k))
        np.testing.assert_allclose(_outputs(a, X, task_index=t),
                                   _outputs(b, X, task_index=t), rtol=1e-4, atol=1e-5)


def test_obscure_weights_are_repeated_rows_in_expectation(rng):
    # the objective is exact (weighted mean = mean over repeated rows) and the
    # epochs visit samples in proportion to their weight (these probabilities)
    from kernlearn.methods.obscure import _objective, _sampling

    n, F = 12, 2
    G = rng.normal(size=(1, F, n))
    N = np.abs(rng.normal(size=F)) + 1
    y = np.sign(rng.normal(size=n))
    k = rng.integers(0, 4, size=n)
    k[0] = 2
    weighted = _objective(G, N, 1.0, y, Hinge(), k, 1e-3, 3.0)
    repeated = _objective(np.repeat(G, k, axis=2), N, 1.0, np.repeat(y, k), Hinge(),
                          None, 1e-3, 3.0)
    np.testing.assert_allclose(weighted, repeated)
    rows, prob = _sampling(k, n)
    assert set(rows) == set(np.flatnonzero(k > 0))
    draws = np.random.default_rng(0).choice(n, size=200_000, p=prob)
    freq = np.bincount(draws, minlength=n) / draws.size
    np.testing.assert_allclose(freq, k / k.sum(), atol=5e-3)


# ---------------------------------------------- zero weight == removed row
@pytest.mark.parametrize("est", [
    FGMClassifier(B=3, max_iter=4),
    # ADMM iterates differ with the extra (zero-weight) rows: compare at 1e-9
    InfiniteFeatureClassifier(max_features=4, n_candidates=10, inner_tol=1e-9,
                              inner_max_iter=2000, random_state=0),
    PNormMKLClassifier(kernels=_KERN, max_iter=10, random_state=0),
    LowRankKernelClassifier(random_state=0),
    MultitaskMKLClassifier(kernels=_KERN, max_iter=5),
    FGMRegressor(B=3, max_iter=4),
    InfiniteFeatureRegressor(max_features=4, n_candidates=10, inner_tol=1e-9,
                             inner_max_iter=2000, random_state=0),
    LowRankKernelRegressor(random_state=0),
    MultitaskMKLRegressor(kernels=_KERN, max_iter=5),
], ids=["fgm", "grfl", "obscure", "slkl", "mtmkl",
        "fgm-reg", "grfl-reg", "slkl-reg", "mtmkl-reg"])
def test_zero_weight_is_a_removed_row(est, rng):
    X, y = _data(rng, n=50)
    if not hasattr(est, "classes_") and "Classifier" not in type(est).__name__:
        y = X[:, 0] + 0.3 * rng.normal(size=50)
    w = np.ones(50)
    w[[2, 17, 33]] = 0.0
    a = clone(est).fit(X, y, sample_weight=w)
    b = clone(est).fit(X[w > 0], y[w > 0])
    np.testing.assert_allclose(_outputs(a, X), _outputs(b, X), rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------- class weights
@pytest.mark.parametrize("est", [
    FGMClassifier(B=3, max_iter=5),
    InfiniteFeatureClassifier(max_features=10, n_candidates=20, random_state=0),
    PNormMKLClassifier(kernels=_KERN, max_iter=20, fit_intercept=True, random_state=0),
    LowRankKernelClassifier(random_state=0),
    MultitaskMKLClassifier(kernels=_KERN, max_iter=5),
], ids=["fgm", "grfl", "obscure", "slkl", "mtmkl"])
def test_balanced_class_weight_raises_minority_recall(est):
    X, y = make_classification(300, 6, n_informative=3, weights=[0.9, 0.1], flip_y=0.05,
                               class_sep=0.5, random_state=1)
    plain = clone(est).fit(X, y)
    bal = clone(est).set_params(class_weight="balanced").fit(X, y)
    r_plain = recall_score(y, plain.predict(X))
    r_bal = recall_score(y, bal.predict(X))
    assert r_bal > r_plain + 0.1, (r_plain, r_bal)


def test_balanced_equals_the_manual_class_weights():
    X, y = make_classification(120, 8, weights=[0.8, 0.2], random_state=0)
    y = np.where(y == 1, 5, -3)  # non-contiguous labels
    cw = {5: 120 / (2 * np.sum(y == 5)), -3: 120 / (2 * np.sum(y == -3))}
    a = FGMClassifier(B=3, class_weight="balanced").fit(X, y)
    b = FGMClassifier(B=3, class_weight=cw).fit(X, y)
    c = FGMClassifier(B=3).fit(X, y, sample_weight=np.vectorize(cw.get)(y))
    np.testing.assert_allclose(a.coef_, b.coef_)
    np.testing.assert_allclose(a.coef_, c.coef_)


# -------------------------------------------------------------- probabilities
def test_platt_sigmoid_recovers_a_logistic_model(rng):
    f = rng.normal(size=20000) * 3
    A, B = -1.7, 0.4
    t = rng.random(20000) < expit(-(A * f + B))
    A_hat, B_hat = platt_sigmoid(f, t)
    assert abs(A_hat - A) < 0.1 and abs(B_hat - B) < 0.1
    # weights act as repeated samples in the likelihood; Platt's pseudo-counts
    # are taken at the weights' scale (mean one over the rows of positive
    # weight, tests/test_user_audit51.py), so integer weights agree with
    # repeated rows up to the pseudo-counts' share (0.06 here), and zero
    # weights are removed rows exactly
    k = rng.integers(0, 3, size=200)
    a = platt_sigmoid(f[:200], t[:200], k)
    b = platt_sigmoid(np.repeat(f[:200], k), np.repeat(t[:200], k))
    np.testing.assert_allclose(a, b, rtol=0.1)
    m = k > 0
    np.testing.assert_allclose(platt_sigmoid(f[:200], t[:200], 1.0 * m),
                               platt_sigmoid(f[:200][m], t[:200][m]), atol=1e-5)


_PROBA = [
    FGMClassifier(B=3, probability=True),
    InfiniteFeatureClassifier(max_features=8, n_candidates=20, random_state=0,
                              probability=True),
    PNormMKLClassifier(kernels=_KERN, max_iter=20, random_state=0, probability=True),
    LowRankKernelClassifier(random_state=0, probability=True),
]


@pytest.mark.parametrize("est", _PROBA, ids=["fgm", "grfl", "obscure", "slkl"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_platt_probabilities_are_calibrated_and_consistent(est, n_classes, rng):
    X, y = make_blobs(240, 4, centers=n_classes, cluster_std=3.0, random_state=3)
    Xt, yt = X[:160], y[:160]
    Xv, yv = X[160:], y[160:]
    clf = clone(est).fit(Xt, yt)
    assert not hasattr(clone(est).set_params(probability=False), "predict_proba")
    P = clf.predict_proba(Xv)
    assert P.shape == (80, n_classes)
    np.testing.assert_allclose(P.sum(1), 1.0)
    prior = np.bincount(yt, minlength=n_classes) / len(yt)
    assert log_loss(yv, P) < log_loss(yv, np.tile(prior, (80, 1))) - 0.2
    # as for SVC(probability=True), the arg max may differ on a few points
    agree = np.mean(clf.classes_[P.argmax(1)] == clf.predict(Xv))
    assert agree >= 0.9


def test_multitask_probabilities(rng):
    X, y = _data(rng, n=90)
    t = np.repeat([0, 1, 2], 30)
    clf = MultitaskMKLClassifier(kernels=_KERN, max_iter=5, probability=True).fit(
        X, y, task_index=t)
    P = clf.predict_proba(X, task_index=t)
    np.testing.assert_allclose(P.sum(1), 1.0)
    assert log_loss(y, P) < log_loss(y, np.full((90, 2), 0.5)) - 0.2


def test_logistic_probabilities_stay_native():
    X, y = make_blobs(100, 3, centers=2, random_state=0)
    clf = FGMClassifier(B=3, loss="logistic").fit(X, y)
    assert clf.platt_ is None
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], expit(clf.decision_function(X)))
    assert not hasattr(FGMClassifier(), "predict_proba")


def test_precomputed_obscure_probabilities(rng):
    X, y = _data(rng, n=60)
    grams = [linear_kernel(X, X), rbf_kernel(X, X, gamma=0.5)]
    clf = PNormMKLClassifier(kernels="precomputed", max_iter=10, random_state=0,
                             probability=True).fit(grams, y)
    P = clf.predict_proba(grams)
    assert P.shape == (60, 2) and np.all(np.isfinite(P))


# ------------------------------------------------- scikit-learn meta-estimators
def test_adaboost_soft_voting_and_log_loss_scoring():
    X, y = make_classification(200, 10, n_informative=4, random_state=0)
    weak = FGMClassifier(B=1, max_iter=1)
    ada = AdaBoostClassifier(weak, n_estimators=5, random_state=0).fit(X, y)
    assert ada.score(X, y) > clone(weak).fit(X, y).score(X, y)
    # the boosting weights reached the base estimators: they select differently
    sel = [tuple(e.selected_features_) for e in ada.estimators_]
    assert len(set(sel)) > 1
    vote = VotingClassifier([
        ("fgm", FGMClassifier(B=3, probability=True)),
        ("obscure", PNormMKLClassifier(kernels=_KERN, max_iter=10, random_state=0,
                                       probability=True)),
    ], voting="soft").fit(X, y)
    assert vote.predict_proba(X).shape == (200, 2) and vote.score(X, y) > 0.8
    s = cross_val_score(FGMClassifier(B=3, probability=True), X, y, cv=3,
                        scoring="neg_log_loss")
    assert np.all(np.isfinite(s)) and s.mean() > -np.log(2)
    # scikit-learn's own calibration wraps any of our decision functions
    cal = CalibratedClassifierCV(FGMClassifier(B=3), ensemble=False).fit(X, y)
    assert log_loss(y, cal.predict_proba(X)) < np.log(2) - 0.1


def test_obscure_with_a_bias_passes_sklearn_class_weight_check():
    # the conformance instance without a bias is an expected failure of this
    # check (a narrow RBF scores far test points about 0 whatever the weights);
    # with the bias kernel the extreme class weights make everything class 0
    from sklearn.utils.estimator_checks import check_class_weight_classifiers

    est = PNormMKLClassifier(kernels=[(rbf_kernel, {"gamma": 0.5}), linear_kernel],
                             max_iter=5, max_iter_online=2, random_state=0,
                             fit_intercept=True)
    check_class_weight_classifiers("PNormMKLClassifier", est)
