"""``torch.overrides``: the helpers a function calls to hand itself to the
``__torch_function__`` of its arguments (``has_torch_function``, ``handle_torch_function``,
``is_tensor_like``, ...), and the ``DisableTorchFunction`` blocks.

This library's own functions do not dispatch through ``__torch_function__`` (a Tensor
subclass gets its class kept by ``as_subclass`` and the graph's ops, not by a protocol), so
these serve code that dispatches itself, as torch's do::

    def scaled(x, k):
        if has_torch_function_unary(x):
            return handle_torch_function(scaled, (x,), x, k)
        return x * k

``get_overridable_functions`` and ``get_ignored_functions`` describe this library: its
functions, none of which consults the protocol, so the first is empty."""

import collections
import inspect
import sys
import warnings

from .tensor import Tensor

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "get_ignored_functions",
           "get_overridable_functions", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like"]

_disabled = [0]       # DisableTorchFunction(Subclass) blocks open


class DisableTorchFunctionSubclass:
    """A block inside which ``has_torch_function`` answers False for every argument, so a
    function that dispatches itself runs its own body (torch's context manager of the same
    name, which an ``__torch_function__`` opens to call the plain function).

    Example:
        >>> with mg.DisableTorchFunctionSubclass():
        ...     mg.overrides.has_torch_function((obj,))        # False
    """

    def __enter__(self):
        _disabled[0] += 1
        return self

    def __exit__(self, *exc):
        _disabled[0] -= 1
        return False


class DisableTorchFunction(DisableTorchFunctionSubclass):
    """As ``DisableTorchFunctionSubclass`` (torch's also turns off the ``__torch_function__``
    modes, which nothing here has)."""


def _overloaded(args):
    """The distinct types of ``args`` that define ``__torch_function__``, a subclass before
    its base (torch's order), and one argument of each."""
    types, found = [], []
    for arg in args:
        kind = type(arg)
        if kind in types or not hasattr(kind, "__torch_function__"):
            continue
        place = next((i for i, t in enumerate(types) if issubclass(kind, t)), len(types))
        types.insert(place, kind)
        found.insert(place, arg)
    return types, found


def has_torch_function(relevant_args):
    """True when an element of ``relevant_args`` (a tuple) has a type defining
    ``__torch_function__`` and no ``DisableTorchFunction`` block is open (torch's; a plain
    ``mg.Tensor`` defines none).

    Args:
        relevant_args (tuple): the arguments the caller would hand over.
    """
    return not _disabled[0] and bool(_overloaded(relevant_args)[0])


def has_torch_function_unary(obj):
    """``has_torch_function((obj,))``, torch's fast form for one argument."""
    return has_torch_function((obj,))


def has_torch_function_variadic(*args):
    """``has_torch_function(args)``, torch's fast form taking the arguments themselves."""
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call ``__torch_function__(public_api, types, args, kwargs)`` of each overloading
    type among ``relevant_args`` (subclasses first), returning the first answer that is not
    ``NotImplemented``, as torch's; none answering is torch's TypeError. A
    ``__torch_function__`` written as a plain method gets torch's DeprecationWarning.

    Args:
        public_api (callable): the function being overridden, passed on as ``func``.
        relevant_args (iterable): the arguments to look for overloads in.
        *args, **kwargs: the call's arguments, passed on.
    """
    types, found = _overloaded(tuple(relevant_args))
    for arg in found:
        method = inspect.getattr_static(type(arg), "__torch_function__")
        if not isinstance(method, (classmethod, staticmethod)):
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated "
                          "and will be an error in future, please define it as a classmethod.",
                          DeprecationWarning, stacklevel=2)
        result = arg.__torch_function__(public_api, tuple(types), args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {types}")


def is_tensor_like(inp):
    """True for a Tensor (or a Tensor class) and for anything whose type defines
    ``__torch_function__``, as torch's ``is_tensor_like``."""
    if isinstance(inp, type):
        return issubclass(inp, Tensor) or hasattr(inp, "__torch_function__")
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def get_ignored_functions():
    """The public functions of this library that a ``__torch_function__`` never sees: all
    of them (none dispatches through the protocol), as a set."""
    spaces = [sys.modules.get(__package__), sys.modules.get(__package__ + ".functional")]
    return {value for space in spaces if space is not None for name, value in
            vars(space).items() if not name.startswith("_") and inspect.isroutine(value)}


def get_overridable_functions():
    """The functions of each namespace that hand themselves to ``__torch_function__``: none
    here, so an empty mapping (torch's ``defaultdict(list)`` of namespace to functions)."""
    return collections.defaultdict(list)
