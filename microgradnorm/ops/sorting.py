"""Sorting: argsort, sort, topk, kthvalue and mode, the gathers of a sorted order; each
``(values, indices)`` result's values are a ``gather`` of x (``indexing.py``), so the
gradient goes back to each value's place. NaN counts as the largest value, bfloat16 is
ordered through float32 (``dtypes.sortable``), and a bool x is refused where torch has no
kernel for bools (topk, kthvalue)."""

import numbers

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..dtypes import is_floating, sortable
from . import return_types
from .base import check_not_bool, check_orderable, check_reducible, check_tensor, constant, \
    normalize_axis
from .indexing import Sort, Topk, gathered, pick_along
from .introsort import introsort_order, sort_order, topk_order
from ..dtypes import NOT_GIVEN, int_dim
from .numpy_names import numpy_dim


class SelectionRangeError(RuntimeError, ValueError):
    """A ``k`` outside its dim's size (topk, kthvalue): torch's RuntimeError, and a
    ValueError."""


def argsort(input, dim=NOT_GIVEN, descending=False, stable=False, *, axis=None):
    """The int64 indices that sort x along ``dim`` (-1 when left out; ``axis``: NumPy's name for
    it, as torch's) (``torch.argsort``), a constant; equal values keep their order
    (``stable=True``), NaN counts as the largest. With ``stable=False`` the equal values of a
    dim longer than 16 fall where torch's CPU kernel (``std::sort``) leaves them, for inputs
    of up to 32767 elements (the moves are replayed in Python); a larger one keeps them in
    order (as torch's radix sort of a 1-d integer input of that size does)."""
    if (dim := int_dim("argsort", dim)) is None or axis is not None:
        dim = numpy_dim("argsort", dim, axis, default=-1)
    check_orderable("sort", check_tensor("argsort", input)._array)
    axis = normalize_axis("argsort", dim, input.ndim, single=True)
    if not isinstance(descending, bool) or not isinstance(stable, bool):
        raise TypeError(f"argsort: descending and stable must be True or False, got "
                        f"{descending!r} and {stable!r}")
    xp, data = input.xp, sortable(input._array if input.ndim else input._array.reshape(1))
    if descending:        # ascending over the reversed dim, read backwards: ties keep order
        last = data.shape[axis] - 1
        order = last - xp.flip(xp.argsort(xp.flip(data, axis), axis, kind="stable"), axis)
    else:
        order = xp.argsort(data, axis, kind="stable")
    if not stable and 16 < data.shape[axis] and data.size < _REPLAY_LIMIT:
        order = _unstable_order(xp, data, order, axis, descending)
    return constant(order.reshape(input.shape).astype(xp.int64))


_REPLAY_LIMIT = 32768   # the replay runs in Python (torch's radix sort of 1-d ints starts here)


def _unstable_order(xp, data, order, axis, descending):
    # torch's std::sort moves equal values (insertion sort below 17 keeps them in order):
    # replay its moves on each slice that holds a tie, NaNs being equal to each other there
    ordered = xp.moveaxis(xp.take_along_axis(data, order, axis), axis, -1)
    same = ordered[..., 1:] == ordered[..., :-1]
    if is_floating(ordered.dtype):
        same |= xp.isnan(ordered[..., 1:]) & xp.isnan(ordered[..., :-1])
    tied = same.reshape(-1, same.shape[-1]).any(axis=-1)
    if not tied.any():
        return order
    rows = xp.moveaxis(data, axis, -1).reshape(-1, data.shape[axis])
    out = xp.moveaxis(order, axis, -1).reshape(rows.shape).copy()
    for row in xp.nonzero(tied)[0].tolist():
        out[row] = xp.asarray(sort_order(rows[row].tolist(), descending))
    shape = tuple(n for d, n in enumerate(data.shape) if d != axis) + (data.shape[axis],)
    return xp.moveaxis(out.reshape(shape), -1, axis)


def sort(input, dim=NOT_GIVEN, descending=False, stable=False, *, axis=None):
    """``(values, indices)`` of input sorted along ``dim`` (-1 when left out; ``axis``: NumPy's name
    for it) (``torch.sort``), the named tuple ``return_types.sort``; the values are
    ``gather(input, dim, indices)``, so the gradient goes back to each value's place."""
    if (dim := int_dim("sort", dim)) is None or axis is not None:
        dim = numpy_dim("sort", dim, axis, default=-1)
    indices = argsort(input, dim, descending, stable)
    return return_types.sort(gathered(input, dim, indices, None, Sort), indices)


def _check_k(fn, k, low, size, axis):
    # k as an int: a Python or NumPy int, or an integer tensor of one element (torch's too)
    if isinstance(k, _tensor.Tensor) and k.numel() == 1 and k.dtype.kind in "iu":
        k = k.item()
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{fn}: argument 'k' must be int, not {type(k).__name__}")
    if not low <= k <= size:
        raise SelectionRangeError(f"{fn}: k must be an int in [{low}, {size}] (the size of "
                                  f"dim {axis}), got {k!r}: selected number k out of range")
    return int(k)


def topk(input, k, dim=NOT_GIVEN, largest=True, sorted=True, *, axis=None):
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements
    along ``dim`` (-1 when left out; ``axis``: NumPy's name for it), in sorted order
    (``torch.topk``); the gradient goes to the picked ones.

    Of equal values, the ones picked and their order are those of torch's CPU kernel (its
    C++ selection's moves, replayed on the slices where a tie decides: ``_as_torch_topk``);
    ``sorted=False`` gives the order its selection leaves, as torch's (sorted where
    ``64 k <= n``, else ``std::nth_element``'s arrangement, replayed slice by slice)."""
    if (dim := int_dim("topk", dim)) is None or axis is not None:
        dim = numpy_dim("topk", dim, axis, default=-1)
    axis = normalize_axis("topk", dim, check_tensor("topk", input).ndim, single=True)
    k = _check_k("topk", k, 0, input.shape[axis] if input.ndim else 1, axis)
    check_not_bool("topk", input)
    check_orderable("topk", input._array)
    if input.ndim:
        indices = constant(_as_torch_topk(input._array, axis, k, bool(largest), bool(sorted)))
    else:                             # 0-d: its one element whatever k (0 or 1), as torch's
        indices = constant(input.xp.zeros((), input.xp.int64))
    return return_types.topk(gathered(input, dim, indices, None, Topk), indices)


def topk_indices(values, k, largest):
    """The int64 indices of the ``k`` entries torch's CPU ``topk`` picks from the 1-d array
    ``values``, in its order (equal values chosen as torch's): ``topk(...).indices`` for
    code that works on arrays (``nn.utils.prune``'s masks)."""
    return _as_torch_topk(values.reshape(-1), 0, k, largest, True)


def _as_torch_topk(data, axis, k, largest, sorted):
    # the k + 1 best of each slice by a partition, sorted: the first k are torch's picks
    # wherever these k + 1 values are distinct; elsewhere a tie decides which of equals come
    # and in what order: replay torch's selection on those slices (ops/introsort.py)
    xp, n = backend.array_module(data), data.shape[axis]
    shape = data.shape[:axis] + data.shape[axis + 1:] + (k,)
    if k == 0 or data.size == 0:
        return xp.moveaxis(xp.zeros(shape, xp.int64), -1, axis)
    rows = xp.moveaxis(sortable(data), axis, -1).reshape(-1, n)
    m = min(k + 1, n)                              # NaN sorts last, as the largest value
    if m < n:
        part = xp.argpartition(rows, n - m if largest else m - 1, axis=-1)
        head = part[:, n - m:] if largest else part[:, :m]
    else:
        head = xp.broadcast_to(xp.arange(n), rows.shape)
    order = xp.argsort(xp.take_along_axis(rows, head, axis=-1), axis=-1)
    head = xp.take_along_axis(head, order[:, ::-1] if largest else order, axis=-1)
    values = xp.take_along_axis(rows, head, axis=-1)
    same = values[:, 1:] == values[:, :-1]
    if is_floating(values.dtype):
        same |= xp.isnan(values[:, 1:]) & xp.isnan(values[:, :-1])
    picks = head[:, :k].astype(xp.int64)
    replay = same.any(axis=-1)
    if not sorted and 1 < k and n < 64 * k:      # nth_element's arrangement, not sorted order
        replay[:] = True                         # (partial_sort's, for 64 k <= n, is sorted)
    for row in xp.nonzero(replay)[0].tolist():
        picks[row] = xp.asarray(topk_order(rows[row].tolist(), k, largest, sorted))
    return xp.moveaxis(picks.reshape(shape), -1, axis)


def kthvalue(input, k, dim=-1, keepdim=False):
    """``torch.kthvalue``: the named tuple ``(values, indices)`` of the ``k``-th smallest
    element (1-based) of each slice along ``dim``; NaN counts as the largest.

    Args:
        input: the tensor (not bool, as torch's).
        k: an int in [1, size of ``dim``].
        dim: the dim to reduce (last by default).
        keepdim: keep ``dim`` as size 1.

    Of equal values the index is the one torch's CPU kernel gives: the place its
    quickselect leaves at k (``_quickselect``). The gradient of ``values`` goes to the
    indexed element.

    Example:
        >>> mg.tensor([[3.0, 1.0, 2.0]]).kthvalue(2)      # values tensor([2.]), indices [2]
    """
    axis = normalize_axis("kthvalue", dim, check_tensor("kthvalue", input).ndim, single=True)
    check_reducible("kthvalue", input.shape, (axis,) if input.ndim else ())   # before k, as torch
    k = _check_k("kthvalue()", k, 1, input.shape[axis] if input.ndim else 1, axis)
    if input.ndim:                                    # (torch takes a 0-d bool: one element)
        check_not_bool("kthvalue", input)

    def kth(data, axis):
        xp, keys = backend.array_module(data), sortable(data)
        order = xp.argsort(keys, axis=axis, kind="stable")
        return _as_torch_picks(keys, order, axis, int(k))

    return pick_along("kthvalue", return_types.kthvalue, input, dim, keepdim, kth)


def _as_torch_picks(keys, order, axis, k):
    # the index at place k of the stable order (axis kept as size 1) is right wherever the
    # k-th value is alone in its slice; where it has equals, torch's index is its
    # quickselect's: run it on those slices only
    xp = backend.array_module(keys)
    index = xp.take(order, [k - 1], axis=axis)
    value = xp.take_along_axis(keys, index, axis=axis)
    same = keys == value
    if is_floating(keys.dtype):
        same |= xp.isnan(keys) & xp.isnan(value)
    tied = (same.sum(axis=axis) > 1).reshape(-1)                      # one flag a slice
    if not tied.any():
        return index
    rows = xp.moveaxis(keys, axis, -1).reshape(len(tied), -1)         # (slices, n)
    picks = xp.moveaxis(index, axis, -1).reshape(-1).copy()           # (slices,)
    orders = xp.moveaxis(order, axis, -1).reshape(len(tied), -1)
    picks[tied] = _quickselect_patterns(rows[tied], orders[tied], k - 1)
    shape = xp.moveaxis(index, axis, -1).shape
    return xp.moveaxis(picks.reshape(shape), -1, axis)


def _quickselect_patterns(rows, order, k):
    """``_quickselect_rows``, each row's pattern of order once: a quickselect reads only
    which values are greater, so a row's index is its dense ranks' (NaN one rank, the
    largest). Rows of up to 15 places (``order``: each row's argsort), their ranks packed 4
    bits a place into one int64."""
    xp = backend.array_module(rows)
    m, n = rows.shape
    if n > 15 or m < 64:
        return _quickselect_rows(rows, k)
    ordered = xp.take_along_axis(rows, order, axis=1)
    step = ordered[:, 1:] != ordered[:, :-1]
    if is_floating(rows.dtype):
        step &= ~(xp.isnan(ordered[:, 1:]) & xp.isnan(ordered[:, :-1]))
    ranks = xp.zeros((m, n), np.int64)
    ranks[xp.arange(m)[:, None], order[:, 1:]] = xp.cumsum(step, axis=1)
    key = (ranks << (4 * xp.arange(n))).sum(axis=1)
    _, first, back = xp.unique(key, return_index=True, return_inverse=True)
    if 2 * len(first) > m:                  # few rows share one: not worth it
        return _quickselect_rows(rows, k)
    return _quickselect_rows(ranks[first], k)[back.reshape(-1)]


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


def _quickselect_rows(rows, k):
    """``_quickselect`` of every row of the (m, n) array ``rows`` at once: the index each
    row's quickselect leaves at place ``k``, its passes in lockstep (each row its own range).
    A pass's partition is found whole rather than swap by swap: its i scan stops at the
    places >= pivot from low + 2 on, its j scan at those <= pivot from high - 1 down; the
    t-th stop of one swaps with the t-th of the other while i <= j. Those places are ones
    neither scan has passed, so the stops are read off the values before any swap, and the
    swaps are the max over places of min(i stops at or before, j stops at or after). Each
    scan's last run ends at its next stop or at the nearest place the other swapped."""
    xp = backend.array_module(rows)
    m, n = rows.shape
    values, index = rows.reshape(-1).copy(), xp.tile(xp.arange(n), m)   # flat: row * n + place
    low, high = xp.zeros(m, np.int64), xp.full(m, n - 1, np.int64)

    def greater(a, b):                              # torch's gt_or_nan, elementwise
        if not is_floating(values.dtype):
            return a > b
        return (a > b) | (xp.isnan(a) & ~xp.isnan(b))

    def swap(a, b):                                 # flat places a and b
        for array in (values, index):
            array[a], array[b] = array[b], array[a]

    live = xp.arange(m)
    while True:
        live = live[high[live] > low[live] + 1]
        if not len(live):
            break
        lo, hi = low[live], high[live]
        first, end = live * n + lo, live * n + hi
        _median_of_three(values, index, first, first + (hi - lo) // 2, end, greater)
        # (rows, places), each row from its lo: the running sums run along the last axis
        span, offset = (hi - lo)[:, None], xp.arange(int((hi - lo).max()) + 1)
        if len(live) == m and len(offset) == n:        # the first pass: the rows themselves
            window = values.reshape(m, n)
        else:
            window = values[first[:, None] + xp.minimum(offset, span)]
        pivot = window[:, :1]
        stops_i = ~greater(pivot, window) & (offset <= span)
        stops_i[:, :2] = False                                # i scans from lo + 2 on
        stops_j = ~greater(window, pivot) & (offset < span)
        stops_j[:, 0] = False                                 # j scans down to lo + 1
        rank_i = xp.cumsum(stops_i, axis=1, dtype=np.int32)   # i stops at or before
        rank_j = xp.cumsum(stops_j[:, ::-1], axis=1, dtype=np.int32)[:, ::-1]   # at or after
        swaps = xp.minimum(rank_i, rank_j).max(axis=1)
        # each row's first swaps + 1 stops of each scan, a block a row (row-major): the i
        # stops by rank, the j stops by place (rank swaps + 1 first); every row has them
        places_i = xp.nonzero(stops_i & (rank_i <= (swaps + 1)[:, None]))[1]
        places_j = xp.nonzero(stops_j & (rank_j <= (swaps + 1)[:, None]))[1]
        block = xp.cumsum(swaps + 1) - swaps - 1                            # its first
        row = xp.repeat(xp.arange(len(live)), swaps + 1)
        rank = xp.arange(len(places_i)) - block[row]                        # t - 1
        pair = rank < swaps[row]                     # the t-th stops swap, t <= swaps
        partner = (block + swaps)[row] - rank        # the j block's place of rank t
        swap(first[row[pair]] + places_i[pair], first[row[pair]] + places_j[partner[pair]])
        next_i, next_j = places_i[block + swaps], places_j[block]
        # the last swap's places bound the scans; one place for both (only possible at the
        # last swap) bounds neither, and the swap before it does
        same = (swaps > 0) & (_nth(places_i, block, swaps - 1) == _nth(places_j, block, 1))
        bounded = swaps > same
        i_end = lo + xp.where(bounded, xp.minimum(next_i, _nth(places_j, block, 1 + same)),
                              next_i)
        j_end = lo + xp.where(bounded,
                              xp.maximum(next_j, _nth(places_i, block, swaps - 1 - same)),
                              next_j)
        swap(first, live * n + j_end)
        low[live] = xp.where(j_end <= k, i_end, lo)
        high[live] = xp.where(j_end >= k, j_end - 1, hi)
    two = xp.flatnonzero(high == low + 1)                # two places left: in order
    a, b = two * n + low[two], two * n + high[two]
    flip = greater(values[a], values[b])
    swap(a[flip], b[flip])
    return index[xp.arange(m) * n + k]


def _nth(places, block, at):
    # the place at index ``at`` of each row's block (blocks start at ``block``); where a
    # block has none there, any (the caller's where leaves it out)
    return places[(block + at).clip(0, len(places) - 1)]


def _median_of_three(values, index, first, middle, end, greater):
    # torch's pivot choice at the flat places first (lo), middle and end (hi) of each row:
    # the middle swapped to lo + 1, then lo + 1 <= lo <= hi by three conditional swaps
    xp, second = backend.array_module(values), first + 1
    trio = [[array[first], array[middle], array[end]] for array in (values, index)]
    for a, b in ((1, 2), (0, 2), (1, 0)):
        flip = greater(trio[0][a], trio[0][b])
        for t in trio:
            t[a], t[b] = xp.where(flip, t[b], t[a]), xp.where(flip, t[a], t[b])
    for array, (at_first, at_second, at_end) in zip((values, index), trio):
        array[middle] = array[second]                # (middle may be second: written over)
        array[first], array[second], array[end] = at_first, at_second, at_end


def mode(input, dim=-1, keepdim=False):
    """``torch.mode``: the named tuple ``(values, indices)`` of the most frequent value of
    each slice along ``dim``; of equally frequent values the smallest. The index is torch's
    CPU kernel's: the last of the value's run after C++'s ``std::sort`` (``introsort.py``),
    its last occurrence in a slice of up to 16 without NaN; another slice replays that sort.

    Args:
        input: the tensor.
        dim: the dim to reduce (last by default).
        keepdim: keep ``dim`` as size 1.

    A NaN equals nothing, not even another NaN (each is a run of one), and stays where the
    sort leaves it, as in torch. The gradient of ``values`` goes to the indexed element.

    Example:
        >>> mg.tensor([[1.0, 2.0, 1.0, 2.0]]).mode()      # values tensor([1.]), indices [2]
    """
    return pick_along("mode", return_types.mode, input, dim, keepdim, _mode_index)


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
    # std::sort keeps ties in order only in a slice of up to 16 (an insertion sort) without
    # NaN; where the choice depends on it (ties of the winner, or a NaN), replay that sort
    replay = xp.isnan(flat).any(axis=-1) if is_floating(data.dtype) else xp.zeros(len(flat), bool)
    if n > 16:
        replay |= lengths.max(axis=-1) > 1
    for row in xp.nonzero(replay)[0].tolist():
        index[row, 0] = _sorted_run_index(flat[row].tolist())
    return xp.moveaxis(index.reshape(rows.shape[:-1] + (1,)), -1, axis)


def _sorted_run_index(values):
    # torch's scan over the std::sort order: the last index of the first longest run of
    # equal neighbours (a NaN is unequal to everything: a run of one)
    order = introsort_order(values)
    best_index, best_length, length = order[-1], 0, 0
    for place, i in enumerate(order):
        length += 1
        if place == len(order) - 1 or values[i] != values[order[place + 1]]:
            if length > best_length:
                best_index, best_length = i, length
            length = 0
    return best_index
