"""The primitives' gradients written with Tensor ops, for double backward.

Under ``create_graph=True`` the engine (``autograd/double.py``) calls a node's
``graph_backward(ctx, *grads)`` with the output gradients as Tensors; it returns one Tensor
(or None) per input, computed by ops that record nodes, from the node's input Tensors
(``ctx.inputs``; a constant input, None there, is read from what forward saved). Each
formula is the op's closed-form backward again (the same formula as its ``backward`` on
arrays, next to the op), so a gradient of a gradient is the engine's ordinary backward
through these nodes. A Hessian-vector product, a gradient penalty and ``hessian`` are that.

The reductions, scans and index writes have theirs in ``double_backward_reductions.py``,
the matrix functions, einsum, complex views and Fourier transforms in
``double_backward_linalg.py``; the nodes above the ops layer (the activations,
``special.py``'s, rrelu's, convolution's, interpolate's, binary cross-entropy's, a write
through a view, a module's backward hooks) carry theirs beside them, with these helpers,
and the fused nodes differentiate their composite twins (``fused/twin.py``). An op without
a formula still gives its exact first-order gradient under ``create_graph=True``; only a
backward through that gradient raises, naming the op.

Example:
    >>> x = mg.tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = mg.autograd.grad((x ** 3).sum(), x, create_graph=True)    # 3x²
    >>> g.sum().backward(); x.grad                                           # 6x
    tensor([ 6., 12.])
"""

import math

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd.double import depends_on
from ..autograd.function import Function
from . import (binary, elementwise, indexing, linalg, logical, pointwise, reductions, shape,
               special, tensor_more, ternary, torch_more)


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


def _formula(function, reads_inputs=True):
    # reads_inputs=False: the formula reads no input's values (a shape op, a mask of saved
    # values, a saved output), so an input written in place since the op is no error
    def attach(formula):
        function.graph_backward = staticmethod(formula)
        function.graph_reads_inputs = reads_inputs
        return formula
    return attach


def _saved_output(ctx, i=0):
    """The node's output ``i`` as forward saved it, as a Tensor whose node is ``ctx``
    itself (torch's formulas read a saved result so): differentiated, it goes back through
    the op's own backward."""
    return _tensor.Tensor._from_op(ctx.saved[i], ctx, i)


def _select(mask, a, b):
    # where(mask, a, b), the mask an array computed from saved values: a constant
    return elementwise.where(_const(mask), a, b)


def _zero_where(mask, t):
    return _select(mask, t.new_zeros(()), t)


def _safe(mask, t):
    # t with 1 where mask: a divisor (or a log's argument) whose result is masked there, so
    # that the masked branch's own gradient is 0, not 0 · inf
    return _select(mask, t.new_ones(()), t)


def _fitted(ctx, *makers):
    # each input's gradient, made only where needed and summed to the input's shape
    return tuple(_fit(make(), shape) if need else None
                 for make, shape, need in zip(makers, ctx.shapes, ctx.needs_input_grad))


def _zero_formula(ctx, g):
    # a step function's gradient: zeros outside the graph, as torch's
    return tuple(g.new_zeros(t.shape) if need else None
                 for t, need in zip(ctx.inputs, ctx.needs_input_grad))


# ----- arithmetic ---------------------------------------------------------------------------
@_formula(elementwise.Add, reads_inputs=False)
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


@_formula(elementwise.Neg, reads_inputs=False)
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
    # formula; kept is the input, or the saved output as a Tensor of this node
    kept = ctx.inputs[0] if ctx.function.saves == "x" else _saved_output(ctx)
    out = ctx.function.df(g, kept)
    if not isinstance(out, _tensor.Tensor):       # an array function read it as a constant
        raise TypeError(f"double backward through {ctx.name()}: its df gave "
                        f"{type(out).__name__}, not a Tensor; give it a formula of its own")
    return out


# the unary ops whose df uses operators only (one that calls xp.cos on its argument would
# read a Tensor as a constant: those have their own formula below)
for _op in (elementwise.Exp, elementwise.Log, elementwise.Sqrt, elementwise.Rsqrt,
            elementwise.Tanh, elementwise.Sigmoid, pointwise.Log10,
            pointwise.Log2, pointwise.Log1p, pointwise.Expm1, pointwise.Reciprocal, special.Tan,
            special.Exp2, special.Atan, special.Atanh):
    _formula(_op, reads_inputs=_op.saves == "x")(_unary)


@_formula(elementwise.Relu, reads_inputs=False)
def _relu(ctx, g):
    # passes where not out <= 0 (at NaN too): a where on a mask of the saved output, so that
    # an inf or NaN gradient stops there, as the array backward's
    return _zero_where(ctx.saved[0] <= 0, g)


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


@_formula(elementwise.Where, reads_inputs=False)
def _where(ctx, g):
    condition, zero = _const(ctx.condition), g.new_zeros(())
    a_shape, b_shape = ctx.shapes
    need_a, need_b = ctx.needs_input_grad
    return (_fit(_tensor_where(condition, g, zero), a_shape) if need_a else None,
            _fit(_tensor_where(condition, zero, g), b_shape) if need_b else None)


def _tensor_where(condition, a, b):
    return elementwise.where(condition, a, b)


@_formula(elementwise.Clamp, reads_inputs=False)
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


@_formula(elementwise.Extremum, reads_inputs=False)
def _extremum(ctx, g):
    a, b = ctx.saved
    beats, zero = ctx.function.beats, g.new_zeros(())
    shared = _tensor_where(_const(a == b), g / 2, g)
    need_a, need_b = ctx.needs_input_grad
    return (_fit(_tensor_where(_const(beats(b, a)), zero, shared), a.shape) if need_a else None,
            _fit(_tensor_where(_const(beats(a, b)), zero, shared), b.shape) if need_b else None)


@_formula(elementwise.Cast, reads_inputs=False)
def _cast(ctx, g):
    return (g.real if g.is_complex() and ctx.input_dtype.kind != "c" else g).to(ctx.input_dtype)


@_formula(elementwise.Clone, reads_inputs=False)
def _clone(ctx, g):
    return g


# torch's formula for ReLU reads its result (threshold_backward): the gradient depends on the
# input with a zero derivative (autograd/double.py); clamp's and max's masks do not
elementwise.Relu.graph_masks_by_inputs = True
elementwise.Relu.graph_reads_result = True       # its result: a third derivative reaches x


# ----- shapes -------------------------------------------------------------------------------
@_formula(shape.Reshape, reads_inputs=False)
def _reshape(ctx, g):
    return g.reshape(ctx.shape)


@_formula(shape.Permute, reads_inputs=False)
def _permute(ctx, g):
    return g.permute([int(i) for i in np.argsort(ctx.axes)])


@_formula(shape.Expand, reads_inputs=False)
def _expand(ctx, g):
    return _fit(g, ctx.shape)


@_formula(shape.Concatenate, reads_inputs=False)
def _concatenate(ctx, g):
    sizes = np.diff([0, *ctx.splits, g.shape[ctx.axis]]).tolist()
    parts = iter(g.split(sizes, dim=ctx.axis))
    return tuple(next(parts) if k else g.new_zeros((0,)) for k in ctx.kept)


@_formula(shape.Split, reads_inputs=False)
def _split(ctx, *grads):
    return shape.cat(list(grads), dim=ctx.axis)


@_formula(reductions.Sum, reads_inputs=False)
def _sum(ctx, g):
    axes = range(len(ctx.shape)) if ctx.axis is None else ctx.axis
    kept = tuple(1 if i in axes else n for i, n in enumerate(ctx.shape))
    if ctx.function.mean:
        g = g / reductions.reduced_size(ctx.shape, ctx.axis)
    return g.reshape(kept).expand(ctx.shape)


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

    @staticmethod
    def graph_backward(ctx, h):                 # a third derivative: x[index] again
        return indexing.GetItem.apply(h, index=ctx.index)


@_formula(indexing.GetItem, reads_inputs=False)
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
    count = math.prod(x_shape[:-1])                            # R, the rows (0 allowed)
    rows = g.reshape(count, g.shape[-1])                       # (R, out)
    grad_x = (g @ _conj(weight)).reshape(x_shape) if need_x else None
    grad_w = None
    if need_w:
        grad_w = rows.transpose(0, 1) @ _conj(x).reshape(count, x_shape[-1])
        grad_w = grad_w.reshape(w_shape)
    grad_b = rows.sum(0) if need_b else None
    return grad_x, grad_w, grad_b


# ----- arithmetic by name, powers, rounding ---------------------------------------------------
def _conj_number(value):
    return value.conjugate() if isinstance(value, complex) else value


@_formula(binary.AddScaled, reads_inputs=False)
def _add_scaled(ctx, g):
    return _fitted(ctx, lambda: g, lambda: g * _conj_number(ctx.alpha))


for _op in (binary.DivRounded, elementwise.Sign, pointwise.Floor,   # Floor: Ceil, Trunc, Round
            tensor_more.ConstantResult):
    _formula(_op, reads_inputs=False)(_zero_formula)


@_formula(elementwise.ToDevice, reads_inputs=False)
def _to_device(ctx, g):
    return elementwise.ToDevice.apply(g, device=ctx.input_device)


@_formula(logical.FloorDivide)
def _floor_divide(ctx, g):
    return ctx.function.backward(ctx, g)           # torch defines none: its error


@_formula(logical.Remainder)
def _remainder(ctx, g):
    # d/db = -(the rounded quotient): a step function of the saved operands (Fmod's too)
    a, b = ctx.saved
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = ctx.function.quotient(backend.array_module(a), a, b)
    return _fitted(ctx, lambda: g, lambda: -g * _const(quotient))


@_formula(elementwise.PowOfNumber)
def _pow_of_number(ctx, g):
    # d base**x = base**x · log(base), 0 where base = 0 and x >= 0
    out = elementwise.PowOfNumber.apply(ctx.inputs[0], base=ctx.base)
    if not ctx.base_is_zero:
        return g * _conj(out * ctx.log_base)
    flat = ctx.saved[1] >= 0                      # (log 0 = -inf: out is 1 where masked)
    return g * _conj(_zero_where(flat, _safe(flat, out) * ctx.log_base))


@_formula(elementwise.PowTensor)
def _pow_tensor(ctx, g):
    # d/dx = e · x^(e-1), 0 where e = 0; d/de = out · log(x), 0 where x = 0 and e >= 0
    x_saved, e_saved, _ = ctx.saved
    x, e = ctx.inputs

    def grad_x():
        flat = e_saved == 0                                # x⁰: constant in x
        return _zero_where(flat, g * _conj(e * _safe(flat, x) ** (e - 1)))

    def grad_e():
        positive = e_saved >= 0 if e_saved.dtype.kind != "c" else \
            (e_saved.imag == 0) & (e_saved.real >= 0)
        flat = positive & (x_saved == 0)
        out = elementwise.PowTensor.apply(x, e)
        return g * _conj(_zero_where(flat, out * _safe(flat, x).log()))
    return _fitted(ctx, grad_x, grad_e)


@_formula(pointwise.Sgn)
def _sgn(ctx, g):
    # (g - sgn(z)² · conj(g)) / (2|z|), 0 at z = 0 (torch's sgn_backward)
    z = ctx.inputs[0]
    at_zero = ctx.saved[0] == 0
    sign = pointwise.Sgn.apply(z)
    return _zero_where(at_zero, (g - sign * sign * g.conj()) / (2 * _safe(at_zero, z.abs())))


@_formula(pointwise.NanToNum)
def _nan_to_num(ctx, g):
    return g * _const(ctx.saved[0])


# ----- two-argument functions (ops/binary.py) -------------------------------------------------
@_formula(binary.Atan2)
def _atan2(ctx, g):
    # b / (a² + b²) and -a / (a² + b²), both 0 at the origin
    a_saved, b_saved, _ = ctx.saved
    a, b = ctx.inputs
    with np.errstate(over="ignore", invalid="ignore"):
        origin = a_saved * a_saved + b_saved * b_saved == 0
    scale = _zero_where(origin, _safe(origin, a * a + b * b).reciprocal())
    return _fitted(ctx, lambda: g * b * scale, lambda: g * -a * scale)


@_formula(binary.Hypot)
def _hypot(ctx, g):
    a, b = ctx.inputs
    out = binary.Hypot.apply(a, b)
    return _fitted(ctx, lambda: g * a / out, lambda: g * b / out)


@_formula(binary.Logaddexp)
def _logaddexp(ctx, g):
    a, b = ctx.inputs
    return _fitted(ctx, lambda: g / _conj(1 + (b - a).exp()),
                   lambda: g / _conj(1 + (a - b).exp()))


@_formula(binary.Logaddexp2)
def _logaddexp2(ctx, g):
    a, b = ctx.inputs
    return _fitted(ctx, lambda: g / (1 + (b - a).exp2()), lambda: g / (1 + (a - b).exp2()))


@_formula(binary.Copysign)
def _copysign(ctx, g):
    # ±1 (out / a), 0 where a is 0: a step function of the saved values; 0 to b
    a, _, out = ctx.saved
    xp = backend.array_module(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = xp.where(a == 0, xp.zeros((), out.dtype), out / xp.where(a == 0, 1, a))
    # torch's formula reads the input: a zero derivative to it (autograd/double.py)
    return _fitted(ctx, lambda: depends_on(g * _const(slope), ctx.inputs[0]),
                   lambda: g.new_zeros(ctx.shapes[1]))


@_formula(binary.Fmax)
def _fmax(ctx, g):                                      # Fmin's too (its own a_wins)
    a, b, _ = ctx.saved
    a_wins = ctx.function.a_wins(a, b)
    return _fitted(ctx, lambda: _zero_where(~a_wins, g), lambda: _zero_where(a_wins, g))


@_formula(binary.Xlogy)
def _xlogy(ctx, g):
    # log(y) (xlogy(g, y)), 0 where x = 0 and y <= 0; x / y
    a_saved, b_saved, _ = ctx.saved
    a, b = ctx.inputs
    return _fitted(ctx, lambda: _zero_where((a_saved == 0) & (b_saved <= 0),
                                            binary.Xlogy.apply(g, b)),
                   lambda: g * a / b)


# ----- three operands (ops/ternary.py) --------------------------------------------------------
@_formula(torch_more.Igamma)
def _igamma(ctx, g):
    # dP/dx = x^(a-1) e^-x / Γ(a) = exp((a - 1) log x - x - lgamma(a)), torch's formula;
    # Q = 1 - P: the negative. None in a: da raises torch's NotImplementedError
    a, x = ctx.inputs
    sign = -1 if ctx.function is torch_more.Igammac else 1
    return _fitted(ctx, lambda: ctx.function.da(g, a, x, None),
                   lambda: g * (sign * ((a - 1) * x.log() - x - a.lgamma()).exp()))


_formula(torch_more.Igammac)(_igamma)


@_formula(ternary.Lerp)
def _lerp(ctx, g):
    start, end, weight = ctx.inputs
    w = _conj(weight) if weight is not None else _conj_number(ctx.scalar)
    shapes = (*ctx.shapes, None if weight is None else weight.shape)
    need_start, need_end, need_weight = ctx.needs_input_grad
    return (_fit(g * (1 - w), shapes[0]) if need_start else None,
            _fit(g * w, shapes[1]) if need_end else None,
            _fit(g * _conj(end - start), shapes[2]) if need_weight else None)


@_formula(ternary.Addcmul)
def _addcmul(ctx, g):                                   # Addcdiv's too
    _, tensor1, tensor2 = (_conj(t) for t in ctx.inputs)
    value = _conj_number(ctx.value)
    if ctx.function.divide:
        return _fitted(ctx, lambda: g, lambda: g * (value / tensor2),
                       lambda: -g * value * tensor1 / (tensor2 * tensor2))
    return _fitted(ctx, lambda: g, lambda: g * (tensor2 * value),
                   lambda: g * (tensor1 * value))


# ----- special functions (ops/special.py, ops/torch_more.py) ----------------------------------
@_formula(special.Erfinv)
def _erfinv(ctx, g):                        # √π/2 · exp(erfinv(y)²)
    out = special.Erfinv.apply(ctx.inputs[0])
    return 0.5 * np.sqrt(np.pi) * (out * out).exp() * g


@_formula(special.Sinc)
def _sinc(ctx, g):
    # (πx cos πx - sin πx) / (πx²), 0 where πx² is 0
    x = ctx.inputs[0]
    (x_saved,) = ctx.saved
    with np.errstate(under="ignore"):
        flat = x_saved * x_saved * np.pi == 0
    product, square = x * np.pi, _safe(flat, x * x * np.pi)
    return _zero_where(flat, g * _conj((product * product.cos() - product.sin()) / square))


@_formula(special.Logit)
def _logit(ctx, g):
    # g / (x (1 - x)); NaN outside [0, 1] without eps, 0 outside [eps, 1 - eps] with it
    (x_saved,) = ctx.saved
    x = ctx.inputs[0]
    x = x if x.dtype == g.dtype else x.to(g.dtype)
    inside = g / (x * (1 - x))
    if ctx.bounds is None:
        return _select((x_saved < 0) | (x_saved > 1), g.new_full((), np.nan), inside)
    low, high = ctx.bounds
    return _zero_where((x_saved < low) | (x_saved > high), inside)


@_formula(special.Deg2Rad)
def _deg2rad(ctx, g):                       # Rad2Deg's too
    return g * ctx.function.factor


_slope(torch_more.Lgamma, lambda x: torch_more.Digamma.apply(x))
_slope(torch_more.Digamma, lambda x: torch_more.Polygamma.apply(x, n=1))


@_formula(torch_more.Polygamma)
def _polygamma(ctx, g):
    return g * torch_more.Polygamma.apply(ctx.inputs[0], n=ctx.n + 1)


@_formula(torch_more.Heaviside)
def _heaviside(ctx, g):
    return ctx.function.backward(ctx, g)           # torch defines none: its error


@_formula(torch_more.Nextafter)
def _nextafter(ctx, g):
    return _fitted(ctx, lambda: g.masked_fill(_tensor.as_tensor(ctx.equal), 0),
                   lambda: g.new_zeros(ctx.shapes[1]))


@_formula(torch_more.Frexp)
def _frexp(ctx, g):                         # g / 2^e, exact: the op itself
    return torch_more.Frexp.apply(g, exponent=ctx.exponent)


@_formula(torch_more.Ldexp)
def _ldexp(ctx, g):                         # g · 2^e, exact: the op itself
    return _fit(torch_more.Ldexp.apply(g, _const(ctx.saved[0])), ctx.shape)

