"""The selections by a bool condition: ``where`` and ``masked_fill`` (``x`` where a mask is
False, a value where it is True), over one node, ``Where``, whose gradient goes to each
side where the condition picked it. torch's checks: a bool condition (uint8 taken by
``where`` with torch's deprecation warning), shapes that broadcast (RuntimeError), a fill
value of one element that the dtype holds."""

import numbers

import numpy as np

from .. import tensor as _tensor
from ..autograd.function import Function
from ..autograd.graph import node_alias
from ..dtypes import is_half
from ..meta_arrays import refuse_mixed
from . import logical
from .base import (BroadcastError, ShapeError, as_array, check_fits, check_number_fits,
                   check_tensor, constant, fitted, keep, kept, promote, select, unbroadcast)
from .index_parsing import warn_once


class Where(Function):
    """``condition ? a : b``, broadcast; the condition is a constant bool array."""

    kept_options = ("condition",)

    @staticmethod
    def forward(ctx, a, b, condition):
        a, b, dtype = promote(a, b)
        ctx.condition, ctx.shapes = condition, (a.shape, b.shape)
        try:
            return select(condition, a, b).astype(dtype, copy=False)
        except ValueError:
            raise BroadcastError(f"where: shapes {tuple(condition.shape)} (condition), "
                                 f"{tuple(a.shape)} and {tuple(b.shape)} do not broadcast"
                                 ) from None

    @staticmethod
    def backward(ctx, grad):
        a_shape, b_shape = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(keep(grad, ctx.condition), a_shape) if need_a else None,
                unbroadcast(keep(grad, ~ctx.condition), b_shape) if need_b else None)


def where(condition, input=None, other=None):
    """``input`` where the bool ``condition`` is True, else ``other`` (``torch.where``);
    broadcast.
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return logical.nonzero(check_tensor("where", condition), as_tuple=True)
    if input is None or other is None:
        raise TypeError("where: give both input and other, or neither (where(condition))")
    Tensor = _tensor.Tensor
    like = input if isinstance(input, Tensor) else other if isinstance(other, Tensor) else None
    if like is None:
        input = like = _tensor.tensor(input)
    for value in (input, other):    # 300 beside int8: torch's RuntimeError (beside half: inf)
        if not is_half(like.dtype):
            check_number_fits("where", value, like)
    if getattr(condition, "dtype", None) == np.uint8:
        warn_once("where received a uint8 condition tensor. This behavior is deprecated and "
                  "will be removed in a future version of PyTorch. Use a boolean condition "
                  "instead.")
        condition = condition != 0
    array = as_array("where", "condition", condition, like, "b")
    refuse_mixed("where", array, *(getattr(v, "_array", None) for v in (input, other)))
    return Where.apply(input, other, condition=kept(condition, array))


# torch's names of the nodes of masked_fill (a number: MaskedFillBackward0, a 0-d tensor:
# MaskedFillBackward1), tril and triu: one Where each here
MaskedFill = node_alias(Where, "MaskedFill")
MaskedFillTensor = node_alias(Where, "MaskedFill", "Backward1", alias="MaskedFillTensor")
Tril = node_alias(Where, "Tril")
Triu = node_alias(Where, "Triu")


def masked_fill(input, mask, value):
    """A copy of x with ``value`` (a number or a 0-d tensor) where the bool ``mask`` is True
    (``torch.Tensor.masked_fill``).

    Example:
        >>> scores.masked_fill(~causal, float("-inf"))       # an attention mask
    """
    return masked_fill_as(input, mask, value,
                          MaskedFillTensor if isinstance(value, _tensor.Tensor) else MaskedFill)


def masked_fill_as(input, mask, value, node):
    """``masked_fill``, its node ``node`` (a ``Where``: ``Tril`` for ``tril``'s)."""
    given, mask = mask, as_array("masked_fill", "mask", mask, input, "b")
    try:
        np.broadcast_shapes(tuple(mask.shape), input.shape)
    except ValueError:
        raise BroadcastError(f"masked_fill: mask of shape {tuple(mask.shape)} does not "
                             f"broadcast with the tensor's shape {input.shape}") from None
    if isinstance(value, complex) and input.dtype.kind == "c":
        value = _tensor.tensor(input.xp.asarray(value, dtype=input.dtype))
    elif isinstance(value, complex):          # its real part, if it has no imaginary part
        value = _tensor.tensor(input.xp.asarray(value))
    if isinstance(value, _tensor.Tensor):
        if value.ndim != 0:
            raise ShapeError(f"masked_fill: value must be a number or a 0-d tensor, got a "
                             f"tensor of shape {value.shape}")
        item = value.item()
        if isinstance(item, complex) and item.imag and input.dtype.kind not in "bc":
            # torch's checked conversion: an imaginary part does not fit a real dtype
            raise RuntimeError(f"masked_fill: value {item!r} cannot be converted to type "
                               f"{input.dtype} without overflow")
        if input.dtype.kind == "b":
            item = bool(item)                      # any nonzero number is True, as torch's
        check_fits("masked_fill", item, input.dtype)
        if value.dtype.kind == "c" and input.dtype.kind not in "bc":
            value = value.real                     # its imaginary part is 0 (just checked)
    elif not isinstance(value, numbers.Number):
        raise TypeError(f"masked_fill: value must be a number or a 0-d tensor, got "
                        f"{type(value).__name__} {value!r}")
    else:
        value = constant(input.xp.asarray(fitted("masked_fill", value, input.dtype),
                                          dtype=input.dtype))
    if value.dtype != input.dtype:
        value = value.astype(input.dtype)
    return node.apply(value, input, condition=kept(given, mask))
