"""GrFL pricing on sparse input: the phases without SciPy's transposed copy of the directions
(the same model as before), pricing in the span of wide sparse rows, a wide sparse
input never densified, and the kept features of a wide sparse fit completed and stored
once (no copies of the features' array)."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.families import RandomFourierFeatures
from kernlearn.families import fourier
from kernlearn.methods._grfl_average import _stacked
from kernlearn.methods._grfl_master import _kept_groups


def _sparse(n, d, density, seed=0):
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    X.data = np.random.default_rng(seed).standard_normal(X.data.size)
    return X


def _scipy_phases(indptr, slots, data, params, cols, P):
    """The computation before: SciPy's sparse product with the directions' transpose
    (the stored columns are ``cols[slots]``; ``slots`` with ``cols=None``)."""
    indices = slots if cols is None else cols[slots]
    X = sp.csr_matrix((data, indices, indptr), shape=(P.shape[0], params.shape[1] - 1))
    P[:] = X @ params[:, :-1].T


@pytest.mark.parametrize("k", [1, 7, 8, 13, 40])
@pytest.mark.parametrize("form", ["csr", "csc", "float32"])
def test_sparse_phases_are_scipys_product_bit_for_bit(k, form):
    X = _sparse(60, 500, 0.03)
    fam = RandomFourierFeatures(gamma=0.1).fit(X, center=np.asarray(X.mean(axis=0)).ravel())
    params = fam.sample(k, np.random.default_rng(3))
    Xf = {"csr": X, "csc": X.tocsc(), "float32": X.astype(np.float32)}[form]
    V = params[:, :-1]
    before = np.ascontiguousarray(Xf @ V.T) - V @ fam.center_
    got = fam._phases(params, Xf)
    assert got.flags.c_contiguous and got.shape == (60, k)
    assert np.array_equal(got, before)
    # and the phases of the same numbers dense (BLAS sums in another order)
    dense = (Xf.toarray().astype(float) - fam.center_) @ V.T
    np.testing.assert_allclose(got, dense, rtol=1e-10, atol=1e-12 * np.abs(dense).max())


def test_sparse_phases_of_empty_rows_and_columns_are_zero():
    X = sp.csr_matrix(([2.0], ([1], [4])), shape=(5, 30))
    fam = RandomFourierFeatures(gamma=1.0).fit(np.ones((2, 30)))
    params = fam.sample(9, 0)
    P = fam._phases(params, X)
    assert np.array_equal(P[[0, 2, 3, 4]], np.zeros((4, 9)))
    assert np.array_equal(P[1], 2.0 * params[:, 4])


def _fits(X, y, Xt, est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y).decision_function(Xt) if hasattr(est, "decision_function") \
            else est.fit(X, y).predict(Xt)


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("Est", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_model_is_the_one_of_scipys_product(monkeypatch, sparse, Est):
    # the new path gives the old model on the same random_state, sparse and dense
    X = _sparse(120, 40, 0.15, seed=1)
    y = np.asarray(X[:, 0].toarray().ravel() - X[:, 1].toarray().ravel() ** 2)
    y = (y > np.median(y)).astype(int) if Est is InfiniteFeatureClassifier else y
    Xin = X if sparse else X.toarray()
    est = Est(random_state=0, max_features=15)
    new = _fits(Xin, y, Xin, est)
    monkeypatch.setattr(fourier, "_sparse_phases_at", _scipy_phases)
    old = _fits(Xin, y, Xin, est)
    np.testing.assert_allclose(new, old, rtol=1e-10, atol=1e-10 * np.abs(old).max())


def test_sparse_and_dense_inputs_give_equal_models():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 12)) * (rng.random((300, 12)) < 0.3)
    y = (X[:, 0] + X[:, 1] ** 2 > 0.3).astype(int)
    est = InfiniteFeatureClassifier(random_state=0, max_features=20, lambda_p=0.05)
    dense = _fits(X, y, X, est)
    sparse = _fits(sp.csr_matrix(X), y, X, est)
    np.testing.assert_allclose(sparse, dense, rtol=1e-10, atol=1e-10 * np.abs(dense).max())
    assert est.family_.center_ is not None  # (the sparse fit centred inside the phases)


def _wide_sparse(n=12, d=60, seed=0):
    X = _sparse(n, d, 0.2, seed)
    return sp.vstack([X, X[:3]]).tocsr()  # (repeated rows: no wider span)


def _centred_family(X, gamma=0.5):
    return RandomFourierFeatures(gamma=gamma).fit(X, center=np.asarray(X.mean(axis=0)).ravel())


def test_sparse_span_completed_directions_have_the_reduced_phases():
    X = _wide_sparse()
    fam = _centred_family(X, gamma=[0.5, 2.0])
    reduced, XQ, complete = fam.in_span(X)
    # 12 distinct rows, centred: an 11-dimensional span
    assert reduced.n_features_in_ == XQ.shape[1] == 11 and reduced.center_ is None
    assert fam.center_ is not None  # (the family itself is unchanged)
    rng = np.random.default_rng(1)
    params_r = reduced.sample(9, rng)
    params = complete(params_r, rng)
    assert params.shape == (9, X.shape[1] + 1)
    np.testing.assert_array_equal(params[:, -1], params_r[:, -1])
    np.testing.assert_allclose(fam._phases(params, X), reduced._phases(params_r, XQ),
                               rtol=1e-10, atol=1e-12)
    # the same as the phases of the centred numbers dense
    dense = (X.toarray() - fam.center_) @ params[:, :-1].T
    np.testing.assert_allclose(reduced._phases(params_r, XQ), dense, rtol=1e-10, atol=1e-12)


def test_sparse_span_directions_are_drawn_as_the_family_draws_them():
    X = _wide_sparse(3, 8, seed=2)
    fam = _centred_family(X)  # sigma = 1
    reduced, _, complete = fam.in_span(X)
    rng = np.random.default_rng(3)
    V = complete(reduced.sample(40000, rng), rng)[:, :-1] * fam.widths_[0]
    np.testing.assert_allclose(V.mean(0), 0.0, atol=0.03)
    np.testing.assert_allclose(np.cov(V.T), np.eye(8), atol=0.04)


def test_sparse_span_ignores_row_order_repeats_and_zero_weights():
    X = _wide_sparse()[:12]
    w = np.array([1, 0, 2, 3, 1, 0, 1, 2, 1, 1, 2, 1])
    Xr = X[np.repeat(np.arange(12), w)[::-1]]
    fam = _centred_family(X)
    red_w, _, complete_w = fam.in_span(X, sample_weight=w)
    red_r, _, complete_r = fam.in_span(Xr)
    params_r = red_w.sample(4, np.random.default_rng(6))
    np.testing.assert_allclose(complete_w(params_r, np.random.default_rng(7)),
                               complete_r(params_r, np.random.default_rng(7)), atol=1e-12)
    # too long: no span (and the test stops at the distinct row sums)
    assert fam.in_span(sp.vstack([X] * 3 + [_sparse(30, 60, 0.2, 9)]).tocsr()) is None


def test_wide_sparse_classifier_prices_in_the_span(span_calls):
    X = _sparse(60, 400, 0.05, seed=4)
    y = (np.asarray(X[:, :200].sum(axis=1)).ravel() > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = InfiniteFeatureClassifier(random_state=0).fit(X, y)
    assert span_calls and all(span_calls)
    assert clf.features_.shape[1] == X.shape[1] + 1
    assert clf.score(X, y) >= 0.95


_WIDE_PEAK = """
import resource, warnings
import numpy as np, scipy.sparse as sp
from kernlearn import InfiniteFeatureClassifier
warnings.simplefilter("ignore")
n, d = {n}, {d}
rng = np.random.default_rng(0)
nnz = 20 * n  # (sp.random would draw from all n * d positions)
X = sp.csr_matrix((rng.random(nnz), (rng.integers(0, n, nnz), rng.integers(0, d, nnz))),
                  shape=(n, d))
y = (np.asarray(X[:, : d // 20].sum(axis=1)).ravel() > 0).astype(int)
y[:10] = 1 - y[:10]
est = InfiniteFeatureClassifier(random_state=0, max_features=4, n_candidates=8,
                                lambda_p=0.01, n_paths=1)
est.fit(X[:50, :30], y[:50])  # (compiled code loaded first)

def status(key):
    return int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1])

before = status("VmRSS:")
try:  # the high-water mark from here (else the process's, which only overstates)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    pass
est.fit(X, y)
est.decision_function(X)
print((status("VmHWM:") - before) / 1024, n * d * 8 / 2**20)
"""


@pytest.mark.parametrize("n, d", [(3000, 40000), (400, 250000)])
def test_wide_sparse_input_is_never_densified(n, d):
    # 3,000 x 40,000 (920 MB dense, 60,000 stored values) and 400 x 250,000 (760 MB,
    # priced in the rows' span): pricing, the master and predictions keep X sparse;
    # what grows with the columns is a few candidates' directions
    if not sys.platform.startswith("linux"):
        pytest.skip("reads the memory high-water mark from /proc")
    out = subprocess.run([sys.executable, "-c", _WIDE_PEAK.format(n=n, d=d)],
                         capture_output=True, text=True,
                         check=True)
    peak, dense = (float(v) for v in out.stdout.split())
    assert peak < dense / 10, (peak, dense)


def _topics(n, d, seed=0):
    """Sparse counts of two topics, ``d`` columns at least twice ``n``: priced in the span."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    cols = np.where(rng.random((n, 12)) < 0.4, rng.integers(0, 20, (n, 12)) + 20 * y[:, None],
                    rng.integers(0, d, (n, 12)))
    X = sp.csr_matrix((np.ones(cols.size), (np.repeat(np.arange(n), 12), cols.ravel())),
                      shape=(n, d))
    X.sum_duplicates()
    return X, y


def test_wide_sparse_features_are_completed_only_when_kept(monkeypatch):
    # priced and solved in the span; only the kept features are completed to all
    # columns (before: every step completed its best few candidates, D normals each)
    X, y = _topics(80, 400)
    real, rows = fourier._sparse_span, []

    def spy(family, X, sample_weight):
        reduced, XQ, complete = real(family, X, sample_weight)

        def counted(params_r, rng, out=None):
            rows.append(len(params_r))
            return complete(params_r, rng, out=out)

        counted.scores_in_span = getattr(complete, "scores_in_span", False)
        counted.n_params = complete.n_params
        return reduced, XQ, counted

    monkeypatch.setattr(fourier, "_sparse_span", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = InfiniteFeatureClassifier(random_state=0).fit(X, y)
    assert clf.n_paths_ == 3 and not rows  # (completed when features_ is first read)
    assert len(clf.features_) == sum(rows) > 0
    assert clf.score(X, y) >= 0.95


def test_wide_sparse_model_evaluates_to_its_training_margins():
    # the features completed from the span give, on the training rows, the margins of
    # the master solved in the span (through standardising, centring and scales)
    X, y = _topics(80, 400, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = InfiniteFeatureClassifier(random_state=0, n_paths=1, warm_start=True,
                                        max_features=30).fit(X, y)
    path = clf._path.path
    assert path._seed is not None and np.shape(path.params)[1] <= X.shape[0]  # (the span)
    margins = path.margins[:, 0]
    np.testing.assert_allclose(clf.decision_function(X), margins, rtol=1e-8,
                               atol=1e-8 * np.abs(margins).max())
    # each feature's completion is its own: the same alone, in any order, and on refits
    # (up to the rounding of products of other sizes)
    idx = np.arange(len(path.params))
    same = dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(path.features(idx)[5:9], path.features(idx[5:9]), **same)
    np.testing.assert_allclose(path.features(idx[[7, 2]]), path.features(idx)[[7, 2]], **same)
    # a warm start extends the path: its first features are those completed before
    first = clf.features_.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.set_params(max_features=40).fit(X, y)
    kept = path.features(np.arange(30))
    assert all(any(np.allclose(f, k, **same) for k in kept) for f in first)


def test_wide_sparse_regressor_hands_completed_features_to_its_final_master():
    # 300-999 rows: one held-out part chooses the features, then a master on all rows
    # (another span) takes them completed (it took them in the part's span coordinates)
    X, y = _topics(320, 700, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = InfiniteFeatureRegressor(random_state=0).fit(X, y.astype(float))
    assert reg.features_.shape[1] == X.shape[1] + 1 and len(reg.features_)
    assert reg.score(X, y.astype(float)) > 0.5


# ---- the kept features of a wide sparse fit: completed once, stored once (issue 24)

@pytest.mark.parametrize("k", [1, 8, 13])
def test_sparse_phases_from_the_stored_columns_are_the_block_sums_bit_for_bit(k):
    # fewer stored entries than columns: the blocks hold only the stored columns of V
    X = _sparse(60, 5000, 0.002, seed=5)
    assert X.nnz < X.shape[1]
    fam = RandomFourierFeatures(gamma=0.1).fit(X, center=np.asarray(X.mean(axis=0)).ravel())
    params = fam.sample(k, np.random.default_rng(3))
    every = np.empty((60, k))  # (every column of V copied into the blocks)
    fourier._sparse_phases_at(X.indptr, X.indices, X.data, params, np.arange(5000), every)
    cols, slots = fourier._stored_columns(X.indices)
    stored = np.empty((60, k))
    fourier._sparse_phases_at(X.indptr, slots, X.data, params, cols, stored)
    assert np.array_equal(stored, every)
    V = params[:, :-1]
    assert np.array_equal(fam._phases(params, X), np.ascontiguousarray(X @ V.T) - V @ fam.center_)


def test_sparse_span_completion_is_the_projection_of_its_normals():
    # V = Qz + (I - QQ')h: off the centred rows' span V is h, the features' normals
    # (exactly so on the columns where no row and no centre is stored), and on it the
    # phases are those priced in the span
    X = _wide_sparse()
    X = sp.hstack([X, sp.csr_matrix((X.shape[0], 50))]).tocsr()  # (50 columns no row uses)
    fam = _centred_family(X, gamma=[0.5, 2.0])
    reduced, XQ, complete = fam.in_span(X)
    params_r = reduced.sample(11, np.random.default_rng(1))
    V = complete(params_r, [np.random.default_rng((4, i)) for i in range(11)])[:, :-1]
    h = np.stack([np.random.default_rng((4, i)).standard_normal(X.shape[1]) / s
                  for i, s in enumerate(params_r[:, -1])])
    C = np.unique(X.toarray(), axis=0) - fam.center_
    Q = np.linalg.svd(C, full_matrices=False)[2][:reduced.n_features_in_].T
    np.testing.assert_allclose((V - h) - (V - h) @ Q @ Q.T, 0.0, atol=1e-12)
    empty = (np.diff(X.tocsc().indptr) == 0) & (fam.center_ == 0)
    assert empty.sum() >= 50 and np.array_equal(V[:, empty], h[:, empty])
    np.testing.assert_allclose(fam._phases(np.c_[V, params_r[:, -1]], X),
                               reduced._phases(params_r, XQ), rtol=1e-10, atol=1e-12)
    # into rows of a given array: the same numbers
    out = np.zeros((13, X.shape[1] + 1))
    complete(params_r, [np.random.default_rng((4, i)) for i in range(11)], out=out[1:12])
    assert np.array_equal(out[1:12, :-1], V) and not out[[0, 12]].any()


def test_averaged_draws_write_their_features_into_the_model_s_one_array(averaged_draws):
    # the draws' kept features are completed into rows of features_ (before: each
    # draw's array, then a stacked copy of them all)
    X, y = _topics(80, 400, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = InfiniteFeatureClassifier(random_state=0).fit(X, y)
    paths, results = averaged_draws[-1]
    assert len(results) == clf.n_paths_ == 3
    # (rows of one DeferredRows, completed into one array when features_ is first read)
    assert all(r.features.whole is vars(clf)["features_"] for r in results)
    rows = [r.features.array() for r in results]
    assert all(r.base is clf.features_ for r in rows)
    assert np.array_equal(np.vstack(rows), clf.features_)
    # each draw's rows are its kept features, as completed into an array of their own
    for path, r in zip(paths, results):
        kept = np.flatnonzero(_kept_groups(path)[4])
        assert 0 < len(kept) == len(r.features)
        np.testing.assert_allclose(r.features.array(), path.features(kept), rtol=1e-12,
                                   atol=1e-14)

    A = np.arange(12.0).reshape(6, 2).copy()  # (an array of its own, as the results')
    assert _stacked([A[:2], A[2:2], A[2:]]) is A
    swapped = _stacked([A[2:], A[:2]])
    assert swapped.base is not A and np.array_equal(swapped, np.vstack([A[2:], A[:2]]))


def test_raw_fourier_map_is_read_from_the_features_not_stored():
    import pickle

    X, y = _topics(80, 400, seed=4)
    clf = InfiniteFeatureClassifier(random_state=0, n_paths=1, max_features=10)
    assert not hasattr(clf, "frequencies_") and not hasattr(clf, "phases_")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    assert "frequencies_" not in vars(clf) and "phases_" not in vars(clf)
    V = clf.features_[:, :-1]
    np.testing.assert_array_equal(clf.frequencies_, V / clf.x_scale_)
    np.testing.assert_array_equal(clf.phases_, -(V @ clf.family_.center_))
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.frequencies_, clf.frequencies_)
    np.testing.assert_array_equal(back.phases_, clf.phases_)


_FIT_PEAK = """
import warnings
import numpy as np, scipy.sparse as sp
from kernlearn import InfiniteFeatureClassifier
warnings.simplefilter("ignore")
n, d = 200, 40000
rng = np.random.default_rng(0)
nnz = 20 * n
X = sp.csr_matrix((rng.random(nnz), (rng.integers(0, n, nnz), rng.integers(0, d, nnz))),
                  shape=(n, d))
y = (np.asarray(X[:, : d // 20].sum(axis=1)).ravel() > 0).astype(int)
y[:10] = 1 - y[:10]
InfiniteFeatureClassifier(max_features=3, random_state=0).fit(X[:50, :30], y[:50])

def status(key):
    return int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1])

before = status("VmRSS:")
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    pass
est = InfiniteFeatureClassifier(random_state=0).fit(X, y)
print((status("VmHWM:") - before) * 1024 / est.features_.nbytes, est.n_paths_)
"""


def test_wide_sparse_fit_holds_its_features_once():
    # 200 x 40,000 sparse, three draws averaged: the fit's memory peak is the model's
    # features_ (93 MB) and little more; before, the draws' arrays, their stacked copy
    # and frequencies_ (V / scale) made it 2.6 times that
    if not sys.platform.startswith("linux"):
        pytest.skip("reads the memory high-water mark from /proc")
    out = subprocess.run([sys.executable, "-c", _FIT_PEAK], capture_output=True, text=True,
                         check=True)
    ratio, paths = out.stdout.split()
    assert int(paths) == 3 and float(ratio) < 1.8, out.stdout
