"""How ``mg.tensor``, ``Tensor(...)``, ``as_tensor``, ``asarray`` and ``from_numpy`` read
their data as torch reads it: the dtype nested Python numbers and NumPy scalars infer, Python
ints past int64, ragged lists, the NumPy arrays no tensor holds, and the legacy constructor's
sizes-or-data forms, each with torch's error."""

import numpy as np

from .dtypes import (bfloat16, complex64, float32, get_default_dtype, index_of, int64,
                     is_dtype)

__all__ = ["check_array", "check_python_ints", "converted_ints", "inferred_float",
           "legacy_data", "ragged_error", "torch_readable"]

_SCALARS = frozenset((float, int, bool, complex))


def inferred_float(data):
    """torch's dtype for a Python number or nested lists holding floats or complex numbers:
    a Python float counts as the default dtype, a NumPy scalar as its own, and a Python
    complex as complex64 beside them (``[np.float64(1.0)]`` is float64, ``[1.0]`` float32,
    ``[1j]`` complex64); a 0-d tensor as its dtype (``[mg.tensor(1.5, dtype=float64), 1]`` is
    float64)."""
    kinds, pending = set(), [data]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is list or kind is tuple:
            pending.extend(item)
        elif kind in _SCALARS or isinstance(item, np.generic):   # by type: the common case
            kinds.add(kind)
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
        elif is_dtype(getattr(item, "dtype", None)):  # a tensor (or an array)
            kinds.add(item.dtype.type)
        else:
            kinds.add(kind)
    found = [np.dtype(k) for k in kinds
             if issubclass(k, np.inexact) or (bfloat16 is not None and k is bfloat16.type)]
    if kinds <= {int, bool}:            # NumPy's float64 of ints past int64: torch's error
        check_python_ints(data, int64)
    if not found or any(issubclass(k, (float, complex)) and not issubclass(k, np.inexact)
                        for k in kinds):
        found.append(get_default_dtype())
    return np.result_type(*found, *{complex64 for k in kinds if issubclass(k, complex)})


_INT64 = 1 << 63


def check_python_ints(data, dtype=None):
    """Raise torch's ValueError where ``torch.tensor(data)`` reads a Python int of ``data``
    (nested lists) as an int64 it does not fit: with no ``dtype`` (the ints' own int64, but
    not beside a float or complex number: then the default dtype, returned), or an integer
    one other than uint64. A bool dtype and the floating ones take any int. Returns None or
    that dtype."""
    if dtype is not None and (dtype.kind not in "iu" or dtype == np.uint64):
        return None
    pending, wide = [data], None
    while pending:
        item = pending.pop()
        if isinstance(item, (list, tuple)):
            pending.extend(item)
        elif dtype is None and isinstance(item, (float, complex)):
            return inferred_float(data)
        elif type(item) is int and not -_INT64 <= item < _INT64:
            wide = item
    if wide is not None:
        raise ValueError(f"Overflow when unpacking long long: {wide} (torch.tensor reads a "
                         "Python int as an int64; give a floating dtype for it)")
    return None


def ragged_error(data):
    """torch's error for nested lists that hold no array (NumPy refused them), or None: the
    sizes come from the first item of each level, and an item where a number should be is
    a TypeError, a number where a list should be a TypeError, a list of another length a
    ValueError, each naming where."""
    sizes, first = [], data
    while isinstance(first, (list, tuple)):
        sizes.append(len(first))
        if not first:
            break
        first = first[0]
    pending = [(data, 0)]
    while pending:
        item, dim = pending.pop()
        sequence = isinstance(item, (list, tuple))
        if dim == len(sizes):
            if sequence:
                return TypeError(f"expected a number at dim {dim}, got a "
                                 f"{type(item).__name__} of length {len(item)}")
        elif not sequence:
            return TypeError(f"expected a sequence at dim {dim}, got "
                             f"{type(item).__name__} {item!r} (not a sequence)")
        elif len(item) != sizes[dim]:
            return ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                              f"(got {len(item)})")
        else:
            pending.extend((child, dim + 1) for child in item)
    return None


def converted_ints(data, dtype):
    """Python numbers (nested lists of them) for the integer ``dtype`` as ``torch.tensor``
    converts them (c10's checked conversion) where NumPy refuses them: a float is truncated
    where the dtype holds it, an int an unsigned dtype holds down to -max wraps (-4 is 252 in
    uint8); an int past int64 is torch's ValueError, NaN, inf and anything else past the
    range its RuntimeError. (A float past the range by less than 1, 255.5 for uint8, NumPy
    truncates without a word: torch refuses it.)"""
    if isinstance(data, (list, tuple)):
        return [converted_ints(item, dtype) for item in data]
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        return data
    check_python_ints(data, dtype)
    info = np.iinfo(dtype)
    low = -int(info.max) if dtype.kind == "u" and isinstance(data, int) else int(info.min)
    if not ((type(data) is int or np.isfinite(data)) and low <= data <= info.max):
        raise RuntimeError(f"value {data} cannot be converted to type {dtype} without "
                           "overflow")
    span = 1 << 8 * dtype.itemsize
    return (int(data) - int(info.min)) % span + int(info.min)


def torch_readable(data, dtype, error):
    """``data`` (Python numbers, nested lists, 0-d tensors) in a form NumPy writes into
    ``dtype`` as ``torch.tensor`` reads it, where NumPy refused it with ``error``; else the
    error torch raises (ragged lists: ``ragged_error``; ``error`` itself where torch's is
    NumPy's). A number bfloat16 cannot take from NumPy (an int past int64, a tensor) goes
    through float32, as c10 rounds a double into bfloat16."""
    if isinstance(data, (list, tuple)) and isinstance(error, ValueError):
        ragged = ragged_error(data)
        if ragged is not None:
            raise ragged from None
    if isinstance(data, (list, tuple, int, float)) and dtype is not None and \
            dtype.kind in "iu" and isinstance(error, (OverflowError, ValueError)):
        return converted_ints(data, dtype)
    if dtype is not None and dtype == bfloat16 and isinstance(error, TypeError):
        return np.asarray(data, dtype=float32)
    raise error


# the NumPy dtype kinds no tensor holds (torch's TypeError): objects, bytes and str, records
# and raw bytes, dates and durations
_UNREADABLE_KINDS = {"O": "object", "S": "bytes", "U": "str", "V": "structured or void",
                     "M": "datetime64", "m": "timedelta64"}


def check_array(fn, array):
    """Raise torch's error for a NumPy array no tensor can be made of, as ``torch.tensor``,
    ``torch.Tensor``, ``as_tensor``, ``asarray`` and ``from_numpy`` refuse it whatever dtype
    is asked for: a TypeError for an object, bytes, str, structured, void, datetime64 or
    timedelta64 array; a ValueError for one in non-native byte order (``dtype=">f8"`` on a
    little-endian machine: ``array.astype(array.dtype.newbyteorder("="))`` converts it) or
    with a negative stride (``a[::-1]``: its storage has none; ``array.copy()``). Nothing
    for other data.

    Args:
        fn: the name the error starts with (``"tensor"``, ``"from_numpy"``, ...).
        array: the data given; only a NumPy array is checked.

    Example:
        >>> check_array("tensor", np.array(["a"]))     # TypeError, as torch.tensor's
    """
    if not isinstance(array, np.ndarray):
        return
    dtype = array.dtype
    if dtype.kind in _UNREADABLE_KINDS and dtype != bfloat16:   # (ml_dtypes' kind is "V")
        raise TypeError(f"{fn}: can't convert a NumPy array of dtype {dtype} "
                        f"({_UNREADABLE_KINDS[dtype.kind]}): a tensor holds bool, integer, "
                        "floating-point or complex numbers only")
    if not dtype.isnative:
        raise ValueError(f"{fn}: the NumPy array's byte order ({dtype.str}) is not the "
                         f"machine's: convert it first "
                         f"(array.astype(array.dtype.newbyteorder('=')))")
    for stride in array.strides:
        if stride < 0:
            raise ValueError(f"{fn}: the array's strides {array.strides} hold a negative one "
                             "(a reversed view such as a[::-1]), and tensors with negative "
                             "strides are not supported; pass a copy (array.copy())")


def legacy_data(data, sizes):
    """What torch's legacy constructor ``torch.Tensor(*args)`` reads, as ``Tensor`` then
    takes it: ints (or one ``Size``) are a shape, given zeros in the default dtype (torch's
    are uninitialised); a list or tuple of ints, bools or floats (NumPy arrays of any float
    dtype among them) is data in the default dtype (other data is returned as it is). A size
    that is not an int raises TypeError, a negative one RuntimeError, as torch's: a bool is a
    size after the first (``Tensor(2, True)`` is (2, 1)), an integer NumPy scalar or 0-d
    integer Tensor is its int, and a bool or float alone (a NumPy one too) is no data
    (TypeError). A NumPy array is checked as ``mg.tensor``'s (``check_array``)."""
    if data.__class__ is np.ndarray and not sizes:
        check_array("Tensor()", data)
        return data
    if not sizes and (data.__class__ in (bool, float)
                      or isinstance(data, (np.bool_, np.floating))):
        raise TypeError(f"Tensor(): data must be a sequence or sizes, got "
                        f"{type(data).__name__} {data!r}")
    if sizes or isinstance(data, (int, np.integer)) or (
            isinstance(data, tuple) and type(data) is not tuple):
        shape = ((data,) + sizes) if sizes or isinstance(data, (int, np.integer)) else \
            tuple(data)
        shape = tuple(index_of(n) for n in shape)        # tensor(3): 3
        for i, n in enumerate(shape):
            if not isinstance(n, (int, np.integer)) or isinstance(n, np.bool_) or (
                    n.__class__ is bool and i == 0):
                raise TypeError(f"Tensor(): expected sizes (ints) or one sequence of data, got "
                                f"{shape}")
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                                   f"{[int(k) for k in shape]}")
        return np.zeros(tuple(int(n) for n in shape), get_default_dtype())
    try:
        array = np.asarray(data)
    except ValueError:                  # ragged: Tensor's own reading raises torch's error
        return data
    if array.dtype.kind not in "iubf":
        return data
    with np.errstate(over="ignore"):    # ints, bools and floats ([float64 array, ...] too) in
        return array.astype(get_default_dtype())    # the default dtype; 1e40: inf, as torch's
