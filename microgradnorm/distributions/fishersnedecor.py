r"""``FisherSnedecor``, the F distribution of ``df1`` and ``df2`` degrees of freedom
(``torch.distributions.FisherSnedecor``): the ratio of two scaled chi-squareds,
drawn as the ratio of two Gamma(df/2, df) draws."""

import math

from ..dtypes import finfo
from ..ops.elementwise import log
from ..ops.pointwise import log1p
from .distribution import SCALAR, Distribution
from . import constraints
from .gamma import Gamma
from .utils import broadcast_all, is_number

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    r"""The F distribution.

    Formula:
        :math:`\log p(x) = \log\frac{\Gamma(\frac{d_1 + d_2}{2})}{\Gamma(\frac{d_1}{2})
        \Gamma(\frac{d_2}{2})} + \frac{d_1}{2}\log\frac{d_1}{d_2} + (\frac{d_1}{2} - 1)\log x
        - \frac{d_1 + d_2}{2}\log(1 + \frac{d_1}{d_2}x)`.

    Args:
        df1, df2: the degrees of freedom > 0 (numbers or tensors). validate_args: checks.

    Shape:
        batch_shape: the two broadcast; event_shape: ().

    Example:
        >>> FisherSnedecor(mg.tensor([3.0]), mg.tensor([5.0])).mean     # tensor([1.6667])
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = is_number(df1) and is_number(df2)
        super().__init__(SCALAR if scalar else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        return self._expand_params(FisherSnedecor, batch_shape, _instance,
                                   ("df1", "df2", "_gamma1", "_gamma2"))

    @property
    def mean(self):
        """d2/(d2 - 2), NaN for d2 <= 2."""
        df2 = self.df2.clone()
        df2[df2 <= 2] = math.nan
        return df2 / (df2 - 2)

    @property
    def mode(self):
        """(d1 - 2)/d1 · d2/(d2 + 2), NaN for d1 <= 2."""
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        mode[self.df1 <= 2] = math.nan
        return mode

    @property
    def variance(self):
        """2d2²(d1 + d2 - 2)/(d1(d2 - 2)²(d2 - 4)), NaN for d2 <= 4."""
        df2 = self.df2.clone()
        df2[df2 <= 4] = math.nan
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=SCALAR):
        """X1 / X2 of the two Gamma draws (X1 first), each at least tiny."""
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = float(finfo(x2.dtype).tiny)
        x2.clamp_(min=tiny)
        y = x1 / x2
        y.clamp_(min=tiny)
        return y

    def log_prob(self, value):
        """The log density (class docstring)."""
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * log(value)
        t3 = (ct1 + ct2) * log1p(ct3 * value)
        return t1 + t2 - t3
