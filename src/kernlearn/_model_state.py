"""The fitted state of a loaded model, checked against what its class declares.

A model file's seal is a digest anyone can recompute: it detects damage, not a
deliberate edit.  A file rewritten consistently and resealed (an attribute
dropped, an array of another shape, a count changed) is read by
:func:`kernlearn.io.load_model` as a valid file; without this check its
``predict`` then failed with a bare ``AttributeError`` / ``IndexError``.

:data:`FITTED_STATE` declares, per estimator, every fitted attribute it may
hold: its kind (array with dtype kinds, scalar, string, component object,
container), whether it may be ``None`` or absent, and its shape in *symbols*
shared between attributes (``"d"``: ``n_features_in_``; ``"c"``: the number of
classes; ``"t"``: of tasks; other letters: sizes the attributes must agree
on; ``"@b"``: a size within one item of a list).  :func:`check_fitted_state`
is the one generic checker: missing and unknown attributes, kinds, dtype
kinds, shapes (a symbol is bound by the first attribute naming it, every later
one must agree), finiteness (:func:`nonfinite_allowed`, the rule :mod:`kernlearn.io`
reads too), lower bounds (non-negative indices and scales) and upper bounds
(an index below the size it indexes, ``high=``).  :data:`OLDER_FILES` reads
the files of an older version label by what they were shown to hold.
Components declared in :data:`COMPONENT_STATE` are checked the same way
against the same symbols (only the attributes they list); :data:`RELATIONS`
holds the few relations between attributes a rule cannot state.

Values cannot be checked: a resealed file whose ``x_scale_`` is multiplied by
two is a valid model file of another model.
"""

import functools
import re
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

_NUMBER = (int, float, np.integer, np.floating)


@dataclass(frozen=True)
class Rule:
    """What one fitted attribute must be.

    ``kind``: ``"array"`` (``dtypes``: NumPy kind letters, ``shape``: tuple of
    int, symbol, ``"k*sym"`` / ``"sym+k"`` or ``None``), ``"sparse"``,
    ``"int"``, ``"real"``, ``"bool"``, ``"str"``, ``"dict"``, ``"list"``
    (``shape``: its length; ``items``: the rule of every element,
    ``fields``: of the first ones), ``"object"`` (``classes``: import paths),
    or ``"any"``; ``alts``: further rules the value may satisfy instead.
    ``low``: the least value; ``high``: a symbol whose size every value (an
    index) must stay below; ``finite``: see :func:`nonfinite_allowed`.
    """

    kind: str
    dtypes: str = "f"
    shape: tuple = None
    none: bool = False
    optional: bool = False
    finite: bool = True
    low: float = None
    high: str = None
    binds: str = None
    choices: tuple = None
    classes: tuple = ()
    alts: tuple = field(default=())
    items: "Rule" = None
    fields: tuple = None


def arr(shape, dtypes="f", **kw):
    return Rule("array", dtypes=dtypes, shape=tuple(shape), **kw)


def num(kind="real", **kw):
    return Rule(kind, **kw)


def obj(*classes, **kw):
    return Rule("object", classes=classes, **kw)


ANY = Rule("any")
# a fit's reported figures (not read by predict): NaN when not computed
# (its arrays, one figure per problem, are finite: a NaN one was never saved)
_DIAGNOSTIC = num(finite=False, alts=(arr((None,)),))
_IDX = "iu"
_FAMILY = "kernlearn.families._base.BaseFamily"
_KLISTS = ("kernlearn.kernels.KernelList", "kernlearn.kernels.PrecomputedKernelList")

# ----------------------------------------------------------- shared groups
_FEATURES = {
    "n_features_in_": num("int", low=1, binds="d"),
    "feature_names_in_": arr(("d",), "OU", optional=True),
}
_INPUT = {
    **_FEATURES,
    "x_mean_": arr(("d",), none=True),
    # (+inf marks a column constant in training; NaN and -inf are refused)
    "x_scale_": arr(("d",), none=True, finite="+inf", low=0),
    "_x_dtype": Rule("str", choices=("float64", "float32"), optional=True),
}
_LABELS = {
    # (labels of a pandas object column are restored as object arrays of str/int)
    "classes_": arr(("c",), "biufUO"),
    "platt_": arr(("o", 2), none=True),
    "_proba_source": Rule("str", choices=("none", "native", "platt")),
}
# (classes whose rows all weigh zero: their positions in classes_)
_CLASSES = {**_LABELS, "_absent_classes": arr((None,), _IDX, low=0, high="c", none=True)}
# (one-vs-rest fits keep one count per problem)
_RUN = {"n_iter_": num("int", low=0, alts=(arr((None,), _IDX, low=0),)),
        "converged_": Rule("bool", alts=(arr((None,), "b"),)),
        # (a fit's record: missing entries are NaN)
        "history_": Rule("dict", finite=False, alts=(Rule("list", finite=False),))}
_Y = {"y_mean_": arr(("y",)), "y_scale_": arr(("y",), low=0)}

_FGM = {
    **_INPUT, **_RUN,
    "selected_features_": arr(("s",), _IDX, low=0),
    "d_": arr(("s",), alts=(arr((None, "s")),)),
    "family_": obj(_FAMILY, none=True),
    "column_coef_": Rule("sparse", optional=True),
    "feature_importances_": arr(("d",), optional=True),
}
_INFINITE = {
    **_INPUT, **_RUN,
    "tasks_": arr(("t",), "biufUO", none=True),
    "lambda_p_": num(low=0),
    "_budget": num("int", low=0, optional=True, alts=(Rule("str"),)),
    "family_": obj(_FAMILY),
    # (a feature's parameters: their count depends on the family)
    "features_": arr(("p", None)), "feature_scales_": arr(("p", None)),
    "task_coef_": arr((None, "2*p")), "shared_coef_": arr(("2*p",), alts=(arr((None, "2*p")),)),
    "_coef_tasks": arr(("r", "2*p")), "_intercept_tasks": arr(("r",)),
    # (rows: one per task or per output)
    "column_coef_": arr(("2*p",), alts=(arr((None, "2*p")),)),
    "solver_": Rule("str"), "stop_reason_": Rule("str"),
    "max_features_": num("int", low=0), "objective_": _DIAGNOSTIC, "n_paths_": num("int", low=0),
    "last_violation_": num(finite=False),
}
_LOWRANK = {
    **_INPUT, **_RUN,
    "_kernel": Rule("str", alts=(Rule("function"),)),
    "mu_": arr(("p",), alts=(arr((None, "p")),)), "column_indices_": arr(("p",), _IDX, low=0),
    "nu_": num(low=0, alts=(arr((None,), low=0),)), "m0_": num("int", low=0, alts=(arr((None,), _IDX, low=0),)), "objective_": _DIAGNOSTIC,
    "center_indices_": arr(("m",), _IDX, low=0), "center_factors_": arr(("m",)),
    "kernel_params_": Rule("dict"), "nu_path_": Rule("dict", none=True, alts=(Rule("list"),)),
    "centers_": arr(("m", "d")), "kernel_center_": arr(("d",), none=True),
}
_MTMKL = {
    **_FEATURES, **_RUN,
    "_train_rows": arr((None,), _IDX, none=True, low=0),
    "_weighed_out": Rule("any", none=True),
    "tasks_": arr(("t",), "biufUO"),
    "kernels_": obj("kernlearn.methods.mtmkl.task_kernels.TaskKernels"),
    "_blocks": obj("kernlearn.methods.mtmkl.task_kernels.TaskBuckets"),
    "_model": obj("kernlearn.methods.mtmkl.fit.MultitaskModel"),
    "C_": num(low=0), "shared_": Rule("bool"),
    "kernel_weights_": arr(("m",)), "task_kernel_weights_": arr(("t", "m")),
    "shared_kernel_weights_": arr(("m",), none=True), "intercept_": arr(("t",)),
    "objective_": _DIAGNOSTIC, "gap_": num(finite=False),
}
_CV = {"cv_results_": Rule("dict"), "n_splits_": num("int", low=1),
       "best_index_": num("int", low=0), "best_score_": num(finite=False)}

#: Every fitted attribute of each estimator (by class name) and its rule.
FITTED_STATE = {
    "FGMClassifier": {
        **_FGM, **_CLASSES,
        "coef_": arr(("o", "d"), optional=True), "intercept_": arr(("o",)),
    },
    "FGMRegressor": {
        **_FGM, **_Y,
        "coef_": arr(("d",), optional=True), "intercept_": num(alts=(arr(("y",)),)),
        "C_": num(low=0), "cv_results_": Rule("dict", none=True),
    },
    "PNormMKLClassifier": {
        **_INPUT, **_RUN, **_CLASSES,
        "kernel_weights_": arr(("m",), low=0), "kernel_params_": Rule("list", shape=("m",), none=True),
        "rbf_gamma_raw_": Rule("list", shape=("m",), none=True),
        "support_": arr(("n",), _IDX, low=0), "dual_coef_": arr(("o", "n")),
        "R_": num(low=0, finite=False), "n_rows_computed_": num("int", low=0),
        "stop_reason_": Rule("str"), "kernel_list_": obj(*_KLISTS),
    },
    "InfiniteFeatureClassifier": {
        **_INFINITE, **_CLASSES, "intercept_": arr((None,)),
        # (one-vs-rest within tasks: the (task, class) problems fitted)
        "_task_classes": arr(("t", "c"), "b", none=True),
    },
    "InfiniteFeatureRegressor": {
        **_INFINITE, **_Y,
        "x_range_": arr((2, "d")), "_single_output": Rule("bool"),
        "intercept_": num(alts=(arr(("y",)),)),
    },
    "LowRankKernelClassifier": {
        **_LOWRANK, **_CLASSES,
        "centers_": arr(("m", "d"), "iuf", alts=(arr(("m",), _IDX), Rule("sparse"))),
        "dual_coef_": arr(("m", "o")), "intercept_": arr(("o",)),
    },
    "LowRankKernelRegressor": {
        **_LOWRANK, **_Y,
        "centers_": arr(("m", "d"), "iuf", alts=(arr(("m",), _IDX), Rule("sparse"))),
        "_y_ndim": num("int", choices=(1, 2)), "x_range_": arr((2, "d"), none=True),
        "dual_coef_": arr(("m", "y")), "intercept_": arr(("y",)),
    },
    "MultitaskMKLClassifier": {**_MTMKL, **_LABELS},
    "MultitaskMKLRegressor": {**_MTMKL, **_Y},
    "MultitaskMKLClassifierCV": {**_MTMKL, **_LABELS, **_CV},
    "MultitaskMKLRegressorCV": {**_MTMKL, **_Y, **_CV},
}

# Attributes added during 0.2.0's development that a model file saved before
# them lacks: predict reads them with a fallback (``getattr`` default, e.g. no
# weighed-out class, no Platt source, the kernel parameter), or they are reported
# figures only, so such a file still predicts as when it was saved.
_CLASSIFIER_LATER = ("_absent_classes", "_proba_source")
_LOWRANK_LATER = ("_kernel", "kernel_center_", "nu_path_")
_MTMKL_LATER = ("_weighed_out",)
MAY_LACK = {
    "FGMClassifier": _CLASSIFIER_LATER,
    "PNormMKLClassifier": (*_CLASSIFIER_LATER, "converged_", "stop_reason_"),
    "InfiniteFeatureClassifier": (*_CLASSIFIER_LATER, "_task_classes"),
    "InfiniteFeatureRegressor": ("x_range_",),
    "LowRankKernelClassifier": (*_CLASSIFIER_LATER, *_LOWRANK_LATER),
    "LowRankKernelRegressor": (*_LOWRANK_LATER, "x_range_"),
    "MultitaskMKLClassifier": (*_MTMKL_LATER, "_proba_source"),
    "MultitaskMKLRegressor": (*_MTMKL_LATER, "y_mean_", "y_scale_"),
    "MultitaskMKLClassifierCV": (*_MTMKL_LATER, "_proba_source", "best_index_"),
    "MultitaskMKLRegressorCV": (*_MTMKL_LATER, "y_mean_", "y_scale_", "best_index_"),
}
for _name, _later in MAY_LACK.items():
    FITTED_STATE[_name] = {k: replace(r, optional=True) if k in _later else r
                           for k, r in FITTED_STATE[_name].items()}
# A later attribute predict replaces, when a file lacks it, by the estimator's
# parameter (``_model_kernel``): the relations check that parameter instead.
READ_FROM_PARAMETER = dict.fromkeys(["LowRankKernelClassifier", "LowRankKernelRegressor"],
                                    {"_kernel": "kernel"})


# Files labelled 0.1.0: the development version before 0.2.0.dev0 (2026-11-22
# to 11-26).  Its code was built at its first model format (11-24) and at its
# last commit, and their files loaded here: the low-rank and p-norm MKL models
# predict bit for bit what that code predicted, lacking attributes added
# since (no standardisation then: x_mean_ / x_scale_ absent read as none);
# the multitask ones of 11-26 load as they are (those of 11-24 are refused,
# their kernels name a property now).  FGM's and GrFL's decision values differ
# by 2e-16 to 9e-16 from that code's (predict sums in another order now), so
# their files are refused: a loaded model predicts what its code did, or not
# at all.  p-norm MKL files holding ``_n_train`` (11-24: predict on a Gram
# matrix read it) stay refused as an unknown attribute.
#: Per version label of an older file, per estimator: the attributes its files
#: may lack, or a reason its files are refused (a str).
OLDER_FILES = {
    "0.1.0": {
        **dict.fromkeys(
            ["FGMClassifier", "FGMRegressor", "InfiniteFeatureClassifier",
             "InfiniteFeatureRegressor"],
            "its decision values would differ here from those of the code that saved "
            "it (by round-off: predict sums in another order now)"),
        "LowRankKernelClassifier": ("center_factors_", "platt_", "x_mean_", "x_scale_"),
        "LowRankKernelRegressor": ("center_factors_", "x_mean_", "x_scale_", "y_mean_",
                                   "y_scale_"),
        "PNormMKLClassifier": ("kernel_params_", "rbf_gamma_raw_", "platt_", "x_mean_",
                               "x_scale_"),
    },
}

# Parameters added since a 0.1.0 file was written are absent from its
# parameters; read as today's defaults they described another model than the
# file's (standardize=True for one fitted unstandardised), and a clone refit
# otherwise.  Each absent one takes the value that meant the old code's fit:
# no standardisation (low-rank before 11-26 00:57, p-norm MKL before 01:23),
# the paper's single kernel width, and one SLKL problem per one-vs-all output
# (low-rank before 11-26 03:42).  A parameter the file holds is kept as is.
_SINGLE_WIDTH = {"standardize": False, "gamma_factors": (1.0,)}
#: Per version label of an older file, per estimator: the values of the
#: parameters its files may lack (the old code's behaviour).
OLDER_PARAMETERS = {
    "0.1.0": {
        "LowRankKernelClassifier": {**_SINGLE_WIDTH, "multiclass": "ovr"},
        "LowRankKernelRegressor": _SINGLE_WIDTH,
        "PNormMKLClassifier": {"standardize": False},
    },
}


# (low-rank code gained ``standardize`` and ``x_mean_``/``x_scale_`` in one
# commit, 9abb1254, 11-26: an older file lacks all three, a later one holds the
# attributes, None without standardisation, x_mean_ None for sparse input)
_OLDER_INPUT_MAP = ("LowRankKernelClassifier", "LowRankKernelRegressor")


def _older_input_map(name, estimator, state, fail):
    """Refuse an older low-rank file whose input map disagrees with its
    ``standardize`` (held, or filled by :data:`OLDER_PARAMETERS`): lacking
    ``x_mean_``/``x_scale_`` under ``standardize=True`` it predicted
    unstandardised, holding a scale under ``False`` standardised; either way
    ``get_params`` named another model and a clone refit was one."""
    if name not in _OLDER_INPUT_MAP:
        return
    lacking = [k for k in ("x_mean_", "x_scale_") if k not in state]
    standardize = getattr(estimator, "standardize", None)
    if lacking and (len(lacking) == 1 or standardize is not False):
        fail(f"state lacks {' and '.join(lacking)} (the input map) while "
             f"params.standardize is {standardize!r}: x_mean_ and x_scale_ are "
             "saved both or neither, and neither only without standardisation.")
    if not lacking and standardize is False and state["x_scale_"] is not None:
        fail("state.x_scale_ holds the scales of a standardised fit while "
             "params.standardize is False (or absent: the old code did not standardise).")


def older_parameters(params, name, version):
    """``params`` of an estimator ``name`` read from a file of kernlearn
    ``version``, the parameters it lacks set to the old code's meaning
    (:data:`OLDER_PARAMETERS`); other files' unchanged."""
    return {**OLDER_PARAMETERS.get(version, {}).get(name, {}), **params}


def seq(shape=None, items=None, fields=None, **kw):
    return Rule("list", shape=shape, items=items, fields=fields, **kw)


# a kernel's specification: (name, parameters, columns or None)
# a kernel's fitted parameters (gamma, degree, coef0): numbers
_KERNEL_PARAMS = Rule("dict", items=num(none=True, alts=(Rule("array", dtypes="biuf"),)))
# (a named kernel, or one of the allow-listed kernel functions)
_KERNEL_NAME = Rule("str", choices="kernlearn.kernels.KERNELS", alts=(Rule("function"),))
# (columns: None for all, or positions as a list, an array or a slice)
_COLUMNS = seq(items=num("int", low=0, high="d"), none=True,
               alts=(arr((None,), _IDX, low=0, high="d"), Rule("slice")))
_SPEC = seq(fields=(_KERNEL_NAME, Rule("dict"), _COLUMNS))
_ROWS = arr((None,), _IDX, low=0, high="K")
_KERNEL_ROWS = {  # (kernel lists: "m" kernels on "K" training rows)
    "X_": arr(("K", "d"), alts=(Rule("sparse"),)),
    "params_": seq(("m",), _KERNEL_PARAMS),
    "diag_": arr(("m", "K")), "kdiag_": arr(("m", "K")),
}

#: Attributes of components (by class name) checked with their estimator's
#: symbols; only those listed (a component's other attributes are free).
COMPONENT_STATE = {
    "MultitaskModel": {
        "formulation": Rule("str"),
        "kernel_weights": arr(("m",)), "task_kernel_weights": arr(("t", "m")),
        "intercept": arr(("t",)),
        # ("blocks", W, betas) or ("full", coefficients)
        "coef": seq(fields=(Rule("str", choices=("blocks",)), arr(("t", "m")),
                            seq(items=arr((None, None)))),
                    alts=(seq(fields=(Rule("str", choices=("full",)),
                                      seq(items=arr((None, None),
                                                    alts=(seq(items=arr((None, None))),))))),)),
        "shared_kernel_weights": arr(("m",), none=True), "shared_coef": seq(("m",), arr((None,), none=True), none=True),
    },
    "TaskBuckets": {
        "n_tasks": num("int", low=1, binds="t"), "n_samples": num("int", low=1, binds="K"),
        "task_rows": seq(("t",), _ROWS),
        # (task ids, padded row indices, validity mask)
        "buckets": seq(items=seq(fields=(arr(("@b",), _IDX, low=0, high="t"),
                                         arr(("@b", "@r"), _IDX, low=0, high="K"),
                                         arr(("@b", "@r"), "b")))),
    },
    "TaskKernels": {
        **_KERNEL_ROWS,
        "precomputed": Rule("bool"), "normalize": Rule("bool"), "standardize": Rule("bool"),
        "specs_": seq(("m",), _SPEC), "grams_": arr(("m", "K", "K")),
        "mean_": arr(("d",), none=True), "std_": arr(("d",), none=True, finite="+inf"),
        "shift_": seq(("m",)), "scales_": arr(("m",), none=True),
        # (sparse rows' implicit centre; absent from files of dense-only releases)
        "center_": arr(("d",), none=True, optional=True),
        # (histogram kernels' uncentred columns; absent from files before the 36th pass)
        "hist_shift_": arr(("d",), none=True, optional=True),
    },
    "KernelList": {
        **_KERNEL_ROWS,
        "normalize": Rule("bool"), "precompute": Rule("bool"), "cache_size": num(low=0),
        "specs": seq(("m",), _SPEC), "center_": arr(("d",), none=True),
        # (histogram kernels' uncentred columns; absent from files before the 36th pass)
        "hist_shift_": arr(("d",), none=True, optional=True),
        "_sqn_": seq(("m",), arr(("K",), none=True)),
        "_u_": seq(("m",), arr(("K",), none=True)),
        "_shift_": seq(("m",), num(none=True, alts=(arr((None,)),))),
        "_isd_": arr(("m", "K")), "_unit_diag_": arr(("m",), "b"),
    },
    "RandomFourierFeatures": {"n_features_in_": num("int", low=1, binds="d"),
                              "center_": arr(("d",), none=True), "widths_": arr((None,))},
}


def _fgm_features(state):
    # (with a family the ids are the family's virtual features, unbounded by d)
    chosen, d = state.get("selected_features_"), state.get("n_features_in_")
    if state.get("family_") is None and isinstance(chosen, np.ndarray) and chosen.size \
            and isinstance(d, (int, np.integer)) and chosen.max() >= d:
        return (f"selected_features_ holds feature {int(chosen.max())}, past the "
                f"{int(d)} features (n_features_in_).")


def _lowrank_kernel(state):
    # (a file saved before _kernel: check_fitted_state puts the parameter here)
    kernel, centers = state.get("_kernel"), state.get("centers_")
    if isinstance(kernel, str) and kernel != "precomputed" and kernel not in _import(
            "kernlearn.kernels.KERNELS"):
        return f"_kernel = {kernel!r} is not a kernel's name."
    # (a Gram matrix's model keeps its centres' row numbers, a kernel's their rows)
    numbers = isinstance(centers, np.ndarray) and centers.ndim == 1
    if (kernel == "precomputed") != numbers:
        return (f"centers_ of a {kernel!r} kernel must be "
                + ("row numbers (1-D)." if kernel == "precomputed" else "rows (2-D)."))


def _rbf_shifts(specs, shifts):
    """A distance shift (rows far from zero) is kept for the RBF kernels only."""
    def check(state):
        spec, shift = state.get(specs), state.get(shifts)
        if isinstance(spec, (list, tuple)) and isinstance(shift, (list, tuple)):
            bad = [j for j, (sp_j, sh) in enumerate(zip(spec, shift))
                   if sh is not None and sp_j[0] != "rbf"]
            if bad:
                return f"{shifts}[{bad[0]}] is set for a {spec[bad[0]][0]!r} kernel (RBF only)."
    return check


def _task_kernels(state):
    pre = state.get("precomputed")
    if pre is not (state.get("kernels") == "precomputed"):
        return f"precomputed = {pre!r} disagrees with kernels = {state.get('kernels')!r}."
    need = ("grams_",) if pre else ("X_", "specs_", "params_")
    missing = [k for k in need if k not in state]
    if missing:
        return f"lacks {missing}."
    return _rbf_shifts("specs_", "shift_")(state)


def _target_map(state):
    # (a file saved before the targets were standardised lacks both: predict
    # then reads the outputs in the targets' units; one alone is an edit)
    if ("y_mean_" in state) != ("y_scale_" in state):
        return "y_mean_ and y_scale_ (the target map) must be saved both or neither."
    return _multitask_blocks(state)


def _multitask_blocks(state):
    # the within-task coefficients: one (tasks, rows) block per bucket of tasks
    coef, buckets = state["_model"].coef, state["_blocks"].buckets
    if coef[0] == "blocks" and [b.shape for b in coef[2]] != [b[1].shape for b in buckets]:
        return (f"_model.coef holds blocks of shapes {[b.shape for b in coef[2]]}, the "
                f"task buckets {[b[1].shape for b in buckets]}.")
    return _train_rows(state)


def _train_rows(state):
    # (the rows of positive weight, np.flatnonzero of the weights: with Gram
    # matrices predict takes these columns of the n_features_in_ the user fitted
    # on, one per fitted row; elsewhere they are the fit's, not predict's)
    rows, kernels = state.get("_train_rows"), state["kernels_"]
    if not (isinstance(rows, np.ndarray) and rows.size and kernels.precomputed):
        return None
    d, fitted = state.get("n_features_in_"), kernels.grams_.shape[1]
    if rows.max() >= d or np.any(np.diff(rows) <= 0) or rows.size != fitted:
        return (f"_train_rows must be {fitted} increasing columns of the {d} training "
                f"Gram columns (n_features_in_), one per fitted row.")


#: Relations between attributes the rules above cannot state (by class name):
#: each returns a message, or None when it holds.
RELATIONS = {
    "FGMClassifier": _fgm_features,
    "FGMRegressor": _fgm_features,
    "LowRankKernelClassifier": _lowrank_kernel,
    "LowRankKernelRegressor": _lowrank_kernel,
    "TaskKernels": _task_kernels,
    "KernelList": _rbf_shifts("specs", "_shift_"),
    **dict.fromkeys(["MultitaskMKLClassifier", "MultitaskMKLClassifierCV"], _multitask_blocks),
    **dict.fromkeys(["MultitaskMKLRegressor", "MultitaskMKLRegressorCV"], _target_map),
}


def _finite_enough(mode, value):
    """Whether the float array ``value`` is as finite as ``mode`` asks: every
    value finite (True), finite or +inf and never negative ("+inf": column
    scales, +inf for a column constant in training), anything (False)."""
    if mode is False or np.isfinite(value).all():
        return True
    return mode == "+inf" and not np.any(np.isnan(value) | (value < 0))


def _array_finiteness():
    """``{attribute name: mode}`` of the arrays (and containers of arrays) the
    declarations allow to be non-finite; a name has one mode everywhere."""
    modes = {}
    for spec in (*FITTED_STATE.values(), *COMPONENT_STATE.values()):
        for name, rule in spec.items():
            for r in (rule, *rule.alts):
                if r.kind in ("array", "dict", "list") and r.finite is not True:
                    if modes.setdefault(name, r.finite) != r.finite:
                        raise AssertionError(f"{name}: two finiteness rules")
    return modes


_NONFINITE = _array_finiteness()


def nonfinite_allowed(where, value):
    """Whether the float array ``value`` stored at ``where`` (``"state.x_scale_"``,
    ``"state.history_.loss"``, ``"state.kernels_.std_"``) may hold NaN or infinity.

    The one finiteness rule of a model file's arrays: :mod:`kernlearn.io` reads
    it for every array it saves and loads (parameters and metadata too, where no
    declaration applies: finite), the check above for the declared attributes.
    A fitted attribute declared ``finite=False`` (``state.history_``) may hold
    anything beneath it; an array named as one declared ``"+inf"``
    (``x_scale_``, ``std_``) may hold +inf only.
    """
    parts = re.split(r"[.\[]", where)
    # (only the model's own history_: a metadata or parameter entry, or an
    # array deeper down, named so is data like any other, finite)
    if parts[0] == "state" and len(parts) > 1 and _NONFINITE.get(parts[1]) is False:
        return True
    mode = _NONFINITE.get(parts[-1])
    return mode == "+inf" and _finite_enough(mode, value)


_TERM = re.compile(r"^(?:(\d+)\*)?(@?[A-Za-z_]\w*)(?:\+(\d+))?$")


class _Refused(Exception):
    pass


def _refuse(msg):
    raise _Refused(msg)


class _Check:
    """One model's check: the symbols bound so far and the failure callback."""

    def __init__(self, fail):
        self.fail = fail
        self.sizes = {}
        # (index bounds whose symbol is not bound yet: checked at the end)
        self.pending = []

    def below(self, where, top, sym):
        """An index ``top`` (the largest held) must stay below the size ``sym``."""
        if sym not in self.sizes:
            self.pending.append((where, top, sym))
        elif top >= self.sizes[sym]:
            self.fail(f"{where} holds index {top}, past its range (below {sym} = "
                      f"{self.sizes[sym]} from the other attributes).")

    def size(self, where, axis, want, got):
        """Match one dimension ``got`` against the declared ``want``."""
        if want is None:
            return
        if isinstance(want, int):
            if got != want:
                self.fail(f"{where}: axis {axis} has length {got}, expected {want}.")
            return
        k, sym, add = _TERM.match(want).groups()
        k, add = int(k or 1), int(add or 0)
        if sym not in self.sizes:
            # ``k*sym + add`` = got: bind sym when it divides evenly
            if (got - add) % k or got < add:
                self.fail(f"{where}: axis {axis} has length {got}, not of the form {want}.")
            self.sizes[sym] = (got - add) // k
            return
        expect = k * self.sizes[sym] + add
        if got != expect:
            self.fail(f"{where}: axis {axis} has length {got}, expected {expect} "
                      f"({want} with {sym} = {self.sizes[sym]} from the other attributes).")

    def matches(self, rule, value):
        """Whether ``value`` is of ``rule``'s kind (shape and range unchecked)."""
        kind = rule.kind
        if kind == "any":
            return True
        if kind == "array":
            return isinstance(value, np.ndarray) and value.dtype.kind in rule.dtypes
        if kind == "sparse":
            return sp.issparse(value)
        if kind == "int":
            return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        if kind == "real":
            return isinstance(value, _NUMBER) and not isinstance(value, (bool, np.bool_))
        if kind == "bool":
            return isinstance(value, (bool, np.bool_))
        if kind == "str":
            return isinstance(value, str)
        if kind == "dict":
            return isinstance(value, dict)
        if kind == "list":
            return isinstance(value, (list, tuple))
        if kind == "slice":
            return isinstance(value, slice)
        if kind == "function":
            return callable(value) and not isinstance(value, type)
        if kind == "object":
            return any(isinstance(value, _import(c)) for c in rule.classes)
        raise AssertionError(kind)

    def value(self, where, rule, value):
        if value is None:
            if not rule.none:
                self.fail(f"{where} is None; expected {_describe(rule)}.")
            return
        rules = (rule, *rule.alts)
        fits = [r for r in rules if self.matches(r, value)]
        if not fits:
            self.fail(f"{where} is {_describe_value(value)}; expected "
                      + " or ".join(_describe(r) for r in rules) + ".")
        first = None
        for chosen in fits:
            # each alternative tried on a copy of the sizes; the first that holds is kept
            trial = _Check(_refuse)
            trial.sizes = dict(self.sizes)
            try:
                trial.checked(where, chosen, value)
            except _Refused as exc:
                first = first or str(exc)
                continue
            self.sizes, self.pending = trial.sizes, self.pending + trial.pending
            return
        self.fail(first)

    def checked(self, where, chosen, value):
        """Shape, range and finiteness of ``value``, of ``chosen``'s kind."""
        if chosen.kind == "array":
            if chosen.shape is not None:
                if value.ndim != len(chosen.shape):
                    self.fail(f"{where} has {value.ndim} dimension(s), expected "
                              f"{len(chosen.shape)} (shape {_shape_text(chosen.shape)}).")
                for axis, (want, got) in enumerate(zip(chosen.shape, value.shape)):
                    self.size(where, axis, want, got)
            if value.dtype.kind == "f" and not _finite_enough(chosen.finite, value):
                self.fail(f"{where} holds NaN or infinity.")
            # (a column scale divides: the fit gives +inf, never 0, to a constant column)
            if chosen.finite == "+inf" and value.size and np.any(value == 0):
                self.fail(f"{where} holds a column scale of 0 (a scale is positive, +inf "
                          "for a column constant in training).")
            if chosen.low is not None and value.dtype.kind in "iuf" and value.size and (
                    np.nanmin(value) < chosen.low):
                self.fail(f"{where} holds values below {chosen.low}.")
            if chosen.high is not None and value.size:
                self.below(where, int(value.max()), chosen.high)
        elif chosen.kind in ("int", "real"):
            if chosen.finite and not np.isfinite(value):
                self.fail(f"{where} = {value!r} is not finite.")
            if chosen.low is not None and value < chosen.low:
                self.fail(f"{where} = {value!r} is below {chosen.low}.")
            if chosen.choices is not None and value not in chosen.choices:
                self.fail(f"{where} = {value!r} is not one of {list(chosen.choices)}.")
            if chosen.high is not None:
                self.below(where, int(value), chosen.high)
            if chosen.binds:
                self.size(where, 0, chosen.binds, int(value))
        elif chosen.kind == "str" and chosen.choices is not None:
            # (a str: the import path of a registry, e.g. the kernels' names)
            choices = chosen.choices
            names = [*_import(choices)] if isinstance(choices, str) else list(choices)
            if value not in names:
                self.fail(f"{where} = {value!r} is not one of {names}.")
        elif chosen.kind == "list":
            if chosen.shape is not None:
                self.size(where, 0, chosen.shape[0], len(value))
            if chosen.fields is not None and (len(value) < len(chosen.fields) or (
                    chosen.items is None and len(value) != len(chosen.fields))):
                self.fail(f"{where} has {len(value)} item(s), expected {len(chosen.fields)}.")
            for i, item in enumerate(value):
                rule = chosen.fields[i] if chosen.fields and i < len(chosen.fields) \
                    else chosen.items
                if rule is not None:
                    self.value(f"{where}[{i}]", rule, item)
                if chosen.items is not None:  # ("@" sizes: each item's own)
                    self.sizes = {k: v for k, v in self.sizes.items() if k[0] != "@"}
        elif chosen.kind == "dict" and chosen.items is not None:
            for key, item in value.items():
                self.value(f"{where}[{key!r}]", chosen.items, item)
        elif chosen.kind == "object":
            self.component(where, value)

    def attributes(self, where, spec, state, complete, defaults=(), name=None):
        """Check ``state`` (name -> value) against ``spec``; ``complete``: no
        attribute may be missing or unknown (but for the class's plain
        ``defaults``, which stand for a missing one and may be overridden)."""
        if complete:
            unknown = sorted(set(state) - set(spec) - set(defaults))
            if unknown:
                self.fail(f"{where} has unknown fitted attribute(s) {unknown}.")
            missing = sorted(k for k, r in spec.items()
                             if k not in state and not r.optional and k not in defaults)
            if missing:
                self.fail(f"{where} lacks the fitted attribute(s) {missing}.")
        # (scalars that bind a symbol first: the arrays are then checked against them)
        order = sorted((k for k in spec if k in state), key=lambda k: spec[k].binds is None)
        for key in order:
            self.value(f"{where}.{key}", spec[key], state[key])
        problem = RELATIONS[name](state) if name in RELATIONS else None
        if problem:
            self.fail(f"{where}: {problem}" if where != "state" else f"state.{problem}")

    def component(self, where, value):
        spec = COMPONENT_STATE.get(type(value).__name__)
        if spec is not None:
            self.attributes(where, spec, vars(value), complete=False,
                            name=type(value).__name__)


def _shape_text(shape):
    return "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"


def _describe(rule):
    if rule.kind == "array":
        shape = "" if rule.shape is None else f" of shape {_shape_text(rule.shape)}"
        return f"array of dtype kind {'/'.join(rule.dtypes)}{shape}"
    if rule.kind == "object":
        return " or ".join(c.rsplit(".", 1)[1] for c in rule.classes)
    return {"int": "integer", "real": "number", "sparse": "sparse matrix"}.get(
        rule.kind, rule.kind)


def _describe_value(value):
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    return f"of type {type(value).__name__}"


def _plain_defaults(cls, names):
    """Those of ``names`` that are plain class-level values of ``cls``
    (numbers, strings: no method, property or other descriptor)."""
    import inspect

    out = []
    for name in names:
        member = inspect.getattr_static(cls, name, None)
        if member is not None and not name.startswith("__") and not callable(member) \
                and not hasattr(member, "__get__"):
            out.append(name)
    return out


@functools.lru_cache(maxsize=None)
def _import(path):
    import importlib

    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def check_fitted_state(estimator, state, fail, version=None):
    """Check the fitted ``state`` of a loaded ``estimator`` against its class's
    declaration in :data:`FITTED_STATE`.

    Parameters
    ----------
    estimator : estimator
        The rebuilt estimator (its class selects the declaration).
    state : dict
        Its fitted attributes, as set from the file (after renames).
    fail : callable
        Called with a message naming the attribute and what is wrong; raises.
    version : str, optional
        The kernlearn version that wrote the file: one of :data:`OLDER_FILES`
        reads that version's files by its entry.
    """
    name = type(estimator).__name__
    spec = FITTED_STATE.get(name)
    if spec is None:
        return
    older = OLDER_FILES.get(version, {}).get(name)
    if isinstance(older, str):
        fail(f"state: {name} files of kernlearn {version} are not read: {older}.")
    if older:
        spec = {k: replace(r, optional=True) if k in older else r for k, r in spec.items()}
        _older_input_map(name, estimator, state, fail)
    check = _Check(fail)
    state = {**{k: getattr(estimator, p) for k, p in READ_FROM_PARAMETER.get(
        type(estimator).__name__, {}).items() if k not in state}, **state}
    check.attributes("state", spec, state, complete=True,
                     defaults=_plain_defaults(type(estimator), {*state, *spec}), name=name)
    for where, top, sym in check.pending:  # (a symbol never bound: no bound known)
        if sym in check.sizes:
            check.below(where, top, sym)
    classes = state.get("classes_")
    if isinstance(classes, np.ndarray) and len(np.unique(classes)) != len(classes):
        fail("state.classes_ holds a class twice.")
    # outputs of a classifier: one column for two classes, one per class otherwise
    if "o" in check.sizes and "c" in check.sizes:
        c, o = check.sizes["c"], check.sizes["o"]
        # (two classes: one output, or two written as -f/2, f/2; classes whose rows
        # all weigh zero may have no output of their own)
        absent = state.get("_absent_classes")
        kept = c - (len(absent) if isinstance(absent, np.ndarray) else 0)
        allowed = {1, 2} if c == 2 else {c}
        if kept < c:
            allowed |= {1, 2, kept} if kept <= 2 else {kept}
        if c < 2 or o not in allowed:
            fail(f"state: {c} classes need {1 if c == 2 else c} output(s), the "
                 f"coefficients have {o}.")
    if "t" in check.sizes and "y" in check.sizes and "tasks_" in spec and "_model" in spec:
        # (files of 2026-11-27 hold one pooled entry, which predict broadcasts)
        if check.sizes["y"] not in (1, check.sizes["t"]):
            fail(f"state.y_mean_ has {check.sizes['y']} entries for {check.sizes['t']} tasks.")
