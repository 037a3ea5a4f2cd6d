"""Functional ops with the semantics of ``torch.nn.functional``.

Every norm takes ``impl="fused"`` (one graph node with a closed-form backward) or
``impl="composite"`` (the textbook graph of primitive ops); both compute the same function.
Arguments are checked before anything runs, so a bad call raises a ``TypeError`` or
``ValueError`` naming the argument and changes nothing (running statistics included).
"""

import numbers

import numpy as np

from . import backend
from .autograd import op_group
from .norms import composite, fused
from .tensor import Tensor, is_floating

IMPLS = ("fused", "composite")

__all__ = ["IMPLS", "layer_norm", "rms_norm", "batch_norm", "add_layer_norm", "add_rms_norm",
           "relu", "tanh"]


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5, impl="fused"):
    r"""Layer normalization over the trailing ``normalized_shape`` dims of ``x``.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    with the mean and the biased variance taken over the trailing dims, per leading index.

    Args:
        x: floating-point Tensor of shape (*, *normalized_shape).
        normalized_shape: int or tuple of ints, the trailing dims to normalize over.
        weight: γ, a Tensor of shape ``normalized_shape``, or None for γ = 1.
        bias: β, a Tensor of shape ``normalized_shape``, or None for β = 0.
        eps: added to the variance inside the square root.
        impl: ``"fused"`` or ``"composite"``.

    Shape:
        output has the shape of ``x``.

    Example:
        >>> x = mg.tensor(np.random.randn(2, 5, 8), requires_grad=True)
        >>> y = F.layer_norm(x, 8)                 # each of the 2·5 rows: mean 0, variance ≈ 1
    """
    normalized_shape = _check_row_norm("layer_norm", x, normalized_shape, eps, impl,
                                       weight=weight, bias=bias)
    if impl == "composite":
        with op_group("layer_norm"):          # the visualizer can fold the call's nodes
            return composite.layer_norm(x, normalized_shape, weight, bias, eps)
    return fused.LayerNorm.apply(x, weight, bias, normalized_shape=normalized_shape, eps=eps)


def rms_norm(x, normalized_shape, weight=None, eps=1e-6, impl="fused"):
    r"""RMS normalization over the trailing ``normalized_shape`` dims of ``x``.

    .. math::
        y = \frac{x}{\sqrt{\mathrm{E}[x^2] + \epsilon}} \cdot \gamma

    ``eps`` defaults to 1e-6 (LLaMA's value); ``torch.nn.functional.rms_norm`` defaults to
    ``torch.finfo(x.dtype).eps`` instead, so pass eps explicitly when comparing.

    Args:
        x: floating-point Tensor of shape (*, *normalized_shape).
        normalized_shape: int or tuple of ints.
        weight: γ of shape ``normalized_shape``, or None.
        eps: added to the mean square inside the square root.
        impl: ``"fused"`` or ``"composite"``.

    Shape:
        output has the shape of ``x``.

    Example:
        >>> y = F.rms_norm(x, 8, weight=mg.tensor(np.ones(8)))
    """
    normalized_shape = _check_row_norm("rms_norm", x, normalized_shape, eps, impl, weight=weight)
    if impl == "composite":
        with op_group("rms_norm"):
            return composite.rms_norm(x, normalized_shape, weight, eps)
    return fused.RMSNorm.apply(x, weight, normalized_shape=normalized_shape, eps=eps)


def add_layer_norm(x, residual, normalized_shape, weight=None, bias=None, eps=1e-5,
                   impl="fused"):
    """Residual add fused with LayerNorm: ``s = x + residual``; returns
    ``(layer_norm(s), s)``. ``s`` is the new residual stream of a pre-norm block; the
    gradient reaching it and the one reaching the normalized output both flow back into
    ``x`` and ``residual``.

    Args:
        x, residual: Tensors of one shape (*, *normalized_shape), dtype and device.
        normalized_shape, weight, bias, eps, impl: as in ``layer_norm``.

    Example:
        >>> h, stream = F.add_layer_norm(attn_out, stream, 64, ln.weight, ln.bias)
    """
    normalized_shape = _check_row_norm("add_layer_norm", x, normalized_shape, eps, impl,
                                       weight=weight, bias=bias)
    _check_like("add_layer_norm", "residual", residual, x)
    if impl == "composite":
        with op_group("add_layer_norm"):
            return composite.add_layer_norm(x, residual, normalized_shape, weight, bias, eps)
    return fused.AddLayerNorm.apply(x, residual, weight, bias,
                                    normalized_shape=normalized_shape, eps=eps)


def add_rms_norm(x, residual, normalized_shape, weight=None, eps=1e-6, impl="fused"):
    """Residual add fused with RMSNorm: returns ``(rms_norm(x + residual), x + residual)``.

    Args: as in ``add_layer_norm`` (no bias).
    """
    normalized_shape = _check_row_norm("add_rms_norm", x, normalized_shape, eps, impl,
                                       weight=weight)
    _check_like("add_rms_norm", "residual", residual, x)
    if impl == "composite":
        with op_group("add_rms_norm"):
            return composite.add_rms_norm(x, residual, normalized_shape, weight, eps)
    return fused.AddRMSNorm.apply(x, residual, weight, normalized_shape=normalized_shape,
                                  eps=eps)


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5, impl="fused"):
    r"""Batch normalization per channel (dim 1) over every other dim.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    In training the batch mean and biased variance normalize ``x``, and the running
    statistics (if given) are updated in place as PyTorch does:
    ``running = (1 - momentum)·running + momentum·batch``, with the *unbiased* batch variance
    for ``running_var``. In eval the running statistics normalize ``x``.

    Args:
        x: floating-point Tensor of shape (N, C) or (N, C, L) (any (N, C, *) works).
        running_mean, running_var: Tensors or arrays of shape (C,), or None (training only).
        weight, bias: γ and β of shape (C,), or None.
        training: use (and update) batch statistics.
        momentum: weight of the new batch in the running statistics, in [0, 1].
        eps: added to the variance inside the square root.
        impl: ``"fused"`` or ``"composite"``.

    Example:
        >>> y = F.batch_norm(x, rm, rv, training=True)     # x (32, 4), rm/rv arrays (4,)
    """
    _check_tensor("batch_norm", "x", x)
    if x.ndim < 2:
        raise ValueError(f"batch_norm: x must have shape (N, C) or (N, C, L), got {x.shape}")
    channels = (x.shape[1],)
    _check_param("batch_norm", "weight", weight, channels, x)
    _check_param("batch_norm", "bias", bias, channels, x)
    _check_eps_impl("batch_norm", eps, impl)
    if not isinstance(momentum, numbers.Real) or not 0 <= momentum <= 1:
        raise ValueError(f"batch_norm: momentum must be a number in [0, 1], got {momentum!r}")
    stats = [_running_stat(name, stat, channels, x)
             for name, stat in (("running_mean", running_mean), ("running_var", running_var))]
    if training:
        count = x.size // x.shape[1]
        if count < 2:
            raise ValueError(f"batch_norm: training needs more than 1 value per channel to "
                             f"compute a variance, got x of shape {x.shape}")
    elif running_mean is None or running_var is None:
        raise ValueError("batch_norm: running_mean and running_var are required when "
                         "training=False")
    running_mean, running_var = (array for array, _ in stats)
    if impl == "composite":
        with op_group("batch_norm"):
            y = composite.batch_norm(x, running_mean, running_var, weight, bias, training,
                                     momentum, eps)
    else:
        y = fused.BatchNorm.apply(x, weight, bias, running_mean=running_mean,
                                  running_var=running_var, training=training,
                                  momentum=momentum, eps=eps)
    if training:
        for _, owner in stats:
            if owner is not None:
                owner._version_box[0] += 1          # updated in place: a new version
    return y


def relu(x):
    return x.relu()


def tanh(x):
    return x.tanh()


# ----- argument checks ----------------------------------------------------------------------
def _check_tensor(fn, name, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}: {name} must be a microgradnorm Tensor, "
                        f"got {type(value).__name__}")
    if not is_floating(value.dtype):
        raise TypeError(f"{fn}: {name} must be a floating-point tensor (float16, float32 or "
                        f"float64), got dtype {value.dtype}")


def _check_like(fn, name, value, x):
    """``value`` must be a Tensor of x's shape, dtype and device."""
    _check_tensor(fn, name, value)
    if value.shape != x.shape:
        raise ValueError(f"{fn}: {name} must have the shape of x {x.shape}, got {value.shape}")
    _check_dtype_device(fn, name, value, x)


def _check_dtype_device(fn, name, value, x):
    if value.dtype != x.dtype:
        raise TypeError(f"{fn}: {name} must have x's dtype {x.dtype}, got {value.dtype}")
    if value.device != x.device:
        raise ValueError(f"{fn}: {name} must be on x's device {x.device!r}, "
                         f"got {value.device!r}")


def _check_param(fn, name, param, shape, x):
    if param is None:
        return
    _check_tensor(fn, name, param)
    if param.shape != shape:
        raise ValueError(f"{fn}: {name} must have shape {shape}, got {param.shape}")
    _check_dtype_device(fn, name, param, x)


def _check_eps_impl(fn, eps, impl):
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not eps >= 0:
        raise ValueError(f"{fn}: eps must be a non-negative number, got {eps!r}")
    if impl not in IMPLS:
        raise ValueError(f"{fn}: impl must be one of {IMPLS}, got {impl!r}")


def _normalized_shape(fn, normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    try:
        shape = tuple(normalized_shape)
    except TypeError:
        shape = None
    if (not shape or any(isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1
                         for n in shape)):
        raise ValueError(f"{fn}: normalized_shape must be a positive int or a non-empty tuple "
                         f"of positive ints, got {normalized_shape!r}")
    return tuple(int(n) for n in shape)


def _check_row_norm(fn, x, normalized_shape, eps, impl, **params):
    """Checks shared by LayerNorm/RMSNorm and their residual forms; returns the
    normalized_shape as a tuple."""
    _check_tensor(fn, "x", x)
    normalized_shape = _normalized_shape(fn, normalized_shape)
    trailing = x.shape[max(x.ndim - len(normalized_shape), 0):]
    if trailing != normalized_shape:
        raise ValueError(f"{fn}: normalized_shape {normalized_shape} must equal the trailing "
                         f"dims of x; x has shape {x.shape}, expected (*, "
                         f"{', '.join(map(str, normalized_shape))})")
    for name, param in params.items():
        _check_param(fn, name, param, normalized_shape, x)
    _check_eps_impl(fn, eps, impl)
    return normalized_shape


def _running_stat(name, stat, shape, x):
    """(array, owning Tensor or None) for a running statistic, checked."""
    if stat is None:
        return None, None
    owner = stat if isinstance(stat, Tensor) else None
    array = stat.data if owner is not None else stat
    if not (isinstance(array, np.ndarray) or backend.is_cupy_array(array)):
        raise TypeError(f"batch_norm: {name} must be a Tensor or an array, "
                        f"got {type(stat).__name__}")
    if tuple(array.shape) != shape:
        raise ValueError(f"batch_norm: {name} must have shape {shape}, got {tuple(array.shape)}")
    if np.dtype(array.dtype).kind != "f":
        raise TypeError(f"batch_norm: {name} must be floating point, got dtype {array.dtype}")
    if backend.device_of(array) != x.device:
        raise ValueError(f"batch_norm: {name} must be on x's device {x.device!r}")
    return array, owner
