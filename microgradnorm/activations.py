"""``F``'s activations beyond the common ones of functional.py, with PyTorch's signatures:
hardsigmoid, hardswish, selu, celu, softshrink, hardshrink (one node each, PyTorch's closed
forms), threshold, tanhshrink, softsign, prelu, softmin and gumbel_softmax (compositions
of primitive ops); ``Pointwise``, the base of the one-node activations (here and in
activation_nodes.py, the common ones); and ``maybe_in_place``, how every activation's
``inplace=True`` writes into its input."""

import math
import numbers
import warnings

import numpy as np

from . import backend, dtypes, ops
from . import generator as streams
from . import sampling
from .autograd.double import gradient_reads
from .autograd.function import Function
from .dtypes import float_of, is_floating, is_half
from .fused import softmax
from .fused.arguments import implicit_dim
from .losses import check_floating
from .ops.double_backward import _formula, _select, _zero_where
from .tensor import Tensor

__all__ = ["celu", "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish",
           "maybe_in_place", "prelu", "selu", "softmin", "softshrink", "softsign", "tanhshrink",
           "threshold"]

SELU_ALPHA = 1.6732632423543772848170429916717
_FLOAT32_MAX = float(np.finfo(np.float32).max)
SELU_SCALE = 1.0507009873554804934193349852946


def maybe_in_place(fn, input, inplace, compute):
    """``compute(input)``, or with ``inplace`` written into ``input`` (recorded when a graph
    needs it, by the rules of ``Tensor.add_``: a leaf that requires grad refuses)."""
    if not inplace:
        return compute(input)
    ops.base.check_tensor(fn, input)
    # computed from a copy when recorded: the nodes must not save the memory written next
    return input.copy_(compute(input.clone() if input.requires_grad else input))


# ----- one node each: an elementwise f(x; options) and its derivative from x ---------------
class Pointwise(Function):
    """An elementwise ``f(xp, x, **options)`` whose derivative ``df(xp, grad, x, **options)``
    reads only the input, which is all it saves (``ops.Unary`` with options: a threshold,
    a slope). Half precision is computed in float32 and rounded once, as PyTorch's."""

    @staticmethod
    def forward(ctx, x, **options):
        ctx.options = options
        ctx.save_for_backward(x)
        wide = x.astype(np.float32) if is_half(x.dtype) else x
        out = ctx.function.f(backend.array_module(x), wide, **options)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        if is_half(x.dtype):
            x, wide = x.astype(np.float32), grad.astype(np.float32)
        else:
            wide = grad
        out = ctx.function.df(backend.array_module(x), wide, x, **ctx.options)
        return out.astype(grad.dtype, copy=False)


def _zero(xp, x):
    return xp.zeros((), x.dtype)


class Hardsigmoid(Pointwise):
    r""":math:`\min(\max(x + 3, 0), 6) / 6`; the slope 1/6 (PyTorch's float ``1.0f / 6``,
    in every dtype) strictly inside (-3, 3), 0 elsewhere and at NaN."""

    def f(xp, x):
        return xp.minimum(xp.maximum(x + 3, 0), 6) / 6

    def df(xp, grad, x):
        one_sixth = np.asarray(np.float32(1) / np.float32(6)).astype(grad.dtype)
        return xp.where((x > -3) & (x < 3), grad * one_sixth, _zero(xp, grad))


class Hardswish(Pointwise):
    r""":math:`x \min(\max(x + 3, 0), 6) / 6`; the slope 0 for x <= -3,
    :math:`x / 3 + 1/2` below 3 and 1 from 3 on (PyTorch's branches)."""

    def f(xp, x):
        return x * xp.minimum(xp.maximum(x + 3, 0), 6) / 6

    def df(xp, grad, x):
        inner = xp.where(x < 3, grad * (x / 3 + 0.5), grad)
        return xp.where(x <= -3, _zero(xp, grad), inner)


class Elu(Pointwise):
    r"""PyTorch's elu kernel: :math:`s x` where x > 0, else
    :math:`\mathrm{expm1}(x \cdot i) \cdot (\alpha s)`, the coefficients in x's dtype (ELU:
    s = 1, i = 1; SELU: α and s its constants, i = 1; CELU, its own node: s = 1, i = 1/α).
    The slope where x <= 0 is :math:`i \alpha s\, e^{x i}`, multiplied in PyTorch's order,
    with its backward's own i (``backward_scale``: CELU's is 1 / α rounded to float first)."""

    def f(xp, x, alpha, scale, input_scale, backward_scale):
        dtype = x.dtype.type
        negative = xp.expm1(x * dtype(input_scale)) * (dtype(alpha) * dtype(scale))
        return xp.where(x <= 0, negative, x * dtype(scale))

    def df(xp, grad, x, alpha, scale, input_scale, backward_scale):
        if backward_scale is None:
            raise RuntimeError(f"celu: the backward's 1/alpha: alpha {alpha} cannot be "
                               "converted to type float without overflow")
        dtype, inner = x.dtype.type, x.dtype.type(backward_scale)
        negative = grad * inner * (dtype(alpha) * dtype(scale)) * xp.exp(x * inner)
        return xp.where(x <= 0, negative, grad * dtype(scale))


class Celu(Elu):
    """CELU's node: ``Elu`` under PyTorch's name for it (``CeluBackward0``)."""


class Softshrink(Pointwise):
    r""":math:`x - \lambda` above λ, :math:`x + \lambda` below -λ, 0 between, NaN kept; the
    gradient passes strictly outside [-λ, λ]."""

    def f(xp, x, lambd):
        lambd = x.dtype.type(lambd)
        # 0 with x's sign between (x * 0), as PyTorch's scalar loop
        shrunk = xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, x * 0))
        return xp.where(xp.isnan(x), x, shrunk)

    def df(xp, grad, x, lambd):
        lambd = x.dtype.type(lambd)
        return xp.where((x > lambd) | (x < -lambd), grad, _zero(xp, grad))


class Hardshrink(Pointwise):
    r""":math:`x` outside [-λ, λ], 0 inside (NaN kept); the gradient passes strictly
    outside."""

    def f(xp, x, lambd):
        lambd = x.dtype.type(lambd)
        return xp.where((x >= -lambd) & (x <= lambd), _zero(xp, x), x)

    def df(xp, grad, x, lambd):
        lambd = x.dtype.type(lambd)
        return xp.where((x > lambd) | (x < -lambd), grad, _zero(xp, grad))


# ----- the functions -------------------------------------------------------------------------
def hardsigmoid(input, inplace=False):
    r""":math:`\mathrm{ReLU6}(x + 3) / 6` elementwise (``F.hardsigmoid``): 0 below -3, 1
    above 3, linear between. Floating inputs only, as PyTorch's.

    Example:
        >>> F.hardsigmoid(mg.tensor([-4.0, 0.0, 1.5]))         # [0, 0.5, 0.75]
    """
    check_floating("hardsigmoid", "input", input)
    return maybe_in_place("hardsigmoid", input, inplace, Hardsigmoid.apply)


def hardswish(input, inplace=False):
    r""":math:`x \cdot \mathrm{ReLU6}(x + 3) / 6` elementwise (``F.hardswish``, MobileNetV3's
    activation). Floating inputs only.

    Example:
        >>> F.hardswish(mg.tensor([-4.0, 1.0, 4.0]))           # [0, 2/3, 4]
    """
    check_floating("hardswish", "input", input)
    return maybe_in_place("hardswish", input, inplace, Hardswish.apply)


def selu(input, inplace=False):
    r""":math:`s\,(\max(0, x) + \min(0, \alpha (e^x - 1)))` elementwise (``F.selu``), with
    α = 1.6732632423543772 and s = 1.0507009873554805 (Klambauer et al.'s self-normalising
    constants). Floating inputs only.

    Example:
        >>> F.selu(mg.tensor([1.0, -1.0]))                     # [1.0507, -1.1113]
    """
    check_floating("selu", "input", input)
    return maybe_in_place("selu", input, inplace, lambda x: Elu.apply(
        x, alpha=SELU_ALPHA, scale=SELU_SCALE, input_scale=1.0, backward_scale=1.0))


def celu(input, alpha=1.0, inplace=False):
    r""":math:`\max(0, x) + \min(0, \alpha (e^{x / \alpha} - 1))` elementwise (``F.celu``);
    α = 0 is refused (a RuntimeError, as PyTorch's). Floating inputs only.

    Example:
        >>> F.celu(mg.tensor([2.0, -2.0]), alpha=2.0)          # [2, 2 (e⁻¹ - 1)]
    """
    check_floating("celu", "input", input)
    alpha = float_of(alpha, "celu", "alpha")
    if alpha == 0:
        raise RuntimeError("celu: ZeroDivisionError: alpha cannot be 0 for CELU")
    if input.dtype != np.float64:          # PyTorch's kernel takes alpha and 1/alpha as float
        for v in (float(alpha), 1.0 / alpha):
            if math.isfinite(v) and abs(v) > _FLOAT32_MAX:
                raise RuntimeError(f"celu: value {v} (alpha {alpha} or 1/alpha) cannot be "
                                   "converted to type float without overflow")
    # PyTorch's backward takes 1.0 / alpha.toFloat(): inf where alpha rounds to 0 in float,
    # and its conversion refuses an alpha beyond float's range (None: backward raises)
    small = float(np.float32(alpha)) if abs(alpha) <= _FLOAT32_MAX else None
    backward_scale = None if small is None else math.inf if small == 0 else 1.0 / small
    return maybe_in_place("celu", input, inplace, lambda x: Celu.apply(
        x, alpha=alpha, scale=1.0, input_scale=1.0 / alpha, backward_scale=backward_scale))


def softshrink(input, lambd=0.5):
    r""":math:`x - \lambda` where :math:`x > \lambda`, :math:`x + \lambda` where
    :math:`x < -\lambda`, else 0 (``F.softshrink``); ``lambd`` >= 0. Floating inputs only.

    Example:
        >>> F.softshrink(mg.tensor([-2.0, 0.2, 1.0]))          # [-1.5, 0, 0.5]
    """
    check_floating("softshrink", "input", input)
    lambd = float_of(lambd, "softshrink", "lambd")
    largest = float(dtypes.finfo(input.dtype).max)
    if not 0 <= lambd <= largest:
        raise RuntimeError(f"softshrink: lambda must be in range [0, {largest:g}] for input "
                           f"dtype {input.dtype}, but found {lambd}")
    return Softshrink.apply(input, lambd=lambd)


def hardshrink(input, lambd=0.5):
    r""":math:`x` where :math:`|x| > \lambda`, else 0 (``F.hardshrink``). Floating inputs
    only.

    Example:
        >>> F.hardshrink(mg.tensor([-2.0, 0.2, 1.0]))          # [-2, 0, 1]
    """
    check_floating("hardshrink", "input", input)
    lambd = float_of(lambd, "hardshrink", "lambd")
    return Hardshrink.apply(input, lambd=lambd)


def threshold(input, threshold, value, inplace=False):
    r""":math:`x` where :math:`x > \text{threshold}`, else ``value`` (``F.threshold``); NaN
    is kept, and the gradient passes where x is kept. An integer input stays integral, the
    threshold and the value cast to its dtype first, as PyTorch's; a float16 or bfloat16
    input is compared with the threshold in float32, as PyTorch's kernel does.

    Example:
        >>> F.threshold(mg.tensor([-1.0, 0.5, 2.0]), 1.0, 0.0)      # [0, 0, 2]
    """
    ops.base.check_tensor("threshold", input)
    if input.dtype == np.bool_ or input.dtype.kind == "c":     # no torch kernel for them
        raise NotImplementedError(f"threshold: not implemented for {input.dtype} tensors, "
                                  "as torch's (no order to compare with threshold)")
    given = {"threshold": threshold, "value": value}
    for name, number in given.items():
        given[name] = number = float_of(number, "threshold", name)
        if isinstance(number, numbers.Integral):
            if not -2**63 <= number < 2**64:
                raise OverflowError(f"threshold: {name} {number} is too big to convert (an "
                                    f"int must be in [-2**63, 2**64), as PyTorch's)")
            if is_floating(input.dtype):     # a double first, as PyTorch's (and NumPy's
                given[name] = float(number)  # bfloat16 takes no int beyond int64)
    # cast with PyTorch's Scalar conversion check (an unsigned dtype takes a negative int
    # modulo 2**bits; a float must fit before it is truncated); a half input's threshold in
    # float32, where its kernel compares
    wide = np.dtype(np.float32) if is_half(input.dtype) else input.dtype
    bound = np.asarray(ops.base.fitted("threshold", given["threshold"], wide), wide)
    filler = np.asarray(ops.base.fitted("threshold", given["value"], input.dtype), input.dtype)

    def compute(x):
        with backend.silent_floats():        # a bfloat16 NaN compared flags "invalid"
            keep = ~(x._array.astype(wide, copy=False) <= bound)     # NaN is kept
        out = ops.where(keep, x, ops.base.constant(x.xp.asarray(filler)))
        return gradient_reads(out, x)        # torch's backward reads x (autograd/double.py)
    return maybe_in_place("threshold", input, inplace, compute)


def tanhshrink(input):
    r""":math:`x - \tanh(x)` elementwise (``F.tanhshrink``); an integer input gives the
    default dtype.

    Example:
        >>> F.tanhshrink(mg.tensor([0.0, 1.0]))               # [0, 1 - tanh 1]
    """
    ops.base.check_tensor("tanhshrink", input)
    return input - input.tanh()


def softsign(input):
    r""":math:`x / (1 + |x|)` elementwise (``F.softsign``); an integer input gives the
    default dtype.

    Example:
        >>> F.softsign(mg.tensor([-3.0, 1.0]))                 # [-0.75, 0.5]
    """
    ops.base.check_tensor("softsign", input)
    if input.dtype == np.bool_:
        raise NotImplementedError("softsign: abs is not implemented for bool tensors")
    return input / (input.abs() + 1)


def prelu(input, weight):
    r""":math:`x` where :math:`x > 0`, else :math:`w_c\,x` (``F.prelu``), :math:`w_c` the
    slope of x's channel (dim 1), or one slope for all; the gradient at 0 is the slope.

    Args:
        input: a floating tensor. weight: a tensor of input's dtype, 1 element or one per
            channel (0-d or 1-d).

    Shape: input (N, C, *) (or (C,), or ()), weight (C,) or (1,); output as input.

    Example:
        >>> F.prelu(mg.tensor([[-1.0, 2.0]]), mg.tensor([0.25]))      # [[-0.25, 2]]
    """
    check_floating("prelu", "input", input)
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu: weight must be a Tensor, got {type(weight).__name__}")
    if weight.dtype != input.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype} and "
                           f"{weight.dtype}")
    if weight.size != 1:
        if input.ndim == 0:
            raise RuntimeError("prelu: Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != weight.size:
            raise RuntimeError(f"prelu: Mismatch of parameter numbers and input channel size. "
                               f"Found parameter numbers = {weight.size} and channel size = "
                               f"{channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if input.ndim >= 2:          # (C,) -> (1, C, 1, ...): one slope per channel
        slope = weight.reshape((1, weight.size) + (1,) * (input.ndim - 2))
    else:
        slope = weight.reshape(())
    with backend.silent_floats():            # a bfloat16 NaN compared flags "invalid"
        positive = input._array > 0
    # torch's one node reads both under create_graph=True (autograd/double.py)
    return gradient_reads(ops.where(positive, input, slope * input), input, weight)


# torch's Tensor methods x.hardshrink(lambd) and x.prelu(weight) are these two ops, bound
# here: ops/methods.py binds the others, and ops, a layer below, cannot import F's
Tensor.hardshrink, Tensor.prelu = hardshrink, prelu


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    r""":math:`e^{-x_i} / \sum_j e^{-x_j}` along ``dim`` (``F.softmin``): the softmax of
    -x. ``dtype``: the input cast to it first (after the negation, as PyTorch's); dim None
    picks PyTorch's legacy implicit dim, with its warning.

    Example:
        >>> F.softmin(mg.tensor([1.0, 2.0]), dim=0)            # [0.7311, 0.2689]
    """
    ops.base.check_tensor("softmin", input)
    if dim is None:
        dim = implicit_dim("softmin", input.ndim, _stacklevel)
    negated = -input
    if dtype is not None:
        negated = negated.to(dtype)
    return softmax(negated, dim=dim)     # integers: empty as torch's, else NotImplementedError


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    r"""A sample of the Gumbel-softmax distribution (``F.gumbel_softmax``):
    :math:`\mathrm{softmax}((\ell + g) / \tau)` along ``dim``, :math:`g = -\log e`,
    e drawn ``exponential_()`` from ``mg.default_generator`` (torch's draws for the same
    seed). ``hard``: the one-hot of each argmax in the forward pass, the soft sample's
    gradient in the backward pass (straight through). ``eps`` has no effect (deprecated,
    with PyTorch's warning).

    Example:
        >>> F.gumbel_softmax(logits, tau=0.5, hard=True)       # one-hot rows
    """
    check_floating("gumbel_softmax", "logits", logits)
    dim = dtypes.int_dim("gumbel_softmax", dim)      # None: torch's TypeError, no implicit dim
    tau = float_of(tau, "gumbel_softmax", "tau")
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    draws = np.empty(logits.shape, logits.dtype)
    streams.fill(draws, lambda n, c: sampling.exponential(streams.default_generator, n,
                                                          logits.dtype))
    gumbels = ops.base.constant(logits.xp.asarray(-np.log(draws)))
    y_soft = softmax((logits + gumbels) / tau, dim=dim)
    if not hard:
        return y_soft
    axis = ops.normalize_axis("gumbel_softmax", dim, logits.ndim, single=True)
    if logits.ndim == 0:
        return y_soft - y_soft.detach() + 1.0
    ops.base.check_reducible("gumbel_softmax", logits.shape, (axis,))   # torch's max()
    index = y_soft._array.argmax(axis=axis)                       # the first of a tie
    positions = np.arange(logits.shape[axis]).reshape(
        (-1,) + (1,) * (logits.ndim - 1 - axis))
    y_hard = (np.expand_dims(backend.to_numpy(index), axis) == positions).astype(logits.dtype)
    return ops.base.constant(logits.xp.asarray(y_hard)) - y_soft.detach() + y_soft


# ----- double backward: each node's gradient with Tensor ops (ops/double_backward.py) -------
def _compute_type(x):
    # the scalar type the array backward rounds its coefficients to (float32 for half)
    return np.float32 if is_half(x.dtype) else x.dtype.type


@_formula(Hardsigmoid)
def _hardsigmoid_graph(ctx, g):
    (x,) = ctx.saved
    one_sixth = float(np.float32(1) / np.float32(6))
    return _zero_where(~((x > -3) & (x < 3)), g * one_sixth)


@_formula(Hardswish)
def _hardswish_graph(ctx, g):
    (x_saved,), x = ctx.saved, ctx.inputs[0]
    return _zero_where(x_saved <= -3, _select(x_saved < 3, g * (x / 3 + 0.5), g))


@_formula(Elu)
def _elu_graph(ctx, g):
    (x_saved,), x, options = ctx.saved, ctx.inputs[0], ctx.options
    if options["backward_scale"] is None:
        return ctx.function.backward(ctx, g._array)          # raises its error
    dtype = _compute_type(x_saved)
    inner, scale = float(dtype(options["backward_scale"])), float(dtype(options["scale"]))
    coefficient = float(dtype(options["alpha"]) * dtype(options["scale"]))
    # PyTorch's: to g, elu_backward (x <= 0); to x, elu_double_backward, 0 at x = 0 itself:
    # there x enters as a constant of its value
    held = _select(x_saved < 0, x, ops.base.constant(x_saved))
    return _select(x_saved <= 0, g * inner * coefficient * (held * inner).exp(), g * scale)


def _shrink_graph(ctx, g):
    # the gradient passes strictly outside [-λ, λ]: a mask of the saved input
    (x,) = ctx.saved
    lambd = _compute_type(x)(ctx.options["lambd"])
    return _zero_where(~((x > lambd) | (x < -lambd)), g)


Softshrink.graph_backward = Hardshrink.graph_backward = staticmethod(_shrink_graph)
# torch's formula reads the input to mask: a zero derivative to it (autograd/double.py)
Softshrink.graph_masks_by_inputs = Hardshrink.graph_masks_by_inputs = True
Hardsigmoid.graph_masks_by_inputs = True     # (torch's raises on a second backward through it)
