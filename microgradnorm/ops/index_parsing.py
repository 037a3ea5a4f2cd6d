"""How torch reads an index, ``x[index]`` and ``x[index] = value``, before NumPy runs it.

``parsed`` takes the parts one by one: a 0-d integer tensor or NumPy array is an int (a
view, as torch's), a uint8 tensor or array is a deprecated bool mask (torch's UserWarning),
an index tensor of another dtype than int64, int32, uint8 or bool is torch's IndexError, a
NumPy array or a list of numbers is an int64 index (floats truncated, as torch converts
them), and a list that holds a sequence, a tensor, a slice, ``...`` or None is read as a
tuple (torch's deprecated NumPy heuristic, with its warning). It then finds where torch
places the result dims of integer arrays otherwise than NumPy (``split``)."""

import functools
import numbers
import warnings

import numpy as np

from .. import dtypes
from ..backend import warn_once
from .. import tensor as _tensor
from ..autograd.tape import active_tape
from .base import raw

_INDEX_DTYPES = tuple(np.dtype(t) for t in (np.int64, np.int32, np.uint8, np.bool_))
_LONG, _BOOL = _INDEX_DTYPES[0], _INDEX_DTYPES[3]
_BYTE_MASK = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
              "torch.bool instead.")
_SEQUENCE = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will "
             "be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 "
             "this will be interpreted as tensor index, x[torch.tensor(seq)], which will "
             "result either in an error or a different result")


_READ = object()      # parsed's value when the index is read (x[index]), not written


def parsed(index, value=_READ):
    """``(index, split)`` in one pass over the index's parts: ``index`` with each part as
    torch reads it (the module's docstring; empty lists as empty int64 arrays, where NumPy
    would read a float array), and ``split``, ``(ints, rest)`` where torch reads it otherwise
    than NumPy (else None): torch selects an index's ints first and places the arrays'
    result dims by the arrays alone, where NumPy counts the ints among the arrays.
    ``x[0, :, [1, 2]]`` of a (1, 3, 4) x is (3, 2) in torch, (2, 3) in NumPy:
    ``x[ints][rest]``, ``x[0][:, [1, 2]]``, is torch's. A slice stepping by 0 or backwards
    is torch's ValueError (``x[::-1]``: ``flip`` reverses). Given the ``value`` of
    ``x[index] = value``, a uint8 mask met is first checked by ``byte_mask_fill``."""
    kind = type(index)
    if kind is int or kind is slice or index is Ellipsis or index is None:
        _check_step(index)                    # the common one-part indices: nothing to read
        return index, None
    setting = None if value is _READ else (index, value)
    if kind is not tuple:
        if kind is _tensor.Tensor or not _sequence_as_tuple(index):   # one part (x[ids])
            return _part(index, 4, setting), None
        warnings.warn(_SEQUENCE, UserWarning, stacklevel=3)
        index = tuple(index)
    parts, kinds = [], []
    for part in index:
        if type(part) is slice:
            _check_step(part)
        elif part is not None and part is not Ellipsis and type(part) is not int:
            part = _part(part, 4, setting)
        parts.append(part)
        kinds.append(_kind(part))
    index = tuple(parts)
    if "int" not in kinds or "array" not in kinds:
        return index, None
    return index, _ints_first(parts, kinds)


def _sequence_as_tuple(index):
    # torch's (NumPy's old) rule: a short non-tuple sequence holding a sequence, a tensor,
    # a slice, ``...`` or None is a tuple of parts
    if not isinstance(index, (list, range, str)) or len(index) >= 32:
        return False
    return any(isinstance(part, (list, tuple, range, str, np.ndarray, _tensor.Tensor, slice))
               or part is None or part is Ellipsis for part in index)


def _part(part, stacklevel, setting=None):
    """One part of an index as torch reads it (the module's docstring); ``stacklevel``
    names the user's line for the warning, counted from here; ``setting``, ``(index,
    value)`` of a write, is checked by ``byte_mask_fill`` where the part is a uint8 mask."""
    if isinstance(part, _tensor.Tensor):
        dtype = part._array.dtype
        if (dtype is _LONG or dtype is _BOOL) and part._array.ndim:   # the common ones, as given
            return part
        if part.ndim == 0 and dtype.kind in "iu" and dtype != np.uint8 \
                and active_tape() is None:   # recorded by a capture: an argument, kept
            return int(part.item())
        if dtype == np.uint8:                 # (0-d: a bool scalar, without the warning)
            if part.ndim:
                _byte_mask(setting, stacklevel + 1)
            return part != 0
        if dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors"
                             f", got {dtypes.torch_name(dtype)}")
        return part
    if isinstance(part, list):
        if not part:                          # torch's x[[]]: NumPy would read float64
            return np.zeros(0, np.int64)
        part = np.asarray(part)
    if type(part) is np.ndarray:
        if part.dtype == np.uint8:
            if part.ndim:
                _byte_mask(setting, stacklevel + 1)
            return part != 0
        if part.dtype.kind in "fiu" and part.dtype != np.int64:
            with np.errstate(invalid="ignore"):
                part = part.astype(np.int64)  # torch reads any numbers as int64 positions
        return int(part) if part.ndim == 0 and part.dtype.kind == "i" else part
    if isinstance(part, str):
        raise TypeError(f"new(): invalid data type 'str' (an index of {part!r})")
    if isinstance(part, np.bool_):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                         "byte Variables are valid indices (got numpy.bool)")
    return part


def _byte_mask(setting, stacklevel):
    # a uint8 mask met: torch's error where a write takes it as masked_fill_, else its warning
    if setting is not None:
        byte_mask_fill(*setting)
    warnings.warn(_BYTE_MASK, UserWarning, stacklevel=stacklevel)


def byte_mask_fill(index, value, shape=None):
    """torch's error for ``x[mask] = v`` where the only index tensor is a uint8 mask and
    ``v`` has one element: torch writes that through ``masked_fill_``, which takes bool
    masks only (a RuntimeError); a value of several elements is written by the mask. Given
    the indexed ``shape`` (``index_put``'s tuple of tensors), a mask of another shape than
    the dims it covers is torch's IndexError first."""
    kind = type(index)                        # no byte mask: the common cases, checked first
    if kind is int or kind is slice or index is None or index is Ellipsis or \
            isinstance(index, _tensor.Tensor) and index._array.dtype.char != "B":  # uint8's
        return
    parts = tuple(index) if type(index) is tuple or _sequence_as_tuple(index) else (index,)
    if not any(_dtype(p) == np.uint8 for p in parts
               if isinstance(p, (_tensor.Tensor, np.ndarray, list))):
        return
    tensors = [p for p in parts if isinstance(p, (_tensor.Tensor, np.ndarray, list, bool))
               and not (np.ndim(raw(p)) == 0 and _dtype_kind(p) in "iuf")]
    if len(tensors) != 1 or _dtype(tensors[0]) != np.uint8 or np.ndim(raw(tensors[0])) == 0:
        return
    if np.size(raw(value)) != 1:
        return
    mask = raw(tensors[0])
    if shape is not None:
        start = sum(np.ndim(raw(p)) if _dtype_kind(p) == "b" or _dtype(p) == np.uint8 else 1
                    for p in parts[:next(i for i, p in enumerate(parts) if p is tensors[0])])
        if tuple(mask.shape) != tuple(shape[start:start + mask.ndim]):
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index 0 does not "
                             f"match the shape of the indexed tensor {list(shape)} at index "
                             f"{start}")
    raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                       "unsigned char")


def views_first(index):
    """Whether torch reads ``index`` (``parsed``'s) by taking a view first: an int, a slice,
    None or a bool among its parts (``x[0] = v`` writes through ``x[0]``, where ``x[...]``
    and ``x[ids]`` write into x itself)."""
    parts = index if type(index) is tuple else (index,)
    return any(part is None or type(part) in (int, slice, bool) or isinstance(part, np.integer)
               for part in parts)


def _dtype(part):
    data = raw(part)
    return data.dtype if hasattr(data, "dtype") else np.asarray(data).dtype


def _dtype_kind(part):
    return _dtype(part).kind


def _ints_first(parts, kinds):
    # parsed's split of an index with ints and arrays, or None where NumPy reads it as torch
    if not _split_needed(tuple(kinds)):
        return None
    ints, rest = [], []
    for part, kind in zip(parts, kinds):
        if kind == "int" or part is Ellipsis:
            ints.append(part)
        elif part is not None:      # the dims a part spans: a bool mask its own, else one
            ints.extend([slice(None)] * (_span(part) if kind == "array" else 1))
        if kind != "int":
            rest.append(part)
    return tuple(ints), tuple(rest)


@functools.lru_cache(maxsize=256)
def _split_needed(kinds):
    # False where NumPy places the arrays' dims as torch does: the ints and arrays side by
    # side, an array first of the other parts, or arrays apart (first, in both)
    advanced = [i for i, kind in enumerate(kinds) if kind != "basic"]
    others = [i for i, kind in enumerate(kinds) if kind != "int"]
    arrays = [n for n, i in enumerate(others) if kinds[i] == "array"]
    return not (advanced[-1] - advanced[0] + 1 == len(advanced) or arrays[0] == 0
                or arrays[-1] - arrays[0] + 1 != len(arrays))


def _kind(part):
    if part is None or part is Ellipsis or type(part) is slice:
        return "basic"
    return "int" if type(part) is int or isinstance(part, np.integer) else "array"


def _span(part):
    return np.ndim(raw(part)) if _is_mask(part) else 1


def _is_mask(part):
    return _dtype_kind(part) == "b"


def _check_step(part):
    if type(part) is slice and part.step is not None and part.step <= 0:
        raise ValueError("step must be greater than zero" if part.step else
                         "slice step cannot be zero")


SELECT, SLICE, UNSQUEEZE, INDEX, ALIAS = range(5)       # torch's ops of indexing
_ALL = slice(None)


def last_op(index):
    """The op torch applies last for ``x[index]`` (``index`` parsed), which names its node:
    torch indexes by a chain of one op per part, left to right (``:`` and ``...`` skipped),
    the arrays last. An int's SELECT, a slice's SLICE (as x[:]), None's UNSQUEEZE, any array's
    INDEX; of a tuple, the part that is last (none: ALIAS, x itself)."""
    kind = index.__class__
    if kind is int:                             # x[0], the common cases first
        return SELECT
    if kind is slice:
        return SLICE
    if kind is not tuple:
        return UNSQUEEZE if index is None else ALIAS if index is Ellipsis else SELECT \
            if isinstance(index, numbers.Integral) else INDEX
    op = ALIAS
    for part in index:
        if part is Ellipsis or part.__class__ is slice and part == _ALL:
            continue
        if part is None:
            op = UNSQUEEZE
        elif part.__class__ is slice:
            op = SLICE
        elif isinstance(part, numbers.Integral):
            op = SELECT
        else:
            return INDEX                        # arrays: torch's index op, applied last
    return op


__all__ = ["byte_mask_fill", "last_op", "parsed", "views_first", "warn_once"]
