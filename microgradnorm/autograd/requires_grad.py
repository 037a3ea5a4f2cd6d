"""The rules of a tensor's ``requires_grad`` flag, as torch's: what ``t.requires_grad = flag``
and ``t.requires_grad_(flag)`` accept. The flag itself is the plain attribute
``_requires_grad``, which the engine and the ops read and write directly (a property in the
engine's loop would cost every read); ``Tensor.requires_grad`` is the public property over
it, whose setter checks here."""

from .. import dtypes
from .inference import refuse_requires_grad
from .inputs import RequiresGradError

__all__ = ["RequiresGradTypeError", "check_flag", "check_new_leaf", "requires_grad_", "set_flag"]


class RequiresGradTypeError(RuntimeError, TypeError):
    """``requires_grad`` assigned a value that is not a bool: torch's RuntimeError, and the
    TypeError Python code expects of a wrong type."""


def check_new_leaf(fn, dtype, requires_grad):
    """Raise the errors of a new leaf of ``dtype`` (the constructor's, the factories'; ``fn``
    starts them): ``requires_grad`` a bool, True for a floating or complex dtype only, and
    numeric data."""
    if not isinstance(requires_grad, bool):
        raise TypeError(f"{fn}: requires_grad must be True or False, got {requires_grad!r}")
    if not (dtypes.is_numeric(dtype) or dtypes.is_complex(dtype)):
        raise TypeError(f"{fn}: data must be numeric (float, int or bool), got dtype {dtype}")
    if requires_grad and not (dtypes.is_floating(dtype) or dtypes.is_complex(dtype)):
        raise RequiresGradError(f"{fn}: only floating-point tensors can require grad, got "
                                f"dtype {dtype}")


def check_flag(tensor, flag):
    """Raise torch's error unless ``tensor.requires_grad = flag`` is allowed: a bool, on a leaf
    (a tensor no recorded op made), True only for a floating or complex tensor and, outside
    ``inference_mode``, for no inference tensor; nothing is changed."""
    if flag.__class__ is not bool:
        raise RequiresGradTypeError(f"requires_grad must be a bool, got {_type_name(flag)}")
    if tensor.grad_fn is not None:
        hint = ("" if flag else " If you want to use a computed variable in a subgraph that "
                "doesn't require differentiation use var_no_grad = var.detach().")
        raise RuntimeError(f"you can only change requires_grad flags of leaf variables "
                           f"(this tensor was made by {tensor.grad_fn.name()}).{hint}")
    if flag and not (dtypes.is_floating(tensor.dtype) or dtypes.is_complex(tensor.dtype)):
        raise RequiresGradError(f"only Tensors of floating point and complex dtype can "
                                f"require gradients, got {tensor.dtype}")
    if flag:
        refuse_requires_grad(tensor)


def set_flag(tensor, flag):
    """``tensor.requires_grad = flag``, checked (``check_flag``)."""
    check_flag(tensor, flag)
    tensor._requires_grad = flag


def requires_grad_(tensor, flag):
    """``Tensor.requires_grad_(flag)``: the rules of ``check_flag``, except that ``True`` on a
    non-leaf (which requires grad already) is allowed and changes nothing, as torch's; a
    ``flag`` that is not a bool is torch's TypeError. Returns ``tensor``."""
    if flag.__class__ is not bool:          # (None or 0 would be stored as the flag)
        raise RequiresGradTypeError(f"requires_grad_(): argument 'requires_grad' must be "
                                    f"bool, not {_type_name(flag)}")
    if flag and tensor.grad_fn is not None:
        return tensor
    set_flag(tensor, flag)
    return tensor


def _type_name(value):
    # numpy.bool, not bool: NumPy's bool is refused too and must not read as Python's
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
