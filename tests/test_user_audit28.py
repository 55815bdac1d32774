"""A twenty-eighth user's audit: the kernel estimators' less-travelled options.

A user went through the options of ``PNormMKLClassifier`` (OBSCURE) and of
``LowRankKernelClassifier`` / ``LowRankKernelRegressor`` (SLKL) that the
default fits never touch, and through their combinations.  Most of it held:
``p`` -> 1 gives sparser kernel weights and ``p = 2`` equal ones,
``normalize`` puts the kernels on one scale, ``online_only`` stops after
stage 1, ``max_iter_online`` stops after an epoch without updates,
``class_weight`` equals the same ``sample_weight`` in every multiclass mode,
``precompute=False`` gives the ``precompute=True`` model, probabilities sum
to one and agree with ``predict``, and capped fits warn.  Each test here
failed before its fix.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris

from kernlearn import PNormMKLClassifier


# ------------------------------------------------ OBSCURE: a stage-1 model with no stage 1
@pytest.mark.parametrize("kw", [{"pegasos": True}, {"max_iter_online": 0}],
                         ids=["pegasos", "no-online-epoch"])
def test_online_only_without_a_stage_one_epoch_is_refused(kw):
    # online_only=True returns stage 1's solution; pegasos=True has no stage
    # 1 and max_iter_online=0 runs none: the fit returned the all-zero
    # model (0 epochs, uniform kernel weights, every prediction one class:
    # training accuracy 0.33 on iris) without a word
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="online_only=True .* all zeros"):
        PNormMKLClassifier(online_only=True, random_state=0, **kw).fit(X, y)
    # each option alone still fits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = PNormMKLClassifier(random_state=0, **kw).fit(X, y)
    assert alone.score(X, y) > 0.9
