r"""``HalfCauchy`` (|x| of a Cauchy(0, scale)), ``LogisticNormal`` (a Normal pushed onto the
simplex by stick breaking), ``ContinuousBernoulli`` (the [0, 1] density proportional to
:math:`p^x (1-p)^{1-x}`) and ``GeneralizedPareto``: torch's families formula for formula,
their draws torch's for one seed (``cauchy_``, ``normal_``, ``rand``)."""

import math

from ..autograd import no_grad
from ..factories import full, ones_like, rand, zeros_like
from ..losses import binary_cross_entropy_with_logits
from ..ops.elementwise import exp
from ..ops.logical import isclose
from ..ops.masking import where
from ..ops.pointwise import expm1, log1p
from . import constraints
from .cauchy import Cauchy
from .distribution import SCALAR, Distribution, ExponentialFamily
from .log_normal import FoldedAtZero
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms_more import StickBreakingTransform
from .utils import (broadcast_all, clamp_probs, is_number, lazy_property, logits_to_probs,
                    probs_to_logits)

__all__ = ["ContinuousBernoulli", "GeneralizedPareto", "HalfCauchy", "LogisticNormal"]


class HalfCauchy(FoldedAtZero, TransformedDistribution):
    r"""The half-Cauchy distribution: |X|, X ~ Cauchy(0, scale).

    Formula:
        :math:`\log p(x) = \log\mathrm{Cauchy}(x; 0, \gamma) + \log 2` for x >= 0, -inf
        below; mean inf.

    Args:
        scale: γ > 0 (number or tensor). validate_args: the checks.

    Shape:
        batch_shape: scale's shape; event_shape: ().

    Example:
        >>> HalfCauchy(mg.ones(2)).rsample()
    """

    _base = Cauchy

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """inf."""
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        """The base's (inf)."""
        return self.base_dist.variance


class LogisticNormal(TransformedDistribution):
    r"""The logistic-normal distribution on the simplex: stick breaking of a Normal
    (``StickBreakingTransform``), so K − 1 normals give a point of the K-simplex.

    Formula:
        :math:`x = \mathrm{StickBreaking}(y)`, :math:`y \sim \mathcal{N}(\mu, \sigma)`.

    Args:
        loc: μ, scale: σ > 0 (numbers or tensors, the last dim the K − 1 coordinates).

    Shape:
        batch_shape: the parameters' but the last dim; event_shape: (K,).

    Example:
        >>> LogisticNormal(mg.zeros(3), mg.ones(3)).sample()     # 4 entries summing to 1
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        """μ."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        """σ."""
        return self.base_dist.base_dist.scale


class ContinuousBernoulli(ExponentialFamily):
    r"""The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham,
    2019): :math:`p(x) = C(\lambda)\, \lambda^x (1-\lambda)^{1-x}`.

    Formula:
        :math:`\log p(x) = -\mathrm{BCE}(\mathrm{logits}, x) + \log C(\lambda)`,
        :math:`C(\lambda) = 2\tanh^{-1}(1-2\lambda)/(1-2\lambda)`, Taylor series within
        ``lims`` of 1/2, as torch's.

    Args:
        probs: λ in [0, 1], or logits (one of the two). lims: the interval around 1/2
            where the Taylor series are used.

    Example:
        >>> ContinuousBernoulli(probs=mg.tensor([0.2, 0.9])).rsample()
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            scalar = is_number(probs)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and \
                    not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            scalar = is_number(logits)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = SCALAR if scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameter expanded to ``batch_shape``."""
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = SCALAR + tuple(batch_shape)
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(batch_shape)
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return where(self._outside_unstable_region(), self.probs,
                     self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        # the log of the normalizing constant, a Taylor series near 1/2
        cut = self._cut_probs()
        below = where(cut <= 0.5, cut, zeros_like(cut))
        above = where(cut >= 0.5, cut, ones_like(cut))
        log_norm = (log1p(-cut) - cut.log()).abs().log() - where(
            cut <= 0.5, log1p(-2.0 * below), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        """λ/(2λ − 1) + 1/(log(1 − λ) − log λ); a Taylor series near 1/2."""
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (log1p(-cut) - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        """√variance."""
        return self.variance.sqrt()

    @property
    def variance(self):
        """λ(λ − 1)/(1 − 2λ)² + 1/(log(1 − λ) − log λ)²; a Taylor series near 1/2."""
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + \
            1.0 / (log1p(-cut) - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        """log(λ / (1 − λ))."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """λ, clamped away from 0 and 1."""
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        """The parameter's shape."""
        return self._param.size()

    def sample(self, sample_shape=SCALAR):
        """``icdf`` of ``rand`` draws (torch's), without a graph."""
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=SCALAR):
        """``icdf`` of ``rand`` draws: differentiable in the parameter."""
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        """-BCE(logits, x) + log C(λ)."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + \
            self._cont_bern_log_norm()

    def cdf(self, value):
        """(λ^x (1 − λ)^(1 − x) + λ − 1)/(2λ − 1), x near 1/2's λ: x; 0 below 0, 1 above 1."""
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, zeros_like(value),
                     where(value >= 1.0, ones_like(value), unbounded))

    def icdf(self, value):
        """The inverse of ``cdf``."""
        cut = self._cut_probs()
        return where(self._outside_unstable_region(),
                     (log1p(-cut + value * (2.0 * cut - 1.0)) - log1p(-cut))
                     / (cut.log() - log1p(-cut)), value)

    def entropy(self):
        """mean · (log(1 − λ) − log λ) − log C(λ) − log(1 − λ)."""
        log_probs0 = log1p(-self.probs)
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(outside, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = expm1(cut).abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)


class GeneralizedPareto(Distribution):
    r"""The generalized Pareto distribution of location μ, scale σ and concentration ξ.

    Formula:
        :math:`\log p(x) = -\log\sigma - (1/\xi + 1)\log(1 + \xi z)`, z = (x − μ)/σ
        (:math:`-\log\sigma - z` at ξ = 0); drawn by ``icdf`` of ``rand``.

    Args:
        loc: μ. scale: σ > 0. concentration: ξ (numbers or tensors).

    Shape:
        batch_shape: the three broadcast; event_shape: ().

    Example:
        >>> GeneralizedPareto(0.0, 1.0, 0.2).rsample((3,))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = is_number(loc) and is_number(scale) and is_number(concentration)
        super().__init__(SCALAR if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=SCALAR):
        """``icdf`` of ``rand`` draws (torch's): differentiable in the parameters."""
        u = rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def _safe(self):
        eq_zero = isclose(self.concentration, self.concentration.new_tensor(0.0))
        return eq_zero, where(eq_zero, ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        """-log σ - (1/ξ + 1) log1p(ξ z); -log σ - z at ξ = 0."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe()
        y = 1 / safe + ones_like(z)
        where_nonzero = where(y == 0, y, y * log1p(safe * z))
        return -self.scale.log() - where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        """log P(X > x): -log1p(ξ z)/ξ; -z at ξ = 0."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe()
        return where(eq_zero, -z, -log1p(safe * z) / safe)

    def log_cdf(self, value):
        """log1p(-exp(log survival))."""
        return log1p(-exp(self.log_survival_function(value)))

    def cdf(self, value):
        """exp(log_cdf)."""
        return exp(self.log_cdf(value))

    def icdf(self, value):
        """μ + σ/ξ · expm1(-ξ log1p(-u)); μ - σ log1p(-u) at ξ = 0."""
        eq_zero = isclose(self.concentration, zeros_like(self.concentration))
        safe = where(eq_zero, ones_like(self.concentration), self.concentration)
        logu = log1p(-value)
        where_nonzero = self.loc + self.scale / safe * expm1(-safe * logu)
        return where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        """μ + σ/(1 − ξ) for ξ < 1, NaN otherwise."""
        valid = self.concentration < 1
        safe = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self):
        """σ²/((1 − ξ)²(1 − 2ξ)) for ξ < 1/2, NaN otherwise."""
        valid = self.concentration < 0.5
        safe = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self):
        """log σ + ξ + 1."""
        return (self.scale.log() + self.concentration + 1).broadcast_to(self._batch_shape)

    @property
    def mode(self):
        """μ."""
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """[μ, μ − σ/ξ] for ξ < 0, [μ, inf) otherwise."""
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration,
                      math.inf)
        return constraints.interval(lower, upper)
