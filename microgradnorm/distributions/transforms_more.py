r"""The transforms of events (``torch.distributions.transforms``, continued): maps that act
on a whole vector or matrix rather than number by number. ``IndependentTransform`` (a
transform whose last dims are one event), ``ReshapeTransform``, ``SoftmaxTransform`` and
``StickBreakingTransform`` (the reals onto the simplex) and ``LowerCholeskyTransform``
(any matrix onto a Cholesky factor: the diagonal exponentiated).

Example:
    >>> y = StickBreakingTransform()(mg.zeros(3))      # a point of the 4-simplex
"""

from ..dtypes import finfo
from ..functional import logsigmoid
from ..ops.arrange import diag_embed
from ..tensor import Size
from ..padding import pad
from . import constraints
from .transforms import SigmoidTransform, Transform
from .utils import sum_rightmost

__all__ = ["IndependentTransform", "LowerCholeskyTransform", "ReshapeTransform",
           "SoftmaxTransform", "StickBreakingTransform"]


def _at_least_one_dim(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return shape


class IndependentTransform(Transform):
    """``base_transform`` with its rightmost ``reinterpreted_batch_ndims`` dims read as one
    event: the log-Jacobian summed over them.

    Args:
        base_transform: a Transform. reinterpreted_batch_ndims: the dims to sum.
        cache_size: 0 or 1.

    Example:
        >>> IndependentTransform(ExpTransform(), 1).log_abs_det_jacobian(x, x.exp())  # x.sum(-1)
    """

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        """The same map with ``cache_size``."""
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The base's domain, widened by the reinterpreted dims."""
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The base's codomain, widened by the reinterpreted dims."""
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        """The base's."""
        return self.base_transform.bijective

    @property
    def sign(self):
        """The base's."""
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        """The base's, summed over the reinterpreted dims."""
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape):
        """The base's."""
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        """The base's."""
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """The rightmost dims of shape ``in_shape`` reshaped to ``out_shape`` (log-Jacobian 0).

    Args:
        in_shape, out_shape: event shapes of the same number of elements. cache_size: 0, 1.

    Example:
        >>> ReshapeTransform((4,), (2, 2))(mg.zeros(3, 4)).shape       # (3, 2, 2)
    """

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        """Real events of ``in_shape``."""
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        """Real events of ``out_shape``."""
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        """The same map with ``cache_size``."""
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = x.shape[:x.dim() - len(self.in_shape)]
        return x.reshape(tuple(batch_shape) + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = y.shape[:y.dim() - len(self.out_shape)]
        return y.reshape(tuple(batch_shape) + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        """0, of the batch shape."""
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    def _reshaped(self, shape, source, target):
        if len(shape) < len(source):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(source)
        if Size(shape[cut:]) != source:
            raise ValueError(f"Shape mismatch: expected {Size(shape[cut:])} but got {source}")
        return Size(shape[:cut]) + target

    def forward_shape(self, shape):
        """The batch dims + ``out_shape``."""
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        """The batch dims + ``in_shape``."""
        return self._reshaped(shape, self.out_shape, self.in_shape)


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim; x = log y (not bijective: a shift of x is lost).

    Example:
        >>> SoftmaxTransform()(mg.zeros(4))           # tensor([0.25, 0.25, 0.25, 0.25])
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        """The same shape (at least one dim)."""
        return _at_least_one_dim(shape)

    def inverse_shape(self, shape):
        """The same shape (at least one dim)."""
        return _at_least_one_dim(shape)


class StickBreakingTransform(Transform):
    r"""The reals :math:`\mathbb{R}^{K-1}` onto the K-simplex by stick breaking: each
    coordinate, shifted by :math:`\log(K - k)` and squashed by a sigmoid, takes its share of
    what the earlier ones left (bijective).

    Example:
        >>> StickBreakingTransform()(mg.zeros(3)).sum()           # tensor(1.)
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _offset(x, k):
        return k - x.new_ones(x.shape[-1]).cumsum(-1)

    def _call(self, x):
        z = SigmoidTransform()._call(x - self._offset(x, x.shape[-1] + 1).log())
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = self._offset(y_crop, y.shape[-1])
        sf = (1 - y_crop.cumsum(-1)).clamp(min=float(finfo(y.dtype).tiny))
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        """Σ (-x' + logsigmoid(x') + log y_k), x' the shifted x."""
        x = x - self._offset(x, x.shape[-1] + 1).log()
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        """K - 1 coordinates become K."""
        shape = _at_least_one_dim(shape)
        return Size(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        """K coordinates become K - 1."""
        shape = _at_least_one_dim(shape)
        return Size(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Any square matrix onto a lower-triangular one with a positive diagonal: the strict
    lower triangle kept, the diagonal exponentiated.

    Example:
        >>> LowerCholeskyTransform()(mg.zeros(2, 2))            # the identity
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return y.tril(-1) + diag_embed(y.diagonal(dim1=-2, dim2=-1).log())
