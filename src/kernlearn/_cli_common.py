"""What the ``kernlearn`` commands share: one-line errors, checked outputs, predictions.

:mod:`kernlearn.cli` (the commands and the parser) and :mod:`kernlearn.cli_stream`
(the same commands on a LIBSVM file read block by block) both use these, so
they live below both.
"""

import argparse
import csv
import inspect
import io
import json
import os
import re
import sys
import warnings
from pathlib import Path

import numpy as np

from ._signal_words import signal_word
from .utils._finite import first_non_finite

_RANGE_MAX_OUTSIDE = 0.05  # fraction of values unlike training that stops predict


class CLIError(Exception):
    """A user-facing error: one line on stderr and exit status ``code``.

    Parameters
    ----------
    message : str
        What went wrong, naming the file, flag or value.
    code : int, default=2
        Exit status, a key of :data:`kernlearn.cli.EXIT_CODES`.
    """

    def __init__(self, message, code=2):
        super().__init__(message)
        self.code = code


class Terminated(BaseException):
    """SIGTERM (``kill``, ``timeout``, a batch scheduler) or SIGHUP (the
    terminal closed) raised as an exception.

    Python's default on either ended the process at once: no cleanup ran, so
    the ``.tmp`` file of an output being written, or the binary cache of
    ``fit --out-of-core`` (as large as the data), stayed behind.  A
    ``BaseException``, as ``KeyboardInterrupt``, so that no ``except
    Exception`` takes it for an error of the command.

    Parameters
    ----------
    signum : int
        The signal; the exit status is ``128 + signum`` (143, 129).
    """

    def __init__(self, signum=15):
        super().__init__(signum)
        self.code = 128 + signum
        self.word = signal_word(signum)


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def sigterm_raises():
    """Make SIGTERM and SIGHUP raise :class:`Terminated` while a command runs.

    Returns
    -------
    restore : callable
        Puts the previous handlers back.  Only a signal at its default is
        caught: one that is ignored stays ignored (``nohup`` ignores SIGHUP, a
        launcher may ignore SIGTERM), and a handler of a program calling
        :func:`kernlearn.cli.main` stays its own (one set outside Python could
        not be put back: the default replaced it).  Nothing is set outside
        the main thread, where Python cannot set a handler; SIGHUP only where
        it exists (not on Windows).
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) == signal.SIG_DFL:
            previous[signum] = signal.signal(signum, _raise_terminated)

    def restore():
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    return restore


def closed_stderr_silenced():
    """Send what a command says on standard error to the null device when
    standard error is closed (``2>&-``), as grep and git stay silent then.

    Python's ``sys.stderr`` is then ``None``, and ``print(..., file=None)``
    writes to standard output: an error message went into the predictions
    (``predict ... > pred.txt 2>&-``).  The null device opened takes file
    descriptor 2, which a file opened later would otherwise take.

    Returns
    -------
    restore : callable
        Closes it and puts ``None`` back.
    """
    if sys.stderr is not None:
        return lambda: None
    sys.stderr = open(os.devnull, "w")

    def restore():
        sys.stderr.close()
        sys.stderr = None

    return restore


def silence_stdout():
    """Point standard output at the null device, so that Python's flush of
    what is left in its buffer at exit neither fails again nor prints a
    traceback (after a closed pipe or a full disk)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


class CheckedStdout:
    """Standard output whose failed writes are one-line errors (exit 7).

    ``kernlearn predict ... > out.txt`` on a full disk (or a quota, or
    ``> /dev/full``) or closed (``>&-``) was an "internal error ... please
    report it" (exit 1):
    :func:`kernlearn.cli.main` writes through this while a command runs.  A
    closed pipe (``BrokenPipeError``) still reaches ``main`` (exit 141).

    Parameters
    ----------
    stream : file object
        The standard output it writes to.
    """

    def __init__(self, stream):
        self._stream = stream

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def write(self, text):
        return self._checked("write", text)

    def flush(self):
        return self._checked("flush")

    def _checked(self, op, *args):
        if self._stream is None:  # (closed, `>&-`: Python's sys.stdout is None)
            raise CLIError("cannot write standard output: it is closed", 7)
        try:
            return getattr(self._stream, op)(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            silence_stdout()
            raise CLIError(f"cannot write standard output: {exc.strerror or exc}",
                           7) from None


# NumPy >= 2 prints scalars as ``np.int64(99)``; users should read ``99``.
_NP_REPR = re.compile(r"np\.(?:u?int|float|complex|bool|str)_?\d*\(([^()]*)\)")


def _one_line(msg, limit=400):
    """``msg`` on one line of at most ``limit`` characters: a longer one loses
    its middle, not its end, where messages name the remedy (a long file path
    in front had cut "raise the budget (--max-table-size SIZE)" off)."""
    text = _NP_REPR.sub(r"\1", " ".join(str(msg).split()))
    if len(text) <= limit:
        return text
    head = (limit - 5) // 2
    return text[:head] + " ... " + text[len(text) - (limit - 5 - head):]


# Where an estimator's message names a row of X (and a column of it): Python
# counts both from 0 ("row 5 of X", "at row 5, column 1"), the command line's
# own messages count samples and features from 1 ("sample 6, feature 2").
_X_ROW = re.compile(r"\brow (\d+)(?: of X\b|(?=(?: \(index [^)]*\))?, column ))")
_X_COLUMN = re.compile(r"\bcolumn (\d+\b|'[^']*')")
_X_COLUMNS = re.compile(r"\bX column\(s\) \[([\d, ]+)\]")


def _cli_numbering(text, first_row=0):
    """``text``, an estimator's message, with the rows and columns of ``X`` it
    names as the command line names them: sample ``first_row + i + 1`` (``X``
    holds the file's rows from ``first_row``, 0-based, on) and feature ``j + 1``.

    A sample 6 said by the command line was "row 5 of X" in the same run.
    """
    text, n = _X_ROW.subn(lambda m: f"sample {first_row + int(m[1]) + 1}", text)
    if n:  # (a column named alongside a row of X is one of X's)
        text = _X_COLUMN.sub(lambda m: "feature " + (
            m[1] if m[1].startswith("'") else str(int(m[1]) + 1)), text)
    return _X_COLUMNS.sub(lambda m: "feature(s) " + ", ".join(
        str(int(j) + 1) for j in m[1].split(",")), text)


def _fit_error(exc, est, X):
    """Why ``est.fit(X, ...)`` raised ``exc``, in the command line's words.

    An estimator that takes dense data only refuses the sparse matrix a LIBSVM
    file is read as with scikit-learn's advice "Use '.toarray()'", which a
    user at a shell cannot follow.  Every estimator takes sparse rows now:
    only a precomputed kernel (its ``X`` the training Gram matrix) is dense-only.
    """
    import scipy.sparse as sp

    if sp.issparse(X) and not est.__sklearn_tags__().input_tags.sparse:
        pre = "precomputed" in (est.get_params().get("kernel"), est.get_params().get("kernels"))
        what = "the Gram matrix" if pre else "the data"
        return (f"it takes dense data only{' with a precomputed kernel' if pre else ''}, and a "
                f"LIBSVM file is read as a sparse matrix: write {what} as a CSV (or .npy) "
                "file and fit that.")
    return _cli_numbering(_one_line(exc))


def _check_values(X, source, first_row=0):
    """Exit 3 on a NaN or infinite feature value of ``X``, the rows of ``source``
    from ``first_row`` (0-based) on, naming the first one."""
    bad = first_non_finite(X)
    if bad is not None:
        i, j = bad[:2]  # where: the first such value, by sample (row) and feature (column)
        raise CLIError(f"{source} contains NaN or infinite feature values (first: sample "
                       f"{first_row + i + 1}, feature {j + 1} of {X.shape[1]})", 3)


def _warn_far_outside(X, meta, source):
    """Warn of rows with a value far outside its feature's training range.

    Too few to refuse the file (a sentinel such as -999 for a missing value
    in a few rows), their predictions extrapolate: they were made without a
    word.
    """
    from .summary import far_outside_rows

    rows, first = far_outside_rows(X, meta)
    if first is None:
        return
    i, j, v = first
    names = meta.get("feature_names")
    feature = repr(str(names[j])) if names is not None and j < len(names) else f"{j + 1}"
    lo, hi = meta["feature_min"][j], meta["feature_max"][j]
    n = rows.size
    warnings.warn(
        f"{n} sample{'s' if n > 1 else ''} of {source} hold{'' if n > 1 else 's'} a value "
        f"far outside its feature's training range, so {'their' if n > 1 else 'its'} "
        f"prediction{'s' if n > 1 else ''} extrapolate{'' if n > 1 else 's'} (first: "
        f"sample {i + 1}, feature {feature} = {v:.6g}, trained on {lo:.6g} to {hi:.6g}); "
        "a missing-value code such as -999?", UserWarning, stacklevel=2)


def _check_model_data(X, info, meta, args):
    """Check a file's ``X`` (read as ``info`` says) against the model it is for.

    Its values must be finite and mostly like the training values (more than
    ``_RANGE_MAX_OUTSIDE`` of them unlike: exit 5, unless
    ``--allow-out-of-range``; fewer: a warning).  A model without column names
    (fitted in Python on an array, or on a named data set without them) reads
    a file's columns by position: said in a warning when the file has a header,
    whose names it could not match (a reordered file was predicted without a
    word).
    """
    from .summary import outside_fraction

    _check_values(X, args.data)
    names = info.get("feature_names")
    if names is not None and meta.get("feature_names") is None:
        shown = ", ".join(map(str, names[:6])) + (", ..." if len(names) > 6 else "")
        warnings.warn(
            f"the model has no column names to match (fitted on an array), so the "
            f"columns of {args.data} are taken by position ({shown}): check that they "
            "are in the training data's order", UserWarning, stacklevel=2)
    if meta.get("feature_min") is None or getattr(args, "allow_out_of_range", False):
        return
    frac = outside_fraction(X, meta)
    if frac > _RANGE_MAX_OUTSIDE:
        raise CLIError(
            f"{100 * frac:.0f}% of the values of {args.data} are unlike the "
            "training values of their features (far out of range, or fractional "
            "where training values were integers): is it the same kind of data "
            "as the training file? (--allow-out-of-range to predict anyway)",
            5,
        )
    if frac > 0:  # (a far value counts in frac: a second pass over X only then)
        _warn_far_outside(X, meta, args.data)


def _check_targets(y, source):
    """Exit 3 on a NaN or infinite label of ``y``, naming the first by sample
    (they were an internal error of the metrics, or "cannot fit" at a 0-based
    row)."""
    y = np.asarray(y)
    bad = first_non_finite(y[:, None]) if y.dtype.kind == "f" else None
    if bad is not None:
        raise CLIError(f"{source} contains NaN or infinite labels (first: sample "
                       f"{bad[0] + 1}, {bad[2]}; {bad[3]} in all); drop or fix "
                       "those rows", 3)


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError, TypeError):
        return False


def _check_output(path, what="output", inputs=()):
    """Fail early (exit 7) if ``path`` cannot be written or names an input file."""
    if path is None:
        return
    if not str(path).strip():  # (it was "output path . is a directory")
        raise CLIError(f"the {what} file name is empty", 7)
    for label, source in inputs:
        if source is not None and _same_file(path, source):
            raise CLIError(
                f"{what} {path} is the {label} file; refusing to overwrite it "
                "(choose another name)",
                7,
            )
    p = Path(path)
    if str(path).endswith(("/", os.sep)) and not p.is_dir():
        # (Path drops the slash: `-o preds/` wrote a file named "preds")
        raise CLIError(f"{what} {path} ends with {str(path)[-1]!r}, as a folder's name "
                       "does; give a file name", 7)
    if p.is_symlink():  # the file it names is written (a link into no folder: after the fit)
        p = Path(os.path.realpath(p))
    if p.is_dir():
        raise CLIError(f"{what} path {p} is a directory", 7)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise CLIError(f"cannot write {what} {p}: "
                       + (f"{parent} is a file, not a folder" if parent.exists()
                          else f"folder {parent} does not exist"), 7)
    if p.exists() and not os.access(p, os.W_OK):
        raise CLIError(f"cannot write {what} {p}: permission denied", 7)
    if p.exists() and not p.is_file():  # a device or a pipe: written directly
        return
    # Really create a file there: permission bits say nothing for root, and
    # some file systems refuse writes regardless of them.
    import tempfile

    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".kernlearn-check-"):
            pass
    except OSError as exc:
        raise CLIError(f"cannot write {what} {p}: {exc.strerror or exc}", 7) from None


def _emit(path, text, summary):
    """Write ``text`` to ``path`` and print ``summary``, or print ``text``; exit 0."""
    if path:
        _write_text(path, text)
        print(summary)
    else:
        sys.stdout.write(text)
    return 0


def _atomic_write(path, write, what="output"):
    """:func:`kernlearn.io.write_atomically`, a failure as one line (exit 7)."""
    from .io import write_atomically

    try:
        write_atomically(path, write)
    except OSError as exc:
        raise CLIError(f"cannot write {what} {path}: {exc.strerror or exc}", 7) from None


def _write_text(path, text, what="output"):
    # UTF-8 whatever the locale: the data readers take UTF-8 only (a Latin-1 or
    # ASCII locale wrote other bytes, or failed on a label "Iris-sétosa")
    _atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), what)


def _task_kw(tasks):
    return {} if tasks is None else {"task_index": tasks}


def _as_numbers(y):
    """Labels read as text because written with leading zeros ("007"), as the
    numbers a regressor, or a model of numeric classes, takes them for."""
    y = np.asarray(y)
    if y.dtype.kind == "U" and y.size:
        try:
            return y.astype(np.float64)
        except ValueError:
            pass
    return y


def _check_labels(est, y, source):
    classes = getattr(est, "classes_", None)
    if classes is None or y is None:
        return y
    y = _as_numbers(y) if classes.dtype.kind in "fiu" else np.asarray(y)
    if classes.dtype.kind in "fiu" and y.dtype.kind in "fiu":
        unseen = np.setdiff1d(np.unique(y), classes)
    else:
        unseen = np.setdiff1d(np.unique(y.astype(str)), classes.astype(str))
        y = y.astype(classes.dtype) if classes.dtype.kind in "U" else y
    if unseen.size:
        raise CLIError(
            f"{source} has labels never seen in training: "
            f"{_label_list(unseen[:5])}; the model knows {_label_list(classes[:10])}",
            5,
        )
    return y


def _label_list(values):
    """``values`` joined by ", ", each quoted as a CSV field when it holds a
    comma or a quote (as the --proba header names the classes: bare, the
    labels "yes, sir" and "Maybe" read as three)."""
    def field(v):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow([str(v)])
        return buf.getvalue()

    return ", ".join(map(field, values))


def _stored_column(meta, key):
    """The label or task column (``key``) a model was fitted with, as an option
    value for a later file: ``name:`` and the column's name when the training
    file had a header (a column named "2" is not then read as column 2),
    else the option as given (models of earlier versions, files without one)."""
    name = meta.get(f"{key}_name")
    return f"name:{name}" if name is not None else meta.get(key)


def _predict(est, X, source, tasks=None, method="predict", first_row=0):
    """``est``'s ``method`` of ``X`` (rows ``first_row``... of ``source``); a
    refusal is the command line's error (exit 5)."""
    try:
        pred = getattr(est, method)(X, **_task_kw(tasks))
    except ValueError as exc:
        raise CLIError(f"cannot predict {source}: "
                       f"{_cli_numbering(_one_line(exc), first_row)}", 5) from None
    if pred.dtype.kind == "f" and not np.all(np.isfinite(pred)):
        raise CLIError(
            "the model produced NaN or infinite predictions; the model "
            "file is unusable",
            4,
        )
    return pred


def _number_text(v):
    """The shortest text that reads back as ``v`` (10 significant digits
    rounded a prediction of 1.7e12 by up to 500); whole numbers without a
    ".0", as a class -1 of a LIBSVM file is written.  Predictions and
    probabilities alike."""
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)


_CSV_SPECIAL = frozenset(',"\r\n')  # (what makes csv.writer quote a field)


def _label_text(v):
    """A predicted class or value as written: numbers by :func:`_number_text`."""
    return _number_text(v) if isinstance(v, (float, np.floating)) else str(v)


def class_text(est, spellings):
    """The text of each class of ``est`` as its training file wrote it, or ``None``
    if :func:`_label_text` spells every one so (``spellings``: the file's
    ``{class: text}``, :func:`kernlearn._csv_labels.class_spellings`)."""
    if not spellings or not hasattr(est, "classes_"):
        return None
    texts = [spellings.get(c.item() if hasattr(c, "item") else c, _label_text(c))
             for c in est.classes_]
    return None if texts == [_label_text(c) for c in est.classes_] else texts


def _prediction_text(est, X, tasks, args, check_only=False, texts=None, first_row=0):
    """``(header, text)`` of the predictions (or probabilities) of ``X`` (the
    rows ``first_row``... of the file); ``texts``: the classes as written in
    the training file (:func:`class_text`)."""
    spell = (_label_text if texts is None else
             dict(zip(map(_label_text, est.classes_), texts)).__getitem__)
    if args.proba:
        if not hasattr(est, "classes_"):  # ("with these parameters" misled)
            raise CLIError(f"--proba gives class probabilities; {type(est).__name__} is "
                           "a regressor", 2)
        if not hasattr(est, "predict_proba"):
            params = est.get_params()
            hint = "; refit with -p probability=true" if "probability" in params else ""
            if params.get("loss") == "squared_hinge":
                hint += " or -p loss=logistic"
            raise CLIError(f"{type(est).__name__} with these parameters has no "
                           f"predict_proba{hint}", 2)
        if check_only:
            return None
        # (a row the model refuses is a data error, as for the predictions)
        pred = _predict(est, X, args.data, tasks, "predict_proba", first_row)
        # (six significant digits wrote 0.9999999 as 1 and lost what tells
        # near-certain samples apart: every digit, as the predictions)
        lines = [",".join(map(_number_text, row)) for row in pred]
        # a CSV row: a label holding a comma or a quote is quoted
        buf = io.StringIO()
        # (the classes as the predictions spell them: a LIBSVM file's -1.0 and
        # 1.0 were -1 and 1 in the predictions but "-1.0,1.0" here)
        csv.writer(buf, lineterminator="\n").writerow(
            spell(_label_text(c)) for c in est.classes_)
        header = buf.getvalue()
    else:
        pred = _predict(est, X, args.data, tasks, first_row=first_row)
        lines = [spell(_label_text(v)) for v in pred]
        header = ""
        if any(_CSV_SPECIAL.intersection(spell(_label_text(c)))
               for c in getattr(est, "classes_", ())):
            # one CSV field per line, quoted as the --proba header quotes a
            # class: a bare "Smith, J." was two fields to a CSV reader
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows([v] for v in lines)
            return header, buf.getvalue()
    return header, "\n".join(lines) + "\n"


def _metric_text(v):
    """A metric with four decimals, or four significant digits below 1 (and
    from 1e12 on).

    (Four decimals printed the RMSE 3.3e-07 of a target in micro-units as
    0.0000; between 0.1 and 1 both spell a value alike.)
    """
    if v == 0 or not np.isfinite(v) or 1 <= abs(v) < 1e12:
        return f"{v:.4f}"
    return f"{v:#.4g}"  # (not 300 digits for an MAE of 9e307)


def _write_metrics(args, res):
    """Print the metrics ``res`` (and write them to ``--out``); exit 0."""
    text = (
        # JSON has no NaN (R^2 of one row): null, which every parser reads
        json.dumps({k: None if isinstance(v, float) and not np.isfinite(v) else v
                    for k, v in res.items()}, indent=1)
        if args.json
        else "\n".join(
            f"{k} {_metric_text(v)}" if isinstance(v, float) else f"{k} {v}"
            for k, v in res.items()
        )
    ) + "\n"
    if args.out:
        _write_text(args.out, text)
    sys.stdout.write(text)
    return 0


# ------------------------------------------------------------------ model I/O
def _load_model(path):
    """``(estimator, metadata)`` of a model file, any fault of it as exit 4."""
    import kernlearn

    from .io import load_model

    try:
        est, meta = load_model(path, return_metadata=True)
    except FileNotFoundError as exc:
        raise CLIError(_one_line(exc), 4) from None
    except MemoryError:
        raise CLIError(f"{path}: the model file needs more memory than there is", 4)
    except Exception as exc:  # any fault of a model file is a model-file error
        raise CLIError(_one_line(exc), 4) from None
    if type(est).__name__ not in kernlearn._ESTIMATORS:
        raise CLIError(
            f"{path} holds a {type(est).__name__}, not a model of `kernlearn fit`; "
            "load it in Python with kernlearn.io.load_model",
            4,
        )
    _check_cli_metadata(meta, est, path)
    names = getattr(est, "feature_names_in_", None)
    if names is not None:
        # fitted on named columns (a DataFrame in Python, a CSV header in
        # `kernlearn fit`): a file's columns are matched by these names (a
        # Python model's were taken by position, so reordered columns gave
        # other predictions without a word, under scikit-learn's warning that
        # X has no feature names); the arrays read then go in unnamed
        meta = {**meta, "feature_names": meta.get("feature_names")
                or [str(n) for n in names]}
        del est.feature_names_in_
    return est, meta


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_texts(v, size=None):
    return isinstance(v, (list, tuple, np.ndarray)) and np.ndim(v) == 1 and all(
        isinstance(t, str) for t in v) and (size is None or len(v) == size)


def _is_floats(v, size, kind):
    return isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in kind and (
        size is None or v.size == size)


def _check_cli_metadata(meta, est, path):
    """Refuse (exit 4) metadata the commands read but cannot use.

    ``kernlearn fit`` writes these keys; a model saved in Python with
    ``save_model(est, path, metadata={...})`` holds whatever its author put
    there (``{"task": "clustering"}``, ``{"feature_names": "abc"}``), and
    the commands took it as theirs: a TypeError or KeyError deep inside was
    "internal error" (exit 1), or a string's letters were read as column
    names.
    """
    own = getattr(est, "n_features_in_", None)
    own = own if _is_int(own) else None
    n = meta.get("n_features")
    if n is None:
        n = own
    n = n if _is_int(n) else None
    classes = getattr(est, "classes_", None)
    has_tasks = "task_index" in inspect.signature(est.predict).parameters
    checks = {
        # (another count than the model's: "the model expects 7 features", exit 5,
        # blamed the data file for the model file's fault)
        "n_features": (lambda v: _is_int(v) and v >= 0 and own in (None, v),
                       "a count of features" if own is None
                       else f"the model's count of features, {own},"),
        "zero_based": (lambda v: isinstance(v, bool), "true or false"),
        "csv_header": (lambda v: isinstance(v, bool), "true or false"),
        "multitask": (lambda v: isinstance(v, bool), "true or false"),
        "format": (lambda v: v in ("csv", "libsvm", "npy", "npz", "dataset"),
                   "csv, libsvm, npy, npz or dataset"),
        "task": (lambda v: v in ("classification", "regression"),
                 "classification or regression"),
        "feature_names": (lambda v: _is_texts(v, n), f"a list of {n or 'the'} column "
                          "names"),
        "label": (lambda v: isinstance(v, str) or _is_int(v), "a column name or number"),
        "label_name": (lambda v: isinstance(v, str), "a column name"),
        "task_column": (lambda v: has_tasks and (isinstance(v, str) or _is_int(v)),
                        "a column name or number, of an estimator taking tasks"),
        "task_column_name": (lambda v: has_tasks and isinstance(v, str),
                             "a column name, of an estimator taking tasks"),
        "class_text": (lambda v: classes is not None and _is_texts(v, len(classes)),
                       "a list of the model's class names"),
        "feature_min": (lambda v: _is_floats(v, n, "f"), "an array of one number a "
                        "feature"),
        "feature_max": (lambda v: _is_floats(v, n, "f"), "an array of one number a "
                        "feature"),
        "feature_integral": (lambda v: _is_floats(v, n, "b"), "an array of one true "
                             "or false a feature"),
    }
    for key, (ok, expected) in checks.items():
        value = meta.get(key)
        if value is not None and not ok(value):
            raise CLIError(f"{path}: its metadata {key!r} is {_one_line(repr(value), 80)}, "
                           f"not {expected} as `kernlearn fit` writes it; the commands "
                           "cannot use this model file (load it in Python with "
                           "kernlearn.io.load_model)", 4)
    ranges = [meta.get(k) is None for k in ("feature_min", "feature_max")]
    if ranges[0] != ranges[1]:  # (the range check reads both: a KeyError)
        raise CLIError(f"{path}: its metadata holds only one of 'feature_min' and "
                       "'feature_max'; the commands cannot use this model file (load it "
                       "in Python with kernlearn.io.load_model)", 4)


def _name_columns(est, info):
    """Give ``est`` the header's column names as ``feature_names_in_`` before it is saved.

    ``kernlearn fit`` fits on the array of a CSV file's feature columns; loaded
    in Python (:func:`kernlearn.io.load_model`), its model checks the names of
    a DataFrame as one fitted on a DataFrame of those columns does (it kept
    them in the metadata only: reordered or renamed columns were predicted by
    position without a word).  The commands match a file's columns by these
    names (:func:`_load_model`).  Files without a header and LIBSVM files
    have no names: nothing is set, as for a fit on an array.
    """
    names = info.get("feature_names")
    if info.get("format") == "csv" and names is not None:
        est.feature_names_in_ = np.asarray(names, dtype=object)


def _table_size(text):
    """``--max-table-size``: a size such as ``8GB`` (an argparse type).

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    n_bytes : int

    Raises
    ------
    argparse.ArgumentTypeError
        Not a positive size.
    """
    from .partitioned import parse_bytes

    try:
        return parse_bytes(text)
    except ValueError as exc:
        # (argparse names the option: "argument --max-table-size: --max-table-size:")
        raise argparse.ArgumentTypeError(str(exc)) from None
