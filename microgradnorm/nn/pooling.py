"""Pooling Modules with torch's arguments and repr: MaxPool1d, MaxPool2d, MaxPool3d,
AvgPool1d, AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d, AdaptiveAvgPool2d,
AdaptiveAvgPool3d, each a one-line forward over its ``F`` function (whose checks apply when
it is called, as torch's)."""

from .. import functional as F
from ..convolution_more import _single      # torch's, a 0-d Tensor its TypeError
from .module import Module


class _MaxPoolNd(Module):
    """What MaxPool1d, 2d and 3d share: the arguments and the repr."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, "
                f"ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """The maximum of each window along L (``torch.nn.MaxPool1d``), see ``F.max_pool1d``.

    Args:
        kernel_size: the window. stride: default ``kernel_size``. padding, dilation: as
            ``F.max_pool1d``. return_indices: also return the maxima's indices.
        ceil_mode: round the output size up.

    Shape: (N, C, L) or (C, L) -> (N, C, L_out).

    Example:
        >>> nn.MaxPool1d(2)(x)                   # (8, 4, 10) -> (8, 4, 5)
    """

    def forward(self, input):
        """The window maxima (and their indices when ``return_indices``).
        Shape: (N, C, L) or (C, L) -> (N, C, L_out)."""
        return F.max_pool1d(self._check_input(input), self.kernel_size, self.stride, self.padding,
                            self.dilation, self.ceil_mode, self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """The maximum of each window over H, W (``torch.nn.MaxPool2d``), see ``F.max_pool2d``.

    Args:
        kernel_size: an int or a pair. stride: default ``kernel_size``. padding, dilation:
            as ``F.max_pool2d``. return_indices: also return the maxima's flat indices.
        ceil_mode: round the output size up.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out).

    Example:
        >>> nn.MaxPool2d(2)(x)                   # (8, 4, 12, 12) -> (8, 4, 6, 6)
    """

    def forward(self, input):
        """The window maxima (and their flat indices when ``return_indices``).
        Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out)."""
        return F.max_pool2d(self._check_input(input), self.kernel_size, self.stride, self.padding,
                            self.dilation, self.ceil_mode, self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """The maximum of each window over D, H, W (``torch.nn.MaxPool3d``), see ``F.max_pool3d``.

    Args:
        kernel_size: an int or 3 ints. stride: default ``kernel_size``. padding, dilation:
            as ``F.max_pool3d``. return_indices: also return the maxima's flat indices.
        ceil_mode: round the output size up.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out).

    Example:
        >>> nn.MaxPool3d((1, 2, 2))(x)           # (2, 4, 8, 16, 16) -> (2, 4, 8, 8, 8)
    """

    def forward(self, input):
        """The window maxima (and their flat indices when ``return_indices``).
        Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out)."""
        return F.max_pool3d(self._check_input(input), self.kernel_size, self.stride, self.padding,
                            self.dilation, self.ceil_mode, self.return_indices)


class AvgPool1d(Module):
    """The mean of each window along L (``torch.nn.AvgPool1d``), see ``F.avg_pool1d``;
    sizes kept as 1-tuples, as torch's.

    Args:
        kernel_size: the window. stride: default ``kernel_size``. padding: zeros each side.
        ceil_mode: round the output size up. count_include_pad: divide by the padded count.

    Shape: (N, C, L) or (C, L) -> (N, C, L_out).

    Example:
        >>> nn.AvgPool1d(3, stride=1, padding=1)(x)      # (8, 4, 10) -> (8, 4, 10)
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(kernel_size if stride is None else stride)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        """The window means. Shape: (N, C, L) -> (N, C, L_out)."""
        return F.avg_pool1d(self._check_input(input), self.kernel_size, self.stride, self.padding,
                            self.ceil_mode, self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    """What AvgPool2d and AvgPool3d share: torch's arguments, kept as given, and the repr."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """The mean of each window over H, W (``torch.nn.AvgPool2d``), see ``F.avg_pool2d``.

    Args:
        kernel_size: an int or a pair. stride: default ``kernel_size``. padding: zeros each
            side. ceil_mode: round the output size up. count_include_pad: divide by the
            padded count. divisor_override: divide every window's sum by this instead.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out).

    Example:
        >>> nn.AvgPool2d(2)(x)                   # (8, 4, 12, 12) -> (8, 4, 6, 6)
    """

    def forward(self, input):
        """The window means. Shape: (N, C, H, W) -> (N, C, H_out, W_out)."""
        return F.avg_pool2d(self._check_input(input), self.kernel_size, self.stride, self.padding,
                            self.ceil_mode, self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPoolNd):
    """The mean of each window over D, H, W (``torch.nn.AvgPool3d``), see ``F.avg_pool3d``.

    Args:
        kernel_size: an int or 3 ints. stride: default ``kernel_size``. padding: zeros each
            side. ceil_mode: round the output size up. count_include_pad: divide by the
            padded count. divisor_override: divide every window's sum by this instead.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out).

    Example:
        >>> nn.AvgPool3d(2)(x)                   # (2, 4, 8, 16, 16) -> (2, 4, 4, 8, 8)
    """

    def forward(self, input):
        """The window means. Shape: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out)."""
        return F.avg_pool3d(self._check_input(input), self.kernel_size, self.stride, self.padding,
                            self.ceil_mode, self.count_include_pad, self.divisor_override)


class _LPPoolNd(Module):
    """What LPPool1d, 2d and 3d share: torch's arguments, kept as given, and the repr."""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride = norm_type, kernel_size, stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    r"""The p-norm of each window along L, :math:`(\sum_{x \in w} x^p)^{1/p}`
    (``torch.nn.LPPool1d``), see ``F.lp_pool1d``.

    Args:
        norm_type: p (inf: the maximum of |x|). kernel_size: the window. stride: default
            ``kernel_size``. ceil_mode: round the output size up.

    Shape: (N, C, L) or (C, L) -> (N, C, L_out).

    Example:
        >>> nn.LPPool1d(2, 3, stride=2)(x)             # (8, 4, 10) -> (8, 4, 4)
    """

    def forward(self, input):
        """The window p-norms. Shape: (N, C, L) or (C, L) -> (N, C, L_out)."""
        return F.lp_pool1d(self._check_input(input), float(self.norm_type), self.kernel_size,
                           self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    r"""The p-norm of each window over H, W, :math:`(\sum_{x \in w} x^p)^{1/p}`
    (``torch.nn.LPPool2d``), see ``F.lp_pool2d``.

    Args:
        norm_type: p (inf: the maximum of |x|). kernel_size: an int or a pair. stride:
            default ``kernel_size``. ceil_mode: round the output size up.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out).

    Example:
        >>> nn.LPPool2d(2, 2)(x)                       # (8, 4, 12, 12) -> (8, 4, 6, 6)
    """

    def forward(self, input):
        """The window p-norms. Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out)."""
        return F.lp_pool2d(self._check_input(input), float(self.norm_type), self.kernel_size,
                           self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    r"""The p-norm of each window over D, H, W, :math:`(\sum_{x \in w} x^p)^{1/p}`
    (``torch.nn.LPPool3d``), see ``F.lp_pool3d``.

    Args:
        norm_type: p (inf: the maximum of |x|). kernel_size: an int or 3 ints. stride:
            default ``kernel_size``. ceil_mode: round the output size up.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out).

    Example:
        >>> nn.LPPool3d(2, 2)(x)                 # (2, 4, 8, 12, 12) -> (2, 4, 4, 6, 6)
    """

    def forward(self, input):
        """The window p-norms. Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, ...)."""
        return F.lp_pool3d(self._check_input(input), float(self.norm_type), self.kernel_size,
                           self.stride, self.ceil_mode)


class _AdaptiveAvgPoolNd(Module):
    """What AdaptiveAvgPool2d and AdaptiveAvgPool3d share: ``output_size``, kept as given."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output size (``torch.nn.AdaptiveAvgPool2d``), see
    ``F.adaptive_avg_pool2d``.

    Args:
        output_size: an int or a pair (H_o, W_o); None keeps that input size.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_o, W_o).

    Example:
        >>> nn.AdaptiveAvgPool2d(1)(x)           # (8, 64, 7, 7) -> (8, 64, 1, 1)
    """

    def forward(self, input):
        """The adaptive window means. Shape: (N, C, H, W) -> (N, C, H_o, W_o)."""
        return F.adaptive_avg_pool2d(self._check_input(input), self.output_size)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output size (``torch.nn.AdaptiveAvgPool3d``), see
    ``F.adaptive_avg_pool3d``.

    Args:
        output_size: an int or 3 ints (D_o, H_o, W_o); None keeps that input size.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_o, H_o, W_o).

    Example:
        >>> nn.AdaptiveAvgPool3d((1, None, None))(x)     # (2, 64, 4, 7, 7) -> (2, 64, 1, 7, 7)
    """

    def forward(self, input):
        """The adaptive window means. Shape: (N, C, D, H, W) -> (N, C, D_o, H_o, W_o)."""
        return F.adaptive_avg_pool3d(self._check_input(input), self.output_size)

