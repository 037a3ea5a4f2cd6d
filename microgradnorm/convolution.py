"""Convolutions and pooling with ``torch.nn.functional``'s semantics: conv1d and conv2d,
max and average pooling, adaptive average pooling and unfold (im2col); the helpers take the
number of spatial dims, and convolution_3d.py calls them with 3 (LP pooling, composed over
these poolings, is lp_pool.py's).

Each is a composition over one node, ``Im2Col``, which copies every kernel-sized window of
the (padded) input into a place of its own: a convolution is then one matmul with the
weight, a pooling a max or a sum over the window, and autograd comes from those ops
(adaptive average pooling sums its windows one dim at a time with a node of its own,
``AdaptiveSum``, for the same reason). A channels-last input (or conv weight) gives a
channels-last output, as torch's CPU kernels write it (``_torch_layout``): one copy at the
end, where those kernels run in that layout.
``Im2Col`` earns a node of its own: its forward and its backward (col2im) are one strided
slice per kernel place, k_h·k_w vectorised copies or adds, where a composition of gathers
would scatter every element back one by one with ``add.at`` (col2im of a (8, 16, 32, 32)
input, 3×3 kernel: 2 ms against add.at's 48 ms on the 2-core development machine).
"""

import math
from collections import namedtuple

import numpy as np

from . import backend, ops
from .autograd.double import gradient_reads
from .autograd.function import Function
from .autograd.profiler import aten_op
from .dtypes import NotFloatingError, check_number, factory_shape, index_of, is_floating
from .fused.arguments import RankError
from .ops import memory_formats
from .ops.base import constant
from .tensor import Tensor

__all__ = ["adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "conv1d", "conv2d", "max_pool1d",
           "max_pool2d", "unfold"]


# ----- the windows ------------------------------------------------------------------------
class Geometry(namedtuple("Geometry", "kernel stride padding dilation")):
    """Where the windows lie, one entry per spatial dim: ``kernel`` sizes, ``stride``,
    ``padding`` as (before, after) pairs, ``dilation``."""

    def out_size(self, spatial):
        """The number of windows along each dim: ⌊(L + before + after − d(k − 1) − 1)/s⌋ + 1."""
        return tuple((n + before + after - d * (k - 1) - 1) // s + 1
                     for n, k, s, (before, after), d in
                     zip(spatial, self.kernel, self.stride, self.padding, self.dilation))

    def taken(self, place, out_size):
        """The slices of the padded input that kernel ``place`` sees in every window."""
        return (slice(None), slice(None)) + tuple(
            slice(k * d, k * d + s * (o - 1) + 1, s)
            for k, d, s, o in zip(place, self.dilation, self.stride, out_size))


def im2col(x, geometry, fill=0):
    """Every window of ``x``: (N, C, *spatial) -> (N, C, *kernel, *out), element
    [n, c, *k, *o] = x[n, c, *(o·stride + k·dilation − before)], ``fill`` outside x."""
    xp = backend.array_module(x)
    out_size = geometry.out_size(x.shape[2:])
    padded = x
    if any(before or after for before, after in geometry.padding):
        padded = xp.full(x.shape[:2] + tuple(n + before + after for n, (before, after)
                                             in zip(x.shape[2:], geometry.padding)),
                         fill, x.dtype)
        padded[_inside(x.shape, geometry)] = x
    cols = xp.empty(x.shape[:2] + tuple(geometry.kernel) + out_size, x.dtype)
    for place in np.ndindex(*geometry.kernel):
        cols[(slice(None), slice(None)) + place] = padded[geometry.taken(place, out_size)]
    return cols


def col2im(cols, shape, geometry):
    """The adjoint of ``im2col``: each window's values added back where the window came
    from (overlapping windows accumulate), the padding cropped. (N, C, *kernel, *out) ->
    ``shape``."""
    xp = backend.array_module(cols)
    dims = len(geometry.kernel)
    out_size = cols.shape[2 + dims:]
    padded = xp.zeros(shape[:2] + tuple(n + before + after for n, (before, after)
                                        in zip(shape[2:], geometry.padding)), cols.dtype)
    for place in np.ndindex(*geometry.kernel):
        padded[geometry.taken(place, out_size)] += cols[(slice(None), slice(None)) + place]
    return padded[_inside(shape, geometry)]


def _inside(shape, geometry):
    # the slices of the padded array that hold the input itself
    return (slice(None), slice(None)) + tuple(
        slice(before, before + n) for n, (before, _) in zip(shape[2:], geometry.padding))


class Im2Col(Function):
    """``im2col`` as a graph node; backward is ``col2im`` of the gradient. Saves nothing
    but the input's shape and the geometry."""

    @staticmethod
    def forward(ctx, x, geometry, fill):
        ctx.shape, ctx.geometry = x.shape, geometry
        return im2col(x, geometry, fill)

    @staticmethod
    def backward(ctx, grad):
        return col2im(grad, ctx.shape, ctx.geometry)

    graph_reads_inputs = False       # a linear map: its formula reads no input values

    @staticmethod
    def graph_backward(ctx, grad):
        # create_graph: the same col2im as a node (whose own gradient is im2col again); the
        # fill is a constant, so max pooling's windows take the same gradient
        from .convolution_more import Col2Im        # (which imports this module)
        return Col2Im.apply(grad, shape=ctx.shape, geometry=ctx.geometry)


# ----- argument checks --------------------------------------------------------------------
INTEGERS = tuple(np.dtype(t) for t in (np.uint8, np.int8, np.int16, np.int32, np.int64))


def _check_dtype(fn, x, others):
    """torch's CPU kernels take every floating dtype and, of the others, ``others``: a
    NotImplementedError (a RuntimeError) for the rest, as torch's."""
    if not is_floating(x.dtype) and x.dtype not in others:
        raise NotImplementedError(f"{fn}: not implemented for dtype {x.dtype}; it takes "
                                  f"floating dtypes{' and ' if others else ''}"
                                  f"{', '.join(str(d) for d in others)}")


def _ints(fn, name, value, dims, minimum):
    """``value`` (an int or a sequence of 1 or ``dims`` ints) as ``dims`` ints, each at least
    ``minimum``: a TypeError for a non-int, a RuntimeError (torch's) for a bad count or size."""
    values = (factory_shape(value, f"{fn}(): {name}") if isinstance(value, (tuple, list))
              else (index_of(value),))   # torch's int lists: (2, True) is (2, 1), tensor(2) 2
    for v in values:
        check_number(fn, name, v, integer=True)
    if len(values) not in (1, dims):
        raise RuntimeError(f"{fn}: {name} must be an int or {dims} ints, got {value!r}")
    if any(v < minimum for v in values):
        raise RuntimeError(f"{fn}: {name} must be {'positive' if minimum else 'non-negative'}"
                           f", got {value!r}")
    return tuple(int(v) for v in values) * (dims // len(values))


def _torch_layout(out, *inputs):
    """``out`` in the memory format the first of ``inputs`` that suggests one does
    (channels-last), as torch's CPU convolution and pooling kernels write it, else ``out``:
    one copy, a node whose backward passes the gradient on."""
    for t in inputs:
        form = memory_formats.suggest_memory_format(t._array)
        if form is not memory_formats.contiguous_format:
            return out.contiguous(memory_format=form)
    return out


def _ntuple(value, n):
    # torch's _single, _pair, _triple, unchecked: an int n times, a sequence as a tuple
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def _check_input(fn, input, dims, name="input", empty_batch_only=False):
    """``input`` as (N, C, *spatial) and whether it was unbatched ((C, *spatial));
    ``empty_batch_only``: unfold's rules, only the batch may be empty."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (dims + 1, dims + 2):
        # too few dims: torch's IndexError where it reads dim -3 (unfold, avg_pool2d), its
        # RuntimeError where it checks the rank (RankError is both); too many: RuntimeError
        few = ops.OutOfRangeError if empty_batch_only and input.ndim < 3 else RankError
        raise (few if input.ndim < dims + 1 else ops.ShapeError)(
            f"{fn}: expected a {dims + 1}-D (unbatched) or {dims + 2}-D (batched) {name}, got "
            f"shape {input.shape}")
    if empty_batch_only and 0 in input.shape[-dims - 1:]:
        raise RuntimeError(f"{fn}: expected non-empty channel and spatial dims (an empty "
                           f"batch is allowed), got {name} of shape {input.shape}")
    unbatched = input.ndim == dims + 1
    return (input.reshape((1,) + input.shape) if unbatched else input), unbatched


def _check_windows(fn, spatial, geometry):
    """Every window must fit the padded input: at least one output along each dim."""
    out_size = geometry.out_size(spatial)
    if any(n < 1 for n in out_size):
        raise RuntimeError(f"{fn}: the kernel {geometry.kernel} (dilation {geometry.dilation}) "
                           f"is larger than the padded input {tuple(spatial)} (padding "
                           f"{geometry.padding}): output size {out_size}, expected >= 1")
    return out_size


# ----- convolutions -----------------------------------------------------------------------
@aten_op(7)     # a profile's aten::conv2d, ... holds the nodes, torch's 7 arguments
def _convolution(fn, dims, input, weight, bias, stride, padding, dilation, groups):
    x, unbatched = _check_input(fn, input, dims)
    if 0 in x.shape[2:] and x.shape[0] and x.shape[1]:
        raise RuntimeError(f"{fn}: only an empty batch or no channels may come with an empty "
                           f"spatial dim, got input of shape {input.shape}")
    if not isinstance(weight, Tensor) or weight.ndim != dims + 2:
        raise RuntimeError(f"{fn}: weight must be a {dims + 2}-D Tensor (out_channels, "
                           f"in_channels / groups, *kernel), got "
                           f"{getattr(weight, 'shape', type(weight).__name__)}")
    check_number(fn, "groups", groups := index_of(groups), integer=True)    # tensor(1): 1
    out_channels, group_channels, *kernel = weight.shape
    if groups < 1 or out_channels == 0 or out_channels % groups:
        raise RuntimeError(f"{fn}: groups must be a positive int dividing out_channels "
                           f"(weight's dim 0), got groups={groups!r}, weight {weight.shape}")
    if x.shape[1] != group_channels * groups:
        raise RuntimeError(f"{fn}: given groups={groups} and weight {weight.shape}, expected "
                           f"input {input.shape} to have {group_channels * groups} channels, "
                           f"got {x.shape[1]}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (not isinstance(t, Tensor) or t.dtype != x.dtype):
            # a bool input: torch's NotImplementedError (no bool kernel), a RuntimeError too
            raise (NotFloatingError if x.dtype == bool else RuntimeError)(
                f"{fn}: input ({x.dtype}) and {name} "
                f"({getattr(t, 'dtype', type(t).__name__)}) must have one dtype")
    _check_dtype(fn, x, INTEGERS)
    if bias is not None and bias.shape != (out_channels,):
        raise RuntimeError(f"{fn}: bias must have shape ({out_channels},) for weight "
                           f"{weight.shape}, got {bias.shape}")
    stride = _ints(fn, "stride", stride, dims, 1)
    dilation = _ints(fn, "dilation", dilation, dims, 1)
    geometry = Geometry(tuple(kernel), stride, _conv_padding(fn, padding, kernel, stride,
                                                             dilation), dilation)
    out_size = _check_windows(fn, x.shape[2:], geometry)
    n, kernel_size = x.shape[0], group_channels * math.prod(kernel)
    cols = Im2Col.apply(x, geometry=geometry, fill=0)               # (N, C, *kernel, *out)
    cols = cols.reshape(n, groups, kernel_size, math.prod(out_size))   # (N, g, C/g·K, L)
    w = weight.reshape(groups, out_channels // groups, kernel_size)     # (g, O/g, C/g·K)
    y = (w @ cols).reshape((n, out_channels) + out_size)                # (N, O, *out)
    if bias is not None:
        y = y + bias.reshape((out_channels,) + (1,) * dims)
    # conv3d stays row-major: torch's layout there is its oneDNN path's choice
    y = y.reshape(y.shape[1:]) if unbatched else _torch_layout(y, x, weight) if dims == 2 else y
    return gradient_reads(y, x, unused=True)   # torch's one node: its input gradient's input


def _conv_padding(fn, padding, kernel, stride, dilation):
    """(before, after) per dim: ints as given, "valid" none, "same" d(k − 1) split with the
    odd one after (torch's), which keeps the length at stride 1 only."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * len(kernel)
        if padding != "same":
            raise RuntimeError(f"{fn}: padding must be 'same', 'valid', an int or a tuple of "
                               f"ints, got {padding!r}")
        if any(s != 1 for s in stride):
            raise RuntimeError(f"{fn}: padding='same' is not supported for strided "
                               f"convolutions, got stride {stride}")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((total // 2, total - total // 2) for total in totals)
    return tuple((p, p) for p in _ints(fn, "padding", padding, len(kernel), 0))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    r"""1-D convolution (cross-correlation, as torch's) over (N, C_in, L) (``F.conv1d``):

    :math:`y[n, o, p] = b[o] + \sum_{c, k} w[o, c, k]\, x[n, g_o C_{in}/g + c,
    p\,s + k\,d - \text{pad}]`, the sum over the input channels of output channel o's group.

    Args:
        input: (N, C_in, L) or (C_in, L). weight: (C_out, C_in / groups, k).
        bias: (C_out,) or None. stride, dilation: an int or (int,), at least 1.
        padding: an int or (int,) of zeros on each side, ``"valid"`` (none) or ``"same"``
            (output length L; stride 1 only).
        groups: split channels into ``groups`` independent convolutions.

    Shape: output (N, C_out, ⌊(L + 2·pad − d(k − 1) − 1)/s⌋ + 1), unbatched without N.

    Example:
        >>> F.conv1d(x, w, padding="same")       # x (8, 3, 20), w (4, 3, 5) -> (8, 4, 20)
    """
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    r"""2-D convolution (cross-correlation, as torch's) over (N, C_in, H, W) (``F.conv2d``):

    :math:`y[n, o, i, j] = b[o] + \sum_{c, k_h, k_w} w[o, c, k_h, k_w]\,
    x[n, g_o C_{in}/g + c, i s_h + k_h d_h - \text{pad}_h, j s_w + k_w d_w - \text{pad}_w]`,
    computed as im2col then one matmul per group.

    Args:
        input: (N, C_in, H, W) or (C_in, H, W). weight: (C_out, C_in / groups, k_h, k_w).
        bias: (C_out,) or None. stride, dilation: an int or (int, int), at least 1.
        padding: an int or (int, int) of zeros on each side, ``"valid"`` or ``"same"``
            (stride 1 only; an odd total puts the extra zero after, as torch).
        groups: split channels into ``groups`` independent convolutions.

    Shape: output (N, C_out, H_out, W_out), H_out = ⌊(H + 2·pad_h − d_h(k_h − 1) − 1)/s_h⌋ + 1.

    Example:
        >>> F.conv2d(x, w, b, padding=1)    # x (8, 1, 12, 12), w (4, 1, 3, 3) -> (8, 4, 12, 12)
    """
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of (N, C, H, W) as columns (``F.unfold``, im2col): column l holds
    block l's C·k_h·k_w values, channel first, then kernel row, then kernel column.

    Shape: input (N, C, H, W) or (C, H, W); output (N, C·k_h·k_w, L) or (C·k_h·k_w, L),
    L = H_out·W_out as for ``conv2d``.

    Example:
        >>> F.unfold(x, 3, padding=1).shape      # x (2, 4, 5, 5) -> (2, 36, 25)
    """
    x, unbatched = _check_input("unfold", input, 2, empty_batch_only=True)
    _check_dtype("unfold", x, (np.dtype(np.bool_),))        # a copy: bool too, as torch
    kernel = _ints("unfold", "kernel_size", kernel_size, 2, 1)
    padding = _ints("unfold", "padding", padding, 2, 0)
    geometry = Geometry(kernel, _ints("unfold", "stride", stride, 2, 1),
                        tuple((p, p) for p in padding), _ints("unfold", "dilation", dilation, 2, 1))
    out_size = _check_windows("unfold", x.shape[2:], geometry)
    cols = Im2Col.apply(x, geometry=geometry, fill=0)                # (N, C, kh, kw, oh, ow)
    cols = cols.reshape(x.shape[0], x.shape[1] * math.prod(kernel), math.prod(out_size))
    return cols.reshape(cols.shape[1:]) if unbatched else cols


# ----- pooling ----------------------------------------------------------------------------
def _pool_geometry(fn, dims, x, kernel_size, stride, padding, dilation, ceil_mode):
    """The windows of a pooling, torch's output size: ⌊ or ⌈(L + 2p − d(k − 1) − 1)/s⌉ + 1,
    less a last window (ceil_mode) that would start in the right padding; the padding
    after grows to hold the last window."""
    if any(n == 0 for n in x.shape[1:]):
        raise RuntimeError(f"{fn}: expected non-empty channel and spatial dims (an empty "
                           f"batch is allowed), got input of shape {x.shape}")
    kernel = _ints(fn, "kernel_size", kernel_size, dims, 1)
    stride = kernel if stride is None or isinstance(stride, (tuple, list)) and not stride else \
        _ints(fn, "stride", stride, dims, 1)
    padding = _ints(fn, "padding", padding, dims, 0)
    dilation = _ints(fn, "dilation", dilation, dims, 1)
    if not isinstance(ceil_mode, (bool, np.bool_)):
        raise TypeError(f"{fn}: ceil_mode must be True or False, got {ceil_mode!r}")
    if any(p > k // 2 for p, k in zip(padding, kernel)):     # torch's: the kernel undilated
        raise RuntimeError(f"{fn}: padding must be at most half the kernel size, got "
                           f"padding {padding}, kernel_size {kernel}")
    out_size, afters = [], []
    for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        out = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (out - 1) * s >= n + p:
            out -= 1
        out_size.append(out)
        afters.append(max(p, (out - 1) * s + d * (k - 1) + 1 - n - p))
    if any(o < 1 for o in out_size):
        raise RuntimeError(f"{fn}: output size {tuple(out_size)} is too small for input "
                           f"{x.shape} (kernel_size {kernel}, stride {stride}, padding "
                           f"{padding}, dilation {dilation})")
    return Geometry(kernel, stride, tuple(zip(padding, afters)), dilation), padding


def _tiles(x, geometry, out_size):
    """Max pooling's fast path, where the windows tile the input without overlap or padding
    (stride == kernel, dilation 1, no padding, ceil_mode without a partial window; the rows
    past the last window are dropped): each window as the last, contiguous axis, (N, C,
    *out, K), by one reshape-permute copy; None for every other geometry (im2col's path).
    Its max and first-max index are then an argmax along the last axis, and backward puts
    each gradient into a zero window and copies back once, where col2im adds K strided
    slices. Forward and backward of (64, 64, 24, 24) float32, kernel 2, one thread: 39-40
    ms against im2col's 42-45 ms (medians of 15; the argmax over rows of 4 and the two
    permuting copies are most of what is left)."""
    kernel = geometry.kernel
    if (geometry.stride != kernel or any(d != 1 for d in geometry.dilation)
            or any(before or after for before, after in geometry.padding)):
        return None
    tiled = tuple(o * k for o, k in zip(out_size, kernel))
    if tiled != x.shape[2:]:                 # floor mode: drop what no window covers
        x = x[(slice(None), slice(None)) + tuple(slice(0, m) for m in tiled)]
    dims = len(kernel)
    split = x.reshape(x.shape[:2] + sum(((o, k) for o, k in zip(out_size, kernel)), ()))
    order = (0, 1) + tuple(range(2, 2 + 2 * dims, 2)) + tuple(range(3, 3 + 2 * dims, 2))
    return split.permute(order).reshape(x.shape[:2] + out_size + (math.prod(kernel),))


@aten_op(6, lambda fn, args: f"aten::{fn}_with_indices" if args[-1] else f"aten::{fn}")
def _max_pool(fn, dims, input, kernel_size, stride, padding, dilation, ceil_mode,
              return_indices):
    x, unbatched = _check_input(fn, input, dims)
    _check_dtype(fn, x, INTEGERS if dims >= 2 else ())
    geometry, _ = _pool_geometry(fn, dims, x, kernel_size, stride, padding, dilation,
                                 ceil_mode)
    # the padding never wins: -inf, or the dtype's least value (which only ties with itself)
    fill = -np.inf if is_floating(x.dtype) else np.iinfo(x.dtype).min
    n, channels, out_size = x.shape[0], x.shape[1], geometry.out_size(x.shape[2:])
    window = math.prod(geometry.kernel)
    # the first maximum in the kernel's row-major order (or the first NaN) takes the
    # gradient, as torch's scan of each window
    blocks = _tiles(x, geometry, out_size)
    if blocks is not None:
        values, chosen = blocks.max(dim=-1)
    else:
        windows = Im2Col.apply(x, geometry=geometry, fill=fill)      # (N, C, *kernel, *out)
        values, chosen = windows.reshape((n, channels, window) + out_size).max(dim=2)
    if unbatched:
        values = values.reshape(values.shape[1:])
    else:
        values = _torch_layout(values, x)        # (max_pool3d: channels_last_3d stays so)
    gradient_reads(values, x)        # torch's backward reads the input (autograd/double.py)
    if not return_indices:
        return values
    # each window position's flat index into the input's spatial dims, -1 in the padding
    xp = x.xp
    positions = xp.arange(math.prod(x.shape[2:]), dtype=np.int64).reshape((1, 1) + x.shape[2:])
    positions = im2col(positions, geometry, fill=-1).reshape((1, 1, window) + out_size)
    indices = xp.take_along_axis(xp.broadcast_to(positions, (n, channels) + positions.shape[2:]),
                                 chosen._array[:, :, None], axis=2)[:, :, 0]
    if unbatched:
        return values, constant(indices[0])
    return values, _torch_layout(constant(indices), x)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    r"""The maximum of each window along L (``F.max_pool1d``):
    :math:`y[n, c, o] = \max_k x[n, c, o\,s + k\,d - p]`, padding never chosen.

    Args:
        kernel_size: the window size. stride: default ``kernel_size``. padding: at most half
            the kernel (undilated, as torch's check), each side. dilation: the step
            between window elements.
        ceil_mode: round the output size up (a last, partial window), as torch.
        return_indices: also return each maximum's index along L (int64).

    Shape: (N, C, L) or (C, L) -> (N, C, L_out); the gradient goes to each window's first
    maximum.

    Example:
        >>> F.max_pool1d(x, 2)                   # (8, 4, 10) -> (8, 4, 5)
    """
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    r"""The maximum of each window over H, W (``F.max_pool2d``):
    :math:`y[n, c, i, j] = \max_{k_h, k_w} x[n, c, i s_h + k_h d_h - p_h, j s_w + k_w d_w - p_w]`.

    Args:
        kernel_size, stride (default ``kernel_size``), padding, dilation: an int or a pair.
        ceil_mode: round the output size up, as torch.
        return_indices: also return each maximum's flat index into H·W (int64).

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out); the gradient goes to each
    window's first maximum in row-major order, as torch's.

    Example:
        >>> F.max_pool2d(x, 2)                   # (8, 4, 12, 12) -> (8, 4, 6, 6)
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


@aten_op(lambda dims: 6 if dims == 1 else 7)      # avg_pool1d takes no divisor_override
def _avg_pool(fn, dims, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override=None):
    x, unbatched = _check_input(fn, input, dims)
    _check_dtype(fn, x, (np.dtype(np.int64),))
    geometry, padding = _pool_geometry(fn, dims, x, kernel_size, stride, padding, 1,
                                       ceil_mode)
    if dims == 3 and any(n < k for n, k in zip(x.shape[2:], geometry.kernel)):   # torch's 3-D
        raise RuntimeError(f"{fn}: input image {x.shape[2:]} smaller than kernel size "
                           f"{geometry.kernel} (the padding not counted)")
    if divisor_override is not None:
        check_number(fn, "divisor_override", divisor_override, integer=True)
        if divisor_override == 0:
            raise RuntimeError(f"{fn}: divisor_override must be non-zero, got 0")
    out_size = geometry.out_size(x.shape[2:])
    divisor = np.asarray(divisor_override or _window_counts(x.shape[2:], geometry, padding,
                                                            out_size, count_include_pad))
    window_shape = x.shape[:2] + (math.prod(geometry.kernel),) + out_size
    if not is_floating(x.dtype):       # no graph for integers: torch's truncating division
        total = im2col(x._array, geometry).reshape(window_shape).sum(2)
        xp, divisor = x.xp, backend.to_device(divisor, x.device)
        out = abs(total) // abs(divisor) * xp.sign(total) * xp.sign(divisor)
        out = constant(out[0] if unbatched else out)
    else:
        windows = Im2Col.apply(x, geometry=geometry, fill=0)         # (N, C, *kernel, *out)
        total = windows.reshape(window_shape).sum(dim=2)
        out = total / constant(backend.to_device(divisor.astype(x.dtype), x.device))
        out = out.reshape(out.shape[1:]) if unbatched else out
    out = _torch_layout(out, x) if dims == 2 and not unbatched else out    # (3-D: row-major)
    return gradient_reads(out, x)            # torch's backward reads the input


def _window_counts(spatial, geometry, padding, out_size, count_include_pad):
    """The divisor of each window: its elements inside the input, with the zero padding too
    when ``count_include_pad`` (never the part past it that ceil_mode adds), (*out)."""
    counts = np.ones((), np.int64)
    for n, k, s, p, o in zip(spatial, geometry.kernel, geometry.stride, padding, out_size):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        counts = np.multiply.outer(counts, end - start)
    return counts


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    r"""The mean of each window along L (``F.avg_pool1d``):
    :math:`y[n, c, o] = \frac{1}{|w_o|}\sum_k x[n, c, o\,s + k - p]`, |w_o| the window's size
    inside the zero-padded input (``count_include_pad``) or inside the input alone.

    Args:
        kernel_size: the window size. stride: default ``kernel_size``. padding: at most half
            the window, each side. ceil_mode: round the output size up, as torch.
        count_include_pad: count the zero padding in the divisor.

    Shape: (N, C, L) or (C, L) -> (N, C, L_out). Integer inputs give integers, the division
    truncated as torch's.

    Example:
        >>> F.avg_pool1d(x, 3, stride=1, padding=1)      # (8, 4, 10) -> (8, 4, 10)
    """
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    r"""The mean of each window over H, W (``F.avg_pool2d``):
    :math:`y[n, c, i, j] = \frac{1}{|w_{ij}|}\sum_{k_h, k_w} x[n, c, i s_h + k_h - p_h,
    j s_w + k_w - p_w]`.

    Args:
        kernel_size, stride (default ``kernel_size``), padding: an int or a pair.
        ceil_mode: round the output size up, as torch.
        count_include_pad: count the zero padding in the divisor |w|.
        divisor_override: a non-zero int dividing every window's sum instead of |w|.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out).

    Example:
        >>> F.avg_pool2d(x, 2)                   # (8, 4, 12, 12) -> (8, 4, 6, 6)
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def adaptive_avg_pool2d(input, output_size):
    r"""Average pooling to a given size (``F.adaptive_avg_pool2d``): output row i averages
    input rows :math:`\lfloor iH/H_o \rfloor` to :math:`\lceil (i+1)H/H_o \rceil - 1` (torch's
    windows, overlapping when H_o does not divide H), and the same over W: each window's sum
    over its count, so an inf or NaN reaches only the windows that hold it, as torch's.

    Args:
        output_size: an int or a pair (H_o, W_o); None in the pair keeps that input size.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_o, W_o).

    Example:
        >>> F.adaptive_avg_pool2d(x, 1)          # (8, 64, 7, 7) -> (8, 64, 1, 1)
    """
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, input, output_size)


def _adaptive_sizes(fn, dims, x, output_size, none_keeps):
    """``output_size`` (an int, or a sequence of ``dims``) as ``dims`` ints >= 0, a None in
    the sequence keeping the input's size where ``none_keeps``: a TypeError for a non-int, a
    RuntimeError for a bad count or size, as torch's."""
    output_size = index_of(output_size)          # a 0-d integer tensor is its int, as torch's
    if isinstance(output_size, (tuple, list)):
        sizes = factory_shape(output_size, f"{fn}(): output_size")     # (2, True): (2, 1)
    else:
        check_number(fn, "output_size", output_size, integer=True)
        sizes = (output_size,) * dims
    if len(sizes) != dims:
        raise RuntimeError(f"{fn}: output_size must be an int or {dims} ints, got "
                           f"{output_size!r}")
    if none_keeps:
        sizes = tuple(n if size is None else size for size, n in zip(sizes, x.shape[2:]))
    for size in sizes:
        check_number(fn, "output_size", size, integer=True)
        if size < 0:
            raise RuntimeError(f"{fn}: output_size must be >= 0, got {output_size!r}")
    return tuple(int(size) for size in sizes)


def _adaptive_windows(size, out):
    """torch's adaptive windows of a dim of ``size`` into ``out``: window i is
    [⌊i·size/out⌋, ⌈(i+1)·size/out⌉), as (out,) starts and ends."""
    i = np.arange(out)
    return i * size // out, -(-(i + 1) * size // out)


def _window_positions(start, end):
    """Windows [start, end) as (n, widest) positions, each row padded with its last position
    (a repeat changes neither the maximum nor which one comes first), and their counts."""
    widest = int((end - start).max(initial=1))
    return np.minimum(start[:, None] + np.arange(widest), end[:, None] - 1), end - start


def _window_sum(a, axis, start, end):
    """The sum of ``a`` over each window [start, end) along ``axis``, one place of the
    windows at a time (K vectorised adds; a sum over the K axis of a (n, K) gather is 5-8x
    slower): the repeats that pad the narrower windows add 0, not 0·x, so an inf or NaN
    stays in its own windows. (..., size, ...) -> (..., n, ...)."""
    xp = backend.array_module(a)
    positions, counts = _window_positions(start, end)                 # (n, K), (n,)
    total = None
    for k in range(positions.shape[1]):
        part = xp.take(a, xp.asarray(positions[:, k]), axis=axis)     # (..., n, ...)
        repeat = k >= counts                                            # (n,)
        if repeat.any():
            repeat = repeat.reshape(repeat.shape + (1,) * (a.ndim - 1 - axis))
            xp.copyto(part, 0, where=xp.asarray(repeat))
        total = part if total is None else xp.add(total, part, out=total)
    return total


class AdaptiveSum(Function):
    """The sums over torch's adaptive windows along ``axis`` (its size into ``out``);
    backward sums the gradient over the windows that hold each position: the same gather
    the other way, where a gather's own backward would scatter with ``add.at`` (10x
    slower). Saves nothing but the sizes."""

    @staticmethod
    def forward(ctx, x, axis, out):
        ctx.axis, ctx.size, ctx.out = axis, x.shape[axis], out
        return _window_sum(x, axis, *_adaptive_windows(x.shape[axis], out))

    @staticmethod
    def backward(ctx, grad):
        return _spread(grad, ctx.axis, ctx.size, ctx.out)

    graph_reads_inputs = False       # a linear map: its formula reads no input values

    @staticmethod
    def graph_backward(ctx, grad):
        return AdaptiveSpread.apply(grad, axis=ctx.axis, size=ctx.size, out=ctx.out)


def _spread(grad, axis, size, out):
    """AdaptiveSum's adjoint: position j along ``axis`` (of ``size``) gets the sum of the
    ``out`` windows' values that hold it. (..., out, ...) -> (..., size, ...)."""
    if out == 0:
        shape = grad.shape[:axis] + (size,) + grad.shape[axis + 1:]
        return backend.array_module(grad).zeros(shape, grad.dtype)
    start, end = _adaptive_windows(size, out)
    position = np.arange(size)
    # position j lies in windows i from the first that ends after j to the first that
    # starts after j (starts and ends never decrease)
    return _window_sum(grad, axis, np.searchsorted(end, position, "right"),
                       np.searchsorted(start, position, "right"))


class AdaptiveSpread(Function):
    """``AdaptiveSum``'s gradient as a node (under ``create_graph=True``): each position
    gets the sum of the windows that hold it (``_spread``); its gradient is ``AdaptiveSum``
    again, so the two differentiate each other to any order."""

    @staticmethod
    def forward(ctx, grad, axis, size, out):
        ctx.axis, ctx.size, ctx.out = axis, size, out
        return _spread(grad, axis, size, out)

    @staticmethod
    def backward(ctx, grad):
        return _window_sum(grad, ctx.axis, *_adaptive_windows(ctx.size, ctx.out))

    graph_reads_inputs = False       # a linear map: its formula reads no input values

    @staticmethod
    def graph_backward(ctx, grad):
        return AdaptiveSum.apply(grad, axis=ctx.axis, out=ctx.out)


@aten_op(2)
def _adaptive_avg_pool(fn, dims, input, output_size):
    """adaptive_avg_pool1d's, 2d's and 3d's: the window sums along one spatial dim at a
    time (``AdaptiveSum``), over the windows' counts; a None size keeps the input's (2-D and
    3-D, as torch's)."""
    x, unbatched = _check_input(fn, input, dims)
    _check_dtype(fn, x, ())              # (a NotImplementedError is a RuntimeError)
    sizes = _adaptive_sizes(fn, dims, x, output_size, none_keeps=dims >= 2)
    if 0 in x.shape[2:] or (dims == 3 and x.shape[1] == 0):
        if all(size == 1 for size in sizes):     # torch's shortcut first: the mean (NaN)
            return input.mean(dim=tuple(range(-dims, 0)), keepdim=True)
        raise RuntimeError(f"{fn}: expected non-empty spatial dims (and channels in 3-D), "
                           f"got input of shape {input.shape}")
    total, counts = x, np.ones((), np.int64)
    for axis, (n, size) in enumerate(zip(x.shape[2:], sizes), start=2):
        total = AdaptiveSum.apply(total, axis=axis, out=size)      # (N, C, out, ...)
        start, end = _adaptive_windows(n, size)
        counts = np.multiply.outer(counts, end - start)                # (*out)
    out = total / constant(backend.to_device(counts.astype(x.dtype), x.device))
    out = out.reshape(out.shape[1:]) if unbatched else \
        _torch_layout(out, x) if dims == 2 else out                 # (3-D: row-major)
    # torch's backward reads x, but for its mean where every size is 1 (autograd/double.py)
    return out if all(size == 1 for size in sizes) else gradient_reads(out, x)
