"""Modules and Parameters with PyTorch's names, defaults and initialisation.

    from microgradnorm import nn
    model = nn.GPT(vocab_size=65, context_length=32, d_model=64, n_heads=4, n_layers=2,
                   norm="rmsnorm", placement="pre", impl="fused")
    logits = model(idx)                      # idx: integer array (B, T) -> (B, T, vocab)

The package is split by subject, as ``torch.nn.modules`` is (docs/architecture.md lists
the files); every public name is here.
"""

from .activation import GELU, ReLU, SiLU, Tanh
from .container import ModuleList, Sequential
from .linear import Dropout, Embedding, Linear
from .mlp import MLP
from .module import Module, Parameter
from .normalization import NORMS, BatchNorm1d, LayerNorm, RMSNorm, make_norm
from .transformer import (PLACEMENTS, GPT, CausalSelfAttention, FeedForward, TransformerBlock,
                          deepnorm_constants, swiglu_hidden)
from .utils import clip_grad_norm_, load, save

__all__ = ["GELU", "GPT", "MLP", "NORMS", "PLACEMENTS", "BatchNorm1d", "CausalSelfAttention",
           "Dropout", "Embedding", "FeedForward", "LayerNorm", "Linear", "Module", "ModuleList",
           "Parameter", "RMSNorm", "ReLU", "Sequential", "SiLU", "Tanh", "TransformerBlock",
           "clip_grad_norm_", "deepnorm_constants", "load", "make_norm", "save", "swiglu_hidden"]
