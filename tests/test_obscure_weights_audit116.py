"""Audit 116: OBSCURE with unequal weights after audit 115's epochs.

The duality-gap certificate's "recent updates" candidate was rounding noise
when nothing had been updated since its snapshot (extreme weights: a tiny
penalty), and certified fits far from the optimum; weights whose sum
overflows were refused as a fault of the penalty or of ``X``; the epochs'
visits (:class:`~kernlearn.methods._obscure_rows.EpochOrder`).
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernlearn import PNormMKLClassifier
from kernlearn.kernels import KernelList
from kernlearn.losses import Hinge
from kernlearn.methods._obscure_dual import _RecentUpdates
from kernlearn.methods._obscure_rows import EpochOrder, _sampling
from kernlearn.methods.obscure import KernelProblem, OnlineBatch
from kernlearn.penalties import SquaredGroupNorm2p

VIEWS = [[0, 1], [2, 3], [4, 5]]


def _extreme_class_weights(seed, n=40):
    # binary, one class weighing 1e6 and the other 1e-6, at the estimator's
    # penalty for C = 1: lam = 1 / sum(w) ~ 5e-8
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = (X[:, 0] + X[:, 1] + 0.7 * rng.normal(size=n) > 0).astype(int)
    X = X / np.repeat([np.linalg.norm(X[:, v], axis=1) for v in VIEWS], 2, 0).T
    w = (np.array([1e-6, 1e6]) if seed % 2 == 0 else np.array([1e6, 1e-6]))[y]
    kl = KernelList([("linear", {}, v) for v in VIEWS]).fit(X)
    prob = KernelProblem(kl, np.where(y == 1, 1.0, -1.0), Hinge(),
                         SquaredGroupNorm2p(alpha=1.0 / w.sum(), p=1.5), sample_weight=w)
    return kl, prob


@pytest.mark.parametrize("seed", [16, 29])
def test_extreme_weights_certificate_is_below_the_objective(seed):
    # these fits stopped on "duality gap" with a dual bound above their own
    # objective (0.052 and 0.064 against 0.042 and 0.027; the optimum, by
    # cvxpy, is 3e-7 and 4e-7): weak duality broken
    kl, prob = _extreme_class_weights(seed)
    with warnings.catch_warnings():
        # (max_iter is reached now: the warning is the honest answer)
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = OnlineBatch(tol=0.05, random_state=seed).solve(prob)
    G = np.einsum("jnm,mc->cjn", kl.gram(), res.coef)
    N = np.einsum("nc,cjn->j", res.coef, G)
    f = OnlineBatch.objective(prob, G, N)[0]
    dual = res.history.as_dict()["dual"]
    assert np.all(dual <= f)
    # not certified unless within tol of the optimum (which is below 1e-6)
    assert not res.converged or f <= 1e-6 / 0.95


def test_recent_candidate_refused_when_the_difference_is_rounding():
    # A = rho A0 (no update since the snapshot) up to one rounding per entry:
    # the difference (A - rho A0) / (1 - rho) and its N are noise
    rng = np.random.default_rng(0)
    n, F = 30, 2
    A = rng.normal(size=(n, 1))
    K = np.stack([(lambda Z: Z @ Z.T)(rng.normal(size=(n, 3))) for _ in range(F)])
    G = np.einsum("jnm,mc->cjn", K, A)
    rec = _RecentUpdates()
    rec.end_epoch(A, G)  # the snapshot (A0, G0), rho = 1
    rho = 0.5
    rec.decay(rho)
    noise = lambda Z: Z * (1 + 1e-16 * rng.choice([-1, 1], size=Z.shape))  # noqa: E731
    A1, G1 = noise(rho * A), noise(rho * G)
    assert rec.candidate(A1, G1) is None
    # a real update since the snapshot gives the candidate, N its exact norm
    A2 = rho * A + rng.normal(size=A.shape)
    G2 = np.einsum("jnm,mc->cjn", K, A2)
    dA, _, N = rec.candidate(A2, G2)
    np.testing.assert_allclose(N, np.einsum("nc,jnm,mc->j", dA, K, dA), rtol=1e-9)


def test_estimator_with_extreme_class_weights_warns_instead_of_certifying():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=80) > 0).astype(int)
    clf = PNormMKLClassifier(class_weight={0: 1e-6, 1: 1e6}, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        clf.fit(X, y)
    h = clf.history_
    assert np.max(h["dual"]) <= h["best"][-1]


@pytest.mark.parametrize("sw", [
    np.r_[1e308, 1.5e308, np.ones(78)],  # the total overflows
    np.full(80, 1e307),  # every weight finite, the sum not
])
def test_weights_whose_sum_overflows_are_refused_naming_the_weights(sw):
    # refused as "lam (the penalty's alpha) must be positive, got 0.0" or as
    # X's columns being too large to standardise
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="sample_weight .* sums to more than float64"):
        PNormMKLClassifier(random_state=0).fit(X, y, sample_weight=sw)


@pytest.mark.parametrize("w", [
    np.random.default_rng(1).uniform(0.05, 3.0, 500),  # fractional
    np.r_[1e6, np.ones(499)],  # one row carrying almost all the weight
    10.0 ** np.random.default_rng(2).uniform(-6, 6, 500),  # spanning 1e-6..1e6
    np.r_[np.zeros(100), np.random.default_rng(3).uniform(0.5, 2, 400)],  # zeros
    1e-300 * np.random.default_rng(4).uniform(1, 2, 500),  # a tiny total
])
def test_epoch_order_visits_each_row_its_expected_number_of_times(w):
    rows, prob = _sampling(w, len(w))
    order = EpochOrder(rows, prob)
    rng = np.random.default_rng(0)
    seen = np.zeros(len(w))
    expect = len(rows) * w / w.sum()
    for k in range(1, 31):
        ids = order(rng)
        seen += np.bincount(ids, minlength=len(w))
        # within one visit of the expectation after every epoch, never a row
        # of zero weight
        assert np.all(np.abs(seen - k * expect) < 1.0)
        assert np.all(seen[w == 0] == 0)
    # the same random state, the same visits
    again = EpochOrder(rows, prob)
    rng2 = np.random.default_rng(0)
    assert np.array_equal(np.concatenate([again(rng2) for _ in range(30)])[-len(ids):],
                          ids)


def test_refused_recent_candidate_leaves_the_iterate_bound(monkeypatch):
    # once the recent updates' bound was ahead only it was evaluated: a refused
    # (None) candidate then left the epoch without any bound, and the fit
    # could no longer stop on the gap
    from kernlearn.methods import _obscure_dual

    orig = _obscure_dual._RecentUpdates.candidate
    refused = [0]

    def candidate(self, A, G):
        out = orig(self, A, G)
        # from the moment the recent candidate is ahead, refuse it
        refused[0] += bool(self.ahead)
        return None if self.ahead else out

    monkeypatch.setattr(_obscure_dual._RecentUpdates, "candidate", candidate)
    kl, prob = _extreme_class_weights(3)
    prob = KernelProblem(kl, prob.y, Hinge(), SquaredGroupNorm2p(alpha=1e-2, p=1.5))
    res = OnlineBatch(tol=0.01, max_iter=300, random_state=0).solve(prob)
    assert refused[0] > 0
    assert res.converged

