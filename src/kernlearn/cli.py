"""The ``kernlearn`` command: fit, predict, evaluate, select, report, datasets, demo.

Every estimator is reachable by a short name (:data:`ESTIMATORS`); its
parameters are set with ``--param key=value`` (values are JSON, or plain
strings) or a TOML file, and checked against ``get_params()`` before any data
is read.  Every failure is one line on stderr and one of the exit codes of
:data:`EXIT_CODES`; Python tracebacks are shown only with
``KERNLEARN_DEBUG=1``.
"""

import argparse
import inspect
import json
import os
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ._cli_common import (
    CheckedStdout,
    CLIError,
    Terminated,
    _as_numbers,
    _check_targets,
    _check_labels,
    _check_output,
    _check_model_data,
    _check_values,
    _emit,
    _fit_error,
    _load_model,
    _name_columns,
    _one_line,
    _predict,
    _prediction_text,
    class_text,
    _stored_column,
    _table_size,
    _task_kw,
    _write_metrics,
    closed_stderr_silenced,
    sigterm_raises,
    silence_stdout,
)
from .demo import quick_help
from .estimators._renamed import refuse_both_given
from .summary import evaluate_metrics, feature_profile, selection_table

__all__ = ["ESTIMATORS", "EXIT_CODES", "build_parser", "main"]

#: CLI name -> (class name in ``kernlearn``, task, one-line description).
ESTIMATORS = {
    "fgm": ("FGMClassifier", "classification",
            "FGM: sparse linear classifier selecting features by cutting planes"),
    "fgm-regressor": ("FGMRegressor", "regression", "FGM with the square loss"),
    "infinite-classifier": ("InfiniteFeatureClassifier", "classification",
                            "GrFL: learns random Fourier / Gabor features"),
    "infinite-regressor": ("InfiniteFeatureRegressor", "regression", "GrFL regression"),
    "pnorm-mkl": ("PNormMKLClassifier", "classification",
                  "OBSCURE: p-norm multiple kernel learning"),
    "lowrank-regressor": ("LowRankKernelRegressor", "regression",
                          "SLKL: kernel ridge with learned rank-1 Nystrom kernels"),
    "lowrank-classifier": ("LowRankKernelClassifier", "classification",
                           "SLKL on +-1 codes"),
    # Multitask MKL (paper 004) takes each sample's task as task_index, like GrFL:
    # `--task-column` (CSV) or the school data set provide it.
    "mtmkl-classifier": ("MultitaskMKLClassifier", "classification",
                         "MK-MTFL: multitask multiple kernel learning (--task-column)"),
    "mtmkl-regressor": (
        "MultitaskMKLRegressor", "regression",
        "MK-MTFL: multitask multiple kernel regression (--task-column)"),
}

#: Exit status -> meaning (also printed by ``kernlearn --help``).
EXIT_CODES = {
    0: "success",
    1: "internal error (a bug: please report it)",
    2: "usage error: bad command line, estimator, parameter or config file",
    3: "data error: file missing, unreadable, malformed or unusable",
    4: "model file error: missing, corrupt, tampered or unsupported",
    5: "data does not match the model (feature count, index base, values, labels)",
    6: "the estimator could not fit this data",
    7: "an output file cannot be written",
    129: "hung up (SIGHUP: the terminal was closed); no partial output is left",
    130: "interrupted",
    141: "the output pipe was closed (e.g. by `head`); nothing more is written",
    143: "terminated (SIGTERM, e.g. by `kill` or `timeout`); no partial output is left",
}

# Parameters the CLI owns (set from --quiet / --progress).
_CLI_PARAMS = {"verbose"}
# Set when neither -p nor the config gives them: the classes' random_state=None
# drew a new seed at every fit, so two `kernlearn fit` gave two models (and
# the model file could not say which seed); `-p random_state=null` still does.
_CLI_DEFAULTS = {"random_state": 0}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit status 2)."""

    def error(self, message):
        hint = ""
        # flags of early versions (--B 3, --C 1, --loss ...) are parameters now
        old = re.search(
            r"unrecognized arguments: --?([A-Za-z_][\w-]*)(?:[= ]([^-\s]\S*))?", message
        )
        if old and old.group(1) in ("m", "model") and getattr(
                self, "command", None) in ("select", "report"):
            # -m is the model's flag in fit/predict/evaluate; here the model is
            # the first argument (the hint was "-p m=MODEL": a parameter)
            hint = (f"; the model is the first argument here: "
                    f"`{self.prog} {self.command} MODEL ...`")
        elif old and old.group(1) not in ("help", "version"):
            key = old.group(1).replace("-", "_")
            hint = (
                f"; estimator parameters are set with -p key=value "
                f"(e.g. -p {key}={old.group(2) or 'VALUE'}), see "
                "`kernlearn estimators --params`"
            )
        raise CLIError(f"{message}{hint} (see `{self.prog} --help`)", 2)


# ------------------------------------------------------------------ estimators
def _estimator_class(name):
    import importlib

    import kernlearn

    if name not in ESTIMATORS:
        raise CLIError(
            f"unknown estimator {name!r}; choose one of {', '.join(ESTIMATORS)}", 2
        )
    cls_name = ESTIMATORS[name][0]
    try:
        module = importlib.import_module(kernlearn._ESTIMATORS[cls_name])
        return getattr(module, cls_name)
    except (ImportError, AttributeError, KeyError) as exc:
        raise CLIError(f"estimator {name} is not available in this kernlearn: {exc}", 2)


def _parse_value(text):
    """JSON value, else a number as Python spells it, else Python spellings of
    True/False/None, else the raw string."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    for number in (int, float):  # (-p C=.5, 1. or +1 were the strings '.5'...: refused)
        try:
            return number(text)
        except ValueError:
            pass
    return {"True": True, "False": False, "None": None}.get(text, text)


def _resolve_object_params(params):
    """``family`` given by name or ``{"name": ..., **params}`` -> family object."""
    from .families import FAMILIES

    fam = params.get("family")
    if isinstance(fam, str):
        params["family"] = FAMILIES.resolve(fam)
    elif isinstance(fam, dict):
        spec = dict(fam)
        name = spec.pop("name", None)
        if not isinstance(name, str):
            raise ValueError(
                'family given as a JSON object needs a "name" '
                f"(one of {', '.join(FAMILIES.names())})."
            )
        params["family"] = FAMILIES.resolve(name, **spec)
    return params


def _read_config(path):
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            cfg = tomllib.load(fh)
    except FileNotFoundError:
        raise CLIError(f"config file not found: {path}", 2) from None
    except IsADirectoryError:
        raise CLIError(f"config file {path} is a directory", 2) from None
    except (OSError, ValueError) as exc:
        raise CLIError(f"cannot read config file {path}: {exc}", 2) from None
    unknown = set(cfg) - {"estimator", "params"}
    if unknown:
        raise CLIError(
            f"config file {path}: unknown key(s) {sorted(unknown)}; "
            "allowed: estimator, [params]",
            2,
        )
    if "params" in cfg and not isinstance(cfg["params"], dict):
        raise CLIError(f"config file {path}: 'params' must be a table", 2)
    if "estimator" in cfg and not isinstance(cfg["estimator"], str):
        # (a list or table was looked up as a name: "unhashable type", exit 1)
        raise CLIError(f"config file {path}: 'estimator' must be a name in quotes, "
                       f"one of {', '.join(ESTIMATORS)}", 2)
    return cfg


def build_estimator(name, param_items=(), config=None, verbose=0):
    """Instantiate estimator ``name`` with validated parameters.

    Parameters
    ----------
    name : str or None
        A key of :data:`ESTIMATORS` (``None``: take it from the config).
    param_items : list of str
        ``key=value`` strings (override the config).  A ``random_state``
        given by neither is 0 (:data:`_CLI_DEFAULTS`), so that a fit repeats.
    config : str, optional
        TOML file with ``estimator = "..."`` and a ``[params]`` table.
    verbose : int, default=0
        Progress level passed to the estimator.

    Returns
    -------
    name : str
    estimator : estimator
    """
    params = {}
    if config is not None:
        cfg = _read_config(config)
        name = name or cfg.get("estimator")
        params.update(cfg.get("params", {}))
    if name is None:
        raise CLIError("no estimator given: use --estimator NAME (one of "
                       f"{', '.join(ESTIMATORS)})", 2)
    cls = _estimator_class(name)
    for item in param_items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CLIError(f"--param {item!r} must look like key=value", 2)
        params[key.strip()] = _parse_value(value)
    valid = cls().get_params(deep=False)
    unknown = sorted(set(params) - set(valid))
    if unknown:  # renamed parameters (default "deprecated") still work but are not listed
        shown = [k for k, v in valid.items() if k not in _CLI_PARAMS and str(v) != "deprecated"]
        raise CLIError(f"unknown parameter {unknown[0]!r} for {name}; valid: "
                       f"{', '.join(shown)}", 2)
    if "verbose" in valid and "verbose" not in params:
        params["verbose"] = verbose
    params.update({k: v for k, v in _CLI_DEFAULTS.items() if k in valid and k not in params})
    _check_kernel_specs(name, params.get("kernels"))
    try:
        # (in Python, a new name at its default is unseen; -p overrides the config)
        refuse_both_given(cls, params, [i.partition("=")[0].strip() for i in param_items])
        est = cls(**_resolve_object_params(params))
        if hasattr(est, "_validate_params"):
            est._validate_params()
        _check_kernel_settings(est)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"invalid parameter for {name}: {_one_line(exc)}", 2) from None
    return name, est


def _check_kernel_specs(name, kernels):
    """Kernel lists are checked here, before any data is read (exit 2)."""
    if kernels is None:
        return
    if isinstance(kernels, str) and kernels == "precomputed":
        # (refused only by the fit, after reading the data: exit 6)
        raise CLIError(f"invalid parameter for {name}: kernels='precomputed' takes a "
                       "list of Gram matrices, one per kernel, which a data file does "
                       "not hold (use the Python API)", 2)
    from .kernels import _check_kernel_params, parse_specs

    try:
        for i, (kernel, params, _) in enumerate(parse_specs(kernels)):
            _check_kernel_params(kernel, params, i)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"invalid parameter for {name}: {_one_line(exc)}", 2) from None


def _check_kernel_settings(est):
    """The low-rank estimators' ``gamma``, ``degree``, ``coef0`` and ``kernel_params``
    are checked here, before any data is read (exit 2), by the fit's own rules
    (:func:`kernlearn.families.nystrom.check_kernel_params`)."""
    kernel = getattr(est, "kernel", None)
    if hasattr(est, "kernel_params") and isinstance(kernel, str):
        from .families.nystrom import check_kernel_params

        check_kernel_params(kernel, est.gamma, est.degree, est.coef0, est.kernel_params)


# ------------------------------------------------------------------------ data
def _load(
    source, label=None, n_features=None, zero_based="auto", fmt=None, task_column=None,
    header=None, sep=None, feature_names=None, labels_needed=True, max_table_size=None,
):
    from .datafiles import ColumnNameError, FeatureCountError, IndexBaseError
    from .datasets import DatasetNotFoundError, load_data_file

    try:
        X, y, info = load_data_file(
            source, label=label, n_features=n_features, zero_based=zero_based, fmt=fmt,
            task_column=task_column, header=header, sep=sep,
            feature_names=feature_names, labels_needed=labels_needed,
            max_table_size=max_table_size,
        )
    except (FeatureCountError, IndexBaseError, ColumnNameError) as exc:
        raise CLIError(_one_line(exc), 5) from None
    except DatasetNotFoundError as exc:
        raise CLIError(_one_line(exc), 3) from None
    except (ValueError, OSError, MemoryError) as exc:
        raise CLIError(_one_line(exc), 3) from None
    return X, y, info


# ------------------------------------------------------------------ model I/O
def _model_data(args, meta, est, labels_needed=True):
    """Load ``args.data`` in the model's feature space and check it matches.

    Returns ``X, y, tasks`` (``y`` and ``tasks`` may be ``None``; ``y`` is
    ``None`` when some labels are missing and ``labels_needed`` is false).
    """
    n_features = meta.get("n_features", getattr(est, "n_features_in_", None))
    zb = meta.get("zero_based")
    task_column = getattr(args, "task_column", None) or _stored_column(meta, "task_column")
    if task_column is not None and "task_index" not in inspect.signature(
            est.predict).parameters:
        # (the predict call failed: an internal error, exit 1)
        raise CLIError(f"{type(est).__name__} does not take tasks (task_index); drop "
                       "--task-column", 2)
    as_csv = _reads_as_csv(args.data, args)
    header = getattr(args, "header", None)
    if header is None and meta.get("csv_header") is False:
        header = False  # trained on a file without header: columns by position
    label = getattr(args, "label", None)
    if label is None and as_csv and meta.get("format") == "csv":
        label = _stored_column(meta, "label")
    X, y, info = _load(
        args.data,
        label=label,
        n_features=n_features,
        zero_based="auto" if zb is None else zb,
        fmt=getattr(args, "format", None),
        task_column=task_column if as_csv else None,
        header=header,
        sep=getattr(args, "sep", None),
        feature_names=meta.get("feature_names") if header is not False else None,
        labels_needed=labels_needed, max_table_size=getattr(args, "max_table_size", None),
    )
    tasks_ = getattr(est, "tasks_", None)  # (a model saved from Python has no "multitask")
    if (meta.get("multitask") or tasks_ is not None and len(tasks_) > 1) and (
            info["tasks"] is None):
        raise CLIError(
            f"the model was fitted on tasks; {args.data} has no task column "
            "(--task-column)",
            5,
        )
    # LIBSVM columns are sparse indices, table columns are positions: a model
    # trained on one kind of file does not read the other (named data sets are
    # either, so they are not compared).
    fmt_train, fmt = meta.get("format"), info["format"]
    if (
        fmt_train not in (None, "dataset")
        and fmt != "dataset"
        and (fmt_train == "libsvm") != (fmt == "libsvm")
    ):
        raise CLIError(
            f"{args.data} is a {fmt} file but the model was trained on a "
            f"{fmt_train} file",
            5,
        )
    _check_model_data(X, info, meta, args)
    tasks, fitted = info["tasks"], getattr(est, "tasks_", None)  # (None: fitted without)
    if tasks is not None and fitted is not None and np.asarray(fitted).dtype.kind in "fiu":
        tasks = _as_numbers(tasks)  # ids "01", "02" of a model fitted on 1, 2
    return X, y, tasks


def _reads_as_csv(source, args):
    """Whether ``source`` will be read as CSV (the only table with a task column)."""
    from .datafiles import _base_suffix

    fmt = getattr(args, "format", None)
    return fmt == "csv" or (fmt is None and _base_suffix(source) == ".csv")


_INT_TEXT = re.compile(r"[+-]?\d+")


def _match_class_weight(est, y, source):
    """``class_weight`` keys (always text in JSON) in the labels' type."""
    cw = getattr(est, "class_weight", None)
    if not isinstance(cw, dict) or y is None:
        return
    y = np.asarray(y)
    classes = np.unique(y)
    out, named = {}, {}
    for key, weight in cw.items():
        if y.dtype.kind == "b":
            # True/False labels (a CSV's True/TRUE/true): the key "True" was
            # read as a number and matched no class, "not a label (labels:
            # False, True)"
            value = {"true": True, "1": True, "false": False, "0": False}.get(
                str(key).strip().lower())
            match = [c for c in classes if value is not None and c == value]
        elif y.dtype.kind in "iuf":
            try:
                value = float(key)
            except (TypeError, ValueError):
                value = None
            match = [c for c in classes if value is not None and c == value]
        else:
            match = [c for c in classes if str(c) == str(key)]
        if not match:
            raise CLIError(
                f"class_weight names class {key!r}, which is not a label of "
                f"{source} (labels: {', '.join(map(str, classes[:10]))})",
                2,
            )
        if not (isinstance(weight, (int, float)) and not isinstance(weight, bool)
                and np.isfinite(weight) and weight >= 0):
            raise CLIError(f"class_weight for class {key!r} must be a non-negative "
                           f"number, got {weight!r}", 2)
        c = match[0].item() if hasattr(match[0], "item") else match[0]
        if isinstance(c, str) and _INT_TEXT.fullmatch(c):
            # scikit-learn looks a class "007" up as the key 7 (int(c))
            c = int(c)
        if c in named:  # ("1" and "1.0": the last one's weight was kept, silently)
            raise CLIError(f"class_weight names class {c!r} twice ({named[c]!r} and "
                           f"{key!r}); give each class one weight", 2)
        named[c], out[c] = key, weight
    est.set_params(class_weight=out)


def _warn_row_ids(X, names):
    """Warn of feature columns holding the row numbers (1, 2, 3... or 0, 1...).

    Tables ship with such a column (ISLP's Credit ``ID``, statsmodels'
    ``OBS``): it was fitted on as a feature without a word, though it only
    numbers the rows.  It stays a feature (it is named, so it may be meant).
    """
    n = X.shape[0]
    if n < 3:
        return
    steps = np.arange(n, dtype=np.float64)
    ids = [j for j in range(X.shape[1])
           if X[0, j] in (0.0, 1.0) and np.array_equal(X[:, j], steps + X[0, j])]
    for j in ids[:3]:
        name = names[j] if names else f"column {j}"
        print(f"kernlearn: warning: feature {name!r} holds the row numbers "
              f"{X[0, j]:.0f}, {X[1, j]:.0f}, ..., {X[-1, j]:.0f} (a row id?); it is "
              "fitted on as a feature: drop it if it only numbers the rows",
              file=sys.stderr)


# -------------------------------------------------------------------- commands
def _print_warnings(caught):
    """One line per distinct warning (paths, folds and classes repeat theirs)."""
    counts = {}
    for w in caught:
        if not issubclass(w.category, DeprecationWarning):
            msg = _one_line(w.message)
            counts[msg] = counts.get(msg, 0) + 1
    for msg, k in counts.items():
        print(f"kernlearn: warning: {msg}" + (f" ({k} times)" if k > 1 else ""),
              file=sys.stderr)


def _progress_level(args):
    return 0 if args.quiet else 1


def _cmd_fit(args):
    """Fit an estimator on a data file and save it."""
    from .io import save_model

    name, est = build_estimator(
        args.estimator, args.param, args.config, verbose=_progress_level(args)
    )
    _check_output(args.model, "model", [("data", args.data), ("config", args.config)])
    if args.out_of_core:  # an SvmlightChunks: one chunk of the file at a time
        from .cli_stream import load_chunks

        X, y, info = load_chunks(args, name)
    else:
        X, y, info = _load(
            args.data, label=args.label, fmt=args.format, task_column=args.task_column,
            zero_based={"auto": "auto", "yes": True, "no": False}[args.zero_based],
            header=args.header, sep=args.sep, max_table_size=args.max_table_size,
        )
    tasks = info["tasks"]
    if tasks is not None and "task_index" not in inspect.signature(est.fit).parameters:
        raise CLIError(f"{name} does not learn from tasks (no task_index)", 2)
    if y is None:
        raise CLIError(f"{args.data} has no labels to fit on", 3)
    if not args.out_of_core:  # (chunks are checked as they are read)
        _check_values(X, args.data)
    if info["format"] == "csv":
        _warn_row_ids(X, info["feature_names"])
    if ESTIMATORS[name][1] == "regression":
        y = _as_numbers(y)
    _check_targets(y, args.data)
    if ESTIMATORS[name][1] == "regression" and np.asarray(y).dtype.kind not in "fiub":
        raise CLIError(f"{name} needs numeric targets; {args.data} has text labels", 3)
    if (
        ESTIMATORS[name][1] == "classification"
        and np.asarray(y).dtype.kind == "f"
        # (fractional targets, e.g. Auto's mpg: they were "cannot fit ...:
        # Unknown label type: continuous", exit 6, naming no remedy)
        and (np.unique(y).size > max(50, 0.5 * len(y)) or np.any(y != np.round(y)))
    ):
        raise CLIError(
            f"{args.data} has {np.unique(y).size} distinct continuous "
            f"targets; use a regressor (e.g. fgm-regressor) instead of {name}",
            3,
        )
    _match_class_weight(est, y, args.data)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(X, y, **_task_kw(tasks))
        except (ValueError, TypeError, np.linalg.LinAlgError) as exc:
            raise CLIError(f"cannot fit {name} on {args.data}: {_fit_error(exc, est, X)}",
                           6) from None
    elapsed = time.perf_counter() - t0
    _print_warnings(caught)
    meta = {
        "cli_estimator": name,
        "task": ESTIMATORS[name][1],
        # the file name only: a shared model must not reveal the user's folders
        "source": Path(str(args.data)).name,
        "format": info["format"],
        "zero_based": info["zero_based"],
        "n_features": int(X.shape[1]),
        "n_samples": int(X.shape[0]),
        "feature_names": info["feature_names"],
        "label": args.label,
        "label_name": info.get("label_name"),
        "csv_header": info.get("header"),
        "task_column": args.task_column,
        "task_column_name": info.get("task_column_name"),
        "multitask": tasks is not None,
        **(info.get("profile") or feature_profile(X)),
        "fit_seconds": elapsed,
    }
    if texts := class_text(est, info.get("class_spellings")):  # (labels "1.0", "TRUE")
        meta["class_text"] = texts
    score_key = "accuracy" if ESTIMATORS[name][1] == "classification" else "r2"
    meta["train_score"] = evaluate_metrics(est, X, y, ESTIMATORS[name][1], tasks)[
        score_key
    ]
    _name_columns(est, info)
    try:
        save_model(est, args.model, metadata=meta)
    except (TypeError, ValueError) as exc:
        raise CLIError(f"cannot save the fitted {name}: {_one_line(exc)}", 6) from None
    except OSError as exc:
        raise CLIError(
            f"cannot write model {args.model}: {exc.strerror or exc}", 7
        ) from None
    score = "accuracy" if ESTIMATORS[name][1] == "classification" else "R^2"
    print(
        f"fitted {name} ({type(est).__name__}) on {X.shape[0]} x {X.shape[1]} in "
        f"{elapsed:.2f}s; {_selection_summary(est)}training {score} "
        f"{meta['train_score']:.4f}; model saved to {args.model}"
    )
    return 0


def _selection_summary(est):
    for attr, noun, verb in (
        ("selected_features_", "feature", "selected"),
        ("features_", "feature", "learned"),
        ("center_indices_", "centre", "kept"),
    ):
        if hasattr(est, attr):
            val = getattr(est, attr)
            n = val if np.isscalar(val) else len(val)
            return f"{n} {noun}{'s' if n != 1 else ''} {verb}; "
    if hasattr(est, "kernel_weights_"):
        n = int(np.count_nonzero(est.kernel_weights_))
        return f"{n} kernel{'s' if n != 1 else ''} weighted; "
    return ""


def _cmd_predict(args):
    """Predict with a saved model."""
    _check_output(args.out, inputs=[("data", args.data), ("model", args.model)])
    est, meta = _load_model(args.model)
    if args.out_of_core:  # predictions written as blocks of the file arrive
        from .cli_stream import stream_predict

        return stream_predict(args, est, meta)
    X, y, tasks = _model_data(args, meta, est, labels_needed=False)
    header, text = _prediction_text(est, X, tasks, args, texts=meta.get("class_text"))
    summary = f"wrote {X.shape[0]} prediction{'s' * (X.shape[0] != 1)} to {args.out}"
    return _emit(args.out, header + text, summary)


def _cmd_evaluate(args):
    """Metrics of a saved model on a labelled file."""
    _check_output(args.out, inputs=[("data", args.data), ("model", args.model)])
    est, meta = _load_model(args.model)
    if args.out_of_core:
        from .cli_stream import stream_evaluate

        return stream_evaluate(args, est, meta)
    X, y, tasks = _model_data(args, meta, est)
    if y is None:
        raise CLIError(f"{args.data} has no labels to evaluate against", 3)
    task, y = _test_targets(est, meta, y, args.data)
    res = evaluate_metrics(
        est, X, y, task, tasks, pred=_predict(est, X, args.data, tasks)
    )
    return _write_metrics(args, res)


def _test_targets(est, meta, y, source):
    """``(task, y)``: the model's task and the labels of a test file in its
    terms; labels it cannot score are a mismatch with the model (exit 5)."""
    task = meta.get("task") or (
        "classification" if hasattr(est, "classes_") else "regression"
    )
    if task == "regression":
        y = _as_numbers(y)
        if y.dtype.kind not in "fiub":
            raise CLIError(f"{source} has text labels; the model is a regressor", 5)
    _check_targets(y, source)
    return task, _check_labels(est, y, source)


def _cmd_select(args):
    """Print the selected features / learned parameters / kernel weights."""
    _check_output(args.out, inputs=[("model", args.model)])
    est, meta = _load_model(args.model)
    try:
        cols, rows = selection_table(est, meta)
    except ValueError as exc:
        raise CLIError(str(exc), 2) from None
    if args.format == "json":
        text = json.dumps([dict(zip(cols, r)) for r in rows], indent=1) + "\n"
    else:
        import csv
        import io

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(cols)
        writer.writerows(rows)
        text = buf.getvalue()
    return _emit(args.out, text, f"wrote {len(rows)} rows to {args.out}")


def _cmd_report(args):
    """Write a self-contained HTML report of a model."""
    # (an empty --out wrote MODEL.html without a word)
    out = str(Path(args.model).with_suffix(".html")) if args.out is None else args.out
    to_stdout = out == "-"  # (it wrote a file named "-")
    if not to_stdout:
        _check_output(out, "report", [("model", args.model), ("data", args.data)])
    est, meta = _load_model(args.model)
    data = None
    if args.data:
        X, y, tasks = _model_data(args, meta, est)
        if y is None:
            raise CLIError(
                f"{args.data} has no labels; the report needs a labelled test file", 3
            )
        # (text labels for a regressor were an internal error here, exit 1)
        data = (X, _test_targets(est, meta, y, args.data)[1], str(args.data), tasks)
    try:
        from .report import build_report, write_report
    except ImportError as exc:
        raise CLIError(
            f'the report needs matplotlib: pip install "kernlearn[plot]" ({exc})', 3
        ) from None
    if to_stdout:
        sys.stdout.write(build_report(est, meta, data))
        return 0
    try:
        write_report(est, meta, out, data=data)  # written atomically
    except OSError as exc:
        raise CLIError(f"cannot write report {out}: {exc.strerror or exc}", 7) from None
    print(f"report written to {out}")
    return 0


def _cmd_datasets(args):
    """List the real data sets found in the data folder."""
    from .datasets import _LOADERS, _TABULAR_SETS, available_datasets, data_home

    print(f"data folder: {data_home()} (set KERNLEARN_DATA to change)")
    names = available_datasets()
    if not names:
        print("available: none")
    for name in names:
        use = {
            "split": f"`{name}` (train) and `{name}:test`",
            "single": f"`{name}`",
            "views": f"`{name}` (views side by side)",
            "tasks": f"`{name}` (task ids carried for multitask estimators)",
        }.get(_TABULAR_SETS.get(name), "Python API only")
        print(f"  {name:12s} {_LOADERS[name][1]}; on the command line: {use}")
    return 0


def _cmd_estimators(args):
    """List the estimators and their parameters."""
    for name, (cls_name, task, desc) in ESTIMATORS.items():
        try:
            cls = _estimator_class(name)
        except CLIError:
            print(f"{name:20s} (not available in this build)")
            continue
        print(f"{name:20s} {cls_name} ({task}): {desc}")
        if args.params:
            for k, v in cls().get_params(deep=False).items():
                if k not in _CLI_PARAMS and str(v) != "deprecated":  # renamed: hidden
                    print(f"    {k} = {_CLI_DEFAULTS.get(k, v)!r}")
    return 0


def _cmd_demo(args):
    """FGM on the paper's synthetic data and on scikit-learn's breast cancer data."""
    from .demo import run_demo

    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CLIError(
            f"cannot create folder {args.out}: {exc.strerror or exc}", 7
        ) from None
    try:
        return run_demo(args.out, quick=args.quick, verbose=_progress_level(args))
    except OSError as exc:  # the plots are written atomically: none is left half-done
        msg = f"cannot write the demo's plots in {args.out}: {exc.strerror or exc}"
        raise CLIError(msg, 7) from None


def _separator(text):
    """``--sep``: one character; ``tab`` and a typed ``\\t`` mean the tab."""
    sep = {"tab": "\t", "\\t": "\t"}.get(text, text)
    if len(sep) != 1:
        raise argparse.ArgumentTypeError(f"--sep must be one character (or 'tab'), got {text!r}")
    return sep


def build_parser():
    """The argument parser of the ``kernlearn`` command.

    Returns
    -------
    parser : argparse.ArgumentParser
    """
    from . import __version__

    codes = "\n".join(f"  {k:3d}  {v}" for k, v in EXIT_CODES.items())
    parser = _Parser(
        prog="kernlearn",
        description="Learn which features and kernels a predictor should use.",
        epilog=f"exit codes:\n{codes}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"kernlearn {__version__}"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    data_help = (
        "LIBSVM file (plain/.bz2/.gz/.xz), CSV, .npy, .npz, or a data set "
        "name from `kernlearn datasets` (NAME or NAME:test)"
    )

    def table_args(p, task_note):
        """How to read a data file: label and task columns, format, range check."""
        p.add_argument(
            "--label",
            help="label column (CSV/.npy): name or number, name:NAME or index:N; default: the "
            "last (give it when --task-column is the last)",
        )
        p.add_argument("--task-column", help=f"CSV column of row tasks ({task_note})")
        p.add_argument(
            "--format",
            choices=["libsvm", "csv", "npy", "npz"],
            help="data format (default: from the file name)",
        )
        head = p.add_mutually_exclusive_group()
        head.add_argument(
            "--header",
            dest="header",
            action="store_const",
            const=True,
            help="the CSV file's first line names its columns, even if numeric",
        )
        head.add_argument(
            "--no-header",
            dest="header",
            action="store_const",
            const=False,
            help="the CSV file has no header line (columns by position)",
        )
        p.add_argument(
            "--sep",
            type=_separator,
            help="CSV separator, one character or 'tab' (default: sniffed among , ; tab |)",
        )
        p.add_argument("--max-table-size", type=_table_size, metavar="SIZE",
                       help="memory reading a compressed text file may take (default: half "
                       "the available memory; --out-of-core: half the free disk space)")
        if p.prog.split()[-1] != "fit":
            p.add_argument(
                "--allow-out-of-range",
                action="store_true",
                help="predict even if values lie far outside the training range",
            )

    def chunk_args(p, what):
        p.add_argument("--out-of-core", action="store_true", help=what)
        p.add_argument("--chunk-memory", default=None, metavar="SIZE",
                       help="memory for data with --out-of-core (default 256MB)")

    fit = sub.add_parser("fit", help="fit an estimator and save the model")
    fit.add_argument("data", help=data_help)
    fit.add_argument("--estimator", "-e", help=f"one of: {', '.join(ESTIMATORS)}")
    fit.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="estimator parameter (JSON value or string); repeatable",
    )
    fit.add_argument("--config", help='TOML file: estimator = "..." and [params]')
    fit.add_argument("--model", "-m", required=True, help="where to save the model")
    table_args(fit, "for estimators taking task_index")
    fit.add_argument(
        "--zero-based",
        choices=["auto", "yes", "no"],
        default="auto",
        help="LIBSVM index base (auto: 0-based iff index 0 occurs)",
    )
    fit.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    chunk_args(fit, "train fgm/fgm-regressor on the LIBSVM file one chunk at a time")
    fit.set_defaults(func=_cmd_fit)

    def model_data(p, out_help, per_block):
        p.add_argument("data", help=data_help)
        p.add_argument("--model", "-m", required=True,
                       help="model file written by `kernlearn fit`")
        table_args(p, "default: the model's")
        p.add_argument("--out", "-o", help=out_help)
        chunk_args(p, f"read the LIBSVM file block by block, {per_block}")

    pred = sub.add_parser("predict", help="predict with a saved model")
    model_data(pred, "write here instead of stdout ('-': stdout)", "writing as blocks arrive")
    pred.add_argument("--proba", action="store_true", help="class probabilities")
    pred.set_defaults(func=_cmd_predict)

    ev = sub.add_parser("evaluate", help="metrics of a saved model on a labelled file")
    # (the metrics are printed in any case: "instead of stdout" was untrue)
    model_data(ev, "also write the metrics to this file ('-': stdout only)",
               "keeping only the predictions")  # (it writes nothing per block)
    ev.add_argument("--json", action="store_true", help="JSON output")
    ev.set_defaults(func=_cmd_evaluate)

    sel = sub.add_parser("select", help="selected features / learned parameters / kernel weights")
    sel.add_argument("model", help="model file written by `kernlearn fit`")
    sel.add_argument("--format", choices=["csv", "json"], default="csv", help="(default: csv)")
    sel.add_argument("--out", "-o", help="write here instead of stdout ('-': stdout)")
    sel.set_defaults(func=_cmd_select)

    rep = sub.add_parser("report", help="self-contained HTML report of a model")
    rep.add_argument("model", help="model file written by `kernlearn fit`")
    rep.add_argument("--data", help="labelled test data: " + data_help)
    table_args(rep, "default: the model's")
    rep.add_argument("--out", "-o", help="HTML file (default: MODEL with .html; '-': stdout)")
    rep.set_defaults(func=_cmd_report)

    ds = sub.add_parser("datasets", help="list the data sets in the data folder")
    ds.set_defaults(func=_cmd_datasets)

    es = sub.add_parser("estimators", help="list the estimators")
    es.add_argument("--params", action="store_true", help="with their parameters")
    es.set_defaults(func=_cmd_estimators)

    demo = sub.add_parser("demo", help="run FGM on embedded data")
    demo.add_argument("--out", default="kernlearn-out", help="folder for plots")
    demo.add_argument("--quiet", "-q", action="store_true")
    demo.add_argument("--quick", action="store_true", help=quick_help())
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv=None):
    """Entry point of the ``kernlearn`` command.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    status : int
        One of :data:`EXIT_CODES`.
    """
    debug = os.environ.get("KERNLEARN_DEBUG") == "1"
    restore = sigterm_raises()  # (a kill or hang-up left temporary files)
    unsilence = closed_stderr_silenced()  # (`2>&-`: errors went to stdout)
    stdout, sys.stdout = sys.stdout, CheckedStdout(sys.stdout)  # (a full disk: exit 1)
    try:
        parser = build_parser()
        args, extra = parser.parse_known_args(argv)
        if extra:  # (as parse_args, with the subcommand known to the hint)
            parser.command = args.command
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        if getattr(args, "chunk_memory", None) is not None and not args.out_of_core:
            raise CLIError("--chunk-memory sizes the blocks of --out-of-core reading; "
                           "add --out-of-core or drop --chunk-memory", 2)
        if args.command in ("predict", "evaluate", "select") and args.out == "-":
            args.out = None  # "-" is standard output (it wrote a file named "-")
        if args.command == "fit" and args.model == "-":  # (it wrote a file named "-")
            raise CLIError("--model -: a model is saved to a file; give its name", 2)
        if args.command == "demo" and args.out == "-":
            raise CLIError("--out -: the demo writes its plots to a folder; give its "
                           "name", 2)
        # (fit prints its own; a warning of another command, e.g. NumPy's
        # overflow in the metrics, was Python's two lines with a source line)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = args.func(args)
        _print_warnings(caught)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except CLIError as exc:
        print(f"kernlearn: error: {_one_line(exc)}", file=sys.stderr)
        return exc.code
    except BrokenPipeError:
        # the reader (e.g. `head`) has all it wanted: stop quietly, and keep
        # Python from complaining when it flushes stdout at exit
        silence_stdout()
        return 141
    except UnicodeEncodeError as exc:
        import codecs

        if codecs.lookup(exc.encoding).name != codecs.lookup(
                getattr(sys.stdout, "encoding", None) or "utf-8").name:
            return _internal_error(exc, debug)  # (not the terminal's: a bug)
        # a label or name the terminal's encoding cannot show
        print(f"kernlearn: error: the output holds {exc.object[exc.start:exc.end]!r}, "
              f"which standard output's encoding ({exc.encoding}) cannot show; "
              "write it to a file with --out (UTF-8) or set PYTHONIOENCODING=utf-8",
              file=sys.stderr)
        return 7
    except KeyboardInterrupt:
        print("kernlearn: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:  # (SIGTERM 143, SIGHUP 129)
        print(f"kernlearn: {exc.word}", file=sys.stderr)
        return exc.code
    except MemoryError:
        print("kernlearn: error: out of memory", file=sys.stderr)
        return 3
    except Exception as exc:
        return _internal_error(exc, debug)
    finally:
        sys.stdout = stdout
        restore()
        unsilence()


def _internal_error(exc, debug):
    """A bug: said in one line (exit 1), the traceback on request."""
    if debug:
        raise exc
    print(
        f"kernlearn: internal error: {type(exc).__name__}: {_one_line(exc)} "
        "(set KERNLEARN_DEBUG=1 for the traceback; please report it)",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
