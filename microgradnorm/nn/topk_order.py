"""Which k entries of a 1-d array torch's CPU ``topk`` picks, ties included.

torch's CPU kernel selects with the C++ standard library: ``std::partial_sort`` when
``64 k <= n``, ``std::nth_element`` otherwise, on (value, index) pairs compared by value
alone (NaN above every number). Which of several equal values lands among the k therefore
follows those algorithms' swaps, and a pruning mask built from the selection differs
from torch's unless the swaps are replayed. NumPy's partition answers whenever the k-th
value is not shared across the boundary; only then are the swaps of libstdc++'s
heap-select and introselect replayed here, in Python, once per call.
"""

import numpy as np

__all__ = ["topk_indices"]


def topk_indices(values, k, largest):
    """The indices (int64, unordered) of the ``k`` entries torch's CPU ``topk`` of the 1-d
    NumPy array ``values`` selects, the entry chosen among equals included."""
    values = np.asarray(values).reshape(-1)
    n = values.size
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    if not np.isnan(values).any():
        key = -values if largest else values
        picked = np.argpartition(key, k - 1)[:k]
        kth = key[picked].max()
        # unambiguous when every entry equal to the k-th value is among the k
        if np.count_nonzero(key == kth) == np.count_nonzero(key[picked] == kth):
            return picked.astype(np.int64)
    return np.array(_replay(values.tolist(), n, k, largest), dtype=np.int64)


def _replay(values, n, k, largest):
    if largest:
        def comp(a, b):
            x, y = a[0], b[0]
            return (x != x and y == y) or x > y
    else:
        def comp(a, b):
            x, y = a[0], b[0]
            return (x == x and y != y) or x < y
    queue = list(zip(values, range(n)))
    if k * 64 <= n:
        _heap_select(queue, 0, k, n, comp)
    else:
        _introselect(queue, 0, k - 1, n, comp)
    return [index for _, index in queue[:k]]


def _push_heap(a, base, hole, top, value, comp):
    parent = (hole - 1) // 2
    while hole > top and comp(a[base + parent], value):
        a[base + hole] = a[base + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[base + hole] = value


def _adjust_heap(a, base, hole, length, value, comp):
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if comp(a[base + child], a[base + child - 1]):
            child -= 1
        a[base + hole] = a[base + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[base + hole] = a[base + child - 1]
        hole = child - 1
    _push_heap(a, base, hole, top, value, comp)


def _heap_select(a, first, middle, last, comp):
    length = middle - first
    if length >= 2:
        for parent in range((length - 2) // 2, -1, -1):
            _adjust_heap(a, first, parent, length, a[first + parent], comp)
    for i in range(middle, last):
        if comp(a[i], a[first]):
            value = a[i]
            a[i] = a[first]
            _adjust_heap(a, first, 0, length, value, comp)


def _median_to_first(a, result, i, j, m, comp):
    if comp(a[i], a[j]):
        pick = j if comp(a[j], a[m]) else (m if comp(a[i], a[m]) else i)
    elif comp(a[i], a[m]):
        pick = i
    else:
        pick = m if comp(a[j], a[m]) else j
    a[result], a[pick] = a[pick], a[result]


def _partition(a, first, last, pivot, comp):
    while True:
        while comp(a[first], a[pivot]):
            first += 1
        last -= 1
        while comp(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _insertion_sort(a, first, last, comp):
    for i in range(first + 1, last):
        value = a[i]
        if comp(value, a[first]):
            a[first + 1:i + 1] = a[first:i]
            a[first] = value
        else:
            j = i
            while comp(value, a[j - 1]):
                a[j] = a[j - 1]
                j -= 1
            a[j] = value


def _introselect(a, first, nth, last, comp):
    depth = 2 * ((last - first).bit_length() - 1) if last > first else 0
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, comp)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        mid = first + (last - first) // 2
        _median_to_first(a, first, first + 1, mid, last - 1, comp)
        cut = _partition(a, first + 1, last, first, comp)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, comp)
