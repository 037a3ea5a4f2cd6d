"""The lazy norm modules (``torch.nn.LazyBatchNorm1d/2d/3d``, ``LazyInstanceNorm1d/2d/3d``):
``num_features`` is the channel count of the first input, whose call gives the parameters and
running statistics their shape (``UninitializedParameter``, ``UninitializedBuffer`` until
then), initializes them as the module's ``reset_parameters`` does and turns the module into
its plain class (``cls_to_become``), as ``nn.LazyLinear`` does: lazy.py's
``LazyModuleMixin``."""

import numpy as np

from ..tensor import Tensor
from .channel_norms import (BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d,
                            InstanceNorm3d, _InstanceNorm)
from .lazy import LazyModuleMixin, UninitializedParameter, _Uninitialized
from .module import Module, _dtype
from .normalization import BatchNorm1d, _BatchNorm

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d", "UninitializedBuffer"]


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet (``torch.nn.UninitializedBuffer``), a lazy
    module's running statistic until its first call: it holds no values (an empty array of
    its dtype), and ``materialize(shape)`` gives it its shape and makes it a plain Tensor.
    Like ``nn.Buffer``'s, it is marked a buffer (``isinstance(b, nn.Buffer)``), with its
    ``persistent`` flag (default True).

    Example:
        >>> b = nn.UninitializedBuffer(); b.materialize((3,)); type(b).__name__
        'Tensor'
    """

    becomes = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        super().__init__(np.empty(0, _dtype(dtype)), requires_grad=requires_grad, device=device)
        # as torch's: an ``nn.Buffer`` (isinstance holds) with its flag, before and after
        # ``materialize``, so assigning it registers a buffer
        self.persistent, self._is_buffer = persistent, True

    def __repr__(self):
        return "<UninitializedBuffer>"


class _LazyNorm(LazyModuleMixin):
    """What the lazy norms share (PyTorch's ``_LazyNormBase``), placed before a
    ``_NormBase`` family: ``num_features`` 0 and uninitialized state until the first call.
    PyTorch's defaults, InstanceNorm's included: affine, tracking running statistics."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True, impl=None):
        Module.__init__(self)
        self._set_options(0, eps, momentum, affine, track_running_stats, impl)
        # None registered too, as torch's
        self.register_parameter("weight", UninitializedParameter(device=device, dtype=dtype)
                                if affine else None)
        self.register_parameter("bias", UninitializedParameter(device=device, dtype=dtype)
                                if affine and bias else None)
        if track_running_stats:
            for name in ("running_mean", "running_var"):
                self.register_buffer(name, UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 Tensor(np.array(0, np.int64), dtype=np.int64, device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def initialize_parameters(self, input):
        """``num_features`` from ``input``'s channel dim (its dims checked first); the
        parameters and running statistics of that shape, set by ``reset_parameters``."""
        if not self.has_uninitialized_params():
            # loaded from a state dict while lazy: the loaded shapes give num_features (torch
            # leaves it 0 then; the channel check here needs it)
            loaded = [t for t in (self.weight, self.bias, self.running_mean, self.running_var)
                      if t is not None]
            if loaded and self.num_features == 0:
                self.num_features = loaded[0].shape[0]
            return
        channels = input.shape[self._feature_dim(input)]
        if channels == 0:
            raise ValueError(f"{self._describe()}: num_features must be positive, got an "
                             f"input of shape {input.shape} (num_features = its channels)")
        self.num_features = channels
        for tensor in (self.weight, self.bias, self.running_mean, self.running_var):
            if tensor is not None:
                tensor.materialize((channels,))
        self.reset_parameters()

    def reset_parameters(self):
        """The module's own reset once the shapes are known; nothing before."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()


class LazyBatchNorm1d(_LazyNorm, _BatchNorm):
    """``nn.BatchNorm1d`` whose ``num_features`` is dim 1 of its first input
    (``torch.nn.LazyBatchNorm1d``).

    Example:
        >>> bn = nn.LazyBatchNorm1d(); y = bn(mg.randn(8, 5)); bn.num_features
        5
    """

    cls_to_become = BatchNorm1d
    input_dims = BatchNorm1d.input_dims

    def forward(self, input):
        """Initialise at the first call, then BatchNorm1d's forward.
        Shape: (N, C) or (N, C, L) -> the same."""
        return self._lazy_forward(input)


class LazyBatchNorm2d(_LazyNorm, _BatchNorm):
    """``nn.BatchNorm2d`` whose ``num_features`` is dim 1 of its first input
    (``torch.nn.LazyBatchNorm2d``).

    Example:
        >>> bn = nn.LazyBatchNorm2d(); y = bn(mg.randn(2, 3, 4, 4))      # BatchNorm2d(3)
    """

    cls_to_become = BatchNorm2d
    input_dims = BatchNorm2d.input_dims

    def forward(self, input):
        """Initialise at the first call, then BatchNorm2d's forward.
        Shape: (N, C, H, W) -> the same."""
        return self._lazy_forward(input)


class LazyBatchNorm3d(_LazyNorm, _BatchNorm):
    """``nn.BatchNorm3d`` whose ``num_features`` is dim 1 of its first input
    (``torch.nn.LazyBatchNorm3d``).

    Example:
        >>> bn = nn.LazyBatchNorm3d(); y = bn(mg.randn(2, 3, 2, 4, 4))   # BatchNorm3d(3)
    """

    cls_to_become = BatchNorm3d
    input_dims = BatchNorm3d.input_dims

    def forward(self, input):
        """Initialise at the first call, then BatchNorm3d's forward.
        Shape: (N, C, D, H, W) -> the same."""
        return self._lazy_forward(input)


class LazyInstanceNorm1d(_LazyNorm, _InstanceNorm):
    """``nn.InstanceNorm1d`` whose ``num_features`` is the channel count of its first input
    (``torch.nn.LazyInstanceNorm1d``; here a single sample's (C, L) gives C too).

    Example:
        >>> m = nn.LazyInstanceNorm1d(); y = m(mg.randn(2, 3, 10)); m.num_features
        3
    """

    cls_to_become = InstanceNorm1d
    batch_dims = InstanceNorm1d.batch_dims

    def forward(self, input):
        """Initialise at the first call, then InstanceNorm1d's forward.
        Shape: (N, C, L) or (C, L) -> the same."""
        return self._lazy_forward(input)


class LazyInstanceNorm2d(_LazyNorm, _InstanceNorm):
    """``nn.InstanceNorm2d`` whose ``num_features`` is the channel count of its first input
    (``torch.nn.LazyInstanceNorm2d``).

    Example:
        >>> m = nn.LazyInstanceNorm2d(); y = m(mg.randn(2, 3, 8, 8))     # InstanceNorm2d(3)
    """

    cls_to_become = InstanceNorm2d
    batch_dims = InstanceNorm2d.batch_dims

    def forward(self, input):
        """Initialise at the first call, then InstanceNorm2d's forward.
        Shape: (N, C, H, W) or (C, H, W) -> the same."""
        return self._lazy_forward(input)


class LazyInstanceNorm3d(_LazyNorm, _InstanceNorm):
    """``nn.InstanceNorm3d`` whose ``num_features`` is the channel count of its first input
    (``torch.nn.LazyInstanceNorm3d``).

    Example:
        >>> m = nn.LazyInstanceNorm3d(); y = m(mg.randn(1, 3, 2, 4, 4))  # InstanceNorm3d(3)
    """

    cls_to_become = InstanceNorm3d
    batch_dims = InstanceNorm3d.batch_dims

    def forward(self, input):
        """Initialise at the first call, then InstanceNorm3d's forward.
        Shape: (N, C, D, H, W) or (C, D, H, W) -> the same."""
        return self._lazy_forward(input)
