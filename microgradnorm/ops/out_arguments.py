"""torch's ``out=`` for the top-level functions that take one (``mg.exp(x, out=y)``,
``mg.matmul(a, b, out=c)``, ``mg.max(x, 1, out=(values, indices))``,
``mg.linalg.inv(A, out=B)``, ``mg.special.i0e(x, out=y)``, ``mg.fft.rfft(x, out=z)``,
``mg.scatter_add(..., out=o)``, the ``*_copy`` views, ``split_with_sizes_copy``'s list of
outs): the result is computed as without ``out`` and written into
the given tensor (or each tensor of the given tuple), which is returned. ``add``, ``sub``,
``mul`` and ``div`` take ``out`` in their own signatures (``binary.write_out``); the
functions named here take it through one wrapper, put in the namespace once at import by
``install`` (the Tensor methods take no ``out``, as torch's).

Each ``out`` follows torch's rules, all checked before anything is written:

- its dtype, by the function's rule: ``CAST``, the result cast where torch's casting rule
  allows (not floating into integer: "result type Float can't be cast to the desired output
  type Long"); ``SAME``, the result's dtype exactly (``matmul``, ``clamp``, ``where``, the
  tuples of values and indices); ``DTYPE``, the result computed in ``out``'s dtype, as
  ``dtype=`` would (``sum``, ``prod``, ``cumsum``, ``cumprod``; a ``dtype=`` given must be
  ``out``'s); a complex ``out`` of a real ``std`` or ``var`` along some of the dims is
  torch's NotImplementedError (its kernel would run in ``out``'s dtype), and so is an
  integer or complex ``out`` of ``nanmean`` (``DTYPE``: its ``nansum`` runs in ``out``'s
  dtype) and a complex one of ``bernoulli`` (``CAST``, but its draws of 0 and 1 go into any
  real ``out``, integers included); ``FACTORY``, the factories' (``zeros``, ``arange``,
  ``rand``, ...): ``out``'s dtype and device are those of what is made (a ``dtype=`` given
  must be ``out``'s), so a random draw into ``out`` is the draw of ``out``'s dtype from the
  same generator state; ``FFT``, the transforms of ``mg.fft``: the result cast into ``out``
  as ``CAST`` (a complex128 ``out`` of a float32 input holds the complex64 transform
  widened, as torch's), but ``out`` must be complex where the transform's result is
  ("fft expects a complex output tensor, but got Float") and floating, half precision
  included, where it is real ("irfft expects a floating point output tensor"), torch's
  checks of ``out`` made before any other; ``ifft`` and ``ihfft`` of a real input take
  only the result's own dtype, as torch's ("Found dtype ComplexDouble but expected
  ComplexFloat");
- its shape: resized to the result's, silently where it has no elements, with torch's
  deprecation warning where it has some (a factory's silently; ``arange``'s and ``range``'s
  kept where it holds as many elements, with torch's warning of their count where not);
- no autograd: while grad mode is on, an input or ``out`` that requires grad is torch's
  RuntimeError ("functions with out=... arguments don't support automatic differentiation"),
  except for the ops torch gives no gradient (comparisons, ``argmax``, ``floor_divide``) and
  its compositions that take it (``linalg.norm``, ``diag``, ...: ``_NOT_DIFFERENTIABLE``)
  and ``split_with_sizes_copy``, whose ``out=`` kernel records nothing;
- an ``out`` that overlaps an input without being it is torch's RuntimeError (a reduction
  reads its input whole first, a transform computes its result before it writes: taken),
  and so is one that is an input of ``cat``, ``gather``, ``index_select``,
  ``masked_select``, ``kthvalue``, ``take_along_dim`` (``_NO_OVERLAP``), or an expanded one
  (its elements share memory);
- ``sum``, ``prod``, ``median`` over all elements and ``where(condition)`` (or of numbers)
  take no ``out``, as torch's overloads (TypeError).

The wrapper is compiled from ``fn``'s own parameters (``_same_signature``: a short ``def``
built from the signature's names only), so a call without ``out`` costs one call and one
test; ``inspect.signature`` and ``help()`` show ``out``, and each wrapper keeps ``fn``'s name,
doc and ``__wrapped__`` and pickles by reference under its namespace's name.

Each ``out`` written counts one version (``out._version``).
"""

import functools
import inspect
import math
import warnings

from .. import backend, dtypes
from ..autograd import is_grad_enabled, no_grad
from ..autograd.inference import refuse_write
from ..tensor import (InPlaceCastError, OverlapWriteError, Tensor, _can_cast,
                      check_no_partial_overlap, check_writable)
from .binary import write_out
from .numpy_names import user_stacklevel

CAST, SAME, DTYPE, FACTORY, FFT = "cast", "same", "dtype", "factory", "fft"

OUT_RULES = {
    CAST: (
        "exp", "log", "sin", "cos", "tan", "tanh", "sigmoid", "sqrt", "reciprocal", "rsqrt",
        "square", "erf", "erfc", "erfinv", "log1p", "expm1", "log2", "log10", "exp2", "asin",
        "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos",
        "arctan", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "sinc", "logit",
        "lgamma", "digamma", "i0", "angle", "logical_not", "maximum", "minimum", "pow",
        "remainder", "fmod", "atan2", "arctan2", "eq", "ne", "lt", "le", "gt", "ge",
        "greater", "greater_equal", "less", "less_equal", "not_equal", "logical_and",
        "logical_or", "logical_xor", "hypot", "copysign", "xlogy", "logaddexp", "logaddexp2",
        "fmax", "fmin", "nextafter", "floor_divide", "kron", "mean", "std", "var", "diff",
        "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
        "column_stack", "row_stack", "lerp", "addcmul", "addcdiv", "logsumexp", "outer",
        "ger", "addr", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
        "bitwise_right_shift", "gcd", "lcm", "cholesky", "geqrf", "igamma", "igammac",
        "mvlgamma", "polygamma", "bernoulli", "ldexp", "clamp_max", "clamp_min"),
    SAME: (
        "abs", "absolute", "neg", "negative", "floor", "ceil", "round", "trunc", "fix",
        "frac", "sign", "sgn", "nan_to_num", "msort", "tril", "triu", "diag", "amax", "amin",
        "argmax", "argmin", "logcumsumexp", "matmul", "mm", "bmm", "mv", "dot", "clamp",
        "clip", "where", "all", "any", "signbit", "isneginf", "isposinf", "max", "min",
        "sort", "topk", "kthvalue", "mode", "median", "nanmedian", "cummax", "cummin",
        "aminmax", "index_select", "gather", "masked_select",
        "take_along_dim", "inner", "addmm", "cross", "addbmm", "addmv", "baddbmm",
        "bitwise_not", "bucketize", "searchsorted", "complex", "polar", "conj_physical",
        "float_power", "frexp", "heaviside", "histc", "histogram", "inverse",
        "lu_unpack", "matrix_power", "quantile", "nanquantile", "narrow_copy", "nonzero",
        "norm", "ormqr", "renorm", "svd", "vdot", "softmax", "log_softmax", "multinomial",
        "take", "isin", "index_add", "index_copy", "index_reduce",
        "scatter", "scatter_add", "scatter_reduce", "slice_scatter", "tensordot", "qr",
        "alias_copy", "as_strided_copy", "diagonal_copy", "expand_copy", "permute_copy",
        "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy",
        "unfold_copy", "unsqueeze_copy", "view_copy"),
    DTYPE: ("sum", "prod", "cumsum", "cumprod", "nanmean", "nansum"),
    FACTORY: ("zeros", "ones", "full", "empty", "eye", "arange", "range", "linspace",
              "logspace", "rand", "randn", "randint", "randperm", "normal"),
}

LINALG_OUT = (
    "inv", "det", "slogdet", "solve", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals",
    "norm", "vector_norm", "matrix_norm", "cross", "vecdot", "multi_dot", "lu", "lu_factor",
    "lu_solve", "solve_triangular", "cholesky_ex", "inv_ex",
    "eig", "matrix_power", "matmul", "solve_ex", "lu_factor_ex")

# composed of other ops in torch: the result cast into out (``eigvals``' complex64 into a
# complex128 out, ``tensorsolve``'s float64 into a float32 one)
# torch.special's own functions (its aliases of top-level ones follow those): pointwise
SPECIAL_CAST = (
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "entr",
    "erfcx", "hermite_polynomial_h", "hermite_polynomial_he", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log_ndtr", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "ndtr", "ndtri",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "spherical_bessel_j0", "xlog1py", "zeta")

# torch.fft's transforms (fft.py installs them): complex results, then the real ones
FFT_COMPLEX = ("fft", "ifft", "rfft", "ihfft", "fft2", "ifft2", "rfft2", "ihfft2", "fftn",
               "ifftn", "rfftn", "ihfftn")
FFT_REAL = ("irfft", "hfft", "irfft2", "hfft2", "irfftn", "hfftn")

NAMESPACE_OUT = {"special": (SPECIAL_CAST, CAST), "fft": (FFT_COMPLEX + FFT_REAL, FFT)}

LINALG_CAST = ("pinv", "lstsq", "matrix_rank", "cond", "tensorinv", "householder_product",
               "tensorsolve", "eigvals")

# torch's ops without a derivative: an input that requires grad is taken with out=
_NOT_DIFFERENTIABLE = frozenset((
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "logical_not", "logical_and", "logical_or", "logical_xor", "argmax",
    "argmin", "floor_divide", "all", "any", "signbit", "isneginf", "isposinf", "bucketize",
    "searchsorted", "heaviside", "histc", "histogram", "multinomial", "conj_physical",
    "quantile", "nanquantile", "softmax", "log_softmax",
    # and torch's compositions of other ops, whose out= records nothing either
    "diag", "inner", "linalg.norm", "linalg.matrix_norm", "linalg.matrix_power",
    "linalg.matrix_rank", "linalg.cond", "linalg.tensorinv", "linalg.eigvals",
    # and torch's split_with_sizes_copy, whose out= kernel has no autograd check
    "split_with_sizes_copy"))

_REDUCTIONS = frozenset(("sum", "prod", "mean", "std", "var", "amax", "amin", "argmax",
                         "argmin", "all", "any", "logsumexp"))

# torch's kernels that refuse an out which is one of their inputs (any overlap, not only a
# partial one): they read the input while they write out
_NO_OVERLAP = frozenset(("cat", "concat", "concatenate", "gather", "index_select",
                         "masked_select", "kthvalue", "take_along_dim"))

# torch's kernels that resize out themselves, without the deprecation warning
_RESIZED_SILENTLY = frozenset(("addbmm", "narrow_copy", "bernoulli", "multinomial", "linspace",
                               "logspace"))

_C_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def accept_out(fn, name, rule):
    """``fn`` taking torch's keyword ``out=``: a tensor, or a tuple (list) of tensors where
    ``fn`` returns a tuple; None is ``fn``'s own call.

    Args:
        fn: the function, whose result is a Tensor or a tuple of Tensors.
        name: its torch name, for the errors ("exp").
        rule: how ``out``'s dtype is read: ``CAST``, ``SAME``, ``DTYPE``, ``FACTORY`` or
            ``FFT`` (module doc).

    Example:
        >>> y = mg.empty(0)
        >>> mg.exp(mg.zeros(2), out=y)               # y is tensor([1., 1.])
    """
    with_out = _same_signature(fn, name, rule)
    if with_out is None:                    # no signature to copy: a generic wrapper
        def with_out(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            return _call_with_out(fn, name, rule, args, kwargs, out)
    with_out = functools.wraps(fn)(with_out)
    try:                                    # help() and inspect.signature show ``out``
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return with_out
    at = len(parameters) - any(p.kind is p.VAR_KEYWORD for p in parameters)
    if all(p.name != "out" for p in parameters):
        parameters.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY,
                                                default=None))
        with_out.__signature__ = inspect.Signature(parameters)
    return with_out


def _same_signature(fn, name, rule):
    # a wrapper with fn's own parameters and a keyword ``out``, compiled once, so the call
    # without ``out`` costs one call and one test, not the packing of *args and **kwargs
    if hasattr(fn, "__wrapped__"):         # a wrapper's own (*args, **kwargs) is its signature
        return None
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    parameters = [p for p in parameters      # fn's own keyword out (NumPy's, None): ours
                  if not (p.name == "out" and p.kind is p.KEYWORD_ONLY and p.default is None)]
    if any(p.name in ("out", "fn", "name", "rule", "call", "keywords") for p in parameters):
        return None
    heads, passed, keywords, star = [], [], [], False
    for p in parameters:
        if p.kind is p.POSITIONAL_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD:
            heads.append(p.name)
            passed.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            heads.append(f"*{p.name}")
            passed.append(f"*{p.name}")
            star = True
        elif star is not None:      # the keywords passed on as given: naming each one in
            # the call to fn costs more than the dict of those given (zeros' six)
            heads.append(("" if star else "*, out, ") + "**keywords")
            keywords.append("**keywords")
            star = None
    if star is not None:
        heads.append("out" if star else "*, out")
    elif "*, out" not in heads[-1]:
        heads.insert(-1, "out")
    call = ", ".join(passed + [k if k.startswith("**") else f"{k}={k}" for k in keywords])
    kwargs = ", ".join(k if k.startswith("**") else f"{k!r}: {k}" for k in keywords)
    source = (f"def with_out({', '.join(heads)}):\n"
              f"    if out is None:\n"
              f"        return fn({call})\n"
              f"    return call(fn, name, rule, ({', '.join(passed)}{',' if passed else ''}), "
              f"{{{kwargs}}}, out)\n")
    scope = {"fn": fn, "name": name, "rule": rule, "call": _call_with_out}
    exec(compile(source, f"<out= of {name}>", "exec"), scope)       # noqa: S102
    with_out = scope["with_out"]
    with_out.__defaults__ = tuple(p.default for p in parameters if p.default is not p.empty
                                  and p.kind is not p.KEYWORD_ONLY) or None
    with_out.__kwdefaults__ = {"out": None}     # (fn's keyword-only ones: fn's own defaults)
    return with_out


def _span(array, shape=None):
    # the bytes [low, high) of array's memory; of the C-ordered array of ``shape`` that
    # resizing array gives from its first element, where ``shape`` is another
    start = backend.data_address(array)
    if shape is not None and tuple(shape) != array.shape:
        return start, start + math.prod(shape) * array.itemsize
    low = sum(s * (n - 1) for s, n in zip(array.strides, array.shape) if s < 0)
    high = sum(s * (n - 1) for s, n in zip(array.strides, array.shape) if s > 0)
    return start + low, start + high + array.itemsize


def _overlaps_resized(out, shape, operand):
    """Whether ``out``, once resized to ``shape`` as torch resizes it (within its memory,
    from its first element), shares memory with the array ``operand``: torch's check, made
    after the resize, of the kernels that refuse any overlap (``_NO_OVERLAP``)."""
    if not operand.size or not math.prod(shape) or type(out) is not type(operand) \
            or backend.memory_owner(out) is not backend.memory_owner(operand):
        return False
    (a, b), (c, d) = _span(out, shape), _span(operand)
    return a < d and c < b


def _tensors(values):
    for value in values:
        if isinstance(value, Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _tensors(value)


def _partial(args, kwargs):
    # whether a reduction's dim leaves some of its input's dims (std, var: not all of them)
    dims = (kwargs.get("dim"), args[1] if len(args) > 1 else None, kwargs.get("axis"))
    dim = next((d for d in map(lambda d: getattr(d, "value", d), dims)  # (a Default's value)
                if d is not None), None)
    if dim is None or isinstance(dim, bool):                # (std(x, True): unbiased)
        return False
    ndim = max((args[0] if args else kwargs["input"]).ndim, 1)
    dims = {d % ndim for d in ((dim,) if isinstance(dim, int) else dim)}
    return len(dims) < ndim


def _no_dim(dim):
    # left out (None, or the sentinel of the functions whose dim torch types as an int)
    return dim is None or dim is dtypes.NOT_GIVEN


def _call_with_out(fn, name, rule, args, kwargs, out):
    outs = tuple(out) if isinstance(out, (list, tuple)) else (out,)
    for each in outs:
        if not isinstance(each, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor or a tuple of Tensors, "
                            f"not {type(each).__name__}")
    for each in outs:                   # an inference tensor outside its mode: none written
        refuse_write(each)
    if rule == FFT and isinstance(out, Tensor):     # torch checks it before all else
        _check_fft_kind(name, out)
    operands = tuple(_tensors((*args, *kwargs.values())))
    dim = getattr(args[1], "value", args[1]) if len(args) > 1 else None  # (a Default's value)
    if name in ("sum", "prod", "median", "nanmedian") and _no_dim(dim) \
            and _no_dim(kwargs.get("dim")):
        raise TypeError(f"{name}(): out= needs a dim (the overload over all elements takes "
                        "no out)")
    if name == "where" and not all(isinstance(a, Tensor) for a in (*args[1:3], None)[:2]):
        raise TypeError("where(): out= needs input and other as Tensors (where(condition) and "
                        "the overloads of numbers take no out)")
    if name not in _NOT_DIFFERENTIABLE and is_grad_enabled() \
            and any(t.requires_grad for t in (*operands, *outs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires "
                           "grad.")
    for each in outs:           # an expanded out, refused before it is resized, as torch's
        check_writable(each._array)
    computed_first = name in _REDUCTIONS or rule == FFT   # read whole before out is written
    for each in outs if not computed_first else ():
        for operand in operands:
            check_no_partial_overlap(each._array, operand)
    # (normal's overloads of a tensor mean or std: CAST; linspace's of tensor ends: a factory)
    factory = rule == FACTORY and not (operands and name == "normal")
    if factory:
        kwargs = _factory_dtype(name, kwargs, outs[0])
    if name in ("nanmean", "nansum") and not dtypes.is_floating(outs[0].dtype) \
            or name == "bernoulli" and dtypes.is_complex(outs[0].dtype) and args[0].numel():
        # torch's kernel runs in out's dtype (nansum's, the draw's), which it lacks for these
        raise NotImplementedError(f'"{"nansum" if name == "nanmean" else name}_cpu" not '
                                  f"implemented for '{dtypes.torch_name(outs[0].dtype)}'")
    if name == "bernoulli" and (args[1] if len(args) > 1 else kwargs.get("p")) is not None:
        raise TypeError("bernoulli(): out= needs p left out (the overload of a float p takes "
                        "no out)")
    if name == "nonzero" and kwargs.get("as_tuple"):
        raise TypeError("nonzero(): argument 'out' must be Tensor, not tuple (as_tuple=True "
                        "takes no out)")
    if name == "normal" and operands and not (dtypes.is_floating(outs[0].dtype)
                                              or dtypes.is_complex(outs[0].dtype)):
        raise NotImplementedError("\"normal_kernel_cpu\" not implemented for "
                                  f"'{dtypes.torch_name(outs[0].dtype)}'")
    if rule == FACTORY:         # normal's overloads of a tensor mean or std: drawn, then cast
        rule = SAME if factory else CAST
    elif rule == DTYPE and kwargs.get("dtype") is None and len(outs) == 1:
        kwargs = {**kwargs, "dtype": outs[0].dtype}
    elif rule == DTYPE:
        rule = SAME             # a dtype= given: out's must be it, as torch's
    elif rule == FFT:           # torch's ifft and ihfft of a real input: out of its dtype
        real = not dtypes.is_complex((args[0] if args else kwargs["input"]).dtype)
        rule = SAME if name in ("fft.ifft", "fft.ihfft") and real else CAST
    with no_grad():
        result = fn(*args, **kwargs)
    if name == "bernoulli":         # draws of 0 and 1, exact in any dtype: out's, as torch's
        result = result.to(outs[0].dtype)
    results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if rule == SAME and (name in ("max", "min") and not isinstance(result, tuple)
                         or name in ("clamp", "clip")
                         and any(isinstance(a, Tensor) for a in (*args[1:], *kwargs.values()))):
        rule = CAST             # torch's overloads of all elements, of tensor bounds: cast
    elif name == "lerp" and isinstance(args[2] if len(args) > 2 else kwargs.get("weight"),
                                       Tensor):
        rule = SAME             # and its overload of a tensor weight: the same dtype
    elif name == "linalg.matrix_power" and (args[1] if len(args) > 1 else kwargs.get("n")) \
            in (0, 1):
        rule = CAST             # torch's copy of the identity or of the input: cast
    if isinstance(out, (list, tuple)) != isinstance(result, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be "
                        + (f"a tuple of {len(results)} Tensors" if isinstance(result, tuple)
                           else "Tensor") + f", not {type(out).__name__}")
    if isinstance(result, list) and len(outs) != len(results):     # a list of pieces
        raise RuntimeError(f"{name}_out expected an out= argument of size {len(results)}, "
                           f"got size {len(outs)}")
    if len(outs) != len(results):
        raise TypeError(f"{name}(): expected tuple of {len(results)} elements but got "
                        f"{len(outs)}")
    for value, each in zip(results, outs):          # every out checked before any write
        if name in _NO_OVERLAP and any(_overlaps_resized(each._array, value.shape, t._array)
                                       for t in operands):
            raise OverlapWriteError(
                f"{name}(): unsupported operation: out shares memory with an input of the "
                "call (some elements of the input tensor and the written-to tensor refer to "
                "a single memory location); pass a new tensor or clone() the input")
        if name in ("std", "var") and dtypes.is_complex(each.dtype) \
                and not dtypes.is_complex(value.dtype) and _partial(args, kwargs):
            # torch's kernel along some dims runs in out's dtype (over all it casts)
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{dtypes.torch_name(each.dtype)}' (out's dtype)")
        if rule == SAME and value.dtype != each.dtype and name.startswith("fft."):
            raise RuntimeError(f"{name}(): Found dtype {dtypes.torch_name(each.dtype)} but "
                               f"expected {dtypes.torch_name(value.dtype)}")
        if rule == SAME and value.dtype != each.dtype:
            raise RuntimeError(f"{name}(): Expected out tensor to have dtype "
                               f"{_C_NAMES.get(value.dtype.name, value.dtype)}, but got "
                               f"{_C_NAMES.get(each.dtype.name, each.dtype)} instead")
        if not _can_cast(value.dtype, each.dtype):
            raise InPlaceCastError(
                f"{name}(): result type {dtypes.torch_name(value.dtype)} can't be cast to "
                f"the desired output type {dtypes.torch_name(each.dtype)}")
    with no_grad():                                 # (the check of grad made above)
        for value, each in zip(results, outs):
            if (factory or name in _RESIZED_SILENTLY) \
                    and tuple(value.shape) != tuple(each.shape):
                value = _factory_shape(name, value, each)
            write_out(name, () if computed_first else operands, each,
                      lambda value=value: value)
    if isinstance(result, list):
        return list(outs)
    if not isinstance(result, tuple):
        return out
    return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs)


def _check_fft_kind(name, out):
    """A transform's ``out`` complex where its result is, floating where it is real (torch's
    RuntimeError, naming the n-dim transform for the 2-dim ones, ``fftn`` for ``ifftn``)."""
    transform = name.removeprefix("fft.")
    torch_name = "fftn" if transform in ("fft2", "ifft2", "ifftn") else \
        transform[:-1] + "n" if transform.endswith("2") else transform
    if transform in FFT_REAL and not dtypes.is_floating(out.dtype):
        raise RuntimeError(f"{torch_name} expects a floating point output tensor, but got "
                           f"{dtypes.torch_name(out.dtype)}")
    if transform in FFT_COMPLEX and not dtypes.is_complex(out.dtype):
        raise RuntimeError(f"{torch_name} expects a complex output tensor, but got "
                           f"{dtypes.torch_name(out.dtype)}")


def _factory_dtype(name, kwargs, out):
    # a factory's out sets the dtype and the device of what it makes; a dtype= given must be
    # out's (torch's RuntimeError)
    dtype = kwargs.get("dtype")
    if dtype is not None and dtypes.as_dtype(dtype) != out.dtype:
        raise RuntimeError(f"{name}(): dtype {dtypes.torch_name(dtypes.as_dtype(dtype))} does "
                           f"not match dtype of out parameter ({dtypes.torch_name(out.dtype)})")
    return {**kwargs, "dtype": out.dtype, "device": out.device}


def _factory_shape(name, value, out):
    """``value`` to write into a factory's ``out`` of another shape: torch's factories (and
    ``_RESIZED_SILENTLY``) resize ``out`` without the deprecation warning (their kernels
    resize it themselves); ``arange`` and ``range`` keep ``out``'s shape where it holds as
    many elements, and warn of the resize where it does not (their steps may round to one
    element more or less)."""
    if name in ("arange", "range") and out.numel() == value.numel():
        return value.reshape(out.shape)
    if name in ("arange", "range") and out.numel():
        warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is "
                      f"{out.numel()} which does not match the computed number of elements "
                      f"{value.numel()}. Note that this may occur as a result of rounding "
                      f"error. The out tensor will be resized to a tensor of shape "
                      f"{tuple(value.shape)}.", UserWarning, stacklevel=user_stacklevel())
    version = out._version_box[0]
    out.resize_(value.shape)                # (write_out counts the one write)
    out._version_box[0] = version
    return value


def install(namespace, linalg_namespace=None, alias_namespaces=(), others=None):
    """Wrap each function of ``OUT_RULES`` in ``namespace`` (a module's globals), each of
    ``LINALG_OUT`` in ``linalg_namespace`` (``mg.linalg``'s, the ``SAME`` rule) and, for
    each ``{prefix: namespace}`` of ``others``, the names ``NAMESPACE_OUT`` gives that prefix
    (``special``'s own functions; ``fft``'s transforms, which fft.py installs itself), by
    ``accept_out``; a name a namespace lacks is skipped.
    A name of ``alias_namespaces`` bound to a wrapped function (``special.expit``,
    ``sigmoid``) is bound to its wrapper too."""
    wrapped = {}                        # an alias stays the same function as its name
    for rule, names in OUT_RULES.items():
        for name in names:
            function = namespace.get(name)
            if callable(function):
                if id(function) not in wrapped:
                    wrapped[id(function)] = accept_out(function, name, rule)
                namespace[name] = wrapped[id(function)]
    made = []
    for name in LINALG_OUT + LINALG_CAST if linalg_namespace is not None else ():
        if callable(linalg_namespace.get(name)):
            made.append(accept_out(linalg_namespace[name], f"linalg.{name}",
                                   CAST if name in LINALG_CAST else SAME))
            linalg_namespace[name] = made[-1]
    for each in alias_namespaces:
        for name, function in list(each.items()):
            if callable(function) and id(function) in wrapped:
                each[name] = wrapped[id(function)]
    others = others or {}
    for prefix, space in others.items():
        names, rule = NAMESPACE_OUT[prefix]
        for name in names:
            function = space.get(name)
            if callable(function) and id(function) not in wrapped:
                made.append(accept_out(function, f"{prefix}.{name}", rule))
                space[name] = made[-1]
    for each in (namespace, linalg_namespace or {}, *others.values()):   # pickled by
        for function in set(wrapped.values()) | set(made):   # reference, under its name
            if each.get(function.__qualname__) is function and "__name__" in each:
                function.__module__ = each["__name__"]
