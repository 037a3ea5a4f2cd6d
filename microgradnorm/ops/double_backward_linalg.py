"""Double backward (``create_graph=True``) of the matrix functions, ``einsum``, the complex
views, diagonals and strided views, the index writes and the Fourier transforms: each op's
closed-form backward again, written with Tensor ops as ``double_backward.py`` writes the
primitives' (its rules and helpers), so that a gradient of a gradient is the engine's
ordinary backward through the nodes these formulas record.

Two kinds of formula:

- a linear op's gradient is its adjoint applied to the gradient Tensor, itself an op:
  a diagonal's is ``diag_embed`` and the other way round, ``fft``'s the other direction
  with the dual scaling, ``einsum``'s an einsum; where the adjoint is no public op
  (``unfold``'s window sums, ``as_strided``'s), a node here computes it with the op's own
  ``backward`` and differentiates as the op;
- a matrix function's gradient reads its outputs (A⁻¹, det A, the eigenvectors, U, S, Vᴴ)
  as torch's formulas do: ``_outputs`` gives them as Tensors of the node itself, the values
  forward computed (no second factorization), so that the second backward runs the op's
  own backward once, on the sum of everything that reached its outputs.

``scatter_reduce``/``index_reduce`` with "prod" is torch's formula too: its gradient to src
where several zeros of src meet in one place has a node whose backward raises torch's error.

Example:
    >>> a = mg.randn(3, 3, dtype=mg.float64, requires_grad=True)
    >>> (g,) = mg.autograd.grad(mg.linalg.det(a), a, create_graph=True)   # det · A⁻ᵀ
    >>> g.pow(2).sum().backward()                                         # a.grad: its slope
"""

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd.double import first_order
from ..autograd.function import Function
from ..dtypes import real_of
from . import arrange, decompositions, elementwise, fft, index_writes, linalg
from . import complex as complex_ops
from . import shape as shape_ops
from . import solves, tensor_more
from .double_backward import _conj, _const, _fit, _formula, _operand, _select


def _outputs(ctx, *arrays):
    """The first outputs of ``ctx``'s node (``arrays``: what forward returned, as it saved
    them) as Tensors of that node, as torch's formulas read an op's outputs: a gradient
    through them reaches the node, summed with its other outputs' (an eigenvector's phase
    cancels only in that sum), without computing A⁻¹ or the factors again."""
    return tuple(_tensor.Tensor._from_op(a, ctx, i) for i, a in enumerate(arrays))


class _Again(Function):
    """Arrays ``node`` saved that are none of its outputs (``EigvalsH``'s eigenvectors,
    ``SVDVals``' U and Vᴴ), as the outputs of a node of the same inputs whose backward is
    ``backward`` on ``node`` (``Eigh``'s, ``SVD``'s): Tensors of A without a second
    factorization. Its formula is ``formula`` (``_eigh``'s, ``_svd``'s) on its own outputs,
    so a third derivative goes through it again."""

    @staticmethod
    def forward(ctx, *inputs, node, arrays, backward, formula):
        ctx.node, ctx.backward_of, ctx.formula = node, backward, formula
        ctx.save_for_backward(*arrays)          # what ``formula`` reads as its outputs
        return arrays

    @staticmethod
    def backward(ctx, *grads):
        return ctx.backward_of(ctx.node, *grads)

    graph_reads_inputs = False       # the formula reads the outputs, not A

    @staticmethod
    def graph_backward(ctx, *grads):
        return ctx.formula(ctx, *grads)


def _eye(n, like, dtype=None):
    return _const(like.xp.eye(n, dtype=dtype or like.dtype))


def _diag_embed(t):
    return arrange.diag_embed(t)


def _diagonal(t):
    return t.diagonal(0, -2, -1)


# ----- einsum ---------------------------------------------------------------------------------
@_formula(linalg.Einsum)
def _einsum(ctx, g):
    operands = [_operand(ctx, i, a) for i, a in enumerate(ctx.saved)]
    return tuple(_einsum_operand_grad(ctx, operands, g, k) if needed else None
                 for k, needed in enumerate(ctx.needs_input_grad))


def _einsum_operand_grad(ctx, operands, g, k):
    # the einsum of the gradient with the other operands to k's labels (each once), as
    # Einsum.backward; then a label only k has broadcast along it, a size-1 dim of k that
    # broadcast summed, and a repeated label (k's diagonal) written on the diagonal
    subs, out_subs = ctx.subscripts[k], ctx.output_subscripts
    unique = "".join(dict.fromkeys(subs))
    others = [i for i in range(len(operands)) if i != k]
    reachable = set(out_subs).union(*(ctx.subscripts[i] for i in others))
    kept = "".join(c for c in unique if c in reachable)
    terms = ",".join([out_subs] + [ctx.subscripts[i] for i in others])
    grad = linalg.einsum(f"{terms}->{kept}", g, *[_conj(operands[i]) for i in others])
    own = dict(zip(subs, operands[k].shape))                        # k's size of each label
    grad = grad.reshape(tuple(grad.shape[kept.index(c)] if c in kept else 1 for c in unique))
    stretched = tuple(d for d, c in enumerate(unique) if own[c] == 1 and grad.shape[d] != 1)
    if stretched:
        grad = grad.sum(stretched, keepdim=True)
    wanted = tuple(own[c] for c in unique)
    if tuple(grad.shape) != wanted:
        grad = grad.expand(wanted)
    if unique == subs:
        return grad
    # a repeated label: a fresh label per repeat and an identity tying it to the first
    fresh = iter(c for c in linalg.SUBSCRIPTS if c not in subs)
    spelled, ties = "", []
    for c in subs:
        if c in spelled:                           # (a fresh label is in no subscript)
            ties.append(c + next(fresh))
            spelled += ties[-1][1]
        else:
            spelled += c
    eyes = [_eye(own[t[0]], grad) for t in ties]
    return linalg.einsum(",".join([unique] + ties) + "->" + spelled, grad, *eyes)


# ----- det, slogdet, inverse, solves ----------------------------------------------------------
@_formula(solves.Det)
def _det(ctx, g):
    # g·conj(det A)·A⁻ᴴ; a matrix with |det A| < 100·eps through the SVD's cofactors
    # instead, as torch's under create_graph (A⁻¹ of a near-singular A would lose the digits)
    saved_a, d = ctx.saved
    a = _operand(ctx, 0, saved_a)
    (det,) = _outputs(ctx, d)
    near = np.abs(backend.to_numpy(d)) < 100 * np.finfo(real_of(a.dtype)).eps
    if not near.any():
        return _det_regular(a, det, g)
    n = a.shape[-1]
    a3, det1, g1, near = a.reshape(-1, n, n), det.reshape(-1), g.reshape(-1), near.reshape(-1)
    parts, order = [], []
    for rows, formula in ((np.flatnonzero(~near), _det_regular),
                          (np.flatnonzero(near), _det_singular)):
        if rows.size:
            parts.append(formula(a3[rows], det1[rows], g1[rows]))
            order.append(rows)
    out = shape_ops.cat(parts, dim=0) if len(parts) > 1 else parts[0]
    return out[np.argsort(np.concatenate(order))].reshape(a.shape)


def _det_regular(a, det, g):
    scale = (g * _conj(det)).unsqueeze(-1).unsqueeze(-1)                  # (..., 1, 1)
    return scale * solves.Inverse.apply(a)[0].mH


def _det_singular(a, det, g):
    # det A = det U · Π s · det Vᴴ: its gradient U diag(α Π_{j≠i} s_j) Vᴴ, α = g·conj(det U
    # det Vᴴ) (Det.backward's cofactors), through the SVD's own gradient
    u, s, vh = decompositions.SVD.apply(a, full_matrices=False)
    alpha = g * _conj(solves.Det.apply(u) * solves.Det.apply(vh))                   # (B,)
    n = s.shape[-1]
    others = elementwise.where(_const(np.eye(n, dtype=bool)), s.new_ones(()),
                               s.unsqueeze(-2).expand(*s.shape[:-1], n, n)).prod(-1)
    cofactors = alpha.unsqueeze(-1) * others.to(a.dtype)                          # (B, n)
    return (u * cofactors.unsqueeze(-2)) @ vh


@_formula(solves.SlogDet)
def _slogdet(ctx, g_sign, g_log):
    # g A⁻ᴴ, g = g_log (- i Im(conj(g_sign) sign) for complex A, whose sign moves with A)
    saved_a, sign = ctx.saved
    a = _operand(ctx, 0, saved_a)
    g = g_log.to(a.dtype)
    if a.is_complex():
        (sign,) = _outputs(ctx, sign)
        g = g - 1j * (g_sign.conj() * sign).imag
    return g.unsqueeze(-1).unsqueeze(-1) * solves.Inverse.apply(a)[0].mH


@_formula(solves.Inverse)
def _inverse(ctx, g, _):
    (inverse,) = _outputs(ctx, ctx.saved[0])
    inverse_h = inverse.mH
    return -(inverse_h @ g @ inverse_h)


@_formula(solves.Solve)
def _solve(ctx, g, _):
    # g_B = A⁻ᴴ g, g_A = -g_B Xᴴ, each summed over the batch dims it was broadcast along
    saved_a, saved_x = ctx.saved
    a = _operand(ctx, 0, saved_a)
    (x,) = _outputs(ctx, saved_x)
    grad_b = solves.Solve.apply(a.mH, g)[0]
    a_shape, b_shape = ctx.shapes
    need_a, need_b = ctx.needs_input_grad
    return (_fit(-(grad_b @ x.mH), a_shape) if need_a else None,
            _fit(grad_b, b_shape) if need_b else None)


@_formula(solves.SolveTriangular)
def _solve_triangular(ctx, g):
    saved_t, saved_x = ctx.saved
    t = _operand(ctx, 0, saved_t)
    (x,) = _outputs(ctx, saved_x)
    grad_b = solves.SolveTriangular.apply(t.mH, g, upper=not ctx.upper, unit=ctx.unit)
    grad_t = None
    if ctx.needs_input_grad[0]:                        # kept on T's triangle
        grad_t = -(grad_b @ x.mH)
        grad_t = elementwise.triu(grad_t, int(ctx.unit)) if ctx.upper else \
            elementwise.tril(grad_t, -int(ctx.unit))
        grad_t = _fit(grad_t, ctx.shapes[0])
    return grad_t, _fit(grad_b, ctx.shapes[1]) if ctx.needs_input_grad[1] else None


# ----- decompositions -------------------------------------------------------------------------
@_formula(decompositions.Cholesky)
def _cholesky(ctx, g, _):
    # Cholesky.backward: g_A = L⁻ᴴ M L⁻¹, M = ½(P + tril(P, -1)ᴴ), P = tril(Lᴴ g_L)
    (low,) = ctx.saved
    (out,) = _outputs(ctx, solves.mH(low) if ctx.upper else low)
    low, g = (out.mH, g.mH) if ctx.upper else (out, g)
    p = elementwise.tril(low.mH @ g)
    m = 0.5 * (p + elementwise.tril(p, -1).mH)
    left = solves.SolveTriangular.apply(low.mH, m, upper=True, unit=False)          # L⁻ᴴ M
    return solves.SolveTriangular.apply(low.mH, left.mH, upper=True, unit=False).mH


@_formula(decompositions.QR)
def _qr(ctx, g_q, g_r):
    saved_q, saved_r = ctx.saved
    m, n = saved_q.shape[-2], saved_r.shape[-1]
    if ctx.mode == "r" or ctx.mode == "complete" and m > n:
        return decompositions.QR.backward(ctx, g_q._array, g_r._array)   # raises torch's error
    q, r = _outputs(ctx, saved_q, saved_r)
    if m >= n:
        return _qr_square_grad(q, r, g_q, g_r)
    x, y, g_y = r[..., :m], r[..., m:], g_r[..., m:]
    g_q = g_q + q @ (y @ g_y.mH)                           # A₂ g_Yᴴ, A₂ = Q Y
    left = _qr_square_grad(q, x, g_q, g_r[..., :m])
    return shape_ops.cat([left, q @ g_y], dim=-1)


def _qr_square_grad(q, r, g_q, g_r):
    # (g_Q + Q copyu(g_R Rᴴ - Qᴴ g_Q)) R⁻ᴴ, R square upper triangular
    n = g_r @ r.mH - q.mH @ g_q
    upper = elementwise.triu(n, 1)
    copyu = upper + upper.mH + _diag_embed(_diagonal(n).real).to(n.dtype)
    inner = g_q + q @ copyu
    return solves.SolveTriangular.apply(r, inner.mH, upper=True, unit=False).mH


def _unused(g):
    # a gradient the engine filled with zeros (its output reached no loss): torch's undefined
    return not g._array.any()


@_formula(decompositions.Eigh)
def _eigh(ctx, g_values, g_vectors):
    values, vectors = _outputs(ctx, *ctx.saved)
    return _eigh_grad(values, vectors, g_values, None if _unused(g_vectors) else g_vectors)


@_formula(decompositions.EigvalsH)
def _eigvalsh(ctx, g):
    _, v = _Again.apply(ctx.inputs[0], node=ctx, arrays=ctx.saved,
                        backward=decompositions.Eigh.backward, formula=_eigh)
    return (v * g.unsqueeze(-2)) @ v.mH


def _eigh_grad(values, v, g_values, g_vectors):
    # decompositions.eigh_grad: V (½(Vᴴg_V - g_Vᴴ V) / E + diag(g_λ)) Vᴴ, E_ij = λⱼ - λᵢ
    if g_vectors is None:
        return (v * g_values.unsqueeze(-2)) @ v.mH
    vhgv = v.mH @ g_vectors
    decompositions.check_eigenvector_phases(vhgv._array)
    skew = 0.5 * (vhgv - vhgv.mH)
    gaps = values.unsqueeze(-2) - values.unsqueeze(-1) + _eye(values.shape[-1], values)
    inner = skew / gaps                                 # 1 on the diagonal: 0 / 1 there
    inner = inner - _diag_embed(_diagonal(inner)) + _diag_embed(g_values)
    return v @ inner @ v.mH


@_formula(decompositions.SVD)
def _svd(ctx, g_u, g_s, g_vh):
    u, s, vh = _outputs(ctx, *ctx.saved)
    k = s.shape[-1]
    if u.shape[-1] != k:                    # full_matrices: the rest gets no gradient
        u, g_u, vh, g_vh = u[..., :k], g_u[..., :k], vh[..., :k, :], g_vh[..., :k, :]
    return _svd_grad(u, s, vh, g_s, None if _unused(g_u) else g_u,
                     None if _unused(g_vh) else g_vh)


@_formula(decompositions.SVDVals)
def _svdvals(ctx, g):
    u, _, vh = _Again.apply(ctx.inputs[0], node=ctx, arrays=ctx.saved,
                            backward=decompositions.SVD.backward, formula=_svd)
    return (u * g.unsqueeze(-2)) @ vh


def _svd_grad(u, s, vh, g_s, g_u, g_vh):
    # decompositions.svd_grad, term for term
    if g_u is None and g_vh is None:
        return (u * g_s.unsqueeze(-2)) @ vh
    s_row, s_col = s.unsqueeze(-2).to(u.dtype), s.unsqueeze(-1).to(u.dtype)
    uhgu = None if g_u is None else u.mH @ g_u
    vhgv = None if g_vh is None else vh @ g_vh.mH
    uhgu = None if uhgu is None else uhgu - uhgu.mH
    vhgv = None if vhgv is None else vhgv - vhgv.mH
    if u.is_complex():
        decompositions.check_singular_vector_phases(
            None if uhgu is None else uhgu._array, None if vhgv is None else vhgv._array,
            s._array)
    squares = s * s
    gaps = squares.unsqueeze(-2) - squares.unsqueeze(-1) + _eye(s.shape[-1], s)
    if uhgu is not None and vhgv is not None:
        inner = (uhgu * s_row + s_col * vhgv) / gaps
    elif uhgu is not None:
        inner = (uhgu / gaps) * s_row
    else:
        inner = s_col * (vhgv / gaps)
    inner = inner + _diag_embed(g_s).to(inner.dtype)
    if u.is_complex() and uhgu is not None:
        inner = inner + _diag_embed(_diagonal(uhgu) / (2 * s))
    m, n = u.shape[-2], vh.shape[-1]
    if m > n and g_u is not None:                    # U's columns span only part of Cᵐ
        gusinv = g_u / s_row
        return (u @ inner + gusinv - u @ (u.mH @ gusinv)) @ vh
    if m < n and g_vh is not None:
        sinvgvh = g_vh / s_col
        return u @ (inner @ vh + sinvgvh - (sinvgvh @ vh.mH) @ vh)
    return u @ inner @ vh


@_formula(decompositions.Pinv)
def _pinv(ctx, g):
    # Pinv.backward's grouping, by the smaller of m and n
    saved_a, saved_p = ctx.saved
    a = _operand(ctx, 0, saved_a)
    (p,) = _outputs(ctx, saved_p)
    ph, gh = p.mH, g.mH
    if a.shape[-2] <= a.shape[-1]:
        k = gh @ p
        kph = k @ ph
        return -(p @ k).mH + kph - (a @ p) @ kph + (ph @ p) @ (gh - k @ a)
    k = p @ gh
    phk = ph @ k
    return -(k @ p).mH + (gh - a @ k) @ p @ ph + phk - phk @ p @ a


@_formula(decompositions.MatrixExp)
def _matrix_exp(ctx, g):
    # the top-right block of exp([[Aᴴ, g], [0, Aᴴ]]), differentiable through MatrixExp again
    a = _operand(ctx, 0, ctx.saved[0])
    n, ah = a.shape[-1], a.mH
    block = shape_ops.cat([shape_ops.cat([ah, g], dim=-1),
                           shape_ops.cat([g.new_zeros(tuple(g.shape)), ah], dim=-1)], dim=-2)
    return decompositions.MatrixExp.apply(block)[..., :n, n:]


# ----- complex views and parts ----------------------------------------------------------------
def _parts(real, imag):
    return complex_ops.Complex.apply(real, imag)


@_formula(complex_ops.Real)
def _real(ctx, g):
    return _parts(g, g.new_zeros(()))


@_formula(complex_ops.Imag)
def _imag(ctx, g):
    return _parts(g.new_zeros(()), g)


@_formula(complex_ops.Complex)
def _complex(ctx, g):
    real_shape, imag_shape = ctx.shapes
    need_real, need_imag = ctx.needs_input_grad
    return (_fit(g.real, real_shape) if need_real else None,
            _fit(g.imag, imag_shape) if need_imag else None)


@_formula(complex_ops.Conj)
def _conj_formula(ctx, g):
    return complex_ops.Conj.apply(g)


@_formula(complex_ops.ViewAsReal)
def _view_as_real(ctx, g):
    return _parts(g[..., 0], g[..., 1])


@_formula(complex_ops.ViewAsComplex)
def _view_as_complex(ctx, g):
    return complex_ops.ViewAsReal.apply(g)


@_formula(complex_ops.Polar)
def _polar(ctx, g):
    # Polar.backward: g_abs = Re(conj(g) sgn(out)), sgn(out) = sign(abs)·e^{iθ} (0 at abs
    # 0); g_angle = Re(conj(g) · i · out)
    abs_, angle = ctx.inputs
    (out,) = _outputs(ctx, ctx.saved[0])
    abs_shape, angle_shape = ctx.shapes
    need_abs, need_angle = ctx.needs_input_grad
    g_conj = g.conj()
    grad_abs = grad_angle = None
    if need_abs:
        turn = complex_ops.Polar.apply(angle.new_ones(()), angle)
        sgn = _const(abs_.xp.sign(abs_._array)) * turn
        grad_abs = _fit((g_conj * sgn).real, abs_shape)
    if need_angle:
        grad_angle = _fit((g_conj * (out * 1j)).real, angle_shape)
    return grad_abs, grad_angle


@_formula(complex_ops.Angle)
def _angle(ctx, g):
    # torch's: g · z / |z|² · i, 0 at z = 0; a real x's angle is constant
    (z,) = ctx.saved
    if z.dtype.kind != "c":
        return g.new_zeros(tuple(g.shape))
    z = _operand(ctx, 0, z)
    zero = _const(ctx.saved[0] == 0)
    squared = elementwise.where(zero, g.new_ones(()), z.abs() ** 2)
    along = g * z / squared * 1j
    return elementwise.where(zero, along.new_zeros(()), along)


# ----- diagonals, strided views ---------------------------------------------------------------
@_formula(arrange.Diagonal)
def _diagonal_formula(ctx, g):
    offset, axis1, axis2 = ctx.where
    return arrange.DiagEmbed.apply(g, shape=ctx.shape, offset=offset, axis1=axis1, axis2=axis2)


@_formula(arrange.DiagEmbed)
def _diag_embed_formula(ctx, g):
    offset, axis1, axis2 = ctx.where
    return arrange.Diagonal.apply(g, offset=offset, axis1=axis1, axis2=axis2)


@_formula(index_writes.DiagonalScatter)
def _diagonal_scatter(ctx, g):
    offset, axis1, axis2 = ctx.where
    need_x, need_src = ctx.needs_input_grad
    grad_x = grad_src = None
    if need_x:
        zeros = g.new_zeros(tuple(ctx.inputs[1].shape))
        grad_x = index_writes.DiagonalScatter.apply(g, zeros, offset=offset, axis1=axis1,
                                                    axis2=axis2)
    if need_src:
        grad_src = arrange.Diagonal.apply(g, offset=offset, axis1=axis1, axis2=axis2)
    return grad_x, grad_src


class _StridedAdd(Function):
    """``as_strided``'s gradient as a node (AsStrided.backward): the gradient added into a
    zero storage at the view's positions, read at x's. With ``transposed``, that map's
    adjoint: divided where x shows a position several times, added into the storage at
    x's positions, read at the view's. Each is the other's gradient, to any order."""

    @staticmethod
    def forward(ctx, grad, geometry, transposed=False):
        ctx.geometry, ctx.transposed = geometry, transposed
        return _strided_adjoint(grad, geometry) if transposed else \
            tensor_more.AsStrided.backward(ctx, grad)      # (which reads ctx.geometry only)

    @staticmethod
    def backward(ctx, grad):
        return tensor_more.AsStrided.backward(ctx, grad) if ctx.transposed else \
            _strided_adjoint(grad, ctx.geometry)

    graph_reads_inputs = False       # a linear map: its formula reads no input values

    @staticmethod
    def graph_backward(ctx, grad):
        return _StridedAdd.apply(grad, geometry=ctx.geometry, transposed=not ctx.transposed)


def _strided_adjoint(grad, geometry):
    # AsStrided.backward's adjoint: x's shape -> the view's
    xp = backend.array_module(grad)
    own, view = geometry
    inside, outside = tensor_more._positions(xp, *own), tensor_more._positions(xp, *view)
    length = 1 + max([int(p.max()) for p in (inside, outside) if p.size], default=-1)
    shown = xp.bincount(inside.reshape(-1), minlength=length)       # x's copies of each place
    total = xp.zeros(length, dtype=grad.dtype)                       # (storage,)
    xp.add.at(total, inside.reshape(-1), (grad / shown[inside]).reshape(-1))
    return total[outside].astype(grad.dtype, copy=False)


@_formula(tensor_more.AsStrided)
def _as_strided(ctx, g):
    return _StridedAdd.apply(g, geometry=ctx.geometry)


class _WindowsAdded(Function):
    """``unfold``'s gradient as a node (Unfold.backward): each window added back into its
    place; its gradient is ``unfold`` again, to any order."""

    @staticmethod
    def forward(ctx, grad, node):
        ctx.shape, ctx.where = node.shape, node.where
        return tensor_more.Unfold.backward(node, grad)

    @staticmethod
    def backward(ctx, grad):
        axis, size, step, _ = ctx.where      # (Unfold.forward sets the same shape and where)
        return tensor_more.Unfold.forward(ctx, grad, axis, size, step).copy()

    @staticmethod
    def graph_backward(ctx, grad):
        axis, size, step, _ = ctx.where
        return tensor_more.Unfold.apply(grad, axis=axis, size=size, step=step)


@_formula(tensor_more.Unfold)
def _unfold(ctx, g):
    return _WindowsAdded.apply(g, node=ctx)


# ----- index writes ---------------------------------------------------------------------------
@_formula(index_writes.ScatterReduce)
def _scatter_reduce(ctx, g):
    # ScatterReduce.backward with its masks and counts as constants: linear in g for
    # sum, mean, amax and amin; prod's, products of the others, torch's formula below
    x, src, out = ctx.saved
    places, reduce, include_self = ctx.places, ctx.reduce, ctx.include_self
    if reduce == "prod":
        return _scatter_prod(ctx, g)
    if reduce not in ("sum", "mean", "amax", "amin"):
        return tuple(first_order(ctx, [g]))          # max, min: backward raises torch's error
    xp = g.xp

    def picked(t):                                  # t's elements at ``places``: torch's gather
        return t.reshape(-1)[places].reshape(src.shape)
    if reduce == "sum":
        grad_x, grad_src = g, picked(g)
    elif reduce == "mean":
        grad_x = g / _const(index_writes._counts(xp, x.shape, places, include_self)
                            .astype(g.dtype))
        grad_src = picked(grad_x)
    else:                                          # ties share the gradient
        x_won = x == out
        src_won = src == out.reshape(-1)[places].reshape(src.shape)
        winners = xp.array(x_won, dtype=g.dtype, order="C")
        xp.add.at(winners.reshape(-1), places, src_won.reshape(-1).astype(g.dtype))
        shared = g / _const(winners)
        grad_x = _const(x_won.astype(g.dtype)) * shared
        grad_src = _const(src_won.astype(g.dtype)) * picked(shared)
    if not include_self:                           # x's places that took a value get none
        taken = xp.zeros(x.shape, bool)
        taken.reshape(-1)[places] = True
        grad_x = elementwise.where(_const(taken), g.new_zeros(()), grad_x)
    need_x, need_src = ctx.needs_input_grad
    return (grad_x.to(x.dtype) if need_x else None,
            grad_src.to(src.dtype) if need_src else None)


def _scatter_prod(ctx, g):
    # torch's scatter_reduce_backward for prod, in Tensor ops (index_writes._prod_grads):
    # g_x = g · P(x with its zeros as 1) / (x with its zeros as 1); g_src = g · P(x, src with
    # its place's only zero as 1) at a lone zero, else g · out / (src with its zeros as 1),
    # both gathered at src's places; P the scatter_reduce product, out the node's own output
    x, src, out = ctx.saved
    places, include_self = ctx.places, ctx.include_self
    xp = g.xp
    x_t, src_t = _operand(ctx, 0, x), _operand(ctx, 1, src)
    (out_t,) = _outputs(ctx, out)
    where = xp.unravel_index(places, x.shape)                  # src's places, flat order

    def product(into, values):
        return index_writes.ScatterReduce.apply(into, values, where=where, reduce="prod",
                                                include_self=include_self)

    def picked(t):                                             # t at src's places
        return t.reshape(-1)[places].reshape(src.shape)
    grad_x = grad_src = None
    need_x, need_src = ctx.needs_input_grad
    if need_x:
        x_ones = _select(x == 0, x_t.new_ones(()), x_t)
        grad_x = g * product(x_ones, src_t) / x_ones
        if not include_self:                       # x's places that took a value get none
            taken = xp.zeros(x.shape, bool)
            taken.reshape(-1)[places] = True
            grad_x = _select(taken, g.new_zeros(()), grad_x)
        grad_x = grad_x.to(x.dtype)
    if need_src:
        zero = src == 0
        zeros = xp.bincount(places, weights=zero.reshape(-1), minlength=x.size)  # per place
        alone = zero & (zeros[places].reshape(src.shape) == 1)
        others = product(x_t, _select(alone, src_t.new_ones(()), src_t))
        grad_src = _select(alone, picked(g * others),
                           picked(g * out_t) / _select(zero, src_t.new_ones(()), src_t))
        if (zeros > 1).any():
            grad_src = _Refused.apply(grad_src, message=_PROD_ZEROS)
        grad_src = grad_src.to(src.dtype)
    return grad_x, grad_src


_PROD_ZEROS = ("scatter_reduce(): Double backward is unsupported for src when >1 zeros in src "
               "are scattered to the same position in self")                   # torch's words


class _Refused(Function):
    """The identity on a gradient whose own gradient torch refuses (its DelayedError): the
    value, and torch's error for a backward through it."""

    @staticmethod
    def forward(ctx, grad, message):
        ctx.message = message
        return grad.copy()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(ctx.message)


# ----- Fourier transforms ---------------------------------------------------------------------
def _cut_or_padded(t, shape, axes):
    # fft.fitted on a Tensor: cut or zero-padded at the end of each of ``axes`` to ``shape``
    if any(t.shape[a] > shape[a] for a in axes):
        t = t[tuple(slice(0, shape[a]) if a in axes else slice(None) for a in range(t.ndim))]
    for a in axes:
        if t.shape[a] < shape[a]:
            zeros = list(t.shape)
            zeros[a] = shape[a] - t.shape[a]
            t = shape_ops.cat([t, t.new_zeros(tuple(zeros))], dim=a)
    return t


@_formula(fft.FFT)
def _fft(ctx, g):
    grad = fft.FFT.apply(g, axes=ctx.axes, sizes=None, norm=fft.DUAL[ctx.norm],
                         inverse=not ctx.inverse)
    grad = _cut_or_padded(grad, ctx.shape, ctx.axes)
    return grad.real if ctx.real else grad


@_formula(fft.RFFT)
def _rfft(ctx, g):
    # the half spectrum zero-padded to the full length, inverse-transformed, its real part
    full = list(g.shape)
    full[ctx.axes[-1]] = ctx.sizes[-1]
    spectrum = _cut_or_padded(g, full, ctx.axes[-1:])
    grad = fft.FFT.apply(spectrum, axes=ctx.axes, sizes=None, norm=fft.DUAL[ctx.norm],
                         inverse=True).real
    return _cut_or_padded(grad, ctx.shape, ctx.axes)


@_formula(fft.IRFFT)
def _irfft(ctx, g):
    # the one-sided transform, the bins whose mirror image the half spectrum omits doubled
    grad = fft.RFFT.apply(g, axes=ctx.axes, sizes=tuple(g.shape[a] for a in ctx.axes),
                          norm=fft.DUAL[ctx.norm])
    n, last = ctx.sizes[-1], ctx.axes[-1]
    bins = np.ones(n // 2 + 1, real_of(grad.dtype))
    bins[1:1 + n - (n // 2 + 1)] = 2
    grad = grad * _const(g.xp.asarray(bins).reshape((-1,) + (1,) * (grad.ndim - last - 1)))
    grad = _cut_or_padded(grad, ctx.shape, ctx.axes)
    return grad.real if ctx.real else grad


# linear maps and views: their formulas read no input's values (an input written in place
# since is no error, as for the shape ops)
for _op in (fft.FFT, fft.RFFT, fft.IRFFT, complex_ops.Real, complex_ops.Imag, complex_ops.Conj,
            complex_ops.ViewAsReal, complex_ops.ViewAsComplex, complex_ops.Complex,
            arrange.Diagonal, arrange.DiagEmbed, tensor_more.AsStrided, tensor_more.Unfold):
    _op.graph_reads_inputs = False
