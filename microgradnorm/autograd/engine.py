"""Backward: the nodes in topological order and one reversed loop, as micrograd; the
leaves' gradients accumulate into ``.grad`` (``gradients.py``'s ``grad`` returns them
instead)."""

from ..backend import allocator_setting, keep_freed_memory_by_default, silent_floats
from .anomaly import _anomaly, check_gradients
from .function import _tapes
from .grad_mode import _state
from .graph import run_node_hooks
from .history import _as_seen_by, on_paths
from .hooks import _leaf_final, _run_output_hooks, accumulate
from .inputs import _fit, _root_grad, _zeros_for_missing
from .runs import started
from .scopes import _observers, _observers_here


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
    if not root._requires_grad:
        raise RuntimeError("backward(): the tensor does not require grad and has no grad_fn; "
                           "create its inputs with requires_grad=True")
    grad = _root_grad(root, grad, "backward(): grad")
    accumulate(run_backward([root], [grad], retain_graph, capture=None))


def run_backward(roots, root_grads, retain_graph, capture):
    """Propagate ``root_grads`` from ``roots``; {id(tensor): (tensor, summed gradient)} for
    each tensor reached that ``capture`` accepts (None: the leaves and the tensors that
    retain their gradient, which ``backward()`` fills)."""
    if not allocator_setting:             # once: a step's temporaries reuse freed memory
        keep_freed_memory_by_default()
    for tape in _tapes:                   # graph capture records ops, not a backward
        tape.refuse_backward()
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
        if root._requires_grad:
            receive(root, g)
    order = topological_order([r.grad_fn for r in roots if r.grad_fn is not None])
    if capture is not None:               # grad(), inputs=: the nodes on a path to them
        order = on_paths(order, capture)
    watching = _observers_here() if _observers else ()
    runs = started(captured, capture, order, roots)   # what multi-grad hooks read (runs.py)
    mode, _state.grad_enabled = _state.grad_enabled, False   # torch's: hooks record no graph
    try:
        with silent_floats():                # inf and NaN silently, as torch's (backend)
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
                if node._kept_versions:       # an index or mask backward reads without ctx.saved
                    node.check_versions(node._kept_versions)
                if node._graph is not None:   # hooks on the node (graph.py): they see None there
                    input_grads = run_node_hooks(node, grads)
                else:
                    if len(grads) > 1 and any(g is None for g in grads):   # no path reached these
                        grads = _zeros_for_missing(grads, node.outputs_meta)
                    input_grads = node.function.backward(node, *grads)
                input_grads = input_grads if type(input_grads) is tuple else (input_grads,)
                if _anomaly[0]:               # detect_anomaly: a NaN names the node that made it
                    check_gradients(node, input_grads)
                for tensor, g in zip(node.inputs, input_grads):
                    if g is None or tensor is None:
                        continue
                    if tensor._history is not None:           # written in place since the node
                        tensor = _as_seen_by(tensor, node)
                    if tensor._requires_grad:
                        data = tensor._array          # (dtypes are mostly one object: `is` first)
                        if g.shape != data.shape or \
                                g.dtype is not data.dtype and g.dtype != data.dtype:
                            g = _fit(g, data.shape, data.dtype, node)
                        receive(tensor, g)
                for observer in watching:
                    observer.on_backward(node, output_grads, captured)
        for key, (tensor, g) in captured.items():
            if tensor._hooks is not None or tensor._grad_cast:    # final after the loop
                captured[key] = (tensor, _leaf_final(tensor, g))
    finally:
        runs.pop()
        _state.grad_enabled = mode
    if not retain_graph:
        for node in order:
            node.free()
        for observer in watching:
            observer.on_free(order)
    return captured
