"""The samplers of PyTorch's CPU kernels, on the words of a ``Generator`` (generator.py):
the same seed gives the same values as PyTorch on an x86-64 CPU, bit for bit, in float32
and float64 (the exceptions, and why, are in docs/pytorch.md).

What each sampler does with the words (PyTorch's CPU kernels, restated):

* uniform on [a, b): float32 keeps the low 24 bits of one word, float64 the low 53 bits of
  a 64-bit draw, times 2**-k, then ``x * (b - a) + a`` as one fused multiply-add (the
  compiler fuses it in PyTorch's AVX2/AVX-512 kernels); a value that rounds up to ``b``
  becomes ``a``.
* normal, 16 elements or more of a contiguous tensor: every element drawn uniform first,
  then Box-Muller on blocks of 16 (u1 = 1 - first 8, u2 = last 8: ``r = sqrt(-2 log u1)``,
  ``r cos(2 pi u2)`` into the first 8 and ``r sin`` into the last 8); when the size is not
  a multiple of 16, 16 more uniforms redo the last 16 elements. float32 runs PyTorch's AVX2
  polynomial log and sincos, reproduced here operation by operation; float64 calls the C
  library's log, cos and sin, as PyTorch does.
* normal, fewer than 16 elements (or a non-contiguous tensor): two float64 uniforms per
  pair, ``r = sqrt(-2 log1p(-u2))``, ``r cos(2 pi u1)`` now and ``r sin`` cached in the
  generator for the next draw (``next_double_normal_sample``).
* complex uniform and normal: the real dtype's draws for 2n elements, read as n (real,
  imaginary) pairs (torch fills ``view_as_real``), the normal's std divided by sqrt(2).
* random integers in [low, high): ``word % (high - low) + low`` with one word when the
  range is below 2**28, a 64-bit draw otherwise.
* bernoulli(p): a uniform below p (float64 uniform for a float p; a float32 uniform for a
  float32 tensor of p); exponential: ``-log1p(-u) / lambd`` with a float64 uniform.
* cauchy: ``median + sigma * tan(pi * (u - 0.5))``, geometric: ``ceil(log(u) / log1p(-p))``,
  each with a float64 uniform; log-normal: ``exp`` of the normal's scalar path (cached
  pairs) at every size: these kernels draw one element at a time, in float64.

Example:
    >>> g = Generator().manual_seed(0)          # from generator.py
    >>> uniform(g, 3, "float32")          # torch.rand(3, generator=g)
    array([0.4962566 , 0.7682218 , 0.08847743], dtype=float32)
"""

import math
import warnings

import numpy as np

from . import backend, dtypes

__all__ = ["bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial",
           "normal", "random_integers", "randperm", "check_randperm", "uniform"]

_MASK64 = (1 << 64) - 1


# ----- the fused multiply-add (backend's), the C library's functions, vectorised ----------
def _fma64(a, b, c):
    # a * b + c rounded once in float64 (backend.fused_multiply_add), shapes broadcast
    return backend.fused_multiply_add(np.asarray(a, np.float64), b, c)


def _fma32(a, b, c):
    # a * b + c rounded once in float32 (backend.fused_multiply_add), shapes broadcast
    return backend.fused_multiply_add(np.asarray(a, np.float32), b, c)


def _libm(function, values):
    # the C library's function, element by element: PyTorch calls the same one, so the
    # last bit agrees (NumPy's vectorised log/sin/cos may differ from it)
    flat = np.asarray(values, np.float64).ravel()
    return np.fromiter(map(function, flat.tolist()), np.float64, flat.size).reshape(
        np.shape(values))


# ----- the errors: torch's classes, and the classes this library raised before -------------
class DistributionRangeError(RuntimeError, ValueError):
    """A parameter outside its distribution's range (std < 0, from > to, p outside [0, 1]):
    torch's RuntimeError, and a ValueError."""


NotFloatingError = dtypes.NotFloatingError    # a continuous distribution of an integer dtype


class SamplerDtypeError(NotImplementedError, TypeError):
    """A dtype a sampler has no kernel for (``random_`` of a complex tensor, ``randperm`` of
    bool): torch's NotImplementedError (a RuntimeError), and a TypeError."""


# ----- dtypes ------------------------------------------------------------------------------
def _float_dtype(where, dtype, n=None):
    # n: the draws' count, for the samplers whose dtype torch checks in the kernel only (none
    # runs for no element: an empty int64 tensor's normal_ is itself)
    dtype = dtypes.as_dtype(dtype)
    if not dtypes.is_floating(dtype) and n != 0:
        raise NotFloatingError(f"{where}: needs a floating dtype (float16, bfloat16, float32, "
                        f"float64), got {dtype}")
    if dtypes.is_float8(dtype) and n != 0:       # torch's CPU has no sampler for float8
        dtypes.check_float8_compute(where, dtype)
    return dtype


def _digits(dtype):
    # mantissa bits with the implicit one, std::numeric_limits<T>::digits
    return {2: 11, 4: 24, 8: 53}[dtype.itemsize] if dtype != dtypes.bfloat16 else 8


# ----- uniform -----------------------------------------------------------------------------
def _uniform24(generator, n):
    # float32 uniforms on [0, 1): the low 24 bits of a word
    return (generator._words(n) & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2 ** -24)


def _uniform53(generator, n):
    # float64 uniforms on [0, 1): the low 53 bits of a 64-bit draw
    bits = generator._words64(n) & np.uint64((1 << 53) - 1)
    return bits.astype(np.float64) * 2.0 ** -53


def uniform(generator, n, dtype, low=0.0, high=1.0):
    r"""``n`` draws from U[low, high) in ``dtype``: ``torch.empty(n).uniform_(low, high)``.

    Formula:
        :math:`x = (w \bmod 2^k)\,2^{-k}`, :math:`\mathrm{fma}(x, b - a, a)` with k = 24
        (float32, float16, bfloat16: one word, computed in float32) or 53 (float64: a
        64-bit draw); a value equal to ``high`` in ``dtype`` becomes ``low``.

    Args:
        generator: a Generator. n: how many. dtype: a floating dtype.
        low, high: the bounds, low <= high, high - low within the dtype's range.

    Example:
        >>> uniform(Generator().manual_seed(0), 2, "float64")
        array([0.970053  , 0.70781986])
    """
    if dtypes.as_dtype(dtype).kind == "c":       # torch fills view_as_real: (re, im) pairs
        pairs = uniform(generator, 2 * n, dtypes.real_of(dtype), low, high)
        return pairs.view(dtypes.as_dtype(dtype))
    dtype = _float_dtype("uniform_", dtype)
    dtypes.check_number("uniform_", "from", low)
    dtypes.check_number("uniform_", "to", high)
    limit = float(dtypes.finfo(dtype).max)
    if not low <= high:
        raise DistributionRangeError(f"uniform_: expects from <= to, got from={low} > "
                                     f"to={high}")
    if not (-limit <= low <= limit and -limit <= high <= limit) or high - low > limit:
        raise DistributionRangeError(f"uniform_: from={low} and to={high} must lie within the "
                                     f"range of {dtype}, and to - from within its largest "
                                     f"value")
    if n == 0:
        return np.empty(0, dtype)
    if dtype == np.float64:
        x = _uniform53(generator, n)
        values = x if (low, high) == (0, 1) else _fma64(x, high - low, low)
        values = np.where(values == high, low, values)
    else:                                              # float32 arithmetic, then rounded
        a, b = np.float32(low), np.float32(high)
        x = _uniform24(generator, n)
        values = x if (low, high) == (0, 1) else _fma32(x, b - a, a)
        values = values.astype(dtype)
        values = np.where(values == np.asarray(high).astype(dtype), np.asarray(low).astype(
            dtype), values)
    return values.astype(dtype, copy=False)


# ----- normal: PyTorch's AVX2 Box-Muller for float32, reproduced operation by operation ---
_F = np.float32
# Cephes' single-precision log and sin/cos polynomials, as PyTorch's AVX2 code uses them
_LOG_POLY = tuple(_F(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1,
                                  -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
                                  2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
_LOG_Q1, _LOG_Q2 = _F(-2.12194440e-4), _F(0.693359375)          # ln 2 in two parts
_SQRT_HALF = _F(0.707106781186547524)
_PI_PARTS = (_F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8))
_SIN_POLY = (_F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1))
_COS_POLY = (_F(2.443315711809948e-5), _F(-1.388731625493765e-3), _F(4.166664568298827e-2))
_FOUR_OVER_PI = _F(1.27323954473516)
_TWO_PI32 = _F(2.0 * math.pi)


def _log_f32(x):
    # frexp-like split x = m 2^e with m in [sqrt(1/2), sqrt 2), then a degree-9 polynomial
    # in m - 1; every multiply followed by an add is one fused operation, as compiled
    bits = np.maximum(x, np.float32(1.1754944e-38)).view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F) + _F(1)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(_F)                # mantissa in [0.5, 1)
    small = m < _SQRT_HALF
    m_minus_1 = m - _F(1)
    e = e - np.where(small, _F(1), _F(0))
    m = m_minus_1 + np.where(small, m, _F(0))           # 2m - 1 below sqrt(1/2), else m - 1
    z = m * m
    y = np.full_like(m, _LOG_POLY[0])
    for c in _LOG_POLY[1:]:
        y = _fma32(y, m, c)
    y = _fma32(y * m, z, e * _LOG_Q1)
    y = y - z * _F(0.5)
    return _fma32(e, _LOG_Q2, m + y)


def _sincos_f32(x):
    # reduce |x| by multiples of pi/4 (in three parts), evaluate the sine and cosine
    # polynomials, swap and sign them by the octant; x >= 0 here (2 pi u)
    j = (x * _FOUR_OVER_PI).astype(np.int32)                         # truncation
    j = (j + 1) & ~1
    y = j.astype(_F)
    sin_sign = (j & 4) << 29
    cos_sign = (~(j - 2) & 4) << 29
    use_sin_poly = (j & 2) == 0
    for part in _PI_PARTS:
        x = _fma32(y, part, x)
    z = x * x
    cos_p = _fma32(_fma32(np.full_like(z, _COS_POLY[0]), z, _COS_POLY[1]), z, _COS_POLY[2])
    cos_p = _fma32(cos_p * z, z, -(z * _F(0.5))) + _F(1)
    sin_p = _fma32(_fma32(np.full_like(z, _SIN_POLY[0]), z, _SIN_POLY[1]), z, _SIN_POLY[2])
    sin_p = _fma32(sin_p * z, x, x)
    sin = np.where(use_sin_poly, sin_p, cos_p).view(np.int32) ^ sin_sign
    cos = np.where(use_sin_poly, cos_p, sin_p).view(np.int32) ^ cos_sign
    return sin.view(_F), cos.view(_F)


def _box_muller16_f32(u, mean, std):
    # u: float32 uniforms, a multiple of 16; blocks of 16: u1 = 1 - first 8, u2 = last 8
    u = u.reshape(-1, 16)
    radius = np.sqrt(_F(-2) * _log_f32(_F(1) - u[:, :8]))
    sin, cos = _sincos_f32(_TWO_PI32 * u[:, 8:])
    out = np.empty_like(u)
    if std == 1 and mean == 0:          # fma(z, 1, 0) is z, but -0 becomes +0
        out[:, :8], out[:, 8:] = radius * cos + _F(0), radius * sin + _F(0)
    else:
        out[:, :8] = _fma32(radius * cos, std, mean)
        out[:, 8:] = _fma32(radius * sin, std, mean)
    return out.ravel()


def _box_muller16_f64(u, mean, std):
    # the same blocks in float64 with the C library's log, cos and sin
    u = u.reshape(-1, 16)
    radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - u[:, :8]))
    theta = (2.0 * math.pi) * u[:, 8:]
    first, second = radius * _libm(math.cos, theta), radius * _libm(math.sin, theta)
    out = np.empty_like(u)
    if std == 1 and mean == 0:          # fma(z, 1, 0) is z, but -0 becomes +0
        out[:, :8], out[:, 8:] = first + 0.0, second + 0.0
    else:
        out[:, :8], out[:, 8:] = _fma64(first, std, mean), _fma64(second, std, mean)
    return out.ravel()


def _normal_pairs(generator, n, mean, std):
    # the scalar path: float64 Box-Muller pairs, the second of a pair cached for the next
    # draw (in this call or a later one); returns float64
    values = []
    if generator.next_double_normal_sample is not None and n:
        values.append(np.array([generator.next_double_normal_sample]))
        generator.next_double_normal_sample = None
    pairs = (n - len(values) + 1) // 2
    if pairs:
        u = _uniform53(generator, 2 * pairs).reshape(pairs, 2)
        radius = np.sqrt(-2.0 * _libm(math.log1p, -u[:, 1]))
        theta = 2.0 * math.pi * u[:, 0]
        both = np.stack([radius * _libm(math.cos, theta), radius * _libm(math.sin, theta)], 1)
        values.append(both.ravel())
    drawn = np.concatenate(values) if values else np.empty(0)
    if drawn.size > n:                                  # an odd count: keep the last sine
        generator.next_double_normal_sample = float(drawn[-1])
    return _fma64(drawn[:n], std, mean)


def normal(generator, n, dtype, mean=0.0, std=1.0, contiguous=True):
    r"""``n`` draws from N(mean, std²) in ``dtype``, in the order of a tensor's elements:
    ``torch.empty(n).normal_(mean, std)``.

    Formula:
        Box-Muller, :math:`r = \sqrt{-2\ln u_1}`, :math:`(r\cos 2\pi u_2, r\sin 2\pi u_2)`,
        then :math:`\mathrm{fma}(z, \text{std}, \text{mean})`; by blocks of 16 for 16
        elements or more of a contiguous tensor, by cached pairs otherwise (module doc).

    Args:
        generator: a Generator. n: how many. dtype: a floating dtype.
        mean, std: the distribution, std >= 0.
        contiguous: whether the tensor filled is contiguous (PyTorch takes the block path
            only then).

    Example:
        >>> normal(Generator().manual_seed(0), 3, "float32")
        array([ 1.5409961, -0.2934289, -2.1787894], dtype=float32)
    """
    complex_dtype = dtypes.as_dtype(dtype)
    dtype = _float_dtype("normal_", dtype if complex_dtype.kind != "c" else
                         dtypes.real_of(complex_dtype), n)
    dtypes.check_number("normal_", "mean", mean)
    dtypes.check_number("normal_", "std", std)
    if not std >= 0:
        raise DistributionRangeError(f"normal_: expects std >= 0.0, got std={std}")
    if complex_dtype.kind == "c":     # torch fills view_as_real, each part std / sqrt(2)
        pairs = normal(generator, 2 * n, dtype, mean, std / math.sqrt(2), contiguous)
        return pairs.view(complex_dtype)
    if n == 0:
        return np.empty(0, dtype)
    if n < 16 or not contiguous:
        return _normal_pairs(generator, n, mean, std).astype(dtype)
    full, tail = n // 16 * 16, n % 16
    if dtype == np.float64:
        out = np.empty(n)
        out[:full] = _box_muller16_f64(_uniform53(generator, n)[:full], mean, std)
        if tail:                        # 16 more uniforms redo the last 16 elements
            out[n - 16:] = _box_muller16_f64(_uniform53(generator, 16), mean, std)
        return out
    # float32 in float32; float16 and bfloat16 too, then rounded (they skip the uniforms of
    # the tail, which float32 draws and then overwrites)
    out = np.empty(n, _F)
    first = _uniform24(generator, n if dtype == np.float32 else full)
    out[:full] = _box_muller16_f32(first[:full], _F(mean), _F(std))
    if tail:
        out[n - 16:] = _box_muller16_f32(_uniform24(generator, 16), _F(mean), _F(std))
    return out.astype(dtype)


# ----- random integers ---------------------------------------------------------------------
def _bounds(dtype):
    # the range random_ may produce: integers' own, floats' consecutive integers
    if dtype.kind == "f" or dtype == dtypes.bfloat16:
        top = 1 << _digits(dtype)
        return -top, top
    if dtype.kind == "b":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _as_dtype_int(value, dtype):
    # static_cast<int64_t>(static_cast<scalar_t>(value)): the nearest value the dtype holds
    return int(float(np.asarray(value, np.int64).astype(dtype)))


def _update_from(low, dtype):
    # torch's update_from: a lower bound the dtype rounds down moves up inside the range
    rounded = _as_dtype_int(low + 1, dtype)
    if rounded < low:
        shift = abs(low + 1).bit_length() - 1
        return rounded + (1 << (shift - _digits(dtype) + 1))
    return low


def _update_to(high, dtype):
    # torch's update_to: an upper bound the dtype rounds up moves down inside the range
    rounded = _as_dtype_int(high - 1, dtype)
    if rounded >= high:
        shift = abs(high - 1).bit_length() - 1
        return rounded - (1 << (shift - _digits(dtype) + 1))
    return high


def random_integers(generator, n, dtype, low=None, high=None):
    r"""``n`` random integers in ``dtype``: ``Tensor.random_`` (``low``, ``high`` None: any
    value the dtype holds exactly; ``high`` None: [low, max]; else [low, high)).

    Formula:
        :math:`(w \bmod (\text{high} - \text{low})) + \text{low}`, w a 32-bit word when
        the range is below :math:`2^{28}`, a 64-bit draw otherwise; without bounds,
        :math:`w \bmod (\max + 1)` (int64 and float64 from 64-bit draws).

    Args:
        generator: a Generator. n: how many. dtype: any numeric dtype.
        low, high: ints (None as described), low < high, within the dtype's range.

    Example:
        >>> random_integers(Generator().manual_seed(0), 4, "int64", 0, 10)
        array([4, 9, 3, 0])
    """
    dtype = dtypes.as_dtype(dtype)
    # torch draws uint16, uint32 and uint64 between bounds (randint, random_(to),
    # random_(from, to)) but has no unbounded kernel for them (random_())
    if not dtypes.is_numeric(dtype) or dtypes.is_float8(dtype) or (
            dtype.kind == "u" and dtype != np.uint8 and low is None and high is None):
        raise SamplerDtypeError(f'"random_kernel_cpu" not implemented for {dtype}: random_() '
                                f"without bounds takes bool, uint8, signed integers and floats")
    for name, value in (("from", low), ("to", high)):
        if value is not None:
            dtypes.check_number("random_", name, value, integer=True)
    floating = dtypes.is_floating(dtype)
    lowest, top = _bounds(dtype)
    if low is None and high is None:                       # random_(): uniform_int
        words = (generator._words64(n) if dtype in (np.int64, np.float64)
                 else generator._words(n))
        if dtype.kind == "b":
            return (words & np.uint64(1)).astype(dtype)
        modulus = (1 << _digits(dtype)) + 1 if floating else top + 1
        return (words % np.uint64(modulus)).astype(np.int64).astype(dtype)
    low = int(low)
    if high is None:
        if low == -(1 << 63):                              # the whole int64 range
            return generator._words64(n).view(np.int64).astype(dtype)
        if floating:
            low = _update_from(low, dtype)
        high = top + 1
    else:
        high = int(high)
        if not low < high:
            raise DistributionRangeError(f"random_: expects from < to, got from={low} >= "
                                         f"to={high}")
        if floating:
            low, high = _update_from(low, dtype), _update_to(high, dtype)
            if not low < high:
                raise DistributionRangeError(f"random_: from and to rounded to {dtype} leave no "
                                             f"value: from={low} >= to={high}")
    if not (lowest <= low <= top and lowest <= high - 1 <= top):
        message = (f"random_: from={low} and to - 1={high - 1} must lie within "
                   f"[{lowest}, {top}] for dtype {dtype}")
        if not floating:
            raise DistributionRangeError(message)
        # torch only warns for floats: beyond 2**digits not every integer is a value
        warnings.warn(message + ": not every integer there is a value of the dtype",
                      stacklevel=3)
    span = high - low
    words = generator._words64(n) if span >= 1 << 28 else generator._words(n)
    with np.errstate(over="ignore"):                     # two's complement, as in C++
        values = words % np.uint64(span & _MASK64) + np.uint64(low & _MASK64)
    return values.view(np.int64).astype(dtype)


def check_randperm(n, dtype):
    """torch's checks of ``randperm(n, dtype=dtype)``: n >= 0, n - 1 a value of an integer
    dtype, n at most one past the consecutive integers of a floating one (float16: 2049),
    no bool; each a RuntimeError (NotImplementedError for bool), as torch's."""
    if n < 0:
        raise DistributionRangeError(f"randperm: n must be non-negative, got {n}")
    if dtype.kind == "b" or not dtypes.is_numeric(dtype):
        raise SamplerDtypeError(f'"randperm" not implemented for {dtype}')
    if dtypes.is_floating(dtype):
        if dtype != dtypes.bfloat16 and n > (1 << _digits(dtype)) + 1:
            raise DistributionRangeError(f"randperm: n cannot be greater than "
                                         f"2^{_digits(dtype)}+1 for {dtype}, got {n}")
    elif max(n - 1, 0) > _bounds(dtype)[1]:
        raise DistributionRangeError(f"randperm: n - 1 = {n - 1} cannot be converted to "
                                     f"{dtype} without overflow")


def randperm(generator, n):
    """A random permutation of 0 .. n-1 as int64: ``torch.randperm(n)`` (PyTorch's swaps:
    position i trades with i + word % (n - i), one word per position but the last).

    Example:
        >>> randperm(Generator().manual_seed(0), 5)
        array([4, 0, 1, 3, 2])
    """
    dtypes.check_number("randperm", "n", n, integer=True)
    if n < 0:
        raise DistributionRangeError(f"randperm: n must be non-negative, got {n}")
    n = int(n)
    perm = list(range(n))
    if n > 1:
        offsets = (generator._words(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
        for i, offset in enumerate(offsets):      # sequential: each swap sees the last
            j = i + offset
            perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm, np.int64)


# ----- bernoulli, exponential, multinomial -------------------------------------------------
def bernoulli(generator, n, dtype, p):
    """``n`` draws of 1 with probability ``p`` (else 0) in ``dtype``: ``bernoulli_(p)``.

    Formula:
        ``u < p``, u a float64 uniform for a float ``p`` or a float64 array of p, a float32
        uniform for a float32 (float16, bfloat16) array of p.

    Args:
        generator: a Generator. n: how many. dtype: the result's dtype.
        p: a number in [0, 1], or an array of n probabilities (the tensor's order).

    Example:
        >>> bernoulli(Generator().manual_seed(0), 4, "float32", 0.5)
        array([0., 0., 1., 0.], dtype=float32)
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype.kind == "c":
        raise SamplerDtypeError(f"bernoulli_: not implemented for dtype {dtype}")
    if isinstance(p, np.ndarray):
        if not dtypes.is_floating(p.dtype):
            raise NotFloatingError(f"bernoulli_: p must be a floating tensor, got dtype "
                                   f"{p.dtype}")
        if not ((p >= 0) & (p <= 1)).all():
            raise DistributionRangeError("bernoulli_: every p must be in [0, 1]")
        u = _uniform53(generator, n) if p.dtype == np.float64 else _uniform24(generator, n)
        return (u < p.astype(u.dtype).ravel()).astype(dtype)
    dtypes.check_number("bernoulli_", "p", p)
    if not 0 <= p <= 1:
        raise DistributionRangeError(f"bernoulli_: expects p in [0, 1], got p={p}")
    return (_uniform53(generator, n) < p).astype(dtype)


def exponential(generator, n, dtype, lambd=1.0):
    r"""``n`` draws from Exp(lambd) in ``dtype``: ``exponential_(lambd)``.

    Formula:
        :math:`-\frac{1}{\lambda}\,\mathrm{log1p}(-u)`, u a float64 uniform, computed in
        float64 and rounded to ``dtype``.

    Example:
        >>> exponential(Generator().manual_seed(0), 2, "float64")
        array([3.50832619, 1.23038476])
    """
    dtype = _float_dtype("exponential_", dtype, n)
    dtypes.check_number("exponential_", "lambd", lambd)
    if not lambd > 0:
        raise DistributionRangeError(f"exponential_: expects lambd > 0.0, got lambd={lambd}")
    scale = -1.0 / lambd
    return (scale * _libm(math.log1p, -_uniform53(generator, n))).astype(dtype)


def _affine64(z, scale, shift):
    # z * scale + shift in float64, one rounding (torch's compiled kernels fuse it); an
    # infinite or NaN scale or shift has no exact product to split: plain IEEE arithmetic
    if math.isfinite(scale) and math.isfinite(shift):
        return _fma64(z, scale, shift)
    with np.errstate(invalid="ignore", over="ignore"):
        return z * scale + shift


def cauchy(generator, n, dtype, median=0.0, sigma=1.0):
    r"""``n`` draws from Cauchy(median, sigma) in ``dtype``: ``cauchy_(median, sigma)``.

    Formula:
        :math:`\text{median} + \sigma \tan(\pi (u - \tfrac12))`, u a float64 uniform, the
        C library's tan, the last step one fused multiply-add; rounded to ``dtype``.

    Example:
        >>> cauchy(Generator().manual_seed(0), 2, "float64")
        array([10.59772933,  0.76476726])
    """
    dtype = _float_dtype("cauchy_", dtype)
    dtypes.check_number("cauchy_", "median", median)
    dtypes.check_number("cauchy_", "sigma", sigma)
    if not sigma > 0:
        raise DistributionRangeError(f"cauchy_: expects sigma > 0.0, but found sigma={sigma}")
    tangents = _libm(math.tan, math.pi * (_uniform53(generator, n) - 0.5))
    with np.errstate(over="ignore"):                 # past float32's range: inf
        return _affine64(tangents, sigma, median).astype(dtype)


def log_normal(generator, n, dtype, mean=1.0, std=2.0):
    r"""``n`` draws whose logarithm is N(mean, std²), in ``dtype``: ``log_normal_(mean, std)``.

    Formula:
        :math:`\exp(z \cdot \text{std} + \text{mean})`, z from the cached float64 pairs of
        ``normal``'s scalar path whatever ``n`` (torch's kernel draws one element at a time),
        the C library's exp; rounded to ``dtype``.

    Example:
        >>> log_normal(Generator().manual_seed(0), 2, "float64", 0.0, 1.0)
        array([4.66923902, 0.74570224])
    """
    dtype = _float_dtype("log_normal_", dtype, n)
    dtypes.check_number("log_normal_", "mean", mean)
    dtypes.check_number("log_normal_", "std", std)
    if not std > 0:
        raise DistributionRangeError(f"log_normal_: expects std > 0.0, but found std={std}")
    z = _affine64(_normal_pairs(generator, n, 0.0, 1.0), std, mean)   # (0, 1): z itself
    with np.errstate(over="ignore"):                 # past float32's range: inf
        return _libm(_exp, z).astype(dtype)


def _exp(x):
    # the C library's exp, inf past its range as C's (Python's math.exp raises there)
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def geometric(generator, n, dtype, p):
    r"""``n`` draws of the number of Bernoulli(p) trials up to the first success, in
    ``dtype`` (any but bool and complex): ``geometric_(p)``.

    Formula:
        :math:`\lceil \ln u / \mathrm{log1p}(-p) \rceil`, u a float64 uniform, the C
        library's log; rounded (cast) to ``dtype``.

    Example:
        >>> geometric(Generator().manual_seed(0), 3, "int64", 0.5)
        array([1, 1, 2])
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype.kind in "bc":
        raise NotImplementedError(f"geometric_: not implemented for dtype {dtype}")
    dtypes.check_number("geometric_", "p", p)
    if not 0 < p < 1:
        raise DistributionRangeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = _uniform53(generator, n)
    logs = _libm(math.log, np.where(u > 0, u, 1.0))
    logs[u == 0] = -math.inf                    # log(0), where Python's log raises
    with np.errstate(over="ignore"):
        return np.ceil(logs / math.log1p(-p)).astype(dtype)


def multinomial(generator, probs, num_samples, replacement=False):
    """Class indices (int64, rows x num_samples) drawn from each row of ``probs`` (a 2-D
    array of non-negative weights in their dtype): ``torch.multinomial``.

    Formula:
        without replacement (or one sample): the top ``num_samples`` of ``p / q``,
        q ~ Exp(1) of p's dtype (the exponential race); with replacement: the first class
        whose normalised running sum (in p's dtype) reaches a float64 uniform, by
        PyTorch's binary search.

    Example:
        >>> multinomial(Generator().manual_seed(0), np.ones((1, 4), "float32"), 2)
        array([[2, 1]])
    """
    rows, classes = probs.shape
    if not rows:
        return np.empty((0, num_samples), np.int64)
    if not replacement or num_samples == 1:
        q = exponential(generator, probs.size, probs.dtype, 1.0).reshape(probs.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = probs / q
        if num_samples == 1:
            return np.argmax(keys, axis=1).reshape(rows, 1).astype(np.int64)
        return np.argsort(-keys.astype(np.float64), axis=1, kind="stable")[:, :num_samples]
    accumulate = np.float64 if probs.dtype == np.float64 else np.float32
    out = np.empty((rows, num_samples), np.int64)
    for row in range(rows):                       # row by row: each draws its samples
        cum = np.cumsum(probs[row].astype(accumulate))   # sequential, as PyTorch's loop
        cum = cum / cum[-1]
        cum[-1] = 1
        u = _uniform53(generator, num_samples)
        left = np.zeros(num_samples, np.int64)
        right = np.full(num_samples, classes, np.int64)
        while (right > left).any():                # PyTorch's binary search, all at once
            active = right > left
            mid = left + (right - left) // 2
            below = cum[np.minimum(mid, classes - 1)].astype(np.float64) < u
            left = np.where(active & below, mid + 1, left)
            right = np.where(active & ~below, mid, right)
        out[row] = left
    return out
