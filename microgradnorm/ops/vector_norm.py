"""The p-norm as one node, beside ``reductions.py`` (whose ``norm`` checks the arguments and
applies it, for ``dist`` too; ``cdist`` applies it itself, for its rule on ties):
``(Σ|x|^p)^(1/p)`` for every p, 0 and ±inf included, with torch's closed-form backward
(``norm_backward``), which is 0 where a composition of ``abs``, ``pow`` and ``sum`` would
give NaN: at a zero element, at a zero norm."""

import numbers

import numpy as np

from .. import backend
from .. import tensor as _tensor
from ..autograd.function import Function
from ..dtypes import as_dtype, is_floating, is_half, real_of
from .base import complex_sign, normalize_axis, torch_sign
from .decompositions import SVDVals
from ..dtypes import ComplexScalarError, torch_name
from .solves import check_matrices


def norm_order(fn, p):
    """The order ``p`` of a p-norm as a float: a real number, or a 0-d tensor of one (torch
    takes both); else a TypeError naming ``fn`` (a complex one, or a 0-d complex tensor:
    ``ComplexScalarError``, torch's RuntimeError)."""
    if isinstance(p, _tensor.Tensor) and p.ndim == 0 and p.dtype.kind in "iufc":
        p = p.item()
    if isinstance(p, numbers.Complex) and not isinstance(p, numbers.Real):
        raise ComplexScalarError(f"{fn}: Expected a non-complex scalar as the order of "
                                 f"norm, got {p!r}")
    if not isinstance(p, numbers.Real):        # a bool is 0.0 or 1.0, as torch reads it
        raise TypeError(f"{fn}(): p must be a real number, got {p!r}")
    return float(p)


def norm_dtype(fn, x, dtype):
    """``x`` in ``dtype`` (None: as it is), the ``dtype=`` of the norms; refused where torch
    refuses the cast: to a dtype neither floating nor complex, a narrowing one, or between
    real and complex."""
    if dtype is None:
        return x
    dtype = as_dtype(dtype)
    if not (is_floating(dtype) or dtype.kind == "c"):
        raise RuntimeError(f"{fn}: dtype should be floating point or complex, but got "
                           f"{torch_name(dtype)}")
    if (x.dtype.kind == "c") != (dtype.kind == "c"):
        kind = "complex for complex" if x.dtype.kind == "c" else "real for real"
        raise RuntimeError(f"{fn}: dtype should be {kind} inputs, but got {torch_name(dtype)}")
    if dtype.itemsize < x.dtype.itemsize or (dtype.itemsize == x.dtype.itemsize
                                             and dtype != x.dtype):
        raise RuntimeError(f"{fn}: the dtype of the input ({torch_name(x.dtype)}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({torch_name(dtype)})")
    return x.astype(dtype, copy=False)


def nuclear_norm(x, p, dim, keepdim):
    r"""``torch.norm``'s string orders past the 2-norm, as its ``linalg.matrix_norm``:
    "nuc", :math:`\sum_i \sigma_i` of each matrix of the two dims ``dim`` (every dim when
    None); "fro" over more than two dims, or another string, is torch's RuntimeError.

    Shape: x's without ``dim`` (size 1 there with ``keepdim``)."""
    fn = "linalg.matrix_norm"
    if p not in ("nuc", "fro"):
        raise RuntimeError(f"{fn}: Order {p} not supported.")
    if x.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    dims = tuple(range(x.ndim)) if dim is None else \
        (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    first, second = (normalize_axis(fn, d, x.ndim, single=True) for d in dims)
    if first == second:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dims[0]}, {dims[1]})")
    if p != "nuc":
        raise RuntimeError(f"{fn}: Order {p} not supported.")
    rest = [d for d in range(x.ndim) if d not in (first, second)]
    matrices = x.permute(*rest, first, second)                          # (..., m, n)
    check_matrices("linalg.svdvals", matrices, square=False, kernel="linalg_svd_cpu")
    out = SVDVals.apply(matrices).sum(-1)                               # (...)
    if keepdim:
        out = out.reshape(tuple(1 if d in (first, second) else n for d, n in enumerate(x.shape)))
    return out


def p_norm(x, p, axis=None, keepdims=False):
    r""":math:`(\sum |x|^p)^{1/p}` of the array ``x`` over ``axis`` (None: every element),
    ``PNorm``'s forward (and ``nn.utils``' total norm): p = 0 counts the nonzero elements
    (NaN among them), ±inf takes the largest / smallest |x| (inf: 0 over no element). Half
    precision computes in float32; the result has x's real dtype. Overflow and 0 ** -p
    give inf as NumPy computes them: call it under ``backend.silent_floats()``.

    Example:
        >>> p_norm(np.array([3.0, 4.0]), 2.0)                               # array(5.)
    """
    xp = backend.array_module(x)
    wide = x.astype(np.float32) if is_half(x.dtype) else x              # opmath
    if p == 2 and wide.dtype.kind != "c":        # x·x is |x|·|x| to the last bit
        out = xp.sqrt((wide * wide).sum(axis=axis, keepdims=keepdims))
    else:
        size = xp.abs(wide)                                              # (x.shape) real
        if p == 0:
            out = (size != 0).sum(axis=axis, keepdims=keepdims).astype(size.dtype)
        elif p == np.inf:           # 0 over no element (cdist of 0 columns; norm refuses)
            out = xp.amax(size, axis=axis, keepdims=keepdims) if size.size else \
                size.sum(axis=axis, keepdims=keepdims)                   # zeros, CuPy's too
        elif p == -np.inf:
            out = size.min(axis=axis, keepdims=keepdims)
        elif p == 1:
            out = size.sum(axis=axis, keepdims=keepdims)
        elif p == 2:
            out = xp.sqrt((size * size).sum(axis=axis, keepdims=keepdims))
        else:
            out = (size ** p).sum(axis=axis, keepdims=keepdims) ** (1.0 / p)
    return xp.asarray(out).astype(real_of(x.dtype), copy=False)


def _sgn(x):
    # torch.sgn: x / |x| (0 at 0) for complex x, the sign (0 at NaN) for real x
    return complex_sign(x) if x.dtype.kind == "c" else torch_sign(x)


class PNorm(Function):
    r""":math:`\lVert x \rVert_p = (\sum |x|^p)^{1/p}` over ``axis`` (None: every element); p
    = 0 counts the nonzero elements (NaN among them), ±inf takes the largest / smallest
    |x|. Half precision computes the forward in float32 (the backward in x's dtype, as
    torch's); a complex x gives its real dtype.

    The gradient, with n the norm and s = sgn(x) (x/|x| for complex x, 0 at 0 and NaN):
    p = 0: 0. p = 1: g·s. p = 2: g·x/n, 0 where n = 0. ±inf: g·s shared by the elements
    where |x| = n (or NaN), each of them the whole g with ``share_ties=False`` (``cdist``'s).
    p < 1: g·s·|x|^(p-1)·n^(1-p), 0 where x = 0. Else g·s·|x|^(p-1)/n^(p-1), 0 where
    n = 0."""

    @staticmethod
    def forward(ctx, x, p, axis, keepdims, share_ties=True):
        out = p_norm(x, p, axis, keepdims)
        ctx.save_for_backward(x, out)
        ctx.p, ctx.axis, ctx.share_ties = p, axis, share_ties
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved
        p, axis, xp = ctx.p, ctx.axis, backend.array_module(grad)
        if p == 0:
            return xp.zeros(x.shape, x.dtype)
        # torch's norm_backward, op for op in x's dtype (half precision rounds each step,
        # as torch's; its forward alone computes in float32)
        axes = range(x.ndim) if axis is None else axis
        kept = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
        g, n = grad.reshape(kept), out.reshape(kept)                     # (kept dims)
        zero = xp.zeros((), out.dtype)
        if p == 1:
            return (_sgn(x) * g).astype(x.dtype, copy=False)
        if p == 2:
            empty = n == 0                                               # (kept dims)
            ratio = x / xp.where(empty, 1, n).astype(n.dtype)            # (x.shape)
            if empty.any():             # the full-size where only where a norm is 0
                ratio = xp.where(empty, zero, ratio)
            return (g * ratio).astype(x.dtype, copy=False)
        size = xp.abs(x)                                                 # (x.shape) real
        if np.isinf(p):
            mask = (size == n) | xp.isnan(size)                             # the extremes
            share = mask.sum(axis=tuple(axes), keepdims=True) if ctx.share_ties else 1
            result = _sgn(x) * (g / xp.asarray(share, g.dtype) * mask)
        elif p < 1:
            scaled = _sgn(x) * xp.where(x == 0, zero, size ** (p - 1))
            result = scaled * g * n ** (1 - p)
        else:
            scaled = _sgn(x) * size ** (p - 1) if p < 2 else x * size ** (p - 2)
            result = scaled * xp.where(n == 0, zero, g / n ** (p - 1))
        return result.astype(x.dtype, copy=False)
