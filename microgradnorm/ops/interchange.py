"""Tensors over memory that another library owns: ``torch.frombuffer`` (a Python buffer)
and DLPack, ``torch.from_dlpack`` / ``torch.to_dlpack`` (NumPy's DLPack, so a tensor here
and one of torch, NumPy, CuPy or JAX share memory both ways); ``Tensor.__dlpack__`` and
``__dlpack_device__`` make a tensor here a DLPack producer."""

import numpy as np

from .. import backend
from ..tensor import Tensor

__all__ = ["from_dlpack", "frombuffer", "to_dlpack"]


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the memory of a Python buffer (``torch.frombuffer``): no copy, so
    writes through either are seen by the other.

    Args:
        buffer: an object of the buffer protocol (``bytearray``, ``array.array``,
            ``memoryview``, ...). dtype: the elements' dtype (required).
        count: how many elements to read; −1 (or any negative), all after ``offset``.
        offset: the bytes skipped at the start.
        requires_grad: make the tensor a leaf that requires grad (floating dtypes).

    A read-only buffer (``bytes``) gives a tensor NumPy marks read-only: writes to it raise
    here (torch allows them, with a warning).

    Example:
        >>> mg.frombuffer(bytearray(8), dtype=mg.int32)        # tensor([0, 0], dtype=int32)
    """
    dtype = np.dtype(dtype)
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = view.nbytes
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    size = dtype.itemsize
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly:
        backend.warn_once("The given buffer is not writable, and PyTorch does not support "
                          "non-writable tensors. This means you can write to the underlying "
                          "(supposedly non-writable) buffer using the tensor. You may want to "
                          "copy the buffer to protect its data or make it writable before "
                          "converting it to a tensor. This type of warning will be suppressed "
                          "for the rest of this program.")
    array = np.frombuffer(view.cast("B"), dtype=dtype, count=count, offset=offset)
    return Tensor._leaf("frombuffer", array, requires_grad)


class _Capsule:
    # a DLPack capsule handed to NumPy's from_dlpack, which takes producers only
    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **_):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)                                   # kDLCPU


def from_dlpack(ext_tensor):
    """A tensor over the memory of another library's array (``torch.from_dlpack``): an
    object with ``__dlpack__`` (a torch tensor, a NumPy or CuPy array, ...) or a DLPack
    capsule (``to_dlpack``'s, torch's), which can be read once. No copy: writes through
    either are seen by the other; the strides are kept.

    Example:
        >>> mg.from_dlpack(np.arange(3))                 # tensor([0, 1, 2])
    """
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    producer = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    device = producer.__dlpack_device__()[0]
    try:
        if device == 2:                                 # kDLCUDA: CuPy reads it
            array = backend._cupy_with_gpu().from_dlpack(producer)
        else:
            array = np.from_dlpack(producer)
    except (TypeError, ValueError, BufferError) as error:
        raise RuntimeError(f"from_dlpack received an invalid capsule or producer: {error}. "
                           "Note that DLTensor capsules can be consumed only once, so you "
                           "might have already constructed a tensor from it once.") from None
    return Tensor._leaf("from_dlpack", array, False)


def to_dlpack(tensor):
    """A DLPack capsule of ``tensor``'s memory (``torch.to_dlpack``), for another library's
    ``from_dlpack``; read once.

    Example:
        >>> capsule = mg.to_dlpack(mg.arange(3))
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' must be Tensor, not "
                        f"{type(tensor).__name__}")
    return tensor._array.__dlpack__()


def _dlpack(self, stream=None, **options):
    """The DLPack capsule of this tensor's memory (``Tensor.__dlpack__``), as the array
    behind it gives it; a tensor that requires grad is refused, as torch's."""
    if self.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    return self._array.__dlpack__(stream=stream, **options)


def _dlpack_device(self):
    """``(device type, index)`` in DLPack's codes (``Tensor.__dlpack_device__``)."""
    return self._array.__dlpack_device__()


Tensor.__dlpack__, Tensor.__dlpack_device__ = _dlpack, _dlpack_device
