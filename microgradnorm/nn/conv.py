"""Conv1d, Conv2d and Conv3d: torch's parameters, defaults, initialisation and repr over
``F.conv1d``/``F.conv2d``/``F.conv3d``."""

import math
import numbers

import numpy as np

from .. import functional as F
from ..dtypes import ArgumentError, factory_shape, index_of
from ..norms.arguments import ChannelCountError
from . import init
from .module import Module, Parameter, _check_sizes, _dtype

PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _check_groups(name, groups):
    # every convolution module's, the lazy ones' too: a ValueError as torch's (an integer
    # NumPy scalar or 0-d Tensor is its int, as torch's takes them)
    groups = index_of(groups)
    if not isinstance(groups, numbers.Integral):        # a float: torch's TypeError
        raise TypeError(f"{name}: groups must be a positive integer, got {groups!r}")
    if isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{name}: groups must be a positive integer, got {groups!r}")
    return int(groups)


def _check_channels(name, in_channels, out_channels, groups, leading=("out_channels",)):
    """Conv's and ConvTranspose's checks: channel counts of at least 0 (torch builds the
    empty weight of 0 channels; a negative count is its allocation's RuntimeError), each
    divisible by a positive int ``groups`` (ValueErrors as torch's). A bool count is taken
    except for ``leading``, the counts that are a first dim of torch's parameters; the
    counts are returned as the module keeps them."""
    try:
        in_channels, out_channels = _check_sizes(name, leading, in_channels=in_channels,
                                                 out_channels=out_channels)  # Conv2d(True, 2, 1)
    except TypeError as error:
        if not any(isinstance(c, float) for c in (in_channels, out_channels)):
            raise
        # torch divides a float count by groups first: a ValueError where that leaves a
        # remainder, its allocation's TypeError where not; both catch this
        raise ChannelCountError(str(error)) from None
    groups = _check_groups(name, groups)
    for what, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
        if channels % groups:
            raise ValueError(f"{name}: {what} must be divisible by groups, got "
                             f"{what}={channels}, groups={groups}")
    return in_channels, out_channels


class _ConvNd(Module):
    """What Conv1d, Conv2d and Conv3d share: the arguments, parameters and repr of ``dims``
    spatial dims."""

    dims = 0
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__()
        in_channels, out_channels = _check_channels(type(self).__name__, in_channels,
                                                    out_channels, groups)
        self._set_options(kernel_size, stride, padding, dilation, groups, padding_mode)
        self.in_channels, self.out_channels = in_channels, out_channels
        self._make_parameters(bias, device, dtype)
        self.reset_parameters()

    def _set_options(self, kernel_size, stride, padding, dilation, groups, padding_mode):
        # every option but the channels, checked as torch's (a lazy module's too)
        name = type(self).__name__
        self.kernel_size = self._tuple("kernel_size", kernel_size, 1)
        self.stride = self._tuple("stride", stride, 1)
        self.dilation = self._tuple("dilation", dilation, 1)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: invalid padding string {padding!r}, should be one "
                                 f"of 'same', 'valid'")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided "
                                 f"convolutions, got stride={self.stride}")
            self.padding = padding
        else:
            self.padding = self._tuple("padding", padding, 0)
        if padding_mode not in PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {PADDING_MODES}, but got "
                             f"padding_mode={padding_mode!r}")
        self.groups, self.padding_mode = int(index_of(groups)), padding_mode   # checked
        self._reversed_padding_repeated_twice = self._pad_amounts()

    def _make_parameters(self, bias, device, dtype):
        # zeros of torch's shapes, until reset_parameters draws them
        dtype = _dtype(dtype)
        shape = factory_shape(self._weight_shape(), type(self).__name__)   # kernel_size=True
        self.weight = Parameter(np.zeros(shape, dtype), device=device)
        self.register_parameter(   # None registered too, as torch's
            "bias", Parameter(np.zeros(self.out_channels, dtype), device=device) if bias else None)

    def _weight_shape(self):
        # (out_channels, in_channels / groups, *kernel_size); transposed, (in, out / groups, ...)
        first, second = (self.in_channels, self.out_channels) if self.transposed else \
            (self.out_channels, self.in_channels)
        return (first, second // self.groups) + self.kernel_size

    def _tuple(self, what, value, minimum):
        # an int or a sequence of ``dims`` ints, each at least ``minimum`` (torch's _pair);
        # a bool is the int it is, kept for the repr, an integer NumPy scalar its int
        values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * self.dims
        values = tuple(v if isinstance(v, bool) or not isinstance(v, np.integer) else int(v)
                       for v in values)
        wrong_type = any(not isinstance(v, int) for v in values)   # a float, a Tensor: torch's
        if len(values) != self.dims or wrong_type or any(v < minimum for v in values):
            # a negative size is torch's allocation's RuntimeError: ArgumentError is both
            raise (TypeError if wrong_type else ArgumentError)(
                f"{type(self).__name__}: {what} must be an int or {self.dims} ints >= "
                f"{minimum}, got {value!r}")
        return values

    def _pad_amounts(self):
        # F.pad's amounts of a padding_mode other than "zeros", torch's: (left, right) of the
        # last dim first; "same" puts the odd one of d·(k - 1) after, "valid" pads nothing
        if self.padding == "same":
            totals = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            pairs = [(total // 2, total - total // 2) for total in totals]
        elif self.padding == "valid":
            pairs = [(0, 0)] * self.dims
        else:
            pairs = [(p, p) for p in self.padding]
        return tuple(n for pair in reversed(pairs) for n in pair)

    def _conv(self, conv, x):
        # conv (F.conv1d, F.conv2d) of x; a padding_mode other than "zeros" pads with F.pad in
        # that mode first, then convolves without padding, as torch's
        padding = self.padding
        if self.padding_mode != "zeros":
            x = F.pad(x, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            padding = 0
        return conv(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)

    def reset_parameters(self):
        """Draw weight and bias again as torch does, in its order: the weight by
        ``kaiming_uniform_(a=√5)`` (uniform in ±1/√fan_in, fan_in = weight's dim 1 ·
        ∏kernel_size: in_channels / groups, or out_channels / groups for a transposed
        convolution), then the bias uniform in ±1/√fan_in; the same seed gives torch's."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            if fan_in == 0:     # torch draws nothing then (its bias left as allocated)
                init.zeros_(self.bias)
                return
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * self.dims:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * self.dims:
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    r"""1-D convolution over (N, C_in, L) (``torch.nn.Conv1d``), see ``F.conv1d``.

    Args:
        in_channels, out_channels: channel counts, each divisible by ``groups``.
        kernel_size, stride, padding, dilation: an int or (int,); padding also ``"same"``
            or ``"valid"``.
        groups: independent channel groups. bias: learn a bias per output channel.
        padding_mode: ``"zeros"``, or ``"reflect"``, ``"replicate"``, ``"circular"``: the
            input padded by ``F.pad`` in that mode (``padding`` on each side; "same" too),
            then convolved without padding, as torch's.

    Parameters: weight (out_channels, in_channels / groups, k), bias (out_channels,).

    Shape: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out).

    Example:
        >>> nn.Conv1d(3, 8, 5, padding="same")(x)        # x (4, 3, 20) -> (4, 8, 20)
    """

    dims = 1

    def forward(self, input):
        """``F.conv1d`` with this module's weight, bias and options.
        Shape: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out)."""
        return self._conv(F.conv1d, self._check_input(input))


class Conv2d(_ConvNd):
    r"""2-D convolution over (N, C_in, H, W) (``torch.nn.Conv2d``), see ``F.conv2d``.

    Args:
        in_channels, out_channels: channel counts, each divisible by ``groups``.
        kernel_size, stride, padding, dilation: an int or a pair; padding also ``"same"``
            or ``"valid"``.
        groups: independent channel groups. bias: learn a bias per output channel.
        padding_mode: ``"zeros"``, or ``"reflect"``, ``"replicate"``, ``"circular"``: the
            input padded by ``F.pad`` in that mode (``padding`` on each side; "same" too),
            then convolved without padding, as torch's.

    Parameters: weight (out_channels, in_channels / groups, k_h, k_w), bias (out_channels,).

    Shape: (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out).

    Example:
        >>> nn.Conv2d(1, 4, 3, padding=1)(x)             # x (8, 1, 12, 12) -> (8, 4, 12, 12)
    """

    dims = 2

    def forward(self, input):
        """``F.conv2d`` with this module's weight, bias and options.
        Shape: (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out)."""
        return self._conv(F.conv2d, self._check_input(input))


class Conv3d(_ConvNd):
    r"""3-D convolution over (N, C_in, D, H, W) (``torch.nn.Conv3d``), see ``F.conv3d``.

    Args:
        in_channels, out_channels: channel counts, each divisible by ``groups``.
        kernel_size, stride, padding, dilation: an int or 3 ints; padding also ``"same"``
            or ``"valid"``.
        groups: independent channel groups. bias: learn a bias per output channel.
        padding_mode: ``"zeros"``, or ``"reflect"``, ``"replicate"``, ``"circular"``: the
            input padded by ``F.pad`` in that mode (``padding`` on each side; "same" too),
            then convolved without padding, as torch's.

    Parameters: weight (out_channels, in_channels / groups, k_d, k_h, k_w), bias
    (out_channels,), both uniform in ±1/√(in_channels / groups · k_d · k_h · k_w).

    Shape: (N, C_in, D, H, W) or (C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out).

    Example:
        >>> nn.Conv3d(3, 8, 3, padding=1)(x)     # x (2, 3, 8, 16, 16) -> (2, 8, 8, 16, 16)
    """

    dims = 3

    def forward(self, input):
        """``F.conv3d`` with this module's weight, bias and options.
        Shape: (N, C_in, D, H, W) or (C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out)."""
        return self._conv(F.conv3d, self._check_input(input))
