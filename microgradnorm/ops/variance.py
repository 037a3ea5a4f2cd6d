"""The variance's nodes: ``Var``, Σ(x - mean)²/dof over some dims in one node (torch's
``VarBackward0``), and ``StdFromVar``, its square root; and ``mean_array``, the mean both
``Mean`` and ``Var`` compute. ``reductions.py``'s ``var``, ``std``, ``var_mean`` and
``std_mean`` parse torch's arguments and apply them."""

import math

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..dtypes import is_floating, is_half
from .base import reduce_sum


def mean_array(x, axis, keepdims):
    """The mean of ``x`` over ``axis``: float32 accumulated in float64 and rounded once (the
    mean of a count or a 0/1 mask, ``(x > t).float().mean()``, is sum/n correctly rounded, as
    torch's exact sum gives, and a constant slice's is exact); float64 corrected by the
    centred sum (``backend.corrected_mean``: exact on a constant slice); half precision
    accumulated in float32."""
    if x.size and x.dtype == np.float32:
        with np.errstate(invalid="ignore"):                  # inf - inf: NaN, silently
            return x.mean(axis=axis, keepdims=keepdims, dtype=np.float64).astype(x.dtype)
    if x.size and is_floating(x.dtype) and not is_half(x.dtype):
        return backend.corrected_mean(x, axis, keepdims)
    return reduce_sum(x, axis, keepdims, mean=True)


class Var(Function):
    r"""The variance of a real x over ``axis`` in one node, in two passes: the mean, then the
    centred squares' sum over the degrees of freedom ``dof`` = n - correction (taken as 0
    when below it: inf, NaN for a constant x, as torch's):

    .. math::
        v = \frac{\sum (x - \bar x)^2}{\mathrm{dof}}, \qquad
        \frac{\partial v}{\partial x} = \frac{2 (x - \bar x)}{\mathrm{dof}}

    (torch's ``var_backward``: the mean's own term, 2/n·Σ(x - x̄), is 0 and left out; a dof
    below 0 enters the gradient as it is, as torch's). Saves x, as torch's node; keeps its
    mean (the reduced shape) beside it, so backward centres x without a second mean."""

    saved_names = ("input",)

    @staticmethod
    def forward(ctx, x, axis, keepdims, dof):
        ctx.save_for_backward(x)
        ctx.mean = mean_array(x, axis, True)
        ctx.axis, ctx.keepdims, ctx.dof = axis, keepdims, dof
        centered = x - ctx.mean
        with np.errstate(divide="ignore", invalid="ignore"):      # dof <= 0: inf, NaN
            return reduce_sum(centered * centered, axis, keepdims) / max(dof, 0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        if not ctx.keepdims:                                      # the reduced dims back
            axes = tuple(range(x.ndim)) if ctx.axis is None else ctx.axis
            grad = backend.array_module(grad).expand_dims(grad, axes)
        with np.errstate(invalid="ignore"):                       # inf · 0 at dof 0
            return grad * (x - ctx.mean) * two_over(ctx.dof)


def two_over(dof):
    """2/dof as a Python float (which keeps a float32 array float32), inf at 0."""
    return 2.0 / dof if dof else math.inf


class StdFromVar(Function):
    """sqrt of a variance (or of a sum of squares: the 2-norm), whose gradient is 0 where the
    result is 0 (Sqrt's would be NaN)."""

    @staticmethod
    def forward(ctx, var):
        out = backend.array_module(var).sqrt(var)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved
        xp = backend.array_module(grad)
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.where(out == 0, xp.zeros((), dtype=grad.dtype), grad / (2 * out))
