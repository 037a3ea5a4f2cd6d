"""The numba kernels of scaled dot-product attention: ``attention_forward`` and
``attention_backward`` of ``kernels.reference``, same names and signatures, in
FlashAttention's blocked form, compiled for float32 and float64 NumPy arrays;
``numba_cpu`` re-exports them.

Forward, per head and block of BLOCK_Q queries, one block of BLOCK_K keys at a time: the
scores S_b = q_b·k_bᵀ·scale (BLAS), an online softmax over them (a running max m and sum l
per row; when m grows, l and the output accumulator are rescaled by exp(m_old - m_new))
and P_b·v_b added to the accumulator; then O = acc / l and ℓ = m + log l. No more than
BLOCK_Q × BLOCK_K scores exist at once, and they stay in cache. Backward, per block of
keys, visits the query blocks and recomputes their P = exp(S - ℓ) from the saved ℓ:
dv_b += Pᵀ·dO, dP = dO·v_bᵀ, dS = P∘(dP - D) with D = Σ dO∘O per row, dq += dS·k_b·scale,
dk_b += dSᵀ·q·scale (derivations §10), each sum accumulated by BLAS in the gradient itself.
With ``is_causal`` (torch's top-left triangle) a block stops at its last query's diagonal:
the keys after it are never visited.

The heads are read where they lie, as PyTorch's CPU flash attention reads them: BLAS takes
each matrix with its row stride as leading dimension, so the (B, H, T, E) transposed views
that model files make of one projection are not copied, and dq, dk, dv are laid out in
memory as q, k, v are, so that the model's transposes and views give them back without a
copy either (``_heads``, ``_gradient_like``). Taken: q, k, v (and dO, O, ℓ) NumPy arrays of
one float32 / float64 dtype with equal batch dims, nothing empty, no mask but
``is_causal``, no dropout, every value finite; a layout BLAS cannot take (columns not
contiguous, overlapping or reversed rows) is copied first. Everything else is the
reference's, exactly: masks, dropout, half precision, broadcast batch dims, inf and NaN,
and every call where SciPy (whose BLAS numba's helper calls) is missing. exp is
``numba_activations``' vectorizable one (within 1 ulp, in the data's dtype); the row sums
accumulate in float64, the products in BLAS, in the data's dtype, as the reference's.
Blocked BLAS products beat tight loops over the head size at E = 16 to 64 and L = 32 to
256 (1.1-2.3x).
"""

import importlib.util
import math

import numba
import numpy as np

from . import reference
from ..backend import memory_owner
# _exp is compiled into these kernels, and numba's disk cache looks only at this file's time
# stamp: after editing _exp, delete this module's .nbi/.nbc files in kernels/__pycache__
from .numba_activations import _exp
from .numba_jit import DTYPES, OPTIONS, _any_layout, _jit

__all__ = ["attention_backward", "attention_forward"]

BLOCK_Q, BLOCK_K = 64, 64           # queries × keys of one block of scores (32 KiB float64)
BLAS = importlib.util.find_spec("scipy") is not None   # numba's BLAS helper calls SciPy's
_blas_loads = []                    # [whether SciPy's BLAS loaded], once tried


def _blas():
    """Whether SciPy's BLAS loads, tried once, at the first call that would use it (its
    import costs 0.4 s of CPU, which a run without attention does not pay): without it,
    numba's helper would fail inside a kernel, so those calls go to the reference."""
    if not _blas_loads:
        try:
            import scipy.linalg.cython_blas  # noqa: F401
        except ImportError:
            _blas_loads.append(False)
        else:
            _blas_loads.append(True)
    return _blas_loads[0]


# ----- matrix products on strided rows ------------------------------------------------------
# numba's own BLAS entry (the C helper its np.dot calls: SciPy's sgemm / dgemm, loaded on
# first use), called with each matrix's row stride as its leading dimension, so that a head
# of a transposed (B, T, H, E) view is multiplied where it lies: np.dot takes C- or
# F-contiguous matrices only and copies any other. Column-major BLAS computes a row-major
# C = op(A)·op(B) as Cᵀ = op(B)ᵀ·op(A)ᵀ.
_xxgemm = numba.types.ExternalFunction("numba_xxgemm", numba.types.int32(
    numba.types.int8, numba.types.int8, numba.types.int8,                 # kind, trans ×2
    numba.types.intp, numba.types.intp, numba.types.intp,                 # m, n, k
    numba.types.voidptr, numba.types.voidptr, numba.types.intp,           # alpha, a, lda
    numba.types.voidptr, numba.types.intp, numba.types.voidptr,           # b, ldb, beta
    numba.types.voidptr, numba.types.intp))                               # c, ldc


@numba.njit(inline="always", **OPTIONS)
def _gemm(a, trans_a, b, trans_b, c, alpha_beta):
    """c = α·op(a)·op(b) + β·c on 2-D arrays of one float dtype whose rows may have any
    stride (at least a row's length) and whose columns are contiguous; op(x) = xᵀ where
    ``trans_x``. ``alpha_beta``: (α, β) in the dtype (an array: BLAS takes pointers).
    SciPy's BLAS must have loaded (``_blas``)."""
    rows, cols = c.shape
    inner = a.shape[0] if trans_a else a.shape[1]
    if rows == 0 or cols == 0:
        return
    item = a.itemsize
    t, n = np.int8(116), np.int8(110)                                      # 't', 'n'
    _xxgemm(np.int8(115) if item == 4 else np.int8(100),                  # 's', 'd'
            t if trans_b else n, t if trans_a else n, cols, rows, inner,
            alpha_beta[0:].ctypes, b.ctypes, _leading(b), a.ctypes, _leading(a),
            alpha_beta[1:].ctypes, c.ctypes, _leading(c))


@numba.njit(inline="always", **OPTIONS)
def _leading(x):
    """BLAS's leading dimension of a row-major matrix: its row stride in elements (a single
    row's stride is arbitrary, and BLAS wants at least the row's length)."""
    return max(x.strides[0] // x.itemsize, x.shape[1], 1)


# ----- the compiled loops -------------------------------------------------------------------
# q (B, H, L, E), k (B, H, S, E), v (B, H, S, Ev), one dtype, any strides with each row's
# E values contiguous; dout, O, ℓ and the gradients likewise (``_heads``). A block's
# scores are held transposed, Sᵀ (keys, queries), in a flat buffer whose first cols·rows
# values are viewed as a C-contiguous matrix: a key's row holds every query of the block,
# so each query's running max, exp and sums are element-wise over a contiguous row of
# queries, loops LLVM vectorizes whatever the causal cut. Held as S (queries, keys), each
# query's max was a reduction LLVM does not vectorize (NaN's order), and a causal row's few
# keys left its loops to their scalar remainders: the float32 forward took 1.4x as long
# (one AVX-512 CPU, (16, 4, 64, 16)). A loop whose index does not start at 0 is written over
# a slice that does: numba adds a negative index's wraparound to ``a[i]`` for an i not known
# to be >= 0, and that select kept such loops from vectorizing (1.5-2x slower).

@numba.njit(inline="always", **OPTIONS)
def _first_query(causal, i0, j0, c):
    """The first row of a block of queries starting at query i0 that sees key j0 + c: with
    ``is_causal`` (torch's top-left triangle) query i sees the keys j <= i, else all."""
    return max(j0 + c - i0, 0) if causal else 0


def _arrays(dtype, *ndims, readonly=False):
    return tuple(numba.types.Array(dtype, n, "A", readonly=readonly) for n in ndims)


# q, k, v read where they lie, any layout: one compiled version a dtype (_any_layout)
@_any_layout(lambda t: (*_arrays(t, 4, 4, 4, readonly=True), numba.float64, numba.boolean,
                        *_arrays(t, 4, 3)))
def _attention_blocks(q, k, v, scale, causal, out, lse):
    """O (B, H, L, Ev) and ℓ (B, H, L) of each head, a block of queries at a time. Per
    block of keys: Sᵀ = k_b·qᵀ·scale (BLAS, the scale as its α), each query's max m grown
    over the keys it sees, l and the accumulator rescaled by exp(m_old - m), Pᵀ = exp(Sᵀ -
    m) (0 where the query does not see the key) summed into l, and Pᵀᵀ·v_b added to the
    accumulator."""
    batch, heads, length = q.shape[0], q.shape[1], q.shape[2]
    keys, width = k.shape[2], v.shape[3]
    dtype = q.dtype
    scores = np.empty(BLOCK_Q * BLOCK_K, dtype)             # Sᵀ, then Pᵀ, of one block
    acc = np.empty((BLOCK_Q, width), dtype)                 # Σ_b P_b·v_b, rescaled
    top = np.empty(BLOCK_Q, dtype)                          # m per query, S - m in dtype
    grown = np.empty(BLOCK_Q, dtype)                        # m after this block's keys
    total = np.empty(BLOCK_Q)                               # l per query (float64)
    alpha = np.empty(BLOCK_Q)                               # exp(m_old - m), float64
    scaled = np.array([scale, 0.0], dtype)                  # (α, β) of Sᵀ
    accumulate = np.array([1.0, 1.0], dtype)
    for b in range(batch):
        for h in range(heads):
            qn, kn, vn = q[b, h], k[b, h], v[b, h]
            for i0 in range(0, length, BLOCK_Q):
                rows = min(BLOCK_Q, length - i0)
                stop = min(keys, i0 + rows) if causal else keys     # keys j <= last query
                top[:] = -np.inf
                total[:] = 0.0
                acc[:] = 0
                for j0 in range(0, stop, BLOCK_K):
                    cols = min(BLOCK_K, stop - j0)
                    st = scores[:cols * rows].reshape(cols, rows)
                    _gemm(kn[j0:j0 + cols], False, qn[i0:i0 + rows], True, st, scaled)
                    grown[:rows] = top[:rows]
                    for c in range(cols):           # the max: -inf where a query is blind
                        row = st[c]
                        row[:min(_first_query(causal, i0, j0, c), rows)] = -np.inf
                        for r in range(rows):
                            grown[r] = row[r] if row[r] > grown[r] else grown[r]
                    for r in range(rows):           # 0 on a query's first keys (-inf before)
                        alpha[r] = _exp(np.float64(top[r]) - np.float64(grown[r]))
                    for r in range(rows):           # 1 where m stayed (-inf - -inf is NaN)
                        alpha[r] = 1.0 if grown[r] == top[r] else alpha[r]
                        top[r] = grown[r]
                        total[r] *= alpha[r]
                    for c in range(cols):
                        row = st[c]
                        first = min(_first_query(causal, i0, j0, c), rows)
                        seen, m = row[first:], top[first:rows]
                        for r in range(seen.size):
                            seen[r] = _exp(seen[r] - m[r])          # in the data's dtype
                        row[:first] = 0
                        for r in range(rows):
                            total[r] += row[r]
                    for r in range(rows):
                        if alpha[r] != 1.0:
                            rescale = dtype.type(alpha[r])
                            for e in range(width):
                                acc[r, e] *= rescale
                    _gemm(st, True, vn[j0:j0 + cols], False, acc[:rows], accumulate)
                for r in range(rows):
                    for e in range(width):
                        out[b, h, i0 + r, e] = acc[r, e] / total[r]
                    lse[b, h, i0 + r] = top[r] + math.log(total[r])


@_any_layout(lambda t: (*_arrays(t, 4, 4, 4, 4, 4, 3, readonly=True), numba.float64,
                        numba.boolean, *_arrays(t, 4, 4, 4)))
def _attention_blocks_backward(dout, q, k, v, out, lse, scale, causal, dq, dk, dv):
    """dq (B, H, L, E), dk (B, H, S, E), dv (B, H, S, Ev) of each head, a block of keys at
    a time, each accumulated in place by the products (β = 0 on a block's first visit,
    then 1; the scale folded into α). Per block of queries, transposed as the forward's:
    Pᵀ = exp(k_b·qᵀ·scale - ℓ), dv_b += Pᵀ·dO, dPᵀ = v_b·dOᵀ, dSᵀ = Pᵀ∘(dPᵀ - D),
    dq += dSᵀᵀ·k_b·scale, dk_b += dSᵀ·q·scale."""
    batch, heads, length, _ = q.shape
    keys, width = k.shape[2], v.shape[3]
    dtype = q.dtype
    p_block = np.empty(BLOCK_Q * BLOCK_K, dtype)            # Pᵀ of one block
    ds_block = np.empty(BLOCK_Q * BLOCK_K, dtype)           # dPᵀ, then dSᵀ
    delta = np.empty(length, dtype)                         # D = Σ dO∘O per query
    ell = np.empty(length, dtype)                           # the head's ℓ, contiguous
    one = np.array([1.0, 0.0], dtype)                       # (α, β): overwrite
    sums = np.array([[1.0, 0.0], [1.0, 1.0]], dtype)        # first visit, then accumulate
    scaled = np.array([[scale, 0.0], [scale, 1.0]], dtype)
    for b in range(batch):
        for h in range(heads):
            qn, kn, vn, dn = q[b, h], k[b, h], v[b, h], dout[b, h]
            dqn, dkn, dvn = dq[b, h], dk[b, h], dv[b, h]
            for i in range(length):
                d = 0.0                                     # float64 accumulator
                for e in range(width):
                    d += dn[i, e] * out[b, h, i, e]
                delta[i] = d
                ell[i] = lse[b, h, i]
            for j0 in range(0, keys, BLOCK_K):
                cols = min(BLOCK_K, keys - j0)
                k_b, v_b = kn[j0:j0 + cols], vn[j0:j0 + cols]
                dk_b, dv_b = dkn[j0:j0 + cols], dvn[j0:j0 + cols]
                first = j0 if causal else 0                 # earlier queries see none
                if first >= length:                         # no query sees these keys
                    dk_b[:] = 0
                    dv_b[:] = 0
                for i0 in range(first, length, BLOCK_Q):
                    rows = min(BLOCK_Q, length - i0)
                    again = 1 if i0 > first else 0          # this key block seen before
                    q_b, dout_b = qn[i0:i0 + rows], dn[i0:i0 + rows]
                    pt = p_block[:cols * rows].reshape(cols, rows)
                    _gemm(k_b, False, q_b, True, pt, scaled[0])        # Sᵀ (cols, rows)
                    for c in range(cols):
                        start = min(_first_query(causal, i0, j0, c), rows)
                        pt[c, :start] = 0
                        seen, m = pt[c, start:], ell[i0 + start:i0 + rows]
                        for r in range(seen.size):
                            seen[r] = _exp(seen[r] - m[r])
                    _gemm(pt, False, dout_b, False, dv_b, sums[again])  # Σ Pᵀ·dO
                    dst = ds_block[:cols * rows].reshape(cols, rows)
                    _gemm(v_b, False, dout_b, True, dst, one)           # dPᵀ (cols, rows)
                    d = delta[i0:i0 + rows]
                    for c in range(cols):
                        ds_row, p_row = dst[c], pt[c]
                        for r in range(rows):
                            ds_row[r] = (ds_row[r] - d[r]) * p_row[r]
                    # dq's rows: first met at the first key block (j0 = 0 sees every query)
                    _gemm(dst, True, k_b, False, dqn[i0:i0 + rows], scaled[1 if j0 else 0])
                    _gemm(dst, False, q_b, False, dk_b, scaled[again])  # Σ dSᵀ·q·scale


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
    checked apart), and SciPy's BLAS loaded (``_blas``)."""
    if mask is not None or dropout_p or not BLAS:
        return False
    if not all(type(a) is np.ndarray and a.ndim == q.ndim >= 2 and a.size for a in (q, k, v)):
        return False
    return (q.dtype in DTYPES and k.dtype == v.dtype == q.dtype
            and q.shape[:-2] == k.shape[:-2] == v.shape[:-2] and _blas())


def _heads(array):
    """(B, H, rows, columns), a view of ``array`` the kernels read and write in place: a 4-D
    array as it is (a transposed view of one projection's heads, ``q.view(B, T, H,
    E).transpose(1, 2)``, is read where it lies), any other the batch dims merged into H.
    Copied only where BLAS cannot take its rows (columns not contiguous, rows overlapping,
    negative strides) or where the batch dims do not merge in a view."""
    if array.ndim != 4:
        array = array.reshape((1, -1) + array.shape[-2:])
    rows, columns = array.strides[-2:]
    item = array.itemsize
    if columns != item or rows % item or (array.shape[-2] > 1 and rows < array.shape[-1] * item):
        array = np.ascontiguousarray(array)
    return array


def _gradient_like(array):
    """An empty array of ``array``'s shape that ``_heads`` views without a copy, laid out in
    memory as ``array`` is where that suits the kernels (``np.empty_like`` keeps the order
    of the axes: the gradient of a transposed view then goes back without a copy), else
    C-contiguous."""
    gradient = np.empty_like(array)
    if gradient.ndim != 4 or gradient.strides[-1] != gradient.itemsize:
        gradient = np.empty(array.shape, array.dtype)
    return gradient


def _finite(*arrays):
    # a C-contiguous array in one compiled pass over its memory, a strided view by NumPy's
    # isfinite (its inner loops take the strides: 3x the compiled loop's speed there). Views
    # of one C-contiguous owner no larger than they are together (q, k, v split from one
    # projection) are checked as the owner, in one compiled pass: an inf or NaN there outside
    # the views only sends the call to the reference, which is exact for any input.
    checked, owners = [], {}
    for a in arrays:
        owner = memory_owner(a)
        if owner is not a and type(owner) is np.ndarray and owner.flags.c_contiguous:
            entry = owners.setdefault(id(owner), [owner, 0, []])
            entry[1] += a.size
            entry[2].append(a)
        else:
            checked.append(a)
    for owner, size, views in owners.values():
        checked += [owner] if owner.size <= size else views
    return all(_all_finite(a.reshape(-1)) if a.flags.c_contiguous else np.isfinite(a).all()
               for a in checked)


# ----- the reference's functions ------------------------------------------------------------
def attention_forward(q, k, v, mask, is_causal, scale, dropout_p=0.0, stream=None):
    """As ``reference.attention_forward``: O (..., L, Ev) in q's dtype, ℓ (..., L, 1)."""
    if not _takes(q, k, v, mask, dropout_p):
        return reference.attention_forward(q, k, v, mask, is_causal, scale, dropout_p, stream)
    qh, kh, vh = _heads(q), _heads(k), _heads(v)
    if not _finite(qh, kh, vh):
        return reference.attention_forward(q, k, v, mask, is_causal, scale, dropout_p, stream)
    out = np.empty(q.shape[:-1] + v.shape[-1:], q.dtype)                # (..., L, Ev)
    lse = np.empty(q.shape[:-1] + (1,), q.dtype)                        # (..., L, 1)
    outh, lseh = _heads(out), _heads(lse)          # views (C-contiguous): written in place
    _attention_blocks(qh, kh, vh, float(scale), bool(is_causal), outh, lseh[..., 0])
    if not _finite(outh, lseh):                 # a score or a sum overflowed: torch's
        return reference.attention_forward(q, k, v, mask, is_causal, scale, dropout_p, stream)
    return out, lse


def attention_backward(dout, q, k, v, out, lse, mask, is_causal, scale, dropout_p=0.0,
                       stream=None, need_mask_grad=False):
    """As ``reference.attention_backward``: dq, dk, dv and None (no mask here), each laid
    out in memory as its input where the kernels can write it so (``_gradient_like``)."""
    args = (dout, q, k, v, out, lse, mask, is_causal, scale, dropout_p, stream, need_mask_grad)
    if not (_takes(q, k, v, mask, dropout_p)
            and all(type(a) is np.ndarray and a.dtype == q.dtype for a in (dout, out, lse))
            and dout.shape == out.shape == q.shape[:-1] + v.shape[-1:]
            and lse.shape == q.shape[:-1] + (1,)):
        return reference.attention_backward(*args)
    douth, qh, kh, vh, outh, lseh = map(_heads, (dout, q, k, v, out, lse))
    if not _finite(douth, qh, kh, vh, outh, lseh):
        return reference.attention_backward(*args)
    dq, dk, dv = _gradient_like(q), _gradient_like(k), _gradient_like(v)
    dqh, dkh, dvh = _heads(dq), _heads(dk), _heads(dv)          # views: written in place
    _attention_blocks_backward(douth, qh, kh, vh, outh, lseh[..., 0], float(scale),
                               bool(is_causal), dqh, dkh, dvh)
    if not _finite(dqh, dkh, dvh):              # a product overflowed: the reference's
        return reference.attention_backward(*args)
    return dq, dk, dv, None
