"""The fields every method's result object carries."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MethodResult:
    """Base of the one result object each ``methods/<paper>.py`` returns.

    A method runs its paper's algorithm end to end on validated, standardised
    data and returns a frozen subclass of this class holding everything the
    estimator exposes (weights, selection, kernel weights, ...) plus these
    common fields.  Estimators copy fitted attributes from it and map them back
    to the user's units; they hold no algorithm.

    Parameters
    ----------
    n_iter : int
        Outer iterations run (``max_iter`` counts the same thing).
    converged : bool
        Whether the stopping rule on ``tol`` was met (not the iteration cap).
    stop_reason : str
        Why the algorithm stopped, a key of :data:`kernlearn.progress.STOP_REASONS`
        (e.g. ``"tol"``, ``"max_iter"``, ``"max_features"``, ``"no_violation"``).
    history : list of dict
        One record per outer iteration (objective, violation or gap, active-set
        size, time).
    """

    n_iter: int = 0
    converged: bool = False
    stop_reason: str = ""
    history: list = field(default_factory=list)
