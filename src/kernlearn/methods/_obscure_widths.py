"""OBSCURE's RBF widths in the user's units (``rbf_gamma_raw_``).

Private to :mod:`kernlearn.methods.obscure`, which re-exports
:func:`raw_rbf_gammas` (kept apart: that module is at its size limit).
"""

import functools
import inspect

import numpy as np
from sklearn.metrics import pairwise

from ..families.nystrom import _partial_keywords
from ..kernels import PrecomputedKernelList, rbf_kernel, take_columns


def _rbf_width(kernel, params, n_view):
    """The width of an RBF kernel spec, ``None`` when it is not an RBF kernel.

    The name ``"rbf"``, the library's :func:`~kernlearn.kernels.rbf_kernel`
    and scikit-learn's ``rbf_kernel`` (also inside a ``functools.partial``)
    are RBF kernels; the width is the spec's, else the partial's, else the
    function's default (scikit-learn's ``None``: ``1 / n_features`` of the
    view).  (scikit-learn's function and partials were taken for other
    kernels: ``rbf_gamma_raw_`` was ``None`` for them.)
    """
    func, bound = kernel, _partial_keywords(kernel)
    while isinstance(func, functools.partial):
        func = func.func
    if not (kernel == "rbf" or func is rbf_kernel or func is pairwise.rbf_kernel):
        return None
    default = inspect.signature(func).parameters["gamma"].default if callable(func) else None
    gamma = params.get("gamma", bound.get("gamma", default))
    return 1.0 / n_view if gamma is None else float(gamma)


def raw_rbf_gammas(klist, x_scale, n_features):
    r"""RBF widths on the user's (raw) columns, one per column and RBF kernel.

    An RBF kernel of width :math:`\gamma` on standardised columns
    :math:`(x_d - \mu_d)/\sigma_d` is, on the raw columns, the kernel
    :math:`\exp(-\sum_d \gamma_d (x_d - x'_d)^2)` with per-column widths
    :math:`\gamma_d = \gamma/\sigma_d^2` (the centring cancels), zero for the
    columns the kernel's view does not see.

    Parameters
    ----------
    klist : KernelList or PrecomputedKernelList
        The fitted kernel list.
    x_scale : ndarray of shape (n_features,) or None
        Column scales of the standardisation (``None``: identity).
    n_features : int
        Number of input columns.

    Returns
    -------
    gammas : list of (ndarray of shape (n_features,) or None) or None
        Per kernel: the raw-unit widths of an RBF kernel (named ``"rbf"``, or
        the library's or scikit-learn's ``rbf_kernel``, also in a
        ``functools.partial``), ``None`` for any other kernel; ``None`` for
        precomputed kernels.
    """
    if isinstance(klist, PrecomputedKernelList):
        return None
    scale = np.ones(n_features) if x_scale is None else np.asarray(x_scale, float)
    out = []
    for j, (kernel, _, cols) in enumerate(klist.specs):
        seen = take_columns(np.arange(n_features)[None, :], cols, j)[0]
        gamma = _rbf_width(kernel, klist.params_[j], len(seen))
        if gamma is None:
            out.append(None)
            continue
        out.append(np.zeros(n_features))
        out[-1][seen] = gamma / scale[seen] ** 2
    return out
