r"""``Gumbel``, the extreme-value distribution of location μ and scale β
(``torch.distributions.Gumbel``): :math:`\log p(x) = z - e^{z} - \log\beta`,
z = (μ - x)/β; drawn as -log(-log u) mapped, u uniform, as torch's transforms draw it."""

import math

from ..dtypes import finfo
from ..factories import full_like, ones_like
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant, is_number

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    r"""The Gumbel distribution: μ - β log(-log U), U ~ U(tiny, 1 - eps).

    Formula:
        :math:`\log p(x) = z - e^{z} - \log\beta`, z = (μ - x)/β; mean μ + βγ (γ Euler's
        constant), variance π²β²/6.

    Args:
        loc: μ. scale: β > 0 (numbers or tensors, broadcast). validate_args: the checks.

    Shape:
        batch_shape: loc and scale broadcast; event_shape: ().

    Example:
        >>> Gumbel(mg.zeros(3), 1.0).sample()       # logits noise
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        tiny, top = float(info.tiny), 1 - float(info.eps)
        if is_number(loc) and is_number(scale):
            base_dist = Uniform(tiny, top, validate_args=validate_args)
        else:
            base_dist = Uniform(full_like(self.loc, tiny), full_like(self.loc, top),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with loc and scale expanded to ``batch_shape``."""
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        """z - exp(z) - log β."""
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return y - y.exp() - self.scale.log()

    @property
    def mean(self):
        """μ + βγ."""
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        """μ."""
        return self.loc

    @property
    def stddev(self):
        """πβ/√6."""
        return math.pi / math.sqrt(6) * self.scale

    @property
    def variance(self):
        """π²β²/6."""
        return self.stddev.pow(2)

    def entropy(self):
        """log β + 1 + γ."""
        return self.scale.log() + (1 + euler_constant)
