"""A thirty-eighth user's audit: one object, many fits.

A data scientist reused each estimator object as notebooks do: fitted it on
one data set, then the same object on another (more or fewer columns, other
classes and labels, strings after integers, a DataFrame after an array and
back, sparse after dense, 1-D after 2-D targets, weights then none,
zero weights then none with precomputed Grams, ``task_index`` then none and
back, other task ids), changed parameters with ``set_params`` between fits
(nested ``family__`` and ``solver__`` ones, kernel lists of other lengths,
renamed parameters), warm-started, cloned, copied, pickled and saved
between fits, made refits fail part way, mutated her arrays in place, and
predicted rows shaped like the first data.

Most of it held, and is not repeated here: every refit of
``FGMClassifier``/``FGMRegressor`` (also with ``probability``, ``refit``,
``family``, ``groups``, ``tree``, ``C="auto"``, ``memory_budget``,
``chunk_size``), ``PNormMKLClassifier``, ``InfiniteFeature*``,
``LowRankKernel*`` (fixed ``nu``, ``nu`` paths, ``multiclass``,
``precompute``), the ``MultitaskMKL*`` estimators and their ``*CV`` variants
(``cv="loo"`` and folds, ``kernel_selection``, precomputed Grams) gave the
attributes and predictions of a fresh object fitted on the second data
(``feature_names_in_`` and ``get_feature_names_out`` follow the last fit as
in scikit-learn; nothing of the first fit is left), and so did a pickled,
deep-copied, cloned, shallow-copied or reloaded (model file) object refitted;
rows, Grams and task ids shaped like the first data are refused naming the
feature count, the Gram shape, the names or the unseen tasks; a refit stopped
at any of 40 points spread over it (every estimator) left the earlier model
exactly as it was, attributes and predictions (``all_or_nothing``);
parameters, families, kernel lists and solver objects come out of ``fit`` as
they went in; a warm start on other data or settings starts over; the
command line builds a new estimator for every ``fit`` and a failed fit
leaves the earlier model file as it was.

What did not hold: a warm-started GrFL path whose pricing had found no
violating feature was extended by every later fit (the model changed at each
identical refit, and its ``max_features_`` kept the earlier budget); the
kept path was matched to a ``RandomState`` seed by ``id()``, so a pickled or
deep-copied estimator started over; a solver object's parameter-check cache
changed its hash, so the first warm refit with ``solver=ADMM(...)`` started
over; and ``set_params`` of a renamed parameter's new name kept the old
name's value (silently, at the new name's default).  Each test here failed
before its fix.
"""

import warnings

import numpy as np
import pytest

import kernlearn


def _moons(n, seed):
    from sklearn.datasets import make_moons

    return make_moons(n, noise=0.3, random_state=seed)


@pytest.mark.parametrize("Est", ["InfiniteFeatureClassifier", "InfiniteFeatureRegressor"])
def test_a_warm_refit_of_a_path_that_found_no_violation_keeps_its_model(Est):
    # a warm-started path stopped because pricing found no violating feature
    # (below its budget) was extended again by the next fit on the same data
    # and settings: new candidates were drawn, features added, and the model
    # changed at every identical fit (2 -> 5 features, labels flipped), where
    # a cold fit at any budget stops at that point
    X, y = _moons(150, 2)
    if Est.endswith("Regressor"):
        y = np.sin(2 * X[:, 0]) + X[:, 1]
    kw = dict(max_features=30, n_candidates=10, path_iter=None, pricing_subsample=None,
              random_state=0)
    cls = getattr(kernlearn, Est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cold = cls(**kw).fit(X, y)
        warm = cls(warm_start=True, **kw).fit(X, y)
        assert warm.stop_reason_ == cold.stop_reason_ == "no_violation"
        first = warm.decision_function(X) if hasattr(warm, "decision_function") \
            else warm.predict(X)
        warm.fit(X, y)
        again = warm.decision_function(X) if hasattr(warm, "decision_function") \
            else warm.predict(X)
        warm.set_params(max_features=40).fit(X, y)  # a cold fit at 40 stops there too
    np.testing.assert_array_equal(again, first)
    assert warm.n_iter_ == cold.n_iter_
    np.testing.assert_array_equal(warm.features_, cold.features_)
    assert warm.stop_reason_ == "no_violation" and warm.converged_
    assert warm.max_features_ == 40  # the budget of this fit, not the kept run's


@pytest.mark.parametrize("copy_of", ["pickle", "deepcopy"])
def test_a_pickled_warm_start_seeded_by_a_generator_continues_its_path(copy_of):
    # the kept path was matched to the seed by the generator's id(): a pickled
    # or deep-copied estimator holds its own copy of the generator (the one its
    # path draws from), whose id differs, so its warm refit started over from
    # the advanced generator and gave another model than the original's refit
    # (decision values 0.34 apart), although a pickle is documented to keep it
    import copy
    import pickle

    X, y = _moons(200, 1)
    kw = dict(n_candidates=20, path_iter=None, pricing_subsample=None)
    est = kernlearn.InfiniteFeatureClassifier(max_features=3, warm_start=True,
                                              random_state=np.random.RandomState(0), **kw)
    est.fit(X, y)
    other = pickle.loads(pickle.dumps(est)) if copy_of == "pickle" else copy.deepcopy(est)
    est.set_params(max_features=6).fit(X, y)
    other.set_params(max_features=6).fit(X, y)
    np.testing.assert_array_equal(other.decision_function(X), est.decision_function(X))
    # another generator object given: the path starts over, drawing from it
    # as a cold fit does
    fresh = kernlearn.InfiniteFeatureClassifier(max_features=6, random_state=np.random.RandomState(0),
                                                **kw).fit(X, y)
    other.set_params(random_state=np.random.RandomState(0)).fit(X, y)
    np.testing.assert_array_equal(other.decision_function(X), fresh.decision_function(X))


def test_a_warm_start_with_a_solver_object_continues_its_path():
    # the kept path was matched by a hash of the settings, the solver object
    # with them; the solver's first solve stored its parameter-check cache on
    # itself, which changed that hash: the first warm refit with
    # solver=ADMM(...) silently started over instead of continuing
    from kernlearn.solvers import ADMM

    X, y = _moons(200, 1)
    kw = dict(n_candidates=20, path_iter=None, pricing_subsample=None, random_state=0)
    est = kernlearn.InfiniteFeatureClassifier(max_features=3, warm_start=True,
                                              solver=ADMM(max_iter=300), **kw).fit(X, y)
    kept = est._path.path
    est.set_params(max_features=5).fit(X, y)
    assert est._path.path is kept  # continued, not started over
    cold = kernlearn.InfiniteFeatureClassifier(max_features=5, solver=ADMM(max_iter=300),
                                               **kw).fit(X, y)
    np.testing.assert_allclose(est.decision_function(X), cold.decision_function(X),
                               rtol=1e-8, atol=1e-10)
    # a changed solver parameter is a changed setting: the path starts over
    est.set_params(solver__max_iter=400).fit(X, y)
    assert est._path.path is not kept


def test_set_params_of_a_new_name_replaces_its_old_names_value():
    # an estimator built with a renamed parameter's old name kept that value
    # when set_params gave the new name: its default was silently overridden
    # by the old value (standardize=True fitted the unstandardised model of
    # feature_scaling=False, max_iter=15 ran 5), any other value was refused
    # as "set both" although the user had set one name since
    from sklearn.datasets import make_classification

    X, y = make_classification(120, 6, random_state=0)
    X[:, 0] *= 1e3
    with pytest.warns(FutureWarning, match="feature_scaling"):
        est = kernlearn.FGMClassifier(B=2, feature_scaling=False).fit(X, y)
    est.set_params(standardize=True)
    assert est.get_params()["feature_scaling"] == "deprecated"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # (no old name left to warn of)
        est.fit(X, y)
    fresh = kernlearn.FGMClassifier(B=2, standardize=True).fit(X, y)
    np.testing.assert_array_equal(est.decision_function(X), fresh.decision_function(X))
    # the other estimators with renamed parameters: the old name is dropped too
    for est, old, new, value in [
            (kernlearn.FGMRegressor(max_outer_iter=5), "max_outer_iter", "max_iter", 7),
            (kernlearn.InfiniteFeatureClassifier(max_iter=50), "max_iter",
             "inner_max_iter", 60),
            (kernlearn.MultitaskMKLRegressorCV(max_inner=3), "max_inner",
             "inner_max_iter", 4)]:
        params = est.set_params(**{new: value}).get_params()
        assert (params[old], params[new]) == ("deprecated", value)
    # both names in one call: refused at fit, as in the constructor
    est = kernlearn.FGMClassifier(B=2).set_params(max_outer_iter=5, max_iter=7)
    with pytest.raises(ValueError, match="not both"):
        est.fit(X, y)
