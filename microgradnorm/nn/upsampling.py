"""Resampling layers with PyTorch's names, arguments and ``repr``: Upsample (and the
deprecated UpsamplingNearest2d, UpsamplingBilinear2d), PixelShuffle and PixelUnshuffle;
each ``forward`` is the ``F`` function of its name."""

from .. import functional as F
from .module import Module


class Upsample(Module):
    """Resample the spatial dims (``F.interpolate``): to ``size``, or by ``scale_factor``,
    in ``mode`` ("nearest", "nearest-exact", "linear", "bilinear", "area"), PyTorch's values.

    Args:
        size: the output's spatial size (an int or one per dim), or
        scale_factor: a number (stored as a float) or a tuple of them.
        mode, align_corners, recompute_scale_factor: as ``F.interpolate``.

    Shape: (N, C, W), (N, C, H, W) or (N, C, D, H, W) -> the spatial dims resized.

    Example:
        >>> nn.Upsample(scale_factor=2, mode="bilinear")(mg.ones(1, 3, 4, 4)).shape  # 8 x 8
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        """interpolate(x, size or scale_factor, mode). Shape: spatial dims resized."""
        return F.interpolate(self._check_input(input), self.size, self.scale_factor, self.mode,
                             self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode="nearest")`` of a 4-D input (PyTorch's older name).
    Shape: (N, C, H, W) -> (N, C, H_out, W_out)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")

    def forward(self, input):
        """interpolate(x). Shape: (N, C, H, W) -> (N, C, H_out, W_out)."""
        return super().forward(input)


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode="bilinear", align_corners=True)`` of a 4-D input (PyTorch's older
    name). Shape: (N, C, H, W) -> (N, C, H_out, W_out)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)

    def forward(self, input):
        """interpolate(x). Shape: (N, C, H, W) -> (N, C, H_out, W_out)."""
        return super().forward(input)


class PixelShuffle(Module):
    """(*, C r², H, W) -> (*, C, H r, W r) (``F.pixel_shuffle``), r = ``upscale_factor``:
    the sub-pixel convolution's upsampling.

    Example:
        >>> nn.PixelShuffle(3)(mg.ones(1, 9, 4, 4)).shape      # (1, 1, 12, 12)
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        """pixel_shuffle(x). Shape: (*, C r², H, W) -> (*, C, H r, W r)."""
        return F.pixel_shuffle(self._check_input(input), self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r², H, W) (``F.pixel_unshuffle``), r =
    ``downscale_factor``: the inverse of ``PixelShuffle``.

    Example:
        >>> nn.PixelUnshuffle(3)(mg.ones(1, 1, 12, 12)).shape  # (1, 9, 4, 4)
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        """pixel_unshuffle(x). Shape: (*, C, H r, W r) -> (*, C r², H, W)."""
        return F.pixel_unshuffle(self._check_input(input), self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
