"""Containers: ``ModuleList`` (registered "0", "1", ...), ``Sequential``, ``ModuleDict``,
``ParameterList`` and ``ParameterDict``, registering their items under PyTorch's names."""

import itertools
import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ..tensor import Tensor
from .module import Module, Parameter, _tree_version


def _list_key(container, idx):
    # torch's: an int in [-len, len) as the string key of a ModuleList or ParameterList
    idx = operator.index(idx)
    if not -len(container) <= idx < len(container):
        raise IndexError(f"index {idx} is out of range")
    return str(idx + len(container) if idx < 0 else idx)


def _pop(container, key):
    """Remove and return the item at ``key`` (a list's or a Sequential's: the rest
    renumbered; a dict's: KeyError if absent)."""
    value = container[key]
    del container[key]
    return value


class ModuleList(Module):
    """A list of Modules, registered under the names "0", "1", ... (``blocks.0.attn``), with
    the list methods torch's has: indexing (a slice is a ModuleList), ``append``,
    ``extend``, ``insert``, ``pop``, ``del``, ``+``, ``+=``; a deletion renumbers the rest.

    Example:
        >>> blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(4)); del blocks[0]
        >>> [name for name, _ in blocks.named_children()]            # ['0', '1', '2']
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[_list_key(self, idx)]

    def __setitem__(self, idx, module):
        setattr(self, _list_key(self, idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, _list_key(self, idx))
        _set_modules(self, enumerate(list(self._modules.values())))     # renumbered

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(itertools.chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self):
        # torch's: a run of equal reprs as one line, "(0-2): 3 x Linear(...)"
        reprs = [repr(module) for module in self]
        if not reprs:
            return self._get_name() + "()"
        lines, start = [], 0
        for end in range(1, len(reprs) + 1):
            if end == len(reprs) or reprs[end] != reprs[start]:
                block = reprs[start].replace("\n", "\n  ")
                label = f"({start})" if end - start == 1 else \
                    f"({start}-{end - 1}): {end - start} x"
                lines.append(f"{label}: {block}" if end - start == 1 else f"{label} {block}")
                start = end
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def insert(self, index, module):
        """Insert ``module`` before ``index``; the ones after it move up by one."""
        _check_module(module)
        modules = dict(self._modules)        # torch's moves, on a copy: a bad index changes
        for i in range(len(modules), index, -1):            # nothing
            modules[str(i)] = modules[str(i - 1)]
        modules[str(index)] = module
        _set_modules(self, modules.items())

    def append(self, module):
        """Add ``module`` at the end, under the next index; returns the list."""
        self.add_module(str(len(self)), module)
        return self

    pop = _pop

    def extend(self, modules):
        """Append each module of the iterable ``modules``; returns the list."""
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got "
                            f"{type(modules).__name__}")
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class Sequential(Module):
    """Modules applied in order: ``nn.Sequential(nn.Linear(2, 8), nn.ReLU())``, named "0",
    "1", ..., or ``nn.Sequential(OrderedDict([("fc", ...), ("act", ...)]))`` by name; with
    torch's list methods (a slice is a Sequential with the same names; ``del`` renumbers
    every name, ``*`` repeats the same modules).

    Example:
        >>> model = nn.Sequential(nn.Linear(2, 8), nn.ReLU()); model.append(nn.Linear(8, 1))
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _item(self, iterator, idx):
        # the idx-th of ``iterator`` (the keys or the modules), torch's bounds
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return next(itertools.islice(iterator, idx % size, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._item(iter(self._modules.values()), idx)

    def __setitem__(self, idx, module):
        setattr(self, self._item(iter(self._modules.keys()), idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._item(iter(self._modules.keys()), idx))
        _set_modules(self, enumerate(list(self._modules.values())))     # renumbered

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        combined = Sequential()
        for module in itertools.chain(self, other):
            combined.append(module)
        return combined

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        offset = len(self)
        for i, module in enumerate(list(other)):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other):
        _check_factor(self, other)
        combined = Sequential()
        for i, module in enumerate(list(self) * other):     # the same modules, repeated
            combined.add_module(str(i), module)
        return combined

    def __rmul__(self, other):
        return self.__mul__(other)

    def __imul__(self, other):
        _check_factor(self, other)
        length = len(self)
        for i in range(length, length * other):
            self.add_module(str(i), self._modules[str(i % length)])
        return self

    pop = _pop

    def append(self, module):
        """Add ``module`` at the end, named by its index; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Insert ``module`` before ``index`` (-len..len); the ones after it move up by one;
        returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index += n if index < 0 else 0
        modules = dict(self._modules)        # torch's moves, on a copy (a named Sequential's
        for i in range(n, index, -1):        # KeyError changes nothing)
            modules[str(i)] = modules[str(i - 1)]
        modules[str(index)] = module
        _set_modules(self, modules.items())
        return self

    def extend(self, sequential):
        """Append each module of ``sequential`` (any iterable of modules); returns self."""
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):
        """Each module on the previous one's output. Shape: the first's input -> the last's
        output."""
        for module in self:
            input = module(input)
        return input


def _check_module(module):
    if not isinstance(module, Module):
        raise TypeError(f"{type(module).__name__} is not a Module subclass")


def _check_factor(sequential, other):
    if not isinstance(other, int):
        raise TypeError(f"unsupported operand type(s) for *: {type(sequential)} and "
                        f"{type(other)}")
    if other <= 0:
        raise ValueError(f"Non-positive multiplication factor {other} for {type(sequential)}")


def _set_modules(container, items):
    # the container's sub-modules become ``items`` ((name, module) pairs, in order), as torch
    # reassigns ``_modules``: the registry and the attributes that mirror it, the tree's
    # cached paths made stale
    items = [(str(name), module) for name, module in items]
    for name in container._modules:
        container.__dict__.pop(name, None)
    container._modules.clear()
    for name, module in items:
        container._modules[name] = module
        object.__setattr__(container, name, module)
    _tree_version[0] += 1


class _Named(Module):
    """What ModuleDict and ParameterDict share: a mapping view of one registry of the
    module (``_store``: "_modules" or "_parameters"), in the order added."""

    _store = None

    def __init__(self, items=None):
        super().__init__()
        if items is not None:
            self.update(items)

    def update(self, items):
        """Add each (name, value) of a mapping (or another ModuleDict or ParameterDict) or of
        an iterable of pairs; every pair is checked before any is added."""
        kind = type(self).__name__
        if not isinstance(items, Iterable):
            raise TypeError(f"{kind}.update should be called with an iterable of key/value "
                            f"pairs, but got {type(items).__name__}")
        if isinstance(items, (Mapping, _Named)):
            pairs = list(items.items())
        else:
            pairs = []
            for j, pair in enumerate(items):
                if not isinstance(pair, Iterable):
                    raise TypeError(f"{kind} update sequence element #{j} should be "
                                    f"Iterable; is{type(pair).__name__}")
                if len(pair) != 2:
                    raise ValueError(f"{kind} update sequence element #{j} has length "
                                     f"{len(pair)}; 2 is required")
                pairs.append(tuple(pair))
        for name, value in pairs:
            self[name] = value

    def __getitem__(self, name):
        return getattr(self, self._store)[name]

    def __delitem__(self, name):
        if name not in getattr(self, self._store):
            raise KeyError(name)
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

    def clear(self):
        """Remove every item."""
        for name in list(self):
            del self[name]

    pop = _pop


class ModuleDict(_Named):
    """Modules by name, registered under their keys (``transformer.h.0.attn``), in the order
    added; with dict's methods (``update``, ``pop``, ``clear``, ``keys``, ``items``, ...).

    Example:
        >>> nn.ModuleDict(dict(wte=nn.Embedding(V, C), h=nn.ModuleList(blocks)))
    """

    _store = "_modules"

    def __init__(self, modules=None):       # torch's keyword: ModuleDict(modules=...)
        super().__init__(modules)

    def __setitem__(self, name, module):
        self.add_module(name, module)


class _MissingKey(KeyError, AttributeError):
    """A name a ParameterDict lacks: torch's AttributeError, and a dict's KeyError."""


class ParameterDict(_Named):
    """Parameters by name, registered under their keys (a Tensor becomes a Parameter), with
    dict's methods (``get``, ``setdefault``, ``pop``, ``popitem``, ``copy``, ``fromkeys``,
    ``|``, ...).

    Example:
        >>> params = nn.ParameterDict({"scale": mg.ones(4)}); params["shift"] = mg.zeros(4)
    """

    _store = "_parameters"

    def __init__(self, parameters=None):    # torch's keyword: ParameterDict(parameters=...)
        super().__init__(parameters)

    def __getitem__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is "
                            f"not a string (type is '{type(name).__name__}').")
        if name not in self._parameters:
            raise _MissingKey(name)
        return self._parameters[name]

    def __setitem__(self, name, value):
        if not isinstance(name, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is "
                            f"not a string (type is '{type(name).__name__}').")
        self.register_parameter(name, _as_parameter(value))

    def update(self, items):
        """Add each (name, value) of a mapping or an iterable of pairs; a plain dict's in
        sorted name order, an OrderedDict's, a ParameterDict's and pairs' in theirs (torch's
        rule)."""
        if isinstance(items, Mapping) and not isinstance(items, OrderedDict):
            items = sorted(items.items())
        super().update(items)

    def __reversed__(self):
        return reversed(list(self._parameters))

    def copy(self):
        """A new ParameterDict holding the same Parameters."""
        return ParameterDict(OrderedDict(self.items()))

    def get(self, key, default=None):
        """The Parameter of ``key``, or ``default``."""
        return self[key] if key in self else default

    def setdefault(self, key, default=None):
        """The Parameter of ``key``, set to ``default`` first if absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def popitem(self):
        """Remove and return the last (key, Parameter) added."""
        if not self._parameters:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(list(self._parameters)))
        return key, self.pop(key)

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with each of ``keys`` holding ``default``."""
        return ParameterDict((key, default) for key in keys)

    def __or__(self, other):
        combined = self.copy()
        combined.update(other)
        return combined

    def __ror__(self, other):
        combined = other.copy()
        combined.update(self)
        return combined

    def __ior__(self, other):
        self.update(other)
        return self

    def extra_repr(self):
        return _describe_parameters(self.items(), type_names=True)

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")


def _as_parameter(value):
    # torch wraps a plain tensor given to a parameter container as a Parameter
    if isinstance(value, Parameter) or value is None:
        return value
    if not isinstance(value, Tensor):
        raise TypeError(f"expected a Parameter or a Tensor, got {type(value).__name__}")
    return Parameter(value)


def _describe_parameters(items, type_names=False):
    # torch's lines: "  (0): Parameter containing: [torch.float32 of size 2x3]" (a ParameterDict
    # names the tensor type: "[torch.FloatTensor of size 2x3]"), and for what is no Tensor
    # (None) "  (1): Object of type: NoneType"
    lines = []
    for key, p in items:
        if not isinstance(p, Tensor):
            lines.append(f"  ({key}): Object of type: {type(p).__name__}")
            continue
        size = "x".join(str(n) for n in p.shape)
        device = f" ({p.device})" if p.device != "cpu" else ""
        kind = p.type() if type_names else str(p.dtype)           # "torch.float32"
        lines.append(f"  ({key}): Parameter containing: [{kind} of size {size}{device}]")
    return "\n".join(lines)


class ParameterList(Module):
    """A list of Parameters registered as "0", "1", ... (a Tensor becomes a Parameter), with
    torch's list methods: indexing (a slice is a ParameterList), assignment, ``append``,
    ``extend``, ``+=``.

    Example:
        >>> scales = nn.ParameterList(mg.ones(4) for _ in range(3)); scales[0] = mg.zeros(4)
    """

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return self._parameters[_list_key(self, idx)]

    def __setitem__(self, idx, value):
        self.register_parameter(_list_key(self, idx), _as_parameter(value))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        """Add ``value`` at the end, under the next index; returns the list."""
        self.register_parameter(str(len(self._parameters)), _as_parameter(value))
        return self

    def extend(self, values):
        """Append each of ``values`` (an iterable, not a Tensor); returns the list."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but "
                            f"got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return _describe_parameters(enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class Container(Module):
    """The old base of containers, with torch's FutureWarning: a ``Module`` that registers
    each keyword argument as a child (subclass ``Module`` instead).

    Example:
        >>> mg.nn.Container(proj=mg.nn.Linear(2, 2))
    """

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)
