"""Softmax, log_softmax and cross-entropy, twice: the composite graphs of ``ops`` and one
fused node each that saves only what its closed-form backward reads. Softmax normalizes
exp(x) by its row sum; docs/derivations.md derives the backward passes."""

import numpy as np

from .. import backend, dtypes, ops
from ..autograd import op_group
from ..dtypes import NOT_GIVEN
from ..kernels import for_array
from ..ops.base import LAST_DIM, normalize_axis
from ..tensor import Tensor
from . import arguments
from .twin import FusedFunction, Input, Twin

__all__ = ["CROSS_ENTROPY", "LOG_SOFTMAX", "SOFTMAX", "cross_entropy_rows", "log_softmax",
           "softmax", "tensor_log_softmax", "tensor_softmax"]


# ----- fused: one node each, closed-form backward ----------------------------------------
class Softmax(FusedFunction):
    """The kernels' ``softmax_forward`` and ``softmax_backward`` (numba's compiled rows by
    default where numba imports, ``kernels.reference`` the oracle)."""
    saved_names = ("output",)

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis, ctx.kernels = axis, for_array(x)
        y = ctx.kernels.softmax_forward(x, axis)
        ctx.save_for_backward(y)                     # y·(g − Σ g·y) reads y alone
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved
        return ctx.kernels.softmax_backward(g, y, ctx.axis)

    @staticmethod
    def recompute(ctx, x):                       # the twin, for double backward
        return ops.softmax(x, ctx.axis)


class LogSoftmax(FusedFunction):
    """The kernels' ``log_softmax_forward`` and ``log_softmax_backward``."""
    saved_names = ("output",)

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis, ctx.kernels = axis, for_array(x)
        y = ctx.kernels.log_softmax_forward(x, axis)
        ctx.save_for_backward(y)                     # g − exp(y)·Σ g reads y alone
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved
        return ctx.kernels.log_softmax_backward(g, y, ctx.axis)

    @staticmethod
    def recompute(ctx, x):                       # the twin, for double backward
        return ops.log_softmax(x, ctx.axis)


class CrossEntropy(FusedFunction):
    """(N, C) logits and (N,) class indices -> the reduced -log softmax(logits)[target]."""

    saved_names = ("logits", "logsumexp")
    kept_options = ("target",)

    @staticmethod
    def forward(ctx, logits, target, ignore_index, reduction):
        xp = backend.array_module(logits)
        lse = for_array(logits).logsumexp(dtypes.upcast_half(logits), 1)    # (N, 1)
        keep = target != ignore_index
        picked = logits[xp.arange(len(target)), xp.where(keep, target, 0)]
        with np.errstate(invalid="ignore"):
            losses = xp.where(keep, lse[:, 0] - picked, 0).astype(logits.dtype, copy=False)
        # Saved: logits and one logsumexp per row; the probabilities are recomputed in
        # backward, never kept (the targets stay on ctx, as an indexing node's index does)
        ctx.save_for_backward(logits, lse)
        ctx.target, ctx.ignore_index = target, ignore_index
        ctx.reduction, ctx.count = reduction, int(keep.sum())
        if reduction == "none":
            return losses
        with np.errstate(divide="ignore", invalid="ignore"):   # nothing counted: NaN
            total = losses.sum(dtype=lse.dtype)
            return xp.asarray(total / ctx.count if reduction == "mean" else total,
                              dtype=logits.dtype)

    @staticmethod
    def backward(ctx, g):
        logits, lse = ctx.saved
        xp, target = backend.array_module(logits), ctx.target
        keep = target != ctx.ignore_index
        if ctx.reduction == "mean":
            g = g / max(ctx.count, 1)
        weight = xp.where(keep, g, 0).astype(lse.dtype, copy=False)     # (N,)
        classes = xp.where(keep, target, 0)                             # (N,)
        return for_array(logits).cross_entropy_backward(logits, lse, classes, weight), None

    @staticmethod
    def recompute(ctx, logits):                  # the twin, for double backward
        return composite_cross_entropy(logits, ctx.target, ctx.ignore_index, ctx.reduction)


# ----- composite: today's graphs of primitives --------------------------------------------
def composite_cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    """The graph: log_softmax, pick each row's target, mask the ignored, reduce."""
    xp = logits.xp
    logp = ops.log_softmax(logits, 1)                                   # (N, C)
    keep = target != ignore_index
    count = int(keep.sum())
    rows = xp.arange(len(target))
    if count == len(target):                          # nothing ignored: the plain graph
        picked = -logp[rows, target]                                    # (N,)
    else:
        # selected, not multiplied by a 0/1 mask: an ignored row's stand-in class 0 may
        # have log-probability -inf (a masked logit), and -inf · 0 is NaN
        picked = ops.masked_fill(-logp[rows, xp.where(keep, target, 0)], ~keep, 0.0)
    if reduction == "none":
        return picked
    if reduction == "sum":
        return picked.sum()
    if count == 0:                     # nothing counted: NaN, and zero gradients, as torch
        return picked.sum() + xp.asarray(np.nan, dtype=logits.dtype)
    return picked.mean() if count == len(target) else picked.sum() / float(count)


# ----- the public entries -----------------------------------------------------------------
def softmax(input, axis=LAST_DIM, _stacklevel=3, dtype=None, *, dim=None, impl=None):
    r"""Softmax along ``axis``: :math:`e^{x_i} / \sum_j e^{x_j}`, computed shifted by the max.

    ``impl="fused"`` is one node saving only the output; ``"composite"`` the graph of
    primitives (``ops.softmax``); None follows ``mg.norm_impl`` (fused by default).
    ``dtype`` casts x first, as torch's (the gradient through the cast). Given no dim (or
    None), torch's legacy implicit one, with its warning: 0 for 0-, 1- and 3-d x, else 1.
    ``_stacklevel`` is taken (third, as torch's, before ``dtype``) and unused (the warning
    names the caller).

    Example:
        >>> F.softmax(mg.tensor([[1.0, 2.0, 3.0]]), dim=-1)  # rows sum to 1
    """
    return _row_op("softmax", ops.softmax, Softmax, input, axis, dim, impl, dtype)


def log_softmax(input, axis=LAST_DIM, _stacklevel=3, dtype=None, *, dim=None, impl=None):
    r"""Stable :math:`x_i - \log\sum_j e^{x_j}` along ``axis``; ``impl`` and ``dtype`` as in
    ``softmax``."""
    return _row_op("log_softmax", ops.log_softmax, LogSoftmax, input, axis, dim, impl, dtype)


def tensor_softmax(input, axis=NOT_GIVEN, dtype=None, *, dim=NOT_GIVEN):
    r"""``torch.softmax(x, dim)`` and ``x.softmax(dim)``: ``F.softmax`` with ``dim`` required,
    as torch's (no implicit dim); one node (``SoftmaxBackward0``, as torch's) unless a
    ``mg.norm_impl("composite")`` block asks for the graph of primitives. ``dtype`` (also
    positional, as torch's) casts x first.

    Example:
        >>> mg.tensor([[1.0, 2.0, 3.0]]).softmax(-1)                     # rows sum to 1
    """
    return _tensor_row_op("softmax", ops.softmax, Softmax, input, axis, dim, dtype)


def tensor_log_softmax(input, axis=NOT_GIVEN, dtype=None, *, dim=NOT_GIVEN):
    r"""``torch.log_softmax(x, dim)`` and ``x.log_softmax(dim)``: as ``tensor_softmax``, one
    ``LogSoftmaxBackward0`` node by default."""
    return _tensor_row_op("log_softmax", ops.log_softmax, LogSoftmax, input, axis, dim, dtype)


def _tensor_row_op(fn, composite, fused, x, axis, dim, dtype):
    if axis is NOT_GIVEN and dim is NOT_GIVEN:
        raise TypeError(f'{fn}() missing 1 required positional argument: "dim"')
    if axis is not NOT_GIVEN and dim is not NOT_GIVEN:
        raise TypeError(f"{fn}(): got both axis={axis!r} and dim={dim!r}; pass one")
    axis = axis if dim is NOT_GIVEN else dim
    if axis is None:                            # (F.softmax's implicit dim: not torch.softmax's)
        raise TypeError(f"{fn}(): argument 'dim' must be int, not NoneType")
    return _row_op(fn, composite, fused, x, axis, None, None, dtype)


def _row_op(fn, composite, fused, x, axis, dim, impl, dtype):
    x = ops.reductions.in_dtype(fn, x, dtype, floating=True)     # cast first, as torch's
    if dim is None and (axis is None or axis is LAST_DIM) and isinstance(x, Tensor):
        axis = arguments.implicit_dim(fn, x.ndim, stacklevel=4)  # F.softmax(x): torch's dim
    impl = arguments.resolve_impl(fn, impl)
    if isinstance(x, Tensor) and x.size == 0:        # an empty copy of x in its dtype, an
        return composite(x, axis, **({} if dim is None else {"dim": dim}))   # as torch's
    arguments.check_tensor(fn, "x", x)
    axis = normalize_axis(fn, axis, x.ndim, dim=dim, single=True)
    if impl == "composite":
        with op_group(fn):
            return composite(x, axis)
    return fused.apply(x, axis=axis)


def cross_entropy_rows(logits, target, ignore_index=-100, reduction="mean", impl="fused"):
    """Cross-entropy of (N, C) logits and an (N,) integer array of classes, unchecked:
    ``F.cross_entropy`` checks, reshapes to rows and calls this."""
    if impl == "composite":
        with op_group("cross_entropy"):
            return composite_cross_entropy(logits, target, ignore_index, reduction)
    return CrossEntropy.apply(logits, target=target, ignore_index=ignore_index,
                              reduction=reduction)


# ----- the specs --------------------------------------------------------------------------
def _torch_row_op(name):
    return lambda tF, given: getattr(tF, name)(given["x"], -1)


def _last_dim_call(function, given, impl):
    return function(given["x"], -1, impl=impl)            # the rows: the last dim, as torch's


_X = Input("x", "x")
SOFTMAX = Twin(name="softmax", title="Softmax", function=softmax, composite=ops.softmax,
               fused=Softmax, inputs=(_X,), call=_last_dim_call, torch=_torch_row_op("softmax"))
LOG_SOFTMAX = Twin(name="log_softmax", title="LogSoftmax", function=log_softmax,
                   composite=ops.log_softmax, fused=LogSoftmax, inputs=(_X,),
                   call=_last_dim_call, torch=_torch_row_op("log_softmax"))
CROSS_ENTROPY = Twin(
    name="cross_entropy", title="CrossEntropy", function=cross_entropy_rows,
    composite=composite_cross_entropy, fused=CrossEntropy,
    inputs=(_X, Input("target", "index", differentiable=False)),
    call=lambda f, given, impl: f(given["x"], given["target"]._array, impl=impl),
    torch=lambda tF, given: tF.cross_entropy(given["x"], given["target"]),
    ndim=(2, 2), shape_text="(N, C)")

# torch's Tensor methods, bound here beside the node they run (the Tensor's other methods are
# ops': this one's default is the fused node, a layer above them)
Tensor.softmax = tensor_softmax
Tensor.log_softmax = tensor_log_softmax
