"""The one rule for the settings of the named kernels that make them kernels.

Shared by the kernel lists (:func:`kernlearn.kernels.resolve_params`: the
p-norm MKL and multitask estimators, the command line) and the low-rank
estimators' ``degree``/``coef0``/``kernel_params``
(:func:`kernlearn.families.nystrom.kernel_params_for`): the two paths had two
rules, and the low-rank one fitted ``degree=2.5``, ``coef0=-1`` and a
``hik`` ``beta`` of ``-1`` where the lists refused them.
"""

import inspect

import numpy as np

from ._histogram_kernels import check_beta, check_block
from .utils._finite import is_finite_number, is_number
from .widths import check_gamma


def _numbers(value):
    """A finite int or float, or a numpy array of them (per-column weights of
    a kernel added to :data:`~kernlearn.kernels.KERNELS` whose default is a scalar)."""
    if is_number(value):
        return is_finite_number(value)
    return (isinstance(value, np.ndarray) and value.dtype.kind in "iuf"
            and bool(np.isfinite(value).all()))


def refuse_non_numbers(kernel, func, params, label):
    """Refuse a value that is not a finite number where the kernel's parameter
    is one (its default in ``func``'s signature is a number).

    None or a string reached the kernel's arithmetic (a bare TypeError,
    "unsupported operand type(s) for ** or pow()"), NaN a "not positive
    semi-definite" kernel.  A parameter whose default is not a number (a
    string option of a kernel added to ``KERNELS``, one of ``**kwargs``) is the
    kernel's own; a ``gamma`` may be ``"scale"`` or ``"mean"``; a numpy array
    of finite numbers is taken (the named kernels' scalar settings are
    checked by :func:`check_named_kernel`).

    Parameters
    ----------
    kernel : str
        The kernel's name (for messages).
    func : callable
        The kernel function ``KERNELS[kernel]``.
    params : dict
        The keyword arguments meant for it.
    label : callable
        ``label(name)`` names a parameter in messages.
    """
    sig = inspect.signature(func).parameters
    for name, value in params.items():
        default = getattr(sig.get(name), "default", None)
        if not is_number(default) or (name == "gamma" and isinstance(value, str)):
            continue
        if not _numbers(value):
            extra = ", 'scale' or 'mean'" if name == "gamma" else ""
            raise ValueError(f"{label(name)} must be a number for kernel {kernel!r}, "
                             f"got {value!r} (a finite number{extra}).")


def check_named_kernel(kernel, params, label):
    """Refuse the settings that leave a named kernel not positive semi-definite.

    * ``poly``, :math:`(\\gamma x^\\top y + c_0)^d`: a product of PSD kernels
      is PSD (Schur), so a whole ``degree`` :math:`d \\ge 0` with
      :math:`c_0 \\ge 0` is; a non-integer degree or :math:`c_0 < 0` is not in
      general (:math:`d = 1, c_0 < 0` gives :math:`k(0, 0) = c_0 < 0`).
      ``degree=0`` is the constant kernel (PSD); ``2.0`` is the integer 2.
    * ``hik``, :math:`\\sum_k \\min(|x_k|^\\beta, |y_k|^\\beta)`: ``beta > 0``
      (``0 ** beta`` is infinite for a negative one, a constant for zero).
    * a numeric ``gamma``: finite and positive; ``"mean"`` beside ``rbf``
      only (:func:`~kernlearn.widths.check_gamma`).
    * the histogram kernels' ``block`` (rows at a time, not a kernel setting):
      a positive integer (:func:`~kernlearn._histogram_kernels.check_block`).

    Parameters
    ----------
    kernel : str or callable
        Only the names ``poly``, ``hik`` and a numeric ``gamma`` are checked
        (a callable's settings are its own).
    params : dict
        The kernel's keyword arguments (absent ones take the kernel's defaults).
    label : callable
        ``label(name)`` names a parameter in messages (``"kernels[0]: degree"``,
        ``"kernel_params['degree']"``, ``"degree"``).

    Raises
    ------
    ValueError
        Naming the parameter, the kernel and the value.
    """
    if not isinstance(kernel, str):
        return
    # a width computed from the data is checked by name: "mean" beside poly was
    # refused by the fit only (the command line's exit 6 after reading the data)
    check_gamma(params.get("gamma"), kernel, label("gamma"))
    if kernel == "poly":
        d = params.get("degree", 2)
        if not (is_finite_number(d) and d >= 0 and float(d).is_integer()):
            raise ValueError(
                f"{label('degree')} must be a non-negative integer for kernel 'poly' "
                f"((gamma x'y + coef0)^degree is a kernel for whole degrees only), got {d!r}.")
        c0 = params.get("coef0", 1.0)
        if not (is_finite_number(c0) and c0 >= 0):
            raise ValueError(
                f"{label('coef0')} must be a finite non-negative number for kernel 'poly' "
                f"(a negative one makes the kernel indefinite), got {c0!r}.")
    if kernel in ("hik", "additive_chi2") and "block" in params:
        # (the kernel's own check ran on the first Gram, after the data was read:
        # the command line's exit 6 where its other settings give exit 2)
        check_block(params["block"], label("block"))
    if kernel == "hik":
        check_beta(params.get("beta", 1.0), label("beta"))


def computed(X):
    """``X`` in memory when it is a Dask collection, else ``X`` itself.

    The kernel functions return the Gram matrix in memory, so they compute a
    ``dask.array`` (of dense or sparse chunks: an array or a sparse matrix)
    or a Dask DataFrame first; handed on as given, its chunks of sparse
    matrices or unknown sizes stopped in NumPy with a message about another
    thing (audit 113).

    Parameters
    ----------
    X : object
        A kernel function's input.

    Returns
    -------
    X : object
        ``X.compute()`` for a Dask collection, else ``X``.
    """
    mod = type(X).__module__ or ""
    return X.compute() if mod.startswith("dask.") and hasattr(X, "compute") else X
