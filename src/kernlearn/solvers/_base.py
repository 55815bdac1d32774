"""Solver protocol: one problem object, frozen states, a frozen result, a history.

A solver re-optimises the weights of an active set of columns (the
*restricted master* of column generation).  It never knows about
scikit-learn or the methods; a method builds the problem, and
:mod:`kernlearn.colgen` drives the outer loop.  Every solver has the one
signature ``solve(problem, warm_state=None) -> SolverResult``:

* ``problem`` -- a :class:`Problem` (active columns and their groups,
  targets, the loss with ``C`` and sample weights folded in, the penalty) or
  GrFL's :class:`~kernlearn.solvers._dirty.DirtyProblem`;
* ``warm_state`` -- a frozen :class:`SolverState` of that solver (a previous
  result's ``state``, or one built from a warm point);
* the result -- a frozen :class:`SolverResult` whose ``state`` is again the
  solver's frozen state.

Each solver declares the loss and penalty methods it needs in
``required_loss_methods`` / ``required_penalty_methods`` and the penalties it
solves in ``supported_penalties``; :func:`check_compatible` turns a mismatch
into an error naming the missing capability.
"""

import operator
import threading
import time
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from .._component import ComponentMixin


def iteration_constraints(**more):
    """The solvers' declared constraints: ``tol >= 0``, ``max_iter >= 1``, and ``more``.

    Built when a solve starts, not on import (the solvers' modules are
    imported on Dask workers, which import no scikit-learn).

    Parameters
    ----------
    **more : list
        The solver's own parameters' constraints (scikit-learn's format).

    Returns
    -------
    dict
    """
    from sklearn.utils._param_validation import Interval

    return {"tol": [Interval(Real, 0, None, closed="left")],
            "max_iter": [Interval(Integral, 1, None, closed="left")], **more}


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


class SolverState:
    """Base of the solvers' frozen state dataclasses.

    A state is what a solve ends with and what the next solve may start from
    (``warm_state``).  Fields are read as attributes; ``state["name"]`` reads
    the same field, as the dict states of earlier versions did.
    """

    def __getitem__(self, key):
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None


@dataclass(frozen=True)
class Problem:
    r"""A restricted master: :math:`\min_{W, b} \sum_i \ell(A_i W + b, y_i) + \Omega(W)`.

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (n_samples, p)
        Active columns.
    y : ndarray of shape (n_samples,) or (n_samples, K)
        Targets, one column per output.
    loss : BaseLoss
        Datafit on margins with the loss weight ``C`` and the sample weights
        folded in (:func:`kernlearn.losses.weighted`): no solver multiplies
        them in.
    penalty : BasePenalty
        Regulariser on the grouped weights.
    indptr : ndarray of shape (T + 1,), optional
        Group boundaries of the active columns (singletons by default).
    fit_intercept : bool, default=True
        Fit one unpenalised intercept per output.
    row_work : callable, optional
        How a Newton master reads the rows: ``row_work(A, y, loss, W, b)``
        returns the object that computes margins, loss sums and derivatives
        (``None``: :class:`~kernlearn.solvers.prox_newton.LocalNewtonRows`, the
        block in memory).  A fit on a Dask cluster passes
        ``kernlearn._dask_master.DaskNewtonRows``, so no solver imports the
        cluster code.
    """

    A: object
    y: np.ndarray
    loss: object
    penalty: object
    indptr: np.ndarray = None
    fit_intercept: bool = True
    row_work: object = None

    def __post_init__(self):
        n, p = self.A.shape
        if np.shape(self.y)[:1] != (n,):
            raise ValueError(f"y must have {n} rows (one per row of A), got shape "
                             f"{np.shape(self.y)}.")
        ip = np.arange(p + 1) if self.indptr is None else np.asarray(self.indptr)
        if ip.ndim != 1 or ip.size < 1 or ip[0] != 0 or ip[-1] != p or np.any(np.diff(ip) < 0):
            raise ValueError(f"indptr must rise from 0 to the {p} active columns.")
        object.__setattr__(self, "indptr", ip)

    @property
    def penalties(self):
        """The penalties of the problem (one here; two for the GrFL master)."""
        return (self.penalty,)


@dataclass(frozen=True)
class SolverResult:
    """What a solver returns.

    Attributes
    ----------
    coef : ndarray
        Weights of the active columns.
    intercept : float or ndarray
        Unpenalised bias.
    state : SolverState or dict
        The solver's frozen final state, to warm-start the next call.
    history : History
        Per-iteration records.
    converged : bool
        Whether the stopping criterion was met before the iteration cap.
    n_iter : int
        Iterations run.
    """

    coef: np.ndarray
    intercept: object
    state: object = field(default_factory=dict)
    history: History = field(default_factory=History)
    converged: bool = False
    n_iter: int = 0


class BaseSolver(ComponentMixin):
    """Base class of the restricted-master solvers.

    A solver states what it needs and refuses what it cannot solve:

    ``problem_type``
        The problem class ``solve`` takes (:class:`Problem` or
        :class:`~kernlearn.solvers._dirty.DirtyProblem`).
    ``required_loss_methods`` / ``required_penalty_methods``
        Methods the loss and every penalty must provide.
    ``supported_penalties``
        Penalty classes the solver's algorithm is written for (``None``: any
        penalty with the required methods).

    Every ``solve(problem, warm_state=None) -> SolverResult`` starts with
    :meth:`check_problem`.
    """

    problem_type = Problem
    required_loss_methods = ("value", "grad_margin")
    required_penalty_methods = ("value", "prox")
    supported_penalties = None

    def __getstate__(self):
        # the parameter-check cache of check_params is not the solver's state:
        # kept in pickles, copies and hashes, it changed the hash of a used
        # solver, and a warm-started GrFL fit with solver=ADMM(...) matched its
        # kept path to that hash (the first warm refit started over)
        state = dict(vars(self))
        state.pop("_checked_params", None)
        return state

    def check_problem(self, problem):
        """Raise unless ``problem`` is one this solver solves.

        Parameters
        ----------
        problem : Problem or DirtyProblem
            The problem about to be solved.

        Raises
        ------
        TypeError
            ``problem`` is not of :attr:`problem_type`.
        ValueError
            A part lacks a method the solver needs, or the penalty is not one
            the solver supports; or a parameter is invalid (:meth:`check_params`).
        """
        if not isinstance(problem, self.problem_type):
            raise TypeError(f"{type(self).__name__}.solve takes a "
                            f"{self.problem_type.__name__}, got {type(problem).__name__}.")
        self.check_params(problem)
        for penalty in problem.penalties:
            check_compatible(self, problem.loss, penalty)

    def check_params(self, problem):
        """Raise on a parameter of the solver or of a penalty of ``problem``
        outside its declared constraints (``_constraints``), in the
        estimators' wording.

        ``ADMM(max_iter=-1)`` ran no iteration and returned zeros, a negative
        ``alpha`` was used as given.  Checked here, on the client: a solve
        never runs on a Dask worker, which imports no scikit-learn.

        Parameters
        ----------
        problem : Problem or DirtyProblem
            The problem about to be solved.

        Raises
        ------
        sklearn.utils._param_validation.InvalidParameterError
            A ``ValueError`` naming the parameter and its valid values.
        """
        # Once per settings: a GrFL fit solves hundreds of masters with the same
        # solver and penalties (6 us a check, about 2 % of a 100 x 10 fit).  A
        # parameter set to another object since the last check is checked again.
        seen = tuple(value for part in (self, *problem.penalties)
                     for key, value in vars(part).items() if key != "_checked_params")
        last = getattr(self, "_checked_params", None)
        if last is not None and len(last) == len(seen) and all(
                map(operator.is_, last, seen)):
            return
        self._validate_params()
        for penalty in problem.penalties:
            # (a penalty written by the user need not have declared any)
            getattr(penalty, "_validate_params", lambda: None)()
        self._checked_params = seen


def check_compatible(solver, loss=None, penalty=None):
    """Raise ``ValueError`` naming any capability the solver needs but a part lacks.

    Parameters
    ----------
    solver : BaseSolver
        The solver.
    loss, penalty : object, optional
        The loss and penalty it will be given (``None`` parts are not checked).

    Raises
    ------
    ValueError
        A missing method (named), or a penalty outside the solver's
        ``supported_penalties``.
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
    supported = getattr(solver, "supported_penalties", None)
    if penalty is not None and supported is not None and not isinstance(penalty, supported):
        names = ", ".join(c.__name__ for c in supported)
        raise ValueError(
            f"{type(solver).__name__} solves only problems penalised by {names}; "
            f"{type(penalty).__name__} lacks that capability (use a solver that "
            "supports it, e.g. APG)."
        )


_CONTROLLER = None
# BLAS's thread count is the process's, shared by fits running in threads (a
# grid search with the threading backend, FGM's one-vs-rest threads): the
# first block entered sets the limit and the last one left restores it.  Each
# block restoring what it found gave another thread's solve its BLAS threads
# back while it ran, or, left last, kept the process at one BLAS thread for good.
_LOCK = threading.Lock()
_INSIDE = 0  # blocks entered and not left, in all threads
# The BLAS libraries' thread counts found by the first block, [(library, count)],
# while they are limited (None when no limit was needed).  They are kept until
# every count is back: a restore stopped part way (Ctrl-C) is finished by the
# next one, where a new limiter would have taken the libraries left at one
# thread for their original count and kept the process there for good.
_LIMITER = None


def _restore_blas_threads():
    """Give each limited BLAS library back its thread count (under ``_LOCK``)."""
    global _LIMITER
    for lib, count in _LIMITER or ():
        lib.set_num_threads(count)
    _LIMITER = None


class _SingleBlasThread:
    """The block of :func:`single_blas_thread`."""

    __slots__ = ()

    def __enter__(self):
        global _CONTROLLER, _INSIDE, _LIMITER
        with _LOCK:
            _INSIDE += 1
            try:
                if _INSIDE == 1:
                    if _CONTROLLER is None:
                        from threadpoolctl import ThreadpoolController

                        _CONTROLLER = ThreadpoolController().select(user_api="blas")
                    libs = _CONTROLLER.lib_controllers
                    # Already one thread (OMP_NUM_THREADS=1, or inside another
                    # limit): nothing to set, whose cost would be the only cost
                    # of a small solve.
                    if _LIMITER is None and any(lib.num_threads > 1 for lib in libs):
                        _LIMITER = [(lib, lib.num_threads) for lib in libs]
                    for lib, _ in _LIMITER or ():
                        lib.set_num_threads(1)
            except BaseException:
                # (Ctrl-C part way: the block is not left, and the libraries
                # already limited stayed at one thread)
                _INSIDE -= 1
                if _INSIDE == 0:
                    _restore_blas_threads()
                raise
        return self

    def __exit__(self, *exc):
        global _INSIDE
        with _LOCK:
            _INSIDE -= 1
            if _INSIDE == 0:
                _restore_blas_threads()
        return False


_SINGLE_BLAS_THREAD = _SingleBlasThread()


def single_blas_thread():
    """Context manager limiting BLAS to one thread (for small, memory-bound products).

    Small active-set products gain nothing from extra BLAS threads and lose
    much when the cores are busy.  The thread-pool controller is built once:
    ``threadpool_limits`` would rescan the loaded libraries on every call.
    Blocks may overlap in several threads: the limit holds until the last
    one is left, which restores the count found by the first.

    Returns
    -------
    context : context manager
    """
    return _SINGLE_BLAS_THREAD

