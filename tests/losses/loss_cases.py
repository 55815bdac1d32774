"""Margins and targets suited to each loss (shared by the loss tests)."""


def sample(loss, rng, n=40):
    """Margins and targets suited to ``loss`` (``n`` rows)."""
    if getattr(loss, "n_outputs", None) == "n_classes":
        return rng.standard_normal((n, 4)) * 1.5, rng.integers(0, 4, n)
    if loss.is_classification:
        return rng.standard_normal(n) * 2, rng.choice([-1.0, 1.0], n)
    return rng.standard_normal(n) * 2, rng.standard_normal(n)
