"""Audit 99: a review of the model-file loose ends (0.1.0 files, one
finiteness rule, index bounds, the real-size count over the size cap).

Each test here failed on the code it names before its fix.
"""

import io
import zipfile

import numpy as np
import pytest

from kernlearn.io import load_model
from kernlearn.utils import _npy_header


def _zero_member_file(path, method, nbytes):
    """A model-like archive whose ``big.npy`` member truly holds ``nbytes``
    bytes of zeros, compressed by ``method``."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (nbytes // 8,)})
    meta = io.BytesIO()
    np.save(meta, np.frombuffer(b'{"format": "x"}', np.uint8))
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("__meta__.npy", meta.getvalue())
        info = zipfile.ZipInfo("big.npy")
        info.compress_type = method
        with zf.open(info, "w") as fh:
            fh.write(header.getvalue())
            for _ in range(nbytes // 2**20):
                fh.write(bytes(2**20))
    return path


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_bzip2_or_lzma_member_is_refused_before_it_is_inflated(method, tmp_path,
                                                                 monkeypatch):
    # A bzip2 member packs 1 GB of zeros into ~1 kB: over the size cap the
    # merge counted its real size (it is honest), then read it (a 1.2 kB file:
    # 19 s CPU, 3.1 GB of memory); zipfile inflates such a member's read
    # whole, so even opening it for its header held it all.  Model files hold
    # stored or deflated members only (NumPy writes no other).  The cap is
    # lowered here so the file is small.
    monkeypatch.setattr(_npy_header, "_MIN_CAP", 2**20)
    path = _zero_member_file(tmp_path / "bomb.npz", method, 16 * 2**20)
    assert path.stat().st_size < 2**16  # (far below the cap's 100x)
    inflated = []
    real = getattr(_npy_header, "_inflated_size", None)
    monkeypatch.setattr(_npy_header, "_inflated_size",
                        lambda zf, info, **kw: inflated.append(info) or real(zf, info, **kw),
                        raising=False)
    with pytest.raises(ValueError, match=f"'big.npy' is compressed by method {method}, "
                                         "not stored or deflated"):
        load_model(path)
    assert inflated == []
