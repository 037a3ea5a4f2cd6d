"""The rest of ``torch.nn``'s loss Modules, each ``forward`` the ``F`` function of its name
(``losses_more.py``, ``losses_ctc.py``) with the module's options: the margin losses, the
embedding losses, the likelihood losses and CTC. As in ``loss.py``, a class weight is a
buffer, options are checked when the module is built, an array input becomes a Tensor first,
and each constructor takes torch's signature, its deprecated ``size_average`` and ``reduce``
in their places, turned into ``reduction`` by ``_Loss.__init__`` (CTCLoss,
GaussianNLLLoss and TripletMarginWithDistanceLoss have none, as torch's)."""

import dataclasses
import math

import numpy as np

from .. import backend
from .. import dtypes
from .. import functional as F
from ..dtypes import check_bool, check_number, float_of
from ..fused.arguments import NotATensorError
from ..losses import LossArgumentError
from ..losses_more import check_distance_function, check_margin_p, check_positive_margin
from ..tensor import Tensor
from .distance import PairwiseDistance
from .linear import Linear
from .loss import _Loss, _WeightedLoss


def _check_margin(name, margin, positive=False):
    if positive:
        check_positive_margin(name, margin)
    else:
        float_of(margin, name, "margin")


class MarginRankingLoss(_Loss):
    r"""Margin ranking (``F.margin_ranking_loss``): :math:`\max(0, -y (x_1 - x_2) +
    \text{margin})`, y = 1 (x1 ranked first) or -1.

    Args:
        margin: the gap asked for. reduction: "mean", "sum", "none".

    Shape:
        input1, input2, target: one number of dims, broadcast; output () ("none": that shape).

    Example:
        >>> nn.MarginRankingLoss(margin=0.1)(scores_a, scores_b, which_first)
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        _check_margin("MarginRankingLoss", margin)
        self.margin = margin

    def forward(self, input1, input2, target):
        """The loss. Shape: (N,), (N,), (N,) -> () ("none": (N,))."""
        input1, input2, target = (self._check_input(t) for t in (input1, input2, target))
        return F.margin_ranking_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    r"""Hinge embedding (``F.hinge_embedding_loss``): x where y = 1,
    :math:`\max(0, \text{margin} - x)` where y = -1.

    Shape:
        input (*), target broadcast with it; output () ("none": the broadcast shape).
    """

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        _check_margin("HingeEmbeddingLoss", margin)
        self.margin = margin

    def forward(self, input, target):
        """The loss. Shape: (*), (*) -> () ("none": (*))."""
        input, target = self._tensors(input, target)
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    r"""Soft margin (``F.soft_margin_loss``): :math:`\log(1 + e^{-y x})`, y = 1 or -1.

    Shape:
        input (*), target broadcast to (*); output () ("none": (*)).
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        """The loss. Shape: (*), (*) -> () ("none": (*))."""
        input, target = self._tensors(input, target)
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    r"""Multi-label one-versus-all logistic loss (``F.multilabel_soft_margin_loss``):
    :math:`-\frac{1}{C}\sum_c w_c (y_c \log\sigma(x_c) + (1 - y_c)\log\sigma(-x_c))`.

    Args:
        weight: a weight per class (a buffer), or None. reduction: "mean", "sum", "none".

    Shape:
        input (N, C), target (N, C); output () ("none": (N,)).
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input, target):
        """The loss. Shape: (N, C), (N, C) -> () ("none": (N,))."""
        input, target = self._tensors(input, target)
        return F.multilabel_soft_margin_loss(input, target, self.weight,
                                             reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    r"""Multi-label hinge (``F.multilabel_margin_loss``):
    :math:`\frac{1}{C}\sum_j \sum_{i \notin y} \max(0, 1 - (x_{y_j} - x_i))`, the target
    classes listed before the first -1.

    Shape:
        input (C,) or (N, C), int64 target of the same shape; output () ("none": (N,)).

    Example:
        >>> nn.MultiLabelMarginLoss()(x, mg.tensor([[3, 0, -1, 1]]))
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        """The loss. Shape: (N, C), (N, C) -> () ("none": (N,))."""
        input, target = self._tensors(input, target)
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    r"""Multi-class hinge (``F.multi_margin_loss``):
    :math:`\frac{1}{C}\sum_{i \ne y} w_y \max(0, \text{margin} - x_y + x_i)^p`.

    Args:
        p: 1 or 2. margin: the gap asked for. weight: a (C,) weight per class (a buffer), or
            None. reduction: "mean", "sum", "none".

    Shape:
        input (C,) or (N, C), int64 target () or (N,); output () ("none": target's shape).

    Example:
        >>> nn.MultiMarginLoss(p=2, margin=0.5)(logits, labels)
    """

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        check_margin_p("MultiMarginLoss", p)
        if weight is not None and getattr(weight, "ndim", 1) != 1:    # a list: the buffer's
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.ndim}D instead")
        _check_margin("MultiMarginLoss", margin)
        super().__init__(weight, size_average, reduce, reduction)
        self.p, self.margin = p, margin

    def forward(self, input, target):
        """The loss. Shape: (N, C), (N,) -> () ("none": (N,))."""
        input, target = self._tensors(input, target)
        return F.multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                   reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    r"""Cosine embedding (``F.cosine_embedding_loss``): :math:`1 - \cos(x_1, x_2)` where
    y = 1, :math:`\max(0, \cos(x_1, x_2) - \text{margin})` where y = -1.

    Shape:
        input1, input2 (N, D) with target (N,), or (D,) with (); output () ("none": (N,)).
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        _check_margin("CosineEmbeddingLoss", margin)
        self.margin = margin

    def forward(self, input1, input2, target):
        """The loss. Shape: (N, D), (N, D), (N,) -> () ("none": (N,))."""
        input1, input2, target = (self._check_input(t) for t in (input1, input2, target))
        return F.cosine_embedding_loss(input1, input2, target, self.margin,
                                       reduction=self.reduction)


class TripletMarginLoss(_Loss):
    r"""Triplet margin (``F.triplet_margin_loss``): :math:`\max(0, \text{margin} + d(a, p) -
    d(a, n))`, d the p-norm distance of ``F.pairwise_distance``.

    Args:
        margin: > 0. p: the norm's order. eps: added to each difference. swap: the distance
            swap. reduction: "mean", "sum", "none".

    Shape:
        anchor, positive, negative (N, D) or (D,); output () ("none": (N,)).

    Example:
        >>> nn.TripletMarginLoss(margin=0.5, swap=True)(a, p, n)
    """

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        _check_margin("TripletMarginLoss", margin, positive=True)
        float_of(p, "TripletMarginLoss", "p")
        float_of(eps, "TripletMarginLoss", "eps")
        check_bool("TripletMarginLoss", "swap", swap)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        """The loss. Shape: (N, D), (N, D), (N, D) -> () ("none": (N,))."""
        anchor, positive, negative = (self._check_input(t)
                                      for t in (anchor, positive, negative))
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p,
                                     self.eps, self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    r"""Triplet margin with any distance (``F.triplet_margin_with_distance_loss``):
    :math:`\max(0, \text{margin} + d(a, p) - d(a, n))`; d is ``distance_function``, an
    ``nn.PairwiseDistance()`` submodule when None (as PyTorch's).

    Args:
        distance_function: d(x1, x2), a callable (a Module is a submodule), or None.
        margin: > 0. swap: the distance swap. reduction: "mean", "sum", "none".

    Shape:
        anchor, positive, negative (N, D) for the default distance; output () ("none": (N,)).

    Example:
        >>> nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1))
    """

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        _check_margin("TripletMarginWithDistanceLoss", margin, positive=True)
        check_distance_function("TripletMarginWithDistanceLoss", distance_function)
        check_bool("TripletMarginWithDistanceLoss", "swap", swap)
        self.distance_function = (distance_function if distance_function is not None
                                  else PairwiseDistance())
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        """The loss. Shape: (N, D), (N, D), (N, D) -> () ("none": (N,))."""
        anchor, positive, negative = (self._check_input(t)
                                      for t in (anchor, positive, negative))
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    r"""Gaussian negative log-likelihood (``F.gaussian_nll_loss``):
    :math:`\frac{1}{2}(\log \max(\sigma^2, \epsilon) + (x - y)^2 / \max(\sigma^2, \epsilon))`,
    plus :math:`\frac{1}{2}\log 2\pi` with ``full``.

    Args:
        full: add the constant. eps: the smallest variance. reduction: "mean", "sum", "none".

    Shape:
        input (N, *), target (N, *), var (N, *), (N, *) with one dim 1 or the last left out,
        or a float; output () ("none": (N, *)).

    Example:
        >>> nn.GaussianNLLLoss()(mean, y, variance)
    """

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction=reduction)
        check_bool("GaussianNLLLoss", "full", full)
        float_of(eps, "GaussianNLLLoss", "eps")
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        """The loss. Shape: (N, *), (N, *), (N, *) -> () ("none": (N, *))."""
        input, target = self._tensors(input, target)
        if isinstance(var, np.ndarray) or backend.is_cupy_array(var):   # F checks the rest
            var = self._check_input(var)
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    r"""Poisson negative log-likelihood (``F.poisson_nll_loss``): :math:`e^x - y x` of a log
    rate x, or :math:`x - y \log(x + \epsilon)` of a rate; ``full`` adds Stirling's term.

    Args:
        log_input: whether the input is the log rate. full: add Stirling's term where y > 1.
        eps: keeps the log finite at rate 0. reduction: "mean", "sum", "none".

    Shape:
        input (*), target broadcast with it; output () ("none": the broadcast shape).

    Example:
        >>> nn.PoissonNLLLoss()(log_rate, counts)
    """

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        check_bool("PoissonNLLLoss", "log_input", log_input)
        check_bool("PoissonNLLLoss", "full", full)
        float_of(eps, "PoissonNLLLoss", "eps")
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        """The loss. Shape: (*), (*) -> () ("none": (*))."""
        log_input, target = self._tensors(log_input, target)
        return F.poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                  reduction=self.reduction)


class CTCLoss(_Loss):
    r"""The connectionist temporal classification loss (``F.ctc_loss``): :math:`-\log p(y
    \mid x)`, summed over every alignment of each target to its frames by the alpha
    recursion; torch's gradient (with respect to logits under a ``log_softmax``).

    Args:
        blank: the blank label. reduction: "mean" (each loss divided by its target length,
            then the batch's mean), "sum", "none".
        zero_infinity: make an impossible alignment's infinite loss (and its gradient) 0.

    Shape:
        log_probs (T, N, C) or (T, C); targets (N, S) padded or (sum of target_lengths,);
        input_lengths, target_lengths (N,) Tensors or tuples; output () ("none": (N,)).

    Example:
        >>> nn.CTCLoss()(logits.log_softmax(2), targets, input_lengths, target_lengths)
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        check_number("CTCLoss", "blank", blank, integer=True)
        if blank < 0:
            raise ValueError(f"CTCLoss: blank must be a label >= 0, got {blank}")
        check_bool("CTCLoss", "zero_infinity", zero_infinity)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        """The loss. Shape: (T, N, C), targets, (N,), (N,) -> () ("none": (N,))."""
        log_probs, targets = self._tensors(log_probs, targets)
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """torch's options for its chunked ``F.linear_cross_entropy`` (chunks of the batch, so
    the (N, C) logits never exist at once). The values are the same with or without them;
    here they are checked as torch checks them and the composition runs whole.

    Args:
        allow_retain_graph: a second ``backward`` through the loss allowed (always, here).
        batch_chunk_size: rows per chunk, a positive int, or None.
        chunking_method: "auto", "aspect_ratio" or "aspect_ratio:N" (N >= 1), or None.
        acc_policy: "auto", "accurate", "balanced" or "compact".
        acc_dtype: None or a floating dtype (float16, bfloat16, float32, float64).

    Example:
        >>> nn.LinearCrossEntropyLoss(64, 50257, options=nn.LinearCrossEntropyOptions())
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in ("auto", "accurate", "balanced", "compact"):
            raise ValueError(f"LinearCrossEntropyOptions: acc_policy must be 'auto', "
                             f"'accurate', 'balanced' or 'compact', got {self.acc_policy!r}")
        if self.chunking_method not in (None, "auto"):
            name, colon, factor = str(self.chunking_method).partition(":")
            factor = factor if colon else "1"
            if name != "aspect_ratio" or not factor.isdigit() or int(factor) < 1:
                raise ValueError("LinearCrossEntropyOptions: chunking_method must be 'auto', "
                                 "'aspect_ratio' or 'aspect_ratio:N' with N >= 1, or None, "
                                 f"got {self.chunking_method!r}")
        size = self.batch_chunk_size
        if size is not None and (not isinstance(size, int) or isinstance(size, bool)
                                 or size < 1):
            raise ValueError("LinearCrossEntropyOptions: batch_chunk_size must be a positive "
                             f"int or None, got {size!r}")
        accumulators = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
        if self.acc_dtype is not None and self.acc_dtype not in accumulators:
            raise ValueError("LinearCrossEntropyOptions: acc_dtype must be None, float16, "
                             f"bfloat16, float32 or float64, got {self.acc_dtype!r}")


class LinearCrossEntropyLoss(_WeightedLoss):
    r"""The cross entropy of logits made by a Linear layer it holds
    (``F.linear_cross_entropy``): :math:`\mathrm{CE}(x W^T + b, t)`, W of shape
    (C·d1·…, in_features) stored flat in ``self.linear`` and viewed as (C, d1, …,
    in_features) for a K-dimensional loss.

    Args:
        in_features: the size of each input row. num_classes: C.
        out_features: (d1, ..., dK) for a K-dimensional loss, () otherwise.
        bias: the Linear layer's bias (default False). device, dtype: of its weight.
        reduction: "mean", "sum", "none". weight: None or a (C,) Tensor, a weight per class.
        ignore_index: None (-100 for class indices) or a class index.
        label_smoothing: ε in [0, 1]. options: None or a ``LinearCrossEntropyOptions``.

    Shape:
        input (in_features,) or (N, in_features); target class indices (), (N,) or
        (N, d1, ...), or probabilities (C,) or (N, C, d1, ...); output () ("none": the
        target's batch shape).

    Example:
        >>> nn.LinearCrossEntropyLoss(64, 1000)(hidden, targets)   # (N, 64), (N,)
    """

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        name = "LinearCrossEntropyLoss"
        if weight is not None and not isinstance(weight, Tensor):     # torch: weight.shape
            raise NotATensorError(f"{name}: weight must be a Tensor or None, got "
                                  f"{type(weight).__name__}")
        if not isinstance(out_features, (tuple, list)):     # torch iterates it
            raise TypeError(f"{name}: out_features must be a tuple of ints, got "
                            f"{type(out_features).__name__} {out_features!r}")
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise LossArgumentError(f"{name}: expected weight shape {(num_classes,)}, got "
                                    f"{tuple(weight.shape)}")
        float_of(label_smoothing, name, "label_smoothing")
        if not 0 <= label_smoothing <= 1:
            raise LossArgumentError(f"{name}: label_smoothing must be in [0, 1], got "
                                    f"{label_smoothing!r}")
        if ignore_index is not None:        # a 0-d integer tensor is its int, as torch's
            ignore_index = dtypes.index_of(ignore_index)
            check_number(name, "ignore_index", ignore_index, integer=True)
        if options is not None and not isinstance(options, LinearCrossEntropyOptions):
            raise TypeError(f"{name}: options must be a LinearCrossEntropyOptions or None, "
                            f"got {type(options).__name__}")
        super().__init__(weight=weight, reduction=reduction)
        self.num_classes, self.out_features = num_classes, out_features
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        # (C·d1·…, in_features): a Linear's weight is 2-D; forward views it as (C, d1, …)
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes),
                             bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input, target):
        """The loss. Shape: (N, in_features), (N,) -> () ("none": (N,))."""
        input, target = self._tensors(input, target)
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return F.linear_cross_entropy(
            input, self.linear.weight.reshape(shape + (self.linear.in_features,)), target,
            linear_bias=None if bias is None else bias.reshape(shape), weight=self.weight,
            reduction=self.reduction, ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
