"""A forty-first user's audit: lazy Dask predictions, looked at for silent wrong results.

A data scientist with a Dask cluster predicted every estimator on Dask arrays
and DataFrames and compared each lazy result with the in-memory prediction.

What held (checked on small synthetic sets, not all pinned here):

- Inputs: a DataFrame's columns in another order are refused and renamed
  ones refused with scikit-learn's words, as in memory; a model fitted
  without names warns for a named Dask DataFrame, as in memory; nullable
  ``Float64`` columns (``pd.NA`` named as a missing value by row), float32
  and int chunks, numbers as text, unknown chunk sizes (``to_dask_array()``
  without lengths), a single partition, column chunks split, scipy CSR
  chunks (``from_array(asarray=False)`` and ``map_blocks(sp.csr_matrix)``)
  for models fitted on sparse ``X``, and sparse ``X`` refused at once for
  those fitted on dense ``X``: the labels, decision values and
  probabilities of the in-memory prediction (bit for bit for blocks of
  multiples of 32 rows or one block, else up to 7e-16: BLAS's row order,
  now said in doc/fgm.md).  Object and categorical DataFrame columns are
  refused as non-numeric, as the Dask fit refuses them (Dask makes object
  columns strings; in memory scikit-learn reads numbers in them).
- Schedulers: dask's threaded and ``scheduler="processes"`` schedulers
  (the decision objects pickle; GrFL's numba functions run there), a client
  closed between ``predict`` and ``compute`` (the local scheduler computes
  it), two clients, ``persist()``, computing twice, and ``da.concatenate``
  of two lazy predictions give the in-memory numbers.
- Outputs: ``_meta`` dtype and number of dimensions equal what
  ``compute()`` returns for string, bool, int and pandas ``string`` labels,
  ``predict_proba`` of 2 to 4 classes, 1-, 2- and 3-column regression
  targets, multitask outputs with ``task_index`` a Dask array (other chunks
  than ``X``; also a Dask Series) and known or unknown row chunks;
  ``class_weight``, ``probability=True`` and the three ``out_of_bounds``
  modes match.  A ``task_index`` of the wrong length or with unseen ids is
  refused when called.
- Graph: the kernel, GrFL and multitask decision object is one key (a
  p-norm MKL model of 1,181 support vectors: one 360 KB key, each block's
  task about 1 KB); no task holds the estimator or imports scikit-learn
  when unpickled (FGM's label and probability closures neither).

What did not hold; each test below failed before its fix:

- A Dask DataFrame's partitions reach the workers Fortran-ordered (pandas'
  column blocks); the in-memory validation makes ``X`` C-ordered.  The
  kernel, GrFL and FGM models' predictions of a DataFrame of one partition
  differed from the in-memory ones in the last bits (BLAS sums the other
  layout in another order; on tied classes labels could differ).  The
  blocks are now made C-ordered where they are checked.  (GrFL's family
  also ran scikit-learn's ``check_array`` on such a block, importing
  scikit-learn on the workers; a C-ordered block skips it.)
- A Dask DataFrame with an empty partition (a filter's) failed GrFL's lazy
  prediction on ``compute()`` with "Found array with 0 sample(s)": the
  family's check of the block refused it.  An empty block now has no
  learned columns.
- FGM's lazy prediction held its coefficients (``n_features x n_outputs``)
  in every row block's task, sent to the workers once per block; they are
  now one key of the graph, as the other models' decision objects.
- The multitask MKL models' lazy prediction of a ``dask.array`` of sparse
  chunks failed on ``compute()`` with NumPy's "setting an array element
  with a sequence" (in memory: "dense data is required"); it is refused
  when called, in words.
- A Dask array stacking test Gram matrices ``(F, n_test, n_train)`` for
  ``PNormMKLClassifier`` or ``MultitaskMKL*`` of precomputed kernels was
  refused ("... got Array") where the NumPy stack is predicted: it is read
  whole, as in memory.  A 2-D Dask ``X`` (rows) given to them is refused
  when called, in the in-memory words (the multitask models failed on
  ``compute()`` with "too many indices for array").
- A GrFL model of ``GaborFeatures`` imported scikit-learn on the workers
  (its family's ``check_array`` of every block); plain float blocks now
  skip it, as the Fourier family's do.
- A ``dask.array`` of text with a cell that is not a number failed with
  NumPy's "could not convert string to float: 'x'" alone; it is named by
  row over all of ``X`` and column, in the in-memory words.
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernlearn import (
    FGMClassifier,
    InfiniteFeatureClassifier,
    LowRankKernelClassifier,
    PNormMKLClassifier,
)

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

N, M = 90, 5
COLUMNS = [f"c{i}" for i in range(M)]
FAST = dict(max_iter=5, max_iter_online=2, random_state=0)
MODELS = {
    "PNormMKLClassifier": lambda: PNormMKLClassifier(probability=True, **FAST),
    "LowRankKernelClassifier": lambda: LowRankKernelClassifier(
        probability=True, max_iter=4, tol=1e-2, random_state=0),
    "InfiniteFeatureClassifier": lambda: InfiniteFeatureClassifier(
        max_features=5, n_candidates=10, loss="logistic", random_state=0),
    "FGMClassifier": lambda: FGMClassifier(B=2, max_iter=3, loss="logistic"),
}


# conftest's module-scoped client: one one-thread worker in this process
DASK_CLUSTER = dict(n_workers=1, processes=False)


def _data(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, M))
    X[:, 2] = 50 + 10 * X[:, 2]  # a column in other units
    return pd.DataFrame(X, columns=COLUMNS), X[:, 0] - 0.5 * X[:, 1]


def _y3(f):
    return np.array(["lo", "mid", "hi"])[np.digitize(f, np.quantile(f, [1 / 3, 2 / 3]))]


@pytest.fixture(scope="module")
def fitted():
    X, f = _data(0)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for name, make in MODELS.items():
            out[name] = make().fit(X, _y3(f))
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_dask_dataframe_of_one_partition_is_predicted_to_the_last_bit(client, fitted,
                                                                         name, dtype):
    # its partition is Fortran-ordered; the in-memory X is made C-ordered
    est = fitted[name]
    X, _ = _data(1)
    X = X.astype(dtype)
    Xd = dd.from_pandas(X, npartitions=1)
    for method in ("decision_function", "predict_proba", "predict"):
        expected = getattr(est, method)(X)
        got = getattr(est, method)(Xd).compute()
        assert got.dtype == expected.dtype, (method, got.dtype)
        np.testing.assert_array_equal(got, expected, err_msg=method)


def test_an_empty_partition_is_predicted_by_grfl(client, fitted):
    # a filtered DataFrame's partition of no rows: the family's check of the
    # block ("Found array with 0 sample(s)") failed the whole prediction
    from kernlearn import InfiniteFeatureRegressor

    X, f = _data(0)
    tasks = np.where(np.arange(N) % 3 == 0, "a", "b")
    reg = InfiniteFeatureRegressor(max_features=5, n_candidates=10, random_state=0)
    reg.fit(X, f, task_index=tasks)
    Xt, _ = _data(1)
    Xd = dd.from_pandas(Xt, npartitions=3).map_partitions(lambda p: p[p.index >= 30])
    kept = Xt.iloc[30:]
    got = reg.predict(Xd, task_index=da.from_array(tasks[30:], chunks=20)).compute()
    np.testing.assert_array_equal(got, reg.predict(kept, task_index=tasks[30:]))
    clf = fitted["InfiniteFeatureClassifier"]
    for method in ("predict", "decision_function", "predict_proba"):
        np.testing.assert_array_equal(getattr(clf, method)(Xd).compute(),
                                      getattr(clf, method)(kept), err_msg=method)


def test_fgms_coefficients_are_one_key_of_the_graph():
    # they were within every row block's task (n_features x n_outputs each,
    # sent to the workers per block), as the other models' decision objects are not
    import cloudpickle

    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 400))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fgm = FGMClassifier(B=20, max_iter=3, loss="logistic").fit(X, np.arange(200) % 4)
    Xd = da.from_array(X, chunks=(20, 400))
    for method in ("predict", "decision_function", "predict_proba"):
        lazy = getattr(fgm, method)(Xd)
        graph = dict(lazy.__dask_graph__())
        heavy = [k for k, v in graph.items() if k[0] != Xd.name
                 and len(cloudpickle.dumps(v)) > fgm.coef_.nbytes]
        assert len(heavy) == 1, (method, len(heavy), Xd.numblocks)
        np.testing.assert_array_equal(lazy.compute(scheduler="sync"),
                                      getattr(fgm, method)(X), err_msg=method)


@pytest.mark.parametrize("method", ["predict", "decision_function"])
def test_sparse_chunks_are_refused_by_the_multitask_models_at_once(method):
    # a model fitted on dense X centres its columns: in memory sparse X is
    # refused in those words (a sparse fit predicts sparse rows and chunks:
    # tests/test_mtmkl_sparse35.py); the lazy prediction failed on compute()
    # with NumPy's "setting an array element with a sequence"
    import scipy.sparse as sp

    from kernlearn import MultitaskMKLClassifier, MultitaskMKLRegressor

    X, f = _data(0)
    X = X.to_numpy()
    tasks = np.arange(N) % 2
    make = MultitaskMKLRegressor if method == "predict" else MultitaskMKLClassifier
    est = make().fit(X, f if method == "predict" else f > 0, task_index=tasks)
    Xd = da.from_array(sp.csr_matrix(X), chunks=(30, M), asarray=False)
    with pytest.raises(ValueError, match="fitted on dense X, whose columns it centres"):
        getattr(est, method)(Xd, task_index=tasks)


def _precomputed_models():
    from kernlearn import MultitaskMKLClassifier

    rng = np.random.default_rng(0)
    X, Xt = rng.standard_normal((60, 4)), rng.standard_normal((40, 4))
    y = np.where(X[:, 0] > 0, "yes", "no")
    grams, test = [X @ X.T], np.stack([Xt @ X.T])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pnorm = PNormMKLClassifier(kernels="precomputed", **FAST).fit(grams, y)
        mt = MultitaskMKLClassifier(kernels="precomputed").fit(grams, y,
                                                               task_index=np.arange(60) % 2)
    return [(pnorm, {}), (mt, {"task_index": np.arange(40) % 2})], test


def test_a_dask_stack_of_test_grams_is_predicted_and_rows_refused_at_once():
    # a (F, n_test, n_train) Dask array was refused ("X must be a non-empty list
    # of Gram matrices ..., got Array") where the NumPy stack is predicted; a
    # 2-D Dask X (rows) failed the multitask model on compute() with "too many
    # indices for array"
    models, test = _precomputed_models()
    stack = da.from_array(test, chunks=(1, 16, 60))
    for est, kw in models:
        for method in ("predict", "decision_function"):
            np.testing.assert_array_equal(getattr(est, method)(stack, **kw),
                                          getattr(est, method)(test, **kw))
        with pytest.raises(TypeError, match="X must be a non-empty list of Gram matrices"):
            est.decision_function(stack[0], **kw)


def test_a_gabor_grfl_model_predicts_dask_blocks_without_scikit_learn(tmp_path):
    # the Gabor family's check of each block imported scikit-learn on the workers
    # (check_array), which the Dask prediction promises they never import
    import subprocess
    import sys

    import cloudpickle

    from kernlearn.families import GaborFeatures

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 64))
    clf = InfiniteFeatureClassifier(family=GaborFeatures(image_shape=(8, 8), filter_size=3),
                                    max_features=3, n_candidates=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, X[:, 0] > 0)
    lazy = clf.decision_function(da.from_array(X, chunks=(20, 64)))
    (tmp_path / "lazy").write_bytes(cloudpickle.dumps(lazy))
    (tmp_path / "expected").write_bytes(cloudpickle.dumps(clf.decision_function(X)))
    check = ("import pickle, sys, numpy as np; d = sys.argv[1]; "
             "lazy = pickle.loads(open(d + '/lazy', 'rb').read()); "
             "got = lazy.compute(scheduler='sync'); "
             "assert np.array_equal(got, pickle.loads(open(d + '/expected', 'rb').read())); "
             "print(sorted(m for m in sys.modules if m.startswith('sklearn')))")
    out = subprocess.run([sys.executable, "-c", check, str(tmp_path)],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize("name", ["PNormMKLClassifier", "FGMClassifier"])
def test_a_text_cell_that_is_not_a_number_is_named_as_in_memory(client, fitted, name):
    # a dask.array of text was read with astype(float): NumPy's "could not
    # convert string to float: 'x'" alone, no row, column or model
    est = fitted[name]
    X, _ = _data(1)
    text = X.to_numpy().astype(str)
    text[50, 3] = "x"
    expected = "X has a value that is not a number ('x' at row 50, column 3: could not"
    with pytest.raises(ValueError, match=re.escape(expected)):
        est.predict(text)
    with pytest.raises(ValueError, match=re.escape(expected)):
        est.predict(da.from_array(text, chunks=(30, 2))).compute()
    text[50, 3] = "1.5"  # (numbers as text: read as in memory)
    np.testing.assert_array_equal(est.predict(da.from_array(text, chunks=(30, 2))).compute(),
                                  est.predict(text))
