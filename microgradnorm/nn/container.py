"""Containers: ``ModuleList`` (registered "0", "1", ...), ``Sequential``, ``ModuleDict``,
``ParameterList`` and ``ParameterDict``, registering their items under PyTorch's names."""

from collections import OrderedDict
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


class _Named(Module):
    """What ModuleDict and ParameterDict share: a mapping view of one registry of the
    module (``_store``: "_modules" or "_parameters"), in the order added."""

    _store = None

    def __init__(self, items=None):
        super().__init__()
        if items is not None:
            self.update(items)

    def update(self, items):
        """Add each (name, value) of a mapping or an iterable of pairs."""
        for name, value in (items.items() if isinstance(items, Mapping) else items):
            self[name] = value

    def __getitem__(self, name):
        return getattr(self, self._store)[name]

    def __delitem__(self, name):
        delattr(self, name)

    def __contains__(self, name):
        return name in getattr(self, self._store)

    def __len__(self):
        return len(getattr(self, self._store))

    def __iter__(self):
        return iter(getattr(self, self._store))

    def keys(self):
        """The names, in order."""
        return getattr(self, self._store).keys()

    def values(self):
        """The items, in order."""
        return getattr(self, self._store).values()

    def items(self):
        """(name, item) pairs, in order."""
        return getattr(self, self._store).items()


class ModuleDict(_Named):
    """Modules by name, registered under their keys (``transformer.h.0.attn``), in the order
    added. Example: ``nn.ModuleDict(dict(wte=nn.Embedding(V, C), h=nn.ModuleList(blocks)))``."""

    _store = "_modules"

    def __setitem__(self, name, module):
        self.add_module(name, module)


class ParameterDict(_Named):
    """Parameters by name, registered under their keys (a Tensor becomes a Parameter)."""

    _store = "_parameters"

    def __setitem__(self, name, value):
        self.register_parameter(name, _as_parameter(value))

    def update(self, items):
        """Add each (name, value) of a mapping or an iterable of pairs; a plain dict's in
        sorted name order, an OrderedDict's, a ParameterDict's and pairs' in theirs (torch's
        rule)."""
        if isinstance(items, Mapping) and not isinstance(items, (OrderedDict, ParameterDict)):
            items = sorted(items.items())
        super().update(items)


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
