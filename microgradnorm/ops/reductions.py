"""Reductions: sum, mean, max/min, var and std, argmax/argmin, and softmax and log_softmax
from the primitives. ``dim``/``keepdim``, PyTorch's names, are accepted everywhere."""

import numpy as np

from .. import backend
from ..autograd import Function
from ..dtypes import check_number, is_floating, is_half
from .base import (ALL_DIMS, LAST_DIM, check_reducible, constant, dim_alias, normalize_axis,
                   reduce_sum, reduced_size)


def _expand_reduced(grad, shape, axis):
    # (reduced shape) -> (input shape): size 1 at the reduced axes, then broadcast
    axes = range(len(shape)) if axis is None else axis
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    return backend.array_module(grad).broadcast_to(grad.reshape(kept), shape)


class Sum(Function):
    """Sum (``Mean``: mean) over ``axis``; half precision accumulates in float32."""

    mean = False

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        ctx.shape, ctx.axis = x.shape, axis
        if ctx.function.mean and x.size and is_floating(x.dtype) and not is_half(x.dtype):
            return backend.corrected_mean(x, axis, keepdims)   # exact on a constant slice
        return reduce_sum(x, axis, keepdims, mean=ctx.function.mean)

    @staticmethod
    def backward(ctx, grad):
        if ctx.function.mean:
            grad = grad / reduced_size(ctx.shape, ctx.axis)
        return _expand_reduced(grad, ctx.shape, ctx.axis)


class Mean(Sum):
    mean = True


class Extreme(Function):
    """Maximum or minimum over ``axis``, values only; ties share the gradient evenly."""

    pick = None                     # the array method: "max" or "min"

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        out = getattr(x, ctx.function.pick)(axis=axis, keepdims=True)
        ctx.save_for_backward(x, out)                              # to find the extremes
        ctx.axis = axis
        return out if keepdims else out.reshape(()) if axis is None else out.squeeze(axis)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved
        is_extreme = x == out                                          # (x.shape) bool
        count = is_extreme.sum(axis=ctx.axis, keepdims=True)           # (kept dims) ties
        with np.errstate(divide="ignore", invalid="ignore"):       # a NaN extreme: NaN
            return is_extreme * (grad.reshape(out.shape) / count.astype(grad.dtype))


class Max(Extreme):
    pick = "max"


class AMin(Extreme):
    pick = "min"


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


# ----- the functions: x.sum(), x.max(), ... --------------------------------------------------
def _keepdims(fn, keepdims, keepdim):
    if keepdim is None:
        return bool(keepdims)
    if keepdims:
        raise TypeError(f"{fn}(): got both keepdims and keepdim; pass one")
    return bool(keepdim)


def _reduce(fn, function, x, axis, keepdims, dim, keepdim):
    axis = normalize_axis(fn, axis, x.ndim, dim=dim)
    if issubclass(function, Extreme):            # a max of nothing has no value
        check_reducible(fn, x.shape, axis)
    return function.apply(x, axis=axis, keepdims=_keepdims(fn, keepdims, keepdim))


def sum(x, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None):
    """Sum over ``axis`` (None: every element; an int or a tuple).

    Shape: x's without the reduced dims (size 1 there with ``keepdims``)."""
    return _reduce("sum", Sum, x, axis, keepdims, dim, keepdim)


def mean(x, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None):
    """Arithmetic mean over ``axis``; arguments and shape as in ``sum``."""
    return _reduce("mean", Mean, x, axis, keepdims, dim, keepdim)


def amax(x, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None):
    """Maximum over ``axis``, values only (``torch.amax``, ``x.max()``); ties share the
    gradient. An empty reduced dim is an ``EmptyReductionError``."""
    return _reduce("max", Max, x, axis, keepdims, dim, keepdim)


def amin(x, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None):
    """Minimum over ``axis``, values only (``torch.amin``, ``x.min()``); as ``amax``."""
    return _reduce("amin", AMin, x, axis, keepdims, dim, keepdim)


def var(x, axis=ALL_DIMS, keepdims=False, correction=1, *, dim=None, keepdim=None,
        unbiased=None):
    """Variance over ``axis``, sum((x - mean)²) / (n - correction), in two passes; n <=
    correction gives inf (NaN for a constant x), as torch. ``unbiased``: correction 1/0."""
    axis = normalize_axis("var", axis, x.ndim, dim=dim)
    keepdims = _keepdims("var", keepdims, keepdim)
    if unbiased is not None:
        if not isinstance(unbiased, bool):
            raise TypeError(f"var: unbiased must be True or False, got {unbiased!r}")
        correction = int(unbiased)
    check_number("var", "correction", correction)
    centered = x - mean(x, axis, keepdims=True)
    n = reduced_size(x.shape, axis)
    with np.errstate(divide="ignore", invalid="ignore"):      # n <= correction: NaN
        return sum(centered * centered, axis, keepdims) / max(n - correction, 0)


def std(x, axis=ALL_DIMS, keepdims=False, correction=1, *, dim=None, keepdim=None,
        unbiased=None):
    """Standard deviation, ``sqrt(var(...))``; the gradient is 0 where it is 0."""
    return StdFromVar.apply(var(x, axis, keepdims, correction, dim=dim, keepdim=keepdim,
                                unbiased=unbiased))


def _arg_extreme(fn, x, axis, keepdims, dim, keepdim):
    keepdims = _keepdims(fn, keepdims, keepdim)
    axis = dim_alias(fn, axis, dim)
    if axis is not None:
        axis = normalize_axis(fn, axis, x.ndim, single=True)
    check_reducible(fn, x.shape, None if axis is None else (axis,))
    data = x.data if x.ndim else x.data.reshape(1)
    index = getattr(data, fn)(axis=axis, keepdims=keepdims and x.ndim > 0)
    if axis is None and keepdims:
        index = index.reshape((1,) * x.ndim)
    return constant(x.xp.asarray(index, dtype=np.int64))


def argmax(x, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None):
    """The int64 index of the largest value over ``axis`` (None: flattened), the first of
    ties; NaN counts as the largest. A constant."""
    return _arg_extreme("argmax", x, axis, keepdims, dim, keepdim)


def argmin(x, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None):
    """The int64 index of the smallest value over ``axis``; NaN counts as the smallest, as
    in torch. Otherwise as ``argmax``."""
    return _arg_extreme("argmin", x, axis, keepdims, dim, keepdim)


# ----- softmax, from the primitives -----------------------------------------------------------
def _shifted(x, axis):
    # minus the (detached) row max: exp() <= 1 cannot overflow, softmax is unchanged
    return x - amax(x.detach(), axis, keepdims=True)


def softmax(x, axis=LAST_DIM, *, dim=None):
    r"""Softmax along ``axis``: :math:`e^{x_i - m} / \sum_j e^{x_j - m}`, :math:`m = \max_j x_j`.

    Example:
        >>> F.softmax(mg.tensor([[1.0, 2.0, 3.0]]))          # rows sum to 1
    """
    axis = normalize_axis("softmax", axis, x.ndim, dim=dim, single=True)
    if x.size == 0:
        return x * 1.0                   # as empty as x, as in torch
    e = _shifted(x, axis).exp()
    return e / sum(e, axis, keepdims=True)


def log_softmax(x, axis=LAST_DIM, *, dim=None):
    r"""Stable :math:`(x_i - m) - \log\sum_j e^{x_j - m}` along ``axis``."""
    axis = normalize_axis("log_softmax", axis, x.ndim, dim=dim, single=True)
    if x.size == 0:
        return x * 1.0
    z = _shifted(x, axis)
    return z - sum(z.exp(), axis, keepdims=True).log()


def norm(x, p=2, dim=None, keepdim=False):
    """The ``p``-norm over ``dim`` (None: every element), ``(Σ|x|^p)^(1/p)``; ``p`` may be
    ``inf`` (``torch.Tensor.norm``). Example: ``x.norm(2, dim=-1, keepdim=True)``."""
    check_number("norm", "p", p)
    if p == np.inf:
        return amax(abs(x), dim, keepdim)
    if p == 2:              # without abs() and pow; the gradient at a zero norm is 0, as torch's
        return StdFromVar.apply(sum(x * x, dim, keepdim))
    if p <= 0:
        raise ValueError(f"norm: p must be positive (or inf), got {p!r}")
    return sum(abs(x) ** p, dim, keepdim) ** (1.0 / p)
