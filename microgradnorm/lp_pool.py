"""LP pooling with ``torch.nn.functional``'s semantics: ``lp_pool1d``, ``lp_pool2d`` and
``lp_pool3d``, the p-norm of each window, composed as torch composes it over average pooling
(max pooling of |x| at p = ±inf), so its values and gradients are torch's.
"""

import math

from . import ops
from .convolution import _ints, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from .convolution_3d import avg_pool3d, max_pool3d
from .dtypes import float_of
from .fused.arguments import RankError
from .tensor import Tensor

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]


def _lp_pool(fn, dims, input, norm_type, kernel_size, stride, ceil_mode):
    # torch's composition: max pooling of |x| at p = ±inf, else the window's mean of x^p
    # times its size, to the power 1/p. torch takes sign(m) * relu(|m|) of the mean m: m
    # itself, whose gradient is 0 where m is 0 (relu's backward a select), so a zero window's
    # inf gradient of the root stops there: here the same select, where(m != 0, m, 0)
    norm_type = float_of(norm_type, fn, "norm_type", one_element=True)   # torch: arithmetic
    if dims == 2 and isinstance(input, Tensor) and input.ndim < 3:   # torch reads dim -3
        raise RankError(f"{fn}: expected a 3-D (unbatched) or 4-D (batched) input, got shape "
                        f"{input.shape}")
    max_pool = (max_pool1d, max_pool2d, max_pool3d)[dims - 1]
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    size = math.prod(_ints(fn, "kernel_size", kernel_size, dims, 1))    # k, k_h·k_w, ...
    avg_pool = (avg_pool1d, avg_pool2d, avg_pool3d)[dims - 1]
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (ops.where(out != 0, out, 0) * size).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    r"""The p-norm of each window along L (``F.lp_pool1d``), torch's composition:
    :math:`y = \bigl(k \cdot \mathrm{avg\_pool}(x^p)\bigr)^{1/p}
    = \bigl(\sum_{w} x^p\bigr)^{1/p}`, a negative window sum passing through (NaN for a
    fractional root); at p = inf, the maximum of |x|.

    Args:
        norm_type: p, a number (a float inf too). kernel_size: the window size (an int).
        stride: default ``kernel_size``. ceil_mode: round the output size up, as torch.

    Shape: (N, C, L) or (C, L) -> (N, C, L_out).

    Example:
        >>> F.lp_pool1d(x, 2, 3, stride=2)             # (8, 4, 10) -> (8, 4, 4)
    """
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    r"""The p-norm of each window over H, W (``F.lp_pool2d``), torch's composition:
    :math:`y = \bigl(k_h k_w \cdot \mathrm{avg\_pool}(x^p)\bigr)^{1/p}`, a negative window
    sum passing through (NaN for a fractional root); at p = inf, the maximum of |x|.

    Args:
        norm_type: p. kernel_size, stride (default ``kernel_size``): an int or a pair.
        ceil_mode: round the output size up, as torch.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out).

    Example:
        >>> F.lp_pool2d(x, 2, 2)                       # (8, 4, 12, 12) -> (8, 4, 6, 6)
    """
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    r"""The p-norm of each window over D, H, W (``F.lp_pool3d``), torch's composition:
    :math:`y = \bigl(k_d k_h k_w \cdot \mathrm{avg\_pool}(x^p)\bigr)^{1/p}`, a negative
    window sum passing through (NaN for a fractional root); at p = inf, the maximum of |x|.

    Args:
        norm_type: p. kernel_size, stride (default ``kernel_size``): an int or 3 ints.
        ceil_mode: round the output size up, as torch.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out).

    Example:
        >>> F.lp_pool3d(x, 2, 2)                 # (2, 4, 8, 12, 12) -> (2, 4, 4, 6, 6)
    """
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)
