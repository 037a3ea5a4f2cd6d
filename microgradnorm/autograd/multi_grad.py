"""``torch.autograd.graph.register_multi_grad_hook``: one hook on the gradients of several
tensors, called once per backward, after the last of them that backward computes ("all"),
or with the first of them computed ("any").

Each tensor gets a tensor hook, as torch's; what they share is the backward that runs them.
A hook that fires reads that backward from the record of the runs in progress
(``runs.py``): the innermost ``Run`` of its thread, pushed by the engine's loop
(``engine.run_backward``, or ``double.run_backward_graph`` under ``create_graph``) or by
``gradients._Wanted.run_hooks`` for the hooks on ``grad()``'s inputs after the loop. Its
``captured`` table, one per run, keys the run's state here; the first time, its ``order``
(the nodes it executes), ``capture`` and ``roots`` give the tensors whose gradient it will
compute (torch's ``_will_engine_execute_node``). A tensor whose node runs but whose output
received no gradient counts as computed, with None, when its node runs (the run's ``node``
and ``grads``, set by ``hooks._run_output_hooks``), as torch calls its hook with an
undefined gradient there. A run's state is dropped once the run is off its thread's stack.
"""

import threading

from .history import _as_seen_by
from .hooks import RemovableHandle
from .runs import running

__all__ = ["register_multi_grad_hook"]

_MODES = ("all", "any")


class _MultiHandle(RemovableHandle):
    """The handle of a multi-grad hook: ``remove()`` removes its hook on every tensor."""

    def __init__(self, handles):
        super().__init__({})
        self.handles = tuple(handles)

    def remove(self):
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward on the gradients of ``tensors``
    (``torch.autograd.graph.register_multi_grad_hook``).

    ``mode="all"``: ``fn(grads)`` runs once every tensor whose gradient this backward
    computes has it, ``grads`` a list in the order of ``tensors``, None for the tensors this
    backward leaves out (not on the graph, or on no path to the ``inputs=`` of a
    ``backward``/``grad``). ``mode="any"``: ``fn(grad)`` runs with the first of the
    gradients computed. ``fn`` should not change its arguments. A ``grad()`` whose
    ``inputs`` hold a leaf of ``tensors`` refuses an "all" hook, as torch's.

    Args:
        tensors: a sequence of Tensors; every one requires grad in "all" mode, those that
            do not are left out in "any" mode.
        fn: ``fn(list of Tensor or None)`` ("all") or ``fn(Tensor)`` ("any").
        mode: ``"all"`` (default) or ``"any"``.

    Returns:
        A handle whose ``remove()`` removes the hook.

    Example:
        >>> c, d = a * b, a * b                  # a, b: leaves that require grad
        >>> h = mg.autograd.graph.register_multi_grad_hook(
        ...     (a, b, c, d), lambda grads: print([g is not None for g in grads]))
        >>> c.sum().backward()
        [True, True, True, False]
    """
    if mode not in _MODES:
        raise ValueError(f"register_multi_grad_hook: mode should be one of {_MODES}, got "
                         f"{mode!r}")
    if not callable(fn):
        raise TypeError(f"register_multi_grad_hook: fn must be callable, got "
                        f"{type(fn).__name__}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    runs = {}   # id(a run's captured table) -> (table, its thread, that run's state)
    if mode == "any":
        def first(grad):
            run = _current_run()
            with lock:
                _forget_finished(runs)
                if id(run.captured) in runs:
                    return
                runs[id(run.captured)] = (run.captured, threading.get_ident(), None)
            fn(grad)
        return _MultiHandle(t.register_hook(first) for t in tensors if t.requires_grad)

    for t in tensors:           # torch's check (_get_grad_fn_or_grad_acc), before any hook
        if not t.requires_grad:
            raise AssertionError("register_multi_grad_hook: every tensor must require grad "
                                 "in mode 'all' (expected gradient function to be set)")

    def inner(index):
        def hook(grad):
            run = _current_run()
            with lock:
                _forget_finished(runs)
                key = id(run.captured)
                if key not in runs:
                    runs[key] = (run.captured, threading.get_ident(),
                                 {"grads": [None] * len(tensors),
                                  "pending": _will_compute(tensors, run)})
                state = runs[key][2]
                state["grads"][index] = grad
                state["pending"].discard(index)
                node, grads = run.node, run.grads
                if node is not None:    # siblings on this node that received nothing
                    state["pending"].difference_update(
                        [j for j in state["pending"] if tensors[j].grad_fn is node
                         and grads[tensors[j]._output_index] is None])
                done = not state["pending"]
                if done:
                    del runs[key]
            if done:
                fn(state["grads"])
        return hook

    return _MultiHandle(t.register_hook(inner(i)) for i, t in enumerate(tensors))


def _current_run():
    """The innermost backward running on this thread (a ``runs.Run``)."""
    here = running()
    if not here:
        raise AssertionError("expected this hook to be called inside a backward call")
    return here[-1]


def _will_compute(tensors, run):
    """The indices of ``tensors`` whose gradient this run computes (torch's count of the
    nodes the engine will execute)."""
    nodes, capture = set(run.order), run.capture
    in_grad = capture is not None and getattr(capture, "on_path", capture) is not capture
    asked = capture.ids if capture is not None else ()
    reached = {id(r) for r in run.roots}           # the tensors this run reaches
    for node in nodes:
        reached.update(id(_as_seen_by(x, node) if x._history is not None else x)
                       for x in node.inputs if x is not None)
    pending = set()
    for i, t in enumerate(tensors):
        if t.grad_fn is not None:       # its node runs, or its hooks run on a wanted input
            if t.grad_fn in nodes or id(t) in asked and id(t) in reached:
                pending.add(i)
            continue
        if in_grad:
            if id(t) in asked:
                raise RuntimeError("register_multi_grad_hook: a leaf of the hook's tensors is "
                                   "an input of autograd.grad(), which runs no node for it; "
                                   "mode 'all' cannot tell whether its gradient is computed")
            continue
        if (capture is None or id(t) in asked) and id(t) in reached:
            pending.add(i)
    return pending


def _forget_finished(runs):
    # the state of a run of this thread that ended before its hook fired: gone once that
    # run is off the stack (a nested backward's outer run stays; other threads' runs too)
    if not runs:
        return
    alive = {id(run.captured) for run in running()}
    here = threading.get_ident()
    for key in [k for k, (_, thread, _) in runs.items() if thread == here and k not in alive]:
        del runs[key]
