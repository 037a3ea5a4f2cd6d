"""``grad``: the gradients of outputs with respect to chosen inputs, returned, with no
``.grad`` touched (``torch.autograd.grad``), by the engine's backward loop."""

from .engine import run_backward
from .hooks import _own
from .inputs import _root_grad, _tensor


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
