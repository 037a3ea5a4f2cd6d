"""PyTorch's saved-tensor attributes of a graph node: ``grad_fn._saved_self``,
``_saved_other`` (the node's first and second inputs, where it saved their data) and
``_saved_result`` (its output's data, as a new Tensor of the node), and their
``_raw_saved_*`` handles, ``SavedTensor``, whose ``register_hooks(pack_hook, unpack_hook)``
packs that one saved tensor at once and unpacks it at each read by backward (and by
``_saved_*``). Other saved attributes of torch's nodes (``_saved_exponent``, ...) are not
offered: the engine's nodes keep options under names of their own."""

import weakref

from .inputs import _tensor

_INPUTS = {"self": 0, "other": 1}
_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")


def saved_attribute(node, name):
    """``node._saved_<role>`` (a Tensor) or ``node._raw_saved_<role>`` (a ``SavedTensor``)
    for role self, other or result; an AttributeError, as torch's, for another name or a
    role the node did not save.

    Example:
        >>> y = x.pow(2)
        >>> y.grad_fn._saved_self is x
        True
    """
    raw = name.startswith("_raw_saved_")
    role = name[len("_raw_saved_" if raw else "_saved_"):]
    found = _find(node, role) if role in _INPUTS or role == "result" else None
    if found is None:
        raise AttributeError(f"'{node.name()}' object has no attribute '{name}'")
    saved = SavedTensor(node, role, *found)
    return saved if raw else saved.value()


def _find(node, role):
    # (position in the saved arrays, the input Tensor or None) of the role, else None
    if node._freed:
        raise RuntimeError(_FREED)
    hooked = node.__dict__.get("_saved_tensor_hooks", {})
    for position, (owner, tensor, _, _) in hooked.items():
        if owner == role:
            return position, tensor
    inputs = [t for t in node.inputs if t is not None]
    if role in _INPUTS:
        index = _INPUTS[role]
        tensor = node.inputs[index] if index < len(node.inputs) else None
        if tensor is None:
            return None
        return next(((p, tensor) for p, a in enumerate(node._saved) if a is tensor._array),
                    None)
    shapes = node.outputs_meta[:1]
    for position, array in enumerate(node._saved):
        if array is not None and all(array is not t._array for t in inputs) and shapes \
                and (array.shape, array.dtype) == shapes[0]:
            return position, None
    return None


class SavedTensor:
    """One tensor a node saved for backward (torch's ``torch._C._autograd.SavedTensor``),
    as ``grad_fn._raw_saved_self`` gives it.

    ``register_hooks(pack_hook, unpack_hook)``: ``pack_hook(tensor)`` runs now and its
    result is kept instead of the tensor; ``unpack_hook(packed) -> Tensor`` runs at each
    read (backward's, ``_saved_*``'s). Once per saved tensor, as torch's.

    Example:
        >>> y = x.pow(2)
        >>> y.grad_fn._raw_saved_self.register_hooks(lambda t: t.clone(), lambda t: t)
    """

    def __init__(self, node, role, position, tensor):
        self._node, self._role = node, role
        self._position, self._tensor = position, tensor

    def value(self):
        """The saved tensor as ``_saved_<role>`` gives it (unpacked, where hooked)."""
        node = self._node
        hooked = node.__dict__.get("_saved_tensor_hooks", {})
        if self._position in hooked:
            _, _, packed, unpack = hooked[self._position]
            return _unpacked(unpack(packed))
        if self._tensor is not None:
            return self._tensor
        return _tensor.Tensor._from_op(node._saved[self._position], node, 0)

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack this saved tensor with ``pack_hook`` now; ``unpack_hook`` at each read."""
        for name, hook in (("pack_hook", pack_hook), ("unpack_hook", unpack_hook)):
            if not callable(hook):
                raise TypeError(f"register_hooks: {name} must be callable, got "
                                f"{type(hook).__name__}")
        node = self._node
        if node._freed:
            raise RuntimeError(_FREED)
        hooked = node.__dict__.setdefault("_saved_tensor_hooks", {})
        if self._position in hooked or any(type(e[0]) is not list and not isinstance(
                e[0], _HookedBox) for e in node._saved_versions):
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at "
                               "a time.")
        packed = pack_hook(self.value())
        hooked[self._position] = (self._role, self._tensor, packed, unpack_hook)
        saved = list(node._saved)
        array, saved[self._position] = saved[self._position], None
        node._saved = tuple(saved)
        # the hooked tensor is no longer checked for in-place writes, as torch's: what the
        # hook returns is what backward reads
        boxes = [t._version_box for t in node.inputs if t is not None]
        kept = tuple(e for e in node._saved_versions if e[2] is None or not (
            e[0] is self._tensor._version_box if self._tensor is not None
            else e[2] == array.shape and all(e[0] is not b for b in boxes)))
        if not any(isinstance(e[0], _HookedBox) for e in kept):
            kept += ((_HookedBox(node), 0, None),)
        node._saved_versions = kept


class _HookedBox:
    """Read as a version counter by ``Context.saved``: ``box[0]`` unpacks the node's hooked
    saved tensors into its saved arrays and answers the version recorded (0)."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = weakref.ref(node)   # the node holds the box: no reference cycle

    def __getitem__(self, index):
        node = self.node()
        if node is not None:
            saved = list(node._saved)
            for position, (_, _, packed, unpack) in node._saved_tensor_hooks.items():
                saved[position] = _unpacked(unpack(packed))._array
            node._saved = tuple(saved)
        return 0


def _unpacked(tensor):
    if not isinstance(tensor, _tensor.Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(tensor).__name__}")
    return tensor
