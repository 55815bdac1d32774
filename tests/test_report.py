"""The HTML report, rendered in headless Chromium: figures present and non-blank."""

import re
import shutil
import subprocess

import numpy as np
import pytest

from kernlearn.cli import main

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(
        "no headless Chromium found (Debian package `chromium`; `make test` "
        "installs it when run as root with apt-get)"
    )


def _chromium(browser, tmp_path, *args):
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=5000",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _render(html_path, tmp_path):
    """DOM after load (with the page's own image check), then a full-page screenshot."""
    from PIL import Image

    browser = _browser()
    dom = _chromium(browser, tmp_path, "--dump-dom", html_path.as_uri()).stdout
    m = re.search(
        r'id="render-check" data-loaded="(\d+)" data-total="(\d+)" '
        r'data-boxes="([^"]*)"',
        dom,
    )
    assert m, "the page's load script did not run"
    loaded, total = int(m.group(1)), int(m.group(2))
    boxes = [tuple(map(int, b.split(","))) for b in m.group(3).split(";") if b]
    height = max(top + h for _, top, _, h in boxes) + 50
    shot = tmp_path / "shot.png"
    proc = _chromium(
        browser,
        tmp_path,
        f"--screenshot={shot}",
        f"--window-size=1300,{height}",
        html_path.as_uri(),
    )
    assert shot.exists(), proc.stderr[-500:]
    return loaded, total, boxes, np.asarray(Image.open(shot).convert("L"), dtype=float)


def _assert_non_blank(img, boxes):
    for left, top, w, h in boxes:
        crop = img[top : top + h, left : left + w]
        assert crop.shape[0] > 50 and crop.shape[1] > 50, (left, top, w, h)
        ink = np.mean(crop < 200)  # fraction of non-background pixels
        assert 0.01 < ink < 0.95 and crop.std() > 10, (left, top, w, h, ink)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    import reliability_cases as rc

    w = tmp_path_factory.mktemp("report")
    rc.make_workspace(w)
    return w


def test_fgm_report_is_self_contained(workspace, tmp_path, capsys):
    """Through the command; figures decoded here (the browser test is below)."""
    import base64
    import io

    from PIL import Image

    out = tmp_path / "fgm.html"
    assert (
        main(
            [
                "report",
                str(workspace / "model.npz"),
                "--data",
                str(workspace / "train.svm"),
                "-o",
                str(out),
            ]
        )
        == 0
    )
    text = out.read_text()
    # The embedded PNGs are base64 text, which can spell "http" by chance (it
    # did on one machine); look for outside references only outside them.
    markup = re.sub(r'src="data:image/png;base64,[^"]+"', 'src="data:"', text)
    assert "<script src" not in markup and "<link" not in markup
    assert "http" not in markup
    assert "Test metrics" in text and "accuracy" in text
    pngs = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert len(pngs) == 3  # convergence, selection, score vs number of features
    for b64 in pngs:
        img = np.asarray(Image.open(io.BytesIO(base64.b64decode(b64))).convert("L"))
        assert img.shape[0] > 200 and np.mean(img < 200) > 0.01


def test_gabor_filters_and_kernel_weights_render(tmp_path):
    from kernlearn import InfiniteFeatureClassifier, PNormMKLClassifier
    from kernlearn.families import GaborFeatures
    from kernlearn.report import write_report

    rng = np.random.default_rng(0)
    X = rng.random((40, 36))
    y = (X[:, :18].sum(1) > X[:, 18:].sum(1)).astype(int)
    grfl = InfiniteFeatureClassifier(
        family=GaborFeatures(image_shape=(6, 6), filter_size=5),
        lambda_p=0.1,
        max_features=4,
        n_candidates=8,
        random_state=0,
    ).fit(X, y)
    write_report(grfl, {}, tmp_path / "g.html", data=(X, y, "train"))
    text = (tmp_path / "g.html").read_text()
    assert "Learned Gabor filters" in text
    mkl = PNormMKLClassifier(
        kernels=["linear", ("rbf", {"gamma": 0.5})], max_iter=3, random_state=0
    ).fit(X, y)
    write_report(mkl, {}, tmp_path / "k.html")
    text = (tmp_path / "k.html").read_text()
    assert "<h2>Selection</h2>" in text and "rbf(gamma=0.5)" in text
    loaded, total, boxes, img = _render(tmp_path / "g.html", tmp_path)
    assert loaded == total >= 4
    _assert_non_blank(img, boxes)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("kind", ["fgm-multiclass", "slkl", "mkl-multiclass"])
def test_report_for_other_estimators(kind):
    """Multiclass histories (one per class), Nystrom weights, kernel weights."""
    from kernlearn import FGMClassifier, LowRankKernelRegressor, PNormMKLClassifier
    from kernlearn.datasets import make_fgm_synthetic
    from kernlearn.report import build_report

    X, y, w = make_fgm_synthetic(60, 6, 3, random_state=0)
    y3 = np.digitize(X @ w, [-0.7, 0.7])
    est, target, n_fig = {
        "fgm-multiclass": (FGMClassifier(B=2, max_iter=3), y3, 3),
        "slkl": (LowRankKernelRegressor(n_columns=20, random_state=0), X @ w, 2),
        "mkl-multiclass": (PNormMKLClassifier(max_iter=3, random_state=0), y3, 2),
    }[kind]
    est.fit(X, target)
    text = build_report(est, {}, data=(X, target, "train"))
    assert text.count('<img class="figure"') == n_fig
    assert "<h2>Convergence</h2>" in text and "<h2>Selection</h2>" in text
    assert "Test metrics on train" in text


# ---------------------------------------------------------------- the figures
def _fit(kind):
    """A small fitted model of each kind, with its test data tuple."""
    import kernlearn as kl
    from kernlearn.datasets import make_fgm_synthetic

    X, y, w = make_fgm_synthetic(120, 20, 4, random_state=0)
    yr = X @ w + 0.1 * np.random.default_rng(0).standard_normal(len(X))
    tasks = np.arange(len(y)) % 3
    est, target, t = {
        "fgm-clf": (kl.FGMClassifier(B=2), y, None),
        "fgm-reg": (kl.FGMRegressor(B=2), yr, None),
        "grfl-clf": (kl.InfiniteFeatureClassifier(lambda_p=0.1, max_features=6,
                                                  random_state=0), y, None),
        "grfl-reg": (kl.InfiniteFeatureRegressor(lambda_p=0.1, max_features=6,
                                                 random_state=0), yr, None),
        "pnorm-mkl": (kl.PNormMKLClassifier(max_iter=10, random_state=0), y, None),
        "lowrank-clf": (kl.LowRankKernelClassifier(n_columns=20, random_state=0), y,
                        None),
        "lowrank-reg": (kl.LowRankKernelRegressor(n_columns=20, random_state=0), yr,
                        None),
        "lowrank-5class": (kl.LowRankKernelClassifier(n_columns=20, random_state=0,
                                                      multiclass="ovr"),
                           np.digitize(X @ w, np.quantile(X @ w, [0.2, 0.4, 0.6, 0.8])),
                           None),
        "mtmkl-clf": (kl.MultitaskMKLClassifier(shared=True), y, tasks),
        "mtmkl-reg": (kl.MultitaskMKLRegressor(shared=True), yr, tasks),
    }[kind]
    if t is None:
        return est.fit(X, target), (X, target, "train")
    return est.fit(X, target, task_index=t), (X, target, "train", t)


KINDS = ["fgm-clf", "fgm-reg", "grfl-clf", "grfl-reg", "pnorm-mkl", "lowrank-clf",
         "lowrank-reg", "lowrank-5class", "mtmkl-clf", "mtmkl-reg"]


def _layout_problems(fig):
    """Empty axes, overlapping tick labels and text outside the figure."""
    fig.tight_layout()  # as the report does before saving
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    page = fig.bbox.expanded(1.0, 1.0)
    problems = []
    for i, ax in enumerate(fig.axes):
        if not ax.has_data():
            problems.append(f"axes {i} is empty")
        for axis in (ax.xaxis, ax.yaxis):
            boxes = [
                t.get_window_extent(r)
                for t in axis.get_ticklabels()
                if t.get_visible() and t.get_text()
            ]
            for a in range(len(boxes)):
                for b in range(a + 1, len(boxes)):
                    if boxes[a].overlaps(boxes[b]):
                        problems.append(f"axes {i}: tick labels {a} and {b} overlap")
        texts = [ax.title, ax.xaxis.label, ax.yaxis.label]
        for t in texts + ([fig._suptitle] if fig._suptitle else []):
            if t.get_text():
                bb = t.get_window_extent(r)
                if bb.x0 < page.x0 - 1 or bb.x1 > page.x1 + 1:
                    problems.append(f"axes {i}: {t.get_text()!r} cut off")
    return problems


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("kind", KINDS)
def test_every_figure_has_data_and_readable_ticks(kind):
    import matplotlib.pyplot as plt

    from kernlearn.report import _figures

    est, data = _fit(kind)
    figures = _figures(est, {}, data)
    titles = [t for t, _, _ in figures]
    assert "Convergence" in titles and "Selection" in titles
    # every model with test data gets a score figure
    if not kind.startswith(("pnorm", "lowrank")):
        assert any(t.startswith("Test score") for t in titles), titles
    if kind == "lowrank-5class":  # one history per class, named by its class
        legend = [t.get_text() for t in figures[0][1].axes[0].get_legend().get_texts()]
        assert legend == [f"class {c}" for c in est.classes_]
    for title, fig, _ in figures:
        assert _layout_problems(fig) == [], title
        # the time axis has no offset text (+2.449e1): absolute values are read
        for ax in fig.axes:
            assert ax.xaxis.get_offset_text().get_text() == "", title
        plt.close(fig)


def test_convergence_axis_excludes_a_far_dual_bound():
    """A first dual bound of -1.2e7 must not flatten the objective to a line."""
    import matplotlib.pyplot as plt

    from kernlearn.report import _convergence_figure

    est, _ = _fit("fgm-clf")
    h = dict(est.history_)
    h["lower_bound"] = np.array(h["lower_bound"], dtype=float)
    h["lower_bound"][0] = -1.2e7
    est.history_ = h
    fig = _convergence_figure(est)
    obj = np.asarray(h["objective"])
    for ax in fig.axes[:2]:
        lo, hi = ax.get_ylim()
        assert lo > -1e3 and lo <= obj.min() and hi >= obj.max()
        # the objective's own path spans a good part of the axis
        assert (obj.max() - obj.min()) / (hi - lo) > 0.3
        assert "below the axis" in ax.get_title() and "-1.2e+07" in ax.get_title()
    plt.close(fig)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("kind", ["fgm-reg", "grfl-reg", "fgm-clf", "mtmkl-reg"])
def test_score_panel_shows_the_metric_of_the_task(kind):
    """Classifiers: accuracy; regressors: R^2 and RMSE (per task for multitask)."""
    import matplotlib.pyplot as plt
    from sklearn.metrics import mean_squared_error, r2_score

    from kernlearn.report import _figures

    est, data = _fit(kind)
    X, y = data[:2]
    (fig,) = [f for t, f, _ in _figures(est, {}, data) if t.startswith("Test score")]
    labels = [ax.get_ylabel() for ax in fig.axes]
    lines = [ax.lines[0].get_ydata() for ax in fig.axes]
    if kind == "fgm-clf":
        assert labels == ["test accuracy"]
        # all features kept: the model itself
        assert lines[0][-1] == pytest.approx(est.score(X, y))
    elif kind == "mtmkl-reg":
        assert labels == ["test R^2", "test RMSE"]
        tasks = data[3]
        pred = est.predict(X, task_index=tasks)
        for t in range(3):
            m = tasks == t
            assert lines[0][t] == pytest.approx(r2_score(y[m], pred[m]))
            assert lines[1][t] == pytest.approx(
                np.sqrt(mean_squared_error(y[m], pred[m])))
    else:
        assert labels == ["test R^2", "test RMSE"]
        pred = est.predict(X)
        assert lines[0][-1] == pytest.approx(r2_score(y, pred))
        assert lines[1][-1] == pytest.approx(np.sqrt(mean_squared_error(y, pred)))
        assert lines[1][0] > lines[1][-1]  # one feature predicts worse than all
    plt.close(fig)


def test_averaged_grfl_paths_get_no_truncated_score_curve():
    """Several averaged paths have no order of inclusion: their first k
    features are the first path's at 1/n_paths of its weights, which drew a
    curve far below the model it stands for (R^2 0.1 where that path alone
    has 0.9); one path keeps its curve."""
    import matplotlib.pyplot as plt

    from kernlearn import InfiniteFeatureRegressor
    from kernlearn.report import _figures, _truncated_scores

    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=150)
    kw = dict(max_features=15, random_state=0)
    one = InfiniteFeatureRegressor(n_paths=1, **kw).fit(X, y)
    three = InfiniteFeatureRegressor(n_paths=3, **kw).fit(X, y)
    assert three.n_paths_ == 3 and len(three.features_) > len(one.features_)
    ks, scores = _truncated_scores(one, X, y)
    assert ks[-1] == len(one.features_) and scores[-1]["R^2"] == pytest.approx(one.score(X, y))
    assert _truncated_scores(three, X, y) is None
    titles = [t for t, f, _ in _figures(three, {}, (X, y, "train"))]
    assert not any(t.startswith("Test score") for t in titles) and "Selection" in titles
    plt.close("all")


def test_shared_kernel_weights_in_selection_and_report(tmp_path, capsys):
    """Multitask MKL with shared blocks: `select`'s table and the report show them."""
    import matplotlib.pyplot as plt

    from kernlearn.report import _selection_figure, build_report
    from kernlearn.summary import selection_table

    est, data = _fit("mtmkl-reg")
    assert est.shared_kernel_weights_.sum() > 0.1  # the data share a predictor
    cols, rows = selection_table(est)
    assert cols[-1] == "shared_weight"
    np.testing.assert_allclose([r[-1] for r in rows], est.shared_kernel_weights_)
    np.testing.assert_allclose([r[2] for r in rows], est.kernel_weights_)
    fig = _selection_figure(est, {})
    heights = [p.get_height() for p in fig.axes[0].patches]
    np.testing.assert_allclose(
        heights, np.r_[est.kernel_weights_, est.shared_kernel_weights_])
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "task-specific", "shared"]
    plt.close(fig)
    text = build_report(est, {}, data)
    assert "<th>shared_weight</th>" in text and "Test score per task" in text
    # without shared blocks: zero shared weights, one bar per kernel
    from kernlearn import MultitaskMKLRegressor

    plain = MultitaskMKLRegressor().fit(data[0], data[1], task_index=data[3])
    fig = _selection_figure(plain, {})
    assert len(fig.axes[0].patches) == len(plain.kernel_weights_)
    plt.close(fig)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_fgm_regressor_and_multitask_reports_render(tmp_path):
    """In the browser: every figure decodes and has ink, for two more report kinds."""
    from kernlearn.report import write_report

    for kind, n_fig in (("fgm-reg", 3), ("mtmkl-clf", 3)):
        est, data = _fit(kind)
        path = tmp_path / f"{kind}.html"
        write_report(est, {}, path, data=data)
        loaded, total, boxes, img = _render(path, tmp_path)
        assert loaded == total == n_fig
        _assert_non_blank(img, boxes)


def test_bounded_ylim_clips_only_far_bounds():
    from kernlearn.plotting import _bounded_ylim

    obj = np.array([30.0, 12.0, 10.0, 9.8])
    lb = np.array([-1.2e7, 5.0, 9.0, 9.7])
    (lo, hi), n = _bounded_ylim([obj], [lb])
    assert n == 1 and hi >= 30 and lo <= 5.0 and lo > -30
    # bounds within the objective's span below it stay in view, uncounted
    (lo, hi), n = _bounded_ylim([obj], [np.array([-5.0, 5.0, 9.0, 9.7])])
    assert n == 0 and lo <= -5.0


def test_plot_convergence_keeps_the_objective_visible(tmp_path, monkeypatch):
    import matplotlib.figure

    from kernlearn.plotting import plot_accuracy_vs_features, plot_convergence

    seen = []
    real = matplotlib.figure.Figure.savefig

    def spy(fig, *a, **k):
        seen.append([(ax.get_ylim(), ax.get_ylabel()) for ax in fig.axes])
        return real(fig, *a, **k)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    hist = {"objective": np.array([30.0, 12.0, 10.0, 9.8]),
            "lower_bound": np.array([-1.2e7, 5.0, 9.0, 9.7])}
    plot_convergence(hist, tmp_path / "c.png")
    (lo, hi), _ = seen[0][0]
    assert -30 < lo <= 5.0 and hi >= 30
    plot_accuracy_vs_features({"FGM": ([1, 2], [0.3, 0.9])}, tmp_path / "a.png",
                              metric="test R^2")
    assert seen[1][0][1] == "test R^2"


def test_cli_select_lists_shared_kernel_weights(tmp_path, capsys):
    import json

    from kernlearn.io import save_model

    est, _ = _fit("mtmkl-reg")
    save_model(est, tmp_path / "mt.npz")
    assert main(["select", str(tmp_path / "mt.npz"), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose([r["shared_weight"] for r in rows],
                               est.shared_kernel_weights_)
    np.testing.assert_allclose([r["weight"] for r in rows], est.kernel_weights_)
