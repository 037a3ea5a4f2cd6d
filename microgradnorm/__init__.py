"""microgradnorm: a miniature autograd engine whose subject is normalization.

    import microgradnorm as mg
    import microgradnorm.functional as F

    x = mg.tensor(np.random.randn(4, 8), requires_grad=True)
    y = F.layer_norm(x, 8, impl="fused")       # or impl="composite": the textbook graph
    y.sum().backward()
"""

from . import nn, optim
from .autograd import Function, enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from .checks import (GradcheckError, GraphStats, MemoryTimeline, compare, gradcheck, graph_stats,
                     jacobian, memory_timeline, precision_report)
from .dtypes import bfloat16
from .kernels import cpu_kernels, get_cpu_kernels, set_cpu_kernels
from .ops import concatenate, matmul, maximum, split, stack
from .tensor import Tensor, tensor

__version__ = "0.1.0"

__all__ = ["Function", "GradcheckError", "GraphStats", "MemoryTimeline", "Tensor", "bfloat16",
           "compare", "concatenate", "cpu_kernels", "enable_grad", "get_cpu_kernels", "grad",
           "gradcheck", "graph_stats", "is_grad_enabled", "jacobian", "matmul", "maximum",
           "memory_timeline", "nn", "no_grad", "optim", "precision_report", "set_cpu_kernels",
           "set_grad_enabled", "split", "stack", "tensor"]
