"""Inference tensors, as torch's: a tensor made inside ``inference_mode`` (a factory's, an
op's result, a module's parameters) is one. Its mark is the class of its version counter,
``InferenceVersions``, so that no tensor carries a field for it; a view of it and its
``detach()`` share the counter and so are inference tensors too, while an op's result made
outside the mode is an ordinary tensor. Outside the mode such a tensor refuses what would
need a version counter, with torch's RuntimeErrors: an in-place write (``refuse_write``,
before the write), ``requires_grad_(True)``, being saved for backward by an op that records
the graph (``refuse_saved``), and reading ``_version``. Inside the mode every write is
allowed, into ordinary tensors too.

``detach()`` and ``.data`` of an inference tensor taken outside the mode, and a parameter
that ``Module.to()`` (``.double()``, ...) converts inside it, are inference tensors of
another kind, as torch's: a ``DetachedVersions`` counter of their own, which takes in-place
writes and reads ``_version`` outside the mode but refuses ``requires_grad=True`` and being
saved for backward."""

import threading

from .decorators import _grad_mode_decorator
from .grad_mode import _GradMode, _state

__all__ = ["DetachedVersions", "InferenceVersions", "converted_counter", "detached_counter",
           "inference_mode", "is_inference", "new_counter",
           "refuse_requires_grad", "refuse_saved", "refuse_version", "refuse_view_write",
           "refuse_write"]

# inference_mode blocks open in any thread: while none is, a new tensor reads this one list
# (cheaper than the thread's state) to know it is no inference tensor
_inference_open, _inference_lock = [0], threading.Lock()


class InferenceVersions(list):
    """The version counter of an inference tensor: a one-element list as every tensor's (the
    engine still counts the writes made inside the mode), whose class marks the tensor."""

    __slots__ = ()


class DetachedVersions(list):
    """The version counter of an inference tensor that takes writes outside the mode (a
    ``detach()`` or ``.data`` taken outside it, torch's): counted as an ordinary tensor's,
    whose class marks the tensor an inference tensor all the same."""

    __slots__ = ()


def detached_counter():
    """A new counter for ``detach()`` or ``.data`` of an inference tensor: torch's is an
    inference tensor that refuses writes outside the mode if taken inside it, and takes them
    if taken outside."""
    return InferenceVersions([0]) if _state.inference else DetachedVersions([0])


def converted_counter(box, new):
    """The counter of a parameter that takes the data of ``new`` (``box``: its own), a
    conversion's result (``Module.to()``, ``.double()``): as torch's, an inference tensor
    that takes writes if converted inside the mode, an ordinary one if outside."""
    if new.__class__ is list:
        return box if box.__class__ is list else [0]
    return box if box.__class__ is not list else DetachedVersions(box)


def new_counter():
    """A version counter for a tensor made now by other means than ``Tensor._from_op`` (a
    deep copy): an inference tensor's inside ``inference_mode``."""
    return InferenceVersions([0]) if _state.inference else [0]


def is_inference(tensor):
    """Whether ``tensor`` was made inside ``inference_mode`` (or views one)."""
    return tensor._version_box.__class__ is not list


def refuse_write(tensor):
    """torch's RuntimeError for an in-place write into an inference tensor outside
    ``inference_mode`` (``inference_mode(False)`` included); nothing otherwise."""
    if tensor._version_box.__class__ is InferenceVersions and not _state.inference:
        raise RuntimeError(_WRITE_REFUSED)


_WRITE_REFUSED = ("Inplace update to inference tensor outside InferenceMode is not allowed. "
                  "You can make a clone to get a normal tensor before doing inplace update (a "
                  "tensor made inside mg.inference_mode() takes in-place writes only inside "
                  "it).")


def refuse_view_write(tensor):
    """torch's RuntimeError for ``x[i] = v`` outside ``inference_mode`` where x is an
    inference tensor that takes writes (a ``detach()`` taken outside the mode) and torch
    writes through a view of it (an int, a slice, None or a bool in the index): the view is
    one that refuses them. ``x[...] = v`` and ``x[ids] = v`` write into x itself."""
    if tensor._version_box.__class__ is DetachedVersions and not _state.inference:
        raise RuntimeError(_WRITE_REFUSED)


def refuse_requires_grad(tensor):
    """torch's RuntimeError for ``requires_grad_(True)`` on an inference tensor outside
    ``inference_mode``; nothing otherwise."""
    if tensor._version_box.__class__ is not list and not _state.inference:
        raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                           "InferenceMode is not allowed.")


def refuse_saved():
    """torch's RuntimeError for an inference tensor that a recorded op saves for backward."""
    raise RuntimeError("Inference tensors cannot be saved for backward. Please do not use "
                       "Tensors created in inference mode in computation tracked by "
                       "autograd. To work around this, you can make a clone to get a normal "
                       "tensor and use it in autograd.")


def refuse_version():
    """torch's RuntimeError for ``_version`` of an inference tensor."""
    raise RuntimeError("Inference tensors do not track version counter.")


class inference_mode(_GradMode):
    """Inference mode in this thread for a block or a decorated function (a generator's
    too), as ``torch.inference_mode``: no graph is recorded, and every tensor made inside
    (a factory's, an op's result, a module's parameters and buffers) is an inference tensor
    (``Tensor.is_inference()``), as are its views. Inside the mode any tensor takes in-place
    writes; outside it an inference tensor refuses, with torch's RuntimeErrors, an in-place
    write (nothing written), ``requires_grad_(True)``, being saved for backward by an op
    that records the graph (``w * t``; ``w + t`` saves nothing and is allowed) and
    ``_version``; ``clone()`` it to get an ordinary tensor. ``no_grad`` makes no inference
    tensors. ``inference_mode(False)`` turns the mode off inside it and turns recording on,
    as torch's (even inside ``no_grad``).

    Args:
        mode (bool): True (default) to turn inference mode on, False to turn it off.

    Example:
        >>> with mg.inference_mode():
        ...     logits = model(x)                     # no graph; logits.is_inference()
        >>> logits.add_(1)                            # RuntimeError: clone() it first
    """

    def __new__(cls, mode=True):
        if not isinstance(mode, bool):                   # bare ``@inference_mode``
            return cls()(mode)
        self = super().__new__(cls)
        self.enabled = mode
        return self

    def __enter__(self):
        self.previous = _state.grad_enabled, _state.inference
        if self.enabled:
            with _inference_lock:
                _inference_open[0] += 1
        _state.grad_enabled, _state.inference = not self.enabled, self.enabled    # torch's
        return None

    def __exit__(self, *exc):
        _state.grad_enabled, _state.inference = self.previous
        if self.enabled:
            with _inference_lock:
                _inference_open[0] -= 1
        return False

    def __call__(self, fn):
        return _grad_mode_decorator(fn, lambda: inference_mode(self.enabled))
