"""Predictions of a fitted estimator on a Dask array or DataFrame, by row blocks.

Every estimator predicts a ``dask.array`` (dense or scipy-sparse chunks) or a
Dask DataFrame block by block over its rows, the column chunks merged first,
so that the whole of ``X`` never reaches the client (it used to be computed
into the client's memory first).  The checks of in-memory ``X`` are made
here too: the number of columns and a DataFrame's column names at once (from
the array's or frame's metadata), NaN and infinity in each block as it is
read (named by row over all of ``X`` and column, as in memory).

Two ways:

* :func:`map_row_blocks` -- the prediction of a block is a function of the
  block alone (FGM's linear model): ``map_blocks`` runs it on the workers and
  the result is a lazy Dask array.
* :func:`decided` -- the same for the kernel, GrFL and multitask models (and
  GrFL's learned features, its ``transform``), whose decision values are an
  object of :mod:`kernlearn.estimators._decisions` (no scikit-learn: the
  workers never import it), sent to the cluster once as one key of the
  graph; their in-memory predictions call the same object.
"""

import re
import textwrap
from functools import partial

import numpy as np

from ..partitioned import _current_client, _is_dask_array, _is_dask_frame, tune_worker_malloc
from ..utils._finite import block_refusal, checked_rows, refuse_non_finite_outputs
from ._input_range import OutsideTrainingRange
from ._large_inputs import dask_array_numbers, dask_frame_values

__all__ = ["dask_input_doc", "dask_rows", "decided",
           "is_dask_input", "map_row_blocks"]


# the sentence of every prediction method's docstring on Dask X (the details: doc/fgm.md)
_DASK_NOTE = ("A ``dask.array`` or Dask DataFrame ``X`` is read by row blocks, never whole "
              "into the client{}; see doc/fgm.md, \"Predicting a Dask array (every "
              'estimator)".')


def dask_input_doc(lazy=False):
    """A decorator adding the sentence on Dask ``X`` to a prediction method's docstring.

    Parameters
    ----------
    lazy : bool, default=False
        Whether the output on Dask ``X`` is a lazy Dask array (FGM's), not
        what in-memory ``X`` gives.

    Returns
    -------
    callable
        Puts the sentence before the numpydoc "Parameters" section of its
        argument's docstring, and returns its argument.
    """
    note = _DASK_NOTE.format(", and the output is a lazy Dask array" if lazy else "")

    def noted(method):
        doc = method.__doc__ or ""
        found = re.search(r"\n([ \t]*)Parameters\n\1-+\n", doc)
        if found:
            indent, at = found.group(1), found.start() + 1
            text = textwrap.fill(note, 78 + len(indent), initial_indent=indent,
                                 subsequent_indent=indent)
            method.__doc__ = f"{doc[:at]}{text}\n\n{doc[at:]}"
        return method

    return noted


def is_dask_input(X):
    """Whether ``X`` is a ``dask.array`` or a Dask DataFrame."""
    return _is_dask_array(X) or _is_dask_frame(X)


def dask_rows(est, X):
    """``X`` at predict time as a ``dask.array`` of whole rows, its shape checked.

    Nothing of ``X`` is computed: a DataFrame's columns are checked as a
    pandas one's (:func:`~kernlearn.estimators._large_inputs.dask_frame_values`),
    an array's type as in memory, the number of columns against the fit's,
    and the column chunks are merged (a block then holds whole rows).

    Parameters
    ----------
    est : BaseEstimator
        The fitted estimator.
    X : dask.array.Array or dask.dataframe.DataFrame

    Returns
    -------
    dask.array.Array of shape (n_samples, n_features_in_)
        One chunk along the columns; the row chunks as given (their sizes may
        be unknown).

    Raises
    ------
    ValueError
        For a shape other than ``(n_samples, n_features_in_)``, or an unknown
        number of columns.
    """
    who = type(est).__name__
    if _is_dask_frame(X):
        X = dask_frame_values(est, X, reset=False)[0]
    else:
        X = dask_array_numbers(est, X)
        if getattr(est, "feature_names_in_", None) is not None:
            from sklearn.utils.validation import _check_feature_names

            _check_feature_names(est, X._meta, reset=False)  # (its warning, once)
    if X.ndim != 2:
        raise ValueError(f"X has shape {X.shape}; {who} predicts a 2-D array of "
                         f"{est.n_features_in_} features.")
    if np.isnan(X.shape[1]):
        raise ValueError(f"X has an unknown number of columns (shape {X.shape}: the "
                         "sizes of its column chunks are unknown); give them "
                         "(X.compute_chunk_sizes(), or to_dask_array(lengths=True) "
                         f"of a DataFrame): {who} expects {est.n_features_in_} features.")
    if X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features (shape {X.shape}), but {who} "
                         f"expects {est.n_features_in_} features as input.")
    # the workers' allocator set as for a fit on the cluster: under distributed's
    # default environment every large temporary of a block's prediction was
    # mapped afresh (a kernel model's blocks took 1.5-3x the client's time)
    tune_worker_malloc(_current_client())
    return X.rechunk({1: -1}) if X.numblocks[1] != 1 else X


def map_row_blocks(est, X, fn, width=None, dtype=float, what=None, post=None):
    """``fn`` over the row blocks of Dask ``X``, on the workers: a lazy Dask array.

    Each block is checked for NaN and infinity where it lives (the error
    names the row over all of ``X`` and the column; with unknown block sizes
    the row within its block), and so, given ``what``, are ``fn``'s outputs
    (finite rows may overflow in the model: refused as in memory).

    Parameters
    ----------
    est : BaseEstimator
        The fitted estimator (only read here, never sent to the workers).
    X : dask.array.Array or dask.dataframe.DataFrame
    fn : callable
        ``fn(block)`` -> its rows' outputs.  It must not carry the estimator
        (unpickling one imports scikit-learn on every worker).
    width : int, optional
        Columns of ``fn``'s output (None: one value per row).
    dtype : dtype, default=float
        Its type.
    what : str, optional
        What ``fn``'s outputs are ("decision values"): NaN or infinite ones
        are refused, in the words of the in-memory prediction.
    post : callable, optional
        Applied to ``fn``'s outputs once checked; ``width`` and ``dtype`` are
        then its output's.

    Returns
    -------
    dask.array.Array of shape (n_samples,) or (n_samples, width)
        With ``X``'s row chunks.
    """
    from ._decisions import applied

    # fn (FGM's: its coefficients, n_features x n_outputs) sent once as one key of
    # the graph: within every block's task it was sent to the workers per block
    return _map_checked(est, dask_rows(est, X), applied, [_shipped(fn)], width, dtype,
                        what, post)


def _map_checked(est, X, fn, args, width, dtype, what, post, probe=None):
    """:func:`map_row_blocks` of ``X`` from :func:`dask_rows`, ``fn(block, *args)``
    (``args``: Dask arrays of ``X``'s row chunks, or delayed objects, one key each).

    ``probe(block, *args)``, when given, checks a block's inputs alone (raising
    as ``fn`` would): the blocks are then refused in row order
    (:func:`_in_row_order`).
    """
    names = getattr(est, "feature_names_in_", None)
    shape = (0,) if width is None else (0, width)
    check = partial(checked_rows, fn=fn, who=type(est).__name__, names=names, what=what,
                    post=post)
    meta = np.zeros(shape, dtype=dtype)
    if probe is not None:
        return _in_row_order(X, check, partial(block_refusal, fn=probe, who=type(est).__name__,
                                               names=names), args, width, meta)
    return X.map_blocks(check, *args,
                        chunks=(X.chunks[0],) + ((width,) if width else ()),
                        drop_axis=[] if width else [1], dtype=dtype, meta=meta)


def _in_row_order(X, check, refusal, args, width, meta):
    """``check`` over the row blocks of ``X`` (as :func:`_map_checked` maps it), a
    refusal of their inputs naming the first offending row of ``X``.

    Mapped alone, each block refused its own rows, and a cluster's
    ``compute()`` raised whichever block's error came first (its row a matter
    of timing).  Here ``refusal`` (:func:`~kernlearn.utils._finite.block_refusal`)
    checks each block's inputs, a chain of small tasks carries the earliest
    refusal in row order down the blocks, and each block's output waits for
    the chain up to it: every failing task raises the first refused block's
    error, the others are computed as without the chain.  Only the inputs are
    checked first (outputs too large for the model's arithmetic are refused
    by each block, as before).
    """
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    from ..utils._finite import earlier_refusal, gated_rows

    token = tokenize(X, check, refusal, *args)
    here, before, out = (f"{what}-{token}" for what in ("refusal", "earliest-refusal",
                                                       "checked-in-row-order"))
    # (one key per block of each array argument; a delayed argument's one key for all)
    keys = [(lambda k, a=a: (a.name, k, 0)) if is_dask_input(a) else (lambda k, a=a: a.key)
            for a in args]
    ends = np.cumsum((0,) + X.chunks[0])  # (NaN from an unknown size on)
    graph = {}
    for k in range(X.numblocks[0]):
        info = {0: {"array-location": [(ends[k], ends[k + 1]), (0, X.shape[1])],
                    "chunk-location": (k, 0)}}
        block = [(X.name, k, 0)] + [key(k) for key in keys]
        graph[here, k] = (partial(refusal, block_info=info), *block)
        graph[before, k] = (earlier_refusal, (before, k - 1) if k else None, (here, k))
        graph[(out, k) + ((0,) if width else ())] = (
            partial(gated_rows, block_info=info, **check.keywords), (before, k), *block)
    layers = HighLevelGraph.from_collections(out, graph, dependencies=[X, *args])
    return da.Array(layers, out, chunks=(X.chunks[0],) + (((width,),) if width else ()),
                    meta=meta)


def decided(est, X, decision, validate, post=None, width=None, dtype=float, *,
            task_index=None, positions=None, name_columns=True, what="decision values"):
    """``post(decision(X))``, the outputs of a model's decision values.

    On a Dask array or DataFrame ``X`` (rows of features) ``decision``, an
    object of :mod:`kernlearn.estimators._decisions` (no scikit-learn), is
    sent to the workers once and evaluated there on each row block, with
    ``post``: the result is a lazy Dask array of ``X``'s row chunks.  On
    other ``X`` it is evaluated in memory, on ``validate(X)``.  Either way
    the decision values are refused when NaN or infinite (finite rows too
    large for the model's arithmetic), naming the row of ``X``.

    Parameters
    ----------
    est : BaseEstimator
        The fitted estimator (its name and column names; never sent).
    X : array-like, sparse matrix, dask.array.Array or dask.dataframe.DataFrame
    decision : callable
        ``decision(validated X, positions)`` -> decision values (n, k) or (n,).
    validate : callable
        In-memory ``X`` -> validated ``X`` (scikit-learn's checks).
    post : callable, optional
        Decision values -> outputs (a function of the values alone).
    width : int, optional
        Columns of the outputs (None: one value per row).
    dtype : dtype, default=float
        Their type.
    task_index : array-like of shape (n_samples,), optional
        Each row's task id, in memory or a Dask array (left on the cluster:
        :func:`_lazy_task_positions`).
    positions : callable, optional
        ``positions(task_index, n)`` -> the rows' task positions or None,
        raising on ids the model does not know (the estimator's check);
        None for models without tasks.
    name_columns : bool, default=True
        Whether ``X``'s columns are features (False: precomputed Gram
        values), named when the values overflow.
    what : str, default="decision values"
        What ``decision`` gives, in the refusal of NaN or infinite ones
        ("features": GrFL's ``transform``).

    Returns
    -------
    ndarray or dask.array.Array
    """
    if is_dask_input(X) and not _stacked_grams(est, X):
        from ._decisions import evaluate_block, inputs_checked

        X = dask_rows(est, X)
        if hasattr(decision, "refuse_kind"):
            decision.refuse_kind(X._meta)
        args = [_shipped(decision)]
        if positions is not None:
            X, pos = _dask_task_positions(X, task_index, positions)
            if pos is not None:
                args.append(pos)
        # out_of_bounds="raise": the error names the first offending row of X
        probe = inputs_checked if getattr(decision, "refuses_outside", False) else None
        return _map_checked(est, X, evaluate_block, args, width, dtype, what, post, probe)
    if is_dask_input(X):
        # a stack of test Gram matrices (kernels first; their rows are its second axis):
        # read whole, as in memory (the models' checks refused a Dask array)
        X = X.compute()
    X = validate(X)
    pos = None
    if positions is not None:
        # (stacked test Gram matrices, kernels first: their rows are the second axis)
        pos = positions(task_index, X.shape[1] if X.ndim == 3 else X.shape[0])
    names = getattr(est, "feature_names_in_", None)
    try:
        D = decision(X, pos)
    except OutsideTrainingRange as exc:  # (out_of_bounds="raise": named as on the workers)
        raise exc.named(type(est).__name__, names) from None
    D = refuse_non_finite_outputs(D, X if name_columns else None, type(est).__name__,
                                  what, names)
    return D if post is None else post(D)


def _shipped(obj):
    """``obj`` as one key of a Dask graph (sent once, not within every block's task)."""
    import dask

    return dask.delayed(obj, pure=False)


def _dask_task_positions(X, task_index, positions):
    """The task positions of the rows of Dask ``X`` as a Dask column of its row
    chunks (None without ``task_index``), and ``X`` with known row chunks."""
    import dask.array as da

    if task_index is None and positions(None, 0) is None:
        return X, None  # (a model without tasks; or the model's words if it needs them)
    lazy = _lazy_task_positions(X, task_index, positions)
    if lazy is not None:
        return X, lazy
    if is_dask_input(task_index):
        task_index = task_index.compute()  # (n values: what the prediction returns)
    if np.isnan(X.shape[0]):
        X = X.compute_chunk_sizes()  # (only the sizes reach the client)
    pos = positions(task_index, X.shape[0])  # (one task without task_index: all 0)
    return X, da.from_array(np.asarray(pos)[:, None], chunks=(X.chunks[0], 1))


def _stacked_grams(est, X):
    """Whether ``X`` is a stack of Gram matrices of a model of precomputed kernels
    (not rows of features: it keeps the in-memory path)."""
    precomputed = getattr(est, "_precomputed", None)
    return callable(precomputed) and getattr(X, "ndim", 2) != 2 and precomputed()


def _lazy_task_positions(X, task_index, positions):
    """The task positions of the rows of Dask ``X`` from a Dask ``task_index``, made on
    the workers (None where :func:`_dask_task_positions` computes them in the client).

    Only the distinct ids are computed into the client (a few values), and the
    estimator's checks (``positions``) made on them at once: ids unseen in fit,
    ids of another kind (their words name ids, not rows).  The ids themselves
    stay on the cluster; each block's positions are looked up there.  Made
    in the client (n ids and n positions, sent back with the graph), they
    nearly tripled the client's peak of a multitask prediction.  Sizes
    unknown, or ids NumPy cannot sort (``None`` among strings): None.
    """
    import dask.array as da

    from ._decisions import looked_up

    if (not _is_dask_array(task_index) or task_index.ndim != 1
            or np.isnan(X.shape[0]) or np.isnan(task_index.shape[0])):
        return None
    if task_index.shape != (X.shape[0],):
        raise ValueError(f"task_index must have shape ({X.shape[0]},), got "
                         f"{task_index.shape}.")
    try:
        ids = da.unique(task_index).compute()
    except TypeError:
        return None
    table = np.asarray(positions(ids, len(ids)))
    chunks = (X.chunks[0],)
    return task_index.rechunk(chunks).map_blocks(
        looked_up, ids, table, chunks=(X.chunks[0], (1,)), new_axis=1, dtype=table.dtype,
        meta=np.zeros((0, 1), dtype=table.dtype))

