"""The nodes of the shape ops (``shape.py``'s functions apply them): reshape, permute,
expand, concatenate and split, each one ``Function`` whose backward moves the gradient back
into the input's shape, and their names as torch's functions name their nodes (``View``,
``Squeeze``, ``Transpose``, ``Cat``, ...: subclasses that only rename the op)."""

import itertools
import math

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..autograd.graph import node_alias
from .base import BroadcastError, ShapeError, converted, unbroadcast


class Reshape(Function):
    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        try:
            return x.reshape(shape)
        except ValueError:
            raise ShapeError(f"reshape: cannot view a tensor of shape {tuple(x.shape)} "
                             f"({x.size} elements) as shape {tuple(shape)}; the sizes must "
                             "multiply to the same count (one -1 is inferred)") from None

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape)


class Permute(Function):
    @staticmethod
    def forward(ctx, x, axes):
        ctx.axes = axes
        return x.transpose(axes)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(np.argsort(ctx.axes))        # the inverse permutation


def expanded_shape(fn, sizes, shape):
    """The shape a tensor of ``sizes`` expands to as ``shape`` (-1 keeps a dim), checked as
    torch checks it, from the last dim; a ``BroadcastError`` (torch's RuntimeError, NumPy's
    ValueError) naming ``fn`` and both shapes otherwise."""
    names = f"target sizes {list(shape)}, tensor sizes {list(sizes)}"
    lead = len(shape) - len(sizes)
    if lead < 0:
        raise BroadcastError(f"{fn}: the number of sizes provided ({len(shape)}) must be "
                             f"greater or equal to the number of dimensions in the tensor "
                             f"({len(sizes)}); {names}")
    out = list(shape)
    for i in reversed(range(len(shape))):
        size = sizes[i - lead] if i >= lead else 1
        if shape[i] == -1 and i < lead:
            raise BroadcastError(f"{fn}: the expanded size of the tensor (-1) isn't allowed in "
                                 f"a leading, non-existing dimension {i}; {names}")
        out[i] = size if shape[i] == -1 else shape[i]
        if out[i] != size and size != 1:
            raise BroadcastError(f"{fn}: the expanded size of the tensor ({shape[i]}) must "
                                 f"match the existing size ({size}) at non-singleton "
                                 f"dimension {i}; {names}")
        if out[i] < 0:
            raise BroadcastError(f"{fn}: negative size {out[i]} at dimension {i}; {names}")
    return tuple(out)


class Expand(Function):
    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        shape = expanded_shape("expand", x.shape, shape)
        if x.size == math.prod(shape):      # nothing repeated (1 to 1, new dims of 1): a
            return x.reshape(shape)         # writable view, as torch's; else read-only
        return backend.array_module(x).broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return unbroadcast(grad, ctx.shape)


def _legacy_empty(shape, shapes):
    # torch.cat skips a 1-D tensor of shape (0,) next to tensors of more dims.
    return tuple(shape) == (0,) and any(len(s) > 1 for s in shapes)


class Concatenate(Function):
    @staticmethod
    def forward(ctx, *arrays, axis, dtype):
        shapes = [a.shape for a in arrays]
        ctx.kept = [not _legacy_empty(a.shape, shapes) for a in arrays]
        kept = [a for a, k in zip(arrays, ctx.kept) if k] or list(arrays)
        if dtype is not None:              # torch's result dtype of them all, skipped included
            kept = [a if a.dtype == dtype else converted(a, dtype) for a in kept]
        ctx.axis = axis
        ctx.splits = list(itertools.accumulate([a.shape[axis] for a in kept[:-1]]))
        return backend.array_module(arrays[0]).concatenate(kept, axis=axis)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        parts = iter(xp.split(grad, ctx.splits, axis=ctx.axis))
        # (each piece in the result's dtype: the engine casts it to its input's)
        return tuple(next(parts) if k else xp.zeros((0,), grad.dtype) for k in ctx.kept)


class Split(Function):
    """Views of consecutive pieces along ``axis``: one node, one output per piece, so
    backward joins the pieces' gradients instead of adding a full-size one per piece."""

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


# torch's names of the nodes of its functions that are one op here: view, reshape, flatten and
# unflatten are its ViewBackward0; squeeze() SqueezeBackward0, squeeze(dim) 1, squeeze(dims)
# 2; transpose, swapaxes and mT TransposeBackward0, t() TBackward0 (permute and x.T:
# PermuteBackward0, Permute's own); cat CatBackward0
View = node_alias(Reshape, "View")
Unsqueeze = node_alias(Reshape, "Unsqueeze")
Squeeze = node_alias(Reshape, "Squeeze")
SqueezeDim = node_alias(Reshape, "Squeeze", "Backward1", alias="SqueezeDim")
SqueezeDims = node_alias(Reshape, "Squeeze", "Backward2", alias="SqueezeDims")
Transpose = node_alias(Permute, "Transpose")
T = node_alias(Permute, "T")
Cat = node_alias(Concatenate, "Cat")
