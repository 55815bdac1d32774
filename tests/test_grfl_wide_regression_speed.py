"""GrFL's held-out monitors complete their features into rows shared by one fit (issue 24).

The regressor's folds (``lambda_p="auto"``, below ``CV_BELOW`` rows) and a one-part
held-out path measure each model on held-out rows; on sparse rows priced in their
span the features they add are completed to all columns for that
(``GrFL.features``).  ``_grfl_select.HeldOutRows`` gives the monitors of one fit
the same rows to complete into, in place of a fresh array per outer iteration
(570 MB of fresh memory a default fit on 200 x 100,000): the same calls on arrays of
the same shapes, so the held-out columns, the chosen level and the model are those
of the fresh arrays, bit for bit (``HeldOutRows`` answering ``None``: the former
computation).

Those completions draw 100,000 normal numbers a feature from a generator of its
own; ``_pcg64_normals`` draws them for all the features of a call in one compiled
call, PCG64 stepped inline: NumPy's numbers, bit for bit, each generator left in
NumPy's state (``pcg64_scaled_normals`` answering ``False``: the former route,
numba's ``Generator.standard_normal`` a generator at a time).
"""

import copy

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.families import _pcg64_normals, fourier
from kernlearn.methods import _grfl_select
from kernlearn.methods._grfl_select import HeldOutRows, _HoldOut


def _wide_sparse(rows, cols=3_000, per_row=20, seed=0, n_test=60):
    """Sparse counts, wide enough to be priced in the rows' span; ``y`` a number."""
    rng = np.random.default_rng(seed)
    n = rows + n_test
    indices = rng.integers(0, cols, (n, per_row))
    X = sp.csr_matrix((rng.integers(1, 4, n * per_row).astype(float),
                       (np.repeat(np.arange(n), per_row), indices.ravel())), shape=(n, cols))
    X.sum_duplicates()
    y = (np.asarray(X[:, : cols // 2].sum(axis=1)).ravel()
         - np.asarray(X[:, cols // 2:].sum(axis=1)).ravel()) / per_row
    return X[:rows], y[:rows], X[rows:]


def _spy(monkeypatch):
    """Record every monitor call's ``(monitor, f0, f1)`` and the rows its features
    were completed into."""
    calls, completed = [], []
    call, features = _HoldOut.__call__, _grfl_select.HeldOutRows.__call__

    def recording_call(self, row=None):
        calls.append((self, self.Phi.shape[1] // self.path.gs, self.path.p // self.path.gs))
        return call(self, row)

    def recording_rows(self, path, k):
        out = features(self, path, k)
        completed.append((self, out))
        return out

    monkeypatch.setattr(_HoldOut, "__call__", recording_call)
    monkeypatch.setattr(HeldOutRows, "__call__", recording_rows)
    return calls, completed


@pytest.mark.parametrize("rows", [120, 320])  # folds; one held-out part
def test_held_out_columns_are_those_of_fresh_completions(rows, monkeypatch):
    # each monitor's held-out columns, rebuilt the former way (the features of each
    # call completed into a fresh array, the same groups), equal those it holds
    X, y, _ = _wide_sparse(rows)
    calls, completed = _spy(monkeypatch)
    InfiniteFeatureRegressor(random_state=0).fit(X, y)
    monitors = list(dict.fromkeys(m for m, _, _ in calls))
    assert len(monitors) == (5 if rows < 300 else 1)
    added = [(m, f0, f1) for m, f0, f1 in calls if f1 > f0]
    assert len(added) >= len(monitors) and len(completed) == len(added)
    for m in monitors:
        path, gs = m.path, m.path.gs
        assert path._seed is not None  # (priced in the span: its features completed)
        blocks = [path.family.columns(path.features(np.arange(f0, f1)), m.X)
                  * np.concatenate(path.scales[f0:f1]) for mm, f0, f1 in added if mm is m]
        assert m.Phi.shape[1] == sum(b.shape[1] for b in blocks) == path.p
        assert np.array_equal(m.Phi, np.hstack(blocks))
        assert gs == 2


def test_one_fit_completes_into_one_shared_array(monkeypatch):
    # every call of every fold's monitor writes into the rows of one array, sized
    # once (the paths' budget); a second fit has its own
    X, y, _ = _wide_sparse(120)
    calls, completed = _spy(monkeypatch)
    InfiniteFeatureRegressor(random_state=0).fit(X, y)
    first = {id(rows) for rows, _ in completed}
    assert len(first) == 1
    rows = completed[0][0]
    assert all(out is not None and out.base is rows.array for _, out in completed)
    assert rows.array.shape[0] >= max(out.shape[0] for _, out in completed)
    assert {id(m.rows) for m, _, _ in calls} == first
    n = len(completed)
    InfiniteFeatureRegressor(random_state=0).fit(X, y)
    assert {id(r) for r, _ in completed[n:]}.isdisjoint(first)


def test_rows_are_not_shared_where_features_are_not_completed():
    # a path whose features are kept as drawn (dense input, or a long sparse one)
    # stacks them as before: no rows asked for
    class Path:
        _seed = None

    assert HeldOutRows()(Path(), 3) is None


def _outputs(make, X, y, Xt, fresh, monkeypatch):
    if fresh:  # (the former computation: each monitor call completes into a new array)
        monkeypatch.setattr(HeldOutRows, "__call__", lambda self, path, k: None)
    est = make().fit(X, y)
    out = (est.predict(Xt) if isinstance(est, InfiniteFeatureRegressor)
           else est.decision_function(Xt))
    return out, np.array(est.features_), est.lambda_p_


@pytest.mark.parametrize("rows, make", [
    (120, lambda: InfiniteFeatureRegressor(random_state=0)),  # the folds choose the level
    (120, lambda: InfiniteFeatureRegressor(random_state=3)),
    (320, lambda: InfiniteFeatureRegressor(random_state=1)),  # one part: level and count
    (120, lambda: InfiniteFeatureClassifier(max_features="auto", random_state=2)),
])
def test_models_are_those_of_fresh_completions(rows, make, monkeypatch):
    X, y, Xt = _wide_sparse(rows, seed=rows)
    if isinstance(make(), InfiniteFeatureClassifier):
        y = np.where(y > 0, 1, -1)
    with monkeypatch.context() as m:
        expected = _outputs(make, X, y, Xt, True, m)
    got = _outputs(make, X, y, Xt, False, monkeypatch)
    assert np.array_equal(got[0], expected[0])
    assert np.array_equal(got[1], expected[1])
    assert got[2] == expected[2]


def _numpys(generators, shape, sigma):
    if len(generators) == 1:
        return generators[0].standard_normal(shape) / sigma[:, None]
    return np.vstack([g.standard_normal((1, shape[1])) for g in generators]) / sigma[:, None]


@pytest.mark.parametrize("per_row", [False, True])
@pytest.mark.parametrize("strided", [False, True])
def test_pcg64_normals_are_numpys(per_row, strided):
    # one generator for all rows (a pricing step's candidates) or one per row (a
    # completion's features), into C rows or the strided block of params[:, :-1];
    # the same numbers and the same states afterwards
    k, m = 4, 30_000
    sigma = np.linspace(0.5, 3.0, k)
    seeds = [(11, i) for i in range(k)] if per_row else [(11, 0)]
    ours = [np.random.default_rng(s) for s in seeds]
    ref = [np.random.default_rng(s) for s in seeds]
    block = np.full((k, m + 1), np.nan)
    out = block[:, :-1] if strided else np.full((k, m), np.nan)
    assert _pcg64_normals.pcg64_scaled_normals(ours, out, sigma)
    assert np.array_equal(out, _numpys(ref, (k, m), sigma))
    assert np.isnan(block[:, -1]).all() or not strided
    for a, b in zip(ours, ref):
        assert a.bit_generator.state == b.bit_generator.state
        assert np.array_equal(a.bit_generator.random_raw(3), b.bit_generator.random_raw(3))


def test_pcg64_normals_match_numpy_on_many_numbers():
    # about 1 % of the ziggurat's numbers take its wedges and its tail (exp, log1p,
    # more raw numbers): 4 M numbers reach thousands of each, states checked after
    seeds = np.random.default_rng(5).integers(0, 2**63, 4)
    gens = [np.random.default_rng(s) for s in seeds]
    out = np.empty((4, 1_000_000))
    assert _pcg64_normals.pcg64_scaled_normals(gens, out, np.ones(4))
    for s, row, g in zip(seeds, out, gens):
        ref = np.random.default_rng(s)
        assert np.array_equal(row, ref.standard_normal(1_000_000))
        assert g.bit_generator.state == ref.bit_generator.state


@pytest.mark.parametrize("bit_generator", [np.random.MT19937, np.random.SFC64,
                                           np.random.Philox, np.random.PCG64DXSM])
def test_other_bit_generators_keep_the_former_route(bit_generator):
    g = np.random.Generator(bit_generator(3))
    out = np.zeros((2, 5_000))
    assert not _pcg64_normals.pcg64_scaled_normals([np.random.default_rng(1), g], out,
                                                   np.ones(2))
    assert not out.any()  # (nothing drawn: g draws what a fresh one does)
    assert np.array_equal(np.random.Generator(bit_generator(3)).standard_normal(3),
                          copy.deepcopy(g).standard_normal(3))
    # scaled_normals then draws them as before: NumPy's numbers
    fourier.scaled_normals([np.random.Generator(bit_generator(3)), g], out, np.ones(2))
    assert np.array_equal(out[0], np.random.Generator(bit_generator(3)).standard_normal(5_000))


@pytest.mark.parametrize("make", [
    lambda: InfiniteFeatureRegressor(random_state=0),
    lambda: InfiniteFeatureClassifier(random_state=1),
])
def test_models_are_those_of_the_former_draws(make, monkeypatch):
    # 200 rows of 20,000 sparse columns: the folds' and the kept features'
    # completions (100 features a call), the span's candidates, all drawn here
    X, y, Xt = _wide_sparse(200, cols=20_000, seed=4)
    if isinstance(make(), InfiniteFeatureClassifier):
        y = np.where(y > 0, 1, -1)
    calls = []
    draw = _pcg64_normals._draw

    def counted(states, out, sigma):
        calls.append(out.shape)
        return draw(states, out, sigma)

    with monkeypatch.context() as m:
        m.setattr(fourier, "pcg64_scaled_normals", lambda g, out, sigma: False)
        expected = _outputs(make, X, y, Xt, False, m)
    monkeypatch.setattr(_pcg64_normals, "_draw", counted)
    got = _outputs(make, X, y, Xt, False, monkeypatch)
    assert calls and max(k for k, _ in calls) > 1  # (several features a call)
    for a, b in zip(got, expected):
        assert np.array_equal(a, b)
