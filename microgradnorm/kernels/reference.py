"""The reference kernels: forward and closed-form backward of every fused norm, on arrays.

One implementation for every backend (``xp`` is NumPy or CuPy); the CUDA kernels are checked
against these functions. Nothing here knows about Tensors or graphs.

Conventions:
  * LayerNorm / RMSNorm rows: ``x`` is (M, D), one row per normalized vector; statistics
    ``mean`` and ``rstd`` are (M,).
  * BatchNorm: ``x`` is (N, C, L), normalized per channel over the N·L values of axes
    (0, 2); statistics are (C,).
  * ``weight`` / ``bias`` may be None (no affine transform); their gradients are then None.
  * float16 input is computed in float32 ("accumulate in float32") and the results are cast
    back: outputs and dx take x's dtype, dweight/dbias the parameter's dtype, statistics stay
    in the accumulation dtype.
  * Variance is the stable two-pass form mean((x - mean)^2), never E[x^2] - mean^2, and eps
    sits inside the square root: rstd = 1 / sqrt(var + eps) (PyTorch's convention).
"""

import numpy as np

from ..backend import array_module


def accumulation_dtype(dtype):
    """float32 for half precision, else the dtype itself (float32 or float64)."""
    return np.dtype(np.float32) if np.dtype(dtype).itemsize < 4 else np.dtype(dtype)


def _acc(array, dtype):
    return None if array is None else array.astype(dtype, copy=False)


def _cast_grad(grad, like):
    return None if like is None else grad.astype(like.dtype, copy=False)


# ----- LayerNorm ----------------------------------------------------------------------------
def layer_norm_forward(x, weight, bias, eps):
    """y = (x - mean) * rstd * weight + bias over each row.

    Returns y (M, D) in x's dtype, mean (M,) and rstd (M,) in the accumulation dtype.
    """
    acc = accumulation_dtype(x.dtype)
    xa = x.astype(acc, copy=False)                          # (M, D)
    mean = xa.mean(axis=1)                                  # (M,)
    centered = xa - mean[:, None]                           # (M, D)
    var = (centered * centered).mean(axis=1)                # (M,)  stable: centred first
    rstd = 1 / array_module(x).sqrt(var + eps)              # (M,)  eps inside the sqrt
    y = centered * rstd[:, None]                            # (M, D)  x̂
    y = _affine(y, _acc(weight, acc), _acc(bias, acc))
    return y.astype(x.dtype, copy=False), mean, rstd


def layer_norm_backward(dy, x, weight, mean, rstd, need_bias_grad=True):
    """Closed-form backward: with x̂ = (x - mean)·rstd and g = dy·weight,

        dx      = rstd · (g - mean(g) - x̂ · mean(g·x̂))     (means over each row)
        dweight = Σ_rows dy · x̂,     dbias = Σ_rows dy

    Returns dx (M, D), dweight (D,) or None, dbias (D,) in dy's dtype or None.
    """
    acc = mean.dtype
    dya = dy.astype(acc, copy=False)                        # (M, D)
    xhat = (x.astype(acc, copy=False) - mean[:, None]) * rstd[:, None]   # (M, D) recomputed
    g = dya if weight is None else dya * _acc(weight, acc)  # (M, D)  dL/dx̂
    dx = rstd[:, None] * (g - g.mean(axis=1, keepdims=True)
                          - xhat * (g * xhat).mean(axis=1, keepdims=True))
    dweight = None if weight is None else _cast_grad((dya * xhat).sum(axis=0), weight)
    dbias = dya.sum(axis=0).astype(dy.dtype, copy=False) if need_bias_grad else None
    return dx.astype(x.dtype, copy=False), dweight, dbias


# ----- RMSNorm ------------------------------------------------------------------------------
def rms_norm_forward(x, weight, eps):
    """y = x * rstd * weight with rstd = 1 / sqrt(mean(x^2) + eps) over each row.

    Returns y (M, D) in x's dtype and rstd (M,) in the accumulation dtype.
    """
    acc = accumulation_dtype(x.dtype)
    xa = x.astype(acc, copy=False)                          # (M, D)
    rstd = 1 / array_module(x).sqrt((xa * xa).mean(axis=1) + eps)   # (M,)
    y = xa * rstd[:, None]                                  # (M, D)  x̂
    y = _affine(y, _acc(weight, acc), None)
    return y.astype(x.dtype, copy=False), rstd


def rms_norm_backward(dy, x, weight, rstd):
    """Closed-form backward: with x̂ = x·rstd and g = dy·weight,

        dx = rstd · (g - x̂ · mean(g·x̂)),     dweight = Σ_rows dy · x̂

    Returns dx (M, D) and dweight (D,) or None.
    """
    acc = rstd.dtype
    dya = dy.astype(acc, copy=False)                        # (M, D)
    xhat = x.astype(acc, copy=False) * rstd[:, None]        # (M, D) recomputed
    g = dya if weight is None else dya * _acc(weight, acc)  # (M, D)
    dx = rstd[:, None] * (g - xhat * (g * xhat).mean(axis=1, keepdims=True))
    dweight = None if weight is None else _cast_grad((dya * xhat).sum(axis=0), weight)
    return dx.astype(x.dtype, copy=False), dweight


# ----- residual add + norm ------------------------------------------------------------------
def add_layer_norm_forward(x, residual, weight, bias, eps):
    """s = x + residual; y = LayerNorm(s). Returns y, s, mean, rstd."""
    s = x + residual                                        # (M, D) the new residual stream
    y, mean, rstd = layer_norm_forward(s, weight, bias, eps)
    return y, s, mean, rstd


def add_layer_norm_backward(dy, ds, s, weight, mean, rstd, need_bias_grad=True):
    """d(x) = d(residual) = LayerNorm backward of dy + ds, the gradient of the returned s.

    Returns d_sum (M, D), dweight, dbias.
    """
    dx, dweight, dbias = layer_norm_backward(dy, s, weight, mean, rstd, need_bias_grad)
    return dx + ds, dweight, dbias


def add_rms_norm_forward(x, residual, weight, eps):
    """s = x + residual; y = RMSNorm(s). Returns y, s, rstd."""
    s = x + residual                                        # (M, D)
    y, rstd = rms_norm_forward(s, weight, eps)
    return y, s, rstd


def add_rms_norm_backward(dy, ds, s, weight, rstd):
    """Returns d_sum = RMSNorm backward of dy + ds (M, D), and dweight."""
    dx, dweight = rms_norm_backward(dy, s, weight, rstd)
    return dx + ds, dweight


# ----- BatchNorm ----------------------------------------------------------------------------
def batch_norm_statistics(x):
    """Per-channel mean and biased variance of x (N, C, L) over axes (0, 2), stable form."""
    acc = accumulation_dtype(x.dtype)
    xa = x.astype(acc, copy=False)
    mean = xa.mean(axis=(0, 2))                             # (C,)
    centered = xa - mean[:, None]                           # (N, C, L)
    var = (centered * centered).mean(axis=(0, 2))           # (C,) biased: divides by N·L
    return mean, var


def batch_norm_forward(x, mean, var, weight, bias, eps):
    """y = (x - mean) * rstd * weight + bias per channel, for given statistics (the batch's
    in training, the running ones in eval). Returns y (N, C, L) and rstd (C,)."""
    acc = mean.dtype
    rstd = 1 / array_module(x).sqrt(var + eps)              # (C,)
    xhat = (x.astype(acc, copy=False) - mean[:, None]) * rstd[:, None]   # (N, C, L)
    y = _affine(xhat, _channel(_acc(weight, acc)), _channel(_acc(bias, acc)))
    return y.astype(x.dtype, copy=False), rstd


def batch_norm_backward(dy, x, weight, mean, rstd, training, need_bias_grad=True):
    """Closed-form backward, g = dy·weight, x̂ = (x - mean)·rstd, means over axes (0, 2):

        training: dx = rstd · (g - mean(g) - x̂ · mean(g·x̂))   (the statistics depend on x)
        eval:     dx = rstd · g                              (running statistics are constant)
        dweight = Σ dy · x̂,   dbias = Σ dy                  (sums over axes (0, 2))
    """
    acc = mean.dtype
    dya = dy.astype(acc, copy=False)                        # (N, C, L)
    xhat = (x.astype(acc, copy=False) - mean[:, None]) * rstd[:, None]
    g = dya if weight is None else dya * _channel(_acc(weight, acc))
    if training:
        dx = rstd[:, None] * (g - g.mean(axis=(0, 2), keepdims=True)
                              - xhat * (g * xhat).mean(axis=(0, 2), keepdims=True))
    else:
        dx = rstd[:, None] * g
    dweight = None if weight is None else _cast_grad((dya * xhat).sum(axis=(0, 2)), weight)
    dbias = dya.sum(axis=(0, 2)).astype(dy.dtype, copy=False) if need_bias_grad else None
    return dx.astype(x.dtype, copy=False), dweight, dbias


def update_running_stats(running_mean, running_var, mean, var, count, momentum):
    """PyTorch's update, in place: running = (1 - momentum)·running + momentum·batch, with the
    unbiased variance var·n/(n-1) for running_var (the biased one normalizes the batch)."""
    unbiased = var * (count / (count - 1))
    if running_mean is not None:
        running_mean *= 1 - momentum
        running_mean += momentum * mean.astype(running_mean.dtype, copy=False)
    if running_var is not None:
        running_var *= 1 - momentum
        running_var += momentum * unbiased.astype(running_var.dtype, copy=False)


# ----- helpers ------------------------------------------------------------------------------
def _channel(param):
    return None if param is None else param[:, None]        # (C,) -> (C, 1) against (N, C, L)


def _affine(xhat, weight, bias):
    if weight is not None:
        xhat = xhat * weight
    if bias is not None:
        xhat = xhat + bias
    return xhat
