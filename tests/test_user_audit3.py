"""A third user's audit: the Python API on a data scientist's own data."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")


def test_kernel_weight_labels_from_an_array_and_of_the_wrong_count(tmp_path):
    from kernlearn.plotting import plot_kernel_weights

    out = tmp_path / "w.png"
    # labels held in an array (a fitted estimator's names) are plotted
    plot_kernel_weights([0.2, 0.3, 0.5], out, names=np.array(["a", "b", "c"]))
    assert out.stat().st_size > 0
    # one label short: refused naming the argument, nothing written
    with pytest.raises(ValueError, match="names has 2 labels for 3 weights"):
        plot_kernel_weights([0.2, 0.3, 0.5], tmp_path / "x.png", names=["a", "b"])
    assert not (tmp_path / "x.png").exists()
