"""Indexing: ``x[index]`` (an embedding lookup is ``weight[ids]``), gather, index_select,
sort/argsort/topk/kthvalue/mode (gathers of the sorted order), and ``pick_along``, which the
(values, indices) reductions share; backward adds each gradient into the element it came
from, so repeats accumulate."""

import numbers

import numpy as np

from .. import backend
from ..autograd import Function
from ..dtypes import is_floating
from . import return_types
from .base import (OutOfRangeError, as_array, check_orderable, check_reducible, check_tensor,
                   constant, kept, normalize_axis, unbroadcast)

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
        if isinstance(out, np.generic):         # x[1, 2]: a 0-d view, as torch's, not a copy
            out = x[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
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
            grad_x = grad.copy()
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
    """``x[index]``: slices, ints, None, ``...``, integer or bool arrays (or Tensors)."""
    return GetItem.apply(x, index=index)          # apply keeps the index's tensors checked


def index_put(x, index, value):
    """``x`` with ``value`` written at ``index``, a new tensor in the graph (``x[index] = value``
    out of place; ``torch.index_put`` for the array indices)."""
    return IndexPut.apply(x, value, index=index)


def _check_range(fn, index, size, axis):
    if index.size and (int(index.min()) < 0 or int(index.max()) >= size):
        bad = int(index.min()) if int(index.min()) < 0 else int(index.max())
        raise OutOfRangeError(f"{fn}: index {bad} is out of bounds for dim {axis} with "
                              f"size {size} (expected 0 <= index < {size})")


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
