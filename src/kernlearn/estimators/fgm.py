"""Feature Generating Machine estimators (paper 002)."""

from functools import partial
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    clone,
)
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from ..families import FeaturePool
from ..methods._fgm_inputs import input_importances
from ..methods._kept_rows import rows_of_positive_weight
from ..methods._fgm_rows import check_loss_scale
from ..methods._fgm_select import C_GRID, fit_fgm_auto_C
from ..methods.fgm import (FGMSettings, check_family, fgm_decision, fgm_standardization,
                           fit_fgm)
from ..losses import get_loss, weighted
from ..partitioned import (_block_columns, _is_dask_array, as_row_partitioned,
                           is_out_of_core, parse_bytes, selected_linear_scores)
from .._dask_master import class_codes, validate_dask_target
from ._dask_predict import dask_input_doc, is_dask_input, map_row_blocks
from ._decisions import class_labels, classes_kept, one_column_as_vector
from ._large_inputs import (mapped_targets, partitioned_fit_inputs, partitioned_predict_input,
                            row_block_scores, validate_partitioned_fit)
from ._base import (OLD_NAME, PLATT_XFAIL, ProbabilityMixin, _has_proba, all_or_nothing,
                    check_weighted_classes, finite_outputs, fit_sample_weight,
                    fit_target_map, renamed_parameter, validate_fit_data,
                    validate_params_cached, validate_predict_data, RenamedParameters)
from ._platt import platt_attr_doc
from ._renamed import warn_unused
from ._fgm_options import _shared_problem, _warn_auto_c_in_memory

__all__ = ["FGMClassifier", "FGMRegressor"]


class _FGMBase(RenamedParameters, SelectorMixin, BaseEstimator):
    _renamed_parameters = {"feature_scaling": "standardize", "max_outer_iter": "max_iter",
                           "master_tol": "inner_tol", "master_max_iter": "inner_max_iter"}
    _parameter_constraints = {
        "B": [Interval(Integral, 1, None, closed="left")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_outer_iter": [Interval(Integral, 1, None, closed="left"), OLD_NAME],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "max_features": [Interval(Integral, 1, None, closed="left"), None],
        "solver": [StrOptions({"auto", "newton", "apg", "simplemkl"})],
        "inner_tol": [Interval(Real, 0, None, closed="neither"), None],
        "inner_max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "master_tol": [Interval(Real, 0, None, closed="neither"), None, OLD_NAME],
        "master_max_iter": [Interval(Integral, 1, None, closed="left"), None, OLD_NAME],
        "standardize": ["boolean"],
        "feature_scaling": ["boolean", OLD_NAME],
        "fit_intercept": ["boolean"],
        "groups": [list, None],
        "tree": ["boolean"],
        "chunk_size": [Interval(Integral, 1, None, closed="left"), None],
        "refit": ["boolean"],
        "refit_C": [Interval(Real, 0, None, closed="neither"), None],
        "family": [HasMethods(["fit", "price", "columns"]), None],
        "memory_budget": [Interval(Integral, 1, None, closed="left"), str, None],
        "verbose": ["verbose"],
    }

    def _validate_params(self):
        validate_params_cached(self)  # cheap on every fit of a grid search
        if self.family is not None:  # before any data is read (the CLI: exit 2)
            check_family(self.family)
            getattr(self.family, "_validate_params", lambda: None)()  # (its constraints)
        if isinstance(self.memory_budget, str):  # (the constraints see a str only)
            try:
                parse_bytes(self.memory_budget)
            except ValueError as exc:
                raise ValueError(f"The 'memory_budget' parameter of {type(self).__name__}: "
                                 f"{exc}") from None

    def _partitioned(self, X):
        """Whether ``X`` is read by map-reduce over row blocks (out of core, Dask)."""
        return self.memory_budget is not None or is_out_of_core(X)

    def _validate(self, X, y, classification):
        """Validated ``(X, y)``: in memory, or as a RowPartitioned for large data."""
        if not self.refit:  # (a refit_C of its own had no effect, without a word)
            warn_unused(self, ("refit_C",), "refit=False", "set refit=True to run the refit")
        if not self._partitioned(X):
            return validate_fit_data(self, X, y, classification=classification,
                                     y_numeric=not classification)
        if self.family is not None:
            raise ValueError("family= needs an in-memory X; out-of-core and Dask input "
                             "are priced by the default feature pool.")
        X, y, names = partitioned_fit_inputs(self, X, y, classification)
        rows = as_row_partitioned(X, self.memory_budget)
        if _is_dask_array(y) and getattr(rows, "blocks", None) is None:
            y = y.compute()  # (no cluster, e.g. its client closed: read here, as GrFL does)
        # (a Dask y stays on the cluster too)
        check = validate_dask_target if _is_dask_array(y) else validate_partitioned_fit
        rows, y = check(self, rows, y, classification=classification)
        if names is not None:  # (after the checks, which clear an earlier fit's)
            self.feature_names_in_ = names
        return rows, y

    def _unfitted_pool(self, std):
        if self.refit and self.family is not None:
            raise ValueError("refit=True needs the original columns; it cannot be "
                             "combined with family= (the model lives on the family's "
                             "virtual features).")
        if self.family is not None:
            if self.groups is not None or self.tree:
                raise ValueError("groups/tree apply to the default feature pool; "
                                 "they cannot be combined with family=.")
            if self.chunk_size is not None:  # (it was ignored without a word)
                raise ValueError("chunk_size bounds the default feature pool's scoring; "
                                 "with family= the family scores its own columns (set "
                                 "the family's chunk_size where it has one).")
            return clone(self.family)
        if self.tree and self.groups is None:
            # (it was ignored: every feature its own group, nothing nests)
            raise ValueError("tree=True says how the groups= nest; pass groups= "
                             "(disjoint or nested) or drop tree=True.")
        return FeaturePool(groups=self.groups, tree=self.tree, feature_scaling=std,
                           chunk_size=self.chunk_size, group_size_weights=True)

    def _checked_scaling(self, X, sw):
        """Whether to standardise, once ``check_loss_scale`` passed (before the
        standardisation, whose weighted variances overflowed first, naming columns).

        Parameters
        ----------
        X : ndarray, sparse matrix or RowPartitioned
        sw : ndarray of shape (n_samples,) or None

        Returns
        -------
        bool
        """
        check_loss_scale(max(C_GRID) if isinstance(self.C, str) else self.C, sw, X.shape[0],
                         type(self).__name__)
        return bool(renamed_parameter(self, "feature_scaling"))

    def _fit_method(self, X, y, sw, loss, n_classes=None, multiclass="shared"):
        """Standardise, run the method, copy its result back in the input's units."""
        std = self._checked_scaling(X, sw)
        if not self._partitioned(X):
            # a zero weight removes its row before anything reads it (a user's
            # family may scale unweighted; a removed row near 1e308 overflowed
            # the pool's scores); Dask and out-of-core blocks skip such rows
            X, y, sw = rows_of_positive_weight(X, y, sw)
        # A family scales its own generated columns (e.g. unit-RMS monomials,
        # unit-trace sub-kernels), which already makes it blind to column units.
        st = fgm_standardization(X, sw, std and self.family is None)
        self.x_mean_, self.x_scale_ = st.mean, st.scale
        ts = None
        if n_classes is None:
            ts = fit_target_map(self, y, sw, std)
            self.y_mean_, self.y_scale_, y = ts.mean, ts.scale, mapped_targets(ts, y, sw)
        auto = isinstance(self.C, str)  # "auto": FGMRegressor's cross-validated C
        settings = FGMSettings(
            B=self.B, C=1.0 if auto else self.C, max_iter=renamed_parameter(self, "max_outer_iter"),
            tol=self.tol, max_features=self.max_features, solver=self.solver,
            master_tol=renamed_parameter(self, "master_tol"),
            master_max_iter=renamed_parameter(self, "master_max_iter"),
            fit_intercept=self.fit_intercept, verbose=self.verbose)
        kw = dict(sample_weight=sw, column_scale=st.scale if self.family is None else None,
                  refit=self.refit, refit_loss=loss, refit_C=self.refit_C)
        if auto and not self._partitioned(X):
            res = fit_fgm_auto_C(X, y, self._unfitted_pool(std), get_loss(loss), settings, **kw)
        else:  # a numeric C; on out-of-core and Dask input "auto" is C=1
            _warn_auto_c_in_memory(auto)
            res = fit_fgm(X, y, self._unfitted_pool(std), weighted(get_loss(loss), sw),
                          settings, n_classes=n_classes, multiclass=multiclass,
                          n_jobs=getattr(self, "n_jobs", None), **kw)
        coef, self.intercept_ = res.coef, res.intercept
        if ts is not None:  # regression: back to the target's units
            self.C_ = settings.C if res.C is None else res.C
            self.cv_results_ = res.cv
            coef = coef * ts.scale[0]
            self.intercept_ = self.intercept_ * ts.scale[0] + ts.mean[0]
        self._set_weights(res, coef, X, sw)
        self.selected_features_, self.d_ = res.selected, res.d
        self.family_ = res.pool if res.virtual else None
        self.n_iter_, self.history_, self.converged_ = res.n_iter, res.history, res.converged
        return res

    def _set_weights(self, res, coef, X, sw):
        """``coef_``, or with a family ``column_coef_`` and ``feature_importances_``."""
        for name in ("coef_", "column_coef_", "feature_importances_"):
            self.__dict__.pop(name, None)  # of an earlier fit with(out) family=
        if not res.virtual:
            self.coef_ = coef
            return
        # weights on generated columns are not one per input (see __getattr__)
        self.column_coef_ = coef
        imp = input_importances(res.pool, coef, res.selected, X, sw)
        if imp is not None:
            self.feature_importances_ = imp

    def _decision(self, X):
        check_is_fitted(self)
        X = validate_predict_data(self, X)
        coef = self.coef_ if self.family_ is None else self.column_coef_
        return finite_outputs(self, fgm_decision(X, coef, self.intercept_, self.family_,
                                                 self.selected_features_), X,
                              "decision values")

    # Saved family models of kernlearn before 0.2 hold the generated columns'
    # weights as coef_ (models without a family keep coef_).
    @staticmethod
    def _renamed_attributes(state):
        return {"coef_": "column_coef_"} if state.get("family_") is not None else {}

    def __getattr__(self, name):
        # Only reached when normal lookup failed: a model fitted with family=
        # has no coef_, and says where its weights are.  (scikit-learn's
        # SelectFromModel and RFE read coef_ as one weight per input and kept
        # inputs by the positions of generated columns, or failed with an
        # IndexError; they now use feature_importances_.)
        if name == "coef_" and "column_coef_" in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__} fitted with family= has no coef_: its weights "
                "are on the family's generated columns; they are column_coef_ "
                "(named coef_ before kernlearn 0.2). Per input feature, see "
                "feature_importances_.")
        if hasattr(type(self), name):
            # a method whose availability check refused (predict_proba without
            # probabilities): its reason, which this fallback used to replace
            # with a bare "object has no attribute 'predict_proba'"
            return object.__getattribute__(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _output(self, X, post, width=None, dtype=float):
        """``post(decision scores)``; on large ``X`` computed block by block.

        A Dask array or DataFrame gives a lazy Dask array (``map_blocks`` on
        the workers, nothing gathered); an out-of-core source is read through
        its row blocks.  ``width`` is the number of columns of ``post``'s
        output (``None``: one-dimensional).
        """
        post = classes_kept(self, post)
        if not self._partitioned(X):
            return post(self._decision(X))
        check_is_fitted(self)
        if self.family_ is not None:
            raise ValueError("a model fitted with family= predicts on in-memory X only.")
        scores = partial(selected_linear_scores, coef=self.coef_, intercept=self.intercept_)
        if is_dask_input(X):  # (decision values refused if not finite, as in memory)
            return map_row_blocks(self, X, scores, width, dtype, "decision values", post)
        X = partitioned_predict_input(self, X)
        if len(X.shape) != 2 or X.shape[1] != self.n_features_in_:  # (RowPartitioned: no ndim)
            raise ValueError(f"X has shape {X.shape}; this model expects "
                             f"{self.n_features_in_} features.")
        return post(finite_outputs(self, row_block_scores(self, X, scores), None,
                                   "decision values"))

    def _get_support_mask(self):
        check_is_fitted(self)
        if self.family_ is not None:
            raise ValueError(
                "this model selected generated features of family="
                f"{type(self.family_).__name__}, not columns of X: there is no "
                "input-feature mask (see selected_features_ and "
                "get_feature_names_out())."
            )
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.selected_features_] = True
        return mask

    def _family_ids(self):
        """Selected virtual feature ids of ``family_``, in increasing order."""
        return np.sort(self.selected_features_)

    def transform(self, X):
        """Keep only the selected features, in input order.

        With ``family=`` the output holds the selected generated features
        (e.g. the monomials ``x3*x7`` of a polynomial pool), unscaled, in
        increasing order of their virtual ids; ``get_support`` and
        ``inverse_transform`` then do not apply.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        X_selected : ndarray or sparse matrix of shape (n_samples, n_selected)
        """
        check_is_fitted(self)
        if self._partitioned(X):
            if self.family_ is not None:
                raise ValueError("a model fitted with family= transforms in-memory X only.")
            # input order, as the in-memory selector returns them
            take = partial(_block_columns, ids=np.sort(self.selected_features_))
            if is_dask_input(X):  # (the selected columns, computed: as in memory)
                return map_row_blocks(self, X, take, len(self.selected_features_)).compute()
            X = partitioned_predict_input(self, X)
            return as_row_partitioned(X, self.memory_budget).map_stack(take)
        if self.family_ is None:
            # X checked (and read) as predict reads it: scikit-learn's selector
            # passed a DataFrame through unchecked for pandas output (NaN, text
            # and dates too), text columns for the default output, and named
            # neither the cell nor the moved column
            X = validate_predict_data(self, X)
            return self._transform(X.tocsr() if sp.issparse(X) else X)
        X = validate_predict_data(self, X)
        return finite_outputs(self, self.family_.raw_columns(self._family_ids(), X), X,
                              "features")

    def get_feature_names_out(self, input_features=None):
        """Names of the columns :meth:`transform` returns.

        Parameters
        ----------
        input_features : array-like of str, optional
            Input feature names (default: ``feature_names_in_`` when fitted
            on a DataFrame, else ``x0, x1, ...``).

        Returns
        -------
        names : ndarray of str
            The selected input names, or with ``family=`` the family's names
            of the generated features (``"x3*x7"``).
        """
        check_is_fitted(self)
        if self.family_ is None:
            return super().get_feature_names_out(input_features)
        names = _check_feature_names_in(self, input_features)
        return np.asarray(self.family_.describe(self._family_ids(), names), dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class FGMClassifier(ProbabilityMixin, ClassifierMixin, _FGMBase):

    __doc__ = r"""Feature Generating Machine: sparse linear classification by cutting planes.

    Selects about ``B`` features per outer iteration by exact worst-case
    analysis and fits the :math:`\ell_1^2`-regularised (squared-group-l1)
    primal of the restricted problem, as in Tan, Tsang and Wang (2014): by
    proximal Newton on the small active set (the default), or by the paper's
    accelerated proximal gradient when the active block is too large for a
    Hessian (``solver``).  Works on dense or sparse input without densifying
    it; multiclass problems share one selection over the one-vs-rest outputs
    by default (``multiclass``).

    Parameters
    ----------
    B : int, default=10
        Features (or groups) added per outer iteration; the model keeps
        between ``B`` and ``B * max_iter`` of them.
    C : float, default=10.0
        Weight of the training loss, a sum over samples as in LIBLINEAR.  The
        squared hinge is paper 002's :math:`\frac12\max(0, 1 - ym)^2`, half
        LIBLINEAR's, so with every feature in one constraint the model is
        LIBLINEAR's L2-loss SVM at ``C / 2`` (with an unpenalised intercept);
        the logistic loss has no factor: LIBLINEAR's ``C``.  With
        ``standardize=True`` (the default) ``C`` acts on standardised data and
        does not depend on the units of the features; with
        ``standardize=False`` it acts on raw columns.
        Larger ``C``: weaker regularisation, more features carrying weight.
        The penalty is the squared sum of the constraints' weight norms, so
        when ``T`` constraints share the weight equally it shrinks like an
        l2 SVM at about ``C / T``; the default ``C=10`` (paper 002's value)
        puts that between about 0.7 and 10 over 15 constraints.
        Changed from 1.0 in 0.2: data whose signal is spread thinly over many
        correlated features underfit at ``C=1`` (on the suite set hill-valley
        it trailed ``LinearSVC()`` by 5-6 points, ``C=10`` ties it; see
        ``benchmarks/fgm_regularisation.py``).
    loss : {"squared_hinge", "logistic"}, default="squared_hinge"
        Training loss.
    max_iter : int, default=100
        Maximum number of outer (cutting-plane) iterations ``T``.  Renamed
        from ``max_outer_iter`` in 0.2; was 15 (a ten-class shared
        selection on 200-650 image features needs 30-52 rounds of ``B=10``).
    tol : float or None, default=1e-2
        Stop as soon as the duality gap of Theorem 2 (restricted objective
        minus the Fenchel dual value at the best multiple of the pricing
        step's dual point) is below ``tol`` relative: the next master could
        not lower the objective by more, so it is not solved; or when the
        relative objective change between outer iterations
        (:math:`\epsilon_c`, the paper's rule) is below ``tol`` with that gap
        within ``tol``, else below ``tol / 10`` with the gap within ``10 tol``
        (changes of ``tol`` per round ended fits 3-40 % above the optimum, and
        changes of ``tol / 10`` at larger gaps 2-9 %; one fit stopped at a gap
        of 7 % is still 3 % above, issue 21).  ``None`` disables
        both rules: the fit runs ``max_iter`` outer iterations (unless no
        feature violates the optimality conditions) and, as scikit-learn's
        estimators with ``tol=None``, raises no ``ConvergenceWarning`` when
        they run out.  Ignored with ``max_features``.
    max_features : int, optional
        A budget of ``k`` features (at most the number of candidates): new
        features are added best first, at most ``min(B, ceil(k / 10))`` per
        round: about ten rounds of worst-case analysis choose them (``k`` below
        10, 6 to 10 from there: 8 for 23), until exactly ``k`` carry weight (or
        no candidate is left).  A round's new features too weak to enter
        together (their constraint not above the active ones') are joined by the
        next best, doubling the group up to the rest of the budget; when even
        that group is not violated, no new features can enter at this ``C`` and
        fewer than ``k`` are kept.  Features the restricted optimum gives no
        weight do not count and are not offered again.  ``max_iter`` then bounds
        the iterations beyond those rounds.  Counts groups when ``groups`` is
        given, input features with an additive-kernel family.
        In a one-vs-rest fit (see ``multiclass``) the budget applies to each
        problem (their union may hold more features).
    multiclass : {"auto", "shared", "ovr"}, default="auto"
        Multiclass problems: ``"shared"`` selects one set of features for all
        one-vs-rest outputs (a feature's score is the norm of its
        correlations with every class's dual vector and the penalty groups
        its weights over the classes); ``"ovr"`` runs independent binary
        problems whose selections are united.  ``"auto"`` is ``"shared"``
        on the columns of ``X`` and ``"ovr"`` with a ``family`` (families
        price one dual vector at a time), with ``solver="simplemkl"`` (it
        solves one output; ``"shared"`` with it is refused on three or more
        classes) or with ``solver="apg"`` (its models before APG solved
        several outputs; ``"shared"`` with it is the shared selection).
    solver : {"auto", "newton", "apg", "simplemkl"}, default="auto"
        Master solver on the active set: proximal Newton (compiled block
        coordinate descent on the quadratic model; converges in a few
        iterations), the paper's APG (Algorithm 4), or the paper's MKL-FGM
        baseline ``"simplemkl"`` (sec. 5.1, SimpleMKL: the same optimum, one to
        three orders of magnitude slower).  ``"auto"`` chooses by estimated
        cost (:mod:`kernlearn.solvers.choice`): Newton on narrow active sets,
        APG when Newton's estimated cost is higher -- on wide active sets (more
        columns than rows) by a cost model measured on FGM's masters
        (``history_["master_reason"]``).  Newton and APG solve the shared
        multiclass selection's ``K`` outputs jointly (APG's prox scales each
        feature's row of weights over the classes); ``"auto"`` takes Newton
        for them, measured the faster master on most multiclass sets
        (``benchmarks/fgm_apg_multi.py``).  SimpleMKL solves one output.
    inner_tol : float, optional
        Tolerance of the master (inner) solver (default: Newton's relative
        predicted decrease ``1e-8``, APG's ``1e-6``).  A master that stops at
        its iteration cap raises a ``ConvergenceWarning``.  Renamed from
        ``master_tol`` in 0.2.
    inner_max_iter : int, optional
        Iteration cap of one master (inner) solve (default: 50 Newton or 5000
        APG iterations), the de-biasing refit's too.  Renamed from
        ``master_max_iter`` in 0.2.
    standardize : bool, default=True
        Centre and scale dense columns to unit standard deviation and scale
        sparse columns (never densified; by their largest absolute value, a
        rule chosen by measurement on sparse text, except columns non-zero in
        at least 90 % of the rows, which get their standard deviation:
        :data:`kernlearn.preprocessing.MEASUREMENT_SHARE`); regression targets are
        standardised per output (scaled only without an intercept).  Learned
        quantities are reported in the input's units.  FGM never copies ``X``
        for this: the scales enter as the pool's :math:`\lambda_j = 1/s_j` and
        the centring is exact through the intercept (without an intercept the
        columns are scaled only).
        With ``family=`` the inputs are left as they are: the family's own
        ``feature_scaling`` normalises each generated column (monomial,
        sub-kernel block); regression targets are still standardised.
    feature_scaling : bool, optional
        Deprecated alias of ``standardize`` (FutureWarning when set;
        removed in 0.4).
    max_outer_iter, master_tol, master_max_iter : optional
        Deprecated aliases of ``max_iter``, ``inner_tol`` and
        ``inner_max_iter`` (FutureWarning when set; removed in 0.4).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept.
    groups : list of array-like of int, optional
        Select groups of features instead of single features (groups may
        overlap; overlapping features are duplicated; a feature listed twice
        in one group is refused, and features in no group are never
        candidates, with a warning).  A group's columns are weighted by
        :math:`1/\sqrt{|G|}` (the group lasso's :math:`\sqrt{|G|}\|w_G\|`),
        so that a group does not win the worst-case analysis by its size.
    tree : bool, default=False
        ``groups`` are tree-structured (any two groups disjoint or nested,
        listed in any order): pricing prunes sub-trees (Proposition 2).
    chunk_size : int, optional
        Score at most this many columns at once (bounded memory).  Not with
        ``family=``, whose own parameters bound its scoring.
    refit : bool, default=False
        De-bias: retrain an l2-regularised model on the selected features:
        FGM's problem with all of them in one constraint,
        :math:`\tfrac12\|w\|^2 + C\sum_i \ell(m_i, y_i)` with FGM's loss and
        an unpenalised intercept (for the squared hinge, LIBLINEAR's L2-loss
        SVM at ``refit_C / 2``, as for ``C``).
    refit_C : float or None, default=20.0
        ``C`` of the de-biasing refit, on FGM's scale: the paper's 20 (sec.
        6.2.2, "a standard SVM ... with relatively large C"); ``None`` reuses
        FGM's ``C``.  Read with ``refit=True`` only (a warning names it otherwise).
    family : family object, optional
        Another pool of candidate columns, e.g.
        :class:`~kernlearn.families.PolynomialPool` (degree-2 monomials never
        materialised) or :class:`~kernlearn.families.AdditiveKernelExpansion`.
        ``selected_features_`` then holds the family's virtual feature ids,
        ``column_coef_`` (not ``coef_``) the weights over them, and
        ``feature_importances_`` one importance per input.
    n_jobs : int, optional
        Threads for the one-vs-rest problems (``multiclass``; joblib): ``None``
        is 1 unless in a ``joblib.parallel_config`` context, ``-1`` all processors
        (two classes, or ``"shared"``, are one problem: a warning names it when set).
    memory_budget : int or str, optional
        Read ``X`` out of core in row chunks using at most about this much
        memory for data at a time (e.g. ``"2GB"``; for a memory-mapped array,
        ``numpy.load(path, mmap_mode="r")``).  Large data can also be given as
        a ``dask.array`` or a Dask DataFrame (its column names become
        ``feature_names_in_``), fitted on the current Dask client's cluster
        (only ``n``- and ``n_features``-sized vectors and the ``n x |active|``
        block of active columns reach the client), or as
        :class:`~kernlearn.datasets.SvmlightChunks` (a LIBSVM file read in
        chunks); both carry their own chunking.  Predictions on a Dask array
        are lazy Dask arrays.
    verbose : int, default=0
        Progress (:mod:`kernlearn.progress`): 1 draws a bar on a terminal (a
        widget in a notebook; nothing in a pipe or log file) and says why the
        fit stopped; 2 prints one line per outer iteration to standard output.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes' losses: a dict ``{label: weight}`` or
        ``"balanced"`` (``n / (n_classes * n_c)``, as in LIBLINEAR and
        scikit-learn); multiplied into ``sample_weight``.  With a Dask ``y``
        the labels are read into memory once to weigh the rows (as a Dask
        ``sample_weight`` is).
    probability : bool, default=False
        With a loss other than ``"logistic"``, fit Platt sigmoids on decision
        values from an internal 5-fold cross-validation (five extra fits, as
        ``SVC(probability=True)``) so that :meth:`predict_proba` exists (as
        with ``SVC``, :meth:`predict` follows the decision function and can
        differ from the most probable class on a few rows).
        ``loss="logistic"`` has native probabilities and ignores it.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Not defined with ``family=``: see ``column_coef_``.
    column_coef_ : sparse matrix of shape (1 or n_classes, n_generated)
        With ``family=`` only: the weights of the family's raw generated
        columns (the columns of :meth:`transform`, by virtual id).
    feature_importances_ : ndarray of shape (n_features,)
        With ``family=`` only, for families whose columns read a few inputs
        (monomials, additive-kernel blocks): each input's share of the
        model, the sum over the selected columns that read it of their
        weights' norm times the column's standard deviation in training,
        normalised to sum to one.  ``SelectFromModel`` and ``RFE`` use it.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    selected_features_ : ndarray of int
        Selected features in order of inclusion (union over classes, in order
        of first inclusion, for multiclass).
    d_ : ndarray
        Learned scaling :math:`d_j \in [0, 1]` of the selected features (one
        row per problem of a one-vs-rest fit, see ``multiclass``).
    n_iter_ : int or ndarray
        Outer iterations run (one per problem of a one-vs-rest fit).
    converged_ : bool
        Whether the outer loop stopped on its own rule (``tol``, no violated
        feature, the ``max_features`` budget) and the master of the returned
        model met ``inner_tol`` (of every problem of a one-vs-rest
        fit); ``False`` whenever a ``ConvergenceWarning`` said one of them
        ran out of iterations, or that a dual lower bound lay above the
        objective (no bound: a defect signal, never used to stop).
    history_ : dict of ndarray or list of dict
        Per outer iteration: ``iter``, ``objective`` (upper bound),
        ``lower_bound`` and ``gap`` of Theorem 2, ``violation`` (the largest
        pricing score), ``n_active`` (active features), ``master_iter``
        (iterations of that master solve, Newton's or APG's),
        ``newton_master`` (1 for Newton, 0 for APG, or for SimpleMKL with
        ``solver="simplemkl"``), ``master_reason``
        (why: an index into :data:`kernlearn.solvers.MASTER_REASONS`),
        ``time`` and ``peak_rss_mb`` (peak resident memory of this process);
        ``final_lower_bound``, one entry, is the bound at the last pricing.
        One such dict per problem of a one-vs-rest fit (``multiclass``).
    x_mean_ : ndarray of shape (n_features,) or None
        Column means of dense training data (``standardize=True``; the
        centring is implicit through the intercept, and the master shifts
        active columns far from zero itself; ``coef_`` and ``intercept_`` are
        on the raw columns already).
    x_scale_ : ndarray of shape (n_features,) or None
        Column scales :math:`s_j` of the standardisation (None without it;
        ``inf`` for a column constant in training, which is ignored).
    family_ : family object or None
        The ``family`` the model was fitted with (for :meth:`transform` and
        the decision function), ``None`` on the columns of ``X``.
""" + platt_attr_doc(logistic_loss=True) + r"""    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the input columns, when ``X`` had string column names (a
        pandas DataFrame).

    References
    ----------
    M. Tan, I. W. Tsang, L. Wang (2014). Towards ultrahigh dimensional feature
    selection for big data. JMLR 15, 1371-1429.

    Examples
    --------
    >>> from kernlearn import FGMClassifier
    >>> from kernlearn.datasets import make_fgm_synthetic
    >>> X, y, w = make_fgm_synthetic(200, 100, 10, random_state=0)
    >>> clf = FGMClassifier(max_features=10).fit(X, y)
    >>> len(clf.selected_features_), int((w[clf.selected_features_] != 0).sum())
    (10, 8)
    """

    _parameter_constraints = {
        **_FGMBase._parameter_constraints,
        "loss": [StrOptions({"squared_hinge", "logistic"})],
        "multiclass": [StrOptions({"auto", "shared", "ovr"})],
        "n_jobs": [Integral, None],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "probability": ["boolean"],
    }

    def __init__(
        self, B=10, C=10.0, loss="squared_hinge", *, max_iter=100, tol=1e-2,
        max_features=None, multiclass="auto", solver="auto", inner_tol=None,
        inner_max_iter=None, standardize=True, fit_intercept=True, groups=None,
        tree=False, chunk_size=None, refit=False, refit_C=20.0, family=None,
        n_jobs=None,
        memory_budget=None, verbose=0, class_weight=None, probability=False,
        feature_scaling="deprecated", max_outer_iter="deprecated",
        master_tol="deprecated", master_max_iter="deprecated",
    ):
        self.B = B
        self.C = C
        self.loss = loss
        self.max_iter = max_iter
        self.tol = tol
        self.max_features = max_features
        self.multiclass = multiclass
        self.solver = solver
        self.inner_tol = inner_tol
        self.inner_max_iter = inner_max_iter
        self.standardize = standardize
        self.feature_scaling = feature_scaling
        self.max_outer_iter = max_outer_iter
        self.master_tol = master_tol
        self.master_max_iter = master_max_iter
        self.fit_intercept = fit_intercept
        self.groups = groups
        self.tree = tree
        self.chunk_size = chunk_size
        self.refit = refit
        self.refit_C = refit_C
        self.family = family
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.verbose = verbose
        self.class_weight = class_weight
        self.probability = probability

    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Select features and fit the classifier.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training data (CSR/CSC accepted and never densified).
        y : array-like of shape (n_samples,)
            Class labels (two or more classes).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weight of each sample's loss (integer weights act as
            repeated rows, zero removes a row: an in-memory fit sees the
            rows of positive weight only, out-of-core and Dask blocks skip
            the others, and the feature scaling is weighted);
            multiplied by ``class_weight``.

        Returns
        -------
        self : FGMClassifier
        """
        self._validate_params()
        if self.probability and self.loss != "logistic" and self._partitioned(X):
            raise ValueError("probability=True fits Platt sigmoids by cross-validation "
                             "on in-memory X; out-of-core and Dask input need "
                             "loss='logistic' for probabilities.")
        X, y = self._validate(X, y, classification=True)
        # class_weight of a Dask y: its labels read once to weigh the rows (n
        # numbers, as a Dask sample_weight is read), the fit's y left where it is
        # (refused before: the fit with class_weight={c: 0} in memory ran)
        y_w = y.compute() if self.class_weight is not None and _is_dask_array(y) else y
        sw = fit_sample_weight(sample_weight, X.shape[0], y_w, self.class_weight)
        self.classes_, yi = class_codes(y)
        self._absent_classes = check_weighted_classes(y, sw, (self.classes_, yi))
        shared = _shared_problem(self)
        self._fit_method(X, yi, sw, self.loss, len(self.classes_),
                         "shared" if shared else "ovr")
        self._fit_platt(X, y, sample_weight)
        return self

    @dask_input_doc(lazy=True)
    def decision_function(self, X):
        """Signed distances to the separating hyperplanes.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        K = len(self.intercept_) if hasattr(self, "intercept_") else 1
        # (C-ordered, as scikit-learn's; the scores are stored by output)
        return self._output(X, lambda s: np.ascontiguousarray(one_column_as_vector(s)),
                            None if K == 1 else K)

    @dask_input_doc(lazy=True)
    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self._output(X, partial(class_labels, classes=self.classes_),
                            dtype=self.classes_.dtype)

    @available_if(_has_proba)
    @dask_input_doc(lazy=True)
    def predict_proba(self, X):
        """Class probabilities (``loss="logistic"`` or ``probability=True``).

        Logistic loss: the model's sigmoid (binary) or the one-vs-rest
        sigmoids normalised to sum to one (multiclass).  Other losses with
        ``probability=True``: Platt's sigmoids of the decision values, fitted
        by internal cross-validation, normalised the same way.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self._output(X, self._proba_function(), len(self.classes_))


class FGMRegressor(RegressorMixin, _FGMBase):
    r"""Feature Generating Machine for sparse linear regression (square loss).

    Our extension of FGM (paper 002) to the square loss
    :math:`\tfrac12(y - m)^2`; the dual variables are the scaled residuals
    ``C (y - m)``.  Parameters and attributes as in
    :class:`~kernlearn.FGMClassifier` (without ``loss``, ``multiclass``,
    ``n_jobs``, ``class_weight`` and ``probability``).

    Parameters
    ----------
    B : int, default=10
        Features (or groups) added per outer iteration.
    C : float or "auto", default="auto"
        Weight of the training loss (see :class:`FGMClassifier`).  ``"auto"``
        chooses it by cross-validation, as ``LassoCV`` chooses its penalty:
        FGM is fitted on three folds (below 2,000 rows of positive weight;
        from 2,000, one third held out once) at ``C`` = 0.001, 0.01, 0.1, 1
        and 10, then at the best value divided and (up to 10) multiplied by
        :math:`\sqrt{10}`, and refitted on all rows at the ``C`` of lowest
        held-out squared error (``C_``, curve in ``cv_results_``).  The folds'
        fits see the inputs scaled as the fit on all rows does (by all rows'
        spreads: FGM refitted with its own scaling per fold chose another
        ``C`` on 8 of 26 suite splits, on machine 0.001 at 2-2.6x the test
        MSE).  ``C`` multiplies the weighted loss and the grid is tried at
        the weights as given (integer weights act as repeated rows), so a
        common factor of the weights moves the grid against the loss:
        weights of 1e-3 or 1e3 push the choice to an end of the grid (suite
        splits, mean-one weights times 1e-3: up to 38x the test MSE of the
        mean-one weights on concreteslump, 5.2x on yacht); weights of mean
        one (``w / w.mean()``) keep the grid where it was measured.  Folds
        hold only rows of positive weight, so a zero weight still removes a
        row; integer weights no longer equal repeated rows exactly (a
        repeated row may fall in two folds).  The folds
        split the row positions with the fixed seed 0: the same rows in another
        order can choose a neighbouring ``C`` (airfoil's first 300 rows, five
        orders: ``C_`` 0.1, 0.32 or 3.2; see ``doc/reproducibility.md``).  A fixed
        ``C`` cannot serve both kinds of data: on a target the inputs hardly
        predict, ``C=1`` is least squares (forest fires: 1.76x ``LassoCV()``'s
        MSE; ``"auto"`` 1.05x), on a smooth linear one it over-regularises
        (concrete slump: 1.29x; ``"auto"`` 1.01x).  Costs about 20 fits; about
        one when at most ``B`` features (or groups) are candidates and there is
        no ``max_features``: FGM is then ridge regression, and the folds'
        fits at every ``C`` are computed exactly from one eigendecomposition.
        Out-of-core and Dask input use ``C=1`` (a ``UserWarning`` says so).
        Was ``1.0`` before 0.2.
    max_iter : int, default=100
        Maximum outer (cutting-plane) iterations (was ``max_outer_iter``).
    tol : float or None, default=1e-2
        Relative objective change and duality gap stopping rules (``None``:
        run ``max_iter`` outer iterations, see :class:`FGMClassifier`).
    max_features : int, optional
        Budget of features, at most the number of candidates (see
        :class:`FGMClassifier`).
    solver : {"auto", "newton", "apg", "simplemkl"}, default="auto"
        Master solver (see :class:`FGMClassifier`).
    inner_tol : float, optional
        Master (inner) solver tolerance (was ``master_tol``).
    inner_max_iter : int, optional
        Master (inner) iteration cap (was ``master_max_iter``).
    standardize : bool, default=True
        Standardise inputs and targets (see :class:`FGMClassifier`).
    feature_scaling : bool, optional
        Deprecated alias of ``standardize``.
    max_outer_iter, master_tol, master_max_iter : optional
        Deprecated aliases of ``max_iter``, ``inner_tol`` and
        ``inner_max_iter``.
    fit_intercept : bool, default=True
        Fit an intercept.
    groups : list of array-like of int, optional
        Feature groups.
    tree : bool, default=False
        Tree-structured groups.
    chunk_size : int, optional
        Bounded-memory scoring.
    refit : bool, default=False
        Ridge refit on the selected features (FGM's square loss with all of
        them in one constraint).
    refit_C : float or None, default=None
        ``C`` of the refit (ridge ``alpha = 1 / refit_C``); ``None`` reuses
        FGM's ``C`` (with ``C="auto"`` the chosen ``C_``); read with ``refit=True`` only.
    family : family object, optional
        Another pool of candidate columns (see :class:`FGMClassifier`).
    memory_budget : int or str, optional
        Out-of-core reading in row chunks (see :class:`FGMClassifier`).
    verbose : int, default=0
        Progress, as in :class:`FGMClassifier`.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Not defined with ``family=``.
    column_coef_ : sparse matrix of shape (1, n_generated)
        With ``family=`` only: the weights of the family's generated columns.
    feature_importances_ : ndarray of shape (n_features,)
        With ``family=`` only (see :class:`FGMClassifier`).
    intercept_ : float
        With ``family=``: an ndarray of shape ``(1,)``.
    selected_features_ : ndarray of int
    d_ : ndarray
    n_iter_ : int
        Outer iterations run.
    converged_ : bool
        Whether the outer loop stopped on its own rule and the last master
        met ``inner_tol`` (see :class:`FGMClassifier`).
    history_ : dict of ndarray
        Per outer iteration, the keys of :class:`FGMClassifier`'s; the
        ``objective``, bounds and ``gap`` are those of the problem on the
        standardised targets (the same numbers in any units of ``y``).
    family_ : family object or None
        The fitted ``family`` (``None`` on the columns of ``X``).
    x_mean_, x_scale_ : ndarray or None
        Input standardisation (see :class:`FGMClassifier`).
    y_mean_, y_scale_ : ndarray of shape (1,)
        Target standardisation (mean 0, scale 1 with ``standardize=False``;
        mean 0 with ``fit_intercept=False``: the model has no bias).
    C_ : float
        The ``C`` of the model: chosen by cross-validation with ``C="auto"``,
        else ``C``.
    cv_results_ : dict or None
        With ``C="auto"`` (in memory): ``"C"``, the values tried in increasing
        order, and ``"loss"``, the held-out squared error (halved, sample-weighted,
        on the standardised target) summed over the folds at each; else None.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the input columns, when ``X`` had string column names (a
        pandas DataFrame).

    References
    ----------
    M. Tan, I. W. Tsang, L. Wang (2014). JMLR 15, 1371-1429.
    """

    _parameter_constraints = {
        **_FGMBase._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    }

    def __init__(
        self, B=10, C="auto", *, max_iter=100, tol=1e-2, max_features=None,
        solver="auto", inner_tol=None, inner_max_iter=None, standardize=True,
        fit_intercept=True, groups=None, tree=False, chunk_size=None, refit=False,
        refit_C=None, family=None, memory_budget=None, verbose=0, feature_scaling="deprecated",
        max_outer_iter="deprecated", master_tol="deprecated", master_max_iter="deprecated",
    ):
        self.B = B
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.max_features = max_features
        self.solver = solver
        self.inner_tol = inner_tol
        self.inner_max_iter = inner_max_iter
        self.standardize = standardize
        self.feature_scaling = feature_scaling
        self.max_outer_iter = max_outer_iter
        self.master_tol = master_tol
        self.master_max_iter = master_max_iter
        self.fit_intercept = fit_intercept
        self.groups = groups
        self.tree = tree
        self.chunk_size = chunk_size
        self.refit = refit
        self.refit_C = refit_C
        self.family = family
        self.memory_budget = memory_budget
        self.verbose = verbose

    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Select features and fit the regressor.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weight of each sample's loss (integer weights act as
            repeated rows, zero removes a row: an in-memory fit sees the
            rows of positive weight only, out-of-core and Dask blocks skip
            the others, and the feature scaling is weighted).

        Returns
        -------
        self : FGMRegressor
        """
        self._validate_params()
        X, y = self._validate(X, y, classification=False)
        sw = fit_sample_weight(sample_weight, X.shape[0])
        self._fit_method(X, y.astype(float), sw, "square")
        if self.family is None:
            self.coef_, self.intercept_ = self.coef_[0], float(self.intercept_[0])
        return self

    @dask_input_doc(lazy=True)
    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._output(X, lambda s: s.ravel())


def _conformance_instances():
    from ..families import PolynomialPool

    return [
        (FGMClassifier(B=2, max_iter=3), {}),
        (FGMClassifier(B=2, loss="logistic", max_iter=3), {}),
        (FGMClassifier(B=2, max_iter=3, probability=True), PLATT_XFAIL),
        (FGMRegressor(B=2, max_iter=3), _CV_XFAIL),
        (FGMRegressor(B=2, max_iter=3, C=1.0), {}),
        # (weighted column scaling of a pool, and "balanced" counting weights:
        # both once failed the sample-weight equivalence checks)
        (FGMClassifier(B=2, max_iter=3, family=PolynomialPool()), {}),
        (FGMClassifier(B=2, max_iter=3, class_weight="balanced"), {}),
    ]


# C="auto": the folds hold different rows when a row is repeated instead of
# weighted, so the chosen C may differ (scikit-learn's LassoCV alike); the
# fixed-C instance above keeps the exact equivalence tested.
_CV_XFAIL = {
    name: "C='auto' cross-validates: folds differ between weighted and repeated rows"
    for name in ("check_sample_weight_equivalence_on_dense_data",
                 "check_sample_weight_equivalence_on_sparse_data")
}
