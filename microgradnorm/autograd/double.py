"""``create_graph=True``: the backward itself recorded as a graph, for double backward
(gradient penalties, Hessian-vector products, ``autograd.functional.hessian``).

The engine's loop (``engine.py``) runs each node's ``backward`` on arrays and records
nothing. This loop walks the same topological order, but the gradients are Tensors and each
node's gradient is computed by ops that record nodes: the op's ``graph_backward(ctx,
*grads)``, its closed form written with Tensor ops (``ops/double_backward.py`` gives them
to the primitives), on the node's input Tensors. A node without one still gives its exact
first-order gradient, as one ``OnceDifferentiable`` node: a backward through that node
raises, naming the op, as PyTorch's ``once_differentiable`` functions do.

PyTorch's ``create_graph=True`` also keeps the graph (``retain_graph`` defaults to it), puts
a gradient with history in ``.grad`` and adds a later one to it out of place: so here.
"""

from ..backend import array_module
from .function import Function, _tapes
from .grad_mode import enable_grad
from .history import _as_seen_by, on_paths
from .hooks import (_accumulate_lock, _post_hooks, _refuse_dtype, _run_output_hooks,
                    _run_post_hooks)
from .inputs import _broadcast_axes, _tensor
from .engine import topological_order


class OnceDifferentiable(Function):
    """The first-order gradients of ``node`` (its own ``backward`` on arrays) as one node
    whose inputs are the output gradients and ``node``'s inputs: a second backward that
    reaches it raises instead of leaving a term out."""

    @staticmethod
    def forward(ctx, *arrays, node, count):
        grads = node.function.backward(node, *arrays[:count])
        grads = grads if type(grads) is tuple else (grads,)
        ctx.present = tuple(i for i, g in enumerate(grads) if g is not None)
        ctx.node_name = node.name()
        # each output an array of its own: a backward may hand its gradient on (Add's twice)
        seen, out = {id(a) for a in arrays[:count]}, []
        for i in ctx.present:
            out.append(grads[i].copy() if id(grads[i]) in seen else grads[i])
            seen.add(id(grads[i]))
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"double backward through {ctx.node_name} is not supported: its "
                           "gradient has no formula written with Tensor ops "
                           "(ops/double_backward.py), only its first-order closed form")


def first_order(node, grads, kind=OnceDifferentiable):
    """``node``'s input gradients as Tensors from one ``kind`` node (``OnceDifferentiable``
    or a subclass with its own error), None where none."""
    made = kind.apply(*grads, *node.inputs, node=node, count=len(grads))
    made = made if type(made) is tuple else (made,)
    out = [None] * len(node.inputs)
    for i, g in zip(made[0].grad_fn.present if made else (), made):
        out[i] = g
    return out


class _DependsOn(Function):
    """The gradient of an op whose torch formula reads its input or result only to mask the
    gradient (ReLU: the op's ``graph_masks_by_inputs``), marked as a function of its inputs
    with a zero derivative, as torch's node is: ``requires_grad`` answers as torch's, and a
    second backward through it gives zeros rather than an error."""

    @staticmethod
    def forward(ctx, g, *inputs):
        return g.copy()

    @staticmethod
    def backward(ctx, grad):
        xp = array_module(grad)
        return (grad, *[xp.zeros(t.shape, t.dtype) for t in ctx.inputs[1:]])

    graph_reads_inputs = False

    @staticmethod
    def graph_backward(ctx, grad):
        # the same as Tensors: a third derivative goes through the identity
        return (grad, *[grad.new_zeros(t.shape, dtype=t.dtype) for t in ctx.inputs[1:]])


def _node_backward(node, grads):
    function = node.function
    formula = getattr(function, "graph_backward", None)
    if formula is None:
        return first_order(node, grads)
    if getattr(function, "graph_reads_inputs", True):
        for t in node.inputs:
            if t is not None and _as_seen_by(t, node) is not t:
                raise RuntimeError(f"double backward through {node.name()}: one of its "
                                   "inputs was modified in place after it was used, and its "
                                   "gradient's formula reads that input's values")
    _ = node.saved                          # raises, naming it, if a saved array changed
    out = formula(node, *grads)
    out = out if type(out) is tuple else (out,)
    if getattr(function, "graph_masks_by_inputs", False) and \
            any(g is not None and not g.requires_grad for g in out):
        inputs = [t for t in node.inputs if t is not None and t.requires_grad]
        out = tuple(g if g is None or g.requires_grad else _DependsOn.apply(g, *inputs)
                    for g in out)
    return out


def run_backward_graph(roots, root_grads, retain_graph, capture):
    """``engine.run_backward`` with gradients that are Tensors with history: {id(tensor):
    (tensor, summed gradient)} for each tensor reached that ``capture`` accepts (None: the
    leaves and the tensors that retain their gradient)."""
    Tensor = _tensor.Tensor
    captured, output_grads = {}, {}

    def receive(tensor, g):
        node = tensor.grad_fn
        if (node is None or tensor._retains_grad) if capture is None else capture(tensor):
            key = id(tensor)
            captured[key] = (tensor, g if key not in captured else captured[key][1] + g)
        if node is not None:
            slots = output_grads.setdefault(node, [None] * len(node.outputs_meta))
            i = tensor._output_index
            slots[i] = g if slots[i] is None else slots[i] + g

    for tape in _tapes:                   # graph capture records ops, not a backward
        tape.refuse_backward()
    with enable_grad():
        for root, g in zip(roots, root_grads):
            if root.requires_grad:
                receive(root, g if isinstance(g, Tensor) else Tensor._from_op(g, None))
        order = topological_order([r.grad_fn for r in roots if r.grad_fn is not None])
        if capture is not None:
            order = on_paths(order, capture)
        for node in reversed(order):
            grads = output_grads.pop(node, None)
            if grads is None:
                continue
            if node._freed:
                node.check_not_freed()
            if node._graph is not None and (node._graph.prehooks or node._graph.hooks):
                raise NotImplementedError(f"create_graph=True through {node.name()}, which "
                                          "has hooks registered on the node")
            if node.tensor_hooks is not None:
                grads = _run_output_hooks(node, grads, captured, _run_hooks)
            if node._kept_versions:
                node.check_versions(node._kept_versions)
            grads = [g if g is not None else _zeros(shape, dtype, grads)
                     for g, (shape, dtype) in zip(grads, node.outputs_meta)]
            for tensor, g in zip(node.inputs, _node_backward(node, grads)):
                if g is None or tensor is None:
                    continue
                if tensor._history is not None:
                    tensor = _as_seen_by(tensor, node)
                if tensor.requires_grad:
                    if tuple(g.shape) != tuple(tensor.shape):     # broadcast: summed back
                        axes = _broadcast_axes(tuple(g.shape), tuple(tensor.shape),
                                               f"{node.name()}: the gradient formula")
                        g = g.sum(dim=axes, keepdim=True).reshape(tensor.shape)
                    if g.dtype != tensor.dtype:     # complex to real: the real part
                        g = (g.real if g.is_complex() and not tensor.is_complex() else g)
                        g = g.to(tensor.dtype)
                    receive(tensor, g)
        for key, (tensor, g) in captured.items():
            if tensor._hooks is not None:
                captured[key] = (tensor, _run_hooks(tensor._hooks, g))
    if not retain_graph:
        for node in order:
            node.free()
    return captured


def accumulate_graph(captured):
    """``.grad`` under ``create_graph=True``: a clone of the gradient (its history kept) the
    first time, ``.grad + gradient`` out of place after, as PyTorch's AccumulateGrad."""
    with _accumulate_lock:
        for tensor, g in captured.values():
            held = tensor._grad
            tensor._grad = g.clone() if held is None else held + g    # its own, as torch's
    if _post_hooks:
        _run_post_hooks(captured)


def _zeros(shape, dtype, grads):
    like = next(g for g in grads if g is not None)
    return like.new_zeros(shape, dtype=dtype)


def _run_hooks(hooks, g, shape=None):
    # tensor hooks on a gradient with history: a Tensor of its shape, or None, from each
    for hook in list(hooks.values()):
        result = hook(g)
        if result is not None:
            if not isinstance(result, _tensor.Tensor) or tuple(result.shape) != tuple(g.shape):
                raise RuntimeError(f"a hook returned {type(result).__name__} of shape "
                                   f"{tuple(getattr(result, 'shape', ()))}; a hook must return "
                                   f"None or a Tensor of the gradient's shape {tuple(g.shape)}")
            if result.dtype != g.dtype:
                _refuse_dtype(hook, g.dtype, result.dtype)
            g = result
    return g
