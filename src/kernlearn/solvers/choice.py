"""Which master solves FGM's restricted problem: chosen by cost, with its reason.

Proximal Newton (:class:`~kernlearn.solvers.ProxNewton`) forms the Hessian
``A' diag(l'') A`` of the active block once per Newton step, ``n K p^2`` flops
(``K sum_i nnz_i^2`` on sparse rows), and its block coordinate descent sweeps
cost ``K p^2`` each; it converges in a handful of steps whatever the
conditioning.  APG (:class:`~kernlearn.solvers.APG`) costs ``O(n p)`` per
iteration and needs many.  On a *narrow* active set (``p <= n``) the Hessian
is cheap and Newton wins; on a *wide* one (``p > n``) the Hessian has rank at
most ``n`` -- the problem is flat along ``p - n`` directions where coordinate
descent crawls -- and each sweep alone costs more than an APG iteration, so
APG is chosen.  In between, the two costs are estimated: a Newton solve
``NEWTON_STEPS * (n K p^2 / BLAS3_SPEEDUP + SWEEPS K p^2)`` against an APG
solve ``APG_ITERS * 3 n p`` (matrix products run several times more flops per
second than APG's memory-bound products: ``BLAS3_SPEEDUP``).  The constants
are typical counts measured on warm-started FGM masters (square and squared
hinge losses, correlated Gaussian columns, n = 500): Newton is then chosen up
to about 220 columns at n = 500 and 280 at any larger n.
"""

from dataclasses import dataclass

__all__ = ["MASTER_REASONS", "MasterChoice", "choose_master"]

# Above this many Hessian entries (K (p + 1)^2) or flops per Newton step the
# Hessian is not formed.
NEWTON_MAX_ENTRIES = 8_000_000
NEWTON_MAX_FLOPS = 2e10
# Cost model (see the module docstring).
NEWTON_STEPS = 5
SWEEPS = 20
BLAS3_SPEEDUP = 8.0
APG_ITERS = 60

#: Why a master was chosen; ``MasterChoice.code`` indexes this tuple (the
#: code is what a numeric history records).
MASTER_REASONS = (
    "set by the solver parameter",
    "the loss has no hess_margin",
    "several outputs share the features and only Newton solves them jointly",
    "wide active set: more columns than rows (singular Hessian)",
    "Hessian too large to store",
    "forming the Hessian costs more than first-order steps",
    "narrow active set: the Hessian is cheap",
    "estimated cost of Newton above that of APG",
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


def choose_master(n, p, K=1, loss=None, solver="auto", hessian_flops=None):
    """Choose FGM's master for an active block of ``n`` rows and ``p`` columns.

    Parameters
    ----------
    n : int
        Rows of the active block.
    p : int
        Active columns.
    K : int, default=1
        Outputs sharing the features (APG solves one).
    loss : BaseLoss, optional
        The loss; Newton needs its ``hess_margin``.
    solver : {"auto", "newton", "apg", "simplemkl"}, default="auto"
        A name other than ``"auto"`` is taken as given.
    hessian_flops : float, optional
        Cost of forming the Hessian once (``K sum_i nnz_i^2`` for sparse
        rows); default the dense ``n K p^2``.

    Notes
    -----
    In order: a given ``solver``; APG without ``hess_margin``; Newton for
    several outputs (APG solves one); APG when ``p > n``, when the Hessian
    would exceed ``NEWTON_MAX_ENTRIES`` entries or ``NEWTON_MAX_FLOPS`` flops,
    or when the estimated Newton cost exceeds APG's; Newton otherwise.

    Returns
    -------
    choice : MasterChoice
    """
    if solver != "auto":
        return MasterChoice(solver, 0)
    if loss is not None and not callable(getattr(loss, "hess_margin", None)):
        return MasterChoice("apg", 1)
    if K > 1:
        return MasterChoice("newton", 2)
    if p > n:
        return MasterChoice("apg", 3)
    if K * (p + 1) ** 2 > NEWTON_MAX_ENTRIES:
        return MasterChoice("apg", 4)
    flops = n * K * p * p if hessian_flops is None else hessian_flops
    if flops > NEWTON_MAX_FLOPS:
        return MasterChoice("apg", 5)
    newton = NEWTON_STEPS * (flops / BLAS3_SPEEDUP + SWEEPS * K * p * p)
    if newton > APG_ITERS * 3 * n * p:
        return MasterChoice("apg", 7)
    return MasterChoice("newton", 6)
