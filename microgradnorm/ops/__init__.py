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
                          maximum, minimum, pow, relu, rsqrt, sigmoid, sqrt, tanh, tril, triu,
                          where)
from .indexing import (Gather, GetItem, argsort, gather, index_select, sort,
                       topk)
from .linalg import MatMul, matmul, outer
from .reductions import (AMin, Max, Mean, StdFromVar, Sum, amax, amin, argmax, argmin,
                         log_softmax, mean, norm, softmax, std, sum, var)
from .shape import (Concatenate, Expand, Permute, Reshape, Split, cat, chunk,
                    concatenate, flatten, permute, repeat, reshape, split, squeeze, stack,
                    transpose, unsqueeze)

__all__ = ["AMin", "Abs", "Add", "AxisError", "Cast", "Clamp", "Clone", "Concatenate", "Div",
           "EmptyReductionError", "Erf", "Exp", "Expand", "Gather", "GetItem", "Log", "MatMul",
           "Max", "Maximum", "Mean", "Minimum", "Mul", "Neg", "OutOfRangeError", "Permute", "Pow",
           "ReLU", "Reshape", "Rsqrt", "Sigmoid", "Sign", "Split", "Sqrt", "StdFromVar", "Sub",
           "Sum", "Tanh", "ToDevice", "Where", "amax", "amin", "argmax", "argmin",
           "argsort", "arithmetic", "cat", "check_reducible", "chunk", "clamp", "concatenate",
           "erf", "exp", "flatten", "float_input", "gather", "index_select", "log", "log_softmax",
           "masked_fill", "matmul", "maximum", "mean", "minimum", "norm", "normalize_axis", "outer",
           "permute", "pow", "promote", "reduce_sum", "reduced_size", "relu", "repeat", "reshape",
           "result_dtype", "rsqrt", "sigmoid", "softmax", "sort", "split", "sqrt", "squeeze",
           "stack", "std", "sum", "tanh", "topk", "torch_sign", "transpose", "tril", "triu",
           "unbroadcast", "unsqueeze", "var", "where"]
