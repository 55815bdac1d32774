"""``NystromColumns``' own sample does not depend on the row order.

Fitted without ``indices`` (``NystromColumns(n_columns=M).fit(X)``) the
family drew its ``M`` sampled rows by position, ``rng.choice(n, M)``: the same
rows in another order (a file sorted differently) gave other sampled rows,
hence other columns.  The low-rank
estimators already sampled by content (``kernlearn.families._content_sample``);
the family's default is now that rule, so a permutation of the rows gives the
same sampled rows, in the same order, and the same columns to round-off.
"""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.families import NystromColumns
from kernlearn.families._content_sample import content_sample
from kernlearn.kernels import pairwise_kernel

_RNG = np.random.default_rng(5)
N, M = 80, 12
X = _RNG.normal(size=(N, 4)) * [1.0, 3.0, 0.2, 0.5] + [0.0, 20.0, 0.0, -4.0]
PERMS = [np.random.default_rng(40 + k).permutation(N) for k in range(3)]


def _dense(A):
    return A.toarray() if sp.issparse(A) else A


def _sparse_rows():
    A = np.where(np.abs(X - X.mean(axis=0)) < 0.5 * X.std(axis=0), 0.0, X - [0, 20, 0, -4])
    return sp.csr_matrix(A)


def _assert_same_sample(fam, fam_p, perm, rows=X):
    # sampled rows of the permuted set, mapped back to the original rows: the
    # same rows, in the same order (equal rows are interchangeable: the same
    # inputs); the columns on the same training rows
    np.testing.assert_array_equal(_dense(rows)[perm[fam_p.indices_]],
                                  _dense(rows)[fam.indices_])
    inverse = np.argsort(perm)
    np.testing.assert_allclose(fam_p.columns_[:, inverse], fam.columns_,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fam_p.diag_, fam.diag_, rtol=1e-12)


@pytest.mark.parametrize("kernel,params", [("rbf", {"gamma": 0.3}),
                                           ("poly", {"degree": 2, "gamma": 0.5})])
@pytest.mark.parametrize("seed", [0, 7])
def test_a_permutation_of_the_rows_gives_the_same_sampled_rows_and_columns(kernel, params,
                                                                            seed):
    fam = NystromColumns(kernel, params, M, random_state=seed).fit(X)
    for perm in PERMS:
        fam_p = NystromColumns(kernel, params, M, random_state=seed).fit(X[perm])
        _assert_same_sample(fam, fam_p, perm)


def test_sparse_rows_sample_as_their_dense_copy_and_by_content():
    S = _sparse_rows()
    fam = NystromColumns("rbf", {"gamma": 0.3}, M, random_state=3).fit(S)
    dense = NystromColumns("rbf", {"gamma": 0.3}, M, random_state=3).fit(S.toarray())
    np.testing.assert_array_equal(fam.indices_, dense.indices_)
    for perm in PERMS:
        fam_p = NystromColumns("rbf", {"gamma": 0.3}, M, random_state=3).fit(S[perm])
        _assert_same_sample(fam, fam_p, perm, S)


def test_a_wide_sparse_matrix_is_sampled_without_densifying_it():
    # 60 rows x 400,000 columns: 192 MB dense; the sample reads the stored values
    rng = np.random.default_rng(0)
    S = sp.random(60, 400_000, density=2e-5, format="csr", random_state=rng)
    S = S + sp.csr_matrix((np.ones(60), (np.arange(60), rng.integers(0, 400_000, 60))),
                          shape=S.shape)
    tracemalloc.start()
    try:
        fam = NystromColumns("rbf", {"gamma": 0.5}, 10, random_state=0).fit(S)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(np.unique(fam.indices_)) == 10
    assert peak < 40e6, peak


def test_a_precomputed_gram_matrix_samples_by_its_rows_content():
    K = pairwise_kernel(X, X, kernel="rbf", gamma=0.3)
    fam = NystromColumns("precomputed", n_columns=M, random_state=1).fit(K)
    for perm in PERMS:
        fam_p = NystromColumns("precomputed", n_columns=M,
                               random_state=1).fit(K[np.ix_(perm, perm)])
        _assert_same_sample(fam, fam_p, perm, K)


def test_the_sample_is_the_content_sample_of_the_seed_and_a_seed_draws_others():
    """The family's default is the estimators' rule (one seed drawn from
    ``random_state``), not a copy of it; other seeds give other rows, a
    Generator is accepted, and ``indices`` given are kept as given."""
    fam = NystromColumns(n_columns=M, random_state=4).fit(X)
    seed = np.random.default_rng(4).integers(2**31)
    np.testing.assert_array_equal(fam.indices_, content_sample(X, np.arange(N), M, seed))
    gen = NystromColumns(n_columns=M, random_state=np.random.default_rng(4)).fit(X)
    np.testing.assert_array_equal(gen.indices_, fam.indices_)
    others = {tuple(sorted(NystromColumns(n_columns=M, random_state=s).fit(X).indices_))
              for s in range(5)}
    assert len(others) == 5
    given = NystromColumns(n_columns=3).fit(X, indices=[9, 2, 5])
    np.testing.assert_array_equal(given.indices_, [9, 2, 5])


def test_all_rows_sampled_keep_their_order():
    # M = n: every row, in the rows' order (as before: the models there are unchanged)
    fam = NystromColumns(n_columns=N, random_state=0).fit(X)
    np.testing.assert_array_equal(fam.indices_, np.arange(N))
