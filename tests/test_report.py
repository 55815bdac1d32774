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
    assert "<script src" not in text and "<link" not in text and "http" not in text
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
        "fgm-multiclass": (FGMClassifier(B=2, max_outer_iter=3), y3, 3),
        "slkl": (LowRankKernelRegressor(n_columns=20, random_state=0), X @ w, 2),
        "mkl-multiclass": (PNormMKLClassifier(max_iter=3, random_state=0), y3, 2),
    }[kind]
    est.fit(X, target)
    text = build_report(est, {}, data=(X, target, "train"))
    assert text.count('<img class="figure"') == n_fig
    assert "<h2>Convergence</h2>" in text and "<h2>Selection</h2>" in text
    assert "Test metrics on train" in text
