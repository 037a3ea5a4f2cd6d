"""More of PyTorch's shape vocabulary, beside ``shape.py``: broadcasting (broadcast_to,
broadcast_tensors), swapaxes, view (a reshape that refuses to copy), view_as/reshape_as,
diagonals (diagonal, diag, diag_embed, trace), tile, the stacks (hstack, vstack, dstack,
column_stack, atleast_Nd), the splits (tensor_split, hsplit, vsplit, dsplit), rot90 and the
flips; and the in-place forms of the triangle and index writes (``tril_``, ``scatter_``,
``index_add_``, ...), by the in-place rules of ``pointwise._in_place``. (``products.py``
holds kron, tensordot, inner, cross and the distances.)

Everything is a composition of the primitives, which carry the gradients, except the
diagonal: ``Diagonal`` is a strided view of its input's memory (as torch's, so
``x.diagonal().zero_()`` writes into x), and ``DiagEmbed`` its adjoint.

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import math
import numbers

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from ..autograd.function import Function
from ..dtypes import is_floating, torch_name
from . import elementwise, indexing, reductions, sorting
from .base import (broadcast_shape, check_tensor, constant, normalize_axis,
                   result_dtype, size_args, sizes_of)
from .pointwise import _in_place
from .shape import (Expand, Split, chunk, concatenate, expanded_shape, flip, repeat, reshape,
                    split, transpose)

METHODS = ("broadcast_to", "swapaxes", "swapdims", "view", "view_as", "reshape_as", "diagonal",
           "diag", "diag_embed", "trace", "tile", "tensor_split", "hsplit", "vsplit",
           "dsplit", "rot90", "fliplr", "flipud", "tril_", "triu_", "scatter_", "scatter_add_",
           "index_add_", "index_fill_", "index_copy_", "diagflat", "msort", "split_with_sizes",
           "sum_to_size", "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes")


def _ints(fn, name, values):
    # a tuple of ints as torch's factories read one (a bool first refused, a bool after it
    # or a 0-d integer tensor its int), refused with torch's TypeError otherwise
    values = dtypes.factory_shape(values, f"{fn}(): {name}")
    for v in values:
        if not isinstance(v, numbers.Integral):
            raise TypeError(f"{fn}(): {name} must be a tuple of ints, got "
                            f"{type(v).__name__} {v!r} in {values}")
    return tuple(int(v) for v in values)


def _twin(function, method):
    # ``function``'s Tensor method, taking the sizes one by one too (``x.tile(2, 2)``)
    method.__name__ = method.__qualname__ = function.__name__
    method.__doc__ = function.__doc__
    function.method = method
    return function


# ----- broadcasting, swaps, views of another's shape ------------------------------------------
def _expanded(fn, x, size):
    # Expand to ``size`` after torch's checks (-1 keeps a dim; new dims lead)
    return Expand.apply(x, shape=expanded_shape(fn, x.shape, size))


def broadcast_to(input, size):
    """``torch.broadcast_to``: a broadcast view of input in ``size`` (a tuple of ints; -1
    keeps a dim); the gradient sums over the broadcast dims.

    Example:
        >>> mg.broadcast_to(mg.tensor([1.0, 2.0]), (3, 2))               # 3 rows of [1, 2]
    """
    check_tensor("broadcast_to", input)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"broadcast_to(): size must be a tuple of ints, got "
                        f"{type(size).__name__} {size!r}")
    return _expanded("broadcast_to", input, _ints("broadcast_to", "size", size))


_twin(broadcast_to, lambda x, *size: _expanded(
    "broadcast_to", x, _ints("broadcast_to", "size", sizes_of(size))))


def broadcast_tensors(*tensors):
    """``torch.broadcast_tensors``: the tensors as broadcast views of one shape, a tuple.

    Example:
        >>> a, b = mg.broadcast_tensors(mg.ones(3, 1), mg.ones(4))        # both (3, 4)
    """
    for i, t in enumerate(tensors):
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(f"broadcast_tensors(): expected a Tensor as argument {i}, got "
                            f"{type(t).__name__}")
    shape = broadcast_shape("broadcast_tensors", *(t.shape for t in tensors))
    # a tensor of the shape already is returned itself, as torch returns it
    return tuple(t if t.shape == shape else Expand.apply(t, shape=shape) for t in tensors)


def swapaxes(input, axis0, axis1):
    """``torch.swapaxes``: ``transpose(input, axis0, axis1)``, a view with two dims swapped."""
    return transpose(check_tensor("swapaxes", input), axis0, axis1)


def swapdims(input, dim0, dim1):
    """``torch.swapdims``: ``transpose(input, dim0, dim1)``, a view with two dims swapped."""
    return transpose(check_tensor("swapdims", input), dim0, dim1)


def view(input, *shape, size=None, dtype=None):
    """``torch.Tensor.view``: input's elements in ``shape`` (ints or one tuple; one -1 is
    inferred), reading input's memory. Where a view of C-ordered memory (a transpose,
    permute, slice or expand of it) cannot be read in ``shape`` without a copy (a new dim
    would span two separate runs of it: ``x.T.view(-1)``), torch's RuntimeError; ``reshape``
    copies there. An op's result whose NumPy memory order is not torch's (NumPy's
    ``x[:, index]``, ``exp`` of a transpose) and its views are copied where needed, never
    refused. ``x.view(dtype)`` (or ``dtype=``) reads the same bytes as ``dtype`` (``_bits_as``).

    Example:
        >>> mg.arange(6).reshape(2, 3).view(3, 2)      # a view; .T.view(-1) raises
    """
    if dtype is not None and size is not None:
        raise TypeError("view() takes a size or a dtype, not both")
    size = sizes_of(shape, size if dtype is None else dtype, "size" if dtype is None else "dtype")
    if len(size) == 1 and (isinstance(size[0], (str, type)) or dtypes.is_dtype(size[0])):
        return _bits_as(input, dtypes.as_dtype(size[0]))
    array = input._array
    # torch's strides are these only for a view (of an input: _view_version) of C order
    if input._view_version is not None and not array.flags.c_contiguous \
            and backend.memory_owner(array).flags.c_contiguous:
        new = _inferred(size, array.size)
        if new is not None and not _viewable(array.shape, array.strides, new):
            raise RuntimeError(
                f"view: shape {new} of a tensor of shape {tuple(array.shape)} and strides "
                f"{input.stride()}: view size is not compatible with input tensor's size and "
                "stride (at least one dimension spans across two contiguous subspaces). Use "
                ".reshape(...) instead.")
    return reshape(input, size)


def _bits_as(input, dtype):
    """``x.view(dtype)``: x's memory read as ``dtype``, the last dim scaled by the ratio of
    the item sizes; outside the graph (as torch's, even for a float dtype) and sharing x's
    version counter. torch's RuntimeError where the bytes do not regroup."""
    array = input._array
    ratio = dtype.itemsize / array.itemsize
    if ratio != 1:
        what = (f"to view {torch_name(array.dtype)} as {torch_name(dtype)} (different element "
                "sizes)")
        if array.ndim == 0:
            raise RuntimeError(f"view(dtype): self.dim() cannot be 0 {what}")
        if array.shape[-1] != 1 and input.stride(-1) != 1:       # torch's strides, not NumPy's
            raise RuntimeError(f"view(dtype): self.stride(-1) must be 1 {what}, but got "
                               f"{input.stride(-1)}")
        if ratio > 1 and array.shape[-1] % ratio:
            raise RuntimeError(f"view(dtype): self.size(-1) must be divisible by {int(ratio)} "
                               f"{what}, but got {array.shape[-1]}")
    out = constant(array.view(dtype))
    out._version_box = input._version_box          # a write through it is a write to x
    return out


def _inferred(size, count):
    # ``size`` with its one -1 worked out for ``count`` elements; None where no shape fits
    # (``reshape`` raises its error then)
    known = math.prod(n for n in size if n != -1)
    if size.count(-1) == 0:
        return size if known == count else None
    if size.count(-1) > 1 or known == 0 or count % known:
        return None
    return tuple(count // known if n == -1 else n for n in size)


def _viewable(shape, strides, new_shape):
    """True where memory of ``shape`` and ``strides`` reads as ``new_shape`` without a copy,
    by ATen's ``computeStride``: the old dims fall into runs, each dim's step the next
    one's times its size (a dim of size 1 joins any run); every run must be exactly the
    product of consecutive new dims. No element, or no dim: always."""
    if not shape or math.prod(shape) == 0:
        return True
    view_d = len(new_shape) - 1
    run_step, run_count, view_count = strides[-1], 1, 1
    for d in range(len(shape) - 1, -1, -1):
        run_count *= shape[d]
        if d == 0 or shape[d - 1] != 1 and strides[d - 1] != run_count * run_step:
            while view_d >= 0 and (view_count < run_count or new_shape[view_d] == 1):
                view_count *= new_shape[view_d]
                view_d -= 1
            if view_count != run_count:
                return False
            if d > 0:                                  # the next run starts at dim d - 1
                run_step, run_count, view_count = strides[d - 1], 1, 1
    return view_d == -1


def _shape_of(fn, input, other):
    check_tensor(fn, input)
    if not isinstance(other, _tensor.Tensor):
        raise TypeError(f"{fn}(): other must be a Tensor, got {type(other).__name__}")
    if other.size != input.size:
        raise RuntimeError(f"{fn}(): shape {list(other.shape)} is invalid for input of size "
                           f"{input.size}")
    return (view if fn == "view_as" else reshape)(input, other.shape)


def view_as(input, other):
    """``torch.Tensor.view_as``: input's elements in ``other``'s shape, ``x.view(other.shape)``:
    refused where the memory cannot be read in that shape without a copy, as ``view``."""
    return _shape_of("view_as", input, other)


def reshape_as(input, other):
    """``torch.Tensor.reshape_as``: input's elements in ``other``'s shape."""
    return _shape_of("reshape_as", input, other)


# ----- diagonals ------------------------------------------------------------------------------
def _diagonal_view(x, offset, axis1, axis2):
    # x's diagonal (row - col = -offset) of dims axis1, axis2 as a strided view of its memory,
    # a last dim in place of the two (torch's layout); writable when x is
    xp = backend.array_module(x)
    moved = xp.moveaxis(x, (axis1, axis2), (-2, -1))
    start = moved[..., max(-offset, 0):, max(offset, 0):]           # (..., rows', cols')
    size = min(start.shape[-2:])
    return xp.lib.stride_tricks.as_strided(
        start, start.shape[:-2] + (size,), start.strides[:-2] + (sum(start.strides[-2:]),))


class Diagonal(Function):
    """The diagonal as a view; its gradient is the gradient written on a zero diagonal."""

    @staticmethod
    def forward(ctx, x, offset, axis1, axis2):
        ctx.shape, ctx.where = x.shape, (offset, axis1, axis2)
        return _diagonal_view(x, offset, axis1, axis2)

    @staticmethod
    def backward(ctx, grad):
        out = backend.array_module(grad).zeros(ctx.shape, grad.dtype)
        _diagonal_view(out, *ctx.where)[...] = grad
        return out


class DiagEmbed(Function):
    """x written on the diagonal of zeros of ``shape`` (``diag_embed``); the gradient is the
    gradient's diagonal."""

    @staticmethod
    def forward(ctx, x, shape, offset, axis1, axis2):
        ctx.where = (offset, axis1, axis2)
        out = backend.array_module(x).zeros(shape, x.dtype)
        _diagonal_view(out, offset, axis1, axis2)[...] = x
        return out

    @staticmethod
    def backward(ctx, grad):
        return _diagonal_view(grad, *ctx.where).copy()


def _two_dims(fn, ndim, dim1, dim2):
    a = normalize_axis(fn, dim1, ndim, single=True)
    b = normalize_axis(fn, dim2, ndim, single=True)
    if a == b:       # (below 2 dims any two dims are the same one: torch's error too)
        raise RuntimeError(f"{fn}(): diagonal dimensions cannot be identical {dim1}, {dim2}")
    return a, b


def _offset(fn, offset):
    offset = dtypes.index_of(offset)     # a 0-d integer tensor is its int, as torch reads it
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, numbers.Integral):
        raise TypeError(f"{fn}(): offset must be an int, got {offset!r}")
    return int(offset)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """``torch.diagonal``: the elements ``input[..., i, i + offset, ...]`` of dims ``dim1``
    and ``dim2`` (offset > 0: above the main diagonal), as a last dim in place of those two:
    a view of input's memory, as torch's. The gradient goes back to the diagonal.

    Example:
        >>> mg.arange(9.0).reshape(3, 3).diagonal(1)                   # tensor([1., 5.])
    """
    return _diagonal("diagonal", input, offset, dim1, dim2)


def _diagonal(fn, input, offset, dim1, dim2):
    check_tensor(fn, input)
    a, b = _two_dims(fn, input.ndim, dim1, dim2)
    return Diagonal.apply(input, offset=_offset(fn, offset), axis1=a, axis2=b)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """``torch.diag_embed``: the last dim of input written on the ``offset`` diagonal of
    dims ``dim1``, ``dim2`` of a new zero tensor, one dim more than input (each of them of
    the last size + |offset|).

    Example:
        >>> mg.diag_embed(mg.ones(2, 3)).shape                            # (2, 3, 3)
    """
    check_tensor("diag_embed", input)
    offset = _offset("diag_embed", offset)
    a, b = _two_dims("diag_embed", input.ndim + 1, dim1, dim2)
    n = (input.shape[-1] if input.ndim else 1) + abs(offset)
    rest = iter(input.shape[:-1])
    shape = tuple(n if d in (a, b) else next(rest) for d in range(input.ndim + 1))
    x = input.reshape(1) if input.ndim == 0 else input
    return DiagEmbed.apply(x, shape=shape, offset=offset, axis1=a, axis2=b)


def diag(input, diagonal=0):
    """``torch.diag``: of a 1-D input, the square matrix with input on its ``diagonal``
    (size n + |diagonal|); of a 2-D input, its ``diagonal`` as a 1-D copy.

    Example:
        >>> mg.diag(mg.tensor([1.0, 2.0]))                    # tensor([[1., 0.], [0., 2.]])
    """
    check_tensor("diag", input)
    if input.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    return _diagonal("diag", input, diagonal, 0, 1).clone()


def diagflat(input, offset=0):
    """``torch.diagflat``: the square matrix with the flattened input on its ``offset``
    diagonal."""
    check_tensor("diagflat", input)
    return diag_embed(reshape(input, -1), offset)


def msort(input):
    """``input`` sorted along dim 0, the values only (``torch.msort``)."""
    check_tensor("msort", input)
    return sorting.sort(input, 0).values


def split_with_sizes(input, split_sizes, dim=0):
    """Views of ``input`` along ``dim`` of the given sizes, which sum to its size
    (``Tensor.split_with_sizes``)."""
    sizes = _ints("split_with_sizes", "split_sizes", split_sizes)
    if input.ndim == 0:
        raise RuntimeError("split_with_sizes expects at least a 1-dimensional tensor")
    axis = normalize_axis("split_with_sizes", dim, input.ndim, single=True)
    negative = [n for n in sizes if n < 0]
    if negative:
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={list(sizes)}")
    if sum(sizes) != input.shape[axis]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{input.shape[axis]} (input tensor's size at dimension {dim}), "
                           f"but got split_sizes={list(sizes)}")
    return split(input, list(sizes), axis)


# torch's unsafe_* split into tensors that autograd does not track as views (an in-place
# write to one is not checked against the others): here the same views as split's
def unsafe_split(input, split_size, dim=0):
    """``split`` with an int ``split_size`` only (``torch.unsafe_split``), 0 only for an
    empty dim.

    Example:
        >>> q, k, v = qkv.unsafe_split(d_model, -1)
    """
    _ints("unsafe_split", "split_size", (split_size,))
    if input.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    axis = normalize_axis("unsafe_split", dim, input.ndim, single=True)
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size="
                           f"{split_size}")
    if split_size == 0 and input.shape[axis]:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {input.shape[axis]}")
    return split(input, split_size or [0], axis)            # 0: one empty piece


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` (``torch.unsafe_chunk``): at most ``chunks`` pieces along ``dim``.

    Example:
        >>> first, second = x.unsafe_chunk(2, dim=-1)
    """
    _ints("unsafe_chunk", "chunks", (chunks,))
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks < 1:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    return chunk(input, chunks, normalize_axis("unsafe_chunk", dim, input.ndim, single=True))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``split_with_sizes`` (``torch.unsafe_split_with_sizes``): pieces of the given sizes.

    Example:
        >>> head, tail = x.unsafe_split_with_sizes([1, 2], dim=1)
    """
    if not isinstance(split_sizes, (tuple, list)):
        raise TypeError(f"unsafe_split_with_sizes(): argument 'split_sizes' (position 1) must "
                        f"be tuple of ints, not {type(split_sizes).__name__}")
    return split_with_sizes(input, split_sizes, dim)


def sum_to_size(input, *size):
    """``input`` summed down to ``size`` (``Tensor.sum_to_size``), which must expand to
    input's shape: the dims broadcasting would add or stretch are summed."""
    size = size_args("sum_to_size", size)
    try:
        expandable = len(size) <= input.ndim and \
            np.broadcast_shapes(size, input.shape) == input.shape
    except ValueError:
        expandable = False
    if not expandable:
        raise RuntimeError(f"size {list(size)} is not expandable to size {list(input.shape)}.")
    lead = input.ndim - len(size)
    axes = tuple(range(lead)) + tuple(lead + d for d, n in enumerate(size)
                                      if n == 1 and input.shape[lead + d] != 1)
    # torch sums whenever the size is (), a 0-d input too: a bool or int32 one gives int64
    out = reductions.sum(input, axes, keepdims=True) if axes or not size else input
    return reshape(out, size)


def trace(input):
    """``torch.trace``: the sum of a matrix's main diagonal; an integer input gives int64.

    Example:
        >>> mg.trace(mg.eye(3))                                              # tensor(3.)
    """
    check_tensor("trace", input)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype == np.bool_:
        raise NotImplementedError("trace: not implemented for bool tensors")
    main = diagonal(input)
    return reductions.sum(main if is_floating(main.dtype) or main.dtype.kind == "c"
                          else main.astype(np.int64))


# ----- tile, stacks ---------------------------------------------------------------------------
def _tiled(x, dims):
    if any(d < 0 for d in dims):
        raise RuntimeError(f"tile(): dims must be non-negative, got {dims}")
    return repeat(x, (1,) * (x.ndim - len(dims)) + dims)


def tile(input, dims):
    """``torch.tile``: input repeated ``dims[d]`` times along each dim d (the shorter of
    ``dims`` and input's shape padded with leading 1s); a copy.

    Example:
        >>> mg.tensor([1, 2]).tile((2, 2))                   # [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    check_tensor("tile", input)
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"tile(): dims must be a tuple of ints, got {type(dims).__name__}")
    return _tiled(input, _ints("tile", "dims", dims))


_twin(tile, lambda x, *sizes, dims=None: _tiled(x, _ints("tile", "dims",
                                                         sizes_of(sizes, dims, "dims"))))


def _tensors(fn, tensors):
    if isinstance(tensors, _tensor.Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): expected a list or tuple of tensors, got "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{fn}(): expects a non-empty list of tensors")
    return [check_tensor(fn, t) for t in tensors]


def _joined(fn, tensors, axis):
    # torch.cat's dtype (every tensor has dims) and its RuntimeErrors, then concatenate
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = result_dtype(np.empty(0, dtype), np.empty(0, t.dtype))
    kept = [t for t in tensors if t.shape != (0,)] or tensors      # torch's legacy empty
    for t in kept:
        if t.ndim != kept[0].ndim:
            raise RuntimeError(f"{fn}(): tensors must have the same number of dims, got "
                               f"shapes {[x.shape for x in tensors]}")
        if t.shape[:axis] + t.shape[axis + 1:] != kept[0].shape[:axis] + kept[0].shape[axis + 1:]:
            raise RuntimeError(f"{fn}(): sizes of tensors must match except in dim {axis}, "
                               f"got shapes {[x.shape for x in tensors]}")
    return concatenate([t.astype(dtype, copy=False) for t in tensors], axis)


def _at_least(fn, ndim, tensors):
    # each tensor with at least ``ndim`` dims: torch's atleast_1d/2d/3d
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_at_least(fn, ndim, (t,)) for t in tensors[0])
    if len(tensors) != 1:
        return tuple(_at_least(fn, ndim, (t,)) for t in tensors)
    x = check_tensor(fn, tensors[0])
    if x.ndim >= ndim:
        return x
    if x.ndim == 2:                                             # (m, n) -> (m, n, 1)
        return reshape(x, x.shape + (1,))
    return reshape(x, {1: (1,), 2: (1, x.size), 3: (1, x.size, 1)}[ndim])   # 0-d: size 1


def atleast_1d(*tensors):
    """``torch.atleast_1d``: a 0-d tensor as shape (1,), others as they are; of several
    tensors (or one list), a tuple."""
    return _at_least("atleast_1d", 1, tensors)


def atleast_2d(*tensors):
    """``torch.atleast_2d``: 0-d as (1, 1), 1-D (n,) as (1, n), others as they are."""
    return _at_least("atleast_2d", 2, tensors)


def atleast_3d(*tensors):
    """``torch.atleast_3d``: 0-d as (1, 1, 1), (n,) as (1, n, 1), (m, n) as (m, n, 1)."""
    return _at_least("atleast_3d", 3, tensors)


def hstack(tensors):
    """``torch.hstack``: the tensors joined along dim 1 (dim 0 for 1-D ones), 0-d ones taken
    as 1-D, in their promoted dtype.

    Example:
        >>> mg.hstack([mg.ones(2, 1), mg.zeros(2, 3)]).shape                     # (2, 4)
    """
    tensors = [atleast_1d(t) for t in _tensors("hstack", tensors)]
    return _joined("hstack", tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """``torch.vstack``: the tensors joined along dim 0 after ``atleast_2d`` (rows).

    Example:
        >>> mg.vstack([mg.ones(3), mg.zeros(3)]).shape                           # (2, 3)
    """
    return _joined("vstack", [atleast_2d(t) for t in _tensors("vstack", tensors)], 0)


row_stack = vstack                    # torch.row_stack, vstack's other name


def dstack(tensors):
    """``torch.dstack``: the tensors joined along dim 2 after ``atleast_3d`` (depth)."""
    return _joined("dstack", [atleast_3d(t) for t in _tensors("dstack", tensors)], 2)


def column_stack(tensors):
    """``torch.column_stack``: the tensors joined along dim 1, 0-d and 1-D ones taken as
    columns (n, 1).

    Example:
        >>> mg.column_stack([mg.ones(3), mg.zeros(3, 2)]).shape                  # (3, 3)
    """
    tensors = [t if t.ndim > 1 else reshape(t, (t.size, 1))
               for t in _tensors("column_stack", tensors)]
    return _joined("column_stack", tensors, 1)


# ----- splits ---------------------------------------------------------------------------------
def _split_points(fn, given):
    # an int of sections, or a tuple of indices, from torch's forms (an int, ints, a tensor)
    if isinstance(given, _tensor.Tensor):
        if given.dtype != np.int64:
            raise RuntimeError(f"{fn}(): expected an int64 tensor of indices or sections, "
                               f"got {given.dtype}")
        if given.ndim > 1:
            raise RuntimeError(f"{fn}(): expected a 0-d or 1-D tensor of indices or "
                               f"sections, got shape {given.shape}")
        return int(given.item()) if given.ndim == 0 else tuple(given.tolist())
    if isinstance(given, (list, tuple)):
        return _ints(fn, "indices", given)
    return _ints(fn, "sections", (given,))[0]


def _split(fn, x, given, axis):
    points = _split_points(fn, given)
    length = x.shape[axis]
    if not isinstance(points, tuple):
        if points < 1:
            raise RuntimeError(f"{fn}(): number of sections must be larger than 0, got "
                               f"{points}")
        small, extra = divmod(length, points)       # the first ``extra`` pieces one longer
        sizes = (small + 1,) * extra + (small,) * (points - extra)
        return Split.apply(x, sizes=sizes, axis=axis)
    bounds = (0,) + points + (length,)
    lead = (slice(None),) * axis
    return tuple(indexing.getitem(x, lead + (slice(start, stop),))
                 for start, stop in zip(bounds[:-1], bounds[1:]))


def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """``torch.tensor_split``: views of input along ``dim``, a tuple. An int n gives n
    pieces, the first ``size % n`` one longer; a sequence of indices (or a 1-D int64
    tensor) cuts before each, as slices ``input[i:j]`` do (negative counts from the end).

    Example:
        >>> [p.shape[0] for p in mg.arange(7).tensor_split(3)]               # [3, 2, 2]
    """
    check_tensor("tensor_split", input)
    given = [v for v in (indices_or_sections, sections, indices, tensor_indices_or_sections)
             if v is not None]
    if len(given) != 1:
        raise TypeError("tensor_split(): give one of indices_or_sections, sections, indices")
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    axis = normalize_axis("tensor_split", dim, input.ndim, single=True)
    return _split("tensor_split", input, given[0], axis)


def _split_at(fn, ndim, axis, input, indices_or_sections):
    # hsplit, vsplit, dsplit: tensor_split with an int that must divide the size
    check_tensor(fn, input)
    if input.ndim < ndim:
        raise RuntimeError(f"{fn}(): requires a tensor with at least {ndim} dims, got "
                           f"{input.ndim}")
    axis = axis if input.ndim > 1 else 0
    if isinstance(indices_or_sections, numbers.Integral) and not isinstance(
            indices_or_sections, bool) and indices_or_sections != 0 \
            and input.shape[axis] % indices_or_sections:
        raise RuntimeError(f"{fn}(): the size {input.shape[axis]} of dim {axis} is not "
                           f"divisible by the split_size {indices_or_sections}")
    return _split(fn, input, indices_or_sections, axis)


def _sections(fn, sections, indices):
    # the int of torch's ``sections=`` overload, or the list of its ``indices=`` one
    if (sections is None) == (indices is None) or isinstance(indices, int):
        raise TypeError(f"{fn}() takes an int sections or a list indices, got "
                        f"sections={sections!r}, indices={indices!r}")
    return indices if sections is None else sections


def hsplit(input, sections=None, *, indices=None):
    """``torch.hsplit``: ``tensor_split`` along dim 1 (dim 0 for 1-D input); an int must
    divide that dim; by keyword, ``sections=`` (an int) or ``indices=`` (a list), as torch's."""
    return _split_at("hsplit", 1, 1, input, _sections("hsplit", sections, indices))


def vsplit(input, sections=None, *, indices=None):
    """``torch.vsplit``: ``tensor_split`` along dim 0 of an input of 2 or more dims; an int
    must divide that dim; by keyword, ``sections=`` (an int) or ``indices=`` (a list)."""
    return _split_at("vsplit", 2, 0, input, _sections("vsplit", sections, indices))


def dsplit(input, sections=None, *, indices=None):
    """``torch.dsplit``: ``tensor_split`` along dim 2 of an input of 3 or more dims; an int
    must divide that dim; by keyword, ``sections=`` (an int) or ``indices=`` (a list)."""
    return _split_at("dsplit", 3, 2, input, _sections("dsplit", sections, indices))


# ----- rotation, flips ------------------------------------------------------------------------
def rot90(input, k=1, dims=(0, 1)):
    """``torch.rot90``: input rotated by 90° ``k`` times in the plane of ``dims``, from the
    first dim towards the second (a copy; k may be negative).

    Example:
        >>> mg.tensor([[1, 2], [3, 4]]).rot90()                        # [[2, 4], [1, 3]]
    """
    check_tensor("rot90", input)
    dims = _ints("rot90", "dims", dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90(): expected total rotation dims == 2, got {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90(): expected total dims >= 2, got {input.ndim}")
    a, b = (normalize_axis("rot90", d, input.ndim, single=True) for d in dims)
    if a == b:
        raise RuntimeError(f"rot90(): expected rotation dims to be different, got {dims}")
    turns = _ints("rot90", "k", (k,))[0] % 4
    if turns == 0:
        return input.clone()
    if turns == 2:
        return flip(input, [a, b])
    return transpose(flip(input, [b if turns == 1 else a]), a, b)


def fliplr(input):
    """``torch.fliplr``: the order along dim 1 reversed (input of 2 or more dims)."""
    if check_tensor("fliplr", input).ndim < 2:
        raise RuntimeError("fliplr(): input must be >= 2-d")
    return flip(input, [1])


def flipud(input):
    """``torch.flipud``: the order along dim 0 reversed (input of 1 or more dims)."""
    if check_tensor("flipud", input).ndim < 1:
        raise RuntimeError("flipud(): input must be >= 1-d")
    return flip(input, [0])


# ----- in place: the triangles and the index writes -------------------------------------------
tril_ = _in_place("tril", elementwise.tril)
triu_ = _in_place("triu", elementwise.triu)
scatter_ = _in_place("scatter", indexing.scatter)
scatter_add_ = _in_place("scatter_add", indexing.scatter_add)
index_add_ = _in_place("index_add", indexing.index_add)
index_fill_ = _in_place("index_fill", indexing.index_fill)
index_copy_ = _in_place("index_copy", indexing.index_copy)
