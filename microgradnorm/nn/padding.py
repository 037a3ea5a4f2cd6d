"""Padding layers with PyTorch's names, arguments and ``repr``: ZeroPad1d/2d/3d,
ConstantPad1d/2d/3d, ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d and
CircularPad1d/2d/3d; each ``forward`` is ``F.pad`` in its mode."""

import numbers

from .. import functional as F
from .module import Module


def _amounts(name, padding, count):
    # an int for every side, or the sides themselves (torch's _ntuple: kept as given)
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return (int(padding),) * count
    if not isinstance(padding, (tuple, list)):
        raise TypeError(f"{name}: padding must be an int or a tuple of ints, got "
                        f"{type(padding).__name__}")
    return tuple(padding)


class _PadNd(Module):
    """``F.pad(input, padding, mode)``; ``padding`` an int (every side) or ``2 · dims`` ints
    (left, right of the last dim, then top, bottom, ...)."""

    mode, dims = "constant", 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _amounts(type(self).__name__, padding, 2 * self.dims)

    def _pad(self, x):
        return F.pad(self._check_input(x), self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def _pad(self, x):
        return F.pad(self._check_input(x), self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``. Shape: (N, C, W) or (C, W) -> W + left + right.

    Example:
        >>> nn.ConstantPad1d(2, 3.5)(mg.ones(1, 2, 4)).shape   # (1, 2, 8)
    """

    def forward(self, input):
        """The input padded with ``value``. Shape: (N, C, W) or (C, W) -> W + left + right."""
        return self._pad(input)


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with ``value`` (left, right, top, bottom).
    Shape: (N, C, H, W) -> (N, C, H + top + bottom, W + left + right)."""

    dims = 2

    def forward(self, input):
        """The input padded with ``value``.

        Shape: (N, C, H, W) or (C, H, W) -> H + top + bottom, W + left + right."""
        return self._pad(input)


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with ``value`` (left, right, top, bottom, front, back).
    Shape: (N, C, D, H, W) -> each padded."""

    dims = 3

    def forward(self, input):
        """The input padded with ``value``.

        Shape: (N, C, D, H, W) or (C, D, H, W) -> each side padded."""
        return self._pad(input)


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros. Shape: (N, C, W) -> (N, C, W + left + right).

    Example:
        >>> nn.ZeroPad1d((1, 2))(mg.ones(1, 2, 4)).shape       # (1, 2, 7)
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"

    def forward(self, input):
        """The input padded with zeros. Shape: (N, C, W) or (C, W) -> W + left + right."""
        return self._pad(input)


class ZeroPad2d(ZeroPad1d):
    """Pad the last 2 dims with zeros (left, right, top, bottom).
    Shape: (N, C, H, W) -> (N, C, H + top + bottom, W + left + right)."""

    dims = 2

    def forward(self, input):
        """The input padded with zeros.

        Shape: (N, C, H, W) or (C, H, W) -> H + top + bottom, W + left + right."""
        return self._pad(input)


class ZeroPad3d(ZeroPad1d):
    """Pad the last 3 dims with zeros. Shape: (N, C, D, H, W) -> each padded."""

    dims = 3

    def forward(self, input):
        """The input padded with zeros.

        Shape: (N, C, D, H, W) or (C, D, H, W) -> each side padded."""
        return self._pad(input)


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection, the edge not repeated (each amount below the
    dim's size). Shape: (N, C, W) or (C, W) -> W + left + right.

    Example:
        >>> nn.ReflectionPad1d(2)(mg.tensor([[[0.0, 1.0, 2.0]]]))   # [[[2, 1, 0, 1, 2, 1, 0]]]
    """

    mode = "reflect"

    def forward(self, input):
        """The input padded by reflection. Shape: (N, C, W) or (C, W) -> W + left + right."""
        return self._pad(input)


class ReflectionPad2d(ReflectionPad1d):
    """Pad the last 2 dims by reflection. Shape: (N, C, H, W) or (C, H, W) -> each padded."""

    dims = 2

    def forward(self, input):
        """The input padded by reflection.

        Shape: (N, C, H, W) or (C, H, W) -> H + top + bottom, W + left + right."""
        return self._pad(input)


class ReflectionPad3d(ReflectionPad1d):
    """Pad the last 3 dims by reflection. Shape: (N, C, D, H, W) or (C, D, H, W)."""

    dims = 3

    def forward(self, input):
        """The input padded by reflection.

        Shape: (N, C, D, H, W) or (C, D, H, W) -> each side padded."""
        return self._pad(input)


class ReplicationPad1d(_PadNd):
    """Pad the last dim with copies of its edge values. Shape: (N, C, W) or (C, W) ->
    W + left + right.

    Example:
        >>> nn.ReplicationPad1d((1, 2))(mg.tensor([[[0.0, 1.0]]]))   # [[[0, 0, 1, 1, 1]]]
    """

    mode = "replicate"

    def forward(self, input):
        """The input padded with its edges. Shape: (N, C, W) or (C, W) -> W + left + right."""
        return self._pad(input)


class ReplicationPad2d(ReplicationPad1d):
    """Pad the last 2 dims with their edges. Shape: (N, C, H, W) or (C, H, W)."""

    dims = 2

    def forward(self, input):
        """The input padded with its edges.

        Shape: (N, C, H, W) or (C, H, W) -> H + top + bottom, W + left + right."""
        return self._pad(input)


class ReplicationPad3d(ReplicationPad1d):
    """Pad the last 3 dims with their edges. Shape: (N, C, D, H, W) or (C, D, H, W)."""

    dims = 3

    def forward(self, input):
        """The input padded with its edges.

        Shape: (N, C, D, H, W) or (C, D, H, W) -> each side padded."""
        return self._pad(input)


class CircularPad1d(_PadNd):
    """Pad the last dim by wrapping around (each amount at most the dim's size).
    Shape: (N, C, W) or (C, W) -> W + left + right.

    Example:
        >>> nn.CircularPad1d(1)(mg.tensor([[[0.0, 1.0, 2.0]]]))   # [[[2, 0, 1, 2, 0]]]
    """

    mode = "circular"

    def _pad(self, x):
        x = self._check_input(x)
        if x.ndim not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"{type(self).__name__}: expected {self.dims + 1}D or "
                             f"{self.dims + 2}D input (got {x.ndim}D input)")
        return F.pad(x, self.padding, "circular")

    def forward(self, input):
        """The input padded by wrapping around. Shape: (N, C, W) or (C, W) -> W + left + right."""
        return self._pad(input)


class CircularPad2d(CircularPad1d):
    """Pad the last 2 dims by wrapping around. Shape: (N, C, H, W) or (C, H, W)."""

    dims = 2

    def forward(self, input):
        """The input padded by wrapping around.

        Shape: (N, C, H, W) or (C, H, W) -> H + top + bottom, W + left + right."""
        return self._pad(input)


class CircularPad3d(CircularPad1d):
    """Pad the last 3 dims by wrapping around. Shape: (N, C, D, H, W) or (C, D, H, W)."""

    dims = 3

    def forward(self, input):
        """The input padded by wrapping around.

        Shape: (N, C, D, H, W) or (C, D, H, W) -> each side padded."""
        return self._pad(input)
