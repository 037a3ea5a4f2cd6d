"""Functional ops with the semantics of ``torch.nn.functional``: the norms, softmax,
log_softmax, cross_entropy and attention (``impl="fused"`` or ``"composite"``,
docs/architecture.md), activations, losses and dropout. Arguments are checked before
anything runs, running statistics included."""

import warnings

import numpy as np

from . import backend, dtypes, ops
from . import generator as streams
from . import sampling
from .dtypes import check_number
from .norms import (CASTINGS, IMPLS, add_layer_norm, add_rms_norm, batch_norm,
                    cross_entropy_rows, gelu, layer_norm, log_softmax, rms_norm,
                    scaled_dot_product_attention, softmax)
from .norms.arguments import check_tensor, resolve_impl
from .tensor import Tensor

__all__ = ["CASTINGS", "IMPLS", "layer_norm", "rms_norm", "batch_norm", "add_layer_norm",
           "add_rms_norm", "cross_entropy", "dropout", "gelu", "log_softmax", "mse_loss", "pad",
           "relu", "scaled_dot_product_attention", "sigmoid", "silu", "softmax", "tanh"]

# ----- activations, losses, dropout: composites of primitive ops -------------------------
relu = ops.relu                # one home each: F.relu is ops.relu is Tensor.relu
tanh = ops.tanh
sigmoid = ops.sigmoid


def silu(x):
    r""":math:`\mathrm{SiLU}(x) = x\,\sigma(x)` (also called swish)."""
    return x * sigmoid(x)


def cross_entropy(input, target, weight=None, *, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0, impl=None):
    r"""Cross-entropy :math:`-w_{t_n} \log\mathrm{softmax}(\text{input}_n)_{t_n}` of integer
    targets, the class dim second as in PyTorch; the mean is over the targets kept (weighted
    by ``weight`` when given).

    Args:
        weight: a rescaling weight per class (C,), or None.
        ignore_index: the target value that adds nothing (and is left out of the mean).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        label_smoothing: ε in [0, 1]: the target is (1 - ε) one-hot plus ε/C uniform.
        impl: ``"fused"``, one node saving the logits and a logsumexp per row, or
            ``"composite"``, the graph of log_softmax, indexing and the reduction; None
            follows ``mg.norm_impl`` (fused by default).

    Shape: input (C,), (N, C) or (N, C, d1, ...); target (), (N,) or (N, d1, ...).

    Example:
        >>> loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))   # (B·T, V)
    """
    check_tensor("cross_entropy", "input", input)
    if input.ndim == 0:
        raise ValueError("cross_entropy: input must have shape (C,), (N, C) or (N, C, d1, ...), "
                         "got a 0-d tensor")
    classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    target_shape = input.shape[:1] + input.shape[2:] if input.ndim > 1 else ()
    xp = input.xp
    target_data = target._array if isinstance(target, Tensor) else target
    target_data = backend.to_device(xp.asarray(target_data), input.device)
    if target_data.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: target must hold integer class indices, "
                        f"got dtype {target_data.dtype}")
    if tuple(target_data.shape) != target_shape:
        raise ValueError(f"cross_entropy: target must have shape {target_shape} for input "
                         f"{input.shape} (the class dim is dim 1), got "
                         f"{tuple(target_data.shape)}")
    check_number("cross_entropy", "ignore_index", ignore_index, integer=True)
    check_number("cross_entropy", "label_smoothing", label_smoothing)
    if not 0 <= label_smoothing <= 1:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], "
                         f"got {label_smoothing!r}")
    if weight is not None:
        weight = backend.to_device(xp.asarray(weight._array if isinstance(weight, Tensor)
                                              else weight), input.device)
        if weight.shape != (classes,) or weight.dtype.kind != "f":
            raise ValueError(f"cross_entropy: weight must be a floating tensor of shape "
                             f"({classes},), got shape {tuple(weight.shape)}, dtype "
                             f"{weight.dtype}")
    flat = target_data.reshape(-1)
    keep = flat != ignore_index
    counted = flat[keep]
    if counted.size and (int(counted.min()) < 0 or int(counted.max()) >= classes):
        raise ops.OutOfRangeError(
            f"cross_entropy: target values must be in [0, {classes}) or ignore_index "
            f"{ignore_index}, got min {int(counted.min())}, max {int(counted.max())}")
    _check_reduction("cross_entropy", reduction)
    impl = resolve_impl("cross_entropy", impl)
    rows = input.reshape(-1, classes) if input.ndim <= 2 else \
        input.permute(0, *range(2, input.ndim), 1).reshape(-1, classes)      # (M, C)
    if weight is None and not label_smoothing:      # one node (or its twin graph) of rows
        loss = cross_entropy_rows(rows, flat, ignore_index, reduction, impl)
        return loss.reshape(target_shape) if reduction == "none" else loss
    logp = log_softmax(rows, impl=impl)                                      # (M, C)
    safe = xp.where(keep, flat, 0)      # an ignored row's stand-in class, selected away
    losses = -logp[xp.arange(logp.shape[0]), safe]                           # (M,)
    if counted.size != flat.size:
        # selected, not multiplied by a 0/1 mask: an ignored row's stand-in class 0 may have
        # log-probability -inf (a masked logit), and -inf · 0 is NaN
        losses = ops.masked_fill(losses, ~keep, 0.0)
    per_row = keep.astype(input.dtype) if weight is None else \
        xp.where(keep, weight[safe], 0).astype(input.dtype)                  # (M,)
    if weight is not None:
        losses = losses * per_row
    if label_smoothing:
        smooth = -(logp if weight is None else logp * weight.astype(input.dtype)).sum(-1)
        smooth = ops.masked_fill(smooth, ~keep, 0.0) if counted.size != flat.size else smooth
        losses = (1 - label_smoothing) * losses + (label_smoothing / classes) * smooth
    if reduction == "none":
        return losses.reshape(target_shape)
    if reduction == "sum":
        return losses.sum()
    if weight is None and counted.size == flat.size:
        return losses.mean()            # every target kept, unweighted: the plain mean
    total = float(per_row.sum())        # the targets kept, or their weights
    if total == 0:                      # none: NaN, and zero gradients, as in PyTorch
        return losses.sum() + xp.asarray(np.nan, dtype=input.dtype)
    return losses.sum() / total


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


def dropout(x, p=0.5, training=True, inplace=False, *, generator=None, rng=None):
    r"""Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``;
    ``x`` itself when not ``training`` (or p = 0) (``F.dropout``).

    Formula:
        :math:`y = x \cdot m / (1 - p)`, :math:`m_i \sim \mathrm{Bernoulli}(1 - p)`: the
        mask is ``empty_like(x).bernoulli_(1 - p)`` then divided by 1 - p in x's dtype,
        torch's CPU steps, so the same seed gives torch's mask.

    Args:
        p: the probability of zeroing, in [0, 1]. inplace: multiply ``x`` in place.
        generator: a ``mg.Generator``, by default ``mg.default_generator``.
        rng: legacy: a ``numpy.random.Generator`` whose uniforms make the mask instead.

    Example:
        >>> y = F.dropout(h, 0.1, training=model.training)
    """
    check_number("dropout", "p", p)
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be a number in [0, 1], got {p!r}")
    gen = streams.check_generator("dropout", generator)
    if not training or p == 0 or x.size == 0:
        return x
    if p == 1:
        return x.mul_(0.0) if inplace else x * 0.0
    if rng is not None:
        keep = (rng.random(x.shape) >= p).astype(x.dtype)
    else:
        keep = np.empty(x.shape, x.dtype)
        streams.fill(keep, lambda n, c: sampling.bernoulli(gen, n, x.dtype, 1 - p))
    if dtypes.is_half(x.dtype):        # torch: times 1 / (1 - p) in float32, then rounded
        mask = (keep.astype(np.float32) * (np.float32(1) / np.float32(1 - p))).astype(x.dtype)
    else:
        mask = keep / np.asarray(1 - p).astype(x.dtype)
    mask = backend.to_device(mask, x.device)
    return x.mul_(mask) if inplace else x * mask


def pad(input, pad, mode="constant", value=0.0):
    """``input`` with ``value`` added around its last ``len(pad) // 2`` dims (``F.pad``):
    ``pad = (left, right)`` of the last dim, then ``(top, bottom)`` of the one before, ...;
    a negative amount crops. Constant mode only; a composition of slicing and ``cat``.

    Example:
        >>> F.pad(x, (1, 2))            # x (N, L) -> (N, 1 + L + 2)
    """
    check_tensor("pad", "input", input)
    if mode != "constant":
        raise ValueError(f"pad: only mode='constant' is implemented, got {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: pad must hold an even number of ints, at most 2 per dim of "
                         f"input ({input.ndim} dims), got {tuple(pad)}")
    for amount in pad:
        check_number("pad", "pad", amount, integer=True)
    out = input
    for i in range(len(pad) // 2):
        axis, before, after = input.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        index = [slice(None)] * out.ndim
        index[axis] = slice(max(-before, 0), out.shape[axis] - max(-after, 0))
        out = out[tuple(index)]                    # negative amounts crop
        pieces = []
        for amount in (before, None, after):
            if amount is None:
                pieces.append(out)
            elif amount > 0:
                shape = out.shape[:axis] + (amount,) + out.shape[axis + 1:]
                pieces.append(ops.base.constant(input.xp.full(shape, value, input.dtype)))
        out = ops.cat(pieces, dim=axis) if len(pieces) > 1 else out
    return out


def _check_reduction(fn, reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _reduce(losses, reduction):
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses
