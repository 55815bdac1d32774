"""Which master solves FGM's restricted problem: chosen by cost, with its reason.

Proximal Newton (:class:`~kernlearn.solvers.ProxNewton`) forms the Hessian
``A' diag(l'') A`` of the active block once per Newton step, ``n K p^2`` flops
(``K sum_i nnz_i^2`` on sparse rows), and its block coordinate descent sweeps
cost ``K p^2`` each; it converges in a handful of steps whatever the
conditioning.  APG (:class:`~kernlearn.solvers.APG`) costs ``O(n p)`` per
iteration and needs many -- how many depends on the data's conditioning,
which no input here measures (on Gaussian columns 15-130 per master, on
a9a's one-hot columns 35-440).

*Narrow* active sets (``p <= n``): a Newton solve
``NEWTON_STEPS * (flops / BLAS3_SPEEDUP + SWEEPS K p^2)`` against an APG solve
``APG_ITERS * 3 n p`` (matrix products run several times more flops per second
than APG's memory-bound products: ``BLAS3_SPEEDUP``), in flops.  The constants
are typical counts measured on warm-started FGM masters (square and squared
hinge losses, correlated Gaussian columns, n = 500): Newton is then chosen up
to about 220 dense columns at n = 500 and 280 at any larger n.

*Wide* active sets (``p > n``): the Hessian is singular but Newton's sweeps
stay cheap, and APG's iterations grow with ``p / n`` (its step is set by the
largest curvature, its progress by the smallest nonzero one).  The twenty-sixth
pass measured every master of FGM fits on a grid (dense Gaussian n = 100-2000,
p up to 3n; Reuters and a9a; square, squared hinge and logistic losses;
``benchmarks/fgm_master_choice.py --grid``) and fitted, in nanoseconds of one
core, a Newton step ``WIDE_STEP_NS + WIDE_ROW_NS n + WIDE_SWEEP_NS K p^2 +
WIDE_HESSIAN_NS flops`` and an APG iteration ``WIDE_ITER_NS + WIDE_ITER_ROW_NS n
+ entries * (WIDE_ENTRY_NS dense, WIDE_SPARSE_ENTRY_NS sparse)``; a solve takes
``NEWTON_STEPS_BY_LOSS`` steps against ``APG_ITERS_BY_LOSS (1 + p / n)``
iterations (times ``SPARSE_APG_FACTOR`` on sparse rows, whose columns were
worse conditioned on every sparse set measured).  The cheaper estimate is
chosen.  (Before, every wide set took APG, "singular Hessian", although Newton
was the faster master on most of them.)

*Several outputs* (FGM's shared multiclass selection, ``K > 1``): APG solves
them jointly too since the thirty-fifth pass, but Newton stays the choice.
Measured with ``benchmarks/fgm_apg_multi.py`` (every master of fits forced to
each solver; digits, Gaussian ``K``-class data with ``p = 3 n``): Newton's
median master was 4-78 times faster on every narrow set (APG needs hundreds
of iterations per master), 2 times faster on wide sets of
3 and 5 outputs, 10 times faster past the one-output Hessian cap
(``n = 1000, p = 900, K = 10``), and behind only on wide sets of ten outputs
at ``n = 100`` (by 1.3 times).  The ``K = 1`` cost models, scaled by ``K``,
would have chosen APG on narrow sets Newton solved many times faster, so
they are not applied.
"""

from dataclasses import dataclass

__all__ = ["MASTER_REASONS", "MasterChoice", "choose_master", "wide_costs"]

# Above this many Hessian entries (K (p + 1)^2) or flops per Newton step the
# Hessian is not formed.
NEWTON_MAX_ENTRIES = 8_000_000
NEWTON_MAX_FLOPS = 2e10
# Narrow cost model, in flops (see the module docstring).
NEWTON_STEPS = 5
SWEEPS = 20
BLAS3_SPEEDUP = 8.0
APG_ITERS = 60
# Wide cost model, in nanoseconds (least-squares fits of the measured grid).
WIDE_STEP_NS, WIDE_ROW_NS, WIDE_SWEEP_NS, WIDE_HESSIAN_NS = 250e3, 90.0, 25.0, 0.012
WIDE_ITER_NS, WIDE_ITER_ROW_NS, WIDE_ENTRY_NS, WIDE_SPARSE_ENTRY_NS = 140e3, 33.0, 0.55, 7.0
#: Median Newton steps and APG iterations / (1 + p / n) per master, by loss
#: (``None``: any other loss with a ``hess_margin``).
NEWTON_STEPS_BY_LOSS = {"square": 4, "squared_hinge": 7, "logistic": 5, None: 7}
APG_ITERS_BY_LOSS = {"square": 25, "squared_hinge": 40, "logistic": 12, None: 40}
SPARSE_APG_FACTOR = 4.0

#: Why a master was chosen; ``MasterChoice.code`` indexes this tuple (the
#: code is what a numeric history records).  Code 3 (every wide set took APG)
#: is no longer given since the twenty-sixth pass; it keeps its meaning for
#: histories recorded before.
MASTER_REASONS = (
    "set by the solver parameter",
    "the loss has no hess_margin",
    "several outputs share the features: Newton was the faster multi-output master where measured",
    "wide active set: more columns than rows (singular Hessian)",
    "Hessian too large to store",
    "forming the Hessian costs more than first-order steps",
    "narrow active set: the Hessian is cheap",
    "estimated cost of Newton above that of APG",
    "wide active set: estimated cost of Newton above that of APG",
    "wide active set: estimated cost of Newton below that of APG",
)


@dataclass(frozen=True)
class MasterChoice:
    """A master and why it was chosen.

    Attributes
    ----------
    name : {"newton", "apg"}
        The master.
    code : int
        Index of the reason in :data:`MASTER_REASONS`.
    """

    name: str
    code: int

    @property
    def reason(self):
        """The reason in words."""
        return MASTER_REASONS[self.code]


def _loss_name(loss):
    """The registered name of ``loss`` under its sample weights, or None."""
    from ..losses import Logistic, Square, SquaredHinge, WeightedLoss

    while isinstance(loss, WeightedLoss):
        loss = loss.loss
    for cls, name in ((Square, "square"), (SquaredHinge, "squared_hinge"),
                      (Logistic, "logistic")):
        if type(loss) is cls:
            return name
    return None


def wide_costs(n, p, K=1, loss=None, hessian_flops=None, nnz=None):
    """Estimated nanoseconds of a Newton and of an APG master on a wide block.

    Parameters
    ----------
    n, p, K, loss, hessian_flops
        As in :func:`choose_master`.
    nnz : int, optional
        Stored entries of the active block when its rows are sparse (None:
        dense, ``n p``).

    Returns
    -------
    newton, apg : float
    """
    name = _loss_name(loss)
    flops = n * K * p * p if hessian_flops is None else hessian_flops
    step = WIDE_STEP_NS + WIDE_ROW_NS * n + WIDE_SWEEP_NS * K * p * p + WIDE_HESSIAN_NS * flops
    iters = APG_ITERS_BY_LOSS[name] * (1.0 + p / n)
    if nnz is None:
        iteration = WIDE_ITER_NS + WIDE_ITER_ROW_NS * n + WIDE_ENTRY_NS * n * p
    else:
        iters *= SPARSE_APG_FACTOR
        iteration = WIDE_ITER_NS + WIDE_ITER_ROW_NS * n + WIDE_SPARSE_ENTRY_NS * nnz
    return NEWTON_STEPS_BY_LOSS[name] * step, iters * iteration


def choose_master(n, p, K=1, loss=None, solver="auto", hessian_flops=None, nnz=None):
    """Choose FGM's master for an active block of ``n`` rows and ``p`` columns.

    Parameters
    ----------
    n : int
        Rows of the active block.
    p : int
        Active columns.
    K : int, default=1
        Outputs sharing the features.
    loss : BaseLoss, optional
        The loss; Newton needs its ``hess_margin``.
    solver : {"auto", "newton", "apg", "simplemkl"}, default="auto"
        A name other than ``"auto"`` is taken as given.
    hessian_flops : float, optional
        Cost of forming the Hessian once (``K sum_i nnz_i^2`` for sparse
        rows); default the dense ``n K p^2``.
    nnz : int, optional
        Stored entries of a sparse active block (None: dense rows).

    Notes
    -----
    In order: a given ``solver``; APG without ``hess_margin``; Newton for
    several outputs (measured faster, see the module docstring); APG when the
    Hessian would exceed ``NEWTON_MAX_ENTRIES`` entries or
    ``NEWTON_MAX_FLOPS`` flops; on a wide
    block (``p > n``) the cheaper of the wide estimates (:func:`wide_costs`);
    on a narrow one APG when the narrow estimate of Newton's cost exceeds
    APG's, Newton otherwise.

    Returns
    -------
    choice : MasterChoice
    """
    if solver != "auto":
        return MasterChoice(solver, 0)
    if loss is not None and not callable(getattr(loss, "hess_margin", None)):
        return MasterChoice("apg", 1)
    if K > 1:
        # measured (benchmarks/fgm_apg_multi.py, module docstring): Newton was
        # the faster master on most multi-output sets, beyond the Hessian cap too
        return MasterChoice("newton", 2)
    if K * (p + 1) ** 2 > NEWTON_MAX_ENTRIES:
        return MasterChoice("apg", 4)
    flops = n * K * p * p if hessian_flops is None else hessian_flops
    if flops > NEWTON_MAX_FLOPS:
        return MasterChoice("apg", 5)
    if p > n:
        newton, apg = wide_costs(n, p, K, loss, flops, nnz)
        return MasterChoice("apg", 8) if newton > apg else MasterChoice("newton", 9)
    newton = NEWTON_STEPS * (flops / BLAS3_SPEEDUP + SWEEPS * K * p * p)
    if newton > APG_ITERS * 3 * n * p:
        return MasterChoice("apg", 7)
    return MasterChoice("newton", 6)
