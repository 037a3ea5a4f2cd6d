"""Loss Modules with ``torch.nn``'s names and defaults, each ``forward`` the ``F`` function
of its name with the module's options. A class weight (``weight``, ``pos_weight``) is a
buffer, as in PyTorch: it moves with ``.to()`` and is saved in the state dict. Options are
checked when the module is built; an array input or target becomes a Tensor first.

Each constructor takes torch's signature, PyTorch's deprecated ``size_average`` and
``reduce`` in their places (``nn.MSELoss(False)``, ``nn.CrossEntropyLoss(None, True, -100,
None, "mean")``): when either is given, ``_Loss.__init__`` turns the pair into the
``reduction`` attribute with torch's warning, as torch's ``_Loss`` does."""

import sys
import warnings

from .. import functional as F
from ..dtypes import check_number, float_of
from ..losses import LossArgumentError, check_reduction, legacy_reduction
from .module import Module


class _Loss(Module):
    """A loss's ``reduction``, checked: "mean", "sum", "none" (and ``extra_reductions``);
    torch's deprecated ``size_average`` and ``reduce``, when either is given, set it in
    place of ``reduction`` (``losses.legacy_reduction``)."""

    extra_reductions = ()

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        name = type(self).__name__
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(name, size_average, reduce, _caller_level(self))
        check_reduction(name, reduction, self.extra_reductions)
        self.reduction = reduction

    def _tensors(self, input, target):
        return self._check_input(input), self._check_input(target)


def _caller_level(module):
    # the warning's stacklevel that names the line building the module: past
    # legacy_reduction, _Loss.__init__ and each subclass __init__ that called it
    level, frame = 3, sys._getframe(2)
    while frame is not None and frame.f_code.co_name == "__init__" and \
            frame.f_locals.get("self") is module:
        level, frame = level + 1, frame.f_back
    return level


class _WeightedLoss(_Loss):
    """A loss with a weight per class (or element), registered as the buffer ``weight``."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


def _check_class_options(name, ignore_index, label_smoothing=0.0):
    check_number(name, "ignore_index", ignore_index, integer=True)
    float_of(label_smoothing, name, "label_smoothing")
    if not 0 <= label_smoothing <= 1:
        raise LossArgumentError(f"{name}: label_smoothing must be in [0, 1], got "
                                f"{label_smoothing!r}")


class CrossEntropyLoss(_WeightedLoss):
    r"""Cross-entropy of logits and integer targets (``F.cross_entropy``):
    :math:`-w_t \log\mathrm{softmax}(x)_t`, the mean over the targets kept; or of class
    probabilities, a floating target of the input's shape:
    :math:`-\sum_c w_c\,t_c \log\mathrm{softmax}(x)_c`, the mean over the rows.

    Args:
        weight: a floating (C,) Tensor, a weight per class, or None.
        ignore_index: the target value that adds nothing (none with probabilities).
        reduction: "mean", "sum", "none". label_smoothing: ε in [0, 1].

    Shape:
        input (C,), (N, C) or (N, C, d1, ...); target (), (N,) or (N, d1, ...), or
        input's shape.

    Example:
        >>> nn.CrossEntropyLoss(label_smoothing=0.1)(logits, targets)
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        _check_class_options("CrossEntropyLoss", ignore_index, label_smoothing)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        """The loss. Shape: (N, C), (N,) -> () ("none": (N,))."""
        input, target = self._tensors(input, target)
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    r"""Negative log-likelihood of log-probabilities and integer targets (``F.nll_loss``):
    :math:`-w_t x_t`, the mean over the targets kept. ``NLLLoss()(LogSoftmax(1)(x), t)`` is
    ``CrossEntropyLoss()(x, t)``.

    Shape:
        input (C,), (N, C) or (N, C, d1, ...); target (), (N,) or (N, d1, ...).
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        _check_class_options("NLLLoss", ignore_index)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        """The loss. Shape: (N, C), (N,) -> () ("none": (N,))."""
        input, target = self._tensors(input, target)
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)



class NLLLoss2d(NLLLoss):
    """``NLLLoss`` under its old name for (N, C, H, W) inputs, with torch's FutureWarning:
    the same loss (``NLLLoss`` takes any number of trailing dims).

    Example:
        >>> mg.nn.NLLLoss2d()(mg.zeros(1, 2, 3, 3), mg.zeros(1, 3, 3, dtype=mg.int64))
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see https://pytorch.org/docs/main/nn.html"
                      "#torch.nn.NLLLoss for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)

    def forward(self, input, target):
        """``NLLLoss``'s. Shape: (N, C, H, W), (N, H, W) -> () ("none": (N, H, W))."""
        return super().forward(input, target)

class BCELoss(_WeightedLoss):
    r"""Binary cross-entropy of probabilities (``F.binary_cross_entropy``):
    :math:`-w (t \log x + (1 - t) \log(1 - x))`, logs clamped at -100.

    Shape:
        input (*), target (*) of the same shape; output () ("none": (*)).
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input, target):
        """The loss. Shape: (*), (*) -> () ("none": (*))."""
        input, target = self._tensors(input, target)
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    r"""Binary cross-entropy of logits, stable (``F.binary_cross_entropy_with_logits``);
    ``pos_weight`` (a buffer) weights the positive targets.

    Shape:
        input (*), target (*) of the same shape; output () ("none": (*)).

    Example:
        >>> nn.BCEWithLogitsLoss(pos_weight=mg.full((C,), 3.0))(logits, labels)
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        """The loss. Shape: (*), (*) -> () ("none": (*))."""
        input, target = self._tensors(input, target)
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class MSELoss(_Loss):
    r"""Mean squared error :math:`(x - t)^2` (``F.mse_loss``).

    Shape:
        input (*), target (*); output () ("none": (*)).
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        """The loss. Shape: (*), (*) -> () ("none": (*))."""
        input, target = self._tensors(input, target)
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    r"""Mean absolute error :math:`|x - t|` (``F.l1_loss``).

    Shape:
        input (*), target (*); output () ("none": (*)).
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        """The loss. Shape: (*), (*) -> () ("none": (*))."""
        input, target = self._tensors(input, target)
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    r"""Smooth L1 (``F.smooth_l1_loss``): :math:`0.5 d^2 / \beta` where :math:`|d| < \beta`,
    else :math:`|d| - 0.5 \beta`.

    Shape:
        input (*), target (*); output () ("none": (*)).
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        float_of(beta, "SmoothL1Loss", "beta")
        if beta < 0:
            raise RuntimeError(f"SmoothL1Loss: beta must be non-negative, got {beta!r}")
        self.beta = beta

    def forward(self, input, target):
        """The loss. Shape: (*), (*) -> () ("none": (*))."""
        input, target = self._tensors(input, target)
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    r"""Huber (``F.huber_loss``): :math:`0.5 d^2` where :math:`|d| \le \delta`, else
    :math:`\delta (|d| - 0.5 \delta)`.

    Shape:
        input (*), target (*); output () ("none": (*)).
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        float_of(delta, "HuberLoss", "delta")
        if delta <= 0:
            raise RuntimeError(f"HuberLoss: delta must be positive, got {delta!r}")
        self.delta = delta

    def forward(self, input, target):
        """The loss. Shape: (*), (*) -> () ("none": (*))."""
        input, target = self._tensors(input, target)
        return F.huber_loss(input, target, self.reduction, self.delta)


class KLDivLoss(_Loss):
    r"""KL divergence of log-probabilities from a target (``F.kl_div``):
    :math:`t (\log t - x)`; ``reduction="batchmean"`` is the divergence's definition.

    Shape:
        input (*), target (*); output () ("none": (*)).

    Example:
        >>> nn.KLDivLoss(reduction="batchmean")(F.log_softmax(x, 1), F.softmax(y, 1))
    """

    extra_reductions = ("batchmean",)

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        if not isinstance(log_target, bool):
            raise TypeError(f"KLDivLoss: log_target must be a bool, got {log_target!r}")
        self.log_target = log_target

    def forward(self, input, target):
        """The loss. Shape: (*), (*) -> () ("none": (*))."""
        input, target = self._tensors(input, target)
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
