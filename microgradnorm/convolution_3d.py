"""The 3-D convolutions, pooling and channel dropout of ``torch.nn.functional``, over
(N, C, D, H, W) volumes (video clips, scans): conv3d, conv_transpose3d, max_pool3d,
avg_pool3d, adaptive average and max pooling, max_unpool3d and dropout3d.

Each is the 1-D and 2-D forms' own code with three spatial dims: convolution.py's
``_convolution``, ``_max_pool``, ``_avg_pool`` and ``_adaptive_avg_pool`` over the one
``Im2Col`` node (k_d·k_h·k_w strided copies, and as many strided adds back), and
convolution_more.py's ``_conv_transpose`` (over its adjoint, ``Col2Im``),
``_adaptive_max_pool`` and ``_max_unpool``. Only the public entries live here: the two
generic files had no room left for them.
"""

import warnings

from .convolution import _adaptive_avg_pool, _avg_pool, _convolution, _max_pool
from .convolution_more import _adaptive_max_pool, _check_p, _conv_transpose, _max_unpool
from .dtypes import is_floating
from .tensor import Tensor

__all__ = ["adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
           "avg_pool3d", "conv3d", "conv_transpose3d", "dropout3d", "max_pool3d",
           "max_pool3d_with_indices", "max_unpool3d"]


# ----- convolutions -----------------------------------------------------------------------
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    r"""3-D convolution (cross-correlation, as torch's) over (N, C_in, D, H, W)
    (``F.conv3d``):

    :math:`y[n, o, i, j, l] = b[o] + \sum_{c, k_d, k_h, k_w} w[o, c, k_d, k_h, k_w]\,
    x[n, g_o C_{in}/g + c, i s_d + k_d d_d - p_d, j s_h + k_h d_h - p_h,
    l s_w + k_w d_w - p_w]`, computed as im2col then one matmul per group.

    Args:
        input: (N, C_in, D, H, W) or (C_in, D, H, W).
        weight: (C_out, C_in / groups, k_d, k_h, k_w). bias: (C_out,) or None.
        stride, dilation: an int or 3 ints, at least 1.
        padding: an int or 3 ints of zeros on each side, ``"valid"`` or ``"same"`` (stride
            1 only; an odd total puts the extra zero after, as torch).
        groups: split channels into ``groups`` independent convolutions.

    Shape: output (N, C_out, D_out, H_out, W_out),
    D_out = ⌊(D + 2·pad_d − d_d(k_d − 1) − 1)/s_d⌋ + 1, and the same for H and W.

    Example:
        >>> F.conv3d(x, w, padding=1)            # x (2, 3, 8, 16, 16), w (6, 3, 3, 3, 3)
        >>> # -> (2, 6, 8, 16, 16)
    """
    return _convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    r"""3-D transposed convolution (``F.conv_transpose3d``), the gradient of ``conv3d`` with
    respect to its input: each input element spreads its kernel over the output,

    :math:`y[n, o, i s_d + k_d d_d - p_d, j s_h + k_h d_h - p_h, l s_w + k_w d_w - p_w]
    \mathrel{+}= w[c, o - g_c C_{out}/g, k_d, k_h, k_w]\, x[n, c, i, j, l]`, plus b[o];

    computed as :math:`W^T` times the input's columns, then col2im.

    Args:
        input: (N, C_in, D, H, W) or (C_in, D, H, W).
        weight: (C_in, C_out / groups, k_d, k_h, k_w). bias: (C_out,) or None.
        stride, dilation: an int or 3 ints, at least 1.
        padding: an int or 3 ints: the output cropped by it on each side.
        output_padding: an int or 3 ints added to one side of the output; smaller than the
            stride or the dilation.
        groups: split channels into ``groups`` independent convolutions.

    Shape: output (N, C_out, D_out, H_out, W_out),
    D_out = (D − 1)·s_d − 2·pad_d + d_d·(k_d − 1) + output_padding_d + 1, and so on.

    Example:
        >>> F.conv_transpose3d(x, w, stride=2)   # x (1, 4, 3, 5, 5), w (4, 2, 2, 2, 2)
        >>> # -> (1, 2, 6, 10, 10)
    """
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


# ----- pooling ----------------------------------------------------------------------------
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    r"""The maximum of each window over D, H, W (``F.max_pool3d``):
    :math:`y[n, c, i, j, l] = \max_{k_d, k_h, k_w} x[n, c, i s_d + k_d d_d - p_d,
    j s_h + k_h d_h - p_h, l s_w + k_w d_w - p_w]`, padding never chosen.

    Args:
        kernel_size, stride (default ``kernel_size``), padding, dilation: an int or 3 ints;
            padding at most half the kernel (undilated, as torch's check).
        ceil_mode: round the output size up (a last, partial window), as torch.
        return_indices: also return each maximum's flat index into D·H·W (int64).

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out); the gradient goes
    to each window's first maximum in row-major order (or its first NaN), as torch's.

    Example:
        >>> F.max_pool3d(x, 2)                   # (2, 4, 8, 16, 16) -> (2, 4, 4, 8, 8)
    """
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool3d`` with its indices, whatever ``return_indices`` says (torch's).
    Shape: (N, C, D, H, W) -> ((N, C, D_out, H_out, W_out), the same).
    Example: ``values, index = F.max_pool3d_with_indices(x, 2)``."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    r"""The mean of each window over D, H, W (``F.avg_pool3d``):
    :math:`y[n, c, i, j, l] = \frac{1}{|w_{ijl}|}\sum_{k_d, k_h, k_w} x[n, c, i s_d + k_d - p_d,
    j s_h + k_h - p_h, l s_w + k_w - p_w]`, |w| the window's size inside the zero-padded
    input (``count_include_pad``) or inside the input alone.

    Args:
        kernel_size, stride (default ``kernel_size``), padding: an int or 3 ints.
        ceil_mode: round the output size up, as torch.
        count_include_pad: count the zero padding in the divisor |w|.
        divisor_override: a non-zero int dividing every window's sum instead of |w|.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out). int64 inputs
    give int64, the division truncated as torch's.

    Example:
        >>> F.avg_pool3d(x, (1, 2, 2))           # (2, 4, 8, 16, 16) -> (2, 4, 8, 8, 8)
    """
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def adaptive_avg_pool3d(input, output_size):
    r"""Average pooling to a given size (``F.adaptive_avg_pool3d``): along each spatial
    dim, output i averages input positions :math:`\lfloor iL/L_o \rfloor` to
    :math:`\lceil (i+1)L/L_o \rceil - 1` (torch's windows), each window's sum over its count.

    Args:
        output_size: an int or 3 ints (D_o, H_o, W_o); None in the triple keeps that input
            size.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_o, H_o, W_o).

    Example:
        >>> F.adaptive_avg_pool3d(x, (1, 7, 7))  # (2, 512, 4, 14, 14) -> (2, 512, 1, 7, 7)
    """
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, input, output_size)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    r"""Max pooling to a given size (``F.adaptive_max_pool3d``): output (i, j, l) is the
    maximum over torch's adaptive windows along D, H and W, :math:`\lfloor iD/D_o \rfloor ..
    \lceil (i+1)D/D_o \rceil - 1` and the same for H and W.

    Args:
        output_size: an int or 3 ints (D_o, H_o, W_o); None in the triple keeps that input
            size.
        return_indices: also return each maximum's flat index into D·H·W (int64).

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_o, H_o, W_o); the gradient goes to
    each window's first maximum in row-major order, or its last NaN, as torch's.

    Example:
        >>> F.adaptive_max_pool3d(x, 1)          # (2, 64, 4, 7, 7) -> (2, 64, 1, 1, 1)
    """
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, return_indices)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool3d`` with its indices, whatever ``return_indices`` says (torch's).
    Shape: (N, C, D, H, W) -> ((N, C, D_o, H_o, W_o), the same).
    Example: ``values, index = F.adaptive_max_pool3d_with_indices(x, 2)``."""
    return adaptive_max_pool3d(input, output_size, return_indices=True)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    r"""The partial inverse of ``max_pool3d`` (``F.max_unpool3d``): zeros, with each input
    value written at its flat index into the output's D·H·W,
    :math:`y[n, c, \text{idx}[n, c, i, j, l]] = x[n, c, i, j, l]`; the gradient of x is the
    upstream gradient read back at the indices.

    Args:
        input: (N, C, D, H, W) or (C, D, H, W). indices: int64 of input's shape, from
            ``max_pool3d(..., return_indices=True)``.
        kernel_size, stride (default ``kernel_size``), padding: an int or 3 ints, the
            pooling's, which set the output size (D − 1)·s + k − 2·pad along each dim.
        output_size: (D_out, H_out, W_out) (or 5 ints), within a stride of that size.

    Shape: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out).

    Example:
        >>> y, i = F.max_pool3d(x, 2, return_indices=True); F.max_unpool3d(y, i, 2)
    """
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding,
                       output_size)


# ----- dropout ----------------------------------------------------------------------------
def dropout3d(input, p=0.5, training=True, inplace=False, *, generator=None):
    r"""Zero whole channels (3-D feature maps) with probability ``p`` and scale the rest by
    1/(1 − p) (``F.dropout3d``): one Bernoulli(1 − p) draw per (sample, channel), torch's,
    from the same generator as ``F.dropout``; ``input`` itself when not ``training``.

    Args:
        input: (N, C, D, H, W) or (C, D, H, W); another number of dims is taken with
            torch's deprecation warning as one sample, a draw per entry of its dim 0.
        p: the probability of zeroing a channel. inplace: multiply ``input`` in place.
        generator: a ``mg.Generator``, by default ``mg.default_generator``.

    Shape: unchanged.

    Example:
        >>> h = F.dropout3d(F.relu(conv(x)), 0.1, training=model.training)
    """
    from .functional import _dropout       # functional imports this module: at call time
    fn = "dropout3d"
    _check_p(fn, p)
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (4, 5):
        warnings.warn(f"{fn}: Received a {input.ndim}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. "
                      "Note that dropout3d exists to provide channel-wise dropout on inputs "
                      "with 3 spatial dimensions, a channel dimension, and an optional batch "
                      "dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    if training and 0 < p < 1 and input.size:
        if input.ndim == 0:
            raise RuntimeError(f"{fn}: Feature dropout requires at least 2 dimensions in the "
                               "input (a 0-d input is one sample of 1 dim)")
        if not is_floating(input.dtype):
            raise RuntimeError(f"{fn}: the scaled result is floating; {input.dtype} cannot "
                               "hold it")
    # torch's: a 5-D input draws per (N, C); any other is one unbatched sample, (C, ...)
    noise = input.shape[:2] + (1,) * 3 if input.ndim == 5 else \
        input.shape[:1] + (1,) * (input.ndim - 1)
    return _dropout(fn, input, p, training, inplace, generator, noise)
