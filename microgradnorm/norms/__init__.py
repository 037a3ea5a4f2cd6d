"""The same norms twice: ``composite`` (graphs of primitives) and ``fused`` (one node each)."""

from . import composite, fused

__all__ = ["composite", "fused"]
