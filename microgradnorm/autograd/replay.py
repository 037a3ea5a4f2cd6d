"""Graph capture's replay: ``Plan`` is a checked tape (tape.py) ready to replay, ``Replay``
one call's run of it, and ``CapturedStep`` the one graph node a replay adds: its forward
reruns each recorded forward on reused Contexts, its backward reruns the recorded backward
in the engine's order with the engine's routing precomputed (docs/architecture.md, "Graph
capture")."""

import numpy as np

from ..backend import array_module
from .engine import topological_order
from .function import Context, Function
from .history import FreedInput
from .inputs import _fit, _tensor, _zeros_for_missing
from .tape import ARG, ARRAY, LEAF, OUT, VALUE, VIEW


# ----- the plan: a checked tape, ready to replay --------------------------------------------
class Plan:
    """What a replay needs of a tape: the slots to fill (arguments, leaves, constants), the
    forward steps, the backward steps in the engine's order, the Contexts to reuse.

    Args:
        tape: a finished ``Tape`` (its ``route_list`` computed); its Contexts become the
            plan's (their inputs replaced by data-free stand-ins).
        results: (slot, has a graph) per returned Tensor.
        persistent: the LEAF slots read afresh at each replay (parameters, buffers); the
            other leaves are constants, their arrays kept.
    """

    def __init__(self, tape, results, persistent):
        self.results = results
        self.grad_slots = tuple(slot for slot, grad in results if grad)
        self.template = [None] * len(tape.kinds)
        self.arg_slots, self.leaves, self.leaf_slots = [], [], []
        for slot, kind in enumerate(tape.kinds):
            if kind[0] == ARG:
                self.arg_slots.append((kind[1], slot))
            elif kind[0] == LEAF and slot in persistent:
                self.leaves.append(kind[1])
                self.leaf_slots.append(slot)
            elif kind[0] == LEAF:
                self.template[slot] = kind[1]._array          # a constant tensor's array
            elif kind[0] in (ARRAY, VALUE):
                self.template[slot] = kind[1]
        self.steps = tuple((e.function.forward, e.inputs, e.static, e.traced, e.outputs,
                            tuple((slot,) + tape.kinds[slot][1:] for slot in e.views), frees)
                           for e, frees in zip(tape.entries, _last_reads(tape, results)))
        self.outputs_meta = [e.ctx.outputs_meta for e in tape.entries]
        self._inputs(tape)
        # the leaves a call checks: those read, and those a gradient reaches
        self.guarded = tuple(self.leaves) + tuple(
            t for t in self.grad_leaves if all(t is not u for u in self.leaves))
        self.leaf_meta = tuple((t.shape, t.dtype, t._requires_grad) for t in self.guarded)
        self._saved_checks(tape)
        self.contexts = [e.ctx for e in tape.entries]
        self._stand_ins(tape)
        self._backward(tape)
        self.pool = []                   # frames (Context lists) free for a replay

    def _inputs(self, tape):
        # the node's inputs: the arguments, then the leaves, that a gradient reaches
        args, leaves = set(), {}
        for routes in tape.route_list:
            for _, kind, key, _, _ in routes:
                if kind == ARG:
                    args.add(key)
                elif kind == LEAF:
                    leaves.setdefault(id(key), key)
        self.grad_args, self.grad_leaves = tuple(sorted(args)), tuple(leaves.values())
        self.target = {(ARG, i): -1 - n for n, i in enumerate(self.grad_args)}
        self.target.update({(LEAF, k): -1 - len(args) - n for n, k in enumerate(leaves)})

    def _saved_checks(self, tape):
        # the leaves and arguments whose arrays a node saved: their versions are checked
        # before the backward, as the engine checks a node's saved tensors
        boxes = {id(box) for e in tape.entries if e.record
                 for box, _, _ in e.ctx._saved_versions + e.ctx._kept_versions}
        self.checked_leaves = tuple(t for t in self.leaves if id(t._version_box) in boxes)
        self.checked_args = tuple(i for i, a in enumerate(tape.args)
                                  if isinstance(a, _tensor.Tensor)
                                  and id(a._version_box) in boxes)

    def _stand_ins(self, tape):
        # The recorded nodes keep their structure, not the call's tensors: an argument that
        # requires grad becomes a data-free leaf, an op's output a FreedInput (the viewer
        # and the node count read these); the nodes of ops that recorded none keep nothing.
        args = {id(a): _stand_in(a, f"args[{i}]") for i, a in enumerate(tape.args)
                if isinstance(a, _tensor.Tensor)}
        for entry in tape.entries:
            ctx = entry.ctx
            ctx.inputs = () if not entry.record else tuple([_structural(t, args)
                                                            for t in ctx.inputs])
            ctx._saved_versions = ctx._kept_versions = ()
        self.roots = tuple(_stand_in_output(tape.entries[tape.kinds[slot][1]].ctx,
                                            tape.kinds[slot][2]) for slot in self.grad_slots)

    def _backward(self, tape):
        # the engine's order: the topological sort of the recorded nodes, reversed
        node_entry = {id(e.ctx): i for i, e in enumerate(tape.entries) if e.record}
        steps = []
        for node in reversed(topological_order([r.grad_fn for r in self.roots])):
            index = node_entry[id(node)]
            routes = tuple((position, key if kind == OUT else
                            self.target[(kind, key if kind == ARG else id(key))], shape, dtype)
                           for position, kind, key, shape, dtype in tape.route_list[index])
            steps.append((index, tape.entries[index].outputs, routes))
        self.backward_steps = tuple(steps)
        self.n_nodes = len(steps)

    def frame(self):
        """Contexts for one replay: a free frame, else copies of the recorded ones."""
        try:
            return self.pool.pop()
        except IndexError:
            return [_copy_context(ctx) for ctx in self.contexts]


def _last_reads(tape, results):
    # per entry, the intermediates (OUT and VIEW slots) it reads last, or makes and nobody
    # reads: a replay drops them after it, so that an activation lives as in the eager step
    last = {}
    for index, entry in enumerate(tape.entries):
        reads = list(entry.inputs) + [tape.kinds[view][1] for view in entry.views]
        for _, slot, _ in entry.traced:
            reads += list(slot) if type(slot) is tuple else [slot]
        last.update(dict.fromkeys(reads, index))
        for slot in entry.outputs:
            last.setdefault(slot, index)
    kept = {slot for slot, _ in results}
    frees = [[] for _ in tape.entries]
    for slot, index in last.items():
        if tape.kinds[slot][0] in (OUT, VIEW) and slot not in kept:
            frees[index].append(slot)
    return [tuple(f) for f in frees]


def _structural(t, args):
    if t is None or not t._requires_grad:
        return None
    if id(t) in args:
        return args[id(t)]
    if t.grad_fn is None:
        return t                                   # a parameter stays (viewer: its name)
    return FreedInput(t.grad_fn, t._output_index)


def _stand_in(t, name):
    # a data-free tensor of t's shape and dtype (a broadcast zero): a leaf for the viewer
    leaf = _tensor.Tensor._from_op(np.broadcast_to(np.zeros((), t.dtype), t.shape), None)
    leaf._requires_grad, leaf.name = t._requires_grad, name
    return leaf


def _stand_in_output(ctx, index):
    shape, dtype = ctx.outputs_meta[index]
    return _tensor.Tensor._from_op(np.broadcast_to(np.zeros((), dtype), shape), ctx, index)


def _copy_context(ctx):
    # a Context like a recorded one (its structure, nothing a forward saved)
    new = Context.__new__(Context)
    for name in ("function", "inputs", "needs_input_grad", "seq", "module", "group",
                 "outputs_meta"):
        setattr(new, name, getattr(ctx, name))
    new.tensor_hooks = new._graph = None
    new._saved = new._saved_versions = new._kept_versions = ()
    new._freed = False
    return new


# ----- a replay -----------------------------------------------------------------------------
class Replay:
    """One call's replay: its slot values and frame of Contexts; ``forward`` fills the
    values op by op (a recording's are filled already), ``backward`` runs the recorded
    backward and returns the gradients of the node's inputs."""

    __slots__ = ("plan", "frame", "values", "recorded")

    def __init__(self, plan, frame, values, recorded=False):
        self.plan, self.frame, self.values, self.recorded = plan, frame, values, recorded

    def forward(self):
        values = self.values
        if self.recorded:
            return values
        generic = np.generic
        for (forward, inputs, static, traced, outputs, views, frees), ctx in zip(
                self.plan.steps, self.frame):
            for slot, source, shape, strides, offset in views:
                values[slot] = _as_view(values[source], shape, strides, offset)
            arrays = [values[s] for s in inputs]
            if traced:
                options = dict(static)
                for name, slot, copy in traced:
                    if type(slot) is int:
                        options[name] = values[slot].copy() if copy else values[slot]
                    else:
                        options[name] = tuple([values[s].copy() if c else values[s]
                                               for s, c in zip(slot, copy)])
            else:
                options = static
            raw = forward(ctx, *arrays, **options)
            if type(raw) is tuple:
                for slot, a in zip(outputs, raw):
                    values[slot] = np.asarray(a) if isinstance(a, generic) else a
            else:         # NumPy's 0-d results are scalars: apply makes them arrays, as here
                values[outputs[0]] = np.asarray(raw) if isinstance(raw, generic) else raw
            for slot in frees:
                values[slot] = None
        return values

    def backward(self, grads):
        """The engine's reversed loop over the recorded nodes (engine.run_backward), its
        order and its sums: the same gradients bit for bit."""
        plan, frame = self.plan, self.frame
        pending = [None] * len(plan.template)
        inputs = [None] * len(plan.target)
        summed = set()            # id of each sum made here: its own to add to in place

        def receive(target, g):
            if target < 0:
                held = inputs[-1 - target]
                inputs[-1 - target] = g if held is None else held + g
                return
            previous = pending[target]
            if previous is None:
                pending[target] = g
            elif id(previous) in summed:
                previous += g
            else:
                total = pending[target] = previous + g
                if getattr(total, "ndim", 0):
                    summed.add(id(total))

        several = len(grads) > 1
        for slot, g in zip(plan.grad_slots, grads):
            if several and not g.any():      # the engine's zeros for an output not reached
                continue
            receive(slot, g)
        outputs_meta = plan.outputs_meta
        for index, outputs, routes in plan.backward_steps:
            if len(outputs) == 1:                 # the usual node: one output
                g = pending[outputs[0]]
                if g is None:
                    continue          # no gradient reached the node: the engine skips it
                pending[outputs[0]] = None
                summed.discard(id(g))             # the sum leaves the loop's hands
                grads = (g,)
            else:
                grads = [pending[s] for s in outputs]
                missing = sum(g is None for g in grads)
                if missing == len(grads):
                    continue
                for s in outputs:
                    pending[s] = None
                summed.difference_update(map(id, grads))
                if missing:
                    grads = _zeros_for_missing(grads, outputs_meta[index])
            ctx = frame[index]
            input_grads = ctx.function.backward(ctx, *grads)
            if type(input_grads) is not tuple:
                input_grads = (input_grads,)
            for position, target, shape, dtype in routes:
                g = input_grads[position] if position < len(input_grads) else None
                if g is None:
                    continue
                if g.shape != shape or g.dtype is not dtype and g.dtype != dtype:
                    g = _fit(g, shape, dtype, ctx)
                receive(target, g)
        return tuple(inputs)


def _as_view(source, shape, strides, offset):
    # the view NumPy made at capture, of this call's array: same layout, same place
    base = source if offset == 0 else source.reshape(-1)[offset:]
    return array_module(source).lib.stride_tricks.as_strided(base, shape, strides)


class Lease:
    """A replay's hold on its frame: when the node that holds it is freed (after a backward
    without retain_graph) or dropped, the frame's saved arrays go and the frame returns to
    the plan's pool for the next replay."""

    __slots__ = ("replay",)

    def __init__(self, replay):
        self.replay = replay

    def __del__(self):
        replay = self.replay
        for ctx in replay.frame:
            ctx._saved = ()
            ctx.__dict__.clear()
        replay.plan.pool.append(replay.frame)


class CapturedStep(Function):
    """The one node a captured call adds to the graph; its inputs are the arguments and
    the leaves (parameters) that a gradient reaches, its outputs the function's outputs
    that have a graph. Options: ``run``, the call's ``Replay``; ``checked``, the tensors
    whose arrays the recorded nodes save, their versions checked before the backward."""

    @staticmethod
    def forward(ctx, *arrays, run, checked):
        ctx.replay, ctx.lease = run, Lease(run)
        ctx._kept_versions = tuple([(t._version_box, t._version_box[0], t.shape)
                                    for t in checked])
        values = run.forward()
        found = [values[slot] for slot in run.plan.grad_slots]
        # the outputs' arrays, which the recorded backward may read: saved, so that their
        # versions are recorded and a write into an output before backward raises, as eager
        ctx.save_for_backward(*found)
        return tuple(found) if len(found) > 1 else found[0]

    @staticmethod
    def backward(ctx, *grads):
        ctx.check_versions(ctx._saved_versions)   # an output written in place since: raise
        return ctx.replay.backward(grads)
