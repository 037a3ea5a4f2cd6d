"""A Module's state dict, as torch's: ``state_dict`` (each module's parameters, then its
persistent buffers, then its children's, through ``_save_to_state_dict``), ``load_state_dict``
through each module's ``_load_from_state_dict`` (which a model file may override, to rename
old keys), ``assign=True``, the extra state and the state-dict hooks. ``Module`` inherits
them from ``ModuleState``.

As torch's, a load writes each entry as it goes, so an overridden ``_load_from_state_dict``
reads the new values after ``super()``. Unlike torch's, a load that fails (a bad entry, a
strict key error, an override's exception) puts back every parameter, buffer and extra
state it wrote before it raises: a bad state dict is one error that leaves the model as it
was."""

import functools
import threading
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import numpy as np

from .. import backend, dtypes
from ..tensor import Tensor
from .module_hooks import _add
from .parameter import Parameter

EXTRA_STATE_KEY = "_extra_state"        # torch's key of get_extra_state()'s value


class StateDictError(RuntimeError, ValueError):
    """``load_state_dict``'s error (torch's is a RuntimeError; a ValueError here before):
    every problem of the state dict in one message; nothing was loaded."""


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns (torch's): the model's keys the state dict lacked and
    the state dict's keys the model has not; unpacks as ``missing, unexpected``.

    Example:
        >>> model.load_state_dict(model.state_dict())      # <All keys matched successfully>
    """

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _Loading(threading.local):
    def __init__(self):
        self.undo = None           # inside load_state_dict: one put_back() per write made


_loading = _Loading()

# the tables Module.__init__ gives each module (with module_hooks.TABLES): id -> hook
TABLES = ("_state_dict_hooks",                # hook(module, state_dict, prefix, metadata)
          "_state_dict_pre_hooks",            # hook(module, prefix, keep_vars)
          "_load_state_dict_pre_hooks",       # hook(state_dict, prefix, metadata, ...)
          "_load_state_dict_post_hooks")      # hook(module, incompatible_keys)


class ModuleState:
    """The state-dict methods of ``Module`` (torch's names, arguments and key order)."""

    _version = 1                          # torch's: in the metadata, for old state dicts

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """{dotted name: Tensor} of every parameter and persistent buffer, module by module
        (an OrderedDict with torch's ``_metadata``), detached and sharing their memory:
        ``sd[k].copy_(v)`` under ``mg.no_grad()`` writes into the model. A tied parameter
        is listed under each of its names.

        Args:
            destination: the dict to fill and return (None: a new OrderedDict).
            prefix: put before every key (``"model."``).
            keep_vars: the Parameters and buffers themselves, not detached Tensors.

        Positional arguments are deprecated, as in torch (a FutureWarning).

        Example:
            >>> list(nn.Linear(2, 3).state_dict())                  # ['weight', 'bias']
        """
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=f"{prefix}{name}.",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own entries (not its children's) into ``destination``."""
        skip = self._non_persistent_buffers_set
        for name, tensor in (*self._parameters.items(), *self._buffers.items()):
            if tensor is not None and name not in skip:
                destination[prefix + name] = tensor if keep_vars else tensor.detach()
        if type(self).get_extra_state is not ModuleState.get_extra_state:
            destination[prefix + EXTRA_STATE_KEY] = self.get_extra_state()

    def get_extra_state(self):
        """Override (with ``set_extra_state``) to put any value in the state dict under
        ``"_extra_state"``."""
        raise RuntimeError("get_extra_state() is called only where a module overrides it")

    def set_extra_state(self, state):
        """Override (with ``get_extra_state``) to take the ``"_extra_state"`` value back."""
        raise RuntimeError("set_extra_state() is called only where a module overrides it")

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy ``state_dict`` (Tensors or arrays by name, a tied parameter under any of its
        names) into the parameters and persistent buffers.

        Args:
            state_dict: {dotted name: Tensor or array}, as ``state_dict()`` gives.
            strict: a missing or unexpected key is an error (the keys a module declares
                optional, BatchNorm's ``num_batches_tracked``, may be missing).
            assign: put the state dict's tensors in the module instead of copying into
                the module's own: a Parameter as it is, a Tensor as a Parameter sharing its
                memory; either with the old one's ``requires_grad``, its dtype kept.

        Returns torch's ``_IncompatibleKeys``: ``.missing_keys``, ``.unexpected_keys`` (it
        unpacks as the two lists). Each module's ``_load_from_state_dict`` runs and writes
        as it goes (a model's override may rename keys, or read the loaded values after
        ``super()``); the load post-hooks run once everything is written, before the strict
        check (a hook may clear the key lists in place). Every problem is
        one ``StateDictError`` (a RuntimeError, as torch's, and a ValueError), raised after
        what was written is put back.

        Example:
            >>> model.load_state_dict(model.state_dict())      # <All keys matched successfully>
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, problems, undo, loaded = [], [], [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)          # the hooks may rename keys
        if metadata is not None:
            state_dict._metadata = metadata
        outer, _loading.undo = _loading.undo, undo
        try:
            _load(self, state_dict, "", metadata, assign, (missing, unexpected, problems),
                  loaded)
            keys = _IncompatibleKeys(missing, unexpected)
            for module in loaded:     # children before their parent, as torch's; a hook
                for hook in module._load_state_dict_post_hooks.values():   # may edit keys
                    if hook(module, keys) is not None:
                        raise AssertionError("Hooks registered with "
                                             "``register_load_state_dict_post_hook`` are not "
                                             "expected to return new values, if "
                                             "incompatible_keys need to be modified, it "
                                             "should be done inplace.")
            if strict and unexpected:                 # torch's lines, first these two
                problems.insert(0, f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. ")
            if strict and missing:
                problems.insert(0, f"Missing key(s) in state_dict: {_quoted(missing)}. ")
            if problems:
                raise StateDictError(f"Error(s) in loading state_dict for "
                                     f"{type(self).__name__}:\n\t" + "\n\t".join(problems)
                                     + "\nNothing was loaded.")
        except Exception:
            for put_back in reversed(undo):           # a tied tensor's first value last
                put_back()
            raise
        finally:
            _loading.undo = outer
        if outer is not None:                         # undone too if the outer load fails
            outer.extend(undo)
        return keys

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Load this module's own entries (``prefix`` + name) from ``state_dict``: torch's
        signature, which a model file may override (rename keys, then call this). Each
        problem is appended to ``error_msgs``; each good entry is written at once (put back
        if the ``load_state_dict`` around it fails)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        skip = self._non_persistent_buffers_set
        local = {name: t for name, t in (*self._parameters.items(), *self._buffers.items())
                 if t is not None and name not in skip}
        assign = local_metadata.get("assign_to_params_buffers", False)
        version = local_metadata.get("version")
        optional = self._optional_state if version is None or version < self._version else ()
        for name, target in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict and name not in optional:
                    missing_keys.append(key)
                continue
            value, problem = _checked(key, target, state_dict[key], assign)
            if problem is not None:
                error_msgs.append(problem)
            else:
                _write(self, name, target, value, assign)
        extra = prefix + EXTRA_STATE_KEY
        if type(self).set_extra_state is not ModuleState.set_extra_state:
            if extra in state_dict:
                _set_extra_state(self, state_dict[extra])
            elif strict:
                missing_keys.append(extra)
        elif strict and extra in state_dict:
            unexpected_keys.append(extra)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra:
                    head, dot, _ = key[len(prefix):].partition(".")
                    if head not in (self._modules if dot else local):
                        unexpected_keys.append(key)

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        return _add(self, "_state_dict_pre_hooks", hook, "register_state_dict_pre_hook")

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict`` saved
        this module and its children; it edits ``state_dict`` in place (returns None)."""
        handle = _add(self, "_state_dict_hooks", hook, "register_state_dict_post_hook")
        hook._from_public_api = True
        return handle

    def _register_state_dict_hook(self, hook):
        """torch's older form of ``register_state_dict_post_hook``: a non-None result
        replaces the state dict."""
        return _add(self, "_state_dict_hooks", hook, "_register_state_dict_hook")

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads (it may rename keys)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` (``with_module``: the module first) before this module loads."""
        where = "register_load_state_dict_pre_hook" if with_module else \
            "_register_load_state_dict_pre_hook"
        if with_module and callable(hook):            # _add refuses the others, named
            hook = functools.partial(hook, self)
        return _add(self, "_load_state_dict_pre_hooks", hook, where)

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` after ``load_state_dict`` has written
        everything; it may edit the key lists in place and must return None."""
        return _add(self, "_load_state_dict_post_hooks", hook,
                    "register_load_state_dict_post_hook")


def _load(module, state_dict, prefix, metadata, assign, reports, loaded):
    # torch's recursion: the module's own entries, then each child's, given the keys
    # under its prefix (a child's hook renames in its own copy)
    local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
    if assign:
        local_metadata["assign_to_params_buffers"] = True
    module._load_from_state_dict(state_dict, prefix, local_metadata, True, *reports)
    for name, child in module._modules.items():
        if child is not None:
            child_prefix = f"{prefix}{name}."
            child_state = {k: v for k, v in state_dict.items() if k.startswith(child_prefix)}
            _load(child, child_state, child_prefix, metadata, assign, reports, loaded)
    loaded.append(module)


def _checked(key, target, value, assign):
    # (the value ready to write, None) or (None, what is wrong with it)
    array = value._array if isinstance(value, Tensor) else value
    try:
        array = array if backend.is_cupy_array(array) else np.asarray(array)
        if target.shape == () and array.shape == (1,):        # torch's one exception
            array = array.reshape(())
        if tuple(array.shape) != target.shape:
            return None, (f"size mismatch for {key}: copying a param with shape "   # torch's
                          f"torch.Size({list(array.shape)}) from checkpoint, the shape in "
                          f"current model is torch.Size({list(target.shape)}).")
        if not dtypes.is_numeric(array.dtype):
            raise TypeError(f"dtype {array.dtype}")
        if assign:                                # the state dict's tensor itself
            return (value if isinstance(value, Tensor) else Tensor(array)), None
        if not getattr(target._array.flags, "writeable", True):
            return None, f"{key}: the tensor it loads into is read-only"
        if target.is_meta and not backend.is_meta_array(array):      # torch's warning
            warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint "
                          "to a meta parameter in the current model, which is a no-op. (Did "
                          "you mean to pass `assign=True` to assign items in the state "
                          "dictionary to their corresponding key in the module instead of "
                          "copying them in place?)", UserWarning, stacklevel=5)
        return backend.to_device(array, target.device).astype(target.dtype), None
    except (TypeError, ValueError) as error:
        return None, f"{key}: cannot be loaded into {target.dtype} ({error})"


def _write(module, name, target, value, assign):
    # at once, as torch's; inside load_state_dict, noting how to put the old value back
    if not assign:
        if _loading.undo is not None:                 # the old values copied only there
            _on_failure(_copy_into, target, target._array.copy())
        _copy_into(target, value)
        return
    if name in module._parameters:                    # torch's: a Parameter stays itself
        if isinstance(value, Parameter):
            _on_failure(value.requires_grad_, value.requires_grad)
            value.requires_grad_(target.requires_grad)
        else:
            value = Parameter(value, requires_grad=target.requires_grad)
    _on_failure(setattr, module, name, target)
    setattr(module, name, value)


def _copy_into(target, array):
    target._array[...] = array
    target._bump_version()


def _set_extra_state(module, state):
    if _loading.undo is not None and \
            type(module).get_extra_state is not ModuleState.get_extra_state:
        _on_failure(module.set_extra_state, module.get_extra_state())
    module.set_extra_state(state)


def _quoted(keys):
    return ", ".join(f'"{key}"' for key in keys)


def _on_failure(put_back, *args):
    # inside load_state_dict: how to undo one write if the load fails
    if _loading.undo is not None:
        _loading.undo.append(functools.partial(put_back, *args))
