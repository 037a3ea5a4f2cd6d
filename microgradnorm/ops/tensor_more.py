"""The rest of PyTorch's Tensor methods beside the writes by index (``index_writes.py``):
the in-place view changes (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``, ...), the
strided views (``as_strided``, ``unfold``), the in-place comparisons, logical and bitwise
ops and the shifts, the in-place matrix products with ``addbmm`` and ``addr``,
``unique_consecutive``, the conjugate transposes (``H``, ``mH``, ``adjoint``) and torch's
flags and copies (``is_conj``, ``narrow_copy``, ``new_empty_strided``, ...).

An in-place view change gives the tensor a new shape over the same memory: recorded as the
in-place writes are (``Tensor._inplace``), from a snapshot whose node the tensor takes, so
that a gradient flows through it as torch's; a leaf that requires grad is refused outside
``no_grad``. The in-place forms of ops with a value result follow ``pointwise._in_place``:
the result is computed, checked and cast to the tensor's dtype before anything is written.

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import numbers

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from ..autograd import is_grad_enabled
from ..meta_arrays import refuse_values
from ..autograd.function import Function
from ..autograd import hooks
from ..autograd.inference import refuse_write
from ..autograd.inputs import _refuse_stale_view
from ..autograd.views import refreshed
from ..tensor import _snapshot
from . import binary, elementwise, linalg, logical
from . import shape as shape_ops
from .arrange import _ints
from .base import (ALL_DIMS, AxisError, _augmented, broadcast_shape, check_tensor, constant,
                   normalize_axis, promote, result_type, size_args)
from .complex import conj
from .linalg import MatrixShapeError, _check_operands, _scaled_sum, mm, outer
from .logical import _binary_operands, operators
from .pointwise import _in_place
from .shape import _int
from .storage import _place
from .view_copies import _copied

METHODS = ("t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_",
           "as_strided", "as_strided_", "unfold",
           "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_",
           "less_", "greater_equal_", "less_equal_", "not_equal_", "logical_and_",
           "logical_or_", "logical_xor_", "logical_not_", "bitwise_and_", "bitwise_or_",
           "bitwise_xor_", "bitwise_not_", "bitwise_left_shift", "bitwise_right_shift",
           "bitwise_left_shift_", "bitwise_right_shift_", "fmod_", "remainder_",
           "floor_divide_", "addmm_", "addmv_", "baddbmm_", "addbmm", "addbmm_", "addr",
           "addr_", "unique_consecutive", "H", "mH", "adjoint", "is_conj", "is_neg",
           "resolve_conj", "resolve_neg", "register_post_accumulate_grad_hook",
           "new_empty_strided", "narrow_copy", "chalf",
           "__lshift__", "__rlshift__", "__rshift__", "__rrshift__", "__ilshift__",
           "__irshift__", "__iand__", "__ior__", "__ixor__", "__ifloordiv__", "__imod__",
           "__ipow__", "__contains__")


# ----- the shape changed in place: t_, transpose_, squeeze_, unsqueeze_ -----------------------
def _view_in_place(self, name, view):
    """``self`` becomes ``view(self)``, a view of its own memory in another shape; recorded
    as torch's in-place view ops: the view is taken of a snapshot, whose node (and so the
    gradient's path) the tensor takes. The version counter moves, as torch's. A stale view
    (its base written since it was made) is read from its base again first while
    recording, as by any op (``autograd.views.refreshed``), and stays stale otherwise."""
    refuse_write(self)                        # an inference tensor outside its mode
    fresh = self._view_version == self._version_box[0]
    if is_grad_enabled() and self.requires_grad:
        if self.grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation: "
                "in-place ops on a tensor that requires grad and is a leaf are allowed only "
                "under mg.no_grad(); write x = x.t() otherwise")
        base = self._base if self._view_version is not None else None
        if base is not None and base.requires_grad and base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               f"an in-place operation ({name}).")
        if self._view_version is not None and not fresh:
            refreshed(self)                   # read from its written base again, as torch's
            fresh = self._view_version == self._version_box[0]
            if not fresh:
                _refuse_stale_view(name, self)
        before = _snapshot(self, [0])
        result = view(before)
        self._history = (self._history or ()) + ((result.grad_fn.seq, before),)
        self.grad_fn, self._output_index = result.grad_fn, result._output_index
    else:
        result = view(constant(self._array))
    self._array = result._array
    self._bump_version()
    if fresh:                                 # its node is taken now: not a stale view
        self._view_version = self._version_box[0]
    return self


def t_(self):
    """In place ``t()``: a tensor of at most 2 dims takes its transpose (the same memory);
    recorded when the graph needs it, as ``add_``."""
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return _view_in_place(self, "t_", shape_ops.reversed_dims)


def transpose_(self, dim0, dim1):
    """In place ``transpose(dim0, dim1)``: the tensor's two dims swapped (the same memory)."""
    for d in (dim0, dim1):
        normalize_axis("transpose_", d, self.ndim, single=True)
    return _view_in_place(self, "transpose_", lambda x: shape_ops.transpose(x, dim0, dim1))


def swapaxes_(self, axis0, axis1):
    """In place ``swapaxes(axis0, axis1)``, ``transpose_``'s other name."""
    return transpose_(self, axis0, axis1)


def swapdims_(self, dim0, dim1):
    """In place ``swapdims(dim0, dim1)``, ``transpose_``'s other name."""
    return transpose_(self, dim0, dim1)


def squeeze_(self, axis=ALL_DIMS, *, dim=dtypes.NOT_GIVEN):
    """In place ``squeeze``: the size-1 dims (all, or those of ``dim``, an int or a tuple)
    removed from the tensor's shape."""
    if (given := dtypes.int_dim("squeeze_", dim)) is None:
        dtypes.int_dim("squeeze_", axis)
    normalize_axis("squeeze_", axis, self.ndim, dim=given)
    return _view_in_place(self, "squeeze_", lambda x: shape_ops.squeeze(x, axis, dim=dim))


def unsqueeze_(self, axis=ALL_DIMS, *, dim=None):
    """In place ``unsqueeze``: a dim of size 1 inserted at ``dim`` (-1 appends one)."""
    normalize_axis("unsqueeze_", axis, self.ndim, dim=dim, single=True, insert=True)
    return _view_in_place(self, "unsqueeze_",
                          lambda x: shape_ops.unsqueeze(x, axis, dim=dim))


# ----- strided views: as_strided, unfold ------------------------------------------------------
def _storage(array):
    """``(storage, start, strides)``: the memory ``array`` lives in as torch sees a storage
    (its root's memory as elements of its dtype, 1-D: ``storage._place``), where ``array``
    starts in it and its strides in elements. Memory that is no such storage counts as a
    copy of ``array`` of its own."""
    place = _place(array) if array.size else None
    if place is not None:
        return place[1:]
    xp, size = backend.array_module(array), array.itemsize
    copy = xp.ascontiguousarray(array)
    return copy.reshape(-1), 0, tuple(s // size for s in copy.strides)


def _positions(xp, shape, strides, start):
    """The storage position of each element of a view (``start + Σ index_k · stride_k``),
    an int64 array of ``shape``."""
    where = xp.full(shape, start, dtype=np.int64)
    for k, (n, step) in enumerate(zip(shape, strides)):
        where += (xp.arange(n, dtype=np.int64) * step).reshape((n,) + (1,) * (len(shape) - k - 1))
    return where


class AsStrided(Function):
    """A read-only view of x's storage in ``shape`` with ``strides`` (elements) from
    ``offset`` (None: x's own start). The storage is read here, in the forward, so that a
    captured step's replay reads its own argument's. The gradient is torch's
    ``as_strided_backward``: grad added into a zero storage at each output's position
    (overlapping outputs sum), read back at x's own positions, divided where x shows one
    position several times (an expanded x)."""

    @staticmethod
    def forward(ctx, x, shape, strides, offset):
        xp = backend.array_module(x)
        storage, start, own_strides = _storage(x)
        offset = start if offset is None else offset
        needed = 0 if 0 in shape else offset + 1 + sum((n - 1) * s for n, s in
                                                       zip(shape, strides))
        if needed > storage.size:
            raise RuntimeError(f"as_strided(): sizes {list(shape)}, strides {list(strides)} "
                               f"and storage offset {offset} need a storage of {needed} "
                               f"elements, out of bounds for the storage of {storage.size}")
        ctx.geometry = (x.shape, own_strides, start), (shape, strides, offset)
        steps = tuple(s * x.itemsize for s in strides)
        kept = {"writeable": False} if xp is np else {}
        return xp.lib.stride_tricks.as_strided(storage[offset:], shape, steps, **kept)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        own, view = ctx.geometry
        inside, outside = _positions(xp, *own), _positions(xp, *view)
        length = 1 + max([int(p.max()) for p in (inside, outside) if p.size], default=-1)
        total = xp.zeros(length, dtype=grad.dtype)
        xp.add.at(total, outside.reshape(-1), grad.reshape(-1))     # (storage,)
        shown = xp.bincount(inside.reshape(-1), minlength=length)  # x's copies of each place
        grad_x = total[inside]
        if inside.size and int(shown.max()) > 1:
            grad_x = (grad_x / shown[inside]).astype(grad.dtype)
        return grad_x


def as_strided(input, size, stride, storage_offset=None):
    """``torch.as_strided``: a view of input's storage (the memory it shares with its base,
    1-D) in shape ``size``, element ``i`` at ``storage_offset + Σ i_k · stride_k``; read-only
    here. The gradient is torch's, overlapping views included.

    Args:
        input: the tensor.
        size, stride: tuples of ints of one length, the strides in elements (>= 0).
        storage_offset: the first element's place in the storage; input's own by default.

    Example:
        >>> mg.arange(9.0).as_strided((2, 2), (3, 1))          # tensor([[0., 1.], [3., 4.]])
    """
    check_tensor("as_strided", input)
    size, stride = _ints("as_strided", "size", size), _ints("as_strided", "stride", stride)
    if any(n < 0 for n in size):
        raise RuntimeError(f"as_strided(): sizes must be non-negative, got {list(size)}")
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided(): mismatch in length of strides and shape, got "
                           f"size {list(size)} and stride {list(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    offset = storage_offset
    if offset is not None:
        offset = _int("as_strided()", "storage_offset", offset)
        if offset < 0:
            raise RuntimeError(f"as_strided(): invalid storage offset {offset}")
    return AsStrided.apply(input, shape=size, strides=stride, offset=offset)


def as_strided_(self, size, stride, storage_offset=None):
    """In place ``as_strided``: the tensor becomes that view of its own storage (read-only
    here, as ``as_strided``'s); the version counter moves, as torch's. The view is built
    once: a bad argument raises before anything changes (after the leaf check, as torch's)."""
    return _view_in_place(self, "as_strided_",
                          lambda x: as_strided(x, size, stride, storage_offset))


def _along(ndim, axis, part):
    # an index that takes ``part`` along ``axis`` and everything elsewhere
    return (slice(None),) * axis + (part,) + (slice(None),) * (ndim - axis - 1)


class Unfold(Function):
    """The windows of ``size`` every ``step`` along ``axis`` as a strided view, a last dim
    of ``size`` (writable when they do not overlap); the gradient adds each window back."""

    @staticmethod
    def forward(ctx, x, axis, size, step):
        n, stride = x.shape[axis], x.strides[axis]
        count = (n - size) // step + 1
        ctx.shape, ctx.where = x.shape, (axis, size, step, count)
        shape = x.shape[:axis] + (count,) + x.shape[axis + 1:] + (size,)
        strides = x.strides[:axis] + (stride * step,) + x.strides[axis + 1:] + (stride,)
        xp = backend.array_module(x)
        kept = {"writeable": step >= size and x.flags.writeable} if xp is np else {}
        return xp.lib.stride_tricks.as_strided(x, shape, strides, **kept)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        axis, size, step, count = ctx.where
        ndim = len(ctx.shape)
        grad_x = xp.zeros(ctx.shape, dtype=grad.dtype)
        if size <= count:             # one add per place in the window, over every window
            for k in range(size):
                grad_x[_along(ndim, axis, slice(k, k + step * (count - 1) + 1, step))] += \
                    grad[..., k]
        else:                         # one add per window: (..., count, size, ...)
            windows = xp.moveaxis(grad, -1, axis + 1)
            for j in range(count):
                grad_x[_along(ndim, axis, slice(j * step, j * step + size))] += \
                    windows[_along(ndim + 1, axis, j)]
        return grad_x


def unfold(input, dimension, size, step):
    """``Tensor.unfold``: the slices of ``size`` elements along ``dimension``, one every
    ``step``, as a view: that dim becomes the number of windows, ``(n - size) // step + 1``,
    and a last dim of ``size`` is added (a 0-d tensor gives one window of ``size`` <= 1).
    The gradient adds each window's back into its place (overlaps sum).

    Example:
        >>> mg.arange(5.0).unfold(0, 2, 2)                    # tensor([[0., 1.], [2., 3.]])
    """
    check_tensor("unfold", input)
    axis = normalize_axis("unfold", dimension, input.ndim, single=True)
    size, step = _int("unfold()", "size", size), _int("unfold()", "step", step)
    if size < 0:
        raise RuntimeError(f"unfold(): size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"unfold(): step is {step} but must be > 0")
    n = input.shape[axis] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"unfold(): maximum size for tensor at dimension {axis} is {n} "
                           f"but size is {size}")
    if input.ndim == 0:
        return Unfold.apply(input.reshape(1), axis=0, size=size, step=step).reshape(size)
    return Unfold.apply(input, axis=axis, size=size, step=step)


# ----- in-place comparisons, logical and bitwise ops ------------------------------------------
class ConstantResult(Function):
    """A result without a derivative (a comparison) recorded where torch
    records it, written in place into a tensor the graph holds: its gradient is 0 for
    every input."""

    @staticmethod
    def forward(ctx, *arrays, result):
        ctx.inputs_meta = [(a.shape, a.dtype) for a in arrays]
        return result

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        return tuple(xp.zeros(shape, dtype) for shape, dtype in ctx.inputs_meta)


def _recorded(function):
    # ``function`` (a constant result) as a node of ConstantResult when an input requires
    # grad: x.lt_(y) on a tensor of the graph keeps it in the graph, with a zero gradient
    def recorded(input, *args, **kwargs):
        out = function(input, *args, **kwargs)
        needing = [t for t in (input, *args, *kwargs.values())
                   if isinstance(t, _tensor.Tensor) and t.requires_grad]
        if needing and is_grad_enabled():
            return ConstantResult.apply(*needing, result=out._array.astype(input.dtype))
        return out
    return recorded


def _comparison_(name):
    method = _in_place(name, _recorded(getattr(logical, name)))
    method.__doc__ = (f"In place ``{name}``: 1 where it holds, 0 elsewhere, in the "
                      "tensor's dtype; on a tensor of the graph a node whose gradient is 0, "
                      "as torch's.")
    return method


eq_, ne_, lt_, le_ = _comparison_("eq"), _comparison_("ne"), _comparison_("lt"), \
    _comparison_("le")
gt_, ge_, not_equal_ = _comparison_("gt"), _comparison_("ge"), _comparison_("not_equal")
greater_, greater_equal_ = _comparison_("greater"), _comparison_("greater_equal")
less_, less_equal_ = _comparison_("less"), _comparison_("less_equal")


def _unrecorded(name):
    # torch's logical_*_: the values written into the memory, nothing recorded, even on a
    # tensor of the graph or a leaf that requires grad (its node stays, a gradient passes
    # through as before); the result is checked before anything is written
    function = getattr(logical, name)

    def method(self, *args, **kwargs):
        if getattr(self, "_element", False) and is_grad_enabled():
            # y[0] of a recorded y is a copy (indexing.getitem): a write would miss y
            raise RuntimeError(
                f"{name}_: in-place op on a view (shape {self.shape}) while the graph records "
                "it: an element x[i] of a recorded tensor, a copy here (the write would be "
                "lost); write into the base (x[index] = value), or clone() the view first")
        _tensor.check_writable(self._array)           # an expanded tensor: torch's error
        refuse_write(self)                            # an inference tensor outside its mode
        out = function(self, *args, **kwargs)._array
        if out.shape != self._array.shape:
            raise RuntimeError(f"{name}_: output with shape {self.shape} doesn't match the "
                               f"broadcast shape {tuple(out.shape)}")
        fresh = self._view_version == self._version_box[0]
        self._array[...] = out
        self._bump_version()
        if fresh:                  # its values changed outside the graph; a stale view stays so
            self._view_version = self._version_box[0]
        return self
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = (f"In place ``{name}``: 1 where it holds, 0 elsewhere, in the tensor's "
                      "dtype; as torch's, not recorded: a tensor of the graph keeps its node.")
    return method


logical_and_, logical_or_ = _unrecorded("logical_and"), _unrecorded("logical_or")
logical_xor_, logical_not_ = _unrecorded("logical_xor"), _unrecorded("logical_not")
bitwise_and_ = _in_place("bitwise_and", logical.bitwise_and)
bitwise_or_ = _in_place("bitwise_or", logical.bitwise_or)
bitwise_xor_ = _in_place("bitwise_xor", logical.bitwise_xor)
bitwise_not_ = _in_place("bitwise_not", logical.bitwise_not)
fmod_ = _in_place("fmod", logical.fmod)
remainder_ = _in_place("remainder", logical.remainder)
floor_divide_ = _in_place("floor_divide", logical.floor_divide)
addmm_ = _in_place("addmm", linalg.addmm)
addmv_ = _in_place("addmv", linalg.addmv)
baddbmm_ = _in_place("baddbmm", linalg.baddbmm)


def _shift(fn, input, other, left):
    # An int beside an integer tensor is taken in its dtype, wrapped (torch's cast, in
    # _binary_operands): a shift by -1 of uint8 is one by 255. A shift past the width gives
    # 0, or the sign for a right shift of a signed integer (torch's kernels), where C's
    # would be undefined.
    input, other = _binary_operands(fn, input, other)
    a, b, dtype = promote(input._array, other._array)
    if dtype.kind not in "iu":
        raise NotImplementedError(f"{fn}: not implemented for {dtype} tensors (integers "
                                  "only)")
    broadcast_shape(fn, a.shape, b.shape)              # torch's RuntimeError, not NumPy's
    xp, bits = input.xp, dtype.itemsize * 8
    outside = (b < 0) | (b >= bits)
    counts = xp.where(outside, 0, b).astype(dtype)
    if left:
        out = xp.where(outside, 0, xp.left_shift(a, counts))
    else:
        sign = a >> (bits - 1) if dtype.kind == "i" else xp.zeros((), dtype)
        out = xp.where(outside, sign, xp.right_shift(a, counts))
    return constant(xp.asarray(out, dtype=dtype))


def bitwise_left_shift(input, other):
    """``input << other`` (``torch.bitwise_left_shift``) of integer tensors (or a number),
    broadcast, in the promoted dtype; bits shifted past the width are lost, and a shift by
    a count outside [0, width) gives 0, as torch's.

    Example:
        >>> mg.bitwise_left_shift(mg.tensor([1, 3]), 2)                   # tensor([4, 12])
    """
    return _shift("bitwise_left_shift", input, other, left=True)


def bitwise_right_shift(input, other):
    """``input >> other`` (``torch.bitwise_right_shift``), arithmetic for signed integers;
    a count outside [0, width) gives 0, or -1 for a negative signed input, as torch's.

    Example:
        >>> mg.bitwise_right_shift(mg.tensor([-8, 8]), 2)                 # tensor([-2, 2])
    """
    return _shift("bitwise_right_shift", input, other, left=False)


bitwise_left_shift_ = _in_place("bitwise_left_shift", bitwise_left_shift)
bitwise_right_shift_ = _in_place("bitwise_right_shift", bitwise_right_shift)


# ----- addbmm, addr ---------------------------------------------------------------------------
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * Σ_b batch1[b] @ batch2[b]`` (``torch.addbmm``): batch1
    (B, n, k), batch2 (B, k, m), input broadcast to (n, m), one dtype; the sum over the
    batch is one (n, B·k) @ (B·k, m) product. beta 0 ignores input's values, NaN included.

    Example:
        >>> mg.addbmm(mg.zeros(2, 4), mg.ones(3, 2, 5), mg.ones(3, 5, 4))   # 15 everywhere
    """
    _check_operands("addbmm", (None, 3, 3), {"batch1": 2, "batch2": 3}, input=input,
                    batch1=batch1, batch2=batch2)
    (count, n, k), (count2, k2, m) = batch1.shape, batch2.shape
    if count != count2:
        raise MatrixShapeError(f"addbmm: batch1 and batch2 must have same number of "
                               f"batches, got {count} and {count2}")
    if k != k2:
        raise MatrixShapeError(f"addbmm: Incompatible matrix sizes for bmm ({n}x{k} and "
                               f"{k2}x{m})")
    rows = batch1.permute(1, 0, 2).reshape(n, count * k)           # (n, B·k)
    product = mm(rows, batch2.reshape(count * k, m))                # (n, m)
    return _scaled_sum("addbmm", input, product, beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (``torch.addr``): vec1 (n,), vec2 (m,),
    input broadcast to (n, m), the dtypes promoted as torch's; for bool tensors the scales
    are bools, ``*`` is and and ``+`` is or. An integer result takes integer scales only.

    Example:
        >>> mg.addr(mg.zeros(2, 3), mg.tensor([1.0, 2.0]), mg.ones(3))   # rows of 1s, 2s
    """
    operands = {"input": input, "vec1": vec1, "vec2": vec2}
    for name, t in operands.items():
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(f"addr(): {name} must be a Tensor, got {type(t).__name__}")
    for name in ("vec1", "vec2"):
        if operands[name].ndim != 1:
            raise MatrixShapeError(f"addr: Expected 1-D argument {name}, but got "
                                   f"{operands[name].ndim}-D")
    dtype = result_type(input, vec1, vec2)
    if dtype == np.bool_:
        beta, alpha = bool(beta), bool(alpha)
    elif dtype.kind in "iu":
        for name, value in (("beta", beta), ("alpha", alpha)):
            if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
                raise RuntimeError(f"For integral input tensors, argument {name} must not "
                                   "be a floating point number.")
    product = outer(vec1.astype(dtype, copy=False), vec2.astype(dtype, copy=False))
    return _scaled_sum("addr", input.astype(dtype, copy=False), product, beta, alpha)


addbmm_ = _in_place("addbmm", addbmm)
addr_ = _in_place("addr", addr)


# ----- unique_consecutive ---------------------------------------------------------------------
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``torch.unique_consecutive``: each run of equal consecutive elements (slices along
    ``dim``) kept once, in order, a constant; NaN equals nothing, so each NaN is a run.

    Args:
        input: the tensor.
        return_inverse: also return, for each element (slice), the int64 index of its run.
        return_counts: also return the int64 length of each run.
        dim: None compares the flattened elements; an int, the slices along that dim.

    Returns:
        The runs' values, or a tuple of them with the inverse and/or the counts.

    Example:
        >>> mg.unique_consecutive(mg.tensor([1, 1, 2, 1]))          # tensor([1, 2, 1])
    """
    check_tensor("unique_consecutive", input)
    refuse_values("unique_consecutive", input._array)
    xp, data = input.xp, input._array
    if dim is None:
        rows, axis = data.reshape(-1, 1), None
    else:
        if input.ndim == 0:
            raise AxisError(f"unique_consecutive(): dim {dim} given, but the tensor is 0-d")
        axis = normalize_axis("unique_consecutive", dim, input.ndim, single=True)
        if data.size == 0 and any(n == 0 for d, n in enumerate(data.shape) if d != axis):
            raise RuntimeError("unique_consecutive(): There are 0 sized dimensions, and they "
                               "aren't selected, so unique cannot be applied")
        moved = xp.moveaxis(data, axis, 0)
        rows = moved.reshape(len(moved), int(np.prod(moved.shape[1:], dtype=np.int64)))
    starts = xp.ones(len(rows), dtype=bool)         # where each run starts: (n,)
    starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    firsts = xp.flatnonzero(starts)
    if axis is None:
        values = data.reshape(-1)[firsts]
    else:
        values = xp.take(data, firsts, axis=axis)
    out = [constant(values)]
    if return_inverse:
        inverse = xp.cumsum(starts, dtype=np.int64) - 1
        out.append(constant(inverse.reshape(data.shape) if axis is None else inverse))
    if return_counts:
        ends = xp.concatenate([firsts[1:], xp.asarray([len(rows)])])
        out.append(constant((ends - firsts).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


# ----- conjugate transposes and torch's flags -------------------------------------------------
def _conjugate_transpose(x):
    """``x.H``: the conjugate transpose of a matrix (``x.conj().t()``; a 0-d tensor's
    conjugate); a real matrix's transpose, a view."""
    if x.ndim == 0:
        return conj(x)
    if x.ndim != 2:
        extra = ". For batches of matrices, consider using tensor.mH" if x.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{x.ndim}-D tensor{extra}")
    return shape_ops.transpose(conj(x), 0, 1)


def _batch_conjugate_transpose(x, fn="tensor.mH"):
    """``x.mH``: the last two dims swapped and conjugated (a real tensor's ``mT``); a 0-d
    tensor's conjugate, as torch's (deprecated there)."""
    if x.ndim == 0:
        return conj(x)
    if x.ndim < 2:
        raise RuntimeError(f"{fn} is only supported on matrices or batches of matrices. Got "
                           f"{x.ndim}-D tensor.")
    return shape_ops.transpose(conj(x), -2, -1)


H = property(_conjugate_transpose)
mH = property(_batch_conjugate_transpose)


def adjoint(input):
    """``torch.adjoint``: the conjugate transpose of the last two dims, ``input.mH``.

    Example:
        >>> mg.ones(2, 3).adjoint().shape                                     # (3, 2)
    """
    check_tensor("adjoint", input)
    return _batch_conjugate_transpose(input, "tensor.adjoint()")


def is_conj(input):
    """False: ``conj()`` here makes a new tensor, never a lazy conjugate view."""
    check_tensor("is_conj", input)
    return False


def is_neg(input):
    """False: no tensor here is a lazy negative view."""
    check_tensor("is_neg", input)
    return False


def resolve_conj(input):
    """``input`` itself: it holds its values already (no lazy conjugate here)."""
    return check_tensor("resolve_conj", input)


def resolve_neg(input):
    """``input`` itself: it holds its values already (no lazy negation here)."""
    return check_tensor("resolve_neg", input)


register_post_accumulate_grad_hook = hooks.register_post_accumulate_grad_hook   # a method


class DimError(AxisError, RuntimeError):
    """A dim out of range where torch raises a RuntimeError (``narrow_copy``); also the
    ``AxisError`` (an IndexError and a ValueError) of every other op."""


def narrow_copy(input, dim, start, length):
    """``torch.narrow_copy``: ``narrow(input, dim, start, length)`` in new memory, row-major
    as torch's, in the graph."""
    check_tensor("narrow_copy", input)
    try:
        normalize_axis("narrow_copy", dim, input.ndim, single=True)
    except AxisError as error:
        raise DimError(str(error)) from None
    return _copied(shape_ops.narrow(input, dim, start, length))


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False):
    """A tensor of ``size`` whose memory has ``stride`` (elements), of this tensor's dtype
    and device unless given (``Tensor.new_empty_strided``); its values are zeros here."""
    size = size_args("new_empty_strided", (size,))
    stride = _ints("new_empty_strided", "stride", stride)
    if len(size) != len(stride):
        raise RuntimeError(f"new_empty_strided(): dimensionality of sizes ({len(size)}) must "
                           f"match dimensionality of strides ({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"new_empty_strided(): Storage size calculation overflowed with "
                           f"sizes={list(size)} and strides={list(stride)}")
    dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
    needed = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    memory = np.zeros(needed, dtype=dtype)
    array = np.lib.stride_tricks.as_strided(memory, size, [s * dtype.itemsize for s in stride])
    device = self.device if device is None else backend.check_device(device)
    return _tensor.Tensor._leaf("new_empty_strided", backend.to_device(array, device),
                                requires_grad)


def chalf(self, memory_format=None):
    """Refused: complex32 (``torch.chalf``) has no NumPy dtype; ``cfloat()`` gives
    complex64."""
    raise TypeError("chalf(): complex32 (torch.complex32, chalf) is not supported here: "
                    "NumPy has no complex half dtype; use x.cfloat() (complex64)")


# ----- operators: the shifts, and the in-place forms of &, |, ^, <<, >>, //, % --------------
__lshift__, __rlshift__ = operators(bitwise_left_shift)
__rshift__, __rrshift__ = operators(bitwise_right_shift)
__ilshift__, __irshift__ = bitwise_left_shift_, bitwise_right_shift_
__iand__, __ior__, __ixor__ = bitwise_and_, bitwise_or_, bitwise_xor_
__ifloordiv__ = _augmented(floor_divide_, logical.floor_divide)
__imod__ = _augmented(remainder_, logical.remainder)
__ipow__ = _augmented(binary.pow_, elementwise.pow)       # x **= 2 writes x, as torch's


def __contains__(self, element):
    """``element in x``: whether any element of x equals it (a number or a Tensor), as
    torch's ``(x == element).any()``."""
    if not isinstance(element, (numbers.Number, _tensor.Tensor)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you "
                           f"passed in a {type(element).__name__}.")
    return bool((self == element).any())
