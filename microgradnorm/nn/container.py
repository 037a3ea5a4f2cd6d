"""Containers: ``ModuleList`` (registered "0", "1", ...), ``Sequential``, ``ModuleDict``,
``ParameterList`` and ``ParameterDict``, registering their items under PyTorch's names."""

from collections.abc import Mapping

from ..tensor import Tensor
from .module import Module, Parameter


class ModuleList(Module):
    """A list of Modules, registered under the names "0", "1", ... (``blocks.0.attn``)."""

    def __init__(self, modules=()):
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module):
        """Add ``module`` at the end, under the next index; returns the list."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__}.append: expected a Module, got "
                            f"{type(module).__name__}")
        setattr(self, str(len(self._modules)), module)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class Sequential(ModuleList):
    """Modules applied in order: ``nn.Sequential(nn.Linear(2, 8), nn.ReLU())``."""

    def __init__(self, *modules):
        super().__init__(modules)

    def forward(self, x):
        """Each module on the previous one's output. Shape: the first's input -> the last's."""
        for module in self:
            x = module(x)
        return x


class ModuleDict(Module):
    """Modules by name, registered under their keys (``transformer.h.0.attn``), in the order
    added. Example: ``nn.ModuleDict(dict(wte=nn.Embedding(V, C), h=nn.ModuleList(blocks)))``."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules):
        """Add each (name, module) of a mapping or an iterable of pairs."""
        items = modules.items() if isinstance(modules, Mapping) else modules
        for name, module in items:
            self[name] = module

    def __setitem__(self, name, module):
        self.add_module(name, module)

    def __getitem__(self, name):
        return self._modules[name]

    def __delitem__(self, name):
        delattr(self, name)

    def __contains__(self, name):
        return name in self._modules

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def keys(self):
        """The names, in order."""
        return self._modules.keys()

    def values(self):
        """The modules, in order."""
        return self._modules.values()

    def items(self):
        """(name, module) pairs, in order."""
        return self._modules.items()


def _as_parameter(value):
    # torch wraps a plain tensor given to a parameter container as a Parameter
    if isinstance(value, Parameter) or value is None:
        return value
    if not isinstance(value, Tensor):
        raise TypeError(f"expected a Parameter or a Tensor, got {type(value).__name__}")
    return Parameter(value)


class ParameterList(Module):
    """A list of Parameters registered as "0", "1", ... (a Tensor becomes a Parameter)."""

    def __init__(self, values=()):
        super().__init__()
        for value in values:
            self.append(value)

    def append(self, value):
        """Add ``value`` at the end, under the next index; returns the list."""
        self.register_parameter(str(len(self._parameters)), _as_parameter(value))
        return self

    def __getitem__(self, i):
        return list(self._parameters.values())[i]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())


class ParameterDict(Module):
    """Parameters by name, registered under their keys (a Tensor becomes a Parameter)."""

    def __init__(self, parameters=None):
        super().__init__()
        items = () if parameters is None else \
            parameters.items() if isinstance(parameters, Mapping) else parameters
        for name, value in items:
            self[name] = value

    def __setitem__(self, name, value):
        self.register_parameter(name, _as_parameter(value))

    def __getitem__(self, name):
        return self._parameters[name]

    def __contains__(self, name):
        return name in self._parameters

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def keys(self):
        """The names, in order."""
        return self._parameters.keys()

    def values(self):
        """The parameters, in order."""
        return self._parameters.values()

    def items(self):
        """(name, parameter) pairs, in order."""
        return self._parameters.items()
