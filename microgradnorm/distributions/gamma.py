r"""``Gamma``, of shape α (``concentration``) and rate β (``torch.distributions.Gamma``):
density :math:`\beta^\alpha x^{\alpha - 1} e^{-\beta x} / \Gamma(\alpha)` for x >= 0, and
``Chi2``, the Gamma of shape df/2 and rate 1/2."""

from ..dtypes import finfo
from ..factories import as_tensor
from ..ops.binary import xlogy
from ..ops.elementwise import log
from ..ops.torch_more import digamma, igamma, lgamma
from .distribution import SCALAR, ExponentialFamily
from . import constraints
from .gamma_sampler import standard_gamma
from .utils import broadcast_all, is_number

__all__ = ["Chi2", "Gamma"]


class Gamma(ExponentialFamily):
    r"""The Gamma distribution of concentration α > 0 and rate β > 0.

    Formula:
        :math:`\log p(x) = \alpha\log\beta + (\alpha - 1)\log x - \beta x - \log\Gamma(\alpha)`;
        ``rsample``: g / β, g ~ Gamma(α, 1) from ``standard_gamma`` (torch's draws for the
        same seed), differentiable in α by torch's implicit reparameterization.

    Args:
        concentration: α. rate: β (numbers or tensors, broadcast). validate_args: checks.

    Shape:
        batch_shape: the broadcast shape (() when both are numbers); event_shape: ().

    Example:
        >>> Gamma(mg.tensor([2.0]), mg.tensor([1.0])).rsample((5,)).shape      # (5, 1)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = is_number(concentration) and is_number(rate)
        batch_shape = SCALAR if scalar else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        """α / β."""
        return self.concentration / self.rate

    @property
    def mode(self):
        """max((α - 1) / β, 0)."""
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        """α / β²."""
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=SCALAR):
        """g / β, g ~ Gamma(α, 1), at least the dtype's tiny: differentiable in α and β."""
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=float(finfo(value.dtype).tiny))    # outside the graph
        return value

    def log_prob(self, value):
        """α log β + (α - 1) log x - βx - log Γ(α)."""
        value = as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def entropy(self):
        """α - log β + log Γ(α) + (1 - α) ψ(α)."""
        return (self.concentration - log(self.rate) + lgamma(self.concentration)
                + (1.0 - self.concentration) * digamma(self.concentration))

    def cdf(self, value):
        """The regularized lower incomplete gamma P(α, βx)."""
        if self._validate_args:
            self._validate_sample(value)
        return igamma(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * log(-y.reciprocal())


class Chi2(Gamma):
    r"""The chi-squared distribution of ``df`` degrees of freedom: Gamma(df / 2, 1 / 2).

    Args:
        df: the degrees of freedom > 0 (number or tensor). validate_args: the checks.

    Shape:
        batch_shape: df's shape; event_shape: ().

    Example:
        >>> Chi2(mg.tensor([3.0])).mean          # tensor([3.])
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with df expanded to ``batch_shape``."""
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        """2α."""
        return self.concentration * 2
