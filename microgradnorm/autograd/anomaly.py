"""Anomaly detection, PyTorch's ``torch.autograd.detect_anomaly`` and
``set_detect_anomaly``: while it is on, the backward loop checks each node's gradients and
names the node whose backward returned a NaN. Global, as PyTorch's, not per thread."""

import warnings

import numpy as np

from .decorators import _grad_mode_decorator

_anomaly = [False, True]          # [enabled, check NaN]: the backward loop reads it


def is_anomaly_enabled():
    """Whether anomaly detection is on (``torch.is_anomaly_enabled``)."""
    return _anomaly[0]


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection, when on, checks gradients for NaN (True at first)."""
    return _anomaly[1]


def _check_nan_flag(check_nan):
    if not isinstance(check_nan, bool):
        raise TypeError(f"set_anomaly_enabled(): argument 'check_nan' (position 2) must be "
                        f"bool, not {type(check_nan).__name__}")


class set_detect_anomaly:
    """Turn anomaly detection on or off: called, from then on; as a context manager, until
    the block ends (``torch.autograd.set_detect_anomaly``).

    Example:
        >>> with mg.autograd.set_detect_anomaly(True):
        ...     loss.backward()          # a NaN gradient raises, naming the node
    """

    def __init__(self, mode, check_nan=True):
        if not isinstance(mode, bool):
            raise TypeError(f"set_detect_anomaly: mode must be a bool, got "
                            f"{type(mode).__name__}")
        _check_nan_flag(check_nan)
        self.previous = tuple(_anomaly)
        _anomaly[:] = [mode, bool(check_nan)]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _anomaly[:] = self.previous
        return False


class detect_anomaly:
    """Anomaly detection on for a block or a decorated function
    (``torch.autograd.detect_anomaly``)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        _check_nan_flag(self.check_nan)       # torch checks it here, after the warning
        self.previous = tuple(_anomaly)
        _anomaly[:] = [True, self.check_nan]
        return self

    def __exit__(self, *exc):
        _anomaly[:] = self.previous
        return False

    def __call__(self, fn):
        return _grad_mode_decorator(fn, lambda: detect_anomaly(self.check_nan))


def check_gradients(node, grads):
    """Raise if a gradient ``node``'s backward returned holds a NaN (PyTorch's message),
    after PyTorch's UserWarning naming the node ("Error detected in LogBackward0")."""
    if not _anomaly[1]:
        return
    for i, g in enumerate(grads):
        if g is not None and np.issubdtype(g.dtype, np.inexact) and bool((g != g).any()):
            warnings.warn(f"Error detected in {node.name()}. No traceback of the forward "
                          "call is kept here; the node's name says which op made it.",
                          UserWarning, stacklevel=2)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                               f"{i}th output.")
