"""Class labels as the classifiers give them back, against scikit-learn's ``SVC``.

Labels were compared in every form a user passes them (lists, object and
``<U`` arrays, integers, booleans, floats, pandas Series of text, categories,
nullable integers and booleans), for every classifier, binary and
multiclass, with and without probabilities, through ``save_model`` /
``load_model`` and through the command line.  Each test here failed before
its fix.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.svm import SVC

from kernlearn import LowRankKernelClassifier


def _data(n=40, k=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    s = X[:, 0] + 0.5 * X[:, 1]
    codes = np.digitize(s, np.quantile(s, np.linspace(0, 1, k + 1)[1:-1]))
    return X, codes


# -------------------------------------------- text labels of dtype object
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("form", ["object array", "pandas Series", "categorical"])
def test_low_rank_text_labels_of_dtype_object_stay_object_as_in_svc(form, k):
    # LabelBinarizer sorted the labels into a "<U" array: the low-rank
    # classifier alone answered labels of dtype object with fixed-width
    # strings, so a prediction assigned a longer label was cut
    # (pred[0] = "a longer name" stored "a lo"), while SVC and the other
    # kernlearn classifiers keep the caller's dtype
    X, codes = _data(k=k)
    text = np.array(["bee", "ant", "cat"], dtype=object)[codes]
    y = {"object array": text, "pandas Series": pd.Series(text),
         "categorical": pd.Series(pd.Categorical(text))}[form]
    ref = SVC().fit(X, y)
    for probability in (False, True):
        est = LowRankKernelClassifier(probability=probability).fit(X, y)
        assert est.classes_.dtype == ref.classes_.dtype == object
        assert est.classes_.tolist() == ref.classes_.tolist()
        pred = est.predict(X)
        assert pred.dtype == object
        pred[0] = "a longer name"
        assert pred[0] == "a longer name"


def test_low_rank_fixed_width_labels_keep_their_width_and_model():
    # (the encoding change keeps "<U" labels "<U" and the fitted model: the
    # same decision values whichever form of the labels)
    X, codes = _data(k=3)
    text = np.array(["bee", "ant", "cat"])[codes]
    a = LowRankKernelClassifier(random_state=0).fit(X, text)
    b = LowRankKernelClassifier(random_state=0).fit(X, text.astype(object))
    assert a.classes_.dtype == text.dtype and a.predict(X).dtype == text.dtype
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


# ------------------------------------------------------------ command line
def _ok(capsys, *argv):
    """``kernlearn *argv``'s standard output; the command must succeed (exit 0)."""
    from conftest import run_cli

    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    return out


def _label_csv(path, labels, n=40, seed=0):
    """A CSV file of three features and a ``target`` column written as ``labels``."""
    X, codes = _data(n=n, k=len(labels), seed=seed)
    frame = pd.DataFrame(X.round(4), columns=["a", "b", "c"])
    frame["target"] = np.asarray(labels, dtype=object)[codes]
    frame.to_csv(path, index=False)
    return codes


def test_predicted_labels_holding_a_comma_are_quoted_as_in_the_proba_header(tmp_path, capsys):
    # a label "Smith, J." was written bare, one per line, while --proba's
    # header quoted it: pandas.read_csv of the predictions saw two fields on
    # its lines and one on the others
    import io

    codes = _label_csv(tmp_path / "t.csv", ['Smith, J.', 'say "hi"'])
    _ok(capsys, "fit", tmp_path / "t.csv", "-e", "fgm", "-q", "-m", tmp_path / "m.npz")
    out = _ok(capsys, "predict", tmp_path / "t.csv", "-m", tmp_path / "m.npz")
    pred = pd.read_csv(io.StringIO(out), header=None).iloc[:, 0]
    assert set(pred) == {'Smith, J.', 'say "hi"'} and len(pred) == len(codes)


@pytest.mark.parametrize("labels", [["1.0", "2.0"], ["TRUE", "FALSE"], ["-1", "+1"],
                                    ["0.0", "1e3", "2.0"]])
def test_predicted_classes_are_spelled_as_in_the_training_file(labels, tmp_path, capsys):
    # numbers and booleans of a CSV label column were written back as Python
    # spells them: "1.0"/"2.0" came out "1"/"2", R's "TRUE"/"FALSE" (write.csv)
    # "True"/"False", "+1" "1", so predictions no longer matched the file's
    # labels as text (a join, a grep, a diff with the label column)
    codes = _label_csv(tmp_path / "t.csv", labels)
    _ok(capsys, "fit", tmp_path / "t.csv", "-e", "fgm", "-p", "loss=logistic", "-q", "-m",
        tmp_path / "m.npz")
    pred = _ok(capsys, "predict", tmp_path / "t.csv", "-m", tmp_path / "m.npz").split()
    assert set(pred) <= set(labels) and len(pred) == len(codes)
    assert np.mean(np.asarray(pred) == np.asarray(labels)[codes]) > 0.7
    header = _ok(capsys, "predict", tmp_path / "t.csv", "-m", tmp_path / "m.npz",
                 "--proba").splitlines()[0]
    from kernlearn.io import load_model

    spelled = dict(zip(pd.read_csv(tmp_path / "t.csv")["target"],
                       pd.read_csv(tmp_path / "t.csv", dtype=str)["target"]))
    classes = load_model(tmp_path / "m.npz").classes_
    assert header.split(",") == [spelled[c] for c in classes]
