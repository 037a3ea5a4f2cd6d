"""Functional ops with the semantics of ``torch.nn.functional``: the norms, softmax,
log_softmax, cross_entropy and attention (``impl="fused"`` or ``"composite"``,
docs/architecture.md), activations (from ``activation_nodes.py``, the common ones, and
``activations.py``, the rarer ones) and their in-place forms, the losses (from ``losses.py``),
linear, embedding, one_hot, normalize, cosine_similarity, pairwise_distance, dropout, and the
vision functions (pad, interpolate, pixel_shuffle, from ``vision.py`` and ``padding.py``;
affine_grid, grid_sample, ``vision_grid.py``).
Arguments are checked before anything runs, running statistics included."""

import warnings

import numpy as np

from . import backend, dtypes, ops
from . import generator as streams
from . import sampling
from . import activations as _activations
from .activations import (celu, gumbel_softmax, hardshrink, hardsigmoid, hardswish, prelu,
                          selu, softmin, softshrink, softsign, tanhshrink, threshold)
from .activation_nodes import (elu, glu, hardtanh, leaky_relu, mish, not_bool, relu6, silu,
                               softplus)
from .activations import maybe_in_place as _activation
from .autograd import no_grad
from .autograd.function import Function
from .convolution import (adaptive_avg_pool2d, avg_pool1d, avg_pool2d, conv1d, conv2d,
                          max_pool1d, max_pool2d, unfold)
from .dtypes import check_number, float_of, index_of, is_floating
from .losses import (binary_cross_entropy, binary_cross_entropy_with_logits, check_floating,
                     cross_entropy, huber_loss, kl_div, l1_loss, logsigmoid, mse_loss,
                     nll_loss, smooth_l1_loss)
from .fused import gelu, log_softmax, scaled_dot_product_attention, softmax
from .fused.arguments import check_tensor
from .norms import CASTINGS, IMPLS, add_layer_norm, add_rms_norm, batch_norm, layer_norm, rms_norm
from .norms import dyt, group_norm, instance_norm
from .tensor import InPlaceCastError, Tensor
# more losses (losses_more.py)
from .losses_more import (cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss,
                          margin_ranking_loss, multi_margin_loss, multilabel_margin_loss,
                          multilabel_soft_margin_loss, poisson_nll_loss, soft_margin_loss,
                          triplet_margin_loss, triplet_margin_with_distance_loss,
                          linear_cross_entropy)
# transposed convolutions, fold, adaptive max pooling (convolution_more.py)
from .convolution_more import _check_p, _trivial_dropout
from .convolution_more import (adaptive_avg_pool1d, adaptive_max_pool1d,
                               adaptive_max_pool1d_with_indices, adaptive_max_pool2d,
                               adaptive_max_pool2d_with_indices, alpha_dropout, bilinear,
                               channel_shuffle, conv_transpose1d, conv_transpose2d, dropout1d,
                               feature_alpha_dropout, fold, local_response_norm,
                               max_pool1d_with_indices, max_pool2d_with_indices, max_unpool1d,
                               max_unpool2d)
from .padding import pad                               # (padding.py)
from .vision import (interpolate, pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear,
                     upsample_nearest)
from .vision_grid import affine_grid, grid_sample
from .embedding_bag import embedding_bag              # bags of rows (embedding_bag.py)
from .attention_forward import multi_head_attention_forward    # (attention_forward.py)
from .losses_ctc import ctc_loss                      # the CTC loss (losses_ctc.py)
from .ops.products import pdist                       # beside cdist (ops/products.py)
# the 3-D convolutions, pooling and dropout (convolution_3d.py)
from .convolution_3d import (adaptive_avg_pool3d, adaptive_max_pool3d,
                             adaptive_max_pool3d_with_indices, avg_pool3d, conv3d,
                             conv_transpose3d, dropout3d, max_pool3d, max_pool3d_with_indices,
                             max_unpool3d)
from .lp_pool import lp_pool1d, lp_pool2d, lp_pool3d    # LP pooling (lp_pool.py)
from .fractional_pool import (fractional_max_pool2d, fractional_max_pool2d_with_indices,
                              fractional_max_pool3d, fractional_max_pool3d_with_indices)

__all__ = ["CASTINGS", "IMPLS", "layer_norm", "rms_norm", "batch_norm", "add_layer_norm",
           "group_norm", "instance_norm", "dyt",
           "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "conv1d", "conv2d", "max_pool1d",
           "max_pool2d", "unfold", "add_rms_norm", "cross_entropy", "dropout", "dropout2d",
           "gelu", "log_softmax", "mse_loss", "pad", "relu", "scaled_dot_product_attention",
           "sigmoid", "silu", "softmax", "tanh",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_similarity",
           "elu", "embedding", "hardtanh", "huber_loss", "kl_div", "l1_loss", "leaky_relu",
           "linear", "log_sigmoid", "logsigmoid", "mish", "nll_loss", "normalize", "one_hot",
           "smooth_l1_loss", "softplus", "ctc_loss", "embedding_bag", "pdist",
           "multi_head_attention_forward",
           # activations.py, and the in-place forms
           "celu", "celu_", "elu_", "glu", "gumbel_softmax", "hardshrink", "hardsigmoid",
           "hardswish", "hardtanh_", "leaky_relu_", "prelu", "relu6", "relu_", "rrelu",
           "rrelu_", "selu", "selu_", "softmin", "softshrink", "softsign", "tanhshrink",
           "threshold", "threshold_",
           # vision.py, distances
           "interpolate", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "upsample",
           "upsample_bilinear", "upsample_nearest", "affine_grid", "grid_sample"]
# __all__ additions: losses_more.py
__all__ += ["cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss",
            "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss",
            "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
            "triplet_margin_loss", "triplet_margin_with_distance_loss",
            "linear_cross_entropy"]
# __all__ additions: convolution_more.py
__all__ += ["adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
            "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "alpha_dropout",
            "bilinear", "channel_shuffle", "conv_transpose1d", "conv_transpose2d", "dropout1d",
            "fold", "local_response_norm", "max_pool1d_with_indices", "max_pool2d_with_indices",
            "max_unpool2d", "feature_alpha_dropout", "max_unpool1d", "lp_pool1d", "lp_pool2d"]
# __all__ additions: convolution_3d.py
__all__ += ["adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
            "avg_pool3d", "conv3d", "conv_transpose3d", "dropout3d", "max_pool3d",
            "max_pool3d_with_indices", "max_unpool3d", "lp_pool3d", "fractional_max_pool2d",
            "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
            "fractional_max_pool3d_with_indices"]


class AssertionValueError(ValueError, AssertionError):
    """A bad argument that PyTorch refuses with an ``assert`` (padding_idx out of range,
    Hardtanh's bounds): a ValueError here, and an AssertionError as PyTorch's."""


class IdsDtypeError(RuntimeError, TypeError):
    """Embedding ids that are not integers: PyTorch's RuntimeError ("Expected tensor for
    argument #1 'indices' to have one of the following scalar types: Long, Int"), and a
    TypeError."""


# ----- activations (activation_nodes.py, activations.py), dropout -------------------------
tanh = ops.tanh                # one home each: F.tanh is ops.tanh is Tensor.tanh
sigmoid = ops.sigmoid
log_sigmoid = logsigmoid       # PyTorch's F.logsigmoid, from losses.py (the logistic losses')


def relu(input, inplace=False):
    r""":math:`\max(x, 0)` elementwise (``F.relu``, ``ops.relu``); the gradient at 0 is 0.
    ``inplace``: the result written into ``input``."""
    not_bool("relu", input)
    return _activation("relu", input, inplace, ops.relu)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    r"""The randomized leaky ReLU (``F.rrelu``): :math:`x` where x > 0, else :math:`a\,x`.

    Formula:
        not ``training``: :math:`a = (l + u) / 2` (``leaky_relu``). ``training``: for each
        element x <= 0, in order, a fresh :math:`a = v\,(u - l) + l`, v a float64 uniform
        of one 64-bit draw of ``mg.default_generator`` (PyTorch's CPU kernel, so the same
        seed gives torch's slopes); the gradient is :math:`a` there, 1 elsewhere.

    Args:
        lower, upper: the slopes' range, lower <= upper.

    Example:
        >>> F.rrelu(h, training=model.training)
    """
    check_floating("rrelu", "input", input)
    lower = float_of(lower, "rrelu", "lower")
    upper = float_of(upper, "rrelu", "upper")
    if lower > upper:
        raise RuntimeError(f"rrelu: Lower bound should be less than or equal to the upper "
                           f"bound, got lower {lower}, upper {upper}")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    if input.dtype == np.float16:
        raise NotImplementedError("rrelu: training is not implemented for float16, as "
                                  "PyTorch's CPU kernel")

    def compute(x):
        data = backend.to_numpy(x._array)
        opmath = np.float32 if dtypes.is_half(x.dtype) else x.dtype
        low, high = (float(np.asarray(v, opmath)) for v in (lower, upper))  # bounds as C++'s
        with backend.silent_floats():        # a bfloat16 NaN compared flags "invalid"
            negative = data <= 0                             # NaN keeps slope 1
        draws = sampling.uniform(streams.default_generator, int(negative.sum()), np.float64)
        slopes = np.ones(data.shape, opmath)
        slopes[negative] = (draws * (high - low) + low).astype(opmath)
        return RandomSlopes.apply(x, slopes=backend.to_device(slopes, x.device))
    return _activation("rrelu", input, inplace, compute)


class RandomSlopes(Function):
    r"""rrelu's training product :math:`x \cdot r`, computed in r's dtype (PyTorch's opmath:
    float32 for bfloat16) and rounded once to x's; the gradient is grad times r rounded to
    x's dtype (the noise PyTorch's kernel saves)."""

    kept_options = ("slopes",)
    graph_masks_by_inputs = True        # torch's backward reads x (autograd/double.py)

    @staticmethod
    def forward(ctx, x, slopes):
        ctx.noise = slopes.astype(x.dtype, copy=False)
        return (x.astype(slopes.dtype, copy=False) * slopes).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.noise

    @staticmethod
    def graph_backward(ctx, grad):          # double backward (ops/double_backward.py)
        return grad * ops.base.constant(ctx.noise)


# the in-place forms F has (``torch.relu_`` ...): each the function with inplace=True
def relu_(input):
    """``relu`` written into ``input`` (``F.relu_``)."""
    return relu(input, inplace=True)


def elu_(input, alpha=1.0):
    """``elu`` written into ``input`` (``F.elu_``)."""
    return elu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """``leaky_relu`` written into ``input`` (``F.leaky_relu_``)."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """``hardtanh`` written into ``input`` (``F.hardtanh_``)."""
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input):
    """``selu`` written into ``input`` (``F.selu_``)."""
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    """``celu`` written into ``input`` (``F.celu_``)."""
    return celu(input, alpha, inplace=True)


def threshold_(input, threshold, value):
    """``threshold`` written into ``input`` (``F.threshold_``)."""
    return _activations.threshold(input, threshold, value, inplace=True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """``rrelu`` written into ``input`` (``F.rrelu_``)."""
    return rrelu(input, lower, upper, training, inplace=True)


def dropout(input, p=0.5, training=True, inplace=False, *, generator=None, rng=None):
    r"""Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``;
    ``input`` itself when not ``training`` (or p = 0) (``F.dropout``).

    Formula:
        :math:`y = x \cdot m / (1 - p)`, :math:`m_i \sim \mathrm{Bernoulli}(1 - p)`: the
        mask is ``empty_like(input).bernoulli_(1 - p)`` then divided by 1 - p in its dtype,
        torch's CPU steps, so the same seed gives torch's mask.

    Args:
        p: the probability of zeroing, in [0, 1]. inplace: multiply ``input`` in place.
        generator: a ``mg.Generator``, by default ``mg.default_generator``.
        rng: legacy: a ``numpy.random.Generator`` whose uniforms make the mask instead.

    Example:
        >>> y = F.dropout(h, 0.1, training=model.training)
    """
    _check_p("dropout", p)
    return _dropout("dropout", input, p, training, inplace, generator, None, rng)


def dropout2d(input, p=0.5, training=True, inplace=False, *, generator=None):
    r"""Zero whole channels with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (``F.dropout2d``): one draw per (sample, channel), torch's, from the same generator.

    Shape: (N, C, H, W), or (N, C, L) as torch reads a 3-D input, unchanged; another
    input of 2 or more dims is taken with torch's deprecation warning, a draw per (dim 0,
    dim 1) as torch's.

    Example:
        >>> h = F.dropout2d(F.relu(conv(x)), 0.25, training=model.training)
    """
    _check_p("dropout2d", p)
    check_tensor("dropout2d", "input", input)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead.",
                      stacklevel=2)
    if input.ndim < 2 and training and 0 < p < 1 and input.size:   # torch checks where it draws
        raise RuntimeError("dropout2d: Feature dropout requires at least 2 dimensions in the "
                           f"input, got shape {input.shape}")
    noise = input.shape[:2] + (1,) * (input.ndim - 2)
    return _dropout("dropout2d", input, p, training, inplace, generator, noise)


def _dropout(fn, x, p, training, inplace, generator, noise_shape, rng=None):
    # a Bernoulli(1 - p) mask over 1 - p: of noise_shape, one per channel, row-major (torch's
    # make_feature_noise); of x's shape and memory layout when it is None (torch's
    # empty_like(x), so a transposed x gets torch's mask). p is checked by the caller
    # (convolution_more._check_p), before its input
    gen = streams.check_generator(fn, generator)
    ops.shape_arguments.tensor_argument(fn, "input", x, position=1)     # (a list: not as it is)
    trivial = _trivial_dropout(x, p, training, inplace)
    if trivial is not None:
        return trivial
    if x.dtype.kind in "biu":           # torch divides the mask in x's dtype: refused
        raise InPlaceCastError(f"{fn}: result type Float can't be cast to the desired output "
                               f"type {x.dtype}")
    if rng is not None:
        shape = x.shape if noise_shape is None else noise_shape
        keep = (rng.random(shape) >= p).astype(x.dtype)
    else:
        keep = streams.empty_like(x._array, x.dtype) if noise_shape is None else \
            np.empty(noise_shape, x.dtype)
        streams.fill(keep, lambda n, c: sampling.bernoulli(gen, n, x.dtype, 1 - p))
    if dtypes.is_half(x.dtype):        # torch: times 1 / (1 - p) in float32, then rounded
        mask = (keep.astype(np.float32) * (np.float32(1) / np.float32(1 - p))).astype(x.dtype)
    else:
        mask = keep / np.asarray(1 - p).astype(x.dtype)
    mask = backend.to_device(mask, x.device)
    return x.mul_(mask) if inplace else x * mask


# ----- layers as functions: linear, embedding, one_hot ------------------------------------
def linear(input, weight, bias=None):
    r""":math:`y = x W^T + b` (``F.linear``); ``nn.Linear`` calls it. One graph node
    (``ops.Linear``, torch's addmm) for a bias of shape (out_features,) or None; any other
    bias that broadcasts is added by its own node after ``input @ weight.T``.

    Args:
        input: (*, in_features). weight: (out_features, in_features), or (in_features,)
            for one output without a dim. bias: (out_features,) (anything that broadcasts
            to the output's shape) or None. All three of one dtype.

    Shape: input (*, in_features), output (*, out_features) ((*) for a 1-D weight).

    Example:
        >>> F.linear(x, w, b)                # x (N, 4), w (2, 4), b (2,) -> (N, 2)
    """
    for name, value in (("input", input), ("weight", weight), ("bias", bias)):
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"linear: {name} must be a Tensor, got {type(value).__name__}")
    if input.ndim == 0 or weight.ndim not in (1, 2) or (weight.ndim == 1 and bias is not None
                                                         and (bias.ndim or input.ndim == 2)):
        raise RuntimeError(f"linear: input must have 1 or more dims and weight 2 (or 1, "
                           f"without a bias or with a 0-d one and an input not 2-D, as torch's "
                           f"matmul path), got input {input.shape}, weight {weight.shape}")
    if input._array.shape[-1] != weight._array.shape[-1]:    # (arrays' shapes: no Size)
        raise RuntimeError(f"linear: input's last dim {input.shape[-1]} must match weight's "
                           f"in_features {weight.shape[-1]} (input {input.shape}, weight "
                           f"{weight.shape})")
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and value.dtype != input.dtype:
            raise RuntimeError(f"linear: {name} must have the input's dtype {input.dtype}, "
                               f"got {value.dtype}")
    if bias is None or bias._array.shape == weight._array.shape[:1]:   # (out,): one node
        return ops.Linear.apply(input, weight) if bias is None else \
            ops.Linear.apply(input, weight, bias)          # (no None: apply's quicker path)
    out = input @ weight.T                                  # (*, in) @ (in, out)
    try:
        fits = np.broadcast_shapes(out.shape, bias.shape) == out.shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"linear: bias of shape {bias.shape} does not broadcast to the "
                           f"output's shape {out.shape}")
    return out + bias


def embedding_padding_idx(fn, padding_idx, num_embeddings):
    """``padding_idx`` in [0, num_embeddings) (a negative one counts from the end), or None;
    PyTorch's assert as an ``AssertionValueError`` naming ``fn``."""
    if padding_idx is None:
        return None
    padding_idx = index_of(padding_idx)       # a bool, a 0-d int tensor: ints, as torch's
    check_number(fn, "padding_idx", int(padding_idx) if padding_idx.__class__ is bool
                 else padding_idx, integer=True)
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionValueError(f"{fn}: padding_idx must be within num_embeddings, in "
                                  f"[-{num_embeddings}, {num_embeddings}), got {padding_idx}")
    return int(padding_idx) % num_embeddings


def _ids(fn, input, weight):
    """The integer ids of ``input`` (a Tensor or an array) on weight's device, in range."""
    ids = input._array if isinstance(input, Tensor) else input
    if not isinstance(ids, (np.ndarray, np.generic)) and not backend.is_cupy_array(ids):
        raise TypeError(f"{fn}(): input must be a Tensor or an array, not {type(ids).__name__}")
    ids = backend.to_device(ids if backend.is_cupy_array(ids) else np.asarray(ids), weight.device)
    if ids.dtype.kind not in "iu":
        raise IdsDtypeError(f"{fn}: input must hold integer ids, got dtype {ids.dtype}")
    rows = weight.shape[0]
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= rows):
        raise ops.OutOfRangeError(f"{fn}: ids must be in [0, {rows}), got min "
                                  f"{int(ids.min())}, max {int(ids.max())}")
    return ids


def _renorm_rows(weight, ids, max_norm, norm_type):
    # PyTorch's embedding_renorm_: each row looked up whose norm exceeds max_norm is scaled,
    # in place and outside the graph, to max_norm / (norm + 1e-7) of itself
    rows = weight.xp.unique(ids)
    data = weight._array[rows]                                          # (R, D)
    norms = weight.xp.linalg.norm(data, ord=norm_type, axis=1)           # (R,)
    too_long = norms > max_norm
    if too_long.any():
        scale = (max_norm / (norms[too_long] + 1e-7))[:, None]
        with no_grad():
            weight.detach()[rows[too_long]] = (data[too_long] * scale).astype(weight.dtype)


class GradientScale(Function):
    """The identity whose gradient is ``grad * scale`` (``scale`` broadcasting to it):
    embedding's ``scale_grad_by_freq``, 1 / count per looked-up row (``sparse``: torch's
    backward error, as for its sparse gradient)."""

    kept_options = ("scale",)

    @staticmethod
    def forward(ctx, x, scale, sparse=False):
        ctx.scale, ctx.sparse = scale, sparse
        return x.copy()                 # a new array: the rows' node keeps its own

    @staticmethod
    def backward(ctx, grad, scale=None):
        if ctx.sparse:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with "
                               "sparse gradients")
        return grad * (ctx.scale if scale is None else scale)

    @staticmethod
    def graph_backward(ctx, grad):          # double backward (ops/double_backward.py)
        return GradientScale.backward(ctx, grad, ops.base.constant(ctx.scale))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` for the ids in ``input`` (``F.embedding``); ``nn.Embedding`` calls
    it.

    Args:
        input: integer ids, a Tensor or an array, each in [0, num_embeddings).
        weight: the table (num_embeddings, embedding_dim).
        padding_idx: an id whose row is read as it is but gets no gradient, as PyTorch's;
            a negative one counts from the end.
        max_norm: if given, each row looked up whose ``norm_type``-norm exceeds it is
            scaled down to it first, in place in ``weight`` (PyTorch's renorm).
        scale_grad_by_freq: each row's gradient divided by the number of times its id
            occurs in ``input``, as PyTorch's. sparse: True gives the dense gradient here
            (torch's is sparse; the values are the same).

    Shape: input (*), output (*, embedding_dim).

    Example:
        >>> F.embedding(mg.tensor([[1, 0]]), table)      # (1, 2, embedding_dim)
    """
    if not isinstance(weight, Tensor):
        raise TypeError(f"embedding: weight must be a Tensor, got {type(weight).__name__}")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), "
                           f"got shape {weight.shape}")
    if isinstance(padding_idx, (bool, np.bool_)):     # torch's int argument refuses a bool
        check_number("embedding", "padding_idx", padding_idx, integer=True)
    padding_idx = embedding_padding_idx("embedding", padding_idx, weight.shape[0])
    ids = _ids("embedding", input, weight)
    if max_norm is not None:
        max_norm = float_of(max_norm, "embedding", "max_norm")
        norm_type = float_of(norm_type, "embedding", "norm_type")
        _renorm_rows(weight, ids, max_norm, norm_type)
    # (*, D); ids changed in place raise; torch's node: EmbeddingBackward0
    rows = ops.indexing.getitem(weight, ops.base.kept(input, ids), ops.indexing.Embedding)
    if scale_grad_by_freq and ids.size:           # each id's gradient / its count in input
        xp = weight.xp
        _, where, counts = xp.unique(ids.reshape(-1), return_inverse=True, return_counts=True)
        scale = (1 / counts[where]).astype(weight.dtype).reshape(ids.shape + (1,))   # (*, 1)
        rows = GradientScale.apply(rows, scale=scale, sparse=bool(sparse))
    if padding_idx is None:
        return rows
    # the padding rows are read, but their gradient is not passed back to the table
    return ops.where((ids == padding_idx)[..., None], rows.detach(), rows)


def one_hot(input, num_classes=-1):
    """An int64 tensor (*, num_classes) with 1 at each class index of ``input`` (*) and 0
    elsewhere (``F.one_hot``); ``num_classes=-1`` is the largest index + 1.

    Args:
        input: int64 class indices, each in [0, num_classes).
        num_classes: the size of the new last dim, or -1 to infer it (not from an empty
            tensor).

    Example:
        >>> F.one_hot(mg.tensor([0, 2]))        # [[1, 0, 0], [0, 0, 1]]
    """
    ops.base.check_tensor("one_hot", input)
    check_number("one_hot", "num_classes", num_classes := index_of(num_classes), integer=True)
    if input.dtype != np.int64:
        raise RuntimeError(f"one_hot: tensor must hold int64 class indices, got dtype "
                           f"{input.dtype}")
    data, xp = input._array, input.xp
    if data.size == 0:
        if num_classes <= 0:
            raise RuntimeError("one_hot: cannot infer the number of classes from an empty "
                               f"tensor; pass num_classes > 0, got {num_classes}")
        return ops.base.constant(xp.zeros(data.shape + (num_classes,), np.int64))
    if int(data.min()) < 0:
        raise RuntimeError(f"one_hot: class values must be non-negative, got {int(data.min())}")
    if num_classes == -1:
        num_classes = int(data.max()) + 1
    elif int(data.max()) >= num_classes:
        raise RuntimeError(f"one_hot: class values must be smaller than num_classes "
                           f"{num_classes}, got {int(data.max())}")
    return ops.base.constant((data[..., None] == xp.arange(num_classes)).astype(np.int64))


# ----- normalize, cosine_similarity ---------------------------------------------------------
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    r""":math:`x / \max(\lVert x \rVert_p, \epsilon)` along ``dim`` (``F.normalize``); a norm
    below eps passes no gradient, as PyTorch's ``clamp_min``.

    Args:
        p: the norm's exponent, any real number or ``±inf`` (``Tensor.norm``'s: 0 counts the
            nonzero elements, a negative p is the harmonic-like norm torch computes). dim:
            the dim normalized, or a tuple of dims (one norm over them), as torch's.
            eps: the smallest divisor. out: a Tensor the quotient is written into, as
            ``mg.div``'s (no gradient: refused where an operand requires grad).

    Example:
        >>> F.normalize(mg.tensor([[3.0, 4.0]]))               # [[0.6, 0.8]]
    """
    ops.base.check_tensor("normalize", input)
    if not is_floating(input.dtype):
        raise RuntimeError(f"normalize: input must be a floating tensor, got {input.dtype}")
    p = float_of(p, "normalize", "p")
    eps = float_of(eps, "normalize", "eps")
    axis = ops.normalize_axis("normalize", dim, input.ndim, reduce=True)   # a tuple too
    denom = ops.clamp(input.norm(p, dim=axis, keepdim=True), min=eps)
    return input / denom if out is None else ops.binary.div(input, denom, out=out)


def _norm_at_least(x, axis, eps):
    # PyTorch clamps the norms in place outside the graph: the value is max(norm, eps), the
    # gradient the norm's own
    norm = x.norm(2, dim=axis, keepdim=True)
    raised = x.xp.maximum(norm._array, eps).astype(norm.dtype, copy=False)   # bfloat16 too
    return norm + ops.base.constant(raised - norm._array)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    r""":math:`\sum x_1 x_2 / (\max(\lVert x_1 \rVert, \epsilon) \max(\lVert x_2 \rVert,
    \epsilon))` along ``dim`` of x1 and x2 broadcast together (``F.cosine_similarity``).

    Args:
        dim: the dim reduced, of the broadcast shape. eps: the smallest norm, >= 0.

    Shape: x1 and x2 broadcast to (*, D, *) (D at ``dim``); output (*, *).

    Example:
        >>> F.cosine_similarity(a, b, dim=-1)                  # (N, D), (N, D) -> (N,)
    """
    for name, value in (("x1", x1), ("x2", x2)):
        if not isinstance(value, Tensor):
            raise TypeError(f"cosine_similarity: {name} must be a Tensor, got "
                            f"{type(value).__name__}")
    eps = float_of(eps, "cosine_similarity", "eps")
    if eps < 0:
        raise RuntimeError(f"cosine_similarity: eps must be non-negative, got {eps!r}")
    dtype = ops.result_dtype(x1._array, x2._array)
    if not is_floating(dtype):
        raise RuntimeError(f"cosine_similarity: x1 and x2 must promote to a floating dtype, "
                           f"got {x1.dtype} and {x2.dtype}")
    shape = ops.base.broadcast_shape("cosine_similarity", x1.shape, x2.shape)
    axis = ops.normalize_axis("cosine_similarity", dim, len(shape), single=True)
    # the norms are of the broadcast operands, in the common dtype, as PyTorch's
    x1, x2 = (x if x.dtype == dtype else x.astype(dtype) for x in (x1, x2))
    x1, x2 = (x if x.shape == shape else x.expand(*shape) for x in (x1, x2))
    return ((x1 / _norm_at_least(x1, axis, eps)) * (x2 / _norm_at_least(x2, axis, eps))).sum(
        axis)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    r""":math:`\lVert x_1 - x_2 + \epsilon \rVert_p` along the last dim of x1 and x2
    broadcast together (``F.pairwise_distance``, PyTorch's formula: eps added to each
    difference).

    Args:
        p: the norm's order, any real (0 counts the nonzero differences; ±inf).
        eps: added to the differences.
        keepdim: keep the reduced dim (size 1).

    Shape: x1 and x2 broadcast to (*, D); output (*) ((*, 1) with keepdim).

    Example:
        >>> F.pairwise_distance(a, b)                          # (N, D), (N, D) -> (N,)
    """
    for name, value in (("x1", x1), ("x2", x2)):
        if not isinstance(value, Tensor):
            raise TypeError(f"pairwise_distance: {name} must be a Tensor, got "
                            f"{type(value).__name__}")
    p = float_of(p, "pairwise_distance", "p")
    eps = float_of(eps, "pairwise_distance", "eps")
    difference, dim = x1 - x2 + eps, max(x1.ndim, x2.ndim) - 1
    if p == 0:      # the count of nonzero differences; its gradient is 0, as torch's
        one = ops.base.constant(difference.xp.ones((), difference.dtype))
        return ops.where(difference._array != 0, one, difference * 0).sum(dim, keepdim=keepdim)
    # torch's norm for every other p, negative ones and -inf included: its gradient is 0 at
    # a zero difference (norm_backward's mask), NaN where the norm is
    return difference.norm(p, dim=dim, keepdim=keepdim)
