"""Tensor hooks: a leaf keeps its own, a non-leaf's node keeps them per output; each sees
the gradient as a Tensor and may return a replacement. A leaf's post-accumulate hooks see
the leaf itself once ``backward()`` has written its ``.grad``."""

import itertools
import threading

import numpy as np

from ..backend import array_module, silent_floats
from .grad_mode import set_grad_enabled
from .inputs import GradientTypeError, _tensor
from .runs import running


class RemovableHandle:
    """A hook's handle: ``remove()`` unregisters it, as does leaving it as a context manager.
    ``extra_dict`` (a dict or a list of dicts, torch's): tables of the hook's flags
    (a module hook's ``with_kwargs``), keyed by the same id, that ``remove()`` clears too."""

    _ids = itertools.count()

    def __init__(self, hooks, *, extra_dict=None):
        self.hooks = hooks
        self.id = next(RemovableHandle._ids)
        self.extra = () if extra_dict is None else \
            tuple(extra_dict) if isinstance(extra_dict, list) else (extra_dict,)

    def remove(self):
        """Unregister the hook."""
        self.hooks.pop(self.id, None)
        for table in self.extra:
            table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def register_hook(tensor, hook):
    """``Tensor.register_hook``: kept by a leaf, or by a non-leaf's node per output."""
    if not callable(hook):
        raise TypeError(f"register_hook: hook must be callable, got {type(hook).__name__}")
    if not tensor._requires_grad:
        raise RuntimeError("register_hook: cannot register a hook on a tensor that doesn't "
                           "require grad")
    node = tensor.grad_fn
    if node is None:
        if tensor._hooks is None:
            tensor._hooks = {}
        hooks = tensor._hooks
    else:
        if node.tensor_hooks is None:
            node.tensor_hooks = {}
        # keyed by output; the tensor's id lets a retained .grad see the hooked gradient
        entry = node.tensor_hooks.setdefault(tensor._output_index, (id(tensor), {}))
        hooks = entry[1]
    return added(hooks, hook)


def added(hooks, hook):
    """Put ``hook`` in ``hooks``, a {handle id: hook} table; the handle removes it."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_post_accumulate_grad_hook(tensor, hook):
    """``Tensor.register_post_accumulate_grad_hook``: ``hook(tensor)`` runs after each
    ``backward()`` has accumulated into the leaf's ``.grad`` (torch's rule: leaves that
    require grad only; ``mg.grad``, which accumulates nothing, runs none)."""
    if not callable(hook):
        raise TypeError(f"register_post_accumulate_grad_hook: hook must be callable, got "
                        f"{type(hook).__name__}")
    if not tensor._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if tensor.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    if tensor._post_accumulate_hooks is None:
        tensor._post_accumulate_hooks = {}
    _post_hooks[:] = [True]
    return added(tensor._post_accumulate_hooks, hook)


def accumulate(captured):
    """Add each captured gradient ({id: (tensor, gradient)}, ``run_backward``'s) into its
    tensor's ``.grad``, then run the post-accumulate hooks. Gradients accumulate across
    backward() calls (PyTorch's AccumulateGrad): the first is a Tensor of its own, later ones
    add into it; zero_grad() clears them. Under a lock: NumPy drops the GIL inside +=, and
    two threads adding into one leaf would lose one addend."""
    with _accumulate_lock, silent_floats():
        for tensor, g in captured.values():       # (_grad: no property calls per tensor)
            held = tensor._grad
            if held is None or held._requires_grad and not getattr(     # (CuPy: no flag)
                    held._array.flags, "writeable", True):
                total = _own(g.copy()) if held is None else held._array + g
                if held is None and not tensor._array.flags.c_contiguous:
                    total = _in_layout_of(tensor._array, total)
                tensor._grad = _tensor.Tensor._from_op(total, None)
            else:         # a .grad with history (create_graph) keeps it, as torch's += does
                try:
                    held._array += g
                except ValueError as error:     # a .grad set to an expanded (read-only) view
                    raise RuntimeError(
                        f"unsupported operation: the .grad of a tensor of shape "
                        f"{tuple(tensor.shape)} cannot take the gradient in place: more than "
                        "one element of it refers to a single memory location (or it is "
                        "read-only); assign it a clone() first") from error
                held._bump_version()
    if _post_hooks:         # register_post_accumulate_grad_hook's, unlocked
        _run_post_hooks(captured)


_accumulate_lock = threading.Lock()


def _in_layout_of(data, g):
    # torch's AccumulateGrad layout contract: .grad has the strides of its (dense) tensor,
    # a channels-last leaf's gradient is channels-last
    out = array_module(data).empty_like(data, dtype=g.dtype)    # (grad_dtype's)
    out[...] = g
    return out


def _run_post_hooks(captured, create_graph=False):
    """After ``backward()`` has written every ``.grad`` and released its lock (a hook may
    step an optimizer or start another backward): each accumulated leaf's post-accumulate
    hooks, in registration order, with grad mode off (on under ``create_graph``), as torch
    runs them."""
    with set_grad_enabled(create_graph):
        for tensor, _ in captured.values():
            if tensor._post_accumulate_hooks:
                for hook in list(tensor._post_accumulate_hooks.values()):
                    if hook(tensor) is not None:
                        raise GradientTypeError("Tensor post accumulate grad hooks "
                                                "should return None.")


# [True] once any post-accumulate hook has been registered: until then the engine's
# backward() makes no call for them (a per-backward cost counted in the host-cost tests)
_post_hooks = []


def _run_hooks(hooks, g, shape):
    for hook in list(hooks.values()):
        result = hook(_tensor.Tensor._from_op(_own(g), None))    # a Tensor, as torch's
        if result is None:
            continue
        result = result._array if isinstance(result, _tensor.Tensor) else result
        if not hasattr(result, "dtype"):        # torch's TypeError for what is no tensor
            raise TypeError(f"expected Variable, but hook returned "
                            f"'{type(result).__name__}'")
        if tuple(result.shape) != tuple(shape):
            raise RuntimeError(f"a hook returned {type(result).__name__} of shape "
                               f"{tuple(getattr(result, 'shape', ()))}; a hook must return "
                               f"None or an array of the gradient's shape {tuple(shape)}")
        if result.dtype != g.dtype:
            _refuse_dtype(hook, g.dtype, result.dtype)
        g = result
    return g


def _leaf_final(tensor, g):
    """A leaf's gradient once the loop is done: cast to its ``grad_dtype`` where one was set
    (None keeps it), then through its hooks, which so see that dtype, as torch's."""
    if tensor._grad_cast:
        wanted = tensor.__dict__.get("_grad_dtype")
        if wanted is not None and g.dtype != wanted:
            g = g.astype(wanted)
    return g if tensor._hooks is None else _run_hooks(tensor._hooks, g, tensor.shape)


def _refuse_dtype(hook, dtype, returned):
    # torch's check of a tensor hook's result (validate_outputs): the gradient's dtype kept
    raise RuntimeError(f"hook '{getattr(hook, '__name__', hook)}' has changed the type of value "
                       f"(was {dtype} got {returned})")


def _run_output_hooks(node, grads, captured, run=None):
    # hooks replace an output's total gradient, its retained (captured) copy too; run:
    # how a gradient goes through them (arrays here, Tensors with history in double.py)
    run = run or _run_hooks
    grads = list(grads)
    here = running()[-1]        # the run calling: a multi-grad hook reads node and grads
    here.node, here.grads = node, grads
    try:
        for i, (tensor_id, hooks) in node.tensor_hooks.items():
            if grads[i] is None or not hooks:
                continue
            shape = node.outputs_meta[i][0]
            grads[i] = run(hooks, grads[i], shape)
            held = captured.get(tensor_id)
            if held is not None and held[0].grad_fn is node and held[0]._output_index == i:
                captured[tensor_id] = (held[0], grads[i])
    finally:
        here.node = here.grads = None
    return grads


def _own(g):
    # a gradient as an array of its own (a 0-d sum can come out a NumPy scalar)
    return np.array(g) if isinstance(g, np.generic) else g
