"""BatchNorm, twice: the textbook graph and one fused node."""

import numpy as np

from ..autograd import no_grad, op_group
from ..dtypes import float_of, is_half
from ..kernels import for_array, reference
from ..tensor import Tensor
from . import arguments
from .arguments import BatchNormRankError, ChannelNormError, MixedDtypeError
from .spec import FusedFunction, Input, Naive, Norm, Option, affine, eps_beside, one_pass_norm

__all__ = ["BATCH_NORM", "batch_norm", "check_batch_norm"]


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
class BatchNorm(FusedFunction):
    """Per-channel norm of x (N, C, *); in training it updates the running statistics in
    place."""

    saved_names = ("x", "weight", "mean", "rstd")    # what forward saves, in order
    statistics_of = "channel"

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
        x3 = x.reshape(x.shape[0], x.shape[1], -1)                  # (N, C, L)
        ctx.kernels = kernels = for_array(x)
        acc = kernels.batch_norm_dtype(x)
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
        y = y.reshape(x.shape)
        if x.ndim < 4 and not y.flags.c_contiguous:   # torch keeps channels-last 4-D, 5-D only
            y = type(y).copy(y, order="C")
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved
        x3 = x.reshape(x.shape[0], x.shape[1], -1)                  # (N, C, L)
        dx, dweight, dbias = ctx.kernels.batch_norm_backward(
            dy.reshape(x3.shape), x3, weight, mean, rstd, ctx.training, ctx.has_bias)
        return dx.reshape(x.shape), dweight, dbias

    @staticmethod
    def recompute(ctx, x, weight, bias):
        # the twin, for double backward, given no running statistics to move again
        saved_x, _, mean, rstd = ctx.saved
        if not ctx.training:          # the statistics it normalized by, var + eps = 1/rstd²
            return composite_batch_norm(x, mean, 1 / (rstd * rstd), weight, bias, eps=0.0)
        x3 = saved_x.reshape(x.shape[0], x.shape[1], -1).astype(rstd.dtype, copy=False)
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)                  # var's: (1, C, 1, ...)
        eps = eps_beside(x3.var(axis=(0, 2)), rstd, shape, saved_x.dtype)
        return composite_batch_norm(x, None, None, weight, bias, training=True, eps=eps)


# ----- the public entry -------------------------------------------------------------------
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5, impl=None):
    r"""Batch normalization per channel (dim 1) over every other dim.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    In training the batch normalizes x and the running statistics move in place:
    ``running = (1 - momentum)·running + momentum·batch`` (unbiased variance for
    ``running_var``); in eval the running statistics normalize x.

    Args:
        input: x, a floating-point Tensor of shape (N, C, *) (torch's name: ``input=`` as
            keyword).
        running_mean, running_var: Tensors or arrays of shape (C,) in x's dtype (or float32
            for half-precision x); None only when training.
        weight, bias: γ and β of shape (C,), or None.
        momentum: any number, as torch's (outside [0, 1] the update extrapolates; NaN
            makes the running statistics NaN).
        eps: above 0 in training, at least 0 in eval (else torch's ValueError); NaN is
            taken, as torch takes it (a NaN output).
        impl: ``"fused"`` or ``"composite"``; None: as in ``layer_norm``.

    Example:
        >>> y = F.batch_norm(x, rm, rv, training=True)     # x (32, 4), rm/rv arrays (4,)
    """
    x = input                                 # torch's keyword; x, as the formula says
    impl = arguments.resolve_impl("batch_norm", impl)
    eps = float_of(eps, "batch_norm", "eps")   # a bool, NumPy scalar or 0-d tensor: its value
    momentum = float_of(momentum, "batch_norm", "momentum")
    arguments.check_tensor("batch_norm", "x", x)
    if x.ndim < 2 and x.size == 0:          # torch returns an empty 1-D input as it is
        return x * 1.0
    if x.ndim < 2:
        raise BatchNormRankError(f"batch_norm: x must have shape (N, C) or (N, C, L), got "
                                 f"{x.shape}")
    stats = check_batch_norm(x, running_mean, running_var, weight, bias, training,
                                       momentum, eps, impl)
    if x.size == 0:                 # an empty batch (or no channels): an empty result,
        return BATCH_NORM.empty_output(x, weight=weight, bias=bias)   # the statistics unchanged
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
                owner._bump_version()          # updated in place: a new version
    return y


# ----- the checks -------------------------------------------------------------------------
def check_batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps,
                     impl):
    """Every check of ``batch_norm``; returns [(array or None, owning Tensor or None)] for
    the running mean and variance, so a bad running_var cannot leave running_mean moved."""
    fn = "batch_norm"
    channels = (x.shape[1],)
    arguments.check_eps(fn, eps)
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"{fn}: training must be a bool, got {type(training).__name__}")
    eps = float_of(eps, fn, "eps")
    # torch's checks, before the parameters' dtypes and shapes as in torch (a float64 x
    # beside float32 weights with eps=-1 is the eps error); NaN passes them (a NaN y)
    if training and eps <= 0:
        raise ValueError(f"{fn}: eps must be positive during training, got {eps!r}")
    if eps < 0:
        raise ValueError(f"{fn}: eps must be non-negative, got {eps!r}")
    arguments.check_param(fn, "weight", weight, channels, x)
    arguments.check_param(fn, "bias", bias, channels, x)
    arguments.check_impl(fn, impl)
    arguments.check_momentum(fn, momentum)
    stats = [_running_stat(name, stat, x, training)
             for name, stat in (("running_mean", running_mean), ("running_var", running_var))]
    if training and (running_mean is None) != (running_var is None):    # torch's ValueError
        raise ValueError(f"{fn}: running_mean and running_var must either both be None or "
                         "neither be None")
    if x.size and training and x.size // x.shape[1] < 2:
        raise ValueError(f"{fn}: training needs more than 1 value per channel to compute a "
                         f"variance, got x of shape {x.shape}")
    if x.size and not training and (running_mean is None or running_var is None):
        # torch's RuntimeError ("running_mean must be defined in evaluation mode")
        raise ChannelNormError(f"{fn}: running_mean and running_var are required when "
                               "training=False")
    return stats


def _running_stat(name, stat, x, training):
    """A running statistic checked as every channel norm's (``arguments.running_stat``) and
    of x's dtype (float32 allowed for half-precision x; float32 beside float64 x would lose
    the update)."""
    array, owner = arguments.running_stat("batch_norm", name, stat, x, training,
                                          "training=True")
    if array is not None and array.dtype != x.dtype and not (
            is_half(x.dtype) and array.dtype == np.float32):
        raise MixedDtypeError(f"batch_norm: {name} must have x's dtype {x.dtype} (or float32 "
                              f"for float16/bfloat16 x), got {array.dtype}")
    return array, owner


# ----- the spec ---------------------------------------------------------------------------
def _call(function, given, impl, **options):
    # x by position: the entry names it torch's ``input``
    stats = [given.get(name) for name in ("running_mean", "running_var")]
    return function(given["x"], *stats, given.get("weight"), given.get("bias"), impl=impl,
                    **options)


def _torch(tF, given, **options):
    stats = [given.get(name) for name in ("running_mean", "running_var")]
    return tF.batch_norm(given["x"], *stats, given.get("weight"), given.get("bias"), **options)


BATCH_NORM = Norm(
    name="batch_norm", title="BatchNorm", aliases=("batchnorm",), function=batch_norm,
    composite=composite_batch_norm, fused=BatchNorm,
    inputs=(Input("x", "x"), Input("weight", "per-channel", optional=True, init=1.0),
            Input("bias", "per-channel", optional=True),
            Input("running_mean", "running", optional=True, differentiable=False),
            Input("running_var", "running", optional=True, differentiable=False, init=1.0)),
    options=(Option("momentum", 0.1), Option("eps", 1e-5)), call=_call, torch=_torch,
    ndim=(2, None), shape_text="(N, C) or (N, C, L)", places=("mlp", "channel"),
    statistics="channel", naive={"one-pass": Naive(one_pass_norm(0),
                                                   shows=("float32", "offset 1e4"))},
    kernels=("batch_norm_statistics", "batch_norm_forward", "batch_norm_backward",
             "update_running_stats"))
