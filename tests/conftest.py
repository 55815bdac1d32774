"""Shared fixtures: dtypes, dense/CSR/CSC containers, seeds, real-data skips."""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.datasets import DatasetNotFoundError, data_home, load_dataset


def _unblock_sigint():
    """Unblock SIGINT in the test process's main thread, before any test forks.

    A launcher (a CI job, a test harness) may start the tests with SIGINT
    blocked; exec keeps the mask, and so does every child a test starts: the
    tests that send their child SIGINT (``proc.send_signal``, ``os.kill``,
    ``pthread_kill``) waited for a ``KeyboardInterrupt`` that never came (4 of
    ``tests/test_interrupts34.py``'s 5 subprocess tests failed so, audit 107).
    Unblocked, a SIGINT is handled as the process's handler says (ignored in
    a background ``make test &``).
    """
    import signal

    if hasattr(signal, "pthread_sigmask"):  # (POSIX)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


_unblock_sigint()

CONTAINERS = {
    "dense": np.asarray,
    "csr": sp.csr_matrix,
    "csc": sp.csc_matrix,
}


@pytest.fixture(params=sorted(CONTAINERS))
def container(request):
    """Turn a dense array into each supported input container."""
    return CONTAINERS[request.param]


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def global_dtype(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def real_data(name):
    """Load a shared data set, or skip the test with the reason."""
    try:
        return load_dataset(name)
    except DatasetNotFoundError as exc:
        pytest.skip(f"{name} not available in {data_home()}: {exc}")


# The keywords of a module's distributed.LocalCluster: two one-thread worker
# processes (their modules are their own, not the tests'), updated by the module's
# DASK_CLUSTER dict (e.g. dict(processes=False): light workers in the test process).
_CLUSTER = dict(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)


@pytest.fixture(scope="module")
def client(request):
    """A Dask client on a real ``distributed.LocalCluster``, one per module that uses it
    (made as :data:`_CLUSTER` and the module's ``DASK_CLUSTER`` say), closed at the
    module's end."""
    distributed = pytest.importorskip("distributed")
    kwargs = {**_CLUSTER, **getattr(request.module, "DASK_CLUSTER", {})}
    with distributed.LocalCluster(**kwargs) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture
def averaged_draws(monkeypatch):
    """The (paths, results) of every GrFL average of final draws, in call order."""
    from kernlearn.methods import _grfl_average

    seen = []
    orig = _grfl_average.average_paths

    def spy(paths, results, w_scale):
        seen.append((paths, results))
        return orig(paths, results, w_scale)

    monkeypatch.setattr(_grfl_average, "average_paths", spy)
    return seen


def assert_same_task_decisions(K, sizes, fits, atol):
    """Every ``(beta, b)`` of ``fits`` gives the first's decision values
    :math:`K_t\\beta_t + b_t` (``K (T, m, m)``, zero on padding) on each task's
    ``sizes[t]`` rows, to ``atol`` (the multitask SVM / SVR dual tests)."""
    mask = np.arange(K.shape[1])[None] < np.asarray(sizes)[:, None]
    f = [np.einsum("tij,tj->ti", K, beta) + np.asarray(b)[:, None] for beta, b in fits]
    for other in f[1:]:
        np.testing.assert_allclose(f[0][mask], other[mask], atol=atol)


def run_cli(argv, capsys):
    """Run the command line in-process: its exit code, standard output and error."""
    from kernlearn.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error(err):
    """Whether ``err`` is the CLI's one-line error (no traceback)."""
    return err.count("\n") == 1 and err.startswith("kernlearn: error: ")


@pytest.fixture(scope="module")
def dd():
    """``dask.dataframe``, or a skip naming why it cannot be imported."""
    pytest.importorskip("dask")
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # (dask.dataframe imports pyarrow)
        pytest.skip(f"dask.dataframe is not importable: {exc}")
    return dd


@pytest.fixture
def span_calls(monkeypatch):
    """Whether each pricing pass of ``RandomFourierFeatures`` ran in the rows' span."""
    from kernlearn.families import RandomFourierFeatures

    calls = []
    real = RandomFourierFeatures.in_span

    def spy(self, X, sample_weight=None):
        out = real(self, X, sample_weight)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(RandomFourierFeatures, "in_span", spy)
    return calls


@pytest.fixture
def fold_fits(monkeypatch):
    """``(C, training rows, fitted model)`` of each fold fit of ``MultitaskMKLClassifierCV``."""
    from kernlearn import MultitaskMKLClassifierCV

    fits = []
    real = MultitaskMKLClassifierCV._fold_fit

    def kept(self, *args):
        fits.append((args[4], np.asarray(args[5]), real(self, *args)))
        return fits[-1][2]

    monkeypatch.setattr(MultitaskMKLClassifierCV, "_fold_fit", kept)
    return fits


@pytest.fixture
def sigint_handled():
    """Python's ``KeyboardInterrupt`` handler for SIGINT during the test.

    A process started as a background job of a non-interactive shell (``make test &``,
    some CI runners) has SIGINT ignored, and Python then installs no handler:
    ``_thread.interrupt_main()`` does nothing and a test waiting for its
    ``KeyboardInterrupt`` would wait for ever.  Restored afterwards.
    """
    import signal

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)

