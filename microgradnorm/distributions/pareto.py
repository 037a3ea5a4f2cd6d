r"""``Pareto``, the power law of scale :math:`x_m` and shape α (``torch.distributions.Pareto``):
:math:`p(x) = \alpha x_m^\alpha / x^{\alpha + 1}` for x >= x_m; drawn as
:math:`x_m e^{E}`, E ~ Exponential(α)."""

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    r"""The Pareto distribution (type I).

    Formula:
        :math:`\log p(x) = \log\alpha + \alpha\log x_m - (\alpha + 1)\log x`; mean
        :math:`\alpha x_m / (\alpha - 1)` (α clamped to >= 1: inf at α <= 1).

    Args:
        scale: :math:`x_m` > 0. alpha: α > 0 (numbers or tensors). validate_args: checks.

    Shape:
        batch_shape: the two broadcast; event_shape: ().

    Example:
        >>> Pareto(1.0, 3.0).mean            # tensor(1.5000)
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """α x_m / (α - 1), α clamped to >= 1."""
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        """x_m."""
        return self.scale

    @property
    def variance(self):
        """x_m² α / ((α - 1)²(α - 2)), α clamped to >= 2."""
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """[x_m, inf)."""
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        """log(x_m / α) + 1 + 1/α."""
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
