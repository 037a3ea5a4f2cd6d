"""bfloat16 stored as uint16 bits: the storage the CUDA kernels use for bfloat16.

NumPy and CuPy have no bfloat16 dtype. A bfloat16 number is the upper half of a float32
(1 sign bit, 8 exponent bits, 7 mantissa bits), so an array of its bit patterns fits a
``uint16`` array exactly, and the kernels read it as ``__nv_bfloat16``. These two
conversions work on NumPy and CuPy arrays alike (``xp``); they are how tests and benchmarks
make bfloat16 input and read bfloat16 output.

Example:
    >>> bits = to_bfloat16(np.array([1.0, 3.14159], np.float32))   # uint16
    >>> from_bfloat16(bits)
    array([1.     , 3.140625], dtype=float32)
"""

import numpy as np

from ..backend import array_module


def to_bfloat16(array):
    """float32 (or anything castable to it) -> uint16 bfloat16 bits, rounding to nearest,
    ties to even (what ``__float2bfloat16_rn`` and ``torch.bfloat16`` do); NaN stays NaN."""
    xp = array_module(array)
    bits = xp.ascontiguousarray(array, dtype=np.float32).view(np.uint32)
    # Adding 0x7FFF plus the lowest kept bit, then truncating, rounds to nearest even.
    lowest_kept = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + lowest_kept) >> 16).astype(np.uint16)
    is_nan = (bits & 0x7FFFFFFF) > 0x7F800000
    quiet_nan = ((bits >> 16) | 0x0040).astype(np.uint16)   # keep the sign, force a quiet NaN
    return xp.where(is_nan, quiet_nan, rounded)


def from_bfloat16(bits):
    """uint16 bfloat16 bits -> float32 (exact: every bfloat16 is a float32)."""
    if bits.dtype != np.uint16:
        raise TypeError(f"from_bfloat16: bits must be uint16, got dtype {bits.dtype}")
    return (bits.astype(np.uint32) << 16).view(np.float32)
