"""LayerNorm and its residual form, twice: the textbook graph and one fused node.
docs/derivations.md derives the fused node's backward."""

from ..autograd import op_group
from ..dtypes import float_of
from ..kernels import for_array
from . import arguments
from .spec import (FusedFunction, Input, Naive, Norm, Option, affine, eps_beside, flat,
                   one_pass_norm, row_norm_call, row_norm_torch, rows, shaped, unrows)

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
class LayerNorm(FusedFunction):
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
        return unrows(y, x.shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved
        x2 = rows(x, ctx.normalized_shape)                                  # (M, D)
        dx, dweight, dbias = ctx.kernels.layer_norm_backward(
            dy.reshape(x2.shape), x2, flat(weight), mean, rstd, ctx.has_bias)
        dbias = None if dbias is None else dbias.reshape(ctx.normalized_shape)
        return dx.reshape(x.shape), shaped(dweight, weight), dbias

    @staticmethod
    def recompute(ctx, x, weight, bias):         # the twin, for double backward
        saved_x, _, _, rstd = ctx.saved
        eps = _row_eps(saved_x, rstd, ctx.normalized_shape)
        return composite_layer_norm(x, ctx.normalized_shape, weight, bias, eps)


class AddLayerNorm(FusedFunction):
    """(x, residual) -> (LayerNorm(x + residual), x + residual) in one node."""

    saved_names = ("x + residual", "weight", "mean", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, residual, weight, bias, normalized_shape, eps):
        ctx.normalized_shape, ctx.kernels = normalized_shape, for_array(x)
        y, s, mean, rstd = ctx.kernels.add_layer_norm_forward(
            rows(x, normalized_shape), rows(residual, normalized_shape),
            flat(weight), flat(bias), eps)
        s = unrows(s, x.shape)
        # Saved: the sum s (our second output, alive anyway as the residual stream)
        # instead of x and residual; weight; mean and rstd per row.
        ctx.save_for_backward(s, weight, mean, rstd)
        ctx.has_bias = bias is not None
        return unrows(y, x.shape), s

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

    @staticmethod
    def recompute(ctx, x, residual, weight, bias):     # the twin, for double backward
        s, _, _, rstd = ctx.saved
        eps = _row_eps(s, rstd, ctx.normalized_shape)
        return composite_add_layer_norm(x, residual, ctx.normalized_shape, weight, bias, eps)


def _row_eps(x, rstd, normalized_shape):
    # the eps forward added, one per row beside the composite's variance (*, 1, ..., 1)
    x2 = rows(x, normalized_shape).astype(rstd.dtype, copy=False)              # (M, D)
    kept = x.shape[:x.ndim - len(normalized_shape)] + (1,) * len(normalized_shape)
    return eps_beside(x2.var(axis=1), rstd, kept, x.dtype)


# ----- the public entries -----------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, impl=None):
    r"""Layer normalization over the trailing ``normalized_shape`` dims of x.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    Args:
        input: x, a floating-point Tensor (torch's name: ``input=`` as keyword).
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
    x = input                                 # torch's keyword; x, as the formula says
    impl = arguments.resolve_impl("layer_norm", impl)
    if eps.__class__ is not float:            # a bool, NumPy scalar or 0-d tensor
        eps = float_of(eps, "layer_norm", "eps")
    normalized_shape = arguments.check_row_norm("layer_norm", x, normalized_shape, eps, impl,
                                                weight=weight, bias=bias)
    if x._array.size == 0:
        return LAYER_NORM.empty_output(x, weight=weight, bias=bias)
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
    if eps.__class__ is not float:            # a bool, NumPy scalar or 0-d tensor
        eps = float_of(eps, "add_layer_norm", "eps")
    normalized_shape = arguments.check_row_norm("add_layer_norm", x, normalized_shape, eps,
                                                impl, residual=residual, weight=weight,
                                                bias=bias)
    if x._array.size == 0:
        s = x + residual
        return ADD_LAYER_NORM.empty_output(s, weight=weight, bias=bias), s
    if impl == "composite":
        with op_group("add_layer_norm"):
            return composite_add_layer_norm(x, residual, normalized_shape, weight, bias, eps)
    return AddLayerNorm.apply(x, residual, weight, bias, normalized_shape=normalized_shape,
                              eps=eps)


# ----- the precision report's naive rows and the GPU bench's kernel calls -----------------
def _eps_outside(given, eps):
    """x̂ = (x − μ)/(σ + eps): the placement of eps that PyTorch's convention is not."""
    x = given["x"]
    centered = x - x.mean(-1, keepdims=True)
    std = (centered * centered).mean(-1, keepdims=True).sqrt()
    return affine(centered / (std + eps), given.get("weight"), given.get("bias"))


def _kernel_calls(k, a, eps):
    _, mean, rstd = k.layer_norm_forward(a["x"], a["weight"], a["bias"], eps)
    return (lambda: k.layer_norm_forward(a["x"], a["weight"], a["bias"], eps),
            lambda: k.layer_norm_backward(a["dy"], a["x"], a["weight"], mean, rstd, True))


# ----- the specs --------------------------------------------------------------------------
_NAIVE = {"one-pass": Naive(one_pass_norm(-1), shows=("float32", "constant rows")),
          "eps-outside": Naive(_eps_outside, shows=("float32", "offset 1e4"))}
_X, _RESIDUAL = Input("x", "x"), Input("residual", "like-x")
_AFFINE = (Input("weight", "per-feature", optional=True, init=1.0),
           Input("bias", "per-feature", optional=True))
LAYER_NORM = Norm(
    name="layer_norm", title="LayerNorm", aliases=("layernorm",), function=layer_norm,
    composite=composite_layer_norm, fused=LayerNorm, inputs=(_X, *_AFFINE),
    options=(Option("eps", 1e-5),), call=row_norm_call, torch=row_norm_torch("layer_norm"),
    places=("row", "mlp"), naive=_NAIVE,
    kernels=("layer_norm_forward", "layer_norm_backward"), kernel_calls=_kernel_calls,
    kernel_outputs=("y", "mean", "rstd", "dx", "dweight", "dbias"))
ADD_LAYER_NORM = Norm(
    name="add_layer_norm", title="Add + LayerNorm", function=add_layer_norm,
    composite=composite_add_layer_norm, fused=AddLayerNorm, inputs=(_X, _RESIDUAL, *_AFFINE),
    options=(Option("eps", 1e-5),), outputs=("output", "sum x + residual"),
    call=row_norm_call, torch=row_norm_torch("layer_norm"),
    kernels=("add_layer_norm_forward", "add_layer_norm_backward"))
