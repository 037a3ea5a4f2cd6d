r"""``MultivariateNormal``, the Gaussian of a mean vector and a covariance matrix
(``torch.distributions.MultivariateNormal``), held by the covariance's lower Cholesky factor
L (:math:`\Sigma = L L^\top`) whichever of the covariance, the precision or L is given."""

import math

from ..factories import eye
from ..linalg import cholesky, inv, solve_triangular
from ..ops.linalg import matmul
from ..ops.shape import flip, transpose
from ..ops.torch_more import broadcast_shapes
from .distribution import SCALAR, Distribution
from . import constraints
from .utils import lazy_property, standard_normal

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    # (..., n, n) matrices times (..., n) vectors, the batch dims broadcast
    return matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    r"""The squared Mahalanobis distance :math:`x^\top (L L^\top)^{-1} x = \lVert L^{-1} x
    \rVert^2`, one triangular solve: bx's batch dims fold into columns for each of bL's
    matrices (torch's arrangement, so the sums round as torch's do)."""
    n = bx.size(-1)
    bx_batch_shape = bx.shape[:-1]
    bx_batch_dims = len(bx_batch_shape)
    bL_batch_dims = bL.dim() - 2
    outer_batch_dims = bx_batch_dims - bL_batch_dims
    old_batch_dims = outer_batch_dims + bL_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bL_batch_dims
    # bx: (..., 1, j, i, 1, n) → (..., j, ..., i, ..., n): bL's batch dims gathered at the end
    bx_new_shape = bx.shape[:outer_batch_dims]
    for sL, sx in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1]):
        bx_new_shape += (sx // sL, sL)
    bx_new_shape += (n,)
    bx = bx.reshape(bx_new_shape)
    permute_dims = (list(range(outer_batch_dims))
                    + list(range(outer_batch_dims, new_batch_dims, 2))
                    + list(range(outer_batch_dims + 1, new_batch_dims, 2))
                    + [new_batch_dims])
    bx = bx.permute(permute_dims)
    flat_L = bL.reshape(-1, n, n)                                  # (b, n, n)
    flat_x = bx.reshape(-1, flat_L.size(0), n)                     # (c, b, n)
    flat_x_swap = flat_x.permute(1, 2, 0)                          # (b, n, c)
    M_swap = solve_triangular(flat_L, flat_x_swap, upper=False).pow(2).sum(-2)   # (b, c)
    M = M_swap.t()                                                 # (c, b)
    permuted_M = M.reshape(bx.shape[:-1])
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bL_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    return permuted_M.permute(permute_inv_dims).reshape(bx_batch_shape)


def _precision_to_scale_tril(P):
    # L with L Lᵀ = P⁻¹, from the Cholesky factor of P with its rows and columns reversed
    Lf = cholesky(flip(P, (-2, -1)))
    L_inv = transpose(flip(Lf, (-2, -1)), -2, -1)
    Id = eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return solve_triangular(L_inv, Id, upper=False)


class MultivariateNormal(Distribution):
    r"""The multivariate normal N(loc, Σ), Σ given as ``covariance_matrix``,
    ``precision_matrix`` (Σ⁻¹) or ``scale_tril`` (L, lower triangular with a positive
    diagonal): exactly one of them.

    Formula:
        :math:`\log p(x) = -\frac{1}{2}(k \log 2\pi + \lVert L^{-1}(x - \mu)\rVert^2) -
        \sum_i \log L_{ii}`; ``rsample``: :math:`\mu + L\epsilon`, ε ~ N(0, I) drawn as
        torch's ``_standard_normal`` draws it.

    Args:
        loc: the mean (..., k). covariance_matrix, precision_matrix: (..., k, k) symmetric
            positive definite. scale_tril: (..., k, k) lower triangular, positive diagonal.

    Shape:
        batch_shape: loc's and the matrix's batch dims broadcast; event_shape: (k,).

    Example:
        >>> q = MultivariateNormal(mu, scale_tril=L)         # mu (B, k), L (B, k, k)
        >>> z = q.rsample(); kl = kl_divergence(q, MultivariateNormal(0 * mu, mg.eye(k)))
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix),
                                           ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = SCALAR + broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape`` (its factor shared)."""
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape,
                                                validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        """L, over the batch."""
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        """L Lᵀ, over the batch."""
        L = self._unbroadcasted_scale_tril
        return matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """(L Lᵀ)⁻¹ = L⁻ᵀ L⁻¹ (torch's ``cholesky_inverse``), L⁻¹ a general inverse: a
        function of all of L, whose gradient reaches the entries above the diagonal as
        torch's does."""
        L_inv = inv(self._unbroadcasted_scale_tril)
        return matmul(L_inv.mT, L_inv).expand(self._matrix_shape())

    @property
    def mean(self):
        """loc."""
        return self.loc

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """The covariance's diagonal: the squared rows of L summed."""
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=SCALAR):
        """loc + L ε, ε ~ N(0, I): differentiable in loc and the matrix."""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        """The log density at ``value`` (..., k)."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        r""":math:`\frac{k}{2}(1 + \log 2\pi) + \sum_i \log L_{ii}`."""
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
