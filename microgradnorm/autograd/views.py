"""An in-place op on a view of a recorded tensor, as PyTorch records it (its CopySlices):
the write lands in the base's memory, so the base's history gains a node that takes the
view's new values at the view's positions (``WriteThroughView``), and the view becomes a
view of the base again (``ViewOfBase``). Positions are flat indices into the base, found
from the two arrays' memory (offsets and strides), so any NumPy view (slice, transpose,
reshape, diagonal, narrow) is handled alike. ``tensor._record_inplace`` calls
``write_through``."""

import numpy as np

from ..backend import array_module
from .function import Function


def view_positions(base, view):
    """For each element of the array ``view`` (a view of ``base``'s memory), the flat
    C-order index of the element of ``base`` at the same address; None where some element
    of ``view`` lies outside ``base`` or between its elements."""
    item = base.itemsize
    if base.size == 0 or view.size == 0:
        return np.zeros(view.shape, np.int64)
    origin = base.__array_interface__["data"][0] if isinstance(base, np.ndarray) \
        else base.data.ptr
    start = view.__array_interface__["data"][0] if isinstance(view, np.ndarray) \
        else view.data.ptr
    if any(s % item for s in base.strides + view.strides) or (start - origin) % item:
        return None

    def offsets(array, first):
        total = np.full(array.shape, first, np.int64)
        for axis, (n, stride) in enumerate(zip(array.shape, array.strides)):
            shape = [1] * array.ndim
            shape[axis] = n
            total = total + (np.arange(n, dtype=np.int64) * (stride // item)).reshape(shape)
        return total

    in_base = offsets(base, 0).ravel()
    in_view = offsets(view, (start - origin) // item)
    low = min(int(in_base.min()), int(in_view.min()))
    table = np.full(max(int(in_base.max()), int(in_view.max())) - low + 1, -1, np.int64)
    table[in_base - low] = np.arange(base.size, dtype=np.int64)
    positions = table[in_view - low]
    return None if (positions < 0).any() else positions


class WriteThroughView(Function):
    """The base after a view of it was written: ``base`` with ``values`` at ``positions``.
    Backward: the gradient outside the positions to the old base, at them to the values."""

    @staticmethod
    def forward(ctx, base, values, positions):
        ctx.positions = positions
        out = base.copy()
        out.reshape(-1)[positions.reshape(-1)] = values.reshape(-1)
        return out

    @staticmethod
    def backward(ctx, grad):
        flat = ctx.positions.reshape(-1)
        to_base = grad.copy()
        to_base.reshape(-1)[flat] = 0
        return to_base, grad.reshape(-1)[flat].reshape(ctx.positions.shape), None


class ViewOfBase(Function):
    """The view read again from the written base: its values (the array given) and, in
    backward, its gradient placed at its positions in the base's shape."""

    @staticmethod
    def forward(ctx, base, positions, values):
        ctx.positions, ctx.shape = positions, base.shape
        return values

    @staticmethod
    def backward(ctx, grad):
        xp = array_module(grad)
        to_base = xp.zeros(ctx.shape, grad.dtype)
        to_base.reshape(-1)[ctx.positions.reshape(-1)] = grad.reshape(-1)
        return to_base


def write_through(view, base, result, positions, before):
    """Record that ``result`` (the view's new values, with their node) is written into
    ``view``'s memory, part of ``base``'s: the base's node becomes ``WriteThroughView`` of
    ``before`` (its snapshot now) and ``result``, and the view's ``ViewOfBase`` of the new
    base. Writes the arrays."""
    new_base = WriteThroughView.apply(before, result, positions=positions)
    base._array[...] = new_base._array                      # the view's memory too
    base._bump_version()
    base._history = (base._history or ()) + ((new_base.grad_fn.seq, before),)
    base.grad_fn, base._output_index, base.requires_grad = new_base.grad_fn, 0, True
    again = ViewOfBase.apply(base, positions=positions, values=view._array)
    view.grad_fn, view._output_index, view.requires_grad = again.grad_fn, 0, True
    view._view_version = base._version_box[0]
