"""The low-rank estimators' checks of their kernel settings (kept apart from
:mod:`kernlearn.estimators.lowrank`, its size): the kernel names a fit
takes, and the settings a kernel does not read.
"""

from sklearn.base import is_classifier
from sklearn.utils._param_validation import StrOptions

from .._histogram_kernels import check_negative_features
from ..families.nystrom import kernel_params_unread
from ..kernels import KERNELS
from ._renamed import warn_unused


class KernelNames(StrOptions):
    """The names in ``KERNELS`` (and ``"precomputed"``) when a fit validates them.

    A set taken at import refused a kernel added to ``KERNELS`` after this
    module's first import ("must be a str among {...}"), and took it before.
    """

    def __init__(self):
        super().__init__(set(KERNELS) | {"precomputed"})

    def is_satisfied_by(self, val):
        self.options = set(KERNELS) | {"precomputed"}
        return super().is_satisfied_by(val)


def warn_unread_kernel_params(est):
    """Name ``gamma``, ``degree``, ``coef0`` (and ``gamma_factors``, which scale
    ``gamma``) set beside a kernel that does not read them (``degree=3`` with
    ``kernel="rbf"`` fitted the RBF model without a word); ``None`` and the
    defaults are unset (``gamma=None`` is ``"scale"``, the default, which
    :func:`warn_unused` alone took for a width set beside ``kernel="linear"``)."""
    kernel = est.kernel
    never = kernel_params_unread(kernel)
    unread = [n for n in never if getattr(est, n) is not None]
    # gamma_factors multiply the width: unread with it (gamma_factors=(1, 3)
    # beside kernel="linear" fitted the default model)
    unread += ["gamma_factors"] if "gamma" in never else []
    when = (f"kernel={kernel!r}" if isinstance(kernel, str)
            else f"kernel={getattr(kernel, '__name__', type(kernel).__name__)} "
                 "(a callable without such an argument)")
    warn_unused(est, unread, when, "only a kernel whose signature takes them reads "
                "them (rbf: gamma; poly: gamma, degree and coef0; gamma_factors "
                "scale gamma)")
    if isinstance(kernel, str) and kernel == "precomputed" and is_classifier(est):
        # (standardize=False beside a Gram matrix fitted the same classifier: the
        # input map is of columns, a Gram matrix's rows are kernel values, and
        # the +-1 codes have fixed units; a regressor's targets read it)
        warn_unused(est, ("standardize",), "kernel='precomputed' in a classifier",
                    "the Gram matrix is used as given")
    if isinstance(kernel, str) and kernel == "precomputed" and hasattr(est, "out_of_bounds"):
        # (the regressor's: a Gram matrix has no input range, x_range_ is None, and
        # out_of_bounds="raise" beside it refused nothing and changed nothing)
        warn_unused(est, ("out_of_bounds",), "kernel='precomputed'", "a Gram matrix "
                    "has no input range to clip to or refuse beyond (x_range_ is None)")


def histogram_negatives(est, Xt, kernel):
    """As the kernel lists, columns with negative values: ``additive_chi2``
    refused before the fit, ``hik`` warned of after it, once its settings
    passed (the columns are the user's, scaled, never centred).

    Parameters
    ----------
    est : LowRankKernelClassifier or LowRankKernelRegressor
        The estimator being fitted (its ``kernel``).
    Xt : ndarray or sparse matrix
        The standardised training inputs.
    kernel : {"additive_chi2", "hik"}
        The kernel checked (nothing is checked unless it is ``est.kernel``).
    """
    if est.kernel == kernel:  # (a string: "precomputed" and callables are not)
        check_negative_features(kernel, Xt, f"kernel={kernel!r}", est.x_mean_ is not None)
