"""A seventy-first user's audit: a hostile review of the twenty-ninth pass's
three speed changes (the CV classifier's cross-fold start, the CV regressor's
one-pass leave-one-out evaluation, the low-rank fit's kept mask and seed).

Defects found (each test here failed before its fix):

* ``MultitaskMKLClassifierCV(class_weight="balanced")``: every fold start
  (the previous fold's fit at the first C) and the refit's start were dropped
  by the solver, so those fits ran cold.  Each fit weighs its own rows
  (``"balanced"`` counts the classes of the fold's rows), so a kept dual
  could sit past the next fit's box :math:`C w_i`; it was clipped into the
  box after the per-task sums had been made zero, the sum was no longer
  zero, and the SVM solver, which takes a start only when it is feasible,
  started those tasks at zero.  The duals are now put in the fit's box first.

Checked clean (no fix needed) is listed in the tests named ``*_clean``.
"""

import numpy as np
import pytest

import kernlearn.methods.mtmkl.fit as mtfit
from kernlearn import MultitaskMKLClassifierCV
from kernlearn.methods.mtmkl.inner import per_bucket

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

KERNELS = ["linear", "rbf"]


def _data(n=150, n_tasks=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    t = rng.integers(0, n_tasks, n)
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y, t


@pytest.fixture
def handed(monkeypatch):
    """Per fit given a start: for each task, whether the SVM solver takes it
    (its rule in ``_smo_bucket``: every dual in its box with its class's
    sign, the task's duals summing to zero)."""
    log = []
    original = mtfit.solve_mtfl

    def recording(blocks, grams, y_b, loss, C, p, epsilon, **kw):
        if kw.get("beta0") is not None:
            taken = []
            for b, yb, c in zip(kw["beta0"], y_b, per_bucket(C, len(y_b))):
                c = np.broadcast_to(c, b.shape)
                for a in range(b.shape[0]):
                    inside = np.all(np.abs(b[a]) <= c[a]) and np.all(b[a] * yb[a] >= 0)
                    taken.append(bool(inside and abs(b[a].sum())
                                      <= 1e-12 * max(np.abs(b[a]).sum(), 1.0)))
            log.append(taken)
        return original(blocks, grams, y_b, loss, C, p, epsilon, **kw)

    monkeypatch.setattr(mtfit, "solve_mtfl", recording)
    return log


@pytest.mark.parametrize("formulation", ["mtfl", "mkl"])
def test_balanced_class_weight_fold_and_refit_starts_are_taken(handed, formulation):
    X, y, t = _data()
    clf = MultitaskMKLClassifierCV(KERNELS, Cs=[0.1, 1.0, 10.0], cv=3,
                                   class_weight="balanced", formulation=formulation)
    clf.fit(X, y, task_index=t)
    # 2 + 3 + 3 fold fits from a start (the first fold's middle C is cold), the refit
    assert len(handed) == 9
    assert all(all(taken) for taken in handed), handed
