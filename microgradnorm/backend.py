"""Array backends: NumPy on "cpu", CuPy on "cuda" (optional, imported lazily). Every op is
written once against ``xp = array_module(array)``; only this module knows the libraries."""

import builtins
import math
import os
import threading
import warnings

import numpy as np

from . import dtypes

from .meta_arrays import META_NUMPY, MetaArray, is_meta_array, meta_array

DEVICES = ("cpu", "cuda", "meta")     # meta: shapes and dtypes, no data (meta_arrays.py)


class DeviceError(RuntimeError, ValueError):
    """A device that cannot be named or reached: torch's RuntimeError, and a ValueError, the
    class this library raised for a bad device name before."""


class DeviceTypeError(DeviceError, TypeError):
    """A device given as something other than a str, a device or an index (a float, a
    Tensor): torch's argument parser's TypeError."""


class NoGPUError(DeviceError, AssertionError):
    """"cuda" asked for where no GPU is reached: also an AssertionError, the class of torch's
    "Torch not compiled with CUDA enabled" on a machine without one."""


class Device:
    """Where a tensor lives, as ``torch.device``: a ``type`` ("cpu", "cuda", or "meta": a
    shape and dtype without data, ``meta_arrays.py``) and an ``index`` (None: the current
    one). ``Tensor.device`` is one; every ``device=`` argument takes one or its string.

    Unlike torch's, a device also equals its strings, so ``x.device == "cuda"`` holds on
    cuda:0 (a string without an index names any index); as a dict key it finds only the
    string ``str(device)``.

    Args:
        type: "cpu", "cuda", "cuda:0" (type and index), another Device, or an int (a GPU's
            index, as torch's ``device(0)``).
        index: the GPU's index (an int >= 0), when ``type`` does not hold one.

    Example:
        >>> mg.device("cuda", 0) == mg.device("cuda:0"), str(mg.device("cuda", 0))
        (True, 'cuda:0')
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError(f"device(): index must be an int, got "
                            f"{builtins.type(index).__name__} {index!r}")
        if isinstance(type, Device) and index is None:
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool) and index is None:
            type, index = "cuda", type
        elif not isinstance(type, str):
            raise TypeError(f"device(): type must be a str, a device or an int, got "
                            f"{builtins.type(type).__name__} {type!r}")
        elif ":" in type:
            if index is not None:
                raise DeviceError(f"device(): type (string) must not include an index "
                                  f"because index was passed explicitly: {type}")
            name, _, digits = type.partition(":")
            if not (digits.isascii() and digits.isdigit()) or name not in DEVICES:
                raise DeviceError(f"device(): invalid device string: {type!r}")
            type, index = name, int(digits)
        if type not in DEVICES:
            raise DeviceError(f"device(): expected one of {', '.join(DEVICES)} device type "
                              f"at start of device string: {type}")
        if index is not None and index < 0:
            raise DeviceError(f"device(): device index must not be negative, got {index}")
        self._type, self._index = type, index

    @property
    def type(self):
        """"cpu", "cuda" or "meta"."""
        return self._type

    @property
    def index(self):
        """The device's index, an int, or None."""
        return self._index

    def __eq__(self, other):
        if isinstance(other, Device):
            return (self._type, self._index) == (other._type, other._index)
        if not isinstance(other, str):
            return NotImplemented
        try:
            other = Device(other)
        except DeviceError:
            return False
        same_index = self._index == other._index or None in (self._index, other._index)
        return self._type == other._type and same_index

    def __hash__(self):
        return hash(str(self))

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self):
        index = "" if self._index is None else f", index={self._index}"
        return f"device(type='{self._type}'{index})"

    def __reduce__(self):
        return Device, (self._type, self._index)

    def __enter__(self):
        """``with mg.device("cuda"):``: factories given no device put tensors here until the
        block ends, in this thread (``torch.device`` as a context manager)."""
        _default_devices.blocks.append(check_device(self))
        _count_blocks(1)
        return self

    def __exit__(self, *exc_info):
        _default_devices.blocks.pop()
        _count_blocks(-1)
        return False


CPU, CUDA, META = Device("cpu"), Device("cuda", 0), Device("meta")  # torch's names


def _cupy():
    try:
        import cupy
    except ImportError as error:
        raise NoGPUError(
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
            raise NoGPUError(f'device "cuda": CuPy is installed but reaches no GPU '
                             f'({error})') from None
        if count == 0:
            raise NoGPUError('device "cuda": CuPy is installed but sees no GPU')
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


def data_address(array):
    """The address of ``array``'s first element, an int (NumPy's or CuPy's pointer)."""
    if is_cupy_array(array):
        return int(array.data.ptr)
    return int(array.__array_interface__["data"][0])


def array_module(array):
    """``numpy`` or ``cupy``, whichever owns ``array`` (a meta array: NumPy whose
    conversions and factories make meta arrays, ``meta_arrays.META_NUMPY``)."""
    if is_cupy_array(array):
        return _cupy()
    return META_NUMPY if array.__class__ is MetaArray else np


def device_of(array):
    """``"cuda"`` for a CuPy array, ``"meta"`` for a meta array, ``"cpu"`` for the rest."""
    return "cuda" if is_cupy_array(array) else "meta" if is_meta_array(array) else "cpu"


def torch_device(array):
    """The ``Device`` of ``array`` as torch names a tensor's: cpu, cuda:0 or meta."""
    return CUDA if is_cupy_array(array) else META if is_meta_array(array) else CPU


def is_device(value):
    """True for a ``Device``, a string that starts as one ("cuda:1" too) and an int (not a
    bool): to torch a GPU's index, as ``x.to(0)`` reads it."""
    return isinstance(value, Device) or type(value) is int or isinstance(value, str) \
        and value.partition(":")[0] in DEVICES


class _DefaultDevices(threading.local):
    """Per thread, as torch's (a ``threading.local`` there too): the devices of the ``with
    mg.device(...)`` blocks entered, innermost last, and ``set_default_device``'s device; a
    new thread starts on the CPU, whatever the thread that started it set."""

    def __init__(self):
        self.blocks = []
        self.default = "cpu"    # set_default_device's (torch_misc.py): "cpu", "cuda", "meta"


_default_devices = _DefaultDevices()
_open_blocks = [0]              # `with mg.device(...)` blocks open, in all threads
_other_defaults = [0]           # threads whose set_default_device is not the CPU
_lock = threading.Lock()
_cpu_default = True             # no block open, no default set in any thread: None is "cpu"


def _count_blocks(change, other_defaults=0):
    # a block entered (+1) or left (-1), a thread's default moved off (+1) or back to the CPU
    # (-1); the flag check_device reads, set again. A thread that ends off the CPU leaves
    # its count: factories then read their thread's default on each call (right, a bit slower)
    global _cpu_default
    with _lock:
        _open_blocks[0] += change
        _other_defaults[0] += other_defaults
        _cpu_default = _open_blocks[0] == 0 and _other_defaults[0] == 0


def default_device():
    """The device factories put tensors on when given none, "cpu" or "cuda": the innermost
    ``with mg.device(...)`` block's in this thread, else ``mg.set_default_device``'s in this
    thread, else the CPU (``torch.get_default_device``)."""
    state = _default_devices
    return state.blocks[-1] if state.blocks else state.default


def set_global_default_device(device):
    """This thread's default device outside any block (``torch.set_default_device``, per
    thread as torch's); None: the CPU."""
    new = "cpu" if device is None else check_device(device)
    old, _default_devices.default = _default_devices.default, new
    _count_blocks(0, (new != "cpu") - (old != "cpu"))


def check_device(device):
    """``device`` (a string or a ``Device``) as "cpu" or "cuda", the names the array
    functions take; None is the default device (``default_device``: the CPU unless set), as
    torch's factories take ``device=None``; an int is a GPU's index, as torch reads
    ``device=0`` ("cuda:0"); a GPU index other than 0 is refused, as torch refuses a device
    ordinal that a one-GPU machine lacks (this library drives one GPU)."""
    if device is None:                            # the usual case: a factory's default
        return "cpu" if _cpu_default else default_device()
    if type(device) is str and device in DEVICES:
        return device                             # nothing to parse
    if not isinstance(device, Device):
        if type(device) is int:                   # torch's accelerator index: cuda:i
            device = Device("cuda", device)
        elif not isinstance(device, str):
            raise DeviceTypeError(f"device must be a str, a device or an int (a GPU's "
                                  f"index), got {type(device).__name__} {device!r}")
        else:
            device = Device(device)
    if device.type == "cuda" and device.index not in (None, 0):
        raise DeviceError(f"device {str(device)!r}: CUDA error: invalid device ordinal "
                          "(microgradnorm drives one GPU, cuda:0)")
    return device.type


def check_pin_memory(fn, pin_memory):
    """Refuse ``pin_memory=True`` of a factory as torch without a GPU does (RuntimeError):
    there is no page-locked host memory here (a GPU array is copied from any host array);
    False and None (torch's default) are taken, anything else is torch's TypeError."""
    if pin_memory is None or pin_memory is False:
        return
    if pin_memory is not True:
        raise TypeError(f"{fn}(): argument 'pin_memory' must be bool, got "
                        f"{type(pin_memory).__name__} {pin_memory!r}")
    raise RuntimeError(f"{fn}(): pin_memory=True is not supported: there is no pinned "
                       "(page-locked) host memory here; leave pin_memory False")


def empty_array(shape, dtype, device="cpu"):
    """An uninitialised host array of ``shape`` and ``dtype`` (``np.empty``), or a meta
    array where ``device`` is "meta" (what a sampler fills: a meta one draws nothing)."""
    if check_device(device) == "meta":
        return meta_array(shape, dtype)
    return np.empty(shape, dtype)


def to_device(array, device):
    """Move ``array`` to ``device``; returns ``array`` itself when it is already there."""
    device = check_device(device)
    if device_of(array) == device:
        return array
    if device == "meta":                  # torch's: shape and dtype kept, the data dropped
        return meta_array(array.shape, array.dtype)
    if is_meta_array(array):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if device == "cuda":
        return _cupy_with_gpu().asarray(array)
    return array.get()


_WARNED = set()      # the keys of the warnings given once a process (``warn_once``)


def warn_once(message, stacklevel=3, category=UserWarning, key=None):
    """torch's ``TORCH_WARN_ONCE``: ``warnings.warn(message, category, stacklevel)`` the first
    time only, once per ``key`` (default: the message itself) in this process."""
    key = message if key is None else key
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, category, stacklevel=stacklevel)


def warn_complex_to_real():
    """A complex array cast to a real dtype: torch's UserWarning (not NumPy's ComplexWarning,
    a RuntimeWarning); at each cast, as this package's other complex-to-real writes warn
    (torch: once a process)."""
    warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                  stacklevel=4)


def new_array(data, dtype=None, device="cpu"):
    """A copy of ``data`` (array_like) in ``dtype`` on ``device``, as ``torch.tensor``."""
    device = check_device(device)
    if device == "meta":
        if is_meta_array(data):
            return meta_array(data.shape, data.dtype if dtype is None else dtype)
        data = new_array(data, dtype)          # torch's dtype inference and errors
        return meta_array(data.shape, data.dtype)
    if is_meta_array(data):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if device == "cuda":
        cupy = _cupy_with_gpu()
        if is_cupy_array(data):
            return cupy.array(data, dtype=dtype, copy=True)
        # converted on the host, so rounding is the CPU's (ml_dtypes' for bfloat16); the
        # upload is the copy
        return cupy.asarray(np.asarray(data, dtype=dtype))
    if is_cupy_array(data):
        data = data.get()
    if dtype is not None and getattr(data, "dtype", None) is not None \
            and data.dtype.kind == "c" and np.dtype(dtype).kind not in "cb":
        warn_complex_to_real()
        data = data.real
    if dtype is None:
        return np.array(data, copy=True)
    if dtypes.is_float8(dtype):         # torch's saturation and NaN bytes, not ml_dtypes'
        return dtypes.float8_converted(np.asarray(data), np.dtype(dtype))
    with silent_floats():               # 1e40 as float32: inf, silently, as torch's
        return np.array(data, dtype=dtype, copy=True)


def memory_owner(array):
    """The array that owns ``array``'s memory (``array`` itself unless it is a view)."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def partly_overlap(a, b):
    """True where arrays ``a`` and ``b`` share some memory without being one view (the same
    start, end and strides): torch's partial overlap, which an op refuses between what it
    reads and what it writes (``x[1:].add_(x[:-1])``, ``x.add_(x.t())``). As torch's, told
    only of arrays that fill their memory span densely; any other layout is never refused."""
    if a is b or a.size == 0 or b.size == 0 or memory_owner(a) is not memory_owner(b):
        return False
    spans = []
    for array in (a, b):
        step = array.itemsize
        for stride, n in sorted((s, n) for s, n in zip(array.strides, array.shape)
                                if n > 1):
            if stride != step:                      # not dense: torch's "too hard"
                return False
            step *= n
        start = data_address(array)
        spans.append((start, start + array.size * array.itemsize))
    if spans[0] == spans[1]:
        return a.strides != b.strides
    return spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1]


def to_numpy(array, for_numpy=False):
    """``array`` on the host; a meta array's refusal is torch's ``numpy()``'s TypeError where
    ``for_numpy``, else its NotImplementedError."""
    if for_numpy and is_meta_array(array):
        raise TypeError("can't convert meta device type tensor to numpy: a meta tensor has "
                        "no data (materialize it first, e.g. Module.to_empty)")
    return to_device(array, "cpu")


# ----- IEEE results without warnings --------------------------------------------------------
# torch computes inf and NaN silently (exp(1000), log(0), 0/0, an overflowing sum); NumPy
# warns unless its error state says "ignore". Function.apply runs each forward, and the
# engine its backward loop, with ``FLOAT_ERRORS.set(IGNORE_FLOAT_ERRORS)`` (a token, given
# back to ``FLOAT_ERRORS.reset``). NumPy 2 keeps that state in a context variable (per
# thread): setting and resetting it costs about 0.2 µs, where entering and leaving
# np.errstate costs 0.9-1.1. The state set is NumPy's defaults but for the errors (made
# once, at import): inside an op, a buffer size set by ``np.setbufsize`` and an error
# callback do not apply.
try:
    from numpy._core._ufunc_config import _extobj_contextvar as FLOAT_ERRORS, _make_extobj
    IGNORE_FLOAT_ERRORS = _make_extobj(all="ignore")
except (ImportError, TypeError):            # NumPy 1 (or a NumPy that moved them)
    class _ErrorState:
        """``set`` enters an np.errstate(all="ignore") and returns it; ``reset`` leaves it."""

        @staticmethod
        def set(_):
            state = np.errstate(all="ignore")
            state.__enter__()
            return state

        @staticmethod
        def reset(state):
            state.__exit__(None, None, None)

    FLOAT_ERRORS, IGNORE_FLOAT_ERRORS = _ErrorState(), None


class silent_floats:
    """``with silent_floats():`` what ``np.errstate(all="ignore")`` does (above: NumPy's
    default buffer size inside), at about half its cost (one block, one thread; not
    reentrant per instance)."""

    __slots__ = ("_token",)

    def __enter__(self):
        self._token = FLOAT_ERRORS.set(IGNORE_FLOAT_ERRORS)

    def __exit__(self, *exception):
        FLOAT_ERRORS.reset(self._token)


def corrected_mean(array, axis, keepdims=False):
    """Mean over ``axis`` (None: all), sum/count plus one correction step, mean(x - that).

    The step lands a constant row's mean exactly, so its x - mean is 0, as torch's Welford
    mean does (sum/count of 0.1 three times is 0.1 + 1.4e-17); elsewhere it only refines.
    A row holding inf or NaN keeps its plain mean (its correction is NaN); an empty one's mean
    is NaN. Both silently, as in torch (NumPy would warn).
    """
    xp = array_module(array)
    if array.size == 0:                  # each slice empty (NaN), or no slice at all
        mean = xp.full_like(array.sum(axis=axis, keepdims=True), xp.nan)
        return mean if keepdims else mean.squeeze(axis)
    with np.errstate(invalid="ignore", over="ignore"):      # inf - inf: NaN, no correction
        mean = array.mean(axis=axis, keepdims=True)
        correction = (array - mean).mean(axis=axis, keepdims=True)
    mean = mean + xp.where(xp.isfinite(correction), correction, 0)
    return mean if keepdims else mean.squeeze(axis)


def erf(array):
    """The error function in ``array``'s dtype: ``cupyx.scipy.special.erf`` on the GPU
    (half precision via float32); on the CPU (NumPy has none) piecewise polynomials in
    float64, within 1 ulp of ``math.erf`` (docs/precision.md), rounded to the dtype."""
    if is_cupy_array(array):
        from cupyx.scipy.special import erf as cupy_erf
        if array.dtype.itemsize < 4:
            return cupy_erf(array.astype(np.float32)).astype(array.dtype)
        return cupy_erf(array)
    x = np.asarray(array, dtype=np.float64)
    if x.size <= _ERF_BY_ELEMENT:            # libm's per element: the polynomials below are
        out = np.fromiter(map(math.erf, x.flat), np.float64, x.size)    # ~110 NumPy calls
        return np.asarray(out.reshape(x.shape), dtype=array.dtype)
    a = np.abs(x)
    out = np.where(a == a, 1.0, np.nan)      # |x| >= 6: erf rounds to 1; NaN stays NaN
    small, middle = a < 1, (a >= 1) & (a < 2)
    near, far = (a >= 2) & (a < 3.5), (a >= 3.5) & (a < 6)
    s = a[small]
    out[small] = s + s * _polynomial(_ERF_SMALL, s * s)     # erf(x)/x - 1, in x²
    out[middle] = _ERF_AT_1_5 + _polynomial(_ERF_MIDDLE, a[middle] - 1.5)
    for where, centre, erfcx in ((near, 2.75, _ERFCX_NEAR), (far, 4.75, _ERFCX_FAR)):
        t = a[where]                        # erf = 1 - exp(-x²)·erfcx(x), erfcx smooth
        out[where] = 1 - np.exp(-t * t) * _polynomial(erfcx, t - centre)
    return np.asarray(np.copysign(out, x), dtype=array.dtype)   # 0-d stays an array


# arrays of at most this many elements take math.erf per element: 3 us for 24 of them, where
# the pieces' ~110 NumPy calls take 90 whatever the size; the two agree within 1 ulp
_ERF_BY_ELEMENT = 64


def _polynomial(coefficients, t):
    """Σ c_i·t^(n-i), the highest power first (Horner)."""
    total = np.full_like(t, coefficients[0])
    for c in coefficients[1:]:
        total *= t                          # in place: no new array per term
        total += c
    return total


# Chebyshev fits (mpmath.chebyfit, degrees 11, 18, 16, 10) of erf(x)/x - 1 in x² on [0, 1],
# erf(1.5 + t) - _ERF_AT_1_5 on |t| <= 0.5 and exp(x²)·erfc(x) around 2.75 and 4.75.
_ERF_AT_1_5 = 0.9661051630973816            # erf(1.5) rounded to float32: exact in the sum
_ERF_SMALL = (
    -7.795898827002142e-10, 1.3720064546777686e-08, -1.6208483801871705e-07,
    1.6447424703317362e-06, -1.492473690741966e-05, 0.00012055294904839707,
    -0.0008548325975389692, 0.0052239776071164225, -0.02686617064323777, 0.11283791670945006,
    -0.37612638903183543, 0.12837916709551256)
_ERF_MIDDLE = (
    -1.0105765937126117e-07, -2.8070456752601277e-07, 1.5308229035011648e-06,
    5.683602380200433e-07, -1.4091941667864247e-05, 1.7962605539251335e-05,
    7.768994601400183e-05, -0.0002544495759217921, -9.291428106724173e-05,
    0.0017098196672546224, -0.0023626776211650162, -0.004743053207835929, 0.01932617199885317,
    -0.014866286152746044, -0.044598858458861204, 0.13875200409423133, -0.17839543383544407,
    0.11893028922362939, -1.6622070864729898e-08)
_ERFCX_NEAR = (
    8.831959586426476e-11, -4.056754880659121e-10, 1.6207327188991065e-09,
    -7.156467021431838e-09, 3.121415013712102e-08, -1.3264839014463818e-07,
    5.519743740073735e-07, -2.247366566986457e-06, 8.94015629298454e-06,
    -3.469861074039318e-05, 0.0001311818005084561, -0.00048219508487679243,
    0.0017195818852900986, -0.005934337897002171, 0.019758592987322854, -0.06323763756063479,
    0.1936620962790687)
_ERFCX_FAR = (
    7.101655615263351e-09, -4.063030433481766e-08, 1.9891575804117597e-07,
    -1.103499129738409e-06, 6.082066085331633e-06, -3.2781361393578424e-05,
    0.00017392803704147962, -0.000908097331008229, 0.004661326389877476, -0.02350344872078373,
    0.11630270721024731)


# ----- the C allocator ------------------------------------------------------------------------
KEEP_FREED_BYTES = 1 << 30        # freed heap memory kept for reuse, at most
_MALLOC_TRIM_THRESHOLD, _MALLOC_MMAP_THRESHOLD = -1, -3    # mallopt parameters (malloc.h)
_MMAP_THRESHOLD_MAX = 32 << 20    # glibc's largest mmap threshold on 64-bit systems


def keep_freed_memory(trim_threshold=KEEP_FREED_BYTES):
    """Let glibc's ``malloc`` keep up to ``trim_threshold`` freed bytes for the next arrays,
    so each step's temporaries cause no page faults (docs/architecture.md). The first
    ``backward()`` calls it (``keep_freed_memory_by_default``); call it yourself to change
    the threshold. Returns False without glibc's ``mallopt``."""
    import ctypes
    import ctypes.util

    if isinstance(trim_threshold, bool) or not isinstance(trim_threshold, int) \
            or not 0 <= trim_threshold < 2**31:
        raise ValueError(f"keep_freed_memory: trim_threshold must be an int in [0, 2**31), "
                         f"got {trim_threshold!r}")
    mallopt = None
    for name in (None, ctypes.util.find_library("c") or "libc.so.6"):
        try:               # None: the process's own symbols, glibc's among them on Linux
            mallopt = ctypes.CDLL(name).mallopt
            break
        except (OSError, AttributeError, TypeError):     # no such library, or no mallopt
            continue
    if mallopt is None:
        return False
    allocator_setting.append("kept")
    return bool(mallopt(_MALLOC_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)
                and mallopt(_MALLOC_TRIM_THRESHOLD, trim_threshold))


KEEP_FREED_MEMORY_VARIABLE = "MICROGRADNORM_KEEP_FREED_MEMORY"
allocator_setting = []    # empty until chosen: then "kept", "left" (the variable) or "no mallopt"


def keep_freed_memory_by_default():
    """The first ``backward()``'s call: ``keep_freed_memory()`` once per process, unless it
    ran already or ``$MICROGRADNORM_KEEP_FREED_MEMORY`` is "0". Without it a training step
    faults every temporary's pages in again, 1.4-2.3x the step's time (docs/benchmarks.md);
    the process's freed memory then stays with it (up to 1 GiB) instead of going back to
    the system, as PyTorch's caching allocator keeps GPU memory."""
    if allocator_setting:
        return
    if os.environ.get(KEEP_FREED_MEMORY_VARIABLE, "").strip() == "0":
        allocator_setting.append("left")
    elif not keep_freed_memory():
        allocator_setting.append("no mallopt")


# the fused multiply-add has a module of its own (fma.py), compiled where numba imports
from .fma import fused_multiply_add  # noqa: E402, F401
