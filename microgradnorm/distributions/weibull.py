r"""``Weibull``, of scale λ and concentration k (``torch.distributions.Weibull``):
:math:`p(x) = \frac{k}{\lambda}(x/\lambda)^{k - 1} e^{-(x/\lambda)^k}`; drawn as
:math:`\lambda E^{1/k}`, E ~ Exponential(1)."""

from ..factories import ones_like
from ..ops.elementwise import exp, log
from ..ops.torch_more import lgamma
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    r"""The Weibull distribution.

    Formula:
        mean :math:`\lambda\Gamma(1 + 1/k)`; entropy :math:`\gamma(1 - 1/k) + \log(\lambda/k)
        + 1`, γ Euler's constant.

    Args:
        scale: λ > 0. concentration: k > 0 (numbers or tensors). validate_args: checks.

    Shape:
        batch_shape: the two broadcast; event_shape: ().

    Example:
        >>> Weibull(mg.tensor([1.0]), mg.tensor([2.0])).log_prob(mg.tensor([0.5]))
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """λΓ(1 + 1/k)."""
        return self.scale * exp(lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        """λ((k - 1)/k)^(1/k)."""
        return self.scale * ((self.concentration - 1) / self.concentration) \
            ** self.concentration.reciprocal()

    @property
    def variance(self):
        """λ²(Γ(1 + 2/k) - Γ(1 + 1/k)²)."""
        return self.scale.pow(2) * (exp(lgamma(1 + 2 * self.concentration_reciprocal))
                                    - exp(2 * lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        """γ(1 - 1/k) + log(λ/k) + 1."""
        return (euler_constant * (1 - self.concentration_reciprocal)
                + log(self.scale * self.concentration_reciprocal) + 1)
