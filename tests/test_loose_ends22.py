"""Loose ends of the twenty-first pass.

GrFL's folds (below ``CV_BELOW`` rows, choosing the budget with
``max_features="auto"``) are stratified by class for classification losses
when a random fold holds no row of a class of at least ``CV_FOLDS`` rows:
that class's held-out loss then silently did not count in the fold.  Folds
holding every class, and regression folds, are the random folds they were.
"""

import numpy as np
import pytest

from kernlearn import InfiniteFeatureClassifier
from kernlearn.losses import Logistic, Square
from kernlearn.methods import grfl
from kernlearn.methods._grfl_select import CV_BELOW, CV_FOLDS, _validation_split


def _codes(labels):
    """+-1 codes of the labels, one column per class (binary: the second's)."""
    classes = np.unique(labels)
    codes = np.where(labels[:, None] == classes, 1.0, -1.0)
    return codes if len(classes) > 2 else codes[:, 1:]


def _missing(folds, labels):
    """(fold, class) pairs where a class of at least CV_FOLDS rows has no held-out row."""
    classes, counts = np.unique(labels, return_counts=True)
    return [(i, c) for i, (_, val) in enumerate(folds)
            for c in classes[counts >= CV_FOLDS] if not np.any(labels[val] == c)]


@pytest.mark.parametrize("counts", [(95, 5), (90, 5, 5), (80, 6, 7, 7)])
def test_classification_folds_hold_every_class_of_enough_rows(counts):
    labels = np.repeat(np.arange(len(counts)), counts)
    Y = _codes(labels)
    for seed in range(10):
        folds = _validation_split(len(labels), Y, None, np.random.RandomState(seed),
                                  loss=Logistic())
        assert len(folds) == CV_FOLDS
        assert _missing(folds, labels) == [], seed
        val = np.concatenate([v for _, v in folds])
        np.testing.assert_array_equal(np.sort(val), np.arange(len(labels)))  # a partition
        sizes = [len(v) for _, v in folds]  # as balanced as the random folds
        assert max(sizes) - min(sizes) <= 1


def test_weighted_rows_and_tasks_are_stratified_too():
    rng = np.random.RandomState(0)
    labels = np.repeat([0, 1], [110, 10])
    w = np.ones(120)
    w[rng.choice(110, 20, replace=False)] = 0.0  # removed rows: in no fold
    folds = _validation_split(120, _codes(labels), None, np.random.RandomState(3), w,
                              loss=Logistic())
    assert _missing(folds, labels) == []
    assert not np.isin(np.flatnonzero(w == 0), np.concatenate([v for _, v in folds])).any()
    # two binary tasks, a rare positive class in the second
    task = np.repeat([0, 1], 60)
    y = np.where(np.r_[np.arange(60) % 2, np.arange(60) < 5] > 0, 1.0, -1.0)
    task_rows = [np.flatnonzero(task == t) for t in range(2)]
    for seed in range(10):
        folds = _validation_split(120, y, task_rows, np.random.RandomState(seed),
                                  loss=Logistic())
        assert _missing(folds, 2 * task + (y > 0)) == [], seed


@pytest.mark.parametrize("loss", [Square(), Logistic()])
def test_folds_holding_every_class_and_later_draws_are_unchanged(loss):
    # regression folds, and classification folds that hold both classes, are
    # the random folds; the stratified ones use the same single permutation,
    # so the random state after the split (the paths' draws) is unchanged too
    n = 100
    Y = np.random.RandomState(0).randn(n, 1)
    if loss.is_classification:
        Y = np.where(np.arange(n) % 2, 1.0, -1.0)[:, None]
    for seed in range(5):
        rng = np.random.RandomState(seed)
        folds = _validation_split(n, Y, None, rng, loss=loss)
        ref = np.random.RandomState(seed)
        expected = ref.permutation(n)
        assert rng.randint(2**31) == ref.randint(2**31)
        for i, (tr, val) in enumerate(folds):
            np.testing.assert_array_equal(val, np.sort(expected[i::CV_FOLDS]))
            np.testing.assert_array_equal(tr, np.setdiff1d(np.arange(n), val))
    rng = np.random.RandomState(0)
    _validation_split(n, _codes(np.repeat([0, 1], [95, 5])), None, rng, loss=Logistic())
    ref = np.random.RandomState(0)
    ref.permutation(n)
    assert rng.randint(2**31) == ref.randint(2**31)


def test_classifier_fit_chooses_on_folds_holding_the_rare_class(monkeypatch):
    # the estimator passes its loss: its folds hold the rare class
    seen = []
    orig = grfl._validation_split

    def spy(*args, **kwargs):
        seen.append(orig(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(grfl, "_validation_split", spy)
    rng = np.random.RandomState(0)
    labels = np.repeat([0, 1, 2], [100, 10, 6])
    X = rng.randn(len(labels), 4) + labels[:, None]
    assert len(labels) < CV_BELOW
    clf = InfiniteFeatureClassifier(max_features="auto", random_state=0).fit(X, labels)
    assert len(seen) == 1 and len(seen[0]) == CV_FOLDS
    assert _missing(seen[0], labels) == []
    assert clf.predict(X).shape == labels.shape


# -- the low-rank models' standardised centres, mapped once ---------------------------


def _low_rank_models():
    from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor

    rng = np.random.RandomState(0)
    X = rng.randn(200, 5)
    y = np.digitize(X[:, 0] + X[:, 1], [-1.0, 0.0, 1.0])
    return X, [LowRankKernelClassifier(random_state=0).fit(X, y),
               LowRankKernelRegressor(random_state=0).fit(X, X[:, 0] + np.sin(X[:, 1]))]


def test_low_rank_centres_are_mapped_once_and_predictions_unchanged(monkeypatch):
    import pickle

    from kernlearn.estimators._base import input_standardization
    from kernlearn.preprocessing import Standardization

    X, models = _low_rank_models()
    mapped = []
    orig = Standardization.transform

    def counting(self, Z):
        mapped.append(Z)
        return orig(self, Z)

    monkeypatch.setattr(Standardization, "transform", counting)
    for est in models:
        before = dict(vars(est))
        out = est._output(X, lambda D: D)
        for _ in range(3):
            np.testing.assert_array_equal(est._output(X, lambda D: D), out)
        # one mapping of the centres over four predictions (each of X's too)
        assert sum(Z is est.centers_ for Z in mapped) == 1
        assert vars(est).keys() == before.keys()  # nothing stored in the estimator
        # the kept centres are those mapped now, bit for bit
        st = input_standardization(est)
        expected = orig(st, est.centers_)
        np.testing.assert_array_equal(est._decision_function().centers, expected)
        # a pickle (and so a model from an older pickle) predicts the same
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(est))._output(
            X, lambda D: D), out)


def test_low_rank_centres_follow_a_new_fit_or_new_attributes():
    from kernlearn.estimators._base import input_standardization

    X, models = _low_rank_models()
    for est in models:
        est.predict(X[:2])
        est.x_mean_ = est.x_mean_ + 1.0  # a new array: mapped again
        np.testing.assert_array_equal(
            est._decision_function().centers,
            input_standardization(est).transform(est.centers_))
        est.centers_ = est.centers_[::-1].copy()
        np.testing.assert_array_equal(
            est._decision_function().centers,
            input_standardization(est).transform(est.centers_))
        first = est.predict(X)
        est.fit(X[::-1], est.predict(X)[::-1])  # a refit on other rows: new centres
        np.testing.assert_array_equal(
            est._decision_function().centers,
            input_standardization(est).transform(est.centers_))
        assert est.predict(X).shape == first.shape


# -- a read-only install: the package's precompiled numba cache is read ---------------

_SHIPPED_PROBE = r'''
import json, sys
import numba.core.caching as caching
if sys.argv[1] == "read-only":
    # the package's folder as on a read-only install: numba's locator refuses it
    # (as root, chmod would not stop a write; this is what numba sees then)
    def refuse(self):
        raise PermissionError("read-only")
    caching.InTreeCacheLocator.ensure_cache_path = refuse
from shippedmod import plus_one
out = {"value": plus_one(41.0)}
stats = plus_one.stats
out["hits"], out["misses"] = len(stats.cache_hits), len(stats.cache_misses)
out["in_tree"] = isinstance(plus_one._cache._impl.locator, caching.InTreeCacheLocator)
print(json.dumps(out))
'''


def _shipped_run(tmp_path, mode):
    import json
    import os
    import subprocess
    import sys

    import kernlearn

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(HOME=str(tmp_path / f"home-{mode}"), XDG_CACHE_HOME=str(tmp_path / f"xdg-{mode}"),
               OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
                   [str(tmp_path / "pkg"), os.path.dirname(os.path.dirname(kernlearn.__file__))]))
    run = subprocess.run([sys.executable, "-c", _SHIPPED_PROBE, mode], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def _shipped_package(tmp_path):
    """A one-function package under ``tmp_path/pkg`` compiled through njit_cached
    (skips where njit_cached is plain numba)."""
    from kernlearn.utils import _numba_cache

    if not _numba_cache._SUPPORTED:
        pytest.skip("njit_cached is numba.njit(cache=True) on this numba")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "shippedmod.py").write_text(
        "from kernlearn.utils._numba_cache import njit_cached\n\n\n"
        "@njit_cached\ndef plus_one(x):\n    return x + 1.0\n")


def test_a_read_only_install_reads_the_precompiled_cache(tmp_path):
    _shipped_package(tmp_path)
    # the install's precompilation: compiled and written into the package's folder
    first = _shipped_run(tmp_path, "writable")
    assert first == {"value": 42.0, "hits": 0, "misses": 1, "in_tree": True}
    # read-only: numba chose the user's (empty) cache folder, and compiled again
    # (seconds per function on kernlearn's); the precompiled entry is read instead
    again = _shipped_run(tmp_path, "read-only")
    assert again == {"value": 42.0, "hits": 1, "misses": 0, "in_tree": False}
