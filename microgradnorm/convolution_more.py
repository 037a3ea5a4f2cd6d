"""More of ``torch.nn.functional``'s convolution and pooling vocabulary, over convolution.py:
transposed convolutions, fold (col2im), adaptive max pooling, 1-D adaptive average pooling,
max unpooling; and the rarer layers as functions: bilinear, channel_shuffle,
local_response_norm, dropout1d, alpha_dropout.

A transposed convolution is the adjoint of ``conv`` with respect to its input: the weight's
transpose times the input's columns, then ``Col2Im``, which adds every kernel-sized window
back where it lies (convolution.py's ``col2im``, the backward of ``Im2Col``, as a node whose
own backward is ``im2col``). ``fold`` is that node alone. Adaptive max pooling picks
torch's index in each window outside the graph, then gathers there, so its gradient is
torch's: each output's gradient added at its index. Everything else composes ops."""

import math

import numpy as np

from . import backend, dtypes, ops, sampling
from . import generator as streams
from .autograd.double import gradient_reads
from .autograd.function import Function
from .convolution import (Geometry, Im2Col, _adaptive_avg_pool, _adaptive_sizes,
                          _adaptive_windows, _check_dtype, _check_input, _ints, _ntuple,
                          _torch_layout, _window_positions, avg_pool2d, col2im, im2col,
                          max_pool1d, max_pool2d)
from .dtypes import check_number, float_of, index_of, is_floating
from .ops.base import constant, result_dtype
from .ops.indexing import scatter
from .tensor import Tensor

__all__ = ["adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "alpha_dropout",
           "bilinear", "channel_shuffle", "conv_transpose1d", "conv_transpose2d", "dropout1d",
           "feature_alpha_dropout", "fold", "local_response_norm", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_unpool1d", "max_unpool2d"]

LONG = (np.dtype(np.int64),)


class Col2Im(Function):
    """``col2im`` as a graph node: the windows (N, C, *kernel, *windows) added back into
    (N, C, *spatial); backward is ``im2col`` of the gradient (it keeps the geometry, windows)."""

    @staticmethod
    def forward(ctx, cols, shape, geometry):
        ctx.geometry, ctx.windows = geometry, cols.shape[2 + len(geometry.kernel):]
        return col2im(cols, shape, geometry)

    @staticmethod
    def backward(ctx, grad):
        cols = im2col(grad, ctx.geometry)
        # an output_padding of at least the stride (below the dilation) leaves room in the
        # output for windows that were not given: only the first ones were
        return cols[(Ellipsis,) + tuple(slice(0, n) for n in ctx.windows)]

    graph_reads_inputs = False       # a linear map: its formula reads no input values

    @staticmethod
    def graph_backward(ctx, grad):
        # create_graph: im2col as a node (its own gradient col2im again), cut as backward's
        cols = Im2Col.apply(grad, geometry=ctx.geometry, fill=0)
        cut = tuple(slice(0, n) for n in ctx.windows)
        return cols if cols.shape[2 + len(cut):] == ctx.windows else cols[(Ellipsis,) + cut]


# ----- transposed convolutions ------------------------------------------------------------
def _conv_transpose(fn, dims, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):
    x, unbatched = _check_input(fn, input, dims)
    for name, t in (("weight", weight), ("bias", bias)):
        if (t is not None or name == "weight") and not isinstance(t, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    groups = index_of(groups)                    # a 0-d integer tensor is its int, as torch's
    check_number(fn, "groups", groups, integer=True)
    if groups < 1:
        raise RuntimeError(f"{fn}: groups must be positive, got {groups}")
    if weight.ndim != dims + 2 or 0 in weight.shape[:2]:
        raise RuntimeError(f"{fn}: weight must be a non-empty {dims + 2}-D Tensor (in_channels, "
                           f"out_channels / groups, *kernel), got shape {weight.shape}")
    in_channels, group_out, *kernel = weight.shape
    if in_channels % groups:
        raise RuntimeError(f"{fn}: groups={groups} must divide weight's dim 0 (in_channels), "
                           f"got weight {weight.shape}")
    if x.shape[1] != in_channels:
        raise RuntimeError(f"{fn}: weight {weight.shape} expects input {input.shape} to have "
                           f"{in_channels} channels, got {x.shape[1]}")
    if weight.dtype != x.dtype:     # a bool x: torch's NotImplementedError (a RuntimeError)
        raise (dtypes.NotFloatingError if x.dtype == bool else RuntimeError)(
            f"{fn}: input ({x.dtype}) and weight ({weight.dtype}) must have one dtype")
    _check_dtype(fn, x, LONG)
    out_channels = group_out * groups
    if bias is not None and (bias.shape != (out_channels,) or result_dtype(x, bias) != x.dtype):
        raise RuntimeError(f"{fn}: bias must have shape ({out_channels},) and a dtype that "
                           f"{x.dtype} holds, got {bias.shape} {bias.dtype}")
    if any(k == 0 for k in kernel):
        raise RuntimeError(f"{fn}: kernel size must be positive, got weight {weight.shape}")
    stride, dilation = _ints(fn, "stride", stride, dims, 1), _ints(fn, "dilation", dilation,
                                                                   dims, 1)
    padding = _ints(fn, "padding", padding, dims, 0)
    output_padding = _ints(fn, "output_padding", output_padding, dims, 0)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"{fn}: output_padding must be smaller than either stride or "
                           f"dilation, got output_padding {output_padding}, stride {stride}, "
                           f"dilation {dilation}")
    spatial = x.shape[2:]
    out_size = tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1 for n, s, p, d, k, op in
                     zip(spatial, stride, padding, dilation, kernel, output_padding))
    if 0 in spatial or any(n < 1 for n in out_size):
        raise RuntimeError(f"{fn}: input of spatial size {spatial} gives output size "
                           f"{out_size}; both must be positive")
    geometry = Geometry(tuple(kernel), stride, tuple((p, p) for p in padding), dilation)
    n, length = x.shape[0], math.prod(spatial)

    def transposed(x, weight, *bias):       # cols (N, C_out, *kernel, *input's spatial dims)
        x = x.reshape(n, groups, in_channels // groups, length)        # (N, g, C_in/g, L)
        w = weight.reshape(groups, in_channels // groups, group_out * math.prod(kernel))
        cols = (w.mT @ x).reshape((n, out_channels) + tuple(kernel) + spatial)
        y = Col2Im.apply(cols, shape=(n, out_channels) + out_size, geometry=geometry)
        return y + bias[0].reshape((out_channels,) + (1,) * dims) if bias else y
    # half precision: the product, the windows' sums and the bias in float32, rounded once
    y = ops.elementwise.in_opmath(transposed)(x, weight, *(() if bias is None else (bias,)))
    # torch's one node: its input gradient has history and no gradient to x (autograd/double.py)
    return gradient_reads(y.reshape(y.shape[1:]) if unbatched else y, x, unused=True)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    r"""1-D transposed convolution (``F.conv_transpose1d``), the gradient of ``conv1d`` with
    respect to its input: each input element spreads its kernel over the output,

    :math:`y[n, o, i\,s + k\,d - p] \mathrel{+}= w[c, o - g_c C_{out}/g, k]\, x[n, c, i]`,
    plus b[o], for c in output channel o's group.

    Args:
        input: (N, C_in, L) or (C_in, L). weight: (C_in, C_out / groups, k).
        bias: (C_out,) or None. stride, dilation: an int or (int,), at least 1.
        padding: an int or (int,): the output cropped by it on each side.
        output_padding: added to one side of the output's length; smaller than the stride
            or the dilation.
        groups: split channels into ``groups`` independent convolutions.

    Shape: output (N, C_out, L_out), L_out = (L − 1)·s − 2·pad + d·(k − 1) + output_padding + 1.

    Example:
        >>> F.conv_transpose1d(x, w, stride=2)   # x (8, 4, 10), w (4, 3, 3) -> (8, 3, 21)
    """
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    r"""2-D transposed convolution (``F.conv_transpose2d``), the gradient of ``conv2d`` with
    respect to its input:

    :math:`y[n, o, i s_h + k_h d_h - p_h, j s_w + k_w d_w - p_w] \mathrel{+}=
    w[c, o - g_c C_{out}/g, k_h, k_w]\, x[n, c, i, j]`, plus b[o];

    computed as :math:`W^T` times the input's columns, then col2im.

    Args:
        input: (N, C_in, H, W) or (C_in, H, W). weight: (C_in, C_out / groups, k_h, k_w).
        bias: (C_out,) or None. stride, dilation: an int or a pair, at least 1.
        padding: an int or a pair: the output cropped by it on each side.
        output_padding: an int or a pair added to one side of the output; smaller than the
            stride or the dilation (``nn.ConvTranspose2d`` derives it from ``output_size``).
        groups: split channels into ``groups`` independent convolutions.

    Shape: output (N, C_out, H_out, W_out),
    H_out = (H − 1)·s_h − 2·pad_h + d_h·(k_h − 1) + output_padding_h + 1.

    Example:
        >>> F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
        >>> # x (8, 4, 6, 6), w (4, 2, 3, 3) -> (8, 2, 12, 12)
    """
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


# ----- fold -------------------------------------------------------------------------------
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    r"""Sliding blocks summed back into an image (``F.fold``, col2im), the adjoint of
    ``F.unfold``: column l holds block l's C·k_h·k_w values, channel first, and
    :math:`y[n, c, i, j] = \sum` of every block value that lands on (i, j); overlapping
    blocks add, the padding is cropped.

    Args:
        input: (N, C·k_h·k_w, L) or (C·k_h·k_w, L), L the number of blocks that fit.
        output_size: (H, W) or an int. kernel_size, dilation, padding, stride: an int or a
            pair, as ``F.unfold``'s.

    Shape: (N, C·k_h·k_w, L) -> (N, C, H, W); L = H_blocks·W_blocks, H_blocks =
    ⌊(H + 2·pad − d(k − 1) − 1)/s⌋ + 1.

    Example:
        >>> F.fold(F.unfold(x, 2), (5, 5), 2)    # x (1, 3, 5, 5): each pixel × its windows
    """
    fn = "fold"
    if not isinstance(input, Tensor):
        raise TypeError(f"fold: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(f"fold: expected a 2-D (unbatched) or 3-D input with non-empty "
                           f"dims but the batch, got shape {input.shape}")
    unbatched = input.ndim == 2
    x = input.reshape((1,) + input.shape) if unbatched else input
    _check_dtype(fn, x, (np.dtype(np.bool_),))            # a sum of copies: bool too, as torch
    output_size = _ints(fn, "output_size", output_size, 2, 0)
    kernel = _ints(fn, "kernel_size", kernel_size, 2, 1)
    geometry = Geometry(kernel, _ints(fn, "stride", stride, 2, 1),
                        tuple((p, p) for p in _ints(fn, "padding", padding, 2, 0)),
                        _ints(fn, "dilation", dilation, 2, 1))
    if x.shape[1] % math.prod(kernel):
        raise RuntimeError(f"fold: input's dim 1 ({x.shape[1]}) must be divisible by the "
                           f"product of kernel_size {kernel}")
    blocks = geometry.out_size(output_size)
    if any(b < 1 for b in blocks) or math.prod(blocks) != x.shape[2]:
        raise RuntimeError(f"fold: output_size {output_size} with kernel_size {kernel}, "
                           f"dilation {geometry.dilation}, padding {padding!r}, stride "
                           f"{geometry.stride} holds {blocks} blocks; input has {x.shape[2]}")
    channels = x.shape[1] // math.prod(kernel)
    cols = x.reshape((x.shape[0], channels) + kernel + blocks)      # (N, C, kh, kw, bh, bw)
    out = Col2Im.apply(cols, shape=(x.shape[0], channels) + output_size, geometry=geometry)
    return out.reshape(out.shape[1:]) if unbatched else out


# ----- adaptive pooling -------------------------------------------------------------------
def _adaptive_max_pool(fn, dims, input, output_size, return_indices):
    x, unbatched = _check_input(fn, input, dims)
    if 0 in x.shape[1:]:
        raise RuntimeError(f"{fn}: expected non-empty channel and spatial dims (an empty "
                           f"batch is allowed), got input of shape {input.shape}")
    _check_dtype(fn, x, ())
    sizes = _adaptive_sizes(fn, dims, x, output_size, none_keeps=dims >= 2)
    spatial, flat = x.shape[2:], np.zeros((), np.int64)
    for d, (n, size) in enumerate(zip(spatial, sizes)):      # flat (*out, *K) grows a dim pair
        rows = _window_positions(*_adaptive_windows(n, size))[0]          # (out_d, K_d)
        old, new = (slice(None),) * d, (None,) * d
        flat = flat[old + (None,) + old + (None,)] * n + rows[new + (slice(None),) + new]
    # (*out, K_1·...·K_d): flat indices into *spatial, each window in row-major order
    flat = backend.to_device(flat.reshape(sizes + (math.prod(flat.shape[dims:]),)), x.device)
    n, channels = x.shape[:2]
    values = x.reshape(n, channels, math.prod(spatial))                # (N, C, H·W)
    windows = values._array[:, :, flat]                                # (N, C, *out, K)
    index = x.xp.take_along_axis(x.xp.broadcast_to(flat, windows.shape),
                                 _torch_pick(windows)[..., None], axis=-1)[..., 0]
    out = ops.gather(values, 2, constant(index.reshape(n, channels, math.prod(sizes))))
    out, index = out.reshape((n, channels) + sizes), constant(index[0] if unbatched else index)
    if unbatched:
        out = out.reshape(out.shape[1:])
    elif dims == 2:                     # channels-last stays so, as torch's (3-D: row-major)
        out, index = _torch_layout(out, x), _torch_layout(index, x)
    gradient_reads(out, x)              # torch's backward reads the input (double.py)
    return (out, index) if return_indices else out


def _torch_pick(windows):
    """Which element of each window (the last axis) torch's scan keeps: the last NaN if any
    (``val > max || isnan(val)``), else the first maximum."""
    xp = backend.array_module(windows)
    with backend.silent_floats():
        nan = xp.isnan(windows)
        first_max = windows.argmax(-1)
    last_nan = windows.shape[-1] - 1 - nan[..., ::-1].argmax(-1)
    return xp.where(nan.any(-1), last_nan, first_max)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    r"""Max pooling to a given length (``F.adaptive_max_pool1d``): output i is the maximum of
    input positions :math:`\lfloor iL/L_o \rfloor` to :math:`\lceil (i+1)L/L_o \rceil - 1`
    (torch's windows, overlapping when L_o does not divide L).

    Args:
        output_size: an int or (int,), L_o >= 0.
        return_indices: also return each maximum's index along L (int64).

    Shape: (N, C, L) or (C, L) -> (N, C, L_o); the gradient goes to each window's first
    maximum, or its last NaN, as torch's.

    Example:
        >>> F.adaptive_max_pool1d(x, 4)          # (8, 16, 10) -> (8, 16, 4)
    """
    if output_size is None:
        raise TypeError("adaptive_max_pool1d: output_size must be an int or (int,), got None")
    return _adaptive_max_pool("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    r"""Max pooling to a given size (``F.adaptive_max_pool2d``): output (i, j) is the maximum
    over input rows :math:`\lfloor iH/H_o \rfloor .. \lceil (i+1)H/H_o \rceil - 1` and the
    columns likewise (torch's windows).

    Args:
        output_size: an int or a pair (H_o, W_o); None in the pair keeps that input size.
        return_indices: also return each maximum's flat index into H·W (int64).

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_o, W_o); the gradient goes to each window's
    first maximum in row-major order, or its last NaN, as torch's.

    Example:
        >>> F.adaptive_max_pool2d(x, (3, 4))     # (8, 16, 7, 9) -> (8, 16, 3, 4)
    """
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d`` with its indices, whatever ``return_indices`` says (torch's).
    Shape: (N, C, L) -> ((N, C, L_o), (N, C, L_o)).
    Example: ``values, index = F.adaptive_max_pool1d_with_indices(x, 4)``."""
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool2d`` with its indices, whatever ``return_indices`` says (torch's).
    Shape: (N, C, H, W) -> ((N, C, H_o, W_o), (N, C, H_o, W_o)).
    Example: ``values, index = F.adaptive_max_pool2d_with_indices(x, 2)``."""
    return adaptive_max_pool2d(input, output_size, return_indices=True)


def adaptive_avg_pool1d(input, output_size):
    r"""Average pooling to a given length (``F.adaptive_avg_pool1d``): output i averages input
    positions :math:`\lfloor iL/L_o \rfloor` to :math:`\lceil (i+1)L/L_o \rceil - 1`, the
    window's sum over its count, as ``adaptive_avg_pool2d``.

    Args:
        output_size: an int or (int,), L_o >= 0.

    Shape: (N, C, L) or (C, L) -> (N, C, L_o).

    Example:
        >>> F.adaptive_avg_pool1d(x, 1)          # (8, 16, 10) -> (8, 16, 1)
    """
    fn = "adaptive_avg_pool1d"
    if output_size is None:
        raise TypeError(f"{fn}: output_size must be an int or (int,), got None")
    return _adaptive_avg_pool(fn, 1, input, output_size)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool1d`` with its indices, whatever ``return_indices`` says (torch's).
    Shape: (N, C, L) -> ((N, C, L_out), (N, C, L_out)).
    Example: ``values, index = F.max_pool1d_with_indices(x, 2)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool2d`` with its indices, whatever ``return_indices`` says (torch's).
    Shape: (N, C, H, W) -> ((N, C, H_out, W_out), (N, C, H_out, W_out)).
    Example: ``values, index = F.max_pool2d_with_indices(x, 2)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# ----- max unpooling ----------------------------------------------------------------------
def _pair(value):
    # torch's _pair: an int twice, a sequence (or a Tensor, whose 0-d one is a TypeError) as a
    # tuple
    return tuple(value) if isinstance(value, (tuple, list, Tensor)) else (value, value)


def _unpool_size(fn, input, kernel, stride, padding, output_size, dims=2):
    """torch's ``_unpool_output_size`` over the last ``dims`` dims: (H_in − 1)·s + k − 2·pad,
    or ``output_size`` (dims or dims + 2 ints) strictly within a stride of it; ValueErrors
    as torch's."""
    for name, values in (("kernel_size", kernel), ("stride", stride), ("padding", padding)):
        for v in values:
            check_number(fn, name, v, integer=True)
        if len(values) < len(kernel):         # torch reads one per kernel dim: an IndexError
            raise IndexError(f"{fn}: {name} {values} has fewer elements than kernel_size "
                             f"{kernel}")
    if len(kernel) != dims:
        raise RuntimeError(f"{fn}: kernel_size must be an int or {dims} ints, got {kernel}")
    default = tuple((n - 1) * s + k - 2 * p for n, s, k, p in
                    zip(input.shape[-dims:], stride, kernel, padding))
    if output_size is None:
        sizes = default
    else:
        if not isinstance(output_size, (tuple, list)):        # torch: a TypeError too
            raise TypeError(f"{fn}: output_size must be a sequence of {dims} or {dims + 2} "
                            f"ints, got {type(output_size).__name__} {output_size!r}")
        sizes = tuple(output_size)
        sizes = sizes[2:] if len(sizes) == dims + 2 else sizes
        if len(sizes) != dims:
            raise ValueError(f"{fn}: output_size should be a sequence containing {dims} or "
                             f"{dims + 2} elements, got {output_size!r}")
        for d, (size, n, s) in enumerate(zip(sizes, default, stride)):
            check_number(fn, "output_size", size, integer=True)
            if not n - s < size < n + s:
                raise ValueError(f"{fn}: invalid output_size {tuple(output_size)} (dim {d} "
                                 f"must be between {n - s} and {n + s}, exclusive)")
    if any(size < 0 for size in sizes):
        raise ValueError(f"{fn}: output_size must contain non-negative spatial dims, got "
                         f"{sizes}")
    return tuple(int(size) for size in sizes)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    r"""The partial inverse of ``max_pool2d`` (``F.max_unpool2d``): zeros, with each input
    value written at its flat index into the output's H·W,
    :math:`y[n, c, \text{idx}[n, c, i, j]] = x[n, c, i, j]`; the gradient of x is the
    upstream gradient read back at the indices.

    Args:
        input: (N, C, H, W) or (C, H, W). indices: int64 of input's shape, from
            ``max_pool2d(..., return_indices=True)``.
        kernel_size, stride (default ``kernel_size``), padding: the pooling's, which set the
            output size (H − 1)·s + k − 2·pad.
        output_size: (H_out, W_out) (or 4 ints), within a stride of that size.

    Shape: (N, C, H, W) -> (N, C, H_out, W_out).

    Example:
        >>> y, i = F.max_pool2d(x, 2, return_indices=True); F.max_unpool2d(y, i, 2)
    """
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding,
                       output_size)


def _max_unpool(fn, dims, input, indices, kernel_size, stride, padding, output_size):
    # max_unpool1d's, 2d's and 3d's: each value scattered at its flat index into the last
    # ``dims`` dims of the output (torch's 1-D form, a 2-D one of width 1, is the same)
    for name, t in (("input", input), ("indices", indices)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    kernel = _ntuple(kernel_size, dims)
    stride = kernel if stride is None else _ntuple(stride, dims)
    sizes = _unpool_size(fn, input, kernel, stride, _ntuple(padding, dims), output_size, dims)
    if input.ndim not in (dims + 1, dims + 2) or 0 in input.shape[1:]:
        raise RuntimeError(f"{fn}: expected a {dims + 1}-D or {dims + 2}-D input with "
                           f"non-empty dims but the first, got shape {input.shape}")
    if indices.dtype != np.int64 or indices.shape != input.shape:
        raise RuntimeError(f"{fn}: indices must be int64 of the input's shape {input.shape}, "
                           f"got {indices.dtype} {indices.shape}")
    _check_dtype(fn, input, ())
    index = indices._array
    if index.size and (int(index.min()) < 0 or int(index.max()) >= math.prod(sizes)):
        bad = int(index.min()) if int(index.min()) < 0 else int(index.max())
        raise RuntimeError(f"{fn}: found an invalid max index {bad} (output planes are "
                           f"{'x'.join(str(n) for n in sizes)})")
    planes, length = input.shape[:-dims], math.prod(input.shape[-dims:])
    out = constant(input.xp.zeros(planes + (math.prod(sizes),), input.dtype))
    out = scatter(out, -1, constant(index.reshape(planes + (length,))),
                  input.reshape(planes + (length,)))              # (*planes, ∏ output size)
    return out.reshape(planes + sizes)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    r"""The partial inverse of ``max_pool1d`` (``F.max_unpool1d``): zeros, with each input
    value written at its index into the output's length, :math:`y[n, c, \text{idx}[n, c, i]]
    = x[n, c, i]`; ``max_unpool2d`` of a trailing dim of 1, as torch's.

    Args:
        input: (N, C, L) or (C, L). indices: int64 of input's shape, from
            ``max_pool1d(..., return_indices=True)``.
        kernel_size, stride (default ``kernel_size``), padding: the pooling's, which set the
            output length (L − 1)·s + k − 2·pad.
        output_size: (L_out,) (or 3 ints), within a stride of that length.

    Shape: (N, C, L) -> (N, C, L_out).

    Example:
        >>> y, i = F.max_pool1d(x, 2, return_indices=True); F.max_unpool1d(y, i, 2)
    """
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding,
                       output_size)


def _single(value):
    # torch's _single: an int once, a sequence (or a Tensor, as _pair) as a tuple
    return tuple(value) if isinstance(value, (tuple, list, Tensor)) else (value,)


# ----- the rarer layers -------------------------------------------------------------------
def bilinear(input1, input2, weight, bias=None):
    r""":math:`y_o = x_1^T A_o\, x_2 + b_o` (``F.bilinear``), one bilinear form per output
    feature: ``einsum("...i,oij,...j->...o")``.

    Args:
        input1: (*, in1). input2: (*, in2), the same leading dims (no broadcasting).
        weight: (out, in1, in2). bias: (out,) or None. All of one dtype.

    Shape: output (*, out).

    Example:
        >>> F.bilinear(x1, x2, w, b)             # (N, 3), (N, 5), w (2, 3, 5) -> (N, 2)
    """
    fn = "bilinear"
    for i, (name, t) in enumerate({"input1": input1, "input2": input2, "weight": weight,
                                   "bias": bias}.items()):      # torch's parser's TypeError
        ops.shape_arguments.tensor_argument(fn, name, t, i + 1, optional=name == "bias")
    if input1.ndim == 0 or input2.ndim == 0:
        raise (IndexError if input1.ndim == input2.ndim else RuntimeError)(   # torch's, by rank
            f"{fn}: the inputs need a feature dim, got shapes {input1.shape} and {input2.shape}")
    if input1.shape[-1] == 0 or input2.shape[-1] == 0:
        raise RuntimeError(f"{fn}: the inputs need at least one feature, got shapes "
                           f"{input1.shape} and {input2.shape}")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"{fn}: input1 {input1.shape} and input2 {input2.shape} must have "
                           "the same leading (batch) dims")
    if weight.ndim != 3 or weight.shape[1:] != (input1.shape[-1], input2.shape[-1]):
        raise RuntimeError(f"{fn}: weight must have shape (out, {input1.shape[-1]}, "
                           f"{input2.shape[-1]}) for inputs {input1.shape}, {input2.shape}; "
                           f"got {weight.shape}")
    if bias is not None and bias.shape != weight.shape[:1]:
        raise RuntimeError(f"{fn}: bias must have shape ({weight.shape[0]},), got {bias.shape}")
    tensors = (input1, input2, weight) + (() if bias is None else (bias,))
    if len({t.dtype for t in tensors}) > 1:
        raise RuntimeError(f"{fn}: all tensors must have one dtype, got "
                           f"{', '.join(str(t.dtype) for t in tensors)}")
    out = ops.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def channel_shuffle(input, groups):
    """Interleave the channels of ``groups`` groups (``F.channel_shuffle``, ShuffleNet):
    channels (g, C/g) read as (C/g, g), so output channel i·g + j is input channel
    j·(C/g) + i.

    Args:
        input: (N, C, *), at least 3 dims. groups: a positive int dividing C.

    Shape: unchanged.

    Example:
        >>> F.channel_shuffle(x, 2)              # channels [0 1 2 3] -> [0 2 1 3]
    """
    fn = "channel_shuffle"
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    groups = index_of(groups)                    # a 0-d integer tensor is its int, as torch's
    check_number(fn, "groups", groups, integer=True)
    if groups < 1:
        raise RuntimeError(f"{fn}: groups must be positive, got {groups}")
    if input.ndim < 3:
        raise RuntimeError(f"{fn}: expected an input of 3 or more dims, got {input.shape}")
    n, channels, rest = input.shape[0], input.shape[1], input.shape[2:]
    if channels % groups:
        raise RuntimeError(f"{fn}: the {channels} channels must be divisible by groups="
                           f"{groups}")
    shuffled = input.reshape((n, groups, channels // groups) + rest).transpose(1, 2)
    # one group, or groups of one channel, moves nothing and the reshape is a view of the
    # input: torch's result is new memory either way
    shuffled = shuffled.reshape(input.shape)
    return shuffled.clone() if groups in (1, channels) else shuffled


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    r"""Each value divided by the energy of its neighbouring channels (``F.local_response_norm``,
    AlexNet): :math:`y_c = x_c \,/\, \bigl(k + \frac{\alpha}{n}
    \sum_{c'=c-\lfloor n/2 \rfloor}^{c+\lfloor (n-1)/2 \rfloor} x_{c'}^2\bigr)^{\beta}`,
    n = ``size``, channels past the ends counting as zeros.

    Args:
        input: (N, C, *), at least 3 dims. size: the number of channels n summed over.
        alpha, beta, k: the formula's constants.

    Shape: unchanged.

    Example:
        >>> F.local_response_norm(x, 5, alpha=1e-4, beta=0.75, k=2.0)
    """
    fn = "local_response_norm"
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    size = index_of(size)                        # a 0-d integer tensor is its int, as torch's
    check_number(fn, "size", size, integer=True)
    alpha, beta, k = (float_of(value, fn, name, one_element=True)   # torch's: arithmetic
                      for name, value in (("alpha", alpha), ("beta", beta), ("k", k)))
    if input.ndim < 3:
        raise ValueError(f"{fn}: expected an input of 3 or more dims, got {input.shape}")
    if input.size == 0:                           # torch's: before it looks at size
        return input
    if size < 1:
        raise RuntimeError(f"{fn}: size must be positive, got {size}")
    n, channels = input.shape[:2]
    squares = (input * input).reshape(n, 1, channels, -1)                 # (N, 1, C, R)
    # the mean of x² over each window of ``size`` channels, zeros padded, torch's window
    # [c − ⌊n/2⌋, c + ⌊(n−1)/2⌋]: an even size pads one channel too many after, cropped
    energy = avg_pool2d(squares, (size, 1), stride=1, padding=(size // 2, 0))
    energy = energy[:, 0, :channels].reshape(input.shape)
    return input / (energy * alpha + k) ** beta


# ----- dropout ----------------------------------------------------------------------------
LAMBDA_ALPHA = 1.7580993408473766        # +λα, SELU's scale times its alpha (torch's alpha)


def _check_p(fn, p):
    # every dropout's (F.dropout's and dropout2d's too): checked before the input, as torch's
    p = float_of(p, fn, "p")
    if not 0 <= p <= 1:
        raise ValueError(f"{fn}: p must be a number in [0, 1], got {p!r}")


def _trivial_dropout(x, p, training, inplace):
    """Every dropout's cases without a draw: x itself when not training, p = 0 or x is
    empty; x times a zero of x's dtype at p = 1 (torch's: an integer x stays integer).
    None otherwise."""
    if not training or p == 0 or x.size == 0:
        return x
    if p == 1:
        zero = x.new_zeros(())
        return x.mul_(zero) if inplace else x * zero
    return None


def dropout1d(input, p=0.5, training=True, inplace=False, *, generator=None):
    r"""Zero whole channels with probability ``p`` and scale the rest by 1/(1 − p)
    (``F.dropout1d``): one Bernoulli(1 − p) draw per (sample, channel), torch's, from the
    same generator as ``F.dropout``; ``input`` itself when not ``training``.

    Args:
        input: (N, C, L) or (C, L). p: the probability of zeroing a channel.
        inplace: multiply ``input`` in place. generator: a ``mg.Generator``.

    Shape: unchanged.

    Example:
        >>> h = F.dropout1d(F.relu(conv(x)), 0.1, training=model.training)
    """
    from .functional import _dropout       # functional imports this module: at call time
    _check_p("dropout1d", p)
    if not isinstance(input, Tensor):
        raise TypeError(f"dropout1d: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got "
                           f"shape {input.shape}")
    if training and 0 < p < 1 and not is_floating(input.dtype):
        raise RuntimeError(f"dropout1d: the scaled result is floating; {input.dtype} cannot "
                           "hold it")
    return _dropout("dropout1d", input, p, training, inplace, generator,
                    input.shape[:-1] + (1,))


def alpha_dropout(input, p=0.5, training=False, inplace=False, *, generator=None):
    r"""Dropout that keeps SELU's self-normalisation (``F.alpha_dropout``): each element
    is set, with probability p, to SELU's saturation α' = −λα, then an affine map restores
    zero mean and unit variance; with keep ~ Bernoulli(1 − p) (torch's draws):

    :math:`y = a\,(x \cdot \text{keep} + \alpha' (1 - \text{keep})) + b` with
    :math:`a = ((1 - p)(1 + p\,\alpha'^2))^{-1/2}`, :math:`b = -a\,\alpha' p`,
    computed as torch's, with λα = −α': :math:`x \cdot (a\,\text{keep}) +
    ((\text{keep} - 1)\,\lambda\alpha\, a + \lambda\alpha\, a p)`. ``input`` itself when
    not ``training`` (the default, as torch's) or p = 0; x·0 when p = 1.

    Args:
        p: the probability of dropping. inplace: write into ``input``.
        generator: a ``mg.Generator``, by default ``mg.default_generator``.

    Shape: unchanged.

    Example:
        >>> F.alpha_dropout(F.selu(h), 0.1, training=model.training)
    """
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, generator, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False, *, generator=None):
    r"""``alpha_dropout`` of whole channels (``F.feature_alpha_dropout``): one keep ~
    Bernoulli(1 − p) draw per (dim 0, dim 1) entry, torch's, shared by every element of
    that channel; the same affine map, with its a and b.

    Args:
        input: (N, C, *) (torch draws over the first two dims of any input of 2 dims or
            more). p: the probability of dropping a channel. inplace: write into ``input``.
        generator: a ``mg.Generator``, by default ``mg.default_generator``.

    Shape: unchanged.

    Example:
        >>> F.feature_alpha_dropout(F.selu(conv(x)), 0.1, training=model.training)
    """
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, generator,
                          True)


def _alpha_dropout(fn, input, p, training, inplace, generator, per_channel):
    # torch's _dropout_impl with alpha_dropout: keep drawn per element (torch's
    # empty_like(input)) or per channel (its make_feature_noise: (N, C, 1, ...))
    _check_p(fn, p)
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    gen = streams.check_generator(fn, generator)
    trivial = _trivial_dropout(input, p, training, inplace)
    if trivial is not None:
        return trivial
    if per_channel and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not is_floating(input.dtype):
        raise RuntimeError(f"{fn}: the result is floating; {input.dtype} cannot hold it")
    keep = np.empty(input.shape[:2] + (1,) * (input.ndim - 2), input.dtype) if per_channel \
        else streams.empty_like(input._array, input.dtype)
    streams.fill(keep, lambda n, c: sampling.bernoulli(gen, n, input.dtype, 1 - p))
    a = 1 / math.sqrt((LAMBDA_ALPHA * LAMBDA_ALPHA * p + 1) * (1 - p))
    # torch's steps, each rounded to the dtype (half precision computed in float32)
    work = np.dtype(np.float32) if dtypes.is_half(input.dtype) else input.dtype
    shift = ((keep.astype(work) - 1) * work.type(LAMBDA_ALPHA * a)).astype(input.dtype)
    shift = (shift.astype(work) + work.type(LAMBDA_ALPHA * a * p)).astype(input.dtype)
    scale = (keep.astype(work) * work.type(a)).astype(input.dtype)
    scale, shift = (constant(backend.to_device(t, input.device)) for t in (scale, shift))
    return input.mul_(scale).add_(shift) if inplace else input * scale + shift
