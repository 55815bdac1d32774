"""A fifty-first user's audit: sample and class weights mean what they say.

A demanding data scientist checked, for every estimator taking
``sample_weight`` or ``class_weight`` (FGM, p-norm MKL, GrFL, low-rank,
multitask MKL and its ``*CV``), that weights mean what scikit-learn users
expect: integer weights are repeated rows, a zero weight a removed row (the
standardisation, the widths, the internal folds and subsamples included), a
common factor of the weights acts as documented, and bad weights are refused
in words.

What was wrong (each test below failed before its fix):

- Platt's sigmoids (``probability=True``) took their pseudo-counts
  :math:`(N_+ + 1)/(N_+ + 2)` and :math:`1/(N_- + 2)` from the weights' sums:
  weights normalised to sum to one (survey or importance weights) made the
  targets 0.6 and 0.4, and every probability fell within about 0.36-0.61,
  also for ``LowRankKernelClassifier``, whose decision function such weights
  do not change (documented).  The pseudo-counts are now taken at the
  weights' scale (mean one over the rows of positive weight), as
  scikit-learn's sigmoid calibration counts rows; unit weights are unchanged.
- GrFL's pricing subsample (``pricing_subsample``, and ``"auto"`` above
  4,000 rows, 40,000 for the regressor) was drawn among all rows and its
  threshold counted all rows: a zero weight was not a removed row (other
  pricing rows, other features; 0.8-0.9 away from the fit without the rows).
- FGM chose its master (Newton, or APG on more columns than rows) and
  APG's first Lipschitz estimate by all rows: past the rows of positive
  weight the fit with zero weights took Newton where the fit without those
  rows took APG (1e-3 to 0.2 away).  They now count the rows of positive
  weight (the Hessian's rank is at most that); repeated rows, which
  outnumber them, can still take another master there (documented).
- A binary fit whose rows of positive weight (``sample_weight`` times
  ``class_weight``) all hold one class was fitted by FGM, GrFL, low-rank and
  p-norm MKL (the latter predicting the class of weight zero wherever its
  linear kernel's sign put it, against scikit-learn's contract); refused now,
  as by the multitask classifiers and ``SVC``, naming the class left.
- ``kernlearn fit -p 'class_weight={"1": 5, "1.0": 2}'`` (two keys naming
  one class once read in the labels' type) fitted with the last weight, the
  other dropped without a word; now refused naming both keys (exit 2).
- ``MultitaskMKLClassifierCV.fit`` said the weights, "multiplied by
  ``class_weight``", enter "every fit and the validation scores": the scores
  are weighted by ``sample_weight`` alone, as ``GridSearchCV``'s (now said).
- The guide did not say what a common factor of the weights does; now it
  does, per estimator, next to scikit-learn's conventions (pinned below), and
  ``LowRankKernel*``'s ``nu`` says that a single value (a sequence of one too)
  is taken at the weights as given (``nu / c**2``), a path at mean one.

Checked and clean (pinned where not already): integer weights equal repeated
rows at fixed hyperparameters (FGM and its families, GrFL at a numeric level
and budget, the multitask estimators, the low-rank ones to the solver's
tolerance); zero weights equal removed rows at the defaults, with
``probability=True``, precomputed kernels, the ``*CV`` folds, ``gamma="scale"``
and ``"mean"``, FGM's families, multiclass and ``score(sample_weight=)``;
``class_weight`` dicts (string labels, labels left out, multiclass) and
``"balanced"`` with ``sample_weight`` equal the matching ``sample_weight``;
negative, NaN, infinite, text, complex, 2-D, wrong-length and all-zero
weights, and bad class weights, are refused naming the problem; weights as a
list, a pandas Series (positional, as scikit-learn), float32 and on sparse
input give the model of the float64 array; ``Pipeline`` routing, and
``GridSearchCV`` (its scores weighted as scikit-learn 1.9's, with metadata
routing too) agree with the folds by hand; the Dask and memory-mapped FGM
fits with weights equal the in-memory ones (``tests/test_scale_out.py``);
the command line's ``class_weight`` (keys in the labels' type) is the
estimator's, in and out of core; it has no ``sample_weight`` option.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

import kernlearn
from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    MultitaskMKLClassifier,
    MultitaskMKLClassifierCV,
    MultitaskMKLRegressor,
    PNormMKLClassifier,
)

_KERN = ["linear", ("rbf", {"gamma": "scale"})]

# (light Dask workers in the test process: the weighted fits below are small)
DASK_CLUSTER = {"n_workers": 1, "processes": False}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.normal(size=n)
    return X, (score > 0).astype(int), score


def _out(est, X, **kw):
    f = getattr(est, "decision_function", None) or est.predict
    return np.asarray(f(X, **kw))


# -- Platt's pseudo-counts at the weights' scale ----------------------------------------

def test_platt_probabilities_do_not_move_with_a_common_factor_of_the_weights():
    from sklearn.datasets import make_classification

    X, y = make_classification(160, 5, n_informative=3, flip_y=0.05, random_state=0)
    w = np.random.default_rng(0).uniform(0.5, 1.5, 160)
    est = LowRankKernelClassifier(random_state=0, probability=True)
    a = clone(est).fit(X, y, sample_weight=w)
    b = clone(est).fit(X, y, sample_weight=w / w.sum())  # (weights of sum one)
    # the decision function is the same (a common factor does not change the model)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-7)
    # the old code: every probability within 0.36-0.61
    assert np.ptp(a.predict_proba(X)[:, 1]) > 0.9
    np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), atol=1e-6)


def test_platt_sigmoid_pseudo_counts_count_rows():
    from scipy.special import expit

    from kernlearn.estimators._platt import platt_sigmoid

    rng = np.random.default_rng(1)
    f = 3 * rng.normal(size=300)
    t = rng.random(300) < expit(1.5 * f)
    w = rng.uniform(0.0, 3.0, 300)
    a = platt_sigmoid(f, t, w)
    for c in (1e-4, 1 / w.sum(), 1e3):  # (the old code: A -0.11 at c = 1e-4)
        np.testing.assert_allclose(platt_sigmoid(f, t, c * w), a, rtol=1e-5)
    # unit weights are no weights, bit for bit (an unweighted model is unchanged)
    assert platt_sigmoid(f, t, np.ones(300)) == platt_sigmoid(f, t)


# -- GrFL's pricing rows among the rows of positive weight ------------------------------

@pytest.mark.parametrize("cls", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_grfl_pricing_subsample_leaves_zero_weight_rows_out(cls):
    X, y, s = _data(120, seed=1)
    y = y if cls is InfiniteFeatureClassifier else s
    w = np.ones(120)
    w[::7] = 0.0
    est = cls(max_features=4, n_candidates=20, pricing_subsample=40, random_state=0)
    a = clone(est).fit(X, y, sample_weight=w)
    b = clone(est).fit(X[w > 0], y[w > 0])
    # the old code: pricing rows drawn among all 120 rows, 0.8-0.9 away
    np.testing.assert_allclose(_out(a, X), _out(b, X), atol=1e-9)


@pytest.mark.parametrize("cls", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_grfl_auto_pricing_subsample_counts_rows_of_positive_weight(cls, monkeypatch):
    from kernlearn.methods import _grfl_select, grfl

    # (the thresholds made small: "auto" subsamples above 2 x 40 rows)
    monkeypatch.setattr(grfl, "AUTO_PRICING_ROWS", 40)
    monkeypatch.setattr(_grfl_select, "REGRESSOR_PRICING_ROWS", 40)
    X, y, s = _data(120, seed=2)
    y = y if cls is InfiniteFeatureClassifier else s
    w = np.ones(120)
    w[:45] = 0.0  # 75 rows of positive weight: no subsample without the others
    est = cls(max_features=4, n_candidates=20, random_state=0, n_paths=1)
    a = clone(est).fit(X, y, sample_weight=w)
    b = clone(est).fit(X[w > 0], y[w > 0])
    np.testing.assert_allclose(_out(a, X), _out(b, X), atol=1e-9)


# -- a common factor of the weights, as the guide says ----------------------------------

def _tasks(n):
    return {"task_index": np.arange(n) % 2}


_C = 10.0
_SCALE_CASES = {
    "fgm": (FGMClassifier(B=2, C=1.0), {"C": _C}, "clf", {}),
    "fgm-reg": (FGMRegressor(B=2, C=1.0), {"C": _C}, "reg", {}),
    "pnorm": (PNormMKLClassifier(kernels=_KERN, C=1.0, random_state=0), {"C": _C}, "clf", {}),
    "mtmkl": (MultitaskMKLClassifier(kernels=_KERN, C=1.0), {"C": _C}, "clf", _tasks(40)),
    "mtmkl-reg": (MultitaskMKLRegressor(kernels=_KERN, C=1.0), {"C": _C}, "reg", _tasks(40)),
    "grfl": (InfiniteFeatureClassifier(max_features=3, n_candidates=10, lambda_p=0.1,
                                       inner_tol=1e-9, random_state=0),
             {"lambda_p": 0.1 / np.sqrt(_C)}, "clf", {}),
    "lowrank-nu": (LowRankKernelRegressor(nu=0.01, random_state=0, tol=1e-10, max_iter=1000),
                   {"nu": 0.01 / _C**2}, "reg", {}),
    "lowrank-nu-one": (LowRankKernelClassifier(nu=[0.01], random_state=0, tol=1e-10,
                                               max_iter=1000),
                       {"nu": [0.01 / _C**2]}, "clf", {}),
}


@pytest.mark.parametrize("case", list(_SCALE_CASES))
def test_a_common_factor_of_the_weights_acts_as_the_guide_says(case):
    est, params, kind, kw = _SCALE_CASES[case]
    X, y, s = _data()
    y = y if kind == "clf" else s
    w = np.random.default_rng(3).uniform(0.2, 3.0, 40)
    w[:3] = 0.0
    scaled = _out(clone(est).fit(X, y, sample_weight=_C * w, **kw), X, **kw)
    moved = _out(clone(est).set_params(**params).fit(X, y, sample_weight=w, **kw), X, **kw)
    np.testing.assert_allclose(scaled, moved, atol=1e-7)
    # (and not the model of w: the factor matters)
    assert np.abs(scaled - _out(clone(est).fit(X, y, sample_weight=w, **kw), X, **kw)).max() > 0.05


def test_a_low_rank_nu_path_ignores_a_common_factor_of_the_weights():
    X, _, s = _data()
    w = np.random.default_rng(3).uniform(0.2, 3.0, 40)
    for nu in ("auto", [0.1, 0.01]):
        est = LowRankKernelRegressor(nu=nu, random_state=0)
        np.testing.assert_allclose(clone(est).fit(X, s, sample_weight=1e-3 * w).predict(X),
                                   clone(est).fit(X, s, sample_weight=w).predict(X),
                                   atol=1e-9)


def test_the_multitask_cv_grid_moves_against_a_common_factor():
    X, y, _ = _data()
    w = np.random.default_rng(3).uniform(0.5, 1.5, 40)
    est = MultitaskMKLClassifierCV(kernels=_KERN, Cs=(0.1, 1.0, 10.0, 100.0), cv=3)
    chosen = [clone(est).fit(X, y, sample_weight=c * w, **_tasks(40)).C_ for c in (1.0, 10.0)]
    assert chosen[1] == pytest.approx(chosen[0] / 10)


def test_the_guide_says_what_a_common_factor_does():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    text = " ".join((root / "doc" / "weights-and-probabilities.md").read_text().split())
    for said in ("## A common factor of the weights",
                 "| `FGMClassifier`, `FGMRegressor(C=number)` | `C * c` |",
                 "| `PNormMKLClassifier` | `C * c`",
                 "| `MultitaskMKLClassifier`, `MultitaskMKLRegressor` | `C * c`",
                 "`lambda_p / sqrt(c)` at a numeric `lambda_p`",
                 "`nu / c**2` at a single `nu`",
                 "`C_` moves by `1 / c` when the grid holds it",
                 "Platt's sigmoids (`probability=True`) add no dependence on `c`"):
        assert said in text, said
    doc = " ".join(LowRankKernelRegressor.__doc__.split())
    assert "weights ``c * w`` give the model of ``w`` at ``nu / c**2``" in doc


# -- checked clean: weights in other containers, sparse input ---------------------------

_CONTAINER_CASES = {
    "fgm": (FGMClassifier(B=2, max_iter=3), "clf", {}),
    "fgm-reg": (FGMRegressor(B=2, max_iter=3), "reg", {}),
    "pnorm": (PNormMKLClassifier(kernels=_KERN, max_iter=5, random_state=0), "clf", {}),
    "grfl": (InfiniteFeatureClassifier(max_features=3, n_candidates=5, random_state=0),
             "clf", {}),
    "grfl-reg": (InfiniteFeatureRegressor(max_features=3, n_candidates=5, random_state=0),
                 "reg", {}),
    "lowrank": (LowRankKernelClassifier(random_state=0), "clf", {}),
    "lowrank-reg": (LowRankKernelRegressor(random_state=0), "reg", {}),
    "mtmkl": (MultitaskMKLClassifier(kernels=_KERN), "clf", _tasks(40)),
    "mtmkl-reg": (MultitaskMKLRegressor(kernels=_KERN), "reg", _tasks(40)),
}


@pytest.mark.parametrize("case", list(_CONTAINER_CASES))
def test_weights_as_a_series_list_or_float32_and_on_sparse_input(case):
    import scipy.sparse as sp

    pd = pytest.importorskip("pandas")
    est, kind, kw = _CONTAINER_CASES[case]
    X, y, s = _data()
    y = y if kind == "clf" else s
    w = np.random.default_rng(4).uniform(0.2, 3.0, 40)
    w[[5, 11]] = 0.0
    ref = _out(clone(est).fit(X, y, sample_weight=w, **kw), X, **kw)
    # a Series is read by position (its index reversed here), as scikit-learn does
    for given in (pd.Series(w, index=np.arange(40)[::-1]), list(w)):
        np.testing.assert_array_equal(
            _out(clone(est).fit(X, y, sample_weight=given, **kw), X, **kw), ref)
    np.testing.assert_allclose(
        _out(clone(est).fit(X, y, sample_weight=w.astype(np.float32), **kw), X, **kw),
        ref, atol=1e-5)
    assert np.abs(ref - _out(clone(est).fit(X, y, **kw), X, **kw)).max() > 1e-3
    if not case.startswith("mtmkl"):  # (the multitask estimators take dense X)
        np.testing.assert_allclose(
            _out(clone(est).fit(sp.csr_matrix(X), y, sample_weight=w, **kw), X, **kw),
            ref, atol=1e-8)


@pytest.mark.parametrize("bad, match", [
    (np.r_[-1.0, np.ones(39)], "negative value"),
    (np.r_[np.nan, np.ones(39)], "missing value"),
    (np.r_[np.inf, np.ones(39)], "infinite value"),
    (np.ones(39), "shape"),
    (np.zeros(40), "non-zero"),
    (np.array(["a"] * 40), "not a number"),
])
@pytest.mark.parametrize("name", ["MultitaskMKLClassifierCV", "MultitaskMKLRegressorCV"])
def test_the_cv_estimators_refuse_bad_weights_in_words(name, bad, match):
    X, y, s = _data()
    est = getattr(kernlearn, name)(kernels=_KERN, Cs=(0.1, 1.0))
    with pytest.raises(ValueError, match=match):
        est.fit(X, y if name.endswith("ClassifierCV") else s, sample_weight=bad, **_tasks(40))


# -- the command line's class_weight ----------------------------------------------------

def _libsvm(tmp_path):
    X, y, _ = _data(60, seed=5)
    labels = np.where(y > 0, 1, -1)
    path = tmp_path / "d.libsvm"
    path.write_text("".join(f"{lab} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(x))
                            + "\n" for x, lab in zip(X, labels)))
    return path, np.loadtxt([" ".join(f"{v:.6f}" for v in x) for x in X]), labels


def test_cli_refuses_a_class_named_twice_in_class_weight(tmp_path, capsys):
    from conftest import one_error, run_cli

    path, _, _ = _libsvm(tmp_path)
    code, _, err = run_cli(["fit", "-q", "-e", "fgm", "-p", "B=2", "-p",
                            'class_weight={"1": 5, "1.0": 2}', "-m", tmp_path / "m.json",
                            path], capsys)
    # the old code: fitted with {1.0: 2}, the weight 5 dropped without a word
    assert code == 2 and one_error(err) and "names class 1.0 twice ('1' and '1.0')" in err
    assert not (tmp_path / "m.json").exists()


def test_cli_class_weight_is_the_estimators_in_and_out_of_core(tmp_path, capsys):
    from conftest import run_cli

    from kernlearn.io import load_model

    path, X, labels = _libsvm(tmp_path)
    ref = FGMClassifier(B=2, class_weight={1: 5.0}).fit(X, labels)
    for extra in ([], ["--out-of-core"]):
        model = tmp_path / f"m{len(extra)}.json"
        code, _, _ = run_cli(["fit", "-q", "-e", "fgm", "-p", "B=2", "-p",
                              'class_weight={"1": 5}', "-m", model, path, *extra], capsys)
        assert code == 0
        got = load_model(model)
        np.testing.assert_allclose(got.decision_function(X), ref.decision_function(X),
                                   atol=1e-9)
    plain = FGMClassifier(B=2).fit(X, labels)
    assert np.abs(plain.decision_function(X) - ref.decision_function(X)).max() > 0.05


# -- FGM's master chosen by the rows of positive weight ---------------------------------

@pytest.mark.parametrize("cls", [FGMClassifier, FGMRegressor])
def test_fgm_zero_weights_do_not_choose_the_master(cls):
    # the active set grows from 5 to 60 columns past the 28 rows of positive
    # weight: the master (Newton, or APG on more columns than rows) was chosen
    # by all 40 rows, Newton where the fit without the rows took APG (1e-3 away)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 60))
    s = X[:, :8].sum(1) + 0.3 * rng.normal(size=40)
    y = (s > 0).astype(int) if cls is FGMClassifier else s
    w = np.ones(40)
    w[:12] = 0.0
    est = cls(B=5, C=10.0 if cls is FGMClassifier else 1.0)
    a = clone(est).fit(X, y, sample_weight=w)
    b = clone(est).fit(X[12:], y[12:])
    np.testing.assert_array_equal(a.history_["master_reason"], b.history_["master_reason"])
    # wide active sets (more columns than the 28 rows) reached: their master is
    # decided by the wide cost estimate (codes 8, 9), on the rows of positive weight
    assert set(a.history_["master_reason"].tolist()) & {8, 9}
    np.testing.assert_allclose(_out(a, X), _out(b, X), atol=1e-9)


def test_multitask_cv_scores_weigh_by_sample_weight_alone():
    # (the docstring said "multiplied by class_weight ... in the validation
    # scores", which read as class-weighted accuracy: the fits take the class
    # weights, the scores the sample weights only, as GridSearchCV's)
    from sklearn.model_selection import StratifiedKFold

    X, y, _ = _data(60, seed=6)
    t = np.arange(60) % 2
    w = np.random.default_rng(6).uniform(0.5, 2.0, 60)
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, 2 * t + y))
    cw = {1: 5.0}
    est = MultitaskMKLClassifierCV(kernels=_KERN, Cs=(0.1, 10.0), cv=splits,
                                   class_weight=cw).fit(X, y, task_index=t, sample_weight=w)
    for i, C in enumerate((0.1, 10.0)):
        plain, classed = [], []
        for tr, te in splits:
            m = MultitaskMKLClassifier(kernels=_KERN, C=C, class_weight=cw).fit(
                X[tr], y[tr], task_index=t[tr], sample_weight=w[tr])
            plain.append(m.score(X[te], y[te], task_index=t[te], sample_weight=w[te]))
            classed.append(m.score(X[te], y[te], task_index=t[te],
                                   sample_weight=w[te] * np.where(y[te] == 1, 5.0, 1.0)))
        np.testing.assert_allclose(
            [est.cv_results_[f"split{k}_test_score"][i] for k in range(3)], plain, rtol=1e-9)
        assert not np.allclose(plain, classed)
    doc = " ".join(MultitaskMKLClassifierCV.fit.__doc__.split())
    assert "their accuracy weighted by ``sample_weight`` alone" in doc


# -- checked clean: out of core, on Dask, through routing -------------------------------

def test_fgm_weights_out_of_core_and_on_dask_equal_in_memory(tmp_path, client):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(7)
    X = rng.normal(size=(240, 12))
    y = X[:, 0] + 0.5 * X[:, 3] + 0.2 * rng.normal(size=240) + 5.0
    labels = (X[:, 1] + 0.3 * rng.normal(size=240) > 0.6).astype(int)  # (imbalanced)
    w = rng.integers(0, 4, 240).astype(float)
    np.save(tmp_path / "X.npy", X)
    mm = np.load(tmp_path / "X.npy", mmap_mode="r")
    dask_X = da.from_array(X, chunks=(70, 12))
    cases = [(FGMRegressor(B=3, C=1.0, max_iter=4, refit=True), y),
             (FGMClassifier(B=3, max_iter=4, loss="logistic", class_weight="balanced"),
              labels)]
    for est, target in cases:
        ref = clone(est).fit(X, target, sample_weight=w)
        assert np.abs(ref.coef_ - clone(est).fit(X, target).coef_).max() > 1e-3
        for data, kw in ((mm, {"memory_budget": "8KB"}), (dask_X, {})):
            got = clone(est).set_params(**kw).fit(data, target, sample_weight=w)
            np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-12)
            np.testing.assert_allclose(got.intercept_, ref.intercept_, atol=1e-12)


def test_weighted_search_over_a_multitask_estimator_with_routing():
    import sklearn
    from sklearn.model_selection import GridSearchCV, KFold

    X, y, _ = _data(60, seed=8)
    t = np.arange(60) % 2
    w = np.random.default_rng(8).uniform(0.2, 3.0, 60)
    w[:4] = 0.0
    with sklearn.config_context(enable_metadata_routing=True):
        est = MultitaskMKLClassifier(kernels=_KERN).set_fit_request(
            sample_weight=True, task_index=True).set_score_request(
            sample_weight=True, task_index=True)
        search = GridSearchCV(est, {"C": [1.0, 10.0]}, cv=KFold(3)).fit(
            X, y, sample_weight=w, task_index=t)
    by_hand = []
    for C in (1.0, 10.0):
        scores = []
        for tr, te in KFold(3).split(X):
            m = MultitaskMKLClassifier(kernels=_KERN, C=C).fit(
                X[tr], y[tr], task_index=t[tr], sample_weight=w[tr])
            scores.append(m.score(X[te], y[te], task_index=t[te], sample_weight=w[te]))
        by_hand.append(np.mean(scores))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], by_hand, rtol=1e-12)
    # (the weights matter: unweighted accuracies differ)
    assert not np.allclose(search.cv_results_["mean_test_score"], [
        np.mean([MultitaskMKLClassifier(kernels=_KERN, C=C).fit(
            X[tr], y[tr], task_index=t[tr]).score(X[te], y[te], task_index=t[te])
            for tr, te in KFold(3).split(X)]) for C in (1.0, 10.0)])


# -- one class of positive weight ------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda cw: FGMClassifier(B=2, class_weight=cw),
    lambda cw: PNormMKLClassifier(kernels=["linear"], random_state=0, class_weight=cw),
    lambda cw: InfiniteFeatureClassifier(max_features=2, n_candidates=5, random_state=0,
                                         class_weight=cw),
    lambda cw: LowRankKernelClassifier(random_state=0, class_weight=cw),
], ids=["fgm", "pnorm", "grfl", "lowrank"])
def test_a_binary_fit_whose_weighted_rows_hold_one_class_is_refused(make):
    # every row of class "b" weighs zero (by sample_weight or class_weight): a
    # fit on one class, which the multitask classifiers and SVC refuse; these
    # fitted it, and PNormMKLClassifier predicted "b" wherever its linear
    # kernel's sign put it (scikit-learn's contract: refuse, or predict only
    # the class left)
    X, y, _ = _data(40)
    labels = np.where(y == 1, "b", "a")
    for cw, sw in ((None, np.where(labels == "b", 0.0, 1.0)), ({"b": 0.0}, None)):
        with pytest.raises(ValueError, match=r"single class of positive weight \('a'\).*"
                                             r"rows all weigh zero"):
            make(cw).fit(X, labels, sample_weight=sw)
    # three classes, one of them weighed out: two are left, fitted as before
    three = np.where(X[:, 2] > 0.8, "c", labels)
    est = make({"c": 0.0}).fit(X, three)
    assert list(est.classes_) == ["a", "b", "c"]
    # (not predicted on the training rows; the Crammer-Singer model without a
    # bias predicted "c" on some, until audit 56 put such a class below the others)
    assert set(est.predict(X)) <= {"a", "b"}
