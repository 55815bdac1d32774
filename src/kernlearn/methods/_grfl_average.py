"""Averaging independent feature draws of GrFL's final model (``lambda_p="auto"``, few rows).

Below :data:`~kernlearn.methods._grfl_select.CV_BELOW` rows the folds choose
the level ``lambda_p`` (:func:`~kernlearn.methods._grfl_select.select_level`)
and a path on all rows is run at it.  That model depends on the random
features its pricing sampled: at the same level, paths with different random
states differ by 0.47-2.8x in test MSE on concrete slump and by 0.8-1.36x on
the other regression sets of ``benchmarks/suite.py`` under 300 rows.  Neither
a better pricing oracle nor a larger budget lowers that spread (see
:data:`FINAL_DRAWS`); :func:`average_paths` averages :data:`FINAL_DRAWS` such
paths instead.

The average is a point of the same problem (17) over the union of the draws'
features (each weight divided by the number of draws).  Its objective is at
most the mean of the draws' objectives: the features of different draws are
distinct, so the group penalty of the average is the mean of the draws'
penalties, and the loss, convex in the margins, is at most the mean of their
losses (Jensen).  So it is at least as good an approximate solution of the
infinite-dimensional problem as a draw on average, with less variance.

:class:`~kernlearn.InfiniteFeatureClassifier` averages
:data:`FINAL_DRAWS` paths below ``CV_BELOW`` rows too (``fit_grfl``'s
``final_draws``), at its fixed level, with its default budget (``None``) or
the folds' (``"auto"``): the margins of one-vs-all tasks are averaged task by
task, so its decision values are the mean of the draws'.  Both estimators'
``n_paths`` set the number of draws (``"auto"``: as above; an explicit count
averages on any size, ``n_paths=1`` is one path).
"""

import copy
import threading
import warnings

import numpy as np

from ..utils._warnings import user_stacklevel
from ._grfl_master import n_kept, n_params

__all__ = ["DEFER", "DeferredAttribute", "DeferredRows", "FINAL_DRAWS", "average_draws",
           "average_paths", "complete_rows", "one_model", "rows_for", "stacked_results"]

# Complete the kept features of paths priced in a sparse span when they are first
# read (DeferredRows), not in the fit.  On 200 rows of 100,000 sparse columns
# their 29 M normal numbers and the 235 MB array were half of a default fit
# (0.35-0.45 s of 0.7-0.9 s).  False: completed in the fit, as before the twentieth
# pass (the same numbers; the tests' reference).
DEFER = True

# Paths on all rows averaged after the folds chose lambda_p (fit_grfl).  On the
# 7 regression sets of benchmarks/suite.py under 300 training rows, seeds 0-15,
# random states seed and seed + 100 (224 fits), MSE within 1.05x of
# Nystroem(200) + RidgeCV on 171 fits with one path (12 above 1.15x, geometric
# mean ratio 0.695), 183 with 2 (7, 0.663), 189 with 3 (8, 0.653), 193 with 5
# (5, 0.645), at a median 1.12x / 1.24x / 1.49x one path's CPU time (at most
# +0.2 s with 3, +0.24 s with 5); no set worse, servo 21 -> 23 within,
# breastcancer 20 -> 27, autompg 19 -> 23, and the mean |log| MSE ratio
# between the two random states 0.116 -> 0.078.  Sampling 1,000 candidates per
# pricing step (instead of 100; 30 or 50 neither), a few gradient-ascent
# steps on the violation of each priced feature, or a budget of 200 features
# left that spread as it was (at one level as well) and made servo or autompg
# worse: the sharper the pricing, the higher the frequencies it adds, and on
# these noisy targets sampling from the kernel's spectrum regularises.
#
# The classifier (InfiniteFeatureClassifier, max_features None or "auto", below
# 300 rows): on the 6 classification sets of benchmarks/suite.py under 300
# training rows (glass, heart-statlog, ionosphere, iris, seismic-bumps, wine),
# seeds 0-15, random states seed and seed + 100 (192 fits), accuracy within 1
# point of Nystroem(200) + LinearSVC() on 137 fits with one path of the
# default budget (21 more than 3 points below, mean gap +0.22), 150 with 2
# (14, +0.51), 147 with 3 (11, +0.69), 155 with 5 (11, +0.93), at a median
# 1.9x / 3.0x / 4.8x one path's CPU time (at most +0.11 s over the baseline
# with 3); seeds 16-31: 141 -> 153 within, 22 -> 13 below 3 points, no set
# worse on average.  With max_features="auto" (folds choose the count): 128
# -> 155 within, 32 -> 12 below 3 points, every set better on average.  The
# gap between the two random states: 1.60 -> 1.25 points (mean absolute).
FINAL_DRAWS = 3


def average_draws(make, count, w_scale, result):
    """Average of ``count`` finished paths drawn one after another.

    Parameters
    ----------
    make : callable
        Returns the next finished path (each call draws its own features).
    count : int
        Number of paths.
    w_scale : float
        Scale of the row weights (:func:`average_paths`).
    result : callable
        The :class:`~kernlearn.methods.grfl.GrFLResult` of a path.

    Returns
    -------
    result : GrFLResult
        :func:`average_paths` of the paths.
    """
    paths = [make() for _ in range(count)]
    return average_paths(paths, stacked_results(paths, result), w_scale)


def stacked_results(paths, result):
    """``result(path, out)`` of each path, their features written into consecutive rows
    of one array (``out``), which :func:`average_paths` then keeps without a copy.

    On 200 rows of 100,000 sparse columns (features completed from the rows' span),
    the three draws' kept features are 235 MB: stacking copies of them into a fresh
    array cost more than their completion.

    Parameters
    ----------
    paths : list of GrFL
        Finished paths.
    result : callable
        ``result(path, out)``: the :class:`~kernlearn.methods.grfl.GrFLResult`
        of a path with its ``n_kept(path)`` features written into ``out``.

    Returns
    -------
    results : list of GrFLResult
    """
    ends = np.cumsum([n_kept(p) for p in paths])
    features = rows_for(paths, (ends[-1], n_params(paths[0])))
    return [result(p, features[e - k:e]) for p, k, e in zip(paths, np.diff(ends, prepend=0),
                                                             ends)]


def rows_for(paths, shape=None):
    """The array :func:`stacked_results` writes the kept features of ``paths`` into:
    :class:`DeferredRows` where every path completes them from a sparse span (and
    :data:`DEFER`), else ``np.empty(shape)`` (``None`` without a ``shape``).

    Parameters
    ----------
    paths : list of GrFL
        Finished paths.
    shape : tuple, optional
        ``(n_kept, n_params)`` of all their kept features, if known.

    Returns
    -------
    DeferredRows or ndarray or None
    """
    if DEFER and all(getattr(p, "_seed", None) is not None for p in paths):
        return DeferredRows(shape or (sum(map(n_kept, paths)), n_params(paths[0])))
    return None if shape is None else np.empty(shape)


def complete_rows(complete, params, seeds, out=None):
    """``complete(params, rngs, out=out)`` with a generator of each of ``seeds`` (one per
    row), or that call deferred into ``out`` (rows of a :class:`DeferredRows`), which it
    then returns."""
    if isinstance(out, DeferredRows):
        return out.defer(complete, params, seeds)
    return complete(params, [np.random.default_rng(s) for s in seeds], out=out)


class DeferredRows:
    """Rows of features whose completion is deferred until they are first read.

    The kept features of paths priced in a sparse span (``GrFL.features``) are
    completions ``complete(params, rngs, out=rows)`` from generators of their
    own seeds: the same calls into the same rows of a fresh ``np.empty`` array, with
    fresh generators, give the same numbers whenever they run (:func:`complete_rows`).
    :meth:`array` runs them once (the first reader; other threads wait for it) and
    keeps the array; a run that failed (say out of memory) is run whole again.

    A pickle holds the array (NumPy does not promise a generator's normal numbers
    across its versions); a deep copy not yet read stays deferred.

    Parameters
    ----------
    shape : tuple of int
        ``(n_rows, n_params)``.
    """

    def __init__(self, shape, _whole=None, _start=0):
        self.shape = tuple(int(s) for s in shape)
        self._whole, self._start = _whole, _start
        if _whole is None:
            self._calls, self._rows, self._lock = [], None, threading.Lock()

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, rows):
        """Rows ``start:stop`` (a slice of step 1), to :meth:`defer` calls into."""
        start, stop, step = rows.indices(self.shape[0])
        if step != 1 or self._whole is not None:
            raise IndexError("DeferredRows takes one slice of consecutive rows.")
        return DeferredRows((max(stop - start, 0), self.shape[1]), self, start)

    @property
    def whole(self):
        """The :class:`DeferredRows` these rows belong to (itself if not a slice)."""
        return self if self._whole is None else self._whole

    def defer(self, complete, params, seeds):
        """Record :func:`complete_rows` ``(complete, params, seeds, <these rows>)``;
        returns ``self``."""
        whole = self.whole
        with whole._lock:
            if whole._rows is not None:
                raise ValueError("these rows were completed already.")
            whole._calls.append((self._start, self._start + self.shape[0], complete, params,
                                 seeds))
        return self

    def array(self):
        """The rows: the recorded completions, run the first time (ndarray)."""
        whole = self.whole
        if whole._rows is None:
            with whole._lock:
                if whole._rows is None:
                    rows = np.empty(whole.shape)
                    for a, b, complete, params, seeds in whole._calls:
                        complete_rows(complete, params, seeds, rows[a:b])
                    whole._rows, whole._calls = rows, None
        return whole._rows if self._whole is None else \
            whole._rows[self._start:self._start + self.shape[0]]

    def __array__(self, dtype=None, copy=None):
        # (a copy when asked: the rows are the model's, np.array(rows) must not share them)
        return np.array(self.array(), dtype=dtype, copy=copy)

    def __reduce_ex__(self, protocol):
        # (pickled as its array is: it loads as that array, in any kernlearn)
        return self.array().__reduce_ex__(protocol)

    def __deepcopy__(self, memo):
        whole = self.whole
        with whole._lock:
            if whole._rows is not None:
                return copy.deepcopy(self.array(), memo)
            twin = memo.get(id(whole))  # (slices of one whole: of one twin)
            if twin is None:
                twin = memo[id(whole)] = DeferredRows(whole.shape)
                twin._calls = copy.deepcopy(whole._calls, memo)
        return twin if self._whole is None else twin[self._start:self._start + len(self)]


class DeferredAttribute:
    """An instance attribute read as an array: a :class:`DeferredRows` stored in it is
    replaced by its :meth:`~DeferredRows.array` when first read (the estimators'
    ``features_``).

    The value lives in the instance's ``__dict__`` under the attribute's own name, so
    pickles, ``vars`` and model files see the attribute as before (``holds_state``:
    a model file may set it).
    """

    holds_state = True

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        try:
            value = vars(obj)[self.name]
        except KeyError:
            raise AttributeError(f"{type(obj).__name__!r} object has no attribute "
                                 f"{self.name!r}") from None
        if isinstance(value, DeferredRows):
            # (two threads: both get the one array DeferredRows.array builds)
            value = vars(obj)[self.name] = value.array()
        return value

    def __set__(self, obj, value):
        vars(obj)[self.name] = value

    def __delete__(self, obj):
        try:
            del vars(obj)[self.name]
        except KeyError:
            raise AttributeError(self.name) from None


def average_paths(paths, results, w_scale):
    """Average of the final models of independent paths at one level.

    Parameters
    ----------
    paths : list of GrFL
        Finished paths on the same rows, loss and levels (for the objective).
    results : list of GrFLResult
        Their results (on the given weights' scale ``w_scale``).
    w_scale : float
        Scale of the row weights (the objective of a path is ``w_scale``
        times its run's).

    Returns
    -------
    result : GrFLResult
        Features and scales of all draws, their weights divided by the number
        of draws, the mean bias; ``objective`` that of the average (eq. (17));
        ``last_violation`` the largest of the draws'; ``converged`` whether
        all converged; the history, iteration count and stop reason of the
        first draw; ``n_paths`` the number of draws.
    """
    if len(results) == 1:
        return results[0]
    m = len(results)
    first = results[0]
    # the draws' penalties: their objectives less their losses; the loss is a
    # function of the margins only (the same rows and loss for every draw)
    loss_value = paths[0].problem().loss_value
    margins = [_margins(p) for p in paths]
    penalty = np.mean([p.objective - loss_value(M) if p.p else 0.0
                       for p, M in zip(paths, margins)])
    objective = (loss_value(sum(margins) / m) + penalty) * w_scale
    return type(first)(
        n_iter=first.n_iter, converged=all(r.converged for r in results),
        stop_reason=first.stop_reason, history=first.history, objective=float(objective),
        last_violation=max(r.last_violation for r in results), master=first.master,
        max_features=first.max_features, lambda_p=first.lambda_p, n_paths=m, warm=None,
        family=first.family,
        features=_stacked([r.features for r in results]),
        feature_scales=np.vstack([r.feature_scales for r in results]),
        coef=np.hstack([r.coef for r in results]) / m,
        task_coef=np.hstack([r.task_coef for r in results]) / m,
        shared_coef=np.concatenate([r.shared_coef for r in results]) / m,
        intercept=np.mean([r.intercept for r in results], axis=0))


def _stacked(arrays):
    """``np.vstack(arrays)``, without a copy where they are consecutive rows of one
    array (:func:`stacked_results`', or its :class:`DeferredRows`)."""
    if isinstance(arrays[0], DeferredRows):
        whole = arrays[0].whole
        if all(a.whole is whole for a in arrays) and [a._start for a in arrays] == list(
                np.cumsum([0] + [len(a) for a in arrays[:-1]])) and \
                sum(map(len, arrays)) == len(whole):
            return whole
        return np.vstack([a.array() for a in arrays])
    whole = arrays[0].base
    if (whole is not None and whole.ndim == 2 and whole.flags.c_contiguous
            and all(a.base is whole for a in arrays) and len(whole) == sum(map(len, arrays))):
        start = whole.__array_interface__["data"][0]
        rows = np.cumsum([0] + [len(a) for a in arrays[:-1]])
        # (an empty slice's address is not its position: NumPy gives it the start's)
        if all(not len(a) or a.__array_interface__["data"][0] == start + r * whole.strides[0]
               for a, r in zip(arrays, rows)):
            return whole
    return np.vstack(arrays)


def one_model(draws, why):
    """Warn that ``draws`` paths were asked for where the model is one master.

    Parameters
    ----------
    draws : int
        Paths asked for (``fit_grfl``'s ``final_draws``, resolved).
    why : str
        Why the model is a single one (ends the warning's first sentence).
    """
    if draws > 1:
        # not silent: the result's n_paths (the estimators' n_paths_) is 1
        warnings.warn(f"n_paths={draws} was not used: {why}, and the model is the master "
                      "on all rows with those features (n_paths_ is 1). Pass a numeric "
                      "max_features to average paths.", UserWarning,
                      stacklevel=user_stacklevel())


def _margins(path):
    """Training margins of a path's model (the biases alone without features)."""
    if path.margins is not None:
        return path.margins
    prob = path.problem()
    return prob.margins(*prob.zeros()[:2], path.b0)
