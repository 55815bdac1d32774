"""GrFL's wide draws of normal numbers in compiled code give NumPy's numbers (issue 24).

``fourier.scaled_normals`` draws the candidates' directions and the completed
features of wide input with numba's port of NumPy's ziggurat: the same numbers
bit for bit, the generator left in the same state, so the models are those of
NumPy's draws (``_COMPILED_NORMALS_FROM`` raised past every draw: the former
computation).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.families import fourier

BIT_GENERATORS = [np.random.PCG64, np.random.MT19937, np.random.SFC64, np.random.Philox]


@pytest.mark.parametrize("bit_generator", BIT_GENERATORS)
@pytest.mark.parametrize("shape", [(3, 5), (3, 40_000), (1, 100_001)])
@pytest.mark.parametrize("strided", [False, True])
def test_scaled_normals_are_numpys(bit_generator, shape, strided):
    # NumPy's draw of the same shape divided by each row's sigma, and the same
    # state afterwards (the numbers drawn next agree too); both below and above
    # the size from which the compiled loop draws, into C rows and into the
    # strided block of params[:, :-1]
    sigma = np.linspace(0.5, 3.0, shape[0])
    block = np.full((shape[0], shape[1] + 1), np.nan)
    out = block[:, :-1] if strided else np.full(shape, np.nan)
    ours, ref = np.random.Generator(bit_generator(7)), np.random.Generator(bit_generator(7))
    fourier.scaled_normals(ours, out, sigma)
    expected = ref.standard_normal(shape) / sigma[:, None]
    assert np.array_equal(out, expected)
    assert np.isnan(block[:, -1]).all() or not strided  # (nothing written past the view)
    assert np.array_equal(ours.bit_generator.random_raw(4), ref.bit_generator.random_raw(4))
    assert ours.standard_normal() == ref.standard_normal()


def test_scaled_normals_compiled_matches_numpy_on_many_numbers():
    # about 1 % of the ziggurat's numbers take its slower branches (the wedges
    # and the tail, with exp and log1p): 3 M numbers reach thousands of each
    rng = np.random.default_rng(3)
    seeds = rng.integers(0, 2**63, 3)
    for s in seeds:
        out = np.empty((1, 1_000_000))
        fourier._scaled_normals_compiled(np.random.default_rng(s), out, np.ones(1))
        assert np.array_equal(out[0], np.random.default_rng(s).standard_normal(1_000_000))


def _wide_sparse(rows=60, cols=20_000, per_row=20, seed=0):
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, cols, (rows, per_row))
    X = sp.csr_matrix((rng.integers(1, 4, rows * per_row).astype(float),
                       (np.repeat(np.arange(rows), per_row), indices.ravel())),
                      shape=(rows, cols))
    X.sum_duplicates()
    y = np.where(np.asarray(X[:, : cols // 2].sum(axis=1)).ravel()
                 > np.asarray(X[:, cols // 2:].sum(axis=1)).ravel(), 1, -1)
    return X, y


def _fitted(make, X, y, Xt, numpy_draws, monkeypatch):
    if numpy_draws:  # (the former computation: NumPy draws every normal number)
        monkeypatch.setattr(fourier, "_COMPILED_NORMALS_FROM", np.inf)
    else:
        monkeypatch.setattr(fourier, "_COMPILED_NORMALS_FROM", 4096)
    est = make().fit(X, y)
    out = (est.predict(Xt) if isinstance(est, InfiniteFeatureRegressor)
           else est.decision_function(Xt))
    return out, np.array(est.features_)


@pytest.mark.parametrize("make", [
    lambda: InfiniteFeatureClassifier(max_features=20, random_state=0),
    lambda: InfiniteFeatureClassifier(max_features=20, n_paths=1, random_state=1),
    lambda: InfiniteFeatureRegressor(max_features=20, random_state=2),
])
def test_wide_sparse_models_are_those_of_numpys_draws(make, monkeypatch):
    # 60 rows of 20,000 sparse columns: priced in the rows' span (59 x 100 candidate
    # numbers per step) and the kept features completed to 20,000 columns, both
    # drawn in compiled code; the decision values and features_ are bit-identical
    X, y = _wide_sparse()
    Xt, _ = _wide_sparse(rows=30, seed=1)
    y = y.astype(float) if "Regressor" in type(make()).__name__ else y
    old = _fitted(make, X, y, Xt, True, monkeypatch)
    new = _fitted(make, X, y, Xt, False, monkeypatch)
    assert np.array_equal(old[0], new[0])
    assert np.array_equal(old[1], new[1])


def test_wide_dense_and_long_sparse_models_are_those_of_numpys_draws(monkeypatch):
    # dense rows wider than long (priced in their span, completed by _SpanCompletion)
    # and sparse rows too many for the span (each candidate drawn over all columns)
    rng = np.random.default_rng(4)
    Xd = rng.standard_normal((30, 3000))
    yd = np.where(Xd[:, 0] + Xd[:, 1] > 0, 1, -1)
    Xs, ys = _wide_sparse(rows=1200, cols=5000, per_row=10, seed=2)
    for X, y, Xt in [(Xd, yd, Xd[:7] + 0.1), (Xs, ys, Xs[:50])]:
        def make():
            return InfiniteFeatureClassifier(max_features=6, n_paths=1, random_state=0)

        old = _fitted(make, X, y, Xt, True, monkeypatch)
        new = _fitted(make, X, y, Xt, False, monkeypatch)
        assert np.array_equal(old[0], new[0])
        assert np.array_equal(old[1], new[1])
