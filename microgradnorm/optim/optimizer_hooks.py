"""The hooks of ``torch.optim.Optimizer``: before and after ``step``, around ``state_dict``
and ``load_state_dict``. ``OptimizerHooks`` is the optimizers' base: every class that
defines ``step``, ``state_dict`` or ``load_state_dict`` gets them wrapped, so a user's
subclass runs its hooks too, once per call (a ``super()`` call inside runs none again)."""

import functools
from collections import OrderedDict

from ..autograd import RemovableHandle

__all__ = ["OptimizerHooks", "register_optimizer_step_post_hook",
           "register_optimizer_step_pre_hook"]

# the hooks of every optimizer's step (torch's ``optimizer.register_optimizer_step_*_hook``):
# the global pre-hooks run before an optimizer's own, the global post-hooks after
_GLOBAL_PRE, _GLOBAL_POST = OrderedDict(), OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` before the ``step`` of every optimizer,
    ahead of each optimizer's own pre-hooks; like theirs, it may return ``(new_args,
    new_kwargs)`` for the step. Returns a handle whose ``remove()`` unregisters it.

    Example:
        >>> handle = register_optimizer_step_pre_hook(lambda opt, args, kwargs: None)
        >>> handle.remove()
    """
    return _register_global(_GLOBAL_PRE, hook)


def register_optimizer_step_post_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` after the ``step`` of every optimizer,
    after each optimizer's own post-hooks. Returns a handle whose ``remove()`` unregisters
    it.

    Example:
        >>> handle = register_optimizer_step_post_hook(lambda opt, args, kwargs: None)
        >>> handle.remove()
    """
    return _register_global(_GLOBAL_POST, hook)


def _register_global(table, hook):
    if not callable(hook):
        raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle

_PARAM_IDS = "_param_ids"         # in a pickled optimizer's state: id(param), group order
_TABLES = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
           "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
           "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks")


class OptimizerHooks:
    """``register_step_pre_hook``, ``register_step_post_hook``,
    ``register_state_dict_pre_hook``, ``register_state_dict_post_hook``,
    ``register_load_state_dict_pre_hook`` and ``register_load_state_dict_post_hook``, with
    torch's signatures, order (``prepend``) and returned handles; a copy or a pickle of the
    optimizer has none, as torch's.

    Example:
        >>> opt.register_step_post_hook(lambda opt, args, kwargs: print("stepped"))
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name, wrap in (("step", _hooked_step), ("state_dict", _hooked_state_dict),
                           ("load_state_dict", _hooked_load_state_dict)):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "hooked", False):
                wrapped = functools.wraps(method)(wrap(method))
                wrapped.hooked = True
                setattr(cls, name, wrapped)

    def __getstate__(self):
        # a copy or a pickle carries no hooks, as torch's (whose state is its groups, state
        # and defaults): a hook is often a closure, which would not pickle. The state is
        # keyed by id(param): the ids in group order let an unpickled copy re-key it
        state = {k: v for k, v in self.__dict__.items() if k not in _TABLES}
        if "param_groups" in state:
            state[_PARAM_IDS] = [id(p) for g in self.param_groups for p in g["params"]]
        return state

    def __setstate__(self, state):
        state = dict(state)
        ids = state.pop(_PARAM_IDS, None)
        self.__dict__.update(state)
        if ids is not None and "_state" in state:   # the ids the state was keyed by, then
            new = {old: id(p) for old, p in zip(ids, (p for g in self.param_groups
                                                       for p in g["params"]))}
            self.state = {new.get(key, key): entries for key, entries in self.state.items()}

    def _hooks(self, table):
        # a table made on first use: a subclass need not call the base __init__ first
        hooks = self.__dict__.get(table)
        if hooks is None:
            hooks = self.__dict__[table] = OrderedDict()
        return hooks

    def _hooks_to_run(self, table):
        # the table's hooks as a list (one may remove itself while they run); none made
        hooks = self.__dict__.get(table)
        return list(hooks.values()) if hooks else ()

    def _register(self, table, hook, prepend=False):
        if not callable(hook):
            raise TypeError(f"{type(self).__name__}: a hook must be callable, got "
                            f"{type(hook).__name__}")
        hooks = self._hooks(table)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` before each ``step`` (``args`` starts with the
        optimizer, as torch's); it may return ``(new_args, new_kwargs)`` for the step."""
        return self._register("_optimizer_step_pre_hooks", hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        return self._register("_optimizer_step_post_hooks", hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` before ``state_dict()`` builds its dict."""
        return self._register("_optimizer_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` after; a dict it returns is the result."""
        return self._register("_optimizer_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` before a load (of a shallow copy); a dict it
        returns is loaded instead."""
        return self._register("_optimizer_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` after a load."""
        return self._register("_optimizer_load_state_dict_post_hooks", hook, prepend)


# the calls running now, as (id(optimizer), method name): kept out of the instance, so a
# copy or a pickle of the optimizer made inside a hook runs its own hooks
_RUNNING = set()


def _outermost(method, around):
    # ``around(self, call, *args, **kwargs)`` for the outermost call only: a subclass's
    # method calling super()'s runs the hooks once
    name = method.__name__

    def wrapper(self, *args, **kwargs):
        key = (id(self), name)
        if key in _RUNNING:
            return method(self, *args, **kwargs)
        _RUNNING.add(key)
        try:
            return around(self, lambda *a, **k: method(self, *a, **k), *args, **kwargs)
        finally:
            _RUNNING.discard(key)
    return wrapper


def _hooked_step(method):
    def around(self, call, *args, **kwargs):
        # torch's hooks see the call's arguments with the optimizer first, and a pre-hook's
        # new arguments hold it too
        self._opt_called = True                  # what a schedule's first step checks
        args = (self, *args)
        for hook in [*_GLOBAL_PRE.values(), *self._hooks_to_run("_optimizer_step_pre_hooks")]:
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
                args, kwargs = result
        out = method(*args, **kwargs)
        for hook in [*self._hooks_to_run("_optimizer_step_post_hooks"), *_GLOBAL_POST.values()]:
            hook(self, args, kwargs)
        return out
    return _outermost(method, around)


def _hooked_state_dict(method):
    def around(self, call):
        for hook in self._hooks_to_run("_optimizer_state_dict_pre_hooks"):
            hook(self)
        state_dict = call()
        for hook in self._hooks_to_run("_optimizer_state_dict_post_hooks"):
            result = hook(self, state_dict)
            state_dict = state_dict if result is None else result
        return state_dict
    return _outermost(method, around)


def _hooked_load_state_dict(method):
    def around(self, call, state_dict):
        if isinstance(state_dict, dict):
            state_dict = dict(state_dict)        # a shallow copy for the hooks, as torch's
        for hook in self._hooks_to_run("_optimizer_load_state_dict_pre_hooks"):
            result = hook(self, state_dict)
            state_dict = state_dict if result is None else result
        call(state_dict)
        for hook in self._hooks_to_run("_optimizer_load_state_dict_post_hooks"):
            hook(self)
    return _outermost(method, around)
