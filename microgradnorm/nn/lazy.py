"""Lazy modules (``torch.nn.modules.lazy``): a module whose first input gives the shapes of
its parameters. ``UninitializedParameter`` holds no values until ``materialize(shape)``;
``LazyModuleMixin`` is what every lazy module here shares (``nn.LazyLinear``, the lazy
convolutions, the lazy norms): the first call gives the shapes (``initialize_parameters``),
draws the values as the plain module's ``reset_parameters`` does and turns the module into
its plain class (``cls_to_become``); ``load_state_dict`` gives the shapes of a trained
state first (torch's load hook, ``materialize_from_state``)."""

import math

import numpy as np

from .. import backend
from ..tensor import Tensor
from . import init
from .module import Parameter, _dtype
from .module_state import _on_failure

__all__ = ["LazyModuleMixin", "UninitializedParameter"]


class _Uninitialized:
    """``materialize`` of the uninitialised parameter and buffer: the class becomes
    ``becomes`` (Parameter, Tensor) once the shape is known."""

    becomes = None

    def materialize(self, shape, device=None, dtype=None):
        """Become a ``becomes`` of ``shape`` (uninitialised values: fill them next), on
        ``device`` and of ``dtype`` if given, else this one's."""
        dtype = self.dtype if dtype is None else _dtype(dtype)
        self._array = backend.to_device(np.empty(tuple(shape), dtype),
                                        self.device if device is None else device)
        self._bump_version()
        self.__class__ = self.becomes


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape is not known yet (``torch.nn.UninitializedParameter``), a lazy
    module's until its first call: it holds no values (an empty array of its dtype), and
    ``materialize(shape)`` gives it its shape and makes it a plain ``Parameter``.

    Example:
        >>> p = nn.UninitializedParameter(); p.materialize((3, 4)); type(p).__name__
        'Parameter'
    """

    becomes = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        super().__init__(np.empty(0, _dtype(dtype)), requires_grad, device=device)

    def __repr__(self):
        return "<UninitializedParameter>"


def materialize_from_state(module, state_dict, prefix):
    """torch's lazy load hook: each parameter or buffer of ``module`` still waiting for its
    shape whose key ``state_dict`` holds with values takes that entry's shape, so a lazy
    module loads a trained model's state. It holds zeros until the load writes the values,
    and waits for its shape again if the load fails."""
    for name, tensor in (*module._parameters.items(), *module._buffers.items()):
        value = state_dict.get(prefix + name)
        shape = tuple(getattr(value, "shape", np.shape(value)))
        if isinstance(tensor, Tensor) and hasattr(tensor, "materialize") and \
                value is not None and math.prod(shape) > 0:
            _on_failure(_unmaterialize, tensor, type(tensor), tensor._array)
            tensor.materialize(shape)
            tensor._array[...] = 0


def _unmaterialize(tensor, cls, array):
    # a failed load: the tensor waits for its shape again, as it was
    tensor._array = array
    tensor._bump_version()
    tensor.__class__ = cls


class LazyModuleMixin:
    """What a lazy module adds to its plain class (``torch.nn.modules.lazy.LazyModuleMixin``),
    placed before it: ``has_uninitialized_params``, the load hook, and the first call's
    ``_lazy_forward``. The module defines ``initialize_parameters(input)`` (the shapes from
    the input, or from a state loaded while lazy) and ``cls_to_become``.

    Example:
        >>> m = nn.LazyConv2d(8, 3); isinstance(m, nn.modules.lazy.LazyModuleMixin)
        True
    """

    cls_to_become = None

    def _reset_once_shaped(self, fan_in):
        """A lazy layer's ``reset_parameters``: the plain module's draws once the shapes are
        known, nothing before; a ``fan_in`` of 0 draws nothing and warns of nothing (torch's
        leaves the bias as allocated): the bias zeros."""
        if self.has_uninitialized_params():
            return
        if fan_in == 0:
            if self.bias is not None:
                init.zeros_(self.bias)
            return
        super(LazyModuleMixin, self).reset_parameters()       # the plain class's, after this

    def has_uninitialized_params(self):
        """Whether a parameter or buffer still waits for its shape."""
        return any(isinstance(t, _Uninitialized)
                   for t in (*self._parameters.values(), *self._buffers.values()))

    def _apply(self, fn, recurse=True):
        """``Module._apply``, with each buffer still waiting for its shape waiting after it
        too (as torch's ``UninitializedBuffer`` stays one through ``.to()``/``.double()``):
        ``fn`` gives a plain Tensor of the new dtype and device, which takes the waiting
        class back, so the first call still gives its shape."""
        waiting = {name: type(buffer) for name, buffer in self._buffers.items()
                   if isinstance(buffer, _Uninitialized)}
        super()._apply(fn, recurse)
        for name, cls in waiting.items():
            buffer = self._buffers.get(name)
            if buffer is not None and not isinstance(buffer, _Uninitialized):
                buffer.__class__ = cls
        return self

    def _load_from_state_dict(self, state_dict, prefix, *args):
        materialize_from_state(self, state_dict, prefix)
        super()._load_from_state_dict(state_dict, prefix, *args)

    def _lazy_forward(self, input, *args):
        # torch's pre-hook at the first call: the shapes, the draws, then the plain class,
        # whose forward runs this call
        x = self._check_input(input)
        self.initialize_parameters(x)
        if self.has_uninitialized_params():
            raise RuntimeError(f"{self._describe()}: module {type(self).__name__} has not "
                               "been fully initialized")
        self.__class__ = self.cls_to_become
        return self.forward(x, *args)
