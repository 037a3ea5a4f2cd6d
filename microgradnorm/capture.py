"""``mg.capture``: record one step's ops once, then replay them without building the graph
again, PyTorch's ``torch.cuda.make_graphed_callables`` (tinygrad's TinyJit) in miniature.

A call of the captured function returns Tensors whose ``grad_fn`` is one node,
``CapturedStep``; its backward replays the recorded backward and hands the gradients to
the engine, so ``.grad``, optimizers, hooks on parameters and accumulation across calls work
as after an eager call. The machinery is ``autograd/tape.py`` (the recording) and
``autograd/replay.py``; this module holds the public face and the guards
(docs/architecture.md, "Graph capture")."""

import threading

import numpy as np

from . import autograd
from .autograd.function import _tapes
from .autograd.replay import CapturedStep, Lease, Plan, Replay
from .autograd.tape import LEAF, CaptureError, Tape, active_tape, difference
from .backend import is_cupy_array, silent_floats
from .generator import default_generator
from .nn import module as _module
from .nn.module import Module
from .tensor import Tensor

__all__ = ["CaptureError", "Captured", "capture"]


def capture(fn):
    """Capture ``fn``'s step: record its ops on the first two calls, replay them after.

    The first call runs ``fn`` eagerly while a tape records every op (Function call) it
    makes and where each op's arrays come from: an argument, a parameter or buffer (read
    afresh at each call, so optimizer updates are seen), an earlier op, or a constant. The
    second call records again and compares: a step whose ops, options or constants change
    between two calls depends on something besides its arguments and is refused. Later
    calls rerun the recorded forwards on the arguments' arrays without Tensors, graph
    nodes or the Python of ``fn``; their outputs have one node whose backward reruns the
    recorded backwards in the engine's order, giving the eager step's numbers bit for bit.

    Args:
        fn: a function (or Module) of Tensors, arrays (wrapped as Tensors sharing their
            memory) and other values (compared at each call: they may steer Python), that
            returns a Tensor or a tuple of Tensors, typically a loss.

    Returns:
        a ``Captured``: call it as ``fn``; ``draw()`` draws the recorded graph, ``reset()``
        forgets the capture.

    Raises:
        CaptureError (a RuntimeError) when recording finds what a replay cannot repeat:
        random numbers drawn outside an op (``F.dropout``'s mask), an in-place write into
        a tensor of the step, a hook registered inside it, a backward inside it, an input
        computed with a graph outside it, ops or constants that differ between the first
        two calls; and at a later call that does not match the capture (the number of
        arguments, an argument's shape, dtype, strides, requires_grad, value or being an
        inference tensor, which arguments share one array, grad mode, a parameter
        replaced, reshaped or frozen). A refused call changes nothing.

    Example:
        >>> @mg.capture
        ... def loss_fn(idx, targets):
        ...     return F.cross_entropy(model(idx).view(-1, vocab), targets.view(-1))
        >>> for idx, targets in batches:
        ...     loss = loss_fn(idx, targets)       # one node; calls 3+ replay
        ...     optimizer.zero_grad()
        ...     loss.backward()
        ...     optimizer.step()
    """
    if not callable(fn):
        raise TypeError(f"capture: fn must be callable, got {type(fn).__name__}")
    return Captured(fn)


class Captured:
    """A captured function (``mg.capture(fn)``); see ``capture``."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self._lock = threading.Lock()            # one recording at a time
        self.reset()

    def reset(self):
        """Forget the capture: the next two calls record again (after changing the model
        structure, train/eval mode, the norm impl or anything else ``fn`` reads)."""
        self._first = None           # the first call's _Recording, until the second call
        self._plan = None            # the checked plan, from the second call on
        self._signature = self._grad = None
        self._owners = ()            # see _owners
        self._tree = None

    @property
    def captured(self):
        """True once two calls matched: the next call replays."""
        return self._plan is not None

    @property
    def nodes(self):
        """The op nodes of the recorded backward graph (what the eager step records)."""
        plan = self._plan or (self._first.plan if self._first else None)
        if plan is None:
            raise CaptureError(f"captured {self.__name__}: nothing recorded yet; call it once")
        return plan.n_nodes

    def __repr__(self):
        state = "replaying" if self._plan else "recording"
        return f"<captured {self.__name__} ({state})>"

    # ----- calls --------------------------------------------------------------------------
    def __call__(self, *args):
        if active_tape() is not None:
            raise CaptureError(f"captured {self.__name__} was called while another function "
                               "is being captured in this thread: captures do not nest")
        args = tuple([_argument(a) for a in args])
        try:
            signature = _signature(args)
        except CaptureError as error:
            raise CaptureError(f"captured {self.__name__}: {error}") from None
        grad = autograd.is_grad_enabled()
        plan = self._plan
        if plan is None:
            with self._lock:
                if self._plan is None:
                    return self._record(args, signature, grad)
            plan = self._plan
        self._check(args, signature, grad, plan)
        return _outputs(plan, Replay(plan, plan.frame(), _filled(plan, args)), args)

    def _record(self, args, signature, grad):
        first = self._first
        if first is not None:
            self._check(args, signature, grad, None)
        tape = Tape(args)
        before = default_generator.state_array()
        _tapes.append(tape)
        try:
            result = self.fn(*args)
        except CaptureError as error:
            raise CaptureError(f"captured {self.__name__}: {error}") from None
        finally:
            _tapes.remove(tape)
        if (default_generator.state_array() != before).any():
            default_generator.set_state(before)
            raise CaptureError(
                f"captured {self.__name__}: the step drew random numbers from the generator "
                "outside an op (F.dropout and nn.Dropout draw their mask in Python, "
                "attention's dropout its mask): a replay would reuse the first call's draws. "
                "Capture with dropout off (p=0, or model.eval()), or keep the random part "
                "outside the captured function")
        try:
            recording = _Recording(tape, result)
        except CaptureError as error:
            raise CaptureError(f"captured {self.__name__}: {error}") from None
        if first is None:
            self._first, self._signature, self._grad = recording, signature, grad
            return recording.outputs(args)
        problem = difference(first.tape, tape)
        if problem is None and (first.results != recording.results
                                or first.as_tuple != recording.as_tuple):
            problem = "the outputs come from other ops"
        if problem is not None:
            raise CaptureError(
                f"captured {self.__name__}: the second call ran another computation than the "
                f"first ({problem}). The step depends on data that its ops do not trace: a "
                "value computed from the data with NumPy outside any op (max pooling's "
                "indices, cross-entropy's targets with weight= or label_smoothing=), a "
                "branch on .item() or on a Python counter, random numbers drawn outside an "
                "op, an array read from a closure, a non-contiguous argument that NumPy "
                "copies to reshape it (pass np.ascontiguousarray(...)). Such a step cannot "
                "be captured; pass "
                "outside data as an argument")
        persistent = {slot for slot, (a, b) in enumerate(zip(first.tape.kinds, tape.kinds))
                      if a[0] == b[0] == LEAF and a[1] is b[1]}
        self._first = None
        plan = recording.finish(persistent)
        self._owners = _owners(self.fn, args, plan.guarded)
        self._tree = _module._tree_version[0]
        self._plan = plan
        return _outputs(plan, Replay(plan, plan.contexts, recording.values, True), args)

    # ----- guards: each raises before anything runs ---------------------------------------
    def _check(self, args, signature, grad, plan):
        name = self.__name__
        if signature != self._signature:
            raise CaptureError(f"captured {name}: "
                               f"{_signature_difference(self._signature, signature)}. A "
                               "capture holds for its arguments' shapes, dtypes and values: "
                               "call reset() (or capture again) for new ones")
        if grad != self._grad:
            raise CaptureError(f"captured {name}: grad mode is {'on' if grad else 'off'}, it "
                               f"was {'on' if self._grad else 'off'} at capture; capture the "
                               "step once per mode")
        if plan is None:
            return
        for leaf, (shape, dtype, requires_grad) in zip(plan.guarded, plan.leaf_meta):
            data = leaf._array
            if data.shape != shape or data.dtype != dtype or leaf.requires_grad != requires_grad:
                raise CaptureError(
                    f"captured {name}: {_leaf_name(leaf)} is now {data.shape} {data.dtype}, "
                    f"requires_grad={leaf.requires_grad}; at capture {shape} {dtype}, "
                    f"requires_grad={requires_grad}. Capture again (reset()) after changing "
                    "the model")
        for leaf, table, key, _, _, path in self._owners:
            if table.get(key) is not leaf:
                raise CaptureError(_replaced(name, path, "another tensor"))
        if _module._tree_version[0] != self._tree:        # a module was (re)assigned
            for _, _, _, root, holder, path in self._owners:
                try:
                    now = root.get_submodule(path.rpartition(".")[0])
                except AttributeError:
                    now = None
                if now is not holder:
                    raise CaptureError(_replaced(name, path, "another module"))
            self._tree = _module._tree_version[0]

    # ----- the viewer ---------------------------------------------------------------------
    def graph_roots(self):
        """Tensors (without data) whose graph is the recorded one: what ``viz.draw`` draws."""
        plan = self._plan or (self._first.plan if self._first else None)
        if plan is None:
            raise CaptureError(f"captured {self.__name__}: nothing recorded yet; call it once")
        return plan.roots

    def draw(self, **options):
        """``viz.draw`` of the recorded graph (the options of ``viz.draw``)."""
        from . import viz
        return viz.draw(self, **options)


class _Recording:
    """One recorded call: its tape checked, its outputs located, its plan (the first call's
    backward runs through it)."""

    def __init__(self, tape, result):
        single = isinstance(result, Tensor)
        tensors = (result,) if single else result
        if not isinstance(tensors, (tuple, list)) or not tensors or \
                not all(isinstance(t, Tensor) for t in tensors):
            raise CaptureError(f"the function must return a Tensor or a tuple of Tensors, "
                               f"got {type(result).__name__}")
        tape.check_writes()
        self.tape, self.as_tuple = tape, not single
        self.results = tape.result_slots(tensors)
        tape.route_list = tape.routes()
        # the call's tensors and arrays go: what is left holds structure and constants
        tape.seen = tape.by_array = tape.by_leaf = tape.by_option = tape.traced = None
        self.values = [None] * len(tape.kinds)
        for (slot, _), t in zip(self.results, tensors):
            self.values[slot] = t._array
        self.plan = None

    def outputs(self, args):
        # the first call: its own plan (every leaf read afresh), its backward a replay
        leaves = {slot for slot, kind in enumerate(self.tape.kinds) if kind[0] == LEAF}
        self.plan = self.finish(leaves)
        return _outputs(self.plan, Replay(self.plan, self.plan.contexts, self.values, True),
                        args)

    def finish(self, persistent):
        plan = Plan(self.tape, self.results, persistent)
        plan.as_tuple = self.as_tuple
        return plan


def _outputs(plan, replay, args):
    # the Tensors a call returns: those with a graph from one CapturedStep node
    if plan.grad_slots:
        inputs = [args[i] for i in plan.grad_args] + list(plan.grad_leaves)
        checked = plan.checked_leaves + tuple([args[i] for i in plan.checked_args])
        found = CapturedStep.apply(*inputs, run=replay, checked=checked)
        found = iter(found if isinstance(found, tuple) else (found,))
    else:
        with silent_floats():               # as Function.apply runs each op's forward
            replay.forward()
        Lease(replay)                       # dropped at once: the frame is free again
    values = replay.values
    outs = tuple([next(found) if grad else Tensor._from_op(values[slot], None)
                  for slot, grad in plan.results])
    return outs if plan.as_tuple else outs[0]


def _filled(plan, args):
    # the slot values a replay starts from: constants, the arguments', the leaves' arrays
    values = plan.template.copy()
    for i, slot in plan.arg_slots:
        values[slot] = args[i]._array
    for leaf, slot in zip(plan.leaves, plan.leaf_slots):
        values[slot] = leaf._array
    return values


# ----- arguments ----------------------------------------------------------------------------
def _argument(value):
    # an array becomes a Tensor of that very array (torch.from_numpy), so that its ops are
    # traced to it; Tensors and other values stay
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray) or is_cupy_array(value):
        return Tensor._from_op(value, None)
    return value


def _signature(args):
    """What a call must repeat of the capture's: per Tensor its array's type, shape, dtype,
    strides, requires_grad, the first argument holding the same array (one array is one
    slot of the tape) and whether it is an inference tensor (which no op may save); per
    other value its type and the value itself."""
    first = {}
    return tuple([_signature_of(a, i, first) for i, a in enumerate(args)])


def _signature_of(value, i, first):
    if isinstance(value, Tensor):
        data = value._array
        return ("tensor", type(data), data.shape, data.dtype, value.requires_grad,
                data.strides, first.setdefault(id(data), i), value.is_inference())
    if _holds_arrays(value):
        raise CaptureError(f"argument {i} is a {type(value).__name__} holding "
                           "tensors or arrays; pass each tensor as an argument of its own")
    if isinstance(value, float) and value != value:
        return ("value", float, "nan")            # NaN equals itself here, as on the tape
    return ("value", type(value), value)


def _holds_arrays(value):
    if isinstance(value, (list, tuple)):
        return any(_holds_arrays(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_arrays(v) for v in value.values())
    return isinstance(value, (Tensor, np.ndarray)) or is_cupy_array(value)


def _signature_difference(expected, got):
    if len(expected) != len(got):
        return f"got {len(got)} arguments, expected {len(expected)} as at capture"
    for i, (a, b) in enumerate(zip(expected, got)):
        if a == b:
            continue
        if a[0] != b[0] or a[1] is not b[1]:
            return f"argument {i} is a {_kind(b)}, expected a {_kind(a)} as at capture"
        if a[0] == "value":
            return (f"argument {i} is {b[2]!r}, expected {a[2]!r} as at capture (a value "
                    "may steer the step's Python)")
        for field, k in (("shape", 2), ("dtype", 3), ("requires_grad", 4), ("strides", 5)):
            if a[k] != b[k]:
                return (f"argument {i} has {field} {b[k]}, expected {a[k]} as at capture"
                        + (" (the replay lays views of its memory out as then)"
                           if field == "strides" else ""))
        if a[6] != b[6]:
            return (f"argument {i} is " + (f"the array of argument {b[6]}" if b[6] != i else
                                           "an array of its own")
                    + ", at capture " + (f"the array of argument {a[6]}" if a[6] != i else
                                         "an array of its own")
                    + " (one array is one input of the recorded step)")
        if a[7] != b[7]:        # the recording checked what an op saves of it: torch's rule
            return (f"argument {i} is {'an' if b[7] else 'no'} inference tensor, at capture "
                    f"{'one' if a[7] else 'an ordinary one'} (made inside mg.inference_mode())")
    return "the arguments differ from the capture's"


def _kind(signature):
    kind, cls = signature[0], signature[1]
    return f"Tensor on {cls.__module__.split('.')[0]} arrays" if kind == "tensor" else \
        cls.__name__


# ----- parameters and the modules that hold them --------------------------------------------
def _leaf_name(leaf):
    return f"parameter '{leaf.name}'" if leaf.name else f"a leaf tensor of shape {leaf.shape}"


def _replaced(name, path, by):
    return (f"captured {name}: '{path}' was replaced by {by} since the capture, and the "
            "replay would read the old one; capture again (reset()) after changing the model")


def _owners(fn, args, leaves):
    """(leaf, the table holding it, its key there, root module, holding module, dotted
    name) for each leaf that a module near ``fn`` holds (``fn`` itself, its ``self``, its
    closure and globals, the arguments): what the guards look up to see none replaced."""
    wanted = {id(t) for t in leaves}
    owners = {}
    for root in _modules_near(fn, args):
        for path, module in root.named_modules():
            for table in (module._parameters, module._buffers):
                for key, t in table.items():
                    if t is not None and id(t) in wanted and id(t) not in owners:
                        name = f"{path}.{key}" if path else key
                        owners[id(t)] = (t, table, key, root, module, name)
    return tuple(owners.values())


def _modules_near(fn, args):
    found = {}

    def add(value):
        if isinstance(value, Module):
            found.setdefault(id(value), value)

    add(fn)
    add(getattr(fn, "__self__", None))
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            add(cell.cell_contents)
        except ValueError:                   # a cell not yet filled
            pass
    code, scope = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    for name in code.co_names if code is not None else ():
        add(scope.get(name))
    for value in args:
        add(value)
    return list(found.values())
