"""GroupNorm and InstanceNorm, the channel norms of CNNs, twice: the textbook graph and one
fused node each. docs/derivations.md §13 derives the fused backward.

One formulation serves both: x (N, C, *) is split into G groups of C/G channels, and each
sample's group (its C/G channels at every position) is normalized as one row, then scaled
and shifted per channel. InstanceNorm is G = C, with optional running statistics;
LayerNorm over (C, *) without its per-element affine is G = 1.
"""

import math
import numbers

import numpy as np

from .. import backend, dtypes
from ..autograd import no_grad, op_group
from ..kernels import for_array, reference
from ..tensor import Tensor
from . import arguments
from .arguments import ChannelNormError, GroupCountError, MixedDtypeError
from .spec import FusedFunction, Input, Norm, Option, affine, eps_beside

__all__ = ["GROUP_NORM", "INSTANCE_NORM", "MixedDtypeError", "NotFloatingError", "group_norm",
           "instance_norm"]


NotFloatingError = dtypes.NotFloatingError    # an integer or bool x (arguments.check_tensor)


# ----- composite: the textbook graphs, one node per primitive -----------------------------
def composite_group_norm(x, num_groups, weight=None, bias=None, eps=1e-5):
    """GroupNorm of x (N, C, *): each sample's group of C/G channels is one row."""
    groups = x.reshape(x.shape[0], num_groups, -1)                 # (N, G, C/G·S)
    mean = groups.mean(2, keepdims=True)
    centered = groups - mean
    var = (centered * centered).mean(2, keepdims=True)             # biased
    xhat = (centered / (var + eps).sqrt()).reshape(x.shape)
    return affine(xhat, _per_channel(weight, x.ndim), _per_channel(bias, x.ndim))


def composite_instance_norm(x, running_mean, running_var, weight=None, bias=None,
                            use_input_stats=True, momentum=0.1, eps=1e-5):
    """InstanceNorm of x (N, C, *) per sample and channel over the positions; with
    ``use_input_stats`` it moves the running statistics (arrays or None) in place, else
    they normalize x."""
    n, c = x.shape[:2]
    if use_input_stats:
        axes = tuple(range(2, x.ndim))                             # the positions
        mean = x.mean(axes, keepdims=True)
        centered = x - mean
        var = (centered * centered).mean(axes, keepdims=True)
        with no_grad():                 # the batch's average of the per-sample statistics
            reference.update_running_stats(
                running_mean, running_var, mean._array.reshape(n, c).mean(0),
                var._array.reshape(n, c).mean(0), x.size // (n * c), momentum)
        if eps == 0:                    # PyTorch's rstd of a constant channel: 0 (below)
            var = var.masked_fill(var == 0, float("inf"))
    else:
        # Constants in x's dtype: in eval the statistics do not depend on x.
        centered = x - Tensor(running_mean.reshape(_channel_shape(x.ndim, c)), dtype=x.dtype,
                              device=x.device)
        var = Tensor(running_var.reshape(_channel_shape(x.ndim, c)), dtype=x.dtype,
                     device=x.device)
    xhat = centered / (var + eps).sqrt()
    return affine(xhat, _per_channel(weight, x.ndim), _per_channel(bias, x.ndim))


def _channel_shape(ndim, channels=-1):
    return (1, channels) + (1,) * (ndim - 2)                       # (C,) -> (1, C, 1, ...)


def _per_channel(param, ndim):
    return None if param is None else param.reshape(_channel_shape(ndim))


def _positions(x):
    """x (N, C, *) as (N, C, S), S the positions flattened."""
    return x.reshape(x.shape[0], x.shape[1], -1)


def _constant_as_torch(var, eps):
    """PyTorch computes InstanceNorm with its BatchNorm kernels, which take 1/sqrt(var + eps)
    as 0 where both are 0: with eps = 0 a constant channel gives y = β, not 0·∞ = NaN
    (GroupNorm's kernels give NaN, as LayerNorm's do). An infinite variance gives that 0."""
    if eps != 0:
        return var
    xp = backend.array_module(var)
    return xp.where(var == 0, xp.inf, var)


# ----- fused: one node, closed-form backward ----------------------------------------------
class GroupNorm(FusedFunction):
    """GroupNorm of x (N, C, *) in one node: statistics per sample and group, the affine
    parameters per channel."""

    saved_names = ("x", "weight", "mean", "rstd")    # what forward saves, in order
    statistics_of = "sample and group"

    @staticmethod
    def forward(ctx, x, weight, bias, num_groups, eps):
        x3 = _positions(x)                                          # (N, C, S)
        ctx.kernels = kernels = for_array(x)
        mean, var = kernels.group_norm_statistics(x3, num_groups)   # (N, G) each
        y, rstd = kernels.group_norm_forward(x3, num_groups, mean, var, weight, bias, eps)
        # Saved: x, weight, and mean and rstd per sample and group; x̂ is recomputed.
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.num_groups, ctx.has_bias = num_groups, bias is not None
        ctx.use_input_stats = True              # the statistics are x's: they take gradient
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved
        x3 = _positions(x)
        dx, dweight, dbias = ctx.kernels.group_norm_backward(
            dy.reshape(x3.shape), x3, ctx.num_groups, weight, mean, rstd, ctx.use_input_stats,
            ctx.has_bias)
        return dx.reshape(x.shape), dweight, dbias

    @staticmethod
    def recompute(ctx, x, weight, bias):
        # the twin, for double backward (InstanceNorm's too, one channel a group, with the
        # batch's statistics), the eps forward added recovered per sample and group
        saved_x, _, _, rstd = ctx.saved
        groups = saved_x.reshape(x.shape[0], ctx.num_groups, -1)               # (N, G, ·)
        var = groups.astype(rstd.dtype, copy=False).var(axis=2)                 # (N, G)
        eps = eps_beside(var, rstd, rstd.shape + (1,), saved_x.dtype)
        return composite_group_norm(x, ctx.num_groups, weight, bias, eps)


class InstanceNorm(GroupNorm):
    """InstanceNorm of x (N, C, *) in one node: GroupNorm's kernels and backward with
    G = C. With ``use_input_stats`` it moves the running statistics in place; without, they
    normalize x and are constants of the graph."""

    statistics_of = "sample and channel"

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, use_input_stats, momentum,
                eps):
        x3 = _positions(x)                                          # (N, C, S)
        (n, c, positions), kernels = x3.shape, for_array(x)
        if use_input_stats:
            mean, var = kernels.group_norm_statistics(x3, c)        # (N, C) each
            # PyTorch's update: each sample's statistics averaged over the batch
            kernels.update_running_stats(running_mean, running_var, mean.mean(0),
                                         var.mean(0), positions, momentum)
            var = _constant_as_torch(var, eps)
        else:
            # Copies: the running statistics may move before this node's backward.
            acc = kernels.accumulation_dtype(x.dtype)
            mean, var = (backend.array_module(x).broadcast_to(stat.astype(acc), (n, c)).copy()
                         for stat in (running_mean, running_var))
        y, rstd = kernels.group_norm_forward(x3, c, mean, var, weight, bias, eps)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.kernels, ctx.num_groups, ctx.has_bias = kernels, c, bias is not None
        ctx.use_input_stats = use_input_stats
        return y.reshape(x.shape)

    @staticmethod
    def recompute(ctx, x, weight, bias):
        # the twin, for double backward; no running statistics move again
        if ctx.use_input_stats:
            return GroupNorm.recompute(ctx, x, weight, bias)
        _, _, mean, rstd = ctx.saved          # the running statistics, alike in each row
        return composite_instance_norm(x, mean[0], 1 / (rstd[0] * rstd[0]), weight, bias,
                                       use_input_stats=False, eps=0.0)


# ----- the public entries -----------------------------------------------------------------
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, impl=None):
    r"""Group normalization (``torch.nn.functional.group_norm``): the C channels of x
    (N, C, *) in ``num_groups`` groups of C/G; each sample's group normalized over its
    channels and positions, then scaled and shifted per channel.

    .. math::
        y = \frac{x - \mathrm{E}_{g}[x]}{\sqrt{\mathrm{Var}_{g}[x] + \epsilon}} \cdot
            \gamma_c + \beta_c

    ``num_groups=1`` is LayerNorm over (C, *) with per-channel parameters; ``num_groups=C``
    is InstanceNorm without running statistics.

    Args:
        input: x, a floating-point Tensor of shape (N, C, *) (torch's name: ``input=`` as
            keyword).
        num_groups: G, a positive int dividing C.
        weight, bias: γ and β of shape (C,), or None.
        eps: added to the biased variance inside the square root.
        impl: ``"fused"`` or ``"composite"``; None: as in ``layer_norm``.

    Shape:
        x: (N, C, *); output: x's shape.

    Example:
        >>> x = mg.randn(8, 32, 5, 5, requires_grad=True)
        >>> y = F.group_norm(x, 4)                      # 4 groups of 8 channels per sample
    """
    x = input                                 # torch's keyword; x, as the formula says
    impl = arguments.resolve_impl("group_norm", impl)
    eps = dtypes.float_of(eps, "group_norm", "eps")   # a bool, NumPy scalar or 0-d tensor
    num_groups = dtypes.index_of(num_groups)      # a 0-d integer tensor is its int, as torch's
    _check_group_norm(x, num_groups, weight, bias, eps, impl)
    if x.size == 0:
        return GROUP_NORM.empty_output(x, weight=weight, bias=bias)
    if impl == "composite":
        with op_group("group_norm"):
            return composite_group_norm(x, num_groups, weight, bias, eps)
    return GroupNorm.apply(x, weight, bias, num_groups=num_groups, eps=eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5, impl=None):
    r"""Instance normalization (``torch.nn.functional.instance_norm``): each sample's
    channel of x (N, C, *) normalized over its positions, then scaled and shifted per
    channel; GroupNorm with one channel per group.

    .. math::
        y = \frac{x - \mathrm{E}_{n,c}[x]}{\sqrt{\mathrm{Var}_{n,c}[x] + \epsilon}} \cdot
            \gamma_c + \beta_c

    With ``use_input_stats`` (the default) each sample's statistics normalize it and, when
    given, the running statistics move in place toward their average over the batch:
    ``running = (1 - momentum)·running + momentum·batch`` (unbiased variance for
    ``running_var``). Without it the running statistics normalize x.

    Args:
        input: x, a floating-point Tensor of shape (N, C, *) (torch's name: ``input=`` as
            keyword); with ``use_input_stats``, more than one position per channel.
        running_mean, running_var: Tensors or arrays of shape (C,), both or neither; needed
            when ``use_input_stats`` is False.
        weight, bias: γ and β of shape (C,), or None.
        momentum: the weight of the batch in the running update; any number, as torch's
            (outside [0, 1] the update extrapolates).
        eps: added to the variance inside the square root.
        impl: ``"fused"`` or ``"composite"``; None: as in ``layer_norm``.

    Shape:
        x: (N, C, *); output: x's shape.

    Example:
        >>> x = mg.randn(4, 3, 16, 16)
        >>> y = F.instance_norm(x)          # each image's channel: mean 0, variance ≈ 1
    """
    x = input                                 # torch's keyword; x, as the formula says
    impl = arguments.resolve_impl("instance_norm", impl)
    eps = dtypes.float_of(eps, "instance_norm", "eps")
    momentum = dtypes.float_of(momentum, "instance_norm", "momentum")
    stats = _check_instance_norm(x, running_mean, running_var, weight, bias, use_input_stats,
                                 momentum, eps, impl)
    if x.size == 0:                         # an empty batch: an empty result, stats unchanged
        return INSTANCE_NORM.empty_output(x, weight=weight, bias=bias)
    running_mean, running_var = (array for array, _ in stats)
    if impl == "composite":
        with op_group("instance_norm"):
            y = composite_instance_norm(x, running_mean, running_var, weight, bias,
                                        use_input_stats, momentum, eps)
    else:
        y = InstanceNorm.apply(x, weight, bias, running_mean=running_mean,
                               running_var=running_var, use_input_stats=use_input_stats,
                               momentum=momentum, eps=eps)
    if use_input_stats:
        for _, owner in stats:
            if owner is not None:
                owner._bump_version()          # updated in place: a new version
    return y


# ----- the checks -------------------------------------------------------------------------
def _check_group_norm(x, num_groups, weight, bias, eps, impl):
    fn = "group_norm"
    _check_channels_input(fn, x)
    if isinstance(num_groups, (bool, np.bool_)) or not isinstance(num_groups, numbers.Integral):
        raise TypeError(f"{fn}: num_groups must be an int, got {type(num_groups).__name__} "
                        f"{num_groups!r}")
    if num_groups < 1:
        error = GroupCountError if num_groups == 0 else ChannelNormError
        raise error(f"{fn}: num_groups must be positive, got {num_groups}")
    if x.shape[1] % num_groups:
        raise ChannelNormError(f"{fn}: the channels of x (dim 1) must be divisible by "
                               f"num_groups; got x of shape {x.shape} and "
                               f"num_groups={num_groups}")
    _check_per_channel(fn, weight, bias, x)
    arguments.check_eps(fn, eps)
    arguments.check_impl(fn, impl)
    if x.size and x.size // num_groups == 1:    # PyTorch's check: N·(C/G)·S values in all
        raise ValueError(f"{fn}: expected more than 1 value per group in the batch, got x "
                         f"of shape {x.shape} and num_groups={num_groups}")


def _check_instance_norm(x, running_mean, running_var, weight, bias, use_input_stats,
                         momentum, eps, impl):
    """Every check of ``instance_norm``; returns [(array or None, owning Tensor or None)]
    for the running mean and variance, so a bad running_var cannot leave running_mean
    moved."""
    fn = "instance_norm"
    _check_channels_input(fn, x)
    _check_per_channel(fn, weight, bias, x)
    arguments.check_eps(fn, eps)
    arguments.check_impl(fn, impl)
    arguments.check_momentum(fn, momentum)
    if not isinstance(use_input_stats, (bool, np.bool_)):
        raise TypeError(f"{fn}: use_input_stats must be a bool, got "
                        f"{type(use_input_stats).__name__}")
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{fn}: running_mean and running_var must both be None or neither")
    if not use_input_stats and running_mean is None:
        raise ChannelNormError(f"{fn}: running_mean and running_var are required when "
                               "use_input_stats=False")
    # any floating dtype, as torch's instance_norm takes
    stats = [arguments.running_stat(fn, name, stat, x, use_input_stats, "use_input_stats=True",
                                    ChannelNormError)
             for name, stat in (("running_mean", running_mean), ("running_var", running_var))]
    if use_input_stats and math.prod(x.shape[2:]) == 1:    # torch's: an empty batch too
        raise ValueError(f"{fn}: expected more than 1 position per channel to compute a "
                         f"variance when use_input_stats=True, got x of shape {x.shape}")
    return stats


def _check_channels_input(fn, x):
    arguments.check_tensor(fn, "x", x)
    if x.ndim < 2:
        raise ChannelNormError(f"{fn}: x must have at least 2 dims (N, C, *), got shape "
                               f"{x.shape}")


def _check_per_channel(fn, weight, bias, x):
    """weight and bias: None, or Tensors of shape (C,) in x's dtype and on x's device."""
    channels = x.shape[1:2]
    for name, param in (("weight", weight), ("bias", bias)):
        if param is None:
            continue
        arguments.check_tensor(fn, name, param)
        if param.shape != channels:
            raise ChannelNormError(f"{fn}: {name} must have shape {channels}, one value per "
                                   f"channel of x {x.shape}, got {param.shape}")
        if param.dtype != x.dtype:
            raise MixedDtypeError(f"{fn}: {name} must have x's dtype {x.dtype}, got "
                                  f"{param.dtype}")
        arguments.check_param(fn, name, param, channels, x)     # the device


# ----- the specs --------------------------------------------------------------------------
def groups_for(channels):
    """The tools' num_groups for ``channels`` when none is given: the smallest divisor above
    1 that leaves at least 2 channels per group (2 for an even C), else 1 (LayerNorm over
    (C, *)); a call that names num_groups takes that."""
    return next((g for g in range(2, channels // 2 + 1) if channels % g == 0), 1)


def _group_call(function, given, impl, num_groups=None, **options):
    x = given["x"]
    groups = groups_for(x.shape[1]) if num_groups is None else num_groups
    return function(x, groups, given.get("weight"), given.get("bias"), impl=impl, **options)


def _group_torch(tF, given, num_groups=None, **options):
    x, weight, bias = given["x"], given.get("weight"), given.get("bias")
    groups = groups_for(x.shape[1]) if num_groups is None else num_groups
    if weight is None and bias is not None:
        # PyTorch's CPU backward of a bias without a weight fails ("tensor does not have a
        # device"); a constant weight of ones is the same function
        weight = x.new_ones(x.shape[1])
    return tF.group_norm(x, groups, weight, bias, **options)


def _instance_call(function, given, impl, training=True, **options):
    # the generic "training" is InstanceNorm's use_input_stats: in eval the running
    # statistics normalize
    stats = [given.get(name) for name in ("running_mean", "running_var")]
    return function(given["x"], *stats, given.get("weight"), given.get("bias"),
                    use_input_stats=training, impl=impl, **options)


def _instance_torch(tF, given, training=True, **options):
    stats = [given.get(name) for name in ("running_mean", "running_var")]
    return tF.instance_norm(given["x"], *stats, given.get("weight"), given.get("bias"),
                            use_input_stats=training, **options)


_CHANNEL_AFFINE = (Input("x", "x"), Input("weight", "per-channel", optional=True, init=1.0),
                   Input("bias", "per-channel", optional=True))
_KERNELS = ("group_norm_statistics", "group_norm_forward", "group_norm_backward")
GROUP_NORM = Norm(
    name="group_norm", title="GroupNorm", function=group_norm,
    composite=composite_group_norm, fused=GroupNorm, inputs=_CHANNEL_AFFINE,
    options=(Option("num_groups", None), Option("eps", 1e-5)), call=_group_call,
    torch=_group_torch, ndim=(2, None), shape_text="(N, C, *)", places=("channel",),
    statistics=None, kernels=_KERNELS)
INSTANCE_NORM = Norm(
    name="instance_norm", title="InstanceNorm", function=instance_norm,
    composite=composite_instance_norm, fused=InstanceNorm,
    inputs=(*_CHANNEL_AFFINE,
            Input("running_mean", "running", optional=True, differentiable=False),
            Input("running_var", "running", optional=True, differentiable=False, init=1.0)),
    options=(Option("momentum", 0.1), Option("eps", 1e-5)), call=_instance_call,
    torch=_instance_torch, ndim=(3, None), shape_text="(N, C, L) or (N, C, H, W)",
    places=("channel",), statistics=None, kernels=(*_KERNELS, "update_running_stats"))
