"""FGM's row-level helpers shared by the in-memory and the Dask master.

:mod:`kernlearn.methods.fgm` (in memory) and :mod:`kernlearn._dask_master`
(rows on a cluster) both call these, so they live below both: neither
imports the other for them.
"""

from functools import partial

import numpy as np
import scipy.sparse as sp

from .._column_sources import register_source, source_of
from ..utils._sparse import _sparse_centred_squares, column_nonzeros
from ..utils._warnings import warn

__all__ = ["active_block", "block_moments", "block_stored", "bound_above_objective",
           "bound_warning", "centre_by_newton", "check_loss_scale", "offset_rounding",
           "offset_shift", "shift_columns", "shifted_block", "with_sources"]

# C times the largest row weight times the rows above which FGM refuses: the
# dual vector u = C w l'(m) then reaches ~1e140 on unit columns, its scores'
# squares (the pricing, Theorem 3's test, the dual bound) near float64's
# 1.8e308 (measured: 1e142 fitted as at 1.0, 1e160 "converged" on 2 of 6
# features; on a cluster a singular Newton system)
LOSS_SCALE_MAX = 1e140

# A sparse active block with more than this fraction of non-zeros, and at most
# _DENSE_MAX_ENTRIES entries, is solved on dense storage (below it, sparse
# Hessians cost sum_i nnz_i^2 against n p^2 dense).
_DENSE_ABOVE = 0.3
_DENSE_MAX_ENTRIES = 50_000_000


def active_block(blocks):
    """The active columns side by side; dense when sparse storage does not pay.

    Sparse products cost several times a dense one per stored entry, so an
    active block denser than ``_DENSE_ABOVE`` is densified (it is small:
    ``n x |active|``).

    Parameters
    ----------
    blocks : list of ndarray or sparse matrix
        Column blocks with the same rows (a partition's rows on a cluster).

    Returns
    -------
    ndarray (column-major) or sparse CSC matrix
    """
    if not sp.issparse(blocks[0]):
        return with_sources(np.asfortranarray(np.hstack(blocks)), blocks)
    A = sp.hstack(blocks, format="csc")
    n, p = A.shape
    if A.nnz > _DENSE_ABOVE * n * p and n * p <= _DENSE_MAX_ENTRIES:
        return with_sources(A.toarray(order="F"), blocks)
    return A


def with_sources(A, blocks):
    """Register ``A``'s raw columns: those of its blocks, side by side.

    Parameters
    ----------
    A : ndarray or RowFutures
        The blocks side by side (dense).
    blocks : list
        The column blocks, each registered by
        :func:`kernlearn._column_sources.register_source` (else nothing is).

    Returns
    -------
    A
    """
    found = [source_of(b) for b in blocks]
    if any(f is None for f in found):
        return A
    return register_source(A, lambda: [f[0]() for f in found],
                           np.concatenate([f[1] for f in found]))


#: How far, relative to the size of its terms, a Fenchel dual value may lie
#: above the objective by rounding alone.  Measured: at most 1e-8 (columns 1e9
#: spreads from zero, whose margins lose about nine digits); the wrong bound of
#: a pricing that missed a group (fuzz_dask case 400064) lay 5e-4 above.
BOUND_ROUNDING = 1e-6
#: Below this size a float's relative precision is lost to gradual underflow
#: (``tiny / eps``, about 1e-292): a dual value and an objective both this small
#: (an exact fit of columns scaled by 1e150) differ by rounding alone.
UNDERFLOW = np.finfo(float).tiny / np.finfo(float).eps


def bound_above_objective(dual, objective, terms):
    """Whether a dual value exceeds the objective by more than rounding.

    Weak duality (paper 002, Theorem 2): every dual value lies at or below
    every objective value, so one above is no bound but a defect signal (an
    inexact pricing or dual point); the duality-gap test must not read it as
    convergence.

    Parameters
    ----------
    dual : float
        The Fenchel dual value.
    objective : float
        The last restricted master's objective (``inf`` before the first).
    terms : float
        The size of the dual's terms (the sum of their absolute values).

    Returns
    -------
    bool
    """
    return bool(np.isfinite(objective)
                and dual - objective > BOUND_ROUNDING * (abs(objective) + terms) + UNDERFLOW)


def check_loss_scale(C, sample_weight, n, name="FGM"):
    r"""Refuse a loss weighted so heavily that FGM's squared scores overflow float64.

    The penalty :math:`\tfrac12\|W\|^2` is then below the rounding of the
    loss term, and the scores' squares are infinite: the pricing ranked ties
    of ``inf``, Theorem 3's test compared ``inf <= inf`` and stopped the fit
    "converged" on the first features priced (a silent wrong model).

    Parameters
    ----------
    C : float
        The loss's factor (the largest ``C`` a path will fit).
    sample_weight : ndarray of shape (n_samples,) or None
        Row weights (class weights included); a lazy array is not read.
    n : int
        Rows (without ``sample_weight``; with it, those of positive weight).
    name : str, default="FGM"
        The fit's name in the message.

    Raises
    ------
    ValueError
        When ``C * max(sample_weight) * n`` exceeds :data:`LOSS_SCALE_MAX`
        (the same for a fit in memory and by row blocks, which keep rows of
        weight 0).
    """
    top = 1.0
    if sample_weight is not None and not hasattr(sample_weight, "compute"):
        # (the rows of positive weight: a fit in memory has removed the others)
        w = np.asarray(sample_weight, dtype=float)
        top, n = (float(np.max(w)) if w.size else 0.0), int(np.count_nonzero(w > 0))
    scale = float(C) * top * float(n)  # (Python floats: inf, no warning, past 1.8e308)
    if scale > LOSS_SCALE_MAX:
        raise ValueError(
            f"{name}: C times the largest sample weight times the rows of positive "
            f"weight is {scale:.3g}, above {LOSS_SCALE_MAX:.0e}: the squared scores of "
            "the pricing overflow float64 (and the penalty is below the loss's "
            "rounding); scale the sample weights down or lower C.")


def bound_warning(name, bad):
    """The warning of a fit whose dual values lay above its objective.

    Parameters
    ----------
    name : str
        The fit's name in messages.
    bad : list of tuple
        ``(dual, objective, masters solved)`` of each such pricing.

    Returns
    -------
    str
    """
    dual, objective, k = bad[0]
    return (f"{name}: at {len(bad)} pricing(s) the dual lower bound lay above the objective "
            f"(first after {k} outer iteration(s): {dual:.10g} > {objective:.10g}): the "
            "pricing or the bound was inexact, so no duality gap certifies the model; "
            "those bounds were not used to stop and the fit is reported unconverged.")


def offset_rounding(rows, pool, cand, grad):
    r"""The rounding a far-offset column puts into the candidates' squared scores.

    With an intercept the dual vector sums to zero, so a column's score
    :math:`f'u` equals :math:`(f - c)'u` for any shift ``c``.  Computed on
    ``f`` itself, a column at ``c`` with spread ``s`` carries the rounding of
    :math:`\sum_i u_i` (the re-centring's, about :math:`\epsilon\|u\|_1`)
    and of products of size :math:`|c u_i|`: both times ``c``, i.e. an error
    ``c / s`` times larger than on the centred column.  (A column ``1 + 1e-9
    z`` standardised to ``1e9 + z``: scores 2.6e-5 off, the dual bound 2.3e-6
    of the objective above it.)  Priced again on the candidates' columns
    shifted as the master shifts them (:func:`offset_shift`), the difference
    is that rounding alone: any other error of the pricing stays in place.

    Parameters
    ----------
    rows : object
        The fit's rows (``columns`` and ``active_block``, in memory or on a
        cluster).
    pool : FeaturePool or family
        The fitted pool.
    cand : Candidates
        The priced top set (its squared scores summed in ``sum_sq``).
    grad : ndarray or RowFutures
        The dual vectors priced.

    Returns
    -------
    float
        Centred minus raw :math:`\|A'u\|_F^2` of the candidates' scaled
        columns ``A`` (0 when no column is far from zero).
    """
    A = rows.active_block([rows.columns(pool, cand)])
    shift = offset_shift(A)
    if shift is None:
        return 0.0
    raw = _squared_product(A, grad)
    return _squared_product(shift_columns(A.copy() if isinstance(A, np.ndarray) else A, shift),
                            grad) - raw


def _squared_product(A, grad):
    r""":math:`\|A'g\|_F^2`, reduced over the partitions on a cluster."""
    if getattr(A, "is_row_futures", False):
        return float(np.sum(np.square(A.sum(_part_product, grad))))
    return float(np.sum(np.square(np.asarray(A.T @ grad))))


def frobenius_norm(A):
    r""":math:`\|A\|_F` of a column block or of dual vectors, reduced over the partitions
    on a cluster.

    Parameters
    ----------
    A : ndarray, sparse matrix or RowFutures
        The block (or vectors).

    Returns
    -------
    float
    """
    if getattr(A, "is_row_futures", False):
        return float(np.sqrt(A.sum(_part_squares)[0]))
    if sp.issparse(A):
        return float(np.sqrt(A.multiply(A).sum()))
    return float(np.linalg.norm(A))


def _part_squares(part):
    part = part.data if sp.issparse(part) else np.asarray(part)
    return np.array([float(np.sum(np.square(part)))])


def _part_product(part, g):
    return np.asarray(part.T @ g).reshape((part.shape[1],) + np.shape(g)[1:])


def sparse_work(blocks, K=1, sample_weight=None):
    """Hessian flops and stored entries of the active block the master will see.

    Parameters
    ----------
    blocks : list of ndarray or sparse matrix
        Column blocks with the same rows.
    K : int, default=1
        Outputs.
    sample_weight : ndarray of shape (n_rows,), optional
        Rows of weight zero are not counted (they add nothing to the Hessian;
        the master is chosen by the rows of positive weight).

    Returns
    -------
    hessian_flops, nnz : float and int, or None and None
        ``K sum_i nnz_i^2`` and the stored entries when :func:`active_block`
        keeps the block sparse; ``None`` when it is (or becomes) dense.
    """
    if not all(sp.issparse(b) for b in blocks):
        return None, None
    p = sum(b.shape[1] for b in blocks)
    per_row = sum(np.diff(sp.csr_matrix(b).indptr) for b in blocks).astype(float)
    if sample_weight is not None and np.ndim(sample_weight):
        per_row = per_row[np.asarray(sample_weight) > 0]
    n = len(per_row)
    nnz = int(per_row.sum())
    if nnz > _DENSE_ABOVE * n * p and n * p <= _DENSE_MAX_ENTRIES:
        return None, None
    return K * float(per_row @ per_row), nnz


# Without an intercept, a column's offset over its half-range above which the
# fit is ill-posed in float64 (curvatures 1e10 apart; see shifted_block)
_ILL_POSED_RATIO = 1e5

# A dense active column whose centre lies farther from zero than this many
# half-ranges (a Unix time, ~1.7e9, varying over days) is shifted to zero in the
# master.  FGM centres implicitly, through the intercept, so the master saw the
# offset: its Hessian's condition number grew as (centre / half-range)^2, and
# from offsets of ~1e8 the Newton master met NaN (LinAlgError) or stopped on a
# chance-level model.  Below the threshold nothing is shifted, so ordinary
# data keep their models bit for bit.
_OFFSET_RATIO = 1e3


def offset_shift(A):
    r"""Column shifts that take a dense active block's far-offset columns to zero.

    With an intercept the master may solve on ``A - shift`` instead of ``A``:
    :math:`AW + b = (A - 1 s^\top) W + (b + s^\top W)`, the same problem
    (the penalty does not see the intercept).  The shift of a column is its
    midrange, the same for a row repeated or weighted and for any split of
    the rows; only columns whose midrange exceeds ``_OFFSET_RATIO``
    half-ranges are shifted.

    Parameters
    ----------
    A : ndarray, sparse matrix or RowFutures of shape (n_samples, p)
        The active block; on a cluster (``RowFutures``) its column ranges
        are reduced over the partitions (sparse blocks are not shifted).

    Returns
    -------
    ndarray of shape (p,) or None
        The shifts (zero for columns kept), or None when nothing is shifted.
    """
    if getattr(A, "is_row_futures", False):
        # (the Dask master met the same ill-conditioning: one reduction of
        # the partitions' ranges gives the in-memory shift)
        ranges = A.map(_part_range).reduce(_merge_ranges)
        if ranges is None:
            return None
        lo, hi = ranges
    elif isinstance(A, np.ndarray) and A.size:
        lo, hi = A.min(axis=0), A.max(axis=0)
    else:
        return None
    mid = 0.5 * lo.astype(np.float64) + 0.5 * hi  # (no overflow near the float maximum)
    far = np.abs(mid) > _OFFSET_RATIO * (0.5 * hi.astype(np.float64) - 0.5 * lo)
    return np.where(far, mid, 0.0) if far.any() else None


def shifted_block(A, fit_intercept):
    r"""The master's active block with its far-offset columns shifted to zero, and the shifts.

    :func:`offset_shift` decides which columns are shifted.  A column whose
    raw values are known (:mod:`kernlearn._column_sources`: FGM's dense
    columns of ``X``) is rebuilt as :math:`(x - c)\lambda` with ``c`` the raw
    column's midrange, its shift :math:`c\lambda`: the scaled column
    :math:`x\lambda` near 1e12 had lost the digits ``x`` held (the scale's
    last bit, which the routes' standardisation sums round differently,
    moved the coefficients by up to 4e-5 relative); the others lose
    their midrange.  Without an intercept nothing is shifted.

    Parameters
    ----------
    A : ndarray, sparse matrix or RowFutures of shape (n_samples, p)
        A fresh active block (an ndarray is overwritten).
    fit_intercept : bool
        Whether the master fits an intercept (the shift maps onto it).

    Returns
    -------
    A : ndarray, sparse matrix or RowFutures
        The block to solve on.
    shift : ndarray of shape (p,) or None
        ``A_given W = A W + shift' W``: the intercept's change.
    """
    if not fit_intercept:
        _warn_far_without_intercept(A)
        return A, None
    shift = offset_shift(A)
    if shift is None:
        return A, None
    found = source_of(A)
    A = shift_columns(A, shift)
    if found is None:
        return A, shift
    far = np.flatnonzero(shift)
    raws, weights = found[0](), found[1]
    raws = raws if isinstance(raws, list) else [raws]  # (a block's, or its blocks')
    starts = np.cumsum([0] + [r.shape[1] for r in raws])
    which = np.searchsorted(starts, far, side="right") - 1
    if getattr(A, "is_row_futures", False):
        raw = raws[0].map(partial(_pick_columns, cols=far), *raws[1:], tail=(far.size,))
        lo, hi = raw.map(_part_range).reduce(_merge_ranges)
    else:
        # (column by column: contiguous reductions and writes into the column-major A)
        raw = [_dense_column(raws[t], j - starts[t]) for t, j in zip(which, far)]
        lo, hi = np.array([r.min() for r in raw]), np.array([r.max() for r in raw])
    c = 0.5 * lo + 0.5 * hi
    shift = shift.copy()
    shift[far] = c * weights[far]
    if getattr(A, "is_row_futures", False):
        return A.map(partial(_recentred, cols=far, c=c, w=weights[far]), raw), shift
    for i, j in enumerate(far):
        A[:, j] = (raw[i] - c[i]) * weights[j]
    return A, shift


def _warn_far_without_intercept(A):
    """Warn when, without an intercept, an active column's offset dwarfs its spread.

    The master's Hessian then has curvatures about (offset / spread)^2 apart
    (the column acts as an intercept along its offset, and as a feature along
    its spread): past ``_ILL_POSED_RATIO`` (1e10 apart) the coefficients are
    not determined to more digits than float64 leaves (measured at 1e9: the
    in-memory fit and the one by row blocks 1e6 apart on 9.7e6).  Nothing
    can be shifted without the intercept; the user can fit one, or centre.
    """
    if getattr(A, "is_row_futures", False):
        lo, hi = A.map(_any_range).reduce(_merge_ranges)
    elif A.shape[0]:
        lo, hi = _any_range(A)
    else:
        return
    mid, half = np.abs(0.5 * lo + 0.5 * hi), 0.5 * hi - 0.5 * lo
    worst = float(np.max(np.where(half > 0, mid / np.where(half > 0, half, 1.0), 0.0)))
    if worst > _ILL_POSED_RATIO:
        # (one message, without the ratio: the same on every route and fold)
        warn(f"FGM without an intercept: a selected column lies over {_ILL_POSED_RATIO:.0e} "
             "times its half-range from zero, so the problem's curvatures are over "
             f"{_ILL_POSED_RATIO ** 2:.0e} apart and its coefficients carry few correct "
             "digits; fit an intercept (fit_intercept=True) or centre the column.",
             UserWarning)


def _any_range(part):
    """Column minima and maxima (float64) of a dense or sparse block (zeros counted)."""
    if part.shape[0] == 0:
        return np.full(part.shape[1], np.inf), np.full(part.shape[1], -np.inf)
    lo, hi = part.min(axis=0), part.max(axis=0)
    if sp.issparse(part):
        lo, hi = lo.toarray(), hi.toarray()
    return (np.asarray(lo, dtype=np.float64).ravel(), np.asarray(hi, dtype=np.float64).ravel())


def _dense_column(raw, j):
    """Column ``j`` of an ndarray or sparse matrix, dense float64."""
    col = raw[:, [j]].toarray() if sp.issparse(raw) else raw[:, j]
    return np.asarray(col, dtype=np.float64).ravel()


def _pick_columns(*parts, cols):
    """Columns ``cols`` of a partition's blocks side by side (dense float64)."""
    starts = np.cumsum([0] + [q.shape[1] for q in parts])
    which = np.searchsorted(starts, cols, side="right") - 1
    return np.column_stack([_dense_column(parts[t], j - starts[t]) for t, j in zip(which, cols)])


def _recentred(part, raw, cols, c, w):
    """A partition with columns ``cols`` rebuilt from their raw values."""
    part = np.array(part, dtype=float, order="F")
    part[:, cols] = (raw - c) * w
    return part


def shift_columns(A, shift):
    """``A - shift`` (row by row): in place for an ndarray, on the workers for RowFutures.

    Parameters
    ----------
    A : ndarray or RowFutures of shape (n_samples, p)
        A fresh active block (an ndarray is overwritten).
    shift : ndarray of shape (p,)
        From :func:`offset_shift`.

    Returns
    -------
    ndarray or RowFutures
    """
    if getattr(A, "is_row_futures", False):
        return A.map(partial(_minus, shift=shift))
    A -= shift.astype(A.dtype)
    return A


def _minus(part, shift):
    return part - shift.astype(part.dtype)


def _part_range(part):
    """Column minima and maxima of a dense partition (None for a sparse one)."""
    if sp.issparse(part):
        return None
    if part.shape[0] == 0:
        return np.full(part.shape[1], np.inf), np.full(part.shape[1], -np.inf)
    return part.min(axis=0), part.max(axis=0)


def _merge_ranges(parts):
    """Column ranges of the whole block from its partitions' (None if one is sparse)."""
    if any(r is None for r in parts):
        return None
    return (np.min([r[0] for r in parts], axis=0), np.max([r[1] for r in parts], axis=0))


def centre_by_newton(sums, K, n_newton=30):
    """Newton on ``K`` monotone scalar equations ``g(delta) = 0`` (FGM's intercept re-centring).

    Parameters
    ----------
    sums : callable
        ``sums(delta)`` returns the summed loss gradient and Hessian in the
        margins shifted by ``delta`` (shape ``(K,)`` each; on a cluster, one
        reduction).
    K : int
        Outputs.
    n_newton : int, default=30
        Iteration cap.

    Returns
    -------
    delta : ndarray of shape (K,)
    """
    delta = np.zeros(K)
    for _ in range(n_newton):
        g, h = sums(delta)
        # (h itself wherever it is positive: weights summing below 1e-300 made
        # it smaller than a floor of 1e-300, every step a thousandth of
        # Newton's, and a cluster's intercept stopped far from the optimum)
        step = np.where(h > 0, -g / np.where(h > 0, h, 1.0), 0.0)
        delta += step
        if np.all(np.abs(step) <= 1e-12 * (1.0 + np.abs(delta))):
            break
    return delta


def block_moments(block, w=None, mean=None):
    """Per-block ``[sum w x, sum w x^2, max |x|, is_sparse, n_nonfinite]`` as one row.

    FGM's standardisation of row partitions, over the rows of positive weight.

    Parameters
    ----------
    block : ndarray or sparse matrix of shape (n_rows, n_features)
    w : ndarray of shape (n_rows,), optional
        Row weights.
    mean : ndarray of shape (n_features,), optional
        The squares are taken about it, :math:`\\sum w (x - mean)^2` (the
        second pass of a two-pass variance; sparse blocks: implicit zeros
        included, without densifying).

    Returns
    -------
    ndarray of shape (1, 3 * n_features + 2)
    """
    if w is None:
        w = np.ones(block.shape[0])
    if sp.issparse(block):
        bad = np.count_nonzero(~np.isfinite(block.data))
        keep = np.flatnonzero(w > 0)
        block = sp.csr_matrix(block)[keep]
        absmax = (np.asarray(abs(block).max(axis=0).todense()).ravel() if block.shape[0]
                  else np.zeros(block.shape[1]))
        with np.errstate(invalid="ignore", over="ignore"):
            s1 = np.asarray(block.T @ w[keep], dtype=float).ravel()
            s2 = (np.asarray(block.multiply(block).T @ w[keep], dtype=float).ravel()
                  if mean is None else _sparse_centred_squares(block, w[keep], mean))
        return np.concatenate([s1, s2, absmax, [1.0, bad]])[None, :]
    B = np.asarray(block, dtype=float)
    bad = np.count_nonzero(~np.isfinite(B))
    if not np.all(w > 0):
        # a zero weight's row is absent, as in memory: weighted by 0, a square
        # that overflows gave 0 * inf = NaN, "variance overflows" for a removed row
        B, w = B[w > 0], w[w > 0]
    with np.errstate(invalid="ignore", over="ignore"):
        C = B if mean is None else B - mean
        absmax = np.abs(B).max(0) if len(B) else np.zeros(B.shape[1])
        return np.concatenate([w @ B, w @ (C * C), absmax, [0.0, bad]])[None, :]


def block_stored(block, w=None):
    """Per-block ``[non-zero values of each column, rows]`` over the rows of
    positive weight, as one row (a second pass, for sparse blocks only).

    Parameters
    ----------
    block : sparse matrix of shape (n_rows, n_features)
    w : ndarray of shape (n_rows,), optional
        Row weights.

    Returns
    -------
    ndarray of shape (1, n_features + 1)
    """
    keep = np.flatnonzero(np.ones(block.shape[0]) if w is None else w > 0)
    B = sp.csr_matrix(block)[keep]
    return np.concatenate([column_nonzeros(B), [len(keep)]])[None, :]
