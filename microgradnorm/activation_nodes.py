"""The common activations of ``F`` as one node each, with PyTorch's node names and its CPU
kernels' formulas: silu, leaky_relu, elu, softplus, mish, hardtanh (and relu6 through it),
glu. Each has a closed-form derivative, which its node computes in one pass where a
composition of primitive ops would record (and run) several; the branch conditions are
PyTorch's, so NaN, ±inf, ±0 and the boundary points give its values and gradients.
``functional.py`` re-exports the functions; each node's gradient again as Tensor ops (for
``create_graph=True``) sits at the end."""

import numpy as np

from . import backend, ops
from .activations import Elu, Pointwise, maybe_in_place
from .autograd.function import Function
from .dtypes import float_of, is_half
from .losses import check_floating
from .ops.double_backward import _formula, _select, _zero_where
from .ops.elementwise import in_opmath
from .tensor import Tensor

__all__ = ["elu", "glu", "hardtanh", "leaky_relu", "mish", "relu6", "silu", "softplus"]


def not_bool(fn, input):
    """PyTorch's refusal of a bool input (no kernel) and of a complex one (no order)."""
    if isinstance(input, Tensor) and input.dtype.kind in "bc":
        kind = RuntimeError if input.dtype == np.bool_ else NotImplementedError
        raise kind(f"{fn}: {input.dtype} inputs are not supported")


# ----- the nodes: f(xp, x, **options) and its derivative from x (activations.Pointwise) ------
class Silu(Pointwise):
    r""":math:`x / (1 + e^{-x})`; the slope :math:`s\,(1 + x (1 - s))`,
    :math:`s = 1 / (1 + e^{-x})` (PyTorch's silu_backward)."""

    def f(xp, x):
        return x / (1 + xp.exp(-x))

    def df(xp, grad, x):
        sigmoid = 1 / (1 + xp.exp(-x))
        return grad * sigmoid * (1 + x * (1 - sigmoid))


class LeakyRelu(Pointwise):
    r""":math:`x` where x > 0, else :math:`x\,s` (NaN kept); the slope 1 where x > 0, else
    s (at 0 too), the slope in the compute dtype, as PyTorch's."""

    def f(xp, x, negative_slope):
        return xp.where(x > 0, x, x * x.dtype.type(negative_slope))

    def df(xp, grad, x, negative_slope):
        return xp.where(x > 0, grad, grad * grad.dtype.type(negative_slope))


class Softplus(Pointwise):
    r""":math:`x` where :math:`x\beta >` threshold, else
    :math:`\mathrm{log1p}(e^{x\beta}) / \beta`; the slope 1 there, else :math:`z / (z + 1)`,
    :math:`z = e^{x\beta}` (β and the threshold in the compute dtype, as PyTorch's)."""

    def f(xp, x, beta, threshold):
        beta, threshold = x.dtype.type(beta), x.dtype.type(threshold)
        scaled = x * beta
        return xp.where(scaled > threshold, x, xp.log1p(xp.exp(scaled)) / beta)

    def df(xp, grad, x, beta, threshold):
        beta, threshold = x.dtype.type(beta), x.dtype.type(threshold)
        scaled = x * beta
        z = xp.exp(scaled)
        return xp.where(scaled > threshold, grad, grad * z / (z + 1))


class Mish(Pointwise):
    r""":math:`x \tanh(\mathrm{log1p}(e^x))`; the slope :math:`t + x\,\sigma(x)(1 - t^2)`,
    :math:`t = \tanh(\mathrm{log1p}(e^x))` (PyTorch's mish_backward)."""

    def f(xp, x):
        return x * xp.tanh(xp.log1p(xp.exp(x)))

    def df(xp, grad, x):
        sigmoid = 1 / (1 + xp.exp(-x))
        tanh_softplus = xp.tanh(xp.log1p(xp.exp(x)))
        return grad * (tanh_softplus + x * sigmoid * (1 - tanh_softplus * tanh_softplus))


class Hardtanh(Pointwise):
    r"""x clipped to [min_val, max_val] (NaN kept; an integer x stays integral); the
    gradient passed strictly inside, 0 at the bounds, outside and at NaN, the bounds in the
    compute dtype, as PyTorch's hardtanh_backward."""

    def f(xp, x, min_val, max_val):
        return xp.clip(x, min_val, max_val)

    def df(xp, grad, x, min_val, max_val):
        return xp.where(_inside(x, min_val, max_val), grad, xp.zeros((), grad.dtype))


def _inside(x, min_val, max_val):
    # strictly between the bounds, NaN not: x in its compute dtype, the bounds rounded to it
    dtype = np.float32 if is_half(x.dtype) else x.dtype.type
    x = x.astype(dtype, copy=False)
    return (x > dtype(min_val)) & (x < dtype(max_val))


class Glu(Function):
    r""":math:`a \otimes \sigma(b)`, a and b the halves of x along ``axis``. The gradient
    (PyTorch's glu_backward): :math:`g\,s` to a and :math:`(1 - s)\,s\,a\,g` to b,
    :math:`s = \sigma(b)` rounded to x's dtype first (its kernel writes the sigmoid into the
    gradient's buffer). Half precision is computed in float32 and rounded once. Saves x
    alone: σ(b) is recomputed, as PyTorch's."""

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis = axis
        ctx.save_for_backward(x)
        xp = backend.array_module(x)
        first, second = _halves(x, axis)                       # (*, n, *) each
        return (first * (1 / (1 + xp.exp(-second)))).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        xp = backend.array_module(x)
        first, second = _halves(x, ctx.axis)                   # (*, n, *) each
        wide = grad.astype(first.dtype, copy=False)
        sigmoid = (1 / (1 + xp.exp(-second))).astype(x.dtype)  # torch's sigmoid_out
        sigmoid = sigmoid.astype(first.dtype, copy=False)
        to_first = (sigmoid * wide).astype(x.dtype, copy=False)
        to_second = ((1 - sigmoid) * sigmoid * first * wide).astype(x.dtype, copy=False)
        return xp.concatenate([to_first, to_second], axis=ctx.axis)   # (*, 2n, *)


def _halves(x, axis):
    # a and b, widened to float32 for half precision (PyTorch's opmath)
    wide = x.astype(np.float32) if is_half(x.dtype) else x
    return backend.array_module(x).split(wide, 2, axis=axis)


# ----- the functions -------------------------------------------------------------------------
def silu(input, inplace=False):
    r""":math:`\mathrm{SiLU}(x) = x\,\sigma(x)` (also called swish); ``inplace`` writes the
    result into ``input``. Floating or complex inputs only, as PyTorch's kernel (complex:
    a composition of ops).

    Example:
        >>> F.silu(mg.tensor([0.0, 1.0]))                      # [0, 0.7311]
    """
    if getattr(getattr(input, "dtype", None), "kind", None) == "c":    # torch: complex too
        compute = in_opmath(lambda x: x * ops.sigmoid(x))
    else:
        check_floating("silu", "input", input)
        compute = Silu.apply
    return maybe_in_place("silu", input, inplace, compute)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    r""":math:`x` where :math:`x > 0`, else :math:`s\,x` with :math:`s` = ``negative_slope``
    (``F.leaky_relu``); the gradient at 0 is :math:`s`, as PyTorch's.

    Example:
        >>> F.leaky_relu(mg.tensor([-2.0, 3.0]), 0.1)          # [-0.2, 3.0]
    """
    check_floating("leaky_relu", "input", input)
    negative_slope = float_of(negative_slope, "leaky_relu", "negative_slope")
    return maybe_in_place("leaky_relu", input, inplace,
                          lambda x: LeakyRelu.apply(x, negative_slope=negative_slope))


def elu(input, alpha=1.0, inplace=False):
    r""":math:`x` where :math:`x > 0`, else :math:`\alpha\,\mathrm{expm1}(x)` (``F.elu``;
    PyTorch's elu kernel, ``activations.Elu``, with scale 1).

    Example:
        >>> F.elu(mg.tensor([-1.0, 2.0]))                      # [e⁻¹ - 1, 2]
    """
    check_floating("elu", "input", input)
    alpha = float_of(alpha, "elu", "alpha")
    return maybe_in_place("elu", input, inplace, lambda x: Elu.apply(
        x, alpha=alpha, scale=1.0, input_scale=1.0, backward_scale=1.0))


def softplus(input, beta=1.0, threshold=20.0):
    r""":math:`\frac{1}{\beta}\log(1 + e^{\beta x})`, and :math:`x` itself where
    :math:`\beta x >` ``threshold`` (``F.softplus``).

    Example:
        >>> F.softplus(mg.tensor([0.0, 100.0]))                # [log 2, 100]
    """
    check_floating("softplus", "input", input)
    beta = float_of(beta, "softplus", "beta")
    threshold = float_of(threshold, "softplus", "threshold")
    return Softplus.apply(input, beta=beta, threshold=threshold)


def mish(input, inplace=False):
    r""":math:`x \tanh(\mathrm{softplus}(x))` elementwise (``F.mish``).

    Example:
        >>> F.mish(mg.tensor([0.0, 1.0]))                      # [0, 0.8651]
    """
    check_floating("mish", "input", input)
    return maybe_in_place("mish", input, inplace, Mish.apply)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    r"""``input`` clipped to [min_val, max_val] (``F.hardtanh``); the gradient passes only
    strictly inside, as PyTorch's (0 at the bounds). An integer input stays integral.

    Example:
        >>> F.hardtanh(mg.tensor([-3.0, 0.5, 3.0]))            # [-1, 0.5, 1]
    """
    ops.base.check_tensor("hardtanh", input)
    not_bool("hardtanh", input)
    min_val = float_of(min_val, "hardtanh", "min_val")
    max_val = float_of(max_val, "hardtanh", "max_val")
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    return maybe_in_place("hardtanh", input, inplace, lambda x: Hardtanh.apply(
        x, min_val=min_val, max_val=max_val))


def relu6(input, inplace=False):
    r""":math:`\min(\max(x, 0), 6)` elementwise (``F.relu6``): ``hardtanh(input, 0, 6)``, as
    PyTorch's (its node ``HardtanhBackward0``), so the gradient passes strictly inside
    (0, 6) and an integer input stays integral.

    Example:
        >>> F.relu6(mg.tensor([-1.0, 3.0, 8.0]))               # [0, 3, 6]
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def glu(input, dim=-1):
    r"""The gated linear unit: :math:`a \otimes \sigma(b)`, a and b the two halves of
    ``input`` along ``dim`` (``F.glu``), one node.

    Shape: (*, 2n, *) -> (*, n, *), the halved dim at ``dim``.

    Example:
        >>> F.glu(mg.ones(4, 6)).shape                         # (4, 3)
    """
    ops.base.check_tensor("glu", input)
    if input.ndim == 0:
        raise RuntimeError("glu: glu does not support scalars because halving size must be "
                           "even")
    axis = ops.normalize_axis("glu", dim, input.ndim, single=True)
    if input.shape[axis] % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {axis} is size "
                           f"{input.shape[axis]}")
    check_floating("glu", "input", input)
    return Glu.apply(input, axis=axis)


# ----- double backward: each node's gradient with Tensor ops (ops/double_backward.py) -------
@_formula(Silu)
def _silu_graph(ctx, g):
    x = ctx.inputs[0]
    sigmoid = x.sigmoid()
    return g * sigmoid * (1 + x * (1 - sigmoid))


@_formula(Mish)
def _mish_graph(ctx, g):
    x = ctx.inputs[0]
    tanh_softplus = x.exp().log1p().tanh()           # PyTorch's composition, op for op
    return g * (tanh_softplus + x * x.sigmoid() * (1 - tanh_softplus * tanh_softplus))


def _held_where(mask, x, x_saved):
    # x where mask, else x's value as a constant: the same value, a zero derivative to x
    return _select(mask, x, ops.base.constant(x_saved))


@_formula(Softplus)
def _softplus_graph(ctx, g):
    # PyTorch's: to g, softplus_backward (linear where xβ > threshold); to x,
    # softplus_double_backward, whose mask is xβ < threshold (0 at the threshold itself)
    (x_saved,), x, options = ctx.saved, ctx.inputs[0], ctx.options
    dtype = np.float32 if is_half(x_saved.dtype) else x_saved.dtype.type
    beta, threshold = dtype(options["beta"]), dtype(options["threshold"])
    with backend.silent_floats():            # the array backward's masks, in its dtype
        scaled = x_saved.astype(dtype, copy=False) * beta
        linear, curved = scaled > threshold, scaled < threshold
    z = (_held_where(curved, x, x_saved) * float(beta)).exp()
    return _select(linear, g, g * z / (z + 1))


@_formula(LeakyRelu)
def _leaky_relu_graph(ctx, g):
    (x,) = ctx.saved
    with backend.silent_floats():            # a bfloat16 NaN compared flags "invalid"
        positive = x > 0
    return _select(positive, g, g * ctx.options["negative_slope"])


@_formula(Hardtanh)
def _hardtanh_graph(ctx, g):
    (x,) = ctx.saved
    with backend.silent_floats():            # a bfloat16 NaN compared flags "invalid"
        inside = _inside(x, ctx.options["min_val"], ctx.options["max_val"])
    return _zero_where(~inside, g)


# torch's formulas read the input only to mask: a zero derivative to it (autograd/double.py)
LeakyRelu.graph_masks_by_inputs = Hardtanh.graph_masks_by_inputs = True


@_formula(Glu)
def _glu_graph(ctx, g):
    first, second = ops.chunk(ctx.inputs[0], 2, dim=ctx.axis)
    sigmoid = second.sigmoid()
    return ops.cat([g * sigmoid, g * first * sigmoid * (1 - sigmoid)], dim=ctx.axis)
