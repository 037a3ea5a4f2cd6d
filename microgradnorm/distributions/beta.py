r"""``Beta``, on [0, 1] with concentrations a (``concentration1``) and b
(``concentration0``) (``torch.distributions.Beta``): density
:math:`x^{a - 1}(1 - x)^{b - 1} / B(a, b)`, the first coordinate of Dirichlet([a, b])."""

from ..ops.shape import stack
from ..tensor import tensor
from ..ops.torch_more import lgamma
from .dirichlet import Dirichlet
from .distribution import SCALAR, ExponentialFamily
from . import constraints
from .utils import broadcast_all, is_number

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    r"""The Beta distribution of concentrations a > 0 and b > 0.

    Formula:
        :math:`\log p(x) = (a - 1)\log x + (b - 1)\log(1 - x) - \log B(a, b)`, through
        Dirichlet([a, b]) at [x, 1 - x]; draws the Dirichlet's first coordinate.

    Args:
        concentration1: a. concentration0: b (numbers or tensors, broadcast).
        validate_args: the checks.

    Shape:
        batch_shape: the broadcast shape (() when both are numbers); event_shape: ().

    Example:
        >>> Beta(2.0, 5.0).mean           # tensor(0.2857)
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if is_number(concentration1) and is_number(concentration0):
            both = tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        return self._expand_params(Beta, batch_shape, _instance, ("_dirichlet",))

    @property
    def mean(self):
        """a / (a + b)."""
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        """(a - 1) / (a + b - 2) where a, b > 1 (the Dirichlet's mode)."""
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        """ab / ((a + b)²(a + b + 1))."""
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=SCALAR):
        """The first coordinate of a Dirichlet([a, b]) draw."""
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        """The Dirichlet's log density at [x, 1 - x]."""
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        """The Dirichlet's entropy."""
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        """a."""
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        """b."""
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return lgamma(x) + lgamma(y) - lgamma(x + y)
