"""The non-reentrant form of ``utils.checkpoint`` (``use_reentrant=False``), built on the
saved-tensor hooks (``autograd.graph.saved_tensors_hooks``) as torch's is.

Forward runs the function under a pack hook that keeps, for each tensor a node saves, a
small holder instead of the array (with its shape, dtype and device for the determinism
check). The function's inputs are kept by the frame, or packed by the hooks active around
the call (a checkpoint inside another one: the outer recomputes them). Once the function has
returned, the nodes it recorded drop the arrays they kept of their inputs, and the
intermediate tensors those nodes hold as inputs keep only their shape and dtype (a
zero-stride array): this engine's nodes hold their input tensors, so without that the
activations would stay alive through the graph's structure. A tensor referenced from
anywhere else (an output, a view of it, a list the function filled) is left whole.

The first unpack in a backward runs the function again (under the forward's random state
when ``preserve_rng_state``, in ``context_fn``'s second context manager, with grad enabled)
under a hook that hands each recomputed saved tensor to its holder, stopping as soon as the
last one is there (``early_stop``), and puts the recomputed data back into the intermediate
tensors it blanked. Each backward (``backward``, ``autograd.grad``, a ``retain_graph=True``
second one) recomputes once; with ``determinism_check="default"`` a recomputed tensor whose
shape, dtype or device differs from the forward's, or whose node's inputs have other dtypes
(an op here saves the operand it converted, torch's the one given), raises
``CheckpointError``, and so does a custom Function's second ``ctx.saved_tensors`` read in
one backward.
"""

import sys
import weakref

from .. import factories
from ..autograd import enable_grad
from ..autograd.custom import user_reads
from ..autograd.function import _next_seq
from ..autograd.history import _as_seen_by
from ..autograd.runs import running
from ..autograd.saved_hooks import _Packed, pack_now, packing_inputs, saved_tensors_hooks
from ..backend import array_module, memory_owner
from ..random import fork_rng
from ..tensor import Tensor

__all__ = ["CheckpointError"]


class CheckpointError(RuntimeError):
    """What a non-reentrant checkpoint raises when its recomputation does not match the
    forward (``torch.utils.checkpoint.CheckpointError``, a RuntimeError)."""


class _StopRecomputation(Exception):
    """Raised by the recomputation's pack hook once every saved tensor is there."""


class _Holder:
    """What a node keeps of one saved tensor: per backward, the index of its recomputed
    value (None once handed out), and a weak reference to the array last handed out."""

    __slots__ = ("handles", "given", "__weakref__")

    def __init__(self):
        self.handles, self.given = {}, None


def _metadata(tensor):
    return {"shape": tuple(tensor.shape), "dtype": tensor.dtype, "device": str(tensor.device)}


def _operand_dtypes():
    # the dtypes of the inputs of the node packing now: an op here saves an operand it
    # converted (x * y of two dtypes), torch's the operand as given, whose dtype it checks
    inputs = getattr(packing_inputs, "tensors", None) or ()
    return tuple(None if t is None else t.dtype for t in inputs)


class _Frame:
    """One checkpointed call: its holders (weakly, in packing order), what recomputes it,
    and per backward in progress (keyed by the ``runs.Run``, kept with it) the recomputed
    tensors not yet handed out."""

    def __init__(self, recompute, check, early_stop):
        self.recompute, self.check, self.early_stop = recompute, check, early_stop
        self.holders, self.metas, self.sources = [], [], []
        self.restore = {}                 # pack index -> weakref to the tensor blanked
        self.tasks = {}                   # id(run) -> (run, {index: tensor}, [count])
        self.forward_completed = self.ignore_mismatch = False
        self.operands_now = {}            # pack index -> its node's operand dtypes, recomputed

    def pack(self, tensor):
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        self.sources.append(weakref.ref(tensor))
        if self.check:
            self.metas.append({**_metadata(tensor), "operand dtypes": _operand_dtypes()})
        return holder

    def unpack(self, holder):
        runs = running()
        task = runs[-1] if runs else object()     # outside a backward: a task of its own
        key = id(task)
        entry = self.tasks.get(key)
        if entry is None or entry[0] is not task:
            entry = self._recompute(task, runs)
        index = holder.handles.get(key)
        if index is None:
            array = holder.given() if holder.given is not None else None
            # the engine reads a node's saved arrays again (a double backward's formulas);
            # a user's ctx.saved_tensors read twice is torch's error
            if array is not None and not getattr(user_reads, "depth", 0):
                return Tensor._from_op(array, None)
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                "make sure to do so only once.")
        tensor = entry[1].pop(index)
        holder.handles[key] = None
        holder.given = weakref.ref(tensor._array)
        return tensor

    def _recompute(self, task, runs):
        # the entries of backwards that have ended go: their runs' ids may come again
        for key in [k for k, (t, _, _) in self.tasks.items() if all(t is not r for r in runs)]:
            del self.tasks[key]
        key = id(task)
        entry = self.tasks[key] = (task, {}, [0])
        try:
            with saved_tensors_hooks(lambda x: self._repack(entry, key, x), lambda x: x), \
                    enable_grad():
                self.recompute()
        except _StopRecomputation:
            pass
        self._check(entry, key)
        return entry

    def _repack(self, entry, key, tensor):
        index = entry[2][0]
        entry[2][0] += 1
        if index >= len(self.holders):
            if not self.forward_completed:        # a backward inside the function's forward
                self.ignore_mismatch = True
                return tensor
            raise CheckpointError("torch.utils.checkpoint: trying to save more tensors "
                                  "during recomputation than during the original forward "
                                  "pass.")
        holder = self.holders[index]()
        if self.check:
            self.operands_now[index] = _operand_dtypes()
        if holder is not None:                    # (its node may be gone already)
            holder.handles[key] = index
            entry[1][index] = tensor.detach() if tensor.requires_grad else tensor
            blanked = self.restore.get(index)
            blanked = blanked() if blanked is not None else None
            if blanked is not None and blanked.shape == tensor.shape:
                blanked._array = tensor._array    # the intermediate, whole again
        if self.early_stop and index + 1 == len(self.holders):
            raise _StopRecomputation
        return tensor

    def _check(self, entry, key):
        if self.ignore_mismatch:
            return
        if entry[2][0] != len(self.holders):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.holders)}\nNumber of tensors saved during recomputation: "
                f"{entry[2][0]}.")
        if not self.check:
            return
        different = []
        for index, ref in enumerate(self.holders):
            if ref() is None:
                continue
            now = {**_metadata(entry[1][index]),
                   "operand dtypes": self.operands_now.get(index, ())}
            if now != self.metas[index]:
                different.append(f"tensor at position {index}:\nsaved metadata: "
                                 f"{self.metas[index]}\nrecomputed metadata: {now}")
        if different:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n" + "\n".join(different))


def checkpoint_without_reentrant(function, args, kwargs, preserve, context_fn,
                                 determinism_check, early_stop):
    """``function(*args, **kwargs)`` with its saved tensors recomputed in backward (the
    module docstring); what ``checkpoint(..., use_reentrant=False)`` runs."""
    forward_context, recompute_context = context_fn()
    indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    tensors = [args[i] for i in indices]
    versions = [t._version_box[0] for t in tensors]
    requires = [t.requires_grad for t in tensors]
    packed = pack_now(tensors)                    # an enclosing checkpoint's hooks, if any
    kept = tensors if packed is None else None
    rng_state = factories.get_rng_state() if preserve else None

    def recompute():
        inputs = list(args)
        unpacked = kept if packed is None else [packed[0](p) for p in packed[1]]
        for i, t, version, grad in zip(indices, unpacked, versions, requires):
            if kept is not None and t._version_box[0] != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: an input of a checkpointed function (a tensor "
                    f"of shape {tuple(t.shape)}) is at version {t._version_box[0]}; expected "
                    f"version {version} instead.")
            # an enclosing checkpoint hands a recomputed value out detached: a leaf again
            inputs[i] = t if kept is not None or t.requires_grad == grad else \
                t.detach().requires_grad_(grad)
        with fork_rng(enabled=preserve):
            if preserve:
                factories.set_rng_state(rng_state)
            with recompute_context:
                function(*inputs, **kwargs)

    frame = _Frame(recompute, determinism_check == "default", early_stop)
    start = _next_seq()
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        output = function(*args, **kwargs)
    frame.forward_completed = True
    _release(frame, start, output, tensors)
    frame.sources = None
    return output


def _tensors_in(value, found):
    if isinstance(value, Tensor):
        found.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _tensors_in(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors_in(v, found)
    return found


def _release(frame, start, output, inputs):
    """Drop what the nodes ``function`` recorded keep of the activations: the input arrays
    kept beside the packed holders, and the data of the intermediate tensors they hold as
    inputs (made by those nodes, referenced from nowhere else)."""
    outputs = _tensors_in(output, [])
    keep = {id(memory_owner(t._array)) for t in outputs + inputs}
    nodes = [t.grad_fn for t in outputs if t.grad_fn is not None and t.grad_fn.seq >= start]
    seen, held = set(), {}                 # id(tensor) -> [tensor, references from nodes]
    while nodes:
        node = nodes.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        versions = node._saved_versions
        if len(versions) == 1 and type(versions[0][0]) is _Packed \
                and versions[0][0].unpack == frame.unpack:
            node._saved = (None,) * len(node._saved)
        for t in node.inputs:
            if t is None:
                continue
            parent = (t if t._history is None else _as_seen_by(t, node)).grad_fn
            if parent is None or parent.seq < start:
                continue
            nodes.append(parent)
            if id(t) in held:
                held[id(t)][1] += 1
            elif t._history is None and not t._retains_grad and t._base is None \
                    and id(memory_owner(t._array)) not in keep:
                held[id(t)] = [t, 1]
    # a tensor referenced only by the nodes (and this loop) is blanked; the loop's own
    # references are measured on a new object held the same way, first
    entries, blanked, baseline = [[object(), 0], *held.values()], set(), None
    held.clear()
    for entry in entries:
        t, count = entry
        extra = sys.getrefcount(t) - count
        if baseline is None:
            baseline = extra
        elif extra <= baseline:
            array = t._array
            t._array = array_module(array).broadcast_to(
                array_module(array).zeros((), dtype=array.dtype), array.shape)
            blanked.add(id(t))
    for index, ref in enumerate(frame.sources):
        source = ref()
        if source is not None and id(source) in blanked:
            frame.restore[index] = ref
