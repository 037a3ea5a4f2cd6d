"""PyTorch's kind of custom op, ``mg.autograd.Function`` (``torch.autograd.Function``):
forward and backward written with Tensors, as PyTorch users write them. Each subclass gets
a node class of the engine's own kind (``function.Function``, on arrays) that runs the
user's methods between Tensors and arrays, so the engine, the visualizer and graph capture
see one node per call, named after the user's class.

What PyTorch does and this follows: forward and backward run with grad disabled; the
inputs that are not Tensors reach forward as they are; ``ctx.needs_input_grad`` has one
bool per forward argument; ``ctx.save_for_backward`` keeps Tensors that
``ctx.saved_tensors`` returns (an in-place change of one before backward raises);
backward returns one gradient (or None) per forward argument, extra trailing Nones
allowed; outputs marked ``ctx.mark_non_differentiable`` (and integer outputs) do not
require grad, and backward receives zeros for them; the ``setup_context`` form (forward
without ctx) works. What differs (docs/pytorch.md): the gradients are always materialized
(``set_materialize_grads(False)`` is accepted and changes nothing), ``mark_dirty`` only
moves the version counters of the inputs written in place, and there is no double
backward.
"""

import inspect

from .function import Function as _EngineFunction
from .grad_mode import no_grad
from .inputs import _tensor


class _Node(_EngineFunction):
    """The engine's node of one user Function class (``user``); made per subclass."""

    user = None

    @staticmethod
    def forward(ctx, *arrays, call):
        args, kwargs, positions = call
        Tensor, user = _tensor.Tensor, ctx.function.user
        args = list(args)
        needs = ctx.needs_input_grad
        for i, array, original in zip(positions, arrays, [args[i] for i in positions]):
            args[i] = Tensor._from_op(array, None)          # the array apply was given
            args[i].requires_grad = original.requires_grad
        ctx.needs_input_grad = tuple(
            needs[positions.index(i)] if i in positions else False for i in range(len(args)))
        ctx.positions, ctx.non_differentiable, ctx.dirty = positions, (), ()
        with no_grad():
            if user._setup_form():
                output = user.forward(*args, **kwargs)
                user.setup_context(ctx, tuple(args), output)
            else:
                output = user.forward(ctx, *args, **kwargs)
        outputs = output if isinstance(output, tuple) else (output,)
        for i, t in enumerate(outputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"{user.__name__}.forward must return a Tensor or a tuple of "
                                f"Tensors, got {type(t).__name__} at output {i}")
        marked = {id(t) for t in ctx.non_differentiable}
        ctx.non_differentiable = tuple(i for i, t in enumerate(outputs) if id(t) in marked)
        written = {id(t._array) for t in ctx.dirty}
        for t in ctx.inputs:                    # the caller's tensors count the writes
            if id(t._array) in written:
                t._bump_version()
        ctx._saved = tuple(t._array if isinstance(t, Tensor) else t for t in ctx._saved)
        arrays_out = tuple(t._array for t in outputs)
        return arrays_out if isinstance(output, tuple) else arrays_out[0]

    @staticmethod
    def backward(ctx, *grads):
        Tensor, user = _tensor.Tensor, ctx.function.user
        inputs = {id(t._array): t for t in ctx.inputs if t is not None}   # the caller's
        ctx.saved_tensors = tuple(_as_tensor(a, inputs) for a in ctx.saved)
        with no_grad():
            result = user.backward(ctx, *[None if g is None else Tensor._from_op(g, None)
                                          for g in grads])
        result = result if isinstance(result, tuple) else (result,)
        expected = len(ctx.needs_input_grad)
        if len(result) < expected or any(g is not None for g in result[expected:]):
            raise RuntimeError(f"function {user.__name__}Backward returned an incorrect number "
                               f"of gradients (expected {expected}, got {len(result)})")
        for i, g in enumerate(result[:expected]):
            if g is not None and i not in ctx.positions:
                raise RuntimeError(f"function {user.__name__}Backward returned a gradient "
                                   f"different than None at position {i + 1}, but the "
                                   "corresponding forward input was not a Tensor")
        out = []
        for i in ctx.positions:
            g = result[i]
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"function {user.__name__}Backward returned {type(g).__name__} "
                                f"as the gradient of argument {i}; expected a Tensor or None")
            out.append(None if g is None else g._array)
        return tuple(out)


def _as_tensor(array, inputs):
    """A saved array as a Tensor: the caller's input where it is one's data (as PyTorch
    gives back the input itself), else a Tensor of it without history."""
    if array is None:
        return None
    tensor = inputs.get(id(array))
    return tensor if tensor is not None else _tensor.Tensor._from_op(array, None)


class Function:
    """A differentiable op written with Tensors, PyTorch's ``torch.autograd.Function``:
    subclass it with static methods and call ``apply``.

        forward(ctx, *args, **kwargs) -> Tensor or tuple of Tensors   (grad disabled)
        backward(ctx, *grad_outputs)  -> one gradient or None per forward argument

    or ``forward(*args)`` without ctx and ``setup_context(ctx, inputs, output)``. ``ctx``
    is the graph node: ``ctx.save_for_backward(*tensors)`` / ``ctx.saved_tensors``,
    ``ctx.needs_input_grad``, ``ctx.mark_non_differentiable(*outputs)``; any other
    attribute set in forward is there in backward. (``mg.Function`` is the engine's own
    base, on arrays, that the built-in ops subclass.)

    Example:
        >>> class Square(mg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         x, = ctx.saved_tensors
        ...         return 2 * x * grad
        >>> x = mg.tensor([3.0], requires_grad=True)
        >>> Square.apply(x).backward(); x.grad
        tensor([6.])
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._node = type(cls.__name__, (_Node,), {"user": cls, "__module__": cls.__module__,
                                                  "__qualname__": cls.__qualname__})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """The op on Tensors, with grad disabled."""
        raise NotImplementedError("a Function subclass must define forward")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: what a ctx-free ``forward(*args)`` keeps, given its inputs and output."""
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grad_outputs):
        """The gradient of each forward argument (None where not needed)."""
        raise NotImplementedError("a Function subclass must define backward")

    vjp = backward

    @classmethod
    def _setup_form(cls):
        return cls.setup_context is not Function.setup_context

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on ``args``; the outputs get one node when an input requires grad."""
        if cls is Function:
            raise RuntimeError("apply() on Function itself: subclass it with forward and "
                               "backward")
        if cls._setup_form():
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        Tensor = _tensor.Tensor
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        outputs = cls._node.apply(*[args[i] for i in positions],
                                  call=(args, kwargs, positions))
        several = isinstance(outputs, tuple)
        outputs = outputs if several else (outputs,)
        node = outputs[0].grad_fn
        if node is not None:
            for i, t in enumerate(outputs):       # not differentiable: integer or marked
                if i in node.non_differentiable or not (
                        t.is_floating_point() or t.is_complex()):
                    t.grad_fn, t.requires_grad = None, False
        return outputs if several else outputs[0]



def Variable(data, requires_grad=False):
    """PyTorch's legacy ``Variable(tensor, requires_grad=False)``: a Tensor without history
    sharing ``data``'s memory."""
    Tensor = _tensor.Tensor
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable: data must be a Tensor, got {type(data).__name__}")
    return data.detach().requires_grad_(requires_grad)
