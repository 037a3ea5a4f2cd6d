"""Array backends: NumPy on "cpu", CuPy on "cuda" (optional, imported lazily). Every op is
written once against ``xp = array_module(array)``; only this module knows the libraries."""

import math

import numpy as np

DEVICES = ("cpu", "cuda")


def _cupy():
    try:
        import cupy
    except ImportError as error:
        raise RuntimeError(
            'device "cuda" needs CuPy: pip install "microgradnorm[gpu]" (cupy-cuda12x)'
        ) from error
    return cupy


_gpu_found = []    # [True] once CuPy has been seen to reach a GPU


def _cupy_with_gpu():
    """CuPy, checked once to reach a GPU (else a RuntimeError that says so)."""
    cupy = _cupy()
    if not _gpu_found:
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except cupy.cuda.runtime.CUDARuntimeError as error:
            raise RuntimeError(f'device "cuda": CuPy is installed but reaches no GPU '
                               f'({error})') from None
        if count == 0:
            raise RuntimeError('device "cuda": CuPy is installed but sees no GPU')
        _gpu_found.append(True)
    return cupy


def cuda_available():
    """True when CuPy is installed and reaches a GPU (never raises)."""
    try:
        _cupy_with_gpu()
    except RuntimeError:
        return False
    return True


def is_cupy_array(array):
    # CuPy arrays are recognised by their module, so NumPy-only machines never import CuPy.
    return type(array).__module__.startswith("cupy")


def array_module(array):
    """``numpy`` or ``cupy``, whichever owns ``array``."""
    return _cupy() if is_cupy_array(array) else np


def device_of(array):
    """``"cuda"`` for a CuPy array, ``"cpu"`` for everything else."""
    return "cuda" if is_cupy_array(array) else "cpu"


def check_device(device):
    if device not in DEVICES:
        raise ValueError(f'device must be one of {DEVICES}, got {device!r}')
    return device


def to_device(array, device):
    """Move ``array`` to ``device``; returns ``array`` itself when it is already there."""
    check_device(device)
    if device_of(array) == device:
        return array
    if device == "cuda":
        return _cupy_with_gpu().asarray(array)
    return array.get()


def new_array(data, dtype=None, device="cpu"):
    """A copy of ``data`` (array_like) in ``dtype`` on ``device``, as ``torch.tensor``."""
    check_device(device)
    if device == "cuda":
        cupy = _cupy_with_gpu()
        if is_cupy_array(data):
            return cupy.array(data, dtype=dtype, copy=True)
        # converted on the host, so rounding is the CPU's (ml_dtypes' for bfloat16); the
        # upload is the copy
        return cupy.asarray(np.asarray(data, dtype=dtype))
    if is_cupy_array(data):
        data = data.get()
    return np.array(data, dtype=dtype, copy=True)


def memory_owner(array):
    """The array that owns ``array``'s memory (``array`` itself unless it is a view)."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def to_numpy(array):
    return to_device(array, "cpu")


_math_erf = np.frompyfunc(math.erf, 1, 1)


def corrected_mean(array, axis, keepdims=False):
    """Mean over ``axis`` (None: all), sum/count plus one correction step, mean(x - that).

    The step lands a constant row's mean exactly, so its x - mean is 0, as torch's Welford
    mean does (sum/count of 0.1 three times is 0.1 + 1.4e-17); elsewhere it only refines.
    A row holding inf or NaN keeps its plain mean (its correction is NaN).
    """
    xp = array_module(array)
    mean = array.mean(axis=axis, keepdims=True)
    correction = (array - mean).mean(axis=axis, keepdims=True)
    mean = mean + xp.where(xp.isfinite(correction), correction, 0)
    return mean if keepdims else mean.squeeze(axis)


def erf(array):
    """The error function in ``array``'s dtype: ``math.erf`` per element on the CPU (NumPy
    has none), ``cupyx.scipy.special.erf`` on the GPU (half precision via float32)."""
    if is_cupy_array(array):
        from cupyx.scipy.special import erf as cupy_erf
        if array.dtype.itemsize < 4:
            return cupy_erf(array.astype(np.float32)).astype(array.dtype)
        return cupy_erf(array)
    # asarray: on a 0-d array frompyfunc returns a bare Python float
    return np.asarray(_math_erf(array.astype(np.float64)), dtype=array.dtype)


# ----- the C allocator ------------------------------------------------------------------------
KEEP_FREED_BYTES = 1 << 30        # freed heap memory kept for reuse, at most
_MALLOC_TRIM_THRESHOLD, _MALLOC_MMAP_THRESHOLD = -1, -3    # mallopt parameters (malloc.h)
_MMAP_THRESHOLD_MAX = 32 << 20    # glibc's largest mmap threshold on 64-bit systems


def keep_freed_memory(trim_threshold=KEEP_FREED_BYTES):
    """Let glibc's ``malloc`` keep up to ``trim_threshold`` freed bytes for the next arrays,
    so each step's temporaries cause no page faults (docs/architecture.md); call it once,
    before training. Returns False without glibc's ``mallopt``."""
    import ctypes
    import ctypes.util

    if isinstance(trim_threshold, bool) or not isinstance(trim_threshold, int) \
            or not 0 <= trim_threshold < 2**31:
        raise ValueError(f"keep_freed_memory: trim_threshold must be an int in [0, 2**31), "
                         f"got {trim_threshold!r}")
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_MALLOC_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)
                and mallopt(_MALLOC_TRIM_THRESHOLD, trim_threshold))
