r"""``Kumaraswamy`` (``torch.distributions.Kumaraswamy``), a Beta-like distribution on (0, 1)
with a closed-form CDF: :math:`p(x) = ab\,x^{a - 1}(1 - x^a)^{b - 1}`, drawn as
:math:`(1 - u^{1/b})^{1/a}`, u uniform."""

import math

from ..factories import full_like
from ..ops.elementwise import exp, log
from ..ops.torch_more import digamma, lgamma
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    # E[Xⁿ] = b B(1 + n/a, b)
    arg1 = 1 + n / a
    return b * exp(lgamma(arg1) + lgamma(b) - lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    r"""The Kumaraswamy distribution of concentrations a (``concentration1``) and b
    (``concentration0``).

    Formula:
        :math:`E[X^n] = b\,B(1 + n/a, b)`; entropy :math:`(1 - 1/b) + (1 - 1/a)(\psi(b + 1)
        + \gamma) - \log a - \log b`.

    Args:
        concentration1: a > 0. concentration0: b > 0 (numbers or tensors).
        validate_args: the checks.

    Shape:
        batch_shape: the two broadcast; event_shape: ().

    Example:
        >>> Kumaraswamy(mg.tensor([2.0]), mg.tensor([3.0])).rsample()
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(full_like(self.concentration0, 0),
                            full_like(self.concentration0, 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """b B(1 + 1/a, b)."""
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        """((a - 1)/(ab - 1))^(1/a); NaN where a < 1 or b < 1."""
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        log_mode[(self.concentration0 < 1) | (self.concentration1 < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self):
        """E[X²] - E[X]²."""
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        """(1 - 1/b) + (1 - 1/a)(ψ(b + 1) + γ) - log a - log b."""
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - log(self.concentration1) - log(self.concentration0)
