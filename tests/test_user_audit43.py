"""A forty-third user's audit: does the documentation tell the truth?

A user read README.md, the guides in doc/, the API reference and the
numpydoc docstrings of the estimators, families, losses, penalties, solvers,
helpers and commands, and held the library to them.

What held (checked; pinned where a test here or elsewhere says so):

- Every code block of README.md and doc/*.md runs and prints what the text
  under it shows (tests/test_docs.py runs them all, none skipped here: the
  data sets were present); the estimators' docstring examples
  (tests/test_doc_claims.py) and, here, the helpers' (generators,
  ``SvmlightChunks``, ``PrecomputedKernels``, ``trusted_types``), which no
  test ran.
- Every ``default=`` of the estimators' "Parameters" equals the signature's
  (test_doc_claims.py); here extended to every other public class and
  function (families, losses, penalties, solvers, data and model-file
  helpers), symbolic defaults (``DEFAULT_COLUMNS``, ``(0, pi)``,
  ``256 MiB``, ``float64``) resolved: all equal.
- Every documented fitted attribute exists after fit with the documented
  type (ndarray / int / float / bool / dict / list: checked on the 24 fits of
  test_doc_claims.py's cases) and every public fitted attribute is
  documented.
- Defaults that resolve at fit time, against their entries:
  ``FGMClassifier(multiclass="auto")`` is shared on columns and one-vs-rest
  with a family; ``tol=None`` runs out without a ``ConvergenceWarning``, a
  small ``tol`` warns; ``class_weight="balanced"`` is the weights
  ``n / (n_classes * n_c)``; GrFL's classifier ``n_paths="auto"`` is 3 below
  300 rows, else 1, and 1 with a numeric ``max_features``; its
  ``max_features=None`` budget ``clip(max(d, n / 10), 100, 200)``; the
  regressor's count below 48 rows at most ``n // 6``; kernel callables are
  checked on 500 rows, refused when not PSD with their place in the list, a
  sparse ``X`` warns that they see it uncentred, ``{"gamma": "scale"}`` is
  resolved for them; ``save_model`` refuses callables and unregistered
  families with ``TypeError``, unfitted estimators with ``NotFittedError``
  (no file written), NaN with ``ValueError``; every "Raises" section of the
  public helpers (``load_model``, ``load_svmlight``, ``load_dataset``,
  ``load_data_file``, ``build_report``, ``selection_table``,
  ``fit_target_standardization``, ``check_formulation``) raises what it says.
- The command line: ``kernlearn --help`` lists the exit statuses of
  ``EXIT_CODES`` (doc/cli.md's table, test_docs.py), every option of every
  command is named in doc/cli.md and every option doc/cli.md names exists;
  the ``--out-of-core`` refusals (CSV, ``--label``, ``--sep``, ``--header``:
  exit 2; a data set name: exit 3), ``-p C=.5``, a parameter under both its
  names (exit 2), ``--chunk-memory``'s 256MB default.
- README's 133 bad inputs are RELIABILITY.md's 108 command lines and 25
  tampered files; the numbers the guides quote in prose, outside any code
  block: the out-of-range predictions of README, doc/grfl.md and
  doc/slkl.md, SLKL's two-width centre counts and R^2, multitask MKL's
  ``C="auto"`` at 38.5 (pinned below).

What was wrong (each test below failed before its fix):

- ``kernlearn evaluate --help`` said ``--out-of-core`` reads the file
  "writing as blocks arrive", the predict command's words: evaluate writes
  nothing per block, it keeps the predictions for its metrics.
- ``kernlearn select --help`` gave ``--format {csv,json}`` without its
  default.
- ``FGMRegressor``'s ``C="auto"`` entry said three folds "below 2,000 rows;
  above, one third": the single held-out third starts at 2,000 rows of
  positive weight (doc/fgm.md said so).
- doc/api.md, "the API reference" of the README, left out the parts the
  GrFL estimators take as objects (losses, penalties, solvers, GrFL's Newton
  master), the registered family ``NystromColumns`` and README's
  ``kernlearn.summary.far_outside_rows``; nothing checked that it was
  regenerated after a docstring changed.
- doc/reproducibility.md: GrFL's pricing subsample "from 4,000 rows"; the
  classifier's starts above 4,000 rows, the regressor's above 40,000.
- doc/grfl.md: weights "rescaled to mean one ..., weights ``c * w`` give the
  model of ``w``": they multiply the loss as given, and ``c * w`` is the
  model of ``w`` at ``lambda_p / sqrt(c)`` (0.8 away from it on the decision
  values of a 300-row fit; the docstrings had it right).
- ``PNormMKLClassifier.fit``: ``gamma="mean"`` "uses every row unweighted";
  rows of zero weight are left out.
- README: ``n_iter_`` counts the ``history_`` entries "except SLKL's
  ``nu="auto"``": multitask MKL's leave-one-out weights keep one entry too.
- FGM's budget ``max_features=k`` was said to be chosen over "at least ten
  rounds" (docstring, doc/fgm.md, README, BENCHMARKS.md): with
  ``min(B, ceil(k / 10))`` per round it is ``ceil(k / ceil(k / 10))``, 6 to
  10 from ``k = 10`` (8 for 23); the docs now count them, the models stay.
- doc/grfl.md: GrFL's predictions "do not depend on the units of ``X`` or
  ``y``": they do up to rounding only, and the default regressor's paths
  carry a last-bit difference to several % of the predictions' spread (a
  chaotic path, not a wrong one; documented with measurements, not changed).

Also checked and true: the guides' bracketed defaults (pinned below), the
FGM selector (``get_support`` / ``inverse_transform`` raise with a family,
``feature_importances_`` sum to one and do not move when columns are
rescaled by 1000), the sparse scaling rule (max-abs, standard deviation from
90 % stored), ``d_`` in (0, 1], SLKL's one-vs-rest output ``t`` equal to the
regressor on its codes (5e-12), ``nu_`` as ``nu`` times the codes' mean
square, the weight-scale invariance of SLKL's ``nu`` path, ``random_state``
(a ``Generator`` refused, a ``RandomState`` advanced, ``None`` following
``np.random.seed``), the command line's ``random_state=0`` models equal to
the Python ones, ``estimators --params`` without the renamed names, the
additive family's widths, steps and periods, ADMM's default penalties.
"""

import argparse
import importlib
import inspect
import math
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from package_modules import kernlearn_modules

numpydoc_docscrape = pytest.importorskip("numpydoc.docscrape")

import kernlearn  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _public_objects():
    """Public classes and functions of the public modules, estimators aside
    (test_doc_claims.py checks theirs)."""
    found = {}
    for mod in kernlearn_modules():
        for name, obj in vars(mod).items():
            if (name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__
                    or name in kernlearn._ESTIMATORS
                    or not (inspect.isclass(obj) or inspect.isfunction(obj))):
                continue
            found.setdefault(f"{mod.__name__}.{name}", obj)
    return found


PUBLIC = _public_objects()


def _stated_value(stated, namespace):
    """The value a docstring's ``default=...`` text names: a literal, a name of
    the object's module (``DEFAULT_COLUMNS``), ``pi`` or a size in MiB."""
    m = re.fullmatch(r"(\d+) MiB", stated)
    if m:
        return int(m.group(1)) * 2**20
    return eval(stated, {"pi": math.pi, "np": np, **namespace})


def _same(value, actual):
    try:
        if np.dtype(value) == np.dtype(actual):  # "float64" for np.float64
            return True
    except TypeError:
        pass
    try:
        return bool(value == actual)
    except ValueError:  # (arrays)
        return False


@pytest.mark.parametrize("qualname", sorted(PUBLIC))
def test_every_public_default_matches_its_signature(qualname):
    obj = PUBLIC[qualname]
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):  # (exception classes of builtin signature)
        pytest.skip("no signature")
    doc_cls = numpydoc_docscrape.ClassDoc if inspect.isclass(obj) else \
        numpydoc_docscrape.FunctionDoc
    namespace = vars(importlib.import_module(obj.__module__))
    wrong = []
    for entry in doc_cls(obj)["Parameters"]:
        m = re.search(r"default=(.+)$", entry.type)
        if m is None:
            continue
        for name in (n.strip().lstrip("*") for n in entry.name.split(",")):
            assert name in sig.parameters, f"{qualname}: documents {name!r}, not a parameter"
            stated, actual = m.group(1).strip(), sig.parameters[name].default
            try:
                value = _stated_value(stated, namespace)
            except Exception:
                value = stated
            if not (_same(value, actual) or stated == repr(actual)):
                wrong.append(f"{name}: documented default={stated}, signature {actual!r}")
    assert not wrong, f"{qualname}: {wrong}"


def test_the_default_check_reads_symbolic_defaults():
    """The resolution above is not vacuous: the symbolic defaults it meets."""
    from kernlearn.families import GaborFeatures
    from kernlearn.methods import slkl

    assert _stated_value("DEFAULT_COLUMNS", vars(slkl)) == 128
    assert _stated_value("(0, pi)", {}) == GaborFeatures().theta_range
    assert _stated_value("256 MiB", {}) == 268435456
    assert _same("float64", np.float64) and not _same("float32", np.float64)
    assert len(PUBLIC) > 150


def _subcommands():
    from kernlearn.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return parser, sub.choices


def _option_help(command, option):
    _, commands = _subcommands()
    action = next(a for a in commands[command]._actions if option in a.option_strings)
    return action.help or ""


def test_evaluate_out_of_core_help_says_what_it_does(tmp_path, capsys):
    """``evaluate --out-of-core`` was "writing as blocks arrive" (predict's
    words): it writes the metrics once, from the predictions it kept."""
    from kernlearn.datasets import write_fgm_synthetic_svmlight

    assert "writing as blocks arrive" in _option_help("predict", "--out-of-core")
    assert "writing as blocks arrive" not in _option_help("evaluate", "--out-of-core")
    assert "keeping only the predictions" in _option_help("evaluate", "--out-of-core")
    data = tmp_path / "d.svm"
    write_fgm_synthetic_svmlight(data, 300, 50, 5, density=0.1, random_state=0)
    model = tmp_path / "m.npz"
    assert run_cli(["fit", data, "-e", "fgm", "-p", "B=3", "-m", model, "-q"], capsys)[0] == 0
    code, out, _ = run_cli(["evaluate", data, "-m", model, "--out-of-core",
                            "--chunk-memory", "8KiB"], capsys)
    assert code == 0 and out.splitlines()[0] == "n_samples 300"
    assert len(out.splitlines()) == 4  # the metrics, no per-block output


def test_select_format_help_states_its_default(tmp_path, capsys):
    """``select --help`` listed ``--format {csv,json}`` with no default."""
    assert "default: csv" in _option_help("select", "--format")
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    model = tmp_path / "m.npz"
    np.savez(tmp_path / "d.npz", X=X, y=(X[:, 0] > 0).astype(int))
    assert run_cli(["fit", tmp_path / "d.npz", "-e", "fgm", "-m", model, "-q"], capsys)[0] == 0
    code, out, _ = run_cli(["select", model], capsys)
    assert code == 0 and out.startswith("rank,feature,")


def test_every_command_option_is_in_the_cli_guide_and_back():
    """Each option of each command is named in doc/cli.md (long or short
    form) and each ``--option`` doc/cli.md names exists."""
    parser, commands = _subcommands()
    text = (ROOT / "doc" / "cli.md").read_text()
    options = {o for p in (parser, *commands.values()) for a in p._actions
               for o in a.option_strings}
    missing = []
    for name, sub in commands.items():
        for action in sub._actions:
            names = [o for o in action.option_strings if o not in ("-h", "--help")]
            if names and not any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)
                                 for o in names):
                missing.append(f"{name} {names}")
    assert not missing
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text))
    assert named - options == set()


def test_fgm_auto_C_folds_start_their_held_out_third_at_2000_rows(monkeypatch):
    """The entry said three folds "below 2,000 rows; above, ..." (2,000
    itself unsaid): one held-out third is used from 2,000 rows of positive
    weight, as doc/fgm.md says."""
    from kernlearn.methods import _fgm_select

    seen = []
    folds = _fgm_select._weighted_folds

    def spy(n, sample_weight):
        seen.append(len(folds(n, sample_weight)))
        return folds(n, sample_weight)

    monkeypatch.setattr(_fgm_select, "_weighted_folds", spy)
    rng = np.random.RandomState(0)
    X = rng.randn(2100, 2)
    y = X[:, 0] + 0.1 * rng.randn(2100)
    zero_101 = np.r_[np.ones(1999), np.zeros(101)]  # 1,999 rows of positive weight
    for n, w in ((1999, None), (2000, None), (2100, zero_101)):
        kernlearn.FGMRegressor(max_iter=2).fit(X[:n], y[:n], sample_weight=w)
    assert seen == [3, 1, 3]
    C_doc = " ".join(next(" ".join(p.desc) for p in numpydoc_docscrape.ClassDoc(
        kernlearn.FGMRegressor)["Parameters"] if p.name == "C").split())
    assert "below 2,000 rows of positive weight; from 2,000, one third held out once" in C_doc
    assert "one held-out third from 2,000 rows" in " ".join(
        (ROOT / "doc" / "fgm.md").read_text().split())


def _api_reference():
    spec = importlib.util.spec_from_file_location("api_reference",
                                                  ROOT / "scripts" / "api_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build()


def test_api_reference_is_current_and_holds_the_parts_users_pass():
    """doc/api.md lacked the losses, penalties and solvers the GrFL estimators
    take as objects, ``NystromColumns`` and README's ``far_outside_rows``; and
    nothing checked that the file was regenerated."""
    from kernlearn.families import FAMILIES
    from kernlearn.losses import LOSSES
    from kernlearn.penalties import PENALTIES
    from kernlearn.solvers import SOLVERS

    text = (ROOT / "doc" / "api.md").read_text()
    assert text == _api_reference(), "doc/api.md is stale: run scripts/api_reference.py"
    listed = set(re.findall(r"^### `[\w.]*?\.(\w+)\(", text, re.M))
    parts = {cls.__name__ for reg in (FAMILIES, LOSSES, PENALTIES, SOLVERS)
             for cls in reg._classes.values()}
    assert sorted(parts - listed) == []
    assert {"GrFLNewton", "far_outside_rows"} <= listed
    assert "kernlearn.summary.far_outside_rows(" in (ROOT / "README.md").read_text()


def _quoted(path, pattern):
    text = " ".join((ROOT / path).read_text().split())
    m = re.search(pattern, text)
    assert m, f"{path} no longer says {pattern!r}"
    return [float(g) for g in m.groups()]


def test_out_of_bounds_numbers_quoted_by_the_docs():
    """README, doc/grfl.md and doc/slkl.md quote the predictions of 200 rows
    of ``y = 2x + noise`` on [0, 3] with ``random_state=0`` past the data:
    they hold (pinned, as no code block computes them)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 3, (200, 1))
    y = 2 * X[:, 0] + 0.1 * rng.standard_normal(200)
    got = {}
    for name in ("InfiniteFeatureRegressor", "LowRankKernelRegressor"):
        est = getattr(kernlearn, name)(out_of_bounds="extend", random_state=0).fit(X, y)
        at4, at63 = est.predict([[4.0], [6.3]])
        got[name] = (at4, at63, est.set_params(out_of_bounds="clip").predict([[6.3]])[0])
    grfl = _quoted("doc/grfl.md", r"([\d.]+) at x = 4 and ([\d.]+) at x = 6\.3 extended, "
                   r"([\d.]+) clipped")
    slkl = _quoted("doc/slkl.md", r"([\d.]+) at x = 4 and ([\d.]+) at x = 6\.3, back "
                   r"toward the mean; ([\d.]+) clipped")
    readme = _quoted("README.md", r"predicts ([\d.]+) at x = 6\.3 extended, ([\d.]+) clipped; "
                     r"SLKL's RBF columns fall back toward the mean, ([\d.]+)\)")
    for quoted, actual in ((grfl, got["InfiniteFeatureRegressor"]),
                           (slkl, got["LowRankKernelRegressor"]),
                           (readme, (got["InfiniteFeatureRegressor"][1:]
                                     + (got["LowRankKernelRegressor"][1],)))):
        np.testing.assert_allclose(actual, quoted, atol=0.051)


def test_pricing_subsample_thresholds_of_the_reproducibility_guide(monkeypatch):
    """doc/reproducibility.md said GrFL subsamples its pricing rows "from 4,000
    rows": the classifier does above 4,000 rows, the regressor above 40,000."""
    from kernlearn.methods import grfl
    from kernlearn.methods._grfl_select import regressor_pricing_subsample

    seen = []
    init = grfl.GrFL.__init__

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("pricing_subsample"))
        init(self, *args, **kwargs)

    monkeypatch.setattr(grfl.GrFL, "__init__", spy)
    rng = np.random.RandomState(0)
    X = rng.randn(4001, 2)
    for n in (4000, 4001):
        kernlearn.InfiniteFeatureClassifier(max_features=1, n_candidates=2, n_paths=1).fit(
            X[:n], (X[:n, 0] > 0).astype(int))
    assert seen == [None, grfl.AUTO_PRICING_ROWS] and 2 * grfl.AUTO_PRICING_ROWS == 4000
    assert [regressor_pricing_subsample(n) for n in (40000, 40001)] == [None, 20000]
    text = " ".join((ROOT / "doc" / "reproducibility.md").read_text().split())
    assert ('(`pricing_subsample="auto"`: the classifier\'s above 4,000 rows, the '
            "regressor's above 40,000)") in text


@pytest.mark.parametrize("name", ["InfiniteFeatureClassifier", "InfiniteFeatureRegressor"])
def test_grfl_weight_scale_acts_as_the_guide_says(name):
    """doc/grfl.md said weights are "rescaled to mean one ..., so only the
    ratios of the weights matter (weights ``c * w`` give the model of ``w``)":
    a weight multiplies its row's loss as given, so ``c * w`` gives the model
    of ``w`` at ``lambda_p / sqrt(c)`` (the docstring's rule), 0.2-0.8 away
    from the model of ``w`` here."""
    rng = np.random.RandomState(0)
    X = rng.randn(150, 3)
    y = X[:, 0] + np.sin(2 * X[:, 1])
    y = (y > 0).astype(int) if name.endswith("Classifier") else y
    kw = dict(n_candidates=10, max_features=6, random_state=0, n_paths=1, inner_tol=1e-9)
    cls = getattr(kernlearn, name)

    def out(level, w=None):
        est = cls(lambda_p=level, **kw).fit(X, y, sample_weight=w)
        return est.decision_function(X) if hasattr(est, "decision_function") else \
            est.predict(X)

    tripled = out(0.5, np.full(150, 3.0))
    np.testing.assert_allclose(tripled, out(0.5 / np.sqrt(3)), atol=1e-8)
    assert np.abs(tripled - out(0.5)).max() > 0.05
    text = " ".join(_doc_section_text("doc/grfl.md", "The parameters that matter").split())
    assert "weights `c * w` give the model of `w` at `lambda_p / sqrt(c)`" in text
    assert "only the ratios of the weights matter" not in text


def _doc_section_text(path, heading):
    text = (ROOT / path).read_text()
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_pnorm_mkl_fit_docstring_on_gamma_mean_and_weights():
    """``PNormMKLClassifier.fit`` said ``gamma="mean"`` "uses every row
    unweighted": rows of zero weight are left out (the guide was corrected in
    an earlier pass, the docstring was not); the others count once each."""
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    X[:10] *= 5
    y = (X[:, 0] > 0).astype(int)
    w = np.r_[np.zeros(10), np.ones(10), np.full(20, 3.0)]

    def gamma(Xf, yf, sw=None):
        est = kernlearn.PNormMKLClassifier(kernels=[("rbf", {"gamma": "mean"})],
                                           standardize=False, max_iter=2, tol=None,
                                           random_state=0)
        return est.fit(Xf, yf, sample_weight=sw).kernel_params_[0]["gamma"]

    assert gamma(X, y, w) == gamma(X[10:], y[10:]) != gamma(X, y)
    doc = numpydoc_docscrape.FunctionDoc(kernlearn.PNormMKLClassifier.fit)
    text = " ".join(" ".join(p.desc) for p in doc["Parameters"] if p.name == "sample_weight")
    assert '``gamma="mean"`` uses every row of positive weight, unweighted' in text


GUIDE_ESTIMATORS = {
    "fgm": ["FGMClassifier", "FGMRegressor"],
    "grfl": ["InfiniteFeatureClassifier", "InfiniteFeatureRegressor"],
    "obscure": ["PNormMKLClassifier"],
    "slkl": ["LowRankKernelRegressor", "LowRankKernelClassifier"],
    "mtmkl": ["MultitaskMKLRegressor", "MultitaskMKLClassifier"],
}


@pytest.mark.parametrize("guide", sorted(GUIDE_ESTIMATORS))
def test_guide_parameter_defaults_are_the_signatures(guide):
    """Each guide's "The parameters that matter" gives defaults in brackets,
    ``* `tol` (1e-3)``, ``(default `True`)``, ``(`"auto"`)``: every plain
    value there is the default of each of the guide's estimators taking it
    (qualified ones, "classifier default 10", are read by eye)."""
    text = _doc_section_text(f"doc/{guide}.md", "The parameters that matter")
    literal = re.compile(r'(?:default )?`?("?[\w.+-]+"?)`?')
    checked, wrong = 0, []
    for m in re.finditer(r"`(\w+)` \(([^()]*?)[,;:)]", text):
        name, stated = m.group(1), " ".join(m.group(2).split())
        lit = literal.fullmatch(stated)
        defaults = {e: inspect.signature(getattr(kernlearn, e)).parameters[name].default
                    for e in GUIDE_ESTIMATORS[guide]
                    if name in inspect.signature(getattr(kernlearn, e)).parameters}
        if lit is None or not defaults:
            continue
        word = lit.group(1)
        try:
            value = None if word.lower() == "none" else eval(word, {})
        except Exception:
            continue  # (a word, e.g. "relative")
        checked += 1
        wrong += [f"{name}: ({stated}) but {e} has {d!r}" for e, d in defaults.items()
                  if not _same(value, d)]
    assert checked >= 4 and not wrong, wrong


def test_history_length_is_n_iter_but_where_the_readme_says():
    """README: ``history_`` has one entry per outer iteration and ``n_iter_``
    counts them, "except SLKL's default ``nu="auto"``"; multitask MKL's
    leave-one-out weights (``C="auto"``, the ``*CV`` regressor's default)
    keep one entry (the final leave-one-out error) beside ``n_iter_`` L-BFGS-B
    iterations, and the README did not say so."""
    import test_doc_claims as claims

    exceptions = set()
    for name, case, kw, y, fit_kw in claims.CASES:
        est = claims._fit(name, kw, y, fit_kw)
        for h, n in zip(*(([est.history_], [est.n_iter_]) if isinstance(est.history_, dict)
                          else (est.history_, est.n_iter_))):
            per_entry = {len(v) for k, v in h.items() if k not in ("fit_time", "loo_task_sse")}
            if per_entry != {int(n)}:
                exceptions.add("slkl nu" if "nu" in h else
                               "loo" if "loo_sse" in h else f"{name} {case}")
    assert exceptions == {"slkl nu", "loo"}
    text = " ".join((ROOT / "README.md").read_text().split())
    assert "SLKL's default `nu=\"auto\"`" in text
    assert ("multitask MKL's leave-one-out weights, `C=\"auto\"` and the `*CV` default, whose "
            "history holds the final leave-one-out error") in text


def test_fgm_budget_rounds_as_the_docs_count_them():
    """The docs said a budget ``max_features=k`` is chosen over "at least ten
    rounds" with ``min(B, ceil(k / 10))`` features per round: that is
    ``ceil(k / ceil(k / 10))`` rounds, 6 to 10 from ``k = 10`` (8 for 23),
    ``k`` below 10 (the models stay; the docs now count the rounds)."""
    from kernlearn.datasets import make_fgm_synthetic

    X, y, *_ = make_fgm_synthetic(300, 200, 40, n_test=1, random_state=1)
    for k in (7, 11, 23, 40):
        est = kernlearn.FGMClassifier(max_features=k).fit(X, y)
        rounds = int((np.diff(np.r_[0, est.history_["n_active"]]) > 0).sum())
        assert len(est.selected_features_) == k
        assert rounds == math.ceil(k / math.ceil(k / 10)) == {7: 7, 11: 6, 23: 8, 40: 10}[k]
    doc = " ".join(kernlearn.FGMClassifier.__doc__.split())
    assert "about ten rounds of worst-case analysis choose them (``k`` below 10, 6 to 10 " \
        "from there: 8 for 23)" in doc
    for path in ("README.md", "doc/fgm.md", "BENCHMARKS.md"):
        assert "at least ten" not in (ROOT / path).read_text(), path


def test_every_dotted_name_the_docs_give_exists():
    """Each ``kernlearn.module.name`` of README.md and the guides imports (20
    names held; a Dask setting, ``kernlearn.tune-worker-malloc``, is not one)."""
    docs = [ROOT / "README.md", *sorted((ROOT / "doc").glob("*.md"))]
    names = {n for p in docs if p.name != "api.md"
             for n in re.findall(r"\bkernlearn(?:\.[A-Za-z_]\w*)+(?![\w-])", p.read_text())}
    missing = []
    for name in sorted(names):
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
                break
            except ImportError:
                continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            missing.append(name)
    assert len(names) >= 20 and missing == []


def test_grfl_units_invariance_holds_up_to_rounding_that_paths_amplify():
    """doc/grfl.md said GrFL's predictions "do not depend on the units of
    ``X`` or ``y``": exactly so for a factor of 2 (exact in floating point)
    and to rounding with a fixed level and budget, but the last bits that
    other units change are carried much further where the folds choose the
    level (0.13 of the predictions' spread here); the guides now say so."""
    rng = np.random.RandomState(0)
    X = rng.randn(150, 3)
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.1 * rng.randn(150)
    units = np.array([1000.0, 0.001, 7.0])

    def moved(Xb, yb, back=1.0, **kw):
        est = kernlearn.InfiniteFeatureRegressor(random_state=0, n_candidates=10, **kw)
        a = est.fit(X, y).predict(X)
        return np.abs(est.fit(Xb, yb).predict(Xb) / back - a).max() / np.std(a)

    assert moved(X * 2, y * 2, back=2) == 0.0
    assert moved(X * units, y, lambda_p=0.3, max_features=10) < 1e-9
    # (0.13 here until audit 47 found what carried the last bits that far:
    # the master's Anderson steps; now also to rounding where the folds choose)
    assert moved(X * units, y) < 1e-9
    grfl = " ".join((ROOT / "doc" / "grfl.md").read_text().split())
    assert "nor on each task's own, up to rounding" in grfl
    repro = " ".join((ROOT / "doc" / "reproducibility.md").read_text().split())
    assert "GrFL's paths could carry a last-bit difference much further" in repro


def test_slkl_two_width_counts_quoted_in_the_guide():
    """doc/slkl.md quotes, in prose under its one-width block, the centres
    and test R^2 of the default two widths on the same ``nu`` values: they
    hold (pinned, as no code block prints them)."""
    from kernlearn.datasets import make_sinc

    text = " ".join(_doc_section_text("doc/slkl.md", "nu sets the number of centres").split())
    m = re.search(r"\((\d+), (\d+), (\d+) and (\d+) centres for the same `nu` values; "
                  r"test R\^2 ([\d.]+), ([\d.]+), ([\d.]+), ([\d.]+)\)", text)
    assert m, "doc/slkl.md no longer quotes the two-width counts"
    X, y, X_test, y_test = make_sinc(500, 500, random_state=0)
    got = []
    for nu in (0.001, 0.1, 10.0, "auto"):
        reg = kernlearn.LowRankKernelRegressor(n_columns=80, nu=nu, random_state=0).fit(X, y)
        got.append((reg.m0_, round(reg.score(X_test, y_test), 2)))
    assert [g[0] for g in got] == [int(v) for v in m.groups()[:4]]
    assert [g[1] for g in got] == [float(v) for v in m.groups()[4:]]


def test_mtmkl_auto_C_numbers_quoted_in_the_guide(tmp_path, monkeypatch):
    """doc/mtmkl.md: ``MultitaskMKLRegressor(kernels, C="auto", shared=True)``
    on the first example ends "at ``C`` = 2.7 with 0.00 of the weight on the
    interpolating kernel" (38.5 and 0.14 before its search's restarts after a
    fall), with the ``*CV`` estimator's test R^2: it holds (pinned: the
    guide's code does not run it)."""
    text = (ROOT / "doc" / "mtmkl.md").read_text()
    block = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)[0]
    monkeypatch.chdir(tmp_path)
    ns = {}
    exec(block.split("reg = MultitaskMKLRegressorCV")[0], ns)
    X, y, task, train = ns["X"], ns["y"], ns["task"], ns["train"]
    est = kernlearn.MultitaskMKLRegressor(ns["kernels"], C="auto", shared=True)
    est.fit(X[train], y[train], task_index=task[train])
    quoted = " ".join(text.split())
    m = re.search(r"at `C` = ([\d.]+) with ([\d.]+) of the weight on the interpolating kernel",
                  quoted)
    assert m and round(est.C_, 1) == float(m.group(1))
    assert round(est.kernel_weights_[-1], 2) == float(m.group(2))
    cv_r2 = re.search(r"test R\^2 ([\d.]+)\n", text).group(1)
    assert "%.2f" % est.score(X[~train], y[~train], task_index=task[~train]) == cv_r2


@pytest.mark.parametrize("module", ["kernlearn._generators_obscure", "kernlearn.datasets",
                                    "kernlearn.gram", "kernlearn.io"])
def test_helper_docstring_examples_print_what_they_show(module):
    """The "Examples" of the helpers (the data generators, ``SvmlightChunks``,
    ``PrecomputedKernels``, ``trusted_types``) ran in no test; test_doc_claims
    runs the estimators' only.  They print what they show."""
    import doctest

    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(importlib.import_module(module)):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0
