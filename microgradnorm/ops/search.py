"""Index constants, outside the graph: ``argwhere``, ``unique``, ``bincount``,
``searchsorted``, ``bucketize`` and ``isin``, as PyTorch defines them (integer or bool
results; ``unique``'s values are a copy, without a gradient).

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import numbers
import warnings

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..dtypes import sortable
from ..meta_arrays import refuse_values
from .base import AxisError, check_tensor, constant, normalize_axis, result_dtype
from .indexing import index_array

METHODS = ("argwhere", "unique", "bincount")


def argwhere(input):
    """``torch.argwhere``: the int64 (n, input.ndim) indices of the nonzero elements (NaN
    counts), a row each in row-major order; a constant.

    Example:
        >>> mg.argwhere(mg.tensor([[0, 1], [2, 0]]))                # [[0, 1], [1, 0]]
    """
    check_tensor("argwhere", input)
    refuse_values("argwhere", input._array)
    return constant(input.xp.argwhere(input._array).astype(np.int64))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """``torch.unique``: the distinct elements of input, sorted (or the distinct slices along
    ``dim``, in lexicographic order); a constant. NaNs are never equal: each is its own
    value, last. ``sorted=False`` sorts too (torch leaves that order unspecified).

    Args:
        input: the tensor.
        return_inverse: also return, for each element (each slice), the int64 index of its
            value in the output; input's shape (``dim``'s size).
        return_counts: also return how many times each value occurs, int64.
        dim: None (every element, flattened) or the dim whose slices are compared.

    Returns: the values, or a tuple with the inverse and/or the counts after them.

    Example:
        >>> values, counts = mg.tensor([3, 1, 3]).unique(return_counts=True)   # [1, 3], [1, 2]
    """
    check_tensor("unique", input)
    refuse_values("unique", input._array)
    xp, data = input.xp, input._array
    if dim is None:
        rows = data.reshape(-1, 1)
    else:
        axis = normalize_axis("unique", dim, input.ndim, single=True)
        if input.ndim == 0:
            raise AxisError(f"unique(): dim {dim} given, but the tensor is 0-d")
        _check_empty_dims(data.shape, axis)
        rows = xp.moveaxis(data, axis, 0)
        rows = rows.reshape(len(rows), int(np.prod(rows.shape[1:])))    # (slices, elements)
    order = xp.lexsort(sortable(rows).T[::-1]) if rows.shape[1] else xp.arange(len(rows))
    ordered = rows[order]
    starts = xp.ones(len(rows), bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)      # NaN != NaN: a new value
    if dim is None:
        values = ordered[starts].reshape(-1)
    else:
        picked = xp.moveaxis(data, axis, 0)[order[starts]]
        values = xp.moveaxis(picked, 0, axis)
    results = [constant(xp.ascontiguousarray(values))]
    if return_inverse:
        inverse = xp.empty(len(rows), np.int64)
        inverse[order] = xp.cumsum(starts) - 1
        results.append(constant(inverse.reshape(data.shape if dim is None else -1)))
    if return_counts:
        bounds = xp.append(xp.flatnonzero(starts), len(rows))
        results.append(constant(xp.diff(bounds).astype(np.int64)))
    return results[0] if len(results) == 1 else tuple(results)


def _check_empty_dims(shape, axis):
    # torch's unique over a dim compares slices: a size-0 dim may only be the one chosen
    empty = shape.count(0)
    if empty > 1 or empty and shape[axis]:
        raise RuntimeError("unique(): there are 0 sized dimensions, and they aren't selected "
                           "(or more than one), so unique cannot be applied")


def bincount(input, weights=None, minlength=0):
    """``torch.bincount``: how many times each value 0..max occurs in the 1-D non-negative
    integer input (int64), or the sum of ``weights`` at its places (float64; float32 for
    float32 weights; int64 zeros for an empty input); at least ``minlength`` long. A constant.

    Example:
        >>> mg.bincount(mg.tensor([1, 1, 3]))                       # tensor([0, 2, 0, 1])
    """
    check_tensor("bincount", input)
    refuse_values("bincount", input._array)
    data = input._array
    if data.dtype.kind not in "iu":
        raise NotImplementedError(f"bincount: not implemented for {data.dtype} tensors")
    if data.ndim != 1 or data.size and int(data.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if isinstance(minlength, bool) or not isinstance(minlength, numbers.Integral) \
            or minlength < 0:
        raise RuntimeError(f"bincount: minlength must be an int >= 0, got {minlength!r}")
    given = None if weights is None else check_tensor("bincount", weights)._array
    if given is None or not data.size:      # no input: int64 zeros whatever the weights
        return constant(input.xp.bincount(data, minlength=minlength).astype(np.int64))
    if given.ndim != 1 or len(given) != len(data):
        raise RuntimeError("bincount: weights should be 1-d and have the same length as input")
    if given.dtype.kind == "c":                   # torch's cast, with its warning
        warnings.warn("bincount: casting complex weights to real discards the imaginary "
                      "part", UserWarning, stacklevel=2)
        given = given.real
    out = input.xp.bincount(data, given.astype(np.float64), minlength=minlength)
    return constant(out.astype(given.dtype if given.dtype == np.float32 else np.float64))


def _searched(fn, input, like):
    # a Python number becomes a 0-d array in the dtype torch gives it beside ``like``
    if isinstance(input, _tensor.Tensor):
        return input._array
    if isinstance(input, numbers.Real) and not isinstance(input, bool):
        return _tensor.as_tensor(input, like)._array
    raise TypeError(f"{fn}(): input must be a Tensor or a number, got {type(input).__name__}")


def _in_common_dtype(fn, a, b):
    # a and b (arrays) cast to torch's result type of the two, for comparing their values
    dtype = result_dtype(a, b)
    if dtype.kind in "bc":
        raise NotImplementedError(f"{fn}(): not implemented for {dtype} inputs")
    with backend.silent_floats():               # 1e10 in float16: inf, silently, as torch's
        return a.astype(dtype, copy=False), b.astype(dtype, copy=False)


def _binary_search(boundaries, values, right):
    # torch's search (cus_lower_bound / cus_upper_bound), all values at once: the first
    # place whose boundary is >= the value (right: >). A comparison with NaN is false, so
    # a NaN value goes past every boundary and a NaN boundary counts as smaller.
    # boundaries: (n,) or (..., n); values: any shape, or (..., k) beside (..., n)
    xp, n = backend.array_module(boundaries), boundaries.shape[-1]
    low = xp.zeros(values.shape, np.int64)
    high = xp.full(values.shape, n, np.int64)
    while True:
        active = low < high
        if not active.any():
            return low
        middle = (low + high) // 2
        place = xp.minimum(middle, n - 1)
        found = boundaries[place] if boundaries.ndim == 1 else \
            xp.take_along_axis(boundaries, place, axis=-1)
        after = ~(found > values) if right else ~(found >= values)
        low = xp.where(active & after, middle + 1, low)
        high = xp.where(active & ~after, middle, high)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """``torch.searchsorted``: for each value of input, the index in ``sorted_sequence`` (the
    last dim of it) where inserting the value keeps the order: the first place with a value
    >= it (``right=True`` or ``side="right"``: >), by torch's binary search, so a NaN value
    goes after every boundary and a NaN boundary counts as smaller than any value. Both are
    compared in their promoted dtype (a number in the sequence's). A constant.

    Args:
        sorted_sequence: 1-D, or N-D whose first N - 1 dims are input's (a sequence a row).
        input: a tensor or a number (a 0-d result).
        out_int32: an int32 result instead of int64.
        right, side: the side ties go to ("left" or "right"; given both, they must agree).
        sorter: int64 indices that sort ``sorted_sequence`` along its last dim (its shape).

    Example:
        >>> mg.searchsorted(mg.tensor([1.0, 3.0, 5.0]), mg.tensor([3.0, 4.0]))   # [1, 2]
    """
    boundaries = check_tensor("searchsorted", sorted_sequence)._array
    values = _searched("searchsorted", input, sorted_sequence)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"searchsorted(): side can only be 'left' or 'right', got "
                               f"{side!r}")
        if right and side == "left":
            raise RuntimeError("searchsorted(): side and right can't be set to opposites")
        right = side == "right"
    if boundaries.ndim == 0:
        raise RuntimeError("searchsorted(): boundaries tensor should have positive dimension")
    if boundaries.ndim > 1 and (values.ndim != boundaries.ndim
                                or values.shape[:-1] != boundaries.shape[:-1]):
        raise RuntimeError(f"searchsorted(): boundaries of shape {boundaries.shape} must be "
                           f"1-D or match input's first N - 1 dims, input {values.shape}")
    if sorter is not None:
        order = index_array("searchsorted", check_tensor("searchsorted", sorter),
                            sorted_sequence, long_only=True)
        if order.shape != boundaries.shape:
            raise RuntimeError(f"searchsorted(): boundary and sorter must have the same size, "
                               f"got {boundaries.shape} and {order.shape}")
        if order.size and not 0 <= int(order.min()) <= int(order.max()) < order.shape[-1]:
            raise RuntimeError("searchsorted(): sorter index out of range")
        boundaries = sorted_sequence.xp.take_along_axis(boundaries, order, axis=-1)
    boundaries, values = _in_common_dtype("searchsorted", boundaries, values)
    out = _binary_search(boundaries, values, bool(right))
    return constant(out.astype(np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """``torch.bucketize``: the bucket of each value of input among the 1-D sorted
    ``boundaries``, i with ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``:
    ``boundaries[i-1] <= x < boundaries[i]``); ``searchsorted(boundaries, input)``.

    Example:
        >>> mg.bucketize(mg.tensor([0.5, 3.0]), mg.tensor([1.0, 3.0, 5.0]))   # [0, 1]
    """
    if check_tensor("bucketize", boundaries).ndim != 1:
        raise RuntimeError(f"bucketize(): boundaries tensor must be 1 dimension, got shape "
                           f"{boundaries.shape}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements=None, test_elements=None, *, assume_unique=False, invert=False,
         element=None, test_element=None):
    """``torch.isin``: True where an element of ``elements`` is among ``test_elements``
    (``invert``: is not), in elements' shape; either may be a number (typed as torch types
    it beside the tensor; by keyword ``element=`` and ``test_element=``, torch's names for a
    number). Both are compared in their promoted dtype; NaN is in nothing. A constant.

    Example:
        >>> mg.isin(mg.tensor([1, 2, 3]), mg.tensor([2, 5]))   # [False, True, False]
    """
    elements = element if elements is None else elements
    test_elements = test_element if test_elements is None else test_elements
    like = elements if isinstance(elements, _tensor.Tensor) else test_elements
    check_tensor("isin", like)
    arrays = [_tensor.as_tensor(v, like)._array for v in (elements, test_elements)]
    if any(a.dtype.kind in "bc" for a in arrays):
        raise RuntimeError(f"isin(): bool and complex inputs are not supported, got "
                           f"{arrays[0].dtype} and {arrays[1].dtype}")
    arrays = _in_common_dtype("isin", *arrays)
    found = like.xp.isin(arrays[0], arrays[1], assume_unique=bool(assume_unique),
                         invert=bool(invert))
    return constant(like.xp.asarray(found))
