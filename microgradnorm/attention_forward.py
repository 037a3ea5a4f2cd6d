"""``F.multi_head_attention_forward``: torch's functional multi-head attention, with its
arguments (packed or separate projection weights, ``bias_k``/``bias_v``, a zero position,
``static_k``/``static_v``, masks, dropout, head-averaged weights); ``nn.MultiheadAttention``
calls it with its parameters, and the Transformer layers read its masks through
``canonical_mask``.

It is composed of ops that have their own nodes: three ``F.linear`` projections, the
scores and softmax (or ``F.scaled_dot_product_attention`` when no weights are asked for),
``F.dropout`` of the weights and the output projection; so the gradients are those ops'.
"""

import math
import warnings

import numpy as np

from . import ops
from .dtypes import is_floating
from .fused import scaled_dot_product_attention
from .ops.base import constant
from .tensor import Tensor
from .padding import pad

__all__ = ["multi_head_attention_forward"]

FN = "multi_head_attention_forward"


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    r"""``(output, weights)``: each head h attends with
    :math:`\mathrm{softmax}(Q_h K_h^T / \sqrt{d} + M)\,V_h`, :math:`Q = qW_q^T + b_q` (K, V
    likewise), d = E / num_heads, and the heads, concatenated, go through the output
    projection (``torch.nn.functional.multi_head_attention_forward``).

    Args:
        query, key, value: (L, N, E), (S, N, kdim), (S, N, vdim), or unbatched (L, E), ...
        embed_dim_to_check: E, which query's features must equal. num_heads: divides E.
        in_proj_weight, in_proj_bias: the packed projections (3E, E) and (3E,) (the bias
            may be None); ``use_separate_proj_weight`` takes ``q_proj_weight`` (E, E),
            ``k_proj_weight`` (E, kdim), ``v_proj_weight`` (E, vdim) instead.
        bias_k, bias_v: E values appended to key and value as one more source position
            (None for none). add_zero_attn: append a zero position to each head's key and
            value.
        dropout_p: the weights' dropout probability, applied when ``training``.
        out_proj_weight, out_proj_bias: the output projection (E, E) and (E,) (or None).
        key_padding_mask: (N, S) or (S,): bool (True: ignore that key) or float (added).
        need_weights: return the weights (softmax(q·kᵀ + mask), NaN for a row that may
            attend nothing); False runs ``F.scaled_dot_product_attention``.
        attn_mask: (L, S) or (N·num_heads, L, S): bool (True: may not attend) or float.
        static_k, static_v: (N·num_heads, S', d) keys and values used in place of the
            projected ones (not with ``bias_k``/``bias_v``; before the zero position).
        average_attn_weights: average the weights over the heads.
        is_causal: a hint that ``attn_mask`` is the causal mask (it must be given).

    Shape: output as query; weights (N, L, S) ((N, num_heads, L, S) without averaging),
    without N for an unbatched query; None unless ``need_weights``.
    """
    from .functional import dropout, linear         # functional imports this module
    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:                                   # one sequence: a batch of one
        query, key, value = (t.reshape((t.shape[0], 1, t.shape[1]))
                             for t in (query, key, value))
    embed_dim = query.shape[-1]
    target, batch, source = query.shape[0], query.shape[1], key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"{FN}: was expecting embedding dimension of "
                             f"{embed_dim_to_check}, but got {embed_dim}")
    if embed_dim % num_heads:
        raise AssertionError(f"{FN}: embed_dim {embed_dim} not divisible by num_heads "
                             f"{num_heads}")
    if not use_separate_proj_weight and key.shape != value.shape:   # torch asserts this
        raise AssertionError(f"{FN}: key shape {key.shape} does not match value shape "
                             f"{value.shape} (the packed in_proj_weight projects both)")
    weights = _projection_weights(embed_dim, in_proj_weight, use_separate_proj_weight,
                                  q_proj_weight, k_proj_weight, v_proj_weight)
    _check_features(weights, query, key, value)
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dtype != weights[0].dtype:
            raise RuntimeError(f"{FN}: {name} is {t.dtype} but the projection weights are "
                               f"{weights[0].dtype}")
    query, key, value = (t.transpose(0, 1) for t in (query, key, value))    # (N, ·, E)
    padding = canonical_mask("key_padding_mask", key_padding_mask, query, attn_mask,
                             "attn_mask")
    if padding is not None and not batched:
        padding = padding.reshape(1, -1)                                     # (1, S)
    if is_causal and attn_mask is None:
        raise RuntimeError(f"{FN}: is_causal is a hint that attn_mask is the causal mask; "
                           "pass that attn_mask too")
    causal = is_causal and padding is None and not need_weights
    mask = None if causal else canonical_mask("attn_mask", attn_mask, query)
    mask = _shaped_attn_mask(mask, batch, num_heads, target, source)
    biases = [None] * 3 if in_proj_bias is None else \
        [in_proj_bias[i * embed_dim:(i + 1) * embed_dim] for i in range(3)]
    q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))
    if bias_k is not None and static_k is not None or bias_v is not None and static_v is not None:
        raise AssertionError(f"{FN}: bias cannot be added to static key or value (bias_k, "
                             "bias_v with static_k, static_v)")     # torch's assertion
    if bias_k is not None and bias_v is not None:       # one more source position
        k, v = (ops.cat([t, b.reshape(1, 1, embed_dim).expand(batch, 1, embed_dim)], dim=1)
                for t, b in ((k, bias_k), (v, bias_v)))
        mask, padding = _pad_source(mask), _pad_source(padding)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError(f"{FN}: bias_k and bias_v must be given together")
    heads = _Heads(batch, num_heads, embed_dim // num_heads)
    q, k, v = heads.split(q), heads.static("static_k", static_k, k), \
        heads.static("static_v", static_v, v)                               # (N, H, ·, d)
    if add_zero_attn:
        zeros = constant(k.xp.zeros(k.shape[:2] + (1, k.shape[3]), k.dtype))
        k, v = ops.cat([k, zeros], dim=2), ops.cat([v, zeros], dim=2)
        mask, padding = _pad_source(mask), _pad_source(padding)
    mask = _merged(mask, padding, batch, k.shape[2])                        # (N|1, H|1, L, S)
    dropout_p = dropout_p if training else 0.0
    if need_weights:
        scores = (q * math.sqrt(1.0 / heads.dim)) @ k.mT                    # (N, H, L, S)
        attention = (scores if mask is None else scores + mask).softmax(-1)
        if dropout_p:                         # the weights returned are the dropped ones
            attention = dropout(attention, dropout_p)
        out = attention @ v
    else:
        out = scaled_dot_product_attention(q, k, v, mask, dropout_p, causal)
        attention = None
    # torch's memory order, (L, N, E) with each row the heads side by side (a dropout after
    # it draws torch's mask only over torch's layout)
    out = out.permute(2, 0, 1, 3).reshape(target, batch, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)                      # (L, N, E)
    if attention is not None and average_attn_weights:
        attention = attention.mean(dim=1)                                  # (N, L, S)
    if not batched:
        out = out.reshape(target, embed_dim)
        attention = None if attention is None else attention.reshape(attention.shape[1:])
    return out, attention


class _Heads:
    """(N, T, E) <-> (N, H, T, d), and ``static_k``/``static_v`` (N·H, S, d) read as heads."""

    def __init__(self, batch, count, dim):
        self.batch, self.count, self.dim = batch, count, dim

    def split(self, x):
        return x.reshape(self.batch, x.shape[1], self.count, self.dim).permute(0, 2, 1, 3)

    def static(self, name, given, projected):
        if given is None:
            return self.split(projected)
        if given.ndim != 3 or given.shape[0] != self.batch * self.count or \
                given.shape[2] != self.dim:
            raise AssertionError(f"{FN}: {name} must have shape (N·num_heads, S, head_dim) = "
                                 f"({self.batch * self.count}, S, {self.dim}), got "
                                 f"{given.shape}")
        return given.reshape(self.batch, self.count, given.shape[1], self.dim)


def _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
    # torch's _mha_shape_check (torch asserts, so AssertionError); True for batched input
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{FN}: {name} must be a Tensor, got {type(t).__name__}")
    dims = query.ndim
    if dims not in (2, 3):
        raise AssertionError(f"{FN}: query must be 2-D (unbatched) or 3-D (batched), got "
                             f"shape {query.shape}")
    if key.ndim != dims or value.ndim != dims:
        raise AssertionError(f"{FN}: for a {dims}-D query, key and value must be {dims}-D, "
                             f"got {key.shape} and {value.shape}")
    if key_padding_mask is not None and _ndim(key_padding_mask) != dims - 1:
        raise AssertionError(f"{FN}: for a {dims}-D query, key_padding_mask must be "
                             f"{dims - 1}-D, got shape {_shape(key_padding_mask)}")
    if attn_mask is not None and _ndim(attn_mask) not in (2, 3):
        raise AssertionError(f"{FN}: attn_mask must be 2-D or 3-D, got shape "
                             f"{_shape(attn_mask)}")
    heads_mask = (num_heads, query.shape[0], key.shape[0])
    if dims == 2 and attn_mask is not None and _ndim(attn_mask) == 3 and \
            tuple(_shape(attn_mask)) != heads_mask:
        raise AssertionError(f"{FN}: for a 2-D query, a 3-D attn_mask must have shape "
                             f"{heads_mask}, got {_shape(attn_mask)}")
    if key.shape[:-1] != value.shape[:-1] or (dims == 3 and query.shape[1] != key.shape[1]):
        raise AssertionError(f"{FN}: query {query.shape}, key {key.shape} and value "
                             f"{value.shape} must share the batch size, key and value the "
                             "source length")
    return dims == 3


def _projection_weights(embed_dim, packed, separate, q_weight, k_weight, v_weight):
    # [W_q, W_k, W_v]: the packed weight's thirds, or the three; the features checked
    if separate:
        weights = [q_weight, k_weight, v_weight]
        if any(w is None for w in weights):
            raise AssertionError(f"{FN}: use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")
    else:
        if packed is None:
            raise AssertionError(f"{FN}: use_separate_proj_weight is False but "
                                 "in_proj_weight is None")
        weights = [packed[i * embed_dim:(i + 1) * embed_dim] for i in range(3)]
    return weights


def _check_features(weights, query, key, value):
    # each input's features are its projection's in_features: torch's linear fails otherwise
    for name, t, w in zip(("query", "key", "value"), (query, key, value), weights):
        if t.shape[-1] != w.shape[-1]:
            raise RuntimeError(f"{FN}: {name} must have {w.shape[-1]} features (its "
                               f"projection's in_features), got shape {t.shape}")


def _shaped_attn_mask(mask, batch, num_heads, target, source):
    # (L, S) -> (1, 1, L, S); (N·H, L, S) -> (N, H, L, S): broadcasts over the scores
    if mask is None:
        return None
    if mask.ndim == 2 and mask.shape != (target, source):
        raise RuntimeError(f"{FN}: the 2-D attn_mask must have shape {(target, source)}, got "
                           f"{mask.shape}")
    if mask.ndim == 3 and mask.shape != (batch * num_heads, target, source):
        raise RuntimeError(f"{FN}: the 3-D attn_mask must have shape "
                           f"{(batch * num_heads, target, source)}, got {mask.shape}")
    if mask.ndim == 2:
        return mask.reshape(1, 1, target, source)
    return mask.reshape(batch, num_heads, target, source)


def as_mask(mask, like):
    """A mask as a Tensor: a Tensor as given; an array or nested lists copied into ``like``'s
    array module (a node may keep it for backward: writing to the caller's array later must
    not change a gradient), a floating one in ``like``'s dtype (torch takes tensors only)."""
    if isinstance(mask, Tensor):
        return mask
    array = like.xp.array(mask)                                  # a copy
    return constant(array.astype(like.dtype, copy=False) if is_floating(array.dtype) else array)


def canonical_mask(name, mask, like, other=None, other_name=""):
    """torch's F._canonical_mask: a bool mask as 0 / -inf in ``like``'s dtype (True: masked),
    a floating one in ``like``'s dtype, None as None; any other dtype an AssertionError, and
    torch's warning when ``other``, the call's other mask, has another dtype. A floating
    Tensor mask may be float32 or ``like``'s dtype, as torch's attention takes (a float32 one
    is cast, its gradient flowing back); another floating dtype is torch's RuntimeError."""
    if mask is None:
        return None
    mask = as_mask(mask, like)
    if mask.dtype != np.bool_ and not is_floating(mask.dtype):      # bfloat16 too
        raise AssertionError(f"only bool and floating types of {name} are supported, got "
                             f"{mask.dtype}")
    if other is not None and as_mask(other, like).dtype != mask.dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=2)
    if mask.dtype == np.bool_:
        return constant(like.xp.where(mask._array, -np.inf, 0.0).astype(like.dtype))
    if mask.dtype != like.dtype and mask.dtype != np.float32:
        raise RuntimeError(f"{name} must be bool, float32 or the input's dtype {like.dtype}, "
                           f"got {mask.dtype}")
    return mask.to(like.dtype)


def _merged(mask, padding, batch, source):
    """The attention mask plus the key padding mask (N, S) as (N, 1, 1, S), torch's check of
    the padding mask's shape first."""
    if padding is None:
        return mask
    if padding.shape != (batch, source):
        raise AssertionError(f"{FN}: key_padding_mask must have shape ({batch}, {source}), "
                             f"got {padding.shape}")
    padding = padding.reshape(batch, 1, 1, source)
    return padding if mask is None else mask + padding


def _pad_source(mask):
    # one more source position (a zero: attended) at the end of a mask's last dim
    return None if mask is None else pad(mask, (0, 1))


def _shape(mask):
    # a mask's shape, whether a Tensor, an array or nested lists
    return mask.shape if isinstance(mask, Tensor) else np.shape(mask)


def _ndim(mask):
    return len(_shape(mask))
