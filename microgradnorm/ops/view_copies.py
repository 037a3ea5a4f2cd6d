"""torch's ``*_copy`` functions: a view op's result in new memory (``permute_copy``,
``t_copy``, ``transpose_copy``, ``squeeze_copy``, ``unsqueeze_copy``, ``view_copy``,
``unfold_copy``, ``unbind_copy``, ``split_with_sizes_copy``, ``alias_copy``,
``as_strided_copy``, ``diagonal_copy``, ``expand_copy``, ``detach_copy``, ``select_copy``,
``slice_copy``, ``split_copy``, ``view_as_real_copy``, ``view_as_complex_copy``;
``narrow_copy`` lives in
``tensor_more.py``). Each is the view, then one ``Clone`` node: row-major memory, as
torch's, and the view's gradient through the graph."""

import numbers

from . import complex as complex_ops
from . import elementwise
from . import shape as shape_ops
from .base import check_tensor, normalize_axis


def _copied(view):
    return elementwise.Clone.apply(view)


def permute_copy(input, dims):
    """``torch.permute_copy``: ``input.permute(dims)`` in new memory."""
    check_tensor("permute_copy", input)
    return _copied(shape_ops.permute(input, dims))


def t_copy(input):
    """``torch.t_copy``: ``input.t()`` (a 0-d or 1-d input as it is) in new memory."""
    check_tensor("t_copy", input)
    return _copied(input.t())


def transpose_copy(input, dim0, dim1):
    """``torch.transpose_copy``: ``input.transpose(dim0, dim1)`` in new memory."""
    check_tensor("transpose_copy", input)
    return _copied(shape_ops.transpose(input, dim0, dim1))


def squeeze_copy(input, dim=None):
    """``torch.squeeze_copy``: ``input.squeeze(dim)`` (every size-1 dim without ``dim``; an
    int or a tuple of dims) in new memory."""
    check_tensor("squeeze_copy", input)
    view = input.squeeze() if dim is None else input.squeeze(dim)
    return _copied(view)


def unsqueeze_copy(input, dim):
    """``torch.unsqueeze_copy``: ``input.unsqueeze(dim)`` in new memory."""
    check_tensor("unsqueeze_copy", input)
    return _copied(shape_ops.unsqueeze(input, dim))


def view_copy(input, size):
    """``torch.view_copy``: ``input.view(size)`` in new memory; as torch's, an input whose
    strides no view of ``size`` fits is copied as ``reshape`` would; a dtype for ``size``
    reinterprets the bytes (``input.view(dtype)``)."""
    check_tensor("view_copy", input)
    if isinstance(size, (list, tuple, numbers.Integral)):
        return _copied(input.reshape(size))
    return _copied(input.view(size))


def unfold_copy(input, dimension, size, step):
    """``torch.unfold_copy``: ``input.unfold(dimension, size, step)`` (the windows as a new
    last dim) in new memory."""
    check_tensor("unfold_copy", input)
    return _copied(input.unfold(dimension, size, step))


def unbind_copy(input, dim=0):
    """``torch.unbind_copy``: the slices of ``input.unbind(dim)``, each in new memory."""
    check_tensor("unbind_copy", input)
    return tuple(_copied(t) for t in shape_ops.unbind(input, dim))


def split_with_sizes_copy(input, split_sizes, dim=0):
    """``torch.split_with_sizes_copy``: the pieces of ``input.split(split_sizes, dim)`` (a
    list of sizes that sum to the dim's), each in new memory, as a list."""
    check_tensor("split_with_sizes_copy", input)
    if not isinstance(split_sizes, (list, tuple)):
        raise TypeError(f"split_with_sizes_copy(): split_sizes must be a list of ints, got "
                        f"{type(split_sizes).__name__}")
    return [_copied(t) for t in shape_ops.split(input, list(split_sizes), dim)]


def alias_copy(input):
    """``torch.alias_copy``: ``input`` itself as a view (``alias``) in new memory: a copy,
    in the graph."""
    check_tensor("alias_copy", input)
    return _copied(input)


def as_strided_copy(input, size, stride, storage_offset=None):
    """``torch.as_strided_copy``: ``input.as_strided(size, stride, storage_offset)`` (a
    strided view of its storage) in new memory, row-major; torch's gradient, overlapping
    windows included."""
    check_tensor("as_strided_copy", input)
    return _copied(input.as_strided(size, stride, storage_offset))


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    """``torch.diagonal_copy``: ``input.diagonal(offset, dim1, dim2)`` (the diagonal as the
    last dim) in new memory."""
    check_tensor("diagonal_copy", input)
    return _copied(input.diagonal(offset, dim1, dim2))


def expand_copy(input, size, *, implicit=False):
    """``torch.expand_copy``: ``input.expand(size)`` (-1 keeps a dim; size-1 dims broadcast)
    in new memory, each repeated element its own; ``implicit`` is taken, as torch's, and
    changes nothing."""
    check_tensor("expand_copy", input)
    return _copied(input.expand(size) if isinstance(size, (list, tuple)) else
                   input.expand(size))


def detach_copy(input):
    """``torch.detach_copy``: ``input.detach()`` in new memory, outside the graph (torch's
    result of an input requiring grad claims to require grad too, and its backward raises:
    here it requires none)."""
    check_tensor("detach_copy", input)
    return input.detach().clone()


def select_copy(input, dim, index):
    """``torch.select_copy``: ``input.select(dim, index)`` (the dim removed) in new memory."""
    check_tensor("select_copy", input)
    return _copied(input.select(dim, index))


def slice_copy(input, dim=0, start=None, end=None, step=1):
    """``torch.slice_copy``: ``input``'s slice ``[start:end:step]`` along ``dim`` in new
    memory; bounds past the ends are clipped, as in Python slicing; ``step`` must be
    positive (torch's RuntimeError).

    Example:
        >>> mg.slice_copy(mg.arange(6.), 0, 1, 5, 2)          # tensor([1., 3.])
    """
    check_tensor("slice_copy", input)
    if not isinstance(step, numbers.Integral) or step <= 0:
        raise RuntimeError(f"slice_copy(): step must be a positive int, got {step!r}")
    if input.ndim == 0:
        raise IndexError("slice_copy(): slice() cannot be applied to a 0-dim tensor.")
    axis = normalize_axis("slice_copy", dim, input.ndim, single=True)
    key = (slice(None),) * axis + (slice(start, end, step),)
    return _copied(input[key])


def split_copy(input, split_size, dim=0):
    """``torch.split_copy``: the pieces of ``input.split(split_size, dim)`` (pieces of
    ``split_size``, an int, the last smaller), each in new memory, as a list; a list of sizes
    is ``split_with_sizes_copy``'s (torch's TypeError here)."""
    check_tensor("split_copy", input)
    if isinstance(split_size, bool) or not isinstance(split_size, numbers.Integral):
        raise TypeError(f"split_copy(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    return [_copied(t) for t in shape_ops.split(input, split_size, dim)]


def view_as_real_copy(input):
    """``torch.view_as_real_copy``: ``mg.view_as_real(input)`` (a complex tensor's real and
    imaginary parts as a last dim of 2) in new memory."""
    check_tensor("view_as_real_copy", input)
    return _copied(complex_ops.view_as_real(input))


def view_as_complex_copy(input):
    """``torch.view_as_complex_copy``: ``mg.view_as_complex(input)`` (a last dim of 2 read
    as complex numbers) in new memory."""
    check_tensor("view_as_complex_copy", input)
    return _copied(complex_ops.view_as_complex(input))
