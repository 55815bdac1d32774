"""Regression tests of FGM defects (issue 23 items 1, 7, 9, 11-13; issue 22 item 4)."""

import time
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernlearn import FGMClassifier
from kernlearn.colgen import ColumnGeneration
from kernlearn.families import (AdditiveKernelExpansion, Candidates, FeaturePool,
                                IntersectionKernelFeatures, PolynomialPool,
                                RandomFourierFeatures)
from kernlearn.families.pool import _tree_children


def _grouped(rng, n=400, n_groups=20, size=10, informative=(0, 1, 2, 3)):
    X = rng.standard_normal((n, n_groups * size))
    w = np.zeros(n_groups * size)
    for g in informative:
        w[g * size:(g + 1) * size] = rng.uniform(1, 2, size) * (4 - g * 0.5)
    groups = [list(range(g * size, (g + 1) * size)) for g in range(n_groups)]
    return X, np.sign(X @ w), groups


def test_group_budget_compares_and_counts_groups(rng):
    # Defect: group ids were compared with column ids and columns were counted.
    X, y, groups = _grouped(rng)
    clf = FGMClassifier(B=1, max_features=4, groups=groups).fit(X, y)
    chosen = set((clf.selected_features_ // 10).tolist())
    assert chosen == {0, 1, 2, 3}
    three = FGMClassifier(B=1, max_features=3, groups=groups).fit(X, y)
    assert len(set((three.selected_features_ // 10).tolist())) == 3
    assert three.selected_features_.size == 30


def test_kernel_fgm_budget_does_not_block_other_features(rng):
    # Defect: with HIK the active virtual ids 0..n-1 of feature 0 blocked every
    # input feature id < n.
    X = np.abs(rng.standard_normal((60, 8)))
    y = np.sign(X[:, 0] + X[:, 3] + X[:, 5] - np.median(X[:, [0, 3, 5]].sum(1)) + 1e-9)
    clf = FGMClassifier(B=1, C=10.0, max_features=3,
                        family=IntersectionKernelFeatures()).fit(X, y)
    inputs = set((clf.selected_features_ // X.shape[0]).tolist())
    assert inputs == {0, 3, 5}


def test_stopping_at_max_iter_warns(rng):
    X = rng.standard_normal((200, 300))
    y = np.sign(X[:, :60] @ rng.standard_normal(60))
    # the message names the outer cap (max_outer_iter before 0.2)
    with pytest.warns(ConvergenceWarning, match=r"max_(outer_)?iter"):
        clf = FGMClassifier(B=2, max_iter=2, tol=1e-12).fit(X, y)
    assert not clf.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        FGMClassifier(B=2, max_features=4).fit(X, y)  # the budget is met: no warning


def test_sampled_family_is_refused_by_name(rng):
    X = rng.standard_normal((50, 4))
    y = np.sign(X[:, 0])
    with pytest.raises(TypeError, match="RandomFourierFeatures.*cannot be used by FGM"):
        FGMClassifier(family=RandomFourierFeatures()).fit(X, y)


def test_transform_out_of_core_equals_in_memory(rng):
    X = rng.standard_normal((300, 20))
    y = np.sign(X[:, 2] - X[:, 7])
    clf = FGMClassifier(B=2, max_iter=3).fit(X, y)
    ref = clf.transform(X)
    clf.set_params(memory_budget="2KB")
    np.testing.assert_array_equal(clf.transform(X), ref)


@pytest.mark.parametrize("groups", [[1], [[0, 1], 2], [[0.5, 1]], [[]]])
def test_bad_groups_are_refused(rng, groups):
    X = rng.standard_normal((30, 4))
    y = np.sign(X[:, 0])
    with pytest.raises(ValueError, match="group"):
        FGMClassifier(groups=groups).fit(X, y)


def test_tree_without_groups_is_refused(rng):
    # tree=True alone was silently ignored (each feature its own group)
    X = rng.standard_normal((30, 4))
    y = np.sign(X[:, 0])
    with pytest.raises(ValueError, match="tree=True says how the groups= nest"):
        FGMClassifier(tree=True).fit(X, y)
    clf = FGMClassifier(groups=[[0, 1, 2, 3], [0, 1], [2]], tree=True, B=1).fit(X, y)
    assert 0 in clf.selected_features_


def test_negative_column_ids_are_refused(rng):
    X = rng.standard_normal((30, 4))
    for pool, ids in [(FeaturePool(), [-1]), (PolynomialPool(), [-3]),
                      (AdditiveKernelExpansion(n_bins=4), [-1])]:
        pool.fit(np.abs(X))
        with pytest.raises(ValueError, match="negative indices are not read from the end"):
            pool.raw_columns(np.array(ids), np.abs(X))
    with pytest.raises(ValueError, match="outside"):
        FeaturePool().fit(X).column_indices(np.array([4]))


def _binary_tree(depth):
    """Groups of a full binary tree over 2**depth features, parents first."""
    groups = []
    for level in range(depth + 1):
        size = 2 ** (depth - level)
        groups += [np.arange(i, i + size) for i in range(0, 2 ** depth, size)]
    return groups


def test_tree_setup_is_near_linear_and_accepts_any_order(rng):
    groups = _binary_tree(14)  # 32,767 groups (the old setup took 22 s)
    t0 = time.perf_counter()
    tree = _tree_children(groups)
    assert time.perf_counter() - t0 < 10.0
    assert tree["roots"] == [0] and tree["children"][0] == [1, 2]
    # child-before-parent listing: same tree, same pricing
    small = _binary_tree(4)
    X = rng.standard_normal((80, 16))
    u = rng.standard_normal(80)
    fwd = FeaturePool(groups=small, tree=True).fit(X).price(-u, 3, X=X)
    rev = FeaturePool(groups=small[::-1], tree=True).fit(X).price(-u, 3, X=X)
    n = len(small)
    np.testing.assert_array_equal(np.sort(n - 1 - rev.params), np.sort(fwd.params))
    np.testing.assert_allclose(np.sort(rev.scores), np.sort(fwd.scores))
    with pytest.raises(ValueError, match="overlap without nesting"):
        FeaturePool(groups=[[0, 1], [1, 2]], tree=True).fit(X)


@pytest.mark.parametrize("make", [lambda: FeaturePool(), lambda: PolynomialPool(),
                                  lambda: AdditiveKernelExpansion(n_bins=5),
                                  lambda: IntersectionKernelFeatures()])
def test_exclude_skips_candidates_and_keeps_the_dual_term(rng, make):
    X = np.abs(rng.standard_normal((40, 6)))
    u = rng.standard_normal(40)
    pool = make().fit(X)
    full = pool.price(-u, 4, X=X)
    ex = [int(full.params[0]), int(full.params[2])]
    out = pool.price(-u, 4, X=X, exclude=set(ex))
    assert not set(ex) & set(np.asarray(out.params).tolist())
    assert len(out) == 4
    # the next best after removing the excluded ones, in order
    more = pool.price(-u, 6, X=X)
    keep = [p for p in np.asarray(more.params).tolist() if p not in ex][:4]
    assert np.asarray(out.params).tolist() == keep
    assert out.extra["sum_sq"] == pytest.approx(full.extra["sum_sq"], rel=1e-12)


def test_pricing_stops_with_a_reason_not_a_string():
    cand = Candidates(np.array([0]), np.array([1.0]))
    master = lambda c: 1.0  # noqa: E731
    res = ColumnGeneration(5).run(lambda: (None, "max_features"), master)
    assert res.stop_reason == "max_features" and res.n_iter == 0
    assert ColumnGeneration(5).run(lambda: None, master).stop_reason == "no_violation"
    assert ColumnGeneration(2, warn=False).run(lambda: cand, master).n_iter == 2
    with pytest.raises(TypeError, match="not the string"):
        ColumnGeneration(5).run(lambda: "active_set", master)
