"""``mg.cpu``, ``torch.cpu``: the questions scripts ask of the CPU device, answered as
torch answers them (one device, always there, nothing to synchronize), and its streams,
which order nothing, as torch's CPU streams."""

import contextlib
import sys

from . import amp

# ``torch.cpu.amp.autocast`` spelled for this module: mg.cpu.amp is mg.amp
sys.modules[__name__ + ".amp"] = amp

__all__ = ["Stream", "current_device", "current_stream", "device_count", "is_available",
           "is_initialized", "set_device", "stream", "synchronize"]


def is_available():
    """True: the CPU is always there (``torch.cpu.is_available``)."""
    return True


def is_initialized():
    """True (``torch.cpu.is_initialized``)."""
    return True


def device_count():
    """1: the CPU is one device (``torch.cpu.device_count``)."""
    return 1


def current_device():
    """``"cpu"`` (``torch.cpu.current_device``)."""
    return "cpu"


def set_device(device):
    """Nothing to set: there is one CPU device (``torch.cpu.set_device``)."""


def synchronize(device=None):
    """Nothing to wait for: CPU work is done when its call returns
    (``torch.cpu.synchronize``)."""


class Stream:
    """A CPU stream (``torch.cpu.Stream``): work on it runs in order, as all CPU work does."""

    def __init__(self, priority=-1):
        self.priority = priority

    def wait_stream(self, stream):
        """Nothing to wait for."""

    def synchronize(self):
        """Nothing to wait for."""

    def query(self):
        """True: everything put on it is done."""
        return True


_default_stream = Stream()


def current_stream(device=None):
    """The one CPU stream (``torch.cpu.current_stream``)."""
    return _default_stream


@contextlib.contextmanager
def stream(stream):
    """A block run on ``stream``: as any other CPU block (``torch.cpu.stream``)."""
    yield
