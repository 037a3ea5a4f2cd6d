r"""``Exponential``, the waiting time of rate λ (``torch.distributions.Exponential``):
density :math:`\lambda e^{-\lambda x}` for x >= 0."""

from ..factories import zeros_like
from ..ops.elementwise import exp, log
from ..ops.pointwise import log1p
from .distribution import SCALAR, ExponentialFamily
from . import constraints
from .utils import broadcast_all, is_number

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    r"""The exponential distribution of rate λ > 0.

    Formula:
        :math:`\log p(x) = \log\lambda - \lambda x`; ``rsample``: ε / λ, ε ~ Exp(1) drawn by
        ``exponential_`` (torch's draws for the same seed).

    Args:
        rate: λ > 0 (number or tensor). validate_args: check λ and ``log_prob``'s values.

    Shape:
        batch_shape: rate's shape (() for a number); event_shape: ().

    Example:
        >>> Exponential(mg.tensor([0.5, 2.0])).rsample((4,)).shape       # (4, 2)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = SCALAR if is_number(rate) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its rate expanded to ``batch_shape``."""
        return self._expand_params(Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        """1 / λ."""
        return self.rate.reciprocal()

    @property
    def mode(self):
        """0."""
        return zeros_like(self.rate)

    @property
    def stddev(self):
        """1 / λ."""
        return self.rate.reciprocal()

    @property
    def variance(self):
        """1 / λ²."""
        return self.rate.pow(-2)

    def rsample(self, sample_shape=SCALAR):
        """ε / λ, ε ~ Exp(1): differentiable in λ."""
        shape = self._extended_shape(sample_shape)
        return self.rate.new_empty(shape).exponential_() / self.rate

    def log_prob(self, value):
        """log λ - λx."""
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        """1 - exp(-λx)."""
        if self._validate_args:
            self._validate_sample(value)
        return 1 - exp(-self.rate * value)

    def icdf(self, value):
        """-log(1 - p) / λ."""
        return -log1p(-value) / self.rate

    def entropy(self):
        """1 - log λ."""
        return 1.0 - log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -log(-x)
