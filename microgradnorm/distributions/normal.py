r"""``Normal``, the Gaussian of mean ``loc`` and standard deviation ``scale``
(``torch.distributions.Normal``): density
:math:`p(x) = \frac{1}{\sigma\sqrt{2\pi}} e^{-(x - \mu)^2 / 2\sigma^2}`."""

import math

from ..autograd import no_grad
from ..factories import normal
from ..ops.elementwise import erf
from ..ops.special import erfinv
from .distribution import SCALAR, ExponentialFamily
from . import constraints
from .utils import broadcast_all, is_number, standard_normal

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    r"""The normal distribution N(loc, scale²), batched over the broadcast shape of its
    parameters.

    Formula:
        :math:`\log p(x) = -\frac{(x - \mu)^2}{2\sigma^2} - \log\sigma - \log\sqrt{2\pi}`;
        ``rsample``: :math:`\mu + \epsilon\sigma`, ε ~ N(0, 1) drawn as torch's
        ``_standard_normal`` draws it (the same values for the same seed).

    Args:
        loc: the mean μ (number or tensor). scale: the standard deviation σ > 0.
        validate_args: check σ > 0 and ``log_prob``'s values (default: on).

    Shape:
        batch_shape: loc and scale broadcast (() when both are numbers); event_shape: ().

    Example:
        >>> policy = Normal(mu, log_std.exp())            # (B, A)
        >>> a = policy.rsample(); logp = policy.log_prob(a).sum(-1)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = is_number(loc) and is_number(scale)
        super().__init__(SCALAR if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with loc and scale expanded to ``batch_shape``."""
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        new.loc, new.scale = self.loc.expand(batch_shape), self.scale.expand(batch_shape)
        super(Normal, new).__init__(batch_shape, validate_args=False)
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

    @property
    def stddev(self):
        """scale."""
        return self.scale

    @property
    def variance(self):
        """scale²."""
        return self.stddev.pow(2)

    def sample(self, sample_shape=SCALAR):
        """``mg.normal(loc, scale)`` over the draw's shape, outside the graph (torch's
        draws for the same seed)."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=SCALAR):
        """loc + ε·scale, ε ~ N(0, 1): differentiable in loc and scale."""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return (-((value - self.loc) ** 2) / (2 * var) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        r""":math:`\frac{1}{2}(1 + \mathrm{erf}((x - \mu) / \sigma\sqrt{2}))`."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        r""":math:`\mu + \sigma\sqrt{2}\,\mathrm{erfinv}(2p - 1)`."""
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        r""":math:`\frac{1}{2} + \frac{1}{2}\log 2\pi + \log\sigma`."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self):
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
