"""Learning with infinitely many features: GrFL estimators (paper 000).

:class:`InfiniteFeatureClassifier` and :class:`InfiniteFeatureRegressor` run
Algorithm 1 of the paper with :class:`~kernlearn.colgen.ColumnGeneration`:

1. **pricing** samples ``n_candidates`` (:math:`k_r`) feature parameters from
   the family, evaluates their unit-norm columns on the training data and
   keeps the one that most violates condition (7) (the penalty's dual norm
   :math:`\\|h\\|_{q'}` of its correlations with the loss gradients, across
   tasks and within the feature's group, against :math:`\\lambda_p`) or
   condition (10) (the same for the shared weights, against
   :math:`\\lambda_s`); nothing is added when the relative violation is at
   most ``tol``;
2. **master** re-solves the restricted problem (17) with bias terms on the
   active features, warm-started, by proximal Newton (the default, a few
   iterations per master), ADMM (Algorithm 2) or FISTA.

Several tasks share the features: one-vs-all binary tasks for multiclass
problems, the columns of a 2-D ``y`` for multi-output regression, or the
tasks given by ``task_index`` (one task id per sample).  Each task has its
weights :math:`w_t` (penalised by :math:`\\Omega_p` across tasks) plus the
shared weights :math:`\\tilde w` (l1, when ``lambda_s`` is set), the dirty
model of eq. (1).
"""

import numbers
from functools import partial

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..families import RandomFourierFeatures
from ..losses import get_loss
from ..methods._grfl_average import FINAL_DRAWS, DeferredAttribute
from ..methods._grfl_select import (
    _row_subset,
    AUTO_LAMBDA_NOTE,
    BUDGET_NOTE,
    CV_BELOW,
    classifier_budget,
    classifier_level,
    multi_width_family,
    regressor_pricing_subsample,
    warn_no_feature,
)
from ..methods._grfl_master import paper_loss_factor
from ..methods._kept_rows import rows_of_positive_weight
from ..methods._obscure_rows import positive_rows
from ..methods._grfl_tasks import classifier_outputs, classifier_problems
from ..methods.grfl import fit_grfl
from ..partitioned import _is_dask_array, _is_dask_frame
from ..penalties import get_penalty
from ..preprocessing import implicit_center
from ..solvers import History
from ._dask_predict import dask_input_doc, decided
from ._decisions import (LearnedColumns, LearnedFeatures, chained, class_labels, classes_kept,
                         one_column_as_vector)
from ._base import (
    OLD_NAME,
    all_or_nothing,
    ProbabilityMixin,
    _has_proba,
    canonical_sparse,
    check_two_classes,
    check_weighted_classes,
    encode_labels,
    fit_sample_weight,
    input_standardization,
    param_names,
    record_plain_fit_data,
    renamed_parameter,
    standardize_fit,
    validate_data,
    validate_params_cached,
    validate_predict_data,
)
from ._infinite_doc import _COMMON_DOC, _REG_LAMBDA_NOTE, CLASSIFIER_ATTRS, REGRESSOR_ATTRS
from ._platt import _LOG_SPACE, task_classes_proba
from ._input_range import (OUT_OF_BOUNDS, OUT_OF_BOUNDS_DOC, out_of_bounds_mode,
                           record_input_range)
from ._large_inputs import partitioned_fit_inputs
from ._multitask import (
    TaskIndexRequests,
    check_task_fit,
    check_tasks_hold_both,
    routing_help,
    split_tasks,
    standardize_task_targets,
    task_positions,
    task_sample_weight,
    task_score,
    task_score_doc,
)
from ._renamed import RenamedParameters, RenamedParameterWarning, warn_unused
from ..utils._memory import physical_memory, refuse_oversized
from ..utils._warnings import warn

__all__ = ["InfiniteFeatureClassifier", "InfiniteFeatureRegressor"]

_PENALTIES = ("l1", "group_l1_l2", "l1_linf", "l1_lq", "per_task_l1_lq")


class _BaseInfiniteFeature(ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                           TaskIndexRequests, RenamedParameters, BaseEstimator):
    """Shared implementation of the GrFL estimators."""

    # (eps is not a plain rename: beside it, tol keeps its pre-0.2 meaning)
    _renamed_parameters = {"max_iter": "inner_max_iter"}
    _parameter_constraints = {
        "family": [HasMethods(["fit", "sample", "columns", "correlations"]), None],
        "max_features": [Interval(numbers.Integral, 1, None, closed="left"),
                         StrOptions({"auto"})],
        "n_candidates": [Interval(numbers.Integral, 1, None, closed="left")],
        "lambda_p": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "lambda_s": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "lambda_scale": [StrOptions({"ours", "paper"})],
        "penalty": [StrOptions(set(_PENALTIES)),
                    HasMethods(["value", "prox", "dual_norm"])],
        "solver": [StrOptions({"auto", "admm", "fista", "newton"}), HasMethods(["solve"])],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "inner_tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "inner_max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "eps": [Interval(numbers.Real, 0, None, closed="left"), OLD_NAME],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left"),
                     OLD_NAME],
        "fit_intercept": ["boolean"],
        "time_budget": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "pricing_subsample": [Interval(numbers.Integral, 1, None, closed="left"),
                              StrOptions({"auto"}), None],
        "path_iter": [Interval(numbers.Integral, 1, None, closed="left"), None,
                      StrOptions({"auto"})],
        "warm_start": ["boolean"],
        "n_paths": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "standardize": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def _fit_inputs(self, X, y, **check):
        """Validated training ``X, y`` (:func:`_training_inputs`), after
        :func:`_refuse_huge_sample` on ``X``'s shape."""
        _refuse_huge_sample(self, X)
        return _training_inputs(self, X, y, **check)

    def _validate_params(self):
        validate_params_cached(self)  # cheap on every fit of a grid search

    def _kept_rows(self, X, y, sample_weight, task_rows):
        """The rows of positive weight of an in-memory fit
        (:func:`~kernlearn.methods._kept_rows.rows_of_positive_weight`): a zero
        weight removes its row before the standardisation, the widths and the
        intercept read it; with tasks, their rows renumbered (a task whose rows
        all weigh zero leaves ``tasks_``, as in the fit without its rows).  A Dask
        ``X`` stays on its cluster (its statistics skip such rows).  Returns
        ``X, y, sample_weight, task_rows``."""
        if _is_dask_array(X):
            return X, y, sample_weight, task_rows
        keep = positive_rows(sample_weight)
        if keep is None:
            return X, y, sample_weight, task_rows
        if task_rows is not None:
            task_rows = _row_subset(y, task_rows, keep)[1]
            kept = [t for t, r in enumerate(task_rows) if len(r)]
            self.tasks_, task_rows = self.tasks_[kept], [task_rows[t] for t in kept]
        return (*rows_of_positive_weight(X, y, sample_weight), task_rows)

    def _fit_tasks(self, X, Y, task_rows, sample_weight=None):
        """Run :func:`~kernlearn.methods.grfl.fit_grfl` and copy its result.

        ``Y`` is ``(n, T)`` when every task uses every row (``task_rows``
        ``None``), else ``(n,)`` with ``task_rows`` the rows of each task (or
        ``(n, T)``, task ``t`` reading column ``t``: one-vs-rest within tasks).
        """
        settings = {k: v for k, v in _own_params(self).items()
                    if k not in ("class_weight", "probability", "warm_start", "penalty", "loss",
                                 "standardize", "inner_tol", "inner_max_iter", "n_paths",
                                 "out_of_bounds")}
        if self.warm_start and self.n_paths not in ("auto", 1):
            raise ValueError(f"n_paths={self.n_paths} with warm_start=True: a warm start "
                             "continues one path; use n_paths=1 (or 'auto').")
        settings.update(_stopping(self), **self._resolved_settings(X, sample_weight))
        res = fit_grfl(
            X, Y, task_rows=task_rows, sample_weight=sample_weight,
            loss=get_loss(self.loss, allowed=self._losses),
            penalty=get_penalty(self.penalty, allowed=_PENALTIES), name=type(self).__name__,
            warm=getattr(self, "_path", None) if self.warm_start else None,
            keep_warm=self.warm_start, **settings)
        self._path = res.warm
        self.family_, self.features_, self.feature_scales_ = (
            res.family, res.features, res.feature_scales)
        self.task_coef_, self.shared_coef_ = res.task_coef, res.shared_coef
        self._coef_tasks, self._intercept_tasks = res.coef, res.intercept
        hist = History()
        hist.rows = res.history
        self.history_, self.n_iter_, self.solver_ = hist.as_dict(), res.n_iter, res.master
        self.stop_reason_, self.converged_ = res.stop_reason, res.converged
        self.max_features_, self.objective_ = res.max_features, res.objective
        self.n_paths_ = res.n_paths
        self.last_violation_ = res.last_violation
        return res

    # features_ completed when first read where the fit deferred it (_grfl_average.DEFER);
    # frequencies_, phases_ computed when read, not stored (235 MB more at 200 x 100,000)
    features_ = DeferredAttribute()

    @property
    def frequencies_(self):
        """The kept Fourier features' directions on the raw inputs (see the class)."""
        return self._raw_fourier(phases=False)

    @property
    def phases_(self):
        """The kept Fourier features' phases on the raw inputs (see the class)."""
        return self._raw_fourier(phases=True)

    def _raw_fourier(self, phases):
        """``frequencies_`` or ``phases_`` (``None`` for other families)."""
        if "features_" not in vars(self):  # (as before fit: no such attribute)
            raise AttributeError(f"{type(self).__name__} is not fitted: it has no "
                                 f"{'phases_' if phases else 'frequencies_'} yet.")
        if not isinstance(self.family_, RandomFourierFeatures):
            return None
        # v'(x - mu)/s = (v/s)'x - v'(mu/s) (sparse inputs: mu/s is the family's centre)
        st, V = input_standardization(self), self.features_[:, :-1]
        c = self.family_.center_
        if phases and st.mean is None:
            return np.zeros(len(V)) if c is None else -(V @ c)
        F = V if st.scale is None else V / st.scale
        return -(F @ st.mean) if phases else F

    # ------------------------------------------------------------ prediction
    @dask_input_doc(lazy=True)
    def transform(self, X):
        """Learned feature map: the kept features' unit-scaled columns.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_kept * group_size)
        """
        check_is_fitted(self)  # (one object in memory and on the workers: no scikit-learn)
        return decided(self, X, LearnedColumns(self._decision_function()),
                       partial(validate_predict_data, self), width=self._n_features_out,
                       what="features")

    def _decision_function(self, with_fitted=False):
        """The fitted decision values, an object without scikit-learn (what a
        prediction on a Dask array sends to the workers; in memory too).  Its
        callers check that the model is fitted (once: 7 us of a 50 us call); the
        regressor's inputs beyond its training range: _input_range.py
        (``with_fitted``: one-vs-rest within tasks, the task's fitted classes too)."""
        return LearnedFeatures(input_standardization(self), self.family_, self.features_,
                               self.feature_scales_, self._coef_tasks, self._intercept_tasks,
                               x_range=getattr(self, "x_range_", None),
                               out_of_bounds=out_of_bounds_mode(self),
                               task_classes=getattr(self, "_task_classes", None),
                               with_fitted=with_fitted)

    def _output(self, X, task_index, post, width=None, dtype=float, with_fitted=False):
        """``post`` of the decision values of ``X`` (one column per output, or
        one value per row of its task); a lazy Dask array of a Dask ``X``."""
        # (one-vs-rest within tasks: a weighed-out class is unfitted in every task,
        # already one below the row's fitted classes; below_others put it two below)
        kept = post if getattr(self, "_task_classes", None) is not None \
            else classes_kept(self, post)
        return decided(self, X, self._decision_function(with_fitted),
                       partial(validate_predict_data, self), kept,
                       width, dtype,
                       task_index=task_index, positions=self._rows_tasks)

    def _n_outputs(self):
        """Columns of the decision values (None: one value per row, of its task; with
        one-vs-rest within tasks, the task's classes)."""
        fitted = getattr(self, "_task_classes", None)
        if fitted is not None:
            return fitted.shape[1]
        return None if self.tasks_ is not None else len(self._intercept_tasks)

    # Saved models before 0.2 hold the column weights as coef_; before the nineteenth pass
    # frequencies_, phases_ (computed now; None: dropped; such a file was refused by name).
    _renamed_attributes = {"coef_": "column_coef_", "frequencies_": None, "phases_": None}

    def __setstate__(self, state):
        # (a pickle of those holds them too: dropped, as the properties compute them)
        super().__setstate__({k: v for k, v in state.items()
                              if k not in ("frequencies_", "phases_")})

    @property
    def coef_(self):
        """Not defined: the weights are on learned columns (``column_coef_``);
        scikit-learn's ``SelectFromModel`` and ``RFE`` read ``coef_`` as input
        weights (they kept inputs by column position): they use
        :attr:`feature_importances_`."""
        raise AttributeError(
            f"{type(self).__name__} has no coef_: its weights are on the learned "
            "columns of transform(), not on the input features; they are "
            "column_coef_ (named coef_ before kernlearn 0.2). Per input feature, "
            "see feature_importances_.")

    @property
    def feature_importances_(self):
        r"""Importance of each input feature, summing to one (Fourier family).

        A kept Fourier feature :math:`j` with frequency :math:`\omega_j` (on the
        standardised inputs) and weights :math:`a_j, b_j` on its cos and sin
        columns changes the decision function at most at the rate
        :math:`\|(a_j, b_j)\| |\omega_{jd}|` along input :math:`d`; the
        importance of input :math:`d` is the sum over kept features (and
        classes or tasks), normalised to sum to one.  This is what
        ``SelectFromModel`` and ``RFE`` use.

        Returns
        -------
        ndarray of shape (n_features_in_,)
        """
        check_is_fitted(self, "column_coef_")
        if not isinstance(self.family_, RandomFourierFeatures):
            raise AttributeError(
                f"feature_importances_ is defined for the random Fourier family "
                f"only (this model's is {type(self.family_).__name__}).")
        W = np.atleast_2d(self._coef_tasks) * self.feature_scales_.ravel()
        k = len(self.features_)
        # (the group size spelt out: a model of no feature has no column to infer it
        # from, and reshape(T, 0, -1) raised instead of giving the uniform shares)
        amp = np.linalg.norm(W.reshape(W.shape[0], k, self.family_.group_size),
                             axis=2).sum(axis=0)
        imp = amp @ np.abs(self.features_[:, :-1])
        total = imp.sum()
        return imp / total if total > 0 else np.full(self.n_features_in_,
                                                     1.0 / self.n_features_in_)

    @property
    def _n_features_out(self):
        """Columns of :meth:`transform` (``get_feature_names_out`` names them
        ``<classname>0, <classname>1, ...``)."""
        return self.feature_scales_.size

    def _resolved_settings(self, X, sample_weight=None):
        """Settings resolved from the data in ``fit``, overriding the parameters: the
        family (``None``: fit_grfl's default), the centre of sparse inputs and, in
        subclasses, the levels chosen from the data."""
        return {"family": self.family, "final_draws": self._draws(X, sample_weight),
                "center": implicit_center(X, sample_weight, self.standardize)}

    def _auto_draws(self, n_rows):
        """What ``n_paths="auto"`` means on ``n_rows`` training rows (fit_grfl's
        ``"auto"`` here)."""
        return "auto"

    def _draws(self, X, sample_weight=None):
        """``n_paths`` resolved: :meth:`_auto_draws` for "auto", but one path on
        a cluster's row partitions (its margins stay there: nothing to average).
        The rows counted are those of positive weight (zero removes a row)."""
        if self.n_paths != "auto":
            return self.n_paths
        if hasattr(X, "grfl_class"):
            return 1
        return self._auto_draws(X.shape[0] if sample_weight is None
                                else int(np.count_nonzero(sample_weight)))

    def _rows_tasks(self, task_index, n):
        """The positions of the rows' tasks (None for a model without tasks)."""
        if self.tasks_ is None:
            if task_index is not None:
                raise ValueError(
                    "task_index was given but the model was fitted without it."
                )
            return None
        if task_index is None:
            raise ValueError(
                "this model was fitted with task_index; pass task_index to predict. "
                "In model selection: " + routing_help(self)
            )
        return self._task_positions(task_index, n)

    def _task_positions(self, task_index, n):
        return task_positions(self.tasks_, task_index, n)

    def _split_tasks(self, task_index, n):
        if task_index is None:
            self.tasks_ = None
            return None
        self.tasks_, rows = split_tasks(task_index, n)
        # (its predictions always need task_index: a NaN score in every split)
        check_task_fit(self, predict_needs_tasks=True)
        return rows


def _training_inputs(est, X, y, **check):
    """Validated training ``X, y`` of ``est``; a ``dask.array`` ``X`` stays on its
    cluster (``check``: ``validate_data``'s target options)."""
    if _is_dask_array(X) or _is_dask_frame(X):
        from ..methods._grfl_dask import dask_fit_inputs  # dask is optional

        X, y, names = partitioned_fit_inputs(est, X, y, not check.get("y_numeric", False))
        X, y = dask_fit_inputs(est, X, y, **check)
        if names is not None:  # (after the checks, which clear an earlier fit's)
            est.feature_names_in_ = names
        return X, y
    if record_plain_fit_data(est, X, y, not check.get("y_numeric", False)):
        return X, y  # (as validate_data would return them)
    X, y = validate_data(est, X, y, accept_sparse=["csr", "csc"],
                         dtype=[np.float64, np.float32], ensure_min_samples=2, **check)
    return (canonical_sparse(X) if sp.issparse(X) else X), y


def _refuse_huge_sample(est, X):
    """Refuse an ``n_candidates`` whose pricing sample cannot fit in memory.

    Each pricing step draws at least ``n_candidates`` parameters (``n_features
    + 1`` numbers each for random Fourier features, at least one for any
    family) and scores them: a sample larger than the machine's physical
    memory died in NumPy's bare ``MemoryError`` (10**9 candidates: "Unable to
    allocate 37.3 GiB"), now a ``ValueError`` naming ``n_candidates`` before
    the data is read.
    """
    shape = getattr(X, "shape", None)
    n_features = int(shape[1]) if shape is not None and len(shape) == 2 else 1
    fourier = est.family is None or isinstance(est.family, RandomFourierFeatures)
    per_candidate = (n_features + 1 if fourier else 1) + 1  # (parameters, score)
    refuse_oversized(est, "n_candidates", est.n_candidates,
                     8.0 * per_candidate * est.n_candidates, physical_memory(),
                     "one pricing sample", "the machine's physical memory")


def _own_params(est):
    """``est.get_params(deep=False)``, the names read once per class."""
    return {k: getattr(est, k) for k in param_names(type(est))}


# GrFL's tol was the master's tolerance before 0.2; at this value both
# meanings give the same model (the old eps and tol defaults were equal).
_DEFAULT_TOL = 1e-3


def _stopping(est):
    """``fit_grfl``'s stopping arguments from the 0.2 names and the deprecated ones.

    ``tol`` is the outer (pricing) tolerance, the method's ``eps``;
    ``inner_tol`` / ``inner_max_iter`` are the master's ``tol`` / ``max_iter``.
    A caller still using ``eps`` writes ``tol`` in its old meaning (the
    master's), so it is read that way and the old model is kept.
    """
    cls = type(est).__name__
    if not isinstance(est.solver, str):  # (fit_grfl sets the named solvers' only)
        warn_unused(est, ("inner_tol", "inner_max_iter", "max_iter"), "a solver object",
                    "its own tol and max_iter apply")
    # (not exclusive: scikit-learn's checks set max_iter on any estimator that has it)
    inner_max_iter = renamed_parameter(est, "max_iter", exclusive=False, overrides=True)
    tol, inner_tol = est.tol, est.inner_tol
    if not (isinstance(est.eps, str) and est.eps == "deprecated"):
        outer = renamed_parameter(est, "eps", "tol", exclusive=False)
        if tol != _DEFAULT_TOL:
            if inner_tol != _DEFAULT_TOL:
                raise ValueError(f"{cls}: with the deprecated eps={est.eps!r}, tol is the "
                                 "master's tolerance (its meaning before 0.2) and cannot be "
                                 "combined with inner_tol; use tol= and inner_tol= only.")
            warn(f"{cls}: with the deprecated 'eps', tol={tol!r} is read in its "
                 "pre-0.2 meaning, the master's tolerance; write "
                 f"tol={est.eps!r}, inner_tol={tol!r}.", RenamedParameterWarning,
                 stacklevel="user")
            inner_tol = tol
        tol = outer
    elif tol != _DEFAULT_TOL:
        warn(f"{cls}: tol={tol!r} is the outer loop's tolerance since 0.2 (the "
             "old eps: stop when no sampled feature violates the optimality "
             "conditions by more than tol); the master solver's tolerance, which "
             "tol meant before, is inner_tol.  This warning goes away in 0.4.",
             RenamedParameterWarning, stacklevel="user")
    return {"eps": tol, "tol": inner_tol, "max_iter": inner_max_iter}


def _classifier_settings(est, n_columns, n_rows):
    """The classifier's level and budget for ``n_columns`` inputs and ``n_rows``
    rows (or weight sum): its ``"auto"`` / ``None`` defaults resolved."""
    # (the automatic level is ours: read on the paper's scale it is c times larger)
    c = paper_loss_factor(get_loss(est.loss, allowed=est._losses)) \
        if est.lambda_scale == "paper" else 1.0
    lambda_p = (classifier_level(n_rows) * c if isinstance(est.lambda_p, str)
                else float(est.lambda_p))
    budget = (est.max_features if est.max_features is not None
              else classifier_budget(n_columns, n_rows))
    return lambda_p, budget


_SCORE_X = """X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs."""


class InfiniteFeatureClassifier(
    ProbabilityMixin, ClassifierMixin, _BaseInfiniteFeature
):
    __doc__ = (
        """Classifier learning its features from an infinite family (GrFL).

    Binary problems are one task with labels mapped to -1/+1; multiclass
    problems are one-vs-all tasks sharing the features (sec. 6.1); with
    ``task_index`` a binary problem is split into tasks, and a multiclass
    one into one-vs-rest problems within tasks: one binary problem per task
    and class present in it, all sharing the features (the group penalty runs
    over every task's and class's weights, as over the classes without tasks).
"""
        + _COMMON_DOC.format(
            loss_default="squared_hinge", lambda_default='"auto"', lambda_note=AUTO_LAMBDA_NOTE,
            max_features_default="None",
            paths_auto='with ``max_features`` None or ``"auto"``',
            paths_speed="about 3 times faster (100 x 10: 20 -> 6.5 ms)",
            loss_choices='"squared_hinge" or "logistic", or a loss with ``prox``.',
            extra_attrs=CLASSIFIER_ATTRS,
            extra_params='''    class_weight : dict, "balanced" or None, default=None
        Weights of the classes' losses (``"balanced"``: ``n / (n_classes *
        n_c)``), multiplied into ``sample_weight``.  With ``task_index``,
        ``"balanced"`` is per task: ``n_t / (k_t n_{t,c})`` over the task's
        rows and the ``k_t`` classes present there (scikit-learn's
        ``compute_sample_weight`` on the task's rows), so each task's classes
        weigh as in a fit of that task alone (``MultitaskMKLClassifier``
        balances over all tasks' rows).
    probability : bool, default=False
        With a loss other than ``"logistic"``, fit Platt sigmoids on decision
        values from an internal 5-fold cross-validation (five extra fits, as
        ``SVC(probability=True)``) so that :meth:`predict_proba` exists (as
        with ``SVC``, :meth:`predict` can differ from its most probable class
        on a few rows); ``loss="logistic"`` has native probabilities.
''',
        ).replace("    lambda_p : float,", '    lambda_p : float or "auto",').replace(
            '    max_features : int or "auto",', '    max_features : int, "auto" or None,').replace(
            "        ``max_features_``.\n", "        ``max_features_``." + BUDGET_NOTE + "\n").replace(
            "    max_features_ : int\n", "    lambda_p_ : float\n        The level "
            "``lambda_p`` used (resolved from ``\"auto\"``).\n    max_features_ : int\n")
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from kernlearn import InfiniteFeatureClassifier
    >>> from kernlearn.families import RandomFourierFeatures
    >>> clf = InfiniteFeatureClassifier(
    ...     family=RandomFourierFeatures(bandwidth=np.sqrt([2.5, 5, 10, 15])),
    ...     max_features=100, n_candidates=200)
"""
    )

    _losses = ("squared_hinge", "logistic")
    _tasks_need_two_classes = True  # (Platt's folds keep each task's classes)
    _parameter_constraints = {
        **_BaseInfiniteFeature._parameter_constraints,
        "loss": [StrOptions(set(_losses)), HasMethods(["value", "grad_margin"])],
        "max_features": [Interval(numbers.Integral, 1, None, closed="left"),
                         StrOptions({"auto"}), None],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "probability": ["boolean"],
    }

    def __init__(self, family=None, *, max_features=None, n_candidates=100, lambda_p="auto",
                 lambda_s=None, lambda_scale="ours", loss="squared_hinge", penalty="group_l1_l2",
                 solver="auto", tol=1e-3, inner_tol=1e-3, inner_max_iter=500,
                 fit_intercept=True, time_budget=None, pricing_subsample="auto",
                 path_iter="auto", warm_start=False, n_paths="auto", standardize=True,
                 random_state=None, verbose=0, class_weight=None, probability=False,
                 eps="deprecated", max_iter="deprecated"):
        self.class_weight = class_weight
        self.probability = probability
        self.family = family
        self.max_features = max_features
        self.n_candidates = n_candidates
        self.lambda_p = lambda_p
        self.lambda_s = lambda_s
        self.lambda_scale = lambda_scale
        self.loss = loss
        self.penalty = penalty
        self.solver = solver
        self.tol = tol
        self.inner_tol = inner_tol
        self.inner_max_iter = inner_max_iter
        self.eps = eps
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.time_budget = time_budget
        self.pricing_subsample = pricing_subsample
        self.path_iter = path_iter
        self.warm_start = warm_start
        self.n_paths = n_paths
        self.standardize = standardize
        self.random_state = random_state
        self.verbose = verbose

    @all_or_nothing
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, task_index=None, sample_weight=None):
        """Learn the features and the classifier.

        Parameters
        ----------
        X : array-like, sparse matrix or dask.array of shape (n_samples, n_features)
            Training inputs.  A ``dask.array`` (dense or sparse chunks) or a
            Dask DataFrame is fitted on its cluster (the Newton master and
            ``RandomFourierFeatures`` only; no ``sample_weight``,
            ``class_weight``, ``task_index``, ``warm_start`` or Platt
            probabilities), the same model as in memory but on data wider than
            long (at most 1,000 distinct rows, at least twice as many
            columns), which in memory is priced in its rows' span: other
            draws, the same distribution of features; and with one path for
            ``n_paths="auto"`` where memory averages 3 below 300 rows.
        y : array-like of shape (n_samples,)
            Class labels.
        task_index : array-like of shape (n_samples,), optional
            Task of each sample; tasks share features.  With three or more
            classes, one-vs-rest within tasks: ``classes_`` holds every task's
            classes, :meth:`decision_function` and :meth:`predict_proba` give
            ``(n_samples, n_classes)`` for each row's task, and a class with no
            row (of positive weight) in a task is not fitted there: its
            decision value is one below the row's lowest other class's (never
            predicted in that task) and its probability is 0.  A task whose
            rows (of positive weight) are of one class is refused: its
            intercept has no finite optimum (as the multitask MKL classifiers
            and scikit-learn's refuse one class).
            Requested by default under scikit-learn's metadata routing, so
            model selection passes it on (see
            :class:`~kernlearn.estimators.mtmkl.MultitaskScorer`).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weight of each sample's loss, as given: an
            integer weight equals that many copies of the row (zero removes
            it; the default bandwidth, the standardisation and the columns'
            unit norms are weighted too), so weights ``c * w`` act like
            ``lambda_p / sqrt(c)``; their scale is moved into the levels
            internally, so any scale is solved accurately.  The defaults
            ``lambda_p="auto"`` and ``max_features=None`` count the weights'
            sum as rows too: weights of 1e4 on 1,000 rows fit as 10 million
            rows would (``lambda_p_`` 0.014, acting as 1.4e-4 at unit
            weights, on 200 features), a far weaker penalty and a far longer
            fit than unit weights (as long as unit weights at that level);
            weights of mean one (``w / w.mean()``) keep the level and the
            budget of the rows.  Multiplied by ``class_weight``.  With
            ``task_index`` each task's loss is weighted the same way (a task
            whose rows all weigh zero is left out of ``tasks_``, as without its
            rows).  A class whose rows all weigh zero
            stays in ``classes_`` with a zero output, never predicted; the
            others are fitted as without it.

        Returns
        -------
        self : object
        """
        X, y = self._fit_inputs(X, y)
        check_two_classes(y)
        task_rows = self._split_tasks(task_index, X.shape[0])
        sw = task_sample_weight(sample_weight, X.shape[0], y, self.class_weight, task_rows)
        self._absent_classes = check_weighted_classes(y, sw)
        self.classes_, yi = encode_labels(y)
        weighed_out = positive_rows(sw) is not None
        Xk, yi, sw, task_rows = self._kept_rows(X, yi, sw, task_rows)  # (classes_ kept)
        if task_rows is not None:  # (a Dask X keeps its rows: those of positive weight)
            check_tasks_hold_both(yi, [r if sw is None else r[sw[r] > 0] for r in task_rows],
                                  self.tasks_, weighted=weighed_out)
        # +-1 codes, one column per class (binary problems keep the second's; with
        # tasks and more classes, one problem per task and class present in it)
        codes = np.where(yi[:, None] == np.arange(len(self.classes_)), 1.0, -1.0)
        Y, rows, self._task_classes = classifier_problems(
            codes, task_rows, self._absent_classes, sw)
        self.lambda_p_, self._budget = _classifier_settings(
            self, X.shape[1], X.shape[0] if sw is None else sw.sum())
        self._fit_tasks(standardize_fit(self, Xk, sw), Y, rows, sw)
        # (a class weighed out, or absent from a task: a zero output, never predicted)
        classifier_outputs(self, self._task_classes)
        self.column_coef_, self.intercept_ = self._coef_tasks, self._intercept_tasks
        warn_no_feature(self, yi, sw, task_rows is not None)
        self._fit_platt(X, y, sample_weight, task_index=task_index)
        return self

    def _auto_draws(self, n_rows):
        # a budget of the estimator's choosing and no path to continue: below
        # CV_BELOW rows the model averages FINAL_DRAWS paths (_grfl_average);
        # with "auto" every fit starts over, so warm_start changes nothing there
        # (it fitted one path, not the model of warm_start=False; the regressor's
        # folds averaged their paths with it too)
        own = self.max_features == "auto" or (self.max_features is None
                                              and not self.warm_start)
        return FINAL_DRAWS if n_rows < CV_BELOW and own else 1

    def _resolved_settings(self, X, sample_weight=None):
        return dict(super()._resolved_settings(X, sample_weight),
                    lambda_p=self.lambda_p_, max_features=self._budget)

    @dask_input_doc(lazy=True)
    def decision_function(self, X, task_index=None):
        """Margins: ``(n_samples,)`` for binary problems, else per class.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs.
        task_index : array-like of shape (n_samples,), optional
            Task of each sample (required when fitted with ``task_index``).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        width = self._n_outputs()
        return self._output(X, task_index, one_column_as_vector,
                            None if width == 1 else width)

    @dask_input_doc(lazy=True)
    def predict(self, X, task_index=None):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs.
        task_index : array-like of shape (n_samples,), optional
            Task of each sample (required when fitted with ``task_index``).

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self._output(X, task_index, partial(class_labels, classes=self.classes_),
                            dtype=self.classes_.dtype)

    def score(self, X, y, task_index=None, sample_weight=None):
        return task_score(self, X, y, task_index, sample_weight)

    score.__doc__ = task_score_doc("Accuracy", _SCORE_X)

    @available_if(_has_proba)
    @dask_input_doc(lazy=True)
    def predict_proba(self, X, task_index=None):
        """Class probabilities (``loss="logistic"`` or ``probability=True``).

        Binary: the sigmoid of the margin (logistic loss) or Platt's sigmoid
        of it (``probability=True``, fitted by internal cross-validation);
        multiclass (one-vs-all tasks): the classes' sigmoids normalised to
        sum to one.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs.
        task_index : array-like of shape (n_samples,), optional
            Task of each sample (required when fitted with ``task_index``).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        proba, tasks_ovr = self._proba_function(), getattr(self, "_task_classes", None) is not None
        if tasks_ovr:  # (a class absent from the row's task: probability 0)
            proba = partial(task_classes_proba, proba=proba, log=_LOG_SPACE.get())
        return self._output(X, task_index, partial(chained, steps=(
            one_column_as_vector, proba)), len(self.classes_), with_fitted=tasks_ovr)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class InfiniteFeatureRegressor(RegressorMixin, _BaseInfiniteFeature):
    __doc__ = (
        """Regressor learning its features from an infinite family (GrFL).

    A 2-D ``y`` gives one task per output (sharing rows); ``task_index`` gives
    one task per distinct value (each with its own rows).  With
    ``standardize=True`` each output is centred (with ``fit_intercept``; a
    model without bias does not add the mean back) and divided by its standard
    deviation before fitting (``y_mean_``, ``y_scale_``, one entry per
    output; per task with ``task_index``), so ``lambda_p``, ``lambda_s``,
    ``objective_`` and ``history_`` refer to standardised targets and the
    model does not depend on the units of ``y``, nor on each task's own;
    ``column_coef_``, ``intercept_``, ``task_coef_`` and ``shared_coef_``
    are in the units of ``y`` (``shared_coef_`` is ``(n_outputs, n_columns)``
    for a 2-D ``y`` or several tasks: the shared weights in each output's or
    task's units).
"""
        + _COMMON_DOC.format(
            loss_default="square", loss_choices='"square".', extra_params=OUT_OF_BOUNDS_DOC,
            extra_attrs=REGRESSOR_ATTRS,
            lambda_default='"auto"', max_features_default='"auto"',
            paths_auto='after the folds chose ``lambda_p="auto"``',
            paths_speed=("about 1.3 times faster (100 x 10: 85 -> 64 ms; the\n"
                         "        folds that choose the level cost more than the paths)"),
            lambda_note=_REG_LAMBDA_NOTE).replace(
            "    lambda_p : float,", '    lambda_p : float or "auto",').replace(
            "by 5-fold cross-validation and a path on all rows is run to it;",
            "by 5-fold cross-validation and a path on all rows is run to it\n"
            "        (with ``lambda_p=\"auto\"``, the default, the folds choose the level\n"
            "        instead, and the model averages 3 such paths of up to 100 features\n"
            "        each; from 300 to 999\n"
            "        rows, where the held-out part chooses the level too, the budget is up\n"
            "        to 200);").replace(
            "    max_features_ : int\n", "    lambda_p_ : float\n        The level "
            "``lambda_p`` used (chosen with ``\"auto\"``).\n    max_features_ : int\n").replace(
            "``\"auto\"`` uses 2000 rows when\n        ``n > 4000``, all rows otherwise;",
            "``\"auto\"`` uses 20,000 rows when\n        ``n > 40,000``, all rows otherwise "
            "(a regression path's later features\n        correlate weakly with the residual; "
            "on fewer rows the estimates'\n        noise ranks the candidates: "
            ":func:`~kernlearn.methods._grfl_select.regressor_pricing_subsample`);")
    )

    _losses = ("square",)
    _parameter_constraints = {
        **_BaseInfiniteFeature._parameter_constraints,
        "loss": [StrOptions(set(_losses)), HasMethods(["value", "grad_margin"])],
        "out_of_bounds": [StrOptions(set(OUT_OF_BOUNDS))],
    }

    def _resolved_settings(self, X, sample_weight=None):
        """``family``, or for ``None`` GrFL-M over three widths (:func:`multi_width_family`),
        and ``pricing_subsample`` (:func:`regressor_pricing_subsample`)."""
        fam = self.family if self.family is not None else multi_width_family(X, sample_weight)
        return dict(super()._resolved_settings(X, sample_weight), family=fam,
                    pricing_subsample=regressor_pricing_subsample(
                        X.shape[0] if sample_weight is None
                        else int(np.count_nonzero(sample_weight)), self.pricing_subsample))

    def __init__(self, family=None, *, max_features="auto", n_candidates=100, lambda_p="auto",
                 lambda_s=None, lambda_scale="ours", loss="square", penalty="group_l1_l2", solver="auto",
                 tol=1e-3, inner_tol=1e-3, inner_max_iter=500, fit_intercept=True,
                 time_budget=None, pricing_subsample="auto", path_iter="auto",
                 warm_start=False, n_paths="auto", standardize=True, random_state=None,
                 verbose=0, out_of_bounds="auto", eps="deprecated", max_iter="deprecated"):
        self.family = family
        self.max_features = max_features
        self.n_candidates = n_candidates
        self.lambda_p = lambda_p
        self.lambda_s = lambda_s
        self.lambda_scale = lambda_scale
        self.loss = loss
        self.penalty = penalty
        self.solver = solver
        self.tol = tol
        self.inner_tol = inner_tol
        self.inner_max_iter = inner_max_iter
        self.eps = eps
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.time_budget = time_budget
        self.pricing_subsample = pricing_subsample
        self.path_iter = path_iter
        self.warm_start = warm_start
        self.n_paths = n_paths
        self.standardize = standardize
        self.random_state = random_state
        self.verbose = verbose
        self.out_of_bounds = out_of_bounds

    @all_or_nothing
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, task_index=None, sample_weight=None):
        """Learn the features and the regressor.

        Parameters
        ----------
        X : array-like, sparse matrix or dask.array of shape (n_samples, n_features)
            Training inputs.  A ``dask.array`` (dense or sparse chunks) or a
            Dask DataFrame is fitted on its cluster (the Newton master and
            ``RandomFourierFeatures`` only; a 1-D ``y``, no ``sample_weight``,
            ``task_index`` or ``warm_start``), the same model as in memory but on
            data wider than long (at most 1,000 distinct rows, at least twice as many
            columns), which in memory is priced in its rows' span: other draws,
            the same distribution of features; and with one path for
            ``n_paths="auto"`` where memory averages 3 below 300 rows.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets (one task per output).
        task_index : array-like of shape (n_samples,), optional
            Task of each sample (1-D ``y`` or one column only).  Requested by default under
            scikit-learn's metadata routing, so model selection passes it on
            (see :class:`~kernlearn.estimators.mtmkl.MultitaskScorer`).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weight of each sample's loss, as given: an
            integer weight equals that many copies of the row (zero removes
            it; the default bandwidth, the standardisation and the columns'
            unit norms are weighted too), so weights ``c * w`` act like
            ``lambda_p / sqrt(c)``; their scale is moved into the levels
            internally, so any scale is solved accurately.  With
            ``task_index`` each task's loss and its targets' standardisation
            are weighted the same way (a task whose rows all weigh zero is
            left out of ``tasks_``, as without its rows).

        Returns
        -------
        self : object
        """
        X, y = self._fit_inputs(X, y, multi_output=True, y_numeric=True)
        y = np.asarray(y, dtype=float)
        sw = fit_sample_weight(sample_weight, X.shape[0])
        X, y, sw, task_rows = self._kept_rows(X, y, sw, self._split_tasks(task_index, len(y)))
        record_input_range(self, X, sw)
        if task_rows is not None and y.ndim == 2 and y.shape[1] == 1:
            # one column (a DataFrame's): raveled with scikit-learn's warning, as the
            # multitask MKL regressor and the classifier with tasks take it (it was
            # refused as "task_index needs a 1-D y")
            y = column_or_1d(y, warn=True)
        if task_rows is not None and y.ndim != 1:
            raise ValueError(f"task_index needs a 1-D y (one target per sample); y has "
                             f"{y.shape[1]} columns: fit one model per output.")
        if task_rows is None:
            Xs, Ys = standardize_fit(self, X, sw, y[:, None] if y.ndim == 1 else y)
        else:  # (each task's targets standardised on its weighted rows)
            Xs, Ys = standardize_fit(self, X, sw), standardize_task_targets(self, y, task_rows, sw)
        self.lambda_p_ = self._fit_tasks(Xs, Ys, task_rows, sw).lambda_p
        self._single_output = task_rows is None and y.ndim == 1
        self._to_target_units()
        return self

    def _to_target_units(self):
        """Coefficients and intercepts back in the units of y, one scale per output or task."""
        scale = np.broadcast_to(self.y_scale_, self._intercept_tasks.shape)
        self._coef_tasks = self._coef_tasks * scale[:, None]
        self.task_coef_ = self.task_coef_ * scale[:, None]
        self._intercept_tasks = self._intercept_tasks * scale + self.y_mean_
        self.shared_coef_ = self.shared_coef_ * (scale[0] if self.y_scale_.size == 1
                                                 else scale[:, None])
        self.column_coef_, self.intercept_ = (
            (self._coef_tasks[0], float(self._intercept_tasks[0])) if self._single_output
            else (self._coef_tasks, self._intercept_tasks))

    @dask_input_doc(lazy=True)
    def predict(self, X, task_index=None):
        """Predicted targets.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs.
        task_index : array-like of shape (n_samples,), optional
            Task of each sample (required when fitted with ``task_index``).

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        check_is_fitted(self)
        if self._single_output:
            return self._output(X, task_index, one_column_as_vector)
        return self._output(X, task_index, None, self._n_outputs())

    def score(self, X, y, task_index=None, sample_weight=None):
        return task_score(self, X, y, task_index, sample_weight)

    score.__doc__ = task_score_doc("Coefficient of determination :math:`R^2` (over all "
                                   "samples and outputs, not per task)", _SCORE_X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        return tags


def _conformance_instances():
    """Fast instances for scikit-learn's estimator checks (tests/test_common.py)."""
    # masters solved to 1e-10: weights equal repeated rows to scikit-learn's
    # rtol of 1e-7 (at the default inner_tol they agree to about 1e-4)
    kw = dict(max_features=5, n_candidates=10, inner_tol=1e-10, inner_max_iter=100,
              random_state=0)
    return [(InfiniteFeatureClassifier(**kw), {}), (InfiniteFeatureRegressor(**kw), {})]
