"""GrFL with tasks (issue 21): weighted task losses and one-vs-rest within tasks.

``sample_weight`` / ``class_weight`` with ``task_index`` weigh each task's loss as the
single-task route weighs its one loss: integer weights are repeated rows, zero weights
removed rows (a task of zero weight only leaves ``tasks_``), and ``"balanced"`` is
scikit-learn's ``compute_sample_weight`` on each task's rows.
"""

import numpy as np
import pytest
from sklearn.utils.class_weight import compute_sample_weight
from threadpoolctl import threadpool_limits

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor

# masters solved far below the default tolerance: weights and repeated rows agree to it
KW = dict(max_features=6, n_candidates=15, lambda_p=0.1, inner_tol=1e-10, n_paths=1,
          random_state=0)


def _data(n=90, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4)
    t = rng.randint(0, 3, n)
    yc = np.where(X[:, 0] + 0.4 * t + 0.3 * rng.randn(n) > 0.2, "b", "a")
    yr = X[:, 1] + t + 0.1 * rng.randn(n)
    w = rng.randint(0, 3, n).astype(float)
    return X, t, yc, yr, w


def _out(est, X, t):
    f = getattr(est, "decision_function", est.predict)
    return f(X, task_index=t)


@pytest.mark.parametrize("cls", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_integer_weights_are_repeated_rows_within_tasks(cls):
    X, t, yc, yr, w = _data()
    y = yc if cls is InfiniteFeatureClassifier else yr
    rep = np.repeat(np.arange(len(y)), w.astype(int))
    with threadpool_limits(1):
        a = cls(**KW).fit(X, y, task_index=t, sample_weight=w)
        b = cls(**KW).fit(X[rep], y[rep], task_index=t[rep])
        c = cls(**KW).fit(X, y, task_index=t)  # (the weights matter)
    np.testing.assert_allclose(_out(a, X, t), _out(b, X, t), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(a.features_, b.features_, rtol=1e-7, atol=1e-8)
    assert np.abs(_out(a, X, t) - _out(c, X, t)).max() > 1e-3
    if cls is InfiniteFeatureRegressor:  # each task's targets standardised on its weights
        np.testing.assert_allclose(a.y_mean_, b.y_mean_, rtol=1e-12)
        np.testing.assert_allclose(a.y_scale_, b.y_scale_, rtol=1e-12)


@pytest.mark.parametrize("cls", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_zero_weight_removes_rows_and_a_task(cls):
    X, t, yc, yr, w = _data(seed=1)
    y = yc if cls is InfiniteFeatureClassifier else yr
    t = np.where(np.arange(len(t)) < 6, 7, t)  # task 7: its six rows ...
    w[:6] = 0.0  # ... all weigh zero
    w[w > 0] += 0.5
    keep = w > 0
    with threadpool_limits(1):
        a = cls(**KW).fit(X, y, task_index=t, sample_weight=w)
        b = cls(**KW).fit(X[keep], y[keep], task_index=t[keep], sample_weight=w[keep])
    assert list(a.tasks_) == [0, 1, 2] == list(b.tasks_)
    np.testing.assert_array_equal(_out(a, X[keep], t[keep]), _out(b, X[keep], t[keep]))
    np.testing.assert_array_equal(a.features_, b.features_)
    with pytest.raises(ValueError, match="7"):  # (the removed task is unknown to the model)
        a.predict(X[:6], task_index=t[:6])


def test_balanced_is_per_task():
    rng = np.random.RandomState(2)
    n = 120
    X, t = rng.randn(n, 3), np.repeat([0, 1], n // 2)
    # task 0 mostly "a", task 1 mostly "b": the pool is balanced, the tasks are not
    y = np.where(rng.rand(n) < np.where(t == 0, 0.2, 0.8), "b", "a")
    y[:3], y[-3:] = "b", "a"
    per_task = np.empty(n)
    for k in (0, 1):
        per_task[t == k] = compute_sample_weight("balanced", y[t == k])
    pooled = compute_sample_weight("balanced", y)
    assert np.abs(per_task - pooled).max() > 0.3
    with threadpool_limits(1):
        a = InfiniteFeatureClassifier(class_weight="balanced", **KW).fit(X, y, task_index=t)
        b = InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t, sample_weight=per_task)
        c = InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t, sample_weight=pooled)
    np.testing.assert_allclose(_out(a, X, t), _out(b, X, t), rtol=1e-9, atol=1e-10)
    assert np.abs(_out(a, X, t) - _out(c, X, t)).max() > 1e-3
    # under sample_weight: the classes' total weights within each task
    w = rng.randint(1, 3, n).astype(float)
    rep = np.repeat(np.arange(n), w.astype(int))
    with threadpool_limits(1):
        d = InfiniteFeatureClassifier(class_weight="balanced", **KW).fit(
            X, y, task_index=t, sample_weight=w)
        e = InfiniteFeatureClassifier(class_weight="balanced", **KW).fit(
            X[rep], y[rep], task_index=t[rep])
    np.testing.assert_allclose(_out(d, X, t), _out(e, X, t), rtol=1e-7, atol=1e-8)


def test_weighted_tasks_with_defaults_and_platt():
    # the defaults (levels and budgets chosen on held-out rows) and Platt's folds
    # take the weights with tasks; zero weights still remove rows exactly
    X, t, yc, yr, w = _data(n=80, seed=3)
    keep = w > 0
    kw = dict(random_state=0, probability=True)
    with threadpool_limits(1):
        a = InfiniteFeatureClassifier(**kw).fit(X, yc, task_index=t, sample_weight=w)
        b = InfiniteFeatureClassifier(**kw).fit(X[keep], yc[keep], task_index=t[keep],
                                                sample_weight=w[keep])
        r = InfiniteFeatureRegressor(random_state=0).fit(X, yr, task_index=t, sample_weight=w)
        s = InfiniteFeatureRegressor(random_state=0).fit(
            X[keep], yr[keep], task_index=t[keep], sample_weight=w[keep])
    pa = a.predict_proba(X, task_index=t)
    assert pa.shape == (80, 2)
    np.testing.assert_array_equal(pa, b.predict_proba(X, task_index=t))
    np.testing.assert_array_equal(r.predict(X, task_index=t), s.predict(X, task_index=t))


@pytest.mark.parametrize("weights, message", [
    (-np.ones(90), "non-negative"),
    (np.ones(89), "sample_weight"),
    (np.zeros(90), "zero"),
])
def test_bad_weights_with_tasks_are_refused(weights, message):
    X, t, yc, yr, _ = _data()
    for est, y in ((InfiniteFeatureClassifier(**KW), yc), (InfiniteFeatureRegressor(**KW), yr)):
        with pytest.raises(ValueError, match=message):
            est.fit(X, y, task_index=t, sample_weight=weights)
    with pytest.raises(ValueError, match=message):
        InfiniteFeatureClassifier(class_weight="balanced", **KW).fit(
            X, yc, task_index=t, sample_weight=weights)


# --- one-vs-rest within tasks ------------------------------------------------------


def _three(n=120, seed=4, absent=True):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    t = rng.randint(0, 3, n)
    y = np.array(["p", "q", "r"])[np.digitize(X[:, 0] + 0.3 * t, [-0.5, 0.5])]
    if absent:
        y[(t == 2) & (y == "p")] = "q"  # class p: no row in task 2
    return X, t, y


def test_ovr_within_tasks_is_the_binary_problems_by_hand():
    # each (task, class) problem as a task of its own, built by hand: the rows of the
    # task repeated once per class, labelled y == c.  The repeated rows make the
    # columns' unit norms sqrt(3) times smaller, which lambda_p / sqrt(3) undoes:
    # the same problem, so the same path and model (every class in every task: each
    # row repeated as often).
    X, t, y = _three(absent=False)
    K = 3
    with threadpool_limits(1):
        a = InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t)
        pairs = [(k, c) for k in range(3) for c in range(K) if a._task_classes[k, c]]
        rows = np.concatenate([np.flatnonzero(t == k) for k, c in pairs])
        pair = np.concatenate([np.full(np.sum(t == k), k * K + c) for k, c in pairs])
        label = y[rows] == np.array(["p", "q", "r"])[pair % K]
        b = InfiniteFeatureClassifier(**dict(KW, lambda_p=KW["lambda_p"] / np.sqrt(K))).fit(
            X[rows], label, task_index=pair)
    assert a._task_classes.all()
    assert list(b.tasks_) == [k * K + c for k, c in pairs]
    D = a.decision_function(X, task_index=t)
    for k, c in pairs:
        m = t == k
        np.testing.assert_allclose(D[m, c], b.decision_function(
            X[m], task_index=np.full(m.sum(), k * K + c)), rtol=1e-6, atol=1e-7)
    # one row per (task, class), task-major
    assert a.column_coef_.shape[0] == a.intercept_.shape[0] == a.task_coef_.shape[0] == 9
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-6, atol=1e-7)
    # a class absent from a task: its problem is not fitted, a zero row
    X, t, y = _three()
    with threadpool_limits(1):
        c = InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t)
    assert c._task_classes.tolist() == [[True] * 3, [True] * 3, [False, True, True]]
    assert not c.column_coef_[2 * K].any() and c.intercept_[2 * K] == 0
    assert c.column_coef_.shape[0] == 9


def test_ovr_within_tasks_outputs_like_one_vs_rest():
    X, t, y = _three()
    with threadpool_limits(1):
        est = InfiniteFeatureClassifier(loss="logistic", **KW).fit(X, y, task_index=t)
    assert list(est.classes_) == ["p", "q", "r"]
    D = est.decision_function(X, task_index=t)
    P = est.predict_proba(X, task_index=t)
    pred = est.predict(X, task_index=t)
    assert D.shape == P.shape == (120, 3) and pred.shape == (120,)
    np.testing.assert_array_equal(pred, est.classes_[np.argmax(D, axis=1)])
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X, task_index=t)), P, rtol=1e-12)
    in2 = t == 2  # p has no row in task 2: never predicted there, probability 0
    assert np.all(P[in2, 0] == 0) and "p" not in pred[in2]
    np.testing.assert_allclose(D[in2, 0], D[in2, 1:].min(axis=1) - 1.0)
    assert "p" in pred[~in2] and P[~in2, 0].max() > 0.5
    assert est.score(X, y, task_index=t) > 0.9
    # the classes fitted in a task get the logistic sigmoids normalised, as without tasks
    s = 1 / (1 + np.exp(-D[~in2]))
    np.testing.assert_allclose(P[~in2], s / s.sum(axis=1, keepdims=True), rtol=1e-10)


def test_ovr_within_tasks_weighted_and_platt():
    X, t, y = _three(n=90, seed=5)
    w = np.random.RandomState(0).randint(0, 3, 90).astype(float)
    rep = np.repeat(np.arange(90), w.astype(int))
    with threadpool_limits(1):
        a = InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t, sample_weight=w)
        b = InfiniteFeatureClassifier(**KW).fit(X[rep], y[rep], task_index=t[rep])
    np.testing.assert_allclose(a.decision_function(X, task_index=t),
                               b.decision_function(X, task_index=t), rtol=1e-7, atol=1e-8)
    # class q's rows of task 0 all weigh zero: not fitted there, as if absent
    w = np.where((t == 0) & (y == "q"), 0.0, 1.0)
    keep = w > 0
    with threadpool_limits(1):
        c = InfiniteFeatureClassifier(probability=True, **KW).fit(
            X, y, task_index=t, sample_weight=w)
        d = InfiniteFeatureClassifier(probability=True, **KW).fit(
            X[keep], y[keep], task_index=t[keep])
    assert not c._task_classes[0, 1]
    np.testing.assert_array_equal(c.decision_function(X, task_index=t),
                                  d.decision_function(X, task_index=t))
    P = c.predict_proba(X, task_index=t)
    assert P.shape == (90, 3) and np.all(P[t == 0, 1] == 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_ovr_within_tasks_model_file_round_trip(tmp_path):
    from kernlearn.io import load_model, save_model

    X, t, y = _three()
    est = InfiniteFeatureClassifier(loss="logistic", **KW).fit(X, y, task_index=t)
    save_model(est, tmp_path / "m.kl")
    back = load_model(tmp_path / "m.kl")
    np.testing.assert_array_equal(back._task_classes, est._task_classes)
    for method in ("decision_function", "predict_proba", "predict"):
        np.testing.assert_array_equal(getattr(back, method)(X, task_index=t),
                                      getattr(est, method)(X, task_index=t))
    # (a model without tasks keeps None)
    plain = InfiniteFeatureClassifier(**KW).fit(X, y)
    save_model(plain, tmp_path / "p.kl")
    assert load_model(tmp_path / "p.kl")._task_classes is None


def test_ovr_within_tasks_from_the_command_line(tmp_path, capsys):
    from kernlearn import cli

    X, t, y = _three(n=60)
    path = tmp_path / "three.csv"
    path.write_text("a,b,c,task,y\n" + "\n".join(
        f"{r[0]:.6f},{r[1]:.6f},{r[2]:.6f},{k},{c}" for r, k, c in zip(X, t, y)) + "\n")
    model = tmp_path / "m.model"
    code = cli.main(["fit", str(path), "-e", "infinite-classifier", "--task-column", "task",
                     "--label", "y", "-m", str(model), "-q"])
    assert code == 0, capsys.readouterr().err
    code = cli.main(["predict", str(path), "-m", str(model), "-o", str(tmp_path / "p.txt")])
    assert code == 0, capsys.readouterr().err
    # the model of the same rows fitted in memory, and its predictions (a set of
    # labels only held for any model, a constant one too)
    from kernlearn.io import load_model

    Xc = np.array([[float(f"{v:.6f}") for v in r] for r in X])
    est = InfiniteFeatureClassifier(random_state=0).fit(Xc, y, task_index=t)
    back = load_model(model)
    assert back._task_classes.tolist() == est._task_classes.tolist()
    assert back._task_classes.tolist() == [[True] * 3, [True] * 3, [False, True, True]]
    pred = est.predict(Xc, task_index=t)
    np.testing.assert_array_equal((tmp_path / "p.txt").read_text().split(), pred)
    # each row decided in its own task (the classes' boundaries move with the task:
    # every row read in task 0's block scored 0.77)
    assert np.mean(pred == y) > 0.95


def test_bad_inputs_with_tasks_still_refused():
    X, t, y = _three()
    with pytest.raises(ValueError, match="single class"):
        InfiniteFeatureClassifier(**KW).fit(X, np.full(120, "p"), task_index=t)
    with pytest.raises(ValueError, match="shape"):
        InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t[:50])
    with pytest.raises(ValueError, match="class_weight must map"):
        InfiniteFeatureClassifier(class_weight={"p": -1.0}, **KW).fit(X, y, task_index=t)
    est = InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="unseen"):
        est.predict(X[:2], task_index=[0, 9])
