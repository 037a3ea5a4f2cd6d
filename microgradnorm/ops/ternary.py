"""The three-operand updates hand-written optimizers and moving averages use: ``lerp``,
``addcmul``, ``addcdiv`` and their in-place forms, as PyTorch computes them (its fused
multiply-adds included: ``lerp_arrays``, ops/base.py's ``fma``) with its gradients to every operand.

    exp_avg.lerp_(grad, 1 - beta1)                                 # Adam's first moment
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)   # its second
    p.addcdiv_(exp_avg, denom, value=-step_size)                   # its step, in no_grad()

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd.function import Function
from ..dtypes import accumulation_dtype
from .base import broadcast_shape, conj, fma, result_type, unbroadcast
from .binary import in_place, scalar
from .legacy_overloads import scalar_first


def lerp_arrays(start, end, weight):
    """torch's ``lerp`` on float arrays as its vectorized CPU kernel rounds it: from the
    nearer end, ``start + w·(end - start)`` where |w| < 1/2, else ``end + (w - 1)·(end -
    start)`` (exact at w = 1), each one fused multiply-add (``backend.fused_multiply_add``),
    w - 1 rounded in the arrays' dtype. ``weight``: a number or a broadcasting array.

    Example:
        >>> lerp_arrays(np.zeros(2), np.array([1.0, 3.0]), 0.25)
        array([0.25, 0.75])
    """
    xp, dtype = backend.array_module(start), start.dtype
    difference = end - start
    if xp.ndim(weight) == 0:                        # one weight: one form for every element
        weight = dtype.type(weight)
        if abs(weight) < 0.5:
            return backend.fused_multiply_add(difference, weight, start)
        return backend.fused_multiply_add(difference, weight - dtype.type(1), end)
    weight = xp.asarray(weight, dtype)
    small = xp.abs(weight) < 0.5
    return backend.fused_multiply_add(difference, xp.where(small, weight, weight - 1),
                                      xp.where(small, start, end))


class Lerp(Function):
    """``start + weight · (end - start)`` as torch computes it: from ``end`` where
    |weight| >= 1/2 (``end + (weight - 1)(end - start)``, exact at weight 1). The gradients:
    1 - weight, weight, and end - start for a tensor weight (conjugated where complex)."""

    @staticmethod
    def forward(ctx, start, end, weight, scalar=None):
        xp, dtype = backend.array_module(start), start.dtype
        if weight is not None:          # a 0-d weight beside 0-d ends: torch's wider dtype
            dtype = result_type(start, end, weight)
        broadcast_shape("lerp", start.shape, end.shape, () if weight is None else weight.shape)
        ctx.shapes, ctx.scalar = (start.shape, end.shape), scalar
        wide = accumulation_dtype(dtype)
        w = xp.asarray(scalar, dtype=wide) if weight is None else \
            weight.astype(dtype, copy=False).astype(wide, copy=False)   # torch's: dtype first
        start_w, end_w = start.astype(wide, copy=False), end.astype(wide, copy=False)
        need_weight = ctx.needs_input_grad[2]       # end - start: only the weight's gradient
        # the weight itself, not a copy: its in-place change before backward raises
        ctx.save_for_backward(start if need_weight else None, end if need_weight else None,
                              weight)
        if wide.kind == "f":                        # one FMA (lerp_arrays)
            return lerp_arrays(start_w, end_w, w).astype(dtype, copy=False)
        small = xp.abs(w) < 0.5                     # complex: the same forms, not fused
        coeff, base = xp.where(small, w, w - 1), xp.where(small, start_w, end_w)
        return fma(coeff, end_w - start_w, base, dtype)                   # (broadcast shape)

    @staticmethod
    def backward(ctx, grad):
        start, end, weight = ctx.saved
        start_shape, end_shape = ctx.shapes
        need_start, need_end, need_weight = ctx.needs_input_grad
        w = conj(weight.astype(grad.dtype, copy=False))[0] if weight is not None else \
            (ctx.scalar.conjugate() if isinstance(ctx.scalar, complex) else ctx.scalar)
        return (unbroadcast(grad * (1 - w), start_shape) if need_start else None,
                unbroadcast(grad * w, end_shape) if need_end else None,
                unbroadcast(grad * conj(end - start)[0], weight.shape) if need_weight else None)


def lerp(input, end, weight):
    """Linear interpolation ``input + weight · (end - input)``, broadcast (``torch.lerp``).

    Args:
        input, end: floating (or complex) tensors of one dtype.
        weight: a number, or a tensor of that dtype (a 0-d one of any dtype); a tensor
            weight gets the gradient end - input.

    Example:
        >>> ema.lerp_(param, 1 - decay)             # an exponential moving average
    """
    for name, value in (("input", input), ("end", end)):
        if not isinstance(value, _tensor.Tensor):
            raise TypeError(f"lerp: {name} must be a Tensor, got {type(value).__name__}")
    dtype = input.dtype
    if dtype.kind in "biu":
        raise NotImplementedError(f"lerp: not implemented for {dtype} tensors")
    if end.dtype != dtype:
        raise RuntimeError(f"lerp: expected dtype {dtype} for `end` but got dtype {end.dtype}")
    if isinstance(weight, _tensor.Tensor):
        if weight.ndim and weight.dtype != dtype:
            raise RuntimeError(f"lerp: expected dtype {dtype} for `weight` but got dtype "
                               f"{weight.dtype}")
        return Lerp.apply(input, end, weight)
    # the weight checked against the dtype torch computes in (float32 for half precision)
    return Lerp.apply(input, end, None,
                      scalar=scalar("lerp", "weight", weight, accumulation_dtype(dtype)))


class Addcmul(Function):
    """``input + value · tensor1 · tensor2`` (``divide``: ``/ tensor2``) as torch's kernel:
    value · tensor1 first, then fused with the rest (``fma``; a quotient is not). Gradients:
    1, value · tensor2 and value · tensor1 (``divide``: value / t2, -value · t1 / t2²)."""

    divide = False

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value, dtype):
        broadcast_shape("addcdiv" if ctx.function.divide else "addcmul", input.shape,
                        tensor1.shape, tensor2.shape)
        ctx.shapes, ctx.value = (input.shape, tensor1.shape, tensor2.shape), value
        wide = accumulation_dtype(dtype)     # each operand in the result dtype first, as torch's
        input, tensor1, tensor2 = (a.astype(dtype, copy=False).astype(wide, copy=False)
                                   for a in (input, tensor1, tensor2))
        scaled = np.array(value).astype(wide) * tensor1
        ctx.save_for_backward(tensor1, tensor2)
        if ctx.function.divide:
            return (input + scaled / tensor2).astype(dtype, copy=False)
        return fma(scaled, tensor2, input, dtype)

    @staticmethod
    def backward(ctx, grad):
        tensor1, tensor2 = conj(*ctx.saved)
        value = ctx.value.conjugate() if isinstance(ctx.value, complex) else ctx.value
        need_input, need_1, need_2 = ctx.needs_input_grad
        if ctx.function.divide:                     # each product in torch's order
            grad_1 = grad * (value / tensor2) if need_1 else None
            grad_2 = -grad * value * tensor1 / (tensor2 * tensor2) if need_2 else None
        else:
            grad_1 = grad * (tensor2 * value) if need_1 else None
            grad_2 = grad * (tensor1 * value) if need_2 else None
        return tuple(None if g is None else unbroadcast(g, shape)
                     for g, shape in zip((grad if need_input else None, grad_1, grad_2),
                                         ctx.shapes))


class Addcdiv(Addcmul):
    divide = True


def _fused(fn, function, input, tensor1, tensor2, value):
    for name, t in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    dtype = result_type(input, tensor1, tensor2)
    if function.divide and tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
        raise RuntimeError("addcdiv: integer division with addcdiv is not supported (tensor1 "
                           f"{tensor1.dtype}, tensor2 {tensor2.dtype}); divide floats")
    if dtype == np.bool_:
        raise NotImplementedError(f"{fn}: not implemented for bool tensors")
    value = scalar(fn, "value", value, accumulation_dtype(dtype))    # (half: float32's, as torch)
    return function.apply(input, tensor1, tensor2, value=value, dtype=dtype)


def _value_first(fn, tensor1, tensor2, deprecated, value):
    return scalar_first(fn, (tensor1, tensor2, *deprecated), 2, "value", value != 1,
                        "Number value, Tensor tensor1, Tensor tensor2",
                        "Tensor tensor1, Tensor tensor2, *, Number value = 1")


def addcmul(input, tensor1, tensor2, *deprecated, value=1):
    """``input + value · tensor1 · tensor2``, broadcast, in the dtype torch promotes the
    three to (``torch.addcmul``); an integer result truncates ``value``. Torch's deprecated
    ``addcmul(input, value, tensor1, tensor2)`` is taken, with its warning.

    Example:
        >>> exp_avg_sq.mul_(0.999).addcmul_(grad, grad, value=0.001)    # Adam's second moment
    """
    if deprecated:
        value, (tensor1, tensor2) = _value_first("addcmul", tensor1, tensor2, deprecated, value)
    return _fused("addcmul", Addcmul, input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *deprecated, value=1):
    """``input + value · tensor1 / tensor2`` (``torch.addcdiv``); tensor1 and tensor2 may not
    both be integral (RuntimeError, as torch's). The deprecated value-first form as
    ``addcmul``'s.

    Example:
        >>> p.addcdiv_(exp_avg, denom, value=-step_size)       # Adam's step, in no_grad()
    """
    if deprecated:
        value, (tensor1, tensor2) = _value_first("addcdiv", tensor1, tensor2, deprecated, value)
    return _fused("addcdiv", Addcdiv, input, tensor1, tensor2, value)


lerp_ = in_place("lerp", lerp)
addcmul_ = in_place("addcmul", addcmul)
addcdiv_ = in_place("addcdiv", addcdiv)

METHODS = ("lerp", "addcmul", "addcdiv", "lerp_", "addcmul_", "addcdiv_")
