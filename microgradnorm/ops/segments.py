"""``torch.segment_reduce``: a reduction over consecutive runs ("segments") of a dim, the
runs given by their lengths or offsets. Composed of the graph's slicing and reductions, so
its gradient is theirs (``amax``/``amin`` share a tie's gradient evenly, as torch's)."""

import numpy as np

from ..tensor import Tensor
from .base import check_tensor, normalize_axis
from .shape import stack

_REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "amax", "amax": "amax",
               "min": "amin", "amin": "amin"}
# what an empty segment gives without ``initial`` (torch's identities; mean's is NaN)
_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": float("nan"), "amax": -float("inf"),
          "amin": float("inf")}


def _ints(where, name, value):
    array = np.asarray(value.detach().numpy() if isinstance(value, Tensor) else value)
    if array.dtype.kind not in "iu":
        raise RuntimeError(f"{where}(): {name} must be an integer tensor, got {array.dtype}")
    return array.astype(np.int64)


def _segment(piece, kind, axis, initial):
    """One segment's reduction along ``axis`` (``initial`` folded in, as torch's)."""
    count = piece.shape[axis]
    if count == 0:
        fill = _EMPTY[kind] if initial is None else float(initial)
        return piece.sum(axis) * 0 + fill        # the right shape, dtype and device
    if kind == "mean":
        total = piece.sum(axis)
        return (total if initial is None else total + initial) / count
    out = getattr(piece, kind)(axis)
    if initial is None:
        return out
    if kind == "sum":
        return out + initial
    if kind == "prod":
        return out * initial
    return out.clamp(min=initial) if kind == "amax" else out.clamp(max=initial)


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce ``data`` over consecutive segments of dim ``axis`` (``torch.segment_reduce``).

    Segment ``j`` of a row is ``lengths[..., j]`` elements long (or runs from
    ``offsets[..., j]`` to ``offsets[..., j + 1]``), and its output is the ``reduce`` of
    those elements with ``initial`` folded in: ``sum + initial``, ``prod * initial``,
    ``(sum + initial) / length`` for the mean, ``max(initial, max)``; an empty segment
    gives ``initial``, or without one the identity (0, 1, -inf, inf; NaN for the mean).

    Args:
        data (Tensor): floating values.
        reduce (str): "sum", "prod", "mean", "max" ("amax"), "min" ("amin").
        lengths (Tensor, optional): non-negative segment lengths, shaped
            ``data.shape[:axis] + (segments,)``; each row sums to ``data.shape[axis]``
            (unchecked with ``unsafe``).
        indices: not supported (torch's RuntimeError, as torch's).
        offsets (Tensor, optional): the segments' bounds instead of ``lengths``, one more
            than the segments along the last dim.
        axis (int): the dim segmented; ``lengths.dim() - 1`` must equal it.
        unsafe (bool): skip the check that the lengths cover the dim.
        initial (float, optional): folded into every segment.

    Shape:
        ``data.shape[:axis] + (segments,) + data.shape[axis + 1:]``.

    Example:
        >>> mg.segment_reduce(mg.tensor([1., 2., 3.]), "sum", lengths=mg.tensor([1, 2]))
        tensor([1., 5.])
    """
    check_tensor("segment_reduce", data)
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"segment_reduce(): reduce argument must be either sum, prod, "
                           f"mean, amax or amin, got {reduce!r}")
    kind = _REDUCTIONS[reduce]
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if not data.dtype.kind == "f":
        raise NotImplementedError(f"segment_reduce(): not implemented for {data.dtype} data "
                                  "(floating data only, as torch's)")
    axis = normalize_axis("segment_reduce", axis, data.ndim, single=True)
    if lengths is not None:
        lengths = _ints("segment_reduce", "lengths", lengths)
        if (lengths < 0).any():
            raise RuntimeError("segment_reduce(): lengths contains negative value!")
        bounds = np.concatenate([np.zeros(lengths.shape[:-1] + (1,), np.int64),
                                 np.cumsum(lengths, axis=-1)], axis=-1)
    else:
        bounds = _ints("segment_reduce", "offsets", offsets)
    if bounds.ndim - 1 != axis:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {axis}.")
    if bounds.shape[:-1] != tuple(data.shape[:axis]):
        raise RuntimeError(f"segment_reduce(): lengths' leading shape {bounds.shape[:-1]} "
                           f"must be data's {tuple(data.shape[:axis])}")
    if not unsafe and (bounds[..., -1] != data.shape[axis]).any():
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                           "to data.size(lengths.dim()-1) when !unsafe.")
    rows = []
    for lead in np.ndindex(*bounds.shape[:-1]):
        row = data[lead] if lead else data
        edges = bounds[lead]
        rows.append(stack([_segment(row[int(a):int(b)], kind, 0, initial)
                                  for a, b in zip(edges[:-1], edges[1:])]))
    if not bounds.shape[:-1]:
        return rows[0]
    return stack(rows).reshape(tuple(data.shape[:axis]) + tuple(rows[0].shape))
