"""The LDLᵀ factorization of symmetric (indefinite) matrices with Bunch-Kaufman pivoting,
``torch.linalg.ldl_factor(_ex)`` and ``ldl_solve``: LAPACK's sytf2 (lower) and sytrs in
NumPy (hetf2 and hetrs, LDLᴴ, for a complex A with ``hermitian=True``), so ``LD`` and
``pivots`` are LAPACK's compact form, as torch returns them (1-based pivots, a 2×2
block's pair negative). No gradient, as torch's: a backward through them raises."""

import math

import numpy as np

from .. import backend
from ..autograd.function import Function
from . import return_types
from .base import check_tensor, constant as _constant
from .solves import check_matrices, raise_failed

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

ALPHA = (1 + math.sqrt(17)) / 8         # Bunch-Kaufman's threshold

return_types.linalg_ldl_factor = return_types._result_type("linalg_ldl_factor",
                                                           ["LD", "pivots"])
return_types.linalg_ldl_factor_ex = return_types._result_type("linalg_ldl_factor_ex",
                                                              ["LD", "pivots", "info"])


def _magnitude(a):
    # LAPACK's |.| for the pivot search: cabs1 (|re| + |im|) for complex
    return np.abs(a.real) + np.abs(a.imag) if a.dtype.kind == "c" else np.abs(a)


def _sytf2(a, hermitian):
    """One matrix (n, n), factored in place as LAPACK's sytf2 (hetf2 for a complex Hermitian
    one: the same pivoting on the diagonal's real parts, the updates conjugated) with uplo
    'L'; returns the 1-based pivots and info."""
    n = a.shape[0]
    ipiv = np.zeros(n, np.int32)
    info = 0
    herm = hermitian and a.dtype.kind == "c"
    conj = np.conj if herm else (lambda v: v)
    diagonal = (lambda v: v.real) if herm else (lambda v: v)
    k = 0
    while k < n:
        kstep = 1
        absakk = float(_magnitude(diagonal(a[k, k])))
        if k < n - 1:
            imax = k + 1 + int(np.argmax(_magnitude(a[k + 1:, k])))
            colmax = float(_magnitude(a[imax, k]))
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or math.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
            a[k, k] = diagonal(a[k, k])
        else:
            if absakk >= ALPHA * colmax:
                kp = k
            else:
                row = _magnitude(a[imax, k:imax])
                rowmax = float(row.max())
                if imax < n - 1:
                    rowmax = max(rowmax, float(_magnitude(a[imax + 1:, imax]).max()))
                if absakk >= ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif float(_magnitude(diagonal(a[imax, imax]))) >= ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:                # rows and columns kk and kp of the trailing block
                if kp < n - 1:
                    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
                segment = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = conj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = conj(segment)
                a[kp, kk] = conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = diagonal(a[kp, kp]), diagonal(a[kk, kk])
                if kstep == 2:
                    a[k, k] = diagonal(a[k, k])
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            else:
                a[k, k] = diagonal(a[k, k])
                if kstep == 2:
                    a[k + 1, k + 1] = diagonal(a[k + 1, k + 1])
            if kstep == 1:
                if k < n - 1:
                    d11 = 1 / a[k, k]
                    x = a[k + 1:, k].copy()
                    a[k + 1:, k + 1:] -= np.tril(d11 * np.outer(x, conj(x)))
                    a[k + 1:, k] *= d11
            elif k < n - 2:
                if herm:                # hetf2's scaling by |d21|
                    d = abs(a[k + 1, k])
                    d11, d22 = a[k + 1, k + 1].real / d, a[k, k].real / d
                    d21 = a[k + 1, k] / d
                    scale = 1 / (d11 * d22 - 1) / d
                    wk = scale * (d11 * a[k + 2:, k] - d21 * a[k + 2:, k + 1])
                    wkp1 = scale * (d22 * a[k + 2:, k + 1] - np.conj(d21) * a[k + 2:, k])
                else:
                    d21 = a[k + 1, k]
                    d11 = a[k + 1, k + 1] / d21
                    d22 = a[k, k] / d21
                    t = 1 / (d11 * d22 - 1)
                    d21 = t / d21
                    wk = d21 * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
                    wkp1 = d21 * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
                a[k + 2:, k + 2:] -= np.tril(np.outer(a[k + 2:, k], conj(wk))
                                             + np.outer(a[k + 2:, k + 1], conj(wkp1)))
                a[k + 2:, k] = wk
                a[k + 2:, k + 1] = wkp1
        if herm:                        # her/the 2×2 update leave a real diagonal
            np.fill_diagonal(a, a.diagonal().real)
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv, info


def _sytrs(a, ipiv, b, hermitian):
    """LAPACK's sytrs (hetrs for a complex Hermitian factor) with uplo 'L': the solution of
    A X = B from sytf2's ``a`` and ``ipiv``; ``b`` (n, k) is overwritten."""
    n = a.shape[0]
    conj = np.conj if hermitian and a.dtype.kind == "c" else (lambda v: v)
    k = 0
    while k < n:                                    # L D Y = P B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            if k < n - 1:
                b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] /= a[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= np.outer(a[k + 2:, k], b[k])
                b[k + 2:] -= np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1 = a[k, k] / conj(akm1k)
            ak = a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1 = b[k] / conj(akm1k)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:                                   # Lᴴ Pᵀ X = Y (Lᵀ for a symmetric A)
        if ipiv[k] > 0:
            if k < n - 1:
                b[k] -= conj(a[k + 1:, k]) @ b[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                b[k] -= conj(a[k + 1:, k]) @ b[k + 1:]
                b[k - 1] -= conj(a[k + 1:, k - 1]) @ b[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


class _NoDerivative(Function):
    """An output torch gives no derivative: the value computed outside, a backward that
    raises torch's error naming the op."""

    @staticmethod
    def forward(ctx, a, value, op):
        ctx.op = op
        return value

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"derivative for aten::{ctx.op} is not implemented")


def _check_hermitian(fn, hermitian, A):
    if not isinstance(hermitian, bool):
        raise TypeError(f"{fn}(): argument 'hermitian' must be bool, not "
                        f"{type(hermitian).__name__}")


def ldl_factor_ex(input, *, hermitian=False, check_errors=False, out=None):
    """The LDLᵀ factorization of each symmetric matrix of ``A`` with Bunch-Kaufman pivoting
    (``torch.linalg.ldl_factor_ex``): the named tuple ``(LD, pivots, info)``.

    :math:`P A P^T = L D L^T`, L unit lower triangular, D block diagonal of 1×1 and 2×2
    blocks; only A's lower triangle is read.

    Args:
        input: A (*, n, n) floating or complex (complex symmetric by default).
        hermitian: a complex A is Hermitian, factored as :math:`P A P^T = L D L^H` (its
            diagonal's real parts read); for a real A it changes nothing.
        check_errors: raise where info != 0.

    Returns: LD (*, n, n) (L below the diagonal, D's blocks on and beside it, zeros above),
    pivots (*, n) int32 (LAPACK's: k + 1 where row k was swapped with row k; a 2×2 block's
    two entries −(p + 1)), info (*) int32: 0, or k + 1 where D's k-th diagonal is exactly 0.
    No gradient: a backward through LD raises, as torch's.

    Example:
        >>> LD, pivots, info = mg.linalg.ldl_factor_ex(A)
    """
    fn = "torch.linalg.ldl_factor_ex"
    A = check_matrices(fn, input)
    _check_hermitian("linalg_ldl_factor_ex", hermitian, A)
    if out is not None:
        raise TypeError("linalg.ldl_factor_ex: out= is not supported here")
    data = backend.to_numpy(A._array)
    batch, n = data.shape[:-2], data.shape[-1]
    count = math.prod(batch)            # (not -1: a reshape cannot infer it from 0 elements)
    factors = np.array(data, copy=True).reshape((count, n, n))
    pivots = np.zeros((factors.shape[0], n), np.int32)
    infos = np.zeros(factors.shape[0], np.int32)
    for i, matrix in enumerate(factors):
        pivots[i], infos[i] = _sytf2(matrix, hermitian)
        factors[i] = np.tril(matrix)
    infos = infos.reshape(batch)
    if check_errors:
        raise_failed(fn, infos, lambda k: f"The factorization could not be completed because "
                     f"the input is not invertible: D's diagonal element {k} is zero.")
    xp = A.xp
    LD = xp.asarray(factors.reshape(data.shape))
    LD = _NoDerivative.apply(A, value=LD, op="linalg_ldl_factor_ex") if A.requires_grad \
        else _constant(LD)
    return return_types.linalg_ldl_factor_ex(LD, _constant(xp.asarray(pivots.reshape(
        batch + (n,)))), _constant(xp.asarray(infos)))


def ldl_factor(input, *, hermitian=False, out=None):
    """``ldl_factor_ex`` without ``info``, raising where the factorization meets an exactly
    zero pivot (``torch.linalg.ldl_factor``): the named tuple ``(LD, pivots)``.

    Example:
        >>> LD, pivots = mg.linalg.ldl_factor(A)
        >>> x = mg.linalg.ldl_solve(LD, pivots, b)
    """
    LD, pivots, info = ldl_factor_ex(input, hermitian=hermitian, out=out)
    raise_failed("torch.linalg.ldl_factor", info._array, lambda k: f"The factorization could "
                 f"not be completed because the input is not invertible: D's diagonal element "
                 f"{k} is zero.")
    return return_types.linalg_ldl_factor(LD, pivots)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """The solution X of A X = B from ``ldl_factor``'s ``LD`` and ``pivots``
    (``torch.linalg.ldl_solve``), LAPACK's sytrs (hetrs with ``hermitian``, as the
    factorization was).

    Args:
        LD: (*, n, n). pivots: (*, n) int32. B: (*, n, k) of LD's dtype; the batch dims
            broadcast.

    Shape: X as B's broadcast shape. No gradient: a backward through it raises, as torch's.

    Example:
        >>> x = mg.linalg.ldl_solve(*mg.linalg.ldl_factor(A), b)
    """
    fn = "torch.linalg.ldl_solve"
    check_matrices(fn, LD, name="LD")
    check_tensor(fn, pivots)
    check_tensor(fn, B)
    _check_hermitian("linalg_ldl_solve", hermitian, LD)
    if out is not None:
        raise TypeError("linalg.ldl_solve: out= is not supported here")
    if B.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):          # a 0-d one too, as torch's
        raise RuntimeError(f"{fn}: Expected LD.shape[:-1] and pivots.shape to be the same "
                           f"({list(LD.shape[:-1])}), got pivots of shape {list(pivots.shape)}")
    if pivots.dtype != np.int32:
        raise RuntimeError(f"{fn}: Expected pivots to be integers. Got {pivots.dtype}")
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype} and A of type {LD.dtype} instead.")
    n = LD.shape[-1]
    if B.shape[-2] != n or pivots.shape[-1] != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation AX = B "
                           f"({LD.shape[-2]}x{n} and {B.shape[-2]}x{B.shape[-1]}), pivots "
                           f"{tuple(pivots.shape)}")
    batch = np.broadcast_shapes(LD.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    count = math.prod(batch)            # (not -1: a reshape cannot infer it from 0 elements)
    a = np.broadcast_to(backend.to_numpy(LD._array), batch + (n, n)).reshape((count, n, n))
    p = np.broadcast_to(backend.to_numpy(pivots._array), batch + (n,)).reshape((count, n))
    b = np.array(np.broadcast_to(backend.to_numpy(B._array), batch + B.shape[-2:]))
    flat = b.reshape((count,) + B.shape[-2:])
    for i in range(flat.shape[0]):
        _sytrs(a[i], p[i], flat[i], hermitian)
    value = LD.xp.asarray(flat.reshape(b.shape))
    if LD.requires_grad or B.requires_grad:
        return _NoDerivative.apply(B if B.requires_grad else LD, value=value,
                                   op="linalg_ldl_solve")
    return _constant(value)
