"""Modules and Parameters with PyTorch's names, defaults and initialisation; split by
subject as ``torch.nn.modules`` is (docs/architecture.md lists the files)."""

import sys

from .. import functional
from . import init
from .activation import GELU, ReLU, SiLU, Tanh
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Dropout, Embedding, Linear
from .mlp import MLP
from .module import Module, Parameter
from .normalization import NORMS, BatchNorm1d, LayerNorm, RMSNorm, make_norm
from .transformer import (PLACEMENTS, GPT, CausalSelfAttention, FeedForward, TransformerBlock,
                          deepnorm_constants, swiglu_hidden)
from .utils import clip_grad_norm_, load, save

# ``import microgradnorm.nn.functional as F`` is ``microgradnorm.functional``, as in torch
sys.modules[__name__ + ".functional"] = functional

__all__ = ["GELU", "GPT", "MLP", "NORMS", "PLACEMENTS", "BatchNorm1d", "CausalSelfAttention",
           "Dropout", "Embedding", "FeedForward", "LayerNorm", "Linear", "Module", "ModuleDict",
           "ModuleList", "Parameter", "ParameterDict", "ParameterList", "RMSNorm", "ReLU",
           "Sequential", "SiLU", "Tanh", "TransformerBlock", "clip_grad_norm_",
           "deepnorm_constants", "functional", "init", "load", "make_norm", "save",
           "swiglu_hidden"]
