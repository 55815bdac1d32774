"""The column-generation driver: pricing -> master -> stop.

Every method that grows an active set (FGM's feature groups, GrFL's sampled
features) runs this loop.  The caller supplies two closures:

``price()``
    returns the most violating :class:`~kernlearn.families.Candidates`, or
    ``None`` (or empty candidates) when nothing violates the optimality
    conditions, or ``(None, reason)`` to stop for another reason (a key of
    :data:`kernlearn.progress.STOP_REASONS`);
``master(candidates)``
    adds them to the caller's active set, re-solves the restricted problem
    (warm-started) and returns its objective.

The driver owns the stopping rules (no violating candidate, relative
objective change, iteration cap, time budget, user callback), the history and
the progress output, so no solver prints anything.
"""

import time
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .solvers._base import History
from .utils._threads import check_abandoned
from .utils._warnings import warn

__all__ = ["ColGenResult", "ColumnGeneration"]


@dataclass(frozen=True)
class ColGenResult:
    """Outcome of a column-generation run.

    Attributes
    ----------
    history : History
        One row per outer iteration: ``objective``, ``violation``,
        ``n_active``, ``time`` and whatever ``master`` returned as extras.
    converged : bool
        Stopped on an optimality-based rule (no violation or tolerance).
    n_iter : int
        Outer iterations run.
    stop_reason : str
        ``"no_violation"``, ``"active_set"`` (pricing returned candidates
        already in the model), ``"tol"``, ``"max_iter"`` (or the
        ``budget_name`` given), ``"time_budget"`` or ``"callback"``; see
        :data:`kernlearn.progress.STOP_REASONS`.
    """

    history: History
    converged: bool
    n_iter: int
    stop_reason: str


class ColumnGeneration:
    """Outer loop of column generation (cutting planes).

    Parameters
    ----------
    max_iter : int
        Maximum number of outer iterations (columns/groups added).
    tol : float or None, default=None
        Stop when ``|F_{T-1} - F_T| / |F_{T-1}| <= tol`` (paper 002, sec. 6:
        :math:`\\epsilon_c = 10^{-2}`).  ``None`` disables the rule.
    verbose : int, default=0
        0 silent, 1 one line per outer iteration.
    callback : callable, optional
        ``callback(info) -> bool or str``; ``info`` is the history row just
        recorded.  A truthy return stops the loop; a string (a key of
        :data:`kernlearn.progress.STOP_REASONS`) names why, as the stop
        reason and the progress line give it (``"callback"`` otherwise).
    time_budget : float, optional
        Wall-clock seconds after which no new outer iteration starts.
    name : str, default=""
        Prefix of the progress lines.
    label : str, default=""
        Words added to the progress stop line's detail (which of several
        runs of one fit this one is, e.g. ``"nu=0.01"``).
    warn : bool, default=True
        Emit a ``ConvergenceWarning`` when ``max_iter`` is reached while a
        tolerance was set and not met.
    budget_name : str, default="max_iter"
        What ``max_iter`` counts, as reported in the stop reason (GrFL: the
        feature budget ``"max_features"``).
    budget : int, optional
        The budget's value in the stop line (default ``max_iter``; GrFL's
        ``max_iter`` is the features still to add: a path extended to its
        budget read "max_features=0").
    unit : str, default="outer iterations"
        What one iteration is called in the warnings, in the words of the
        method's documentation (SLKL's ``max_iter`` counts "sweeps").
    shown_tol : float, optional
        The tolerance the stop line names when the caller applies its own
        ``tol`` rule in ``price`` (``tol=None`` here; FGM's gap-and-change rule).

    References
    ----------
    Kelley (1960), the cutting-plane method; Tan, Tsang, Wang (2014), JMLR 15,
    Algorithm 1; Rakotomamonjy et al. / paper 000, Algorithm 1.
    """

    def __init__(
        self, max_iter, tol=None, verbose=0, callback=None, time_budget=None, name="",
        warn=True, budget_name="max_iter", label="", budget=None,
        unit="outer iterations", shown_tol=None,
    ):
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.callback = callback
        self.time_budget = time_budget
        self.name = name
        self.warn = warn
        self.budget_name = budget_name
        self.label = label
        self.budget = max_iter if budget is None else budget
        self.unit = unit
        self.shown_tol = tol if shown_tol is None else shown_tol

    def run(self, price, master, n_active=None):
        """Alternate pricing and master solves until a stopping rule fires.

        Parameters
        ----------
        price : callable
            ``price() -> Candidates``; ``None`` (or empty candidates) when
            nothing violates the optimality conditions; ``(None, reason)``
            with a stop reason (a key of :data:`kernlearn.progress.STOP_REASONS`)
            when pricing stops for another reason.
        master : callable
            ``master(candidates) -> float`` or ``(float, dict_of_extras)``.
        n_active : callable, optional
            ``n_active() -> int``, recorded in the history.

        Returns
        -------
        result : ColGenResult
        """
        from .progress import Progress

        history = History()
        t0 = time.perf_counter()
        progress = (Progress(self.name or "colgen", self.max_iter, level=self.verbose)
                    if self.verbose else None)
        prev = None
        reason = self.budget_name
        it = 0
        for it in range(1, self.max_iter + 1):
            # (a problem a Ctrl-C abandoned in its thread stops here, unwarned)
            check_abandoned()
            if self.time_budget is not None and time.perf_counter() - t0 > self.time_budget:
                reason = "time_budget"
                it -= 1
                break
            cand, stop = _pricing(price())
            if cand is None:
                reason = stop
                it -= 1
                break
            # (over Python floats: max over an array's elements makes a NumPy
            # scalar of each)
            violation = float(max(np.asarray(cand.scores).tolist()))
            out = master(cand)
            obj, extras = (out if isinstance(out, tuple) else (out, {}))
            row = dict(iter=it, objective=float(obj), violation=violation, **extras)
            if n_active is not None:
                row["n_active"] = n_active()
            row["time"] = time.perf_counter() - t0
            history.append(**row)
            if progress is not None:
                progress.update(row)
            stop = None if self.callback is None else self.callback(row)
            if stop:
                reason = stop if isinstance(stop, str) else "callback"
                break
            if (
                self.tol is not None
                and prev is not None
                and abs(prev - obj) <= self.tol * max(abs(prev), 1e-300)
            ):
                reason = "tol"
                break
            prev = obj
        return self.finish(history, reason, it, progress)

    def finish(self, history, reason, it, progress=None):
        """The result of a run that stopped for ``reason`` after ``it`` iterations.

        Warns as :meth:`run` does (``max_iter`` with a tolerance not met, the
        time budget spent) and closes ``progress``; also the end of a loop run
        elsewhere on this driver's rules (SLKL's compiled sweeps).

        Returns
        -------
        result : ColGenResult
        """
        converged = reason in ("no_violation", "active_set", "tol")
        if reason == self.budget_name and self.tol is not None and self.warn:
            # (it named no remedy: LowRankKernelRegressor(nu=0.01)'s warning
            # was the only one of the estimators' not to say what to raise)
            warn(
                f"{self.name or 'column generation'} stopped after {self.budget_name}="
                f"{self.max_iter} {self.unit} without meeting tol={self.tol}; "
                f"increase {self.budget_name}.",
                ConvergenceWarning,
            )
        if reason == "time_budget" and self.warn:
            # a compute budget spent is an unconverged stop, as max_iter's is
            warn(
                f"{self.name or 'column generation'} stopped on time_budget="
                f"{self.time_budget:g} s after {it} {self.unit}, before its "
                "pricing found no violation; the model is the one reached so far.",
                ConvergenceWarning,
            )
        if progress is not None:
            detail = {"tol": f"tol={self.shown_tol}", self.budget_name:
                      f"{self.budget_name}={self.budget}"}.get(reason, "")
            detail = ", ".join(d for d in (detail, self.label) if d)
            progress.close(reason, it, detail)
        return ColGenResult(history, converged, it, reason)


def _pricing(out):
    """``(candidates, None)`` to go on, or ``(None, stop_reason)`` to stop."""
    if isinstance(out, tuple):
        cand, reason = out
        if cand is not None:
            raise TypeError("price() returns candidates, None, or (None, reason).")
        return None, str(reason)
    if isinstance(out, str):
        raise TypeError("price() must return candidates, None or (None, reason), "
                        f"not the string {out!r}.")
    if out is None or len(out) == 0:
        return None, "no_violation"
    return out, None
