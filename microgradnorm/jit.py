"""``mg.jit``, ``torch.jit`` without a compiler: ``script``, ``trace`` and the decorators
return what they are given, unchanged, as ``mg.compile`` does (``torch_misc.py``), so a model
scripted or traced for speed runs eagerly; ``is_scripting()`` and ``is_tracing()`` are False,
as in torch's eager code; ``Final`` is ``typing.Final``; ``fork`` runs its function at once,
as torch's does outside TorchScript. ``save`` and ``load`` of TorchScript archives are
refused (a NotImplementedError, a RuntimeError): there is no compiled program to write or
read; ``mg.save(model.state_dict(), f)`` keeps the weights."""

import typing
import warnings

__all__ = ["Final", "Future", "ScriptFunction", "ScriptModule", "annotate", "export", "fork",
           "freeze", "ignore", "interface", "is_scripting", "is_tracing", "load",
           "optimize_for_inference", "save", "script", "script_if_tracing", "trace",
           "trace_module", "unused", "wait"]

Final = typing.Final


class ScriptModule:
    """``torch.jit.ScriptModule``, for ``isinstance`` checks: nothing here is one
    (``script`` returns the Module itself)."""


class ScriptFunction:
    """``torch.jit.ScriptFunction``, for ``isinstance`` checks: nothing here is one."""


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself (``torch.jit.script``): a function, method, Module or class runs
    eagerly; something that is none of these is a TypeError, as torch's."""
    if not callable(obj):
        raise TypeError(f"script: {type(obj)} is not a function, method, Module or class")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, **kwargs):
    """``func`` itself (``torch.jit.trace``), not run: the function or Module runs eagerly
    on every input, so no trace can be specialised to ``example_inputs``."""
    if not callable(func):
        raise TypeError(f"trace: {type(func)} is not a function or Module")
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-5, strict=True, **kwargs):
    """``mod`` itself (``torch.jit.trace_module``)."""
    return mod


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """``mod`` itself (``torch.jit.freeze``)."""
    return mod


def optimize_for_inference(mod, other_methods=None):
    """``mod`` itself (``torch.jit.optimize_for_inference``)."""
    return mod


def ignore(drop=False, **kwargs):
    """A decorator that leaves its function as it is (``torch.jit.ignore``), with or without
    arguments; ``ignore(True)`` warns as torch's (deprecated: ``unused``)."""
    if callable(drop):                       # @ignore
        return drop
    if drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the "
                      "function call on compilation. Use torch.jit.unused now.",
                      FutureWarning, stacklevel=2)
    return lambda fn: fn


def unused(fn):
    """``fn`` itself (``torch.jit.unused``)."""
    return fn


def export(fn):
    """``fn`` itself (``torch.jit.export``)."""
    return fn


def interface(obj):
    """``obj`` itself (``torch.jit.interface``)."""
    return obj


def script_if_tracing(fn):
    """``fn`` itself (``torch.jit.script_if_tracing``)."""
    return fn


def annotate(the_type, the_value):
    """``the_value`` (``torch.jit.annotate``: a type hint for the compiler)."""
    return the_value


def is_scripting():
    """False: no code here runs as TorchScript (``torch.jit.is_scripting``)."""
    return False


def is_tracing():
    """False: nothing here traces (``torch.jit.is_tracing``)."""
    return False


class Future:
    """The result of ``fork``, already there (``torch.jit.Future``)."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        """The function's result."""
        return self._value

    def done(self):
        """True: ``fork`` ran the function to the end."""
        return True


def fork(func, *args, **kwargs):
    """Run ``func(*args, **kwargs)`` now and return a ``Future`` of its result
    (``torch.jit.fork`` outside TorchScript, which runs synchronously too)."""
    return Future(func(*args, **kwargs))


def wait(future):
    """The result of a ``fork`` (``torch.jit.wait``)."""
    return future.wait()


def save(m, f, _extra_files=None):
    """Refused (``torch.jit.save`` writes a compiled TorchScript program): there is none
    here. Save the weights with ``mg.save(model.state_dict(), f)``."""
    raise NotImplementedError("jit.save: microgradnorm has no TorchScript, so a model "
                              "cannot be saved as a program; save its weights with "
                              "mg.save(model.state_dict(), f)")


def load(f, map_location=None, _extra_files=None):
    """Refused (``torch.jit.load`` reads a TorchScript program, which needs its
    interpreter). Load weights saved with ``mg.save`` with ``mg.load``."""
    raise NotImplementedError("jit.load: microgradnorm has no TorchScript interpreter, so a "
                              "TorchScript archive cannot be loaded; load weights saved "
                              "with mg.save with mg.load and model.load_state_dict")
