"""DyT, Dynamic Tanh (Zhu et al. 2025, "Transformers without Normalization"), twice: the
textbook graph and one fused node. y = γ·tanh(α·x) + β replaces LayerNorm in a Transformer
block without taking a statistic: one learned scalar α squashes every element, γ and β are
per feature. docs/derivations.md §12 derives the fused node's backward; docs/dyt.md shows
the tanh against LayerNorm's output in a trained block."""

from ..autograd import op_group
from ..kernels import for_array
from . import arguments
from .spec import FusedFunction, Input, Norm, affine, flat, rows, shaped

__all__ = ["DYT", "dyt"]


# ----- composite: the textbook graph, one node per primitive ------------------------------
def composite_dyt(x, alpha, weight=None, bias=None):
    """γ·tanh(α·x) + β with tensor operators: Mul, Tanh, Mul, Add."""
    return affine((alpha * x).tanh(), weight, bias)


# ----- fused: one node, closed-form backward ----------------------------------------------
class DyT(FusedFunction):
    saved_names = ("x", "alpha", "weight")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, alpha, weight, bias, normalized_shape):
        ctx.normalized_shape, ctx.kernels = normalized_shape, for_array(x)
        y = ctx.kernels.dyt_forward(rows(x, normalized_shape), alpha, flat(weight),
                                    flat(bias))
        # Saved: x (alive anyway as the previous op's output), α and weight; tanh(α·x) is
        # recomputed in backward. Saving it instead would not do: dα needs x as well.
        ctx.save_for_backward(x, alpha, weight)
        ctx.has_bias = bias is not None
        return y.reshape(x.shape if x.ndim else alpha.shape)     # 0-d x and α (1,): (1,)

    @staticmethod
    def backward(ctx, dy):
        x, alpha, weight = ctx.saved
        x2 = rows(x, ctx.normalized_shape)                                  # (M, D)
        dx, dalpha, dweight, dbias = ctx.kernels.dyt_backward(
            dy.reshape(x2.shape), x2, alpha, flat(weight), ctx.has_bias)
        dbias = None if dbias is None else dbias.reshape(ctx.normalized_shape)
        return dx.reshape(x.shape), dalpha, shaped(dweight, weight), dbias

    @staticmethod
    def recompute(ctx, x, alpha, weight, bias):  # the twin, for double backward
        return composite_dyt(x, alpha, weight, bias)


# ----- the public entry -------------------------------------------------------------------
def dyt(x, alpha, weight=None, bias=None, impl=None):
    r"""Dynamic Tanh, the statistics-free replacement of LayerNorm (Zhu et al. 2025):

    .. math::
        y = \gamma \odot \tanh(\alpha x) + \beta

    Args:
        alpha: α, a Tensor of one element (shape ``(1,)`` as ``nn.DyT`` holds it, or 0-d)
            in x's dtype: the slope at 0, learned; 0.5 to start in the paper's models.
        weight, bias: γ and β, Tensors of the trailing dims of x (``(D,)`` for features
            in the last dim), or None (γ = 1, β = 0).
        impl: ``"fused"`` (one node) or ``"composite"`` (the graph of primitives); None:
            this thread's default, ``"fused"`` unless a ``mg.norm_impl`` block says.

    Shape:
        x: (*, *weight.shape), floating point; output: x's shape (as PyTorch's
        broadcasting gives it: a 0-d x with α of shape (1,) gives (1,)).

    Example:
        >>> x = mg.tensor(np.random.randn(2, 5, 8), requires_grad=True)
        >>> alpha = mg.tensor([0.5], requires_grad=True)
        >>> y = F.dyt(x, alpha, mg.ones(8), mg.zeros(8))        # every value in (-1, 1)
    """
    impl = arguments.resolve_impl("dyt", impl)
    normalized_shape = _check(x, alpha, weight, bias, impl)
    if x._array.size == 0:
        return DYT.empty_output(x, alpha=alpha, weight=weight, bias=bias)
    if impl == "composite":
        with op_group("dyt"):               # the visualizer can fold the call's nodes
            return composite_dyt(x, alpha, weight, bias)
    return DyT.apply(x, alpha, weight, bias, normalized_shape=normalized_shape)


def _check(x, alpha, weight, bias, impl):
    """Every argument of ``dyt``, checked before anything runs; returns the trailing shape
    the parameters cover (x's last dim without them)."""
    fn = "dyt"
    arguments.check_tensor(fn, "x", x)
    arguments.check_tensor(fn, "alpha", alpha)
    if alpha.shape not in ((), (1,)):
        raise ValueError(f"{fn}: alpha must be one number, a Tensor of shape (1,) or (), "
                         f"got shape {alpha.shape}")
    arguments.check_param(fn, "alpha", alpha, alpha.shape, x)      # x's dtype and device
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None:
            arguments.check_tensor(fn, name, param)
    # the parameters cover x's trailing dims, as many as the first given has (at least 1)
    given = weight if weight is not None else bias
    covered = 1 if given is None else max(given.ndim, 1)
    shape = x.shape[max(x.ndim - covered, 0):]
    arguments.check_param(fn, "weight", weight, shape, x)
    arguments.check_param(fn, "bias", bias, shape, x)
    arguments.check_impl(fn, impl)
    return shape


# ----- the spec ---------------------------------------------------------------------------
def _torch_dyt(tF, given):
    """PyTorch's twin: the formula in torch ops (PyTorch has no DyT of its own)."""
    return affine((given["alpha"] * given["x"]).tanh(), given.get("weight"), given.get("bias"))


DYT = Norm(
    name="dyt", title="DyT", aliases=("dynamic_tanh",), function=dyt, composite=composite_dyt,
    fused=DyT, inputs=(Input("x", "x"), Input("alpha", "scalar", init=0.5),
                       Input("weight", "per-feature", optional=True, init=1.0),
                       Input("bias", "per-feature", optional=True)),
    torch=_torch_dyt, places=("row", "mlp"), statistics=None, centres=False,
    kernels=("dyt_forward", "dyt_backward"))
