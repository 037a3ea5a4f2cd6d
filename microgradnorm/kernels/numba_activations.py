"""The numba kernels of the activations: GELU (exact and tanh), softmax / log_softmax and
logsumexp over rows, forward and backward, and cross-entropy's backward, same names and
signatures as ``kernels.reference``'s, compiled for float32 and float64 NumPy arrays;
``numba_cpu`` re-exports them. Everything else (half precision, mixed dtypes; for the rows
also another axis than the last, 0-d and empty arrays) is the reference's (GELU:
``blocked``'s, the same), exactly. Views: GELU takes any x (a transposed or permuted one is
read in its memory order, and y keeps that order, as torch's; a non-dense one is copied
first); the rows' kernels and cross-entropy's backward take a C-contiguous x only (a strided
one goes to the reference), and copy a gradient that is a view (a sum's broadcast ones).

The loops vectorize: no libm call per element. exp is ``_exp64`` / ``_exp32`` below (range
reduction, a polynomial and 2^k built from its bits, in the data's dtype); GELU-tanh is
written with it as x·σ(2u), so neither tanh nor a cancelling 1 + tanh appears. Sums
accumulate in float64; NaN and inf propagate as in the reference. Each kernel compiles on
its first call and is cached on disk.
"""

import math

import numba
import numpy as np
from numba.extending import intrinsic, overload

from . import blocked, reference
from .numba_jit import DTYPES, EXACT_OPTIONS, OPTIONS, _jit, dense

__all__ = ["cross_entropy_backward", "gelu_backward", "gelu_forward", "log_softmax_backward",
           "log_softmax_forward", "logsumexp", "softmax_backward", "softmax_forward"]


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


# ----- GELU ---------------------------------------------------------------------------------
# float64: Φ(-|x|) = erfc(a)/2, a = |x|/√2 (rounded as the reference's x·√½), by fdlibm's
# erf/erfc (s_erf.c, the coefficients below): four pieces of a, each a rational N(t)/D(t),
# t = a² below 0.84375, a - 1 below 1.25, 1/a² above, and
#   erfc(a) = 1 - (a + a·N/D)                                   a < 0.25
#           = 1/2 - ((a - 1/2) + a·N/D)                         a < 0.84375
#           = (1 - erx) - N/D                                   a < 1.25
#           = exp(-z² - 0.5625)·exp((z - a)(z + a) + N/D)/a     above,
# z = a rounded to float32, so z² is exact and only the small (z - a)(z + a) carries a's
# rounding into the exponent (exp(-a²…) at once loses a²/2 ulp: 350 at a = 26). Branch-free,
# so that LLVM vectorizes the loop (4 float64 lanes) where libm's erf is a call per element:
# every piece's N and D are computed, the element's selected and divided once (selecting
# each coefficient per element instead, and evaluating one N and one D, was 12% slower: 51
# selects). a is clamped at 28 (erfc underflows to 0 from 26.6; a NaN is restored by x
# itself). y and dx are then formed as the float32 path's below: no 1 + erf cancels for
# negative x, where the reference's does. Measured (tests/kernels/test_numba_gelu.py, a
# sweep of |x| <= 40 in steps of 2^-12 and random points): erfc(a) within 3 ulp of libm's
# (math.erfc), 2.4 of the exact value (mpmath, on a sample; libm's own: 3.5); at the
# subnormal end (a near 27.2) a result of half the smallest subnormal may round to 0 where
# libm's gives 5e-324. Timed at (1024, 256), one thread, Intel Xeon (AVX-512): the forward
# 1.92 ms, 2.40 with libm's erf per element; forward + backward 4.41 ms, 5.63 with libm's
# (PyTorch's, vectorized: 2.2 ms in that process, 2.1-3.6 over runs on that machine).
_ERX = 8.45062911510467529297e-01
_ERF_PIECES = (         # (numerator c0…c7, denominator 1, d1…d8) of a², a - 1, 1/a², 1/a²
    ((1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
      -5.77027029648944159157e-03, -2.37630166566501626084e-05),
     (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02,
      5.08130628187576562776e-03, 1.32494738004321644526e-04, -3.96022827877536812320e-06)),
    ((-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
      3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
      -2.16637559486879084300e-03),
     (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01,
      7.18286544141962662868e-02, 1.26171219808761642112e-01, 1.36370839120290507362e-02,
      1.19844998467991074170e-02)),
    ((-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
      -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
      -8.12874355063065934246e+01, -9.81432934416914548592e+00),
     (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02,
      4.34565877475229228821e+02, 6.45387271733267880336e+02, 4.29008140027567833386e+02,
      1.08635005541779435134e+02, 6.57024977031928170135e+00, -6.04244152148580987438e-02)),
    ((-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
      -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
      -4.83519191608651397019e+02),
     (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02,
      1.53672958608443695994e+03, 3.19985821950859553908e+03, 2.55305040643316442583e+03,
      4.74528541206955367215e+02, -2.24409524465858183362e+01)))


@numba.njit(inline="always", **EXACT_OPTIONS)
def _exp_over(high, low, a):
    """exp(high + low)/a for float64 ``high`` exact (-z² - 0.5625), ``low`` small and a in
    [1.25, 28], as ``_exp64``: k from high + low, and r = (high - k·ln2_hi) + (low - k·ln2_lo)
    (high - k·ln2_hi exact), so neither part's rounding enters the exponent at once; the
    division comes before the last factor 2^(k-h), so a subnormal result rounds once (as two
    exps, a product and a division: 4 ulp from libm's erfc; so, 3)."""
    k = np.floor((high + low) * _LOG2E + 0.5)
    r = (high - k * _LN2_HI) + (low - k * _LN2_LO)
    n = np.int64(np.int32(k))                   # in [-1133, 1]
    h = n >> 1
    e = _exp_taylor13(r) * _float_from_bits((h + 1023) << 52) / a
    return e * _float_from_bits((n - h + 1023) << 52)


# each piece's N and D, compiled as Horner's rule (``_horner`` takes the highest degree first)
(_n0, _d0), (_n1, _d1), (_n2, _d2), (_n3, _d3) = (
    (_horner(numerator[::-1]), _horner(denominator[::-1]))
    for numerator, denominator in _ERF_PIECES)


@numba.njit(inline="always", **EXACT_OPTIONS)
def _gaussian_tail64(v):
    """Φ(-|v|) = erfc(|v|/√2)/2 for float64 v (above)."""
    a = abs(v) * reference.SQRT_HALF
    a = a if a < 28.0 else 28.0
    t, s = a * a, 1.0 / (a * a)
    if a < 0.84375:                             # (selects: every side is computed)
        n, d = _n0(t), _d0(t)
    elif a < 1.25:
        n, d = _n1(a - 1.0), _d1(a - 1.0)
    elif a < 1 / 0.35:
        n, d = _n2(s), _d2(s)
    else:
        n, d = _n3(s), _d3(s)
    ratio = n / d
    near = 1.0 - (a + a * ratio) if a < 0.25 else 0.5 - ((a - 0.5) + a * ratio)
    z = np.float64(np.float32(a))
    far = _exp_over(-(z * z) - 0.5625, (z - a) * (z + a) + ratio, a)
    erfc = near if a < 0.84375 else ((1.0 - _ERX) - ratio if a < 1.25 else far)
    return 0.5 * erfc


# float32, in float32 arithmetic (16 lanes of AVX-512) and branch-free so that LLVM
# vectorizes the loop: with s = |x|, one vectorized exp gives E = exp(-x²/2), and
# Φ(-s) = E·R(s)/2, R(s) = exp(s²/2)·erfc(s/√2) a rational P/Q of degrees 4 and 5 whose
# coefficients are all positive (a least-squares fit in relative error over s in [0, 15],
# 0.06 float32 eps; p0 = q0 = 1, so R(0) = 1 and the gradient at 0 is 0.5 exactly): sums of
# positive terms, so nothing cancels in float32. Below s = 1, R is formed as 1 + s·D/Q
# (D = (P - Q)/s), so the leading 1 is exact and only the small correction rounds. s is
# clamped at 15 before the polynomials (E is 0 there; s⁵ would overflow for huge s). Then
# y = x - x·Φ(-x) for x > 0 and x·Φ(x) below (-0 stays -0), so no 1 + erf cancels for
# negative x, and dx = 1 + (x·φ - Φ(-x)) for x >= 0 and x·φ + Φ(x) below, φ = E/√(2π), each
# one multiply-add before its last rounding. These compile without "reassoc"
# (EXACT_OPTIONS), which would reorder them (docs/precision.md has the sweep).
_GELU_P = (1.0, 0.8771477687924231, 0.3668305793647062, 0.08137243030391664,
           0.00824369793206446)
_GELU_Q = (1.0, 1.6750326311769397, 1.2033091120232102, 0.469939196887712,
           0.10199146140651763, 0.010331828846562682)
_GELU_D = tuple(p - q for p, q in zip(_GELU_P[1:] + (0.0,), _GELU_Q[1:]))


def _float32_horner(coefficients):          # c0 + c1·s + …, as float32 Horner steps
    return _horner([np.float32(c) for c in coefficients[::-1]])


_gelu_p, _gelu_q, _gelu_d = map(_float32_horner, (_GELU_P, _GELU_Q, _GELU_D))
_HALF, _ONE, _S_NEAR, _S_MAX = (np.float32(c) for c in (0.5, 1.0, 1.0, 15.0))
_INV_SQRT_2PI_F = np.float32(reference.INV_SQRT_2PI)


@numba.njit(inline="always", **EXACT_OPTIONS)
def _gaussian_tail(v):
    """(Φ(-|v|), exp(-v²/2)) for float32 v, in float32 (above)."""
    s = abs(v)
    e = _exp32(-(v * v) * _HALF)
    c = s if s < _S_MAX else _S_MAX
    inverse = _ONE / _gelu_q(c)
    r = _ONE + c * (_gelu_d(c) * inverse) if c < _S_NEAR else _gelu_p(c) * inverse
    return _HALF * e * r, e


@_jit(options=EXACT_OPTIONS)
def _gelu_float32(x, y):
    for i in range(x.size):
        v = x[i]
        tail = _gaussian_tail(v)[0]                              # Φ(-|x|)
        y[i] = v if v == np.inf else (v - v * tail if v > 0 else v * tail)  # +inf: not inf - NaN


@_jit(options=EXACT_OPTIONS)
def _gelu_float32_backward(x, dy, dx):
    for i in range(x.size):
        v = x[i]
        tail, e = _gaussian_tail(v)
        slope = v * (_INV_SQRT_2PI_F * e)                        # x·φ(x)
        dx[i] = dy[i] * (_ONE + (slope - tail) if v >= 0 else slope + tail)


# Φ(x) below 2^-55 (x < -8.37) is taken as 0, as in the reference's and PyTorch's
# 1 + erf(x/√2), where erf rounds to -1 there: y = -0 and dx = x·φ(x) as theirs (above,
# x·Φ(x) keeps its relative accuracy, where the reference's cancels).
_ERF_ROUNDS_TO_ONE = 2.0**-55


@_jit(options=EXACT_OPTIONS)
def _gelu_float64(x, y):
    for i in range(x.size):
        v = x[i]
        tail = _gaussian_tail64(v)                               # Φ(-|x|)
        tail = tail if tail >= _ERF_ROUNDS_TO_ONE else 0.0
        y[i] = v if v == np.inf else (v - v * tail if v > 0 else v * tail)  # +inf: not inf - NaN


@_jit(options=EXACT_OPTIONS)
def _gelu_float64_backward(x, dy, dx):
    for i in range(x.size):
        v = x[i]
        tail = _gaussian_tail64(v)
        tail = tail if tail >= _ERF_ROUNDS_TO_ONE else 0.0
        slope = v * (reference.INV_SQRT_2PI * _exp64(-0.5 * v * v))     # x·φ(x)
        dx[i] = dy[i] * (1.0 + (slope - tail) if v >= 0 else slope + tail)


# GELU-tanh: ½x(1 + tanh u) = x·σ(2u), u = √(2/π)(x + κx³), and with E = exp(-|2u|) in
# (0, 1] the sigmoid is 1/(1 + E) for x >= 0 and E/(1 + E) below: no 1 + tanh u to cancel
# for negative x (where the reference loses its relative accuracy), and σ'(2u) = E/(1 + E)²,
# so the derivative is
#   σ(2u) + x·σ'(2u)·2√(2/π)(1 + 3κx²)   (= ½(1 + t) + ½x(1 - t²)·√(2/π)(1 + 3κx²)).
# Computed in x's dtype, float32 in float32 as PyTorch's: y and dx within 1.0 and 1.5
# float32 eps of the float64 result at the scale max(1, |x|) over [-20, 20] (the float32
# reference: 0.95 and 1.9). Where x² overflows the dtype, dx is NaN (0·inf), as in the
# reference and torch.
_TWO_SQRT_2_OVER_PI = 2 * reference.SQRT_2_OVER_PI


@numba.njit(inline="always", **OPTIONS)
def _tanh_gate(v, constants):
    """(σ(2u), E) at v, as above, in v's dtype; ``constants`` (2√(2/π), κ, 1) in it too."""
    two_c, kappa, one = constants
    e = _exp(-abs(two_c * (v + kappa * (v * v * v))))
    return (one if v >= 0 else e) / (one + e), e


@_jit
def _gelu_tanh(x, y):
    constants = (x.dtype.type(_TWO_SQRT_2_OVER_PI), x.dtype.type(reference.KAPPA),
                 x.dtype.type(1))
    for i in range(x.size):
        y[i] = x[i] * _tanh_gate(x[i], constants)[0]


@_jit
def _gelu_tanh_backward(x, dy, dx):
    two_c, kappa, one = constants = (x.dtype.type(_TWO_SQRT_2_OVER_PI),
                                     x.dtype.type(reference.KAPPA), x.dtype.type(1))
    three_kappa = x.dtype.type(3 * reference.KAPPA)
    for i in range(x.size):
        v = x[i]
        gate, e = _tanh_gate(v, constants)
        slope = (v * (e / ((one + e) * (one + e)))) * (two_c * (one + three_kappa * (v * v)))
        dx[i] = dy[i] * (gate + slope)


def _gelu_takes(*arrays):
    return all(type(a) is np.ndarray and a.dtype in DTYPES and a.dtype == arrays[0].dtype
               and a.shape == arrays[0].shape for a in arrays)


def _in_memory_order(like, *arrays):
    """``np.empty_like(like)``, in like's memory order (torch's strides for a transposed or
    permuted input; C order for a broadcast one, as torch's), and the flat C-contiguous
    arrays of it and of ``arrays`` (of like's shape), element for element in that order:
    the output's a view, the others' views where they are dense in it, else copies."""
    broadcast = any(stride == 0 and n > 1 for stride, n in zip(like.strides, like.shape))
    out = np.empty_like(like, order="C" if broadcast else "K")     # dense, strides >= 0
    axes = sorted(range(out.ndim), key=lambda axis: -out.strides[axis])
    return out, [np.ascontiguousarray(a.transpose(axes)).reshape(-1) for a in (out, *arrays)]


def gelu_forward(x, approximate="none"):
    """As ``reference.gelu_forward``: y in x's dtype and memory order."""
    if not _gelu_takes(x):
        return blocked.gelu_forward(x, approximate)
    y, (y_flat, x_flat) = _in_memory_order(x, x)
    if approximate == "tanh":
        kernel = _gelu_tanh
    else:
        kernel = _gelu_float32 if x.dtype == np.float32 else _gelu_float64
    kernel(x_flat, y_flat)
    return y


def gelu_backward(dy, x, approximate="none"):
    """As ``reference.gelu_backward``: dx in dy's dtype, in x's memory order where dy's
    strides are x's (else C order)."""
    if not _gelu_takes(x, dy):
        return blocked.gelu_backward(dy, x, approximate)
    if dy.strides != x.strides:
        dy, x = dense(dy), dense(x)
    dx, (dx_flat, x_flat, dy_flat) = _in_memory_order(dy, x, dy)
    if approximate == "tanh":
        kernel = _gelu_tanh_backward
    else:
        kernel = _gelu_float32_backward if x.dtype == np.float32 else _gelu_float64_backward
    kernel(x_flat, dy_flat, dx_flat)
    return dx


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
    return (_gelu_takes(x) and x.flags.c_contiguous and x.ndim > 0 and x.size > 0
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
