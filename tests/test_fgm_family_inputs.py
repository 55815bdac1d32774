"""FGM with ``family=``: weights on generated columns, importances per input.

``coef_`` held the weights of the family's generated columns (a sparse matrix
over virtual ids): ``SelectFromModel`` read it as one weight per input and
raised an ``IndexError``, and the report densified it (4e10 columns for a
degree-2 family of 200,000 inputs).  The weights are now ``column_coef_`` and
``feature_importances_`` gives one importance per input.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_selection import RFE, SelectFromModel

from kernlearn import FGMClassifier, FGMRegressor
from kernlearn.families import AdditiveKernelExpansion, PolynomialPool
from kernlearn.io import load_model, save_model
from kernlearn.summary import selection_table


def _interaction_data(n=300, m=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) * np.r_[1.0, 10.0, 0.1, np.ones(m - 3)]  # mixed units
    f = X[:, 0] * X[:, 1] / 10 + 2 * X[:, 2] / 0.1
    return X, np.where(f > 0, 1, -1), f


def test_selectors_keep_the_inputs_of_the_selected_monomials():
    X, y, _ = _interaction_data()
    est = FGMClassifier(family=PolynomialPool(), max_features=4).fit(X, y)
    imp = est.feature_importances_
    assert imp.shape == (8,) and abs(imp.sum() - 1) < 1e-12
    assert set(np.argsort(imp)[-3:]) == {0, 1, 2}
    sfm = SelectFromModel(FGMClassifier(family=PolynomialPool(), max_features=4),
                          max_features=3, threshold=-1.0).fit(X, y)
    np.testing.assert_array_equal(sfm.get_support().nonzero()[0], [0, 1, 2])
    assert sfm.transform(X).shape == (300, 3)
    rfe = RFE(FGMClassifier(family=PolynomialPool(), max_features=4),
              n_features_to_select=3).fit(X, y)
    np.testing.assert_array_equal(rfe.support_.nonzero()[0], [0, 1, 2])


def test_importances_follow_their_definition():
    X, y, _ = _interaction_data()
    est = FGMClassifier(family=PolynomialPool(), max_features=6).fit(X, y)
    ids = np.sort(est.selected_features_)
    cols = est.transform(X)  # raw generated columns, increasing virtual id
    W = np.asarray(est.column_coef_[:, ids].todense())
    amp = np.linalg.norm(W, axis=0) * cols.std(axis=0)
    ref = np.zeros(8)
    m = 8
    for a, v in zip(amp, ids):
        inputs = {v - m * m} if v >= m * m else set(divmod(int(v), m))
        for j in inputs:
            ref[j] += a
    np.testing.assert_allclose(est.feature_importances_, ref / ref.sum(), rtol=1e-10)
    # the weights are those the decision function uses
    np.testing.assert_allclose(est.decision_function(X), cols @ W[0] + est.intercept_[0],
                               rtol=1e-10, atol=1e-12)


def test_importances_do_not_depend_on_input_units():
    X, y, _ = _interaction_data()
    a = np.r_[3.0, 0.01, 50.0, np.ones(5)]
    one = FGMClassifier(family=PolynomialPool(), max_features=4).fit(X, y)
    two = FGMClassifier(family=PolynomialPool(), max_features=4).fit(X * a, y)
    np.testing.assert_allclose(one.feature_importances_, two.feature_importances_,
                               rtol=1e-6, atol=1e-9)


def test_coef_names_column_coef_and_refits_drop_stale_attributes():
    X, y, _ = _interaction_data()
    est = FGMClassifier(family=PolynomialPool(), max_features=3).fit(X, y)
    with pytest.raises(AttributeError, match="column_coef_"):
        est.coef_
    assert not hasattr(est, "coef_")
    assert sp.issparse(est.column_coef_) and est.column_coef_.shape == (1, 8 * 8 + 8)
    est.set_params(family=None).fit(X, y)  # the same object, without a family
    assert est.coef_.shape == (1, 8)
    assert not hasattr(est, "column_coef_") and not hasattr(est, "feature_importances_")
    with pytest.raises(AttributeError, match="no attribute 'nothing_'"):
        est.nothing_


def test_regressor_and_additive_family():
    X, _, f = _interaction_data(m=6)
    reg = FGMRegressor(family=PolynomialPool(), max_features=4, C=10.0).fit(X, f)
    assert reg.column_coef_.shape == (1, 6 * 6 + 6)
    assert set(np.argsort(reg.feature_importances_)[-3:]) == {0, 1, 2}
    rng = np.random.default_rng(1)
    Z = rng.random((300, 6))
    yz = np.where(np.abs(Z[:, 4] - 0.5) < 0.25, 1, -1)  # one input, not linear in it
    add = FGMClassifier(family=AdditiveKernelExpansion(n_bins=20), max_features=2).fit(Z, yz)
    assert np.argmax(add.feature_importances_) == 4
    sfm = SelectFromModel(FGMClassifier(family=AdditiveKernelExpansion(n_bins=20),
                                        max_features=2), max_features=1,
                          threshold=-1.0).fit(Z, yz)
    np.testing.assert_array_equal(sfm.get_support().nonzero()[0], [4])


class _MixingFamily(PolynomialPool):
    """A user's family whose columns are not functions of a few inputs."""

    def input_incidence(self, ids):
        raise NotImplementedError("every column reads every input")


def test_families_that_mix_inputs_have_no_importances():
    X, y, _ = _interaction_data(n=120)
    est = FGMClassifier(family=_MixingFamily(), max_features=3).fit(X, y)
    assert hasattr(est, "column_coef_") and not hasattr(est, "feature_importances_")
    with pytest.raises(ValueError, match="feature_importances_"):
        SelectFromModel(est, prefit=True).transform(X)


def test_model_file_written_with_coef_still_loads(tmp_path):
    X, y, _ = _interaction_data()
    est = FGMClassifier(family=PolynomialPool(), max_features=3).fit(X, y)
    old = FGMClassifier(family=PolynomialPool(), max_features=3).fit(X, y)
    old.__dict__["coef_"] = old.__dict__.pop("column_coef_")
    save_model(old, tmp_path / "old.npz")
    back = load_model(tmp_path / "old.npz")
    assert (back.column_coef_ != est.column_coef_).nnz == 0
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    plain = FGMClassifier().fit(X, y)  # a model without a family keeps its coef_
    save_model(plain, tmp_path / "plain.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "plain.npz").coef_, plain.coef_)


def test_selection_table_reads_only_the_selected_weights():
    # 100,000 sparse inputs: 1e10 virtual monomials, which toarray() cannot hold
    rng = np.random.default_rng(0)
    X = sp.random(80, 100_000, density=2e-4, format="csr", random_state=0)
    X = sp.hstack([X, sp.csr_matrix(rng.normal(size=(80, 1)))], format="csr")
    y = np.where(X[:, -1].toarray().ravel() > 0, 1, -1)
    est = FGMClassifier(family=PolynomialPool(), max_features=2).fit(X, y)
    assert est.column_coef_.shape[1] > 1e10
    cols, rows = selection_table(est)
    coo = est.column_coef_.tocoo()
    weight = dict(zip(coo.col.tolist(), np.abs(coo.data).tolist()))
    np.testing.assert_allclose([r[cols.index("max_abs_coef")] for r in rows],
                               [weight.get(int(v), 0.0) for v in est.selected_features_])
