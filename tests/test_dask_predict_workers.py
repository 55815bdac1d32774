"""The kernel, GrFL and multitask models predict a Dask array on the workers, lazily.

Their predictions of a ``dask.array`` were computed block by block in the
client (the prediction code imports scikit-learn, which the workers never
do) and returned NumPy arrays: an ``X`` on a cluster was predicted through
the client, one block at a time.  Each model's decision values are now an
object without scikit-learn (``kernlearn.estimators._decisions``), sent to
the workers once and evaluated there on each row block; the result is a lazy
Dask array, equal to the in-memory prediction (which calls the same object).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from kernlearn import (
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    MultitaskMKLClassifier,
    MultitaskMKLRegressor,
    PNormMKLClassifier,
)

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

N, M = 100, 5
CHUNKS = (32, 3)  # (row blocks of 32: the products' rounding that of the whole X)
FAST = dict(max_iter=5, max_iter_online=2, random_state=0)
LOWRANK = dict(max_iter=4, tol=1e-2, random_state=0)
GRFL = dict(max_features=5, n_candidates=10, random_state=0)
# name: (estimator, targets: "2", "3" classes or "reg", fitted with task ids)
MODELS = {
    "PNormMKLClassifier-2": (lambda: PNormMKLClassifier(probability=True, **FAST), "2", False),
    "PNormMKLClassifier-3": (lambda: PNormMKLClassifier(**FAST), "3", False),
    "LowRankKernelClassifier-3": (lambda: LowRankKernelClassifier(probability=True, **LOWRANK),
                                  "3", False),
    "LowRankKernelRegressor-2d": (lambda: LowRankKernelRegressor(**LOWRANK), "reg2", False),
    "InfiniteFeatureClassifier-3": (lambda: InfiniteFeatureClassifier(loss="logistic", **GRFL),
                                    "3", False),
    "InfiniteFeatureRegressor-tasks": (lambda: InfiniteFeatureRegressor(**GRFL), "reg", True),
    "MultitaskMKLClassifier-tasks": (lambda: MultitaskMKLClassifier(probability=True), "2",
                                     True),
    "MultitaskMKLRegressor-tasks": (lambda: MultitaskMKLRegressor(), "reg", True),
    # fitted and predicting sparse X: the linear kernel's centred products and
    # the RBF's distances of sparse rows imported scikit-learn where they ran
    "PNormMKLClassifier-sparse": (lambda: PNormMKLClassifier(**FAST), "2", False),
    "LowRankKernelClassifier-sparse": (lambda: LowRankKernelClassifier(**LOWRANK), "2",
                                       False),
}
METHODS = ("predict", "decision_function", "predict_proba")
# A worker's kernlearn and scikit-learn modules, as eval runs them there (a
# function of this module would import it, and scikit-learn, on the worker).
_WORKER_MODULES = ("sorted(m for m in __import__('sys').modules "
                   "if m.split('.')[0] in ('sklearn', 'kernlearn'))")


# conftest's client: a cluster of one worker process (its modules are its own,
# not the tests')
DASK_CLUSTER = dict(n_workers=1)


def _data(seed, sparse=False, n=N):
    """``n`` rows (a column in other units) and their noiseless target; sparse:
    the small entries zeroed, CSR."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, M))
    X[:, 2] = 50 + 10 * X[:, 2]  # a column in other units (standardised by the models)
    f = X[:, 0] - 0.5 * X[:, 1] + 0.05 * (X[:, 2] - 50)
    if sparse:
        X[np.abs(X) < 0.8] = 0.0
        X = sp.csr_matrix(X)
    return X, f


def _targets(kind, f):
    if kind == "2":
        return np.where(f > 0, "yes", "no")
    if kind == "3":
        return np.digitize(f, np.quantile(f, [1 / 3, 2 / 3])) + 10
    return np.column_stack([3 * f + 1, f ** 2]) if kind == "reg2" else 3 * f + 1


def _tasks(n):
    return np.where(np.arange(n) % 3 == 0, "a", "b")


@pytest.fixture(scope="module")
def fitted():
    out = {}
    for name, (make, kind, with_tasks) in MODELS.items():
        X, f = _data(0, sparse=name.endswith("sparse"))
        kw = {"task_index": _tasks(N)} if with_tasks else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            out[name] = make().fit(X, _targets(kind, f), **kw), kw
    return out


def test_predictions_run_on_the_workers_lazily_and_equal_the_in_memory_ones(client,
                                                                              fitted):
    (before,) = client.run(eval, _WORKER_MODULES).values()
    assert not [m for m in before if m.startswith("sklearn")], before
    checked = 0
    for name, (est, kw) in fitted.items():
        X, _ = _data(1, sparse=name.endswith("sparse"))
        Xd = da.from_array(X, chunks=CHUNKS, asarray=False)
        kw_dask = {k: da.from_array(v, chunks=40) for k, v in kw.items()}
        for method in METHODS:
            if not hasattr(est, method):
                continue
            expected = getattr(est, method)(X, **kw)
            got = getattr(est, method)(Xd, **kw_dask)
            assert isinstance(got, da.Array), (name, method, type(got))
            assert got.chunks[0] == Xd.chunks[0], (name, method)
            value = got.compute()
            assert value.dtype == expected.dtype and value.shape == expected.shape, \
                (name, method)
            np.testing.assert_array_equal(value, expected, err_msg=f"{name}.{method}")
            checked += 1
    assert checked == 21  # (without probabilities: predict and decision_function)
    (after,) = client.run(eval, _WORKER_MODULES).values()
    # the blocks were predicted there, by the decision objects, without scikit-learn
    assert not [m for m in after if m.startswith("sklearn")], after
    assert "kernlearn.estimators._decisions" in after
    assert not [m for m in after if m in ("kernlearn.estimators.pnorm_mkl",
                                          "kernlearn.estimators.lowrank",
                                          "kernlearn.estimators.infinite",
                                          "kernlearn.estimators.mtmkl")], after


def test_the_decision_object_is_one_key_of_the_graph(fitted):
    # sent to the workers once, not within each block's task (a model's support
    # rows or centres, times the number of blocks)
    from kernlearn.estimators._decisions import LandmarkExpansion

    est, _ = fitted["LowRankKernelClassifier-3"]
    X, _ = _data(1)
    graph = dict(est.predict_proba(da.from_array(X, chunks=(10, M))).__dask_graph__())
    holders = [k for k, v in graph.items() if isinstance(v, LandmarkExpansion)
               or isinstance(getattr(v, "value", None), LandmarkExpansion)]
    assert len(holders) == 1, holders
