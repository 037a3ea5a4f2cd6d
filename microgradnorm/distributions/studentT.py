r"""``StudentT``, the Student's t distribution of ``df`` degrees of freedom, location and
scale (``torch.distributions.StudentT``): a normal over the root of a scaled chi-squared,
:math:`\mu + \sigma X / \sqrt{Z/\nu}`, X ~ N(0, 1), Z ~ χ²(ν)."""

import math

from ..ops.elementwise import log, rsqrt
from ..ops.pointwise import log1p
from ..ops.torch_more import digamma, lgamma
from .distribution import SCALAR, Distribution
from . import constraints
from .gamma import Chi2
from .utils import broadcast_all, standard_normal

__all__ = ["StudentT"]


class StudentT(Distribution):
    r"""The Student's t distribution.

    Formula:
        :math:`\log p(x) = -\frac{\nu + 1}{2}\log(1 + y^2/\nu) - \log\sigma - \frac12\log\nu
        - \frac12\log\pi - \log\Gamma(\nu/2) + \log\Gamma((\nu + 1)/2)`, y = (x - μ)/σ;
        ``rsample`` draws X (``normal_``) then Z (the chi-squared's gamma draws), as torch.

    Args:
        df: ν > 0. loc: μ (default 0). scale: σ > 0 (default 1). validate_args: checks.

    Shape:
        batch_shape: the three broadcast; event_shape: ().

    Example:
        >>> StudentT(mg.tensor([3.0])).log_prob(mg.tensor([0.5]))
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        return self._expand_params(StudentT, batch_shape, _instance,
                                   ("df", "loc", "scale", "_chi2"))

    @property
    def mean(self):
        """μ for ν > 1, NaN otherwise."""
        m = self.loc.clone()
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self):
        """μ."""
        return self.loc

    @property
    def variance(self):
        """σ²ν/(ν - 2) for ν > 2, inf for 1 < ν <= 2, NaN for ν <= 1."""
        m = self.df.clone()
        above = self.df > 2
        m[above] = self.scale[above].pow(2) * self.df[above] / (self.df[above] - 2)
        m[(self.df <= 2) & (self.df > 1)] = math.inf
        m[self.df <= 1] = math.nan
        return m

    def rsample(self, sample_shape=SCALAR):
        """μ + σX/√(Z/ν): differentiable in μ, σ and ν."""
        shape = self._extended_shape(sample_shape)
        x = standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * rsqrt(z / self.df))

    def log_prob(self, value):
        """The log density (class docstring)."""
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + lgamma(0.5 * self.df) - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * log1p(y**2.0 / self.df) - z

    def entropy(self):
        r""":math:`\log\sigma + \frac{\nu + 1}{2}(\psi(\frac{\nu + 1}{2}) - \psi(\frac{\nu}{2}))
        + \frac12\log\nu + \log B(\frac{\nu}{2}, \frac12)`."""
        lbeta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return (log(self.scale) + 0.5 * (self.df + 1)
                * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
