"""RMSNorm and its residual form, twice: the textbook graph and one fused node.
docs/derivations.md derives the backward; docs/precision.md explains ``offset`` and
``casting`` (Hugging Face's LLaMA and Gemma conventions)."""

from ..autograd import op_group
from ..dtypes import accumulation_dtype
from ..kernels import for_array
from . import arguments
from .spec import (FusedNorm, Norm, affine, empty_norm, flat, row_norm_call, row_norm_torch,
                   rows, shaped)

__all__ = ["rms_norm", "add_rms_norm", "RMS_NORM", "ADD_RMS_NORM"]


# ----- composite: the textbook graph, every cast a visible Cast node ----------------------
def composite_rms_norm(x, normalized_shape, weight=None, eps=1e-6, offset=0.0,
                       casting="llama"):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    acc = accumulation_dtype(x.dtype)
    h = x if casting == "none" else _cast(x, acc)             # llama, gemma: stats in float32
    xhat = h / ((h * h).mean(axes, keepdims=True) + eps).sqrt()
    if casting == "gemma":
        weight = None if weight is None else _offset(_cast(weight, acc), offset)
        return _cast(affine(xhat, weight, None), x.dtype)     # (x̂·w') cast at the end
    xhat = _cast(xhat, x.dtype)                               # llama: x̂ cast before w'
    weight = None if weight is None else _offset(weight, offset)   # in the weight's dtype
    return affine(xhat, weight, None)


def composite_add_rms_norm(x, residual, normalized_shape, weight=None, eps=1e-6, offset=0.0,
                           casting="llama"):
    s = x + residual
    return composite_rms_norm(s, normalized_shape, weight, eps, offset, casting), s


def _cast(t, dtype):
    return t if t.dtype == dtype else t.astype(dtype)


def _offset(weight, offset):
    return weight + offset if offset else weight


# ----- fused: one node, closed-form backward ----------------------------------------------
class RMSNorm(FusedNorm):
    saved_names = ("x", "weight", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, weight, normalized_shape, eps, offset=0.0, casting="llama"):
        ctx.normalized_shape, ctx.offset, ctx.casting = normalized_shape, offset, casting
        ctx.kernels = for_array(x)
        y, rstd = ctx.kernels.rms_norm_forward(rows(x, normalized_shape), flat(weight), eps,
                                               offset=offset, casting=casting)
        # Saved: x, weight and rstd (1 number per row); x̂ = x·rstd is recomputed.
        ctx.save_for_backward(x, weight, rstd)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved
        x2 = rows(x, ctx.normalized_shape)                                  # (M, D)
        dx, dweight = ctx.kernels.rms_norm_backward(
            dy.reshape(x2.shape), x2, flat(weight), rstd, offset=ctx.offset, casting=ctx.casting)
        return dx.reshape(x.shape), shaped(dweight, weight)


class AddRMSNorm(FusedNorm):
    """(x, residual) -> (RMSNorm(x + residual), x + residual) in one node."""

    saved_names = ("x + residual", "weight", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, residual, weight, normalized_shape, eps, offset=0.0, casting="llama"):
        ctx.normalized_shape, ctx.offset, ctx.casting = normalized_shape, offset, casting
        ctx.kernels = for_array(x)
        y, s, rstd = ctx.kernels.add_rms_norm_forward(
            rows(x, normalized_shape), rows(residual, normalized_shape), flat(weight), eps,
            offset=offset, casting=casting)
        s = s.reshape(x.shape)
        # Saved: the sum s (this node's own output), weight, rstd per row.
        ctx.save_for_backward(s, weight, rstd)
        return y.reshape(x.shape), s

    @staticmethod
    def backward(ctx, dy, ds):
        s, weight, rstd = ctx.saved
        s2 = rows(s, ctx.normalized_shape)                                  # (M, D)
        dsum, dweight = ctx.kernels.add_rms_norm_backward(
            dy.reshape(s2.shape), ds.reshape(s2.shape), s2, flat(weight), rstd,
            offset=ctx.offset, casting=ctx.casting)
        dsum = dsum.reshape(s.shape)
        return dsum, dsum, shaped(dweight, weight)


# ----- the public entries -----------------------------------------------------------------
def rms_norm(x, normalized_shape, weight=None, eps=1e-6, impl=None, offset=0.0,
             casting="llama"):
    r"""RMS normalization over the trailing ``normalized_shape`` dims of ``x``.

    .. math::
        y = \frac{x}{\sqrt{\mathrm{E}[x^2] + \epsilon}} \cdot (\text{offset} + \gamma)

    Args:
        normalized_shape: int or tuple of ints, the trailing dims to normalize over.
        weight: γ of shape ``normalized_shape``, or None; float32 beside float16/bfloat16
            x in the "llama" and "gemma" modes.
        eps: added to the mean square inside the square root; None: x's machine epsilon.
        impl: ``"fused"`` or ``"composite"``; None: as in ``layer_norm``.
        offset: added to the weight (Gemma's 1); needs a weight.
        casting: where half-precision x is cast: ``"llama"``, ``"gemma"`` or ``"none"``.

    Shape:
        x: (*, *normalized_shape), floating point; output: x's shape.

    Example:
        >>> y = F.rms_norm(x, 8, weight=mg.tensor(np.ones(8)))
        >>> h = mg.tensor(np.random.randn(2, 8), dtype="bfloat16")
        >>> y = F.rms_norm(h, 8, mg.tensor(np.zeros(8)), offset=1.0, casting="gemma")
    """
    impl = arguments.resolve_impl("rms_norm", impl)
    eps = arguments.default_eps(x, eps) if eps is None else eps
    normalized_shape = _check("rms_norm", x, None, normalized_shape, weight, eps, impl, offset,
                              casting)
    if x._array.size == 0:
        return empty_norm(x, weight, None)
    if impl == "composite":
        with op_group("rms_norm"):
            return composite_rms_norm(x, normalized_shape, weight, eps, offset, casting)
    return RMSNorm.apply(x, weight, normalized_shape=normalized_shape, eps=eps, offset=offset,
                         casting=casting)


def add_rms_norm(x, residual, normalized_shape, weight=None, eps=1e-6, impl=None,
                 offset=0.0, casting="llama"):
    """Residual add fused with RMSNorm: returns ``(rms_norm(x + residual), x + residual)``;
    arguments as in ``add_layer_norm`` (no bias) and ``rms_norm``."""
    impl = arguments.resolve_impl("add_rms_norm", impl)
    eps = arguments.default_eps(x, eps) if eps is None else eps
    normalized_shape = _check("add_rms_norm", x, residual, normalized_shape, weight, eps,
                              impl, offset, casting)
    if x._array.size == 0:
        s = x + residual
        return empty_norm(s, weight, None), s
    if impl == "composite":
        with op_group("add_rms_norm"):
            return composite_add_rms_norm(x, residual, normalized_shape, weight, eps, offset,
                                          casting)
    return AddRMSNorm.apply(x, residual, weight, normalized_shape=normalized_shape, eps=eps,
                            offset=offset, casting=casting)


def _check(fn, x, residual, normalized_shape, weight, eps, impl, offset, casting):
    return arguments.check_row_norm(
        fn, x, normalized_shape, eps, impl, residual=residual, weight=weight,
        weight_dtype=arguments.rms_weight_dtype(fn, x, weight, offset, casting))


# ----- the specs --------------------------------------------------------------------------
_torch = row_norm_torch("rms_norm", 1e-6)
RMS_NORM = Norm("rms_norm", "RMSNorm", rms_norm, composite_rms_norm, RMSNorm, ("weight",),
                1e-6, row_norm_call, _torch, aliases=("rmsnorm",))
ADD_RMS_NORM = Norm("add_rms_norm", "Add + RMSNorm", add_rms_norm, composite_add_rms_norm,
                    AddRMSNorm, ("weight",), 1e-6, row_norm_call, _torch, residual=True)
