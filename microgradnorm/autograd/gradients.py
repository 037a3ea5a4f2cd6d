"""``grad``: the gradients of outputs with respect to chosen inputs, returned, not
accumulated (``torch.autograd.grad``; only a tensor that retains its gradient gets it in
``.grad``, as torch's), and ``backward``, PyTorch's
``torch.autograd.backward`` (several outputs, ``inputs=``), both by the engine's backward
loop."""

import warnings
from collections.abc import Mapping

from ..backend import array_module, warn_once
from .double import _run_hooks as _run_graph_hooks
from .double import accumulate_graph, run_backward_graph
from .engine import run_backward
from .function import Function
from .grad_mode import set_grad_enabled
from .hooks import _own, _run_hooks, accumulate
from .graph import GradientEdge
from .inputs import GradientMismatchError, GradientTypeError, _root_grad, _tensor
from .runs import started


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of ``tensors`` into ``.grad`` (``torch.autograd.backward``):
    of every leaf that requires grad, or only of ``inputs`` (leaves or not) when given.

    Args:
        tensors: a Tensor or a sequence of Tensors, back-propagated together.
        grad_tensors: d(loss)/d(tensor) per tensor; None for a one-element tensor.
        retain_graph: keep the saved arrays for another backward through the graph.
        create_graph: record the backward as a graph (double backward): ``.grad`` gets a
            gradient with history, added out of place (``double.py``).
        inputs: a Tensor or a sequence of Tensors whose ``.grad`` alone accumulates.

    Example:
        >>> mg.autograd.backward([loss_a, loss_b])    # as (loss_a + loss_b).backward()
    """
    Tensor = _tensor.Tensor
    tensors, grad_tensors = _with_gradients(tensors, grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise GradientMismatchError(f"backward(): grad_tensors should be the same length as "
                                    f"tensors ({len(grad_tensors)} != {len(tensors)})")
    _check_outputs("backward(): tensors", tensors)
    if create_graph:                # torch's warning, once a process, of .grad's cycle
        warn_once("Using backward() with create_graph=True will create a reference cycle "
                  "between the parameter and its gradient which can cause a memory leak. We "
                  "recommend using autograd.grad when creating the graph to avoid this. If "
                  "you have to use this function, make sure to reset the .grad fields of "
                  "your parameters to None after use to break the cycle and avoid the leak.",
                  stacklevel=4)
    capture = None
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        _check_inputs("backward()", inputs)
        capture = _Wanted(inputs)                    # and the non-leaves retaining theirs
    grads = [_root_grad(t, g, f"backward(): grad_tensors[{i}]", create_graph)
             for i, (t, g) in enumerate(zip(tensors, grad_tensors))]
    retain = bool(create_graph if retain_graph is None else retain_graph)
    run = run_backward_graph if create_graph else run_backward
    captured = run(tensors, grads, retain, capture)
    if capture is not None:
        capture.run_hooks(captured, create_graph)
        for t in inputs:            # a non-leaf in inputs= retains its gradient from now on
            if t.grad_fn is not None:
                t._retains_grad = True
    (accumulate_graph if create_graph else accumulate)(captured)


class _Wanted:
    """What ``grad()`` and ``inputs=`` capture: the tensors asked for and the non-leaves that
    retain their gradient. ``on_path`` is what the engine runs nodes for (``on_paths``): for
    ``inputs=`` both, for ``grad()`` the tensors asked for, and a retaining tensor gets its
    ``.grad`` only where its node ran (``retained``), as torch's. ``on_paths`` lists in
    ``hooked`` the nodes it leaves out whose outputs carry tensor hooks; ``run_hooks`` runs
    those hooks on the gradients captured there, as torch runs a hook on a ``grad()`` input."""

    def __init__(self, tensors, retained_on_paths=True):
        self.ids, self.hooked, self.needed = {id(t) for t in tensors}, [], None
        self.on_path = self if retained_on_paths else (lambda t: id(t) in self.ids)

    def __call__(self, tensor):
        return id(tensor) in self.ids or tensor._retains_grad

    def retained(self, captured):
        """The captured gradients of the retaining tensors: those asked for, and the others
        whose node ran (torch's retain_grad hook fires wherever the gradient is computed)."""
        return {key: (t, g) for key, (t, g) in captured.items() if t._retains_grad
                and (key in self.ids or t.grad_fn in self.needed)}

    def run_hooks(self, captured, create_graph):
        if not self.hooked:
            return
        # a run of its own for multi-grad hooks (runs.py): this capture, the nodes that ran
        runs = started(captured, self, self.needed or (), ())
        try:
            with set_grad_enabled(create_graph):       # as in the loop: torch's mode in hooks
                for node in self.hooked:
                    for i, (tensor_id, hooks) in node.tensor_hooks.items():
                        held = captured.get(tensor_id)
                        if held is None or not hooks or held[0].grad_fn is not node \
                                or held[0]._output_index != i:
                            continue
                        run = _run_graph_hooks if create_graph else _run_hooks
                        captured[tensor_id] = (held[0],
                                               run(hooks, held[1], node.outputs_meta[i][0]))
        finally:
            runs.pop()


class _WantedEdges(_Wanted):
    """``grad()``'s capture where some inputs are ``GradientEdge``s of op nodes: the
    gradient of every tensor that is that node's output, however many Tensor objects hold
    it, gathered under the edge's stand-in (``_edge_tensor``)."""

    def __init__(self, tensors, edges):
        super().__init__(tensors, retained_on_paths=False)
        self.edges = edges
        self.on_path = self.wanted

    def wanted(self, tensor):
        return id(tensor) in self.ids or (tensor.grad_fn, tensor._output_index) in self.edges

    def __call__(self, tensor):
        return self.wanted(tensor) or tensor._retains_grad

    def gathered(self, captured):
        """``captured`` with each edge's gradient under its stand-in's id."""
        result = dict(captured)
        for key, (tensor, g) in captured.items():
            stand_in = self.edges.get((tensor.grad_fn, tensor._output_index))
            if stand_in is not None and key not in self.ids:
                held = result.get(id(stand_in))
                result[id(stand_in)] = (stand_in, g if held is None else held[1] + g)
        return result


def _edge_tensor(edge, edges=None):
    """A ``GradientEdge`` of ``grad()``'s outputs or inputs as a Tensor: an
    ``AccumulateGrad``'s leaf itself; for an op node's output, a stand-in Tensor of that
    output (shape and dtype, no values) which ``edges`` maps (node, index) to."""
    node, index = edge.node, edge.output_nr
    leaf = getattr(node, "variable", None)
    if leaf is not None:
        return leaf
    if not hasattr(node, "outputs_meta") or not 0 <= index < len(node.outputs_meta):
        raise RuntimeError(f"grad(): a GradientEdge must be one of an op node's outputs, got "
                           f"({type(node).__name__}, {index})")
    shape, dtype = node.outputs_meta[index]
    like = next((t._array for t in node.inputs if t is not None), None)   # NumPy or CuPy
    stand_in = _tensor.Tensor._from_op(array_module(like).empty(shape, dtype), node, index)
    if edges is not None:
        edges[(node, index)] = stand_in
    return stand_in


def _with_gradients(tensors, gradients):
    """(tensors, gradients) as tuples, from a Tensor or a sequence of Tensors and from None
    (one None per tensor), one gradient or a sequence of them, as torch takes them."""
    tensors = (tensors,) if isinstance(tensors, _tensor.Tensor) else tuple(tensors)
    if gradients is None:
        return tensors, (None,) * len(tensors)
    if not isinstance(gradients, (list, tuple)):          # one gradient, not a sequence
        return tensors, (gradients,)
    return tensors, tuple(gradients)


def _check_outputs(name, tensors):
    for i, t in enumerate(tensors):
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(f"{name}[{i}] must be a Tensor, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")


def _check_inputs(name, inputs):
    Tensor = _tensor.Tensor
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise GradientTypeError(f"{name}: inputs[{i}] must be a Tensor, got "
                                    f"{type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError(f"{name}: inputs[{i}] (shape {t.shape}) does not require "
                               "grad; create it with requires_grad=True")


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned, not accumulated
    (``torch.autograd.grad``): no input's ``.grad`` changes; a tensor that called
    ``retain_grad()`` and whose node runs gets its gradient in ``.grad``, as torch's.

    Args:
        outputs, inputs: a Tensor or a sequence of Tensors each, any of them may be a
            ``graph.GradientEdge`` (``get_gradient_edge(t)``: the gradient of ``t``'s node's
            output, whichever Tensor holds it); ``inputs`` may also be a dict of Tensors,
            whose gradients come back in a dict with its keys.
        grad_outputs: d(loss)/d(output) per output (arrays or Tensors); None for a
            one-element output.
        retain_graph: keep the saved arrays for another backward through the graph.
        create_graph: record the backward as a graph, so the gradients returned have
            history and can be differentiated again (double backward, ``double.py``).
        only_inputs: ignored, as in PyTorch (False gives its FutureWarning).
        allow_unused: None for an input the outputs do not depend on, instead of an error
            (the default: ``materialize_grads``).
        is_grads_batched: the first dim of each grad_output is a batch: the gradients of
            each index, stacked along a new first dim (torch's vmap; a loop here).
        materialize_grads: zeros, not None, for an input the outputs do not depend on
            (zeros that require grad under ``create_graph``, as torch's).

    Returns:
        a tuple of Tensors, one per input (None for an unused one): without history, or
        with it under ``create_graph``; a dict for a dict of inputs.

    Example:
        >>> x = mg.tensor([1.0, 2.0], requires_grad=True)
        >>> mg.grad((x * x).sum(), [x])
        (tensor([2., 4.]),)
    """
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    if is_grads_batched:
        return _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    Tensor = _tensor.Tensor
    if isinstance(outputs, GradientEdge):
        outputs = (outputs,)
    if isinstance(inputs, GradientEdge):
        inputs = (inputs,)
    outputs, grad_outputs = _with_gradients(outputs, grad_outputs)
    outputs = tuple(_edge_tensor(o) if isinstance(o, GradientEdge) else o for o in outputs)
    keys = list(inputs) if type(inputs) is dict else None
    if keys is None and isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `grad()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    inputs = (inputs,) if isinstance(inputs, Tensor) else \
        tuple(inputs.values() if keys is not None else inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if len(grad_outputs) != len(outputs):
        raise GradientMismatchError(f"grad(): {len(outputs)} outputs but {len(grad_outputs)} "
                                    "grad_outputs; give one gradient (or None) per output")
    _check_outputs("grad(): outputs", outputs)
    grads = [_root_grad(o, g, f"grad(): grad_outputs[{i}]", create_graph)
             for i, (o, g) in enumerate(zip(outputs, grad_outputs))]
    edges = {}
    if any(isinstance(t, GradientEdge) for t in inputs):
        inputs = tuple(_edge_tensor(t, edges) if isinstance(t, GradientEdge) else t
                       for t in inputs)
    wanted = _WantedEdges(inputs, edges) if edges else _Wanted(inputs, retained_on_paths=False)
    _check_inputs("grad()", inputs)
    retain = bool(create_graph if retain_graph is None else retain_graph)
    run = run_backward_graph if create_graph else run_backward
    captured = run(outputs, grads, retain, capture=wanted)
    wanted.run_hooks(captured, create_graph)
    if edges:
        captured = wanted.gathered(captured)
    retained = wanted.retained(captured)          # .grad of the non-leaves that retain it
    if retained:
        (accumulate_graph if create_graph else accumulate)(retained)
    unused = [i for i, t in enumerate(inputs) if id(t) not in captured]
    if unused and not allow_unused:
        shown = ", ".join(f"inputs[{i}] (shape {inputs[i].shape})" for i in unused)
        raise RuntimeError(f"grad(): the outputs do not depend on {shown}; pass "
                           "allow_unused=True to get None for it")
    found = [captured[id(t)][1] if id(t) in captured else None for t in inputs]
    if not create_graph:
        found = [None if g is None else Tensor._from_op(_own(g), None) for g in found]
    found = tuple(_zeros_like(t, create_graph) if g is None and materialize_grads else g
                  for g, t in zip(found, inputs))
    return found if keys is None else dict(zip(keys, found))


def _zeros_like(tensor, requires_grad):
    array = tensor._array
    zeros = _tensor.Tensor._from_op(array_module(array).zeros_like(array), None)
    return zeros.requires_grad_() if requires_grad else zeros


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``grad(..., is_grads_batched=True)``: one ``grad`` per index of the grad_outputs'
    first dim, the graph kept until the last, each input's gradients stacked (``_Stack``);
    an unused input's None, or with ``materialize_grads`` its zeros unbatched, as torch's."""
    Tensor = _tensor.Tensor
    outputs, grad_outputs = _with_gradients(outputs, grad_outputs)
    sizes = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(g, Tensor) or g.ndim == 0:
            got = "a 0-d Tensor" if isinstance(g, Tensor) else type(g).__name__
            raise ValueError(f"grad(): with is_grads_batched=True, grad_outputs[{i}] must be "
                             f"a Tensor whose first dim is the batch, got {got}")
        if isinstance(out, Tensor) and tuple(g.shape[1:]) != tuple(out.shape):
            raise GradientMismatchError(
                f"If `is_grads_batched=True`, we interpret the first dimension of each "
                f"grad_output as the batch dimension. The sizes of the remaining dimensions "
                f"are expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {tuple(g.shape[1:])} and output[{i}] "
                f"has a shape of {tuple(out.shape)}.")
        sizes.append(g.shape[0])
    if len(set(sizes)) > 1:
        raise ValueError(f"grad(): with is_grads_batched=True every grad_output's first dim "
                         f"is the batch's, got sizes {sizes}")
    if sizes and sizes[0] == 0:
        raise IndexError("grad(): is_grads_batched=True with a batch of size 0 (index 0 is "
                         "out of bounds for dimension 0 with size 0)")
    count = sizes[0] if sizes else 1
    keep = bool(create_graph if retain_graph is None else retain_graph)
    per_index = [grad(outputs, inputs, [g[b] for g in grad_outputs],
                      retain_graph=keep or b < count - 1, create_graph=create_graph,
                      allow_unused=allow_unused or materialize_grads)
                 for b in range(count)]
    keys = list(per_index[0]) if type(per_index[0]) is dict else None
    listed = inputs.values() if keys is not None else \
        (inputs,) if isinstance(inputs, Tensor) else inputs
    found = []
    for j, t in enumerate(listed):
        column = [r[keys[j]] if keys is not None else r[j] for r in per_index]
        if column[0] is None:
            found.append(_zeros_like(t, create_graph) if materialize_grads else None)
        else:
            found.append(_Stack.apply(*column))
    return tuple(found) if keys is None else dict(zip(keys, found))


class _Stack(Function):
    """The gradients of ``is_grads_batched``'s indices stacked along a new first dim."""

    @staticmethod
    def forward(ctx, *arrays):
        return array_module(arrays[0]).stack(arrays)

    @staticmethod
    def backward(ctx, grad):
        return tuple(grad[i] for i in range(grad.shape[0]))

    @staticmethod
    def graph_backward(ctx, grad):          # double backward (double.py): Tensor indexing
        return tuple(grad[i] for i in range(grad.shape[0]))
