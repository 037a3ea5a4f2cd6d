"""``mg.special``, ``torch.special``'s namespace: the functions that exist here under other
names (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma``,
``multigammaln`` is ``mvlgamma``, ``gammainc``/``gammaincc`` are ``igamma``/``igammac``, ...),
and the rest of torch.special that is made of what the library has: ``ndtr`` (a composition
over ``erfc``), and one node each, with torch's gradient, for ``erfcx``, ``log_ndtr``,
``ndtri``, ``entr``, ``xlog1py``, ``zeta``, ``i1``, ``i0e`` and ``i1e``;
``modified_bessel_i0``/``i1`` and ``spherical_bessel_j0`` give constants, as torch's have no
gradient; the orthogonal polynomials (``chebyshev_polynomial_t``/``u``/``v``/``w``, their
``shifted_`` forms, ``hermite_polynomial_h``/``he``, ``laguerre_polynomial_l``,
``legendre_polynomial_p``) by torch's recurrences, elementwise, constants too.

The array functions below are written on the kernels of ``ops/special.py`` (erfc, erfinv,
and the fitted erfcx inside erfc) and ``ops/gamma.py`` (I0, I1, the Hurwitz zeta),
computed in float64 and returned in the input's dtype (half precision through float32, as
torch's; an integer input gives the default dtype); CuPy arrays go to
``cupyx.scipy.special``.

The Bessel functions J, Y and K (``bessel_j0``, ``bessel_j1``, ``bessel_y0``, ``bessel_y1``,
``modified_bessel_k0``/``k1``, ``scaled_modified_bessel_k0``/``k1``) and ``airy_ai`` are
torch's Cephes approximations in ``special_bessel.py``, constants as torch's."""

import math

import numpy as np

from . import backend
from .ops import binary
from .ops.base import check_tensor, constant, float_input, promote
from .ops.elementwise import Unary, _in_opmath, _unary, erf, sigmoid
from .ops.gamma import i0_array, i1_array, zeta_array
from .ops.pointwise import expm1, log1p, round
from .fused.softmax import tensor_log_softmax as _log_softmax, tensor_softmax as _softmax
from .ops.reductions import logsumexp
from .ops.special import (_ERFCX_FAR, _ERFCX_NEAR, _exp_of_minus_square, _on_gpu, _polynomial,
                          _real_only, erfc, erfc_array, erfinv, erfinv_array, exp2, logit, sinc)
from .ops.torch_more import digamma, i0, igamma, igammac, lgamma, mvlgamma, polygamma
from .ops.binary import xlogy
from .ops.double_backward import _fitted, _formula, _safe, _select, _zero_where
from .ops.torch_more import I0
from .special_bessel import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1,
                             modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0,
                             scaled_modified_bessel_k1)

__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
           "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr",
           "log_softmax", "logit",
           "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "multigammaln", "ndtr",
           "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "spherical_bessel_j0",
           "xlog1py", "xlogy", "zeta",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w"]
__all__ += ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
            "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
            "scaled_modified_bessel_k1"]

# torch.special's names for functions the library has under its own
expit = sigmoid
gammaln = lgamma
gammainc = igamma
gammaincc = igammac
psi = digamma

SQRT_2 = math.sqrt(2.0)
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
SQRT_2_OVER_PI = math.sqrt(2 / math.pi)

# torch.special's functions that need a kernel the library does not have: none left
MISSING = ()


def __getattr__(name):
    if name in MISSING:
        raise AttributeError(f"microgradnorm.special.{name} (torch.special.{name}) is not "
                             "implemented: it needs a special-function kernel microgradnorm "
                             "does not have")
    raise AttributeError(f"module 'microgradnorm.special' has no attribute {name!r}")


def softmax(input, dim, *, dtype=None):
    """``torch.special.softmax``: ``mg.softmax`` along ``dim`` (``dtype`` casts first)."""
    return _softmax(check_tensor("softmax", input), dim=dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``torch.special.log_softmax``: ``mg.log_softmax`` along ``dim``."""
    return _log_softmax(check_tensor("log_softmax", input), dim=dim, dtype=dtype)


def multigammaln(input, p):
    """``torch.special.multigammaln``: ``mg.mvlgamma(input, p)``, the multivariate
    log-gamma function of dimension ``p``."""
    return mvlgamma(input, p)


# ----- the array functions --------------------------------------------------------------------
def _float64(array):
    # ``array`` flat in float64, and the function that gives a result its shape and dtype
    def back(out):
        return out.reshape(array.shape).astype(array.dtype, copy=False)
    return np.asarray(array, dtype=np.float64).reshape(-1), back


def erfcx_array(array):
    """erfcx(x) = exp(x²)·erfc(x): for x >= 0.5 the fits ``erfc_array`` scales by
    exp(-x²) (so no overflow: erfcx(x) ~ 1/(x√π) far out); below, exp(x²)·erfc(x), inf
    from x ≈ -26.6, as torch's."""
    if backend.is_cupy_array(array):
        return _on_gpu("erfcx", array)
    x, back = _float64(array)
    out = np.full_like(x, np.nan)
    middle, tail = (x >= 0.5) & (x < 3), x >= 3
    out[middle] = _polynomial(_ERFCX_NEAR, x[middle] - 1.75)
    t = x[tail]                                 # x·erfcx(x), smooth in 1/x²; 0 at inf
    with np.errstate(divide="ignore", invalid="ignore"):
        out[tail] = _polynomial(_ERFCX_FAR, 1 / (t * t)) / t
    low = x < 0.5
    with np.errstate(divide="ignore", over="ignore"):   # exp(x²) exact in x², inf far left
        out[low] = erfc_array(x[low]) / _exp_of_minus_square(np.abs(x[low]))
    out[x == -np.inf] = np.inf
    return back(out)


def log_ndtr_array(array):
    """log Φ(x), torch's two branches: log(erfcx(-x/√2)/2) - x²/2 below -1 (Φ tiny, its
    log still precise), log1p(-erfc(x/√2)/2) above."""
    if backend.is_cupy_array(array):
        return _on_gpu("log_ndtr", array)
    x, back = _float64(array)
    out = np.empty_like(x)
    left = x < -1
    with np.errstate(over="ignore", divide="ignore"):
        out[left] = np.log(erfcx_array(-x[left] / SQRT_2) / 2) - x[left] * x[left] / 2
    out[~left] = np.log1p(-erfc_array(x[~left] / SQRT_2) / 2)
    return back(out)


def ndtri_array(array):
    """Φ⁻¹(p): from the smaller tail q = min(p, 1 - p) (1 - p is exact for p >= 1/2),
    x₀ = √2·erfinv(2q - 1), or the asymptote -√(t - log t - log 2π), t = -2 log q, where
    2q - 1 rounds to -1 (q below 2⁻⁵⁴); then Newton's steps on log Φ(x) = log q, which
    keep the tail's relative precision (ndtri(1e-300) = -37.047...). ±inf at 0 and 1, NaN
    outside [0, 1]."""
    if backend.is_cupy_array(array):
        return _on_gpu("ndtri", array)
    p, back = _float64(array)
    q = np.minimum(p, 1 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = SQRT_2 * erfinv_array(2 * q - 1)
        t = -2 * np.log(q)
        far = (q > 0) & ~np.isfinite(x)
        x[far] = -np.sqrt(t[far] - np.log(t[far]) - 2 * LOG_SQRT_2PI)
        live = (q > 0) & np.isfinite(x)
        xl, log_q = x[live], np.log(q[live])
        for _ in range(4):              # quadratic: the asymptote's 1e-3 is 1e-16 in three
            log_phi = log_ndtr_array(xl)
            slope = np.exp(-xl * xl / 2 - log_phi - LOG_SQRT_2PI)     # φ(x) / Φ(x)
            xl = xl - (log_phi - log_q) / slope
        x[live] = xl
    return back(np.where(p > 0.5, -x, x))


def _scaled_bessel(array, nu):
    # e^-|x| Iν(x): Iν times e^-|x| where Iν is finite (|x| < 700), past it the asymptotic
    # series Σₖ (-1)ᵏ aₖ(ν) / |x|ᵏ / √(2π|x|) of ops/gamma.py's _bessel without its e^|x|
    x, back = _float64(array)
    a = np.abs(x)
    near = a < 700
    out = np.empty_like(x)
    values = (i0_array if nu == 0 else i1_array)(x[near])
    out[near] = values * np.exp(-a[near])
    far = a[~near]
    term, series = np.ones_like(far), np.ones_like(far)
    for j in range(1, 12):               # past 700 each term is 1e-3 of the one before
        term = term * -(4 * nu * nu - (2 * j - 1) ** 2) / (8 * j * far)
        series += term
    with np.errstate(invalid="ignore"):
        far_values = series / np.sqrt(2 * math.pi * far)
    out[~near] = np.where(x[~near] < 0, -far_values, far_values) if nu == 1 else far_values
    return back(out)


def i0e_array(array):
    """e^-|x|·I0(x), finite for every finite x."""
    return _on_gpu("i0e", array) if backend.is_cupy_array(array) else _scaled_bessel(array, 0)


def i1e_array(array):
    """e^-|x|·I1(x), odd."""
    return _on_gpu("i1e", array) if backend.is_cupy_array(array) else _scaled_bessel(array, 1)


def entr_array(xp, x):
    """-x·log(x) for x > 0, 0 at 0, -inf below, NaN for NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        values = -x * xp.log(x)
    values = xp.where(x == 0, xp.zeros((), values.dtype), values)
    return xp.where(x < 0, xp.asarray(-np.inf, values.dtype), values)


def spherical_j0_array(xp, x):
    """j₀(x) = sin(x)/x, 1 at 0 and 0 at ±inf, as torch's."""
    with np.errstate(divide="ignore", invalid="ignore"):
        values = xp.sin(x) / x
    values = xp.where(x == 0, xp.ones((), values.dtype), values)
    return xp.where(xp.isinf(x), xp.zeros((), values.dtype), values)


def zeta_arrays(xp, s, q):
    """ζ(s, q) of broadcast arrays: ``ops/gamma.py``'s series once per distinct s; inf at
    s = 1 and NaN below, and inf for a NaN s at a pole of q, as torch's."""
    if backend.is_cupy_array(q):
        import cupyx.scipy.special
        return cupyx.scipy.special.zeta(s, q)
    s, q = np.broadcast_arrays(s, q)
    s64, q64 = s.astype(np.float64).reshape(-1), q.astype(np.float64).reshape(-1)
    out = np.full(s64.shape, np.nan)
    out[s64 == 1] = np.inf
    # torch tests q for a pole (a non-positive integer, -inf too) before s's NaN
    out[np.isnan(s64) & (q64 <= 0) & (q64 == np.floor(q64))] = np.inf
    for value in np.unique(s64[s64 > 1]):
        where = s64 == value
        out[where] = zeta_array(value, q64[where])
    return out.reshape(s.shape)


# ----- the nodes ------------------------------------------------------------------------------
def _fn(array_function):
    # the Unary form of an array function of one argument
    return lambda xp, x: _in_opmath(array_function, x)


def _wide(x):
    # a slope computed in float64 and cast once: float32's 2x·erfcx(x) - 2/√π, and
    # i1e(x) - i0e(x) far out, cancel to noise
    return x.astype(np.float64, copy=False)


def _near_zero(x):
    # torch's mask for I1's slopes: |x| <= eps of x's dtype (NaN too), where they are 1/2
    return ~(backend.array_module(x).abs(x) > np.finfo(x.dtype).eps)


class Erfcx(Unary):
    saves = "x"
    f = staticmethod(_fn(erfcx_array))

    def df(grad, x):                     # 2x·erfcx(x) - 2/√π
        w = _wide(x)
        return grad * (2 * w * erfcx_array(w) - TWO_OVER_SQRT_PI).astype(grad.dtype)


class LogNdtr(Unary):
    saves = "x"
    f = staticmethod(_fn(log_ndtr_array))

    def df(grad, x):                     # φ(x)/Φ(x) = exp(-x²/2 - log Φ(x)) / √(2π)
        w = _wide(x)
        xp = backend.array_module(w)
        slope = xp.exp(-w * w / 2 - log_ndtr_array(w) - LOG_SQRT_2PI)
        # below -1, log Φ(x) = log(erfcx(-x/√2)/2) - x²/2: the x²/2 cancels in the exponent,
        # whose rounding grows with x² (1e-3 relative at x = -5e6), so φ/Φ = √(2/π)/erfcx
        with np.errstate(over="ignore"):
            left = SQRT_2_OVER_PI / erfcx_array(xp.maximum(-w, 1) / SQRT_2)
        return grad * xp.where((w < -1) & (w > -np.inf), left, slope).astype(grad.dtype)


class Ndtri(Unary):
    f = staticmethod(_fn(ndtri_array))

    def df(grad, out):                   # 1/φ(x) = √(2π)·exp(x²/2)
        w = _wide(out)
        return grad * backend.array_module(w).exp(w * w / 2 + LOG_SQRT_2PI).astype(grad.dtype)


class Entr(Unary):
    saves = "x"

    def f(xp, x):
        return _in_opmath(lambda a: entr_array(xp, a), x)

    def df(grad, x):                     # -(log x + 1): inf at 0, NaN below, as torch's
        with np.errstate(divide="ignore", invalid="ignore"):
            return grad * -(backend.array_module(x).log(x) + 1)


class I1(Unary):
    saves = "x"
    f = staticmethod(_fn(i1_array))

    def df(grad, x):                     # I0(x) - I1(x)/x, 1/2 where |x| <= eps
        w = _wide(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = i0_array(w) - i1_array(w) / w
        return grad * _half_where_tiny(x, slope).astype(grad.dtype)


class I0e(Unary):
    saves = "x"
    f = staticmethod(_fn(i0e_array))

    def df(grad, x):                     # i1e(x) - sgn(x)·i0e(x)
        w = _wide(x)
        xp = backend.array_module(w)
        return grad * (i1e_array(w) - xp.sign(w) * i0e_array(w)).astype(grad.dtype)


class I1e(Unary):
    saves = "x"
    f = staticmethod(_fn(i1e_array))

    def df(grad, x):                     # i0e(x) - i1e(x)·(sgn(x) + 1/x), 1/2 where tiny
        w = _wide(x)
        xp = backend.array_module(w)
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = i0e_array(w) - i1e_array(w) * (xp.sign(w) + 1 / w)
        return grad * _half_where_tiny(x, slope).astype(grad.dtype)


def _half_where_tiny(x, slope):
    xp = backend.array_module(slope)
    return xp.where(_near_zero(x), xp.asarray(0.5, slope.dtype), slope)


def _xlog1py(xp, x, y):
    # x·log1p(y), 0 where x is 0 (even for y = -1), NaN where y is NaN (torch's)
    values = x * xp.log1p(y)
    return xp.where(xp.isnan(y), xp.asarray(np.nan, values.dtype),
                    xp.where(x == 0, xp.zeros((), values.dtype), values))


class Xlog1py(binary.Binary):
    name, opmath = "xlog1py", False      # half precision in its own dtype, as torch's kernel
    f = staticmethod(_xlog1py)

    def da(grad, a, b, out):             # log1p(y), 0 where x is 0 and y <= -1
        return binary._where_zero((a == 0) & (b <= -1),
                                  _xlog1py(backend.array_module(a), grad, b))

    def db(grad, a, b, out):             # x / (1 + y)
        return grad * a / (b + 1)


class Zeta(binary.Binary):
    name = "zeta"
    f = staticmethod(zeta_arrays)

    def da(grad, a, b, out):
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")

    def db(grad, a, b, out):             # dζ(s, q)/dq = -s·ζ(s + 1, q)
        return grad * -a * zeta_arrays(backend.array_module(a), a + 1, b)


def _constant(name, array_function, doc):
    # a function of torch.special whose result has no gradient in torch: computed on the
    # array, returned outside the graph
    def function(input):
        x = check_tensor(name, input)._array
        xp = backend.array_module(x)
        return constant(_in_opmath(lambda a: array_function(xp, a), x))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


# ----- the public functions -------------------------------------------------------------------
def ndtr(input):
    """Φ(x) = ½·erfc(-x/√2), the standard normal distribution function
    (``torch.special.ndtr``), relatively precise in the left tail; d/dx = φ(x) =
    exp(-x²/2)/√(2π). A composition over ``erfc``."""
    x = check_tensor("ndtr", input)
    if x.dtype.kind in "biu":
        x = constant(float_input(x._array))
    return erfc(x * (-1 / SQRT_2)) * 0.5


def _real_unary(name, function, doc):
    # torch has no complex kernel for these: its NotImplementedError, not a complex result
    unchecked = _unary(name, function, doc)

    def real(input):
        _real_only(f"special.{name}", check_tensor(name, input))
        return unchecked(input)
    real.__name__, real.__qualname__, real.__doc__ = name, name, doc
    real.method = unchecked.method
    return real


erfcx = _real_unary("erfcx", Erfcx, """The scaled complementary error function exp(x²)·erfc(x)
    (``torch.special.erfcx``), finite far right where erfc underflows (~1/(x√π)), inf far
    left; d/dx = 2x·erfcx(x) - 2/√π.""")
log_ndtr = _real_unary("log_ndtr", LogNdtr, """log Φ(x), the log of the standard normal
    distribution function (``torch.special.log_ndtr``), precise where Φ(x) underflows
    (log_ndtr(-40) = -804.6...); d/dx = φ(x)/Φ(x).""")
ndtri = _real_unary("ndtri", Ndtri, """Φ⁻¹(p), the standard normal quantile
    (``torch.special.ndtri``): -inf at 0, inf at 1, NaN outside [0, 1], precise in both
    tails (``ndtri_array``); d/dp = √(2π)·exp(x²/2).""")
entr = _real_unary("entr", Entr, """-x·log(x) elementwise, 0 at 0 and -inf for x < 0
    (``torch.special.entr``); d/dx = -(log x + 1).""")
i1 = _real_unary("i1", I1, """I1(x), the modified Bessel function of the first kind of order
    1 (``torch.special.i1``); d/dx = I0(x) - I1(x)/x (1/2 at 0).""")
i0e = _real_unary("i0e", I0e, """e^-|x|·I0(x), the exponentially scaled I0
    (``torch.special.i0e``), finite where I0 overflows; d/dx = i1e(x) - sgn(x)·i0e(x).""")
i1e = _real_unary("i1e", I1e, """e^-|x|·I1(x), the exponentially scaled I1
    (``torch.special.i1e``); d/dx = i0e(x) - i1e(x)·(sgn(x) + 1/x) (1/2 at 0).""")
xlog1py = binary._function("xlog1py", Xlog1py, ("input", "other"), """``input ·
    log1p(other)``, 0 where input is 0 (even for other -1), NaN where other is NaN
    (``torch.special.xlog1py``); either may be a number. d/dinput = log1p(other) (0 where
    input is 0 and other <= -1), d/dother = input / (1 + other).""")
zeta = binary._function("zeta", Zeta, ("input", "other"), """The Hurwitz zeta function
    ζ(x, q) = Σₖ (k + q)^-x (``torch.special.zeta``): inf at x = 1, NaN for x < 1, inf
    at a non-positive integer q; either may be a number. d/dq = -x·ζ(x + 1, q); the
    derivative in x is not implemented (NotImplementedError in backward), as torch's.""")
modified_bessel_i0 = _constant("modified_bessel_i0", lambda xp, a: i0_array(a), """I0(x)
    (``torch.special.modified_bessel_i0``), without a gradient, as torch's (``i0`` has one).""")
modified_bessel_i1 = _constant("modified_bessel_i1", lambda xp, a: i1_array(a), """I1(x)
    (``torch.special.modified_bessel_i1``), without a gradient, as torch's (``i1`` has one).""")
_spherical_j0 = _constant("spherical_bessel_j0", spherical_j0_array, "")


def spherical_bessel_j0(x):
    """sin(x)/x, 1 at 0 (``torch.special.spherical_bessel_j0``, whose argument is named
    ``x``), without a gradient, as torch's."""
    return _spherical_j0(x)


# ----- double backward: each node's gradient with Tensor ops (ops/double_backward.py) -------
def _wide_tensor(x):
    # _wide on a Tensor: a cast node, so that the slope stays differentiable
    return x if x.dtype == np.float64 else x.to(np.float64)


def _slope_graph(function, slope, from_output=False):
    # g · slope(x in float64) cast to g's dtype, as each df above; the output applied again
    # where df reads it
    @_formula(function)
    def formula(ctx, g):
        x = ctx.inputs[0]
        return g * slope(ctx, _wide_tensor(function.apply(x) if from_output else x)).to(g.dtype)
    return formula


def _tiny_safe(slope):
    # slope(ctx, w) with w = 1 where |x| <= eps, where the result is 1/2 instead
    def safe(ctx, w):
        tiny = _near_zero(ctx.saved[0])
        return _select(tiny, w.new_full((), 0.5), slope(_safe(tiny, w)))
    return safe


_slope_graph(Erfcx, lambda ctx, w: 2 * w * Erfcx.apply(w) - TWO_OVER_SQRT_PI)
_slope_graph(LogNdtr, lambda ctx, w: (-w * w / 2 - LogNdtr.apply(w) - LOG_SQRT_2PI).exp())
_slope_graph(Ndtri, lambda ctx, w: (w * w / 2 + LOG_SQRT_2PI).exp(), from_output=True)
_slope_graph(I1, _tiny_safe(lambda w: I0.apply(w) - I1.apply(w) / w))
_slope_graph(I0e, lambda ctx, w: I1e.apply(w) - w.sign() * I0e.apply(w))
_slope_graph(I1e, _tiny_safe(lambda w: I0e.apply(w) - I1e.apply(w) * (w.sign() + 1 / w)))


@_formula(Entr)
def _entr_graph(ctx, g):                     # -(log x + 1)
    return g * -(ctx.inputs[0].log() + 1)


@_formula(I0)
def _i0_graph(ctx, g):                       # I1(x), the node of this module
    return g * I1.apply(ctx.inputs[0])


@_formula(Xlog1py)
def _xlog1py_graph(ctx, g):
    # log1p(y) (xlog1py(g, y)), 0 where x = 0 and y <= -1; x / (1 + y)
    a_saved, b_saved, _ = ctx.saved
    a, b = ctx.inputs
    return _fitted(ctx, lambda: _zero_where((a_saved == 0) & (b_saved <= -1),
                                            Xlog1py.apply(g, b)),
                   lambda: g * a / (b + 1))


@_formula(Zeta)
def _zeta_graph(ctx, g):                     # d/dq = -x·ζ(x + 1, q); none in x, as torch's
    a, b = ctx.inputs
    return _fitted(ctx, lambda: Zeta.da(g, None, None, None),
                   lambda: g * -a * Zeta.apply(a + 1, b))


# ----- the orthogonal polynomials: torch's recurrences, elementwise, without a gradient -------
def _polynomial_of(name, recurrence, doc):
    # torch.special.<name>(x, n) (torch's keyword names): x and n broadcast and promoted
    # (integers to the default dtype), n truncated to an integer per element; computed in
    # that dtype, as torch's kernels do, and returned outside the graph (no derivative)
    def function(x, n):
        a, b = binary.operands(name, x, n, floating=True)
        values, n = (float_input(v) for v in promote(a._array, b._array)[:2])    # (as torch:
        values, n = np.broadcast_arrays(values, n)      # promoted first, then made floating)
        if values.dtype.kind == "c":          # torch's kernels have no complex form
            raise NotImplementedError(f"{name}: not implemented for {values.dtype} tensors")
        xp = backend.array_module(values)
        with np.errstate(all="ignore"):
            order = xp.where(xp.isfinite(n), xp.trunc(n), -1).astype(np.int64)
            return constant(xp.asarray(recurrence(xp, values, order), dtype=values.dtype))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc + """ ``n`` (a Tensor or a number) is truncated to an integer per
    element (0 below 0); integers give the default dtype. Without a gradient, as torch's."""
    return function


def _recurrence(xp, x, n, first, step):
    # P_n of the three-term recurrence from P_0 = 1 and P_1 = first: P_k = step(k, P_k-2,
    # P_k-1), k = 2..n, each element's n picked as the loop passes it; 0 for n < 0
    one = xp.ones_like(x)
    out = xp.where(n == 0, one, xp.where(n == 1, first, 0 * x))
    out = xp.where(n < 0, 0 * one, out)
    p, q = one, first
    for k in range(2, int(n.max(initial=1)) + 1):
        p, q = q, step(k, p, q)
        out = xp.where(n == k, q, out)
    return out


def _chebyshev(kind, shifted):
    # T, U, V, W (shifted: of 2x - 1): torch's ends (|y| = 1) and its trigonometric form for
    # large n inside (-1, 1), else the recurrence P_k = 2y·P_k-1 - P_k-2
    def recurrence(xp, x, n):
        y = x + x - 1 if shifted else x
        first = {"t": y, "u": y + y, "v": y + y - 1, "w": y + y + 1}[kind]
        large = {"t": 6, "u": 8, "v": 8, "w": 8}[kind] if not shifted else \
            {"t": 6, "u": 6, "v": 6, "w": 4}[kind]
        by_trig = (n > large) & (xp.abs(y) < 1)   # the recurrence runs only to the others' n
        out = _recurrence(xp, x, xp.where(by_trig | (xp.abs(y) == 1), 0, n), first,
                          lambda k, p, q: (y + y) * q - p)
        theta, odd = xp.arccos(y), n % 2 == 1
        sign = xp.where(odd, -1, 1)
        if kind == "t":
            top, bottom, trig = 1 + 0 * n, sign, xp.cos(n * theta)
        elif kind == "u":
            top, bottom = n + 1, sign * (n + 1)
            trig = xp.where(xp.sin(theta) != 0, xp.sin((n + 1) * theta) / xp.sin(theta),
                            (n + 1) * xp.cos((n + 1) * theta) / y)
        elif kind == "v":
            top, bottom = 1 + 0 * n, sign * (n + n + 1)
            trig = xp.where(xp.sin(theta / 2) != 1, xp.cos((n + 0.5) * theta)
                            / xp.cos(theta / 2), bottom)
        else:
            top, bottom = n + n + 1, sign
            trig = xp.where(xp.cos(theta / 2) != 1, xp.sin((n + 0.5) * theta)
                            / xp.sin(theta / 2), xp.where(y > 0, top, bottom))
        out = xp.where(by_trig, trig, out)
        out = xp.where(y == 1, top, xp.where(y == -1, bottom, out))
        return xp.where(n < 0, 0, out)
    return recurrence


def _hermite_h(xp, x, n):
    return _recurrence(xp, x, n, x + x, lambda k, p, q: (x + x) * q - (2 * k - 2) * p)


def _hermite_he(xp, x, n):
    return _recurrence(xp, x, n, x, lambda k, p, q: x * q - (k - 1) * p)


def _laguerre_l(xp, x, n):
    out = _recurrence(xp, x, n, 1 - x,
                      lambda k, p, q: (((2 * k - 2) + (1 - x)) * q - (k - 1) * p) / k)
    return xp.where((x == 0) & (n >= 0), 1, out)


def _legendre_p(xp, x, n):
    out = _recurrence(xp, x, n, x,
                      lambda k, p, q: ((2 * k - 1) * x * q - (k - 1) * p) / k)
    ends = xp.where((x > 0) | (n % 2 == 0), 1, -1)
    return xp.where((xp.abs(x) == 1) & (n >= 0), ends, out)


chebyshev_polynomial_t = _polynomial_of("chebyshev_polynomial_t", _chebyshev("t", False),
                                        """The Chebyshev polynomial of the first kind
    Tₙ(x) (``torch.special.chebyshev_polynomial_t``): T₀ = 1, T₁ = x, Tₖ = 2x·Tₖ₋₁ - Tₖ₋₂;
    cos(n·acos x) for n > 6 inside (-1, 1), as torch's.""")
chebyshev_polynomial_u = _polynomial_of("chebyshev_polynomial_u", _chebyshev("u", False),
                                        """The Chebyshev polynomial of the second kind
    Uₙ(x) (``torch.special.chebyshev_polynomial_u``): U₀ = 1, U₁ = 2x, then as Tₙ's
    recurrence; sin((n + 1)θ)/sin θ with θ = acos x for n > 8 inside (-1, 1).""")
chebyshev_polynomial_v = _polynomial_of("chebyshev_polynomial_v", _chebyshev("v", False),
                                        """The Chebyshev polynomial of the third kind
    Vₙ(x) (``torch.special.chebyshev_polynomial_v``): V₀ = 1, V₁ = 2x - 1, then as Tₙ's
    recurrence; cos((n + ½)θ)/cos(θ/2) for n > 8 inside (-1, 1).""")
chebyshev_polynomial_w = _polynomial_of("chebyshev_polynomial_w", _chebyshev("w", False),
                                        """The Chebyshev polynomial of the fourth kind
    Wₙ(x) (``torch.special.chebyshev_polynomial_w``): W₀ = 1, W₁ = 2x + 1, then as Tₙ's
    recurrence; sin((n + ½)θ)/sin(θ/2) for n > 8 inside (-1, 1).""")
shifted_chebyshev_polynomial_t = _polynomial_of(
    "shifted_chebyshev_polynomial_t", _chebyshev("t", True), """Tₙ(2x - 1), the Chebyshev
    polynomial of the first kind on [0, 1] (``torch.special.shifted_chebyshev_polynomial_t``).""")
shifted_chebyshev_polynomial_u = _polynomial_of(
    "shifted_chebyshev_polynomial_u", _chebyshev("u", True), """Uₙ(2x - 1), the Chebyshev
    polynomial of the second kind on [0, 1]
    (``torch.special.shifted_chebyshev_polynomial_u``).""")
shifted_chebyshev_polynomial_v = _polynomial_of(
    "shifted_chebyshev_polynomial_v", _chebyshev("v", True), """Vₙ(2x - 1), the Chebyshev
    polynomial of the third kind on [0, 1]
    (``torch.special.shifted_chebyshev_polynomial_v``).""")
shifted_chebyshev_polynomial_w = _polynomial_of(
    "shifted_chebyshev_polynomial_w", _chebyshev("w", True), """Wₙ(2x - 1), the Chebyshev
    polynomial of the fourth kind on [0, 1]
    (``torch.special.shifted_chebyshev_polynomial_w``).""")
hermite_polynomial_h = _polynomial_of("hermite_polynomial_h", _hermite_h, """The physicists'
    Hermite polynomial Hₙ(x) (``torch.special.hermite_polynomial_h``): H₀ = 1, H₁ = 2x,
    Hₖ = 2x·Hₖ₋₁ - 2(k - 1)·Hₖ₋₂.""")
hermite_polynomial_he = _polynomial_of("hermite_polynomial_he", _hermite_he, """The
    probabilists' Hermite polynomial Heₙ(x) (``torch.special.hermite_polynomial_he``): He₀ =
    1, He₁ = x, Heₖ = x·Heₖ₋₁ - (k - 1)·Heₖ₋₂.""")
laguerre_polynomial_l = _polynomial_of("laguerre_polynomial_l", _laguerre_l, """The Laguerre
    polynomial Lₙ(x) (``torch.special.laguerre_polynomial_l``): L₀ = 1, L₁ = 1 - x,
    k·Lₖ = (2k - 1 - x)·Lₖ₋₁ - (k - 1)·Lₖ₋₂; 1 at x = 0.""")
legendre_polynomial_p = _polynomial_of("legendre_polynomial_p", _legendre_p, """The Legendre
    polynomial Pₙ(x) (``torch.special.legendre_polynomial_p``): P₀ = 1, P₁ = x,
    k·Pₖ = (2k - 1)·x·Pₖ₋₁ - (k - 1)·Pₖ₋₂; ±1 at x = ±1.""")
