"""Indexing: ``x[index]`` (an embedding lookup is ``weight[ids]``), gather, index_select,
sort/argsort/topk/kthvalue/mode (gathers of the sorted order), and ``pick_along``, which the
(values, indices) reductions share; backward adds each gradient into the element it came
from, so repeats accumulate. Then the writes out of place (scatter, scatter_add, index_add,
index_fill, index_copy: ``IndexPut`` and ``ScatterAdd``) and take/take_along_dim/
masked_select. (The index constants, argwhere, unique, bincount, searchsorted, bucketize
and isin, are in ``search.py``.)

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import numbers

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd import is_grad_enabled
from ..autograd.function import Function
from ..autograd.tape import active_tape
from ..dtypes import is_floating
from . import return_types
from .base import (AxisError, OutOfRangeError, as_array, broadcast_shape, check_fits,
                   check_orderable, check_reducible, check_same_dtype, check_tensor, constant,
                   fitted, kept, normalize_axis, raw, unbroadcast)

METHODS = ("take_along_dim", "masked_select", "scatter", "scatter_add", "index_add",
           "index_fill", "index_copy", "take")

def _is_basic_index(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (slice, numbers.Integral))
               for p in parts)


class GetItem(Function):
    kept_options = ("index",)

    @staticmethod
    def forward(ctx, x, index):
        ctx.shape, ctx.dtype, ctx.index = x.shape, x.dtype, index
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
        out[index] = value                           # broadcast, cast to x's dtype
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
        ctx.shape, ctx.where = x.shape, _grid(index, axis)
        return x[ctx.where]

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        grad_x = xp.zeros(ctx.shape, dtype=grad.dtype)
        xp.add.at(grad_x, ctx.where, grad)           # repeated picks accumulate
        return grad_x


# ----- the functions ------------------------------------------------------------------------
def getitem(x, index):
    """``x[index]``: slices, ints, None, ``...``, integer or bool arrays (or Tensors); a 0-d
    integer tensor is an int, as torch reads it (``c[y].add_(1)`` for y in a tensor)."""
    check_steps(index)
    if isinstance(index, tuple):
        index = tuple([_as_int(part) for part in index])
    else:
        index = _as_int(index)
    out = GetItem.apply(x, index=index)           # apply keeps the index's tensors checked
    if out._array.ndim == 0 and out.requires_grad and out._view_version is None \
            and _is_basic_index(index):
        # an element of a recorded tensor is a copy (GetItem.forward) that the in-place rules
        # treat as a view: y[0].add_(5) is refused as on any view (its own version counter,
        # so writes into y's other elements leave it usable); y[0] += 5 computes out of
        # place and writes back through y[0] = ... (``base._augmented``)
        out._view_version, out._element = 0, True
    return out


def check_steps(index):
    """torch's ValueError for a slice of ``index`` (``x[index]``) stepping by 0 or backwards
    (``x[::-1]``: ``flip`` reverses)."""
    for part in index if isinstance(index, tuple) else (index,):
        if isinstance(part, slice) and part.step is not None and part.step <= 0:
            raise ValueError("step must be greater than zero" if part.step else
                             "slice step cannot be zero")


def _as_int(part):
    # signed integers only (a 0-d uint8 tensor is torch's byte mask; here it indexes as an
    # integer array, NumPy's reading); not while a capture records, where the value would
    # become a constant of the tape instead of an argument
    if isinstance(part, _tensor.Tensor) and part.ndim == 0 and part.dtype.kind == "i" \
            and active_tape() is None:
        return int(part.item())
    return part


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


def gather(x, dim, index):
    """Values along ``dim`` at ``index``: ``out[i][j] = x[index[i][j]][j]`` for dim 0.
    ``index`` has x's number of dims, each but ``dim`` no larger than x's; shape: index's."""
    axis = normalize_axis("gather", dim, x.ndim, single=True)
    given, index = index, as_array("gather", "index", index, x, "iu")
    if index.size == 0:                         # any shape of empty index, as in torch
        return _flat_pick(x, index)
    if index.ndim != x.ndim and not (index.ndim <= 1 and x.ndim <= 1):
        raise ValueError(f"gather: index must have as many dims as the tensor ({x.ndim}), "
                         f"got shape {tuple(index.shape)}")
    if x.ndim == 0 or index.ndim == 0:
        if index.size != 1 and x.ndim == 0 or index.ndim > 1:
            raise ValueError(f"gather: a 0-d tensor takes a 0-d or one-element index, got "
                             f"shape {tuple(index.shape)}")
        _check_range("gather", index, max(x.size, 1) if x.ndim == 0 else x.shape[0], axis)
        return _flat_pick(x, index)
    for d, (n, m) in enumerate(zip(index.shape, x.shape)):
        if d != axis and n > m:
            raise ValueError(f"gather: index of shape {tuple(index.shape)} is larger than the "
                             f"tensor's {x.shape} in dim {d}")
    _check_range("gather", index, x.shape[axis], axis)
    return Gather.apply(x, index=kept(given, index), axis=axis)


def index_select(x, dim, index):
    """The slices of x at ``index`` (1-D or 0-d) along ``dim`` (``torch.index_select``)."""
    axis = normalize_axis("index_select", dim, x.ndim, single=True)
    index = as_array("index_select", "index", index, x, "iu")
    if index.ndim > 1:
        raise ValueError(f"index_select: index must be 1-D or 0-d, got shape "
                         f"{tuple(index.shape)}")
    _check_range("index_select", index, x.shape[axis] if x.ndim else 1, axis)
    if x.ndim == 0:
        return _flat_pick(x, index).reshape(())
    return getitem(x, (slice(None),) * axis + (index.reshape(-1),))


def argsort(x, dim=-1, descending=False, stable=False):
    """The int64 indices that sort x along ``dim`` (``torch.argsort``), a constant; equal
    values keep their order (``stable`` is always true here), NaN counts as the largest."""
    check_orderable("sort", check_tensor("argsort", x)._array)
    axis = normalize_axis("argsort", dim, x.ndim, single=True)
    if not isinstance(descending, bool) or not isinstance(stable, bool):
        raise TypeError(f"argsort: descending and stable must be True or False, got "
                        f"{descending!r} and {stable!r}")
    xp, data = x.xp, (x._array if x.ndim else x._array.reshape(1))
    if descending:        # ascending over the reversed dim, read backwards: ties keep order
        last = data.shape[axis] - 1
        order = last - xp.flip(xp.argsort(xp.flip(data, axis), axis, kind="stable"), axis)
    else:
        order = xp.argsort(data, axis, kind="stable")
    return constant(order.reshape(x.shape).astype(xp.int64))


def sort(x, dim=-1, descending=False, stable=False):
    """``(values, indices)`` of x sorted along ``dim`` (``torch.sort``), the named tuple
    ``return_types.sort``; the values are ``gather(x, dim, indices)``, so the gradient goes
    back to each value's place."""
    indices = argsort(x, dim, descending, stable)
    return return_types.sort(gather(x, dim, indices), indices)


def topk(x, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements
    along ``dim``, in sorted order (``torch.topk``); the gradient goes to the picked ones."""
    check_tensor("topk", x)
    axis = normalize_axis("topk", dim, x.ndim, single=True)
    size = x.shape[axis] if x.ndim else 1
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 0 <= k <= size:
        raise ValueError(f"topk: k must be an int in [0, {size}] (the size of dim {axis}), "
                         f"got {k!r}")
    indices = argsort(x, dim, descending=bool(largest))
    if x.ndim:
        indices = indices[(slice(None),) * axis + (slice(0, int(k)),)]
    return return_types.topk(gather(x, dim, indices), indices)


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


def kthvalue(x, k, dim=-1, keepdim=False):
    """``torch.kthvalue``: the named tuple ``(values, indices)`` of the ``k``-th smallest
    element (1-based) of each slice along ``dim``; NaN counts as the largest.

    Args:
        x: the tensor.
        k: an int in [1, size of ``dim``].
        dim: the dim to reduce (last by default).
        keepdim: keep ``dim`` as size 1.

    Of equal values the index is the one at place k of a stable sort (torch leaves it
    unspecified); the gradient of ``values`` goes to the indexed element.

    Example:
        >>> mg.tensor([[3.0, 1.0, 2.0]]).kthvalue(2)      # values tensor([2.]), indices [2]
    """
    check_tensor("kthvalue", x)
    axis = normalize_axis("kthvalue", dim, x.ndim, single=True)
    check_reducible("kthvalue", x.shape, (axis,) if x.ndim else ())   # before k, as torch
    size = x.shape[axis] if x.ndim else 1
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= size:
        raise ValueError(f"kthvalue(): k must be an int in [1, {size}] (the size of dim "
                         f"{axis}), got {k!r}")

    def kth(data, axis):
        order = backend.array_module(data).argsort(data, axis=axis, kind="stable")
        return backend.array_module(data).take(order, [int(k) - 1], axis=axis)

    return pick_along("kthvalue", return_types.kthvalue, x, dim, keepdim, kth)


def mode(x, dim=-1, keepdim=False):
    """``torch.mode``: the named tuple ``(values, indices)`` of the most frequent value of
    each slice along ``dim``; of equally frequent values the smallest, and its last
    occurrence as the index (what torch's CPU kernel gives for slices of up to 16).

    Args:
        x: the tensor.
        dim: the dim to reduce (last by default).
        keepdim: keep ``dim`` as size 1.

    NaNs count as one value, the largest (torch's NaN result is unspecified). The gradient
    of ``values`` goes to the indexed element.

    Example:
        >>> mg.tensor([[1.0, 2.0, 1.0, 2.0]]).mode()      # values tensor([1.]), indices [2]
    """
    return pick_along("mode", return_types.mode, x, dim, keepdim, _mode_index)


def _mode_index(data, axis):
    # Sorted stably, each slice's equal values form runs; every run gets a global id
    # (slice * n + run) so one bincount counts all of them; the first longest run holds the
    # smallest most frequent value, and its last place in the stable order its last index.
    xp = backend.array_module(data)
    rows = xp.moveaxis(data, axis, -1)
    n = rows.shape[-1]
    flat = rows.reshape(-1, n)
    order = xp.argsort(flat, axis=-1, kind="stable")
    ordered = xp.take_along_axis(flat, order, axis=-1)
    same = ordered[:, 1:] == ordered[:, :-1]
    if is_floating(data.dtype):                   # NaNs are one value here
        same |= xp.isnan(ordered[:, 1:]) & xp.isnan(ordered[:, :-1])
    starts = xp.concatenate([xp.ones((len(flat), 1), bool), ~same], axis=-1)
    run = xp.cumsum(starts, axis=-1) - 1 + n * xp.arange(len(flat))[:, None]
    lengths = xp.bincount(run.reshape(-1), minlength=flat.size).reshape(flat.shape)
    best = lengths.argmax(axis=-1)[:, None]
    last = xp.take_along_axis(xp.cumsum(lengths, axis=-1), best, axis=-1) - 1
    index = xp.take_along_axis(order, last, axis=-1)
    return xp.moveaxis(index.reshape(rows.shape[:-1] + (1,)), -1, axis)


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


def index_array(fn, value, like, long_only=False, wrap=False, size=None, axis=0):
    """``value`` (a Tensor or an array) as an integer array on like's device, refused with
    torch's RuntimeError for another dtype (int64 alone with ``long_only``); with ``size``,
    each index checked against it (``wrap``: -size <= index < size, negatives wrapped)."""
    data = value._array if isinstance(value, _tensor.Tensor) else like.xp.asarray(value)
    if data.dtype.kind not in "iu" or long_only and data.dtype != np.int64:
        wanted = "int64" if long_only else "int32 or int64"
        raise RuntimeError(f"{fn}(): expected dtype {wanted} for the index, got {data.dtype}")
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


def _scatter_grid(fn, input, dim, given, src):
    """(index positions, index's shape): ``out[index[i][j]][j]`` for dim 0, after torch's
    checks (index with input's dims, no larger than src anywhere and than input off ``dim``;
    input and src at least 1-D, a 0-d index taken as 1-D, as torch's); no positions for an
    empty index. The index Tensor itself among the positions: its version is checked."""
    axis = normalize_axis(fn, dim, input.ndim, single=True)
    index = index_array(fn, given, input)
    if index.size == 0:
        return None, index.shape
    index = index.reshape(1) if index.ndim == 0 else index
    if index.ndim != input.ndim or src is not None and src.ndim != index.ndim:
        raise RuntimeError(f"{fn}(): index must have as many dims as input (and src), got "
                           f"shapes {tuple(index.shape)}, {input.shape}"
                           + ("" if src is None else f" and {src.shape}"))
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
    if src is not None:
        check_same_dtype("scatter", check_tensor("scatter", input),
                         check_tensor("scatter", src), ("input", "src"))
    flat, src = _at_least_1d(check_tensor("scatter", input)), _at_least_1d(src)
    where, shape = _scatter_grid("scatter", flat, dim, index, src)
    if where is None:                             # an empty index writes nothing
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
    check_same_dtype("scatter_add", check_tensor("scatter_add", input),
                     check_tensor("scatter_add", src), ("input", "src"))
    flat, src = _at_least_1d(input), _at_least_1d(src)
    where, shape = _scatter_grid("scatter_add", flat, dim, index, src)
    if where is None:
        return input.clone()
    return _as_shaped(ScatterAdd.apply(flat, _src_part(src, shape), index=where), input)


def _along(fn, input, dim, index, wrap=False, shape_error=IndexError):
    """(axis, the index array, the index of slices along ``axis``) for the index_* ops: a
    1-D or 0-d integer index (else ``shape_error``, torch's class), within the size of
    ``dim``."""
    check_tensor(fn, input)
    axis = normalize_axis(fn, dim, input.ndim, single=True)
    size = input.shape[axis] if input.ndim else 1
    given, index = index, index_array(fn, index, input, size=size, wrap=wrap, axis=axis)
    if index.ndim > 1:
        raise shape_error(f"{fn}(): index must be 1-D or 0-d, got shape {tuple(index.shape)}")
    index = index if index.ndim == 1 else index.reshape(-1)
    lead = (slice(None),) * axis if input.ndim else ()
    return axis, index, lead + (kept(given, index),)        # (the Tensor: version-checked)


def _slices_like(fn, input, axis, index, source):
    # source must be input's shape with len(index) at ``axis``
    check_same_dtype(fn, input, check_tensor(fn, source), ("input", "source"))
    wanted = input.shape[:axis] + (len(index),) + input.shape[axis + 1:] if input.ndim \
        else (len(index),)
    if tuple(source.shape) != wanted and not (source.ndim == 0 and wanted == (1,)):
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
    axis, index, where = _along("index_add", input, dim, index)
    source = _slices_like("index_add", input, axis, index, source)
    if alpha != 1:
        source = source * (int(alpha) if input.dtype.kind in "iub" else alpha)
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
                                shape_error=RuntimeError)
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
    axis, index, where = _along("index_copy", input, dim, index)
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
                            size=input.size)
        return getitem(flat, index.reshape(-1))
    axis = normalize_axis("take_along_dim", dim, input.ndim, single=True)
    if input.ndim == 0:
        raise AxisError(f"take_along_dim(): dim {dim} given, but the tensor is 0-d")
    index = index_array("take_along_dim", indices, input, long_only=True, wrap=True,
                        size=input.shape[axis], axis=axis)
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
