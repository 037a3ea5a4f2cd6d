"""Graph capture's recording: ``Tape`` records each ``Function.apply`` of one call (the
Function, its options, and where each input array came from: an argument, a leaf read
afresh at each replay, an earlier op's output, a view of one of these, or a constant);
``difference`` tells whether two tapes of one step are the same computation. ``replay.py``
turns a tape into a plan and replays it; ``microgradnorm.capture`` holds the public
``mg.capture`` and its guards (docs/architecture.md, "Graph capture")."""

import contextlib
import threading

import numpy as np

from ..backend import is_cupy_array, memory_owner
from .function import _tapes
from .inputs import _tensor

# the kinds of a tape's slots, each one array (or value) a replay fills in
NONE, ARG, OUT, LEAF, ARRAY, VALUE, VIEW = "none", "arg", "out", "leaf", "array", "value", "view"


class CaptureError(RuntimeError):
    """A step that cannot be captured, or a call that does not match its capture."""


def _is_array(value):
    return isinstance(value, np.ndarray) or is_cupy_array(value)


class Entry:
    """One ``Function.apply`` on a tape: the Function, its Context, whether it recorded a
    node, the slot of each input array, the options (``static`` as given, ``traced``: the
    slots of those holding arrays) and the slots of its outputs."""

    __slots__ = ("function", "ctx", "record", "inputs", "static", "traced", "outputs", "views")

    def __init__(self, function, ctx, record, inputs, static, traced, outputs, views):
        self.function, self.ctx, self.record = function, ctx, record
        self.inputs, self.static, self.traced, self.outputs = inputs, static, traced, outputs
        self.views = views          # the VIEW slots first met here: made before it runs

    def describe(self, index):
        where = f" in module '{self.ctx.module}'" if self.ctx.module else ""
        return f"op #{index} ({self.function.__name__}{where})"


class Tape:
    """The ops one call of a captured function ran in this thread, as ``Function.apply``
    reports them (``record``); ``args`` are the call's arguments, Tensors and values.

    Slots are numbered in the order they are first met: ``kinds[slot]`` is (NONE,),
    (ARG, position), (OUT, entry, output index), (LEAF, tensor, its hook count) for an input
    without history (a parameter, a buffer, a constant tensor), (ARRAY, array) for an
    option's array that is none of these, (VALUE, value) for a number inside an option
    tuple, and (VIEW, slot, shape, strides, offset in items) for an array that NumPy made as
    a view of an argument's, an output's or a leaf's memory outside any op
    (``target.reshape(-1)`` in a loss's checks). Arrays are matched by identity, so the tape
    holds every tensor it names until it is done."""

    def __init__(self, args):
        self.thread = threading.get_ident()
        self.paused = 0             # > 0 inside ``paused()``: ops are not recorded
        self.args = args
        self.kinds = [(NONE,)]
        self.by_array = {}          # id(array) -> slot: the arguments' and outputs' arrays
        self.by_leaf = {}           # id(tensor) -> slot
        self.by_option = {}         # id(array) -> slot: options' other arrays
        self.traced = {}            # id(memory owner) -> [(slot, array)]: what views can be of
                                    # (arguments, outputs, leaves)
        self.views = []             # the VIEW slots of the op being recorded
        self.entries = []
        self.seen = []              # (tensor, version, hook count) of each tensor met
        self.held = []              # the views met: alive, so that no later array takes
                                    # the id of one (by_array is keyed by id)
        for i, a in enumerate(args):
            if isinstance(a, _tensor.Tensor) and id(a._array) not in self.by_array:
                self._traced(a._array, self._slot((ARG, i)))
                self._see(a)

    def _slot(self, kind):
        self.kinds.append(kind)
        return len(self.kinds) - 1

    def _traced(self, array, slot):
        self.by_array[id(array)] = slot
        self.traced.setdefault(id(memory_owner(array)), []).append((slot, array))

    def _view(self, array):
        # a VIEW slot if ``array`` lies inside a traced array's memory, same dtype, else None
        for slot, source in self.traced.get(id(memory_owner(array)), ()):
            if source.dtype != array.dtype:
                continue
            low, high = _bounds(array)
            start, end = _bounds(source)
            offset = _address(array) - _address(source)
            if start <= low and high <= end and (offset == 0 or source.flags.c_contiguous):
                view = self._slot((VIEW, slot, tuple(array.shape), tuple(array.strides),
                                   offset // array.itemsize))
                self.by_array[id(array)] = view
                self.held.append(array)
                self.views.append(view)
                return view
        return None

    def refuse_backward(self):
        """Raise when this tape's thread runs a backward (the engine asks each tape): a
        tape records ops, and a backward inside the step would run at recording and never
        at a replay."""
        if threading.get_ident() == self.thread:
            raise CaptureError("backward() or grad() was called inside the function being "
                               "captured; capture the forward (return the loss) and call "
                               "backward() on the captured call's output")

    def _see(self, t):
        self.seen.append((t, t._version_box[0], _hook_count(t)))

    def record(self, cls, ctx, tensors, arrays, given, options, outputs, record):
        """``Function.apply``'s report of one call (function.py's hook): ``given`` are the
        options as passed, ``options`` as forward got them (``kept_options`` copied)."""
        if threading.get_ident() != self.thread:
            return _record_elsewhere(cls, ctx, tensors, arrays, given, options, outputs,
                                     record)
        if self.paused:
            return None
        self.views = []
        inputs = tuple([self._source(cls, t, a) for t, a in zip(tensors, arrays)])
        static, traced = self._options(cls, given, options, record)
        slots = []
        for i, out in enumerate(outputs):
            slot = self._slot((OUT, len(self.entries), i))
            self._traced(out._array, slot)
            self._see(out)
            slots.append(slot)
        self.entries.append(Entry(cls, ctx, record, inputs, static, traced, tuple(slots),
                                  tuple(self.views)))

    def _source(self, cls, t, array):
        if t is None:
            return 0
        slot = self.by_array.get(id(array))
        if slot is not None:
            return slot
        if not t.requires_grad:
            slot = self._view(array)
            if slot is not None:
                return slot
        if t.grad_fn is not None:
            raise CaptureError(
                f"{cls.__name__}: an input of shape {t.shape} was computed (by "
                f"{t.grad_fn.name}) outside the captured function, and a replay cannot "
                "follow its graph; pass it as an argument, or compute it inside")
        slot = self.by_leaf.get(id(t))
        if slot is None:          # (LEAF, tensor, its hook count): a hook added at each call
            slot = self.by_leaf[id(t)] = self._slot((LEAF, t, _hook_count(t)))
            self.traced.setdefault(id(memory_owner(array)), []).append((slot, array))
            self._see(t)
        return slot

    def _options(self, cls, given, options, record):
        # (name, slot(s), copy): a kept option's array is traced to the array passed, and
        # copied at each replay where apply copies it (an array, not a Tensor, recorded)
        static, traced = {}, []
        for name, value in options.items():
            passed = given.get(name)
            kept = name in cls.kept_options and passed is not value
            if _is_array(value):
                copied = kept and record and _is_array(passed)
                traced.append((name, self._option_array(passed if copied else value), copied))
            elif type(value) is tuple and any(_is_array(v) for v in value):
                sources = passed if kept and type(passed) is tuple else value
                slots, copies = [], []
                for p, v in zip(sources, value):       # (a Tensor's array is v itself)
                    copied = kept and record and _is_array(p) and p is not v
                    slots.append(self._option_array(p if copied else v) if _is_array(v)
                                 else self._slot((VALUE, v)))
                    copies.append(copied)
                traced.append((name, tuple(slots), tuple(copies)))
            elif isinstance(value, _tensor.Tensor):
                raise CaptureError(f"{cls.__name__}: option {name!r} is a Tensor; capture "
                                   "replays options that are arrays or values only")
            else:
                static[name] = value
        return static, tuple(traced)

    def _option_array(self, array):
        slot = self.by_array.get(id(array))
        if slot is None:
            slot = self.by_option.get(id(array))
        if slot is None:
            slot = self._view(array)
        if slot is None:
            slot = self.by_option[id(array)] = self._slot((ARRAY, array))
        return slot

    # ----- once the call has returned -----------------------------------------------------
    def check_writes(self):
        """Refuse what a replay could not repeat: an in-place write into a tensor the tape
        met (an argument, a parameter, an intermediate), a hook or retain_grad() added."""
        for t, version, hooks in self.seen:
            what = self.describe_tensor(t)
            if t._version_box[0] != version or t._history is not None:
                raise CaptureError(
                    f"the step writes in place into {what}: a replay runs the recorded ops "
                    "only, not the write; write out of place (x = x + y) inside the step, "
                    "or do the write outside the captured function")
            if _hook_count(t) != hooks or t._retains_grad:
                raise CaptureError(
                    f"the step registers a hook (or retain_grad()) on {what}, which a replay "
                    "cannot repeat: register it outside the captured function, on a "
                    "parameter or on the returned output")
        for index, entry in enumerate(self.entries):
            node_hooks = entry.ctx._graph                # graph.py's, on the node itself
            if entry.ctx.tensor_hooks or node_hooks is not None and (node_hooks.prehooks
                                                                      or node_hooks.hooks):
                raise CaptureError(
                    f"the step registers a hook on an output or the node of "
                    f"{entry.describe(index)}, which a replay cannot repeat: register it "
                    "outside the captured function, on a parameter or on the returned output")

    def describe_tensor(self, t):
        for i, a in enumerate(self.args):
            if a is t:
                return f"argument {i} (shape {t.shape})"
        if t.grad_fn is None and id(t) in self.by_leaf:
            return f"the leaf tensor{_named(t)} of shape {t.shape}"
        return f"a tensor of shape {t.shape} made inside the step"

    def result_slots(self, tensors):
        """(slot, differentiable) for each returned Tensor."""
        slots = []
        for i, t in enumerate(tensors):
            slot = self.by_array.get(id(t._array))
            if slot is None or t.grad_fn is None and t.requires_grad:
                raise CaptureError(
                    f"output {i} (shape {t.shape}) was not computed by an op of the step (a "
                    "leaf, or a value made outside the graph such as argmax or a "
                    "comparison): a replay could not recompute it; return it outside the "
                    "captured function or return a copy made by an op (x.clone())")
            slots.append((slot, t.grad_fn is not None))
        return tuple(slots)

    def routes(self):
        """Per entry, per input that requires grad: (position, kind, key, shape, dtype),
        kind ARG (key: its position), OUT (key: the slot) or LEAF (key: the tensor)."""
        node_entry = {id(e.ctx): i for i, e in enumerate(self.entries) if e.record}
        arg_ids = {id(a): i for i, a in enumerate(self.args)
                   if isinstance(a, _tensor.Tensor)}
        routes = []
        for index, entry in enumerate(self.entries):
            mine = []
            for position, t in enumerate(entry.ctx.inputs if entry.record else ()):
                if t is None or not t.requires_grad:
                    continue
                if id(t) in arg_ids:
                    kind, key = ARG, arg_ids[id(t)]
                elif t.grad_fn is None:
                    kind, key = LEAF, t
                elif id(t.grad_fn) in node_entry:
                    producer = self.entries[node_entry[id(t.grad_fn)]]
                    kind, key = OUT, producer.outputs[t._output_index]
                else:
                    raise CaptureError(
                        f"an input of {entry.describe(index)} has a graph outside the step")
                mine.append((position, kind, key, t.shape, t.dtype))
            routes.append(tuple(mine))
        return routes


def _hook_count(t):
    # the gradient hooks and the post-accumulate hooks: one added inside the step is refused
    return len(t._hooks or ()) + len(t._post_accumulate_hooks or ())


def _record_elsewhere(cls, ctx, tensors, arrays, given, options, outputs, record):
    # another thread's op: its own tape's, if that thread is capturing too
    here = threading.get_ident()
    for tape in list(_tapes):
        if tape.thread == here:
            return tape.record(cls, ctx, tensors, arrays, given, options, outputs, record)
    return None


@contextlib.contextmanager
def paused():
    """This thread's tape records nothing in the block: the ops a custom Function's forward
    runs inside its one node (``custom.py``), which a replay reruns as one op."""
    tape = active_tape() if _tapes else None
    if tape is None:
        yield
        return
    tape.paused += 1
    try:
        yield
    finally:
        tape.paused -= 1


def active_tape():
    """The tape this thread is recording, or None."""
    here = threading.get_ident()
    return next((tape for tape in list(_tapes) if tape.thread == here), None)


# ----- two tapes of one step: the same computation? ----------------------------------------
def difference(first, second):
    """Why two tapes of one captured function differ (None when they match): the first op
    that ran differently, or the first input or option that came from elsewhere."""
    if len(first.entries) != len(second.entries):
        return (f"call 1 ran {len(first.entries)} ops, call 2 ran {len(second.entries)}")
    for index, (a, b) in enumerate(zip(first.entries, second.entries)):
        what = a.describe(index)
        if a.function is not b.function:
            return f"{what} became {b.function.__name__}"
        if a.record != b.record or a.ctx.needs_input_grad != b.ctx.needs_input_grad:
            return f"{what} records its inputs' gradients differently"
        if a.inputs != b.inputs or a.outputs != b.outputs:
            return f"{what} reads its inputs from other ops"
        if a.static.keys() != b.static.keys() or any(
                not _same_value(a.static[k], b.static[k]) for k in a.static):
            return f"{what} has other options ({a.static} then {b.static})"
        if a.traced != b.traced:
            return f"{what} takes its array options from other ops"
        if a.ctx.outputs_meta != b.ctx.outputs_meta:
            return f"{what} gives outputs of other shapes or dtypes"
    for slot, (a, b) in enumerate(zip(first.kinds, second.kinds)):
        problem = _slot_difference(a, b)
        if problem:
            user = next((i for i, e in enumerate(first.entries)
                         if slot in e.inputs or any(slot == s or type(s) is tuple and slot in s
                                                    for _, s, _ in e.traced)), None)
            where = "" if user is None else f" of {first.entries[user].describe(user)}"
            return problem + where
    if route_signature(first.route_list) != route_signature(second.route_list):
        return "the gradients flow along other paths"
    return None


def _slot_difference(a, b):
    if a[0] != b[0] and {a[0], b[0]} != {LEAF, ARRAY}:
        return "an input comes from elsewhere"
    if a[0] in (NONE, ARG, OUT, VIEW):
        return None if a == b else "an input comes from elsewhere"
    if a[0] == VALUE:
        return None if _same_value(a[1], b[1]) else f"a value changed ({a[1]!r}, {b[1]!r})"
    x, y = a[1], b[1]
    if x is y and a[0] == LEAF and len(a) > 2 and a[2] != b[2]:
        return (f"a hook is registered on the leaf tensor{_named(x)} at each call, which a "
                "replay cannot repeat: register it once, outside the captured function")
    if x is y:                   # the same parameter, buffer or array: read at each replay
        return None
    if a[0] == LEAF and (x.requires_grad or y.requires_grad):
        return (f"a tensor that requires grad (shape {x.shape}) is a new one at each call: "
                "create parameters outside the captured function")
    x, y = (v._array if a[0] == LEAF else v for v in (x, y))
    if x is y:                   # two tensors of one array (p.detach()): read where it is
        return None
    if not _same_array(x, y):
        return f"a constant input of shape {tuple(x.shape)} changed between the calls"
    return None


def _named(t):
    return f" '{t.name}'" if t.name else ""


def _same_value(a, b):
    if a is b or type(a) is float and type(b) is float and a != a and b != b:   # NaN, NaN
        return True
    if _is_array(a) or _is_array(b):
        return _is_array(a) and _is_array(b) and _same_array(a, b)
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


def _same_array(a, b):
    # bit for bit: NaN equals NaN, 0.0 differs from -0.0
    return (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
            and np.ascontiguousarray(_host(a)).tobytes()
            == np.ascontiguousarray(_host(b)).tobytes())


def _address(array):
    return array.data.ptr if is_cupy_array(array) else array.__array_interface__["data"][0]


def _bounds(array):
    # the first byte and one past the last byte that ``array`` reaches
    low = high = _address(array)
    if array.size == 0:
        return low, low
    for n, stride in zip(array.shape, array.strides):
        if stride > 0:
            high += (n - 1) * stride
        else:
            low += (n - 1) * stride
    return low, high + array.itemsize


def _host(array):
    return array.get() if is_cupy_array(array) else array


def route_signature(route_list):
    """The routes with each leaf by identity: comparable without Tensor's ``==``."""
    return [tuple((p, kind, id(key) if kind == LEAF else key, shape, dtype)
                  for p, kind, key, shape, dtype in routes) for routes in route_list]
