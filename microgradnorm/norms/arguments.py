"""The argument checks the norm families share: tensors like x, parameters of a shape,
eps, momentum, a normalized shape, and the whole check of a row norm (LayerNorm, RMSNorm and
their residual forms), fast for the usual call. Each family's own checks live in its file;
the checks every twin makes (a floating-point tensor, ``impl``) come from
``fused.arguments``, re-exported here. One wording: the function, the argument, expected
and got."""

import numbers

import numpy as np

from .. import backend, dtypes
from ..autograd import is_grad_enabled
from ..autograd.inference import refuse_write
from ..dtypes import float_of
from ..fused.arguments import (IMPLS, check_impl, check_tensor, get_norm_impl, norm_impl,
                               resolve_impl)
from ..ops.base import ShapeError
from ..tensor import Size, Tensor, is_floating

__all__ = ["COMMON_FLOATS", "IMPLS", "BatchNormRankError", "ChannelNormError", "GroupCountError",
           "MixedDtypeError", "NormalizedShapeError", "NormalizedShapeTypeError",
           "check_eps", "check_impl", "check_like",
           "check_momentum", "check_param", "check_row_norm", "check_tensor", "get_norm_impl",
           "machine_eps", "norm_impl", "normalized_shape", "resolve_eps", "resolve_impl"]


class ChannelNormError(RuntimeError, ValueError):
    """A call the channel norms (BatchNorm, GroupNorm, InstanceNorm) refuse where PyTorch
    raises a RuntimeError (a shape that does not fit the channels, missing running
    statistics); also a ValueError, as the other norms' bad shapes and values are."""


class GroupCountError(ChannelNormError, ZeroDivisionError):
    """``num_groups=0``: torch's ZeroDivisionError (its channel count modulo 0), and the
    RuntimeError and ValueError of the other bad group counts."""


class BatchNormRankError(ChannelNormError, IndexError):
    """A BatchNorm x of fewer than 2 dims: torch's IndexError in training (its batch-size
    check reads dim 1), its RuntimeError in eval."""


class ChannelCountError(TypeError, ValueError):
    """A channel or group count given as a float (or a bool torch divides): torch's
    ValueError where its divisibility check leaves a remainder, its allocation's TypeError
    where not; both catch this (Conv*, ConvTranspose*, GroupNorm)."""


class NormalizedShapeError(RuntimeError, ValueError):
    """A LayerNorm/RMSNorm input whose trailing dims are not ``normalized_shape``: PyTorch's
    RuntimeError ("Given normalized_shape=..."), and a ValueError as the other bad shapes."""


class NormalizedShapeTypeError(NormalizedShapeError, TypeError):
    """A ``normalized_shape`` that is not ints (a float, a string, None, a bool, a 0-d
    Tensor): PyTorch's TypeError ("must be tuple of ints"), and a ``NormalizedShapeError``."""


def check_like(fn, name, value, x):
    """``value`` is a Tensor of x's shape, dtype and device."""
    check_tensor(fn, name, value)
    if value.shape != x.shape:          # torch's RuntimeError (x + residual), a ValueError
        raise ShapeError(f"{fn}: {name} must have the shape of x {x.shape}, got {value.shape}")
    _check_dtype_device(fn, name, value, x)


class MixedDtypeError(RuntimeError, TypeError):
    """A parameter or statistic whose dtype is not x's: PyTorch's RuntimeError ("mixed
    dtype"), and a TypeError (what this check raised first)."""


def _check_dtype_device(fn, name, value, x, dtype=None):
    dtype = x.dtype if dtype is None else dtype
    if value.dtype != dtype:
        dtype, got = dtypes.torch_dtype(dtype), dtypes.torch_dtype(value.dtype)  # as torch's
        hint = (f"; cast the model with model.to(dtype=\"{dtype.name}\") or the input with "
                f"x.astype(\"{got.name}\")" if name in ("weight", "bias") else "")
        raise MixedDtypeError(f"{fn}: {name} must have x's dtype {dtype}, got {got}{hint}")
    if value.device != x.device:
        raise ValueError(f"{fn}: {name} must be on x's device {x.device!r}, "
                         f"got {value.device!r}")


def check_param(fn, name, param, shape, x, dtype=None):
    """A weight or bias: None, or a Tensor of ``shape`` with x's device and x's dtype (or
    ``dtype`` where a mixed precision is allowed)."""
    if param is None:
        return
    check_tensor(fn, name, param)
    if param.shape != shape:            # torch's RuntimeError, a ValueError
        raise ShapeError(f"{fn}: {name} must have shape {shape}, got {param.shape}")
    _check_dtype_device(fn, name, param, x, dtype)


def check_eps(fn, eps):
    """eps is a real number (a string is a TypeError). Any value is taken, as PyTorch takes
    it: a negative eps gives NaN wherever var + eps < 0, NaN gives NaN, inf gives 0 (or NaN
    beside an infinite x)."""
    float_of(eps, fn, "eps")


def check_momentum(fn, momentum, allow_none=False):
    """momentum is a real number (or None where the caller allows it: the cumulative
    average). Any value is taken, as PyTorch takes it: outside [0, 1] the running statistics
    extrapolate, ``(1 - momentum)·running + momentum·batch`` all the same."""
    if momentum is None and allow_none:
        return
    float_of(momentum, fn, "momentum")


def normalized_shape(fn, shape):
    """``shape`` (an int or a non-empty sequence of ints >= 0; an int may be a 0-d integer
    Tensor inside the sequence, as torch takes ``[tensor(5)]``) as a tuple of ints; else a
    ``NormalizedShapeError`` (torch's RuntimeError, "at least 1-dimensional"), a
    ``NormalizedShapeTypeError`` where it is not ints (torch's TypeError)."""
    given = shape
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(_index(n) for n in shape)
    except TypeError:
        shape = None
    if not shape or min(shape) < 0:
        error = NormalizedShapeError if shape is not None else NormalizedShapeTypeError
        raise error(f"{fn}: normalized_shape must be a non-negative int or a non-empty tuple "
                    f"of non-negative ints, got {given!r}")
    return shape


def _index(n):
    """One entry of a normalized shape as an int: ints and 0-d integer Tensors, not bools
    (TypeError otherwise, as torch's)."""
    n = dtypes.index_of(n)                      # a 0-d integer Tensor: its int
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
        raise TypeError(f"a size must be an int, got {type(n).__name__}")
    return int(n)


def check_row_norm(fn, x, shape, eps, impl, weight_dtype=None, residual=None, **params):
    """Checks of LayerNorm/RMSNorm and their residual forms; returns normalized_shape as a
    tuple. ``params``: weight and bias, in x's dtype (or ``weight_dtype`` for the weight)."""
    if _is_usual_row_norm(x, shape, eps, impl, weight_dtype, residual, params):
        return (shape,) if type(shape) is int else tuple(shape)     # a Size: its tuple
    check_tensor(fn, "x", x)
    shape = normalized_shape(fn, shape)
    trailing = x.shape[max(x.ndim - len(shape), 0):]
    if trailing != shape:
        raise NormalizedShapeError(
            f"{fn}: normalized_shape {shape} must equal the trailing dims of x; x has shape "
            f"{x.shape}, expected (*, {', '.join(map(str, shape))})")
    for name, param in params.items():
        check_param(fn, name, param, shape, x, weight_dtype if name == "weight" else None)
    check_eps(fn, eps)
    check_impl(fn, impl)
    if residual is not None:
        check_like(fn, "residual", residual, x)
    return shape


def _is_usual_row_norm(x, shape, eps, impl, weight_dtype, residual, params):
    """True for the usual, valid call (Tensors like x in a common float dtype, a shape of
    Python ints, a float eps), checked without a call per argument: a norm on a GPU is
    host-bound (docs/gpu.md, "Host cost"). ``check_row_norm`` checks the others one by one."""
    if type(x) is not Tensor or x._array.dtype not in COMMON_FLOATS:
        return False
    data = x._array
    shape = (shape,) if type(shape) is int else shape
    if type(shape) is Size:         # ``weight.shape``, as nanoGPT's LayerNorm passes it: its
        shape = tuple(shape)        # tuple, compared without Size's Python-level __eq__
    if type(shape) is not tuple or not shape:
        return False
    for n in shape:                 # a loop, not set(map(type, shape)): a third faster
        if type(n) is not int:
            return False
    if data.shape[-len(shape):] != shape or type(eps) is not float or impl not in IMPLS:
        return False
    if residual is not None and not (type(residual) is Tensor
                                     and residual._array.shape == data.shape
                                     and residual._array.dtype == data.dtype
                                     and type(residual._array) is type(data)):
        return False
    for name in params:
        param = params[name]
        dtype = weight_dtype if name == "weight" and weight_dtype is not None else data.dtype
        if param is not None and not ((type(param) is Tensor or isinstance(param, Tensor))
                                      and param._array.shape == shape
                                      and param._array.dtype == dtype
                                      and type(param._array) is type(data)):
            return False
    return True


# the floating dtypes a norm computes in: float16, bfloat16 (with ml_dtypes), float32, float64
COMMON_FLOATS = {np.dtype(t) for t in ("float16", "float32", "float64")} | (
    {np.dtype(dtypes.bfloat16)} if dtypes.bfloat16 is not None else set())

# {dtype: machine_eps(dtype)} of the common dtypes: ``resolve_eps``'s table, which the
# RMSNorm entries' hot path reads without a call
MACHINE_EPS = {}


def resolve_eps(x, eps):
    """``eps``, or for None PyTorch's default: ``machine_eps`` of the dtype of x (a Tensor
    or an array), from ``MACHINE_EPS`` for the common dtypes; None still beside an x that
    is not floating, which the checks refuse."""
    if eps is not None:
        return eps
    array = x._array if isinstance(x, Tensor) else x
    if not (isinstance(array, np.ndarray) or backend.is_cupy_array(array)):
        return None
    if array.dtype in MACHINE_EPS:
        return MACHINE_EPS[array.dtype]
    return machine_eps(array.dtype) if is_floating(array.dtype) else None


def machine_eps(dtype):
    """PyTorch's eps=None of a norm of x of ``dtype``: the machine epsilon of the dtype its
    statistics are computed in, float32 for float16 and bfloat16 (1.19e-7), else x's own
    (float64: 2.2e-16); torch takes its kernels' accumulation type's."""
    return float(dtypes.finfo(dtypes.accumulation_dtype(dtype)).eps)


def running_stat(fn, name, stat, x, updates, what_updates, shape_error=ChannelNormError):
    """(array, owning Tensor or None) for a running statistic of a channel norm, checked
    with the rules BatchNorm and InstanceNorm share: a Tensor that does not require grad (it
    is state, not an input: torch's RuntimeError) or an array, of shape (C,) for x (N, C,
    ...), floating, writeable when ``updates`` (``what_updates`` says why), on x's device.
    Each family adds its dtype rule."""
    if stat is None:
        return None, None
    owner = stat if isinstance(stat, Tensor) else None
    if owner is not None and owner.requires_grad and is_grad_enabled():
        raise RuntimeError(f"{fn}: {name} requires grad, but {fn} is not differentiable "
                           f"with respect to it; pass {name}.detach()")
    array = stat._array if owner is not None else stat
    if not (isinstance(array, np.ndarray) or backend.is_cupy_array(array)):
        raise TypeError(f"{fn}: {name} must be a Tensor or an array, got "
                        f"{type(stat).__name__}")
    if tuple(array.shape) != x.shape[1:2]:
        raise shape_error(f"{fn}: {name} must have shape {x.shape[1:2]}, got "
                          f"{tuple(array.shape)} (one value per channel of x {x.shape})")
    if not is_floating(array.dtype):    # torch's RuntimeError ("mixed dtype"), a TypeError
        raise MixedDtypeError(f"{fn}: {name} must be floating point, got dtype {array.dtype}")
    if updates and owner is not None:   # an inference tensor outside its mode: unwritten
        refuse_write(owner)
    if updates and not getattr(getattr(array, "flags", None), "writeable", True):
        raise ValueError(f"{fn}: {name} is read-only, but {what_updates} updates it in "
                         "place; pass a writeable array (np.array(...) makes one)")
    if backend.device_of(array) != x.device:
        raise ValueError(f"{fn}: {name} must be on x's device {x.device!r}")
    return array, owner


MACHINE_EPS.update({dtype: machine_eps(dtype) for dtype in COMMON_FLOATS})
