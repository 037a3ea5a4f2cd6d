"""``F``'s vision functions with PyTorch's semantics: ``interpolate`` (nearest, nearest-exact,
linear, bilinear, bicubic, trilinear, area) and its deprecated ``upsample`` forms,
``pixel_shuffle`` and ``pixel_unshuffle`` (``pad`` is ``padding.py``'s).

Linear, bilinear, trilinear and bicubic interpolation are one node (``LinearResample``):
PyTorch's source indices and weights, computed as its CPU kernel computes them
(``area_pixel_compute_source_index``, ``guard_index_and_lambda``, a fused multiply-add
included), then a weighted sum of the gathered neighbours (two, or four for bicubic) along
each dim; the values agree
with PyTorch's to a few ulp (its kernels sum the products in other orders), the backward
is the transposed interpolation. Under ``create_graph=True`` that backward, and nearest's
(``NearestSelect``), are nodes of their own (``LinearResampleGrad``, ``NearestSelectGrad``)
whose gradient is the forward again: linear maps, each pair differentiates to any order."""

import numbers
import warnings

import numpy as np

from . import backend, ops
from .autograd.function import Function
from .convolution import adaptive_avg_pool2d
from .convolution_3d import adaptive_avg_pool3d
from .dtypes import check_number, float_of, factory_shape, index_of, is_floating, is_half

__all__ = ["interpolate", "pixel_shuffle", "pixel_unshuffle", "upsample", "upsample_bilinear",
           "upsample_nearest"]


# ----- interpolate: source indices and weights, PyTorch's arithmetic ---------------------
def _fma(a, b, c):
    # a * b + c rounded once, as PyTorch's kernels compiled with FMA compute a position
    # (half precision: in float32, then rounded to it)
    dtype = np.result_type(a, b, c)
    work = np.float64 if dtype == np.float64 else np.float32
    return backend.fused_multiply_add(np.asarray(a, work), b, c).astype(dtype, copy=False)


def _lerp(xp, x, weights, axis):
    # Σₖ wₖ·x[iₖ] along `axis`: the taps (indices, weights) of that dim, in tap order
    indices, taps = weights
    shape = [1] * x.ndim
    shape[axis] = len(indices[0])
    out = None
    for i, w in zip(indices, taps):
        term = xp.take(x, xp.asarray(i), axis=axis) * xp.asarray(w).reshape(shape)
        out = term if out is None else out + term
    return out


def _lerp_transposed(xp, grad, weights, size, axis):
    # the transpose of _lerp: grad_j·wₖ_j summed into iₖ_j along `axis` (of `size` after),
    # as torch's backward adds them (a zero weight times inf or NaN included). Each input
    # position gathers its contributions from a (size, most) table of product slots, the
    # missing ones pointing at an appended zero slot
    indices, taps = weights
    axis, count = axis % grad.ndim, len(indices[0]) * len(indices)
    shape = [1] * grad.ndim
    shape[axis] = len(indices[0])
    zero = xp.zeros(grad.shape[:axis] + (1,) + grad.shape[axis + 1:], grad.dtype)
    products = xp.concatenate([grad * xp.asarray(w).reshape(shape) for w in taps] + [zero],
                              axis=axis)
    target = np.concatenate(indices)
    order = np.argsort(target, kind="stable")             # slots grouped by input position
    counts = np.bincount(target, minlength=size)
    first = np.cumsum(counts) - counts
    k = np.arange(counts.max())
    table = np.where(k < counts[:, None], order[np.minimum(first[:, None] + k, count - 1)],
                     count)                               # (size, most)
    gathered = xp.take(products, xp.asarray(table.ravel()), axis=axis)
    split = grad.shape[:axis] + table.shape + grad.shape[axis + 1:]
    return gathered.reshape(split).sum(axis=axis + 1)


def _nearest_index(in_size, out_size, scale, exact, shortcuts):
    # nearest_idx / nearest_neighbor(_exact)_compute_source_index: float arithmetic; with
    # `shortcuts` ("nearest" in torch's 2-D forward and every backward), out == in copies
    # and out == 2 in halves j, whatever the scale
    j = np.arange(out_size)
    if shortcuts and not exact and out_size == in_size:
        return j
    if shortcuts and not exact and out_size == 2 * in_size:
        return j >> 1
    ratio = np.float32(1.0 / scale) if scale else np.float32(in_size) / np.float32(out_size)
    position = (j.astype(np.float32) + np.float32(0.5)) if exact else j.astype(np.float32)
    return np.minimum(np.floor(position * ratio).astype(np.int64), in_size - 1)


class NearestSelect(Function):
    """``x`` read at ``index`` along ``axis`` (nearest mode along one dim of a 3-D or 5-D
    input), with torch's gradient: its nearest backward takes the shortcuts in every
    dimensionality, so output j's gradient goes to input j (out == in) or j >> 1
    (out == 2 in) where its forward read ``index[j]`` (a scale such as 1.3 or 2.2)."""

    kept_options = ("index",)

    @staticmethod
    def forward(ctx, x, axis, index):
        ctx.axis, ctx.size, ctx.index = axis, x.shape[axis], index
        xp = backend.array_module(x)
        return xp.take(x, xp.asarray(index), axis=axis)

    @staticmethod
    def backward(ctx, grad):
        return _nearest_shortcut_grad(grad, ctx.axis, ctx.size)

    graph_reads_inputs = False       # a linear map: its formula reads no input values

    @staticmethod
    def graph_backward(ctx, grad):
        return NearestSelectGrad.apply(grad, axis=ctx.axis, size=ctx.size, index=ctx.index)


def _nearest_shortcut_grad(grad, axis, size):
    # torch's nearest backward along `axis` (to `size`), out == in or out == 2 in
    if grad.shape[axis] == size:                               # out == in: j -> j
        return grad
    pairs = grad.shape[:axis] + (size, 2) + grad.shape[axis + 1:]
    return grad.reshape(pairs).sum(axis=axis + 1)              # out == 2 in: j -> j >> 1


class NearestSelectGrad(Function):
    """``NearestSelect``'s gradient as a node (under ``create_graph=True``): the shortcut
    backward of the gradient. Its own gradient is torch's, the forward gather at ``index``
    (torch's ``upsample_nearest1d`` of it: not the shortcut's transpose where the two
    indices differ, as torch's), and that one's is the shortcut again, to any order."""

    kept_options = ("index",)

    @staticmethod
    def forward(ctx, grad, axis, size, index):
        ctx.axis, ctx.size, ctx.index = axis, size, index
        return _nearest_shortcut_grad(grad, axis, size)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        return xp.take(grad, xp.asarray(ctx.index), axis=ctx.axis)

    graph_reads_inputs = False

    @staticmethod
    def graph_backward(ctx, grad):
        return NearestSelect.apply(grad, axis=ctx.axis, index=ctx.index)


def _nearest(input, sizes, scales, exact):
    # one gather per spatial dim; torch's 1-D and 3-D forward read the scale's index where
    # its backward (and its 2-D forward) takes a shortcut
    out = input
    for axis, (n, scale) in enumerate(zip(sizes, scales), start=2):
        n_in = input.shape[axis]
        index = _nearest_index(n_in, n, scale, exact, shortcuts=input.ndim == 4)
        if not exact and n in (n_in, 2 * n_in) and \
                not np.array_equal(index, _nearest_index(n_in, n, scale, False, True)):
            out = NearestSelect.apply(out, axis=axis, index=index)
        else:
            out = ops.index_select(out, axis, index)
    return out


def _source_position(in_size, out_size, align_corners, scale, dtype, cubic):
    # area_pixel_compute_source_index: the source position of each output j, in dtype
    j = np.arange(out_size)
    if align_corners:
        ratio = dtype((in_size - 1) / (out_size - 1)) if out_size > 1 else dtype(0)
        return ratio * j.astype(dtype)
    ratio = dtype(1.0 / scale) if scale else dtype(in_size) / dtype(out_size)
    real = _fma(np.full(out_size, ratio, dtype), j.astype(dtype) + dtype(0.5),
                np.full(out_size, -0.5, dtype))
    return real if cubic else np.where(real < 0, dtype(0), real)


def _cubic_weights(in_size, out_size, align_corners, scale, dtype, stored=None):
    """Bicubic taps along one dim, as PyTorch computes them: output j reads the source
    position p (not clamped), i = ⌊p⌋, t = p - i, and sums x[i - 1 + k] (k = 0..3, the index
    clamped to the border) with Keys' cubic convolution weights at A = -0.75:
    c₁(x) = ((A + 2)x - (A + 3))x² + 1 for |x| ≤ 1, c₂(x) = ((Ax - 5A)x + 8A)x - 4A for
    1 < |x| < 2, taken at t + 1, t, 1 - t, 2 - t; rounded to ``stored`` (a half input's
    dtype, which PyTorch's kernel keeps its weights in)."""
    dtype = np.dtype(dtype).type
    real = _source_position(in_size, out_size, align_corners, scale, dtype, cubic=True)
    i = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), in_size - 1)
    t = np.minimum(np.maximum(real - i.astype(dtype), dtype(0)), dtype(1)).astype(dtype)
    a = dtype(-0.75)

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    one = dtype(1)
    stored = stored or dtype
    taps = tuple(w.astype(stored).astype(dtype) for w in (far(t + one), near(t), near(one - t),
                                                           far(one - t + one)))
    return tuple(np.clip(i - 1 + k, 0, in_size - 1) for k in range(4)), taps


def _linear_weights(in_size, out_size, align_corners, scale, dtype):
    """((i0, i1), (w0, w1)): output j = w0[j] x[i0[j]] + w1[j] x[i1[j]] along one dim, the
    weights in ``dtype`` (the kernel's opmath type), as PyTorch computes them."""
    dtype = np.dtype(dtype).type
    j = np.arange(out_size)
    if out_size == in_size:                           # a copy: weight 1 on itself
        return (j, j), (np.ones(out_size, dtype), np.zeros(out_size, dtype))
    real = _source_position(in_size, out_size, align_corners, scale, dtype, cubic=False)
    # floorf: the index from the position rounded to float, the weight from the position
    i0 = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), in_size - 1)
    w1 = np.minimum(np.maximum(real - i0.astype(dtype), dtype(0)), dtype(1)).astype(dtype)
    i1 = i0 + (i0 < in_size - 1)
    return (i0, i1), ((dtype(1) - w1).astype(dtype), w1)


def _antialias_weights(in_size, out_size, align_corners, scale, dtype, cubic):
    """``antialias=True``'s taps along one dim, as PyTorch's separable kernel computes them:
    with s the in/out ratio, output j centred on c = s (j + 1/2) reads the inputs within the
    filter's support (1 for bilinear, 2 for bicubic, times s when s > 1: a wider filter that
    averages what downsampling skips), each weighted by the filter at (i + 1/2 - c) / max(s,
    1) (the triangle 1 - |x|, or Keys' cubic at A = -0.5), the weights normalised to sum 1;
    padded with zero weights to the widest output's count.

    Returns (indices, weights): tuples of per-output arrays, one per tap.

    Example:
        >>> np.stack(_antialias_weights(4, 2, False, None, np.float64, False)[1], 1)
        ... # rows 3/7 3/7 1/7 and 1/7 3/7 3/7: a 2x shrink reads 3 inputs per output
    """
    dtype = np.dtype(dtype).type
    if in_size == out_size:                          # torch skips the dim: a copy
        return (np.arange(out_size),), (np.ones(out_size, dtype),)
    if align_corners:
        ratio = dtype(in_size - 1) / dtype(out_size - 1) if out_size > 1 else dtype(0)
    else:
        ratio = dtype(1.0 / scale) if scale else dtype(in_size) / dtype(out_size)
    half = 2.0 if cubic else 1.0                   # half the filter's width at scale 1
    support = dtype(half * float(ratio)) if ratio >= 1 else dtype(half)
    invscale = dtype(1.0 / float(ratio)) if ratio >= 1 else dtype(1)
    center = (float(ratio) * (np.arange(out_size) + 0.5)).astype(dtype)
    first = np.maximum(np.trunc((center - support).astype(np.float64) + 0.5).astype(np.int64), 0)
    stop = np.minimum(np.trunc((center + support).astype(np.float64) + 0.5).astype(np.int64),
                      in_size)
    k = np.arange(max(int((stop - first).max()), 1))
    inside = k[None, :] < (stop - first)[:, None]
    x = (((k[None, :] + first[:, None]).astype(dtype) - center[:, None]).astype(np.float64)
         + 0.5) * float(invscale)
    x = np.abs(x.astype(dtype))
    if cubic:                                       # in double, then rounded, as torch's
        x, a = x.astype(np.float64), -0.5
        w = np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                     np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0)).astype(dtype)
    else:
        w = np.where(x < 1, dtype(1) - x, dtype(0)).astype(dtype)
    w = np.where(inside, w, dtype(0))
    total = np.zeros(out_size, dtype)
    for column in w.T:                              # summed tap by tap, in the kernel's order
        total = (total + column).astype(dtype)
    w = np.where(total[:, None] != 0, w / np.where(total == 0, 1, total)[:, None], w)
    # a padding tap reads the output's first input, which its sum holds already: an inf
    # there makes the output inf or NaN either way, and one outside its window none
    indices = np.where(inside, first[:, None] + k[None, :], first[:, None])
    return tuple(indices.T), tuple(w.astype(dtype).T)


class LinearResample(Function):
    """Linear, bilinear, trilinear or bicubic interpolation, one node: along each spatial
    dim, last first, y_j = Σₖ wₖ_j·x[iₖ_j] (two taps, four for bicubic: gathers and a
    weighted sum); backward the transposed interpolation, one matrix per dim, or where an
    inf or NaN reaches it, each output scattered to its own taps only (``_lerp_transposed``,
    torch's result: a matrix's zeros would spread it). PyTorch's indices and weights
    (``_linear_weights``, ``_cubic_weights``); PyTorch's kernels sum the same products in
    another order and with fused multiply-adds, so the values agree to within a few ulp."""

    @staticmethod
    def forward(ctx, x, weights):
        # weights: per spatial dim (i0, i1, w0, w1), each of the output's size
        ctx.weights, ctx.in_sizes = weights, x.shape[2:]
        return _resample(x, weights)

    @staticmethod
    def backward(ctx, grad):
        return _resample_transposed(grad, ctx.weights, ctx.in_sizes)

    graph_reads_inputs = False       # a linear map: its formula reads no input values

    @staticmethod
    def graph_backward(ctx, grad):
        # create_graph: the transposed interpolation as a node, whose own gradient is this
        # interpolation again (torch's: upsample_linear1d of the gradient)
        return LinearResampleGrad.apply(grad, weights=ctx.weights, in_sizes=ctx.in_sizes)


class LinearResampleGrad(Function):
    """``LinearResample``'s gradient as a node (under ``create_graph=True``): the
    transposed interpolation of the gradient to ``in_sizes``; its gradient is
    ``LinearResample`` with the same weights, so the two differentiate each other to any
    order."""

    @staticmethod
    def forward(ctx, grad, weights, in_sizes):
        ctx.weights = weights
        return _resample_transposed(grad, weights, in_sizes)

    @staticmethod
    def backward(ctx, grad):
        return _resample(grad, ctx.weights)

    graph_reads_inputs = False

    @staticmethod
    def graph_backward(ctx, grad):
        return LinearResample.apply(grad, weights=ctx.weights)


def _resample(x, weights):
    # (N, C, *in) -> (N, C, *out): the weighted sum of two neighbours along each dim
    out = x.astype(np.float32) if is_half(x.dtype) else x
    xp = backend.array_module(x)
    for axis in range(-1, -len(weights) - 1, -1):               # W, then H
        out = _lerp(xp, out, weights[axis], axis)
    return out.astype(x.dtype, copy=False)


def _resample_transposed(grad, weights, in_sizes):
    # (N, C, *out) -> (N, C, *in): _resample's transpose, one matrix per dim
    xp = backend.array_module(grad)
    wide = grad.astype(np.float32) if is_half(grad.dtype) else grad
    out = wide
    for axis in range(-1, -len(weights) - 1, -1):             # W, then H, then D
        (indices, taps), n = weights[axis], in_sizes[axis]
        m = np.zeros((len(indices[0]), n), wide.dtype)        # (out, in): out = m @ in
        for i, w in zip(indices, taps):
            np.add.at(m, (np.arange(len(i)), i), w)
        out = xp.moveaxis(xp.moveaxis(out, axis, -1) @ xp.asarray(m), -1, axis)
    if not xp.isfinite(out.sum()):
        # an inf or NaN reached it: the matrices' zeros (0·inf = NaN) would spread it
        # over the whole row, so scatter each output to its own two neighbours only
        out = wide
        for axis in range(-1, -len(weights) - 1, -1):
            out = _lerp_transposed(xp, out, weights[axis], in_sizes[axis], axis)
    return out.astype(grad.dtype, copy=False)


# ----- interpolate: arguments ----------------------------------------------------------
_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"
_LINEAR_DIMS = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}
_LABELS = {1: ("W",), 2: ("H", "W"), 3: ("D", "H", "W")}


def _integral(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _sizes_and_scales(input, size, scale_factor, recompute_scale_factor, area):
    """PyTorch's reading of ``size`` / ``scale_factor``: the output sizes and the scales
    the kernels use (None where they use in / out)."""
    dims = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate: only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("interpolate: either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("interpolate: recompute_scale_factor is not meaningful with an "
                         "explicit size.")
    if size is not None:
        given = isinstance(size, (list, tuple))         # torch compares a given one with dims
        sizes = list(map(index_of, size)) if given else [index_of(size)] * max(dims, 0)
        if given and len(sizes) != dims:
            raise ValueError(f"interpolate: Input and output must have the same number of "
                             f"spatial dimensions, but got input with spatial dimensions of "
                             f"{list(input.shape[2:])} and output size of {size}")
        sizes = list(factory_shape(sizes, "interpolate(): size"))   # (2, True): torch's (2, 1)
        if not all(_integral(n) for n in sizes):
            raise TypeError(f"interpolate: expected size to be an int or a tuple of ints, but "
                            f"got size with types {[type(n).__name__ for n in sizes]}")
        return [int(n) for n in sizes], [None] * dims
    given = isinstance(scale_factor, (list, tuple))
    scales = list(scale_factor) if given else [scale_factor] * max(dims, 0)
    if given and len(scales) != dims:
        raise ValueError(f"interpolate: Input and scale_factor must have the same number of "
                         f"spatial dimensions, but got input with spatial dimensions of "
                         f"{list(input.shape[2:])} and scale_factor of shape {scale_factor}")
    scales = [scale if hasattr(scale, "_array") else       # a Tensor: refused, as torch's
              float_of(scale, "interpolate", "scale_factor") for scale in scales]
    for scale in scales:
        check_number("interpolate", "scale_factor", scale)
    sizes = [int(n * float(s)) for n, s in zip(input.shape[2:], scales)]
    if recompute_scale_factor or area:         # the kernels recompute in / out
        scales = [None] * dims
    return sizes, [float(s) if s is not None else None for s in scales]


def _check_sizes(input, sizes):
    labels = _LABELS[len(sizes)]
    if any(n <= 0 for n in input.shape[2:]) or any(n <= 0 for n in sizes):
        given = ", ".join(f"{k}: {n}" for k, n in zip(labels, input.shape[2:]))
        wanted = ", ".join(f"{k}: {n}" for k, n in zip(labels, sizes))
        raise RuntimeError(f"interpolate: Input and output sizes should be greater than 0, but "
                           f"got input ({given}) output ({wanted})")
    if input.shape[1] == 0:
        raise RuntimeError(f"interpolate: Non-empty {input.ndim}D data tensor expected but got "
                           f"a tensor with sizes {list(input.shape)}")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    r"""Resample the spatial dims of ``input`` (``F.interpolate``), PyTorch's values:
    "nearest" (source :math:`\lfloor j\,s \rfloor`), "nearest-exact"
    (:math:`\lfloor (j + 1/2)\,s \rfloor`), "linear" (3-D input), "bilinear" and "bicubic"
    (4-D), "trilinear" (5-D), with :math:`s` = 1 / scale_factor or in / out in float, and
    "area" (adaptive average pooling).

    Linear modes: output j reads the source position :math:`s\,(j + 1/2) - 1/2` (clamped at
    0), or :math:`j\,(in - 1)/(out - 1)` with ``align_corners=True``, weighting its two
    neighbours linearly along each dim; "bicubic" weights the four around it (not clamped,
    the indices clamped to the border) by Keys' cubic convolution with A = -0.75.

    Args:
        size: the output's spatial size, an int or one per spatial dim; or
        scale_factor: a number or one per spatial dim (output size ⌊in · scale⌋).
        mode: one of the above; "area" also for 5-D input (adaptive average pooling in 3-D).
        align_corners: linear modes only (False when None).
        recompute_scale_factor: the kernels then use in / out rather than 1 / scale_factor.
        antialias: "bilinear" and "bicubic" only: a filter widened by the scale when
            downsampling, averaging every input under it (``_antialias_weights``: the
            triangle, or Keys' cubic at A = -0.5), torch's ``antialias=True``.

    Shape: (N, C, W), (N, C, H, W) or (N, C, D, H, W) -> the same with the output's spatial
    sizes.

    Example:
        >>> F.interpolate(x, scale_factor=2, mode="bilinear")   # (N, C, 8, 8) -> (N, C, 16, 16)
    """
    ops.base.check_tensor("interpolate", input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("interpolate: align_corners option can only be set with the "
                             "interpolating modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    # PyTorch's order: size / scale_factor read first (ValueError), the rank and mode after
    sizes, scales = _sizes_and_scales(input, size, scale_factor, recompute_scale_factor,
                                      mode == "area")
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("interpolate: Anti-alias option is restricted to bilinear, "
                         "bicubic, and lanczos modes and requires a 4-D tensor as input")
    if input.ndim not in (3, 4, 5) or (mode not in _LINEAR_DIMS and mode not in (
            "nearest", "nearest-exact", "area")):
        raise NotImplementedError(f"interpolate: Input Error: Only 3D, 4D and 5D input Tensors "
                                  f"supported (got {input.ndim}D) for the modes: {_MODES} (got "
                                  f"{mode})")
    if mode in _LINEAR_DIMS and input.ndim != _LINEAR_DIMS[mode]:
        raise NotImplementedError(f"interpolate: Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR_DIMS[mode]}D input")
    if mode == "area":
        if input.ndim == 5:
            return adaptive_avg_pool3d(input, tuple(sizes))
        if input.ndim == 3:                      # PyTorch's adaptive_avg_pool1d: as 2-D
            return adaptive_avg_pool2d(input.unsqueeze(-2), (1, sizes[0])).squeeze(-2)
        return adaptive_avg_pool2d(input, tuple(sizes))
    _check_sizes(input, sizes)
    if mode in ("nearest", "nearest-exact"):
        if not (is_floating(input.dtype) or input.dtype == np.uint8):
            raise NotImplementedError(f"interpolate: {mode} is not implemented for dtype "
                                      f"{input.dtype} (floating and uint8 only)")
        return _nearest(input, sizes, scales, mode == "nearest-exact")
    if not is_floating(input.dtype):
        raise NotImplementedError(f"interpolate: {mode} is not implemented for dtype "
                                  f"{input.dtype} (floating only)")
    opmath = np.float32 if is_half(input.dtype) else input.dtype
    weights = tuple(_antialias_weights(n_in, n, align_corners, scale, opmath,
                                       mode == "bicubic") if antialias else
                    _cubic_weights(n_in, n, align_corners, scale, opmath, input.dtype)
                    if mode == "bicubic" else
                    _linear_weights(n_in, n, align_corners, scale, opmath)
                    for n_in, n, scale in zip(input.shape[2:], sizes, scales))
    return LinearResample.apply(input, weights=weights)


def _deprecated(name):
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """``interpolate`` under its old name (``F.upsample``), with PyTorch's deprecation
    warning. Example: ``F.upsample(x, scale_factor=2)``."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """``interpolate(mode="nearest")`` (``F.upsample_nearest``, deprecated, warns)."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """``interpolate(mode="bilinear", align_corners=True)`` (``F.upsample_bilinear``,
    deprecated, warns)."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ----- pixel_shuffle, pixel_unshuffle -------------------------------------------------------
def _factor(fn, name, factor, input):
    ops.base.check_tensor(fn, input)
    if not _integral(factor := index_of(factor)):          # a 0-d integer tensor: its int
        raise TypeError(f"{fn}: {name} must be an int, got {type(factor).__name__} {factor!r}")
    if factor <= 0:
        raise RuntimeError(f"{fn}: {fn} expects a positive {name}, but got {factor}")
    if input.ndim < 3:
        raise RuntimeError(f"{fn}: {fn} expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    return int(factor)


def pixel_shuffle(input, upscale_factor):
    r"""Rearrange (*, C r², H, W) into (*, C, H r, W r) (``F.pixel_shuffle``, the sub-pixel
    convolution's upsampling): output :math:`[c, h r + i, w r + j]` is input
    :math:`[c r^2 + i r + j, h, w]`.

    Example:
        >>> F.pixel_shuffle(mg.ones(1, 8, 3, 3), 2).shape      # (1, 2, 6, 6)
    """
    r = _factor("pixel_shuffle", "upscale_factor", upscale_factor, input)
    *batch, channels, height, width = input.shape
    if channels % (r * r):
        raise RuntimeError(f"pixel_shuffle: pixel_shuffle expects its input's 'channel' "
                           f"dimension to be divisible by the square of upscale_factor, but "
                           f"input.size(-3)={channels} is not divisible by {r * r}")
    k = len(batch)
    out = input.reshape(*batch, channels // (r * r), r, r, height, width)
    out = out.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)      # (*, C, H, r, W, r)
    return out.reshape(*batch, channels // (r * r), height * r, width * r)


def pixel_unshuffle(input, downscale_factor):
    r"""Rearrange (*, C, H r, W r) into (*, C r², H, W) (``F.pixel_unshuffle``), the inverse
    of ``pixel_shuffle``.

    Example:
        >>> F.pixel_unshuffle(mg.ones(1, 2, 6, 6), 2).shape    # (1, 8, 3, 3)
    """
    r = _factor("pixel_unshuffle", "downscale_factor", downscale_factor, input)
    *batch, channels, height, width = input.shape
    for name, n, index in (("height", height, -2), ("width", width, -1)):
        if n % r:
            raise RuntimeError(f"pixel_unshuffle: pixel_unshuffle expects {name} to be "
                               f"divisible by downscale_factor, but input.size({index})={n} "
                               f"is not divisible by {r}")
    k = len(batch)
    out = input.reshape(*batch, channels, height // r, r, width // r, r)
    out = out.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)      # (*, C, r, r, H, W)
    return out.reshape(*batch, channels * r * r, height // r, width // r)
