"""``F.pad`` with PyTorch's semantics: the constant mode one node (``ConstantPadNd``, whose
nodes are torch's ``ConstantPadNdBackward0``), and the reflect, replicate and circular
modes an index of the input's positions along each padded dim (``pad_by_index``,
``index_select``'s node).
``constant_pad_nd`` is torch's top-level name for the constant mode."""

import numpy as np

from . import backend, ops
from .autograd.double import gradient_reads
from .autograd.function import Function
from .dtypes import check_number, factory_shape, float_of

__all__ = ["pad", "constant_pad_nd", "pad_by_index", "ConstantPadNd"]


# ----- pad: constant ------------------------------------------------------------------------
def pad_array(array, pads, value):
    """``array`` with ``pads[d] = (before, after)`` elements of ``value`` added around each
    dim d, a negative amount cropping that many: the interior copied into one new array."""
    xp = backend.array_module(array)
    kept = array[tuple(slice(max(-b, 0), n - max(-e, 0))
                       for n, (b, e) in zip(array.shape, pads))]
    out = xp.full(tuple(n + b + e for n, (b, e) in zip(array.shape, pads)), value, array.dtype)
    out[tuple(slice(max(b, 0), max(b, 0) + k) for (b, _), k in zip(pads, kept.shape))] = kept
    return out


class ConstantPadNd(Function):
    """``F.pad``'s constant mode in one node (``ConstantPadNdBackward0``, as torch's): the input
    copied into a new array of ``value``; its gradient is the gradient cropped back (and
    zeros where forward cropped): the same pad with the amounts negated and 0, a linear map
    whose gradient is itself again, so it differentiates to any order."""

    graph_reads_inputs = False       # a linear map: its formula reads no input values

    @staticmethod
    def forward(ctx, x, pads, value):
        ctx.pads = pads
        return pad_array(x, pads, value)

    @staticmethod
    def backward(ctx, grad):
        return pad_array(grad, _negated(ctx.pads), 0)

    @staticmethod
    def graph_backward(ctx, grad):
        return ConstantPadNd.apply(grad, pads=_negated(ctx.pads), value=0)


def _negated(pads):
    return tuple((-before, -after) for before, after in pads)


# ----- pad: reflect, replicate, circular --------------------------------------------------
def _source(mode, size, before, after):
    # for each output position j along a dim of `size`, padded by before/after (negative:
    # cropped), the input position it copies (PyTorch's index arithmetic)
    i = np.arange(-before, size + after)
    if mode == "reflect":
        i = np.abs(i)                                     # -k -> k
        return np.where(i > size - 1, 2 * (size - 1) - i, i)
    if mode == "replicate":
        return np.clip(i, 0, size - 1)
    # circular: around what is left after cropping, positions start .. start + kept - 1
    start, kept = max(-before, 0), size - max(-before, 0) - max(-after, 0)
    return start + (np.arange(size + before + after) - max(before, 0)) % kept


def pad_by_index(fn, input, pad, mode):
    """``input`` padded in ``mode`` ("reflect", "replicate" or "circular"; ``F.pad`` calls it
    after its own checks): each padded dim read through an index of input positions
    (``index_select``, whose backward sums what each position gave). PyTorch's rules: 2
    pad amounts for a 2-D or 3-D input, 4 for 3-D or 4-D, 6 for 4-D or 5-D; reflect pads
    below the dim's size, circular ones at most it."""
    count, ndim = len(pad), input.ndim
    if count not in (2, 4, 6) or ndim not in (count // 2 + 1, count // 2 + 2):
        raise NotImplementedError(
            f"{fn}: Padding size {count} is not supported for {ndim}D input tensor; for "
            "non-constant padding: 2 for a 2D or 3D input (the last dim), 4 for 3D or 4D (the "
            "last 2), 6 for 4D or 5D (the last 3)")
    if mode != "circular" and input.dtype == np.bool_:
        raise NotImplementedError(f"{fn}: {mode} padding is not implemented for bool tensors")
    batched = ndim == count // 2 + 2
    if mode != "circular" and any(n == 0 for n in input.shape[int(batched):]):
        raise RuntimeError(f"{fn}: {mode} padding expects a tensor whose dims are non-zero but "
                           f"for a batch dim, got shape {list(input.shape)}")
    sizes = [input.shape[ndim - 1 - k] + pad[2 * k] + pad[2 * k + 1] for k in range(count // 2)]
    if mode != "circular" and max(sizes) < 1:    # PyTorch's kernels: one size >= 1 will do
        raise RuntimeError(f"{fn}: input {list(input.shape)} is too small for padding {pad}: "
                           f"the output sizes of the padded dims would be {sizes[::-1]}")
    out = input
    for k in range(count // 2):
        axis, before, after = ndim - 1 - k, pad[2 * k], pad[2 * k + 1]
        size = input.shape[axis]
        if mode == "reflect" and not (before < size and after < size):
            raise RuntimeError(f"{fn}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) at dimension "
                               f"{axis} of input {list(input.shape)}")
        kept = size - max(-before, 0) - max(-after, 0)
        if mode == "circular" and not (before <= size and after <= size):
            raise RuntimeError(f"{fn}: Padding value causes wrapping around more than once "
                               f"(padding ({before}, {after}) of dimension {axis}, of size "
                               f"{size})")
        if mode == "circular" and max(before, after) > kept and size + before + after > 0:
            raise RuntimeError(f"{fn}: circular padding ({before}, {after}) of dimension "
                               f"{axis} wraps around more than the {kept} positions left "
                               "after cropping (PyTorch reads past its input there)")
        if size + before + after < 0:
            raise RuntimeError(f"{fn}: input (size {size} at dimension {axis}) is too small for "
                               f"padding ({before}, {after}): the output size would be "
                               f"{size + before + after}")
        if mode == "circular" and size == 0:
            continue
        out = ops.index_select(out, axis, _source(mode, size, before, after))
    return out if out is not input else input.clone()


def pad(input, pad, mode="constant", value=None):
    """``input`` padded around its last ``len(pad) // 2`` dims (``F.pad``): ``pad = (left,
    right)`` of the last dim, then ``(top, bottom)`` of the one before, ...; a negative
    amount crops.

    Modes: "constant" (``value``, 0 when None: one ``ConstantPadNd`` node); "reflect"
    (mirrored without repeating the edge), "replicate" (the edge repeated), "circular"
    (wrapped), each an index of the input's positions along each padded dim
    (``pad_by_index``, with PyTorch's rules on which dims and amounts they take); they take
    no ``value`` but 0.
    A crop past a dim (constant) or to a negative size is PyTorch's RuntimeError.

    Example:
        >>> F.pad(x, (1, 2))                        # x (N, L) -> (N, 1 + L + 2)
        >>> F.pad(img, (1, 1, 1, 1), mode="reflect")   # (N, C, H, W) -> (N, C, H + 2, W + 2)
    """
    ops.base.check_tensor("pad", input)
    if isinstance(pad, (str, bytes)) or not hasattr(pad, "__len__"):
        raise TypeError(f"pad: pad must be a tuple of ints, got {type(pad).__name__}")
    pad = factory_shape(pad, "pad(): pad")     # (1, True) is (1, 1), tensor(1) 1, as torch's
    for amount in pad:
        check_number("pad", "pad", amount, integer=True)
    if len(pad) % 2:
        raise RuntimeError(f"pad: Padding length must be divisible by 2, got {tuple(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"pad: Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.ndim}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: Unrecognised padding mode {mode}")
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'pad: Padding mode "{mode}" doesn\'t take in value argument')
        out = pad_by_index("pad", input, tuple(int(n) for n in pad), mode)
        # torch's reflection and replication backward read the input (autograd/double.py)
        return out if mode == "circular" else gradient_reads(out, input)
    value = 0.0 if value is None else value
    if not isinstance(value, (bool, np.bool_)):     # torch's float argument takes a bool too
        value = float_of(value, "pad", "value")
    pads = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        axis, before, after = input.ndim - 1 - i, int(pad[2 * i]), int(pad[2 * i + 1])
        if input.shape[axis] + min(before, 0) + min(after, 0) < 0:    # PyTorch's narrow()s
            raise RuntimeError(f"pad: negative padding ({before}, {after}) crops more than the "
                               f"{input.shape[axis]} positions of dimension {axis}")
        pads[axis] = (before, after)
    return ConstantPadNd.apply(input, pads=tuple(pads), value=value)


def constant_pad_nd(input, pad, value=0):
    """``torch.constant_pad_nd``: ``F.pad(input, pad, "constant", value)``, ``pad`` the
    (before, after) amounts of the last dims, the last dim first; a negative amount crops.

    Example:
        >>> mg.constant_pad_nd(mg.ones(2, 3), (1, 1))             # (2, 5), zeros at the ends
    """
    if hasattr(pad, "__len__") and len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    return _pad(input, pad, "constant", value)


_pad = pad                  # F.pad, under a name constant_pad_nd's argument does not hide
