"""``Independent``: a distribution whose last batch dims are read as one event
(``torch.distributions.Independent``): ``Independent(Normal(mu, sigma), 1)`` is the
diagonal Gaussian, its ``log_prob`` summed over the last dim."""

from .distribution import SCALAR, Distribution
from . import constraints
from .utils import sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """``base_distribution`` with its ``reinterpreted_batch_ndims`` rightmost batch dims
    moved into the event: ``log_prob`` and ``entropy`` summed over them.

    Args:
        base_distribution: a distribution. reinterpreted_batch_ndims: how many of its batch
            dims (from the right) join the event.

    Example:
        >>> diag = Independent(Normal(mg.zeros(3), mg.ones(3)), 1)
        >>> diag.batch_shape, diag.event_shape                 # (), (3,)
    """

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= "
                             f"len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs "
                             f"{len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with the base expanded to ``batch_shape`` + the moved dims."""
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        new.base_dist = self.base_dist.expand(
            batch_shape + self.event_shape[:self.reinterpreted_batch_ndims])
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        super(Independent, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        """The base's."""
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        """The base's, when no dim moved."""
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        """The base's support, independent over the moved dims."""
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        """The base's."""
        return self.base_dist.mean

    @property
    def mode(self):
        """The base's."""
        return self.base_dist.mode

    @property
    def variance(self):
        """The base's."""
        return self.base_dist.variance

    def sample(self, sample_shape=SCALAR):
        """The base's draw."""
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=SCALAR):
        """The base's reparameterized draw."""
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        """The base's log density summed over the moved dims."""
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        """The base's entropy summed over the moved dims."""
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        """The base's, when no dim moved."""
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"
