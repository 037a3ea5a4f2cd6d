"""Memory formats (``torch.memory_format``): the order in which a tensor's elements lie in
memory, read from its strides as torch reads them, and the copies that change it.

A channels-last (N, C, H, W) tensor here is an (N, H, W, C) array viewed as (N, C, H, W):
its strides in elements are (HWC, 1, WC, C), what torch's ``stride()`` gives for the same
tensor (``channels_last_3d``: an (N, D, H, W, C) array viewed as (N, C, D, H, W)). Nothing
stores a format; each question is answered from the strides by torch's rules (c10's
``MemoryFormat.h`` and ``TensorImpl``):

* ``is_contiguous(memory_format=f)``: the strides are exactly f's, a size-1 dim's free;
* ``suggest_memory_format``: the strides sort as channels-last ones do (a slice of a
  channels-last tensor too), what ``to``, the convolutions and the poolings follow;
* a ``preserve_format`` copy (``clone``, ``to``, ``empty_like``, the ``*_like`` factories)
  keeps a dense tensor's order and gives any other the dense order of its strides (torch's
  ``infer_dense_strides``).

A copy to a format is one node whose backward hands the gradient on unchanged: ``Clone``
(``contiguous``, ``clone``, ``to`` without a new dtype) or ``ToCopy`` (``to`` with one), told
the order of the dims in memory, outermost first (``(0, 2, 3, 1)`` for channels-last). The
values never change, nor do the gradients; a leaf's ``.grad`` takes the leaf's layout
(the engine's accumulation, torch's layout contract).

``METHODS`` names what ``ops/methods.py`` binds as ``Tensor`` methods."""

import numpy as np

from .. import backend, dtypes
from ..meta_arrays import meta_array
from .. import tensor as _tensor
from ..generator import dense_order
from .base import copy_in_order, empty_in_order, row_major_strides
from ..autograd.graph import node_alias
from .elementwise import Cast, Clone
from .storage import (channels_last, channels_last_3d, contiguous_format, memory_format,
                      preserve_format)

__all__ = ["clone", "contiguous", "element_strides", "empty_like_array", "format_order",
           "in_format", "is_contiguous", "suggest_memory_format"]

_RANK = {channels_last: 4, channels_last_3d: 5}        # the dims each channels-last format takes
ToCopy = node_alias(Cast, "ToCopy", module=__name__)   # x.to(dtype), x.float(): ToCopyBackward0


# ----- the strides, as torch reads them -------------------------------------------------------
def element_strides(array):
    """torch's ``stride()`` of ``array``: NumPy's byte strides over the item size, torch's
    value where NumPy has 0 for a dim of size 1 or an empty array (the next dim's extent, as
    a contiguous tensor's)."""
    steps, following = [], 1
    for n, step in zip(reversed(array.shape), reversed(array.strides)):
        step = step // array.itemsize if step or n > 1 and array.size else following
        steps.append(step)
        following = step * max(n, 1)
    return tuple(reversed(steps))


def check_format(fn, value, none_is=None):
    """``value`` if it is a ``mg.memory_format`` (None read as ``none_is`` where the op takes
    None, as torch's ``to`` and ``clone``); else torch's TypeError."""
    if value is None and none_is is not None:
        return none_is
    if not isinstance(value, memory_format):
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(value).__name__}")
    return value


def format_order(form, ndim):
    """The dims of an ``ndim``-dim tensor in format ``form``, outermost first in memory:
    (0, 1, ..., ndim - 1) row-major, (0, 2, 3, 1) channels-last; torch's RuntimeError for a
    channels-last format on a tensor of another rank, or for ``preserve_format``.

    Example:
        >>> format_order(mg.channels_last_3d, 5)                  # (0, 2, 3, 4, 1)
    """
    if form is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    if form in _RANK:
        if ndim != _RANK[form]:
            raise RuntimeError(f"required rank {_RANK[form]} tensor to use {form._name} "
                               "format")
        return (0, *range(2, ndim), 1)
    return tuple(range(ndim))


def _is_contiguous_in(shape, strides, order):
    # c10's compute_(channels_last_)contiguous: the strides of the order, a size-1 dim free
    expected = 1
    for d in reversed(order):                                # innermost first
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _strides_like_channels_last(shape, strides):
    # c10's is_channels_last_strides_2d_s4 / _3d_s5: from C outwards (C, W, H, (D,) N), each
    # stride at least the extent of the dims inside it; ties of a (N, 1, 1, 1)-like tensor
    # are read as row-major
    if strides[1] == 0:
        return False
    least = 0
    for d in (1, *range(len(shape) - 1, 1, -1), 0):
        if shape[d] == 0 or strides[d] < least or d == 0 and least == strides[1]:
            return False
        least = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def suggest_memory_format(array):
    """The format torch suggests for an array of these strides
    (``TensorBase::suggest_memory_format``): ``channels_last`` for a 4-D array whose strides
    sort as channels-last ones (a slice of one too), ``channels_last_3d`` likewise for 5-D,
    else ``contiguous_format``."""
    if array.ndim in (4, 5) and _strides_like_channels_last(array.shape,
                                                           element_strides(array)):
        return channels_last if array.ndim == 4 else channels_last_3d
    return contiguous_format


def _non_overlapping_and_dense(shape, strides):
    # c10's compute_non_overlapping_and_dense: sorted by stride (size 0 and 1 dims last),
    # each the extent of the ones before
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    needed = 1
    for d in sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d])):
        if shape[d] < 2:
            return True
        if strides[d] != needed:
            return False
        needed *= shape[d]
    return True


def _exactly_row_major(array):
    # C-contiguous with each size-1 dim's stride the row-major one too: NumPy's flag (and
    # torch's is_contiguous) frees those strides, where torch's copies keep them
    if not array.flags.c_contiguous:
        return False
    if 1 not in array.shape:                # the usual case: no stride to read
        return True
    return element_strides(array) == row_major_strides(array.shape)


def _kept_order(array):
    # preserve_format for clone and empty_like: a dense array's own order (a size-1 dim
    # inside the dims of its stride, where its stride comes back), else infer_dense_strides'
    if _exactly_row_major(array):           # the usual case, row-major: None, no sorting
        return None
    shape, strides = array.shape, element_strides(array)
    if _non_overlapping_and_dense(shape, strides):
        return sorted(range(array.ndim), key=lambda d: (-strides[d], shape[d] < 2))
    return dense_order(shape, strides)


def _order_for(array, form):
    # where a copy in ``form`` puts the dims (clone, empty_like)
    return _kept_order(array) if form is preserve_format else format_order(form, array.ndim)


def _row_major(order):
    return order is None or list(order) == sorted(order)


def in_format(array, form):
    """``array`` itself where torch's ``to(memory_format=form)`` aliases it (its suggested
    format is ``form``, or ``form`` is ``preserve_format``), else a copy in ``form`` (the
    arrays of ``Module.to(memory_format=)``)."""
    if form is preserve_format or suggest_memory_format(array) is form:
        return array
    return copy_in_order(array, format_order(form, array.ndim))


def empty_like_array(fn, array, dtype, form, device=None):
    """An uninitialised NumPy array of ``array``'s shape in ``dtype``, laid out as torch's
    ``empty_like(input, memory_format=form)`` lays out a tensor of ``array``'s strides
    (``form`` None is ``preserve_format``); a meta array where ``device`` (None: the
    array's) is "meta", which a sampler leaves undrawn."""
    order = _order_for(array, check_format(fn, form, none_is=preserve_format))
    if backend.device_of(array) == "meta" if device is None else device == "meta":
        return meta_array(array.shape, dtype)
    return empty_in_order(np, array.shape, dtype, order)


# ----- the Tensor methods ---------------------------------------------------------------------
def _copy(x, order):
    # one Clone node: row-major as before, or in ``order``
    return Clone.apply(x) if _row_major(order) else Clone.apply(x, order=tuple(order))


def is_contiguous(x, *, memory_format=contiguous_format):
    """True when x's strides are those of ``memory_format`` (row-major by default), a size-1
    dim's stride free, as torch reads them: a transpose or an expanded view is not; a
    channels-last format asked of a tensor of another rank is False
    (``torch.Tensor.is_contiguous``).

    Example:
        >>> y = mg.ones(2, 3, 4, 5).to(memory_format=mg.channels_last)
        >>> y.is_contiguous(), y.is_contiguous(memory_format=mg.channels_last)  # False, True
    """
    if memory_format is contiguous_format:                       # the usual call, first
        return bool(x._array.flags.c_contiguous)
    form = check_format("is_contiguous", memory_format)
    if form is contiguous_format or form is preserve_format:      # (torch reads it as row-major)
        return bool(x._array.flags.c_contiguous)
    if x.ndim != _RANK.get(form, x.ndim):
        return False
    if x._array.size == 0:                  # no element to place: every format, as torch's
        return True
    return _is_contiguous_in(x.shape, element_strides(x._array), format_order(form, x.ndim))


def contiguous(x, *, memory_format=contiguous_format):
    """x itself when its memory is in ``memory_format`` (row-major by default), else a copy
    in it, in the graph (``torch.Tensor.contiguous``): one node whose backward returns the
    gradient.

    Args:
        memory_format: ``mg.contiguous_format``, ``mg.channels_last`` (4-D x),
            ``mg.channels_last_3d`` (5-D x).

    Shape: any; the values and the shape stay, the strides become the format's.

    Example:
        >>> x.contiguous(memory_format=mg.channels_last).stride()     # (HWC, 1, WC, C)
    """
    if memory_format is contiguous_format and x._array.flags.c_contiguous:
        return x                                                  # the usual call, first
    form = check_format("contiguous", memory_format)
    if is_contiguous(x, memory_format=form):
        return x
    if form is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return _copy(x, format_order(form, x.ndim))


def clone(input, *, memory_format=preserve_format):
    """A copy of x in new memory, in the graph (``torch.Tensor.clone``): laid out in
    ``memory_format``, by default x's own (``preserve_format``: a dense x's strides, any
    other the dense order of its strides, torch's ``infer_dense_strides``).

    Example:
        >>> x.to(memory_format=mg.channels_last).clone().is_contiguous(
        ...     memory_format=mg.channels_last)                              # True
    """
    if memory_format is preserve_format and _exactly_row_major(input._array):
        return Clone.apply(input)                                 # the usual call, first
    form = check_format("clone", memory_format, none_is=preserve_format)
    return _copy(input, _order_for(input._array, form))


def to_order(x, memory_format, copies):
    """Where ``x.to(..., memory_format=)`` puts x's dims, outermost first, or None to leave
    its layout (x itself, or a cast in x's layout); ``copies``: a dtype or device change
    copies x anyway. torch's rule: x itself when nothing else changes and ``memory_format``
    is ``preserve_format`` (None) or x's suggested format; a copy that preserves lays x out
    as ``clone`` does."""
    array = x._array
    if memory_format is None and (not copies or _exactly_row_major(array)):
        return None                                               # the usual call, first
    form = check_format("to", memory_format, none_is=preserve_format)
    if form is preserve_format:
        order = _kept_order(array) if copies else None
        # (a cast of a row-major array stays row-major; NumPy's keeps a size-1 dim's stride
        # only where it is the row-major one)
        return None if order is None or _row_major(order) and array.flags.c_contiguous \
            else order
    if not copies and suggest_memory_format(array) is form:
        return None
    return format_order(form, array.ndim)


def to_layout(x, dtype, order):
    """``x`` in ``dtype`` (None: its own) laid out in ``order`` (None: x's layout), one node
    (``ToCopy`` or ``Clone``); an integer or bool result is a constant, as ``astype``'s."""
    if dtype is None or dtype == x.dtype:
        return x if order is None else _copy(x, order)
    if order is None:
        return x.astype(dtype)
    if not (dtypes.is_floating(dtype) or dtypes.is_complex(dtype)):
        return _tensor.Tensor._from_op(copy_in_order(x._array, order, dtype), None)
    return ToCopy.apply(x, dtype=dtype, order=tuple(order))


def empty(shape, dtype, memory_format):
    """An uninitialised NumPy array of ``shape`` in ``memory_format`` (``mg.empty``'s)."""
    form = check_format("empty", memory_format, none_is=contiguous_format)
    return empty_in_order(np, shape, dtype, format_order(form, len(shape)))


METHODS = ("is_contiguous", "contiguous", "clone")
