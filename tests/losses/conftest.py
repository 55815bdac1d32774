"""Every registered loss, plain and with sample weights and ``C`` folded in."""

import numpy as np
import pytest

from kernlearn.losses import LOSSES, weighted


def _make(name, kind):
    loss = LOSSES.resolve(name)
    if kind == "weighted":
        w = np.random.default_rng(7).uniform(0.2, 3.0, 40)
        loss = weighted(loss, w, C=1.7)
    return loss


@pytest.fixture(params=[(n, k) for n in LOSSES.names() for k in ("plain", "weighted")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def loss(request):
    """Each registered loss as is, and as ``1.7 * w_i * loss`` (40 rows)."""
    return _make(*request.param)
