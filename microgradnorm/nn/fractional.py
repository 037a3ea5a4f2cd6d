"""Fractional max pooling and the legacy cross-map LRN as Modules, with torch's arguments,
checks and repr: FractionalMaxPool2d, FractionalMaxPool3d (one-line forwards over
``F.fractional_max_pool2d/3d``; a ``_random_samples`` given is kept as a buffer, as
torch's), CrossMapLRN2d (over ``fractional_pool.cross_map_lrn2d``)."""

import numbers

from .. import fractional_pool
from ..tensor import Tensor
from .module import Module

__all__ = ["CrossMapLRN2d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


def _tuple(value, dims):
    # torch's _pair/_triple of the module's sizes iterate a Tensor, so a 0-d one is torch's
    # TypeError here (its functional takes one)
    return tuple(value) if isinstance(value, Tensor) else fractional_pool._tuple(value, dims)


class _FractionalMaxPoolNd(Module):
    """What the 2-D and 3-D fractional max pools share: the arguments and their checks."""

    dims = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        name = type(self).__name__
        if self.dims == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _tuple(kernel_size, self.dims)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else \
            _tuple(output_size, self.dims)
        self.output_ratio = None if output_ratio is None else \
            _tuple(output_ratio, self.dims)         # a 0-d Tensor: torch's TypeError
        if self.output_ratio is not None and not all(
                isinstance(r, (numbers.Real, Tensor)) for r in self.output_ratio):
            raise TypeError(f"{name}: output_ratio must be a number or a tuple of {self.dims} "
                            f"numbers in (0, 1), got {output_ratio!r}")
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def _pool(self, fn, input):
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling (``torch.nn.FractionalMaxPool2d``), see
    ``F.fractional_max_pool2d``: each call draws its window starts afresh from the default
    generator (as torch), unless ``_random_samples`` (N, C, 2) was given.

    Args:
        kernel_size: an int or (kH, kW). output_size: (oH, oW) or an int; or
            output_ratio: a number or a pair in (0, 1). return_indices: also the indices.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, oH, oW).

    Example:
        >>> nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))(x)
    """

    dims = 2

    def forward(self, input):
        """The maximum of each pseudo-random window (and the indices when
        ``return_indices``).
        Shape: (N, C, H, W) or (C, H, W) -> (N, C, oH, oW)."""
        return self._pool(fractional_pool.fractional_max_pool2d, input)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling (``torch.nn.FractionalMaxPool3d``), see
    ``F.fractional_max_pool3d``; ``_random_samples`` (N, C, 3).

    Args:
        kernel_size: an int or (kT, kH, kW), positive. output_size / output_ratio: as the
            2-D one's, of three. return_indices: also the indices.

    Shape: (N, C, T, H, W) or (C, T, H, W) -> (N, C, oT, oH, oW).

    Example:
        >>> nn.FractionalMaxPool3d(2, output_size=(4, 4, 4))(x)
    """

    dims = 3

    def forward(self, input):
        """The maximum of each pseudo-random window (and the indices when
        ``return_indices``).
        Shape: (N, C, T, H, W) or (C, T, H, W) -> (N, C, oT, oH, oW)."""
        return self._pool(fractional_pool.fractional_max_pool3d, input)


class CrossMapLRN2d(Module):
    """Local response normalization across channels, torch's legacy form
    (``torch.nn.CrossMapLRN2d``), see ``fractional_pool.cross_map_lrn2d``.

    Args:
        size: the window of channels. alpha, beta, k: the formula's numbers.

    Shape: (N, C, H, W), unchanged.

    Example:
        >>> nn.CrossMapLRN2d(5, alpha=1e-3)(x)
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        """Each element over its window of channels' squares.
        Shape: (N, C, H, W), unchanged."""
        return fractional_pool.cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
