"""PyTorch's binary and ternary arithmetic by name: ``add``/``sub``/``mul``/``div`` with
their keywords, the two-argument functions (``atan2``, ``hypot``, ``logaddexp``, ...) and the
fused updates hand-written optimizers use (``lerp``, ``addcmul``, ``addcdiv``).

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

METHODS = ()
