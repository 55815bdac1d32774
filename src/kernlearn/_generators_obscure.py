r"""The OBSCURE paper's synthetic multiclass problem (paper 001, sec. 5.2).

Re-exported by :mod:`kernlearn.datasets`.
"""

import numpy as np

__all__ = ["make_obscure_synthetic"]

#: Distance of a class's mean from the others' along the axis that tells it
#: apart (in units of the noise's standard deviation).
_SHIFT = 5.0


def make_obscure_synthetic(n_per_class=100, random_state=None):
    r"""The 3-class, 4-kernel problem of paper 001, sec. 5.2 (Fig. 1).

    The paper: "a 3-classes classification problem consisting of 300
    samples, with 100 samples for each class.  There are in total 4 different
    features ... Kernels 1-3 are useful only for distinguishing one class
    (class 3, class 1 and class 2, respectively) from the other two, while
    Kernel 4 can separate all the 3 classes"; samples 1-100, 101-200 and
    201-300 are classes 1, 2 and 3 (Fig. 1).  There multiclass OBSCURE at
    :math:`p = 1.0001` selects kernel 4 alone, where each one-vs-all binary
    SILP classifier picks two kernels.

    The paper does not give the distributions; this is our reading.  Each
    feature is a 2-D view with :math:`N(0, I_2)` noise: in views 1-3 the
    class the view tells apart (3, 1, 2) is shifted by 5 along the first
    axis, the other two classes are not told apart; in view 4 the three
    class means lie on a circle of radius 5, 120 degrees apart.  The kernels
    are Gaussian on each view with :math:`\gamma^{-1}` the mean squared
    pairwise distance, the width rule of the paper's Pendigits kernels (sec.
    5.1.2).  Labels are 0, 1, 2 for the paper's classes 1, 2, 3.

    Parameters
    ----------
    n_per_class : int, default=100
        Samples per class (the paper: 100).
    random_state : int or None
        Seed.

    Returns
    -------
    X : ndarray of shape (3 * n_per_class, 8)
        The four views side by side, columns ``2k, 2k + 1`` for view ``k + 1``.
    y : ndarray of shape (3 * n_per_class,)
        Class labels 0, 1, 2, in blocks of ``n_per_class``.
    kernels : list of tuple
        The four kernel specs, ``("rbf", {"gamma": "mean"}, [2k, 2k + 1])``,
        for ``PNormMKLClassifier(kernels=...)``.

    Examples
    --------
    >>> from kernlearn.datasets import make_obscure_synthetic
    >>> X, y, kernels = make_obscure_synthetic(random_state=0)
    >>> X.shape, len(kernels)
    ((300, 8), 4)
    """
    if isinstance(n_per_class, bool) or not isinstance(n_per_class, (int, np.integer)) \
            or n_per_class < 1:
        raise ValueError(f"n_per_class must be a positive integer, got {n_per_class!r}.")
    rng = np.random.default_rng(random_state)
    y = np.repeat([0, 1, 2], n_per_class)
    views = []
    for cls in (2, 0, 1):  # kernels 1-3 tell apart the paper's classes 3, 1, 2
        V = rng.normal(size=(y.size, 2))
        V[:, 0] += _SHIFT * (y == cls)
        views.append(V)
    # 0, 120 and 240 degrees (sin 60 degrees to two decimals)
    means = _SHIFT * np.array([[1.0, 0.0], [-0.5, 0.87], [-0.5, -0.87]])
    views.append(means[y] + rng.normal(size=(y.size, 2)))
    kernels = [("rbf", {"gamma": "mean"}, [2 * k, 2 * k + 1]) for k in range(4)]
    return np.hstack(views), y, kernels
