"""The transforms torch builds of others, of a distribution or onto matrices
(``torch.distributions.transforms``): ``CatTransform`` and ``StackTransform`` (other
transforms on slices), ``CumulativeDistributionTransform`` (a distribution's CDF),
``CorrCholeskyTransform`` (real vectors onto Cholesky factors of correlation matrices) and
``PositiveDefiniteTransform`` (square matrices onto positive-definite ones); torch's
formulas, composed of tensor ops so they differentiate."""

import math

from ..functional import softplus
from ..dtypes import finfo
from ..factories import arange, eye
from ..linalg import cholesky
from ..ops.shape import cat, stack
from ..padding import pad
from . import constraints
from .constraint_registry import biject_to, transform_to
from .transforms import Transform
from .transforms_more import LowerCholeskyTransform
from .utils import lazy_property, sum_rightmost

__all__ = ["CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "PositiveDefiniteTransform", "StackTransform", "tril_matrix_to_vec",
           "vec_to_tril_matrix"]


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (below diagonal ``diag``) of each matrix, row by row
    (``torch.distributions.utils.tril_matrix_to_vec``)."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    index = arange(n)
    mask = index < index.reshape(-1, 1) + (diag + 1)
    return mat[..., mask]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: a lower-triangular matrix, zeros elsewhere
    (``torch.distributions.utils.vec_to_tril_matrix``)."""
    size = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * size + 4 * abs(diag) * (diag + 1))
         ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    index = arange(n)
    mask = (index < index.reshape(-1, 1) + (diag + 1)).reshape(-1)
    # the vector's entries scattered into the masked places (a graph op, unlike setitem)
    positions = arange(n * n)[mask]
    flat = vec.new_zeros(tuple(vec.shape[:-1]) + (n * n,))
    flat = flat.index_add(-1, positions, vec)
    return flat.reshape(tuple(vec.shape[:-1]) + (n, n))


def _check_dim(dim, value, name="tensor"):
    if not -value.ndim <= dim < value.ndim:
        raise AssertionError(f"dim {dim} out of range for {name} with {value.ndim} "
                             "dimensions")


class CorrCholeskyTransform(Transform):
    r"""Real vectors of length D(D − 1)/2 onto the lower Cholesky factors of D × D
    correlation matrices: tanh, then stick breaking of each row's squares.

    Formula:
        :math:`r = \tanh(x)` below the diagonal, :math:`y_{ij} = r_{ij}\sqrt{1 -
        \sum_{k<j} r_{ik}^2}`-style products, ones on the diagonal.

    Example:
        >>> CorrCholeskyTransform()(mg.zeros(3))          # the 3 × 3 identity
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = x.tanh()
        eps = finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z = r ** 2
        z1m_cumprod_sqrt = (1 - z).sqrt().cumprod(-1)
        r = r + eye(r.shape[-1], dtype=r.dtype)
        return r * pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        """Of x and the flattened strict lower triangle of y: the stick breaking's and
        tanh's."""
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        """(..., N) to (..., D, D), N = D(D − 1)/2."""
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        """(..., D, D) to (..., D(D − 1)/2)."""
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


class CumulativeDistributionTransform(Transform):
    """A distribution's CDF as a transform onto [0, 1]: its inverse the ICDF, its
    log-Jacobian the log density.

    Args:
        distribution: a Distribution with ``cdf``, ``icdf`` and ``log_prob``.
        cache_size: 0 or 1.

    Example:
        >>> CumulativeDistributionTransform(Normal(0.0, 1.0))(mg.zeros(1))     # [0.5]
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        """The distribution's support."""
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        """log p(x)."""
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        """The same transform with ``cache_size``."""
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)


class PositiveDefiniteTransform(Transform):
    """Square matrices onto positive-definite ones: L Lᵀ of ``LowerCholeskyTransform``'s L;
    the inverse through the Cholesky factor.

    Example:
        >>> PositiveDefiniteTransform()(mg.zeros(2, 2))           # the identity
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(cholesky(y))


class CatTransform(Transform):
    """``tseq``'s transforms on consecutive slices of ``lengths`` along ``dim``,
    concatenated.

    Args:
        tseq: Transforms. dim: the dim sliced. lengths: each slice's length (1 each).
        cache_size: 0 or 1, given to every part.

    Example:
        >>> CatTransform([ExpTransform(), identity_transform], 0, [2, 1])(mg.zeros(3))
    """

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self):
        """The largest part's."""
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        """The lengths' sum."""
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        """The same transform with ``cache_size``."""
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, value, name):
        _check_dim(self.dim, value, name)
        if value.shape[self.dim] != self.length:
            raise AssertionError(f"{name}.size({self.dim}) = {value.shape[self.dim]} must "
                                 f"equal length {self.length}")

    def _map(self, value, inverse):
        self._check(value, "y" if inverse else "x")
        parts, start = [], 0
        for transform, length in zip(self.transforms, self.lengths):
            piece = value.narrow(self.dim, start, length)
            parts.append(transform.inv(piece) if inverse else transform(piece))
            start = start + length
        return cat(parts, self.dim)

    def _call(self, x):
        return self._map(x, False)

    def _inverse(self, y):
        return self._map(y, True)

    def log_abs_det_jacobian(self, x, y):
        """Each part's, summed over the event dims it lacks; concatenated along ``dim``
        where that is a batch dim, summed otherwise."""
        self._check(x, "x")
        self._check(y, "y")
        parts, start = [], 0
        for transform, length in zip(self.transforms, self.lengths):
            part = transform.log_abs_det_jacobian(x.narrow(self.dim, start, length),
                                                  y.narrow(self.dim, start, length))
            if transform.event_dim < self.event_dim:
                part = sum_rightmost(part, self.event_dim - transform.event_dim)
            parts.append(part)
            start = start + length
        dim = self.dim - x.ndim if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        return cat(parts, dim) if dim < 0 else sum(parts)

    @property
    def bijective(self):
        """Whether every part is."""
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        """The parts' domains, concatenated."""
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        """The parts' codomains, concatenated."""
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """``tseq``'s transforms on the entries of ``dim``, one each, stacked.

    Args:
        tseq: Transforms, one per entry of ``dim``. dim: the dim. cache_size: 0 or 1.

    Example:
        >>> StackTransform([ExpTransform(), identity_transform], 1)(mg.zeros(4, 2))
    """

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        """The same transform with ``cache_size``."""
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _check(self, value, name):
        _check_dim(self.dim, value, name)
        if value.shape[self.dim] != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {value.shape[self.dim]} must "
                                 f"equal len(transforms) {len(self.transforms)}")

    def _call(self, x):
        self._check(x, "x")
        return stack([t(part) for part, t in zip(self._slice(x), self.transforms)], self.dim)

    def _inverse(self, y):
        self._check(y, "y")
        return stack([t.inv(part) for part, t in zip(self._slice(y), self.transforms)],
                     self.dim)

    def log_abs_det_jacobian(self, x, y):
        """Each entry's, stacked along ``dim``."""
        self._check(x, "x")
        self._check(y, "y")
        return stack([t.log_abs_det_jacobian(a, b) for a, b, t in
                      zip(self._slice(x), self._slice(y), self.transforms)], self.dim)

    @property
    def bijective(self):
        """Whether every part is."""
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        """The parts' domains, stacked."""
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        """The parts' codomains, stacked."""
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


# biject_to / transform_to of the constraints these transforms reach, as torch registers
@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return PositiveDefiniteTransform()


@biject_to.register(constraints.corr_cholesky)
@transform_to.register(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint):
    return CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim,
                        constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim,
                        constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
