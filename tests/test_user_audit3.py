"""A third user's audit: the Python API on a data scientist's own data."""

import warnings

import numpy as np
import pytest

pytest.importorskip("matplotlib")


def test_kernel_weight_labels_from_an_array_and_of_the_wrong_count(tmp_path):
    from kernlearn.plotting import plot_kernel_weights

    out = tmp_path / "w.png"
    # labels held in an array (a fitted estimator's names) are plotted
    plot_kernel_weights([0.2, 0.3, 0.5], out, names=np.array(["a", "b", "c"]))
    assert out.stat().st_size > 0
    # one label short: refused naming the argument, nothing written
    with pytest.raises(ValueError, match="names has 2 labels for 3 weights"):
        plot_kernel_weights([0.2, 0.3, 0.5], tmp_path / "x.png", names=["a", "b"])
    assert not (tmp_path / "x.png").exists()


def _multitask_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    t = np.repeat([0, 1], 30)
    y = (X[:, 0] * (2 * t - 1) + 0.3 * rng.normal(size=60) > 0).astype(int)
    return X, y, t


@pytest.mark.parametrize("name", ["MultitaskMKLClassifierCV", "MultitaskMKLRegressorCV"])
def test_cv_search_warns_of_a_renamed_parameter_once(name):
    import warnings

    import kernlearn

    X, y, t = _multitask_data()
    kw = {} if "Classifier" in name else {"kernel_selection": "objective"}
    est = getattr(kernlearn, name)(["linear"], Cs=(0.1, 1.0), cv=3, max_inner=2, **kw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y, task_index=t)
    renamed = [w for w in caught if issubclass(w.category, FutureWarning)]
    # one per validation fit and the refit (7) before
    assert len(renamed) == 1, [str(w.message) for w in renamed]
    assert "'max_inner' was renamed 'inner_max_iter'" in str(renamed[0].message)
    # and the value reached the validation fits: the same search as the new name's
    new = getattr(kernlearn, name)(["linear"], Cs=(0.1, 1.0), cv=3, inner_max_iter=2, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        new.fit(X, y, task_index=t)
    np.testing.assert_array_equal(est.cv_results_["mean_test_score"],
                                  new.cv_results_["mean_test_score"])
    # both names: refused before any validation fit
    both = getattr(kernlearn, name)(["linear"], cv=3, max_inner=2, inner_max_iter=3, **kw)
    with pytest.raises(ValueError, match="not both"):
        both.fit(X, y, task_index=t)


def test_cv_search_sums_up_its_validation_fits_convergence_warnings():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from kernlearn import MultitaskMKLClassifierCV

    X, y, t = _multitask_data()
    clf = MultitaskMKLClassifierCV(["linear", ("rbf", {"gamma": 0.5})], Cs=(0.1, 1.0, 10.0),
                                   cv=3, max_iter=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y, task_index=t)
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    # one per validation fit (9) and the refit's before: now the sum and the refit's
    assert len(msgs) == 2, msgs
    assert "in the 9 validation fits" in msgs[0] and "MK-MTFL stopped" in msgs[0]
    assert "MK-MTFL stopped" in msgs[1] and not clf.converged_


@pytest.mark.parametrize("name", ["FGMClassifier", "InfiniteFeatureRegressor",
                                  "LowRankKernelClassifier", "MultitaskMKLRegressor"])
def test_non_numeric_dataframe_columns_are_named(name):
    pd = pytest.importorskip("pandas")
    import kernlearn

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"size": rng.normal(size=40), "colour": ["red", "blue"] * 20,
                      "when": pd.date_range("2020-01-01", periods=40),
                      "kind": pd.Categorical(["a", "b"] * 20)})
    y = (X["size"] > 0).astype(int) if "Classifier" in name else X["size"] * 2
    est = getattr(kernlearn, name)()
    # NumPy's message named no column ("could not convert string to float:
    # 'red'"; for the dates "The DType ... could not be promoted by ...")
    with pytest.raises(ValueError, match=r"X has non-numeric column\(s\) 'colour' \(.*\), "
                       r"'when' \(datetime64.*\), 'kind' \(category\);"):
        est.fit(X, y)
    est.fit(X[["size"]].assign(code=X["colour"].eq("red").astype(int)), y)
    with pytest.raises(ValueError, match=r"non-numeric column\(s\) 'code' "):
        est.predict(X[["size"]].assign(code=X["colour"]))
    # numbers held as text still convert, as scikit-learn converts them
    est.fit(X[["size"]].assign(code=X["size"].astype(str).astype(object)), y)


@pytest.mark.parametrize("make", ["fgm", "fgm-sparse", "group"])
def test_synthetic_data_of_an_integer_dtype_is_refused(make):
    from kernlearn import datasets

    # the N(0, 1) entries were truncated to mostly zeros, silently
    with pytest.raises(ValueError, match="dtype must be a floating type, got int32"):
        if make == "group":
            datasets.make_fgm_group_synthetic(20, 20, group_size=5, n_informative_groups=2,
                                              dtype=np.int32, random_state=0)
        else:
            datasets.make_fgm_synthetic(20, 10, n_informative=3, dtype=np.int32,
                                        density=0.5 if make == "fgm-sparse" else 1.0,
                                        random_state=0)
    X, y, w = datasets.make_fgm_synthetic(20, 10, n_informative=3, dtype=np.float32,
                                          random_state=0)
    assert X.dtype == np.float32 and np.all(y == np.sign(X.astype(float) @ w))


def test_sinc_noise_level_must_be_a_number():
    from kernlearn.datasets import make_sinc

    for bad in (float("nan"), -float("inf")):  # every training target was NaN
        with pytest.raises(ValueError, match="snr_db must be a number of decibels"):
            make_sinc(10, 5, snr_db=bad)
    X, y, _, _ = make_sinc(10, 5, snr_db=float("inf"), random_state=0)
    # no noise at an infinite ratio: the training targets are the clean function
    r = np.linalg.norm(X, axis=1)
    np.testing.assert_allclose(y, np.sin(r) / r)


def test_report_of_an_unfitted_estimator_is_refused():
    from sklearn.exceptions import NotFittedError

    from kernlearn import FGMClassifier
    from kernlearn.report import build_report

    # it was a "model report" of the parameters alone
    with pytest.raises(NotFittedError):
        build_report(FGMClassifier())


@pytest.mark.parametrize("what", ["model", "report", "plot"])
def test_writing_into_a_missing_folder_names_the_file_asked_for(what, tmp_path):
    from kernlearn import FGMClassifier
    from kernlearn.io import save_model
    from kernlearn.plotting import plot_kernel_weights
    from kernlearn.report import write_report

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    est = FGMClassifier().fit(X, (X[:, 0] > 0).astype(int))
    target = tmp_path / "missing" / f"out.{'png' if what == 'plot' else 'html'}"
    write = {"model": lambda: save_model(est, target),
             "report": lambda: write_report(est, None, target),
             "plot": lambda: plot_kernel_weights([0.5, 0.5], target)}[what]
    # the error named a hidden temporary file (".out.html.x1y2z3.tmp")
    with pytest.raises(FileNotFoundError) as info:
        write()
    assert info.value.filename == str(target)
    assert ".tmp" not in str(info.value)


@pytest.mark.parametrize("name", ["FGMClassifier", "InfiniteFeatureClassifier"])
def test_probabilities_are_the_fitted_models_after_set_params(name):
    import kernlearn

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    C = getattr(kernlearn, name)
    platt = C(probability=True, random_state=0).fit(X, y) if "random_state" in \
        C().get_params() else C(probability=True).fit(X, y)
    before = platt.predict_proba(X)
    # the parameters changed, the model not (until the next fit): the logistic
    # sigmoids of squared-hinge margins were returned instead of Platt's
    platt.set_params(loss="logistic")
    np.testing.assert_array_equal(platt.predict_proba(X), before)
    logistic = C(loss="logistic").fit(X, y)
    before = logistic.predict_proba(X)
    logistic.set_params(loss="squared_hinge", probability=True)  # was a TypeError
    np.testing.assert_array_equal(logistic.predict_proba(X), before)


@pytest.mark.parametrize("fit_dtype, new_dtype", [(np.float64, np.float32),
                                                  (np.float32, np.float64)])
def test_obscure_predicts_sparse_input_of_the_other_precision(fit_dtype, new_dtype):
    import scipy.sparse as sp

    from kernlearn import PNormMKLClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    X[np.abs(X) < 0.4] = 0.0
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = PNormMKLClassifier(random_state=0).fit(sp.csr_matrix(X.astype(fit_dtype)), y)
    # float32 against float64 was scikit-learn's "Dtype of A and B must be the same"
    got = clf.decision_function(sp.csr_matrix(X.astype(new_dtype)))
    # the same as dense input of that precision (to float32 rounding)
    np.testing.assert_allclose(got, clf.decision_function(X.astype(new_dtype)), atol=1e-5)
    np.testing.assert_allclose(got, clf.decision_function(sp.csr_matrix(X.astype(fit_dtype))),
                               atol=1e-5)


@pytest.mark.parametrize("name", ["InfiniteFeatureClassifier", "LowRankKernelRegressor",
                                  "PNormMKLClassifier"])
def test_sparse_input_to_a_model_fitted_on_dense_says_what_to_do(name):
    import scipy.sparse as sp

    import kernlearn

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int) if "Classifier" in name else X[:, 0]
    est = getattr(kernlearn, name)(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"model was fitted on dense X.*pass X\.toarray\(\)"):
        est.predict(sp.csr_matrix(X))
    np.testing.assert_array_equal(est.predict(sp.csr_matrix(X).toarray()), est.predict(X))


def test_model_metadata_that_is_not_a_dict_is_named(tmp_path):
    from kernlearn import FGMClassifier
    from kernlearn.io import load_model, save_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    est = FGMClassifier().fit(X, (X[:, 0] > 0).astype(int))
    with pytest.raises(TypeError, match="metadata must be a dict, got list"):
        save_model(est, tmp_path / "m.npz", metadata=["source.csv"])
    assert not (tmp_path / "m.npz").exists()
    save_model(est, tmp_path / "m.npz", metadata={"source": "source.csv"})
    assert load_model(tmp_path / "m.npz", return_metadata=True)[1] == {"source": "source.csv"}


def test_selection_table_labels_the_kernels_that_were_fitted():
    from kernlearn import MultitaskMKLClassifier, PNormMKLClassifier
    from kernlearn.summary import selection_table

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int)
    clf = PNormMKLClassifier(random_state=0).fit(X, y)
    _, rows = selection_table(clf)
    # OBSCURE's default list is three RBF widths and the linear kernel: its
    # second RBF was labelled "linear", the last two nothing
    specs = clf.kernel_list_.specs
    assert [r[1].split("(")[0] for r in rows] == [k for k, _, _ in specs]
    assert rows[3][1] == "linear" and rows[1][1] == f"rbf(gamma={specs[1][1]['gamma']:.4g})"
    np.testing.assert_allclose([r[2] for r in rows], clf.kernel_weights_)
    mt = MultitaskMKLClassifier().fit(X, y)
    gamma = mt.kernels_.params_[0]["gamma"]
    assert [r[1] for r in selection_table(mt)[1]] == [f"rbf(gamma={gamma:.4g})", "linear"]
    # a list given is labelled as written
    mt = MultitaskMKLClassifier(["linear", ("rbf", {"gamma": "mean"})]).fit(X, y)
    assert [r[1] for r in selection_table(mt)[1]] == ["linear", "rbf(gamma=mean)"]


def test_selection_table_and_report_name_a_dataframes_columns():
    pd = pytest.importorskip("pandas")
    from kernlearn import FGMClassifier
    from kernlearn.report import build_report
    from kernlearn.summary import selection_table

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(60, 3)), columns=["age", "income", "visits"])
    est = FGMClassifier().fit(X, (X["visits"] > 0).astype(int))
    cols, rows = selection_table(est)
    by_index = {r[cols.index("feature")]: r[cols.index("name")] for r in rows}
    # the names were left blank: only the file metadata's were used
    assert by_index and all(name == X.columns[j] for j, name in by_index.items())
    assert "<td>visits</td>" in build_report(est)


def test_fgm_groups_listing_a_feature_twice_are_refused():
    from kernlearn import FGMClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="group 1 lists feature 2 more than once"):
        FGMClassifier(groups=[[0, 1], [2, 2, 3]]).fit(X, y)


def test_fgm_features_in_no_group_are_named():
    from kernlearn import FGMClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    y = (X[:, 0] > 0).astype(int)
    with pytest.warns(UserWarning, match="2 of 5 features are in no group"):
        est = FGMClassifier(groups=[[0, 1], [2]]).fit(X, y)
    assert np.all(est.coef_.ravel()[3:] == 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FGMClassifier(groups=[[0, 1], [2], [3, 4]]).fit(X, y)
