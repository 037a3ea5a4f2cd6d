"""``mg.cuda``: torch.cuda's questions about the GPU, answered through CuPy (imported only
when a function needs it, so ``import microgradnorm`` never loads CuPy).

Without a GPU, as torch's CPU build: ``is_available()`` is False, ``device_count()`` 0, the
seeds are taken and dropped, ``synchronize()`` does nothing; what needs a GPU raises."""

import sys

from . import amp, backend

# ``from torch.cuda.amp import autocast`` spelled for this module: mg.cuda.amp is mg.amp
sys.modules[__name__ + ".amp"] = amp

__all__ = ["NoGPUError", "current_device", "device_count", "get_device_name", "is_available",
           "is_bf16_supported", "manual_seed", "manual_seed_all", "synchronize"]


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
