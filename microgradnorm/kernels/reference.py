"""The reference kernels: forward and closed-form backward of every fused norm, on arrays.

One implementation for every backend (``xp`` is NumPy or CuPy); the CUDA kernels and the
optional numba CPU kernels (``numba_cpu``) are checked against these functions. Nothing
here knows about Tensors or graphs.

Conventions:
  * LayerNorm / RMSNorm rows: ``x`` is (M, D), one row per normalized vector; statistics
    ``mean`` and ``rstd`` are (M,).
  * BatchNorm: ``x`` is (N, C, L), normalized per channel over the N·L values of axes
    (0, 2); statistics are (C,).
  * ``weight`` / ``bias`` may be None (no affine transform); their gradients are then None.
  * float16 input is computed in float32 ("accumulate in float32") and the results are cast
    back: outputs and dx take x's dtype, dweight the weight's, dbias dy's (the same dtype in
    the engine), statistics stay in the accumulation dtype.
  * Variance is the stable two-pass form mean((x - mean)^2), never E[x^2] - mean^2, and eps
    sits inside the square root: rstd = 1 / sqrt(var + eps) (PyTorch's convention).
"""

import numpy as np

from ..backend import array_module, device_of


def accumulation_dtype(dtype):
    """float32 for half precision, else the dtype itself (float32 or float64)."""
    return np.dtype(np.float32) if np.dtype(dtype).itemsize < 4 else np.dtype(dtype)


def _acc(array, dtype):
    return None if array is None else array.astype(dtype, copy=False)


def _cast_grad(grad, like):
    return None if like is None else grad.astype(like.dtype, copy=False)


# ----- how the CPU path stays fast ----------------------------------------------------------
# A NumPy expression makes one pass over memory per operation and a full-size temporary per
# intermediate; at (4096, 1024) float32 each such pass costs about a millisecond. So the
# row norms run over blocks of rows small enough to stay in the CPU's cache, with the
# temporaries of a block in two reused scratch buffers and the arithmetic in place (out=):
# main memory then sees little more than each input read once and each output written once.
# Row sums go through BLAS (rows @ ones), which reads a block once at full speed.
BLOCK_ELEMENTS = 2**17            # 512 KiB of float32 per block buffer, about L2-sized; the
                                  # 3-4 buffers a kernel keeps live fit in L3


def _block_rows(x):
    """Rows per block of x (M, D): about BLOCK_ELEMENTS values. On a GPU all rows are one
    block: one kernel launch over the whole array beats many small ones."""
    if device_of(x) != "cpu":
        return max(x.shape[0], 1)
    return max(1, BLOCK_ELEMENTS // max(x.shape[1], 1))


def _row_blocks(x):
    """Slices of x's rows, ``_block_rows(x)`` each."""
    step = _block_rows(x)
    return [slice(start, start + step) for start in range(0, x.shape[0], step)]


def _param_rows(param, x):
    """A per-feature parameter (D,) repeated over a block's rows, (block rows, D), on the
    CPU: NumPy multiplies two same-shape contiguous arrays about twice as fast as an array
    by a broadcast row, and the copy is made once per call for all blocks. The products are
    the same numbers. On a GPU (one block) and for None, the parameter itself."""
    if param is None or device_of(x) != "cpu":
        return param
    rows = min(_block_rows(x), x.shape[0])
    return array_module(x).broadcast_to(param, (rows, param.shape[-1])).copy()


# ----- LayerNorm ----------------------------------------------------------------------------
def layer_norm_forward(x, weight, bias, eps):
    """y = (x - mean) * rstd * weight + bias over each row.

    Returns y (M, D) in x's dtype, mean (M,) and rstd (M,) in the accumulation dtype.
    """
    y, _, mean, rstd = _layer_norm_forward(x, None, weight, bias, eps)
    return y, mean, rstd


def _layer_norm_forward(x, residual, weight, bias, eps):
    """LayerNorm of x, or of s = x + residual when residual is given: each block then forms
    its rows of s and normalizes them while they are still in cache. Returns y, s, mean,
    rstd (s is None without a residual).

    Passes. Main memory: x read once, y written once (+ residual read, s written). Per
    block, in cache: 7 — row sum (BLAS), x - mean, square, row sum (BLAS), × rstd, × w,
    + b (5 elementwise without weight and bias). Each pass stays: dropping one would change
    the rounding, e.g. × (rstd·w) in one pass instead of × rstd then × w."""
    xp, acc, (rows, size) = array_module(x), accumulation_dtype(x.dtype), x.shape
    weight, bias = _param_rows(_acc(weight, acc), x), _param_rows(_acc(bias, acc), x)
    y = xp.empty_like(x)                                    # (M, D)
    s = None if residual is None else xp.empty_like(x)      # (M, D)
    mean, rstd = xp.empty(rows, acc), xp.empty(rows, acc)   # (M,)
    ones = xp.ones(size, acc)                               # (D,)  row sums as x @ ones
    square = xp.empty((min(_block_rows(x), rows), size), acc)
    for block in _row_blocks(x):
        xb = _input_rows(x, residual, s, block, acc)        # (m, D)
        yb = y[block] if y.dtype == acc else xp.empty_like(xb)   # where the block is built
        mb = xb @ ones                                      # (m,)
        mb /= size
        xp.subtract(xb, mb[:, None], out=yb)                # (m, D) centred, in y itself
        sq = xp.multiply(yb, yb, out=square[:len(mb)])      # (m, D) scratch, stays in cache
        var = sq @ ones                                     # (m,)  stable: of centred values
        var /= size
        rb = 1 / xp.sqrt(var + eps)                         # (m,)  eps inside the sqrt
        yb *= rb[:, None]                                   # x̂
        _affine_(yb, _rows(weight, len(rb)), _rows(bias, len(rb)))
        if y.dtype != acc:
            y[block] = yb                                   # float32 -> float16 cast
        mean[block], rstd[block] = mb, rb
    return y, s, mean, rstd


def _input_rows(x, residual, s, block, acc):
    """The block's rows to normalize, in the accumulation dtype: x's, or those of
    s = x + residual, written into s on the way (in x's dtype, as x + residual would be)."""
    if residual is None:
        return x[block].astype(acc, copy=False)
    sb = array_module(x).add(x[block], residual[block], out=s[block])
    return sb.astype(acc, copy=False)


def layer_norm_backward(dy, x, weight, mean, rstd, need_bias_grad=True):
    """Closed-form backward: with x̂ = (x - mean)·rstd and g = dy·weight,

        dx      = rstd · (g - mean(g) - x̂ · mean(g·x̂))     (means over each row)
        dweight = Σ_rows dy · x̂,     dbias = Σ_rows dy

    Returns dx (M, D), dweight (D,) or None, dbias (D,) in dy's dtype or None.
    """
    return _layer_norm_backward(dy, None, x, weight, mean, rstd, need_bias_grad, rms=False)


# ----- RMSNorm ------------------------------------------------------------------------------
def rms_norm_forward(x, weight, eps):
    """y = x * rstd * weight with rstd = 1 / sqrt(mean(x^2) + eps) over each row.

    Returns y (M, D) in x's dtype and rstd (M,) in the accumulation dtype.
    """
    y, _, rstd = _rms_norm_forward(x, None, weight, eps)
    return y, rstd


def _rms_norm_forward(x, residual, weight, eps):
    """RMSNorm of x, or of s = x + residual (as in ``_layer_norm_forward``).

    Passes. Main memory: x read once, y written once. Per block, in cache: 4 — square
    (into y's block), row sum (BLAS), x × rstd, × w."""
    xp, acc, (rows, size) = array_module(x), accumulation_dtype(x.dtype), x.shape
    weight = _param_rows(_acc(weight, acc), x)              # (block rows, D)
    y = xp.empty_like(x)                                    # (M, D)
    s = None if residual is None else xp.empty_like(x)      # (M, D)
    rstd = xp.empty(rows, acc)                              # (M,)
    ones = xp.ones(size, acc)
    for block in _row_blocks(x):
        xb = _input_rows(x, residual, s, block, acc)        # (m, D)
        yb = y[block] if y.dtype == acc else xp.empty_like(xb)
        xp.multiply(xb, xb, out=yb)                         # x², built where y goes
        rb = yb @ ones                                      # (m,)
        rb /= size
        rb = 1 / xp.sqrt(rb + eps)                          # (m,)
        xp.multiply(xb, rb[:, None], out=yb)                # x̂
        _affine_(yb, _rows(weight, len(rb)), None)
        if y.dtype != acc:
            y[block] = yb                                   # float32 -> float16 cast
        rstd[block] = rb
    return y, s, rstd


def rms_norm_backward(dy, x, weight, rstd):
    """Closed-form backward: with x̂ = x·rstd and g = dy·weight,

        dx = rstd · (g - x̂ · mean(g·x̂)),     dweight = Σ_rows dy · x̂

    Returns dx (M, D) and dweight (D,) or None.
    """
    dx, dweight, _ = _layer_norm_backward(dy, None, x, weight, None, rstd, False, rms=True)
    return dx, dweight


def _layer_norm_backward(dy, ds, x, weight, mean, rstd, need_bias_grad, rms):
    """The backward of both row norms, block by block. RMSNorm is LayerNorm without the
    centring (mean is None), so its dx also lacks the mean(g) term. ``ds`` (or None) is
    added to each block of dx while it is in cache: the residual forms' gradient of s.

    x̂ = rstd·xc with xc = x - mean (LayerNorm) or x (RMSNorm), and rstd is one number per
    row, so it leaves every row sum and every column sum:
        dweight = Σ_rows dy·x̂ = rstd @ (dy·xc),     dbias = Σ_rows dy = ones @ dy
        mean(g·x̂) = rstd · ((dy·xc) @ w) / D,       mean(g) = (dy @ w) / D
    which BLAS computes from the one product dy·xc, and
        dx = rstd · (g - mean(g) - xc · rstd·mean(g·x̂))
    forms g = dy·w only at the end, where it is needed element by element.

    Passes. Main memory: x and dy read once, dx written once (+ ds read). Per block, in
    cache: LayerNorm 10 — x - mean, dy·xc, its column sum (BLAS, dweight), column sum of dy
    (BLAS, dbias), its row product with w (BLAS), xc × coefficient, + mean(g), dy·w,
    subtract, × rstd. RMSNorm 7 — the same without the centring, dbias and mean(g).
    """
    xp, acc, (rows, size) = array_module(x), rstd.dtype, x.shape
    w = xp.ones(size, acc) if weight is None else _acc(weight, acc)        # (D,)  1: no weight
    dx = xp.empty_like(x)                                   # (M, D)
    dweight = xp.zeros(size, acc) if weight is not None else None
    dbias = xp.zeros(size, acc) if need_bias_grad else None
    block_rows = min(_block_rows(x), rows)
    w_rows = None if weight is None else _param_rows(w, x)                  # (block rows, D)
    ones_rows = xp.ones(block_rows, acc)
    xc_buffer, product_buffer = xp.empty((2, block_rows, size), acc)
    for block in _row_blocks(x):
        xb = x[block].astype(acc, copy=False)               # (m, D)  never written to
        dyb = dy[block].astype(acc, copy=False)             # (m, D)  never written to
        rows_here = xb.shape[0]
        rb = rstd[block]                                    # (m,)
        if rms:
            xc = xb
        else:
            xc = xp.subtract(xb, mean[block][:, None], out=xc_buffer[:rows_here])
        dy_xc = xp.multiply(dyb, xc, out=product_buffer[:rows_here])      # (m, D)
        if dweight is not None:
            dweight += rb @ dy_xc                           # (D,)
        if dbias is not None:
            dbias += ones_rows[:rows_here] @ dyb            # (D,)
        mean_g_xhat = rb * (dy_xc @ w) / size               # (m,)
        # The part of g the statistics take back: xc·rstd·mean(g·x̂) (+ mean(g)).
        taken = xp.multiply(xc, (rb * mean_g_xhat)[:, None], out=xc_buffer[:rows_here])
        if not rms:
            taken += (dyb @ w / size)[:, None]
        if weight is None:
            g = xp.subtract(dyb, taken, out=taken)          # (m, D)  g = dy: no pass for w = 1
        else:
            g = xp.multiply(dyb, _rows(w_rows, rows_here), out=dy_xc)   # (m, D)  g = dy·w
            g -= taken
        if dx.dtype == acc:
            xp.multiply(g, rb[:, None], out=dx[block])
        else:
            dx[block] = g * rb[:, None]                     # float32 -> float16 cast
        if ds is not None:
            dx[block] += ds[block]
    return (dx, _cast_grad(dweight, weight),
            None if dbias is None else dbias.astype(dy.dtype, copy=False))


# ----- residual add + norm ------------------------------------------------------------------
def add_layer_norm_forward(x, residual, weight, bias, eps):
    """s = x + residual; y = LayerNorm(s). Returns y, s, mean, rstd."""
    return _layer_norm_forward(x, residual, weight, bias, eps)


def add_layer_norm_backward(dy, ds, s, weight, mean, rstd, need_bias_grad=True):
    """d(x) = d(residual) = LayerNorm backward of dy + ds, the gradient of the returned s.

    Returns d_sum (M, D), dweight, dbias.
    """
    return _layer_norm_backward(dy, ds, s, weight, mean, rstd, need_bias_grad, rms=False)


def add_rms_norm_forward(x, residual, weight, eps):
    """s = x + residual; y = RMSNorm(s). Returns y, s, rstd."""
    return _rms_norm_forward(x, residual, weight, eps)


def add_rms_norm_backward(dy, ds, s, weight, rstd):
    """Returns d_sum = RMSNorm backward of dy + ds (M, D), and dweight."""
    dsum, dweight, _ = _layer_norm_backward(dy, ds, s, weight, None, rstd, False, rms=True)
    return dsum, dweight


# ----- BatchNorm ----------------------------------------------------------------------------
# Statistics span the whole batch, so there are no independent row blocks here; the passes
# are still kept few, with temporaries of our own updated in place.
def batch_norm_statistics(x):
    """Per-channel mean and biased variance of x (N, C, L) over axes (0, 2), stable form."""
    acc = accumulation_dtype(x.dtype)
    xa = x.astype(acc, copy=False)
    count = x.shape[0] * x.shape[2]
    mean = xa.sum(axis=(0, 2)) / count                      # (C,)
    centered = xa - mean[:, None]                           # (N, C, L) our own temporary
    centered *= centered
    var = centered.sum(axis=(0, 2)) / count                 # (C,) biased: divides by N·L
    return mean, var


def batch_norm_forward(x, mean, var, weight, bias, eps):
    """y = (x - mean) * rstd * weight + bias per channel, for given statistics (the batch's
    in training, the running ones in eval). Returns y (N, C, L) and rstd (C,)."""
    acc = mean.dtype
    rstd = 1 / array_module(x).sqrt(var + eps)              # (C,)
    # rstd and weight fold into one per-channel scale. Centring first, not x·scale +
    # (bias - mean·scale), keeps the precision when |mean| is large against the spread.
    scale = rstd if weight is None else rstd * _acc(weight, acc)          # (C,)
    y = x.astype(acc, copy=False) - mean[:, None]           # (N, C, L) our own array
    y *= scale[:, None]
    _affine_(y, None, _channel(_acc(bias, acc)))
    return y.astype(x.dtype, copy=False), rstd


def batch_norm_backward(dy, x, weight, mean, rstd, training, need_bias_grad=True):
    """Closed-form backward, g = dy·weight, x̂ = (x - mean)·rstd, means over axes (0, 2):

        training: dx = rstd · (g - mean(g) - x̂ · mean(g·x̂))   (the statistics depend on x)
        eval:     dx = rstd · g                              (running statistics are constant)
        dweight = Σ dy · x̂,   dbias = Σ dy                  (sums over axes (0, 2))

    weight is per channel, so it leaves the means: mean(g) = weight·mean(dy) and
    mean(g·x̂) = weight·mean(dy·x̂); dx = rstd·weight · (dy - mean(dy) - x̂·mean(dy·x̂)).
    """
    acc = mean.dtype
    count = x.shape[0] * x.shape[2]
    dya = dy.astype(acc, copy=False)                        # (N, C, L)  never written to
    xhat = x.astype(acc, copy=False) - mean[:, None]        # (N, C, L)  recomputed, ours
    xhat *= rstd[:, None]
    product = dya * xhat                                    # (N, C, L)  ours
    sum_dy_xhat = product.sum(axis=(0, 2))                  # (C,)
    sum_dy = dya.sum(axis=(0, 2))                           # (C,)
    scale = rstd if weight is None else rstd * _acc(weight, acc)          # (C,)
    if training:
        xhat *= (sum_dy_xhat / count)[:, None]              # x̂·mean(dy·x̂)
        xhat += (sum_dy / count)[:, None]                   # + mean(dy)
        dx = array_module(x).subtract(dya, xhat, out=product)
        dx *= scale[:, None]
    else:
        dx = dya * scale[:, None]
    dweight = None if weight is None else _cast_grad(sum_dy_xhat, weight)
    dbias = sum_dy.astype(dy.dtype, copy=False) if need_bias_grad else None
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


def _rows(param_rows, count):
    """The first ``count`` rows of a ``_param_rows`` array (a 1-D parameter as it is)."""
    return param_rows if param_rows is None or param_rows.ndim == 1 else param_rows[:count]


def _affine_(xhat, weight, bias):
    """x̂·weight + bias, in place, on an array this module owns (either may be None)."""
    if weight is not None:
        xhat *= weight
    if bias is not None:
        xhat += bias

