"""microgradnorm: a miniature autograd engine whose subject is normalization (README.md)."""

from . import nn, optim
from .autograd import (Function, enable_grad, grad, inference_mode, is_grad_enabled, no_grad,
                       set_grad_enabled)
from .checks import (GradcheckError, GraphStats, MemoryTimeline, compare, gradcheck, graph_stats,
                     jacobian, memory_timeline, precision_report)
from .dtypes import (bfloat16, finfo, float16, float32, float64, get_default_dtype, iinfo, int8,
                     int16, int32, int64, set_default_dtype, uint8)
from .dtypes import bool_ as bool      # torch.bool; torch's other aliases below
from .dtypes import float16 as half
from .dtypes import float32 as float
from .dtypes import float64 as double
from .dtypes import int16 as short
from .dtypes import int32 as int
from .dtypes import int64 as long
from .factories import (arange, bernoulli, empty, from_numpy, full, get_rng_state, initial_seed,
                        linspace, manual_seed, multinomial, normal, ones, ones_like, rand,
                        rand_like, randint, randint_like, randn, randn_like, randperm, seed,
                        set_rng_state, zeros, zeros_like)
from .generator import Generator, default_generator
from .kernels import cpu_kernels, get_cpu_kernels, set_cpu_kernels
from .norms import get_norm_impl, norm_impl
from .nn.utils import load, save
from .ops import (amax, amin, argmax, argmin, argsort, cat, chunk, clamp, concatenate, exp,
                  flatten, gather, index_select, log, log_softmax, masked_fill, matmul, maximum,
                  mean, minimum, norm, outer, permute, pow, relu, reshape, rsqrt, sigmoid,
                  softmax, sort, split, sqrt, squeeze, stack, std, sum, tanh, topk, transpose,
                  tril, triu, unsqueeze, var, where)
from .ops import return_types  # torch.return_types: the (values, indices) named tuples
from .ops.indexing import kthvalue, mode
from .ops.reductions import aminmax, max, median, min  # torch.max: value or (values, indices)
from .printing import get_printoptions, set_printoptions
from .tensor import Size, Tensor, tensor

is_floating_point = Tensor.is_floating_point
numel = Tensor.numel

__version__ = "0.1.0"

__all__ = ["Function", "Generator", "GradcheckError", "GraphStats", "MemoryTimeline", "Size",
           "Tensor",
           "amax", "amin", "aminmax", "arange", "argmax", "argmin", "argsort", "bernoulli",
           "bfloat16", "bool",
           "cat",
           "chunk", "clamp", "compare", "concatenate", "cpu_kernels",
           "default_generator", "double", "empty",
           "enable_grad", "exp", "finfo", "flatten", "float", "float16", "float32", "float64",
           "from_numpy", "full", "gather", "get_cpu_kernels", "get_default_dtype", "get_norm_impl",
           "get_printoptions", "get_rng_state",
           "grad",
           "gradcheck", "graph_stats", "half", "iinfo", "index_select", "inference_mode",
           "initial_seed",
           "int", "int8", "int16", "int32", "int64", "is_floating_point", "is_grad_enabled",
           "jacobian", "kthvalue", "linspace", "load", "log", "log_softmax", "long", "manual_seed",
           "masked_fill",
           "matmul", "max", "maximum", "mean", "median", "memory_timeline", "min", "minimum",
           "mode", "multinomial", "nn",
           "no_grad", "norm", "norm_impl", "normal", "numel", "ones", "ones_like", "optim", "outer",
           "permute", "pow", "precision_report", "rand",
           "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm",
           "relu", "reshape", "return_types", "rsqrt", "save", "seed", "set_cpu_kernels",
           "set_default_dtype",
           "set_printoptions",
           "set_grad_enabled", "set_rng_state", "short",
           "sigmoid", "softmax", "sort", "split", "sqrt", "squeeze", "stack", "std", "sum",
           "tanh", "tensor", "topk", "transpose", "tril", "triu", "uint8", "unsqueeze", "var",
           "where", "zeros", "zeros_like"]
