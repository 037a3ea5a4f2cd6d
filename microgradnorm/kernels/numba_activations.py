"""The numba kernels of the activations' rows: softmax / log_softmax and logsumexp over
rows, forward and backward, and cross-entropy's backward, same names and signatures as
``kernels.reference``'s, compiled for float32 and float64 NumPy arrays; ``numba_cpu``
re-exports them, and GELU's (``numba_gelu``, which uses this module's exp). Everything else
(half precision, mixed dtypes, another axis than the last, 0-d and empty arrays) is the
reference's, exactly. The rows' kernels and cross-entropy's backward take a C-contiguous x
only (a strided one goes to the reference), and copy a gradient that is a view (a sum's
broadcast ones).

The loops vectorize: no libm call per element. exp is ``_exp64`` / ``_exp32`` below (range
reduction, a polynomial and 2^k built from its bits, in the data's dtype), which GELU's and
attention's kernels inline too. Sums accumulate in float64; NaN and inf propagate as in the
reference. Each kernel compiles on its first call and is cached on disk.
"""

import math

import numba
import numpy as np
from numba.extending import intrinsic, overload

from . import reference
from .numba_jit import DTYPES, EXACT_OPTIONS, OPTIONS, _jit, dense

__all__ = ["cross_entropy_backward", "log_softmax_backward", "log_softmax_forward", "logsumexp",
           "softmax_backward", "softmax_forward"]


def _horner(coefficients):
    """A compiled t -> c0·tⁿ + … + cn with the coefficients written into its code, so that
    LLVM sees straight-line arithmetic to vectorize (numba loops over a tuple instead).
    NumPy float32 coefficients keep a float32 t in float32 (written as ``np.float32(...)``
    whatever NumPy's repr, which is a bare number under NumPy 1 or legacy printing)."""
    def literal(c):
        return f"np.float32({float(c)!r})" if isinstance(c, np.float32) else repr(float(c))
    steps = "".join(f"    r = r * t + {literal(c)}\n" for c in coefficients[1:])
    namespace = {"np": np}
    exec(f"def horner(t):\n    r = {literal(coefficients[0])}\n{steps}    return r\n",
         namespace)
    return numba.njit(inline="always", **OPTIONS)(namespace["horner"])


# ----- exp, vectorizable --------------------------------------------------------------------
# exp(z) = 2^k·exp(r), k = round(z/ln 2), r = z - k·ln 2 with |r| <= ln2/2 and ln 2 in two
# parts (k·ln2_hi exact: fdlibm's split in float64, Cephes' in float32) so that r is exact
# to the dtype's rounding; exp(r) is its Taylor polynomial, and 2^k is applied as two
# factors 2^h and 2^(k-h), h = k >> 1, each the float whose exponent field is its power
# plus the bias, each normal over the clamped range: the one rounding is the last
# multiply's, so subnormal results come out right (no compare and select: 11% faster than
# scaling twice only where 2^k is not normal). These compile without "reassoc"
# (EXACT_OPTIONS) and LLVM inlines them into the loops, vectorized.
# Measured (4M float32 points of [-104, 89]): _exp32 within 0.92 ulp of the exact value,
# NumPy's float32 exp 2.4; _exp64 within 1 ulp of NumPy's float64 exp (tests/kernels/
# test_numba_rows.py). Timed at 262,144 elements of [-20, 20], one thread, process CPU time,
# on a Zen 3 core (AVX2): _exp32 0.15 ms, NumPy's float32 exp 0.34; _exp64 0.49, NumPy's
# 1.33. k goes to int32, not int64: AVX2 has no packed float -> int64 conversion, and
# with it _exp32 took 0.33 ms (each lane converted on its own).
_LOG2E = 1 / math.log(2)
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
_LN2_HI_F = np.float32(0.693359375)
_LN2_LO_F = np.float32(math.log(2) - 0.693359375)
# degree 13: the remainder r¹⁴/14! < 2^-57 relative at |r| = ln2/2; degree 7: < 2^-27
_exp_taylor13 = _horner([1 / math.factorial(n) for n in range(13, -1, -1)])
_exp_taylor7 = _horner([np.float32(1 / math.factorial(n)) for n in range(7, -1, -1)])


@intrinsic
def _float_from_bits(typingctx, bits):
    """The float whose IEEE-754 bits are the integer ``bits``, int64 -> float64 and
    int32 -> float32: a bit cast (it vectorizes, as a libm ldexp call would not)."""
    result = numba.types.float32 if bits.bitwidth == 32 else numba.types.float64

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(result))
    return result(bits), codegen


@numba.njit(**EXACT_OPTIONS)
def _exp64(z):
    """exp(z) for float64 z, within 1 ulp; 0, inf and NaN as libm's."""
    c = z if z > -746.0 else -746.0             # exp(-746) rounds to 0, exp(710) is inf;
    c = c if c < 710.0 else 710.0               # NaN is clamped too, and restored at the end
    k = np.floor(c * _LOG2E + 0.5)
    r = (c - k * _LN2_HI) - k * _LN2_LO         # |r| <= ln2/2
    n = np.int64(np.int32(k))                   # in [-1076, 1024] (float -> int32:
    h = n >> 1                                  # AVX2 converts 4 lanes at once, not to int64)
    e = _exp_taylor13(r) * _float_from_bits((h + 1023) << 52)
    return z if z != z else e * _float_from_bits((n - h + 1023) << 52)


@numba.njit(**EXACT_OPTIONS)
def _exp32(z):
    """exp(z) for float32 z, in float32 arithmetic (16 lanes of AVX-512 where float64 has
    8), within 1 ulp; 0, inf and NaN as libm's."""
    c = z if z > np.float32(-104.0) else np.float32(-104.0)      # exp(-104) rounds to 0,
    c = c if c < np.float32(89.0) else np.float32(89.0)          # exp(89) is inf
    k = np.floor(c * np.float32(_LOG2E) + np.float32(0.5))
    r = (c - k * _LN2_HI_F) - k * _LN2_LO_F
    n = np.int32(k)                             # in [-150, 128]; float -> int32, which
    h = n >> 1                                  # AVX2 converts 8 lanes at once (not int64)
    e = _exp_taylor7(r) * _float_from_bits(np.int32((h + 127) << 23))
    return z if z != z else e * _float_from_bits(np.int32((n - h + 127) << 23))


def _exp(z):
    """exp(z) in z's dtype: ``_exp32`` for float32, ``_exp64`` for float64, chosen when a
    loop is compiled (a run-time choice made LLVM compute both and select: 25% slower)."""
    return np.exp(z)                    # (run by the interpreter only; the loops get these:)


@overload(_exp)
def _exp_of_the_dtype(z):
    return (lambda z: _exp32(z)) if z == numba.types.float32 else (lambda z: _exp64(z))


def _float_arrays(*arrays):
    """True for NumPy arrays of one float32/float64 dtype and one shape."""
    return all(type(a) is np.ndarray and a.dtype in DTYPES and a.dtype == arrays[0].dtype
               and a.shape == arrays[0].shape for a in arrays)


# ----- softmax and log_softmax over rows ----------------------------------------------------
# x (M, N): the last axis of a C-contiguous array, its leading dims flattened. Per row, in
# cache: the max, then exp(x - m) summed (and written, for softmax), then the write of y.
# x - m is formed in x's dtype and each product and quotient rounded as the reference's are;
# only exp (within 1 ulp) and the sums (float64 here, NumPy's pairwise in x's dtype there)
# differ, by an ulp or so of the row's scale.
# The max is taken over the floats' bits as integers ordered as the floats are: LLVM
# vectorizes an integer max, not a float one that keeps NaN's semantics (the max pass at
# (1024, 256) float32: 0.03 ms so, 0.08 with 16 running float maxima, 0.16 with one; the
# whole softmax forward about 0.25).
_ORDER = {np.dtype(np.float32): (np.int32, 31, 2**31 - 1),     # integer view, sign bit,
          np.dtype(np.float64): (np.int64, 63, 2**63 - 1)}     # magnitude bits


@numba.njit(inline="always", **OPTIONS)
def _ordered(bits, sign, magnitude):
    """A float's bits -> an integer ordered as the floats are (-0 < +0; a NaN with the sign
    bit set below -inf, any other NaN above +inf), and back: it is its own inverse."""
    return bits ^ ((bits >> sign) & magnitude)


@numba.njit(inline="always", **OPTIONS)
def _row_shift(row, bits, sign, magnitude):
    """The max m of a row (``bits``, its integer view), or 0 for a row of -inf, in the row's
    dtype. A NaN row element makes m NaN, or (sign bit set) is passed over and makes the
    sum of exp(x - m) NaN: the row's result is NaN either way."""
    top = _ordered(bits[0], sign, magnitude)
    for j in range(1, bits.size):
        key = _ordered(bits[j], sign, magnitude)
        top = key if key > top else top
    m = _float_from_bits(bits.dtype.type(_ordered(top, sign, magnitude)))
    return row.dtype.type(0.0 if m == -np.inf else m)


@numba.njit(inline="always", **OPTIONS)
def _exp_sum(row, shift, out):
    """out = exp(row - shift), and Σ out accumulated in float64 (``out`` may be ``row``).
    float32 writes the exponentials in one loop and sums them in another: in one loop the
    float64 sum made LLVM vectorize the exp 4 lanes wide instead of 8 (softmax rows 20-28%
    slower; the same values at the shapes timed). float64 has one width, and one loop is faster."""
    total = 0.0
    if row.itemsize == 4:
        for j in range(row.size):
            out[j] = _exp(row[j] - shift)
        for j in range(row.size):
            total += out[j]
    else:
        for j in range(row.size):
            e = _exp(row[j] - shift)
            out[j] = e
            total += e
    return total


# Both forwards take the rows a block at a time, each pass over the block's rows before the
# next: the maxima, then the exponentials and their sums, then the write of y. Row by row,
# each pass waited on the previous one's horizontal reduction (max, sum) of the same row;
# across a block's rows those chains overlap. Measured at (4096, 64), one thread, Intel Xeon
# (AVX-512), ms per forward, row by row -> blocks of 4: softmax float32 0.44 -> 0.36,
# log-softmax 0.57 -> 0.39; float64 0.74 -> 0.69 and 0.91 -> 0.61 (blocks of 16 and 64: a
# little slower than 4), the same values bit for bit. (The backward in blocks, the sums
# then the writes, was slower: log-softmax float32 0.18 -> 0.21.)
_BLOCK = 4


@numba.njit(inline="always", **OPTIONS)
def _block_shifts(x, bits, sign, magnitude, start, shift):
    """A block's first pass: the max of each of its rows (``_row_shift``) into ``shift``;
    returns the block's rows, start to at most start + _BLOCK."""
    block = range(start, min(start + _BLOCK, x.shape[0]))
    for i in block:
        shift[i - start] = _row_shift(x[i], bits[i], sign, magnitude)
    return block


@_jit
def _softmax_rows(x, bits, sign, magnitude, y):
    """y = e/Σe, e = exp(x - m), over each row of x (M, N) into y (M, N); a row of -inf
    gives 0/0 = NaN. Passes over each block of rows (in cache): the maxima, the write of e
    and its sums (``_exp_sum``), the write of y."""
    rows, size = x.shape
    shift, total = np.empty(_BLOCK, x.dtype), np.empty(_BLOCK, x.dtype)    # (block,)
    for start in range(0, rows, _BLOCK):
        block = _block_shifts(x, bits, sign, magnitude, start, shift)
        for i in block:
            total[i - start] = x.dtype.type(_exp_sum(x[i], shift[i - start], y[i]))
        for i in block:
            yi, t = y[i], total[i - start]
            for j in range(size):
                yi[j] = yi[j] / t


@numba.njit(inline="always", **OPTIONS)
def _row_logsumexp(row, bits, sign, magnitude, scratch):
    """ℓ = m + log Σ exp(x - m) of a row, in its dtype: -inf for a row of -inf. ``scratch``
    (the row's size) receives the exponentials."""
    top = _row_shift(row, bits, sign, magnitude)
    total = _exp_sum(row, top, scratch)
    return top + row.dtype.type(math.log(total))        # log 0 = -inf: no error


@_jit
def _log_softmax_rows(x, bits, sign, magnitude, y):
    """y = x - ℓ over each row of x (M, N) into y (M, N); a row of -inf gives y = NaN.
    Passes as ``_softmax_rows``'s, the exponentials written to y as scratch."""
    rows, size = x.shape
    shift, lse = np.empty(_BLOCK, x.dtype), np.empty(_BLOCK, x.dtype)      # (block,)
    for start in range(0, rows, _BLOCK):
        block = _block_shifts(x, bits, sign, magnitude, start, shift)
        for i in block:
            top = shift[i - start]                  # ℓ = m + log Σ exp(x - m)
            lse[i - start] = top + x.dtype.type(math.log(_exp_sum(x[i], top, y[i])))
        for i in block:
            xi, yi, ell = x[i], y[i], lse[i - start]
            for j in range(size):
                yi[j] = xi[j] - ell


@_jit
def _logsumexp_rows(x, bits, sign, magnitude, out):
    """ℓ of each row of x (M, N) into out (M,)."""
    scratch = np.empty(x.shape[1], x.dtype)
    for i in range(x.shape[0]):
        out[i] = _row_logsumexp(x[i], bits[i], sign, magnitude, scratch)


@_jit
def _softmax_rows_backward(g, y, dx):
    """dx = y·(g - Σ g·y) over each row of (M, N)."""
    rows, size = y.shape
    for i in range(rows):
        gi, yi, dxi = g[i], y[i], dx[i]
        total = 0.0                                     # float64 accumulator
        for j in range(size):
            total += gi[j] * yi[j]
        s = y.dtype.type(total)
        for j in range(size):
            dxi[j] = yi[j] * (gi[j] - s)


@_jit
def _log_softmax_rows_backward(g, y, dx):
    """dx = g - exp(y)·Σ g over each row of (M, N)."""
    rows, size = y.shape
    for i in range(rows):
        gi, yi, dxi = g[i], y[i], dx[i]
        total = 0.0                                     # float64 accumulator
        for j in range(size):
            total += gi[j]
        s = y.dtype.type(total)
        for j in range(size):
            dxi[j] = gi[j] - _exp(yi[j]) * s


def _rows_take(x, axis):
    """True when the compiled rows run: x a C-contiguous float32/float64 NumPy array, not
    0-d nor empty, and ``axis`` its last."""
    return (_float_arrays(x) and x.flags.c_contiguous and x.ndim > 0 and x.size > 0
            and axis in (-1, x.ndim - 1))


def _gradient_rows(g, y, axis):
    """g as a C-contiguous array (copied from a view, e.g. the broadcast ones of a sum's
    backward: cheaper than the reference's passes) when y's rows run compiled and g has
    y's dtype and shape; else None."""
    if not (_rows_take(y, axis) and type(g) is np.ndarray and g.dtype == y.dtype
            and g.shape == y.shape):
        return None
    return dense(g)


def _rows(array):
    return array.reshape(-1, array.shape[-1])                      # (M, N)


def _with_bits(x):
    """(x, its integer view, the sign bit's place, the magnitude's mask): the max's
    arguments (``_ORDER``)."""
    integer, sign, magnitude = _ORDER[x.dtype]
    return x, x.view(integer), sign, magnitude


def softmax_forward(x, axis):
    """As ``reference.softmax_forward``: y, x's shape and dtype."""
    if not _rows_take(x, axis):
        return reference.softmax_forward(x, axis)
    y = np.empty_like(x)
    _softmax_rows(*_with_bits(_rows(x)), _rows(y))
    return y


def softmax_backward(g, y, axis):
    """As ``reference.softmax_backward``: dx = y·(g - Σ g·y)."""
    rows = _gradient_rows(g, y, axis)
    if rows is None:
        return reference.softmax_backward(g, y, axis)
    dx = np.empty_like(y)
    _softmax_rows_backward(_rows(rows), _rows(y), _rows(dx))
    return dx


def log_softmax_forward(x, axis):
    """As ``reference.log_softmax_forward``: y, x's shape and dtype."""
    if not _rows_take(x, axis):
        return reference.log_softmax_forward(x, axis)
    y = np.empty_like(x)
    _log_softmax_rows(*_with_bits(_rows(x)), _rows(y))
    return y


def logsumexp(x, axis):
    """As ``reference.logsumexp``: ℓ over ``axis``, kept (..., 1), in x's dtype."""
    if not _rows_take(x, axis):
        return reference.logsumexp(x, axis)
    out = np.empty(x.shape[:-1] + (1,), x.dtype)
    _logsumexp_rows(*_with_bits(_rows(x)), out.reshape(-1))
    return out


@_jit
def _cross_entropy_rows_backward(x, lse, classes, weight, dx):
    """dx = (exp(x - ℓ) - onehot)·w over each row of x (M, N), one pass: the target's
    element as (p - 1)·w, as the reference rounds it, not p·w - w."""
    rows, size = x.shape
    for i in range(rows):
        xi, dxi, shift, w = x[i], dx[i], lse[i, 0], weight[i]
        for j in range(size):
            dxi[j] = _exp(xi[j] - shift) * w
        c = classes[i]
        dxi[c] = (_exp(xi[c] - shift) - x.dtype.type(1.0)) * w


def cross_entropy_backward(logits, lse, classes, row_weight):
    """As ``reference.cross_entropy_backward``: dx (N, C) in the logits' dtype."""
    rows = len(logits)
    if not (all(type(a) is np.ndarray and a.dtype == logits.dtype and a.flags.c_contiguous
                for a in (logits, lse, row_weight))
            and logits.dtype in DTYPES and logits.ndim == 2 and logits.size
            and lse.shape == (rows, 1) and row_weight.shape == (rows,)
            and type(classes) is np.ndarray and classes.dtype.kind in "iu"
            and classes.shape == (rows,)):
        return reference.cross_entropy_backward(logits, lse, classes, row_weight)
    dx = np.empty_like(logits)
    _cross_entropy_rows_backward(logits, lse, classes, row_weight, dx)
    return dx


def log_softmax_backward(g, y, axis):
    """As ``reference.log_softmax_backward``: dx = g - exp(y)·Σ g."""
    rows = _gradient_rows(g, y, axis)
    if rows is None:
        return reference.log_softmax_backward(g, y, axis)
    dx = np.empty_like(y)
    _log_softmax_rows_backward(_rows(rows), _rows(y), _rows(dx))
    return dx
