"""Cases added by the final probe of issue 23 (tests/reliability_cases.py runs them).

Bad separators and formats, labels mixing numbers and text, negative kernel
columns and class weights, multitask data on scales that overflow float64,
and one same-answer case: a table on a scale near 1e-300, whose columns every
estimator used to take for constant.
"""

import numpy as np


def write_probe_files(w, X, y, names):
    """Write the files of the probe cases into ``w`` (X: 60 x 8, y: +-1)."""
    from kernlearn.cli import main

    header = ",".join(names + ["target"])

    def table(Xv, yv):
        return header + "\n" + "\n".join(
            ",".join(repr(float(v)) for v in r) + f",{t}" for r, t in zip(Xv, yv)) + "\n"

    (w / "tiny.csv").write_text(table(X * 1e-300, y))
    labels = [str(t) for t in y]
    labels[7] = "a"  # a typo among numbers
    (w / "mixedlabels.csv").write_text(table(X, labels))
    tasks = np.arange(len(y)) % 3
    yr = X[:, 1] - 2 * X[:, 3]
    head = header.replace(",target", ",task,target")
    for name, Xv, yv in (("hugex_tasks.csv", X * 1e300, yr),
                         ("hugey_tasks.csv", X, yr * 1e300)):
        (w / name).write_text(head + "\n" + "\n".join(
            ",".join(repr(float(v)) for v in r) + f",t{k},{float(t)!r}"
            for r, k, t in zip(Xv, tasks, yv)) + "\n")
    np.savez(w / "wide.npz", X=np.hstack([X, X[:, :4]]), y=y)
    argv = ["fit", str(w / "tiny.csv"), "-e", "fgm", "-p", "B=2", "-m",
            str(w / "tinycsv.npz"), "-q"]
    if main(argv) != 0:
        raise RuntimeError(f"workspace model failed: {argv}")


def probe_cases(add, W):
    """Add the probe's cases through ``add(group, what, argv, code, message[, ref])``."""
    fit = ["fit", f"{W}/train.csv", "-e", "fgm", "-q", "-m", f"{W}/o.npz"]
    add("usage", "--sep of two characters", fit + ["--sep", ",,"], 2,
        "--sep must be one character")
    add("usage", "negative kernel column, before the data is read",
        ["fit", f"{W}/nope.svm", "-e", "pnorm-mkl", "-q", "-m", f"{W}/o.npz",
         "-p", 'kernels=[["rbf", {}, [0, -1]]]'], 2, "column index -1 is negative")
    add("usage", "negative class weight",
        ["fit", f"{W}/train.svm", "-e", "fgm", "-q", "-m", f"{W}/o.npz",
         "-p", 'class_weight={"1": -1}'], 2, "must be a non-negative number")
    add("data", "wrong --sep", fit + ["--sep", ";"], 3, "every line is one field")
    add("data", "CSV read as .npy", fit + ["--format", "npy"], 3,
        "is not a NumPy .npy file")
    add("data", "label column mixing numbers and text",
        ["fit", f"{W}/mixedlabels.csv", "-e", "fgm", "-q", "-m", f"{W}/o.npz"], 3,
        "row 9, column target: label 'a' is text")
    for name, msg in (("hugex_tasks.csv", "feature(s) 1, 2, 3, 4, 5 have values "
                       "too large"), ("hugey_tasks.csv", "y is too large")):
        add("fit", f"multitask regressor on {name}",
            ["fit", f"{W}/{name}", "--task-column", "task", "-e", "mtmkl-regressor",
             "-q", "-m", f"{W}/o.npz"], 6, msg)
    add("mismatch", ".npz (X and y) of another width",
        ["predict", f"{W}/wide.npz", "-m", f"{W}/csv.npz"], 5,
        "X has 12 columns; the model expects 8 features")
    add("same", "a table on a scale near 1e-300 (fit and predict)",
        ["predict", f"{W}/tiny.csv", "-m", f"{W}/tinycsv.npz"], 0, "",
        ["predict", f"{W}/train.csv", "-m", f"{W}/csv.npz"])
