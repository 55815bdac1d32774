r"""SLKL estimators: kernel ridge regression with a learned conical combination of
rank-1 Nystrom kernels (paper 003).

The learned kernel is :math:`\tilde K(\mu) = \sum_{m\in\mathcal S}\mu_m c_m c_m^\top`
(eq. 3) over ``M`` columns sampled at random; :math:`\mu \ge 0` minimises

.. math:: F(\mu) = y^\top (I + \tilde K(\mu))^{-1} y + \nu \sum_m \mu_m

(eq. 14 with :math:`\lambda = 1`, sec. 4.1), solved by stochastic coordinate
Newton descent (:func:`kernlearn.methods.slkl.fit_slkl`).  Predictions use
only the :math:`m_0` centres with :math:`\mu_m > 0`:

.. math:: \tilde f(x) = \sum_{m:\,\mu_m>0} \mu_m\,(c_m^\top z)\,
          \frac{k(x_m, x)}{\sqrt{k(x_m, x_m)}}, \qquad z = (I + \tilde K(\mu))^{-1} y,

which is eqs. (16)-(17) with :math:`\alpha^* = 2 z`.  With the default
``gamma_factors="auto"`` the candidate columns alternate between the default
width and a ten times broader kernel (on heavy-tailed inputs also a narrower
one; ``center_factors_`` holds each centre's factor of ``gamma``), so
:math:`\mu` also learns the widths.

With ``standardize=True`` (the default) the kernel is applied after the
input map :math:`T(x) = (x - \bar x) / s` (dense; :math:`x / s` for sparse
input), so the model is :math:`\tilde f(x) = \sum_m k(T(x), T(x_m))\,a_m + b`:
``centers_`` are stored on the raw scale, ``x_mean_``/``x_scale_`` hold
:math:`T`, ``kernel_params_`` (the width) are on the standardised scale, and
``dual_coef_``/``intercept_`` are in the target's units.
"""

import weakref
from functools import lru_cache, partial
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..methods._kept_rows import kept_rows
from ..methods._slkl_options import nu_values, positive_numbers
from ..methods.slkl import (
    CODES_NU_GRID,
    NU_PATIENCE,
    NU_SE_FRACTION,
    REGRESSION_COLUMNS,
    classifier_columns,
    fit_slkl,
)
from ..methods._class_outputs import class_attributes, present_outputs
from .._histogram_kernels import HISTOGRAM_KERNELS
from sklearn.utils._available_if import available_if

from ..preprocessing import implicit_center
from ._dask_predict import dask_input_doc, decided
from ._decisions import (LandmarkExpansion, chained, class_labels, classes_kept,
                         one_column_as_vector)
from ._base import (
    all_or_nothing,
    ProbabilityMixin,
    _has_proba,
    canonical_sparse,
    check_two_classes,
    check_weighted_classes,
    encode_labels,
    fit_sample_weight,
    input_standardization,
    plain_predict_data,
    standardize_fit,
    target_standardization,
    target_values,
    validate_data,
    validate_params_cached,
)
from ._input_range import (OUT_OF_BOUNDS, OUT_OF_BOUNDS_DOC, out_of_bounds_mode,
                           record_input_range)
from ._lowrank_params import KernelNames, histogram_negatives, warn_unread_kernel_params
from ._platt import platt_attr_doc

__all__ = ["LowRankKernelClassifier", "LowRankKernelRegressor"]


#: one value of ``nu``; a path is a non-empty sequence of them
_NU = Interval(Real, 0, None, closed="neither")


class _BaseLowRank(BaseEstimator):
    """Shared fit/predict of the SLKL regressor and classifier."""

    _parameter_constraints: dict = {
        "kernel": [KernelNames(), callable],
        "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"scale"}), None],
        "gamma_factors": [StrOptions({"auto"}), tuple, list],
        "degree": [Interval(Real, 0, None, closed="left"), None],
        "coef0": [Interval(Real, None, None, closed="neither"), None],
        "kernel_params": [dict, None],
        "n_columns": [Interval(Integral, 1, None, closed="left"), None],
        "nu": [_NU, StrOptions({"auto"}), tuple, list],
        "precompute": ["boolean"],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "rule": [StrOptions({"newton", "exact"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "standardize": ["boolean"],
    }

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma="scale",
        degree=None,
        coef0=None,
        kernel_params=None,
        n_columns=None,
        nu="auto",
        precompute=True,
        fit_intercept=True,
        tol=1e-4,
        max_iter=100,
        rule="newton",
        random_state=None,
        verbose=0,
        standardize=True,
        gamma_factors="auto",
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.gamma_factors = gamma_factors
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_columns = n_columns
        self.nu = nu
        self.precompute = precompute
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.rule = rule
        self.random_state = random_state
        self.verbose = verbose
        self.standardize = standardize

    def _validate_params(self):
        validate_params_cached(self)
        # the entries of a sequence, before any data is read (the CLI: an invalid
        # parameter, exit 2; an empty nu was "cannot fit", exit 6, after the data)
        nu_values(self.nu)
        if not isinstance(self.gamma_factors, str):
            positive_numbers("gamma_factors", self.gamma_factors,
                             "'auto' or a sequence of positive numbers")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        pre = self.kernel == "precomputed"
        tags.input_tags.pairwise = pre
        tags.input_tags.sparse = not pre
        return tags

    def _model_kernel(self):
        """The kernel of the fitted model (``kernel`` before a fit and in files written
        before it was kept): ``set_params(kernel=...)`` after a fit predicted the fitted
        coefficients through the new kernel (RBF's through ``"poly"``: no error)."""
        return vars(self).get("_kernel", self.kernel)

    def _validate_X(self, X, reset):
        pre = (self.kernel if reset else self._model_kernel()) == "precomputed"
        if not (reset or pre) and plain_predict_data(self, X):
            return X
        shape = np.shape(X) if pre and not reset else ()
        if len(shape) == 2 and shape[1] != getattr(self, "n_features_in_", shape[1]):
            # scikit-learn's "X has 59 features, but ... is expecting 60" does
            # not say that the columns are the training samples
            raise ValueError(
                f"With kernel='precomputed', X must be K(X_new, X_train) of shape "
                f"(n_new, {self.n_features_in_}): one column per training sample; "
                f"got shape {shape}.")
        X = validate_data(
            self, X, reset=reset, accept_sparse=False if pre else "csr",
            dtype=[np.float64, np.float32],
        )
        return canonical_sparse(X) if sp.issparse(X) else X

    def _fit_targets(self, X, Y, codes=False, per_output=False, sample_weight=None):
        """Standardise, run :func:`kernlearn.methods.slkl.fit_slkl`, map back.

        Regression targets ``Y`` are standardised per output; the classifier's
        +-1 ``codes`` are not (their units are fixed); a precomputed Gram
        matrix is used as given.
        """
        nu_values(self.nu)  # (each entry named before any work)
        warn_unread_kernel_params(self)
        self._kernel = self.kernel  # (what the predictions read: _model_kernel)
        pre = self.kernel == "precomputed"
        # a zero weight removes its row (methods/_kept_rows.py)
        rows, X, Y, sample_weight = kept_rows(X, Y, sample_weight, gram=pre)
        Xs = X[:, :0] if pre else X  # a Gram matrix has no columns to standardise
        # (the +-1 codes as they are; targets scaled per output, no bias: not centred;
        # the histogram kernels' columns scaled, not centred: as sparse ones are)
        kw = {"center": self.kernel not in HISTOGRAM_KERNELS}
        Xt, Yt = ((standardize_fit(self, Xs, sample_weight, **kw), Y) if codes
                  else standardize_fit(self, Xs, sample_weight, Y, **kw))
        if pre:
            Xt, self.x_mean_, self.x_scale_ = X, None, None
        seed = _fit_seed(self.random_state)
        histogram_negatives(self, Xt, "additive_chi2")
        res = fit_slkl(
            Xt, Yt, kernel=self.kernel, gamma=self.gamma,
            degree=self.degree, coef0=self.coef0, kernel_params=self.kernel_params,
            n_columns=self.n_columns, precompute=self.precompute,
            nu=CODES_NU_GRID if codes and self.nu == "auto" else self.nu,
            fit_intercept=self.fit_intercept, tol=self.tol, max_iter=self.max_iter,
            rule=self.rule, per_output=per_output, sample_weight=sample_weight,
            seed=seed, verbose=self.verbose, gamma_factors=self.gamma_factors,
            default_columns=classifier_columns if codes else REGRESSION_COLUMNS,
            path_rule=(0, 0.0) if codes else (NU_PATIENCE, NU_SE_FRACTION),
            center=None if pre else implicit_center(Xt, sample_weight, self.standardize),
        )
        histogram_negatives(self, Xt, "hik")
        for name in ("mu", "nu", "m0", "n_iter", "converged", "history", "objective",
                     "column_indices", "center_indices", "kernel_params",
                     "center_factors", "nu_path"):
            setattr(self, name + "_", getattr(res, name))
        # outputs in the target's units: f = scale * (K a + b) + mean
        ts = target_standardization(self) if not codes else None
        self.dual_coef_ = res.dual_coef if ts is None else res.dual_coef * ts.scale
        self.intercept_ = (res.intercept if ts is None
                           else ts.inverse_transform(res.intercept[None, :])[0])
        # the centres on the raw scale: the kernel sees them through the input map
        self.centers_ = res.center_indices.copy() if pre else X[res.center_indices]
        _to_user_rows(self, rows, pre)
        self.kernel_center_ = res.center
        return self

    def _decision_function(self):
        """The fitted decision values, an object without scikit-learn (what a
        prediction on a Dask array sends to the workers; in memory too; its callers
        check that the model is fitted)."""
        st = input_standardization(self)
        kernel = self._model_kernel()
        centers = self.centers_ if kernel == "precomputed" else _mapped_centers(self, st)
        # (the regressor's inputs beyond its training range: _input_range.py)
        return LandmarkExpansion(st, centers, self.dual_coef_, self.intercept_, kernel,
                                 self.kernel_params_, getattr(self, "center_factors_", None),
                                 getattr(self, "kernel_center_", None),
                                 x_range=getattr(self, "x_range_", None),
                                 out_of_bounds=out_of_bounds_mode(self))

    def _output(self, X, post, width=None, dtype=float):
        """``post`` of the decision values of ``X`` (n_samples x n_outputs); a lazy
        Dask array of a Dask ``X``."""
        return decided(self, X, self._decision_function(),
                       partial(self._validate_X, reset=False), classes_kept(self, post),
                       width, dtype,
                       name_columns=self._model_kernel() != "precomputed")


def _plus_minus_codes(codes, n_classes):
    """+1 / -1 per class of the label codes (LabelBinarizer's coding: one
    column, of ``classes_[1]``, for two classes)."""
    Y = np.where(codes[:, None] == np.arange(n_classes), 1.0, -1.0)
    return Y[:, 1:] if n_classes == 2 else Y


def _to_user_rows(est, rows, gram):
    """The fitted row numbers of a fit on the kept rows ``rows`` (``None``: all)
    in the user's rows: a test Gram matrix has a column for each training row."""
    if rows is not None:
        est.column_indices_, est.center_indices_ = (rows[est.column_indices_],
                                                    rows[est.center_indices_])
        est.centers_ = est.center_indices_.copy() if gram else est.centers_


def _numeric_targets(y):
    """``y`` as numbers; text refused, naming the classifier (an array of
    text; not a sparse matrix or a generator, whose np.asarray is a 0-d object
    array: "y holds strings" was not their problem; a missing value first:
    pd.NA in a DataFrame of targets made them objects, called strings)."""
    y = target_values(y)
    if y is not None and np.asarray(y).ndim > 0 and np.asarray(y).dtype.kind in "USO":
        try:
            return np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                "LowRankKernelRegressor needs numeric targets, but y holds "
                "strings; for class labels use LowRankKernelClassifier."
            ) from None
    return y


# The centres on the standardised scale, per fitted estimator, kept once computed
# (a one-row prediction spent a tenth of its time, 11 of 100 us, mapping them
# again).  Beside the estimator rather than in it: a prediction leaves its
# __dict__ (pickles, model files, scikit-learn's checks) as it was, and models
# loaded from older files and pickles are served alike.
_MAPPED_CENTERS = weakref.WeakKeyDictionary()


def _contents(a):
    """The values of an array (dense or sparse) or ``None``, as bytes to compare."""
    if a is None:
        return None
    if sp.issparse(a):
        a = a.tocsr()
        return ("csr", a.shape) + tuple(_contents(v) for v in (a.data, a.indices, a.indptr))
    a = np.asarray(a)
    return a.shape, a.dtype.str, a.tobytes()


def _mapped_centers(est, st):
    """``st.transform(est.centers_)``, computed once while the attributes it is
    made of hold the same values (compared as bytes, a microsecond: an array
    changed in place, ``est.x_mean_ += 1``, kept the same object and the centres
    mapped before it, silently)."""
    made_of = (_contents(est.centers_), _contents(st.mean), _contents(st.scale), st.dtype)
    try:
        kept = _MAPPED_CENTERS.get(est)
    except TypeError:  # (a subclass defining __eq__ without __hash__: not kept)
        return st.transform(est.centers_)
    if kept is None or kept[0] != made_of:
        kept = _MAPPED_CENTERS[est] = (made_of, st.transform(est.centers_))
    return kept[1]


class LowRankKernelRegressor(RegressorMixin, _BaseLowRank):
    r"""Stochastic low-rank kernel learning for regression (SLKL).

    Kernel ridge regression (:math:`\lambda = 1`) with the kernel
    :math:`\tilde K(\mu) = \sum_m \mu_m c_m c_m^\top`, a conical combination of
    ``n_columns`` rank-1 Nystrom approximations (eq. 3) whose weights
    :math:`\mu \ge 0` are learned by minimising eq. (14) with stochastic
    coordinate Newton descent (Algorithm 2).  Multi-output targets share
    :math:`\mu` (the objective is summed over outputs).

    Parameters
    ----------
    kernel : str or callable, default="rbf"
        Base kernel :math:`k`: a name in ``kernlearn.kernels.KERNELS``, a
        callable ``k(X, Y, **params)``, or ``"precomputed"`` (``X`` is then
        the training Gram matrix at fit and ``K(X_new, X_train)`` at predict).
    gamma : float or "scale", default="scale"
        Kernel width for kernels that take one (``rbf``: :math:`e^{-\gamma\|x-x'\|^2}`);
        ``"scale"`` (or ``None``) is scikit-learn's ``1 / (n_features * X.var())``
        on the data the kernel sees (the standardised inputs by default, where
        it is ``1 / n_features`` for dense input).
    degree, coef0 : float, optional
        Parameters of the ``poly`` kernel (kernel defaults, 2 and 1, when
        ``None``): a whole ``degree >= 0`` and ``coef0 >= 0``, the values that
        make :math:`(\gamma x^\top y + c_0)^d` a kernel (others are refused,
        as in the kernel lists of the other estimators).
    kernel_params : dict, optional
        Further kernel keyword arguments (a ``gamma`` of ``"scale"`` or
        ``"mean"`` is computed on the training inputs the kernel sees).  A
        ``gamma``, ``degree`` or ``coef0`` given here and, with another value,
        as the argument of that name (or bound by a ``functools.partial``
        kernel) is refused, and so is a name the kernel's signature does not
        take or a value that is not a number; ``hik``'s ``beta`` must be
        positive.
    n_columns : int, optional
        ``M``, the number of columns sampled at random among the training points
        (a larger value is clamped to ``n_samples`` with a warning, as
        scikit-learn's ``Nystroem`` does); default ``min(n_samples, 192)``
        (with the default ``gamma_factors``, 96 columns at the default width
        and 96 at the broader one).
    nu : float, "auto" or sequence of float, default="auto"
        Weight of :math:`\sum_m \mu_m` relative to the scale of the targets:
        the objective uses :math:`\nu = ` ``nu`` times the mean square of the
        (centred) targets, so the learned :math:`\mu` does not depend on the
        units of ``y``; larger values give sparser :math:`\mu` (smaller
        :math:`m_0`) and smoother functions.  ``"auto"`` tries 1.0, 0.1,
        0.01, 1e-3, 1e-4 and 1e-5 in turn (each fit warm-started from the
        previous one) and scores each by the leave-one-out squared error of
        the kernel ridge fit, as scikit-learn's ``RidgeCV`` scores its
        ``alpha``; it stops once two values in a row do worse than the best
        so far (after the best has fallen below the mean's error) and keeps
        the largest value whose error is within a quarter of a standard error
        of the smallest (the error is noisy, and optimistic at small values,
        on a few hundred rows); a sequence of values is tried the same way
        instead, from the largest down (in any order; each entry a positive
        number).  With ``sample_weight``, a path (``"auto"`` or a
        sequence of two or more values) is tried at the weights' scale (as
        if they had mean 1): a common factor of the weights does not change
        the model.  A single value (a number, or a sequence of one) is
        taken at the weights as given: weights ``c * w`` give the model of
        ``w`` at ``nu / c**2``, and integer weights act as repeated rows.
    precompute : bool, default=True
        Keep all ``M`` columns in memory (:math:`O(nM)`), or compute a column
        each time an inactive coordinate is drawn (:math:`O(n m_0)` memory).
    fit_intercept : bool, default=True
        Centre the targets (the paper's model has no bias).
    tol : float, default=1e-4
        :math:`\epsilon` of the stopping rule
        :math:`F(\mu^{k-M}) - F(\mu^k) < \epsilon F(\mu^{k-M})`.
    max_iter : int, default=100
        Maximum number of sweeps of ``M`` coordinate steps.
    rule : {"newton", "exact"}, default="newton"
        Coordinate step: the projected Newton step (19) (falling back to the
        exact coordinate minimiser in the rare case it would increase F), or
        always the exact minimiser.
    random_state : int, RandomState instance or None, default=None
        Seeds the column sample and the coordinate sequence.  The sample
        is the ``M`` rows of smallest seeded key, a hash of each row's inputs
        (each value's rank in its column) and occurrence number among rows of
        equal inputs, ordered by target and weight
        (``kernlearn.families._content_sample``), and is taken in the order
        of its rows' kernel values (not their row order:
        ``kernlearn.families.nystrom.content_order``), which decides each
        column's width (``gamma_factors``) and the column each draw of the
        coordinate sequence names: the same rows in another order give the
        same model, to round-off, at any ``M``.  With
        ``kernel="precomputed"`` a row's content is its kernel values, each
        against a training row known by its own content (the Gram matrix's
        rows and columns permuted together key alike): at ``M < n`` it samples
        other rows than the inputs it was computed from would.
    verbose : int, default=0
        Progress (:mod:`kernlearn.progress`): 1 draws a bar on a terminal (a
        widget in a notebook; nothing in a pipe or log file) and says why the
        fit stopped (``nu="auto"``: one bar over the path's values and the
        ``nu`` kept); 2 prints one line per sweep to standard output and each
        value's stop line, named by its ``nu``.
    standardize : bool, default=True
        Centre and scale dense columns to unit standard deviation and scale
        sparse columns (never densified; the linear and polynomial kernels
        centre them implicitly, RBF is unaffected; callables see them uncentred,
        with a warning); with ``hik`` or ``additive_chi2`` dense columns are
        scaled, not centred, as sparse ones (the same model either way;
        negative values of the data itself: ``hik`` warns, ``additive_chi2``
        refuses); regression targets are standardised per output.  Learned quantities are reported in the input's units:
        ``centers_`` on the raw scale, the kernel applied after the input map
        (see the module notes).  Ignored for ``kernel="precomputed"`` inputs.
    gamma_factors : "auto" or tuple of float, default="auto"
        The ``M`` candidate columns, in the order of ``column_indices_``,
        are dealt in turn to kernels of width ``gamma * factor`` (column ``j``
        gets factor ``j % len(gamma_factors)``), so that the learned
        :math:`\mu` chooses widths as well as centres.
        ``"auto"``: ``(1.0, 0.1)`` with the default width ``gamma="scale"``,
        half the columns at it and half at a ten times broader kernel (no
        single default width suits SLKL's conical kernel on every set: see
        ``kernlearn.methods.slkl.AUTO_GAMMA_FACTORS``), and ``(1.0,)``, the
        paper's single kernel, when a width is given: ``gamma``,
        ``kernel_params["gamma"]``, or one a ``functools.partial`` kernel binds
        (kept as it is: the default ``gamma`` never replaces it, another
        value given as ``gamma`` is refused).  With heavy-tailed
        inputs (``rbf``: the mean squared distance between training rows
        over 3 times the median) ``"auto"`` also deals columns to a
        narrower kernel, ``gamma * sqrt(mean / median)``: the variance that
        sets the default width is then made by a few far-out rows, and the
        bulk of the rows look alike at both default widths (see
        ``kernlearn.methods.slkl.HEAVY_SPREAD_RATIO``).  Kernels without a
        ``gamma`` ignore it.

    Attributes
    ----------
    mu_ : ndarray of shape (n_columns,)
        Learned weights :math:`\mu` over the sampled columns.
    nu_ : float
        The absolute :math:`\nu` used: ``nu`` times the (standardised)
        targets' mean square.
    column_indices_ : ndarray of shape (n_columns,)
        Training indices of the sampled set :math:`\mathcal S`, in the order
        of the columns: lexicographic order of each sampled row's sorted
        kernel values against the sample (``random_state``).
    center_indices_ : ndarray of shape (m0_,)
        Training indices of the centres with :math:`\mu_m > 0`.
    centers_ : ndarray of shape (m0_, n_features)
        Those training points on the raw scale (their indices when
        ``kernel="precomputed"``).
    dual_coef_ : ndarray of shape (m0_, n_outputs)
        :math:`\tilde\alpha_m/2` of eq. (17) in the target's units: prediction
        is :math:`\sum_m k_m(T(X), T(c_m))\,a_m` + ``intercept_`` over the
        centres :math:`c_m` (``centers_``) and rows :math:`a_m` of
        ``dual_coef_``, with ``T`` the input map (``(X - x_mean_) /
        x_scale_``; the identity without ``standardize``) applied to ``X``
        clipped to ``x_range_`` (``out_of_bounds``), and :math:`k_m` the
        kernel at ``gamma = kernel_params_["gamma"] * center_factors_[m]``;
        with one width (all factors 1: a ``gamma`` given) that is
        ``k(T(X), T(centers_)) @ dual_coef_ + intercept_``.
    intercept_ : ndarray of shape (n_outputs,)
        Target means (zeros without ``fit_intercept``).
    x_mean_ : ndarray of shape (n_features,) or None
        Column means removed from dense inputs (``None``: not centred).
    x_scale_ : ndarray of shape (n_features,) or None
        Column spreads divided out (``None``: not scaled; ``inf`` for a column
        constant in training, which is ignored).
    y_mean_, y_scale_ : ndarray of shape (n_outputs,)
        The targets' standardisation (zero mean without ``fit_intercept``).
    x_range_ : ndarray of shape (2, n_features) or None
        Each column's training minimum and maximum (rows of positive weight;
        sparse: with the implicit zeros).  :meth:`predict` clips its inputs
        to them (``out_of_bounds``, ``"clip"`` for the RBF kernel at the
        default): beyond the training range the model predicts its value at
        the nearest edge (the RBF kernels would fall back to the intercept
        there).  ``None``
        (``kernel="precomputed"``): not clipped, nor refused.
    kernel_params_ : dict
        The kernel's keyword arguments, ``gamma`` resolved on the
        standardised scale.
    center_factors_ : ndarray of shape (m0_,)
        Each centre's width factor: its kernel's ``gamma`` is
        ``kernel_params_["gamma"]`` times this.
    kernel_center_ : ndarray of shape (n_features_in_,) or None
        Column means of standardised sparse inputs (which are scaled, not
        centred) that the linear and polynomial kernels subtract, so that
        sparse and dense inputs give the same model; for an RBF kernel on dense
        inputs far from zero (``standardize=False``), the training mean its
        distances subtract (they keep their digits); ``None`` otherwise.
    m0_ : int
        Number of non-zero weights :math:`m_0`.
    n_iter_ : int
        Sweeps of the final fit: with a path of ``nu`` values (``"auto"``), of
        the fit at the kept value (warm-started from the previous values; the
        whole path's are in ``nu_path_``).
    converged_ : bool
        Whether the stopping rule fired before ``max_iter`` (with a path, at
        every value up to the kept one).
    nu_path_ : dict or None
        With a path of ``nu`` values: ``"nu"`` (the relative values solved, in
        order; the kept one is ``history_["nu"][-1]``), ``"n_iter"`` (sweeps at
        each), ``"loo"`` (leave-one-out squared error at each, on the
        standardised targets) and ``"converged"``; ``None`` for one value.
    objective_ : float
        Final :math:`F(\mu)`, of the standardised targets (as ``history_``'s
        ``objective``: the same numbers in any units of ``y``).
    history_ : dict of ndarray
        Per sweep: ``iter``, ``objective``, ``m0`` (also as ``n_active``),
        ``kkt`` (largest KKT violation over the columns, each as last
        visited), ``violation`` (the same over the sweep's drawn columns,
        before it), ``time`` (seconds since the first sweep's solve began)
        and ``nu`` (the relative value in use: with ``nu="auto"`` the sweeps
        of the path up to the kept value, so more rows than ``n_iter_``).
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the input columns, when ``X`` had string column names (a
        pandas DataFrame).

    References
    ----------
    Machart, Peel, Anthoine, Ralaivola, Glotin (2011), Stochastic Low-Rank Kernel
    Learning for Regression, ICML: eq. (3) (kernel), eq. (14) (objective),
    Algorithm 2 (solver), eqs. (16)-(17) (prediction).

    Examples
    --------
    >>> from kernlearn import LowRankKernelRegressor
    >>> from kernlearn.datasets import make_sinc
    >>> X, y, Xt, yt = make_sinc(300, 100, random_state=0)
    >>> est = LowRankKernelRegressor(gamma=0.5, n_columns=64, random_state=0).fit(X, y)
    >>> est.m0_ < 64
    True
    """
    # (out_of_bounds's entry is shared with InfiniteFeatureRegressor's docstring)
    __doc__ = __doc__.replace("\n\n    Attributes\n",
                              "\n" + OUT_OF_BOUNDS_DOC + "\n    Attributes\n", 1)

    _parameter_constraints: dict = {
        **_BaseLowRank._parameter_constraints,
        "out_of_bounds": [StrOptions(set(OUT_OF_BOUNDS))],
    }

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma="scale",
        degree=None,
        coef0=None,
        kernel_params=None,
        n_columns=None,
        nu="auto",
        precompute=True,
        fit_intercept=True,
        tol=1e-4,
        max_iter=100,
        rule="newton",
        random_state=None,
        verbose=0,
        standardize=True,
        gamma_factors="auto",
        out_of_bounds="auto",
    ):
        super().__init__(
            kernel, gamma=gamma, degree=degree, coef0=coef0,
            kernel_params=kernel_params, n_columns=n_columns, nu=nu,
            precompute=precompute, fit_intercept=fit_intercept, tol=tol,
            max_iter=max_iter, rule=rule, random_state=random_state, verbose=verbose,
            standardize=standardize, gamma_factors=gamma_factors,
        )
        self.out_of_bounds = out_of_bounds

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags

    @all_or_nothing
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Sample the columns and learn :math:`\\mu` and the regression function.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training inputs (the Gram matrix if ``kernel="precomputed"``).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the squared errors; the centres are
            sampled among the rows of positive weight.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        pre = self.kernel == "precomputed"
        y = _numeric_targets(y)
        X, y = validate_data(
            self, X, y, accept_sparse=False if pre else "csr",
            dtype=[np.float64, np.float32], multi_output=True, y_numeric=True,
        )
        X = canonical_sparse(X) if sp.issparse(X) else X
        y = np.asarray(y)
        self._y_ndim = y.ndim
        sw = fit_sample_weight(sample_weight, X.shape[0])
        record_input_range(self, None if pre else X, sw)
        return self._fit_targets(X, y.reshape(len(y), -1), sample_weight=sw)

    @dask_input_doc(lazy=True)
    def predict(self, X):
        """Predict with the :math:`m_0` selected centres (eqs. 16-17).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs (``K(X, X_train)`` if ``kernel="precomputed"``).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predicted targets.
        """
        check_is_fitted(self, "dual_coef_")
        if self._y_ndim == 1:
            return self._output(X, one_column_as_vector)
        return self._output(X, None, self.dual_coef_.shape[1])


class LowRankKernelClassifier(ProbabilityMixin, ClassifierMixin, _BaseLowRank):
    __doc__ = r"""SLKL classifier: SLKL regression on :math:`\pm 1` (one-vs-all) codes.

    As in the paper's USPS and MNIST experiments (sec. 5.3-5.4), classification
    is done by least-squares regression on the labels (equivalent to Fisher
    discriminant analysis): binary targets are coded :math:`\pm 1`, multiclass
    ones as one-vs-all :math:`\pm 1` columns.  By default
    (``multiclass="shared"``) the columns are the outputs of one multi-output
    SLKL problem: one kernel :math:`\tilde K(\mu)`, one :math:`\nu`, eq. (14)
    summed over the outputs, exactly :class:`LowRankKernelRegressor` on the
    code matrix (without its target scaling).  A step then costs
    :math:`O(m_0^2 + m_0 T)` for all ``T`` classes together, where separate
    problems pay :math:`O(m_0^2)` per class: 100 classes cost a few times one
    class, not a hundred.  ``multiclass="ovr"`` gives every output its own
    :math:`\mu_t`, :math:`\nu_t` and centres (at a fixed ``nu`` and the
    same ``n_columns``, output ``t`` is then exactly the regressor fitted on
    class ``t``'s codes, same sampled columns and coordinate sequence; a
    ``nu`` path is chosen by the classifier's rule, see ``nu``).  The
    predicted class is the sign / the largest output.

    Parameters
    ----------
    kernel : str or callable, default="rbf"
        See :class:`LowRankKernelRegressor`.
    gamma : float or "scale", default="scale"
        Kernel width (see :class:`LowRankKernelRegressor`).
    degree, coef0 : float, optional
        Parameters of the ``poly`` kernel (see :class:`LowRankKernelRegressor`).
    kernel_params : dict, optional
        Further kernel keyword arguments (a ``gamma`` of ``"scale"`` or
        ``"mean"`` is computed on the training inputs the kernel sees).  A
        ``gamma``, ``degree`` or ``coef0`` given here and, with another value,
        as the argument of that name (or bound by a ``functools.partial``
        kernel) is refused.
    n_columns : int, optional
        ``M``; default ``min(n_samples, 128)`` up to 640 rows, then one column
        per five rows up to 192 (from 960 rows): with the default
        ``gamma_factors`` half the columns are at the default width, and on
        large sets 64 of them left the model short of rank
        (``kernlearn.methods.slkl.classifier_columns``).
    nu : float, "auto" or sequence of float, default="auto"
        Weight of :math:`\sum_m \mu_m`, relative to the mean square of the
        centred codes; ``"auto"`` chooses it (per output with ``"ovr"``) by
        leave-one-out error (see :class:`LowRankKernelRegressor`) among 0.1,
        0.01, 1e-3, 1e-4 and 1e-5 (the codes' squared error would favour the
        near-mean fit at 1.0, which classifies worse), keeping the smallest
        error and stopping at the first rise after it has fallen below the
        mean's; a sequence is the path to choose from (tried from the largest
        down, in any order).
    precompute : bool, default=True
        Precompute the ``M`` columns.
    fit_intercept : bool, default=True
        Centre the codes.
    tol : float, default=1e-4
        Stopping tolerance :math:`\epsilon`.
    max_iter : int, default=100
        Maximum number of sweeps.
    rule : {"newton", "exact"}, default="newton"
        Coordinate step rule.
    random_state : int, RandomState instance or None, default=None
        Seeds the column sample, the coordinate sequence and the Platt folds
        of ``probability=True``.  The sample is taken in the order of its
        rows' kernel values, not their row order, and the sample is keyed by
        the rows' content (see :class:`LowRankKernelRegressor`): the same rows
        in another order give the same decision function, to round-off, at
        any ``M`` (the Platt folds of ``probability=True`` follow the row
        order).  Distinct rows whose
        kernel values tie (a symmetric design) are ordered by their labels,
        then by their values (first column first); only those of one label
        follow the column order, or with ``kernel="precomputed"`` the row
        order (nothing else tells them apart).
    verbose : int, default=0
        Progress, as in :class:`LowRankKernelRegressor`.
    standardize : bool, default=True
        Centre and scale dense columns to unit standard deviation and scale
        sparse columns (never densified; both uncentred for the histogram kernels;
        units: see :class:`LowRankKernelRegressor`).  Not read
        beside ``kernel="precomputed"`` (``False`` there is warned of).
    gamma_factors : "auto" or tuple of float, default="auto"
        Widths of the candidate columns relative to ``gamma`` (see
        :class:`LowRankKernelRegressor`).
    multiclass : {"shared", "ovr"}, default="shared"
        With more than two classes: one weight vector :math:`\mu` for all
        one-vs-all outputs (the multi-output problem), or one per output.
        On the breadth suite's 20 multiclass sets (one width, at most 5,000
        rows) the two were equally accurate (mean gap to the baseline +1.3
        and +1.1 points) and the shared problem 2-40x faster.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes' squared errors (``"balanced"``: ``n /
        (n_classes * n_c)``), multiplied into ``sample_weight``.
    probability : bool, default=False
        Fit Platt sigmoids on decision values from an internal 5-fold
        cross-validation (five extra fits, as ``SVC(probability=True)``) so
        that :meth:`predict_proba` exists (as with ``SVC``, :meth:`predict`
        follows the decision function and can differ from the most probable
        class on a few rows).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    mu_ : ndarray of shape (n_columns,) or (n_outputs, n_columns)
        The learned weights :math:`\mu`; with ``multiclass="ovr"`` one row
        :math:`\mu_t` per output (``n_outputs`` is 1 for two classes, else
        ``n_classes``; a class whose rows all weigh zero has no output of
        its own: one fewer, 1 when two classes are left).
    nu_ : float or ndarray of shape (n_outputs,)
        The absolute :math:`\nu`: ``nu`` times the mean square centred code
        (per output with ``multiclass="ovr"``).
    column_indices_ : ndarray of shape (n_columns,)
        Training indices of the sampled set :math:`\mathcal S` (shared), in
        the order of the columns (see :class:`LowRankKernelRegressor`).
    center_indices_ : ndarray of shape (n_centers,)
        Training indices of the union of the outputs' centres (columns with
        :math:`\mu_{t,m} > 0` for some ``t``).
    centers_ : ndarray of shape (n_centers, n_features)
        Those training points on the raw scale (their indices when
        ``kernel="precomputed"``).
    dual_coef_ : ndarray of shape (n_centers, n_outputs)
        Eq. (17) per output (a column per class when a class weighs zero:
        0 for it, ``-f`` and ``f`` for two classes left), zero at the
        centres an output does not use:
        ``decision_function`` is the regressor's prediction (each centre's
        kernel at its width, ``kernel_params_["gamma"]`` times
        ``center_factors_``) with these rows and ``intercept_``.
    x_mean_, x_scale_ : ndarray of shape (n_features,) or None
        The input map of :class:`LowRankKernelRegressor`.
    kernel_params_ : dict
        The kernel's keyword arguments (``gamma`` on the standardised scale).
    center_factors_ : ndarray of shape (n_centers,)
        Each centre's width factor (see :class:`LowRankKernelRegressor`).
    kernel_center_ : ndarray of shape (n_features_in_,) or None
        See :class:`LowRankKernelRegressor`.
    intercept_ : ndarray of shape (n_outputs,)
        Mean codes (zeros without ``fit_intercept``).
    m0_ : int or ndarray of shape (n_outputs,)
        Number of non-zero weights (of each output with ``"ovr"``).
    n_iter_ : int or ndarray of shape (n_outputs,)
        Sweeps of the final fit (per output with ``"ovr"``; see
        :class:`LowRankKernelRegressor`).
    nu_path_ : dict, list of dict or None
        The ``nu`` path's record (see :class:`LowRankKernelRegressor`; one per
        output with ``"ovr"``).
    converged_ : bool
        Whether every output's stopping rule fired before ``max_iter``.
    objective_ : float or ndarray of shape (n_outputs,)
        Final :math:`F(\mu)` (per output with ``"ovr"``).
    history_ : dict or list of dict
        The per-sweep history of :class:`LowRankKernelRegressor` (one per
        output with ``"ovr"``).
""" + platt_attr_doc(logistic_loss=False) + r"""    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the input columns, when ``X`` had string column names (a
        pandas DataFrame).

    References
    ----------
    Machart, Peel, Anthoine, Ralaivola, Glotin (2011), Stochastic Low-Rank Kernel
    Learning for Regression, ICML, sec. 5.3 (USPS, Table 3) and 5.4 (MNIST).
    """

    _parameter_constraints: dict = {
        **_BaseLowRank._parameter_constraints,
        "multiclass": [StrOptions({"shared", "ovr"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "probability": ["boolean"],
    }

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma="scale",
        degree=None,
        coef0=None,
        kernel_params=None,
        n_columns=None,
        nu="auto",
        precompute=True,
        fit_intercept=True,
        tol=1e-4,
        max_iter=100,
        rule="newton",
        random_state=None,
        verbose=0,
        standardize=True,
        gamma_factors="auto",
        multiclass="shared",
        class_weight=None,
        probability=False,
    ):
        super().__init__(
            kernel, gamma=gamma, degree=degree, coef0=coef0,
            kernel_params=kernel_params, n_columns=n_columns, nu=nu,
            precompute=precompute, fit_intercept=fit_intercept, tol=tol,
            max_iter=max_iter, rule=rule, random_state=random_state, verbose=verbose,
            standardize=standardize, gamma_factors=gamma_factors,
        )
        self.multiclass = multiclass
        self.class_weight = class_weight
        self.probability = probability

    @all_or_nothing
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit SLKL on :math:`\\pm 1` codes of the labels.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training inputs (the Gram matrix if ``kernel="precomputed"``).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the squared errors (multiplied by
            ``class_weight``); zero removes a row.  A class whose rows all
            weigh zero stays in ``classes_`` with a zero output, never
            predicted; the others are fitted as without it.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        pre = self.kernel == "precomputed"
        X, y = validate_data(
            self, X, y, accept_sparse=False if pre else "csr",
            dtype=[np.float64, np.float32],
        )
        X = canonical_sparse(X) if sp.issparse(X) else X
        check_two_classes(y)
        self.classes_, codes = encode_labels(y)
        Y = _plus_minus_codes(codes, len(self.classes_))
        sw = fit_sample_weight(sample_weight, X.shape[0], y, self.class_weight)
        absent = self._absent_classes = check_weighted_classes(y, sw)
        # a class weighed out has no output of its own (methods/_class_outputs.py)
        self._fit_targets(X, present_outputs(Y, absent), codes=True,
                          per_output=self.multiclass == "ovr", sample_weight=sw)
        class_attributes(self, absent, dual_coef_=1, intercept_=0)
        self._fit_platt(X, y, sample_weight)
        return self

    @dask_input_doc(lazy=True)
    def decision_function(self, X):
        """Regression outputs: shape (n_samples,) for two classes, else one per class.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Outputs of the +-1 regression.
        """
        check_is_fitted(self, "dual_coef_")
        return self._output(X, one_column_as_vector, _width(self.classes_))

    @dask_input_doc(lazy=True)
    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        check_is_fitted(self, "dual_coef_")
        return self._output(X, partial(class_labels, classes=self.classes_),
                            dtype=self.classes_.dtype)

    @available_if(_has_proba)
    @dask_input_doc(lazy=True)
    def predict_proba(self, X):
        """Class probabilities (``probability=True``).

        Platt's sigmoid of the regression output (two classes) or the
        classes' sigmoids normalised to sum to one, fitted on decision values
        from an internal cross-validation.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "dual_coef_")
        return self._output(X, partial(chained, steps=(one_column_as_vector,
                                                       self._proba_function())),
                            len(self.classes_))


def _draw_seed(random_state):
    return check_random_state(random_state).randint(np.iinfo(np.int32).max)


#: an integer's draw, kept (seeding a ``RandomState`` cost 0.2 ms a fit)
_int_seed = lru_cache(maxsize=64)(_draw_seed)


def _fit_seed(random_state):
    """The fit's seed, ``check_random_state(random_state).randint(2**31 - 1)``; of
    an integer kept (seeding a ``RandomState`` cost 0.2 ms a fit, 1 % at 100 x 10),
    while ``None`` and a generator draw anew."""
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return _int_seed(int(random_state))
    return _draw_seed(random_state)


def _width(classes):
    """Columns of a classifier's decision values: one for two classes (a vector)."""
    return None if len(classes) == 2 else len(classes)


def _conformance_instances():
    """Fast instances for ``tests/test_common.py``."""
    # Repeated rows give repeated candidate columns and another random
    # coordinate sequence: the weighted fit solves the same problem, so the
    # two agree to the solver's tolerance (tests/test_sample_weight.py), not
    # to the checks' 1e-7 after 4 sweeps.
    stochastic = {
        name: "stochastic coordinate descent: weighted and repeated-row fits "
        "agree to the solver's tolerance, not to 1e-7"
        for name in ("check_sample_weight_equivalence_on_dense_data",
                     "check_sample_weight_equivalence_on_sparse_data")
    }
    return [
        (LowRankKernelRegressor(max_iter=4, tol=1e-2, random_state=0), stochastic),
        (LowRankKernelClassifier(max_iter=4, tol=1e-2, random_state=0), stochastic),
    ]
