"""Audit 74: a hostile review of the thirtieth pass's multitask speed merges.

``MultitaskMKLRegressorCV``'s leave-one-out search on distinct inputs (its final
point's ``beta`` and residuals kept by ``EigenLOO``) and
``MultitaskMKLClassifierCV``'s scores computed in NumPy from one pass of
decision values.  Each test here failed on the merged code.
"""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score
from sklearn.metrics.pairwise import rbf_kernel

from kernlearn import MultitaskMKLClassifier, MultitaskMKLClassifierCV
from kernlearn.methods.mtmkl._loo_eigen import EigenLOO, eigen_plan

from test_mtmkl_loo_fast import _problem

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

CS = (0.1, 1.0, 10.0)


def _objective(cls=EigenLOO):
    p = _problem([110, 70], weighted=True, repeats=True)
    dense = eigen_plan(2, p["factors"], p["masks"], p["shared"])
    return cls(p["grams"], p["y_b"], p["w_b"], p["masks"], p["shared"], p["factors"],
               dense)


def test_the_kept_final_point_is_not_changed_by_its_caller():
    # the criterion's beta and residuals at the search's result are kept for
    # the next call at that point: a caller that changed the arrays it got
    # changed what the next call returned
    obj = _objective()
    mu = np.array([0.7, 0.2, 0.05])
    f0, beta0, res0 = obj(mu, grad=False, full=True)
    want = [b.copy() for b in beta0], [r.copy() for r in res0]
    assert any(np.abs(b).max() > 0 for b in beta0)
    for b, r in zip(beta0, res0):
        b *= 2.0
        r[:] = 7.0
    f1, beta1, res1 = obj(mu, grad=False, full=True)
    assert f1 == f0
    for got, exp in zip(beta1 + res1, want[0] + want[1]):
        np.testing.assert_array_equal(got, exp)


class _Interleaved(EigenLOO):
    """An :class:`EigenLOO` whose kept point another thread replaces right after
    this one's call stored its own (the interleaving of two threads that share
    the objective, made deterministic)."""

    other = None

    @property
    def _full(self):
        if self.__dict__.pop("_replaced", False):
            return self.other
        return self.__dict__["_kept"]

    @_full.setter
    def _full(self, value):
        self.__dict__["_kept"] = value
        if self.other is not None:
            self.__dict__["_replaced"] = True


def test_a_point_kept_by_another_thread_is_not_returned():
    obj = _objective(_Interleaved)
    mu_a, mu_b = np.array([0.7, 0.2, 0.05]), np.array([0.1, 1.5, 0.3])
    want = obj._evaluate(mu_a, False, False)
    obj.other = (mu_b.tobytes(), obj._evaluate(mu_b, False, True))
    assert obj.other[1][0] != want
    assert obj(mu_a, grad=False) == want


def _data(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    t = rng.integers(0, 3, n)
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, "yes", "no")
    sw = rng.uniform(0.2, 3.0, n)
    sw[::7] = 0.0
    rows = np.arange(n)
    return X, y, t, sw, [(rows[rows % 3 != k], rows[rows % 3 == k]) for k in range(3)]


def test_precomputed_scores_with_zero_weights_are_the_fold_fits_accuracy(fold_fits):
    # the validation rows of positive weight were taken from the stacked test
    # Gram matrices along their first axis, the kernels': an IndexError (and
    # score() of a fitted classifier given a stack did the same)
    X, y, t, sw, folds = _data()
    grams = [X @ X.T, rbf_kernel(X, gamma=0.5)]
    fits = fold_fits
    cv = MultitaskMKLClassifierCV("precomputed", Cs=CS, cv=folds).fit(
        grams, y, task_index=t, sample_weight=sw)
    assert len(fits) == len(CS) * len(folds)
    for C, train, est in fits:
        k = next(i for i, (tr, _) in enumerate(folds) if np.array_equal(tr, train))
        te = folds[k][1]
        test = [G[np.ix_(te, train)] for G in grams]
        # (score() sums the rows of positive weight only: the same to round-off)
        want = accuracy_score(y[te], est.predict(test, task_index=t[te]),
                              sample_weight=sw[te])
        got = cv.cv_results_[f"split{k}_test_score"][CS.index(C)]
        assert got == pytest.approx(want, rel=1e-14, abs=0)
        assert got == est.score(test, y[te], task_index=t[te], sample_weight=sw[te])
        assert got == est.score(np.stack(test), y[te], task_index=t[te],
                                sample_weight=sw[te])
    assert len({float(v) for k in range(3) for v in cv.cv_results_[f"split{k}_test_score"]}) > 2


def test_plain_score_of_stacked_grams_with_zero_weights():
    X, y, t, sw, _ = _data()
    grams = [X @ X.T, rbf_kernel(X, gamma=0.5)]
    est = MultitaskMKLClassifier("precomputed").fit(grams, y, task_index=t)
    want = accuracy_score(y, est.predict(grams, task_index=t), sample_weight=sw)
    got = est.score(grams, y, task_index=t, sample_weight=sw)
    assert got == pytest.approx(want, rel=1e-14, abs=0)
    assert est.score(np.stack(grams), y, task_index=t, sample_weight=sw) == got


def test_a_validation_fold_of_zero_weight_is_named():
    # score()'s accuracy_score refused it ("Sample weights must contain at
    # least one non-zero number"); the NumPy score stopped on np.average's
    # ZeroDivisionError, which named neither the fold nor the weights
    X, y, t, sw, folds = _data()
    sw = np.where(np.arange(len(y)) % 3 == 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="validation rows of split 1 all have zero"):
        MultitaskMKLClassifierCV(Cs=CS, cv=folds).fit(X, y, task_index=t, sample_weight=sw)
