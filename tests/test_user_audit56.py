"""A fifty-sixth user's audit: options that meet.

Earlier audits looked at each option alone; this user combined them.  For
every public estimator she looped over pairs (and a few triples) of options
and input kinds -- ``standardize`` x ``fit_intercept`` x sparse or dense
input, ``sample_weight`` x multiclass x sparse x ``standardize`` x
``probability`` x ``class_weight`` x ``task_index`` x ``shared``, float32 x
sparse, a class weighed out x ``fit_intercept`` x ``loss`` x ``probability``
-- and checked numerically what the library promises under each
combination: the same predictions on ``X`` and ``a * X + b`` (dense) or
``a * X`` (sparse), ``standardize=False`` on standardised data equal to
``standardize=True`` on the raw data, sparse and dense copies of the same
numbers giving one model, zero weights as removed rows and integer weights
as repeated rows (to the documented tolerance of each solver), and a class
weighed out never predicted.

What was wrong (each test below failed before its fix):

- A class of a multiclass fit whose rows all weigh zero (``class_weight``
  ``{2: 0}`` or ``sample_weight``) stays in ``classes_`` but was predicted
  wherever the model fitted without it happened to give it the largest
  value: ``FGMClassifier(fit_intercept=False)`` on 8 of 80 training rows,
  ``InfiniteFeatureClassifier(fit_intercept=False)`` on 71 of 400 rows away
  from the data, ``PNormMKLClassifier`` (Crammer-Singer, no bias) on a few
  (the open defect audit 51 reported).  With ``loss="logistic"`` and no
  intercept such a class had probabilities up to one half.
  ``LogisticRegression`` keeps the class and gives it (almost) zero;
  ``LinearSVC``'s one-vs-rest predicts it, ``SVC`` refuses the fit.  Now
  every kernlearn classifier keeps it, never predicts it (its decision values
  lie one below the row's lowest other value, so ``predict`` stays the arg
  max of ``decision_function``) and gives it probability 0.
- The same class with ``probability=True`` was refused ("class 2 has none"),
  where the fit without probabilities ran: the Platt folds now hold its rows
  at their weight zero, so they know the class as the model does.

- Settings another option leaves unread changed nothing, without a word, where
  the library names such settings elsewhere (p-norm MKL's ``pegasos``):
  ``refit_C`` with ``refit=False`` (FGM), the multitask ``p`` beside a
  formulation other than ``"mtfl"``, ``q`` beside one other than
  ``"mtsfl"``, ``max_rank`` without MK-MTSFL or shared blocks, ``epsilon``
  beside ``loss="square"``.  An ``UnusedParameterWarning`` names them, once
  per fit (the ``*CV`` searches too).

Checked and clean (some pinned below): ``class_weight={c: w}`` is
``sample_weight`` w on class c's rows for every classifier, dense and sparse,
standardised or not, shared and one-vs-rest; affine (dense) and scale (sparse)
invariance of every estimator under ``standardize=True`` with and without
an intercept (FGM without an intercept scales its columns only, as
documented; the others centre); ``standardize=False`` on centred and scaled
data equals ``standardize=True``; sparse and dense give one model (p-norm MKL,
GrFL, low-rank); float32 sparse input agrees with float64 to 1e-7; pandas
input (sparse columns too) gives the model of the array and refuses
reordered columns; zero weights remove rows exactly for every estimator
under every combination tried (multiclass, sparse, ``standardize=False``,
``probability``, ``class_weight="balanced"``, ``fit_intercept=False``,
``refit``, ``ovr``, ``shared``, ``groups``/``tree``, a family, precomputed
kernels, the ``*CV`` searches, out of core); integer weights equal repeated
rows for FGM under all of them except ``probability=True`` (the Platt folds
split repeated rows apart; now said in the guide, with the multitask
default's ``gamma="mean"`` width, which counts rows once); FGM's
``coef_``/``intercept_`` and GrFL's ``frequencies_``/``phases_`` reproduce
the decision values on the raw inputs under every combination; budgets
(``max_features``) are honoured per class with ``"ovr"`` and shared
otherwise, as documented; ``warm_start`` with a changed setting, scale of
``X`` or weights gives the cold fit; ``set_params`` after a fit changes no
prediction; ``n_jobs=2`` and the loky backend give FGM's one-vs-rest model
bit for bit with weights, class weights, Platt and refits; a pairwise sweep
of options x input kinds (about 3,000 fits) raised only errors naming the
options.

Left as they are, now said in doc/reproducibility.md: with
``standardize=False`` the same numbers sparse and dense give different models
under the default ``gamma="scale"`` (dense: the variance over all entries,
scikit-learn's; sparse: the columns' mean variance, by design, as
``kernlearn.kernels.scale_gamma`` documents): p-norm MKL, GrFL and low-rank
decision values 0.04-0.15 apart on 80 uncentred rows.  Changing either side
would change models (scikit-learn parity dense, a measured accuracy loss
sparse); a numeric width gives one model (pinned).  Also left: a Dask ``y`` is not checked for a class weighed out (not
computed at fit, documented), so such a class can still be predicted there;
a sparse DataFrame given to the multitask estimators got scikit-learn's
"dense data is required" with a matrix's ``.toarray()`` advice (now the
refusal names the estimator and both conversions); ``n_jobs`` beside FGM's shared multiclass model and
``degree``/``coef0``/``gamma`` beside low-rank kernels that do not read them
are ignored silently, as documented and as scikit-learn's ``SVC`` does.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import kernlearn as kl

_rng = np.random.default_rng(56)
X3 = _rng.standard_normal((80, 5))
# three classes by two hyperplanes; class 2 is weighed out below
Y3 = (X3[:, 0] > 0.3).astype(int) + (X3[:, 1] + 0.5 * X3[:, 2] > 0.4).astype(int)
# rows far from the training data (where a model without intercept is at its
# most arbitrary)
FAR = _rng.standard_normal((300, 5)) * 4.0


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


_WEIGHED_OUT = {
    "fgm_no_intercept": lambda **kw: kl.FGMClassifier(B=3, fit_intercept=False, **kw),
    "fgm_ovr_no_intercept": lambda **kw: kl.FGMClassifier(
        B=3, multiclass="ovr", fit_intercept=False, **kw),
    "pnorm": lambda **kw: kl.PNormMKLClassifier(random_state=0, **kw),
    "pnorm_no_standardize": lambda **kw: kl.PNormMKLClassifier(
        random_state=0, standardize=False, **kw),
    "grfl_no_intercept": lambda **kw: kl.InfiniteFeatureClassifier(
        n_candidates=20, random_state=0, fit_intercept=False, **kw),
    "lowrank_ovr_no_intercept": lambda **kw: kl.LowRankKernelClassifier(
        random_state=0, multiclass="ovr", fit_intercept=False, **kw),
}


# -- a class weighed out of a multiclass fit -------------------------------------------
@pytest.mark.parametrize("name", sorted(_WEIGHED_OUT))
def test_a_class_weighed_out_is_never_predicted(name):
    # class_weight={2: 0} (or sample_weight 0 on its rows): fitted on classes 0
    # and 1, and predicted class 2 wherever the model without it gave it the
    # largest value (0 of a model without intercept where the others were
    # negative); LogisticRegression keeps the class and never predicts it
    rows = np.vstack([X3, FAR])
    for est in (_quiet(lambda: _WEIGHED_OUT[name](class_weight={2: 0}).fit(X3, Y3)),
                _quiet(lambda: _WEIGHED_OUT[name]().fit(
                    X3, Y3, sample_weight=np.where(Y3 == 2, 0.0, 1.0)))):
        assert list(est.classes_) == [0, 1, 2]
        pred = est.predict(rows)
        assert not np.any(pred == 2), np.sum(pred == 2)
        # predict stays the arg max of the (finite) decision values
        D = est.decision_function(rows)
        assert np.all(np.isfinite(D))
        assert np.array_equal(est.classes_[np.argmax(D, axis=1)], pred)
        assert np.all(D[:, 2] < np.delete(D, 2, axis=1).min(axis=1))


def test_classes_weighed_out_by_text_label_are_the_ones_kept_out():
    # text labels (sorted: "Alpha" first) and two of four classes weighed out:
    # the classes found by position among the sorted labels, none predicted
    four = np.where(X3[:, 3] > 1.0, 3, Y3)
    labels = np.array(["zeta", "Alpha", "mid", "omega"], dtype=object)[four]
    est = _quiet(lambda: kl.PNormMKLClassifier(random_state=0, class_weight={
        "Alpha": 0, "omega": 0}).fit(X3, labels))
    assert list(est.classes_) == ["Alpha", "mid", "omega", "zeta"]
    pred = est.predict(np.vstack([X3, FAR]))
    assert set(pred) <= {"mid", "zeta"}
    D = est.decision_function(FAR)
    assert np.all(D[:, [0, 2]].max(axis=1) < D[:, [1, 3]].min(axis=1))


@pytest.mark.parametrize("make", [
    lambda **kw: kl.FGMClassifier(B=3, loss="logistic", fit_intercept=False, **kw),
    lambda **kw: kl.InfiniteFeatureClassifier(n_candidates=20, random_state=0,
                                              loss="logistic", fit_intercept=False, **kw),
], ids=["fgm", "grfl"])
def test_logistic_loss_gives_a_class_weighed_out_probability_zero(make):
    # the one-vs-rest sigmoid of a class without rows and without intercept is
    # a half everywhere: up to 0.5 of probability (and predicted on 80 rows)
    est = _quiet(lambda: make(class_weight={2: 0}).fit(X3, Y3))
    rows = np.vstack([X3, FAR])
    P = est.predict_proba(rows)
    assert np.all(P[:, 2] == 0.0)
    assert np.allclose(P.sum(axis=1), 1.0)
    assert np.array_equal(est.classes_[P.argmax(axis=1)], est.predict(rows))
    L = est.predict_log_proba(rows)
    assert np.all(L[:, 2] == -np.inf) and np.allclose(np.exp(L), P)


@pytest.mark.parametrize("make", [
    lambda **kw: kl.FGMClassifier(B=3, **kw),
    lambda **kw: kl.PNormMKLClassifier(random_state=0, **kw),
    lambda **kw: kl.InfiniteFeatureClassifier(n_candidates=20, random_state=0, **kw),
    lambda **kw: kl.LowRankKernelClassifier(random_state=0, **kw),
], ids=["fgm", "pnorm", "grfl", "lowrank"])
def test_probability_true_fits_a_class_weighed_out(make):
    # refused ("class 2 has none") where the same fit without probabilities
    # ran: the Platt folds now hold its rows at weight zero; probability 0
    est = _quiet(lambda: make(probability=True, class_weight={2: 0}).fit(X3, Y3))
    P = est.predict_proba(np.vstack([X3, FAR]))
    assert P.shape == (380, 3) and np.all(P[:, 2] == 0.0)
    assert np.allclose(P.sum(axis=1), 1.0)
    assert np.allclose(np.exp(est.predict_log_proba(np.vstack([X3, FAR]))), P)
    # the same by sample_weight
    sw = np.where(Y3 == 2, 0.0, 1.0)
    P2 = _quiet(lambda: make(probability=True).fit(X3, Y3, sample_weight=sw)
                ).predict_proba(np.vstack([X3, FAR]))
    assert np.allclose(P2, P)


# -- an option another one switches off --------------------------------------------------
_T = np.arange(60) % 2
_XT = _rng.standard_normal((60, 3))
_YR = _XT[:, 0] + 0.5 * _T + 0.1 * _rng.standard_normal(60)
_YC = (_XT[:, 0] + 0.3 * _XT[:, 1] > 0).astype(int)


@pytest.mark.parametrize("make, y, said", [
    (lambda: kl.MultitaskMKLRegressor(q=1.1), _YR, "q=1.1 not used with formulation='mtfl'"),
    (lambda: kl.MultitaskMKLRegressor(formulation="mtsfl", p=3.0), _YR,
     "p=3.0 not used with formulation='mtsfl'"),
    (lambda: kl.MultitaskMKLRegressor(max_rank=5), _YR,
     "max_rank=5 not used with formulation='mtfl' and shared=False"),
    (lambda: kl.MultitaskMKLRegressor(epsilon=0.5), _YR, "epsilon=0.5 not used with loss='square'"),
    (lambda: kl.MultitaskMKLRegressorCV(Cs=(1.0,), epsilon=0.5), _YR,
     "epsilon=0.5 not used with loss='square'"),
    (lambda: kl.MultitaskMKLClassifier(formulation="mkl", max_rank=5), _YC,
     "max_rank=5 not used with formulation='mkl'"),
    (lambda: kl.MultitaskMKLClassifierCV(Cs=(1.0,), cv=3, q=1.2), _YC,
     "q=1.2 not used with formulation='mtfl'"),
], ids=["q_mtfl", "p_mtsfl", "max_rank_mtfl", "epsilon_square", "epsilon_square_cv",
        "max_rank_mkl", "q_mtfl_cv"])
def test_a_multitask_setting_the_formulation_does_not_read_is_named(make, y, said):
    # q=1.1 beside formulation="mtfl" (or p beside "mtsfl", max_rank without
    # MK-MTSFL or shared blocks, epsilon beside the square loss) changed nothing,
    # without a word: the library names such settings (warn_unused) elsewhere
    from kernlearn.estimators._renamed import UnusedParameterWarning

    est = make()
    with pytest.warns(UnusedParameterWarning, match=said) as record:
        est.fit(_XT, y, task_index=_T)
    assert record[0].filename == __file__
    # the same model as without the setting
    plain = type(est)(**{k: v for k, v in est.get_params().items()
                         if k in ("formulation", "Cs", "cv")})
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedParameterWarning)
        plain.fit(_XT, y, task_index=_T)
    assert np.allclose(est.predict(_XT, task_index=_T), plain.predict(_XT, task_index=_T))


@pytest.mark.parametrize("make", [
    lambda **kw: kl.FGMClassifier(B=3, **kw),
    lambda **kw: kl.FGMRegressor(B=3, C=1.0, **kw),
], ids=["classifier", "regressor"])
def test_refit_C_without_refit_is_named(make):
    # refit_C=5 with refit=False (the default) changed nothing, without a word
    from kernlearn.estimators._renamed import UnusedParameterWarning

    y = _YC if make().__class__.__name__.endswith("Classifier") else _YR
    with pytest.warns(UnusedParameterWarning, match="refit_C=5.0 not used with refit=False"):
        make(refit_C=5.0).fit(_XT, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedParameterWarning)
        make(refit_C=5.0, refit=True).fit(_XT, y)  # read there: no warning


# -- checked clean: invariants under combinations (cheap pins) -----------------------------
_A = np.array([0.5, 2.0, 3.0, 1.5, 0.8])
_B = np.array([4.0, -3.0, 1.0, 0.0, 7.0])
_XS = np.where(np.abs(X3) > 0.5, X3, 0.0)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("make", [
    lambda **kw: kl.FGMClassifier(B=3, **kw),
    lambda **kw: kl.InfiniteFeatureClassifier(n_candidates=20, random_state=0, **kw),
    lambda **kw: kl.LowRankKernelClassifier(random_state=0, **kw),
], ids=["fgm", "grfl", "lowrank"])
def test_standardize_meets_fit_intercept_and_sparse_input(make, fit_intercept):
    # the units of X do not matter: a * X + b dense (a * X alone without an
    # intercept for FGM, which then scales its columns only, as documented),
    # a * X sparse; standardize=False on the data standardised as the model
    # does gives the same model
    fgm = make().__class__.__name__.startswith("FGM")
    centre = fit_intercept or not fgm
    b = _B if centre else 0.0
    base = _quiet(lambda: make(fit_intercept=fit_intercept).fit(X3, Y3))
    moved = _quiet(lambda: make(fit_intercept=fit_intercept).fit(X3 * _A + b, Y3))
    assert np.allclose(moved.decision_function(X3 * _A + b), base.decision_function(X3),
                       atol=1e-9)
    Z = ((X3 - X3.mean(axis=0)) if centre else X3) / X3.std(axis=0)
    pre = _quiet(lambda: make(fit_intercept=fit_intercept, standardize=False).fit(Z, Y3))
    assert np.allclose(pre.decision_function(Z), base.decision_function(X3), atol=1e-9)
    S = sp.csr_matrix(_XS)
    sparse = _quiet(lambda: make(fit_intercept=fit_intercept).fit(S, Y3))
    scaled = _quiet(lambda: make(fit_intercept=fit_intercept).fit(S @ sp.diags(_A), Y3))
    assert np.allclose(scaled.decision_function(S @ sp.diags(_A)),
                       sparse.decision_function(S), atol=1e-9)
    f32 = _quiet(lambda: make(fit_intercept=fit_intercept).fit(S.astype(np.float32), Y3))
    assert np.allclose(f32.decision_function(S), sparse.decision_function(S), atol=1e-5)


@pytest.mark.parametrize("make, kind", [
    (lambda: kl.FGMClassifier(B=3, class_weight="balanced"), "sparse"),
    (lambda: kl.FGMClassifier(B=3, multiclass="ovr", fit_intercept=False), "dense"),
    (lambda: kl.LowRankKernelClassifier(random_state=0, probability=True), "sparse"),
    (lambda: kl.InfiniteFeatureClassifier(n_candidates=20, random_state=0,
                                          class_weight="balanced"), "sparse"),
    (lambda: kl.PNormMKLClassifier(random_state=0, probability=True), "dense"),
], ids=["fgm_balanced_sparse", "fgm_ovr_no_intercept", "lowrank_platt_sparse",
        "grfl_balanced_sparse", "pnorm_platt"])
def test_zero_weights_remove_rows_under_combined_options(make, kind):
    # zero weights are removed rows with multiclass labels, sparse input,
    # class_weight="balanced" and Platt probabilities at once
    w = np.tile([1.0, 0.0, 2.0, 1.0], 20)
    X = sp.csr_matrix(_XS) if kind == "sparse" else X3
    keep = w > 0
    a = _quiet(lambda: make().fit(X, Y3, sample_weight=w))
    b = _quiet(lambda: make().fit(X[keep], Y3[keep], sample_weight=w[keep]))
    out = "predict_proba" if hasattr(a, "predict_proba") else "decision_function"
    assert np.allclose(getattr(a, out)(X), getattr(b, out)(X), atol=1e-9)


def test_multitask_zero_weights_remove_rows_with_class_weight_and_shared_blocks():
    # task_index x sample_weight x class_weight x shared x standardize=False
    w = np.tile([1.0, 0.0, 2.0], 20)
    keep = w > 0

    def make():
        return kl.MultitaskMKLClassifier(shared=True, standardize=False,
                                         class_weight="balanced")

    a = make().fit(_XT, _YC, task_index=_T, sample_weight=w)
    b = make().fit(_XT[keep], _YC[keep], task_index=_T[keep], sample_weight=w[keep])
    assert np.allclose(a.decision_function(_XT, task_index=_T),
                       b.decision_function(_XT, task_index=_T), atol=1e-9)


@pytest.mark.parametrize("make", [
    lambda **kw: kl.FGMClassifier(B=3, multiclass="ovr", **kw),
    lambda **kw: kl.InfiniteFeatureClassifier(n_candidates=20, random_state=0, **kw),
    lambda **kw: kl.PNormMKLClassifier(random_state=0, **kw),
], ids=["fgm_ovr", "grfl", "pnorm"])
def test_class_weight_is_its_sample_weight_on_sparse_standardised_input(make):
    # class_weight={c: w} is sample_weight w on the rows of class c, the
    # standardisation (weighted) included, on sparse input
    cw = {0: 1.0, 1: 3.0, 2: 0.5}
    S = sp.csr_matrix(_XS)
    a = _quiet(lambda: make(class_weight=cw).fit(S, Y3))
    b = _quiet(lambda: make().fit(S, Y3, sample_weight=np.array([cw[v] for v in Y3])))
    assert np.allclose(a.decision_function(S), b.decision_function(S), atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda **kw: kl.PNormMKLClassifier(random_state=0, **kw),
    lambda **kw: kl.LowRankKernelClassifier(random_state=0, **kw),
], ids=["pnorm", "lowrank"])
def test_sparse_and_dense_meet_standardize_false_at_a_numeric_width(make):
    # standardize=False: the default gamma="scale" is the variance over all
    # entries dense (scikit-learn's) and the columns' mean variance sparse (as
    # documented, doc/reproducibility.md), so the two differ on uncentred
    # columns; at a numeric width they give one model
    S = sp.csr_matrix(_XS + 0.0)
    kw = ({"kernels": [("rbf", {"gamma": 0.3}), "linear"]}
          if make().__class__.__name__.startswith("PNorm") else {"gamma": 0.3})
    a = _quiet(lambda: make(standardize=False, **kw).fit(_XS, Y3))
    b = _quiet(lambda: make(standardize=False, **kw).fit(S, Y3))
    assert np.allclose(a.decision_function(_XS), b.decision_function(S), atol=1e-10)


@pytest.mark.parametrize("as_frame", [False, True])
def test_a_dense_only_route_names_how_to_convert_a_sparse_frame(as_frame):
    # scikit-learn's "Use '.toarray()' to convert to a dense numpy array" was the
    # advice for a DataFrame of sparse columns too, which has no .toarray().  (The
    # multitask estimators, dense-only when this was written, take sparse X since
    # the thirty-fourth pass; a precomputed Gram matrix is still read dense.)
    import pandas as pd

    X = sp.random(40, 40, density=0.6, random_state=0, format="csr")
    K = X @ X.T
    if as_frame:
        K = pd.DataFrame.sparse.from_spmatrix(K)
    y = np.arange(40) % 2
    with pytest.raises(TypeError, match=r"dense data is required by LowRankKernelClassifier\. "
                       r"Convert it first: X\.toarray\(\) for a sparse matrix, "
                       r"X\.sparse\.to_dense\(\) for a DataFrame of sparse columns"):
        kl.LowRankKernelClassifier(kernel="precomputed").fit(K, y)


@pytest.mark.parametrize("name", ["MultitaskMKLClassifier", "MultitaskMKLRegressor"])
def test_a_multitask_fit_takes_a_sparse_frame_as_its_dense_values(name):
    import pandas as pd

    X = sp.random(40, 3, density=0.6, random_state=0, format="csr")
    frame = pd.DataFrame.sparse.from_spmatrix(X, columns=["a", "b", "c"])
    y, tasks = np.arange(40) % 2, np.repeat([0, 1], 20)
    a = _quiet(lambda: getattr(kl, name)().fit(frame, y, task_index=tasks))
    b = _quiet(lambda: getattr(kl, name)().fit(X.toarray(), y, task_index=tasks))
    assert np.allclose(a.decision_function(frame, task_index=tasks)
                       if hasattr(a, "decision_function") else a.predict(frame, task_index=tasks),
                       b.decision_function(X.toarray(), task_index=tasks)
                       if hasattr(b, "decision_function") else b.predict(X.toarray(), task_index=tasks),
                       atol=1e-10)
