"""PyTorch's view of the backward graph (``torch.autograd.graph``): what code that walks or
instruments a graph reads from ``y.grad_fn`` — ``name()``, ``next_functions``,
``metadata``, hooks on the node — and the leaves' ``AccumulateGrad``
nodes, so that a PyTorch graph walker (a ``make_dot``) runs here as written.

Every node is a ``Context``, one class for all (per-op classes made every attribute read in
the engine's loop polymorphic: 8 % more time per node); ``node.name`` is its op's name,
``"Mul"``, a string the visualizer and the statistics read, and called, ``node.name()``,
the node's name in PyTorch's pattern, ``"MulBackward0"`` (a PyTorch-style custom Function
``Square``: ``"SquareBackward"``), which its repr shows too. Where several of PyTorch's
functions are one op here, each names its node as PyTorch's (a subclass that only renames
the op, ``node_alias`` below: ``ViewBackward0``, ``SelectBackward0``,
``MmBackward0``); where this package's op differs from PyTorch's, so does the name
(``LinearBackward0`` for PyTorch's ``AddmmBackward0``). The hooks on saved tensors
(``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``) are
``saved_hooks.py``'s, here under torch's path, with ``allow_mutation_on_saved_tensors``;
``register_multi_grad_hook`` is ``multi_grad.py``'s.

Example:
    >>> y = (x * 2).sum()                      # x a leaf that requires grad
    >>> y.grad_fn.name(), [n.name() for n, _ in y.grad_fn.next_functions]
    ('SumBackward0', ['MulBackward0'])
    >>> y.grad_fn.next_functions[0][0].next_functions[0][0].variable is x
    True
"""

import abc
import collections
import weakref

from .history import _as_seen_by
from .hooks import added
from .inputs import _tensor, _zeros_for_missing
from .saved_attrs import saved_attribute
from .saved_hooks import (allow_mutation_on_saved_tensors, disable_saved_tensors_hooks,
                          save_on_cpu, saved_tensors_hooks)

__all__ = ["AccumulateGrad", "GradientEdge", "Node", "get_gradient_edge", "increment_version",
           "node_name", "allow_mutation_on_saved_tensors", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "save_on_cpu", "saved_tensors_hooks"]


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

    def __getnewargs__(self):       # pickle and copy: both names
        return str(self), self.node_name


def node_name(function):
    """``function``'s op name, ``"Mul"``, that called gives its nodes' name,
    ``<op><function.node_suffix>``: ``"MulBackward0"`` (above)."""
    return _Name(function.__name__, function.__name__ + function.node_suffix)


def node_alias(base, op, suffix="Backward0", *, alias=None, module=None):
    """A subclass of the Function ``base`` that only renames its nodes to torch's
    ``<op><suffix>`` (``node_alias(Reshape, "Squeeze", "Backward1")``: ``SqueezeBackward1``,
    torch's overload number in the suffix): forward, backward and the double-backward
    formulas (``graph_*``, read through the class) are ``base``'s. Where several of torch's
    public functions are one op here, each names its node as torch does, at no cost per
    call. ``alias``: the module-level name it is bound to, where it is not ``op`` (two
    overloads of one op), so that pickle finds the class; ``module``: that module's
    ``__name__`` (default ``base``'s)."""
    return type(op, (base,), {"node_suffix": suffix, "__qualname__": alias or op,
                              "__module__": module or base.__module__,
                              "__doc__": f"``{base.__name__}``, its nodes named {op}{suffix}"})


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

    # torch's saved-tensor attributes (saved_attrs.py): properties, not a __getattr__,
    # which would slow every attribute read of every node (3.11 specializes plain reads)
    _saved_self = property(lambda self: saved_attribute(self, "_saved_self"))
    _saved_other = property(lambda self: saved_attribute(self, "_saved_other"))
    _saved_result = property(lambda self: saved_attribute(self, "_saved_result"))
    _raw_saved_self = property(lambda self: saved_attribute(self, "_raw_saved_self"))
    _raw_saved_other = property(lambda self: saved_attribute(self, "_raw_saved_other"))
    _raw_saved_result = property(lambda self: saved_attribute(self, "_raw_saved_result"))

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
        return _register("register_prehook", _state(self).prehooks, hook)

    def register_hook(self, hook):
        """``hook(grad_inputs, grad_outputs) -> None or new grad_inputs``, run after the
        node's backward: tuples of Tensors, None where an input needs no gradient. (Every
        node that backward reaches runs its hooks, also one on no path to the ``inputs=``
        of a ``backward`` or ``grad``, which PyTorch's engine skips.)"""
        return _register("register_hook", _state(self).hooks, hook)

    def __call__(self, *grad_outputs):
        """The node's backward on these output gradients (Tensors, None for zeros): one
        gradient per input, a Tensor (or None), a tuple where the op has several inputs."""
        name = f"{self.name()}.__call__"
        if len(grad_outputs) != len(self.outputs_meta):
            raise RuntimeError(f"{name}: expected {len(self.outputs_meta)} gradients, one per "
                               f"output, got {len(grad_outputs)}")
        grads = _arrays(name, grad_outputs, self.outputs_meta)
        if all(g is None for g in grads):
            inputs = (None,) * len(self.inputs)
        else:
            inputs = self.function.backward(self, *_zeros_for_missing(grads, self.outputs_meta))
        inputs = _tensors(_needed(self, inputs if type(inputs) is tuple else (inputs,)))
        return inputs[0] if len(inputs) == 1 else inputs


def _register(where, hooks, hook):
    if not callable(hook):
        raise TypeError(f"{where}: hook must be callable, got {type(hook).__name__}")
    return added(hooks, hook)


def run_node_hooks(node, grads):
    """The engine's call of ``node``'s backward when it has hooks: its prehooks on the
    output gradients (None where no gradient reached an output, as PyTorch's), the backward,
    its hooks on the input gradients (None where an input needs none); arrays in and out,
    each replacement checked against the shape and dtype it replaces."""
    state = node._graph
    outputs = _tensors(grads)
    for hook in tuple(state.prehooks.values()):
        new = hook(outputs)
        if new is not None:
            outputs = _checked(new, outputs, "a prehook", "grad_outputs")
    arrays = _arrays("grad_outputs", outputs)
    if any(a is None for a in arrays):
        if all(a is None for a in arrays):
            return (None,) * len(node.inputs)
        if not node.__dict__.get("_keep_missing"):      # set_materialize_grads(False)'s
            arrays = _zeros_for_missing(arrays, node.outputs_meta)
    inputs = node.function.backward(node, *arrays)
    inputs = _tensors(_needed(node, inputs if type(inputs) is tuple else (inputs,)))
    for hook in tuple(state.hooks.values()):
        new = hook(inputs, outputs)
        if new is not None:
            inputs = _checked(new, inputs, "a hook", "grad_inputs")
    return _arrays("grad_inputs", inputs)


def _needed(node, grads):
    # None where the input needs no gradient (a fused node computes every one)
    return tuple(g if need else None for g, need in zip(grads, node.needs_input_grad))


def _checked(new, old, who, what):
    # a hook's replacement: as many values, each None or a Tensor of the one it replaces'
    # shape and dtype (PyTorch's checks)
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"{who} of a node returned {len(new)} {what}, expected "
                           f"{len(old)}")
    for i, (a, b) in enumerate(zip(new, old)):
        if a is None or b is None:
            continue
        if not isinstance(a, _tensor.Tensor):
            raise TypeError(f"{who} of a node returned {type(a).__name__} as {what}[{i}], "
                            "expected a Tensor or None")
        if a.shape != b.shape or a.dtype != b.dtype:
            raise RuntimeError(f"{who} of a node has changed {what}[{i}]: shape "
                               f"{tuple(b.shape)} and dtype {b.dtype} became "
                               f"{tuple(a.shape)} and {a.dtype}")
    return new


def _tensors(arrays):
    return tuple(None if a is None else _tensor.Tensor._from_op(a, None) for a in arrays)


def _arrays(what, tensors, metas=None):
    # the arrays of Tensors (None stays), each checked against (shape, dtype) if given
    for i, t in enumerate(tensors):
        if t is None:
            continue
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(f"{what}: expected Tensors or None, got {type(t).__name__}")
        if metas is not None and tuple(t.shape) != tuple(metas[i][0]):
            raise RuntimeError(f"{what}: gradient {i} has shape {tuple(t.shape)}, the "
                               f"output's is {tuple(metas[i][0])}")
    return tuple(None if t is None else t._array for t in tensors)


class AccumulateGrad:
    """The node behind a leaf that requires grad: its gradient accumulates into
    ``variable.grad``. One per leaf for the leaf's life, as PyTorch's; its hooks are the
    leaf's (a prehook sees and may replace the gradient before it accumulates, a hook runs
    after, with no grad_inputs)."""

    def __init__(self, variable_ref):
        self._variable = variable_ref               # a weak reference: the leaf keeps this
        self.metadata = {}                          # node (below), not this node the leaf

    @property
    def variable(self):
        return self._variable()

    def name(self):
        return "torch::autograd::AccumulateGrad"

    next_functions = ()

    def register_prehook(self, hook):
        def run(grad):
            new = hook((grad,))
            return None if new is None else _checked(new, (grad,), "a prehook",
                                                     "grad_outputs")[0]
        return self.variable.register_hook(run)

    def register_hook(self, hook):
        return self.variable.register_post_accumulate_grad_hook(
            lambda leaf: hook((), (leaf.grad,)))

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


# id(leaf) -> (a weak reference to the leaf, its AccumulateGrad): beside the leaf, not in it
# (a leaf pickles and deep-copies as before); the entry goes when the leaf does
_accumulators = {}


def accumulate_grad(leaf):
    """``leaf``'s ``AccumulateGrad``: one object for the leaf's life."""
    key = id(leaf)
    entry = _accumulators.get(key)
    if entry is not None and entry[0]() is leaf:
        return entry[1]
    ref = weakref.ref(leaf, lambda _, key=key: _accumulators.pop(key, None))
    node = AccumulateGrad(ref)
    _accumulators[key] = (ref, node)
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
    .increment_version``; a Tensor or an iterable of them): a node that saved one then
    refuses to run."""
    tensors = [tensor] if isinstance(tensor, _tensor.Tensor) else \
        list(tensor) if isinstance(tensor, (list, tuple)) else [tensor]
    for t in tensors:
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(f"increment_version: tensor must be a Tensor or an iterable of "
                            f"Tensors, got {type(t).__name__}")
    for t in tensors:
        t._bump_version()


from .multi_grad import register_multi_grad_hook   # noqa: E402  (it reads the hooks above)
