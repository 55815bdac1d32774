"""A fiftieth user's audit: what the twenty-first pass merged (read-only installs'
precompiled cache, GrFL stratified folds, LowRank mapped centres, blocked Fourier
columns, audit 49's fixes).

What was wrong (each test below failed before its fix):

- A read-only install whose precompiled numba entry could not be read (not
  readable by the user; a truncated index or data file) stopped every first call
  with ``PermissionError`` or pickle's "data was truncated", which the user could
  not clear: the package's folder is not theirs.  Such an entry is now a miss.
- ``LowRankKernel*`` kept their mapped centres while ``centers_``, ``x_mean_``
  and ``x_scale_`` were the same objects: changed in place, the rows were mapped
  with the new values and the centres with the old ones (1.9 off, silently); a
  subclass defining ``__eq__`` (unhashable) could not predict.
- GrFL's "selected no feature" warning and the sparse-offset warning named a
  file inside scikit-learn or kernlearn, not the caller's.

Checked and clean: the fallback keeps numba's checks (numba's version, the
source's hash, the signature, the CPU and its features, the bytecode) and writes
nothing into the package's folder; ``NUMBA_CACHE_DIR`` and ``NUMBA_DISABLE_JIT``;
stratified folds with string labels, tasks, zero weights, the same seed; blocked
cos/sin on Fortran-ordered and strided phases, 2,048 +- 1 rows, huge and
non-finite phases, float32; audit 49's fixes through model files and the CLI.
"""

import numpy as np
import pytest

from test_loose_ends22 import _shipped_package, _shipped_run


# -- a read-only install whose precompiled entries cannot be read ---------------------

@pytest.mark.parametrize("damaged", ["nbi", "nbc"])
def test_an_unreadable_precompiled_entry_is_compiled_not_fatal(tmp_path, damaged):
    # The package's folder is read-only to the user: they cannot delete a damaged
    # (or, installed by root with umask 077, unreadable) entry there, so reading it
    # must not stop every first call: numba compiles, as it did before it was read.
    _shipped_package(tmp_path)
    assert _shipped_run(tmp_path, "writable")["misses"] == 1
    (entry,) = (tmp_path / "pkg" / "__pycache__").glob(f"*.{damaged}")
    entry.write_bytes(entry.read_bytes()[:len(entry.read_bytes()) // 2])
    # (the old code: pickle's "data was truncated" from the first call)
    assert _shipped_run(tmp_path, "read-only") == {
        "value": 42.0, "hits": 0, "misses": 1, "in_tree": False}


# -- LowRankKernel*: the standardised centres kept beside the model -------------------

def _low_rank(cls=None):
    from kernlearn import LowRankKernelRegressor

    rng = np.random.RandomState(0)
    X = rng.randn(120, 4)
    est = (cls or LowRankKernelRegressor)(random_state=0).fit(X, X[:, 0] + np.sin(X[:, 1]))
    return X, est


def test_low_rank_centres_follow_arrays_changed_in_place():
    import pickle

    X, est = _low_rank()
    est.predict(X[:5])  # (the centres mapped and kept)
    est.x_mean_ += 0.5  # the same array object, other values
    est.x_scale_ *= 2.0
    est.centers_[:3] += 1.0
    fresh = pickle.loads(pickle.dumps(est))  # (maps its centres anew)
    # the old code: the centres mapped before, through the old mean and scale (1.9 off)
    np.testing.assert_array_equal(est.predict(X), fresh.predict(X))


def test_low_rank_subclass_defining_eq_predicts():
    from kernlearn import LowRankKernelRegressor

    class Compared(LowRankKernelRegressor):  # (__eq__ without __hash__: unhashable)
        def __eq__(self, other):
            return type(self) is type(other) and self.get_params() == other.get_params()

    X, est = _low_rank(Compared)
    _, plain = _low_rank()
    # the old code: "TypeError: unhashable type: 'Compared'" from predict
    np.testing.assert_array_equal(est.predict(X), plain.predict(X))


# -- GrFL's "selected no feature" warning names the caller's line ---------------------

def test_no_feature_warning_points_at_the_callers_file():
    import warnings

    from sklearn.pipeline import make_pipeline

    from kernlearn import InfiniteFeatureClassifier

    rng = np.random.RandomState(0)
    X, y = rng.randn(60, 3), np.repeat([0, 1], 30)
    for est in (InfiniteFeatureClassifier(lambda_p=1e6, random_state=0),
                make_pipeline(InfiniteFeatureClassifier(lambda_p=1e6, random_state=0))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X, y)
        (said,) = [w for w in caught if "selected no feature" in str(w.message)]
        # the old code: sklearn/base.py (its fit decorator), a fixed count of frames
        assert said.filename == __file__, said.filename


def test_sparse_offset_warning_points_at_the_callers_file():
    import warnings

    import scipy.sparse as sp

    from kernlearn import LowRankKernelRegressor

    rng = np.random.RandomState(0)
    X = rng.randn(60, 3)
    Xs = sp.csr_matrix(np.c_[X, 1e9 + X[:, 0]])  # a column offset by 1e9
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LowRankKernelRegressor(random_state=0).fit(Xs, X[:, 0])
    (said,) = [w for w in caught if "cannot centre exactly" in str(w.message)]
    # the old code: kernlearn/estimators/lowrank.py, a fixed count of frames
    assert said.filename == __file__, said.filename
