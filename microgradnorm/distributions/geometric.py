r"""``Geometric``, the number of failures before the first success of probability p
(``torch.distributions.Geometric``): :math:`P(k) = (1 - p)^k p`, k = 0, 1, ..."""

from ..autograd import no_grad
from ..dtypes import finfo
from ..factories import zeros_like
from ..losses import binary_cross_entropy_with_logits
from .distribution import SCALAR, Distribution
from . import constraints
from .utils import BinaryParams, broadcast_all, is_number

__all__ = ["Geometric"]


class Geometric(BinaryParams, Distribution):
    r"""The geometric distribution, given by ``probs`` p in (0, 1] or ``logits``.

    Formula:
        :math:`\log P(k) = k\log(1 - p) + \log p`; drawn as
        :math:`\lfloor \log u / \log(1 - p) \rfloor`, u uniform on [tiny, 1) from
        ``uniform_`` (torch's draws for the same seed).

    Args:
        probs: p, or logits: log(p / (1 - p)) (one of the two). validate_args: checks
            (p > 0 too).

    Shape:
        batch_shape: the parameter's shape; event_shape: ().

    Example:
        >>> Geometric(probs=mg.tensor([0.5])).mean            # tensor([1.])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = SCALAR if is_number(given) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not valid.all():
                raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape "
                                 f"{tuple(value.shape)}) of distribution {self!r} to be "
                                 f"positive but found invalid values:\n{value.data[~valid]}")

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameter expanded to ``batch_shape``."""
        return self._expand_params(Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        """1/p - 1."""
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        """0."""
        return zeros_like(self.probs)

    @property
    def variance(self):
        """(1/p - 1)/p."""
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=SCALAR):
        """floor(log u / log1p(-p)), outside the graph."""
        shape = self._extended_shape(sample_shape)
        tiny = float(finfo(self.probs.dtype).tiny)
        with no_grad():
            u = self.probs.new_empty(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        """k log1p(-p) + log p (0 at p = 1, k = 0)."""
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        """BCE(logits, p) / p."""
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
