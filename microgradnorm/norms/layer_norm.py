"""LayerNorm and its residual form, twice: the textbook graph and one fused node.
docs/derivations.md derives the fused node's backward."""

from ..autograd import op_group
from ..kernels import for_array
from . import arguments
from .spec import (FusedNorm, Norm, affine, empty_norm, flat, row_norm_call, row_norm_torch,
                   rows, shaped)

__all__ = ["layer_norm", "add_layer_norm", "LAYER_NORM", "ADD_LAYER_NORM"]


# ----- composite: the textbook graph, one node per primitive ------------------------------
def composite_layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axes, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axes, keepdims=True)     # biased, from centred values
    xhat = centered / (var + eps).sqrt()
    return affine(xhat, weight, bias)


def composite_add_layer_norm(x, residual, normalized_shape, weight=None, bias=None, eps=1e-5):
    s = x + residual
    return composite_layer_norm(s, normalized_shape, weight, bias, eps), s


# ----- fused: one node, closed-form backward ----------------------------------------------
class LayerNorm(FusedNorm):
    saved_names = ("x", "weight", "mean", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, weight, bias, normalized_shape, eps):
        ctx.normalized_shape, ctx.kernels = normalized_shape, for_array(x)
        y, mean, rstd = ctx.kernels.layer_norm_forward(
            rows(x, normalized_shape), flat(weight), flat(bias), eps)
        # Saved: x (alive anyway as the previous op's output), weight, mean and rstd per
        # row; x̂ is recomputed in backward, one pass over x instead of M·D more values kept.
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.has_bias = bias is not None
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved
        x2 = rows(x, ctx.normalized_shape)                                  # (M, D)
        dx, dweight, dbias = ctx.kernels.layer_norm_backward(
            dy.reshape(x2.shape), x2, flat(weight), mean, rstd, ctx.has_bias)
        dbias = None if dbias is None else dbias.reshape(ctx.normalized_shape)
        return dx.reshape(x.shape), shaped(dweight, weight), dbias


class AddLayerNorm(FusedNorm):
    """(x, residual) -> (LayerNorm(x + residual), x + residual) in one node."""

    saved_names = ("x + residual", "weight", "mean", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, residual, weight, bias, normalized_shape, eps):
        ctx.normalized_shape, ctx.kernels = normalized_shape, for_array(x)
        y, s, mean, rstd = ctx.kernels.add_layer_norm_forward(
            rows(x, normalized_shape), rows(residual, normalized_shape),
            flat(weight), flat(bias), eps)
        s = s.reshape(x.shape)
        # Saved: the sum s (our second output, alive anyway as the residual stream)
        # instead of x and residual; weight; mean and rstd per row.
        ctx.save_for_backward(s, weight, mean, rstd)
        ctx.has_bias = bias is not None
        return y.reshape(x.shape), s

    @staticmethod
    def backward(ctx, dy, ds):
        s, weight, mean, rstd = ctx.saved
        s2 = rows(s, ctx.normalized_shape)                                  # (M, D)
        dsum, dweight, dbias = ctx.kernels.add_layer_norm_backward(
            dy.reshape(s2.shape), ds.reshape(s2.shape), s2, flat(weight), mean, rstd,
            ctx.has_bias)
        dsum = dsum.reshape(s.shape)
        dbias = None if dbias is None else dbias.reshape(ctx.normalized_shape)
        return dsum, dsum, shaped(dweight, weight), dbias


# ----- the public entries -----------------------------------------------------------------
def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5, impl=None):
    r"""Layer normalization over the trailing ``normalized_shape`` dims of ``x``.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    Args:
        normalized_shape: int or tuple of ints, the trailing dims to normalize over.
        weight, bias: γ and β of shape ``normalized_shape``, or None (γ = 1, β = 0).
        eps: added to the biased variance inside the square root.
        impl: ``"fused"`` (one node) or ``"composite"`` (the textbook graph of primitives);
            None: this thread's default, ``"fused"`` unless a ``mg.norm_impl`` block says.

    Shape:
        x: (*, *normalized_shape), floating point; output: x's shape.

    Example:
        >>> x = mg.tensor(np.random.randn(2, 5, 8), requires_grad=True)
        >>> y = F.layer_norm(x, 8)                 # each of the 2·5 rows: mean 0, variance ≈ 1
    """
    impl = arguments.resolve_impl("layer_norm", impl)
    normalized_shape = arguments.check_row_norm("layer_norm", x, normalized_shape, eps, impl,
                                                weight=weight, bias=bias)
    if x._array.size == 0:
        return empty_norm(x, weight, bias)
    if impl == "composite":
        with op_group("layer_norm"):          # the visualizer can fold the call's nodes
            return composite_layer_norm(x, normalized_shape, weight, bias, eps)
    return LayerNorm.apply(x, weight, bias, normalized_shape=normalized_shape, eps=eps)


def add_layer_norm(x, residual, normalized_shape, weight=None, bias=None, eps=1e-5,
                   impl=None):
    """Residual add fused with LayerNorm: returns ``(layer_norm(s), s)`` for
    ``s = x + residual``, the new residual stream of a pre-norm block.

    Args:
        x, residual: Tensors of one shape (*, *normalized_shape), dtype and device.
        normalized_shape, weight, bias, eps, impl: as in ``layer_norm``.

    Example:
        >>> h, stream = F.add_layer_norm(attn_out, stream, 64, ln.weight, ln.bias)
    """
    impl = arguments.resolve_impl("add_layer_norm", impl)
    normalized_shape = arguments.check_row_norm("add_layer_norm", x, normalized_shape, eps,
                                                impl, residual=residual, weight=weight,
                                                bias=bias)
    if x._array.size == 0:
        s = x + residual
        return empty_norm(s, weight, bias), s
    if impl == "composite":
        with op_group("add_layer_norm"):
            return composite_add_layer_norm(x, residual, normalized_shape, weight, bias, eps)
    return AddLayerNorm.apply(x, residual, weight, bias, normalized_shape=normalized_shape,
                              eps=eps)


# ----- the specs --------------------------------------------------------------------------
_torch = row_norm_torch("layer_norm", 1e-5)
LAYER_NORM = Norm("layer_norm", "LayerNorm", layer_norm, composite_layer_norm, LayerNorm,
                  ("weight", "bias"), 1e-5, row_norm_call, _torch, aliases=("layernorm",))
ADD_LAYER_NORM = Norm("add_layer_norm", "Add + LayerNorm", add_layer_norm,
                      composite_add_layer_norm, AddLayerNorm, ("weight", "bias"), 1e-5,
                      row_norm_call, _torch, residual=True)
