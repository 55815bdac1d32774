"""A fortieth user's audit: labels and output shapes.

A data scientist handed every public estimator the targets real projects
have and compared each output with what scikit-learn's ``LogisticRegression``
/ ``SVC`` / ``Ridge`` / ``KernelRidge`` return for the same ``y``.

What held (checked on small synthetic sets, not all pinned here):

- Classifiers (FGM, p-norm MKL, GrFL, low-rank, multitask MKL and its
  ``*CV``): labels ``{-1, 1}``, ``{3, 7, 11}``, floats ``1.0, 2.0, 3.0``,
  bools, strings of mixed case, an ordered pandas ``Categorical`` with unused
  categories, a ``(n, 1)`` column and a one-column DataFrame give the
  ``classes_`` (values, order and dtype) and ``predict`` dtype of
  ``LogisticRegression``; ``decision_function`` is ``(n,)`` for two classes
  (positive = ``classes_[1]``, agreeing with ``predict`` on every row) and
  ``(n, n_classes)`` for more; ``predict_proba`` (``probability=True``) has
  its columns in ``classes_`` order and rows summing to one, also for the
  Categorical; ``score`` with ``sample_weight`` is the weighted accuracy; a
  label seen only at ``score`` counts as an error; two classes of which one
  has a single row fit and predict the majority class; a class of zero
  weight stays in ``classes_`` and is never predicted (as scikit-learn's);
  an object array mixing ints and strings is refused naming the types
  (but by the multitask ``*CV``, below). The multitask classifiers refuse
  more than two classes, and a task of one class, in words.
- Task ids of ints, floats and strings of mixed case give ``tasks_`` sorted
  as NumPy sorts them; ints mixed with strings are refused naming the types.
- Regressors: ``y`` as ``(n,)``, a Series, integers: ``(n,)`` predictions
  and ``score`` equal to ``r2_score``; ``(n, 1)`` and a one-column
  DataFrame: ``(n, 1)`` from GrFL and the low-rank regressor (as
  ``KernelRidge``), ``(n,)`` with scikit-learn's column-vector warning from
  FGM and the multitask MKL regressors (as ``SVR``); ``(n, k)`` (also with
  a constant output, also a DataFrame) fitted by GrFL and the low-rank
  regressor as documented, ``score`` the uniform average of R^2; FGM and
  multitask MKL refuse it naming the ones that take it.  ``coef_`` and
  ``intercept_`` shapes are the documented ones.
- The command line writes the training file's labels: ``-1``/``1``, ``3``,
  ``7``, ``11`` (no ``.0``), ``True``/``False``, strings holding a comma
  or a quote quoted as CSV fields, also in the ``--proba`` header, and a
  multitask model's predictions per string task id.

- Labels of 2**60 and beyond (int64, uint64) keep their values and dtype;
  pandas ``string``, ``Int8`` and categorical bools keep their type (as
  audits 4 and 12 made them: scikit-learn gives floats there); bytes are
  refused with scikit-learn's words.

What did not; each test below failed before its fix:

- ``probability=True`` with a class whose rows all weigh zero stopped on "a
  cross-validation fold lost a class"; it now names the class (and a class
  of one row is named too).
- ``MultitaskMKLClassifierCV`` on ints mixed with strings stopped on NumPy's
  "'<' not supported"; the multitask classifiers said "y contains a single
  class" of a ``y`` of two classes, one of zero weight, and "task 1 has
  samples of one class only" of a task holding both, one weighed out.
- ``InfiniteFeatureRegressor`` with ``task_index`` refused a one-column
  target (a DataFrame's) that the multitask MKL regressor takes.
- ``kernlearn evaluate`` listed unseen labels and the model's classes joined
  bare by ", ": labels holding commas could not be told apart.
"""

import numpy as np
import pytest

import kernlearn as kl

_rng = np.random.default_rng(0)
X = _rng.standard_normal((60, 4))
TWO = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
THREE = (X[:, 0] > 0.4).astype(int) + (X[:, 1] > 0).astype(int)
TASKS = np.repeat([0, 1], 30)

_CLASSIFIERS = {
    "FGMClassifier": lambda **kw: kl.FGMClassifier(B=2, max_iter=3, **kw),
    "PNormMKLClassifier": lambda **kw: kl.PNormMKLClassifier(max_iter=50, **kw),
    "InfiniteFeatureClassifier": lambda **kw: kl.InfiniteFeatureClassifier(
        n_candidates=10, random_state=0, **kw),
    "LowRankKernelClassifier": lambda **kw: kl.LowRankKernelClassifier(**kw),
}


def test_multitask_cv_classifier_names_labels_of_mixed_types():
    # the plain classifier (and scikit-learn) refuse them naming the types; the
    # *CV variant sorted them first and stopped on NumPy's "'<' not supported
    # between instances of 'int' and 'str'"
    y = np.array([1, "a"], dtype=object)[TWO]
    for est in (kl.MultitaskMKLClassifier(), kl.MultitaskMKLClassifierCV()):
        with pytest.raises(TypeError, match="y mixes labels of types int, str"):
            est.fit(X, y, task_index=TASKS)


@pytest.mark.parametrize("name", sorted(_CLASSIFIERS))
def test_probabilities_name_a_class_of_zero_weight(name):
    # every row of class 11 weighs zero: no Platt fold held it, and the fit
    # stopped on "a cross-validation fold lost a class", naming neither the
    # class nor the weights (the fold had lost nothing).  Audit 56: such a
    # class is fitted as the model without probabilities fits it, never
    # predicted and of probability 0 (as LogisticRegression gives it); a class
    # of one row of positive weight is still refused by name
    y = np.array([3, 7, 11])[THREE]
    sw = np.where(y == 11, 0.0, 1.0)
    est = _CLASSIFIERS[name](probability=True).fit(X, y, sample_weight=sw)
    P = est.predict_proba(X)
    assert P.shape == (60, 3) and np.allclose(P.sum(axis=1), 1.0)
    assert np.all(P[:, 2] == 0.0) and 11 not in est.predict(X)
    sw[np.flatnonzero(y == 11)[0]] = 1.0
    with pytest.raises(ValueError, match=r"at least 2 samples of every class of positive "
                                         r"weight \(class 11 has one\)"):
        _CLASSIFIERS[name](probability=True).fit(X, y, sample_weight=sw)
    # without the weights the same labels give probabilities (nothing else moved)
    P = _CLASSIFIERS[name](probability=True).fit(X, y).predict_proba(X)
    assert P.shape == (60, 3) and np.allclose(P.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", sorted(_CLASSIFIERS))
def test_probabilities_name_a_class_weighed_out_by_class_weight(name):
    # class_weight={11: 0}: the model is fitted without class 11's rows, but
    # the Platt sigmoids were fitted on them, and class 11 got probabilities
    # near a third (LogisticRegression gives such a class 0).  Refused until
    # audit 56, which gives it probability 0 (the folds know the class as the
    # model does)
    y = np.array([3, 7, 11])[THREE]
    est = _CLASSIFIERS[name](probability=True, class_weight={11: 0.0}).fit(X, y)
    assert np.all(est.predict_proba(X)[:, 2] == 0.0)


def test_multitask_classifier_with_a_class_of_zero_weight_says_so():
    # y holds two classes, the rows of "b" all of weight zero: the refusal said
    # "y contains a single class ('a')", which the user's y did not
    y = np.array(["a", "b"])[TWO]
    sw = np.where(y == "b", 0.0, 1.0)
    for est in (kl.MultitaskMKLClassifier(), kl.MultitaskMKLClassifierCV()):
        with pytest.raises(ValueError, match=r"single class of positive weight \('a'\).*"
                                             r"rows all weigh zero"):
            est.fit(X, y, task_index=TASKS, sample_weight=sw)
    # unweighted, a single class keeps its words
    with pytest.raises(ValueError, match=r"y contains a single class \('a'\); a classifier "
                                         r"needs more than one class\.$"):
        kl.MultitaskMKLClassifier().fit(X, np.full(60, "a"), task_index=TASKS)


def test_grfl_regressor_with_tasks_takes_a_one_column_target():
    # a one-column DataFrame target with task ids was refused ("task_index needs
    # a 1-D y"); the multitask MKL regressor and GrFL's classifier take it, with
    # scikit-learn's column-vector warning, as the 1-D target
    import pandas as pd
    from sklearn.exceptions import DataConversionWarning

    y = X[:, 0] + X[:, 1]
    make = lambda: kl.InfiniteFeatureRegressor(n_candidates=10, random_state=0)  # noqa: E731
    flat = make().fit(X, y, task_index=TASKS)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        est = make().fit(X, pd.DataFrame({"t": y}), task_index=TASKS)
    p = est.predict(X, task_index=TASKS)
    assert p.shape == (60,)
    np.testing.assert_array_equal(p, flat.predict(X, task_index=TASKS))
    assert est.score(X, y[:, None], task_index=TASKS) == pytest.approx(
        flat.score(X, y, task_index=TASKS))
    with pytest.raises(ValueError, match="y has 2 columns: fit one model per output"):
        make().fit(X, np.column_stack([y, y]), task_index=TASKS)


def test_command_line_names_unseen_labels_holding_commas_as_csv_fields(tmp_path, capsys):
    # the labels were joined by ", " bare: "the model knows Maybe, say "no", yes,
    # sir" and "never seen in training: unseen, new" could not be told apart
    import csv
    import io

    from conftest import one_error, run_cli

    labels = np.array(["yes, sir", 'say "no"', "Maybe"])[THREE]

    def write(path, y):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["a", "b", "c", "d", "y"])
        w.writerows([*(repr(float(v)) for v in row), t] for row, t in zip(X, y))
        path.write_text(buf.getvalue())

    write(tmp_path / "train.csv", labels)
    held_out = labels.astype(object)
    held_out[:3] = "unseen, new"
    write(tmp_path / "test.csv", held_out)
    code, _, err = run_cli(["fit", tmp_path / "train.csv", "-e", "lowrank-classifier", "-q",
                            "-m", tmp_path / "m.npz"], capsys)
    assert code == 0, err
    code, _, err = run_cli(["evaluate", tmp_path / "test.csv", "-m", tmp_path / "m.npz"],
                           capsys)
    assert code == 5 and one_error(err), err
    assert ('never seen in training: "unseen, new"; the model knows Maybe, '
            '"say ""no""", "yes, sir"') in err


def test_probabilities_of_a_task_weighed_out_leave_it_out():
    # (a guard of the zero-weight class refusal above: a task whose every row
    # weighs zero leaves the fit, as without probabilities, not refused as a
    # task holding "none of class 0")
    X3 = np.vstack([X, X[:30] + 0.1])
    y = (X3[:, 0] > 0).astype(int)
    tasks = np.repeat([0, 1, 2], 30)
    sw = np.where(tasks == 2, 0.0, 1.0)
    est = kl.MultitaskMKLClassifier(probability=True).fit(X3, y, task_index=tasks,
                                                           sample_weight=sw)
    P = est.predict_proba(X3[:60], task_index=tasks[:60])
    assert P.shape == (60, 2) and np.allclose(P.sum(axis=1), 1.0)


def test_multitask_classifier_names_a_task_of_one_class_of_positive_weight():
    # task 1 holds both classes, its rows of class 1 all of weight zero: the
    # refusal said "task 1 has samples of one class only", which its rows did not
    y = (X[:, 0] > 0).astype(int)
    sw = np.where((TASKS == 1) & (y == 1), 0.0, 1.0)
    for est in (kl.MultitaskMKLClassifier(), kl.MultitaskMKLClassifierCV()):
        with pytest.raises(ValueError, match="task 1 has samples of one class only among "
                                             "its rows of positive weight; every task"):
            est.fit(X, y, task_index=TASKS, sample_weight=sw)
    y[30:] = 0  # (unweighted: the words as they were)
    with pytest.raises(ValueError, match="task 1 has samples of one class only; every task"):
        kl.MultitaskMKLClassifier().fit(X, y, task_index=TASKS)
