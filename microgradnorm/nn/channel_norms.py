"""The channel norms of CNNs (``impl="fused" | "composite"``): GroupNorm, InstanceNorm1d/2d/3d,
BatchNorm2d/3d and SyncBatchNorm (one process: BatchNorm over (N, C, *)). Each holds its
parameters and buffers under PyTorch's names and forwards to its functional norm, which
checks the input."""

import math
import numbers
import warnings

import numpy as np

from .. import functional as F
from ..dtypes import index_of
from ..norms import arguments
from .module import Parameter, _check_positive, _check_sizes, _dtype
from .normalization import NormModule, _BatchNorm, _fill, _NormBase

__all__ = ["BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "SyncBatchNorm"]


def _affine_parameters(module, channels, affine, bias, dtype, device):
    """weight (ones) and bias (zeros) of shape (C,), or None, as PyTorch initialises them."""
    dtype = _dtype(dtype)
    # None registered too, as torch's
    module.register_parameter(
        "weight", Parameter(np.ones(channels, dtype), device=device) if affine else None)
    module.register_parameter("bias", Parameter(np.zeros(channels, dtype), device=device)
                              if affine and bias else None)
    return dtype


class GroupNorm(NormModule):
    r"""GroupNorm (``torch.nn.GroupNorm``): the C channels in ``num_groups`` groups, each
    sample's group normalized over its channels and positions, then γ and β per channel:

    .. math::
        y = \frac{x - \mathrm{E}_{g}[x]}{\sqrt{\mathrm{Var}_{g}[x] + \epsilon}} \cdot
            \gamma_c + \beta_c

    No running statistics: training and eval compute the same. ``num_groups=1`` is a
    LayerNorm over (C, *) with per-channel parameters, ``num_groups=C`` an InstanceNorm.

    Shape:
        input (N, C, *), output the same.

    Example:
        >>> gn = nn.GroupNorm(4, 32); y = gn(mg.randn(8, 32, 5, 5))
    """

    norm = "group_norm"

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True, impl=None):
        super().__init__()
        num_groups = index_of(num_groups)             # a 0-d int tensor: its int, as torch's
        if type(num_groups) is int and num_groups == 0:     # torch: num_channels % 0
            raise arguments.GroupCountError("GroupNorm: num_groups must be a positive int, got 0")
        if type(num_groups) is int and num_groups < 0:      # torch builds, its call raises
            raise arguments.ChannelNormError(f"GroupNorm: num_groups must be a positive int, "
                                             f"got {num_groups}")
        if type(num_channels) is int and num_channels < 0:     # torch: a negative size
            raise arguments.ChannelNormError(f"GroupNorm: num_channels must be a "
                                             f"non-negative int, got {num_channels}")
        try:
            _check_positive("GroupNorm", num_groups=num_groups)
            num_channels, = _check_sizes("GroupNorm", num_channels=num_channels)
        except TypeError as error:      # a float or bool count: torch divides it first
            if not all(isinstance(v, numbers.Real) for v in (num_groups, num_channels)):
                raise
            raise arguments.ChannelCountError(str(error)) from None
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        arguments.check_eps("GroupNorm", eps)
        arguments.check_impl("GroupNorm", impl)
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.affine, self.impl = affine, impl
        _affine_parameters(self, num_channels, affine, bias, dtype, device)

    @classmethod
    def for_width(cls, width, impl=None, dtype=None, device=None):
        """GroupNorm of ``width`` channels in gcd(width/2, 32) groups: Wu and He's 32 for 64
        channels and more (of a power of two), and at least 2 channels to a group below,
        so that a group is not InstanceNorm's one channel (16 channels: 8 groups)."""
        groups = math.gcd(max(width // 2, 1), 32)
        return cls(groups, width, impl=impl, dtype=dtype, device=device)

    def reset_parameters(self):
        """γ to ones and β to zeros, in place (``torch.nn.GroupNorm.reset_parameters``)."""
        _fill(self.weight, 1.0)
        _fill(self.bias, 0.0)

    def forward(self, input):
        """GroupNorm of ``input``. Shape: (N, C, *) -> the same."""
        return F.group_norm(self._check_input(input), self.num_groups, self.weight, self.bias,
                            self.eps, self.impl)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}{self._impl_repr()}")


class _InstanceNorm(_NormBase):
    """InstanceNorm1d's, 2d's and 3d's shared body: PyTorch's ``_InstanceNorm``, whose
    defaults keep no affine parameters and no running statistics. ``batch_dims`` is the dims
    of a batched input; one fewer is a single sample."""

    batch_dims = None

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True,
                 impl=None):
        # PyTorch registers num_batches_tracked too, and InstanceNorm never advances it
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias, impl)

    def _feature_dim(self, x):
        """The channels' dim of ``x``, its dims checked: 0 for a single sample, else 1."""
        if x.ndim not in (self.batch_dims - 1, self.batch_dims):
            raise ValueError(f"{type(self).__name__}: expected {self.batch_dims - 1}D or "
                             f"{self.batch_dims}D input, got {x.ndim}D input of shape "
                             f"{x.shape}")
        return x.ndim - (self.batch_dims - 1)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # torch's: a state dict without versions (saved before 0.4, when InstanceNorm kept
        # running statistics by default) that has them, for a module that keeps none, is an
        # error even with strict=False; the keys are taken out of the unexpected ones
        if local_metadata.get("version") is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var")
                    if prefix + name in state_dict]
            if keys:
                name = type(self).__name__
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {' and '.join(map(repr, keys))} for "
                    f"{name} with track_running_stats=False: a state dict saved before "
                    f"0.4.0 may hold them; remove these keys from the state dict, or set "
                    f"track_running_stats=True in {name} to use them")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def _instance_norm(self, x):
        """PyTorch's forward: the dims and channels checked, a single sample given a batch
        dim of 1; the sample's own statistics in training or without running statistics,
        the running ones in eval. ``momentum=None`` is 0 here: the running statistics stay."""
        x, name = self._check_input(x), type(self).__name__
        feature_dim = self._feature_dim(x)
        if x.shape[feature_dim] != self.num_features:
            message = (f"{name}({self.num_features}): expected input's size at "
                       f"dim={feature_dim} to match num_features ({self.num_features}), got "
                       f"{x.shape[feature_dim]} (input of shape {x.shape})")
            if self.affine:
                raise ValueError(message)
            warnings.warn(message + "; num_features is not used because affine=False",
                          UserWarning, stacklevel=3)
        batch = x if x.ndim == self.batch_dims else x.unsqueeze(0)
        y = F.instance_norm(batch, self.running_mean, self.running_var, self.weight,
                            self.bias, use_input_stats=self.training or not
                            self.track_running_stats,
                            momentum=0.0 if self.momentum is None else self.momentum,
                            eps=self.eps, impl=self.impl)
        return y if x.ndim == self.batch_dims else y.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    r"""InstanceNorm over (N, C, L) or (C, L) (``torch.nn.InstanceNorm1d``): each sample's
    channel normalized over its L positions,

    .. math::
        y = \frac{x - \mathrm{E}_{n,c}[x]}{\sqrt{\mathrm{Var}_{n,c}[x] + \epsilon}} \cdot
            \gamma_c + \beta_c

    PyTorch's defaults: no affine parameters, no running statistics (the sample's own
    statistics in training and eval alike); ``track_running_stats=True`` keeps them and
    normalizes with them in eval.

    Example:
        >>> y = nn.InstanceNorm1d(3)(mg.randn(4, 3, 20))
    """

    batch_dims = 3

    def forward(self, input):
        """InstanceNorm of ``input``. Shape: (N, C, L) or (C, L) -> the same."""
        return self._instance_norm(input)


class InstanceNorm2d(_InstanceNorm):
    r"""InstanceNorm over (N, C, H, W) or (C, H, W) (``torch.nn.InstanceNorm2d``): each
    image's channel normalized over its H·W positions; as ``InstanceNorm1d`` otherwise.

    Example:
        >>> y = nn.InstanceNorm2d(3, affine=True)(mg.randn(4, 3, 8, 8))
    """

    norm = "instance_norm"
    batch_dims = 4

    def forward(self, input):
        """InstanceNorm of ``input``. Shape: (N, C, H, W) or (C, H, W) -> the same."""
        return self._instance_norm(input)


class InstanceNorm3d(_InstanceNorm):
    r"""InstanceNorm over (N, C, D, H, W) or (C, D, H, W) (``torch.nn.InstanceNorm3d``):
    each volume's channel normalized over its D·H·W positions; as ``InstanceNorm1d``
    otherwise.

    Example:
        >>> y = nn.InstanceNorm3d(3)(mg.randn(2, 3, 4, 4, 4))
    """

    batch_dims = 5

    def forward(self, input):
        """InstanceNorm of ``input``. Shape: (N, C, D, H, W) or (C, D, H, W) -> the same."""
        return self._instance_norm(input)


class BatchNorm2d(_BatchNorm):
    r"""BatchNorm over (N, C, H, W) per channel (``torch.nn.BatchNorm2d``): statistics over
    N, H and W. In training the batch's (biased variance) normalize and the running ones
    move (unbiased variance; ``momentum=None``: the cumulative average), in eval the running
    ones normalize unless ``track_running_stats=False``.

    Example:
        >>> bn = nn.BatchNorm2d(16); y = bn(mg.randn(8, 16, 6, 6))
    """

    norm = "batch_norm"
    places = ("channel",)
    input_dims = (4,)

    def forward(self, input):
        """BatchNorm of ``input`` per channel (dim 1). Shape: (N, C, H, W) -> the same."""
        return self._batch_norm(input)


class BatchNorm3d(_BatchNorm):
    r"""BatchNorm over (N, C, D, H, W) per channel (``torch.nn.BatchNorm3d``): statistics
    over N, D, H and W; as ``BatchNorm2d`` otherwise.

    Example:
        >>> bn = nn.BatchNorm3d(4); y = bn(mg.randn(2, 4, 3, 5, 5))
    """

    input_dims = (5,)

    def forward(self, input):
        """BatchNorm of ``input`` per channel (dim 1). Shape: (N, C, D, H, W) -> the same."""
        return self._batch_norm(input)


class SyncBatchNorm(_BatchNorm):
    r"""BatchNorm over (N, C, *) (``torch.nn.SyncBatchNorm``). PyTorch's synchronizes the
    statistics across the processes of a distributed run; this library runs in one process,
    where torch's falls back to ``F.batch_norm``, and so does this one: BatchNorm over every
    dim but the channels, for any input of at least 2 dims. ``process_group`` is kept and
    not used. ``convert_sync_batchnorm`` turns a model's BatchNorm*d into these.

    Example:
        >>> model = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(4)))
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True, impl=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias, impl=impl)
        self.process_group = process_group

    def _check_input_dim(self, x):
        if x.ndim < 2:
            raise ValueError(f"SyncBatchNorm: expected input of at least 2 dims (got "
                             f"{x.ndim}D input of shape {x.shape})")
        if x.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        """BatchNorm of ``input`` per channel (dim 1). Shape: (N, C, *) -> the same."""
        return self._batch_norm(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm1d/2d/3d below it replaced by a SyncBatchNorm of
        its options that holds its parameters and buffers (the same Tensors) and its
        training mode; a BatchNorm itself gives a new module, anything else comes back
        changed in place (``torch.nn.SyncBatchNorm.convert_sync_batchnorm``)."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group,
                            bias=module.bias is not None, impl=module.impl)
            if module.affine:
                converted.weight, converted.bias = module.weight, module.bias
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                setattr(converted, name, getattr(module, name))
            object.__setattr__(converted, "training", module.training)
        for name, child in list(module.named_children()):
            setattr(converted, name, cls.convert_sync_batchnorm(child, process_group))
        return converted
