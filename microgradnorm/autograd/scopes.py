"""What labels the nodes and watches them: the module scope an ``nn.Module`` pushes while it
runs, the op group a functional norm opens (the visualizer folds both into boxes), and the
observers ``checks.memory`` and the profiler register."""

import contextlib
import itertools
import threading

from .grad_mode import _state


# (thread ident, observer, whether it sees the calls that record no node) for
# ``checks.memory``'s timeline and the profiler; empty, it costs one test per op.
_observers = []


@contextlib.contextmanager
def observe(observer, unrecorded=False):
    """Call ``observer.on_forward(node)``, ``on_backward(node, pending grads, captured)`` and
    ``on_free(nodes)`` for the graphs this thread records and back-propagates in the block;
    with ``unrecorded=True`` also ``on_unrecorded(ctx, outputs)`` for each op call that
    records no node (under ``no_grad``, or no input requires grad): ``ctx`` holds the
    inputs and options, but no graph holds it."""
    entry = (threading.get_ident(), observer, unrecorded)
    _observers.append(entry)
    try:
        yield observer
    finally:
        _observers.remove(entry)


def _observers_here():
    here = threading.get_ident()
    return [observer for thread, observer, _ in _observers if thread == here]


def notify_forward(ctx, outputs, recorded):
    """``Function.apply``'s call of this thread's observers after an op: a recorded node
    goes to each, a call that records none to those that asked for them."""
    here = threading.get_ident()
    for thread, observer, unrecorded in list(_observers):
        if thread == here:
            if recorded:
                observer.on_forward(ctx)
            elif unrecorded:
                observer.on_unrecorded(ctx, outputs)


def in_module_call():
    """True while an ``nn.Module`` is running its forward."""
    return bool(_state.module_stack)


class _pushed:
    """``entry`` on top of ``stack`` for a block (a class: cheaper than a generator's
    context manager, once per module call)."""

    __slots__ = ("stack", "entry")

    def __init__(self, stack, entry):
        self.stack, self.entry = stack, entry

    def __enter__(self):
        self.stack.append(self.entry)

    def __exit__(self, *exc):
        self.stack.pop()
        return False


def module_scope(path):
    # nn.Module pushes its path while it runs, so nodes know which module made them
    return _pushed(_state.module_stack, path)


def _module_path():
    stack = _state.module_stack
    return stack[-1] if stack else ""


# A functional norm marks the nodes of one call, so the visualizer can fold a composite norm
# into one box; numbers are unique across threads (itertools.count is atomic under the GIL).
_group_calls = itertools.count()


def op_group(name):
    return _pushed(_state.group_stack, (name, next(_group_calls)))
