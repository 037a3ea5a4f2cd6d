"""The numba CPU kernels: the row-norm functions of ``kernels.reference``, same names and
signatures, compiled with numba for float32 and float64 NumPy arrays. The default CPU
kernels where numba imports (``kernels.default_cpu_kernels``); tested against the reference.

One loop nest visits a row: its reductions while the row is in cache, then the write, so
main memory sees each input read once and each output written once. C-contiguous float32
and float64 rows with parameters of x's dtype run compiled, one thread; everything else
(half precision, mixed dtypes, views, empty arrays) is ``blocked``'s, exactly, and
BatchNorm the reference's. Sums accumulate in float64; the loops use fastmath without
"nnan"/"ninf", so NaN and inf propagate; each kernel compiles on its first call and is
cached on disk. docs/benchmarks.md ("The norm kernels") gives the numerics and timings.
"""

import math
import warnings

import numpy as np

from . import blocked, reference

try:
    import numba
except ImportError as error:          # the selection API turns this into its own message
    raise ImportError('the numba CPU kernels need numba: pip install "microgradnorm[numba]"'
                      ) from error

# never "nnan" or "ninf"; nor "arcp": a row's few divisions by D must round as IEEE's, so
# that a constant row's mean correction and variance come out exactly 0 (no loop divides)
FASTMATH = {"reassoc", "contract", "nsz"}
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))           # what the kernels take


# error_model "numpy": a float division by zero is IEEE's (1/0 = inf, 0/0 = NaN), as in
# the reference, not numba's default Python ZeroDivisionError (eps = 0 on a constant row).
OPTIONS = {"fastmath": FASTMATH, "error_model": "numpy"}


def _jit(function):
    """numba.njit with the options above, cached on disk where a cache directory is
    writable (numba raises at decoration time when none is); a cache file that cannot be
    read is dropped and the kernel compiled afresh (``_recover_from_a_bad_cache``)."""
    try:
        dispatcher = numba.njit(cache=True, **OPTIONS)(function)
    except RuntimeError:
        return numba.njit(**OPTIONS)(function)
    _recover_from_a_bad_cache(dispatcher)
    return dispatcher


def _recover_from_a_bad_cache(dispatcher):
    # A corrupt or truncated cache file makes numba's load raise on every call of the
    # kernel; read as a cache miss instead (numba then compiles and writes a fresh entry),
    # with one warning. numba's cache object is internal: without it, nothing is changed.
    cache = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "load_overload", None)
    if load is None:
        return

    def load_or_recompile(*args, **kwargs):
        try:
            return load(*args, **kwargs)
        except Exception as error:          # what a damaged file raises varies: any of them
            warnings.warn(f"numba's on-disk cache of {dispatcher.__name__} could not be read "
                          f"({type(error).__name__}: {error}); compiling it afresh",
                          RuntimeWarning, stacklevel=2)
            try:
                cache.flush()               # the index goes; the fresh compile writes anew
            except OSError:
                pass
            return None
    cache.load_overload = load_or_recompile


# ----- the compiled loops -------------------------------------------------------------------
# Arguments are C-contiguous arrays of one dtype; a parameter that is None arrives as an
# empty array with its has_* flag False (one compiled version serves every combination).
# Statistics arrays (mean, rstd) have x's dtype. s (the residual sum) is written only when
# has_residual; otherwise residual and s are empty.

@_jit
def _layer_norm_rows(x, residual, has_residual, weight, has_weight, bias, has_bias, eps,
                     subtract_mean, y, s, mean, rstd):
    """LayerNorm (subtract_mean) or RMSNorm rows of x, or of s = x + residual.

    Passes. Main memory: x read once, y written once (+ residual read, s written once).
    Per row, in cache: LayerNorm 3 — row sum (forming s on the way), centred square and
    plain sums (the mean's correction step), write y; RMSNorm 2 — square sum, write y
    (+ 1 forming s)."""
    rows, size = x.shape
    for i in range(rows):
        row = x[i]
        total = 0.0                                     # float64 accumulators
        if has_residual:
            row, x_row, residual_row = s[i], x[i], residual[i]
            for j in range(size):
                value = x_row[j] + residual_row[j]      # s in x's dtype, as x + residual
                row[j] = value
                total += value
        elif subtract_mean:
            for j in range(size):
                total += row[j]
        m = total / size if subtract_mean else 0.0
        square, drift = 0.0, 0.0
        for j in range(size):
            centred = row[j] - m
            square += centred * centred
            drift += centred
        drift = drift / size if subtract_mean and np.isfinite(drift) else 0.0
        # the mean's correction step (reference.corrected_mean), and the variance about the
        # corrected mean: mean((x - m)²) - drift²
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


COLUMN_BLOCK = 32     # rows whose dweight / dbias terms add up in x's dtype before float64


@_jit
def _layer_norm_rows_backward(dy, ds, has_ds, x, weight, mean, rstd, dx, dweight_sum,
                              dbias_sum, dweight_part, dbias_part, need_column_sums,
                              subtract_mean):
    """Closed-form backward of LayerNorm (subtract_mean) or RMSNorm rows (mean all zeros),
    with x̂ = (x - mean)·rstd and g = dy·w (w all ones when there is no weight: exact):

        dx = rstd · (g - mean(g) - x̂ · mean(g·x̂))   (+ ds; RMSNorm has no mean(g) term)

    and, when need_column_sums, Σ dy·x̂ and Σ dy over rows added into dweight_sum and
    dbias_sum (float64, (D,)): through dweight_part and dbias_part ((D,), x's dtype, zero
    on entry), which collect COLUMN_BLOCK rows' terms and are then added to the float64
    sums. Measured at (4096, 1024) float32, one thread: 3.0 ms for the kernel this way,
    4.8 ms adding every row into the float64 sums (twice the bytes, a conversion each).

    Passes. Main memory: x and dy read once, dx written once (+ ds read). Per row, in
    cache: 2 — the sums (row: g, g·x̂; column: dy·x̂, dy), then the write of dx (+ ds);
    every COLUMN_BLOCK rows one more over the (D,) partial sums."""
    rows, size = x.shape
    for i in range(rows):
        xi, dyi, dxi = x[i], dy[i], dx[i]
        mi, ri = mean[i], rstd[i]
        sum_g = 0.0                                     # float64 accumulators
        sum_g_xhat = 0.0
        if need_column_sums:
            for j in range(size):
                xhat = (xi[j] - mi) * ri
                g = dyi[j] * weight[j]
                sum_g += g
                sum_g_xhat += g * xhat
                dweight_part[j] += dyi[j] * xhat
                dbias_part[j] += dyi[j]
            if (i + 1) % COLUMN_BLOCK == 0 or i == rows - 1:
                for j in range(size):
                    dweight_sum[j] += dweight_part[j]
                    dbias_sum[j] += dbias_part[j]
                    dweight_part[j] = 0
                    dbias_part[j] = 0
        else:
            for j in range(size):
                xhat = (xi[j] - mi) * ri
                g = dyi[j] * weight[j]
                sum_g += g
                sum_g_xhat += g * xhat
        mean_g = x.dtype.type(sum_g / size) if subtract_mean else x.dtype.type(0)
        mean_g_xhat = x.dtype.type(sum_g_xhat / size)   # rounded to x's dtype
        if has_ds:
            dsi = ds[i]
            for j in range(size):
                xhat = (xi[j] - mi) * ri
                dxi[j] = ri * (dyi[j] * weight[j] - mean_g - xhat * mean_g_xhat) + dsi[j]
        else:
            for j in range(size):
                xhat = (xi[j] - mi) * ri
                dxi[j] = ri * (dyi[j] * weight[j] - mean_g - xhat * mean_g_xhat)


# ----- which calls the kernels take ---------------------------------------------------------
def _takes(x, rows=(), columns=(), stats=()):
    """True when the compiled kernels run this call: x is a 2-D C-contiguous float32/float64
    NumPy array (M, D) with rows and columns, and every other array is C-contiguous NumPy
    of x's dtype and of the shape the loops index without bounds checks: ``rows`` (dy, ds,
    residual) (M, D), ``columns`` (weight, bias) (D,) or None, ``stats`` (mean, rstd)
    (M,)."""
    if type(x) is not np.ndarray or x.ndim != 2 or x.dtype not in DTYPES or 0 in x.shape:
        return False
    if not x.flags.c_contiguous:
        return False
    return (all(_like(a, x, x.shape) for a in rows)
            and all(a is None or _like(a, x, x.shape[1:]) for a in columns)
            and all(_like(a, x, x.shape[:1]) for a in stats))


def _like(array, x, shape):
    return (type(array) is np.ndarray and array.dtype == x.dtype and array.shape == shape
            and array.flags.c_contiguous)


def _or_empty(array, dtype):
    return np.empty(0, dtype) if array is None else array


def _forward(x, residual, weight, bias, eps, subtract_mean):
    y = np.empty_like(x)                                            # (M, D)
    s = np.empty_like(x) if residual is not None else np.empty((0, 0), x.dtype)
    mean, rstd = np.empty(x.shape[0], x.dtype), np.empty(x.shape[0], x.dtype)   # (M,)
    _layer_norm_rows(x, _or_empty(residual, x.dtype).reshape(-1, x.shape[1]),
                     residual is not None, _or_empty(weight, x.dtype), weight is not None,
                     _or_empty(bias, x.dtype), bias is not None, float(eps), subtract_mean,
                     y, s, mean, rstd)
    return y, (s if residual is not None else None), mean, rstd


def _backward(dy, ds, x, weight, mean, rstd, need_bias_grad):
    """dx (M, D), dweight (D,) or None, dbias (D,) or None; mean None for RMSNorm."""
    rows, size = x.shape
    dx = np.empty_like(x)                                           # (M, D)
    need_sums = weight is not None or need_bias_grad
    dweight_sum = np.zeros(size if need_sums else 0)                # (D,) float64
    dbias_sum = np.zeros(size if need_sums else 0)                  # (D,) float64
    dweight_part, dbias_part = np.zeros((2, size if need_sums else 0), x.dtype)  # (D,) each
    _layer_norm_rows_backward(
        dy, _or_empty(ds, x.dtype).reshape(-1, size), ds is not None, x,
        np.ones(size, x.dtype) if weight is None else weight,
        np.zeros(rows, x.dtype) if mean is None else mean, rstd, dx, dweight_sum,
        dbias_sum, dweight_part, dbias_part, need_sums, mean is not None)
    dweight = None if weight is None else dweight_sum.astype(weight.dtype)
    dbias = dbias_sum.astype(dy.dtype) if need_bias_grad else None
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
    w = reference.effective_weight(weight, offset, x.dtype, casting)
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
    if not _takes(s, rows=(dy, ds), columns=(w,), stats=(rstd,)):
        return blocked.add_rms_norm_backward(dy, ds, s, weight, rstd, offset, casting)
    dsum, dweight, _ = _backward(dy, ds, s, w, None, rstd, False)
    return dsum, dweight


# Every kernel not compiled here is the reference's (BatchNorm: no independent rows to fuse).
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
            _dyt_affine(block, _or_empty(weight, x.dtype), weight is not None,
                        _or_empty(bias, x.dtype), bias is not None)
    return y


def dyt_backward(dy, x, alpha, weight, need_bias_grad=True):
    """As ``reference.dyt_backward``: returns dx, dalpha, dweight or None, dbias or None."""
    a = _dyt_alpha(alpha, x)
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
        drift = drift / size if np.isfinite(drift) else 0.0
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
    with np.errstate(divide="ignore"):          # var + eps = 0: rstd = inf, as IEEE's
        rstd = 1 / np.sqrt(var + x.dtype.type(eps))                 # (N, G)
    y = np.empty_like(x)
    channels = x.shape[1]
    w = np.ones(channels, x.dtype) if weight is None else weight    # times 1, plus 0: exact
    b = np.zeros(channels, x.dtype) if bias is None else bias
    _group_norm_blocks(_blocks(x, num_groups), mean, rstd, _blocks(w, num_groups),
                       _blocks(b, num_groups), _blocks(y, num_groups))
    return y, rstd


def group_norm_backward(dy, x, num_groups, weight, mean, rstd, training, need_bias_grad=True):
    """As ``reference.group_norm_backward``: returns dx, dweight or None, dbias or None."""
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


# ----- GELU ---------------------------------------------------------------------------------
# One pass over x: float64 calls libm's erf (1 ulp), as PyTorch's float64 does; its exp is
# NumPy's, vectorized, in a pass before.
# float32 evaluates erf(a) and exp(-a²), a = |x|/√2, in float64 from Chebyshev fits
# (mpmath.chebyfit; absolute error 3e-11 below a = 1, 4.5e-9 on [1, 4.5]; erf = 1 and
# exp(-a²) = 0 beyond, where they round so in float32), branch-free, so that LLVM
# vectorizes the loop: a libm call per element would not be. docs/precision.md has the sweep.
_ERF_SPLIT, _ERF_END, _LARGE_CENTRE = 1.0, 4.5, 2.75
_ERF_SMALL = (
    -9.667044571486996e-06, 0.00011265959025606609, -0.0008484080405535107,
    0.005221031807858023, -0.026865430727670243, 0.11283782495236845, -0.3761263846802871,
    1.1283791670615435)
_EXP_SMALL = (
    -1.6809574666893228e-06, 2.2712018553190002e-05, -0.0001960607573055264,
    0.001387259323546384, -0.00833262793507081, 0.041666479747328955, -0.1666666381146535,
    0.4999999977794092, -0.9999999999328697, 0.9999999999996645)
_ERF_LARGE = (
    1.884743207129471e-10, 4.841208718087098e-08, -1.6620840878170786e-07,
    -5.31373428303455e-07, 3.1630158410454224e-06, -2.3069639056776843e-06,
    -1.6652452282847834e-05, 5.725940667868702e-05, -7.03985230503463e-05,
    -9.142342716853058e-05, 0.0006455623303582112, -0.0016558879037539133,
    0.0027559489067717985, -0.0032585434523869777, 0.0027603727070825007,
    -0.0016122130527193895, 0.0005862775490156201, 0.9998993771443828)
_EXP_LARGE = (
    -8.090265382874184e-08, 3.569444034937828e-08, 1.6790724855785355e-06,
    -2.588750834683246e-06, -1.1588634602289093e-05, 3.821302709204271e-05,
    -1.1249484958569162e-05, -0.00016662949055213776, 0.0004874289567748187,
    -0.0005557675733753784, -0.0006311596182464195, 0.0040006672896495885,
    -0.008812572238322795, 0.012213436012748421, -0.011549717121924171, 0.007338756232650735,
    -0.002857660656333577, 0.0005195791372144321)


def _horner(coefficients):
    """A compiled t -> c0·tⁿ + … + cn with the coefficients written into its code, so that
    LLVM sees straight-line arithmetic to vectorize (numba loops over a tuple instead)."""
    steps = "".join(f"    r = r * t + {c!r}\n" for c in coefficients[1:])
    namespace = {}
    exec(f"def horner(t):\n    r = {coefficients[0]!r}\n{steps}    return r\n", namespace)
    return numba.njit(inline="always", **OPTIONS)(namespace["horner"])


_erf_small, _exp_small, _erf_large, _exp_large = map(
    _horner, (_ERF_SMALL, _EXP_SMALL, _ERF_LARGE, _EXP_LARGE))


@numba.njit(inline="always", **OPTIONS)
def _erf_and_gaussian(v):
    """(erf(|v|/√2), exp(-v²/2)) for float32 data, to float32's accuracy (above)."""
    a = abs(v) * reference.SQRT_HALF
    t = min(a, _ERF_END) - _LARGE_CENTRE
    small = a < _ERF_SPLIT
    e = a * _erf_small(a * a) if small else _erf_large(t)
    p = _exp_small(a * a) if small else _exp_large(t)
    return (1.0 if a > _ERF_END else e), (0.0 if a > _ERF_END else p)


@_jit
def _gelu_float32(x, y):
    for i in range(x.size):
        v = np.float64(x[i])
        e = math.copysign(_erf_and_gaussian(v)[0], v)
        y[i] = 0.5 * v * (1.0 + e)


@_jit
def _gelu_float32_backward(x, dy, dx):
    for i in range(x.size):
        v = np.float64(x[i])
        e, p = _erf_and_gaussian(v)
        dx[i] = dy[i] * (0.5 * (1.0 + math.copysign(e, v)) + v * (reference.INV_SQRT_2PI * p))


@_jit
def _gelu_float64(x, y):
    for i in range(x.size):
        y[i] = 0.5 * x[i] * (1.0 + math.erf(x[i] * reference.SQRT_HALF))


@_jit
def _gelu_float64_backward(x, gaussian, dy, dx):
    for i in range(x.size):
        v = x[i]
        dx[i] = dy[i] * (0.5 * (1.0 + math.erf(v * reference.SQRT_HALF))
                         + v * (reference.INV_SQRT_2PI * gaussian[i]))


def _gelu_takes(*arrays):
    return all(type(a) is np.ndarray and a.dtype in DTYPES and a.dtype == arrays[0].dtype
               and a.shape == arrays[0].shape and a.flags.c_contiguous for a in arrays)


def gelu_forward(x, approximate="none"):
    """As ``reference.gelu_forward``: y in x's dtype. The tanh form is NumPy's (its tanh is
    vectorized; libm's, called per element here, is 5-14x slower)."""
    if approximate == "tanh" or not _gelu_takes(x):
        return blocked.gelu_forward(x, approximate)
    y = np.empty_like(x)
    (_gelu_float32 if x.dtype == np.float32 else _gelu_float64)(x.reshape(-1), y.reshape(-1))
    return y


def gelu_backward(dy, x, approximate="none"):
    """As ``reference.gelu_backward``: dx in dy's dtype."""
    if approximate == "tanh" or not _gelu_takes(x, dy):
        return blocked.gelu_backward(dy, x, approximate)
    dx = np.empty_like(dy)
    if x.dtype == np.float32:
        _gelu_float32_backward(x.reshape(-1), dy.reshape(-1), dx.reshape(-1))
        return dx
    flat = x.reshape(-1)                # (0-d: an array still)
    with np.errstate(over="ignore"):    # |x| > 1e154: x² = inf, exp(-inf) = 0
        gaussian = np.multiply(flat, flat)  # exp(-x²/2) by NumPy's vectorized exp: libm's,
        gaussian *= -0.5                    # per element in the loop, took 0.6 ms more of
        np.exp(gaussian, out=gaussian)      # 2.1 at 16 x 64 x 256
    _gelu_float64_backward(flat, gaussian, dy.reshape(-1), dx.reshape(-1))
    return dx
