"""Elementwise ops: arithmetic, maximum/minimum, the unary functions, clamp, casts and
copies; their ``Function``s, then the functions that apply them (``where`` and
``masked_fill`` are ``masking.py``'s, named here too)."""

import numbers
import operator

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd.function import Function
from ..autograd.graph import node_alias
from ..dtypes import (ArgumentError, accumulation_dtype, cast_gradient, is_floating, is_half,
                      python_number, upcast_half)
from . import masking
from .masking import Where, masked_fill, where  # noqa: F401  (the elementwise names, kept)
from .base import (arithmetic, broadcast, check_number_fits, check_orderable, check_tensor,
                   complex_sign, conj, constant, converted, copy_in_order, fitted, float_input,
                   int_as_read, integer_power, keep, power_slope, promote,
                   result_type, rounded, rsqrt_array, scalar_power, subtraction, torch_sign,
                   unbroadcast, c_power, ShapeError)


# ----- binary arithmetic ----------------------------------------------------------------------
class Add(Function):
    name, combine, sign = "add", operator.add, 1          # sign: of b's gradient

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a.shape, b.shape       # a 0-d operand cast to a half result first: torch's
        return broadcast(ctx.function.name, ctx.function.combine, *promote(a, b)[:2])

    @staticmethod
    def backward(ctx, grad):
        a_shape, b_shape = ctx.shapes
        need_a, need_b = ctx.needs_input_grad      # a constant (a mask) needs no sum
        grad_b = -grad if need_b and ctx.function.sign < 0 else grad
        return (unbroadcast(grad, a_shape) if need_a else None,
                unbroadcast(grad_b, b_shape) if need_b else None)


class Sub(Add):
    name, combine, sign = "sub", operator.sub, -1

    @staticmethod
    def forward(ctx, a, b):
        if a.dtype.kind == "b" or b.dtype.kind == "b":
            subtraction("sub", a, b)                            # a bool: torch's error
        return Add.forward(ctx, a, b)


class Mul(Function):
    name, combine = "mul", operator.mul

    @classmethod
    def apply(cls, a, b):
        # a 0-d half x times a number: torch keeps the number at float32 (its opmath), where
        # one wrapped beside a 0-d x takes x's dtype here; so in float32, rounded once
        if type(b) in (int, float) and getattr(a, "ndim", 1) == 0 and is_half(a.dtype):
            return super().apply(a.astype(np.float32), b).astype(a.dtype)
        return super().apply(a, b)

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a.shape, b.shape
        if a.dtype == b.dtype:                      # the usual case: nothing to promote
            Mul.save_what_backward_reads(ctx, a, b)
            return broadcast(ctx.function.name, ctx.function.combine, a, b)
        a, b, dtype = promote(a, b, opmath=b.ndim == 0)     # torch's: a 0-d b stays float32
        Mul.save_what_backward_reads(ctx, a, b)     # as computed: backward rounds as torch
        return rounded(broadcast(ctx.function.name, ctx.function.combine, a, b), dtype)

    b_read_by_its_own_gradient = False       # Div's is: -grad·a / b²

    @staticmethod
    def save_what_backward_reads(ctx, a, b):
        # a's gradient reads b, b's reads a: x * 2.0 keeps only the 2.0, so x may change
        # in place before backward, as in torch
        need_a, need_b = ctx.needs_input_grad
        keep_b = need_a or need_b and ctx.function.b_read_by_its_own_gradient
        ctx.save_for_backward(a if need_b else None, b if keep_b else None)

    @staticmethod
    def backward(ctx, grad):
        a, b = conj(*ctx.saved)            # complex: grad · conj(b), as torch's
        a_shape, b_shape = ctx.shapes
        mul = operator.mul
        grad_a = unbroadcast(arithmetic("mul", mul, grad, b), a_shape) \
            if ctx.needs_input_grad[0] else None
        grad_b = unbroadcast(arithmetic("mul", mul, grad, a), b_shape) \
            if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


_INTEGERS = frozenset([int] + [np.dtype(code).type for code in "bBhHiIlLqQ"])  # and NumPy's


class Div(Mul):
    name, combine = "div", operator.truediv
    b_read_by_its_own_gradient = True

    @classmethod
    def apply(cls, a, b):
        # an int beside an integer tensor enters as read, not wrapped into its dtype:
        # u8 / 300 divides by 300.0, as torch's (``int_as_read``)
        if b.__class__ in _INTEGERS:             # (a NumPy int too: a Python int to torch)
            b = int_as_read(int(b), a)
        elif a.__class__ in _INTEGERS:
            a = int_as_read(int(a), b)
        return super().apply(a, b)

    @staticmethod
    def forward(ctx, a, b):
        if a.dtype.kind in "biu" and b.dtype.kind in "biu":
            # integers and bools divide in the default dtype (float32), each cast straight
            # to it, as torch's: int8 / tensor(300) is 1 / 300.0, not 1 / 44
            a, b = float_input(a), float_input(b)
        return Mul.forward(ctx, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = conj(*ctx.saved)            # complex: grad / conj(b), as torch's
        a_shape, b_shape = ctx.shapes
        div, mul = operator.truediv, operator.mul
        grad_a = unbroadcast(arithmetic("div", div, grad, b), a_shape) \
            if ctx.needs_input_grad[0] else None
        grad_b = None
        if ctx.needs_input_grad[1]:          # -grad·a / b², each step rounded as in torch
            numerator = arithmetic("mul", mul, -grad, a)
            grad_b = unbroadcast(arithmetic("div", div, numerator,
                                            arithmetic("mul", mul, b, b)), b_shape)
        return grad_a, grad_b


class Extremum(Function):
    """Elementwise maximum or minimum: a tie halves the gradient; a NaN passes it to both."""

    pick = beats = None             # the NumPy function; where an operand strictly wins

    @staticmethod
    def forward(ctx, a, b):
        a, b, _ = promote(a, b)
        pick = ctx.function.pick
        check_orderable(pick, a)
        ctx.save_for_backward(a, b)
        return broadcast(pick, getattr(backend.array_module(a), pick), a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        xp, beats = backend.array_module(grad), ctx.function.beats
        shared = xp.where(a == b, grad / 2, grad)                  # (broadcast shape)
        return (unbroadcast(xp.where(beats(b, a), 0, shared).astype(grad.dtype), a.shape)
                if ctx.needs_input_grad[0] else None,
                unbroadcast(xp.where(beats(a, b), 0, shared).astype(grad.dtype), b.shape)
                if ctx.needs_input_grad[1] else None)


class Maximum(Extremum):
    pick, beats = "maximum", operator.gt


class Minimum(Extremum):
    pick, beats = "minimum", operator.lt


# ----- unary ----------------------------------------------------------------------------------
class Neg(Function):
    @staticmethod
    def forward(ctx, x):
        if x.dtype == np.bool_:                                     # torch's error
            raise RuntimeError("neg: negation, the `-` operator, on a bool tensor is not "
                               "supported; to invert a mask use `~` or logical_not()")
        return -x

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Pow(Function):
    """``x ** exponent`` for a number; a floating x keeps its dtype, an integer one to a
    float power gives the default dtype (torch's)."""

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.save_for_backward(x)
        ctx.exponent = exponent
        if is_floating(x.dtype):
            return scalar_power(x, exponent).astype(x.dtype, copy=False)
        return scalar_power(float_input(x) if isinstance(exponent, float) else x, exponent)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        if ctx.exponent == 0:            # x⁰ is constant: 0, not 0 · 0⁻¹ = NaN at x = 0
            return backend.array_module(grad).zeros_like(grad)
        if x.dtype.kind == "c":          # grad · conj(n x^(n-1)), as torch's
            return grad * _conj(ctx.exponent * x ** (ctx.exponent - 1))
        return grad * power_slope(x, ctx.exponent)


class PowOfNumber(Function):
    """``base ** x`` for a number ``base`` (``2 ** x``), in the dtype torch gives the number
    beside x. d/dx = base**x · log(base): NaN for a negative base, and 0 where base is 0
    and x >= 0 (torch's: 0 ** x is flat there, not 0 · -inf)."""

    @staticmethod
    def forward(ctx, x, base):
        number = _tensor.as_tensor(base, constant(x))._array       # torch's dtype for it
        base_array, x_wide, dtype = promote(number, x, opmath=True)
        if dtype == np.bool_:
            raise NotImplementedError("pow: not implemented for bool tensors")
        xp = backend.array_module(x)
        if is_floating(dtype):
            with np.errstate(all="ignore"):              # (-2) ** 0.5 is NaN, 0 ** -1 inf
                out = xp.power(base_array, x_wide).astype(dtype, copy=False)
        else:
            out = integer_power(xp, base_array, x_wide)
        ctx.base, ctx.base_is_zero = base, base == 0    # base: the formula of double backward
        ctx.save_for_backward(out, *([x] if ctx.base_is_zero else []))    # x: where x >= 0
        with np.errstate(all="ignore"):
            ctx.log_base = float(np.log(np.float64(base)))                # NaN if base < 0
        return out

    @staticmethod
    def backward(ctx, grad):
        out = ctx.saved[0]
        with np.errstate(all="ignore"):
            grad_x = grad * (out * ctx.log_base)
        if ctx.base_is_zero:
            xp = backend.array_module(grad)
            grad_x = xp.where(ctx.saved[1] >= 0, xp.zeros((), grad.dtype), grad_x)
        return grad_x


class PowTensor(Function):
    """``x ** exponent`` for two tensors, broadcast, in torch's promoted dtype (half precision
    computed in float32). d/dx = exponent · x^(exponent - 1), 0 where exponent is 0;
    d/dexponent = out · log(x), 0 where x is 0 and exponent >= 0 (torch's choices)."""

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.shapes = x.shape, exponent.shape
        x, exponent, dtype = promote(x, exponent)
        if dtype == np.bool_:
            raise NotImplementedError("pow: not implemented for bool tensors")
        xp = backend.array_module(x)
        if dtype.kind in "iu":
            out = broadcast("pow", lambda b, e: integer_power(xp, b, e), x, exponent)
        else:
            wide = accumulation_dtype(dtype)
            out = broadcast("pow", lambda b, e: c_power(xp, b, e), x.astype(wide, copy=False),
                            exponent.astype(wide, copy=False)).astype(dtype, copy=False)
        ctx.save_for_backward(x, exponent, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, exponent, out = ctx.saved
        xp, zero = backend.array_module(grad), backend.array_module(grad).zeros((), grad.dtype)
        need_x, need_exponent = ctx.needs_input_grad
        grad_x = grad_exponent = None
        if need_x:
            slope = conj(exponent * c_power(xp, x, exponent - 1))[0]
            grad_x = unbroadcast(xp.where(exponent == 0, zero, grad * slope), ctx.shapes[0])
        if need_exponent:
            positive = exponent >= 0 if exponent.dtype.kind != "c" else \
                (exponent.imag == 0) & (exponent.real >= 0)
            slope = conj(xp.where(positive & (x == 0), zero, out * xp.log(x)))[0]
            grad_exponent = unbroadcast(grad * slope, ctx.shapes[1])
        return grad_x, grad_exponent


class Unary(Function):
    """An elementwise ``f(xp, x)`` whose derivative ``df(grad, kept)`` needs only the input
    or only the output, which is all it saves (``saves``). For a complex x, ``df`` returns
    grad · conj(f'(x)), as torch's (``_conj``)."""

    saves = "out"                   # "out" or "x"

    @staticmethod
    def forward(ctx, x):
        function = ctx.function
        out = function.f(np if type(x) is np.ndarray else backend.array_module(x), x)
        ctx.save_for_backward(out if function.saves == "out" else x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (kept,) = ctx.saved
        return ctx.function.df(grad, kept)


def _in_opmath(xp_function, x):
    # half precision computed in float32 and rounded once, as torch's
    out = xp_function(upcast_half(float_input(x)))
    return out.astype(x.dtype, copy=False) if is_floating(x.dtype) else out


def in_opmath(compute):
    """``compute`` of float16/bfloat16 tensors done in float32 and rounded once to the first
    one's dtype, as PyTorch's kernels compute half precision (their opmath), where the same
    composite in the dtype would round after each op; other dtypes go straight through. The
    Tensor-level form of ``_in_opmath`` (which works on a node's arrays).

    Args:
        compute: a function of Tensors of one dtype, returning one Tensor.

    Example:
        >>> silu = in_opmath(lambda x: x * x.sigmoid())    # bfloat16 x: one rounding
        >>> y = in_opmath(lambda b, x, w: b + x @ w)(bias, x, w)
    """
    def run(*tensors):
        dtype = tensors[0].dtype
        if is_half(dtype):
            return compute(*(t.to(np.float32) for t in tensors)).to(dtype)
        return compute(*tensors)
    return run


def _half_slope(df, grad, out):
    # torch's dedicated backward kernels (tanh_backward, sigmoid_backward) take half
    # precision to float32 and round once, where the same formula in the dtype rounds per op
    return df(grad.astype(np.float32), out.astype(np.float32)).astype(grad.dtype)


def _conj(slope):
    # conj(f'(z)): torch's gradient through a complex f is grad · conj(f'(z)) (ops/complex.py);
    # a real slope costs one dtype check
    return slope.conj() if slope.dtype.kind == "c" else slope


class Exp(Unary):
    def f(xp, x):
        return xp.exp(float_input(x))

    def df(grad, out):                       # d exp(x) = exp(x)
        return grad * _conj(out)


class Log(Unary):
    saves = "x"

    def f(xp, x):
        return xp.log(float_input(x))

    def df(grad, x):                         # d log(x) = 1 / x
        return grad / _conj(x)


class Sqrt(Unary):
    def f(xp, x):
        return xp.sqrt(float_input(x))

    def df(grad, out):                       # d sqrt(x) = 1 / (2 sqrt(x))
        return grad / (2 * _conj(out))


class Rsqrt(Unary):
    """1 / sqrt(x), one node (the norms' rstd), rounded once in half precision."""

    def f(xp, x):
        return rsqrt_array(float_input(x))

    def df(grad, out):                       # -1 / (2 x^(3/2)) = -out³ / 2, out³ as torch's
        return grad * _conj(-0.5 * scalar_power(out, 3))


class Tanh(Unary):
    def f(xp, x):
        return xp.tanh(float_input(x))

    def df(grad, out):                       # d tanh(x) = 1 - tanh(x)²
        if is_half(out.dtype):
            return _half_slope(Tanh.df, grad, out)
        return grad * _conj(1 - out * out)


class Sigmoid(Unary):
    """σ(x) = max(e, [x >= 0]) / (1 + e) with e = exp(-|x|) <= 1: 1/(1 + e⁻ˣ) for x >= 0
    and eˣ/(1 + eˣ) below, with no overflow and no 1 + tanh(x/2) cancelling for negative x
    (σ(-40) is 4.2e-18, not 0); the max picks 1 or e without a select, which NumPy runs
    branchy and slow on mixed signs. Complex x: (1 + tanh(x/2))/2. One node saving σ."""

    def f(xp, x):
        if x.dtype.kind == "c":
            return 0.5 * (1 + xp.tanh(x * 0.5))

        def real(x32):
            e = xp.exp(-xp.abs(x32))
            numerator = xp.maximum(e, x32 >= 0)        # 1 for x >= 0, else e (NaN stays)
            e += 1
            numerator /= e
            return numerator
        return _in_opmath(real, x)

    def df(grad, out):                       # dσ = σ (1 - σ)
        if out.dtype.kind == "c":
            return grad * _conj(out * (1 - out))
        if out.dtype == np.float16:           # torch's kernel: per op in float16, this order
            return grad * (1 - out) * out
        if is_half(out.dtype):
            return _half_slope(Sigmoid.df, grad, out)
        return grad * out * (1 - out)


class Relu(Unary):                  # PyTorch's node name: ReluBackward0
    def f(xp, x):
        check_orderable("relu", x)
        return xp.maximum(x, 0)

    def df(grad, out):       # grad where not out <= 0 (at NaN too), else 0, as torch's
        # threshold: a where (base.keep), so an inf or NaN grad stops there too
        return keep(grad, ~(out <= 0))


ReLU = Relu                         # its former name, still importable


class Abs(Unary):
    """|x|; its gradient is 0 at x = 0 and at a NaN x, as torch's."""

    saves = "x"

    def f(xp, x):
        if x.dtype == np.bool_:                                     # as torch's
            raise NotImplementedError("abs: not implemented for bool tensors")
        return xp.abs(x)

    def df(grad, x):
        if x.dtype.kind == "c":            # d|z| = z / |z|, 0 at 0 (torch's)
            return grad * complex_sign(x)
        return grad * torch_sign(x).astype(grad.dtype, copy=False)


class Erf(Unary):
    """erf(x) = 2/√π ∫₀ˣ exp(-t²) dt (the exact GELU)."""

    saves = "x"

    def f(xp, x):
        if x.dtype.kind == "c":                                     # as torch's
            raise NotImplementedError("erf: not implemented for complex tensors")
        return backend.erf(float_input(x))

    def df(grad, x):
        xp = backend.array_module(x)
        if is_half(x.dtype):
            # torch's formula, each op rounded to the dtype: (2/√π · exp(-x²)) · grad, the
            # scale a float32 one
            slope = xp.exp(-(x * x)).astype(np.float32) * np.float32(2 / np.sqrt(np.pi))
            return slope.astype(x.dtype) * grad
        return grad * (2 / np.sqrt(np.pi)) * xp.exp(-x * x)


class Sign(Function):
    @staticmethod
    def forward(ctx, x):
        return torch_sign(x)

    @staticmethod
    def backward(ctx, grad):
        return backend.array_module(grad).zeros_like(grad)


# ----- selections: clamp, where, masked_fill --------------------------------------------------
class Clamp(Function):
    """``min(max(x, low), high)``, each bound an array or None. The gradient goes to x where
    low <= x <= high, to low where x < low < high, to high where x > high or high < low."""

    @staticmethod
    def forward(ctx, x, low, high):
        check_orderable("clamp", x)
        xp = backend.array_module(x)
        # torch's dtype of all three at once; backward compares the bounds cast to it
        dtype = result_type(*(a for a in (x, low, high) if a is not None))
        out, used = x.astype(dtype, copy=False), []          # (silent: inside apply)
        for bound, combine in ((low, xp.maximum), (high, xp.minimum)):
            if bound is not None:
                bound = bound.astype(dtype, copy=False)
                out = broadcast("clamp", combine, out, bound)
            used.append(bound)
        ctx.save_for_backward(x, *used)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, low, high = ctx.saved
        inside = backend.array_module(grad).ones(x.shape, bool)
        if low is not None:
            inside = inside & (x >= low)
        if high is not None:
            inside = inside & (x <= high)
        need_x, need_low, need_high = ctx.needs_input_grad
        grad_x = unbroadcast(keep(grad, inside), x.shape) if need_x else None
        grad_low = grad_high = None
        if need_low:
            below = x < low if high is None else (x < low) & (low < high)
            grad_low = unbroadcast(keep(grad, below), low.shape)
        if need_high:
            above = x > high if low is None else (x > high) | (high < low)
            grad_high = unbroadcast(keep(grad, above), high.shape)
        return grad_x, grad_low, grad_high


# clamp with number bounds: torch's clamp(Scalar, Scalar) overload, ClampBackward1 (with
# Tensor bounds: ClampBackward0, Clamp's own)
ClampScalars = node_alias(Clamp, "Clamp", "Backward1", alias="ClampScalars")


# ----- casts and copies -----------------------------------------------------------------------
class Cast(Function):
    @staticmethod
    def forward(ctx, x, dtype, order=None):    # order: dims in memory, outermost first
        ctx.input_dtype = x.dtype
        return converted(x, dtype) if order is None else copy_in_order(x, order, dtype)

    @staticmethod
    def backward(ctx, grad):
        return cast_gradient(grad, ctx.input_dtype)      # complex to real: the real part


class Clone(Function):
    @staticmethod
    def forward(ctx, x, order=None):           # order: dims in memory, outermost first
        return x.copy() if order is None else copy_in_order(x, order)

    @staticmethod
    def backward(ctx, grad):
        return grad


class ToDevice(Function):
    @staticmethod
    def forward(ctx, x, device):
        ctx.input_device = backend.device_of(x)
        return backend.to_device(x, device)

    @staticmethod
    def backward(ctx, grad):
        return backend.to_device(grad, ctx.input_device)


# ----- the functions: mg.exp, x.exp(), ... ----------------------------------------------------
def _unary(name, function, doc):
    # mg.exp(x), which checks that x is a Tensor; as Tensor.exp, ``.method`` needs no check
    def checked(input):
        return function.apply(check_tensor(name, input))

    def method(x):
        return function.apply(x)
    for f in (checked, method):
        f.__name__, f.__qualname__, f.__doc__ = name, name, doc
    checked.method = method
    return checked


exp = _unary("exp", Exp, "Elementwise e**x (``torch.exp``); an integer x gives the default dtype.")
log = _unary("log", Log, "Elementwise natural logarithm (``torch.log``).")
sqrt = _unary("sqrt", Sqrt, "Elementwise square root (``torch.sqrt``).")
rsqrt = _unary("rsqrt", Rsqrt, "Elementwise 1 / sqrt(x) (``torch.rsqrt``), one node.")
tanh = _unary("tanh", Tanh, "Elementwise tanh (``torch.tanh``).")
sigmoid = _unary("sigmoid", Sigmoid, "Elementwise 1 / (1 + e**-x) (``torch.sigmoid``).")
relu = _unary("relu", Relu, "Elementwise max(x, 0) (``torch.relu``); the gradient at 0 is 0.")
abs = _unary("abs", Abs, "Elementwise |x| (``torch.abs``); the gradient at 0 is 0.")
sign = _unary("sign", Sign, "Elementwise -1, 0 or 1 (0 for NaN); the gradient is 0.")
erf = _unary("erf", Erf, "The error function, elementwise (``torch.erf``).")


def neg(x):
    """Elementwise -x."""
    return Neg.apply(x)


def pow(input, exponent):
    """``input ** exponent`` (``torch.pow``): for a number ``exponent``; for a tensor one,
    broadcast (``PowTensor``: both get torch's gradient); ``mg.pow(number, x)``
    (``number ** x``) is any real number to a tensor's power (``PowOfNumber``), an integer x
    with an integer number staying integral, as torch's."""
    x = input if isinstance(input, _tensor.Tensor) else python_number(input)
    if isinstance(exponent, _tensor.Tensor):
        if _is_real(x):
            if exponent.dtype.kind == "c":          # the number as a complex 0-d tensor
                return PowTensor.apply(_tensor.as_tensor(complex(x), exponent), exponent)
            return PowOfNumber.apply(exponent, base=x)
        if isinstance(x, complex):                  # as a complex 0-d tensor, as torch's
            return PowTensor.apply(_tensor.as_tensor(x, exponent), exponent)
        return PowTensor.apply(check_tensor("pow", x), exponent)
    check_tensor("pow", x)
    if isinstance(exponent, np.generic):     # np.float16(2) is 2.0, np.True_ 1.0, as torch's
        exponent = python_number(exponent)
    if isinstance(exponent, bool):
        if x.dtype == np.bool_:          # torch's: x ** True is x, x ** False is all True
            return constant(x._array | (not exponent))
        exponent = int(exponent)
    if isinstance(exponent, complex):        # x ** 1j: a complex 0-d tensor, as torch's
        return PowTensor.apply(x, _tensor.as_tensor(exponent, x))
    if not isinstance(exponent, numbers.Real):
        raise TypeError(f"pow: exponent must be a real number, got {type(exponent).__name__}")
    if x.dtype == np.bool_ and isinstance(exponent, numbers.Integral):
        x = x.astype(np.int64)           # a bool tensor to an integer power: int64, as torch's
    if x.dtype.kind in "iu" and isinstance(exponent, numbers.Integral) and exponent < 0:
        raise RuntimeError(f"pow: integers to negative integer powers are not allowed "
                           f"({x.dtype} tensor, exponent {exponent})")
    if isinstance(exponent, numbers.Integral) or is_half(x.dtype):
        check_number_fits("pow", exponent, x)      # int8 ** 300: torch's RuntimeError
    return Pow.apply(x, exponent=exponent)


def rpow(x, base):
    """``base ** x`` (``Tensor.__rpow__``): ``pow(base, x)`` for a real number or a Tensor
    ``base`` (torch's ``x.__rpow__(base)``)."""
    if isinstance(base, np.generic):
        base = python_number(base)
    return pow(base, x) if isinstance(base, (numbers.Number, _tensor.Tensor)) else \
        NotImplemented


def _is_real(value):
    return isinstance(value, numbers.Number) and not isinstance(value, complex)


def square(input):
    """Elementwise x² (``torch.square``): an integer dtype stays integral, a bool x gives
    int64, as torch's."""
    if check_tensor("square", input).dtype == np.bool_:
        input = input.astype(np.int64)
    return pow(input, 2)


def maximum(input, other):
    """Elementwise maximum (``torch.maximum``); a tie halves the gradient."""
    return Maximum.apply(input, other)


def minimum(input, other):
    """Elementwise minimum (``torch.minimum``); a tie halves the gradient."""
    return Minimum.apply(input, other)


def clamp(input, min=None, max=None):
    """Each element limited to [min, max] (``torch.clamp``), each bound a number, a tensor
    (broadcast) or None; min > max gives max."""
    if min is None and max is None:
        raise ArgumentError("clamp: at least one of min and max must not be None")
    for name, bound in (("min", min), ("max", max)):
        if isinstance(bound, complex) and not is_floating(input.dtype):    # complex or integral x
            raise NotImplementedError("clamp is not supported for complex types")
        if isinstance(bound, complex) and bound.imag:   # torch's checked cast to x's type
            raise RuntimeError(f"clamp: {name}={bound!r} cannot be converted to type "
                               f"{input.dtype} without overflow")
        if bound is not None and not isinstance(bound, (_tensor.Tensor, numbers.Number)):
            raise TypeError(f"clamp: {name} must be a number, a Tensor or None, "
                            f"got {type(bound).__name__} {bound!r}")
    dims = [b.ndim > 0 if isinstance(b, _tensor.Tensor) else None for b in (min, max)]
    if True in dims and None in dims and not (min is None or max is None):   # Tensor, number
        raise TypeError("clamp: min and max must both be Tensors or both numbers (torch's two "
                        f"signatures), got {type(min).__name__} and {type(max).__name__}")
    bounds = [b.real if isinstance(b, complex) else b for b in (min, max) if b is not None]
    dtype = result_type(input, *(_tensor.as_tensor(b, input) for b in bounds))     # of all three
    if dtype == np.bool_ and (len(bounds) == 2 or not isinstance(bounds[0], _tensor.Tensor)):
        raise NotImplementedError("clamp: torch has no bool kernel but with one Tensor bound")
    min, max = (b if b is None or isinstance(b, _tensor.Tensor) else    # a number in that dtype:
                constant(input.xp.asarray(fitted("clamp", b, dtype), dtype)) for b in (min, max))
    node = Clamp if True in dims or False in dims else ClampScalars    # a Tensor bound or not
    return node.apply(input, min, max)          # int8 with max=300 is torch's RuntimeError above


def _triangle(fn, x, diagonal):
    check_tensor(fn, x)
    if isinstance(diagonal, _tensor.Tensor) and diagonal.dtype.kind in "iu":
        diagonal = operator.index(diagonal)     # a one-element int tensor: its int, as torch's
    if isinstance(diagonal, bool) or not isinstance(diagonal, numbers.Integral):
        raise TypeError(f"{fn}: diagonal must be an int, got {diagonal!r}")
    if x.ndim < 2:
        raise ShapeError(f"{fn}: x must have at least 2 dims, got shape {x.shape}")
    rows, cols = x.shape[-2:]
    keep = getattr(x.xp, fn)(x.xp.ones((rows, cols), dtype=bool), int(diagonal))  # (rows, cols)
    node = masking.Tril if fn == "tril" else masking.Triu       # torch's TrilBackward0
    return masking.masked_fill_as(x, ~keep, 0, node)    # 0, not x · 0: inf or NaN above stays out


def tril(input, diagonal=0):
    """The lower triangle of the last two dims, the rest 0 (``torch.tril``): the elements
    with ``col - row <= diagonal``. Example: ``mg.tril(mg.ones(T, T))``, a causal mask."""
    return _triangle("tril", input, diagonal)


def triu(input, diagonal=0):
    """The upper triangle of the last two dims (``col - row >= diagonal``), the rest 0
    (``torch.triu``)."""
    return _triangle("triu", input, diagonal)
