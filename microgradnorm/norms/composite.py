"""Composite norms: the textbook formulas written with primitive ops, one node per step.

These graphs are the oracle for the fused nodes: autograd differentiates them op by op,
so they share no backward code with ``fused``.
"""

from ..autograd import no_grad
from ..dtypes import accumulation_dtype
from ..kernels import reference
from ..tensor import Tensor


def _trailing_axes(x, normalized_shape):
    return tuple(range(x.ndim - len(normalized_shape), x.ndim))


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    axes = _trailing_axes(x, normalized_shape)
    mean = x.mean(axes, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axes, keepdims=True)     # biased, from centred values
    xhat = centered / (var + eps).sqrt()
    return _affine(xhat, weight, bias)


def rms_norm(x, normalized_shape, weight=None, eps=1e-6, offset=0.0, casting="llama"):
    """RMSNorm with w' = offset + w and the casting modes of ``kernels.reference``; each
    cast is a visible ``Cast`` node (none at all for float32/float64 input)."""
    axes = _trailing_axes(x, normalized_shape)
    acc = accumulation_dtype(x.dtype)
    h = x if casting == "none" else _cast(x, acc)             # llama, gemma: stats in float32
    xhat = h / ((h * h).mean(axes, keepdims=True) + eps).sqrt()
    if casting == "gemma":
        weight = None if weight is None else _offset(_cast(weight, acc), offset)
        return _cast(_affine(xhat, weight, None), x.dtype)    # (x̂·w') cast at the end
    xhat = _cast(xhat, x.dtype)                               # llama: x̂ cast before w'
    weight = None if weight is None else _offset(weight, offset)   # in the weight's dtype
    return _affine(xhat, weight, None)


def _cast(t, dtype):
    return t if t.dtype == dtype else t.astype(dtype)


def _offset(weight, offset):
    return weight + offset if offset else weight


def add_layer_norm(x, residual, normalized_shape, weight=None, bias=None, eps=1e-5):
    s = x + residual
    return layer_norm(s, normalized_shape, weight, bias, eps), s


def add_rms_norm(x, residual, normalized_shape, weight=None, eps=1e-6, offset=0.0,
                 casting="llama"):
    s = x + residual
    return rms_norm(s, normalized_shape, weight, eps, offset, casting), s


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """BatchNorm of x (N, C, *) per channel; running statistics are arrays (or None)."""
    axes = (0,) + tuple(range(2, x.ndim))                     # every dim but the channels
    channel_shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)     # (C,) -> (1, C, 1, ...)
    if training:
        mean = x.mean(axes, keepdims=True)
        centered = x - mean
        var = (centered * centered).mean(axes, keepdims=True)
        with no_grad():
            reference.update_running_stats(running_mean, running_var, mean.data.reshape(-1),
                                           var.data.reshape(-1), x.size // x.shape[1], momentum)
    else:
        # Constants in x's dtype: in eval the statistics do not depend on x.
        centered = x - Tensor(running_mean.reshape(channel_shape), dtype=x.dtype, device=x.device)
        var = Tensor(running_var.reshape(channel_shape), dtype=x.dtype, device=x.device)
    xhat = centered / (var + eps).sqrt()
    return _affine(xhat, _reshape(weight, channel_shape), _reshape(bias, channel_shape))


def _reshape(param, shape):
    return None if param is None else param.reshape(shape)


def _affine(xhat, weight, bias):
    if weight is not None:
        xhat = xhat * weight
    if bias is not None:
        xhat = xhat + bias
    return xhat
