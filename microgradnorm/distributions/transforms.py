r"""Invertible maps of random variables (``torch.distributions.transforms``): a
``Transform`` maps x to y = f(x), gives back x = f⁻¹(y) (``inv``) and
:math:`\log|\det \partial y / \partial x|` (``log_abs_det_jacobian``), what
``TransformedDistribution`` needs to score a draw: :math:`\log p_Y(y) = \log p_X(x) -
\log|\det J|`.

Transforms: ``ExpTransform``, ``AffineTransform`` (loc + scale·x), ``SigmoidTransform``,
``TanhTransform`` (a SAC policy's squashing), ``SoftplusTransform``, ``PowerTransform``,
``AbsTransform`` and ``ComposeTransform`` (several in order).

Example:
    >>> t = ComposeTransform([AffineTransform(0.0, 2.0), TanhTransform()])
    >>> y = t(x); x_back = t.inv(y); ladj = t.log_abs_det_jacobian(x, y)
"""

import functools
import math
import operator

from ..dtypes import finfo
from ..factories import full_like, zeros_like
from ..functional import softplus
from ..ops.elementwise import sigmoid
from ..ops.special import atanh
from ..ops.torch_more import broadcast_shapes
from . import constraints
from .utils import broadcast_all, is_number, lazy_property, sum_rightmost

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform"]


class Transform:
    """An invertible map with the log of its Jacobian's determinant.

    Args:
        cache_size: 0 (no cache) or 1: keep the last (x, y) pair, so that ``inv(y)`` of the
            y just computed gives back that x itself (exactly, with its graph).

    Example:
        >>> ExpTransform()(mg.zeros(2))           # tensor([1., 1.])
    """

    bijective = False

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size, self._inv = cache_size, None
        if cache_size == 1:
            self._cached_x_y = (None, None)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self):
        """The event dims of the domain, which must be the codomain's."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (made once, kept)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        """+1 or -1: whether the map increases or decreases (for a monotone map)."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        """The same map with ``cache_size``."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """log |det dy/dx| at (x, y = f(x))."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        """The shape of f(x) for an x of ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The shape of f⁻¹(y) for a y of ``shape``."""
        return shape


class _InverseTransform(Transform):
    # f⁻¹ of a transform, sharing its cache
    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The region of x."""
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The region of y."""
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        """The shape of f(x) for an x of ``shape``."""
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        """The shape of f⁻¹(y) for a y of ``shape``."""
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """The transforms ``parts`` applied in order; the log-Jacobians summed, each over the
    event dims it leaves out.

    Args:
        parts: a list of Transforms. cache_size: 0 or 1, given to every part.

    Example:
        >>> ComposeTransform([ExpTransform(), AffineTransform(1.0, 2.0)])(mg.zeros(1))    # [3.]
    """

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The region of x."""
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The region of y."""
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @lazy_property
    def bijective(self):
        """Whether every part is."""
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self):
        """The product of the parts' signs."""
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        """The parts' inverses in reverse order."""
        if self._inv is None:
            self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def with_cache(self, cache_size=1):
        """The composition with ``cache_size``."""
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        """The parts' log-Jacobians at the intermediate values, summed."""
        if not self.parts:
            return zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms, event_dim = [], self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(sum_rightmost(part.log_abs_det_jacobian(xi, yi),
                                       event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape):
        """The shape of f(x) for an x of ``shape``."""
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        """The shape of f⁻¹(y) for a y of ``shape``."""
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return (self.__class__.__name__ + "(\n    "
                + ",\n    ".join(repr(p) for p in self.parts) + "\n)")


identity_transform = ComposeTransform([])


class _Elementwise(Transform):
    # a monotone map of each number, equal to every instance of its class
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = object.__hash__


class ExpTransform(_Elementwise):
    """y = exp(x); log|dy/dx| = x.

    Example:
        >>> ExpTransform().inv(mg.ones(2))           # tensor([0., 0.])
    """

    domain, codomain = constraints.real, constraints.positive

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        """x."""
        return x


class SigmoidTransform(_Elementwise):
    """y = sigmoid(x), clamped to [tiny, 1 - eps]; log|dy/dx| = -softplus(-x) - softplus(x).

    Example:
        >>> SigmoidTransform()(mg.zeros(1))         # tensor([0.5000])
    """

    domain, codomain = constraints.real, constraints.unit_interval

    def _call(self, x):
        info = finfo(x.dtype)
        return sigmoid(x).clamp(min=float(info.tiny), max=1.0 - float(info.eps))

    def _inverse(self, y):
        info = finfo(y.dtype)
        y = y.clamp(min=float(info.tiny), max=1.0 - float(info.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        """-softplus(-x) - softplus(x)."""
        return -softplus(-x) - softplus(x)


class SoftplusTransform(_Elementwise):
    """y = log(1 + exp(x)); x = y + log(1 - exp(-y)); log|dy/dx| = -softplus(-x).

    Example:
        >>> SoftplusTransform()(mg.zeros(1))        # tensor([0.6931])
    """

    domain, codomain = constraints.real, constraints.positive

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        """-softplus(-x)."""
        return -softplus(-x)


class TanhTransform(_Elementwise):
    r"""y = tanh(x); x = atanh(y); :math:`\log|dy/dx| = 2(\log 2 - x - \mathrm{softplus}(-2x))`,
    the stable form of :math:`\log(1 - \tanh^2 x)` (a SAC policy's correction).

    Example:
        >>> d = TransformedDistribution(Normal(mu, std), [TanhTransform(cache_size=1)])
    """

    domain, codomain = constraints.real, constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return atanh(y)

    def log_abs_det_jacobian(self, x, y):
        """2(log 2 - x - softplus(-2x))."""
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(_Elementwise):
    """y = |x| (not invertible: ``inv`` gives y itself, the positive root).

    Example:
        >>> AbsTransform()(mg.tensor([-2.0]))          # tensor([2.])
    """

    domain, codomain = constraints.real, constraints.positive
    bijective = False

    @property
    def sign(self):
        """Not monotone: no sign."""
        raise NotImplementedError

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals; log|dy/dx| = log|exponent·y/x|.

    Args:
        exponent: a number or tensor (broadcast with x). cache_size: 0 or 1.

    Example:
        >>> PowerTransform(2.0)(mg.tensor([3.0]))       # tensor([9.])
    """

    domain = codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        """The same map with ``cache_size``."""
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        """The exponent's sign."""
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and \
            self.exponent.eq(other.exponent).all().item()

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        """log|exponent·y/x|."""
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        """The shape of f(x) for an x of ``shape``."""
        return broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape):
        """The shape of f⁻¹(y) for a y of ``shape``."""
        return broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


class AffineTransform(Transform):
    """y = loc + scale·x; log|dy/dx| = log|scale|, summed over ``event_dim`` dims.

    Args:
        loc, scale: numbers or tensors. event_dim: the dims of one event (0: each number).
        cache_size: 0 or 1.

    Example:
        >>> AffineTransform(1.0, 2.0)(mg.zeros(2))        # tensor([1., 1.])
    """

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        """The dims of one event."""
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The region of x."""
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The region of y."""
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        """The same map with ``cache_size``."""
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if is_number(mine) and is_number(theirs):
                if mine != theirs:
                    return False
            elif not (mine == theirs).all().item():
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        """The sign of scale (a tensor for a tensor scale)."""
        if is_number(self.scale):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        """log|scale|, expanded to x's shape less the event dims."""
        shape = x.shape
        if is_number(self.scale):
            result = full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.view(result.size()[:-self.event_dim] + (-1,)).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        """The shape of f(x) for an x of ``shape``."""
        return broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                getattr(self.scale, "shape", ()))

    def inverse_shape(self, shape):
        """The shape of f⁻¹(y) for a y of ``shape``."""
        return broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                getattr(self.scale, "shape", ()))


# the transforms of whole events, defined on the ones above, under this module's name too
from .transforms_more import (IndependentTransform, LowerCholeskyTransform,  # noqa: E402
                              ReshapeTransform, SoftmaxTransform, StickBreakingTransform)
# the transforms built of others, of a distribution, or onto matrices (transforms_extra.py)
from .transforms_extra import (CatTransform, CorrCholeskyTransform,  # noqa: E402
                               CumulativeDistributionTransform, PositiveDefiniteTransform,
                               StackTransform)
__all__ += ["CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
            "PositiveDefiniteTransform", "StackTransform"]
