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

Checked and clean (some pinned below): affine (dense) and scale (sparse)
invariance of every estimator under ``standardize=True`` with and without
an intercept (FGM without an intercept scales its columns only, as
documented; the others centre); ``standardize=False`` on centred and scaled
data equals ``standardize=True``; sparse and dense give one model (p-norm MKL,
GrFL, low-rank); float32 sparse input agrees with float64 to 1e-7; zero
weights remove rows exactly for every estimator under every combination
tried (multiclass, sparse, ``standardize=False``, ``probability``,
``class_weight="balanced"``, ``fit_intercept=False``, ``refit``, ``ovr``,
``shared``, the ``*CV`` searches); integer weights equal repeated rows for
FGM under all of them except ``probability=True`` (the Platt folds split
repeated rows apart, documented).
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
    # the same by sample_weight
    sw = np.where(Y3 == 2, 0.0, 1.0)
    P2 = _quiet(lambda: make(probability=True).fit(X3, Y3, sample_weight=sw)
                ).predict_proba(np.vstack([X3, FAR]))
    assert np.allclose(P2, P)
