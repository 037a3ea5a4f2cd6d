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
from .graph import _checked, _needed
from .history import _as_seen_by, on_paths
from .hooks import (_accumulate_lock, _post_hooks, _refuse_dtype, _run_output_hooks,
                    _run_post_hooks)
from .inputs import _broadcast_axes, _tensor
from .runs import started
from .engine import topological_order


class OnceDifferentiable(Function):
    """The first-order gradients of ``node`` (its own ``backward`` on arrays) as one node
    whose inputs are the output gradients and ``node``'s inputs: a second backward that
    reaches it raises instead of leaving a term out."""

    @staticmethod
    def forward(ctx, *arrays, node, count, present):
        grads = node.function.backward(node, *arrays[:count])
        grads = grads if type(grads) is tuple else (grads,)
        present.extend(i for i, g in enumerate(grads) if g is not None)   # (the caller's)
        ctx.present = tuple(present)
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


def first_order(node, grads, kind=OnceDifferentiable, inputs=None):
    """``node``'s input gradients as Tensors from one ``kind`` node (``OnceDifferentiable``
    or a subclass with its own error) over ``grads`` and ``inputs`` (default: the node's
    inputs), None where none."""
    inputs, present = node.inputs if inputs is None else inputs, []
    made = kind.apply(*grads, *inputs, node=node, count=len(grads), present=present)
    made = made if type(made) is tuple else (made,)
    out = [None] * len(node.inputs)
    for i, g in zip(present, made):
        out[i] = g
    return out


class _DependsOn(Function):
    """The gradient of an op whose torch formula reads its input or result only to mask the
    gradient (ReLU: the op's ``graph_masks_by_inputs``; a composite marked by
    ``gradient_reads``), marked as a function of its inputs with a zero derivative, as
    torch's node is: ``requires_grad`` answers as torch's, and a second backward through it
    reaches the inputs with zeros rather than an error."""

    @staticmethod
    def forward(ctx, g, *inputs, through=False, unused=False):
        ctx.through, ctx.unused = through, unused
        return g.copy()

    @staticmethod
    def backward(ctx, grad):
        # (``unused``: torch's formula gives the inputs no gradient at all, a convolution's)
        xp = array_module(grad)
        return (grad, *[None if ctx.unused else xp.zeros(t.shape, t.dtype)
                        for t in ctx.inputs[1:]])

    graph_reads_inputs = False

    @staticmethod
    def graph_backward(ctx, grad):
        # the same as Tensors, the identity still reading the inputs (torch's formula for
        # the gradient's gradient is the masking op again): a third derivative reaches them
        # (``through``: torch's formula reads the op's result, whose own backward masks the
        # zeros again, so they too depend on the inputs: ReLU's ``graph_reads_result``)
        inputs = ctx.inputs[1:]
        zeros = [None if ctx.unused else grad.new_zeros(t.shape, dtype=t.dtype)
                 for t in inputs]
        if ctx.through:
            zeros = [depends_on(z, *inputs) for z in zeros]
        return (depends_on(grad, *inputs, unused=ctx.unused), *zeros)


def gradient_reads(result, *inputs, unused=False):
    """Mark ``result``'s node (the last of a composite op: leaky_relu's ``where``, a
    pooling's reshape) as torch's one node whose backward reads ``inputs`` only to mask or
    route the gradient: under ``create_graph=True`` the gradient it passes back depends on
    them with a zero derivative, so it requires grad and a second backward gives zeros, as
    torch's (``unused``: gives them no gradient, torch's undefined one of a convolution's
    input). Returns ``result``; a result without a node of its own is left as it is. The
    ops that call it (or set ``graph_masks_by_inputs`` on their node) are listed in
    docs/pytorch.md's ``create_graph=True`` rows: a new op of the kind calls it too."""
    node = result.grad_fn
    if node is not None:
        for t in inputs:
            if t is result:
                return result
        node.graph_depends_on = inputs
        if unused:
            node.graph_depends_unused = True
    return result


def depends_on(g, *inputs, through=False, unused=False):
    """``g`` as a function of ``inputs`` with a zero derivative (``_DependsOn``), where one
    of them requires grad: for a ``graph_backward`` whose torch formula reads an input
    that its own formula does not need."""
    inputs = [t for t in inputs if t is not None and t.requires_grad]
    return _DependsOn.apply(g, *inputs, through=through, unused=unused) if inputs else g


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
    depends = node.__dict__.get("graph_depends_on")          # gradient_reads' mark
    if depends is None and getattr(function, "graph_masks_by_inputs", False):
        depends = node.inputs
    if depends is not None:       # a path to the inputs even where g has history of its own
        through = getattr(function, "graph_reads_result", False)
        unused = node.__dict__.get("graph_depends_unused", False)
        out = tuple(g if g is None else depends_on(g, *depends, through=through, unused=unused)
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
        runs = started(captured, capture, order, roots)   # what multi-grad hooks read
        try:
            for node in reversed(order):
                grads = output_grads.pop(node, None)
                if grads is None:
                    continue
                if node._freed:
                    node.check_not_freed()
                if node.tensor_hooks is not None:
                    grads = _run_output_hooks(node, grads, captured, _run_hooks)
                if node._kept_versions:
                    node.check_versions(node._kept_versions)
                if node._graph is not None and (node._graph.prehooks or node._graph.hooks):
                    input_grads = _hooked_node_backward(node, grads)
                else:
                    input_grads = _node_backward(node, _filled(node, grads))
                for tensor, g in zip(node.inputs, input_grads):
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
                wanted = tensor.__dict__.get("_grad_dtype") if tensor._grad_cast else None
                if wanted is not None and g.dtype != wanted:      # grad_dtype's cast
                    captured[key] = (tensor, g := g.to(wanted))
                if tensor._hooks is not None:
                    captured[key] = (tensor, _run_hooks(tensor._hooks, g))
        finally:
            runs.pop()
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
        _run_post_hooks(captured, create_graph=True)


def _filled(node, grads):
    # zeros for the outputs no path reached (one at least did); None kept for a custom
    # Function that asked for it (set_materialize_grads(False))
    if node.__dict__.get("_keep_missing"):
        return grads
    like = next(g for g in grads if g is not None)
    return [g if g is not None else like.new_zeros(shape, dtype=dtype)
            for g, (shape, dtype) in zip(grads, node.outputs_meta)]


def _hooked_node_backward(node, grads):
    """``graph.run_node_hooks`` with Tensors that keep their history: the node's prehooks
    on the output gradients (None where none reached), its ``graph_backward``, its hooks on
    the input gradients (None where an input needs none), each replacement checked."""
    state, outputs = node._graph, tuple(grads)
    for hook in tuple(state.prehooks.values()):
        new = hook(outputs)
        if new is not None:
            outputs = _checked(new, outputs, "a prehook", "grad_outputs")
    if all(g is None for g in outputs):
        return (None,) * len(node.inputs)
    inputs = _needed(node, tuple(_node_backward(node, _filled(node, outputs))))
    for hook in tuple(state.hooks.values()):
        new = hook(inputs, outputs)
        if new is not None:
            inputs = _checked(new, inputs, "a hook", "grad_inputs")
    return inputs


def _run_hooks(hooks, g, shape=None):
    # tensor hooks on a gradient with history: a Tensor of its shape, or None, from each
    for hook in list(hooks.values()):
        result = hook(g)
        if result is not None:
            if not isinstance(result, _tensor.Tensor):
                raise TypeError(f"expected Variable, but hook returned "
                                f"'{type(result).__name__}'")
            if tuple(result.shape) != tuple(g.shape):
                raise RuntimeError(f"a hook returned {type(result).__name__} of shape "
                                   f"{tuple(getattr(result, 'shape', ()))}; a hook must return "
                                   f"None or a Tensor of the gradient's shape {tuple(g.shape)}")
            if result.dtype != g.dtype:
                _refuse_dtype(hook, g.dtype, result.dtype)
            g = result
    return g
