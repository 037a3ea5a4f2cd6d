"""Tests and logic: ``isnan``/``isinf``/``isfinite``, ``any``/``all``, ``allclose``/``equal``,
``nonzero``, the logical and bitwise operators and integer division, as PyTorch defines them;
their results are constants (no gradient flows through a comparison).

``METHODS`` names the functions ``tensor.py`` binds as ``Tensor`` methods."""

METHODS = ()
