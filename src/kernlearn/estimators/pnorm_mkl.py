"""OBSCURE p-norm multiple kernel learning as a scikit-learn classifier."""

from functools import partial
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from ..kernels import PrecomputedKernelList, linear_kernel, rbf_kernel
from ..methods import obscure
from ..methods._obscure_rows import gram_rows, positive_rows
from .._histogram_kernels import histogram_precision, histogram_shift
from ..preprocessing import implicit_center
from ._dask_predict import dask_input_doc, decided
from ._decisions import KernelExpansion, chained, class_labels, classes_kept, one_column_as_vector
from ._base import (
    all_or_nothing,
    ProbabilityMixin,
    _has_proba,
    check_two_classes,
    check_weighted_classes,
    fit_sample_weight,
    input_standardization,
    standardize_fit,
    validate_fit_data,
    validate_predict_data,
)
from ._platt import platt_attr_doc
from ._renamed import warn_unused


class PNormMKLClassifier(ProbabilityMixin, ClassifierMixin, BaseEstimator):
    __doc__ = r"""p-norm multiple kernel learning by online-batch optimisation (OBSCURE).

    Learns a classifier :math:`f(x) = \sum_j w^j\cdot\phi_j(x)` over F kernels
    by minimising the (2,p)-group-norm primal of eq. (5),

    .. math:: \frac{\lambda}{2}\|\bar w\|_{2,p}^2 + \frac1N\sum_i \ell(\bar w, x_i, y_i),
              \qquad \lambda = \frac{1}{CN},\ 1 < p \le 2,

    with the hinge loss (two classes) or the Crammer-Singer multiclass loss of
    eq. (1) (three or more classes, handled jointly, not one-vs-rest).
    Stage 1 (Algorithm 1, online mirror descent) gives a starting point and
    the bound :math:`R`; stage 2 (Algorithm 2) refines it by stochastic
    proximal projected sub-gradient steps with the adaptive :math:`s_t`.
    The solution is equivalent to an SVM on the combined kernel
    :math:`\sum_j \beta_j K_j`; :math:`p \to 1` makes :math:`\beta` sparse,
    :math:`p = 2` weights all kernels equally.

    Parameters
    ----------
    kernels : list or "precomputed", default=None
        Kernel specs: names in :data:`kernlearn.kernels.KERNELS`, callables
        ``k(X, Y, **params)``, or tuples ``(kernel, params)`` /
        ``(kernel, params, columns)`` where ``columns`` selects the view of
        ``X`` a kernel sees.  ``{"gamma": "mean"}`` for ``"rbf"`` sets
        :math:`\gamma` to the inverse mean squared pairwise distance (as in the
        paper), ``{"gamma": "scale"}`` (and a bare ``"rbf"``) to
        scikit-learn's :math:`1/(D\,\mathrm{Var}(X))`; widths are computed on
        the standardised columns (``standardize``).  ``None`` means
        :func:`kernlearn.methods.obscure.default_kernels`: RBF kernels at
        multiples ``DEFAULT_RBF_WIDTHS`` = (0.25, 1, 2) of ``"scale"`` and
        the linear kernel.  (It was (0.25, 1, 4): the learned weights favour
        the narrowest kernel, which made the combination narrower than
        ``SVC()``'s single width; see ``DEFAULT_RBF_WIDTHS``.)
        ``"precomputed"``: ``fit`` takes a list of F training Gram matrices
        (n x n) and ``predict`` a list of F test-vs-train matrices
        (n_test x n), in the same order; or wrap them in
        :class:`kernlearn.PrecomputedKernels` (samples first) so that
        ``cross_val_score``, ``GridSearchCV`` and ``OneVsRestClassifier``
        can split them.
        A kernel listed twice (equal once widths are resolved, on the same
        columns; or two equal Gram matrices) is refused: its copies would take
        a larger share of the p-norm-bounded weights.
    p : float, default=1.5
        Group-norm exponent in ``(1, 2]``; smaller is sparser.
    C : float, default=1.0
        Inverse regularisation, :math:`\lambda = 1/(C N)`: the objective
        times :math:`CN` is ``SVC``'s :math:`\frac12\|w\|^2 + C\sum_i\xi_i`.
        (The default was 10: on the 36 classification sets of the suite, 97 %
        of fits at C = 1 are within one point of ``SVC()``, 83-89 % at C = 10.)
        On the learned kernel :math:`\sum_j \beta_j K_j` (``kernel_weights_``,
        summing to one) the fit is the bias-free SVM with the larger
        :math:`C/\|\beta\|_r`, :math:`r = p/(2-p)` (the p-norm MKL / SVM
        equivalence): 1.9-2.5 times ``C`` (median 2.3) for the default
        kernels on the 41 classification sets of the suite.  Most of the
        gains and the losses against ``SVC()`` come from that C, the missing
        bias and the Crammer-Singer loss, not from the kernel weights:
        ``SVC()`` on the learned kernel is within one point of ``SVC()`` on
        38-40 of the 41 sets per seed (seeds 0-2, at most 2,000 rows).
    normalize : bool, default=True
        Normalise each kernel to unit diagonal (not applied to precomputed
        matrices: ``False`` beside them is named by an ``UnusedParameterWarning``,
        as ``standardize=False`` and ``cache_size`` are).
    standardize : bool, default=True
        Centre and scale dense columns to unit standard deviation and scale
        sparse columns (never densified; the linear and polynomial kernels
        centre them implicitly, so sparse and dense input give the same
        model; a kernel callable cannot, and a warning says so) before the
        kernels see them; test inputs get the training map.  The histogram
        kernels ``hik`` and ``additive_chi2`` see every column scaled, never
        centred, dense or sparse (the same model either way; non-negative
        data stays non-negative), the other kernels of the same list the
        centred columns; negative values of the data itself are warned of by
        ``hik`` (``NegativeFeaturesWarning``) and refused by ``additive_chi2``.
        Such a list on dense float32 input is fitted, and maps its inputs, in
        float64 (centred in float32, the zeros came back as round-off).
        Data-derived kernel widths (``"mean"``, ``"scale"``) are computed on
        the standardised columns.  Not applied to
        precomputed Gram matrices (they are used as given), nor needed when
        every column already has its own kernel width.
    eta : float, default=1.0
        Stage-1 learning rate (not read, and named so, with ``max_iter_online=0``
        or ``pegasos=True``).
    max_iter : int, default=1000
        Maximum number of stage-2 epochs (a ``ConvergenceWarning`` says when
        it stops the fit before ``tol``).  ``0`` returns the stage-1 solution,
        ``online_only=True``'s (``tol`` is then not used: a warning names it;
        refused with ``pegasos=True`` or ``max_iter_online=0``: no epoch of
        either stage would run, and the model would be all zeros).
    max_iter_online : int, default=2
        Maximum number of stage-1 epochs (stops early after an epoch without
        updates).  Any stage-1 iterate gives a valid bound ``R``; later
        stage-1 epochs mostly compute Gram rows of samples that end up with
        no weight.  (The default was 5: on the 36 classification sets of the
        suite, 2 is 1.3-2x faster on the sets over 5,000 rows with the same
        accuracy to within noise.)
    tol : float or None, default=0.05
        Stop stage 2 when the duality gap of the best iterate is at most
        ``tol`` times its objective, a certificate that the objective is
        within :math:`1/(1 - \mathrm{tol})` of the optimum (1.053 at the
        default); the best iterate is returned.  ``None`` runs all ``max_iter`` epochs.
        (The default was 0.1, with a weaker certificate that stopped fits
        within 1.05 of the optimum in practice; with the tighter one, 0.05
        keeps them there.  A tighter ``tol`` does not buy accuracy against
        ``SVC()``: on 37 classification sets of the suite at seeds 0-2, 0.02
        is 1.6x slower and within one point on 96 of 111 fits against 99 at
        0.05; 1e-3 (7-50x SVC()'s fit time) closes 2 of the 12 remaining misses
        and opens others.)
    online_only : bool, default=False
        Return the stage-1 (online) solution only (refused with
        ``pegasos=True`` or ``max_iter_online=0``, which run no stage-1
        epoch: the model would be all zeros; ``max_iter`` and ``tol``,
        stage 2's, are then not used: a warning names them when set).
    pegasos : bool, default=False
        Pegasos-MKL (paper 001, sec. 5.3): no stage 1, :math:`R = \infty`,
        step :math:`q/(\lambda t)`; the baseline OBSCURE is compared with
        (``eta`` and ``max_iter_online``, stage 1's, are not used; not with
        ``online_only=True``).
    fit_intercept : bool, default=False
        Add a bias through the kernel (paper 001, footnote 2): a constant
        kernel is appended to ``kernels`` and its weight learned with the
        others (it is the last entry of ``kernel_weights_``).  Not available
        with precomputed kernels (append a matrix of ones yourself).
    max_steps : int or None, default=None
        Budget of stochastic steps (samples visited) over both stages.  The
        convergence bound of Theorem 3 depends on the number of steps, not on
        ``n``; with a fixed budget (and kernels computed on the fly) training
        time grows linearly with ``n``.
    cache_size : float, default=1024
        Memory budget (MiB) of the cache of Gram rows: a row is computed when
        a sample first triggers an update and kept (the rows needed last
        evicted beyond the budget), as libsvm's kernel cache; rows are kept
        in single precision (4 bytes per value and stored kernel; RBF
        kernels on the same columns whose widths are 2, 4, 8 or 16 times the
        widest one's are read as its row squared, so the default list stores
        two rows per sample).
    random_state : int, RandomState instance or None, default=None
        Seed of the sampling order (and of the Platt folds).  The draws
        index rows, so the same rows in another order give another sequence
        and, within ``tol``, another model, as another seed would.
    verbose : int, default=0
        Progress (:mod:`kernlearn.progress`): 1 draws a bar on a terminal (a
        widget in a notebook; nothing in a pipe or log file) and says why the
        fit stopped; 2 prints one line per epoch to standard output.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes' losses (``"balanced"``: ``n / (n_classes *
        n_c)``), multiplied into ``sample_weight``.
    probability : bool, default=False
        Fit Platt sigmoids on decision values from an internal 5-fold
        cross-validation (five extra fits, as ``SVC(probability=True)``) so
        that :meth:`predict_proba` exists (as with ``SVC``, :meth:`predict`
        follows the decision function and can differ from the most probable
        class on a few rows).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    kernel_weights_ : ndarray of shape (n_kernels,)
        Implied kernel combination weights :math:`\beta_j \propto
        (\|\theta^j\|/\|\bar\theta\|_{2,q})^{q-2}`, normalised to sum to one.
    dual_coef_ : ndarray of shape (n_outputs, n_support)
        Coefficients of the support vectors in the combined kernel,
        :math:`f_c(x) = \sum_i \mathrm{dual\_coef\_}_{ci}\sum_j\beta_j K_j(x_i, x)`;
        one row for two classes, one row per class otherwise.
    support_ : ndarray of shape (n_support,)
        Indices of the training samples with a non-zero coefficient.
    R_ : float
        Stage-1 bound on :math:`\|\bar w^*\|_{2,p}`.
    n_rows_computed_ : int or None
        Gram rows (of F kernels each) computed during training by the row
        cache; ``None`` for precomputed kernels or the NumPy loop.
    n_iter_ : int
        Total number of epochs (stage 1 + stage 2), one per entry of
        ``history_``: ``max_iter`` caps stage 2's only, so ``n_iter_`` may
        exceed it by up to ``max_iter_online`` (stage 2's epochs are
        ``(history_["stage"] == 2).sum()``).
    converged_ : bool
        Whether stage 2 met ``tol`` (its duality-gap certificate).
    stop_reason_ : str
        Why the fit stopped: the certificate's reason when converged, else
        ``"max_iter"``, ``"max_steps"`` (also with ``online_only`` when the
        budget cut stage 1 short) or ``"online_only"``.
    history_ : dict of ndarray
        Per-epoch ``stage``, ``epoch`` (counted within its stage),
        ``objective``, ``loss``, ``train_error``,
        ``w_norm``, ``n_updates``, ``n_support``, ``R``, ``steps``
        (cumulative samples visited), ``dual`` (the best certified lower
        bound on the optimum so far), ``best`` (stage 2: the best objective
        seen, checks within epochs included, i.e. the returned iterate's)
        and ``time``.
    n_features_in_ : int
        Number of features (number of training samples when precomputed).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the input columns, when ``X`` had string column names (a
        pandas DataFrame).
    x_mean_ : ndarray of shape (n_features,) or None
        Column means subtracted before the kernels (``None``: not centred;
        sparse input, whose means the kernels subtract themselves,
        ``kernel_list_.center_``; ``standardize=False``; precomputed kernels).
    x_scale_ : ndarray of shape (n_features,) or None
        Column scales divided out before the kernels (``None``: identity;
        ``inf`` for a column constant in training, which is ignored).
    kernel_list_ : KernelList or PrecomputedKernelList
        The base kernels as fitted (widths resolved, training columns and
        sparse centre kept): what :meth:`decision_function` evaluates.
""" + platt_attr_doc(logistic_loss=False) + r"""    kernel_params_ : list of dict or None
        The kernels' parameters as used, data-derived widths resolved; they
        act on the standardised columns (``None`` for precomputed kernels).
    rbf_gamma_raw_ : list or None
        The RBF widths in the user's units: per kernel, ``None`` unless it is
        an RBF kernel (``"rbf"``, or :func:`kernlearn.kernels.rbf_kernel` or
        scikit-learn's ``rbf_kernel``, also in a ``functools.partial``), else
        the per-column widths :math:`\gamma_d =
        \gamma/\sigma_d^2` (``x_scale_`` :math:`=\sigma`) of the same kernel
        on raw columns, :math:`\exp(-\sum_d\gamma_d(x_d - x'_d)^2)`; zero
        for columns the kernel does not see.  All columns share one width only
        when they share one scale (``standardize=False``).

    References
    ----------
    Orabona, Jie, Caputo (2012), "Multi kernel learning with online-batch
    optimization", JMLR 13: eq. (1), eq. (5), Algorithms 1-2, Lemma 1.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernlearn import PNormMKLClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = PNormMKLClassifier(kernels=["linear", ("rbf", {"gamma": "mean"})],
    ...                          p=1.1, random_state=0).fit(X, y)
    >>> clf.kernel_weights_.shape
    (2,)
    """

    _parameter_constraints = {
        "kernels": [list, tuple, StrOptions({"precomputed"}), None],
        "p": [Interval(Real, 1, 2, closed="right")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "normalize": ["boolean"],
        "standardize": ["boolean"],
        "eta": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "max_iter_online": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "online_only": ["boolean"],
        "pegasos": ["boolean"],
        "fit_intercept": ["boolean"],
        "max_steps": [Interval(Integral, 1, None, closed="left"), None],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "probability": ["boolean"],
    }

    def __init__(
        self,
        kernels=None,
        *,
        p=1.5,
        C=1.0,
        normalize=True,
        standardize=True,
        eta=1.0,
        max_iter=1000,
        max_iter_online=2,
        tol=0.05,
        online_only=False,
        pegasos=False,
        fit_intercept=False,
        max_steps=None,
        cache_size=1024,
        random_state=None,
        verbose=0,
        class_weight=None,
        probability=False,
    ):
        self.class_weight = class_weight
        self.probability = probability
        self.pegasos = pegasos
        self.fit_intercept = fit_intercept
        self.kernels = kernels
        self.p = p
        self.C = C
        self.normalize = normalize
        self.standardize = standardize
        self.eta = eta
        self.max_iter = max_iter
        self.max_iter_online = max_iter_online
        self.tol = tol
        self.online_only = online_only
        self.max_steps = max_steps
        self.cache_size = cache_size
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernels == "precomputed"
        return tags

    def _precomputed(self, fitted=True):
        """Whether the model takes Gram matrices: as fitted (``kernel_list_``), not as
        ``kernels`` now says (``set_params(kernels="precomputed")`` after a fit on rows
        read the rows as Gram matrices, unstandardised, without an error); as the
        parameter says before a fit and with ``fitted=False`` (``fit``)."""
        klist = vars(self).get("kernel_list_") if fitted else None
        if klist is not None:
            return isinstance(klist, PrecomputedKernelList)
        return isinstance(self.kernels, str) and self.kernels == "precomputed"

    def _check_stages(self):
        """Name the settings of a stage that does not run (and those of rows of
        ``X`` beside precomputed kernels).

        (No stage at all, ``online_only`` with ``pegasos``, is refused by the
        method's own settings check.)
        """
        if self.online_only:
            warn_unused(self, ("max_iter", "tol"), "online_only=True",
                        "stage 2, which reads them, does not run")
        elif self.max_iter == 0:
            # (max_iter=0 returns stage 1's solution, online_only=True's model)
            warn_unused(self, ("tol",), "max_iter=0", "stage 2, which reads it, does not run")
        if self.pegasos:
            warn_unused(self, ("eta", "max_iter_online"), "pegasos=True",
                        "stage 1, which reads them, does not run (Pegasos-MKL)")
        elif self.max_iter_online == 0 and not self.online_only:  # (that one is refused)
            warn_unused(self, ("eta",), "max_iter_online=0",
                        "stage 1, which reads it, does not run")
        if self._precomputed(fitted=False):
            # (normalize=False, standardize=False or a cache budget beside Gram
            # matrices fitted the same model: they are used as given, in memory)
            warn_unused(self, ("normalize", "standardize", "cache_size"),
                        "kernels='precomputed'", "the Gram matrices are used as given "
                        "(these settings act on rows of X and named kernels)")

    @all_or_nothing
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Learn the kernel weights and the classifier.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or list
            Training data, or (``kernels="precomputed"``) a list of F training
            Gram matrices of shape (n_samples, n_samples).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the samples' losses (multiplied by
            ``class_weight``): the loss term of eq. (5) becomes the weighted
            mean, :math:`\\lambda = 1/(C\\sum_i w_i)`, and each epoch of the
            stochastic steps visits every sample a whole number of times in
            proportion to its weight (after every epoch, within one visit of
            its expected count), so integer weights equal repeated rows in
            expectation (not step for step).  A zero weight removes the row: the fit, the
            standardisation and the kernels' widths never read it
            (``support_`` counts the user's rows; a class whose rows all weigh
            zero stays in ``classes_`` and is never predicted).  The
            standardisation and the widths ``gamma="scale"`` use the weights
            (times ``class_weight``), as repeated rows would; ``gamma="mean"``
            uses every row of positive weight, unweighted.

        Returns
        -------
        self : PNormMKLClassifier
        """
        self._check_stages()
        pre = self._precomputed(fitted=False)  # (the parameter, not the former model)
        if pre:
            klist = obscure.kernel_list(X, "precomputed", cache_size=self.cache_size,
                                        fit_intercept=self.fit_intercept)
            if y is None:
                raise ValueError(
                    "PNormMKLClassifier requires y to be passed, but y is None."
                )
            y = column_or_1d(y, warn=True)
            check_consistent_length(klist.gram_[0], y)
            check_two_classes(y)
            self.n_features_in_ = klist.n_samples
            self.x_mean_ = self.x_scale_ = None  # Gram matrices are used as given
        else:
            X, y = validate_fit_data(self, X, y, classification=True)
        sw = fit_sample_weight(sample_weight, len(y), y, self.class_weight)
        self._absent_classes = check_weighted_classes(y, sw)
        # a zero weight removes its row: the fit (standardisation, widths,
        # kernels, draws) sees the rows of positive weight only
        rows = positive_rows(sw)
        Xk, yk, swk = (X, y, sw) if rows is None else (
            None if pre else X[rows], y[rows], sw[rows])
        if pre:
            full = klist
            klist = full if rows is None else gram_rows(full, rows)
        else:
            # (histogram kernels on centred float32 columns: fitted in float64)
            Xt = standardize_fit(self, histogram_precision(Xk, self.kernels, self.standardize),
                                 swk)
            klist = obscure.kernel_list(
                Xt, self.kernels, normalize=self.normalize, fit_intercept=self.fit_intercept,
                cache_size=self.cache_size, center=implicit_center(Xt, swk, self.standardize),
                sample_weight=swk, centred=self.x_mean_ is not None,
                hist_shift=histogram_shift(self.x_mean_, self.x_scale_))
        res = obscure.fit_obscure(
            klist, yk, sample_weight=swk, C=self.C, p=self.p, eta=self.eta,
            max_iter=self.max_iter, max_iter_online=self.max_iter_online, tol=self.tol,
            online_only=self.online_only, pegasos=self.pegasos,
            max_steps=self.max_steps,
            random_state=self.random_state, verbose=self.verbose,
            classes=None if rows is None else np.unique(y), rows=rows)
        self.classes_, self.kernel_weights_ = res.classes, res.kernel_weights
        self.support_, self.dual_coef_, self.R_ = res.support, res.dual_coef, res.R
        self.n_rows_computed_, self.n_iter_ = res.n_rows_computed, res.n_iter
        self.converged_, self.stop_reason_ = res.converged, res.stop_reason
        self.history_, self.kernel_list_ = res.history, res.kernel_list
        if pre and rows is not None:  # (test Grams have a column per user's row)
            full.gram_ = full.grams = None
            self.kernel_list_ = full
        self.kernel_params_ = getattr(res.kernel_list, "params_", None)
        self.rbf_gamma_raw_ = obscure.raw_rbf_gammas(res.kernel_list, self.x_scale_,
                                                     self.n_features_in_)
        self._fit_platt(X, y, sample_weight)
        return self

    def _decision_function(self):
        """The fitted decision values, an object without scikit-learn (what a
        prediction on a Dask array sends to the workers; in memory too).  Its
        callers have checked that the model is fitted (a second check was 5 % of a
        one-row ``predict``)."""
        return KernelExpansion(None if self._precomputed() else input_standardization(self),
                               self.kernel_list_, self.kernel_weights_, self.dual_coef_,
                               self.support_)

    def _output(self, X, post, width=None, dtype=float):
        """``post`` of the decision values of ``X`` (one column for two classes a
        vector); a lazy Dask array of a Dask ``X``."""
        pre = self._precomputed()
        return decided(self, X, self._decision_function(),
                       _as_given if pre else partial(validate_predict_data, self),
                       classes_kept(self, partial(chained, steps=(one_column_as_vector, post))),
                       width, dtype,
                       name_columns=not pre)

    @available_if(_has_proba)
    @dask_input_doc(lazy=True)
    def predict_proba(self, X):
        """Class probabilities (``probability=True``).

        Platt's sigmoid of the decision value (two classes) or the classes'
        sigmoids normalised to sum to one, fitted on decision values from an
        internal cross-validation; their arg max may differ from
        :meth:`predict` on a few points, as for ``SVC(probability=True)``.

        Parameters
        ----------
        X : array-like, sparse matrix or list
            As in :meth:`decision_function`.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self._output(X, self._proba_function(), len(self.classes_))

    @dask_input_doc(lazy=True)
    def decision_function(self, X):
        """Class scores :math:`f_c(x) = \\sum_i c_{ci}\\sum_j \\beta_j K_j(x_i, x)`.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or list
            Test data, or (``kernels="precomputed"``) a list of F test-vs-train
            Gram matrices of shape (n_samples, n_train).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Signed distance-like score of ``classes_[1]`` for two classes.
        """
        check_is_fitted(self)
        return self._output(X, None, None if len(self.classes_) == 2 else len(self.classes_))

    @dask_input_doc(lazy=True)
    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : array-like, sparse matrix or list
            As in :meth:`decision_function`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self._output(X, partial(class_labels, classes=self.classes_),
                            dtype=self.classes_.dtype)


def _as_given(X):
    """Precomputed test Gram matrices, checked where they are read (``kernel_list_``)."""
    return X


def _conformance_instances():
    # Stochastic steps: weights are drawing probabilities, so a weighted fit
    # equals the fit on repeated rows in expectation, not draw for draw (the
    # repeated data are permuted, the weighted ones sampled).
    stochastic = {
        name: "stochastic solver: sample weights equal repeated rows in "
        "expectation only (tests/test_sample_weight.py checks zero weights "
        "exactly and integer weights statistically)"
        for name in ("check_sample_weight_equivalence_on_dense_data",
                     "check_sample_weight_equivalence_on_sparse_data")
    }
    return [
        (
            PNormMKLClassifier(
                kernels=[(rbf_kernel, {"gamma": 0.5}), linear_kernel],
                max_iter=5,
                max_iter_online=2,
                random_state=0,
            ),
            # (check_class_weight_classifiers was listed as failing: the RBF
            # was narrow on the raw blobs; on standardised input it passes)
            stochastic,
        ),
        (
            PNormMKLClassifier(
                kernels=[("rbf", {"gamma": "mean"}), ("poly", {"degree": 2})],
                p=1.1,
                max_iter=5,
                max_iter_online=2,
                random_state=0,
            ),
            stochastic,
        ),
    ]
