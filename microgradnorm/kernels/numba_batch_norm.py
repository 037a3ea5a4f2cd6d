"""The numba kernels of BatchNorm: ``batch_norm_statistics``, ``batch_norm_forward`` and
``batch_norm_backward`` of ``kernels.reference`` (same names and signatures), compiled for
float32 and float64 NumPy arrays x (N, C, L); ``numba_cpu`` re-exports them. A strided x
(channels-last, or ``BatchNorm1d`` on a transposed (N, L, C) sequence) or dy is copied
C-contiguous and runs compiled, and y and dx come back in x's memory order. Everything
else (half precision, CuPy, an empty batch, a weight or statistics of another shape) is the
reference's.

The reference's NumPy passes convert x to float64 and make a dozen passes over (N, C, L):
at (4096, 1024) float32 its forward took ten times PyTorch's. Here each pass reads x (and
dy) once, in x's dtype, and accumulates per channel in float64, as the reference does:
the statistics in one pass of deviations from each channel's first value (their sum
corrects it to the mean, as ``backend.corrected_mean``'s step, their squares give the
variance), and in two (the sum, then the deviations from its mean) for a channel whose
first value lies more than 4 standard deviations from the mean, where the one pass would
cancel; the forward one more pass to write y, the backward one pass for Σdy and Σdy·x̂ and one to
write dx. Two layouts: L = 1 (``BatchNorm1d`` on (N, C)), where a channel's values are a
column and each row is added into the C sums at once (a loop LLVM vectorizes), and L > 1,
where each (n, c) holds L contiguous values summed in one loop.
"""

import numpy as np

from . import reference
from .numba_jit import DTYPES, _jit, dense

__all__ = ["batch_norm_backward", "batch_norm_forward", "batch_norm_statistics"]


# ----- the compiled loops: x as (N, C·L) rows, per-channel arrays (C,) float64 ----------------
# (2-D, so that a row and a channel's block of it are contiguous slices to numba: a view
# x[n, :, 0] of the 3-D array has a stride known only at run time, and its loop ran 3x
# slower, not vectorized)
@_jit
def _channel_sums(x, length, sums):
    """sums[c] += Σ x over each channel's N·L values."""
    batch, channels = x.shape[0], sums.size
    for n in range(batch):
        if length == 1:                                   # a row of C channels
            row = x[n]
            for c in range(channels):
                sums[c] += np.float64(row[c])
        else:
            for c in range(channels):
                block = x[n, c * length:(c + 1) * length]
                s = 0.0
                for j in range(length):
                    s += np.float64(block[j])
                sums[c] += s


@_jit
def _channel_deviations(x, length, centre, sums, squares):
    """sums[c] += Σ (x - centre[c]) and squares[c] += Σ (x - centre[c])² over each
    channel's N·L values."""
    batch, channels = x.shape[0], centre.size
    for n in range(batch):
        if length == 1:
            row = x[n]
            for c in range(channels):
                d = np.float64(row[c]) - centre[c]
                sums[c] += d
                squares[c] += d * d
        else:
            for c in range(channels):
                block, m = x[n, c * length:(c + 1) * length], centre[c]
                s = q = 0.0
                for j in range(length):
                    d = np.float64(block[j]) - m
                    s += d
                    q += d * d
                sums[c] += s
                squares[c] += q


@_jit
def _normalize(x, length, mean, scale, shift, y):
    """y = (x - mean)·scale + shift per channel, formed in float64 and rounded once."""
    batch, channels = x.shape[0], mean.size
    for n in range(batch):
        if length == 1:
            row, out = x[n], y[n]
            for c in range(channels):
                out[c] = (np.float64(row[c]) - mean[c]) * scale[c] + shift[c]
        else:
            for c in range(channels):
                block, out = x[n, c * length:(c + 1) * length], y[n, c * length:(c + 1) * length]
                m, s, b = mean[c], scale[c], shift[c]
                for j in range(length):
                    out[j] = (np.float64(block[j]) - m) * s + b


@_jit
def _gradient_sums(dy, x, length, mean, rstd, sum_dy, sum_dy_xhat):
    """Σ dy and Σ dy·x̂ per channel, x̂ = (x - mean)·rstd."""
    batch, channels = x.shape[0], mean.size
    for n in range(batch):
        if length == 1:
            g, row = dy[n], x[n]
            for c in range(channels):
                d = np.float64(g[c])
                sum_dy[c] += d
                sum_dy_xhat[c] += d * ((np.float64(row[c]) - mean[c]) * rstd[c])
        else:
            for c in range(channels):
                part = slice(c * length, (c + 1) * length)
                g, block, m, r = dy[n, part], x[n, part], mean[c], rstd[c]
                s = t = 0.0
                for j in range(length):
                    d = np.float64(g[j])
                    s += d
                    t += d * ((np.float64(block[j]) - m) * r)
                sum_dy[c] += s
                sum_dy_xhat[c] += t


@_jit
def _input_gradient(dy, x, length, mean, rstd, scale, mean_dy, mean_dy_xhat, dx):
    """dx = (dy - x̂·mean(dy·x̂) - mean(dy))·rstd·w per element (training)."""
    batch, channels = x.shape[0], mean.size
    for n in range(batch):
        if length == 1:
            g, row, out = dy[n], x[n], dx[n]
            for c in range(channels):
                xhat = (np.float64(row[c]) - mean[c]) * rstd[c]
                out[c] = (np.float64(g[c]) - (xhat * mean_dy_xhat[c] + mean_dy[c])) * scale[c]
        else:
            for c in range(channels):
                part = slice(c * length, (c + 1) * length)
                g, block, out = dy[n, part], x[n, part], dx[n, part]
                m, r, s, a, b = mean[c], rstd[c], scale[c], mean_dy_xhat[c], mean_dy[c]
                for j in range(length):
                    xhat = (np.float64(block[j]) - m) * r
                    out[j] = (np.float64(g[j]) - (xhat * a + b)) * s


@_jit
def _scaled(dy, length, scale, dx):
    """dx = dy·rstd·w per element (eval: the running statistics are constants)."""
    batch = dy.shape[0]
    for n in range(batch):
        g, out = dy[n], dx[n]
        for j in range(g.size):
            out[j] = np.float64(g[j]) * scale[j // length]


# ----- which calls the loops take -----------------------------------------------------------
def _takes(x, *rows, channels=()):
    """x a C-contiguous float32/float64 NumPy (N, C, L) with values; ``rows`` (dy) like x;
    ``channels`` NumPy float arrays of shape (C,), or None."""
    if not (type(x) is np.ndarray and x.dtype in DTYPES and x.ndim == 3 and x.size
            and x.flags.c_contiguous):
        return False
    for a in rows:
        if not (type(a) is np.ndarray and a.dtype == x.dtype and a.shape == x.shape
                and a.flags.c_contiguous):
            return False
    for a in channels:
        if a is not None and not (type(a) is np.ndarray and a.dtype.kind == "f"
                                  and a.shape == x.shape[1:2]):
            return False
    return True


def _laid_out_as(x, out):
    """``out``, computed C-contiguous, in x's memory order (one copy where x is strided: a
    channels-last x gives a channels-last y, as torch's)."""
    if x.flags.c_contiguous:
        return out
    laid_out = np.empty_like(x)
    laid_out[...] = out
    return laid_out


def _per_channel(a, channels, default):
    """A (C,) float64 array: ``a`` converted, or ``default`` everywhere for None."""
    return np.full(channels, default) if a is None else np.ascontiguousarray(a, np.float64)


# ----- the reference's functions ------------------------------------------------------------
def batch_norm_statistics(x):
    """As ``reference.batch_norm_statistics``: mean (C,) and biased var (C,), float64."""
    x = dense(x)
    if not _takes(x):
        return reference.batch_norm_statistics(x)
    (batch, channels, length), count = x.shape, x.shape[0] * x.shape[2]
    rows = x.reshape(batch, -1)                             # (N, C·L), a view
    # One pass first, about each channel's first value K: mean = K + mean(x - K) and
    # var = mean((x - K)²) - mean(x - K)², which loses (K - mean)²/var ulps of float64 to
    # cancellation. Taken where that is at most 16 (K within 4 standard deviations of the
    # mean) and everything is finite; other channels get the two passes below.
    shift = rows[0, ::length].astype(np.float64)            # (C,) x[0, c, 0]
    mean, var, ok = _moments(rows, length, shift, count)
    with np.errstate(invalid="ignore", over="ignore"):
        ok &= (mean - shift) ** 2 <= 16 * var
    if ok.all():
        return mean, var
    sums = np.zeros(channels)
    _channel_sums(rows, length, sums)
    two_pass_mean, two_pass_var, _ = _moments(rows, length, sums / count, count)
    return np.where(ok, mean, two_pass_mean), np.where(ok, var, two_pass_var)


def _moments(rows, length, centre, count):
    """(mean, biased var, whether both are finite) per channel from one pass of deviations
    about ``centre`` (C,): mean = centre + mean(x - centre), corrected only where that
    correction is finite (as ``backend.corrected_mean``), and Σ(x - mean)² = Σ(x - centre)²
    - count·correction², the correction's square subtracted only where finite (an inf
    variance stays inf, not inf - inf = NaN); rounding below 0 is 0, NaN stays."""
    deviations, squares = np.zeros(centre.size), np.zeros(centre.size)
    _channel_deviations(rows, length, centre, deviations, squares)
    with np.errstate(invalid="ignore", over="ignore"):
        correction = deviations / count                     # mean(x - centre)
        mean = centre + np.where(np.isfinite(correction), correction, 0)
        square = correction * correction
        var = squares / count - np.where(np.isfinite(square), square, 0)
    var = np.where(var < 0, 0.0, var)
    return mean, var, np.isfinite(mean) & np.isfinite(var)


def batch_norm_forward(x, mean, var, weight, bias, eps):
    """As ``reference.batch_norm_forward``: y (N, C, L) in x's dtype and memory order, and
    rstd (C,)."""
    given, x = x, dense(x)
    if not (_takes(x, channels=(mean, var, weight, bias)) and mean.dtype == np.float64
            and var.dtype == np.float64):
        return reference.batch_norm_forward(given, mean, var, weight, bias, eps)
    channels = x.shape[1]
    rstd = reference.inverse_sqrt(var + eps)                             # (C,)
    scale = rstd if weight is None else rstd * weight.astype(np.float64)
    y = np.empty_like(x)
    _normalize(x.reshape(x.shape[0], -1), x.shape[2], mean, scale,
               _per_channel(bias, channels, 0.0), y.reshape(x.shape[0], -1))
    return _laid_out_as(given, y), rstd


def batch_norm_backward(dy, x, weight, mean, rstd, training, need_bias_grad=True):
    """As ``reference.batch_norm_backward``: dx in x's dtype, dweight (weight's dtype) or
    None, dbias (dy's dtype) or None."""
    given, dy, x = x, dense(dy), dense(x)
    if not (_takes(x, dy, channels=(weight, mean, rstd)) and mean.dtype == np.float64
            and rstd.dtype == np.float64):
        return reference.batch_norm_backward(dy, given, weight, mean, rstd, training,
                                             need_bias_grad)
    (batch, channels, length), count = x.shape, x.shape[0] * x.shape[2]
    rows, dy_rows = x.reshape(batch, -1), dy.reshape(batch, -1)     # (N, C·L) views
    sum_dy, sum_dy_xhat = np.zeros(channels), np.zeros(channels)
    _gradient_sums(dy_rows, rows, length, mean, rstd, sum_dy, sum_dy_xhat)
    scale = rstd if weight is None else rstd * weight.astype(np.float64)
    dx = np.empty_like(x)
    if training:
        _input_gradient(dy_rows, rows, length, mean, rstd, scale, sum_dy / count,
                        sum_dy_xhat / count, dx.reshape(batch, -1))
    else:
        _scaled(dy_rows, length, scale, dx.reshape(batch, -1))
    dweight = None if weight is None else sum_dy_xhat.astype(weight.dtype)
    dbias = sum_dy.astype(dy.dtype) if need_bias_grad else None
    return _laid_out_as(given, dx), dweight, dbias
