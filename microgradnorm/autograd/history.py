"""A node's bookkeeping beside the core of ``function.py``: the versions of the arrays it
saved (an in-place change before backward raises, as in PyTorch), what is left of it once
backward has freed it, and which state of an input written in place since it saw."""

import numpy as np

from ..dtypes import is_dtype
from .inference import refuse_saved
from .saved_hooks import _hooks, pack_saved


class NodeHistory:
    """``Context``'s bookkeeping: version checks, freeing, and the views of what is saved
    that ``graph_stats`` and the visualizer read."""

    __slots__ = ()
    backward_seq = None     # a custom Function's: Context.seq's count where its backward began

    def check_versions(self, versions):
        """Raise if a tensor whose array this node keeps was changed in place since:
        ``versions`` holds (the tensor's counter, its version then, its shape)."""
        for box, version, shape in versions:
            if box[0] != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: an array that {self.name} saved for backward "
                    f"(a tensor of shape {shape}) was modified in place and is at version "
                    f"{box[0]}; expected version {version} instead. Do the in-place change on "
                    "a copy (x = x.clone()) or after backward().")

    def check_not_freed(self):
        if self._freed:
            raise RuntimeError(
                f"Trying to backward through the graph a second time: {self.name} and the "
                "arrays it saved for backward were freed after the first backward(). Call "
                "backward(retain_graph=True) the first time if you need to backward twice.")

    def saved_arrays(self):
        """The saved arrays without checks (``graph_stats``)."""
        return () if self._freed else tuple(a for a in self._saved if a is not None)

    def named_saved_arrays(self):
        """(name from ``saved_names`` or None, array) for each saved array (the visualizer)."""
        if self._freed:
            return ()
        names = self.function.saved_names or (None,) * len(self._saved)
        return tuple((n, a) for n, a in zip(names, self._saved) if a is not None)

    def _as_array(self, scalar):
        """A 0-d result NumPy gave as a scalar, as a 0-d array; a save of that result
        (``save_for_backward(out)``) becomes the array, so its version is tracked."""
        array = np.asarray(scalar)
        if self._saved and any(a is scalar for a in self._saved):
            self._saved = tuple([array if a is scalar else a for a in self._saved])
        return array

    def _track_saved(self, inputs, outputs):
        # A saved array that is an input's or output's data records that tensor's version,
        # so an in-place change before backward is caught. The node keeps the counter, not
        # the tensor: an output holding its own node would be a reference cycle. Every
        # tensor holding the array counts (two tensors may share one array, not a counter).
        versions = []
        for a in self._saved:
            for t in inputs:
                if t is not None and t._array is a:      # (no method or property calls)
                    versions += [(t._version_box, t._version_box[0], a.shape)]
            for t in outputs:
                if t._array is a:
                    versions += [(t._version_box, t._version_box[0], a.shape)]
        if versions:
            for box, _, _ in versions:  # an inference tensor's counter: torch's refusal
                if box.__class__ is not list:
                    refuse_saved()
            self._saved_versions += tuple(versions)
        if _hooks:                  # saved_tensors_hooks (saved_hooks.py): pack what is kept
            pack_saved(self, inputs, outputs)

    def free(self):
        """Drop what backward needed (saved arrays, options holding arrays) and the inputs'
        data: a kept output holds the graph's structure, not its activations. A node that
        holds no data (nothing saved, options without arrays, every input a leaf that
        requires grad, a Python number or the output of a node left whole:
        ``x.float().view(-1, 1)``, ``x + 1``, ``torch.cat([x, y])`` of such leaves) is left
        whole, as torch's backward runs it again (``free`` runs producers first)."""
        if not self._saved and not self._kept_versions and self._holds_no_data():
            return
        self._saved = self._saved_versions = self._kept_versions = ()
        self.__dict__.clear()
        self.inputs = tuple([t if t is None or t.grad_fn is None and t._requires_grad
                             else _freed_input(t, self) for t in self.inputs])
        self._freed = True

    def _holds_no_data(self):
        for t in self.inputs:
            if t is not None and (t.grad_fn._freed or t._history is not None
                                  if t.grad_fn is not None
                                  else not (t._requires_grad or t._wrapped_number)):
                return False
        for value in self.__dict__.values():
            if _holds_data(value):
                return False
        return True


def _holds_data(value):
    # an option that keeps an array (or Tensor), directly or in a tuple or list
    if isinstance(value, (tuple, list)):
        return any(map(_holds_data, value))
    return hasattr(value, "shape") and not isinstance(value, np.generic) \
        and not is_dtype(value)


def _freed_input(t, node):
    # a leaf that requires grad stays (a parameter, not an activation); a constant goes
    if t is None or not t._requires_grad:
        return None
    if t.grad_fn is None:
        return t
    if t._history is not None:
        t = _as_seen_by(t, node)
    return FreedInput(t.grad_fn, t._output_index)


class FreedInput:
    """A freed node's input that an op made: where its gradient went, no data."""

    __slots__ = ("grad_fn", "_output_index")
    _array = name = _history = None
    requires_grad = _requires_grad = True
    _retains_grad = False

    def __init__(self, grad_fn, output_index):
        self.grad_fn, self._output_index = grad_fn, output_index


def _as_seen_by(tensor, node):
    # ``tensor`` as ``node`` recorded it: the snapshot before the first in-place op recorded
    # at or after the node (``tensor._record_inplace``), else the tensor itself. At: the
    # in-place node itself read the tensor before its write (``x.scatter_(0, i, x)``)
    if tensor._history is not None:
        for stamp, before in tensor._history:
            if node.seq <= stamp:
                return before
    return tensor


def on_paths(order, capture):
    """The nodes of ``order`` (inputs first) from which a tensor that ``capture`` accepts is
    reached: for ``grad()`` and ``inputs=`` torch runs no other node (a node further up may
    have been freed, or have no formula under ``create_graph``). The nodes left out whose
    outputs carry tensor hooks go to ``capture.hooked`` where it has one: a hook on a
    non-leaf input runs on its gradient (``gradients.py``), its node does not."""
    needed, on_path = set(), getattr(capture, "on_path", capture)
    for node in order:
        for t in node.inputs:
            if t is not None:
                t = t if t._history is None else _as_seen_by(t, node)
                if t.grad_fn in needed or on_path(t):
                    needed.add(node)
                    break
    hooked = getattr(capture, "hooked", None)
    if hooked is not None:                   # a gradients._Wanted: it keeps what ran too
        capture.needed = needed
        hooked.extend(n for n in order if n not in needed and n.tensor_hooks is not None)
    return [node for node in order if node in needed]
