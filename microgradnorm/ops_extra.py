"""More primitive ops, with PyTorch's names and corners: minimum and amin, clamp, sigmoid,
rsqrt, sign, where, masked_fill, repeat, gather, index_select, and softmax written with the
primitives of ``ops``. One ``Function`` each, forward and backward side by side, on plain
arrays of either backend (``xp`` is NumPy or CuPy); the Tensor methods and ``mg.*`` names
that call them check the arguments first.
"""

import math
import numbers

import numpy as np

from . import backend, ops
from .autograd import Function
from .dtypes import is_floating, is_half


# ----- elementwise ------------------------------------------------------------------------
class Minimum(Function):
    """Elementwise minimum. As in torch, where both inputs are equal each gets half the
    gradient, and a NaN (which wins either way) passes the whole gradient to both."""

    @staticmethod
    def forward(ctx, a, b):
        a, b, _ = ops.promote(a, b)
        ctx.save_for_backward(a, b)
        return ops._broadcast("minimum", backend.array_module(a).minimum, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        xp = backend.array_module(grad)
        shared = xp.where(a == b, grad / 2, grad)                  # (broadcast shape)
        return (ops.unbroadcast(xp.where(a > b, 0, shared).astype(grad.dtype), a.shape)
                if ctx.needs_input_grad[0] else None,
                ops.unbroadcast(xp.where(a < b, 0, shared).astype(grad.dtype), b.shape)
                if ctx.needs_input_grad[1] else None)


class AMin(Function):
    """Minimum over ``axis``; tied minima share the gradient evenly (``torch.amin``)."""

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        out = x.min(axis=axis, keepdims=True)
        ctx.save_for_backward(x, out)
        ctx.axis = axis
        return out if keepdims else out.reshape(ops._reduced_shape(x.shape, axis))

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved
        is_min = x == out                                          # (x.shape) bool
        count = is_min.sum(axis=ctx.axis, keepdims=True)           # (kept dims) ties per min
        with np.errstate(divide="ignore", invalid="ignore"):       # a NaN minimum: NaN, torch's
            return is_min * (grad.reshape(out.shape) / count.astype(grad.dtype))


class Clamp(Function):
    """``min(max(x, low), high)``, each bound a constant array or a tensor (or None). The
    gradients are torch's: x gets the gradient where low <= x <= high (inclusive; never
    at a NaN x), low where x < low < high, high where x > high or high < low."""

    @staticmethod
    def forward(ctx, x, low, high):
        xp = backend.array_module(x)
        out, dtype, used = x, x.dtype, []
        for bound, combine in ((low, xp.maximum), (high, xp.minimum)):
            if bound is not None:
                out, bound, dtype = ops.promote(out, bound)
                out = ops._broadcast("clamp", combine, out, bound)
            used.append(bound)
        # the bounds as compared (a number rounded to x's half dtype), so that backward's
        # "min <= x <= max" agrees with the forward: x at a rounded bound passes, as in torch
        ctx.save_for_backward(x, *used)
        return out.astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, low, high = ctx.saved
        xp = backend.array_module(grad)
        zero = xp.zeros((), grad.dtype)
        inside = xp.ones(x.shape, bool)
        if low is not None:
            inside = inside & (x >= low)
        if high is not None:
            inside = inside & (x <= high)
        need_x, need_low, need_high = ctx.needs_input_grad
        grad_x = ops.unbroadcast(xp.where(inside, grad, zero), x.shape) if need_x else None
        grad_low = grad_high = None
        if need_low:
            below = x < low if high is None else (x < low) & (low < high)
            grad_low = ops.unbroadcast(xp.where(below, grad, zero), low.shape)
        if need_high:
            above = x > high if low is None else (x > high) | (high < low)
            grad_high = ops.unbroadcast(xp.where(above, grad, zero), high.shape)
        return grad_x, grad_low, grad_high


def _in_opmath(x):
    """x in the dtype torch computes a unary op in: float32 for float16 and bfloat16 (the
    result is rounded once, at the end), x itself otherwise."""
    return x.astype(np.float32) if is_half(x.dtype) else ops.float_input(x)


def _rounded_to(out, x):
    return out.astype(x.dtype, copy=False) if is_floating(x.dtype) else out


class Sigmoid(Function):
    """σ(x) = 1 / (1 + e^(-x)), computed as (1 + tanh(x / 2)) / 2, which never overflows;
    float16 and bfloat16 compute in float32 and round once, as torch does."""

    @staticmethod
    def forward(ctx, x):
        xp = backend.array_module(x)
        out = _rounded_to(0.5 * (1 + xp.tanh(_in_opmath(x) * 0.5)), x)
        ctx.save_for_backward(out)                   # dσ = σ (1 - σ): keep the output
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved
        return grad * out * (1 - out)


class Rsqrt(Function):
    """1 / sqrt(x). Backward: -grad / (2 x^(3/2)) = -grad · out³ / 2."""

    @staticmethod
    def forward(ctx, x):
        out = _rounded_to(1 / backend.array_module(x).sqrt(_in_opmath(x)), x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved
        return grad * (-0.5 * out * out * out)


class StdFromVar(Function):
    """sqrt of a variance: the standard deviation. Backward: grad / (2 std), and 0 where
    std is 0 (a constant slice), as torch's std backward, rather than 0 · inf = NaN."""

    @staticmethod
    def forward(ctx, var):
        out = backend.array_module(var).sqrt(var)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved
        xp = backend.array_module(grad)
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.where(out == 0, xp.zeros((), dtype=grad.dtype), grad / (2 * out))


class Sign(Function):
    """-1, 0 or 1 by the sign of x; as torch, sign(NaN) is 0 (and a bool x is itself). The
    gradient is 0."""

    @staticmethod
    def forward(ctx, x):
        return ops.torch_sign(x)

    @staticmethod
    def backward(ctx, grad):
        return backend.array_module(grad).zeros_like(grad)


class Where(Function):
    """``condition ? a : b`` elementwise (all three broadcast); the condition is a constant
    bool array (an option), a and b get the gradient where they were chosen."""

    @staticmethod
    def forward(ctx, a, b, condition):
        a, b, dtype = ops.promote(a, b)
        ctx.condition, ctx.shapes = condition, (a.shape, b.shape)
        xp = backend.array_module(a)
        try:
            return xp.where(condition, a, b).astype(dtype, copy=False)
        except ValueError:
            raise ValueError(f"where: shapes {tuple(condition.shape)} (condition), "
                             f"{tuple(a.shape)} and {tuple(b.shape)} do not broadcast") from None

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        zero = xp.zeros((), grad.dtype)
        a_shape, b_shape = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (ops.unbroadcast(xp.where(ctx.condition, grad, zero), a_shape) if need_a else None,
                ops.unbroadcast(xp.where(ctx.condition, zero, grad), b_shape) if need_b else None)


class MaskedFill(Function):
    """x with ``value`` where the bool ``mask`` is True (x and mask broadcast, as in
    torch). x's gradient is 0 where filled; a tensor value gets the sum of the filled
    gradient."""

    @staticmethod
    def forward(ctx, x, value, mask):
        xp = backend.array_module(x)
        ctx.mask, ctx.shape = mask, x.shape
        return xp.where(mask, value.astype(x.dtype), x)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        zero = xp.zeros((), grad.dtype)
        need_x, need_value = ctx.needs_input_grad
        return (ops.unbroadcast(xp.where(ctx.mask, zero, grad), ctx.shape) if need_x else None,
                xp.where(ctx.mask, grad, zero).sum().reshape(()) if need_value else None)


# ----- shape and indexing -------------------------------------------------------------------
class Repeat(Function):
    """x tiled ``repeats`` times per dim (``torch.Tensor.repeat``; x first gets leading
    dims of size 1 up to ``len(repeats)``). Backward sums the copies."""

    @staticmethod
    def forward(ctx, x, repeats):
        shape = (1,) * (len(repeats) - x.ndim) + tuple(x.shape)
        ctx.shape, ctx.padded, ctx.repeats = x.shape, shape, repeats
        return backend.array_module(x).tile(x.reshape(shape), repeats)

    @staticmethod
    def backward(ctx, grad):
        # (r0·s0, r1·s1, ...) -> (r0, s0, r1, s1, ...), summed over the r axes
        split = [n for pair in zip(ctx.repeats, ctx.padded) for n in pair]
        summed = grad.reshape(split).sum(axis=tuple(range(0, len(split), 2)))
        return summed.reshape(ctx.shape)


def _grid(index, axis):
    """Index arrays that pick, at each position of ``index``, the element of x whose
    ``axis`` coordinate is the index there and whose other coordinates are the position's
    (``torch.gather``'s rule); they broadcast to index's shape."""
    xp = backend.array_module(index)
    parts = []
    for d, n in enumerate(index.shape):
        if d == axis:
            parts.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            parts.append(xp.arange(n).reshape(shape))
    return tuple(parts)


class Gather(Function):
    """``out[i][j] = x[index[i][j]][j]`` along ``axis`` 0, and likewise for the other
    axes (``torch.gather``). Backward adds each gradient into the element it came from
    (scatter-add: an index that repeats accumulates)."""

    @staticmethod
    def forward(ctx, x, index, axis):
        ctx.shape, ctx.where = x.shape, _grid(index, axis)
        return x[ctx.where]

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        grad_x = xp.zeros(ctx.shape, dtype=grad.dtype)
        xp.add.at(grad_x, ctx.where, grad)           # repeated picks accumulate
        return grad_x


class IndexSelect(Function):
    """The slices of x at ``index`` (a 1-D integer array) along ``axis``
    (``torch.index_select``). Backward adds each slice's gradient into its source slice."""

    @staticmethod
    def forward(ctx, x, index, axis):
        ctx.shape, ctx.index, ctx.axis = x.shape, index, axis
        if not x.ndim:
            return x.reshape(1)[index].reshape(())
        return backend.array_module(x).take(x, index, axis=axis)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        if not ctx.shape:
            return grad.reshape(())
        grad_x = xp.zeros(ctx.shape, dtype=grad.dtype)
        xp.add.at(grad_x, (slice(None),) * ctx.axis + (ctx.index,), grad)
        return grad_x


# ----- functional forms: argument checks, then the Function ---------------------------------
def _tensor_class():
    from .tensor import Tensor     # tensor imports this module: look it up at call time
    return Tensor


def _int_axis(fn, axis, ndim):
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{fn}: dim must be an int, got {axis!r}")
    span = max(ndim, 1)
    if not -span <= axis < span:
        raise ops.AxisError(f"{fn}: dim {axis} is out of range for a tensor with {ndim} dims "
                        f"(expected -{span} <= dim < {span})")
    return int(axis) % span


def _index_array(fn, index, like):
    """``index`` (a Tensor, array or nested ints) as an integer array on ``like``'s device."""
    data = index.data if isinstance(index, _tensor_class()) else index
    data = like.xp.asarray(data)
    if data.dtype.kind not in "iu":
        raise TypeError(f"{fn}: index must hold integers, got dtype {data.dtype}")
    return data


def _check_range(fn, index, size, axis):
    if index.size and (int(index.min()) < 0 or int(index.max()) >= size):
        bad = int(index.min()) if int(index.min()) < 0 else int(index.max())
        raise ops.OutOfRangeError(f"{fn}: index {bad} is out of bounds for dim {axis} with "
                              f"size {size} (expected 0 <= index < {size})")


def minimum(a, b):
    """Elementwise minimum of ``a`` and ``b`` (broadcast), ``torch.minimum``: NaN
    propagates; tied elements share the gradient in half. Shape: the broadcast shape."""
    return Minimum.apply(a, b)


def amin(x, axis=None, keepdims=False):
    """Minimum over ``axis`` (``torch.amin``): NaN propagates; tied minima share the
    gradient. An empty reduced dim is an ``ops.EmptyReductionError`` (IndexError, as in
    PyTorch, and ValueError)."""
    axis = ops.normalize_axis(axis, x.ndim)
    ops.check_reducible("amin", x.shape, axis)
    return AMin.apply(x, axis=axis, keepdims=keepdims)


def clamp(x, min=None, max=None):
    """Each element limited to [min, max] (``torch.clamp``): ``minimum(maximum(x, min),
    max)``, so min > max gives max everywhere; a NaN in x or a bound gives NaN. Bounds are
    numbers or tensors (broadcast to x), one may be None.

    Backward: x's gradient passes where min <= x <= max (inclusive), as in torch.
    """
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given, got both None")
    Tensor = _tensor_class()
    for name, bound in (("min", min), ("max", max)):
        if bound is not None and not isinstance(bound, Tensor):
            if not isinstance(bound, numbers.Real) or isinstance(bound, bool):
                raise TypeError(f"clamp: {name} must be a number, a Tensor or None, "
                                f"got {type(bound).__name__} {bound!r}")
    return Clamp.apply(x, min, max)


def sigmoid(x):
    r"""Logistic sigmoid, :math:`\sigma(x) = 1 / (1 + e^{-x})`, one graph node (computed as
    :math:`(1 + \tanh(x/2)) / 2`, which never overflows). Backward: grad · σ (1 - σ)."""
    return Sigmoid.apply(x)


def where(condition, a, b):
    """``a`` where ``condition`` is True, else ``b`` (``torch.where(condition, a, b)``);
    all three broadcast, a and b may be numbers. Differentiable in a and b (each gets the
    gradient where it was chosen), the condition is a bool tensor or array.

    Shape: the broadcast shape of the three.
    """
    Tensor = _tensor_class()
    cond = condition.data if isinstance(condition, Tensor) else condition
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
    if like is None:
        like = Tensor(a)
        a = like
    cond = like.xp.asarray(cond)
    if cond.dtype != np.bool_:
        raise TypeError(f"where: condition must be a bool tensor, got dtype {cond.dtype}")
    return Where.apply(a, b, condition=cond)


def masked_fill(x, mask, value):
    """x with ``value`` where ``mask`` is True (``torch.Tensor.masked_fill``). ``mask``:
    a bool tensor that broadcasts with x; ``value``: a number or a 0-d tensor (which then
    gets the summed gradient of the filled places). Shape: the broadcast shape of x and
    mask (x's, for the usual mask no larger than x)."""
    Tensor = _tensor_class()
    mask = mask.data if isinstance(mask, Tensor) else x.xp.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"masked_fill: mask must be a bool tensor, got dtype {mask.dtype}")
    try:
        np.broadcast_shapes(tuple(mask.shape), x.shape)
    except ValueError:
        raise ValueError(f"masked_fill: mask of shape {tuple(mask.shape)} does not broadcast "
                         f"with the tensor's shape {x.shape}") from None
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"masked_fill: value must be a number or a 0-d tensor, got a "
                             f"tensor of shape {value.shape}")
    elif not isinstance(value, numbers.Number) or isinstance(value, complex):
        raise TypeError(f"masked_fill: value must be a number or a 0-d tensor, got "
                        f"{type(value).__name__} {value!r}")
    else:
        value = Tensor._from_op(x.xp.asarray(value), None, 0)
    return MaskedFill.apply(x, value, mask=mask)


def repeat(x, repeats):
    """x tiled ``repeats[d]`` times along each dim d (``torch.Tensor.repeat``); with more
    repeats than dims, x first gets leading dims of size 1. Shape: (r0·s0, r1·s1, ...)."""
    repeats = tuple(repeats)
    if not all(isinstance(r, numbers.Integral) and not isinstance(r, bool) and r >= 0
               for r in repeats):
        raise ValueError(f"repeat: repeats must be non-negative ints, got {repeats}")
    if len(repeats) < x.ndim:
        raise ValueError(f"repeat: give at least one repeat per dim ({x.ndim}), got "
                         f"{len(repeats)}: {repeats}")
    return Repeat.apply(x, repeats=tuple(int(r) for r in repeats))


def gather(x, axis, index):
    """Pick along ``axis`` at ``index`` (``torch.gather(x, dim, index)``): for axis 0,
    ``out[i][j] = x[index[i][j]][j]``. ``index`` is an integer tensor with x's number of
    dims, each dim but ``axis`` no larger than x's. Shape: index's. Backward: scatter-add."""
    axis = _int_axis("gather", axis, x.ndim)
    index = _index_array("gather", index, x)
    if index.size == 0:                         # any shape of empty index, as in torch
        flat = x.reshape(-1)
        return IndexSelect.apply(flat, index=index.reshape(0), axis=0).reshape(index.shape)
    if index.ndim != x.ndim and not (index.ndim <= 1 and x.ndim <= 1):
        raise ValueError(f"gather: index must have as many dims as the tensor ({x.ndim}), "
                         f"got shape {tuple(index.shape)}")
    if x.ndim == 0 or index.ndim == 0:
        if index.size != 1 and x.ndim == 0 or index.ndim > 1:
            raise ValueError(f"gather: a 0-d tensor takes a 0-d or one-element index, got "
                             f"shape {tuple(index.shape)}")
        _check_range("gather", index, max(x.size, 1) if x.ndim == 0 else x.shape[0], axis)
        if x.ndim:
            return IndexSelect.apply(x, index=index.reshape(-1), axis=0).reshape(index.shape)
        return IndexSelect.apply(x, index=index.reshape(1), axis=0).reshape(index.shape)
    for d, (n, m) in enumerate(zip(index.shape, x.shape)):
        if d != axis and n > m:
            raise ValueError(f"gather: index of shape {tuple(index.shape)} is larger than the "
                             f"tensor's {x.shape} in dim {d}")
    _check_range("gather", index, x.shape[axis], axis)
    return Gather.apply(x, index=index, axis=axis)


def index_select(x, axis, index):
    """The slices of x at ``index`` along ``axis`` (``torch.index_select(x, dim, index)``):
    ``index`` is a 1-D (or 0-d) integer tensor; repeats are allowed and accumulate their
    gradients. Shape: x's with dim ``axis`` of size len(index)."""
    axis = _int_axis("index_select", axis, x.ndim)
    index = _index_array("index_select", index, x)
    if index.ndim > 1:
        raise ValueError(f"index_select: index must be 1-D or 0-d, got shape "
                         f"{tuple(index.shape)}")
    _check_range("index_select", index, x.shape[axis] if x.ndim else 1, axis)
    return IndexSelect.apply(x, index=index.reshape(-1), axis=axis)


def chunk(x, chunks, axis=0):
    """x cut into at most ``chunks`` pieces along ``axis`` (``torch.chunk``): pieces of
    ceil(n / chunks) elements, the last smaller, so fewer pieces come back when that size
    fills the dim sooner (6 in 4 chunks: three of 2). A dim of size 0 gives ``chunks``
    empty pieces. Returns a tuple of views (``split``)."""
    if isinstance(chunks, bool) or not isinstance(chunks, numbers.Integral):
        raise TypeError(f"chunk: chunks must be an int, got {chunks!r}")
    if chunks < 1:
        raise ValueError(f"chunk: chunks must be at least 1, got {chunks}")
    axis = _int_axis("chunk", axis, x.ndim)
    if x.ndim == 0:
        raise ValueError("chunk: a 0-d tensor has no dim to cut")
    length = x.shape[axis]
    if length == 0:
        return ops.Split.apply(x, sizes=(0,) * int(chunks), axis=axis)
    return ops.split(x, math.ceil(length / chunks), axis)


# ----- softmax, from the primitives -----------------------------------------------------------
def _shifted(x, axis):
    # Softmax is invariant to a per-row shift; subtracting the (constant, detached) row max
    # keeps exp() <= 1, so it cannot overflow.
    return x - x.detach().max(axis, keepdims=True)


def _empty_softmax(x, axis):
    # A zero-size x: the (log-)softmax is as empty as x, as in torch; the axis is checked.
    ops.normalize_axis(axis, x.ndim)
    return x * 1.0


def softmax(x, axis=-1):
    r""":math:`e^{x_i - m} / \sum_j e^{x_j - m}` along ``axis``, :math:`m = \max_j x_j`."""
    if x.size == 0:
        return _empty_softmax(x, axis)
    e = _shifted(x, axis).exp()
    return e / e.sum(axis, keepdims=True)


def log_softmax(x, axis=-1):
    r""":math:`(x_i - m) - \log\sum_j e^{x_j - m}` along ``axis``."""
    if x.size == 0:
        return _empty_softmax(x, axis)
    z = _shifted(x, axis)
    return z - z.exp().sum(axis, keepdims=True).log()
