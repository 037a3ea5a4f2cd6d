"""The constraints torch builds of others or of Cholesky factors
(``torch.distributions.constraints.cat``, ``stack``, ``corr_cholesky``): a region of slices
along a dim, each slice its own constraint's; the lower Cholesky factors of correlation
matrices (rows of unit norm). ``constraints`` re-exports them."""

from ..dtypes import finfo
from ..linalg import vector_norm
from ..ops.shape import cat as _cat_tensors
from ..ops.shape import stack as _stack_tensors
from .constraints import Constraint, _LowerCholesky

__all__ = ["cat", "corr_cholesky", "stack"]


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: a positive diagonal and rows of unit
    Euclidean norm (within eps · n · 10)."""

    event_dim = 2

    def check(self, value):
        """Lower Cholesky, each row's norm 1 within the tolerance."""
        tol = finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = vector_norm(value.detach(), dim=-1)
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Cat(Constraint):
    """``cseq``'s constraints on consecutive slices of ``lengths`` along ``dim``.

    Args:
        cseq: constraints. dim: the dim sliced. lengths: each slice's length (1 each).
    """

    def __init__(self, cseq, dim=0, lengths=None):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq "
                                 f"({len(self.cseq)})")
        self.dim = dim

    @property
    def is_discrete(self):
        """Whether any part is."""
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        """The largest part's."""
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        """Each slice's check, concatenated along ``dim``."""
        if not -value.ndim <= self.dim < value.ndim:
            raise AssertionError(f"dim {self.dim} out of range for value with {value.ndim} "
                                 "dimensions")
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start = start + length
        return _cat_tensors(checks, self.dim)


class _Stack(Constraint):
    """``cseq``'s constraints on the entries of ``dim``, one each.

    Args:
        cseq: constraints. dim: the dim whose entries they constrain.
    """

    def __init__(self, cseq, dim=0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        """Whether any part is."""
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        """The largest part's, less the stacked dim where it is an event dim."""
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def check(self, value):
        """Each entry's check, stacked along ``dim``."""
        if not -value.ndim <= self.dim < value.ndim:
            raise AssertionError(f"dim {self.dim} out of range for value with {value.ndim} "
                                 "dimensions")
        parts = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return _stack_tensors([c.check(v) for v, c in zip(parts, self.cseq)], self.dim)


corr_cholesky = _CorrCholesky()
cat = _Cat
stack = _Stack
