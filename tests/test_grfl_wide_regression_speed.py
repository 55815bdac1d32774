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
"""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
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
