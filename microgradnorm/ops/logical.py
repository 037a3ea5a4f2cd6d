"""Tests and logic: ``isnan``/``isinf``/``isfinite``, ``any``/``all``, ``isclose``/
``allclose``/``equal``, ``nonzero``, the comparisons by name (``eq``, ``lt``, ...), the
logical and bitwise operators, and integer division (``//``, ``%``, ``fmod``), as PyTorch
defines them. Tests, comparisons and bitwise results are constants (no gradient flows
through them); ``remainder`` and ``fmod`` carry torch's gradient, and ``floor_divide``, as
torch's, has none to give.

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods; ``operators``
makes the pairs of dunders (``__and__``, ``__rand__``) for ``Tensor``."""

import numbers
import operator

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd.function import Function
from ..meta_arrays import refuse_mixed, refuse_values
from ..dtypes import bfloat16, float_of, get_default_dtype, is_floating, is_half
from .base import (ALL_DIMS, broadcast, broadcast_shape, check_orderable, check_tensor,
                   constant, half_rounded, normalize_axis, promote, result_dtype, unbroadcast)


def _is_operand(value):
    # a Tensor or a real number (bool, NumPy's bool included): what PyTorch's binary ops take
    return isinstance(value, (_tensor.Tensor, numbers.Number, np.bool_)) and \
        not isinstance(value, complex)


def _binary_operands(fn, input, other, both_numbers=False):
    """``(input, other)`` as Tensors, a number beside the other's dtype as torch types it;
    one of them must be a Tensor, the other a Tensor or a number (``both_numbers``: both
    may be real Python numbers, input then a 0-d tensor, as ``binary.operands``)."""
    Tensor = _tensor.Tensor
    neither = not isinstance(input, Tensor) and not isinstance(other, Tensor)
    if neither and not (both_numbers and isinstance(input, numbers.Real)
                        and isinstance(other, numbers.Real)):
        raise TypeError(f"{fn}: expected a Tensor, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    for name, value in (("input", input), ("other", other)):
        if not _is_operand(value):
            raise TypeError(f"{fn}: {name} must be a Tensor or a number, got "
                            f"{type(value).__name__}")
    if neither:
        input = _tensor.tensor(input)          # torch's Scalar overload: a 0-d input
    # an int beside an integer tensor wraps into its dtype (``as_tensor``): uint8 & -1 is
    # uint8 & 255, int8 < 300 is int8 < 44, as torch's
    like = input if isinstance(input, Tensor) else other
    return _tensor.as_tensor(input, like), _tensor.as_tensor(other, like)


# ----- tests: isnan, isinf, isfinite ----------------------------------------------------------
def _classify(fn, xp_name, x):
    check_tensor(fn, x)
    xp = x.xp
    return constant(xp.asarray(getattr(xp, xp_name)(x._array)))


def isnan(input):
    """True where x is NaN (``torch.isnan``); never for integer and bool x."""
    return _classify("isnan", "isnan", input)


def isinf(input):
    """True where x is +inf or -inf (``torch.isinf``)."""
    return _classify("isinf", "isinf", input)


def isposinf(input):
    """True where x is +inf (``torch.isposinf``); never for integer and bool x."""
    return _classify("isposinf", "isposinf", _not_complex("isposinf", input))


def isneginf(input):
    """True where x is -inf (``torch.isneginf``); never for integer and bool x."""
    return _classify("isneginf", "isneginf", _not_complex("isneginf", input))


def _not_complex(fn, x):
    if getattr(x, "dtype", None) is not None and x.dtype.kind == "c":
        raise RuntimeError(f"{fn} does not support complex inputs.")
    return x


def isreal(input):
    """True where x's imaginary part is 0 (``torch.isreal``): everywhere for a real x."""
    check_tensor("isreal", input)
    data = input._array
    return constant(data.imag == 0 if data.dtype.kind == "c" else input.xp.ones(input.shape, bool))


def isfinite(input):
    """True where x is neither NaN nor infinite (``torch.isfinite``); always for integer x."""
    return _classify("isfinite", "isfinite", input)


# ----- any, all -------------------------------------------------------------------------------
def _truth(fn, x, dim, keepdim, axis, out, keepdims):
    # bool results, except uint8 in, uint8 out (torch's legacy rule); ``axis``, ``keepdims``
    # and ``out=None`` are NumPy's spellings, which np.all(t) passes
    check_tensor(fn, x)
    if out is not None:
        raise TypeError(f"{fn}: out= is not supported; use the returned tensor")
    axis = normalize_axis(fn, ALL_DIMS if axis is None else axis, x.ndim, dim=dim)
    keepdim = keepdim if keepdims is None else keepdims
    out = getattr(x._array != 0, fn)(axis=axis, keepdims=bool(keepdim))   # NaN is true
    dtype = np.uint8 if x.dtype == np.uint8 else np.bool_
    return constant(x.xp.asarray(out, dtype=dtype))


def any(input, dim=None, keepdim=False, *, axis=None, out=None, keepdims=None):
    """True if any element over ``dim`` (None: every element; an int or a tuple) is nonzero
    (``torch.any``); False over nothing. A bool tensor, uint8 for a uint8 x (torch's).
    NumPy's ``axis``/``keepdims`` are taken too, so ``np.any(t)`` works."""
    return _truth("any", input, dim, keepdim, axis, out, keepdims)


def all(input, dim=None, keepdim=False, *, axis=None, out=None, keepdims=None):
    """True if every element over ``dim`` is nonzero (``torch.all``); True over nothing.
    Arguments and result dtype as ``any``."""
    return _truth("all", input, dim, keepdim, axis, out, keepdims)


# ----- closeness and equality -----------------------------------------------------------------
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where ``|input - other| <= atol + rtol · |other|``, or where they are equal (so
    inf matches inf), broadcast (``torch.isclose``). Both must have one dtype, as torch's;
    integer tensors compare in the default dtype, as theirs.

    Args:
        input, other: the tensors.
        rtol, atol: the relative and absolute tolerances, each >= 0.
        equal_nan: count NaN beside NaN as close.
    """
    check_tensor("isclose", input)
    check_tensor("isclose", other)
    if input.dtype != other.dtype:
        raise RuntimeError(f"isclose: {input.dtype} did not match {other.dtype} (input and "
                           "other must have one dtype)")
    rtol, atol = float_of(rtol, "isclose", "rtol"), float_of(atol, "isclose", "atol")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"isclose: {name} must be greater than or equal to zero, but "
                               f"got {value}")
    a, b = input._array, other._array
    close = broadcast("isclose", operator.eq, a, b)
    if equal_nan and is_floating(a.dtype):
        close = close | (input.xp.isnan(a) & input.xp.isnan(b))
    if rtol == 0 and atol == 0:
        return constant(input.xp.asarray(close))
    # the errors by the tensor ops: torch's dtypes for each step (integers and bools in the
    # default dtype, so |a - b| does not wrap around; float16 computed in float32, rounded)
    if a.dtype.kind in "biu":
        a, b = a.astype(get_default_dtype()), b.astype(get_default_dtype())
    a, b = constant(a), constant(b)
    with np.errstate(invalid="ignore", over="ignore"):      # inf - inf: NaN, not close
        allowed = (b * rtol).abs() + atol
        actual = (a - b).abs()
    return constant(close | (isfinite(actual)._array & (actual <= allowed)._array))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if every element is close, ``isclose(...).all()``, as a Python bool
    (``torch.allclose``); one dtype for both, as torch's."""
    check_tensor("allclose", input)
    return bool(isclose(input, other, rtol, atol, equal_nan)._array.all())


def equal(input, other):
    """True if both have one shape and equal elements, as a Python bool (``torch.equal``);
    the dtypes may differ (compared as promoted), a NaN is never equal."""
    check_tensor("equal", input)
    check_tensor("equal", other)
    if input.shape != other.shape:
        return False
    a, b, _ = promote(input._array, other._array)
    return bool((a == b).all())


# ----- nonzero ------------------------------------------------------------------------------
def nonzero(input, *, as_tuple=False):
    """The int64 indices of the nonzero elements of x (NaN counts), in row-major order
    (``torch.nonzero``).

    Args:
        input: the tensor.
        as_tuple: False, one (n, x.ndim) tensor, a row per element; True, a tuple of x.ndim
            1-D tensors, one per dim (one for a 0-d x), as ``x[...]`` takes them.

    Example:
        >>> mg.tensor([[1, 0], [0, 2]]).nonzero()                # tensor([[0, 0], [1, 1]])
    """
    check_tensor("nonzero", input)
    refuse_values("nonzero", input._array)
    xp = input.xp
    found = xp.nonzero(input._array.reshape(-1) if input.ndim == 0 else input._array)
    found = [index.astype(np.int64, copy=False) for index in found]
    if as_tuple:
        return tuple(constant(index) for index in found)
    if input.ndim == 0:
        return constant(xp.zeros((found[0].size, 0), dtype=np.int64))
    return constant(xp.stack(found, axis=1))


def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero(input)`` as exactly ``size`` rows (``torch.nonzero_static``): the first
    ``size`` indices, then rows of ``fill_value``; int64, (size, input.ndim).

    Example:
        >>> mg.tensor([0, 3, 0, 5]).nonzero_static(size=3)       # [[1], [3], [-1]]
    """
    check_tensor("nonzero_static", input)
    for name, value in (("size", size), ("fill_value", fill_value)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise TypeError(f"nonzero_static(): argument '{name}' must be int, not "
                            f"{type(value).__name__}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    if not -(1 << 63) <= fill_value < 1 << 63:
        raise ValueError("nonzero_static: fill_value must fit in int64 (Overflow when "
                         "unpacking long long)")
    found = input.xp.argwhere(input._array)[:size]                      # (<= size, ndim)
    out = input.xp.full((int(size), input.ndim), int(fill_value), dtype=np.int64)
    out[:found.shape[0]] = found
    return constant(out)


# ----- comparisons by name --------------------------------------------------------------------
def _comparison(fn, dunder, symbol):
    # mg.eq(x, y) is x == y: Tensor's operator, once it knows both are operands
    def compare(input, other):
        check_tensor(fn, input)
        if not isinstance(other, (_tensor.Tensor, numbers.Number)):   # complex numbers too
            raise TypeError(f"{fn}: other must be a Tensor or a number, got "
                            f"{type(other).__name__}")
        return getattr(input, dunder)(other)
    compare.__name__ = compare.__qualname__ = fn
    compare.__doc__ = (f"``input {symbol} other``, elementwise, broadcast (``torch.{fn}``): a "
                       "bool tensor, compared in the dtype PyTorch promotes to.")
    return compare


eq = _comparison("eq", "__eq__", "==")
ne = _comparison("ne", "__ne__", "!=")
lt = _comparison("lt", "__lt__", "<")
le = _comparison("le", "__le__", "<=")
gt = _comparison("gt", "__gt__", ">")
ge = _comparison("ge", "__ge__", ">=")
# torch's longer names for them
not_equal = _comparison("not_equal", "__ne__", "!=")
less, less_equal = _comparison("less", "__lt__", "<"), _comparison("less_equal", "__le__", "<=")
greater = _comparison("greater", "__gt__", ">")
greater_equal = _comparison("greater_equal", "__ge__", ">=")


# ----- logical and bitwise --------------------------------------------------------------------
def _logical(fn, combine):
    # any dtypes, each element read as nonzero or not; a bool result, broadcast
    def logical(input, other):
        for value in (input, other):
            check_tensor(fn, value)
        truth = broadcast(fn, combine, input._array != 0, other._array != 0)
        return constant(input.xp.asarray(truth))
    logical.__name__ = logical.__qualname__ = fn
    logical.__doc__ = (f"Elementwise {fn.removeprefix('logical_')} of ``input != 0`` and "
                       f"``other != 0`` (``torch.{fn}``), broadcast: a bool tensor.")
    return logical


logical_and = _logical("logical_and", np.logical_and)
logical_or = _logical("logical_or", np.logical_or)
logical_xor = _logical("logical_xor", np.logical_xor)


def logical_not(input):
    """True where x is zero (``torch.logical_not``): a bool tensor of any x."""
    check_tensor("logical_not", input)
    return constant(input.xp.asarray(input._array == 0))


def _integral(fn, dtype):
    # PyTorch's bitwise kernels exist for integers and bool only
    if dtype.kind not in "biu":
        raise NotImplementedError(f"{fn}: not implemented for {dtype} tensors (integer and "
                                  "bool only)")


def _bitwise(fn, combine, symbol):
    def bitwise(input, other):
        input, other = _binary_operands(fn, input, other)
        a, b, dtype = promote(input._array, other._array)
        _integral(fn, dtype)
        return constant(input.xp.asarray(broadcast(fn, combine, a, b)))
    bitwise.__name__ = bitwise.__qualname__ = fn
    bitwise.__doc__ = (f"Elementwise ``input {symbol} other`` (``torch.{fn}``) of integer or "
                       "bool tensors (or a number), broadcast, in the promoted dtype.")
    return bitwise


bitwise_and = _bitwise("bitwise_and", operator.and_, "&")
bitwise_or = _bitwise("bitwise_or", operator.or_, "|")
bitwise_xor = _bitwise("bitwise_xor", operator.xor, "^")


def bitwise_not(input):
    """Elementwise ``~x`` (``torch.bitwise_not``): each bit flipped for integers, ``not``
    for bools."""
    check_tensor("bitwise_not", input)
    _integral("bitwise_not", input.dtype)
    return constant(input.xp.asarray(~input._array))


def invert(x):
    """``~x`` (``Tensor.__invert__``): ``bitwise_not`` of an integer or bool tensor; a
    floating or complex one is a TypeError, as torch's."""
    if x.dtype.kind not in "biu":
        raise TypeError(f"~ (operator.invert) is only implemented on integer and bool "
                        f"tensors, got {x.dtype}")
    return bitwise_not(x)


# ----- integer division: floor_divide, remainder, fmod ----------------------------------------
def _divided(xp_function, a, b):
    # one dtype for both; half precision computed in float32 and rounded once
    if is_half(a.dtype):
        return xp_function(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return xp_function(a, b)


class FloorDivide(Function):
    """``floor(a / b)`` (``//``); PyTorch defines no derivative for it: backward raises."""

    name, divide = "floor_divide", "floor_divide"

    @staticmethod
    def forward(ctx, a, b, divisor=None):
        # divisor: b's value when it was a Python number (floor_divide reads it unrounded)
        function = ctx.function
        ctx.shapes = a.shape, b.shape
        if function is FloorDivide and is_half(result_dtype(a, b)):    # torch's: div's floor
            xp, dtype = backend.array_module(a), result_dtype(a, b)
            return broadcast("floor_divide", lambda a, b: half_rounded(
                xp, a, b, dtype, "floor", divisor), a, b)
        # unlike add and mul, a number beside a half tensor rounds to half first (torch's)
        a, b, dtype = promote(a, b)
        if dtype.kind in "bc":               # torch has no kernel: nothing to round
            raise NotImplementedError(f"{function.name}: not implemented for {dtype} tensors")
        if dtype.kind in "iu" and a.size and (b == 0).any():
            raise RuntimeError(f"{function.name}: ZeroDivisionError (an integer divided by 0)")
        ctx.save_for_backward(a, b)              # as divided: backward's quotient is forward's
        divide = getattr(backend.array_module(a), function.divide)
        with np.errstate(divide="ignore", invalid="ignore"):       # float x / 0: inf, NaN
            return broadcast(function.name, lambda a, b: _divided(divide, a, b), a, b)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("the derivative for floor_divide is not implemented (as in "
                           "PyTorch); detach() its inputs, or use remainder's")


class Remainder(FloorDivide):
    """``a - b · floor(a / b)``, the sign of b (``%``). d/da = 1, d/db = -floor(a / b)."""

    name, divide = "remainder", "remainder"

    @staticmethod
    def quotient(xp, a, b):
        """The rounded quotient whose negation is d/db."""
        return _divided(xp.floor_divide, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        a_shape, b_shape = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        grad_b = None
        if need_b:
            with np.errstate(divide="ignore", invalid="ignore"):
                quotient = ctx.function.quotient(backend.array_module(grad), a, b)
            grad_b = unbroadcast(-grad * quotient, b_shape)
        return unbroadcast(grad, a_shape) if need_a else None, grad_b


class Fmod(Remainder):
    """``a - b · trunc(a / b)``, the sign of a (C's fmod). d/da = 1, d/db = -trunc(a / b)."""

    name, divide = "fmod", "fmod"

    @staticmethod
    def quotient(xp, a, b):
        """The rounded quotient whose negation is d/db."""
        return _divided(lambda a, b: xp.trunc(a / b), a, b)


def _division(function, input, other, both_numbers=False):
    number = isinstance(other, numbers.Real) and not isinstance(other, (bool, np.bool_))
    divisor = float(other) if number else None          # the number as given, unrounded
    input, other = _binary_operands(function.name, input, other, both_numbers)
    return function.apply(input, other, divisor=divisor)


def floor_divide(input, other):
    """``input // other``, rounded toward -inf, broadcast (``torch.floor_divide``);
    integer inputs stay integral (dividing by 0 is an error), floats give ±inf at 0. Its
    derivative is undefined in PyTorch: a backward through it raises. Two numbers are
    taken too, as torch's: ``floor_divide(7, 2)`` is ``tensor(3)``, ``floor_divide(7.5, 2)``
    ``tensor(3.)`` in the default dtype."""
    return _division(FloorDivide, input, other, both_numbers=True)


def remainder(input, other):
    """``input % other``, Python's modulus: the sign of ``other`` (``torch.remainder``);
    the gradient is 1 for input and ``-floor(input / other)`` for other."""
    return _division(Remainder, input, other)


def fmod(input, other):
    """C's remainder, the sign of ``input`` (``torch.fmod``); ``input`` must be a Tensor.
    The gradient is 1 for input and ``-trunc(input / other)`` for other."""
    check_tensor("fmod", input)
    return _division(Fmod, input, other)


# ----- Tensor's operators ---------------------------------------------------------------------
def comparison(op):
    """``x < y`` for Tensor's dunders: a constant bool tensor, compared in the dtype PyTorch
    promotes to; NotImplemented beside an object that is no operand (as torch, so that
    ``pytest.approx(...) == t`` and the like ask the other side)."""
    ordered = op not in (operator.eq, operator.ne)      # == and != need no order
    def compare(self, other):
        if not isinstance(other, (_tensor.Tensor, numbers.Number, np.ndarray, np.generic,
                                  list, tuple)) and not backend.is_cupy_array(other):
            return NotImplemented
        other = _tensor.as_tensor(other, self)      # an int wraps: int8 < 300 is < 44
        if type(self._array) is not type(other._array):    # a meta beside a CPU one
            refuse_mixed(op.__name__, self._array, other._array)
        a, b, _ = promote(self._array, other._array)
        if ordered:
            check_orderable(op.__name__, a)
        try:
            if a.dtype is not bfloat16:
                return _tensor.Tensor._from_op(op(a, b), None)
            with backend.silent_floats():            # bfloat16 warns at NaN; torch does not
                return _tensor.Tensor._from_op(op(a, b), None)
        except ValueError:                           # shapes that do not broadcast
            broadcast_shape(op.__name__, a.shape, b.shape)
            raise
    return compare


def operators(function):
    """``(x op y, y op x)``: ``function(x, y)`` and ``function(y, x)`` as Tensor's dunders,
    NotImplemented beside an operand that is neither a Tensor nor a number (Python then
    raises its TypeError, as for torch)."""
    def forward(self, other):
        return function(self, other) if _is_operand(other) else NotImplemented

    def reflected(self, other):
        return function(other, self) if _is_operand(other) else NotImplemented
    return forward, reflected


METHODS = ("isnan", "isinf", "isposinf", "isneginf", "isreal", "isfinite", "any", "all",
           "isclose", "allclose", "equal", "nonzero", "eq", "ne", "lt", "le", "gt", "ge",
           "logical_and", "logical_or", "nonzero_static",
           "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_not", "floor_divide", "remainder", "fmod", "not_equal", "less",
           "less_equal", "greater", "greater_equal")
