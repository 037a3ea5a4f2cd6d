"""Sorting: argsort, sort, topk, kthvalue and mode, the gathers of a sorted order; each
``(values, indices)`` result's values are a ``gather`` of x (``indexing.py``), so the
gradient goes back to each value's place. NaN counts as the largest value, bfloat16 is
ordered through float32 (``dtypes.sortable``), and a bool x is refused where torch has no
kernel for bools (topk, kthvalue)."""

import numbers

from .. import backend
from ..dtypes import is_floating, sortable
from . import return_types
from .base import check_not_bool, check_orderable, check_reducible, check_tensor, constant, \
    normalize_axis
from .indexing import gather, pick_along


class SelectionRangeError(RuntimeError, ValueError):
    """A ``k`` outside its dim's size (topk, kthvalue): torch's RuntimeError, and a
    ValueError."""


def argsort(x, dim=-1, descending=False, stable=False):
    """The int64 indices that sort x along ``dim`` (``torch.argsort``), a constant; equal
    values keep their order (``stable`` is always true here), NaN counts as the largest."""
    check_orderable("sort", check_tensor("argsort", x)._array)
    axis = normalize_axis("argsort", dim, x.ndim, single=True)
    if not isinstance(descending, bool) or not isinstance(stable, bool):
        raise TypeError(f"argsort: descending and stable must be True or False, got "
                        f"{descending!r} and {stable!r}")
    xp, data = x.xp, sortable(x._array if x.ndim else x._array.reshape(1))
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


def _check_k(fn, k, low, size, axis):
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not low <= k <= size:
        raise SelectionRangeError(f"{fn}: k must be an int in [{low}, {size}] (the size of "
                                  f"dim {axis}), got {k!r}: selected number k out of range")


def topk(x, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements
    along ``dim``, in sorted order (``torch.topk``); the gradient goes to the picked ones."""
    axis = normalize_axis("topk", dim, check_tensor("topk", x).ndim, single=True)
    _check_k("topk", k, 0, x.shape[axis] if x.ndim else 1, axis)
    check_not_bool("topk", x)
    indices = argsort(x, dim, descending=bool(largest))
    if x.ndim:
        indices = indices[(slice(None),) * axis + (slice(0, int(k)),)]
    return return_types.topk(gather(x, dim, indices), indices)


def kthvalue(x, k, dim=-1, keepdim=False):
    """``torch.kthvalue``: the named tuple ``(values, indices)`` of the ``k``-th smallest
    element (1-based) of each slice along ``dim``; NaN counts as the largest.

    Args:
        x: the tensor (not bool, as torch's).
        k: an int in [1, size of ``dim``].
        dim: the dim to reduce (last by default).
        keepdim: keep ``dim`` as size 1.

    Of equal values the index is the one torch's CPU kernel gives: the place its
    quickselect leaves at k (``_quickselect``). The gradient of ``values`` goes to the
    indexed element.

    Example:
        >>> mg.tensor([[3.0, 1.0, 2.0]]).kthvalue(2)      # values tensor([2.]), indices [2]
    """
    axis = normalize_axis("kthvalue", dim, check_tensor("kthvalue", x).ndim, single=True)
    check_reducible("kthvalue", x.shape, (axis,) if x.ndim else ())   # before k, as torch
    _check_k("kthvalue()", k, 1, x.shape[axis] if x.ndim else 1, axis)
    if x.ndim:                                    # (torch takes a 0-d bool: one element)
        check_not_bool("kthvalue", x)

    def kth(data, axis):
        xp, keys = backend.array_module(data), sortable(data)
        order = xp.argsort(keys, axis=axis, kind="stable")
        return _as_torch_picks(keys, xp.take(order, [int(k) - 1], axis=axis), axis, int(k))

    return pick_along("kthvalue", return_types.kthvalue, x, dim, keepdim, kth)


def _as_torch_picks(keys, index, axis, k):
    # index (axis kept as size 1) is right wherever the k-th value is alone in its slice;
    # where it has equals, torch's index is its quickselect's: run it on those slices only
    xp = backend.array_module(keys)
    value = xp.take_along_axis(keys, index, axis=axis)
    same = keys == value
    if is_floating(keys.dtype):
        same |= xp.isnan(keys) & xp.isnan(value)
    tied = (same.sum(axis=axis) > 1).reshape(-1)                      # one flag a slice
    if not tied.any():
        return index
    rows = xp.moveaxis(keys, axis, -1).reshape(len(tied), -1)         # (slices, n)
    picks = xp.moveaxis(index, axis, -1).reshape(-1).copy()           # (slices,)
    for row in xp.flatnonzero(tied).tolist():
        picks[row] = _quickselect(rows[row].tolist(), k - 1)
    shape = xp.moveaxis(index, axis, -1).shape
    return xp.moveaxis(picks.reshape(shape), -1, axis)


def _quickselect(values, k):
    """The index torch's ``quick_select_template`` (ATen's SortingUtils.h) leaves at place
    ``k`` of the list ``values``: median-of-three pivots, Hoare's partition, NaN the
    largest. Its ties fall where its swaps leave them, not in a stable order."""
    def greater(a, b):                              # torch's gt_or_nan
        return (a != a and b == b) or a > b

    index = list(range(len(values)))

    def swap(i, j):
        values[i], values[j] = values[j], values[i]
        index[i], index[j] = index[j], index[i]

    low, high = 0, len(values) - 1
    while high > low + 1:
        middle = low + (high - low) // 2
        swap(middle, low + 1)
        if greater(values[low + 1], values[high]):
            swap(low + 1, high)
        if greater(values[low], values[high]):
            swap(low, high)
        if greater(values[low + 1], values[low]):
            swap(low + 1, low)
        i, j, pivot = low + 1, high, values[low]
        while True:              # values[high] >= pivot and values[low] == pivot stop these
            i += 1
            while greater(pivot, values[i]):
                i += 1
            j -= 1
            while greater(values[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(low, j)
        if j <= k:
            low = i
        if j >= k:
            high = j - 1
    if high == low + 1 and greater(values[low], values[high]):
        swap(low, high)
    return index[k]


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
    rows = xp.moveaxis(sortable(data), axis, -1)
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
