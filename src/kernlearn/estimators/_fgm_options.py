"""Two option rules of the FGM estimators: which classes share one problem, and
the warning of ``C="auto"`` on a fit whose rows are not in memory."""

import warnings

from ._renamed import warn_unused
from ..utils._warnings import user_stacklevel

__all__ = ["_shared_problem", "_warn_auto_c_in_memory"]


def _warn_auto_c_in_memory(auto):
    """Say that ``C="auto"`` fell back to ``C=1`` (its folds need the rows in
    memory, which an out-of-core or Dask fit does not hold)."""
    if auto:
        warnings.warn('C="auto" (cross-validation) runs in memory only; this out-of-'
                      "core / Dask fit uses C=1.0 (pass C to choose).", UserWarning,
                      stacklevel=user_stacklevel())


def _shared_problem(est):
    """Whether the classifier's classes share one problem (``multiclass``
    ``"shared"``, or ``"auto"`` on the columns of ``X``).

    ``n_jobs`` is named where the fit is one problem (that, or two classes): it
    runs ``multiclass="ovr"``'s problems in threads, and nothing else read it.
    """
    # SimpleMKL solves one output: "auto" runs its one-vs-rest problems (a shared
    # selection, the default, is refused with three or more classes); APG solves
    # K outputs since the thirty-fifth pass but "auto" keeps its one-vs-rest
    # models (multiclass="shared" asks for the shared selection)
    shared = est.multiclass == "shared" or (est.multiclass == "auto" and est.family is None
                                            and est.solver not in ("apg", "simplemkl"))
    if shared or len(est.classes_) == 2:
        warn_unused(est, ("n_jobs",), "two classes" if len(est.classes_) == 2
                    else f"multiclass={est.multiclass!r} (one shared problem)",
                    "it runs the one-vs-rest problems of multiclass='ovr' (three or "
                    "more classes) in threads")
    return shared
