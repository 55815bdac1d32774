"""Plots of fitted models, written to files (matplotlib, the ``plot`` extra)."""

import numpy as np

__all__ = ["plot_accuracy_vs_features", "plot_convergence", "plot_kernel_weights"]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - optional extra
        raise ImportError("plotting needs matplotlib: pip install kernlearn[plot]") from exc
    return plt


def plot_convergence(history, path, title="Convergence"):
    """Objective (and the Theorem-2 lower bound, when recorded) per outer iteration.

    Parameters
    ----------
    history : dict of ndarray
        A fitted ``history_`` with an ``objective`` column and optionally
        ``lower_bound`` and ``n_active``.
    path : str or path-like
        Output image file (format from the extension, e.g. ``.png``).
    title : str
        Figure title.

    Returns
    -------
    path : str
    """
    if "objective" not in history:
        raise ValueError("history has no 'objective' column to plot.")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    it = np.arange(1, len(history["objective"]) + 1)
    ax.plot(it, history["objective"], "o-", label="objective (upper bound)")
    if "lower_bound" in history and np.isfinite(history["lower_bound"]).any():
        ax.plot(it, history["lower_bound"], "s--", label="dual lower bound")
    ax.set_xlabel("outer iteration")
    ax.set_ylabel("objective")
    ax.set_title(title)
    ax.legend()
    if "n_active" in history:
        ax2 = ax.twinx()
        ax2.plot(it, history["n_active"], color="grey", alpha=0.5)
        ax2.set_ylabel("active columns", color="grey")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def plot_accuracy_vs_features(curves, path, title="Accuracy vs selected features"):
    """Test accuracy against number of selected features, one line per method.

    Parameters
    ----------
    curves : dict of str -> (array-like, array-like)
        Method name to ``(n_features, accuracy)``.
    path : str or path-like
        Output image file.
    title : str
        Figure title.

    Returns
    -------
    path : str
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name, (nf, acc) in curves.items():
        order = np.argsort(nf)
        ax.plot(np.asarray(nf)[order], np.asarray(acc)[order], "o-", label=name)
    ax.set_xlabel("selected features")
    ax.set_ylabel("test accuracy")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def plot_kernel_weights(weights, path, names=None, title="Kernel weights"):
    """Bar chart of learned kernel (or feature-group) weights.

    Parameters
    ----------
    weights : array-like of shape (n_kernels,)
        Learned weights.
    path : str or path-like
        Output image file.
    names : list of str, optional
        Bar labels.
    title : str
        Figure title.

    Returns
    -------
    path : str
    """
    plt = _pyplot()
    weights = np.asarray(weights, dtype=float).ravel()
    fig, ax = plt.subplots(figsize=(max(4, 0.4 * len(weights)), 3))
    ax.bar(np.arange(len(weights)), weights)
    ax.set_xticks(np.arange(len(weights)))
    ax.set_xticklabels(names or [str(i) for i in range(len(weights))], rotation=45)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)
