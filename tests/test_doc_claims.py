"""What the public estimators' docstrings promise, checked against the code.

Generic over ``kernlearn._ESTIMATORS``: every ``default=...`` of a
"Parameters" entry equals the signature's default; after a small fit every
"Attributes" entry exists (the conditional ones are listed below with their
condition, and checked under it), has a shape the entry allows, and every
public fitted attribute (a name ending in ``_``) is documented.  Then a few
specific claims found wrong by reading the docs (``history_`` keys, a CLI help).
"""

import inspect
import re
import warnings

import numpy as np
import pytest

numpydoc_docscrape = pytest.importorskip("numpydoc.docscrape")

import kernlearn  # noqa: E402
from kernlearn.families import PolynomialPool  # noqa: E402

# Documented attributes that exist only under a condition: (estimator,
# attribute) -> the condition, which test_conditional_attributes ("family=")
# and test_feature_names_in_with_a_dataframe fit under.
CONDITIONAL = {
    ("FGMClassifier", "column_coef_"): "family=",
    ("FGMClassifier", "feature_importances_"): "family=",
    ("FGMRegressor", "column_coef_"): "family=",
    ("FGMRegressor", "feature_importances_"): "family=",
    **{(name, "feature_names_in_"): "X with string column names (a DataFrame)"
       for name in kernlearn._ESTIMATORS},
}

_rng = np.random.RandomState(0)
X = _rng.randn(40, 3)
Y_BINARY = (X[:, 0] > 0).astype(int)
Y_MULTI = np.digitize(X[:, 0], [-0.5, 0.5])
Y_REG = X[:, 0] + 0.1 * _rng.randn(40)
TASKS = np.repeat([0, 1], 20)
_SMALL_GRFL = {"max_features": 3, "n_candidates": 10}

# (estimator, case label, constructor kwargs, y, fit kwargs)
CASES = [
    ("FGMClassifier", "binary", {}, Y_BINARY, {}),
    ("FGMClassifier", "multiclass", {}, Y_MULTI, {}),
    ("FGMClassifier", "ovr", {"multiclass": "ovr"}, Y_MULTI, {}),
    ("FGMRegressor", "regression", {"C": 1.0}, Y_REG, {}),
    ("FGMRegressor", "C auto", {}, Y_REG, {}),
    ("PNormMKLClassifier", "binary", {}, Y_BINARY, {}),
    ("PNormMKLClassifier", "multiclass", {}, Y_MULTI, {}),
    ("InfiniteFeatureClassifier", "binary", _SMALL_GRFL, Y_BINARY, {}),
    ("InfiniteFeatureClassifier", "multiclass", _SMALL_GRFL, Y_MULTI, {}),
    ("InfiniteFeatureClassifier", "tasks", _SMALL_GRFL, Y_BINARY, {"task_index": TASKS}),
    ("InfiniteFeatureRegressor", "regression", _SMALL_GRFL, Y_REG, {}),
    ("InfiniteFeatureRegressor", "2-D y", _SMALL_GRFL, np.c_[Y_REG, -Y_REG], {}),
    ("InfiniteFeatureRegressor", "tasks", _SMALL_GRFL, Y_REG, {"task_index": TASKS}),
    ("LowRankKernelRegressor", "regression", {}, Y_REG, {}),
    ("LowRankKernelRegressor", "2-D y", {}, np.c_[Y_REG, -Y_REG], {}),
    ("LowRankKernelClassifier", "binary", {}, Y_BINARY, {}),
    ("LowRankKernelClassifier", "multiclass", {}, Y_MULTI, {}),
    ("LowRankKernelClassifier", "ovr", {"multiclass": "ovr", "probability": True}, Y_MULTI, {}),
    ("MultitaskMKLRegressor", "tasks", {}, Y_REG, {"task_index": TASKS}),
    ("MultitaskMKLRegressor", "shared, mtsfl", {"shared": True, "formulation": "mtsfl"},
     Y_REG, {"task_index": TASKS}),
    ("MultitaskMKLRegressor", "C auto", {"C": "auto"}, Y_REG, {"task_index": TASKS}),
    ("MultitaskMKLClassifier", "tasks", {"max_iter": 10}, Y_BINARY, {"task_index": TASKS}),
    ("MultitaskMKLRegressorCV", "tasks", {}, Y_REG, {"task_index": TASKS}),
    ("MultitaskMKLClassifierCV", "tasks", {"cv": 2, "Cs": (1.0,), "max_iter": 10},
     Y_BINARY, {"task_index": TASKS}),
]


def _doc(name):
    return numpydoc_docscrape.ClassDoc(getattr(kernlearn, name))


def _entries(doc, section):
    """``{name: type text}`` of a section, ``a, b : type`` split into names."""
    return {n.strip(): p.type for p in doc[section] for n in p.name.split(",") if n.strip()}


def _fit(name, kwargs, y, fit_kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (tiny data: convergence warnings are expected)
        return getattr(kernlearn, name)(**kwargs).fit(X, y, **fit_kwargs)


def _allowed_ndims(type_text):
    """Dimensions an "ndarray of shape (a, b) or (c,)" entry allows (None: not said)."""
    if "shape" not in type_text:
        return None
    shapes = re.findall(r"\(([^()]*)\)", type_text[type_text.index("shape"):])
    return {len([d for d in s.split(",") if d.strip()]) for s in shapes} or None


def test_every_estimator_has_cases():
    assert {c[0] for c in CASES} == set(kernlearn._ESTIMATORS)


@pytest.mark.parametrize("name", sorted(kernlearn._ESTIMATORS))
def test_documented_defaults_are_the_signature_defaults(name):
    sig = inspect.signature(getattr(kernlearn, name))
    params = _entries(_doc(name), "Parameters")
    wrong = []
    for param, type_text in params.items():
        assert param in sig.parameters, f"{name}: documented parameter {param!r} does not exist"
        m = re.search(r"default=(.+)$", type_text)
        if m is None:
            continue
        stated, actual = m.group(1).strip(), sig.parameters[param].default
        try:
            value = eval(stated, {})  # the docs' literals: numbers, strings, None, tuples
        except Exception:
            value = stated
        if not (value == actual or stated == repr(actual)):
            wrong.append(f"{param}: documented default={stated}, signature {actual!r}")
    assert not wrong, f"{name}: {wrong}"
    undocumented = [p for p in sig.parameters if p not in params]
    assert not undocumented, f"{name}: parameters missing from the docstring: {undocumented}"


@pytest.mark.parametrize("name, case, kwargs, y, fit_kwargs", CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_documented_attributes_after_fit(name, case, kwargs, y, fit_kwargs):
    est = _fit(name, kwargs, y, fit_kwargs)
    documented = _entries(_doc(name), "Attributes")
    missing = [a for a in documented if not hasattr(est, a) and (name, a) not in CONDITIONAL]
    assert not missing, f"{name} ({case}): documented but absent after fit: {missing}"
    fitted = {a for a in vars(est) if a.endswith("_") and not a.startswith("_")}
    undocumented = sorted(fitted - set(documented))
    assert not undocumented, f"{name} ({case}): fitted but not documented: {undocumented}"
    bad_shapes = []
    for attr, type_text in documented.items():
        value = getattr(est, attr, None)
        ndims = _allowed_ndims(type_text)
        if isinstance(value, np.ndarray) and ndims is not None and value.ndim not in ndims:
            bad_shapes.append(f"{attr}: documented {type_text!r}, got shape {value.shape}")
    assert not bad_shapes, f"{name} ({case}): {bad_shapes}"
    undocumented_keys = sorted(_history_keys(est) - set(_named_keys(name, "history_")))
    assert not undocumented_keys, f"{name} ({case}): history_ keys not in its entry: " \
        f"{undocumented_keys}"


def _history_keys(est):
    history = est.history_ if isinstance(est.history_, list) else [est.history_]
    return set().union(*history)


def _named_keys(name, attr):
    """The ````key```` names of an attribute's entry, and of the entries of the
    classes it refers to (":class:`FGMClassifier`'s")."""
    text = _attribute_text(name, attr)
    names = set(re.findall(r"``(\w+)``", text))
    for other in set(re.findall(r":class:`(\w+)`", text)) - {name}:
        names |= _named_keys(other, attr)
    return names


@pytest.mark.parametrize("name, y", [("FGMClassifier", Y_MULTI), ("FGMRegressor", Y_REG)])
def test_conditional_attributes(name, y):
    """The ``family=`` attributes exist with a family, ``coef_`` does not."""
    est = _fit(name, {"family": PolynomialPool(), "C": 1.0}, y, {})
    conditional = [a for (n, a), why in CONDITIONAL.items() if n == name and why == "family="]
    assert conditional and all(hasattr(est, a) for a in conditional)
    assert not hasattr(est, "coef_")
    assert est.feature_importances_.shape == (X.shape[1],)
    assert est.column_coef_.shape[0] == (3 if name == "FGMClassifier" else 1)



@pytest.mark.parametrize("name, case, kwargs, y, fit_kwargs",
                         [c for i, c in enumerate(CASES) if c[0] not in {d[0] for d in CASES[:i]}],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_feature_names_in_with_a_dataframe(name, case, kwargs, y, fit_kwargs):
    pd = pytest.importorskip("pandas")
    est = getattr(kernlearn, name)(**kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(pd.DataFrame(X, columns=["a", "b", "c"]), y, **fit_kwargs)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    assert "feature_names_in_" in _entries(_doc(name), "Attributes")


def test_history_keys_the_docstrings_name_for_the_auto_settings():
    """``history_`` of MTMKL's ``C="auto"`` holds ``loo_sse``, not the mirror
    descent's keys; GrFL's averaged paths have no ``validation_loss``: both said."""
    mt = _fit("MultitaskMKLRegressor", {"C": "auto"}, Y_REG, {"task_index": TASKS})
    assert set(mt.history_) == {"loo_sse", "loo_task_sse", "fit_time"} and mt.gap_ == 0.0
    assert "``loo_sse``" in _attribute_text("MultitaskMKLRegressor", "history_")
    X60 = np.random.RandomState(1).randn(60, 3)  # (from 48 rows: folds choose the level)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grfl = kernlearn.InfiniteFeatureRegressor(n_candidates=5).fit(X60, X60[:, 0])
    assert grfl.n_paths_ > 1 and "validation_loss" not in grfl.history_
    assert "absent when folds chose" in _attribute_text("InfiniteFeatureRegressor", "history_")


def _attribute_text(name, attr):
    return " ".join(next(a.desc for a in _doc(name)["Attributes"]
                         if attr in [n.strip() for n in a.name.split(",")]))


def test_demo_quick_help_states_the_sizes_it_runs():
    """``kernlearn demo --help`` said "a tenth of the data" for 200 x 512 against
    1000 x 2000 (a twentieth of the values); it now states the sizes."""
    import argparse

    from kernlearn.cli import build_parser
    from kernlearn.demo import DEMO_SIZES

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    text = " ".join(sub.choices["demo"].format_help().split())
    (n, d, *_), (nq, dq, *_) = DEMO_SIZES[False], DEMO_SIZES[True]
    assert f"{nq} x {dq} instead of {n} x {d}" in text


# The feature families' fitted attributes (they are public too: ``family_`` of
# a fitted estimator); kernel-dependent ones are documented as conditional.
FAMILY_CASES = [
    ("RandomFourierFeatures", {}),
    ("PolynomialPool", {}),
    ("AdditiveKernelExpansion", {}),
    ("AdditiveKernelExpansion", {"kernel": "additive_chi2"}),
    ("AdditiveKernelExpansion", {"kernel": "additive_gaussian"}),
    ("IntersectionKernelFeatures", {}),
    ("FeaturePool", {}),
    ("GaborFeatures", {"image_shape": (1, 3), "filter_size": 1}),
    ("NystromColumns", {"n_columns": 5}),
]
FAMILY_CONDITIONAL = {"n_pair_evals_": "after price() on sparse X", "levels_": 'kernel="hik"',
                      "n_column_evals_": "after price()",
                      "steps_": "Fourier-map kernels", "interval_": "Fourier-map kernels",
                      "gamma_": 'kernel="additive_gaussian"'}


@pytest.mark.parametrize("name, kwargs", FAMILY_CASES,
                         ids=[f"{n}-{k.get('kernel', '')}" for n, k in FAMILY_CASES])
def test_family_attributes_after_fit(name, kwargs):
    from kernlearn import families

    cls = getattr(families, name)
    fam = cls(**kwargs).fit(np.abs(X))
    documented = _entries(numpydoc_docscrape.ClassDoc(cls), "Attributes")
    fitted = {a for a in vars(fam) if a.endswith("_") and not a.startswith("_")}
    assert not sorted(fitted - set(documented)), f"{name}: fitted but not documented"
    missing = [a for a in documented if not hasattr(fam, a) and a not in FAMILY_CONDITIONAL]
    assert not missing, f"{name}: documented but absent after fit: {missing}"


def _doc_section(path, heading):
    """The text of ``## heading`` in a doc file, up to the next ``##`` heading."""
    import pathlib

    text = (pathlib.Path(__file__).resolve().parents[1] / path).read_text()
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_every_stop_reason_is_explained_and_named_in_the_cli_guide():
    """Each ``stop_reason_`` a fit reports is a key of ``STOP_REASONS`` (the
    progress line explains it in words; OBSCURE's ``"online_only"`` was not
    and its line read "stop: online_only ...: online_only"), and doc/cli.md,
    which says ``STOP_REASONS`` lists them, names every key."""
    from kernlearn.progress import STOP_REASONS

    reasons = {_fit("PNormMKLClassifier", {"random_state": 0, **kw}, Y_BINARY, {}).stop_reason_
               for kw in ({}, {"online_only": True}, {"max_iter": 1, "tol": 1e-12},
                          {"max_steps": 30})}
    reasons |= {_fit(name, {"random_state": 0, **kw}, y, {}).stop_reason_
                for name, kw, y in [("InfiniteFeatureClassifier",
                                     {**_SMALL_GRFL, "lambda_p": 0.01}, Y_BINARY),
                                    ("InfiniteFeatureRegressor", {"n_candidates": 5}, Y_REG)]}
    assert {"online_only", "duality gap", "max_features"} <= reasons, reasons
    assert reasons <= set(STOP_REASONS), reasons - set(STOP_REASONS)
    text = _doc_section("doc/cli.md", "Progress")
    assert [k for k in STOP_REASONS if f"`{k}`" not in text] == []


GUIDE_FITS = {  # guide -> the fits whose history_ keys its reading section names
    "doc/fgm.md": [("FGMClassifier", {}, Y_BINARY, {}), ("FGMRegressor", {}, Y_REG, {})],
    "doc/grfl.md": [("InfiniteFeatureClassifier", _SMALL_GRFL, Y_BINARY, {}),
                    ("InfiniteFeatureRegressor", {"n_candidates": 10}, Y_REG, {})],
    "doc/obscure.md": [("PNormMKLClassifier", {}, Y_BINARY, {})],
    "doc/slkl.md": [("LowRankKernelRegressor", {}, Y_REG, {}),
                    ("LowRankKernelClassifier", {}, Y_BINARY, {})],
    "doc/mtmkl.md": [("MultitaskMKLRegressor", {}, Y_REG, {"task_index": TASKS}),
                     ("MultitaskMKLRegressor", {"C": "auto"}, Y_REG, {"task_index": TASKS})],
}


@pytest.mark.parametrize("guide", sorted(GUIDE_FITS))
def test_each_guide_names_the_history_columns(guide):
    """The README says each guide's "What the fitted model tells you" lists
    the ``history_`` columns: doc/mtmkl.md had no such section, and the others
    named some columns in words only (``iter``, FGM's master choice, OBSCURE's
    ``stage``, ``R``, ``steps``, ... were missing)."""
    text = _doc_section(guide, "What the fitted model tells you")
    keys = set().union(*(_history_keys(_fit(*fit)) for fit in GUIDE_FITS[guide]))
    assert sorted(k for k in keys if f"`{k}`" not in text) == []


@pytest.mark.parametrize("name", ["LowRankKernelRegressor", "LowRankKernelClassifier"])
def test_slkl_prediction_formula_of_the_docs(name):
    """``dual_coef_``'s entry and doc/slkl.md gave the model as
    ``k(T(X), T(centers_)) @ dual_coef_ + intercept_``: with the default
    ``gamma_factors="auto"`` each centre has its own width (``center_factors_``),
    and that single-kernel formula was off by 3.5 on such a fit."""
    from sklearn.metrics.pairwise import rbf_kernel

    rng = np.random.RandomState(0)
    Xs = rng.randn(300, 3) * [1, 10, 0.1] + [3, 0, -1]
    y = np.sin(Xs[:, 0]) + Xs[:, 1] / 10 + 0.1 * rng.randn(300)
    est = getattr(kernlearn, name)(random_state=0).fit(
        Xs, y if name.endswith("Regressor") else (y > np.median(y)).astype(int))
    assert len(set(est.center_factors_)) > 1  # (several widths: what the docs must cover)
    T = (Xs - est.x_mean_) / est.x_scale_
    Tc = (est.centers_ - est.x_mean_) / est.x_scale_
    K = np.column_stack([rbf_kernel(T, Tc[[m]], gamma=est.kernel_params_["gamma"] * f)
                         for m, f in enumerate(est.center_factors_)])
    model = (K @ est.dual_coef_ + est.intercept_).ravel()
    out = est.predict(Xs) if name.endswith("Regressor") else est.decision_function(Xs)
    np.testing.assert_allclose(model, out, atol=1e-10)
    assert "center_factors_" in _attribute_text(name, "dual_coef_")
    assert "center_factors_[m]" in _doc_section("doc/slkl.md", "The parameters that matter")


def test_nystrom_columns_take_gamma_scale():
    """README: "every RBF-type kernel takes ``gamma`` (a number or "scale")";
    ``NystromColumns(kernel_params={"gamma": "scale"})`` passed the string to
    the kernel ("rbf gamma must be positive, got 'scale'")."""
    from kernlearn.families import NystromColumns
    from kernlearn.widths import scale_gamma

    fams = [NystromColumns(kernel_params={"gamma": g}, n_columns=5, random_state=0).fit(X)
            for g in ("scale", scale_gamma(X))]
    assert fams[0].kernel_params_ == {"gamma": scale_gamma(X)}
    np.testing.assert_array_equal(fams[0].columns_, fams[1].columns_)


def test_grfl_auto_pricing_subsample_threshold(monkeypatch):
    """The classifier's docstring said ``pricing_subsample="auto"`` samples
    2000 rows "when ``n >= 4000``"; the code samples only above 4000 rows."""
    from kernlearn.methods import grfl

    seen = []
    init = grfl.GrFL.__init__

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("pricing_subsample"))
        init(self, *args, **kwargs)

    monkeypatch.setattr(grfl.GrFL, "__init__", spy)
    rng = np.random.RandomState(0)
    for n in (4000, 4001):
        Xn = rng.randn(n, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kernlearn.InfiniteFeatureClassifier(max_features=1, n_candidates=2).fit(
                Xn, (Xn[:, 0] > 0).astype(int))
    assert seen == [None, 2000]
    assert "``n > 4000``" in kernlearn.InfiniteFeatureClassifier.__doc__


def test_plot_convergence_names_a_one_vs_rest_history(tmp_path):
    """README: ``plot_convergence(clf.history_, "fit.png")`` draws the fit; a
    one-vs-rest ``history_`` is a list of dicts, and the error said the
    history had "no 'objective' column"."""
    pytest.importorskip("matplotlib")
    from kernlearn.plotting import plot_convergence

    est = _fit("FGMClassifier", {"multiclass": "ovr"}, Y_MULTI, {})
    with pytest.raises(ValueError, match=r"list of 3 histories.*history_\[0\]"):
        plot_convergence(est.history_, tmp_path / "c.png")
    assert plot_convergence(est.history_[0], tmp_path / "c.png").endswith("c.png")


def test_a_split_hiding_a_task_among_good_splits_is_nan_with_the_reason():
    """doc/mtmkl.md said a split hiding a task from its training rows "is
    refused with an error rather than scored NaN"; the fit refuses it, but
    scikit-learn stops only when every split fails: ``KFold(3)`` on four
    sorted tasks scores the middle fold and the other two NaN, with a
    ``FitFailedWarning`` quoting the refusal.  The guide now says so."""
    import sklearn
    from sklearn.exceptions import FitFailedWarning
    from sklearn.model_selection import KFold, cross_val_score

    t4 = np.repeat(np.arange(4), 10)
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.warns(FitFailedWarning, match="validation rows only"):
            scores = cross_val_score(kernlearn.MultitaskMKLRegressor(["linear"]), X, Y_REG,
                                     cv=KFold(3), params={"task_index": t4})
    assert np.isnan(scores).sum() == 2 and np.isfinite(scores[1])
    text = _doc_section("doc/mtmkl.md", "Model selection with task ids")
    assert "FitFailedWarning" in " ".join(text.split())


def test_every_multitask_estimator_requests_task_index_by_default():
    """doc/mtmkl.md's last model-selection bullet said the GrFL estimators,
    "unlike these estimators, must be asked for" ``task_index``; they request
    it by default, as its first paragraph (and doc/grfl.md) says."""
    import sklearn

    takes = [n for n in kernlearn._ESTIMATORS
             if "task_index" in inspect.signature(getattr(kernlearn, n).fit).parameters]
    assert {"InfiniteFeatureClassifier", "MultitaskMKLRegressor"} <= set(takes)
    with sklearn.config_context(enable_metadata_routing=True):
        for name in takes:
            routing = getattr(kernlearn, name)().get_metadata_routing()
            for method in ("fit", "predict", "score"):
                assert getattr(routing, method).requests.get("task_index") is True, \
                    (name, method)
    text = " ".join(_doc_section("doc/mtmkl.md", "Model selection with task ids").split())
    assert "must be asked for it" not in text


def test_gamma_mean_uses_the_rows_of_positive_weight_unweighted():
    """doc/weights-and-probabilities.md said ``gamma="mean"`` uses "every row
    unweighted": the rows of zero weight are left out (as the same paragraph
    says zero weights remove rows exactly); the others count once each."""
    Xw = np.r_[X[:10] * 5, X[10:]]
    zero, triple = np.ones(40), np.ones(40)
    zero[:10], triple[10:20] = 0, 3

    def gamma(Xf, yf, sw=None):
        est = kernlearn.PNormMKLClassifier(kernels=[("rbf", {"gamma": "mean"})],
                                           standardize=False, max_iter=2, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return est.fit(Xf, yf, sample_weight=sw).kernel_params_[0]["gamma"]

    assert gamma(Xw, Y_BINARY, zero) == gamma(Xw[10:], Y_BINARY[10:])
    assert gamma(Xw, Y_BINARY, triple) == gamma(Xw, Y_BINARY)
    text = " ".join(_doc_section("doc/weights-and-probabilities.md", "Sample weights").split())
    assert 'use every row of positive weight, unweighted' in text


def test_mtmkl_auto_C_with_shared_components():
    """``C="auto"``'s entry listed ``shared=False`` among its requirements; it
    learns the shared components' weights too (``shared=True``, as the
    ``shared`` entry, doc/mtmkl.md and ``MultitaskMKLRegressorCV``'s default
    say)."""
    rng = np.random.RandomState(3)
    t = np.repeat(np.arange(8), 10)
    Xs = rng.randn(80, 2)
    y = Xs @ [1.0, -2.0] + 0.3 * rng.randn(8)[t] + 0.1 * rng.randn(80)
    est = kernlearn.MultitaskMKLRegressor(["linear", ("rbf", {"gamma": 1.0})], C="auto",
                                          shared=True).fit(Xs, y, task_index=t)
    assert est.shared_ and est.shared_kernel_weights_[0] > 0.1
    C_doc = " ".join(next(p.desc for p in _doc("MultitaskMKLRegressor")["Parameters"]
                          if p.name == "C"))
    assert "``shared=False``)" not in C_doc and "``shared=True``" in C_doc


@pytest.mark.parametrize("module", ["fgm", "infinite", "lowrank", "mtmkl", "mtmkl_cv",
                                    "pnorm_mkl"])
def test_estimator_docstring_examples_print_what_they_show(module):
    """The estimators' "Examples" sections run as shown, and without a
    ``ConvergenceWarning`` (no test ran them; ``FGMClassifier``'s example, a
    fit of 15 outer iterations at ``B=5``, warned that ``max_iter`` stopped
    it)."""
    import doctest
    import importlib

    from sklearn.exceptions import ConvergenceWarning

    mod = importlib.import_module(f"kernlearn.estimators.{module}")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for test in doctest.DocTestFinder().find(mod):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("guide, marker", [
    ("doc/mtmkl.md", "clf = MultitaskMKLClassifierCV("),
    ("doc/weights-and-probabilities.md", "boost = AdaBoostClassifier("),
])
def test_guide_examples_do_not_warn(guide, marker, tmp_path, monkeypatch):
    """These guide examples drew a ``ConvergenceWarning`` a reader would see
    (test_docs.py ignores them): the multitask classifier's refit at the
    chosen C ran out of the default 100 iterations, and the AdaBoost weak
    learners (``max_iter=1``) warned five times; ``tol=None`` says a capped
    run is intended."""
    import pathlib

    from sklearn.exceptions import ConvergenceWarning

    text = (pathlib.Path(__file__).resolve().parents[1] / guide).read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    target = next(i for i, b in enumerate(blocks) if marker in b)
    imports = "\n".join(line for b in blocks[:target] for line in b.splitlines()
                        if line.startswith(("import ", "from ")))
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__doc__"}
    exec(imports, namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        exec(blocks[target].replace("print(", "(lambda *a, **k: None)("), namespace)


@pytest.mark.parametrize("name", ["InfiniteFeatureRegressor", "InfiniteFeatureClassifier"])
def test_grfl_converged_matches_its_stop_reason_where_held_out_rows_choose(name):
    """``converged_`` is "whether the path stopped on the violation test (or
    the held-out loss)"; where one held-out part chose the features
    (``max_features="auto"`` from 300 rows) the model's master is refitted
    outside the path, and ``converged_`` was ``False`` beside
    ``stop_reason_ == "no_violation"`` (the classifier here)."""
    rng = np.random.RandomState(0)
    Xs = rng.randn(400, 3)
    y = Xs[:, 0] + np.sin(3 * Xs[:, 1]) + 0.1 * rng.randn(400)
    est = getattr(kernlearn, name)(max_features="auto", n_candidates=30, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xs, y if name.endswith("Regressor") else (y > 0).astype(int))
    assert est.n_paths_ == 1 and est.stop_reason_ in ("no_violation", "validation")
    assert est.converged_, est.stop_reason_
