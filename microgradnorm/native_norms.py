"""torch's native (aten-level) norm functions, which return their statistics beside the output.

``torch.native_layer_norm``, ``native_batch_norm``, ``_native_batch_norm_legit``,
``native_group_norm`` and ``batch_norm_update_stats`` return the mean and the reciprocal
standard deviation they normalised with, in torch's shapes and dtypes; ``native_dropout``
returns its keep mask; SyncBatchNorm's pieces (``batch_norm_stats``, ``batch_norm_elemt``,
the ``batch_norm_gather_stats`` pair, ``batch_norm_backward_reduce`` and
``batch_norm_backward_elemt``), which torch's CPU build lacks, are here on every device;
``native_dropout_backward`` and ``_softmax_backward_data`` are the backward formulas
torch's autograd calls; ``native_channel_shuffle`` is ``F.channel_shuffle`` and
``native_norm`` is ``linalg.vector_norm``. ``native_layer_norm`` and (in training)
``native_batch_norm`` run the registry's fused node and return the mean and rstd its forward
saved for its backward; the rest are composed of Tensor ops, so the output's gradient is the
textbook one and the statistics carry the gradients torch gives them (none where torch
defines none). Half-precision inputs are computed in float32 and rounded back,
as torch's CPU kernels accumulate.
"""

import numbers

from . import dtypes
from .autograd import is_grad_enabled, no_grad
from .convolution_more import channel_shuffle as _channel_shuffle
from .factories import empty, ones_like
from .kernels import for_array
from .norms import batch_norm as _batch_norm
from .norms import layer_norm as _layer_norm
from .norms.spec import flat, rows, unrows
from .ops.shape_arguments import tensor_argument
from .tensor import Tensor

__all__ = ["native_layer_norm", "native_batch_norm", "_native_batch_norm_legit",
           "native_group_norm", "batch_norm_update_stats", "native_dropout",
           "native_dropout_backward", "_softmax_backward_data", "native_channel_shuffle",
           "batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
           "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
           "batch_norm_backward_elemt", "native_norm"]


def _compute(x):
    # torch's CPU kernels accumulate the half dtypes in float32
    return x.float() if dtypes.is_half(x.dtype) else x


def _affine(out, weight, bias, shape):
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    r"""LayerNorm returning its statistics: ``(output, mean, rstd)`` (``torch.native_layer_norm``).

    :math:`y = (x - \mu)\, r \cdot w + b`, :math:`\mu` and
    :math:`r = 1/\sqrt{\sigma^2 + \epsilon}` (biased variance) over the last
    ``len(normalized_shape)`` dims.

    Args:
        input (Tensor): the input.
        normalized_shape (sequence of int): the trailing shape normalised, at least one dim.
        weight (Tensor or None): scale of shape ``normalized_shape``.
        bias (Tensor or None): shift of shape ``normalized_shape``.
        eps (float): added to the variance.

    Shape:
        output as input; mean and rstd ``input.shape[:-k] + (1,) * k``, in input's dtype;
        they do not require grad (torch defines no gradient for them).

    Example:
        >>> y, mean, rstd = mg.native_layer_norm(mg.randn(2, 3, 4), [4], None, None, 1e-5)
        >>> tuple(mean.shape)
        (2, 3, 1)
    """
    fn = "native_layer_norm"
    x = tensor_argument(fn, "input", input)
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    shape = tuple(int(s) for s in normalized_shape)
    if not shape:
        raise RuntimeError(f"{fn}: expected normalized_shape to have at least one dim, "
                           f"got normalized_shape = []")
    k = len(shape)
    if tuple(x.shape[x.dim() - k:]) != shape or x.dim() < k:
        raise RuntimeError(f"{fn}: given normalized_shape={list(shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, shape))}], but got input of "
                           f"size {list(x.shape)}")
    for name, p in (("weight", weight), ("bias", bias)):
        if tensor_argument(fn, name, p, optional=True) is not None and tuple(p.shape) != shape:
            raise RuntimeError(f"{fn}: expected {name} of the same shape as normalized_shape "
                               f"{list(shape)}, but got {name} of shape {list(p.shape)}")
    stat_shape = tuple(x.shape[:x.dim() - k]) + (1,) * k
    if _floating(fn, "LayerNormKernelImpl", x).numel() == 0:
        xc = _compute(x)
        mean = xc.sum(dim=tuple(range(x.dim() - k, x.dim())), keepdim=True)
        out = _affine(xc.to(x.dtype), weight, bias, shape)
        # rows of no elements: mean 0, rstd NaN (0/0 variance), as torch's
        return out, mean.to(x.dtype), (mean + float("nan")).to(x.dtype)
    # the fused node's forward computes the statistics and saves them for its backward:
    # they are read there, not computed again (torch defines no gradient of them)
    if _records(x, weight, bias):
        out = _layer_norm(x, shape, weight, bias, eps, impl="fused")
        _, _, mean, rstd = out.grad_fn.saved
    else:                                       # no node to record: the kernel, once
        y, mean, rstd = for_array(x._array).layer_norm_forward(
            rows(x._array, shape), flat(_array(weight)), flat(_array(bias)), eps)
        out = Tensor._from_op(unrows(y, tuple(x.shape)), None)
    stats = (Tensor._from_op(a.reshape(stat_shape).astype(x._array.dtype, copy=True), None)
             for a in (mean, rstd))
    return (out, *stats)


def _array(t):
    return None if t is None else t._array


def _records(*tensors):
    # whether the fused node would be recorded (its saved statistics then read from it)
    return is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _floating(fn, kernel, x):
    # torch's CPU kernels of the norms have no integer or bool instantiation
    if not (dtypes.is_floating(x.dtype) or x.dtype.kind == "c"):
        raise NotImplementedError(f"{fn}: \"{kernel}\" not implemented for {x.dtype} input; "
                                  "give a floating point tensor")
    return x


def _batch_stats(fn, x, weight, bias):
    x = tensor_argument(fn, "input", x)
    if x.dim() < 2:
        raise RuntimeError(f"{fn}: expected input with at least 2 dims (N, C, ...), got "
                           f"{x.dim()}")
    tensor_argument(fn, "weight", weight, optional=True)
    tensor_argument(fn, "bias", bias, optional=True)
    dims = (0,) + tuple(range(2, x.dim()))
    shape = (1, x.shape[1]) + (1,) * (x.dim() - 2)
    return x, dims, shape


def _update_running(running_mean, running_var, mean, var_biased, count, momentum):
    # torch's running statistics: the unbiased variance, updated in place, no history
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.detach().to(running_mean.dtype),
                                                 alpha=momentum)
        if running_var is not None:
            unbiased = var_biased.detach() * (count / max(count - 1, 1)) if count > 1 else \
                var_biased.detach() * float("inf") if count == 1 else var_biased.detach()
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype),
                                                alpha=momentum)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    r"""BatchNorm returning its statistics: ``(output, save_mean, save_invstd)``
    (``torch.native_batch_norm``).

    Training: :math:`y = (x - \mu_c)\, r_c \cdot w_c + b_c` with the batch's per-channel
    mean and :math:`r_c = 1/\sqrt{\sigma_c^2 + \epsilon}` (biased variance), and the running
    statistics (if given) updated in place, ``(1 - momentum) * running + momentum * batch``
    (unbiased variance). Evaluation: the running statistics normalise, and ``save_mean`` and
    ``save_invstd`` are empty.

    Args:
        input (Tensor): (N, C, ...).
        weight, bias (Tensor or None): (C,).
        running_mean, running_var (Tensor or None): (C,); required when not training.
        training (bool): batch statistics or running ones.
        momentum (float): the running statistics' update factor.
        eps (float): added to the variance.

    Shape:
        output as input; save_mean and save_invstd (C,) in training (input's dtype, float32
        for a half input with float32 parameters), (0,) in evaluation (of the same dtype);
        they do not require grad.

    Example:
        >>> y, m, r = mg.native_batch_norm(mg.randn(4, 3), None, None, None, None, True,
        ...                                0.1, 1e-5)
        >>> tuple(m.shape)
        (3,)
    """
    fn = "native_batch_norm"
    x, dims, shape = _batch_stats(fn, input, weight, bias)
    running = [tensor_argument(fn, name, stat, optional=True) for name, stat in
               (("running_mean", running_mean), ("running_var", running_var))]
    for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
        if stat is not None and stat.dim() != 1:        # torch's accessor's RuntimeError
            raise RuntimeError(f"{fn}: expected {name} of one dim (C,), got a tensor of "
                               f"shape {tuple(stat.shape)}")
    _floating(fn, "batch_norm", x)
    params = [p for p in (weight, bias, *running) if p is not None]
    # torch's CPU kernel takes float32 parameters beside a half input (its statistics then
    # float32), and otherwise parameters of the input's dtype only
    mixed = dtypes.is_half(x.dtype) and any(p.dtype == dtypes.float32 for p in params)
    for p in params:
        if p.dtype != x.dtype and not (mixed and p.dtype == dtypes.float32):
            raise RuntimeError(f"{fn}: mixed dtype (CPU): expected parameters of the input's "
                               f"dtype {x.dtype}, got {p.dtype}")
    stat_dtype = dtypes.float32 if mixed else x.dtype
    if x.numel() == 0:
        raise RuntimeError(f"{fn}: input tensor must have at least one element, but got "
                           f"input_sizes = {list(x.shape)}")
    xc = _compute(x)
    count = x.numel() // max(x.shape[1], 1)
    if (training and not dtypes.is_half(x.dtype) and count > 1 and eps > 0
            and (running_mean is None) == (running_var is None)
            and all(p.dtype == x.dtype for p in params)):
        return _fused_batch_norm(x, weight, bias, running_mean, running_var, momentum, eps)
    if training:
        mean = xc.mean(dim=dims)
        var = ((xc - mean.reshape(shape)) ** 2).mean(dim=dims)
        invstd = var.add(eps).rsqrt()
        out = _affine((xc - mean.reshape(shape)) * invstd.reshape(shape), weight, bias, shape)
        _update_running(running_mean, running_var, mean, var, count, momentum)
        return (out.to(x.dtype), mean.detach().to(stat_dtype),
                invstd.detach().to(stat_dtype))
    if running_mean is None or running_var is None:
        raise RuntimeError(f"{fn}: running_mean and running_var must be defined in "
                           f"evaluation mode")
    mean = _compute(running_mean).reshape(shape)
    invstd = _compute(running_var).add(eps).rsqrt().reshape(shape)
    out = _affine((xc - mean) * invstd, weight, bias, shape).to(x.dtype)
    return out, empty(0, dtype=stat_dtype), empty(0, dtype=stat_dtype)


def _fused_batch_norm(x, weight, bias, running_mean, running_var, momentum, eps):
    # the fused node's forward computes the batch statistics and saves mean and rstd for its
    # backward: they are read there, not computed again (torch defines no gradient of them)
    if _records(x, weight, bias):
        out = _batch_norm(x, running_mean, running_var, weight, bias, True, momentum, eps,
                          impl="fused")
        _, _, mean, rstd = out.grad_fn.saved
    else:                                       # no node to record: the kernels, once
        kernels = for_array(x._array)
        x3 = x._array.reshape(x.shape[0], x.shape[1], -1)
        mean, var = kernels.batch_norm_statistics(x3)
        if running_mean is not None:
            kernels.update_running_stats(running_mean._array, running_var._array, mean, var,
                                         x3.shape[0] * x3.shape[2], momentum)
            running_mean._bump_version()
            running_var._bump_version()
        y, rstd = kernels.batch_norm_forward(x3, mean, var, _array(weight), _array(bias), eps)
        out = Tensor._from_op(y.reshape(x._array.shape), None)
    stats = (Tensor._from_op(a.astype(x._array.dtype, copy=True), None) for a in (mean, rstd))
    return (out, *stats)


def _native_batch_norm_legit(input, weight, bias, *args):
    r"""``native_batch_norm`` under its two aten overloads (``torch._native_batch_norm_legit``):
    ``(input, weight, bias, running_mean, running_var, training, momentum, eps)``, or
    ``(input, weight, bias, training, momentum, eps)`` without running statistics.

    Args, Shape: as :func:`native_batch_norm`; without running statistics, training must be
    true's batch statistics and evaluation normalises with them too.

    Example:
        >>> y, m, r = mg._native_batch_norm_legit(mg.randn(4, 3), None, None, True, 0.1, 1e-5)
    """
    if len(args) == 3:
        training, momentum, eps = args
        return native_batch_norm(input, weight, bias, None, None, True, momentum, eps)
    if len(args) != 5:
        raise TypeError(f"_native_batch_norm_legit() takes 6 or 8 arguments, got "
                        f"{len(args) + 3}")
    return native_batch_norm(input, weight, bias, *args)


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    r"""The batch's per-channel mean and biased variance, and the running statistics
    updated in place with them, the variance unbiased there
    (``torch.batch_norm_update_stats``, a step of SyncBatchNorm).

    Args:
        input (Tensor): (N, C, ...).
        running_mean, running_var (Tensor or None): (C,), updated in place.
        momentum (float): ``(1 - momentum) * running + momentum * batch``.

    Shape:
        mean and variance (C,), input's dtype (float32 for a half input).

    Example:
        >>> rm, rv = mg.zeros(3), mg.ones(3)
        >>> mean, var = mg.batch_norm_update_stats(mg.randn(4, 3), rm, rv, 0.1)
    """
    fn = "batch_norm_update_stats"
    x, dims, shape = _batch_stats(fn, input, None, None)
    _floating(fn, "batch_norm_update_stats_cpu", x)
    xc = _compute(x).detach()
    count = x.numel() // max(x.shape[1], 1)
    mean = xc.mean(dim=dims)
    var = ((xc - mean.reshape(shape)) ** 2).mean(dim=dims)
    _update_running(running_mean, running_var, mean, var, count, momentum)
    return mean, var


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    r"""GroupNorm returning its statistics: ``(output, mean, rstd)``
    (``torch.native_group_norm``).

    :math:`y = (x - \mu_{n,g})\, r_{n,g} \cdot w_c + b_c`, the statistics over each sample's
    group of ``C / group`` channels, :math:`r = 1/\sqrt{\sigma^2 + \epsilon}`.

    Args:
        input (Tensor): (N, C, ...), ``N * C * HxW`` elements.
        weight, bias (Tensor or None): (C,).
        N, C, HxW (int): the batch, channels and spatial size.
        group (int): the number of groups, dividing C.
        eps (float): added to the variance.

    Shape:
        output as input; mean and rstd (N, group), input's dtype, differentiable.

    Example:
        >>> y, mean, rstd = mg.native_group_norm(mg.randn(2, 4, 3), None, None, 2, 4, 3, 2,
        ...                                      1e-5)
        >>> tuple(mean.shape)
        (2, 2)
    """
    fn = "native_group_norm"
    x = tensor_argument(fn, "input", input)
    N, C, HxW, group = (dtypes.int_argument(fn, name, v, i + 4) for i, (name, v) in
                        enumerate((("N", N), ("C", C), ("HxW", HxW), ("group", group))))
    for name, p in (("weight", weight), ("bias", bias)):
        if tensor_argument(fn, name, p, optional=True) is not None and p.numel() != C:
            raise RuntimeError(f"{fn}: expected {name} to be a vector of size {C}, but got "
                               f"{name} of shape {list(p.shape)}")
    if group <= 0 or C % group:
        raise RuntimeError(f"{fn}: expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(x.shape)} and "
                           f"num_groups={group}")
    if x.numel() != N * C * HxW:
        raise RuntimeError(f"{fn}: expected input of N * C * HxW = {N * C * HxW} elements, "
                           f"got {x.numel()}")
    xc = _compute(_floating(fn, "GroupNormKernelImpl", x)).reshape(N, group, C // group * HxW)
    if xc.numel() == 0:
        mean = xc.sum(dim=2)
        rstd = mean
    else:
        mean = xc.mean(dim=2)
        rstd = ((xc - mean.unsqueeze(2)) ** 2).mean(dim=2).add(eps).rsqrt()
    out = ((xc - mean.unsqueeze(2)) * rstd.unsqueeze(2)).reshape(x.shape).to(x.dtype)
    out = _affine(out, weight, bias, (1, C) + (1,) * (x.dim() - 2))
    # torch differentiates through the statistics here (unlike native_layer_norm's)
    return out, mean.to(x.dtype), rstd.to(x.dtype)


def native_dropout(input, p, train):
    r"""Dropout returning its keep mask: ``(output, mask)`` (``torch.native_dropout``).

    Training: each element kept with probability ``1 - p`` and scaled by ``1 / (1 - p)``;
    otherwise the output is the input and the mask all true.

    Args:
        input (Tensor): the input.
        p (float): the probability of zeroing, in [0, 1].
        train (bool or None): whether to drop.

    Shape:
        output as input; mask as input, bool.

    Example:
        >>> y, mask = mg.native_dropout(mg.ones(4), 0.5, True)
    """
    fn = "native_dropout"
    x = tensor_argument(fn, "input", input)
    if not 0 <= p <= 1:
        raise RuntimeError(f"{fn}: dropout probability has to be between 0 and 1, but got "
                           f"{p}")
    if train is False or train is None and not x.requires_grad:
        return x.clone(), ones_like(x, dtype=dtypes.bool_)
    if p == 1:
        return x * 0, (x * 0).bool()
    keep = (ones_like(x, dtype=dtypes.float32) * (1 - p)).bernoulli().bool()
    return native_dropout_backward(x, keep, 1 / (1 - p)), keep


def native_dropout_backward(grad_output, mask, scale):
    r"""Dropout's backward, :math:`g \cdot m \cdot s` (``aten.native_dropout_backward``).

    Args:
        grad_output (Tensor): the gradient of the output.
        mask (Tensor): the keep mask, bool.
        scale (float): ``1 / (1 - p)``.

    Shape:
        as grad_output.

    Example:
        >>> mg.native_dropout_backward(mg.ones(3), mg.tensor([True, False, True]), 2.0)
        tensor([2., 0., 2.])
    """
    g = tensor_argument("native_dropout_backward", "grad_output", grad_output)
    m = tensor_argument("native_dropout_backward", "mask", mask)
    if g.dtype == dtypes.bool_:
        return g & m
    return (g * m.to(g.dtype)) * scale


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    r"""Softmax's backward from its output: :math:`y \odot (g - \sum_{dim} g \odot y)`
    (``torch._softmax_backward_data``).

    Args:
        grad_output (Tensor): the gradient of the softmax's output.
        output (Tensor): the softmax's output.
        dim (int): the softmax's dim.
        input_dtype (dtype): the softmax input's dtype, the result's.

    Shape:
        as output.

    Example:
        >>> y = mg.randn(2, 3).softmax(1)
        >>> g = mg._softmax_backward_data(mg.ones(2, 3), y, 1, mg.float32)
    """
    g = tensor_argument("_softmax_backward_data", "grad_output", grad_output)
    y = tensor_argument("_softmax_backward_data", "output", output)
    return (y * (g - (g * y).sum(dim=dim, keepdim=True))).to(input_dtype)


def native_channel_shuffle(input, groups):
    """``F.channel_shuffle`` under torch's native name (``torch.native_channel_shuffle``).

    Args:
        input (Tensor): (N, C, ...).
        groups (int): the number of groups, dividing C.

    Shape:
        as input.

    Example:
        >>> mg.native_channel_shuffle(mg.arange(4.).reshape(1, 4, 1), 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    return _channel_shuffle(input, groups)


# ----- SyncBatchNorm's pieces: per-process statistics, their gather, the split backward ----
def _channels(fn, x):
    x = tensor_argument(fn, "input", x)
    if x.dim() < 2:
        raise RuntimeError(f"{fn}: expected input with at least 2 dims (N, C, ...), got "
                           f"{x.dim()}")
    return x, (0,) + tuple(range(2, x.dim())), (1, x.shape[1]) + (1,) * (x.dim() - 2)


def batch_norm_stats(input, eps):
    r"""One process's per-channel mean and :math:`1/\sqrt{\sigma^2 + \epsilon}` (biased
    variance) (``torch.batch_norm_stats``, SyncBatchNorm's first step).

    Args:
        input (Tensor): (N, C, ...).
        eps (float): added to the variance.

    Shape:
        mean and invstd (C,), float32 for a half input, else input's dtype.

    Example:
        >>> mean, invstd = mg.batch_norm_stats(mg.randn(4, 3), 1e-5)
    """
    x, dims, shape = _channels("batch_norm_stats", input)
    xc = _compute(x)
    mean = xc.mean(dim=dims)
    var = ((xc - mean.reshape(shape)) ** 2).mean(dim=dims)
    return mean, var.add(eps).rsqrt()


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    r"""Normalise with given statistics: :math:`y = (x - \mu_c)\, r_c \cdot w_c + b_c`
    (``torch.batch_norm_elemt``; ``eps`` is taken and unused, as torch's).

    Args:
        input (Tensor): (N, C, ...).
        weight, bias (Tensor or None): (C,).
        mean, invstd (Tensor): (C,), from :func:`batch_norm_gather_stats`.
        eps (float): unused.

    Shape:
        as input, input's dtype.

    Example:
        >>> x = mg.randn(4, 3)
        >>> y = mg.batch_norm_elemt(x, None, None, *mg.batch_norm_stats(x, 1e-5), 1e-5)
    """
    fn = "batch_norm_elemt"
    x, _, shape = _channels(fn, input)
    tensor_argument(fn, "mean", mean)
    tensor_argument(fn, "invstd", invstd)
    out = (_compute(x) - mean.reshape(shape)) * invstd.reshape(shape)
    return _affine(out, weight, bias, shape).to(x.dtype)


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                        momentum, eps, counts):
    r"""The statistics of all processes combined, and the running statistics updated in place
    (``torch.batch_norm_gather_stats_with_counts``).

    With :math:`n_i` elements per channel on process i and :math:`n = \sum n_i`:
    :math:`\mu = \sum n_i \mu_i / n`,
    :math:`\sigma^2 = \sum n_i (r_i^{-2} - \epsilon + (\mu_i - \mu)^2) / n`,
    :math:`r = 1/\sqrt{\sigma^2 + \epsilon}`; the running variance takes
    :math:`\sigma^2 n / (n - 1)`.

    Args:
        input (Tensor): this process's input (its dtype only is read).
        mean, invstd (Tensor): (W, C), each process's :func:`batch_norm_stats`.
        running_mean, running_var (Tensor or None): (C,), updated in place.
        momentum (float): the running statistics' update factor.
        eps (float): the eps the statistics were computed with.
        counts (Tensor): (W,), each process's elements per channel.

    Shape:
        mean and invstd (C,), mean's dtype.

    Example:
        >>> stats = [mg.batch_norm_stats(mg.randn(4, 3), 1e-5) for _ in range(2)]
        >>> mean, invstd = mg.batch_norm_gather_stats_with_counts(
        ...     mg.randn(4, 3), mg.stack([s[0] for s in stats]),
        ...     mg.stack([s[1] for s in stats]), None, None, 0.1, 1e-5, mg.tensor([4., 4.]))
    """
    fn = "batch_norm_gather_stats_with_counts"
    tensor_argument(fn, "input", input)
    mean = tensor_argument(fn, "mean", mean)
    invstd = tensor_argument(fn, "invstd", invstd)
    if mean.dim() != 2 or tuple(invstd.shape) != tuple(mean.shape):
        raise RuntimeError(f"{fn}: expected mean and invstd of one shape (W, C), got "
                           f"{list(mean.shape)} and {list(invstd.shape)}")
    n = tensor_argument(fn, "counts", counts).to(mean.dtype).reshape(-1, 1)
    if n.shape[0] != mean.shape[0]:
        raise RuntimeError(f"{fn}: expected {mean.shape[0]} counts, got {n.shape[0]}")
    total = n.sum(dim=0)
    g_mean = (n * mean).sum(dim=0) / total
    var = (n * (invstd ** -2 - eps + (mean - g_mean) ** 2)).sum(dim=0) / total
    count = float(total.item())
    _update_running(running_mean, running_var, g_mean, var, count, momentum)
    return g_mean, var.add(eps).rsqrt()


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps,
                            count):
    r""":func:`batch_norm_gather_stats_with_counts` with every process's ``count`` one int
    (``torch.batch_norm_gather_stats``).

    Args, Shape: as :func:`batch_norm_gather_stats_with_counts`, ``count`` an int.

    Example:
        >>> m, r = mg.batch_norm_stats(mg.randn(4, 3), 1e-5)
        >>> mean, invstd = mg.batch_norm_gather_stats(mg.randn(4, 3), m[None], r[None], None,
        ...                                           None, 0.1, 1e-5, 4)
    """
    fn = "batch_norm_gather_stats"
    mean = tensor_argument(fn, "mean", mean)
    counts = ones_like(mean[:, 0] if mean.dim() == 2 else mean) * count
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                               momentum, eps, counts)


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g,
                               bias_g):
    r"""The per-channel sums of SyncBatchNorm's backward (``torch.batch_norm_backward_reduce``):
    :math:`\sum g`, :math:`\sum g (x - \mu)`, the weight's gradient
    :math:`r \sum g (x - \mu)` and the bias's :math:`\sum g`, each only where its flag asks
    (None otherwise).

    Args:
        grad_out, input (Tensor): (N, C, ...).
        mean, invstd (Tensor): (C,), the gathered statistics.
        weight (Tensor or None): (C,).
        input_g, weight_g, bias_g (bool): which results to compute.

    Shape:
        each (C,): the sums in mean's dtype, the gradients in weight's.

    Example:
        >>> x, g = mg.randn(4, 3), mg.randn(4, 3)
        >>> m, r = mg.batch_norm_stats(x, 1e-5)
        >>> sum_dy, sum_dy_xmu, gw, gb = mg.batch_norm_backward_reduce(
        ...     g, x, m, r, mg.ones(3), True, True, True)
    """
    fn = "batch_norm_backward_reduce"
    x, dims, shape = _channels(fn, input)
    g = _compute(tensor_argument(fn, "grad_out", grad_out))
    sum_dy = g.sum(dim=dims).to(mean.dtype)
    sum_dy_xmu = (g * (_compute(x) - mean.reshape(shape))).sum(dim=dims).to(mean.dtype)
    kind = weight.dtype if weight is not None else mean.dtype
    grad_weight = (sum_dy_xmu * invstd).to(kind) if weight_g else None
    grad_bias = sum_dy.to(kind) if bias_g else None
    if not input_g:
        sum_dy = sum_dy_xmu = None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu,
                              count):
    r"""SyncBatchNorm's input gradient from the gathered sums
    (``torch.batch_norm_backward_elemt``):
    :math:`\partial x = (g - \frac{\sum g}{n} - (x - \mu)\, r^2 \frac{\sum g (x - \mu)}{n})
    \, r\, w`, :math:`n` the sum of ``count``.

    Args:
        grad_out, input (Tensor): (N, C, ...).
        mean, invstd (Tensor): (C,).
        weight (Tensor or None): (C,).
        sum_dy, sum_dy_xmu (Tensor): (C,), summed over all processes.
        count (Tensor): (W,), each process's elements per channel.

    Shape:
        as input, input's dtype.

    Example:
        >>> x, g = mg.randn(4, 3), mg.randn(4, 3)
        >>> m, r = mg.batch_norm_stats(x, 1e-5)
        >>> s, sx, _, _ = mg.batch_norm_backward_reduce(g, x, m, r, None, True, False, False)
        >>> dx = mg.batch_norm_backward_elemt(g, x, m, r, None, s, sx, mg.tensor([4]))
    """
    fn = "batch_norm_backward_elemt"
    x, _, shape = _channels(fn, input)
    g = _compute(tensor_argument(fn, "grad_out", grad_out))
    n = float(tensor_argument(fn, "count", count).sum().item())
    mean, invstd = mean.reshape(shape), invstd.reshape(shape)
    xmu = _compute(x) - mean
    dx = (g - sum_dy.reshape(shape) / n
          - xmu * invstd ** 2 * sum_dy_xmu.reshape(shape) / n) * invstd
    if weight is not None:
        dx = dx * weight.reshape(shape)
    return dx.to(x.dtype)


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    r"""The p-norm :math:`(\sum |x|^p)^{1/p}` under torch's native name (``torch.native_norm``):
    ``native_norm(input, p=2)`` over every element, or ``native_norm(input, p, dim, keepdim,
    dtype)``; ``linalg.vector_norm``'s value and gradient.

    Args:
        input (Tensor): the input.
        p (float): the order.
        dim (int or sequence of int or None): the dims reduced; None for all.
        keepdim (bool): whether the reduced dims stay as size 1.
        dtype (dtype or None): the dtype computed in and returned.

    Shape:
        input's shape without ``dim`` (size 1 there with ``keepdim``).

    Example:
        >>> mg.native_norm(mg.tensor([3., 4.]))
        tensor(5.)
    """
    from .linalg import vector_norm
    return vector_norm(input, p, dim=dim, keepdim=keepdim, dtype=dtype)
