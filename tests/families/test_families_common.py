"""The family contract (``kernlearn/families/_base.py``) for every registered family.

Parametrised over :data:`kernlearn.families.FAMILIES`: a newly registered
family is tested by these checks with no new test code beyond, if its
constructor needs one, an entry in ``ARGS``; and an entry in ``SCORES`` saying
how its scores are defined (the test fails until it has one).

* ``price(grad, k, rng=None, exclude=None, X=None)`` returns at most ``k``
  candidates whose scores are what the family's definition gives from the
  columns it reports (computed here by brute force from ``columns``);
* the pricing families (all but the SLKL coordinate sampler) return them best
  first, and finite pools return the exact top ``k`` of the whole pool, never
  one listed in ``exclude`` (the next best instead);
* ``transform(X, kept)`` gives the same columns as ``columns``.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.families import FAMILIES

N, D = 120, 16

# constructor arguments a family needs on the small test data
ARGS = {
    "gabor": {"image_shape": (4, 4), "filter_size": 3, "stride": 1},
    "nystrom": {"n_columns": 30, "random_state": 0},
}
# how a candidate's score is defined from its columns Phi (n x group) and grad:
# "raw": ||Phi' grad|| (finite pools, FGM's pricing); "unit": the same with
# unit-norm columns (GrFL's infinite families, eq. 7); "sampled": ||Phi' Z||^2
# on the training rows, drawn at random (SLKL's Algorithm 1: a sampler)
SCORES = {"pool": "raw", "poly2": "raw", "additive": "raw", "intersection": "raw",
          "fourier": "unit", "gabor": "unit", "nystrom": "sampled"}


def _dense(A):
    return np.asarray(A.todense()) if sp.issparse(A) else np.asarray(A)


@pytest.fixture(params=FAMILIES.names())
def fitted(request):
    name = request.param
    rng = np.random.default_rng(0)
    X = rng.random((N, D))
    family = FAMILIES.resolve(name, **ARGS.get(name, {}))
    assert family.fit(X) is family
    grad = rng.standard_normal(N)
    return name, family, X, grad


def _brute_scores(name, family, cand, X, grad):
    B = _dense(family.columns(cand, X))
    gs = cand.group_size
    blocks = [B[:, i * gs:(i + 1) * gs] for i in range(len(cand.scores))]
    rule = SCORES[name]
    if rule == "raw":
        return np.array([np.linalg.norm(b.T @ grad) for b in blocks])
    if rule == "unit":
        return np.array([np.linalg.norm((b / np.linalg.norm(b, axis=0)).T @ grad)
                         for b in blocks])
    return np.array([np.sum((b.T @ grad) ** 2) for b in blocks])


def test_every_family_declares_its_score(fitted):
    name = fitted[0]
    assert name in SCORES, f"add the score rule of the family {name!r} to SCORES"


def test_scores_are_those_of_the_reported_columns(fitted):
    name, family, X, grad = fitted
    cand = family.price(grad, 3, rng=np.random.default_rng(1), exclude=None, X=X)
    assert 1 <= len(cand) <= 3
    assert np.all(np.isfinite(cand.scores))
    np.testing.assert_allclose(cand.scores, _brute_scores(name, family, cand, X, grad),
                               rtol=1e-6, atol=1e-10)
    if SCORES[name] != "sampled":
        assert np.all(np.diff(cand.scores) <= 1e-12 * max(1.0, cand.scores[0])), \
            "candidates must come best first"


def test_transform_gives_the_same_columns(fitted):
    name, family, X, grad = fitted
    cand = family.price(grad, 2, rng=np.random.default_rng(2), X=X)
    np.testing.assert_allclose(_dense(family.transform(X, cand.params)),
                               _dense(family.columns(cand, X)), rtol=1e-10, atol=1e-12)


def test_finite_pools_price_the_exact_top_k_and_honour_exclude(fitted):
    name, family, X, grad = fitted
    if SCORES[name] != "raw":
        pytest.skip(f"{name} is not a finite pool priced exactly")
    every = family.price(grad, 10 ** 6, X=X)  # the whole pool, best first
    top = family.price(grad, 3, X=X)
    np.testing.assert_array_equal(np.asarray(top.params), np.asarray(every.params)[:3])
    assert len(every) > 3
    best = np.asarray(top.params)[:1]
    excl = family.price(grad, 3, exclude=set(best.tolist()), X=X)
    assert best[0] not in np.asarray(excl.params)
    np.testing.assert_array_equal(np.asarray(excl.params), np.asarray(every.params)[1:4])
