r"""``LogNormal``, exp of a Normal(loc, scale) (``torch.distributions.LogNormal``) and
``HalfNormal``, |x| of a Normal(0, scale) (``torch.distributions.HalfNormal``)."""

import math

from ..factories import zeros_like
from ..ops.masking import where
from ..tensor import Tensor
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform, ExpTransform

__all__ = ["HalfNormal", "LogNormal"]


class LogNormal(TransformedDistribution):
    r"""The log-normal distribution: exp(X), X ~ N(loc, scale²).

    Formula:
        :math:`\log p(y) = \log\mathcal{N}(\log y; \mu, \sigma) - \log y`; mean
        :math:`e^{\mu + \sigma^2/2}`.

    Args:
        loc: μ. scale: σ > 0 (numbers or tensors). validate_args: the checks.

    Shape:
        batch_shape: loc and scale broadcast; event_shape: ().

    Example:
        >>> LogNormal(0.0, 1.0).sample((3,))           # positive
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        """μ, the base's."""
        return self.base_dist.loc

    @property
    def scale(self):
        """σ, the base's."""
        return self.base_dist.scale

    @property
    def mean(self):
        """exp(μ + σ²/2)."""
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        """exp(μ - σ²)."""
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        """(exp(σ²) - 1)·exp(2μ + σ²)."""
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        """The base's entropy + μ."""
        return self.base_dist.entropy() + self.loc


class FoldedAtZero:
    """A distribution symmetric about 0 folded onto [0, inf) by |x| (``HalfNormal``,
    ``HalfCauchy``: a TransformedDistribution of its ``_base`` class at loc 0 and
    ``AbsTransform``), and what it reads from that base: the scale, the density doubled for
    x >= 0 (-inf below), the CDF 2F(x) - 1, the inverse CDF F⁻¹((p + 1)/2), the entropy less
    log 2, the mode 0."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base = None                      # the class of (loc, scale) a subclass folds

    def __init__(self, scale, validate_args=None):
        base_dist = self._base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        """The base's scale."""
        return self.base_dist.scale

    @property
    def mode(self):
        """0."""
        return zeros_like(self.scale)

    def log_prob(self, value):
        """The base's log density + log 2 for x >= 0, -inf below."""
        if self._validate_args:
            self._validate_sample(value)
        if not isinstance(value, Tensor):
            value = self.scale.new_tensor(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        """2F(x) - 1, F the base's CDF."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        """The base's inverse CDF at (p + 1)/2."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        """The base's entropy - log 2."""
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(FoldedAtZero, TransformedDistribution):
    r"""The half-normal distribution: |X|, X ~ N(0, scale²).

    Formula:
        :math:`\log p(x) = \log\mathcal{N}(x; 0, \sigma) + \log 2` for x >= 0, -inf below.

    Args:
        scale: σ > 0 (number or tensor). validate_args: the checks.

    Shape:
        batch_shape: scale's shape; event_shape: ().

    Example:
        >>> HalfNormal(mg.ones(2)).mean               # √(2/π) each
    """

    _base = Normal

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """σ√(2/π)."""
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        """σ²(1 - 2/π)."""
        return self.scale.pow(2) * (1 - 2 / math.pi)
