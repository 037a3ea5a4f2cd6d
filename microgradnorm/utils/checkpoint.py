"""``utils.checkpoint``, ``torch.utils.checkpoint``: activation checkpointing, with torch's
arguments, warnings and errors.

``use_reentrant=True`` (torch's default, with a warning when it is not passed) does what
torch's reentrant form does, and saves the same memory: the function runs without a graph,
one node (``CheckpointFunction``) keeps only its inputs, and its backward runs the function
again with the random state of the forward (``preserve_rng_state``: the same dropout masks)
and backpropagates through that graph, the parameters inside the function getting their
gradients in ``.grad``. As torch's, a call whose tensor inputs all lack ``requires_grad``
warns and gives outputs without a graph (the parameters inside get no gradient).

``use_reentrant=False`` (torch's recommendation) is built on the saved-tensor hooks, as
torch's (``checkpoint_recompute.py``): the function runs under ``context_fn``'s first
context manager, its nodes keep a small holder for each tensor they save, and the graph
keeps its inputs, not its activations; the first unpack in each backward runs it again
(the forward's random state, ``context_fn``'s second context manager) up to the last saved
tensor, and a recomputed tensor whose shape or dtype differs raises ``CheckpointError``
(``determinism_check="default"``). Every autograd feature works through it
(``mg.autograd.grad``, ``retain_graph``, ``create_graph``, keyword arguments, nesting)."""

import contextlib
import warnings

from .. import factories
from ..autograd import backward as run_backward, enable_grad, is_grad_enabled, no_grad
from ..autograd.custom import Function
from ..nn.container import Sequential
from ..random import fork_rng
from ..tensor import Tensor
from .checkpoint_recompute import CheckpointError, checkpoint_without_reentrant

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential", "noop_context_fn"]


def noop_context_fn():
    """The default ``context_fn``: two context managers that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointFunction(Function):
    """torch's ``CheckpointFunction``: forward runs ``function`` without a graph and keeps
    its tensor inputs; backward runs it again with a graph, from the forward's random state,
    and backpropagates the output gradients through it."""

    @staticmethod
    def forward(ctx, function, preserve_rng_state, *args):
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=5)
        ctx.function, ctx.preserve_rng_state = function, preserve_rng_state
        if preserve_rng_state:
            ctx.rng_state = factories.get_rng_state()
        # the non-tensor arguments kept as they are, a None where each tensor goes
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))
        with no_grad():
            return function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            # a leaf of its own, requiring grad where the input did (torch's detach_variable)
            inputs[i] = tensor.detach().requires_grad_(tensor.requires_grad)
        with fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                factories.set_rng_state(ctx.rng_state)
            with enable_grad():
                outputs = ctx.function(*inputs)
        outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
        pairs = [(out, g) for out, g in zip(outputs, grads)
                 if isinstance(out, Tensor) and out.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        run_backward([out for out, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in inputs)


def _tensors_of(output):
    # what the node returns of function's result: the Tensor, or a tuple's Tensors; a
    # placeholder where there are none (a node returns a Tensor; the caller drops it)
    if isinstance(output, Tensor):
        return output
    tensors = tuple(o for o in output if isinstance(o, Tensor)) \
        if isinstance(output, tuple) else ()
    return tensors or factories.zeros(())


def _reentrant(function, preserve, args):
    """``CheckpointFunction`` over ``function``'s Tensors, its other outputs put back as
    torch's Function passes them: a tuple's non-Tensors (``(hidden, None)``) in their places,
    a result that is neither a Tensor nor a tuple (a list, a dict, None) as it came, its
    Tensors without a graph; a namedtuple comes back a tuple."""
    whole = []                    # the forward's result; the backward's rerun is not kept

    def tensors_only(*inputs):
        output = function(*inputs)
        if not whole:
            whole.append(output)
        return _tensors_of(output)

    tensors = CheckpointFunction.apply(tensors_only, preserve, *args)
    output, whole[0] = whole[0], None               # nothing of it stays with the node
    if isinstance(output, Tensor):
        return tensors
    if not isinstance(output, tuple) or not any(isinstance(o, Tensor) for o in output):
        return output
    tensors = iter(tensors if isinstance(tensors, tuple) else (tensors,))
    return tuple(next(tensors) if isinstance(o, Tensor) else o for o in output)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """``function(*args, **kwargs)``, checkpointed (``torch.utils.checkpoint.checkpoint``):
    the same values and gradients as calling it.

    Args:
        function: what to run; with ``use_reentrant=True``, of what it returns, a Tensor
            or a tuple's Tensors are in the graph (the rest passes through, as torch's).
        args: its arguments.
        use_reentrant: True (the default when None, after torch's warning) or False: the
            activations are freed and recomputed in backward, by one reentrant node or by
            the saved-tensor hooks (module docstring).
        context_fn: a callable returning two context managers; the function runs in the
            first, its recomputation in the second (``use_reentrant=False`` only).
        determinism_check: "default" (a recomputed saved tensor of another shape, dtype or
            device raises ``CheckpointError``) or "none" (``use_reentrant=False``).
        debug: taken, as torch's (``use_reentrant=False`` only).
        early_stop: stop the recomputation once every saved tensor is recomputed
            (``use_reentrant=False``; default True, as torch's).
        preserve_rng_state: (in ``kwargs``, default True) recompute with the forward's
            random state, so dropout draws the same masks.
        kwargs: keyword arguments of ``function`` (``use_reentrant=False`` only).

    Example:
        >>> y = checkpoint(block, x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9, calling checkpoint without "
                      "use_reentrant will raise an exception. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return _reentrant(function, preserve, args)
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if not is_grad_enabled():               # nothing is recorded: nothing to recompute
        forward_context, _ = context_fn()
        with forward_context:
            return function(*args, **kwargs)
    return checkpoint_without_reentrant(function, args, kwargs, preserve, context_fn,
                                        determinism_check, early_stop)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list, or an ``nn.Sequential``'s children) in order on ``input``,
    each of the first ``segments - 1`` runs of ``len(functions) // segments`` of them
    checkpointed, the rest run as they are (``torch.utils.checkpoint.checkpoint_sequential``,
    with its warning when ``use_reentrant`` is not passed).

    Example:
        >>> y = checkpoint_sequential(model, 2, x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
                      "parameter should be passed explicitly. In version 2.9 we will raise an "
                      "exception if use_reentrant is not passed. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
