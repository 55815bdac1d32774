"""NumPy's normal numbers of PCG64 generators, drawn in one compiled call, the same numbers.

:func:`~kernlearn.families.fourier.scaled_normals` draws the wide directions of
random Fourier features (a pricing step's candidates, the completed features of a
sparse span: 100,000 numbers a row on 200 x 100,000 text) with numba's port of
NumPy's ziggurat (``Generator.standard_normal``), which reads each raw number
through the bit generator's function pointer: 4.3-7.7 ns a number on this machine
(under load), and about 45 us to unbox a generator per call, once per completed
feature (900 a default regressor's fit there).  Here the generator is NumPy's
default one, PCG64 (the 128-bit linear congruential step and its XSL-RR output,
``numpy/random/src/pcg64``), stepped inline in the loop, and NumPy's
``random_standard_normal`` follows as numba ports it (the same tables, branches
and order of raw numbers): 3.6-5.9 ns a number, and one call for all the rows of
a completion, one generator each.  The numbers are NumPy's bit for bit and each
generator is left in NumPy's state (``tests/test_grfl_wide_regression_speed.py``).
Other bit generators, and ``NUMBA_DISABLE_JIT``, keep the former route.
"""

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic
from numba.np.random._constants import (
    fi_double,
    ki_double,
    wi_double,
    ziggurat_nor_inv_r,
    ziggurat_nor_r,
)

from ..utils._numba_cache import njit_cached

__all__ = ["pcg64_scaled_normals"]

# PCG64's multiplier (PCG_DEFAULT_MULTIPLIER_128), in 64-bit halves
_MULT_HI = np.uint64(2549297995355413924)
_MULT_LO = np.uint64(4865540595714422341)
_MASK64 = (1 << 64) - 1
# 2**-53: a raw number's top 53 bits as a double in [0, 1) (NumPy's next_double)
_TO_DOUBLE = 1.0 / 9007199254740992.0


@intrinsic
def _umulh(typingctx, a, b):
    """The high 64 bits of the 128-bit product of two uint64 (one instruction)."""
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(p, ir.Constant(wide, 64)), ir.IntType(64))

    return sig, codegen


@njit_cached
def _step(sh, sl, ih, il):
    """PCG64's state after ``(sh, sl)``: ``state * multiplier + inc`` mod 2**128."""
    lo = sl * _MULT_LO
    hi = _umulh(sl, _MULT_LO) + sl * _MULT_HI + sh * _MULT_LO
    nlo = lo + il
    return hi + ih + (np.uint64(1) if nlo < lo else np.uint64(0)), nlo


@njit_cached
def _output(sh, sl):
    """PCG64's raw number of the state ``(sh, sl)`` (XSL-RR: high ^ low, rotated)."""
    x = sh ^ sl
    rot = sh >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@njit_cached
def _draw(states, out, sigma):
    """``out[i, j] = standard_normal() / sigma[i]``, rows in order, from the PCG64 state
    ``states[i]`` (``(state high, low, inc high, low)``; one row of ``states``: every
    row from it); each state advanced in place as NumPy's would be."""
    k, m = out.shape
    one = states.shape[0] == 1
    sh, sl, ih, il = states[0, 0], states[0, 1], states[0, 2], states[0, 3]
    for i in range(k):
        if not one:
            sh, sl, ih, il = states[i, 0], states[i, 1], states[i, 2], states[i, 3]
        s = sigma[i]
        for j in range(m):
            # numba's random_standard_normal (NumPy's ziggurat), its raw numbers inline
            while True:
                sh, sl = _step(sh, sl, ih, il)
                r = _output(sh, sl)
                idx = r & np.uint64(0xff)
                r >>= np.uint64(8)
                rabs = (r >> np.uint64(1)) & np.uint64(0x000fffffffffffff)
                # (-x when the sign bit is set: times -1.0, exact, without a branch
                # the processor cannot predict)
                x = (rabs * wi_double[idx]) * (1.0 - 2.0 * np.float64(r & np.uint64(1)))
                if rabs < ki_double[idx]:
                    break
                if idx == 0:  # the tail
                    while True:
                        sh, sl = _step(sh, sl, ih, il)
                        xx = -ziggurat_nor_inv_r * np.log1p(
                            -((_output(sh, sl) >> np.uint64(11)) * _TO_DOUBLE))
                        sh, sl = _step(sh, sl, ih, il)
                        yy = -np.log1p(-((_output(sh, sl) >> np.uint64(11)) * _TO_DOUBLE))
                        if yy + yy > xx * xx:
                            x = (-(ziggurat_nor_r + xx) if (rabs >> np.uint64(8)) & np.uint64(1)
                                 else ziggurat_nor_r + xx)
                            break
                    break
                sh, sl = _step(sh, sl, ih, il)  # a wedge
                u = (_output(sh, sl) >> np.uint64(11)) * _TO_DOUBLE
                if (fi_double[idx - 1] - fi_double[idx]) * u + fi_double[idx] < np.exp(
                        -0.5 * x * x):
                    break
            out[i, j] = x / s
        if not one:
            states[i, 0], states[i, 1] = sh, sl
    if one:
        states[0, 0], states[0, 1] = sh, sl


def pcg64_scaled_normals(generators, out, sigma):
    """``out[i] = generators[i].standard_normal(m) / sigma[i]`` (one generator: every
    row from it, in order), in one compiled call, if every generator is a
    ``numpy.random.Generator`` of ``PCG64``; each left in NumPy's state afterwards.

    Parameters
    ----------
    generators : list of numpy.random.Generator
        One, or one per row of ``out``.
    out : ndarray of shape (k, m)
        Written in place (rows may be strided, as ``params[:, :-1]``).
    sigma : ndarray of shape (k,)
        Each row's divisor.

    Returns
    -------
    done : bool
        ``False`` (nothing drawn) for another bit generator, a generator listed
        twice, or without compiled code.
    """
    if numba.config.DISABLE_JIT or not all(
            type(g) is np.random.Generator and type(g.bit_generator) is np.random.PCG64
            for g in generators):
        return False
    if len({id(g) for g in generators}) < len(generators):
        # one generator on several rows draws them one after another; the
        # states read up front would give those rows the same numbers
        return False
    dicts = [g.bit_generator.state for g in generators]
    states = np.array([(d["state"]["state"] >> 64, d["state"]["state"] & _MASK64,
                        d["state"]["inc"] >> 64, d["state"]["inc"] & _MASK64)
                       for d in dicts], dtype=np.uint64)
    _draw(states, out, np.ascontiguousarray(sigma, dtype=float))
    for g, d, (hi, lo, _, _) in zip(generators, dicts, states.tolist()):
        d["state"]["state"] = (hi << 64) | lo
        g.bit_generator.state = d
    return True
