"""torch's 8-bit floating dtypes, ml_dtypes' types (optional: without it each name is its
string, which ``dtypes.as_dtype`` refuses naming the package): e4m3fn (max 448, no inf),
e5m2 (IEEE-like, inf), the "fnuz" pair (one NaN, no -0, no inf) and e8m0fnu (powers of two,
a scale's dtype); and torch's CPU conversions into and out of them, where ml_dtypes' differ.
``dtypes`` re-exports the names and holds the checks that read torch's dtype names."""

import numpy as np

try:
    import ml_dtypes
except ImportError:                       # optional: bfloat16 and these need it
    ml_dtypes = None

__all__ = ["FLOAT8", "FLOAT8_DTYPES", "FLOAT8_NAMES", "FLOAT8_TORCH_NAMES", "Float8Error",
           "Float8PromotionError", "float8_converted", "is_float8"]

FLOAT8_NAMES = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                "float8_e8m0fnu")
FLOAT8 = {name: name if ml_dtypes is None else np.dtype(getattr(ml_dtypes, name))
          for name in FLOAT8_NAMES}
float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu = \
    FLOAT8.values()
FLOAT8_DTYPES = frozenset(() if ml_dtypes is None else FLOAT8.values())
# the float8 dtypes whose NaN torch converts to the integer 0 (the others: C's INT_MIN)
_FLOAT8_NAN_TO_ZERO = frozenset(() if ml_dtypes is None else
                                (float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu))

# torch's names of the float8 dtypes in its messages ("Float8_e4m3fn"); no legacy type
FLOAT8_TORCH_NAMES = {dtype: "F" + str(dtype)[1:] for dtype in FLOAT8_DTYPES}


def is_float8(dtype):
    """One of torch's five 8-bit floating dtypes (``FLOAT8_NAMES``)."""
    return dtype in FLOAT8_DTYPES


class Float8Error(NotImplementedError):
    """An op torch has no CPU kernel for on a float8 tensor (``add``, ``sum``, ``lt``, ...):
    its NotImplementedError (a RuntimeError too)."""


class Float8PromotionError(RuntimeError, TypeError):
    """A float8 dtype beside any other dtype: torch refuses to promote them (a RuntimeError);
    a TypeError too."""


def float8_converted(array, dtype):
    """``array`` converted to or from a float8 ``dtype`` as torch's CPU casts do, where
    ml_dtypes' ``astype`` differs:

    * into float8 every source goes through float32 (c10's Float8 types are built from a
      float, so a float64 rounds twice, as torch's);
    * e4m3fn saturates: a finite value past 448 and ±inf become ±448 (ml_dtypes: NaN);
    * e5m2's NaN is 0x7f with the sign (ml_dtypes: 0x7e);
    * e8m0fnu reads |x| (the sign is dropped) and 0 becomes 2**-127, its byte 0 (ml_dtypes:
      NaN);
    * out of float8 the value goes through float32 (exact), then as float32 converts, so
      e4m3fn's and e5m2's NaN and inf become integers as C's cast (INT_MIN), except into
      uint32, which goes through int64 (NaN: 0, the low half of INT64_MIN), as torch's;
      the NaN of the "fnuz" pair and e8m0fnu becomes 0 in every integer dtype (measured
      on torch 2.13's CPU).
    """
    if array.dtype in FLOAT8_DTYPES and dtype not in FLOAT8_DTYPES:
        wide = array.astype(np.float32)
        if dtype.kind not in "iu":
            return wide.astype(dtype)
        if array.dtype in _FLOAT8_NAN_TO_ZERO:
            wide[np.isnan(wide)] = 0.0
        with np.errstate(invalid="ignore"):
            if dtype == np.uint32:
                return wide.astype(np.int64).astype(dtype)
            return wide.astype(dtype)
    if array.dtype.kind == "c":
        array = array.real
    with np.errstate(over="ignore", invalid="ignore"):
        wide = array.astype(np.float32)
    if dtype == FLOAT8["float8_e4m3fn"]:
        wide = np.clip(wide, -448.0, 448.0)                 # NaN stays NaN
    elif dtype == FLOAT8["float8_e8m0fnu"]:
        bits = np.abs(wide).astype(dtype)
        bits.view(np.uint8)[np.abs(wide) == 0] = 0          # 2**-127
        return bits
    with np.errstate(over="ignore", invalid="ignore"):
        out = wide.astype(dtype)
    if dtype == FLOAT8["float8_e5m2"]:
        nan = np.isnan(wide)
        out.view(np.uint8)[nan] = 0x7F | (np.signbit(wide[nan]).astype(np.uint8) << 7)
    return out
