"""``mg.jit``, ``torch.jit`` without a compiler: ``script``, ``trace`` and the decorators
return what they are given, unchanged, as ``mg.compile`` does (``torch_misc.py``), so a model
scripted or traced for speed runs eagerly; ``is_scripting()`` and ``is_tracing()`` are False,
as in torch's eager code; ``Final`` is ``typing.Final``; ``fork`` runs its function at once,
as torch's does outside TorchScript; ``isinstance`` checks containers element by element, as
torch's eager one. ``save`` and ``load`` of TorchScript archives are refused (a
NotImplementedError, a RuntimeError): there is no compiled program to write or read;
``mg.save(model.state_dict(), f)`` keeps the weights. The rest of ``torch.jit`` (``MISSING``:
the compilation unit, the fusers, the flatbuffer files) is an AttributeError that says so."""

import builtins
import types
import typing
import warnings

from .nn.module import Module

__all__ = ["Attribute", "Final", "Future", "RecursiveScriptModule", "ScriptFunction",
           "ScriptModule", "TracerWarning", "annotate", "export", "fork", "freeze", "ignore",
           "interface", "is_scripting", "is_tracing", "isinstance", "load",
           "optimize_for_inference", "save", "script", "script_if_tracing", "script_method",
           "trace", "trace_module", "unused", "wait"]

Final = typing.Final

# torch.jit's names that need the TorchScript compiler, its graphs or its files
MISSING = ("CompilationUnit", "Error", "ONNXTracedModule", "RecursiveScriptClass",
           "ScriptWarning", "TopLevelTracedModule", "TracedModule", "TracingCheckError",
           "enable_onednn_fusion", "export_opnames", "fuser", "jit_module_from_flatbuffer",
           "last_executed_optimized_graph", "onednn_fusion_enabled", "optimized_execution",
           "run_frozen_optimizations", "save_jit_module_to_flatbuffer", "set_fusion_strategy",
           "strict_fusion")


def __getattr__(name):
    if name in MISSING:
        raise AttributeError(f"microgradnorm.jit.{name} (torch.jit.{name}) is not "
                             "implemented: it belongs to the TorchScript compiler, which "
                             "microgradnorm does not have (its models run eagerly)")
    raise AttributeError(f"module 'microgradnorm.jit' has no attribute {name!r}")


class ScriptModule(Module):
    """``torch.jit.ScriptModule``, a Module: a class written as one (``class
    RWKV_RNN(torch.jit.ScriptModule)``, its methods marked ``@torch.jit.script_method``) is an
    ordinary Module here, its methods run eagerly, as torch runs it with its compiler off
    (``PYTORCH_JIT=0``). ``script`` returns a Module as it is, so a scripted one is not one."""


class RecursiveScriptModule(ScriptModule):
    """``torch.jit.RecursiveScriptModule`` (what torch's ``script`` makes of a Module), for
    ``isinstance`` checks: nothing here is one."""


class ScriptFunction:
    """``torch.jit.ScriptFunction``, for ``isinstance`` checks: nothing here is one."""


class TracerWarning(Warning):
    """``torch.jit.TracerWarning``, for warning filters: nothing here traces, so none is
    raised."""


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


def script_method(fn):
    """``fn`` itself (``torch.jit.script_method``, as torch gives it with its compiler
    off)."""
    return fn


def Attribute(value, type):
    """``value`` (``torch.jit.Attribute(value, type)``, the type of a ScriptModule's attribute
    for the compiler): torch makes a ``(value, type)`` pair that its ScriptModule unwraps on
    assignment; with no ScriptModule here to unwrap it, the value itself, as torch gives it
    with its compiler off (``PYTORCH_JIT=0``)."""
    return value


# the container types jit.isinstance refuses without their element types, as torch's
BARE_CONTAINERS = ((typing.List, "List"), (list, "list"), (typing.Tuple, "Tuple"),
                   (tuple, "tuple"), (typing.Dict, "Dict"), (dict, "dict"),
                   (typing.Optional, "Optional"))


def isinstance(obj, target_type):
    """Whether ``obj`` is a ``target_type`` (``torch.jit.isinstance``, as torch's eager one):
    ``builtins.isinstance`` for a type or a tuple of types; a container type, ``List[T]``,
    ``Dict[K, V]``, ``Tuple[...]``, ``Optional[T]`` (a Union), element by element (an
    empty container warns, as torch's: its element type cannot be seen).

    Example:
        >>> mg.jit.isinstance([mg.ones(1)], typing.List[mg.Tensor])
        True
    """
    if builtins.isinstance(target_type, tuple):
        return any(isinstance(obj, t) for t in target_type)
    if builtins.isinstance(target_type, (list, dict, set)):
        raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or "
                           "a tuple of types")
    for bare, name in BARE_CONTAINERS:
        if target_type is bare and name in ("Dict", "dict"):
            raise RuntimeError(f"Attempted to use {name} without contained types. Please add "
                               f"contained type, e.g. {name}[int, int]")
        if target_type is bare:
            raise RuntimeError(f"Attempted to use {name} without a contained type. Please add "
                               f"a contained type, e.g. {name}[int]")
    origin, args = typing.get_origin(target_type), typing.get_args(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union or origin is types.UnionType:       # Optional[T] too
        return obj is None or any(isinstance(obj, t) for t in args)
    if origin not in (list, dict, tuple) or not builtins.isinstance(obj, origin):
        return False
    if not obj:
        warnings.warn("The inner type of a container is lost when calling "
                      "torch.jit.isinstance in eager mode. For example, List[int] would "
                      "become list and therefore falsely return True for List[float] or "
                      "List[str].", stacklevel=2)
    if origin is list:
        return all(isinstance(item, args[0]) for item in obj)
    if origin is dict:
        return all(isinstance(key, args[0]) and isinstance(value, args[1])
                   for key, value in obj.items())
    return len(obj) == len(args) and all(isinstance(item, t) for item, t in zip(obj, args))


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
