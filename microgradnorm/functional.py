"""Functional ops with the semantics of ``torch.nn.functional``.

Every norm takes ``impl="fused"`` (one graph node with a closed-form backward) or
``impl="composite"`` (the textbook graph of primitive ops); both compute the same function.
Arguments are checked before anything runs, so a bad call raises a ``TypeError`` or
``ValueError`` naming the argument and changes nothing (running statistics included).
"""

import numbers
import warnings

import numpy as np

from . import backend, dtypes, ops, ops_extra
from .autograd import op_group
from .norms import composite, fused
from .dtypes import check_number, is_half
from .kernels import CASTINGS
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
    if x.size == 0:
        return _empty_norm(x, weight, bias)
    if impl == "composite":
        with op_group("layer_norm"):          # the visualizer can fold the call's nodes
            return composite.layer_norm(x, normalized_shape, weight, bias, eps)
    return fused.LayerNorm.apply(x, weight, bias, normalized_shape=normalized_shape, eps=eps)


def rms_norm(x, normalized_shape, weight=None, eps=1e-6, impl="fused", offset=0.0,
             casting="llama"):
    r"""RMS normalization over the trailing ``normalized_shape`` dims of ``x``.

    .. math::
        y = \frac{x}{\sqrt{\mathrm{E}[x^2] + \epsilon}} \cdot (\text{offset} + \gamma)

    ``eps`` defaults to 1e-6 (LLaMA's value); ``torch.nn.functional.rms_norm`` defaults to
    ``torch.finfo(x.dtype).eps`` instead, so pass eps explicitly when comparing.
    ``eps=None`` is that: the machine epsilon of x's dtype, as in PyTorch.

    For float16/bfloat16 input, ``casting`` says where the casts go, as in Hugging Face's
    models and Liger-Kernel's ``casting_mode``: ``"llama"`` (statistics in float32, x̂ cast
    back to x's dtype, then multiplied by the weight: ``w * x̂.to(x.dtype)``), ``"gemma"``
    (everything in float32, ``(x̂ · (offset + w.float())).to(x.dtype)``), ``"none"``
    (everything in x's dtype; the composite graph's x² then overflows float16 past
    |x| = 256, the fused node accumulates it in float32). float32 and float64 input gives
    the same result in every mode. A float32 weight with float16/bfloat16 input is
    accepted in "llama" (float32 result, as Hugging Face's) and "gemma" (x's dtype).

    Args:
        x: floating-point Tensor of shape (*, *normalized_shape).
        normalized_shape: int or tuple of ints.
        weight: γ of shape ``normalized_shape``, or None.
        eps: added to the mean square inside the square root; None: the machine epsilon
            of x's dtype (``np.finfo(x.dtype).eps``), PyTorch's default.
        impl: ``"fused"`` or ``"composite"``.
        offset: added to the weight, ``x̂ · (offset + γ)``: Gemma's 1 (with γ initialised
            to 0). Needs a weight.
        casting: ``"llama"`` (default, Liger's too), ``"gemma"`` or ``"none"``.

    Shape:
        output has the shape of ``x``.

    Example:
        >>> y = F.rms_norm(x, 8, weight=mg.tensor(np.ones(8)))
        >>> h = mg.tensor(np.random.randn(2, 8), dtype="bfloat16")
        >>> y = F.rms_norm(h, 8, mg.tensor(np.zeros(8)), offset=1.0, casting="gemma")
    """
    eps = _default_eps(x, eps)
    normalized_shape = _check_rms_norm("rms_norm", x, normalized_shape, weight, eps, impl,
                                       offset, casting)
    if x.size == 0:
        return _empty_norm(x, weight, None)
    if impl == "composite":
        with op_group("rms_norm"):
            return composite.rms_norm(x, normalized_shape, weight, eps, offset, casting)
    return fused.RMSNorm.apply(x, weight, normalized_shape=normalized_shape, eps=eps,
                               offset=offset, casting=casting)


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
    if x.size == 0:
        s = x + residual
        return _empty_norm(s, weight, bias), s
    if impl == "composite":
        with op_group("add_layer_norm"):
            return composite.add_layer_norm(x, residual, normalized_shape, weight, bias, eps)
    return fused.AddLayerNorm.apply(x, residual, weight, bias,
                                    normalized_shape=normalized_shape, eps=eps)


def add_rms_norm(x, residual, normalized_shape, weight=None, eps=1e-6, impl="fused",
                 offset=0.0, casting="llama"):
    """Residual add fused with RMSNorm: returns ``(rms_norm(x + residual), x + residual)``.

    Args: as in ``add_layer_norm`` (no bias); ``offset`` and ``casting`` as in ``rms_norm``.
    """
    eps = _default_eps(x, eps)
    normalized_shape = _check_rms_norm("add_rms_norm", x, normalized_shape, weight, eps, impl,
                                       offset, casting)
    _check_like("add_rms_norm", "residual", residual, x)
    if x.size == 0:
        s = x + residual
        return _empty_norm(s, weight, None), s
    if impl == "composite":
        with op_group("add_rms_norm"):
            return composite.add_rms_norm(x, residual, normalized_shape, weight, eps, offset,
                                          casting)
    return fused.AddRMSNorm.apply(x, residual, weight, normalized_shape=normalized_shape,
                                  eps=eps, offset=offset, casting=casting)


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
        running_mean, running_var: Tensors or arrays of shape (C,), or None (training only),
            in x's dtype (float16 x may keep float32 statistics); writeable when training.
            As PyTorch's CPU kernels do, statistics of another dtype are refused rather
            than updated at a lower precision.
        weight, bias: γ and β of shape (C,), or None.
        training: use (and update) batch statistics.
        momentum: weight of the new batch in the running statistics, in [0, 1].
        eps: added to the variance inside the square root.
        impl: ``"fused"`` or ``"composite"``.

    Example:
        >>> y = F.batch_norm(x, rm, rv, training=True)     # x (32, 4), rm/rv arrays (4,)
    """
    _check_tensor("batch_norm", "x", x)
    if x.ndim < 2 and x.size == 0:          # torch returns an empty 1-D input as it is
        return x * 1.0
    if x.ndim < 2:
        raise ValueError(f"batch_norm: x must have shape (N, C) or (N, C, L), got {x.shape}")
    channels = (x.shape[1],)
    _check_param("batch_norm", "weight", weight, channels, x)
    _check_param("batch_norm", "bias", bias, channels, x)
    _check_eps_impl("batch_norm", eps, impl)
    check_number("batch_norm", "momentum", momentum)
    if not 0 <= momentum <= 1:
        raise ValueError(f"batch_norm: momentum must be a number in [0, 1], got {momentum!r}")
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"batch_norm: training must be a bool, got {type(training).__name__}")
    stats = [_running_stat(name, stat, channels, x, training)
             for name, stat in (("running_mean", running_mean), ("running_var", running_var))]
    if x.size == 0:                 # an empty batch (or no channels): torch returns an empty
        return _empty_norm(x, *(None if p is None else p.reshape((1, -1) + (1,) * (x.ndim - 2))
                                for p in (weight, bias)))      # result, stats unchanged
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


def _empty_norm(x, weight, bias):
    # A zero-size input: the output is as empty as x (torch returns it too), recorded in the
    # graph so that backward gives x an empty gradient and weight and bias zero gradients.
    y = x * 1.0
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def relu(x):
    """max(x, 0) elementwise; ``x.relu()``. Shape: unchanged."""
    return x.relu()


def tanh(x):
    """tanh(x) elementwise; ``x.tanh()``. Shape: unchanged."""
    return x.tanh()


# ----- argument checks ----------------------------------------------------------------------
def _check_tensor(fn, name, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}: {name} must be a microgradnorm Tensor, "
                        f"got {type(value).__name__}")
    if not is_floating(value.dtype):
        raise TypeError(f"{fn}: {name} must be a floating-point tensor (float16, bfloat16, "
                        f"float32 or float64), got dtype {value.dtype}")


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
    check_number(fn, "eps", eps)
    if not eps >= 0:
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
    if (not shape or any(isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0
                         for n in shape)):
        raise ValueError(f"{fn}: normalized_shape must be a non-negative int or a non-empty "
                         f"tuple of non-negative ints, got {normalized_shape!r}")
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


def _default_eps(x, eps):
    """``eps`` itself, or for None the machine epsilon of x's dtype (PyTorch's RMSNorm
    default); a non-floating x is refused later, by the usual checks."""
    if eps is None and isinstance(x, Tensor) and is_floating(x.dtype):
        return float(dtypes.finfo(x.dtype).eps)
    return eps


def _check_rms_norm(fn, x, normalized_shape, weight, eps, impl, offset, casting):
    """``_check_row_norm`` plus offset and casting; a float32 weight may go with
    float16/bfloat16 x in the "llama" and "gemma" modes (Hugging Face's mixed precision)."""
    if casting not in CASTINGS:
        raise ValueError(f"{fn}: casting must be one of {CASTINGS}, got {casting!r}")
    check_number(fn, "offset", offset)
    if not np.isfinite(offset):
        raise ValueError(f"{fn}: offset must be a finite number, got {offset!r}")
    if offset and weight is None:
        raise ValueError(f"{fn}: offset {offset} needs a weight (y = x̂ · (offset + weight))")
    if (casting == "none" and isinstance(x, Tensor) and isinstance(weight, Tensor)
            and is_half(x.dtype) and weight.dtype == np.float32):
        raise TypeError(f"{fn}: a float32 weight with {x.dtype} x needs casting 'llama' or "
                        f"'gemma' (casting 'none' computes in x's dtype)")
    mixed = (isinstance(x, Tensor) and isinstance(weight, Tensor) and casting != "none"
             and is_half(x.dtype) and weight.dtype == np.float32)
    normalized_shape = _check_row_norm(fn, x, normalized_shape, eps, impl,
                                       **({} if mixed else {"weight": weight}))
    if mixed:
        _check_param(fn, "weight", weight, normalized_shape, weight)   # shape and device
        if weight.device != x.device:
            raise ValueError(f"{fn}: weight must be on x's device {x.device!r}, "
                             f"got {weight.device!r}")
    return normalized_shape


def _running_stat(name, stat, shape, x, training):
    """(array, owning Tensor or None) for a running statistic, checked: everything that
    could make the in-place update fail is refused before either statistic is touched.

    dtype: the statistics must have x's dtype, as PyTorch's CPU kernels require ("mixed
    dtype"), except that float16/bfloat16 x may keep float32 statistics (as mixed
    precision does on a GPU): a float32 statistic with float64 x would silently lose the
    update's precision."""
    if stat is None:
        return None, None
    owner = stat if isinstance(stat, Tensor) else None
    array = stat.data if owner is not None else stat
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


# ----- activations, softmax, losses, dropout ------------------------------------------------
# Composites of primitive ops: autograd differentiates them op by op.
__all__ += ["cross_entropy", "dropout", "gelu", "log_softmax", "mse_loss", "sigmoid", "silu",
            "softmax"]


def sigmoid(x):
    r""":math:`\sigma(x) = \tfrac12 (1 + \tanh(x / 2))`, which never overflows (unlike
    ``1 / (1 + exp(-x))`` for very negative x)."""
    return 0.5 * (1 + (x * 0.5).tanh())


def gelu(x, approximate="none"):
    r"""GELU, exact (PyTorch's default) or with GPT-2's tanh approximation:

    .. math::
        \mathrm{GELU}(x) = x\,\Phi(x) = \tfrac12 x \bigl(1 + \mathrm{erf}(x/\sqrt2)\bigr)
        \qquad\text{approximate="tanh"}:\ \tfrac12 x \bigl(1 + \tanh(\sqrt{2/\pi}\,
        (x + 0.044715 x^3))\bigr)

    The two differ by at most about 5e-4. The tanh form is all elementwise NumPy; the exact
    form calls ``math.erf`` per element on the CPU (NumPy has no erf), so it is the slower
    one there. ``nn.FeedForward`` uses the tanh form, as GPT-2 does.

    Args:
        x: Tensor.
        approximate: ``"none"`` (exact) or ``"tanh"``.

    Example:
        >>> F.gelu(mg.tensor([-1.0, 0.0, 1.0]))           # [-0.1587, 0, 0.8413]
    """
    if approximate == "none":
        return 0.5 * x * (1 + ops.erf(x * float(1 / np.sqrt(2.0))))
    if approximate != "tanh":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    inner = (x + 0.044715 * x * x * x) * float(np.sqrt(2.0 / np.pi))
    return 0.5 * x * (1 + inner.tanh())


def silu(x):
    r""":math:`\mathrm{SiLU}(x) = x\,\sigma(x)` (also called swish)."""
    return x * sigmoid(x)


def softmax(x, axis=-1, *, dim=None):
    r"""Numerically stable softmax along ``axis`` (``dim``: PyTorch's name for it):
    :math:`\mathrm{softmax}(x)_i = e^{x_i - m} / \sum_j e^{x_j - m}`, :math:`m = \max_j x_j`.

    Shape: the input's; slices along ``axis`` sum to 1.

    Example:
        >>> F.softmax(mg.tensor([[1.0, 2.0, 3.0]]))          # rows sum to 1
    """
    return ops_extra.softmax(x, ops.dim_alias("softmax", axis, dim, -1))


def log_softmax(x, axis=-1, *, dim=None):
    r"""Stable :math:`\log\mathrm{softmax}(x)_i = (x_i - m) - \log\sum_j e^{x_j - m}` along
    ``axis`` (``dim``: PyTorch's name). Shape: the input's."""
    return ops_extra.log_softmax(x, ops.dim_alias("log_softmax", axis, dim, -1))


def cross_entropy(logits, target, reduction="mean", ignore_index=-100):
    r"""Cross-entropy of integer class targets under ``softmax(logits)``:
    :math:`\ell_n = -\log\mathrm{softmax}(\text{logits}_n)_{t_n}`, averaged (or summed).

    The class dim is the LAST dim, for language models: logits (N, C) with target (N,), or
    (B, T, C) with target (B, T). (``torch.nn.functional.cross_entropy`` wants the class dim
    second, (B, C, T); for (N, C) the two agree.)

    Args:
        logits: floating-point Tensor (N, C) or (B, T, C).
        target: integer Tensor or array of the logits' shape without the last dim, with
            values in [0, C) or ``ignore_index``.
        reduction: ``"mean"`` (over the targets not ignored: NaN when all are, as in
            PyTorch), ``"sum"`` or ``"none"`` (0 where ignored).
        ignore_index: a target value that contributes no loss and no gradient (PyTorch's
            default, -100: padding in a batch of sequences).

    Example:
        >>> loss = F.cross_entropy(model(idx), targets)      # (B, T, V), (B, T)
    """
    _check_tensor("cross_entropy", "logits", logits)
    if logits.ndim not in (2, 3):
        raise ValueError(f"cross_entropy: logits must have shape (N, C) or (B, T, C), "
                         f"got {logits.shape}")
    target_data = target.data if isinstance(target, Tensor) else target
    target_data = backend.to_device(logits.xp.asarray(target_data), logits.device)
    if target_data.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: target must hold integer class indices, "
                        f"got dtype {target_data.dtype}")
    if tuple(target_data.shape) != logits.shape[:-1]:
        raise ValueError(f"cross_entropy: target must have shape {logits.shape[:-1]} for "
                         f"logits {logits.shape}, got {tuple(target_data.shape)}")
    check_number("cross_entropy", "ignore_index", ignore_index, integer=True)
    classes = logits.shape[-1]
    flat = target_data.reshape(-1)
    keep = flat != ignore_index
    counted = flat[keep]
    if counted.size and (int(counted.min()) < 0 or int(counted.max()) >= classes):
        raise ops.OutOfRangeError(
            f"cross_entropy: target values must be in [0, {classes}) or ignore_index "
            f"{ignore_index}, got min {int(counted.min())}, max {int(counted.max())}")
    _check_reduction("cross_entropy", reduction)
    logp = log_softmax(logits.reshape(-1, classes))                  # (N, C)
    rows = logits.xp.arange(logp.shape[0])
    if counted.size == flat.size:                     # nothing ignored: the plain mean
        picked = -logp[rows, flat]                                   # (N,)
        return _reduce(picked.reshape(logits.shape[:-1]), reduction)
    # 0 where ignored, selected rather than multiplied by a 0/1 mask: an ignored row's
    # stand-in class 0 may have log-probability -inf (a masked logit), and -inf · 0 is NaN
    picked = ops_extra.masked_fill(-logp[rows, logits.xp.where(keep, flat, 0)], ~keep, 0.0)
    if reduction == "mean":               # over the targets kept
        if counted.size == 0:             # none: NaN, and zero gradients, as in PyTorch
            return picked.sum() + logits.xp.asarray(np.nan, dtype=logits.dtype)
        return picked.sum() / float(counted.size)
    return _reduce(picked.reshape(logits.shape[:-1]), reduction)


def mse_loss(input, target, reduction="mean"):
    r"""Mean squared error :math:`\mathrm{mean}((\text{input} - \text{target})^2)`.

    Args:
        input: floating-point Tensor.
        target: Tensor or array of the same shape (another shape that broadcasts is
            accepted with a warning, as in PyTorch).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
    """
    _check_tensor("mse_loss", "input", input)
    target_shape = tuple(target.shape if isinstance(target, Tensor) else np.shape(target))
    if target_shape != input.shape:
        try:
            np.broadcast_shapes(target_shape, input.shape)
        except ValueError:
            raise ValueError(f"mse_loss: target of shape {target_shape} does not broadcast "
                             f"with input of shape {input.shape}") from None
        warnings.warn(f"mse_loss: target shape {target_shape} differs from input shape "
                      f"{input.shape}; they are broadcast, which is likely not intended "
                      "(PyTorch warns the same)", UserWarning, stacklevel=2)
    _check_reduction("mse_loss", reduction)
    diff = input - target
    return _reduce(diff * diff, reduction)


def dropout(x, p=0.5, training=True, rng=None):
    r"""Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``, so the
    expectation is unchanged; the identity when not ``training`` or ``p == 0``, and zeros
    (``x * 0``: NaN stays NaN) for ``p == 1``, as in PyTorch.

    Args:
        x: Tensor.
        p: drop probability in [0, 1].
        training: apply dropout (True) or return ``x`` (False).
        rng: a ``numpy.random.Generator``; by default NumPy's global random state
            (seed it with ``np.random.seed``).
    """
    check_number("dropout", "p", p)
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be a number in [0, 1], got {p!r}")
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0.0
    draws = rng.random(x.shape) if rng is not None else np.random.random_sample(x.shape)
    mask = (draws >= p).astype(x.dtype) / (1 - p)
    return x * backend.to_device(mask, x.device)


def _check_reduction(fn, reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _reduce(losses, reduction):
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses
