"""The low-rank regressor's cheaper set-up leaves every number as it was (issue 24).

The thirty-fourth pass took two set-up costs out of a
``LowRankKernelRegressor`` fit on small data without changing a bit: the RBF
kernel of rows against themselves (``content_order``'s block, a Nystrom
family's diagonal) skips ``rbf_kernel``'s checks as other blocks already did,
and ``pairwise_spread_ratio`` writes its squared distances into the product
a block of rows at a time instead of through two temporaries of its size.
"""

import numpy as np
import pytest

from kernlearn import widths
from kernlearn.families import nystrom
from kernlearn.families.nystrom import kernel_block
from kernlearn.kernels import rbf_kernel


def _rows():
    rng = np.random.default_rng(7)
    return [rng.normal(size=(1, 4)), rng.normal(size=(2, 3)), rng.normal(size=(13, 6)),
            rng.normal(size=(192, 8)) * 3, np.asfortranarray(rng.normal(size=(40, 5))),
            rng.integers(0, 3, (50, 3)).astype(float)]


@pytest.mark.parametrize("k", range(len(_rows())))
@pytest.mark.parametrize("gamma", [0.01, 0.2, 2.0])
def test_rows_against_themselves_are_rbf_kernel_bit_for_bit(k, gamma):
    A = _rows()[k]
    K = kernel_block(A, A, "rbf", {"gamma": gamma})
    np.testing.assert_array_equal(K, rbf_kernel(A, A, gamma))
    np.testing.assert_array_equal(np.diagonal(K), 1.0)  # (scikit-learn's zero distances)


def test_rows_against_themselves_skip_the_checks_unless_shifted(monkeypatch):
    A = np.random.default_rng(0).normal(size=(30, 4))
    calls = []
    real = nystrom.pairwise_kernel

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(nystrom, "pairwise_kernel", counted)
    kernel_block(A, A, "rbf", {"gamma": 0.5})
    assert calls == []
    # rows far from zero: rbf_kernel shifts them first, so they take its path
    far = A + 1e9
    np.testing.assert_array_equal(kernel_block(far, far, "rbf", {"gamma": 0.5}),
                                  rbf_kernel(far, far, 0.5))
    assert calls == [1]


@pytest.mark.parametrize("k", [1, 2, 7, 16, 17, 511, 513])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pair_distances_equal_the_outer_sum_less_the_product(k, dtype):
    rng = np.random.default_rng(k)
    S = (rng.normal(size=(k, 5)) * 10).astype(dtype)
    sq = np.einsum("ij,ij->i", S, S)
    inner = S @ S.T
    inner *= 2.0
    expected = np.add.outer(sq, sq) - inner
    D = widths._pair_distances(sq, inner.copy())
    assert D.dtype == expected.dtype
    np.testing.assert_array_equal(D, expected)
    # a float32 product beside float64 norms is upcast as the subtraction did
    D = widths._pair_distances(sq.astype(np.float64), inner.astype(np.float32))
    np.testing.assert_array_equal(D, np.add.outer(sq.astype(np.float64), sq.astype(np.float64))
                                  - inner.astype(np.float32))



# -- benchmarks/slkl_regressor_cost.py: its A/B table and its refusals

@pytest.fixture
def script():
    from bench_scripts import load_script

    yield from load_script("slkl_regressor_cost")


def test_ab_table_takes_medians_over_rounds_and_pairs_the_trees(script, monkeypatch):
    # per round: old (ours, anchor) and new (ours, anchor) ms at one size
    runs = {"old": iter([(40.0, 10.0), (50.0, 10.0), (44.0, 11.0)]),
            "new": iter([(20.0, 10.0), (35.0, 10.0), (22.0, 11.0)])}
    order = []

    def fake(src, sizes_text, fits):
        order.append(src)
        return {"400x8": next(runs[src])}

    monkeypatch.setattr(script, "run_tree", fake)
    rows = script.paired(["old", "new"], "400x8", 3, 5)
    assert order == ["old", "new", "new", "old", "old", "new"]  # (turns alternate)
    old, new = rows
    assert old[:6] == ["400x8", "old", 44.0, 10.0, 4.0, "no"]
    assert new[:6] == ["400x8", "new", 22.0, 10.0, 2.0, "yes"]
    assert old[6] == "" and new[6] == 0.5  # medians of 0.5, 0.7, 0.5 per round


def test_in_process_fits_and_refusals(script, capsys):
    assert script.main(["--sizes", "40x3", "--fits", "1"]) == 0
    assert "| 40x3 |" in capsys.readouterr().out
    with pytest.raises(SystemExit) as err:
        script.main(["--ab", "no/such/src", "also/not"])
    assert err.value.code == 2
    assert "no kernlearn package" in capsys.readouterr().err
