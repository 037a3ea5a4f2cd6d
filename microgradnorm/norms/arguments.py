"""Every argument check of the norms, in one place: ``F`` checks its Tensors here, and the
nn modules and the seed-style layers their constructor options (the seed layers check
their own arrays), with one wording naming the function, the argument, expected and got."""

import math
import numbers
import threading
import warnings

import numpy as np

from .. import backend, dtypes
from ..autograd import is_grad_enabled
from ..dtypes import check_number, is_half
from ..kernels import CASTINGS
from ..ops.base import constant
from ..tensor import Tensor, is_floating

IMPLS = ("fused", "composite")

__all__ = ["CASTINGS", "IMPLS", "check_batch_norm", "check_eps", "check_impl", "check_like",
           "check_momentum", "check_param", "check_rms_options", "check_row_norm",
           "check_tensor", "check_attention", "default_eps", "get_norm_impl", "norm_impl",
           "normalized_shape", "resolve_impl"]


def check_tensor(fn, name, value):
    """``value`` is a floating-point Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}: {name} must be a microgradnorm Tensor, "
                        f"got {type(value).__name__}")
    if not is_floating(value.dtype):
        raise TypeError(f"{fn}: {name} must be a floating-point tensor (float16, bfloat16, "
                        f"float32 or float64), got dtype {value.dtype}")


def check_like(fn, name, value, x):
    """``value`` is a Tensor of x's shape, dtype and device."""
    check_tensor(fn, name, value)
    if value.shape != x.shape:
        raise ValueError(f"{fn}: {name} must have the shape of x {x.shape}, got {value.shape}")
    _check_dtype_device(fn, name, value, x)


def _check_dtype_device(fn, name, value, x, dtype=None):
    dtype = x.dtype if dtype is None else dtype
    if value.dtype != dtype:
        hint = (f"; cast the model with model.to(dtype=\"{dtype}\") or the input with "
                f"x.astype(\"{value.dtype}\")" if name in ("weight", "bias") else "")
        raise TypeError(f"{fn}: {name} must have x's dtype {dtype}, got {value.dtype}{hint}")
    if value.device != x.device:
        raise ValueError(f"{fn}: {name} must be on x's device {x.device!r}, "
                         f"got {value.device!r}")


def check_param(fn, name, param, shape, x, dtype=None):
    """A weight or bias: None, or a Tensor of ``shape`` with x's device and x's dtype (or
    ``dtype`` where a mixed precision is allowed)."""
    if param is None:
        return
    check_tensor(fn, name, param)
    if param.shape != shape:
        raise ValueError(f"{fn}: {name} must have shape {shape}, got {param.shape}")
    _check_dtype_device(fn, name, param, x, dtype)


def check_eps(fn, eps):
    """eps is a number >= 0: NaN and negatives are refused, inf is taken as PyTorch does."""
    check_number(fn, "eps", eps)
    if not eps >= 0:
        raise ValueError(f"{fn}: eps must be a non-negative number, got {eps!r}")


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


def check_momentum(fn, momentum, allow_none=False):
    """momentum is a number in [0, 1] (or None where the caller allows it)."""
    if momentum is None and allow_none:
        return
    check_number(fn, "momentum", momentum)
    if not 0 <= momentum <= 1:
        none = " or None" if allow_none else ""
        raise ValueError(f"{fn}: momentum must be a number in [0, 1]{none}, got {momentum!r}")


def normalized_shape(fn, shape):
    """``shape`` (an int or a non-empty sequence of ints >= 0) as a tuple of ints."""
    given = shape
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        shape = None
    if (not shape or any(isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0
                         for n in shape)):
        raise ValueError(f"{fn}: normalized_shape must be a non-negative int or a non-empty "
                         f"tuple of non-negative ints, got {given!r}")
    return tuple(int(n) for n in shape)


def check_row_norm(fn, x, shape, eps, impl, weight_dtype=None, residual=None, **params):
    """Checks of LayerNorm/RMSNorm and their residual forms; returns normalized_shape as a
    tuple. ``params``: weight and bias, in x's dtype (or ``weight_dtype`` for the weight)."""
    if _is_usual_row_norm(x, shape, eps, impl, weight_dtype, residual, params):
        return (shape,) if type(shape) is int else shape
    check_tensor(fn, "x", x)
    shape = normalized_shape(fn, shape)
    trailing = x.shape[max(x.ndim - len(shape), 0):]
    if trailing != shape:
        raise ValueError(f"{fn}: normalized_shape {shape} must equal the trailing dims of x; "
                         f"x has shape {x.shape}, expected (*, {', '.join(map(str, shape))})")
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
    if type(x) is not Tensor or x._array.dtype not in _COMMON_FLOATS:
        return False
    data = x._array
    shape = (shape,) if type(shape) is int else shape
    if (type(shape) is not tuple or not shape or set(map(type, shape)) != {int}
            or data.shape[data.ndim - len(shape):] != shape or type(eps) is not float
            or not eps >= 0 or impl not in IMPLS):
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


_COMMON_FLOATS = {np.dtype(t) for t in ("float16", "float32", "float64")} | (
    {np.dtype(dtypes.bfloat16)} if dtypes.bfloat16 is not None else set())


def default_eps(x, eps):
    """``eps``, or for None x's machine epsilon (a non-floating x is refused later)."""
    if eps is None and isinstance(x, Tensor) and is_floating(x.dtype):
        return float(dtypes.finfo(x.dtype).eps)
    return eps


def check_rms_options(fn, offset, casting, has_weight):
    """RMSNorm's Gemma offset (finite, needs a weight) and casting mode."""
    if casting not in CASTINGS:
        raise ValueError(f"{fn}: casting must be one of {CASTINGS}, got {casting!r}")
    check_number(fn, "offset", offset)
    if not np.isfinite(offset):
        raise ValueError(f"{fn}: offset must be a finite number, got {offset!r}")
    if offset and not has_weight:
        raise ValueError(f"{fn}: offset {offset} needs a weight, y = x̂ · (offset + weight) "
                         "(a module needs elementwise_affine=True)")


def rms_weight_dtype(fn, x, weight, offset, casting):
    """``check_rms_options``, then the dtype RMSNorm's weight may have: x's (None), or
    float32 for float16/bfloat16 x in the "llama" and "gemma" modes (Hugging Face's mixed
    precision). One call for both: it is on every call's path."""
    # the usual call passes without a call (x - x == 0: finite); anything else is checked
    if type(offset) is not float or offset - offset != 0 or casting not in CASTINGS or (
            offset and weight is None):
        check_rms_options(fn, offset, casting, weight is not None)
    if (weight is None or type(weight) is not Tensor and not isinstance(weight, Tensor)
            or weight._array.dtype != np.float32
            or type(x) is not Tensor and not isinstance(x, Tensor)
            or x._array.dtype.itemsize > 2 or not is_half(x.dtype)):
        return None
    if casting == "none":
        raise TypeError(f"{fn}: a float32 weight with {x.dtype} x needs casting 'llama' or "
                        f"'gemma' (casting 'none' computes in x's dtype)")
    return weight.dtype


def check_batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps,
                     impl):
    """Every check of ``batch_norm``; returns [(array or None, owning Tensor or None)] for
    the running mean and variance, so a bad running_var cannot leave running_mean moved."""
    fn = "batch_norm"
    channels = (x.shape[1],)
    check_param(fn, "weight", weight, channels, x)
    check_param(fn, "bias", bias, channels, x)
    check_eps(fn, eps)
    check_impl(fn, impl)
    check_momentum(fn, momentum)
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"{fn}: training must be a bool, got {type(training).__name__}")
    if training and eps == 0:           # as torch: a constant channel would give 0 · inf
        raise ValueError(f"{fn}: eps must be positive during training, got {eps!r}")
    stats = [_running_stat(name, stat, channels, x, training)
             for name, stat in (("running_mean", running_mean), ("running_var", running_var))]
    if x.size and training and x.size // x.shape[1] < 2:
        raise ValueError(f"{fn}: training needs more than 1 value per channel to compute a "
                         f"variance, got x of shape {x.shape}")
    if x.size and not training and (running_mean is None or running_var is None):
        raise ValueError(f"{fn}: running_mean and running_var are required when "
                         "training=False")
    return stats


def _running_stat(name, stat, shape, x, training):
    """(array, owning Tensor or None) for a running statistic, checked: x's dtype (float32
    allowed for half-precision x; float32 beside float64 x would lose the update)."""
    if stat is None:
        return None, None
    owner = stat if isinstance(stat, Tensor) else None
    if owner is not None and owner.requires_grad and is_grad_enabled():
        # torch's error class: the statistics are state, updated in place, not an input
        raise RuntimeError(f"batch_norm: {name} requires grad, but batch_norm is not "
                           f"differentiable with respect to it; pass {name}.detach()")
    array = stat._array if owner is not None else stat
    if not (isinstance(array, np.ndarray) or backend.is_cupy_array(array)):
        raise TypeError(f"batch_norm: {name} must be a Tensor or an array, "
                        f"got {type(stat).__name__}")
    if tuple(array.shape) != shape:
        raise ValueError(f"batch_norm: {name} must have shape {shape}, got {tuple(array.shape)}")
    if not is_floating(array.dtype):
        raise TypeError(f"batch_norm: {name} must be floating point, got dtype {array.dtype}")
    if array.dtype != x.dtype and not (is_half(x.dtype) and array.dtype == np.float32):
        raise TypeError(f"batch_norm: {name} must have x's dtype {x.dtype} (or float32 for "
                        f"float16/bfloat16 x), got {array.dtype}")
    if training and not getattr(getattr(array, "flags", None), "writeable", True):
        raise ValueError(f"batch_norm: {name} is read-only, but training=True updates it in "
                         "place; pass a writeable array (np.array(...) makes one)")
    if backend.device_of(array) != x.device:
        raise ValueError(f"batch_norm: {name} must be on x's device {x.device!r}")
    return array, owner


def check_attention(fn, q, k, v, mask, dropout_p, is_causal, scale, enable_gqa, impl):
    """scaled_dot_product_attention's arguments; returns the mask as a Tensor (or None) and
    the scale as a float (1/√E by default)."""
    for name, t in (("query", q), ("key", k), ("value", v)):
        check_tensor(fn, name, t)
        if t.ndim < 2:
            raise ValueError(f"{fn}: {name} must have at least 2 dims (..., length, "
                             f"features), got shape {t.shape}")
        if t.dtype != q.dtype or t.device != q.device:
            raise TypeError(f"{fn}: {name} must have query's dtype {q.dtype} and device "
                            f"{q.device!r}, got {t.dtype} on {t.device!r}")
    if k.shape[-1] != q.shape[-1] or v.shape[-2] != k.shape[-2]:
        raise ValueError(f"{fn}: key must be (..., S, E) for query (..., L, E) and value "
                         f"(..., S, Ev), got query {q.shape}, key {k.shape}, value {v.shape}")
    heads = q.shape[-3] if q.ndim >= 3 else 1
    kv_heads = k.shape[-3] if k.ndim >= 3 else 1
    if enable_gqa and heads % kv_heads:
        raise ValueError(f"{fn}: with enable_gqa, key's heads (dim -3) must divide query's "
                         f"{heads}, got {kv_heads}")
    groups = heads // kv_heads if enable_gqa else 1
    batch = [t.shape[:-2] for t in (q, k, v)]
    batch[1:] = [s[:-1] + (s[-1] * groups,) if enable_gqa and s else s for s in batch[1:]]
    try:
        scores_shape = np.broadcast_shapes(*batch) + (q.shape[-2], k.shape[-2])
    except ValueError:
        raise ValueError(f"{fn}: the batch dims of query {q.shape}, key {k.shape} and value "
                         f"{v.shape} do not broadcast") from None
    check_number(fn, "dropout_p", dropout_p)
    if not 0 <= dropout_p < 1:
        raise ValueError(f"{fn}: dropout_p must be a number in [0, 1), got {dropout_p!r}")
    if scale is not None:
        check_number(fn, "scale", scale)
    if not isinstance(is_causal, bool) or not isinstance(enable_gqa, bool):
        raise TypeError(f"{fn}: is_causal and enable_gqa must be True or False, got "
                        f"{is_causal!r}, {enable_gqa!r}")
    check_impl(fn, impl)
    if mask is not None:
        mask = _check_mask(fn, mask, q, scores_shape, is_causal)
    return mask, 1 / math.sqrt(q.shape[-1]) if scale is None else float(scale)


def _check_mask(fn, mask, q, scores_shape, is_causal):
    if is_causal:
        raise ValueError(f"{fn}: pass attn_mask or is_causal=True, not both")
    if not isinstance(mask, Tensor):
        mask = constant(backend.to_device(q.xp.asarray(mask), q.device))
    if mask.dtype != bool and mask.dtype != q.dtype:
        raise TypeError(f"{fn}: attn_mask must be bool or query's dtype {q.dtype}, got "
                        f"{mask.dtype}")
    try:
        fits = np.broadcast_shapes(mask.shape, scores_shape) == scores_shape
    except ValueError:
        fits = False
    if not fits:                        # (as torch: a mask never adds dims to the output)
        raise ValueError(f"{fn}: attn_mask of shape {mask.shape} does not broadcast to "
                         f"the scores' shape {scores_shape}")
    return mask
