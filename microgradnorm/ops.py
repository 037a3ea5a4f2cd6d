"""Primitive ops: one ``Function`` each, forward and backward side by side.

Every forward works on plain arrays of either backend (``xp`` is NumPy or CuPy), and every
backward returns one gradient per input with that input's shape; binary ops broadcast like
NumPy and ``unbroadcast`` sums the gradient back to each input's shape.
"""

import math
import numbers
import operator

import numpy as np

from . import backend
from .autograd import Function
from .dtypes import is_floating, is_half


# ----- shape helpers ------------------------------------------------------------------------
def unbroadcast(grad, shape):
    """Sum ``grad`` over the axes that broadcasting added or stretched to reach its shape."""
    if grad.shape == tuple(shape):
        return grad                                # the usual case: nothing was broadcast
    extra = grad.ndim - len(shape)
    if not shape:                                  # keepdims: a 0-d array, not a scalar
        return reduce_sum(grad, None, True).reshape(())
    if extra:
        grad = reduce_sum(grad, tuple(range(extra)), False)  # leading axes broadcast added
    if 1 in shape:
        stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
        if stretched:
            grad = reduce_sum(grad, stretched, True)           # size-1 axes it stretched
    return grad


def _category(dtype):
    """0 bool, 1 integer, 2 floating: PyTorch's type categories."""
    return 0 if dtype.kind == "b" else 2 if is_floating(dtype) else 1


def result_dtype(a, b):
    """The dtype PyTorch gives a binary op on arrays ``a`` and ``b``; it differs from
    NumPy's in two ways. A higher category wins outright: float16 with int64 is float16
    (NumPy: float64). And a 0-d operand does not widen a dimensioned one of the same or a
    higher category: float32 (n,) with a 0-d float64 is float32 (NumPy: float64), as a
    Python number does not. Within a category the wider dtype wins (float16 with bfloat16:
    float32)."""
    da, db = a.dtype, b.dtype
    if da == db:
        return da
    ca, cb = _category(da), _category(db)
    if (a.ndim == 0) != (b.ndim == 0):                 # one 0-d operand
        (dims, dims_cat), (zero, zero_cat) = ((db, cb), (da, ca)) if a.ndim == 0 \
            else ((da, ca), (db, cb))
        return zero if zero_cat > dims_cat else dims
    if ca != cb:
        return da if ca > cb else db
    if ca == 2 and is_half(da) and is_half(db):        # float16 with bfloat16
        return np.dtype(np.float32)
    return np.promote_types(da, db)


def promote(a, b, opmath=False):
    """``(a, b, dtype)``: the operands to compute with and the result's ``result_dtype``,
    so that an op computes, and its backward saves, what PyTorch's does.

    Operands are cast to ``dtype``, except with ``opmath`` (arithmetic) when the result is
    float16 or bfloat16 and one operand is 0-d (a Python number or a 0-d tensor): PyTorch
    then computes in float32, the 0-d operand kept at float32 rather than rounded to half
    (``x * 0.1`` in float16 is float16(x · float32(0.1)), not x · float16(0.1)). That
    operand is cast to float32 and the half one left as is (NumPy widens it as it goes);
    the caller rounds the float32 result to ``dtype`` once."""
    if a.dtype == b.dtype:
        return a, b, a.dtype
    dtype = result_dtype(a, b)
    compute = dtype
    if opmath and is_half(dtype) and (a.ndim == 0) != (b.ndim == 0):
        compute = np.dtype(np.float32)
    return (a if a.dtype in (dtype, compute) else a.astype(compute),
            b if b.dtype in (dtype, compute) else b.astype(compute), dtype)


def arithmetic(op, combine, a, b):
    """``combine(a, b)`` for an arithmetic op on arrays with PyTorch's promotion (see
    ``promote``): the result in ``result_dtype(a, b)`` (true division of integers: float64,
    the default float dtype here). Backward formulas use it too, so that each intermediate
    is rounded where PyTorch's is."""
    if a.dtype == b.dtype:                       # the usual case: nothing to promote
        return _broadcast(op, combine, a, b)
    a, b, dtype = promote(a, b, opmath=True)
    return _rounded(_broadcast(op, combine, a, b), dtype)


def _rounded(out, dtype):
    """``out`` in ``dtype``, a result computed in float32 for half precision rounded once;
    a float quotient of integers stays float."""
    if out.dtype == dtype or (out.dtype.kind == "f" and not is_floating(dtype)):
        return out
    return out.astype(dtype)


def _broadcast(op, combine, a, b):
    """``combine(a, b)``, with NumPy's broadcasting error replaced by one naming the op and
    both shapes (a successful call pays nothing for the check)."""
    try:
        return combine(a, b)
    except ValueError as error:
        if "broadcast" not in str(error):
            raise
        raise ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         "broadcast (compared from the last dim, each pair of sizes must be "
                         "equal or one of them 1)") from None


def reduce_sum(x, axis, keepdims, mean=False):
    """Sum (or mean) of ``x`` over ``axis``; float16 and bfloat16 accumulate in float32 and
    round once to their dtype, as torch does (a float16 sum of many terms would otherwise
    lose every term below its running total's last place)."""
    if not is_half(x.dtype):
        return x.mean(axis=axis, keepdims=keepdims) if mean else x.sum(axis=axis,
                                                                       keepdims=keepdims)
    total = x.sum(axis=axis, keepdims=keepdims, dtype=np.float32)
    if mean:
        total /= reduced_size(x.shape, axis)
    return total.astype(x.dtype)


class OutOfRangeError(IndexError, ValueError):
    """An index or class id out of range (an embedding id, a cross-entropy target): an
    IndexError as in PyTorch, and a ValueError, so either ``except`` catches it."""


class EmptyReductionError(IndexError, ValueError):
    """A max, min or arg-reduction over an empty dim, which has no value to return: an
    IndexError as PyTorch raises for ``amin``/``argmax``, and a ValueError as before."""


def check_reducible(name, shape, axis):
    """Raise ``EmptyReductionError`` if a max/min-like reduction ``name`` over ``axis``
    (None: every dim; else a tuple of non-negative dims) meets an empty dim."""
    if 0 in shape and (axis is None or any(shape[a] == 0 for a in axis)):
        raise EmptyReductionError(f"{name}(): cannot reduce over an empty dim (there is no "
                                  f"value to return); tensor of shape {tuple(shape)}, "
                                  f"axis {axis}")


class AxisError(np.exceptions.AxisError):
    """An axis out of range: both an IndexError (PyTorch's "Dimension out of range") and a
    ValueError (NumPy's ``AxisError`` is both), so either ``except`` catches it."""

    def __init__(self, message):
        super().__init__(message)


def normalize_axis(axis, ndim):
    """``axis`` (None, an int or a sequence, negative allowed) as None or a sorted tuple."""
    if axis is None:
        return None
    try:
        axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    except TypeError:
        axes = (axis,)                   # not a sequence: refused just below
    span = max(ndim, 1)                  # a 0-d tensor takes axis 0 and -1, as in PyTorch
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, numbers.Integral):
            raise TypeError(f"axis must be an int or a sequence of ints, got {axis!r}")
        if not -span <= a < span:
            raise AxisError(f"axis {a} is out of range for a tensor with {ndim} dims "
                            f"(expected -{span} <= axis < {span})")
    normalized = tuple(sorted(a % span for a in axes))
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"axis {axis!r} names a dim twice (tensor with {ndim} dims)")
    return () if ndim == 0 else normalized     # reducing a 0-d tensor reduces nothing


def dim_alias(fn, axis, dim, default):
    """``axis``, or ``dim`` (PyTorch's name for it) when given; both given and different is
    a TypeError (``axis`` left at its ``default`` counts as not given)."""
    if dim is None:
        return axis
    if axis != default and axis != dim:
        raise TypeError(f"{fn}(): got both axis={axis!r} and dim={dim!r}; pass one")
    return dim


def reduced_size(shape, axis):
    """How many elements a reduction over ``axis`` combines into one."""
    axes = range(len(shape)) if axis is None else axis
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _keepdims_shape(shape, axis):
    axes = range(len(shape)) if axis is None else axis
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _reduced_shape(shape, axis):
    axes = range(len(shape)) if axis is None else axis
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _expand_reduced(grad, shape, axis):
    # (reduced shape) -> (input shape): put back the reduced axes, then broadcast.
    xp = backend.array_module(grad)
    return xp.broadcast_to(grad.reshape(_keepdims_shape(shape, axis)), shape)


# ----- elementwise, binary ------------------------------------------------------------------
class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a.shape, b.shape
        return arithmetic("add", operator.add, a, b)

    @staticmethod
    def backward(ctx, grad):
        a_shape, b_shape = ctx.shapes
        need_a, need_b = ctx.needs_input_grad      # a constant (a mask) needs no sum
        return (unbroadcast(grad, a_shape) if need_a else None,
                unbroadcast(grad, b_shape) if need_b else None)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a.shape, b.shape
        return arithmetic("sub", operator.sub, a, b)

    @staticmethod
    def backward(ctx, grad):
        a_shape, b_shape = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(grad, a_shape) if need_a else None,
                unbroadcast(-grad, b_shape) if need_b else None)


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        if a.dtype == b.dtype:                      # the usual case: nothing to promote
            ctx.save_for_backward(a, b)
            return _broadcast("mul", operator.mul, a, b)
        a, b, dtype = promote(a, b, opmath=True)
        ctx.save_for_backward(a, b)
        return _rounded(_broadcast("mul", operator.mul, a, b), dtype)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        mul = operator.mul
        grad_a = unbroadcast(arithmetic("mul", mul, grad, b), a.shape) \
            if ctx.needs_input_grad[0] else None
        grad_b = unbroadcast(arithmetic("mul", mul, grad, a), b.shape) \
            if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        if a.dtype == b.dtype:                      # the usual case: nothing to promote
            ctx.save_for_backward(a, b)
            return _broadcast("div", operator.truediv, a, b)
        a, b, dtype = promote(a, b, opmath=True)
        ctx.save_for_backward(a, b)
        return _rounded(_broadcast("div", operator.truediv, a, b), dtype)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        div, mul = operator.truediv, operator.mul
        grad_a = unbroadcast(arithmetic("div", div, grad, b), a.shape) \
            if ctx.needs_input_grad[0] else None
        if ctx.needs_input_grad[1]:          # -grad·a / b², each step rounded as in torch
            numerator = arithmetic("mul", mul, -grad, a)
            grad_b = unbroadcast(arithmetic("div", div, numerator,
                                            arithmetic("mul", mul, b, b)), b.shape)
        else:
            grad_b = None
        return grad_a, grad_b


class Maximum(Function):
    """Elementwise maximum; where both inputs are equal the gradient is split in half, and
    a NaN (which wins either way) passes the whole gradient to both, as in torch."""

    @staticmethod
    def forward(ctx, a, b):
        a, b, _ = promote(a, b)
        ctx.save_for_backward(a, b)
        return _broadcast("maximum", backend.array_module(a).maximum, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        xp = backend.array_module(grad)
        shared = xp.where(a == b, grad / 2, grad)                  # (broadcast shape)
        return (unbroadcast(xp.where(a < b, 0, shared).astype(grad.dtype), a.shape)
                if ctx.needs_input_grad[0] else None,
                unbroadcast(xp.where(a > b, 0, shared).astype(grad.dtype), b.shape)
                if ctx.needs_input_grad[1] else None)


# ----- elementwise, unary -------------------------------------------------------------------
class Neg(Function):
    @staticmethod
    def forward(ctx, x):
        return -x

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Pow(Function):
    """``x ** exponent`` for a constant number ``exponent``. bfloat16 computes in float32
    and rounds once (a float exponent would otherwise widen its result); an integer tensor
    with a float exponent gives a float result, as NumPy's and torch's do."""

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.save_for_backward(x)
        ctx.exponent = exponent
        out = x ** exponent
        return out.astype(x.dtype, copy=False) if is_floating(x.dtype) else out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        if ctx.exponent == 0:            # x⁰ is constant: 0, not 0 · 0⁻¹ = NaN at x = 0
            return backend.array_module(grad).zeros_like(grad)
        return grad * ctx.exponent * x ** (ctx.exponent - 1)


def float_input(x):
    """``x`` itself when floating, else a float64 copy: exp, log, sqrt, tanh, erf and the
    like of an integer or bool tensor give the default float dtype (float64 here), as in
    PyTorch, whatever its width (NumPy would give float16 for int8, uint8 and bool)."""
    return x.astype(np.float64) if x.dtype.kind in "biu" else x


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        x = float_input(x)
        out = backend.array_module(x).exp(x)
        ctx.save_for_backward(out)                   # d exp(x) = exp(x): keep the output
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved
        return grad * out


class Log(Function):
    @staticmethod
    def forward(ctx, x):
        x = float_input(x)
        ctx.save_for_backward(x)
        return backend.array_module(x).log(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return grad / x


class Sqrt(Function):
    @staticmethod
    def forward(ctx, x):
        x = float_input(x)
        out = backend.array_module(x).sqrt(x)
        ctx.save_for_backward(out)                   # d sqrt(x) = 1 / (2 sqrt(x))
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved
        return grad / (2 * out)


class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        x = float_input(x)
        out = backend.array_module(x).tanh(x)
        ctx.save_for_backward(out)                   # d tanh(x) = 1 - tanh(x)^2
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved
        return grad * (1 - out * out)


class ReLU(Function):
    @staticmethod
    def forward(ctx, x):
        out = backend.array_module(x).maximum(x, 0)
        ctx.save_for_backward(out)                   # the gradient passes where out > 0
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved
        return grad * (out > 0)


def torch_sign(x):
    """-1, 0 or 1 by the sign of array ``x``, with torch's sign(NaN) = 0 (NumPy's is NaN);
    a bool x is itself. A new array."""
    xp = backend.array_module(x)
    if x.dtype == np.bool_:
        return x.copy()
    out = xp.sign(x)
    if is_floating(x.dtype):
        out[xp.isnan(out)] = 0
    return out


class Abs(Function):
    """|x|. Backward: grad · sign(x), 0 at x = 0 and at a NaN x, as torch's (so a NaN
    that a later op masks out does not leak into the gradient)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.array_module(x).abs(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return grad * torch_sign(x).astype(grad.dtype, copy=False)


class Cast(Function):
    @staticmethod
    def forward(ctx, x, dtype):
        ctx.input_dtype = x.dtype
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad.astype(ctx.input_dtype)


class Clone(Function):
    @staticmethod
    def forward(ctx, x):
        return x.copy()

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


# ----- reductions ---------------------------------------------------------------------------
class Sum(Function):
    """Sum over ``axis``; float16 and bfloat16 accumulate in float32 and round once."""

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        ctx.shape, ctx.axis = x.shape, axis
        return reduce_sum(x, axis, keepdims)

    @staticmethod
    def backward(ctx, grad):
        return _expand_reduced(grad, ctx.shape, ctx.axis)


class Mean(Function):
    """Mean over ``axis``; float16 and bfloat16 accumulate in float32 and round once."""

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        ctx.shape, ctx.axis = x.shape, axis
        return reduce_sum(x, axis, keepdims, mean=True)

    @staticmethod
    def backward(ctx, grad):
        return _expand_reduced(grad / reduced_size(ctx.shape, ctx.axis), ctx.shape, ctx.axis)


class Max(Function):
    """Maximum over ``axis``; tied maxima share the gradient evenly (``torch.amax``)."""

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        out = x.max(axis=axis, keepdims=True)
        ctx.save_for_backward(x, out)
        ctx.axis = axis
        return out if keepdims else out.reshape(_reduced_shape(x.shape, axis))

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved
        is_max = x == out                                          # (x.shape) bool
        count = is_max.sum(axis=ctx.axis, keepdims=True)           # (kept dims) ties per max
        return is_max * (grad.reshape(out.shape) / count.astype(grad.dtype))


# ----- shape ops ----------------------------------------------------------------------------
class Reshape(Function):
    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        try:
            return x.reshape(shape)
        except ValueError:
            raise ValueError(f"reshape: cannot view a tensor of shape {tuple(x.shape)} "
                             f"({x.size} elements) as shape {tuple(shape)}; the sizes must "
                             "multiply to the same count (one -1 is inferred)") from None

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape)


class Permute(Function):
    @staticmethod
    def forward(ctx, x, axes):
        if sorted(a % max(x.ndim, 1) for a in axes) != list(range(x.ndim)):
            raise ValueError(f"permute: axes {axes} are not a permutation of {x.ndim} dims")
        ctx.axes = axes
        return x.transpose(axes)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(np.argsort([a % grad.ndim for a in ctx.axes]))


class Expand(Function):
    """Broadcast to ``shape`` (-1 keeps a dim) without copying; backward sums back."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        lead = len(shape) - x.ndim
        if lead < 0 or any(n == -1 for n in shape[:lead]):
            raise ValueError(f"expand: shape {shape} must have at least x's {x.ndim} dims and "
                             f"no -1 in a new leading dim; x has shape {x.shape}")
        shape = tuple(x.shape[i - lead] if n == -1 else n for i, n in enumerate(shape))
        return backend.array_module(x).broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return unbroadcast(grad, ctx.shape)


def _is_basic_index(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (slice, numbers.Integral))
               for p in parts)


class GetItem(Function):
    """``x[index]`` for slices, ints and integer arrays (an embedding lookup is
    ``weight[token_ids]``); repeated indices accumulate their gradients."""

    @staticmethod
    def forward(ctx, x, index):
        ctx.shape, ctx.dtype, ctx.index = x.shape, x.dtype, index
        return x[index]

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        grad_x = xp.zeros(ctx.shape, dtype=ctx.dtype)
        if _is_basic_index(ctx.index):
            grad_x[ctx.index] = grad                 # a basic index never repeats an element
        else:
            xp.add.at(grad_x, ctx.index, grad)       # integer arrays may repeat rows
        return grad_x


def _legacy_empty(shape, shapes):
    # torch.cat skips a 1-D tensor of shape (0,) next to tensors of more dims.
    return tuple(shape) == (0,) and any(len(s) > 1 for s in shapes)


class Concatenate(Function):
    """Join along ``axis``; as in ``torch.cat``, an empty 1-D tensor next to tensors of
    more dims is skipped (its gradient is empty)."""

    @staticmethod
    def forward(ctx, *arrays, axis):
        shapes = [a.shape for a in arrays]
        ctx.kept = [not _legacy_empty(a.shape, shapes) for a in arrays]
        kept = [a for a, k in zip(arrays, ctx.kept) if k] or list(arrays)
        ctx.axis = axis
        ctx.splits = np.cumsum([a.shape[axis] for a in kept])[:-1]
        return backend.array_module(arrays[0]).concatenate(kept, axis=axis)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        if all(ctx.kept):
            return tuple(xp.split(grad, [int(s) for s in ctx.splits], axis=ctx.axis))
        parts = iter(xp.split(grad, [int(s) for s in ctx.splits], axis=ctx.axis))
        return tuple(next(parts) if k else xp.zeros((0,), grad.dtype) for k in ctx.kept)


class Stack(Function):
    @staticmethod
    def forward(ctx, *arrays, axis):
        ctx.axis, ctx.count = axis, len(arrays)
        return backend.array_module(arrays[0]).stack(arrays, axis=axis)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        return tuple(xp.take(grad, i, axis=ctx.axis) for i in range(ctx.count))


class Split(Function):
    """``x`` cut along ``axis`` into consecutive pieces of the given sizes: one node with one
    output per piece, each a view of x (``torch.split``). Backward joins the pieces'
    gradients into one array (a piece no path reached contributes zeros), instead of one
    zero-filled full-size gradient per piece that the engine would then add up."""

    @staticmethod
    def forward(ctx, x, sizes, axis):
        ctx.axis = axis
        index = [slice(None)] * x.ndim
        pieces, start = [], 0
        for size in sizes:
            index[axis] = slice(start, start + size)
            pieces.append(x[tuple(index)])
            start += size
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        return backend.array_module(grads[0]).concatenate(grads, axis=ctx.axis)


def _check_matmul(a_shape, b_shape):
    if not a_shape or not b_shape:
        raise ValueError(f"matmul: both operands need at least 1 dim, got shapes "
                         f"{tuple(a_shape)} and {tuple(b_shape)}")
    k_b = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    if a_shape[-1] != k_b:
        which = "only dim" if len(b_shape) == 1 else "dim -2"
        raise ValueError(f"matmul: shapes {tuple(a_shape)} and {tuple(b_shape)} do not match: "
                         f"a's last dim is {a_shape[-1]}, b's {which} is {k_b}")
    batch_a, batch_b = a_shape[:-2], b_shape[:-2]
    if not batch_a or not batch_b or batch_a == batch_b:
        return                                   # the usual cases: nothing to broadcast
    try:
        np.broadcast_shapes(batch_a, batch_b)
    except ValueError:
        raise ValueError(f"matmul: the batch dims of shapes {tuple(a_shape)} and "
                         f"{tuple(b_shape)}, {tuple(batch_a)} and {tuple(batch_b)}, do not "
                         "broadcast") from None


class MatMul(Function):
    """``a @ b`` with NumPy's rules: batched over leading dims (broadcast), 1-D operands
    promoted to a row (a) or column (b) vector and the added axis removed again.
    float16 and bfloat16 products accumulate in float32 and round once (as torch's; NumPy
    has no bfloat16 matmul loop).

    A batched ``a`` (..., n, k) times a matrix ``b`` (k, m), as a Linear layer on (B, T, C),
    is one product of the stacked rows (B·T, k) @ (k, m), forward and for both gradients:
    NumPy's batched matmul would run B small products, and b's gradient would be formed per
    batch element and then summed.
    """

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        _check_matmul(a.shape, b.shape)
        if a.ndim > 2 and b.ndim == 2:
            return _matmul(_stacked_rows(a), b).reshape(*a.shape[:-1], b.shape[1])
        return _matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        if b.ndim == 2 and a.ndim >= 2:
            return _matmul_rows_backward(ctx, grad, a, b)
        a2 = a[None, :] if a.ndim == 1 else a              # (..., n, k)
        b2 = b[:, None] if b.ndim == 1 else b              # (..., k, m)
        g2 = grad[..., None] if b.ndim == 1 else grad       # put back the removed axes,
        g2 = g2[..., None, :] if a.ndim == 1 else g2        # m first: (..., n, m)
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = _matmul(g2, b2.swapaxes(-1, -2))       # (..., n, k)
            grad_a = unbroadcast(grad_a[..., 0, :] if a.ndim == 1 else grad_a, a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = _matmul(a2.swapaxes(-1, -2), g2)       # (..., k, m)
            grad_b = unbroadcast(grad_b[..., 0] if b.ndim == 1 else grad_b, b.shape)
        return grad_a, grad_b


def _matmul(a, b):
    if a.dtype.itemsize >= 4 and b.dtype.itemsize >= 4:
        return a @ b                     # no half-precision operand (the usual case, cheap)
    if not (is_half(a.dtype) or is_half(b.dtype)):
        return a @ b
    dtype = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
    if not is_half(dtype):
        return a @ b
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)


def _stacked_rows(a):
    """(..., n, k) -> (rows, k): a view when a's rows are contiguous, else one copy. The
    row count is spelled out: reshape(-1, 0) of a zero-size array is ambiguous to NumPy."""
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def _matmul_rows_backward(ctx, grad, a, b):
    # a (..., n, k) @ b (k, m): grad (..., n, m) as rows (R, m), R = prod(...)·n
    grad_rows = grad if grad.ndim == 2 else _stacked_rows(grad)       # (R, m)
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = _matmul(grad_rows, b.T)                   # (R, k)
        grad_a = grad_a if a.ndim == 2 else grad_a.reshape(a.shape)     # (..., n, k)
    if ctx.needs_input_grad[1]:
        rows = a if a.ndim == 2 else _stacked_rows(a)
        grad_b = _matmul(rows.T, grad_rows)                # (k, R) @ (R, m): summed over R
    return grad_a, grad_b


class Erf(Function):
    """The error function, erf(x) = 2/√π ∫₀ˣ exp(-t²) dt (for the exact GELU)."""

    @staticmethod
    def forward(ctx, x):
        x = float_input(x)
        ctx.save_for_backward(x)
        return backend.erf(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        xp = backend.array_module(x)
        return grad * (2 / np.sqrt(np.pi)) * xp.exp(-x * x)        # d erf/dx = 2/√π·e^(−x²)


# ----- functional forms ---------------------------------------------------------------------
def pow(x, exponent):
    """``x ** exponent``; ``exponent`` must be a number (a Tensor exponent is not supported)."""
    if not isinstance(exponent, numbers.Real) or isinstance(exponent, bool):
        raise TypeError(f"pow: exponent must be a real number, got {type(exponent).__name__}")
    return Pow.apply(x, exponent=exponent)


def maximum(a, b):
    """Elementwise maximum of ``a`` and ``b`` (broadcast); tied elements share the
    gradient (``torch.maximum``). Shape: the broadcast shape."""
    return Maximum.apply(a, b)


def concatenate(tensors, axis=0, *, dim=None):
    """Join tensors along an existing ``axis`` (``dim``: PyTorch's name, as in
    ``torch.cat``); their other dims must agree, and an empty 1-D tensor next to tensors of
    more dims is skipped, as ``torch.cat`` does."""
    axis = dim_alias("concatenate", axis, dim, 0)
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("concatenate: expected at least one tensor")
    shapes = [tuple(getattr(t, "shape", np.shape(t))) for t in tensors]
    kept = [s for s in shapes if not _legacy_empty(s, shapes)] or shapes
    ndim = len(kept[0])
    if ndim == 0 or any(len(s) != ndim for s in kept):
        raise ValueError(f"concatenate: tensors must have the same number of dims (at least "
                         f"1), got shapes {shapes}")
    (axis,) = normalize_axis(axis, ndim)
    if any(s[:axis] + s[axis + 1:] != kept[0][:axis] + kept[0][axis + 1:] for s in kept):
        raise ValueError(f"concatenate: sizes must match except along axis {axis}, got "
                         f"shapes {shapes}")
    return Concatenate.apply(*tensors, axis=axis)


def stack(tensors, axis=0, *, dim=None):
    """Join tensors of one shape along a new ``axis`` (``dim``: PyTorch's name)."""
    axis = dim_alias("stack", axis, dim, 0)
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("stack: expected at least one tensor")
    return Stack.apply(*tensors, axis=axis)


def split(x, split_size_or_sections, axis=0, *, dim=None):
    """Cut ``x`` along ``axis`` (``dim``: PyTorch's name) into pieces (``torch.split``): an
    int gives pieces of that size (the last one smaller when the size does not divide the
    dim), a sequence of ints gives each piece's size (they must add up to the dim). Returns
    a tuple of Tensors, views of x.

    Example:
        >>> q, k, v = qkv.split(d_model, axis=-1)        # (B, T, 3C) -> 3 x (B, T, C)
    """
    axis = dim_alias("split", axis, dim, 0)
    ndim = len(x.shape)
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"split: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise AxisError(f"split: axis must be in [{-ndim}, {ndim}) for a tensor with "
                        f"{ndim} dims, got {axis!r}")
    axis %= ndim
    length = x.shape[axis]
    if isinstance(split_size_or_sections, numbers.Integral) \
            and not isinstance(split_size_or_sections, bool):
        size = int(split_size_or_sections)
        if size < 1:
            raise ValueError(f"split: split_size must be a positive int, got {size}")
        sizes = [min(size, length - start) for start in range(0, length, size)] or [0]
    else:
        sizes = list(split_size_or_sections)
        if (not all(isinstance(n, numbers.Integral) and not isinstance(n, bool) and n >= 0
                    for n in sizes) or sum(sizes) != length):
            raise ValueError(f"split: sections must be non-negative ints adding up to the "
                             f"size {length} of axis {axis}, got {sizes}")
    return Split.apply(x, sizes=tuple(int(n) for n in sizes), axis=axis)


def matmul(a, b):
    """``a @ b`` with NumPy's (and PyTorch's) rules: (..., n, k) @ (..., k, m) -> (..., n, m),
    leading dims broadcast, a 1-D operand is a vector."""
    return MatMul.apply(a, b)


def erf(x):
    return Erf.apply(x)
