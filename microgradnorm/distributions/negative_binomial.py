r"""``NegativeBinomial``, the number of successes before ``total_count`` failures, each
trial a success with probability p (``torch.distributions.NegativeBinomial``): a Poisson of
a Gamma(total_count, p/(1 - p)) rate."""

from ..autograd import no_grad
from ..functional import logsigmoid
from ..ops.elementwise import exp, sigmoid
from ..ops.torch_more import lgamma
from ..poisson import poisson
from .distribution import SCALAR, Distribution
from . import constraints
from .gamma import Gamma
from .utils import BinaryParams, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryParams, Distribution):
    r"""The negative binomial distribution, given by ``probs`` p in [0, 1) or ``logits``.

    Formula:
        :math:`\log P(k) = r\log\sigma(-l) + k\log\sigma(l) + \log\Gamma(r + k) -
        \log\Gamma(1 + k) - \log\Gamma(r)` (0 where r + k = 0); a draw is
        ``poisson(Gamma(r, e^{-l}).sample())`` (torch's draws for the same seed).

    Args:
        total_count: r >= 0 (number or tensor). probs: p, or logits: l (one of the two).
        validate_args: the checks.

    Shape:
        batch_shape: the broadcast shape; event_shape: ().

    Example:
        >>> NegativeBinomial(5.0, probs=mg.tensor([0.3])).mean        # r p / (1 - p)
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        self._set_count_and_param(total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._expand_params(NegativeBinomial, batch_shape, _instance,
                                  ("total_count", "probs", "logits"))
        new._param = new.logits if "logits" in self.__dict__ else new.probs
        return new

    @property
    def mean(self):
        """r e^l = r p / (1 - p)."""
        return self.total_count * exp(self.logits)

    @property
    def mode(self):
        """floor((r - 1) e^l), at least 0."""
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        """mean / (1 - p)."""
        return self.mean / sigmoid(-self.logits)

    @property
    def param_shape(self):
        """The given parameter's shape."""
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=SCALAR):
        """A Poisson count of a Gamma rate, outside the graph."""
        with no_grad():
            return poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        """The log mass (class docstring)."""
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * logsigmoid(-self.logits)
                                 + value * logsigmoid(self.logits))
        log_normalization = (-lgamma(self.total_count + value) + lgamma(1.0 + value)
                             + lgamma(self.total_count))
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
