"""The fixed per-fit cost: fast paths must behave exactly like the general ones."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.utils.multiclass import check_classification_targets
from threadpoolctl import threadpool_info, threadpool_limits

import kernlearn.methods.fgm as fgm_method
from kernlearn import FGMClassifier
from kernlearn.estimators._base import _plain_labels, check_two_classes
from kernlearn.solvers._base import single_blas_thread


@pytest.mark.parametrize("y, plain", [
    (np.array([0, 1, 1, 0]), True),
    (np.array([True, False, True]), True),
    (np.array(["a", "b", "a"]), True),
    (np.array([3, 1, 2], dtype=np.uint8), True),
    (np.array([0.0, 1.0]), False),            # floats: sklearn decides
    (np.array([b"a", b"b"]), False),          # bytes: sklearn refuses them
    (np.array(["a", 1], dtype=object), False),
    (np.array([[0], [1]]), False),
    (np.array([], dtype=int), False),
    ([0, 1], False),
])
def test_plain_labels(y, plain):
    assert _plain_labels(y) is plain


@pytest.mark.parametrize("y", [
    np.array([0, 1] * 20),
    np.array(["x", "y", "z"] * 10),
    np.arange(30),                       # as many classes as samples: sklearn warns
    np.array([0.0, 1.0, 1.0, 0.0]),
    np.array([0.5, 1.5, 2.25, 3.0]),     # continuous
    np.array([b"a", b"b"]),
    np.array([4, 4, 4]),                 # one class
])
def test_check_two_classes_raises_and_warns_as_sklearn(y):
    """Same exception type and message, same warnings, as the general check."""
    def outcome(fn):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            try:
                fn(y)
                err = None
            except (TypeError, ValueError) as e:
                err = (type(e), str(e))
        return err, [(w.category, str(w.message)) for w in rec]

    def reference(y):
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"y contains a single class ({classes[0].item()!r}); a "
                             "classifier needs more than one class.")

    assert outcome(check_two_classes) == outcome(reference)


def _blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@pytest.mark.skipif(not _blas_threads(), reason="no BLAS library seen by threadpoolctl")
def test_single_blas_thread_limits_then_restores():
    with threadpool_limits(limits=2, user_api="blas"):
        assert max(_blas_threads()) == 2
        with single_blas_thread():
            assert _blas_threads() == [1] * len(_blas_threads())
        assert max(_blas_threads()) == 2


@pytest.mark.skipif(not _blas_threads(), reason="no BLAS library seen by threadpoolctl")
def test_single_blas_thread_is_free_when_already_single():
    # already one thread: no limiter is set up (its set-up would be the only
    # cost of a small solve); two threads: one limiter, gone after the block
    from kernlearn.solvers import _base

    with threadpool_limits(limits=1, user_api="blas"):
        with single_blas_thread():
            assert _base._LIMITER is None
    with threadpool_limits(limits=2, user_api="blas"):
        with single_blas_thread():
            assert _base._LIMITER is not None
        assert _base._LIMITER is None


def test_binary_fgm_runs_without_joblib(monkeypatch):
    """One problem is solved in the caller; several still go through joblib."""
    X, y = make_classification(n_samples=120, n_features=10, n_classes=3,
                               n_informative=5, random_state=0)
    calls = []
    real = fgm_method.parallel_until_error  # (the one-vs-rest problems' joblib call)

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(fgm_method, "parallel_until_error", counting)
    binary = FGMClassifier().fit(X, y == 0)
    assert calls == [] and binary.score(X, y == 0) > 0.7
    FGMClassifier(multiclass="ovr").fit(X, y)
    assert len(calls) == 1


def test_obscure_small_problem_computes_all_rows_once_same_model(monkeypatch):
    """All rows at the first miss (small n) or on demand: the same fit."""
    import kernlearn.methods._obscure_steps as steps
    from kernlearn import PNormMKLClassifier

    X, y = make_classification(n_samples=150, n_features=8, random_state=1)
    at_once = PNormMKLClassifier(random_state=0).fit(X, y)
    assert at_once.n_rows_computed_ == 150
    monkeypatch.setattr(steps, "_ALL_ROWS_UPTO", 0)
    on_demand = PNormMKLClassifier(random_state=0).fit(X, y)
    assert on_demand.n_rows_computed_ < 150  # only the rows the updates needed
    np.testing.assert_allclose(at_once.decision_function(X),
                               on_demand.decision_function(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(at_once.kernel_weights_, on_demand.kernel_weights_)
