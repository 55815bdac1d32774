"""A forty-ninth user's audit: silent wrong results in the nineteenth and
twentieth passes' additions.

A demanding data scientist looked for numbers that are wrong without an error
(and for crashes and unclear errors) in wide sparse GrFL's deferred features,
``predict_log_proba``, FGM's compiled multiclass labels, GrFL's "selected no
feature" warning and p-norm MKL's one-row predictions.

What held (checked against ``DEFER = False``, ``np.log(predict_proba)`` and
``np.argmax``; the first and third are pinned here):

- Deferred wide sparse GrFL features (60 x 500 CSR, regressor and classifier,
  each path below fitted with ``DEFER`` on and off): predictions on sparse
  and dense rows, ``transform``, ``frequencies_``, ``phases_``,
  ``feature_importances_`` and ``features_`` bit for bit; refits of the same
  object on dense rows, on narrower sparse rows, read or not in between;
  ``deepcopy``, ``pickle``, ``clone`` and ``copy.copy`` before and after the
  first read; ``set_params`` then refit; ``warm_start`` continued before and
  after a read; four threads reading at once; ``save_model``/``load_model``
  (the file holds an ndarray); Dask predictions and ``transform``; tasks
  (``task_index``); two outputs; ``probability=True`` (Platt's folds);
  ``lambda_p="auto"``, ``max_features="auto"``, three classes, sample weights
  with zeros, ``standardize=False``.
- ``predict_log_proba`` of FGM (squared hinge with Platt, logistic), p-norm
  MKL, GrFL (Platt, logistic, with tasks), low-rank and multitask MKL:
  ``exp`` equals ``predict_proba`` within 1e-12 and ``log`` of it within 1e-9
  where above 1e-6, rows summing to one, finite, for two and three classes of
  int and string labels, sample and class weights, sparse rows, a scikit-learn
  ``Pipeline``, ``cross_val_predict(method="predict_log_proba")``, pickles,
  model files and Dask arrays (with a Dask ``task_index``) bit for bit;
  ``hasattr`` follows the fitted model after ``set_params(probability=...)``
  as ``predict_proba`` does.
- FGM's compiled multiclass labels: ``classes_[argmax(decision_function)]`` on
  float32, Fortran, strided, read-only, one-row, CSR, CSC and pandas input,
  9,999 / 10,000 / 10,001 rows, int and string labels; NaN and infinity
  refused, 1e308 refused as too large; equal scores take the first class.
- p-norm MKL's one-row predictions equal the code's before the twentieth pass
  bit for bit (a row alone and in a batch differ in the last bit, 1.4e-15, as
  before: BLAS's products); float32 rows; refits with fewer support vectors;
  precomputed kernels.

What was wrong (each test below failed before its fix):

- ``PNormMKLClassifier`` fitted on rows, then ``set_params(kernels=
  "precomputed")`` without a refit, read the rows given to ``predict`` as Gram
  matrices: unstandardised, through the fitted kernels, decision values 3.5
  off and no error.  Predictions now follow the fitted model (as
  ``predict_proba`` already did for ``probability``).
- ``MultitaskMKLRegressor``/``Classifier`` refused their own inputs after
  ``set_params(kernels=...)`` without a refit, in words about the other kind
  (rows: "X must be a non-empty list of Gram matrices"; Gram matrices: "Found
  array with dim 3").
- ``LowRankKernelRegressor``/``Classifier`` predicted with the ``kernel``
  parameter as it is now, not as fitted: ``set_params(kernel="poly")`` after an
  RBF fit gave predictions 16 off without a word (``"linear"``: a TypeError
  about ``gamma``; ``"precomputed"``: an IndexError), and ``out_of_bounds=
  "auto"`` followed the new kernel too.
- GrFL with ``max_features="auto"`` below 300 rows (folds choose the count) at
  a level above every score: no fold's path added a feature, and the model
  of none said it stopped on its feature budget (``stop_reason_ ==
  "max_features"``, ``converged_`` False; the budget was the 0 the folds had
  nothing to choose from), so the classifier's "selected no feature" warning
  stayed quiet on a constant model.
- GrFL's "selected no feature" warning advised ``class_weight='balanced'``
  to a fit that had it, and named a class whose weights made up for its few
  rows (or a class weighted out, "0 of 297 rows"): rarity is now the class's
  share of the weights.
"""

import copy
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import kernlearn as kl

_rng = np.random.default_rng(49)
X = _rng.standard_normal((120, 4)) * [1, 10, 100, 0.1] + 5
Y2 = (X[:, 0] + X[:, 1] / 10 > 5).astype(int)
YR = X[:, 0] + np.sin(X[:, 1] / 5)


def _quiet(est, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*args, **kw)


# ------------------------------------------------ predictions follow the fitted model
def test_pnorm_mkl_predicts_as_fitted_after_set_params_kernels():
    # the rows were read as Gram matrices, unstandardised: 3.5 off, no error
    est = _quiet(kl.PNormMKLClassifier(random_state=0), X, Y2)
    expected = est.decision_function(X)
    est.set_params(kernels="precomputed")
    np.testing.assert_array_equal(est.decision_function(X), expected)
    # (a refit reads the parameter: Gram matrices now)
    grams = [np.exp(-0.001 * ((X[:, None] - X[None]) ** 2).sum(-1)), X @ X.T / 1e4]
    _quiet(est, grams, Y2)
    pre = est.decision_function(grams)
    est.set_params(kernels=None)
    np.testing.assert_array_equal(est.decision_function(grams), pre)


def test_multitask_mkl_predicts_as_fitted_after_set_params_kernels():
    # fitted on rows, then kernels="precomputed": "X must be a non-empty list of
    # Gram matrices"; fitted on Gram matrices, then kernels=None: "Found array
    # with dim 3" (the model's own inputs refused, in words about the other kind)
    tasks = np.arange(len(X)) % 2
    Xs = (X - X.mean(0)) / X.std(0)
    grams = [np.exp(-0.5 * ((Xs[:, None] - Xs[None]) ** 2).sum(-1)), Xs @ Xs.T]
    for inputs, other in ((Xs, "precomputed"), (grams, None)):
        est = kl.MultitaskMKLRegressor(kernels=None if other else "precomputed")
        expected = _quiet(est, inputs, YR, task_index=tasks).predict(inputs, task_index=tasks)
        est.set_params(kernels=other)
        np.testing.assert_array_equal(est.predict(inputs, task_index=tasks), expected)


@pytest.mark.parametrize("cls,y", [(kl.LowRankKernelRegressor, YR),
                                   (kl.LowRankKernelClassifier, Y2)])
def test_lowrank_predicts_with_the_fitted_kernel(cls, y):
    # "poly" after an RBF fit: predictions 16 off without a word; "linear" a
    # TypeError about gamma, "precomputed" an IndexError
    est = _quiet(cls(random_state=0), X, y)
    out = getattr(est, "decision_function", est.predict)
    expected = out(X)
    for kernel in ("poly", "linear", "precomputed"):
        est.set_params(kernel=kernel)
        np.testing.assert_array_equal(out(X), expected)


def test_lowrank_out_of_bounds_auto_follows_the_fitted_kernel():
    # a linear model extends beyond its training range by default; set_params
    # (kernel="rbf") made "auto" clip it
    est = _quiet(kl.LowRankKernelRegressor(kernel="linear", random_state=0), X, YR)
    far = X[:5] * 3
    expected = est.predict(far)
    est.set_params(kernel="rbf")
    np.testing.assert_array_equal(est.predict(far), expected)


# ------------------------------------------------ GrFL: the no-feature warning's advice
def _rare(n=300, n_rare=3, seed=3):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) < n_rare, "fraud", "ok")
    Xr = rng.standard_normal((n, 5))
    Xr[:n_rare, :2] += 2.0
    return Xr, y


def _no_feature_message(est, *args, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(*args, **kw)
    said = [str(w.message) for w in caught if "selected no feature" in str(w.message)]
    assert len(said) == 1 and len(est.features_) == 0, said
    return said[0]


@pytest.mark.parametrize("how", ["balanced", "sample_weight", "weighted_out"])
def test_grfl_no_feature_warning_does_not_advise_balance_to_a_balanced_fit(how):
    # it said "or class_weight='balanced': class 'fraud' has 3 of 300 rows" to a
    # fit with class_weight="balanced", to one whose sample weights made up for
    # the class, and "class 'fraud' has 0 of 297 rows" to one that weighed it out
    Xr, y = _rare()
    params, kw = {"random_state": 0, "lambda_p": 1e3}, {}
    if how == "balanced":
        params["class_weight"] = "balanced"
    elif how == "sample_weight":
        kw["sample_weight"] = np.where(y == "fraud", 99.0, 1.0)
    else:
        # (a binary fit that weighs one class out is refused since audit 51,
        # naming the class left, as SVC does: no model, so no such warning)
        with pytest.raises(ValueError, match="single class of positive weight .'ok'."):
            kl.InfiniteFeatureClassifier(class_weight={"fraud": 0.0}, **params).fit(Xr, y)
        return
    message = _no_feature_message(kl.InfiniteFeatureClassifier(**params), Xr, y, **kw)
    assert message.endswith("A smaller lambda_p lets features in."), message


def test_grfl_no_feature_warning_weighs_the_rare_class():
    # weights that leave the class rare: named, with its share of the weight
    Xr, y = _rare(n=300, n_rare=30)
    message = _no_feature_message(kl.InfiniteFeatureClassifier(
        random_state=0, lambda_p=1e3, class_weight={"fraud": 0.2}), Xr, y)
    assert ("class 'fraud' has 30 of 300 rows of positive weight, 0.022 of their "
            "weight") in message, message


@pytest.mark.parametrize("cls", [kl.InfiniteFeatureClassifier, kl.InfiniteFeatureRegressor])
def test_grfl_folds_that_add_no_feature_stop_on_the_violation_test(cls):
    # max_features="auto" below 300 rows (folds choose the count) at a level above
    # every score: no fold's path added a feature, the model of none was called
    # stopped by its budget ("max_features", not converged), and the classifier's
    # no-feature warning, which waits for "no_violation", said nothing
    est = cls(random_state=0, lambda_p=1e6, max_features="auto")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, Y2)
    said = [str(w.message) for w in caught if "selected no feature" in str(w.message)]
    assert len(est.features_) == 0
    assert est.stop_reason_ == "no_violation" and est.converged_
    assert len(said) == (cls is kl.InfiniteFeatureClassifier), said


# ------------------------------------------------ what held, pinned
def test_deferred_wide_sparse_features_equal_the_completed_ones(monkeypatch):
    # refits of one object (sparse, dense, narrower), copies before the first
    # read, a warm start continued: the numbers of DEFER = False, bit for bit
    from kernlearn.methods import _grfl_average

    Xs = sp.random(60, 500, density=0.03, random_state=3, format="csr")
    y = np.asarray(Xs[:, :40].sum(axis=1)).ravel()
    T = sp.random(20, 500, density=0.03, random_state=4, format="csr")

    def run():
        est = _quiet(kl.InfiniteFeatureRegressor(random_state=0, n_paths=2,
                                                 max_features=6), Xs, y)
        twin, pickled = copy.deepcopy(est), pickle.loads(pickle.dumps(est))
        out = [twin.predict(T), pickled.predict(T), est.predict(T.toarray()), est.phases_]
        _quiet(est, Xs.toarray(), y)
        out.append(est.predict(T.toarray()))
        _quiet(est, Xs[:, :300], y)
        _quiet(est, Xs, y)  # (the narrower model never read)
        out += [est.transform(T), est.feature_importances_]
        warm = _quiet(kl.InfiniteFeatureRegressor(random_state=0, n_paths=1, max_features=3,
                                                  warm_start=True), Xs, y)
        return out + [_quiet(warm.set_params(max_features=6), Xs, y).predict(T)]

    assert _grfl_average.DEFER
    deferred = run()
    monkeypatch.setattr(_grfl_average, "DEFER", False)
    for a, b in zip(deferred, run(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_compiled_multiclass_labels_take_the_first_of_equal_scores():
    # the running maximum over the outputs (10,000 rows or more) against
    # argmax's first-index rule, on equal outputs and on scores all 0 or -0.0
    from kernlearn.estimators._decisions import class_labels
    from kernlearn.partitioned import selected_linear_scores

    rng = np.random.default_rng(0)
    T = rng.standard_normal((12_000, 6))
    T[::7] = 0.0
    w = rng.standard_normal(6)
    coef = np.vstack([-w, w, w, 0.5 * w])  # (classes 1 and 2 tie everywhere)
    D = selected_linear_scores(T, coef, np.zeros(4))
    assert D.T.flags.c_contiguous  # (the compiled path's layout)
    classes = np.array(["d", "c", "b", "a"])
    np.testing.assert_array_equal(class_labels(D, classes), classes[np.argmax(D, axis=1)])
    assert set(class_labels(D, classes)[::7]) == {"d"}  # (all four 0: the first)
