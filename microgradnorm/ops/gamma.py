"""The gamma family and the modified Bessel functions as array functions (NumPy has none):
``lgamma``, ``digamma``, ``polygamma`` (with the Hurwitz zeta function) and I0, I1, on NumPy
arrays in float64, the result in the input's dtype; CuPy arrays go to
``cupyx.scipy.special``. ``ops/torch_more.py`` makes them nodes.

Each follows the algorithm torch's CPU kernels use where that decides a corner (digamma's
reflection and its value ±inf at ±0, trigamma's six steps, the zeta series' edges: a pole
gives inf, an infinite x NaN), so the values at singular points are torch's:
``lgamma`` is Lanczos's approximation (for x > 0 within 13 ulp of the exact value over a
dense sweep, 3 past x = 10; glibc's, which torch calls, within 1), on [0.5, 3), by its
zeros, the Taylor series of log Γ(x) at 1 and 2 (within 5 ulp),
``digamma`` and ``trigamma`` the recurrence to x >= 10 (6) and the asymptotic series, ``zeta``
Euler-Maclaurin summation, I0 and I1 their power series below 20 and their asymptotic
series above."""

import functools
import math

import numpy as np

from .. import backend

MACHEP = 1.11022302462515654042e-16          # 2⁻⁵³, where the series stop
LOG_PI = math.log(math.pi)
EULER_GAMMA = 0.57721566490153286061


def _float64(array):
    """``array`` as a new float64 NumPy array of at least one dim (the functions below
    write into it), and the function that gives a result back in ``array``'s dtype and
    shape."""
    shape, dtype = np.shape(array), array.dtype

    def back(out):
        with np.errstate(over="ignore"):         # past the dtype's range: inf, as torch's
            return np.asarray(out.reshape(shape), dtype=dtype)
    return np.array(array, dtype=np.float64).reshape(-1), back


def _on_gpu(name, array, *args):
    # cupyx.scipy.special's function, half precision through float32
    import cupyx.scipy.special

    function = getattr(cupyx.scipy.special, name)
    wide = array.astype(np.float32) if array.dtype.itemsize < 4 else array
    return function(*args, wide).astype(array.dtype)


# ----- lgamma ---------------------------------------------------------------------------------
# Lanczos's approximation with g = 6.024680040776729583740234375, N = 13 (the coefficients
# CPython's math.lgamma uses): Γ(x) ≈ √(2π)·(x + g - 1/2)^(x - 1/2)·e^-(x + g - 1/2)·S(x),
# S a rational function whose denominator is x(x + 1)···(x + 11).
LANCZOS_G = 6.024680040776729583740234375
_LANCZOS_NUM = (
    23531376880.410759688572007674451636754734846804940,
    42919803642.649098768957899047001988850926355848959,
    35711959237.355668049440185451547166705960488635843,
    17921034426.037209699919755754458931112671403265390,
    6039542586.3520280050642916443072979210699388420708,
    1439720407.3117216736632230727949123939715485786772,
    248874557.86205415651146038641322942321632125127801,
    31426415.585400194380614231628318205362874684987640,
    2876370.6289353724412254090516208496135991145378768,
    186056.26539522349504029498971604569928220784236328,
    8071.6720023658162106380029022722506138218516325024,
    210.82427775157934587250973392071336271166969580291,
    2.5066282746310002701649081771338373386264310793408)
_LANCZOS_DEN = (0.0, 39916800.0, 120543840.0, 150917976.0, 105258076.0, 45995730.0,
                13339535.0, 2637558.0, 357423.0, 32670.0, 1925.0, 66.0, 1.0)


def _lanczos_sum(a):
    # S(a) for a > 0: in powers of a below 5, in powers of 1/a above (no overflow); both
    # forms over the whole array, then picked (masked updates cost more than the sums)
    with np.errstate(all="ignore"):
        num, den = _horner_pair(_LANCZOS_NUM[::-1], _LANCZOS_DEN[::-1], a)
        num_large, den_large = _horner_pair(_LANCZOS_NUM, _LANCZOS_DEN, 1 / a)
        return np.where(a < 5, num / den, num_large / den_large)


def _horner_pair(num_coefficients, den_coefficients, t):
    # two polynomials in t, the highest power first, in place (no new array per term)
    num, den = np.full_like(t, num_coefficients[0]), np.full_like(t, den_coefficients[0])
    for c_num, c_den in zip(num_coefficients[1:], den_coefficients[1:]):
        num *= t
        num += c_num
        den *= t
        den += c_den
    return num, den


def lgamma_array(array):
    """log|Γ(x)|: Lanczos's formula for |x|, the reflection
    log|Γ(x)| = log π - log|sin πx| - log|x| - log|Γ(|x|)| for x < 0; inf at 0 and the
    negative integers and at ±inf, -log|x| below |x| = 1e-20. On [0.5, 3) the Taylor
    series of ``_lgamma1p_near`` alone, relatively precise by the zeros at 1 and 2, within
    5 ulp (Lanczos's sum is precise only absolutely there: 3000 ulp at 0.999). By the zeros
    below -2 the reflection keeps only an absolute precision, as near 1 and 2 before."""
    if backend.is_cupy_array(array):
        return _on_gpu("gammaln", array)
    x, back = _float64(array)
    near = (x >= 0.5) & (x < 3)
    if not near.any():
        return back(_lgamma_lanczos(x))
    if near.all():
        return back(_lgamma1p_near(x - 1) + 0.0)                # +0.0 at 1 and 2, as torch's
    out = np.empty_like(x)
    out[near] = _lgamma1p_near(x[near] - 1) + 0.0
    out[~near] = _lgamma_lanczos(x[~near])
    return back(out)


def _lgamma_lanczos(x):
    # log|Γ(x)| of a float64 array by Lanczos's formula and the reflection, as torch's
    a = np.abs(x)
    with np.errstate(all="ignore"):
        out = np.log(_lanczos_sum(a)) - LANCZOS_G
        out += (a - 0.5) * (np.log(a + LANCZOS_G - 0.5) - 1)
        sin_pi = np.abs(np.sin(math.pi * (a - np.round(a))))    # |sin πa|, a reduced exactly
        out = np.where(x < 0, LOG_PI - np.log(sin_pi) - np.log(a) - out, out)
        out = np.where(a < 1e-20, -np.log(a), out)
    whole = x == np.floor(x)
    out[whole & (x <= 0) | np.isinf(x)] = np.inf
    return out


# ----- digamma, trigamma ----------------------------------------------------------------------
PSI_10 = 2.25175258906672110764                 # ψ(10)
# ψ(x) ~ log x - 1/(2x) - Σ B₂ₖ/(2k x²ᵏ): the coefficients B₂ₖ/(2k) of z = 1/x², highest first
_PSI_ASYMPTOTIC = (1 / 12, -691 / 32760, 1 / 132, -1 / 240, 1 / 252, -1 / 120, 1 / 12)


def _polynomial(coefficients, t):
    total = np.full_like(t, coefficients[0])
    for c in coefficients[1:]:
        total = total * t + c
    return total


def _digamma_positive(x):
    # ψ(x) for x > 0 (NaN and inf too): ψ(x) = ψ(x + 1) - 1/x up to x >= 10, then the series
    x, out = x.copy(), np.zeros_like(x)
    for _ in range(10):                          # x > 0 reaches 10 in at most 10 steps
        low = x < 10
        out -= np.where(low, 1 / x, 0.0)         # the whole array: cheaper than a mask's
        x += low
    z = 1 / (x * x)
    series = np.where(x < 1e17, z * _polynomial(_PSI_ASYMPTOTIC, z), 0.0)
    return np.where(x == 10, out + PSI_10, out + np.log(x) - 0.5 / x - series)


def digamma_array(array):
    """ψ(x) = Γ'(x)/Γ(x), torch's algorithm: -inf at +0 and inf at -0, NaN at the negative
    integers and -inf; for x < 0 the reflection ψ(x) = ψ(1 - x) - π / tan(π frac(x))."""
    if backend.is_cupy_array(array):
        return _on_gpu("digamma", array)
    x, back = _float64(array)
    with np.errstate(all="ignore"):
        negative = x < 0
        out = _digamma_positive(np.where(negative, 1 - x, x))
        fraction = x - np.trunc(x)                # tan(π·frac) is exact where tan(πx) is not
        out = np.where(negative, out - math.pi / np.tan(math.pi * fraction), out)
    out[negative & (x == np.trunc(x))] = np.nan
    out[x == 0] = np.copysign(np.inf, -x[x == 0])
    return back(out)


def trigamma_array(array):
    """ψ'(x), torch's algorithm: for x < 1/2 the reflection ψ'(x) = π²/sin²(πx) - ψ'(1 - x),
    then six steps of ψ'(x) = ψ'(x + 1) + 1/x² and the asymptotic series."""
    if backend.is_cupy_array(array):
        return _on_gpu("polygamma", array, 1)
    x, back = _float64(array)
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        sin_pi = np.sin(math.pi * x)
        out = np.where(reflect, -(math.pi * math.pi) / (sin_pi * sin_pi), 0.0)
        x = np.where(reflect, 1 - x, x)
        for _ in range(6):
            out += 1 / (x * x)
            x = x + 1
        z = 1 / (x * x)
        out += (1 + 1 / (2 * x) + z * (1 / 6 - z * (1 / 30 - z * (1 / 42)))) / x
    return back(np.where(reflect, -out, out))


# ----- the Hurwitz zeta function and polygamma ------------------------------------------------
# the Euler-Maclaurin remainder's coefficients (2k)!/B₂ₖ, k = 1..12
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
ZETA_STEPS = 2 ** 16          # x below -2**16 gives NaN: it would sum that many terms and more


def zeta_array(s, q):
    """The Hurwitz zeta function ζ(s, q) = Σₖ (k + q)^-s for a number s > 1 and an array q
    (float64): the terms up to k + q > 9 (at least nine), then Euler-Maclaurin's remainder,
    each stage stopping where a term falls below 2⁻⁵³ of the sum, as torch's ``zeta``. inf
    for q a non-positive integer; NaN for an infinite q, and for q below -2**16 (torch sums
    one term per unit step up from there)."""
    q = np.asarray(q, dtype=np.float64).reshape(-1)
    total = q ** -s
    a, b = q.copy(), np.zeros_like(q)
    far_below = q < -ZETA_STEPS
    done = far_below.copy()
    running = np.flatnonzero(~done)              # the indices still summing terms
    for i in range(ZETA_STEPS + 10):             # a = q + i passes 9 within the steps
        if i >= 9:
            running = running[a[running] <= 9]   # past 9: on to the remainder below
        if running.size == 0:
            break
        a[running] += 1
        b[running] = term = a[running] ** -s
        total[running] += term
        summed = total[running]
        converged = (-MACHEP * summed < term) & (term < MACHEP * summed)
        done[running[converged]] = True
        running = running[~converged]
    total[far_below] = np.nan
    live = ~done                                 # (q.shape) still summing
    w = a
    total[live] += (b * w / (s - 1))[live]
    total[live] -= (0.5 * b)[live]
    factor, k = 1.0, 0.0
    for coefficient in _ZETA_A:
        factor *= s + k
        b = b / w
        term = factor * b / coefficient
        total[live] += term[live]
        live &= ~(np.abs(term / total) < MACHEP)
        k += 1
        factor *= s + k
        b = b / w
        k += 1
    total[(q <= 0) & (q == np.floor(q))] = np.inf
    return total


def polygamma_array(n, array):
    """ψ⁽ⁿ⁾(x), the n-th derivative of ψ: ``digamma_array`` for n = 0, ``trigamma_array`` for
    1, and (-1)ⁿ⁺¹ n! ζ(n + 1, x) above, as torch's."""
    if n == 0:
        return digamma_array(array)
    if n == 1:
        return trigamma_array(array)
    if backend.is_cupy_array(array):
        return _on_gpu("polygamma", array, n)
    x, back = _float64(array)
    sign = 1.0 if n % 2 else -1.0
    with np.errstate(all="ignore"):
        factorial = np.exp(np.float64(math.lgamma(n + 1.0)))     # inf from n = 171, as torch's
        return back(sign * factorial * zeta_array(n + 1.0, x))


# ----- the modified Bessel functions I0 and I1 ------------------------------------------------
SERIES_END = 20.0             # |x| below: the power series; above: the asymptotic one
_TERMS = 40                   # the power series' terms (the last below 1e-25 of the sum at 20)


def _bessel(nu, array):
    """Iν(x), ν = 0 or 1: Σₖ (x/2)^(2k+ν) / (k! (k+ν)!) for |x| < 20; above,
    e^|x| Σₖ (-1)ᵏ aₖ(ν) / |x|ᵏ / √(2π|x|) with aₖ(ν) = Πⱼ (4ν² - (2j-1)²) / (8j), summed
    to 39 terms (the remainder below 2⁻⁵³ from 20 on); e^|x| overflows to inf first, as
    torch's (inf from |x| ≈ 709.8), and ±inf gives NaN, as theirs; I1 is odd."""
    x, back = _float64(array)
    a = np.abs(x)
    near = a < SERIES_END
    out = np.empty_like(a)
    small = a[near]
    quarter, term = small * small / 4, np.ones_like(small) if nu == 0 else small / 2
    total = term.copy()
    for k in range(1, _TERMS):
        term = term * quarter / (k * (k + nu))
        total += term
    out[near] = total
    far = a[~near]                               # NaN too
    term, series = np.ones_like(far), np.ones_like(far)
    for j in range(1, 40):
        term = term * -(4 * nu * nu - (2 * j - 1) ** 2) / (8 * j * far)
        series += term
    with np.errstate(over="ignore", invalid="ignore"):
        out[~near] = np.exp(far) * series / np.sqrt(2 * math.pi * far)
    return back(np.where(x < 0, -out, out) if nu == 1 else out)


def i0_array(array):
    """I0(x), the modified Bessel function of the first kind of order 0 (``_bessel``)."""
    if backend.is_cupy_array(array):
        return _on_gpu("i0", array)
    return _bessel(0, array)


def i1_array(array):
    """I1(x), of order 1: I0's derivative (``_bessel``)."""
    if backend.is_cupy_array(array):
        return _on_gpu("i1", array)
    return _bessel(1, array)


# ----- the regularized incomplete gamma functions P(a, x) and Q(a, x) -------------------------
# torch's algorithm (SciPy's gammainc, after Cephes' igam and igamc): by where (a, x) lies, the
# power series of P, the series of Q (DLMF 8.7.3) or the continued fraction of Q (DLMF 8.9.2),
# the other one as 1 minus it. Where torch takes Temme's uniform expansion (a > 20 within 0.3a
# of x, a > 200 within 4.5√a) P's series (x < a) or Q's fraction run longer instead, up to
# a = TEMME_FROM; past it (the terms would be too many), Temme's expansion too.
MAXLOG = 7.09782712893383996843e2            # log of the largest double
ITERATIONS = 2000                            # torch's cap on each series and fraction
NEAR_ITERATIONS = 40000                      # a ~ x: the terms fall as exp(-k²/2a)
BIG, BIG_INVERSE = 4.503599627370496e15, 2.22044604925031308085e-16


def _igamma_prefactor(a, x):
    """xᵃ e⁻ˣ / Γ(a): from log-gamma where |a - x| > 0.4a (0 below e^-MAXLOG), else through
    Lanczos's sum, exact in a - x (Boost's form, torch's ``_igam_helper_fac``)."""
    with np.errstate(all="ignore"):
        logs = a * np.log(x) - x - lgamma_array(a)
        far = np.where(logs < -MAXLOG, 0.0, np.exp(logs))
        fac = a + LANCZOS_G - 0.5
        near = np.sqrt(fac / math.e) / (_lanczos_sum(a) * math.exp(-LANCZOS_G))
        ratio = (x - a - LANCZOS_G + 0.5) / fac
        small = near * np.exp(a - x) * (x / fac) ** a
        large = near * np.exp(a * (np.log1p(ratio) - ratio) + x * (0.5 - LANCZOS_G) / fac)
        near = np.where((a < 200) & (x < 200), small, large)
    return np.where(np.abs(a - x) > 0.4 * np.abs(a), far, near)


def _lower_series(a, x, iterations):
    """P(a, x) = xᵃe⁻ˣ/Γ(a+1) · Σₖ xᵏ / ((a+1)···(a+k)) (DLMF 8.11.4), each element summed
    until its term is at most 2⁻⁵³ of the sum."""
    prefactor = _igamma_prefactor(a, x)
    r, term, total = a.copy(), np.ones_like(x), np.ones_like(x)
    live = np.flatnonzero(prefactor != 0)
    for _ in range(iterations):
        if live.size == 0:
            break
        r[live] += 1
        term[live] *= x[live] / r[live]
        total[live] += term[live]
        live = live[~(term[live] <= MACHEP * total[live])]
    with np.errstate(all="ignore"):
        return np.where(prefactor == 0, 0.0, total * prefactor / a)


@functools.cache
def _lgamma1p_coefficients(at_two=False):
    # the Taylor coefficients of a⁵⁰ down to a: log Γ(1 + a) = -γa + Σₖ₌₂ (-1)ᵏ ζ(k)/k aᵏ,
    # and at_two log Γ(2 + a) = (1 - γ)a + Σₖ₌₂ (-1)ᵏ ζ(k, 2)/k aᵏ (ζ(k, 2) = ζ(k) - 1)
    zetas = [zeta_array(float(k), np.full(1, 2.0 if at_two else 1.0))[0] for k in range(2, 51)]
    return tuple((-1) ** k * z / k for k, z in zip(range(50, 1, -1), zetas[::-1])) + \
        (1 - EULER_GAMMA if at_two else -EULER_GAMMA,)


def _lgamma1p(a):
    """log Γ(1 + a), precise in its zeros at a = 0 and 1: ``_lgamma1p_near`` for
    -1/2 <= a < 3/2, ``lgamma_array(1 + a)`` beyond (SciPy's ``lgam1p``)."""
    with np.errstate(all="ignore"):
        return np.where((a >= -0.5) & (a < 1.5), _lgamma1p_near(a), lgamma_array(a + 1))


def _lgamma1p_near(a):
    # log Γ(1 + a) for -1/2 <= a < 2: the Taylor series at a = 0 up to 1/2, at a = 1
    # beyond (log a + log Γ(a) would cancel as a → 1/2: 14 ulp)
    a = np.asarray(a, dtype=np.float64)
    low = a <= 0.5

    def series(t, at_two):
        return _polynomial(_lgamma1p_coefficients(at_two), t) * t

    if low.all():
        return series(a, False)
    if not low.any():
        return series(a - 1, True)
    out = np.empty_like(a)
    out[low] = series(a[low], False)
    out[~low] = series(a[~low] - 1, True)
    return out


def _upper_series(a, x):
    """Q(a, x) = -expm1(a log x - log Γ(a+1)) - xᵃ/Γ(a) Σₙ (-x)ⁿ / (n! (a+n)) (DLMF 8.7.3),
    for x <= 1.1 where P's series would cancel."""
    factor, total = np.ones_like(x), np.zeros_like(x)
    live = np.arange(x.size)
    for n in range(1, ITERATIONS):
        if live.size == 0:
            break
        factor[live] *= -x[live] / n
        term = factor[live] / (a[live] + n)
        total[live] += term
        live = live[~(np.abs(term) <= MACHEP * np.abs(total[live]))]
    with np.errstate(all="ignore"):
        log_x = np.log(x)
        return -np.expm1(a * log_x - _lgamma1p(a)) - \
            np.exp(a * log_x - lgamma_array(a)) * total


def _upper_fraction(a, x, iterations):
    """Q(a, x) by Legendre's continued fraction (DLMF 8.9.2) in Cephes' recurrence, its
    convergents p/q rescaled past 2⁵², each element until two agree to 2⁻⁵³."""
    prefactor = _igamma_prefactor(a, x)
    y, c = 1 - a, np.zeros_like(x)
    z = x + y + 1
    p2, q2, p1, q1 = np.ones_like(x), x.copy(), x + 1, z * x
    with np.errstate(all="ignore"):
        ans = p1 / q1
        live = np.flatnonzero(prefactor != 0)
        for _ in range(iterations):
            if live.size == 0:
                break
            c[live] += 1
            y[live] += 1
            z[live] += 2
            yc = y[live] * c[live]
            p = p1[live] * z[live] - p2[live] * yc
            q = q1[live] * z[live] - q2[live] * yc
            r = np.where(q != 0, p / q, ans[live])
            change = np.where(q != 0, np.abs((ans[live] - r) / r), 1.0)
            ans[live] = r
            p2[live], p1[live], q2[live], q1[live] = p1[live], p, q1[live], q
            big = live[np.abs(p) > BIG]
            for state in (p2, p1, q2, q1):
                state[big] *= BIG_INVERSE
            live = live[~(change <= MACHEP)]
        return np.where(prefactor == 0, 0.0, ans * prefactor)


# Temme's uniform expansion (DLMF 8.12.8), torch's method where a ~ x; here only past
# TEMME_FROM, where the first two coefficient functions, each near η = 0 (|η| < 5/√a),
# leave an error below 1e-18: Q = erfc(η√(a/2))/2 + e^(-aη²/2)/√(2πa) Σₖ Cₖ(η) a⁻ᵏ
TEMME_FROM = 1e6
_TEMME_C0 = (-1 / 3, 1 / 12, -2 / 135, 1 / 864, 1 / 2835, -139 / 777600)
_TEMME_C1 = (-1 / 540, -1 / 288)


def _temme(a, x, upper):
    """Q(a, x) (``upper``) or P(a, x) for a > TEMME_FROM, x within 4.5√a of a."""
    from .special import erfc_array          # (special's module imports this one)
    sigma = (x - a) / a
    eta = np.sign(sigma) * np.sqrt(-2 * (np.log1p(sigma) - sigma))
    sign = 1.0 if upper else -1.0
    series = _polynomial(_TEMME_C0[::-1], eta) + _polynomial(_TEMME_C1[::-1], eta) / a
    return 0.5 * erfc_array(sign * eta * np.sqrt(a / 2)) \
        + sign * np.exp(-0.5 * a * eta * eta) * series / np.sqrt(2 * np.pi * a)


def igamma_array(a, x, upper=False):
    """P(a, x) = γ(a, x)/Γ(a), the regularized lower incomplete gamma function, of broadcast
    arrays in float64 (Q(a, x) = 1 - P with ``upper``); torch's values at the edges: NaN for
    a or x below 0 and at a = x = 0 or a = x = inf; P(0, x > 0) = 1; P(a, 0) = 0;
    P(inf, x) = 0; P(a, inf) = 1."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    shape = a.shape
    a, x = a.reshape(-1).copy(), x.reshape(-1).copy()
    p = np.full(a.shape, np.nan)                 # P, or Q where its methods ran
    decided = (x < 0) | (a < 0)
    for edge, value in ((a == 0, np.where(x > 0, 1.0, np.nan)), (x == 0, 0.0),
                        (np.isinf(a), np.where(np.isinf(x), np.nan, 0.0)), (np.isinf(x), 1.0)):
        edge &= ~decided
        p[edge] = np.broadcast_to(value, a.shape)[edge]
        decided |= edge
    with np.errstate(all="ignore"):
        ratio = np.abs(x - a) / a
        near = ~decided & (((a > 20) & (a < 200) & (ratio < 0.3))
                           | ((a > 200) & (ratio < 4.5 / np.sqrt(a))))
        q_fraction = near & (x >= a)
        p_series = near & (x < a)
        rest = ~decided & ~near
        if upper:   # torch's igammac: P's series where it does not cancel, else Q's
            q_fraction |= rest & (x > 1.1) & (x >= a)
            p_series |= rest & (((x > 1.1) & (x < a)) | ((x <= 0.5) & (-0.4 / np.log(x) < a))
                                | ((x > 0.5) & (x <= 1.1) & (x * 1.1 < a)))
        else:       # torch's igamma: Q's methods for x > 1 beyond a, else P's series
            q_fraction |= rest & (x > 1.1) & (x > a)
            p_series |= rest & ~((x > 1) & (x > a))
    huge = near & (a > TEMME_FROM)        # the series would need ~9√a terms
    p_series &= ~huge
    q_fraction &= ~huge
    q_series = rest & ~q_fraction & ~p_series
    p[huge] = _temme(a[huge], x[huge], upper)
    for where, method in ((p_series, _lower_series), (q_fraction, _upper_fraction)):
        for part, iterations in ((where & near, NEAR_ITERATIONS), (where & ~near, ITERATIONS)):
            p[part] = method(a[part], x[part], iterations)
    p[q_series] = _upper_series(a[q_series], x[q_series])
    from_q = q_fraction | q_series | (huge & upper)
    return np.where(from_q != upper, 1 - p, p).reshape(shape)        # the one asked for
