"""Inverses and linear solves, each one node with torch's closed-form backward (derived in
each class's docstring): det and slogdet (from the LU), the inverse, ``solve`` and the
triangular solve, with the checks every matrix function makes (``check_matrices``: a batch of
(square) matrices of float32, float64, complex64 or complex128, torch's errors) and
``LinAlgError``. A matrix LAPACK calls singular is factored again here (``_lu``), so that
``info`` and the inf and NaN of its result are LAPACK's. ``ops/decompositions.py`` holds the
factorizations and the Tensor methods over both.

An array (..., m, n) is a batch of matrices; Aᴴ is the conjugate transpose (the transpose of
a real A); a gradient gA is torch's, dL = Re tr(gAᴴ dA), for complex inputs too."""

import math

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..dtypes import is_floating, is_half, torch_name  # noqa: F401  (torch_name: linalg's)
from .base import broadcast_shape, check_tensor, constant, unbroadcast


class LinAlgError(RuntimeError):
    """A matrix a factorization cannot take: a singular matrix to invert or solve with, a
    Cholesky input that is not positive-definite (``torch.linalg.LinAlgError``, also a
    RuntimeError)."""


# ----- checks ---------------------------------------------------------------------------------
def check_kernel(kernel, A):
    """torch's dispatch error, a NotImplementedError naming its CPU kernel ``kernel``, unless
    ``A`` is float32, float64 or complex: what torch raises where that kernel is the first
    to look at the dtype."""
    if not (is_floating(A.dtype) and not is_half(A.dtype) or A.dtype.kind == "c"):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{torch_name(A.dtype)}\'')


def check_dtype(fn, A, kernel=None, half=False):
    """A floating or complex ``A``, else torch's RuntimeError; of single or double precision
    unless ``half``, else torch's RuntimeError, or where torch's CPU kernel ``kernel`` meets
    half precision first, its NotImplementedError (``check_kernel``)."""
    if not (is_floating(A.dtype) or A.dtype.kind == "c"):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{torch_name(A.dtype)}")
    if is_half(A.dtype) and not half:
        if kernel is not None:
            check_kernel(kernel, A)
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got "
                           f"{torch_name(A.dtype)}")


def check_matrices(fn, A, square=True, name="A", dtype=True, kernel=None):
    """``A`` a Tensor of matrices (..., m, n), square if asked, of a dtype LAPACK takes
    (``check_dtype``, with torch's ``kernel``)."""
    check_tensor(fn, A)
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if dtype:
        check_dtype(fn, A, kernel)
    return A


def raise_failed(fn, info, says):
    """LinAlgError for the first matrix whose ``info`` (LAPACK's, per matrix) is not 0;
    ``says(i)`` words its failure."""
    info = backend.to_numpy(info)
    bad = np.flatnonzero(info.reshape(-1))
    if bad.size:
        where = f"(Batch element {bad[0]}): " if info.ndim else ""
        raise LinAlgError(f"{fn}: {where}{says(int(info.reshape(-1)[bad[0]]))}")


# ----- array helpers --------------------------------------------------------------------------
def mH(a):
    """Aᴴ of the last two dims of the array ``a``."""
    a = a.swapaxes(-1, -2)
    return a.conj() if a.dtype.kind == "c" else a


def batched(a):
    # (..., m, n) -> (B, m, n), with the batch shape to restore (B counted: a may be empty)
    return a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:]), a.shape[:-2]


def eye_like(a):
    # the identity of a's last dim, broadcast to a's shape
    xp = backend.array_module(a)
    return xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)


def _lu(a):
    """LAPACK getrf's LU with partial pivoting of each matrix of (B, n, n): (lu, the row
    order, info: the 1-based index of the first zero pivot, 0 for none). Run only for
    matrices LAPACK called singular, whose inf and NaN it then reproduces."""
    xp = backend.array_module(a)
    lu, (count, n) = a.copy(), a.shape[:2]
    order = xp.broadcast_to(xp.arange(n), (count, n)).copy()
    info = xp.zeros(count, np.int32)
    rows = xp.arange(count)
    for k in range(n):
        p = k + xp.abs(lu[:, k:, k]).argmax(axis=1)                      # (B,) pivot rows
        lu[rows, k], lu[rows, p] = lu[rows, p].copy(), lu[rows, k].copy()
        order[rows, k], order[rows, p] = order[rows, p].copy(), order[rows, k].copy()
        pivot = lu[:, k, k]
        zero = pivot == 0               # then its column below is 0 too: nothing to eliminate
        info = xp.where((info == 0) & zero, k + 1, info)
        factors = lu[:, k + 1:, k] / xp.where(zero, 1, pivot)[:, None]    # (B, n-k-1)
        lu[:, k + 1:, k] = factors
        lu[:, k + 1:, k + 1:] -= factors[:, :, None] * lu[:, k, None, k + 1:]
    return lu, order, info


def substitute(t, b, upper, unit=False):
    """X with T X = B by substitution, T (..., n, n) triangular (only that triangle read; its
    diagonal taken as 1 with ``unit``), B (..., n, k), the batch dims broadcast; a zero on
    the diagonal gives inf and NaN, as LAPACK's trsm."""
    xp = backend.array_module(t)
    n = t.shape[-1]
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    x = xp.zeros(batch + b.shape[-2:], np.result_type(t.dtype, b.dtype))
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        done = slice(i + 1, n) if upper else slice(0, i)       # the rows solved before i
        rest = b[..., i, :] - (t[..., i:i + 1, done] @ x[..., done, :])[..., 0, :]
        x[..., i, :] = rest if unit else _divided(rest, t[..., i, i, None])
    return x


def _divided(rest, pivot):
    # rest / pivot: ±inf or NaN at a zero real pivot; NaN + NaN·i at a zero complex one, as
    # LAPACK's complex division gives torch (NumPy's gives inf + NaN·i)
    quotient = rest / pivot
    if quotient.dtype.kind == "c":
        xp = backend.array_module(quotient)
        quotient = xp.where(pivot == 0, quotient.dtype.type(complex(math.nan, math.nan)),
                            quotient)
    return quotient


def solve_info(a, b):
    """(X, info) with A X = B for each matrix, A (..., n, n), B (..., n, k), batch dims
    broadcast; info is getrf's per matrix (int32), and where it is not 0 X holds the inf
    and NaN of the zero pivot, as LAPACK's."""
    xp = backend.array_module(a)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    try:
        return xp.linalg.solve(a, b), xp.zeros(batch, np.int32)
    except np.linalg.LinAlgError:       # some matrix singular: LU by hand, then LAPACK's
        pass
    a3, _ = batched(a)
    b3, _ = batched(b)
    lu, order, info = _lu(a3)
    x = substitute(lu, b3[xp.arange(len(b3))[:, None], order], upper=False, unit=True)
    x = substitute(lu, x, upper=True)
    # LAPACK for the rest; one with inf or NaN (no zero pivot) may fail there: its
    # substitution's NaN, as torch's
    fine = (info == 0) & xp.isfinite(a3).all(axis=(-2, -1))
    if fine.any():
        try:
            x[fine] = xp.linalg.solve(a3[fine], b3[fine])
        except np.linalg.LinAlgError:   # a zero pivot for LAPACK only, rounding's: ours kept
            pass
    return x.reshape(batch + x.shape[-2:]), info.reshape(batch)


def solve(a, b):
    """A⁻¹B of arrays (``solve_info`` without info)."""
    return solve_info(a, b)[0]


def info_of(info, a):
    """The info of each matrix of ``a`` alone, from an ``info`` over the batch dims that
    a's broadcast to (torch's info has A's batch shape)."""
    extra = info.ndim - (a.ndim - 2)
    if info.size == 0 and math.prod(a.shape[:-2]):   # B's batch empty, A's not: no failure
        return backend.array_module(info).zeros(a.shape[:-2], info.dtype)
    return info[(0,) * extra + tuple(slice(None) if n != 1 else slice(0, 1)
                                     for n in a.shape[:-2])]


def _exclusive_products(s):
    # Π_{j≠i} s_j along the last dim without dividing (s may hold zeros)
    xp = backend.array_module(s)
    ones = xp.ones(s.shape[:-1] + (1,), s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], -1), -1)
    after = xp.flip(xp.cumprod(xp.flip(xp.concatenate([s[..., 1:], ones], -1), -1), -1), -1)
    return before * after


def _nan(a):
    # torch's NaN in a's dtype: nan+nanj for complex a
    return complex(math.nan, math.nan) if a.dtype.kind == "c" else math.nan


# ----- det, slogdet, inverse, solves -----------------------------------------------------------
class Det(Function):
    r"""det(A) from LAPACK's LU.

    Jacobi's formula, ∂det/∂A = det(A)·A⁻ᵀ, gives :math:`g_A = g\,\overline{\det A}\,A^{-H}`.
    At a singular A (det = 0, no inverse) the cofactors through the SVD A = U diag(s) Vᴴ:
    det A = det U · Πs · det Vᴴ, so :math:`g_A = U \operatorname{diag}(g\,\overline{\det U
    \det V^H}\,\prod_{j \ne i} s_j) V^H`, the derivative there (torch's under
    ``create_graph=True``; its plain ``backward()`` gives zeros). A matrix with inf or NaN
    and a zero pivot gives NaN, as torch's (NumPy's 0), and then a NaN gradient."""

    @staticmethod
    def forward(ctx, a):
        xp = backend.array_module(a)
        d = xp.linalg.det(a)
        # at a zero pivot NumPy answers 0 without the pivots' product, which holds 0·inf or
        # NaN for a matrix that is not finite: torch's NaN. So d = 0 only for finite matrices
        d = xp.where((d == 0) & ~xp.isfinite(a).all(axis=(-2, -1)), _nan(a), d).astype(d.dtype)
        ctx.save_for_backward(a, d)
        return d

    @staticmethod
    def backward(ctx, grad):
        a, d = ctx.saved
        xp = backend.array_module(a)
        a3, batch = batched(a)
        scale = (grad * d.conj()).reshape(-1)                            # (B,)
        singular = (d == 0).reshape(-1)
        out = xp.empty_like(a3)
        if (~singular).any():
            regular = a3[~singular]                      # NaN ones too: solve's NaN, no error
            out[~singular] = scale[~singular, None, None] * mH(solve(regular, eye_like(regular)))
        if singular.any():
            u, s, vh = xp.linalg.svd(a3[singular])
            alpha = (xp.linalg.det(u) * xp.linalg.det(vh)).conj() \
                * grad.reshape(-1)[singular]                                     # (B',)
            cofactors = alpha[:, None] * _exclusive_products(s).astype(a.dtype)   # (B', n)
            out[singular] = (u * cofactors[:, None, :]) @ vh
        return out.reshape(a.shape)


class SlogDet(Function):
    r"""(sign, log|det A|): sign ±1 (a unit complex number for complex A; 0 at a singular A).

    d log|det A| = Re tr(A⁻¹dA) gives :math:`g_A = g\,A^{-H}` for the log's gradient g; for
    complex A the sign's gradient adds its phase: d sign = sign · i Im tr(A⁻¹dA), so
    :math:`g = g_{\log} - i\,\mathrm{Im}(\overline{g_{\mathrm{sign}}}\,\mathrm{sign})` (a
    real A's sign is constant). A singular A gives inf and NaN. Where log|det A| is NaN (inf
    or NaN in A), the sign is torch's: 0 (sgn(NaN)), NaN for complex A."""

    @staticmethod
    def forward(ctx, a):
        xp = backend.array_module(a)
        sign, logabsdet = xp.linalg.slogdet(a)
        # NumPy's (0, -inf) at a zero pivot of a matrix that is not finite: torch's NaN, as
        # Det; a NaN sign (a NaN pivot) makes log|det| NaN, as torch's
        unknown = xp.isnan(logabsdet) | xp.isnan(sign) \
            | (sign == 0) & ~xp.isfinite(a).all(axis=(-2, -1))
        logabsdet = xp.where(unknown, xp.nan, logabsdet).astype(logabsdet.dtype)
        sign = xp.where(unknown, _nan(a) if a.dtype.kind == "c" else 0, sign).astype(sign.dtype)
        ctx.save_for_backward(a, sign)
        return sign, logabsdet

    @staticmethod
    def backward(ctx, grad_sign, grad_log):
        a, sign = ctx.saved
        g = grad_log.astype(a.dtype)
        if a.dtype.kind == "c":
            g = g - 1j * (grad_sign.conj() * sign).imag
        return solve(mH(a), g[..., None, None] * eye_like(a))


class Inverse(Function):
    r"""A⁻¹ (and getrf's info per matrix), as torch's ``linalg.inv_ex``: ``solve(A, I)``.

    d(A⁻¹) = -A⁻¹ dA A⁻¹ gives :math:`g_A = -A^{-H} g A^{-H}`."""

    @staticmethod
    def forward(ctx, a, fn=None):
        inverse, info = solve_info(a, eye_like(a))
        if fn is not None:
            raise_failed(fn, info, lambda i: f"The diagonal element {i} is zero, the "
                          "inversion could not be completed because the input matrix is "
                          "singular.")
        ctx.save_for_backward(inverse)
        return inverse, info

    @staticmethod
    def backward(ctx, grad, _):
        inverse_h = mH(ctx.saved[0])
        return -(inverse_h @ grad @ inverse_h)


class Solve(Function):
    r"""X = A⁻¹B (and getrf's info), A (..., n, n), B (..., n, k), the batch dims broadcast.

    dX = A⁻¹(dB - dA X) gives :math:`g_B = A^{-H} g_X` and :math:`g_A = -g_B X^H`, each
    summed over the batch dims its input was broadcast along."""

    @staticmethod
    def forward(ctx, a, b, fn=None):
        x, info = solve_info(a, b)
        info = info_of(info, a)
        if fn is not None:
            raise_failed(fn, info, lambda i: "The solver failed because the input matrix "
                          "is singular.")
        ctx.save_for_backward(a, x)
        ctx.shapes = a.shape, b.shape
        return x, info

    @staticmethod
    def backward(ctx, grad, _):
        a, x = ctx.saved
        grad_b = solve(mH(a), grad)
        grad_a = -(grad_b @ mH(x)) if ctx.needs_input_grad[0] else None
        return (None if grad_a is None else unbroadcast(grad_a, ctx.shapes[0]),
                unbroadcast(grad_b, ctx.shapes[1]))


class SolveTriangular(Function):
    r"""X = T⁻¹B for a triangular T (only its ``upper`` or lower triangle read; a diagonal of
    ones with ``unit``) by substitution, the batch dims broadcast.

    As ``Solve``: :math:`g_B = T^{-H} g_X` (Tᴴ triangular the other way) and
    :math:`g_A = -g_B X^H` kept on T's triangle (off the diagonal with ``unit``)."""

    @staticmethod
    def forward(ctx, t, b, upper, unit):
        x = substitute(t, b, upper, unit)
        ctx.save_for_backward(t, x)
        ctx.upper, ctx.unit, ctx.shapes = upper, unit, (t.shape, b.shape)
        return x

    @staticmethod
    def backward(ctx, grad):
        t, x = ctx.saved
        xp = backend.array_module(t)
        grad_b = substitute(mH(t), grad, not ctx.upper, ctx.unit)
        grad_t = None
        if ctx.needs_input_grad[0]:
            grad_t = -(grad_b @ mH(x))
            grad_t = xp.triu(grad_t, int(ctx.unit)) if ctx.upper else \
                xp.tril(grad_t, -int(ctx.unit))
            grad_t = unbroadcast(grad_t, ctx.shapes[0])
        return grad_t, unbroadcast(grad_b, ctx.shapes[1])


# ----- the checked solves (mg.linalg's) ------------------------------------------------------
def solve_operands(fn, A, B, left, vectors=True, kernel=None):
    """(B as matrices (..., n, k), or (..., k, n) for left=False; whether B was a batch of
    vectors, (..., n) of A.shape[:-1] or 1-D, where ``vectors``), A and B checked as
    torch checks them: one floating dtype (``check_dtype``, with torch's ``kernel``), shapes
    that solve, batch dims that broadcast."""
    check_matrices(fn, A, dtype=False)
    check_tensor(fn, B)
    check_dtype(fn, A, kernel)
    if B.ndim == 0:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    if B.dtype != A.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of "
                           f"type {torch_name(A.dtype)} and B of type {torch_name(B.dtype)} "
                           "instead")
    vector = vectors and (B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1]))
    b = B.reshape(B.shape + (1,)) if vector else B
    n, m = A.shape[-1], b.shape[-2 if left else -1]
    if b.ndim < 2 or m != n:
        shape = "x".join(str(d) for d in b.shape[-2:])
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {equation} "
                           f"({n}x{n} and {shape})")
    broadcast_shape(fn, A.shape[:-2], b.shape[:-2])
    return b, vector


def solved(fn, A, B, left, check_errors):
    """(X, info) of ``linalg.solve`` and ``solve_ex``: the checked operands, one ``Solve``
    node (left=False: XA = B as AᵀXᵀ = Bᵀ), info a constant."""
    b, vector = solve_operands(fn, A, B, left, kernel="lu_cpu")
    errors = fn if check_errors else None
    if left:
        x, info = Solve.apply(A, b, fn=errors)
    else:                                     # X A = B: Aᵀ Xᵀ = Bᵀ
        x, info = Solve.apply(A.mT, b.mT, fn=errors)
        x = x.mT
    return (x.reshape(x.shape[:-1]) if vector else x), constant(info._array)
