"""``torch.ao.nn``: ``intrinsic``, the fused module containers."""

from . import intrinsic

__all__ = ["intrinsic"]
