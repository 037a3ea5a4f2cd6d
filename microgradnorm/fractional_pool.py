"""Fractional max pooling (``F.fractional_max_pool2d/3d`` and their ``_with_indices``
forms) and the legacy cross-map LRN (``nn.CrossMapLRN2d``'s function).

Fractional max pooling (Graham, 2014) takes, per plane, windows of ``kernel_size`` whose
starts follow a pseudo-random sequence: for a sample u in [0, 1) of that (sample, plane)
and α = (in − k) / (out − 1), start_i = ⌊(i + u)·α⌋ − ⌊u·α⌋, the last one in − k; in the
input's dtype, as torch's CPU kernel. The samples are ``_random_samples`` (N, C, 2 or 3),
or ``mg.rand`` of that shape (torch's draw). The pooling is a gather of each window's first
maximum (NaN wins), so its gradient is the gather's: each output's to its input element.

The cross-map LRN is torch's legacy ``CrossMapLRN2d`` function: its forward's running sum
over channels and its own backward, one node."""

import numbers

import numpy as np

from . import backend, dtypes
from .autograd.function import Function
from .factories import rand
from .fused.arguments import NotATensorError, RankError
from .ops.base import constant
from .ops.shape_arguments import tensor_argument
from .tensor import Tensor

__all__ = ["cross_map_lrn2d", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]


def _tuple(value, dims):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims


def _intervals(sample, in_size, out_size, pool):
    # torch's generate_intervals, in the sample's dtype
    starts = np.empty(out_size, np.int64)
    if out_size > 1:
        kind = sample.dtype.type
        alpha = kind(in_size - pool) / kind(out_size - 1)
        i = np.arange(out_size - 1).astype(sample.dtype)
        starts[:-1] = ((i + sample) * alpha).astype(np.int64) - int(sample * alpha)
    if out_size > 0:
        starts[-1] = in_size - pool
    return starts


def _fractional(fn, dims, input, kernel_size, output_size, output_ratio, return_indices,
                _random_samples):
    if not isinstance(input, Tensor):
        raise NotATensorError(f"{fn}(): argument 'input' must be Tensor, not "
                              f"{type(input).__name__}")        # torch's reads input.size()
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    # read as torch's list of ints: a bool first or a float is its TypeError
    kernel = dtypes.factory_shape(_tuple(kernel_size, dims), f"{fn}(): kernel_size")
    if not all(isinstance(k, numbers.Integral) for k in kernel):
        raise TypeError(f"{fn}(): kernel_size must be an int or a tuple of ints, got "
                        f"{kernel_size!r}")
    if _random_samples is None and input.ndim < dims + 1:     # torch reads input.size(-dims-1)
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got "
                         f"{-dims - 1})")
    if input.ndim not in (dims + 1, dims + 2):
        # fewer than ``dims`` dims: torch's IndexError (it reads input.size(-dims))
        raise (RankError if input.ndim < dims else RuntimeError)(
            f"{fn}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: {list(input.shape)}")
    spatial = input.shape[-dims:]
    if output_size is None:
        if dims == 2:                       # torch's 2-D check reads len() of the ratio first
            if len(output_ratio) > 2:
                raise ValueError("fractional_max_pool2d requires output_ratio to either be a "
                                 "single Int or tuple of Ints.")
        ratio = _tuple(output_ratio, dims)
        output_size = [int(size * r) for size, r in zip(spatial, ratio)]
    out = _tuple(output_size, dims)
    # torch's checks: the 2-D one lets the windows reach the input's end, the 3-D one not
    where = "fractional_max_pool3d_out()" if dims == 3 else f"{fn}()"
    for d, name in enumerate(("time", "height", "width")[-dims:]):
        if out[d] + kernel[d] - 1 > spatial[d] - (dims == 3):
            raise RuntimeError(f"{where}: pool {name} {kernel[d]} too large relative to "
                               f"input {name} {spatial[d]}")
    batched = input.ndim == dims + 2
    n_batch = input.shape[0] if batched else 1
    planes = input.shape[-dims - 1]
    if _random_samples is None:
        _random_samples = rand(n_batch, planes, dims, dtype=input.dtype)
    tensor_argument(fn, "_random_samples", _random_samples)
    if _random_samples.dtype != input.dtype:
        raise RuntimeError(f"Expected _random_samples to have the same dtype as input, got "
                           f"{_random_samples.dtype} and {input.dtype}")
    # torch's checks: as many samples as the batch or more (the first ones used), one per
    # channel, one per spatial dim
    if _random_samples.ndim != 3:
        raise RuntimeError(f"{fn}(): Expected _random_samples to be 3-D (N, C, {dims}), got "
                           f"{list(_random_samples.shape)}")
    if _random_samples.shape[0] < n_batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if _random_samples.shape[1] != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if _random_samples.shape[2] != dims:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {dims}; got "
                           f"{_random_samples.shape[2]}.")
    samples = backend.to_numpy(_random_samples._array)[:n_batch]
    data = backend.to_numpy(input._array).reshape((n_batch, planes) + spatial)
    # torch's sample order: 2-D (w, h), 3-D (t, h, w)
    order = (1, 0) if dims == 2 else (0, 1, 2)
    flat_size = int(np.prod(spatial))
    strides = [int(np.prod(spatial[d + 1:])) for d in range(dims)]
    index = np.empty((n_batch, planes) + out, np.int64)
    window = np.stack(np.meshgrid(*[np.arange(k) for k in kernel], indexing="ij"), -1)
    window = (window.reshape(-1, dims) * strides).sum(-1)                     # (K,)
    for b in range(n_batch):
        for c in range(planes):
            starts = [_intervals(samples[b, c, order[d]], spatial[d], out[d], kernel[d])
                      for d in range(dims)]
            grid = np.meshgrid(*[s * st for s, st in zip(starts, strides)], indexing="ij")
            corner = sum(grid)                                               # out
            cells = corner[..., None] + window                               # out + (K,)
            values = data[b, c].reshape(-1)[cells]
            nan = np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, bool)
            pick = np.where(nan.any(-1), nan.argmax(-1), values.argmax(-1))
            index[b, c] = np.take_along_axis(cells, pick[..., None], -1)[..., 0]
    if not batched:
        index = index[0]
    flat = input.reshape(tuple(input.shape[:-dims]) + (flat_size,))
    ids = constant(input.xp.asarray(index.reshape(index.shape[:-dims] + (int(np.prod(out)),))))
    output = flat.gather(-1, ids).reshape(index.shape)
    if return_indices:
        return output, constant(input.xp.asarray(index))
    return output


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    r"""2-D fractional max pooling (``F.fractional_max_pool2d``): the maximum of each
    ``kernel_size`` window, the windows' starts pseudo-random (see the module's text), so
    the output has any size between in/2 and in.

    Args:
        input: (N, C, H, W) or (C, H, W). kernel_size: an int or (kH, kW).
        output_size: (oH, oW) or an int; or ``output_ratio``, a pair in (0, 1) (a lone
            number is refused, as torch's functional refuses it): ⌊in · ratio⌋.
        return_indices: also the int64 flat position (h·W + w) of each maximum.
        _random_samples: (N, C, 2) of input's dtype in [0, 1) (torch's order: w's, then
            h's; more than N rows: the first N); None draws ``mg.rand(N, C, 2)`` from the
            default generator, as torch.

    Shape: (N, C, oH, oW).

    Example:
        >>> F.fractional_max_pool2d(x, 3, output_ratio=0.5)
    """
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size,
                       output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """``fractional_max_pool2d`` returning ``(output, indices)`` whatever
    ``return_indices`` says (``F.fractional_max_pool2d_with_indices``)."""
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size,
                       output_ratio, True, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    r"""3-D fractional max pooling (``F.fractional_max_pool3d``): as
    ``fractional_max_pool2d`` over (T, H, W), one sample per dim (t's, h's, w's).

    Args:
        input: (N, C, T, H, W) or (C, T, H, W). kernel_size: an int or (kT, kH, kW).
        output_size / output_ratio: as the 2-D one's. return_indices: flat positions
            t·H·W + h·W + w. _random_samples: (N, C, 3) of input's dtype.

    Shape: (N, C, oT, oH, oW).

    Example:
        >>> F.fractional_max_pool3d(x, 2, output_size=(3, 3, 3))
    """
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size,
                       output_ratio, return_indices, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """``fractional_max_pool3d`` returning ``(output, indices)``
    (``F.fractional_max_pool3d_with_indices``)."""
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size,
                       output_ratio, True, _random_samples)


# ----- the legacy cross-map LRN ---------------------------------------------------------------
class CrossMapLRN(Function):
    """torch's legacy ``CrossMapLRN2d`` function: y = x · scale^(−β), scale = k + α/size ·
    the running sum of x² over channels its forward keeps, and its own backward."""

    @staticmethod
    def forward(ctx, x, size, alpha, beta, k):
        channels = x.shape[1]
        square = x * x
        pre_pad = int((size - 1) / 2 + 1)
        scale = np.empty_like(x)
        scale[:, 0] = square[:, :min(pre_pad, channels)].sum(1)
        for c in range(1, channels):            # torch's running sum, its order of adds
            scale[:, c] = scale[:, c - 1]
            if c < channels - pre_pad + 1:
                scale[:, c] += square[:, c + pre_pad - 1]
            if c > pre_pad:
                scale[:, c] -= square[:, c - pre_pad]
        scale = scale * x.dtype.type(alpha / size) + x.dtype.type(k)
        out = scale ** x.dtype.type(-beta) * x
        ctx.save_for_backward(x, out, scale)
        ctx.options = (size, alpha, beta)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out, scale = ctx.saved
        size, alpha, beta = ctx.options
        channels = x.shape[1]
        ratio_value = x.dtype.type(2 * alpha * beta / size)
        inverse_pre_pad = int(size - (size - 1) / 2)
        grad_input = scale ** x.dtype.type(-beta) * grad
        padded = np.zeros((x.shape[0], channels + size - 1) + x.shape[2:], x.dtype)
        if inverse_pre_pad + channels > padded.shape[1]:        # size 1: torch's narrow fails
            raise RuntimeError(f"start ({inverse_pre_pad}) + length ({channels}) exceeds "
                               f"dimension size ({padded.shape[1]}).")
        padded[:, inverse_pre_pad:inverse_pre_pad + channels] = grad * out / scale
        accum = padded[:, :size - 1].sum(1)
        for c in range(channels):
            accum = accum + padded[:, c + size - 1]
            grad_input[:, c] -= ratio_value * x[:, c] * accum
            accum = accum - padded[:, c]
        return grad_input


def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1.0):
    r"""Local response normalization across channels, torch's legacy ``CrossMapLRN2d``:
    :math:`y_c = x_c \,(k + \frac{\alpha}{n} \sum_{c'} x_{c'}^2)^{-\beta}`, the sum over a
    window of ``size`` channels as torch's running sum computes it, with torch's own
    backward.

    Args:
        input: (N, C, H, W). size: the window. alpha, beta, k: numbers.

    Shape: unchanged.

    Example:
        >>> nn.CrossMapLRN2d(3)(x)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"CrossMapLRN2d: input must be a Tensor, got {type(input).__name__}")
    if input.ndim != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
    for name, value in (("alpha", alpha), ("beta", beta), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"CrossMapLRN2d: {name} must be a number, got {value!r}")
    return CrossMapLRN.apply(input, size=int(size), alpha=alpha, beta=beta, k=k)
