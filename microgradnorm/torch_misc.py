"""The process-level settings PyTorch scripts call at their top, with torch's names,
arguments and checks: thread counts, matmul precision, deterministic algorithms, the
default device, ``compile``, anomaly detection, the warning mode, denormals, and
``is_inference_mode_enabled``; beside them ``is_nonzero``, torch's truth of a one-element
tensor.

What each changes here (docs/pytorch.md): ``set_num_threads`` sets NumPy's BLAS threads
through ``threadpoolctl``; ``set_default_device`` is where factories given no device put
tensors (``backend.default_device``, which ``with mg.device(...)`` blocks override); the
rest is recorded and read back, because nothing here has the thing it switches (TF32
matmuls, nondeterministic kernels, a compiler, flushed denormals), but anomaly detection,
which is the engine's (``autograd/anomaly.py``). Bad arguments raise torch's error classes
and change nothing."""

import numbers
import os
import warnings

from . import backend, dtypes
from .autograd import anomaly
from .autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .autograd.grad_mode import _state as _grad_state
from .ops.shape_arguments import tensor_argument
from .tensor import Tensor

__all__ = ["are_deterministic_algorithms_enabled", "compile", "get_default_device",
           "get_deterministic_debug_mode", "get_float32_matmul_precision",
           "get_num_interop_threads", "get_num_threads", "is_anomaly_check_nan_enabled",
           "is_anomaly_enabled", "is_deterministic_algorithms_warn_only_enabled",
           "is_inference", "is_inference_mode_enabled", "is_nonzero", "is_warn_always_enabled",
           "set_anomaly_enabled", "set_default_device", "set_default_tensor_type", "typename",
           "set_deterministic_debug_mode", "set_float32_matmul_precision",
           "set_flush_denormal", "set_num_interop_threads", "set_num_threads",
           "set_warn_always", "use_deterministic_algorithms"]

# what the setters recorded, read back by the getters
_settings = {"threads": None, "interop_threads": None, "matmul_precision": "highest",
             "deterministic": False, "deterministic_warn_only": False, "warn_always": False}


def _check_bool(fn, name, value, error=TypeError):
    if not isinstance(value, bool):
        raise error(f"{fn}(): argument '{name}' must be bool, not {type(value).__name__}")


def _check_count(fn, value):
    # torch's checks of a thread count: an int, NumPy's too (RuntimeError otherwise), >= 1
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise RuntimeError(f"{fn} expects an int, but got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{fn} expects a positive integer, got {value}")
    return int(value)


# ----- threads --------------------------------------------------------------------------------
def set_num_threads(num):
    """The number of threads NumPy's BLAS (and any OpenMP library loaded) uses, through
    ``threadpoolctl`` (``torch.set_num_threads``: its intra-op threads); recorded only where
    threadpoolctl is not importable. ``get_num_threads`` reads it back."""
    num = _check_count("set_num_threads", num)
    try:
        import threadpoolctl
    except ImportError:
        threadpoolctl = None
    if threadpoolctl is not None:
        threadpoolctl.threadpool_limits(num)        # in force until changed again
    _settings["threads"] = num


def get_num_threads():
    """The thread count ``set_num_threads`` set; before any call, the threads of NumPy's
    BLAS as ``threadpoolctl`` reports them (the CPU count without it)
    (``torch.get_num_threads``)."""
    if _settings["threads"] is not None:
        return _settings["threads"]
    try:
        import threadpoolctl
    except ImportError:
        return os.cpu_count() or 1
    counts = [info["num_threads"] for info in threadpoolctl.threadpool_info()
              if info["user_api"] == "blas"]
    return max(counts) if counts else os.cpu_count() or 1


def set_num_interop_threads(num):
    """Recorded (``torch.set_num_interop_threads``): nothing here runs ops in parallel. As
    torch's, it may be called once per process; a second call is a RuntimeError."""
    num = _check_count("set_num_interop_threads", num)
    if _settings["interop_threads"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _settings["interop_threads"] = num


def get_num_interop_threads():
    """The count ``set_num_interop_threads`` recorded, else the CPU count
    (``torch.get_num_interop_threads``)."""
    return _settings["interop_threads"] or os.cpu_count() or 1


# ----- matmul precision, deterministic algorithms ---------------------------------------------
def set_float32_matmul_precision(precision):
    """Record "highest", "high" or "medium" (``torch.set_float32_matmul_precision``: whether
    float32 matmuls may use TF32 or bfloat16 internally); NumPy's and CuPy's float32
    matmuls here are always full float32. Another string warns and changes nothing, as
    torch's; a non-string is a RuntimeError."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _settings["matmul_precision"] = precision


def get_float32_matmul_precision():
    """What ``set_float32_matmul_precision`` recorded, "highest" at first."""
    return _settings["matmul_precision"]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record whether deterministic algorithms are required
    (``torch.use_deterministic_algorithms``): every op here gives the same result on the
    same input already, so nothing is refused or warned about."""
    _check_bool("use_deterministic_algorithms", "mode", mode)
    _check_bool("use_deterministic_algorithms", "warn_only", warn_only)
    _settings["deterministic"], _settings["deterministic_warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    """The ``mode`` of the last ``use_deterministic_algorithms``; False at first."""
    return _settings["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """Its ``warn_only``; False at first."""
    return _settings["deterministic_warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """``use_deterministic_algorithms`` by torch's debug mode
    (``torch.set_deterministic_debug_mode``): "default" or 0 off, "warn" or 1 on with
    ``warn_only``, "error" or 2 on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int):      # bool taken (True is 1), NumPy's ints not
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0, 1 or 2 by the recorded settings: off, on with ``warn_only``, on."""
    if not _settings["deterministic"]:
        return 0
    return 1 if _settings["deterministic_warn_only"] else 2


# ----- the default device ---------------------------------------------------------------------
def set_default_device(device):
    """Where factories put tensors given no ``device=`` (``torch.set_default_device``):
    "cpu", "cuda" or "meta", in this thread, as torch's (a new thread starts on the CPU; a
    ``with mg.device(...)`` block overrides it in its thread); None puts the CPU back. A
    name that is no device is torch's RuntimeError; "cuda" is taken on any machine, and a
    factory then needs CuPy and a GPU, as torch's CPU build needs CUDA."""
    backend.set_global_default_device(device)


def set_default_tensor_type(t, /):
    """Torch's deprecated setter of the default floating dtype (``set_default_tensor_type``):
    ``t`` a legacy CPU tensor type (``mg.DoubleTensor``) or its dotted name
    (``"torch.DoubleTensor"``), whose dtype becomes the default one (``mg.set_default_dtype``),
    with torch's deprecation warning, once. Torch's errors for the rest: a CUDA type's name or
    a type that is not floating, a TypeError; another name, the import error torch's lookup
    gives.

    Example:
        >>> mg.set_default_tensor_type("torch.DoubleTensor")    # mg.tensor([1.5]) is float64
    """
    from .ops.protocol import LEGACY_TYPES, LegacyType      # the legacy types sit above us
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module == "torch.cuda":
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        if module not in ("torch", "microgradnorm"):
            raise ModuleNotFoundError(f"No module named '{module or t}'")
        if name not in LEGACY_TYPES:
            raise AttributeError(f"module '{module}' has no attribute '{name}'")
        t = LEGACY_TYPES[name]
    if not isinstance(t, LegacyType):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if not dtypes.is_floating(t.dtype):                 # bfloat16 too, as torch's
        raise TypeError("only floating-point types are supported as the default type")
    backend.warn_once("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, "
                      "please use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.", stacklevel=3)
    dtypes.set_default_dtype(t.dtype)


def get_default_device():
    """The device factories use when given none (``torch.get_default_device``): a
    ``with mg.device(...)`` block's, else ``set_default_device``'s, else ``mg.device("cpu")``;
    the GPU as ``cuda:0``, without one the error a factory then raises (torch's: its
    AssertionError)."""
    device = backend.default_device()
    if device != "cuda":
        return backend.CPU if device == "cpu" else backend.META
    backend._cupy_with_gpu()                      # no GPU: the factories' error
    return backend.CUDA


# ----- compile --------------------------------------------------------------------------------
class CompileArgumentError(AssertionError, TypeError):
    """``compile`` of something that is not callable: torch's AssertionError, a TypeError."""


_COMPILE_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs",
                  "max-autotune")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, name=None, disable=False, recompile_limit=None,
            isolate_recompiles=False, shapes_spec=None):
    """``model`` itself, unchanged (``torch.compile``): there is no compiler here, so a
    compiled module or function runs eagerly, as it would with ``disable=True``; a Module
    is returned as it is (torch wraps it in an ``OptimizedModule``). Decorates with and
    without arguments (``@mg.compile``, ``@mg.compile(mode="max-autotune")``). torch's
    keyword arguments are taken and checked as torch checks them (``mode`` one of its modes,
    not with ``options``); ``mg.capture`` is the tool here that replays a step's graph.

    Example:
        >>> model = mg.compile(model)                     # the same model, run eagerly
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _COMPILE_MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(_COMPILE_MODES)}")
    if model is None:
        def decorator(fn):
            return compile(fn, mode=mode, options=options)
        return decorator
    if not callable(model):
        raise CompileArgumentError(f"A callable function is expected, but "
                                   f"{type(model)} is provided.")
    return model


# ----- grad modes, anomaly detection, warnings, denormals -------------------------------------
def is_inference_mode_enabled():
    """True inside ``mg.inference_mode()`` in this thread (``torch.is_inference_mode_enabled``);
    False inside ``inference_mode(False)`` and outside."""
    return _grad_state.inference


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``, what
    ``torch.autograd.set_detect_anomaly`` calls): while on, a backward whose gradient holds
    a NaN raises, naming its node (``autograd/anomaly.py``)."""
    _check_bool("set_anomaly_enabled", "enabled", enabled)
    _check_bool("set_anomaly_enabled", "check_nan", check_nan)
    anomaly.set_detect_anomaly(enabled, check_nan)


def set_warn_always(b):
    """Record whether warnings torch gives once should be given every time
    (``torch.set_warn_always``); the warnings here follow Python's filters either way."""
    _check_bool("set_warn_always", "b", b, RuntimeError)
    _settings["warn_always"] = b


def is_warn_always_enabled():
    """What ``set_warn_always`` recorded; False at first."""
    return _settings["warn_always"]


def set_flush_denormal(mode):
    """False: flushing denormal floats to zero is not supported here (``torch.set_flush_denormal``
    returns whether it took effect); ``mode`` must be a bool (RuntimeError, as torch's)."""
    _check_bool("set_flush_denormal", "mode", mode, RuntimeError)
    return False


# ----- a tensor's truth -----------------------------------------------------------------------
def is_inference(input):
    """Whether ``input`` is an inference tensor (``torch.is_inference``), the function form
    of ``Tensor.is_inference``: made inside ``mg.inference_mode()``, or a view or
    ``detach()`` of one; a TypeError for what is not a Tensor, as torch's.

    Args:
        input: the Tensor to ask.

    Example:
        >>> with mg.inference_mode():
        ...     y = mg.ones(2)
        >>> mg.is_inference(y), mg.is_inference(y.clone())          # (True, False)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_inference()


def is_nonzero(input):
    """The one element of ``input`` as a bool (``torch.is_nonzero``): a RuntimeError for
    no element or more than one, a TypeError for what is not a Tensor, as torch's."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_nonzero(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_nonzero()


def _assert(condition, message):
    """``assert condition, message`` as a function (``torch._assert``), the form model code
    uses for shape checks that tracing keeps: an AssertionError with ``message`` when
    ``condition`` is false (a one-element Tensor by its truth).

    Args:
        condition: a bool, or anything with a truth value.
        message: the AssertionError's message.

    Example:
        >>> mg._assert(mg.zeros(2, 3).shape[1] == 3, "want 3 columns")
    """
    assert condition, message


def typename(obj):
    """The name of ``obj``'s type as ``torch.typename`` gives it: a Tensor's legacy type
    name (``x.type()``, "torch.FloatTensor"); otherwise "module.qualname" of a class or
    function, or of an object's class, the module left out for builtins.

    Args:
        obj: anything.

    Example:
        >>> mg.typename(mg.zeros(2)), mg.typename(3)
        ('torch.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    if hasattr(obj, "__qualname__") or hasattr(obj, "__name__"):
        module = getattr(obj, "__module__", "") or ""
        name = getattr(obj, "__qualname__", None) or obj.__name__
    else:
        module, name = type(obj).__module__ or "", type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


# ----- the function forms of a few Tensor questions -------------------------------------------
def is_same_size(input, other):
    """Whether ``input`` and ``other`` have the same shape (``torch.is_same_size``); a
    TypeError for what is not a Tensor, as torch's.

    Args:
        input, other: the Tensors to compare.

    Example:
        >>> mg.is_same_size(mg.zeros(2, 3), mg.ones(2, 3))
        True
    """
    tensor_argument("is_same_size", "input", input, 1)
    tensor_argument("is_same_size", "other", other, 2)
    return input.is_same_size(other)


def is_signed(input):
    """Whether ``input``'s dtype holds negative numbers (``torch.is_signed``): True for the
    floating, complex and signed integer dtypes, False for uint8 and bool; a TypeError for
    what is not a Tensor.

    Args:
        input: the Tensor to ask.

    Example:
        >>> mg.is_signed(mg.zeros(2)), mg.is_signed(mg.zeros(2, dtype=mg.uint8))
        (True, False)
    """
    tensor_argument("is_signed", "input", input, 1)
    return input.is_signed()


def get_device(input):
    """The index of the GPU holding ``input``, -1 on the CPU (``torch.get_device``, the
    function form of ``Tensor.get_device``); a TypeError for what is not a Tensor.

    Args:
        input: the Tensor to ask.

    Example:
        >>> mg.get_device(mg.zeros(2))
        -1
    """
    tensor_argument("get_device", "input", input, 1)
    return input.get_device()


# ----- the build's flags, as torch's CPU build answers them ---------------------------------
has_lapack = True        # NumPy's LAPACK: mg.linalg's factorizations
has_mkl = False          # this package calls no MKL (torch's CPU wheel answers True)
has_openmp = True        # as torch's CPU build answers (threads: set_num_threads)
has_spectral = True      # mg.fft


def compiled_with_cxx11_abi():
    """True, as torch's builds since 2.x answer (nothing here is compiled against it)."""
    return True


def init_num_threads():
    """Set up the thread pool of the calling thread, as torch's; NumPy's needs nothing, so
    this returns None and changes nothing."""


def is_vulkan_available():
    """False: no Vulkan backend, as torch's CPU build."""
    return False


def is_distributed(input):
    """``input.is_distributed()``: False, as torch's for every dense tensor.

    Example:
        >>> mg.is_distributed(mg.ones(2))           # False
    """
    tensor_argument("is_distributed", "input", input, 1)
    return input.is_distributed()
