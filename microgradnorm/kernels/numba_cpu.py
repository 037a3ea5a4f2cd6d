"""The numba CPU kernels: the row-norm functions of ``kernels.reference``, same names and
signatures, compiled with numba for float32 and float64 NumPy arrays. The default CPU
kernels where numba imports (``kernels.default_cpu_kernels``); tested against the reference.
GELU's kernels are ``numba_gelu``', the softmax rows' ``numba_activations``', BatchNorm's
``numba_batch_norm``', attention's ``numba_attention``', Adam's update ``numba_optim``',
imported at the end; ``numba_jit`` holds how they compile (``_jit``, the fastmath flags).

One loop nest visits a row: its reductions while the row is in cache, then the write, so
main memory sees each input read once and each output written once. C-contiguous float32
and float64 rows with parameters of x's dtype run compiled, one thread (a gradient that is
a view, a sum's broadcast ones, is copied first: ``numba_jit.dense``); everything else
(half precision, mixed dtypes, views of x, empty arrays) is ``blocked``'s, exactly
(BatchNorm's, the reference's; its compiled loops are ``numba_batch_norm``'s). The row
norms' sums add blocks of SUM_BLOCK elements in x's
dtype and the blocks' sums in float64 (the other norms' sums are float64 throughout); the
loops use fastmath without "nnan"/"ninf", so NaN and inf propagate; each kernel compiles
on its first call and is cached on disk. docs/benchmarks.md ("The norm kernels") gives the
numerics and timings.
"""

import numba
import numpy as np

from . import blocked, reference
from .numba_jit import DTYPES, OPTIONS, _jit, dense


# ----- the compiled loops -------------------------------------------------------------------
# Arguments are C-contiguous arrays of one dtype; a weight or bias that is None arrives as
# an empty array with its has_* flag False (one compiled version serves those). residual,
# ds and the backward's column sums are None or arrays, numba's compile-time constants:
# a kernel compiles a version for each that a call uses, and a version without one has no
# trace of it (tested as a flag, the residual's branch cost 30% at (1024, 64); the column
# terms formed and dropped, 15% of a float64 backward without weight or bias gradient).
# Statistics arrays (mean, rstd) have x's dtype.
#
# Row sums add SUM_BLOCK elements at a time in x's dtype, vectorized (float32 fills twice
# the lanes float64 does; PyTorch's float32 kernel accumulates in float32 throughout), and
# those partial sums in float64: a float32 row of any length errs as a sum of SUM_BLOCK
# elements does, about 1 ulp. Each block is a slice, so LLVM sees indices >= 0 and
# vectorizes (a loop over range(start, stop) of the row itself ran unvectorized, 3x slower).
# The helpers are inlined into the loops (as calls, (1024, 64) took 30% longer).
SUM_BLOCK = 256
_inline = numba.njit(inline="always", **OPTIONS)


@_inline
def _sum(row):
    """Σ row as a float64, in partial sums of SUM_BLOCK elements in row's dtype."""
    total = 0.0
    for start in range(0, row.size, SUM_BLOCK):
        block = row[start:start + SUM_BLOCK]
        part = row.dtype.type(0)
        for j in range(block.size):
            part += block[j]
        total += part
    return total


@_inline
def _add_and_sum(x_row, residual_row, s_row):
    """s = x + residual written into s_row (in x's dtype); returns Σ s as ``_sum``."""
    total = 0.0
    for start in range(0, x_row.size, SUM_BLOCK):
        stop = start + SUM_BLOCK
        x_block, r_block, s_block = x_row[start:stop], residual_row[start:stop], s_row[start:stop]
        part = x_row.dtype.type(0)
        for j in range(x_block.size):
            value = x_block[j] + r_block[j]
            s_block[j] = value
            part += value
        total += part
    return total


@_inline
def _centred_sums(row, centre):
    """(Σ (row - centre)², Σ (row - centre)) as float64s, ``centre`` in row's dtype: near
    the mean each difference is exact (Sterbenz), so a mean far from 0 costs no accuracy,
    where the one-pass Σx²/D - (Σx/D)² loses it all."""
    square, drift = 0.0, 0.0
    for start in range(0, row.size, SUM_BLOCK):
        block = row[start:start + SUM_BLOCK]
        square_part, drift_part = row.dtype.type(0), row.dtype.type(0)
        for j in range(block.size):
            centred = block[j] - centre
            square_part += centred * centred
            drift_part += centred
        square += square_part
        drift += drift_part
    return square, drift


@_jit
def _layer_norm_rows(x, residual, weight, has_weight, bias, has_bias, eps, subtract_mean, y,
                     s, mean, rstd):
    """LayerNorm (subtract_mean) or RMSNorm rows of x, or of s = x + residual (residual
    not None: s is written), in two passes and a write (RMSNorm: m = 0, no drift):

        m = Σx / D (in x's dtype),   c = x - m,   drift = Σc / D
        mean = m + drift,   var = Σc² / D - drift²,   rstd = 1 / sqrt(var + eps)
        y = (x - mean)·rstd·w + b

    mean is the reference's corrected mean, and var the centred sum of squares about it.

    Passes. Main memory: x read once, y written once (+ residual read, s written once).
    Per row, in cache: 3 — the sum (forming s on the way), the centred sums, the write of
    y; RMSNorm 2 (+ 1 forming s)."""
    rows, size = x.shape
    for i in range(rows):
        if residual is None:
            row = x[i]
            total = _sum(row) if subtract_mean else 0.0
        else:
            row = s[i]
            total = _add_and_sum(x[i], residual[i], row)
        m = x.dtype.type(total / size) if subtract_mean else x.dtype.type(0)
        square, drift = _centred_sums(row, m)
        # |drift| < inf, not np.isfinite: under "reassoc" isfinite's x - x == 0 folds to True
        drift = drift / size if subtract_mean and abs(drift) < np.inf else 0.0
        mean[i] = m + drift
        variance = max(square / size - drift * drift, 0.0)             # >= 0 as rounded
        rstd[i] = 1.0 / np.sqrt(variance + eps)         # eps inside the sqrt
        row_mean, row_rstd = mean[i], rstd[i]           # rounded to x's dtype, as saved
        y_row = y[i]
        if has_weight and has_bias:
            for j in range(size):
                y_row[j] = (row[j] - row_mean) * row_rstd * weight[j] + bias[j]
        elif has_weight:
            for j in range(size):
                y_row[j] = (row[j] - row_mean) * row_rstd * weight[j]
        elif has_bias:
            for j in range(size):
                y_row[j] = (row[j] - row_mean) * row_rstd + bias[j]
        else:
            for j in range(size):
                y_row[j] = (row[j] - row_mean) * row_rstd


@_inline
def _gradient_sums(dy_row, weight, x_row, mean):
    """(Σ g, Σ g·(x - mean)) as float64s, g = dy·w, in partial sums as ``_sum``'s."""
    sum_g, sum_g_centred = 0.0, 0.0
    for start in range(0, x_row.size, SUM_BLOCK):
        stop = start + SUM_BLOCK
        dy_block, w_block, x_block = dy_row[start:stop], weight[start:stop], x_row[start:stop]
        g_part, g_centred_part = x_row.dtype.type(0), x_row.dtype.type(0)
        for j in range(x_block.size):
            g = dy_block[j] * w_block[j]
            g_part += g
            g_centred_part += g * (x_block[j] - mean)
        sum_g += g_part
        sum_g_centred += g_centred_part
    return sum_g, sum_g_centred


COLUMN_BLOCK = 32     # rows whose dweight / dbias terms add up in x's dtype before float64


@_jit
def _layer_norm_rows_backward(dy, ds, x, weight, mean, rstd, dx, column_sums, column_parts,
                              subtract_mean):
    """Closed-form backward of LayerNorm (subtract_mean) or RMSNorm rows (mean all zeros),
    with x̂ = (x - mean)·rstd and g = dy·w (w all ones when there is no weight: exact):

        dx = rstd · (g - mean(g) - x̂ · mean(g·x̂))   (+ ds unless None; RMSNorm has no
        mean(g·x̂) = rstd · Σ g·(x - mean) / D        mean(g) term; x̂ leaves the row sum)

    and, unless column_sums is None (no weight, no bias gradient), Σ dy·x̂ and Σ dy over
    rows added into column_sums ((2, D) float64: dweight's, then dbias's) through
    column_parts ((2, D) in x's dtype, zero on entry), which collect COLUMN_BLOCK rows'
    terms, vectorized, before each float64 addition.

    Passes. Main memory: x and dy read once, dx written once (+ ds read). Per row, in
    cache: 2 — the row sums Σg, Σg·(x - mean); then dx with the column terms dy·x̂, dy
    (+ 1 adding ds); every COLUMN_BLOCK rows one more over the (2, D) partial sums."""
    rows, size = x.shape
    for i in range(rows):
        xi, dyi, dxi = x[i], dy[i], dx[i]
        mi, ri = mean[i], rstd[i]
        sum_g, sum_g_centred = _gradient_sums(dyi, weight, xi, mi)
        mean_g = x.dtype.type(sum_g / size) if subtract_mean else x.dtype.type(0)
        mean_g_xhat = x.dtype.type(sum_g_centred * ri / size)     # rounded to x's dtype
        if column_sums is None:
            for j in range(size):
                xhat = (xi[j] - mi) * ri
                dxi[j] = ri * (dyi[j] * weight[j] - mean_g - xhat * mean_g_xhat)
        else:
            dweight_part, dbias_part = column_parts[0], column_parts[1]
            for j in range(size):
                xhat = (xi[j] - mi) * ri
                dxi[j] = ri * (dyi[j] * weight[j] - mean_g - xhat * mean_g_xhat)
                dweight_part[j] += dyi[j] * xhat
                dbias_part[j] += dyi[j]
        if ds is not None:
            dsi = ds[i]
            for j in range(size):
                dxi[j] += dsi[j]
        if column_sums is not None:
            if (i + 1) % COLUMN_BLOCK == 0 or i == rows - 1:
                for k in range(2):
                    for j in range(size):
                        column_sums[k, j] += column_parts[k, j]
                        column_parts[k, j] = 0


# ----- which calls the kernels take ---------------------------------------------------------
def _takes(x, rows=(), columns=(), stats=()):
    """True when the compiled kernels run this call: x is a 2-D C-contiguous float32/float64
    NumPy array (M, D) with rows and columns, and every other array is C-contiguous NumPy
    of x's dtype and of the shape the loops index without bounds checks: ``rows`` (dy, ds,
    residual) (M, D), ``columns`` (weight, bias) (D,) or None, ``stats`` (mean, rstd)
    (M,). Loops, not all() over generators, which took twice as long: a fifth of a
    kernel call at (64, 64)."""
    if (type(x) is not np.ndarray or x.dtype not in DTYPES or x.ndim != 2 or not x.size
            or not x.flags.c_contiguous):
        return False
    for array in rows:
        if not _like(array, x, x.shape):
            return False
    for array in columns:
        if array is not None and not _like(array, x, x.shape[1:]):
            return False
    for array in stats:
        if not _like(array, x, x.shape[:1]):
            return False
    return True


def _like(array, x, shape):
    return (type(array) is np.ndarray and array.dtype == x.dtype and array.shape == shape
            and array.flags.c_contiguous)


# What the loops get for a weight or bias that is None: an empty array, made once per dtype
# and shared (no loop reads or writes an element of it).
_EMPTY = {dtype: np.empty(0, dtype) for dtype in DTYPES}


def _forward(x, residual, weight, bias, eps, subtract_mean):
    y = np.empty_like(x)                                            # (M, D)
    s = None if residual is None else np.empty_like(x)              # (M, D)
    mean, rstd = np.empty(x.shape[0], x.dtype), np.empty(x.shape[0], x.dtype)   # (M,)
    empty = _EMPTY[x.dtype]
    _layer_norm_rows(x, residual, empty if weight is None else weight, weight is not None,
                     empty if bias is None else bias, bias is not None, float(eps),
                     subtract_mean, y, s, mean, rstd)
    return y, s, mean, rstd


def _backward(dy, ds, x, weight, mean, rstd, need_bias_grad):
    """dx (M, D), dweight (D,) or None, dbias (D,) or None; mean None for RMSNorm."""
    rows, size = x.shape
    dx = np.empty_like(x)                                           # (M, D)
    column_sums = column_parts = None
    if weight is not None or need_bias_grad:
        column_sums = np.zeros((2, size))                   # (2, D) float64: dweight, dbias
        column_parts = np.zeros((2, size), x.dtype)         # (2, D) in x's dtype
    _layer_norm_rows_backward(
        dy, ds, x, np.ones(size, x.dtype) if weight is None else weight,
        np.zeros(rows, x.dtype) if mean is None else mean, rstd, dx, column_sums,
        column_parts, mean is not None)
    dweight = None if weight is None else column_sums[0].astype(weight.dtype)
    dbias = column_sums[1].astype(dy.dtype) if need_bias_grad else None
    return dx, dweight, dbias


# ----- the reference's functions ------------------------------------------------------------
def layer_norm_forward(x, weight, bias, eps):
    """As ``reference.layer_norm_forward``: returns y (M, D), mean (M,), rstd (M,)."""
    if not _takes(x, columns=(weight, bias)):
        return blocked.layer_norm_forward(x, weight, bias, eps)
    y, _, mean, rstd = _forward(x, None, weight, bias, eps, True)
    return y, mean, rstd


def layer_norm_backward(dy, x, weight, mean, rstd, need_bias_grad=True):
    """As ``reference.layer_norm_backward``: returns dx, dweight or None, dbias or None."""
    dy = dense(dy)
    if not _takes(x, rows=(dy,), columns=(weight,), stats=(mean, rstd)):
        return blocked.layer_norm_backward(dy, x, weight, mean, rstd, need_bias_grad)
    return _backward(dy, None, x, weight, mean, rstd, need_bias_grad)


# RMSNorm: the kernels take float32 and float64 x, which every casting mode computes alike,
# with w' = offset + w in the weight's dtype (``reference.effective_weight``).
def rms_norm_forward(x, weight, eps, offset=0.0, casting="llama"):
    """As ``reference.rms_norm_forward``: returns y (M, D) and rstd (M,)."""
    w = reference.effective_weight(weight, offset, x.dtype, casting)
    if not _takes(x, columns=(w,)):
        return blocked.rms_norm_forward(x, weight, eps, offset, casting)
    y, _, _, rstd = _forward(x, None, w, None, eps, False)
    return y, rstd


def rms_norm_backward(dy, x, weight, rstd, offset=0.0, casting="llama"):
    """As ``reference.rms_norm_backward``: returns dx and dweight or None."""
    w, dy = reference.effective_weight(weight, offset, x.dtype, casting), dense(dy)
    if not _takes(x, rows=(dy,), columns=(w,), stats=(rstd,)):
        return blocked.rms_norm_backward(dy, x, weight, rstd, offset, casting)
    dx, dweight, _ = _backward(dy, None, x, w, None, rstd, False)
    return dx, dweight


def add_layer_norm_forward(x, residual, weight, bias, eps):
    """As ``reference.add_layer_norm_forward``: returns y, s = x + residual, mean, rstd."""
    if not _takes(x, rows=(residual,), columns=(weight, bias)):
        return blocked.add_layer_norm_forward(x, residual, weight, bias, eps)
    return _forward(x, residual, weight, bias, eps, True)


def add_layer_norm_backward(dy, ds, s, weight, mean, rstd, need_bias_grad=True):
    """As ``reference.add_layer_norm_backward``: returns d_sum, dweight, dbias."""
    dy, ds = dense(dy), dense(ds)
    if not _takes(s, rows=(dy, ds), columns=(weight,), stats=(mean, rstd)):
        return blocked.add_layer_norm_backward(dy, ds, s, weight, mean, rstd, need_bias_grad)
    return _backward(dy, ds, s, weight, mean, rstd, need_bias_grad)


def add_rms_norm_forward(x, residual, weight, eps, offset=0.0, casting="llama"):
    """As ``reference.add_rms_norm_forward``: returns y, s = x + residual, rstd."""
    w = reference.effective_weight(weight, offset, x.dtype, casting)
    if not _takes(x, rows=(residual,), columns=(w,)):
        return blocked.add_rms_norm_forward(x, residual, weight, eps, offset, casting)
    y, s, _, rstd = _forward(x, residual, w, None, eps, False)
    return y, s, rstd


def add_rms_norm_backward(dy, ds, s, weight, rstd, offset=0.0, casting="llama"):
    """As ``reference.add_rms_norm_backward``: returns d_sum and dweight."""
    w = reference.effective_weight(weight, offset, s.dtype, casting)
    dy, ds = dense(dy), dense(ds)
    if not _takes(s, rows=(dy, ds), columns=(w,), stats=(rstd,)):
        return blocked.add_rms_norm_backward(dy, ds, s, weight, rstd, offset, casting)
    dsum, dweight, _ = _backward(dy, ds, s, w, None, rstd, False)
    return dsum, dweight


# Every kernel not compiled here (or in the modules imported at the end) is the reference's.
__getattr__ = reference.fallback(__name__)


# ----- DyT ----------------------------------------------------------------------------------
# tanh is NumPy's, vectorized, over a block of rows that stays in cache; the compiled loops
# do the rest of each element's arithmetic and the sums in the same visit. (numba's tanh is
# libm's, called per element: a loop with it took 10x as long as NumPy's whole forward at
# (4096, 1024) float32.) docs/dyt.md has the timings: 2.3-3.5x the reference's there.
DYT_BLOCK = 2**14                 # elements per block: 64 KiB of float32, a block stays in L2


@_jit
def _dyt_affine(y, weight, has_weight, bias, has_bias):
    """y = t·w + b in place over the rows of t (a block of tanh(α·x))."""
    rows, size = y.shape
    for i in range(rows):
        row = y[i]
        if has_weight and has_bias:
            for j in range(size):
                row[j] = row[j] * weight[j] + bias[j]
        elif has_weight:
            for j in range(size):
                row[j] = row[j] * weight[j]
        else:
            for j in range(size):
                row[j] = row[j] + bias[j]


@_jit
def _dyt_rows_backward(dy, x, t, alpha, weight, dx, dweight_sum, dbias_sum):
    """dx = α·u, u = dy·w·(1 - t²), for a block of rows; Σ dy·t and Σ dy per column added
    into dweight_sum and dbias_sum (float64, (D,)); returns the block's Σ u·x (float64).

    Passes. Main memory: x and dy read once, dx written once; t (the block's tanh) in
    cache."""
    rows, size = x.shape
    dalpha = 0.0
    for i in range(rows):
        xi, dyi, ti, dxi = x[i], dy[i], t[i], dx[i]
        for j in range(size):
            u = dyi[j] * weight[j] * (1 - ti[j] * ti[j])
            dxi[j] = alpha * u
            dalpha += u * xi[j]
            dweight_sum[j] += dyi[j] * ti[j]
            dbias_sum[j] += dyi[j]
    return dalpha


def _tanh_blocks(x, alpha, out=None):
    """(rows, tanh(α·x) of those rows) over blocks of about DYT_BLOCK elements, written into
    those rows of ``out``, or into one reused buffer."""
    step = max(1, DYT_BLOCK // x.shape[1])
    buffer = np.empty((min(step, x.shape[0]), x.shape[1]), x.dtype) if out is None else None
    for start in range(0, x.shape[0], step):
        rows = slice(start, start + step)
        t = buffer[:x[rows].shape[0]] if out is None else out[rows]
        np.multiply(x[rows], alpha, out=t)
        yield rows, np.tanh(t, out=t)


def _dyt_alpha(alpha, x):
    """α as a scalar of x's dtype, or None when the kernels do not take it (an array of x's
    dtype and one element is taken)."""
    if type(alpha) is not np.ndarray or alpha.dtype != x.dtype or alpha.size != 1:
        return None
    return alpha.reshape(())[()]


def dyt_forward(x, alpha, weight, bias):
    """As ``reference.dyt_forward``: returns y (M, D)."""
    a = _dyt_alpha(alpha, x)
    if a is None or not _takes(x, columns=(weight, bias)):
        return reference.dyt_forward(x, alpha, weight, bias)
    y = np.empty_like(x)                                            # (M, D)
    for _, block in _tanh_blocks(x, a, out=y):                      # tanh(α·x), then w, b
        if weight is not None or bias is not None:
            _dyt_affine(block, _EMPTY[x.dtype] if weight is None else weight, weight is not None,
                        _EMPTY[x.dtype] if bias is None else bias, bias is not None)
    return y


def dyt_backward(dy, x, alpha, weight, need_bias_grad=True):
    """As ``reference.dyt_backward``: returns dx, dalpha, dweight or None, dbias or None."""
    a, dy = _dyt_alpha(alpha, x), dense(dy)
    if a is None or not _takes(x, rows=(dy,), columns=(weight,)):
        return reference.dyt_backward(dy, x, alpha, weight, need_bias_grad)
    dx = np.empty_like(x)                                           # (M, D)
    dweight_sum, dbias_sum = np.zeros((2, x.shape[1]))              # (D,) float64 each
    w = np.ones(x.shape[1], x.dtype) if weight is None else weight  # times 1: exact
    dalpha = 0.0
    for rows, t in _tanh_blocks(x, a):
        dalpha += _dyt_rows_backward(dy[rows], x[rows], t, a, w, dx[rows], dweight_sum,
                                     dbias_sum)
    dweight = None if weight is None else dweight_sum.astype(weight.dtype)
    dbias = dbias_sum.astype(dy.dtype) if need_bias_grad else None
    return dx, np.full(alpha.shape, dalpha, alpha.dtype), dweight, dbias


# ----- GroupNorm and InstanceNorm -----------------------------------------------------------
# x arrives as (N, G, C/G, S): a sample's group is one contiguous block, visited once for
# its statistics and once for y (or dx) while it is in cache. Measured at (32, 64, 16, 16),
# G = 32, one thread, on the 2-core development machine (load 4-6), medians of 9, in ms:
# forward (statistics + y) float32 reference 1.41, these 0.18, PyTorch 0.18; backward 6.69,
# 0.15, 0.16; float64 forward 10.8, 0.22, 0.59; backward 16.4, 0.21, 1.27. The reference is
# 5-45x PyTorch's time there, so these pay (docs/derivations.md §13).
@_jit
def _row_statistics(rows, mean, var):
    """Mean (with the correction step of ``_layer_norm_rows``) and biased variance of each
    row of rows (M, D), float64 sums, into mean and var (M,)."""
    count, size = rows.shape
    for i in range(count):
        row = rows[i]
        total = 0.0
        for j in range(size):
            total += row[j]
        m = total / size
        square, drift = 0.0, 0.0
        for j in range(size):
            centred = row[j] - m
            square += centred * centred
            drift += centred
        drift = drift / size if abs(drift) < np.inf else 0.0     # NaN, ±inf: no step
        mean[i] = m + drift
        var[i] = max(square / size - drift * drift, 0.0)


@_jit
def _group_norm_blocks(x, mean, rstd, weight, bias, y):
    """y = (x - mean)·(rstd·w) + b over x, y (N, G, C/G, S); mean, rstd (N, G); weight,
    bias (G, C/G). Passes. Main memory: x read once, y written once."""
    samples, groups, channels, positions = x.shape
    for i in range(samples):
        for g in range(groups):
            m, r = mean[i, g], rstd[i, g]
            for k in range(channels):
                scale, shift = r * weight[g, k], bias[g, k]
                x_row, y_row = x[i, g, k], y[i, g, k]
                for j in range(positions):
                    y_row[j] = (x_row[j] - m) * scale + shift


@_jit
def _group_norm_blocks_backward(dy, x, mean, rstd, weight, training, dx, dweight, dbias):
    """Closed-form backward over (N, G, C/G, S) blocks, g = dy·w:

        dx = rstd·(g - mean(g) - x̂·mean(g·x̂))   (training; rstd·g in eval)

    Σ_S dy·x̂ and Σ_S dy per channel are added into dweight and dbias (float64, (G, C/G));
    the group's Σ g and Σ g·x̂ are those per-channel sums times w (w leaves the inner sum).
    Passes. Main memory: x and dy read once, dx written once; per block, in cache: 2."""
    samples, groups, channels, positions = x.shape
    size = channels * positions
    for i in range(samples):
        for g in range(groups):
            m, r = mean[i, g], rstd[i, g]
            sum_g, sum_g_xhat = 0.0, 0.0                # float64 accumulators
            for k in range(channels):
                x_row, dy_row = x[i, g, k], dy[i, g, k]
                sum_dy, sum_dy_xhat = 0.0, 0.0
                for j in range(positions):
                    sum_dy += dy_row[j]
                    sum_dy_xhat += dy_row[j] * ((x_row[j] - m) * r)
                dweight[g, k] += sum_dy_xhat
                dbias[g, k] += sum_dy
                sum_g += weight[g, k] * sum_dy
                sum_g_xhat += weight[g, k] * sum_dy_xhat
            mean_g = x.dtype.type(sum_g / size) if training else x.dtype.type(0)
            mean_g_xhat = x.dtype.type(sum_g_xhat / size) if training else x.dtype.type(0)
            for k in range(channels):
                w = weight[g, k]
                x_row, dy_row, dx_row = x[i, g, k], dy[i, g, k], dx[i, g, k]
                if not training:        # x̂ left out: a NaN in x is no NaN in dx, as torch's
                    for j in range(positions):
                        dx_row[j] = r * (dy_row[j] * w)
                    continue
                for j in range(positions):
                    xhat = (x_row[j] - m) * r
                    dx_row[j] = r * (dy_row[j] * w - mean_g - xhat * mean_g_xhat)


def _group_takes(x, num_groups, rows=(), columns=(), stats=()):
    """True when the compiled loops run this call: x a C-contiguous float32/float64 NumPy
    array (N, C, S) with no empty dim, dy (``rows``) of its shape, weight and bias
    (``columns``) (C,) or None, statistics (N, G), all of x's dtype."""
    if type(x) is not np.ndarray or x.ndim != 3 or x.dtype not in DTYPES or 0 in x.shape:
        return False
    return (x.flags.c_contiguous and all(_like(a, x, x.shape) for a in rows)
            and all(a is None or _like(a, x, x.shape[1:2]) for a in columns)
            and all(_like(a, x, (x.shape[0], num_groups)) for a in stats))


def _blocks(array, num_groups):
    """(N, C, S) -> the view (N, G, C/G, S); a per-channel (C,) -> (G, C/G)."""
    if array.ndim == 1:
        return array.reshape(num_groups, -1)
    n, c, s = array.shape
    return array.reshape(n, num_groups, c // num_groups, s)


def group_norm_statistics(x, num_groups):
    """As ``reference.group_norm_statistics``: returns mean and var (N, G)."""
    if not _group_takes(x, num_groups):
        return reference.group_norm_statistics(x, num_groups)
    rows = x.reshape(x.shape[0] * num_groups, -1)                   # (N·G, C/G·S)
    mean, var = np.empty((2, rows.shape[0]), x.dtype)
    _row_statistics(rows, mean, var)
    return mean.reshape(-1, num_groups), var.reshape(-1, num_groups)


def group_norm_forward(x, num_groups, mean, var, weight, bias, eps):
    """As ``reference.group_norm_forward``: returns y (N, C, S) and rstd (N, G)."""
    if not _group_takes(x, num_groups, columns=(weight, bias), stats=(mean, var)):
        return reference.group_norm_forward(x, num_groups, mean, var, weight, bias, eps)
    rstd = reference.inverse_sqrt(var + x.dtype.type(eps))          # (N, G)
    y = np.empty_like(x)
    channels = x.shape[1]
    w = np.ones(channels, x.dtype) if weight is None else weight    # times 1, plus 0: exact
    b = np.zeros(channels, x.dtype) if bias is None else bias
    _group_norm_blocks(_blocks(x, num_groups), mean, rstd, _blocks(w, num_groups),
                       _blocks(b, num_groups), _blocks(y, num_groups))
    return y, rstd


def group_norm_backward(dy, x, num_groups, weight, mean, rstd, training, need_bias_grad=True):
    """As ``reference.group_norm_backward``: returns dx, dweight or None, dbias or None."""
    dy = dense(dy)
    if not _group_takes(x, num_groups, rows=(dy,), columns=(weight,), stats=(mean, rstd)):
        return reference.group_norm_backward(dy, x, num_groups, weight, mean, rstd, training,
                                             need_bias_grad)
    dx = np.empty_like(x)
    dweight, dbias = np.zeros((2, x.shape[1]))                      # (C,) float64 each
    w = np.ones(x.shape[1], x.dtype) if weight is None else weight
    _group_norm_blocks_backward(_blocks(dy, num_groups), _blocks(x, num_groups), mean, rstd,
                                _blocks(w, num_groups), training, _blocks(dx, num_groups),
                                _blocks(dweight, num_groups), _blocks(dbias, num_groups))
    return (dx, None if weight is None else dweight.astype(weight.dtype),
            dbias.astype(dy.dtype) if need_bias_grad else None)


# The activations', attention's and Adam's kernels, compiled in their modules: names of this
# module too
from .numba_activations import cross_entropy_backward  # noqa: E402, F401
from .numba_batch_norm import batch_norm_backward, batch_norm_forward  # noqa: E402, F401
from .numba_batch_norm import batch_norm_statistics  # noqa: E402, F401
from .numba_gelu import gelu_backward, gelu_forward  # noqa: E402, F401
from .numba_activations import log_softmax_backward, log_softmax_forward  # noqa: E402, F401
from .numba_activations import logsumexp  # noqa: E402, F401
from .numba_activations import softmax_backward, softmax_forward  # noqa: E402, F401
from .numba_attention import attention_forward, attention_backward  # noqa: E402,F401
from .numba_optim import adam_update  # noqa: E402,F401
