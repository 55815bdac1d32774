"""Every registered penalty at its defaults (``alpha`` set to 0.7)."""

import pytest

from kernlearn.penalties import PENALTIES


# Beyond the defaults: the exponents whose proxes take other code paths.
EXTRA = {"l1_lq(q=1.5)": ("l1_lq", {"q": 1.5}), "l1_lq(q=3)": ("l1_lq", {"q": 3.0}),
         "l1_lq(q=inf)": ("l1_lq", {"q": float("inf")}), "l1_lq(q=1)": ("l1_lq", {"q": 1.0}),
         "squared_group_norm_2p(p=1.2)": ("squared_group_norm_2p", {"p": 1.2})}


@pytest.fixture(params=PENALTIES.names() + sorted(EXTRA))
def penalty(request):
    """Each registered penalty (and a few other exponents), ``alpha=0.7``."""
    name, kwargs = EXTRA.get(request.param, (request.param, {}))
    return PENALTIES.resolve(name, **kwargs).set_params(alpha=0.7)
