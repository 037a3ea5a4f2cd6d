"""PyTorch's writes by index beside ``indexing.py``'s scatter family: the Tensor value of
``x[index] = value`` as torch writes it (``put_value``), ``index_put`` (a tuple of index
tensors, ``accumulate``), ``put`` (flat positions), ``masked_scatter``, the reductions into
places (``scatter_reduce``, ``index_reduce``: sum, prod, mean, amax, amin,
``include_self``), ``fill_diagonal_`` and the writes into a view's places
(``diagonal_scatter``, ``select_scatter``, ``slice_scatter``), with their in-place forms
(``pointwise._in_place``'s rules).

Each is out of place on ``IndexPut`` or ``ScatterAdd`` (``indexing.py``), except the
reductions, ``ScatterReduce``: one node with torch's closed-form gradients, and the
diagonal's write, ``DiagonalScatter``.

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import warnings

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from ..autograd.function import Function
from .arrange import _diagonal_view, _offset, _two_dims
from .base import (OutOfRangeError, broadcast_shape, check_fits, check_tensor, constant, kept,
                   normalize_axis, raw)
from .index_parsing import _BYTE_MASK, _is_mask, _kind, byte_mask_fill, warn_once
from .indexing import (IndexPut, ScatterAdd, _as_shaped, _at_least_1d, _fill_value, _grid,
                       _scatter_grid, _src_part, index_array)
from .pointwise import _in_place
from .shape import Expand, _int
from .shape_arguments import tensor_argument

METHODS = ("index_put", "index_put_", "put", "put_", "masked_scatter", "masked_scatter_",
           "scatter_reduce", "scatter_reduce_", "index_reduce", "index_reduce_",
           "fill_diagonal_", "diagonal_scatter", "select_scatter", "slice_scatter")


def put_value(index, value, dtype):
    """The Tensor ``value`` as torch's ``x[index] = value`` writes it into a tensor of
    ``dtype`` (``index``: ``index_parsing.parsed``'s). Basic indices and a lone ``True`` copy it,
    cast (a complex value's real part, with torch's warning). One element beside one bool
    mask with dims, the index's only array (whatever ints, slices, None or ``...`` stand
    beside it), is its ``masked_fill_`` of that number: checked as torch's, cast, returned
    0-d. Beside any other array (its ``index_put_``) another dtype is torch's
    RuntimeError."""
    parts = index if type(index) is tuple else (index,)
    arrays = [part for part in parts if _kind(part) == "array"]
    lost = value.dtype.kind == "c" and dtype.kind != "c"        # an imaginary part
    if not arrays or index is True:
        if lost:
            warnings.warn("Casting complex values to real discards the imaginary part",
                          UserWarning, stacklevel=4)
        return value.real if lost else value
    if value.size == 1 and len(arrays) == 1 and _is_mask(arrays[0]) \
            and np.ndim(raw(arrays[0])):
        if value.dtype != dtype:
            check_fits("__setitem__", value.item(), dtype)     # its number, as torch's
        value = value.reshape(()) if value.ndim else value
        return value.real if lost else value
    if value.dtype != dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{dtype} for the destination and {value.dtype} for the source")
    return value


class IndexRangeError(OutOfRangeError, RuntimeError):
    """An index out of range where torch raises a RuntimeError (``scatter_reduce``): also
    the ``OutOfRangeError`` (an IndexError and a ValueError) of the other index ops."""


# ----- index_put, put, masked_scatter ---------------------------------------------------------
def _index_arrays(fn, input, indices):
    """torch's tuple of index tensors as NumPy's index: integer arrays (each Tensor's own
    array, so that its version is checked at backward) and bool (or uint8) masks replaced
    by their nonzero positions, after torch's checks (dtype, range, mask shape, count)."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{fn}(): indices must be a tuple of Tensors, not "
                        f"{type(indices).__name__}")
    if not indices:
        raise RuntimeError(f"{fn}(): indices must hold at least one tensor")
    parts, dim = [], 0
    for i, t in enumerate(indices):
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(f"{fn}(): expected Tensor as element {i} in argument indices, "
                            f"but got {type(t).__name__}")
        data = t._array
        if data.dtype.kind == "b" or data.dtype == np.uint8:
            if data.dtype == np.uint8:
                warnings.warn(_BYTE_MASK, UserWarning, stacklevel=3)
            if data.ndim == 0:
                raise IndexError(f"{fn}(): a 0-d bool index is not supported; index with a "
                                 "1-D mask")
            shape = input.shape[dim:dim + data.ndim]
            if tuple(data.shape) != shape:
                raise IndexError(f"{fn}(): the shape of the mask {list(data.shape)} at index "
                                 f"{i} does not match the shape of the indexed tensor "
                                 f"{list(input.shape)} at dim {dim}")
            parts += input.xp.nonzero(data.astype(bool, copy=False))
            dim += data.ndim
        elif data.dtype == np.int64 or data.dtype == np.int32:
            size = input.shape[dim] if dim < input.ndim else 0
            if dim < input.ndim and data.size and (int(data.min()) < -size or
                                                   int(data.max()) >= size):
                bad = int(data.min()) if int(data.min()) < -size else int(data.max())
                raise OutOfRangeError(f"{fn}(): index {bad} is out of bounds for dimension "
                                      f"{dim} with size {size}")
            parts.append(kept(t, data))
            dim += 1
        else:
            raise IndexError(f"{fn}(): tensors used as indices must be long, int, byte or "
                             f"bool tensors, got {data.dtype}")
        if dim > input.ndim:
            raise IndexError(f"{fn}(): too many indices for tensor of dimension "
                             f"{input.ndim} (got {len(indices)})")
    return tuple(parts)


def _indexed_shape(fn, input, index):
    # the shape of input[index]: the index arrays' broadcast shape, then input's other dims
    shapes = [tuple(part.shape) for part in index]
    try:
        picked = np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(f"{fn}(): shape mismatch: indexing tensors could not be broadcast "
                         f"together with shapes {', '.join(str(list(s)) for s in shapes)}"
                         ) from None
    return tuple(picked) + input.shape[len(index):]


def index_put(input, indices, values, accumulate=False):
    """``torch.index_put``: a copy of input with ``values`` written at ``input[indices]``
    (``indices`` a tuple of integer or bool tensors, broadcast together; values of input's
    dtype, broadcast to the indexed shape), or added there with ``accumulate=True`` (repeats
    sum; without it, of repeats one write wins). The gradient to input is grad with the
    written places 0 (all of grad when accumulating), to values grad at ``indices``.

    Example:
        >>> mg.zeros(3).index_put((mg.tensor([0, 2]),), mg.tensor(1.0))   # [1., 0., 1.]
    """
    check_tensor("index_put", input)
    tensor_argument("index_put", "values", values)
    if not accumulate and isinstance(indices, (tuple, list)):
        byte_mask_fill(tuple(indices), values, input.shape)   # torch's masked_fill_ of it
    index = _index_arrays("index_put", input, indices)
    if values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{input.dtype} for the destination and {values.dtype} for the "
                           "source.")
    shape = _indexed_shape("index_put", input, index)
    try:
        fits = np.broadcast_shapes(values.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"index_put(): shape mismatch: value tensor of shape "
                           f"{list(values.shape)} cannot be broadcast to indexing result of "
                           f"shape {list(shape)}")
    if accumulate:
        return ScatterAdd.apply(input, values, index=index)
    return IndexPut.apply(input, values, index=index)


def put(input, index, source, accumulate=False):
    """``torch.put``: a copy of input with ``source``'s elements written at the flat
    positions ``index`` (int64, negative counting from the end, as many as source's), or
    added there with ``accumulate=True``. The gradient to input is grad with the written
    places 0 (all of grad when accumulating), to source grad at ``index``.

    Example:
        >>> mg.zeros(2, 2).put(mg.tensor([0, -1]), mg.tensor([1.0, 2.0]))   # [[1, 0], [0, 2]]
    """
    check_tensor("put", input)
    tensor_argument("put", "index", index)
    tensor_argument("put", "source", source)
    if index.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but "
                           f"got self.dtype = {input.dtype} and source.dtype = {source.dtype}")
    if index.size != source.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.size}, index.numel() = "
                         f"{index.size}")
    if input.size == 0 and index.size:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    positions = index._array if index.ndim == 1 else index._array.reshape(-1)
    if positions.size and (int(positions.min()) < -input.size or
                           int(positions.max()) >= input.size):
        bad = int(positions.min()) if int(positions.min()) < -input.size else \
            int(positions.max())
        raise OutOfRangeError(f"put_(): out of range: tried to access index {bad} on a "
                              f"tensor of {input.size} elements.")
    function = ScatterAdd if accumulate else IndexPut
    out = function.apply(input.reshape(-1), source.reshape(-1),
                         index=(kept(index, positions),))
    return out.reshape(input.shape)


def masked_scatter(input, mask, source):
    """``torch.masked_scatter``: a copy of input (broadcast with ``mask``) with the places
    where the bool ``mask`` is True taking source's first elements, in row-major order. The
    gradient to input is grad where mask is False, to source grad at the places each of its
    elements went (0 for the elements left over).

    Example:
        >>> mg.zeros(3).masked_scatter(mg.tensor([True, False, True]), mg.tensor([1.0, 2.0]))
    """
    check_tensor("masked_scatter", input)
    tensor_argument("masked_scatter", "mask", mask)
    tensor_argument("masked_scatter", "source", source)
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got {input.dtype} and {source.dtype}")
    shape = broadcast_shape("masked_scatter", input.shape, mask.shape)
    flat = shape or (1,)                       # NumPy's nonzero takes no 0-d array
    where = input.xp.nonzero(input.xp.broadcast_to(mask._array.reshape(mask.shape or (1,)),
                                                   flat))
    count = int(where[0].size)
    if source.size < count:
        raise RuntimeError(f"masked_scatter(): Number of elements of source < number of ones "
                           f"in mask ({source.size} < {count})")
    x = input if input.shape == flat else Expand.apply(input.reshape(input.shape or (1,)),
                                                       shape=flat)
    picked = source.reshape(-1)[:count]
    return IndexPut.apply(x, picked, index=where).reshape(shape)


index_put_ = _in_place("index_put", index_put)
put_ = _in_place("put", put)
masked_scatter_ = _in_place("masked_scatter", masked_scatter)


# ----- reductions into places: scatter_reduce, index_reduce -----------------------------------
REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce, dtype):
    # the value a place not counting itself starts from (include_self=False)
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    largest = reduce in ("amax", "max")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if largest else info.max
    if dtype.kind == "b":
        return not largest
    return -np.inf if largest else np.inf


def _reduced(x, places, src, reduce, include_self):
    """x with each ``src[i]`` reduced into x's element at the flat (row-major) position
    ``places[i]`` (NumPy's ``ufunc.at`` on 1-D positions, 8x faster than on index tuples;
    repeats combine), a new array; "mean" divides by the count of values (x's own included
    with ``include_self``), integers rounding down, as torch's."""
    xp = backend.array_module(x)
    out = xp.array(x, order="C")                    # (x.size,) through .reshape(-1): a view
    if not include_self:
        out.reshape(-1)[places] = _identity(reduce, x.dtype)
    combine = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply, "amax": xp.maximum,
               "amin": xp.minimum, "max": xp.maximum, "min": xp.minimum}[reduce]
    combine.at(out.reshape(-1), places, src.reshape(-1))
    if reduce == "mean":
        count = _counts(xp, x.shape, places, include_self)
        out = (out // count if x.dtype.kind in "iu" else out / count).astype(x.dtype)
    return out


def _counts(xp, shape, places, include_self):
    # how many values each place combines; 1 where none (the place keeps x's value)
    size = int(np.prod(shape, dtype=np.int64))
    count = xp.bincount(places, minlength=size) + int(include_self)
    count[count == 0] = 1
    return count.reshape(shape)


def _picked(a, places, shape):
    # a's elements at the flat positions ``places``, in ``shape``: torch's gather
    return a.reshape(-1)[places].reshape(shape)


class ScatterReduce(Function):
    """``scatter_reduce`` and ``index_reduce``: src reduced into x at ``where`` (full index
    arrays, made flat positions once). The gradients are torch's: sum, grad to x and grad
    gathered at ``where`` to src; mean, both divided by the count; amax/amin, grad split
    evenly between the values equal to the result; prod, grad · the product of the others,
    exact with zeros. Without ``include_self`` x's places that took a value get none."""

    kept_options = ("where",)

    @staticmethod
    def forward(ctx, x, src, where, reduce, include_self):
        xp = backend.array_module(x)
        ctx.places = xp.ravel_multi_index(where, x.shape).reshape(-1)      # (src.size,)
        ctx.reduce, ctx.include_self = reduce, include_self
        out = _reduced(x, ctx.places, src, reduce, include_self)
        ctx.save_for_backward(x, src, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, src, out = ctx.saved
        places, reduce, include_self = ctx.places, ctx.reduce, ctx.include_self
        xp = backend.array_module(grad)
        if reduce in ("max", "min"):                 # torch's forward takes them, not backward
            raise RuntimeError(f"scatter_reduce: Expected 'reduce' to be one of 'sum', 'prod', "
                               f"'mean', 'amax', 'amin' but got {reduce}.")
        if reduce == "sum":
            grad_x, grad_src = grad, _picked(grad, places, src.shape)
        elif reduce == "mean":
            grad_x = grad / _counts(xp, x.shape, places, include_self)
            grad_src = _picked(grad_x, places, src.shape)
        elif reduce == "prod":
            grad_x, grad_src = _prod_grads(xp, grad, x, src, out, places, include_self)
        else:                                        # amax, amin: ties share the gradient
            x_won = x == out
            src_won = src == _picked(out, places, src.shape)
            winners = xp.array(x_won, dtype=grad.dtype, order="C")
            # added in the sum's dtype: ufunc.at is 20x slower on a bool operand
            xp.add.at(winners.reshape(-1), places, src_won.reshape(-1).astype(grad.dtype))
            shared = grad / winners
            grad_x, grad_src = x_won * shared, src_won * _picked(shared, places, src.shape)
        if not include_self:
            grad_x = xp.array(grad_x, order="C")        # a copy of its own, row-major
            grad_x.reshape(-1)[places] = 0
        return grad_x.astype(x.dtype, copy=False), grad_src.astype(src.dtype, copy=False)


def _prod_grads(xp, grad, x, src, out, places, include_self):
    # d out / d x = the product of the src values at x's place: out / x where x != 0, the
    # product recomputed with x's zeros as 1 otherwise; for src, out / src, or the product
    # of the others where src holds its place's only zero
    x_ones = xp.where(x == 0, 1, x)
    grad_x = grad * _reduced(x_ones, places, src, "prod", include_self) / x_ones
    zero = src == 0
    zeros = xp.bincount(places, weights=zero.reshape(-1), minlength=x.size)
    alone = zero & (_picked(zeros, places, src.shape) == 1)
    others = _reduced(x, places, xp.where(alone, 1, src), "prod", include_self)
    grad_src = xp.where(alone, _picked(grad * others, places, src.shape),
                        _picked(grad * out, places, src.shape) / xp.where(zero, 1, src))
    return grad_x, grad_src


def _own_rows(input):
    # a 0-d input as shape (1,) in memory of its own: the node saves it, and an in-place
    # form (x.scatter_reduce_) overwrites x's memory, which a view would share
    return input.reshape(1).clone() if input.ndim == 0 else input


def _reduce_name(fn, reduce, allowed):
    if not isinstance(reduce, str):
        raise TypeError(f"{fn}(): reduce must be a string, got {type(reduce).__name__}")
    if reduce not in allowed:
        named = ", ".join(name for name in allowed if name not in ("max", "min"))
        raise RuntimeError(f"{fn}(): Expected reduce to be one of {named} but got {reduce!r}")


def _check_reducible(fn, input, reduce):
    # after the dtype check of src (each op words its own, as torch's): torch has no kernel
    # for bool's mean, complex maxima, and index_reduce of bool or complex tensors
    kind = input.dtype.kind
    if kind == "b" and (reduce == "mean" or fn == "index_reduce") or \
            kind == "c" and (reduce in ("amax", "amin") or fn == "index_reduce"):
        raise NotImplementedError(f"{fn}(): reduce={reduce!r} is not implemented for "
                                  f"{dtypes.torch_name(input.dtype)} tensors")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``torch.scatter_reduce``: a copy of input with each ``src[i][j]`` reduced into
    ``[index[i][j]][j]`` (dim 0; likewise for any dim) by ``reduce``: "sum", "prod",
    "mean" (integers round down), "amax" or "amin" (NaN wins). With ``include_self=False``
    a place that receives values forgets input's own. The gradients are torch's (see
    ``ScatterReduce``).

    Args:
        input: the tensor.
        dim: the dim ``index`` addresses.
        index: integers with input's dims, no larger than src anywhere and than input off
            ``dim`` (only src's block that index covers is read).
        src: a tensor of input's dtype.
        reduce: the reduction's name.
        include_self: whether input's values take part.

    Example:
        >>> mg.zeros(2).scatter_reduce(0, mg.tensor([1, 1]), mg.tensor([2.0, 3.0]), "amax")
    """
    check_tensor("scatter_reduce", input)
    tensor_argument("scatter_reduce", "src", src)
    _reduce_name("scatter_reduce", reduce, REDUCTIONS + ("max", "min"))
    normalize_axis("scatter_reduce", dim, input.ndim, single=True)     # before the dtypes
    if src.dtype != input.dtype:
        raise RuntimeError(f"scatter_reduce(): Expected self.dtype to be equal to src.dtype, "
                           f"got {input.dtype} and {src.dtype}")
    if np.size(raw(index)) or reduce == "mean":    # an empty index reduces nothing first,
        _check_reducible("scatter_reduce", input, reduce)   # but a mean divides, as torch's
    flat, src, dims = _own_rows(input), _at_least_1d(src), src.ndim
    try:
        where, shape = _scatter_grid("scatter_reduce", flat, dim, index, src, dims)
    except OutOfRangeError as error:
        raise IndexRangeError(str(error)) from None
    out = ScatterReduce.apply(flat, _src_part(src, shape), where=where, reduce=reduce,
                              include_self=bool(include_self))
    return _as_shaped(out, input)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``torch.index_reduce``: a copy of input with each slice ``source[..., i, ...]``
    along ``dim`` reduced into the slice ``index[i]`` by ``reduce``: "prod", "mean",
    "amax" or "amin" (torch has no "sum": ``index_add``); ``include_self`` and the
    gradients as ``scatter_reduce``'s.

    Example:
        >>> mg.ones(3, 2).index_reduce(0, mg.tensor([0, 0]), mg.full((2, 2), 3.0), "prod")
    """
    warn_once("index_reduce() is in beta and the API may change at any time.")
    check_tensor("index_reduce", input)
    tensor_argument("index_reduce", "source", source)
    _reduce_name("index_reduce", reduce, REDUCTIONS[1:])
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({input.dtype}) and source "
                           f"({source.dtype}) must have the same scalar type")
    _check_reducible("index_reduce", input, reduce)
    axis = normalize_axis("index_reduce", dim, input.ndim, single=True)
    index = index_array("index_reduce", index, input)
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with size {list(index.shape)}")
    flat, block = _own_rows(input), _at_least_1d(source)
    if source.ndim != input.ndim or any(n != m for d, (n, m) in
                                      enumerate(zip(block.shape, flat.shape)) if d != axis):
        raise RuntimeError(f"index_reduce_(): source tensor shape must match self tensor "
                           f"shape, excluding the specified dimension. Got self.shape = "
                           f"{list(input.shape)} source.shape = {list(source.shape)}")
    if index.size != block.shape[axis]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.size}) should be equal "
                           f"to source.size(dim): ({block.shape[axis]}), for dim: {axis}")
    size = flat.shape[axis]
    if index.size and (int(index.min()) < 0 or int(index.max()) >= size):
        raise OutOfRangeError(f"index_reduce(): index out of range in self: an index of "
                              f"{[int(index.min()), int(index.max())]} for dim {axis} of size "
                              f"{size}")
    along = (1,) * axis + (index.size,) + (1,) * (flat.ndim - axis - 1)
    spread = flat.xp.broadcast_to(index.reshape(along), block.shape)
    where = _grid(spread, axis)
    out = ScatterReduce.apply(flat, block, where=where, reduce=reduce,
                              include_self=bool(include_self))
    return _as_shaped(out, input)


scatter_reduce_ = _in_place("scatter_reduce", scatter_reduce)
index_reduce_ = _in_place("index_reduce", index_reduce)


# ----- the diagonal and a view's places: fill_diagonal_, *_scatter ---------------------------
def _filled_diagonal(input, fill_value, wrap=False):
    # input with fill_value on its main diagonal (every dim at once), out of place: flat
    # positions k · (1 + n + n² + ...), or k · (cols + 1) for a matrix, past the square
    # part of a tall one with ``wrap``
    check_tensor("fill_diagonal_", input)
    if input.ndim < 2:
        raise RuntimeError("fill_diagonal_(): dimensions must larger than 1")
    shape = input.shape
    if input.ndim > 2 and len(set(shape)) != 1:
        raise RuntimeError(f"fill_diagonal_(): all dimensions of input must be of equal "
                           f"length, got {list(shape)}")
    value = _fill_value("fill_diagonal_", fill_value, input)
    step = sum(int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(input.ndim))
    end = input.size if wrap and input.ndim == 2 else min(shape) * step
    positions = input.xp.arange(0, min(end, input.size), step, dtype=np.int64)
    out = IndexPut.apply(input.reshape(-1), value, index=(positions,))
    return out.reshape(shape)


fill_diagonal_ = _in_place("fill_diagonal", _filled_diagonal)
fill_diagonal_.__doc__ = (
    "In place: ``fill_value`` on the main diagonal (``x[i, i, ...]``; every dim of equal "
    "size above 2 dims); ``wrap=True`` starts again every cols + 1 rows of a tall matrix, "
    "as torch's. Recorded when the graph needs it: the diagonal's gradient is 0.")


class DiagonalScatter(Function):
    """x with src on the diagonal ``(offset, axis1, axis2)``: the gradient is grad with
    that diagonal 0 to x, grad's diagonal to src."""

    @staticmethod
    def forward(ctx, x, src, offset, axis1, axis2):
        ctx.where = (offset, axis1, axis2)
        out = x.copy()
        _diagonal_view(out, *ctx.where)[...] = src
        return out

    @staticmethod
    def backward(ctx, grad):
        need_x, need_src = ctx.needs_input_grad
        grad_x = grad_src = None
        if need_x:
            grad_x = grad.copy()
            _diagonal_view(grad_x, *ctx.where)[...] = 0
        if need_src:
            grad_src = _diagonal_view(grad, *ctx.where).copy()
        return grad_x, grad_src


def _check_src(fn, src, wanted, like):
    # src of the view's shape, taken in input's dtype (a cast in the graph)
    tensor_argument(fn, "src", src)
    if tuple(src.shape) != tuple(wanted):
        raise RuntimeError(f"{fn}(): expected src to have a size equal to the slice of self. "
                           f"src size = {list(src.shape)}, slice size = {list(wanted)}")
    return src.astype(like.dtype, copy=False)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``torch.diagonal_scatter``: a copy of input with ``src`` written on
    ``input.diagonal(offset, dim1, dim2)`` (src of that view's shape, cast to input's
    dtype). The gradient to input is grad with the diagonal 0, to src grad's diagonal.

    Example:
        >>> mg.diagonal_scatter(mg.zeros(2, 2), mg.ones(2))         # the identity
    """
    check_tensor("diagonal_scatter", input)
    a, b = _two_dims("diagonal_scatter", input.ndim, dim1, dim2)
    offset = _offset("diagonal_scatter", offset)
    rows, cols = input.shape[a], input.shape[b]
    length = max(0, min(rows - max(-offset, 0), cols - max(offset, 0)))
    wanted = tuple(n for d, n in enumerate(input.shape) if d not in (a, b)) + (length,)
    src = _check_src("diagonal_scatter", src, wanted, input)
    return DiagonalScatter.apply(input, src, offset=offset, axis1=a, axis2=b)


def select_scatter(input, src, dim, index):
    """``torch.select_scatter``: a copy of input with ``src`` written at ``input.select(dim,
    index)`` (src of that shape, cast to input's dtype). The gradient to input is grad with
    that slice 0, to src grad's slice.

    Example:
        >>> mg.select_scatter(mg.zeros(2, 2), mg.ones(2), 0, 1)       # [[0, 0], [1, 1]]
    """
    check_tensor("select_scatter", input)
    if input.ndim == 0:
        raise IndexError("select_scatter(): select() cannot be applied to a 0-dim tensor.")
    axis = normalize_axis("select_scatter", dim, input.ndim, single=True)
    index, size = _int("select_scatter()", "index", index), input.shape[axis]
    if not -size <= index < size:
        raise IndexError(f"select_scatter(): select(): index {index} out of range for tensor "
                         f"of size {list(input.shape)} at dimension {axis}")
    src = _check_src("select_scatter", src, input.shape[:axis] + input.shape[axis + 1:],
                     input)
    return IndexPut.apply(input, src, index=(slice(None),) * axis + (index % size,))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``torch.slice_scatter``: a copy of input with ``src`` written at ``input[start:end:
    step]`` along ``dim`` (Python's clamped slice; step > 0; src of that shape, cast to
    input's dtype). The gradient to input is grad with the slice 0, to src grad's slice.

    Example:
        >>> mg.slice_scatter(mg.zeros(4), mg.ones(2), start=1, end=3)       # [0, 1, 1, 0]
    """
    check_tensor("slice_scatter", input)
    if input.ndim == 0:
        raise IndexError("slice_scatter(): slice() cannot be applied to a 0-dim tensor.")
    axis = normalize_axis("slice_scatter", dim, input.ndim, single=True)
    start, end = (None if v is None else _int("slice_scatter()", name, v)
                  for name, v in (("start", start), ("end", end)))
    if _int("slice_scatter()", "step", step) <= 0:
        raise RuntimeError("slice_scatter(): slice step must be positive")
    part = slice(start, end, step)
    wanted = list(input.shape)
    wanted[axis] = len(range(*part.indices(input.shape[axis])))
    src = _check_src("slice_scatter", src, wanted, input)
    return IndexPut.apply(input, src, index=(slice(None),) * axis + (part,))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``torch.as_strided_scatter``: a copy of input with ``src`` written at the elements of
    ``input.as_strided(size, stride, storage_offset)``, input's elements numbered as torch's
    clone of it lays them in memory (a dense input's own order, else row-major); src of that
    view's shape, cast to input's dtype. The gradient to input is grad with those elements 0,
    to src grad's view.

    Example:
        >>> mg.as_strided_scatter(mg.zeros(2, 2), mg.ones(2), (2,), (3,))   # [[1, 0], [0, 1]]
    """
    check_tensor("as_strided_scatter", input)
    where = _strided_elements(input, size, stride, storage_offset)
    src = _check_src("as_strided_scatter", src, where.shape, input)
    shown = where >= 0                               # (the places input shows)
    if not shown.all():
        src = src[constant(shown)]
        where = where[shown]
    return IndexPut.apply(input.reshape(-1), src, index=(where,)).reshape(input.shape)


def _strided_elements(input, size, stride, storage_offset):
    # input's row-major element numbers at the storage places of as_strided(size, stride,
    # storage_offset) (-1 where input shows none): the places through input's strides
    from ..autograd import no_grad
    from .storage import _place
    xp, count = input.xp, input.numel()
    with no_grad():            # its checks against input's own storage, as torch's
        input.as_strided(size, stride, storage_offset)
    place = _place(input._array) if xp is np else None
    if place is None:                                     # one block of its own: row-major
        ids = constant(xp.arange(count, dtype=np.int64).reshape(input.shape))
        return ids.as_strided(size, stride, storage_offset)._array
    _, flat, start, strides = place
    places = start + sum(np.arange(n).reshape((-1,) + (1,) * (input.ndim - 1 - d)) * step
                         for d, (n, step) in enumerate(zip(input.shape, strides)))
    element = np.full(flat.size, -1, np.int64)                 # storage place -> element
    element[np.asarray(places, np.int64).reshape(-1)] = np.arange(count, dtype=np.int64)
    offset = start if storage_offset is None else storage_offset
    return np.lib.stride_tricks.as_strided(element[offset:], tuple(size),
                                           tuple(8 * st for st in stride))
