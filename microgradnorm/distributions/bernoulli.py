r"""``Bernoulli``, a draw of 1 with probability p and 0 otherwise
(``torch.distributions.Bernoulli``), given by ``probs`` p or ``logits`` log(p / (1 - p))."""

import math

from ..autograd import no_grad
from ..factories import arange, bernoulli
from ..losses import binary_cross_entropy_with_logits
from ..ops.elementwise import exp
from ..ops.pointwise import log1p
from ..ops.special import logit
from .distribution import SCALAR, ExponentialFamily
from . import constraints
from .utils import broadcast_all, is_number, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


class Bernoulli(ExponentialFamily):
    r"""The Bernoulli distribution: 1 with probability p, 0 with 1 - p.

    Formula:
        :math:`\log p(x) = x \log p + (1 - x)\log(1 - p)`, computed as torch's, minus
        ``binary_cross_entropy_with_logits(logits, x)``; entropy the same with x = p.

    Args:
        probs: p in [0, 1], or logits: log-odds (one of the two; a number or a tensor).

    Example:
        >>> keep = Bernoulli(probs=mg.full((4,), 0.9)).sample()      # mostly ones
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        self._param = self.probs if probs is not None else self.logits
        batch_shape = SCALAR if is_number(given) else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameter expanded to ``batch_shape``."""
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(batch_shape)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """p."""
        return self.probs

    @property
    def mode(self):
        """1 where p > 1/2, 0 where p < 1/2, NaN at 1/2."""
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self):
        """p(1 - p)."""
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        """log(p) - log(1 - p), p clamped into (0, 1)."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """sigmoid(logits)."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        """The shape of the given parameter."""
        return self._param.size()

    def sample(self, sample_shape=SCALAR):
        """``mg.bernoulli`` of p over the draw's shape (torch's draws for the same seed)."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        """x·log p + (1 - x)·log(1 - p), from the logits."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        """-p·log p - (1 - p)·log(1 - p), from the logits."""
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        """[0, 1] along dim 0, in p's dtype."""
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (logit(self.probs),)

    def _log_normalizer(self, x):
        return log1p(exp(x))

