"""The lazy convolutions (``torch.nn.LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``):
``in_channels`` is the channel count of the first input, whose call gives weight and bias
their shapes (``UninitializedParameter`` until then), draws them as the plain module's
``reset_parameters`` does and turns the module into it (``cls_to_become``): lazy.py's
``LazyModuleMixin``, as ``nn.LazyLinear`` and the lazy norms."""

from .conv import Conv1d, Conv2d, Conv3d, _check_groups
from .conv_more import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .lazy import LazyModuleMixin, UninitializedParameter
from .module import Module, _check_sizes

__all__ = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]


class _LazyConvNd(LazyModuleMixin):
    """What the lazy convolutions share (torch's ``_LazyConvXdMixin``), placed before a
    convolution class: its options checked at construction, ``in_channels`` 0 and the
    parameters waiting for their shapes until the first call."""

    def _lazy_parameters(self, out_channels, bias, device, dtype):
        # after the options: out_channels checked as the plain module's (torch's lazy
        # module leaves that to the first call's convolution)
        name = type(self).__name__
        out_channels, = _check_sizes(name, (), out_channels=out_channels)   # bool: at the call
        if out_channels % self.groups:
            raise ValueError(f"{name}: out_channels must be divisible by groups, got "
                             f"out_channels={out_channels}, groups={self.groups}")
        self.in_channels, self.out_channels = 0, out_channels
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.register_parameter("bias", UninitializedParameter(device=device, dtype=dtype)
                                if bias else None)               # None too, as torch's

    def initialize_parameters(self, input):
        """``in_channels`` from ``input``'s channel dim (dim 1, or dim 0 of an unbatched
        input), then weight and bias of the plain module's shapes, drawn by its
        ``reset_parameters``; loaded while lazy, ``in_channels`` from the loaded weight."""
        dims, name = self.dims, self._describe()
        if not self.has_uninitialized_params():
            if self.weight.ndim != dims + 2:
                raise RuntimeError(f"{name}: weight must have {dims + 2} dims, got shape "
                                   f"{self.weight.shape}")
            self.in_channels = self.weight.shape[0] if self.transposed else \
                self.weight.shape[1] * self.groups
            return
        if input.ndim not in (dims + 1, dims + 2):
            raise RuntimeError(f"{name}: expected a {dims + 1}-D (unbatched) or {dims + 2}-D "
                               f"(batched) input, got input of size {input.shape}")
        channels = input.shape[input.ndim - dims - 1]
        if channels % self.groups:
            raise ValueError(f"{name}: in_channels must be divisible by groups, got an input "
                             f"of {channels} channels, groups={self.groups}")
        self.in_channels = channels
        self.weight.materialize(self._weight_shape())
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()

    def reset_parameters(self):
        """The plain module's draws once the shapes are known; nothing before (0 input
        channels draw nothing and warn of nothing, as torch's: the bias zeros)."""
        self._reset_once_shaped(self.in_channels)


class _LazyConv(_LazyConvNd):
    """A lazy Conv1d, 2d or 3d: torch's arguments, without ``in_channels``."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        Module.__init__(self)
        _check_groups(type(self).__name__, groups)
        self._set_options(kernel_size, stride, padding, dilation, groups, padding_mode)
        self._lazy_parameters(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvNd):
    """A lazy ConvTranspose1d, 2d or 3d: torch's arguments, without ``in_channels``."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        Module.__init__(self)
        _check_groups(type(self).__name__, groups)
        self._set_options(kernel_size, stride, padding, output_padding, groups, dilation,
                          padding_mode)
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """``nn.Conv1d`` whose ``in_channels`` is the channel count of its first input
    (``torch.nn.LazyConv1d``).

    Example:
        >>> conv = nn.LazyConv1d(8, 3); y = conv(mg.randn(2, 4, 10)); conv
        Conv1d(4, 8, kernel_size=(3,), stride=(1,))
    """

    cls_to_become = Conv1d

    def forward(self, input):
        """Initialise at the first call, then Conv1d's forward.
        Shape: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out)."""
        return self._lazy_forward(input)


class LazyConv2d(_LazyConv, Conv2d):
    """``nn.Conv2d`` whose ``in_channels`` is the channel count of its first input
    (``torch.nn.LazyConv2d``).

    Example:
        >>> conv = nn.LazyConv2d(8, 3, padding=1); y = conv(mg.randn(2, 3, 16, 16))
        >>> conv.in_channels, type(conv).__name__
        (3, 'Conv2d')
    """

    cls_to_become = Conv2d

    def forward(self, input):
        """Initialise at the first call, then Conv2d's forward.
        Shape: (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out)."""
        return self._lazy_forward(input)


class LazyConv3d(_LazyConv, Conv3d):
    """``nn.Conv3d`` whose ``in_channels`` is the channel count of its first input
    (``torch.nn.LazyConv3d``).

    Example:
        >>> conv = nn.LazyConv3d(8, 3); y = conv(mg.randn(1, 3, 5, 8, 8))  # Conv3d(3, 8, ...)
    """

    cls_to_become = Conv3d

    def forward(self, input):
        """Initialise at the first call, then Conv3d's forward.
        Shape: (N, C_in, D, H, W) or (C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out)."""
        return self._lazy_forward(input)


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """``nn.ConvTranspose1d`` whose ``in_channels`` is the channel count of its first input
    (``torch.nn.LazyConvTranspose1d``).

    Example:
        >>> up = nn.LazyConvTranspose1d(4, 3, stride=2); y = up(mg.randn(2, 8, 10))  # (2, 4, 21)
    """

    cls_to_become = ConvTranspose1d

    def forward(self, input, output_size=None):
        """Initialise at the first call, then ConvTranspose1d's forward (``output_size`` as
        its). Shape: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out)."""
        return self._lazy_forward(input, output_size)


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """``nn.ConvTranspose2d`` whose ``in_channels`` is the channel count of its first input
    (``torch.nn.LazyConvTranspose2d``).

    Example:
        >>> up = nn.LazyConvTranspose2d(4, 2, stride=2); y = up(mg.randn(1, 8, 6, 6))
    """

    cls_to_become = ConvTranspose2d

    def forward(self, input, output_size=None):
        """Initialise at the first call, then ConvTranspose2d's forward (``output_size`` as
        its). Shape: (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out)."""
        return self._lazy_forward(input, output_size)


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """``nn.ConvTranspose3d`` whose ``in_channels`` is the channel count of its first input
    (``torch.nn.LazyConvTranspose3d``).

    Example:
        >>> up = nn.LazyConvTranspose3d(4, 2, stride=2); y = up(mg.randn(1, 8, 2, 6, 6))
    """

    cls_to_become = ConvTranspose3d

    def forward(self, input, output_size=None):
        """Initialise at the first call, then ConvTranspose3d's forward (``output_size`` as
        its). Shape: (N, C_in, D, H, W) or (C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out)."""
        return self._lazy_forward(input, output_size)
