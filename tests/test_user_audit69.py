"""Audit 69: the multitask estimators used as the single-task ones are.

A researcher with grouped data (students in schools) fits ``MultitaskMKLRegressor``,
``MultitaskMKLRegressorCV``, ``MultitaskMKLClassifier`` and ``MultitaskMKLClassifierCV``
the way the rest of the library and scikit-learn are used.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import is_classifier

from kernlearn import (
    MultitaskMKLClassifier,
    MultitaskMKLClassifierCV,
    MultitaskMKLRegressor,
    MultitaskMKLRegressorCV,
)
from kernlearn.estimators.mtmkl import MultitaskScorer

KERNELS = ["linear", ("rbf", {"gamma": 0.5})]


def _schools(n_per=20, seed=0):
    rng = np.random.default_rng(seed)
    school = np.repeat(np.array(["north", "south", "east"]), n_per)
    X = pd.DataFrame(rng.normal(size=(len(school), 3)), columns=["a", "b", "c"])
    y = X["a"].to_numpy() + 0.3 * rng.normal(size=len(school))
    label = np.where(y > 0, "pass", "fail")
    return X, y, label, school


def _fitted(make, X, y, label, school):
    est = make(KERNELS)
    return est.fit(X, label if is_classifier(est) else y,
                   task_index=school)


MAKERS = [MultitaskMKLRegressor, MultitaskMKLRegressorCV, MultitaskMKLClassifier,
          lambda k: MultitaskMKLClassifierCV(k, cv=3)]


@pytest.mark.parametrize("make", MAKERS)
def test_a_task_column_named_instead_of_given_says_so(make):
    # a pandas user writes task_index="school" (a column's name, as in a formula or
    # a groupby): the error was "task_index must have shape (60,), got ()"
    X, y, label, school = _schools()
    table = X.assign(school=np.unique(school, return_inverse=True)[1])  # coded ids
    with pytest.raises(ValueError, match=r"task_index is a single value \('school'\), "
                       r"not one task id per sample \(60 samples\).*df\['school'\]"):
        make(KERNELS).fit(table, label if is_classifier(make(KERNELS)) else y,
                          task_index="school")
    est = _fitted(make, X, y, label, school)
    with pytest.raises(ValueError, match=r"task_index is a single value \('north'\).*"
                       r"rows all of one task: np.full\(60, 'north'\)"):
        est.predict(X, task_index="north")
    # which is what it takes
    np.testing.assert_array_equal(est.predict(X, task_index=np.full(60, "north")),
                                  est.predict(X, task_index=["north"] * 60))
    # one id per sample is still what it takes, and a wrong length keeps its message
    with pytest.raises(ValueError, match=r"task_index must have shape \(60,\), got \(59,\)"):
        est.predict(X, task_index=school[:59])


def test_a_scorer_the_cv_classifier_cannot_serve_names_the_classifier():
    # scikit-learn's scorers quote the estimator's class: the message named the
    # library's internal wrapper, "_WithTasks has none of the following attributes"
    X, _, label, school = _schools()
    clf = MultitaskMKLClassifierCV(KERNELS, cv=3).fit(X, label, task_index=school)
    with pytest.raises(AttributeError, match=r"^MultitaskMKLClassifierCV has none of "
                       r"the following attributes: predict_proba"):
        MultitaskScorer("neg_log_loss")(clf, X, label, task_index=school)
    # the scorers it can serve still pass each row's task on
    auc = MultitaskScorer("roc_auc")(clf, X, label, task_index=school)
    from sklearn.metrics import roc_auc_score
    assert auc == roc_auc_score(label, clf.decision_function(X, task_index=school))


@pytest.mark.parametrize("make", [
    lambda Cs: MultitaskMKLRegressorCV(KERNELS, Cs=Cs),
    lambda Cs: MultitaskMKLRegressorCV(KERNELS, Cs=Cs, kernel_selection="objective", cv=3),
    lambda Cs: MultitaskMKLClassifierCV(KERNELS, Cs=Cs, cv=3)],
    ids=["regressor-loo", "regressor-objective", "classifier"])
@pytest.mark.parametrize("Cs, named", [(["1", 10], "'1'"), ([True, 10], "True"),
                                       (np.array([[0.1, 10.0]]), r"array\(\[ 0.1, 10. \]\)")],
                         ids=["text", "bool", "2-D"])
def test_a_grid_entry_that_is_not_a_number_is_named(make, Cs, named):
    # the grid was np.asarray(Cs, dtype=float).ravel(): the text '1' and True became
    # the C 1.0 and a 2-D grid was flattened, where GridSearchCV hands each entry to
    # C and refuses it; the library's other grids (nu, gamma_factors) name the entry
    X, y, label, school = _schools()
    est = make(Cs)
    with pytest.raises(ValueError, match=rf"Cs must be a non-empty list of positive "
                       rf"numbers; {named} in Cs=.* is not a positive finite number"):
        est.fit(X, label if is_classifier(est) else y, task_index=school)
    # numbers of any NumPy kind are still a grid
    est.set_params(Cs=np.array([1, 10])).fit(X, label if is_classifier(est) else y,
                                             task_index=school)
    assert est.C_ > 0


@pytest.mark.parametrize("make", [
    lambda: MultitaskMKLRegressorCV(KERNELS, Cs=[0.1, 10.0, 1.0],
                                    kernel_selection="objective", cv=3),
    lambda: MultitaskMKLClassifierCV(KERNELS, Cs=[0.1, 10.0, 1.0], cv=3)],
    ids=["regressor", "classifier"])
def test_the_cv_table_reads_as_a_grid_searchs(make):
    # (lead's follow-up) the documentation says cv_results_ is "as GridSearchCV's",
    # but code written for a search's table (cv_results_["params"][best_index_])
    # raised KeyError / AttributeError here
    from sklearn.model_selection import GridSearchCV

    X, y, label, school = _schools()
    est = make()
    target = label if is_classifier(est) else y
    est.fit(X, target, task_index=school)
    table = est.cv_results_
    assert table["params"] == [{"C": 0.1}, {"C": 10.0}, {"C": 1.0}]
    assert table["params"][est.best_index_] == {"C": est.C_}
    assert table["mean_test_score"][est.best_index_] == est.best_score_
    assert table["rank_test_score"][est.best_index_] == 1
    # every key is one a search's table has, with the same meaning
    from sklearn.svm import SVR

    search = GridSearchCV(SVR(), {"C": [0.1, 10.0, 1.0]}, cv=3).fit(X, y)
    assert set(table) <= set(search.cv_results_)
    assert table["params"] == search.cv_results_["params"]
    assert list(pd.DataFrame(table)["params"]) == table["params"]
