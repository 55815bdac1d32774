"""Data: svmlight/LIBSVM files, named real data sets, and the papers' generators.

Real data sets are read from a data folder: ``$KERNLEARN_DATA`` when set,
otherwise ``../shared/datasets`` next to the source checkout.  Nothing is ever
downloaded.  Loaders raise :class:`DatasetNotFoundError` (a
``FileNotFoundError``) naming the missing file, so tests and benchmarks can
skip with a clear reason.
"""

import bz2
import gzip
import io
import lzma
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DatasetNotFoundError",
    "available_datasets",
    "data_home",
    "load_dataset",
    "load_svmlight",
    "make_fgm_group_synthetic",
    "make_fgm_synthetic",
    "make_sinc",
]


class DatasetNotFoundError(FileNotFoundError):
    """A named data set is not in the data folder."""


def data_home():
    """Folder holding the real data sets.

    Returns
    -------
    path : pathlib.Path
        ``$KERNLEARN_DATA`` if set, else ``<checkout>/../shared/datasets``.
    """
    env = os.environ.get("KERNLEARN_DATA")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        cand = parent.parent / "shared" / "datasets"
        if (parent / "pyproject.toml").exists() and cand.is_dir():
            return cand
    return Path.cwd().parent / "shared" / "datasets"


def _open(path):
    path = Path(path)
    if not path.exists():
        raise DatasetNotFoundError(f"data file not found: {path}")
    opener = {".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}.get(path.suffix, open)
    return opener(path, "rb")


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
        raise ValueError(f"corrupt svmlight file {path}: {exc}") from exc
    X = sp.csr_matrix(X)
    if X.nnz < 2**31 and max(X.shape) < 2**31:
        X.indices = X.indices.astype(np.int32)
        X.indptr = X.indptr.astype(np.int32)
    return X, y


def _csv(path, skip_header=1):
    with _open(path) as fh:
        return np.genfromtxt(fh, delimiter=",", skip_header=skip_header)


def _svm_pair(folder, train, test, n_features):
    home = data_home() / folder
    Xtr, ytr = load_svmlight(home / train, n_features=n_features)
    Xte, yte = load_svmlight(home / test, n_features=n_features)
    return Xtr, ytr, Xte, yte


def _load_a9a():
    return _svm_pair("a9a", "a9a.bz2", "a9a.t.bz2", 123)


def _load_ijcnn1():
    return _svm_pair("ijcnn1", "ijcnn1.trn.bz2", "ijcnn1.tst.bz2", 22)


def _load_usps():
    out = []
    for name in ("zip.train.gz", "zip.test.gz"):
        with _open(data_home() / "usps" / name) as fh:
            arr = np.loadtxt(fh)
        out += [arr[:, 1:], arr[:, 0].astype(int)]
    return tuple(out)


def _load_mfeat():
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
    return views, y


def _load_csv_last_label(folder, name):
    import csv

    with _open(data_home() / folder / name) as fh:
        rows = list(csv.reader(io.TextIOWrapper(fh)))[1:]
    X = np.array([[float(v) for v in r[:-1]] for r in rows])
    labels = np.array([r[-1].strip().strip("'\"") for r in rows])
    return X, labels


def _load_regression_svm(folder, name):
    return load_svmlight(data_home() / folder / name)


def _load_cal_housing():
    arr = _csv(data_home() / "cal_housing" / "cal_housing.data.xz")
    return arr[:, :-1], arr[:, -1]


def _load_school():
    from scipy.io import loadmat

    path = data_home() / "school" / "school.mat"
    if not path.exists():
        raise DatasetNotFoundError(f"data file not found: {path}")
    mat = loadmat(path)
    Xs = [np.asarray(x, dtype=float) for x in mat["X"].ravel()]
    ys = [np.asarray(v, dtype=float).ravel() for v in mat["Y"].ravel()]
    return Xs, ys


def _load_wine():
    path = data_home() / "wine" / "wine.data"
    if not path.exists():
        raise DatasetNotFoundError(f"data file not found: {path}")
    arr = np.loadtxt(path, delimiter=",")
    return arr[:, 1:], arr[:, 0].astype(int)


def _load_brodatz():
    home = data_home() / "brodatz"
    images = {}
    for name in ("D2", "D29", "D92"):
        path = home / f"{name}.png"
        if not path.exists():
            raise DatasetNotFoundError(f"data file not found: {path}")
        try:
            from PIL import Image
        except ImportError as exc:  # pragma: no cover - optional extra
            raise ImportError("reading brodatz needs pillow: pip install kernlearn[image]") from exc
        images[name] = np.asarray(Image.open(path).convert("L"), dtype=float) / 255.0
    return images


_LOADERS = {
    "a9a": (_load_a9a, "Xtr, ytr, Xte, yte (CSR, labels -1/+1)"),
    "ijcnn1": (_load_ijcnn1, "Xtr, ytr, Xte, yte (CSR, labels -1/+1)"),
    "usps": (_load_usps, "Xtr, ytr, Xte, yte (dense, digits 0-9)"),
    "mfeat": (_load_mfeat, "views (dict name -> array), y (classes 1-10)"),
    "letter": (lambda: _load_csv_last_label("letter", "letter.csv.xz"), "X, labels"),
    "pendigits": (lambda: _load_csv_last_label("pendigits", "pendigits.csv.xz"), "X, labels"),
    "abalone": (lambda: _load_regression_svm("abalone", "abalone_scale.bz2"), "X (CSR), y"),
    "housing": (lambda: _load_regression_svm("housing", "housing_scale.bz2"), "X (CSR), y"),
    "cal_housing": (_load_cal_housing, "X, y (dense)"),
    "school": (_load_school, "list of X_t, list of y_t (139 tasks)"),
    "wine": (_load_wine, "X, y"),
    "brodatz": (_load_brodatz, "dict name -> 300x300 float image"),
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
    data : tuple or dict
        See ``describe`` in the error message for the layout of each set.

    Raises
    ------
    ValueError
        Unknown name.
    DatasetNotFoundError
        The files are not in the data folder.
    """
    if name not in _LOADERS:
        raise ValueError(f"Unknown dataset {name!r}; choose one of {sorted(_LOADERS)}.")
    return _LOADERS[name][0]()


def make_fgm_synthetic(
    n_samples=4096,
    n_features=4096,
    n_informative=400,
    weight_type="I",
    n_test=0,
    density=1.0,
    dtype=np.float64,
    random_state=None,
):
    r"""The FGM paper's synthetic feature-selection data (paper 002, sec. 6.2.1).

    ``X`` has i.i.d. :math:`N(0, 1)` entries (or, with ``density < 1``, the
    entries of such a matrix kept at that sampling rate, as in sec. 6.2.3).
    The ground truth :math:`w_0` has ``n_informative`` non-zeros at random
    positions, drawn from :math:`U(0, 1)`; the three weightings of Fig. 1(a)
    are Type I: :math:`w = w_0`, Type II: :math:`w = w_0^{0.3}` (flatter) and
    Type III: :math:`w = w_0^3` (sharper decrease).  The labels are noise-free,
    :math:`y = \mathrm{sign}(Xw)`.  For one ``random_state`` the three types
    share ``X``, the support and :math:`w_0`, so they differ only in the
    weighting, as in the paper's Fig. 2.

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

    Returns
    -------
    X, y : training data
    X_test, y_test : test data (only when ``n_test > 0``)
    w : ndarray of shape (n_features,)
        Ground truth, non-negative; ``np.flatnonzero(w)`` are the informative
        features.
    """
    if weight_type not in ("I", "II", "III"):
        raise ValueError(f"weight_type must be 'I', 'II' or 'III', got {weight_type!r}.")
    if not 0 < n_informative <= n_features:
        raise ValueError("n_informative must be in [1, n_features].")
    if not 0 < density <= 1:
        raise ValueError("density must be in (0, 1].")
    rng = np.random.default_rng(random_state)
    w = np.zeros(n_features)
    support = rng.choice(n_features, n_informative, replace=False)
    # rng.random is on [0, 1); 1 - it is on (0, 1], so no informative weight is
    # exactly 0 (the smallest, 2**-53, stays positive even cubed).
    w0 = 1.0 - rng.random(n_informative)
    w[support] = w0 ** {"I": 1.0, "II": 0.3, "III": 3.0}[weight_type]

    return _gaussian_sign_data(rng, w, n_samples, n_test, density, dtype) + (w,)


def _gaussian_sign_data(rng, w, n_samples, n_test, density=1.0, dtype=np.float64):
    """``(X, y[, X_test, y_test])`` with N(0, 1) entries (kept at ``density``), y = sign(Xw)."""

    def draw(n):
        if density >= 1:
            X = rng.standard_normal((n, w.size)).astype(dtype)
        else:
            X = sp.random(
                n, w.size, density=density, format="csr", dtype=dtype,
                random_state=rng, data_rvs=rng.standard_normal,
            )
        y = np.sign(X @ w)
        y[y == 0] = 1.0
        return X, y

    return draw(n_samples) + (draw(n_test) if n_test else ())


def make_fgm_group_synthetic(
    n_samples=4096,
    n_features=20_000,
    group_size=10,
    n_informative_groups=100,
    n_test=0,
    random_state=None,
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
    random_state : int or None
        Seed.

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
    return _gaussian_sign_data(rng, w, n_samples, n_test) + (w, groups)


def make_sinc(n_samples=1000, n_test=1000, snr_db=10.0, random_state=None):
    r"""Noisy sinc regression (paper 003, sec. 5): :math:`y = \mathrm{sinc}(x) + e`.

    Training inputs are uniform on [-10, 10] (one feature); Gaussian noise is
    added at the given signal-to-noise ratio; test targets are clean.

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
    """
    rng = np.random.default_rng(random_state)
    X = rng.uniform(-10, 10, (n_samples, 1))
    X_test = rng.uniform(-10, 10, (n_test, 1))
    f = np.sinc(X[:, 0] / np.pi)
    noise_var = np.mean(f**2) / 10 ** (snr_db / 10)
    y = f + rng.normal(0, np.sqrt(noise_var), n_samples)
    return X, y, X_test, np.sinc(X_test[:, 0] / np.pi)
