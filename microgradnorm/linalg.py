"""``torch.linalg`` as ``mg.linalg``: norms, inverses and solves, the decompositions
(Cholesky, QR, eigh, eig, SVD), the pseudoinverse, least squares, ranks and condition numbers,
matrix powers and products, with torch's signatures, results (its named tuples, in
``mg.return_types``), errors and gradients.

Each decomposition is one node of ``ops/decompositions.py`` (the LU of
``ops/factorizations.py``, with its solve), each inverse, determinant and solve one node of
``ops/solves.py``, with torch's closed-form backward; the rest are
compositions of those and of the primitives (``PNorm`` for the vector norms, ``matmul``,
``amax``), so their gradients are the compositions', as torch's are. Inputs are batches of
matrices (..., m, n), float32, float64, complex64 or complex128 (integer and half precision
inputs are refused with torch's error classes; half precision ``matrix_exp``, which torch
computes, is refused here too).

Example:
    >>> A = mg.randn(3, 3, dtype=mg.float64)
    >>> x = mg.linalg.solve(A @ A.mT + mg.eye(3), mg.ones(3, dtype=mg.float64))
    >>> mg.linalg.matrix_norm(A, "nuc"), mg.linalg.eigh(A + A.mT).eigenvalues
"""

import math
import numbers
import warnings

import numpy as np

from . import dtypes
from .ops import decompositions as _dec
from .ops import products, reductions, return_types
from .ops.arrange import diagonal as _diagonal
from .ops.base import broadcast_shape, check_tensor, constant, normalize_axis
from .ops.decompositions import (QR, SVD, Cholesky, Eigh, EigvalsH, Inverse, Pinv, SVDVals,
                                 check_lapack_input, check_matrices, eigh_input, matrix_exp,
                                 matrix_power, numerical_rank, singular_arrays, tolerances,
                                 torch_name)
from .ops.factorizations import linalg_lu as lu, linalg_lu_solve as lu_solve
from .ops.factorizations import lu_factor, lu_factor_ex
from .ops.linalg import matmul
from .ops.pointwise import nan_to_num
from .ops.shape import permute
from .ops.solves import (LinAlgError, SolveTriangular, check_dtype, check_kernel,
                         solve_operands, solved)
from .ops.tensor_algebra import eig, eigvals, householder_product, tensorinv, tensorsolve, vander
from .ops.ldl import ldl_factor, ldl_factor_ex, ldl_solve
from .ops.vector_norm import norm_dtype, norm_order

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh",
           "eigvalsh", "inv", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_norm",
           "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
           "solve_ex", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm"]
__all__ += ["eig", "eigvals", "householder_product", "tensorinv", "tensorsolve", "vander"]
__all__ += ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

INF = float("inf")
MATRIX_ORDERS = ("fro", "nuc", 1, -1, 2, -2, INF, -INF)
LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


# ----- norms ----------------------------------------------------------------------------------
def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    r""":math:`\lVert x \rVert_p = (\sum |x_i|^p)^{1/p}` over ``dim`` (None or (): every
    element), as ``torch.linalg.vector_norm``: one ``PNorm`` node (``mg.norm``'s), whose
    gradient is torch's (0 at a zero element or a zero norm).

    Args:
        input: a floating or complex tensor (half precision computes in float32).
        ord: a number: 0 counts the nonzero elements, ``inf``/``-inf`` take max/min |x|.
        dim: an int, a tuple of ints, or None.
        keepdim: keep the reduced dims as size 1.
        dtype: compute in this dtype (a widening cast of input, as torch's).

    Shape: input's without ``dim`` (size 1 there with ``keepdim``); its real dtype.

    Example:
        >>> mg.linalg.vector_norm(mg.tensor([3.0, 4.0]))                    # tensor(5.)
    """
    fn = "linalg.vector_norm"
    check_tensor(fn, input)
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' must be Number, not str")
    check_dtype(fn, input, half=True)
    input = norm_dtype(fn, input, dtype)
    p = norm_order(fn, int(ord) if isinstance(ord, bool) else ord)      # torch's True is 1
    axes = normalize_axis(fn, dim, input.ndim, reduce=True)
    axes = range(input.ndim) if axes is None else axes
    if (p < 0 or p == INF) and any(input.shape[d] == 0 for d in axes):
        raise RuntimeError(f"{fn} cannot compute the {ord} norm on an empty tensor because "
                           "the operation does not have an identity")
    return reductions.norm(input, p, dim, keepdim)


def _matrix_dims(fn, A, dim):
    # the two dims of matrix_norm's dim, normalized; torch's errors
    if isinstance(dim, numbers.Integral) or len(dim) != 2:
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {dim}")
    first, second = (normalize_axis(fn, d, A.ndim, single=True) for d in dim)
    if first == second:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return first, second


def _is_order(ord):
    # one of MATRIX_ORDERS (True is 1, as torch takes it)
    if isinstance(ord, str):
        return ord in ("fro", "nuc")
    return isinstance(ord, numbers.Real) and float(ord) in MATRIX_ORDERS


def _singular_values_along(A, dims):
    # the singular values of the matrices of dims (d0, d1): those dims moved last, (..., k)
    rest = [d for d in range(A.ndim) if d not in dims]
    moved = A if tuple(dims) == (A.ndim - 2, A.ndim - 1) else permute(A, rest + list(dims))
    return svdvals(moved)


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    r"""The matrix norm of each matrix of dims ``dim`` (``torch.linalg.matrix_norm``):
    "fro" :math:`\sqrt{\sum |a_{ij}|^2}`, "nuc" :math:`\sum \sigma_i`, 2 / -2 the largest /
    smallest singular value, 1 / -1 the largest / smallest column sum of |a|, inf / -inf the
    largest / smallest row sum. Compositions of ``vector_norm``, ``svdvals``, ``sum`` and
    ``amax``/``amin`` (ties share the gradient), as torch's.

    Args:
        input: (..., m, n) floating or complex (half precision: "fro", ±1, ±inf only).
        ord: one of "fro", "nuc", 1, -1, 2, -2, inf, -inf.
        dim: the two dims of the matrices.
        keepdim: keep those dims as size 1.
        dtype: compute in this dtype (a widening cast, as torch's).

    Shape: input's without ``dim``; its real dtype.

    Example:
        >>> mg.linalg.matrix_norm(mg.eye(3), "nuc")                          # tensor(3.)
    """
    fn = "linalg.matrix_norm"
    check_tensor(fn, input)
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    check_dtype(fn, input, half=True)
    dims = _matrix_dims(fn, input, dim)
    if ord is None:                          # torch's argument parser refuses it
        raise TypeError(f"{fn}: ord must be a number or a string, not None")
    if not _is_order(ord):
        raise RuntimeError(f"{fn}: Order {ord} not supported.")
    if ord in ("nuc", 2, -2):              # through the SVD: no half precision, even empty
        check_dtype(fn, input)
    input = norm_dtype(fn, input, dtype)
    if ord == "fro":
        return vector_norm(input, 2, dims, keepdim)
    if input.size == 0 and ord != "nuc" and ord > 0:        # torch's 0 for an empty matrix
        return reductions.sum(input.abs(), dims, keepdim)
    if ord in ("nuc", 2, -2):
        s = _singular_values_along(input, dims)
        out = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            out = out.reshape(tuple(1 if d in dims else n for d, n in enumerate(input.shape)))
        return out
    rows, columns = dims if abs(ord) == 1 else dims[::-1]      # inf: 1 of the transpose
    sums = vector_norm(input, 1, rows, keepdim)
    if not keepdim and rows < columns:
        columns -= 1
    return sums.amax(columns, keepdim) if ord > 0 else sums.amin(columns, keepdim)


def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``torch.linalg.norm``: ``vector_norm`` over one dim (or every element when neither
    ``ord`` nor ``dim`` is given), ``matrix_norm`` over two (``dim`` of length 2, or a 2-D
    input with ``ord`` given); ``ord=None`` is 2 for vectors, "fro" for matrices.

    Args:
        input: a floating or complex tensor; 1-D or 2-D unless ``dim`` is given with ``ord``.
        ord: a number, or "fro" / "nuc" (matrices).
        dim: an int, or a tuple of one or two ints.
        keepdim: keep the reduced dims as size 1.
        dtype: compute in this dtype.

    Shape: input's without the reduced dims.

    Example:
        >>> mg.linalg.norm(mg.ones(2, 2), ord=2)                  # the spectral norm, 2
    """
    fn = "linalg.norm"
    check_tensor(fn, input)
    if dim is not None:
        dim = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"{fn}: If dim is specified, it must be of length 1 or 2. Got "
                               f"{list(dim)}")
    elif ord is not None and input.ndim not in (1, 2):
        raise RuntimeError(f"{fn}: If dim is not specified but ord is, the input must be 1D "
                           f"or 2D. Got {input.ndim}D.")
    if isinstance(ord, str) or ord is not None and (
            len(dim) == 2 if dim is not None else input.ndim == 2):
        return matrix_norm(input, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(input, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


# ----- inverses and solves --------------------------------------------------------------------
def inv(A):
    """A⁻¹ of each matrix (``torch.linalg.inv``): one ``Inverse`` node, gradient
    -A⁻ᴴ g A⁻ᴴ; a singular matrix raises ``LinAlgError`` naming its zero pivot.

    Shape: A (..., n, n) -> (..., n, n).

    Example:
        >>> mg.linalg.inv(mg.tensor([[2.0, 0.0], [0.0, 4.0]]))        # diag(0.5, 0.25)
    """
    return _dec.inverse(A)


def inv_ex(A, *, check_errors=False):
    """``inv_ex(inverse, info)``: A⁻¹ and LAPACK's info per matrix (int32: 0, or the
    1-based index of the zero pivot of a singular matrix, whose inverse then holds inf and
    NaN); ``check_errors=True`` raises as ``inv``.

    Shape: A (..., n, n) -> (..., n, n) and (...).

    Example:
        >>> mg.linalg.inv_ex(mg.ones(2, 2)).info                      # tensor(2, dtype=int32)
    """
    fn = "linalg.inv_ex"
    inverse, info = Inverse.apply(check_matrices(fn, A), fn=fn if check_errors else None)
    return return_types.linalg_inv_ex(inverse, constant(info._array))


def det(A):
    """``torch.linalg.det``: the determinant of each matrix, ``mg.det``'s (``Det``), under
    torch's name for the argument, ``A``.

    Shape: A (..., n, n) -> (...).

    Example:
        >>> mg.linalg.det(2 * mg.eye(2))                                      # tensor(4.)
    """
    return _dec.det(A)


def slogdet(A):
    """``linalg_slogdet(sign, logabsdet)`` of each matrix: sign ±1 (complex: of modulus 1;
    0 for a singular matrix) and log|det A|, gradient g·A⁻ᴴ (``SlogDet``).

    Shape: A (..., n, n) -> (...) each.

    Example:
        >>> mg.linalg.slogdet(-mg.eye(3)).sign                               # tensor(-1.)
    """
    return return_types.linalg_slogdet(*_dec.slogdet(A))


def solve(A, B, *, left=True):
    """X with AX = B (``left=False``: XA = B) for each matrix of A (``torch.linalg.solve``):
    one ``Solve`` node, gB = A⁻ᴴ g, gA = -gB Xᴴ; B a batch of vectors (..., n) (shape
    A.shape[:-1], or 1-D) or of matrices (..., n, k), the batch dims broadcast; a singular
    A raises ``LinAlgError``.

    Shape: A (..., n, n), B (..., n) or (..., n, k) -> B's (broadcast).

    Example:
        >>> mg.linalg.solve(2 * mg.eye(2), mg.ones(2))                # tensor([0.5, 0.5])
    """
    return solved("linalg.solve", A, B, left, True)[0]


def solve_ex(A, B, *, left=True, check_errors=False):
    """``linalg_solve_ex(result, info)``: ``solve`` and LAPACK's info per matrix (int32; a
    singular matrix gives inf and NaN in its result, raising only with ``check_errors``).

    Shape: as ``solve``; info A's batch dims.

    Example:
        >>> mg.linalg.solve_ex(mg.ones(2, 2), mg.ones(2)).info        # tensor(2, dtype=int32)
    """
    return return_types.linalg_solve_ex(*solved("linalg.solve_ex", A, B, left, check_errors))


def solve_triangular(input, B, *, upper, left=True, unitriangular=False):
    """X with AX = B (``left=False``: XA = B) for a triangular A, of which only the
    ``upper`` (or lower) triangle is read, its diagonal taken as ones with
    ``unitriangular`` (``torch.linalg.solve_triangular``): substitution, a zero on the
    diagonal giving inf and NaN as LAPACK's; the gradient of A stays on its triangle.

    Shape: input (..., n, n), B (..., n, k) (left) or (..., k, n) -> B's, batch dims broadcast;
    A's dtype (B is cast to it, as torch's: a complex B for a real A loses its imaginary
    part, with torch's UserWarning).

    Example:
        >>> mg.linalg.solve_triangular(mg.eye(2), mg.ones(2, 1), upper=True)
    """
    fn = "linalg.solve_triangular"
    check_matrices(fn, input, dtype=False)
    check_kernel("triangular_solve_cpu", input)
    check_tensor(fn, B)
    if B.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    if B.dtype.kind == "c" and input.dtype.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                      stacklevel=2)
        B = B.real
    b, _ = solve_operands(fn, input, B.astype(input.dtype, copy=False), left,
                          vectors=False)   # torch's
    if left:
        return SolveTriangular.apply(input, b, upper=bool(upper), unit=bool(unitriangular))
    return SolveTriangular.apply(input.mT, b.mT, upper=not upper, unit=bool(unitriangular)).mT


# ----- decompositions -------------------------------------------------------------------------
def cholesky(input, *, upper=False):
    """L, lower triangular, with A = LLᴴ from A's lower triangle (``upper=True``: U = Lᴴ from
    the upper one), as ``torch.linalg.cholesky``; an input that is not positive-definite
    raises ``LinAlgError`` naming its leading minor. Gradient: ``Cholesky``.

    Shape: input (..., n, n) -> (..., n, n).

    Example:
        >>> mg.linalg.cholesky(mg.tensor([[4.0, 2.0], [2.0, 5.0]]))     # [[2, 0], [1, 2]]
    """
    fn = "linalg.cholesky"
    check_matrices(fn, input, kernel="cholesky_cpu")
    return Cholesky.apply(input, upper=bool(upper), fn=fn)[0]


def cholesky_ex(input, *, upper=False, check_errors=False):
    """``linalg_cholesky_ex(L, info)``: ``cholesky`` and LAPACK's info per matrix (int32: 0,
    or the order of the first leading minor that is not positive-definite, where L stops).

    Shape: input (..., n, n) -> (..., n, n) and (...).

    Example:
        >>> mg.linalg.cholesky_ex(-mg.eye(2)).info                    # tensor(1, dtype=int32)
    """
    fn = "linalg.cholesky_ex"
    low, info = Cholesky.apply(check_matrices(fn, input, kernel="cholesky_cpu"), upper=bool(upper),
                               fn=fn if check_errors else None)
    return return_types.linalg_cholesky_ex(low, constant(info._array))


def qr(A, mode="reduced"):
    """``linalg_qr(Q, R)`` with A = QR (``torch.linalg.qr``), Q's columns orthonormal, R
    upper triangular: mode "reduced" (k = min(m, n) columns of Q), "complete" (Q square) or
    "r" (R alone, Q empty, no gradient). Gradient: ``QR`` (refused, as torch's, for mode
    "r" and for "complete" with m > n).

    Shape: A (..., m, n) -> Q (..., m, k), R (..., k, n).

    Example:
        >>> Q, R = mg.linalg.qr(mg.randn(4, 3))
    """
    fn = "linalg.qr"
    check_matrices(fn, A, square=False, kernel="geqrf_cpu")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return return_types.linalg_qr(*QR.apply(A, mode=mode))


def eigh(input, UPLO="L"):
    """``linalg_eigh(eigenvalues, eigenvectors)`` of each Hermitian (symmetric) matrix, from
    its ``UPLO`` ("L" or "U") triangle (``torch.linalg.eigh``): ascending real eigenvalues,
    orthonormal eigenvectors as columns (each up to sign, or phase). Gradient: ``Eigh``
    (inf/NaN at a repeated eigenvalue when the vectors are used, as torch's).

    Shape: input (..., n, n) -> (..., n) and (..., n, n).

    Example:
        >>> mg.linalg.eigh(mg.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues      # [1, 3]
    """
    uplo = eigh_input("linalg.eigh", input, UPLO)
    return return_types.linalg_eigh(*Eigh.apply(input, uplo=uplo))


def eigvalsh(input, UPLO="L"):
    """The eigenvalues of each Hermitian matrix, ascending (``torch.linalg.eigvalsh``):
    ``eigh``'s, gradient V diag(g) Vᴴ (finite at repeated eigenvalues).

    Shape: input (..., n, n) -> (..., n).

    Example:
        >>> mg.linalg.eigvalsh(mg.eye(2))                               # tensor([1., 1.])
    """
    return EigvalsH.apply(input, uplo=eigh_input("linalg.eigvalsh", input, UPLO))


def _no_driver(fn, driver):
    if driver is not None:
        raise RuntimeError(f"{fn}: keyword argument `driver=` is only supported on CUDA "
                           "inputs with cuSOLVER backend.")


def svd(A, full_matrices=True, *, driver=None):
    """``linalg_svd(U, S, Vh)`` with A = U diag(S) Vh (``torch.linalg.svd``): S descending;
    ``full_matrices`` (torch's default): U (m, m) and Vh (n, n), else k = min(m, n) columns
    and rows. The singular vectors are each up to sign (or phase). Gradient: ``SVD``
    (the extra columns of a full U or Vh get none; inf/NaN at repeated singular values when
    U or Vh are used, as torch's).

    Shape: A (..., m, n) -> U (..., m, m|k), S (..., k), Vh (..., n|k, n).

    Example:
        >>> U, S, Vh = mg.linalg.svd(mg.randn(4, 3), full_matrices=False)
    """
    fn = "linalg.svd"
    check_matrices(fn, A, square=False, kernel="linalg_svd_cpu")
    _no_driver(fn, driver)
    return return_types.linalg_svd(*SVD.apply(A, full_matrices=bool(full_matrices)))


def svdvals(A, *, driver=None):
    """The singular values of each matrix, descending (``torch.linalg.svdvals``); gradient
    U diag(g) Vᴴ (finite at repeated values).

    Shape: A (..., m, n) -> (..., min(m, n)).

    Example:
        >>> mg.linalg.svdvals(mg.tensor([[3.0, 0.0], [0.0, -4.0]]))       # tensor([4., 3.])
    """
    fn = "linalg.svdvals"
    check_matrices(fn, A, square=False, kernel="linalg_svd_cpu")
    _no_driver(fn, driver)
    return SVDVals.apply(A)


# ----- pseudoinverse, least squares, rank, condition ------------------------------------------
def pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None):
    r"""The Moore–Penrose pseudoinverse A⁺ of each matrix (``torch.linalg.pinv``): through
    the SVD (``hermitian``: eigh of the lower triangle), the singular values at most
    max(atol, rtol·σ₁) dropped. ``rcond`` is torch's older name for rtol (atol 0).
    Gradient: ``Pinv``, torch's closed form at a fixed rank.

    Args:
        input: (..., m, n) floating or complex.
        rcond: the relative tolerance, positionally (NumPy's form).
        hermitian: A is Hermitian (symmetric); only its lower triangle is read.
        atol, rtol: numbers or tensors broadcast over the batch; rtol's default is
            eps·max(m, n), or 0 where atol > 0.

    Shape: input (..., m, n) -> (..., n, m).

    Example:
        >>> mg.linalg.pinv(mg.ones(2, 3))                             # every entry 1/6
    """
    fn = "linalg.pinv"
    check_lapack_input(fn, input)
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError(f"{fn}(): give rcond, or atol and rtol, not both")
        atol, rtol = 0.0, rcond
    if hermitian:
        check_matrices(fn, input)
    atol, rtol = tolerances(fn, input, atol, rtol)
    return Pinv.apply(input, atol=atol, rtol=rtol, hermitian=bool(hermitian))


def matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The numerical rank of each matrix (``torch.linalg.matrix_rank``): how many singular
    values (|eigenvalues| with ``hermitian``) exceed max(atol, rtol·σ₁); ``tol`` is NumPy's
    name for atol (rtol 0). A constant int64 tensor.

    Shape: input (..., m, n) -> (...).

    Example:
        >>> mg.linalg.matrix_rank(mg.ones(3, 3))                              # tensor(1)
    """
    fn = "linalg.matrix_rank"
    check_matrices(fn, input, square=bool(hermitian))
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError(f"{fn}(): give tol, or atol and rtol, not both")
        atol, rtol = tol, 0.0
    atol, rtol = tolerances(fn, input, atol, rtol)
    return constant(input.xp.asarray(numerical_rank(singular_arrays(input, hermitian), atol, rtol)))


def lstsq(input, b, rcond=None, *, driver=None):
    r"""``linalg_lstsq(solution, residuals, rank, singular_values)``: X minimising
    :math:`\lVert AX - B \rVert_F` (the least-norm one when A is rank-deficient), as
    ``torch.linalg.lstsq``. X = A⁺B (``pinv`` with rtol ``rcond``, default eps·max(m, n),
    then ``matmul``), whose gradient is torch's where ``rcond`` drops no singular value
    (torch's backward takes pinv(A) at its default tolerance, the dropped values' 1/σ
    included; here ``Pinv``'s, of the truncated A⁺ at its rank). ``residuals``, the squared
    residual |AX - B|² of each column, a composition differentiable as torch's, when m > n
    and the driver is not "gelsy" (and, but for "gels", every matrix has full rank); the
    constants ``rank`` for the drivers "gelsy" (the default), "gelsd", "gelss" and
    ``singular_values`` for "gelsd" and "gelss"; empty tensors otherwise.

    Args:
        input: (..., m, n) floating or complex.
        b: (..., m, k), or (..., m) (one dim fewer than input: a batch of vectors), input's
            dtype.
        rcond: singular values below rcond·σ₁ count as zero.
        driver: one of "gels", "gelsy", "gelsd", "gelss" (which fields are computed).

    Shape: solution (..., n, k) or (..., n), batch dims broadcast.

    Example:
        >>> mg.linalg.lstsq(mg.ones(3, 1), mg.tensor([1.0, 2.0, 3.0])).solution   # [2.]
    """
    fn = "linalg.lstsq"
    driver = "gelsy" if driver is None else driver
    if driver not in LSTSQ_DRIVERS:
        raise RuntimeError(f"{fn}: parameter `driver` should be one of "
                           f"({', '.join(LSTSQ_DRIVERS)})")
    check_matrices(fn, input, square=False)
    check_tensor(fn, b)
    if b.dtype != input.dtype:
        raise RuntimeError(f"{fn}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {torch_name(input.dtype)} and other's dtype "
                           f"{torch_name(b.dtype)}")
    if b.ndim not in (input.ndim - 1, input.ndim):
        raise RuntimeError(f"{fn}: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = b.ndim == input.ndim - 1
    rhs = b.reshape(b.shape + (1,)) if vector else b
    (m, n), xp = input.shape[-2:], input.xp
    if rhs.shape[-2] != m:
        raise RuntimeError(f"{fn}: input.size(-2) should match other.size(-2)")
    batch = broadcast_shape(fn, input.shape[:-2], rhs.shape[:-2])
    eps = float(dtypes.finfo(dtypes.real_of(input.dtype)).eps)
    rtol = eps * max(m, n) if rcond is None or rcond < 0 else float(rcond)
    solution = matmul(Pinv.apply(input, atol=xp.zeros(()), rtol=xp.asarray(rtol),
                                 hermitian=False), rhs)
    real = dtypes.real_of(input.dtype)
    s = singular_arrays(input)
    rank = numerical_rank(s, 0.0, rtol) if driver != "gels" else xp.zeros(0, np.int64)
    values = s if driver in ("gelsd", "gelss") else xp.zeros(0, real)
    residuals = solution.abs().reshape(-1)[:0]     # empty, in the graph as torch's
    if m > n and driver != "gelsy" and (driver == "gels" or bool((rank == n).all())):
        residuals = (matmul(input, solution) - rhs).abs().pow(2).sum(-2)          # (*batch, k)
        if n == 0 and driver == "gels":       # torch's gels leaves them 0 for no column
            residuals = constant(xp.zeros(batch + rhs.shape[-1:], real))
    if vector:
        solution = solution.reshape(solution.shape[:-1])
    return return_types.linalg_lstsq(solution, residuals, constant(xp.asarray(rank)),
                                     constant(values))


def cond(input, p=None):
    r"""The condition number of each matrix in the norm ``p`` (``torch.linalg.cond``):
    p None or 2 :math:`\sigma_1/\sigma_n`, -2 :math:`\sigma_n/\sigma_1` (any shape); "nuc"
    :math:`\sum \sigma_i \sum 1/\sigma_i`; "fro", ±1, ±inf
    :math:`\lVert A \rVert_p \lVert A^{-1} \rVert_p` (square; inf for a singular matrix).
    An empty input gives zeros (for "fro" and "nuc" only a square one, as torch's).
    Compositions of ``svdvals``, ``inv_ex`` and ``matrix_norm``, with their gradients.

    Shape: input (..., m, n) -> (...); its real dtype.

    Example:
        >>> mg.linalg.cond(mg.tensor([[2.0, 0.0], [0.0, 0.5]]))                 # 4
    """
    fn = "linalg.cond"
    if p is not None and not _is_order(p):
        raise RuntimeError(f"{fn} got an invalid norm type: {p}")
    if isinstance(p, str):                  # torch checks their shape first, empty or not
        check_matrices(f"{fn}(ord={p})", input, dtype=False)
    by_svd = p is None or p in (2, -2, "nuc")
    check_matrices(fn, input, square=False, kernel="linalg_svd_cpu" if by_svd else None)
    if input.size == 0:
        return constant(input.xp.zeros(input.shape[:-2], dtypes.real_of(input.dtype)))
    if p is None or p in (2, -2):
        s = svdvals(input)
        largest, smallest = s[..., 0], s[..., -1]
        return largest / smallest if p != -2 else smallest / largest
    check_matrices(f"{fn}(ord={p})", input)
    if p == "nuc":                            # Σσᵢ · Σ1/σᵢ, as torch computes it
        s = svdvals(input)
        return s.sum(-1) * (1 / s).sum(-1)
    inverse, info = Inverse.apply(input)
    inverse = inverse.masked_fill(info._array[..., None, None] > 0, INF)
    result = matrix_norm(input, p) * matrix_norm(inverse, p)
    return nan_to_num(result, nan=INF, posinf=INF, neginf=-INF)   # 0 · inf: NumPy's inf


# ----- products -------------------------------------------------------------------------------
def multi_dot(tensors):
    """The product of a chain of matrices in the cheapest order (``torch.linalg.multi_dot``):
    the first may be a 1-D row vector and the last a 1-D column vector, the others 2-D, one
    dtype; three operands are ordered as torch orders them, more by the matrix-chain
    dynamic programme. A composition of ``matmul``.

    Shape: (n,) or (n, a), (a, b), ..., (c,) or (c, m) -> (n, m) without the vector dims.

    Example:
        >>> mg.linalg.multi_dot([mg.ones(3), mg.ones(3, 2), mg.ones(2)])     # tensor(6.)
    """
    fn = "multi_dot()"
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"{fn}: expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        check_tensor(fn, t)
        where = "first tensor" if i == 0 else "last tensor" if i == len(tensors) - 1 else None
        if where is None and t.ndim != 2:
            raise RuntimeError(f"{fn}: tensor {i} must be 2D but got {t.ndim}D")
        if where is not None and t.ndim not in (1, 2):
            raise RuntimeError(f"{fn}: the {where} must be 1D or 2D but got {t.ndim}D")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"{fn}: all tensors must have be the same dtype but tensor 0 "
                               f"is {tensors[0].dtype} and tensor {i} {t.dtype}")
    first, last = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first:
        mats[0] = mats[0].reshape(1, -1)
    if last:
        mats[-1] = mats[-1].reshape(-1, 1)
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"{fn}: tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    out = _chain(mats, _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]]), 0,
                 len(mats) - 1)
    if first:
        out = out.reshape(out.shape[1:])
    if last:
        out = out.reshape(out.shape[:-1])
    return out


def _chain_order(sizes):
    """split[i][j]: where the cheapest product of matrices i..j splits (matrix i is
    sizes[i] x sizes[i + 1]); three matrices as torch decides, (AB)C on a tie."""
    n = len(sizes) - 1
    split = [[0] * n for _ in range(n)]
    if n == 3:
        a, b, c, d = sizes
        split[0][2] = 0 if a * c * (b + d) > b * d * (a + c) else 1
        split[1][2], split[0][1] = 1, 0
        return split
    cost = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                here = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if here < cost[i][j]:
                    cost[i][j], split[i][j] = here, k
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    return matmul(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


def cross(input, other, *, dim=-1):
    """The 3-vector cross product along ``dim`` (``torch.linalg.cross``: the last dim by
    default), input and other of one number of dims broadcast (``mg.cross``).

    Shape: the broadcast shape, ``dim`` of size 3.

    Example:
        >>> mg.linalg.cross(mg.tensor([1.0, 0, 0]), mg.tensor([0.0, 1, 0]))  # [0, 0, 1]
    """
    return products.cross(input, other, dim=dtypes.int_dim("linalg.cross", dim))


def vecdot(x, y, *, dim=-1):
    r""":math:`\sum_i \overline{x_i} y_i` along ``dim`` (``torch.linalg.vecdot``), x and y
    broadcast, one floating or complex dtype.

    Shape: the broadcast shape without ``dim``.

    Example:
        >>> mg.linalg.vecdot(mg.ones(2, 3), mg.ones(3))                 # tensor([3., 3.])
    """
    fn = "linalg.vecdot"
    check_tensor(fn, x)
    check_tensor(fn, y)
    check_dtype(fn, x, half=True)
    if x.dtype != y.dtype:
        raise RuntimeError(f"{fn}: Expected x and y to have the same dtype, but found x of "
                           f"type {torch_name(x.dtype)} and y of type {torch_name(y.dtype)} "
                           "instead")
    shape = broadcast_shape(fn, x.shape, y.shape)
    axis = reductions.normalize_axis(fn, dim, len(shape), single=True)
    return reductions.sum((x.conj() if x.dtype.kind == "c" else x) * y, axis)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The ``offset`` diagonal of the matrices of dims ``dim1``, ``dim2``, as a last dim
    (``torch.linalg.diagonal``: ``mg.diagonal`` with the last two dims by default); a view.

    Shape: A (..., m, n) -> (..., min(m, n)) for offset 0.

    Example:
        >>> mg.linalg.diagonal(mg.eye(3))                              # tensor([1., 1., 1.])
    """
    return _diagonal(A, offset, dim1, dim2)

