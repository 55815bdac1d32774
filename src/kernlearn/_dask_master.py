r"""Linear models on rows held by a Dask cluster: the row sums of a fit, and FGM's master.

A fit on a ``dask.array`` keeps every ``n``-sized object on the workers, as a
:class:`~kernlearn.partitioned.RowFutures` split like ``X`` (row partitions,
run one task per worker: :class:`~kernlearn.partitioned.GroupedRows`): the
targets, the margins, the dual vectors and the active feature block.  The
client only ever receives sums over the rows, whose size does not depend on
``n``.

Row primitives (used by FGM here; any estimator whose master is a loss of a
linear model on a small feature block can use them):

* :func:`loss_partitions` -- a loss restricted to each partition's rows
  (sample weights split once);
* :func:`linear_margins` -- ``A W + b`` per partition (a new RowFutures);
* :func:`linear_loss_value` -- :math:`\sum_i \ell(m_i, y_i)`, one float;
* :func:`linear_loss_derivatives` -- gradient ``(K, p)``, ``(K,)`` and Hessian
  blocks ``(K, p, p)``, ``(K, p)``, ``(K,)`` of the summed loss in
  ``(W, b)``, each partition's computed by
  :func:`kernlearn.solvers.prox_newton.loss_derivatives` and summed on the
  cluster;
* :class:`DaskNewtonRows` -- the same bundled as the row work of
  :class:`~kernlearn.solvers.ProxNewton` (margins cached on the workers, a
  line search that only moves scalars).

:class:`DaskMasterRows` is the ``n``-sized work of FGM's cutting planes
(:func:`kernlearn.methods.fgm.fit_fgm`) on the cluster: intercept
re-centring, dual vectors, the Fenchel dual value, the active columns, the
master.  The client holds :math:`O(|active|^2 + m)` numbers.

A worker lost mid-fit is survived when the scheduler can recompute its
partitions from their lineage (a persisted ``X`` recomputed from its source,
then every derived future); otherwise the fit stops with a RuntimeError naming
the cause (:func:`kernlearn.partitioned.gather_result`).  The history of an
FGM fit counts the workers lost (``dask_workers_lost``).
"""

from functools import partial

import numpy as np

from ._row_futures import checked_partition
from .losses._base import WeightedLoss
from ._column_sources import register_source
from .methods._fgm_rows import _part_product, active_block, centre_by_newton, with_sources
from .partitioned import (
    DaskRows,
    GroupedRows,
    PerPartition,
    RowFutures,
    _block_rmatvec,
    _is_dask_array,
    gather_result,
    removed_rows,
    worker_addresses,
)
from .solvers.choice import NEWTON_MAX_ENTRIES, MasterChoice
from .solvers.prox_newton import loss_derivatives
from .utils._finite import missing_rows_message

__all__ = [
    "DaskMasterRows",
    "DaskNewtonRows",
    "class_codes",
    "dask_target_standardization",
    "linear_loss_derivatives",
    "linear_loss_value",
    "linear_margins",
    "loss_partitions",
    "validate_dask_target",
]


def _restrict(loss, a, b):
    """``loss`` on rows ``a:b`` (per-sample weights sliced, scalar ones kept)."""
    if isinstance(loss, WeightedLoss):
        w = loss.sample_weight
        return WeightedLoss(_restrict(loss.loss, a, b), w if w.ndim == 0 else w[a:b])
    return loss


def _has_row_weights(loss):
    if isinstance(loss, WeightedLoss):
        return loss.sample_weight.ndim > 0 or _has_row_weights(loss.loss)
    return False


def loss_partitions(client, loss, bounds):
    """``loss`` for each row partition: itself, or per-partition copies of its weights.

    Parameters
    ----------
    client : distributed.Client
    loss : BaseLoss
        Possibly a :class:`~kernlearn.losses.WeightedLoss` with one weight per
        row.
    bounds : ndarray of int
        Row offsets of the partitions.

    Returns
    -------
    losses : BaseLoss or PerPartition
        The loss itself when it has no per-row weights (sent with each
        task: it is small); otherwise one future per partition holding the
        loss on that partition's rows (sent once).
    """
    if not _has_row_weights(loss):
        return loss
    return PerPartition([client.submit(_restrict, loss, a, b, pure=False)
                         for a, b in zip(bounds[:-1], bounds[1:])])


def _margins(A, W, b):
    return np.asarray(A @ W).reshape(A.shape[0], -1) + b


def linear_margins(A, W, b):
    """Margins ``A W + b`` of every partition, kept on the workers.

    Parameters
    ----------
    A : RowFutures of shape (n, p)
        Feature block (dense or sparse partitions).
    W : ndarray of shape (p, K)
    b : ndarray of shape (K,)

    Returns
    -------
    M : RowFutures of shape (n, K)
    """
    return A.map(partial(_margins, W=np.asarray(W, dtype=float), b=np.asarray(b, dtype=float)),
                 tail=(np.shape(W)[1],))


def _value(M, Y, loss):
    return np.array([float(loss.value(M, Y).sum())])


def linear_loss_value(M, Y, loss):
    r""":math:`\sum_i \ell(m_i, y_i)` over all partitions (one float reaches the client).

    Parameters
    ----------
    M : RowFutures of shape (n, K)
        Margins (:func:`linear_margins`).
    Y : RowFutures of shape (n, K)
        Targets.
    loss : BaseLoss or PerPartition
        From :func:`loss_partitions`.

    Returns
    -------
    value : float
    """
    return float(M.sum(_value, Y, loss)[0])


def _pack_derivatives(A, M, Y, loss):
    from scipy import sparse

    A = A.tocsr() if sparse.issparse(A) else np.asarray(A)
    return np.concatenate([np.ravel(t) for t in loss_derivatives(A, M, Y, loss)])


def linear_loss_derivatives(A, M, Y, loss):
    """Gradient and Hessian blocks of the summed loss in ``(W, b)``, reduced on the cluster.

    Each partition's terms are those of
    :func:`kernlearn.solvers.prox_newton.loss_derivatives`; their sum (about
    ``K (p + 1)^2`` numbers) is the only result gathered.

    Parameters
    ----------
    A : RowFutures of shape (n, p)
        Feature block.
    M : RowFutures of shape (n, K)
        Margins of the current point.
    Y : RowFutures of shape (n, K)
        Targets.
    loss : BaseLoss or PerPartition
        From :func:`loss_partitions`; needs ``hess_margin``.

    Returns
    -------
    g : ndarray of shape (K, p)
    gb : ndarray of shape (K,)
    H : ndarray of shape (K, p, p)
    hb : ndarray of shape (K, p)
    hbb : ndarray of shape (K,)
    """
    K, p = M.shape[1], A.shape[1]
    flat = A.sum(_pack_derivatives, M, Y, loss)
    sizes = np.cumsum([K * p, K, K * p * p, K * p])
    g, gb, H, hb, hbb = np.split(flat, sizes)
    return g.reshape(K, p), gb, H.reshape(K, p, p), hb.reshape(K, p), hbb


def _first_column(M):
    return M[:, 0]


def _as_column(y):
    return np.asarray(y, dtype=float).reshape(len(y), -1)


def _step(A, M, s, dW, db):
    """``M + s (A dW + db)``: the margins after a step (its direction never stored)."""
    return M if dW is None else M + s * _margins(A, dW, db)


def _value_and_derivatives(A, M, Y, loss, s, dW, db):
    """Loss sum at ``M + s (A dW + db)`` and, packed after it, the derivatives there."""
    Mt = _step(A, M, s, dW, db)
    return np.concatenate([_value(Mt, Y, loss), _pack_derivatives(A, Mt, Y, loss)])


class DaskNewtonRows:
    """The row work of :class:`~kernlearn.solvers.ProxNewton` on a Dask cluster.

    Same protocol as :class:`~kernlearn.solvers.prox_newton.LocalNewtonRows`
    (chosen by :func:`~kernlearn.solvers.prox_newton.newton_rows` when the
    active block is a :class:`~kernlearn.partitioned.RowFutures`): the
    margins and the search direction's margins stay on the workers.  Each
    round trip to the cluster costs far more than the sums of a small active
    block, so a line-search trial also brings back the gradient and Hessian
    at the trial point (the next Newton step's, when the trial is accepted,
    as it is almost always at ``s = 1``): one reduction per Newton step, whose
    tasks recompute the direction's margins ``A dW + db`` (cheaper than one
    more layer of tasks).

    Parameters
    ----------
    A : RowFutures of shape (n, p)
    y : RowFutures of shape (n,) or (n, K)
    loss : BaseLoss
    W : ndarray of shape (p, K)
    b : ndarray of shape (K,)
    """

    def __init__(self, A, y, loss, W, b):
        self.A, self.master_loss = A, loss
        self.vector = y.ndim == 1
        self.Y = y.map(_as_column, tail=(1,)) if self.vector else y
        self.loss = loss_partitions(A.client, loss, A.bounds)
        self.M = linear_margins(A, W, b)
        self.dW = self.db = None
        self._value, self._derivs = self._fused(0.0)
        self._trial = None

    def _fused(self, s):
        # One layer of tasks per round trip: the direction's margins are
        # recomputed inside (A dW costs less than a hop between workers).
        K, p = self.M.shape[1], self.A.shape[1]
        flat = self.A.sum(partial(_value_and_derivatives, s=s, dW=self.dW, db=self.db),
                          self.M, self.Y, self.loss)
        sizes = np.cumsum([1, K * p, K, K * p * p, K * p])
        _, g, gb, H, hb, hbb = np.split(flat, sizes)
        return float(flat[0]), (g.reshape(K, p), gb, H.reshape(K, p, p), hb.reshape(K, p), hbb)

    def value(self):
        """Loss summed over the rows at the current margins."""
        return self._value

    def derivatives(self):
        """Gradient and Hessian blocks (see :func:`linear_loss_derivatives`)."""
        if self._derivs is None:
            self._derivs = linear_loss_derivatives(self.A, self.M, self.Y, self.loss)
        return self._derivs

    def direction(self, dW, db):
        """Set the search direction ``(dW, db)`` (margins ``A dW + db``)."""
        self.dW, self.db = np.asarray(dW, dtype=float), np.asarray(db, dtype=float)

    def value_at(self, s):
        """Summed loss at ``M + s dM`` (the derivatives there kept for :meth:`accept`)."""
        value, derivs = self._fused(s)
        self._trial = (s, value, derivs)
        return value

    def accept(self, s):
        """Move the margins to ``M + s dM``."""
        self.M = self.A.map(partial(_step, s=s, dW=self.dW, db=self.db), self.M,
                            tail=self.M.shape[1:])
        if self._trial is not None and self._trial[0] == s:
            self._value, self._derivs = self._trial[1:]
        else:
            self._value, self._derivs = linear_loss_value(self.M, self.Y, self.loss), None
        self._trial = None

    def margin(self):
        """The margins (a RowFutures), in the shape of ``y``.

        With ``newton_sums``: the master's loss and its summed first and
        second derivatives in the intercepts at these margins, when known
        (FGM's re-centring starts from them, a round trip saved).
        """
        if self.vector:
            return self.M.map(_first_column, tail=())
        if self._derivs is not None:
            self.M.newton_sums = (self.master_loss, self._derivs[1], self._derivs[4])
        return self.M


def _constant(Y, b):
    return np.tile(b, (len(Y), 1))


def _centre_sums(M, Y, loss, delta):
    Md = M + delta
    return np.concatenate([loss.grad_margin(Md, Y).sum(0), loss.hess_margin(Md, Y).sum(0)])


def _dual_vector(M, Y, loss, delta, C):
    g = C * loss.grad_margin(M + delta, Y)
    return g[:, 0] if g.shape[1] == 1 else g


def _conjugate_sum(M, Y, loss, delta):
    return np.array([float(loss.conjugate_at_grad(M + delta, Y).sum())])


def _dual_sums(X, M, Y, loss, delta, C):
    """The summed conjugate and ``X' g`` (``g`` the dual vectors) of a partition, packed."""
    g = _dual_vector(M, Y, loss, delta, C)
    return np.concatenate([_conjugate_sum(M, Y, loss, delta), _block_rmatvec(X, g).ravel()])


class _DualRows(GroupedRows):
    """FGM's dual vectors on the workers, with ``X' g`` already reduced.

    Pricing reads the dual vectors only through :math:`X'u` with ``u = -g``
    (:meth:`kernlearn.partitioned.DaskRows.rmatvec`), which came back with the
    conjugate sum: the vectors themselves are computed on first use only.
    """

    def __init__(self, make, like, tail, known_rmatvec):
        self._make, self._futures = make, None
        self.client, self.groups, self.bounds = like.client, like.groups, like.bounds
        self.shape = (like.shape[0],) + tuple(tail)
        self.known_rmatvec = known_rmatvec

    @property
    def group_futures(self):
        """The partitions' futures (submitted on first use)."""
        if self._futures is None:
            self._futures = self._make().group_futures
        return self._futures

    def __neg__(self):
        return _DualRows(lambda: GroupedRows.__neg__(self), self, self.shape[1:],
                         -self.known_rmatvec)


def _hstack_parts(*parts):
    return active_block(list(parts))


def _targets(client, y, bounds):
    """Targets ``(n, K)`` as RowFutures split like ``X``; a Dask ``y`` never leaves the cluster."""
    if _is_dask_array(y):
        y = y.astype(float)
        if y.ndim == 1:
            y = y[:, None]
        return RowFutures.from_dask(client, y, bounds)
    y = np.asarray(y, dtype=float)
    return RowFutures.from_array(client, y.reshape(len(y), -1), bounds)


class DaskMasterRows:
    """The ``n``-sized work of FGM's cutting planes, on the cluster holding ``X``.

    The counterpart of ``kernlearn.methods.fgm._LocalRows`` (same methods):
    margins, targets, dual vectors and the active columns are
    :class:`~kernlearn.partitioned.RowFutures`; the master is proximal Newton
    on :class:`DaskNewtonRows`.

    Parameters
    ----------
    rows : DaskRows
        ``X`` on a distributed client.
    y : ndarray or dask.array.Array of shape (n,) or (n, K)
        Targets (``+-1`` per output, or real); a Dask array stays on the
        workers.
    loss : BaseLoss
        The loss (sample weights folded in).
    C : float
        Loss weight.
    """

    row_work = DaskNewtonRows  # the Newton master's row work on the workers

    def __init__(self, rows, y, loss, C):
        if not isinstance(rows, DaskRows) or rows.blocks is None:
            raise TypeError("DaskMasterRows needs a DaskRows on a distributed client.")
        self.rows, self.client, self.C = rows, rows.client, float(C)
        # (in X's grouping: one task per worker and pass, see GroupedRows)
        self.Y = rows.blocks.align(_targets(self.client, y, rows.bounds))
        self.K = self.Y.shape[1]
        self._loss = loss
        self.loss = loss_partitions(self.client, loss, rows.bounds)
        self._seen = worker_addresses(self.client)
        self._lost = set()
        self._removed = removed_rows(rows, loss)

    def intercept_only(self):
        """Optimal intercepts of the empty model (Newton on the intercepts from 0)."""
        return self.centre(self.constant_margins(np.zeros(self.K)))

    def constant_margins(self, b):
        """Margins equal to ``b`` on every row."""
        return self.Y.map(partial(_constant, b=np.asarray(b, dtype=float)), tail=(self.K,))

    def centre(self, M):
        """Intercept shifts with zero summed loss gradient (see ``fgm._centre_intercepts``)."""
        known = self._known_sums(M)

        def sums(delta):
            if known is not None and not delta.any():
                return known
            out = M.sum(partial(_centre_sums, delta=delta), self.Y, self.loss)
            return out[: self.K], out[self.K:]

        return centre_by_newton(sums, self.K)

    def _known_sums(self, M):
        """:math:`\\sum \\ell'` and :math:`\\sum \\ell''` at ``M`` from the master's last
        Newton step, when its loss is this one times a constant (else None)."""
        known = getattr(M, "newton_sums", None)
        if known is None:
            return None
        loss, g, h = known
        c = 1.0
        if loss is not self._loss and isinstance(loss, WeightedLoss) \
                and loss.sample_weight.ndim == 0 and loss.loss is self._loss:
            c = float(loss.sample_weight)
        elif loss is not self._loss:
            return None
        return (g / c, h / c) if c > 0 else None

    def dual_point(self, M, centre):
        """FGM's dual vectors ``C l'(m)`` (on the workers) and the summed conjugate.

        Parameters
        ----------
        M : RowFutures of shape (n, K)
            Margins of the current model.
        centre : bool
            Re-centre the intercepts first.

        Returns
        -------
        grad : RowFutures of shape (n,) or (n, K)
        conjugate : float
            :math:`\\sum_i \\ell^*(\\ell'(m_i))` at the (re-centred) margins.
        """
        delta = self.centre(M) if centre else np.zeros(self.K)
        tail = () if self.K == 1 else (self.K,)
        # one pass: the conjugate sum and pricing's X'g (see _DualRows)
        flat = self.rows.blocks.sum(partial(_dual_sums, delta=delta, C=self.C), M, self.Y,
                                    self.loss)
        grad = _DualRows(lambda: M.map(partial(_dual_vector, delta=delta, C=self.C), self.Y,
                                       self.loss, tail=tail),
                         M, tail, flat[1:].reshape((self.rows.shape[1],) + tail))
        return grad, float(flat[0])

    def columns(self, pool, cand):
        """The candidates' scaled columns, kept on the workers."""
        feats, weights = pool.column_indices(cand)
        block = self.rows.columns_on_workers(feats, weights, *self._removed)
        block.fgm_columns = (np.asarray(feats), None if weights is None
                             else np.asarray(weights, dtype=float))  # (constraint_values)
        if weights is None or not hasattr(pool, "raw_columns"):
            return block
        # (the raw columns, for the master's shift of far-offset ones: shifted_block)
        return register_source(block, lambda: self.rows.columns_on_workers(
            feats, None, *self._removed), block.fgm_columns[1])

    def constraint_values(self, blocks, grad):
        r"""Value :math:`\|A_t' u\|_F^2` of each active constraint at the dual point.

        From the dual point's :math:`X'g`, reduced with its conjugate sum
        (``known_rmatvec``): :math:`A_t'g` is its rows ``feats`` times the
        columns' scales (a row of weight 0 has ``g = 0``), so no round trip;
        else one reduction of :math:`A'g` over the partitions for all blocks.
        Without these values the cluster kept Theorem 3's exact test, and with
        ``max_features`` never grew a group of new features that together
        violate the optimality condition (``_grow_group``): the fit stopped
        "converged" with fewer features at a higher objective than in memory,
        or ran to ``max_iter``.

        Parameters
        ----------
        blocks : list of RowFutures
            The active constraints' columns (from :meth:`columns`).
        grad : RowFutures
            The dual vectors (from :meth:`dual_point`).

        Returns
        -------
        ndarray of shape (len(blocks),)
        """
        known = getattr(grad, "known_rmatvec", None)
        cols = [getattr(b, "fgm_columns", None) for b in blocks]
        if known is not None and all(c is not None for c in cols):
            Z = np.asarray(known).reshape(known.shape[0], -1)
            return np.array([float(np.sum(np.square(
                Z[f] if w is None else w[:, None] * Z[f]))) for f, w in cols])
        Z = np.asarray(self.active_block(blocks).sum(_part_product, grad))
        sq = np.square(Z).reshape(Z.shape[0], -1).sum(axis=1)
        starts = np.cumsum([0] + [b.shape[1] for b in blocks[:-1]])
        return np.add.reduceat(sq, starts)

    def active_block(self, blocks):
        """The active constraints' columns side by side, per partition."""
        p = sum(b.shape[1] for b in blocks)
        return with_sources(blocks[0].map(_hstack_parts, *blocks[1:], tail=(p,)), blocks)

    def choose_master(self, n, p, K, loss, solver, blocks=None):
        """Proximal Newton: on a cluster a first-order step costs a round trip each.

        (``blocks``, the active column blocks the local rows size the Hessian
        with, are not read: there is no other master to choose.)

        Raises
        ------
        ValueError
            For ``solver="apg"`` or ``"simplemkl"``, or an active set whose
            Hessian is too large (``K (p + 1)^2`` above
            :data:`~kernlearn.solvers.choice.NEWTON_MAX_ENTRIES`).
        """
        if solver not in ("auto", "newton"):
            raise ValueError(f"solver={solver!r} is not available on a Dask array: the "
                             "master on the cluster is proximal Newton (solver='auto' "
                             "or 'newton').")
        if not callable(getattr(loss, "hess_margin", None)):
            raise ValueError("the Dask master is proximal Newton; the loss has no "
                             "hess_margin.")
        if K * (p + 1) ** 2 > NEWTON_MAX_ENTRIES:
            raise ValueError(f"{p} active columns: the Newton master's Hessian would hold "
                             f"more than {NEWTON_MAX_ENTRIES} entries; use fewer features "
                             "per fit (B, max_iter or max_features).")
        return MasterChoice("newton", 0 if solver == "newton" else 6)

    def enter_new_group(self, block, M, W, indptr):  # pragma: no cover - APG only
        raise ValueError("the Dask master is proximal Newton (no APG warm start).")

    def extras(self):
        """History entries: workers that left the cluster during the fit so far."""
        now = worker_addresses(self.client)
        self._lost |= self._seen - now
        self._seen |= now
        return {"dask_workers_lost": float(len(self._lost))}


def _block_unique(y):
    return np.unique(np.asarray(y))


def _block_nonfinite(y):
    return np.array([np.count_nonzero(~np.isfinite(np.asarray(y, dtype=float)))])


def _block_first_nan(y, test=np.isnan):
    """``[count, first row]`` of the block's NaN labels (first row -1 without one;
    ``test``: another kind, e.g. ``np.isinf``)."""
    rows = np.flatnonzero(test(np.asarray(y, dtype=float)))
    return np.array([rows.size, rows[0] if rows.size else -1])


def _missing_label_error(found, bounds, what="a missing value"):
    """The in-memory fit's error for NaN labels, from each partition's ``[count, first row]``."""
    found = np.asarray(found).reshape(-1, 2)
    p = int(np.flatnonzero(found[:, 0])[0])
    return ValueError(missing_rows_message(int(bounds[p] + found[p, 1]),
                                           int(found[:, 0].sum()), what))


def validate_dask_target(est, rows, y, classification):
    """Validate a Dask ``y`` against row-partitioned ``X``; ``y`` stays on the cluster.

    Only its shape, its classes (classification) or its count of non-finite
    entries (regression) reach the client.

    Parameters
    ----------
    est : BaseEstimator
        The estimator (``n_features_in_`` is set).
    rows : DaskRows
        ``X`` on a distributed client.
    y : dask.array.Array of shape (n_samples,)
    classification : bool

    Returns
    -------
    rows : DaskRows
    y : dask.array.Array of shape (n_samples,)
        Chunked like ``X``.

    Raises
    ------
    ValueError
        On a shape mismatch, fewer than two classes, or non-finite targets.
    TypeError
        When ``X`` is not a Dask array on a distributed client.
    """
    if not isinstance(rows, DaskRows) or rows.blocks is None:
        raise TypeError("a Dask y needs X as a Dask array on a distributed client.")
    n, m = rows.shape
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if any(np.isnan(c) for c in y.chunks[0]):
        y = y.compute_chunk_sizes()
    if y.shape != (n,):
        raise ValueError(f"y has shape {y.shape}; X has {n} rows.")
    if n < 2 or m < 1:
        raise ValueError(f"X of shape {rows.shape}: need at least 2 samples and 1 feature.")
    y = y.rechunk({0: tuple(int(c) for c in np.diff(rows.bounds))})
    b = rows.bounds
    parts = RowFutures.from_dask(rows.client, y, b).map(
        partial(checked_partition, name="y"),
        PerPartition([(i, b[i], b[i + 1], ()) for i in range(len(b) - 1)]))
    if classification:
        classes = np.unique(np.concatenate(
            gather_result(parts.map(_block_unique).futures)))
        if classes.dtype.kind == "f" and np.isnan(classes).any():
            # (NaN was a class of its own, where the in-memory fit refuses its row)
            raise _missing_label_error(gather_result(parts.map(_block_first_nan).futures),
                                       rows.bounds)
        if classes.size < 2:
            raise ValueError(f"y must hold at least two classes; got {classes.size}.")
        if classes.size > round(0.5 * n):
            raise ValueError(f"y holds {classes.size} distinct values for {n} samples: "
                             "a regression target, not class labels.")
    elif parts.sum(_block_nonfinite)[0] > 0:
        # (named by its first row, NaN before infinity, as in memory: it was
        # "y contains NaN or infinity" alone)
        for test, what in ((np.isnan, "a missing value"), (np.isinf, "an infinite value")):
            found = gather_result(parts.map(partial(_block_first_nan, test=test)).futures)
            if np.asarray(found).reshape(-1, 2)[:, 0].any():
                raise _missing_label_error(found, rows.bounds, what)
    est.n_features_in_ = m
    if hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    return rows, y


def class_codes(y):
    """Classes and integer codes of labels: ``np.unique(y, return_inverse=True)``.

    A Dask ``y`` gets lazy codes (computed on the workers); only the classes
    reach the client.

    Parameters
    ----------
    y : ndarray or dask.array.Array of shape (n_samples,)

    Returns
    -------
    classes : ndarray
    codes : ndarray or dask.array.Array of int
    """
    if not _is_dask_array(y):
        return np.unique(y, return_inverse=True)
    import dask

    uniques = dask.compute(*[dask.delayed(_block_unique)(b) for b in y.to_delayed().ravel()])
    classes = np.unique(np.concatenate(uniques))
    return classes, y.map_blocks(_codes, classes,
                                 dtype=np.int64)


def _codes(y, classes):
    return np.searchsorted(classes, y)


def dask_target_standardization(y, sample_weight=None, standardize=True):
    """:func:`~kernlearn.preprocessing.fit_target_standardization` of a Dask ``y``.

    Two scalar reductions on the cluster; the returned map's ``transform``
    keeps ``y`` lazy.

    Parameters
    ----------
    y : dask.array.Array of shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,), optional
    standardize : bool, default=True

    Returns
    -------
    TargetStandardization
    """
    from .preprocessing import TargetStandardization, constant_targets

    class _Lazy(TargetStandardization):
        def transform(self, y):
            return (y.astype(float) - self.mean[0]) / self.scale[0]

    if not standardize:
        return _Lazy(np.zeros(1), np.ones(1))
    import dask.array as da

    y = y.astype(float)
    w = (da.ones_like(y) if sample_weight is None
         else da.from_array(np.asarray(sample_weight, float), chunks=y.chunks))
    sw, swy, lo, hi = da.compute(w.sum(), (w * y).sum(), da.where(w > 0, y, np.inf).min(),
                                 da.where(w > 0, y, -np.inf).max())
    mean = swy / sw
    # (a zero weight's target left out, not weighted by 0: the square of a
    # removed target of 1e160 overflowed, 0 * inf = NaN, "y is too large";
    # it is the mean before the subtraction, which it could overflow)
    r = da.where(w > 0, y, mean) - mean
    var = float(da.map_blocks(_weighted_squares, w, r, 1.0, dtype=float).sum().compute() / sw)
    if not (np.isfinite(mean) and np.isfinite(var)):
        raise ValueError("y is too large to standardise in float64 (its variance "
                         "overflows); rescale the target.")
    spread = np.sqrt(var)
    if var < np.finfo(np.float64).tiny:
        # squares that underflow (targets near 1e-300) passed for a constant
        # target, scale 0: the spread of the deviations over their largest, as
        # in memory (preprocessing._spread), multiplied back
        c = float(abs(r).max().compute()) or 1.0
        spread = c * np.sqrt(float(da.map_blocks(_weighted_squares, w, r, c, dtype=float)
                                   .sum().compute() / sw))
    mean, scale = constant_targets(*(np.array([v], dtype=float)
                                     for v in (mean, spread, lo, hi)))
    return _Lazy(mean, scale)


def _weighted_squares(w, r, c):
    """``w * (r / c)**2`` of one block, its overflow left to the caller's check
    (a bare NumPy warning on the worker said nothing the error does not)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return w * np.square(r / c)
