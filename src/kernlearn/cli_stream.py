"""``--out-of-core``: the command line on LIBSVM files read in row chunks.

``kernlearn fit --out-of-core`` trains the FGM estimators on a
:class:`~kernlearn.datasets.SvmlightChunks` (one chunk of the file in memory
at a time; the labels, ``n`` floats, stay in memory), and ``predict`` /
``evaluate --out-of-core`` read the file block by block, writing predictions
as each block arrives.  Memory then follows ``--chunk-memory``, not the file.
The checks of the in-memory commands (finite values, feature count, index
base, labels, training range) are made on every chunk.
"""

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

__all__ = ["FIT_ESTIMATORS", "load_chunks", "stream_evaluate", "stream_predict"]

#: Estimators that train on row chunks (FGM reads ``X`` by map-reduce over rows).
FIT_ESTIMATORS = ("fgm", "fgm-regressor")


def _budget(args):
    from ._cli_common import CLIError
    from .partitioned import parse_bytes

    try:
        size = parse_bytes(args.chunk_memory or "256MB")  # the documented default
    except (TypeError, ValueError) as exc:
        raise CLIError(f"--chunk-memory {args.chunk_memory!r}: {exc}", 2) from None
    if size < 4096:
        # (KB is 1000 bytes: "'4KB' is below 4KB" named no problem)
        raise CLIError(f"--chunk-memory {args.chunk_memory!r} is {size} bytes, below the "
                       "smallest chunk, 4KiB (4096 bytes)", 2)
    return size


def _check_source(args):
    """Refuse, before reading, what cannot be read in chunks (exit 2 or 3)."""
    from ._cli_common import CLIError
    from .datafiles import _base_suffix

    kind = args.format or {".csv": "csv", ".npy": "npy", ".npz": "npz"}.get(
        _base_suffix(args.data), "libsvm")
    if kind != "libsvm":
        raise CLIError(f"--out-of-core reads LIBSVM files; {args.data} is read as "
                       f"{kind} (drop --out-of-core to read it in memory)", 2)
    for flag in ("label", "task_column", "header", "sep"):
        if getattr(args, flag, None) is not None:
            raise CLIError(f"--{flag.replace('_', '-')} applies to CSV files, not to "
                           "--out-of-core (LIBSVM files)", 2)
    path = Path(args.data)
    if path.is_dir():
        raise CLIError(f"{path} is a directory, not a data file", 3)
    if not path.exists():
        raise CLIError(f"data file not found: {args.data} (--out-of-core reads a "
                       "LIBSVM file, not a data set name)", 3)
    return _budget(args)


def _data_error(exc):
    """The exit status of a data-file exception, as :func:`kernlearn.cli._load`."""
    from ._cli_common import CLIError, _one_line
    from .datafiles import ColumnNameError, FeatureCountError, IndexBaseError

    mismatch = (FeatureCountError, IndexBaseError, ColumnNameError)
    return CLIError(_one_line(exc), 5 if isinstance(exc, mismatch) else 3)


def _merge_profile(profile, X):
    """Fold one chunk into the training profile (min, max, integrality)."""
    from .summary import feature_profile

    part = feature_profile(X)
    if profile is None:
        return part
    return {
        "feature_min": np.minimum(profile["feature_min"], part["feature_min"]),
        "feature_max": np.maximum(profile["feature_max"], part["feature_max"]),
        "feature_integral": profile["feature_integral"] & part["feature_integral"],
    }


def load_chunks(args, name):
    """``X, y, info`` of ``args.data`` for ``kernlearn fit --out-of-core``.

    Parameters
    ----------
    args : argparse.Namespace
        The ``fit`` command line.
    name : str
        CLI name of the estimator (one of :data:`FIT_ESTIMATORS`).

    Returns
    -------
    X : kernlearn.datasets.SvmlightChunks
        The file in chunks of about ``--chunk-memory`` of data.
    y : ndarray of shape (n_samples,)
    info : dict
        As :func:`kernlearn.datafiles.load_data_file`, plus ``profile`` (the
        training range of every feature, gathered chunk by chunk).
    """
    from ._cli_common import CLIError, _check_values
    from .datafiles import check_libsvm_width
    from .datasets import SvmlightChunks

    if name not in FIT_ESTIMATORS:
        raise CLIError(f"--out-of-core trains {' and '.join(FIT_ESTIMATORS)} only; "
                       f"{name} needs the data in memory (drop --out-of-core)", 2)
    budget = _check_source(args)
    zero_based = {"auto": "auto", "yes": True, "no": False}[args.zero_based]
    try:
        chunks = SvmlightChunks(args.data, memory_budget=budget, zero_based=zero_based,
                                max_table_size=args.max_table_size)
        check_libsvm_width(args.data, chunks.shape[1], chunks.nnz, chunks.zero_based)
    except (ValueError, OSError, MemoryError) as exc:
        raise _data_error(exc) from None
    if chunks.shape[1] == 0:
        raise CLIError(f"{args.data} has no feature columns", 3)
    profile = None
    for i in range(chunks.n_chunks):  # reads the binary cache, not the text
        X = chunks.get_chunk(i)
        _check_values(X, args.data, first_row=int(chunks.bounds[i]))
        profile = _merge_profile(profile, X)
    info = {"format": "libsvm", "zero_based": chunks.zero_based, "tasks": None,
            "feature_names": None, "label_name": None, "header": None,
            "profile": profile}
    return chunks, chunks.y, info


def _model_blocks(args, meta, est):
    """``(X, y)`` blocks of ``args.data`` in the model's feature space, checked."""
    from ._cli_common import _RANGE_MAX_OUTSIDE, CLIError, _check_values
    from .datafiles import iter_libsvm
    from .summary import outside_fraction

    budget = _check_source(args)
    if meta.get("multitask"):
        raise CLIError(f"the model was fitted on tasks; {args.data} has no task column "
                       "(--task-column)", 5)
    if meta.get("format") not in (None, "dataset", "libsvm"):
        raise CLIError(f"{args.data} is a libsvm file but the model was trained on a "
                       f"{meta['format']} file", 5)
    n_features = meta.get("n_features", getattr(est, "n_features_in_", None))
    zero_based = meta.get("zero_based")
    if zero_based is None:  # a named data set: their LIBSVM files are 1-based
        zero_based = False
    check_range = meta.get("feature_min") is not None and not args.allow_out_of_range
    outside, values, rows = 0.0, 0, 0
    try:
        # a chunk of text parses into about 3 times its size (as SvmlightChunks)
        text = max(budget // 4, 1024)
        for X, y in iter_libsvm(args.data, n_features, zero_based, text,
                                getattr(args, "max_table_size", None)):
            _check_values(X, args.data, first_row=rows)
            rows += X.shape[0]
            if check_range and X.nnz:
                # the values read so far, checked before this block's predictions
                outside += outside_fraction(X, meta) * X.nnz
                values += X.nnz
                if outside / values > _RANGE_MAX_OUTSIDE:
                    raise CLIError(
                        f"{100 * outside / values:.0f}% of the values of {args.data} "
                        "read so far are unlike the training values of their features "
                        "(far out of range, or fractional where training values were "
                        "integers): is it the same kind of data as the training file? "
                        "(--allow-out-of-range to predict anyway)", 5)
            yield X, y
    except (ValueError, OSError, MemoryError) as exc:
        raise _data_error(exc) from None


def stream_predict(args, est, meta):
    """``kernlearn predict --out-of-core``: predictions written block by block.

    Parameters
    ----------
    args : argparse.Namespace
        The ``predict`` command line.
    est : estimator
        The fitted model.
    meta : dict
        Its metadata.

    Returns
    -------
    status : int
        0 (failures raise :class:`~kernlearn.cli.CLIError`).
    """
    from ._cli_common import _atomic_write, _prediction_text

    blocks = _model_blocks(args, meta, est)
    if args.proba:
        _prediction_text(est, None, None, args, check_only=True)

    def write(fh):
        n = 0
        for X, _ in blocks:
            header, body = _prediction_text(
                est, X, None, args, texts=meta.get("class_text"), first_row=n)
            fh.write((header if n == 0 else "") + body)
            n += X.shape[0]
        return n

    if not args.out:
        write(sys.stdout)
        return 0
    count = []

    def write_file(tmp):
        with open(tmp, "w", encoding="utf-8") as fh:  # (as _write_text)
            count.append(write(fh))

    _atomic_write(args.out, write_file)
    print(f"wrote {count[0]} prediction{'s' * (count[0] != 1)} to {args.out}")
    return 0


def stream_evaluate(args, est, meta):
    """``kernlearn evaluate --out-of-core``: metrics over the blocks of a file.

    Predictions (and binary decision values, for ROC AUC) are gathered block
    by block: ``n`` numbers, as the labels.

    Parameters
    ----------
    args : argparse.Namespace
        The ``evaluate`` command line.
    est : estimator
        The fitted model.
    meta : dict
        Its metadata.

    Returns
    -------
    status : int
        0 (failures raise :class:`~kernlearn.cli.CLIError`).
    """
    from ._cli_common import _check_labels, _predict, _write_metrics
    from .summary import evaluate_metrics

    task = meta.get("task") or (
        "classification" if hasattr(est, "classes_") else "regression")
    binary = task == "classification" and len(est.classes_) == 2 and hasattr(
        est, "decision_function")
    ys, preds, decs = [], [], []
    for X, y in _model_blocks(args, meta, est):
        ys.append(_check_labels(est, y, args.data))
        preds.append(_predict(est, X, args.data, first_row=sum(map(len, preds))))
        if binary:
            decs.append(est.decision_function(X))
    # evaluate_metrics asks an estimator for predictions; this one answers
    # with those gathered above, so the metrics are the in-memory ones
    done = SimpleNamespace(classes_=getattr(est, "classes_", None),
                           predict=lambda X, **kw: np.concatenate(preds))
    if binary:
        done.decision_function = lambda X, **kw: np.concatenate(decs)
    res = evaluate_metrics(done, None, np.concatenate(ys), task)
    return _write_metrics(args, res)
