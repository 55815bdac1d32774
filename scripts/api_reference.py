"""Write doc/api.md, the API reference, from the numpydoc docstrings.

Usage: ``.venv/bin/python scripts/api_reference.py [OUTPUT]`` (default
``doc/api.md``).  Estimators come from ``kernlearn._ESTIMATORS`` (a method
that is not importable yet is listed as such), then the public helpers.
"""

import importlib
import inspect
import sys
from pathlib import Path

import kernlearn

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = {
    "Feature families": (
        "kernlearn.families",
        [
            "RandomFourierFeatures",
            "GaborFeatures",
            "PolynomialPool",
            "AdditiveKernelExpansion",
            "IntersectionKernelFeatures",
            "FeaturePool",
            "NystromColumns",
        ],
    ),
    # The parts the GrFL estimators take as objects (``loss=``, ``penalty=``,
    # ``solver=``) and the extension guide builds on; FGM takes solver names.
    "Losses": (
        "kernlearn.losses",
        ["SquaredHinge", "Logistic", "Hinge", "Square", "MulticlassHinge", "get_loss"],
    ),
    "Penalties": (
        "kernlearn.penalties",
        ["L1", "GroupL1L2", "L1Linf", "L1Lq", "PerTaskL1Lq", "SquaredGroupL1",
         "SquaredGroupNorm2p", "get_penalty"],
    ),
    "Solvers": (
        "kernlearn.solvers",
        ["ADMM", "GrFLFISTA", "APG", "ProxNewton", "SimpleMKL", "check_compatible"],
    ),
    "GrFL's Newton master": ("kernlearn.solvers.grfl_newton", ["GrFLNewton"]),
    "Kernels": (
        "kernlearn.kernels",
        ["PrecomputedKernels", "convert_width", "scale_gamma"],
    ),
    "Model files": (
        "kernlearn.io",
        ["save_model", "load_model", "read_metadata", "register_safe_class", "trusted_types"],
    ),
    "Data": (
        "kernlearn.datasets",
        [
            "load_data_file",
            "load_dataset",
            "load_svmlight",
            "available_datasets",
            "data_home",
            "make_fgm_synthetic",
            "make_fgm_group_synthetic",
            "make_sinc",
            "make_obscure_synthetic",
            "make_brodatz_patches",
            "SvmlightChunks",
            "write_fgm_synthetic_svmlight",
        ],
    ),
    "Multitask scoring": ("kernlearn.estimators.mtmkl", ["MultitaskScorer"]),
    "Reports": ("kernlearn.report", ["build_report", "write_report"]),
    "Plots": (
        "kernlearn.plotting",
        ["plot_convergence", "plot_accuracy_vs_features", "plot_kernel_weights"],
    ),
    "Model summaries": (
        "kernlearn.summary",
        ["selection_table", "evaluate_metrics", "feature_profile", "outside_fraction",
         "far_outside_rows"],
    ),
    "Progress": ("kernlearn.progress", ["Progress"]),
    # (public since audit 97, named in the README, listed nowhere here)
    "Warnings": ("kernlearn", ["UnusedParameterWarning"]),
}


def _entry(qualname, obj):
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = "(...)"
    doc = inspect.getdoc(obj) or "(no docstring)"
    body = "\n".join("    " + line if line else "" for line in doc.splitlines())
    return f"### `{qualname}{sig}`\n\n{body}\n"


def build():
    out = [
        "# API reference",
        "",
        "Generated from the docstrings by `scripts/api_reference.py`; the docstrings are",
        "the source (a test enforces the numpydoc format).",
        "",
        "## Estimators",
        "",
    ]
    for name, module in kernlearn._ESTIMATORS.items():
        try:
            obj = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            out.append(f"### `kernlearn.{name}`\n\n    (not available in this build)\n")
            continue
        out.append(_entry(f"kernlearn.{name}", obj))
    for title, (module, names) in SECTIONS.items():
        out += [f"## {title}", ""]
        mod = importlib.import_module(module)
        out += [_entry(f"{module}.{n}", getattr(mod, n)) for n in names]
    return "\n".join(out)


def main(argv):
    target = Path(argv[1]) if len(argv) > 1 else ROOT / "doc" / "api.md"
    target.write_text(build())
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
