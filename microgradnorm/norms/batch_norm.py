"""BatchNorm, twice: the textbook graph and one fused node."""

from ..autograd import no_grad, op_group
from ..kernels import for_array, reference
from ..tensor import Tensor
from . import arguments
from .spec import FusedNorm, Norm, affine, empty_norm

__all__ = ["batch_norm", "BATCH_NORM"]


# ----- composite: the textbook graph, one node per primitive ------------------------------
def composite_batch_norm(x, running_mean, running_var, weight=None, bias=None,
                         training=False, momentum=0.1, eps=1e-5):
    """BatchNorm of x (N, C, *) per channel; running statistics are arrays or None."""
    axes = (0,) + tuple(range(2, x.ndim))                     # every dim but the channels
    channel_shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)     # (C,) -> (1, C, 1, ...)
    if training:
        mean = x.mean(axes, keepdims=True)
        centered = x - mean
        var = (centered * centered).mean(axes, keepdims=True)
        with no_grad():
            reference.update_running_stats(running_mean, running_var, mean._array.reshape(-1),
                                           var._array.reshape(-1), x.size // x.shape[1], momentum)
    else:
        # Constants in x's dtype: in eval the statistics do not depend on x.
        centered = x - Tensor(running_mean.reshape(channel_shape), dtype=x.dtype, device=x.device)
        var = Tensor(running_var.reshape(channel_shape), dtype=x.dtype, device=x.device)
    xhat = centered / (var + eps).sqrt()
    return affine(xhat, _channels(weight, channel_shape), _channels(bias, channel_shape))


def _channels(param, shape):
    return None if param is None else param.reshape(shape)


# ----- fused: one node, closed-form backward ----------------------------------------------
class BatchNorm(FusedNorm):
    """Per-channel norm of x (N, C, *); in training it updates the running statistics in
    place."""

    saved_names = ("x", "weight", "mean", "rstd")    # what forward saves, in order
    statistics_of = "channel"

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
        x3 = x.reshape(x.shape[0], x.shape[1], -1)                  # (N, C, L)
        ctx.kernels = kernels = for_array(x)
        acc = kernels.accumulation_dtype(x.dtype)
        if training:
            mean, var = kernels.batch_norm_statistics(x3)         # (C,), (C,)
            kernels.update_running_stats(running_mean, running_var, mean, var,
                                         x3.shape[0] * x3.shape[2], momentum)
        else:
            # Copies: the running statistics may be updated before this node's backward.
            mean = running_mean.astype(acc, copy=True)
            var = running_var.astype(acc, copy=True)
        y, rstd = kernels.batch_norm_forward(x3, mean, var, weight, bias, eps)
        # Saved: x, weight, and mean and rstd per channel; x̂ is recomputed in backward.
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.has_bias, ctx.training = bias is not None, training
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved
        x3 = x.reshape(x.shape[0], x.shape[1], -1)                  # (N, C, L)
        dx, dweight, dbias = ctx.kernels.batch_norm_backward(
            dy.reshape(x3.shape), x3, weight, mean, rstd, ctx.training, ctx.has_bias)
        return dx.reshape(x.shape), dweight, dbias


# ----- the public entry -------------------------------------------------------------------
def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5, impl=None):
    r"""Batch normalization per channel (dim 1) over every other dim.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    In training the batch normalizes x and the running statistics move in place:
    ``running = (1 - momentum)·running + momentum·batch`` (unbiased variance for
    ``running_var``); in eval the running statistics normalize x.

    Args:
        x: floating-point Tensor of shape (N, C, *).
        running_mean, running_var: Tensors or arrays of shape (C,) in x's dtype (or float32
            for half-precision x); None only when training.
        weight, bias: γ and β of shape (C,), or None.
        impl: ``"fused"`` or ``"composite"``; None: as in ``layer_norm``.

    Example:
        >>> y = F.batch_norm(x, rm, rv, training=True)     # x (32, 4), rm/rv arrays (4,)
    """
    impl = arguments.resolve_impl("batch_norm", impl)
    arguments.check_tensor("batch_norm", "x", x)
    if x.ndim < 2 and x.size == 0:          # torch returns an empty 1-D input as it is
        return x * 1.0
    if x.ndim < 2:
        raise ValueError(f"batch_norm: x must have shape (N, C) or (N, C, L), got {x.shape}")
    stats = arguments.check_batch_norm(x, running_mean, running_var, weight, bias, training,
                                       momentum, eps, impl)
    if x.size == 0:                 # an empty batch (or no channels): an empty result,
        shape = (1, -1) + (1,) * (x.ndim - 2)                  # the statistics unchanged
        return empty_norm(x, *(None if p is None else p.reshape(shape) for p in (weight, bias)))
    running_mean, running_var = (array for array, _ in stats)
    if impl == "composite":
        with op_group("batch_norm"):
            y = composite_batch_norm(x, running_mean, running_var, weight, bias, training,
                                     momentum, eps)
    else:
        y = BatchNorm.apply(x, weight, bias, running_mean=running_mean,
                            running_var=running_var, training=training, momentum=momentum,
                            eps=eps)
    if training:
        for _, owner in stats:
            if owner is not None:
                owner._version_box[0] += 1          # updated in place: a new version
    return y


# ----- the spec ---------------------------------------------------------------------------
def _call(function, t, impl, running, training, **options):
    return function(t["x"], running.get("running_mean"), running.get("running_var"),
                    t.get("weight"), t.get("bias"), training=training, impl=impl, **options)


def _torch(tF, t, running, training, eps=1e-5):
    stats = [running.get(name) for name in ("running_mean", "running_var")]
    return tF.batch_norm(t["x"], *stats, t.get("weight"), t.get("bias"), training=training,
                         eps=eps)


BATCH_NORM = Norm("batch_norm", "BatchNorm", batch_norm, composite_batch_norm, BatchNorm,
                  ("weight", "bias"), 1e-5, _call, _torch, per_channel=True,
                  aliases=("batchnorm",))
