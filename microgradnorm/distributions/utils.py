"""The helpers torch's distributions share (``torch.distributions.utils``): parameters
broadcast to one shape, probabilities and logits converted into each other, the standard
normal draws of a reparameterized sample, and ``lazy_property``, a parameter computed from
the other on first use."""

import functools

from .. import factories
from ..autograd import enable_grad
from ..dtypes import finfo, get_default_dtype
from ..ops import softmax
from ..ops.arrange import broadcast_tensors
from ..ops.elementwise import log, sigmoid
from ..ops.pointwise import log1p
from ..tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits"]

euler_constant = 0.57721566490153286060
NUMBER = (int, float, bool)


def broadcast_all(*values):
    """The values broadcast to one shape (``torch.distributions.utils.broadcast_all``):
    numbers become tensors of the first tensor's dtype and device (the default dtype when
    all are numbers), then ``broadcast_tensors``: views in the graph.

    Example:
        >>> loc, scale = broadcast_all(mg.zeros(3), 1.0)       # both (3,)
    """
    if not all(isinstance(v, (Tensor, *NUMBER)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        like = next((v for v in values if isinstance(v, Tensor)), None)
        options = {"dtype": get_default_dtype()} if like is None else \
            {"dtype": like.dtype, "device": like.device}
        values = [v if isinstance(v, Tensor) else factories.as_tensor(v, **options)
                  for v in values]
    return broadcast_tensors(*values)


def standard_normal(shape, dtype, device):
    """N(0, 1) draws of ``shape``: ``empty(shape).normal_()``, the draws of torch's
    ``_standard_normal`` for the same seed."""
    return factories.empty(shape, dtype=dtype, device=device).normal_()


def sum_rightmost(value, dim):
    """``value`` summed over its last ``dim`` dims (none for 0)."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    r"""Probabilities from logits: :math:`\sigma(l)` for a binary event, else the softmax
    over the last dim (the logits of each event, unnormalized)."""
    if is_binary:
        return sigmoid(logits)
    return softmax(logits, dim=-1)


def clamp_probs(probs):
    """``probs`` clamped to [eps, 1 - eps], eps the dtype's machine epsilon: the open
    interval (0, 1), where a logit is finite."""
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    r"""Logits from probabilities (clamped first): :math:`\log p - \log(1 - p)` for a binary
    event, else :math:`\log p` (normalized log probabilities)."""
    clamped = clamp_probs(probs)
    if is_binary:
        return log(clamped) - log1p(-clamped)
    return log(clamped)


class lazy_property:  # noqa: N801 (torch's name)
    """A property computed on first use, with gradients on, and then kept on the instance
    (``torch.distributions.utils.lazy_property``): ``Categorical`` given logits computes
    its probs only when asked."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class BinaryParams:
    """The pair of a success probability: ``probs`` p and ``logits`` log p - log(1 - p),
    each computed from the other on first use (the families of one probability that torch
    writes them into: ``Binomial``, ``NegativeBinomial``, ``Geometric``,
    ``LogitRelaxedBernoulli``)."""

    @lazy_property
    def logits(self):
        """log p - log(1 - p), p clamped into (0, 1)."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """sigmoid(logits)."""
        return logits_to_probs(self.logits, is_binary=True)

    def _set_count_and_param(self, total_count, probs, logits):
        # Binomial's and NegativeBinomial's init: exactly one of probs and logits, broadcast
        # with the count, which takes its dtype; the given one is ``_param``
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        total_count, self._param = broadcast_all(total_count, value)
        setattr(self, name, self._param)
        self.total_count = total_count.type_as(self._param)


def is_number(value):
    """A Python int, float or bool (torch's ``_Number``), not a tensor."""
    return isinstance(value, NUMBER)
