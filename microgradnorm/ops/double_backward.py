"""The primitives' gradients written with Tensor ops, for double backward.

Under ``create_graph=True`` the engine (``autograd/double.py``) calls a node's
``graph_backward(ctx, *grads)`` with the output gradients as Tensors; it returns one Tensor
(or None) per input, computed by ops that record nodes, from the node's input Tensors
(``ctx.inputs``; a constant input, None there, is read from what forward saved). Each
formula is the op's closed-form backward again (the same formula as its ``backward`` on
arrays, next to the op), so a gradient of a gradient is the engine's ordinary backward
through these nodes. A Hessian-vector product, a gradient penalty and ``hessian`` are that.

An op without a formula here still gives its exact first-order gradient under
``create_graph=True``; only a backward through that gradient raises, naming the op.

Example:
    >>> x = mg.tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = mg.autograd.grad((x ** 3).sum(), x, create_graph=True)    # 3x²
    >>> g.sum().backward(); x.grad                                           # 6x
    tensor([ 6., 12.])
"""

import numpy as np

from .. import tensor as _tensor
from ..autograd.function import Function
from . import elementwise, indexing, linalg, pointwise, reductions, shape, special


def _const(array):
    # a saved array (a constant operand, a mask) as a Tensor without history
    return _tensor.Tensor._from_op(np.asarray(array) if np.isscalar(array) else array, None)


def _operand(ctx, i, saved):
    # input i as a Tensor: the caller's Tensor, else the constant forward saved
    t = ctx.inputs[i]
    return t if t is not None else _const(saved)


def _conj(t):
    return t.conj() if t.is_complex() else t


def _fit(g, shape):
    return g if tuple(g.shape) == tuple(shape) else g.sum_to_size(shape)


def _formula(function):
    def attach(formula):
        function.graph_backward = staticmethod(formula)
        return formula
    return attach


# ----- arithmetic ---------------------------------------------------------------------------
@_formula(elementwise.Add)
def _add(ctx, g):
    a_shape, b_shape = ctx.shapes
    need_a, need_b = ctx.needs_input_grad
    return (_fit(g, a_shape) if need_a else None,
            _fit(-g if ctx.function.sign < 0 else g, b_shape) if need_b else None)


@_formula(elementwise.Mul)
def _mul(ctx, g):
    saved_a, saved_b = ctx.saved
    (a_shape, b_shape), (need_a, need_b) = ctx.shapes, ctx.needs_input_grad
    a, b = _operand(ctx, 0, saved_a), _operand(ctx, 1, saved_b)
    return (_fit(g * _conj(b), a_shape) if need_a else None,
            _fit(g * _conj(a), b_shape) if need_b else None)


@_formula(elementwise.Div)
def _div(ctx, g):
    saved_a, saved_b = ctx.saved
    (a_shape, b_shape), (need_a, need_b) = ctx.shapes, ctx.needs_input_grad
    a, b = _operand(ctx, 0, saved_a), _operand(ctx, 1, saved_b)
    b = _conj(b)
    return (_fit(g / b, a_shape) if need_a else None,
            _fit(-g * _conj(a) / (b * b), b_shape) if need_b else None)


@_formula(elementwise.Neg)
def _neg(ctx, g):
    return -g


@_formula(elementwise.Pow)
def _pow(ctx, g):
    x, n = ctx.inputs[0], ctx.exponent
    if n == 0:
        return g * 0
    return g * _conj(n * x ** (n - 1))


def _unary(ctx, g):
    # df(grad, kept) is written with operators alone: on Tensors it records the same
    # formula; the output it may read is recomputed from the input (one more node)
    x = ctx.inputs[0]
    kept = x if ctx.function.saves == "x" else ctx.function.apply(x)
    return ctx.function.df(g, kept)


# the unary ops whose df uses operators only (one that calls xp.cos on its argument would
# read a Tensor as a constant: those have their own formula below)
for _op in (elementwise.Exp, elementwise.Log, elementwise.Sqrt, elementwise.Rsqrt,
            elementwise.Tanh, elementwise.Sigmoid, elementwise.ReLU, pointwise.Log10,
            pointwise.Log2, pointwise.Log1p, pointwise.Expm1, pointwise.Reciprocal, special.Tan,
            special.Exp2, special.Atan, special.Atanh):
    _op.graph_backward = staticmethod(_unary)


def _slope(function, slope):
    # an op whose derivative is slope(x), itself made of ops
    @_formula(function)
    def formula(ctx, g):
        return g * _conj(slope(ctx.inputs[0]))
    return formula


_slope(pointwise.Sin, lambda x: x.cos())
_slope(pointwise.Cos, lambda x: -x.sin())
_slope(special.Sinh, lambda x: x.cosh())
_slope(special.Cosh, lambda x: x.sinh())
_slope(special.Asin, lambda x: (1 - x * x).rsqrt())
_slope(special.Acos, lambda x: -(1 - x * x).rsqrt())
_slope(special.Asinh, lambda x: (x * x + 1).rsqrt())
_slope(special.Erfc, lambda x: -(2 / np.sqrt(np.pi)) * (-x * x).exp())
_slope(elementwise.Erf, lambda x: (2 / np.sqrt(np.pi)) * (-x * x).exp())


@_formula(special.Acosh)
def _acosh(ctx, g):
    x = ctx.inputs[0]
    if x.is_complex():
        return g * _conj((x + 1).rsqrt() * (x - 1).rsqrt())
    return g * (x * x - 1).rsqrt()


@_formula(elementwise.Abs)
def _abs(ctx, g):
    x = ctx.inputs[0]
    if x.is_complex():
        return g * x / x.abs().masked_fill(x.abs() == 0, 1)
    return g * x.sign()


@_formula(elementwise.Where)
def _where(ctx, g):
    condition, zero = _const(ctx.condition), g.new_zeros(())
    a_shape, b_shape = ctx.shapes
    need_a, need_b = ctx.needs_input_grad
    return (_fit(_tensor_where(condition, g, zero), a_shape) if need_a else None,
            _fit(_tensor_where(condition, zero, g), b_shape) if need_b else None)


def _tensor_where(condition, a, b):
    return elementwise.where(condition, a, b)


@_formula(elementwise.Clamp)
def _clamp(ctx, g):
    # a piecewise-linear op: its gradient is the gradient masked, the masks constants
    x, low, high = ctx.saved
    zero = g.new_zeros(())
    inside = np.ones(x.shape, bool)
    if low is not None:
        inside = inside & (x >= low)
    if high is not None:
        inside = inside & (x <= high)
    need_x, need_low, need_high = ctx.needs_input_grad
    out = [_fit(_tensor_where(_const(inside), g, zero), x.shape) if need_x else None]
    if need_low:
        below = x < low if high is None else (x < low) & (low < high)
        out.append(_fit(_tensor_where(_const(below), g, zero), low.shape))
    else:
        out.append(None)
    if need_high:
        above = x > high if low is None else (x > high) | (high < low)
        out.append(_fit(_tensor_where(_const(above), g, zero), high.shape))
    else:
        out.append(None)
    return tuple(out)


@_formula(elementwise.Extremum)
def _extremum(ctx, g):
    a, b = ctx.saved
    beats, zero = ctx.function.beats, g.new_zeros(())
    shared = _tensor_where(_const(a == b), g / 2, g)
    need_a, need_b = ctx.needs_input_grad
    return (_fit(_tensor_where(_const(beats(b, a)), zero, shared), a.shape) if need_a else None,
            _fit(_tensor_where(_const(beats(a, b)), zero, shared), b.shape) if need_b else None)


@_formula(elementwise.Cast)
def _cast(ctx, g):
    return (g.real if g.is_complex() and ctx.input_dtype.kind != "c" else g).to(ctx.input_dtype)


@_formula(elementwise.Clone)
def _clone(ctx, g):
    return g


# ----- shapes -------------------------------------------------------------------------------
@_formula(shape.Reshape)
def _reshape(ctx, g):
    return g.reshape(ctx.shape)


@_formula(shape.Permute)
def _permute(ctx, g):
    return g.permute(*[int(i) for i in np.argsort(ctx.axes)])


@_formula(shape.Expand)
def _expand(ctx, g):
    return _fit(g, ctx.shape)


@_formula(shape.Concatenate)
def _concatenate(ctx, g):
    sizes = np.diff([0, *ctx.splits, g.shape[ctx.axis]]).tolist()
    parts = iter(g.split(sizes, dim=ctx.axis))
    return tuple(next(parts) if k else g.new_zeros((0,)) for k in ctx.kept)


@_formula(shape.Split)
def _split(ctx, *grads):
    return shape.cat(list(grads), dim=ctx.axis)


@_formula(reductions.Sum)
def _sum(ctx, g):
    axes = range(len(ctx.shape)) if ctx.axis is None else ctx.axis
    kept = tuple(1 if i in axes else n for i, n in enumerate(ctx.shape))
    if ctx.function.mean:
        g = g / reductions.reduced_size(ctx.shape, ctx.axis)
    return g.reshape(kept).expand(*ctx.shape)


class _IndexedAdd(Function):
    """x[index]'s gradient, zeros with the gradient added at ``index``, as a node whose own
    gradient reads ``index`` again."""

    @staticmethod
    def forward(ctx, g, node):
        ctx.index = node.index
        return node.function.backward(node, g)

    @staticmethod
    def backward(ctx, h):
        return h[ctx.index]


@_formula(indexing.GetItem)
def _getitem(ctx, g):
    return _IndexedAdd.apply(g, node=ctx)


# ----- products -----------------------------------------------------------------------------
@_formula(linalg.MatMul)
def _matmul(ctx, g):
    saved_a, saved_b = ctx.saved
    a, b = _conj(_operand(ctx, 0, saved_a)), _conj(_operand(ctx, 1, saved_b))
    a2 = a.unsqueeze(0) if a.ndim == 1 else a                  # (..., n, k)
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b                 # (..., k, m)
    g2 = g.unsqueeze(-1) if b.ndim == 1 else g
    g2 = g2.unsqueeze(-2) if a.ndim == 1 else g2               # (..., n, m)
    need_a, need_b = ctx.needs_input_grad
    grad_a = grad_b = None
    if need_a:
        grad_a = g2 @ b2.transpose(-1, -2)
        grad_a = _fit(grad_a.squeeze(-2) if a.ndim == 1 else grad_a, a.shape)
    if need_b:
        grad_b = a2.transpose(-1, -2) @ g2
        grad_b = _fit(grad_b.squeeze(-1) if b.ndim == 1 else grad_b, b.shape)
    return grad_a, grad_b


@_formula(linalg.Linear)
def _linear(ctx, g):
    saved_x, saved_w = ctx.saved
    x, weight = _operand(ctx, 0, saved_x), _operand(ctx, 1, saved_w)
    x_shape, w_shape = ctx.shapes
    need_x, need_w, need_b = (*ctx.needs_input_grad, False)[:3]
    if len(w_shape) == 1:                                     # one output without a dim
        g = g.unsqueeze(-1)
        weight = weight.unsqueeze(0)
    rows = g.reshape(-1, g.shape[-1])                          # (R, out)
    grad_x = (g @ _conj(weight)).reshape(x_shape) if need_x else None
    grad_w = None
    if need_w:
        grad_w = rows.transpose(0, 1) @ _conj(x).reshape(-1, x_shape[-1])
        grad_w = grad_w.reshape(w_shape)
    grad_b = rows.sum(0) if need_b else None
    return grad_x, grad_w, grad_b
