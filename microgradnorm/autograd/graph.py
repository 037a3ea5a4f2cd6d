"""PyTorch's view of the backward graph (``torch.autograd.graph``): what code that walks or
instruments a graph reads from ``y.grad_fn`` — its class name, ``name()``,
``next_functions``, ``metadata``, hooks on the node — and the leaves' ``AccumulateGrad``
nodes, so that a PyTorch graph walker (a ``make_dot``) runs here as written.

Each op's nodes are ``Context``s of a class of its own, named as PyTorch names them: ``Mul``
records ``MulBackward0`` nodes (a PyTorch-style custom Function ``Square``,
``SquareBackward``), made once per op when its ``Function`` class is defined
(``node_class``). ``node.name`` is still the op's name, ``"Mul"``, a string the
visualizer and the statistics read, and called, ``node.name()``, PyTorch's
``"MulBackward0"``.

Example:
    >>> y = (x * 2).sum()                      # x a leaf that requires grad
    >>> y.grad_fn.name(), [type(n).__name__ for n, _ in y.grad_fn.next_functions]
    ('SumBackward0', ['MulBackward0'])
    >>> y.grad_fn.next_functions[0][0].next_functions[0][0].variable is x
    True
"""

import abc
import collections
import weakref

from .history import _as_seen_by
from .hooks import RemovableHandle
from .inputs import _tensor

__all__ = ["AccumulateGrad", "GradientEdge", "Node", "get_gradient_edge", "increment_version",
           "node_class"]


class Node(abc.ABC):
    """What every graph node answers (``torch.autograd.graph.Node``): op nodes and
    ``AccumulateGrad`` are registered as its subclasses, for ``isinstance``."""

    @abc.abstractmethod
    def name(self):
        """PyTorch's name of the node, ``"MulBackward0"``."""

    @property
    @abc.abstractmethod
    def next_functions(self):
        """(node, output index) per input of the op: the node that made it, an
        ``AccumulateGrad`` for a leaf that requires grad, ``(None, 0)`` for a constant."""


class _Name(str):
    """An op's name, ``"Mul"``, that called gives PyTorch's name of its nodes."""

    def __new__(cls, op_name, node_name):
        name = super().__new__(cls, op_name)
        name.node_name = node_name
        return name

    def __call__(self):
        return self.node_name


def node_class(function, context):
    """The class of ``function``'s nodes: a subclass of ``context`` (``Context``) named
    ``<op><function.node_suffix>``, with ``name`` the op's callable name (above)."""
    node_name = function.__name__ + function.node_suffix
    return type(node_name, (context,), {
        "__slots__": (), "__module__": function.__module__, "__qualname__": node_name,
        "name": _Name(function.__name__, node_name)})


class _NodeState:
    """A node's hooks and metadata, made on first use (most nodes never have any)."""

    __slots__ = ("prehooks", "hooks", "metadata")

    def __init__(self):
        self.prehooks, self.hooks, self.metadata = {}, {}, {}


def _state(node):
    if node._graph is None:
        node._graph = _NodeState()
    return node._graph


class NodeAPI:
    """PyTorch's ``Node`` methods, mixed into ``Context``."""

    __slots__ = ()

    @property
    def next_functions(self):
        edges = []
        for t in self.inputs:
            if t is None or not t.requires_grad:
                edges.append((None, 0))
                continue
            if t._history is not None:                # written in place since: as seen then
                t = _as_seen_by(t, self)
            edges.append((t.grad_fn, t._output_index) if t.grad_fn is not None
                         else (accumulate_grad(t), 0))
        return tuple(edges)

    @property
    def metadata(self):
        """A dict of the caller's own, kept with the node."""
        return _state(self).metadata

    def register_prehook(self, hook):
        """``hook(grad_outputs) -> None or new grad_outputs``, run before the node's
        backward: a tuple of Tensors (None for an output no gradient reached)."""
        return _register(_state(self).prehooks, hook)

    def register_hook(self, hook):
        """``hook(grad_inputs, grad_outputs) -> None or new grad_inputs``, run after the
        node's backward: tuples of Tensors, None where an input needs no gradient."""
        return _register(_state(self).hooks, hook)

    def __call__(self, *grad_outputs):
        """The node's backward on these output gradients (Tensors): one gradient per
        input, a Tensor (or None), as a tuple where the op has several inputs."""
        grads = self.function.backward(self, *_arrays("grad_outputs", grad_outputs))
        grads = _tensors(grads if type(grads) is tuple else (grads,))
        return grads[0] if len(grads) == 1 else grads


def _register(hooks, hook):
    if not callable(hook):
        raise TypeError(f"register_hook: hook must be callable, got {type(hook).__name__}")
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def run_node_hooks(node, grads):
    """The engine's call of ``node``'s backward when it has hooks: its prehooks on the
    output gradients, the backward, its hooks on the input gradients; arrays in and out."""
    state = node._graph
    outputs = _tensors(grads)
    for hook in tuple(state.prehooks.values()):
        new = hook(outputs)
        if new is not None:
            outputs = _checked(new, len(outputs), "a prehook", "grad_outputs")
    inputs = node.function.backward(node, *_arrays("grad_outputs", outputs))
    inputs = _tensors(inputs if type(inputs) is tuple else (inputs,))
    for hook in tuple(state.hooks.values()):
        new = hook(inputs, outputs)
        if new is not None:
            inputs = _checked(new, len(inputs), "a hook", "grad_inputs")
    return _arrays("grad_inputs", inputs)


def _checked(new, count, who, what):
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != count:
        raise RuntimeError(f"{who} of a node returned {len(new)} {what}, expected {count}")
    return new


def _tensors(arrays):
    return tuple(None if a is None else _tensor.Tensor._from_op(a, None) for a in arrays)


def _arrays(what, tensors):
    for t in tensors:
        if t is not None and not isinstance(t, _tensor.Tensor):
            raise TypeError(f"{what}: expected Tensors or None, got {type(t).__name__}")
    return tuple(None if t is None else t._array for t in tensors)


class AccumulateGrad:
    """The node behind a leaf that requires grad: its gradient accumulates into
    ``variable.grad``. One per leaf while something holds it, as PyTorch's."""

    def __init__(self, variable):
        self.variable = variable
        self.metadata = {}

    def name(self):
        return "torch::autograd::AccumulateGrad"

    next_functions = ()

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


def accumulate_grad(leaf):
    """``leaf``'s ``AccumulateGrad``: the same object while one is alive (the leaf holds a
    weak reference to it, the node the leaf)."""
    ref = leaf.__dict__.get("_accumulator")
    node = None if ref is None else ref()
    if node is None:
        node = AccumulateGrad(leaf)
        leaf.__dict__["_accumulator"] = weakref.ref(node)
    return node


Node.register(AccumulateGrad)

GradientEdge = collections.namedtuple("GradientEdge", ["node", "output_nr", "ownership_token"],
                                      defaults=[None])


def get_gradient_edge(tensor):
    """(the node ``tensor``'s gradient flows into, its output index): ``grad_fn`` or, for
    a leaf, its ``AccumulateGrad`` (``torch.autograd.graph.get_gradient_edge``)."""
    if not tensor.requires_grad:
        raise RuntimeError("get_gradient_edge: the tensor does not require grad, so it has "
                           "no gradient edge")
    if tensor.grad_fn is None:
        return GradientEdge(accumulate_grad(tensor), 0)
    return GradientEdge(tensor.grad_fn, tensor._output_index)


def increment_version(tensor):
    """Count an in-place change made behind the engine's back (``torch.autograd.graph
    .increment_version``): a node that saved the tensor then refuses to run."""
    tensor._bump_version()
