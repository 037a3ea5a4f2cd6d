"""MultiheadAttention with torch's parameters (names, shapes, initialisation: a torch state
dict loads) and torch's forward (``F.multi_head_attention_forward``): masks, padding,
batch_first, unbatched input, head-averaged weights."""

import math
import warnings

import numpy as np

from .. import functional as F
from .. import ops
from ..dtypes import check_number, is_floating
from ..ops.base import constant
from ..tensor import Tensor
from . import init
from .linear import NonDynamicallyQuantizableLinear
from .module import Module, Parameter, _check_positive, _dtype


class MultiheadAttention(Module):
    r"""Multi-head attention (``torch.nn.MultiheadAttention``): each head h attends with
    :math:`\mathrm{softmax}(Q_h K_h^T / \sqrt{d} + M)\,V_h`, :math:`Q = xW_q^T + b_q` (K, V
    likewise), d = embed_dim / num_heads, and the heads, concatenated, go through
    ``out_proj``.

    Args:
        embed_dim: E, the query's features and the output's. num_heads: divides E.
        dropout: the attention weights' dropout probability in training.
        bias: biases in the input and output projections.
        add_bias_kv: learn ``bias_k``, ``bias_v`` (1, 1, E), appended to key and value as one
            more source position.
        add_zero_attn: append a zero position to each head's key and value.
        kdim, vdim: the key's and value's features (default E); when either differs, the
            projections are ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` instead
            of the packed ``in_proj_weight`` (3E, E).
        batch_first: inputs and output are (N, L, E) instead of (L, N, E).

    Parameters (torch's names and draws, so the same seed gives torch's values):
    ``in_proj_weight`` xavier-uniform, ``in_proj_bias`` (3E,) zeros, ``out_proj`` a Linear
    (E, E) whose bias is zeroed, ``bias_k``/``bias_v`` xavier-normal.

    Example:
        >>> attn = nn.MultiheadAttention(16, 4, batch_first=True)
        >>> out, weights = attn(x, x, x)          # x (2, 5, 16): out (2, 5, 16), weights (2, 5, 5)
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device="cpu",
                 dtype=None):
        super().__init__()
        for name, value in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            check_number("MultiheadAttention", name, value, integer=True)
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be greater "
                             f"than 0, got embed_dim={embed_dim} and num_heads={num_heads}")
        if embed_dim % num_heads:           # torch asserts this: the same class here
            raise AssertionError(f"MultiheadAttention: embed_dim must be divisible by "
                                 f"num_heads, got embed_dim={embed_dim}, num_heads={num_heads}")
        check_number("MultiheadAttention", "dropout", dropout)
        if not 0 <= dropout <= 1:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1], got {dropout!r}")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        _check_positive("MultiheadAttention", kdim=self.kdim, vdim=self.vdim)
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first, self.add_zero_attn = dropout, batch_first, add_zero_attn
        dtype = _dtype(dtype)

        def parameter(*shape):
            return Parameter(np.zeros(shape, dtype), device=device)
        # registered in torch's order, so state_dict() lists torch's keys in torch's order
        packed = ("in_proj_weight",)
        separate = ("q_proj_weight", "k_proj_weight", "v_proj_weight")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = parameter(3 * embed_dim, embed_dim)
        else:
            self.q_proj_weight = parameter(embed_dim, embed_dim)
            self.k_proj_weight = parameter(embed_dim, self.kdim)
            self.v_proj_weight = parameter(embed_dim, self.vdim)
        for name in separate if self._qkv_same_embed_dim else packed:
            self.register_parameter(name, None)
        self.register_parameter("in_proj_bias", parameter(3 * embed_dim) if bias else None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype, device=device)
        self.bias_k = parameter(1, 1, embed_dim) if add_bias_kv else None
        self.bias_v = parameter(1, 1, embed_dim) if add_bias_kv else None
        self._reset_parameters()

    def _reset_parameters(self):
        # torch's _reset_parameters, after out_proj drew its own (Linear's) values
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        r"""``(output, weights)``: the attention of ``query`` over ``key``/``value``, and the
        softmax weights averaged over heads (per head if not ``average_attn_weights``; None
        unless ``need_weights``).

        Args:
            key_padding_mask: (N, S), or (S,) unbatched: bool (True: ignore that key) or
                float (added to its scores).
            attn_mask: (L, S) or (N·num_heads, L, S): bool (True: may not attend) or float
                (added to the scores).
            need_weights: return the weights (computed as softmax(q·kᵀ + mask), NaN for a
                row that may attend nothing); False runs ``F.scaled_dot_product_attention``.
            is_causal: a hint that ``attn_mask`` is the causal mask (it must be given); used
                as the causal flag of ``scaled_dot_product_attention`` when neither the
                weights nor a padding mask are asked for.

        Shape:
            query (L, N, E) (``batch_first``: (N, L, E)) or (L, E); key (S, N, kdim), value
            (S, N, vdim); output as query; weights (N, L, S), or (N, num_heads, L, S).
        """
        query, key, value = (self._check_input(t) for t in (query, key, value))
        batched = self._check_shapes(query, key, value, key_padding_mask, attn_mask)
        if not batched:                                   # one sequence: a batch of one
            query, key, value = (t.reshape((1,) + t.shape) for t in (query, key, value))
        elif not self.batch_first:                        # (L, N, E) -> (N, L, E)
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        batch, target, source = query.shape[0], query.shape[1], key.shape[1]
        padding = canonical_mask("key_padding_mask", key_padding_mask, query, attn_mask,
                                 "attn_mask")
        if padding is not None and not batched:
            padding = padding.reshape(1, -1)                                 # (1, S)
        if is_causal and attn_mask is None:
            raise RuntimeError("MultiheadAttention: is_causal is a hint that attn_mask is the "
                               "causal mask; pass that attn_mask too")
        causal = is_causal and padding is None and not need_weights
        mask = None if causal else canonical_mask("attn_mask", attn_mask, query)
        mask = self._shaped_attn_mask(mask, batch, target, source)
        q, k, v = self._project(query, key, value)                          # (N, ·, E)
        k, v, mask, padding = self._extend_source(k, v, mask, padding)
        mask = _merged(mask, padding, batch, k.shape[1])                    # (N|1, H|1, L, S)
        q, k, v = (self._split_heads(t) for t in (q, k, v))                 # (N, H, ·, d)
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            scores = (q * math.sqrt(1.0 / self.head_dim)) @ k.mT                # (N, H, L, S)
            weights = (scores if mask is None else scores + mask).softmax(-1)
            if dropout_p:                     # the weights returned are the dropped ones
                weights = F.dropout(weights, dropout_p)
            out = weights @ v
        else:
            out = F.scaled_dot_product_attention(q, k, v, mask, dropout_p, causal)
            weights = None
        # torch's memory order, (L, N, E) with each row the heads side by side; a
        # batch_first output is its transposed view, as torch's (a dropout after it draws
        # torch's mask only over torch's layout)
        out = out.permute(2, 0, 1, 3).reshape(target, batch, self.embed_dim)
        out = self.out_proj(out)                                             # (L, N, E)
        if weights is not None and average_attn_weights:
            weights = weights.mean(dim=1)                                    # (N, L, S)
        if not batched:
            out = out.reshape(target, self.embed_dim)
            weights = None if weights is None else weights.reshape(weights.shape[1:])
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def _check_shapes(self, query, key, value, key_padding_mask, attn_mask):
        # torch's _mha_shape_check and the feature sizes; torch asserts, so AssertionError
        dims = query.ndim
        if dims not in (2, 3):
            raise AssertionError(f"MultiheadAttention: query must be 2-D (unbatched) or 3-D "
                                 f"(batched), got shape {query.shape}")
        if key.ndim != dims or value.ndim != dims:
            raise AssertionError(f"MultiheadAttention: for a {dims}-D query, key and value "
                                 f"must be {dims}-D, got {key.shape} and {value.shape}")
        if key_padding_mask is not None and _ndim(key_padding_mask) != dims - 1:
            raise AssertionError(f"MultiheadAttention: for a {dims}-D query, key_padding_mask "
                                 f"must be {dims - 1}-D, got shape {_shape(key_padding_mask)}")
        if attn_mask is not None and _ndim(attn_mask) not in (2, 3):
            raise AssertionError(f"MultiheadAttention: attn_mask must be 2-D or 3-D, got "
                                 f"shape {_shape(attn_mask)}")
        heads_mask = (self.num_heads, query.shape[0], key.shape[0])
        if dims == 2 and attn_mask is not None and _ndim(attn_mask) == 3 and \
                tuple(_shape(attn_mask)) != heads_mask:
            raise AssertionError(f"MultiheadAttention: for a 2-D query, a 3-D attn_mask must "
                                 f"have shape {heads_mask}, got {_shape(attn_mask)}")
        if query.shape[-1] != self.embed_dim:
            raise AssertionError(f"MultiheadAttention: query must have embed_dim="
                                 f"{self.embed_dim} features, got shape {query.shape}")
        for t, size, name, option in ((key, self.kdim, "key", "kdim"),
                                      (value, self.vdim, "value", "vdim")):
            if t.shape[-1] != size:         # torch's projection fails: a RuntimeError
                raise RuntimeError(f"MultiheadAttention: {name} must have {option}={size} "
                                   f"features, got shape {t.shape}")
        batch_dim = 0 if self.batch_first else 1
        if key.shape[:-1] != value.shape[:-1] or \
                (dims == 3 and query.shape[batch_dim] != key.shape[batch_dim]):
            raise AssertionError(f"MultiheadAttention: query {query.shape}, key {key.shape} and "
                                 f"value {value.shape} must share the batch size, key and value "
                                 "the source length")
        weight = self.in_proj_weight if self._qkv_same_embed_dim else self.q_proj_weight
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.dtype != weight.dtype:
                raise RuntimeError(f"MultiheadAttention: {name} is {t.dtype} but the "
                                   f"parameters are {weight.dtype}")
        return dims == 3

    def _shaped_attn_mask(self, mask, batch, target, source):
        # (L, S) -> (1, 1, L, S); (N·H, L, S) -> (N, H, L, S): broadcasts over the scores
        if mask is None:
            return None
        if mask.ndim == 2 and mask.shape != (target, source):
            raise RuntimeError(f"MultiheadAttention: the 2-D attn_mask must have shape "
                               f"{(target, source)}, got {mask.shape}")
        if mask.ndim == 3 and mask.shape != (batch * self.num_heads, target, source):
            raise RuntimeError(f"MultiheadAttention: the 3-D attn_mask must have shape "
                               f"{(batch * self.num_heads, target, source)}, got {mask.shape}")
        if mask.ndim == 2:
            return mask.reshape(1, 1, target, source)
        return mask.reshape(batch, self.num_heads, target, source)

    def _project(self, query, key, value):
        # q = query W_qᵀ + b_q, and so for k and v: the packed weight's thirds or the three
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            weights = [self.in_proj_weight[i * E:(i + 1) * E] for i in range(3)]
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        biases = [None] * 3 if self.in_proj_bias is None else \
            [self.in_proj_bias[i * E:(i + 1) * E] for i in range(3)]
        return tuple(F.linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))

    def _extend_source(self, k, v, mask, padding):
        # bias_k/bias_v, then a zero position: more source positions, each mask padded with
        # an attended (0) column to match; (N, S, E) -> (N, S + extra, E)
        batch, extra = k.shape[0], []
        if self.bias_k is not None:
            extra.append(tuple(b.expand(batch, 1, self.embed_dim)
                               for b in (self.bias_k, self.bias_v)))
        if self.add_zero_attn:
            zeros = constant(k.xp.zeros((batch, 1, self.embed_dim), k.dtype))
            extra.append((zeros, zeros))
        for extra_k, extra_v in extra:
            k, v = ops.cat([k, extra_k], dim=1), ops.cat([v, extra_v], dim=1)
            mask, padding = _pad_source(mask), _pad_source(padding)
        return k, v, mask, padding

    def _split_heads(self, x):
        # (N, T, E) -> (N, H, T, d)
        batch, length = x.shape[:2]
        return x.reshape(batch, length, self.num_heads, self.head_dim).permute(0, 2, 1, 3)


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
        raise AssertionError(f"MultiheadAttention: key_padding_mask must have shape "
                             f"({batch}, {source}), got {padding.shape}")
    padding = padding.reshape(batch, 1, 1, source)
    return padding if mask is None else mask + padding


def _pad_source(mask):
    # one more source position (a zero: attended) at the end of a mask's last dim
    return None if mask is None else F.pad(mask, (0, 1))


def _shape(mask):
    # a mask's shape, whether a Tensor, an array or nested lists
    return mask.shape if isinstance(mask, Tensor) else np.shape(mask)


def _ndim(mask):
    return len(_shape(mask))
