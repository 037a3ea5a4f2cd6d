"""The autograd core: ``Function`` records one graph node (a ``Context``) per call;
``backward`` sorts the nodes topologically and runs one reversed loop, as micrograd
(docs/architecture.md)."""

import contextlib
import functools
import inspect
import itertools
import threading

import numpy as np

from . import dtypes
from .backend import (allocator_setting, array_module, device_of, is_cupy_array,
                      keep_freed_memory_by_default, memory_owner)


class _ThreadState(threading.local):
    """Per-thread grad mode and scope stacks, as in PyTorch."""

    def __init__(self):
        self.grad_enabled = True
        self.module_stack = []          # module paths, innermost last (``module_scope``)
        self.group_stack = []           # (name, call number) of open ``op_group``s


_state = _ThreadState()


def is_grad_enabled():
    """Whether ops record the graph in this thread (True unless inside ``no_grad``)."""
    return _state.grad_enabled


class set_grad_enabled:
    """Turn graph recording on or off in this thread (``torch.set_grad_enabled``): called,
    from then on; as a context manager, until the block ends; as a decorator, in each call.

    Example:
        >>> with mg.set_grad_enabled(False):
        ...     y = x * 2                      # y.requires_grad is False
    """

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled: mode must be a bool, "
                            f"got {type(mode).__name__}")
        self.mode = mode
        self.previous = _state.grad_enabled
        _state.grad_enabled = mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.grad_enabled = self.previous
        return False

    def __call__(self, fn):
        # As a decorator the mode applies to each call, not from the decoration on.
        _state.grad_enabled = self.previous
        return _grad_mode_decorator(fn, lambda: set_grad_enabled(self.mode))


class _GradMode:
    """Grad mode ``MODE`` in this thread for a block or a decorated function; decorates with
    or without parentheses, as torch's (``@mg.no_grad()``, ``@mg.no_grad``)."""

    MODE = True

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        return self if fn is None else self(fn)       # bare ``@no_grad``: the wrapper

    def __enter__(self):
        self.previous = _state.grad_enabled
        _state.grad_enabled = self.MODE
        return self

    def __exit__(self, *exc):
        _state.grad_enabled = self.previous
        return False

    def __call__(self, fn):
        return _grad_mode_decorator(fn, type(self))


def _grad_mode_decorator(fn, make):
    # fn runs inside a fresh make() each call; a generator function inside one at each
    # resumption, with the caller's mode back between them (torch's _wrap_generator)
    if not callable(fn):
        raise TypeError(f"expected a function to decorate, got {type(fn).__name__}")
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            return (yield from _each_resumption_in(make, fn(*args, **kwargs)))
        return generator

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with make():
            return fn(*args, **kwargs)
    return wrapper


def _each_resumption_in(make, gen):
    # drives ``gen`` as ``yield from`` would, each step of it inside a fresh make()
    try:
        with make():
            response = gen.send(None)
        while True:
            try:
                request = yield response
            except GeneratorExit:
                with make():
                    gen.close()
                raise
            except BaseException as error:
                with make():
                    response = gen.throw(error)
            else:
                with make():
                    response = gen.send(request)
    except StopIteration as stop:
        return stop.value


class no_grad(_GradMode):
    """Record no graph in this block or decorated function (``torch.no_grad``).

    Example:
        >>> with mg.no_grad():
        ...     y = model(x)                  # no graph: evaluation, optimizer steps
    """

    MODE = False


class enable_grad(_GradMode):
    """Record the graph again inside a ``no_grad`` block (``torch.enable_grad``)."""

    MODE = True


class inference_mode(_GradMode):
    """``no_grad`` under torch's other name (``torch.inference_mode``); here there are no
    inference tensors, only a block or decorated function that records no graph.
    ``inference_mode(False)`` changes nothing, as torch's."""

    def __new__(cls, mode=True):
        if not isinstance(mode, bool):                   # bare ``@inference_mode``
            return cls()(mode)
        self = super().__new__(cls)
        self.enabled = mode
        return self

    def __enter__(self):
        self.previous = _state.grad_enabled
        _state.grad_enabled = self.previous and not self.enabled
        return self

    def __call__(self, fn):
        return _grad_mode_decorator(fn, lambda: inference_mode(self.enabled))


class Context:
    """A graph node, ``ctx`` in forward and backward: ``ctx.save_for_backward(*arrays)``
    keeps arrays that ``ctx.saved`` returns; ``ctx.needs_input_grad``, one bool per input,
    says which gradients backward may leave None. Any other attribute set in forward (an
    option, a shape) is there in backward. ``module`` and ``group`` serve the visualizer."""

    # the node's structure in slots, which ``free`` keeps; what forward sets besides (an
    # option, a shape) goes to the instance dict, which ``free`` empties
    __slots__ = ("function", "inputs", "needs_input_grad", "seq", "module", "group",
                 "outputs_meta", "tensor_hooks", "_saved", "_saved_versions", "_freed",
                 "__dict__", "__weakref__")

    def __init__(self, function, inputs, needs_input_grad):
        self.function = function
        self.inputs = inputs
        self.needs_input_grad = needs_input_grad
        self.seq = _next_seq()      # creation order: which in-place writes came after it
        state = _state
        modules, groups = state.module_stack, state.group_stack
        self.module = modules[-1] if modules else ""          # _module_path(), inline
        self.group = groups[-1] if groups else None
        self.outputs_meta = ()      # (shape, dtype) of each output, to fill missing grads
        self.tensor_hooks = None    # {output index: (id of the tensor, {handle id: hook})}
        self._saved = self._saved_versions = ()
        self._freed = False

    @property
    def name(self):
        return self.function.__name__

    def __repr__(self):              # PyTorch's grad_fn reads <MulBackward0 object at ...>
        return f"<{self.name}Backward object at {id(self):#x}>"

    def save_for_backward(self, *arrays):
        """Keep ``arrays`` (and None placeholders) until backward; see ``saved``."""
        self._saved = arrays

    def check_not_freed(self):
        if self._freed:
            raise RuntimeError(
                f"Trying to backward through the graph a second time: {self.name} and the "
                "arrays it saved for backward were freed after the first backward(). Call "
                "backward(retain_graph=True) the first time if you need to backward twice.")

    @property
    def saved(self):
        """The arrays given to ``save_for_backward``, checked against in-place changes."""
        if self._freed:
            self.check_not_freed()
        self.check_versions()
        return self._saved

    def check_versions(self):
        """Raise if a tensor whose array this node keeps was changed in place since."""
        for box, version, shape in self._saved_versions:
            if box[0] != version:
                raise RuntimeError(
                    f"An array that {self.name} saved for backward was modified in place: the "
                    f"tensor of shape {shape} is at version {box[0]}, expected "
                    f"version {version}. Do the in-place change on a copy (x = x.clone()) or "
                    "after backward().")

    def saved_arrays(self):
        """The saved arrays without checks (``graph_stats``)."""
        return () if self._freed else tuple(a for a in self._saved if a is not None)

    def named_saved_arrays(self):
        """(name from ``saved_names`` or None, array) for each saved array (the visualizer)."""
        if self._freed:
            return ()
        names = self.function.saved_names or (None,) * len(self._saved)
        return tuple((n, a) for n, a in zip(names, self._saved) if a is not None)

    def _track_saved(self, inputs, outputs):
        # A saved array that is an input's or output's data records that tensor's version,
        # so an in-place change before backward is caught. The node keeps the counter, not
        # the tensor: an output holding its own node would be a reference cycle. Every
        # tensor holding the array counts (two tensors may share one array, not a counter).
        versions = []
        for a in self._saved:
            for t in inputs:
                if t is not None and t._array is a:      # (no method or property calls)
                    versions += [(t._version_box, t._version_box[0], a.shape)]
            for t in outputs:
                if t._array is a:
                    versions += [(t._version_box, t._version_box[0], a.shape)]
        if versions:
            self._saved_versions += tuple(versions)

    def free(self):
        """Drop what backward needed (saved arrays, options holding arrays) and the inputs'
        data: a kept output holds the graph's structure, not its activations."""
        self._saved = self._saved_versions = ()
        self.__dict__.clear()
        self.inputs = tuple([t if t is None or t.grad_fn is None and t.requires_grad
                             else _freed_input(t, self) for t in self.inputs])
        self._freed = True


def _freed_input(t, node):
    # a leaf that requires grad stays (a parameter, not an activation); a constant goes
    if t is None or not t.requires_grad:
        return None
    if t.grad_fn is None:
        return t
    if t._history is not None:
        t = _as_seen_by(t, node)
    return FreedInput(t.grad_fn, t._output_index)


_next_seq = itertools.count().__next__


class FreedInput:
    """A freed node's input that an op made: where its gradient went, no data."""

    __slots__ = ("grad_fn", "_output_index")
    _array = name = _history = None
    requires_grad, _retains_grad = True, False

    def __init__(self, grad_fn, output_index):
        self.grad_fn, self._output_index = grad_fn, output_index


def _as_seen_by(tensor, node):
    # ``tensor`` as ``node`` recorded it: the snapshot before the first in-place op recorded
    # after the node (``tensor._record_inplace``), else the tensor itself
    if tensor._history is not None:
        for stamp, before in tensor._history:
            if node.seq < stamp:
                return before
    return tensor


class Function:
    """Base class of every differentiable op; subclass it with two static methods on plain
    arrays (NumPy or CuPy) and call ``apply``::

        forward(ctx, *arrays, **options) -> array or tuple of arrays
        backward(ctx, *output_grads)     -> one gradient (or None) per input

    ``apply(*inputs, **options)`` takes Tensors; numbers and arrays become constants and
    None stays None (an absent bias); ``options`` (keywords) reach forward unchanged, but
    for those named in ``kept_options``: arrays the node keeps for backward (an index, a
    mask), which reach forward as arrays, a tensor's version checked at backward and any
    other array copied. ``saved_names`` names the saved arrays, in ``save_for_backward``'s
    order (visualizer).
    """

    saved_names = ()
    kept_options = ()

    @staticmethod
    def forward(ctx, *args, **options):
        """The op on plain arrays; returns an array or a tuple of arrays."""
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        """dL/d(input) per input (None where not ``ctx.needs_input_grad``) from dL/d(output)."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs, **options):
        """Run ``forward`` on the inputs' arrays; the outputs get a node when recording."""
        tensors, arrays, needs_input_grad = _unpack(cls.__name__, inputs)
        ctx = Context(cls, tensors, needs_input_grad)
        record = _state.grad_enabled and True in needs_input_grad
        if cls.kept_options:
            options = _kept_constants(ctx, options, cls.kept_options, record)
        raw = cls.forward(ctx, *arrays, **options)
        make, node = _tensor.Tensor._from_op, ctx if record else None
        single = not isinstance(raw, tuple)
        if single and isinstance(raw, np.generic):   # NumPy's 0-d results are scalars: a
            raw = np.asarray(raw)                    # tensor's memory must take writes
        if single:                              # one output, the usual case: no loops
            outputs = (make(raw, node, 0),)
            if getattr(raw, "base", None) is not None:
                _share_versions_with_bases(tensors, outputs)
        else:
            raw = tuple([np.asarray(a) if isinstance(a, np.generic) else a for a in raw])
            outputs = tuple([make(a, node, i) for i, a in enumerate(raw)])
            _share_versions_with_bases(tensors, outputs)
        if record:
            for t in tensors:
                if t is not None and t._view_version is not None \
                        and t._view_version != t._version_box[0]:
                    _refuse_stale_view(cls.__name__, t)
            ctx.outputs_meta = ((raw.shape, raw.dtype),) if single else \
                tuple([(a.shape, a.dtype) for a in raw])
            if ctx._saved:
                ctx._track_saved(tensors, outputs)
            if _observers:
                for observer in _observers_here():
                    observer.on_forward(ctx)
        return outputs[0] if single else outputs


def _kept_constants(ctx, options, names, record):
    # The arrays a node keeps besides its inputs (an index, a mask, a target: the options
    # its Function names in ``kept_options``): a tensor is handed over as its array with
    # its version recorded, so that an in-place change before backward raises, as torch's;
    # an array or a list is copied, so that its owner may reuse it (the next micro-batch's
    # ids) without re-routing this node's gradient.
    Tensor = _tensor.Tensor
    options = dict(options)
    for name in names:
        value = options.get(name)
        if isinstance(value, tuple):
            options[name] = tuple([_kept(ctx, v, record, Tensor) for v in value])
        elif value is not None:
            options[name] = _kept(ctx, value, record, Tensor)
    return options


def _kept(ctx, value, record, Tensor):
    if isinstance(value, Tensor):
        if record:
            ctx._saved_versions += ((value._version_box, value._version_box[0], value.shape),)
        return value._array
    if record:
        if isinstance(value, np.ndarray) or is_cupy_array(value):
            return value.copy()
        if isinstance(value, list):
            return np.array(value)
    return value


def _refuse_stale_view(op_name, view):
    raise RuntimeError(
        f"{op_name}: an input (shape {view.shape}) is a view whose base was written in place "
        "after the view was made; its grad_fn no longer matches its values. Take the view "
        "again after the in-place op (or clone() it before).")


def _unpack(op_name, inputs):
    """(Tensors, their arrays, which require grad); numbers and arrays become constants like
    the first Tensor, None stays None; every array must be on one device."""
    Tensor = _tensor.Tensor
    arrays, needs_input_grad, kind = [], [], None
    for t in inputs:                      # the usual case: Tensors of one array type
        if type(t) is not Tensor and not isinstance(t, Tensor):        # (a Parameter is)
            return _unpack_mixed(op_name, inputs)
        data = t._array
        if type(data) is not kind:
            if kind is not None:
                return _unpack_mixed(op_name, inputs)
            kind = type(data)
        arrays += [data]                  # (+=, not append: no call, as counted in tests)
        needs_input_grad += [t.requires_grad]
    return inputs, arrays, tuple(needs_input_grad)


def _unpack_mixed(op_name, inputs):
    # None, numbers, arrays, or arrays of two types: the checked path
    Tensor = _tensor.Tensor
    like = next((t for t in inputs if isinstance(t, Tensor)), None)
    tensors = tuple(t if t is None or isinstance(t, Tensor) else _tensor.as_tensor(t, like)
                    for t in inputs)
    devices = {t.device for t in tensors if t is not None}
    if len(devices) > 1:
        shown = ", ".join(f"{t.device} {t.shape}" for t in tensors if t is not None)
        raise ValueError(f"{op_name}: all inputs must be on one device, got {shown}")
    return (tensors, [None if t is None else t._array for t in tensors],
            tuple([t is not None and t.requires_grad for t in tensors]))


def _share_versions_with_bases(inputs, outputs):
    # A view output shares its input's version counter, as in PyTorch: an in-place change
    # through either one invalidates what was saved of both.
    for out in outputs:
        base = getattr(out._array, "base", None)
        if base is None:
            continue                  # most ops make new arrays: nothing to look up
        owner = memory_owner(base)
        for t in inputs:              # a loop, not a dict of owners: a fused norm's view of
            data = None if t is None else t._array
            if data is owner or (data is not None and data.base is not None
                                 and memory_owner(data) is owner):
                out._version_box = t._version_box     # its own output matches no input
                out._view_version = t._version        # a later write makes its grad_fn stale


# (thread ident, observer) for ``checks.memory``'s timeline; empty, it costs one test per op.
_observers = []


@contextlib.contextmanager
def observe(observer):
    """Call ``observer.on_forward(node)``, ``on_backward(node, pending grads, captured)`` and
    ``on_free(nodes)`` for the graphs this thread records and back-propagates in the block."""
    entry = (threading.get_ident(), observer)
    _observers.append(entry)
    try:
        yield observer
    finally:
        _observers.remove(entry)


def _observers_here():
    here = threading.get_ident()
    return [observer for thread, observer in _observers if thread == here]


def in_module_call():
    """True while an ``nn.Module`` is running its forward."""
    return bool(_state.module_stack)


class _pushed:
    """``entry`` on top of ``stack`` for a block (a class: cheaper than a generator's
    context manager, once per module call)."""

    __slots__ = ("stack", "entry")

    def __init__(self, stack, entry):
        self.stack, self.entry = stack, entry

    def __enter__(self):
        self.stack.append(self.entry)

    def __exit__(self, *exc):
        self.stack.pop()
        return False


def module_scope(path):
    # nn.Module pushes its path while it runs, so nodes know which module made them
    return _pushed(_state.module_stack, path)


def _module_path():
    stack = _state.module_stack
    return stack[-1] if stack else ""


# A functional norm marks the nodes of one call, so the visualizer can fold a composite norm
# into one box; numbers are unique across threads (itertools.count is atomic under the GIL).
_group_calls = itertools.count()


def op_group(name):
    return _pushed(_state.group_stack, (name, next(_group_calls)))


def topological_order(root_nodes):
    """The nodes reachable from ``root_nodes``, each after its inputs' nodes (no recursion)."""
    order, visited = [], set()
    for root in root_nodes:
        if root in visited:
            continue
        visited.add(root)
        stack = [(root, iter(root.inputs))]          # (node, its inputs not yet visited)
        while stack:
            node, inputs = stack[-1]
            for t in inputs:
                if t is None:
                    continue
                parent = t.grad_fn if t._history is None else _as_seen_by(t, node).grad_fn
                if parent is not None and parent not in visited:
                    visited.add(parent)
                    stack.append((parent, iter(parent.inputs)))
                    break
            else:                                    # every input done: the node follows
                stack.pop()
                order.append(node)
    return order


def backward(root, grad=None, retain_graph=False):
    """``Tensor.backward``: ``.grad`` is written only at the end, so a failure changes none."""
    if not root.requires_grad:
        raise RuntimeError("backward(): the tensor does not require grad and has no grad_fn; "
                           "create its inputs with requires_grad=True")
    grad = _root_grad(root, grad, "backward(): grad")
    captured = run_backward([root], [grad], retain_graph, capture=None)
    # Gradients accumulate across backward() calls, as PyTorch's AccumulateGrad: the first
    # becomes a Tensor of its own, later ones add into its memory; zero_grad() clears them.
    # Under one lock: NumPy lets go of the GIL inside +=, so two threads backpropagating into
    # one shared leaf would otherwise each read the old sum and one contribution would be lost.
    with _accumulate_lock:
        for tensor, g in captured.values():       # (_grad: no property calls per tensor)
            held = tensor._grad
            if held is None or held.requires_grad:    # (a grad set with history: out of place)
                total = _own(g.copy()) if held is None else held._array + g
                tensor._grad = _tensor.Tensor._from_op(total, None)
            else:
                held._array += g
                held._version_box[0] += 1


_accumulate_lock = threading.Lock()


def grad(outputs, inputs, grad_outputs=None, retain_graph=False, allow_unused=False):
    """The gradients of ``outputs`` with respect to ``inputs``, touching no ``.grad``
    (``torch.autograd.grad``).

    Args:
        outputs, inputs: a Tensor or a sequence of Tensors each.
        grad_outputs: d(loss)/d(output) per output (arrays or Tensors); None for a
            one-element output.
        retain_graph: keep the saved arrays for another backward through the graph.
        allow_unused: None for an input the outputs do not depend on, instead of an error.

    Returns:
        a tuple of Tensors without history (None for an unused input), one per input.

    Example:
        >>> x = mg.tensor([1.0, 2.0], requires_grad=True)
        >>> mg.grad((x * x).sum(), [x])
        (tensor([2., 4.]),)
    """
    Tensor = _tensor.Tensor
    if isinstance(outputs, Tensor):
        outputs, grad_outputs = (outputs,), (grad_outputs,)
    outputs = tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad(): {len(outputs)} outputs but {len(grad_outputs)} "
                         "grad_outputs; give one gradient (or None) per output")
    grads = [_root_grad(o, g, f"grad(): grad_outputs[{i}]")
             for i, (o, g) in enumerate(zip(outputs, grad_outputs))]
    wanted = {id(t) for t in inputs}
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs[{i}] must be a Tensor, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError(f"grad(): inputs[{i}] (shape {t.shape}) does not require grad; "
                               "create it with requires_grad=True")
    captured = run_backward(outputs, grads, retain_graph, capture=lambda t: id(t) in wanted)
    unused = [i for i, t in enumerate(inputs) if id(t) not in captured]
    if unused and not allow_unused:
        shown = ", ".join(f"inputs[{i}] (shape {inputs[i].shape})" for i in unused)
        raise RuntimeError(f"grad(): the outputs do not depend on {shown}; pass "
                           "allow_unused=True to get None for it")
    return tuple(Tensor._from_op(_own(captured[id(t)][1]), None) if id(t) in captured else None
                 for t in inputs)


def _own(g):
    # a gradient as an array of its own (a 0-d sum can come out a NumPy scalar)
    return np.array(g) if isinstance(g, np.generic) else g


def _root_grad(root, grad, name):
    # name starts the messages: "grad(): grad_outputs[0]"
    data = root._array
    if type(grad) is type(data) and grad.dtype == data.dtype and grad.shape == data.shape:
        return grad                           # the usual case: an array like the output's
    if grad is None:
        if root.size != 1:
            raise RuntimeError(f"{name} can be omitted only for a one-element "
                               f"output, got shape {root.shape}")
        return root.xp.ones(root.shape, dtype=root.dtype)
    grad = grad._array if isinstance(grad, _tensor.Tensor) else grad
    if not hasattr(grad, "shape") or not hasattr(grad, "dtype"):     # a list, a number
        try:
            grad = root.xp.asarray(grad)
        except (ValueError, TypeError):
            grad = None
        if grad is None or not _is_real(grad.dtype):
            raise TypeError(f"{name} must be an array, a Tensor or nested lists "
                            f"of numbers of the output's shape {root.shape}")
    if grad.dtype.kind == "c":
        raise TypeError(f"{name} is complex ({grad.dtype}) but the output is "
                        f"real ({root.dtype}); the imaginary part would be dropped")
    if not _is_real(grad.dtype):
        raise TypeError(f"{name} must hold real numbers, got dtype {grad.dtype}")
    if tuple(grad.shape) != root.shape:
        raise ValueError(f"{name} has shape {tuple(grad.shape)}, expected the "
                         f"output's shape {root.shape}")
    if device_of(grad) != root.device:
        raise ValueError(f"{name} is on {device_of(grad)}, the output on "
                         f"{root.device}")
    return grad.astype(root.dtype, copy=False)     # a gradient has its tensor's dtype


def _is_real(dtype):
    return dtype.kind in "iub" or dtypes.is_floating(dtype)


def run_backward(roots, root_grads, retain_graph, capture):
    """Propagate ``root_grads`` from ``roots``; {id(tensor): (tensor, summed gradient)} for
    each tensor reached that ``capture`` accepts (None: the leaves and the tensors that
    retain their gradient, which ``backward()`` fills)."""
    if not allocator_setting:             # once: a step's temporaries reuse freed memory
        keep_freed_memory_by_default()
    captured = {}
    output_grads = {}                     # node -> [gradient per output, or None]
    summed = set()                        # id of each sum this loop made: its own to add to

    def receive(tensor, g):
        node = tensor.grad_fn
        if (node is None or tensor._retains_grad) if capture is None else capture(tensor):
            key = id(tensor)
            captured[key] = (tensor, g if key not in captured else captured[key][1] + g)
        if node is not None:
            slots = output_grads.get(node)
            if slots is None:
                slots = output_grads[node] = [None] * len(node.outputs_meta)
            i = tensor._output_index
            previous = slots[i]
            if previous is None:
                slots[i] = g
            elif id(previous) in summed:
                previous += g                 # a sum made here, held by no one else yet
            else:
                total = slots[i] = previous + g
                if getattr(total, "ndim", 0):   # an array (a 0-d sum is a NumPy scalar)
                    summed.add(id(total))

    for root, g in zip(roots, root_grads):
        if root.requires_grad:
            receive(root, g)
    order = topological_order([r.grad_fn for r in roots if r.grad_fn is not None])
    watching = _observers_here() if _observers else ()
    for node in reversed(order):
        grads = output_grads.pop(node, None)
        if grads is None:
            continue
        if summed:                    # the sums leave the loop's hands: no more in place
            summed.difference_update(map(id, grads))
        if node._freed:               # also a node that saved nothing: the graph is gone
            node.check_not_freed()
        if node.tensor_hooks is not None:     # the outputs' gradients are final here
            grads = _run_output_hooks(node, grads, captured)
        if len(grads) > 1 and any(g is None for g in grads):   # outputs no path reached
            grads = _zeros_for_missing(grads, node.outputs_meta)
        if node._saved_versions:      # (also what backward reads without ctx.saved)
            node.check_versions()
        input_grads = node.function.backward(node, *grads)
        if type(input_grads) is not tuple:
            input_grads = (input_grads,)
        for tensor, g in zip(node.inputs, input_grads):
            if g is None or tensor is None:
                continue
            if tensor._history is not None:           # written in place since the node
                tensor = _as_seen_by(tensor, node)
            if tensor.requires_grad:
                data = tensor._array          # (dtypes are mostly one object: `is` first)
                if g.shape != data.shape or g.dtype is not data.dtype and g.dtype != data.dtype:
                    g = _fit(g, tensor, node)
                receive(tensor, g)
        for observer in watching:
            observer.on_backward(node, output_grads, captured)
    for key, (tensor, g) in captured.items():
        if tensor._hooks is not None:         # a leaf's gradient is final after the loop
            captured[key] = (tensor, _run_hooks(tensor._hooks, g, tensor.shape))
    if not retain_graph:
        for node in order:
            node.free()
        for observer in watching:
            observer.on_free(order)
    return captured


class RemovableHandle:
    """A hook's handle: ``remove()`` unregisters it, as does leaving it as a context manager."""

    _ids = itertools.count()

    def __init__(self, hooks):
        self.hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self):
        """Unregister the hook."""
        self.hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def register_hook(tensor, hook):
    """``Tensor.register_hook``: kept by a leaf, or by a non-leaf's node per output."""
    if not callable(hook):
        raise TypeError(f"register_hook: hook must be callable, got {type(hook).__name__}")
    if not tensor.requires_grad:
        raise RuntimeError("register_hook: cannot register a hook on a tensor that doesn't "
                           "require grad")
    node = tensor.grad_fn
    if node is None:
        if tensor._hooks is None:
            tensor._hooks = {}
        hooks = tensor._hooks
    else:
        if node.tensor_hooks is None:
            node.tensor_hooks = {}
        # keyed by output; the tensor's id lets a retained .grad see the hooked gradient
        entry = node.tensor_hooks.setdefault(tensor._output_index, (id(tensor), {}))
        hooks = entry[1]
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def _run_hooks(hooks, g, shape):
    for hook in list(hooks.values()):
        result = hook(_tensor.Tensor._from_op(_own(g), None))    # a Tensor, as torch's
        if result is None:
            continue
        result = result._array if isinstance(result, _tensor.Tensor) else result
        if tuple(getattr(result, "shape", ())) != tuple(shape) or not hasattr(result, "dtype"):
            raise RuntimeError(f"a hook returned {type(result).__name__} of shape "
                               f"{tuple(getattr(result, 'shape', ()))}; a hook must return "
                               f"None or an array of the gradient's shape {tuple(shape)}")
        g = result if result.dtype == g.dtype else result.astype(g.dtype)
    return g


def _run_output_hooks(node, grads, captured):
    # hooks replace an output's total gradient, its retained (captured) copy too
    grads = list(grads)
    for i, (tensor_id, hooks) in node.tensor_hooks.items():
        if grads[i] is None or not hooks:
            continue
        shape = node.outputs_meta[i][0]
        grads[i] = _run_hooks(hooks, grads[i], shape)
        held = captured.get(tensor_id)
        if held is not None and held[0].grad_fn is node and held[0]._output_index == i:
            captured[tensor_id] = (held[0], grads[i])
    return grads


def _zeros_for_missing(grads, outputs_meta):
    xp = array_module(next(g for g in grads if g is not None))
    return [g if g is not None else xp.zeros(shape, dtype=dtype)
            for g, (shape, dtype) in zip(grads, outputs_meta)]


def _fit(g, tensor, node):
    if g.shape != tensor._array.shape:
        raise RuntimeError(f"{node.name}.backward returned a gradient of shape "
                           f"{tuple(g.shape)} for an input of shape {tensor.shape}")
    return g if g.dtype == tensor._array.dtype else dtypes.cast_gradient(g, tensor._array.dtype)


# tensor imports this module; importing it last lets either be imported first
from . import tensor as _tensor  # noqa: E402  (tensor imports this module)
