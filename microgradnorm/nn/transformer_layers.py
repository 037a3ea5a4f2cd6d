"""The encoder-decoder Transformer as ``torch.nn`` builds it: ``TransformerEncoderLayer``,
``TransformerDecoderLayer``, their stacks ``TransformerEncoder`` and ``TransformerDecoder``,
and ``Transformer``. Torch's arguments, defaults, sub-module and parameter names (a torch
state dict loads), initialisation and forward, composed of ``MultiheadAttention``,
``Linear``, ``Dropout`` and this library's ``LayerNorm``."""

import copy
import operator
import warnings

from .. import functional as F
from .. import ops
from ..attention_forward import as_mask, canonical_mask
from ..dtypes import check_number, float_of, index_of
from ..factories import full
from . import init
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .linear import Dropout, Linear
from .module import Module
from .normalization import LayerNorm


class TransformerEncoderLayer(Module):
    r"""Self-attention and a feed-forward network, each with a residual connection and a
    LayerNorm (``torch.nn.TransformerEncoderLayer``):

    .. math::
        \text{post-norm: } x \leftarrow \mathrm{LN}_1(x + \mathrm{SA}(x)),\;
        x \leftarrow \mathrm{LN}_2(x + \mathrm{FF}(x)); \quad
        \text{norm\_first: } x \leftarrow x + \mathrm{SA}(\mathrm{LN}_1(x)),\;
        x \leftarrow x + \mathrm{FF}(\mathrm{LN}_2(x))

    with :math:`\mathrm{FF}(x) = W_2\,\mathrm{act}(W_1 x + b_1) + b_2` and dropout after the
    attention, the activation and the feed-forward output (training only).

    Args:
        d_model: the features E of the input; nhead: attention heads (divides E).
        dim_feedforward: the hidden width of the feed-forward network.
        dropout: the probability of every dropout (the attention weights' too).
        activation: "relu", "gelu" (exact) or a callable (a Module is registered as
            ``activation``, as torch's).
        layer_norm_eps: eps of ``norm1``, ``norm2``.
        batch_first: inputs and output (N, S, E) instead of (S, N, E).
        norm_first: the pre-norm layer (LayerNorm before each block) instead of post-norm.
        bias: biases in the Linear layers and the LayerNorms.
        device, dtype: of the parameters (dtype: the default float dtype if None).

    Sub-modules (torch's names and order): ``self_attn``, ``linear1``, ``dropout``,
    ``linear2``, ``norm1``, ``norm2``, ``dropout1``, ``dropout2``.

    Example:
        >>> layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True)
        >>> y = layer(mg.randn(2, 5, 16))                                  # (2, 5, 16)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        activation = _activation(activation)          # before any draw: a bad call draws none
        _check_layer_arguments(self, dim_feedforward, layer_norm_eps)
        factory = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        _add_feed_forward(self, d_model, dim_feedforward, dropout, bias, factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        # torch's flag of its fused inference kernel: 1 relu, 2 gelu, 0 another callable
        self.activation_relu_or_gelu = (1 if activation is F.relu or isinstance(activation, ReLU)
                                        else 2 if activation is F.gelu
                                        or isinstance(activation, GELU) else 0)
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """The layer on ``src``; a bool mask is True where attention is not allowed, a
        float mask is added to the attention scores.

        Args:
            src_mask: (S, S) or (N·nhead, S, S).
            src_key_padding_mask: (N, S), or (S,) unbatched: True (or -inf) ignores that key.
            is_causal: a hint that ``src_mask`` is the causal mask (which must be given).

        Shape:
            src (S, N, E), (N, S, E) with ``batch_first``, or (S, E) unbatched; output the
            same.
        """
        src = _check_layer_input(self, src, "src")
        src_key_padding_mask = canonical_mask("src_key_padding_mask", src_key_padding_mask,
                                              src, src_mask, "src_mask")
        src_mask = canonical_mask("src_mask", src_mask, src)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask,
                                   is_causal=is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask,
                                          is_causal=is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        # self-attention, then dropout1 (torch's name: subclasses override it)
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        # linear2(dropout(act(linear1(x)))), then dropout2
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    r"""Self-attention, attention over the encoder's output (``memory``) and a feed-forward
    network, each with a residual connection and a LayerNorm
    (``torch.nn.TransformerDecoderLayer``):

    .. math::
        \text{post-norm: } x \leftarrow \mathrm{LN}_1(x + \mathrm{SA}(x)),\;
        x \leftarrow \mathrm{LN}_2(x + \mathrm{MHA}(x, m)),\;
        x \leftarrow \mathrm{LN}_3(x + \mathrm{FF}(x))

    and with ``norm_first`` :math:`x \leftarrow x + \mathrm{SA}(\mathrm{LN}_1(x))`, then
    :math:`x + \mathrm{MHA}(\mathrm{LN}_2(x), m)`, then :math:`x + \mathrm{FF}(\mathrm{LN}_3(x))`.

    Args: as ``TransformerEncoderLayer``'s (d_model, nhead, dim_feedforward, dropout,
    activation, layer_norm_eps, batch_first, norm_first, bias, device, dtype).

    Sub-modules (torch's names and order): ``self_attn``, ``multihead_attn``, ``linear1``,
    ``dropout``, ``linear2``, ``norm1``, ``norm2``, ``norm3``, ``dropout1``, ``dropout2``,
    ``dropout3``.

    Example:
        >>> layer = nn.TransformerDecoderLayer(16, 4, dim_feedforward=32)
        >>> y = layer(mg.randn(5, 2, 16), mg.randn(7, 2, 16))              # (5, 2, 16)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        activation = _activation(activation)
        _check_layer_arguments(self, dim_feedforward, layer_norm_eps)
        factory = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **factory)
        _add_feed_forward(self, d_model, dim_feedforward, dropout, bias, factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """The layer on ``tgt``, attending over ``memory``; masks as in
        ``TransformerEncoderLayer.forward`` (bool: True is not allowed; float: added).

        Args:
            tgt_mask: (T, T) or (N·nhead, T, T); memory_mask: (T, S) or (N·nhead, T, S).
            tgt_key_padding_mask: (N, T); memory_key_padding_mask: (N, S) ((T,), (S,)
                unbatched).
            tgt_is_causal, memory_is_causal: hints that ``tgt_mask``, ``memory_mask`` are
                causal masks (which must be given).

        Shape:
            tgt (T, N, E), memory (S, N, E) ((N, T, E), (N, S, E) with ``batch_first``;
            (T, E), (S, E) unbatched); output as tgt.
        """
        tgt = _check_layer_input(self, tgt, "tgt")
        memory = _check_memory(self, tgt, memory)
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        # self-attention, then dropout1
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        # attention of x over the encoder's output, then dropout2
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        # linear2(dropout(act(linear1(x)))), then dropout3
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerEncoder(Module):
    r"""``num_layers`` copies of ``encoder_layer`` applied in turn, then ``norm`` if given
    (``torch.nn.TransformerEncoder``): :math:`y = \mathrm{norm}(f_L(\cdots f_1(x)))`.

    Args:
        encoder_layer: a ``TransformerEncoderLayer`` (or a module with its forward); each
            layer is a deep copy, so all start with its parameters.
        num_layers: how many copies, in ``layers`` (a ModuleList: ``layers.0.linear1.weight``).
        norm: a module applied to the last layer's output (torch's ``nn.Transformer`` gives
            a LayerNorm), or None.
        enable_nested_tensor: torch's nested-tensor inference path; kept with torch's
            ``use_nested_tensor`` and warning, and no effect here (docs/pytorch.md).
        mask_check: kept; it checks the nested-tensor path's padding in torch.

    Example:
        >>> layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)
        >>> encoder = nn.TransformerEncoder(layer, num_layers=2)
        >>> y = encoder(mg.randn(2, 5, 16), mask=nn.Transformer.generate_square_subsequent_mask(5))
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        reason = _why_not_nested(encoder_layer)
        if enable_nested_tensor and reason:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {reason}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Every layer on ``src`` in turn with the same masks, then ``norm``.

        Args:
            mask: (S, S) or (N·nhead, S, S), bool (True: not allowed) or float (added).
            src_key_padding_mask: (N, S), or (S,) unbatched.
            is_causal: a hint that ``mask`` is causal; None: True when ``mask`` equals
                ``Transformer.generate_square_subsequent_mask(S)`` (torch's detection).

        Shape:
            src (S, N, E), (N, S, E) with ``batch_first``, or (S, E); output the same.
        """
        src = self._check_input(src)
        src_key_padding_mask = canonical_mask("src_key_padding_mask", src_key_padding_mask,
                                              src, mask, "mask")
        mask = canonical_mask("mask", mask, src)
        batch_first = _first_layer(self).self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal,
                                           _get_seq_len(src, batch_first, "src"), src)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal,
                           src_key_padding_mask=src_key_padding_mask)
        return output if self.norm is None else self.norm(output)


class TransformerDecoder(Module):
    r"""``num_layers`` copies of ``decoder_layer`` applied in turn, each attending over the
    same ``memory``, then ``norm`` if given (``torch.nn.TransformerDecoder``):
    :math:`y = \mathrm{norm}(g_L(\cdots g_1(x, m) \cdots, m))`.

    Args:
        decoder_layer: a ``TransformerDecoderLayer``; each layer is a deep copy of it.
        num_layers: how many copies, in ``layers`` (a ModuleList).
        norm: a module applied to the last layer's output, or None.

    Example:
        >>> decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(16, 4, 32), 2)
        >>> y = decoder(mg.randn(5, 2, 16), mg.randn(7, 2, 16))              # (5, 2, 16)
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """Every layer on ``tgt`` in turn, with ``memory`` and the same masks, then ``norm``.

        Args: as ``TransformerDecoderLayer.forward``'s; ``tgt_is_causal`` None: True when
        ``tgt_mask`` equals ``Transformer.generate_square_subsequent_mask(T)``.

        Shape:
            tgt (T, N, E), memory (S, N, E) ((N, T, E), (N, S, E) with ``batch_first``;
            (T, E), (S, E) unbatched); output as tgt.
        """
        tgt = self._check_input(tgt)
        batch_first = _first_layer(self).self_attn.batch_first
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal,
                                               _get_seq_len(tgt, batch_first, "tgt"), tgt)
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return output if self.norm is None else self.norm(output)


class Transformer(Module):
    r"""The encoder-decoder Transformer of "Attention Is All You Need"
    (``torch.nn.Transformer``): :math:`y = \mathrm{Decoder}(\text{tgt},
    \mathrm{Encoder}(\text{src}))`, each a stack of layers closed by a LayerNorm.

    Args:
        d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
            norm_first, bias, device, dtype: as ``TransformerEncoderLayer``'s.
        num_encoder_layers, num_decoder_layers: the depth of each stack.
        custom_encoder, custom_decoder: modules used instead of the stacks built here.

    Every parameter with more than one dim is drawn again by ``xavier_uniform_`` after
    construction, in ``parameters()`` order (torch's: one seed gives torch's values).

    Example:
        >>> model = nn.Transformer(16, 4, 2, 2, 32)
        >>> y = model(mg.randn(7, 2, 16), mg.randn(5, 2, 16),
        ...           tgt_mask=nn.Transformer.generate_square_subsequent_mask(5))  # (5, 2, 16)
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        factory = dict(device=device, dtype=dtype)
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(*layer_args, **factory)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(*layer_args, **factory)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """The encoder on ``src``, then the decoder on ``tgt`` attending over its output.

        Args:
            src_mask (S, S), tgt_mask (T, T), memory_mask (T, S): bool (True: not allowed)
                or float (added); also (N·nhead, ·, ·).
            src_key_padding_mask (N, S), tgt_key_padding_mask (N, T),
                memory_key_padding_mask (N, S): True (or -inf) ignores that key.
            src_is_causal, tgt_is_causal: hints that the mask is causal; None detects it.
            memory_is_causal: a hint that ``memory_mask`` is causal.

        Shape:
            src (S, N, E), tgt (T, N, E) ((N, S, E), (N, T, E) with ``batch_first``;
            (S, E), (T, E) unbatched); output as tgt.
        """
        src, tgt = self._check_input(src), self._check_input(tgt)
        batched = src.ndim == 3
        dim = 0 if self.batch_first else 1
        if _size(src, dim, "src") != _size(tgt, dim, "tgt") and batched:
            raise RuntimeError(f"Transformer: the batch number of src and tgt must be equal, "
                               f"got src {src.shape} and tgt {tgt.shape} "
                               f"(batch_first={self.batch_first})")
        if _size(src, -1, "src") != self.d_model or _size(tgt, -1, "tgt") != self.d_model:
            raise RuntimeError(f"Transformer: the feature number of src and tgt must be equal "
                               f"to d_model={self.d_model}, got src {src.shape} and tgt "
                               f"{tgt.shape}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        r"""The causal mask of ``sz`` positions (torch's): -inf above the diagonal (position
        i may not attend to j > i), 0 elsewhere; :math:`M_{ij} = -\infty` for j > i.

        Args:
            sz: the sequence length, an int >= 0.
            device, dtype: of the mask (dtype: the default float dtype if None; bool gives
                True above the diagonal; an integer dtype cannot hold -inf: RuntimeError).

        Shape:
            (sz, sz).

        Example:
            >>> nn.Transformer.generate_square_subsequent_mask(3)
            tensor([[0., -inf, -inf],
                    [0., 0., -inf],
                    [0., 0., 0.]])
        """
        return _generate_square_subsequent_mask(sz, device, dtype)

    def _reset_parameters(self):
        # torch's: xavier_uniform_ on every matrix, in parameters() order
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    if isinstance(sz, bool):
        raise TypeError("generate_square_subsequent_mask: sz must be an int, got bool")
    try:
        sz = operator.index(sz)
    except TypeError:
        raise TypeError(f"generate_square_subsequent_mask: sz must be an int, got "
                        f"{type(sz).__name__} {sz!r}") from None
    if sz < 0:                                      # torch: a negative dimension, RuntimeError
        raise RuntimeError(f"generate_square_subsequent_mask: sz must be >= 0, got {sz}")
    mask = full((sz, sz), float("-inf"), dtype=dtype, device=device)
    return ops.triu(mask, diagonal=1)


def _activation(activation):
    # torch's _get_activation_fn for a name; any callable as given (a Module is registered)
    if isinstance(activation, str):
        if activation in ("relu", "gelu"):
            return F.relu if activation == "relu" else F.gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    if not callable(activation):
        raise TypeError(f"activation must be 'relu', 'gelu' or a callable, got "
                        f"{type(activation).__name__} {activation!r}")
    return activation


def _check_layer_arguments(layer, dim_feedforward, layer_norm_eps):
    """The layer's own arguments by their names, before Linear and LayerNorm name theirs:
    torch's TypeError for a width that is no int, its RuntimeError for a negative one (a
    width of 0 builds, as torch's); any real eps, as torch's (a negative one gives NaN where
    var + eps < 0)."""
    where = type(layer).__name__
    dim_feedforward = index_of(dim_feedforward)     # a 0-d int tensor: Linear takes it too
    check_number(where, "dim_feedforward", dim_feedforward, integer=True)
    if dim_feedforward < 0:
        raise RuntimeError(f"{where}: dim_feedforward must be >= 0, got {dim_feedforward}")
    float_of(layer_norm_eps, where, "layer_norm_eps")   # kept as given, as torch keeps it


def _add_feed_forward(layer, d_model, dim_feedforward, dropout, bias, factory):
    # linear1, dropout, linear2: registered (and drawn) in torch's order
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)


def _get_clones(module, num_layers):
    # torch's: N deep copies, so every layer starts with the given layer's parameters
    try:
        count = operator.index(num_layers)
    except TypeError:
        raise TypeError(f"num_layers must be an int, got {type(num_layers).__name__} "
                        f"{num_layers!r}") from None
    return ModuleList([copy.deepcopy(module) for _ in range(count)])


def _first_layer(stack):
    if len(stack.layers) == 0:                      # torch indexes layers[0]: IndexError
        raise IndexError(f"{type(stack).__name__}: no layers (num_layers="
                         f"{stack.num_layers}); forward needs at least one")
    return stack.layers[0]


def _why_not_nested(layer):
    """torch's reason its encoder would not take the nested-tensor path with this layer
    ("" if it would): it decides ``use_nested_tensor`` and the warning, nothing else here."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    reasons = ((layer.norm_first, f"{name}.norm_first was True"),
               (not attn.batch_first, f"{name}.self_attn.batch_first was not True(use "
                                      "batch_first for better inference performance)"),
               (not attn._qkv_same_embed_dim,
                f"{name}.self_attn._qkv_same_embed_dim was not True"),
               (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
               (not layer.activation_relu_or_gelu,
                f"{name}.activation_relu_or_gelu was not True"),
               (layer.norm1.eps != layer.norm2.eps,
                f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
               (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"))
    return next((reason for failed, reason in reasons if failed), "")


def _check_layer_input(layer, x, name):
    """``x`` as a Tensor in the parameters' dtype (torch: RuntimeError from the first op);
    with ``norm_first`` the LayerNorm comes first, and torch's refuses other widths with a
    RuntimeError (the attention's own check, an AssertionError, comes first otherwise)."""
    x = layer._check_input(x)
    weight = layer.linear1.weight
    if x.dtype != weight.dtype:
        raise RuntimeError(f"{type(layer).__name__}: {name} is {x.dtype} but the parameters "
                           f"are {weight.dtype}")
    width = layer.self_attn.embed_dim
    if layer.norm_first and (x.ndim == 0 or x.shape[-1] != width):
        raise RuntimeError(f"{type(layer).__name__}: {name} must have d_model={width} "
                           f"features in its last dim, got shape {x.shape}")
    return x


def _check_memory(layer, tgt, memory):
    # torch's attention fails reshaping a memory of another batch size: a RuntimeError
    memory = layer._check_input(memory)
    dim = 0 if layer.multihead_attn.batch_first else 1
    if tgt.ndim == 3 and memory.ndim == 3 and tgt.shape[dim] != memory.shape[dim]:
        raise RuntimeError(f"{type(layer).__name__}: tgt {tgt.shape} and memory "
                           f"{memory.shape} must have the same batch size (dim {dim})")
    return memory


def _size(x, dim, name):
    # x.size(dim), with torch's IndexError for a dim x lacks
    if not -x.ndim <= dim < x.ndim:
        raise IndexError(f"{name} has shape {x.shape}: dimension {dim} out of range")
    return x.shape[dim]


def _get_seq_len(x, batch_first, name):
    # S of (S, E) unbatched, of (S, N, E), or of (N, S, E) with batch_first
    if x.ndim == 2:
        return x.shape[0]
    return _size(x, 1 if batch_first else 0, name)


def _detect_is_causal_mask(mask, is_causal, size, like):
    """torch's detection: ``is_causal`` if given (only True counts); with None, whether
    ``mask`` (as ``like``'s masks are taken) equals the (size, size) causal mask of its own
    dtype (an integer mask: torch's RuntimeError, before the attention's own check)."""
    if is_causal is not None or mask is None:
        return is_causal is True
    mask = as_mask(mask, like)
    causal = _generate_square_subsequent_mask(size, mask.device, mask.dtype)
    return mask.shape == causal.shape and bool((mask._array == causal._array).all())
