"""microgradnorm: a miniature autograd engine whose subject is normalization (README.md)."""

from . import nn, optim
from .autograd import Function, enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from .checks import (GradcheckError, GraphStats, MemoryTimeline, compare, gradcheck, graph_stats,
                     jacobian, memory_timeline, precision_report)
from .dtypes import bfloat16
from .factories import (arange, empty, from_numpy, full, manual_seed, ones, ones_like, rand,
                        randn, zeros, zeros_like)
from .kernels import cpu_kernels, get_cpu_kernels, set_cpu_kernels
from .ops import (cat, concatenate, exp, log, log_softmax, matmul, maximum, minimum, sigmoid,
                  softmax, split, stack, tanh, where)
from .tensor import Tensor, tensor

__version__ = "0.1.0"

__all__ = ["Function", "GradcheckError", "GraphStats", "MemoryTimeline", "Tensor", "arange",
           "bfloat16", "cat", "compare", "concatenate", "cpu_kernels", "empty", "enable_grad",
           "exp", "from_numpy", "full", "get_cpu_kernels", "grad", "gradcheck", "graph_stats",
           "is_grad_enabled", "jacobian", "log", "log_softmax", "manual_seed", "matmul", "maximum",
           "memory_timeline", "minimum", "nn", "no_grad", "ones", "ones_like", "optim",
           "precision_report", "rand", "randn", "set_cpu_kernels", "set_grad_enabled",
           "sigmoid", "softmax", "split", "stack", "tanh", "tensor", "where", "zeros", "zeros_like"]
