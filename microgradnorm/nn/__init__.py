"""Modules and Parameters with PyTorch's names, defaults and initialisation; split by
subject as ``torch.nn.modules`` is (docs/architecture.md lists the files)."""

import sys

from .. import functional
from . import init
from .activation import (ELU, GELU, Hardtanh, LeakyReLU, LogSoftmax, Mish, ReLU, Sigmoid, SiLU,
                         Softmax, Softplus, Tanh)
from .activation import (CELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, LogSigmoid, PReLU,
                         ReLU6, RReLU, Softmax2d, Softmin, Softshrink, Softsign, Tanhshrink,
                         Threshold)
from .attention import MultiheadAttention
from .channel_norms import (BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d, SyncBatchNorm)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .container import Container        # deprecated: torch's FutureWarning
from .loss import NLLLoss2d             # deprecated alias of NLLLoss: torch's FutureWarning
from .conv import Conv1d, Conv2d
from .distance import CosineSimilarity, PairwiseDistance
from .flatten import Flatten, Identity, Unflatten
from .linear import Dropout, Dropout2d, Embedding, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .mlp import MLP
from .module import Module, Parameter
from .parameter import Buffer
from .normalization import (NORMS, BatchNorm1d, DynamicTanh, DyT, LayerNorm, RMSNorm,
                            make_norm, module_for)
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d,
                      ZeroPad2d, ZeroPad3d)
from .pooling import AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .pooling import LPPool1d, LPPool2d, LPPool3d
# nn.parallel: DataParallel (the module itself, run), DistributedDataParallel (refused)
from . import parallel
from .parallel import DataParallel
from .transformer import (PLACEMENTS, GPT, CausalSelfAttention, FeedForward, TransformerBlock,
                          deepnorm_constants, swiglu_hidden)
from .upsampling import (PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d,
                         UpsamplingNearest2d)
# recurrent layers (rnn.py)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
# transformer encoder and decoder layers (transformer_layers.py)
from .transformer_layers import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                                 TransformerEncoder, TransformerEncoderLayer)
# more losses (loss_more.py)
from .loss_more import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss,
                        MarginRankingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
                        MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss,
                        TripletMarginWithDistanceLoss)
# transposed convolutions, fold, unfold, adaptive max pooling (conv_more.py)
from .conv_more import (AdaptiveAvgPool1d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AlphaDropout,
                        Bilinear, ChannelShuffle, ConvTranspose1d, ConvTranspose2d, Dropout1d,
                        Fold, LazyLinear, LocalResponseNorm, MaxUnpool2d, UninitializedParameter,
                        Unfold)
from .conv_more import FeatureAlphaDropout, MaxUnpool1d
# the lazy norms (lazy_norms.py)
from .lazy_norms import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d,
                         LazyInstanceNorm2d, LazyInstanceNorm3d, UninitializedBuffer)
# the 3-D convolutions, pooling and dropout; the lazy convolutions (lazy.py, lazy_conv.py)
from .conv import Conv3d
from .conv_more import AdaptiveMaxPool3d, ConvTranspose3d, MaxUnpool3d
from .linear import Dropout3d
from .pooling import AdaptiveAvgPool3d, AvgPool3d, MaxPool3d
from .lazy_conv import (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
                        LazyConvTranspose2d, LazyConvTranspose3d)
# EmbeddingBag (linear.py), CTCLoss and LinearCrossEntropyLoss (loss_more.py), the
# adaptive softmax (adaptive.py)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .linear import EmbeddingBag
from .loss_more import CTCLoss, LinearCrossEntropyLoss, LinearCrossEntropyOptions
from .utils import (clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
                    load, parameters_to_vector, save, vector_to_parameters)
# torch's paths to the classes, ``nn.modules.batchnorm._BatchNorm``: after every class above
from .fractional import CrossMapLRN2d, FractionalMaxPool2d, FractionalMaxPool3d
from . import modules
# torch.nn.grad: a convolution's input and weight gradients as functions (grad.py)
from . import grad  # noqa: F401

# ``import microgradnorm.nn.functional as F`` is ``microgradnorm.functional``, as in torch
sys.modules[__name__ + ".functional"] = functional
# names torch's F carries from elsewhere: the module torch.nn.grad, and two torch.* ops
# (functional.py is at its size limit, and nn.grad sits above it)
from ..native_norms import native_channel_shuffle as _native_channel_shuffle  # noqa: E402
from ..torch_functional import conv_tbc as _conv_tbc  # noqa: E402
functional.grad, functional.conv_tbc = grad, _conv_tbc
functional.native_channel_shuffle = _native_channel_shuffle

__all__ = ["GELU", "GPT", "MLP", "NORMS", "PLACEMENTS", "BatchNorm1d", "CausalSelfAttention",
           "BatchNorm2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "DyT", "DynamicTanh",
           "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "Conv1d", "Conv2d", "MaxPool1d",
           "MaxPool2d", "MultiheadAttention",
           "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "ELU", "Flatten", "Hardtanh",
           "HuberLoss", "Identity", "KLDivLoss", "L1Loss", "LeakyReLU", "LogSoftmax", "MSELoss",
           "Mish", "NLLLoss", "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus", "Unflatten",
           "Dropout", "Dropout2d", "Embedding", "FeedForward", "LayerNorm", "Linear", "Module",
           "ModuleDict", "NLLLoss2d", "Container",
           "ModuleList", "Parameter", "ParameterDict", "ParameterList", "RMSNorm", "ReLU",
           "Sequential", "SiLU", "Tanh", "TransformerBlock", "clip_grad_norm_",
           "deepnorm_constants", "functional", "init", "load", "make_norm", "module_for",
           "save", "swiglu_hidden",
           # the rarer activations, distances, padding and resampling layers, nn.utils
           "CELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid",
           "PReLU", "ReLU6", "RReLU", "Softmax2d", "Softmin", "Softshrink", "Softsign",
           "Tanhshrink", "Threshold", "CosineSimilarity", "PairwiseDistance",
           "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d",
           "ZeroPad2d", "ZeroPad3d", "PixelShuffle", "PixelUnshuffle", "Upsample",
           "UpsamplingBilinear2d", "UpsamplingNearest2d", "clip_grad_value_",
           "clip_grads_with_norm_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters"]
# __all__ additions: rnn.py
__all__ += ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]
# __all__ additions: transformer_layers.py
__all__ += ["Transformer", "TransformerDecoder", "TransformerDecoderLayer",
            "TransformerEncoder", "TransformerEncoderLayer"]
# __all__ additions: loss_more.py
__all__ += ["CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss",
            "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
            "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss",
            "TripletMarginWithDistanceLoss"]
# __all__ additions: conv_more.py
__all__ += ["AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AlphaDropout",
            "Bilinear", "ChannelShuffle", "ConvTranspose1d", "ConvTranspose2d", "Dropout1d",
            "Fold", "LazyLinear", "LocalResponseNorm", "MaxUnpool2d", "UninitializedParameter",
            "Unfold"]
# __all__ additions: channel_norms.py, lazy_norms.py
__all__ += ["BatchNorm3d", "InstanceNorm3d", "SyncBatchNorm", "LazyBatchNorm1d",
            "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
            "LazyInstanceNorm3d", "UninitializedBuffer"]
# __all__ additions: parallel.py
__all__ += ["DataParallel", "parallel"]
# __all__ additions: modules.py
__all__ += ["modules"]
# __all__ additions: parameter.py, pooling.py, conv_more.py
__all__ += ["Buffer", "FeatureAlphaDropout", "LPPool1d", "LPPool2d", "LPPool3d",
            "MaxUnpool1d"]
# __all__ additions: the 3-D layers, lazy_conv.py
__all__ += ["AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "AvgPool3d", "Conv3d", "ConvTranspose3d",
            "Dropout3d", "MaxPool3d", "MaxUnpool3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
            "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]
# __all__ additions: EmbeddingBag, CTCLoss, adaptive.py
__all__ += ["AdaptiveLogSoftmaxWithLoss", "CTCLoss", "EmbeddingBag"]
__all__ += ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]
# __all__ additions: fractional.py
__all__ += ["CrossMapLRN2d", "FractionalMaxPool2d", "FractionalMaxPool3d"]
