"""MultiheadAttention with torch's parameters (names, shapes, initialisation: a torch state
dict loads) and torch's forward (``F.multi_head_attention_forward``): masks, padding,
batch_first, unbatched input, head-averaged weights. Beside it what ``torch.nn.attention``
holds: ``SDPBackend`` and ``sdpa_kernel``, the attention kernels' flags for a block
(``backends.py``: recorded, they pick no kernel here)."""

import contextlib

import numpy as np

from .. import backends as _flags
from .. import functional as F
from ..backends import SDPBackend
from ..dtypes import check_number, float_of, index_of
from . import init
from .linear import NonDynamicallyQuantizableLinear
from .module import Module, Parameter, _check_sizes, _dtype


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Only ``backends`` (an ``SDPBackend`` or a list of them) enabled for a block, the
    previous flags put back after (``torch.nn.attention.sdpa_kernel``); yields ``{}``. Anything
    else is torch's AssertionError. The flags are recorded (``mg.backends.cuda.*_sdp_enabled``)
    and pick no kernel here."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    previous = _flags.sdp_backends()
    try:
        _flags.set_sdp_backends(chosen)
        yield {}
    finally:
        _flags.set_sdp_backends(previous)


class HeadCountError(TypeError, AssertionError):
    """A float ``embed_dim`` or ``num_heads``: a TypeError here, and torch's AssertionError
    (it divides them, ``head_dim = embed_dim // num_heads``, then asserts that
    ``head_dim * num_heads == embed_dim``); both catch this."""


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
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        embed_dim, num_heads = index_of(embed_dim), index_of(num_heads)   # tensor(4): an int
        for name, value in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if isinstance(value, float):    # torch: embed_dim // num_heads, then its assert
                raise HeadCountError(f"MultiheadAttention: {name} must be an int (embed_dim "
                                     f"divisible by num_heads), got float {value!r}")
            if value.__class__ is not bool:     # a bool is the int it is, as torch's
                check_number("MultiheadAttention", name, value, integer=True)
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be greater "
                             f"than 0, got embed_dim={embed_dim} and num_heads={num_heads}")
        if embed_dim % num_heads:           # torch asserts this: the same class here
            raise AssertionError(f"MultiheadAttention: embed_dim must be divisible by "
                                 f"num_heads, got embed_dim={embed_dim}, num_heads={num_heads}")
        float_of(dropout, "MultiheadAttention", "dropout")
        if not 0 <= dropout <= 1:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1], got {dropout!r}")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        _check_sizes("MultiheadAttention", kdim=self.kdim, vdim=self.vdim)
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
        transposed = self.batch_first and query.ndim == 3     # (N, L, E) -> (L, N, E)
        if transposed:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        # a batch_first output is the transposed view of torch's (L, N, E) memory order, as
        # torch's (a dropout after it draws torch's mask only over torch's layout)
        return (out.transpose(0, 1) if transposed else out), weights
