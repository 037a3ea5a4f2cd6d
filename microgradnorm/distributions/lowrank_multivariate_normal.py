r"""``LowRankMultivariateNormal``, a Gaussian whose covariance is a low-rank factor plus a
diagonal, :math:`\Sigma = WW^\top + D` (``torch.distributions.LowRankMultivariateNormal``):
its log density, entropy and KLs through the m × m capacitance matrix
:math:`I + W^\top D^{-1} W` (Woodbury), never the n × n covariance."""

import math

from ..factories import eye
from ..linalg import cholesky, solve_triangular
from ..ops.linalg import matmul
from ..ops.arrange import broadcast_tensors, diag_embed
from .distribution import SCALAR, Distribution
from . import constraints
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import lazy_property, standard_normal

__all__ = ["LowRankMultivariateNormal"]


def _batch_capacitance_tril(W, D):
    # the Cholesky factor of I + Wᵀ D⁻¹ W
    m = W.size(-1)
    wt_dinv = W.mT / D.unsqueeze(-2)
    return cholesky(matmul(wt_dinv, W) + eye(m, dtype=W.dtype, device=W.device))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    # log det(WWᵀ + D) = log det(capacitance) + log det(D)
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    # xᵀ (WWᵀ + D)⁻¹ x by Woodbury
    wt_dinv = W.mT / D.unsqueeze(-2)
    wt_dinv_x = _batch_mv(wt_dinv, x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    r"""The normal distribution N(loc, WWᵀ + diag(D)) over the last dim of ``loc``.

    Formula:
        :math:`\log p(x) = -\frac12(n\log 2\pi + \log\det\Sigma + (x - \mu)^\top\Sigma^{-1}
        (x - \mu))` by Woodbury's identity; ``rsample``: :math:`\mu + W\epsilon_W +
        \sqrt{D}\epsilon_D` (the W-noise drawn first, as torch).

    Args:
        loc: μ (..., n). cov_factor: W (..., n, m). cov_diag: D > 0 (..., n); batch dims
            broadcast. validate_args: the checks.

    Shape:
        batch_shape: the broadcast batch dims; event_shape: (n,).

    Example:
        >>> d = LowRankMultivariateNormal(mg.zeros(5), mg.randn(5, 2), mg.ones(5))
        >>> d.log_prob(mg.zeros(5))
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc, self.cov_diag = loc_[..., 0], cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        super(LowRankMultivariateNormal, new).__init__(batch_shape, self.event_shape,
                                                       validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """loc."""
        return self.loc

    @property
    def mode(self):
        """loc."""
        return self.loc

    @lazy_property
    def variance(self):
        """The covariance's diagonal: Σ_j W_ij² + D_i."""
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        """The covariance's Cholesky factor, √D · chol(I + D^-½ WWᵀ D^-½)."""
        n = self._event_shape[0]
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / sqrt_d
        k = matmul(dinvsqrt_w, dinvsqrt_w.mT) + eye(n, dtype=sqrt_d.dtype,
                                                     device=sqrt_d.device)
        return (sqrt_d * cholesky(k)).expand(self._batch_shape + self._event_shape
                                             + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        """WWᵀ + diag(D)."""
        w = self._unbroadcasted_cov_factor
        covariance = matmul(w, w.mT) + diag_embed(self._unbroadcasted_cov_diag)
        return covariance.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        """D⁻¹ - AᵀA, A = L⁻¹WᵀD⁻¹ (L the capacitance's Cholesky factor)."""
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision = diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - a.mT @ a
        return precision.expand(self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape=SCALAR):
        """μ + Wε_W + √D ε_D: differentiable in μ, W and D."""
        shape = self._extended_shape(sample_shape)
        w_shape = shape[:-1] + self.cov_factor.shape[-1:]
        eps_w = standard_normal(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value):
        """The log density (class docstring)."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self):
        """½(n(1 + log 2π) + log det Σ)."""
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
