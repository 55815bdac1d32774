"""
============================================
Model-based and sequential feature selection
============================================

Adapted from scikit-learn's
``examples/feature_selection/plot_select_from_model_diabetes.py`` (BSD-3-Clause).
The one change: the ``RidgeCV`` model whose coefficients rank the features is
swapped for kernlearn's sparse ``FGMRegressor``; ``SelectFromModel`` and
``SequentialFeatureSelector`` use it unchanged.  (Plots are replaced by prints.)
"""

# %%
# Loading the data
# ----------------

from sklearn.datasets import load_diabetes

diabetes = load_diabetes()
X, y = diabetes.data, diabetes.target
print(diabetes.DESCR[:40])

# %%
# Feature importance from coefficients
# ------------------------------------

import numpy as np

from kernlearn import FGMRegressor

ridge = FGMRegressor().fit(X, y)  # was: RidgeCV(alphas=np.logspace(-6, 6, num=5))
importance = np.abs(ridge.coef_)
feature_names = np.array(diabetes.feature_names)
for name, value in zip(feature_names, importance):
    print(f"{name:>4s} {value:10.2f}")

# %%
# Selecting features based on importance
# --------------------------------------

from time import time

from sklearn.feature_selection import SelectFromModel

threshold = np.sort(importance)[-3] + 0.01

tic = time()
sfm = SelectFromModel(ridge, threshold=threshold).fit(X, y)
toc = time()
print(f"Features selected by SelectFromModel: {feature_names[sfm.get_support()]}")
print(f"Done in {toc - tic:.3f}s")

# %%
# Selecting features with Sequential Feature Selection
# ----------------------------------------------------

from sklearn.feature_selection import SequentialFeatureSelector

tic_fwd = time()
sfs_forward = SequentialFeatureSelector(
    ridge, n_features_to_select=2, direction="forward"
).fit(X, y)
toc_fwd = time()

print(
    "Features selected by forward sequential selection: "
    f"{feature_names[sfs_forward.get_support()]}"
)
print(f"Done in {toc_fwd - tic_fwd:.3f}s")
