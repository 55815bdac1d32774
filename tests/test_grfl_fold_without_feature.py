"""A fixed ``lambda_p`` with ``max_features="auto"`` below 300 rows: the folds that
choose the feature count may disagree on whether any feature violates the
optimality conditions at that level.  A fold whose path added none has the model
of no features (it used to have no held-out loss at all: ``IndexError``)."""

import numpy as np

from kernlearn import InfiniteFeatureRegressor
from kernlearn.methods import _grfl_select


def _weak_signal(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, 0.3 * X[:, 0] + rng.normal(size=n)


def test_fold_without_feature_counts_as_the_model_of_none(monkeypatch):
    X, y = _weak_signal()
    monitors = []
    curve_at = _grfl_select._curve_at

    def spy(monitor, counts):
        monitors.append((len(monitor.losses), monitor))
        return curve_at(monitor, counts)

    monkeypatch.setattr("kernlearn.methods.grfl._curve_at", spy)
    # at this level some of the 5 folds add features and some add none
    est = InfiniteFeatureRegressor(lambda_p=3.0, random_state=0).fit(X, y)
    empty = {id(m): m for n_before, m in monitors if n_before == 0}
    assert empty, "no fold without a feature: the case is not exercised"
    assert any(n_before > 0 for n_before, _ in monitors)
    for m in empty.values():  # measured once, at no features
        assert m.counts == [0] and np.isfinite(m.losses[0])
    pred = est.predict(X)
    assert pred.shape == (60,) and np.all(np.isfinite(pred))
    assert est.max_features_ >= 1  # the count chosen over the folds that added some
