"""The orders C++'s sorting algorithms (GCC's libstdc++, which PyTorch's CPU builds use)
leave a sequence in, for the ops whose results depend on them:

- ``torch.mode`` sorts each slice's ``(value, index)`` pairs by value with ``std::sort``
  and reports the index of the last pair of the longest run (``introsort_order``);
- ``torch.topk`` selects with ``std::partial_sort`` when ``64 k <= n``, else with
  ``std::nth_element`` and then ``std::sort`` of the first ``k - 1`` (``topk_order``).

Which of several equal elements lands where follows these algorithms' moves, so a tie is
resolved as torch resolves it only by making the same moves. ``std::sort`` is an
introsort: quicksort partitions around a median of three until a part holds 16 or fewer
elements (or the depth budget, 2·log2(n), runs out: that part is heap-sorted), then one
insertion sort over the whole sequence. ``std::nth_element`` is the same partitioning
down to the part that holds the nth place, then an insertion sort of that part (or a heap
selection when the budget runs out). ``std::partial_sort`` is a heap selection, then a
heap sort of the kept part. None is stable, and a NaN, which compares false against
everything under ``<``, stays where the moves leave it. Each step below is the library's,
on a Python list of ``(value, index)`` items compared by a ``less`` function.
"""

_THRESHOLD = 16                       # parts this small are left to the insertion sort


def _value_less(a, b):
    return a[0] < b[0]


def introsort_order(values):
    """The indices of ``values`` (a list) in the order ``std::sort`` with ``a < b`` leaves
    them: ``[i for i in introsort_order(v)]`` reads ``v`` as the sorted sequence.

    Example:
        >>> introsort_order([2.0, 1.0, 2.0])                  # [1, 0, 2]
    """
    items = [(value, i) for i, value in enumerate(values)]
    sort(items, 0, len(items), _value_less)
    return [i for _, i in items]


def sort_order(values, descending=False):
    """The indices torch's CPU ``sort`` with ``stable=False`` leaves the 1-d list ``values``
    in: ``std::sort`` with NaN above every number, equal values where its moves leave them
    (in a stable order up to 16 values, where it is an insertion sort).

    Example:
        >>> sort_order([0.0] * 17)[:3]                              # torch's [8, 16, 15]
    """
    items = [(value, i) for i, value in enumerate(values)]
    sort(items, 0, len(items), _nan_greater if descending else _nan_less)
    return [i for _, i in items]


def _nan_less(a, b):
    return (a[0] == a[0] and b[0] != b[0]) or a[0] < b[0]


def _nan_greater(a, b):
    return (a[0] != a[0] and b[0] == b[0]) or a[0] > b[0]


def topk_order(values, k, largest, sorted=True):
    """The indices torch's CPU ``topk`` returns for the 1-d list ``values``, in its order:
    the comparison puts NaN above every number (below, for ``largest=False``), and equal
    values are chosen and ordered by the algorithms' moves.

    Example:
        >>> topk_order([0.0, 0.0, 0.0, 0.0], 2, largest=True)       # torch's [3, 2]
    """
    if largest:
        def less(a, b):
            return (a[0] != a[0] and b[0] == b[0]) or a[0] > b[0]
    else:
        def less(a, b):
            return (a[0] == a[0] and b[0] != b[0]) or a[0] < b[0]
    items = [(value, i) for i, value in enumerate(values)]
    if k == 0:
        return []
    if 64 * k <= len(items):
        _heap_select(items, 0, k, len(items), less)
        _sort_heap(items, 0, k, less)
    else:
        _introselect(items, 0, k - 1, len(items), less)
        if sorted:
            sort(items, 0, k - 1, less)
    return [i for _, i in items[:k]]


def sort(items, first, last, less):
    """``std::sort(first, last, less)`` of ``items[first:last]``, in place."""
    if last - first > 1:
        _introsort_loop(items, first, last, 2 * ((last - first).bit_length() - 1), less)
        if last - first > _THRESHOLD:
            _insertion_sort(items, first, first + _THRESHOLD, less)
            for i in range(first + _THRESHOLD, last):    # unguarded in C++: a smaller item
                _linear_insert(items, i, less, first)    # sits in the first 16 (a NaN can
                                                         # break that: ``first`` still stops)
        else:
            _insertion_sort(items, first, last, less)


def _introsort_loop(items, first, last, depth, less):
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(items, first, last, less)
            return
        depth -= 1
        cut = _partition_around_median(items, first, last, less)
        _introsort_loop(items, cut, last, depth, less)
        last = cut


def _introselect(items, first, nth, last, less):
    depth = 2 * ((last - first).bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(items, first, nth + 1, last, less)
            items[first], items[nth] = items[nth], items[first]
            return
        depth -= 1
        cut = _partition_around_median(items, first, last, less)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(items, first, last, less)


def _partition_around_median(items, first, last, less):
    # the median of items[first + 1], the middle one and the last moves to ``first``,
    # the pivot; then the two scans meet (neither needs a bound: the pivot stops them)
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    if less(items[a], items[b]):
        median = b if less(items[b], items[c]) else c if less(items[a], items[c]) else a
    elif less(items[a], items[c]):
        median = a
    else:
        median = c if less(items[b], items[c]) else b
    items[first], items[median] = items[median], items[first]
    pivot = items[first]
    low, high = first + 1, last
    while True:
        while less(items[low], pivot):
            low += 1
        high -= 1
        while less(pivot, items[high]):
            high -= 1
        if low >= high:
            return low
        items[low], items[high] = items[high], items[low]
        low += 1


def _insertion_sort(items, first, last, less):
    # an item smaller than the first moves to the front in one shift; the others walk back
    for i in range(first + 1, last):
        if less(items[i], items[first]):
            items.insert(first, items.pop(i))
        else:
            _linear_insert(items, i, less, first)


def _linear_insert(items, last, less, first):
    item = items[last]
    while last > first and less(item, items[last - 1]):
        items[last] = items[last - 1]
        last -= 1
    items[last] = item


def _heap_select(items, first, middle, last, less):
    # make a heap of items[first:middle] (its top the largest), then each later item that
    # is less than the top replaces it (libstdc++'s __heap_select)
    n = middle - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(items, first, parent, n, items[first + parent], less)
    for i in range(middle, last):
        if less(items[i], items[first]):
            item = items[i]
            items[i] = items[first]
            _adjust_heap(items, first, 0, n, item, less)


def _heap_sort(items, first, last, less):
    # libstdc++'s __partial_sort over the whole part: a heap of it, then sorted
    _heap_select(items, first, last, last, less)
    _sort_heap(items, first, last, less)


def _sort_heap(items, first, last, less):
    # pop the largest to the back until one is left
    n = last - first
    while n > 1:
        n -= 1
        item = items[first + n]
        items[first + n] = items[first]
        _adjust_heap(items, first, 0, n, item, less)


def _adjust_heap(items, first, hole, n, item, less):
    # Floyd's repair of the heap items[first:first + n] whose slot ``hole`` is empty: the
    # hole walks down to a leaf, each time into the larger child (the right one on a tie),
    # then ``item`` climbs from there while its parent is less
    top = hole
    while 2 * hole + 2 < n:                              # both children there
        child = 2 * hole + 2
        if less(items[first + child], items[first + child - 1]):
            child -= 1
        items[first + hole] = items[first + child]
        hole = child
    if 2 * hole + 2 == n:                                # a left child only, the last slot
        items[first + hole] = items[first + n - 1]
        hole = n - 1
    while hole > top and less(items[first + (hole - 1) // 2], item):
        items[first + hole] = items[first + (hole - 1) // 2]
        hole = (hole - 1) // 2
    items[first + hole] = item
