"""PyTorch's binary arithmetic by name: ``add``/``sub``/``mul``/``div`` with their keywords
(``alpha``, ``rounding_mode``) and aliases, the two-argument functions (``atan2``,
``hypot``, ``logaddexp``, ``copysign``, ``fmax``, ``xlogy``, ``float_power``, ...) and their
in-place forms; ops/ternary.py (``lerp``, ``addcmul``, ``addcdiv``) shares its helpers.

Operands promote as the operators do (``x + y``: ops/base.py); half precision computes in
float32 and rounds once (``dtypes.accumulation_dtype``), as torch's kernels, except where
torch's rounds each step (``rounding_mode`` by a tensor, ``xlogy``). Each function with a
closed-form derivative is one node whose backward is torch's formula, singular points
included (``atan2`` at the origin, ``xlogy`` at x = 0, ``fmax`` beside a NaN). ``METHODS``
names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import math
import numbers
import warnings

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from ..autograd import is_grad_enabled, no_grad
from ..autograd.function import Function
from ..autograd.inference import refuse_write
from ..dtypes import accumulation_dtype, get_default_dtype, is_half
from . import elementwise
from .base import (broadcast, check_fits, conj, float_input, fma, half_rounded, int_as_read,
                   promote, result_dtype, subtraction, unbroadcast)
from .elementwise import Add, Div, Mul, Sub
from .legacy_overloads import scalar_first
from .numpy_names import REQUIRED, numpy_operands, user_stacklevel
from .pointwise import _in_place


# ----- what binary.py and ternary.py share ----------------------------------------------------
def operands(fn, input, other, numbers_as=("input", "other"), both_numbers=False,
             names=("input", "other"), floating=False):
    """``(input, other)`` as Tensors, a number typed beside the other operand as torch types
    it; ``numbers_as`` names the arguments that may be a number, ``both_numbers`` whether
    both may (``torch.add(2, 3)`` is ``tensor(5)``); ``names``, the arguments' own names.
    ``floating``: the op computes integers in floating point, so that an int beside an
    integer tensor enters as read, not wrapped into its dtype (``int_as_read``)."""
    Tensor = _tensor.Tensor
    numbers_as = [names[("input", "other").index(n)] for n in numbers_as]
    for name, value in zip(names, (input, other)):
        if not isinstance(value, Tensor) and (name not in numbers_as or not _is_number(value)):
            what = "a Tensor or a number" if name in numbers_as else "a Tensor"
            raise TypeError(f"{fn}: {name} must be {what}, got {type(value).__name__}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        if not both_numbers:
            raise TypeError(f"{fn}: expected a Tensor, got two numbers ({input!r}, {other!r})")
        input = _tensor.tensor(input)
    like = input if isinstance(input, Tensor) else other
    if floating:
        input, other = int_as_read(input, like), int_as_read(other, like)
    return _tensor.as_tensor(input, like), _tensor.as_tensor(other, like)


def _numbers_kept(fn, input, other, floating=False):
    # ``operands``, but a number after a 0-d half tensor stays a number, which ``Mul.apply``
    # keeps at float32 as torch's mul and div do (wrapped beside it, it would be rounded)
    a, b = operands(fn, input, other, both_numbers=True, floating=floating)
    return a, (other if type(other) in (int, float) and a.ndim == 0 and is_half(a.dtype)
               else b)


def _is_number(value):
    return isinstance(value, (numbers.Number, np.bool_))


def scalar(fn, name, value, dtype, negated=False):
    """``value`` (``alpha``, ``value``, a number ``weight``) as a Python number for a result of
    ``dtype``, by torch's checks: a 0-d tensor gives its item; a complex number needs a
    complex result; ``alpha`` may not be fractional for an integer result nor a bool for a
    non-bool one, while ``value`` is cast (truncated); ``dtype`` must hold it (``-value``
    where the op ``negated`` it: sub's alpha)."""
    if isinstance(value, _tensor.Tensor) and value.ndim == 0:
        value = value.item()
    if not _is_number(value):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")
    kind, integral = dtype.kind, isinstance(value, (numbers.Integral, np.bool_))
    if isinstance(value, complex) and kind != "c":
        raise RuntimeError(f"{fn}: {name}={value!r} is complex but the result is {dtype}")
    if name == "alpha" and isinstance(value, (bool, np.bool_)) and kind != "b":
        raise RuntimeError(f"{fn}: a bool alpha is only supported for bool results, got "
                           f"{dtype}")
    if name == "alpha" and kind in "biu" and not integral:
        raise RuntimeError(f"{fn}: for integral input tensors, alpha must not be a floating "
                           f"point number, got {value!r}")
    check_fits(fn, -value if negated else value, dtype)    # int8 alpha=300: no wrap, as torch
    return int(value) if kind in "iu" else bool(value) if kind == "b" else value


def write_out(fn, operands, out, compute, stacklevel=None):
    """torch's ``out=``: ``compute()`` written into the Tensor ``out``, which is returned
    (the callers call ``compute`` themselves when ``out`` is None). ``out`` is resized to the
    result's shape (with torch's deprecation warning where it held elements, naming the first
    line outside this package, or ``stacklevel``'s where given) and takes the result cast to
    its dtype where torch's casting rule allows (not floating into integer, not complex into
    real: RuntimeError); an ``out`` that overlaps an operand without being it is torch's
    RuntimeError. Nothing is recorded: while grad is on, an operand or ``out`` that requires
    grad is torch's RuntimeError."""
    Tensor = _tensor.Tensor
    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    refuse_write(out)                         # an inference tensor outside its mode
    _tensor.check_writable(out._array)        # an expanded out, before it is resized (torch)
    if is_grad_enabled() and any(isinstance(v, Tensor) and v.requires_grad
                                 for v in (*operands, out)):
        raise RuntimeError(f"{fn}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    for operand in operands:
        _tensor.check_no_partial_overlap(out._array, operand)
    result = compute()
    if not _tensor._can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {dtypes.torch_name(result.dtype)} can't be cast to "
                           f"the desired output type {dtypes.torch_name(out.dtype)}")
    version = out._version_box[0]
    if tuple(out.shape) != tuple(result.shape):
        if any(isinstance(v, Tensor) and _same_memory(v._array, out._array) for v in operands):
            # an operand as out is written in place, never resized: torch's in-place error
            raise _tensor.BroadcastError(f"{fn}(): output with shape {list(out.shape)} "
                                         "doesn't match the broadcast shape "
                                         f"{list(result.shape)}")
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had "
                          f"shape {list(out.shape)}, which does not match the required output "
                          f"shape {list(result.shape)}. This behavior is deprecated, and in a "
                          "future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing "
                          "it, inplace, to zero elements with t.resize_(0).", UserWarning,
                          stacklevel=stacklevel or user_stacklevel())
        out.resize_(result.shape)
    with no_grad():
        out.copy_(result)
    out._version_box[0] = version + 1          # one write, resized or not, as torch counts
    return out


def _same_memory(a, b):
    # one view of one memory: the same start, shape and strides
    return a is b or type(a) is np.ndarray and type(b) is np.ndarray and (
        a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        and a.shape == b.shape and a.strides == b.strides)


def in_place(name, function):
    """``x.<name>_(...)``: pointwise's in-place form (Tensor._inplace's rules); an argument
    that is the tensor itself is read as it was, through a copy in the graph, so that a
    recorded ``x.addcmul_(x, x)`` does not feed its own result back into itself."""
    method = _in_place(name, function)

    def in_place(self, *args, **kwargs):
        if self.requires_grad:
            args = [a.clone() if a is self else a for a in args]
            kwargs = {k: a.clone() if a is self else a for k, a in kwargs.items()}
        return method(self, *args, **kwargs)
    in_place.__name__ = in_place.__qualname__ = method.__name__
    in_place.__doc__ = method.__doc__
    return in_place


# ----- add, sub, mul, div ---------------------------------------------------------------------
class AddScaled(Function):
    """``a + alpha · b`` with alpha in the result's dtype, fused as torch's kernel (``fma``);
    d/da = 1, d/db = alpha (conjugated for a complex alpha, as torch's)."""

    @staticmethod
    def forward(ctx, a, b, alpha, dtype):
        ctx.shapes, ctx.alpha = (a.shape, b.shape), alpha
        if dtype == np.bool_:                          # alpha is True or False here
            return broadcast("add", np.logical_or, a, b & alpha)
        wide = accumulation_dtype(dtype)
        scale = np.array(alpha).astype(dtype).astype(wide)       # integers wrap, as torch's
        a, b = (v.astype(dtype, copy=False).astype(wide, copy=False) for v in (a, b))
        return broadcast("add", lambda a, b: fma(scale, b, a, dtype), a, b)

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad
        alpha = ctx.alpha.conjugate() if isinstance(ctx.alpha, complex) else ctx.alpha
        return (unbroadcast(grad, ctx.shapes[0]) if need_a else None,
                unbroadcast(grad * alpha, ctx.shapes[1]) if need_b else None)


def _alpha_first(fn, other, deprecated, alpha, method=False):
    # torch's deprecated (alpha, other) form; its warning writes the method's signature or
    # the function's, as torch's, and names the user's line (two frames up from here)
    if fn == "subtract":                # the only one of the three without the old form
        raise TypeError(f"subtract() takes 1 positional argument but {1 + len(deprecated)} "
                        "were given")
    old, new = (("Number alpha, Tensor other", "Tensor other, *, Number alpha = 1") if method
                else ("Tensor input, Number alpha, Tensor other, *, Tensor out = None",
                      "Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None"))
    return scalar_first(fn, (other, *deprecated), 1, "alpha", alpha != 1, old, new)


def _adding(fn, sign, doc):
    # torch.add, sub, subtract: the operators' nodes when alpha is 1, else one AddScaled
    # the NumPy spellings (x=, x2=, ...) in the signature: a wrapper would cost each call
    def add(input=REQUIRED, other=REQUIRED, *deprecated, alpha=1, out=None, **numpy_names):
        if numpy_names or input is REQUIRED or other is REQUIRED:
            input, other = numpy_operands(fn, input, other, numpy_names)
        if deprecated:                  # torch.add(x, 2, y): its deprecated (alpha, other)
            alpha, (other,) = _alpha_first(fn, other, deprecated, alpha)
        if out is None:
            return _add(input, other, alpha)
        return write_out(fn, (input, other), out, lambda: _add(input, other, alpha))

    def _add(input, other, alpha):
        if sign < 0:                    # a bool refused, a NumPy bool a float: torch's
            input, other = subtraction(fn, input, other)
        input, other = operands(fn, input, other, both_numbers=True)
        if type(alpha) is int and alpha == 1:
            return (Add if sign > 0 else Sub).apply(input, other)
        dtype = result_dtype(input._array, other._array)
        alpha = scalar(fn, "alpha", alpha, dtype, negated=sign < 0)
        return AddScaled.apply(input, other, alpha=alpha if sign > 0 else -alpha, dtype=dtype)

    def method(self, other=REQUIRED, *deprecated, alpha=1, **numpy_names):  # no out=: torch's
        if numpy_names or other is REQUIRED:
            _, other = numpy_operands(fn, self, other, numpy_names, method=True)
        if deprecated:
            alpha, (other,) = _alpha_first(fn, other, deprecated, alpha, method=True)
        return _add(self, other, alpha)
    add.__name__ = add.__qualname__ = method.__name__ = method.__qualname__ = fn
    add.__doc__ = method.__doc__ = doc
    add.method = method
    return add


add = _adding("add", 1, """``input + alpha · other``, broadcast, in the dtype torch promotes
    to (``torch.add``); either may be a number. ``alpha`` scales ``other`` first and the sum
    rounds once; an integer result refuses a fractional alpha (RuntimeError), as torch's.
    ``out=`` writes the sum into a given tensor, as torch's (``write_out``).

    Example:
        >>> exp_avg.mul_(0.9).add_(grad, alpha=0.1)        # Adam's first moment
    """)
sub = _adding("sub", -1, """``input - alpha · other`` (``torch.sub``); arguments as ``add``'s.
    A bool operand is refused (RuntimeError): use ``~`` or ``logical_xor``.""")
subtract = _adding("subtract", -1, "``sub(input, other, alpha=alpha)`` (``torch.subtract``).")


def mul(input, other, *, out=None):
    """``input · other``, broadcast, in the promoted dtype (``torch.mul``); either may be a
    number; ``out=`` as ``add``'s."""
    if out is None:
        return Mul.apply(*_numbers_kept("mul", input, other))
    return write_out("mul", (input, other), out, lambda: mul(input, other))


def multiply(input, other, *, out=None):
    """``mul(input, other)`` (``torch.multiply``)."""
    if out is None:
        return Mul.apply(*_numbers_kept("multiply", input, other))
    return write_out("multiply", (input, other), out, lambda: multiply(input, other))


class DivRounded(Function):
    """``a / b`` rounded toward 0 (``mode`` "trunc") or toward -inf ("floor"), integers
    staying integral; a step function, whose gradient torch defines as 0 for both inputs.
    ``divisor``: b's value when it was a Python number (half precision reads it unrounded);
    half precision is ``base.half_rounded``'s."""

    @staticmethod
    def forward(ctx, a, b, mode, divisor=None):
        ctx.shapes = a.shape, b.shape
        dtype = result_dtype(a, b)
        if dtype == np.bool_ or dtype.kind == "c":
            raise NotImplementedError(f"div: rounding_mode={mode!r} is not implemented for "
                                      f"{dtype} tensors")
        xp = backend.array_module(a)
        if is_half(dtype):
            return broadcast("div", lambda a, b: half_rounded(xp, a, b, dtype, mode, divisor),
                             a, b)
        a, b, dtype = promote(a, b)
        if dtype.kind in "iu":
            if a.size and (b == 0).any():
                raise RuntimeError("div: ZeroDivisionError (an integer divided by 0)")
            quotient = broadcast("div", xp.floor_divide, a, b)
            if mode == "trunc":          # floor is one below trunc where the signs differ
                inexact = (quotient * b != a) & ((a < 0) != (b < 0))
                quotient = quotient + inexact.astype(dtype)
            return quotient
        rounding = xp.floor_divide if mode == "floor" else lambda a, b: xp.trunc(a / b)
        return broadcast("div", rounding, a, b)         # float32, float64: c10's algorithm

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        return tuple(xp.zeros(shape, grad.dtype) if need else None
                     for shape, need in zip(ctx.shapes, ctx.needs_input_grad))


def _div(fn, input, other, rounding_mode, out=None):
    if out is None:
        return _divide(fn, input, other, rounding_mode)
    return write_out(fn, (input, other), out,
                     lambda: _divide(fn, input, other, rounding_mode))


def _divide(fn, input, other, rounding_mode):
    divisor = other if isinstance(other, numbers.Real) else None     # a number, as given
    if rounding_mode is None:
        return Div.apply(*_numbers_kept(fn, input, other, floating=True))
    input, other = operands(fn, input, other, both_numbers=True)
    if not isinstance(rounding_mode, str):
        raise TypeError(f"{fn}: rounding_mode must be None, 'trunc' or 'floor', got "
                        f"{type(rounding_mode).__name__}")
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"{fn}: expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found {rounding_mode!r}")
    return DivRounded.apply(input, other, mode=rounding_mode, divisor=divisor)


def _without_out(function, method):
    # the Tensor method of an ``out=`` function: torch's methods take no ``out`` (TypeError)
    method.__name__ = method.__qualname__ = function.__name__
    method.__doc__ = function.__doc__
    function.method = method


_without_out(mul, lambda self, other: mul(self, other))
_without_out(multiply, lambda self, other: multiply(self, other))


def div(input, other, *, rounding_mode=None, out=None):
    """``input / other``, broadcast (``torch.div``); either may be a number.

    Args:
        input, other: tensors or numbers.
        rounding_mode: None, true division (integers give the default float dtype);
            ``"trunc"`` rounds toward 0, ``"floor"`` toward -inf (Python's ``//``), both
            keeping integer dtypes (an integer divided by 0 is a RuntimeError) and having
            gradient 0, as torch's.
        out: a tensor to write the quotient into, as ``add``'s.
    """
    return _div("div", input, other, rounding_mode, out)


def divide(input, other, *, rounding_mode=None, out=None):
    """``div(input, other, rounding_mode=rounding_mode)`` (``torch.divide``)."""
    return _div("divide", input, other, rounding_mode, out)


def true_divide(input, other, *, out=None):
    """``div(input, other)``, true division (``torch.true_divide``)."""
    return _div("true_divide", input, other, None, out)


_without_out(div, lambda self, other, *, rounding_mode=None:
             _divide("div", self, other, rounding_mode))
_without_out(divide, lambda self, other, *, rounding_mode=None:
             _divide("divide", self, other, rounding_mode))
_without_out(true_divide, lambda self, other: _divide("true_divide", self, other, None))


# ----- two-argument functions with a closed-form gradient -------------------------------------
class Binary(Function):
    """An elementwise ``f(xp, a, b)`` of two operands promoted to one dtype (half precision
    computed in float32); ``da``/``db(grad, a, b, out)`` are its gradients, given what
    ``saves`` names (None for the rest). ``integers``: what an integer or bool result dtype
    does: "float" (the default float dtype), "keep", or "refuse" (NotImplementedError);
    ``opmath`` False computes half precision in its own dtype, each step rounded, as torch's
    kernel of that function does."""

    name, integers, saves, opmath = "", "float", ("a", "b"), True
    complex_error = NotImplementedError          # None: complex operands are computed

    @staticmethod
    def forward(ctx, a, b):
        function = ctx.function
        ctx.shapes = a.shape, b.shape
        if a.dtype.kind in "biu" and b.dtype.kind in "biu" and function.integers != "keep":
            if function.integers == "refuse":
                raise NotImplementedError(f"{function.name}: not implemented for "
                                          f"{result_dtype(a, b)} tensors (give a floating "
                                          "tensor)")
            # each straight to the float, as torch casts: atan2(int8, tensor(300)) reads
            # 300.0, not the 44 of 300 in int8
            a, b, dtype = float_input(a), float_input(b), get_default_dtype()
        else:
            a, b, dtype = promote(a, b)
        if dtype.kind == "c" and function.complex_error:
            raise function.complex_error(f"{function.name}: not implemented for complex "
                                         f"tensors (dtype {dtype})")
        wide = accumulation_dtype(dtype) if function.opmath else dtype
        out = broadcast(function.name, lambda a, b: function.f(backend.array_module(a), a, b),
                        a.astype(wide, copy=False), b.astype(wide, copy=False))
        out = out.astype(dtype, copy=False)
        kept = {"a": a, "b": b, "out": out}
        ctx.save_for_backward(*(kept[name] if name in function.saves else None
                                for name in ("a", "b", "out")))
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved
        (a_shape, b_shape), function = ctx.shapes, ctx.function
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(function.da(grad, a, b, out), a_shape) if need_a else None,
                unbroadcast(function.db(grad, a, b, out), b_shape) if need_b else None)


def _where_zero(condition, values):
    xp = backend.array_module(values)
    return xp.where(condition, xp.zeros((), values.dtype), values)


def _safe_divisor(x):                # x, with 1 where x is 0 (its quotient is masked there)
    return backend.array_module(x).where(x == 0, 1, x)


class Atan2(Binary):
    name = "atan2"

    def f(xp, a, b):
        return xp.arctan2(a, b)

    def da(grad, a, b, out):         # b / (a² + b²), 0 where that is 0 (torch's choice)
        norm = a * a + b * b
        return grad * b * _where_zero(norm == 0, 1 / _safe_divisor(norm))

    def db(grad, a, b, out):         # -a / (a² + b²)
        norm = a * a + b * b
        return grad * -a * _where_zero(norm == 0, 1 / _safe_divisor(norm))


class Hypot(Binary):
    name, integers, saves = "hypot", "refuse", ("a", "b", "out")

    def f(xp, a, b):
        return xp.hypot(a, b)

    def da(grad, a, b, out):         # a / hypot(a, b): NaN at the origin, as torch's
        return grad * a / out

    def db(grad, a, b, out):
        return grad * b / out


def _logaddexp(xp, a, b, exp, scale=None):
    # torch's kernel: max(a, b) + log1p(exp(-|a - b|)) (· scale, fused as its vectorized
    # FMA: float32 sums in float64), and a itself where both are one infinity
    tail = xp.log1p(exp(-xp.abs(a - b)))
    if scale is not None:
        wide = np.dtype(np.float64) if a.dtype == np.float32 else a.dtype
        tail = tail.astype(wide) * wide.type(a.dtype.type(scale))
    out = (xp.maximum(a, b) + tail).astype(a.dtype, copy=False)
    return xp.where(xp.isinf(a) & (a == b), a, out)


class Logaddexp(Binary):
    name, integers, complex_error = "logaddexp", "refuse", None

    def f(xp, a, b):
        if a.dtype.kind != "c":
            return _logaddexp(xp, a, b, xp.exp)
        # the larger real part m plus log1p(e^(smaller - m)), as torch's kernel; two equal
        # infinite real parts give that one (e^(inf - inf) would be NaN)
        larger = a.real >= b.real
        high, low = xp.where(larger, a, b), xp.where(larger, b, a)
        out = high + xp.log1p(xp.exp(low - high))
        return xp.where(xp.isinf(high.real) & (high.real == low.real), high, out)

    def da(grad, a, b, out):         # e^a / (e^a + e^b) = 1 / (1 + e^(b - a))
        return grad / conj(1 + backend.array_module(a).exp(b - a))[0]

    def db(grad, a, b, out):
        return grad / conj(1 + backend.array_module(a).exp(a - b))[0]


class Logaddexp2(Binary):
    name, integers = "logaddexp2", "refuse"

    def f(xp, a, b):
        return _logaddexp(xp, a, b, xp.exp2, 1 / math.log(2))

    def da(grad, a, b, out):         # 1 / (1 + 2^(b - a))
        return grad / (1 + backend.array_module(a).exp2(b - a))

    def db(grad, a, b, out):
        return grad / (1 + backend.array_module(a).exp2(a - b))


class Copysign(Binary):
    name, saves = "copysign", ("a", "out")

    def f(xp, a, b):
        return xp.copysign(a, b)

    def da(grad, a, b, out):         # ±1: out / a, 0 where a is 0 (torch's)
        return grad * _where_zero(a == 0, out / _safe_divisor(a))

    def db(grad, a, b, out):
        return backend.array_module(grad).zeros_like(grad)


class Fmax(Binary):
    """NaN-ignoring maximum: a tie, or a NaN ``b``, gives a all the gradient (torch's)."""

    name, integers, complex_error = "fmax", "keep", RuntimeError

    def f(xp, a, b):
        return xp.fmax(a, b)

    @staticmethod
    def a_wins(a, b):
        return (a >= b) | backend.array_module(b).isnan(b)

    @classmethod
    def da(cls, grad, a, b, out):
        return _where_zero(~cls.a_wins(a, b), grad)

    @classmethod
    def db(cls, grad, a, b, out):
        return _where_zero(cls.a_wins(a, b), grad)


class Fmin(Fmax):
    name = "fmin"

    def f(xp, a, b):
        return xp.fmin(a, b)

    @staticmethod
    def a_wins(a, b):
        return (a <= b) | backend.array_module(b).isnan(b)


def _xlogy(xp, x, y):
    # x · log(y), 0 where x is 0, NaN where y is NaN (torch's)
    values = x * xp.log(y)
    return xp.where(xp.isnan(y), xp.asarray(np.nan, values.dtype),
                    xp.where(x == 0, xp.zeros((), values.dtype), values))


class Xlogy(Binary):
    name, opmath = "xlogy", False           # half precision: log(y) rounded, then x · it
    f = staticmethod(_xlogy)

    def da(grad, a, b, out):         # log(y), 0 where x is 0 and y <= 0 (torch's)
        return _where_zero((a == 0) & (b <= 0), _xlogy(backend.array_module(a), grad, b))

    def db(grad, a, b, out):         # x / y
        return grad * a / b


def _function(name, node, numbers_as, doc):
    # mg.atan2(input, other), ...: the operands checked (which may be numbers), one node
    floating = node.integers == "float"

    def function(input, other):
        return node.apply(*operands(name, input, other, numbers_as=numbers_as,
                                    floating=floating))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


atan2 = _function("atan2", Atan2, (), """The angle of the point (other, input), in (-π, π]
    (``torch.atan2``); d/dinput = other / r², d/dother = -input / r² with r² = input² +
    other², both 0 at the origin, as torch's. Integers give the default dtype.""")
arctan2 = _function("arctan2", Atan2, (), "``atan2(input, other)`` (``torch.arctan2``).")
hypot = _function("hypot", Hypot, (), """``sqrt(input² + other²)`` without overflow
    (``torch.hypot``); the gradient is input / hypot (NaN at the origin, as torch's).
    Floating tensors only.""")
logaddexp = _function("logaddexp", Logaddexp, (), """``log(e^input + e^other)`` without
    overflow (``torch.logaddexp``); the gradient is the softmax weight
    ``1 / (1 + e^(other - input))``. Floating and complex tensors.""")
logaddexp2 = _function("logaddexp2", Logaddexp2, (), """``log2(2^input + 2^other)`` without
    overflow (``torch.logaddexp2``). Floating tensors only.""")
copysign = _function("copysign", Copysign, ("other",), """``|input|`` with the sign of
    ``other`` (-0.0 counts as negative) (``torch.copysign``); ``other`` may be a number.
    d/dinput = ±1 (0 where input is 0), d/dother = 0. Integers give the default dtype.""")
fmax = _function("fmax", Fmax, (), """Elementwise maximum that ignores NaN: NaN only where
    both are (``torch.fmax``). A tie gives input the whole gradient; integers stay
    integral.""")
fmin = _function("fmin", Fmin, (), """Elementwise minimum that ignores NaN (``torch.fmin``);
    ties as ``fmax``'s.""")
xlogy = _function("xlogy", Xlogy, ("input", "other"), """``input · log(other)``, 0 where
    input is 0 (even for other 0), NaN where other is NaN (``torch.xlogy``); either may be
    a number. d/dinput = log(other) (0 where input is 0 and other <= 0), d/dother =
    input / other, as torch's.""")


def float_power(input, exponent):
    """``input ** exponent`` in float64 (complex128 for a complex operand), whatever the
    inputs' dtypes (``torch.float_power``); either may be a number. The gradients are
    ``pow``'s, cast back to each input's dtype."""
    number = float(exponent) if type(exponent) in (int, float) else None
    if type(input) is float and isinstance(exponent, _tensor.Tensor):
        input = _tensor.tensor(np.float64(input))   # read in float64 (an int: as_read's checks)
    input, exponent = operands("float_power", input, exponent, names=("input", "exponent"),
                               floating=True)
    wide = dtypes.complex128 if "c" in (input.dtype.kind, exponent.dtype.kind) \
        else dtypes.float64
    if number is not None and wide == dtypes.float64:   # torch's pow of a number: x^-0.5 = 1/√x
        return elementwise.pow(input.astype(wide, copy=False), number)
    return elementwise.pow(input.astype(wide, copy=False), exponent.astype(wide, copy=False))


# ----- in-place forms -------------------------------------------------------------------------
atan2_ = arctan2_ = in_place("atan2", atan2)
hypot_ = in_place("hypot", hypot)
copysign_ = in_place("copysign", copysign)
xlogy_ = in_place("xlogy", xlogy)
div_checked_ = in_place("div", div)      # Tensor.div_ with a rounding_mode, or of integers
add_scaled_ = in_place("add", add)       # Tensor.add_ and sub_ with an alpha other than 1
sub_scaled_ = in_place("sub", sub)
_float_power_ = in_place("float_power", float_power)
pow_ = in_place("pow", elementwise.pow)  # Tensor.pow_: x's dtype must hold the result, as torch's


def float_power_(self, exponent):
    """In place ``float_power``: only a float64 (or complex128) tensor can take its result,
    as torch's."""
    if self.dtype not in (dtypes.float64, dtypes.complex128):
        raise RuntimeError(f"float_power_: the base has dtype {self.dtype} but the result "
                           "requires float64 (or complex128)")
    return _float_power_(self, exponent)


def subtract_(self, other, *, alpha=1):
    """``self.sub_(other, alpha=alpha)`` (``Tensor.subtract_``)."""
    return self.sub_(other, alpha=alpha)


def multiply_(self, other):
    """``self.mul_(other)`` (``Tensor.multiply_``)."""
    return self.mul_(other)


def divide_(self, other, *, rounding_mode=None):
    """``self.div_(other, rounding_mode=rounding_mode)`` (``Tensor.divide_``)."""
    return self.div_(other, rounding_mode=rounding_mode)


def true_divide_(self, other):
    """``self.div_(other)`` (``Tensor.true_divide_``)."""
    return self.div_(other)


METHODS = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
           "atan2", "arctan2", "hypot", "logaddexp", "logaddexp2", "copysign", "fmax", "fmin",
           "xlogy", "float_power", "atan2_", "arctan2_", "hypot_", "copysign_", "xlogy_",
           "float_power_", "subtract_", "multiply_", "divide_", "true_divide_", "pow_")
