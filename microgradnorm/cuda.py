"""``mg.cuda``: torch.cuda's questions about the GPU, answered through CuPy (imported only
when a function needs it, so ``import microgradnorm`` never loads CuPy).

Without a GPU, as torch's CPU build: ``is_available()`` is False, ``device_count()`` 0, the
seeds are taken and dropped, ``empty_cache()`` does nothing, the memory counts are 0; what
needs a GPU (``synchronize()``, ``current_stream()``, ``get_device_capability()``, ...) raises
``NoGPUError``, and ``Event()``/``Stream()`` raise torch's RuntimeError. The answers with a GPU
(CuPy's) are written simply and are not exercised by the CPU test suite. With one, the
memory counts are CuPy's memory pool's (the bytes its arrays hold, the bytes it keeps), and
the peaks are watched from the first call of ``reset_peak_memory_stats`` or a
``max_memory_*`` on (a CuPy memory hook in that thread), the current count before."""

import sys

from . import amp, backend

# ``from torch.cuda.amp import autocast`` spelled for this module: mg.cuda.amp is mg.amp
sys.modules[__name__ + ".amp"] = amp

__all__ = ["NoGPUError", "current_device", "device_count", "empty_cache", "get_device_name",
           "is_available", "is_bf16_supported", "manual_seed", "manual_seed_all",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "synchronize"]


class NoGPUError(RuntimeError, AssertionError):
    """No GPU to answer: torch raises an AssertionError on its CPU build and a RuntimeError
    on a CUDA build without a GPU; this is both."""


def is_available():
    """True when CuPy imports and sees at least one GPU; never raises
    (``torch.cuda.is_available``)."""
    try:
        return backend.cuda_available()
    except Exception:              # a broken CuPy install is no GPU, not an error here
        return False


def device_count():
    """The number of GPUs CuPy sees, 0 without CuPy or a GPU (``torch.cuda.device_count``)."""
    if not is_available():
        return 0
    return int(backend._cupy().cuda.runtime.getDeviceCount())


def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 tensors compute on the GPU (``torch.cuda.is_bf16_supported``, which
    training scripts ask to pick their dtype): wherever a GPU is seen, as CuPy arrays take
    bfloat16 here; False without one, as torch's CPU build. ``including_emulation`` is
    taken and changes nothing."""
    return is_available()


def _gpu(fn):
    # CuPy, with a GPU behind it, or torch's error for the function that needed one
    if not is_available():
        raise NoGPUError(f"mg.cuda.{fn}(): no GPU (CuPy is not installed or sees no GPU); "
                         "check mg.cuda.is_available() first")
    return backend._cupy_with_gpu()


def _index(fn, device):
    # a GPU's index from None (the current one), an int, "cuda:1" or a mg.device
    if device is None:
        return current_device()
    if not isinstance(device, int) or isinstance(device, bool):
        device = backend.Device(device)
        if device.type != "cuda":
            raise ValueError(f"mg.cuda.{fn}(): expected a cuda device, got {device}")
        device = current_device() if device.index is None else device.index
    if not 0 <= device < device_count():
        raise NoGPUError(f"mg.cuda.{fn}(): invalid device id {device} "
                         f"({device_count()} GPU(s) seen)")
    return device


def current_device():
    """The index of the GPU CuPy uses now, an int (``torch.cuda.current_device``)."""
    return int(_gpu("current_device").cuda.runtime.getDevice())


def get_device_name(device=None):
    """The name of GPU ``device`` (None: the current one; an int, "cuda:0" or a mg.device)
    (``torch.cuda.get_device_name``)."""
    cupy = _gpu("get_device_name")
    name = cupy.cuda.runtime.getDeviceProperties(_index("get_device_name", device))["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize(device=None):
    """Wait for the work queued on GPU ``device`` (None: the current one) to finish
    (``torch.cuda.synchronize``); without a GPU, ``NoGPUError``, as torch's CPU build's
    AssertionError: timing code asks ``is_available()`` first."""
    cupy = _gpu("synchronize")
    with cupy.cuda.Device(_index("synchronize", device)):
        cupy.cuda.runtime.deviceSynchronize()


def manual_seed(seed):
    """Seed the GPU's generator (``torch.cuda.manual_seed``). Tensors on "cuda" draw from
    the CPU's default generator here (``mg.manual_seed``), so there is none: as torch without
    a GPU, the seed is checked (``int(seed)``) and dropped."""
    int(seed)


def manual_seed_all(seed):
    """Seed every GPU's generator (``torch.cuda.manual_seed_all``): as ``manual_seed``."""
    int(seed)


# ----- memory: CuPy's default pool ----------------------------------------------------------
_peaks = {}            # "allocated", "reserved": the peaks the hook has seen since a reset


def _pool():
    # CuPy's default memory pool, or None without a GPU
    return backend._cupy().get_default_memory_pool() if is_available() else None


def _watch_peaks():
    # the hook that keeps the pool's peaks, entered once (torch counts from the program's start;
    # here from the first question about a peak)
    if _peaks or _pool() is None:
        return
    from cupy.cuda import memory_hook

    class PeakHook(memory_hook.MemoryHook):
        name = "microgradnorm_peaks"

        def malloc_postprocess(self, **kwargs):
            pool = _pool()
            _peaks["allocated"] = max(_peaks["allocated"], pool.used_bytes())
            _peaks["reserved"] = max(_peaks["reserved"], pool.total_bytes())

    _peaks.update(allocated=memory_allocated(), reserved=memory_reserved())
    PeakHook().__enter__()


def memory_allocated(device=None):
    """The bytes CuPy's arrays hold in its memory pool, 0 without a GPU
    (``torch.cuda.memory_allocated``)."""
    pool = _pool()
    return 0 if pool is None else int(pool.used_bytes())


def memory_reserved(device=None):
    """The bytes CuPy's memory pool keeps from the driver, 0 without a GPU
    (``torch.cuda.memory_reserved``)."""
    pool = _pool()
    return 0 if pool is None else int(pool.total_bytes())


def max_memory_allocated(device=None):
    """The most ``memory_allocated`` has been since the peaks were first asked for or last
    reset (``torch.cuda.max_memory_allocated``; see the module's docstring); 0 without a GPU."""
    _watch_peaks()
    return max(_peaks.get("allocated", 0), memory_allocated())


def max_memory_reserved(device=None):
    """The most ``memory_reserved`` has been, as ``max_memory_allocated``."""
    _watch_peaks()
    return max(_peaks.get("reserved", 0), memory_reserved())


def reset_peak_memory_stats(device=None):
    """Start the peaks again from the current counts (``torch.cuda.reset_peak_memory_stats``)."""
    _watch_peaks()
    if _peaks:
        _peaks.update(allocated=memory_allocated(), reserved=memory_reserved())


def empty_cache():
    """Give the memory CuPy's pool keeps but no array holds back to the driver; nothing
    without a GPU (``torch.cuda.empty_cache``)."""
    pool = _pool()
    if pool is not None:
        pool.free_all_blocks()


# ----- the device: capability, properties, selection ----------------------------------------
def get_device_capability(device=None):
    """The compute capability of GPU ``device`` (None: the current one; an int, "cuda:0" or a
    mg.device) as ``(major, minor)``, e.g. ``(9, 0)`` (``torch.cuda.get_device_capability``);
    ``NoGPUError`` without a GPU, as torch's CPU build's AssertionError.

    Example::

        >>> if mg.cuda.is_available() and mg.cuda.get_device_capability() >= (8, 0): ...
    """
    properties = get_device_properties(device)
    return properties.major, properties.minor


class _CudaDeviceProperties:
    """What ``get_device_properties`` answers: ``name``, ``major``, ``minor``,
    ``total_memory`` (bytes) and ``multi_processor_count``, read from CuPy."""

    def __init__(self, raw):
        name = raw["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major, self.minor = int(raw["major"]), int(raw["minor"])
        self.total_memory = int(raw["totalGlobalMem"])
        self.multi_processor_count = int(raw["multiProcessorCount"])

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory >> 20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    """The properties of GPU ``device`` (None: the current one): ``.name``, ``.major``,
    ``.minor``, ``.total_memory``, ``.multi_processor_count``
    (``torch.cuda.get_device_properties``); ``NoGPUError`` without a GPU."""
    cupy = _gpu("get_device_properties")
    index = _index("get_device_properties", device)
    return _CudaDeviceProperties(cupy.cuda.runtime.getDeviceProperties(index))


def get_arch_list():
    """The GPU architectures this build runs on (``torch.cuda.get_arch_list``): ``[]``
    without a GPU, as torch's CPU build; with one, each seen GPU's ``"sm_XY"`` (CuPy
    compiles for the GPU it finds)."""
    if not is_available():
        return []
    return sorted({"sm_%d%d" % get_device_capability(i) for i in range(device_count())})


def is_initialized():
    """Whether the GPU runtime is set up (``torch.cuda.is_initialized``): False without a
    GPU; with one, True (CuPy sets it up on first use)."""
    return is_available()


def init():
    """Set up the GPU runtime (``torch.cuda.init``); ``NoGPUError`` without a GPU."""
    _gpu("init")


def set_device(device):
    """Make GPU ``device`` current (``torch.cuda.set_device``); a negative index does
    nothing, as torch's; otherwise ``NoGPUError`` without a GPU."""
    if isinstance(device, int) and not isinstance(device, bool) and device < 0:
        return
    cupy = _gpu("set_device")
    cupy.cuda.runtime.setDevice(_index("set_device", device))


class device:
    """``with mg.cuda.device(1): ...``: GPU ``device`` is current inside the block
    (``torch.cuda.device``); a negative index or None does nothing. Not a cuda device:
    ValueError at construction; entering with a GPU index and no GPU: ``NoGPUError`` (a
    RuntimeError, as torch's CPU build's).

    Args:
        device: an int, "cuda:1", a mg.device, a negative int or None (no change).
    """

    def __init__(self, device):
        if device is None or (isinstance(device, int) and not isinstance(device, bool)):
            self.idx = -1 if device is None else device
        else:
            parsed = backend.Device(device)
            if parsed.type != "cuda":
                raise ValueError(f"Expected a cuda device, but got: {parsed}")
            self.idx = -1 if parsed.index is None else parsed.index
        self.prev_idx = -1

    def __enter__(self):
        if self.idx < 0:
            return None
        self.prev_idx = current_device()
        set_device(self.idx)
        return None

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx >= 0:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """``with mg.cuda.device_of(tensor): ...``: the GPU holding ``tensor`` is current inside
    the block; a CPU tensor's changes nothing (``torch.cuda.device_of``)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


# ----- streams and events -------------------------------------------------------------------
class Event:
    """A GPU event (``torch.cuda.Event``), what timing code records on both sides of the work
    and reads ``start.elapsed_time(end)`` (milliseconds) from, over ``cupy.cuda.Event``.
    Without a GPU, constructing one raises torch's RuntimeError.

    Args:
        enable_timing: whether ``elapsed_time`` may read it. Default: False.
        blocking: whether ``synchronize`` blocks the thread (rather than spins).
        interprocess: whether other processes may share it.

    Example::

        >>> start, end = mg.cuda.Event(enable_timing=True), mg.cuda.Event(enable_timing=True)
        >>> start.record(); y = model(x); end.record(); mg.cuda.synchronize()
        >>> start.elapsed_time(end)      # milliseconds
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if not is_available():
            raise RuntimeError("Tried to instantiate dummy base class Event: mg.cuda.Event "
                               "needs a GPU (check mg.cuda.is_available() first)")
        cupy = backend._cupy()
        self._event = cupy.cuda.Event(block=blocking, disable_timing=not enable_timing,
                                      interprocess=interprocess)

    def record(self, stream=None):
        """Mark the point reached by ``stream`` (None: the current one)."""
        self._event.record(None if stream is None else stream._stream)

    def wait(self, stream=None):
        """Make ``stream`` (None: the current one) wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        """Whether the work before the event has finished."""
        return bool(self._event.done)

    def synchronize(self):
        """Wait for the work before the event to finish."""
        self._event.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded with
        ``enable_timing=True``)."""
        return float(backend._cupy().cuda.get_elapsed_time(self._event, end_event._event))


class Stream:
    """A GPU stream (``torch.cuda.Stream``) over ``cupy.cuda.Stream``; work queued on one
    runs in order. Without a GPU, constructing one raises torch's RuntimeError.

    Args:
        device: the GPU (None: the current one).
        priority: the stream's priority (lower is higher, as CUDA's). Default: 0.
    """

    def __init__(self, device=None, priority=0, _stream=None):
        if _stream is None and not is_available():
            raise RuntimeError("mg.cuda.Stream requires a GPU (check mg.cuda.is_available() "
                               "first)")
        self._stream = _stream if _stream is not None else \
            backend._cupy().cuda.Stream(non_blocking=False, priority=priority)

    def synchronize(self):
        """Wait for the work queued on the stream."""
        self._stream.synchronize()

    def query(self):
        """Whether the work queued on the stream has finished."""
        return bool(self._stream.done)

    def wait_event(self, event):
        """Make the stream's later work wait for ``event``."""
        self._stream.wait_event(event._event)

    def wait_stream(self, stream):
        """Make the stream's later work wait for what ``stream`` has queued so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record ``event`` (None: a new one) on the stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self._stream.ptr == other._stream.ptr

    def __hash__(self):
        return hash(self._stream.ptr)


def current_stream(device=None):
    """The stream work is queued on now (``torch.cuda.current_stream``); ``NoGPUError``
    without a GPU."""
    return Stream(_stream=_gpu("current_stream").cuda.get_current_stream())


def default_stream(device=None):
    """The GPU's default (null) stream (``torch.cuda.default_stream``); ``NoGPUError``
    without a GPU."""
    return Stream(_stream=_gpu("default_stream").cuda.Stream.null)


class StreamContext:
    """``with mg.cuda.stream(s): ...``: work inside the block is queued on ``s``
    (``torch.cuda.StreamContext``); ``None`` changes nothing, with or without a GPU."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream._stream.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream._stream.__exit__(*exc)
        return False


def stream(stream):
    """The context manager that queues its block's work on ``stream``
    (``torch.cuda.stream``); see ``StreamContext``."""
    return StreamContext(stream)


# ----- random states: GPU tensors draw from the CPU's generator here ------------------------
def _package():
    # the package's top level (its generator functions), reached without importing a layer
    # above this one
    return sys.modules[__package__]


def get_rng_state(device="cuda"):
    """The GPU generator's state (``torch.cuda.get_rng_state``): ``NoGPUError`` without a
    GPU, as torch's CPU build; with one, the CPU generator's (``mg.get_rng_state()``), which
    GPU tensors draw from here."""
    _gpu("get_rng_state")
    return _package().get_rng_state()


def set_rng_state(new_state, device="cuda"):
    """Restore ``get_rng_state``'s state (``torch.cuda.set_rng_state``); without a GPU,
    taken and dropped, as torch's CPU build (which queues it until a GPU appears)."""
    if is_available():
        _package().set_rng_state(new_state)


def get_rng_state_all():
    """One state per GPU (``torch.cuda.get_rng_state_all``): ``[]`` without a GPU."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    """Restore ``get_rng_state_all``'s states (``torch.cuda.set_rng_state_all``)."""
    for state in new_states:
        set_rng_state(state)


def seed():
    """Seed the GPU's generator from the system's entropy (``torch.cuda.seed``): as
    ``manual_seed``, nothing to seed here."""


def seed_all():
    """``seed`` for every GPU (``torch.cuda.seed_all``)."""


def initial_seed():
    """The seed the GPU's generator started from (``torch.cuda.initial_seed``): the CPU
    generator's with a GPU, ``NoGPUError`` without one."""
    _gpu("initial_seed")
    return _package().initial_seed()


# ----- memory beyond the counts ---------------------------------------------------------------
def memory_stats(device=None):
    """The allocator's statistics (``torch.cuda.memory_stats``): empty without a GPU, as
    torch's CPU build; with one, the current and peak bytes CuPy's pool holds and keeps."""
    if not is_available():
        return {}
    return {"allocated_bytes.all.current": memory_allocated(),
            "allocated_bytes.all.peak": max_memory_allocated(),
            "reserved_bytes.all.current": memory_reserved(),
            "reserved_bytes.all.peak": max_memory_reserved()}


def mem_get_info(device=None):
    """``(free, total)`` bytes of GPU ``device`` (``torch.cuda.mem_get_info``);
    ``NoGPUError`` without a GPU."""
    cupy = _gpu("mem_get_info")
    with cupy.cuda.Device(_index("mem_get_info", device)):
        free, total = cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)


def ipc_collect():
    """Free GPU memory other processes released (``torch.cuda.ipc_collect``); nothing for
    CuPy's pool to collect, ``NoGPUError`` without a GPU."""
    _gpu("ipc_collect")


class OutOfMemoryError(RuntimeError):
    """An allocation failed for want of memory (``torch.OutOfMemoryError``, which
    ``torch.cuda.OutOfMemoryError`` names too): what ``except`` clauses of training scripts
    catch to retry with a smaller batch. CuPy raises its own
    ``cupy.cuda.memory.OutOfMemoryError`` for a failed GPU allocation."""


# ----- torch.cuda's legacy tensor types -------------------------------------------------------
class _CudaTensorType(type):
    # isinstance(t, mg.cuda.FloatTensor): a tensor on a GPU of the type's dtype
    def __instancecheck__(cls, obj):
        where = getattr(obj, "device", None)
        return getattr(where, "type", None) == "cuda" and \
            str(getattr(obj, "dtype", "")) == cls.dtype_name

    def __call__(cls, *args, **kwargs):
        if not is_available():
            raise TypeError(f"type mg.cuda.{cls.__name__} not available: no GPU (CuPy is "
                            "not installed or sees no GPU)")
        return getattr(_package(), cls.__name__)(*args, **kwargs).to("cuda")


def _cuda_type(name, dtype_name):
    doc = (f"``torch.cuda.{name}``: ``isinstance(t, mg.cuda.{name})`` asks whether ``t`` is a "
           f"{dtype_name} tensor on a GPU; calling it makes ``mg.{name}(...)`` on the GPU "
           "(TypeError without one, as torch's CPU build).")
    return _CudaTensorType(name, (), {"dtype_name": dtype_name, "__doc__": doc})


FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor = (
    _cuda_type(n, d) for n, d in (("FloatTensor", "float32"), ("DoubleTensor", "float64"),
                                  ("HalfTensor", "float16"), ("BFloat16Tensor", "bfloat16")))
LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, BoolTensor = (
    _cuda_type(n, d) for n, d in (("LongTensor", "int64"), ("IntTensor", "int32"),
                                  ("ShortTensor", "int16"), ("CharTensor", "int8"),
                                  ("ByteTensor", "uint8"), ("BoolTensor", "bool")))

__all__ += ["BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "Event",
            "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "OutOfMemoryError",
            "ShortTensor", "Stream", "StreamContext", "current_stream", "default_stream",
            "device", "device_of", "get_arch_list", "get_device_capability",
            "get_device_properties", "get_rng_state", "get_rng_state_all", "init",
            "initial_seed", "ipc_collect", "is_initialized", "mem_get_info", "memory_stats",
            "seed", "seed_all", "set_device", "set_rng_state", "set_rng_state_all", "stream"]
