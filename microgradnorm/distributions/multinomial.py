r"""``Multinomial``, the counts of ``total_count`` draws of a Categorical
(``torch.distributions.Multinomial``): :math:`P(x) = \frac{n!}{\prod_k x_k!}\prod_k p_k^{x_k}`."""

import math

from ..factories import ones_like, zeros
from ..ops.elementwise import exp
from ..ops.torch_more import lgamma
from ..tensor import tensor
from .binomial import Binomial
from .categorical import Categorical
from .distribution import SCALAR, Distribution
from . import constraints
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    r"""The multinomial distribution of ``total_count`` trials over the last dim's K
    categories.

    Formula:
        :math:`\log P(x) = \log\Gamma(\sum x + 1) - \sum\log\Gamma(x_k + 1) + \sum x_k l_k`,
        l the normalized logits; a draw counts ``total_count`` Categorical draws (torch's
        draws for the same seed).

    Args:
        total_count: n, an int (default 1). probs, or logits, over the last dim (one of
            the two). validate_args: the checks.

    Shape:
        batch_shape: the parameter's shape less K; event_shape: (K,).

    Example:
        >>> Multinomial(10, probs=mg.tensor([0.2, 0.3, 0.5])).sample()     # sums to 10
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        return self._expand_params(Multinomial, batch_shape, _instance, ("_categorical",),
                                   kept=("total_count",))

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        """Counts summing to at most n."""
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        """np."""
        return self.probs * self.total_count

    @property
    def variance(self):
        """np(1 - p)."""
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        """The Categorical's normalized logits."""
        return self._categorical.logits

    @property
    def probs(self):
        """The Categorical's probabilities."""
        return self._categorical.probs

    @property
    def param_shape(self):
        """The given parameter's shape."""
        return self._categorical.param_shape

    def sample(self, sample_shape=SCALAR):
        """The counts of n Categorical draws per distribution."""
        sample_shape = SCALAR + tuple(sample_shape)
        samples = self._categorical.sample((self.total_count,) + tuple(sample_shape))
        order = list(range(samples.dim()))
        order.append(order.pop(0))
        samples = samples.permute(*order)
        counts = zeros(self._extended_shape(sample_shape), dtype=samples.dtype,
                       device=samples.device)
        counts.scatter_add_(-1, samples, ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        """n H(Categorical) - log n! + Σ_k E[log x_k!] (x_k binomial)."""
        n = tensor(self.total_count)
        term1 = n * self._categorical.entropy() - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = exp(self._binomial.log_prob(support))
        weights = lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum([0, -1])

    def log_prob(self, value):
        """The log mass (class docstring), 0·log 0 = 0."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -math.inf)] = 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
