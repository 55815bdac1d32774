"""Audit 63: a hostile review of the twenty-sixth pass's merged shortcuts.

Each test fails on the code before its fix.
"""

import numpy as np

from kernlearn import MultitaskMKLRegressor
from kernlearn.methods.mtmkl import mtfl


def _repeated(n_tasks=3, rows=100, distinct=20, seed=0):
    """Tasks whose inputs repeat (each from ``distinct`` rows), targets noisy."""
    rng = np.random.default_rng(seed)
    X, y, t = [], [], []
    for a in range(n_tasks):
        Xa = rng.normal(size=(distinct, 3))[rng.integers(0, distinct, size=rows)]
        X.append(Xa)
        y.append(Xa[:, 0] + np.sin(Xa[:, 1]) + 0.3 * rng.normal(size=rows) + a)
        t.append(np.full(rows, a))
    return np.vstack(X), np.concatenate(y), np.concatenate(t)


def test_plain_regressor_solves_repeated_inputs_on_distinct_rows(monkeypatch):
    """The merge of the CV classifier's packed blocks passed the plain fit its
    kernels packed only, and the distinct-row kernel ridge (found from the
    whole blocks only) was never used again: the same model, 4x the time on
    Star-like tasks (700 rows, 140 distinct), without a word."""
    from kernlearn.methods.mtmkl import fit

    X, y, t = _repeated()
    found = []

    def spy(real):
        def call(*args):
            out = real(*args)
            found.append(out is not None)
            return out
        return call

    # (the distinct rows are found from the blocks, or from the inputs: issue 24)
    monkeypatch.setattr(mtfl, "ridge_repeats", spy(mtfl.ridge_repeats))
    monkeypatch.setattr(mtfl, "grouped_ridge", spy(mtfl.grouped_ridge))
    new = MultitaskMKLRegressor().fit(X, y, task_index=t)
    assert any(found), "the distinct-row route was not taken"
    monkeypatch.setattr(fit, "distinct_inputs", lambda *a: None)  # all rows
    monkeypatch.setattr(mtfl, "ridge_repeats", lambda *a: None)
    old = MultitaskMKLRegressor().fit(X, y, task_index=t)
    np.testing.assert_allclose(new.predict(X, task_index=t), old.predict(X, task_index=t),
                               rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(new.kernel_weights_, old.kernel_weights_, rtol=1e-8,
                               atol=1e-12)
    assert new.n_iter_ == old.n_iter_


def test_two_kernel_bound_of_many_cuts_in_memory_of_order_t():
    """A fit that runs out of iterations bounds its gap with all its cuts: the
    closed form of two kernels stacked every pair's multipliers into one
    (pairs, t) matrix, t^3 in memory (max_iter=700: a fit's peak 0.3 -> 0.95 GB,
    2,000: tens of GB, where the LP it replaced needed little)."""
    import tracemalloc

    from scipy.optimize import linprog

    from kernlearn.solvers.mirror_descent import cutting_plane_bound

    rng = np.random.default_rng(0)
    t = 400
    s = rng.uniform(0, 1, t)  # tangents of (s - 0.4)^2 at y = (s, 1 - s)
    a = (s - 0.4) ** 2 - 2 * (s - 0.4) * s
    grads = np.column_stack([2 * (s - 0.4), np.zeros(t)])
    grads[::3] += rng.normal(size=(len(grads[::3]), 1))  # (the same lines in y)
    a[::3] -= grads[::3, 1]
    tracemalloc.start()
    bound = cutting_plane_bound(a, grads)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20e6, f"{peak / 1e6:.0f} MB for {t} cuts"
    res = linprog(np.append(-a, -1.0), A_ub=np.column_stack([-grads.T, np.ones(2)]),
                  b_ub=np.zeros(2), A_eq=np.append(np.ones(t), 0.0)[None], b_eq=[1.0],
                  bounds=[(0, None)] * t + [(None, None)], method="highs")
    assert abs(bound - (-res.fun)) <= 1e-11 * max(1.0, abs(res.fun))


def _check_mirror_rows_permuted(n_columns, permutations, atol):
    """Fit both low-rank estimators on rows and their column-swapped mirrors
    (equal targets on each pair) and on row permutations of them: the same
    centres and the same outputs."""
    import warnings

    from sklearn.base import clone

    from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor

    rng = np.random.default_rng(0)
    B = rng.normal(size=(80, 4)).round(2)
    X = np.vstack([B, B[:, [1, 0, 3, 2]]])
    yc = np.tile((B[:, 0] + B[:, 1] > 0).astype(int), 2)  # (the same on swapped rows)
    yr = np.tile(B[:, 0] + B[:, 1] + B[:, 2] * B[:, 3], 2)
    XT = rng.normal(size=(30, 4))
    M = n_columns or len(X)
    for est, y in [(LowRankKernelClassifier(n_columns=M, random_state=0), yc),
                   (LowRankKernelRegressor(n_columns=M, random_state=0), yr)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (convergence: the same in every order)
            base = clone(est).fit(X, y)
            out = getattr(base, "decision_function", base.predict)(XT)
            for k in range(permutations):
                perm = np.random.default_rng(300 + k).permutation(len(X))
                other = clone(est).fit(X[perm], y[perm])
                np.testing.assert_array_equal(perm[other.column_indices_],
                                              base.column_indices_)
                np.testing.assert_allclose(
                    getattr(other, "decision_function", other.predict)(XT), out,
                    rtol=0, atol=atol)


def test_low_rank_sample_of_rows_that_columns_map_onto_each_other():
    """Rows such as (1, 2) and (2, 1) of a set closed under a swap of columns
    (balanced one-hot pairs, symmetric designs) had equal content keys, by
    design blind to the column order; with equal targets their occurrence
    numbers followed their positions, so a row permutation took other rows
    into the sample: decision values apart by 0.4-0.6, a seed change's."""
    _check_mirror_rows_permuted(40, 3, 1e-4)


def test_low_rank_every_row_a_centre_mirror_rows_split_by_round_off():
    """At M = n the content order compares kernel values rounded to 36 bits;
    rows such as (1, 2) and (2, 1) have equal values in exact arithmetic, but
    the standardization and the width computed in another row order put their
    round-off on either side of a rounding boundary: the rows no longer tied,
    round-off ordered them, and the model moved (decision values 0.12-0.35)."""
    _check_mirror_rows_permuted(None, 4, 1e-6)  # (seed 301 split a pair on the old code)
