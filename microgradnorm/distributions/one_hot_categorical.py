"""``OneHotCategorical``: a ``Categorical`` whose draws are one-hot vectors of length K
(``torch.distributions.OneHotCategorical``), and ``OneHotCategoricalStraightThrough``, its
straight-through reparameterization."""

from ..factories import eye
from ..functional import one_hot
from .categorical import Categorical
from .distribution import SCALAR, Distribution
from . import constraints

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """The categorical distribution with one-hot draws: event_shape (K,), values in the
    dtype of the probabilities.

    Args:
        probs or logits: as ``Categorical``'s.

    Example:
        >>> OneHotCategorical(mg.tensor([0.25, 0.25, 0.25, 0.25])).sample()
        tensor([0., 0., 1., 0.])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        super(OneHotCategorical, new).__init__(batch_shape, self.event_shape,
                                               validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        """The normalized probabilities."""
        return self._categorical.probs

    @property
    def logits(self):
        """The normalized logits."""
        return self._categorical.logits

    @property
    def mean(self):
        """The probabilities."""
        return self._categorical.probs

    @property
    def mode(self):
        """The most probable class, one-hot."""
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        """p(1 - p), per class."""
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        """The shape of the given parameter."""
        return self._categorical.param_shape

    def sample(self, sample_shape=SCALAR):
        """``Categorical``'s draw, one-hot (the same classes for the same seed)."""
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(probs)

    def log_prob(self, value):
        """The log probability of the class each one-hot vector marks."""
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        """``Categorical``'s entropy."""
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        """The K one-hot vectors along dim 0."""
        n = self.event_shape[0]
        values = eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """``OneHotCategorical`` with a straight-through ``rsample``: the one-hot draw in the
    forward pass, the gradient of the probabilities in the backward pass
    (``sample + probs - probs.detach()``, Bengio et al., 2013)."""

    has_rsample = True

    def rsample(self, sample_shape=SCALAR):
        """The one-hot draw, with the probabilities' gradient."""
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
