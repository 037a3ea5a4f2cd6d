"""microgradnorm: a miniature autograd engine whose subject is normalization."""

from .autograd import Function, no_grad, is_grad_enabled
from .tensor import Tensor, tensor

__all__ = ["Function", "Tensor", "tensor", "no_grad", "is_grad_enabled"]
