"""Plain, clonable components and the name registries of each axis.

Losses, penalties, families and solvers are small objects whose constructor
arguments are their parameters.  :class:`ComponentMixin` gives them
``get_params``/``set_params`` so that scikit-learn's ``clone`` and
``GridSearchCV(param_grid={"penalty__alpha": ...})`` work on them, and a
:class:`Registry` maps user-facing names (``loss="logistic"``) to classes.
"""

import inspect


class ComponentMixin:
    """``get_params``/``set_params``/``__repr__`` from the constructor signature."""

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    _get_param_names = _param_names  # (scikit-learn's name, for the shared checks)

    def get_params(self, deep=True):
        """Return the constructor parameters of the component.

        Parameters
        ----------
        deep : bool, default=True
            Also return the parameters of nested components.

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        out = {}
        for name in self._param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                for k, v in value.get_params().items():
                    out[f"{name}__{k}"] = v
            out[name] = value
        return out

    def set_params(self, **params):
        """Set constructor parameters (``name`` or ``name__sub``).

        Parameters
        ----------
        **params : dict
            New parameter values.

        Returns
        -------
        self : object
            The component.
        """
        valid = self._param_names()
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for {type(self).__name__}; "
                    f"valid parameters are {valid}."
                )
            if sub:
                getattr(self, name).set_params(**{sub: value})
            else:
                setattr(self, name, value)
        return self

    def _validate_params(self):
        """Check the parameters by scikit-learn's rules, against the class's
        ``_constraints()`` when it has them, as the estimators' checks do (and
        with their cache: a family is checked on every fit of its estimator).

        The constraints are built here, not on import: families are imported
        on Dask workers, which import no scikit-learn.
        """
        cls = type(self)
        make = getattr(cls, "_constraints", None)
        if make is None:
            return
        if "_parameter_constraints" not in cls.__dict__:
            cls._parameter_constraints = make()
        from .utils._params import validate_params_cached

        validate_params_cached(self)

    def __repr__(self):
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._param_names())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and all(
            _same(getattr(self, k), getattr(other, k)) for k in self._param_names()
        )

    __hash__ = object.__hash__


def _same(a, b):
    try:
        import numpy as np

        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return np.array_equal(np.asarray(a), np.asarray(b))
        return bool(a == b)
    except Exception:
        return a is b


class Registry:
    """Map names to component classes for one axis (losses, penalties, ...).

    Parameters
    ----------
    kind : str
        What the registry holds, used in error messages ("loss", "penalty").
    """

    def __init__(self, kind):
        self.kind = kind
        self._classes = {}

    def register(self, name):
        """Class decorator that registers ``cls`` under ``name``."""

        def deco(cls):
            self._classes[name] = cls
            cls.name = name
            return cls

        return deco

    def names(self):
        """Sorted registered names."""
        return sorted(self._classes)

    def resolve(self, spec, allowed=None, **kwargs):
        """Return a component instance from a name or an instance.

        Parameters
        ----------
        spec : str or component instance
            A registered name, or an already-built component (returned as is).
        allowed : iterable of str, optional
            Restrict names to this subset (e.g. the losses an estimator supports).
        **kwargs : dict
            Constructor arguments when ``spec`` is a name.

        Returns
        -------
        component : object
        """
        if isinstance(spec, str):
            names = self.names() if allowed is None else sorted(allowed)
            if spec not in self._classes or spec not in names:
                raise ValueError(
                    f"Unknown {self.kind} {spec!r}; choose one of {names}."
                )
            return self._classes[spec](**kwargs)
        if spec is None or isinstance(spec, type):
            raise TypeError(
                f"{self.kind} must be a name or an instance, got {spec!r}."
            )
        return spec
