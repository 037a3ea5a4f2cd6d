"""``mg.amp`` (also ``mg.cuda.amp``): ``autocast`` and ``GradScaler`` with torch's names, as
torch runs them where they are disabled — which is what they are here. Mixed-precision
casting is not implemented (ops run in their inputs' dtypes; cast the model to float16 or
bfloat16 to compute in them), so:

* ``autocast(...)`` is a context manager and decorator that changes nothing; enabled, it
  warns once, as torch's does on a machine without the device;
* ``GradScaler(...)`` passes through: ``scale(loss)`` is the loss, ``step(optimizer)`` is
  ``optimizer.step()``, ``update()`` does nothing, ``get_scale()`` is 1.0."""

import functools

from . import backend

__all__ = ["GradScaler", "autocast"]

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
        if self.enabled:
            _warn_once("autocast")
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def within(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return within


class GradScaler:
    """Loss scaling for float16 training (``torch.amp.GradScaler``), passing through here:
    with no float16 autocast there are no underflowing gradients to rescue.

    Example:
        >>> scaler = mg.amp.GradScaler(enabled=False)
        >>> scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self.device = device
        self._enabled = bool(enabled)
        if self._enabled:
            _warn_once("GradScaler")

    def is_enabled(self):
        """False: loss scaling is not implemented here."""
        return False

    def scale(self, outputs):
        """``outputs`` unchanged (a loss, or a list of them)."""
        return outputs

    def unscale_(self, optimizer):
        """Nothing to unscale."""

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)``."""
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Nothing to update."""

    def get_scale(self):
        """1.0, torch's answer for a disabled scaler."""
        return 1.0

    def state_dict(self):
        """{}, as a disabled scaler's."""
        return {}

    def load_state_dict(self, state_dict):
        """Accepts the dict a scaler saved; there is nothing to restore."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"GradScaler.load_state_dict: expected a dict, got "
                            f"{type(state_dict).__name__}")
