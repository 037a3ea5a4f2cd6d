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


def _as_tuple(name, value, sequences=(tuple, list)):
    """(tuple of Tensors, whether ``value`` was a single Tensor)."""
    Tensor = _tensor.Tensor
    single = isinstance(value, Tensor)
    if not single and not isinstance(value, sequences):
        raise TypeError(f"{name} must be a Tensor or a tuple of Tensors, got "
                        f"{type(value).__name__}")
    values = (value,) if single else tuple(value)
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name} must be a Tensor or a tuple of Tensors, got "
                            f"{type(v).__name__} at position {i}")
    return values, single


def _filled(tensor, value):
    """A Tensor without history of ``tensor``'s shape and dtype, every element ``value``
    (not ``tensor * 0``, which is NaN where ``tensor`` is inf)."""
    array = tensor._array
    return _tensor.Tensor._from_op(array_module(array).full_like(array, value), None)


def _run(name, func, inputs):
    """Detached copies of the inputs, requiring grad, and func's outputs at them."""
    inputs, single_input = _as_tuple(f"{name}: inputs", inputs)
    for i, t in enumerate(inputs):
        if not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError(f"{name}: inputs[{i}] is {t.dtype}: only Tensors of floating "
                               "point dtype can require gradients")
    inputs = tuple(t.detach().requires_grad_(True) for t in inputs)
    with enable_grad():
        outputs = func(*inputs)
    outputs, single_output = _as_tuple(f"{name}: the output of func", outputs, (tuple,))
    return inputs, single_input, outputs, single_output


def _check_first_order(name, create_graph):
    if create_graph:
        raise NotImplementedError(f"{name}: create_graph=True needs double backward, which "
                                  "this engine does not support")


def _gradients(outputs, inputs, grad_outputs, strict, name):
    """d(Σ grad_outputs·outputs)/d(input) per input: zeros where an input is unused (an
    error under ``strict``)."""
    live = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    grads = (grad([o for o, _ in live], inputs, [g for _, g in live], retain_graph=True,
                  allow_unused=True) if live else (None,) * len(inputs))
    if strict and any(g is None for g in grads):
        i = next(i for i, g in enumerate(grads) if g is None)
        raise RuntimeError(f"{name}: the output of func is independent of input {i}, which "
                           "is not allowed in strict mode")
    return tuple(g if g is not None else _filled(t, 0) for g, t in zip(grads, inputs))


def _vector(name, v, like, what):
    """``v`` of vjp or jvp as a tuple shaped as ``like`` (the outputs, or the inputs); None
    means ones, for one-element ``like`` only."""
    if v is None:
        if any(t.numel() != 1 for t in like):
            raise RuntimeError(f"{name}: v can be None only where {what} have one element")
        return tuple(_filled(t, 1) for t in like)
    v, _ = _as_tuple(f"{name}: v", v)
    if len(v) != len(like) or any(a.shape != t.shape for a, t in zip(v, like)):
        raise RuntimeError(f"{name}: v has shapes {[tuple(a.shape) for a in v]}, {what} "
                           f"{[tuple(t.shape) for t in like]}")
    return v


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
    v = _vector("vjp", v, outputs, "the outputs of func")
    grads = _gradients(outputs, inputs, v, strict, "vjp")
    outputs = tuple(o.detach() for o in outputs)
    return (outputs[0] if single_output else outputs), (grads[0] if single_input else grads)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output o and input i, a Tensor of shape
    o.shape + i.shape, J[a, b] = ∂o[a]/∂i[b]; nested as PyTorch's (a Tensor for one
    output and one input, a tuple per input, per output, or both). One backward pass per
    output element (``vectorize`` is accepted; "forward-mode", which PyTorch runs only
    vectorized, gives the same Jacobian by the same reverse passes).

    Example:
        >>> mg.autograd.functional.jacobian(lambda x: x * 2, mg.ones(2))
        tensor([[2., 0.],
                [0., 2.]])
    """
    _check_first_order("jacobian", create_graph)
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f'jacobian: strategy must be "reverse-mode" or "forward-mode", got '
                         f"{strategy!r}")
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("jacobian: computing the Jacobian in forward-mode is only "
                                  "implemented for vectorize=True")
    return _jacobian(*_run("jacobian", func, inputs), strict)


def _jacobian(inputs, single_input, outputs, single_output, strict):
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
    """(func(inputs), J·v): the Jacobian-vector product, by contracting the Jacobian (func
    runs once).

    Example:
        >>> out, t = mg.autograd.functional.jvp(lambda x: x * 2, mg.ones(2), mg.ones(2))
    """
    _check_first_order("jvp", create_graph)
    inputs, single_input, outputs, single_output = _run("jvp", func, inputs)
    v = _vector("jvp", v, inputs, "the inputs")
    jac = _jacobian(inputs, False, outputs, False, strict)
    products = []
    for o, row in zip(outputs, jac):
        total = 0
        for j, t in zip(row, v):                # in the Jacobian's dtype, as the inputs'
            total = total + j._array.reshape(o.numel(), t.numel()) @ \
                t._array.reshape(-1).astype(j.dtype, copy=False)
        products.append(_tensor.Tensor._from_op(
            (total + array_module(o._array).zeros(o.numel(), o.dtype)).reshape(o.shape), None))
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
