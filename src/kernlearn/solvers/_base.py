"""Solver protocol: requirements, a frozen result and a history.

A solver re-optimises the weights of an active set of columns (the
*restricted master* of column generation).  It never knows about
scikit-learn; estimators build it, and :mod:`kernlearn.colgen` drives it.

Each solver declares the loss and penalty methods it needs in
``required_loss_methods`` / ``required_penalty_methods``;
:func:`check_compatible` turns a mismatch into an error naming the missing
method.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from .._component import ComponentMixin


class History:
    """Per-iteration records (objective, violation, active-set size, time, ...).

    Rows are dicts; :meth:`as_dict` returns one array per key, which is what
    fitted ``history_`` attributes expose and what plots read.
    """

    def __init__(self):
        self.rows = []
        self._t0 = time.perf_counter()

    def append(self, **row):
        """Record one iteration; a ``time`` column (seconds since start) is added."""
        row.setdefault("time", time.perf_counter() - self._t0)
        self.rows.append(row)

    def __len__(self):
        return len(self.rows)

    def last(self, key, default=None):
        """Last recorded value of ``key``."""
        for row in reversed(self.rows):
            if key in row:
                return row[key]
        return default

    def as_dict(self):
        """Columns of the history as arrays (missing entries are NaN)."""
        keys = []
        for row in self.rows:
            keys += [k for k in row if k not in keys]
        return {
            k: np.array([r.get(k, np.nan) for r in self.rows], dtype=float)
            for k in keys
        }


@dataclass(frozen=True)
class SolverResult:
    """What a solver returns.

    Attributes
    ----------
    coef : ndarray
        Weights of the active columns.
    intercept : float or ndarray
        Unpenalised bias.
    state : dict
        Solver state to warm-start the next call (e.g. step size, margins).
    history : History
        Per-iteration records.
    converged : bool
        Whether the stopping criterion was met before the iteration cap.
    n_iter : int
        Iterations run.
    """

    coef: np.ndarray
    intercept: object
    state: dict = field(default_factory=dict)
    history: History = field(default_factory=History)
    converged: bool = False
    n_iter: int = 0


class BaseSolver(ComponentMixin):
    """Base class of the restricted-master solvers."""

    required_loss_methods = ("value", "grad_margin")
    required_penalty_methods = ("value", "prox")


def check_compatible(solver, loss=None, penalty=None):
    """Raise ``ValueError`` naming any method the solver needs but a part lacks.

    Parameters
    ----------
    solver : BaseSolver
        The solver.
    loss, penalty : object, optional
        The loss and penalty it will be given.
    """
    for part, required, kind in [
        (loss, getattr(solver, "required_loss_methods", ()), "loss"),
        (penalty, getattr(solver, "required_penalty_methods", ()), "penalty"),
    ]:
        if part is None:
            continue
        missing = [m for m in required if not callable(getattr(part, m, None))]
        if missing:
            raise ValueError(
                f"{type(solver).__name__} needs {kind} method(s) {missing}, "
                f"which {type(part).__name__} does not provide."
            )


_CONTROLLER = None


def single_blas_thread():
    """Context manager limiting BLAS to one thread (for small, memory-bound products).

    Small active-set products gain nothing from extra BLAS threads and lose
    much when the cores are busy.  The thread-pool controller is built once:
    ``threadpool_limits`` would rescan the loaded libraries on every call.

    Returns
    -------
    context : context manager
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")

