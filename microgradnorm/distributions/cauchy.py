r"""``Cauchy``, the Lorentz distribution of location x₀ and scale γ
(``torch.distributions.Cauchy``): density :math:`1 / (\pi\gamma(1 + ((x - x_0)/\gamma)^2))`."""

import math

from ..factories import full
from ..ops.special import atan, tan
from .distribution import SCALAR, Distribution
from . import constraints
from .utils import broadcast_all, is_number

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    r"""The Cauchy distribution (no mean, infinite variance).

    Formula:
        :math:`\log p(x) = -\log\pi - \log\gamma - \log(1 + z^2)`, z = (x - x₀)/γ;
        ``rsample``: x₀ + εγ, ε from ``cauchy_`` (torch's draws for the same seed).

    Args:
        loc: x₀. scale: γ > 0 (numbers or tensors, broadcast). validate_args: the checks.

    Shape:
        batch_shape: loc and scale broadcast; event_shape: ().

    Example:
        >>> Cauchy(0.0, 1.0).cdf(mg.tensor(1.0))        # tensor(0.7500)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = is_number(loc) and is_number(scale)
        super().__init__(SCALAR if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with loc and scale expanded to ``batch_shape``."""
        return self._expand_params(Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        """NaN (undefined)."""
        return full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                    device=self.loc.device)

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """inf."""
        return full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                    device=self.loc.device)

    def rsample(self, sample_shape=SCALAR):
        """x₀ + εγ, ε standard Cauchy: differentiable in x₀ and γ."""
        shape = self._extended_shape(sample_shape)
        eps = self.loc.new_empty(shape).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        """-log π - log γ - log1p(z²)."""
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        """atan(z)/π + ½."""
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        """x₀ + γ tan(π(p - ½))."""
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        """log 4π + log γ."""
        return math.log(4 * math.pi) + self.scale.log()
