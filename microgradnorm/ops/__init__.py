"""The primitive ops, one family per module over ``base``: each holds its ``Function``s and
the functions that apply them, which are also ``Tensor``'s methods and ``mg.*`` names."""

from .base import (AxisError, EmptyReductionError, OutOfRangeError, ShapeError, arithmetic,
                   check_reducible, float_input, normalize_axis, promote, reduce_sum,
                   reduced_size, result_dtype, torch_sign, unbroadcast)
from .complex import (Angle, Complex, Conj, Imag, Polar, Real, ViewAsComplex, ViewAsReal, angle,
                      conj, imag, is_complex, polar, real, view_as_complex, view_as_real)
from .elementwise import (Abs, Add, Cast, Clamp, Clone, Div, Erf, Exp, Log, PowOfNumber,
                          Maximum, Minimum, Mul, Neg, Pow, ReLU, Relu, Rsqrt, Sigmoid, Sign, Sqrt,
                          Sub, Tanh, ToDevice, Where, clamp, erf, exp, log, masked_fill,
                          maximum, minimum, pow, relu, rsqrt, sigmoid, sqrt, tanh, tril, triu,
                          where)
from .indexing import Gather, GetItem, gather, index_select
from .sorting import argsort, sort, topk
from .linalg import (Einsum, Linear, MatMul, MatrixShapeError, addmm, addmv, baddbmm, bmm,
                     dot, einsum, matmul, mm, mv, outer)
from .logical import (FloorDivide, Fmod, Remainder, all, allclose, any, bitwise_and,
                      bitwise_not, bitwise_or, bitwise_xor, eq, equal, floor_divide, fmod, ge,
                      gt, isclose, isfinite, isinf, isnan, le, logical_and, logical_not,
                      logical_or, logical_xor, lt, ne, nonzero, remainder)
from .pointwise import (Ceil, Cos, CumProd, CumSum, Expm1, Floor, Log1p, Log2, Log10, Prod,
                        Reciprocal, Round, Sin, Trunc, ceil, clamp_max, clamp_min, cos,
                        cumprod, cumsum, diff, expm1, floor, frac, log1p, log2, log10, prod,
                        reciprocal, round, sin, trunc)
from .reductions import (AMin, Max, Mean, Sum, amax, amin, argmax, argmin, log_softmax, mean,
                         norm, softmax, std, sum, var)
from .variance import StdFromVar, Var
from .shape import (Concatenate, Expand, Permute, Reshape, Split, cat, chunk,
                    concatenate, flatten, permute, repeat, reshape, split, squeeze, stack,
                    transpose, unsqueeze)
from .shape import (expand_as, flip, movedim, moveaxis, narrow, ravel, repeat_interleave, roll,
                    unbind, unflatten)

from . import methods  # noqa: F401  (binds the op methods onto Tensor)
from . import (double_backward, double_backward_linalg,  # noqa: F401  (give the ops their
               double_backward_reductions)               # graph_backward)

__all__ = ["AMin", "Abs", "Add", "AxisError", "Cast", "Clamp", "Clone", "Concatenate", "Div",
           "EmptyReductionError", "Erf", "Exp", "Expand", "Gather", "GetItem", "Log", "MatMul",
           "Max", "Maximum", "Mean", "Minimum", "Mul", "Neg", "OutOfRangeError", "Permute", "Pow",
           "ReLU", "Relu", "Reshape", "Rsqrt", "ShapeError", "Sigmoid", "Sign", "Split", "Sqrt",
           "StdFromVar", "Sub", "Sum", "Tanh", "ToDevice", "Var", "Where", "amax", "amin", "argmax",
           "argmin",
           "argsort", "arithmetic", "cat", "check_reducible", "chunk", "clamp", "concatenate",
           "erf", "exp", "flatten", "float_input", "gather", "index_select", "log", "log_softmax",
           "masked_fill", "matmul", "maximum", "mean", "minimum", "norm", "normalize_axis", "outer",
           "permute", "pow", "promote", "reduce_sum", "reduced_size", "relu", "repeat", "reshape",
           "result_dtype", "rsqrt", "sigmoid", "softmax", "sort", "split", "sqrt", "squeeze",
           "stack", "std", "sum", "tanh", "topk", "torch_sign", "transpose", "tril", "triu",
           "unbroadcast", "unsqueeze", "var", "where",
           # ops/pointwise.py, ops/logical.py
           "Ceil", "Cos", "CumProd", "CumSum", "Expm1", "Floor", "FloorDivide", "Fmod",
           "Log10", "Log1p", "Log2", "PowOfNumber", "Prod", "Reciprocal", "Remainder", "Round",
           "Sin", "Trunc", "all", "allclose", "any", "bitwise_and", "bitwise_not", "bitwise_or",
           "bitwise_xor", "ceil", "clamp_max", "clamp_min", "cos", "cumprod", "cumsum", "diff",
           "eq", "equal", "expm1", "floor", "floor_divide", "fmod", "frac", "ge", "gt",
           "isclose", "isfinite", "isinf", "isnan", "le", "log10", "log1p", "log2",
           "logical_and", "logical_not", "logical_or", "logical_xor", "lt", "ne", "nonzero",
           "prod", "reciprocal", "remainder", "round", "sin", "trunc",
           # ops/shape.py, ops/linalg.py: more of torch's vocabulary
           "Einsum", "Linear", "MatrixShapeError", "addmm", "addmv", "baddbmm", "bmm", "dot",
           "einsum",
           "expand_as", "flip", "mm", "moveaxis", "movedim", "mv", "narrow", "ravel",
           "repeat_interleave", "roll", "unbind", "unflatten",
           # ops/complex.py (torch.complex is mg.complex: here, complex is that module)
           "Angle", "Complex", "Conj", "Imag", "Polar", "Real", "ViewAsComplex", "ViewAsReal",
           "angle", "conj", "imag", "is_complex", "polar", "real", "view_as_complex",
           "view_as_real"]

methods.bind()       # Tensor's op methods: x + y, x.sum(), x.reshape(), ... (methods.py)
