"""The LU factorization and what is solved with a factorization: ``linalg.lu_factor`` (and
``_ex``), ``linalg.lu``, ``lu_unpack``, ``linalg.lu_solve``, the older ``torch.lu`` and
``torch.lu_solve``, ``torch.triangular_solve``, ``cholesky_solve`` and ``cholesky_inverse``,
and the Tensor methods torch has for them (``METHODS``, bound by ``ops/methods.py``).

- LU: partial pivoting as LAPACK's getrf chooses it (in each column the entry of largest
  |value|, |Re| + |Im| for complex ones, the first on ties), the multipliers scaled by the
  pivot's reciprocal; pivots int32 and 1-based, LAPACK's row swaps in order. One node,
  ``LUFactor``, with torch's closed-form backward (derived in its docstring).
- ``lu_unpack`` and ``linalg.lu`` are compositions over it: P a constant, L and U the
  triangles of the packed factor (``tril``, ``triu``), so their gradients reach LU as
  torch's ``lu_unpack`` sends them.
- ``lu_solve`` and ``triangular_solve`` are compositions of ``SolveTriangular`` (each
  reads one triangle of LU, its gradient stays there, as torch's) and a row gather by the
  pivots' permutation.
- ``cholesky_solve`` and ``cholesky_inverse`` are one node each: their forward reads one
  triangle of L, but torch's gradient is that of (LLᴴ)⁻¹B and (LLᴴ)⁻¹ as functions of all
  of L (its formula multiplies by L as given), which no composition of the triangular
  solves (their gradients kept on the triangle) gives; each node carries torch's closed
  form and its double backward.

An array (..., m, n) is a batch of matrices; Aᴴ the conjugate transpose; a gradient gA is
torch's, dL = Re tr(gAᴴ dA)."""

import math
import warnings

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from ..autograd.function import Function
from . import return_types
from .base import OutOfRangeError, broadcast_shape, check_tensor, constant, unbroadcast
from .double_backward import _fit, _formula, _operand
from .elementwise import tril, triu
from .indexing import gather
from .linalg import matmul
from .solves import (LinAlgError, SolveTriangular, batched, check_dtype, check_kernel,
                     check_matrices, eye_like, mH, raise_failed, substitute, torch_name)

METHODS = ("cholesky_solve", "cholesky_inverse", "lu", "lu_solve", "triangular_solve")


# ----- LU with partial pivoting ---------------------------------------------------------------
def lu_factor_array(a):
    """LAPACK getrf on each matrix of ``a`` (..., m, n): (LU packed: L's multipliers below
    the diagonal, U on and above it; pivots (..., k) int32, 1-based: row j was swapped with
    row pivots[j] at step j; info (...) int32: the 1-based index of the first zero pivot, 0
    for none), k = min(m, n). A zero pivot leaves its (zero) column as it is, as LAPACK."""
    xp = backend.array_module(a)
    lu, batch = batched(a)
    lu = lu.copy()                                                       # (B, m, n)
    count, m, n = lu.shape
    k = min(m, n)
    pivots = xp.zeros((count, k), np.int32)
    info = xp.zeros(count, np.int32)
    rows = xp.arange(count)
    tiny = np.finfo(dtypes.real_of(a.dtype)).tiny
    for j in range(k):
        column = lu[:, j:, j]                                            # (B, m - j)
        size = xp.abs(column.real) + xp.abs(column.imag) if column.dtype.kind == "c" \
            else xp.abs(column)
        # idamax: the first largest, NaN passed over (chosen only where it comes first)
        p = j + xp.where(xp.isnan(size[:, 0]), 0,
                         xp.where(xp.isnan(size), -1, size).argmax(axis=1))      # (B,)
        pivots[:, j] = p + 1
        lu[rows, j], lu[rows, p] = lu[rows, p].copy(), lu[rows, j].copy()    # whole rows
        pivot = lu[:, j, j]
        zero = pivot == 0
        info = xp.where((info == 0) & zero, j + 1, info)
        safe = xp.where(zero, 1, pivot)
        normal = (xp.abs(safe) >= tiny)[:, None]        # LAPACK scales by the reciprocal
        with np.errstate(all="ignore"):
            below = lu[:, j + 1:, j]                                     # (B, m - j - 1)
            factors = xp.where(normal, below * (1 / safe)[:, None], below / safe[:, None])
            lu[:, j + 1:, j] = factors
            lu[:, j + 1:, j + 1:] -= factors[:, :, None] * lu[:, j, None, j + 1:]
    return (lu.reshape(a.shape), pivots.reshape(batch + (k,)), info.reshape(batch))


def permutation(pivots, m):
    """The row order ``perm`` (..., m) of LAPACK's ``pivots`` (..., k): row i of PᵀA is
    row perm[i] of A, for A = PLU (P[perm[i], i] = 1)."""
    xp = backend.array_module(pivots)
    # (B, k) 0-based; B counted, not -1: ambiguous for an empty batch or k = 0
    flat = pivots.reshape(math.prod(pivots.shape[:-1]), pivots.shape[-1]).astype(np.int64) - 1
    perm = xp.broadcast_to(xp.arange(m), (len(flat), m)).copy()
    rows = xp.arange(len(flat))
    for j in range(flat.shape[1]):
        p = flat[:, j]
        perm[rows, j], perm[rows, p] = perm[rows, p].copy(), perm[rows, j].copy()
    return perm.reshape(pivots.shape[:-1] + (m,))


def _right_solve_upper(u, b):
    # X with X Uᴴ = B for U upper triangular (Uᴴ lower): U Xᴴ = Bᴴ
    return mH(substitute(u, mH(b), upper=True))


class LUFactor(Function):
    r"""(LU packed, pivots, info) of A = PLU (``lu_factor_array``).

    With k = min(m, n), L (m, k) unit lower and U (k, n) upper, and the packed gradient g
    split into g_L = tril(g, -1), g_U = triu(g): for m <= n (A = L[U₁ | U₂]), dA₁ = dL U₁ +
    L dU₁ gives L⁻¹dA₁U₁⁻¹ = L⁻¹dL + dU₁U₁⁻¹ (strictly lower + upper), and dU₂ = L⁻¹(dA₂ -
    dL U₂); the adjoint is torch's ``linalg_lu_backward``:
    :math:`g_A = P L^{-H} [\mathrm{tril}(L^H g_L - g_U U^H, -1) U_1^{-H} + g_{U_1} \mid
    g_{U_2}]`. For m > n, the transposed argument: :math:`g_A = P [L_1^{-H}
    \mathrm{triu}(g_U U^H - L^H g_L) + g_{L_1} ; g_{L_2}] U^{-H}`."""

    @staticmethod
    def forward(ctx, a):
        lu, pivots, info = lu_factor_array(a)
        ctx.save_for_backward(lu, pivots)
        return lu, pivots, info

    @staticmethod
    def backward(ctx, grad, _, __):
        lu, pivots = ctx.saved
        xp = backend.array_module(lu)
        m, n = lu.shape[-2:]
        k = min(m, n)
        low = xp.tril(lu[..., :k], -1) + xp.eye(m, k, dtype=lu.dtype)          # (.., m, k)
        up = xp.triu(lu[..., :k, :])                                              # (.., k, n)
        grad_low, grad_up = xp.tril(grad[..., :k], -1), xp.triu(grad[..., :k, :])
        if m <= n:
            inner = xp.tril(mH(low) @ grad_low - grad_up @ mH(up), -1)            # (.., k, k)
            left = _right_solve_upper(up[..., :k], inner) + grad_up[..., :k]
            out = xp.concatenate([left, grad_up[..., k:]], axis=-1)               # (.., m, n)
            out = substitute(mH(low), out, upper=True, unit=True)                 # L⁻ᴴ ·
        else:
            inner = xp.triu(grad_up @ mH(up) - mH(low) @ grad_low)                # (.., k, k)
            top = substitute(mH(low[..., :k, :]), inner, upper=True, unit=True) \
                + grad_low[..., :k, :]
            out = _right_solve_upper(up, xp.concatenate([top, grad_low[..., k:, :]], -2))
        order = permutation(pivots, m)                                   # P · : rows back
        back = xp.argsort(order, axis=-1)
        return xp.take_along_axis(out, back[..., None], axis=-2)


def _check_lu_input(fn, A, pivot):
    """torch's checks of an LU input, in its order: 2 dims, a LAPACK dtype, pivoting."""
    check_tensor(fn, A)
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    check_kernel("lu_cpu", A)
    if not pivot and A.numel():                  # torch factors an empty input either way
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")


def _factored(fn, A, pivot, check_errors):
    # (LU, pivots, info) of one LUFactor node, pivots and info constants; a zero pivot
    # raises torch's RuntimeError with ``check_errors``
    _check_lu_input(fn, A, pivot)
    lu, pivots, info = LUFactor.apply(A)
    info = info._array
    if check_errors:
        flat = backend.to_numpy(info).reshape(-1)
        bad = np.flatnonzero(flat)
        if bad.size:
            where = f"(Batch element {bad[0]}): " if info.ndim else ""
            i = int(flat[bad[0]])
            raise RuntimeError(f"{fn}: {where}U[{i},{i}] is zero and using it on lu_solve "
                               "would result in a division by zero. If you still want to "
                               "perform the factorization, consider calling linalg.lu(A, "
                               "pivot) or linalg.lu_factor_ex(A, pivot)")
    return lu, constant(pivots._array), constant(info)


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``linalg_lu_factor_ex(LU, pivots, info)``: A = PLU with partial pivoting
    (``torch.linalg.lu_factor_ex``), LU packed (L's multipliers below the diagonal, its
    unit diagonal implied; U on and above), pivots int32 and 1-based (LAPACK's swaps),
    info LAPACK's (the first zero pivot, 1-based; 0 for none). ``pivot=False`` is refused
    on the CPU, as torch's. Gradient: ``LUFactor``.

    Shape: A (..., m, n) -> LU (..., m, n), pivots (..., min(m, n)), info (...).

    Example:
        >>> mg.linalg.lu_factor_ex(mg.ones(2, 2)).info                 # tensor(2, dtype=int32)
    """
    return return_types.linalg_lu_factor_ex(
        *_factored("torch.linalg.lu_factor_ex", A, pivot, check_errors))


def lu_factor(A, *, pivot=True):
    """``linalg_lu_factor(LU, pivots)`` (``torch.linalg.lu_factor``): ``lu_factor_ex``
    that raises torch's RuntimeError for a zero pivot (a singular square matrix).

    Shape: A (..., m, n) -> LU (..., m, n), pivots (..., min(m, n)).

    Example:
        >>> LU, pivots = mg.linalg.lu_factor(mg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    """
    return return_types.linalg_lu_factor(
        *_factored("torch.linalg.lu_factor", A, pivot, True)[:2])


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``lu_unpack(P, L, U)`` of a packed LU and its pivots (``torch.lu_unpack``), A = PLU:
    P the permutation matrix of the pivots (a constant in LU's dtype), L (m, k) unit lower
    and U (k, n) upper, the triangles of LU (``tril``, ``triu``: gradients reach LU's
    entries they read); a part not unpacked is an empty tensor.

    Shape: LU (..., m, n), pivots (..., k) -> P (..., m, m), L (..., m, k), U (..., k, n).

    Example:
        >>> P, L, U = mg.lu_unpack(*mg.linalg.lu_factor(A))              # P @ L @ U == A
    """
    fn = "torch.lu_unpack"
    check_tensor(fn, LU_data)
    check_tensor(fn, LU_pivots)
    if LU_data.ndim < 2:
        raise RuntimeError(f"{fn}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU_data.shape)} instead")
    if unpack_pivots and LU_pivots.ndim == 0:
        raise RuntimeError(f"{fn}: Expected LU_pivots of shape (*, k), k = min(m, n), got a "
                           "0-d tensor")
    if LU_pivots.dtype != np.int32:
        raise RuntimeError(f"{fn}: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    xp, (m, n) = LU_data.xp, LU_data.shape[-2:]
    k = min(m, n)
    empty = constant(xp.zeros(0, LU_data.dtype))
    low = up = perm_matrix = empty
    if unpack_data:
        eye = constant(xp.eye(m, k, dtype=LU_data.dtype))
        low = tril(LU_data[..., :k], -1) + eye                           # (..., m, k)
        up = triu(LU_data[..., :k, :])                                   # (..., k, n)
    if unpack_pivots:
        pivots = LU_pivots._array
        if pivots.size and not bool(((pivots >= 1) & (pivots <= m)).all()):
            raise RuntimeError("pivots passed to lu_unpack must be between 1 and "
                               "LU.size(-2) inclusive.Did you properly pass the result of "
                               "lu_factor?")
        batch = broadcast_shape(fn, LU_data.shape[:-2], pivots.shape[:-1])
        order = permutation(xp.broadcast_to(pivots, batch + pivots.shape[-1:]), m)
        matrix = xp.zeros(batch + (m, m), LU_data.dtype)                 # P[perm[i], i] = 1
        xp.put_along_axis(matrix, order[..., None, :], 1, axis=-2)
        perm_matrix = constant(matrix)
    return return_types.lu_unpack(perm_matrix, low, up)


def linalg_lu(A, *, pivot=True):
    """``linalg_lu(P, L, U)`` with A = PLU (``torch.linalg.lu``): ``lu_factor_ex`` then
    ``lu_unpack``; a singular A is factored without error, as torch's.

    Shape: A (..., m, n) -> P (..., m, m), L (..., m, k), U (..., k, n), k = min(m, n).

    Example:
        >>> P, L, U = mg.linalg.lu(mg.randn(3, 4, dtype=mg.float64))
    """
    lu_packed, pivots, _ = _factored("linalg.lu", A, pivot, False)
    P, L, U = lu_unpack(lu_packed, pivots)
    if not pivot:                             # no permutation: torch's P is empty, (0,)
        P = constant(A.xp.zeros(0, A.dtype))
    return return_types.linalg_lu(P, L, U)


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with AX = B for A = PLU given as ``lu_factor``'s result (``torch.linalg.lu_solve``);
    ``adjoint``: AᴴX = B; ``left=False``: XA = B (XAᴴ = B). Compositions: the rows of B
    gathered by the pivots' permutation, then ``SolveTriangular`` on L's strict lower
    triangle (unit diagonal) and on U's, each gradient kept on its triangle of LU (torch's
    ``linalg_lu_solve_LU``); batch dims broadcast.

    Shape: LU (..., n, n), pivots (..., n), B (..., n, k) (left) or (..., k, n) -> B's.

    Example:
        >>> x = mg.linalg.lu_solve(*mg.linalg.lu_factor(A), b)              # A @ x == b
    """
    fn = "linalg.lu_solve"
    check_matrices(f"torch.{fn}", LU, dtype=False)
    check_dtype(f"torch.{fn}", LU)
    check_tensor(fn, pivots)
    check_tensor(fn, B)
    if pivots.dtype != np.int32:
        raise RuntimeError(f"{fn}: pivots should be a Tensor of scalar type torch.int32")
    if B.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    if B.dtype != LU.dtype:
        raise RuntimeError(f"{fn}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {torch_name(LU.dtype)} and B of type {torch_name(B.dtype)} "
                           "instead")
    n, rows = LU.shape[-1], B.shape[-2 if left else -1]
    if rows != n:
        shape = "x".join(str(d) for d in B.shape[-2:])
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {shape})")
    if pivots.ndim == 0:                      # torch reads its size(-1) first: an IndexError
        raise OutOfRangeError(f"{fn}: Expected pivots of shape (*, {n}) for LU of shape "
                              f"{list(LU.shape)}, got a 0-d tensor")
    if pivots.shape[-1] != n or pivots.shape != LU.shape[:-1]:      # no broadcast, as torch's
        raise RuntimeError(f"{fn}: Expected LU.shape[:-1] and pivots.shape to be the same "
                           f"({list(LU.shape[:-1])}), got pivots of shape {list(pivots.shape)}")
    broadcast_shape(fn, LU.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    if not left:                              # XA = B: AᴴXᴴ = Bᴴ (XAᴴ = B: AXᴴ = Bᴴ)
        return _lu_solved(LU, pivots._array, B.mH, not adjoint).mH
    return _lu_solved(LU, pivots._array, B, adjoint)


def _rows(B, order, batch):
    # B's rows (dim -2) in ``order`` (..., n), B broadcast to the batch shape first
    shape = batch + B.shape[-2:]
    index = B.xp.broadcast_to(order[..., None], shape)
    return gather(B.expand(*shape) if B.shape != shape else B, -2, constant(index))


def _lu_solved(LU, pivots, B, adjoint):
    # AX = B as U⁻¹L⁻¹PᵀB; AᴴX = B as P L⁻ᴴ U⁻ᴴ B
    batch = tuple(np.broadcast_shapes(LU.shape[:-2], pivots.shape[:-1], B.shape[:-2]))
    order = permutation(LU.xp.broadcast_to(pivots, batch + pivots.shape[-1:]), LU.shape[-1])
    if not adjoint:
        y = SolveTriangular.apply(LU, _rows(B, order, batch), upper=False, unit=True)
        return SolveTriangular.apply(LU, y, upper=True, unit=False)
    y = SolveTriangular.apply(LU.mH, B, upper=False, unit=False)                   # U⁻ᴴ B
    y = SolveTriangular.apply(LU.mH, y, upper=True, unit=True)                     # L⁻ᴴ ·
    return _rows(y, LU.xp.argsort(order, axis=-1), batch)                          # P ·


# ----- the older forms: torch.lu, torch.lu_solve, torch.triangular_solve ----------------------
def lu(A, pivot=True, get_infos=False, out=None):
    """``torch.lu``, ``x.lu()`` (deprecated, with torch's warning): (LU, pivots) of
    ``linalg.lu_factor_ex``, never raising for a singular matrix; with ``get_infos``,
    ``_lu_with_info(LU, pivots, info)``.

    Shape: as ``linalg.lu_factor_ex``.

    Example:
        >>> A_LU, pivots = mg.lu(mg.randn(3, 3))
    """
    if out is not None:
        raise TypeError("lu: out= is not supported")
    warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)"
        "\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)", UserWarning, stacklevel=2)
    lu_packed, pivots, info = _factored("torch.lu_factor", A, pivot, False)
    if get_infos:
        return return_types._lu_with_info(lu_packed, pivots, info)
    return lu_packed, pivots


def lu_solve(input, LU_data, LU_pivots, out=None):
    """``torch.lu_solve``, ``b.lu_solve(LU_data, LU_pivots)`` (deprecated, with torch's
    warning): ``linalg.lu_solve(LU_data, LU_pivots, b)``.

    Shape: b (..., n, k), LU_data (..., n, n), LU_pivots (..., n) -> (..., n, k).

    Example:
        >>> x = b.lu_solve(*mg.linalg.lu_factor(A))
    """
    if out is not None:
        raise TypeError("lu_solve: out= is not supported")
    warnings.warn(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in "
        "a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
        "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
        "torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=2)
    return linalg_lu_solve(LU_data, LU_pivots, input)


def _solve_operands(fn, b, A, b_name, a_name, kernel):
    """torch's checks of the older solves (``triangular_solve``, ``cholesky_solve``), in
    its order: 2 dims each, one dtype, A square, shapes that solve, then the kernel's
    dtype; the batch shape they broadcast to."""
    check_tensor(fn, b)
    check_tensor(fn, A)
    for name, t in ((b_name, b), (a_name, A)):
        if t.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {t.ndim} "
                               "dimensions instead" if fn != "triangular_solve" else
                               f"torch.triangular_solve: Expected {name} to have at least 2 "
                               f"dimensions, but it has {t.ndim} dimensions instead")
    if b.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{torch_name(b.dtype)} and A of type {torch_name(A.dtype)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {fn}: each A matrix is "
                           f"{A.shape[-1]} by {A.shape[-1]} but each b matrix is "
                           f"{b.shape[-2]} by {b.shape[-1]}")
    check_kernel(kernel, A)
    return tuple(broadcast_shape(fn, b.shape[:-2], A.shape[:-2]))


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, out=None):
    """``torch.triangular_solve``, ``b.triangular_solve(A)`` (deprecated, with torch's
    warning): ``triangular_solve(solution, cloned_coefficient)``, X with op(A)X = b, A
    triangular (only its ``upper`` or lower triangle read, a unit diagonal with
    ``unitriangular``), op(A) = Aᵀ with ``transpose``; the coefficient A broadcast and
    cloned. ``SolveTriangular`` (its gradient kept on A's triangle, as torch's).

    Shape: b (..., n, k), A (..., n, n) -> (..., n, k) and (..., n, n), batch broadcast.

    Example:
        >>> x, _ = mg.eye(2).mul(2.0).triangular_solve(mg.eye(2))     # b / 2 ... A = I
    """
    if out is not None:
        raise TypeError("triangular_solve: out= is not supported")
    warnings.warn(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
        "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
        "arguments reversed and does not return a copy of one of the inputs.\nX = "
        "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
        "torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=2)
    batch = _solve_operands("triangular_solve", input, A, "b", "A", "triangular_solve_cpu")
    coefficient = A.mT if transpose else A
    solution = SolveTriangular.apply(coefficient, input, upper=bool(upper) != bool(transpose),
                                     unit=bool(unitriangular))
    shape = batch + A.shape[-2:]
    return return_types.triangular_solve(
        solution, (A.expand(*shape) if A.shape != shape else A).clone())


# ----- cholesky_solve, cholesky_inverse: one node each ----------------------------------------
def _cholesky_solve_array(b, low, upper):
    # (LLᴴ)⁻¹B (A = UᴴU with ``upper``) by two substitutions, reading one triangle
    if upper:
        return substitute(low, substitute(mH(low), b, upper=False), upper=True)
    return substitute(mH(low), substitute(low, b, upper=False), upper=True)


class CholeskySolve(Function):
    r"""X = A⁻¹B with A = LLᴴ (or UᴴU), L's triangle read by substitution.

    As a function of all of L: dX = -A⁻¹ dA X with dA = dL Lᴴ + L dLᴴ gives torch's
    ``cholesky_solve_backward``: :math:`g_B = A^{-1} g_X` and
    :math:`g_L = -(g_B X^H + X g_B^H) L` (:math:`-U (g_B X^H + X g_B^H)` for U), each
    summed over the batch dims its input was broadcast along."""

    @staticmethod
    def forward(ctx, b, low, upper):
        x = _cholesky_solve_array(b, low, upper)
        ctx.save_for_backward(low, x)
        ctx.upper, ctx.shapes = upper, (b.shape, low.shape)
        return x

    @staticmethod
    def backward(ctx, grad):
        low, x = ctx.saved
        grad_b = _cholesky_solve_array(grad, low, ctx.upper)
        grad_low = None
        if ctx.needs_input_grad[1]:
            common = grad_b @ mH(x)
            common = common + mH(common)
            grad_low = -(low @ common) if ctx.upper else -(common @ low)
            grad_low = unbroadcast(grad_low, ctx.shapes[1])
        return unbroadcast(grad_b, ctx.shapes[0]), grad_low


class CholeskyInverse(Function):
    r"""A⁻¹ = L⁻ᴴL⁻¹ for A = LLᴴ (U⁻¹U⁻ᴴ for A = UᴴU), L⁻¹ by substitution on its triangle;
    a zero on the diagonal raises ``LinAlgError`` (LAPACK potri's).

    As a function of all of L: dA⁻¹ = -A⁻¹ dA A⁻¹ gives torch's
    ``cholesky_inverse_backward``: :math:`g_L = -A^{-1}(g + g^H)A^{-1} L`
    (:math:`-U A^{-1}(g + g^H)A^{-1}` for U)."""

    @staticmethod
    def forward(ctx, low, upper):
        xp = backend.array_module(low)
        diagonal = xp.diagonal(low, 0, -2, -1)
        zero = diagonal == 0                     # (an empty matrix has no element to find)
        first = zero.argmax(-1) + 1 if zero.shape[-1] else xp.zeros(zero.shape[:-1], int)
        info = xp.where(zero.any(-1), first, 0).astype(np.int32)
        raise_failed("cholesky_inverse", info, lambda i: f"The diagonal element {i} is zero, "
                     "the inversion could not be completed because the input matrix is "
                     "singular.")
        inverse = substitute(low, eye_like(low), upper=upper)                     # L⁻¹
        out = inverse @ mH(inverse) if upper else mH(inverse) @ inverse
        ctx.save_for_backward(low, out)
        ctx.upper = upper
        return out

    @staticmethod
    def backward(ctx, grad):
        low, out = ctx.saved
        common = out @ (grad + mH(grad)) @ out
        return -(low @ common) if ctx.upper else -(common @ low)


def cholesky_solve(input, input2, upper=False, out=None):
    """``torch.cholesky_solve``, ``B.cholesky_solve(L)``: X with AX = B for A = LLᴴ given
    its Cholesky factor L (``upper``: A = UᴴU), only that triangle read; batch dims
    broadcast. Gradient: ``CholeskySolve`` (torch's, of all of L).

    Shape: input B (..., n, k), input2 L (..., n, n) -> (..., n, k).

    Example:
        >>> x = mg.cholesky_solve(b, mg.linalg.cholesky(A))                 # A @ x == b
    """
    if out is not None:
        raise TypeError("cholesky_solve: out= is not supported")
    _solve_operands("cholesky_solve", input, input2, "b", "u", "cholesky_solve_cpu")
    return CholeskySolve.apply(input, input2, upper=bool(upper))


def cholesky_inverse(input, upper=False, out=None):
    """``torch.cholesky_inverse``, ``L.cholesky_inverse()``: A⁻¹ for A = LLᴴ given L
    (``upper``: A = UᴴU), only that triangle read; a zero on the diagonal raises
    ``LinAlgError``. Gradient: ``CholeskyInverse`` (torch's, of all of L).

    Shape: input (..., n, n) -> (..., n, n).

    Example:
        >>> mg.cholesky_inverse(mg.linalg.cholesky(A))                  # A.inverse()
    """
    if out is not None:
        raise TypeError("cholesky_inverse: out= is not supported")
    fn = "cholesky_inverse"
    check_matrices(fn, input, dtype=False)
    check_kernel("cholesky_inverse_out_cpu", input)
    return CholeskyInverse.apply(input, upper=bool(upper))


# ----- double backward: the two nodes' formulas again with Tensor ops -------------------------
def _output(ctx, array):
    # the node's output as a Tensor of the node (its saved value, no second solve)
    return _tensor.Tensor._from_op(array, ctx, 0)


@_formula(CholeskySolve)
def _cholesky_solve_graph(ctx, g):
    saved_low, saved_x = ctx.saved
    low, x = _operand(ctx, 1, saved_low), _output(ctx, saved_x)
    grad_b = CholeskySolve.apply(g, low, upper=ctx.upper)
    grad_low = None
    if ctx.needs_input_grad[1]:
        common = matmul(grad_b, x.mH)
        common = common + common.mH
        grad_low = -matmul(low, common) if ctx.upper else -matmul(common, low)
        grad_low = _fit(grad_low, ctx.shapes[1])
    return _fit(grad_b, ctx.shapes[0]), grad_low


@_formula(CholeskyInverse)
def _cholesky_inverse_graph(ctx, g):
    saved_low, saved_out = ctx.saved
    low, out = _operand(ctx, 0, saved_low), _output(ctx, saved_out)
    common = matmul(matmul(out, g + g.mH), out)
    return -matmul(low, common) if ctx.upper else -matmul(common, low)


__all__ = ["CholeskyInverse", "CholeskySolve", "LUFactor", "LinAlgError", "cholesky_inverse",
           "cholesky_solve", "linalg_lu", "linalg_lu_solve", "lu", "lu_factor", "lu_factor_ex",
           "lu_factor_array", "lu_solve", "lu_unpack", "permutation", "triangular_solve"]
