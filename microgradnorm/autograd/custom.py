"""PyTorch's kind of custom op, ``mg.autograd.Function`` (``torch.autograd.Function``):
forward and backward written with Tensors, as PyTorch users write them. Each subclass gets
a node class of the engine's own kind (``function.Function``, on arrays) that runs the
user's methods between Tensors and arrays, so the engine, the visualizer and graph capture
see one node per call, named after the user's class.

What PyTorch does and this follows: forward and backward run with grad disabled; the
inputs that are not Tensors reach forward as they are; ``ctx.needs_input_grad`` has one
bool per forward argument; ``ctx.save_for_backward`` keeps Tensors that
``ctx.saved_tensors`` returns (an in-place change of one before backward raises);
backward returns one gradient (or None) per forward argument, extra trailing Nones
allowed; outputs marked ``ctx.mark_non_differentiable`` (and integer outputs) do not
require grad, and backward receives zeros for them; the ``setup_context`` form (forward
without ctx) works; ctx is an object of its own (``FunctionCtx``) for any attribute.
Under ``create_graph=True`` (double backward) backward runs as torch runs it: with grad
enabled, on output gradients with history, ``ctx.saved_tensors`` giving the saved inputs
and outputs with their history (``_Node.graph_backward``), so a backward written with
differentiable Tensor ops is differentiated again; a backward decorated
``once_differentiable`` gives its first-order value, and a backward through that raises.
``ctx.set_materialize_grads(False)`` passes None for an output no gradient reached; an
input marked ``ctx.mark_dirty`` and returned is the caller's Tensor itself, now this node's
output; what forward returns that is not a Tensor comes back as it is (its gradient in
backward is None). What differs (docs/pytorch.md): the ctx is dropped after backward.
"""

import contextlib
import inspect
import threading
import warnings

from . import forward_ad
from .double import OnceDifferentiable, first_order
from .function import Function as _EngineFunction, _next_seq
from .grad_mode import enable_grad, no_grad
from .graph import _state
from .history import _as_seen_by
from .inputs import _tensor
from .tape import paused


class FunctionCtx:
    """``ctx`` as a Function written with Tensors sees it (``torch.autograd.function.
    FunctionCtx``): a plain object for the user's attributes, beside the engine's node
    (``_node``, a ``Context``), which keeps the saved arrays and checks their versions.

    ``save_for_backward(*tensors)`` / ``saved_tensors``, ``needs_input_grad`` (one bool per
    forward argument), ``mark_non_differentiable(*outputs)``, ``mark_dirty(*inputs)``,
    ``set_materialize_grads(value)``; any other attribute set in forward is there in
    backward."""

    _graph_saved = None     # the saved tensors with history, while graph_backward runs

    def __init__(self, node, needs_input_grad):
        self._node = node
        self.needs_input_grad = needs_input_grad
        self.to_save = ()
        self.materialize_grads = True
        self._non_differentiable = self._dirty = ()

    def save_for_backward(self, *tensors):
        """Keep ``tensors`` (or None) for backward, where ``saved_tensors`` gives them."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _tensor.Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{i} is of type {type(t).__name__}")
        self.to_save = tensors

    @property
    def saved_tensors(self):
        """The saved tensors, as given: the caller's input where one was saved (an in-place
        change of one since forward raises here, as PyTorch's)."""
        if self._graph_saved is not None:
            return self._graph_saved
        node = self._node
        inputs = {id(t._array): t for t in node.inputs if t is not None}
        user_reads.depth = getattr(user_reads, "depth", 0) + 1
        try:                # a checkpoint's unpack tells the user's reads from the engine's
            saved = node.saved
        finally:
            user_reads.depth -= 1
        return tuple(_as_tensor(a, inputs) for a in saved)

    def mark_non_differentiable(self, *outputs):
        """These outputs of forward get no gradient (backward receives zeros for them)."""
        self._non_differentiable += outputs

    def mark_dirty(self, *inputs):
        """These inputs were written in place by forward: their version counters move, and
        one that forward returns is the caller's Tensor itself, as PyTorch's."""
        self._dirty += inputs

    def set_materialize_grads(self, value):
        """Whether an output no gradient reached gets zeros in backward (True, the default)
        or None (False), as PyTorch's."""
        self.materialize_grads = bool(value)


# per thread, how many ``ctx.saved_tensors`` reads are in progress: a non-reentrant
# checkpoint refuses the user's second read of one saved tensor in a backward, as torch's
user_reads = threading.local()


class _Node(_EngineFunction):
    """The engine's node of one user Function class (``user``); made per subclass. ``call``
    is (the arguments with None where a Tensor was, which ``arrays`` fill; kwargs; the
    Tensors' positions): no Tensor in the options, so a captured step replays it as one
    op. The node keeps the user's ctx in ``_user_ctx`` and the outputs that get no
    gradient in ``_non_differentiable``."""

    user = None
    node_suffix = "Backward"        # PyTorch names a custom Function's nodes SquareBackward
    # its backward reads the inputs only through ctx.saved_tensors, which checks versions:
    # an input written later (mark_dirty's, by this very node) is no reason to refuse
    graph_reads_inputs = False

    @staticmethod
    def forward(ctx, *arrays, call):
        args, kwargs, positions = call
        Tensor, user = _tensor.Tensor, ctx.function.user
        args = list(args)
        for i, array, t in zip(positions, arrays, ctx.inputs):
            args[i] = Tensor._from_op(array, None)          # the array apply was given
            args[i]._requires_grad = t is not None and t._requires_grad
            if isinstance(t, Tensor):   # a write in forward moves the caller's counter
                args[i]._version_box = t._version_box
        needs = dict(zip(positions, ctx.needs_input_grad))
        own = ctx._user_ctx = FunctionCtx(ctx, tuple(needs.get(i, False)
                                                     for i in range(len(args))))
        ctx._positions = positions
        with no_grad(), paused():               # the user's ops: not nodes, not on a tape
            if user._setup_form():
                output = user.forward(*args, **kwargs)
                user.setup_context(own, tuple(args), output)
            else:
                output = user.forward(own, *args, **kwargs)
        several = isinstance(output, tuple)     # (a list is one output, as torch's)
        outputs = tuple(output) if several else (output,)
        # what is not a Tensor is returned as it is, as torch's: the node's outputs are the
        # Tensors; apply puts the rest back where forward had them
        _returned.form = (type(output) if several else None, outputs, own._dirty)
        ctx._tensor_at = None           # (which outputs of forward are Tensors, if not all)
        if not all(isinstance(t, Tensor) for t in outputs):
            ctx._tensor_at = tuple(isinstance(t, Tensor) for t in outputs)
            outputs = tuple(t for t in outputs if isinstance(t, Tensor))
            several = True
        if not own.materialize_grads:   # None for a missing gradient: the hooks' path keeps it
            ctx._keep_missing = True
            _state(ctx)
        marked = {id(t) for t in own._non_differentiable}
        ctx._non_differentiable = tuple(i for i, t in enumerate(outputs) if id(t) in marked)
        written = {id(t._array) for t in own._dirty}
        for t in ctx.inputs:                    # the caller's tensors count the writes
            if t is not None and id(t._array) in written:
                if t.grad_fn is None and t._requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad has been used in "
                                       "an in-place operation.")
                t._bump_version()
        ctx.save_for_backward(*[t._array if isinstance(t, Tensor) else t
                                for t in own.to_save])
        if own.to_save:         # which saved tensors are outputs: graph_backward's history
            own._saved_outputs = {id(t): i for i, t in enumerate(outputs)}
        arrays_out = tuple(t._array for t in outputs)
        return arrays_out if several else arrays_out[0]

    @staticmethod
    def backward(ctx, *grads):
        Tensor, user, own = _tensor.Tensor, ctx.function.user, ctx._user_ctx
        ctx.backward_seq = _next_seq()      # a profile nests the ops it runs in its event
        grads = _with_others(ctx, [None if g is None else Tensor._from_op(g, None)
                                   for g in grads])
        with no_grad():
            result = user.backward(own, *grads)
        positions = ctx._positions
        result = _checked(user, own, positions, result, ctx.inputs)
        return tuple(None if result[i] is None else result[i]._array for i in positions)

    @staticmethod
    def graph_backward(ctx, *grads):
        """The user's backward under ``create_graph=True``, as torch runs it: grad enabled,
        the output gradients with history, ``ctx.saved_tensors`` the saved inputs (the
        caller's Tensors) and outputs (this node's) with their history; the gradients it
        returns, recorded, are differentiated again. A backward marked
        ``once_differentiable`` gives its first-order value as a ``DelayedError`` node."""
        user, own = ctx.function.user, ctx._user_ctx
        if getattr(user.backward, "_once_differentiable", False):
            return _delayed_error(ctx, grads)
        own._graph_saved = _saved_with_history(ctx, own)
        try:
            with enable_grad():
                result = user.backward(own, *_with_others(ctx, grads))
        finally:
            own._graph_saved = None
        result = _checked(user, own, ctx._positions, result, ctx.inputs)
        return tuple(result[i] for i in ctx._positions)


def _with_others(node, grads):
    # one gradient per output of forward: None for each that was not a Tensor, as torch's
    tensor_at = node._tensor_at
    if tensor_at is None:
        return grads
    grads = iter(grads)
    return [next(grads) if is_tensor else None for is_tensor in tensor_at]


class _Returned(threading.local):
    """What this thread's last forward returned, from ``_Node.forward`` to ``apply``, which
    takes it at once: (its container type or None, its outputs, its ``mark_dirty`` inputs)."""

    form = None


_returned = _Returned()


def _written_inputs(node, outputs, dirty, given):
    """The outputs of a forward that wrote inputs in place and marked them dirty, as torch
    returns them: such an output is the caller's input Tensor itself, now the output of
    ``node`` (a new history entry keeps its earlier node for the nodes that read it before,
    as a built-in in-place op's); a view of another tensor stays a new Tensor."""
    written = {id(t._array) for t in dirty}
    inputs = {id(t._array): t for t in given if id(t._array) in written}
    result = []
    for out in outputs:
        t = inputs.get(id(out._array))
        if t is None or t._view_version is not None:
            result.append(out)
            continue
        if node is not None:
            before = _tensor.Tensor._from_op(t._array, t.grad_fn, t._output_index)
            before._requires_grad, before.name = t._requires_grad, t.name
            before._version_box = [0]         # its own counter: the write is not its change
            t._history = (t._history or ()) + ((node.seq, before),)
            t.grad_fn, t._output_index = out.grad_fn, out._output_index
            t._requires_grad = out._requires_grad
        result.append(t)
    return tuple(result)


def _checked(user, own, positions, result, inputs):
    """What ``user.backward`` returned as a tuple, one gradient (or None) per forward
    argument, checked as torch checks it (``inputs``: the node's, one per Tensor argument,
    None where it needs no gradient)."""
    Tensor = _tensor.Tensor
    result = result if isinstance(result, tuple) else (result,)
    expected = len(own.needs_input_grad)
    if len(result) < expected or any(g is not None for g in result[expected:]):
        raise RuntimeError(f"function {user.__name__}Backward returned an incorrect number "
                           f"of gradients (expected {expected}, got {len(result)})")
    for i, g in enumerate(result[:expected]):
        if g is not None and i not in positions:
            raise RuntimeError(f"function {user.__name__}Backward returned a gradient "
                               f"different than None at position {i + 1}, but the "
                               "corresponding forward input was not a Tensor")
        if g is not None and not isinstance(g, Tensor):
            raise RuntimeError(f"function {user.__name__}Backward returned "
                               f"{type(g).__name__} as the gradient of argument {i}; "
                               "expected a Tensor or None")
    for i, t in zip(positions, inputs):     # torch's engine: no complex gradient of a real
        g = result[i] if i < len(result) else None
        if g is not None and t is not None and g.is_complex() and not t.is_complex():
            raise RuntimeError(f"function {user.__name__}Backward returned a complex "
                               f"gradient ({g.dtype}) for argument {i}, a real tensor "
                               f"({t.dtype})")
    return result


def _saved_with_history(node, own):
    """``saved_tensors`` for graph_backward: a saved input is the caller's Tensor, a saved
    differentiable output this node's output (a new Tensor object of it), anything else a
    constant (torch: an intermediate must be returned to be differentiated)."""
    Tensor, saved = _tensor.Tensor, node.saved             # (checks the versions)
    inputs = {id(t._array): _as_seen_by(t, node) for t in node.inputs if t is not None}
    outputs = getattr(own, "_saved_outputs", {})
    result = []
    for kept, array in zip(own.to_save, saved):
        i = outputs.get(id(kept))
        if array is None or id(array) in inputs:
            result.append(None if array is None else inputs[id(array)])
        elif i is not None and i not in node._non_differentiable and \
                array.dtype.kind in "fc":
            result.append(Tensor._from_op(array, node, i))
        else:
            result.append(Tensor._from_op(array, None))
    return tuple(result)


class DelayedError(OnceDifferentiable):
    """A ``once_differentiable`` backward's gradients under ``create_graph=True``: their
    values, and torch's error for a backward through them."""

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


def _delayed_error(node, grads):
    # double.first_order, with torch's error for the backward through its result: a node
    # over the output gradients alone, so none of them requiring grad, no history, as torch's
    return tuple(first_order(node, grads, DelayedError, inputs=()))


def _as_tensor(array, inputs):
    """A saved array as a Tensor: the caller's input where it is one's data (as PyTorch
    gives back the input itself), else a Tensor of it without history."""
    if array is None:
        return None
    tensor = inputs.get(id(array))
    return tensor if tensor is not None else _tensor.Tensor._from_op(array, None)


class Function:
    """A differentiable op written with Tensors, PyTorch's ``torch.autograd.Function``:
    subclass it with static methods and call ``apply``.

        forward(ctx, *args, **kwargs) -> Tensor or tuple (non-Tensors returned as they are)
        backward(ctx, *grad_outputs)  -> one gradient or None per forward argument

    or ``forward(*args)`` without ctx and ``setup_context(ctx, inputs, output)``. ``ctx``
    is a ``FunctionCtx``: ``ctx.save_for_backward(*tensors)`` / ``ctx.saved_tensors``,
    ``ctx.needs_input_grad``, ``ctx.mark_non_differentiable(*outputs)``; any other
    attribute set in forward is there in backward. (``mg.Function`` is the engine's own
    base, on arrays, that the built-in ops subclass.)

    Example:
        >>> class Square(mg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         x, = ctx.saved_tensors
        ...         return 2 * x * grad
        >>> x = mg.tensor([3.0], requires_grad=True)
        >>> Square.apply(x).backward(); x.grad
        tensor([6.])
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "vjp" in vars(cls) and "backward" not in vars(cls):
            cls.backward = cls.vjp                   # PyTorch's other name for it
        cls._node = type(cls.__name__, (_Node,), {"user": cls, "__module__": cls.__module__,
                                                  "__qualname__": cls.__qualname__})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """The op on Tensors, with grad disabled."""
        raise NotImplementedError("a Function subclass must define forward")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: what a ctx-free ``forward(*args)`` keeps, given its inputs and output."""
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grad_outputs):
        """The gradient of each forward argument (None where not needed)."""
        raise NotImplementedError("a Function subclass must define backward")

    vjp = backward

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class "
                      "itself.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method: call Function.apply(...), not Function()(...).")

    @classmethod
    def _setup_form(cls):
        return cls.setup_context is not Function.setup_context

    @classmethod
    def _check_transforms(cls):
        docs = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
        if not cls._setup_form():
            raise RuntimeError("In order to use an autograd.Function with functorch transforms "
                               "(vmap, grad, jvp, jacrev, ...), it must override the "
                               f"setup_context staticmethod. {docs}")
        if "vmap" in _transforms.stack:
            rule, own = getattr(cls, "generate_vmap_rule", False), hasattr(cls, "vmap")
            if rule and own:
                raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both "
                                   "generate_vmap_rule=True and an overridden vmap "
                                   "staticmethod. Please set generate_vmap_rule=False or "
                                   "delete the overridden vmap staticmethod to avoid "
                                   f"ambiguity. {docs}")
            if not rule and not own:
                raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not "
                                   "have vmap support. Please override and implement the vmap "
                                   f"staticmethod or set generate_vmap_rule=True. {docs}")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on ``args``; the outputs get one node when an input requires grad."""
        if cls is Function:
            raise RuntimeError("apply() on Function itself: subclass it with forward and "
                               "backward")
        if _transforms.stack:       # under a torch.func transform (func_transforms.py)
            cls._check_transforms()
        if cls._setup_form():
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        elif kwargs:            # as torch's: an argument named is an argument (ctx aside)
            bound = inspect.signature(cls.forward).bind(None, *args, **kwargs)
            args, kwargs = bound.args[1:], bound.kwargs
        Tensor = _tensor.Tensor
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        others = tuple(None if i in positions else a for i, a in enumerate(args))
        try:
            outputs = cls._node.apply(*[args[i] for i in positions],
                                      call=(others, kwargs, positions))
        finally:                # taken at once: a failed call keeps nothing of forward's
            form, _returned.form = _returned.form, None
        kind, returned, dirty = form
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        node = outputs[0].grad_fn if outputs else None
        if node is not None:
            for i, t in enumerate(outputs):       # not differentiable: integer or marked
                if i in node._non_differentiable or not (
                        t.is_floating_point() or t.is_complex()):
                    t.grad_fn, t._requires_grad = None, False
            if hasattr(cls, "jvp") and len(outputs) == len(returned):     # forward-mode
                outputs = forward_ad.custom_jvp(cls, node._user_ctx, args, outputs)
        if dirty:                               # mark_dirty: the inputs themselves
            outputs = _written_inputs(node, outputs, dirty, [args[i] for i in positions])
        if len(outputs) != len(returned):       # forward's non-Tensors, where it had them
            outputs = iter(outputs)
            outputs = [next(outputs) if isinstance(t, Tensor) else t for t in returned]
        return outputs[0] if kind is None else list(outputs) if kind is list else tuple(outputs)



class _Transforms(threading.local):
    """The ``torch.func`` transforms (``"grad"``, ``"vmap"``) whose function this thread is
    running, innermost last: ``Function.apply`` refuses what torch's transforms refuse."""

    def __init__(self):
        self.stack = []


_transforms = _Transforms()


@contextlib.contextmanager
def transform_scope(kind):
    """Run a block as the function of a ``torch.func`` transform of ``kind`` ("grad" for
    grad, vjp and jacrev; "vmap"): a custom ``Function`` applied inside must have a
    ``setup_context`` (and, under vmap, ``generate_vmap_rule=True`` or a ``vmap``
    staticmethod, not both), as torch's.

    Example:
        >>> with transform_scope("vmap"):
        ...     out = func(x_slice)
    """
    _transforms.stack.append(kind)
    try:
        yield
    finally:
        _transforms.stack.pop()


class _VariableMeta(type):
    # torch's: every Tensor is an instance of Variable
    def __instancecheck__(cls, other):
        return isinstance(other, _tensor.Tensor)


class Variable(metaclass=_VariableMeta):
    """PyTorch's legacy ``Variable(tensor, requires_grad=False)``: a Tensor without history
    sharing ``data``'s memory (no argument: an empty one), and the class every Tensor is an
    instance of. ``volatile=True``, long removed from torch, warns and changes nothing (with
    ``requires_grad=True``: torch's ValueError).

    Example:
        >>> v = mg.autograd.Variable(y, requires_grad=True)     # a leaf on y's memory
        >>> isinstance(v, mg.autograd.Variable), type(v) is mg.Tensor
        (True, True)
    """

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        Tensor = _tensor.Tensor
        if data is None:
            data = Tensor([])             # torch's: an empty tensor of the default dtype
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same "
                                 "time!")
        return data.detach().requires_grad_(requires_grad)


def variable(*args, **kwargs):
    """``torch.autograd.variable``, a function long deprecated: it raises a RuntimeError, as
    torch's; ``variable.Variable`` is ``Variable``."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                       "instead")


variable.Variable = Variable
