"""Defects left open by earlier passes (session 25).

- a size-like parameter whose memory need exceeds what can fit (GrFL's
  ``n_candidates``; the additive expansion's ``n_bins``) is refused up front,
  named with the memory it would need, where NumPy's bare ``MemoryError``
  (or gigabytes and minutes of work) came first; one line in the CLI;
- the binary multitask classifier with a third label weighed out fits
  ``probability=True`` as it fits without it (it refused "class 2 has none");
- a Dask ``y`` with a class weighed out is checked as an in-memory one.
"""

import time
import warnings

import numpy as np
import pytest

import kernlearn as kl
from conftest import one_error, run_cli

_rng = np.random.default_rng(25)
X4 = _rng.standard_normal((50, 4))
YB = (X4[:, 0] > 0).astype(int)


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# -- sizes that cannot fit --------------------------------------------------------------
@pytest.mark.parametrize("make", [kl.InfiniteFeatureClassifier, kl.InfiniteFeatureRegressor])
def test_a_pricing_sample_larger_than_memory_is_refused_by_name(make):
    # 10**12 candidates of 5 numbers: 48 TB, more than any machine's memory;
    # NumPy stopped on "Unable to allocate ... for an array with shape
    # (1000000000000, 5)", naming no parameter
    t0 = time.process_time()
    with pytest.raises(ValueError, match=r"n_candidates=1000000000000 would need .* TiB"
                                         r".*physical memory; lower n_candidates"):
        make(n_candidates=10**12).fit(X4, YB)
    assert time.process_time() - t0 < 1.0  # (refused before any work)


def test_a_pricing_sample_that_fits_is_not_refused():
    est = _quiet(lambda: kl.InfiniteFeatureClassifier(
        n_candidates=1000, max_features=2, random_state=0).fit(X4, YB))
    assert est.score(X4, YB) > 0.5


def test_the_cli_refuses_a_huge_n_candidates_in_one_line(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("y,a,b\n" + "".join(f"{int(r[0] > 0)},{r[0]:.6f},{r[1]:.6f}\n"
                                        for r in X4))
    code, out, err = run_cli(["fit", data, "-e", "infinite-classifier", "--label", "y",
                              "-p", f"n_candidates={10**12}", "-m", tmp_path / "m.npz",
                              "-q"], capsys)
    assert code != 0 and one_error(err), err
    assert "n_candidates=1000000000000" in err and "memory" in err
    assert not (tmp_path / "m.npz").exists()


# -- the binary multitask classifier, a third label weighed out ---------------------------
_X3 = _rng.standard_normal((60, 3))
_Y3 = np.repeat([0, 1, 2], 20)
_X3[:, 0] += _Y3
_T3 = np.arange(60) % 2


@pytest.mark.parametrize("how", ["sample_weight", "class_weight", "class_weight_alone"])
def test_multitask_probabilities_with_a_third_label_weighed_out(how):
    # probability=False fitted the binary model of labels 0 and 1; True
    # refused "class 2 has none": both now fit, the probabilities those of
    # the fit without the third label's rows
    keep = _Y3 != 2
    ref = kl.MultitaskMKLClassifier(probability=True).fit(
        _X3[keep], _Y3[keep], task_index=_T3[keep])
    kw, fit_kw = {
        "sample_weight": ({}, {"sample_weight": np.where(keep, 1.0, 0.0)}),
        "class_weight": ({"class_weight": {0: 1, 1: 1, 2: 0}}, {}),
        "class_weight_alone": ({"class_weight": {2: 0}}, {}),
    }[how]
    est = kl.MultitaskMKLClassifier(probability=True, **kw).fit(
        _X3, _Y3, task_index=_T3, **fit_kw)
    assert list(est.classes_) == [0, 1]
    P = est.predict_proba(_X3, task_index=_T3)
    assert np.allclose(P, ref.predict_proba(_X3, task_index=_T3), atol=1e-12)
    assert np.array_equal(est.predict(_X3, task_index=_T3),
                          ref.predict(_X3, task_index=_T3))
