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

The row-block primitives are those of any linear model on a block of
columns over row partitions (:mod:`kernlearn._partitioned_linear`: margins,
loss, gradient, Hessian, column moments), mapped over the partitions and
reduced on the cluster by :class:`~kernlearn.partitioned.RowFutures`, the
row partitions of every fit on a cluster; GrFL's own tasks (the family's
columns and correlations, the standardisation) are in
:mod:`kernlearn.methods._grfl_rows`, which the workers import without this
module's client-side algorithm or scikit-learn.  Without a ``distributed`` client
the partitions are computed and kept in this process (same code, no cluster).
"""

from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.sparse as sp

from .._partitioned_linear import (
    abs_max,
    block_column_moments,
    block_column_range,
    combined_ranges,
    block_curvature,
    block_gram_columns,
    block_hessian,
    block_hessian_extend,
    block_hessian_refresh,
    block_loss_gradients,
    block_margins,
    block_reserve,
    block_smooth_terms,
    hessian_of,
    max_all,
    sum_smooth_terms,
)
from ..partitioned import (
    GroupedRows,
    PerPartition,
    RowFutures,
    _current_client,
    _known_row_chunks,
    non_finite_error,
    tune_worker_malloc,
)
from ..preprocessing import Standardization, _from_mean_var, warn_far_center
from ..solvers.grfl_newton import GrFLNewton
from ._grfl_master import _GrFLProblem
from ._grfl_rows import (
    as_block,
    block_append,
    block_correlations,
    block_held_out_loss,
    block_rows,
    block_sq_norms,
    block_standardized,
    block_with_targets,
)
from ._grfl_select import PATIENCE_EXTRA, PATIENCE_FACTOR, _HoldOut
from .grfl import GrFL

__all__ = ["DaskGrFL", "DaskGrFLRows", "DaskHoldOut", "dask_fit_inputs"]


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
    center : ndarray or None
        Column means of standardised sparse partitions, which the Fourier
        family subtracts in its phases (as in memory,
        :func:`~kernlearn.preprocessing.implicit_center`).
    """

    center = None

    def __init__(self, X, client=None):
        import dask

        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        client = client if client is not None else _current_client()
        tune_worker_malloc(client)
        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        X = _known_row_chunks(X)
        bounds = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        delayed = [dask.delayed(as_block)(d) for d in X.to_delayed().ravel().tolist()]
        parts = (client.compute(delayed) if client is not None
                 else list(dask.compute(*delayed)))
        self.sparse = sp.issparse(getattr(X, "_meta", None))
        self.rows = RowFutures(client, parts, bounds, (X.shape[1],))
        if client is not None:  # one task per worker and pass
            self.rows = GroupedRows.by_worker(self.rows)
        self.shape = self.rows.shape

    @classmethod
    def _from_rows(cls, rows, sparse):
        self = cls.__new__(cls)
        self.rows, self.shape, self.sparse = rows, rows.shape, sparse
        return self

    def __getitem__(self, rows):
        """The rows ``rows`` (sorted indices), kept on the cluster (e.g. held-out rows).

        Parameters
        ----------
        rows : ndarray of int

        Returns
        -------
        subset : DaskGrFLRows
            Split like this one, partitions without a selected row dropped.
        """
        local = self.rows.split_rows(rows).items
        keep = [i for i, r in enumerate(local) if len(r)]
        src = RowFutures(self.rows.client, [self.rows.futures[i] for i in keep],
                         np.r_[0, np.cumsum([self.rows.bounds[i + 1] - self.rows.bounds[i]
                                             for i in keep])], self.shape[1:])
        sub = src.map(block_rows, PerPartition([local[i] for i in keep]))
        bounds = np.r_[0, np.cumsum([len(local[i]) for i in keep])].astype(np.int64)
        sub = RowFutures(sub.client, sub.futures, bounds, self.shape[1:])
        if isinstance(self.rows, GroupedRows):  # (as these: one task per worker and pass)
            sub = GroupedRows.by_worker(sub)
        return self._from_rows(sub, self.sparse)

    def column_range(self):
        """Each column's minimum and maximum over the rows, reduced on the cluster.

        Returns
        -------
        bounds : ndarray of shape (2, n_features) or None
            ``None`` for no rows.
        """
        return self.rows.map(block_column_range).reduce(combined_ranges)

    def _moments(self, mean=None):
        n, d = self.shape
        # (small arguments bound by name: never split like an n-row array)
        m = self.rows.map(partial(block_column_moments, mean=mean)).reduce()
        if m[-1] > 0:
            raise non_finite_error(self.rows)
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
        s1 = self._moments()[0]  # (also the finiteness check)
        if not standardize:
            return Standardization(), self
        mean = s1 / n
        # two passes, as in memory: accurate for columns with a large offset
        # (sparse partitions: scaled, not centred)
        var = self._moments(mean)[1] / n
        st = _from_mean_var(mean, var, center=not self.sparse)
        out = self._from_rows(self.rows.map(partial(block_standardized, st=st)),
                              self.sparse)
        if self.sparse:  # (the means of the scaled columns: not centred, see center)
            out.center = warn_far_center(s1 / n / st.scale)
        self.rows = None  # the raw partitions are no longer needed on the workers
        return st, out

    def scale_gamma(self):
        """scikit-learn's ``gamma="scale"``, :math:`1/(D\\,\\mathrm{Var}(X))`, on the cluster
        (sparse partitions: the mean of the columns' variances, as
        :func:`~kernlearn.widths.scale_gamma` in memory).

        Returns
        -------
        gamma : float
        """
        n, d = self.shape
        s1, s2 = self._moments()
        mean = s1.sum() / (n * d)
        if self.sparse:
            var = float(np.mean(np.maximum(s2 / n - (s1 / n) ** 2, 0.0)))
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
        center = {} if self.center is None else {"center": self.center}
        if not family.width_from_data:
            return family.fit(head, **center)
        # the validation and widths_ of fit(X), with the width reduced on the cluster
        family.set_params(gamma=self.scale_gamma())
        try:
            family.fit(head, **center)
        finally:
            family.set_params(gamma="scale")
        return family

    @property
    def grfl_class(self):
        """The GrFL run for these rows: :class:`DaskGrFL`."""
        return DaskGrFL

    @property
    def hold_out_class(self):
        """The held-out loss monitor for these rows: :class:`DaskHoldOut`."""
        return DaskHoldOut


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
        For what the Dask path does not do: ``warm_start``, ``n_paths``
        above 1, Platt probabilities, a 2-D ``y``.
    """
    from ..estimators._large_inputs import validate_partitioned_fit

    name = type(est).__name__
    if est.warm_start:
        raise ValueError(f"{name}: warm_start=True is not supported with a dask.array X.")
    if getattr(est, "n_paths", "auto") not in ("auto", 1):
        raise ValueError(f"{name}: n_paths={est.n_paths} is not supported with a dask.array "
                         "X (one path on the cluster); use n_paths=1.")
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
        D = M.map(partial(block_curvature, loss=self.loss), self.rows)
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
        self.H = self.blocks.map(hessian_of).reduce()
        self._at = (D, 0.0)
        return self

    def update(self, D, rtol=None):
        rtol = self.rtol if rtol is None else rtol
        if self._at[0] is D and rtol >= self._at[1]:
            return self  # nothing moves by more than rtol (a round trip saved)
        self._at = (D, rtol)
        scale = getattr(D, "abs_max", None)
        if scale is None:
            scale = D.map(abs_max).reduce(max_all)
        scale = max(scale, 1e-300)
        self.blocks = self.P.Phi.map(partial(block_hessian_refresh,
                                             threshold=rtol * scale), self.blocks, D)
        self.H = self.blocks.map(hessian_of).reduce()
        return self

    def state(self):
        P = self.P
        return dict(blocks=self.blocks, p=P.p, T=P.T, H=self.H)


@dataclass(eq=False)
class _DaskProblem(_GrFLProblem):
    """The restricted master with its rows on the cluster (``Phi``: the row blocks)."""

    # rows whose loss gradients come along with every pass at new margins
    # (GrFL's pricing subsample: the next pricing then needs no extra pass)
    sub: object = None
    sub_local: object = None

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
        return self.Phi.map(partial(block_margins, V=W + ws[:, None], b=b),
                            tail=(self.T,))

    def _at(self, margins):
        """Loss, gradients and largest curvature at ``margins``, in one pass (kept)."""
        # (margins outlive their master: columns appended with zero weight
        # keep them, with gradients of a new length)
        smooth = getattr(margins, "smooth", None)
        if smooth is None or smooth[1].shape[0] != self.p:
            smooth = margins.smooth = margins.map(
                block_smooth_terms, self.Phi, self._loss, self.sub_local
            ).reduce(sum_smooth_terms)
            margins.curvature_max = smooth[3]
        return smooth

    def loss_value(self, margins):
        # (with the gradients: a line-search step is usually accepted, and its
        # gradients are the next Newton iteration's)
        return float(self._at(margins)[0])

    def loss_gradients(self, margins):
        G = margins.map(partial(block_loss_gradients, loss=self._loss), self.Phi)
        smooth = getattr(margins, "smooth", None)
        if self.sub is not None and smooth is not None and len(smooth) > 4:
            G.known_rows = (self.sub, smooth[4])
        return G

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
        if not isinstance(G, RowFutures):  # the row subsample, gathered here
            return self.family.correlations(params, X, G, sample_weight, low_precision)
        HG, sq = self.rows.map(partial(block_correlations, family=self.family,
                                       params=params, low_precision=low_precision),
                               G).reduce()
        return self.family.normalize_correlations(HG, sq)

    def price(self, *args, **kwargs):
        from ..families._infinite import InfiniteFamily

        return InfiniteFamily.price(self, *args, **kwargs)


class DaskGrFL(GrFL):
    """:class:`~kernlearn.methods.grfl.GrFL` with its rows on a Dask cluster.

    The same algorithm and solver calls; the active columns, margins and
    Hessian parts stay in the row partitions
    (:class:`~kernlearn._partitioned_linear.RowBlock`), and the client keeps
    the Gram matrix, the column sums and the master's point.
    Takes a :class:`DaskGrFLRows` for ``X`` and the Newton master only.

    Parameters
    ----------
    *args, **kwargs
        As :class:`~kernlearn.methods.grfl.GrFL`.
    """

    def start(self, X, Y, task_rows, rng, sample_weight=None, b0=None, span=None):
        """Initialise the run (see :meth:`GrFL.start`); the targets go to the partitions.

        Parameters
        ----------
        X : DaskGrFLRows
        Y : ndarray of shape (n_samples, T)
        task_rows : None
        rng : numpy.random.RandomState or Generator
        sample_weight : None
        b0 : ndarray of shape (T,), optional
            The biases of the model without features, if known.
        span : None
            (Rows on a cluster are not priced in a span.)

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
        super().start(X, Y, task_rows, rng, sample_weight, b0=b0, span=span)
        rows = X.rows
        if self._sub is not None:  # the pricing subsample's rows, gathered here
            self._X_sub = rows.take(self._sub)
        blocks = rows.map(block_with_targets, np.asarray(Y))  # Y split by rows
        self._rows = blocks
        self._sub_local = None if self._sub is None else rows.split_rows(self._sub)
        self._family_view = _FamilyOnRows(self.family, blocks)
        return self

    def _reserve(self, n_features):
        cap = self._capacity(n_features)
        if cap is None:
            return
        self._rows = self._rows.map(partial(block_reserve, capacity=cap))
        self._family_view.rows = self._rows
        self._grow_gram(cap)
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
            colsum=self._colsum[:p].copy(), sub=self._sub, sub_local=self._sub_local)

    def _best_candidate(self, n_best=1):
        # pricing through the family's view on the partitions (its
        # correlations are reduced there); the fitted family stays the result's
        family, self.family = self.family, self._family_view
        try:
            return super()._best_candidate(n_best)
        finally:
            self.family = family

    def master(self, cand):
        """Append the candidates' unit-norm columns on the partitions and re-solve.

        All candidates of the batch in one pass over the partitions, and
        their Gram columns in one reduction.

        Parameters
        ----------
        cand : Candidates
            The features to add (one row each), with their exact column
            norms in ``cand.extra["norms"]`` (one row per candidate); without
            them (a refit on given features) the norms are reduced first.

        Returns
        -------
        objective : float
        extras : dict
        """
        k = len(cand.params)
        p0, p = self.p, self.p + self.gs * k
        self._reserve(p // self.gs)
        if cand.extra is None or "norms" not in cand.extra:
            norms = np.sqrt(self._rows.map(partial(block_sq_norms, family=self.family,
                                                   params=cand.params)).reduce())
        else:
            norms = np.asarray(cand.extra["norms"], dtype=float).reshape(-1)
        norms = np.where(norms > 0, norms, 1.0)
        self._rows = self._rows.map(partial(block_append, family=self.family,
                                            params=cand.params, norms=norms))
        self._family_view.rows = self._rows
        cross, csum = self._rows.map(partial(block_gram_columns, p0=p0)).reduce()
        self.gram[:p, p0:p] = cross
        self.gram[p0:p, :p0] = self.gram[:p0, p0:p].T
        self._colsum[p0:p] = csum
        self.params.extend(cand.params)
        self.scales.extend((1.0 / norms).reshape(k, self.gs))
        self.p = p
        res = self._solve(exact=False)
        return self.objective, {"kkt": float(res.state["kkt"]),
                                "master_iter": int(res.n_iter)}


class DaskHoldOut(_HoldOut):
    """:class:`~kernlearn.methods._grfl_select._HoldOut` with the held-out rows on the cluster.

    ``max_features="auto"`` on a ``dask.array``: the held-out rows' feature
    columns are appended on their partitions as the path grows, and each
    outer iteration's held-out loss is one reduction (a float reaches the
    client), in place of the in-memory monitor's ``n_val``-row block.

    Parameters
    ----------
    path : DaskGrFL
        The run on the training rows.
    X : DaskGrFLRows
        The held-out rows.
    Y : ndarray of shape (n_held_out, T)
    task_rows : None
    loss : BaseLoss
    sample_weight : None
    rows : None
        Unused (the features are not completed from a span on a cluster).
    """

    def __init__(self, path, X, Y, task_rows, loss, sample_weight, rows=None):
        if task_rows is not None or sample_weight is not None:
            raise ValueError("task_index and sample_weight are not supported with a "
                             "dask.array X.")
        self.path, self.loss = path, loss
        self.blocks = X.rows.map(block_with_targets, np.asarray(Y))
        self.p = self._capacity = 0
        self.losses, self.counts = [], []

    def __call__(self, row=None):
        path, gs = self.path, self.path.gs
        f0, f1 = self.p // gs, path.p // gs
        cap = max(path.p, gs * path._budget, 1)  # (a buffer sized once per budget)
        if cap > self._capacity:
            self.blocks = self.blocks.map(partial(block_reserve, capacity=cap))
            self._capacity = cap
        if f1 > f0:
            self.blocks = self.blocks.map(partial(
                block_append, family=path.family, params=np.array(path.params[f0:f1]),
                scales=np.concatenate(path.scales[f0:f1])))
            self.p = path.p
        U, us, b = path.coefficients()
        self.losses.append(float(self.blocks.map(partial(
            block_held_out_loss, V=U + us[:, None], b=b, loss=self.loss)).reduce()))
        self.counts.append(f1)
        return "validation" if f1 >= PATIENCE_FACTOR * self.best() + PATIENCE_EXTRA else False
