"""A Module's hooks, as torch's: forward pre-hooks and forward hooks (``with_kwargs``,
``prepend``, ``always_call``), full backward hooks and backward pre-hooks, and the deprecated
``register_backward_hook``; torch's global forward hooks, which every module runs before its
own. ``Module`` inherits them from ``ModuleHooks``; a module without hooks (and no global
one) never reaches this file (``Module._run`` calls ``forward`` itself).

The full backward hooks are torch's ``BackwardHook``: a call's Tensor inputs, and then its
outputs, pass through one identity node each (``BackwardHookFunction``). The outputs' node
sees dL/d(outputs) first and runs the pre-hooks; the inputs' node sees dL/d(inputs) once
everything inside the module has sent its gradient, and runs the hooks with both. Each
call keeps its own state, so a module called twice has its hooks run twice, each with its
own gradients. Under ``create_graph=True`` the hooks get the gradients with their history
and what they return is differentiated again, as torch's."""

import warnings

import numpy as np

from ..autograd import RemovableHandle, is_grad_enabled, register_hook
from ..autograd.function import Function
from ..tensor import Tensor

# the tables Module.__init__ gives each module, torch's names: id -> hook, or id -> True
TABLES = ("_forward_pre_hooks",               # hook(module, args)
          "_forward_hooks",                   # hook(module, args, output)
          "_backward_hooks",                  # hook(module, grad_input, grad_output)
          "_backward_pre_hooks",              # hook(module, grad_output)
          "_forward_pre_hooks_with_kwargs",   # True for the hooks given kwargs
          "_forward_hooks_with_kwargs",
          "_forward_hooks_always_called")     # True: run also when forward raised

# torch's global forward hooks (``nn.modules.module.register_module_forward_pre_hook`` and
# ``register_module_forward_hook``): every module's call runs them, before its own
GLOBAL = {name: {} for name in TABLES if "forward" in name}


def register_module_forward_pre_hook(hook):
    """``hook(module, args)`` before every module's forward, before the module's own
    pre-hooks (torch's global hook); a non-None result replaces the arguments."""
    return _add_global("_forward_pre_hooks", hook, "register_module_forward_pre_hook", {})


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """``hook(module, args[, kwargs], output)`` after every module's forward, before the
    module's own hooks (torch's global hook); a non-None result replaces the output."""
    return _add_global("_forward_hooks", hook, "register_module_forward_hook",
                       {"_forward_hooks_with_kwargs": with_kwargs,
                        "_forward_hooks_always_called": always_call})


def _add_global(table, hook, where, flags):
    if not callable(hook):
        raise TypeError(f"{where}: hook must be callable, got {type(hook).__name__}")
    extra = [GLOBAL[name] for name, on in flags.items() if on]
    handle = RemovableHandle(GLOBAL[table], extra_dict=extra)
    GLOBAL[table][handle.id] = hook
    for flag_table in extra:
        flag_table[handle.id] = True
    return handle


# torch's global registration hooks: hook(module, name, value) as a parameter, sub-module
# or buffer is registered; a non-None result is registered in its place
REGISTRATION = {"parameter": {}, "module": {}, "buffer": {}}


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param)`` whenever any module registers a parameter (assigned
    or ``register_parameter``), torch's global hook; a non-None result is registered in
    its place.

    Args:
        hook: a callable.

    Example:
        >>> handle = register_module_parameter_registration_hook(lambda m, n, p: None)
        >>> handle.remove()
    """
    return _add_registration("parameter", hook)


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule)`` whenever any module registers a sub-module (as
    ``register_module_parameter_registration_hook`` does for parameters).

    Args:
        hook: a callable.

    Example:
        >>> register_module_module_registration_hook(lambda m, n, sub: None).remove()
    """
    return _add_registration("module", hook)


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, buffer)`` whenever any module registers or assigns a buffer
    (as ``register_module_parameter_registration_hook`` does for parameters).

    Args:
        hook: a callable.

    Example:
        >>> register_module_buffer_registration_hook(lambda m, n, b: None).remove()
    """
    return _add_registration("buffer", hook)


def _add_registration(kind, hook):
    if not callable(hook):
        raise TypeError(f"register_module_{kind}_registration_hook: hook must be callable, "
                        f"got {type(hook).__name__}")
    handle = RemovableHandle(REGISTRATION[kind])
    REGISTRATION[kind][handle.id] = hook
    return handle


def registered(module, kind, name, value):
    """``value`` after the global registration hooks of ``kind`` (called only where any)."""
    for hook in list(REGISTRATION[kind].values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def _hooks(module, table):
    # the global hooks, then the module's own (ids are unique across both)
    return [*GLOBAL[table].items(), *getattr(module, table).items()] if GLOBAL[table] \
        else list(getattr(module, table).items())


def _flagged(module, table, hook_id):
    return hook_id in getattr(module, table) or hook_id in GLOBAL[table]


class ModuleHooks:
    """The hook methods of ``Module`` (torch's names, arguments and order of calls)."""

    _is_full_backward_hook = None         # True: full hooks, False: the deprecated kind

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Call ``hook(module, args)`` before each ``forward``; a non-None result replaces
        ``args`` (a non-tuple becomes a 1-tuple). With ``with_kwargs``:
        ``hook(module, args, kwargs)``, returning None or ``(args, kwargs)``.

        Args:
            hook: the callable.
            prepend: run before the hooks already registered.
            with_kwargs: pass the keyword arguments too.

        Returns a handle with ``remove()``.

        Example:
            >>> h = model.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        """
        flags = {"_forward_pre_hooks_with_kwargs": with_kwargs}
        return _add(self, "_forward_pre_hooks", hook, "register_forward_pre_hook", prepend,
                    flags)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """Call ``hook(module, args, output)`` after each ``forward``; a non-None result
        replaces the output.

        Args:
            hook: the callable.
            prepend: run before the hooks already registered.
            with_kwargs: ``hook(module, args, kwargs, output)``.
            always_call: run also when ``forward`` (or a hook) raised, with the output so
                far (None); an exception of the hook itself is then a warning.

        Returns a handle with ``remove()``.

        Example:
            >>> h = model.fc.register_forward_hook(lambda m, args, out: print(out.shape))
        """
        flags = {"_forward_hooks_with_kwargs": with_kwargs,
                 "_forward_hooks_always_called": always_call}
        return _add(self, "_forward_hooks", hook, "register_forward_hook", prepend, flags)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs are
        computed; a non-None result (one entry per output) replaces ``grad_output``.

        ``grad_output`` holds one Tensor per output (None for one that is not a Tensor or
        got no gradient). Returns a handle with ``remove()``; a call made before the
        removal still runs the hook.

        Example:
            >>> h = layer.register_full_backward_pre_hook(lambda m, g: (g[0].clamp(-1, 1),))
        """
        return _add(self, "_backward_pre_hooks", hook, "register_full_backward_pre_hook",
                    prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        r"""Call ``hook(module, grad_input, grad_output)`` once the gradients of the module's
        positional inputs are computed; a non-None result (one entry per input) replaces
        ``grad_input``.

        .. math:: \text{grad\_input}_i = \partial L / \partial \text{args}_i, \quad
                  \text{grad\_output}_j = \partial L / \partial \text{output}_j

        ``grad_input`` has one entry per positional argument: None for an argument that is
        not a Tensor; zeros for a Tensor that does not require grad (torch's); None for
        all when no input requires grad (the hook then runs with the outputs' gradients
        and warns, as torch's). Keyword arguments are not seen. The module's inputs and
        outputs become views (an in-place op on them is refused, as torch's).

        Returns a handle with ``remove()``. RuntimeError on a module that has a hook of
        ``register_backward_hook``.

        Example:
            >>> h = model.fc.register_full_backward_hook(
            ...     lambda m, gin, gout: print(gin[0].shape, gout[0].shape))
        """
        _choose_kind(self, full=True)
        return _add(self, "_backward_hooks", hook, "register_full_backward_hook", prepend)

    def register_backward_hook(self, hook):
        """Deprecated in torch: ``hook(module, grad_input, grad_output)`` on the node that
        made the module's (first) output, with the gradients of that node's inputs and
        outputs; a non-None result replaces ``grad_input``. The node is this library's, so
        ``grad_input`` can differ from torch's (``nn.Linear``: x, weight, bias here; bias,
        x, weightᵀ there); the calls warn as torch's do (FutureWarning). Use
        ``register_full_backward_hook``.

        Returns a handle with ``remove()``. RuntimeError on a module with full hooks.
        """
        _choose_kind(self, full=False)
        return _add(self, "_backward_hooks", hook, "register_backward_hook", False)

    def _call_with_hooks(self, args, kwargs):
        # torch's Module._call_impl: pre-hooks, the inputs' identity node, forward, the
        # hooks, the outputs' identity node; the always_call hooks also after an error
        state = {"result": None, "called": set(), "args": args, "kwargs": kwargs}
        try:
            return _run_hooked(self, state)
        except Exception:
            _run_always_called(self, state)
            raise


def _add(module, table_name, hook, where, prepend=False, flags=None):
    # every register_*hook of Module (module_state.py's too): ``where`` names the method;
    # ``flags``: {flag table's name: whether this hook is in it}
    if not callable(hook):
        raise TypeError(f"{where}: hook must be callable, got {type(hook).__name__}")
    table = getattr(module, table_name)
    extra = [getattr(module, name) for name, on in (flags or {}).items() if on]
    handle = RemovableHandle(table, extra_dict=extra)
    table[handle.id] = hook
    for flag_table in extra:
        flag_table[handle.id] = True
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


def _choose_kind(module, full):
    if module._is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                           "on a single Module. Please use only one of them.")
    object.__setattr__(module, "_is_full_backward_hook", full)


def _run_hooked(module, state):
    args, kwargs = state["args"], state["kwargs"]
    full = module._is_full_backward_hook
    hooks = list(module._backward_hooks.values())
    pre_hooks = list(module._backward_pre_hooks.values())
    for hook_id, hook in _hooks(module, "_forward_pre_hooks"):
        if _flagged(module, "_forward_pre_hooks_with_kwargs", hook_id):
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        state["args"], state["kwargs"] = args, kwargs
    call = None
    if (hooks and full) or pre_hooks:
        call = BackwardHook(module, hooks if full else [], pre_hooks)
        args = state["args"] = call.setup_inputs(args)
    output = state["result"] = module.forward(*args, **kwargs)
    output = _run_forward_hooks(module, state)
    if call is not None:
        if not isinstance(output, (Tensor, tuple)):
            warnings.warn(f"For backward hooks to be called, module output should be a "
                          f"Tensor or a tuple of Tensors but received {type(output)}",
                          stacklevel=6)           # the line that called the module
        output = state["result"] = call.setup_outputs(output)
    if hooks and full is False:
        _attach_legacy(module, hooks, args, output)
    return output


def _run_forward_hooks(module, state):
    for hook_id, hook in _hooks(module, "_forward_hooks"):
        if _flagged(module, "_forward_hooks_always_called", hook_id):
            state["called"].add(hook_id)
        _call_forward_hook(module, state, hook_id, hook)
    return state["result"]


def _run_always_called(module, state):
    # after an exception: the always_call hooks not yet run, each error only a warning
    for hook_id, hook in _hooks(module, "_forward_hooks"):
        if not _flagged(module, "_forward_hooks_always_called", hook_id) \
                or hook_id in state["called"]:
            continue
        try:
            _call_forward_hook(module, state, hook_id, hook)
        except Exception as error:       # the forward's error is the one that propagates
            warnings.warn(f"module forward hook with ``always_call=True`` raised an "
                          f"exception that was silenced as another error was raised in "
                          f"forward: {error}", stacklevel=4)


def _call_forward_hook(module, state, hook_id, hook):
    # hook(module, args[, kwargs], output); a non-None result becomes the output
    if _flagged(module, "_forward_hooks_with_kwargs", hook_id):
        result = hook(module, state["args"], state["kwargs"], state["result"])
    else:
        result = hook(module, state["args"], state["result"])
    if result is not None:
        state["result"] = result


class BackwardHookFunction(Function):
    """The identity on a call's Tensors that require grad (its inputs, or its outputs),
    whose backward hands the gradients to the call's ``BackwardHook`` (torch's node of the
    same name). The outputs are views: they share the inputs' memory and version."""

    @staticmethod
    def forward(ctx, *arrays, call=None, side="inputs"):
        ctx.call, ctx.side = call, side
        return tuple(a.view() for a in arrays)

    @staticmethod
    def backward(ctx, *grads):
        return tuple(_as_array(g) for g in BackwardHookFunction.graph_backward(ctx, *grads))

    graph_reads_inputs = False       # the identity: it reads no input values

    @staticmethod
    def graph_backward(ctx, *grads):
        # under create_graph=True the hooks get the gradient Tensors, history and all, and
        # what they return is the gradient, as torch's
        if ctx.side == "outputs":
            return ctx.call.on_output_grads(grads)
        return ctx.call.on_input_grads(grads)


class BackwardHook:
    """One call's full backward hooks and pre-hooks (torch's ``BackwardHook``), the hooks
    taken at the call. ``positions``: each side's Tensor arguments by position, None where
    none required grad; ``wrapped``: those that went through the identity node."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None           # set by the outputs' node, used by the inputs'
        self.inputs, self.input_positions, self.input_wrapped = (), None, ()
        self.n_outputs, self.output_positions, self.output_wrapped = 0, None, ()
        self.received = None               # output position -> got a gradient

    def setup_inputs(self, args):
        """``args`` with their Tensors that require grad through the inputs' node."""
        self.inputs = args
        args, self.input_positions, self.input_wrapped = _through_node(args, self, "inputs")
        return args

    def setup_outputs(self, output):
        """``output`` (a Tensor or a tuple) with its Tensors through the outputs' node."""
        single = not isinstance(output, tuple)
        values = (output,) if single else output
        self.n_outputs = len(values)
        values, self.output_positions, self.output_wrapped = \
            _through_node(values, self, "outputs")
        if len(self.output_wrapped) > 1:   # which outputs got a gradient: None for the others
            self.received = set()
            for position in self.output_wrapped:
                register_hook(values[position], _Mark(self.received, position))
        return values[0] if single else values

    def on_output_grads(self, grads):
        """The outputs' node's backward: the pre-hooks may replace ``grad_output``. Takes
        the gradients as arrays (or as Tensors with history, under ``create_graph=True``);
        returns Tensors."""
        grad_outputs = [None] * self.n_outputs
        for position, g in zip(self.output_wrapped, grads):
            if self.received is None or position in self.received:
                grad_outputs[position] = _as_tensor(g)
        grad_outputs = tuple(grad_outputs)
        for hook in self.pre_hooks:
            result = hook(self.module, grad_outputs)
            if result is None:
                continue
            if len(result) != len(grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(result)}, but expected "
                                   f"{len(grad_outputs)}")
            grad_outputs = tuple(result)
        self.grad_outputs = grad_outputs
        if self.received is not None:
            self.received.clear()          # a backward with retain_graph marks them again
        if self.input_positions is None:   # no input requires grad: the hooks run now
            self._run_without_inputs()
        return tuple(grad_outputs[p] for p in self.output_wrapped)

    def _run_without_inputs(self):
        warnings.warn("Full backward hook is firing when gradients are computed with "
                      "respect to module outputs since no inputs require gradients. See "
                      "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                      "#torch.nn.Module.register_full_backward_hook for more details.",
                      stacklevel=2)
        grad_inputs = (None,) * len(self.inputs)
        for hook in self.hooks:
            result = hook(self.module, grad_inputs, self.grad_outputs)
            if result is not None and not (isinstance(result, tuple)
                                           and all(g is None for g in result)):
                raise RuntimeError("Backward hook for Modules where no input requires "
                                   "gradient should always return None or None for all "
                                   "gradients.")
        self.grad_outputs = None

    def on_input_grads(self, grads):
        """The inputs' node's backward: the hooks may replace ``grad_input``. Takes and
        returns the gradients as ``on_output_grads`` does."""
        if self.grad_outputs is None:      # the gradient did not come through the outputs
            return grads
        grad_inputs = [None] * len(self.inputs)
        for position in self.input_positions:      # torch's zeros for the constant ones
            t = self.inputs[position]
            grad_inputs[position] = Tensor._from_op(t.xp.zeros(t.shape, t.dtype), None)
        for position, g in zip(self.input_wrapped, grads):
            grad_inputs[position] = _as_tensor(g)
        grad_inputs = tuple(grad_inputs)
        for hook in self.hooks:
            result = hook(self.module, grad_inputs, self.grad_outputs)
            if result is None:
                continue
            if len(result) != len(grad_inputs):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(result)}, but expected {len(grad_inputs)}")
            grad_inputs = tuple(result)
        self.grad_outputs = None
        return tuple(grad_inputs[p] for p in self.input_wrapped)


def _through_node(values, call, side):
    # (values with their Tensors that require grad replaced by the node's outputs, the
    # positions of every Tensor or None where none requires grad, the replaced positions)
    positions = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    wrapped = [i for i in positions if values[i].requires_grad]
    if not wrapped or not is_grad_enabled():
        return values, None, ()
    outputs = BackwardHookFunction.apply(*[values[i] for i in wrapped], call=call, side=side)
    values = list(values)
    for position, out in zip(wrapped, outputs):
        out._base = None        # views a custom node made: no write through them, as torch's
        values[position] = out
    return tuple(values), positions, tuple(wrapped)


class _Mark:
    # a tensor hook that notes that the output at ``position`` received a gradient
    def __init__(self, received, position):
        self.received, self.position = received, position

    def __call__(self, grad):
        self.received.add(self.position)


def _as_tensor(g):
    # an array gradient as a Tensor without history; a Tensor (create_graph) as it is
    if isinstance(g, Tensor):
        return g
    return Tensor._from_op(np.asarray(g) if isinstance(g, np.generic) else g, None)


def _as_array(g):
    return g._array if isinstance(g, Tensor) else g


# ----- the deprecated register_backward_hook: a hook on the last node ----------------------
def _attach_legacy(module, hooks, args, output):
    # torch's: the node of the first Tensor of the output runs the hooks after its backward
    value = output
    while not isinstance(value, Tensor):
        if isinstance(value, dict):
            value = next(v for v in value.values() if isinstance(v, Tensor))
        else:
            value = value[0]
    node = value.grad_fn
    if node is None:
        return
    function = node.function
    if not getattr(function, "_runs_module_hooks", False):
        node.function = _hooked_class(function)
        node.module_hooks = []
    node.module_hooks.extend((module, hook) for hook in hooks)
    _warn_legacy(args, output, node)


_hooked_classes = {}


def _hooked_class(function):
    # a subclass of the node's Function, of the same name, whose backward runs the hooks
    hooked = _hooked_classes.get(function)
    if hooked is None:
        def backward(ctx, *grads):
            grad_inputs = function.backward(ctx, *grads)
            single = type(grad_inputs) is not tuple
            grad_inputs = (grad_inputs,) if single else grad_inputs
            tensors = tuple(None if g is None else _as_tensor(g) for g in grad_inputs)
            grad_outputs = tuple(None if g is None else _as_tensor(g) for g in grads)
            for module, hook in ctx.module_hooks:
                result = hook(module, tensors, grad_outputs)
                if result is not None:
                    tensors = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            return tuple(None if g is None else _as_array(g) for g in tensors)

        hooked = type(function.__name__, (function,), {
            "backward": staticmethod(backward), "_runs_module_hooks": True,
            "__module__": function.__module__, "__qualname__": function.__qualname__})
        _hooked_classes[function] = hooked
    return hooked


def _warn_legacy(args, output, node):
    # torch's _maybe_warn_non_full_backward_hook: where the last node's gradients are not
    # the module's, the hook misses some of them
    full = " Please use register_full_backward_hook to get the documented behavior."

    def warn(what, missing, advice=full):
        warnings.warn(f"Using {what} is deprecated and will be removed in future versions. "
                      f"This hook will be missing some {missing}.{advice}", FutureWarning,
                      stacklevel=9)               # the line that called the module

    outputs = output if isinstance(output, tuple) else (output,)
    if not all(isinstance(o, Tensor) for o in outputs):
        return warn("non-full backward hooks on a Module that does not return a single "
                    "Tensor or a tuple of Tensors", "of the grad_output")
    if not all(isinstance(a, Tensor) for a in args):
        return warn("non-full backward hooks on a Module that does not take as input a "
                    "single Tensor or a tuple of Tensors", "of the grad_input")
    nodes = {o.grad_fn for o in outputs if o.grad_fn is not None}
    if not nodes or (len(nodes) == 1 and node not in nodes):
        return warn("a non-full backward hook when outputs are nested in python data "
                    "structure", "grad_output", "")
    if len(nodes) > 1:
        return warn("a non-full backward hook when outputs are generated by different "
                    "autograd Nodes", "grad_output")
    # torch's next_functions: a leaf's accumulator, None for a constant
    before = {None if t is None or not t.requires_grad else
              t.grad_fn if t.grad_fn is not None else id(t) for t in node.inputs}
    if {a.grad_fn for a in args if a.grad_fn is not None} != before:
        warn("a non-full backward hook when the forward contains multiple autograd Nodes",
             "grad_input")
