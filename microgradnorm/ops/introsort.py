"""The order C++'s ``std::sort`` (GCC's libstdc++, which PyTorch's CPU builds use) leaves a
sequence in, for the ops whose results depend on it: ``torch.mode`` sorts each slice's
``(value, index)`` pairs by value with ``std::sort`` and reports the index of the last pair
of the longest run, so which of tied elements it names follows that sort's moves.

``std::sort`` is an introsort: quicksort partitions around a median of three until a part
holds 16 or fewer elements (or the depth budget, 2·log2(n), runs out: that part is
heap-sorted), then one insertion sort over the whole sequence. It is not stable, and a NaN,
which compares false against everything, stays where the moves leave it. Each step below
is the library's, on a Python list, comparing values with ``<`` only.
"""

_THRESHOLD = 16                       # parts this small are left to the insertion sort


def introsort_order(values):
    """The indices of ``values`` (a list) in the order ``std::sort`` with ``a < b`` leaves
    them: ``[i for i in introsort_order(v)]`` reads ``v`` as the sorted sequence.

    Example:
        >>> introsort_order([2.0, 1.0, 2.0])                  # [1, 0, 2]
    """
    items = [(value, i) for i, value in enumerate(values)]
    if len(items) > 1:
        _introsort_loop(items, 0, len(items), 2 * (len(items).bit_length() - 1))
        _final_insertion_sort(items, len(items))
    return [i for _, i in items]


def _introsort_loop(items, first, last, depth):
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(items, first, last)
            return
        depth -= 1
        cut = _partition_around_median(items, first, last)
        _introsort_loop(items, cut, last, depth)
        last = cut


def _partition_around_median(items, first, last):
    # the median of items[first + 1], the middle one and the last moves to ``first``,
    # the pivot; then the two scans meet (neither needs a bound: the pivot stops them)
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    va, vb, vc = items[a][0], items[b][0], items[c][0]
    if va < vb:
        median = b if vb < vc else c if va < vc else a
    else:
        median = a if va < vc else c if vb < vc else b
    items[first], items[median] = items[median], items[first]
    pivot = items[first][0]
    low, high = first + 1, last
    while True:
        while items[low][0] < pivot:
            low += 1
        high -= 1
        while pivot < items[high][0]:
            high -= 1
        if low >= high:
            return low
        items[low], items[high] = items[high], items[low]
        low += 1


def _final_insertion_sort(items, n):
    # the first 16 with a bound at the front, the rest unbounded (a smaller element sits
    # in the first 16 after partitioning; a NaN can break that, so index 0 still stops)
    for i in range(1, min(n, _THRESHOLD)):
        if items[i][0] < items[0][0]:
            items.insert(0, items.pop(i))
        else:
            _linear_insert(items, i)
    for i in range(_THRESHOLD, n):
        _linear_insert(items, i)


def _linear_insert(items, last):
    item = items[last]
    while last > 0 and item[0] < items[last - 1][0]:
        items[last] = items[last - 1]
        last -= 1
    items[last] = item


def _heap_sort(items, first, last):
    # make_heap, then pop the largest to the back until one is left (libstdc++'s
    # __partial_sort over the whole range)
    n = last - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(items, first, parent, n, items[first + parent])
    while n > 1:
        n -= 1
        item = items[first + n]
        items[first + n] = items[first]
        _adjust_heap(items, first, 0, n, item)


def _adjust_heap(items, first, hole, n, item):
    # Floyd's repair of the heap items[first:first + n] whose slot ``hole`` is empty: the
    # hole walks down to a leaf, each time into the larger child (the right one on a tie),
    # then ``item`` climbs from there while its parent is smaller
    top = hole
    while 2 * hole + 2 < n:                              # both children there
        child = 2 * hole + 2
        if items[first + child][0] < items[first + child - 1][0]:
            child -= 1
        items[first + hole] = items[first + child]
        hole = child
    if 2 * hole + 2 == n:                                # a left child only, the last slot
        items[first + hole] = items[first + n - 1]
        hole = n - 1
    while hole > top and items[first + (hole - 1) // 2][0] < item[0]:
        items[first + hole] = items[first + (hole - 1) // 2]
        hole = (hole - 1) // 2
    items[first + hole] = item
