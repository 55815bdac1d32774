"""Parameter checks by scikit-learn's rules, cached per class.

Shared by the estimators and the components (families) that declare
``_parameter_constraints``; apart from :mod:`kernlearn.estimators` so that a
component reaches it without an import circle.
"""

from sklearn.utils._param_validation import (
    make_constraint,
    validate_parameter_constraints,
)

__all__ = ["param_names", "validate_params_cached"]


def validate_params_cached(est):
    """``est._validate_params()`` with its constraints compiled once per class.

    scikit-learn's check reads the parameters through ``get_params`` (an
    ``inspect.signature`` call) and rebuilds every constraint object on each
    fit.  Here both are cached on the class, as is the verdict on plain
    scalar values (``int``, ``float``, ``str``, ``bool``, ``None``); a value no
    constraint accepts is passed to scikit-learn's own check, which raises its
    usual error.

    Parameters
    ----------
    est : BaseEstimator
        An estimator with ``_parameter_constraints``.

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
        On a parameter value its constraints reject.
    """
    cls = type(est)
    compiled = cls.__dict__.get("_compiled_constraints")
    if compiled is None:
        declared = cls._parameter_constraints
        compiled = [(name, [make_constraint(c) for c in declared[name]])
                    for name in param_names(cls)
                    if name in declared and declared[name] != "no_validation"]
        # the set first: a fit in another thread that finds the constraints
        # reads the set next (stored after them, it was missing in between, or
        # a parent class's, whose verdicts are not this class's)
        cls._accepted_scalars = set()
        cls._compiled_constraints = compiled
    accepted = cls._accepted_scalars
    for name, constraints in compiled:
        value = getattr(est, name)
        # a plain scalar's verdict never changes: remembered (the type is part
        # of the key, as 1, 1.0 and True are equal but not equally valid)
        key = (name, type(value), value) if type(value) in _SCALARS else None
        if key is not None and key in accepted:
            continue
        for c in constraints:
            if c.is_satisfied_by(value):
                break
        else:
            validate_parameter_constraints({name: cls._parameter_constraints[name]},
                                           {name: value}, caller_name=cls.__name__)
        if key is not None and len(accepted) < _MAX_ACCEPTED:
            accepted.add(key)


def param_names(cls):
    """``cls._get_param_names()``, read once per class.

    scikit-learn reads the names from the signature of ``__init__`` on every
    call (``get_params`` does so on every fit); they never change.

    Parameters
    ----------
    cls : type
        An estimator class.

    Returns
    -------
    names : tuple of str
    """
    names = cls.__dict__.get("_param_names_cached")
    if names is None:
        names = cls._param_names_cached = tuple(cls._get_param_names())
    return names


_SCALARS = frozenset({int, float, str, bool, type(None)})
_MAX_ACCEPTED = 4096  # bounded: a long random search tries many values
