"""``verbose`` means the same in every estimator (issue 27): 0 silent, 1 a bar or
widget only where someone watches (nothing when output is captured), 2 one line
per outer iteration wherever the output goes."""

import warnings

import numpy as np
import pytest

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    MultitaskMKLRegressor,
    PNormMKLClassifier,
)

rng = np.random.default_rng(0)
X = rng.standard_normal((60, 4))
y_clf = (X[:, 0] + 0.3 * rng.standard_normal(60) > 0).astype(int)
y_reg = X[:, 0] + 0.1 * rng.standard_normal(60)
TASKS = np.repeat([0, 1], 30)

CASES = [
    (FGMClassifier, dict(B=2, max_iter=3), y_clf, {}),
    (FGMRegressor, dict(B=2, max_iter=3), y_reg, {}),
    (InfiniteFeatureClassifier, dict(max_features=3, n_candidates=5, random_state=0),
     y_clf, {}),
    (InfiniteFeatureRegressor, dict(max_features=3, n_candidates=5, random_state=0),
     y_reg, {}),
    (PNormMKLClassifier, dict(max_iter=3, random_state=0), y_clf, {}),
    (LowRankKernelClassifier, dict(n_columns=10, max_iter=3, random_state=0), y_clf, {}),
    (LowRankKernelRegressor, dict(n_columns=10, max_iter=3, random_state=0), y_reg, {}),
    (MultitaskMKLRegressor, dict(kernels=["linear"], max_iter=3), y_reg,
     {"task_index": TASKS}),
]


def _fit(cls, kw, y, fit_kw, verbose, capsys):
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = cls(**kw, verbose=verbose).fit(X, y, **fit_kw)
    out = capsys.readouterr()
    return model, out.out + out.err


@pytest.mark.parametrize("cls, kw, y, fit_kw", CASES, ids=[c[0].__name__ for c in CASES])
def test_verbose_levels_mean_the_same(cls, kw, y, fit_kw, capsys, monkeypatch):
    monkeypatch.delenv("KERNLEARN_PROGRESS", raising=False)
    quiet, text0 = _fit(cls, kw, y, fit_kw, 0, capsys)
    assert text0 == ""
    _, text1 = _fit(cls, kw, y, fit_kw, 1, capsys)
    assert text1 == ""  # captured output is not a terminal
    loud, text2 = _fit(cls, kw, y, fit_kw, 2, capsys)
    lines = [ln for ln in text2.splitlines() if ln.startswith("[")]
    assert lines, f"{cls.__name__}(verbose=2) printed no progress line"
    pred = {"task_index": TASKS} if fit_kw else {}
    np.testing.assert_array_equal(quiet.predict(X, **pred), loud.predict(X, **pred))
