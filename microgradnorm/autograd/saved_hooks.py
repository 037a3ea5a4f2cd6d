"""PyTorch's hooks on saved tensors (``torch.autograd.graph``): ``saved_tensors_hooks``,
``save_on_cpu``, ``disable_saved_tensors_hooks``.

Inside ``saved_tensors_hooks(pack_hook, unpack_hook)`` every array a recorded node keeps for
backward (``ctx.save_for_backward``) is handed to ``pack_hook`` as a Tensor when the node is
made (the input or output Tensor whose data it is, else a new Tensor without history), and
the node keeps what the hook returns instead of the array; each read of ``ctx.saved`` (once
per backward for the built-in ops) calls ``unpack_hook`` on it, whose Tensor's data the
backward reads. ``history.py``'s ``_track_saved`` packs, where the saved arrays are matched
to their tensors; the unpacking sits behind ``Context.saved``'s check of the version
counters: a packed node's one entry there is a ``_Packed`` box whose read unpacks, so the
engine pays nothing while no hook is active. As torch's, the hooks are per thread, the
innermost pair applies, a pack hook runs with the hooks off (its own ops pack nothing), the
unpack hook is the one active when the node was made, and a packed array is not checked
for in-place changes: what the hook returns is what backward reads.
"""

import contextlib
import threading
import weakref

from .inputs import _tensor

__all__ = ["disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]

# (thread ident, pack_hook, unpack_hook) of each active block, innermost last; empty, it
# costs a node that saves arrays one test (``_track_saved``)
_hooks = []
_packing = set()        # the threads running a pack hook: their ops pack nothing
# per thread, the inputs of the node whose saved tensors are being packed: a non-reentrant
# checkpoint compares their dtypes too, as torch's saves the operands an op converts here
packing_inputs = threading.local()
_disabled = {}          # thread ident -> the message of its innermost disable block
_NONE = object()        # a None placeholder of save_for_backward: not packed


class saved_tensors_hooks:
    """Pack each tensor a node saves for backward when it is saved, unpack it when
    backward reads it (``torch.autograd.graph.saved_tensors_hooks``).

    ``pack_hook(tensor) -> anything`` runs once per saved tensor as the node is recorded;
    ``unpack_hook(packed) -> Tensor`` once per saved tensor at each read (the built-in ops
    read once per backward), its result's data standing for the saved array.

    Args:
        pack_hook: a function of a Tensor; what it returns is kept instead of the array.
        unpack_hook: a function of what ``pack_hook`` returned; returns a Tensor.

    Example:
        >>> with mg.autograd.graph.saved_tensors_hooks(lambda t: t.numpy().copy(),
        ...                                            lambda a: mg.tensor(a)):
        ...     y = (x * x).sum()                # x: packed twice, as a NumPy copy
        >>> y.backward()                         # unpacked twice
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook
        self._entries = []

    def __enter__(self):
        here = threading.get_ident()
        if here in _disabled:
            raise RuntimeError(_disabled[here])
        entry = (here, self.pack_hook, self.unpack_hook)
        self._entries.append(entry)
        _hooks.append(entry)
        return self

    def __exit__(self, *exc):
        _hooks.remove(self._entries.pop())
        return False


class save_on_cpu(saved_tensors_hooks):
    """Keep the saved tensors in CPU memory until backward, which moves each back to its
    device (``torch.autograd.graph.save_on_cpu``); on the CPU the saved tensor itself.

    Args:
        pin_memory: taken; the copy is plain NumPy memory.
        device_type: taken, as torch's.
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        self.pin_memory, self.device_type = pin_memory, device_type

        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """A block (or decorator) where entering ``saved_tensors_hooks`` raises a RuntimeError
    with ``error_message``, as torch's; entering it while hooks are active raises too."""
    here = threading.get_ident()
    if any(thread == here for thread, _, _ in _hooks):
        raise RuntimeError(error_message)
    previous = _disabled.get(here)
    _disabled[here] = error_message
    try:
        yield
    finally:
        if previous is None:
            del _disabled[here]
        else:
            _disabled[here] = previous


def pack_saved(ctx, inputs, outputs):
    """Pack what ``ctx`` saved with this thread's innermost hooks, if any (``_track_saved``,
    once the versions are recorded): the node keeps the packed values in a ``_Packed`` box
    and, of its arrays, only its inputs' (which ``ctx.inputs`` holds anyway, and which an
    in-place op on an input reads to keep the old values: tensor.py)."""
    here = threading.get_ident()
    hooks = next((h for h in reversed(_hooks) if h[0] == here), None)
    if hooks is None or here in _packing:
        return
    _, pack, unpack = hooks
    Tensor = _tensor.Tensor
    packed, kept = [], []
    _packing.add(here)
    packing_inputs.tensors = inputs
    try:
        for array in ctx._saved:
            if array is None:
                packed.append(_NONE)
                kept.append(None)
                continue
            source = next((t for t in inputs if t is not None and t._array is array), None)
            kept.append(None if source is None else array)
            if source is not None and source._wrapped_number:   # a Python number: as is
                packed.append(_Kept(array))
                continue
            if source is None:      # an output (torch hands the output itself), else new
                source = next((t for t in outputs if t._array is array), None)
            packed.append(pack(Tensor._from_op(array, None) if source is None else source))
    finally:
        _packing.discard(here)
        packing_inputs.tensors = None
    ctx._saved = tuple(kept)
    ctx._saved_versions = ((_Packed(ctx, packed, unpack), 0, None),)


def pack_now(tensors):
    """Pack ``tensors`` with this thread's innermost hooks, as a node recorded now would
    (a non-reentrant checkpoint saves its inputs so: an enclosing one then recomputes them,
    as torch's input-saving node lets it); None while no hooks are active, else
    ``(unpack_hook, [what pack_hook returned, per tensor])``."""
    here = threading.get_ident()
    hooks = next((h for h in reversed(_hooks) if h[0] == here), None)
    if hooks is None or here in _packing:
        return None
    _, pack, unpack = hooks
    _packing.add(here)
    try:
        return unpack, [pack(t) for t in tensors]
    finally:
        _packing.discard(here)


class _Packed:
    """A packed node's saved values, read as its version counter by ``Context.saved``:
    ``box[0]`` unpacks them into ``ctx._saved`` and answers the version recorded (0)."""

    __slots__ = ("node", "packed", "unpack")

    def __init__(self, node, packed, unpack):
        self.node = weakref.ref(node)   # the node holds the box: no reference cycle
        self.packed, self.unpack = packed, unpack

    def __getitem__(self, index):
        node = self.node()
        if node is not None:
            node._saved = tuple([None if p is _NONE else p.array if type(p) is _Kept
                                 else _unpacked(self.unpack(p)) for p in self.packed])
        return 0


class _Kept:
    """A saved Python number's array, which torch keeps as a number: neither hook sees it."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def _unpacked(tensor):
    if not isinstance(tensor, _tensor.Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(tensor).__name__}")
    return tensor._array


_mutation_allowed = [False]     # a process-wide flag, as torch's: the contexts do not nest


class _MutationContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block: the copies its nodes
    saved (``original``, keyed by the packed handle), dropped when the block ends."""

    def __init__(self):
        self.original = {}

    def clear(self):
        self.original.clear()


_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in "
            "which the graph was originally recorded.")


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """A block in which a tensor saved for backward may be changed in place
    (``torch.autograd.graph.allow_mutation_on_saved_tensors``): backward reads the value it
    had when it was saved, where outside the block it refuses to run. Both the forward and
    the backward run inside the block; a backward after it raises an AssertionError, and
    blocks do not nest (RuntimeError).

    Each saved tensor is copied when it is saved (torch copies it when it is first changed:
    the same gradients, more memory held here until backward).

    Example:
        >>> with mg.autograd.graph.allow_mutation_on_saved_tensors():
        ...     b = a.clone()                    # a: a leaf that requires grad
        ...     out = (b ** 2).sum()
        ...     b.sin_()                         # pow saved b: its old value is kept
        ...     out.backward()                   # a.grad == 2 * a
    """
    state = _MutationContext()

    def pack(tensor):
        handle = object()
        state.original[handle] = tensor.detach().clone()
        return handle

    def unpack(handle):
        if not _mutation_allowed[0] or handle not in state.original:
            raise AssertionError(_OUTSIDE)
        return state.original[handle]

    with saved_tensors_hooks(pack, unpack):
        try:
            if _mutation_allowed[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _mutation_allowed[0] = True
            yield state
        finally:            # (a nested block's refusal ends the outer one too, as torch's)
            state.clear()
            _mutation_allowed[0] = False
