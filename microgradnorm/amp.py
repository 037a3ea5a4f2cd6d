"""``mg.amp`` (also ``mg.cuda.amp``): ``autocast`` and ``GradScaler`` with torch's names.
Mixed-precision casting is not implemented (ops run in their inputs' dtypes; cast the model
to float16 or bfloat16 to compute in them), so:

* ``autocast(...)`` is a context manager and decorator that casts nothing; enabled, it
  warns once. It records torch's per-device state, which the function family reads and
  sets as torch's (``is_autocast_enabled("cpu")`` True inside an enabled "cpu" block,
  ``get_autocast_dtype`` its dtype, ``set_autocast_enabled``, the nesting count, the cache
  flag; the deprecated per-device forms with torch's warnings);
* ``GradScaler(...)`` scales as torch's (the loss times the scale, the gradients unscaled
  and checked, a step skipped on an inf or NaN, the scale backed off and grown), enabled
  where torch's is: on "cpu", and on "cuda" where a GPU is seen."""

import functools
import threading
import warnings

import numpy as np

from . import backend, dtypes

__all__ = ["GradScaler", "autocast", "get_autocast_dtype", "is_autocast_available",
           "is_autocast_enabled"]

# torch's autocast dtype of each device type before anything sets one
_DEFAULT_DTYPES = {"cuda": "float16", "cpu": "bfloat16", "mps": "float16", "xpu": "bfloat16",
                   "xla": "bfloat16"}
_AVAILABLE = ("cpu", "cuda", "mps", "xpu", "hpu", "xla", "mtia", "maia", "ipu")
# torch's device types (what its set_/is_/get_autocast_* accept)
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
class _ThreadState(threading.local):
    """The per-device state torch's autocast keeps: enabled flags and dtypes set (by a block
    or set_autocast_*), the cache flag and the nesting count; nothing here reads it to cast.
    Each thread has its own, as torch's (its thread-local dispatch keys and counters): a
    block in one thread is not seen in another, which starts from the defaults."""

    def __init__(self):
        self.values = {"enabled": {}, "dtype": {}, "cache": True, "nesting": 0}

    def __getitem__(self, key):
        return self.values[key]

    def __setitem__(self, key, value):
        self.values[key] = value


_state = _ThreadState()


def _dtype_of(device_type):
    if device_type in _state["dtype"]:
        return _state["dtype"][device_type]
    default = _DEFAULT_DTYPES.get(device_type, "float16")
    return dtypes.bfloat16 if default == "bfloat16" else np.dtype(default)


def _warn_once(what):
    backend.warn_once(f"{what} is enabled, but mixed precision is not implemented here: ops "
                      "run in their inputs' dtypes (torch disables it the same way on a "
                      "machine without the device)", stacklevel=4, key=what)


class autocast:
    """A block or decorated function where torch would cast ops to ``dtype``; here nothing
    is cast (see the module's docstring).

    Example:
        >>> with mg.autocast(device_type="cpu", dtype=mg.bfloat16, enabled=False):
        ...     loss = model(x)
    """

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"autocast: device_type must be a str, got "
                             f"{type(device_type).__name__}")
        self.device_type, self.dtype, self.enabled = device_type, dtype, bool(enabled)

    def __enter__(self):
        device = self.device_type
        self._saved = (_state["enabled"].get(device), _state["dtype"].get(device),
                       _state["cache"])
        dtype = _dtype_of(device) if self.dtype is None else self.dtype
        enabled = self.enabled
        if enabled and device == "cuda" and not backend.cuda_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                          "autocast.", UserWarning, stacklevel=2)
            enabled = False
        if enabled and device == "cpu" and dtype not in (np.dtype("float16"), dtypes.bfloat16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                          "torch.float16 currently.", UserWarning, stacklevel=2)
            enabled = False
        if enabled:
            _warn_once("autocast")
        _state["enabled"][device], _state["dtype"][device] = enabled, dtype
        _state["nesting"] += 1
        return self

    def __exit__(self, *exc):
        enabled, dtype, cache = getattr(self, "_saved", (None, None, True))
        for key, value in (("enabled", enabled), ("dtype", dtype)):
            if value is None:
                _state[key].pop(self.device_type, None)
            else:
                _state[key][self.device_type] = value
        _state["cache"] = cache
        _state["nesting"] -= 1
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def within(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return within


def is_autocast_available(device_type):
    """Whether torch has autocast for ``device_type`` ("cpu", "cuda", "mps", ...), as torch's
    ``torch.amp.is_autocast_available``; it casts nothing here."""
    return device_type in _AVAILABLE


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (without one, "cuda"), as torch's: True
    inside an enabled ``autocast`` block on that device, or after ``set_autocast_enabled``.
    Ops cast nothing here whatever it says (see the module's docstring).

    Example:
        >>> with mg.autocast("cpu", dtype=mg.bfloat16):
        ...     mg.is_autocast_enabled("cpu")          # True
    """
    device = "cuda" if device_type is None else check_device_type("is_autocast_enabled",
                                                                   device_type)
    return bool(_state["enabled"].get(device, False))


def get_autocast_dtype(device_type):
    """The dtype autocast on ``device_type`` names: the innermost block's, or the one
    ``set_autocast_dtype`` set, else torch's default (float16 on "cuda", bfloat16 on "cpu")
    (``torch.get_autocast_dtype``), as torch's dtype object (``torch.bfloat16``)."""
    return dtypes.torch_dtype(_dtype_of(check_device_type("get_autocast_dtype", device_type)))


def check_device_type(where, device_type, position=1):
    """``device_type`` if it is one of torch's device types (TypeError for a non-str,
    RuntimeError for an unknown name, as torch's)."""
    if not isinstance(device_type, str):
        raise TypeError(f"{where}(): argument 'device_type' (position {position}) must be "
                        f"str, not {type(device_type).__name__}")
    if device_type not in DEVICE_TYPES:
        raise RuntimeError(f"{where}(): expected one of {', '.join(DEVICE_TYPES)} device type, "
                           f"got {device_type!r}")
    return device_type


def _check_bool(where, value, position):
    if not isinstance(value, bool):
        raise TypeError(f"{where}(): argument 'enabled' (position {position}) must be bool, "
                        f"not {type(value).__name__}")
    return value


def _check_dtype(where, dtype, position):
    if not dtypes.is_dtype(dtype):
        raise TypeError(f"{where}(): argument 'dtype' (position {position}) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    return dtype


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for ``device_type`` (``set_autocast_enabled(enabled)``: for
    "cuda"), as torch's; ``is_autocast_enabled`` reads it back. Ops cast nothing here.

    Args:
        device_type (str): "cpu", "cuda", ...
        enabled (bool): the new state (a bool: anything else is torch's TypeError).

    Example:
        >>> mg.set_autocast_enabled("cpu", True); mg.is_autocast_enabled("cpu")   # True
    """
    if enabled is None:                      # torch's one-argument form, for "cuda"
        device_type, enabled, position = "cuda", device_type, 1
    else:
        check_device_type("set_autocast_enabled", device_type)
        position = 2
    _state["enabled"][device_type] = _check_bool("set_autocast_enabled", enabled, position)


def set_autocast_dtype(device_type, dtype):
    """Set the dtype autocast on ``device_type`` names (``get_autocast_dtype`` reads it), as
    torch's ``set_autocast_dtype``; torch's TypeError for a non-dtype.

    Example:
        >>> mg.set_autocast_dtype("cpu", mg.float16); mg.get_autocast_dtype("cpu")
    """
    check_device_type("set_autocast_dtype", device_type)
    _state["dtype"][device_type] = _check_dtype("set_autocast_dtype", dtype, 2)


def autocast_increment_nesting():
    """Add one to the count of autocast blocks open, and return it (torch's, which every
    ``autocast`` block also does on entry)."""
    _state["nesting"] += 1
    return _state["nesting"]


def autocast_decrement_nesting():
    """Take one from the count of autocast blocks open, and return it (torch's; it may go
    below zero, as torch's)."""
    _state["nesting"] -= 1
    return _state["nesting"]


def clear_autocast_cache():
    """Empty autocast's cache of cast weights: there is none here (nothing is cast), so this
    does nothing, as torch's does with an empty cache."""


def set_autocast_cache_enabled(enabled):
    """Whether autocast would cache cast weights inside a block (torch's flag, read back by
    ``is_autocast_cache_enabled``; nothing is cached here)."""
    _state["cache"] = _check_bool("set_autocast_cache_enabled", enabled, 1)


def is_autocast_cache_enabled():
    """torch's autocast cache flag: True unless ``set_autocast_cache_enabled(False)``."""
    return _state["cache"]


def _deprecated_form(name, device, kind):
    """torch's deprecated per-device forms (``is_autocast_cpu_enabled``, ...): each warns
    torch's deprecation and calls the form taking ``device``."""
    if kind == "is":
        def form():
            _deprecation(f"torch.{name}()", f"torch.is_autocast_enabled('{device}')")
            return is_autocast_enabled(device)
    elif kind == "get":
        def form():
            _deprecation(f"torch.{name}()", f"torch.get_autocast_dtype('{device}')")
            return get_autocast_dtype(device)
    elif kind == "set_enabled":
        def form(enabled):
            _deprecation(f"torch.{name}(enabled)",
                         f"torch.set_autocast_enabled('{device}', enabled)")
            _state["enabled"][device] = _check_bool(name, enabled, 1)
    else:
        def form(dtype):
            _deprecation(f"torch.{name}(dtype)", f"torch.set_autocast_dtype('{device}', dtype)")
            _state["dtype"][device] = _check_dtype(name, dtype, 1)
    form.__name__ = form.__qualname__ = name
    form.__doc__ = (f"Deprecated, with torch's DeprecationWarning: the "
                    f"{kind.replace('_', ' ')} form of autocast on {device!r}.")
    return form


def _deprecation(old, new):
    warnings.warn(f"{old} is deprecated. Please use {new} instead.", DeprecationWarning,
                  stacklevel=3)


_FORMS = {f"{kind_name.format(short)}": (device, kind)
          for short, device in (("cpu", "cpu"), ("gpu", "cuda"), ("ipu", "ipu"), ("xla", "xla"))
          for kind_name, kind in (("is_autocast_{}_enabled", "is"),
                                  ("get_autocast_{}_dtype", "get"),
                                  ("set_autocast_{}_enabled", "set_enabled"),
                                  ("set_autocast_{}_dtype", "set_dtype"))
          if (short, kind) not in (("gpu", "is"), ("gpu", "set_enabled"))}   # not torch's
for _name, (_device, _kind) in _FORMS.items():
    globals()[_name] = _deprecated_form(_name, _device, _kind)
AUTOCAST_FUNCTIONS = ("set_autocast_enabled", "set_autocast_dtype", "autocast_increment_nesting",
                      "autocast_decrement_nesting", "clear_autocast_cache",
                      "set_autocast_cache_enabled", "is_autocast_cache_enabled") + tuple(_FORMS)


class GradScaler:
    """Loss scaling (``torch.amp.GradScaler``), as torch's: ``scale(loss)`` multiplies by the
    scale (a float32 0-d tensor, so a float16 loss comes out float32), ``unscale_`` divides
    the gradients in place and looks for infs and NaNs, ``step`` skips the optimizer's step
    when it found one, ``update`` backs the scale off after a skipped step and grows it
    after ``growth_interval`` good ones. Enabled as torch's: on "cpu", and on "cuda" where a
    GPU is seen (without one, torch's warning, and it passes everything through, as a
    disabled one: ``scale`` returns its input, ``get_scale()`` is 1.0).

    Example:
        >>> scaler = mg.amp.GradScaler("cpu")
        >>> scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device, self._enabled = device, enabled
        if device == "cuda" and enabled and not backend.cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale, self._scale = init_scale, None
            self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker, self._growth_tracker = 0, None
            self._per_optimizer_states = {}

    def is_enabled(self):
        """Whether this scaler scales (see the class docstring)."""
        return self._enabled

    def _state(self, optimizer):
        return self._per_optimizer_states.setdefault(id(optimizer),
                                                     {"stage": "ready", "found_inf": None})

    def _check(self, fn):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {fn} but _scale is None.  " + fix)

    def scale(self, outputs):
        """``outputs`` (a tensor, or lists and tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(output) for output in outputs)
        if not hasattr(outputs, "new_full"):
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        if self._scale is None:
            self._scale = np.float32(self._init_scale)
            self._growth_tracker = self._init_growth_tracker
        return outputs * outputs.new_full((), float(self._scale), dtype=np.float32)

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale, in place, once per step; records
        whether any holds an inf or a NaN. A float16 gradient is torch's ValueError."""
        if not self._enabled:
            return
        self._check("unscale_")
        state = self._state(optimizer)
        if state["stage"] == "unscaled":
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] == "stepped":
            raise RuntimeError("unscale_() is being called after step().")
        inverse = float(np.float32(1.0 / np.float64(self._scale)))   # torch's: in float64
        grads = [p.grad for group in optimizer.param_groups for p in group["params"]
                 if p.grad is not None]
        for grad in grads:
            if grad.dtype == np.float16:
                raise ValueError("Attempting to unscale FP16 gradients.")
        found = False
        for grad in grads:
            found = found or not bool(grad.isfinite().all())
            grad.data.mul_(inverse)
        state["found_inf"], state["stage"] = found, "unscaled"

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` with the gradients unscaled first (unless
        ``unscale_`` was called), skipped when they hold an inf or a NaN; its return value,
        or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check("step")
        state = self._state(optimizer)
        if state["stage"] == "stepped":
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == "ready":
            self.unscale_(optimizer)
        retval = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = "stepped"
        return retval

    def update(self, new_scale=None):
        """The next scale: ``new_scale`` if given, else the last one times ``backoff_factor``
        if a step was skipped, times ``growth_factor`` after ``growth_interval`` good steps
        in a row (where the product stays finite)."""
        if not self._enabled:
            return
        self._check("update")
        if new_scale is not None:
            if not isinstance(new_scale, float):
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor "
                          "or torch.FloatTensor with requires_grad=False.")
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                new_scale = new_scale.item()
            self._scale = np.float32(new_scale)
        else:
            found = [state["found_inf"] for state in self._per_optimizer_states.values()
                     if state["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale = np.float32(float(self._scale) * self._backoff_factor)
                self._growth_tracker = 0
            elif self._growth_tracker + 1 == self._growth_interval:
                grown = np.float32(float(self._scale) * self._growth_factor)
                if np.isfinite(grown):
                    self._scale = grown
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
        self._per_optimizer_states = {}

    def get_scale(self):
        """The scale, a Python float: ``init_scale`` before the first ``scale``; 1.0 when
        disabled."""
        if not self._enabled:
            return 1.0
        return float(self._init_scale if self._scale is None else self._scale)

    def get_growth_factor(self):
        """The factor the scale grows by after ``growth_interval`` good steps."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Set the factor the scale grows by (torch's, unchecked)."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """The factor the scale is multiplied by after a skipped step."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Set the factor the scale backs off by (torch's, unchecked)."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """The number of good steps after which the scale grows."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Set the number of good steps after which the scale grows."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def state_dict(self):
        """torch's five entries (scale, the factors, the interval, the growth tracker); {}
        when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """The state ``state_dict`` saved; nothing when disabled; an empty dict is torch's
        RuntimeError."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"GradScaler.load_state_dict: expected a dict, got "
                            f"{type(state_dict).__name__}")
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = np.float32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = int(state_dict["_growth_tracker"])
