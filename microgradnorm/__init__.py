"""microgradnorm: a miniature autograd engine whose subject is normalization (README.md)."""

import math as _math
import sys as _sys
import importlib as _importlib

from . import autograd, nn, optim, utils
from . import ao  # torch.ao: module fusion (ao.quantization.fuse_modules), ao.nn.intrinsic
from . import amp, backends, cuda  # torch.amp, torch.backends, torch.cuda
# torch.cpu, torch.distributed, torch.jit, torch.random, torch.special, torch.testing
from . import cpu, distributed, jit, random, special, testing
from . import __future__          # torch.__future__: the module-conversion switches
from . import profiler             # torch.profiler
from . import compiler, _dynamo, _inductor   # torch.compiler, and the settings torch._dynamo
                                              # and torch._inductor hold
from . import signal               # torch.signal: the windows
from . import version              # torch.version: no CUDA build of torch's kind
# torch.accelerator, torch.mps, torch.xpu, torch.multiprocessing: the runtime a script sets up
from . import accelerator, mps, multiprocessing, xpu
from .accelerator import get_device_module
from .cuda import OutOfMemoryError   # torch.OutOfMemoryError is torch.cuda.OutOfMemoryError
from .torch_misc import get_device, is_same_size, is_signed
from .dtypes import uint16, uint32, uint64
from .torch_misc import is_nonzero
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .dtypes import dtype  # torch.dtype: the class of every dtype here (mg.float32, ...)
from .autograd import (enable_grad, grad, inference_mode, is_grad_enabled, no_grad,
                       set_grad_enabled)
from .autograd.function import Function       # the engine's base, on arrays
from .capture import capture
from .checks.gradcheck import torch_gradcheck as _torch_gradcheck
from .checks.gradcheck import torch_gradgradcheck as _torch_gradgradcheck
from .checks import (GradcheckError, GraphStats, MemoryTimeline, compare, gradcheck, graph_stats,
                     jacobian, memory_timeline, precision_report)
from .checks import gradgradcheck
from .dtypes import (bfloat16, finfo, float16, float32, float64, iinfo, int8, int16, int32,
                     int64, set_default_dtype, uint8)
from .dtypes import torch_default_dtype as get_default_dtype
from .dtypes import bool_ as bool      # torch.bool; torch's other aliases below
from .dtypes import float16 as half
from .dtypes import float32 as float
from .dtypes import float64 as double
from .dtypes import int16 as short
from .dtypes import int32 as int
from .dtypes import int64 as long
from .dtypes import complex64, complex128
from .dtypes import (float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
                     float8_e8m0fnu)
from .dtypes import complex64 as cfloat
from .dtypes import complex128 as cdouble
from .factories import (arange, bernoulli, empty, from_numpy, full, get_rng_state, initial_seed,
                        linspace, manual_seed, multinomial, normal, ones, ones_like, rand,
                        rand_like, randint, randint_like, randn, randn_like, randperm, seed,
                        set_rng_state, zeros, zeros_like)
from .backend import Device as device  # torch.device
from .factories import as_tensor, empty_like, eye, full_like, is_tensor
from .poisson import poisson
from .generator import Generator, default_generator
from .kernels import cpu_kernels, get_cpu_kernels, set_cpu_kernels
from .norms import get_norm_impl, norm_impl
from .nn.utils import load, save
from .nn import serialization      # torch.serialization: save, load, the safe globals
from . import func                 # torch.func: functional_call, the transforms
from .func import vmap             # torch.vmap is torch.func.vmap
from .ops import (amax, amin, argmax, argmin, argsort, cat, chunk, clamp, concatenate, exp,
                  flatten, gather, index_select, log, masked_fill, matmul, maximum, mean,
                  minimum, norm, outer, permute, pow, relu, reshape, rsqrt, sigmoid, sort,
                  split, sqrt, squeeze, stack, std, sum, tanh, topk, transpose, tril, triu,
                  unsqueeze, var, where)
# torch.softmax and torch.log_softmax: the fused node by default, as F's (fused/softmax.py)
from .fused.softmax import tensor_log_softmax as log_softmax, tensor_softmax as softmax
from .ops import return_types  # torch.return_types: the (values, indices) named tuples
from .ops.sorting import kthvalue, mode
from .ops import foreach as _foreach  # torch._foreach_add_, ...: bound below
from .torch_misc import _assert as _assert  # torch._assert: private in torch, used by models
from .ops.logical import (all, allclose, any, bitwise_and, bitwise_not, bitwise_or, bitwise_xor,
                          eq, equal, floor_divide, fmod, ge, gt, isclose, isfinite, isinf, isnan,
                          le, logical_and, logical_not, logical_or, logical_xor, lt, ne, nonzero,
                          remainder)
from .ops.pointwise import (ceil, clamp_max, clamp_min, cos, cumprod, cumsum, diff, expm1, floor,
                            frac, log1p, log2, log10, prod, reciprocal, round, sin, trunc)
from .ops.linalg import addmm, addmv, baddbmm, bmm, dot, einsum, mm, mv
from .ops.reductions import aminmax, max, median, min  # torch.max: value or (values, indices)
from .ops.shape import (flip, meshgrid, movedim, moveaxis, narrow, ravel, repeat_interleave,
                        roll, t, unbind, unflatten)
from .ops.complex import (angle, complex, conj, imag, is_complex, polar, real, view_as_complex,
                          view_as_real)
# the unary functions (ops/elementwise.py, ops/pointwise.py, ops/special.py)
from .ops.elementwise import abs, erf, sign, square
from .ops.elementwise import clamp as clip
from .ops.pointwise import absolute, fix, nan_to_num, neg, negative, sgn, signbit
from .ops.special import (acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctanh, asin,
                          asinh, atan, atanh, cosh, deg2rad, erfc, erfinv, exp2, logit, rad2deg,
                          sinc, sinh, tan)
# arithmetic by name (ops/binary.py, ops/ternary.py, ops/logical.py)
from .ops.binary import (add, arctan2, atan2, copysign, div, divide, float_power, fmax, fmin,
                         hypot, logaddexp, logaddexp2, mul, multiply, sub, subtract,
                         true_divide, xlogy)
from .ops.ternary import addcdiv, addcmul, lerp
from .ops.logical import (greater, greater_equal, isneginf, isposinf, isreal, less,
                          less_equal, not_equal)
from .ops.linalg import ger, vdot
from .ops.arrange import diagflat, msort
from .ops.pointwise import positive
# reductions, shapes, products, indexing and search (ops/reductions.py, arrange.py, ...)
from .ops.reductions import (count_nonzero, cummax, cummin, logcumsumexp, logsumexp, nanmean,
                             nansum, std_mean, var_mean)
from .ops.arrange import (atleast_1d, atleast_2d, atleast_3d, broadcast_tensors, broadcast_to,
                          column_stack, diag, diag_embed, diagonal, dsplit, dstack, fliplr,
                          flipud, hsplit, hstack, rot90, row_stack, swapaxes, swapdims,
                          tensor_split, tile, trace, vsplit, vstack)
from .ops.products import cdist, cross, dist, inner, kron, pdist, tensordot
from .ops.indexing import (index_add, index_copy, index_fill, masked_select, scatter,
                           scatter_add, take, take_along_dim)
from .ops.search import argwhere, bincount, bucketize, isin, searchsorted, unique
# the activations and vision functions torch also has at the top level
from .activations import celu, hardshrink, prelu, selu, threshold
from .functional import celu_, pairwise_distance, relu_, rrelu, rrelu_, selu_, threshold_
from .padding import constant_pad_nd
from .vision import pixel_shuffle, pixel_unshuffle
# F's ops under torch's top-level names: the same signatures ...
from .convolution import conv1d, conv2d
from .convolution_3d import conv3d, conv_transpose3d
from .convolution_more import (adaptive_avg_pool1d, bilinear, channel_shuffle,
                               conv_transpose1d, conv_transpose2d)
from .functional import cosine_similarity
from .ops.arrange import split_with_sizes
# ... and torch's native argument orders (torch_functional.py)
from .torch_functional import (adaptive_max_pool1d, affine_grid_generator, alpha_dropout,
                               alpha_dropout_, as_strided_, batch_norm,
                               binary_cross_entropy_with_logits, chain_matmul, conj_physical_,
                               conv_tbc, cosine_embedding_loss, ctc_loss, dropout, dropout_,
                               embedding, embedding_renorm_, feature_alpha_dropout,
                               feature_alpha_dropout_, feature_dropout, feature_dropout_,
                               frobenius_norm, group_norm, hinge_embedding_loss, instance_norm,
                               kl_div, layer_norm, margin_ranking_loss, max_pool1d,
                               max_pool1d_with_indices, max_pool2d, max_pool3d,
                               nuclear_norm, poisson_nll_loss, rms_norm, select,
                               triplet_margin_loss)
from .nn.weight_norm import norm_except_dim         # weight normalization's norm
from .torch_functional import avg_pool1d
# torch's native norms, which return their statistics (native_norms.py)
from .native_norms import _native_batch_norm_legit as _native_batch_norm_legit
from .native_norms import _softmax_backward_data as _softmax_backward_data
from .native_norms import (batch_norm_backward_elemt, batch_norm_backward_reduce,
                           batch_norm_elemt, batch_norm_gather_stats,
                           batch_norm_gather_stats_with_counts, batch_norm_stats)
from .native_norms import (batch_norm_update_stats, native_batch_norm, native_channel_shuffle,
                           native_dropout, native_dropout_backward, native_group_norm,
                           native_layer_norm, native_norm)
# torch.stft/istft (and the Tensor methods), histogramdd, the low-rank SVD and PCA, and
# tensors over other libraries' memory (buffers, DLPack)
from .spectral import istft, stft
from .ops.histogramdd import histogramdd
from .lowrank import pca_lowrank, svd_lowrank
from .ops.interchange import from_dlpack, frombuffer, to_dlpack
from .vision_grid import grid_sampler, grid_sampler_2d, grid_sampler_3d
from .printing import get_printoptions, set_printoptions
# torch.linalg (linalg.py) and torch.fft (fft.py); torch.distributions on first use (end of file)
from . import fft, linalg
from .ops.decompositions import (cholesky, det, inverse, logdet, matrix_exp, matrix_power,
                                 pinverse, qr, slogdet, svd)
from .ops.factorizations import (cholesky_inverse, cholesky_solve, lu, lu_solve, lu_unpack,
                                 triangular_solve)
from .ops.tensor_algebra import geqrf, orgqr, ormqr, torch_vander as vander
# torch.* utilities, creation and math functions (ops/torch_more.py, torch_misc.py)
from .ops.torch_more import (broadcast_shapes, can_cast, digamma, fill, frexp, gcd, heaviside,
                             i0, igamma, igammac, lcm, ldexp, lgamma, mvlgamma, nextafter,
                             polygamma, promote_types, renorm, result_type, rsub)
from .ops.torch_more import detach, is_floating_point, numel   # torch's input= (not methods)
from .ops.torch_more import (abs_, acos_, acosh_, arccos_, arccosh_, arcsin_, arcsinh_,
                             arctan_, arctanh_, asin_, asinh_, atan_, atanh_, ceil_, clamp_,
                             clamp_max_, clamp_min_, clip_, cos_, cosh_, deg2rad_, detach_,
                             erf_, erfc_, exp2_, exp_, expm1_, fill_, fix_, floor_, frac_,
                             gcd_, i0_, lcm_, ldexp_, log10_, log1p_, log2_, log_, logit_,
                             nan_to_num_, neg_, negative_, rad2deg_, reciprocal_, round_,
                             rsqrt_, sigmoid_, sin_, sinc_, sinh_, sqrt_, square_, tan_,
                             tanh_, trunc_, xlogy_, zero_)
from .ops.statistics import (corrcoef, cov, cumulative_trapezoid, histc, histogram, nanmedian,
                             nanquantile, quantile, trapezoid, trapz)
from .ops.statistics import gradient
from .ops.creation import empty_permuted
from .ops.creation import (asarray, bartlett_window, blackman_window, block_diag,
                           cartesian_prod, combinations, concat, empty_strided,
                           hamming_window, hann_window, kaiser_window, logspace, range,
                           scalar_tensor, tril_indices, triu_indices, unravel_index)
from .torch_misc import (are_deterministic_algorithms_enabled, compile, get_default_device,
                         get_deterministic_debug_mode, get_float32_matmul_precision,
                         get_num_interop_threads, get_num_threads, is_anomaly_check_nan_enabled,
                         is_anomaly_enabled, is_deterministic_algorithms_warn_only_enabled,
                         is_inference, is_inference_mode_enabled, is_warn_always_enabled,
                         set_anomaly_enabled, set_default_device, set_default_tensor_type,
                         set_deterministic_debug_mode,
                         set_float32_matmul_precision, set_flush_denormal,
                         set_num_interop_threads, set_num_threads, set_warn_always,
                         typename, use_deterministic_algorithms)
# the in-place and indexing Tensor methods (ops/tensor_more.py)
from .ops.tensor_more import (addbmm, addmv_, addr, adjoint, as_strided, bitwise_left_shift,
                              bitwise_right_shift, chalf, is_conj, is_neg, narrow_copy,
                              resolve_conj, resolve_neg, unique_consecutive)
from .ops.view_copies import alias_copy, as_strided_copy, diagonal_copy, expand_copy
from .ops.view_copies import (detach_copy, select_copy, slice_copy, split_copy,
                              view_as_complex_copy, view_as_real_copy)
from .ops.segments import segment_reduce
from .ops.tensor_rest import eig, hash_tensor, lstsq, matrix_rank, slice_inverse, solve, symeig
from .torch_misc import (compiled_with_cxx11_abi, has_lapack, has_mkl, has_openmp,
                         has_spectral, init_num_threads, is_distributed, is_vulkan_available)
from .amp import GradScaler      # torch.GradScaler is torch.amp.GradScaler
from . import overrides     # torch.overrides: the __torch_function__ helpers
from .accelerator import Event, Stream      # torch.Stream, torch.Event (CPU build)
from .ops.legacy_storages import STORAGES as _STORAGES      # FloatStorage, LongStorage, ...
from .overrides import DisableTorchFunction, DisableTorchFunctionSubclass
from .amp import (autocast_decrement_nesting, autocast_increment_nesting,
                  clear_autocast_cache, get_autocast_cpu_dtype, get_autocast_gpu_dtype,
                  get_autocast_ipu_dtype, get_autocast_xla_dtype, is_autocast_cache_enabled,
                  is_autocast_cpu_enabled, is_autocast_ipu_enabled, is_autocast_xla_enabled,
                  set_autocast_cache_enabled, set_autocast_cpu_dtype, set_autocast_cpu_enabled,
                  set_autocast_dtype, set_autocast_enabled, set_autocast_gpu_dtype,
                  set_autocast_ipu_dtype, set_autocast_ipu_enabled, set_autocast_xla_dtype,
                  set_autocast_xla_enabled)
from .ops.view_copies import (permute_copy, split_with_sizes_copy, squeeze_copy, t_copy,
                              transpose_copy, unbind_copy, unfold_copy, unsqueeze_copy,
                              view_copy)
from .ops.index_writes import as_strided_scatter
from .ops.index_writes import (diagonal_scatter, index_put, index_put_, index_reduce,
                               masked_scatter, put, scatter_reduce, select_scatter,
                               slice_scatter)
from .tensor import Size, Tensor, tensor
from .ops import numpy_names as _numpy_names
from .ops import out_arguments as _out_arguments
# torch.sparse, sparse_coo_tensor, spmm, Tensor.to_sparse/to_dense: on dense tensors (sparse.py)
from . import sparse
from .sparse import sparse_coo_tensor, spmm
# the memory behind a tensor: layouts, storages (ops/storage.py); torch.* names of a few ops
from .ops.storage import (TypedStorage, UntypedStorage, is_storage, jagged, layout, sparse_bsc,
                          sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided)
# memory formats (ops/storage.py; read and changed by ops/memory_formats.py)
from .ops.storage import (channels_last, channels_last_3d, contiguous_format, memory_format,
                          preserve_format)
from .ops.storage import resize_as_          # torch.resize_as_, also a Tensor method
from .ops.storage import contiguous_format as legacy_contiguous_format   # torch's alias
from .ops import storage            # torch.storage: UntypedStorage, TypedStorage
from .ops.arrange import unsafe_chunk, unsafe_split, unsafe_split_with_sizes
from .ops.complex import conj_physical
from .ops.logical import nonzero_static
# torch's legacy type classes: mg.FloatTensor(2, 3), isinstance(t, mg.LongTensor) (ops/protocol.py)
from .ops.protocol import LEGACY_TYPES as _LEGACY_TYPES
from .dtypes import TORCH_ALIASES as _ALIASES, TORCH_DTYPE_NAMES as _DTYPE_NAMES
from .dtypes import torch_dtype as _torch_dtype
(BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,
 IntTensor, LongTensor, ShortTensor) = (_LEGACY_TYPES[name] for name in (
    "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
    "HalfTensor", "IntTensor", "LongTensor", "ShortTensor"))

# the public dtypes (mg.float32, mg.long, ...) are torch's dtype objects (dtypes.dtype): they
# print as torch's and are their NumPy dtypes to NumPy; the package's own code keeps NumPy's
globals().update(_DTYPE_NAMES)
globals().update({alias: _torch_dtype(numpy_dtype) for alias, numpy_dtype in _ALIASES.items()})

# PyTorch's torch.autograd.gradcheck: the finite-difference check lives in checks/, above
# the engine, so the package puts it under the autograd name
autograd.gradcheck = _torch_gradcheck
autograd.gradgradcheck = _torch_gradgradcheck

clone = Tensor.clone


__all__ = ["Function", "Generator", "GradcheckError", "GraphStats", "MemoryTimeline", "Size",
           "Tensor",
           "amax", "amin", "aminmax", "arange", "argmax", "argmin", "argsort", "bernoulli",
           "bfloat16", "bool",
           "capture", "cat",
           "chunk", "clamp", "compare", "concatenate", "cpu_kernels",
           "default_generator", "double", "empty",
           "enable_grad", "exp", "finfo", "flatten", "float", "float16", "float32", "float64",
           "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
           "from_numpy", "full", "gather", "get_cpu_kernels", "get_default_dtype", "get_norm_impl",
           "get_printoptions", "get_rng_state",
           "grad",
           "gradcheck", "gradgradcheck", "graph_stats", "half", "iinfo", "index_select",
           "inference_mode",
           "initial_seed",
           "int", "int8", "int16", "int32", "int64", "is_floating_point", "is_grad_enabled",
           "jacobian", "kthvalue", "linspace", "load", "log", "log_softmax", "long", "manual_seed",
           "masked_fill",
           "matmul", "max", "maximum", "mean", "median", "memory_timeline", "min", "minimum",
           "mode", "multinomial", "nn",
           "no_grad", "norm", "norm_impl", "normal", "numel", "ones", "ones_like", "optim", "outer",
           "serialization", "func",
           "permute", "poisson", "pow", "precision_report", "rand",
           "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm",
           "relu", "reshape", "return_types", "rsqrt", "save", "seed", "set_cpu_kernels",
           "set_default_dtype",
           "set_printoptions",
           "set_grad_enabled", "set_rng_state", "short",
           "sigmoid", "softmax", "sort", "split", "sqrt", "squeeze", "stack", "std", "sum",
           "tanh", "tensor", "topk", "transpose", "tril", "triu", "uint8", "unsqueeze", "utils",
           "ao", "quantization",
           "var", "where", "zeros", "zeros_like",
           # ops/pointwise.py, ops/logical.py
           "all", "allclose", "any", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
           "ceil", "clamp_max", "clamp_min", "cos", "cumprod", "cumsum", "diff", "eq", "equal",
           "expm1", "floor", "floor_divide", "fmod", "frac", "ge", "gt", "isclose", "isfinite",
           "isinf", "isnan", "le", "log10", "log1p", "log2", "logical_and", "logical_not",
           "logical_or", "logical_xor", "lt", "ne", "nonzero", "prod", "reciprocal",
           "remainder", "round", "sin", "trunc",
           # ops/special.py, and the unary functions of ops/pointwise.py and ops/elementwise.py
           "abs", "absolute", "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh",
           "arctan", "arctanh", "asin", "asinh", "atan", "atanh", "clip", "cosh",
           "deg2rad", "erf", "erfc", "erfinv", "exp2", "fix", "logit", "nan_to_num",
           "neg", "negative", "rad2deg", "sgn", "sign", "signbit", "sinc", "sinh",
           "square", "tan",
           # ops/binary.py, ops/ternary.py, ops/logical.py: arithmetic by name
           "add", "addcdiv", "addcmul", "arctan2", "atan2", "copysign", "div", "divide",
           "float_power", "fmax", "fmin", "greater", "greater_equal", "hypot", "lerp", "less",
           "less_equal", "logaddexp", "logaddexp2", "mul", "multiply", "not_equal", "sub",
           "diagflat", "ger", "isneginf", "isposinf", "isreal", "msort", "positive", "vdot",
           "subtract", "true_divide", "xlogy",
           # ops/reductions.py, ops/arrange.py, ops/products.py, ops/indexing.py, ops/search.py
           "argwhere", "atleast_1d", "atleast_2d", "atleast_3d", "bincount", "broadcast_tensors",
           "broadcast_to", "bucketize", "cdist", "clone", "column_stack", "count_nonzero",
           "cross", "cummax", "cummin", "detach", "diag", "diag_embed", "diagonal", "dist",
           "dsplit", "dstack", "fliplr", "flipud", "hsplit", "hstack", "index_add", "index_copy",
           "index_fill", "inner", "isin", "kron", "logcumsumexp", "logsumexp", "masked_select",
           "pdist",
           "nanmean", "nansum", "rot90", "row_stack", "scatter", "scatter_add", "searchsorted",
           "std_mean", "swapaxes", "swapdims", "t", "take", "take_along_dim", "tensor_split",
           "tensordot", "tile",
           "trace", "unique", "var_mean", "vsplit", "vstack",
           # activations.py, functional.py, vision.py
           "celu", "celu_", "hardshrink", "pairwise_distance", "pixel_shuffle",
           "pixel_unshuffle", "prelu", "relu_", "rrelu", "rrelu_", "selu", "selu_", "threshold",
           "threshold_",
           # ops/shape.py, ops/linalg.py, factories.py, backend.py, cuda.py
           "addmm", "addmv", "amp", "as_tensor", "autocast", "backends", "dtype", "meshgrid",
           "baddbmm", "bmm", "cuda", "device", "dot",
           "einsum", "empty_like", "eye", "flip", "full_like", "is_tensor", "mm",
           "moveaxis", "movedim", "mv", "narrow", "ravel", "repeat_interleave", "roll",
           "unbind", "unflatten",
           # ops/complex.py, dtypes.py: complex tensors
           "angle", "cdouble", "cfloat", "complex", "complex64", "complex128", "conj", "imag",
           "is_complex", "polar", "real", "view_as_complex", "view_as_real"]
__all__ += ["addbmm", "addmv_", "addr", "adjoint", "as_strided", "bitwise_left_shift",
            "bitwise_right_shift", "chalf", "diagonal_scatter", "index_put", "index_put_",
            "index_reduce", "is_conj", "is_neg", "masked_scatter", "narrow_copy", "put",
            "resolve_conj", "resolve_neg", "scatter_reduce", "select_scatter", "slice_scatter",
            "unique_consecutive"]
__all__ += ["binomial", "distributions", "fft", "linalg", "cholesky", "det", "inverse", "logdet",
            "matrix_exp", "matrix_power",
            "pinverse", "qr", "slogdet", "svd"]
__all__ += ["cholesky_inverse", "cholesky_solve", "igamma", "igammac", "lu", "lu_solve",
            "lu_unpack", "triangular_solve", "vander", "geqrf", "orgqr", "ormqr"]
__all__ += ["abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
            "arctanh_", "are_deterministic_algorithms_enabled", "asarray", "asin_", "asinh_",
            "atan_", "atanh_", "bartlett_window", "blackman_window", "block_diag",
            "broadcast_shapes", "can_cast", "cartesian_prod", "ceil_", "clamp_", "clamp_max_",
            "clamp_min_", "clip_", "combinations", "compile", "concat", "corrcoef", "cos_",
            "cosh_", "cov", "cumulative_trapezoid", "deg2rad_", "detach_", "digamma",
            "empty_strided", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill", "fill_", "fix_",
            "floor_", "frac_", "frexp", "gcd", "gcd_", "get_default_device",
            "get_deterministic_debug_mode", "get_float32_matmul_precision",
            "get_num_interop_threads", "get_num_threads", "hamming_window", "hann_window",
            "heaviside", "histc", "histogram", "i0", "i0_", "is_anomaly_check_nan_enabled",
            "is_anomaly_enabled", "is_deterministic_algorithms_warn_only_enabled",
            "is_inference", "is_inference_mode_enabled", "is_warn_always_enabled",
            "kaiser_window", "lcm",
            "lcm_", "ldexp", "ldexp_", "lgamma", "log10_", "log1p_", "log2_", "log_", "logit_",
            "logspace", "mvlgamma", "nan_to_num_", "nanmedian", "nanquantile", "neg_",
            "negative_", "nextafter", "polygamma", "promote_types", "quantile", "rad2deg_",
            "range", "reciprocal_", "renorm", "result_type", "round_", "rsqrt_", "rsub",
            "scalar_tensor", "set_anomaly_enabled", "set_default_device",
            "set_default_tensor_type", "set_deterministic_debug_mode",
            "set_float32_matmul_precision", "set_flush_denormal", "set_num_interop_threads",
            "set_num_threads",
            "set_warn_always", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
            "tanh_", "trapezoid", "trapz", "tril_indices", "triu_indices", "trunc_",
            "unravel_index", "use_deterministic_algorithms", "xlogy_", "zero_"]
__all__ += ["cpu", "distributed", "is_nonzero", "jit", "random", "special", "testing"]
__all__ += ["resize_as_", "typename"]
__all__ += ["permute_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
            "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy"]
__all__ += ["alias_copy", "as_strided_copy", "as_strided_scatter", "constant_pad_nd",
            "diagonal_copy", "empty_permuted", "expand_copy", "gradient", "grid_sampler",
            "grid_sampler_2d", "grid_sampler_3d"]
__all__ += ["profiler"]
__all__ += ["signal"]
__all__ += ["vmap"]
__all__ += ["channels_last", "channels_last_3d", "contiguous_format", "memory_format",
            "preserve_format"]
__all__ += ["TypedStorage", "UntypedStorage", "conj_physical", "jagged", "layout",
            "nonzero_static", "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor",
            "DoubleTensor", "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor",
            "is_storage",
            "sparse_bsc", "sparse_bsr", "sparse_coo", "sparse_csc",
            "sparse_csr", "strided", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"]
__all__ += ["sparse", "sparse_coo_tensor", "spmm"]
# F's ops under torch's top-level names (torch_functional.py and F's modules)
__all__ += ["adaptive_avg_pool1d", "bilinear", "channel_shuffle", "conv1d", "conv2d", "conv3d",
            "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_similarity",
            "split_with_sizes"]
__all__ += ["from_dlpack", "frombuffer", "histogramdd", "istft", "pca_lowrank", "stft",
            "svd_lowrank", "to_dlpack"]
__all__ += ["adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout",
            "alpha_dropout_", "as_strided_", "avg_pool1d", "batch_norm",
            "binary_cross_entropy_with_logits", "chain_matmul", "conj_physical_",
            "conv_tbc", "cosine_embedding_loss", "ctc_loss", "dropout", "dropout_",
            "embedding", "embedding_renorm_", "feature_alpha_dropout",
            "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
            "frobenius_norm", "group_norm", "hinge_embedding_loss", "instance_norm",
            "kl_div", "layer_norm", "margin_ranking_loss", "max_pool1d",
            "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "norm_except_dim",
            "nuclear_norm", "poisson_nll_loss", "rms_norm", "select",
            "triplet_margin_loss"]

# torch's out= of the top-level functions that take one (ops/out_arguments.py)
_out_arguments.install(globals(), vars(linalg), (vars(special),), {"special": vars(special)})
# torch's NumPy spellings (axis=, keepdims=, x= for input, x2= for other) where the functions'
# own signatures lack them: after out=, so that a call's names are torch's before out= reads
_numpy_names.install(globals(), Tensor, (vars(special), vars(linalg)))
DeviceObjType = device  # torch's name for the device type in annotations
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan   # torch's constants
newaxis = None                     # torch.newaxis, NumPy's: x[:, mg.newaxis]
# torch.distributions (distributions/) and the names it serves, torch.binomial and torch's
# private samplers under Gamma and Dirichlet (distributions/gamma_sampler.py), are imported on
# first use: the package is a tenth of this one's import time, which every CLI command pays
_FROM_DISTRIBUTIONS = {"binomial": ("binomial", "binomial"),
                       "_dirichlet_grad": ("gamma_sampler", "dirichlet_grad"),
                       "_sample_dirichlet": ("gamma_sampler", "sample_dirichlet"),
                       "_standard_gamma": ("gamma_sampler", "standard_gamma"),
                       "_standard_gamma_grad": ("gamma_sampler", "standard_gamma_grad")}


globals().update({name: getattr(_foreach, name) for name in _foreach.__all__})


def __getattr__(name):
    if name == "distributions":
        return _importlib.import_module(".distributions", __name__)
    if name in _FROM_DISTRIBUTIONS:
        module, attribute = _FROM_DISTRIBUTIONS[name]
        value = getattr(_importlib.import_module(f".distributions.{module}", __name__),
                        attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), "distributions", *_FROM_DISTRIBUTIONS})


__all__ += ["__future__", "compiler", "_dynamo", "_inductor", "get_autocast_dtype",
            "is_autocast_enabled", "version"]
__version__ = version.__version__

quantization = ao.quantization        # torch.quantization, torch.ao.quantization's old name
_sys.modules[__name__ + ".quantization"] = quantization
_sys.modules[__name__ + ".storage"] = storage
__all__ += ["OutOfMemoryError", "accelerator", "get_device", "get_device_module",
            "is_same_size", "is_signed", "mps", "multiprocessing", "newaxis", "storage",
            "uint16", "uint32", "uint64", "xpu"]
__all__ += ["batch_norm_backward_elemt", "batch_norm_backward_reduce", "batch_norm_elemt",
            "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
            "batch_norm_stats", "batch_norm_update_stats", "native_batch_norm",
            "native_channel_shuffle", "native_dropout", "native_dropout_backward",
            "native_group_norm", "native_layer_norm", "native_norm"]

# autocast's function family (amp.py), torch.* vocabulary composed of the graph's ops
# (ops/view_copies.py, ops/segments.py; ops/tensor_rest.py's removed linalg names), the
# build's flags (torch_misc.py)
__all__ += ["GradScaler", "autocast_decrement_nesting", "autocast_increment_nesting",
            "clear_autocast_cache", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
            "get_autocast_ipu_dtype", "get_autocast_xla_dtype",
            "is_autocast_cache_enabled", "is_autocast_cpu_enabled",
            "is_autocast_ipu_enabled", "is_autocast_xla_enabled",
            "set_autocast_cache_enabled", "set_autocast_cpu_dtype",
            "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled",
            "set_autocast_gpu_dtype", "set_autocast_ipu_dtype",
            "set_autocast_ipu_enabled", "set_autocast_xla_dtype",
            "set_autocast_xla_enabled"]
__all__ += ["detach_copy", "eig", "hash_tensor", "lstsq", "matrix_rank", "segment_reduce",
            "select_copy", "slice_copy", "slice_inverse", "solve", "split_copy", "symeig",
            "view_as_complex_copy", "view_as_real_copy"]
globals().update(_STORAGES)
Storage = _STORAGES["FloatStorage"]     # torch.Storage: FloatStorage's old name
__all__ += ["DisableTorchFunction", "DisableTorchFunctionSubclass", "Event", "Stream",
            "overrides", "Storage",
            *_STORAGES]
__all__ += ["compiled_with_cxx11_abi", "has_lapack", "has_mkl", "has_openmp", "has_spectral",
            "init_num_threads", "is_distributed", "is_vulkan_available",
            "legacy_contiguous_format"]
