"""``torch.histogramdd``: the histogram of points in D dimensions, each dimension's bins as
``torch.histogram`` draws them (``statistics.py``'s edges and bin search, so a point falls
in torch's bin), the D bin indices combined into one cell."""

import numpy as np

from .. import backend
from ..tensor import Tensor
from . import return_types
from .base import check_tensor, constant
from .statistics import _floating_data, _linear_bins, _linear_edges, _searched_bins

__all__ = ["histogramdd"]


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """A D-dimensional histogram of the points in ``input``'s rows (``torch.histogramdd``):
    the named tuple ``(hist, bin_edges)``, ``bin_edges`` a tuple of D 1-D tensors, all in
    input's dtype.

    Args:
        input: (*, D) floating: points of D coordinates.
        bins: an int (each dimension that many equal-width bins), a sequence of D ints, or a
            sequence of D increasing 1-D tensors of edges (input's dtype).
        range: (min_0, max_0, ..., min_{D-1}, max_{D-1}) for int bins (ignored with
            tensors of edges, as torch); None takes each dimension's extremes (widened by 0.5
            on each side where equal).
        weight: (*,) of input's dtype: each point counts its weight.
        density: divide by the total and by each cell's volume.

    Shape: hist (bins_0, ..., bins_{D-1}).

    A point outside any dimension's edges (or NaN) is not counted; each last bin holds its
    right edge. No gradient.

    Example:
        >>> mg.histogramdd(mg.tensor([[0., 0.], [1., 1.]]), bins=[2, 2]).hist
    """
    check_tensor("histogramdd", input)
    if input.ndim < 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 1 dimension, "
                           "but got 0")
    dims = input.shape[-1]
    data = backend.to_numpy(_floating_data("histogramdd", input)).reshape(-1, dims)
    if isinstance(bins, Tensor):
        raise TypeError("histogramdd(): bins must be an int or a sequence of ints or tensors, "
                        "not a Tensor")
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        bins = [int(bins)] * dims
    bins = list(bins)
    if len(bins) != dims:
        raise RuntimeError(f"torch.histogramdd: expected {dims} sequences of bin edges for "
                           f"each of the {dims} dimensions of the input, but got {len(bins)}")
    if range is not None:
        range = [float(v) for v in range]
        if len(range) != 2 * dims:
            raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram, range "
                               f"should have {2 * dims} elements, but got {len(range)}")
    all_edges, indices = [], []
    for d, spec in enumerate(bins):
        column = np.ascontiguousarray(data[:, d])
        if isinstance(spec, Tensor):                # torch ignores range= with edges given
            if spec.ndim != 1 or spec.shape[0] < 2 or spec.dtype != input.dtype:
                raise RuntimeError(f"torch.histogramdd: bins tensor for dimension {d} must be "
                                   f"1-D with at least 2 elements of the input's dtype "
                                   f"{input.dtype}, got shape {spec.shape} dtype {spec.dtype}")
            edges = backend.to_numpy(spec._array)
            index = _searched_bins(column, edges)
        else:
            part = None if range is None else range[2 * d:2 * d + 2]
            edges = _linear_edges(column, spec, part, input.dtype)
            index = _searched_bins(column, edges, _linear_bins(column, edges[0], edges[-1],
                                                               spec))
        all_edges.append(edges)
        indices.append(index)
    shape = tuple(e.shape[0] - 1 for e in all_edges)
    kept = np.ones(data.shape[0], bool)
    for index in indices:
        kept &= index >= 0
    cells = np.ravel_multi_index([index[kept] for index in indices], shape) if shape else \
        np.zeros(int(kept.sum()), np.int64)
    if weight is not None:
        check_tensor("histogramdd", weight)
        if weight.shape != input.shape[:-1] or weight.dtype != input.dtype:
            raise RuntimeError(f"torch.histogramdd: weight must have the shape "
                               f"{input.shape[:-1]} of the input's points and its dtype "
                               f"{input.dtype}, got {weight.shape} {weight.dtype}")
        weight = backend.to_numpy(weight._array).reshape(-1)[kept]
    size = int(np.prod(shape))
    hist = np.bincount(cells, weight, minlength=size).astype(input.dtype).reshape(shape)
    if density:
        with np.errstate(all="ignore"):
            hist = hist / hist.sum(dtype=hist.dtype)
            for d, edges in enumerate(all_edges):
                widths = np.diff(edges).reshape((-1,) + (1,) * (dims - d - 1))
                hist = hist / widths
    xp = input.xp
    return return_types.histogramdd(
        constant(xp.asarray(hist.astype(input.dtype))),
        tuple(constant(xp.asarray(e.astype(input.dtype))) for e in all_edges))

