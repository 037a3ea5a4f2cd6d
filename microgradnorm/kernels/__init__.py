"""Array kernels, free of graphs: ``reference`` (NumPy/CuPy) is the one source of truth;
``cuda`` (CuPy RawKernels from ``norms.cu``) has the same functions for CuPy arrays."""

from ..backend import is_cupy_array
from . import reference

__all__ = ["for_array", "reference"]


def for_array(array):
    """The kernel module for ``array``: ``reference`` for a NumPy array, ``cuda`` for a CuPy
    one. Both have the same functions with the same signatures."""
    if is_cupy_array(array):
        from . import cuda  # imports no CuPy by itself, but keep it lazy
        return cuda
    return reference
