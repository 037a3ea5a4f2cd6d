r"""``RelaxedOneHotCategorical`` (``torch.distributions.RelaxedOneHotCategorical``), the
Concrete / Gumbel-softmax distribution (Maddison et al.; Jang et al., 2017): a
differentiable stand-in for a one-hot draw on the simplex, and ``ExpRelaxedCategorical``,
its log."""

from ..factories import full_like, rand
from .categorical import Categorical
from .relaxed_bernoulli import RelaxedParams
from .distribution import SCALAR, Distribution
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    r"""The log of a RelaxedOneHotCategorical draw: the log-softmax of
    :math:`(l + g) / \tau`, g Gumbel noise :math:`-\log(-\log u)` (``mg.rand``).

    Formula:
        :math:`\log p(y) = \log\Gamma(K) + (K - 1)\log\tau + \sum_k (s_k -
        \mathrm{logsumexp}(s))`, :math:`s = l - \tau y`.

    Args:
        temperature: τ > 0 (a tensor). probs, or logits, over the last dim K (one of the
            two). validate_args: the checks.

    Shape:
        batch_shape: the parameter's shape less K; event_shape: (K,).

    Example:
        >>> ExpRelaxedCategorical(mg.tensor(1.0), logits=mg.zeros(4)).rsample().exp().sum()
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        return self._expand_params(ExpRelaxedCategorical, batch_shape, _instance,
                                   ("_categorical",), kept=("temperature",))

    @property
    def param_shape(self):
        """The given parameter's shape."""
        return self._categorical.param_shape

    @property
    def logits(self):
        """The normalized logits."""
        return self._categorical.logits

    @property
    def probs(self):
        """The probabilities."""
        return self._categorical.probs

    def rsample(self, sample_shape=SCALAR):
        """log_softmax((logits + Gumbel noise) / τ)."""
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        """The log density (class docstring)."""
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (full_like(self.temperature, float(k)).lgamma()
                     - self.temperature.log().mul(-(k - 1)))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(RelaxedParams, TransformedDistribution):
    """The Concrete (Gumbel-softmax) distribution on the simplex: exp of an
    ExpRelaxedCategorical draw.

    Args:
        temperature: τ > 0 (a tensor). probs, or logits (one of the two).
        validate_args: the checks.

    Shape:
        batch_shape: the parameter's shape less K; event_shape: (K,).

    Example:
        >>> y = RelaxedOneHotCategorical(mg.tensor(0.5), logits=scores).rsample()   # (B, K)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)
