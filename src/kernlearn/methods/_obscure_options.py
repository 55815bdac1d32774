"""OBSCURE's settings checked together before a solve.

Private to :mod:`kernlearn.methods.obscure` (kept apart: that module is at
its size limit).
"""


def check_settings(solver, lam, warm=None):
    """Refuse settings of :class:`~kernlearn.methods.obscure.OnlineBatch` that cannot fit.

    Parameters
    ----------
    solver : OnlineBatch
        Its ``eta``, ``online_only``, ``pegasos`` and ``max_iter_online``.
    lam : float
        :math:`\\lambda` of the problem (the penalty's ``alpha``).
    warm : ObscureState, optional
        A warm state (its coefficients are a model of their own).

    Raises
    ------
    ValueError
        For a non-positive ``lam`` or ``eta``, and for ``online_only=True``
        with no stage-1 epoch to run (``pegasos=True``, which has no stage 1,
        or ``max_iter_online=0``) and no warm state: the returned model would
        be all zeros (every prediction one class) without a word.
    """
    if not lam > 0:
        raise ValueError(f"lam (the penalty's alpha) must be positive, got {lam!r}.")
    if not solver.eta > 0:
        raise ValueError(f"eta must be positive, got {solver.eta!r}.")
    if solver.online_only and warm is None:
        why = ("pegasos=True has no stage 1" if solver.pegasos else
               "max_iter_online=0 runs no stage-1 epoch" if int(solver.max_iter_online) == 0
               else None)
        if why:
            raise ValueError(
                f"online_only=True returns the stage-1 (online) solution, but {why}: "
                "the model would be all zeros. Set online_only=False, or "
                "max_iter_online >= 1 without pegasos.")
