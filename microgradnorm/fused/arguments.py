"""What every twin's public entry checks first: its tensors are floating point, and
``impl`` is "fused", "composite" or None, this thread's choice (``norm_impl``). One wording
everywhere: the function, the argument, expected and got."""

import threading
import warnings

from ..dtypes import NotFloatingError
from ..tensor import Tensor, is_floating

IMPLS = ("fused", "composite")

__all__ = ["IMPLS", "NotATensorError", "RankError", "check_impl", "check_tensor",
           "get_norm_impl", "implicit_dim", "norm_impl", "resolve_impl"]


class NotATensorError(TypeError, AttributeError):
    """Something other than a Tensor (or an array, where one is taken) given as an input:
    torch's TypeError where its C function reads the argument, its AttributeError
    (``'list' object has no attribute 'dim'``) where its Python code does; both catch this."""


class RankError(RuntimeError, ValueError, IndexError):
    """An input with too few dims (a 0-d one where a class or feature dim is read): torch's
    IndexError where its kernel reads the missing dim, its RuntimeError where it checks the
    rank, a ValueError too."""


def implicit_dim(fn, ndim, stacklevel=3):
    """PyTorch's legacy dim of a softmax called without one (0 for 0-, 1- and 3-d inputs,
    else 1), with its deprecation warning."""
    warnings.warn(f"Implicit dimension choice for {fn} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def check_tensor(fn, name, value):
    """``value`` is a floating-point Tensor: another dtype is torch's NotImplementedError (its
    kernels have none for it), a TypeError too (``dtypes.NotFloatingError``)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}: {name} must be a microgradnorm Tensor, "
                        f"got {type(value).__name__}")
    if not is_floating(value.dtype):
        raise NotFloatingError(f"{fn}: {name} must be a floating-point tensor (float16, "
                               f"bfloat16, float32 or float64), got dtype {value.dtype}")


def check_impl(fn, impl):
    """impl is "fused", "composite" or None (the thread's default, ``norm_impl``)."""
    if impl is not None and impl not in IMPLS:
        raise ValueError(f"{fn}: impl must be one of {IMPLS}, got {impl!r} (or None: "
                         "the thread's default, mg.norm_impl)")


class _ImplState(threading.local):
    # per thread, as grad mode: the impl of a norm call made without impl=
    def __init__(self):
        self.impl, self.blocks = "fused", 0


_impl_state = _ImplState()


def get_norm_impl():
    """The impl of a norm called without ``impl=`` in this thread: "fused" outside any
    ``norm_impl`` block."""
    return _impl_state.impl


class norm_impl:
    """Run every norm called without ``impl=`` (``F.layer_norm`` in a user's own module
    included) as ``impl`` in this thread, until the block ends; ``Module.set_impl`` runs
    each forward inside one. An explicit ``impl=`` that differs wins and warns.

    Example:
        >>> with mg.norm_impl("composite"):
        ...     y = F.layer_norm(x, (8,))              # the graph of primitives
    """

    def __init__(self, impl):
        if impl not in IMPLS:
            raise ValueError(f"norm_impl: impl must be one of {IMPLS}, got {impl!r}")
        self.impl = impl

    def __enter__(self):
        self.previous = _impl_state.impl
        _impl_state.impl = self.impl
        _impl_state.blocks += 1
        return self

    def __exit__(self, *exc):
        _impl_state.impl = self.previous
        _impl_state.blocks -= 1
        return False


def resolve_impl(fn, impl):
    """``impl`` checked, or the thread's default for None; an explicit impl that differs
    from an enclosing ``norm_impl`` block's warns (that block's choice cannot reach it)."""
    if impl is None:                    # the usual call: no check to make
        return _impl_state.impl
    check_impl(fn, impl)
    if _impl_state.blocks and impl != _impl_state.impl:
        warnings.warn(f"{fn}: impl={impl!r} given explicitly runs {impl!r} inside a "
                      f"norm_impl({_impl_state.impl!r}) block (or a module's set_impl); "
                      f"leave impl out (None) to follow the block", UserWarning, stacklevel=3)
    return impl
