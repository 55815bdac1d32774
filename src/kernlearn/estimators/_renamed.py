"""One parameter vocabulary: renamed parameters, unused ones, the estimators' inner fits.

An estimator keeps a renamed parameter's old name as a keyword whose default
is the string ``"deprecated"`` and lists its renames in the class attribute
``_renamed_parameters`` (``{old: new}``), the one table that
:func:`renamed_parameter`, the command line (:func:`refuse_both_given`) and
the estimators' inner fits (:func:`inner_fits`) read.
"""

from functools import cache

from .._histogram_kernels import NegativeFeaturesWarning
from ..utils._warnings import summed, warn

__all__ = ["RenamedParameterWarning", "RenamedParameters", "UnusedParameterWarning",
           "inner_fits", "refuse_both_given", "renamed_parameter", "warn_unused"]


class RenamedParameterWarning(FutureWarning):
    """A parameter set under its pre-0.2 name, or one whose meaning changed in 0.2.

    A ``FutureWarning`` (filter either); its own class lets an estimator's
    inner fits (Platt's folds, a search's validation fits) drop it: the
    estimator's own fit says it once.
    """


class UnusedParameterWarning(UserWarning):
    """Parameters set that the fit about to run does not read.

    Public as ``kernlearn.UnusedParameterWarning`` (a ``UserWarning``).  Said
    once per fit, naming the settings, the setting that leaves them unread
    and what reads them (``gamma=0.5`` beside ``kernel="linear"``); the model
    is the one fitted without them.  Filter it by its class:
    ``warnings.filterwarnings("error", category=kernlearn.UnusedParameterWarning)``
    or, in pytest, ``-W error::kernlearn.UnusedParameterWarning`` (Python's own
    ``-W`` option reads its filters before third-party packages can be
    imported, so it ignores this one).  An estimator's
    inner fits (Platt's folds, a search's validation fits) do not repeat it.
    """


class RenamedParameters:
    """``set_params`` of an estimator with renamed parameters: a new name given
    drops the value its old name held.

    An estimator built with an old name (``feature_scaling=False``) kept it
    when ``set_params`` later gave the new one: at the new name's default
    (``standardize=True``) the old value was silently used, at another value
    the fit refused "both names set".  The name set last is the one used, as
    on the command line (:func:`refuse_both_given`'s ``overriding``); both
    names in one call are refused at ``fit``, as in the constructor.
    """

    def set_params(self, **params):
        """Set the parameters (scikit-learn's ``set_params``).

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : estimator instance
        """
        import inspect

        signature = None
        for old, new in getattr(type(self), "_renamed_parameters", {}).items():
            if new in params and old not in params and not _at_default(self, old):
                signature = signature or inspect.signature(type(self).__init__).parameters
                params[old] = signature[old].default
        return super().set_params(**params)


def renamed_parameter(est, old, new=None, default="deprecated", exclusive=True,
                      overrides=False):
    """Value of a renamed constructor parameter, honouring its old name.

    Estimators keep the old name as a keyword whose default is the string
    ``"deprecated"``; when a user sets it, a :class:`RenamedParameterWarning`
    names the new parameter and the old value is used (the new one must then
    be left at its default).

    Parameters
    ----------
    est : BaseEstimator
    old : str
        Old parameter name.
    new : str, optional
        New parameter name (default: ``type(est)._renamed_parameters[old]``).
    default : object, default="deprecated"
        The sentinel default of the old name.
    exclusive : bool, default=True
        Refuse the old name when the new one is also set away from its
        default (``False`` where the new name keeps an older meaning of its
        own when the old one is given, as GrFL's ``tol`` beside ``eps``).
    overrides : bool, default=False
        With ``exclusive=False``: the old name's value replaces the new one's,
        and the warning says so when the new one is set too (it said only
        "use new=<old value>", and the new name's value was silently unused).

    Returns
    -------
    value : the effective value of ``new``
    """
    new = new or type(est)._renamed_parameters[old]
    value = getattr(est, old)
    if isinstance(value, str) and value == default:
        return getattr(est, new)
    if exclusive:
        _refuse_both(est, old, new, value)
    unused = ""
    if overrides and not _at_default(est, new):
        unused = f" ({new}={getattr(est, new)!r}, also given, is not used)"
    warn(f"{type(est).__name__}: '{old}' was renamed '{new}' in 0.2 and will "
         f"be removed in 0.4; use {new}={value!r}{unused}.",
         RenamedParameterWarning, stacklevel="user")
    return value


def refuse_both_given(cls, params, overriding=()):
    """ValueError when ``params`` set a renamed parameter under both its names.

    For callers that know which names were given (the command line's ``-p``
    and config file), before any data is read: the new name at its default
    counts as given there, where in Python ``standardize=True`` beside
    ``feature_scaling=False`` cannot be told from the default (and the old
    name's value is taken).  A name in ``overriding`` (``-p``) replaces its
    other name given elsewhere (the config file): it is removed from
    ``params``.

    Parameters
    ----------
    cls : type
        Estimator class (its ``_renamed_parameters``).
    params : dict
        The parameters given, by name (updated in place).
    overriding : collection of str, default=()
        Names that override the others (``-p`` over the config file).

    Raises
    ------
    ValueError
    """
    for old, new in getattr(cls, "_renamed_parameters", {}).items():
        if old in params and new in params:
            if (old in overriding) != (new in overriding):
                del params[new if old in overriding else old]
            else:
                raise _both(cls.__name__, old, new, params[old], params[new])


def inner_fits(run, what, risk, n_fits=None):
    """Run an estimator's own inner fits: one warning where they gave many.

    The renamed- and unused-parameter warnings of the fits and ``hik``'s
    negative columns are dropped (the estimator's own fit gives them) and their ``ConvergenceWarning`` s are summed up in one
    (one per fit buried the estimator's own); any other warning passes as it
    came.  Only the warnings of this thread's fits are collected, and nothing
    of the process's warnings machinery changes (:mod:`kernlearn.utils._warnings`):
    fits in other threads warn as they would alone.

    Parameters
    ----------
    run : callable
        Runs the fits.
    what : str
        The fits, as the summary names them (``"validation fits"``).
    risk : str
        What their stopping early may spoil (``"their scores may rank C
        wrongly"``).
    n_fits : int, optional
        Number of fits (default: ``run()`` returns an array of one entry per fit).

    Returns
    -------
    out : the value of ``run()``
    """
    # (not warnings.catch_warnings: its filters and recorder are the process's,
    # which fits in other threads share; see utils/_warnings.py)
    return summed(run, what, (lambda out: out.size) if n_fits is None else n_fits,
                  f"; {risk}: raise max_iter or tol.",
                  (RenamedParameterWarning, UnusedParameterWarning, NegativeFeaturesWarning))


def warn_unused(est, names, when, instead):
    """:class:`UnusedParameterWarning` naming the parameters of ``names`` set
    away from their defaults, which the fit about to run does not use.

    Parameters
    ----------
    est : BaseEstimator
    names : sequence of str
        Parameters the fit does not read.
    when : str
        The setting that leaves them unused (``'C="auto"'``).
    instead : str
        What to set to use them.
    """
    given = [f"{n}={getattr(est, n)!r}" for n in names if not _default_value(est, n)]
    if given:
        warn(f"{type(est).__name__}: {', '.join(given)} not used with {when}; "
             f"{instead}.", UnusedParameterWarning, stacklevel="user")


@cache
def _init_defaults(cls):
    """The constructor defaults of ``cls`` by name (read once per class: the
    signature of every checked parameter, read again in every fit, was a
    millisecond of a multitask fit of a few milliseconds)."""
    import inspect

    return {n: p.default for n, p in inspect.signature(cls.__init__).parameters.items()}


def _at_default(est, name):
    """Whether parameter ``name`` of ``est`` holds its constructor default."""
    default = _init_defaults(type(est))[name]
    current = getattr(est, name)
    return current is default or (type(current) is type(default) and current == default)


def _default_value(est, name):
    """:func:`_at_default`, or the default's number in another numeric type
    (``p=2`` or ``np.float64(2.0)`` for ``p=2.0``: the same setting, which
    :func:`warn_unused` named as one set away from its default; a grid of NumPy
    numbers warned in every fit)."""
    if _at_default(est, name):
        return True
    from numbers import Real

    default = _init_defaults(type(est))[name]
    current = getattr(est, name)
    numeric = all(isinstance(v, Real) and not isinstance(v, bool)
                  for v in (current, default))
    return numeric and bool(current == default)


def _refuse_both(est, old, new, value):
    """ValueError when a renamed parameter is set under both its names."""
    if not _at_default(est, new):
        raise _both(type(est).__name__, old, new, value, getattr(est, new))


def _both(name, old, new, value, new_value):
    return ValueError(f"{name}: set '{new}' or its old name '{old}', "
                      f"not both ({new}={new_value!r}, {old}={value!r}).")
