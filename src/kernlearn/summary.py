"""What a fitted model selected, how well it predicts, and what its data looked like.

Shared by the command line (``kernlearn select / evaluate / predict``) and the
HTML report: the selection table of each kind of model, the metrics on
labelled data, and the per-feature profile of the training data that
``predict`` compares new data against.
"""

import numpy as np

__all__ = ["evaluate_metrics", "feature_names", "feature_profile", "feature_weight_norms",
           "far_outside_rows", "outside_fraction", "selection_table"]

_RANGE_SLACK = 0.5  # fraction of a feature's training range tolerated outside it


def _stored_values(X):
    """Column index and value of every stored entry (all entries when dense)."""
    import scipy.sparse as sp

    from .utils._sparse import canonical_sparse

    if sp.issparse(X):
        X = canonical_sparse(sp.csr_matrix(X))  # (one value per stored cell)
        return X.indices, X.data
    return np.broadcast_to(np.arange(X.shape[1]), X.shape).ravel(), np.ravel(X)


def feature_profile(X):
    """Per-feature range and integrality of the training data.

    Parameters
    ----------
    X : ndarray or sparse matrix

    Returns
    -------
    profile : dict
        ``feature_min``, ``feature_max`` (float arrays) and
        ``feature_integral`` (bool array: every training value is an integer).
    """
    import scipy.sparse as sp

    from .utils._sparse import canonical_sparse

    if sp.issparse(X):
        # (SciPy's min and max would sum a non-canonical CSC matrix's duplicates
        # in the caller's matrix)
        X = canonical_sparse(X)
        lo = np.asarray(X.min(axis=0).toarray()).ravel()
        hi = np.asarray(X.max(axis=0).toarray()).ravel()
    else:
        lo, hi = X.min(axis=0), X.max(axis=0)
    cols, vals = _stored_values(X)
    frac = np.zeros(X.shape[1], dtype=bool)
    np.logical_or.at(frac, cols, vals != np.round(vals))
    return {
        "feature_min": lo.astype(float),
        "feature_max": hi.astype(float),
        "feature_integral": ~frac,
    }


def _far_outside(profile, cols, vals, above=True):
    """Whether each value lies outside its feature's training range by more than
    ``_RANGE_SLACK`` times that range (or the larger of its ends' magnitudes);
    ``above=False``: below it only."""
    lo, hi = profile["feature_min"], profile["feature_max"]
    slack = _RANGE_SLACK * np.maximum(hi - lo, np.maximum(np.abs(hi), np.abs(lo)))
    slack = np.where(slack > 0, slack, 1e-12)
    below = vals < lo[cols] - slack[cols]
    return (below | (vals > hi[cols] + slack[cols])) if above else below


def outside_fraction(X, profile):
    """Fraction of values unlike the training data of their feature.

    A value is unlike when it lies outside the training range by more than
    half that range, or is fractional where training values were all
    integers (e.g. continuous data fed to a model of binary features).

    Parameters
    ----------
    X : ndarray or sparse matrix
    profile : dict
        From :func:`feature_profile`.

    Returns
    -------
    fraction : float
    """
    cols, vals = _stored_values(X)
    if vals.size == 0:
        return 0.0
    out = _far_outside(profile, cols, vals)
    integral = profile.get("feature_integral")
    if integral is not None:
        out |= integral[cols] & (vals != np.round(vals))
    return float(out.mean())


def far_outside_rows(X, profile):
    """Rows holding a value far outside its feature's training range.

    "Far" as in :func:`outside_fraction`: a sentinel such as -999 for a
    missing value, or a value in other units, whose prediction extrapolates.
    On sparse ``X`` only values far *below* the range count: there a value
    above its feature's training maximum is ordinary (a word counted more
    often than in training, or never seen in it: reuters' own test file had
    1,359 such values, 0.99 % of them), while a code such as -999 is below.

    Parameters
    ----------
    X : ndarray or sparse matrix
    profile : dict
        From :func:`feature_profile`.

    Returns
    -------
    rows : ndarray of int
        The rows (0-based, increasing) with such a value.
    first : tuple of (int, int, float) or None
        Row, feature and value of the first one (None without any).
    """
    import scipy.sparse as sp

    from .utils._sparse import canonical_sparse

    if sp.issparse(X):
        X = canonical_sparse(sp.csr_matrix(X))  # (rows as _stored_values reads them)
        row_of = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    cols, vals = _stored_values(X)
    out = np.flatnonzero(_far_outside(profile, cols, vals, above=not sp.issparse(X)))
    if out.size == 0:
        return out, None
    rows = row_of[out] if sp.issparse(X) else out // X.shape[1]
    return np.unique(rows), (int(rows[0]), int(cols[out[0]]), float(vals[out[0]]))


def evaluate_metrics(est, X, y, task, tasks=None, pred=None):
    """Metrics of a fitted estimator on labelled data.

    Parameters
    ----------
    est : estimator
    X : array-like or sparse matrix
    y : ndarray
    task : {"classification", "regression"}
    tasks : ndarray, optional
        Task of each sample (``task_index`` of multitask estimators).
    pred : ndarray, optional
        ``est.predict(X)`` when already computed (and checked) by the caller.

    Returns
    -------
    metrics : dict
    """
    from sklearn import metrics

    kw = {} if tasks is None else {"task_index": tasks}
    if pred is None:
        pred = est.predict(X, **kw)
    out = {"n_samples": int(len(y))}
    # (no warnings.catch_warnings around scikit-learn's metrics: its filters
    # are the process's, and a report made in one thread would hide another
    # thread's warnings; the two undefined cases are computed without them)
    if task == "classification":
        out["accuracy"] = float(metrics.accuracy_score(y, pred))
        out["balanced_accuracy"] = balanced_accuracy(y, pred)
        if (
            len(est.classes_) == 2
            and hasattr(est, "decision_function")
            and np.unique(y).size == 2
        ):
            out["roc_auc"] = float(
                metrics.roc_auc_score(
                    y == est.classes_[1], est.decision_function(X, **kw)
                )
            )
    else:
        out["r2"] = r2(y, pred)
        out["rmse"] = float(np.sqrt(metrics.mean_squared_error(y, pred)))
        out["mae"] = float(metrics.mean_absolute_error(y, pred))
    return out


def balanced_accuracy(y, pred):
    """Mean recall over the classes present in ``y`` (scikit-learn's balanced accuracy).

    A class predicted but absent from ``y`` (a test file of one class) is
    left out of the mean, as scikit-learn does, without its warning (whose
    advice, "use the 'labels' parameter", is about its own arguments).

    Parameters
    ----------
    y, pred : ndarray of shape (n_samples,)
        True and predicted labels.

    Returns
    -------
    float
    """
    y, pred = np.asarray(y), np.asarray(pred)
    return float(np.mean([np.mean(pred[y == c] == c) for c in np.unique(y)]))


def r2(y, pred):
    """R^2 of the predictions; NaN for fewer than two rows (undefined), without a warning.

    Parameters
    ----------
    y, pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        True and predicted targets.

    Returns
    -------
    float
    """
    from sklearn import metrics

    if len(y) < 2:
        return float("nan")
    return float(metrics.r2_score(y, pred))


def selection_table(est, meta=None):
    """What a model selected or learned, as rows of a table.

    FGM: selected features with their scaling ``d`` and weights; GrFL: the
    learned feature parameters (Fourier features: the bandwidth, the
    frequency of each input column in its raw units and the phase, the map
    ``cos/sin(x @ frequencies_ + phases_)``); MKL: kernel weights (multitask MKL: also the
    weights of the shared blocks, ``shared_weight``); SLKL: the centres and
    their weights ``mu``.

    Parameters
    ----------
    est : estimator
        A fitted kernlearn estimator.
    meta : dict, optional
        Model metadata (feature names, index base of the training file).

    Returns
    -------
    columns : list of str
    rows : list of list

    Raises
    ------
    ValueError
        If the estimator exposes none of these.
    """
    meta = meta or {}
    names = feature_names(est, meta)
    base = 0 if meta.get("zero_based") in (True, None) else 1
    if hasattr(est, "selected_features_"):
        sel = np.asarray(est.selected_features_)
        d = np.asarray(est.d_)
        d = d if d.ndim == 1 else np.abs(d).max(axis=0)
        wmax = np.abs(selected_weights(est)).max(axis=0)
        cols = ["rank", "feature", "file_index", "name", "d", "max_abs_coef"]
        rows = []
        for r, j in enumerate(sel):
            virtual = getattr(est, "family_", None) is not None
            rows.append(
                [
                    r + 1,
                    int(j),
                    "" if virtual else int(j) + base,
                    names[j] if names and not virtual and j < len(names) else "",
                    float(d[r]) if r < d.size else "",
                    float(wmax[r]),
                ]
            )
        return cols, rows
    if hasattr(est, "features_"):
        F = np.asarray(est.features_)
        norms = feature_weight_norms(est)
        freq = getattr(est, "frequencies_", None)
        if freq is None:  # Gabor and other families: their own parameters
            cols = ["rank", "weight_norm"] + [f"param_{k}" for k in range(F.shape[1])]
            return cols, [[r + 1, float(norms[r])] + [float(v) for v in F[r]]
                          for r in range(F.shape[0])]
        # Fourier: features_ holds the directions on the standardised inputs, which
        # read as raw-unit frequencies of the named columns they are not; written
        # instead: feature r is cos/sin(x @ frequencies_[r] + phases_[r]) on the raw x
        freq, phase = np.asarray(freq), np.asarray(est.phases_)
        cols = (["rank", "weight_norm", "bandwidth_standardised"]
                + [f"frequency[{names[j] if names and j < len(names) else j}]"
                   for j in range(freq.shape[1])] + ["phase"])
        return cols, [[r + 1, float(norms[r]), float(F[r, -1])]
                      + [float(v) for v in freq[r]] + [float(phase[r])]
                      for r in range(F.shape[0])]
    if hasattr(est, "kernel_weights_"):
        labels = _fitted_kernel_labels(est)
        rows = [
            [j, labels[j] if j < len(labels) else "", float(w)]
            for j, w in enumerate(est.kernel_weights_)
        ]
        shared = getattr(est, "shared_kernel_weights_", None)
        if shared is None:
            return ["kernel", "spec", "weight"], rows
        # multitask MKL: the weight of each kernel's shared block (zero with
        # shared=False) completes the task-specific one
        for r, v in zip(rows, shared):
            r.append(float(v))
        return ["kernel", "spec", "weight", "shared_weight"], rows
    if hasattr(est, "mu_"):
        idx = est.column_indices_
        if np.ndim(est.mu_) == 2:  # the SLKL classifier: one mu per output
            return ["output", "column", "training_row", "mu"], [
                [t, k, int(idx[k]), float(m)]
                for t, mu in enumerate(est.mu_) for k, m in enumerate(mu) if m > 0
            ]
        return ["column", "training_row", "mu"], [
            [k, int(idx[k]), float(m)] for k, m in enumerate(est.mu_) if m > 0
        ]
    raise ValueError(f"{type(est).__name__} exposes no selected features or weights")


def selected_weights(est):
    """Weights of an FGM model's selected features, shape ``(n_outputs, n_selected)``.

    Columns in the order of ``selected_features_``.  With ``family=`` the
    weights are read at the selected virtual ids only: a degree-2 family of
    200,000 inputs has 4e10 virtual columns, which ``toarray()`` cannot hold.

    Parameters
    ----------
    est : FGMClassifier or FGMRegressor
        A fitted model.

    Returns
    -------
    weights : ndarray of shape (n_outputs, n_selected)
    """
    from .methods.fgm import _coef_at

    sel = np.asarray(est.selected_features_, dtype=np.int64)
    if getattr(est, "family_", None) is not None:
        return _coef_at(est.column_coef_, sel).T
    return np.atleast_2d(est.coef_)[:, sel]


def feature_weight_norms(est):
    """Norm of each learned feature's weights (GrFL's ``features_``).

    The Frobenius norm of the feature's columns of ``column_coef_`` (its cosine and
    sine, over the tasks or classes): the norm its group penalty weighs.

    Parameters
    ----------
    est : estimator
        A fitted estimator with ``features_``, ``feature_scales_`` and
        ``column_coef_``.

    Returns
    -------
    norms : ndarray of shape (n_features_kept,)
        Infinite only where the norm itself is beyond the float range.
    """
    coef = np.atleast_2d(np.asarray(est.column_coef_, dtype=float))
    gs = est.feature_scales_.shape[1] if est.feature_scales_.ndim == 2 else 1
    blocks = coef.reshape(coef.shape[0], len(est.features_), gs)
    # Squares overflow beyond ~1.3e154 (weights of 1e308 gave norms of inf and
    # "overflow encountered in multiply"): such weights are summed at a power
    # of two below 1, which scales every square exactly, and the norm scaled back.
    shift = int(np.frexp(np.max(np.abs(blocks), initial=0.0))[1]) if blocks.size else 0
    if shift < 500:
        return np.sqrt((blocks * blocks).sum(axis=(0, 2)))
    blocks = np.ldexp(blocks, -shift)
    with np.errstate(over="ignore"):  # (a norm beyond the float range is inf)
        return np.ldexp(np.sqrt((blocks * blocks).sum(axis=(0, 2))), shift)


def feature_names(est, meta=None):
    """Names of the input columns: the model file's, else the fitted DataFrame's.

    Parameters
    ----------
    est : estimator
        A fitted estimator.
    meta : dict, optional
        Model metadata (``feature_names`` of the training file).

    Returns
    -------
    names : list of str or None
    """
    names = (meta or {}).get("feature_names")
    if names is None and getattr(est, "feature_names_in_", None) is not None:
        # a DataFrame's column names (the Python API): they were left out
        names = [str(c) for c in est.feature_names_in_]
    return names


def _fitted_kernel_labels(est):
    """A label per kernel of ``kernel_weights_``: as the user wrote the list, or
    (the default list) from the fitted kernel list.

    The default lists were labelled ``rbf(gamma=mean), linear`` whatever they
    held (OBSCURE's four kernels: the second RBF was called linear); their
    data-driven parameters are shown as resolved on the training data.
    """
    fitted = getattr(est, "kernel_list_", None)  # OBSCURE
    if fitted is None:
        fitted = getattr(est, "kernels_", None)  # multitask MKL
    specs = getattr(fitted, "specs", None) or getattr(fitted, "specs_", None)
    params = getattr(fitted, "params_", None)
    if not specs or params is None:  # precomputed Gram matrices
        labels = [f"kernel {j}" for j in range(len(est.kernel_weights_))]
    else:
        labels = [_spec_label((kernel, {k: float(f"{v:.4g}") if isinstance(v, float) else v
                                        for k, v in p.items()}))
                  for (kernel, _, _), p in zip(specs, params)]
    given = est.get_params().get("kernels")
    if isinstance(given, (list, tuple)):
        # the user's kernels as written; a kernel the fit appended to them
        # (fit_intercept's constant, the last weight) keeps its fitted label
        # (it had none: "" in the table, its position "2" on the plot)
        return [_spec_label(s) for s in given] + labels[len(given):]
    return labels


def _spec_label(spec):
    if isinstance(spec, str):
        return spec
    if callable(spec):
        return getattr(spec, "__name__", "callable")
    kernel = spec[0] if isinstance(spec[0], str) else getattr(spec[0], "__name__", "?")
    params = spec[1] if len(spec) > 1 and spec[1] else {}
    return kernel + (
        "(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else ""
    )
