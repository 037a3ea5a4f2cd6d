"""``torch.linalg``'s functions over reshaped tensors and powers: ``vander`` (the powers of
a vector, as torch's cumulative product), ``tensorinv`` and ``tensorsolve`` (a tensor read
as a square matrix, then ``linalg.inv`` or ``linalg.solve``), ``householder_product`` (the
reflections' product, one rank-one update each): compositions, so each gradient is the
composition's; and ``eigvals``, one node with torch's closed-form gradient."""

import math

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from . import shape as shape_ops
from .base import check_tensor, constant
from .decompositions import inverse, lapack
from .pointwise import cumprod
from .solves import check_matrices, mH, solved


def vander(x, *, N=None):
    """The Vandermonde matrix of the last dim of ``x`` (``torch.linalg.vander``):
    ``out[..., i, j] = x[..., i] ** j`` for j < N, the powers increasing (NumPy's
    ``vander(x, N, increasing=True)``); built as torch's, a column of ones beside the
    cumulative product of x repeated, so its gradient is the product's.

    Args:
        x: (..., n), floating, complex or integer (an integer one gives int64).
        N: the number of columns, > 1; n by default.

    Shape: (..., n) -> (..., n, N); a 0-d x is (1,).

    Example:
        >>> mg.linalg.vander(mg.tensor([1.0, 2.0, 3.0]))   # [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    """
    check_tensor("linalg.vander", x)
    if x.dtype == np.bool_:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    x = x.reshape(1) if x.ndim == 0 else x               # a 0-d x: one element, as torch's
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dtype.kind in "iu":
        x = x.long()
    column = x.unsqueeze(-1)
    ones = constant(x.xp.ones(column.shape, x.dtype))
    powers = cumprod(column.expand(*x.shape, N - 1), -1)
    return shape_ops.concatenate([ones, powers], dim=-1)


def _as_square(split, A, rows, rest):
    # torch's check that the leading and trailing dims hold as many elements
    if math.prod(rest) != math.prod(rows):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[{split}:"
                           f"]) == prod(self.shape[:{split}]), but got {math.prod(rest)} != "
                           f"{math.prod(rows)}")
    return A.reshape(math.prod(rows), math.prod(rest))


def tensorinv(A, ind=2):
    """The inverse of ``A`` read as a matrix, its first ``ind`` dims the rows and the rest
    the columns (``torch.linalg.tensorinv``): ``tensordot(tensorinv(A, ind), A, ind)`` is
    the identity of ``A.shape[ind:]``; the dims of each side must hold as many elements.

    Shape: A (*rows, *cols) -> (*cols, *rows).

    Example:
        >>> A = mg.eye(6).reshape(6, 2, 3)
        >>> mg.linalg.tensorinv(A, ind=1).shape                          # (2, 3, 6)
    """
    check_tensor("linalg.tensorinv", A)
    if not isinstance(ind, int) or isinstance(ind, bool) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, rest = A.shape[:ind], A.shape[ind:]
    return inverse(_as_square("ind", A, rows, rest)).reshape(*rest, *rows)


def tensorsolve(A, B, dims=None):
    """X with ``tensordot(A, X, X.ndim) == B`` (``torch.linalg.tensorsolve``): A read as a
    matrix whose rows are B's elements and whose columns are the rest of A's dims, then
    ``linalg.solve``; ``dims`` (a tuple) moves those dims of A to the end first.

    Shape: A (*B.shape, *x_shape), B -> x_shape.

    Example:
        >>> A = mg.eye(6).reshape(2, 3, 6)
        >>> mg.linalg.tensorsolve(A, mg.ones(2, 3)).shape                # (6,)
    """
    check_tensor("linalg.tensorsolve", A)
    check_tensor("linalg.tensorsolve", B)
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in dims], *dims)
    rows, rest = A.shape[:B.ndim], A.shape[B.ndim:]
    matrix = _as_square("other.ndim", A, rows, rest)
    return solved("linalg.tensorsolve", matrix, B.reshape(-1), True, True)[0].reshape(rest)


def householder_product(A, tau):
    """The first n columns of the product of the Householder reflections H_1 ⋯ H_k
    (``torch.linalg.householder_product``, LAPACK's orgqr), H_i = I - τ_i v_i v_iᴴ with v_i
    column i of A below the diagonal and 1 on it: the Q of ``geqrf``'s output. A loop of k
    rank-one updates, so the gradient is theirs.

    Shape: A (..., m, n) with m >= n, tau (..., k) with k <= n -> (..., m, n).

    Example:
        >>> mg.linalg.householder_product(mg.zeros(3, 2), mg.zeros(2))      # eye(3)[:, :2]
    """
    fn = "torch.linalg.householder_product"
    check_tensor(fn, A)
    check_tensor(fn, tau)
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {A.ndim}")
    if tau.shape[-1] > n:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    eye = constant(A.xp.eye(m, dtype=A.dtype))
    vectors = A.tril(-1) + eye[:, :n]
    # I plus an empty product of A's and tau's columns: 0, but in the graph of both, so
    # that with no reflection (k = 0) the result requires grad as torch's
    none = vectors[..., :, :0] * tau[..., :0].unsqueeze(-2)
    q = eye.expand(*A.shape[:-2], m, m) + none @ vectors[..., :, :0].mH
    for i in range(tau.shape[-1]):
        v = vectors[..., :, i:i + 1]
        q = q - (q @ v) * tau[..., i:i + 1].unsqueeze(-1) @ v.mH
    return q[..., :, :n]


class Eigvals(Function):
    """The eigenvalues of a general square A (complex), LAPACK geev's order. With
    A = V diag(λ) V⁻¹, dλ = diag(V⁻¹ dA V); the adjoint (torch's ``linalg_eig_backward``
    without the vectors' gradient): g_A = V⁻ᴴ diag(g_λ) Vᴴ, its real part for a real A."""

    @staticmethod
    def forward(ctx, a):
        xp = backend.array_module(a)
        values, vectors = lapack("linalg.eigvals", xp.linalg.eig, a)
        ctx.save_for_backward(vectors)
        ctx.real = a.dtype.kind != "c"
        return values.astype(dtypes.complex_of(a.dtype), copy=False)

    @staticmethod
    def backward(ctx, grad):
        (v,) = ctx.saved
        xp = backend.array_module(v)
        diag = grad[..., :, None] * xp.eye(grad.shape[-1], dtype=grad.dtype)
        grad_a = xp.linalg.solve(mH(v), diag @ mH(v))
        return grad_a.real if ctx.real else grad_a


def eigvals(A):
    """The eigenvalues of each square matrix of ``A`` (``torch.linalg.eigvals``), complex,
    in LAPACK's order (as torch's); one ``Eigvals`` node, gradient V⁻ᴴ diag(g) Vᴴ (real
    for a real A). A repeated eigenvalue with too few eigenvectors has no gradient: inf or
    NaN, as torch's.

    Shape: (..., n, n) -> (..., n), complex64 for float32, complex128 for float64.

    Example:
        >>> mg.linalg.eigvals(mg.tensor([[0.0, -1.0], [1.0, 0.0]]))     # [0.+1.j, 0.-1.j]
    """
    return Eigvals.apply(check_matrices("linalg.eigvals", A))
