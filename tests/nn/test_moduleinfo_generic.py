"""PyTorch's own module samples (``module_db`` ModuleInfos) for every class of it that ``nn``
has, found by name: each sample's module built in both libraries from the same arguments,
torch's parameters and buffers loaded here, then in training and in eval mode the outputs,
the buffers after the call and the ``.grad`` of the floating inputs and of every parameter
(float64: also the second-order gradients) compared with PyTorch's, in float64 and float32
(tests/helpers/moduleinfo_generic.py).

A (class, dtype) is listed only when every sample it runs passes; a class of ``module_db``
absent from ``nn`` is named in ABSENT.
"""

import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

from moduleinfo_generic import module_table, run_module  # noqa: E402
from torch_compare import one_torch_thread  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.slow          # torch's tables take seconds to import

MAX_SAMPLES = 5         # of each mode, spread over torch's list

# module_db's classes this package does not have
ABSENT = set()

FLOAT64 = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "BCELoss",
    "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Bilinear", "CELU",
    "CTCLoss", "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "CosineEmbeddingLoss", "CrossEntropyLoss", "ELU", "Embedding",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "GELU",
    "GLU", "GRU", "GRUCell", "GaussianNLLLoss", "GroupNorm", "Hardshrink", "Hardswish", "Hardtanh",
    "HingeEmbeddingLoss", "HuberLoss", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "KLDivLoss", "L1Loss", "LPPool1d", "LPPool2d", "LPPool3d", "LSTM", "LSTMCell", "LayerNorm",
    "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
    "LazyConvTranspose3d", "LeakyReLU", "Linear", "LinearCrossEntropyLoss", "LocalResponseNorm",
    "LogSigmoid", "LogSoftmax",
    "MSELoss", "MarginRankingLoss", "MaxPool1d", "MaxPool2d", "MaxPool3d", "Mish",
    "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiheadAttention",
    "NLLLoss", "PReLU", "PoissonNLLLoss", "RMSNorm", "RNN", "RNNCell", "ReLU", "ReLU6",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "SELU", "SiLU", "Sigmoid", "SmoothL1Loss",
    "SoftMarginLoss", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink", "Softsign",
    "Tanh", "Tanhshrink", "Threshold", "Transformer", "TransformerDecoderLayer",
    "TransformerEncoder", "TransformerEncoderLayer", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]
# every class passes in float32 too; one that could not would be left out here, with why
FLOAT32 = list(FLOAT64)


def test_every_module_db_class_is_listed_or_absent():
    from torch.testing._internal.common_modules import module_db
    every = {info.module_cls.__name__ for info in module_db}
    assert every - set(module_table()) == ABSENT
    assert set(FLOAT64) <= set(module_table()) and set(FLOAT32) <= set(FLOAT64)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", FLOAT64)
def test_module_samples_match_pytorch(name, dtype):
    if dtype == "float32" and name not in FLOAT32:
        pytest.skip(f"{name} in float32: see the note on FLOAT32")
    dtype = getattr(torch, dtype)
    ran, failures = run_module(module_table()[name], dtype, MAX_SAMPLES,
                               second_order=dtype == torch.float64)
    assert not failures, "\n".join(failures)
    assert ran, "no sample ran"


# ----- nn.LinearCrossEntropyLoss's construction, beside its samples above --------------------
OPTIONS = [{}, {"batch_chunk_size": 2, "chunking_method": None},
           {"chunking_method": "aspect_ratio"},
           {"chunking_method": "aspect_ratio:4", "acc_policy": "compact"},
           {"acc_dtype": "float32"}, {"acc_policy": "fast"}, {"chunking_method": "aspect"},
           {"chunking_method": "aspect_ratio:0"}, {"batch_chunk_size": 0},
           {"batch_chunk_size": 2.0}, {"acc_dtype": "int64"}]


def built(cls, kwargs, lib):
    """The repr (dtypes by their names), or the builtin class of the error."""
    kwargs = {k: getattr(lib, v) if k == "acc_dtype" else v for k, v in kwargs.items()}
    try:
        return re.sub(r"dtype\('(\w+)'\)|torch\.(\w+)", r"\1\2", repr(cls(**kwargs)))
    except Exception as error:
        return next(c.__name__ for c in type(error).__mro__ if c.__module__ == "builtins")


@pytest.mark.parametrize("kwargs", OPTIONS, ids=str)
def test_linear_cross_entropy_options_are_checked_as_torchs(kwargs):
    import microgradnorm as mg
    assert built(mg.nn.LinearCrossEntropyOptions, kwargs, mg) == \
        built(torch.nn.LinearCrossEntropyOptions, kwargs, torch)


@pytest.mark.parametrize("kwargs", [{}, {"out_features": (2, 3), "bias": True},
                                    {"reduction": "sum", "ignore_index": 1},
                                    {"label_smoothing": 0.5}, {"label_smoothing": 1.5}],
                         ids=str)
def test_linear_cross_entropy_loss_builds_torchs_module(kwargs):
    import microgradnorm as mg
    ours, theirs = built(mg.nn.LinearCrossEntropyLoss, dict(in_features=5, num_classes=4,
                                                            **kwargs), mg), \
        built(torch.nn.LinearCrossEntropyLoss, dict(in_features=5, num_classes=4, **kwargs),
              torch)
    assert ours == theirs
