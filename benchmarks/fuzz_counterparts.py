"""The scikit-learn counterparts that judge ``fuzz_ecosystem.py``'s refusals.

A composition our estimator refuses with a clear error is a success only when
the refusal is right.  This module gives the oracle: the same composition, on
the same data and drawn with the same random choices, with the estimator's
scikit-learn counterpart in its place.  Our refusal is *expected* when the
counterpart refuses too, or when our message names one of the documented
limitations of :data:`LIMITATIONS` (each with its reason); anything else is a
*wrongful refusal*.  The converse: a composition we accept and the
counterpart refuses is a failure too unless :data:`ACCEPTED` names it (a
wrong shape, a one-class fold must not be fitted into something meaningless).

The counterparts:

- ``FGMClassifier``: ``LinearSVC`` (squared hinge) or ``LogisticRegression``
  (``loss="logistic"`` or ``probability=True``), ``C``, ``class_weight`` and
  ``fit_intercept`` as ours;
- ``FGMRegressor``: ``Lasso`` (``fit_intercept`` as ours);
- ``PNormMKLClassifier``, the low-rank and the learned-feature classifiers:
  ``SVC`` with the RBF kernel (``C``, ``class_weight``, ``probability``);
- the low-rank and learned-feature regressors: ``SVR`` with the RBF kernel
  (``C``; ``KernelRidge`` takes no ``gamma="scale"``, which the fuzz's grids
  search);
- the ``*CV`` multitask estimators: ``GridSearchCV`` of those over ``Cs``
  with the same ``cv`` (its folds refuse what our folds do);
- with ``task_index`` (the multitask estimators, the learned-feature ones
  given tasks): the same, wrapped so that ``fit`` and the predictions take
  (and ignore) ``task_index``: the refusal to judge is of the composition,
  not of the tasks.
"""

import re

from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.metaestimators import available_if

# Our refusals that are right although the counterpart accepts the composition:
# (estimator name pattern, message pattern, the reason).  Each is refused by
# the bare fit as well (our options, or input they do not take), documented in
# the docstring, and tested in tests/test_user_audit94.py.
LIMITATIONS = (
    (r"^FGM", r"max_features=\d+ exceeds the \d+ candidate",
     "max_features is a budget of at most the number of candidates (documented); "
     "SelectFromModel refuses max_features above n_features_in_ too (SelectKBest "
     "warns and keeps all: a design choice; the message names the largest budget)"),
    (r"^FGMClassifier$", r"solver='simplemkl' handles one output",
     "SimpleMKL solves one output: multiclass='shared' with it on three or more "
     "classes (documented; multiclass='auto' runs one-vs-rest with it). The paper's "
     "MKL-FGM baseline is one output; the shared selection is our extension, solved "
     "by the Newton or the APG master"),
    (r"^LowRankKernel", r"both set the kernel's \w+; give it once",
     "a gamma, degree or coef0 given in kernel_params and, with another value, as "
     "the argument (a search over gamma with kernel_params' gamma) is refused "
     "(documented under kernel_params)"),
    (r"^(MultitaskMKLClassifier|InfiniteFeatureClassifier)",
     r"has samples of one class only",
     "every task is a classification problem of its own (documented): a task of one "
     "class among its rows of positive weight is SVC's one-class refusal, per task"),
    (r"^MultitaskMKL.*CV$", r"folds stratified by task need some task with",
     "the folds are scikit-learn's StratifiedKFold over (task, class) strata "
     "(documented under cv), which refuses more folds than every stratum's rows"),
    (r"^PNormMKLClassifier$", r"no epoch of either stage runs|runs no stage-1 epoch: the model",
     "max_iter=0, or online_only=True, with max_iter_online=0 or pegasos=True runs "
     "no epoch: the model would be all zeros (documented under max_iter, online_only)"),
)


def documented_limitation(name, message):
    """The reason of the :data:`LIMITATIONS` entry matching, or None."""
    for est_pat, msg_pat, reason in LIMITATIONS:
        if re.search(est_pat, name) and re.search(msg_pat, message):
            return reason
    return None


# The kinds of refusal (of the input, of the folds, of the parameters): a
# counterpart's refusal excuses ours only when they share a kind, so that a
# refusal of ours for a reason of its own is not passed by the counterpart
# refusing something else of the same composition (a negative alpha, a fold).
KINDS = (
    ("non-finite", r"NaN|[Ii]nfinit|non-finite|not finite"),
    ("sparse", r"[Ss]parse"),
    ("no-rows", r"0 sample|n_samples=0|no rows|empty|minimum of \d+ is required|zero-size"),
    ("classes", r"one class|1 class|single class|only one|at least (two|2) classes|both classes"
                r"|classes has to be|number of classes|least populated|members in each class"
                r"|more than one class|of (every|each) class|sample of class"),
    ("folds", r"n_splits|folds?\b|least populated|members in each class|splits"),
    ("target", r"label type|[Cc]ontinuous|target|\by\b"),
    ("shape", r"features|shape|inconsistent numbers of samples|length|dimension|columns?\b"),
    ("parameter", r"parameter|must be|unexpected keyword|[Ii]nvalid|class_weight"),
)


def refusal_kinds(message):
    """The kinds (:data:`KINDS`) a refusal's message names."""
    return {kind for kind, pat in KINDS if re.search(pat, message)}


def same_kind(ours, theirs):
    """Whether two refusals share a kind (a message of no kind shares none)."""
    return bool(refusal_kinds(ours) & refusal_kinds(theirs))


class _TaskIgnoring(BaseEstimator):
    """A scikit-learn estimator whose ``fit`` and predictions take ``task_index``."""

    # (requested by default, as the multitask estimators' own)
    __metadata_request__fit = {"task_index": True}
    __metadata_request__predict = {"task_index": True}
    __metadata_request__score = {"task_index": True}
    __metadata_request__decision_function = {"task_index": True}
    __metadata_request__predict_proba = {"task_index": True}

    def __init__(self, estimator=None):
        self.estimator = estimator

    def _inner(self):
        from sklearn.svm import SVC, SVR

        if self.estimator is not None:
            return self.estimator
        return SVC() if isinstance(self, ClassifierMixin) else SVR()

    def fit(self, X, y, task_index=None, sample_weight=None):
        kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        self.estimator_ = clone(self._inner()).fit(X, y, **kw)
        for attr in ("classes_", "n_features_in_", "feature_names_in_"):
            if hasattr(self.estimator_, attr):
                setattr(self, attr, getattr(self.estimator_, attr))
        return self

    def predict(self, X, task_index=None):
        return self.estimator_.predict(X)

    @available_if(lambda self: hasattr(self._inner(), "decision_function"))
    def decision_function(self, X, task_index=None):
        return self.estimator_.decision_function(X)

    @available_if(lambda self: hasattr(self._inner(), "predict_proba"))
    def predict_proba(self, X, task_index=None):
        return self.estimator_.predict_proba(X)

    def score(self, X, y, task_index=None, sample_weight=None):
        return self.estimator_.score(X, y, sample_weight=sample_weight)


class _TaskIgnoringClassifier(ClassifierMixin, _TaskIgnoring):
    pass


class _TaskIgnoringRegressor(RegressorMixin, _TaskIgnoring):
    pass


def counterpart(name, params, tasks=False):
    """The scikit-learn estimator that stands for ``name`` set with ``params``
    (``tasks``: fitted with ``task_index``, which it takes and ignores)."""
    from sklearn.linear_model import Lasso, LogisticRegression
    from sklearn.svm import SVC, SVR, LinearSVC

    cw = params.get("class_weight")
    C = params.get("C")
    C = float(C) if isinstance(C, (int, float)) and not isinstance(C, bool) else 1.0
    fi = bool(params.get("fit_intercept", True))
    classifier = "Classifier" in name
    if name == "FGMClassifier":
        if params.get("loss") == "logistic" or params.get("probability"):
            est = LogisticRegression(C=C, class_weight=cw, fit_intercept=fi)
        else:
            est = LinearSVC(C=C, class_weight=cw, fit_intercept=fi)
    elif name == "FGMRegressor":
        est = Lasso(alpha=0.1, fit_intercept=fi)
    elif name.endswith("CV"):
        # a search over Cs with the same folds: the folds' refusals are shared
        from sklearn.model_selection import GridSearchCV, LeaveOneOut

        cv = params.get("cv")
        cv = LeaveOneOut() if cv == "loo" else (5 if cv is None else cv)
        Cs = [float(c) for c in params.get("Cs", (0.1, 1.0, 10.0))]
        import sklearn

        inner = SVC() if classifier else SVR()
        with sklearn.config_context(enable_metadata_routing=True):
            # (our CV estimators fit and validate with the weights)
            inner.set_fit_request(sample_weight=True).set_score_request(sample_weight=True)
        est = GridSearchCV(inner, {"C": Cs}, cv=cv)
    elif classifier:
        est = SVC(C=C, class_weight=cw, probability=bool(params.get("probability")),
                  random_state=0)
    else:
        est = SVR(C=C)
    if tasks:
        est = (_TaskIgnoringClassifier if classifier else _TaskIgnoringRegressor)(est)
    return est


def run_counterpart(comp_fn, name, params, X, y, task, sw, rng):
    """Run the composition with the counterpart: ("accepted"|"refused", detail)."""
    import warnings

    from fuzz_options import CLEAR_ERRORS

    est = counterpart(name, params, tasks=task is not None)
    cparams = est.get_params(deep=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comp_fn(name, cparams, est, X, y, task, sw, rng)
    except CLEAR_ERRORS as exc:
        # (a search whose every fit failed says so on many lines, its last
        # the fits' error: that line is the refusal's reason)
        lines = [line for line in str(exc).splitlines() if line.strip()] or [""]
        return "refused", f"{type(est).__name__}: {type(exc).__name__}: {lines[-1][:200]}"
    except Exception as exc:  # noqa: BLE001 - judged by its type
        detail = f"{type(est).__name__}: {type(exc).__name__}: {str(exc)[:200]}"
        # a check of the fuzz failing on a scikit-learn model: it got past
        # the fit (the composition was accepted); any other error: no verdict
        return ("accepted" if type(exc).__name__ == "Defect" else "unjudged"), detail
    return "accepted", type(est).__name__


# Compositions we accept and the counterpart refuses, rightly accepted:
# (estimator name pattern, the counterpart's message pattern, the reason).
ACCEPTED = ()


def accepted_rightly(name, counterpart_message):
    """The reason we rightly accept what the counterpart refuses, or None."""
    for est_pat, msg_pat, reason in ACCEPTED:
        if re.search(est_pat, name) and re.search(msg_pat, counterpart_message):
            return reason
    return None
