"""``torch.svd_lowrank`` and ``torch.pca_lowrank``: the randomized SVD of Halko, Martinsson
and Tropp (2009, Algorithms 4.4 and 5.1) in torch's steps, composed of ``matmul``,
``linalg.qr`` and ``linalg.svd``, so the gradients are those nodes'. The random matrix is
``mg.randn(n, q)`` from the default generator, torch's draw, so one seed gives torch's
S and U diag(S) Vᴴ (the singular vectors' signs are those of ``linalg.svd``, which LAPACK
builds may choose differently)."""

import numbers

from . import linalg
from .factories import randn
from .tensor import Tensor

__all__ = ["pca_lowrank", "svd_lowrank"]


def _floating(A):
    # torch's get_floating_dtype: half, float and double kept; anything else float32
    return A.dtype if A.dtype.kind == "f" and A.dtype.itemsize in (2, 4, 8) and \
        str(A.dtype) != "bfloat16" else None


def _approximate_basis(A, q, niter, M):
    dtype = A.dtype if A.dtype.kind == "c" else (_floating(A) or "float32")
    R = randn(A.shape[-1], q, dtype=dtype)
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q
        if M is not None:
            X = X - M.mH @ Q
        Q = linalg.qr(X).Q
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = linalg.qr(X).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def _check(fn, A):
    if not isinstance(A, Tensor):
        raise TypeError(f"{fn}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise ValueError(f"{fn}: A must have at least 2 dimensions, got shape {A.shape}")


def svd_lowrank(A, q=6, niter=2, M=None):
    r"""An approximate SVD of rank ``q`` (``torch.svd_lowrank``): :math:`A - M \approx U
    \operatorname{diag}(S) V^H`, by a random basis of A's range refined by ``niter`` power
    iterations, then the SVD of A projected on it.

    Args:
        A: (*, m, n). q: the rank sought (a slight overestimate of the true rank works best).
        niter: the subspace iterations (2 by default). M: (*, 1, n) or A's shape, or None:
            subtracted from A (``pca_lowrank`` passes the column means).

    Returns: ``(U, S, V)``: U (*, m, q), S (*, q), V (*, n, q).

    The draw is ``mg.randn(n, q)`` from the default generator (of A's min(m, n) side: n
    for a tall A, m for a wide one), torch's.

    Example:
        >>> U, S, V = mg.svd_lowrank(A, q=4)
    """
    _check("svd_lowrank", A)
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    r"""Principal component analysis by ``svd_lowrank`` (``torch.pca_lowrank``): the
    SVD of A with its column means removed (``center``), rank ``q``.

    Args:
        A: (*, m, n), the rows the observations. q: the rank, min(6, m, n) by default, at
            most min(m, n). center: subtract each column's mean first. niter: power
            iterations.

    Returns: ``(U, S, V)``; the principal directions are V's columns, the projections
    ``A @ V[..., :k]``.

    Example:
        >>> U, S, V = mg.pca_lowrank(data, q=3)
    """
    _check("pca_lowrank", A)
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (isinstance(q, numbers.Integral) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
