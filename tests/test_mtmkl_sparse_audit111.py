"""Audit 111 of multitask MKL on sparse X (issue 21): the linear kernel's
factor of sparse rows is the exact one the dense rows' data view gives."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn import MultitaskMKLRegressor


def _data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, random_state=seed, format="csr",
                  data_rvs=lambda k: rng.poisson(2.0, k) + 1.0)
    t = np.arange(n) % 3
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X, y, t


@pytest.mark.parametrize("n, d", [(60, 80), (90, 30)])  # (an n x n or a d x d Gram matrix)
@pytest.mark.parametrize("settings", [{"formulation": "mtsfl"}, {"shared": True},
                                      {"shared": True, "standardize": False}])
def test_a_sparse_linear_kernel_is_factored_exactly_as_dense_rows(n, d, settings):
    # max_rank below the view's rank and well below n: the Gram matrix's
    # randomised leading directions were not the data view's exact ones
    # (MK-MTSFL, 900 x 1,000 at the default max_rank: predictions 30 % apart)
    X, y, t = _data(n, d)
    Xte, _, tte = _data(20, d, seed=1)
    kw = dict(kernels=["linear", ("rbf", {"gamma": "mean"})], max_rank=5, max_iter=50,
              **settings)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (iteration caps)
        sparse = MultitaskMKLRegressor(**kw).fit(X, y, task_index=t)
        dense = MultitaskMKLRegressor(**kw).fit(X.toarray(), y, task_index=t)
        got, ref = sparse.predict(Xte, task_index=tte), dense.predict(Xte.toarray(), task_index=tte)
    assert sp.issparse(sparse.kernels_.X_)
    np.testing.assert_allclose(got, ref, rtol=1e-7, atol=1e-7 * np.abs(ref).max())
    np.testing.assert_allclose(sparse.kernel_weights_, dense.kernel_weights_, atol=1e-8)
