"""``F.embedding_bag``: the sums, means or maxima of bags of embedding rows, with
``torch.nn.functional``'s arguments, checks, empty bags and gradients; ``functional``
re-exports it and ``nn.EmbeddingBag`` calls it.

It is composed of primitive ops rather than one node: the rows of the kept entries are one
index of the table (its gradient adds back into each row looked up), a bag's sum is one
``index_add`` of those rows into the bags (its gradient reads each bag's gradient back to its
entries), a mean divides by the bag's count, and a maximum is one ``gather`` of the winning
row of each bag and column. The only work outside the graph is the integer bookkeeping (which
bag each entry belongs to, which entries are kept, which one wins a maximum), and with it the
gradients of the ops used are exactly torch's: per-sample weights get the dot product of
their bag's gradient with their row, a maximum's gradient goes to the first winning row of
each column, padding entries and empty bags get nothing.
"""

import warnings

import numpy as np

from . import backend, ops
from .dtypes import check_bool, check_number, index_of, is_floating
from .ops.base import constant
from .tensor import Tensor

__all__ = ["embedding_bag"]

MODES = ("sum", "mean", "max")


class IdOutOfRangeError(ops.OutOfRangeError, RuntimeError):
    """An id outside [0, num_embeddings) or an offset outside the input: PyTorch's
    RuntimeError, and the IndexError/ValueError of ``ops.OutOfRangeError``."""


# ----- arguments ----------------------------------------------------------------------------
def _integers(name, value):
    """``value`` (a Tensor or array_like of ids or offsets) as a host int64 array, checked:
    integers only, as torch's "Long, Int"."""
    from .functional import IdsDtypeError     # functional imports this module: at call time
    array = backend.to_numpy(value._array) if isinstance(value, Tensor) else np.asarray(value)
    if array.dtype.kind not in "iu":
        raise IdsDtypeError(f"embedding_bag: {name} must hold integers (int64 or int32), got "
                            f"dtype {array.dtype}")
    return array.astype(np.int64, copy=False)


def _padding_row(padding_idx, rows):
    # F.embedding_bag's own check (a RuntimeError in torch); a negative id counts from the end
    if padding_idx is None:
        return None
    padding_idx = index_of(padding_idx)          # a 0-d integer tensor is its int, as torch's
    check_number("embedding_bag", "padding_idx", padding_idx, integer=True)
    if not -rows <= padding_idx < rows:
        raise RuntimeError(f"embedding_bag: padding_idx must be within the number of "
                           f"embeddings, {-rows} through {rows - 1}, but got {padding_idx}")
    return int(padding_idx) % rows


def _check_mode(mode, scale_grad_by_freq, sparse, psw):
    check_bool("embedding_bag", "scale_grad_by_freq", scale_grad_by_freq)
    check_bool("embedding_bag", "sparse", sparse)
    if mode not in MODES:
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("embedding_bag: max mode does not support scaling the gradient by the "
                         "frequency")
    if mode == "max" and sparse:
        raise ValueError("embedding_bag: max mode does not support sparse weights")
    if psw is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")


def _flat_bags(ids, offsets, include_last_offset, psw):
    """(ids (K,), the bag of each entry (K,), the number of bags B, psw flattened) from a
    2-D input (B bags of one length) or a 1-D input and its offsets."""
    if ids.ndim == 2:
        if offsets is not None:
            raise ValueError(f"embedding_bag: if input is 2D, then offsets has to be None, as "
                             f"input is treated is a mini-batch of fixed length sequences. "
                             f"However, found offsets of type {type(offsets)}")
        bags, length = ids.shape
        if length == 0:                     # torch's arange(0, numel, step=0)
            raise RuntimeError("embedding_bag: step must be nonzero (a 2D input of bags of "
                               "length 0)")
        psw = None if psw is None else psw.reshape(-1)
        return ids.reshape(-1), np.repeat(np.arange(bags), length), bags, psw
    if ids.ndim != 1:
        raise ValueError(f"embedding_bag: input has to be 1D or 2D Tensor, but got Tensor of "
                         f"dimension {ids.ndim}")
    if offsets is None:
        raise ValueError("embedding_bag: offsets has to be a 1D Tensor but got None")
    starts = _integers("offsets", offsets)
    if starts.ndim != 1:
        raise ValueError(f"embedding_bag: offsets has to be a 1D Tensor, got shape "
                         f"{starts.shape}")
    _check_offsets(starts, ids.size)
    # include_last_offset: B + 1 offsets in CSR form; torch's CPU kernel assigns the entries
    # by the first B of them, so entries past the last offset join the last bag
    bags = max(starts.size - 1, 0) if include_last_offset else starts.size
    # torch's offset2bag: entry i is in the bag of the offsets[1:B] at or before it
    marks = np.bincount(starts[1:bags], minlength=ids.size + 1)[:ids.size]
    return ids, np.cumsum(marks), bags, psw


def _check_offsets(starts, entries):
    if starts.size and starts[0] != 0:
        raise RuntimeError(f"embedding_bag: offsets[0] has to be 0, i.e., the first sequence "
                           f"in the mini-batch has to start from position 0. However, got "
                           f"{starts[0]}")
    if starts.size and starts[-1] > entries:
        raise IdOutOfRangeError(f"embedding_bag: offsets[-1] can not be greater than input's "
                                f"length {entries} but got offsets[-1] of {starts[-1]}")
    if starts.size and (starts.min() < 0 or starts.max() > entries):
        raise IdOutOfRangeError(f"embedding_bag: offsets must be in [0, {entries}] (the "
                                f"input's length), got {starts.min()} to {starts.max()}")
    if starts.size > 1 and (starts[1:] < starts[:-1]).any():     # torch's: a RuntimeError
        i = int((starts[1:] < starts[:-1]).argmax()) + 1
        raise RuntimeError(f"embedding_bag: offsets must not decrease, got offsets[{i}] = "
                           f"{starts[i]} after offsets[{i - 1}] = {starts[i - 1]}")


def _check_weights(psw, input_shape, weight):
    if psw is None:
        return None
    if not isinstance(psw, Tensor):
        raise TypeError(f"embedding_bag: per_sample_weights must be a Tensor or None, got "
                        f"{type(psw).__name__}")
    if tuple(psw.shape) != tuple(input_shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({psw.shape}) is not None, then "
                         f"it must have the same shape as the input ({tuple(input_shape)})")
    if psw.dtype != weight.dtype:
        raise RuntimeError(f"embedding_bag: per_sample_weights must have weight's dtype "
                           f"{weight.dtype}, got {psw.dtype}")
    return psw


# ----- the bags -----------------------------------------------------------------------------
def _max_winners(values, lengths):
    """For each bag (a run of ``lengths[e]`` rows of ``values`` (K, D), the bags in order)
    and column, the position of the entry torch's CPU loop keeps: it takes the bag's first
    entry, then each later one strictly greater. So the first of tied maxima wins, a NaN met
    later never does, and a NaN first entry stays. Shape: (E, D)."""
    starts = np.cumsum(lengths) - lengths                                   # (E,)
    bag = np.repeat(np.arange(len(lengths)), lengths)                       # (K,)
    first = values[starts]                                                  # (E, D)
    best = np.fmax.reduceat(values, starts, axis=0)                         # NaN skipped
    best = np.where(np.isnan(first), first, best)[bag]                      # (K, D)
    position = np.arange(len(values))[:, None]                              # (K, 1)
    hit = (values == best) | (np.isnan(best) & (position == starts[bag][:, None]))
    return np.minimum.reduceat(np.where(hit, position, len(values)), starts, axis=0)


def _bag_max(weight, ids, bag, bags):
    # the winning row of each non-empty bag and column, gathered: (E, D), then placed
    counts = np.bincount(bag, minlength=bags)
    filled = np.flatnonzero(counts)                                         # (E,)
    values = backend.to_numpy(weight._array)[ids]                           # (K, D)
    winners = ids[_max_winners(values, counts[filled])]                     # (E, D) row ids
    device = weight.device
    best = ops.gather(weight, 0, backend.to_device(winners, device))
    out = constant(weight.xp.zeros((bags, weight.shape[1]), weight.dtype))
    return out.index_add(0, backend.to_device(filled, device), best)


def _bag_sum(weight, ids, bag, bags, psw, kept, mean, frequency, sparse):
    device = weight.device
    rows = weight[backend.to_device(ids, device)]                           # (K, D)
    if frequency is not None:       # each row's gradient / its id's count in the whole input
        from .functional import GradientScale   # functional imports this module
        scale = (1 / frequency[ids]).astype(weight.dtype)[:, None]          # (K, 1)
        rows = GradientScale.apply(rows, scale=backend.to_device(scale, device),
                                   sparse=bool(sparse))     # (sparse: torch's backward error)
    if psw is not None:
        rows = rows * psw.reshape(-1)[backend.to_device(kept, device)].unsqueeze(1)
    out = constant(weight.xp.zeros((bags, weight.shape[1]), weight.dtype))
    out = out.index_add(0, backend.to_device(bag, device), rows)            # (B, D)
    if not mean:
        return out
    # an empty bag's sum is 0, divided by 1: zeros, as torch's
    counts = np.maximum(np.bincount(bag, minlength=bags), 1).astype(weight.dtype)
    return out / constant(backend.to_device(counts[:, None], device))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    r"""The sum, mean or maximum of each bag of rows of ``weight`` (``F.embedding_bag``):
    for bag b of entries :math:`i \in B_b`, :math:`\sum_i w_i W_{x_i}`,
    :math:`\frac{1}{|B_b|}\sum_i W_{x_i}` or :math:`\max_i W_{x_i}` per column; an empty bag
    (or one of padding only) gives zeros.

    Composed of primitive ops (an index of the table, ``index_add`` into the bags, a
    division, a ``gather`` of the maxima: the module's docstring says why); the gradients are
    torch's.

    Args:
        input: integer ids (a Tensor or an array), 1-D with ``offsets`` or 2-D (B bags of
            one length).
        weight: the table (num_embeddings, embedding_dim), floating.
        offsets: where each bag starts in a 1-D input (offsets[0] is 0; a bag may be
            empty); None for a 2-D input.
        max_norm, norm_type: rows looked up whose ``norm_type``-norm exceeds ``max_norm``
            are scaled down to it first, in place in ``weight`` (as ``F.embedding``).
        scale_grad_by_freq: each row's gradient divided by the number of times its id
            occurs in ``input`` ("sum" and "mean"), as torch's.
        sparse: True gives the dense gradient here (torch's is sparse; the values are the
            same); with ``scale_grad_by_freq``, torch's RuntimeError at backward.
        mode: "sum", "mean" or "max".
        per_sample_weights: weights of input's shape and weight's dtype, multiplying each
            row ("sum" only); they get gradients too.
        include_last_offset: ``offsets`` has B + 1 entries, the last one the input's end
            (CSR); entries after it join the last bag, as in torch's CPU kernel.
        padding_idx: an id whose entries are left out of the bags (and so get no
            gradient); a negative one counts from the end.

    Shape: input (N,) with offsets (B,) (or (B + 1,)), or input (B, L); per_sample_weights
    input's shape; output (B, embedding_dim), weight's dtype.

    Example:
        >>> F.embedding_bag(mg.tensor([1, 2, 4, 5, 4]), table, mg.tensor([0, 2]), mode="sum")
    """
    if isinstance(weight, Tensor) and isinstance(input, Tensor) and \
            weight.dtype == np.int64 and is_floating(input.dtype):
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if not isinstance(weight, Tensor):
        raise TypeError(f"embedding_bag: weight must be a Tensor, got {type(weight).__name__}")
    ids = _integers("input", input)
    psw = _check_weights(per_sample_weights, ids.shape, weight)
    if weight.ndim != 2:
        raise ValueError(f"embedding_bag: weight has to be a 2D Tensor, but got Tensor of "
                         f"dimension {weight.ndim}")
    if not is_floating(weight.dtype):
        raise RuntimeError(f"embedding_bag: weight must be floating (Half, BFloat16, Float, "
                           f"Double), got {weight.dtype}")
    check_bool("embedding_bag", "include_last_offset", include_last_offset)
    ids, bag, bags, psw = _flat_bags(ids, offsets, include_last_offset, psw)
    _check_mode(mode, scale_grad_by_freq, sparse, psw)
    rows = weight.shape[0]
    padding_idx = _padding_row(padding_idx, rows)
    if ids.size and (ids.min() < 0 or ids.max() >= rows):
        bad = ids.min() if ids.min() < 0 else ids.max()
        raise IdOutOfRangeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings "
                                f"({rows}) but found idx to be {bad}")
    if max_norm is not None:
        from .functional import _renorm_rows      # functional imports this module
        check_number("embedding_bag", "max_norm", max_norm)
        check_number("embedding_bag", "norm_type", norm_type)
        _renorm_rows(weight, backend.to_device(ids, weight.device), max_norm, norm_type)
    # the entries that count: in a bag, and not padding
    kept = np.flatnonzero((bag < bags) & (ids != (-1 if padding_idx is None else padding_idx)))
    if mode == "max" and kept.size:
        return _bag_max(weight, ids[kept], bag[kept], bags)
    # torch's counts: every id of the input, padding and entries past the bags included
    frequency = np.bincount(ids, minlength=rows) if scale_grad_by_freq else None
    return _bag_sum(weight, ids[kept], bag[kept], bags, psw, kept, mode == "mean", frequency,
                    sparse)
