"""PyTorch's running reductions, beside ``reductions.py`` (which re-exports them): cummax
and cummin (the running extreme and where it was last reached) and logcumsumexp (the
running logsumexp, in log space both ways)."""

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..dtypes import is_floating, is_half
from . import return_types
from .base import check_orderable, check_tensor, constant, normalize_axis
from .indexing import gather


def _running_extreme(fn, input, dim):
    # (values, indices) of cummax/cummin: the running extreme and the place it was last
    # reached (a later equal value, or a NaN, takes over: torch's rule); the values are
    # gathered from there, so the gradient goes to that element
    check_tensor(fn, input)
    check_orderable(fn, input._array)
    axis = normalize_axis(fn, dim, input.ndim, single=True)
    x = input.reshape(1) if input.ndim == 0 else input
    data, xp = x._array, x.xp
    running = getattr(xp, "maximum" if fn == "cummax" else "minimum").accumulate(data, axis)
    reached = data == running
    if is_floating(data.dtype):
        reached |= xp.isnan(data)                               # NaN stays once it appears
    place = xp.arange(data.shape[axis]).reshape((-1,) + (1,) * (data.ndim - axis - 1))
    indices = xp.maximum.accumulate(xp.where(reached, place, 0), axis).astype(np.int64)
    values = gather(x, axis, indices)
    if input.ndim == 0:
        values, indices = values.reshape(()), indices.reshape(())
    return getattr(return_types, fn)(values, constant(indices))


def cummax(input, dim):
    """``torch.cummax``: the named tuple ``(values, indices)`` of the running maximum along
    ``dim``, ``values[i] = max(x[0..i])`` and ``indices[i]`` the last place it was reached;
    NaN, once met, is the maximum. The gradient of ``values`` goes to that place.

    Example:
        >>> mg.cummax(mg.tensor([1.0, 3.0, 2.0, 3.0]), 0)   # [1, 3, 3, 3], indices [0, 1, 1, 3]
    """
    return _running_extreme("cummax", input, dim)


def cummin(input, dim):
    """``torch.cummin``: the running minimum along ``dim`` and where it was last reached, as
    ``cummax``.

    Example:
        >>> mg.cummin(mg.tensor([2.0, 1.0, 3.0]), 0).indices            # tensor([0, 1, 1])
    """
    return _running_extreme("cummin", input, dim)


def _log_cumsum_exp(x, axis, reverse=False):
    # log(cumsum(exp(x))) along axis by logaddexp (log1p(exp(-|a - b|)) + max: no overflow),
    # from the end with ``reverse``; in torch's CPU accumulation dtype, as the other scans:
    # half precision in float32, float32 in float64
    xp = backend.array_module(x)
    wide = x.astype(np.float32) if is_half(x.dtype) else \
        x.astype(np.float64) if x.dtype == np.float32 else x
    if reverse:
        wide = xp.flip(wide, axis)
    out = xp.logaddexp.accumulate(wide, axis=axis)
    return (xp.flip(out, axis) if reverse else out).astype(x.dtype, copy=False)


class LogCumSumExp(Function):
    r"""Running :math:`\log \sum_{j \le i} e^{x_j}` along ``axis``. The gradient
    :math:`\sum_{i \ge j} g_i e^{x_j - out_i}` is taken in log space, as torch's, with the
    positive and the negative parts of g apart: :math:`e^{x_j + \mathrm{rlcse}(\log g^\pm -
    out)_j}`, rlcse the running logsumexp from the end."""

    @staticmethod
    def forward(ctx, x, axis):
        out = _log_cumsum_exp(x, axis)
        ctx.save_for_backward(x, out)
        ctx.axis = axis
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved
        xp = backend.array_module(grad)
        lowest = xp.asarray(dtypes.finfo(grad.dtype).min, dtype=grad.dtype)   # log 0, finite
        with np.errstate(divide="ignore"):
            log_abs = xp.log(xp.abs(grad))
        parts = []
        for sign in (grad > 0, grad < 0):
            logs = xp.where(sign, log_abs, lowest) - out
            parts.append(xp.exp(_log_cumsum_exp(logs, ctx.axis, reverse=True) + x))
        return parts[0] - parts[1]


def logcumsumexp(input, dim):
    r"""``torch.logcumsumexp``: :math:`out_i = \log \sum_{j \le i} e^{x_j}` along ``dim``,
    without overflow; -inf terms add nothing, +inf gives +inf from there on. Floating input
    only (torch also takes complex input).

    Example:
        >>> mg.logcumsumexp(mg.tensor([0.0, 0.0]), 0)              # tensor([0.0000, 0.6931])
    """
    check_tensor("logcumsumexp", input)
    axis = normalize_axis("logcumsumexp", dim, input.ndim, single=True)    # first, as torch
    if not is_floating(input.dtype):
        raise NotImplementedError(f"logcumsumexp: not implemented for {input.dtype} tensors "
                                  "(floating point only)")
    if input.ndim == 0:
        return LogCumSumExp.apply(input.reshape(1), axis=0).reshape(())
    return LogCumSumExp.apply(input, axis=axis)
