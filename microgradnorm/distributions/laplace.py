r"""``Laplace``, the double exponential of location μ and scale b
(``torch.distributions.Laplace``): density :math:`e^{-|x - \mu| / b} / 2b`."""

from ..dtypes import finfo
from ..ops.elementwise import log
from ..ops.pointwise import expm1, log1p
from .distribution import SCALAR, Distribution
from . import constraints
from .utils import broadcast_all, is_number

__all__ = ["Laplace"]


class Laplace(Distribution):
    r"""The Laplace distribution of location ``loc`` and scale ``scale`` > 0.

    Formula:
        :math:`\log p(x) = -\log 2b - |x - \mu| / b`; ``rsample``:
        :math:`\mu - b\,\mathrm{sign}(u)\log(1 - |u|)`, u uniform on [eps - 1, 1) from
        ``uniform_`` (torch's draws for the same seed).

    Args:
        loc: μ. scale: b > 0 (numbers or tensors, broadcast). validate_args: the checks.

    Shape:
        batch_shape: loc and scale broadcast; event_shape: ().

    Example:
        >>> Laplace(0.0, 1.0).log_prob(mg.tensor([0.0, 1.0]))
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
        return self._expand_params(Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        """loc."""
        return self.loc

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """2b²."""
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        """√2 b."""
        return 2**0.5 * self.scale

    def rsample(self, sample_shape=SCALAR):
        """μ - b·sign(u)·log1p(-|u|), u ~ U[eps - 1, 1): differentiable in μ and b."""
        shape = self._extended_shape(sample_shape)
        eps = float(finfo(self.loc.dtype).eps)
        u = self.loc.new_empty(shape).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * log1p(-u.abs())

    def log_prob(self, value):
        """-log 2b - |x - μ| / b."""
        if self._validate_args:
            self._validate_sample(value)
        return -log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        """½ - ½·sign(x - μ)·expm1(-|x - μ| / b)."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        return 0.5 - 0.5 * diff.sign() * expm1(-diff.abs() / self.scale)

    def icdf(self, value):
        """μ - b·sign(p - ½)·log1p(-2|p - ½|)."""
        term = value - 0.5
        return self.loc - self.scale * term.sign() * log1p(-2 * term.abs())

    def entropy(self):
        """1 + log 2b."""
        return 1 + log(2 * self.scale)
