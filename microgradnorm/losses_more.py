"""The rest of ``torch.nn.functional``'s losses, with its names, defaults, reductions
("mean", "sum", "none"), shape rules and errors: the margin losses (ranking, hinge
embedding, soft margin, the multi-label and multi-class margins), the embedding losses
(cosine, triplet, triplet with any distance), the likelihood losses (Gaussian, Poisson)
and the cross entropy of a linear projection (``linear_cross_entropy``).

Each is a composition of primitive ops written as PyTorch's own kernel or composite writes
it, so the values, the dtypes and the gradients at a hinge's kink are PyTorch's: a kink
written ``clamp_min(·, 0)`` in PyTorch passes the gradient at 0, one its kernel tests with
``z > 0`` does not (``relu``). Each takes torch's signature, its deprecated ``size_average``
and ``reduce`` in their places, read as torch reads them (``losses.legacy_reduction``);
triplet_margin_with_distance_loss and gaussian_nll_loss have none, as torch's.
``functional`` re-exports every name.
"""

import math

import numpy as np

from . import ops
from .autograd import is_grad_enabled, no_grad
from .dtypes import check_bool, float_of, is_floating
from .losses import _reduce, check_floating, check_reduction, legacy_reduction, logsigmoid
from .ops.base import BroadcastError, broadcast_shape, constant
from .tensor import Tensor

__all__ = ["cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss",
           "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss",
           "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "linear_cross_entropy"]

# what cosine_embedding_loss adds to each squared norm: PyTorch's EPSILON, a C++ float, so
# 1e-12 rounded to float32 (9.99999996e-13); it decides the gradient at a zero embedding
COSINE_EPSILON = float(np.float32(1e-12))

# how many (sample, target slot, class) triples multilabel_margin_loss compares at a time
PAIRS_PER_STEP = 1 << 20


class TargetOutOfRangeError(ops.OutOfRangeError, RuntimeError):
    """A class index outside [0, C) (or [-1, C) for multilabel_margin_loss): PyTorch's
    RuntimeError for these losses, and the IndexError/ValueError of ``ops.OutOfRangeError``
    that the other class-index losses raise here."""


# ----- arguments ----------------------------------------------------------------------------
def _tensors(fn, **named):
    for name, value in named.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(value).__name__}")


def check_positive_margin(fn, margin):
    """A triplet loss's margin: a real number (TypeError) greater than 0 (ValueError)."""
    margin = float_of(margin, fn, "margin")
    if margin <= 0:
        raise ValueError(f"{fn}: margin must be greater than 0, got {margin!r}")
    return margin


def check_margin_p(fn, p):
    """multi_margin_loss's exponent: 1 or 2 (ValueError, as PyTorch's)."""
    if p != 1 and p != 2:
        raise ValueError(f"{fn}: only p == 1 and p == 2 supported, got {p!r}")


def check_distance_function(fn, distance_function):
    """A triplet loss's distance: a callable or None (TypeError)."""
    if distance_function is not None and not callable(distance_function):
        raise TypeError(f"{fn}: distance_function must be callable or None, got "
                        f"{type(distance_function).__name__}")


def _same_ndim(fn, message, **named):
    if len({value.ndim for value in named.values()}) > 1:
        got = ", ".join(f"{name} {value.ndim}-D {value.shape}" for name, value in named.items())
        raise RuntimeError(f"{fn}: {message}, got {got}")


def _not_requiring_grad(fn, name, value):
    # PyTorch's kernel has no derivative for it and refuses it in forward, grad mode on
    if value.requires_grad and is_grad_enabled():
        raise RuntimeError(f"{fn}: the loss is not differentiable with respect to {name}; "
                           f"pass {name}.detach() (PyTorch refuses it too)")


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6):
    # functional re-exports this module, so its distance is imported when first called
    from .functional import pairwise_distance
    return pairwise_distance(x1, x2, p, eps)


def _as_dtype(losses, dtype):
    return losses if losses.dtype == dtype else losses.astype(dtype)


def _counted(scores, counts):
    # (N, ·) scores times how often each is counted, summed per row; a score counted 0 times
    # adds 0 even when it is NaN or infinite, as in the kernel that never reads it
    return ops.where(counts > 0, scores * constant(counts), 0.0).sum(1)                # (N,)


# ----- margin losses of scores --------------------------------------------------------------
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    r"""Margin ranking :math:`\max(0, -y\,(x_1 - x_2) + \text{margin})` elementwise
    (``F.margin_ranking_loss``): y = 1 asks for x1 ranked above x2 by the margin, y = -1 for
    x2 above x1. The gradient at the kink (a loss of exactly 0) is the linear side's.

    Args:
        input1, input2: the scores x1, x2. target: y, 1 or -1.
        size_average, reduce: torch's deprecated pair (``losses.legacy_reduction``).
        margin: the gap asked for. reduction: ``"mean"``, ``"sum"`` or ``"none"``.

    Shape: input1, input2, target with one number of dims, broadcast together; output ()
        (``"none"``: the broadcast shape).

    Example:
        >>> F.margin_ranking_loss(mg.tensor([0.2]), mg.tensor([0.5]), mg.tensor([1.0]))  # 0.3
    """
    fn = "margin_ranking_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    _tensors(fn, input1=input1, input2=input2, target=target)
    margin = float_of(margin, fn, "margin")
    check_reduction(fn, reduction)
    _same_ndim(fn, "input1, input2 and target must have the same number of dims",
               input1=input1, input2=input2, target=target)
    broadcast_shape(fn, input1.shape, input2.shape, target.shape)
    # a float margin, as PyTorch's double: integer scores give a floating loss
    return _reduce(ops.clamp(-target * (input1 - input2) + float(margin), min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    r"""Hinge embedding (``F.hinge_embedding_loss``): :math:`x` where y = 1,
    :math:`\max(0, \text{margin} - x)` where y = -1, of distances x; a target of any other
    value adds both terms, as PyTorch's kernel. The result has input's dtype.

    Args:
        input: x, e.g. a distance. target: y, 1 or -1; only compared.
        size_average, reduce: torch's deprecated pair (``losses.legacy_reduction``).
        margin: the distance that y = -1 asks for. reduction: ``"mean"``, ``"sum"``, ``"none"``.

    Shape: input and target broadcast together; output () (``"none"``: the broadcast shape).

    Example:
        >>> F.hinge_embedding_loss(F.pairwise_distance(a, b), same_or_not)   # (N,), (N,)
    """
    fn = "hinge_embedding_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    _tensors(fn, input=input, target=target)
    margin = float_of(margin, fn, "margin")
    check_reduction(fn, reduction)
    broadcast_shape(fn, input.shape, target.shape)
    if reduction == "mean" and input.dtype.kind in "biu":     # complex: clamp's error below
        raise RuntimeError(f"{fn}: the mean of a {input.dtype} loss has no dtype (the loss "
                           "takes input's): pass a floating input or reduction='sum'")
    losses = (ops.where(target._array != 1, ops.clamp(float(margin) - input, min=0), 0.0)
              + ops.where(target._array != -1, input, 0.0))
    return _reduce(_as_dtype(losses, input.dtype), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    r"""Soft margin, the logistic loss of labels ±1: :math:`\log(1 + e^{-y x})` elementwise
    (``F.soft_margin_loss``). The result has input's shape and dtype; the target is not
    differentiable (PyTorch refuses one that requires grad).

    Args:
        input: scores x, floating (or complex, as torch's). target: labels y, 1 or -1,
            broadcast to input's shape (complex only with a complex input).
        size_average, reduce: torch's deprecated pair (``losses.legacy_reduction``).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.

    Shape: input (*), target broadcast to (*); output () (``"none"``: (*)).

    Example:
        >>> F.soft_margin_loss(scores, mg.tensor([1.0, -1.0, 1.0]))
    """
    fn = "soft_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    _tensors(fn, input=input, target=target)
    check_reduction(fn, reduction)
    if not is_floating(input.dtype) and input.dtype.kind != "c":    # torch: complex too
        raise RuntimeError(f"{fn}: input must be a floating tensor (the loss takes its "
                           f"dtype), got {input.dtype}")
    if target.dtype.kind == "c" and input.dtype.kind != "c":
        raise RuntimeError(f"{fn}: a complex target needs a complex input (the loss takes "
                           f"input's dtype {input.dtype}), got target of {target.dtype}")
    if broadcast_shape(fn, input.shape, target.shape) != input.shape:
        raise RuntimeError(f"{fn}: target of shape {target.shape} must broadcast to input's "
                           f"shape {input.shape} without growing it")
    _not_requiring_grad(fn, "target", target)
    margins = _as_dtype(-input * target, input.dtype)       # PyTorch writes it into input's
    return _reduce(ops.log1p(ops.exp(margins)), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    r"""Multi-label one-versus-all logistic loss (``F.multilabel_soft_margin_loss``):
    :math:`-\frac{1}{C}\sum_c w_c \left(y_c \log\sigma(x_c) + (1 - y_c) \log\sigma(-x_c)\right)`
    per sample, the classes in the last dim.

    Args:
        input: logits x, floating. target: y in [0, 1] per class (any dtype), broadcast.
        weight: a weight per class (or anything that broadcasts), or None.
        size_average, reduce: torch's deprecated pair (``losses.legacy_reduction``).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.

    Shape: input (*, C), target and weight broadcast with it; output () (``"none"``: (*)).

    Example:
        >>> F.multilabel_soft_margin_loss(logits, labels.float())          # (N, C), (N, C)
    """
    fn = "multilabel_soft_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    _tensors(fn, input=input, target=target)
    check_floating(fn, "input", input)
    if input.ndim == 0:
        raise IndexError(f"{fn}: input must have a class dim (its last), got a 0-d tensor")
    shapes = [input.shape, target.shape]
    if weight is not None:
        _tensors(fn, weight=weight)
        shapes.append(weight.shape)
    broadcast_shape(fn, *shapes)
    check_reduction(fn, reduction)
    losses = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        losses = losses * weight
    classes = input.shape[-1]
    return _reduce(losses.sum(input.ndim - 1) / classes, reduction)


# ----- class-index margin losses ------------------------------------------------------------
def _class_layout(fn, input):
    """(rows N, classes C) of an input (), (C,) or (N, C), C > 0, as PyTorch's check."""
    ndim = input.ndim
    if not (ndim == 0 or (ndim <= 2 and input.shape[-1] != 0)):
        raise RuntimeError(f"{fn}: input must be a non-empty vector (C,) or a matrix (N, C) "
                           f"with C > 0 (N may be 0), got shape {input.shape}")
    return (input.shape[0] if ndim == 2 else 1), (input.shape[-1] if ndim else 1)


def _class_indices(fn, target):
    if target.dtype != "int64":
        # a complex target: torch's NotImplementedError (a RuntimeError: no kernel reads
        # it), else its RuntimeError (the indices must be int64)
        raise (NotImplementedError if target.dtype.kind == "c" else RuntimeError)(
            f"{fn}: target must hold int64 class indices, got {target.dtype}")
    return target._array


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    r"""Multi-label hinge (``F.multilabel_margin_loss``): per sample,
    :math:`\frac{1}{C}\sum_{j}\sum_{i \notin y} \max(0, 1 - (x_{y_j} - x_i))`, over the target
    classes :math:`y_j`: the leading entries of the target row before its first -1 (a class
    listed twice counts twice). The gradient at the kink is 0, as PyTorch's kernel.

    Args:
        input: scores x, floating. target: int64 class indices in [-1, C), input's shape.
        size_average, reduce: torch's deprecated pair (``losses.legacy_reduction``).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.

    Shape: input (), (C,) or (N, C); target of the same shape ((1,) or () for a 0-d input);
        output () (``"none"``: (N,) for (N, C) input, else ()).

    Example:
        >>> F.multilabel_margin_loss(x, mg.tensor([[3, 0, -1, 1]]))     # classes 3 and 0
    """
    fn = "multilabel_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    _tensors(fn, input=input, target=target)
    check_reduction(fn, reduction)
    rows, classes = _class_layout(fn, input)
    fits = (target.ndim == 2 and target.shape == input.shape if input.ndim == 2
            else target.ndim <= 1 and target.size == classes)
    if not fits:
        raise RuntimeError(f"{fn}: target must have input's shape (one int per class), got "
                           f"target {target.shape} for input {input.shape}")
    targets = _class_indices(fn, target).reshape(rows, classes)               # (N, C)
    check_floating(fn, "input", input)
    if ((targets < -1) | (targets >= classes)).any():
        raise TargetOutOfRangeError(f"{fn}: target values must be in [-1, {classes}), got "
                                    f"min {int(targets.min())}, max {int(targets.max())}")
    xp = input.xp
    listed = xp.cumsum(targets == -1, axis=1) == 0        # (N, C): before the row's first -1
    depth = int(listed.sum(1).max()) if rows else 0       # K, the longest list of targets
    is_target = xp.zeros((rows, classes), bool)
    row, slot = xp.nonzero(listed)
    is_target[row, targets[row, slot]] = True
    x = input.reshape(rows, classes)
    picked = x.gather(1, xp.where(listed, targets, 0)[:, :depth])              # (N, K)
    # each pair the kernel counts (z = 1 - x_yj + x_i > 0: a NaN z adds nothing) adds z, so
    # the loss is the scores weighted by how often they are counted: (N, C) in the graph,
    # the (N, K, C) comparisons made a few slots at a time outside it
    slot_counts = xp.zeros((rows, depth), input.dtype)           # (N, K): the i slot j counts
    class_counts = xp.zeros((rows, classes), input.dtype)        # (N, C): the j that count i
    step = max(1, PAIRS_PER_STEP // max(rows * classes, 1))
    for start in range(0, depth, step):
        slots = slice(start, min(start + step, depth))
        with np.errstate(invalid="ignore", over="ignore"):   # inf - inf: NaN, not counted
            z = (1 - picked._array[:, slots, None]) + x._array[:, None, :]     # (N, B, C)
        counted = listed[:, slots, None] & ~is_target[:, None, :] & (z > 0)    # (N, B, C)
        slot_counts[:, slots] = counted.sum(2)
        class_counts += counted.sum(1)
    losses = (_counted(1 - picked, slot_counts) + _counted(x, class_counts)) / classes  # (N,)
    if reduction == "none":
        return losses if input.ndim == 2 else losses.reshape(())
    return _reduce(losses, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    r"""Multi-class hinge (``F.multi_margin_loss``): per sample of class y,
    :math:`\frac{1}{C}\sum_{i \ne y} w_y \max(0, \text{margin} - x_y + x_i)^p`. The gradient
    at the kink is 0, as PyTorch's kernel.

    Args:
        input: scores x, floating. target: int64 class indices in [0, C).
        p: 1 or 2. margin: the gap asked for between x_y and every other score.
        weight: a (C,) weight per class of input's dtype (not differentiable), or None.
        size_average, reduce: torch's deprecated pair (``losses.legacy_reduction``).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.

    Shape: input (), (C,) or (N, C); target () or (N,) ((1,) or () for one sample);
        output () (``"none"``: target's shape).

    Example:
        >>> F.multi_margin_loss(logits, labels, margin=0.5)                   # (N, C), (N,)
    """
    fn = "multi_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    _tensors(fn, input=input, target=target)
    check_reduction(fn, reduction)
    check_margin_p(fn, p)
    if weight is not None:
        _tensors(fn, weight=weight)
        if weight.ndim != 1:
            raise ValueError(f"{fn}: weight must be one-dimensional, got shape {weight.shape}")
    margin = float_of(margin, fn, "margin")
    rows, classes = _class_layout(fn, input)
    if target.ndim > 1 or target.size != rows:
        raise RuntimeError(f"{fn}: target must be 1-D with one class index per sample "
                           f"(({rows},)), got {target.shape} for input {input.shape}")
    if weight is not None:
        if weight.size != classes or weight.dtype != input.dtype:
            raise RuntimeError(f"{fn}: weight must have shape ({classes},) and input's dtype "
                               f"{input.dtype}, got {weight.shape}, {weight.dtype}")
        _not_requiring_grad(fn, "weight", weight)
    labels = _class_indices(fn, target).reshape(rows)                          # (N,)
    check_floating(fn, "input", input)
    if ((labels < 0) | (labels >= classes)).any():
        raise TargetOutOfRangeError(f"{fn}: target values must be in [0, {classes}), got "
                                    f"min {int(labels.min())}, max {int(labels.max())}")
    xp = input.xp
    x = input.reshape(rows, classes)
    margins = (float(margin) - x.gather(1, labels[:, None])) + x                # (N, C)
    hinge = ops.where(margins._array > 0, margins, 0.0)   # the kernel's z > 0: NaN adds 0
    if int(p) == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * constant(weight._array[labels][:, None])               # w_y per row
    others = xp.arange(classes) != labels[:, None]        # (N, C): the class y adds nothing
    losses = ops.where(others, hinge, 0.0).sum(1) / classes                     # (N,)
    return losses.reshape(target.shape) if reduction == "none" else _reduce(losses, reduction)


# ----- embedding losses ---------------------------------------------------------------------
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    r"""Cosine embedding (``F.cosine_embedding_loss``): :math:`1 - \cos(x_1, x_2)` where
    y = 1, :math:`\max(0, \cos(x_1, x_2) - \text{margin})` where y = -1, 0 for any other y,
    with PyTorch's cosine
    :math:`\sum x_1 x_2 / \sqrt{(\lVert x_1\rVert^2 + 10^{-12})(\lVert x_2\rVert^2 + 10^{-12})}`.

    Args:
        input1, input2: the embeddings, broadcast together. target: y, 1 or -1.
        size_average, reduce: torch's deprecated pair (``losses.legacy_reduction``).
        margin: in [-1, 1], 0 to 0.5 suggested. reduction: ``"mean"``, ``"sum"``, ``"none"``.

    Shape: input1, input2 (N, D) with target (N,), or (D,) with target (); output ()
        (``"none"``: (N,) or ()).

    Example:
        >>> F.cosine_embedding_loss(a, b, mg.tensor([1.0, -1.0]))           # (2, D), (2, D)
    """
    fn = "cosine_embedding_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    _tensors(fn, input1=input1, input2=input2, target=target)
    margin = float_of(margin, fn, "margin")
    check_reduction(fn, reduction)
    dim = target.ndim                             # the embedding dim: 1 for (N, D), 0 for (D,)
    if dim > 1:
        raise RuntimeError(f"{fn}: target must be 0-D or 1-D (one label per pair), got shape "
                           f"{target.shape}")
    if input1.ndim != dim + 1 or input2.ndim != dim + 1:
        raise RuntimeError(f"{fn}: a {dim}-D target takes {dim + 1}-D inputs, got "
                           f"{input1.shape} and {input2.shape}")
    pairs = broadcast_shape(fn, input1.shape, input2.shape)
    try:
        np.broadcast_shapes(pairs[:-1], target.shape)
    except ValueError:
        raise BroadcastError(f"{fn}: target of shape {target.shape} must have one label per "
                             f"pair of input1 {input1.shape} and input2 {input2.shape} (the "
                             f"pairs' shape {pairs[:-1]})") from None
    products = (input1 * input2).sum(dim)
    squares1 = (input1 * input1).sum(dim) + COSINE_EPSILON
    squares2 = (input2 * input2).sum(dim) + COSINE_EPSILON
    cosine = products / (squares1 * squares2).sqrt()
    losses = (ops.where(target._array == 1, 1 - cosine, 0.0)
              + ops.where(target._array == -1, ops.clamp(cosine - margin, min=0), 0.0))
    return _reduce(losses, reduction)


def _distance_shapes(fn, anchor, positive, negative, swap):
    """The distances' operands broadcast pairwise, and the distances with each other."""
    positive_pair = broadcast_shape(fn, anchor.shape, positive.shape)
    negative_pair = broadcast_shape(fn, anchor.shape, negative.shape)
    if swap:
        broadcast_shape(fn, positive.shape, negative.shape)
    broadcast_shape(fn, positive_pair[:-1], negative_pair[:-1])


def _triplet(distance, anchor, positive, negative, margin, swap, reduction):
    positive_distance = distance(anchor, positive)
    negative_distance = distance(anchor, negative)
    if swap:          # the positive as the anchor, when it is nearer the negative (a tie: ½ each)
        negative_distance = ops.minimum(negative_distance, distance(positive, negative))
    return _reduce(ops.clamp(margin + positive_distance - negative_distance, min=0), reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    r"""Triplet margin (``F.triplet_margin_loss``):
    :math:`\max(0, \text{margin} + d(a, p) - d(a, n))` with PyTorch's
    :math:`d(x, y) = \lVert x - y + \epsilon \rVert_p` over the last dim
    (``F.pairwise_distance``); ``swap`` takes :math:`\min(d(a, n), d(p, n))` for d(a, n).
    The gradient at the kink is the linear side's, as PyTorch's.

    Args:
        anchor, positive, negative: embeddings, one number of dims, broadcast.
        margin: > 0. p: the norm's order. eps: added to each difference.
        size_average, reduce: torch's deprecated pair (``losses.legacy_reduction``).
        swap: the distance swap (Balntas et al.). reduction: ``"mean"``, ``"sum"``, ``"none"``.

    Shape: each (*, D) (or (D,)); output () (``"none"``: (*)).

    Example:
        >>> F.triplet_margin_loss(a, p, n, margin=0.5)                      # (N, D) each
    """
    fn = "triplet_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    _tensors(fn, anchor=anchor, positive=positive, negative=negative)
    check_reduction(fn, reduction)
    p, eps = float_of(p, fn, "p"), float_of(eps, fn, "eps")
    margin = check_positive_margin(fn, margin)
    check_bool(fn, "swap", swap)
    _same_ndim(fn, "anchor, positive and negative must have the same number of dims",
               anchor=anchor, positive=positive, negative=negative)
    _distance_shapes(fn, anchor, positive, negative, swap)

    def distance(x1, x2):
        return _pairwise_distance(x1, x2, p, eps)
    return _triplet(distance, anchor, positive, negative, margin, swap, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    r"""Triplet margin with any distance (``F.triplet_margin_with_distance_loss``):
    :math:`\max(0, \text{margin} + d(a, p) - d(a, n))`, d = ``distance_function``
    (``F.pairwise_distance`` when None); ``swap`` takes :math:`\min(d(a, n), d(p, n))`.

    Args:
        anchor, positive, negative: embeddings with one number of dims.
        distance_function: d(x1, x2), a callable returning a Tensor of distances, or None.
        margin: > 0. swap: the distance swap. reduction: ``"mean"``, ``"sum"``, ``"none"``.

    Shape: each (*, D) for the default distance; output () (``"none"``: the distances').

    Example:
        >>> cosine = lambda x, y: 1 - F.cosine_similarity(x, y)
        >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=cosine)
    """
    fn = "triplet_margin_with_distance_loss"
    _tensors(fn, anchor=anchor, positive=positive, negative=negative)
    check_reduction(fn, reduction)
    margin = check_positive_margin(fn, margin)
    check_distance_function(fn, distance_function)
    _same_ndim(fn, "anchor, positive and negative must have the same number of dims",
               anchor=anchor, positive=positive, negative=negative)
    if distance_function is None:
        _distance_shapes(fn, anchor, positive, negative, swap)
        distance_function = _pairwise_distance
    return _triplet(distance_function, anchor, positive, negative, margin, swap, reduction)


# ----- likelihood losses --------------------------------------------------------------------
def _variance(fn, input, var):
    """``var`` as a Tensor that broadcasts with input, checked as PyTorch checks it."""
    if isinstance(var, Tensor):
        if (var._array < 0).any():
            raise ValueError(f"{fn}: var has negative entry/entries")
    elif isinstance(var, float):
        if var < 0:
            raise ValueError(f"{fn}: var has negative entry/entries, got {var!r}")
        return var * constant(input.xp.ones_like(input._array))
    else:
        raise TypeError(f"{fn}: var must be a Tensor or a float, got {type(var).__name__}")
    if var.shape == input.shape:
        return var                                        # one variance per element
    if var.shape == input.shape[:-1]:
        return var.unsqueeze(-1)                          # one per row of the last dim
    mismatched = [v for x, v in zip(input.shape, var.shape) if x != v]
    if var.ndim == input.ndim and sum(mismatched) == 1:   # one dim of size 1 to broadcast
        return var
    raise ValueError(f"{fn}: var is of incorrect size: {var.shape} for input {input.shape} "
                     "(input's shape, or it with one dim 1 or the last dim left out)")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    r"""Gaussian negative log-likelihood (``F.gaussian_nll_loss``):
    :math:`\frac{1}{2}\left(\log \max(\sigma^2, \epsilon) + \frac{(x - y)^2}{\max(\sigma^2,
    \epsilon)}\right)`, plus :math:`\frac{1}{2}\log 2\pi` with ``full``. The clamp is
    outside the graph, as PyTorch's: σ²'s gradient is taken at the clamped value.

    Args:
        input: the predicted mean x. target: y, broadcast with input.
        var: σ², >= 0: a Tensor of input's shape, or it with the last dim left out or one dim
            of size 1 (homoscedastic), or a float.
        full: add the constant. eps: the smallest variance. reduction: "mean", "sum", "none".

    Shape: input (*), target and var as above; output () (``"none"``: the broadcast shape).

    Example:
        >>> F.gaussian_nll_loss(mean, y, variance)                          # (N, D) each
    """
    fn = "gaussian_nll_loss"
    _tensors(fn, input=input, target=target)
    var = _variance(fn, input, var)
    check_reduction(fn, reduction)
    eps = float_of(eps, fn, "eps")
    broadcast_shape(fn, input.shape, target.shape, var.shape)
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    losses = 0.5 * (ops.log(var) + (input - target) ** 2 / var)
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce(losses, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    r"""Poisson negative log-likelihood (``F.poisson_nll_loss``): :math:`e^x - y x` of a log
    rate x (``log_input``), else :math:`x - y \log(x + \epsilon)` of a rate; ``full`` adds
    Stirling's :math:`y \log y - y + \frac{1}{2}\log(2\pi y)` where y > 1.

    Args:
        input: the log rate, or the rate. target: counts y, broadcast with input.
        log_input: whether input is the log rate. full: add Stirling's term.
        size_average, reduce: torch's deprecated pair (``losses.legacy_reduction``).
        eps: keeps the log finite at rate 0. reduction: ``"mean"``, ``"sum"``, ``"none"``.

    Shape: input and target broadcast together; output () (``"none"``: the broadcast shape).

    Example:
        >>> F.poisson_nll_loss(log_rate, counts)
    """
    fn = "poisson_nll_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(fn, size_average, reduce)
    check_reduction(fn, reduction)
    _tensors(fn, input=input, target=target)
    check_bool(fn, "log_input", log_input)
    check_bool(fn, "full", full)
    eps = float_of(eps, fn, "eps")
    broadcast_shape(fn, input.shape, target.shape)
    if log_input:
        losses = ops.exp(input) - target * input
    else:
        losses = input - target * ops.log(input + eps)
    if full:
        stirling = target * ops.log(target) - target + 0.5 * ops.log(2 * math.pi * target)
        losses = losses + stirling.masked_fill(target._array <= 1, 0.0)
    return _reduce(losses, reduction)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    r"""The cross entropy of ``linear(input, linear_weight, linear_bias)`` against
    ``target`` (``F.linear_cross_entropy``): torch's reference composition, the logits
    reshaped to (\*, C, d1, ...) for a ``linear_weight`` of shape (C, d1, ..., in_features).

    Args:
        input: (N, in_features) or (in_features,).
        linear_weight: (C, in_features), or (C, d1, ..., in_features) for a K-dim loss
            (batched input only). linear_bias: None or (C, d1, ...).
        target: class indices (N, d1, ...) or probabilities of the logits' shape.
        weight, reduction, label_smoothing: as ``F.cross_entropy``'s. ignore_index: None
            (-100) or a class index; class indices only.
        options: torch's chunking options (``nn.LinearCrossEntropyOptions``), which save
            memory without changing the values: taken, and the composition runs.

    Example:
        >>> F.linear_cross_entropy(h, lm_head.weight, targets)     # h (N, E), targets (N,)
    """
    from .functional import cross_entropy, linear      # functional imports this module
    fn = "linear_cross_entropy"
    check_floating(fn, "input", input)
    check_floating(fn, "linear_weight", linear_weight)
    if not 1 <= input.ndim <= 2:
        raise RuntimeError(f"{fn}: expected input with dimensionality 1 or 2, got "
                           f"{input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"{fn}: expected linear_weight with dimensionality at least 2, "
                           f"got {linear_weight.ndim}")
    batches, in_features = input.shape[:-1], input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"{fn}: expected equal input and linear_weight last dimensions "
                           f"(in_features), got {in_features} and {linear_weight.shape[-1]}")
    classes, out_features = linear_weight.shape[0], linear_weight.shape[1:-1]
    if linear_bias is not None and tuple(linear_bias.shape) != (classes,) + out_features:
        raise RuntimeError(f"{fn}: expected linear_bias shape {(classes,) + out_features}, "
                           f"got {tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"{fn}: K-dimensional loss defined by linear_weight shape "
                           f"{linear_weight.shape} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape {input.shape}")
    logits_shape = batches + (classes,) + out_features
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError(f"{fn}: ignore_index cannot be specified when target contains "
                           "probabilities")
    if out_features:
        rows = math.prod(out_features) * classes
        linear_weight = linear_weight.reshape(rows, in_features)
        linear_bias = None if linear_bias is None else linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
