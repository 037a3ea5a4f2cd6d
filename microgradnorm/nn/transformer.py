"""Causal self-attention, the feed-forward, the block's four norm placements and a small GPT."""

import math

import numpy as np

from .. import backend
from .. import functional as F
from . import init
from .activation import ACTIVATIONS, GELU
from .container import ModuleList
from .linear import Dropout, Embedding, Linear
from ..norms import fitting, get_norm_impl, lookup
from .module import Module, _check_choice, _check_positive
from .normalization import make_norm

PLACEMENTS = ("pre", "post", "sandwich", "deepnorm")


class CausalSelfAttention(Module):
    r"""Multi-head causal self-attention, Q, K, V from one Linear ``qkv``:

    .. math::
        \mathrm{head}_h = \mathrm{softmax}\Bigl(\frac{Q_h K_h^T}{\sqrt{d_h}} + M\Bigr) V_h,
        \quad y = [\mathrm{head}_1 \dots \mathrm{head}_H]\, W_o^T + b_o,
        \quad M_{ij} = -\infty \text{ for } j > i

    Under the fused impl (the softmax's choice: ``set_impl``, ``mg.norm_impl``) the heads
    are one ``F.scaled_dot_product_attention(q, k, v, is_causal=True)`` node, which keeps no
    (T, T) probabilities; under the composite impl, and while dropout acts (training with
    p > 0), they are the graph q·kᵀ·scale, causal mask, softmax, dropout, ·v, so that the
    dropout mask is ``nn.Dropout``'s (sdpa's dropout draws another from the generator).

    Shape:
        input (B, T, d_model), output (B, T, d_model).
    """

    def __init__(self, d_model, n_heads, bias=True, dropout=0.0, dtype=None, device=None):
        super().__init__()
        _check_positive("CausalSelfAttention", d_model=d_model, n_heads=n_heads)
        if d_model % n_heads:
            raise ValueError(f"CausalSelfAttention: d_model ({d_model}) must be divisible by "
                             f"n_heads ({n_heads})")
        self.d_model, self.n_heads = d_model, n_heads
        self.qkv = Linear(d_model, 3 * d_model, bias=bias, dtype=dtype, device=device)
        self.proj = Linear(d_model, d_model, bias=bias, dtype=dtype, device=device)
        self.dropout = Dropout(dropout)

    def forward(self, x):
        """Position t attends to positions 0..t. Shape: (B, T, d_model) -> the same."""
        x = self._check_input(x, (self.d_model,), f"d_model={self.d_model}")
        if x.ndim != 3:
            raise ValueError(f"{self._describe()}: input must have shape (B, T, d_model), "
                             f"got {x.shape}")
        B, T, C = x.shape
        H, D = self.n_heads, C // self.n_heads
        q, k, v = (t.reshape(B, T, H, D).transpose(1, 2)           # each (B, H, T, D)
                   for t in self.qkv(x).split(C, axis=-1))
        if get_norm_impl() == "fused" and not (self.training and self.dropout.p):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)     # (B, H, T, D)
        else:
            y = self._attention_graph(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))

    def _attention_graph(self, q, k, v):
        """softmax(q·kᵀ/√D + M)·v, dropped out, one node a step: (B, H, T, D) each."""
        T, D = q.shape[-2:]
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))  # (B, H, T, T)
        mask = np.triu(np.full((T, T), -np.inf, dtype=q.dtype), k=1)
        att = F.softmax(scores + backend.to_device(mask, q.device), axis=-1)
        return self.dropout(att) @ v                                # (B, H, T, D)

    def extra_repr(self):
        return f"d_model={self.d_model}, n_heads={self.n_heads}"


class FeedForward(Module):
    r"""Position-wise MLP: :math:`y = W_2\,\mathrm{act}(W_1 x + b_1) + b_2`, or for
    ``"swiglu"`` LLaMA's bias-free :math:`y = W_2\bigl(\mathrm{SiLU}(W_1 x) \odot W_3 x\bigr)`
    (``fc1``, ``fc3``, ``fc2``). ``hidden``: 4·d_model by default, for swiglu rounded by
    ``swiglu_hidden(hidden, multiple_of)``; ``"gelu"`` is GPT-2's tanh form.

    Shape:
        input (..., d_model), output (..., d_model).

    Example:
        >>> ff = nn.FeedForward(64, activation="swiglu", multiple_of=32)   # hidden 192
    """

    def __init__(self, d_model, hidden=None, activation="gelu", dropout=0.0, dtype=None,
                 device=None, multiple_of=256):
        super().__init__()
        _check_choice("FeedForward", "activation", activation, FEEDFORWARD_ACTIVATIONS)
        _check_positive("FeedForward", d_model=d_model, multiple_of=multiple_of)
        hidden = 4 * d_model if hidden is None else hidden
        _check_positive("FeedForward", hidden=hidden)
        self.activation = activation
        kw = {"dtype": dtype, "device": device}
        if activation == "swiglu":
            hidden = swiglu_hidden(hidden, multiple_of)
            self.fc1 = Linear(d_model, hidden, bias=False, **kw)     # w1: gate
            self.fc3 = Linear(d_model, hidden, bias=False, **kw)     # w3: up
            self.fc2 = Linear(hidden, d_model, bias=False, **kw)     # w2: down
        else:
            self.fc1 = Linear(d_model, hidden, **kw)
            self.act = GELU("tanh") if activation == "gelu" else ACTIVATIONS[activation]()
            self.fc2 = Linear(hidden, d_model, **kw)
        self.hidden = hidden
        self.dropout = Dropout(dropout)

    def forward(self, x):
        """The MLP, then dropout. Shape: (*, d_model) -> (*, d_model)."""
        if self.activation == "swiglu":
            return self.dropout(self.fc2(F.silu(self.fc1(x)) * self.fc3(x)))
        return self.dropout(self.fc2(self.act(self.fc1(x))))

    def extra_repr(self):
        return f"activation={self.activation!r}, hidden={self.hidden}"


FEEDFORWARD_ACTIVATIONS = (*ACTIVATIONS, "swiglu")


def swiglu_hidden(hidden, multiple_of=256):
    """LLaMA's SwiGLU inner width: ``int(2 * hidden / 3)`` rounded up to ``multiple_of``."""
    _check_positive("swiglu_hidden", hidden=hidden, multiple_of=multiple_of)
    hidden = int(2 * hidden / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def deepnorm_constants(n_layers):
    r"""DeepNet's (α, β) for an encoder- or decoder-only stack of ``n_layers`` blocks:
    :math:`\alpha = (2N)^{1/4}`, :math:`\beta = (8N)^{-1/4}` (Wang et al. 2022, Table 1)."""
    return (2 * n_layers) ** 0.25, (8 * n_layers) ** -0.25


class TransformerBlock(Module):
    r"""Attention and a feed-forward, each a residual branch F, with the norms placed by
    ``placement`` (docs/norm_placement.md)::

        pre       x ← x + F(LN(x))                 (GPT-2, LLaMA)
        post      x ← LN(x + F(x))                 (the original Transformer)
        sandwich  x ← x + LN_out(F(LN_in(x)))      (CogView)
        deepnorm  x ← LN(α·x + F(x)), branch weights × β at init (DeepNet; ``n_layers``)

    Shape:
        input (B, T, d_model), output (B, T, d_model).

    Example:
        >>> block = nn.TransformerBlock(32, 4, norm="rms_norm", placement="pre")
    """

    def __init__(self, d_model, n_heads, norm="layer_norm", placement="pre", impl=None,
                 n_layers=1, hidden=None, activation="gelu", dropout=0.0, dtype=None,
                 device=None, multiple_of=256):
        super().__init__()
        norm = lookup(norm, "TransformerBlock: norm", fitting("row")).name
        _check_choice("TransformerBlock", "placement", placement, PLACEMENTS)
        _check_positive("TransformerBlock", n_layers=n_layers)
        self.d_model, self.norm, self.placement, self.n_layers = d_model, norm, placement, n_layers
        kw = {"dtype": dtype, "device": device}
        self.ln1 = make_norm(norm, d_model, impl, **kw)
        self.attn = CausalSelfAttention(d_model, n_heads, dropout=dropout, **kw)
        self.ln2 = make_norm(norm, d_model, impl, **kw)
        self.mlp = FeedForward(d_model, hidden, activation, dropout, multiple_of=multiple_of,
                               **kw)
        if placement == "sandwich":
            self.ln1_out = make_norm(norm, d_model, impl, **kw)
            self.ln2_out = make_norm(norm, d_model, impl, **kw)
        self.alpha = deepnorm_constants(n_layers)[0] if placement == "deepnorm" else 1.0
        if placement == "deepnorm":
            self.scale_deepnorm_init()
        if impl is not None:        # the softmax in attention too: as set_impl(impl)
            self.set_impl(impl)

    def scale_deepnorm_init(self):
        """Multiply the value, output and feed-forward weights by DeepNet's β."""
        beta = deepnorm_constants(self.n_layers)[1]
        C = self.d_model
        self.attn.qkv.weight._array[2 * C:] *= beta                  # V rows of W_qkv
        gate = (self.mlp.fc3,) if self.mlp.activation == "swiglu" else ()
        for linear in (self.attn.proj, self.mlp.fc1, self.mlp.fc2, *gate):
            linear.weight._array *= beta

    def forward(self, x):
        """The two residual branches and norms. Shape: (B, T, d_model) -> the same."""
        if self.placement == "pre":
            h, x = self.ln2(self.attn(self.ln1(x)), x)             # ln2(x + a), x + a
            return x + self.mlp(h)
        if self.placement == "sandwich":
            x = x + self.ln1_out(self.attn(self.ln1(x)))
            return x + self.ln2_out(self.mlp(self.ln2(x)))
        residual = x if self.alpha == 1.0 else x * self.alpha       # post: α = 1
        x, _ = self.ln1(self.attn(x), residual)
        residual = x if self.alpha == 1.0 else x * self.alpha
        x, _ = self.ln2(self.mlp(x), residual)
        return x

    def extra_repr(self):
        return f"norm={self.norm!r}, placement={self.placement!r}"


class GPT(Module):
    """A small GPT: token + position embeddings, ``n_layers`` TransformerBlocks, a final
    norm (pre and sandwich placements) and a linear LM head. ``init``: ``"gpt2"`` (weights
    N(0, 0.02²)) or ``"xavier"`` (Linear N(0, 2 / (fan_in + fan_out)), embeddings N(0, 1)).

    Shape:
        input integer ids (B, T), T <= context_length; output logits (B, T, vocab_size).

    Example:
        >>> logits = nn.GPT(50, 16, d_model=32)(np.zeros((2, 16), dtype=np.int64))
    """

    def __init__(self, vocab_size, context_length, d_model=64, n_heads=4, n_layers=2,
                 norm="layer_norm", placement="pre", impl=None, dropout=0.0, hidden=None,
                 activation="gelu", init="gpt2", dtype=None, device=None, multiple_of=256):
        super().__init__()
        _check_choice("GPT", "init", init, ("gpt2", "xavier"))
        _check_positive("GPT", vocab_size=vocab_size, context_length=context_length,
                        n_layers=n_layers)
        kw = {"dtype": dtype, "device": device}
        self.vocab_size, self.context_length = vocab_size, context_length
        self.norm, self.placement, self.init = norm, placement, init
        self.tok_emb = Embedding(vocab_size, d_model, **kw)
        self.pos_emb = Embedding(context_length, d_model, **kw)
        self.drop = Dropout(dropout)
        self.blocks = ModuleList(
            TransformerBlock(d_model, n_heads, norm, placement, impl, n_layers, hidden,
                             activation, dropout, multiple_of=multiple_of, **kw)
            for _ in range(n_layers))
        self.ln_f = make_norm(norm, d_model, impl, **kw) if placement in ("pre", "sandwich") \
            else None
        self.lm_head = Linear(d_model, vocab_size, bias=False, **kw)
        self.reset_parameters()
        if impl is not None:        # every registered op of the model: as set_impl(impl)
            self.set_impl(impl)

    def reset_parameters(self):
        """Draw the weights again as ``init`` says, zero the biases, apply DeepNorm's β."""
        for module in self.modules():
            if isinstance(module, (Linear, Embedding)):
                std = 0.02
                if self.init == "xavier":
                    std = 1.0 if isinstance(module, Embedding) else math.sqrt(
                        2 / (module.in_features + module.out_features))
                init.normal_(module.weight, 0.0, std)   # the default generator, as torch
                if isinstance(module, Linear) and module.bias is not None:
                    module.bias._array[...] = 0
        if self.placement == "deepnorm":
            for block in self.blocks:
                block.scale_deepnorm_init()

    def forward(self, idx):
        """Next-token logits. Shape: integer ids (B, T) -> logits (B, T, vocab_size)."""
        T = idx.shape[-1]
        if len(idx.shape) != 2 or T > self.context_length:
            raise ValueError(f"GPT: idx must have shape (B, T) with T <= context_length "
                             f"{self.context_length}, got {tuple(idx.shape)}")
        x = self.drop(self.tok_emb(idx) + self.pos_emb(np.arange(T)))   # (B, T, C)
        for block in self.blocks:
            x = block(x)
        if self.ln_f is not None:
            x = self.ln_f(x)
        return self.lm_head(x)                                          # (B, T, vocab)

    def num_parameters(self):
        """The number of scalars in all parameters."""
        return sum(p.size for p in self.parameters())
