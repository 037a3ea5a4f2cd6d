r"""The pointwise losses of ``losses.py`` as one node each, with PyTorch's node names
(``MseLossBackward0``, ``SmoothL1LossBackward0``, ``HuberLossBackward0``,
``BinaryCrossEntropyBackward0``, ``BinaryCrossEntropyWithLogitsBackward0``,
``NllLossBackward0``/``NllLoss2DBackward0``, ``LogSigmoidBackward0``), so ``loss.grad_fn``
and its ``next_functions`` read as torch's, and PyTorch's closed-form backward: the formulas
and branch conditions of its ``derivatives.yaml`` and ``Loss.cpp``/``LossNLL.cpp``, so NaN,
±inf, ties and the boundaries |d| = β, |d| = δ give torch's values and gradients.

Each node takes its operands already of one shape and dtype (``losses.py`` broadcasts and
promotes them first, as torch's Python functions do) and reduces inside itself: with
:math:`\text{norm} = 1/n` for "mean" (n elements) and 1 otherwise, every backward is
:math:`\text{norm} \cdot \text{grad} \cdot \partial\ell/\partial(\cdot)` elementwise. Half
precision is computed in float32 and rounded once, as torch's CPU kernels, but where torch
computes in the half dtype itself (binary cross-entropy's kernel, the ATen compositions of
the logits form and of a target's gradient): there each step rounds, as there (``_each``).

Under ``create_graph=True`` each node's ``graph_backward`` (bottom of the file, as
``ops/double_backward.py``'s) writes the same backward with Tensor ops, so the engine's
ordinary backward through it is the double backward."""

import numpy as np

from . import backend
from .autograd.function import Function
from .dtypes import is_half
from .ops.double_backward import _const, _formula, _operand, _select

__all__ = ["BinaryCrossEntropy", "BinaryCrossEntropyWithLogits", "HuberLoss", "LogSigmoid",
           "MseLoss", "NllLoss", "NllLoss2D", "SmoothL1Loss"]


# ----- shared: compute dtype, reduction, the backward's norm --------------------------------
def _up(a):
    # half precision computes in float32 and rounds once at the end (torch's CPU kernels)
    return a if a is None or not is_half(a.dtype) else a.astype(np.float32)


def _reduced(losses, reduction, dtype):
    """The losses (compute dtype) reduced, rounded to ``dtype``; the mean of nothing is NaN."""
    xp = backend.array_module(losses)
    if reduction == "none":
        return losses.astype(dtype, copy=False)
    total = losses.sum()
    if reduction == "mean":
        total = total / losses.size if losses.size else xp.asarray(np.nan, total.dtype)
    return xp.asarray(total, dtype=dtype)


def _norm(reduction, size):
    # the backward's factor of each element's derivative: 1/n for the mean (its n elements)
    return (1.0 / size if size else np.nan) if reduction == "mean" else 1.0


def _grads(ctx, grad_x, grad_t, x, t):
    """The two gradients (compute dtype) rounded to their inputs' dtypes, None unless needed."""
    need_x, need_t = ctx.needs_input_grad[:2]
    return (grad_x.astype(x.dtype, copy=False) if need_x else None,
            grad_t.astype(t.dtype, copy=False) if need_t else None)


# ----- regression: mse, smooth L1, Huber ----------------------------------------------------
class MseLoss(Function):
    r""":math:`(x - t)^2`, reduced; backward :math:`2\,\text{norm}\,(x - t)\,\text{grad}` to
    x and its negative to t (torch's ``mse_loss_backward``)."""

    @staticmethod
    def forward(ctx, x, t, reduction):
        ctx.save_for_backward(x, t)     # the difference is recomputed: one subtraction
        ctx.reduction = reduction
        diff = _up(x) - _up(t)                                               # (*)
        return _reduced(diff * diff, reduction, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved
        diff = _up(x) - _up(t)                                               # (*)
        grad_x = 2.0 * _norm(ctx.reduction, diff.size) * diff * _up(grad)   # (*)
        return _grads(ctx, grad_x, -grad_x, x, t)


class SmoothL1Loss(Function):
    r""":math:`0.5\,d^2/\beta` where :math:`|d| < \beta`, else :math:`|d| - 0.5\,\beta`
    (β > 0; β = 0 is l1_loss, torch's too). Backward (torch's ``smooth_l1_backward``):
    -norm·grad where d ≤ -β, norm·grad where d ≥ β, else norm·d·grad/β, so |d| = β takes
    the linear side (the same value) and NaN the middle (NaN)."""

    @staticmethod
    def forward(ctx, x, t, reduction, beta):
        ctx.save_for_backward(x, t)
        ctx.reduction, ctx.beta = reduction, beta
        xp = backend.array_module(x)
        size = xp.abs(_up(x) - _up(t))                                       # (*)
        losses = xp.where(size < beta, 0.5 * size * size / beta, size - 0.5 * beta)
        return _reduced(losses, reduction, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved
        xp, beta = backend.array_module(x), ctx.beta
        diff = _up(x) - _up(t)                                               # (*)
        scaled = _norm(ctx.reduction, diff.size) * _up(grad)                 # () or (*)
        grad_x = xp.where(diff <= -beta, -scaled,
                          xp.where(diff >= beta, scaled, scaled * diff / beta))
        return _grads(ctx, grad_x, -grad_x, x, t)


class HuberLoss(Function):
    r""":math:`0.5\,d^2` where :math:`|d| < \delta`, else :math:`\delta (|d| - 0.5\,\delta)`.
    Backward (torch's ``huber_backward``): -norm·grad·δ where d ≤ -δ, norm·grad·δ where
    d ≥ δ, else norm·d·grad."""

    @staticmethod
    def forward(ctx, x, t, reduction, delta):
        ctx.save_for_backward(x, t)
        ctx.reduction, ctx.delta = reduction, delta
        xp = backend.array_module(x)
        size = xp.abs(_up(x) - _up(t))                                       # (*)
        losses = xp.where(size < delta, 0.5 * size * size, delta * (size - 0.5 * delta))
        return _reduced(losses, reduction, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved
        xp, delta = backend.array_module(x), ctx.delta
        diff = _up(x) - _up(t)                                               # (*)
        scaled = _norm(ctx.reduction, diff.size) * _up(grad)                 # () or (*)
        grad_x = xp.where(diff <= -delta, -scaled * delta,
                          xp.where(diff >= delta, scaled * delta, scaled * diff))
        return _grads(ctx, grad_x, -grad_x, x, t)


# ----- logistic: logsigmoid, binary cross-entropy (of probabilities, of logits) -------------
def _log_sigmoid(xp, x):
    # min(x, 0) - log1p(e^{-|x|}): the exponent is never positive, stable for any x
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))          # torch's form: e^{∞} = ∞ gives 0, exactly


class LogSigmoid(Function):
    r""":math:`\log\sigma(x) = \min(x, 0) - \mathrm{log1p}(e^{-|x|})`. Backward (torch's
    ``log_sigmoid_backward``): with :math:`z = e^{-|x|}`, grad·(1 - z/(1 + z)) where x < 0,
    else grad·z/(1 + z): σ(-x), ½ at 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _log_sigmoid(backend.array_module(x), _up(x)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        xp, up = backend.array_module(x), _up(x)
        z = xp.exp(-xp.abs(up))                                              # (*)
        rest = z / (1 + z)                                                   # σ(-|x|)
        return (_up(grad) * xp.where(up < 0, 1 - rest, rest)).astype(x.dtype, copy=False)


# torch's floor of x (1 - x) in binary_cross_entropy's backward: 1e-12 as a C++ float
EPSILON = float(np.float32(1e-12))


class BinaryCrossEntropy(Function):
    r""":math:`w\,((t - 1) \max(\mathrm{log1p}(-x), -100) - t \max(\log x, -100))`,
    reduced: each log clamped at -100, as PyTorch. Backward, torch's: the derivative of the
    clamped logs is 0/0 at x = 0 or 1, while :math:`w (x - t) / \max(x (1 - x), 10^{-12})`
    stays finite; to t, :math:`-w\,\mathrm{logit}(x)`. ``weight``, an option (an array that
    broadcasts to x, or None), gets no gradient, as torch's (``losses.py`` composes a graph
    for one that requires it)."""

    @staticmethod
    def forward(ctx, x, t, reduction, weight=None):
        ctx.save_for_backward(x, t, weight)          # the backward reads them, nothing else
        ctx.reduction = reduction
        # torch's CPU kernel computes in x's dtype: half precision rounds after each step
        xp, up_x, up_t, rounded = backend.array_module(x), _up(x), _up(t), _each(x.dtype)
        with np.errstate(divide="ignore"):           # log 0 = -inf, clamped just below
            log_x, log_rest = rounded(xp.log(up_x)), rounded(xp.log1p(-up_x))
        losses = rounded(rounded(rounded(up_t - 1) * xp.maximum(log_rest, -100))
                         - rounded(up_t * xp.maximum(log_x, -100)))
        if weight is not None:
            losses = rounded(losses * _up(weight))
        return _reduced(losses, reduction, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, t, weight = ctx.saved
        xp, up_x, up_t, rounded = backend.array_module(x), _up(x), _up(t), _each(x.dtype)
        up_grad = _up(grad)
        # the kernel's floor is in x's dtype too: in float16 it is 0, and 0/0 NaN
        floor = float(np.asarray(EPSILON).astype(x.dtype))
        grad_x = rounded(rounded(up_grad * rounded(up_x - up_t))
                         / xp.maximum(rounded(rounded(1 - up_x) * up_x), floor))
        with np.errstate(divide="ignore"):
            logit = rounded(xp.log(rounded(up_x / rounded(1 - up_x))))
        grad_t = rounded(-logit * up_grad)
        if weight is not None:
            grad_x, grad_t = rounded(grad_x * _up(weight)), rounded(grad_t * _up(weight))
        if ctx.reduction == "mean":             # torch divides last: grad_input.div_(n)
            grad_x, grad_t = grad_x / x.size if x.size else grad_x, \
                grad_t / x.size if x.size else grad_t
        return _grads(ctx, grad_x, grad_t, x, t)


def _each(dtype):
    """A rounding to ``dtype`` after each step, for the formulas torch composes of ATen ops
    (each rounds in half precision); a no-op otherwise."""
    if not is_half(dtype):
        return lambda a: a
    return lambda a: a.astype(dtype).astype(np.float32)


class BinaryCrossEntropyWithLogits(Function):
    r""":math:`w\,((1 - t)\,x - (1 + (p - 1)\,t) \log\sigma(x))`, p = ``pos_weight``,
    reduced (torch's ``binary_cross_entropy_with_logits``). Backward, torch's: to x,
    :math:`w\,((p t + 1 - t)\,\sigma(x) - p t)` (:math:`w (\sigma(x) - t)` without p); to t,
    :math:`w (\log\sigma(-x) - p \log\sigma(x))` (:math:`-w x` without p). ``weight`` and
    ``pos_weight``, options (Tensors that broadcast to x, or None), get none, as torch's;
    the node keeps their arrays with their versions (``kept_options``), so a write into one
    before backward raises, as torch's saved tensors. torch writes both with ATen ops, so
    half precision rounds after each step here too (``rounded``)."""

    kept_options = ("weight", "pos_weight")

    @staticmethod
    def forward(ctx, x, t, reduction, dtype, weight=None, pos_weight=None):
        ctx.save_for_backward(x, t, weight, pos_weight)
        ctx.reduction = reduction
        xp, up_x, up_t, rounded = backend.array_module(x), _up(x), _up(t), _each(dtype)
        log_sigmoid = rounded(_log_sigmoid(xp, up_x))                        # (*)
        if pos_weight is not None:
            log_sigmoid = rounded(log_sigmoid * rounded(rounded(_up(pos_weight) - 1) * up_t
                                                        + 1))
        losses = rounded(rounded(rounded(1 - up_t) * up_x) - log_sigmoid)
        if weight is not None:
            losses = rounded(losses * _up(weight))
        return _reduced(losses, reduction, dtype)      # the target's dtype, as torch's

    @staticmethod
    def backward(ctx, grad):
        x, t, weight, pos_weight = ctx.saved
        xp, up_x, up_t, rounded = backend.array_module(x), _up(x), _up(t), _each(x.dtype)
        if pos_weight is None:
            grad_x, grad_t = rounded(rounded(_sigmoid(xp, up_x)) - up_t), -up_x
        else:
            p = _up(pos_weight)
            positive = rounded(p * up_t)                                     # p·t (*)
            grad_x = rounded(rounded(rounded(rounded(positive + 1) - up_t)
                                     * rounded(_sigmoid(xp, up_x))) - positive)
            grad_t = rounded(rounded(_log_sigmoid(xp, -up_x))
                             - rounded(rounded(_log_sigmoid(xp, up_x)) * p))
        if weight is not None:
            grad_x, grad_t = rounded(grad_x * _up(weight)), rounded(grad_t * _up(weight))
        grad_x, grad_t = rounded(grad_x * _up(grad)), rounded(grad_t * _up(grad))
        if ctx.reduction == "mean":
            norm = _norm("mean", x.size)
            grad_x, grad_t = grad_x * norm, grad_t * norm
        return _grads(ctx, grad_x, grad_t, x, t)


# ----- class indices: nll_loss --------------------------------------------------------------
def _rows(xp, a, classes):
    # (C,), (N, C) or (N, C, d1, ...) as rows (M, C), the class dim last
    return xp.moveaxis(a, 1, -1).reshape(-1, classes) if a.ndim > 2 else a.reshape(-1, classes)


class NllLoss(Function):
    r""":math:`-w_{t_n} x_{n, t_n}` per target n, 0 where :math:`t_n` = ignore_index;
    "mean" is :math:`\sum_n \ell_n / \sum_n w_{t_n}` over the targets kept (NaN for a total
    of 0), as torch's. Backward, torch's: :math:`-w_{t_n}\,\text{grad}_n` (over the total
    for "mean") at each kept :math:`(n, t_n)`, 0 elsewhere. The targets and the mask of
    kept ones are options (``target``, ``keep``: flat (M,) arrays), and so is ``weight``
    (C,), which gets no gradient; the node keeps only arrays forward makes from them, so a
    later write to the target or the weight changes nothing. ``NllLoss2D`` is the node of
    an input of 3 or more dims, torch's name there."""

    @staticmethod
    def forward(ctx, x, target, keep, reduction, target_shape, weight=None):
        xp, classes = backend.array_module(x), x.shape[0 if x.ndim == 1 else 1]
        safe = xp.where(keep, target, 0)        # an ignored row's stand-in class, kept out
        per_row = xp.where(keep, 1 if weight is None else _up(weight)[safe], 0)     # (M,)
        ctx.input_shape, ctx.dtype, ctx.reduction = x.shape, x.dtype, reduction
        ctx.target_shape, ctx.safe, ctx.keep = target_shape, safe, keep
        rows = _rows(xp, _up(x), classes)                                    # (M, C)
        picked = rows[xp.arange(rows.shape[0]), safe]                        # (M,)
        # selected, not multiplied by a 0 weight: an ignored row's stand-in may be -inf
        losses = xp.where(keep, -per_row * picked, 0)                        # (M,)
        ctx.per_row = per_row.astype(losses.dtype)
        if reduction == "none":
            return losses.reshape(target_shape).astype(x.dtype)
        total = ctx.total = ctx.per_row.sum()
        loss = losses.sum()
        if reduction == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):        # 0/0: NaN, torch's
                loss = loss / total
        return xp.asarray(loss, dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return _nll_coefficients(ctx, _up(grad)).astype(ctx.dtype)


class NllLoss2D(NllLoss):
    """``NllLoss`` on an input (N, C, d1, ...), named as torch's node there."""


def _nll_coefficients(ctx, grad):
    """-w[t]·grad (over the total for "mean") at each kept (row, t), 0 elsewhere, as an
    array of the input's shape; ``grad`` () or the target's shape."""
    xp = backend.array_module(ctx.per_row)
    per_row = ctx.per_row                                                    # (M,)
    if ctx.reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            per_row = per_row / ctx.total
    rows_grad = -per_row * (grad.reshape(-1) if ctx.reduction == "none" else grad)   # (M,)
    rows_grad = xp.where(ctx.keep, rows_grad, 0)    # an ignored row's 0/0 of a 0 total
    shape = ctx.input_shape
    classes = shape[0 if len(shape) == 1 else 1]
    rows = xp.zeros((per_row.shape[0], classes), rows_grad.dtype)           # (M, C)
    rows[xp.arange(per_row.shape[0]), ctx.safe] = rows_grad
    if len(shape) <= 2:
        return rows.reshape(shape)
    moved = (shape[0],) + tuple(shape[2:]) + (classes,)                     # (N, d1, ..., C)
    return xp.moveaxis(rows.reshape(moved), -1, 1)


# ----- double backward: each node's backward again with Tensor ops --------------------------
def _differences(ctx):
    x, t = _operand(ctx, 0, ctx.saved[0]), _operand(ctx, 1, ctx.saved[1])
    return x - t, ctx.saved[0].size


def _both(ctx, grad_x):
    need_x, need_t = ctx.needs_input_grad[:2]
    return (grad_x if need_x else None), (-grad_x if need_t else None)


@_formula(MseLoss)
def _mse_graph(ctx, grad):
    diff, size = _differences(ctx)
    return _both(ctx, grad * diff * (2.0 * _norm(ctx.reduction, size)))


@_formula(SmoothL1Loss)
def _smooth_l1_graph(ctx, grad):
    # the masks come from saved values: constants, so the second derivative is 1/β inside
    # |d| < β and 0 outside (torch's smooth_l1_loss_double_backward)
    diff, size = _differences(ctx)
    beta, saved = ctx.beta, ctx.saved[0] - ctx.saved[1]
    scaled = grad * _norm(ctx.reduction, size)
    inside = _select(saved >= beta, scaled.expand(diff.shape), scaled * diff / beta)
    return _both(ctx, _select(saved <= -beta, -scaled.expand(diff.shape), inside))


@_formula(HuberLoss)
def _huber_graph(ctx, grad):
    diff, size = _differences(ctx)
    delta, saved = ctx.delta, ctx.saved[0] - ctx.saved[1]
    scaled = grad * _norm(ctx.reduction, size)
    inside = _select(saved >= delta, (scaled * delta).expand(diff.shape), scaled * diff)
    return _both(ctx, _select(saved <= -delta, (-scaled * delta).expand(diff.shape), inside))


@_formula(LogSigmoid)
def _log_sigmoid_graph(ctx, grad):
    return (grad * (-_operand(ctx, 0, ctx.saved[0])).sigmoid(),)           # σ(-x)


@_formula(BinaryCrossEntropy)
def _binary_cross_entropy_graph(ctx, grad):
    # backward's formulas as Tensor ops; their derivatives are torch's double backward,
    # ∂/∂x of grad_x = grad (x² - 2xt + t) / (x (1 - x))², ∂/∂t = -grad / (x (1 - x)), and
    # ∂/∂x of grad_t = -grad / (x (1 - x)) (the clamp's floor a constant)
    saved_x, saved_t, weight = ctx.saved
    x, t = _operand(ctx, 0, saved_x), _operand(ctx, 1, saved_t)
    scaled = grad * _norm(ctx.reduction, saved_x.size)
    if weight is not None:
        scaled = scaled * _const(weight)
    need_x, need_t = ctx.needs_input_grad[:2]
    grad_x = scaled * (x - t) / (x * (1 - x)).clamp(min=EPSILON) if need_x else None
    grad_t = -scaled * (x / (1 - x)).log() if need_t else None
    return grad_x, grad_t


@_formula(BinaryCrossEntropyWithLogits)
def _binary_cross_entropy_with_logits_graph(ctx, grad):
    saved_x, saved_t, weight, pos_weight = ctx.saved
    x, t = _operand(ctx, 0, saved_x), _operand(ctx, 1, saved_t)
    scaled = grad * _norm(ctx.reduction, saved_x.size)
    if weight is not None:
        scaled = scaled * _const(weight)
    if pos_weight is None:
        grad_x, grad_t = x.sigmoid() - t, -x
    else:
        p = _const(pos_weight)
        positive = p * t
        grad_x = (positive + 1 - t) * x.sigmoid() - positive
        grad_t = LogSigmoid.apply(-x) - LogSigmoid.apply(x) * p
    need_x, need_t = ctx.needs_input_grad[:2]
    return (grad_x * scaled if need_x else None), (grad_t * scaled if need_t else None)


@_formula(NllLoss, reads_inputs=False)
def _nll_graph(ctx, grad):
    # linear in grad, the input only routing it: grad times the constant -w[t] one-hots
    one = ctx.per_row.dtype.type(1)
    coefficients = _const(_nll_coefficients(ctx, np.asarray(one) if ctx.reduction != "none"
                                             else np.ones(ctx.target_shape, ctx.per_row.dtype)))
    if ctx.reduction == "none" and len(ctx.input_shape) > 1:
        grad = grad.unsqueeze(1)                                 # (N, 1, d1, ...)
    return (grad * coefficients).astype(ctx.dtype)


# torch's nll backward reads the input (to size its gradient): a zero derivative to it
NllLoss.graph_masks_by_inputs = True
