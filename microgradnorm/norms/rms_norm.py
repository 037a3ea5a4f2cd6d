"""RMSNorm and its residual form, twice: the textbook graph and one fused node.
docs/derivations.md derives the backward; docs/precision.md explains ``offset`` and
``casting`` (Hugging Face's LLaMA and Gemma conventions)."""

import warnings

import numpy as np

from ..autograd import op_group
from ..dtypes import accumulation_dtype, check_number, float_of, is_half
from ..kernels import CASTINGS, for_array
from ..tensor import Tensor
from . import arguments
from .spec import (FusedFunction, Input, Norm, Option, affine, eps_beside, flat,
                   row_norm_call, row_norm_torch, rows, shaped, unrows)

__all__ = ["ADD_RMS_NORM", "CASTINGS", "RMS_NORM", "add_rms_norm", "check_rms_options",
           "rms_norm"]


# ----- composite: the textbook graph, every cast a visible Cast node ----------------------
def composite_rms_norm(x, normalized_shape, weight=None, eps=None, offset=0.0,
                       casting="llama"):
    eps = arguments.resolve_eps(x, eps)                       # None: PyTorch's default
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


def composite_add_rms_norm(x, residual, normalized_shape, weight=None, eps=None, offset=0.0,
                           casting="llama"):
    s = x + residual
    return composite_rms_norm(s, normalized_shape, weight, eps, offset, casting), s


def _cast(t, dtype):
    return t if t.dtype == dtype else t.astype(dtype)


def _offset(weight, offset):
    return weight + offset if offset else weight


# ----- fused: one node, closed-form backward ----------------------------------------------
class RMSNorm(FusedFunction):
    saved_names = ("x", "weight", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, weight, normalized_shape, eps, offset=0.0, casting="llama"):
        ctx.normalized_shape, ctx.offset, ctx.casting = normalized_shape, offset, casting
        ctx.kernels = for_array(x)
        y, rstd = ctx.kernels.rms_norm_forward(rows(x, normalized_shape), flat(weight), eps,
                                               offset=offset, casting=casting)
        # Saved: x, weight and rstd (1 number per row); x̂ = x·rstd is recomputed.
        ctx.save_for_backward(x, weight, rstd)
        return unrows(y, x.shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved
        x2 = rows(x, ctx.normalized_shape)                                  # (M, D)
        dx, dweight = ctx.kernels.rms_norm_backward(
            dy.reshape(x2.shape), x2, flat(weight), rstd, offset=ctx.offset, casting=ctx.casting)
        return dx.reshape(x.shape), shaped(dweight, weight)

    @staticmethod
    def recompute(ctx, x, weight):               # the twin, for double backward
        saved_x, _, rstd = ctx.saved
        eps = _row_eps(saved_x, rstd, ctx.normalized_shape, ctx.casting)
        return composite_rms_norm(x, ctx.normalized_shape, weight, eps, ctx.offset,
                                  ctx.casting)


class AddRMSNorm(FusedFunction):
    """(x, residual) -> (RMSNorm(x + residual), x + residual) in one node."""

    saved_names = ("x + residual", "weight", "rstd")    # what forward saves, in order

    @staticmethod
    def forward(ctx, x, residual, weight, normalized_shape, eps, offset=0.0, casting="llama"):
        ctx.normalized_shape, ctx.offset, ctx.casting = normalized_shape, offset, casting
        ctx.kernels = for_array(x)
        y, s, rstd = ctx.kernels.add_rms_norm_forward(
            rows(x, normalized_shape), rows(residual, normalized_shape), flat(weight), eps,
            offset=offset, casting=casting)
        s = unrows(s, x.shape)
        # Saved: the sum s (this node's own output), weight, rstd per row.
        ctx.save_for_backward(s, weight, rstd)
        return unrows(y, x.shape), s

    @staticmethod
    def backward(ctx, dy, ds):
        s, weight, rstd = ctx.saved
        s2 = rows(s, ctx.normalized_shape)                                  # (M, D)
        dsum, dweight = ctx.kernels.add_rms_norm_backward(
            dy.reshape(s2.shape), ds.reshape(s2.shape), s2, flat(weight), rstd,
            offset=ctx.offset, casting=ctx.casting)
        dsum = dsum.reshape(s.shape)
        return dsum, dsum, shaped(dweight, weight)

    @staticmethod
    def recompute(ctx, x, residual, weight):     # the twin, for double backward
        s, _, rstd = ctx.saved
        eps = _row_eps(s, rstd, ctx.normalized_shape, ctx.casting)
        return composite_add_rms_norm(x, residual, ctx.normalized_shape, weight, eps,
                                      ctx.offset, ctx.casting)


def _row_eps(x, rstd, normalized_shape, casting):
    # the eps forward added, one per row beside the composite's mean square (*, 1, ..., 1),
    # in the dtype the composite takes it in
    stats = x.dtype if casting == "none" else accumulation_dtype(x.dtype)
    h = rows(x, normalized_shape).astype(stats, copy=False)                    # (M, D)
    kept = x.shape[:x.ndim - len(normalized_shape)] + (1,) * len(normalized_shape)
    return eps_beside((h * h).mean(axis=1), rstd, kept, stats)


# ----- the public entries -----------------------------------------------------------------
def rms_norm(input, normalized_shape, weight=None, eps=None, impl=None, offset=0.0,
             casting="llama"):
    r"""RMS normalization over the trailing ``normalized_shape`` dims of x.

    .. math::
        y = \frac{x}{\sqrt{\mathrm{E}[x^2] + \epsilon}} \cdot (\text{offset} + \gamma)

    Args:
        input: x, a floating-point Tensor (torch's name: ``input=`` as keyword).
        normalized_shape: int or tuple of ints, the trailing dims to normalize over.
        weight: γ of shape ``normalized_shape``, or None; float32 beside float16/bfloat16
            x in the "llama" and "gemma" modes.
        eps: added to the mean square inside the square root; None (PyTorch's default):
            float32's machine epsilon for float16 and bfloat16 x in every casting mode
            (``"none"`` included, which computes in x's dtype: torch's for half x), else
            x's own (``norms.arguments.machine_eps``). LLaMA's is 1e-6.
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
    x = input                                 # torch's keyword; x, as the formula says
    impl = arguments.resolve_impl("rms_norm", impl)
    try:
        normalized_shape, eps = _check("rms_norm", x, None, normalized_shape, weight, eps,
                                       impl, offset, casting)
    except arguments.MixedDtypeError as error:      # the failure path only
        return _mixed_rms_norm(error, x, normalized_shape, weight, eps, impl, offset, casting)
    if x._array.size == 0:
        return RMS_NORM.empty_output(x, weight=weight)
    if impl == "composite":
        with op_group("rms_norm"):
            return composite_rms_norm(x, normalized_shape, weight, eps, offset, casting)
    return RMSNorm.apply(x, weight, normalized_shape=normalized_shape, eps=eps, offset=offset,
                         casting=casting)


def _mixed_rms_norm(error, x, normalized_shape, weight, eps, impl, offset, casting):
    """torch's ``rms_norm`` of a floating x beside a floating weight of another dtype (float64
    x in a float32 model, or the reverse), which its fused kernel does not take: its
    composite, with a UserWarning: x normalized in its dtype (half precision's in float32),
    times γ in the promoted dtype, the product cast back to x's dtype once. Anything else
    (an offset, a casting mode other than the default) re-raises ``error``."""
    if offset or casting != "llama" or not (isinstance(x, Tensor) and isinstance(
            weight, Tensor) and x.dtype in arguments.COMMON_FLOATS
            and weight.dtype in arguments.COMMON_FLOATS):
        raise error                 # (an offset, a casting mode: this package's, not torch's)
    warnings.warn(f"rms_norm: input dtype {x.dtype} and weight dtype {weight.dtype} differ: "
                  "computed as torch's composite (the input normalized in its dtype, times "
                  "the weight, cast back to the input's dtype), not the fused node",
                  UserWarning, stacklevel=3)
    wide = x.float() if is_half(x.dtype) else x         # half: the unit kept in float32
    unit = rms_norm(wide, normalized_shape, None, eps, impl, 0.0, casting)
    return (unit * weight).to(x.dtype)


def add_rms_norm(x, residual, normalized_shape, weight=None, eps=None, impl=None,
                 offset=0.0, casting="llama"):
    """Residual add fused with RMSNorm: returns ``(rms_norm(x + residual), x + residual)``;
    arguments as in ``add_layer_norm`` (no bias) and ``rms_norm``."""
    impl = arguments.resolve_impl("add_rms_norm", impl)
    normalized_shape, eps = _check("add_rms_norm", x, residual, normalized_shape, weight, eps,
                                   impl, offset, casting)
    if x._array.size == 0:
        s = x + residual
        return ADD_RMS_NORM.empty_output(s, weight=weight), s
    if impl == "composite":
        with op_group("add_rms_norm"):
            return composite_add_rms_norm(x, residual, normalized_shape, weight, eps, offset,
                                          casting)
    return AddRMSNorm.apply(x, residual, weight, normalized_shape=normalized_shape, eps=eps,
                            offset=offset, casting=casting)


def _check(fn, x, residual, normalized_shape, weight, eps, impl, offset, casting):
    """Every check of the two entries; returns (normalized_shape, eps), eps None resolved
    to PyTorch's default (``arguments.resolve_eps``)."""
    if eps is None:     # resolve_eps's table read here, not called: leaving eps out costs the
        try:            # host no more than giving it (docs/gpu.md, "Host cost")
            eps = arguments.MACHINE_EPS[x._array.dtype]
        except (AttributeError, KeyError, TypeError):
            eps = arguments.resolve_eps(x, None)
    else:                                     # a bool, NumPy scalar or 0-d tensor: its value
        eps = float_of(eps, fn, "eps")
    return arguments.check_row_norm(
        fn, x, normalized_shape, eps, impl, residual=residual, weight=weight,
        weight_dtype=rms_weight_dtype(fn, x, weight, offset, casting)), eps


# ----- the checks of RMSNorm's own options ------------------------------------------------
def check_rms_options(fn, offset, casting, has_weight):
    """RMSNorm's Gemma offset (finite, needs a weight) and casting mode."""
    if casting not in CASTINGS:
        raise ValueError(f"{fn}: casting must be one of {CASTINGS}, got {casting!r}")
    check_number(fn, "offset", offset)
    if not np.isfinite(offset):
        raise ValueError(f"{fn}: offset must be a finite number, got {offset!r}")
    if offset and not has_weight:
        raise ValueError(f"{fn}: offset {offset} needs a weight, y = x̂ · (offset + weight) "
                         "(a module needs elementwise_affine=True)")


def rms_weight_dtype(fn, x, weight, offset, casting):
    """``check_rms_options``, then the dtype RMSNorm's weight may have: x's (None), or
    float32 for float16/bfloat16 x in the "llama" and "gemma" modes (Hugging Face's mixed
    precision). One call for both: it is on every call's path."""
    # the usual call passes without a call (x - x == 0: finite); anything else is checked
    if type(offset) is not float or offset - offset != 0 or casting not in CASTINGS or (
            offset and weight is None):
        check_rms_options(fn, offset, casting, weight is not None)
    if (weight is None or type(weight) is not Tensor and not isinstance(weight, Tensor)
            or weight._array.dtype != np.float32
            or type(x) is not Tensor and not isinstance(x, Tensor)
            or x._array.dtype.itemsize > 2 or not is_half(x.dtype)):
        return None
    if casting == "none":
        raise TypeError(f"{fn}: a float32 weight with {x.dtype} x needs casting 'llama' or "
                        f"'gemma' (casting 'none' computes in x's dtype)")
    return weight.dtype


# ----- the specs --------------------------------------------------------------------------
def _kernel_calls(k, a, eps, offset, casting):
    eps = arguments.resolve_eps(a["x"], eps)
    _, rstd = k.rms_norm_forward(a["x"], a["weight"], eps, offset, casting)
    return (lambda: k.rms_norm_forward(a["x"], a["weight"], eps, offset, casting),
            lambda: k.rms_norm_backward(a["dy"], a["x"], a["weight"], rstd, offset, casting))


# eps None: PyTorch's default, the machine epsilon of x's statistics (machine_eps)
_OPTIONS = (Option("eps", None), Option("offset", 0.0, torch=False),
            Option("casting", "llama", variants=CASTINGS, torch=False))
_WEIGHT = Input("weight", "per-feature", optional=True, init=1.0)
RMS_NORM = Norm(
    name="rms_norm", title="RMSNorm", aliases=("rmsnorm",), function=rms_norm,
    composite=composite_rms_norm, fused=RMSNorm,
    inputs=(Input("x", "x"), Input("weight", "per-feature", optional=True, init=1.0,
                                   other_float=True)),
    options=_OPTIONS, call=row_norm_call, torch=row_norm_torch("rms_norm"),
    places=("row", "mlp"), centres=False, kernels=("rms_norm_forward", "rms_norm_backward"),
    kernel_calls=_kernel_calls, kernel_outputs=("y", "rstd", "dx", "dweight"))
ADD_RMS_NORM = Norm(
    name="add_rms_norm", title="Add + RMSNorm", function=add_rms_norm,
    composite=composite_add_rms_norm, fused=AddRMSNorm,
    inputs=(Input("x", "x"), Input("residual", "like-x"), _WEIGHT), options=_OPTIONS,
    outputs=("output", "sum x + residual"), call=row_norm_call,
    torch=row_norm_torch("rms_norm"), centres=False,
    kernels=("add_rms_norm_forward", "add_rms_norm_backward"))
