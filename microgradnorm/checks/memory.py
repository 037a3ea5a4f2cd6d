"""``memory_timeline``: the bytes a training step holds, node by node, forward and backward.

Each array the graph holds is counted while it lives (a weak reference's callback takes it
out), each base buffer once, by kind (``KINDS``) and module category (``CATEGORIES``);
parameters are not counted. docs/memory.md explains what is counted and the tracemalloc check.
"""

import dataclasses
import functools
import tracemalloc
import weakref
from collections import Counter

from .. import autograd
from ..backend import memory_owner

__all__ = ["CATEGORIES", "KINDS", "MemoryEvent", "MemoryTimeline", "memory_timeline"]

KINDS = ("saved", "held", "grad")
CATEGORIES = ("embeddings", "attention", "mlp", "norms", "residual", "head", "loss")


@dataclasses.dataclass(frozen=True)
class MemoryEvent:
    """The bytes held at one point of the step.

    ``phase`` is "forward", "backward", "freed" (backward released the graph) or "end";
    ``held`` is {category: {kind: bytes}}; ``traced_bytes`` is what tracemalloc saw
    allocated since the start (None without ``trace``).
    """

    index: int
    phase: str
    op: str
    module: str
    held: dict
    traced_bytes: int = None

    @property
    def by_kind(self):
        """{kind: bytes}, summed over categories."""
        return {k: sum(row[k] for row in self.held.values()) for k in KINDS}

    @property
    def by_category(self):
        """{category: bytes}, summed over kinds."""
        return {c: sum(row.values()) for c, row in self.held.items()}

    @property
    def total_bytes(self):
        """All counted bytes at this event."""
        return sum(sum(row.values()) for row in self.held.values())


@dataclasses.dataclass
class MemoryTimeline:
    """What ``memory_timeline`` returns: ``events`` in order, and summaries of them."""

    events: list

    @property
    def peak(self):
        """The first event with the largest ``total_bytes``."""
        return max(self.events, key=lambda e: e.total_bytes)

    def totals(self):
        """``total_bytes`` of every event, a list."""
        return [e.total_bytes for e in self.events]

    def phase_bounds(self):
        """{phase: (first index, last index)} of the phases present."""
        bounds = {}
        for e in self.events:
            first, _ = bounds.get(e.phase, (e.index, e.index))
            bounds[e.phase] = (first, e.index)
        return bounds

    def table(self):
        """The peak split by category and kind, as text (one row per category)."""
        peak = self.peak
        lines = [f"peak {peak.total_bytes / 1e6:.3f} MB at event {peak.index} "
                 f"({peak.phase} {peak.op} {peak.module})".rstrip(),
                 f"{'category':<12}" + "".join(f"{k:>12}" for k in (*KINDS, "total", "share"))]
        for category in CATEGORIES:
            row = peak.held[category]
            total = sum(row.values())
            lines.append(f"{category:<12}" + "".join(f"{row[k] / 1e6:>10.3f}MB" for k in KINDS)
                         + f"{total / 1e6:>10.3f}MB{100 * total / peak.total_bytes:>11.1f}%")
        return "\n".join(lines)


def memory_timeline(step_fn, trace=False):
    """Run ``step_fn()``, one training step, and record the bytes held after every node.

    Args:
        step_fn: a function of no arguments.
        trace: also record ``tracemalloc``'s count at every event (slower).

    Returns:
        a ``MemoryTimeline``; ``.peak`` is its largest event, ``.table()`` splits it.

    Example:
        >>> def step():
        ...     loss = F.cross_entropy(model(x), y); loss.backward()
        >>> timeline = mg.memory_timeline(step)
        >>> print(timeline.table())
    """
    if not callable(step_fn):
        raise TypeError(f"memory_timeline: step_fn must be callable, got "
                        f"{type(step_fn).__name__}")
    started = trace and not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracker = _Tracker(trace)
        with autograd.observe(tracker):
            step_fn()
        tracker.record("end", "", "")
    finally:
        if started:
            tracemalloc.stop()
    return MemoryTimeline(tracker.events)


def category_of(module, in_module=True):
    """The ``CATEGORIES`` entry of a node recorded in ``module`` (a dotted path), by its
    names; ``loss`` outside any module call."""
    if not in_module:
        return "loss"
    parts = module.split(".") if module else []
    if any("attn" in p for p in parts):
        return "attention"
    if any(p in ("mlp", "ff", "feed_forward") for p in parts):
        return "mlp"
    if parts and (parts[-1].startswith("ln") or "norm" in parts[-1]):
        return "norms"
    if parts and "emb" in parts[-1]:
        return "embeddings"
    if parts and parts[-1] in ("lm_head", "head"):
        return "head"
    return "residual"


class _Tracker:
    """Registers arrays as they appear; weak-reference callbacks take them out again."""

    def __init__(self, trace):
        self.trace = trace
        self.live = {}                    # id(base array) -> (weakref, nbytes, kind, category)
        self.bytes = Counter()            # (kind, category) -> bytes alive
        self.events = []
        # node -> category, fixed when it is recorded; weak, or it would keep the graph alive
        self.categories = weakref.WeakKeyDictionary()
        self.parameters = set()           # ids of leaf tensors' arrays: not the step's
        self.baseline = tracemalloc.get_traced_memory()[0] if trace else None

    def add(self, array, kind, category):
        base = memory_owner(array)
        key = id(base)
        if key in self.parameters:
            return
        if key in self.live:
            ref, nbytes, old_kind, old_category = self.live[key]
            if kind == "saved" and old_kind == "held":      # held first, then saved: saved
                self.live[key] = (ref, nbytes, kind, old_category)
                self.bytes[old_kind, old_category] -= nbytes
                self.bytes[kind, old_category] += nbytes
            return
        try:
            ref = weakref.ref(base, functools.partial(self._freed, key))
        except TypeError:                 # a NumPy scalar, not an array: nothing to hold
            return
        self.live[key] = (ref, base.nbytes, kind, category)
        self.bytes[kind, category] += base.nbytes

    def _freed(self, key, _ref):
        _, nbytes, kind, category = self.live.pop(key)
        self.bytes[kind, category] -= nbytes

    def on_forward(self, node):
        category = category_of(node.module, autograd.in_module_call())
        self.categories[node] = category
        for tensor in node.inputs:
            if tensor is not None and tensor.grad_fn is None and tensor.requires_grad:
                self.parameters.add(id(memory_owner(tensor._array)))
        for array in node.saved_arrays():
            self.add(array, "saved", category)
        for tensor in node.inputs:
            if tensor is not None and (tensor.grad_fn is not None or not tensor.requires_grad):
                producer = tensor.grad_fn
                self.add(tensor._array, "held",
                         self.categories.get(producer, category) if producer else category)
        self.record("forward", node.name, node.module)

    def on_backward(self, node, pending, captured):
        for waiting, grads in pending.items():
            category = self.categories.get(waiting, "residual")
            for g in grads:
                if g is not None:
                    self.add(g, "grad", category)
        for tensor, g in captured.values():
            module = (tensor.name or "").rpartition(".")[0]
            self.add(g, "grad", category_of(module) if tensor.name else "residual")
        self.record("backward", node.name, node.module)

    def on_free(self, nodes):
        self.record("freed", "", "")

    def record(self, phase, op, module):
        held = {c: dict.fromkeys(KINDS, 0) for c in CATEGORIES}
        for (kind, category), nbytes in self.bytes.items():
            held[category][kind] += nbytes
        traced = tracemalloc.get_traced_memory()[0] - self.baseline if self.trace else None
        self.events.append(MemoryEvent(len(self.events), phase, op, module, held, traced))
