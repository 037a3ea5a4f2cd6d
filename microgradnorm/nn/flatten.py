"""Shape Modules: Identity, Flatten and Unflatten (``torch.nn``'s), each ``forward`` the
tensor op of its name."""

import numbers

from ..dtypes import check_number, index_of
from .module import Module


class Identity(Module):
    """Its input, unchanged: a placeholder (a layer switched off). Takes any arguments and
    ignores them, as PyTorch's.

    Example:
        >>> head = nn.Identity() if features_only else nn.Linear(C, classes)
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        """``input`` itself. Shape: (*) -> (*)."""
        return input


class Flatten(Module):
    """Dims ``start_dim`` to ``end_dim`` (inclusive) merged into one (``Tensor.flatten``);
    by default every dim but the batch dim.

    Shape:
        input (N, *dims), output (N, prod(dims)) by default.

    Example:
        >>> nn.Flatten()(mg.zeros(8, 3, 4, 4)).shape           # (8, 48)
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        # a bool is kept (torch's builds; its call refuses it), a 0-d int tensor is its int
        start_dim, end_dim = index_of(start_dim), index_of(end_dim)
        for name, dim in (("start_dim", start_dim), ("end_dim", end_dim)):
            if dim.__class__ is not bool:
                check_number("Flatten", name, dim, integer=True)
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        """``input.flatten(start_dim, end_dim)``. Shape: (*, S..., *) -> (*, prod(S), *)."""
        return self._check_input(input).flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Dim ``dim`` split into dims of ``unflattened_size`` (``Tensor.unflatten``), one of
    which may be -1 (inferred); the inverse of ``Flatten``.

    Shape:
        input (*, S, *) with S = prod(unflattened_size), output (*, *unflattened_size, *).

    Example:
        >>> nn.Unflatten(1, (3, 4, 4))(mg.zeros(8, 48)).shape   # (8, 3, 4, 4)
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        dim = index_of(dim)                      # a 0-d integer tensor is its int, as torch's
        check_number("Unflatten", "dim", dim, integer=True)
        if not isinstance(unflattened_size, (tuple, list)) or not all(
                isinstance(n, numbers.Integral) and not isinstance(n, bool)
                for n in unflattened_size):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple or list of ints, got "
                            f"{unflattened_size!r}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        """``input.unflatten(dim, unflattened_size)``. Shape: (*, S, *) -> (*, *sizes, *)."""
        return self._check_input(input).unflatten(self.dim, tuple(self.unflattened_size))

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
