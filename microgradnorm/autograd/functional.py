"""PyTorch's ``torch.autograd.functional``: ``vjp``, ``jacobian``, ``jvp``, ``hessian``,
``hvp`` and ``vhp``, computed as torch computes them, by reverse-mode passes of the engine.

* ``vjp``: one backward, vᵀ·J.
* ``jacobian``: one backward per output element, J[a, b] = ∂out[a]/∂in[b].
* ``jvp``: the double-backward trick, J·v = ∂(uᵀ·J)/∂u · v: the backward of a zero u
  recorded with ``create_graph=True`` (``double.py``) is linear in u, and its backward
  towards u gives J·v.
* ``hessian``: the Jacobian of the Jacobian, H[a, b] = ∂²f/∂in[a]∂in[b].
* ``vhp``: vᵀ·H = ∂(∇f·v)/∂in, a backward of the recorded gradient; ``hvp``: H·v by the
  double-backward trick again (equal to vhp for a twice continuously differentiable f).

``create_graph=True`` gives results with history, differentiable again and back to the
inputs that require grad; ``strict=True`` raises, with torch's words, where an output (or
the Jacobian, or the Hessian) does not depend on an input. Everything past the first
derivative needs the double backward of every op ``func`` runs: an op without one raises on
the second backward, naming the op.
"""

from ..backend import array_module
from .function import Function
from .gradients import grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from .inputs import _tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


# ----- torch's helpers: tuples in, nested tuples out -----------------------------------------
def _as_tuple(value, arg_name, fn_name, sequences=(tuple,)):
    """(whether ``value`` was a sequence, a tuple of its Tensors); the inputs may also be a
    list."""
    is_tuple = isinstance(value, sequences)
    values = tuple(value) if is_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, _tensor.Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where} has type {type(v)}.")
    return is_tuple, values


def _inputs(inputs, fn_name):
    return _as_tuple(inputs, "inputs", fn_name, (tuple, list))


def _outputs(outputs, fn_name):
    return _as_tuple(outputs, "outputs of the user-provided function", fn_name)


def _preprocess(tensors, create_graph, need_graph):
    """torch's ``_grad_preprocess``: under ``create_graph`` a Tensor that requires grad gets
    a new Tensor object with history (a view of itself: gradients reach it); any other is
    detached, requiring grad where ``need_graph``."""
    out = []
    for i, t in enumerate(tensors):
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
            continue
        if need_graph and not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError(f"inputs[{i}] is {t.dtype}: only Tensors of floating point "
                               "dtype can require gradients")
        out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _postprocess(values, create_graph):
    """Results without history unless ``create_graph`` (nested tuples kept)."""
    if isinstance(values[0], _tensor.Tensor):
        return values if create_graph else tuple(t.detach() for t in values)
    return tuple(_postprocess(v, create_graph) for v in values)


def _unpack(values, to_unpack):
    """torch's ``_tuple_postprocess``: undo ``_as_tuple`` (one flag, or two for a nested
    result: (outer was a tuple, inner was a tuple))."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            values = tuple(v[0] for v in values)
        return values if to_unpack[0] else values[0]
    return values if to_unpack else values[0]


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.shape != b.shape:
            prepend = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {b.size()} but got "
                               f"{a.size()}.")


def _vector(v, like, is_like_tuple, fn_name, create_graph, what):
    """``v`` checked against ``like`` (the outputs, or the inputs); None only where ``like``
    is a single Tensor of one element (the backward then seeds it with a one)."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _preprocess(v, create_graph, need_graph=False)
        _validate_v(v, like, is_like_tuple)
        return v
    if len(like) != 1 or like[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if {what} a single Tensor with a "
                           "single element.")
    return None


def _filled(tensor, value):
    """A Tensor without history of ``tensor``'s shape and dtype, every element ``value``
    (not ``tensor * 0``, which is NaN where ``tensor`` is inf)."""
    array = tensor._array
    return _tensor.Tensor._from_op(array_module(array).full_like(array, value), None)


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``grad`` of the outputs that require grad (None for each input when none does); an
    input they do not reach gets None."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    live = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not live:
        return (None,) * len(inputs)
    return grad([o for o, _ in live], inputs, [g for _, g in live], retain_graph=retain_graph,
                create_graph=create_graph, allow_unused=True)


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Zeros of ``refs[i]``'s shape where ``grads[i]`` is None; under ``strict`` that, and a
    result without history under ``create_graph``, raise (``stage`` picks the words)."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = _filled(refs[i], 0)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)


def _check_requires_grad(tensors, kind, strict):
    """Under ``strict``: each of ``tensors`` (the outputs, the gradients, the Jacobian or
    the Hessian) must depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(f"The hessian of the user-provided function with respect to "
                               f"input {i} is independent of the input. This is not allowed "
                               "in strict mode. You should ensure that your function is thrice "
                               "differentiable and that the hessian depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError("While computing the hessian, found that the jacobian of the "
                               f"user-provided function with respect to input {i} is "
                               "independent of the input. This is not allowed in strict mode. "
                               "You should ensure that your function is twice differentiable "
                               "and that the jacobian depends on the inputs (this would be "
                               "violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the "
                               "inputs of the user-provided function. This is not allowed in "
                               "strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require "
                           "gradients. The outputs must be computed in a differentiable "
                           "manner from the input when running in strict mode.")


def _single_element(outputs, is_tuple, fn_name):
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")


class Stack(Function):
    """The Jacobian's rows as one Tensor, out[k] = rows[k] (torch stacks them with
    ``torch.stack``; the engine's functional API has its own node, the ops sitting above
    it). Its gradient is the rows of the output's gradient, again with Tensor ops under
    ``create_graph=True``, so a Jacobian is differentiable (``hessian``)."""

    @staticmethod
    def forward(ctx, *rows):
        return array_module(rows[0]).stack(rows)             # (n, *row.shape)

    @staticmethod
    def backward(ctx, g):
        return tuple(g[k] if need else None for k, need in enumerate(ctx.needs_input_grad))

    @staticmethod
    def graph_backward(ctx, g):
        return tuple(g[k] if need else None for k, need in enumerate(ctx.needs_input_grad))


# ----- the functions --------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), vᵀ·J): the vector-Jacobian product at ``inputs``.

    Args:
        func: a function of Tensors returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: the vector, shaped as the outputs; None for a one-element output.
        create_graph: the results with history, differentiable again.
        strict: raise where an output is independent of an input (else zeros).

    Example:
        >>> out, g = mg.autograd.functional.vjp(lambda x: (x * x).sum(), mg.ones(3))
        >>> g
        tensor([2., 2., 2.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _inputs(inputs, "vjp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs(func(*inputs), "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _vector(v, outputs, is_outputs_tuple, "vjp", create_graph,
                    "the user-provided function returns")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(outputs, inputs, v, create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(result, create_graph), is_inputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output o and input i, a Tensor of shape
    o.shape + i.shape, J[a, b] = ∂o[a]/∂i[b]; nested as PyTorch's (a Tensor for one
    output and one input, a tuple per input, per output, or both). One backward pass per
    output element (``vectorize`` is accepted; "forward-mode", which PyTorch runs only
    vectorized, gives the same Jacobian by the same reverse passes).

    Args:
        create_graph: the Jacobian with history (``hessian`` is the Jacobian of one).
        strict: raise where an output is independent of an input (else zeros).

    Example:
        >>> mg.autograd.functional.jacobian(lambda x: x * 2, mg.ones(2))
        tensor([[2., 0.],
                [0., 2.]])
    """
    if strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or '
                             '"reverse-mode". Hint: If your function has more outputs than '
                             'inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph="
                                      'True` and `strategy="forward-mode"` are not supported '
                                      "together (yet). Please either set `create_graph=False`"
                                      ' or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               '`strategy="forward-mode"` are not supported together (yet). '
                               'Please either set `strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-"
                                      "reverse Hessian is only implemented for "
                                      "`vectorize=True`.")
    with enable_grad():
        is_inputs_tuple, inputs = _inputs(inputs, "jacobian")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs(func(*inputs), "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either "
                               "set `strict=False` or `vectorize=False`.")
        rows = tuple(_jacobian_of(i, o, inputs, create_graph, strict)
                     for i, o in enumerate(outputs))
    result = _unpack(_postprocess(rows, create_graph), (is_outputs_tuple, is_inputs_tuple))
    if strategy == "forward-mode" and is_inputs_tuple:    # torch's vectorized forward AD's
        result = [list(r) for r in result] if is_outputs_tuple else list(result)   # lists
    return result


def _jacobian_of(i, out, inputs, create_graph, strict):
    """Output i's Jacobian by each input: one backward per element of ``out``, seeded with
    that element's one-hot vector (torch's backward of ``out.reshape(-1)[k]``)."""
    xp, n = array_module(out._array), out.numel()
    rows = [[] for _ in inputs]
    for k in range(n):
        onehot = xp.zeros(n, out.dtype)
        onehot[k] = 1
        grads = _autograd_grad((out,), inputs, (onehot.reshape(out.shape),), create_graph,
                               retain_graph=True)
        for j, (row, g, t) in enumerate(zip(rows, grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {j}. This is not allowed in "
                                       "strict mode.")
                g = _filled(t, 0)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is "
                                   f"independent of input {i}. This is not allowed in strict "
                                   "mode when create_graph=True.")
            row.append(g)
    return tuple((Stack.apply(*row) if row else
                  _tensor.Tensor._from_op(xp.zeros((0,) + t.shape, t.dtype), None)
                  ).reshape(out.shape + t.shape) for row, t in zip(rows, inputs))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J·v): the Jacobian-vector product, by the double-backward trick as
    torch computes it: u ↦ uᵀ·J, recorded at u = 0, is linear in u, and its gradient by u
    in the direction v is J·v (two backward passes, whatever the size of the output).

    Example:
        >>> out, t = mg.autograd.functional.jvp(lambda x: x * 2, mg.ones(2), mg.ones(2))
        >>> t
        tensor([2., 2.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _inputs(inputs, "jvp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        v = _vector(v, inputs, is_inputs_tuple, "jvp", create_graph,
                    "the input to the user-provided function is")
        is_outputs_tuple, outputs = _outputs(func(*inputs), "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # the backward is linear in u: its value at u = 0 drops out, only finite matters
        u = tuple(_filled(o, 0).requires_grad_(True) for o in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, u, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(grad_inputs, u, v, create_graph)
        result = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(result, create_graph), is_outputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``: the Jacobian of its gradient,
    H[i][j] of shape inputs[i].shape + inputs[j].shape, H[i][j][a, b] =
    ∂²f/∂inputs[i][a]∂inputs[j][b] (a Tensor for one input, a tuple of tuples for a tuple).

    Args:
        func: returns a Tensor of one element (anything else raises, as torch).
        create_graph: the Hessian with history (third derivatives through it).
        strict: raise where the output, or its gradient, is independent of an input.
        vectorize, outer_jacobian_strategy: as ``jacobian``'s ``vectorize``, ``strategy``.

    Example:
        >>> mg.autograd.functional.hessian(lambda x: (x ** 3).sum(), mg.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _inputs(inputs, "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or '
                             '"reverse-mode".')

    def single_output(*args):
        out = func(*args)
        is_tuple, outputs = _outputs(out, "hessian")
        _check_requires_grad(outputs, "outputs", strict)
        _single_element(outputs, is_tuple, "hessian")
        return out.squeeze()

    def gradient(*args):
        if outer_jacobian_strategy == "forward-mode":
            args = tuple(t.requires_grad_(True) for t in args)
        jac = jacobian(single_output, args, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(result, (is_inputs_tuple, is_inputs_tuple))


def _scalar_and_gradient(func, inputs, v, create_graph, strict, fn_name):
    """The common start of vhp and hvp: (inputs as tuples, v, outputs, ∇f with history)."""
    is_inputs_tuple, inputs = _inputs(inputs, fn_name)
    inputs = _preprocess(inputs, create_graph, need_graph=True)
    v = _vector(v, inputs, is_inputs_tuple, fn_name, create_graph,
                "the input to the user-provided function is")
    is_outputs_tuple, outputs = _outputs(func(*inputs), fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    _single_element(outputs, is_outputs_tuple, fn_name)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), vᵀ·H): the vector-Hessian product of a scalar ``func``, the gradient
    of ∇f·v (one backward of the recorded gradient).

    Example:
        >>> out, p = mg.autograd.functional.vhp(lambda x: (x ** 3).sum(),
        ...                                      mg.tensor([1.0, 2.0]), mg.ones(2))
        >>> p
        tensor([ 6., 12.])
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_and_gradient(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(jac, inputs, v, create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(result, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H·v): the Hessian-vector product of a scalar ``func``, by the
    double-backward trick as torch computes it (slower than ``vhp``, which equals its
    transpose where f is twice continuously differentiable).

    Example:
        >>> out, p = mg.autograd.functional.hvp(lambda x: (x ** 3).sum(),
        ...                                     mg.tensor([1.0, 2.0]), mg.ones(2))
        >>> p
        tensor([ 6., 12.])
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_and_gradient(
            func, inputs, v, create_graph, strict, "hvp")
        u = tuple(_filled(t, 0).requires_grad_(True) for t in inputs)
        double_back = _autograd_grad(jac, inputs, u, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(double_back, u, v, create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(result, create_graph), is_inputs_tuple))
