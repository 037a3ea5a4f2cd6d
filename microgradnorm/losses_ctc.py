r"""``F.ctc_loss``: the connectionist temporal classification loss, with
``torch.nn.functional``'s arguments, reductions, checks and gradient; ``functional``
re-exports it and ``nn.CTCLoss`` calls it.

One node, ``CtcLoss``, gives each sequence's :math:`-\log p(l \mid x)` by the forward
(alpha) recursion in log space and carries the closed-form gradient of the forward-backward
(alpha-beta) algorithm; the reductions and ``zero_infinity`` are primitive ops after it, as in
torch. The array functions below are the whole computation: one loop over time, each step
vectorised over the batch and the extended labels.

The recursions (Graves et al. 2006; docs/derivations.md has the derivation). The extended
label sequence :math:`l'` is the target with a blank before, between and after its labels
(length 2S + 1); :math:`y_t(k) = \exp(\text{log\_probs}[t, k])`. With
:math:`\alpha_t(s)` the probability of the prefixes ending at :math:`l'_s` at time t and
:math:`\beta_t(s)` that of the suffixes starting there (both including :math:`y_t(l'_s)`):

.. math::

    \alpha_t(s) = (\alpha_{t-1}(s) + \alpha_{t-1}(s-1) + [l'_s \ne b, l'_s \ne l'_{s-2}]\,
    \alpha_{t-1}(s-2))\, y_t(l'_s), \qquad p = \alpha_{T-1}(2S) + \alpha_{T-1}(2S-1)

and :math:`\beta` the same backwards from :math:`T-1`. For every t,
:math:`p = \sum_s \alpha_t(s)\beta_t(s) / y_t(l'_s)`, so

.. math::

    \frac{\partial(-\log p)}{\partial\,\text{log\_probs}[t, k]} =
    -\frac{1}{p} \sum_{s: l'_s = k} \frac{\alpha_t(s)\beta_t(s)}{y_t(k)} = -\gamma_t(k),

the posterior occupancy of class k at time t (:math:`\sum_k \gamma_t(k) = 1`). torch returns
:math:`y_t(k) - \gamma_t(k)` instead: the gradient with respect to the logits under a
``log_softmax`` (whose backward adds :math:`y_t(k) \sum_j \gamma_t(j) = y_t(k)`), and the
same gradient after that backward, since the rows of :math:`y - \gamma` sum to 0. Here too,
so a ``log_softmax`` before the loss sees torch's gradients exactly; frames past a sequence's
input length get 0.
"""

import numpy as np

from . import backend, ops
from .autograd.function import Function
from .dtypes import NotFloatingError, check_bool, check_number, is_floating, is_half
from .fused.arguments import RankError
from .losses import check_reduction
from .ops.base import constant
from .tensor import Tensor

__all__ = ["ctc_loss"]


class TargetOutOfRangeError(ops.OutOfRangeError, RuntimeError):
    """A target label outside [0, C): a RuntimeError, as torch's errors of ctc_loss, and
    the IndexError/ValueError of ``ops.OutOfRangeError``."""


# ----- the recursions, on arrays (xp: NumPy or CuPy) -----------------------------------------
def extended_labels(targets, target_lengths, blank):
    r"""The extended labels :math:`l'` (N, 2S + 1), blank at the even places and the target
    at the odd ones (blank past each target's length), and where the step
    :math:`s - 2 \to s` is allowed (N, 2S + 1): at a label that differs from the one two
    places before (never at a blank)."""
    xp = backend.array_module(targets)
    count, longest = targets.shape
    labels = xp.full((count, 2 * longest + 1), blank, dtype=np.int64)
    inside = xp.arange(longest)[None, :] < target_lengths[:, None]          # (N, S)
    labels[:, 1::2] = xp.where(inside, targets, blank)
    skip = xp.zeros(labels.shape, dtype=bool)
    skip[:, 3::2] = inside[:, 1:] & (labels[:, 3::2] != labels[:, 1:-2:2])
    return labels, skip


def _shifted(values, by, fill):
    # values (N, W) moved ``by`` places right (by > 0) or left (by < 0) along s, filled
    out = backend.array_module(values).full_like(values, fill)
    if by > 0:
        out[:, by:] = values[:, :-by]
    else:
        out[:, :by] = values[:, -by:]
    return out


def _log_sum(*terms):
    r""":math:`\log \sum_i e^{x_i}` elementwise, rounded as torch's CPU kernel rounds it:
    :math:`\log \sum_i e^{x_i - m} + m` with m the largest term (0 where all are -inf),
    the sum taken in order. One rounding at the magnitude of m where nested ``logaddexp``
    gives two: over a long sequence in float32 the recursions then drift from the exact
    values as torch's do, and the gradient stays within float32's tolerance of torch's."""
    xp = backend.array_module(terms[0])
    top = terms[0]
    for term in terms[1:]:
        top = xp.maximum(top, term)
    top = xp.where(top == -np.inf, top.dtype.type(0), top)
    total = _rounded(xp.exp, terms[0] - top)
    for term in terms[1:]:
        total = total + _rounded(xp.exp, term - top)
    return _rounded(xp.log, total) + top


def _rounded(function, values):
    # exp and log correctly rounded to float32, as the C library's expf and logf that
    # torch's kernel calls: NumPy's own float32 exp and log may be off by a few ulps, and
    # one ulp of a log-probability sum near 100 is a relative 1e-5 in the gradient
    if values.dtype == np.float32:
        return function(values.astype(np.float64)).astype(np.float32)
    return function(values)


def ctc_alpha(emissions, skip, input_lengths, target_lengths):
    r"""The forward variables :math:`\log \alpha_t(s)` (T, N, W) from the emission
    log-probabilities ``emissions`` (T, N, W) = log_probs[t, n, l'_s], and each sequence's
    negative log-likelihood (N,): :math:`-\log(\alpha_{L-1}(2S) + \alpha_{L-1}(2S-1))` at
    its input length L and target length S (0 when L = S = 0, inf when L = 0 < S)."""
    xp = backend.array_module(emissions)
    steps, count, width = emissions.shape
    log_alpha = xp.full(emissions.shape, -np.inf, dtype=emissions.dtype)
    log_alpha[0, :, :2] = emissions[0, :, :2]              # start at the blank or label 1
    for t in range(1, steps):
        previous = log_alpha[t - 1]                                           # (N, W)
        two_back = xp.where(skip, _shifted(previous, 2, -np.inf), -np.inf)
        log_alpha[t] = _log_sum(previous, _shifted(previous, 1, -np.inf), two_back) \
            + emissions[t]
    batch = xp.arange(count)
    last = log_alpha[xp.maximum(input_lengths - 1, 0), batch]                 # (N, W)
    end = last[batch, 2 * target_lengths]
    before = xp.where(target_lengths > 0, last[batch, xp.maximum(2 * target_lengths - 1, 0)],
                      -np.inf)
    log_likelihood = _log_sum(end, before)
    # no frame: the empty target has probability 1, any other 0
    log_likelihood = xp.where(input_lengths == 0, xp.where(target_lengths == 0, 0.0, -np.inf),
                              log_likelihood)
    return log_alpha, (-log_likelihood).astype(emissions.dtype)


def ctc_beta(emissions, skip, input_lengths, target_lengths):
    r"""The backward variables :math:`\log \beta_t(s)` (T, N, W): each sequence starts at its
    last frame L - 1 from the final blank and the last label, and is -inf at t >= L and
    past its extended labels."""
    xp = backend.array_module(emissions)
    steps, count, width = emissions.shape
    log_beta = xp.full(emissions.shape, -np.inf, dtype=emissions.dtype)
    batch = xp.arange(count)
    # s -> s + 2 is allowed where s + 2 may be reached from s: skip moved two places left
    skip_ahead = _shifted(skip, -2, False)
    for t in range(steps - 1, -1, -1):
        if t < steps - 1:
            following = log_beta[t + 1]                                        # (N, W)
            two_ahead = xp.where(skip_ahead, _shifted(following, -2, -np.inf), -np.inf)
            log_beta[t] = _log_sum(following, _shifted(following, -1, -np.inf),
                                   two_ahead) + emissions[t]
        starting = batch[input_lengths - 1 == t]            # the sequences whose last frame t
        if starting.size:
            ends = 2 * target_lengths[starting]
            log_beta[t, starting, ends] = emissions[t, starting, ends]
            labelled = starting[ends > 0]
            log_beta[t, labelled, ends[ends > 0] - 1] = emissions[t, labelled, ends[ends > 0] - 1]
    return log_beta


def ctc_gradient(grad, log_probs, labels, log_alpha, log_beta, nll, input_lengths,
                 zero_infinity):
    r"""torch's gradient (T, N, C): :math:`g_n (y_t(k) - \gamma_t(k))` for t < L, 0 after,
    with :math:`\gamma_t(k) = \sum_{s: l'_s = k} \exp(\log\alpha_t(s) + \log\beta_t(s) -
    \text{log\_probs}[t, k] + \text{nll})`, the occupancy; NaN for a sequence of infinite
    loss (torch's :math:`\exp(-\infty + \infty)`), 0 with ``zero_infinity``.

    Computed in torch's order, so float32 rounds as torch's does: the
    :math:`\log\alpha + \log\beta` of the places of one class summed in log space (``_log_sum``,
    from the last place to the first), then :math:`\exp((\text{that} + \text{nll}) -
    \text{log\_probs})`."""
    xp = backend.array_module(log_probs)
    steps, count, classes = log_probs.shape
    both = log_alpha + log_beta                                                 # (T, N, W)
    summed = xp.full(log_probs.shape, -np.inf, dtype=log_probs.dtype)          # (T, N, C)
    batch = xp.arange(count)
    for place in range(labels.shape[1] - 1, -1, -1):      # a label repeated in l' adds up
        where = (slice(None), batch, labels[:, place])
        before, term = summed[where], both[:, :, place]
        summed[where] = xp.where(before == -np.inf, term, _log_sum(before, term))
    out = (_rounded(xp.exp, log_probs)
           - _rounded(xp.exp, summed + nll[None, :, None] - log_probs)) * grad[None, :, None]
    infinite = xp.isinf(nll)
    out[:, infinite] = 0.0 if zero_infinity else np.nan
    out[xp.arange(steps)[:, None] >= input_lengths[None, :]] = 0.0         # frames past L
    return out


class CtcLoss(Function):
    """Each sequence's CTC loss -log p(target | log_probs) (N,) from log_probs (T, N, C);
    the backward is the alpha-beta formula above (torch's ``CtcLossBackward0``)."""

    kept_options = ("targets", "input_lengths", "target_lengths")

    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        xp = backend.array_module(log_probs)
        labels, skip = extended_labels(targets, target_lengths, blank)          # (N, W)
        steps = log_probs.shape[0]
        emissions = xp.take_along_axis(log_probs, xp.broadcast_to(
            labels[None], (steps,) + labels.shape), axis=2)                     # (T, N, W)
        log_alpha, nll = ctc_alpha(emissions, skip, input_lengths, target_lengths)
        # alpha is kept (T·N·W), beta recomputed in backward: torch keeps the same
        ctx.save_for_backward(log_probs, log_alpha, nll)
        ctx.labels, ctx.skip = labels, skip
        ctx.lengths = (input_lengths, target_lengths)
        ctx.zero_infinity = zero_infinity
        return nll

    @staticmethod
    def backward(ctx, grad):
        log_probs, log_alpha, nll = ctx.saved
        xp = backend.array_module(log_probs)
        steps = log_probs.shape[0]
        emissions = xp.take_along_axis(log_probs, xp.broadcast_to(
            ctx.labels[None], (steps,) + ctx.labels.shape), axis=2)             # (T, N, W)
        input_lengths, target_lengths = ctx.lengths
        log_beta = ctc_beta(emissions, ctx.skip, input_lengths, target_lengths)
        return ctc_gradient(grad, log_probs, ctx.labels, log_alpha, log_beta, nll,
                            input_lengths, ctx.zero_infinity)


# ----- arguments ----------------------------------------------------------------------------
def _lengths(name, value, count, limit):
    """``input_lengths`` or ``target_lengths``: an integer Tensor (any shape of ``count``
    elements) or a tuple/list of ints, each in [0, limit] (limit None: no upper bound)."""
    if isinstance(value, Tensor):
        if value.dtype.kind not in "iu":
            raise RuntimeError(f"ctc_loss: {name} must be integral, got {value.dtype}")
        lengths = backend.to_numpy(value._array).reshape(-1).astype(np.int64)
    elif isinstance(value, (tuple, list)):
        for length in value:
            check_number("ctc_loss", name, length, integer=True)
        lengths = np.asarray(value, dtype=np.int64).reshape(-1)
    else:
        raise TypeError(f"ctc_loss: {name} must be a Tensor or a tuple of ints, got "
                        f"{type(value).__name__}")
    if lengths.size != count:
        raise RuntimeError(f"ctc_loss: {name} must be of size batch_size ({count}), got "
                           f"{lengths.size}")
    if lengths.size and lengths.min() < 0:
        raise RuntimeError(f"ctc_loss: Expected {name} to have value at least 0, but got "
                           f"value {lengths.min()}")
    if limit is not None and lengths.size and lengths.max() > limit:
        raise RuntimeError(f"ctc_loss: Expected {name} to have value at most {limit}, but got "
                           f"value {lengths.max()}")
    return lengths


def _padded_targets(targets, target_lengths, count):
    """The targets as (N, S) int64, S the longest target length: from padded (N, S') with
    S' >= each length, or concatenated (sum of the lengths,)."""
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"ctc_loss: targets must be 1-D (concatenated) or 2-D (N, S), got "
                           f"{targets.ndim}-D")
    longest = int(target_lengths.max()) if target_lengths.size else 0
    if targets.ndim == 2:
        if targets.shape[0] != count:
            raise RuntimeError(f"ctc_loss: targets (N, S) must have batch_size ({count}) rows, "
                               f"got {targets.shape[0]}")
        if targets.shape[1] < longest:
            raise RuntimeError(f"ctc_loss: Expected tensor to have size at least {longest} at "
                               f"dimension 1, but got size {targets.shape[1]} for argument #2 "
                               f"'targets'")
        return targets[:, :longest]
    total = int(target_lengths.sum())
    if targets.shape[0] != total:
        raise RuntimeError(f"ctc_loss: Expected tensor to have size {total} at dimension 0, "
                           f"but got size {targets.shape[0]} for argument #2 'targets' (the "
                           f"sum of target_lengths)")
    starts = np.cumsum(target_lengths) - target_lengths                      # (N,)
    places = np.minimum(starts[:, None] + np.arange(longest), max(total - 1, 0))
    inside = np.arange(longest) < target_lengths[:, None]
    return np.where(inside, targets[places] if total else 0, 0)


def _check_labels(targets, target_lengths, classes):
    inside = np.arange(targets.shape[1]) < target_lengths[:, None]
    used = targets[inside]
    if used.size and (used.min() < 0 or used.max() >= classes):
        raise TargetOutOfRangeError(f"ctc_loss: targets must be in [0, {classes}) (the "
                                    f"classes), got {used.min()} to {used.max()}")


def _check_log_probs(log_probs):
    if not isinstance(log_probs, Tensor):
        raise TypeError(f"ctc_loss: log_probs must be a Tensor, got "
                        f"{type(log_probs).__name__}")
    if not is_floating(log_probs.dtype):    # torch's NotImplementedError (no kernel), a TypeError
        raise NotFloatingError(f"ctc_loss: log_probs must be floating, got {log_probs.dtype}")
    if is_half(log_probs.dtype):
        raise NotImplementedError(f"ctc_loss: not implemented for {log_probs.dtype} (torch's "
                                  f"CPU has float32 and float64)")
    if log_probs.ndim not in (2, 3):        # torch's IndexError for a 0-d one (its size(1))
        raise (RankError if log_probs.ndim == 0 else RuntimeError)(
            f"ctc_loss: log_probs must be (T, N, C) or unbatched (T, C), got {log_probs.ndim}-D")
    if log_probs.size == 0:
        raise RuntimeError("ctc_loss: log_probs tensor must not be empty")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    r"""The CTC loss :math:`-\log p(y \mid x)`, summed over every alignment of each target
    to its frames (``F.ctc_loss``); the module's docstring has the recursions and the
    gradient, torch's (the gradient with respect to logits under a ``log_softmax``).

    Args:
        log_probs: log-probabilities (T, N, C), or (T, C) for one sequence, float32 or
            float64 (usually ``log_softmax`` outputs).
        targets: labels in [0, C), padded (N, S) (read up to each target length) or the
            targets concatenated (sum of target_lengths,); integer (floats are cast, as
            torch's).
        input_lengths, target_lengths: each sequence's number of frames (<= T) and of
            labels: an integer Tensor or a tuple of ints, N of them.
        blank: the blank label, in [0, C).
        reduction: "mean" (each loss divided by its target length, at least 1, then the
            mean over the batch), "sum" or "none".
        zero_infinity: a sequence whose target cannot fit its frames has loss inf (and NaN
            gradients); True makes that loss and its gradient 0.

    Shape: output () or, with "none", (N,) (() for unbatched input); log_probs' dtype.

    Example:
        >>> logp = mg.randn(50, 4, 20).log_softmax(2)
        >>> F.ctc_loss(logp, mg.randint(1, 20, (4, 10)), (50,) * 4, (10, 8, 9, 10))
    """
    _check_log_probs(log_probs)
    batched = log_probs.ndim == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)                                      # (T, 1, C)
    steps, count, classes = log_probs.shape
    check_number("ctc_loss", "blank", blank, integer=True)
    if not 0 <= blank < classes:
        raise RuntimeError(f"ctc_loss: blank must be in label range [0, {classes}), got "
                           f"{blank}")
    check_reduction("ctc_loss", reduction)
    check_bool("ctc_loss", "zero_infinity", zero_infinity)
    if not isinstance(targets, Tensor):
        raise TypeError(f"ctc_loss: targets must be a Tensor, got {type(targets).__name__}")
    # torch casts targets of any dtype to int64: a float's integer part, a bool's 0 or 1 (0
    # is a blank, which no alignment emits: an infinite loss), a complex one's real part
    labels = backend.to_numpy(targets._array)
    labels = (labels.real if labels.dtype.kind == "c" else labels).astype(np.int64)
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss: input_lengths and target_lengths must both be Tensors or "
                        "both tuples of ints, as torch's two signatures")
    input_lengths = _lengths("input_lengths", input_lengths, count, steps)
    target_lengths = _lengths("target_lengths", target_lengths, count, None)
    labels = _padded_targets(labels, target_lengths, count)
    _check_labels(labels, target_lengths, classes)
    device = log_probs.device
    losses = CtcLoss.apply(log_probs, targets=backend.to_device(labels, device),
                           input_lengths=backend.to_device(input_lengths, device),
                           target_lengths=backend.to_device(target_lengths, device),
                           blank=int(blank), zero_infinity=zero_infinity)
    if zero_infinity:           # torch's where(loss == inf, 0, loss), after the node
        zero = constant(log_probs.xp.zeros((), log_probs.dtype))
        losses = ops.where(losses._array == np.inf, zero, losses)
    if reduction == "mean":     # each loss per label first, then the batch's mean
        per_label = np.maximum(target_lengths, 1).astype(log_probs.dtype)
        return (losses / constant(backend.to_device(per_label, device))).mean()
    if reduction == "sum":
        return losses.sum()
    return losses if batched else losses.reshape(())
