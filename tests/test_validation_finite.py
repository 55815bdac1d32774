"""Naming the first NaN or infinite value of the input: one search, three users."""

import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from kernlearn import FGMClassifier, LowRankKernelRegressor
from kernlearn.datafiles import load_data_file
from kernlearn.estimators import _base
from kernlearn.utils._finite import first_non_finite


def _with_holes(seed, shape=(40, 7), holes=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=shape)
    X[rng.random(shape) < 0.5] = 0.0  # (zeros: implicit in the sparse forms)
    cells = rng.choice(X.size, size=holes, replace=False)
    X.flat[cells] = rng.choice([np.nan, np.inf, -np.inf], size=holes)
    return X


@pytest.mark.parametrize("seed", range(5))
def test_the_first_non_finite_value_by_row_then_column(seed):
    X = _with_holes(seed)
    bad = np.argwhere(~np.isfinite(X))  # row-major order
    i, j = bad[0]
    shuffled = sp.coo_matrix(X)
    order = np.random.default_rng(seed).permutation(shuffled.nnz)
    shuffled = sp.coo_matrix((shuffled.data[order], (shuffled.row[order],
                                                      shuffled.col[order])), shape=X.shape)
    for form in (X, np.asfortranarray(X), sp.csr_matrix(X), sp.csc_matrix(X), shuffled):
        row, col, value, count = first_non_finite(form)
        assert (row, col, count) == (i, j, len(bad)), type(form)
        assert value == X[i, j] or (np.isnan(value) and np.isnan(X[i, j]))
    X[~np.isfinite(X)] = 1.0
    assert first_non_finite(X) is None and first_non_finite(sp.csc_matrix(X)) is None
    with pytest.raises(ValueError, match="2-D"):
        first_non_finite(X[0])


def _reworded(monkeypatch):
    """scikit-learn's validation, its refusals worded otherwise (as a release may)."""
    real = _base._sklearn_validate_data

    def validate(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        except ValueError as exc:
            raise ValueError("la validation a échoué") from exc

    monkeypatch.setattr(_base, "_sklearn_validate_data", validate)


@pytest.mark.parametrize("form", ["dense", "csr", "frame"])
def test_a_non_finite_cell_is_named_whatever_scikit_learns_words(form, monkeypatch):
    # the cell was named only when scikit-learn's message held "NaN" or "infinity"
    _reworded(monkeypatch)
    X = np.arange(24.0).reshape(8, 3)
    X[5, 2], X[6, 0] = np.inf, np.nan
    y = [0, 1] * 4
    where = "row 5, column 2"
    if form == "csr":
        X = sp.csr_matrix(X)
    elif form == "frame":
        X = pd.DataFrame(X, columns=["a", "b", "c"], index=range(10, 18))
        where = "row 5 (index 15), column 'c'"
    with pytest.raises(ValueError, match=rf"X has an infinite value \(inf\) at {re.escape(where)} "
                       r"\(2 in all\); FGMClassifier needs a finite number"):
        FGMClassifier(max_iter=2).fit(X, y)
    # and at predict time
    clf = FGMClassifier(max_iter=2).fit(np.arange(24.0).reshape(8, 3), y)
    with pytest.raises(ValueError, match=r"X has an infinite value \(inf\) at row 5"):
        clf.predict(X if form != "frame" else X.to_numpy())
    # other refusals keep their (here reworded) words
    with pytest.raises(ValueError, match="la validation a échoué"):
        FGMClassifier(max_iter=2).fit(np.ones((8, 3)), [0, 1] * 3)


def test_refusals_scikit_learn_makes_first_keep_their_words():
    # renamed columns and sparse input to a dense-only model come before the
    # values in scikit-learn's checks: naming a NaN instead would send the
    # user to fill a cell of a column the model does not know
    frame = pd.DataFrame(np.arange(24.0).reshape(8, 3), columns=["a", "b", "c"])
    clf = FGMClassifier(max_iter=2).fit(frame, [0, 1] * 4)
    renamed = frame.rename(columns={"c": "d"})
    renamed.iloc[2, 2] = np.nan
    with pytest.raises(ValueError, match="feature names should match"):
        clf.predict(renamed)
    with pytest.raises(ValueError, match=r"X has a missing value \(NaN\) at row 2, column 'c'"):
        clf.predict(renamed.rename(columns={"d": "c"}))
    K = sp.csr_matrix(np.array([[1.0, np.nan], [np.nan, 1.0]]))
    with pytest.raises(TypeError, match="dense data is required"):
        LowRankKernelRegressor(kernel="precomputed").fit(K, [0.0, 1.0])


def test_blank_labels_at_predict_time_are_passed_over_not_counted(tmp_path):
    # the label column is skipped when counting a feature's missing values
    # (it was dropped from a copy of the table)
    path = tmp_path / "t.csv"
    path.write_text("a,b,y\n1,2,\n3,,\n,6,1\n7,8,\n")
    with pytest.raises(ValueError, match=r"row 3, column b: missing value .*\(2 missing values "
                       r"in 2 of 4 rows; columns a, b\)"):
        load_data_file(path, label="y", labels_needed=False)
    path.write_text("a,b,y\n1,2,\n3,4,\n5,6,1\n7,8,\n")
    X, y, info = load_data_file(path, label="y", labels_needed=False)
    assert y is None and info["feature_names"] == ["a", "b"] and info["label_name"] is None
    np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 6], [7, 8]])
    with pytest.raises(ValueError, match=r"row 2, column y: missing value"):
        load_data_file(path, label="y")


@pytest.mark.parametrize("cls_name", ["FGMRegressor", "InfiniteFeatureRegressor"])
def test_an_infinite_target_is_named_by_row(cls_name):
    # (it was scikit-learn's "Input y contains infinity", without the row,
    # while a missing target of the same array was named by its row)
    import kernlearn

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    y[[4, 7]] = [np.inf, -np.inf]
    with pytest.raises(ValueError, match=r"y has an infinite value at row 4 \(2 rows"):
        getattr(kernlearn, cls_name)().fit(X, y)
