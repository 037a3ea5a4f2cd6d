"""Shape ops: views (reshape, permute, expand, split) and concatenate, then the functions
behind ``x.reshape``, ``x.transpose``, ``mg.cat``, ...; stack and repeat are compositions."""

import math
import numbers

import numpy as np

from .. import backend
from ..autograd import Function
from .base import ALL_DIMS, DIM_0, normalize_axis, sizes_of, unbroadcast
from .elementwise import Clone


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
        ctx.axes = axes
        return x.transpose(axes)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(np.argsort(ctx.axes))        # the inverse permutation


class Expand(Function):
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


def _legacy_empty(shape, shapes):
    # torch.cat skips a 1-D tensor of shape (0,) next to tensors of more dims.
    return tuple(shape) == (0,) and any(len(s) > 1 for s in shapes)


class Concatenate(Function):
    @staticmethod
    def forward(ctx, *arrays, axis):
        shapes = [a.shape for a in arrays]
        ctx.kept = [not _legacy_empty(a.shape, shapes) for a in arrays]
        kept = [a for a, k in zip(arrays, ctx.kept) if k] or list(arrays)
        ctx.axis = axis
        ctx.splits = [int(s) for s in np.cumsum([a.shape[axis] for a in kept])[:-1]]
        return backend.array_module(arrays[0]).concatenate(kept, axis=axis)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        parts = iter(xp.split(grad, ctx.splits, axis=ctx.axis))
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


# ----- the functions: x.reshape(), mg.cat, ... -----------------------------------------------
def reshape(x, *shape):
    """The same elements in ``shape`` (ints or one tuple; one -1 is inferred)."""
    return Reshape.apply(x, shape=sizes_of(shape))


def flatten(x, start_dim=0, end_dim=-1):
    """The dims from ``start_dim`` to ``end_dim`` (inclusive) merged into one
    (``torch.flatten``): ``logits.flatten(0, 1)`` is (B·T, V) of (B, T, V)."""
    start = normalize_axis("flatten", start_dim, x.ndim, single=True)
    end = normalize_axis("flatten", end_dim, x.ndim, single=True)
    if x.ndim == 0:
        return reshape(x, 1)
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    merged = int(np.prod(x.shape[start:end + 1], dtype=np.int64))
    return reshape(x, x.shape[:start] + (merged,) + x.shape[end + 1:])


def permute(x, *axes):
    """The dims reordered (ints or one tuple)."""
    order = tuple(normalize_axis("permute", a, x.ndim, single=True) for a in sizes_of(axes))
    if sorted(order) != list(range(x.ndim)):
        raise ValueError(f"permute: axes {sizes_of(axes)} are not a permutation of {x.ndim} dims")
    return Permute.apply(x, axes=order)


def transpose(x, axis0=-2, axis1=-1):
    """Two dims swapped, by default the last two."""
    a = normalize_axis("transpose", axis0, x.ndim, single=True)
    b = normalize_axis("transpose", axis1, x.ndim, single=True)
    axes = list(range(x.ndim))
    if x.ndim:
        axes[a], axes[b] = axes[b], axes[a]
    return Permute.apply(x, axes=tuple(axes))


def reversed_dims(x):
    """All dims reversed (``x.T``)."""
    return Permute.apply(x, axes=tuple(reversed(range(x.ndim))))


def t(x):
    """The transpose of a tensor with at most 2 dims (``torch.Tensor.t``)."""
    if x.ndim > 2:
        raise ValueError(f"t() expects a tensor with <= 2 dims, got shape {x.shape}; "
                         "use transpose(dim0, dim1) or .mT")
    return reversed_dims(x)


def matrix_transpose(x):
    """The last two dims swapped (``x.mT``)."""
    if x.ndim < 2:
        raise ValueError(f"mT needs a tensor with at least 2 dims, got shape {x.shape}")
    return transpose(x, -2, -1)


def expand(x, *shape):
    """A broadcast view of ``shape`` (-1 keeps a dim)."""
    return Expand.apply(x, shape=sizes_of(shape))


def unsqueeze(x, axis=ALL_DIMS, *, dim=None):
    """A view with a new dim of size 1 at ``axis``; -1 appends one."""
    axis = normalize_axis("unsqueeze", axis, x.ndim, dim=dim, single=True, insert=True)
    return reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])


def squeeze(x, axis=ALL_DIMS, *, dim=None):
    """Size-1 dims removed: all, or those of ``axis`` (a named dim of another size stays)."""
    axes = normalize_axis("squeeze", axis, x.ndim, dim=dim)
    axes = range(x.ndim) if axes is None else axes
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes or n != 1))


def contiguous(x):
    """x itself when its memory is in C order, else a C-ordered copy in the graph."""
    return x if x._array.flags.c_contiguous else Clone.apply(x)


def concatenate(tensors, axis=DIM_0, *, dim=None):
    """Tensors joined along an existing ``axis`` (``torch.cat``); as torch, an empty 1-D
    tensor beside tensors of more dims is skipped."""
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("concatenate: expected at least one tensor")
    shapes = [np.shape(t) for t in tensors]
    kept = [s for s in shapes if not _legacy_empty(s, shapes)] or shapes
    ndim = len(kept[0])
    if ndim == 0 or any(len(s) != ndim for s in kept):
        raise ValueError(f"concatenate: tensors must have the same number of dims (at least "
                         f"1), got shapes {shapes}")
    axis = normalize_axis("concatenate", axis, ndim, dim=dim, single=True)
    if any(s[:axis] + s[axis + 1:] != kept[0][:axis] + kept[0][axis + 1:] for s in kept):
        raise ValueError(f"concatenate: sizes must match except along axis {axis}, got "
                         f"shapes {shapes}")
    return Concatenate.apply(*tensors, axis=axis)


cat = concatenate


def stack(tensors, axis=DIM_0, *, dim=None):
    """Tensors of one shape joined along a new ``axis`` (``torch.stack``)."""
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("stack: expected at least one tensor")
    shape = np.shape(tensors[0])
    for i, t in enumerate(tensors):
        if np.shape(t) != shape:
            raise ValueError(f"stack expects each tensor to be equal size, but got shape "
                             f"{shape} at entry 0 and {np.shape(t)} at entry {i}")
    axis = normalize_axis("stack", axis, len(shape), dim=dim, single=True,
                          insert=True)
    new_shape = shape[:axis] + (1,) + shape[axis:]
    return concatenate([Reshape.apply(t, shape=new_shape) for t in tensors], axis)


def _split_axis(fn, x, axis, dim):
    axis = normalize_axis(fn, axis, x.ndim, dim=dim, single=True)
    if x.ndim == 0:
        raise ValueError(f"{fn}: a 0-d tensor has no dim to cut")
    return axis


def split(x, split_size_or_sections, axis=DIM_0, *, dim=None):
    """A tuple of views along ``axis`` (``torch.split``): pieces of an int size (the last
    smaller), or of each size of a sequence.

    Example:
        >>> q, k, v = qkv.split(d_model, axis=-1)        # (B, T, 3C) -> 3 x (B, T, C)
    """
    axis = _split_axis("split", x, axis, dim)
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


def chunk(x, chunks, axis=DIM_0, *, dim=None):
    """At most ``chunks`` views along ``axis``, each ceil(n / chunks) long (``torch.chunk``)."""
    if isinstance(chunks, bool) or not isinstance(chunks, numbers.Integral):
        raise TypeError(f"chunk: chunks must be an int, got {chunks!r}")
    if chunks < 1:
        raise ValueError(f"chunk: chunks must be at least 1, got {chunks}")
    axis = _split_axis("chunk", x, axis, dim)
    if x.shape[axis] == 0:
        return Split.apply(x, sizes=(0,) * int(chunks), axis=axis)
    return split(x, math.ceil(x.shape[axis] / chunks), axis)


def repeat(x, *sizes):
    """x tiled ``sizes[d]`` times along dim d (``torch.Tensor.repeat``)."""
    sizes = sizes_of(sizes)
    if not all(isinstance(r, numbers.Integral) and not isinstance(r, bool) and r >= 0
               for r in sizes):
        raise ValueError(f"repeat: repeats must be non-negative ints, got {sizes}")
    if len(sizes) < x.ndim:
        raise ValueError(f"repeat: give at least one repeat per dim ({x.ndim}), got "
                         f"{len(sizes)}: {sizes}")
    padded = (1,) * (len(sizes) - x.ndim) + x.shape
    # a copy of x for each repeat: (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...)
    tiles = Expand.apply(reshape(x, tuple(n for s in padded for n in (1, s))),
                         shape=tuple(n for pair in zip(sizes, padded) for n in pair))
    tiled = reshape(tiles, tuple(r * s for r, s in zip(sizes, padded)))
    # Still a read-only view of x when nothing needed copying (every repeat 1, or only
    # size-1 dims repeated); torch's repeat always copies, so the result shares nothing.
    same_memory = backend.memory_owner(tiled._array) is backend.memory_owner(x._array)
    return Clone.apply(tiled) if same_memory else tiled
