"""``Module`` (and ``Parameter``, from ``parameter.py``); calling a module names its graph
nodes and Parameters by dotted path (docs/architecture.md, "Module scopes")."""

import threading
import weakref
from collections import OrderedDict

import numpy as np

from .. import autograd, backend, dtypes, torch_misc
from .. import functional as F
from ..dtypes import check_positive_ints as _check_positive  # noqa: F401 (for the layers)
from ..dtypes import check_nonnegative_ints as _check_sizes  # noqa: F401 (for the layers)
from ..fused.arguments import NotATensorError
from ..norms import norm_impl
from ..norms.arguments import MixedDtypeError
from ..tensor import Tensor
from . import module_hooks, module_state
from .module_convert import ModuleConvert
from .module_hooks import REGISTRATION, ModuleHooks
from .module_state import ModuleState
from .parameter import Buffer, Parameter

# id -> hook tables, one OrderedDict each per module (an empty one: the call's fast path)
_HOOK_TABLES = module_hooks.TABLES + module_state.TABLES


# bumped whenever any module tree changes: roots compare it to their cached paths and names
_tree_version = [0]


class _CallPaths(threading.local):
    # per thread, as autograd's scope stacks: each thread sees its own outermost module
    def __init__(self):
        self.stack = []          # {id(module): dotted path} of the outermost module called


class FloatDtypeError(RuntimeError, TypeError):
    """A module's ``dtype=`` that is not floating: torch's RuntimeError (its parameters
    cannot require grad), a TypeError too."""


_call_paths_state = _CallPaths()
_last_named_root = [None]  # weak reference to the module that named the parameters last


class Module(ModuleHooks, ModuleState, ModuleConvert):
    """Base class of every layer. Subclasses assign Parameters, buffers (``register_buffer``)
    and sub-Modules as attributes in ``__init__`` and define ``forward``.

    Example:
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(4, 2)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
    """

    switches_impl = False     # True on the norm modules, whose ``impl`` set_impl switches
    _norm_impl = None         # set_impl's choice: forward runs inside norms.norm_impl(it)
    # state names that a loaded state dict of an older ``_version`` (or of none) may lack,
    # the current value staying (BatchNorm's num_batches_tracked, which older torch state
    # dicts lack; torch's _load_from_state_dict)
    _optional_state = ()

    def __init__(self):
        # the member tables, each with a weak reference to self (no Python __init__: cheap)
        params, buffers, modules = _TreeTable(), _Table(), _TreeTable()
        params._owner = buffers._owner = modules._owner = weakref.ref(self)
        attributes = self.__dict__
        attributes["_parameters"], attributes["_buffers"], attributes["_modules"] = \
            params, buffers, modules
        object.__setattr__(self, "_non_persistent_buffers_set", set())   # not in state_dict
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_paths", None)          # (tree version, {id: path})
        for name in _HOOK_TABLES:                         # each module its own, as torch's
            object.__setattr__(self, name, OrderedDict())

    def __setstate__(self, state):
        # unpickling and deepcopy: a module saved before a table existed gets an empty one
        self.__dict__.update(state)
        bind_tables(self)
        for name in _HOOK_TABLES:
            if name not in self.__dict__:
                object.__setattr__(self, name, OrderedDict())
        if "_non_persistent_buffers_set" not in self.__dict__:
            object.__setattr__(self, "_non_persistent_buffers_set", set())

    def __setattr__(self, name, value):
        # torch's rules: a Parameter or Module (re)registers the name; a name registered as a
        # parameter or sub-module takes only its kind or None (a plain Tensor would silently
        # drop out of parameters(), and so out of the optimizer); a buffer takes a Tensor
        if "_parameters" not in self.__dict__:        # before __init__: plain values only
            if isinstance(value, (Parameter, Module, Buffer)):
                kind = "parameters" if isinstance(value, Parameter) else \
                    "module" if isinstance(value, Module) else "buffer"
                raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
            object.__setattr__(self, name, value)
            return
        params, modules, buffers = self._parameters, self._modules, self._buffers
        tree_changes = name in params or name in modules
        # a Module does not replace a parameter: torch checks the parameter's name first
        if isinstance(value, Parameter) or (isinstance(value, Module) and name not in params):
            table = params if isinstance(value, Parameter) else modules
            kind = "parameter" if table is params else "module"
            if REGISTRATION[kind]:                     # torch's global registration hooks
                value = module_hooks.registered(self, kind, name, value)
            for other in (params, modules, buffers):
                if other is not table and name in other:   # its own keeps the name's place
                    dict.__delitem__(other, name)
            self._non_persistent_buffers_set.discard(name)
            dict.__setitem__(table, name, value)      # the attribute is set below
            tree_changes = True
        elif isinstance(value, Buffer) and name not in params and name not in modules:
            # nn.Buffer: a buffer, with the persistence it carries (torch's register_buffer)
            if name not in buffers:
                self.register_buffer(name, value, value.persistent)   # checks; back here
                return
            buffers[name] = value
            if value.persistent:
                self._non_persistent_buffers_set.discard(name)
            else:
                self._non_persistent_buffers_set.add(name)
        elif value is not None and (name in params or name in modules or name in buffers):
            kind, expected = (("parameter", "torch.nn.Parameter") if name in params else
                              ("child module", "torch.nn.Module") if name in modules else
                              ("buffer", "torch.Tensor"))
            if kind != "buffer" or not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as {kind} '{name}' "
                                f"({expected} or None expected)")
            if REGISTRATION["buffer"]:
                value = module_hooks.registered(self, "buffer", name, value)
            buffers[name] = value
        else:
            for table in (params, modules, buffers):
                if name in table:
                    table[name] = None                # still registered, as torch
        if tree_changes:
            _tree_version[0] += 1                     # cached paths and names are stale
        object.__setattr__(self, name, value)

    # No __getattr__: members live in __dict__ too (mirrored by __setattr__, the register_*
    # methods and the tables' own writes, _Table), so ``m.weight`` is a plain lookup. A
    # class __getattr__ would slow every attribute access (no specialised attribute loads:
    # ~19% on ``m.weight``, ~6% on a small model's forward+backward).

    def __delattr__(self, name):
        # torch's: the first table that has the name loses it, else a plain attribute
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                self.__dict__.pop(name, None)
                self._non_persistent_buffers_set.discard(name)
                _tree_version[0] += 1
                return
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor, persistent=True):
        """Register a non-trainable Tensor (running statistics) as ``name``.

        Args:
            name: a non-empty string without ".", not another attribute's.
            tensor: a Tensor or None (registered, left out of ``buffers()``).
            persistent: False keeps it out of ``state_dict()`` and out of what
                ``load_state_dict`` expects (a causal mask, a cache); ``to()`` still moves it.

        Example:
            >>> self.register_buffer("mask", mg.ones(8, 8).tril(), persistent=False)
        """
        _check_name("register_buffer", "buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"register_buffer: attribute {name!r} already exists on "
                           f"{type(self).__name__}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: {name} must be a Tensor or None, "
                            f"got {type(tensor).__name__}")
        if REGISTRATION["buffer"]:                     # torch's global registration hooks
            tensor = module_hooks.registered(self, "buffer", name, tensor)
        self._buffers[name] = tensor
        object.__setattr__(self, name, tensor)   # a buffer, even a Parameter, as torch's
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add ``param`` (a Parameter or None) as ``name``, as assigning it would."""
        self._register("register_parameter", name, param, Parameter, self._parameters)

    def add_module(self, name, module):
        """Add ``module`` (or None) as the sub-module ``name``; ``register_module`` too."""
        self._register("add_module", name, module, Module, self._modules)

    register_module = add_module

    def _register(self, where, name, value, cls, registry):
        # as torch: a new name or one of this registry; other attributes are never replaced
        if value is not None and not isinstance(value, cls):
            raise TypeError(f"{where}: {name} must be a {cls.__name__} or None, "
                            f"got {type(value).__name__}")
        _check_name(where, "module" if cls is Module else "parameter", name)
        if name not in registry and hasattr(self, name):
            raise KeyError(f"{where}: attribute {name!r} already exists on "
                           f"{type(self).__name__}")
        self.__setattr__(name, value)
        if value is None:                             # registered (not a plain attribute)
            registry[name] = value

    def get_submodule(self, target):
        """The module at the dotted path ``target`` ("" is this module); AttributeError
        naming the first part that is missing or no Module, as torch's."""
        if not isinstance(target, str):
            raise AttributeError(f"get_submodule: target must be a dotted name (a str), got "
                                 f"{type(target).__name__}")
        module = self
        for part in target.split(".") if target else ():
            if not hasattr(module, part):
                raise AttributeError(f"{module._get_name()} has no attribute `{part}`")
            module = getattr(module, part)
            if not isinstance(module, Module):
                raise AttributeError(f"`{part}` is not an nn.Module")
        return module

    def set_submodule(self, target, module, strict=False):
        """Put ``module`` at the dotted path ``target`` (its parent must exist; ``strict``:
        the name too). Example: ``model.set_submodule("blocks.0.mlp", nn.Identity())``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        """The Parameter at the dotted path ``target`` (``"blocks.0.ln1.weight"``)."""
        module, name = self._get_member(target)
        if not isinstance(getattr(module, name), Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return getattr(module, name)

    def get_buffer(self, target):
        """The buffer at the dotted path ``target`` (``"bn.running_mean"``)."""
        module, name = self._get_member(target)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(module, name)

    def _get_member(self, target):
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        return module, name

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for this module ("" or ``prefix``) and every descendant,
        depth first; a module reached twice (shared) once, unless not ``remove_duplicate``.
        ``memo``: a set of modules to skip, filled with those yielded."""
        memo = set() if memo is None else memo
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                                remove_duplicate)

    def modules(self, remove_duplicate=True):
        """This module and every module below it, depth first (an iterator); a shared one
        once, unless not ``remove_duplicate``."""
        return (module for _, module in self.named_modules(remove_duplicate=remove_duplicate))

    def children(self):
        """The direct sub-modules, in registration order, each once (an iterator)."""
        return (m for _, m in self.named_children())

    def named_children(self):
        """(name, module) for each direct sub-module, in registration order, each once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def apply(self, fn):
        """Call ``fn(module)`` on every sub-module, children first, then on self; returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, Parameter) of this module (and, ``recurse``, every module below),
        each Parameter once even if shared, unless not ``remove_duplicate``."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every Parameter of this module (and below), in ``named_parameters`` order: a list
        that ``next()`` also steps through, as torch's generator."""
        return _Members(p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, Tensor) for every buffer of this module (and below), as
        ``named_parameters``."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """Every buffer of this module (and below): a list that ``next()`` steps through."""
        return _Members(b for _, b in self.named_buffers(recurse=recurse))

    def _named_members(self, table, prefix, recurse, remove_duplicate):
        # torch's: each tensor once (by identity), modules walked as named_modules walks
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for path, module in modules:
            for name, tensor in getattr(module, table).items():
                if tensor is None or id(tensor) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(tensor))
                yield (f"{path}.{name}" if path else name), tensor

    def train(self, mode=True):
        """Training mode (dropout on, BatchNorm uses batch statistics) for this module, then
        ``child.train(mode)`` for each child, so a child's own ``train`` (one that keeps a
        BatchNorm frozen) decides for its part; returns self. ValueError if ``mode`` is not
        a bool, as torch's."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        object.__setattr__(self, "training", mode)    # a plain flag: no registry to update
        for child in self.children():
            child.train(mode)
        return self

    def eval(self):
        """``train(False)``: norms use running statistics, dropout is off; returns self."""
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        """Clear every parameter's ``.grad``: None (default) or zeros of its shape."""
        for param in self.parameters():
            clear_grad(param, set_to_none)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` on every parameter (e.g. False to freeze); returns self.
        A ``requires_grad`` that is not a bool is torch's TypeError, before any change."""
        if not isinstance(requires_grad, bool):
            raise TypeError(f"requires_grad_(): argument 'requires_grad' must be bool, not "
                            f"{type(requires_grad).__name__}")
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def compile(self, *args, **kwargs):
        """torch's in-place ``Module.compile``: the arguments checked as ``mg.compile``
        checks them; the module runs eagerly, as before (no compiler here)."""
        torch_misc.compile(self, *args, **kwargs)

    def _get_name(self):
        return type(self).__name__

    def __dir__(self):
        # torch's: the class's, the instance's and the registered names, without the
        # ones a container numbers ("0", "1", ...)
        keys = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules,
                *self._buffers]
        return sorted({key for key in keys if not key[0].isdigit()})

    def _run(self, args, kwargs):
        if self._norm_impl is not None:           # every norm call inside, F's included
            with norm_impl(self._norm_impl):
                return self._run_hooks(args, kwargs)
        return self._run_hooks(args, kwargs)

    def _run_hooks(self, args, kwargs):
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks \
                or self._backward_pre_hooks or module_hooks.GLOBAL["_forward_pre_hooks"] \
                or module_hooks.GLOBAL["_forward_hooks"]:
            return self._call_with_hooks(args, kwargs)       # module_hooks.py
        return self.forward(*args, **kwargs)

    def set_impl(self, impl):
        """Switch every norm below to "fused" or "composite": the norm modules' ``impl``, and
        every norm called without ``impl=`` inside any of these modules' forward (a user's
        module calling ``F.layer_norm``), which runs in a ``mg.norm_impl(impl)`` block; a
        call with another explicit ``impl=`` keeps it and warns. Returns self."""
        _check_choice("set_impl", "impl", impl, F.IMPLS)
        for module in self.modules():
            if module.switches_impl:
                module.impl = impl
            object.__setattr__(module, "_norm_impl", impl)
        return self

    def forward(self, *args, **kwargs):
        """The computation, defined by every subclass; call ``m(x)``, which names the nodes."""
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        """Run ``forward`` (and the hooks) inside this module's scope."""
        stack = _call_paths_state.stack
        if stack:                                         # inside an outer module's call
            with autograd.module_scope(stack[-1].get(id(self), autograd._module_path())):
                return self._run(args, kwargs)
        stack.append(self._root_paths())
        try:
            with autograd.module_scope(""):
                return self._run(args, kwargs)
        finally:
            stack.pop()

    def _root_paths(self):
        # recomputed when a tree changed or another root named the parameters last
        cached = self._paths
        last = _last_named_root[0]
        if cached is None or cached[0] != _tree_version[0] or last is None or last() is not self:
            paths = {id(module): path for path, module in self.named_modules()}
            for name, param in self.named_parameters():
                param.name = name
            object.__setattr__(self, "_paths", (_tree_version[0], paths))
            _last_named_root[0] = weakref.ref(self)
        return self._paths[1]

    def extra_repr(self):
        """The configuration shown inside ``Name(...)`` by ``repr`` and error messages."""
        return ""

    def _describe(self):
        # for errors: "Linear(in_features=3, ...) at 'blocks.0.mlp.fc1'"
        path = autograd._module_path()
        where = f" at {path!r}" if path else ""
        return f"{type(self).__name__}({self.extra_repr()}){where}"

    def _check_input(self, x, trailing=None, config=None, weight=None):
        # ``x`` as a Tensor, its trailing dims ``trailing`` (set by ``config``, e.g.
        # "in_features=3") and its dtype ``weight``'s; errors name this module
        if not isinstance(x, Tensor):
            if not (isinstance(x, np.ndarray) or backend.is_cupy_array(x)):
                raise NotATensorError(f"{self._describe()}: input must be a Tensor or an "
                                      f"array, got {type(x).__name__}; wrap data with "
                                      f"mg.tensor(...)")
            x = Tensor(x, dtype=x.dtype, device=backend.device_of(x))
        k = 0 if trailing is None else len(trailing)
        if k and (x.ndim < k or x._array.shape[-k:] != tuple(trailing)):
            if x.ndim < k:
                got = f"input has {x.ndim} dims"
            elif k == 1:
                got = f"input's last dim is {x.shape[-1]}"
            else:
                got = f"input's last {k} dims are {x.shape[-k:]}"
            # torch's RuntimeError (its matmul's shapes), a ValueError as here before
            raise dtypes.ArgumentError(f"{self._describe()}: {got}, expected {config} "
                                       f"(input shape {x.shape})")
        if weight is not None and x.dtype.kind == "f" and x.dtype != weight.dtype:
            # torch's RuntimeError ("mat1 and mat2 must have the same dtype"), a TypeError too
            raise MixedDtypeError(f"{self._describe()}: input is {x.dtype} but the parameters "
                                  f"are {weight.dtype}; cast the model with "
                                  f"model.to(dtype=\"{x.dtype.name}\") or the input with "
                                  f"x.astype(\"{weight.dtype.name}\")")
        return x

    def __repr__(self):
        # torch's layout: a one-line extra_repr inline when there are no children, else
        # every line of it, then each child, indented
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + repr(module).replace("\n", "\n  ")
                       for name, module in self._modules.items()]      # None too, as torch
        if len(extra_lines) == 1 and not child_lines:
            return f"{self._get_name()}({extra_lines[0]})"
        lines = extra_lines + child_lines
        body = "\n  " + "\n  ".join(lines) + "\n" if lines else ""
        return f"{self._get_name()}({body})"


class _Table(dict):
    """A module's ``_parameters``, ``_buffers`` or ``_modules``: a dict whose writes also set
    (or remove) the module's attribute of that name, so a member put straight into it
    (``m._parameters["w"] = p``, ``del m._modules["fc"]``, as torch code does) is one as
    ``m.w``, as a registered one is everywhere. Reads are plain dict reads; ``_owner`` is a
    weak reference to the module (None: unbound, until ``bind_tables``)."""

    __slots__ = ("_owner",)
    _tree = False                             # a write changes the tree's paths and names

    def _attributes(self):
        owner = getattr(self, "_owner", None)
        owner = None if owner is None else owner()
        if self._tree:
            _tree_version[0] += 1
        return None if owner is None else owner.__dict__

    def __setitem__(self, name, value):
        dict.__setitem__(self, name, value)
        attributes = self._attributes()
        if attributes is not None and isinstance(name, str):
            attributes[name] = value

    def __delitem__(self, name):
        dict.__delitem__(self, name)
        attributes = self._attributes()
        if attributes is not None:
            attributes.pop(name, None)

    def pop(self, name, *default):
        if name not in self:
            return dict.pop(self, name, *default)
        value = self[name]
        del self[name]
        return value

    def popitem(self):
        name, value = dict.popitem(self)
        dict.__setitem__(self, name, value)
        del self[name]
        return name, value

    def setdefault(self, name, default=None):
        if name not in self:
            self[name] = default
        return self[name]

    def update(self, *args, **kwargs):
        for name, value in dict(*args, **kwargs).items():
            self[name] = value

    def __ior__(self, other):
        self.update(other)
        return self

    def clear(self):
        for name in list(self):
            del self[name]

    def __reduce__(self):
        # pickled and copied as its items; the copy's module binds it (bind_tables)
        return type(self), (), None, None, iter(dict.items(self))


class _TreeTable(_Table):
    """``_parameters`` and ``_modules``: a write also makes cached paths and names stale."""

    __slots__ = ()
    _tree = True


def bind_tables(module):
    """Make ``module``'s tables (after an unpickle or a copy of its ``__dict__``) its own
    ``_Table``s: plain dicts (an older pickle) become tables, unbound ones are bound."""
    for name, kind in (("_parameters", _TreeTable), ("_buffers", _Table),
                       ("_modules", _TreeTable)):
        table = module.__dict__.get(name)
        if table is None:
            continue
        if type(table) is not kind:
            items, table = table, kind()
            dict.update(table, items)
            object.__setattr__(module, name, table)
        owner = getattr(table, "_owner", None)
        if owner is None or owner() is None:
            table._owner = weakref.ref(module)


class _Members(list):
    """What ``parameters()`` and ``buffers()`` return: a list (its ``len``, indexing, and
    any number of loops), which ``next()`` also steps through, as torch's generator
    (``next(model.parameters()).device``)."""

    _next = 0

    def __next__(self):
        if self._next >= len(self):
            raise StopIteration
        self._next += 1
        return self[self._next - 1]


def _check_name(where, kind, name):
    # torch's: a TypeError for a name that is no string, a KeyError for a bad string
    if not isinstance(name, str):
        raise TypeError(f"{where}: {kind} name should be a string. Got "
                        f"{type(name).__name__}")
    if not name or "." in name:
        raise KeyError(f"{where}: name must be a non-empty string without '.', got {name!r}")


def _dtype(dtype):
    dtype = dtypes.default_float(dtype)           # None: the default dtype, float32
    if not dtypes.is_floating(dtype):
        raise FloatDtypeError(f"dtype must be a floating dtype, got {dtype}")
    return dtype


def _check_choice(fn, name, value, choices):
    if value not in choices:
        raise ValueError(f"{fn}: {name} must be one of {choices}, got {value!r}")


def clear_grad(param, set_to_none=True):
    """``zero_grad``'s work on one parameter (Module's and the optimizers'): ``.grad`` None,
    or zeroed in place (NaN and inf go too), first cut from any graph a ``create_graph=True``
    backward gave it, as torch's."""
    grad = param.grad
    if set_to_none:
        param.grad = None
    elif grad is not None:
        if grad.grad_fn is not None:
            grad.detach_()
        else:
            grad.requires_grad_(False)
        grad.zero_()
