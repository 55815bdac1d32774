"""Model files of the code before the thirty-sixth pass (dense columns centred before
the histogram kernels), and their predictions, for tests/test_hist_scaling37.py."""
import sys, warnings
import numpy as np
from threadpoolctl import threadpool_limits
from kernlearn import (LowRankKernelClassifier, LowRankKernelRegressor, MultitaskMKLRegressor,
                       PNormMKLClassifier)
from kernlearn.io import save_model

out = sys.argv[1]
rng = np.random.default_rng(37)
X = rng.poisson(2.0, (50, 4)).astype(float)
y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=50)
c = (y > np.median(y)).astype(int)
t = np.arange(50) % 2
Xn = rng.poisson(2.0, (10, 4)).astype(float)
tn = np.arange(10) % 2
preds = {"X": X, "y": y, "Xnew": Xn}
with threadpool_limits(1), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = PNormMKLClassifier(kernels=["rbf", "hik"], random_state=0).fit(X, c)
    save_model(m, f"{out}/pnorm_rbf_hik.npz"); preds["pnorm_rbf_hik"] = m.decision_function(Xn)
    m = LowRankKernelRegressor(kernel="hik", n_columns=20, random_state=0).fit(X, y)
    save_model(m, f"{out}/lowrank_hik.npz"); preds["lowrank_hik"] = m.predict(Xn)
    m = LowRankKernelClassifier(kernel="hik", n_columns=20, random_state=0).fit(X, c)
    save_model(m, f"{out}/lowrank_clf_hik.npz"); preds["lowrank_clf_hik"] = m.decision_function(Xn)
    m = MultitaskMKLRegressor(kernels=["rbf", "hik"], max_iter=10).fit(X, y, task_index=t)
    save_model(m, f"{out}/mtmkl_rbf_hik.npz"); preds["mtmkl_rbf_hik"] = m.predict(Xn, task_index=tn)
np.savez(f"{out}/predictions.npz", **preds)
