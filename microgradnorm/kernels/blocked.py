"""The blocked NumPy kernels, the default for NumPy arrays without numba (and what the numba
kernels hand on: half precision, mixed dtypes, views): the functions of ``reference``,
same names, signatures and results to rounding, arranged for speed on the CPU.

A NumPy expression makes one pass over memory per operation and a full-size temporary per
intermediate. So the row norms here run over blocks of rows small enough to stay in the
CPU's cache, with a block's temporaries in reused scratch buffers and the arithmetic in
place (out=): main memory sees little more than each input read once and each output
written once. Row and column sums go through BLAS (rows @ ones), which reads a block once
at full speed. RMSNorm's offset and casting modes are ``reference``'s helpers around the
blocked loops; BatchNorm (statistics over the whole batch: no row blocks) is the reference's.
"""

import numpy as np

from . import reference

__all__ = ["add_layer_norm_backward", "add_layer_norm_forward", "add_rms_norm_backward",
           "add_rms_norm_forward", "layer_norm_backward", "layer_norm_forward",
           "rms_norm_backward", "rms_norm_forward"]

BLOCK_ELEMENTS = 2**17            # 512 KiB of float32 per block buffer, about L2-sized; the
                                  # 3-4 buffers a kernel keeps live fit in L3
accumulation_dtype = reference.accumulation_dtype


def _block_rows(x):
    """Rows per block of x (M, D): about BLOCK_ELEMENTS values."""
    return max(1, BLOCK_ELEMENTS // max(x.shape[1], 1))


def _row_blocks(x):
    """Slices of x's rows, ``_block_rows(x)`` each."""
    step = _block_rows(x)
    return [slice(start, start + step) for start in range(0, x.shape[0], step)]


def _param_rows(param, x, dtype):
    """A per-feature parameter (D,) in ``dtype`` (or None), repeated over a block's rows:
    (block rows, D), once per call. NumPy multiplies two same-shape contiguous arrays about
    twice as fast as an array by a broadcast row, to the same numbers."""
    if param is None:
        return None
    rows = min(_block_rows(x), x.shape[0])
    return np.broadcast_to(param.astype(dtype, copy=False), (rows, param.shape[-1])).copy()


def _rows(param_rows, count):
    """The first ``count`` rows of a ``_param_rows`` array (None as it is)."""
    return None if param_rows is None else param_rows[:count]


def _input_rows(x, residual, s, block, acc):
    """The block's rows to normalize, in the accumulation dtype: x's, or those of
    s = x + residual, written into s on the way (in x's dtype, as x + residual would be)."""
    if residual is None:
        return x[block].astype(acc, copy=False)
    return np.add(x[block], residual[block], out=s[block]).astype(acc, copy=False)


# ----- LayerNorm ----------------------------------------------------------------------------
def layer_norm_forward(x, weight, bias, eps):
    """As ``reference.layer_norm_forward``: returns y, mean, rstd."""
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
    acc, (rows, size) = accumulation_dtype(x.dtype), x.shape
    weight, bias = _param_rows(weight, x, acc), _param_rows(bias, x, acc)   # (block rows, D)
    y = np.empty_like(x)                                    # (M, D)
    s = None if residual is None else np.empty_like(x)      # (M, D)
    mean, rstd = np.empty(rows, acc), np.empty(rows, acc)   # (M,)
    ones = np.ones(size, acc)                               # (D,)  row sums as x @ ones
    square = np.empty((min(_block_rows(x), rows), size), acc)
    for block in _row_blocks(x):
        xb = _input_rows(x, residual, s, block, acc)        # (m, D)
        yb = y[block] if y.dtype == acc else np.empty_like(xb)   # where the block is built
        mb = xb @ ones                                      # (m,)
        mb /= size
        np.subtract(xb, mb[:, None], out=yb)                # (m, D) centred, in y itself
        sq = np.multiply(yb, yb, out=square[:len(mb)])      # (m, D) scratch, stays in cache
        var = sq @ ones                                     # (m,)  stable: of centred values
        var /= size
        _correct_flat_rows(yb, mb, var, ones)
        rb = reference.inverse_sqrt(var + eps)              # (m,)  eps inside the sqrt
        yb *= rb[:, None]                                   # x̂
        _affine_(yb, _rows(weight, len(rb)), _rows(bias, len(rb)))
        if y.dtype != acc:
            y[block] = yb                                   # float32 -> float16 cast
        mean[block], rstd[block] = mb, rb
    return y, s, mean, rstd


def _correct_flat_rows(xc, mean, var, ones):
    """reference.corrected_mean's step, in place, for the rows whose spread is within the
    mean's rounding (sum/D of a constant row is a few ulps off, and x - mean not 0): a
    constant row's mean becomes exact, its xc and var 0. Other rows keep the plain mean,
    which the step would move by far less than their spread, and pay one comparison."""
    rounding = xc.shape[1] * np.finfo(xc.dtype).eps * np.abs(mean)            # (m,)
    flat = np.flatnonzero(var <= rounding * rounding)
    if flat.size:
        correction = xc[flat] @ ones / xc.shape[1]                             # (k,)
        correction[~np.isfinite(correction)] = 0        # a row with inf or NaN keeps its mean
        xc[flat] -= correction[:, None]
        mean[flat] += correction
        var[flat] = (xc[flat] * xc[flat]) @ ones / xc.shape[1]


def layer_norm_backward(dy, x, weight, mean, rstd, need_bias_grad=True):
    """As ``reference.layer_norm_backward``: returns dx, dweight or None, dbias or None."""
    return _layer_norm_backward(dy, None, x, weight, mean, rstd, need_bias_grad)


def _layer_norm_backward(dy, ds, x, weight, mean, rstd, need_bias_grad):
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
    acc, (rows, size) = rstd.dtype, x.shape
    rms = mean is None
    w = np.ones(size, acc) if weight is None else weight.astype(acc, copy=False)   # (D,)
    dx = np.empty_like(x)                                   # (M, D)
    dweight = np.zeros(size, acc) if weight is not None else None
    dbias = np.zeros(size, acc) if need_bias_grad else None
    block_rows = min(_block_rows(x), rows)
    w_rows = None if weight is None else _param_rows(w, x, acc)             # (block rows, D)
    ones_rows = np.ones(block_rows, acc)
    xc_buffer, product_buffer = np.empty((2, block_rows, size), acc)
    for block in _row_blocks(x):
        xb = x[block].astype(acc, copy=False)               # (m, D)  never written to
        dyb = dy[block].astype(acc, copy=False)             # (m, D)  never written to
        rows_here = xb.shape[0]
        rb = rstd[block]                                    # (m,)
        if rms:
            xc = xb
        else:
            xc = np.subtract(xb, mean[block][:, None], out=xc_buffer[:rows_here])
        dy_xc = np.multiply(dyb, xc, out=product_buffer[:rows_here])      # (m, D)
        if dweight is not None:
            dweight += rb @ dy_xc                           # (D,)
        if dbias is not None:
            dbias += ones_rows[:rows_here] @ dyb            # (D,)
        mean_g_xhat = rb * (dy_xc @ w) / size               # (m,)
        # The part of g the statistics take back: xc·rstd·mean(g·x̂) (+ mean(g)).
        taken = np.multiply(xc, (rb * mean_g_xhat)[:, None], out=xc_buffer[:rows_here])
        if not rms:
            taken += (dyb @ w / size)[:, None]
        if weight is None:
            g = np.subtract(dyb, taken, out=taken)          # (m, D)  g = dy: no pass for w = 1
        else:
            g = np.multiply(dyb, w_rows[:rows_here], out=dy_xc)   # (m, D)  g = dy·w
            g -= taken
        if dx.dtype == acc:
            np.multiply(g, rb[:, None], out=dx[block])
        else:
            dx[block] = g * rb[:, None]                     # float32 -> float16 cast
        if ds is not None:
            dx[block] += ds[block]
    return (dx, None if weight is None else dweight.astype(weight.dtype, copy=False),
            None if dbias is None else dbias.astype(dy.dtype, copy=False))


# ----- RMSNorm ------------------------------------------------------------------------------
def rms_norm_forward(x, weight, eps, offset=0.0, casting="llama"):
    """As ``reference.rms_norm_forward``: returns y and rstd."""
    y, _, rstd = _rms_norm_forward(x, None, weight, eps, offset, casting)
    return y, rstd


def _rms_norm_forward(x, residual, weight, eps, offset, casting):
    """RMSNorm of x, or of s = x + residual, with w' = offset + w and ``casting``: the
    blocks form y = w'·x̂ in the accumulation dtype, or, where the mode rounds x̂ to x's
    dtype first (``reference.rounds_before_weight``), x̂ alone, which
    ``reference.rms_weighted`` then scales."""
    if reference.rounds_before_weight(x.dtype, casting):
        xhat, s, rstd = _rms_blocks(x, residual, None, eps)  # x̂ rounded to x's dtype
        rows = x if s is None else s
        return reference.rms_weighted(rows, xhat, rstd, weight, offset, casting), s, rstd
    return _rms_blocks(x, residual, reference.effective_weight(weight, offset, x.dtype,
                                                               casting), eps)


def _rms_blocks(x, residual, weight, eps):
    """y = x̂·w, s, rstd, block by block (as ``_layer_norm_forward``).

    Passes. Main memory: x read once, y written once. Per block, in cache: 4 — square
    (into y's block), row sum (BLAS), x × rstd, × w."""
    acc, (rows, size) = accumulation_dtype(x.dtype), x.shape
    weight = _param_rows(weight, x, acc)                    # (block rows, D)
    y = np.empty_like(x)                                    # (M, D)
    s = None if residual is None else np.empty_like(x)      # (M, D)
    rstd = np.empty(rows, acc)                              # (M,)
    ones = np.ones(size, acc)
    for block in _row_blocks(x):
        xb = _input_rows(x, residual, s, block, acc)        # (m, D)
        yb = y[block] if y.dtype == acc else np.empty_like(xb)
        np.multiply(xb, xb, out=yb)                         # x², built where y goes
        rb = yb @ ones                                      # (m,)
        rb /= size
        rb = reference.inverse_sqrt(rb + eps)               # (m,)
        np.multiply(xb, rb[:, None], out=yb)                # x̂
        _affine_(yb, _rows(weight, len(rb)), None)
        if y.dtype != acc:
            y[block] = yb                                   # float32 -> float16 cast
        rstd[block] = rb
    return y, s, rstd


def rms_norm_backward(dy, x, weight, rstd, offset=0.0, casting="llama"):
    """As ``reference.rms_norm_backward``: returns dx and dweight or None."""
    return add_rms_norm_backward(dy, None, x, weight, rstd, offset, casting)


# ----- residual add + norm ------------------------------------------------------------------
def add_layer_norm_forward(x, residual, weight, bias, eps):
    """As ``reference.add_layer_norm_forward``: returns y, s = x + residual, mean, rstd."""
    return _layer_norm_forward(x, residual, weight, bias, eps)


def add_layer_norm_backward(dy, ds, s, weight, mean, rstd, need_bias_grad=True):
    """As ``reference.add_layer_norm_backward``: returns d_sum, dweight, dbias."""
    return _layer_norm_backward(dy, ds, s, weight, mean, rstd, need_bias_grad)


def add_rms_norm_forward(x, residual, weight, eps, offset=0.0, casting="llama"):
    """As ``reference.add_rms_norm_forward``: returns y, s = x + residual, rstd."""
    return _rms_norm_forward(x, residual, weight, eps, offset, casting)


def add_rms_norm_backward(dy, ds, s, weight, rstd, offset=0.0, casting="llama"):
    """As ``reference.add_rms_norm_backward`` (``ds`` None: RMSNorm's backward): returns
    d_sum and dweight, rounded to w''s dtype, then the weight's."""
    w = reference.effective_weight(weight, offset, s.dtype, casting)
    dsum, dweight, _ = _layer_norm_backward(dy, ds, s, w, None, rstd, False)
    return dsum, None if weight is None else dweight.astype(weight.dtype, copy=False)


def _affine_(xhat, weight, bias):
    """x̂·weight + bias, in place, on an array this module owns (either may be None)."""
    if weight is not None:
        xhat *= weight
    if bias is not None:
        xhat += bias


# Every other kernel is the reference's: BatchNorm's statistics span the batch (no row
# blocks), and the elementwise ones (DyT, GELU) already stream as whole-array expressions.
__getattr__ = reference.fallback(__name__)
