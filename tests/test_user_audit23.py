"""A twenty-third user's audit: sparse matrices as a text-mining user hands them over.

A text-mining user handed every estimator, family and helper the matrices her
tools make: CSR and CSC matrices and SciPy's sparse arrays, COO, DOK, LIL
and BSR, int32 and int64 indices, float32 and integer counts, matrices built
from triplets with repeated coordinates (duplicates to be summed), unsorted
indices and explicitly stored zeros, TF-IDF and hashing pipelines, empty
rows and columns, a matrix of no stored value and a million columns, and
the same data as LIBSVM and ``save_npz`` files at the command line.  The
estimators held: they sum a copy, never the user's matrix, and the same
numbers gave the same model in every container.  The families, kernel
functions and data profile they are built on, which ``doc/extending.md`` and
the API reference offer on their own, did not, and the command line's
refusals of her files named no line or gave advice for Python; each test
here failed before its fix.
"""

import numpy as np
import pytest
import scipy.sparse as sp


def _counts(n=40, d=6, seed=0):
    """Word counts: non-negative integers, mostly zero."""
    rng = np.random.default_rng(seed)
    return rng.poisson(0.6, size=(n, d)).astype(float)


def _as_built_from_triplets(X, fmt, seed=1):
    """``X`` as a CSR or CSC matrix built from triplets the way a tokenizer emits them:
    every count split in two entries (duplicates SciPy does not sum until asked),
    the entries of each row (column) in arbitrary order, and two explicit zeros."""
    rng = np.random.default_rng(seed)
    C = sp.coo_matrix(X)
    rows = np.r_[C.row, C.row, [0, 1]]
    cols = np.r_[C.col, C.col, [3, 4]]
    vals = np.r_[C.data / 2, C.data / 2, [0.0, 0.0]]
    perm = rng.permutation(rows.size)
    rows, cols, vals = rows[perm], cols[perm], vals[perm]
    major, minor, n_major = (rows, cols, X.shape[0]) if fmt == "csr" else (cols, rows, X.shape[1])
    order = np.argsort(major, kind="stable")
    indptr = np.r_[0, np.cumsum(np.bincount(major, minlength=n_major))]
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    A = cls((vals[order], minor[order], indptr), shape=X.shape)
    assert not A.has_canonical_format
    np.testing.assert_array_equal(A.toarray(), X)
    return A


def _arrays(A):
    return [a.copy() for a in (A.data, A.indices, A.indptr)]


def _assert_untouched(A, before):
    for got, was in zip(_arrays(A), before):
        np.testing.assert_array_equal(got, was)


def _dense(block):
    return block.toarray() if sp.issparse(block) else np.asarray(block)


def _family(name):
    from kernlearn.families import (AdditiveKernelExpansion, FeaturePool,
                                    IntersectionKernelFeatures, NystromColumns,
                                    PolynomialPool)

    return {"pool": FeaturePool(), "poly2": PolynomialPool(),
            "additive": AdditiveKernelExpansion("hik", n_bins=5),
            "chi2": AdditiveKernelExpansion("additive_chi2"),
            "intersection": IntersectionKernelFeatures(),
            "nystrom": NystromColumns(n_columns=8)}[name]


def _fit(family, X):
    if type(family).__name__ == "NystromColumns":
        return family.fit(X, indices=np.arange(8))
    return family.fit(X)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("name", ["pool", "poly2", "additive", "chi2", "intersection",
                                  "nystrom"])
def test_families_read_a_matrix_with_duplicates_as_its_numbers_and_leave_it_alone(name, fmt):
    # the squared norms, maps, sorted values and compiled pricing read the
    # stored values: each count split in two was read as two halves.  The
    # pool's scales (hence its prices) were off by up to 3.6, the degree-2
    # pool's prices by 12.7, the Nystrom columns' by 9.1 (the RBF kernel's
    # row norms); the HIK and chi2 columns by 0.21 and 0.03.  And the
    # additive expansions' fit (SciPy's abs() and max()) and the intersection
    # family's (sum_duplicates on a view of a CSC matrix) summed the duplicates
    # in the user's own matrix.
    X = _counts()
    g = np.random.default_rng(2).standard_normal(X.shape[0])
    ref = _fit(_family(name), X)
    A = _as_built_from_triplets(X, fmt)
    before = _arrays(A)
    fam = _fit(_family(name), A)
    _assert_untouched(A, before)
    want = ref.price(g, 3, rng=0, X=X)
    got = fam.price(g, 3, rng=0, X=A)
    _assert_untouched(A, before)
    np.testing.assert_array_equal(np.asarray(got.params), np.asarray(want.params))
    np.testing.assert_allclose(got.scores, want.scores, rtol=1e-12)
    np.testing.assert_allclose(_dense(fam.columns(got, A)), _dense(ref.columns(want, X)),
                               rtol=1e-12, atol=1e-12)
    _assert_untouched(A, before)


def test_a_coo_matrix_with_duplicates_given_to_a_family_is_summed_not_changed():
    # SciPy's abs() on a COO matrix replaced the caller's row, col and data
    # arrays by summed ones
    from kernlearn.families import AdditiveKernelExpansion

    X = _counts()
    C = sp.coo_matrix(X)
    A = sp.coo_matrix((np.r_[C.data / 2, C.data / 2], (np.r_[C.row, C.row], np.r_[C.col, C.col])),
                      shape=X.shape)
    before = [A.row.copy(), A.col.copy(), A.data.copy()]
    fam = AdditiveKernelExpansion("hik", n_bins=5).fit(A)
    for got, was in zip([A.row, A.col, A.data], before):
        np.testing.assert_array_equal(got, was)
    ref = AdditiveKernelExpansion("hik", n_bins=5).fit(X)
    np.testing.assert_array_equal(fam.levels_, ref.levels_)
    np.testing.assert_allclose(fam.scale_, ref.scale_, rtol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_the_rbf_kernel_function_sums_duplicates(fmt):
    # kernlearn.kernels.rbf_kernel (and pairwise_kernel(..., "rbf")), offered
    # as a kernel callable, took scikit-learn's row norms of the stored
    # values: kernel values off by up to 0.9999 (exp(-gamma d) of a wrong d)
    from kernlearn.kernels import pairwise_kernel, rbf_kernel

    X = _counts()
    A = _as_built_from_triplets(X, fmt)
    before = _arrays(A)
    np.testing.assert_allclose(rbf_kernel(A, A, gamma=0.5), rbf_kernel(X, X, gamma=0.5),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(pairwise_kernel(A, X, "rbf", gamma=0.5),
                               rbf_kernel(X, X, gamma=0.5), rtol=1e-12, atol=1e-15)
    _assert_untouched(A, before)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_the_training_data_profile_reads_summed_counts(fmt):
    # feature_profile called every count split in two fractional (the
    # integrality check read the halves: "feature_integral" False for counts)
    # and outside_fraction then called 75 % of the same data unlike it (what
    # makes the command line refuse a file); on a CSC matrix SciPy's min()
    # summed the duplicates in the caller's matrix
    from kernlearn.summary import far_outside_rows, feature_profile, outside_fraction

    X = _counts()
    A = _as_built_from_triplets(X, fmt)
    before = _arrays(A)
    profile = feature_profile(A)
    _assert_untouched(A, before)
    want = feature_profile(sp.csr_matrix(X))
    for key in want:
        np.testing.assert_array_equal(profile[key], want[key])
    assert profile["feature_integral"].all()
    assert outside_fraction(A, want) == 0.0
    # a count far below its training range (a code such as -999) is named by its row
    Z = X.copy()
    Z[7, 2] = -999.0
    B = _as_built_from_triplets(Z, fmt)
    rows, first = far_outside_rows(B, want)
    np.testing.assert_array_equal(rows, [7])
    assert first == (7, 2, -999.0)
    _assert_untouched(A, before)


def test_fgm_maxabs_scaling_leaves_the_callers_matrix_alone():
    # fit_standardization(sparse_rule="maxabs") (FGM's rule on sparse text)
    # took abs() of a CSR view of the caller's matrix: SciPy summed its
    # duplicates in place
    from kernlearn.preprocessing import fit_standardization

    X = _counts()
    A = _as_built_from_triplets(X, "csr")
    before = _arrays(A)
    got = fit_standardization(A, sparse_rule="maxabs")
    _assert_untouched(A, before)
    np.testing.assert_array_equal(got.scale,
                                  fit_standardization(sp.csr_matrix(X), sparse_rule="maxabs").scale)


@pytest.mark.parametrize("line, said", [
    ("-1 3:1 1:2", "feature index 1 follows 3 (not increasing"),
    ("-1 2:1 2:1", "feature index 2 follows 2 (repeated"),
])
def test_a_libsvm_line_of_unsorted_or_repeated_indices_is_named(tmp_path, capsys, line, said):
    # a file written by a script that kept a dict's order (or counted a word
    # twice) was refused with scikit-learn's "Feature indices in
    # SVMlight/LibSVM data file should be sorted and unique", naming no line
    from conftest import one_error, run_cli

    path = tmp_path / "docs.svm"
    path.write_text("1 1:0.5 2:1\n-1 1:0.2 4:3\n" + line + "\n1 2:4\n")
    code, _, err = run_cli(["fit", path, "-e", "fgm", "-m", tmp_path / "m.npz"], capsys)
    assert code == 3 and one_error(err), err
    assert f"corrupt svmlight file {path}: line 3: {said}" in err
    assert "as LIBSVM requires" in err


def test_out_of_core_names_the_refused_line_from_the_chunks_first_byte(tmp_path, capsys):
    # --out-of-core said "corrupt svmlight file docs.svm (byte 0): Feature
    # indices in SVMlight/LibSVM data file should be sorted and unique."
    from conftest import one_error, run_cli

    path = tmp_path / "docs.svm"
    path.write_text("1 1:0.5 2:1\n-1 1:0.2 4:3\n-1 3:1 1:2\n1 2:4\n")
    code, _, err = run_cli(["fit", path, "-e", "fgm", "-m", tmp_path / "m.npz",
                            "--out-of-core"], capsys)
    assert code == 3 and one_error(err), err
    assert (f"corrupt svmlight file {path} (byte 0): line 3 from there: feature index 1 "
            "follows 3 (not increasing") in err


@pytest.mark.parametrize("form", [sp.bsr_matrix, sp.dia_matrix])
@pytest.mark.parametrize("name", ["pool", "nystrom"])
def test_the_pool_and_nystrom_families_take_the_formats_the_estimators_take(name, form):
    # a BSR or DIA matrix (which the estimators take) failed in FeaturePool's
    # columns and NystromColumns' fit with SciPy's bare NotImplementedError
    # (those formats cannot be indexed)
    X = _counts()
    g = np.random.default_rng(2).standard_normal(X.shape[0])
    ref = _fit(_family(name), X)
    fam = _fit(_family(name), form(X))
    got = fam.price(g, 3, rng=0, X=form(X))
    want = ref.price(g, 3, rng=0, X=X)
    np.testing.assert_array_equal(np.asarray(got.params), np.asarray(want.params))
    np.testing.assert_allclose(_dense(fam.columns(got, form(X))), _dense(ref.columns(want, X)),
                               rtol=1e-12, atol=1e-12)


def test_a_scipy_sparse_npz_file_is_told_how_to_become_a_libsvm_file(tmp_path, capsys):
    # scipy.sparse.save_npz writes data, indices, indptr, format and shape:
    # the command line said only "has no array named 'X' (found: indices,
    # indptr, format, shape, data)", leaving the user to guess what it wants
    from conftest import one_error, run_cli
    from sklearn.datasets import dump_svmlight_file

    X = sp.csr_matrix(_counts())
    y = (X[:, 0].toarray().ravel() > 0).astype(int)
    sp.save_npz(tmp_path / "counts.npz", X)
    code, _, err = run_cli(["fit", tmp_path / "counts.npz", "-e", "fgm", "-m",
                            tmp_path / "m.npz"], capsys)
    assert code == 3 and one_error(err), err
    assert "it is a SciPy sparse matrix (scipy.sparse.save_npz), without labels" in err
    assert "sklearn.datasets.dump_svmlight_file(X, y, 'data.svm')" in err
    # the advice works
    dump_svmlight_file(X, y, str(tmp_path / "data.svm"))
    code, _, err = run_cli(["fit", tmp_path / "data.svm", "-e", "fgm", "-m",
                            tmp_path / "m.npz", "-q"], capsys)
    assert code == 0, err


def test_the_multitask_estimators_fit_a_libsvm_file_as_its_numbers_dense(tmp_path, capsys):
    # the multitask estimators took dense data only: on a LIBSVM file the
    # command line said "it takes dense data only ... write the data as a CSV";
    # they fit sparse rows now (issue 21), the model of the same numbers dense
    import warnings

    import scipy.sparse as sp
    from conftest import run_cli
    from sklearn.datasets import dump_svmlight_file

    from kernlearn.io import load_model

    X = _counts(n=60)
    y = (X[:, 0] > X[:, 1]).astype(int)
    dump_svmlight_file(X, y, str(tmp_path / "data.svm"))
    np.savetxt(tmp_path / "data.csv", np.c_[X, y], delimiter=",", comments="",
               header=",".join([f"f{j}" for j in range(X.shape[1])] + ["label"]))
    for name in ("svm", "csv"):
        code, _, err = run_cli(["fit", tmp_path / f"data.{name}", "-e", "mtmkl-classifier",
                                "-m", tmp_path / f"{name}.npz", "-q"], capsys)
        assert code == 0, err
    sparse, dense = load_model(tmp_path / "svm.npz"), load_model(tmp_path / "csv.npz")
    assert sp.issparse(sparse.kernels_.X_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the CSV model's column names)
        np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                                   dense.decision_function(X), rtol=1e-7, atol=1e-8)


def test_load_svmlight_names_the_line_of_unsorted_indices(tmp_path):
    # kernlearn.datasets.load_svmlight said "corrupt svmlight file ...: Feature
    # indices in SVMlight/LibSVM data file should be sorted and unique."
    from kernlearn.datasets import load_svmlight

    path = tmp_path / "docs.svm"
    path.write_text("1 1:0.5 2:1\n-1 1:0.2 4:3\n-1 3:1 1:2\n")
    with pytest.raises(ValueError, match=r"docs\.svm: line 3: feature index 1 follows 3 "
                                         r"\(not increasing"):
        load_svmlight(path)


def test_a_libsvm_file_given_to_a_precomputed_kernel_names_the_gram_matrix(tmp_path, capsys):
    # every estimator takes sparse rows now; only a precomputed kernel (X is
    # the Gram matrix) is dense-only, and the command line's advice said
    # "write the data as a CSV": a CSV of the data is no Gram matrix either
    from conftest import one_error, run_cli
    from sklearn.datasets import dump_svmlight_file

    X = _counts(n=30)
    dump_svmlight_file(X @ X.T, (X[:, 0] > X[:, 1]).astype(int), str(tmp_path / "gram.svm"))
    code, _, err = run_cli(["fit", tmp_path / "gram.svm", "-e", "lowrank-classifier", "-p",
                            "kernel=precomputed", "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 6 and one_error(err), err
    assert ("it takes dense data only with a precomputed kernel, and a LIBSVM file is read as "
            "a sparse matrix: write the Gram matrix as a CSV (or .npy) file") in err
    # the advice works
    G = X @ X.T
    np.savetxt(tmp_path / "gram.csv", np.c_[G, (X[:, 0] > X[:, 1]).astype(int)], delimiter=",",
               comments="", header=",".join([f"g{j}" for j in range(len(G))] + ["label"]))
    code, _, err = run_cli(["fit", tmp_path / "gram.csv", "-e", "lowrank-classifier", "-p",
                            "kernel=precomputed", "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 0, err
