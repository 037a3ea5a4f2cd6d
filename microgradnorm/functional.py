"""Functional ops with the semantics of ``torch.nn.functional``: the norms, softmax,
log_softmax, cross_entropy and attention (``impl="fused"`` or ``"composite"``,
docs/architecture.md), activations, losses and dropout. Arguments are checked before
anything runs, running statistics included."""

import warnings

import numpy as np

from . import backend, ops
from .dtypes import check_number
from .norms import (CASTINGS, IMPLS, add_layer_norm, add_rms_norm, batch_norm,
                    cross_entropy_rows, layer_norm, log_softmax, rms_norm,
                    scaled_dot_product_attention, softmax)
from .norms.arguments import check_impl, check_tensor
from .tensor import Tensor

__all__ = ["CASTINGS", "IMPLS", "layer_norm", "rms_norm", "batch_norm", "add_layer_norm",
           "add_rms_norm", "cross_entropy", "dropout", "gelu", "log_softmax", "mse_loss",
           "relu", "scaled_dot_product_attention", "sigmoid", "silu", "softmax", "tanh"]

# ----- activations, losses, dropout: composites of primitive ops -------------------------
relu = ops.relu                # one home each: F.relu is ops.relu is Tensor.relu
tanh = ops.tanh
sigmoid = ops.sigmoid


def gelu(x, approximate="none"):
    r"""GELU :math:`x\,\Phi(x) = \tfrac12 x (1 + \mathrm{erf}(x/\sqrt2))`; with
    ``approximate="tanh"``, GPT-2's :math:`\tfrac12 x (1 + \tanh(\sqrt{2/\pi}(x + 0.044715 x^3)))`.

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


def cross_entropy(logits, target, reduction="mean", ignore_index=-100, impl="fused"):
    r"""Cross-entropy :math:`-\log\mathrm{softmax}(\text{logits}_n)_{t_n}` of integer targets.

    ``impl="fused"`` is one node saving the logits and a logsumexp per row;
    ``"composite"`` the graph of log_softmax, indexing and the reduction.

    Shape: logits (N, C) or (B, T, C), the class dim last; target (N,) or (B, T).

    Example:
        >>> loss = F.cross_entropy(model(idx), targets)      # (B, T, V), (B, T)
    """
    check_tensor("cross_entropy", "logits", logits)
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
    counted = flat[flat != ignore_index]
    if counted.size and (int(counted.min()) < 0 or int(counted.max()) >= classes):
        raise ops.OutOfRangeError(
            f"cross_entropy: target values must be in [0, {classes}) or ignore_index "
            f"{ignore_index}, got min {int(counted.min())}, max {int(counted.max())}")
    _check_reduction("cross_entropy", reduction)
    check_impl("cross_entropy", impl)
    loss = cross_entropy_rows(logits.reshape(-1, classes), flat, ignore_index, reduction, impl)
    return loss.reshape(logits.shape[:-1]) if reduction == "none" else loss


def mse_loss(input, target, reduction="mean"):
    r"""Mean squared error :math:`\mathrm{mean}((\text{input} - \text{target})^2)`; a target
    of another shape is broadcast with a warning, as in PyTorch."""
    check_tensor("mse_loss", "input", input)
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
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``;
    ``x`` itself when not ``training``. ``rng``: a ``numpy.random.Generator``, by default
    NumPy's global state."""
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
