"""
============================================================
Custom refit strategy of a grid search with cross-validation
============================================================

Adapted from scikit-learn's ``examples/model_selection/plot_grid_search_digits.py``
(BSD-3-Clause): the same grid search with two scores (precision and recall)
and a refit on the best, with kernlearn's ``LowRankKernelClassifier`` (SLKL)
in place of ``SVC``: ``gamma`` and ``nu`` (its regularisation) are tuned as
``gamma`` and ``C`` are for the SVC.  A second search tunes
``PNormMKLClassifier`` on precomputed kernels, wrapped in
:class:`kernlearn.PrecomputedKernels` so that the splitter can index them.
A smaller subset of the digits keeps the run to seconds; the custom refit
strategy of the original is replaced by ``refit="precision"``.
"""

# %%
# The dataset
# -----------

from sklearn import datasets

digits = datasets.load_digits()

n_samples = len(digits.images)
X = digits.images.reshape((n_samples, -1))
y = digits.target == 8
print(f"The number of images is {X.shape[0]} and each image contains {X.shape[1]} pixels")

from sklearn.model_selection import train_test_split

X_train, X_test, y_train, y_test = train_test_split(
    X[:600], y[:600], test_size=0.5, random_state=0
)

# %%
# Tuning hyper-parameters
# -----------------------

from sklearn.metrics import classification_report
from sklearn.model_selection import GridSearchCV

from kernlearn import LowRankKernelClassifier

tuned_parameters = [
    {"gamma": ["scale", 1e-3], "nu": [1e-3, 1e-2]},
]

scores = ["precision", "recall"]

grid_search = GridSearchCV(
    LowRankKernelClassifier(random_state=0),  # was: SVC()
    tuned_parameters,
    scoring=scores,
    refit="precision",
    cv=3,
)
grid_search.fit(X_train, y_train)
print("Best parameters:", grid_search.best_params_)

y_pred = grid_search.predict(X_test)
print(classification_report(y_test, y_pred))

# %%
# Precomputed kernels: the kernel list is indexed by samples
# ------------------------------------------------------------

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from kernlearn import PNormMKLClassifier, PrecomputedKernels

Xs = X[:600] / 16.0
# two Gaussian kernels of different widths, computed once on all samples
K = PrecomputedKernels([rbf_kernel(Xs, gamma=0.02), rbf_kernel(Xs, gamma=0.2)])
idx_train, idx_test = train_test_split(np.arange(600), test_size=0.5, random_state=0)
mkl_search = GridSearchCV(
    PNormMKLClassifier(kernels="precomputed", random_state=0),
    {"p": [1.1, 2.0]},
    scoring="precision",
    cv=3,
).fit(K[np.ix_(idx_train, idx_train)], y[idx_train])
print("Best MKL parameters:", mkl_search.best_params_)
print("test precision: %.3f" % mkl_search.score(K[np.ix_(idx_test, idx_train)], y[idx_test]))
print("kernel weights:", np.round(mkl_search.best_estimator_.kernel_weights_, 2))
