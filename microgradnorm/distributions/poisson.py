r"""``Poisson``, counts of rate λ (``torch.distributions.Poisson``):
:math:`P(k) = \lambda^k e^{-\lambda} / k!`, drawn by ``mg.poisson`` (torch's draws)."""

from ..autograd import no_grad
from ..ops.elementwise import exp, log
from ..poisson import poisson
from .distribution import SCALAR, ExponentialFamily
from . import constraints
from .utils import broadcast_all, is_number

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    r"""The Poisson distribution of rate λ >= 0.

    Formula:
        :math:`\log P(k) = k\log\lambda - \lambda - \log\Gamma(k + 1)` (``xlogy``: 0 log 0
        = 0).

    Args:
        rate: λ >= 0 (number or tensor). validate_args: the checks.

    Shape:
        batch_shape: rate's shape; event_shape: ().

    Example:
        >>> Poisson(mg.tensor([1.0, 4.0])).log_prob(mg.tensor([0.0, 3.0]))
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = SCALAR if is_number(rate) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its rate expanded to ``batch_shape``."""
        return self._expand_params(Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        """λ."""
        return self.rate

    @property
    def mode(self):
        """floor(λ)."""
        return self.rate.floor()

    @property
    def variance(self):
        """λ."""
        return self.rate

    def sample(self, sample_shape=SCALAR):
        """``mg.poisson`` of λ over the draw's shape (torch's counts for the same seed)."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        """k log λ - λ - log Γ(k + 1)."""
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (log(self.rate),)

    def _log_normalizer(self, x):
        return exp(x)
