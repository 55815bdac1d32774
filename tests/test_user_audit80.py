"""Audit 80: a review of the audit-76 and low-rank merges.

Each test pins a defect found in the merges of the randomised-invariants audit
(zero-weight standardisation and cadence, the overflow refusal at predict,
empty CSR row hashes) and of the width rule's bounded spread ratio; each
failed before its fix.
"""

import numpy as np

from kernlearn.widths import pairwise_spread_ratio


def test_spread_ratio_at_most_decides_as_the_exact_ratio_on_subnormal_distances():
    # squared distances near 1e-322 are subnormal: ``mean / at_most`` rounds to a
    # multiple of 5e-324 there, far past the count's 1e-6 margin, so a ratio of
    # 3.05 (above the low-rank width rule's 3) was reported as "at most 3"
    X = np.array([1, 2, 4, 1, 4, 2, 1, 2, 4, 2], dtype=float)[:, None] * 1e-161
    exact = pairwise_spread_ratio(X)
    assert exact > 3.0
    assert pairwise_spread_ratio(X, at_most=3.0) == exact
