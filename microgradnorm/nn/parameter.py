"""``Parameter``: the Tensor a Module finds as one of its parameters, and ``Buffer``, the
Tensor that assigning registers as a buffer (torch's ``nn.parameter``); here, below
``module.py`` and ``module_state.py``, which both use them. The lazy modules' uninitialized
tensors, which torch keeps here too (``UninitializedParameter``, ``UninitializedBuffer``,
``is_lazy``), are read from ``lazy.py`` and ``lazy_norms.py`` on first use: they are
built on ``Parameter``, so above this module."""

import numpy as np

from .. import backend, dtypes
from ..autograd.inference import new_counter, refuse_requires_grad
from ..tensor import Tensor


class Parameter(Tensor):
    """A Tensor that a Module finds as one of its parameters; ``requires_grad=True``.

    As torch's, ``Parameter(t)`` shares ``t``'s memory and version counter (a write to one
    shows in the other) and is a leaf even if ``t`` is not; a writeable NumPy array is shared
    as ``torch.from_numpy(a)`` would be. A ``dtype`` or ``device`` that differs from the
    data's, a read-only array, a list or a number is copied.

    Args:
        data: a Tensor, an array or array_like; None: an empty tensor of the default dtype.
        requires_grad: floating data only.
        dtype: None keeps the data's (a list of floats: the default dtype).
        device: None keeps a Tensor's device; other data (a NumPy array, a list, a number)
            goes to the default device (``mg.set_default_device``, ``with mg.device(...)``).

    Example:
        >>> w = mg.zeros(3); p = nn.Parameter(w); w[0] = 1.0       # p[0] is 1.0 too
    """

    def __init__(self, data=None, requires_grad=True, dtype=None, device=None):
        if data is None:
            data = np.empty(0, dtypes.get_default_dtype())
        array = data._array if isinstance(data, Tensor) else data
        dtype = dtypes.as_dtype(dtype)
        if not (isinstance(array, np.ndarray) or backend.is_cupy_array(array)):
            super().__init__(data, requires_grad=requires_grad, dtype=dtype,
                             device=device)
            return
        here = backend.device_of(array)
        if device is None and not isinstance(data, Tensor) and here == "cpu":
            device = backend.check_device(None)   # new data: the default device, as mg.tensor's
        writeable = isinstance(data, Tensor) or backend.is_cupy_array(array) \
            or array.flags.writeable                  # torch only warns; a copy can be written
        if dtype not in (None, array.dtype) or device not in (None, here) or not writeable:
            super().__init__(data, requires_grad=requires_grad, dtype=dtype,
                             device=here if device is None else device)
            return
        if isinstance(data, Tensor) and requires_grad:    # an inference tensor outside its
            refuse_requires_grad(data)                    # mode: torch's RuntimeError
        self._become_leaf("Parameter", array, requires_grad)      # the array itself: shared
        if isinstance(data, Tensor):                  # as torch's detach(): one counter
            self._version_box = data._version_box

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        # torch's Parameter.__deepcopy__: the data and requires_grad, without the .grad (a
        # deep-copied model starts with no gradients)
        if id(self) in memo:
            return memo[id(self)]
        grad, self._grad = self._grad, None
        try:
            copied = super().__deepcopy__(memo)
        finally:
            self._grad = grad
        copied._version_box = new_counter()     # torch's: a clone's, at version 0
        return copied


class _BufferMeta(type):
    # isinstance(t, Buffer): a Tensor that nn.Buffer marked, as torch's metaclass answers
    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False) \
            or super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A Tensor that a Module registers as a buffer when assigned (``torch.nn.Buffer``):
    ``self.mask = nn.Buffer(t, persistent=False)`` is ``register_buffer("mask", t,
    persistent=False)``; a plain Tensor assigned to that name later stays a buffer.

    As torch's, ``Buffer(t)`` is ``t.detach()`` (the same memory and version counter, a
    Tensor: ``type(b) is mg.Tensor``) with t's ``requires_grad``, marked so that
    ``isinstance(b, nn.Buffer)`` holds, and its ``persistent`` flag.

    Args:
        data: a Tensor; None: an empty tensor of the default dtype.
        persistent: False keeps it out of ``state_dict()`` (keyword only).

    Example:
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.mask = nn.Buffer(mg.ones(4, 4).tril(), persistent=False)
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = Tensor(np.empty(0, dtypes.get_default_dtype()))
        buffer = data.detach().requires_grad_(data.requires_grad)
        buffer.persistent, buffer._is_buffer = persistent, True
        return buffer


def is_lazy(param):
    """Whether ``param`` is an ``UninitializedParameter`` or ``UninitializedBuffer`` (one not
    materialized yet), as torch's ``nn.parameter.is_lazy``."""
    from .lazy import _Uninitialized
    return isinstance(param, _Uninitialized)


def __getattr__(name):
    # torch's nn.parameter names that live above this module (lazy.py imports Parameter)
    if name == "UninitializedParameter":
        from .lazy import UninitializedParameter
        return UninitializedParameter
    if name == "UninitializedBuffer":
        from .lazy_norms import UninitializedBuffer
        return UninitializedBuffer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
