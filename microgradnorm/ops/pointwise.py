"""PyTorch's wider pointwise and scan vocabulary: sin, cos and the logarithmic functions,
rounding (``fix`` is ``trunc``), products, cumulative sums and products, ``diff``, the signs
(``sgn``, ``signbit``), ``nan_to_num``, torch's other names (``absolute``, ``negative``),
one-sided clamps and the in-place forms (``x.exp_()``, ``x.clamp_(0, 1)``, ``x.neg_()``);
tan, the hyperbolic and inverse functions, erfc, erfinv, logit and sinc are in
``ops/special.py``.

Each function with a closed-form derivative is a ``Unary`` node (one node, one saved
array); rounding is a step function whose gradient is 0, as torch's; ``frac`` and ``diff``
are compositions; ``nan_to_num``'s gradient passes where x was finite. ``METHODS`` names
the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import math
import numbers

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from ..autograd import graph, is_grad_enabled
from ..autograd.function import Function
from ..dtypes import is_floating, is_half
from . import elementwise
from .base import (Default, check_tensor, complex_sign, constant, float_input,
                   normalize_axis, result_dtype)
from .elementwise import Unary, _conj, _unary
from .numpy_names import numpy_dim
from .shape import cat

LN_2, LN_10 = math.log(2), math.log(10)


# ----- unary functions with a closed-form derivative ------------------------------------------
class Sin(Unary):
    saves = "x"

    def f(xp, x):
        return xp.sin(float_input(x))

    def df(grad, x):                         # d sin(x) = cos(x)
        return grad * _conj(backend.array_module(x).cos(x))


class Cos(Unary):
    saves = "x"

    def f(xp, x):
        return xp.cos(float_input(x))

    def df(grad, x):                         # d cos(x) = -sin(x)
        return grad * -_conj(backend.array_module(x).sin(x))


class Log10(Unary):
    saves = "x"

    def f(xp, x):
        with np.errstate(divide="ignore", invalid="ignore"):       # log 0 = -inf, as torch
            return xp.log10(float_input(x))

    def df(grad, x):                         # d log10(x) = 1 / (x ln 10)
        return grad / (_conj(x) * LN_10)


class Log2(Unary):
    saves = "x"

    def f(xp, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.log2(float_input(x))

    def df(grad, x):                         # d log2(x) = 1 / (x ln 2)
        return grad / (_conj(x) * LN_2)


class Log1p(Unary):
    """log(1 + x), exact for small x (where 1 + x would round x away)."""

    saves = "x"

    def f(xp, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.log1p(float_input(x))

    def df(grad, x):                         # d log(1 + x) = 1 / (1 + x)
        return grad / _conj(x + 1)


class Expm1(Unary):
    """exp(x) - 1, exact for small x."""

    def f(xp, x):
        return xp.expm1(float_input(x))

    def df(grad, out):                       # d (e^x - 1) = e^x = out + 1
        return grad * (_conj(out) + 1)


class Reciprocal(Unary):
    def f(xp, x):
        with np.errstate(divide="ignore"):                          # 1 / 0 = inf, as torch
            return 1 / float_input(x)

    def df(grad, out):                       # d (1 / x) = -1 / x² = -out²
        return -grad * _conj(out * out)


sin = _unary("sin", Sin, "Elementwise sine (``torch.sin``); an integer x gives the default "
             "dtype.")
cos = _unary("cos", Cos, "Elementwise cosine (``torch.cos``).")
log10 = _unary("log10", Log10, "Elementwise base-10 logarithm (``torch.log10``).")
log2 = _unary("log2", Log2, "Elementwise base-2 logarithm (``torch.log2``).")
log1p = _unary("log1p", Log1p, "Elementwise log(1 + x), exact for small x (``torch.log1p``).")
expm1 = _unary("expm1", Expm1, "Elementwise exp(x) - 1, exact for small x (``torch.expm1``).")
reciprocal = _unary("reciprocal", Reciprocal, "Elementwise 1 / x (``torch.reciprocal``); an "
                    "integer x gives the default dtype, 1 / 0 is inf.")


# ----- rounding: step functions, gradient 0 ---------------------------------------------------
class Floor(Function):
    """A rounding of a floating x by the array function named ``op``; its gradient is 0
    everywhere, as torch's (the steps' derivative where it exists)."""

    op = "floor"

    @staticmethod
    def forward(ctx, x):
        return getattr(backend.array_module(x), ctx.function.op)(x)

    @staticmethod
    def backward(ctx, grad):
        return backend.array_module(grad).zeros_like(grad)


class Ceil(Floor):
    op = "ceil"


class Trunc(Floor):
    op = "trunc"


class Round(Floor):
    """Half to even (``rint``); ``decimals`` scales by 10**decimals first, in float32 for half
    precision, and rounds once to x's dtype, as torch's kernel."""

    @staticmethod
    def forward(ctx, x, decimals):
        xp = backend.array_module(x)
        if decimals == 0:
            return xp.rint(x)
        wide = dtypes.upcast_half(x)
        scale = np.asarray(10.0 ** abs(decimals) if abs(decimals) < 309 else math.inf,
                           dtype=wide.dtype)      # past 1e308 inf, so NaN out, as torch's
        out = xp.rint(wide * scale) / scale if decimals > 0 else xp.rint(wide / scale) * scale
        return out.astype(x.dtype, copy=False)


def _step(fn, function, x, **options):
    # an integer x is already whole: a copy, as torch's; bool has no rounding in torch
    check_tensor(fn, x)
    if x.dtype == np.bool_:
        raise NotImplementedError(f"{fn}: not implemented for bool tensors")
    if x.dtype.kind == "c":
        raise NotImplementedError(f"{fn} is not supported for complex inputs")
    if not is_floating(x.dtype):
        return constant(x._array.copy())
    return function.apply(x, **options)


def floor(input):
    """The largest integer <= x, elementwise (``torch.floor``); the gradient is 0."""
    return _step("floor", Floor, input)


def ceil(input):
    """The smallest integer >= x, elementwise (``torch.ceil``); the gradient is 0."""
    return _step("ceil", Ceil, input)


def trunc(input):
    """x rounded toward 0, elementwise (``torch.trunc``, ``torch.fix``); the gradient is 0."""
    return _step("trunc", Trunc, input)


NO_DECIMALS = Default(0)            # round's default, told from decimals=0 given


def round(input, *, decimals=NO_DECIMALS):
    """x rounded to ``decimals`` decimal places, halves to even (``torch.round``: 2.5 -> 2,
    0.125 -> 0.12 with ``decimals=2``); the gradient is 0.

    Args:
        input: the tensor; integer tensors are returned as a copy (without ``decimals``: torch
            has no integer kernel of its ``decimals`` form, even for 0).
        decimals: the number of decimal places; negative rounds to tens, hundreds, ...
    """
    given, decimals = not isinstance(decimals, Default), getattr(decimals, "value", decimals)
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    check_tensor("round", input)
    if given and not is_floating(input.dtype):
        raise NotImplementedError(f"round: decimals={decimals} is not implemented for "
                                  f"{input.dtype} tensors (floating point only)")
    return _step("round", Round, input, decimals=int(decimals))


def frac(input):
    """The fractional part x - trunc(x), with x's sign (``torch.frac``); its gradient is 1.
    Floating x only, as torch's."""
    check_tensor("frac", input)
    if not is_floating(input.dtype):
        raise NotImplementedError(f"frac: not implemented for {input.dtype} tensors (floating "
                                  "point only)")
    with np.errstate(invalid="ignore"):             # inf - inf: NaN, as torch's
        return input - trunc(input)


# ----- products and scans ---------------------------------------------------------------------
def _along(xp_function, x, axis):
    # a scan along axis in torch's CPU accumulation dtype: half precision in float32, and
    # float32 in float64 (a float32 running sum stays exact to its rounding, and a product
    # that passes float32's max on its way comes back), each result rounded once
    if not (is_half(x.dtype) or x.dtype == np.float32):
        return xp_function(x, axis=axis)
    wide = x.astype(np.float32 if is_half(x.dtype) else np.float64)    # scanned in place
    ufunc = _SCANS.get(xp_function)          # (NumPy's: CuPy's scans stay whole)
    if ufunc is not None and axis < x.ndim - 1 and x.size >= 256 * x.shape[axis]:
        # across rows of 256 elements or more, a row at a time: NumPy's accumulate over a
        # dim that is not the last walks it element by element (7x slower at (256, 1024)
        # dim 0); the same operations in the same order, so the same bits
        rows = np.moveaxis(wide, axis, 0)
        for i in range(1, len(rows)):
            ufunc(rows[i - 1], rows[i], out=rows[i])
    else:
        xp_function(wide, axis=axis, out=wide)       # dtype= would cast in a buffered loop
    return wide.astype(x.dtype)


_SCANS = {np.cumsum: np.add, np.cumprod: np.multiply}


def _exclusive_cumprod(x, axis, reverse=False):
    # the product of the elements before each one along axis (after it, with reverse): 1 first
    xp = backend.array_module(x)
    if reverse:
        x = xp.flip(x, axis)
    out = xp.ones_like(x)
    leading = (slice(None),) * axis
    out[leading + (slice(1, None),)] = xp.cumprod(x, axis=axis)[leading + (slice(None, -1),)]
    return xp.flip(out, axis) if reverse else out


def _reversed_cumsum(x, axis):
    # out[i] = sum of x[k] for k >= i along axis
    xp = backend.array_module(x)
    return xp.flip(_along(xp.cumsum, xp.flip(x, axis), axis), axis)


class Prod(Function):
    """The product over ``axis`` (None: every element). The gradient of x_i is the product of
    the other elements, built from exclusive products on each side: exact with one or many
    zeros, where out / x_i would divide by zero."""

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        ctx.save_for_backward(x)                 # the products of the others come from x
        ctx.axis = axis
        if is_half(x.dtype):
            return x.prod(axis=axis, keepdims=keepdims, dtype=np.float32).astype(x.dtype)
        return x.prod(axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        axis = ctx.axis
        if x.dtype.kind == "c":                  # torch's complex gradient: grad · conj(∂out/∂x)
            x = x.conj()
        rows = x.reshape(-1) if axis is None else x            # one slice along axis 0
        along = 0 if axis is None else axis
        others = _exclusive_cumprod(rows, along) * _exclusive_cumprod(rows, along, True)
        kept = tuple(1 if axis is None or i == axis else n for i, n in enumerate(x.shape))
        return grad.reshape(kept) * others.reshape(x.shape)


class CumSum(Function):
    """Running sums along ``axis``; the gradient is the reversed running sum of grad."""

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis = axis
        return _along(backend.array_module(x).cumsum, x, axis)

    @staticmethod
    def backward(ctx, grad):
        return _reversed_cumsum(grad, ctx.axis)


class CumProd(Function):
    r"""Running products along ``axis``. d out_k / d x_i is the product of x_j, j <= k,
    j != i. Before the first zero of a slice that is out_k / x_i, so the gradient is
    :math:`\sum_{k \ge i} g_k out_k / x_i`; at the first zero it is
    :math:`\sum_{k \ge z} g_k c_k` with c the running product where that zero counts as 1;
    after it, 0 (a zero is among the factors). Exact with any number of zeros."""

    @staticmethod
    def forward(ctx, x, axis):
        out = _along(backend.array_module(x).cumprod, x, axis)
        ctx.save_for_backward(x, out)
        ctx.axis = axis
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved
        xp, axis = backend.array_module(x), ctx.axis
        if x.size <= 1 or x.shape[axis] == 1:    # out = x: grad itself, at inf or NaN too
            return grad
        if x.dtype.kind == "c":                  # torch's complex gradient: grad · conj(∂out/∂x)
            x, out = x.conj(), out.conj()
        zeros_so_far = xp.cumsum(x == 0, axis=axis)
        before = zeros_so_far == 0                                 # before the first zero
        first = (x == 0) & (zeros_so_far == 1)                     # the first zero itself
        one = xp.ones((), x.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            # the sum stops before the first zero: out is 0 after it (NaN past an inf)
            grad_out = xp.where(before, grad * out, xp.zeros((), grad.dtype))
            grad_before = _reversed_cumsum(grad_out, axis) / xp.where(before, x, one)
        # the products after that zero up to the second zero (0 beyond it, or NaN past an
        # inf), summed, then times the product before it (±inf, not inf - inf, before it)
        after = xp.cumprod(xp.where(before | first, one, x), axis=axis)
        upto_second = (zeros_so_far == 1) | ((x == 0) & (zeros_so_far == 2))     # (torch's)
        upto_second = xp.where(upto_second, grad * after, xp.zeros((), grad.dtype))
        grad_first = _reversed_cumsum(upto_second, axis) * \
            xp.cumprod(xp.where(before, x, one), axis=axis)
        zero = xp.zeros((), grad.dtype)
        return xp.where(before, grad_before, xp.where(first, grad_first, zero))


ProdDim = graph.node_alias(Prod, "Prod", "Backward1", alias="ProdDim")    # torch's prod(dim)
Cumsum, Cumprod = graph.node_alias(CumSum, "Cumsum"), graph.node_alias(CumProd, "Cumprod")


def _scan_input(fn, x, dtype):
    # x in ``dtype`` (cast first, as torch's), else an integer or bool x as int64 (torch's)
    check_tensor(fn, x)
    if dtype is not None:
        return x.astype(dtypes.as_dtype(dtype), copy=False)
    return x if is_floating(x.dtype) or x.dtype.kind == "c" else x.astype(np.int64, copy=False)


def prod(input, dim=None, keepdim=None, *, dtype=None, axis=None, keepdims=None):
    """The product of the elements over ``dim`` (``torch.prod``); its gradient is exact with
    zeros in x (the product of the other elements).

    Args:
        input: the tensor; an integer or bool x gives int64.
        dim: one int, or None for every element (then ``keepdim`` is refused, as torch's).
        keepdim: keep ``dim`` as size 1.
        dtype: cast x to this dtype first.
        axis, keepdims: NumPy's names for ``dim`` and ``keepdim``, as torch's.

    Shape: x's without ``dim`` (size 1 there with ``keepdim``); 0-d without a dim.

    Example:
        >>> mg.tensor([[1.0, 2.0], [3.0, 4.0]]).prod(1)          # tensor([ 2., 12.])
    """
    if axis is not None:
        dim = numpy_dim("prod", dim, axis)
    if keepdims is not None:
        if keepdim is not None:
            raise TypeError("prod() got multiple values for argument 'keepdim'")
        keepdim = keepdims
    input = _scan_input("prod", input, dtype)
    if dim is None:
        if keepdim:
            raise TypeError("prod: keepdim needs a dim (torch has no prod(x, keepdim=True))")
        out = Prod.apply(input, axis=None, keepdims=False)
    else:
        axis = normalize_axis("prod", dim, input.ndim, single=True)
        # dim 0 or -1 of a 0-d tensor: the element itself
        out = ProdDim.apply(input, axis=axis if input.ndim else None,
                            keepdims=bool(keepdim) and input.ndim > 0)
    # dtype=bool: torch's product stays bool (NumPy's of bools is an integer)
    return out.astype(np.bool_) if input.dtype == np.bool_ else _as_given(out, dtype)


def _as_given(out, dtype):
    # a narrow integer dtype= is the result's, as torch's (NumPy's scans and products run
    # in int64; modulo 2**bits the sums and products are the same)
    return out if dtype is None else out.astype(dtypes.as_dtype(dtype), copy=False)


def _scan(fn, function, x, dim, dtype):
    x = _scan_input(fn, x, dtype)
    axis = normalize_axis(fn, dim, x.ndim, single=True)
    if x.dtype == np.bool_ and x.ndim and x.size:     # dtype=bool: torch has no such kernel
        raise NotImplementedError(f'"{fn}_out_cpu" not implemented for \'Bool\'')
    if x.ndim == 0:                        # one element: the running result is itself
        return _as_given(function.apply(x.reshape(1), axis=0).reshape(()), dtype)
    return _as_given(function.apply(x, axis=axis), dtype)


def cumsum(input, dim=None, *, dtype=None, axis=None):
    """Running sums along ``dim``: ``out[i] = x[0] + ... + x[i]`` (``torch.cumsum``).

    Args:
        input: the tensor; an integer or bool x gives int64.
        dim: the dim to sum along (an int).
        dtype: cast x to this dtype first.
        axis: NumPy's name for ``dim``, as torch's.

    Example:
        >>> mg.tensor([1, 2, 3]).cumsum(0)                       # tensor([1, 3, 6])
    """
    if dim is None:
        dim = numpy_dim("cumsum", dim, axis)
    elif axis is not None:
        numpy_dim("cumsum", dim, axis)
    return _scan("cumsum", Cumsum, input, dim, dtype)


def cumprod(input, dim, *, dtype=None):
    """Running products along ``dim``: ``out[i] = x[0] · ... · x[i]`` (``torch.cumprod``);
    the gradient is exact with zeros in x. An integer or bool x gives int64; ``dtype``
    casts x first."""
    return _scan("cumprod", Cumprod, input, dim, dtype)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``, ``x[i + 1] - x[i]`` applied n times
    (``torch.diff``); a bool x gives ``x[i + 1] != x[i]``.

    Args:
        input: the tensor, at least 1-D.
        n: how many times to difference (0: a copy of x; prepend and append are checked
            but not joined, as torch's).
        dim: the dim along which to take it.
        prepend, append: tensors of x's number of dims joined to x along ``dim`` first.

    Shape: x's, with ``dim`` shorter by n (after ``prepend``/``append``), at least 0.
    """
    check_tensor("diff", input)
    if input.ndim == 0:
        raise RuntimeError("diff: expects input to be at least one-dimensional, got a 0-d "
                           "tensor")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"diff: n must be an int, got {n!r}")
    if n < 0:
        raise RuntimeError(f"diff: order must be non-negative but got {n}")
    axis = normalize_axis("diff", dim, input.ndim, single=True)
    _check_ends(input, prepend, append, axis)
    if n == 0:                  # torch: a copy of x, prepend and append checked, not joined
        return input.clone()
    input = _joined(input, prepend, append, axis)
    leading = (slice(None),) * axis
    for _ in range(n):
        later, earlier = input[leading + (slice(1, None),)], input[leading + (slice(None, -1),)]
        input = later != earlier if input.dtype == np.bool_ else later - earlier
    return input


def _check_ends(x, prepend, append, axis):
    # torch's errors for a prepend or append that cannot be joined to x along axis
    for name, part in (("prepend", prepend), ("append", append)):
        if part is not None and not isinstance(part, _tensor.Tensor):
            raise TypeError(f"diff: {name} must be a Tensor, got {type(part).__name__}")
        if part is not None and part.ndim != x.ndim:
            raise RuntimeError(f"diff: {name} must have as many dims as the input "
                               f"({x.ndim}), got shape {part.shape}")
        if part is not None and any(a != b for i, (a, b) in enumerate(zip(part.shape, x.shape))
                                    if i != axis):
            raise RuntimeError(f"diff: {name} of shape {part.shape} must match the input's "
                               f"shape {x.shape} except along dim {axis}")


def _joined(x, prepend, append, axis):
    # [prepend, x, append] along axis, in the dtype torch's cat gives them
    parts = [t for t in (prepend, x, append) if t is not None]
    if len(parts) == 1:
        return x
    dtype = parts[0].dtype
    for part in parts[1:]:                  # all have dims: torch's rule for cat's inputs
        dtype = result_dtype(np.empty(0, dtype), np.empty(0, part.dtype))
    return cat([p.astype(dtype, copy=False) for p in parts], axis)


# ----- signs, non-finite values and torch's other names -------------------------------------
class Sgn(Function):
    """z / |z| for a complex z, 0 at 0 (``torch.sgn``). Its gradient is torch's,
    (g - sgn(z)² · conj(g)) / (2|z|), 0 at z = 0."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return complex_sign(z)

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved
        xp = backend.array_module(z)
        size, sign = xp.abs(z), complex_sign(z)
        out = (grad - sign * sign * grad.conj()) / (2 * size)
        return xp.where(size == 0, xp.zeros((), out.dtype), out)


def sgn(input):
    """The sign, elementwise (``torch.sgn``): ``sign(x)`` for a real x (-1, 0 or 1, 0 for
    NaN; gradient 0), z / |z| for a complex z (0 at 0), with torch's gradient."""
    if check_tensor("sgn", input).dtype.kind == "c":
        return Sgn.apply(input)
    return elementwise.sign(input)


def signbit(input):
    """True where x's sign bit is set (``torch.signbit``): x < 0, and -0.0 and a NaN
    carrying the sign; a bool tensor outside the graph. Complex x is refused, as torch's."""
    x = check_tensor("signbit", input)._array
    if x.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    return constant(x < 0 if x.dtype.kind in "biu" else input.xp.signbit(x))


class NanToNum(Function):
    """x with NaN, +inf and -inf replaced by the numbers given; the gradient passes where x
    was finite, grad · isfinite(x) (torch's: 0 where a value was replaced)."""

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        xp = backend.array_module(x)
        ctx.save_for_backward(xp.isfinite(x))
        if x.dtype.kind != "c":
            return _replaced(xp, x, nan, posinf, neginf)
        out = xp.empty_like(x)                   # each part on its own, as torch's
        out.real = _replaced(xp, x.real, nan, posinf, neginf)
        out.imag = _replaced(xp, x.imag, nan, posinf, neginf)
        return out

    @staticmethod
    def backward(ctx, grad):
        (finite,) = ctx.saved
        return grad * finite


def _replaced(xp, x, nan, posinf, neginf):
    # the numbers rounded to x's dtype; the largest finite values by default (torch's)
    info = dtypes.finfo(x.dtype)
    nan, posinf, neginf = (xp.asarray(value, dtype=x.dtype) for value in (
        nan, info.max if posinf is None else posinf, info.min if neginf is None else neginf))
    return xp.where(xp.isnan(x), nan, xp.where(x == np.inf, posinf,
                                               xp.where(x == -np.inf, neginf, x)))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """x with NaN, inf and -inf replaced by numbers (``torch.nan_to_num``); the gradient
    passes where x was finite and is 0 where a value was replaced.

    Args:
        input: the tensor; an integer or bool one is returned as a copy.
        nan: the number for NaN (None: 0.0).
        posinf, neginf: the numbers for inf and -inf; None, the largest finite value of
            x's dtype and its negative. Complex x: each part on its own.

    Example:
        >>> mg.tensor([float("nan"), float("inf"), 1.0]).nan_to_num()  # [0., 3.4028e+38, 1.]
    """
    check_tensor("nan_to_num", input)
    numbers_given = {}
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if isinstance(value, _tensor.Tensor):
            value = value.item()
        if value is not None and not isinstance(value, numbers.Real):
            raise TypeError(f"nan_to_num: {name} must be a number or None, got "
                            f"{type(value).__name__} {value!r}")
        numbers_given[name] = None if value is None else float(value)
    if numbers_given["nan"] is None:
        numbers_given["nan"] = 0.0
    if input.dtype.kind in "biu":                # nothing to replace
        return constant(input._array.copy())
    if input.dtype.kind == "c" and input.requires_grad and is_grad_enabled():
        raise RuntimeError("nan_to_num does not support automatic differentiation for "
                           "outputs with complex dtype (torch's rule)")
    return NanToNum.apply(input, **numbers_given)


neg = negative = _unary("neg", elementwise.Neg, "Elementwise -x (``torch.neg``, "
                        "``torch.negative``); a bool tensor is refused (use ``~``), as torch's.")
absolute = elementwise.abs                     # torch's other name
fix = trunc                                    # torch's other name
erf = elementwise.erf                          # here for its Tensor method


# ----- one-sided clamps and the in-place forms ------------------------------------------------
def clamp_min(input, min):
    """``clamp(input, min=min)`` (``torch.clamp_min``): each element at least ``min``."""
    return elementwise.clamp(input, min=min)


def clamp_max(input, max):
    """``clamp(input, max=max)`` (``torch.clamp_max``): each element at most ``max``."""
    return elementwise.clamp(input, max=max)


def _in_place(name, function):
    # x.<name>_(...): function's result written into x, by Tensor._inplace's rules; the
    # result is computed and checked before anything is written, so a refused call changes
    # nothing
    def method(input, *args, **kwargs):
        def compute(before, _value):
            return function(before, *args, **kwargs)

        def write(data):
            out = compute(constant(data), None)._array
            if out.shape != data.shape:
                raise RuntimeError(f"{name}_: output with shape {data.shape} doesn't match "
                                   f"the broadcast shape {out.shape}")
            if not _tensor._can_cast(out.dtype, data.dtype):
                raise RuntimeError(f"{name}_: result type {dtypes.torch_name(out.dtype)} "
                                   "can't be cast to the desired output type "
                                   f"{dtypes.torch_name(data.dtype)}")
            data[...] = out

        for operand in (*args, *kwargs.values()):
            _tensor.check_no_partial_overlap(input._array, operand)
        needs_grad = [v for v in (*args, *kwargs.values())
                      if isinstance(v, _tensor.Tensor) and v.requires_grad]
        return input._inplace(write, compute, needs_grad[0] if needs_grad else None)
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = (f"In place ``{name}``: x takes its result (x's dtype and shape), "
                      "recorded when a graph needs it, as ``add_``.")
    return method


clamp_ = clip_ = _in_place("clamp", elementwise.clamp)
clamp_min_ = _in_place("clamp_min", clamp_min)
clamp_max_ = _in_place("clamp_max", clamp_max)
exp_ = _in_place("exp", elementwise.exp)
log_ = _in_place("log", elementwise.log)
sqrt_ = _in_place("sqrt", elementwise.sqrt)
abs_ = _in_place("abs", elementwise.abs)
sigmoid_ = _in_place("sigmoid", elementwise.sigmoid)
tanh_ = _in_place("tanh", elementwise.tanh)
relu_ = _in_place("relu", elementwise.relu)
sin_ = _in_place("sin", sin)
cos_ = _in_place("cos", cos)
floor_ = _in_place("floor", floor)
ceil_ = _in_place("ceil", ceil)
round_ = _in_place("round", round)
trunc_ = _in_place("trunc", trunc)
frac_ = _in_place("frac", frac)
reciprocal_ = _in_place("reciprocal", reciprocal)
expm1_ = _in_place("expm1", expm1)
log10_ = _in_place("log10", log10)
log2_ = _in_place("log2", log2)
log1p_ = _in_place("log1p", log1p)
erf_ = _in_place("erf", elementwise.erf)
neg_ = negative_ = _in_place("neg", neg)
sign_ = _in_place("sign", elementwise.sign)
sgn_ = _in_place("sgn", sgn)
rsqrt_ = _in_place("rsqrt", elementwise.rsqrt)
square_ = _in_place("square", elementwise.square)
absolute_ = abs_
fix_ = trunc_
nan_to_num_ = _in_place("nan_to_num", nan_to_num)


def _cumulative_in_place(name, function):
    # torch has no in-place cumulative kernel for bool: its NotImplementedError (a
    # RuntimeError) before any cast check, where the out-of-place form gives int64
    method = _in_place(name, function)

    def checked(input, *args, **kwargs):
        if isinstance(input, _tensor.Tensor) and input.dtype == np.bool_:
            raise NotImplementedError(f"{name}_: not implemented for bool tensors (as "
                                      f"torch's {name}_out_cpu); {name}() gives int64")
        return method(input, *args, **kwargs)
    checked.__name__ = checked.__qualname__ = method.__name__
    checked.__doc__ = method.__doc__
    return checked


cumsum_ = _cumulative_in_place("cumsum", cumsum)
cumprod_ = _cumulative_in_place("cumprod", cumprod)


def positive(input):
    """``input`` itself (``torch.positive``, unary +); refused for bool, as torch's."""
    check_tensor("positive", input)
    if input.dtype == np.bool_:
        raise RuntimeError("positive: the `+` operator, on a bool tensor is not supported")
    return input

METHODS = ("sin", "cos", "log10", "log2", "log1p", "expm1", "reciprocal", "floor", "ceil",
           "round", "trunc", "frac", "prod", "cumsum", "cumprod", "diff", "clamp_min",
           "clamp_max", "clamp_", "clip_", "clamp_min_", "clamp_max_", "exp_", "log_", "sqrt_",
           "abs_", "sigmoid_", "tanh_", "relu_", "sin_", "cos_", "floor_", "ceil_", "round_",
           "trunc_", "frac_", "reciprocal_", "erf", "sgn", "signbit", "fix", "nan_to_num",
           "absolute", "negative", "expm1_", "log10_", "log2_", "log1p_", "erf_", "neg_",
           "negative_", "sign_", "sgn_", "rsqrt_", "square_", "absolute_", "fix_",
           "nan_to_num_", "cumsum_", "cumprod_", "positive")
