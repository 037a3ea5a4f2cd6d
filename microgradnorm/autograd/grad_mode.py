"""Grad mode, per thread as in PyTorch: ``no_grad``, ``enable_grad``, ``set_grad_enabled``
(``inference_mode``: ``inference.py``), as blocks, calls and decorators (``decorators.py``: a
decorated generator keeps the mode at each resumption); the thread's state holds the stacks
that label nodes."""

import threading

from .decorators import _grad_mode_decorator


class _ThreadState(threading.local):
    """Per-thread grad mode and scope stacks, as in PyTorch."""

    def __init__(self):
        self.grad_enabled, self.inference = True, False    # inference: is_inference_mode_enabled
        self.module_stack = []          # module paths, innermost last (``module_scope``)
        self.group_stack = []           # (name, call number) of open ``op_group``s


_state = _ThreadState()


def is_grad_enabled():
    """Whether ops record the graph in this thread (True unless inside ``no_grad``)."""
    return _state.grad_enabled


class set_grad_enabled:
    """Turn graph recording on or off in this thread (``torch.set_grad_enabled``): called,
    from then on; as a context manager, until the block ends; as a decorator, in each call.

    Example:
        >>> with mg.set_grad_enabled(False):
        ...     y = x * 2                      # y.requires_grad is False
    """

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled: mode must be a bool, "
                            f"got {type(mode).__name__}")
        self.mode = mode
        self.previous = _state.grad_enabled
        _state.grad_enabled = mode and not _state.inference     # inference: still no graph

    def __enter__(self):
        return None                  # as torch's: `with mg.no_grad() as g` binds None

    def __exit__(self, *exc):
        _state.grad_enabled = self.previous
        return False

    def __call__(self, fn):
        # As a decorator the mode applies to each call, not from the decoration on.
        _state.grad_enabled = self.previous
        return _grad_mode_decorator(fn, lambda: set_grad_enabled(self.mode))


class _GradMode:
    """Grad mode ``MODE`` in this thread for a block or a decorated function; decorates with
    or without parentheses, as torch's (``@mg.no_grad()``, ``@mg.no_grad``)."""

    MODE = True

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        return self if fn is None else self(fn)       # bare ``@no_grad``: the wrapper

    def __enter__(self):
        self.previous = _state.grad_enabled, _state.inference
        _state.grad_enabled = self.MODE and not _state.inference    # as torch's: no graph
        return None

    def __exit__(self, *exc):
        _state.grad_enabled, _state.inference = self.previous
        return False

    def __call__(self, fn):
        return _grad_mode_decorator(fn, type(self))


class no_grad(_GradMode):
    """Record no graph in this block or decorated function (``torch.no_grad``).

    Example:
        >>> with mg.no_grad():
        ...     y = model(x)                  # no graph: evaluation, optimizer steps
    """

    MODE = False


class enable_grad(_GradMode):
    """Record the graph again inside a ``no_grad`` block (``torch.enable_grad``)."""

    MODE = True
