"""Matrix products: ``a @ b`` with NumPy's (and PyTorch's) rules; ``mm``, ``bmm``, ``mv``,
``dot`` and the scaled sums ``addmm``, ``baddbmm``, ``addmv`` over it; ``Linear``, a linear
layer's ``x @ Wᵀ + b`` as one node (``F.linear``); ``einsum``.

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import collections
import math
import numbers
import string

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd.function import Function
from ..autograd.graph import node_alias
from ..dtypes import ComplexScalarError, is_half, torch_name
from .base import conj, reduce_sum, unbroadcast
from .elementwise import in_opmath
from .shape_arguments import tensor_argument

METHODS = ("mv", "dot", "vdot", "outer", "ger", "addmm", "baddbmm", "addmv")
SUBSCRIPTS = string.ascii_letters             # the labels an einsum equation may use


class MatrixShapeError(RuntimeError, ValueError):
    """Operands a product cannot take: torch's RuntimeError, and the ValueError this library
    raised for them before."""


class MissingDimError(MatrixShapeError, IndexError):
    """An operand without a dim that torch reads (its ``size(d)``) before its own shape check
    (``mv`` of a 0-d matrix, ``addbmm`` of a 2-D batch2): torch's IndexError."""


def _check_matmul(a_shape, b_shape):
    if not a_shape or not b_shape:
        raise MatrixShapeError(f"matmul: both operands need at least 1 dim, got shapes "
                               f"{tuple(a_shape)} and {tuple(b_shape)}")
    k_b = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    if a_shape[-1] != k_b:
        which = "only dim" if len(b_shape) == 1 else "dim -2"
        raise MatrixShapeError(f"matmul: shapes {tuple(a_shape)} and {tuple(b_shape)} do not "
                               f"match: a's last dim is {a_shape[-1]}, b's {which} is {k_b}")
    batch_a, batch_b = a_shape[:-2], b_shape[:-2]
    if not batch_a or not batch_b or batch_a == batch_b:
        return                                   # the usual cases: nothing to broadcast
    try:
        np.broadcast_shapes(batch_a, batch_b)
    except ValueError:
        raise MatrixShapeError(f"matmul: the batch dims of shapes {tuple(a_shape)} and "
                               f"{tuple(b_shape)}, {tuple(batch_a)} and {tuple(batch_b)}, do "
                               "not broadcast") from None


def _matmul(a, b):
    # half precision accumulates in float32 (NumPy has no bfloat16 matmul loop)
    if a.dtype.itemsize >= 4 and b.dtype.itemsize >= 4:
        return a @ b                     # no half-precision operand: the usual case
    dtype = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
    if not is_half(dtype):
        return a @ b
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)


def _stacked_rows(a):
    # (..., n, k) -> (rows, k); not reshape(-1, k): ambiguous for a zero-size array
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


class MatMul(Function):
    """``a @ b``, batched; (..., n, k) @ (k, m) is one product of the stacked rows, forward
    and backward (docs/architecture.md)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        try:
            if a.ndim > 2 and b.ndim == 2:
                return _matmul(_stacked_rows(a), b).reshape(*a.shape[:-1], b.shape[1])
            return _matmul(a, b)
        except ValueError:            # the shapes, checked only when the product failed
            _check_matmul(a.shape, b.shape)
            raise

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        a, b = conj(a, b)               # complex: dL/da = grad @ conj(b)ᵀ, as torch's
        grad_a = grad_b = None
        if b.ndim == 2 and a.ndim >= 2:        # rows (R, k) @ (k, m), R = prod(...)·n
            grad_rows = grad if grad.ndim == 2 else _stacked_rows(grad)         # (R, m)
            if ctx.needs_input_grad[0]:
                grad_a = _matmul(grad_rows, b.T)                                # (R, k)
                grad_a = grad_a if a.ndim == 2 else grad_a.reshape(a.shape)     # (..., n, k)
            if ctx.needs_input_grad[1]:
                rows = a if a.ndim == 2 else _stacked_rows(a)
                grad_b = _matmul(rows.T, grad_rows)          # (k, R) @ (R, m): summed over R
            return grad_a, grad_b
        a2 = a[None, :] if a.ndim == 1 else a              # (..., n, k)
        b2 = b[:, None] if b.ndim == 1 else b              # (..., k, m)
        g2 = grad[..., None] if b.ndim == 1 else grad       # put back the removed axes,
        g2 = g2[..., None, :] if a.ndim == 1 else g2        # m first: (..., n, m)
        if ctx.needs_input_grad[0]:
            grad_a = _matmul(g2, b2.swapaxes(-1, -2))       # (..., n, k)
            grad_a = unbroadcast(grad_a[..., 0, :] if a.ndim == 1 else grad_a, a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = _matmul(a2.swapaxes(-1, -2), g2)       # (..., k, m)
            grad_b = unbroadcast(grad_b[..., 0] if b.ndim == 1 else grad_b, b.shape)
        return grad_a, grad_b


# torch's nodes of the products that are one MatMul here: mm (and matmul of 2-D by 2-D),
# bmm, dot (and matmul of 1-D by 1-D), mv (and matmul of 2-D by 1-D); torch's matmul of
# other dims is a composite of views and one of them (its top node an UnsafeView, a Squeeze
# or a Clone, 3-D by 3-D too): MatMulBackward0 here
Mm = node_alias(MatMul, "Mm")
Bmm = node_alias(MatMul, "Bmm")
Dot = node_alias(MatMul, "Dot")
Mv = node_alias(MatMul, "Mv")
_PRODUCTS = {(2, 2): Mm, (1, 1): Dot, (2, 1): Mv}        # (a.ndim, b.ndim) -> matmul's node


def matmul(input, other):
    """``input @ other`` (``torch.matmul``): (..., n, k) @ (..., k, m) -> (..., n, m), broadcast;
    two tensors of one dtype (no promotion: torch's RuntimeError, as ``mm``'s)."""
    if isinstance(input, _tensor.Tensor) and isinstance(other, _tensor.Tensor):
        a, b = input._array, other._array           # one lookup each: this is the hot path
        dtype = a.dtype
        if dtype != b.dtype:
            raise _mixed_dtypes(input, other)
        if dtype.kind == "b":
            _refuse_bool_product("matmul", input.shape, other.shape)
        node = Mm if a.ndim == 2 == b.ndim else _PRODUCTS.get((a.ndim, b.ndim), MatMul)
        return node.apply(input, other)
    return MatMul.apply(input, other)


def _refuse_bool_product(fn, a_shape, b_shape):
    # torch has no bool product kernel: its dot always refuses, a matrix product only when
    # it computes something (a non-empty result summed over a non-empty dim)
    k = a_shape[-1] if a_shape else 0
    if len(a_shape) == len(b_shape) == 1 or (k and math.prod(np.broadcast_shapes(
            a_shape[:-2], b_shape[:-2])) * (a_shape[-2] if len(a_shape) > 1 else 1)
            * (b_shape[-1] if len(b_shape) > 1 else 1)):
        raise NotImplementedError(f"{fn}: bool operands are not supported (torch has no bool "
                                  "kernel for them either)")


def _mixed_dtypes(a, b):
    # torch's error for operands of two dtypes: its dot's for two vectors, else its mm's
    x, y = torch_name(a.dtype), torch_name(b.dtype)
    if a.ndim == b.ndim == 1:
        return RuntimeError(f"matmul: expected both vectors to have the same dtype, but found "
                            f"{x} and {y}")
    return RuntimeError(f"matmul: expected m1 and m2 to have the same dtype, but got: {x} != {y}")


def _check_operands(fn, ndims, reads=None, **operands):
    # Tensors of ``ndims`` dims (None: any) and one dtype, not bool: torch has no bool kernel;
    # ``reads``: {name: dims torch reads first}, fewer its IndexError (MissingDimError)
    for name, t in operands.items():
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    named = [(name, t, n) for (name, t), n in zip(operands.items(), ndims) if n is not None]
    if any(t.ndim != n for _, t, n in named):
        wanted = {n for _, _, n in named}
        wanted = f"both operands must be {wanted.pop()}-D" if len(wanted) == 1 \
            else ", ".join(f"{name} must be {n}-D" for name, _, n in named)
        short = any(operands[name].ndim < n for name, n in (reads or {}).items())
        raise (MissingDimError if short else MatrixShapeError)(
            f"{fn}: {wanted}, got shapes {' and '.join(str(t.shape) for _, t, _ in named)}")
    kinds = {t.dtype for t in operands.values()}
    if len(kinds) > 1:
        raise RuntimeError(f"{fn}: expected {', '.join(operands)} to have the same dtype, "
                           f"got {', '.join(str(t.dtype) for t in operands.values())}")
    if kinds.pop().kind == "b":
        if None in ndims:                 # the scaled sums, einsum: refused whatever the shapes
            raise NotImplementedError(f"{fn}: bool operands are not supported (torch has no "
                                      "bool kernel for them either)")
        _refuse_bool_product(fn, *(t.shape for t in operands.values()))


def mm(input, mat2):
    """The product of two matrices of one dtype, (n, k) @ (k, m) -> (n, m) (``torch.mm``)."""
    _check_operands("mm", (2, 2), mat1=input, mat2=mat2)
    if input.shape[1] != mat2.shape[0]:
        raise MatrixShapeError(f"mm: mat1 and mat2 shapes cannot be multiplied "
                               f"({input.shape[0]}x{input.shape[1]} and "
                               f"{mat2.shape[0]}x{mat2.shape[1]})")
    return Mm.apply(input, mat2)


def bmm(input, mat2):
    """The batched product of two 3-D tensors of one batch size and dtype,
    (B, n, k) @ (B, k, m) -> (B, n, m) (``torch.bmm``)."""
    _check_operands("bmm", (3, 3), batch1=input, batch2=mat2)
    if mat2.shape[:2] != (input.shape[0], input.shape[2]):
        raise MatrixShapeError(f"bmm: batch2 must have shape ({input.shape[0]}, "
                               f"{input.shape[2]}, m) "
                               f"for batch1 of shape {input.shape}, got {mat2.shape}")
    return Bmm.apply(input, mat2)


def mv(input, vec):
    """The product of a matrix and a vector of one dtype, (n, k) @ (k,) -> (n,)
    (``torch.mv``)."""
    _check_operands("mv", (2, 1), {"mat": 1}, mat=input, vec=vec)
    if input.shape[1] != vec.shape[0]:
        raise MatrixShapeError(f"mv: size mismatch, mat {input.shape[0]}x{input.shape[1]} and vec "
                               f"({vec.shape[0]})")
    return Mv.apply(input, vec)


def dot(input, tensor):
    """The inner product of two 1-D tensors of one size and dtype, a 0-d tensor
    (``torch.dot``): the sum of ``input * tensor``."""
    _check_operands("dot", (1, 1), input=input, tensor=tensor)
    if input.shape != tensor.shape:
        raise MatrixShapeError(f"dot: inconsistent tensor size, expected the same number of "
                               f"elements, got {input.shape[0]} and {tensor.shape[0]}")
    return Dot.apply(input, tensor)


def vdot(input, other):
    """Σ conj(input)·other of two 1-D tensors (``torch.vdot``): ``dot`` for real ones."""
    if isinstance(input, _tensor.Tensor) and input.dtype.kind == "c":
        input = input.conj()
    return dot(input, other)


def _scaled_sum(fn, input, product, beta, alpha):
    """``beta * input + alpha * product``, input broadcast to the product's shape (torch's
    rule: only input broadcasts); with beta 0 input's values are ignored, NaN included."""
    scales = []
    for name, value in (("beta", beta), ("alpha", alpha)):
        if hasattr(value, "_array") and value.ndim == 0 and not value.requires_grad:
            value = value.item()              # a 0-d tensor: its number, as torch's parser
        if not isinstance(value, (numbers.Complex, np.bool_)):
            raise TypeError(f"{fn}: {name} must be a number, got "
                            f"{type(value).__name__} {value!r}")
        if not isinstance(value, (numbers.Real, np.bool_)) and product.dtype.kind != "c":
            if value.imag:                # torch converts a complex scale with no imaginary part
                raise ComplexScalarError(f"{fn}: {name} {value!r} cannot be converted to the "
                                         f"operands' dtype {torch_name(product.dtype)}")
            value = value.real
        scales.append(value)
    beta, alpha = scales
    if product.dtype.kind in "iu":               # torch truncates the scales of integers
        beta, alpha = int(beta), int(alpha)
    shape, lead = product.shape, product.ndim - input.ndim
    if lead < 0 or any(n not in (1, shape[lead + i]) for i, n in enumerate(input.shape)):
        raise MatrixShapeError(f"{fn}: input of shape {input.shape} does not broadcast to the "
                               f"product's shape {shape}")
    if alpha != 1:
        product = product * alpha
    if beta == 0:                                # input still gets its (zero) gradient
        return product + input.masked_fill(True, 0)
    return product + (input if beta == 1 else input * beta)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` (``torch.addmm``): mat1 (n, k), mat2 (k, m),
    input broadcast to (n, m), one dtype; beta 0 ignores input's values, NaN included.

    Example:
        >>> y = mg.addmm(bias, x, weight.t())            # a linear layer, (N, out)
    """
    _check_operands("addmm", (None, 2, 2), input=input, mat1=mat1, mat2=mat2)
    # half precision: the product, its scaling and the sum in float32, rounded once
    # (as torch's kernels; rounding the product, then the sum, is an ulp off)
    return in_opmath(lambda i, a, b: _scaled_sum("addmm", i, mm(a, b), beta, alpha))(
        input, mat1, mat2)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)``, batched (``torch.baddbmm``): batch1
    (B, n, k), batch2 (B, k, m), input broadcast to (B, n, m), one dtype."""
    _check_operands("baddbmm", (None, 3, 3), {"batch1": 2, "batch2": 3}, input=input,
                    batch1=batch1, batch2=batch2)
    return in_opmath(lambda i, a, b: _scaled_sum("baddbmm", i, bmm(a, b), beta, alpha))(
        input, batch1, batch2)                                   # half: as addmm's


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` (``torch.addmv``): mat (n, k), vec (k,), input
    broadcast to (n,), one dtype."""
    _check_operands("addmv", (None, 2, 1), input=input, mat=mat, vec=vec)
    return in_opmath(lambda i, a, b: _scaled_sum("addmv", i, mv(a, b), beta, alpha))(
        input, mat, vec)                                   # half: as addmm's


class Linear(Function):
    r""":math:`y = x W^T + b` in one node, as PyTorch's addmm behind ``F.linear``: one product
    of the stacked rows of x, the bias added into it; backward is one product per gradient
    and a sum over rows for b, where ``x @ weight.T + b`` records a transpose, a matmul and
    a broadcasting add. ``F.linear`` checks the arguments and calls it.

    .. math::
        dx = g\,W, \qquad dW = g^T x, \qquad db = \textstyle\sum_{\text{rows}} g

    (each over the rows of all leading dims; complex operands conjugated, as torch's).

    Args:
        x: (*, in). weight: (out, in), or (in,) for one output without a dim (then no
            bias). bias: (out,), or left out; all of one dtype.

    Shape:
        output (*, out), or (*) for a 1-D weight.

    Example:
        >>> y = Linear.apply(x, w, b)               # x (N, T, 4), w (2, 4), b (2,) -> (N, T, 2)
    """

    saved_names = ("input", "weight")

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        # dW reads x and dx reads W (db reads only the gradient): each is kept only when the
        # gradient that reads it will be asked for (a frozen W: x is not kept)
        need_x, need_w = ctx.needs_input_grad[:2]
        ctx.save_for_backward(x if need_w else None, weight if need_x else None)
        ctx.shapes = x.shape, weight.shape
        rows = x if x.ndim == 2 else _stacked_rows(x)                     # (R, in)
        if bias is not None and bias.dtype.itemsize == 2 and is_half(bias.dtype):
            # torch adds the bias into the float32 accumulator: one rounding, not two
            f32 = np.float32
            y = (rows.astype(f32) @ _as_rows(weight).T.astype(f32) + bias.astype(f32))
            y = y.astype(bias.dtype)
        else:
            y = _matmul(rows, _as_rows(weight).T)                          # (R, out)
            if bias is not None:
                y += bias                      # in place: the product is new memory
        if x.ndim == 2 and weight.ndim == 2:
            return y
        return y.reshape(x.shape[:-1] + weight.shape[:-1])     # (*, out), (*) for a 1-D W

    @staticmethod
    def backward(ctx, grad):
        x, weight = conj(*ctx.saved)          # complex: grad · conj(operand), as torch's
        x_shape, w_shape = ctx.shapes
        need_x, need_w, need_b = (*ctx.needs_input_grad, False)[:3]    # (no bias: 2 inputs)
        out_features = w_shape[0] if len(w_shape) == 2 else 1
        g = grad if grad.ndim == 2 and len(w_shape) == 2 else \
            grad.reshape(math.prod(x_shape[:-1]), out_features)         # (R, out)
        grad_x = grad_w = grad_b = None
        if need_x:
            grad_x = _matmul(g, _as_rows(weight))                          # (R, in)
            grad_x = grad_x if len(x_shape) == 2 else grad_x.reshape(x_shape)
        if need_w:
            rows = x if x.ndim == 2 else _stacked_rows(x)                  # (R, in)
            grad_w = _matmul(g.T, rows).reshape(w_shape)    # (out, R) @ (R, in): summed over R
        if need_b:
            grad_b = _row_sum(g)                                           # (out,)
        return (grad_x, grad_w, grad_b)[:len(ctx.needs_input_grad)]


def _row_sum(g):
    # the bias's gradient, g (R, out) summed over its rows: a product with a row of ones
    # where BLAS takes it (a float32/float64 NumPy g of at most 2^20 values, in cache): 2-4x
    # the speed of NumPy's sum over axis 0, which adds one row after another, and in float32
    # closer to the exact sum (BLAS's blocked partial sums). Larger g: NumPy's sum.
    if type(g) is np.ndarray and g.dtype in _BLAS_FLOATS and 0 < g.size <= 2**20:
        return np.ones(g.shape[0], g.dtype) @ g
    return reduce_sum(g, 0, False)


_BLAS_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _as_rows(weight):
    # a 1-D weight (in,) as the one row of (1, in)
    return weight if weight.ndim == 2 else weight[None, :]


def outer(input, vec2):
    """The outer product of two 1-D tensors, (n,) and (m,) -> (n, m) (``torch.outer``)."""
    tensor_argument("outer", "input", input, 1)
    tensor_argument("outer", "vec2", vec2, 2)
    a_shape, b_shape = np.shape(input), np.shape(vec2)
    if len(a_shape) != 1 or len(b_shape) != 1:
        raise MatrixShapeError(f"outer: both operands must be 1-D, got shapes {a_shape} and "
                               f"{b_shape}")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


ger = outer                 # torch's older name


# ----- einsum ---------------------------------------------------------------------------------
def _contract(arrays, inputs, output, sizes):
    """NumPy's (CuPy's) einsum of ``arrays``, each broadcast to its labels' sizes first, in
    their dtype (half precision summed in float32), always in new memory."""
    xp = backend.array_module(arrays[0])
    dtype = arrays[0].dtype
    full = [xp.broadcast_to(a, tuple(sizes[c] for c in subs)) for a, subs in zip(arrays, inputs)]
    if is_half(dtype):
        full = [a.astype(np.float32) for a in full]
    out = xp.einsum(",".join(inputs) + "->" + output, *full, optimize=len(full) > 1)
    out = xp.asarray(out, dtype=dtype)              # a 0-d result can be a NumPy scalar
    return out if backend.memory_owner(out) is out else out.copy()   # 'ij->ji' is a view


class Einsum(Function):
    """``einsum`` of arrays whose subscripts are letters only (the ellipsis spelled out).

    A closed form earns the node: the gradient of operand k is the einsum of the output's
    gradient with the other operands, to k's subscripts, where a composition would take a
    permute, reshape and matmul per pair. A subscript only k has (summed inside it) gets
    the gradient broadcast along it; a repeated one (k's diagonal) gets it on the diagonal,
    zeros elsewhere; a size-1 dim that broadcast gets the sum.
    """

    @staticmethod
    def forward(ctx, *arrays, subscripts, output, sizes):
        ctx.subscripts, ctx.output_subscripts, ctx.sizes = subscripts, output, sizes
        ctx.save_for_backward(*arrays)           # each operand's gradient reads the others
        return _contract(arrays, subscripts, output, sizes)

    @staticmethod
    def backward(ctx, grad):
        arrays = ctx.saved
        return tuple(_operand_grad(ctx, arrays, grad, k) if needed else None
                     for k, needed in enumerate(ctx.needs_input_grad))


def _operand_grad(ctx, arrays, grad, k):
    subs, sizes = ctx.subscripts[k], ctx.sizes
    unique = "".join(dict.fromkeys(subs))        # k's labels, each once, in order
    others = [i for i in range(len(arrays)) if i != k]
    reachable = set(ctx.output_subscripts).union(*(ctx.subscripts[i] for i in others))
    kept = "".join(c for c in unique if c in reachable)
    g = _contract([grad] + list(conj(*[arrays[i] for i in others])),      # complex: conj
                  [ctx.output_subscripts] + [ctx.subscripts[i] for i in others], kept, sizes)
    xp = backend.array_module(g)
    if kept != unique:                           # summed inside k alone: the same all along
        g = g.reshape(tuple(sizes[c] if c in reachable else 1 for c in unique))
        g = xp.broadcast_to(g, tuple(sizes[c] for c in unique)).copy()
    if unique != subs:                           # a diagonal of k: back onto it, zeros around
        diagonal = xp.zeros(tuple(sizes[c] for c in subs), g.dtype)
        diagonal[tuple(xp.arange(sizes[c]).reshape([-1 if u == c else 1 for u in unique])
                       for c in subs)] = g
        g = diagonal
    stretched = tuple(d for d, (c, n) in enumerate(zip(subs, arrays[k].shape))
                      if n == 1 and sizes[c] != 1)
    return reduce_sum(g, stretched, True) if stretched else g


def _spelled_out(equation, shapes):
    """(each operand's subscripts, the output's): spaces dropped, each ellipsis written as
    letters the equation does not use, right-aligned as broadcasting aligns dims, and the
    implicit output (no "->") made explicit: the ellipsis, then the labels used once, sorted.
    """
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    for where, text, allowed in (("inputs", lhs, SUBSCRIPTS + ",."), ("output", rhs,
                                                                       SUBSCRIPTS + ".")):
        bad = [c for c in text if c not in allowed]
        if bad:
            raise RuntimeError(f"einsum(): invalid subscript {bad[0]!r} in the {where} of "
                               f"{equation!r}: subscripts must be in [a-zA-Z]")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        more = "more" if len(shapes) > len(terms) else "fewer"
        raise RuntimeError(f"einsum(): {more} operands were provided ({len(shapes)}) than "
                           f"specified in the equation {equation!r} ({len(terms)})")
    under_ellipsis = []                          # each operand's dims under its ellipsis
    for i, (term, shape) in enumerate(zip(terms + [rhs], shapes + [None])):
        letters = term.replace("...", "", 1)
        if "." in letters:
            raise RuntimeError(f"einsum(): a '.' of {term!r} is not part of one ellipsis "
                               f"'...' ({equation!r})")
        if shape is None:
            break
        if "..." not in term and len(letters) != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(letters)}) does not match the number of dimensions "
                               f"({len(shape)}) for operand {i} and no ellipsis was given")
        if len(letters) > len(shape):
            raise RuntimeError(f"einsum(): operand {i} has {len(shape)} dims, fewer than the "
                               f"{len(letters)} subscripts beside its ellipsis")
        under_ellipsis.append(len(shape) - len(letters))
    free = [c for c in SUBSCRIPTS if c not in equation]
    ellipsis = "".join(free[:max(under_ellipsis)])
    inputs = [t.replace("...", ellipsis[len(ellipsis) - n:]) for t, n in zip(terms, under_ellipsis)]
    if not arrow:
        counts = collections.Counter(lhs.replace("...", "").replace(",", ""))
        return inputs, ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1))
    output = rhs.replace("...", ellipsis)
    for c in output:
        if output.count(c) > 1:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                               f"the output of {equation!r}")
        if not any(c in subs for subs in inputs):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                               f"equation {equation!r} for any input operand")
    return inputs, output


def _label_sizes(inputs, shapes, ellipsis_labels):
    """The size of each label: one size within an operand, broadcast (1 or equal) across."""
    sizes = {}
    for i, (subs, shape) in enumerate(zip(inputs, shapes)):
        own = {}
        for c, n in zip(subs, shape):
            if own.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but "
                                   f"the sizes don't match, {own[c]} != {n}")
        for c, n in own.items():
            seen = sizes.setdefault(c, n)
            if seen != n and 1 not in (seen, n):
                what = "a dim under the ellipsis" if c in ellipsis_labels else f"subscript {c}"
                raise RuntimeError(f"einsum(): {what} has size {n} for operand {i} which "
                                   f"does not broadcast with previously seen size {seen}")
            sizes[c] = n if seen == 1 else seen
    return sizes


def _sublist_equation(args):
    """torch's sublist form ``einsum(x, [0, 1], y, [1], [0])`` as ``("ab,b->a", (x, y))``:
    labels 0-25 are A-Z, 26-51 a-z (as torch's, so an implicit output is in label order),
    and ``...`` (Ellipsis) the ellipsis."""
    def spelled(sublist):
        out = []
        for label in sublist:
            if label is Ellipsis:
                out.append("...")
            elif isinstance(label, numbers.Integral) and 0 <= label < 52:
                out.append((string.ascii_uppercase + string.ascii_lowercase)[label])
            else:
                raise ValueError(f"einsum(): subscript in subscript list is not within the "
                                 f"valid range [0, 52), got {label!r}")
        return "".join(out)
    operands, subscripts = args[0:len(args) - len(args) % 2:2], args[1::2]
    equation = ",".join(spelled(s) for s in subscripts)
    if len(args) % 2:
        equation += "->" + spelled(args[-1])
    return equation, operands


def einsum(equation, *operands):
    """The sum of products of ``operands``' elements that ``equation`` names
    (``torch.einsum``): "ij,jk->ik" is a matrix product, "bij->bji" a transpose, "ii" a
    trace; without "->", the output is the labels used once, sorted. An ellipsis "..."
    stands for the dims the subscripts leave, broadcast across operands; so does a size-1
    dim. The operands are tensors of one dtype, or one list of them; torch's sublist form,
    ``einsum(x, [0, 1], y, [1], [0])``, is taken too.

    Example:
        >>> scores = mg.einsum("bhqd,bhkd->bhqk", q, k)   # attention scores, (B, H, T, T)
    """
    if isinstance(equation, _tensor.Tensor) and operands:
        equation, operands = _sublist_equation((equation,) + operands)
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): equation must be a str, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand")
    _check_operands("einsum", (None,) * len(operands),
                    **{f"operand {i}": t for i, t in enumerate(operands)})
    shapes = [t.shape for t in operands]
    inputs, output = _spelled_out(equation, shapes)
    ellipsis = set("".join(inputs)) - set(equation)
    sizes = _label_sizes(inputs, shapes, ellipsis)
    return Einsum.apply(*operands, subscripts=tuple(inputs), output=output, sizes=sizes)
