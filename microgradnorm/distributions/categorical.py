r"""``Categorical``, a draw of one of K classes (``torch.distributions.Categorical``), given
by ``probs`` (normalized to sum to 1) or ``logits`` (normalized to log-probabilities),
sampled as ``torch.multinomial`` samples: the same classes for the same seed."""

import math

from ..dtypes import finfo
from ..factories import arange, full, multinomial
from ..ops.arrange import broadcast_tensors
from ..ops.elementwise import clamp
from .distribution import SCALAR, Distribution
from . import constraints
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    r"""The categorical distribution over {0, ..., K - 1}, K = ``probs.size(-1)``; the
    dims before the last are the batch.

    Formula:
        probs :math:`p / \sum_k p_k`, or logits :math:`l - \mathrm{logsumexp}(l)`;
        :math:`\log p(x) = \text{logits}_x`, entropy :math:`-\sum_k \text{logits}_k p_k`
        (logits clamped at the dtype's most negative number, so a zero probability adds 0).

    Args:
        probs: non-negative, finite weights with a positive sum along the last dim, or
        logits: unnormalized log probabilities (one of the two, at least 1-D).

    Shape:
        batch_shape: ``param.shape[:-1]``; event_shape: (); samples int64.

    Example:
        >>> pi = Categorical(logits=policy(obs))         # logits (B, A)
        >>> a = pi.sample(); loss = -(pi.log_prob(a) * advantage).mean()
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else SCALAR
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameter expanded to ``batch_shape + (K,)``."""
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        param_shape = batch_shape + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(param_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(param_shape)
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The integers 0 .. K - 1."""
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        """log(probs), the probabilities clamped into (0, 1)."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        """softmax(logits)."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        """The shape of the given parameter, batch_shape + (K,)."""
        return self._param.size()

    @property
    def mean(self):
        """NaN (the classes are labels, not numbers), of the draw's shape."""
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self):
        """The most probable class."""
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        """NaN, of the draw's shape."""
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    def sample(self, sample_shape=SCALAR):
        """Class indices: ``multinomial`` of each batch row, with replacement, the draws
        of one row consecutive (torch's order, and its classes for the same seed)."""
        sample_shape = SCALAR + tuple(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        """The normalized logit of class ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        r""":math:`-\sum_k \text{logits}_k p_k`."""
        logits = clamp(self.logits, min=float(finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        """0 .. K - 1 along dim 0 (int64)."""
        values = arange(self._num_events, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
