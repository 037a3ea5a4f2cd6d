"""Fused norms: one graph node each, whose backward is the closed form.

Each node reshapes its input to rows (or channels) and calls a kernel module; the shape
bookkeeping lives here, the math in ``kernels.blocked`` (NumPy) or ``kernels.cuda`` (CuPy),
picked by ``for_array`` from the input's array type (or the CPU kernels that
``set_cpu_kernels`` chose for NumPy arrays). The forward keeps the module it
picked (``ctx.kernels``) and the backward runs that one's closed form, whatever is selected
by then. What each node saves is
chosen on purpose and written next to ``save_for_backward``: the input the previous op
already keeps alive, the parameters, and a few numbers per row, never a full-size x̂.
"""

from ..autograd import Function
from ..kernels import for_array


def _rows(array, normalized_shape):
    """(..., *normalized_shape) -> (M, D)."""
    size = 1
    for n in normalized_shape:
        size *= n
    return array.reshape(array.size // size if size else 0, size)


def _flat(param):
    return None if param is None else param.reshape(-1)


def _shaped(grad, param):
    return None if grad is None or param is None else grad.reshape(param.shape)


def _reshaped(dbias, ctx):
    return None if dbias is None else dbias.reshape(ctx.normalized_shape)


class LayerNorm(Function):
    saved_names = ("x", "weight", "mean", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, weight, bias, normalized_shape, eps):
        ctx.normalized_shape, ctx.kernels = normalized_shape, for_array(x)
        y, mean, rstd = ctx.kernels.layer_norm_forward(
            _rows(x, normalized_shape), _flat(weight), _flat(bias), eps)
        # Saved: x (already alive as the previous op's output), weight, and mean and rstd,
        # 2 numbers per row. x̂ = (x - mean)·rstd is recomputed in backward: one extra pass
        # over x instead of keeping M·D more values alive until backward.
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.has_bias = bias is not None
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved
        rows = _rows(x, ctx.normalized_shape)
        dx, dweight, dbias = ctx.kernels.layer_norm_backward(
            dy.reshape(rows.shape), rows, _flat(weight), mean, rstd, ctx.has_bias)
        return dx.reshape(x.shape), _shaped(dweight, weight), _reshaped(dbias, ctx)


class RMSNorm(Function):
    """RMSNorm with w' = offset + w and a casting mode (``kernels.reference``)."""

    saved_names = ("x", "weight", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, weight, normalized_shape, eps, offset=0.0, casting="llama"):
        ctx.normalized_shape, ctx.offset, ctx.casting = normalized_shape, offset, casting
        ctx.kernels = for_array(x)
        rows = _rows(x, normalized_shape)
        y, rstd = ctx.kernels.rms_norm_forward(rows, _flat(weight), eps, offset=offset,
                                               casting=casting)
        # Saved: x, weight and rstd (1 number per row); x̂ = x·rstd is recomputed.
        ctx.save_for_backward(x, weight, rstd)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved
        rows = _rows(x, ctx.normalized_shape)
        dx, dweight = ctx.kernels.rms_norm_backward(
            dy.reshape(rows.shape), rows, _flat(weight), rstd, offset=ctx.offset,
            casting=ctx.casting)
        return dx.reshape(x.shape), _shaped(dweight, weight)


class AddLayerNorm(Function):
    """(x, residual) -> (LayerNorm(x + residual), x + residual) in one node."""

    saved_names = ("x + residual", "weight", "mean", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, residual, weight, bias, normalized_shape, eps):
        ctx.normalized_shape, ctx.kernels = normalized_shape, for_array(x)
        y, s, mean, rstd = ctx.kernels.add_layer_norm_forward(
            _rows(x, normalized_shape), _rows(residual, normalized_shape),
            _flat(weight), _flat(bias), eps)
        s = s.reshape(x.shape)
        # Saved: the sum s (this node's own second output, which the next residual add
        # keeps alive anyway) instead of x and residual; weight; mean and rstd per row.
        ctx.save_for_backward(s, weight, mean, rstd)
        ctx.has_bias = bias is not None
        return y.reshape(x.shape), s

    @staticmethod
    def backward(ctx, dy, ds):
        s, weight, mean, rstd = ctx.saved
        rows = _rows(s, ctx.normalized_shape)
        dsum, dweight, dbias = ctx.kernels.add_layer_norm_backward(
            dy.reshape(rows.shape), ds.reshape(rows.shape), rows, _flat(weight), mean, rstd,
            ctx.has_bias)
        dsum = dsum.reshape(s.shape)
        return dsum, dsum, _shaped(dweight, weight), _reshaped(dbias, ctx)


class AddRMSNorm(Function):
    """(x, residual) -> (RMSNorm(x + residual), x + residual) in one node."""

    saved_names = ("x + residual", "weight", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, residual, weight, normalized_shape, eps, offset=0.0, casting="llama"):
        ctx.normalized_shape, ctx.offset, ctx.casting = normalized_shape, offset, casting
        ctx.kernels = for_array(x)
        y, s, rstd = ctx.kernels.add_rms_norm_forward(
            _rows(x, normalized_shape), _rows(residual, normalized_shape), _flat(weight), eps,
            offset=offset, casting=casting)
        s = s.reshape(x.shape)
        # Saved: the sum s (this node's own output), weight, rstd per row.
        ctx.save_for_backward(s, weight, rstd)
        return y.reshape(x.shape), s

    @staticmethod
    def backward(ctx, dy, ds):
        s, weight, rstd = ctx.saved
        rows = _rows(s, ctx.normalized_shape)
        dsum, dweight = ctx.kernels.add_rms_norm_backward(
            dy.reshape(rows.shape), ds.reshape(rows.shape), rows, _flat(weight), rstd,
            offset=ctx.offset, casting=ctx.casting)
        dsum = dsum.reshape(s.shape)
        return dsum, dsum, _shaped(dweight, weight)


class BatchNorm(Function):
    """Per-channel norm of x (N, C, *) over every dim but 1.

    In training it normalizes with the batch statistics and updates ``running_mean`` and
    ``running_var`` (arrays, or None) in place; in eval it normalizes with them.
    """

    saved_names = ("x", "weight", "mean", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
        x3 = x.reshape(x.shape[0], x.shape[1], -1)                  # (N, C, L)
        ctx.kernels = kernels = for_array(x)
        acc = kernels.accumulation_dtype(x.dtype)
        if training:
            mean, var = kernels.batch_norm_statistics(x3)         # (C,), (C,)
            kernels.update_running_stats(running_mean, running_var, mean, var,
                                           x3.shape[0] * x3.shape[2], momentum)
        else:
            # Copies: the running statistics may be updated before this node's backward.
            mean = running_mean.astype(acc, copy=True)
            var = running_var.astype(acc, copy=True)
        y, rstd = kernels.batch_norm_forward(x3, mean, var, weight, bias, eps)
        # Saved: x, weight, and mean and rstd per channel; x̂ is recomputed in backward.
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.has_bias = bias is not None
        ctx.training = training
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved
        x3 = x.reshape(x.shape[0], x.shape[1], -1)
        dx, dweight, dbias = ctx.kernels.batch_norm_backward(
            dy.reshape(x3.shape), x3, weight, mean, rstd, ctx.training, ctx.has_bias)
        return dx.reshape(x.shape), dweight, dbias
