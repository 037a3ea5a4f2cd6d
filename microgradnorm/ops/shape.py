"""Shape ops: the functions behind ``x.reshape``, ``x.transpose``, ``mg.cat``, ... that apply
the views (reshape, permute, expand, split) and concatenate of ``shape_nodes.py``, each named
as torch names its node (``View``, ``Transpose``, ...); stack and repeat are compositions,
and so is the rest of PyTorch's shape vocabulary (unbind, movedim, flip, roll, ...), with
the ``Tensor.new_*`` factories.

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import math
import numbers
import warnings

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from .base import (ALL_DIMS, DIM_0, AxisError, OutOfRangeError, ShapeError, check_tensor,
                   fitted, normalize_axis, result_type, sizes_of)
from .elementwise import Clone
from .numpy_names import numpy_dim
from ..dtypes import NOT_GIVEN, int_dim
from .shape_arguments import split_sizes, tensor_sequence, tensor_start
from .indexing import GetItem, Slice
from .shape_nodes import (Cat, Concatenate, Expand, Permute, Reshape, Split,  # noqa: F401
                          Squeeze, SqueezeDim, SqueezeDims, T, Transpose, Unsqueeze, View,
                          _legacy_empty, expanded_shape)              # (Concatenate: mg.ops)

METHODS = ("unbind", "unflatten", "movedim", "moveaxis", "repeat_interleave", "narrow", "flip",
           "roll", "expand_as", "ravel", "new_tensor")


# ----- the functions: x.reshape(), mg.cat, ... -----------------------------------------------
def reshape(input, *sizes, shape=None):
    """The same elements in ``shape`` (ints, one tuple or ``shape=``; one -1 is inferred)."""
    return View.apply(input, shape=dtypes.factory_shape(sizes_of(sizes, shape, "shape")))


def flatten(input, start_dim=0, end_dim=-1):
    """The dims from ``start_dim`` to ``end_dim`` (inclusive) merged into one
    (``torch.flatten``): ``logits.flatten(0, 1)`` is (B·T, V) of (B, T, V)."""
    start = normalize_axis("flatten", start_dim, input.ndim, single=True)
    end = normalize_axis("flatten", end_dim, input.ndim, single=True)
    if input.ndim == 0:
        return reshape(input, 1)
    if start > end:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    if start == end:                      # no dims merged: the tensor itself, as torch's
        return input
    shape = input._array.shape            # (a tuple: no Size built and checked)
    merged = math.prod(shape[start:end + 1])
    return View.apply(input, shape=shape[:start] + (merged,) + shape[end + 1:])


def permute(input, *axes, dims=None):
    """The dims reordered (ints, one tuple or ``dims=``)."""
    axes = dtypes.factory_shape(sizes_of(axes, dims, "dims"), "permute(): dims")   # (1, False)
    order = tuple(normalize_axis("permute", a, input.ndim, single=True) for a in axes)
    if sorted(order) != list(range(input.ndim)):
        raise dtypes.ArgumentError(f"permute: axes {axes} are not a permutation of "
                                   f"{input.ndim} dims")     # torch's RuntimeError
    return Permute.apply(input, axes=order)


def transpose(input, dim0=-2, dim1=-1):
    """Two dims swapped, by default the last two."""
    a = normalize_axis("transpose", dim0, input.ndim, single=True)
    b = normalize_axis("transpose", dim1, input.ndim, single=True)
    axes = list(range(input.ndim))
    if input.ndim:
        axes[a], axes[b] = axes[b], axes[a]
    return Transpose.apply(input, axes=tuple(axes))


def reversed_dims(x):
    """All dims reversed (``x.T``)."""
    return Permute.apply(x, axes=tuple(reversed(range(x.ndim))))


def t(input):
    """The transpose of a tensor with at most 2 dims (``torch.Tensor.t``)."""
    if input.ndim > 2:
        raise ShapeError(f"t() expects a tensor with <= 2 dims, got shape {input.shape}; "
                         "use transpose(dim0, dim1) or .mT")
    return T.apply(input, axes=tuple(reversed(range(input.ndim))))


def matrix_transpose(x):
    """The last two dims swapped (``x.mT``); a 0-d tensor's view of itself, with torch's
    deprecation warning."""
    if x.ndim == 0:
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity "
                      "in these cases.", UserWarning, stacklevel=2)
        return reshape(x, ())
    if x.ndim < 2:
        raise ShapeError(f"mT needs a tensor with at least 2 dims, got shape {x.shape}")
    return transpose(x, -2, -1)


def expand(x, *sizes, size=None):
    """A broadcast view of ``size`` (ints, one tuple or ``size=``; -1 keeps a dim)."""
    return Expand.apply(x, shape=dtypes.factory_shape(sizes_of(sizes, size)))   # (6, True)


def unsqueeze(input, axis=ALL_DIMS, *, dim=None):
    """A view with a new dim of size 1 at ``axis``; -1 appends one."""
    axis = normalize_axis("unsqueeze", axis, input.ndim, dim=dim, single=True, insert=True)
    return Unsqueeze.apply(input, shape=input.shape[:axis] + (1,) + input.shape[axis:])


def squeeze(input, axis=ALL_DIMS, *, dim=NOT_GIVEN):
    """Size-1 dims removed: all, or those of ``axis`` (a named dim of another size stays;
    None given for it is torch's TypeError: leave it out for all)."""
    if (dim := int_dim("squeeze", dim)) is None:        # both given: dim_alias's TypeError
        axis = int_dim("squeeze", axis)
    given = axis if dim is None else dim           # torch's overloads: (), (dim), (dims)
    node = Squeeze if given is ALL_DIMS or given is None else \
        SqueezeDims if isinstance(given, (tuple, list)) else SqueezeDim
    axes = normalize_axis("squeeze", axis, input.ndim, dim=dim)
    axes = range(input.ndim) if axes is None else axes
    return node.apply(input, shape=tuple(n for i, n in enumerate(input.shape)
                                         if i not in axes or n != 1))


def _shape(t):
    # a Tensor's array's shape, a plain tuple (t.shape builds a Size, checked, each call)
    return t._array.shape if isinstance(t, _tensor.Tensor) else np.shape(t)


def contiguous(x):
    """x itself when its memory is in C order, else a C-ordered copy in the graph."""
    return x if x._array.flags.c_contiguous else Clone.apply(x)


def concatenate(tensors, axis=DIM_0, *, dim=NOT_GIVEN):
    """Tensors joined along an existing ``axis`` (``torch.cat``), in torch's result dtype of
    them all; as torch, an empty 1-D tensor beside tensors of more dims is skipped (its
    dtype still counts)."""
    tensors = tensor_sequence("cat", tensors)
    if not tensors:
        raise ShapeError("concatenate: expected at least one tensor")
    shapes = [_shape(t) for t in tensors]          # (the arrays' tuples: no Size made)
    kept = [s for s in shapes if not _legacy_empty(s, shapes)] or shapes
    ndim = len(kept[0])
    if ndim == 0 or any(len(s) != ndim for s in kept):
        raise ShapeError(f"concatenate: tensors must have the same number of dims (at least "
                         f"1), got shapes {shapes}")
    axis = normalize_axis("concatenate", axis, ndim, dim=int_dim("cat", dim), single=True)
    rest = kept[0][:axis] + kept[0][axis + 1:]
    if any(s[:axis] + s[axis + 1:] != rest for s in kept):
        raise ShapeError(f"concatenate: sizes must match except along axis {axis}, got "
                         f"shapes {shapes}")
    first = tensors[0].dtype
    mixed = any(t.dtype != first for t in tensors)
    return Cat.apply(*tensors, axis=axis, dtype=result_type(*tensors) if mixed else None)


cat = concatenate


def stack(tensors, axis=DIM_0, *, dim=NOT_GIVEN):
    """Tensors of one shape joined along a new ``axis`` (``torch.stack``)."""
    tensors = tensor_sequence("stack", tensors)
    if not tensors:
        raise ShapeError("stack: expected at least one tensor")
    shape = _shape(tensors[0])
    axis = normalize_axis("stack", axis, len(shape), dim=int_dim("stack", dim), single=True,
                          insert=True)                      # the dim first, as torch
    for i, t in enumerate(tensors):
        if _shape(t) != shape:
            raise ShapeError(f"stack expects each tensor to be equal size, but got shape "
                             f"{shape} at entry 0 and {_shape(t)} at entry {i}")
    new_shape = shape[:axis] + (1,) + shape[axis:]
    return concatenate([Unsqueeze.apply(t, shape=new_shape) for t in tensors], axis)


def _split_axis(fn, x, axis, dim):
    if x.ndim == 0:                       # before the dim's check, as torch
        raise ShapeError(f"{fn}: a 0-d tensor has no dim to cut")
    return normalize_axis(fn, axis, x.ndim, dim=int_dim(fn, dim), single=True)


def split(tensor, split_size_or_sections, axis=DIM_0, *, dim=NOT_GIVEN):
    """A tuple of views along ``axis`` (``torch.split``): pieces of an int size (the last
    smaller), or of each size of a sequence.

    Example:
        >>> q, k, v = qkv.split(d_model, axis=-1)        # (B, T, 3C) -> 3 x (B, T, C)
    """
    axis = _split_axis("split", tensor, axis, dim)
    length, sizes = tensor.shape[axis], split_sizes("split", split_size_or_sections)
    if isinstance(sizes, int):
        if (size := sizes) < 1:
            raise ShapeError(f"split: split_size must be a positive int, got {size}")
        sizes = [min(size, length - start) for start in range(0, length, size)] or [0]
    elif any(n < 0 for n in sizes) or sum(sizes) != length:
        raise ShapeError(f"split: sections must be non-negative ints adding up to the "
                         f"size {length} of axis {axis}, got {list(sizes)}")
    return Split.apply(tensor, sizes=tuple(int(n) for n in sizes), axis=axis)


def split_method(x, split_size, axis=DIM_0, *, dim=NOT_GIVEN):
    """``Tensor.split(split_size, dim=0)``: ``split`` under the method's own keyword name,
    ``x.split(split_size=[d, d], dim=1)`` (the function's is ``split_size_or_sections``)."""
    return split(x, split_size, axis, dim=dim)


def chunk(input, chunks, axis=DIM_0, *, dim=NOT_GIVEN):
    """At most ``chunks`` views along ``axis``, each ceil(n / chunks) long (``torch.chunk``)."""
    if (chunks := _int("chunk", "chunks", chunks)) < 1:
        raise ShapeError(f"chunk: chunks must be at least 1, got {chunks}")
    axis = _split_axis("chunk", input, axis, dim)
    if input.shape[axis] == 0:
        return Split.apply(input, sizes=(0,) * int(chunks), axis=axis)
    return split(input, math.ceil(input.shape[axis] / chunks), axis)


def repeat(x, *sizes, repeats=None):
    """x tiled ``sizes[d]`` times along dim d (``torch.Tensor.repeat``; ``repeats=``)."""
    sizes = dtypes.factory_shape(sizes_of(sizes, repeats, "repeats"), "repeat: repeats")
    typed = all(isinstance(r, numbers.Integral) for r in sizes)      # a float: TypeError
    if not typed or any(r < 0 for r in sizes):
        raise (ValueError if typed else TypeError)(f"repeat: repeats must be ints >= 0: {sizes}")
    if len(sizes) < x.ndim:
        raise ShapeError(f"repeat: give at least one repeat per dim ({x.ndim}), got "
                         f"{len(sizes)}: {sizes}")
    padded = (1,) * (len(sizes) - x.ndim) + x.shape
    # a copy of x for each repeat: (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...)
    tiles = Expand.apply(reshape(x, tuple(n for s in padded for n in (1, s))),
                         shape=tuple(n for pair in zip(sizes, padded) for n in pair))
    tiled = reshape(tiles, tuple(r * s for r, s in zip(sizes, padded)))
    # Still a read-only view of x when nothing needed copying (every repeat 1, or only
    # size-1 dims repeated); torch's repeat always copies, so the result shares nothing.
    same_memory = backend.memory_owner(tiled._array) is backend.memory_owner(x._array)
    return Clone.apply(tiled) if same_memory else tiled


# ----- more of PyTorch's vocabulary, composed of the ops above --------------------------------
def _int(fn, name, value):
    value = dtypes.index_of(value)       # a 0-d integer tensor is its int, as torch reads it
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn}: {name} must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def _ints(fn, name, value):
    # an int or a sequence of ints (read as the factories read one: (1, True) is (1, 1)), as
    # a tuple
    if isinstance(value, (tuple, list)):
        return tuple(_int(fn, name, v) for v in dtypes.factory_shape(value, f"{fn}(): {name}"))
    value = dtypes.index_of(value)       # a 0-d integer tensor is its int, as torch reads it
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn}: {name} must be an int or a tuple of ints, got "
                        f"{type(value).__name__} {value!r}")
    return (int(value),)


def _dim(fn, x, dim):
    # one dim of x, which must have dims: torch refuses dim 0 of a 0-d tensor here
    axis = normalize_axis(fn, dim, x.ndim, single=True)
    if x.ndim == 0:
        raise AxisError(f"{fn}: dim {dim} given, but the tensor is 0-d and has no dims")
    return axis


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-D tensors (``torch.meshgrid``): output i holds tensors[i]'s
    values along dim i (``indexing="ij"``, torch's default, which warns when it is not
    given) or with the first two dims swapped (``"xy"``); each is an expansion of its input,
    so gradients sum back into it.

    Example:
        >>> ys, xs = mg.meshgrid(mg.arange(3), mg.arange(4), indexing="ij")   # (3, 4) each
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid: expects a non-empty list of tensors")
    for i, t in enumerate(tensors):
        check_tensor("meshgrid", t)
        if t.ndim > 1:
            raise RuntimeError(f"meshgrid: expects 0-d or 1-d tensors, got tensors[{i}] of "
                               f"shape {t.shape}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"meshgrid expects all tensors to have the same dtype, got "
                               f"{tensors[0].dtype} and {t.dtype} (tensors[{i}])")
    if indexing is None:
        warnings.warn("meshgrid: the indexing argument will be required; pass "
                      "indexing='ij' for this default (torch warns the same)", UserWarning,
                      stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    sizes = [t.size for t in tensors]               # a 0-d tensor counts as one value
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        order[0], order[1] = 1, 0                   # x along columns, y along rows
    shape = tuple(sizes[k] for k in order)
    grids = []
    for i, t in enumerate(tensors):
        place = [1] * len(tensors)
        place[order.index(i)] = sizes[i]
        grids.append(expand(reshape(t, tuple(place)), *shape))
    return tuple(grids)


def unbind(input, dim=NOT_GIVEN, *, axis=None):
    """The slices of x along ``dim`` (0 when left out; ``axis``: NumPy's name for it), a tuple of
    views without that dim (``torch.unbind``).

    Example:
        >>> q, k, v = qkv.unbind(0)              # (3, B, T, C) -> 3 x (B, T, C)
    """
    if (dim := int_dim("unbind", dim)) is None or axis is not None:
        dim = numpy_dim("unbind", dim, axis, default=0)
    axis = _dim("unbind", check_tensor("unbind", input), dim)
    if input.shape[axis] == 0:
        return ()
    shape = input.shape[:axis] + input.shape[axis + 1:]
    pieces = Split.apply(input, sizes=(1,) * input.shape[axis], axis=axis)       # one node
    return tuple(Reshape.apply(piece, shape=shape) for piece in pieces)


def unflatten(input, dim, sizes):
    """Dim ``dim`` of x split into dims of ``sizes``, a tuple of ints of which one may be -1
    (inferred) (``torch.unflatten``); the inverse of ``flatten``.

    Example:
        >>> x.unflatten(-1, (heads, -1))         # (B, T, C) -> (B, T, heads, C // heads)
    """
    check_tensor("unflatten", input)
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(f"unflatten: sizes must be a tuple of ints, got "
                        f"{type(sizes).__name__} {sizes!r}")
    sizes = tuple(_int("unflatten", "sizes", n)          # (6, True) is (6, 1), as torch's
                  for n in dtypes.factory_shape(sizes, "unflatten(): sizes"))
    axis = normalize_axis("unflatten", dim, input.ndim, single=True)
    if input.ndim == 0:
        raise RuntimeError("unflatten: a 0-d tensor has no dim to unflatten")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1 or any(n < -1 for n in sizes):
        raise RuntimeError(f"unflatten: sizes must be >= 0, with at most one -1 (inferred), "
                           f"got {sizes}")
    size, known = input.shape[axis], math.prod(n for n in sizes if n != -1)
    shape = sizes
    if -1 in sizes:
        if known == 0:
            raise RuntimeError(f"unflatten: the -1 of sizes {sizes} is ambiguous: the other "
                               "sizes multiply to 0, so any size fits")
        shape = tuple(size // known if n == -1 else n for n in sizes)
    if math.prod(shape) != size:
        raise RuntimeError(f"unflatten: sizes {sizes} don't multiply up to the size of dim "
                           f"{axis} ({size}) of the tensor of shape {input.shape}")
    return reshape(input, input.shape[:axis] + shape + input.shape[axis + 1:])


def movedim(input, source, destination):
    """x with its dims ``source`` moved to the places ``destination`` (two ints or two
    sequences of one length), the other dims kept in order: a view (``torch.movedim``;
    ``moveaxis`` is the same).

    Example:
        >>> images.movedim(-1, 1)                # (N, H, W, C) -> (N, C, H, W)
    """
    check_tensor("movedim", input)
    given = {"source": _ints("movedim", "source", source),
             "destination": _ints("movedim", "destination", destination)}
    if len(given["source"]) != len(given["destination"]):
        raise RuntimeError(f"movedim: source {list(given['source'])} and destination "
                           f"{list(given['destination'])} must hold the same number of dims")
    dims = {}
    for name, values in given.items():
        dims[name] = [normalize_axis("movedim", d, input.ndim, single=True) for d in values]
        if len(set(dims[name])) != len(values):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(values)})")
    order = [None] * input.ndim
    for src, dst in zip(dims["source"], dims["destination"]):
        if input.ndim:                               # a 0-d tensor's dim 0 moves nowhere
            order[dst] = src
    rest = iter(d for d in range(input.ndim) if d not in dims["source"])
    return Permute.apply(input, axes=tuple(next(rest) if d is None else d for d in order))


moveaxis = movedim


def _repeat_counts(fn, repeats, size):
    # the repeat of each of ``size`` slices, as a NumPy array (or an int for all)
    if not isinstance(repeats, _tensor.Tensor):
        if isinstance(repeats, (bool, np.bool_)) or not isinstance(repeats, numbers.Integral):
            raise TypeError(f"{fn}: repeats must be an int or an integer tensor, got "
                            f"{type(repeats).__name__} {repeats!r}")
        counts = int(repeats)
        if counts < 0:
            raise RuntimeError(f"{fn}: repeats must be non-negative, got {counts}")
        return counts
    counts = backend.to_numpy(repeats._array)
    if counts.dtype.kind not in "iu":
        raise NotImplementedError(f"{fn}: repeats must hold integers, got dtype {counts.dtype} "
                                  "(torch has no kernel for it either)")
    if counts.ndim > 1:
        raise RuntimeError(f"{fn}: repeats must be a 0-d or 1-D tensor, got shape "
                           f"{tuple(counts.shape)}")
    if counts.size != 1 and counts.size != size:
        raise RuntimeError(f"{fn}: repeats must have the same size as input along dim, but "
                           f"got {counts.size} repeats for {size} slices")
    if (counts < 0).any():
        raise RuntimeError(f"{fn}: repeats can not be negative, got {counts.tolist()}")
    return counts.reshape(()) if counts.size == 1 else counts


def repeat_interleave(input=None, repeats=None, dim=None, *, output_size=None):
    """Each slice of x along ``dim`` repeated ``repeats`` times in place, as NumPy's
    ``repeat`` (``torch.repeat_interleave``); without ``dim``, each element of the
    flattened x. ``repeats`` is an int, or an integer tensor of one count per slice (or one
    for all). ``repeat_interleave(counts)`` alone gives the int64 indices 0..n-1, each
    ``counts[i]`` times. ``output_size``, the result's length along ``dim``, is checked.

    Example:
        >>> mg.tensor([1, 2]).repeat_interleave(2)                # [1, 1, 2, 2]
        >>> kv.repeat_interleave(heads // kv_heads, dim=1)        # grouped-query attention
    """
    fn = "repeat_interleave"
    input, repeats = (repeats, None) if input is None else (input, repeats)  # (repeats=)
    check_tensor(fn, input)
    if repeats is None:                          # x holds the counts: their indices
        counts = _repeat_counts(fn, input, input.size)
        out = np.repeat(np.arange(input.size), counts)
        result = _tensor.Tensor._from_op(backend.to_device(out, input.device), None)
        axis = 0
    else:
        axis = 0 if dim is None else _dim(fn, input, dim)
        input = reshape(input, -1) if dim is None else input
        counts = _repeat_counts(fn, repeats, input.shape[axis])
        index = np.repeat(np.arange(input.shape[axis]), counts)
        index = backend.to_device(index, input.device)
        result = GetItem.apply(input, index=(slice(None),) * axis + (index,))
    if output_size is not None and _int(fn, "output_size", output_size) != result.shape[axis]:
        raise RuntimeError(f"{fn}: output_size {output_size} does not match the result's "
                           f"size {result.shape[axis]} along dim {axis}")
    return result


def narrow(input, dim=None, start=None, length=None, *, axis=None):
    """The view of ``length`` elements of dim ``dim`` from ``start`` (negative: from the
    end) (``torch.narrow``): ``x.narrow(1, start, length)`` is ``x[:, start:start + length]``.
    ``axis``: NumPy's name for ``dim``, as torch's.
    """
    if dim is None or start is None or length is None or axis is not None:
        dim = numpy_dim("narrow", dim, axis, missing=start is None or length is None)
    check_tensor("narrow", input)
    if isinstance(start, _tensor.Tensor):        # torch takes a 0-d integer tensor too
        start = tensor_start("narrow", start)
    start, length = _int("narrow", "start", start), _int("narrow", "length", length)
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor")
    axis = normalize_axis("narrow", dim, input.ndim, single=True)
    size = input.shape[axis]
    if not -size <= start <= size:
        raise OutOfRangeError(f"narrow: start {start} is out of range for dim {axis} of size "
                              f"{size} (expected {-size} <= start <= {size})")
    if length < 0:
        raise RuntimeError(f"narrow: length must be non-negative, got {length}")
    start = start + size if start < 0 else start
    if start + length > size:
        raise RuntimeError(f"narrow: start ({start}) + length ({length}) exceeds dimension "
                           f"size ({size}) of dim {axis}")
    return Slice.apply(input, index=(slice(None),) * axis + (slice(start, start + length),))


def _flipped(x, dims):
    axes = [normalize_axis("flip", _int("flip", "dims", d), x.ndim, single=True)
            for d in dtypes.factory_shape(dims, "flip(): dims")]      # (0, True) is (0, 1)
    for axis in axes:
        if axes.count(axis) > 1:
            raise RuntimeError(f"flip: dim {axis} appears multiple times in the list of dims "
                               f"{list(dims)}")
    if x.ndim == 0 or not axes:
        return Clone.apply(x)
    index = tuple(slice(None, None, -1) if a in axes else slice(None) for a in range(x.ndim))
    return Clone.apply(GetItem.apply(x, index=index))     # torch's flip copies: no view


def flip(input, dims):
    """x with the order of the elements along each dim of ``dims`` (a sequence of ints)
    reversed, in new memory (``torch.flip``); the method also takes the dims one by one:
    ``x.flip(0, 1)``."""
    check_tensor("flip", input)
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip: dims must be a tuple of ints, got {type(dims).__name__} "
                        f"{dims!r}; x.flip(d) takes a single int")
    return _flipped(input, dims)


def _flip_method(x, *dims, **by_name):
    # torch's x.flip(0, 1), x.flip((0, 1)) and x.flip(dims=(0, 1))
    if by_name.keys() - {"dims"} or (by_name and dims):
        raise TypeError(f"flip() got unexpected or repeated arguments {sorted(by_name)}")
    return flip(x, by_name["dims"]) if by_name else _flipped(x, sizes_of(dims, None, "dims"))


_flip_method.__name__ = _flip_method.__qualname__ = "flip"
_flip_method.__doc__ = flip.__doc__
flip.method = _flip_method


def _rolled(x, shift, axis):
    # x[-s:] then x[:-s] along axis, s = shift mod n; x itself when nothing moves
    size = x.shape[axis]
    if size == 0 or shift % size == 0:
        return x
    split_at = size - shift % size
    return concatenate([narrow(x, axis, split_at, size - split_at),
                        narrow(x, axis, 0, split_at)], axis)


def roll(input, shifts, dims=None):
    """x rotated by ``shifts`` along ``dims`` (ints, or sequences of one length): elements
    pushed past the end come back at the start (``torch.roll``); without ``dims``, the
    flattened x rotated, in x's shape. A new tensor.

    Example:
        >>> mg.arange(5).roll(2)                 # [3, 4, 0, 1, 2]
    """
    check_tensor("roll", input)
    shifts = _ints("roll", "shifts", shifts)
    if not shifts:
        raise RuntimeError("roll: `shifts` required, got none")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll: without dims, shifts must be one int, got {shifts}")
        flat = reshape(input, -1)
        out = _rolled(flat, shifts[0], 0)
        return Clone.apply(input) if out is flat else reshape(out, input.shape)
    dims = _ints("roll", "dims", dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts and dims must align, got {len(shifts)} shifts "
                           f"{shifts} and {len(dims)} dims {dims}")
    axes = [_dim("roll", input, d) for d in dims]
    out = input
    for shift, axis in zip(shifts, axes):
        out = _rolled(out, shift, axis)
    return Clone.apply(input) if out is input else out


def expand_as(x, other):
    """``x.expand(other.shape)``: a broadcast view of x in ``other``'s shape
    (``torch.Tensor.expand_as``)."""
    check_tensor("expand_as", x)
    if not isinstance(other, _tensor.Tensor):
        raise TypeError(f"expand_as: other must be a Tensor, got {type(other).__name__}")
    return Expand.apply(x, shape=expanded_shape("expand_as", x.shape, other.shape))


def ravel(input):
    """x as one contiguous dim (``torch.ravel``): a view of a contiguous x, else a copy."""
    return reshape(contiguous(check_tensor("ravel", input)), -1)


# ----- new tensors of x's dtype and device: x.new_tensor(...) --------------------------------
def filled(fn, shape, value, dtype):
    """A NumPy array of ``shape`` holding ``value`` (a real number, or a 0-d tensor)
    in ``dtype``; refused with torch's error when the dtype cannot hold it (an unsigned
    dtype takes a negative value modulo 2**bits, as torch's)."""
    if isinstance(value, _tensor.Tensor):    # torch reads a number from a 0-d one only
        if value.ndim != 0:
            raise TypeError(f"{fn}: fill_value must be a number or a 0-d tensor, got a "
                            f"tensor of shape {tuple(value.shape)}")
        value = value.item()
    if not isinstance(value, (numbers.Number, np.bool_)):
        raise TypeError(f"{fn}: fill_value must be a number, got "
                        f"{type(value).__name__} {value!r}")
    dtype = np.dtype(dtype)          # (a complex value into a real dtype: torch's error)
    return np.full(shape, fitted(fn, value, dtype), dtype=dtype)


def new_tensor(x, data, *, dtype=None, device=None, requires_grad=False):
    """A copy of ``data`` (numbers, nested lists, an array or a tensor, taken outside the
    graph) in x's dtype and on x's device unless given (``torch.Tensor.new_tensor``; a float
    given to an integer x is truncated, as torch's)."""
    data = data.detach()._array if isinstance(data, _tensor.Tensor) else data
    dtype = x.dtype if dtype is None else dtypes.as_dtype(dtype)
    device = x.device if device is None else device
    array = backend.new_array(data, dtype, device)
    return _tensor.Tensor._leaf("new_tensor", array, requires_grad)
