"""PyTorch's trigonometric, hyperbolic and special functions beyond sin, cos and tanh: tan,
sinh, cosh, their inverses (with torch's NumPy-named aliases ``arcsin``, ...), ``erfc``,
``erfinv``, ``exp2``, ``logit``, ``sinc``, ``deg2rad``/``rad2deg``, and their in-place forms
(``x.tan_()``, ``x.logit_(eps)``).

Each is one node with torch's closed-form derivative, evaluated as torch writes it, so the
gradient at a domain's edge is torch's: inf for ``asin``/``acos`` at ±1, ``acosh`` at 1 and
``atanh`` at ±1, NaN outside the domain, silently. An integer or bool x gives the default
dtype; half precision computes in float32 and rounds once (``logit`` in its own dtype,
each step rounded, as torch's kernel). For a complex x the gradient is grad · conj(f'(x)),
as torch's. ``erfc`` and ``erfinv`` are array functions here (NumPy has neither): ``erfc``
keeps its relative precision in the tail, where 1 - erf(x) rounds to 0. ``METHODS`` names
the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import math
import numbers

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd.function import Function
from ..backend import _polynomial     # Horner, as erf's
from ..dtypes import accumulation_dtype, is_half
from .base import check_tensor, float_input, rsqrt_array
from .elementwise import Unary, _conj, _in_opmath, _unary
from .pointwise import _in_place

LN_2 = math.log(2)
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)          # erf'(0)
M_PI_180, M_180_PI = math.pi / 180, 180 / math.pi


def _real_only(fn, x):
    # torch has no complex kernel for these: its NotImplementedError
    if x.dtype.kind == "c":
        raise NotImplementedError(f"{fn}: not implemented for complex tensors "
                                  f"(dtype {x.dtype})")


# ----- trigonometric and hyperbolic functions -------------------------------------------------
class Tan(Unary):
    def f(xp, x):
        return _in_opmath(xp.tan, x)

    def df(grad, out):                       # d tan(x) = 1 + tan²(x)
        return grad * _conj(1 + out * out)


class Sinh(Unary):
    saves = "x"

    def f(xp, x):
        return _in_opmath(xp.sinh, x)

    def df(grad, x):                         # d sinh(x) = cosh(x)
        return grad * _conj(backend.array_module(x).cosh(x))


class Cosh(Unary):
    saves = "x"

    def f(xp, x):
        return _in_opmath(xp.cosh, x)

    def df(grad, x):                         # d cosh(x) = sinh(x)
        return grad * _conj(backend.array_module(x).sinh(x))


class Asin(Unary):
    saves = "x"

    def f(xp, x):
        return _in_opmath(xp.arcsin, x)

    def df(grad, x):                         # 1 / sqrt(1 - x²): inf at ±1, NaN beyond
        return grad * _conj(rsqrt_array(-x * x + 1))


class Acos(Unary):
    saves = "x"

    def f(xp, x):
        return _in_opmath(xp.arccos, x)

    def df(grad, x):                         # -1 / sqrt(1 - x²)
        return grad * -_conj(rsqrt_array(-x * x + 1))


class Atan(Unary):
    saves = "x"

    def f(xp, x):
        return _in_opmath(xp.arctan, x)

    def df(grad, x):                         # 1 / (1 + x²)
        return grad / _conj(x * x + 1)


class Asinh(Unary):
    saves = "x"

    def f(xp, x):
        return _in_opmath(xp.arcsinh, x)

    def df(grad, x):                         # 1 / sqrt(x² + 1)
        return grad * _conj(rsqrt_array(x * x + 1))


class Acosh(Unary):
    saves = "x"

    def f(xp, x):
        return _in_opmath(xp.arccosh, x)

    def df(grad, x):                         # 1 / sqrt(x² - 1): inf at ±1, as torch's
        if x.dtype.kind == "c":              # √(x²-1) = √(x+1)·√(x-1) off the real line
            return grad * _conj(rsqrt_array(x + 1) * rsqrt_array(x - 1))
        return grad * rsqrt_array(x * x - 1)


class Atanh(Unary):
    saves = "x"

    def f(xp, x):
        return _in_opmath(xp.arctanh, x)

    def df(grad, x):                         # 1 / (1 - x²): inf at ±1
        return grad * (1 / _conj(1 - x * x))


tan = _unary("tan", Tan, "Elementwise tangent, tan(x) = sin(x) / cos(x) (``torch.tan``); "
             "d/dx = 1 + tan²(x). An integer x gives the default dtype.")
sinh = _unary("sinh", Sinh, "Elementwise hyperbolic sine, (e**x - e**-x) / 2 "
              "(``torch.sinh``); d/dx = cosh(x).")
cosh = _unary("cosh", Cosh, "Elementwise hyperbolic cosine, (e**x + e**-x) / 2 "
              "(``torch.cosh``); d/dx = sinh(x).")
asin = arcsin = _unary("asin", Asin, "Elementwise arcsine, in [-π/2, π/2] for x in [-1, 1], "
                       "NaN outside (``torch.asin``, ``torch.arcsin``); d/dx = 1 / √(1 - x²), "
                       "inf at ±1.")
acos = arccos = _unary("acos", Acos, "Elementwise arccosine, in [0, π] for x in [-1, 1], NaN "
                       "outside (``torch.acos``, ``torch.arccos``); d/dx = -1 / √(1 - x²), "
                       "-inf at ±1.")
atan = arctan = _unary("atan", Atan, "Elementwise arctangent, in (-π/2, π/2) (``torch.atan``, "
                       "``torch.arctan``); d/dx = 1 / (1 + x²).")
asinh = arcsinh = _unary("asinh", Asinh, "Elementwise inverse hyperbolic sine, "
                         "log(x + √(x² + 1)) (``torch.asinh``, ``torch.arcsinh``); "
                         "d/dx = 1 / √(x² + 1).")
acosh = arccosh = _unary("acosh", Acosh, "Elementwise inverse hyperbolic cosine, "
                         "log(x + √(x² - 1)) for x >= 1, NaN below (``torch.acosh``, "
                         "``torch.arccosh``); d/dx = 1 / √(x² - 1), inf at 1.")
atanh = arctanh = _unary("atanh", Atanh, "Elementwise inverse hyperbolic tangent, "
                         "log((1 + x) / (1 - x)) / 2 for x in [-1, 1], NaN outside "
                         "(``torch.atanh``, ``torch.arctanh``); d/dx = 1 / (1 - x²).")


# ----- erfc and erfinv: the array functions ---------------------------------------------------
def _on_gpu(name, x):
    # cupyx.scipy.special's function, half precision through float32
    import cupyx.scipy.special

    function = getattr(cupyx.scipy.special, name)
    if is_half(x.dtype):
        return function(x.astype(np.float32)).astype(x.dtype)
    return function(x)


def _exp_of_minus_square(a):
    # exp(-a²) with a² split exactly: a = hi + lo with hi of 24 bits, so hi² is exact, and
    # a² - hi² = (a - hi)(a + hi) is small; exp(-a²) in one rounding of a² would lose
    # a²·2⁻⁵³ of relative precision (8e-14 at a = 27); a held below 40, where exp(-a²) is 0
    # already, so that hi stays finite (a past float32's range: 0 · inf, NaN)
    a = np.minimum(a, 40.0)
    hi = a.astype(np.float32).astype(np.float64)
    return np.exp(-hi * hi) * np.exp(-(a - hi) * (a + hi))


def erfc_array(array):
    """erfc(x) = 1 - erf(x) in ``array``'s dtype, relatively precise in the tail (where
    1 - erf(x) would round to 0): 1 - erf(x) for |x| < 0.5; for |x| >= 0.5,
    exp(-x²)·erfcx(|x|) with erfcx(x) = exp(x²)·erfc(x) smooth and fitted, and
    2 - erfc(|x|) for negative x. Computed in float64: within 5e-16 relative of the exact
    value (mpmath) over [-6, 27] where it is a normal number (erfc(x) is subnormal from
    x ≈ 26.55 and 0 from 27.3). CuPy arrays use ``cupyx.scipy.special.erfc``."""
    if backend.is_cupy_array(array):
        return _on_gpu("erfc", array)
    x = np.asarray(array, dtype=np.float64).reshape(-1)
    a = np.abs(x)
    out = np.full_like(x, np.nan)                 # NaN stays NaN
    small, far = a < 0.5, a >= 27.3
    out[small] = 1 - backend.erf(x[small])        # erfc in [0.48, 1.52]: no cancellation
    middle, tail = (a >= 0.5) & (a < 3), (a >= 3) & (a < 27.3)
    t = a[middle]
    out[middle] = _exp_of_minus_square(t) * _polynomial(_ERFCX_NEAR, t - 1.75)
    t = a[tail]                                   # x·erfcx(x) is smooth in u = 1/x²
    out[tail] = _exp_of_minus_square(t) * _polynomial(_ERFCX_FAR, 1 / (t * t)) / t
    out[far] = 0.0
    negative = x <= -0.5
    out[negative] = 2 - out[negative]             # erfc(-x) = 2 - erfc(x)
    return out.reshape(np.shape(array)).astype(array.dtype, copy=False)


# Chebyshev fits (mpmath.chebyfit, 25 and 19 terms, error below 1e-18 relative) of
# erfcx(1.75 + t) on |t| <= 1.25 and of x·erfcx(x) in u = 1/x² on [0, 1/9] (x >= 3).
_ERFCX_NEAR = (
    6.40242072431051e-14, -2.9164563840606254e-13, 6.838817538230713e-13,
    -2.939638915917664e-12, 1.5092178937404623e-11, -6.358728936629308e-11,
    2.564953166621156e-10, -1.0387817850196493e-09, 4.13488362137935e-09,
    -1.6085805370441224e-08, 6.12206810552486e-08, -2.2776091856762806e-07,
    8.271321341029496e-07, -2.9279389082024223e-06, 1.0086683297193156e-05,
    -3.375535498971418e-05, 0.00010950528847907028, -0.0003435333535226104,
    0.0010392045224437308, -0.003020974651419414, 0.00840431920732891, -0.02225999524138862,
    0.05576363008708727, -0.1309763455144852, 0.2849722347374364)
_ERFCX_FAR = (
    15781888805.5261, -18060149282.981956, 9710722507.794937, -3277303456.3553443,
    784876442.7493594, -143695611.81972685, 21329193.080740254, -2719983.5378505657,
    317954.264787601, -36584.17689177041, 4431.7926608105545, -594.9421817207199,
    91.62657707038835, -16.66111820244182, 3.7024934059128825, -1.0578554659854604,
    0.42314218765355743, -0.2820947917738715, 0.5641895835477563)


def erfinv_array(array):
    """The inverse error function in ``array``'s dtype, torch's CPU algorithm in float64
    (``calc_erfinv``, after G. L. Pavlis's erfinv for MATLAB 2.0, 1996): a rational first
    guess (|y| <= 0.7: in y²; beyond: in √(-log((1 - |y|) / 2))), then two Newton steps on
    erf(x) = y. ±inf at ±1, NaN beyond. Near ±1 the problem itself is ill-conditioned: an
    ulp of y moves x by ulp(y)·√π/2·exp(x²). CuPy arrays use
    ``cupyx.scipy.special.erfinv``."""
    if backend.is_cupy_array(array):
        return _on_gpu("erfinv", array)
    y = np.asarray(array, dtype=np.float64)
    a = np.abs(y)
    z = y * y
    central = y * _polynomial(_ERFINV_A, z) / _polynomial(_ERFINV_B, z)
    w = np.sqrt(-np.log((1 - a) / 2))
    outer = np.copysign(_polynomial(_ERFINV_C, w), y) / _polynomial(_ERFINV_D, w)
    x = np.where(a <= 0.7, central, outer)
    for _ in range(2):                            # Newton: x -= (erf(x) - y) / erf'(x)
        x = x - (backend.erf(x) - y) / (TWO_OVER_SQRT_PI * np.exp(-x * x))
    x = np.where(a == 1, np.copysign(np.inf, y), np.where(a > 1, np.nan, x))
    return np.asarray(x, dtype=array.dtype)       # 0-d stays an array


# torch's coefficients (Pavlis), the highest power first; the denominators end in 1
_ERFINV_A = (-0.140543331, 0.914624893, -1.645349621, 0.886226899)
_ERFINV_B = (0.012229801, -0.329097515, 1.442710462, -2.118377725, 1.0)
_ERFINV_C = (1.641345311, 3.429567803, -1.624906493, -1.970840454)
_ERFINV_D = (1.637067800, 3.543889200, 1.0)


# ----- erfc, erfinv, exp2 ---------------------------------------------------------------------
class Erfc(Unary):
    saves = "x"

    def f(xp, x):
        _real_only("erfc", x)
        return _in_opmath(erfc_array, x)

    def df(grad, x):                         # d erfc(x) = -2/√π exp(-x²)
        return -TWO_OVER_SQRT_PI * backend.array_module(x).exp(-(x * x)) * grad


class Erfinv(Unary):
    """Saves its input, as torch's, and computes erfinv again in backward: its output may
    then change in place (``y = x.erfinv(); y.mul_(2)``)."""

    saves = "x"

    def f(xp, x):
        _real_only("erfinv", x)
        return _in_opmath(erfinv_array, x)

    def df(grad, x):                         # d erfinv(y) = √π/2 exp(erfinv(y)²)
        out = _in_opmath(erfinv_array, x)
        return 0.5 * math.sqrt(math.pi) * backend.array_module(out).exp(out * out) * grad


class Exp2(Unary):
    def f(xp, x):
        return _in_opmath(xp.exp2, x)

    def df(grad, out):                       # d 2**x = 2**x · ln 2
        return grad * _conj(out * LN_2)


erfc = _unary("erfc", Erfc, "The complementary error function, erfc(x) = 1 - erf(x) = 2/√π "
              "∫ₓ^∞ exp(-t²) dt, elementwise (``torch.erfc``); relatively precise in the tail "
              "(erfc(10) = 2.1e-45), where 1 - erf(x) rounds to 0. d/dx = -2/√π exp(-x²).")
erfinv = _unary("erfinv", Erfinv, "The inverse error function: erfinv(erf(x)) = x for y in "
                "(-1, 1), ±inf at ±1, NaN beyond (``torch.erfinv``); d/dy = √π/2 "
                "exp(erfinv(y)²).")
exp2 = _unary("exp2", Exp2, "Elementwise 2**x (``torch.exp2``); d/dx = 2**x ln 2. An integer "
              "x gives the default dtype.")


# ----- logit ----------------------------------------------------------------------------------
class Logit(Function):
    """log(z / (1 - z)) with z = x clamped to [eps, 1 - eps] when eps is given (torch's
    kernel: z = eps where x < eps, else 1 - eps where x > 1 - eps), in x's dtype: for half
    precision too, eps, 1 - eps and each step rounded to it, the log taken in float32 and
    rounded once (torch's kernel; fp16 logit(1, eps=1e-6) is inf, as 1 - eps rounds
    to 1). The gradient is grad / (x (1 - x)), in the gradient's dtype: grad · inf at 0
    and 1 (-0.0 too); outside [0, 1] NaN without eps, and 0 outside [eps, 1 - eps] with it
    (the clamp is flat there)."""

    @staticmethod
    def forward(ctx, x, eps):
        _real_only("logit", x)
        ctx.save_for_backward(x)
        xp, z = backend.array_module(x), float_input(x)
        ctx.bounds = None                        # (low, high) in z's dtype
        if eps is not None:                      # a half eps through float32, as c10's
            low = xp.asarray(eps, dtype=accumulation_dtype(z.dtype)).astype(z.dtype)
            high = xp.asarray(1, dtype=z.dtype) - low
            z = xp.where(z < low, low, xp.where(z > high, high, z))
            ctx.bounds = low, high
        return _in_opmath(xp.log, z / (1 - z))  # half precision: each step rounded

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        xp = backend.array_module(grad)
        x = x.astype(grad.dtype, copy=False)
        # at 0 and 1: grad · inf, +inf at -0.0 too (+ 0: torch's scalar kernel)
        inside = grad / (x * (1 - x) + xp.zeros((), grad.dtype))
        if ctx.bounds is None:
            return xp.where((x < 0) | (x > 1), xp.full((), np.nan, grad.dtype), inside)
        low, high = ctx.bounds
        return xp.where((x < low) | (x > high), xp.zeros((), grad.dtype), inside)


def logit(input, eps=None):
    """The log-odds, log(p / (1 - p)), elementwise (``torch.logit``): the inverse of
    ``sigmoid``; -inf at 0, inf at 1, NaN outside [0, 1].

    Args:
        input: the tensor; an integer or bool one gives the default dtype.
        eps: None, or a number: p is first clamped to [eps, 1 - eps], where the gradient
            is 0 outside; a negative eps is None (torch's). Half precision rounds eps and
            1 - eps to its dtype, as torch's.

    Example:
        >>> mg.logit(mg.tensor([0.25, 0.5]))            # tensor([-1.0986,  0.0000])
    """
    check_tensor("logit", input)
    if isinstance(eps, _tensor.Tensor):
        eps = eps.item()
    if eps is not None and not isinstance(eps, numbers.Real):
        raise TypeError(f"logit: eps must be a number or None, got {type(eps).__name__} "
                        f"{eps!r}")
    eps = None if eps is None or eps < 0 else float(eps)
    return Logit.apply(input, eps=eps)


# ----- sinc, deg2rad, rad2deg -----------------------------------------------------------------
class Sinc(Unary):
    """sin(πx) / (πx), 1 at 0 (its limit)."""

    saves = "x"

    def f(xp, x):
        def sinc(x32):
            product = math.pi * x32
            return xp.where(x32 == 0, xp.ones((), x32.dtype), xp.sin(product) / product)
        return _in_opmath(sinc, x)

    def df(grad, x):                         # (πx cos πx - sin πx) / (πx²)
        xp = backend.array_module(x)
        product, square = x * math.pi, x * x * math.pi
        out = grad * _conj((product * xp.cos(product) - xp.sin(product)) / square)
        # 0 where πx² is 0: at 0, and where it underflows (torch's)
        return xp.where(square == 0, xp.zeros((), out.dtype), out)


class Deg2Rad(Function):
    """x · π/180, a multiplication by a number: its gradient is grad · π/180."""

    factor, name = M_PI_180, "deg2rad"

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind == "c":
            raise RuntimeError(f"{ctx.function.name} is not supported for complex tensors.")
        return _in_opmath(lambda x32: x32 * ctx.function.factor, x)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.function.factor


class Rad2Deg(Deg2Rad):
    factor, name = M_180_PI, "rad2deg"


sinc = _unary("sinc", Sinc, "The normalized sinc, sin(πx) / (πx), 1 at x = 0, elementwise "
              "(``torch.sinc``); d/dx = (πx cos πx - sin πx) / (πx²), 0 at x = 0.")
deg2rad = _unary("deg2rad", Deg2Rad, "Degrees to radians, x · π/180, elementwise "
                 "(``torch.deg2rad``); an integer x gives the default dtype.")
rad2deg = _unary("rad2deg", Rad2Deg, "Radians to degrees, x · 180/π, elementwise "
                 "(``torch.rad2deg``); an integer x gives the default dtype.")


# ----- the in-place forms ---------------------------------------------------------------------
tan_ = _in_place("tan", tan)
sinh_ = _in_place("sinh", sinh)
cosh_ = _in_place("cosh", cosh)
asin_ = arcsin_ = _in_place("asin", asin)
acos_ = arccos_ = _in_place("acos", acos)
atan_ = arctan_ = _in_place("atan", atan)
asinh_ = arcsinh_ = _in_place("asinh", asinh)
acosh_ = arccosh_ = _in_place("acosh", acosh)
atanh_ = arctanh_ = _in_place("atanh", atanh)
erfc_ = _in_place("erfc", erfc)
erfinv_ = _in_place("erfinv", erfinv)
exp2_ = _in_place("exp2", exp2)
logit_ = _in_place("logit", logit)
sinc_ = _in_place("sinc", sinc)
deg2rad_ = _in_place("deg2rad", deg2rad)
rad2deg_ = _in_place("rad2deg", rad2deg)

_FUNCTIONS = ("tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
              "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "erfc", "erfinv",
              "exp2", "logit", "sinc", "deg2rad", "rad2deg")
METHODS = _FUNCTIONS + tuple(name + "_" for name in _FUNCTIONS)
