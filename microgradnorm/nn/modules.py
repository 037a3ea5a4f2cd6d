"""``torch.nn.modules``' paths to the module classes: ``nn.modules.batchnorm._BatchNorm``
(what code that freezes BatchNorm tests ``isinstance`` against),
``from microgradnorm.nn.modules.normalization import LayerNorm``, ``nn.modules.Module``.

``nn`` splits its files by subject as torch does, not file for file; each name of
``SUBMODULES`` is a module object, registered in ``sys.modules`` as
``microgradnorm.nn.modules.<name>``, that holds the classes torch's file of that name
defines and ``nn`` has: the same class objects, none defined here. The package's namespace
holds every one of them too, as ``torch.nn.modules`` does. A class torch has and ``nn``
lacks (``FractionalMaxPool2d``, ``_Loss``, ...) is absent from its file here too.

Example:
    >>> from microgradnorm.nn.modules.batchnorm import _BatchNorm
    >>> isinstance(nn.BatchNorm2d(4), _BatchNorm), isinstance(nn.InstanceNorm2d(4), _BatchNorm)
    (True, False)
"""

import sys
import types

from .. import nn
from .channel_norms import _InstanceNorm
from .conv_more import _AdaptiveMaxPoolNd, _ConvNd, _ConvTransposeNd
from .lazy import LazyModuleMixin
from .lazy_norms import _LazyNorm
from .linear import NonDynamicallyQuantizableLinear as _OutProjLinear
from .module_hooks import (register_module_buffer_registration_hook,
                           register_module_forward_hook, register_module_forward_pre_hook,
                           register_module_module_registration_hook,
                           register_module_parameter_registration_hook)
from .normalization import _BatchNorm, _NormBase
from .pooling import _AdaptiveAvgPoolNd, _AvgPoolNd, _LPPoolNd, _MaxPoolNd

# torch's classes that are not ``nn``'s public names (nor, but LazyModuleMixin, in their
# file's ``__all__``); ``_LazyNorm`` is torch's _LazyNormBase; MultiheadAttention's
# out_proj is the last one
_BASES = {"_NormBase": _NormBase, "_BatchNorm": _BatchNorm, "_LazyNormBase": _LazyNorm,
          "_InstanceNorm": _InstanceNorm, "_ConvNd": _ConvNd,
          "_ConvTransposeNd": _ConvTransposeNd, "LazyModuleMixin": LazyModuleMixin,
          "NonDynamicallyQuantizableLinear": _OutProjLinear, "_MaxPoolNd": _MaxPoolNd,
          "_AvgPoolNd": _AvgPoolNd, "_LPPoolNd": _LPPoolNd,
          "_AdaptiveAvgPoolNd": _AdaptiveAvgPoolNd, "_AdaptiveMaxPoolNd": _AdaptiveMaxPoolNd,
          # torch's global hooks, functions of its file module.py
          "register_module_forward_pre_hook": register_module_forward_pre_hook,
          "register_module_forward_hook": register_module_forward_hook,
          "register_module_buffer_registration_hook": register_module_buffer_registration_hook,
          "register_module_module_registration_hook": register_module_module_registration_hook,
          "register_module_parameter_registration_hook":
              register_module_parameter_registration_hook}

# torch's file -> the names it defines that ``nn`` has, in torch's order
SUBMODULES = {
    "activation": ("Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid",
                   "Hardsigmoid", "Tanh", "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU",
                   "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
                   "Softshrink", "MultiheadAttention", "PReLU", "Softsign", "Tanhshrink",
                   "Softmin", "Softmax", "Softmax2d", "LogSoftmax"),
    "adaptive": ("AdaptiveLogSoftmaxWithLoss",),
    "batchnorm": ("_NormBase", "_BatchNorm", "_LazyNormBase", "BatchNorm1d", "LazyBatchNorm1d",
                  "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d",
                  "SyncBatchNorm"),
    "channelshuffle": ("ChannelShuffle",),
    "container": ("Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
                  "ParameterDict"),
    "conv": ("_ConvNd", "Conv1d", "Conv2d", "Conv3d", "_ConvTransposeNd", "ConvTranspose1d",
             "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
             "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"),
    "distance": ("PairwiseDistance", "CosineSimilarity"),
    "dropout": ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                "FeatureAlphaDropout"),
    "flatten": ("Flatten", "Unflatten"),
    "fold": ("Fold", "Unfold"),
    "instancenorm": ("_InstanceNorm", "InstanceNorm1d", "LazyInstanceNorm1d", "InstanceNorm2d",
                     "LazyInstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm3d"),
    "linear": ("Identity", "Linear", "NonDynamicallyQuantizableLinear", "Bilinear",
               "LazyLinear"),
    "loss": ("L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss",
             "MSELoss",
             "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss",
             "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "CrossEntropyLoss",
             "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
             "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
             "CTCLoss", "LinearCrossEntropyLoss"),
    "module": ("Module", "register_module_forward_pre_hook", "register_module_forward_hook",
               "register_module_buffer_registration_hook",
               "register_module_module_registration_hook",
               "register_module_parameter_registration_hook"),
    "normalization": ("LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm",
                      "RMSNorm"),
    "padding": ("CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
                "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
                "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
                "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"),
    "pixelshuffle": ("PixelShuffle", "PixelUnshuffle"),
    "lazy": ("LazyModuleMixin",),
    "pooling": ("_MaxPoolNd", "_AvgPoolNd", "_LPPoolNd", "_AdaptiveAvgPoolNd",
                "_AdaptiveMaxPoolNd", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d",
                "MaxUnpool2d",
                "MaxUnpool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d",
                "FractionalMaxPool3d", "LPPool1d", "LPPool2d",
                "LPPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
                "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d"),
    "rnn": ("RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"),
    "sparse": ("Embedding", "EmbeddingBag"),
    "transformer": ("Transformer", "TransformerEncoder", "TransformerDecoder",
                    "TransformerEncoderLayer", "TransformerDecoderLayer"),
    "upsampling": ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"),
}


def _submodule(name, classes):
    """The module object ``microgradnorm.nn.modules.<name>``, registered, holding ``classes``."""
    module = types.ModuleType(f"{__name__}.{name}", f"torch.nn.modules.{name}'s classes "
                              "that nn has (nn/modules.py)")
    for cls in classes:
        setattr(module, cls, _BASES[cls] if cls in _BASES else getattr(nn, cls))
    module.__all__ = [cls for cls in classes if cls not in _BASES]
    sys.modules[module.__name__] = module
    return module


def _register():
    # each submodule, and its public classes, as names of this module (torch.nn.modules.Conv2d)
    namespace = globals()
    for name, classes in SUBMODULES.items():
        submodule = namespace[name] = _submodule(name, classes)
        namespace.update((cls, getattr(submodule, cls)) for cls in submodule.__all__)


_register()

__all__ = sorted(SUBMODULES) + sorted(cls for classes in SUBMODULES.values()
                                      for cls in classes if cls not in _BASES)
