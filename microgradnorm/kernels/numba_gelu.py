"""The numba kernels of GELU, exact and tanh, forward and backward: ``gelu_forward`` and
``gelu_backward``, same names and signatures as ``kernels.reference``'s, compiled for float32
and float64 NumPy arrays; ``numba_cpu`` re-exports them. Everything else (half precision,
mixed dtypes) is ``blocked``'s, the reference's arithmetic. Views: any x (a transposed or
permuted one is read in its memory order, and y keeps that order, as torch's; a non-dense one
is copied first).

The loops vectorize: no libm call per element. exp is ``numba_activations``' (range
reduction, a polynomial and 2^k built from its bits, in the data's dtype); GELU-tanh is
written with it as x·σ(2u), so neither tanh nor a cancelling 1 + tanh appears; the exact
GELU's tail Φ(-|x|) is fdlibm's erfc in float64 and a rational of positive terms in float32
(below). Each kernel compiles on its first call and is cached on disk.
"""

import numba
import numpy as np

from . import blocked, reference
from .numba_activations import (_LN2_HI, _LN2_HI_F, _LN2_LO, _LN2_LO_F, _LOG2E, _exp, _exp64,
                                _exp_taylor7, _exp_taylor13, _float_arrays, _float_from_bits,
                                _horner)
from .numba_jit import EXACT_OPTIONS, OPTIONS, _jit, dense

__all__ = ["gelu_backward", "gelu_forward"]


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
# libm's gives 5e-324. The loops below run this full form only where a >= 1.25 (or x is
# wide), and ``_gaussian_tail64_near`` elsewhere; their timings are there.
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
# (EXACT_OPTIONS), which would reorder them (docs/precision.md has the sweep). Timed at
# (1024, 256) of N(0, 1), one thread, process CPU time, medians of 60 calls, Intel Xeon
# (family 6 model 207, AVX-512, 16 lanes): forward 0.19 ms, backward 0.20 (PyTorch's 0.104
# and 0.22); of N(0, 5²) 0.33 and 0.39 (PyTorch's 0.104 and 0.23; 0.51 and 0.59 before E
# was set to 0 where it is not needed, below). The forward's 52 vector instructions per 16
# elements (the exp, three polynomials and a division) stay above PyTorch's float32 erf.
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
# E is taken as 0 outside [-14.5, 12.5], where y and dx come out the same: above 12.5,
# x·Φ(-x) < 2^-110 and x·φ(x) too, below half an ulp of y = x and of dx = 1; below -14.5,
# -x²/2 < -104, where exp is clamped and E·½ and E/√(2π) already round to 0. So only x in
# [-14.5, -13.2], whose y is subnormal, computes with subnormal E: a lane that does slows
# its whole vector (forward, 1 % of N(0, 1)'s elements set to 14: 0.18 -> 0.66 ms, where
# 12.5 costs nothing; set to 30: 0.33 -> 0.21 ms now; to -14: 0.67 as before). E·2^64 is
# formed first (normal for every clamped argument) and scaled by 2^-64 or 0: exact, so E
# is ``_exp32``'s, bit for bit, inside the range (y and dx too, over a sweep of ±40 and
# ±[1e-45, 3e38]: 0 bits changed).
_X_LOW, _X_HIGH = np.float32(-14.5), np.float32(12.5)
_TWO_TO_MINUS_64 = np.float32(2.0**-64)


@numba.njit(inline="always", **EXACT_OPTIONS)
def _exp32_times_2_to_64(z):
    """exp(z)·2^64 for float32 z <= 0, a normal float, as ``_exp32`` computes exp(z) (the
    same bits, scaled): 2^(k+64) as one factor, normal for k in [-150, 0]. Without what larger
    z and NaN need (the clamp at 89, NaN's restoring: a NaN z gives some finite value), and
    with 2^-64 applied by the caller, where it wants exp(z) at all (``_gaussian_tail``)."""
    c = z if z > np.float32(-104.0) else np.float32(-104.0)
    k = np.floor(c * np.float32(_LOG2E) + np.float32(0.5))
    r = (c - k * _LN2_HI_F) - k * _LN2_LO_F
    return _exp_taylor7(r) * _float_from_bits(np.int32((np.int32(k) + (127 + 64)) << 23))


@numba.njit(inline="always", **EXACT_OPTIONS)
def _gaussian_tail(v):
    """(Φ(-|v|), exp(-v²/2)) for float32 v, in float32 (above)."""
    s = abs(v)
    needed = (v >= _X_LOW) & (v <= _X_HIGH)
    e = _exp32_times_2_to_64((v * v) * np.float32(-0.5)) * (_TWO_TO_MINUS_64 if needed
                                                            else np.float32(0.0))
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


@numba.njit(inline="always", **EXACT_OPTIONS)
def _is_far(v):
    """Whether a = |v|/√2 takes the far pieces (a >= 1.25, or NaN): exp and 1/a² needed."""
    return not abs(v) * reference.SQRT_HALF < 1.25


@numba.njit(inline="always", **EXACT_OPTIONS)
def _gaussian_tail64_near(v):
    """``_gaussian_tail64(v)`` where a = |v|/√2 < 1.25, the same operations: only the
    pieces of a² and a - 1, no exp and one division."""
    a = abs(v) * reference.SQRT_HALF
    if a < 0.84375:
        n, d = _n0(a * a), _d0(a * a)
    else:
        n, d = _n1(a - 1.0), _d1(a - 1.0)
    ratio = n / d
    near = 1.0 - (a + a * ratio) if a < 0.25 else 0.5 - ((a - 0.5) + a * ratio)
    return 0.5 * (near if a < 0.84375 else (1.0 - _ERX) - ratio)


@numba.njit(inline="always", **EXACT_OPTIONS)
def _gelu64_y(v, tail):
    """y from x and Φ(-|x|) (the float32 path's forms, above)."""
    tail = tail if tail >= _ERF_ROUNDS_TO_ONE else 0.0
    return v if v == np.inf else (v - v * tail if v > 0 else v * tail)    # +inf: not inf - NaN


@numba.njit(inline="always", **EXACT_OPTIONS)
def _gelu64_dx(v, g, tail):
    """dx from x, dy and Φ(-|x|)."""
    tail = tail if tail >= _ERF_ROUNDS_TO_ONE else 0.0
    slope = v * (reference.INV_SQRT_2PI * _exp64(-0.5 * v * v))         # x·φ(x)
    return g * (1.0 + (slope - tail) if v >= 0 else slope + tail)


# The float64 loops. Most GELU inputs are near 0 (|x| < 1.77, a < 1.25, for 92 % of a
# standard normal's), where the branch-free tail above computes two pieces, the exp and
# 1/a² for nothing. So x is first run through ``_gaussian_tail64_near`` (one vectorized
# pass, counting the far elements); the far ones are then gathered into a buffer, run
# through the full tail there (vectorized) and scattered back: each element's tail is the
# full form's, the same operations, the same bits. Where more than 30 % are far, the
# gathering costs more than it saves (measured: break-even near 35 %), and one pass of the
# full tail does it, as before: at once where _PROBE elements spread over x say so (72 %
# of N(0, 5²) is far), else after the near pass. Timed at (1024, 256), one thread, process
# CPU time, medians of 60 calls, Intel Xeon (family 6 model 207, AVX-512), N(0, 1): forward
# 1.49 -> 0.77 ms, backward 1.79 -> 1.24 (PyTorch's 0.97 and 1.41); N(0, 5²): 1.49 -> 1.40
# and 1.78 -> 1.71 (PyTorch's 1.92 and 2.34). Where the probe misjudges x, the near pass is
# spent for nothing: 1.49 -> 1.93 and 1.80 -> 2.36 ms, in the worst case.
# One pass over x in blocks of 512 (near pass, gather, scatter per block) was slower
# (forward 1.10 ms against 0.86) and its backward, on some layouts of x, dy and dx in
# memory (three arrays allocated one after the other), ran 2.5 to 4 times slower than one
# pass; whole passes did not.
_PROBE = 512


@numba.njit(inline="always", **EXACT_OPTIONS)
def _wide(far, count):
    """Whether ``far`` far elements of ``count`` are too many to gather (over 30 %)."""
    return 10 * far > 3 * count


@numba.njit(inline="always", **EXACT_OPTIONS)
def _looks_wide(x):
    """Whether about _PROBE elements of x, evenly spaced, hold too many far ones to gather."""
    step = max(1, x.size // _PROBE)
    probe, far = 0, 0
    for i in range(0, x.size, step):
        probe += 1
        far += _is_far(x[i])
    return _wide(far, probe)


@numba.njit(inline="always", **EXACT_OPTIONS)
def _far_indices(x, count):
    """The indices of x's ``count`` far elements (as the near pass counted them), in order."""
    far_at = np.empty(count, np.int64)
    j = 0
    for i in range(x.size):                     # write always, advance if far: no branch
        if j == count:                          # but this one (the last is found)
            break
        far_at[j] = i
        j += _is_far(x[i])
    return far_at


@_jit(options=EXACT_OPTIONS)
def _gelu_float64(x, y):
    if not _looks_wide(x):
        far = 0
        for i in range(x.size):                 # vectorized: two pieces, no exp
            far += _is_far(x[i])
            y[i] = _gelu64_y(x[i], _gaussian_tail64_near(x[i]))
        if not _wide(far, x.size):
            far_at = _far_indices(x, far)
            y_far = np.empty(far)
            for j in range(far):
                y_far[j] = x[far_at[j]]
            for j in range(far):                # vectorized: the full tail
                y_far[j] = _gelu64_y(y_far[j], _gaussian_tail64(y_far[j]))
            for j in range(far):
                y[far_at[j]] = y_far[j]
            return
    for i in range(x.size):                     # wide: the full tail for all
        y[i] = _gelu64_y(x[i], _gaussian_tail64(x[i]))


@_jit(options=EXACT_OPTIONS)
def _gelu_float64_backward(x, dy, dx):
    if not _looks_wide(x):
        far = 0
        for i in range(x.size):                 # vectorized: two pieces and exp(-x²/2)
            far += _is_far(x[i])
            dx[i] = _gelu64_dx(x[i], dy[i], _gaussian_tail64_near(x[i]))
        if not _wide(far, x.size):
            far_at = _far_indices(x, far)
            x_far, dx_far = np.empty(far), np.empty(far)
            for j in range(far):
                x_far[j], dx_far[j] = x[far_at[j]], dy[far_at[j]]
            for j in range(far):                # vectorized: the full tail
                dx_far[j] = _gelu64_dx(x_far[j], dx_far[j], _gaussian_tail64(x_far[j]))
            for j in range(far):
                dx[far_at[j]] = dx_far[j]
            return
    for i in range(x.size):                     # wide: the full tail for all
        dx[i] = _gelu64_dx(x[i], dy[i], _gaussian_tail64(x[i]))


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
    if not _float_arrays(x):
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
    if not _float_arrays(x, dy):
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
