"""``torch.linalg``'s functions over reshaped tensors and powers: ``vander`` (the powers of
a vector, as torch's cumulative product; ``torch.vander`` too), ``tensorinv`` and
``tensorsolve`` (a tensor read as a square matrix, then ``linalg.inv`` or ``linalg.solve``),
``householder_product`` (the reflections' product, one rank-one update each; ``ormqr``
multiplies by it): compositions, so each gradient is the composition's; ``eig``,
``eigvals``, one node each with torch's closed-form gradient; ``geqrf``, LAPACK's packed
QR, without a gradient as torch's. ``METHODS`` names the functions ``ops/methods.py`` binds
as ``Tensor`` methods (``orgqr`` is ``householder_product``, torch's other name for it)."""

import math

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from . import shape as shape_ops
from .base import OutOfRangeError, check_tensor, constant
from . import return_types
from .decompositions import _unused, check_eigenvector_phases, inverse, lapack
from .pointwise import cumprod
from .solves import check_kernel, check_matrices, mH, solved

METHODS = ("geqrf", "orgqr", "ormqr")


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
    N = x.shape[-1] if N is None else dtypes.int_argument("linalg.vander", "N", N)
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _powers(x.long() if x.dtype.kind in "iu" else x, N)


def _powers(x, N):
    # x ** j for j < N along a new last dim: ones beside the cumulative product of x
    column = x.unsqueeze(-1)
    ones = constant(x.xp.ones(column.shape, x.dtype))
    if N <= 1:
        return ones[..., :N]
    powers = cumprod(column.expand(*x.shape, N - 1), -1)
    return shape_ops.concatenate([ones, powers], dim=-1)


def torch_vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D ``x`` (``torch.vander``): its columns the powers
    x^(N-1), ..., x, 1 (x^0 first with ``increasing``), N = len(x) by default; an
    integer or bool x gives int64. Built as ``linalg.vander``, so its gradient is the
    cumulative product's.

    Args:
        x: (n,), floating, complex, integer or bool.
        N: the number of columns, >= 0; n by default.
        increasing: the powers increasing from x^0, as ``linalg.vander``'s.

    Shape: (n,) -> (n, N).

    Example:
        >>> mg.vander(mg.tensor([1.0, 2.0, 3.0]))       # [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    check_tensor("vander", x)
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    powers = _powers(x.long() if x.dtype.kind in "biu" else x, N)
    return powers if increasing else shape_ops.flip(powers, (-1,))


def _as_square(split, A, rows, rest):
    # torch's check that the leading and trailing dims hold as many elements
    if math.prod(rest) != math.prod(rows):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[{split}:"
                           f"]) == prod(self.shape[:{split}]), but got {math.prod(rest)} != "
                           f"{math.prod(rows)}")
    return A.reshape(math.prod(rows), math.prod(rest))


def tensorinv(input, ind=2):
    """The inverse of ``input`` read as a matrix, its first ``ind`` dims the rows and the
    rest the columns (``torch.linalg.tensorinv``): ``tensordot(tensorinv(A, ind), A, ind)``
    (A the input) is the identity of ``A.shape[ind:]``; the dims of each side must hold as
    many elements.

    Shape: input (*rows, *cols) -> (*cols, *rows).

    Example:
        >>> A = mg.eye(6).reshape(6, 2, 3)
        >>> mg.linalg.tensorinv(A, ind=1).shape                          # (2, 3, 6)
    """
    check_tensor("linalg.tensorinv", input)
    if (ind := dtypes.int_argument("linalg.tensorinv", "ind", ind)) <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, rest = input.shape[:ind], input.shape[ind:]
    return inverse(_as_square("ind", input, rows, rest)).reshape(*rest, *rows)


def tensorsolve(input, other, dims=None):
    """X with ``tensordot(A, X, X.ndim) == B``, A ``input`` and B ``other``
    (``torch.linalg.tensorsolve``): A read as a matrix whose rows are B's elements and
    whose columns are the rest of A's dims, then ``linalg.solve``; ``dims`` (a tuple) moves
    those dims of A to the end first.

    Shape: A (*B.shape, *x_shape), B -> x_shape.

    Example:
        >>> A = mg.eye(6).reshape(2, 3, 6)
        >>> mg.linalg.tensorsolve(A, mg.ones(2, 3)).shape                # (6,)
    """
    check_tensor("linalg.tensorsolve", input)
    check_tensor("linalg.tensorsolve", other)
    if dims is not None:
        dims = [d % input.ndim for d in dims]
        input = input.permute(*[d for d in range(input.ndim) if d not in dims], *dims)
    rows, rest = input.shape[:other.ndim], input.shape[other.ndim:]
    matrix = _as_square("other.ndim", input, rows, rest)
    return solved("linalg.tensorsolve", matrix, other.reshape(-1), True, True)[0].reshape(rest)


def householder_product(input, tau):
    """The first n columns of the product of the Householder reflections H_1 ⋯ H_k
    (``torch.linalg.householder_product``, LAPACK's orgqr), H_i = I - τ_i v_i v_iᴴ with v_i
    column i of ``input`` below the diagonal and 1 on it: the Q of ``geqrf``'s output. A loop of k
    rank-one updates, so the gradient is theirs.

    Shape: input (..., m, n) with m >= n, tau (..., k) with k <= n -> (..., m, n).

    Example:
        >>> mg.linalg.householder_product(mg.zeros(3, 2), mg.zeros(2))      # eye(3)[:, :2]
    """
    fn = "torch.linalg.householder_product"
    check_tensor(fn, input)
    check_tensor(fn, tau)
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    m, n = input.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim == 0:                   # torch reads its size(-1) first: an IndexError
        raise OutOfRangeError(f"{fn}: Expected tau of one dim less than input, with at least "
                              f"one, got a 0-d tensor (input of shape {tuple(input.shape)})")
    if tau.ndim != input.ndim - 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {input.ndim}")
    if tau.shape[-1] > n:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    eye = constant(input.xp.eye(m, dtype=input.dtype))
    vectors = input.tril(-1) + eye[:, :n]
    # I plus an empty product of A's and tau's columns: 0, but in the graph of both, so
    # that with no reflection (k = 0) the result requires grad as torch's
    none = vectors[..., :, :0] * tau[..., :0].unsqueeze(-2)
    q = eye.expand(*input.shape[:-2], m, m) + none @ vectors[..., :, :0].mH
    for i in range(tau.shape[-1]):
        v = vectors[..., :, i:i + 1]
        q = q - (q @ v) * tau[..., i:i + 1].unsqueeze(-1) @ v.mH
    return q[..., :, :n]


def orgqr(input, input2):
    """``torch.orgqr``, ``x.orgqr(tau)``: ``householder_product`` under torch's names of the
    arguments, ``input`` (the reflectors) and ``input2`` (their scales τ)."""
    return householder_product(input, input2)


def _eig(fn, a):
    # LAPACK geev's (values, vectors), both complex (NumPy's are real for a real A with
    # real eigenvalues); each vector of unit norm, its largest component real, as torch's
    xp = backend.array_module(a)
    if not bool(xp.isfinite(a).all()):
        raise RuntimeError(f"torch.{fn}: input tensor should not contain infs or NaNs.")
    values, vectors = lapack(fn, xp.linalg.eig, a)
    complex_dtype = dtypes.complex_of(a.dtype)
    return values.astype(complex_dtype, copy=False), vectors.astype(complex_dtype, copy=False)


def eig_grad(values, v, grad_values, grad_vectors, real):
    r"""The gradient of A = V diag(λ) V⁻¹ (torch's ``linalg_eig_backward``), the vectors of
    unit norm: with E_ij = λ_j - λ_i (1 on the diagonal) and the vectors' part
    M = (VᴴG_V - VᴴV diag(Re diag(VᴴG_V))) / Ē off the diagonal,
    :math:`g_A = V^{-H} (M + \operatorname{diag}(g_\lambda)) V^H`, its real part for a real
    A; ``grad_vectors`` None when only the values reach the loss (then ``values`` is not
    read)."""
    xp = backend.array_module(v)
    eye = xp.eye(v.shape[-1], dtype=v.dtype)
    inner = grad_values[..., :, None] * eye                     # diag(g_λ), (..., n, n)
    if grad_vectors is not None:
        vhgv = mH(v) @ grad_vectors
        check_eigenvector_phases(vhgv, "linalg_eig_backward")
        vectors_part = vhgv - mH(v) @ (v * xp.diagonal(vhgv, 0, -2, -1).real[..., None, :])
        gaps = (values[..., None, :] - values[..., :, None]).conj() + eye     # Ē_ij
        with backend.silent_floats():                # a repeated eigenvalue: inf, as torch's
            inner = inner + vectors_part / gaps * (1 - eye)
    grad_a = xp.linalg.solve(mH(v), inner @ mH(v))
    return grad_a.real if real else grad_a


class Eig(Function):
    """(eigenvalues, eigenvectors) of a general square A, complex, LAPACK geev's order and
    unit-norm vectors (``torch.linalg.eig``); the gradient ``eig_grad``."""

    @staticmethod
    def forward(ctx, a):
        values, vectors = _eig("linalg.eig", a)
        ctx.save_for_backward(values, vectors)
        ctx.real = a.dtype.kind != "c"
        return values, vectors

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        values, v = ctx.saved
        return eig_grad(values, v, grad_values, None if _unused(grad_vectors) else grad_vectors,
                        ctx.real)


class Eigvals(Function):
    """The eigenvalues of a general square A (complex), LAPACK geev's order. With
    A = V diag(λ) V⁻¹, dλ = diag(V⁻¹ dA V); the adjoint (``eig_grad`` without the vectors'
    gradient): g_A = V⁻ᴴ diag(g_λ) Vᴴ, its real part for a real A."""

    @staticmethod
    def forward(ctx, a):
        values, vectors = _eig("linalg.eigvals", a)
        ctx.save_for_backward(vectors)              # the values' gradient needs only V
        ctx.real = a.dtype.kind != "c"
        return values

    @staticmethod
    def backward(ctx, grad):
        (v,) = ctx.saved
        return eig_grad(None, v, grad, None, ctx.real)


def eig(input):
    r"""The eigenvalues and eigenvectors of each square matrix A of
    ``input`` (``torch.linalg.eig``): :math:`A V = V \operatorname{diag}(\lambda)`, both complex, in
    LAPACK's order, each eigenvector of unit norm (its phase LAPACK's: a loss must not
    depend on it, and one that does is refused in backward, as torch's). One ``Eig`` node;
    a repeated eigenvalue gives an inf or NaN gradient when the vectors reach the loss.

    Args:
        input: (..., n, n), floating or complex, finite.

    Shape: (..., n, n) -> eigenvalues (..., n), eigenvectors (..., n, n); complex64 for
    float32, complex128 for float64.

    Example:
        >>> w, V = mg.linalg.eig(mg.tensor([[2.0, 1.0], [0.0, 3.0]]))    # w = [2, 3]
    """
    input = check_matrices("linalg.eig", input, kernel="linalg_eig_out_cpu")
    return return_types.linalg_eig(*Eig.apply(input))


def eigvals(input):
    """The eigenvalues of each square matrix of ``input`` (``torch.linalg.eigvals``), complex,
    in LAPACK's order (as torch's); one ``Eigvals`` node, gradient V⁻ᴴ diag(g) Vᴴ (real
    for a real A). A repeated eigenvalue with too few eigenvectors has no gradient: inf or
    NaN, as torch's.

    Shape: (..., n, n) -> (..., n), complex64 for float32, complex128 for float64.

    Example:
        >>> mg.linalg.eigvals(mg.tensor([[0.0, -1.0], [1.0, 0.0]]))     # [0.+1.j, 0.-1.j]
    """
    return Eigvals.apply(check_matrices("linalg.eigvals", input, kernel="linalg_eig_out_cpu"))


class Geqrf(Function):
    """LAPACK geqrf's QR of each matrix, packed (``torch.geqrf``): R on and above the
    diagonal, the Householder vectors below it, their scales tau. No gradient, as torch's."""

    @staticmethod
    def forward(ctx, a):
        packed, tau = lapack("torch.geqrf", backend.array_module(a).linalg.qr, a, mode="raw")
        return packed.swapaxes(-1, -2).copy(), tau       # NumPy's raw QR is transposed

    @staticmethod
    def backward(ctx, grad_packed, grad_tau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def geqrf(input):
    """The QR decomposition of each matrix of ``input`` as LAPACK's geqrf packs it
    (``torch.geqrf``): ``a`` holds R on and above the diagonal and the Householder vectors
    below it, ``tau`` their scales; ``householder_product(a, tau)`` is Q. A backward through
    it raises NotImplementedError, as torch's.

    Args:
        input: (..., m, n), floating or complex.

    Shape: (..., m, n) -> a (..., m, n), tau (..., min(m, n)).

    Example:
        >>> A = mg.randn(4, 3, dtype=mg.float64)
        >>> a, tau = mg.geqrf(A); Q = mg.linalg.householder_product(a, tau)   # A = Q R
    """
    fn = "torch.geqrf"
    check_tensor(fn, input)
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    check_kernel("geqrf_cpu", input)
    if input.requires_grad and input.dtype.kind == "c" and is_grad_enabled():
        raise RuntimeError("geqrf does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return return_types.geqrf(*Geqrf.apply(input))


def ormqr(input, input2, input3, left=True, transpose=False):
    """``input3`` multiplied by the Q of ``geqrf``'s (input, input2) (``torch.ormqr``):
    Q·input3 (``left``) or input3·Q, Qᴴ with ``transpose``; Q is the full m×m product of the
    reflections (``householder_product`` of input widened with zero columns), so the
    gradient is the composition's.

    Args:
        input, input2: ``geqrf``'s result and tau (which may hold fewer reflections).
        input3: the matrices multiplied, of input's dtype.
        left: Q on the left of ``input3`` (else on its right).
        transpose: Qᴴ in place of Q.

    Shape: input (..., m, k), input2 (..., min(m, k)), input3 (..., m, n) (left) or (..., n, m).

    Example:
        >>> A, B = mg.randn(4, 3, dtype=mg.float64), mg.randn(4, 2, dtype=mg.float64)
        >>> a, tau = mg.geqrf(A); mg.ormqr(a, tau, B)          # Q @ B
    """
    fn = "torch.ormqr"
    for t in (input, input2, input3):
        check_tensor(fn, t)
    if input.ndim < 2 or input3.ndim < 2:
        raise RuntimeError(f"{fn}: input and other must have at least 2 dimensions.")
    m = input.shape[-2]
    if input3.shape[-2 if left else -1] != m:
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"{fn}: {which} must be equal to input.shape[-2]")
    if input2.shape[-1] > min(m, input.shape[-1]):
        raise RuntimeError(f"{fn}: tau.shape[-1] must be less than or equal to "
                           "min(input.shape[-2], input.shape[-1])")
    if input3.ndim != input.ndim:                      # no broadcasting, as torch's
        raise RuntimeError(f"{fn}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {input3.ndim} and input.ndim "
                           f"is equal to {input.ndim}")
    if tuple(input3.shape[:-2]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of other to be equal to "
                           f"input.shape[:-2], but got {list(input3.shape[:-2])}")
    for name, t in (("tau", input2), ("other", input3)):
        if t.dtype != input.dtype:
            raise RuntimeError(f"{fn}: Expected input and {name} to have the same dtype, but "
                               f"input has dtype {dtypes.torch_name(input.dtype)} and {name} "
                               f"has dtype {dtypes.torch_name(t.dtype)}")
    width = m - input.shape[-1]
    square = input[..., :, :m] if width <= 0 else shape_ops.concatenate(
        [input, constant(input.xp.zeros(input.shape[:-1] + (width,), input.dtype))], dim=-1)
    q = householder_product(square, input2)                                    # (..., m, m)
    q = q.mH if transpose else q
    return q @ input3 if left else input3 @ q
