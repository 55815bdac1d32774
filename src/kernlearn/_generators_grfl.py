r"""The GrFL paper's texture patches (paper 000, sec. 6.2).

Re-exported by :mod:`kernlearn.datasets`.
"""

import numbers

import numpy as np

from .datafiles import DatasetNotFoundError, data_home

__all__ = ["brodatz_images", "make_brodatz_patches"]


def brodatz_images():
    """Brodatz D2, D29 and D92 from :func:`kernlearn.datasets.data_home`.

    Returns
    -------
    images : dict of str to ndarray of shape (300, 300)
        Grey levels in [0, 1] (the ``brodatz`` data set's ``images``).

    Raises
    ------
    DatasetNotFoundError
        When an image file is not in the data folder.
    """
    home = data_home() / "brodatz"
    images = {}
    for name in ("D2", "D29", "D92"):
        path = home / f"{name}.png"
        if not path.exists():
            raise DatasetNotFoundError(f"data file not found: {path}")
        try:
            from PIL import Image
        except ImportError as exc:  # pragma: no cover - optional extra
            raise ImportError('reading brodatz needs pillow: pip install "kernlearn[image]"') from exc
        images[name] = np.asarray(Image.open(path).convert("L"), dtype=float) / 255.0
    return images


def _positions(rng, n, rows, col_lo, col_hi, name, part):
    """``n`` distinct top-left corners, rows ``0..rows`` and columns ``col_lo..col_hi``."""
    n_cols = col_hi - col_lo + 1
    total = max(rows + 1, 0) * max(n_cols, 0)
    if n > total:
        raise ValueError(
            f"{name}: {n} distinct {part} patches asked, but its {part} half has only "
            f"{total} patch positions."
        )
    flat = rng.choice(total, size=n, replace=False)
    return flat // n_cols, col_lo + flat % n_cols


def make_brodatz_patches(n_train=1000, n_test=5000, patch_size=16, images=None,
                         random_state=None):
    r"""Texture patches of paper 000, sec. 6.2: Brodatz D2, D29, D92.

    The paper: "classifying 16 x 16 patches extracted from three Brodatz
    textures D2, D29 and D92.  For each texture, we have extracted varying
    number (from 100 to 10000) of overlapping patches from the left side of
    the image for training and 5000 patches from the right side for
    testing"; the three-class problem is handled one-against-all.  Here a
    side is a half of the image's columns (a patch lies wholly in it), and
    the patches of one texture and part are at distinct positions drawn
    uniformly at random (they overlap one another, as in the paper; the
    paper does not say how its positions were chosen).

    Parameters
    ----------
    n_train : int, default=1000
        Training patches per texture (the paper: 100 to 10,000).
    n_test : int, default=5000
        Test patches per texture (the paper: 5000).
    patch_size : int, default=16
        Patch width and height in pixels.
    images : dict of str to ndarray of shape (height, width), optional
        The textures, one grey-level image each (default: the ``brodatz`` data
        set of :func:`~kernlearn.datasets.load_dataset`, D2, D29 and D92 as
        300 x 300 images on [0, 1]).
    random_state : int or None
        Seed.

    Returns
    -------
    X, y : training patches and labels
        ``X`` has one row per patch, flattened in C order (``image_shape``
        ``(patch_size, patch_size)`` of :class:`~kernlearn.families.GaborFeatures`);
        ``y`` is the index of the texture in ``sorted(images)`` (D2, D29, D92:
        0, 1, 2).
    X_test, y_test : test patches and labels
        From the right half of each image.

    Raises
    ------
    DatasetNotFoundError
        When ``images`` is not given and the Brodatz images are not in the data
        folder.
    """
    for name, value, low in (("n_train", n_train, 1), ("n_test", n_test, 0),
                             ("patch_size", patch_size, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}.")
    if images is None:
        images = brodatz_images()
    rng = np.random.default_rng(random_state)
    p = int(patch_size)
    parts = {"train": ([], []), "test": ([], [])}
    for label, name in enumerate(sorted(images)):
        img = np.asarray(images[name], dtype=float)
        if img.ndim != 2:
            raise ValueError(f"image {name!r} must be 2-D (grey levels), got shape "
                             f"{img.shape}.")
        h, w = img.shape
        half = w // 2
        for part, n, (lo, hi) in (("train", n_train, (0, half - p)),
                                  ("test", n_test, (half, w - p))):
            rows, cols = _positions(rng, n, h - p, lo, hi, name, part)
            Xs, ys = parts[part]
            Xs.append(np.stack([img[r:r + p, c:c + p].ravel() for r, c in zip(rows, cols)])
                      if n else np.zeros((0, p * p)))
            ys.append(np.full(n, label))
    (Xtr, ytr), (Xte, yte) = ((np.vstack(X), np.concatenate(y)) for X, y in parts.values())
    return Xtr, ytr, Xte, yte
