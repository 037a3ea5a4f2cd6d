"""The ``torch.*`` spellings of ``nn.functional``'s ops, with torch's own argument orders.

PyTorch exposes many of ``F``'s ops at its top level too, as its native functions take
them: ``torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
eps, cudnn_enabled)`` (every argument required), ``torch.embedding(weight, indices)``, the
losses with ``reduction`` an int (0 none, 1 mean, 2 sum), the dropouts with ``train``
required, the pools without ``return_indices``. Each function here checks what torch's
argument parser checks (a flag must be a bool), maps its arguments to ``F``'s and calls
``F``: the norms go to the registry's public entries (``norms/``), the rest to their
modules; nothing is computed a second time. ``cudnn_enable``/``cudnn_enabled`` are taken
and ignored, as on torch's CPU."""

import numbers
import warnings

from . import linalg
from .convolution import avg_pool1d as _avg_pool1d
from .convolution import conv1d as _conv1d
from .convolution import max_pool1d as _max_pool1d
from .convolution import max_pool2d as _max_pool2d
from .convolution_3d import max_pool3d as _max_pool3d
from .convolution_more import _alpha_dropout, _check_p, adaptive_max_pool1d as _adaptive_max
from .functional import _dropout, _renorm_rows, embedding as _embedding
from .losses import binary_cross_entropy_with_logits as _bce_logits
from .losses import kl_div as _kl_div
from .losses_ctc import ctc_loss as _ctc_loss
from .losses_more import cosine_embedding_loss as _cosine_embedding_loss
from .losses_more import hinge_embedding_loss as _hinge_embedding_loss
from .losses_more import margin_ranking_loss as _margin_ranking_loss
from .losses_more import poisson_nll_loss as _poisson_nll_loss
from .losses_more import triplet_margin_loss as _triplet_margin_loss
from .norms import batch_norm as _batch_norm
from .norms import group_norm as _group_norm
from .norms import instance_norm as _instance_norm
from .norms import layer_norm as _layer_norm
from .norms import rms_norm as _rms_norm
from .ops.complex import conj_physical as _conj_physical
from .tensor import Tensor
from .vision_grid import affine_grid as _affine_grid

__all__ = ["adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout", "alpha_dropout_",
           "as_strided_", "avg_pool1d", "batch_norm", "binary_cross_entropy_with_logits",
           "chain_matmul", "conj_physical_", "conv_tbc", "cosine_embedding_loss", "ctc_loss",
           "dropout", "dropout_", "embedding", "embedding_renorm_", "feature_alpha_dropout",
           "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "frobenius_norm",
           "group_norm", "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm",
           "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
           "max_pool3d", "nuclear_norm", "poisson_nll_loss", "rms_norm",
           "select", "triplet_margin_loss"]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _bool(fn, name, position, value):
    # torch's argument parser: a flag is a Python bool (NumPy's too), nothing else
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be bool, not "
                        f"{type(value).__name__}")
    return bool(value)


def _reduction(fn, value, position):
    # the int torch's native losses take; any int but 1 (mean) and 2 (sum) reduces nothing,
    # as torch's apply_loss_reduction
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn}(): argument 'reduction' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    return _REDUCTIONS.get(int(value), "none")


def _shape(fn, value):
    # a native SymInt[] argument: a sequence of ints (an int alone is refused, as torch's)
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(value).__name__}")
    for pos, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, numbers.Integral):
            raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple "
                            f"of ints, but found element of type {type(item).__name__} at pos "
                            f"{pos}")
    return tuple(int(item) for item in value)


def _stride(stride):
    # torch's native pools read an empty stride as the kernel size
    return None if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else stride


# ----- the norms: the registry's public entries -----------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    r"""``torch.layer_norm``: ``F.layer_norm`` under torch's native signature.

    :math:`y = (x - \mathrm{E}[x]) / \sqrt{\mathrm{Var}[x] + \epsilon} \cdot \gamma + \beta`
    over the last ``len(normalized_shape)`` dims.

    Args:
        input: (*, normalized_shape). normalized_shape: a sequence of ints (an int alone
            is refused, as torch's native function refuses it).
        weight, bias: of ``normalized_shape``, or None. eps: added to the variance.
        cudnn_enable: a bool, taken and ignored (torch's CPU ignores it too).

    Shape: unchanged.

    Example:
        >>> mg.layer_norm(x, (8,), w, b, 1e-5, True)
    """
    normalized_shape = _shape("layer_norm", normalized_shape)
    _bool("layer_norm", "cudnn_enable", 6, cudnn_enable)
    return _layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    r"""``torch.batch_norm``: ``F.batch_norm`` with torch's native order (weight and bias
    before the running statistics) and every argument required.

    :math:`y = (x - \mu_c) / \sqrt{\sigma^2_c + \epsilon} \cdot \gamma_c + \beta_c`, the
    statistics of the batch when ``training`` (the running ones updated in place by
    ``momentum``), the running ones otherwise.

    Args:
        input: (N, C, *). weight, bias, running_mean, running_var: (C,) or None.
        training: bool. momentum, eps: numbers. cudnn_enabled: a bool, ignored.

    Shape: unchanged.

    Example:
        >>> mg.batch_norm(x, w, b, mean, var, True, 0.1, 1e-5, False)
    """
    training = _bool("batch_norm", "training", 6, training)
    _bool("batch_norm", "cudnn_enabled", 9, cudnn_enabled)
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    r"""``torch.group_norm``: ``F.group_norm`` (``cudnn_enabled``, a bool, ignored).

    :math:`y = (x - \mu_g) / \sqrt{\sigma^2_g + \epsilon} \cdot \gamma_c + \beta_c` over
    each sample's groups of ``C / num_groups`` channels.

    Args:
        input: (N, C, *). num_groups: divides C. weight, bias: (C,) or None. eps: a number.

    Shape: unchanged.

    Example:
        >>> mg.group_norm(x, 2, w, b, 1e-5, True)
    """
    _bool("group_norm", "cudnn_enabled", 6, cudnn_enabled)
    return _group_norm(input, num_groups, weight, bias, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    r"""``torch.instance_norm``: ``F.instance_norm`` with torch's native order (weight and
    bias first) and every argument required.

    :math:`y = (x - \mu_{n,c}) / \sqrt{\sigma^2_{n,c} + \epsilon} \cdot \gamma_c + \beta_c`,
    each sample's channel by its own statistics when ``use_input_stats`` (the running ones,
    if given, updated by ``momentum``), by the running ones otherwise.

    Args:
        input: (N, C, *). weight, bias, running_mean, running_var: (C,) or None.
        use_input_stats: bool. momentum, eps: numbers. cudnn_enabled: a bool, ignored.

    Shape: unchanged.

    Example:
        >>> mg.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False)
    """
    use_input_stats = _bool("instance_norm", "use_input_stats", 6, use_input_stats)
    _bool("instance_norm", "cudnn_enabled", 9, cudnn_enabled)
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                          momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    r"""``torch.rms_norm``: ``F.rms_norm`` with torch's arguments only.

    :math:`y = x / \sqrt{\mathrm{E}[x^2] + \epsilon} \cdot \gamma` over the last
    ``len(normalized_shape)`` dims; ``eps`` None is the dtype's machine epsilon.

    Args:
        input: (*, normalized_shape). normalized_shape: a sequence of ints.
        weight: of ``normalized_shape``, or None. eps: a number or None.

    Shape: unchanged.

    Example:
        >>> mg.rms_norm(x, (8,), w)
    """
    return _rms_norm(input, _shape("rms_norm", normalized_shape), weight, eps)


# ----- convolution, dropout, embedding ----------------------------------------------------
def conv_tbc(input, weight, bias, pad=0):
    r"""``torch.conv_tbc``: a 1-d convolution of a time-first input, written as
    ``F.conv1d`` of the permuted operands.

    :math:`y_{t,b,o} = \beta_o + \sum_{k,c} x_{t+k-\mathrm{pad},b,c}\, w_{k,c,o}`.

    Args:
        input: (time, batch, in_channels). weight: (kernel_width, in_channels,
            out_channels). bias: (out_channels,). pad: zeros on both ends of time.

    Shape: output (time + 2·pad − kernel_width + 1, batch, out_channels).

    Example:
        >>> mg.conv_tbc(x, w, b, 1)
    """
    for name, value in (("self", input), ("weight", weight), ("bias", bias)):
        if not isinstance(value, Tensor):
            raise TypeError(f"conv_tbc(): argument '{name}' must be Tensor, not "
                            f"{type(value).__name__}")
    if input.ndim != 3:
        raise RuntimeError(f"conv_tbc: Input must have 3 dims: time, batch, in_channel, got "
                           f"shape {input.shape}")
    if weight.ndim != 3:
        raise RuntimeError(f"conv_tbc: Weight tensor must have 3 dims: kernel_width, "
                           f"in_channels, out_channels, got shape {weight.shape}")
    if bias.ndim != 1:
        raise RuntimeError(f"conv_tbc: Bias must be 1-D, got shape {bias.shape}")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError(f"conv_tbc: Input dim 2 (input channels) {input.shape[2]} is not "
                           f"== dim 1 in the weight tensor {weight.shape[1]}")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError(f"conv_tbc: Bias size {bias.shape[0]} must equal dim 2 in the "
                           f"weight tensor (output channels) {weight.shape[2]}")
    length = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if length < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {length}: "
                           f"[{length}, {input.shape[1]}, {weight.shape[2]}]")
    if length == 0:                     # torch's empty result; conv1d refuses the kernel
        return bias.reshape(1, 1, -1).expand(0, input.shape[1], weight.shape[2]) * 1
    out = _conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def _torch_dropout(fn, input, p, train, inplace):
    # torch's parser first (p a number, train a bool), then its native range check
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{fn}(): argument 'p' (position 2) must be float, not "
                        f"{type(p).__name__}")
    train = _bool(fn, "train", 3, train)
    if not 0 <= p <= 1:
        raise RuntimeError(f"{fn}: dropout probability has to be between 0 and 1, but got {p}")
    _check_p(fn, p)
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if fn.startswith("feature"):
        if input.ndim < 2 and train and 0 < p < 1 and input.size:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        if fn.startswith("feature_alpha"):
            return _alpha_dropout(fn, input, p, train, inplace, None, True)
        return _dropout(fn, input, p, train, inplace, None,
                        input.shape[:2] + (1,) * (input.ndim - 2))
    if fn.startswith("alpha"):
        return _alpha_dropout(fn, input, p, train, inplace, None, False)
    return _dropout(fn, input, p, train, inplace, None, None)


def dropout(input, p, train):
    r"""``torch.dropout``: ``F.dropout(input, p, train)``, the same draws (the default
    generator's).

    :math:`y = x \cdot m / (1 - p)`, :math:`m_i \sim \mathrm{Bernoulli}(1 - p)`; ``input``
    itself when not ``train``.

    Args:
        input: a Tensor. p: in [0, 1]. train: bool.

    Shape: unchanged.

    Example:
        >>> mg.dropout(x, 0.1, True)
    """
    return _torch_dropout("dropout", input, p, train, False)


def dropout_(input, p, train):
    """``torch.dropout_``: ``dropout`` written into ``input``, which it returns."""
    return _torch_dropout("dropout_", input, p, train, True)


def feature_dropout(input, p, train):
    r"""``torch.feature_dropout``: whole channels zeroed, one Bernoulli(1 − p) draw per
    (dim 0, dim 1) entry, the kept ones scaled by 1 / (1 − p) (``F.dropout2d``'s draws, for
    any input of 2 dims or more).

    Args:
        input: (N, C, *). p: in [0, 1]. train: bool.

    Shape: unchanged.

    Example:
        >>> mg.feature_dropout(x, 0.2, True)
    """
    return _torch_dropout("feature_dropout", input, p, train, False)


def feature_dropout_(input, p, train):
    """``torch.feature_dropout_``: ``feature_dropout`` written into ``input``."""
    return _torch_dropout("feature_dropout_", input, p, train, True)


def alpha_dropout(input, p, train):
    """``torch.alpha_dropout``: ``F.alpha_dropout(input, p, train)`` (SELU's dropout, the
    same draws and affine map)."""
    return _torch_dropout("alpha_dropout", input, p, train, False)


def alpha_dropout_(input, p, train):
    """``torch.alpha_dropout_``: ``alpha_dropout`` written into ``input``."""
    return _torch_dropout("alpha_dropout_", input, p, train, True)


def feature_alpha_dropout(input, p, train):
    """``torch.feature_alpha_dropout``: ``F.feature_alpha_dropout(input, p, train)``, one
    draw per (dim 0, dim 1) entry."""
    return _torch_dropout("feature_alpha_dropout", input, p, train, False)


def feature_alpha_dropout_(input, p, train):
    """``torch.feature_alpha_dropout_``: ``feature_alpha_dropout`` written into ``input``."""
    return _torch_dropout("feature_alpha_dropout_", input, p, train, True)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding``: the rows of ``weight`` at ``indices`` (``F.embedding`` with the
    table first). A ``padding_idx`` outside [0, num_embeddings) (the default, -1) is no
    padding row, as in torch's native function; another is a row that gets no gradient.

    Args:
        weight: (num_embeddings, embedding_dim). indices: integer ids.
        padding_idx: an int. scale_grad_by_freq, sparse: bools, as ``F.embedding``'s.

    Shape: output (*indices.shape, embedding_dim).

    Example:
        >>> mg.embedding(table, mg.tensor([1, 0]))
    """
    scale_grad_by_freq = _bool("embedding", "scale_grad_by_freq", 4, scale_grad_by_freq)
    sparse = _bool("embedding", "sparse", 5, sparse)
    if isinstance(padding_idx, bool) or not isinstance(padding_idx, numbers.Integral):
        raise TypeError(f"embedding(): argument 'padding_idx' (position 3) must be int, not "
                        f"{type(padding_idx).__name__}")
    rows = weight.shape[0] if isinstance(weight, Tensor) and weight.ndim else 0
    # torch's native function takes any padding_idx: one outside [0, rows) pads no row
    padding = int(padding_idx) if 0 <= padding_idx < rows else None
    return _embedding(indices, weight, padding, scale_grad_by_freq=scale_grad_by_freq,
                      sparse=sparse)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """``torch.embedding_renorm_``: each row of ``input`` that ``indices`` names and whose
    ``norm_type``-norm exceeds ``max_norm`` is scaled, in place and outside the graph, by
    max_norm / (norm + 1e-7) (what ``F.embedding(max_norm=...)`` does first).

    Args:
        input: the table (num_embeddings, embedding_dim). indices: integer ids.
        max_norm, norm_type: numbers.

    Returns: ``input``.

    Example:
        >>> mg.embedding_renorm_(table, mg.tensor([0, 2]), 1.0, 2.0)
    """
    from .functional import _ids
    from .dtypes import check_number
    if not isinstance(input, Tensor):
        raise TypeError(f"embedding_renorm_(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    check_number("embedding_renorm_", "max_norm", max_norm)
    check_number("embedding_renorm_", "norm_type", norm_type)
    if input.ndim != 2:
        raise RuntimeError(f"embedding_renorm_: input must be 2-D, got shape {input.shape}")
    ids = _ids("embedding_renorm_", indices, input)
    if ids.size:
        _renorm_rows(input, ids.reshape(-1), max_norm, norm_type)
    return input


# ----- pooling ------------------------------------------------------------------------------
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool1d``: ``F.max_pool1d``'s values (an empty ``stride`` is the kernel
    size). Shape: (N, C, L) or (C, L) to (…, L_out)."""
    return _max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool2d``: ``F.max_pool2d``'s values (an empty ``stride`` is the kernel
    size). Shape: (N, C, H, W) or (C, H, W) to (…, H_out, W_out)."""
    return _max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool3d``: ``F.max_pool3d``'s values (an empty ``stride`` is the kernel
    size). Shape: (N, C, D, H, W) or (C, D, H, W) to (…, D_out, H_out, W_out)."""
    return _max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """``torch.max_pool1d_with_indices``: ``F.max_pool1d``'s (values, indices), the indices
    int64 positions along L."""
    return _max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                       return_indices=True)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    """``torch.avg_pool1d``: ``F.avg_pool1d`` (an empty ``stride`` is the kernel size)."""
    return _avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                       count_include_pad)


def adaptive_max_pool1d(input, output_size):
    """``torch.adaptive_max_pool1d``: ``F.adaptive_max_pool1d``'s (values, indices), both,
    as torch's native function returns them."""
    return _adaptive_max(input, output_size, return_indices=True)


# ----- losses with torch's int reductions ---------------------------------------------------
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    r"""``torch.binary_cross_entropy_with_logits``: ``F.binary_cross_entropy_with_logits``
    with ``pos_weight`` before ``reduction``, an int (0 none, 1 mean, 2 sum).

    :math:`\ell = -w\,[p\,y \log\sigma(x) + (1 - y) \log(1 - \sigma(x))]`.

    Example:
        >>> mg.binary_cross_entropy_with_logits(logits, y, None, None, 2)
    """
    return _bce_logits(input, target, weight, reduction=_reduction(
        "binary_cross_entropy_with_logits", reduction, 5), pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    """``torch.cosine_embedding_loss``: ``F.cosine_embedding_loss`` with ``reduction`` an
    int (0 none, 1 mean, 2 sum)."""
    return _cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(
        "cosine_embedding_loss", reduction, 5))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    """``torch.hinge_embedding_loss``: ``F.hinge_embedding_loss`` with ``reduction`` an int
    (0 none, 1 mean, 2 sum)."""
    return _hinge_embedding_loss(input, target, margin, reduction=_reduction(
        "hinge_embedding_loss", reduction, 4))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    """``torch.margin_ranking_loss``: ``F.margin_ranking_loss`` with ``reduction`` an int
    (0 none, 1 mean, 2 sum)."""
    return _margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(
        "margin_ranking_loss", reduction, 5))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=1):
    """``torch.triplet_margin_loss``: ``F.triplet_margin_loss`` with ``reduction`` an int
    (0 none, 1 mean, 2 sum)."""
    swap = _bool("triplet_margin_loss", "swap", 7, swap)
    return _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                reduction=_reduction("triplet_margin_loss", reduction, 8))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    r"""``torch.poisson_nll_loss``: ``F.poisson_nll_loss`` with every argument required and
    ``reduction`` an int (0 none, 1 mean, 2 sum).

    :math:`\ell = e^x - y x` (``log_input``) or :math:`x - y \log(x + \epsilon)`, plus
    Stirling's term where ``full``."""
    log_input = _bool("poisson_nll_loss", "log_input", 3, log_input)
    full = _bool("poisson_nll_loss", "full", 4, full)
    return _poisson_nll_loss(input, target, log_input, full, eps=eps,
                             reduction=_reduction("poisson_nll_loss", reduction, 6))


def kl_div(input, target, reduction=1, *, log_target=False):
    r"""``torch.kl_div``: ``F.kl_div`` with ``reduction`` an int (0 none, 1 mean, 2 sum);
    torch's native mean is over every element (``F``'s ``"mean"``, not ``"batchmean"``).

    :math:`\ell = y (\log y - x)`, or :math:`e^{y} (y - x)` with ``log_target``."""
    log_target = _bool("kl_div", "log_target", 4, log_target)
    with warnings.catch_warnings():        # F's mean warns to prefer batchmean; torch's doesn't
        warnings.simplefilter("ignore")
        return _kl_div(input, target, reduction=_reduction("kl_div", reduction, 3),
                       log_target=log_target)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):
    """``torch.ctc_loss``: ``F.ctc_loss`` with ``reduction`` an int (0 none, 1 mean: each
    loss over its target length, then their mean; 2 sum)."""
    zero_infinity = _bool("ctc_loss", "zero_infinity", 7, zero_infinity)
    return _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                     _reduction("ctc_loss", reduction, 6), zero_infinity)


# ----- vision, norms of tensors, views --------------------------------------------------------
def affine_grid_generator(theta, size, align_corners):
    """``torch.affine_grid_generator``: ``F.affine_grid`` with ``align_corners`` required."""
    align_corners = _bool("affine_grid_generator", "align_corners", 3, align_corners)
    return _affine_grid(theta, size, align_corners)


def frobenius_norm(input, dim, keepdim=False):
    """``torch.frobenius_norm`` (deprecated, with torch's warning): the 2-norm over at
    most two dims, ``linalg.vector_norm(input, 2, dim, keepdim)``; ``dim=()`` is every dim."""
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT "
                  "compatibility. It will be removed in a future PyTorch release. Please use "
                  "`linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    return linalg.vector_norm(input, 2, dims, keepdim)


def nuclear_norm(input, dim=None, keepdim=False):
    """``torch.nuclear_norm`` (deprecated, with torch's warning): the sum of the singular
    values over the last two dims, or the two ``dim`` names;
    ``nuclear_norm(input, keepdim)`` as torch's first overload reads a bool there."""
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. "
                  "It will be removed in a future PyTorch release. Please use "
                  "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


def chain_matmul(*matrices, out=None):
    """``torch.chain_matmul`` (deprecated, with torch's warning): the product of the 2-D
    ``matrices`` in the cheapest order, ``linalg.multi_dot``; one matrix is returned as a
    copy."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if out is not None:
        raise TypeError("chain_matmul: out= is not supported here")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        if matrices[0].ndim != 2:
            raise RuntimeError(f"chain_matmul(): Tensor dimension is {matrices[0].ndim}, "
                               "expected 2 instead.")
        return matrices[0].clone()
    return linalg.multi_dot(list(matrices))


def select(input, dim, index):
    """``torch.select``: ``input.select(dim, index)``, the slice at ``index`` along ``dim``
    with that dim removed; a view."""
    if not isinstance(input, Tensor):
        raise TypeError(f"select(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.select(dim, index)


def as_strided_(input, size, stride, storage_offset=None):
    """``torch.as_strided_``: ``input.as_strided_(size, stride, storage_offset)``."""
    return input.as_strided_(size, stride, storage_offset)


def conj_physical_(input):
    """``torch.conj_physical_``: the complex conjugate written into ``input`` (a real
    tensor is left as it is), which it returns."""
    if not isinstance(input, Tensor):
        raise TypeError(f"conj_physical_(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dtype.kind != "c":
        return input
    return input.copy_(_conj_physical(input))
