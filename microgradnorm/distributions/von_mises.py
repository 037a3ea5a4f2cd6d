r"""``VonMises``, the circular normal distribution of mean direction μ and concentration κ
(``torch.distributions.VonMises``): density :math:`e^{\kappa\cos(x - \mu)} / 2\pi I_0(\kappa)`
on [-π, π), drawn by Best and Fisher's rejection sampler (1979) on ``mg.rand``, as torch
draws it."""

import math

from ..autograd import no_grad
from ..factories import rand, zeros
from ..ops.pointwise import cos
from ..ops.masking import where
from ..ops.special import acos
from .distribution import SCALAR, Distribution
from . import constraints
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# the polynomial fits of I0 and I1 (Abramowitz and Stegun 9.8.1-9.8.4) torch evaluates
_I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_LARGE = [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
             0.02635537, -0.01647633, 0.00392377]
_I1_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_LARGE = [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
             -0.02895312, 0.01787654, -0.00420059]


def _eval_poly(y, coef):
    # Horner's rule from the highest coefficient
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    # log I_order(x), order 0 or 1, by the polynomial fits below and above x = 3.75
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) * (x / 3.75)
    small = _eval_poly(y, [_I0_SMALL, _I1_SMALL][order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, [_I0_LARGE, _I1_LARGE][order]).log()
    return where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    # Best and Fisher's sampler: three uniforms a round for every element until all accept
    done = zeros(x.shape, dtype=bool, device=loc.device)
    while not done.all():
        u1, u2, u3 = rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = where(accept, (u3 - 0.5).sign() * acos(f), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    r"""The von Mises distribution on the circle (no ``rsample``).

    Formula:
        :math:`\log p(x) = \kappa\cos(x - \mu) - \log 2\pi - \log I_0(\kappa)`, I0 by
        torch's polynomial fits; variance :math:`1 - I_1(\kappa)/I_0(\kappa)` (circular).

    Args:
        loc: μ (radians). concentration: κ > 0 (numbers or tensors). validate_args: checks.

    Shape:
        batch_shape: the two broadcast; event_shape: ().

    Example:
        >>> VonMises(mg.tensor([0.0]), mg.tensor([4.0])).sample((3,))      # near 0
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, SCALAR, validate_args)

    def log_prob(self, value):
        """κ cos(x - μ) - log 2π - log I0(κ)."""
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * cos(value - self.loc)
        return (log_prob - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self):
        return self.loc.double()

    @lazy_property
    def _concentration(self):
        return self.concentration.double()

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        return where(kappa < 1e-05, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape=SCALAR):
        """A draw in [-π, π), sampled in float64 (torch's draws for the same seed)."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            x = zeros(shape, dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        """A VonMises of the parameters expanded to ``batch_shape``."""
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            return type(self)(self.loc.expand(batch_shape),
                              self.concentration.expand(batch_shape),
                              validate_args=validate_args)

    @property
    def mean(self):
        """μ (the mean direction)."""
        return self.loc

    @property
    def mode(self):
        """μ."""
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance 1 - I1(κ)/I0(κ)."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
