"""torch's statistics on tensors: integration by the trapezoidal rule (``trapezoid``,
``trapz``, ``cumulative_trapezoid``), differentiation by central differences
(``gradient``), ``cov`` and ``corrcoef``, histograms (``histc``,
``histogram``), ``nanmedian`` and the quantiles (``quantile``, ``nanquantile``).

Each is a composition of the primitives with torch's formula, step for step, so its
gradient is the primitives' (sort and gather for the quantiles, a matrix product for
``cov``); the histograms count into the input's dtype outside the graph, each element's
bin found as torch's kernels find it (``histogram``'s edges from ``linspace``, which may
differ from torch's by an ulp, so a point on an edge may bin differently). ``METHODS``
names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import numbers
import warnings

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from . import complex as complex_ops
from . import elementwise, indexing, pointwise, return_types, shape as shape_ops, sorting
from .base import (AxisError, EmptyReductionError, RepeatedAxisError, broadcast_shape,
                   check_fits, check_not_bool, check_tensor, constant, normalize_axis)
from .reductions import MedianAll


# ----- the trapezoidal rule -------------------------------------------------------------------
def _spacing(fn, y, x, dx, axis):
    """The sample spacing: a number (``dx``, 1 by default) or the differences of ``x`` along
    ``axis``, x shaped as torch's: a 1-D x lies along ``axis``, a shorter one gains leading
    dims."""
    if x is not None and dx is not None:
        raise TypeError(f"{fn}(): give x or dx, not both")
    if x is None:
        dx = 1 if dx is None else dx
        if isinstance(dx, _tensor.Tensor) and dx.ndim == 0:
            dx = dx.item()
        if isinstance(dx, (bool, np.bool_, complex)) or not isinstance(dx, numbers.Real):
            raise RuntimeError(f"{fn}: currently, we only support dx as a real number, got "
                               f"{dx!r}")
        return float(dx)
    check_tensor(fn, x)
    if x.dtype == np.bool_:
        raise RuntimeError(f"{fn}: received a bool input for `x`, but bool is not supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[axis]:
            raise RuntimeError(f"{fn}: There must be one `x` value for each sample point "
                               f"({x.shape[0]} x values, {y.shape[axis]} samples)")
        x = x.reshape(tuple(x.shape[0] if d == axis else 1 for d in range(y.ndim)))
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + x.shape)
    return _slice(x, axis, 1, None) - _slice(x, axis, None, -1)


def _slice(t, axis, start, stop):
    return t[(slice(None),) * axis + (slice(start, stop),)]


def _samples(fn, y, dim):
    check_tensor(fn, y)
    if y.ndim == 0:
        raise AxisError(f"{fn}: dim {dim} given but the tensor has no dims")
    if y.dtype == np.bool_:
        raise RuntimeError(f"{fn}: received a bool input for `y`, but bool is not supported")
    return normalize_axis(fn, dim, y.ndim, single=True)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    r"""The integral of ``y`` along ``dim`` by the trapezoidal rule (``torch.trapezoid``):
    :math:`\sum_i (x_{i+1} - x_i)(y_i + y_{i+1}) / 2`, or with a constant spacing
    :math:`\Delta x\,(\sum_i y_i - (y_0 + y_n)/2)`.

    Args:
        y: the samples; an integer y gives the default dtype.
        x: the sample points, 1-D along ``dim`` or broadcasting with y; or
        dx: the constant spacing (1 when neither is given).
        dim: the dim to integrate along.

    Shape: y's without ``dim``; no samples give zeros (y's dtype), as torch's.

    Example:
        >>> mg.trapezoid(mg.tensor([1.0, 2.0, 3.0]))            # tensor(4.)
    """
    axis = _samples("trapezoid", y, dim)
    if y.shape[axis] == 0:
        return constant(y.xp.zeros(y.shape[:axis] + y.shape[axis + 1:], y.dtype))
    spacing = _spacing("trapezoid", y, x, dx, axis)
    if isinstance(spacing, float):
        ends = y.select(axis, 0) + y.select(axis, -1)
        return (y.sum(axis) - ends * 0.5) * spacing
    pairs = _slice(y, axis, None, -1) + _slice(y, axis, 1, None)
    broadcast_shape("trapezoid", spacing.shape, pairs.shape)
    return (spacing * pairs).sum(axis) / 2.0


trapz = trapezoid                       # torch's older name


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integral of ``y`` along ``dim`` by the trapezoidal rule
    (``torch.cumulative_trapezoid``): element i is the ``trapezoid`` of samples 0..i+1, so
    ``dim`` is one shorter. Arguments as ``trapezoid``'s."""
    axis = _samples("cumulative_trapezoid", y, dim)
    spacing = _spacing("cumulative_trapezoid", y, x, dx, axis)
    pairs = _slice(y, axis, None, -1) + _slice(y, axis, 1, None)
    if isinstance(spacing, float):
        return pointwise.cumsum(spacing / 2.0 * pairs, axis)
    broadcast_shape("cumulative_trapezoid", spacing.shape, pairs.shape)
    return pointwise.cumsum(spacing * pairs / 2.0, axis)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of ``input`` along each dim of ``dim`` by central differences
    (``torch.gradient``), one tensor per dim: (f[i+1] - f[i-1]) / 2h inside, one-sided
    differences of order ``edge_order`` (1 or 2) at the two ends; torch's formulas, step for
    step, so the gradient is the differences'.

    Args:
        input: the samples; each dim of ``dim`` needs at least ``edge_order + 1`` of them.
            An integer one gives the default dtype.
        spacing: the distance between samples, one number for every dim, a list of numbers
            (one per dim), or a list of 1-D tensors (each dim's coordinates, for uneven
            spacing); None is 1.
        dim: an int, a tuple of ints, or None (every dim).
        edge_order: 1 or 2.

    Example:
        >>> mg.gradient(mg.tensor([1.0, 4.0, 9.0, 16.0]))       # (tensor([3., 4., 6., 7.]),)
    """
    check_tensor("torch.gradient", input)
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(
        dim, numbers.Integral) else list(dim)
    dims = [normalize_axis("gradient", d, input.ndim, single=True) for d in dims]
    if len(set(dims)) != len(dims):
        repeated = next(d for d in dims if dims.count(d) > 1)
        raise RepeatedAxisError(f"torch.gradient: dim {repeated} appears multiple times in "
                                f"the list of dims, got dim={dim!r}")
    spacing = 1 if spacing is None else spacing
    spacings = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(spacings) != len(dims):
        given = "'self.dim() = " if dim is None else "'dim = "
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to {given}{len(dims)}', since dim argument "
                           f"was {'not ' if dim is None else ''}given, but got a list of length "
                           f"{len(spacings)}")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")
    if not (dtypes.is_floating(input.dtype) or dtypes.is_complex(input.dtype)):
        input = input.astype(dtypes.get_default_dtype())
    return tuple(_derivative(input, d, h, edge_order) for d, h in zip(dims, spacings))


def _derivative(f, axis, h, edge_order):
    # torch's gradient_helper (scalar spacing) and its coordinates' form (a 1-D tensor)
    def part(start, stop=None):
        return _slice(f, axis, start, stop)
    if not isinstance(h, _tensor.Tensor) or h.ndim == 0:      # a number (a 0-d tensor too)
        center = (part(2) - part(0, -2)) / h / 2
        if edge_order == 1:
            before, after = (part(1, 2) - part(0, 1)) / h, (part(-1) - part(-2, -1)) / h
        else:
            before = (part(0, 1) * -1.5 + part(1, 2) * 2 - part(2, 3) * 0.5) / h
            after = (part(-3, -2) * 0.5 - part(-2, -1) * 2 + part(-1) * 1.5) / h
        return shape_ops.concatenate([before, center, after], dim=axis)
    column = [1] * f.ndim
    column[axis] = -1
    dx = h[1:] - h[:-1]
    dx1, dx2 = dx[:-1], dx[1:]
    a, b, c = (-dx2 / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2),
               dx1 / (dx2 * (dx1 + dx2)))
    center = a.reshape(column) * part(0, -2) + b.reshape(column) * part(1, -1) + \
        c.reshape(column) * part(2)
    if edge_order == 1:
        before, after = (part(1, 2) - part(0, 1)) / dx[0], (part(-1) - part(-2, -1)) / dx[-1]
    else:
        d0, d1, e1, e2 = dx[0], dx[1], dx[-1], dx[-2]
        before = -(2.0 * d0 + d1) / (d0 * (d0 + d1)) * part(0, 1) + \
            (d0 + d1) / (d0 * d1) * part(1, 2) + -d0 / (d1 * (d0 + d1)) * part(2, 3)
        after = e1 / (e2 * (e1 + e2)) * part(-3, -2) - (e1 + e2) / (e1 * e2) * \
            part(-2, -1) + (2 * e1 + e2) / (e1 * (e1 + e2)) * part(-1)
    return shape_ops.concatenate([before, center, after], dim=axis)


# ----- cov, corrcoef --------------------------------------------------------------------------
def _weights(name, w, count, kind):
    check_tensor("cov", w)
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    integral = w.dtype.kind in "iu"
    if (kind == "integral") != integral or kind == "floating" and not \
            dtypes.is_floating(w.dtype):
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{w.dtype} dtype")
    if w.size != count:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.size} != {count}")
    if count and (w._array < 0).any():
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w


def cov(input, *, correction=1, fweights=None, aweights=None):
    r"""The covariance matrix of the variables in the rows of ``input``, its columns the
    observations (``torch.cov``): :math:`\frac{1}{\sum w - c'}\,(X - \bar X)\,\mathrm{diag}(w)
    \,(X - \bar X)^{\mathsf H}` with :math:`\bar X = X w / \sum w` and :math:`c' =
    \text{correction}\,\sum w\,a / \sum w` (aweights a), torch's steps.

    Args:
        input: 0-, 1- or 2-D; a 1-D one is one variable. An integer one gives the default
            dtype.
        correction: subtracted from the weighted count (1: the unbiased estimate); a count
            at or below 0 warns and divides by 0, as torch's.
        fweights: integer repeat counts per observation; aweights: floating weights per
            observation; both >= 0.

    Shape: (variables, variables), or 0-d for one variable.

    Example:
        >>> mg.cov(mg.tensor([[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]]))   # 2 × 2
    """
    check_tensor("cov", input)
    dtypes.check_number("cov", "correction", correction, integer=True)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    rows = input.reshape(1, -1) if input.ndim < 2 else input            # (vars, obs)
    count = rows.shape[1]
    w = None if fweights is None else _weights("fweights", fweights, count, "integral")
    if aweights is not None:
        aweights = _weights("aweights", aweights, count, "floating")
        w = aweights if w is None else w * aweights
    if w is None:
        total = constant(input.xp.asarray(count, dtype=np.int64))
    else:
        total = w.sum()
        if not (total._array != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    mean = (rows if w is None else rows * w).sum(1) / total                  # (vars,)
    if w is not None and aweights is not None and correction != 0:
        scale = total - correction * (w * aweights).sum() / total
    else:
        scale = total - correction
    if scale._array <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        scale = constant(input.xp.zeros((), scale.dtype))
    centred = rows - mean.unsqueeze(1)                                       # (vars, obs)
    weighted = (centred if w is None else centred * w).transpose(0, 1).conj()
    return (centred @ weighted / scale).squeeze()


def corrcoef(input):
    r"""Pearson's correlation coefficients of the rows of ``input`` (``torch.corrcoef``):
    :math:`C_{ij} / \sqrt{C_{ii} C_{jj}}` with C = ``cov(input)``, clipped to [-1, 1]; NaN
    where a row is constant. A single variable gives C / C (1, or NaN)."""
    check_tensor("corrcoef", input)
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    diagonal = c.diagonal()
    stddev = (diagonal.real if diagonal.dtype.kind == "c" else diagonal).sqrt()   # (vars,)
    c = c / stddev.reshape(-1, 1)
    c = c / stddev.reshape(1, -1)
    if c.dtype.kind == "c":
        return complex_ops.complex(elementwise.clamp(c.real, -1, 1),
                                   elementwise.clamp(c.imag, -1, 1))
    return elementwise.clamp(c, -1, 1)


# ----- histograms -----------------------------------------------------------------------------
def _floating_data(fn, input):
    check_tensor(fn, input)
    if not dtypes.is_floating(input.dtype):
        raise NotImplementedError(f"{fn}: not implemented for {input.dtype} tensors "
                                  "(floating tensors only)")
    return input._array.reshape(-1)


def _linear_bins(data, first, last, bins):
    """Each element's bin by division in the data's dtype, (x - first) · bins / (last -
    first) truncated, as torch's kernels compute it (``histc`` stops here); elements
    outside [first, last] and NaN are -1, and the last bin holds its right edge. A width
    last - first that overflows counts nothing (torch's edges are NaN there); a product that
    overflows takes the bin computed in float64."""
    inside = (data >= first) & (data <= last)
    with np.errstate(all="ignore"):
        inside &= np.isfinite(last - first)
        ratio = (data - first) * data.dtype.type(bins) / (last - first)
        if not np.isfinite(ratio[inside]).all():
            wide = (data.astype(np.float64) - float(first)) / (float(last) - float(first))
            ratio = np.where(np.isfinite(ratio), ratio, wide * bins)
        position = np.where(inside, ratio, 0).astype(np.int64)
    return np.where(inside, np.minimum(position, bins - 1), -1)


def _searched_bins(data, edges, guess=None):
    """Each element's bin among ``edges`` (n + 1, increasing): the last edge <= x, by a
    binary search of every edge, or, given the ``guess`` of ``_linear_bins``, among the
    edges beside it (torch's check of its division against the ``linspace`` edges)."""
    bins = edges.shape[0] - 1
    inside = (data >= edges[0]) & (data <= edges[-1])
    if guess is None:
        position = np.searchsorted(edges, data, side="right") - 1
    else:
        low = np.maximum(guess - 1, 0)
        window = low[:, None] + np.arange(3)                    # (n, 3) the edges beside
        below = (window <= bins) & (edges[np.minimum(window, bins)] <= data[:, None])
        position = low + below.sum(1) - 1
    return np.where(inside, np.minimum(position, bins - 1), -1)


def _count(bin_index, bins, weight, dtype):
    kept = bin_index >= 0
    counts = np.bincount(bin_index[kept], None if weight is None else weight[kept],
                         minlength=bins)
    return counts.astype(dtype)


def histc(input, bins=100, min=0, max=0):
    """Counts of the elements in ``bins`` equal-width bins over [min, max] (``torch.histc``),
    in input's dtype; elements outside (and NaN) are not counted. ``min == max`` (both 0
    by default) takes the data's smallest and largest elements, widened by 1 on each side
    when those are equal. Floating tensors only; no gradient.

    Example:
        >>> mg.histc(mg.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)   # [0., 2., 1., 0.]
    """
    data = _floating_data("histc", input)
    dtypes.check_number("histc", "bins", bins, integer=True)
    min, max = dtypes.float_of(min, "histc", "min"), dtypes.float_of(max, "histc", "max")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    for value in (min, max):
        check_fits("histc", value, data.dtype)         # torch's error, not an inf edge
    low, high = float(min), float(max)
    if low == high and data.size:
        low, high = float(np.min(data)), float(np.max(data))
    if low == high:
        low, high = low - 1, high + 1
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low}, {high}] is not finite")
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    first, last = np.asarray([low, high], dtype=data.dtype)         # the edges, rounded
    index = _linear_bins(backend.to_numpy(data), first, last, bins)
    return constant(input.xp.asarray(_count(index, bins, None, data.dtype)))


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """A histogram of every element of ``input`` (``torch.histogram``): the named tuple
    ``(hist, bin_edges)``, in input's dtype.

    Args:
        input: a floating tensor (flattened).
        bins: an int (100 if not given, as torch's), that many equal-width bins over
            ``range`` (edges from ``linspace``, within an ulp of torch's, so a point on an
            edge may fall in the bin beside); or a 1-D tensor of the edges (input's dtype),
            increasing.
        range: (min, max) for int bins; None takes the data's extremes, widened by 0.5 on
            each side where they are equal (no data: [0, 1]).
        weight: a tensor of input's shape and dtype: each element counts its weight.
        density: divide by the total and by each bin's width, so the histogram integrates
            to 1.

    Elements outside the edges (and NaN) are not counted; the last bin holds its right
    edge. No gradient.
    """
    data = backend.to_numpy(_floating_data("histogram", input))
    if isinstance(bins, _tensor.Tensor):
        if range is not None:
            raise TypeError("histogram(): range= is taken with an int bins only, not with a "
                            "tensor of edges")
        if bins.ndim == 1 and bins.shape[0] < 2:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 2 "
                               f"elements (one bin), got {bins.shape[0]}")
        if bins.ndim != 1 or bins.dtype != input.dtype:
            raise RuntimeError(f"torch.histogramdd: bins must be a 1-D tensor of the input's "
                               f"dtype {input.dtype}, got shape {bins.shape} dtype {bins.dtype}")
        edges = backend.to_numpy(bins._array)
        index = _searched_bins(data, edges)
    else:
        edges = _linear_edges(data, bins, range, input.dtype)
        index = _searched_bins(data, edges, _linear_bins(data, edges[0], edges[-1], bins))
    if weight is not None:
        check_tensor("histogram", weight)
        if weight.shape != input.shape or weight.dtype != input.dtype:
            raise RuntimeError(f"torch.histogramdd: weight must have the input's shape "
                               f"{input.shape} and dtype {input.dtype}, got {weight.shape} "
                               f"{weight.dtype}")
        weight = backend.to_numpy(weight._array).reshape(-1)
    hist = _count(index, edges.shape[0] - 1, weight, input.dtype)
    if density:
        with np.errstate(all="ignore"):
            hist = hist / hist.sum(dtype=hist.dtype) / np.diff(edges)
    xp = input.xp
    return return_types.histogram(constant(xp.asarray(hist.astype(input.dtype))),
                                  constant(xp.asarray(edges.astype(input.dtype))))


def _linear_edges(data, bins, range, dtype):
    dtypes.check_number("histogram", "bins", bins, integer=True)
    if bins <= 0:
        raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    if range is not None:
        for value in range:
            check_fits("histogram", value, dtype)      # torch's error, not an inf edge
        low, high = (float(v) for v in range)
    elif data.size:
        low, high = float(np.min(data)), float(np.max(data))
    else:
        low, high = 0.0, 1.0                       # no data: torch's [0, 1]
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{low}, {high}] is not "
                           "finite")
    if low > high:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low} "
                           f"max {high} for dimension 0")
    if low == high:
        low, high = low - 0.5, high + 0.5
    from ..factories import linspace               # a layer beside ops: torch's linspace
    with np.errstate(over="ignore", invalid="ignore"):     # high - low past the dtype's max
        return linspace(low, high, bins + 1, dtype=dtype).numpy()


# ----- nanmedian ------------------------------------------------------------------------------
class NanMedianAll(MedianAll):
    """``x.nanmedian()``: the lower median of the elements that are not NaN (NaN if all
    are, or if there is none); the gradient is shared by the elements equal to it."""

    @classmethod
    def reduce(cls, x, axis):
        xp, kept = backend.array_module(x), (1,) * x.ndim
        ordered = xp.sort(dtypes.sortable(x.reshape(-1))).astype(x.dtype, copy=False)  # NaN last
        numbers_ = int((~xp.isnan(ordered)).sum()) if dtypes.is_floating(x.dtype) else x.size
        if x.size == 0:
            return xp.full(kept, np.nan, dtype=x.dtype)
        middle = max(numbers_ - 1, 0) // 2                   # all NaN: the first NaN
        return ordered[middle:middle + 1].reshape(kept)


def nanmedian(input, dim=dtypes.NOT_GIVEN, keepdim=False):
    """``median`` ignoring NaN (``torch.nanmedian``): the lower of the two middle values of
    the elements that are not NaN; NaN only where every element is.

    Args:
        input: the tensor.
        dim: left out, the value over every element (0-d; the gradient shared by the elements
            equal to it); an int, the named tuple ``(values, indices)`` over ``dim``, the
            index that of the median in a stable sort (an all-NaN slice: its first element;
            torch leaves which NaN unspecified).
        keepdim: keep ``dim`` as size 1 (needs a dim).
    """
    x = check_tensor("nanmedian", input)
    if (dim := dtypes.int_dim("nanmedian", dim)) is None:
        check_not_bool("nanmedian", x)
        if keepdim:
            raise TypeError("nanmedian(): keepdim needs a dim")
        if x.size == 0 and not dtypes.is_floating(x.dtype):
            raise EmptyReductionError(f"nanmedian(): an empty {x.dtype} tensor has no median")
        return NanMedianAll.apply(x, axis=None, keepdims=False)

    def lower_median(data, axis):           # (after pick_along's checks of dim, as torch's)
        xp = backend.array_module(check_not_bool("nanmedian", data))
        order = xp.argsort(dtypes.sortable(data), axis=axis, kind="stable")    # NaN sorts last
        present = (~xp.isnan(data)).sum(axis=axis, keepdims=True) if \
            dtypes.is_floating(data.dtype) else xp.full((1,) * data.ndim, data.shape[axis])
        return xp.take_along_axis(order, xp.maximum(present - 1, 0) // 2, axis=axis)

    return indexing.pick_along("nanmedian", return_types.nanmedian, x, dim, keepdim,
                               lower_median)


# ----- quantile, nanquantile ------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(fn, input, q, dim, keepdim, interpolation, ignore_nan):
    check_tensor(fn, input)
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{fn}() input tensor must be either float or double dtype, got "
                           f"{input.dtype}")
    if isinstance(q, _tensor.Tensor):
        if q.dtype != input.dtype:
            raise RuntimeError(f"{fn}() q tensor must be same dtype as the input tensor, got "
                               f"{q.dtype} and {input.dtype}")
        if q.ndim > 1:
            raise RuntimeError(f"{fn}() q must be a scalar or 1D tensor, got shape {q.shape}")
        if not ((q._array >= 0) & (q._array <= 1)).all():
            raise RuntimeError(f"{fn}() q values must be in the range [0, 1]")
    else:
        q = dtypes.float_of(q, fn, "q")
        if not 0 <= q <= 1:
            raise RuntimeError(f"{fn}() q must be in the range [0, 1] but got {q}")
        q = constant(input.xp.asarray(q, dtype=input.dtype))
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{fn}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input.size == 0:
        raise RuntimeError(f"{fn}() input tensor must be non-empty")
    if dim is None:
        rows, kept = input.reshape(-1), (1,) * input.ndim if keepdim else ()
    else:
        axis = normalize_axis(fn, dim, input.ndim, single=True)
        rows = shape_ops.movedim(input, axis, -1) if input.ndim else input.reshape(1)
        kept = tuple(1 if d == axis and keepdim else n for d, n in enumerate(input.shape)
                     if d != axis or keepdim)
    values = _interpolated(sorting.sort(rows, -1).values, q.reshape(-1), interpolation,
                           ignore_nan)                                      # (..., k)
    values = values.squeeze(-1) if q.ndim == 0 else shape_ops.movedim(values, -1, 0)
    return values.reshape(((q.size,) if q.ndim else ()) + kept)


def _interpolated(ordered, q, interpolation, ignore_nan):
    """The quantiles ``q`` (k,) of each sorted row of ``ordered`` (..., n), as torch's: the
    rank q · (n - 1) (of the numbers alone with ``ignore_nan``; a row with a NaN gets rank
    n - 1, its NaN, without it), rounded by ``interpolation`` or interpolated between the
    values on each side."""
    nan = ordered.xp.isnan(ordered._array)
    if ignore_nan:
        last = constant((~nan).sum(-1, keepdims=True) - 1)                  # (..., 1)
        ranks = q * last
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = ordered.shape[-1] - 1
        shape = ordered.shape[:-1] + (q.shape[0],)
        ranks = (q * last).expand(shape).masked_fill(constant(nan.any(-1, keepdims=True)),
                                                      last)
    if interpolation in ("lower", "higher", "nearest"):
        rounding = {"lower": pointwise.floor, "higher": pointwise.ceil,
                    "nearest": pointwise.round}[interpolation]
        ranks = rounding(ranks)
    below = constant(ranks._array.astype(np.int64))                         # (..., k)
    values = indexing.gather(ordered, -1, below)
    if interpolation not in ("linear", "midpoint"):
        return values
    weights = ranks - below if interpolation == "linear" else \
        constant(ordered.xp.full(below.shape, 0.5, ordered.dtype))
    above = constant(ordered.xp.ceil(ranks._array).astype(np.int64))
    return values.lerp(indexing.gather(ordered, -1, above), weights.astype(ordered.dtype))


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    r"""The ``q``-th quantiles of ``input`` over ``dim`` (``torch.quantile``): in each sorted
    slice, the value at rank :math:`q\,(n - 1)`, between two values by ``interpolation``:
    "linear" :math:`v_i + (r - i)(v_{i+1} - v_i)`, "lower" / "higher" the value below /
    above, "nearest" the nearer (halves to even), "midpoint" their mean. A slice with NaN
    gives NaN.

    Args:
        input: a float32 or float64 tensor, not empty.
        q: a number or a 0-d or 1-D tensor of input's dtype, in [0, 1]; a 1-D q puts its
            quantiles first in the result.
        dim: the dim to reduce, or None for every element.
        keepdim: keep the reduced dims as size 1.

    Shape: (len(q),) + input's without ``dim`` for a 1-D q, else without the first.

    The gradient goes to the one or two values each quantile reads (and to q through the
    linear weights).

    Example:
        >>> mg.quantile(mg.tensor([1.0, 2.0, 3.0, 4.0]), 0.5)            # tensor(2.5000)
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` of the elements that are not NaN (``torch.nanquantile``); NaN only for a
    slice of NaN alone. Arguments as ``quantile``'s."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


METHODS = ("cov", "corrcoef", "histc", "histogram", "nanmedian", "quantile", "nanquantile")
