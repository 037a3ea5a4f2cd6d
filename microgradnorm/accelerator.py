"""``mg.accelerator``, ``torch.accelerator``: the device-neutral questions current scripts
start with (``mg.accelerator.current_accelerator() if mg.accelerator.is_available() else
mg.device("cpu")``), answered by the one accelerator this package can drive, a GPU through
CuPy (``mg.cuda``). Without one, as torch's CPU build: ``is_available()`` is False,
``current_accelerator()`` None, ``device_count()`` 0, and what needs the device raises
torch's RuntimeError. The answers with a GPU are ``mg.cuda``'s and are not exercised by the
CPU test suite. Also ``get_device_module``, torch's top-level map from a device to its
module, and torch's device-generic ``Stream`` and ``Event`` (``mg.Stream``, ``mg.Event``) as
its CPU build has them."""

import warnings

from . import backend, cpu, cuda, mps, xpu

__all__ = ["current_accelerator", "current_device_idx", "current_device_index",
           "current_stream", "device_count", "device_index", "empty_cache",
           "get_device_capability", "get_memory_info", "is_available", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_peak_memory_stats", "set_device_idx", "set_device_index", "set_stream",
           "synchronize"]


def is_available():
    """True when an accelerator (here a GPU seen by CuPy) is there
    (``torch.accelerator.is_available``); never raises."""
    return cuda.is_available()


def current_accelerator(check_available=False):
    """The accelerator's device type, ``mg.device("cuda")``, or None without one
    (``torch.accelerator.current_accelerator``).

    Args:
        check_available: also None when the device is built but not available (here the
            two are the same).

    Example::

        >>> device = mg.accelerator.current_accelerator() or mg.device("cpu")
    """
    return backend.Device("cuda") if is_available() else None


def device_count():
    """The number of accelerator devices, 0 without one (``torch.accelerator.device_count``)."""
    return cuda.device_count()


def _device(fn):
    # mg.cuda when a GPU is seen, else torch's error for the function that needed one
    if not is_available():
        raise RuntimeError(f"mg.accelerator.{fn}(): Cannot access accelerator device when "
                           "none is available.")
    return cuda


def current_device_index():
    """The index of the current accelerator device (``torch.accelerator.
    current_device_index``); RuntimeError without one."""
    return _device("current_device_index").current_device()


def current_device_idx():
    """``current_device_index`` under its older name, with torch's FutureWarning."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device):
    """Make accelerator device ``device`` (an int, "cuda:1", a mg.device) current
    (``torch.accelerator.set_device_index``); RuntimeError without one."""
    _device("set_device_index").set_device(device)


def set_device_idx(device):
    """``set_device_index`` under its older name, with torch's FutureWarning."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def synchronize(device=None):
    """Wait for the work queued on the accelerator (``torch.accelerator.synchronize``);
    RuntimeError without one."""
    _device("synchronize").synchronize(device)


def current_stream(device=None):
    """The accelerator's current stream, a ``mg.cuda.Stream``
    (``torch.accelerator.current_stream``); RuntimeError without one."""
    return _device("current_stream").current_stream(device)


def set_stream(stream):
    """Make ``stream`` (a ``mg.cuda.Stream``) current (``torch.accelerator.set_stream``);
    RuntimeError without an accelerator."""
    _device("set_stream")
    stream._stream.use()


def get_device_capability(device=None):
    """The accelerator's capability: here ``{"major": ..., "minor": ...}`` of the GPU
    (``torch.accelerator.get_device_capability``); RuntimeError without one."""
    major, minor = _device("get_device_capability").get_device_capability(device)
    return {"major": major, "minor": minor}


def _memory(name, doc):
    def query(device=None):
        return getattr(_device(name), name)(device)
    query.__name__ = name
    query.__doc__ = (f"{doc} (``torch.accelerator.{name}``): ``mg.cuda.{name}``'s with a "
                     "GPU; RuntimeError without one.")
    return query


memory_allocated = _memory("memory_allocated", "The bytes tensors hold on the device")
memory_reserved = _memory("memory_reserved", "The bytes the allocator keeps on the device")
max_memory_allocated = _memory("max_memory_allocated", "The peak of ``memory_allocated``")
max_memory_reserved = _memory("max_memory_reserved", "The peak of ``memory_reserved``")
reset_peak_memory_stats = _memory("reset_peak_memory_stats", "Start the peaks again")
memory_stats = _memory("memory_stats", "The allocator's statistics, a dict")


def get_memory_info(device=None):
    """``(free, total)`` bytes of the device (``torch.accelerator.get_memory_info``);
    RuntimeError without one."""
    return _device("get_memory_info").mem_get_info(device)


def empty_cache():
    """Give the memory the allocator keeps but no tensor holds back
    (``torch.accelerator.empty_cache``); RuntimeError without an accelerator."""
    _device("empty_cache").empty_cache()


class device_index:
    """``with mg.accelerator.device_index(1): ...``: accelerator device 1 is current inside
    the block (``torch.accelerator.device_index``); None changes nothing. Entering with an
    index and no accelerator raises torch's RuntimeError.

    Args:
        device: an int, or None (no change).
    """

    def __init__(self, device):
        self.idx, self.prev_idx = device, -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc):
        if self.idx is not None and self.prev_idx >= 0:
            set_device_index(self.prev_idx)
        return False


# the device types torch knows (its error lists them); those with a module here map to it
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                 "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")
_MODULES = {"cpu": cpu, "cuda": cuda, "mps": mps, "xpu": xpu}


def get_device_module(device=None):
    """The module of a device type, ``mg.cuda`` for "cuda" (``torch.get_device_module``):
    None gives the current accelerator's module, or ``mg.cpu`` without one.

    Args:
        device: a mg.device, a string ("cuda", "cuda:0", "cpu", "mps", "xpu") or None.

    Example::

        >>> mg.get_device_module("cuda").is_available()
        False
    """
    if device is None:
        return cuda if is_available() else cpu
    if not isinstance(device, (str, backend.Device)):
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, "
                           "or None")
    kind = device.type if isinstance(device, backend.Device) else device.split(":")[0]
    if kind in _MODULES:
        return _MODULES[kind]
    if kind in _DEVICE_TYPES:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered "
                           f"as 'mg.{kind}'.")
    raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of "
                       f"device string: {device}")


# ----- torch.Stream and torch.Event: the device-generic stream and event ---------------------
def _generic_device(where, device):
    """The device type a generic stream or event is made on: "cpu" (torch's CPU build); an
    accelerator's are ``mg.cuda.Stream``/``mg.cuda.Event`` here (RuntimeError, as torch's
    build without the device)."""
    if device is None:
        device = "cuda" if is_available() else "cpu"
    kind = str(device).split(":")[0]
    if kind == "cpu":
        return kind
    if kind == "cuda" and is_available():
        raise RuntimeError(f"{where}: device-generic streams and events on cuda are not "
                           "offered here; use mg.cuda.Stream and mg.cuda.Event")
    raise RuntimeError(f"{where}: PyTorch is not linked with support for {kind} devices")


class _OnTheCpu:
    """What a CPU stream and a CPU event share: their device, and nothing ever pending."""

    @property
    def device(self):
        """``mg.device("cpu")``."""
        return backend.Device(self.device_type)

    def query(self):
        """True: everything put on it is done (CPU work runs in order)."""
        return True

    def synchronize(self):
        """Nothing to wait for."""


class Stream(_OnTheCpu):
    """A device-generic stream (``torch.Stream``) on the CPU, as torch's CPU build: work on
    it runs in order, as all CPU work does, so ``query()`` is True and waiting does nothing;
    recording an event on it is torch's RuntimeError (the CPU has no events).

    Args:
        device (str or mg.device, optional): "cpu" (the default without an accelerator).
        priority (int): taken, as torch's on the CPU, and not used.

    Example:
        >>> s = mg.Stream(); s.query()                 # True
    """

    def __init__(self, device=None, *, priority=0):
        self.device_type = _generic_device("Stream", device)
        self.device_index, self.stream_id = -1, 0

    def wait_stream(self, stream):
        """torch's RuntimeError: waiting on a stream records an event, which the CPU
        backend has none of."""
        raise RuntimeError("cpu backend doesn't support events.")

    def wait_event(self, event):
        """Nothing to wait for."""

    def is_capturing(self):
        """False: no graph capture on the CPU."""
        return False

    def record_event(self, event=None):
        """torch's RuntimeError: the CPU backend has no events."""
        raise RuntimeError("cpu backend doesn't support events.")

    @property
    def native_handle(self):
        """torch's RuntimeError: a CPU stream has no native handle."""
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device_type, self.stream_id) == (
            other.device_type, other.stream_id)

    def __hash__(self):
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self.device_type}, device_index="
                f"{self.device_index}, stream_id={self.stream_id}")


class Event(_OnTheCpu):
    """A device-generic event (``torch.Event``) on the CPU, as torch's CPU build: ``query()``
    is True and ``synchronize``/``wait`` do nothing; ``record`` is torch's RuntimeError (the
    CPU has no events), so ``elapsed_time`` is torch's ValueError.

    Args:
        device (str or mg.device, optional): "cpu" (the default without an accelerator).
        enable_timing (bool): whether the event would measure time.
        blocking, interprocess (bool): taken, as torch's, and not used.

    Example:
        >>> mg.Event().query()                          # True
    """

    def __init__(self, device=None, *, enable_timing=False, blocking=False,
                 interprocess=False):
        self.device_type = _generic_device("Event", device)
        self.device_index, self.event_id = -1, 0
        self._timing = bool(enable_timing)

    def wait(self, stream=None):
        """Nothing to wait for."""

    def record(self, stream=None):
        """torch's RuntimeError: the CPU backend has no events."""
        raise RuntimeError("cpu backend doesn't support events.")

    def elapsed_time(self, end_event):
        """torch's ValueError: both events need ``enable_timing=True`` and to be recorded,
        which no CPU event can be."""
        if not (self._timing and getattr(end_event, "_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self):
        """torch's NotImplementedError: events are not shared between processes."""
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue "
                                  "if you need this!")

    def __repr__(self):
        return (f"torch.Event device_type={self.device_type}, device_index="
                f"{self.device_index}, event_flag={int(self._timing)}, "
                f"event_id={self.event_id}")
