"""``mg.signal``, ``torch.signal``'s namespace: ``windows``, the window functions."""

from . import windows

__all__ = ["windows"]
