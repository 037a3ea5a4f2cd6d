"""More of ``torch.nn``'s layers, each a one-line forward over its ``F`` function (whose
checks apply when it is called, as torch's): ConvTranspose1d, 2d and 3d (torch's
parameters, defaults, initialisation and repr), Fold and Unfold, AdaptiveMaxPool1d,
AdaptiveMaxPool2d, AdaptiveMaxPool3d, AdaptiveAvgPool1d, MaxUnpool1d, MaxUnpool2d,
MaxUnpool3d, Bilinear, LazyLinear (a lazy.LazyModuleMixin), Dropout1d, AlphaDropout,
FeatureAlphaDropout, ChannelShuffle and LocalResponseNorm."""

import math

import numpy as np

from .. import functional as F
from ..convolution import _ntuple
from ..dtypes import index_of
from ..convolution_more import _pair, _single
from . import init
from .conv import _check_channels, _ConvNd
from .linear import Dropout, Linear
from .lazy import LazyModuleMixin, UninitializedParameter
from .module import Module, Parameter, _check_sizes, _dtype
from ..tensor import Tensor


# ----- transposed convolutions ------------------------------------------------------------
class _ConvTransposeNd(_ConvNd):
    """What ConvTranspose1d, 2d and 3d share: torch's arguments (``groups`` before ``bias``
    before ``dilation``), the weight (in_channels, out_channels / groups, *kernel), its
    initialisation and the repr; a ``_ConvNd``, as torch's (a loop over the convolutions
    of a model finds the transposed ones too)."""

    dims = 0
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        Module.__init__(self)          # its own options: not _ConvNd's order of arguments
        in_channels, out_channels = _check_channels(   # bools where torch's shapes take them
            type(self).__name__, in_channels, out_channels, groups,
            ("in_channels", "out_channels") if bias else ("in_channels",))
        self._set_options(kernel_size, stride, padding, output_padding, groups, dilation,
                          padding_mode)
        self.in_channels, self.out_channels = in_channels, out_channels
        self._make_parameters(bias, device, dtype)
        self.reset_parameters()

    def _set_options(self, kernel_size, stride, padding, output_padding, groups, dilation,
                     padding_mode):
        # every option but the channels, checked as torch's (a lazy module's too)
        name = type(self).__name__
        if padding_mode != "zeros":
            raise ValueError(f'{name}: Only "zeros" padding mode is supported, got '
                             f"padding_mode={padding_mode!r}")
        self.kernel_size = self._tuple("kernel_size", kernel_size, 1)
        self.stride = self._tuple("stride", stride, 1)
        self.padding = self._tuple("padding", padding, 0)
        self.output_padding = self._tuple("output_padding", output_padding, 0)
        self.dilation = self._tuple("dilation", dilation, 1)
        self.groups, self.padding_mode = int(index_of(groups)), padding_mode   # checked

    def _output_padding(self, x, output_size):
        """torch's: ``output_padding``, or the one that gives ``output_size`` (the spatial
        sizes, or with the batch and channel dims too), which must lie within a stride above
        the smallest output; a ValueError otherwise."""
        if output_size is None:
            return self.output_padding
        if isinstance(output_size, Tensor) and output_size.ndim:
            # torch reads a tensor's rows as the sizes: 0-d ones are numbers, longer ones
            # fail its range test (a RuntimeError: several values have no truth value)
            output_size = [index_of(row) if row.ndim == 0 else row
                           for row in output_size.unbind(0)]
        if not isinstance(output_size, (tuple, list)):        # torch: a TypeError too
            raise TypeError(f"{type(self).__name__}: output_size must be a sequence of ints, "
                            f"got {type(output_size).__name__} {output_size!r}")
        batched = x.ndim == self.dims + 2
        sizes = tuple(output_size)
        if len(sizes) == self.dims + 1 + batched:
            sizes = sizes[1 + batched:]
        if len(sizes) != self.dims:
            raise ValueError(f"{type(self).__name__}: for {x.ndim}-D input, output_size must "
                             f"have {self.dims} or {self.dims + 1 + batched} elements, got "
                             f"{tuple(output_size)}")
        rows = [size for size in sizes if isinstance(size, Tensor)]
        if rows:
            raise RuntimeError(f"{type(self).__name__}: output_size must hold ints, got "
                               f"tensors of shape {tuple(rows[0].shape)}: a tensor of "
                               "several values has no truth value to compare with a size")
        smallest = tuple((n - 1) * s - 2 * p + d * (k - 1) + 1 for n, s, p, d, k in
                         zip(x.shape[x.ndim - self.dims:], self.stride, self.padding,
                             self.dilation, self.kernel_size))
        largest = tuple(n + s - 1 for n, s in zip(smallest, self.stride))
        if any(not low <= size <= high for size, low, high in zip(sizes, smallest, largest)):
            raise ValueError(f"{type(self).__name__}: requested an output size of "
                             f"{tuple(output_size)}, but valid sizes range from {smallest} to "
                             f"{largest} (for an input of {x.shape[x.ndim - self.dims:]})")
        return tuple(size - low for size, low in zip(sizes, smallest))

    def extra_repr(self):
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        for name, default in (("padding", 0), ("dilation", 1), ("output_padding", 0)):
            if getattr(self, name) != (default,) * self.dims:
                text += f", {name}={getattr(self, name)}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class ConvTranspose1d(_ConvTransposeNd):
    r"""1-D transposed convolution over (N, C_in, L) (``torch.nn.ConvTranspose1d``), the
    gradient of Conv1d with respect to its input; see ``F.conv_transpose1d``.

    Args:
        in_channels, out_channels: channel counts, each divisible by ``groups``.
        kernel_size, stride, padding, output_padding, dilation: an int or (int,).
        groups: independent channel groups. bias: learn a bias per output channel.
        padding_mode: ``"zeros"`` only, as torch's.

    Parameters: weight (in_channels, out_channels / groups, k), bias (out_channels,), both
    uniform in ±1/√(out_channels / groups · k).

    Shape: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out),
    L_out = (L − 1)·s − 2·pad + d·(k − 1) + output_padding + 1.

    Example:
        >>> nn.ConvTranspose1d(16, 8, 3, stride=2)(x)    # x (4, 16, 10) -> (4, 8, 21)
    """

    dims = 1

    def forward(self, input, output_size=None):
        """``F.conv_transpose1d`` with this module's weight, bias and options; an
        ``output_size`` (L_out, or with the batch and channel dims) picks the output_padding.
        Shape: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out)."""
        x = self._check_input(input)
        return F.conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(x, output_size), self.groups,
                                  self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    r"""2-D transposed convolution over (N, C_in, H, W) (``torch.nn.ConvTranspose2d``), the
    gradient of Conv2d with respect to its input; see ``F.conv_transpose2d``.

    Args:
        in_channels, out_channels: channel counts, each divisible by ``groups``.
        kernel_size, stride, padding, output_padding, dilation: an int or a pair.
        groups: independent channel groups. bias: learn a bias per output channel.
        padding_mode: ``"zeros"`` only, as torch's.

    Parameters: weight (in_channels, out_channels / groups, k_h, k_w), bias (out_channels,),
    both uniform in ±1/√(out_channels / groups · k_h · k_w).

    Shape: (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out),
    H_out = (H − 1)·s_h − 2·pad_h + d_h·(k_h − 1) + output_padding_h + 1.

    Example:
        >>> up = nn.ConvTranspose2d(16, 16, 3, stride=2, padding=1)
        >>> up(h, output_size=x.shape)           # h (1, 16, 6, 6) -> x's (1, 16, 12, 12)
    """

    dims = 2

    def forward(self, input, output_size=None):
        """``F.conv_transpose2d`` with this module's weight, bias and options; an
        ``output_size`` ((H_out, W_out), or with the batch and channel dims) picks the
        output_padding. Shape: (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out)."""
        x = self._check_input(input)
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(x, output_size), self.groups,
                                  self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    r"""3-D transposed convolution over (N, C_in, D, H, W) (``torch.nn.ConvTranspose3d``),
    the gradient of Conv3d with respect to its input; see ``F.conv_transpose3d``.

    Args:
        in_channels, out_channels: channel counts, each divisible by ``groups``.
        kernel_size, stride, padding, output_padding, dilation: an int or 3 ints.
        groups: independent channel groups. bias: learn a bias per output channel.
        padding_mode: ``"zeros"`` only, as torch's.

    Parameters: weight (in_channels, out_channels / groups, k_d, k_h, k_w), bias
    (out_channels,), both uniform in ±1/√(out_channels / groups · k_d · k_h · k_w).

    Shape: (N, C_in, D, H, W) or (C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out),
    D_out = (D − 1)·s_d − 2·pad_d + d_d·(k_d − 1) + output_padding_d + 1.

    Example:
        >>> nn.ConvTranspose3d(8, 4, 2, stride=2)(x)     # x (1, 8, 4, 8, 8) -> (1, 4, 8, 16, 16)
    """

    dims = 3

    def forward(self, input, output_size=None):
        """``F.conv_transpose3d`` with this module's weight, bias and options; an
        ``output_size`` ((D_out, H_out, W_out), or with the batch and channel dims) picks the
        output_padding. Shape: (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out)."""
        x = self._check_input(input)
        return F.conv_transpose3d(x, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(x, output_size), self.groups,
                                  self.dilation)


# ----- fold and unfold --------------------------------------------------------------------
class Fold(Module):
    """Sliding blocks summed back into an image (``torch.nn.Fold``, col2im), see ``F.fold``.

    Args:
        output_size: (H, W) or an int. kernel_size, dilation, padding, stride: an int or a
            pair, kept as given (torch's).

    Shape: (N, C·k_h·k_w, L) or (C·k_h·k_w, L) -> (N, C, H, W).

    Example:
        >>> nn.Fold((5, 5), 2)(cols)             # cols (1, 12, 16) -> (1, 3, 5, 5)
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        """The blocks added back where they lie.
        Shape: (N, C·k_h·k_w, L) -> (N, C, H, W)."""
        return F.fold(self._check_input(input), self.output_size, self.kernel_size,
                      self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """The sliding blocks of an image as columns (``torch.nn.Unfold``, im2col), see
    ``F.unfold``.

    Args:
        kernel_size, dilation, padding, stride: an int or a pair, kept as given (torch's).

    Shape: (N, C, H, W) or (C, H, W) -> (N, C·k_h·k_w, L).

    Example:
        >>> nn.Unfold(3, padding=1)(x)           # x (2, 4, 5, 5) -> (2, 36, 25)
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input):
        """The blocks as columns. Shape: (N, C, H, W) -> (N, C·k_h·k_w, L)."""
        return F.unfold(self._check_input(input), self.kernel_size, self.dilation,
                        self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


# ----- adaptive pooling and unpooling -----------------------------------------------------
class _AdaptiveMaxPoolNd(Module):
    """What AdaptiveMaxPool1d, 2d and 3d share: ``output_size`` kept as given, and
    ``return_indices``."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed length (``torch.nn.AdaptiveMaxPool1d``), see
    ``F.adaptive_max_pool1d``.

    Args:
        output_size: L_o, an int. return_indices: also return the maxima's indices.

    Shape: (N, C, L) or (C, L) -> (N, C, L_o).

    Example:
        >>> nn.AdaptiveMaxPool1d(4)(x)           # (8, 16, 10) -> (8, 16, 4)
    """

    def forward(self, input):
        """The adaptive window maxima (and their indices when ``return_indices``).
        Shape: (N, C, L) -> (N, C, L_o)."""
        return F.adaptive_max_pool1d(self._check_input(input), self.output_size,
                                     self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed size (``torch.nn.AdaptiveMaxPool2d``), see
    ``F.adaptive_max_pool2d``.

    Args:
        output_size: an int or a pair (H_o, W_o); None keeps that input size.
        return_indices: also return the maxima's flat indices into H·W.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_o, W_o).

    Example:
        >>> nn.AdaptiveMaxPool2d((3, None))(x)   # (8, 16, 7, 9) -> (8, 16, 3, 9)
    """

    def forward(self, input):
        """The adaptive window maxima (and their flat indices when ``return_indices``).
        Shape: (N, C, H, W) -> (N, C, H_o, W_o)."""
        return F.adaptive_max_pool2d(self._check_input(input), self.output_size,
                                     self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed size (``torch.nn.AdaptiveMaxPool3d``), see
    ``F.adaptive_max_pool3d``.

    Args:
        output_size: an int or 3 ints (D_o, H_o, W_o); None keeps that input size.
        return_indices: also return the maxima's flat indices into D·H·W.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_o, H_o, W_o).

    Example:
        >>> nn.AdaptiveMaxPool3d((1, 3, 3))(x)   # (2, 16, 4, 7, 9) -> (2, 16, 1, 3, 3)
    """

    def forward(self, input):
        """The adaptive window maxima (and their flat indices when ``return_indices``).
        Shape: (N, C, D, H, W) -> (N, C, D_o, H_o, W_o)."""
        return F.adaptive_max_pool3d(self._check_input(input), self.output_size,
                                     self.return_indices)


class AdaptiveAvgPool1d(Module):
    """Average pooling to a fixed length (``torch.nn.AdaptiveAvgPool1d``), see
    ``F.adaptive_avg_pool1d``.

    Args:
        output_size: L_o, an int.

    Shape: (N, C, L) or (C, L) -> (N, C, L_o).

    Example:
        >>> nn.AdaptiveAvgPool1d(1)(x)           # (8, 16, 10) -> (8, 16, 1)
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        """The adaptive window means. Shape: (N, C, L) -> (N, C, L_o)."""
        return F.adaptive_avg_pool1d(self._check_input(input), self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class MaxUnpool1d(Module):
    """The partial inverse of MaxPool1d (``torch.nn.MaxUnpool1d``), see ``F.max_unpool1d``;
    sizes kept as 1-tuples, as torch's.

    Args:
        kernel_size: the pooling's window. stride: default ``kernel_size``. padding: the
            pooling's.

    Shape: (N, C, L) or (C, L), indices of the same shape -> (N, C, L_out).

    Example:
        >>> y, i = nn.MaxPool1d(2, return_indices=True)(x); nn.MaxUnpool1d(2)(y, i)
    """

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(kernel_size if stride is None else stride)
        self.padding = _single(padding)

    def forward(self, input, indices, output_size=None):
        """Zeros with each value at its index; ``output_size`` as ``F.max_unpool1d``'s.
        Shape: (N, C, L) -> (N, C, L_out)."""
        return F.max_unpool1d(self._check_input(input), self._check_input(indices),
                              self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool2d(Module):
    """The partial inverse of MaxPool2d (``torch.nn.MaxUnpool2d``), see ``F.max_unpool2d``;
    sizes kept as pairs, as torch's.

    Args:
        kernel_size: the pooling's window. stride: default ``kernel_size``. padding: the
            pooling's.

    Shape: (N, C, H, W) or (C, H, W), indices of the same shape -> (N, C, H_out, W_out).

    Example:
        >>> y, i = nn.MaxPool2d(2, return_indices=True)(x); nn.MaxUnpool2d(2)(y, i)
    """

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(kernel_size if stride is None else stride)
        self.padding = _pair(padding)

    def forward(self, input, indices, output_size=None):
        """Zeros with each value at its index; ``output_size`` as ``F.max_unpool2d``'s.
        Shape: (N, C, H, W) -> (N, C, H_out, W_out)."""
        return F.max_unpool2d(self._check_input(input), self._check_input(indices),
                              self.kernel_size,
                              self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _triple(value):
    # torch's _triple: an int thrice, a sequence (or a Tensor, whose 0-d one is torch's
    # TypeError) as a tuple
    return tuple(value) if isinstance(value, Tensor) else _ntuple(value, 3)


class MaxUnpool3d(Module):
    """The partial inverse of MaxPool3d (``torch.nn.MaxUnpool3d``), see ``F.max_unpool3d``;
    sizes kept as triples, as torch's.

    Args:
        kernel_size: the pooling's window. stride: default ``kernel_size``. padding: the
            pooling's.

    Shape: (N, C, D, H, W) or (C, D, H, W), indices of the same shape
    -> (N, C, D_out, H_out, W_out).

    Example:
        >>> y, i = nn.MaxPool3d(2, return_indices=True)(x); nn.MaxUnpool3d(2)(y, i)
    """

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _triple(kernel_size,)
        self.stride = _triple(kernel_size if stride is None else stride,)
        self.padding = _triple(padding,)

    def forward(self, input, indices, output_size=None):
        """Zeros with each value at its index; ``output_size`` as ``F.max_unpool3d``'s.
        Shape: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out)."""
        return F.max_unpool3d(self._check_input(input), self._check_input(indices),
                              self.kernel_size, self.stride, self.padding, output_size)

    extra_repr = MaxUnpool2d.extra_repr


# ----- Bilinear, LazyLinear ---------------------------------------------------------------
class Bilinear(Module):
    r""":math:`y = x_1^T A\, x_2 + b` (``torch.nn.Bilinear``), see ``F.bilinear``; A and b
    drawn uniform in :math:`\pm 1/\sqrt{\text{in1\_features}}`, torch's.

    Args:
        in1_features, in2_features, out_features: the sizes. bias: learn b.

    Parameters: weight (out_features, in1_features, in2_features), bias (out_features,).

    Shape: (*, in1_features), (*, in2_features) -> (*, out_features).

    Example:
        >>> nn.Bilinear(3, 5, 2)(x1, x2)         # (N, 3), (N, 5) -> (N, 2)
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        in1_features, in2_features, out_features = _check_sizes(
            "Bilinear", ("out_features",), in1_features=in1_features,
            in2_features=in2_features, out_features=out_features)   # bools: torch's
        if in1_features == 0:       # torch's own check: its bound 1/√in1_features
            raise ValueError("Bilinear: in1_features must be > 0, got 0")
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        dtype = _dtype(dtype)
        self.weight = Parameter(np.zeros((out_features, int(in1_features),
                                          int(in2_features)), dtype), device=device)
        self.register_parameter("bias", Parameter(np.zeros(out_features, dtype), device=device)
                                if bias else None)               # None too, as torch's
        self.reset_parameters()

    def reset_parameters(self):
        """Draw A, then b, uniform in ±1/√in1_features, as torch does."""
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        """y = x₁ᵀ A x₂ + b. Shape: (*, in1_features), (*, in2_features) -> (*, out_features)."""
        return F.bilinear(self._check_input(input1), self._check_input(input2), self.weight,
                          self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    r"""A Linear whose ``in_features`` is the last dim of its first input
    (``torch.nn.LazyLinear``): weight and bias are ``UninitializedParameter``\ s until that
    call, which gives them their shapes, draws them as Linear does and turns the module into
    a ``Linear``.

    Args:
        out_features: the output size. bias: learn a bias.

    Shape: (*, in_features) -> (*, out_features).

    Example:
        >>> fc = nn.LazyLinear(10); fc(mg.zeros(2, 4, dtype="float32")); fc
        Linear(in_features=4, out_features=10, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        # a negative size fails here, where torch fails at the first call (docs/pytorch.md)
        out_features, = _check_sizes("LazyLinear", (), out_features=out_features)  # bool: call
        self.in_features, self.out_features = 0, out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.register_parameter("bias", UninitializedParameter(device=device, dtype=dtype)
                                if bias else None)               # None too, as torch's

    def initialize_parameters(self, input):
        """Give weight (out_features, input's last dim) and bias (out_features,) their shapes
        and draw them as ``Linear.reset_parameters`` does; loaded while lazy, take
        in_features from the loaded weight."""
        if not self.has_uninitialized_params():
            if self.weight.ndim != 2:           # torch's matmul: "mat2 must be a matrix"
                raise RuntimeError(f"{self._describe()}: weight must be a matrix (out_features, "
                                   f"in_features), got shape {self.weight.shape}")
            self.in_features = self.weight.shape[1]
            return
        if input.ndim == 0:
            raise RuntimeError(f"{self._describe()}: input must have a feature dim, got a "
                               "0-d tensor")
        self.in_features = input.shape[-1]
        self.weight.materialize((self.out_features, self.in_features))
        if self.bias is not None:
            self.bias.materialize((self.out_features,))
        self.reset_parameters()

    def reset_parameters(self):
        """Linear's draws once the shapes are known; nothing before. Of 0 in_features, no
        draw (torch's leaves the bias as allocated): the bias zeros."""
        self._reset_once_shaped(self.in_features)

    def forward(self, input):
        """Initialise at the first call, then y = x Wᵀ + b as Linear (which this module
        becomes). Shape: (*, in_features) -> (*, out_features)."""
        return self._lazy_forward(input)


# ----- dropout ----------------------------------------------------------------------------
class Dropout1d(Dropout):
    """Zero whole channels with probability ``p`` in training (``torch.nn.Dropout1d``), see
    ``F.dropout1d``; the identity in eval.

    Example:
        >>> nn.Dropout1d(0.1)(x)                 # x (N, C, L): channels zeroed
    """

    def forward(self, input):
        """Channel dropout in training, the identity in eval.
        Shape: (N, C, L) or (C, L), unchanged."""
        return F.dropout1d(self._check_input(input), self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Dropout for SELU networks (``torch.nn.AlphaDropout``), keeping zero mean and unit
    variance; see ``F.alpha_dropout``; the identity in eval.

    Example:
        >>> nn.Sequential(nn.Linear(8, 8), nn.SELU(), nn.AlphaDropout(0.1))
    """

    def forward(self, input):
        """Alpha dropout in training, the identity in eval. Shape: (*), unchanged."""
        return F.alpha_dropout(self._check_input(input), self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels (``torch.nn.FeatureAlphaDropout``), see
    ``F.feature_alpha_dropout``; the identity in eval. As torch's, ``inplace`` is kept and
    not passed on: the forward never writes into its input.

    Example:
        >>> nn.Sequential(nn.Conv2d(3, 8, 3), nn.SELU(), nn.FeatureAlphaDropout(0.1))
    """

    def forward(self, input):
        """Channel alpha dropout in training, the identity in eval.
        Shape: (N, C, *), unchanged."""
        return F.feature_alpha_dropout(self._check_input(input), self.p, self.training)


# ----- channel layers ---------------------------------------------------------------------
class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups (``torch.nn.ChannelShuffle``), see
    ``F.channel_shuffle``.

    Shape: (N, C, *), unchanged.

    Example:
        >>> nn.ChannelShuffle(2)(x)              # channels [0 1 2 3] -> [0 2 1 3]
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        """The channels interleaved. Shape: (N, C, *), unchanged."""
        return F.channel_shuffle(self._check_input(input), self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class LocalResponseNorm(Module):
    r"""Divide each value by its neighbouring channels' energy
    (``torch.nn.LocalResponseNorm``), see ``F.local_response_norm``:
    :math:`y_c = x_c / (k + \frac{\alpha}{n}\sum_{c'} x_{c'}^2)^\beta`.

    Args:
        size: the n channels summed over. alpha, beta, k: the constants.

    Shape: (N, C, *), unchanged.

    Example:
        >>> nn.LocalResponseNorm(5, k=2.0)(x)
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        """The normalised values. Shape: (N, C, *), unchanged."""
        return F.local_response_norm(self._check_input(input), self.size, self.alpha,
                                     self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
