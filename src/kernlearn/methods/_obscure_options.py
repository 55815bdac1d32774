"""OBSCURE's settings checked together before a fit: the solver's and the kernel list's.

Private to :mod:`kernlearn.methods.obscure` (kept apart: that module is at
its size limit).
"""

from numbers import Integral, Real


def online_batch_constraints():
    """:class:`~kernlearn.methods.obscure.OnlineBatch`'s declared parameter constraints.

    As :class:`~kernlearn.PNormMKLClassifier` declares the same
    settings (``max_iter=0`` runs stage 1 only).  ``OnlineBatch(max_iter=-1)``
    ran as ``max_iter=0``, a negative ``tol`` ran every epoch, a negative
    ``max_steps`` returned an all-zero model, all without a word.  Built when a
    solve starts (see :func:`kernlearn.solvers._base.iteration_constraints`).

    Returns
    -------
    dict
        scikit-learn's format, checked by ``BaseSolver.check_params``.
    """
    from sklearn.utils._param_validation import Interval, StrOptions

    from ..solvers._base import iteration_constraints

    return iteration_constraints(
        eta=[Interval(Real, 0, None, closed="neither")],
        max_iter_online=[Interval(Integral, 0, None, closed="left")],
        max_iter=[Interval(Integral, 0, None, closed="left")],
        tol=[Interval(Real, 0, None, closed="left"), None],
        online_only=["boolean"], pegasos=["boolean"], best_iterate=["boolean"],
        max_steps=[Interval(Integral, 1, None, closed="left"), None],
        backend=[StrOptions({"auto", "numba", "numpy"})],
        random_state=["random_state"], verbose=["verbose"])


def check_settings(solver, lam, warm=None):
    """Refuse settings of :class:`~kernlearn.methods.obscure.OnlineBatch` that cannot fit.

    Parameters
    ----------
    solver : OnlineBatch
        Its ``online_only``, ``pegasos`` and ``max_iter_online``.
    lam : float
        :math:`\\lambda` of the problem (the penalty's ``alpha``).
    warm : ObscureState, optional
        A warm state (its coefficients are a model of their own).

    Raises
    ------
    ValueError
        For a non-positive ``lam`` (the solver's own parameters are checked
        against :func:`online_batch_constraints`), and, with no warm state,
        for settings that run no epoch of either stage: ``online_only=True``
        with no stage-1 epoch to run (``pegasos=True``, which has no stage 1,
        or ``max_iter_online=0``), or ``max_iter=0`` (stage 1 only) with no
        stage-1 epoch either.  The returned model would be all zeros (every
        prediction one class) without a word.
    """
    if not lam > 0:
        raise ValueError(f"lam (the penalty's alpha) must be positive, got {lam!r}.")
    if warm is not None:
        return
    why = ("pegasos=True has no stage 1" if solver.pegasos else
           "max_iter_online=0 runs no stage-1 epoch" if int(solver.max_iter_online) == 0
           else None)
    if why and solver.online_only:
        raise ValueError(
            f"online_only=True returns the stage-1 (online) solution, but {why}: "
            "the model would be all zeros. Set online_only=False, or "
            "max_iter_online >= 1 without pegasos.")
    if why and int(solver.max_iter) == 0:
        # max_iter=0 skips stage 2 (the stage-1 solution is returned): with no
        # stage 1 either, no sample is ever visited
        raise ValueError(
            f"max_iter=0 runs no stage-2 epoch, and {why}: no epoch of either stage "
            "runs, so the model would be all zeros. Set max_iter >= 1, or "
            "max_iter_online >= 1 without pegasos.")


def with_intercept(specs, fit_intercept):
    """The kernel specs with the constant kernel appended for ``fit_intercept``.

    Parameters
    ----------
    specs : list
        The user's kernel specs (or the default list).
    fit_intercept : bool
        Append ``"constant"``, the bias through the kernel (paper 001,
        footnote 2).

    Returns
    -------
    specs : list

    Raises
    ------
    ValueError
        For an empty list: with the constant kernel appended it was not
        empty any more, and the fit returned a bias-only model (every
        prediction one class) without a word.
    """
    if not specs:
        raise ValueError("kernels must contain at least one kernel" + (
            " (fit_intercept=True adds the constant kernel to them; it is not one of "
            "them)." if fit_intercept else "."))
    return list(specs) + (["constant"] if fit_intercept else [])
