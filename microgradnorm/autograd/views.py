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
from .grad_mode import is_grad_enabled
from .inputs import _tensor


def view_positions(base, view):
    """For each element of the array ``view`` (a view of ``base``'s memory, of its dtype),
    the flat C-order index of the element of ``base`` at the same address; None where the
    dtypes differ (``y.real`` of a complex y), where two elements of ``view`` share one
    address (an expanded or overlapping view, which torch refuses to write through), or
    where some element lies outside ``base`` or between its elements."""
    item = base.itemsize
    if view.dtype != base.dtype:
        return None
    if base.size == 0 or view.size == 0:
        return np.zeros(view.shape, np.int64)
    origin = base.__array_interface__["data"][0] if isinstance(base, np.ndarray) \
        else base.data.ptr
    start = view.__array_interface__["data"][0] if isinstance(view, np.ndarray) \
        else view.data.ptr
    if any(s % item for s in base.strides + view.strides) or (start - origin) % item:
        return None
    in_view = _offsets(view, (start - origin) // item)
    if base.flags.c_contiguous:             # the usual base: offsets are flat indices
        positions = in_view
        if int(positions.min()) < 0 or int(positions.max()) >= base.size:
            return None
    else:                                   # any other layout: through a table of its own
        in_base = _offsets(base, 0).ravel()
        low = min(int(in_base.min()), int(in_view.min()))
        table = np.full(max(int(in_base.max()), int(in_view.max())) - low + 1, -1, np.int64)
        table[in_base - low] = np.arange(base.size, dtype=np.int64)
        positions = table[in_view - low]
        if (positions < 0).any():
            return None
    if positions.size > 1 and np.unique(positions).size != positions.size:
        return None
    return positions


def _offsets(array, first):
    # each element's offset in items from the memory ``first`` items after the base's
    item, total = array.itemsize, np.full(array.shape, first, np.int64)
    for axis, (n, stride) in enumerate(zip(array.shape, array.strides)):
        shape = [1] * array.ndim
        shape[axis] = n
        total = total + (np.arange(n, dtype=np.int64) * (stride // item)).reshape(shape)
    return total


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
        to_base = array_module(grad).array(grad, copy=True)   # (a 0-d grad: an array too)
        to_base.reshape(-1)[flat] = 0
        return to_base, grad.reshape(-1)[flat].reshape(ctx.positions.shape), None

    graph_reads_inputs = False       # the gradient moved, not scaled: no input values read

    @staticmethod
    def graph_backward(ctx, grad):
        # create_graph: backward's write and gather as Tensor ops (``put`` of zeros, ``take``;
        # each the other's adjoint, so differentiable again), the positions a constant
        flat = _constant(ctx.positions.reshape(-1), grad)
        need_base, need_values = ctx.needs_input_grad[:2]
        return (grad.put(flat, grad.new_zeros(flat.shape)) if need_base else None,
                grad.take(flat).reshape(ctx.positions.shape) if need_values else None)


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

    graph_reads_inputs = False

    @staticmethod
    def graph_backward(ctx, grad):
        # create_graph: the same placing as a Tensor op, ``put`` into zeros (its gradient to
        # the values, ``take`` at the positions, is WriteThroughView's)
        flat = _constant(ctx.positions.reshape(-1), grad)
        return grad.new_zeros(ctx.shape).put(flat, grad.reshape(-1))


class Alias(Function):
    """The node of ``torch.Tensor(t)`` of a Tensor ``t`` (PyTorch's ``AliasBackward0``): the
    output is t's memory itself, a view of all of it; the gradient passes through as it is."""

    @staticmethod
    def forward(ctx, x):
        return x.view()         # a new array object over the same memory: the view's own

    @staticmethod
    def backward(ctx, grad):
        return grad

    graph_reads_inputs = False

    @staticmethod
    def graph_backward(ctx, grad):
        return grad


def alias(tensor):
    """``Tensor(t)`` of a Tensor ``t`` as PyTorch's legacy constructor makes it: a view of
    all of t's memory, sharing its version counter (``_base`` is t's base, or t), recorded as
    an ``AliasBackward0`` node where t requires grad and grad mode is on; under ``no_grad``
    it requires grad as t does, without a node (a leaf), as torch's.

    Example:
        >>> a = mg.Tensor(t)            # a[0] = 5 writes t[0]; t._version follows
    """
    out = Alias.apply(tensor)
    if out.grad_fn is None and tensor._requires_grad:      # no_grad: torch's flag, no node
        out._requires_grad = True
    return out


def _constant(array, like):
    # an index array as a Tensor without history on like's device (the Tensor class: given
    # at run time)
    return _tensor.Tensor._from_op(like.xp.asarray(array), None)


def write_through(view, base, result, positions, before):
    """Record that ``result`` (the view's new values, with their node) is written into
    ``view``'s memory, part of ``base``'s: the base's node becomes ``WriteThroughView`` of
    ``before`` (its snapshot now) and ``result``, and the view's ``ViewOfBase`` of the new
    base. Writes the arrays."""
    new_base = WriteThroughView.apply(before, result, positions=positions)
    base._array[...] = new_base._array                      # the view's memory too
    base._bump_version()
    base._history = (base._history or ()) + ((new_base.grad_fn.seq, before),)
    base.grad_fn, base._output_index, base._requires_grad = new_base.grad_fn, 0, True
    again = ViewOfBase.apply(base, positions=positions, values=view._array)
    view.grad_fn, view._output_index, view._requires_grad = again.grad_fn, 0, True
    view._view_version = base._version_box[0]


def refreshed(view):
    """A view whose base was written since it was made, made a view of the written base
    again (its node ``ViewOfBase``), as torch replays a view from its base; the view as it
    is where that cannot be done (it is then refused where an op records it)."""
    base = view._base
    if base is None or not is_grad_enabled():    # no graph to record: it stays as it is
        return view
    positions = view_positions(base._array, view._array)
    if positions is None:
        return view
    before = _tensor.Tensor._from_op(view._array, view.grad_fn, view._output_index)
    before._requires_grad, before._version_box = view._requires_grad, [0]
    again = ViewOfBase.apply(base, positions=positions, values=view._array)
    if again.grad_fn is not None:    # the nodes that read the view before see its old node
        view._history = (view._history or ()) + ((again.grad_fn.seq, before),)
    view.grad_fn, view._output_index = again.grad_fn, 0
    view._requires_grad = again._requires_grad
    view._view_version = base._version_box[0]
    return view
