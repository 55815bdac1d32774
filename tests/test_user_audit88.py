"""An eighty-eighth audit: a review of zero weights dropped at the root (audit 85).

Each test here failed before its fix:

* a class whose rows all weigh zero kept an output of its own in
  ``InfiniteFeatureClassifier`` and ``LowRankKernelClassifier``: its one-vs-rest
  code is -1 on every row kept, a column the fit without the rows does not
  have, which moved the low-rank model's shared weights (0.08 on the other
  classes' decision values, other predictions) and turned two classes left
  into a three-output problem (other predictions than the binary fit without
  the rows).  Such a class now has a zero output (never predicted); the
  others are fitted as without it;
* the regressors' input range (``record_input_range``) copied every row
  when every weight was positive (8 MB on 20,000 x 50): only a zero weight
  removes a row, and an all-positive fit reads the rows in place.
"""

import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import kernlearn as kl

CLASSIFIERS = ["InfiniteFeatureClassifier", "LowRankKernelClassifier"]


def _fits(name, X, y, w, **kw):
    """The fit without the zero-weight rows and the fit with them."""
    keep = w > 0
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = getattr(kl, name)(random_state=0, **kw).fit(X[keep], y[keep],
                                                         sample_weight=w[keep])
        b = getattr(kl, name)(random_state=0, **kw).fit(X, y, sample_weight=w)
    return a, b


def _weighed_out_class(seed, n_present):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 4))
    cuts = [-0.4, 0.4] if n_present == 3 else [0.0]
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=60), cuts)
    w = rng.uniform(0.5, 2, 60)
    gone = rng.choice(60, 8, replace=False)
    w[gone] = 0.0
    y[gone[:3]] = 7  # class 7: on rows of zero weight only
    return X, y, w


@pytest.mark.parametrize("name, kw", [(name, {}) for name in CLASSIFIERS]
                         + [("LowRankKernelClassifier", {"multiclass": "ovr"})])
@pytest.mark.parametrize("seed", [0, 1])
def test_three_classes_left_are_fitted_as_without_the_weighed_out_one(name, kw, seed):
    X, y, w = _weighed_out_class(seed, 3)
    a, b = _fits(name, X, y, w, **kw)
    np.testing.assert_array_equal(b.classes_, [0, 1, 2, 7])
    # bit for bit: the same outputs fitted (the decision values to rounding: a
    # product with four outputs may round otherwise than with three)
    coef = "dual_coef_" if hasattr(b, "dual_coef_") else "column_coef_"
    ca, cb = getattr(a, coef), getattr(b, coef)
    np.testing.assert_array_equal(cb[:, :3] if coef == "dual_coef_" else cb[:3], ca)
    np.testing.assert_array_equal(b.intercept_[:3], a.intercept_)
    da, db = a.decision_function(X), b.decision_function(X)
    np.testing.assert_allclose(db[:, :3], da, rtol=0, atol=1e-13)
    assert np.all(db[:, 3] < db[:, :3].min(axis=1))  # never predicted
    np.testing.assert_array_equal(b.predict(X), a.predict(X))
    assert not np.any(b.intercept_[3]) and b.intercept_.shape == (4,)


@pytest.mark.parametrize("name", CLASSIFIERS)
@pytest.mark.parametrize("seed", [0, 1])
def test_two_classes_left_are_the_binary_fit_without_the_weighed_out_one(name, seed):
    X, y, w = _weighed_out_class(seed, 2)
    a, b = _fits(name, X, y, w)
    np.testing.assert_array_equal(b.classes_, [0, 1, 7])
    f, D = a.decision_function(X), b.decision_function(X)
    assert f.shape == (60,) and D.shape == (60, 3)
    # one-vs-rest codes of two classes are each other's negatives: -f and f
    # the binary model's coefficients as they are, and negated
    coef = "dual_coef_" if hasattr(b, "dual_coef_") else "column_coef_"
    ca, cb = getattr(a, coef), getattr(b, coef)
    cb = cb.T if coef == "dual_coef_" else cb
    np.testing.assert_array_equal(cb[1], np.ravel(ca))
    np.testing.assert_array_equal(cb[0], -cb[1])
    np.testing.assert_array_equal(cb[2], 0.0)
    # (the decision values to rounding: three outputs' products round otherwise)
    np.testing.assert_allclose(D[:, 1], f, rtol=0, atol=1e-13)
    np.testing.assert_allclose(D[:, 0], -f, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(b.predict(X), a.predict(X))


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_a_weighed_out_class_has_probability_zero_and_the_others_those_without_it(name):
    X, y, w = _weighed_out_class(0, 2)
    a, b = _fits(name, X, y, w, probability=True)
    pa, pb = a.predict_proba(X), b.predict_proba(X)
    assert pb.shape == (60, 3)
    np.testing.assert_array_equal(pb[:, 2], 0.0)
    np.testing.assert_allclose(pb[:, :2], pa, rtol=0, atol=1e-14)


# ------------------------------------- no copy of the rows when every weight is positive
def _range_of(X, w=None):
    from kernlearn.estimators._input_range import record_input_range

    est = type("Est", (), {})()
    record_input_range(est, X, w)
    return est.x_range_


def test_the_input_range_reads_all_positive_rows_in_place():
    # the regressors' input range copied X's rows (8 MB here) for weights all
    # positive, where only a zero weight removes a row
    import tracemalloc

    X = np.random.default_rng(0).normal(size=(20000, 50))
    tracemalloc.start()
    try:
        r = _range_of(X, np.ones(len(X)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < X.nbytes / 8
    np.testing.assert_array_equal(r, _range_of(X))
    w = np.ones(len(X))
    w[::2] = 0.0  # a zero weight still removes its row
    np.testing.assert_array_equal(_range_of(X, w), _range_of(X[1::2]))
    assert not np.array_equal(_range_of(X, w), r)
