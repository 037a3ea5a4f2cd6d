r"""``Dirichlet``, the distribution on the probability simplex of concentrations α
(``torch.distributions.Dirichlet``): density
:math:`\frac{\Gamma(\sum_i \alpha_i)}{\prod_i \Gamma(\alpha_i)} \prod_i x_i^{\alpha_i - 1}`."""

from ..functional import one_hot
from ..ops.binary import xlogy
from ..ops.torch_more import digamma, lgamma
from .distribution import SCALAR, ExponentialFamily
from . import constraints
from .gamma_sampler import sample_dirichlet

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    r"""The Dirichlet distribution over the last dim of ``concentration``.

    Formula:
        :math:`\log p(x) = \sum_i (\alpha_i - 1)\log x_i + \log\Gamma(\alpha_0) -
        \sum_i \log\Gamma(\alpha_i)`, :math:`\alpha_0 = \sum_i \alpha_i`; ``rsample``:
        normalized float64 gammas (torch's draws for the same seed), differentiable in α
        through the gammas' reparameterized gradients.

    Args:
        concentration: α > 0, at least one dim: (..., K). validate_args: the checks.

    Shape:
        batch_shape: concentration.shape[:-1]; event_shape: (K,).

    Example:
        >>> Dirichlet(mg.ones(3)).sample()            # a point of the 2-simplex
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with α expanded to ``batch_shape + event_shape``."""
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=SCALAR):
        """A draw of the simplex, differentiable in α."""
        shape = self._extended_shape(sample_shape)
        return sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value):
        """Σ (α_i - 1) log x_i + log Γ(α_0) - Σ log Γ(α_i)."""
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration - 1.0, value).sum(-1)
                + lgamma(self.concentration.sum(-1)) - lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        """α / α_0."""
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        """(α - 1)₊ normalized; where every α < 1, a vertex (the largest α's)."""
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = one_hot(mode[mask].argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        """α(α_0 - α) / (α_0²(α_0 + 1))."""
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        """Σ log Γ(α_i) - log Γ(α_0) - (K - α_0) ψ(α_0) - Σ (α_i - 1) ψ(α_i)."""
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (lgamma(self.concentration).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - lgamma(x.sum(-1))
