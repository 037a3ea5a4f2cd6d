r"""``Binomial``, the count of successes in ``total_count`` trials of probability p
(``torch.distributions.Binomial``), and ``binomial`` (``torch.binomial``), its sampler,
drawn as PyTorch's CPU kernel draws: for each (n, p) in row-major order, the count of
geometric waiting times that fit in n trials where np < 10 (on the smaller of p and 1 - p),
Hörmann's transformed rejection (BTRS, 1993) otherwise, on the generator's float64
uniforms, so the same seed gives the same counts."""

import math

import numpy as np

from .. import backend, dtypes
from .. import generator as streams
from ..autograd import no_grad
from ..factories import arange
from ..ops.elementwise import exp
from ..ops.pointwise import log1p
from ..ops.torch_more import lgamma
from ..tensor import Tensor
from .distribution import SCALAR, Distribution
from . import constraints
from .gamma_sampler import _uniform
from .utils import BinaryParams

__all__ = ["Binomial", "binomial"]

_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)   # log k! less Stirling's, k = 0..9


def _stirling_tail(k):
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _log(x):
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _whole(x, rounding):
    # math.floor/ceil as a float, inf and NaN passed through (C's floor and ceil)
    return float(rounding(x)) if math.isfinite(x) else x


def _inversion(generator, count, prob):
    # the number of geometric waiting times whose sum stays within count
    geom_sum, num_geom = 0.0, 0.0
    logprob = math.log1p(-prob)
    while True:
        geom = _whole(_log(_uniform(generator)) / logprob, math.ceil)
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom += 1


def _btrs(generator, count, prob):
    # Hörmann's transformed rejection with squeeze, the kernel's constants
    stddev = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = _whole((count + 1) * prob, math.floor)
    while True:
        u = _uniform(generator) - 0.5
        v = _uniform(generator)
        us = 0.5 - abs(u)
        k = _whole((2 * a / us + b) * u + c, math.floor)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _log(v * alpha / (a / (us * us) + b))
        upperbound = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                      + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                      + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                      + _stirling_tail(m) + _stirling_tail(count - m)
                      - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= upperbound:
            return k


def _binomial_one(generator, count, prob):
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        sampler = _btrs if count * prob >= 10.0 else _inversion
        return float(sampler(generator, count, prob))
    if prob > 0.5:
        qprob = 1.0 - prob
        sampler = _btrs if count * qprob >= 10.0 else _inversion
        return count - sampler(generator, count, qprob)
    return math.nan


def binomial(count, prob, generator=None):
    r"""A Binomial(n, p) count for each (n, p) of ``count`` and ``prob`` (``torch.binomial``),
    drawn as torch's CPU kernel draws (module docstring).

    Formula:
        :math:`P(k) = \binom{n}{k} p^k (1 - p)^{n - k}`; n <= 0 or p <= 0 give 0, p >= 1
        gives n, a NaN p gives NaN. Float32 inputs are sampled in float64.

    Args:
        count: the trials n, a floating tensor. prob: p, a tensor of count's shape and
            dtype. generator: a ``mg.Generator``.

    Shape:
        output: count's shape and dtype.

    Example:
        >>> mg.manual_seed(0); mg.binomial(mg.full((3,), 20.0), mg.full((3,), 0.3))
    """
    for name, value in (("count", count), ("prob", prob)):
        if not isinstance(value, Tensor):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not "
                            f"{type(value).__name__}")
    for name, value in (("count", count), ("prob", prob)):
        if not dtypes.is_floating(value.dtype):
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{dtypes.torch_name(value.dtype)}")
    if count.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"binomial_cpu\" not implemented for "
                                  f"'{dtypes.torch_name(count.dtype)}'")
    if count.dtype != prob.dtype:
        raise RuntimeError(f"binomial(): expected prob of count's dtype {count.dtype}, got "
                           f"{prob.dtype}")
    gen = streams.check_generator("binomial", generator)
    counts, probs = (np.asarray(backend.to_numpy(t._array), np.float64) for t in (count, prob))
    counts, probs = np.broadcast_arrays(counts, probs)
    if counts.shape != tuple(count.shape):
        raise RuntimeError(f"binomial(): prob of shape {tuple(prob.shape)} does not match "
                           f"count of shape {tuple(count.shape)}")
    out = [_binomial_one(gen, n, p) for n, p in zip(counts.ravel().tolist(),
                                                       probs.ravel().tolist())]
    out = np.asarray(out, np.float64).reshape(counts.shape).astype(count.dtype)
    return Tensor._from_op(count.xp.asarray(out), None)


def _clamp_by_zero(x):
    # max(x, 0) with the gradient ½ at 0
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryParams, Distribution):
    r"""The binomial distribution of ``total_count`` trials, given by ``probs`` or ``logits``.

    Formula:
        :math:`\log P(k) = k\,l - \log k! - \log(n - k)! + \log n! - n\max(l, 0) -
        n\log(1 + e^{-|l|})`, l the logits (stable for large |l|).

    Args:
        total_count: n >= 0, integer valued (number or tensor, default 1). probs: p, or
            logits: l (one of the two). validate_args: the checks.

    Shape:
        batch_shape: the broadcast shape; event_shape: ().

    Example:
        >>> Binomial(10, probs=mg.tensor([0.2, 0.7])).sample()
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        self._set_count_and_param(total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._expand_params(Binomial, batch_shape, _instance,
                                  ("total_count", "probs", "logits"))
        new._param = new.logits if "logits" in self.__dict__ else new.probs
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The integers 0..n."""
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        """np."""
        return self.total_count * self.probs

    @property
    def mode(self):
        """floor((n + 1)p), at most n."""
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        """np(1 - p)."""
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def param_shape(self):
        """The given parameter's shape."""
        return self._param.size()

    def sample(self, sample_shape=SCALAR):
        """``binomial(n, p)`` over the draw's shape (torch's counts for the same seed)."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        """The log mass (class docstring)."""
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = lgamma(self.total_count + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(self.total_count - value + 1)
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * log1p(exp(-self.logits.abs()))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        """-Σ_k P(k) log P(k) over the support (one n for the whole batch)."""
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        """0..n along dim 0 (one n for the whole batch)."""
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by "
                                      "`enumerate_support`.")
        values = arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
