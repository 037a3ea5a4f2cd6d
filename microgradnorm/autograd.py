"""The autograd core: ``Function`` records one graph node per call; ``backward`` walks it.

A forward call ``Mul.apply(a, b)`` runs ``Mul.forward(ctx, a.data, b.data)`` on plain arrays
and returns a Tensor whose ``grad_fn`` is ``ctx``, the node. The node remembers its inputs,
the arrays saved for backward, and the version of every tensor those arrays belong to.
``backward`` is a topological sort of the nodes followed by one reversed loop, as in
micrograd; gradients are summed per node output and accumulated into leaf ``.grad``.
"""

import contextlib
import itertools

from .backend import array_module, device_of, memory_owner

_grad_enabled = True


def is_grad_enabled():
    return _grad_enabled


@contextlib.contextmanager
def no_grad():
    """Inside this block ops record no graph and save nothing for backward."""
    global _grad_enabled
    previous, _grad_enabled = _grad_enabled, False
    try:
        yield
    finally:
        _grad_enabled = previous


class Context:
    """A graph node: what one ``Function`` call needs to run its backward.

    Attributes:
        function: the ``Function`` subclass that made the node.
        inputs: the input Tensors, in call order (also those that need no gradient).
        needs_input_grad: one bool per input; backward may return None where it is False.
        module: the module path active when the node was recorded (for the visualizer).
        group: the innermost ``op_group`` the node was recorded in, as (name, call number),
            or None: it tells which nodes one composite norm call made (for the visualizer).
    """

    def __init__(self, function, inputs):
        self.function = function
        self.inputs = inputs
        self.needs_input_grad = tuple(t is not None and t.requires_grad for t in inputs)
        self.module = _module_path()
        self.group = _group_stack[-1] if _group_stack else None
        self._saved = ()
        self._saved_versions = ()
        self._freed = False
        self.outputs_meta = ()      # (shape, dtype) of each output, to fill missing grads

    @property
    def name(self):
        return self.function.__name__

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
        self.check_not_freed()
        for tensor, version in self._saved_versions:
            if tensor._version != version:
                raise RuntimeError(
                    f"An array that {self.name} saved for backward was modified in place: the "
                    f"tensor of shape {tensor.shape} is at version {tensor._version}, expected "
                    f"version {version}. Do the in-place change on a copy (x = x.clone()) or "
                    "after backward().")
        return self._saved

    def saved_arrays(self):
        """The saved arrays without checks (for accounting, e.g. ``graph_stats``)."""
        return () if self._freed else tuple(a for a in self._saved if a is not None)

    def _track_saved(self, tensors):
        # A saved array that *is* the data of an input or output tensor gets that tensor's
        # version recorded, so an in-place op on the tensor before backward is detected.
        owners = {id(t.data): t for t in tensors if t is not None}
        self._saved_versions = tuple(
            (owners[id(a)], owners[id(a)]._version) for a in self._saved if id(a) in owners)

    def free(self):
        self._saved = ()
        self._saved_versions = ()
        self._freed = True


class Function:
    """Base class of every differentiable op.

    Subclasses define two static methods on plain arrays::

        forward(ctx, *arrays, **options) -> array or tuple of arrays
        backward(ctx, *output_grads)     -> one gradient (or None) per input array

    and are called through ``apply(*inputs, **options)``, where inputs are Tensors (or
    numbers and arrays, taken as constants; None stays None, for an absent optional input
    such as a bias). ``options`` are passed to forward unchanged.
    """

    @staticmethod
    def forward(ctx, *args, **options):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs, **options):
        from .tensor import Tensor, as_tensor

        like = _first_tensor(inputs)
        tensors = tuple(None if t is None else as_tensor(t, like) for t in inputs)
        _check_same_device(cls.__name__, tensors)
        ctx = Context(cls, tensors)
        record = _grad_enabled and any(ctx.needs_input_grad)
        raw = cls.forward(ctx, *(None if t is None else t.data for t in tensors), **options)
        single = not isinstance(raw, tuple)
        outputs = tuple(Tensor._from_op(a, ctx if record else None, i)
                        for i, a in enumerate((raw,) if single else raw))
        _share_versions_with_bases(tensors, outputs)
        if record:
            ctx.outputs_meta = tuple((o.shape, o.dtype) for o in outputs)
            ctx._track_saved(tensors + outputs)
        return outputs[0] if single else outputs


def _share_versions_with_bases(inputs, outputs):
    # An output that is a view of an input's memory (reshape, slice, transpose, expand)
    # shares that input's version counter, as in PyTorch: an in-place change through either
    # one changes what the other holds, so it must invalidate what was saved of both.
    views = [out for out in outputs if getattr(out.data, "base", None) is not None]
    if not views:
        return                        # most ops make new arrays: nothing to look up
    owners = {id(memory_owner(t.data)): t for t in inputs if t is not None}
    for out in views:
        base = owners.get(id(memory_owner(out.data)))
        if base is not None:
            out._version_box = base._version_box


def _first_tensor(inputs):
    from .tensor import Tensor
    return next((t for t in inputs if isinstance(t, Tensor)), None)


def _check_same_device(op_name, tensors):
    devices = {t.device for t in tensors if t is not None}
    if len(devices) > 1:
        shown = ", ".join(f"{t.device} {t.shape}" for t in tensors if t is not None)
        raise ValueError(f"{op_name}: all inputs must be on one device, got {shown}")


# Module scopes: nn.Module pushes its path here while it runs, so nodes know who made them.
_module_stack = []


@contextlib.contextmanager
def module_scope(path):
    _module_stack.append(path)
    try:
        yield
    finally:
        _module_stack.pop()


def _module_path():
    return _module_stack[-1] if _module_stack else ""


# Op groups: a functional norm marks the nodes of one call, so that the visualizer can fold
# a composite norm's subgraph into one box. Each call gets its own number.
_group_stack = []
_group_calls = itertools.count()


@contextlib.contextmanager
def op_group(name):
    _group_stack.append((name, next(_group_calls)))
    try:
        yield
    finally:
        _group_stack.pop()


def topological_order(root_nodes):
    """The nodes reachable from ``root_nodes``, each placed after every node it feeds, so
    that the reversed list visits a node only once all its consumers are done. Iterative,
    so deep graphs don't hit Python's recursion limit."""
    order, visited = [], set()
    stack = [(node, False) for node in root_nodes]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        for t in node.inputs:
            if t is not None and t.grad_fn is not None and id(t.grad_fn) not in visited:
                stack.append((t.grad_fn, False))
    return order


def backward(root, grad=None, retain_graph=False):
    """Back-propagate from ``root`` into ``.grad``; see ``Tensor.backward``.

    All gradients are computed first and written to ``.grad`` only at the end, so a failing
    backward (a freed graph, an in-place change) leaves every ``.grad`` as it was.
    """
    if not root.requires_grad:
        raise RuntimeError("backward(): the tensor does not require grad and has no grad_fn; "
                           "create its inputs with requires_grad=True")
    grad = _root_grad(root, grad, "grad")
    captured = run_backward([root], [grad], retain_graph,
                            capture=lambda t: t.grad_fn is None or t._retains_grad)
    # Gradients accumulate across backward() calls, as in PyTorch; zero them with zero_grad().
    for tensor, g in captured.values():
        tensor.grad = g.copy() if tensor.grad is None else tensor.grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned, not accumulated:
    no ``.grad`` is touched (``torch.autograd.grad``).

    Args:
        outputs: a Tensor or a sequence of Tensors.
        inputs: a Tensor or a sequence of Tensors that the outputs depend on.
        grad_outputs: one gradient per output (arrays or Tensors); may be omitted for
            one-element outputs.
        retain_graph: keep the graph for another backward.

    Returns:
        a tuple of arrays, one per input (None for an input the outputs don't depend on).
    """
    from .tensor import Tensor
    if isinstance(outputs, Tensor):
        outputs, grad_outputs = (outputs,), (grad_outputs,)
    outputs = tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    grads = [_root_grad(o, g, f"grad_outputs[{i}]")
             for i, (o, g) in enumerate(zip(outputs, grad_outputs))]
    wanted = {id(t) for t in inputs}
    captured = run_backward(outputs, grads, retain_graph, capture=lambda t: id(t) in wanted)
    return tuple(captured[id(t)][1] if id(t) in captured else None for t in inputs)


def _root_grad(root, grad, name):
    from .tensor import Tensor
    if grad is None:
        if root.size != 1:
            raise RuntimeError(f"backward(): {name} can be omitted only for a one-element "
                               f"output, got shape {root.shape}")
        return root.xp.ones(root.shape, dtype=root.dtype)
    grad = grad.data if isinstance(grad, Tensor) else grad
    if tuple(grad.shape) != root.shape:
        raise ValueError(f"backward(): {name} has shape {tuple(grad.shape)}, expected the "
                         f"output's shape {root.shape}")
    if device_of(grad) != root.device:
        raise ValueError(f"backward(): {name} is on {device_of(grad)}, the output on "
                         f"{root.device}")
    return grad.astype(root.dtype, copy=False)     # a gradient has its tensor's dtype


def run_backward(roots, root_grads, retain_graph, capture):
    """The engine: propagate ``root_grads`` from ``roots`` through the graph.

    Returns {id(tensor): (tensor, summed gradient)} for every tensor reached for which
    ``capture(tensor)`` is true. Frees the saved arrays unless ``retain_graph``.
    """
    captured = {}
    output_grads = {}                     # id(node) -> [gradient per output, or None]

    def receive(tensor, g):
        if capture(tensor):
            _accumulate(captured, tensor, g)
        if tensor.grad_fn is not None:
            slots = output_grads.setdefault(
                id(tensor.grad_fn), [None] * len(tensor.grad_fn.outputs_meta))
            i = tensor._output_index
            slots[i] = g if slots[i] is None else slots[i] + g

    for root, g in zip(roots, root_grads):
        if root.requires_grad:
            receive(root, g)
    order = topological_order([r.grad_fn for r in roots if r.grad_fn is not None])
    for node in reversed(order):
        grads = output_grads.pop(id(node), None)
        if grads is None:
            continue
        node.check_not_freed()        # also a node that saved nothing: the graph is gone
        xp = _array_module_of(grads)
        grads = [g if g is not None else xp.zeros(shape, dtype=dtype)
                 for g, (shape, dtype) in zip(grads, node.outputs_meta)]
        input_grads = node.function.backward(node, *grads)
        if not isinstance(input_grads, tuple):
            input_grads = (input_grads,)
        for tensor, g in zip(node.inputs, input_grads):
            if g is not None and tensor is not None and tensor.requires_grad:
                receive(tensor, _fit(g, tensor, node))
    if not retain_graph:
        for node in order:
            node.free()
    return captured


def _array_module_of(grads):
    return array_module(next(g for g in grads if g is not None))


def _fit(g, tensor, node):
    if tuple(g.shape) != tensor.shape:
        raise RuntimeError(f"{node.name}.backward returned a gradient of shape "
                           f"{tuple(g.shape)} for an input of shape {tensor.shape}")
    return g if g.dtype == tensor.dtype else g.astype(tensor.dtype)


def _accumulate(captured, tensor, g):
    key = id(tensor)
    captured[key] = (tensor, g if key not in captured else captured[key][1] + g)
