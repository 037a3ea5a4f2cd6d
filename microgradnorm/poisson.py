r"""``mg.poisson``: a Poisson count for each rate of a tensor (``torch.poisson``), drawn as
PyTorch's CPU kernel draws it, so the same seed gives the same counts.

The kernel visits the rates one at a time in row-major order and draws float64 uniforms
(the low 53 bits of a 64-bit draw) until it accepts:

* a rate below 10: Knuth's product of uniforms, the count of factors before the product
  falls to :math:`e^{-\lambda}` or below;
* a rate of 10 or more: Hörmann's transformed rejection with squeeze (PTRS, 1993), two
  uniforms a round;
* a rate of 0: 0, no draw.

Example:
    >>> mg.manual_seed(0); mg.poisson(mg.tensor([1.0, 20.0]))   # torch's counts
"""

import functools
import math

import numpy as np

from . import backend, dtypes
from . import generator as streams
from .factories import zero_gradient
from .sampling import DistributionRangeError
from .tensor import Tensor

__all__ = ["poisson"]

_INT64_MIN = -(1 << 63)


def _uniform(generator):
    # at::uniform_real_distribution<double>(0, 1): the low 53 bits of a 64-bit draw
    return (generator.random64() & ((1 << 53) - 1)) * 2.0 ** -53


@functools.lru_cache(maxsize=None)
def _lgamma():
    # the C library's lgamma, which torch's kernel calls: near k = 1e12 the test subtracts
    # numbers of 1e13, where CPython's own lgamma (another formula) may differ in the last
    # bit and flip an acceptance. Without a C library ctypes finds (or without ctypes):
    # CPython's, the same counts but for such rare last-bit flips
    try:
        import ctypes
        import ctypes.util
        function = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").lgamma
    except (ImportError, OSError, AttributeError):
        return math.lgamma
    function.restype, function.argtypes = ctypes.c_double, (ctypes.c_double,)
    return function


def _as_int64(value):
    # (int64_t) of a double, as x86-64 converts it: NaN and out of range give INT64_MIN
    if not math.isfinite(value) or not -2.0 ** 63 <= value < 2.0 ** 63:
        return _INT64_MIN
    return int(value)


def _small(generator, rate):
    # Knuth: multiply uniforms until the product reaches e^-rate
    threshold, product, count = math.exp(-rate), 1.0, 0
    while True:
        product *= _uniform(generator)
        if product <= threshold:
            return count
        count += 1


def _large(generator, rate):
    # PTRS with torch's constants; each round draws U then V
    root, log_rate = math.sqrt(rate), math.log(rate)
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    while True:
        u = _uniform(generator) - 0.5
        v = _uniform(generator)
        us = np.float64(0.5 - abs(u))       # NumPy scalars divide by 0 as C does: inf
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            k = _as_int64(float(np.floor((2 * a / us + b) * u + rate + 0.43)))
            bound = float(a / (us * us) + b)
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        log_v = math.log(v) if v > 0 else -math.inf
        if (log_v + math.log(inv_alpha) - math.log(bound)
                <= -rate + k * log_rate - _lgamma()(k + 1.0)):
            return k


def sample_poisson(generator, rates):
    """Poisson counts (float64) for a flat sequence of float64 ``rates`` >= 0, in order,
    from ``generator``: PyTorch's ``sample_poisson``, one rate after another.

    Example:
        >>> sample_poisson(Generator().manual_seed(0), [1.0, 20.0])
    """
    counts = np.empty(len(rates))
    for i, rate in enumerate(rates):
        counts[i] = 0 if rate == 0 else (_large if rate >= 10 else _small)(generator, rate)
    return counts


def poisson(input, generator=None):
    r"""A draw of the Poisson distribution for each element of ``input``, its rate
    (``torch.poisson``): a tensor of counts of input's shape and dtype.

    Formula:
        :math:`P(k) = \lambda^k e^{-\lambda} / k!`, sampled as PyTorch's CPU kernel does
        (module docstring): the same seed gives the same counts. An infinite rate gives
        -2**63, as torch's on x86-64. The gradient with respect to the rates is zero.

    Args:
        input: the rates, a floating tensor, every element >= 0.
        generator: a ``mg.Generator``, by default ``mg.default_generator``.

    Shape:
        output: input's shape, row-major.

    Example:
        >>> mg.manual_seed(0); counts = mg.poisson(mg.full((3,), 4.0))
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson: input must be a Tensor, got {type(input).__name__}")
    gen = streams.check_generator("poisson", generator)
    if not dtypes.is_floating(input.dtype):
        raise dtypes.NotFloatingError(f"poisson: not implemented for dtype {input.dtype}: the "
                                      f"rates must be floating")
    rates = np.asarray(backend.to_numpy(input._array), np.float64).ravel()
    if np.isnan(rates).any() or (rates < 0).any():
        raise DistributionRangeError("poisson: invalid Poisson rate, expected rate to be "
                                     "non-negative")
    counts = sample_poisson(gen, rates.tolist()).reshape(input.shape).astype(input.dtype)
    return zero_gradient(Tensor._from_op(input.xp.asarray(counts), None), input)
