"""The primitive ops, one family per module over ``base``: each holds its ``Function``s and
the functions that apply them, which are also ``Tensor``'s methods and ``mg.*`` names."""

# tensor.py binds the families' functions as methods, so it loads first
from .. import tensor  # noqa: F401  (isort: skip)
from .base import (AxisError, EmptyReductionError, OutOfRangeError, arithmetic,
                   check_reducible, float_input, normalize_axis, promote, reduce_sum,
                   reduced_size, result_dtype, torch_sign, unbroadcast)
from .elementwise import (Abs, Add, Cast, Clamp, Clone, Div, Erf, Exp, Log,
                          Maximum, Minimum, Mul, Neg, Pow, ReLU, Rsqrt, Sigmoid, Sign, Sqrt,
                          Sub, Tanh, ToDevice, Where, clamp, erf, exp, log, masked_fill,
                          maximum, minimum, pow, relu, rsqrt, sigmoid, sqrt, tanh, where)
from .indexing import Gather, GetItem, gather, index_select
from .linalg import MatMul, matmul
from .reductions import (AMin, Max, Mean, StdFromVar, Sum, amax, amin, log_softmax, softmax,
                         std, var)
from .shape import (Concatenate, Expand, Permute, Reshape, Split, cat, chunk,
                    concatenate, repeat, split, stack)

__all__ = ["AMin", "Abs", "Add", "AxisError", "Cast", "Clamp", "Clone", "Concatenate", "Div",
           "EmptyReductionError", "Erf", "Exp", "Expand", "Gather", "GetItem",
           "Log", "MatMul", "Max", "Maximum", "Mean", "Minimum", "Mul", "Neg",
           "OutOfRangeError", "Permute", "Pow", "ReLU", "Reshape", "Rsqrt",
           "Sigmoid", "Sign", "Split", "Sqrt", "StdFromVar", "Sub", "Sum", "Tanh",
           "ToDevice", "Where", "amax", "amin", "arithmetic", "cat", "check_reducible",
           "chunk", "clamp", "concatenate", "erf", "exp", "float_input", "gather",
           "index_select", "log", "log_softmax", "masked_fill", "matmul", "maximum",
           "minimum", "normalize_axis", "pow", "promote", "reduce_sum", "reduced_size",
           "relu", "repeat", "result_dtype", "rsqrt", "sigmoid", "softmax", "split", "sqrt",
           "stack", "std", "tanh", "torch_sign", "unbroadcast", "var", "where"]
