"""A seventieth user's audit: the twenty-eighth pass's changes, reviewed as a hostile user.

The pass compiled the leave-one-out search of ``MultitaskMKLRegressorCV``
(``methods/mtmkl/_loo_kernel.py``), kept the low-rank regressor's ``nu`` path
warm without copies (``SLKLState.set_nu``) and made failed or interrupted fits
leave the session as it was (BLAS limits, svmlight chunks, progress bars,
model-file errors).

Checked clean (no fix needed): the compiled criterion, gradient, ``beta`` and
residuals against the inverse-based ones on tasks of one and two rows mixed
with tasks of 60-300 rows, 25 tasks of three rows, one task, repeated rows, a
constant column, zero row weights, weights from 1e-10 to 1e6 and one on its
bound, ``linear`` / ``constant`` / ``poly`` factored kernels with and without
an unfactored one (same numbers as the former NumPy evaluation, to 1e-10);
``MultitaskMKLRegressorCV`` with the compiled criterion against the forced
inverse-based one (float32, pandas, string task labels, zero sample weights,
targets offset by 1e6, ``Cs=(1e6,)``): ``C_`` within 1e-8, predictions within
1e-9 of their range; ``Cs`` of 1e6, 1e3, 1, 1e-6 and the default on six
diabetes splits: the same ``C_`` and scores as the start of the pass; weights
of another length refused.  The low-rank estimators (weights with zeros,
three outputs, a list of ``nu``, repeated rows, float32, targets near 1e9, a
``RandomState``, five columns): predictions, ``nu_`` and ``n_iter_`` bit for
bit those of the start of the pass.  ``write_atomically`` with a writer
raising ``BlockingIOError``, ``ENOSPC`` or ``io.UnsupportedOperation``: the
error names the file asked for, or is kept as raised.
"""

import json
import subprocess
import sys

import pytest

# A fresh process runs the precompile step's workload of the leave-one-out
# search, then fits the search on the kinds of kernel lists it is used with
# (none unfactored, one unfactored kernel alone, a factored and an
# unfactored one), and prints every signature the search's compiled
# functions gained after the workload.
_NEW_SIGNATURES = r"""
import json, warnings
import numpy as np
warnings.simplefilter("ignore")
from kernlearn import MultitaskMKLRegressorCV
from kernlearn._precompile import compiled_dispatchers, workloads
loo = {k: d for k, d in compiled_dispatchers().items() if ".mtmkl." in k}
for name, job in workloads():  # (every estimator's: which one reaches what is the workload's)
    job()
seen = {k: set(map(str, d.signatures)) for k, d in loo.items()}
rng = np.random.default_rng(0)
X = rng.normal(size=(75, 4)); t = np.repeat([0, 1, 2], 25); y = X[:, 0] + rng.normal(size=75)
for kernels in (["linear"], [("rbf", {"gamma": 0.5})], ["linear", "constant"],
                [("rbf", {"gamma": 0.5}), "linear"]):
    MultitaskMKLRegressorCV(kernels=kernels).fit(X, y, task_index=t)
print(json.dumps({k: sorted(set(map(str, d.signatures)) - seen[k]) for k, d in loo.items()}))
"""


def test_the_loo_search_compiles_nothing_past_the_precompile_workload():
    # A compiled grid of starts took the unfactored kernel's weights as a
    # column of the grid (a strided array) in the workload's fit, and as an
    # array of zeros (contiguous) when no kernel is unfactored
    # (kernels=["linear"]): a second signature, compiled at that fit after
    # the precompile step (seconds of compilation in a fit of milliseconds).
    out = subprocess.run([sys.executable, "-c", _NEW_SIGNATURES], check=False,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    new = json.loads(out.stdout.strip().splitlines()[-1])
    assert new, "no compiled function found in kernlearn.methods.mtmkl"
    assert {k: v for k, v in new.items() if v} == {}


def test_a_fit_starts_while_another_thread_opens_and_closes_progress_bars():
    # Every fit lists the bars its thread opened as it starts (to close them
    # if it fails); the list was read while other threads' fits added and
    # removed theirs, and a fit in a thread pool could stop at its first line
    # with "RuntimeError: dictionary changed size during iteration".
    import io
    import threading

    from kernlearn.progress import Progress, open_bars

    sink, stop, failures = io.StringIO(), threading.Event(), []
    held = [Progress("held", 3, stream=sink, bar=True) for _ in range(30)]

    def other_fits():
        while not stop.is_set():
            bars = [Progress("other", 3, stream=sink, bar=True) for _ in range(10)]
            for bar in bars:
                bar.close("converged", 3)

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # (the other thread runs between any two steps)
    worker = threading.Thread(target=other_fits)
    worker.start()
    try:
        for _ in range(3000):
            try:
                mine = open_bars()
            except RuntimeError as err:
                failures.append(str(err))
                break
            assert len(mine) == len(held) and set(mine) == set(held)  # (not the other's)
    finally:
        stop.set()
        worker.join()
        sys.setswitchinterval(switch)
        for bar in held:
            bar.close("converged", 3)
    assert failures == []


def test_a_search_ending_at_zero_weights_falls_back_to_its_start_in_its_own_units(monkeypatch):
    """The restart after a tenfold fall returns a unit per weight; the fallback
    for a result at zero weights multiplied the start (in the start's single
    unit) by that vector: weights in the wrong units (audit 70's latent case,
    forced here)."""
    import numpy as np
    from scipy.optimize import OptimizeResult
    from test_mtmkl_loo_fast import _problem

    from kernlearn.methods.mtmkl import selection

    p = _problem([10, 13, 7, 12], shared=False, seed=2)
    args = (p["grams"], p["y_b"], p["masks"], p["w_b"])
    k = p["grams"][0].shape[0]

    def at_zero(obj, x0, unit, scale, penalty, max_iter):  # a unit per weight, no weight
        res = OptimizeResult(x=np.zeros_like(x0), status=0, jac=np.zeros_like(x0))
        return res, np.arange(1.0, len(x0) + 1.0) * 7.0, 0

    monkeypatch.setattr(selection, "_search_in_units", at_zero)
    gamma, C, _ = selection.learn_loo_weights(*args, C_grid=[1.0])
    # the start: uniform weights at the grid's only C
    assert np.allclose(gamma, 1.0 / k) and C == pytest.approx(1.0)
