"""The memory tests' one measurement: a script's peak traced memory in a fresh process.

The scripts fit on a sparse text-like ``X`` and print, last, the peak traced by
``tracemalloc`` and the size ``X`` would have dense (both in MB); a fresh process
keeps the numbers free of the test session's caches.
"""

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def peak_and_dense_mb(script):
    """Run ``script`` in a new interpreter; return its last two printed numbers.

    Parameters
    ----------
    script : str
        Python source ending by printing the peak and the dense size, in MB.

    Returns
    -------
    peak_mb, dense_mb : float
    """
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(SRC),
                                          "OMP_NUM_THREADS": "1"})
    peak_mb, dense_mb = map(float, out.stdout.split()[-2:])
    return peak_mb, dense_mb
