"""Data: svmlight/LIBSVM files, named real data sets, and the papers' generators.

Real data sets are read from a data folder: ``$KERNLEARN_DATA`` when set,
otherwise ``../shared/datasets`` next to the source checkout.  Nothing is ever
downloaded.  Loaders raise :class:`DatasetNotFoundError` (a
``FileNotFoundError``) naming the missing file, so tests and benchmarks can
skip with a clear reason.
"""

import io
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._libsvm_lines import first_bad_line
from .datafiles import data_home

__all__ = [
    "DatasetNotFoundError",
    "FeatureCountError",
    "IndexBaseError",
    "SvmlightChunks",
    "available_datasets",
    "data_home",
    "load_data_file",
    "load_dataset",
    "load_svmlight",
    "make_brodatz_patches",
    "make_fgm_group_synthetic",
    "make_fgm_synthetic",
    "make_obscure_synthetic",
    "make_sinc",
    "write_fgm_synthetic_svmlight",
]


def load_svmlight(path, n_features=None, dtype=np.float64):
    """Load an svmlight/LIBSVM file, plain or compressed (.bz2, .gz, .xz).

    Parameters
    ----------
    path : str or path-like
        File to read.
    n_features : int, optional
        Number of columns (pass the training file's for a test file).
    dtype : dtype, default=float64
        Value type.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        With 32-bit indices when they fit.
    y : ndarray of shape (n_samples,)

    Raises
    ------
    DatasetNotFoundError
        If the file does not exist.
    ValueError
        If the file is not valid svmlight text.
    """
    from sklearn.datasets import load_svmlight_file

    with _open(path) as fh:
        raw = fh.read()
    if not raw.strip():
        raise ValueError(f"svmlight file {path} is empty.")
    try:
        X, y = load_svmlight_file(io.BytesIO(raw), n_features=n_features, dtype=dtype)
    except Exception as exc:  # sklearn raises ValueError / RuntimeError variants
        bad = first_bad_line(raw)  # (sklearn's message names no line)
        msg = exc if bad is None else f"line {bad[0] + 1}: {bad[1]}."
        raise ValueError(f"corrupt svmlight file {path}: {msg}") from exc
    X = sp.csr_matrix(X)
    if X.nnz < 2**31 and max(X.shape) < 2**31:
        X.indices = X.indices.astype(np.int32)
        X.indptr = X.indptr.astype(np.int32)
    return X, y


def _csv(path, skip_header=1):
    with _open(path) as fh:
        return np.genfromtxt(fh, delimiter=",", skip_header=skip_header)


def _split_bunch(Xtr, ytr, Xte, yte, descr):
    from sklearn.utils import Bunch

    return Bunch(data=Xtr, target=ytr, data_test=Xte, target_test=yte, DESCR=descr)


def _bunch(X, y, descr, **extra):
    from sklearn.utils import Bunch

    return Bunch(data=X, target=y, DESCR=descr, **extra)


def _svm_pair(folder, train, test, n_features, descr):
    home = data_home() / folder
    Xtr, ytr = load_svmlight(home / train, n_features=n_features)
    Xte, yte = load_svmlight(home / test, n_features=n_features)
    return _split_bunch(Xtr, ytr, Xte, yte, descr)


def _load_a9a(descr):
    return _svm_pair("a9a", "a9a.bz2", "a9a.t.bz2", 123, descr)


def _load_ijcnn1(descr):
    return _svm_pair("ijcnn1", "ijcnn1.trn.bz2", "ijcnn1.tst.bz2", 22, descr)


def _load_usps(descr):
    out = []
    for name in ("zip.train.gz", "zip.test.gz"):
        with _open(data_home() / "usps" / name) as fh:
            arr = np.loadtxt(fh)
        out += [arr[:, 1:], arr[:, 0].astype(int)]
    return _split_bunch(*out, descr)


def _load_mfeat(descr):
    home = data_home() / "mfeat"
    views = {}
    y = None
    for view in ("factors", "karhunen", "morphological", "pixel", "zernike"):
        arr = _csv(home / f"mfeat-{view}.csv.xz")
        views[view] = arr[:, :-1]
        y = arr[:, -1].astype(int)
    with _open(home / "mfeat-fou.txt.xz") as fh:
        fou = np.loadtxt(fh)
    views["fourier"] = fou[:, 1:]
    if not np.array_equal(fou[:, 0].astype(int), y):
        raise ValueError("mfeat views disagree on the class order.")
    names = sorted(views)
    feature_names = np.array([f"{v}_{j}" for v in names for j in range(views[v].shape[1])],
                             dtype=object)
    return _bunch(np.hstack([views[v] for v in names]), y, descr, views=views,
                  view_names=names, feature_names=feature_names)


def _load_csv_last_label(folder, name, descr):
    import csv

    with _open(data_home() / folder / name) as fh:
        rows = list(csv.reader(io.TextIOWrapper(fh)))
    header, rows = rows[0], rows[1:]
    X = np.array([[float(v) for v in r[:-1]] for r in rows])
    labels = np.array([r[-1].strip().strip("'\"") for r in rows])
    return _bunch(X, labels, descr,
                  feature_names=np.array([h.strip() for h in header[:-1]], dtype=object))


def _load_regression_svm(folder, name, descr):
    return _bunch(*load_svmlight(data_home() / folder / name), descr)


def _load_cal_housing(descr):
    arr = _csv(data_home() / "cal_housing" / "cal_housing.data.xz")
    return _bunch(arr[:, :-1], arr[:, -1], descr)


def _load_school(descr):
    from scipy.io import loadmat

    path = data_home() / "school" / "school.mat"
    if not path.exists():
        raise DatasetNotFoundError(f"data file not found: {path}")
    mat = loadmat(path)
    Xs = [np.asarray(x, dtype=float) for x in mat["X"].ravel()]
    ys = [np.asarray(v, dtype=float).ravel() for v in mat["Y"].ravel()]
    tasks = np.concatenate([np.full(len(t), i) for i, t in enumerate(ys)])
    return _bunch(np.vstack(Xs), np.concatenate(ys), descr, task_index=tasks)


def _load_wine(descr):
    path = data_home() / "wine" / "wine.data"
    if not path.exists():
        raise DatasetNotFoundError(f"data file not found: {path}")
    arr = np.loadtxt(path, delimiter=",")
    return _bunch(arr[:, 1:], arr[:, 0].astype(int), descr)


def _load_brodatz(descr):
    from sklearn.utils import Bunch

    # images, not data/target: as scikit-learn's load_sample_images
    return Bunch(images=brodatz_images(), DESCR=descr)


_LOADERS = {
    "a9a": (_load_a9a, "data, target, data_test, target_test (CSR, labels -1/+1)"),
    "ijcnn1": (_load_ijcnn1, "data, target, data_test, target_test (CSR, labels -1/+1)"),
    "usps": (_load_usps, "data, target, data_test, target_test (dense, digits 0-9)"),
    "mfeat": (_load_mfeat, "data (six views side by side), target (classes 1-10), "
                           "views (dict name -> array), view_names, feature_names"),
    "letter": (lambda d: _load_csv_last_label("letter", "letter.csv.xz", d),
               "data, target (letters), feature_names"),
    "pendigits": (lambda d: _load_csv_last_label("pendigits", "pendigits.csv.xz", d),
                  "data, target (digit labels), feature_names"),
    "abalone": (lambda d: _load_regression_svm("abalone", "abalone_scale.bz2", d),
                "data (CSR), target"),
    "housing": (lambda d: _load_regression_svm("housing", "housing_scale.bz2", d),
                "data (CSR), target"),
    "cal_housing": (_load_cal_housing, "data, target (dense)"),
    "school": (_load_school, "data, target, task_index (139 tasks)"),
    "wine": (_load_wine, "data, target"),
    "brodatz": (_load_brodatz, "images (dict name -> 300x300 float image)"),
}


def available_datasets():
    """Names of the real data sets whose files are present in :func:`data_home`.

    Returns
    -------
    names : list of str
    """
    home = data_home()
    return sorted(name for name in _LOADERS if (home / name).is_dir())


def load_dataset(name):
    """Load a real data set by name from :func:`data_home`.

    Parameters
    ----------
    name : str
        One of ``a9a, ijcnn1, usps, mfeat, letter, pendigits, abalone, housing,
        cal_housing, school, wine, brodatz``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` and ``target``; ``data_test`` and ``target_test`` for the
        sets with an official test split (a9a, ijcnn1, usps);
        ``feature_names`` where the files name the features (letter,
        pendigits, mfeat); ``views`` and ``view_names`` for mfeat (``data``
        holds the views side by side in ``view_names`` order);
        ``task_index`` for school (one task id per row); ``DESCR``.  brodatz
        has no samples and labels: ``images`` (dict name -> image), as
        scikit-learn's ``load_sample_images``.

    Raises
    ------
    ValueError
        Unknown name.
    DatasetNotFoundError
        The files are not in the data folder.

    Examples
    --------
    >>> from kernlearn.datasets import load_dataset
    >>> usps = load_dataset("usps")  # doctest: +SKIP
    >>> usps.data.shape, usps.data_test.shape  # doctest: +SKIP
    ((7291, 256), (2007, 256))
    """
    if name not in _LOADERS:
        raise ValueError(f"Unknown dataset {name!r}; choose one of {sorted(_LOADERS)}.")
    loader, layout = _LOADERS[name]
    return loader(f"{name} (kernlearn.datasets, from {data_home() / name}): {layout}.")


def make_fgm_synthetic(
    n_samples=4096,
    n_features=4096,
    n_informative=400,
    weight_type="I",
    n_test=0,
    density=1.0,
    dtype=np.float64,
    random_state=None,
    labels="dense",
):
    r"""The FGM paper's synthetic feature-selection data (paper 002, sec. 6.2.1).

    ``X`` has i.i.d. :math:`N(0, 1)` entries.  The ground truth :math:`w_0`
    has ``n_informative`` non-zeros at random positions, drawn from
    :math:`U(0, 1)`; the three weightings of Fig. 1(a) are Type I:
    :math:`w = w_0`, Type II: :math:`w = w_0^{0.3}` (flatter) and Type III:
    :math:`w = w_0^3` (sharper decrease).  The labels are noise-free,
    :math:`y = \mathrm{sign}(Xw)` (sec. 6.2.1); ``X`` and ``w`` are
    independent and ``X`` is symmetric, so the classes are balanced in
    expectation.  For one ``random_state`` the three types share ``X``, the
    support and :math:`w_0`, so they differ only in the weighting, as in the
    paper's Fig. 2.

    With ``density < 1`` (sec. 6.2.3: "sampling the entries from
    :math:`X_3` with sampling rate" 0.005 to 1), ``X`` holds the entries of
    such a dense matrix :math:`X_d` kept at that rate, and the labels are
    the dense matrix's, :math:`y = \mathrm{sign}(X_d w)`: still balanced,
    and little predictable from the sampled row (with 400 of 100,000
    informative, the true ``w`` predicts 51.6 % of them at density 0.005,
    58 % at 0.05, 74 % at 0.5).  The paper does not say more; ``labels="sampled"`` is the other reading, the sampled rows'
    own :math:`\mathrm{sign}(Xw)`, whose ties at 0 (rows without a kept
    informative entry, 13.5 % at density 0.005 with 400 of 100,000
    informative) get a fair coin.  Fig. 7 samples one :math:`X_3` at every
    rate; here each call draws its own :math:`X_d`, so the sets of two
    densities (one ``random_state``) are alike in law but not nested.

    Parameters
    ----------
    n_samples, n_features, n_informative : int
        Sizes (the paper: 4096 x 4096 with 400 informative features).
    weight_type : {"I", "II", "III"}
        Weighting of the informative features.
    n_test : int, default=0
        Extra test rows drawn from the same model.
    density : float in (0, 1], default=1.0
        Fraction of non-zeros; below 1 the matrices are CSR.
    dtype : dtype, default=float64
        Value type of ``X``.
    random_state : int or None
        Seed.
    labels : {"dense", "sampled"}, default="dense"
        With ``density < 1``: the labels of the dense matrix sampled, or
        those of the sampled rows (ties by a coin).  Ignored at density 1.

    Returns
    -------
    X, y : training data
    X_test, y_test : test data (only when ``n_test > 0``)
    w : ndarray of shape (n_features,)
        Ground truth, non-negative; ``np.flatnonzero(w)`` are the informative
        features.
    """
    _check_density(density, labels)
    rng = np.random.default_rng(random_state)
    w = _fgm_weights(rng, n_features, n_informative, weight_type)
    return _gaussian_sign_data(rng, w, n_samples, n_test, density, dtype,
                               labels=labels) + (w,)


def _check_density(density, labels):
    if not 0 < density <= 1:
        raise ValueError(f"density must be in (0, 1], got {density!r}.")
    if labels not in ("dense", "sampled"):
        raise ValueError(f"labels must be 'dense' or 'sampled', got {labels!r}.")


def _fgm_weights(rng, n_features, n_informative, weight_type):
    """Ground truth of :func:`make_fgm_synthetic`: sparse, weighted by type."""
    if weight_type not in ("I", "II", "III"):
        raise ValueError(f"weight_type must be 'I', 'II' or 'III', got {weight_type!r}.")
    if not 0 < n_informative <= n_features:
        raise ValueError("n_informative must be in [1, n_features].")
    w = np.zeros(n_features)
    support = rng.choice(n_features, n_informative, replace=False)
    # rng.random is on [0, 1); 1 - it is on (0, 1], so no informative weight is
    # exactly 0 (the smallest, 2**-53, stays positive even cubed).
    w0 = 1.0 - rng.random(n_informative)
    w[support] = w0 ** {"I": 1.0, "II": 0.3, "III": 3.0}[weight_type]
    return w


def write_fgm_synthetic_svmlight(
    path,
    n_samples,
    n_features=None,
    n_informative=None,
    *,
    weight_type="I",
    density=1e-4,
    chunk_rows=50_000,
    decimals=4,
    w=None,
    random_state=None,
    labels="dense",
):
    r"""Write :func:`make_fgm_synthetic` data of any size to an svmlight file, chunk by chunk.

    The sparse large-scale setting of paper 002 (sec. 6.2.3): the entries of
    a dense :math:`N(0, 1)` matrix :math:`X_d` kept at ``density``, labelled
    :math:`y = \mathrm{sign}(X_d w)` as in :func:`make_fgm_synthetic`.  Rows
    are drawn and written ``chunk_rows`` at a time, so memory does not grow
    with ``n_samples``.

    Parameters
    ----------
    path : str or path-like
        File to (over)write.
    n_samples : int
        Rows.
    n_features, n_informative : int
        Sizes of the ground truth (not needed when ``w`` is given).
    weight_type : {"I", "II", "III"}, default="I"
        Weighting of the informative features (see :func:`make_fgm_synthetic`).
    density : float in (0, 1], default=1e-4
        Fraction of non-zeros (the paper's rates are 0.005 to 1; the default
        suits sets of millions of rows by 10^5 features).
    chunk_rows : int, default=50_000
        Rows drawn and written at a time.
    decimals : int or None, default=4
        Entries are rounded to this many decimals (a short file; the labels
        are computed from the rounded entries).
    w : ndarray of shape (n_features,), optional
        Use this ground truth (e.g. the one returned for a training file, to
        write its test file) instead of drawing one.
    random_state : int or None
        Seed.
    labels : {"dense", "sampled"}, default="dense"
        Labels of the dense matrix, or of the sampled rows (see
        :func:`make_fgm_synthetic`).

    Returns
    -------
    w : ndarray of shape (n_features,)
        Ground truth.
    """
    from sklearn.datasets import dump_svmlight_file

    _check_density(density, labels)
    if chunk_rows < 1 or n_samples < 1:
        raise ValueError("n_samples and chunk_rows must be positive.")
    n_chunks = -(-n_samples // chunk_rows)
    seeds = np.random.SeedSequence(random_state).spawn(n_chunks + 1)
    if w is None:
        if n_features is None or n_informative is None:
            raise ValueError("give n_features and n_informative, or w.")
        w = _fgm_weights(np.random.default_rng(seeds[0]), n_features, n_informative,
                         weight_type)
    from .io import write_atomically

    w = np.asarray(w, dtype=float)

    def write(tmp):  # (written in place, an interrupt left a shorter data file)
        with open(tmp, "wb") as fh:
            for i in range(n_chunks):
                rows = min(chunk_rows, n_samples - i * chunk_rows)
                X, y = _gaussian_sign_data(np.random.default_rng(seeds[i + 1]), w, rows,
                                           0, density, decimals=decimals, labels=labels)
                dump_svmlight_file(X, y, fh, zero_based=True)

    write_atomically(path, write)
    return w


def _gaussian_sign_data(rng, w, n_samples, n_test, density=1.0, dtype=np.float64,
                        decimals=None, out=None, labels="dense"):
    """``(X, y[, X_test, y_test])``: N(0, 1) entries, y = sign(Xw) (paper 002, 6.2).

    Below ``density`` 1, ``X`` holds the entries of such a dense matrix
    sampled at that rate and ``y`` are the dense matrix's labels
    (:func:`_sampled_labels`), or with ``labels="sampled"`` the sampled
    rows' own signs, ties (rows without a kept informative entry) broken by a
    fair coin.  ``decimals`` rounds the entries (before the
    labels are computed), which keeps a text file of them short.  ``out``
    (dense only) receives the training ``X`` instead of a new array.
    """
    # an integer X held the N(0, 1) draws truncated (mostly zeros), silently
    kind = np.dtype(dtype) if out is None else out.dtype
    if not np.issubdtype(kind, np.floating):
        raise ValueError(f"dtype must be a floating type, got {kind}.")

    def draw(n, out=None):
        if density < 1:
            X = sp.random(
                n, w.size, density=density, format="csr", dtype=dtype,
                random_state=rng, data_rvs=rng.standard_normal,
            )
            if decimals is not None:
                X.data = np.round(X.data, decimals)
            if labels == "dense":
                return X, _sampled_labels(rng, X, w, dtype, decimals)
            y = np.sign(X @ w)
            tie = np.flatnonzero(y == 0)
            y[tie] = rng.choice([-1.0, 1.0], tie.size)
            return X, y
        # Row chunks: the same random stream as one (n, m) draw, without a
        # float64 copy of a float32 X (and X @ w per chunk, for the same reason).
        X = np.empty((n, w.size), dtype=dtype) if out is None else out
        y = np.empty(n)
        step = max(1, 2**24 // max(w.size, 1))
        for s in range(0, n, step):
            X[s : s + step] = rng.standard_normal((min(step, n - s), w.size))
            if decimals is not None:
                X[s : s + step] = np.round(X[s : s + step], decimals)
            y[s : s + step] = np.sign(X[s : s + step] @ w)
        y[y == 0] = 1.0  # probability 0 (the entries are continuous)
        return X, y

    return draw(n_samples, out) + (draw(n_test) if n_test else ())


def _sampled_labels(rng, X, w, dtype, decimals):
    r"""Labels of the dense matrix whose entries the CSR ``X`` samples (sec. 6.2.3).

    Paper 002 labels the dense Gaussian :math:`X_3` by :math:`y =
    \mathrm{sign}(X_3 w)` (sec. 6.2.1) and makes its sparse sets by "sampling
    the entries from :math:`X_3`" (sec. 6.2.3): the labels stay
    :math:`X_3`'s.  Only the informative columns of :math:`X_3` matter, so
    they are drawn in full here (in row blocks, to bound memory) and ``X``'s
    kept entries in those columns are overwritten with theirs.  (Labelling
    ``sign(Xw)`` of the sampled ``X`` instead ties every row that keeps no
    informative entry at 0 -- 13.5 % of the rows at density 0.005 with 400 of
    100,000 features informative -- and all of those would be +1.)
    """
    support = np.flatnonzero(w)
    k, n = support.size, X.shape[0]
    pos = np.full(w.size, -1)
    pos[support] = np.arange(k)
    rows_of = np.repeat(np.arange(n), np.diff(X.indptr))
    kept = np.flatnonzero(pos[X.indices] >= 0)  # entries in informative columns
    y = np.empty(n)
    step = max(1, 2**22 // max(k, 1))
    for s in range(0, n, step):
        e = min(n, s + step)
        Z = rng.standard_normal((e - s, k)).astype(dtype)
        if decimals is not None:
            Z = np.round(Z, decimals)
        y[s:e] = np.sign(Z @ w[support])
        lo, hi = np.searchsorted(kept, [X.indptr[s], X.indptr[e]])
        ent = kept[lo:hi]
        X.data[ent] = Z[rows_of[ent] - s, pos[X.indices[ent]]]
    y[y == 0] = 1.0  # probability 0 (informative weights are non-zero)
    return y


def make_fgm_group_synthetic(
    n_samples=4096,
    n_features=20_000,
    group_size=10,
    n_informative_groups=100,
    n_test=0,
    dtype=np.float64,
    random_state=None,
    out=None,
):
    r"""The FGM paper's synthetic group-selection data (paper 002, sec. 7.2).

    ``X`` has i.i.d. :math:`N(0, 1)` entries; its features form consecutive
    groups of ``group_size``; ``n_informative_groups`` groups chosen at random
    carry ground-truth weights drawn i.i.d. from :math:`N(0, 1)` (all other
    weights are 0) and :math:`y = \mathrm{sign}(Xw)`, noise-free.  The paper
    uses n = 4096, m = 20,000 or 400,000, groups of 10, 100 informative
    groups and 2000 test points.

    Parameters
    ----------
    n_samples, n_features : int
        Sizes; ``n_features`` must be a multiple of ``group_size``.
    group_size : int, default=10
        Features per group.
    n_informative_groups : int, default=100
        Groups with non-zero weights.
    n_test : int, default=0
        Extra test rows drawn from the same model.
    dtype : dtype, default=float64
        Value type of ``X`` (float32 halves the memory of the large sets).
    random_state : int or None
        Seed.
    out : ndarray of shape (n_samples, n_features), optional
        Filled with the training ``X`` (row chunk by row chunk) and returned in
        its place: a ``numpy.lib.format.open_memmap`` file holds the paper's
        m = 400,000 set (6.5 GB in float32) without it ever being in memory.
        The data are the same as without ``out``.

    Returns
    -------
    X, y : training data
    X_test, y_test : test data (only when ``n_test > 0``)
    w : ndarray of shape (n_features,)
        Ground truth.
    groups : list of ndarray
        The feature indices of each group (pass as ``FGMClassifier(groups=...)``);
        the informative groups are ``np.unique(np.flatnonzero(w) // group_size)``.
    """
    if group_size < 1 or n_features % group_size:
        raise ValueError(
            f"n_features ({n_features}) must be a positive multiple of group_size "
            f"({group_size})."
        )
    n_groups = n_features // group_size
    if not 0 < n_informative_groups <= n_groups:
        raise ValueError(f"n_informative_groups must be in [1, {n_groups}].")
    rng = np.random.default_rng(random_state)
    w = np.zeros(n_features)
    chosen = rng.choice(n_groups, n_informative_groups, replace=False)
    cols = (chosen[:, None] * group_size + np.arange(group_size)).ravel()
    w[cols] = rng.standard_normal(cols.size)
    groups = [np.arange(g * group_size, (g + 1) * group_size) for g in range(n_groups)]
    if out is not None and out.shape != (n_samples, n_features):
        raise ValueError(f"out has shape {out.shape}; expected {(n_samples, n_features)}.")
    return _gaussian_sign_data(rng, w, n_samples, n_test, dtype=dtype, out=out) + (w, groups)


def make_sinc(n_samples=1000, n_test=1000, snr_db=10.0, random_state=None):
    r"""Noisy 2-D sinc regression of paper 003, sec. 5.1.

    :math:`y = \sin(\|x\|)/\|x\| + e` with :math:`x` uniform on
    :math:`[-5, 5]^2`; white Gaussian noise at the given signal-to-noise ratio
    is added to the training targets, test targets are clean (the paper: 1000
    noisy training and 1000 clean test points, 10 dB).  The signal's power is
    the mean square of the clean training targets (the paper does not say).

    Parameters
    ----------
    n_samples, n_test : int
        Training and test sizes.
    snr_db : float, default=10.0
        Signal-to-noise ratio in decibels.
    random_state : int or None
        Seed.

    Returns
    -------
    X, y, X_test, y_test : ndarrays
        ``X`` and ``X_test`` have two columns.
    """
    if not snr_db > -np.inf:  # NaN made every training target NaN, silently
        raise ValueError(f"snr_db must be a number of decibels (inf: no noise), got "
                         f"{snr_db!r}.")
    rng = np.random.default_rng(random_state)
    X = rng.uniform(-5, 5, (n_samples, 2))
    X_test = rng.uniform(-5, 5, (n_test, 2))

    def f(Z):  # sin(r)/r, with the limit 1 at r = 0 (np.sinc(t) = sin(pi t)/(pi t))
        return np.sinc(np.linalg.norm(Z, axis=1) / np.pi)

    fX = f(X)
    noise_var = np.mean(fX**2) / 10 ** (snr_db / 10)
    y = fX + rng.normal(0, np.sqrt(noise_var), n_samples)
    return X, y, X_test, f(X_test)


# The generators of papers 000 (sec. 6.2) and 001 (sec. 5.2) live in modules of their own.
from ._generators_grfl import brodatz_images, make_brodatz_patches  # noqa: E402, F401
from ._generators_obscure import make_obscure_synthetic  # noqa: E402

# ------------------------------------------------------------- any data file
_TABULAR_SETS = {
    # name -> how to get (X, y) for the train and test parts
    "a9a": "split", "ijcnn1": "split", "usps": "split",
    "letter": "single", "pendigits": "single", "abalone": "single",
    "housing": "single", "cal_housing": "single", "wine": "single", "mfeat": "views",
    "school": "tasks",
}


# The readers of data files live in datafiles.py; these names stay importable here.
from .datafiles import (  # noqa: E402, F401
    _MAX_LINE,
    _READ_ERRORS,
    DatasetNotFoundError,
    FeatureCountError,
    IndexBaseError,
    _base_suffix,
    _labels,
    _open,
)
from ._libsvm_lines import parse_chunk as _parse_svmlight_chunk  # noqa: E402
from .utils._packed_text import OPENERS, TextBound  # noqa: E402


def _read_chunk(spec, i):
    """Chunk ``i`` of a :class:`SvmlightChunks` as CSR (a module function with a
    small picklable ``spec``, so Dask workers can read chunks themselves)."""
    path, cache, span, zero_based, width, dtype = spec
    raw_width = width + (not zero_based)
    if cache is not None:
        parts = [np.load(Path(cache) / f"{i}.{name}.npy")
                 for name in ("data", "indices", "indptr")]
        X = sp.csr_matrix(tuple(parts), shape=(len(parts[2]) - 1, raw_width))
    else:
        with open(path, "rb") as fh:
            fh.seek(span[0])
            X, _ = _parse_svmlight_chunk(fh.read(span[1] - span[0]),
                                         f"{path} (byte {span[0]})")
    indices = X.indices if zero_based else X.indices - 1
    small = X.nnz < 2**31 and width < 2**31
    itype = np.int32 if small else np.int64
    return sp.csr_matrix((X.data.astype(dtype, copy=False), indices.astype(itype),
                          X.indptr.astype(itype)), shape=(X.shape[0], width))


class SvmlightChunks:
    """An svmlight/LIBSVM file read in row chunks, never whole (out of core).

    One pass at construction reads the labels (kept in memory: ``n`` floats),
    finds the chunk boundaries and the width, and checks the file.  Each later
    pass holds one chunk at a time.  With ``cache=True`` that first pass also
    stores each parsed chunk in binary form in a temporary folder (about 12
    bytes per non-zero, deleted with this object), so later passes load
    chunks instead of parsing text again (parsing is the slow part).

    Pass it as ``X`` to :class:`~kernlearn.FGMClassifier` or
    :class:`~kernlearn.FGMRegressor` (``fit(chunks, chunks.y)``), or turn it
    into a Dask array with :meth:`to_dask`.

    Parameters
    ----------
    path : str or path-like
        The file (plain, or .gz/.bz2/.xz with ``cache=True``).
    n_features : int, optional
        Columns (default: the largest index in the file).
    chunk_rows : int, optional
        Rows per chunk.  Default: chunks of about ``memory_budget / 4`` bytes
        of text (a parsed chunk and its parsing temporaries take about 3
        times its text).
    memory_budget : int or str, default="256MB"
        Memory for data at a time (ignored when ``chunk_rows`` is given).
    zero_based : bool or "auto", default="auto"
        Whether feature indices start at 0 (``"auto"``: yes if index 0 occurs).
    cache : bool, default=True
        Keep the parsed chunks in binary files for the later passes.
    dtype : dtype, default=float64
        Value type.
    max_table_size : int or str, optional
        Disk space the parsed chunks of a compressed file (``.gz``, ``.bz2``,
        ``.xz``) may take, counted as its text streams in (see
        :func:`~kernlearn.datafiles.load_data_file`).  Default: half the free
        space of the temporary folder.  The labels, kept in memory, are held
        to half the available memory, and past what reading the file in
        memory would take there, its text to 1032 bytes a byte of file.

    Attributes
    ----------
    y : ndarray of shape (n_samples,)
        Labels.
    shape : tuple of int
        ``(n_samples, n_features)``.
    bounds : ndarray of int
        Row offsets of the chunks.
    nnz : int
        Stored entries.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from kernlearn.datasets import SvmlightChunks
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.svm")
    >>> _ = open(path, "w").write("1 1:0.5 3:1\\n-1 2:2\\n1 3:-1\\n")
    >>> chunks = SvmlightChunks(path, chunk_rows=2)
    >>> chunks.shape, chunks.bounds.tolist()
    ((3, 3), [0, 2, 3])
    """

    ndim = 2

    def __init__(self, path, n_features=None, chunk_rows=None, memory_budget="256MB",
                 zero_based="auto", cache=True, dtype=np.float64, max_table_size=None):
        from .partitioned import parse_bytes

        self.path = Path(path)
        if not self.path.exists():
            raise DatasetNotFoundError(f"data file not found: {self.path}")
        if chunk_rows is not None and chunk_rows < 1:
            raise ValueError("chunk_rows must be positive.")
        if zero_based not in (True, False, "auto"):
            raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}.")
        compressed = self.path.suffix.lower() in OPENERS  # (".GZ" is opened as gzip)
        if compressed and not cache:
            raise ValueError(f"{self.path} is compressed: reading its chunks again needs "
                             "cache=True.")
        self.chunk_rows = chunk_rows
        self.chunk_bytes = max(parse_bytes(memory_budget) // 4, 1)
        self._bound = TextBound(path, "chunks", None if max_table_size is None
                                else parse_bytes(max_table_size))
        self.dtype = np.dtype(dtype)
        self._cache, remove = None, lambda: None
        if cache:
            import shutil
            import tempfile
            import weakref

            self._cache = tempfile.mkdtemp(prefix="kernlearn-svmlight-")
            remove = weakref.finalize(self, shutil.rmtree, self._cache, True)
        try:
            self._index(zero_based)
            if n_features is not None and self._width > n_features:
                raise FeatureCountError(f"{self.path} uses {self._width} features, more "
                                        f"than n_features={n_features}.")
        except BaseException:
            # the chunks parsed so far are removed now: the error's traceback
            # holds this object, and a notebook or a log keeping the error kept
            # them on disk (the whole file's, for a refused n_features)
            remove()
            raise
        if n_features is not None:
            self._width = int(n_features)
        self.shape = (int(self.bounds[-1]), self._width)

    def _lines(self):
        """Byte ranges of the chunks: whole lines, ``chunk_rows`` or ``chunk_bytes`` each."""
        read = 1 << 22
        try:  # (a damaged compressed file was an internal error, exit 1)
            with _open(self.path, self._bound) as fh:
                pos, buf = 0, b""
                while True:
                    more = fh.read(read)
                    buf += more
                    # (out of core it was unbounded: a 0.6 MB .svm.gz of 300 MB
                    # read whole, 35 s CPU and 1.1 GB)
                    self._bound.count(more)
                    if len(buf) > _MAX_LINE and buf.find(b"\n") < 0:
                        # (a line without end was held whole, its text counted
                        # nowhere: 1 GB of "1:0 " took 1 GB and quadratic time)
                        raise ValueError(f"{self.path} has a line longer than "
                                         f"{_MAX_LINE} bytes; it is not a data file.")
                    while True:
                        if self.chunk_rows is not None:
                            nl = np.flatnonzero(np.frombuffer(buf, np.uint8) == 10)
                            end = nl[self.chunk_rows - 1] + 1 if len(nl) >= self.chunk_rows else None
                        else:
                            cut = -1
                            if len(buf) >= self.chunk_bytes:
                                cut = buf.rfind(b"\n", 0, self.chunk_bytes)
                                # A line longer than a chunk is a chunk of its own.
                                cut = cut if cut >= 0 else buf.find(b"\n")
                            end = cut + 1 if cut >= 0 else None
                        if end is None:
                            break
                        yield pos, buf[:end]
                        pos, buf = pos + end, buf[end:]
                    if not more:
                        if buf.strip():
                            yield pos, buf
                        return
        except _READ_ERRORS as exc:
            raise ValueError(f"cannot read {self.path}: {exc}") from exc

    def _index(self, zero_based):
        starts, ys, rows, width, has_zero, nnz = [], [], [0], 0, False, 0
        for pos, raw in self._lines():
            X, y = _parse_svmlight_chunk(raw, f"{self.path} (byte {pos})")
            if X.shape[0] == 0:
                continue  # only comments
            i = len(starts)
            starts.append((pos, pos + len(raw)))
            ys.append(y)
            rows.append(rows[-1] + X.shape[0])
            width = max(width, X.shape[1])
            has_zero |= bool(X.nnz and X.indices.min() == 0)
            nnz += X.nnz
            if self._cache is not None:
                self._store(i, X)
        if not starts or rows[-1] == 0:
            raise ValueError(f"svmlight file {self.path} is empty.")
        if zero_based == "auto":
            zero_based = has_zero
        elif not zero_based and has_zero:
            raise IndexBaseError(f"{self.path} uses feature index 0 but zero_based=False.")
        self.zero_based = bool(zero_based)
        self._spans = starts
        self._width = width - (not self.zero_based) if width else 0
        self.bounds = np.asarray(rows, dtype=np.int64)
        self.y = np.concatenate(ys)
        self.nnz = int(nnz)

    def _store(self, i, X):
        for name in ("data", "indices", "indptr"):
            arr = X.data.astype(self.dtype, copy=False) if name == "data" else getattr(X, name)
            np.save(Path(self._cache) / f"{i}.{name}.npy", arr)

    @property
    def n_chunks(self):
        """Number of row chunks."""
        return len(self.bounds) - 1

    def _spec(self, i):
        return (str(self.path), self._cache, self._spans[i], self.zero_based, self._width,
                self.dtype)

    def get_chunk(self, i):
        """Chunk ``i`` as CSR of shape ``(rows of chunk i, n_features)``.

        Parameters
        ----------
        i : int

        Returns
        -------
        X : scipy.sparse.csr_matrix
        """
        return _read_chunk(self._spec(i), i)

    def row_partitioned(self):
        """The chunks as a :class:`~kernlearn.partitioned.RowPartitioned`.

        Returns
        -------
        rows : kernlearn.partitioned.LocalRows
        """
        from .partitioned import LocalRows

        return LocalRows(self.get_chunk, self.bounds, self._width)

    def to_dask(self):
        """A ``dask.array`` whose partitions are the chunks, read by the workers.

        The workers must see the same files (one machine, or a shared file
        system); nothing is read on the client.

        Returns
        -------
        X : dask.array.Array of shape (n_samples, n_features), CSR chunks
        """
        try:
            import dask
            import dask.array as da
        except ImportError as exc:
            raise ImportError(
                f'to_dask needs dask: pip install "kernlearn[dask]" ({exc})') from exc

        meta = sp.csr_matrix((0, self._width), dtype=self.dtype)
        get = dask.delayed(_read_chunk, pure=True)
        return da.concatenate([
            da.from_delayed(get(self._spec(i), i), shape=(int(b - a), self._width),
                            dtype=self.dtype, meta=meta)
            for i, (a, b) in enumerate(zip(self.bounds[:-1], self.bounds[1:]))
        ])

    def __repr__(self):
        return (f"SvmlightChunks({str(self.path)!r}, shape={self.shape}, "
                f"n_chunks={self.n_chunks}, cache={self._cache is not None})")


# ---------------------------------------------------------------- dispatcher
_PARSED = {}


def _named_dataset(spec):
    name, _, part = spec.partition(":")
    kind = _TABULAR_SETS.get(name)
    if kind is None:
        raise ValueError(f"{name!r} is not a tabular data set (choose one of "
                         f"{', '.join(sorted(_TABULAR_SETS))}).")
    part = part or "train"
    if part not in ("train", "test"):
        raise ValueError(f"{spec!r}: the part after ':' must be 'train' or 'test'.")
    # Parsed once per process: a session (or a test run) that fits, evaluates and
    # reports on the same set reads the compressed file only once.
    if name not in _PARSED:
        _PARSED[name] = load_dataset(name)
    data = _PARSED[name]
    if part == "test":
        if kind != "split":
            raise ValueError(f"data set {name} has no test part; use {name!r}.")
        X, y = data.data_test, data.target_test
    else:
        X, y = data.data, data.target
    tasks, names = data.get("task_index"), data.get("feature_names")
    # (names too: the CLI's model of `pendigits` listed none, that of its CSV file did)
    return X.copy(), _labels(y), tasks, None if names is None else [str(n) for n in names]


def load_data_file(source, label=None, n_features=None, zero_based="auto", fmt=None,
                   **kwargs):
    """Read a data file, or a named data set, into ``(X, y, info)``.

    A ``source`` that is not a file but a name listed by
    :func:`available_datasets` (``"a9a"`` is its training part, ``"a9a:test"``
    its test part) is loaded from the data folder; anything else is read by
    :func:`kernlearn.datafiles.load_data_file`, which takes the same
    arguments.

    Parameters
    ----------
    source : str or path-like
        File path or data set name.
    label, n_features, zero_based, fmt, **kwargs
        As for :func:`kernlearn.datafiles.load_data_file`.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_matrix
    y : ndarray or None
    info : dict
    """
    from . import datafiles

    path = Path(source)
    name = str(source).partition(":")[0]
    if path.exists() or name not in _LOADERS:
        return datafiles.load_data_file(source, label=label, n_features=n_features,
                                        zero_based=zero_based, fmt=fmt, **kwargs)
    info = {"format": None, "zero_based": None, "feature_names": None, "tasks": None,
            "label_name": None, "header": None, "sep": None}
    if label is not None:
        raise ValueError("--label applies to CSV and .npy files, not to named "
                         "data sets.")
    X, y, info["tasks"], info["feature_names"] = _named_dataset(str(source))
    info["format"] = "dataset"
    if sp.issparse(X):
        info["zero_based"] = False
    if n_features is not None and X.shape[1] != n_features:
        if sp.issparse(X) and X.shape[1] < n_features:
            X = sp.csr_matrix((X.data, X.indices, X.indptr),
                              shape=(X.shape[0], n_features))
        else:
            raise FeatureCountError(
                f"data set {source} has {X.shape[1]} features; the model "
                f"expects {n_features}.")
    info["n_features"] = X.shape[1]
    return X, y, info
