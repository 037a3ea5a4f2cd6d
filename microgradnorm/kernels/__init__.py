"""Array kernels, free of graphs: ``reference`` (NumPy/CuPy) is the one source of truth."""

from . import reference

__all__ = ["reference"]
