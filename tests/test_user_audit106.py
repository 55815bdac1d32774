"""Audit 106 (issue 21): the bounded bzip2/LZMA reader of ``.npz`` data files
against real zip layouts, and older model files' parameters.

The tests of a fix failed on the code before it; those named "still" or
"only" guard what the fixes must keep (each fails when that is broken).
"""

import io
import struct
import warnings
import zipfile

import numpy as np
import pytest

from kernlearn.datafiles import load_data_file
from test_bombs34 import _as_old_file  # (same folder: a model file as older code wrote it)

METHODS = [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


def _npz(path, method, X, y):
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        for name, a in (("X", X), ("y", y)):
            buf = io.BytesIO()
            np.save(buf, a)
            zf.writestr(f"{name}.npy", buf.getvalue())
    return path


def _patched(path, at_central, fmt, change):
    """``path`` with the field at ``at_central`` bytes into X.npy's central
    directory entry (format ``fmt``) replaced by ``change(old)``."""
    data = bytearray(path.read_bytes())
    i = data.find(b"PK\x01\x02") + at_central
    struct.pack_into(fmt, data, i, change(struct.unpack_from(fmt, data, i)[0]))
    path.write_bytes(bytes(data))
    return path


def _np_load(path):
    with np.load(path, allow_pickle=False) as d:
        return d["X"]


@pytest.mark.parametrize("method", METHODS)
def test_a_stream_ending_with_its_member_without_an_end_marker_reads(method, tmp_path):
    # 7-Zip writes zip LZMA without the end-of-stream marker (flag bit 1
    # clear): the stream ends with the member's bytes.  zipfile and NumPy read
    # it (size and CRC checked); the bounded reader refused it as "compressed
    # data ends early".  Dropping the last bytes of a Python-written stream
    # (its end marker, the data all decodable before it) is such a stream.
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((3000, 4)).round(2), np.arange(3000.0)
    path = _patched(_npz(tmp_path / "d.npz", method, X, y), 20, "<I", lambda n: n - 5)
    assert np.array_equal(_np_load(path), X)  # (NumPy reads it)
    X2, y2, _ = load_data_file(path)
    assert np.array_equal(X2, X) and np.array_equal(y2, y)


@pytest.mark.parametrize("method", METHODS)
def test_a_stream_short_of_its_declared_size_is_still_refused(method, tmp_path):
    # (the other side of the above: half the stream lacks data, not a marker)
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((3000, 4)).round(2), np.arange(3000.0)
    path = _patched(_npz(tmp_path / "d.npz", method, X, y), 20, "<I", lambda n: n // 2)
    with pytest.raises(ValueError, match="not a readable NumPy file.*ends early"):
        load_data_file(path)


@pytest.mark.parametrize("method", METHODS)
def test_a_local_header_naming_another_member_is_refused_as_numpy_does(method, tmp_path):
    # The raw-bytes reader skipped the local header without zipfile's checks:
    # a member whose local header names another file than its directory entry
    # read, where NumPy refuses ("File name in directory ... differ").
    X, y = np.arange(12.0).reshape(4, 3), np.arange(4.0)
    path = _npz(tmp_path / "d.npz", method, X, y)
    data = bytearray(path.read_bytes())
    data[30] = ord("Z")  # (the first local header's name: X.npy -> Z.npy)
    path.write_bytes(bytes(data))
    with pytest.raises(zipfile.BadZipFile, match="differ"):
        _np_load(path)
    with pytest.raises(ValueError, match="not a readable NumPy file.*differ"):
        load_data_file(path)


def _model_file(path, version, absent, **params):
    """A sealed model file labelled ``version`` whose parameters lack ``absent``,
    and the estimator, its features and its predictions."""
    from kernlearn import LowRankKernelRegressor

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (convergence on these 40 rows)
        est = LowRankKernelRegressor(n_columns=10, random_state=0, **params).fit(X, X[:, 0])
    return _as_old_file(est, path, absent, version), est, X


def test_a_0_1_0_file_takes_the_old_meaning_only_of_what_it_lacks(tmp_path):
    from kernlearn.io import load_model

    # (standardize absent: the old code's False; gamma_factors held: kept.  A
    # file of the old code, fitted unstandardised: x_scale_ None.  The file
    # of a standardised fit this test first used is refused since audit 108,
    # and its assertion on gamma_factors held for any value but (1.0,))
    path, est, X = _model_file(tmp_path / "m.npz", "0.1.0", ["standardize"],
                               standardize=False)
    loaded = load_model(path)
    assert loaded.get_params() == est.get_params()
    params = loaded.get_params()
    assert params["standardize"] is False and params["gamma_factors"] == "auto"
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
