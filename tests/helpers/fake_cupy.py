"""A stand-in for the part of CuPy that ``kernels.cuda`` and the engine touch, for counting
the host's work of a launch without a GPU.

Arrays carry a shape, a dtype and a 256-byte aligned address, no values; kernels record
their launches instead of running. What CuPy does in C (attributes, ``with device``) is
plain attributes here where Python allows it, so that ``count_calls`` counts what the
library does, not what the stand-in does.
"""

import gc
import itertools
import math
import sys
import types

import numpy as np

_addresses = itertools.count(1 << 20, 1 << 20)     # fresh buffers: 256-byte aligned, like CuPy's


class _Memory:
    def __init__(self, ptr):
        self.ptr = ptr


class _Flags:
    c_contiguous = True


class _Device:
    """``cupy.cuda.Device``: the current device, a context manager."""

    id = 0
    attributes = {"MultiProcessorCount": 132}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


DEVICE = _Device()


class ndarray:
    """A CuPy array without values: what ``backend.is_cupy_array`` and the launcher read."""

    __module__ = "cupy._core.core"          # backend.is_cupy_array looks at the module
    flags = _Flags()
    device = DEVICE
    base = None

    def __init__(self, shape, dtype, base=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.ndim = len(self.shape)
        self.size = math.prod(self.shape)
        self.itemsize = self.dtype.itemsize
        self.data = _Memory(next(_addresses) if base is None else base.data.ptr)
        if base is not None:
            self.base = base

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        if -1 in shape:
            known = -math.prod(shape)
            shape = tuple(self.size // known if n == -1 else n for n in shape)
        return ndarray(shape, self.dtype, base=self)

    def astype(self, dtype, copy=True):
        return self if not copy and np.dtype(dtype) == self.dtype else ndarray(self.shape, dtype)

    def copy(self):
        return ndarray(self.shape, self.dtype)

    def __add__(self, other):
        return ndarray(self.shape, self.dtype)


class RawKernel:
    def __init__(self, name, launches):
        self.name, self.launches = name, launches
        self.kernel = types.SimpleNamespace(ptr=0)

    def __call__(self, grid, block, args):
        self.launches.append((self.name, tuple(grid), tuple(block), args))


class RawModule:
    """``cupy.RawModule``: records what would be compiled, hands out recording kernels."""

    def __init__(self, code, options=(), name_expressions=()):
        self.options, self.name_expressions = tuple(options), tuple(name_expressions)
        FAKE.compiled.append(self)

    def get_function(self, name):
        if name not in self.name_expressions:
            raise KeyError(f"{name} was not compiled into this module")
        return RawKernel(name, FAKE.launches)


def empty(shape, dtype=np.float32):
    return ndarray(shape if isinstance(shape, tuple) else (shape,), dtype)


def ascontiguousarray(array):
    return array


def array(data, dtype=None, copy=True):
    return ndarray(data.shape, dtype or data.dtype)


def asarray(data, dtype=None):
    return data if dtype is None or np.dtype(dtype) == data.dtype else array(data, dtype)


def _blocks_per_sm(function, block, shared):
    return 2


FAKE = types.SimpleNamespace(
    __name__="cupy", ndarray=ndarray, empty=empty, ascontiguousarray=ascontiguousarray,
    array=array, asarray=asarray,
    RawModule=RawModule, float32=np.float32, launches=[], compiled=[],
    cuda=types.SimpleNamespace(Device=_Device, driver=types.SimpleNamespace(
        occupancyMaxActiveBlocksPerMultiprocessor=_blocks_per_sm)))


def install(monkeypatch, backend):
    """Make ``backend`` hand out the fake CuPy; returns it (``launches``, ``compiled``)."""
    FAKE.launches.clear()
    FAKE.compiled.clear()
    monkeypatch.setattr(backend, "_cupy", lambda: FAKE)
    monkeypatch.setattr(backend, "_cupy_with_gpu", lambda: FAKE)
    return FAKE


def count_calls(function, *args, **kwargs):
    """(result, number of Python-level calls) of ``function(*args, **kwargs)``: the
    ``sys.setprofile`` 'call' and 'c_call' events, leaving out what runs inside this module
    (a call into it counts once, as the CuPy call it stands for; ``_C_SLOTS`` not at all)."""
    count = 0
    top = sys._getframe()

    def profile(frame, event, arg):
        nonlocal count
        if event == "call" and frame.f_code in _C_SLOTS:
            return
        if event in ("call", "c_call") and not _inside_stand_in(
                frame.f_back if event == "call" else frame, top):
            count += 1

    # the garbage of earlier tests collected now, not inside the count: a cycle freed
    # mid-call runs its __del__s (a captured step's, say) and would count their calls
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    sys.setprofile(profile)
    try:
        result = function(*args, **kwargs)
    finally:
        sys.setprofile(None)
        if enabled:
            gc.enable()
    return result, count - 1          # sys.setprofile(None) itself is a c_call


# What CuPy runs through C slots, which the profiler never sees: making an array
# (``cupy.ndarray(shape, dtype)``) and entering and leaving a device.
_C_SLOTS = {ndarray.__init__.__code__, _Device.__enter__.__code__, _Device.__exit__.__code__}


def _inside_stand_in(frame, top):
    """True when ``frame`` is code of this module, or called from it, below ``top``."""
    while frame is not top:
        if frame.f_code.co_filename == __file__:
            return True
        frame = frame.f_back
    return False
