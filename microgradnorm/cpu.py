"""``mg.cpu``, ``torch.cpu``: the questions scripts ask of the CPU device, answered as
torch answers them (one device, always there, nothing to synchronize), and its streams,
which order nothing, as torch's CPU streams."""

import contextlib
import sys
import types
import warnings

from . import amp as _amp


def _deprecated(name):
    # torch's FutureWarning for the torch.cpu.amp spellings
    warnings.warn(f"`torch.cpu.amp.{name}(args...)` is deprecated. Please use "
                  f"`torch.amp.{name}('cpu', args...)` instead.", FutureWarning, stacklevel=3)


class _CPUAutocast(_amp.autocast):
    """``torch.cpu.amp.autocast``: ``mg.autocast`` on "cpu", with torch's deprecation warning."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        _deprecated("autocast")
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class _CPUGradScaler(_amp.GradScaler):
    """``torch.cpu.amp.GradScaler``: ``mg.amp.GradScaler`` on "cpu", so enabled; torch's
    deprecation warning."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        _deprecated("GradScaler")
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


# ``torch.cpu.amp``: autocast and GradScaler whose device is the CPU (torch.cuda.amp's, which
# mg.cuda.amp is, default to "cuda")
amp = types.ModuleType(__name__ + ".amp", "torch.cpu.amp: autocast and GradScaler on the CPU")
amp.autocast, amp.GradScaler = _CPUAutocast, _CPUGradScaler
amp.autocast.__name__, amp.GradScaler.__name__ = "autocast", "GradScaler"
sys.modules[amp.__name__] = amp

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
