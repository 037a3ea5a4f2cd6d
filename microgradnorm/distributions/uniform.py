r"""``Uniform``, the uniform distribution on [low, high) (``torch.distributions.Uniform``):
density :math:`1 / (\text{high} - \text{low})` inside, 0 outside."""

import math

from ..factories import rand
from ..ops.elementwise import log
from .distribution import SCALAR, Distribution
from . import constraints
from .utils import broadcast_all, is_number

__all__ = ["Uniform"]


class Uniform(Distribution):
    r"""The uniform distribution on the half-open interval [low, high).

    Formula:
        :math:`\log p(x) = \log(1[\text{low} \le x] \cdot 1[x < \text{high}]) -
        \log(\text{high} - \text{low})` (-inf outside); ``rsample``:
        :math:`\text{low} + u(\text{high} - \text{low})`, u ~ U[0, 1) from ``mg.rand``
        (torch's draws for the same seed).

    Args:
        low, high: the bounds (numbers or tensors), low < high.

    Example:
        >>> Uniform(mg.zeros(3), mg.full((3,), 5.0)).sample()      # in [0, 5)
    """

    has_rsample = True

    @property
    def arg_constraints(self):
        """low below high, high above low."""
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        scalar = is_number(low) and is_number(high)
        super().__init__(SCALAR if scalar else self.low.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with low and high expanded to ``batch_shape``."""
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        new.low, new.high = self.low.expand(batch_shape), self.high.expand(batch_shape)
        super(Uniform, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """(high + low) / 2."""
        return (self.high + self.low) / 2

    @property
    def mode(self):
        """NaN: every point of the interval is one."""
        return math.nan * self.high

    @property
    def stddev(self):
        """(high - low) / √12."""
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        """(high - low)² / 12."""
        return (self.high - self.low).pow(2) / 12

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """[low, high]."""
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=SCALAR):
        """low + u·(high - low), u ~ U[0, 1): differentiable in low and high."""
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        """-log(high - low) inside, -inf outside."""
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return log(lb.mul(ub)) - log(self.high - self.low)

    def cdf(self, value):
        """(x - low) / (high - low), clamped to [0, 1]."""
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        """low + p·(high - low)."""
        return value * (self.high - self.low) + self.low

    def entropy(self):
        """log(high - low)."""
        return log(self.high - self.low)
