"""FGM pricing map-reduced over a real Dask LocalCluster."""

import numpy as np
import pytest
import scipy.sparse as sp

distributed = pytest.importorskip("distributed")

from kernlearn import FGMClassifier  # noqa: E402
from kernlearn.datasets import make_fgm_synthetic  # noqa: E402
from kernlearn.distributed import DaskFeaturePool  # noqa: E402
from kernlearn.families import FeaturePool  # noqa: E402


@pytest.mark.parametrize("sparse", [False, True])
def test_distributed_scores_equal_local(client, rng, sparse):
    X = rng.standard_normal((103, 40))
    if sparse:
        X[np.abs(X) < 1] = 0
        X = sp.csr_matrix(X)
    u = rng.standard_normal(103)
    local = FeaturePool().fit(X)
    dist = DaskFeaturePool(n_partitions=3).fit(X)
    np.testing.assert_allclose(dist.scale_, local.scale_)
    np.testing.assert_allclose(dist.feature_scores(u), local.feature_scores(u, X))
    np.testing.assert_array_equal(dist.price(-u, 5).params, local.price(-u, 5, X=X).params)


def test_fgm_with_dask_pool_matches_in_memory(client):
    X, y, _ = make_fgm_synthetic(300, 200, 10, random_state=0)
    ref = FGMClassifier(B=5, max_outer_iter=4).fit(X, y)
    dist = FGMClassifier(B=5, max_outer_iter=4, family=DaskFeaturePool(n_partitions=4)).fit(X, y)
    np.testing.assert_array_equal(dist.selected_features_, ref.selected_features_)
    np.testing.assert_allclose(dist.decision_function(X), ref.decision_function(X), atol=1e-8)


def test_needs_a_client(monkeypatch):
    def no_client():
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "get_client", no_client)
    with pytest.raises(RuntimeError, match="needs a running Dask client"):
        DaskFeaturePool().fit(np.ones((4, 2)))
    with pytest.raises(ValueError, match="n_partitions"):
        DaskFeaturePool(n_partitions=0).fit(np.ones((4, 2)))


def test_scheduler_address_opens_one_connection(client, monkeypatch):
    # Defect: a new Client was opened on every pricing call.
    opened = []
    real = distributed.Client

    def counting_client(*args, **kwargs):
        opened.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(distributed, "Client", counting_client)
    X, y, _ = make_fgm_synthetic(200, 60, 5, random_state=0)
    pool = DaskFeaturePool(n_partitions=2, scheduler_address=client.scheduler.address)
    clf = FGMClassifier(B=3, max_outer_iter=4, tol=None, family=pool).fit(X, y)
    assert clf.n_iter_ >= 2
    assert len(opened) == 1
