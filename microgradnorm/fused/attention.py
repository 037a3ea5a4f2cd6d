"""Scaled dot-product attention, softmax normalization of the scores q·kᵀ, twice: the
textbook graph, which keeps the L×S probabilities for backward, and one fused node that
keeps q, k, v, the output and a log-sum-exp per row and recomputes the probabilities in
backward, as FlashAttention does. docs/derivations.md derives the backward."""

import math

import numpy as np

from .. import backend, kernels, ops
from ..autograd import op_group
from ..generator import default_generator
from ..dtypes import check_number
from ..kernels.reference import attention_dropout_kept
from ..ops.base import OutOfRangeError, constant, unbroadcast
from ..tensor import Tensor
from . import arguments
from .twin import FusedFunction, Input, Option, Twin

__all__ = ["ATTENTION", "check_attention", "scaled_dot_product_attention"]


# ----- fused: one node, closed-form backward ----------------------------------------------
class ScaledDotProductAttention(FusedFunction):
    """The kernels' ``attention_forward`` and ``attention_backward`` (numba's blocked
    online softmax by default where numba imports, ``kernels.reference`` the oracle)."""
    saved_names = ("query", "key", "value", "output", "logsumexp", "attn_mask")

    @staticmethod
    def forward(ctx, q, k, v, mask, dropout_p, is_causal, scale, stream):
        ctx.kernels = kernels.for_array(q)
        out, lse = ctx.kernels.attention_forward(q, k, v, mask, is_causal, scale, dropout_p,
                                                 _drawn_from(stream))     # (..., L, Ev)
        # Saved: the inputs (alive anyway), the output and one log-sum-exp per row; the
        # L×S probabilities and the dropout mask are recomputed in backward (the mask from
        # the generator state it was drawn from), never kept.
        ctx.save_for_backward(q, k, v, out, lse, mask)
        ctx.dropout_p, ctx.is_causal, ctx.scale = dropout_p, is_causal, scale
        ctx.stream = stream
        return out

    @staticmethod
    def backward(ctx, dout):
        saved = ctx.saved                          # as given: their dtypes are the grads'
        q, k, v, out, lse, mask = saved
        dq, dk, dv, dmask = ctx.kernels.attention_backward(
            dout, q, k, v, out, lse, mask, ctx.is_causal, ctx.scale, ctx.dropout_p, ctx.stream,
            need_mask_grad=ctx.needs_input_grad[3])
        if dmask is not None:
            dmask = unbroadcast(dmask, mask.shape).astype(mask.dtype, copy=False)
        return tuple(unbroadcast(g, t.shape).astype(t.dtype, copy=False)
                     for g, t in zip((dq, dk, dv), saved[:3])) + (dmask,)

    @staticmethod
    def recompute(ctx, q, k, v, mask):
        # the twin, for double backward: with dropout, the same mask drawn again
        return composite_attention(q, k, v, mask, ctx.dropout_p, ctx.is_causal, ctx.scale,
                                   ctx.stream)


# ----- composite: the textbook graph ------------------------------------------------------
def composite_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                        stream=None):
    """softmax(q·kᵀ·scale + mask), dropped out (the mask drawn from the generator state
    ``stream``), times v; each step a node."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.mT) * scale                                            # (..., L, S)
    if is_causal:
        attn_mask = q.xp.tril(q.xp.ones(scores.shape[-2:], dtype=bool))
    if attn_mask is not None and attn_mask.dtype == bool:
        keep = attn_mask._array if isinstance(attn_mask, Tensor) else attn_mask
        scores = scores.masked_fill(~keep, -np.inf)
    elif attn_mask is not None:
        scores = scores + attn_mask
    dead = q.xp.isneginf(scores._array).all(axis=-1, keepdims=True)        # nothing to attend
    if dead.any():             # softmax of 0s there (finite, also backward), then zeroed
        scores = scores.masked_fill(dead, 0.0)
    probs = ops.softmax(scores, -1)              # the primitives' graph (x.softmax: fused)
    if dead.any():
        probs = probs.masked_fill(dead, 0.0)
    if dropout_p:
        probs = probs * attention_dropout_kept(stream, probs.shape, dropout_p, q.xp,
                                               probs.dtype)
    return probs @ v


# ----- the checks -------------------------------------------------------------------------
def check_attention(fn, q, k, v, mask, dropout_p, is_causal, scale, enable_gqa, impl):
    """scaled_dot_product_attention's arguments; returns the mask as a Tensor (or None) and
    the scale as a float (1/√E by default)."""
    for name, t in (("query", q), ("key", k), ("value", v)):
        arguments.check_tensor(fn, name, t)
        if t.ndim < 2:
            raise ValueError(f"{fn}: {name} must have at least 2 dims (..., length, "
                             f"features), got shape {t.shape}")
        if t.dtype != q.dtype or t.device != q.device:
            raise TypeError(f"{fn}: {name} must have query's dtype {q.dtype} and device "
                            f"{q.device!r}, got {t.dtype} on {t.device!r}")
    if k.shape[-1] != q.shape[-1] or v.shape[-2] != k.shape[-2]:
        raise ValueError(f"{fn}: key must be (..., S, E) for query (..., L, E) and value "
                         f"(..., S, Ev), got query {q.shape}, key {k.shape}, value {v.shape}")
    if enable_gqa and min(q.ndim, k.ndim, v.ndim) < 3:     # torch reads each one's dim -3
        raise OutOfRangeError(f"{fn}: enable_gqa needs a heads dim (-3) in query, key and "
                              f"value, got shapes {q.shape}, {k.shape}, {v.shape}")
    heads = q.shape[-3] if q.ndim >= 3 else 1
    batch = [q.shape[:-2]]
    for name, t in (("key", k), ("value", v)):      # each may have its own head count
        own = t.shape[-3] if t.ndim >= 3 else 1
        if enable_gqa and (own == 0 or heads % own):
            raise ValueError(f"{fn}: with enable_gqa, {name}'s heads (dim -3) must divide "
                             f"query's {heads}, got {own}")
        groups = heads // own if enable_gqa else 1
        batch.append(t.shape[:-3] + (own * groups,) if enable_gqa and t.ndim >= 3
                     else t.shape[:-2])
    try:
        scores_shape = np.broadcast_shapes(*batch) + (q.shape[-2], k.shape[-2])
    except ValueError:
        raise ValueError(f"{fn}: the batch dims of query {q.shape}, key {k.shape} and value "
                         f"{v.shape} do not broadcast") from None
    check_number(fn, "dropout_p", dropout_p)
    if not 0 <= dropout_p <= 1:                       # 1: zeros, as torch's (and F.dropout)
        raise ValueError(f"{fn}: dropout_p must be a number in [0, 1], got {dropout_p!r}")
    if scale is not None:
        check_number(fn, "scale", scale)
    if not isinstance(is_causal, bool) or not isinstance(enable_gqa, bool):
        raise TypeError(f"{fn}: is_causal and enable_gqa must be True or False, got "
                        f"{is_causal!r}, {enable_gqa!r}")
    arguments.check_impl(fn, impl)
    if mask is not None:
        mask = _check_mask(fn, mask, q, scores_shape, is_causal)
    if q.shape[-1] == 0:        # no features: every score is 0 whatever the scale (torch
        return mask, 1.0        # scales q and k before the product), not 0 · 1/√0
    return mask, 1 / math.sqrt(q.shape[-1]) if scale is None else float(scale)


def _check_mask(fn, mask, q, scores_shape, is_causal):
    if is_causal:
        raise ValueError(f"{fn}: pass attn_mask or is_causal=True, not both")
    if not isinstance(mask, Tensor):
        mask = constant(backend.to_device(q.xp.asarray(mask), q.device))
    if mask.dtype != bool and mask.dtype != q.dtype:
        raise TypeError(f"{fn}: attn_mask must be bool or query's dtype {q.dtype}, got "
                        f"{mask.dtype}")
    try:
        fits = np.broadcast_shapes(mask.shape, scores_shape) == scores_shape
    except ValueError:
        fits = False
    if not fits:                        # (as torch: a mask never adds dims to the output)
        raise ValueError(f"{fn}: attn_mask of shape {mask.shape} does not broadcast to "
                         f"the scores' shape {scores_shape}")
    return mask


# ----- the public entry -------------------------------------------------------------------
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False, impl=None):
    r"""Attention :math:`\mathrm{softmax}(QK^T \cdot \mathrm{scale} + M)\,V`, PyTorch's
    signature; ``impl="fused"`` (one node) or ``"composite"`` (the textbook graph), None
    following ``mg.norm_impl`` (fused by default).

    Args:
        attn_mask: bool (True: takes part) or floating (added to the scores), broadcast to
            (..., L, S); not together with ``is_causal`` (the top-left lower triangle).
        scale: default 1/√E. dropout_p: probabilities zeroed, the rest scaled by 1/(1 - p).
        enable_gqa: key and value may have fewer heads (dim -3) that divide query's.

    Shape:
        query (..., L, E), key (..., S, E), value (..., S, Ev); output (..., L, Ev).

    Example:
        >>> y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    """
    fn = "scaled_dot_product_attention"
    attn_mask, scale = check_attention(fn, query, key, value, attn_mask, dropout_p,
                                                 is_causal, scale, enable_gqa, impl)
    impl = arguments.resolve_impl(fn, impl)
    if enable_gqa and query.ndim >= 3:               # key and value each to query's heads
        key, value = (_repeat_heads(t, query.shape[-3]) if t.ndim >= 3 and
                      t.shape[-3] != query.shape[-3] else t for t in (key, value))
    # torch's CPU attention drops its probabilities out as F.dropout does: one Bernoulli
    # draw from the default generator per probability, (..., L, S) in C order, moving it
    # past them; p = 0 and p = 1 draw nothing. The forward draws from the default generator
    # itself; the generator's state before the draws (5056 bytes) is kept in place of the
    # L×S mask, which backward draws again from a copy.
    stream = default_generator.state_array() if 0 < dropout_p < 1 else None
    if impl == "composite":
        with op_group(fn):
            return composite_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                       scale, _drawn_from(stream))
    return ScaledDotProductAttention.apply(query, key, value, attn_mask, dropout_p=dropout_p,
                                           is_causal=is_causal, scale=scale, stream=stream)


def _drawn_from(stream):
    # the first draw of a mask is from the default generator (which moves on); ``stream``,
    # its state before, is what backward draws the same mask from again
    return None if stream is None else default_generator


def _repeat_heads(t, heads):
    # (..., Hkv, S, E) -> (..., heads, S, E), each head repeated in place (repeat_interleave)
    *batch, kv_heads, length, dim = t.shape
    wide = t.reshape(*batch, kv_heads, 1, length, dim)
    return wide.expand(*batch, kv_heads, heads // kv_heads, length, dim).reshape(
        *batch, heads, length, dim)


# ----- the spec ---------------------------------------------------------------------------
ATTENTION = Twin(
    name="scaled_dot_product_attention", title="Attention",
    function=scaled_dot_product_attention, composite=composite_attention,
    fused=ScaledDotProductAttention, aliases=("attention", "sdpa"),
    inputs=(Input("query", "x"), Input("key", "x"), Input("value", "x")),
    options=(Option("is_causal", True),),
    torch=lambda tF, given, **options: tF.scaled_dot_product_attention(**given, **options),
    ndim=(2, None), shape_text="(..., L, E)")
