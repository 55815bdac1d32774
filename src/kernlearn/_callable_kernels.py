"""The check every kernel callable passes before a model is fitted on it.

A kernel a user brings as a callable ``k(X, Y, **params)`` is held to the
standard of a precomputed Gram matrix (:mod:`kernlearn.gram`) on its training
view: the right shape, real finite values, symmetric positive
semi-definite.  It is also the first call of the callable, so an exception it
raises there is re-raised naming its place in the kernel list: scikit-learn's
``chi2_kernel`` on standardised (centred) columns said only "X contains
negative values.", of an ``X`` that had none.  :mod:`kernlearn.kernels`
re-exports :func:`check_kernel_callable`.  :func:`warn_uncentred_callable`
says when a callable sees sparse columns that dense input would have centred.
"""

import functools
import warnings

import numpy as np
import scipy.sparse as sp

from .gram import _EXACT_PSD_CHECK, check_psd_gram
from .utils._warnings import user_stacklevel

__all__ = ["check_kernel_callable", "warn_uncentred_callable"]

# Kernel functions of x - x' alone, which centring does not change: (module, name).
_SHIFT_FREE = {("kernlearn.kernels", "rbf_kernel"), ("sklearn.metrics.pairwise", "rbf_kernel"),
               ("sklearn.metrics.pairwise", "laplacian_kernel")}


def check_kernel_callable(kernel, X, index=0, params=None, max_rows=_EXACT_PSD_CHECK,
                          name=None):
    """Refuse a kernel callable that is not a positive semi-definite kernel on ``X``.

    The callable is evaluated on (at most ``max_rows``, evenly spread) rows of
    its training view: it must return the right shape, real finite values, and
    a symmetric positive semi-definite matrix (:func:`check_psd_gram`, exact at
    this size), as a precomputed Gram matrix must.  An exception the callable
    raises is raised again (of the same type where it can be) with the
    kernel's name and position.

    Parameters
    ----------
    kernel : callable
        ``k(X, Y, **params)``.
    X : ndarray or sparse matrix of shape (n, n_features)
        The training view.
    index : int, default=0
        Position of the kernel in its list (for messages).
    params : dict, optional
        Kernel parameters.
    max_rows : int, default=500
        Rows on which the matrix is checked.
    name : str, optional
        The kernel's name in the messages (default ``kernels[index]``).
    """
    name = f"kernels[{index}]" if name is None else name
    n = X.shape[0]
    rows = np.unique(np.linspace(0, n - 1, min(n, max_rows)).astype(np.int64))
    Xs = X[rows]
    try:
        K = kernel(Xs, Xs, **(params or {}))
    except Exception as exc:
        raise _named(exc, name, kernel, params) from exc
    got = "a sparse matrix" if sp.issparse(K) else f"shape {np.shape(K)}"  # (asarray: ())
    K = np.asarray(K)
    if K.shape != (len(rows), len(rows)):
        raise ValueError(
            f"{name}: the kernel callable returned {got} for inputs of {len(rows)} and "
            f"{len(rows)} rows; k(X, Y) must return a dense array of shape "
            "(len(X), len(Y))."
        )
    if K.dtype.kind == "c":
        # (the estimators' float conversion kept the real parts under a
        # ComplexWarning; SLKL's compiled loop stopped in a numba lowering error)
        raise ValueError(
            f"{name}: the kernel callable returned complex numbers ({K.dtype}); a "
            "kernel's values are real: return K.real if the imaginary parts are zero."
        )
    if K.dtype.kind not in "biuf":
        raise ValueError(
            f"{name}: the kernel callable returned an array of {K.dtype}; k(X, Y) must "
            "return real numbers."
        )
    if not np.isfinite(K).all():
        raise ValueError(f"{name} produced NaN or infinite values on X.")
    check_psd_gram(K.astype(float), name, what="The kernel callable")


def _named(exc, name, kernel, params):
    """``exc`` again with the kernel named, of its type or its nearest built-in base
    (scikit-learn's ``InvalidParameterError``: a ``ValueError``)."""
    what = getattr(kernel, "__name__", None) or type(kernel).__name__
    label = name if name == what else f"{name} ({what})"
    given = f" with {sorted(params)}" if params else ""
    msg = (f"{label}: the kernel callable raised {type(exc).__name__} when called as "
           f"k(X, Y{', **params' if params else ''}){given} on rows of the training "
           "inputs as the kernels see them (standardize=True centres and scales the "
           f"columns): {exc}")
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins" and issubclass(cls, Exception):
            try:
                return cls(msg)
            except Exception:  # (a constructor taking other arguments)
                continue
    return RuntimeError(msg)


def warn_uncentred_callable(kernel, name, center):
    """Warn that a kernel callable sees sparse columns scaled but not centred.

    ``standardize=True`` centres dense columns; sparse ones it only scales
    (centring would densify them), and the named linear, polynomial and RBF
    kernels subtract the means themselves so that sparse and dense input
    give one model.  A callable cannot be told the means: on sparse input it
    sees other numbers than on the same data dense (scikit-learn's
    ``polynomial_kernel`` gave decision values 0.29 apart, ``linear_kernel``
    1.25), which was not said.

    Parameters
    ----------
    kernel : str or callable
        The kernel (named kernels are not warned of).
    name : str
        The kernel's name in the message.
    center : ndarray of shape (n_features,) or None
        The means a sparse ``X`` is centred by implicitly (``None``: none).
    """
    if center is None or isinstance(kernel, str) or not np.any(center):
        return
    func = kernel
    while isinstance(func, functools.partial):
        func = func.func
    if (getattr(func, "__module__", None), getattr(func, "__name__", None)) in _SHIFT_FREE:
        return  # (the same model either way: nothing to say)
    warnings.warn(
        f"{name}: the kernel callable sees the sparse X's columns scaled but not centred "
        "(standardize=True cannot centre sparse columns without densifying them; the "
        "named linear, poly and rbf kernels subtract the means themselves), so its model "
        "differs from the one on the same data given dense unless the kernel depends on "
        "differences x - x' only (RBF, Laplacian); pass X dense, or standardize=False, "
        "for one model.", UserWarning, stacklevel=user_stacklevel())
