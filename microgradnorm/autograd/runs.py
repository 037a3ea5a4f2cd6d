"""The backward runs in progress, per thread, innermost last: what a hook firing inside a
backward reads of the run that called it (``multi_grad.py``: which run it is, the nodes it
executes, the gradients of the node whose hooks are running).

``engine.run_backward`` and ``double.run_backward_graph`` push their run once its order is
known and pop it when they return or raise; ``gradients._Wanted.run_hooks`` pushes one for
the hooks it runs on ``grad()``'s inputs after the loop, with the nodes that ran;
``hooks._run_output_hooks`` sets ``node`` and ``grads`` while a node's output hooks run.
A hook's own backward (a nested one) is pushed above its caller's and gone when it ends,
even by an error: the stack never keeps a run that has ended.
"""

import threading


class Run:
    """One backward in progress: ``captured``, its {id(tensor): (tensor, gradient)} table
    (one per run: what keys it); ``capture``, what it captures (None: ``backward()``'s
    leaves, else a ``gradients._Wanted``); ``order``, the nodes it executes (after its loop,
    on ``grad()``'s inputs: the nodes that ran); ``roots``, the tensors it starts from;
    ``node`` and ``grads``, while that node's output hooks run, the node and its output
    gradients (None for an output no path reached), else None."""

    __slots__ = ("captured", "capture", "order", "roots", "node", "grads")

    def __init__(self, captured, capture, order, roots):
        self.captured, self.capture, self.order, self.roots = captured, capture, order, roots
        self.node = self.grads = None


class _Here(threading.local):
    def __init__(self):
        self.runs = []


_here = _Here()


def started(captured, capture, order, roots):
    """Push a ``Run`` of these fields on this thread's stack; returns the stack, whose
    ``pop()`` the caller calls when the run ends (in a ``finally``)."""
    runs = _here.runs
    runs.append(Run(captured, capture, order, roots))
    return runs


def running():
    """This thread's runs in progress, innermost last (a list: empty outside a backward)."""
    return _here.runs
