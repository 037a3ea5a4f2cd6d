"""Indexing: ``x[index]`` (an embedding lookup is ``weight[ids]``), gather, index_select,
and ``pick_along``, which the (values, indices) reductions share (sort, topk, kthvalue and
mode, gathers of the sorted order, are in ``sorting.py``); backward adds each gradient into
the element it came from, so repeats accumulate. Then the writes out of place (scatter,
scatter_add, index_add, index_fill, index_copy: ``IndexPut`` and ``ScatterAdd``) and
take/take_along_dim/masked_select. (The index constants, argwhere, unique, bincount,
searchsorted, bucketize and isin, are in ``search.py``.)

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import numbers

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd import is_grad_enabled
from ..autograd.function import Function
from ..autograd.graph import node_alias
from ..meta_arrays import refuse_values
from .base import (AxisError, BroadcastError, IndexDtypeError, OutOfRangeError,
                   broadcast_shape, check_fits, check_orderable, check_reducible,
                   check_same_dtype, check_tensor, constant, fitted, kept, normalize_axis, raw,
                   unbroadcast)
from .numpy_names import numpy_dim
from .index_parsing import last_op, parsed, views_first, warn_once  # noqa: F401  (views_first)

METHODS = ("take_along_dim", "masked_select", "scatter", "scatter_add", "index_add",
           "index_fill", "index_copy", "take")

def _is_basic_index(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (slice, numbers.Integral))
               for p in parts)


class GetItem(Function):
    """``x[index]``; with ``then``, ``x[index][then]`` (``getitem``'s one pass over an index
    whose ints torch selects first, where no node is recorded: recorded, it is two nodes)."""

    kept_options = ("index", "then")

    @staticmethod
    def forward(ctx, x, index, then=None):
        ctx.shape, ctx.dtype, ctx.index = x.shape, x.dtype, index
        if then is not None:
            out = x[index][then]
            return out if out.flags.c_contiguous else out.copy()
        out = x[index]
        if isinstance(out, np.generic) and not (ctx.needs_input_grad[0] and is_grad_enabled()):
            # x[1, 2]: a 0-d view, as torch's (t[1, 2].add_(5) writes into t). Recorded, a
            # copy: y[0] += 5 then writes it back through y[0] = ..., as torch's CopySlices
            out = x[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
        elif not out.flags.c_contiguous and not _is_basic_index(index):
            out = out.copy()        # NumPy's x[:, [0, 2]] is a transposed buffer; torch's not
        return out

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        grad_x = xp.zeros(ctx.shape, dtype=ctx.dtype)
        index = ctx.index
        if _is_basic_index(index):
            grad_x[index] = grad                     # a basic index never repeats an element
        elif xp is np and type(index) is np.ndarray and index.dtype.kind in "iu" \
                and index.size >= 256:
            _add_rows(grad_x, index, grad)           # an embedding's backward, batched
        else:
            xp.add.at(grad_x, index, grad)           # integer arrays may repeat rows
        return grad_x


# torch's names of x[index]'s node, the last op of torch's chain of one per part of the
# index (``index_parsing.last_op``); index_select and embedding are one op in torch too
Select = node_alias(GetItem, "Select")          # x[0], x[:, 2], x[..., 1]
Slice = node_alias(GetItem, "Slice")            # x[1:3], x[:, 1:3], narrow
UnsqueezeIndex = node_alias(GetItem, "Unsqueeze", alias="UnsqueezeIndex")   # x[None]
Index = node_alias(GetItem, "Index")            # x[I], x[mask], x[0, [1, 2]]
Alias = node_alias(GetItem, "Alias")            # x[:, :], x[...]
IndexSelect = node_alias(GetItem, "IndexSelect")
Embedding = node_alias(GetItem, "Embedding")
_INDEX_NODES = (Select, Slice, UnsqueezeIndex, Index, Alias)   # by last_op's code


def _add_rows(out, index, grad):
    """``np.add.at(out, index, grad)`` for one integer array indexing out's rows: the rows
    sorted by target (stably) and summed with one ``add.reduceat``, 5x faster for 1,024
    rows of 64 (slower below a few hundred rows). The sums round in another order than
    ``add.at``'s, to the last bit."""
    rows = index.reshape(-1)
    rows = np.where(rows < 0, rows + out.shape[0], rows)       # -1 is the last row
    order = np.argsort(rows, kind="stable")
    targets = rows[order]
    starts = np.flatnonzero(np.concatenate(([True], targets[1:] != targets[:-1])))
    sums = np.add.reduceat(grad.reshape(rows.size, -1)[order], starts, axis=0)
    out.reshape(out.shape[0], -1)[targets[starts]] += sums


class IndexPut(Function):
    """``x[index] = value`` out of place (in-place writes under autograd record this): the
    gradient goes to x where nothing was written, to value from where it was written."""

    kept_options = ("index",)

    @staticmethod
    def forward(ctx, x, value, index):
        ctx.index, ctx.value_shape = index, value.shape
        out = x.copy()
        put(out, index, value)                       # broadcast, cast to x's dtype
        return out

    @staticmethod
    def backward(ctx, grad):
        need_x, need_value = ctx.needs_input_grad
        grad_x = grad_value = None
        if need_x:
            grad_x = backend.array_module(grad).array(grad)   # a copy (an array if 0-d)
            grad_x[ctx.index] = 0                    # overwritten: no gradient to the old x
        if need_value:                               # a repeated index sends each copy back
            grad_value = unbroadcast(grad[ctx.index], ctx.value_shape)
        return grad_x, grad_value


def _grid(index, axis):
    """Index arrays that pick, at each position of ``index``, x's element at the index along
    ``axis`` and at the position elsewhere (``torch.gather``'s rule)."""
    xp = backend.array_module(index)
    parts = []
    for d, n in enumerate(index.shape):
        shape = [1] * index.ndim
        shape[d] = n
        parts.append(index if d == axis else xp.arange(n).reshape(shape))
    return tuple(parts)


class Gather(Function):
    kept_options = ("index",)

    @staticmethod
    def forward(ctx, x, index, axis):
        ctx.shape, ctx.where, ctx.axis = x.shape, _grid(index, axis), axis
        # one pick per slice of x (max(dim), a pooling window's maximum): no two picks meet,
        # so backward puts the gradient where add.at would add it, 7x faster
        one_pick = type(index) is np.ndarray and index.shape[axis] == 1 and \
            index.shape[:axis] + index.shape[axis + 1:] == x.shape[:axis] + x.shape[axis + 1:]
        ctx.one_pick = index if one_pick else None
        return x[ctx.where]

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        grad_x = xp.zeros(ctx.shape, dtype=grad.dtype)
        if ctx.one_pick is not None and xp is np:
            np.put_along_axis(grad_x, ctx.one_pick, grad, ctx.axis)
        else:
            xp.add.at(grad_x, ctx.where, grad)       # repeated picks accumulate
        return grad_x


# sort's and topk's values: one Gather each, torch's SortBackward0 and TopkBackward0
Sort = node_alias(Gather, "Sort")
Topk = node_alias(Gather, "Topk")


# ----- the functions ------------------------------------------------------------------------
def getitem(x, index, node=None):
    """``x[index]``: slices, ints, None, ``...``, integer or bool arrays (or Tensors); a 0-d
    integer tensor is an int, as torch reads it (``c[y].add_(1)`` for y in a tensor).
    ``node``: the GetItem that names the node where torch's op is not indexing's
    (``index_select``, ``embedding``); by default torch's for the index (``last_op``)."""
    index, split = parsed(index)
    if x._array.__class__ is not np.ndarray and _masks(index):
        refuse_values("indexing by a bool mask", x._array)
    if split is not None:                         # x[0, :, [1, 2]], as torch reads it:
        if x.requires_grad and is_grad_enabled():     # its two nodes, select and index
            return getitem(getitem(x, split[0]), split[1])
        return Index.apply(x, index=split[0], then=split[1])
    if node is None:                              # x[0] first, without a call
        node = Select if index.__class__ is int else _INDEX_NODES[last_op(index)]
    out = node.apply(x, index=index)              # apply keeps the index's tensors checked
    if out._array.ndim == 0 and out.requires_grad and out._view_version is None \
            and _is_basic_index(index):
        # an element of a recorded tensor is a copy (GetItem.forward) that the in-place rules
        # treat as a view: y[0].add_(5) is refused as on any view (its own version counter,
        # so writes into y's other elements leave it usable); y[0] += 5 computes out of
        # place and writes back through y[0] = ... (``base._augmented``)
        out._view_version, out._element = 0, True
    return out


def _masks(index):
    return any(getattr(i, "dtype", None) == np.bool_ for i in
               (index if isinstance(index, tuple) else (index,)))


def put(array, index, value):
    """``array[index] = value`` (arrays) with torch's error for a value that does not
    broadcast to what the index picks: a RuntimeError (and NumPy's ValueError). NumPy's
    other errors are its own (a read-only array's, a value it cannot convert)."""
    try:
        array[index] = value
    except (ValueError, TypeError) as error:
        if not any(word in str(error) for word in ("broadcast", "shape", "dimensional input",
                                                   "input values", "with a sequence",
                                                   "0-dimensional arrays")):
            raise
        raise BroadcastError(f"shape mismatch: a value of shape {np.shape(value)} cannot be "
                             f"broadcast to the indexing result ({error})") from None


def index_put(x, index, value):
    """``x`` with ``value`` written at ``index``, a new tensor in the graph (``x[index] = value``
    out of place; ``torch.index_put`` for the array indices)."""
    return IndexPut.apply(x, value, index=index)


def _check_range(fn, index, size, axis, low=0):
    # every index in [low, size): torch's IndexError (``OutOfRangeError``) otherwise
    if index.size and (int(index.min()) < low or int(index.max()) >= size):
        bad = int(index.min()) if int(index.min()) < low else int(index.max())
        raise OutOfRangeError(f"{fn}: index {bad} is out of bounds for dim {axis} with "
                              f"size {size} (expected {low} <= index < {size})")


def _flat_pick(x, index):
    # the elements of x (at most 1-D) at ``index``, in index's shape
    return getitem(x.reshape(-1), index.reshape(-1)).reshape(index.shape)


def gather(input, dim=None, index=None, *, sparse_grad=False, axis=None):
    """Values along ``dim`` at ``index``: ``out[i][j] = x[index[i][j]][j]`` for dim 0.
    ``index`` has x's number of dims, each but ``dim`` no larger than x's; shape: index's.
    ``axis``: NumPy's name for ``dim``, as torch's; ``sparse_grad`` is taken, the gradient
    dense whatever it says (its values are torch's sparse gradient's)."""
    return gathered(input, dim, index, axis, Gather)


def gathered(input, dim, index, axis, node):
    """``gather``, its node ``node`` (a ``Gather``: ``Sort`` for ``sort``'s values)."""
    if axis is not None or dim is None or index is None:
        dim = numpy_dim("gather", dim, axis, missing=index is None)
    axis = normalize_axis("gather", dim, input.ndim, single=True)
    given, index = index, index_array("gather", index, input, any_empty=True)
    if index.size == 0:                         # any shape of empty index, as in torch
        return _flat_pick(input, index)
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise BroadcastError(f"gather: index must have as many dims as the tensor "
                             f"({input.ndim}), got shape {tuple(index.shape)}")
    if input.ndim == 0 or index.ndim == 0:
        if index.size != 1 and input.ndim == 0 or index.ndim > 1:
            raise BroadcastError(f"gather: a 0-d tensor takes a 0-d or one-element index, "
                                 f"got shape {tuple(index.shape)}")
        _check_range("gather", index,
                     max(input.size, 1) if input.ndim == 0 else input.shape[0], axis)
        return _flat_pick(input, index)
    for d, (n, m) in enumerate(zip(index.shape, input.shape)):
        if d != axis and n > m:
            raise BroadcastError(f"gather: index of shape {tuple(index.shape)} is larger than "
                                 f"the tensor's {input.shape} in dim {d}")
    _check_range("gather", index, input.shape[axis], axis)
    return node.apply(input, index=kept(given, index), axis=axis)


def index_select(input, dim=None, index=None, *, axis=None):
    """The slices of x at ``index`` (1-D or 0-d) along ``dim`` (``torch.index_select``;
    ``axis``: NumPy's name for ``dim``, as torch's)."""
    if axis is not None or dim is None or index is None:
        dim = numpy_dim("index_select", dim, axis, missing=index is None)
    axis = normalize_axis("index_select", dim, input.ndim, single=True)
    index = index_array("index_select", index, input)
    if index.ndim > 1:
        raise ValueError(f"index_select: index must be 1-D or 0-d, got shape "
                         f"{tuple(index.shape)}")
    _check_range("index_select", index, input.shape[axis] if input.ndim else 1, axis)
    if input.ndim == 0:
        return _flat_pick(input, index).reshape(())
    return getitem(input, (slice(None),) * axis + (index.reshape(-1),), IndexSelect)


def pick_along(fn, result, x, dim, keepdim, choose):
    """``result(values, indices)``: one element of each slice of x along ``dim``, torch's
    shape for ``max(dim)``, ``median(dim)``, ``kthvalue``, ``mode``.

    Args:
        fn: the op's name, for errors.
        result: the named tuple class (``return_types.max``).
        x: the tensor; 0-d counts as one element along dim 0 or -1.
        dim: the int dim to reduce; an empty one is an ``EmptyReductionError``.
        keepdim: keep ``dim`` as size 1.
        choose: ``choose(array, axis)``, the index of the chosen element of each slice,
            with ``axis`` kept as size 1 (``argmax(axis=axis, keepdims=True)``).

    The values are ``gather(x, dim, indices)``: the gradient goes to the chosen element
    alone, as torch's value-selecting backward; ``indices`` is int64, outside the graph.

    Example:
        >>> pick_along("max", return_types.max, x, 1, False,
        ...            lambda a, axis: a.argmax(axis=axis, keepdims=True))
    """
    check_orderable(fn, check_tensor(fn, x)._array)
    axis = normalize_axis(fn, dim, x.ndim, single=True)
    check_reducible(fn, x.shape, (axis,) if x.ndim else ())
    data = x._array if x.ndim else x._array.reshape(1)
    index = x.xp.asarray(choose(data, axis), dtype=np.int64)
    if x.ndim == 0:
        index = index.reshape(())
        return result(gather(x, 0, index), constant(index))
    values = gather(x, axis, index)
    if not keepdim:
        shape = index.shape[:axis] + index.shape[axis + 1:]
        values, index = values.reshape(shape), index.reshape(shape)
    return result(values, constant(index))


# ----- writes out of place: scatter, scatter_add, index_add, index_fill, index_copy ----------
class ScatterAdd(Function):
    """x with ``src`` added at ``index`` (a tuple of index arrays and slices; repeats
    accumulate, NumPy's ``add.at``): ``scatter_add``, ``index_add``. The gradient is grad
    to x and, to src, grad picked at ``index`` (a gather)."""

    kept_options = ("index",)

    @staticmethod
    def forward(ctx, x, src, index):
        ctx.index, ctx.src_shape = index, src.shape
        out = x.copy()
        rows = index[0] if len(index) == 1 else None          # index_add along dim 0
        if type(rows) is np.ndarray and type(out) is np.ndarray and rows.size >= 256 \
                and src.shape[:1] == rows.shape and out.dtype != np.bool_:   # (+= on bool)
            _add_rows(out, rows, src)                         # sorted sums, as GetItem's
        else:
            backend.array_module(x).add.at(out, index, src)
        return out

    @staticmethod
    def backward(ctx, grad):
        need_x, need_src = ctx.needs_input_grad
        return (grad if need_x else None,
                unbroadcast(grad[ctx.index], ctx.src_shape) if need_src else None)


_LONG, _INT_OR_LONG = (np.dtype(np.int64),), (np.dtype(np.int64), np.dtype(np.int32))


def index_array(fn, value, like, long_only=False, wrap=False, size=None, axis=0,
                any_empty=False, name="index"):
    """``value`` (a Tensor or an array) as an integer array on like's device, refused with
    torch's RuntimeError for another dtype (int64 alone with ``long_only``; ``any_empty``:
    an empty index of any dtype is taken, as torch's gather and scatter take it); with
    ``size``, each index checked against it (``wrap``: -size <= index < size, negatives
    wrapped). Anything else (a list, None, a number) is torch's TypeError naming ``name``."""
    if isinstance(value, _tensor.Tensor):
        data = value._array
    elif hasattr(value, "dtype") and hasattr(value, "shape"):     # an array (NumPy's, CuPy's)
        data = like.xp.asarray(value)
    else:
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not "
                        f"{type(value).__name__}")
    if any_empty and data.size == 0:
        return data.astype(np.int64, copy=False)
    if data.dtype not in (_LONG if long_only else _INT_OR_LONG):
        wanted = "int64" if long_only else "int32 or int64"
        raise IndexDtypeError(f"{fn}(): expected dtype {wanted} for the index, got "
                              f"{data.dtype}")
    if size is not None:
        _check_range(fn + "()", data, size, axis, low=-size if wrap else 0)
        if wrap and data.size and int(data.min()) < 0:
            data = data % size
    return data


def _fill_value(fn, value, like):
    """A number or a 0-d tensor as a 0-d Tensor of like's dtype (a cast, in the graph);
    torch's RuntimeError for a value the dtype cannot hold (``c10::checked_convert``)."""
    if isinstance(value, _tensor.Tensor):
        if value.ndim:
            raise RuntimeError(f"{fn}(): value must be a number or a 0-d tensor, got shape "
                               f"{value.shape}")
        check_fits(fn, value.item(), like.dtype)
        return value.astype(like.dtype, copy=False)
    if not isinstance(value, (numbers.Number, np.bool_)):
        raise TypeError(f"{fn}(): value must be a number, got {type(value).__name__}")
    if isinstance(value, complex) and like.dtype.kind != "c":
        raise RuntimeError(f"{fn}(): a complex value {value!r} cannot be converted to "
                           f"{like.dtype}")
    value = fitted(fn, value, like.dtype)                       # -1 is 255 in uint8
    return constant(like.xp.asarray(value).astype(like.dtype))


def _scatter_grid(fn, input, dim, given, src, src_dims=None):
    """(index positions, index's shape): ``out[index[i][j]][j]`` for dim 0, after torch's
    checks (index with input's dims, no larger than src anywhere and than input off ``dim``;
    input and src at least 1-D, a 0-d index taken as 1-D, as torch's); empty positions for
    an empty index of any shape. The index Tensor itself among the positions: its version
    is checked. ``src_dims``: src's dims as given (before a 0-d one is taken as 1-D)."""
    axis = normalize_axis(fn, dim, input.ndim, single=True)
    index = index_array(fn, given, input, any_empty=True)
    if index.size == 0:                  # writes nothing; src's part gets a zero gradient
        return tuple(input.xp.zeros(index.shape, np.int64) for _ in range(input.ndim)), \
            index.shape
    index = index.reshape(1) if index.ndim == 0 else index
    if index.ndim != input.ndim or src is not None and src.ndim != index.ndim:
        # torch reads src.size(d) for each dim d of index before it compares their dims: a
        # src of fewer dims (not 0-d), no smaller than index on its own, is its IndexError
        short = index.ndim == input.ndim and 0 < (src_dims or 0) < index.ndim and all(
            n <= src.shape[d] and (d == axis or n <= input.shape[d])
            for d, n in enumerate(index.shape[:src.ndim]))
        raise (OutOfRangeError if short else RuntimeError)(
            f"{fn}(): index must have as many dims as input (and src), got shapes "
            f"{tuple(index.shape)}, {input.shape}" + ("" if src is None else f" and {src.shape}"))
    for d, n in enumerate(index.shape):
        if (d != axis and n > input.shape[d]) or (src is not None and n > src.shape[d]):
            raise RuntimeError(f"{fn}(): index {tuple(index.shape)} must be no larger than "
                               f"input {input.shape} apart from dim {axis}, and no larger "
                               "than src")
    _check_range(fn, index, input.shape[axis], axis)
    where = _grid(index, axis)
    return where[:axis] + (kept(given, index),) + where[axis + 1:], index.shape


def _at_least_1d(t):
    # a 0-d tensor as shape (1,): torch's scatter takes 0-d input and src as 1-D
    return t.reshape(1) if t is not None and t.ndim == 0 else t


def _as_shaped(out, input):
    # the result of a write into _at_least_1d(input) in input's shape (0-d again)
    return out if out.ndim == input.ndim else out.reshape(())


def _src_part(src, index_shape):
    # the block of src that index covers: src[:i0, :i1, ...], a view in the graph
    if src.shape == tuple(index_shape):
        return src
    if 0 in index_shape and len(index_shape) != src.ndim:      # an empty index of any shape
        return src.reshape(-1)[:0].reshape(index_shape)
    return getitem(src, tuple(slice(0, n) for n in index_shape))


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """``torch.scatter``: a copy of input with ``src[i][j]`` written at ``[index[i][j]][j]``
    (dim 0; likewise for any dim), or ``value`` (a number) there. The gradient to input is
    grad with the written places 0, to src grad gathered at ``index``. Of repeated places
    the last write wins (torch leaves it unspecified).

    Args:
        input: the tensor.
        dim: the dim ``index`` addresses.
        index: an integer tensor with input's dims, no larger than src in any dim and than
            input in the others (a 0-d input, src or index counts as 1-D, as torch's).
        src: a tensor of input's dtype (the 4th argument may also be the number ``value``,
            which input's dtype must hold: torch's overflow error otherwise).
        reduce: "add" (as ``scatter_add``) or "multiply" (a constant: no gradient, as
            torch's; refused while a graph is recorded, run under ``no_grad``).

    Example:
        >>> mg.zeros(3).scatter(0, mg.tensor([2, 0]), mg.tensor([5.0, 6.0]))   # [6, 0, 5]
    """
    if not isinstance(src, _tensor.Tensor) and src is not None:
        if value is not None:
            raise TypeError("scatter(): got both a value and src; pass one")
        src, value = None, src
    if (src is None) == (value is None):
        raise TypeError("scatter(): give src (a tensor) or value (a number)")
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError(f"scatter(): reduce argument must be either add or multiply, got "
                           f"{reduce!r}")
    normalize_axis("scatter", dim, check_tensor("scatter", input).ndim, single=True)  # first
    if reduce is not None and src is not None:
        warn_once("The reduce argument of torch.scatter with Tensor src is deprecated and will "
                  "be removed in a future PyTorch release. Use torch.scatter_reduce instead "
                  "for more reduction options.")
    if src is not None:
        check_same_dtype("scatter", input, check_tensor("scatter", src), ("input", "src"))
    dims = None if src is None else src.ndim
    flat, src = _at_least_1d(check_tensor("scatter", input)), _at_least_1d(src)
    where, shape = _scatter_grid("scatter", flat, dim, index, src, dims)
    if 0 in shape and reduce == "multiply":       # an empty index multiplies nothing
        return input.clone()
    part = _src_part(src, shape) if src is not None else _fill_value("scatter", value, input)
    if reduce == "add":
        return _as_shaped(ScatterAdd.apply(flat, part, index=where), input)
    if reduce == "multiply":
        if is_grad_enabled() and (input.requires_grad or part.requires_grad):
            raise RuntimeError("scatter(): the derivative with reduce='multiply' is not "
                               "implemented (torch's neither); use scatter_reduce")
        out = flat._array.copy()
        input.xp.multiply.at(out, tuple(raw(w) for w in where), part._array)
        return constant(out.reshape(input.shape))
    return _as_shaped(IndexPut.apply(flat, part, index=where), input)


def scatter_add(input, dim, index, src):
    """``torch.scatter_add``: a copy of input with each ``src[i][j]`` added at
    ``[index[i][j]][j]`` (dim 0), repeats accumulating. The gradient to input is grad, to
    src grad gathered at ``index``; the arguments as ``scatter``'s.

    Example:
        >>> mg.zeros(2).scatter_add(0, mg.tensor([1, 1, 0]), mg.tensor([1.0, 2.0, 3.0]))
    """
    normalize_axis("scatter_add", dim, check_tensor("scatter_add", input).ndim, single=True)
    check_same_dtype("scatter_add", input, check_tensor("scatter_add", src), ("input", "src"))
    flat, src, dims = _at_least_1d(input), _at_least_1d(src), src.ndim
    where, shape = _scatter_grid("scatter_add", flat, dim, index, src, dims)
    return _as_shaped(ScatterAdd.apply(flat, _src_part(src, shape), index=where), input)


def _along(fn, input, dim, index, wrap=False, shape_error=IndexError, long_only=False):
    """(axis, the index array, the index of slices along ``axis``) for the index_* ops: a
    1-D or 0-d integer index (else ``shape_error``, torch's class), within the size of
    ``dim``; int32 or int64 (``long_only``: int64), else torch's error."""
    check_tensor(fn, input)
    axis = normalize_axis(fn, dim, input.ndim, single=True)
    wanted = ("int64",) if long_only else ("int32", "int64")
    if isinstance(index, _tensor.Tensor) and index.dtype.name not in wanted:
        raise IndexDtypeError(f"{fn}_(): expected dtype {' or '.join(wanted)} for the index, "
                              f"got {index.dtype}")
    size = input.shape[axis] if input.ndim else 1
    given, index = index, index_array(fn, index, input, size=size, wrap=wrap, axis=axis)
    if index.ndim > 1:
        raise shape_error(f"{fn}(): index must be 1-D or 0-d, got shape {tuple(index.shape)}")
    index = index if index.ndim == 1 else index.reshape(-1)
    lead = (slice(None),) * axis if input.ndim else ()
    return axis, index, lead + (kept(given, index),)        # (the Tensor: version-checked)


class IndexCountError(IndexError, RuntimeError):
    """``index_copy`` with a number of indices other than the source's size along dim:
    torch's IndexError (``index_add``'s is a RuntimeError)."""


def _slices_like(fn, input, axis, index, source):
    # source must be input's shape with len(index) at ``axis``
    if not input.ndim and len(index) != 1:                  # torch's IndexError, as a dim's
        raise IndexError(f"{fn}(): a 0-d input takes one index, got {len(index)}")
    check_same_dtype(fn, input, check_tensor(fn, source), ("input", "source"))
    if fn == "index_add" and source.ndim != input.ndim:     # no 0-d source beside dims
        raise RuntimeError("index_add(): source tensor shape must match self tensor shape, "
                           f"excluding the specified dimension. Got self.shape = "
                           f"{list(input.shape)} source.shape = {list(source.shape)}")
    if fn == "index_copy" and source.ndim and input.ndim and source.ndim != input.ndim:
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({input.ndim})")
    wanted = input.shape[:axis] + (len(index),) + input.shape[axis + 1:] if input.ndim \
        else (len(index),)
    if tuple(source.shape) != wanted and not (source.ndim == 0 and wanted == (1,)):
        if fn == "index_copy" and source.ndim == len(wanted) and \
                source.shape[axis if input.ndim else 0] != len(index):
            raise IndexCountError(f"index_copy_(): Number of indices ({len(index)}) should be "
                                  f"equal to source.size(dim) "
                                  f"({source.shape[axis if input.ndim else 0]})")
        raise RuntimeError(f"{fn}(): source of shape {source.shape} must be input's shape "
                           f"{input.shape} with {len(index)} (the number of indices) at dim "
                           f"{axis}, {wanted}")
    return source.reshape(wanted) if source.shape != wanted else source


def index_add(input, dim, index, source, *, alpha=1):
    """``torch.index_add``: a copy of input with ``alpha * source[..., i, ...]`` added to the
    slice ``index[i]`` along ``dim``, repeats accumulating. The gradient to input is grad,
    to source ``alpha · grad`` at the slices of ``index``.

    Args:
        input: the tensor.
        dim: the dim the slices are along.
        index: 1-D (or 0-d) integers in [0, size of dim).
        source: input's dtype and shape, with len(index) at ``dim``.
        alpha: the factor of source (an integer input takes it as an int, as torch's).

    Example:
        >>> mg.zeros(3, 2).index_add(0, mg.tensor([0, 0]), mg.ones(2, 2))   # row 0: 2s
    """
    if not isinstance(alpha, (numbers.Number, np.generic, _tensor.Tensor)):
        raise TypeError(f"index_add(): argument 'alpha' must be Number, not "
                        f"{type(alpha).__name__}")       # (None, a string: before any work)
    axis, index, where = _along("index_add", input, dim, index)
    source = _slices_like("index_add", input, axis, index, source)
    if alpha != 1:
        kind = input.dtype.kind               # bool takes alpha's truth, as torch's
        source = source * (bool(alpha) if kind == "b" else int(alpha) if kind in "iu" else alpha)
        source = source.astype(input.dtype, copy=False)
    out = ScatterAdd.apply(input.reshape(1) if not input.ndim else input, source, index=where)
    return out.reshape(input.shape)


def index_fill(input, dim, index, value):
    """``torch.index_fill``: a copy of input with the slices ``index`` along ``dim`` set to
    ``value`` (a number or a 0-d tensor; negative indices count from the end). The gradient
    to input is grad with those slices 0, to a tensor value the sum of grad there.

    Example:
        >>> mg.ones(2, 3).index_fill(1, mg.tensor([0, 2]), -1.0)      # columns 0 and 2
    """
    axis, index, where = _along("index_fill", input, dim, index, wrap=True,
                                shape_error=RuntimeError, long_only=True)
    value = _fill_value("index_fill", value, input)
    unique_index = input.xp.unique(index)                   # a value counted once a place
    where = where[:-1] + (unique_index,)
    out = IndexPut.apply(input.reshape(1) if not input.ndim else input, value, index=where)
    return out.reshape(input.shape)


def index_copy(input, dim, index, source):
    """``torch.index_copy``: a copy of input with the slice ``index[i]`` along ``dim`` set to
    ``source``'s slice i (of repeats the last wins). The gradient to input is grad with
    those slices 0, to source grad at them.

    Example:
        >>> mg.zeros(3, 2).index_copy(0, mg.tensor([2, 0]), mg.ones(2, 2))
    """
    axis, index, where = _along("index_copy", input, dim, index, long_only=True)
    source = _slices_like("index_copy", input, axis, index, source)
    out = IndexPut.apply(input.reshape(1) if not input.ndim else input, source, index=where)
    return out.reshape(input.shape)


# ----- picks: take, take_along_dim, masked_select ---------------------------------------------
def take(input, index):
    """``torch.take``: the elements of the flattened input at ``index`` (int64; negative
    counts from the end), in index's shape; the gradient adds back into each place.

    Example:
        >>> mg.tensor([[1.0, 2.0], [3.0, 4.0]]).take(mg.tensor([0, -1]))   # tensor([1., 4.])
    """
    check_tensor("take", input)
    given, index = index, index_array("take", index, input, long_only=True, wrap=True,
                                      size=input.size)
    return getitem(input.reshape(-1), kept(given, index))     # (the Tensor: version-checked)


def take_along_dim(input, indices, dim=None):
    """``torch.take_along_dim``: the values of input at ``indices`` along ``dim``, input and
    indices broadcast in the other dims (``gather`` with broadcasting; ``x.argmax(d,
    keepdim=True)`` picks the maxima); with ``dim=None``, of the flattened input. The
    gradient adds back into each place.

    Args:
        input: the tensor.
        indices: int64, as many dims as input (any shape with ``dim=None``); negative
            counts from the end.
        dim: the dim to pick along, or None.

    Example:
        >>> mg.take_along_dim(x, x.argsort(dim=1), dim=1)          # x sorted along dim 1
    """
    check_tensor("take_along_dim", input)
    if dim is None:
        flat = input.reshape(-1)
        index = index_array("take_along_dim", indices, input, long_only=True,
                            size=input.size, name="indices")
        return getitem(flat, index.reshape(-1))
    axis = normalize_axis("take_along_dim", dim, input.ndim, single=True)
    if input.ndim == 0:
        raise AxisError(f"take_along_dim(): dim {dim} given, but the tensor is 0-d")
    index = index_array("take_along_dim", indices, input, long_only=True, wrap=True,
                        size=input.shape[axis], axis=axis, name="indices")
    if index.ndim != input.ndim:
        raise RuntimeError(f"take_along_dim(): input and indices must have the same number "
                           f"of dims, got {input.ndim} and {index.ndim}")
    shape = list(broadcast_shape("take_along_dim", input.shape[:axis] + (1,) +
                            input.shape[axis + 1:], index.shape))
    index = input.xp.broadcast_to(index, shape)
    where = []
    for d, n in enumerate(shape):              # the place in input of each output element
        place = [1] * len(shape)
        place[d] = n
        where.append(index if d == axis else input.xp.arange(n).reshape(place)
                     if input.shape[d] == n else input.xp.zeros(place, np.int64))
    return getitem(input, tuple(where))


def masked_select(input, mask):
    """``torch.masked_select``: the 1-D tensor of input's elements where the bool ``mask``
    is True, input and mask broadcast, in row-major order; the gradient adds back into each
    place (an element picked by several broadcast copies gets their sum).

    Example:
        >>> x.masked_select(x > 0)                                  # the positive elements
    """
    check_tensor("masked_select", input)
    mask = mask._array if isinstance(mask, _tensor.Tensor) else input.xp.asarray(mask)
    refuse_values("masked_select", input._array, mask)
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_select(): expected a bool mask, got dtype {mask.dtype}")
    shape = broadcast_shape("masked_select", input.shape, mask.shape) or (1,)
    found = input.xp.nonzero(input.xp.broadcast_to(mask.reshape(mask.shape or (1,)), shape))
    lead = len(shape) - input.ndim               # the place in input of each picked element
    where = tuple(found[lead + d] if n != 1 else input.xp.zeros_like(found[0])
                  for d, n in enumerate(input.shape))
    if input.ndim == 0:
        return getitem(input.reshape(1), input.xp.zeros_like(found[0]))
    return getitem(input, where)
