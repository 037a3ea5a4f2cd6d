"""PyTorch's wider pointwise and scan vocabulary as compositions of the primitives: the
trigonometric and logarithmic functions, rounding, products and cumulative sums.

``METHODS`` names the functions ``tensor.py`` binds as ``Tensor`` methods."""

METHODS = ()
