"""The losses of ``F``, with ``torch.nn.functional``'s names, defaults, reductions
("mean", "sum", "none") and errors: class-index losses (cross-entropy, negative
log-likelihood), logistic losses (binary cross-entropy on probabilities or logits),
pointwise regression losses (L1, MSE, smooth L1, Huber) and the KL divergence.

The pointwise losses torch computes in one node (mse, smooth L1, Huber, binary
cross-entropy with and without logits, nll, logsigmoid) are one node here too, with torch's
node names and closed-form backward (``loss_nodes.py``); the cases torch writes as a graph
(a weight of mse_loss or huber_loss, smooth L1 with β = 0) and the rest are compositions of
primitive ops. ``functional`` re-exports every name here."""

import warnings

import numpy as np

from . import backend, ops
from .dtypes import check_number, float_of, index_of, is_floating
from .fused import cross_entropy_rows, log_softmax
from .fused.arguments import RankError, check_tensor, resolve_impl
from .loss_nodes import (BinaryCrossEntropy, BinaryCrossEntropyWithLogits, HuberLoss,
                         LogSigmoid, MseLoss, NllLoss, NllLoss2D, SmoothL1Loss)
from .ops.arrange import broadcast_tensors
from .tensor import BroadcastError, Tensor

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
           "huber_loss", "kl_div", "l1_loss", "logsigmoid", "mse_loss", "nll_loss",
           "smooth_l1_loss"]

REDUCTIONS = ("mean", "sum", "none")


# ----- arguments ----------------------------------------------------------------------------
class LossArgumentError(RuntimeError, ValueError):
    """An argument torch's loss kernel refuses (a target or weight of the wrong shape, a
    label_smoothing past 1): its RuntimeError (its ValueError for a target's batch size),
    and the ValueError of a bad value too."""


class TargetDtypeError(RuntimeError, TypeError):
    """A target of a dtype the loss cannot read (floats as class indices): torch's
    RuntimeError, and the TypeError of a wrong type too."""


def check_reduction(fn, reduction, extra=()):
    """Raise a ValueError naming ``fn`` unless ``reduction`` is one of ``REDUCTIONS + extra``."""
    choices = REDUCTIONS + tuple(extra)
    if reduction not in choices:
        names = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{fn}: reduction must be one of {names}, got {reduction!r}")


def check_floating(fn, name, value):
    """``value`` if it is a floating Tensor: a TypeError for anything but a Tensor, and
    NotImplementedError for an integer or bool one, as PyTorch's floating-only kernels."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(value).__name__}")
    if not is_floating(value.dtype):
        raise NotImplementedError(f"{fn}: {name} must be a floating tensor, got dtype "
                                  f"{value.dtype}")
    return value


def _tensor(fn, name, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(value).__name__}")
    return value


def _same_shape(fn, name, value, input):
    if value.shape != input.shape:
        raise ValueError(f"{fn}: {name} must have the input's shape {input.shape}, got "
                         f"{value.shape}")


def _broadcasts_to(fn, name, value, shape):
    """A weight that broadcasts to the input's ``shape`` without growing it."""
    _tensor(fn, name, value)
    try:
        fits = np.broadcast_shapes(value.shape, shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"{fn}: {name} of shape {value.shape} must broadcast to the "
                           f"input's shape {tuple(shape)}")


def _paired(fn, input, target):
    """The target's shape checked against the input's: broadcast with a warning, as PyTorch."""
    target_shape = tuple(target.shape if isinstance(target, Tensor) else np.shape(target))
    if target_shape != input.shape:
        try:
            np.broadcast_shapes(target_shape, input.shape)
        except ValueError:
            raise BroadcastError(f"{fn}: target of shape {target_shape} does not broadcast "
                                 f"with input of shape {input.shape}") from None
        warnings.warn(f"{fn}: target shape {target_shape} differs from input shape "
                      f"{input.shape}; they are broadcast, which is likely not intended "
                      "(PyTorch warns the same)", UserWarning, stacklevel=4)


def _common_dtype(input, target):
    """The dtype of ``input - target`` (PyTorch's promotion)."""
    other = target._array if isinstance(target, Tensor) else np.asarray(target)
    return ops.result_dtype(input._array, other)


def _pointwise(fn, input, target, integers=False):
    """(input, target) after the checks the pointwise losses share: floating unless
    ``integers`` (then as given); else both of the common dtype and the broadcast shape, as
    torch's Python functions hand them to the loss's node (its ToCopy and Expand nodes)."""
    _tensor(fn, "input", input)
    _paired(fn, input, target)
    if integers:
        return input, target
    dtype = _common_dtype(input, target)
    if not is_floating(dtype):
        raise NotImplementedError(f"{fn}: input and target must not both be integer or bool "
                                  f"tensors, got {input.dtype}")
    if not isinstance(target, Tensor):
        target = ops.base.constant(input.xp.asarray(target, dtype=dtype))
    input, target = (t if t.dtype == dtype else t.to(dtype) for t in (input, target))
    if input.shape != target.shape:
        input, target = broadcast_tensors(input, target)
    return input, target


LEGACY_WARNING = ("size_average and reduce args will be deprecated, please use "
                  "reduction='{}' instead.")


def legacy_reduction(fn, size_average, reduce, stacklevel=3):
    r"""The reduction torch's deprecated ``size_average`` and ``reduce`` name, with torch's
    UserWarning (``torch.nn._reduction.legacy_get_string``): a None counts as True; both
    true is ``"mean"``, ``reduce`` alone ``"sum"``, ``reduce=False`` ``"none"``. Each loss
    that takes the pair, and ``_Loss.__init__``, calls this behind one test (``if
    size_average is not None or reduce is not None:``); otherwise ``reduction`` stands.

    Args:
        fn: the loss, for the error. size_average, reduce: None, or read by their truth as
            torch's (a string, as in ``F.mse_loss(x, y, "sum")``, is a TypeError naming it,
            not torch's silent mean).
        stacklevel: the warning's, to name the loss's caller.

    Example:
        >>> legacy_reduction("mse_loss", False, None)      # 'sum', with torch's warning
    """
    for name, value in (("size_average", size_average), ("reduce", reduce)):
        if isinstance(value, str):
            raise TypeError(f"{fn}: {name} (deprecated; use reduction=) must be a bool or "
                            f"None, got str {value!r}")
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(LEGACY_WARNING.format(reduction), UserWarning, stacklevel=stacklevel)
    return reduction


def _reduce(losses, reduction):
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses


# ----- class-index losses: cross_entropy, nll_loss -----------------------------------------
def _class_layout(input):
    """(classes, target shape) of an input (C,), (N, C) or (N, C, d1, ...)."""
    if input.ndim == 1:
        return input.shape[0], ()
    return input.shape[1], input.shape[:1] + input.shape[2:]


def _class_rows(input, classes):
    """The input with the class dim last, as rows (M, C)."""
    if input.ndim <= 2:
        return input.reshape(-1, classes)
    return input.permute(0, *range(2, input.ndim), 1).reshape(-1, classes)


def _picked(logp, flat, keep, weight):
    """``-w[t] · logp[t]`` per row (M,), 0 on ignored rows, and the per-row weight the mean
    divides by: None when every row counts once (no weight, nothing ignored)."""
    xp = logp.xp
    safe = xp.where(keep, flat, 0)      # an ignored row's stand-in class, selected away
    losses = -logp[xp.arange(logp.shape[0]), safe]                           # (M,)
    if not keep.all():
        # selected, not multiplied by a 0/1 mask: an ignored row's stand-in class 0 may have
        # log-probability -inf (a masked logit), and -inf · 0 is NaN
        losses = ops.masked_fill(losses, ~keep, 0.0)
    if weight is None:
        return losses, None if keep.all() else keep.astype(logp.dtype)
    per_row = xp.where(keep, weight[safe], 0).astype(logp.dtype)             # (M,)
    return losses * per_row, per_row


def _reduce_kept(losses, per_row, reduction, target_shape, keep):
    """The reduction of per-row losses: the mean is over the targets kept, weighted."""
    if reduction == "none":
        return losses.reshape(target_shape)
    if reduction == "sum":
        return losses.sum()
    if per_row is None:
        return losses.mean()            # every target kept, unweighted: the plain mean
    total = float(per_row.sum())        # the targets kept, or their weights
    if total == 0:
        # 0 / 0, as torch: the loss is NaN, a kept row's gradient (its weight over a total
        # of 0) NaN, an ignored row's 0
        xp = losses.xp
        scale = xp.where(keep, np.nan, 0.0).astype(losses.dtype)
        return (losses * scale).sum() + xp.asarray(np.nan, dtype=losses.dtype)
    return losses.sum() / total


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0, *, impl=None):
    r"""Cross-entropy :math:`-w_{t_n} \log\mathrm{softmax}(\text{input}_n)_{t_n}` of integer
    targets, the class dim second as in PyTorch; the mean is over the targets kept (weighted
    by ``weight`` when given). A floating target of the input's shape holds class
    probabilities: :math:`-\sum_c w_c\,t_{n,c} \log\mathrm{softmax}(\text{input}_n)_c`,
    the mean over the N·d1·... rows, not their weights (torch's).

    Args:
        weight: a rescaling weight per class (C,), or None.
        size_average, reduce: torch's deprecated pair, in its places; when either is given
            it sets the reduction, with torch's warning (``legacy_reduction``).
        ignore_index: the target value that adds nothing (and is left out of the mean);
            class probabilities take none (a value >= 0 is a RuntimeError, as torch's).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        label_smoothing: ε in [0, 1]: the target is (1 - ε) one-hot (or the probabilities)
            plus ε/C uniform.
        impl: ``"fused"``, one node saving the logits and a logsumexp per row, or
            ``"composite"``, the graph of log_softmax, indexing and the reduction; None
            follows ``mg.norm_impl`` (fused by default). Class probabilities are a graph
            over log_softmax of that ``impl``.

    Shape: input (C,), (N, C) or (N, C, d1, ...); target (), (N,) or (N, d1, ...) of
    class indices, or input's shape of probabilities.

    Example:
        >>> loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))   # (B·T, V)
        >>> F.cross_entropy(logits, F.softmax(teacher_logits, 1))   # soft targets (N, C)
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction("cross_entropy", size_average, reduce)
    check_tensor("cross_entropy", "input", input)
    if input.ndim == 0:
        raise RankError("cross_entropy: input must have shape (C,), (N, C) or (N, C, d1, ...), "
                        "got a 0-d tensor")
    classes, target_shape = _class_layout(input)
    xp = input.xp
    target_data = target._array if isinstance(target, Tensor) else target
    target_data = backend.to_device(xp.asarray(target_data), input.device)
    probabilities = tuple(target_data.shape) == input.shape     # torch's test, as is
    if probabilities:
        _check_probabilities(target_data.dtype, ignore_index)
    elif tuple(target_data.shape) != target_shape:
        raise LossArgumentError(f"cross_entropy: target must have shape {target_shape} for "
                                f"input {input.shape} (the class dim is dim 1), or the "
                                f"input's shape for class probabilities, got "
                                f"{tuple(target_data.shape)}")
    elif target_data.dtype.kind not in "iu":
        raise TargetDtypeError(f"cross_entropy: target must hold integer class indices "
                               f"(or class probabilities of the input's shape), got dtype "
                               f"{target_data.dtype}")
    check_number("cross_entropy", "ignore_index", ignore_index := index_of(ignore_index),
                 integer=True)                  # a 0-d integer tensor is its int, as torch's
    label_smoothing = float_of(label_smoothing, "cross_entropy", "label_smoothing")
    if not 0 <= label_smoothing <= 1:
        raise LossArgumentError(f"cross_entropy: label_smoothing must be in [0, 1], "
                                f"got {label_smoothing!r}")
    given_weight = weight
    if weight is not None:
        weight = backend.to_device(xp.asarray(weight._array if isinstance(weight, Tensor)
                                              else weight), input.device)
        if weight.shape != (classes,) or weight.dtype.kind != "f":
            raise LossArgumentError(f"cross_entropy: weight must be a floating tensor of "
                                    f"shape ({classes},), got shape {tuple(weight.shape)}, "
                                    f"dtype {weight.dtype}")
    if probabilities:
        check_reduction("cross_entropy", reduction)
        target = target if isinstance(target, Tensor) else ops.base.constant(target_data)
        if weight is not None and not isinstance(given_weight, Tensor):
            given_weight = ops.base.constant(weight)
        return _soft_cross_entropy(input, target, given_weight, reduction, label_smoothing,
                                   resolve_impl("cross_entropy", impl))
    flat = target_data.reshape(-1)
    keep = flat != ignore_index
    counted = flat[keep]
    if counted.size and (int(counted.min()) < 0 or int(counted.max()) >= classes):
        raise ops.OutOfRangeError(
            f"cross_entropy: target values must be in [0, {classes}) or ignore_index "
            f"{ignore_index}, got min {int(counted.min())}, max {int(counted.max())}")
    check_reduction("cross_entropy", reduction)
    impl = resolve_impl("cross_entropy", impl)
    rows = _class_rows(input, classes)                                       # (M, C)
    if weight is None and not label_smoothing:      # one node (or its twin graph) of rows
        loss = cross_entropy_rows(rows, flat, ignore_index, reduction, impl)
        return loss.reshape(target_shape) if reduction == "none" else loss
    logp = log_softmax(rows, dim=1, impl=impl)                               # (M, C)
    losses, per_row = _picked(logp, flat, keep, weight)
    if label_smoothing:
        smooth = -(logp if weight is None else logp * weight.astype(input.dtype)).sum(-1)
        smooth = smooth if keep.all() else ops.masked_fill(smooth, ~keep, 0.0)
        losses = (1 - label_smoothing) * losses + (label_smoothing / classes) * smooth
    return _reduce_kept(losses, per_row, reduction, target_shape, keep)


def _check_probabilities(dtype, ignore_index):
    # a target of the input's shape holds class probabilities: floating, with no class to
    # ignore (torch's RuntimeErrors)
    if not is_floating(dtype):
        raise RuntimeError(f"cross_entropy: a target of the input's shape holds class "
                           f"probabilities and must be floating, got dtype {dtype}")
    if isinstance(ignore_index, (int, np.integer)) and ignore_index >= 0:
        raise RuntimeError(f"cross_entropy: ignore_index is not supported for class-"
                           f"probability (floating) targets, got ignore_index={ignore_index}")


def _soft_cross_entropy(input, target, weight, reduction, label_smoothing, impl):
    r"""torch's composition for class probabilities ``target`` (input's shape):
    :math:`\ell_n = -\sum_c w_c\,p_{n,c} \log\mathrm{softmax}(x_n)_c` with
    :math:`p = (1 - ε)\,t + ε / C`; "mean" divides the sum by the rows N·d1·..., the
    weights aside (NaN for no row). The target gets a gradient too, as torch's."""
    classes = input.shape[0 if input.ndim == 1 else 1]
    logp = log_softmax(input, dim=0 if input.ndim == 1 else 1, impl=impl)   # input's shape
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = logp * target                                                   # input's shape
    if weight is not None:      # (C,) as (C, 1, ...): along the class dim
        terms = terms * weight.reshape((classes,) + (1,) * max(input.ndim - 2, 0))
    if reduction == "none":
        return -terms.sum(0 if input.ndim == 1 else 1)                     # (N, d1, ...)
    total = -terms.sum()
    if reduction == "sum":
        return total
    rows = input.size // classes if input.size else 0
    return total / rows if rows else total * float("nan")


def _nll_target(input, target, target_shape):
    """The target as a flat int64/uint8 array on input's device, its shape checked."""
    data = target._array if isinstance(target, Tensor) else input.xp.asarray(target)
    data = backend.to_device(data, input.device)
    if data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"nll_loss: target must hold int64 (or uint8) class indices, got "
                           f"dtype {data.dtype}")
    if tuple(data.shape) != target_shape:
        if input.ndim > 1 and tuple(data.shape[:1]) != target_shape[:1]:
            raise ValueError(f"nll_loss: input batch size {input.shape[0]} must match target "
                             f"batch size {data.shape[0] if data.ndim else 0}")
        raise LossArgumentError(f"nll_loss: target must have shape {target_shape} for input "
                                f"{input.shape} (class dim 1), got {tuple(data.shape)}")
    return data.reshape(-1)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    r"""Negative log-likelihood :math:`-w_{t_n}\,\text{input}_{n, t_n}` of log-probabilities
    and integer targets (``F.nll_loss``); the mean is over the targets kept, weighted:
    :math:`\sum_n \ell_n / \sum_n w_{t_n}`. ``nll_loss(log_softmax(x, 1), t)`` is
    ``cross_entropy(x, t)``.

    Args:
        input: log-probabilities, the class dim second.
        target: int64 (or uint8) class indices, a Tensor or an array.
        weight: a floating (C,) Tensor of input's dtype, a weight per class, or None.
        size_average, reduce: torch's deprecated pair (``legacy_reduction``).
        ignore_index: the target value that adds nothing (and is left out of the mean).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.

    Shape: input (C,), (N, C) or (N, C, d1, ...); target (), (N,) or (N, d1, ...).

    Example:
        >>> F.nll_loss(F.log_softmax(logits, dim=1), targets)
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction("nll_loss", size_average, reduce)
    check_floating("nll_loss", "input", input)
    if input.ndim == 0:
        raise ValueError("nll_loss: input must have 1 or more dims ((C,), (N, C) or "
                         "(N, C, d1, ...)), got a 0-d tensor")
    classes, target_shape = _class_layout(input)
    flat = _nll_target(input, target, target_shape)
    check_number("nll_loss", "ignore_index", ignore_index := index_of(ignore_index),
                 integer=True)                  # a 0-d integer tensor is its int, as torch's
    if weight is not None:
        _tensor("nll_loss", "weight", weight)
        if weight.shape != (classes,) or weight.dtype != input.dtype:
            raise RuntimeError(f"nll_loss: weight must have shape ({classes},) and the "
                               f"input's dtype {input.dtype}, got shape {weight.shape}, "
                               f"dtype {weight.dtype}")
    keep = flat != ignore_index
    outside = keep & ((flat < 0) | (flat >= classes))
    if outside.any():
        raise ops.OutOfRangeError(f"nll_loss: target {int(flat[outside][0])} is out of "
                                  f"bounds: must be in [0, {classes}) or ignore_index "
                                  f"{ignore_index}")
    check_reduction("nll_loss", reduction)
    node = NllLoss2D if input.ndim > 2 else NllLoss      # torch's names (nll_loss2d's)
    return node.apply(input, target=flat, keep=keep, reduction=reduction,
                      target_shape=target_shape, weight=None if weight is None else weight._array)


# ----- logistic losses: binary_cross_entropy (with logits) ----------------------------------
def logsigmoid(input):
    r""":math:`\log\sigma(x) = \min(x, 0) - \mathrm{log1p}(e^{-|x|})` elementwise
    (``F.logsigmoid``), stable for any x: the exponent is never positive.

    Example:
        >>> F.logsigmoid(mg.tensor([-1000.0, 0.0]))       # [-1000, -log 2]
    """
    check_floating("logsigmoid", "input", input)
    return LogSigmoid.apply(input)      # one node, torch's LogSigmoidBackward0


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    r"""Binary cross-entropy of probabilities :math:`-w (t \log x + (1 - t) \log(1 - x))`,
    each log clamped at -100 as in PyTorch (``F.binary_cross_entropy``).

    Args:
        input: probabilities in [0, 1]. target: in [0, 1], input's shape and dtype.
        weight: a rescaling weight that broadcasts to input's shape, or None.
        size_average, reduce: torch's deprecated pair (``legacy_reduction``).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.

    Shape: input (*), target (*), output () or (*) with ``"none"``.

    Example:
        >>> F.binary_cross_entropy(F.sigmoid(logits), labels)
    """
    fn = "binary_cross_entropy"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    check_floating(fn, "input", input)
    _tensor(fn, "target", target)
    _same_shape(fn, "target", target, input)
    if target.dtype != input.dtype:
        raise RuntimeError(f"{fn}: target must have the input's dtype {input.dtype}, got "
                           f"{target.dtype}")
    for name, value in (("input", input), ("target", target)):
        if not ((value._array >= 0) & (value._array <= 1)).all():    # NaN fails too
            raise RuntimeError(f"{fn}: all elements of {name} must be in [0, 1]")
    if weight is not None:
        _broadcasts_to(fn, "weight", weight, input.shape)
    check_reduction(fn, reduction)
    if weight is not None and weight.requires_grad:     # torch refuses; a graph gives it one
        losses = BinaryCrossEntropy.apply(input, target, reduction="none")
        return _reduce(losses * weight.astype(input.dtype), reduction)
    weight = None if weight is None else weight._array.astype(input.dtype)  # input's dtype
    return BinaryCrossEntropy.apply(input, target, reduction=reduction, weight=weight)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    r"""Binary cross-entropy of logits, :math:`-w (p\,t \log\sigma(x) + (1 - t)
    \log(1 - \sigma(x)))` with :math:`p` = ``pos_weight``, in the stable form
    :math:`(1 - t)\,x - (1 + (p - 1)\,t) \log\sigma(x)`
    (``F.binary_cross_entropy_with_logits``). The result has target's dtype, as PyTorch's.

    Args:
        input: logits. target: input's shape, floating (or complex, as torch's).
        weight: a rescaling weight that broadcasts to input's shape, or None.
        size_average, reduce: torch's deprecated pair (``legacy_reduction``).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        pos_weight: a weight of the positive targets, broadcast over input (a weight per
            class as the last dim), or None.

    Shape: input (*), target (*), output () or (*) with ``"none"``.

    Example:
        >>> F.binary_cross_entropy_with_logits(logits, labels, pos_weight=mg.full((C,), 3.0))
    """
    fn = "binary_cross_entropy_with_logits"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    check_floating(fn, "input", input)
    _tensor(fn, "target", target)
    _same_shape(fn, "target", target, input)
    if not is_floating(target.dtype) and target.dtype.kind != "c":   # torch: complex too
        raise RuntimeError(f"{fn}: target must be a floating tensor (the result takes its "
                           f"dtype), got {target.dtype}")
    for name, value in (("weight", weight), ("pos_weight", pos_weight)):
        if value is not None:
            _broadcasts_to(fn, name, value, input.shape)
    check_reduction(fn, reduction)
    if target.dtype.kind != "c" and not any(w is not None and w.requires_grad
                                             for w in (weight, pos_weight)):
        return BinaryCrossEntropyWithLogits.apply(input, target, reduction=reduction,
                                                  dtype=target.dtype, weight=weight,
                                                  pos_weight=pos_weight)
    log_sigmoid = logsigmoid(input)     # torch refuses weights that require grad: a graph
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight - 1) * target + 1)
    losses = (1 - target) * input - log_sigmoid
    if weight is not None:
        losses = losses * weight
    if losses.dtype != target.dtype:
        losses = losses.astype(target.dtype)
    return _reduce(losses, reduction)


# ----- pointwise regression losses ---------------------------------------------------------
def _weighted(fn, losses, weight, input, reduction, mean="weights"):
    """torch's weighted pointwise loss: ``losses * weight``, a weight of input's shape
    (ValueError otherwise); the mean divides the sum by the weights' sum (mean="weights":
    mse_loss, l1_loss) or by the element count (mean="count": huber_loss)."""
    _tensor(fn, "weight", weight)
    _same_shape(fn, "weight", weight, input)
    losses = losses * weight
    if reduction == "mean" and mean == "weights":
        return losses.sum() / weight.sum()
    return _reduce(losses, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    r"""Mean squared error :math:`\mathrm{mean}((\text{input} - \text{target})^2)`
    (``F.mse_loss``); a target of another shape is broadcast with a warning, as in PyTorch.
    With ``weight``, :math:`\sum w\,d^2 / \sum w`.

    Args:
        size_average, reduce: torch's deprecated pair (``legacy_reduction``).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        weight: a weight per element, input's shape, or None.

    Example:
        >>> F.mse_loss(prediction, target, reduction="sum")
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction("mse_loss", size_average, reduce)
    check_reduction("mse_loss", reduction)
    pair = _pointwise("mse_loss", input, target)
    if weight is not None:          # torch's is a graph too
        diff = pair[0] - pair[1]
        return _weighted("mse_loss", diff * diff, weight, input, reduction)
    return MseLoss.apply(*pair, reduction=reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    r"""Mean absolute error :math:`\mathrm{mean}|\text{input} - \text{target}|`
    (``F.l1_loss``); the gradient at a tie is 0. A target of another shape is broadcast
    with a warning, as in PyTorch; integer tensors give an integer ``"sum"`` or ``"none"``.
    With ``weight``, :math:`\sum w\,|d| / \sum w`.

    Args:
        size_average, reduce: torch's deprecated pair (``legacy_reduction``).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        weight: a weight per element, input's shape, or None.

    Example:
        >>> F.l1_loss(prediction, target, reduction="sum")
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction("l1_loss", size_average, reduce)
    _tensor("l1_loss", "input", input)
    check_reduction("l1_loss", reduction)
    if reduction == "mean" and _common_dtype(input, target).kind in "biu":   # complex: |d|
        raise RuntimeError(f"l1_loss: the mean of integer differences has no dtype; input "
                           f"is {input.dtype}: pass floating tensors or reduction='sum'")
    pair = _pointwise("l1_loss", input, target, integers=True)
    losses = (pair[0] - pair[1]).abs()
    if weight is not None:
        return _weighted("l1_loss", losses, weight, input, reduction)
    return _reduce(losses, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta=1.0):
    r"""Smooth L1 (``F.smooth_l1_loss``): :math:`0.5\,d^2/\beta` where :math:`|d| < \beta`,
    else :math:`|d| - 0.5\,\beta`, with :math:`d` = input - target; ``beta=0`` is
    ``l1_loss``.

    Args:
        size_average, reduce: torch's deprecated pair (``legacy_reduction``).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        beta: where the quadratic turns linear, >= 0; after ``reduction``, as torch's.

    Example:
        >>> F.smooth_l1_loss(boxes, target_boxes, beta=0.5)
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction("smooth_l1_loss", size_average, reduce)
    beta = float_of(beta, "smooth_l1_loss", "beta")
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss: beta must be non-negative, got {beta!r}")
    check_reduction("smooth_l1_loss", reduction)
    pair = _pointwise("smooth_l1_loss", input, target)
    if beta == 0:                   # l1_loss, torch's graph too
        return _reduce((pair[0] - pair[1]).abs(), reduction)
    return SmoothL1Loss.apply(*pair, reduction=reduction, beta=beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    r"""Huber (``F.huber_loss``): :math:`0.5\,d^2` where :math:`|d| \le \delta`, else
    :math:`\delta (|d| - 0.5\,\delta)`, with :math:`d` = input - target: smooth L1 times
    δ. The result has input's dtype, as PyTorch's. With ``weight``, :math:`w\,\ell`
    elementwise, the mean over the elements (torch's: not over the weights, as mse_loss's).

    Args:
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        delta: where the quadratic turns linear, > 0.
        weight: a weight per element, input's shape, or None.

    Example:
        >>> F.huber_loss(prediction, target, delta=2.0)
    """
    delta = float_of(delta, "huber_loss", "delta")
    if delta <= 0:
        raise RuntimeError(f"huber_loss: delta must be positive, got {delta!r}")
    check_reduction("huber_loss", reduction)
    _tensor("huber_loss", "input", input)
    if not is_floating(input.dtype) and is_floating(_common_dtype(input, target)):
        raise RuntimeError(f"huber_loss: the result takes input's dtype {input.dtype}, which "
                           "cannot hold a floating loss")
    pair = _pointwise("huber_loss", input, target)
    losses = HuberLoss.apply(*pair, reduction="none" if weight is not None else reduction,
                             delta=delta)   # weighted, torch's is a graph over the losses
    losses = losses if losses.dtype == input.dtype else losses.astype(input.dtype)
    if weight is not None:
        return _weighted("huber_loss", losses, weight, input, reduction, mean="count")
    return losses


# ----- divergence --------------------------------------------------------------------------
def kl_div(input, target, size_average=None, reduce=None, reduction="mean",
           log_target=False):
    r"""Kullback-Leibler divergence of log-probabilities ``input`` from ``target``
    (``F.kl_div``): :math:`t (\log t - x)` elementwise (0 where t = 0), or
    :math:`e^t (t - x)` with ``log_target``.

    Args:
        size_average, reduce: torch's deprecated pair (``legacy_reduction``): when either
            is given it reduces in place of ``reduction`` (no "mean" warning), and
            ``reduction="batchmean"`` still divides that by the batch size, as torch's.
        reduction: ``"mean"`` (every element, with PyTorch's warning), ``"batchmean"`` (the
            sum over the batch size, the divergence's definition), ``"sum"`` or ``"none"``.
        log_target: whether ``target`` holds log-probabilities too.

    Example:
        >>> F.kl_div(F.log_softmax(student, 1), F.softmax(teacher, 1), reduction="batchmean")
    """
    fn = "kl_div"
    legacy = None
    if size_average is not None or reduce is not None:
        legacy = legacy_reduction(fn, size_average, reduce)
    _tensor(fn, "input", input)
    _tensor(fn, "target", target)
    if not isinstance(log_target, bool):
        raise TypeError(f"{fn}: log_target must be a bool, got {type(log_target).__name__}")
    if not (is_floating(input.dtype) and is_floating(target.dtype)):
        raise RuntimeError(f"{fn}: integer inputs are not supported, got input {input.dtype}, "
                           f"target {target.dtype}")
    if legacy is None:
        check_reduction(fn, reduction, ("batchmean",))
    try:
        np.broadcast_shapes(input.shape, target.shape)
    except ValueError:
        raise BroadcastError(f"{fn}: target of shape {target.shape} does not broadcast with "
                             f"input of shape {input.shape}") from None
    if log_target:
        losses = target.exp() * (target - input)
    else:
        with np.errstate(invalid="ignore"):      # t log t: NaN for a negative t, as PyTorch's
            losses = target * target.masked_fill(target._array == 0, 1.0).log() \
                - target * input
    if reduction == "mean" and legacy is None:
        warnings.warn("kl_div: reduction='mean' divides the total loss by both the batch size "
                      "and the support size; 'batchmean' divides only by the batch size, "
                      "which is the KL divergence (PyTorch warns the same)", UserWarning,
                      stacklevel=2)
    if reduction == "batchmean":        # the legacy pair's reduction (or the sum) over N
        reduced = _reduce(losses, "sum" if legacy is None else legacy)
        return reduced / input.shape[0] if input.ndim else reduced
    return _reduce(losses, reduction if legacy is None else legacy)
