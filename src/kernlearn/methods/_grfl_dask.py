r"""GrFL on a ``dask.array``: pricing and master on the row partitions.

Everything GrFL (:mod:`kernlearn.methods.grfl`) reads from the rows is a sum
over row blocks, so with ``X`` a ``dask.array`` every pass runs on the
workers and only small sums reach the client:

* **standardisation and the default width**: per-column moments and the
  variance of all entries (``gamma="scale"``), reduced (``n_features``-sized);
* **pricing**: the sampled candidates' raw correlations :math:`\Phi_v'G` and
  squared norms on each partition
  (:meth:`~kernlearn.families._infinite.InfiniteFamily.correlation_sums`),
  reduced (``n_candidates``-sized); the estimate on a row subsample draws the
  same rows as in memory and gathers only those (``pricing_subsample`` rows);
* **master** (the proximal Newton solver
  :class:`~kernlearn.solvers.grfl_newton.GrFLNewton`, unchanged): each
  partition holds its rows of the active columns, its margins and its part
  of the generalised Hessian (updated where the curvature changed, as in
  memory); a Newton step reduces the gradients (``|active| x T``), the
  Hessian blocks (``(|active|+1)^2`` per task), the maximal curvature and the
  loss values of the line search.

The client holds :math:`O(|active|^2 + d)` numbers besides the targets ``y``
(which the user passes in memory) and the ``pricing_subsample`` rows, however
large ``n``; the model is the in-memory one up to the rounding of the sums.

The row-block primitives (``block_*``) are those of any linear model on a
block of columns over row partitions (margins, loss, gradient, Hessian,
column moments); :class:`Partitioned` maps them over the partitions and
reduces their results on the cluster.  Without a ``distributed`` client the
partitions are computed and kept in this process (same code, no cluster).
"""

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..partitioned import _current_client, stack_rows
from ..preprocessing import Standardization, _from_mean_var, standardization_from_moments
from ..solvers.grfl_newton import GrFLNewton, hessian_block
from .grfl import GrFL, _GrFLProblem

__all__ = [
    "DaskGrFL",
    "DaskGrFLRows",
    "HessianBlock",
    "Partitioned",
    "RowBlock",
    "block_column_moments",
    "block_curvature",
    "block_gradient",
    "block_hessian",
    "block_loss",
    "block_margins",
    "dask_fit_inputs",
]


# ------------------------------------------------------------------ reductions
def _sum_all(parts):
    """Sum of a list of arrays, or of tuples of arrays entry by entry."""
    total = parts[0]
    for p in parts[1:]:
        total = (tuple(a + b for a, b in zip(total, p)) if isinstance(total, tuple)
                 else total + p)
    return total


def _max_all(parts):
    return max(parts)


def _sum_hessians(blocks):
    return _sum_all([b.H for b in blocks])


# ------------------------------------------------------------ the row blocks
@dataclass(frozen=True)
class RowBlock:
    """One row partition of a linear model's data, on a worker.

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_rows, n_features)
        The partition's (standardised) inputs.
    Y : ndarray of shape (n_rows, T), optional
        Its targets.
    Phi : ndarray of shape (n_rows, capacity), optional
        Buffer of the active columns on these rows (column-major); only the
        first ``p`` columns belong to this block.  Appending writes the next
        columns of the same buffer, which leaves every earlier block (with a
        smaller ``p``) unchanged.
    p : int, default=0
        Active columns.
    """

    X: object
    Y: np.ndarray = None
    Phi: np.ndarray = None
    p: int = 0

    @property
    def active(self):
        """The active columns ``Phi[:, :p]`` (no copy)."""
        return self.Phi[:, : self.p]


@dataclass(frozen=True)
class HessianBlock:
    """A partition's part of the generalised Hessians and its curvatures.

    Parameters
    ----------
    H : ndarray of shape (T, p + 1, p + 1)
        :math:`[\\Phi_P\\ 1]'\\mathrm{diag}(d_t)[\\Phi_P\\ 1]` per task (intercept last).
    D : ndarray of shape (n_rows, T)
        The curvatures ``H`` was computed at.
    p : int
        Active columns ``H`` covers.
    """

    H: np.ndarray
    D: np.ndarray
    p: int


def block_column_moments(X, mean=None):
    """Per-column sums of a block: rows, :math:`\\sum x`, :math:`\\sum (x - mean)^2`.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_rows, n_features)
    mean : ndarray of shape (n_features,), optional
        Centre of the squares (default 0).

    Returns
    -------
    moments : ndarray of shape (2 * n_features + 2,)
        ``[n_rows, colsum, colsq, n_nonfinite]`` (sums add up over blocks).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        data = np.asarray(X.data, dtype=float)
        s1 = np.bincount(X.indices, weights=data, minlength=X.shape[1])
        if mean is not None:
            raise ValueError("sparse blocks are not centred.")
        s2 = np.bincount(X.indices, weights=np.square(data), minlength=X.shape[1])
    else:
        data = np.asarray(X, dtype=float)
        s1 = np.ones(len(data)) @ data if len(data) else np.zeros(X.shape[1])
        with np.errstate(over="ignore", invalid="ignore"):
            c = data if mean is None else data - mean
            s2 = np.einsum("ij,ij->j", c, c)
    bad = data.size - np.count_nonzero(np.isfinite(data))
    return np.concatenate([[X.shape[0]], s1, s2, [bad]])


def block_margins(B, V, b):
    """Margins ``Phi V + b`` of a block's rows.

    Parameters
    ----------
    B : RowBlock
    V : ndarray of shape (p, T)
        Weights of the active columns per task.
    b : ndarray of shape (T,)
        Biases.

    Returns
    -------
    M : ndarray of shape (n_rows, T)
    """
    return B.active @ V + b


def block_loss(M, B, loss):
    """:math:`\\sum_{i,t} \\ell(m_{it}, y_{it})` over a block's rows.

    Parameters
    ----------
    M : ndarray of shape (n_rows, T)
    B : RowBlock
    loss : BaseLoss

    Returns
    -------
    value : float
    """
    return float(loss.value(M, B.Y).sum())


def block_loss_gradients(M, B, loss):
    """:math:`\\ell'(m, y)` on a block's rows (shape of ``M``)."""
    return loss.grad_margin(M, B.Y)


def block_gradient(M, B, loss):
    """Gradient of the loss in the active weights and the biases, from one block.

    Parameters
    ----------
    M : ndarray of shape (n_rows, T)
    B : RowBlock
    loss : BaseLoss

    Returns
    -------
    gW : ndarray of shape (p, T)
        :math:`\\Phi_P'\\ell'`.
    gb : ndarray of shape (T,)
        :math:`\\mathbf 1'\\ell'`.
    """
    G = loss.grad_margin(M, B.Y)
    return B.active.T @ G, np.ones(G.shape[0]) @ G


def _loss_gradient_curvature(M, B, loss):
    """One pass at margins ``M``: loss, gradient, largest curvature."""
    return (block_loss(M, B, loss),) + block_gradient(M, B, loss) + (
        _abs_max(loss.hess_margin(M, B.Y)),)


def _sum_sum_sum_max(parts):
    return tuple(_sum_all([q[k] for q in parts]) for k in range(3)) + (
        max(q[3] for q in parts),)


def block_curvature(M, B, loss):
    """Generalised second derivatives :math:`\\ell''(m, y)` on a block's rows."""
    return loss.hess_margin(M, B.Y)


def _abs_max(D):
    return float(np.abs(D).max(initial=0.0))


def block_hessian(B, D):
    """The block's Hessians at curvature ``D`` (one per task), from scratch.

    Parameters
    ----------
    B : RowBlock
    D : ndarray of shape (n_rows, T)

    Returns
    -------
    HessianBlock
    """
    H = np.stack([hessian_block(B.active, D[:, t]) for t in range(D.shape[1])])
    return HessianBlock(H, D.copy(), B.p)


def block_hessian_extend(B, old):
    """``old`` extended to the block's new active columns, at ``old``'s curvature.

    Parameters
    ----------
    B : RowBlock
        With ``B.p >= old.p`` (columns appended since ``old``).
    old : HessianBlock

    Returns
    -------
    HessianBlock
    """
    q, p, T = old.p, B.p, old.H.shape[0]
    if q == p:
        return old
    new, keep = np.r_[np.arange(q, p), p], np.r_[np.arange(q), p]
    H = np.empty((T, p + 1, p + 1))
    for t in range(T):
        H[t][np.ix_(keep, keep)] = old.H[t]
        C = hessian_block(B.active, old.D[:, t], cols=new)
        H[t][:, new] = C
        H[t][new, :] = C.T
    return HessianBlock(H, old.D, p)


def block_hessian_refresh(B, old, D, threshold):
    """Move ``old`` to curvature ``D``: rank updates on the rows that changed.

    The rule of the in-memory solver: rows whose curvature moved by more than
    ``threshold`` are updated (the block is rebuilt when over a third moved).

    Parameters
    ----------
    B : RowBlock
    old : HessianBlock
    D : ndarray of shape (n_rows, T)
    threshold : float

    Returns
    -------
    HessianBlock
    """
    H, Dh = old.H.copy(), old.D.copy()
    for t in range(D.shape[1]):
        d_new, d_old = D[:, t], Dh[:, t]
        idx = np.flatnonzero(np.abs(d_new - d_old) > threshold)
        if not idx.size:
            continue
        if idx.size > len(d_new) // 3:
            H[t] = hessian_block(B.active, d_new)
        else:
            H[t] += hessian_block(B.active[idx], d_new[idx] - d_old[idx])
        d_old[idx] = d_new[idx]
    return HessianBlock(H, Dh, old.p)


def _block_reserve(B, capacity):
    if B.Phi is not None and B.Phi.shape[1] >= capacity:
        return B
    Phi = np.empty((B.X.shape[0], capacity), order="F")
    if B.p:
        Phi[:, : B.p] = B.active
    return replace(B, Phi=Phi)


def _block_append(B, family, params, norms):
    """The block with the candidate's columns (divided by ``norms``) appended."""
    block = family.columns(params, B.X) / norms
    p0, p = B.p, B.p + block.shape[1]
    B.Phi[:, p0:p] = block  # beyond every earlier block's p: they are unchanged
    return replace(B, p=p)


def _block_gram_columns(B, p0):
    new = B.Phi[:, p0 : B.p]
    return B.active.T @ new, np.ones(len(new)) @ new


def _block_correlations(B, G, family, params, low_precision):
    return family.correlation_sums(params, B.X, G, None, low_precision)


def _block_standardized(X, st):
    return st.transform(X)


def _block_rows(X, idx):
    return X[idx]


def _block_with_targets(X, Y):
    return RowBlock(X=X, Y=Y)


def _block_x(B):
    return B.X


def _axpy(a, b, s):
    return a + s * b


def _as_block(X):
    """A computed dask chunk as a float ndarray or a canonical CSR matrix."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=float if X.dtype.kind != "f" else X.dtype)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return X
    X = np.asarray(X)
    return X if X.dtype.kind == "f" else X.astype(np.float64)


# --------------------------------------------------------- the partitioned map
class Partitioned:
    """Per-partition values (one per row partition), mapped and reduced on a cluster.

    Parameters
    ----------
    client : distributed.Client or None
        Where the partitions live; ``None`` keeps them in this process.
    parts : list
        One future (or, without a client, one value) per partition.
    bounds : ndarray of int
        Row offsets of the partitions.
    width : int
        Columns of the partitions' row-aligned values (their ``shape[1]``).

    Attributes
    ----------
    shape : tuple of int
        ``(n_rows, width)``.
    """

    def __init__(self, client, parts, bounds, width):
        self.client, self.parts = client, list(parts)
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.shape = (int(self.bounds[-1]), int(width))

    def _like(self, parts, width=None):
        return Partitioned(self.client, parts, self.bounds,
                           self.shape[1] if width is None else width)

    def map(self, fn, *args, width=None):
        """``fn(part, *args)`` on every partition (lazily, on the cluster).

        Parameters
        ----------
        fn : callable
            Module-level function (it is shipped to the workers).
        *args
            A :class:`Partitioned` is passed partition by partition; anything
            else (small) to every call.
        width : int, optional
            ``shape[1]`` of the result (default: this one's).

        Returns
        -------
        Partitioned
        """
        per = [a.parts if isinstance(a, Partitioned) else None for a in args]
        out = []
        for i, part in enumerate(self.parts):
            call = [a if q is None else q[i] for a, q in zip(args, per)]
            out.append(fn(part, *call) if self.client is None
                       else self.client.submit(fn, part, *call, pure=False))
        return self._like(out, width)

    def reduce(self, fn=_sum_all):
        """``fn(list of the partitions' values)``, run on the cluster; its result.

        Parameters
        ----------
        fn : callable, default=elementwise sum
            Module-level reduction of the list.

        Returns
        -------
        result : object
            The (small) reduced value, here.
        """
        if self.client is None:
            return fn(self.parts)
        return self.client.gather(self.client.submit(fn, self.parts, pure=False))

    def take(self, rows):
        """The given rows of the partitions' values, gathered here.

        Parameters
        ----------
        rows : ndarray of int
            Sorted row indices (a few: the pricing subsample).

        Returns
        -------
        ndarray or scipy.sparse matrix
        """
        rows = np.asarray(rows, dtype=np.int64)
        which = np.searchsorted(self.bounds, rows, side="right") - 1
        tasks = []
        for i in np.unique(which):
            local = rows[which == i] - self.bounds[i]
            tasks.append(_block_rows(self.parts[i], local) if self.client is None
                         else self.client.submit(_block_rows, self.parts[i], local,
                                                 pure=False))
        got = tasks if self.client is None else self.client.gather(tasks)
        return stack_rows(got)

    __getitem__ = take

    def __add__(self, other):
        # ``M + s * dM`` (the Newton line search): one task per partition, and
        # the same object again for the accepted step (with its loss and
        # gradients, when computed)
        if not isinstance(other, _Scaled):
            other = _Scaled(other, 1.0)
        key = (id(other.base), other.s)
        memo = self.__dict__.setdefault("_steps", {})
        hit = memo.get(key)
        if hit is None or hit[0] is not other.base:
            memo.clear()  # one entry: the last step
            hit = memo[key] = (other.base, self.map(_axpy, other.base, other.s))
        return hit[1]

    def __mul__(self, s):
        return _Scaled(self, float(s))

    __rmul__ = __mul__


class _Scaled:
    """``s * base`` for a :class:`Partitioned` ``base``, formed when added to another."""

    def __init__(self, base, s):
        self.base, self.s, self.shape = base, s, base.shape


# ----------------------------------------------------------------- the inputs
class DaskGrFLRows:
    """A ``dask.array`` ``X`` as GrFL reads it: its row partitions on the cluster.

    What the estimators' ``fit`` passes on in place of ``X``: it standardises
    itself from moments reduced on the cluster (:meth:`standardize`), fits the
    family's data-dependent width there (:meth:`fit_family`), and names the
    GrFL run that keeps the master on the partitions (:attr:`grfl_class`).

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Dense or scipy-sparse chunks (column chunks are merged).
    client : distributed.Client, optional
        Default: the current client, if any (else the partitions are computed
        into this process).

    Attributes
    ----------
    shape : tuple of int
    sparse : bool
        Whether the partitions are sparse.
    """

    def __init__(self, X, client=None):
        import dask

        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        client = client if client is not None else _current_client()
        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        if any(np.isnan(c) for c in X.chunks[0]):
            X = X.compute_chunk_sizes()  # only the sizes reach the client
        bounds = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        delayed = [dask.delayed(_as_block)(d) for d in X.to_delayed().ravel().tolist()]
        parts = (client.compute(delayed) if client is not None
                 else list(dask.compute(*delayed)))
        self.sparse = sp.issparse(getattr(X, "_meta", None))
        self.rows = Partitioned(client, parts, bounds, X.shape[1])
        self.shape = self.rows.shape

    @classmethod
    def _from_rows(cls, rows, sparse):
        self = cls.__new__(cls)
        self.rows, self.shape, self.sparse = rows, rows.shape, sparse
        return self

    def __getitem__(self, rows):
        return self.rows.take(rows)

    def _moments(self, mean=None):
        n, d = self.shape
        m = self.rows.map(block_column_moments, mean).reduce()
        if m[-1] > 0:
            raise ValueError(f"X contains NaN or infinity ({int(m[-1])} entries).")
        return m[1 : d + 1], m[d + 1 : 2 * d + 1]

    def standardize(self, sample_weight, standardize):
        """The per-column standardisation, fitted on the cluster, and ``X`` mapped by it.

        Parameters
        ----------
        sample_weight : None
            Row weights are not supported on a cluster (``ValueError``).
        standardize : bool
            ``False``: the identity map (``X`` is still checked to be finite).

        Returns
        -------
        st : kernlearn.preprocessing.Standardization
            What :func:`~kernlearn.preprocessing.fit_standardization` gives
            in memory (centred for dense partitions, scaled only for sparse).
        Xt : DaskGrFLRows
        """
        if sample_weight is not None:
            raise ValueError("sample_weight and class_weight are not supported with a "
                             "dask.array X; fit without them (or in memory).")
        n = self.shape[0]
        s1, s2 = self._moments()  # (also the finiteness check)
        if not standardize:
            return Standardization(), self
        if self.sparse:
            st = standardization_from_moments(float(n), s1, s2, center=False)
        else:
            mean = s1 / n
            # two passes, as in memory: accurate for columns with a large offset
            var = self._moments(mean)[1] / n
            st = _from_mean_var(mean, var, center=True)
        out = self._from_rows(self.rows.map(_block_standardized, st), self.sparse)
        self.rows = None  # the raw partitions are no longer needed on the workers
        return st, out

    def scale_gamma(self):
        """scikit-learn's ``gamma="scale"``, :math:`1/(D\\,\\mathrm{Var}(X))`, on the cluster.

        Returns
        -------
        gamma : float
        """
        n, d = self.shape
        s1, s2 = self._moments()
        mean = s1.sum() / (n * d)
        if self.sparse:
            var = s2.sum() / (n * d) - mean**2
        else:
            var = self._moments(np.full(d, mean))[1].sum() / (n * d)
        if not np.isfinite(var):
            raise ValueError("gamma='scale' cannot be computed: the spread of the data "
                             "overflows; rescale the inputs (standardize=True does).")
        return 1.0 / (d * (var if var > 0 else 1.0))

    def fit_family(self, family):
        """Fit ``family`` (in place) as on the whole ``X``, reading two rows here.

        Parameters
        ----------
        family : RandomFourierFeatures
            Its ``gamma="scale"`` is computed on the cluster.

        Returns
        -------
        family : RandomFourierFeatures
        """
        from ..families import RandomFourierFeatures

        if type(family) is not RandomFourierFeatures:
            raise TypeError("GrFL on a dask.array X supports the RandomFourierFeatures "
                            f"family only, got {type(family).__name__}; fit in memory.")
        head = self.rows.take(np.arange(min(2, self.shape[0])))
        data_width = (family.bandwidth is None and family.bandwidth_range is None
                      and isinstance(family.gamma, str) and family.gamma == "scale")
        if not data_width:
            return family.fit(head)
        # the validation and widths_ of fit(X), with the width reduced on the cluster
        family.set_params(gamma=self.scale_gamma())
        try:
            family.fit(head)
        finally:
            family.set_params(gamma="scale")
        return family

    @property
    def grfl_class(self):
        """The GrFL run for these rows: :class:`DaskGrFL`."""
        return DaskGrFL


def dask_fit_inputs(est, X, y, multi_output=False, y_numeric=False):
    """Check a GrFL estimator's ``fit`` arguments when ``X`` is a ``dask.array``.

    Parameters
    ----------
    est : InfiniteFeatureClassifier or InfiniteFeatureRegressor
    X : dask.array.Array of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        In memory (it is read here).
    multi_output, y_numeric : bool
        The regressor's ``validate_data`` options (a 2-D ``y`` is refused).

    Returns
    -------
    X : DaskGrFLRows
    y : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        For what the Dask path does not do: ``warm_start``, Platt
        probabilities, a 2-D ``y``.
    """
    from ..estimators._base import validate_partitioned_fit

    name = type(est).__name__
    if est.warm_start:
        raise ValueError(f"{name}: warm_start=True is not supported with a dask.array X.")
    if getattr(est, "probability", False) and est.loss != "logistic":
        raise ValueError(f"{name}: probability=True (Platt scaling by cross-validation) "
                         "is not supported with a dask.array X; use loss='logistic'.")
    y = np.asarray(y)
    if multi_output and y.ndim == 2 and y.shape[1] > 1:
        raise ValueError(f"{name}: a 2-D y (several outputs) is not supported with a "
                         "dask.array X.")
    rows = DaskGrFLRows(X)
    rows, y = validate_partitioned_fit(est, rows, y, classification=not y_numeric)
    return rows, y


# ---------------------------------------------------------------- the master
class _Targets:
    """The targets' place in the master: their shape (they live in the row blocks)."""

    def __init__(self, shape):
        self.shape = shape


class _LossOnRows:
    """The loss as the Newton solver calls it, on partitioned margins."""

    def __init__(self, loss, rows):
        self.loss, self.rows = loss, rows
        self.lipschitz = loss.lipschitz

    def hess_margin(self, M, Y):
        D = M.map(block_curvature, self.rows, self.loss)
        D.abs_max = getattr(M, "curvature_max", None)
        return D


class _DaskHessians:
    """Mirror of the Newton solver's Hessians, kept per partition on the cluster."""

    def __init__(self, P, rtol):
        self.P, self.rtol = P, rtol
        self._at = (None, 0.0)  # the curvature the blocks hold, and its rtol

    def start(self, D, state):
        P = self.P
        old = getattr(state, "hess", None)
        if old is not None and "blocks" in old and old["T"] == P.T and old["p"] <= P.p:
            # columns appended since: extended at the old curvature, then updated
            self.blocks = P.Phi.map(block_hessian_extend, old["blocks"])
            return self.update(D)
        self.blocks = P.Phi.map(block_hessian, D)
        self.H = self.blocks.reduce(_sum_hessians)
        self._at = (D, 0.0)
        return self

    def update(self, D, rtol=None):
        rtol = self.rtol if rtol is None else rtol
        if self._at[0] is D and rtol >= self._at[1]:
            return self  # nothing moves by more than rtol (a round trip saved)
        self._at = (D, rtol)
        scale = getattr(D, "abs_max", None)
        if scale is None:
            scale = D.map(_abs_max).reduce(_max_all)
        scale = max(scale, 1e-300)
        self.blocks = self.P.Phi.map(block_hessian_refresh, self.blocks, D, rtol * scale)
        self.H = self.blocks.reduce(_sum_hessians)
        return self

    def state(self):
        P = self.P
        return dict(blocks=self.blocks, p=P.p, T=P.T, H=self.H)


@dataclass(eq=False)
class _DaskProblem(_GrFLProblem):
    """The restricted master with its rows on the cluster (``Phi``: the row blocks)."""

    colsum: object = None

    def __post_init__(self, gram):
        rows = self.Phi
        self.n, self.p = rows.shape[0], len(self.colsum)
        self.indptr = (np.arange(self.p + 1) if self.indptr is None
                       else np.asarray(self.indptr))
        self.shared_rows, self.T = True, self.Y.shape[1]
        self.Ys, self.n_t = self.Y, np.full(self.T, self.n)
        self.has_shared = self.penalty_s is not None
        self._grams = {0: (np.asarray(gram, dtype=float), self.colsum)}
        self._loss, self.loss = self.loss, _LossOnRows(self.loss, rows)

    def margins(self, W, ws, b):
        return self.Phi.map(block_margins, W + ws[:, None], b, width=self.T)

    def _at(self, margins):
        """Loss, gradients and largest curvature at ``margins``, in one pass (kept)."""
        # (margins outlive their master: columns appended with zero weight
        # keep them, with gradients of a new length)
        smooth = getattr(margins, "smooth", None)
        if smooth is None or smooth[1].shape[0] != self.p:
            smooth = margins.smooth = margins.map(
                _loss_gradient_curvature, self.Phi, self._loss).reduce(_sum_sum_sum_max)
            margins.curvature_max = smooth[3]
        return smooth

    def loss_value(self, margins):
        # (with the gradients: a line-search step is usually accepted, and its
        # gradients are the next Newton iteration's)
        return float(self._at(margins)[0])

    def loss_gradients(self, margins):
        return margins.map(block_loss_gradients, self.Phi, self._loss)

    def gradients(self, margins):
        gW, gb = self._at(margins)[1:3]
        return gW, gW.sum(axis=1), gb if self.fit_intercept else np.zeros(self.T)

    def newton_hessians(self, rtol):
        """The Hessians of :class:`~kernlearn.solvers.grfl_newton.GrFLNewton`, per partition."""
        return _DaskHessians(self, rtol)


class _FamilyOnRows:
    """The family as GrFL's pricing calls it: correlations reduced over the partitions."""

    def __init__(self, family, rows):
        self.family, self.rows = family, rows
        self.group_size = family.group_size
        self.float32_columns = family.float32_columns
        self.sample = family.sample

    def correlations(self, params, X, G, sample_weight=None, low_precision=False):
        if not isinstance(G, Partitioned):  # the row subsample, gathered here
            return self.family.correlations(params, X, G, sample_weight, low_precision)
        HG, sq = self.rows.map(_block_correlations, G, self.family, params,
                               low_precision).reduce()
        return self.family.normalize_correlations(HG, sq)

    def price(self, *args, **kwargs):
        from ..families._infinite import InfiniteFamily

        return InfiniteFamily.price(self, *args, **kwargs)


class DaskGrFL(GrFL):
    """:class:`~kernlearn.methods.grfl.GrFL` with its rows on a Dask cluster.

    The same algorithm and solver calls; the active columns, margins and
    Hessian parts stay in the row partitions (:class:`RowBlock`), and the
    client keeps the Gram matrix, the column sums and the master's point.
    Takes a :class:`DaskGrFLRows` for ``X`` and the Newton master only.

    Parameters
    ----------
    *args, **kwargs
        As :class:`~kernlearn.methods.grfl.GrFL`.
    """

    def start(self, X, Y, task_rows, rng, sample_weight=None):
        """Initialise the run (see :meth:`GrFL.start`); the targets go to the partitions.

        Parameters
        ----------
        X : DaskGrFLRows
        Y : ndarray of shape (n_samples, T)
        task_rows : None
        rng : numpy.random.RandomState or Generator
        sample_weight : None

        Returns
        -------
        self : DaskGrFL
        """
        if task_rows is not None:
            raise ValueError("task_index is not supported with a dask.array X.")
        if sample_weight is not None:
            raise ValueError("sample_weight and class_weight are not supported with a "
                             "dask.array X.")
        if not isinstance(self.solver, GrFLNewton):
            raise ValueError("GrFL on a dask.array X runs the Newton master only; got "
                             f"{type(self.solver).__name__} (use solver='newton' or "
                             "'auto' with a built-in penalty).")
        super().start(X, Y, task_rows, rng, sample_weight)
        rows = X.rows
        Yp = [Y[a:b] for a, b in zip(rows.bounds[:-1], rows.bounds[1:])]
        blocks = rows.map(_block_with_targets, Partitioned(None, Yp, rows.bounds, self.T))
        self._rows = blocks
        self._colsum = np.zeros(0)
        self._family_view = _FamilyOnRows(self.family, blocks)
        return self

    def _reserve(self, n_features):
        cap = self.gs * n_features
        if self.Phi.shape[1] >= cap:
            return
        self._rows = self._rows.map(_block_reserve, cap)
        self._family_view.rows = self._rows
        gram, colsum = np.empty((cap, cap)), np.zeros(cap)
        gram[: self.p, : self.p] = self.gram[: self.p, : self.p]
        colsum[: self.p] = self._colsum[: self.p]
        self.gram, self._colsum = gram, colsum
        self.Phi = np.empty((0, cap))  # (the capacity; the columns are on the cluster)

    def problem(self):
        """The restricted master on the partitions' active columns.

        Returns
        -------
        problem : DirtyProblem
        """
        p = self.p
        return _DaskProblem(
            self._rows, _Targets((self.n, self.T)), self.loss, self.penalty_p,
            self.penalty_s, indptr=np.arange(0, p + 1, self.gs), task_rows=None,
            fit_intercept=self.fit_intercept, gram=self.gram[:p, :p],
            colsum=self._colsum[:p].copy())

    def _best_candidate(self):
        # pricing through the family's view on the partitions (its
        # correlations are reduced there); the fitted family stays the result's
        family, self.family = self.family, self._family_view
        try:
            return super()._best_candidate()
        finally:
            self.family = family

    def master(self, cand):
        """Append the candidate's unit-norm columns on the partitions and re-solve.

        Parameters
        ----------
        cand : Candidates
            The feature to add (its first row), with its exact column norms.

        Returns
        -------
        objective : float
        extras : dict
        """
        p0, p = self.p, self.p + self.gs
        norms = np.asarray(cand.extra["norms"][0], dtype=float)
        norms = np.where(norms > 0, norms, 1.0)
        self._rows = self._rows.map(_block_append, self.family, cand.params[:1], norms)
        self._family_view.rows = self._rows
        cross, csum = self._rows.map(_block_gram_columns, p0).reduce()
        self.gram[:p, p0:p] = cross
        self.gram[p0:p, :p0] = self.gram[:p0, p0:p].T
        self._colsum[p0:p] = csum
        self.params.append(cand.params[0])
        self.scales.append(1.0 / norms)
        self.p = p
        res = self._solve(exact=False)
        return self.objective, {"kkt": float(res.state["kkt"]),
                                "master_iter": int(res.n_iter)}
