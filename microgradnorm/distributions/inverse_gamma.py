r"""``InverseGamma``, 1/X for X ~ Gamma(α, β) (``torch.distributions.InverseGamma``):
density :math:`\frac{\beta^\alpha}{\Gamma(\alpha)} x^{-\alpha - 1} e^{-\beta/x}`."""

import math

from ..ops.masking import where
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    r"""The inverse-gamma distribution (a Gamma's draws inverted, reparameterized).

    Formula:
        mean :math:`\beta/(\alpha - 1)` (inf for α <= 1); entropy
        :math:`\alpha + \log\beta + \log\Gamma(\alpha) - (1 + \alpha)\psi(\alpha)`.

    Args:
        concentration: α > 0. rate: β > 0 (numbers or tensors). validate_args: checks.

    Shape:
        batch_shape: the two broadcast; event_shape: ().

    Example:
        >>> InverseGamma(mg.tensor([3.0]), mg.tensor([2.0])).mean       # tensor([1.])
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        """α, the base's."""
        return self.base_dist.concentration

    @property
    def rate(self):
        """β, the base's."""
        return self.base_dist.rate

    @property
    def mean(self):
        """β/(α - 1) for α > 1, inf otherwise."""
        return where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self):
        """β/(α + 1)."""
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        """β²/((α - 1)²(α - 2)) for α > 2, inf otherwise."""
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return where(self.concentration > 2, result, math.inf)

    def entropy(self):
        """α + log β + log Γ(α) - (1 + α)ψ(α)."""
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())
