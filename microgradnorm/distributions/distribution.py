r"""``Distribution``, the base of every distribution (``torch.distributions.Distribution``),
and ``ExponentialFamily``, the base of those whose density is
:math:`\exp(\langle t(x), \theta\rangle - F(\theta) + k(x))`.

A distribution has a ``batch_shape`` (independent distributions of one family, their
parameters stacked) and an ``event_shape`` (one draw: () for a number, (k,) for a vector);
``sample(sample_shape)`` returns ``sample_shape + batch_shape + event_shape`` and
``log_prob(value)`` the batch of log densities. ``rsample`` draws by reparameterization (a
differentiable function of the parameters and parameter-free noise), so gradients flow to
the parameters; ``sample`` is the same draw under ``no_grad``.

With ``validate_args`` (on by default, as Python's ``assert``: off under ``python -O``;
``Distribution.set_default_validate_args`` changes it for every new distribution) each
parameter is checked against ``arg_constraints`` at construction and each value given to
``log_prob`` against the ``support``: a ValueError names the first one outside.
"""

import warnings

from ..autograd import grad, no_grad
from ..ops.elementwise import exp
from ..tensor import Size, Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution", "ExponentialFamily"]

SCALAR = Size()              # the shape of one number: the default sample and batch shapes


class Distribution:
    """The base of every distribution: its shapes, argument checks, and the methods each
    family defines (``rsample``, ``log_prob``, ``entropy``, ``mean``, ...).

    Args:
        batch_shape: the shape of the batch of distributions (a ``Size``).
        event_shape: the shape of one draw.
        validate_args: check the parameters and ``log_prob``'s values (default: the
            class's setting, ``set_default_validate_args``).

    Example:
        >>> d = Normal(mg.zeros(4, 3), mg.ones(4, 3))
        >>> d.batch_shape, d.event_shape, d.sample((2,)).shape     # (4, 3), (), (2, 4, 3)
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on or off for the distributions made from now on."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=SCALAR, event_shape=SCALAR, validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          "`arg_constraints = {}` or initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue                              # no check of its own
            if param not in self.__dict__ and \
                    isinstance(getattr(type(self), param, None), lazy_property):
                continue                              # the other parameterization: not made
            value = getattr(self, param)
            if not constraint.check(value).all():
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of "
                                 f"shape {tuple(value.shape)}) of distribution {self!r} to "
                                 f"satisfy the constraint {constraint!r}, but found invalid "
                                 f"values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A distribution of the same parameters expanded (views) to ``batch_shape``,
        unchecked."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single draw."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """{parameter name: the ``Constraint`` it must satisfy}."""
        raise NotImplementedError

    @property
    def support(self):
        """The ``Constraint`` the draws satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self):
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation, the variance's square root."""
        return self.variance.sqrt()

    def sample(self, sample_shape=SCALAR):
        """A draw of shape ``sample_shape + batch_shape + event_shape``, outside the
        graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=SCALAR):
        """A reparameterized draw: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        """``sample((n,))`` (deprecated in torch)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log of the density (or mass) at ``value``, one per event."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse of the cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Every value of a discrete distribution, along dim 0 (with ``expand``, over the
        batch shape too): ``(cardinality,) + batch_shape + event_shape``."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, one per distribution of the batch."""
        raise NotImplementedError

    def perplexity(self):
        """exp(entropy)."""
        return exp(self.entropy())

    def _extended_shape(self, sample_shape=SCALAR):
        # the shape of a draw: sample_shape + batch_shape + event_shape
        return Size(tuple(sample_shape)) + self._batch_shape + self._event_shape

    def _validate_sample(self, value):
        # log_prob's, cdf's checks: a Tensor, its rightmost dims the event's, broadcastable
        # with the batch, inside the support
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=3)
            return
        if not support.check(value).all():
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support ({support!r}) "
                             f"of the distribution {self!r}, but found invalid values:\n"
                             f"{value}")

    def _get_checked_instance(self, cls, _instance=None):
        # expand's new object: a subclass with its own __init__ must bring its own expand
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} "
                                      "that defines a custom __init__ method must also "
                                      "define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, batch_shape, _instance, names, kept=()):
        # expand's common body: a ``cls`` instance whose attributes ``names`` that this one
        # holds are expanded (a tensor to batch_shape + event_shape, a distribution to
        # batch_shape), ``kept`` copied as they are, unchecked
        new = self._get_checked_instance(cls, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        for name in names:
            if name in self.__dict__:
                value = self.__dict__[name]
                shape = batch_shape if isinstance(value, Distribution) else \
                    batch_shape + self.event_shape
                setattr(new, name, value.expand(shape))
        for name in kept:
            setattr(new, name, getattr(self, name))
        super(cls, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        shown = []
        for name in self.arg_constraints:
            if name in self.__dict__:              # the given parameterization
                value = self.__dict__[name]
                shown.append(f"{name}: {value if value.numel() == 1 else value.size()}")
        return f"{self.__class__.__name__}({', '.join(shown)})"


class ExponentialFamily(Distribution):
    r"""The base of the distributions whose density is
    :math:`p(x; \theta) = \exp(\langle t(x), \theta\rangle - F(\theta) + k(x))`: a family
    gives its natural parameters θ (``_natural_params``), its log normalizer F
    (``_log_normalizer``) and the expected carrier measure E[k(x)] (``_mean_carrier_measure``),
    and the entropy follows as the Bregman divergence :math:`F(\theta) - \langle\theta,
    \nabla F(\theta)\rangle - E[k]`.

    The generic entropy needs ∇F, a gradient, recorded as torch records it
    (``create_graph=True``) from natural parameters detached from the distribution's: the
    entropy has history to those copies, none to the parameters (torch's result, too).
    ``Normal`` and ``Bernoulli`` define their entropy in closed form, differentiable.
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """The entropy from the log normalizer, F(θ) - ⟨θ, ∇F(θ)⟩ - E[k] (see the class)."""
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = grad(log_normalizer.sum(), params, create_graph=True)
        result = -self._mean_carrier_measure + log_normalizer
        for param, gradient in zip(params, gradients):
            result = result - (param * gradient).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
