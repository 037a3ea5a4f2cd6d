r"""``RelaxedBernoulli`` (``torch.distributions.RelaxedBernoulli``), the binary Concrete
distribution of Maddison et al. (2017): a differentiable stand-in for a Bernoulli draw on
(0, 1), sharper as the temperature falls, and ``LogitRelaxedBernoulli``, its logit."""

from ..factories import rand
from .distribution import SCALAR, Distribution
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import BinaryParams, broadcast_all, clamp_probs, is_number

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryParams, Distribution):
    r"""The logit of a RelaxedBernoulli draw: :math:`(\mathrm{logit}(u) + \mathrm{logit}(p))
    / \tau`, u uniform (``mg.rand``, torch's draws for the same seed).

    Formula:
        :math:`\log p(y) = \log\tau + d - 2\log(1 + e^{d})`, :math:`d = l - \tau y`.

    Args:
        temperature: τ > 0 (a tensor). probs: p, or logits: l (one of the two).
        validate_args: the checks.

    Shape:
        batch_shape: the parameter's shape; event_shape: ().

    Example:
        >>> LogitRelaxedBernoulli(mg.tensor(0.5), logits=mg.zeros(3)).rsample()
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = is_number(probs)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = is_number(logits)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = SCALAR if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameter expanded to ``batch_shape``."""
        new = self._expand_params(LogitRelaxedBernoulli, batch_shape, _instance,
                                  ("probs", "logits"), kept=("temperature",))
        new._param = new.logits if "logits" in self.__dict__ else new.probs
        return new

    @property
    def param_shape(self):
        """The given parameter's shape."""
        return self._param.size()

    def rsample(self, sample_shape=SCALAR):
        """(logit(u) + logit(p)) / τ, p and u clamped into (0, 1)."""
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        """log τ + d - 2 log1p(exp(d)), d = l - τy."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedParams:
    """The relaxed distributions' parameters, read from their base distribution (the
    logit-relaxed one RelaxedBernoulli transforms by a sigmoid, the exp-relaxed one
    RelaxedOneHotCategorical transforms by exp)."""

    @property
    def temperature(self):
        """τ."""
        return self.base_dist.temperature

    @property
    def logits(self):
        """The base's logits."""
        return self.base_dist.logits

    @property
    def probs(self):
        """The base's probs."""
        return self.base_dist.probs


class RelaxedBernoulli(RelaxedParams, TransformedDistribution):
    """The binary Concrete distribution on (0, 1): sigmoid of a LogitRelaxedBernoulli.

    Args:
        temperature: τ > 0 (a tensor). probs: p, or logits (one of the two).
        validate_args: the checks.

    Shape:
        batch_shape: the parameter's shape; event_shape: ().

    Example:
        >>> gate = RelaxedBernoulli(mg.tensor(0.1), logits=scores).rsample()   # near 0 or 1
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)
