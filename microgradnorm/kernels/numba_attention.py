"""The numba kernels of scaled dot-product attention: ``attention_forward`` and
``attention_backward`` of ``kernels.reference``, same names and signatures, in
FlashAttention's blocked form, compiled for float32 and float64 NumPy arrays;
``numba_cpu`` re-exports them.

Forward, per head and block of BLOCK_Q queries, one block of BLOCK_K keys at a time: the
scores S_b = q_b·k_bᵀ·scale (BLAS, through numba's np.dot), an online softmax over them (a
running max m and sum l per row; when m grows, l and the output accumulator are rescaled
by exp(m_old - m_new)) and P_b·v_b added to the accumulator; then O = acc / l and
ℓ = m + log l. No more than BLOCK_Q × BLOCK_K scores exist at once, and they stay in cache.
Backward, per block of keys, visits the query blocks and recomputes their P = exp(S - ℓ)
from the saved ℓ: dv_b += Pᵀ·dO, dP = dO·v_bᵀ, dS = P∘(dP - D) with D = Σ dO∘O per row,
dq += dS·k_b, dk_b += dSᵀ·q (derivations §10). With ``is_causal`` (torch's top-left
triangle) a block stops at its last query's diagonal: the keys after it are never visited.

Taken: q, k, v (and dO, O, ℓ) NumPy arrays of one float32 / float64 dtype with equal batch
dims, nothing empty, no mask but ``is_causal``, no dropout, every value finite; views are
copied first (O(L·E) against the O(L·S·E) of the work). Everything else is the reference's,
exactly: masks, dropout, half precision, broadcast batch dims, inf and NaN, and every call
where SciPy (whose BLAS numba's np.dot calls) is missing. exp is ``numba_activations``'
vectorizable one (within 1 ulp, in the data's dtype); the row sums accumulate in float64,
the products in BLAS, in the data's dtype, as the reference's. Blocked BLAS products beat
tight loops over the head size at E = 16 to 64 and L = 32 to 256 (1.1-2.3x).
"""

import importlib.util
import math

import numba
import numpy as np

from . import reference
# _exp is compiled into these kernels, and numba's disk cache looks only at this file's time
# stamp: after editing _exp, delete this module's .nbi/.nbc files in kernels/__pycache__
from .numba_activations import _exp
from .numba_jit import DTYPES, OPTIONS, _jit

__all__ = ["attention_backward", "attention_forward"]

BLOCK_Q, BLOCK_K = 64, 64           # queries × keys of one block of scores (32 KiB float64)
BLAS = importlib.util.find_spec("scipy") is not None        # numba's np.dot calls SciPy's


# ----- the compiled loops -------------------------------------------------------------------
# q (N, L, E), k (N, S, E), v (N, S, Ev), C-contiguous, one dtype; N the batch dims
# flattened, one head each. A block's scores live in a flat buffer whose first rows·cols
# values are viewed as a C-contiguous (rows, cols) matrix, which np.dot takes as it is.

@numba.njit(inline="always", **OPTIONS)
def _softmax_block_row(row, seen, scale, top, total, r):
    """Row r of a block of scores: S = row·scale on its first ``seen`` values (the keys it
    may attend to), P = exp(S - m) written over them and 0 over the rest, m and l (top[r],
    total[r], float64) updated. Returns exp(m_old - m), the accumulator's rescaling (1 on
    the row's first keys, while the accumulator is still 0)."""
    m_old = top[r]
    m = m_old
    for c in range(seen):
        s = row[c] * scale
        row[c] = s
        m = s if s > m else m
    for c in range(max(seen, 0), row.size):
        row[c] = 0
    if seen <= 0:
        return 1.0
    m = row.dtype.type(m)                       # S - m formed in the data's dtype
    partial = 0.0                               # float64 accumulator
    for c in range(seen):
        e = _exp(row[c] - m)                    # in the data's dtype
        row[c] = e
        partial += e
    alpha = math.exp(m_old - m)                 # 0 on the first block: m_old = -inf
    total[r] = total[r] * alpha + partial
    top[r] = m
    return alpha if m_old > -np.inf else 1.0


@_jit
def _attention_blocks(q, k, v, scale, causal, out, lse):
    """O (N, L, Ev) and ℓ (N, L) of each head, a block of queries at a time."""
    heads, length = q.shape[0], q.shape[1]
    keys, width = k.shape[1], v.shape[2]
    scores = np.empty(BLOCK_Q * BLOCK_K, q.dtype)           # S, then P, of one block
    product = np.empty(BLOCK_Q * width, q.dtype)            # P_b·v_b
    acc = np.empty((BLOCK_Q, width), q.dtype)               # Σ_b P_b·v_b, rescaled
    top, total = np.empty(BLOCK_Q), np.empty(BLOCK_Q)       # m and l per row (float64)
    for n in range(heads):
        for i0 in range(0, length, BLOCK_Q):
            rows = min(BLOCK_Q, length - i0)
            stop = min(keys, i0 + rows) if causal else keys     # keys j <= the last query
            top[:] = -np.inf
            total[:] = 0.0
            acc[:] = 0
            for j0 in range(0, stop, BLOCK_K):
                cols = min(BLOCK_K, stop - j0)
                s = scores[:rows * cols].reshape(rows, cols)
                np.dot(q[n, i0:i0 + rows], k[n, j0:j0 + cols].T, s)    # (rows, cols)
                for r in range(rows):
                    seen = min(cols, i0 + r + 1 - j0) if causal else cols
                    alpha = _softmax_block_row(s[r], seen, scale, top, total, r)
                    if alpha != 1.0:
                        for e in range(width):
                            acc[r, e] *= alpha
                pv = product[:rows * width].reshape(rows, width)
                np.dot(s, v[n, j0:j0 + cols], pv)                       # (rows, Ev)
                for r in range(rows):
                    for e in range(width):
                        acc[r, e] += pv[r, e]
            for r in range(rows):
                for e in range(width):
                    out[n, i0 + r, e] = acc[r, e] / total[r]
                lse[n, i0 + r] = top[r] + math.log(total[r])


@numba.njit(inline="always", **OPTIONS)
def _probability_block_row(row, seen, scale, lse):
    """P = exp(row·scale - ℓ) on the first ``seen`` values of a row of scores, 0 after."""
    for c in range(seen):
        s = row.dtype.type(row[c] * scale)
        row[c] = _exp(s - lse)
    for c in range(max(seen, 0), row.size):
        row[c] = 0


@_jit
def _attention_blocks_backward(dout, q, k, v, out, lse, scale, causal, dq, dk, dv):
    """dq (N, L, E), dk (N, S, E), dv (N, S, Ev) of each head, a block of keys at a time."""
    heads, length, dim = q.shape
    keys, width = k.shape[1], v.shape[2]
    p_block = np.empty(BLOCK_Q * BLOCK_K, q.dtype)          # P of one block
    ds_block = np.empty(BLOCK_Q * BLOCK_K, q.dtype)         # dP, then dS
    dq_part = np.empty(BLOCK_Q * dim, q.dtype)              # dS·k_b
    dk_part = np.empty(BLOCK_K * dim, q.dtype)              # dSᵀ·q_b
    dv_part = np.empty(BLOCK_K * width, q.dtype)            # Pᵀ·dO_b
    dk_acc = np.empty((BLOCK_K, dim), q.dtype)
    dv_acc = np.empty((BLOCK_K, width), q.dtype)
    delta = np.empty(length, q.dtype)                       # D = Σ dO∘O per row
    for n in range(heads):
        for i in range(length):
            d = 0.0                                         # float64 accumulator
            for e in range(width):
                d += dout[n, i, e] * out[n, i, e]
            delta[i] = d
        dq[n] = 0
        for j0 in range(0, keys, BLOCK_K):
            cols = min(BLOCK_K, keys - j0)
            k_b, v_b = k[n, j0:j0 + cols], v[n, j0:j0 + cols]
            dk_acc[:] = 0
            dv_acc[:] = 0
            first = j0 if causal else 0                     # earlier queries see none
            for i0 in range(first, length, BLOCK_Q):
                rows = min(BLOCK_Q, length - i0)
                q_b, dout_b = q[n, i0:i0 + rows], dout[n, i0:i0 + rows]
                p = p_block[:rows * cols].reshape(rows, cols)
                np.dot(q_b, k_b.T, p)                                   # (rows, cols)
                for r in range(rows):
                    seen = min(cols, i0 + r + 1 - j0) if causal else cols
                    _probability_block_row(p[r], seen, scale, lse[n, i0 + r])
                dv_b = dv_part[:cols * width].reshape(cols, width)
                np.dot(p.T, dout_b, dv_b)                               # (cols, Ev)
                ds = ds_block[:rows * cols].reshape(rows, cols)
                np.dot(dout_b, v_b.T, ds)                               # dP (rows, cols)
                for r in range(rows):
                    for c in range(cols):
                        ds[r, c] = (ds[r, c] - delta[i0 + r]) * p[r, c]
                dq_b = dq_part[:rows * dim].reshape(rows, dim)
                np.dot(ds, k_b, dq_b)                                   # (rows, E)
                dk_b = dk_part[:cols * dim].reshape(cols, dim)
                np.dot(ds.T, q_b, dk_b)                                 # (cols, E)
                for r in range(rows):
                    for e in range(dim):
                        dq[n, i0 + r, e] += dq_b[r, e]
                for c in range(cols):
                    for e in range(dim):
                        dk_acc[c, e] += dk_b[c, e]
                    for e in range(width):
                        dv_acc[c, e] += dv_b[c, e]
            for c in range(cols):
                for e in range(dim):
                    dk[n, j0 + c, e] = dk_acc[c, e] * scale
                for e in range(width):
                    dv[n, j0 + c, e] = dv_acc[c, e]
        for i in range(length):
            for e in range(dim):
                dq[n, i, e] *= scale


@_jit
def _all_finite(flat):
    """No inf or NaN in the 1-D array: x·0 is NaN exactly for those, and their sum, in the
    array's dtype, vectorizes where a loop that stops early would not."""
    zero = flat.dtype.type(0.0)
    total = zero
    for i in range(flat.size):
        total += flat[i] * zero
    return total == 0.0


# ----- which calls the kernels take ---------------------------------------------------------
def _takes(q, k, v, mask, dropout_p):
    """True when the compiled loops run this call: q, k, v NumPy arrays of one float32 or
    float64 dtype with equal batch dims, nothing empty, no mask, no dropout (finiteness is
    checked apart), and SciPy's BLAS there for np.dot."""
    if mask is not None or dropout_p or not BLAS:
        return False
    if not all(type(a) is np.ndarray and a.ndim == q.ndim >= 2 and a.size for a in (q, k, v)):
        return False
    return (q.dtype in DTYPES and k.dtype == v.dtype == q.dtype
            and q.shape[:-2] == k.shape[:-2] == v.shape[:-2])


def _heads(array):
    """(N, rows, columns), C-contiguous (a view is copied): N the batch dims flattened."""
    return np.ascontiguousarray(array).reshape(-1, *array.shape[-2:])


def _finite(*arrays):
    # C-contiguous arrays (``_heads``' and the kernels' own): reshape(-1) is a view, no copy
    return all(_all_finite(a.reshape(-1)) for a in arrays)


# ----- the reference's functions ------------------------------------------------------------
def attention_forward(q, k, v, mask, is_causal, scale, dropout_p=0.0, seed=0):
    """As ``reference.attention_forward``: O (..., L, Ev) in q's dtype, ℓ (..., L, 1)."""
    if not _takes(q, k, v, mask, dropout_p):
        return reference.attention_forward(q, k, v, mask, is_causal, scale, dropout_p, seed)
    qh, kh, vh = _heads(q), _heads(k), _heads(v)      # checked after the copy: views are
    if not _finite(qh, kh, vh):                       # copied once, not twice
        return reference.attention_forward(q, k, v, mask, is_causal, scale, dropout_p, seed)
    out = np.empty(qh.shape[:2] + vh.shape[2:], q.dtype)                # (N, L, Ev)
    lse = np.empty(qh.shape[:2], q.dtype)                               # (N, L)
    _attention_blocks(qh, kh, vh, float(scale), bool(is_causal), out, lse)
    if not _finite(out, lse):                   # a score or a sum overflowed: torch's
        return reference.attention_forward(q, k, v, mask, is_causal, scale, dropout_p, seed)
    batch = q.shape[:-2]
    return out.reshape(batch + out.shape[1:]), lse.reshape(batch + (lse.shape[1], 1))


def attention_backward(dout, q, k, v, out, lse, mask, is_causal, scale, dropout_p=0.0, seed=0,
                       need_mask_grad=False):
    """As ``reference.attention_backward``: dq, dk, dv and None (no mask here)."""
    args = (dout, q, k, v, out, lse, mask, is_causal, scale, dropout_p, seed, need_mask_grad)
    if not (_takes(q, k, v, mask, dropout_p)
            and all(type(a) is np.ndarray and a.dtype == q.dtype for a in (dout, out, lse))
            and dout.shape == out.shape == q.shape[:-1] + v.shape[-1:]
            and lse.shape == q.shape[:-1] + (1,)):
        return reference.attention_backward(*args)
    douth, qh, kh, vh, outh, lseh = map(_heads, (dout, q, k, v, out, lse))
    if not _finite(douth, qh, kh, vh, outh, lseh):
        return reference.attention_backward(*args)
    dq, dk, dv = np.empty_like(qh), np.empty_like(kh), np.empty_like(vh)
    _attention_blocks_backward(douth, qh, kh, vh, outh, lseh[:, :, 0],
                               float(scale), bool(is_causal), dq, dk, dv)
    if not _finite(dq, dk, dv):                 # a product overflowed: the reference's
        return reference.attention_backward(*args)
    return dq.reshape(q.shape), dk.reshape(k.shape), dv.reshape(v.shape), None
