"""``mg.cuda``: torch.cuda's questions about the GPU, answered through CuPy (imported only
when a function needs it, so ``import microgradnorm`` never loads CuPy).

Without a GPU, as torch's CPU build: ``is_available()`` is False, ``device_count()`` 0, the
seeds are taken and dropped, ``synchronize()`` and ``empty_cache()`` do nothing, the memory
counts are 0; what needs a GPU raises. With one, the memory counts are CuPy's memory pool's
(the bytes its arrays hold, the bytes it keeps), and the peaks are watched from the first
call of ``reset_peak_memory_stats`` or a ``max_memory_*`` on (a CuPy memory hook in that
thread), the current count before."""

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
    """Wait for the work queued on GPU ``device`` (None: the current one) to finish; without
    a GPU, nothing (``torch.cuda.synchronize``)."""
    if not is_available():
        return
    cupy = backend._cupy()
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
