"""PyTorch's ``torch.autograd.functional`` for first derivatives: ``vjp``, ``jacobian``
and ``jvp``, each by reverse-mode backward passes of the engine (``jvp`` contracts the
Jacobian, one backward pass per output element). The second-order functions (``hessian``,
``hvp``, ``vhp``) need a graph of the backward, which this engine does not record: they
raise NotImplementedError."""

from ..backend import array_module
from .gradients import grad
from .grad_mode import enable_grad
from .inputs import _tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _as_tuple(name, value):
    """(tuple of Tensors, whether ``value`` was a single Tensor)."""
    Tensor = _tensor.Tensor
    single = isinstance(value, Tensor)
    values = (value,) if single else tuple(value)
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name} must be a Tensor or a tuple of Tensors, got "
                            f"{type(v).__name__} at position {i}")
    return values, single


def _run(name, func, inputs):
    """Detached copies of the inputs that require grad, and func's outputs at them."""
    inputs, single_input = _as_tuple(f"{name}: inputs", inputs)
    inputs = tuple(t.detach().requires_grad_(t.is_floating_point() or t.is_complex())
                   for t in inputs)
    with enable_grad():
        outputs = func(*inputs)
    outputs, single_output = _as_tuple(f"{name}: the outputs of func", outputs)
    return inputs, single_input, outputs, single_output


def _check_first_order(name, create_graph):
    if create_graph:
        raise NotImplementedError(f"{name}: create_graph=True needs double backward, which "
                                  "this engine does not support")


def _gradients(outputs, inputs, grad_outputs, strict, name):
    """d(Σ grad_outputs·outputs)/d(input) per input: zeros where an input is unused (an
    error under ``strict``)."""
    live = [o for o in outputs if o.requires_grad]
    if not live:
        grads = (None,) * len(inputs)
    else:
        upstream = [g for o, g in zip(outputs, grad_outputs) if o.requires_grad]
        wanted = [t for t in inputs if t.requires_grad]
        found = iter(grad(live, wanted, upstream, retain_graph=True, allow_unused=True))
        grads = tuple(next(found) if t.requires_grad else None for t in inputs)
    if strict and any(g is None for g in grads):
        i = next(i for i, g in enumerate(grads) if g is None)
        raise RuntimeError(f"{name}: the output of func is independent of input {i}, which "
                           "is not allowed in strict mode")
    return tuple(g if g is not None else t.detach() * 0 for g, t in zip(grads, inputs))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), vᵀ·J): the vector-Jacobian product at ``inputs``.

    Args:
        func: a function of Tensors returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: the vector, shaped as the outputs; None for a one-element output.

    Example:
        >>> out, g = mg.autograd.functional.vjp(lambda x: (x * x).sum(), mg.ones(3))
    """
    _check_first_order("vjp", create_graph)
    inputs, single_input, outputs, single_output = _run("vjp", func, inputs)
    if v is None:
        if any(o.numel() != 1 for o in outputs):
            raise RuntimeError("vjp: v can be None only for a func with one-element outputs")
        v = tuple(o.detach() * 0 + 1 for o in outputs)
    v, _ = _as_tuple("vjp: v", v)
    if len(v) != len(outputs) or any(a.shape != o.shape for a, o in zip(v, outputs)):
        raise RuntimeError(f"vjp: v has shapes {[tuple(a.shape) for a in v]}, the outputs of "
                           f"func {[tuple(o.shape) for o in outputs]}")
    grads = _gradients(outputs, inputs, v, strict, "vjp")
    outputs = tuple(o.detach() for o in outputs)
    return (outputs[0] if single_output else outputs), (grads[0] if single_input else grads)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output o and input i, a Tensor of shape
    o.shape + i.shape, J[a, b] = ∂o[a]/∂i[b]; nested as PyTorch's (a Tensor for one
    output and one input, a tuple per input, per output, or both). One backward pass per
    output element (``vectorize`` and ``strategy`` are accepted; reverse mode only).

    Example:
        >>> mg.autograd.functional.jacobian(lambda x: x * 2, mg.ones(2))
        tensor([[2., 0.],
                [0., 2.]])
    """
    _check_first_order("jacobian", create_graph)
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f'jacobian: strategy must be "reverse-mode" or "forward-mode", got '
                         f"{strategy!r}")
    inputs, single_input, outputs, single_output = _run("jacobian", func, inputs)
    Tensor, rows = _tensor.Tensor, []
    for o in outputs:
        xp, n = array_module(o._array), o.numel()
        flat = []                               # one backward pass per output element
        for k in range(n):
            onehot = xp.zeros(n, o.dtype)
            onehot[k] = 1
            flat.append(_gradients([o], inputs, [onehot.reshape(o.shape)], strict, "jacobian"))
        per_input = []
        for i, t in enumerate(inputs):
            matrix = xp.stack([g[i]._array.reshape(-1) for g in flat]) if flat else \
                xp.zeros((0, t.numel()), t.dtype)
            per_input.append(Tensor._from_op(matrix.reshape(o.shape + t.shape), None))
        rows.append(per_input[0] if single_input else tuple(per_input))
    return rows[0] if single_output else tuple(rows)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J·v): the Jacobian-vector product, by contracting the Jacobian.

    Example:
        >>> out, t = mg.autograd.functional.jvp(lambda x: x * 2, mg.ones(2), mg.ones(2))
    """
    _check_first_order("jvp", create_graph)
    inputs_t, single_input = _as_tuple("jvp: inputs", inputs)
    if v is None:
        if any(t.numel() != 1 for t in inputs_t):
            raise RuntimeError("jvp: v can be None only for one-element inputs")
        v = tuple(t.detach() * 0 + 1 for t in inputs_t)
    v, _ = _as_tuple("jvp: v", v)
    if len(v) != len(inputs_t) or any(a.shape != t.shape for a, t in zip(v, inputs_t)):
        raise RuntimeError(f"jvp: v has shapes {[tuple(a.shape) for a in v]}, the inputs "
                           f"{[tuple(t.shape) for t in inputs_t]}")
    _, _, outputs, single_output = _run("jvp", func, inputs_t)
    jac = jacobian(func, inputs_t, strict=strict)
    jac = jac if not single_output else (jac,)
    products = []
    for o, row in zip(outputs, jac):
        total = o.detach() * 0
        for j, t in zip(row, v):
            total = total + (j.reshape(o.numel(), t.numel()) @ t.detach().reshape(-1)
                             ).reshape(o.shape)
        products.append(total)
    outputs = tuple(o.detach() for o in outputs)
    return ((outputs[0], products[0]) if single_output else (outputs, tuple(products)))


def _second_order(name):
    def refused(*args, **kwargs):
        raise NotImplementedError(f"{name} needs double backward (a graph of the backward), "
                                  "which this engine does not record")
    refused.__name__ = name
    refused.__doc__ = f"PyTorch's ``{name}``: not supported (no double backward)."
    return refused


hessian, hvp, vhp = (_second_order(n) for n in ("hessian", "hvp", "vhp"))
