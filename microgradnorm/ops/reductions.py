"""Reductions: sum, mean, max/min (``x.max(dim)``: values and indices), amax/amin, aminmax,
median, var and std, argmax/argmin, norm (its node in ``vector_norm.py``), and softmax and
log_softmax from the primitives; then the rest of PyTorch's reductions: logsumexp,
var_mean/std_mean, count_nonzero, nansum/nanmean (and the scans cummax/cummin and
logcumsumexp, from ``scans.py``). ``dim``/``keepdim``, PyTorch's names, are accepted
everywhere; an empty tuple of dims reduces every dim, as torch's.

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods beside the
ones it lists itself."""

import builtins
import numbers
import warnings

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd import is_grad_enabled
from ..autograd.function import Function
from ..autograd.graph import node_alias
from ..dtypes import (as_dtype, check_number, get_default_dtype, is_floating, is_half, sortable,
                      torch_name, NOT_GIVEN as _NO_DIM, int_dim)
from . import elementwise, return_types
from .base import (ALL_DIMS, LAST_DIM, EmptyReductionError, check_not_bool, check_orderable,
                   check_reducible, check_tensor, constant, dim_alias, normalize_axis, reduce_sum,
                   reduced_size)
from .complex import imag, real
from .indexing import pick_along
from .scans import cummax, cummin, logcumsumexp  # noqa: F401  (mg.*, METHODS: scans.py)
from .numpy_names import numpy_dim
from .variance import StdFromVar, Var, mean_array
from .vector_norm import PNorm, norm_dtype, norm_order, nuclear_norm

METHODS = ("logsumexp", "count_nonzero", "nansum", "nanmean", "cummax", "cummin",
           "logcumsumexp")


def _expand_reduced(grad, shape, axis):
    # (reduced shape) -> (input shape): size 1 at the reduced axes, then broadcast
    axes = range(len(shape)) if axis is None else axis
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    return backend.array_module(grad).broadcast_to(grad.reshape(kept), shape)


class Sum(Function):
    """Sum (``Mean``: mean) over ``axis``; half precision accumulates in float32."""

    mean = False

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        ctx.shape, ctx.axis = x.shape, axis
        if ctx.function.mean:
            return mean_array(x, axis, keepdims)        # (variance.py: Var's mean too)
        return reduce_sum(x, axis, keepdims)

    @staticmethod
    def backward(ctx, grad):
        if ctx.function.mean:
            grad = grad / reduced_size(ctx.shape, ctx.axis)
        return _expand_reduced(grad, ctx.shape, ctx.axis)


class Mean(Sum):
    mean = True


# sum(dim) and mean(dim): torch's dim overloads, SumBackward1 and MeanBackward1 (of every
# element: SumBackward0, MeanBackward0, the ops' own names)
SumDims = node_alias(Sum, "Sum", "Backward1", alias="SumDims")
MeanDims = node_alias(Mean, "Mean", "Backward1", alias="MeanDims")


class Extreme(Function):
    """Maximum or minimum over ``axis``, values only; ties share the gradient evenly. A NaN
    result's gradient is NaN everywhere (``torch.amax``'s), or with ``nan_ties`` shared by
    the NaNs (``x.max()``, ``x.median()``: torch's evenly_distribute_backward)."""

    pick = None                     # the array method: "max" or "min"
    nan_ties = False

    @classmethod
    def reduce(cls, x, axis):
        """The result with the reduced dims kept (size 1)."""
        return getattr(x, cls.pick)(axis=axis, keepdims=True)

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        check_orderable(ctx.function.pick or "median", x)
        out = ctx.function.reduce(x, axis)
        returned = out if keepdims else out.reshape(()) if axis is None else out.squeeze(axis)
        # the output itself, to find the extremes: an in-place change of it is caught
        ctx.save_for_backward(x, returned)
        ctx.axis, ctx.kept_shape = axis, out.shape
        return returned

    @staticmethod
    def backward(ctx, grad):
        x, returned = ctx.saved
        out = returned.reshape(ctx.kept_shape)
        is_extreme = x == out                                          # (x.shape) bool
        if ctx.function.nan_ties:                                      # NaN == NaN here
            xp = backend.array_module(x)
            is_extreme = is_extreme | (xp.isnan(x) & xp.isnan(out))
        count = is_extreme.sum(axis=ctx.axis, keepdims=True)           # (kept dims) ties
        with np.errstate(divide="ignore", invalid="ignore"):       # a NaN extreme: NaN
            return is_extreme * (grad.reshape(out.shape) / count.astype(grad.dtype))


class Max(Extreme):
    pick = "max"


class AMin(Extreme):
    pick = "min"


class MaxAll(Max):
    """``x.max()``: the largest element; a NaN result's gradient goes to the NaNs."""

    nan_ties = True


class MinAll(AMin):
    """``x.min()``: the smallest element; a NaN result's gradient goes to the NaNs."""

    nan_ties = True


# torch's names: amax and amin are AmaxBackward0 and AminBackward0; x.max() and x.min()
# MaxBackward1 and MinBackward1 (its overload of no dim), x.median() MedianBackward0
Amax = node_alias(Max, "Amax")
Amin = node_alias(AMin, "Amin")
MaxOfAll = node_alias(MaxAll, "Max", "Backward1", alias="MaxOfAll")
MinOfAll = node_alias(MinAll, "Min", "Backward1", alias="MinOfAll")


class MedianAll(Extreme):
    """``x.median()``: the lower median of every element (NaN if any is NaN, or if there is
    none, as torch); the gradient is shared by the elements equal to it."""

    nan_ties = True

    @classmethod
    def reduce(cls, x, axis):
        xp, kept = backend.array_module(x), (1,) * x.ndim
        if x.size == 0:
            return xp.full(kept, np.nan, dtype=x.dtype)
        ordered = xp.sort(sortable(x.reshape(-1))).astype(x.dtype, copy=False)   # NaN last
        if is_floating(x.dtype) and xp.isnan(ordered[-1]):
            return ordered[-1:].reshape(kept)
        middle = (x.size - 1) // 2                          # the lower of two middles
        return ordered[middle:middle + 1].reshape(kept)


Median = node_alias(MedianAll, "Median")       # x.median(): torch's MedianBackward0


# ----- the functions: x.sum(), x.max(), ... --------------------------------------------------
def _keepdims(fn, keepdims, keepdim):
    if keepdim is None:
        return bool(keepdims)
    if keepdims:
        raise TypeError(f"{fn}(): got both keepdims and keepdim; pass one")
    return bool(keepdim)


def in_dtype(fn, x, dtype, floating=False):
    """``x`` cast to ``dtype`` (None: x itself) before a reduction, as torch's ``dtype=``: the
    gradient flows through the cast; an integer dtype for an input that requires grad is
    torch's RuntimeError while grad is enabled. ``floating`` (softmax, log_softmax, whose
    kernels torch has for real floating dtypes only): another dtype, or a non-empty integer
    or bool x without one, is torch's NotImplementedError."""
    if dtype is None:
        if floating and x.dtype.kind in "biu" and x.size:
            raise NotImplementedError(f'"{fn}" not implemented for {torch_name(x.dtype)}; '
                                      "give dtype= a floating dtype")
        return x
    dtype = as_dtype(dtype)
    if floating and not is_floating(dtype):
        raise NotImplementedError(f'"{fn}" not implemented for {torch_name(dtype)} (the '
                                  "dtype= it was given)")
    if dtype.kind in "biu" and x.requires_grad and is_grad_enabled():
        raise RuntimeError(f"{fn}(): dtype {dtype} for an input that requires grad: autograd "
                           "does not support integer dtypes")
    return x.astype(dtype, copy=False)


def _reduce(fn, function, x, axis, keepdims, dim, keepdim, over_dims=None):
    # over_dims: the node of torch's dim overload, where its name is another (SumBackward1)
    axis = normalize_axis(fn, axis, x.ndim, dim=dim, reduce=True)
    if issubclass(function, Extreme):            # a max of nothing has no value
        check_reducible(fn, x.shape, axis)
    if over_dims is not None and axis is not None:
        function = over_dims
    return function.apply(x, axis=axis, keepdims=_keepdims(fn, keepdims, keepdim))


def sum(input, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None, dtype=None):
    """Sum over ``axis`` (None: every element; an int or a tuple); ``dtype`` casts x first,
    as torch's (``x.sum(dtype=mg.float64)``), the gradient through the cast.

    Shape: x's without the reduced dims (size 1 there with ``keepdims``)."""
    out = _reduce("sum", Sum, in_dtype("sum", input, dtype), axis, keepdims, dim, keepdim,
                  SumDims)
    return out if dtype is None else out.astype(dtype, copy=False)    # int32: not int64


def mean(input, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None, dtype=None):
    """Arithmetic mean over ``axis``; arguments and shape as in ``sum``. A floating or
    complex x, or a floating or complex ``dtype`` to cast it to first; else torch's
    RuntimeError (``mg.arange(5).mean()``: it could not infer the output dtype)."""
    if dtype is not None and not _inexact(as_dtype(dtype)):
        raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: "
                           f"{torch_name(as_dtype(dtype))}")
    input = in_dtype("mean", input, dtype)
    if not _inexact(input.dtype):
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {torch_name(input.dtype)}")
    return _reduce("mean", Mean, input, axis, keepdims, dim, keepdim, MeanDims)


def _inexact(dtype):
    return is_floating(dtype) or dtype.kind == "c"


def amax(input, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None):
    """Maximum over ``axis``, values only (``torch.amax``, ``x.max()``); ties share the
    gradient. An empty reduced dim is an ``EmptyReductionError``."""
    return _reduce("max", Amax, input, axis, keepdims, dim, keepdim)


def amin(input, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None):
    """Minimum over ``axis``, values only (``torch.amin``, ``x.min()``); as ``amax``."""
    return _reduce("amin", Amin, input, axis, keepdims, dim, keepdim)


def _extreme(fn, x, dim, keepdim, axis, keepdims, other=None):
    """``x.max(...)`` and ``x.min(...)``, by torch's overloads: no dim, the value; an int dim,
    (values, indices); a Tensor (``other=``), the elementwise maximum or minimum."""
    check_tensor(fn, x)
    if other is not None:
        if dim is not None or not isinstance(other, _tensor.Tensor):
            raise TypeError(f"{fn}(): other must be a Tensor, given without dim")
        dim = other
    if isinstance(dim, _tensor.Tensor):
        if axis is not None or keepdim or keepdims:
            raise TypeError(f"{fn}(other): an elementwise {fn} takes no dim or keepdim")
        return (elementwise.maximum if fn == "max" else elementwise.minimum)(x, dim)
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{fn}(): got both dim={dim!r} and axis={axis!r}; pass one")
        dim = axis
    keepdim = _keepdims(fn, keepdim, keepdims)
    if dim is None:
        if keepdim:     # torch has no such overload: the value of every element is 0-d
            raise TypeError(f"{fn}(): keepdim needs a dim; for the value with every dim kept "
                            f"use a{fn}(keepdim=True)")
        check_reducible(fn, x.shape, None)
        return (MaxOfAll if fn == "max" else MinOfAll).apply(x, axis=None, keepdims=False)
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{fn}(): dim must be an int (the result is values and indices), "
                        f"got {dim!r}; for the values over several dims use a{fn}(dim=...)")
    # NumPy's argmax/argmin: the first of ties, and the first NaN (NaN propagates), as torch
    return pick_along(fn, getattr(return_types, fn), x, dim, keepdim,
                      lambda data, a: getattr(data, "arg" + fn)(axis=a, keepdims=True))


def max(input, dim=_NO_DIM, keepdim=False, *, other=None, axis=None, keepdims=None):
    """``torch.max``: ``x.max()`` is the largest element (a 0-d tensor; its gradient shared
    by ties); ``x.max(dim)`` the named tuple ``(values, indices)`` over ``dim``; ``x.max(y)``
    (y a Tensor) the elementwise ``maximum``.

    Args:
        input: the tensor.
        dim: an int (``axis`` is its NumPy name), left out, or a Tensor (``other=``).
        keepdim: keep ``dim`` as size 1 (``keepdims`` too).

    With a dim, ``indices`` (int64) holds the first of equal maxima, or the first NaN (NaN
    wins, as in torch); the gradient of ``values`` goes to that element alone. An empty
    ``dim`` is an ``EmptyReductionError`` (an IndexError, as torch's).

    Example:
        >>> values, indices = mg.tensor([[1.0, 3.0], [4.0, 2.0]]).max(dim=1)
        >>> values, indices                           # tensor([3., 4.]), tensor([1, 0])
    """
    return _extreme("max", input, int_dim("max", dim), keepdim, axis, keepdims, other)


def min(input, dim=_NO_DIM, keepdim=False, *, other=None, axis=None, keepdims=None):
    """``torch.min``: the smallest element, ``(values, indices)`` over ``dim``, or the
    elementwise ``minimum`` with a Tensor; as ``max`` (NaN counts as the smallest).

    Args:
        input: the tensor.
        dim: an int (``axis`` too), left out, or a Tensor (``other=``).
        keepdim: keep ``dim`` as size 1 (``keepdims`` too).

    Example:
        >>> mg.tensor([[1.0, 3.0], [4.0, 2.0]]).min(0).indices          # tensor([0, 1])
    """
    return _extreme("min", input, int_dim("min", dim), keepdim, axis, keepdims, other)


def aminmax(input, *, dim=None, keepdim=False):
    """``torch.aminmax``: the named tuple ``(min, max)``, ``amin`` and ``amax`` over ``dim``
    (None: every element); ties share each gradient, as theirs.

    Args:
        input: the tensor.
        dim: an int or None (keyword only, as torch's).
        keepdim: keep the reduced dims as size 1.

    Example:
        >>> lo, hi = mg.tensor([[1.0, 5.0], [3.0, 2.0]]).aminmax(dim=0)
        >>> lo, hi                                    # tensor([1., 2.]), tensor([3., 5.])
    """
    if dim is not None:
        dim = normalize_axis("aminmax", dim, input.ndim, single=True)
    check_reducible("aminmax", input.shape, None if dim is None else (dim,))
    return return_types.aminmax(amin(input, dim=dim, keepdim=keepdim),
                                amax(input, dim=dim, keepdim=keepdim))


def median(input, dim=_NO_DIM, keepdim=False):
    """``torch.median``: the lower of the two middle values when their count is even.

    Args:
        input: the tensor.
        dim: left out, the median of every element as a 0-d tensor (NaN if any is NaN,
            or if x is empty; the gradient shared by the elements equal to it, as torch's);
            an int, the named tuple ``(values, indices)`` over ``dim``.
        keepdim: keep ``dim`` as size 1 (needs a dim).

    Over a dim, a NaN in a slice gives NaN and the index of its first NaN; otherwise the
    index is that of the median in a stable sort (torch leaves which of equal values
    unspecified). The gradient of ``values`` goes to the indexed element.

    Example:
        >>> mg.tensor([[2.0, 1.0, 4.0, 3.0]]).median(1)   # values tensor([2.]), indices [0]
    """
    if (dim := int_dim("median", dim)) is None:
        check_not_bool("median", check_tensor("median", input))
        if keepdim:
            raise TypeError("median(): keepdim needs a dim")
        if input.size == 0 and not is_floating(input.dtype):
            raise EmptyReductionError(f"median(): an empty {input.dtype} tensor has no median")
        return Median.apply(input, axis=None, keepdims=False)

    def lower_median(data, axis):           # (after pick_along's checks of dim, as torch's)
        xp = backend.array_module(check_not_bool("median", data))
        order = xp.argsort(sortable(data), axis=axis, kind="stable")     # NaN sorts last
        index = xp.take(order, [(data.shape[axis] - 1) // 2], axis=axis)
        if is_floating(data.dtype):                                  # torch: the first NaN
            nan = xp.isnan(data)
            index = xp.where(nan.any(axis=axis, keepdims=True),
                             nan.argmax(axis=axis, keepdims=True), index)
        return index

    return pick_along("median", return_types.median, input, dim, keepdim, lower_median)


def var(input, axis=ALL_DIMS, unbiased=None, keepdims=False, *, correction=None, dim=None,
        keepdim=None):
    """Variance over ``axis``, sum(|x - mean|²) / (n - correction), in two passes; n <=
    correction gives inf (NaN for a constant x), as torch. The positional order is torch's
    ``var(dim, unbiased, keepdim)``, and ``var(unbiased)`` (a bool first) its other
    overload; ``unbiased``: correction 1/0; ``correction`` None is 1. A complex x gives the
    real var(x.real) + var(x.imag), torch's way."""
    return _variance("var", input, axis, unbiased, keepdims, correction, dim, keepdim)


def _variance(fn, x, axis, unbiased, keepdims, correction, dim, keepdim):
    # var's arguments parsed (for var, std, var_mean and std_mean: ``fn`` names the caller
    # in the errors), then the two passes
    if not _inexact(x.dtype):
        name = "std and var" if fn in ("std", "var") else fn              # torch's words
        raise RuntimeError(f"{name} only support floating point and complex dtypes, got "
                           f"{x.dtype}")
    if isinstance(axis, (bool, np.bool_)):                # torch's var(input, unbiased)
        if unbiased is not None:
            raise TypeError(f"{fn}(): got unbiased={axis!r} and unbiased={unbiased!r}")
        axis, unbiased = ALL_DIMS, bool(axis)
    axis = normalize_axis(fn, axis, x.ndim, dim=dim, reduce=True)
    keepdims = _keepdims(fn, keepdims, keepdim)
    if unbiased is not None:
        if not isinstance(unbiased, (bool, np.bool_)):
            raise TypeError(f"{fn}: unbiased must be True or False, got {unbiased!r}")
        if correction is not None:
            raise TypeError(f"{fn}(): give unbiased or correction, not both")
        correction = int(unbiased)
    correction = 1 if correction is None else correction
    check_number(fn, "correction", correction)
    if x.dtype.kind == "c":                           # var(real) + var(imag), as torch's
        return _two_pass(fn, real(x), axis, keepdims, correction) + \
            _two_pass(fn, imag(x), axis, keepdims, correction)
    wide = x.float() if is_half(x.dtype) else x        # torch's: in float32, rounded once
    return _two_pass(fn, wide, axis, keepdims, correction).to(x.dtype)


def _two_pass(fn, x, axis, keepdims, correction):
    # the variance of a real x; each call warns as torch's (a complex x's two parts: twice)
    n = reduced_size(x.shape, axis)
    dof = n - correction
    if (n if x.size else 0) - correction <= 0:        # torch's reduction factor: 0 if empty
        warnings.warn(f"{fn}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=4)
    return Var.apply(x, axis=axis, keepdims=keepdims, dof=dof)


def std(input, axis=ALL_DIMS, unbiased=None, keepdims=False, *, correction=None, dim=None,
        keepdim=None):
    """Standard deviation, ``sqrt(var(...))`` with ``var``'s arguments; the gradient is 0
    where it is 0."""
    return StdFromVar.apply(_variance("std", input, axis, unbiased, keepdims, correction, dim,
                                      keepdim))


def _arg_extreme(fn, x, axis, keepdims, dim, keepdim):
    keepdims = _keepdims(fn, keepdims, keepdim)
    axis = dim_alias(fn, axis, dim)
    check_not_bool(fn, x)                                   # before the dim's checks, as torch
    if axis is not None:
        axis = normalize_axis(fn, axis, x.ndim, single=True)
    check_reducible(fn, x.shape, None if axis is None else (axis,))
    check_orderable(fn, x._array)
    data = x._array if x.ndim else x._array.reshape(1)
    index = getattr(data, fn)(axis=axis, keepdims=keepdims and x.ndim > 0)
    if axis is None and keepdims:
        index = index.reshape((1,) * x.ndim)
    return constant(x.xp.asarray(index, dtype=np.int64))


def argmax(input, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None):
    """The int64 index of the largest value over ``axis`` (None: flattened), the first of
    ties; NaN counts as the largest. A constant."""
    return _arg_extreme("argmax", input, axis, keepdims, dim, keepdim)


def argmin(input, axis=ALL_DIMS, keepdims=False, *, dim=None, keepdim=None):
    """The int64 index of the smallest value over ``axis``; NaN counts as the smallest, as
    in torch. Otherwise as ``argmax``."""
    return _arg_extreme("argmin", input, axis, keepdims, dim, keepdim)


# ----- softmax, from the primitives -----------------------------------------------------------
def _row_max(x, axis, zero_if_infinite=False):
    # the (detached) max along axis, kept: x minus it has exp() <= 1, which cannot overflow.
    # ``zero_if_infinite``: logsumexp's shift, torch's (-inf - -inf would be NaN)
    top = amax(x.detach(), axis, keepdims=True)
    if zero_if_infinite:
        top = constant(top.xp.where(top.xp.isinf(top._array), 0, top._array))
    return top


def _shifted(x, axis):
    # minus the row max: softmax is unchanged
    return x - _row_max(x, axis)


def softmax(input, axis=LAST_DIM, *, dim=_NO_DIM, dtype=None):
    r"""Softmax along ``axis``: :math:`e^{x_i - m} / \sum_j e^{x_j - m}`, :math:`m = \max_j x_j`;
    ``dtype`` casts x first, as torch's.

    Example:
        >>> mg.softmax(mg.tensor([[1.0, 2.0, 3.0]]), dim=-1)  # rows sum to 1
    """
    input = in_dtype("softmax", input, dtype, floating=True)
    axis = normalize_axis("softmax", axis, input.ndim, dim=int_dim("softmax", dim), single=True)
    if input.size == 0:
        return input.clone()                 # as empty as x, of its dtype (bool too), as torch's
    e = _shifted(input.to(np.float32) if is_half(input.dtype) else input, axis).exp()
    return (e / sum(e, axis, keepdims=True)).to(input.dtype)   # half: torch's one rounding


def log_softmax(input, axis=LAST_DIM, *, dim=_NO_DIM, dtype=None):
    r"""Stable :math:`(x_i - m) - \log\sum_j e^{x_j - m}` along ``axis``; ``dtype`` as softmax's."""
    input = in_dtype("log_softmax", input, dtype, floating=True)
    axis = normalize_axis("log_softmax", axis, input.ndim, dim=int_dim("log_softmax", dim),
                          single=True)
    if input.size == 0:
        return input.clone()
    z = _shifted(input.to(np.float32) if is_half(input.dtype) else input, axis)
    return (z - sum(z.exp(), axis, keepdims=True).log()).to(input.dtype)   # as softmax's


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    r"""``torch.norm``: the p-norm :math:`(\sum |x|^p)^{1/p}` over ``dim`` (None, or an empty
    tuple: every element), one ``PNorm`` node (ops/vector_norm.py) with torch's gradient,
    0 at a zero element or a zero norm where the composition's would be NaN; "nuc" the sum
    of the singular values (``vector_norm.nuclear_norm``).

    Args:
        input: a floating or complex tensor (a complex one gives its real dtype).
        p: a number or a 0-d tensor of one: 0 counts the nonzero elements, ``inf`` /
            ``-inf`` take the largest / smallest |x|, a negative p gives 0 when an element
            is 0. "fro" (the default) or None: 2, over at most two dims. "nuc": the
            matrices of the two dims ``dim`` (a 2-D x without ``dim``).
        dim: an int, a tuple of ints or None.
        keepdim: keep the reduced dims as size 1.
        dtype: compute in this floating dtype (a widening cast of x, as torch's).

    Example:
        >>> x.norm(2, dim=-1, keepdim=True)
        >>> mg.norm(mg.eye(3), "nuc")                                      # tensor(3.)
    """
    check_tensor("norm", input)
    if not (is_floating(input.dtype) or input.dtype.kind == "c"):
        raise RuntimeError(f"norm: expected a floating point or complex tensor as input, got "
                           f"{input.dtype}")
    input = norm_dtype("norm", input, dtype)
    if isinstance(p, str):
        if p != "fro" or not (dim is None or isinstance(dim, numbers.Integral) or len(dim) <= 2):
            return nuclear_norm(input, p, dim, keepdim)
        p = 2
    p = norm_order("norm", 2 if p is None else p)
    axis = normalize_axis("norm", dim, input.ndim, reduce=True)
    if (p < 0 or p == np.inf) and 0 in input.shape and (
            axis is None or builtins.any(input.shape[d] == 0 for d in axis)):
        raise RuntimeError(f"norm: cannot compute the {p} norm over an empty dim (there is "
                           f"no identity), shape {input.shape}, dim {dim}")
    return PNorm.apply(input, p=p, axis=axis, keepdims=bool(keepdim))


# ----- more of PyTorch's reductions and scans -------------------------------------------------
def logsumexp(input, dim=None, keepdim=None, *, axis=None, keepdims=None):
    r"""``torch.logsumexp``: :math:`\log \sum_i e^{x_i}` over ``dim``, computed stably as
    :math:`m + \log \sum_i e^{x_i - m}` with m the (detached) max, the shift softmax uses;
    an infinite m counts as 0, so a slice of -inf (or an empty one) gives -inf, one holding
    +inf gives +inf, and NaN propagates. The gradient is the softmax along ``dim`` (NaN for
    a slice of -inf, as torch's).

    Args:
        input: a real tensor; an integer or bool one gives the default dtype (a complex
            one is refused: torch takes it).
        dim: an int or a tuple of ints (required, as torch's); an empty tuple is every dim.
        keepdim: keep the reduced dims as size 1.
        axis, keepdims: NumPy's names for ``dim`` and ``keepdim``, as torch's.

    Shape: input's without ``dim`` (size 1 there with ``keepdim``).

    Example:
        >>> mg.logsumexp(mg.tensor([[0.0, 0.0], [1.0, -inf]]), dim=1)   # [log 2, 1]
    """
    check_tensor("logsumexp", input)
    if axis is not None:
        dim = numpy_dim("logsumexp", dim, axis)
    if keepdims is not None:
        if keepdim is not None:
            raise TypeError("logsumexp() got multiple values for argument 'keepdim'")
        keepdim = keepdims
    keepdim = bool(keepdim)
    if dim is None:
        raise TypeError("logsumexp(): dim must be an int or a tuple of ints, got None")
    if input.dtype.kind == "c":
        raise NotImplementedError(f"logsumexp: input of dtype {input.dtype}: complex inputs "
                                  "are not supported here (torch takes them)")
    axis = normalize_axis("logsumexp", dim, input.ndim, reduce=True)
    axis = tuple(range(input.ndim)) if axis is None else axis
    x = input if is_floating(input.dtype) else input.astype(get_default_dtype())
    kept = tuple(1 if i in axis else n for i, n in enumerate(x.shape))
    if reduced_size(x.shape, axis) and x.size:
        top = _row_max(x, axis, zero_if_infinite=True)            # (kept)
    else:                                                         # log of an empty sum
        top = constant(x.xp.zeros(kept, x.dtype))
    total = sum((x - top).exp(), axis, keepdims=keepdim).log()
    return total + (top if keepdim else top.reshape(total.shape))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    r"""``torch.var_mean``: the tuple ``(var(input), mean(input))`` over ``dim``, the variance
    :math:`\sum |x - \bar x|^2 / \max(0, N - \text{correction})` as ``var``'s.

    Args:
        input: a floating or complex tensor (a complex one: a real variance, a complex
            mean).
        dim: an int, a tuple of ints, or None (every element); a bool here is ``unbiased``
            (torch's ``var_mean(input, unbiased)``).
        unbiased: True is correction 1, False correction 0 (torch's older name).
        keepdim: keep the reduced dims as size 1.
        correction: N minus the degrees of freedom (keyword only; 1 by default).

    Example:
        >>> var, mean = mg.var_mean(mg.tensor([1.0, 2.0, 3.0]))     # 1.0, 2.0
    """
    check_tensor("var_mean", input)
    return (_variance("var_mean", input, dim, unbiased, keepdim, correction, None, None),
            mean(input, None if isinstance(dim, (bool, np.bool_)) else dim, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``torch.std_mean``: the tuple ``(std(input), mean(input))`` over ``dim``, the standard
    deviation ``sqrt(var)``; the arguments as ``var_mean``'s.

    Example:
        >>> std, mean = mg.std_mean(x, dim=0, correction=0)
    """
    check_tensor("std_mean", input)
    variance = _variance("std_mean", input, dim, unbiased, keepdim, correction, None, None)
    return (StdFromVar.apply(variance),
            mean(input, None if isinstance(dim, (bool, np.bool_)) else dim, keepdim))


def count_nonzero(input, dim=None):
    """``torch.count_nonzero``: the int64 number of nonzero elements over ``dim`` (None: every
    element; an int or a tuple), NaN counting as nonzero; a constant.

    Example:
        >>> mg.count_nonzero(mg.tensor([[0, 1], [2, 0]]), dim=0)          # tensor([1, 1])
    """
    check_tensor("count_nonzero", input)
    axis = normalize_axis("count_nonzero", dim, input.ndim, reduce=True)
    counts = (input._array != 0).sum(axis=axis)
    return constant(input.xp.asarray(counts, dtype=np.int64))


class NanSum(Function):
    """The sum over ``axis`` with NaN counted as 0; the gradient is grad · (x is not NaN),
    torch's product, so an infinite grad gives NaN at a NaN (``nanmean`` of a slice of NaN)."""

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        xp = backend.array_module(x)
        missing = xp.isnan(x)
        ctx.save_for_backward(missing)
        ctx.shape, ctx.axis = x.shape, axis
        return reduce_sum(xp.where(missing, xp.zeros((), x.dtype), x), axis, keepdims)

    @staticmethod
    def backward(ctx, grad):
        (missing,) = ctx.saved
        return _expand_reduced(grad, ctx.shape, ctx.axis) * ~missing


def _nan_reduction(fn, input, dim, keepdim, dtype):
    # (input in ``dtype`` if given, the axis); NaN is 0 before a cast to an integer dtype
    check_tensor(fn, input)
    if dtype is not None and is_floating(input.dtype) and not is_floating(np.dtype(dtype)) \
            and not (input.requires_grad and is_grad_enabled()):       # (else refused below)
        data = input._array
        input = constant(input.xp.where(input.xp.isnan(data), 0, data))
    return in_dtype(fn, input, dtype), normalize_axis(fn, dim, input.ndim, reduce=True)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """``torch.nansum``: the sum over ``dim`` (None: every element) with NaN counted as 0; its
    gradient is 0 at the NaNs. An integer or bool input gives int64, as ``torch.sum``.

    Args:
        input: the tensor.
        dim: an int, a tuple of ints or None (an empty tuple too: every element).
        keepdim: keep the reduced dims as size 1.
        dtype: cast the input to this dtype first (a NaN to an integer one as 0), the
            result's dtype.

    Example:
        >>> mg.nansum(mg.tensor([1.0, float("nan"), 2.0]))              # tensor(3.)
    """
    x, axis = _nan_reduction("nansum", input, dim, keepdim, dtype)
    if not is_floating(x.dtype):
        if x.dtype.kind == "c":
            raise NotImplementedError("nansum does not support complex inputs")
        total = sum(x.astype(np.int64, copy=False), axis, bool(keepdim))
        return total if dtype is None else total.astype(dtype, copy=False)
    return NanSum.apply(x, axis=axis, keepdims=bool(keepdim))


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """``torch.nanmean``: the mean over ``dim`` of the elements that are not NaN,
    ``nansum / count`` (half precision divides in float32); a slice of NaN (or an empty one)
    gives NaN. The gradient is 0 at the NaNs (NaN everywhere in a slice of NaN, as torch's).
    Floating input only.

    Args:
        input: a floating tensor.
        dim: an int, a tuple of ints or None (an empty tuple too: every element).
        keepdim: keep the reduced dims as size 1.
        dtype: a floating dtype to cast the input to first.

    Example:
        >>> mg.nanmean(mg.tensor([1.0, float("nan"), 2.0]))             # tensor(1.5)
    """
    check_tensor("nanmean", input)
    if not is_floating(input.dtype):
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got "
                           f"{input.dtype}")
    if dtype is not None and not is_floating(np.dtype(dtype)):
        raise RuntimeError(f"nanmean(): the optional dtype must be a floating point dtype, "
                           f"got {np.dtype(dtype)}")
    x, axis = _nan_reduction("nanmean", input, dim, keepdim, dtype)
    present = (~x.xp.isnan(x._array)).sum(axis=axis, keepdims=bool(keepdim))    # int64
    wide = np.dtype(np.float32) if is_half(x.dtype) else x.dtype   # 70,000 overflows fp16
    total = NanSum.apply(x, axis=axis, keepdims=bool(keepdim)).astype(wide, copy=False)
    return (total / constant(x.xp.asarray(present, dtype=wide))).astype(x.dtype, copy=False)
