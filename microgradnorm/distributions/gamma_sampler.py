r"""The gamma draws under ``Gamma``, ``Chi2``, ``Beta`` and ``Dirichlet``: ``standard_gamma``
(``torch._standard_gamma``) and ``sample_dirichlet`` (``torch._sample_dirichlet``), drawn as
PyTorch's CPU kernels draw them, so the same seed gives the same values, and the
reparameterized gradient of a standard gamma draw (``torch._standard_gamma_grad``).

The sampler visits the concentrations one at a time in row-major order: Marsaglia and
Tsang's squeeze-and-reject (2000) on the generator's float64 normals (Box-Muller pairs,
the second kept for the next draw, as ``normal_``'s scalar path keeps it) and uniforms
(the low 53 bits of a 64-bit draw); a concentration α below 1 is raised to α + 1 and the
draw scaled by :math:`u^{1/\alpha}`. A float32 concentration does its α arithmetic in
float32, as the kernel's ``float`` template does; the rest is float64.

The gradient :math:`dx/d\alpha = -\partial_\alpha F(x; \alpha) / p(x; \alpha)` (F the gamma
CDF, p its density) is taken as torch approximates it: a five-term series of the CDF for
x < 0.8, Rice's saddle-point expansion for α > 8, and a fitted bivariate rational function
of (log(x/α), log α) elsewhere.

Example:
    >>> mg.manual_seed(0); g = standard_gamma(mg.full((3,), 2.5))      # torch's draws
"""

import math

import numpy as np

from .. import backend, dtypes
from .. import generator as streams
from ..autograd.function import Function
from ..ops.gamma import digamma_array
from ..tensor import Tensor

__all__ = ["dirichlet_grad", "sample_dirichlet", "standard_gamma", "standard_gamma_grad"]

_THIRD_F = float(np.float32(1.0) / np.float32(3.0))     # 1.0f / 3.0f, as the kernel writes it
_SQUEEZE = float(np.float32(0.0331))


def _uniform(generator):
    # a float64 uniform in [0, 1): the low 53 bits of a 64-bit draw
    return (generator.random64() & ((1 << 53) - 1)) * 2.0 ** -53


def _normal(generator):
    # one float64 N(0, 1) draw: the cached sine of the last pair, else a new Box-Muller pair
    cached = generator.next_double_normal_sample
    if cached is not None:
        generator.next_double_normal_sample = None
        return cached
    u1, u2 = _uniform(generator), _uniform(generator)
    radius = math.sqrt(-2.0 * math.log1p(-u2))
    theta = 2.0 * math.pi * u1
    generator.next_double_normal_sample = radius * math.sin(theta)
    return radius * math.cos(theta)


def _gamma_one(generator, alpha, single):
    # one draw of Gamma(alpha, 1); ``single``: alpha's arithmetic in float32
    f32 = np.float32
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        power = float(f32(1.0) / f32(alpha)) if single else 1.0 / alpha
        scale *= (1.0 - _uniform(generator)) ** power
        alpha = float(f32(alpha) + f32(1.0)) if single else alpha + 1.0
    d = float(f32(alpha) - f32(_THIRD_F)) if single else alpha - _THIRD_F
    c = 1.0 / math.sqrt(9.0 * d) if d > 0 else math.nan      # NaN where α is
    while True:
        while True:
            x = _normal(generator)
            y = 1.0 + c * x
            if not y <= 0:                      # a NaN leaves the loop, as the kernel's
                break
        v = y * y * y
        u = 1.0 - _uniform(generator)
        xx = x * x
        if u < 1.0 - _SQUEEZE * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _at_least(values, low):
    # std::max(low, v): v where low < v, else low (a NaN too)
    return np.where(low < values, values, low).astype(values.dtype)


def _gammas(generator, alphas, single):
    # float64 draws for a flat sequence of concentrations, in order
    return np.array([_gamma_one(generator, a, single) for a in alphas], np.float64)


def _concentrations(where, kernel, alpha, generator):
    # the checks of both samplers (torch's kernels take float32 and float64 only), then the
    # generator and the concentrations as a flat list of floats
    if not isinstance(alpha, Tensor):
        raise TypeError(f"{where}(): argument 'self' must be Tensor, not "
                        f"{type(alpha).__name__}")
    if alpha.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{dtypes.torch_name(alpha.dtype)}'")
    gen = streams.check_generator(where, generator)
    return gen, np.asarray(backend.to_numpy(alpha._array), np.float64).ravel().tolist()


class _StandardGamma(Function):
    # the draw as a node: its gradient to α is the reparameterized one (standard_gamma_grad)
    @staticmethod
    def forward(ctx, alpha, *, result):
        ctx.save_for_backward(alpha, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        alpha, result = ctx.saved
        return grad * _grad_array(alpha, result)


def standard_gamma(alpha, generator=None):
    r"""A draw of Gamma(α, 1) for each concentration α of ``alpha``
    (``torch._standard_gamma``), differentiable in α by implicit reparameterization.

    Formula:
        density :math:`x^{\alpha - 1} e^{-x} / \Gamma(\alpha)`; the draws torch's CPU kernel
        makes for the same seed (module docstring), each at least the dtype's smallest
        normal number; the gradient ``standard_gamma_grad(alpha, x)``.

    Args:
        alpha: the concentrations, a float32 or float64 tensor (0 gives 0).
        generator: a ``mg.Generator``, by default the global one.

    Shape:
        output: alpha's shape, filled in row-major order.

    Example:
        >>> mg.manual_seed(0); standard_gamma(mg.tensor([0.5, 3.0]))
    """
    gen, alphas = _concentrations("_standard_gamma", "gamma_cpu", alpha, generator)
    single = alpha.dtype == np.float32
    draws = _gammas(gen, alphas, single).astype(alpha.dtype)
    draws = _at_least(draws, np.finfo(alpha.dtype).tiny).reshape(alpha.shape)
    return _StandardGamma.apply(alpha, result=alpha.xp.asarray(draws))


def _rational(u, v):
    # the fitted rational approximation of dx/dα in (u, v) = (log(x/α), log α)
    coef = np.array([
        [0.16009398, -0.094634809, 0.025146376, -0.0030648343,
         1, 0.32668115, 0.10406089, 0.0014179084],
        [0.53487893, 0.1298071, 0.065735949, -0.0015649758,
         0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
        [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
         0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07]])
    cv = [coef[0, i] + u * (coef[1, i] + u * coef[2, i]) for i in range(8)]
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    return np.exp(p / q)


def _grad_array(alpha_array, x_array):
    # dx/dα elementwise, in float64, returned in alpha's dtype
    alpha = np.asarray(backend.to_numpy(alpha_array), np.float64)
    x = np.asarray(backend.to_numpy(x_array), np.float64)
    alpha, x = np.broadcast_arrays(alpha, x)
    with np.errstate(all="ignore"):
        numer, denom = np.ones_like(x), alpha.copy()
        series1, series2 = numer / denom, numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-x / i)
            denom = denom + 1
            series1 = series1 + numer / denom
            series2 = series2 + numer / (denom * denom)
        pow_x_alpha = np.power(x, alpha)
        pdf = np.power(x, alpha - 1) * np.exp(-x)
        cdf_alpha = (np.log(x) - digamma_array(alpha)) * pow_x_alpha * series1 \
            - pow_x_alpha * series2
        small = -cdf_alpha / pdf
        small = np.where(np.isnan(small), 0.0, small)
        near = (float(np.float32(0.9)) * alpha <= x) & (x <= float(np.float32(1.1)) * alpha)
        numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
        numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha \
            + alpha * (107 + 3600 * x)
        saddle_near = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
        root = np.sqrt(8 * alpha)
        term2 = root / (alpha - x)
        term3 = np.power(x - alpha - alpha * np.log(x / alpha), -1.5)
        term23 = np.where(x < alpha, term2 - term3, term2 + term3)
        term1 = np.log(x / alpha) * term23 \
            - np.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        saddle_far = -stirling * (x * term1) / root
        saddle = np.where(near, saddle_near, saddle_far)
        rational = _rational(np.log(x / alpha), np.log(alpha))
        out = np.where(x < float(np.float32(0.8)), small,
                       np.where(alpha > 8.0, saddle, rational))
    return backend.array_module(alpha_array).asarray(out.astype(alpha_array.dtype))


def standard_gamma_grad(alpha, x):
    r"""The reparameterized gradient dx/dα of standard gamma draws ``x`` of concentrations
    ``alpha`` (``torch._standard_gamma_grad``): :math:`-\partial_\alpha F(x;\alpha) /
    p(x;\alpha)`, approximated as torch's kernel approximates it (module docstring).

    Args:
        alpha: the concentrations. x: the draws, alpha's shape.

    Shape:
        output: alpha's shape and dtype.

    Example:
        >>> standard_gamma_grad(mg.tensor([2.0]), mg.tensor([1.5]))
    """
    if not isinstance(alpha, Tensor) or not isinstance(x, Tensor):
        raise TypeError("_standard_gamma_grad(): arguments 'self' and 'output' must be "
                        "Tensors")
    return Tensor._from_op(_grad_array(alpha._array, x._array), None)


_RATIONAL = np.array([     # [numerator, denominator][power of u][power of a][power of b]
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


def _beta_alpha_small(x, alpha, beta):
    # dx/dα of Beta(α, β) near x = 0: a ten-term series
    factor = digamma_array(alpha) - digamma_array(alpha + beta) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * np.power(1 - x, -beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_beta_small(x, alpha, beta):
    # dx/dβ of Beta(α, β) near x = 0: an eight-term series
    factor = digamma_array(alpha + beta) - digamma_array(beta)
    numer, betas, dbetas = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -np.power(1 - x, 1 - beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_alpha_mid(x, alpha, beta):
    # dx/dα of Beta(α, β) for large α and β: Rice's saddle-point expansion
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    at_mean = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (np.sqrt(2 * alpha / beta) * np.power(total, 1.5) * axbx * axbx)
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = np.power(beta * np.log(beta / (total * (1 - x)))
                     + alpha * np.log(alpha / (total * x)), -1.5)
    term1234 = term1 + term2 * (term3 + np.where(x < mean, term4, -term4))
    away = stirling * prefactor * term1234
    return np.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), at_mean, away)


def _dirichlet_grad_array(x, alpha, total):
    # dx_i/dα_i of a Dirichlet draw through its Beta(α_i, total - α_i) marginal, scaled by
    # 1/(1 - x), as torch's _dirichlet_grad: in float64
    x, alpha, total = np.broadcast_arrays(*(np.asarray(a, np.float64) for a in
                                            (x, alpha, total)))
    beta = total - alpha
    boundary = total * x * (1 - x)
    with np.errstate(all="ignore"):
        u = np.log(x)
        a = np.log(alpha) - u
        b = np.log(total) - a
        p, q = np.zeros_like(x), np.zeros_like(x)
        for i, pow_u in enumerate((1.0, u, u * u)):
            for j, pow_a in enumerate((1.0, a, a * a)):
                ua = pow_u * pow_a
                c0, c1 = _RATIONAL[0, i, j], _RATIONAL[1, i, j]
                p = p + ua * (c0[0] + b * (c0[1] + b * (c0[2] + b * c0[3])))
                q = q + ua * (c1[0] + b * (c1[1] + b * (c1[2] + b * c1[3])))
        approx = x * (digamma_array(total) - digamma_array(alpha)) / beta
        out = np.where(
            (x <= 0.5) & (boundary < 2.5), _beta_alpha_small(x, alpha, beta),
            np.where((x >= 0.5) & (boundary < 0.75), -_beta_beta_small(1 - x, beta, alpha),
                     np.where((alpha > 6) & (beta > 6), _beta_alpha_mid(x, alpha, beta),
                              p / q * approx)))
    return out


def dirichlet_grad(x, alpha, total):
    r"""The reparameterized gradient :math:`dx/d\alpha` of a draw x of Beta(α, total - α),
    divided by 1 - x (``torch._dirichlet_grad``), as torch's kernel approximates it: series
    near x = 0 and x = 1, Rice's saddle-point expansion where α and total - α exceed 6, a
    fitted rational correction of :math:`x(\psi(total) - \psi(\alpha)) / (total - \alpha)`
    elsewhere; computed in float64.

    Args:
        x: the draws. alpha: the concentrations. total: the concentrations' sums.

    Shape:
        output: the three broadcast, in x's dtype.

    Example:
        >>> dirichlet_grad(mg.tensor([0.3]), mg.tensor([1.0]), mg.tensor([3.0]))
    """
    for name, value in (("x", x), ("alpha", alpha), ("total", total)):
        if not isinstance(value, Tensor):
            raise TypeError(f"_dirichlet_grad(): argument '{name}' must be Tensor, not "
                            f"{type(value).__name__}")
    arrays = [np.asarray(backend.to_numpy(t._array)) for t in (x, alpha, total)]
    out = _dirichlet_grad_array(*arrays).astype(x.dtype)
    return Tensor._from_op(x.xp.asarray(out), None)


class _Normalized(Function):
    # the Dirichlet draw as a node of α; backward as torch's: each coordinate's implicit
    # gradient through its Beta marginal, projected onto the simplex
    @staticmethod
    def forward(ctx, alpha, *, result):
        ctx.save_for_backward(alpha, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved
        total = alpha.sum(-1, keepdims=True)
        dx = _dirichlet_grad_array(x, alpha, total).astype(alpha.dtype)
        return dx * (grad - (x * grad).sum(-1, keepdims=True))


def sample_dirichlet(alpha, generator=None):
    r"""A draw of Dirichlet(α) for each row (last dim) of ``alpha``
    (``torch._sample_dirichlet``): float64 gammas of the concentrations, normalized.

    Formula:
        :math:`x_i = g_i / \sum_j g_j`, :math:`g_i \sim \text{Gamma}(\alpha_i, 1)` in
        float64 (torch's draws for the same seed), each x clamped into [tiny, 1) of the
        dtype; differentiable in α by torch's implicit gradient: each coordinate through
        its Beta(α_i, Σα - α_i) marginal (series near 0 and 1, a saddle-point expansion
        for large α, a fitted rational function elsewhere), projected onto the simplex.

    Args:
        alpha: the concentrations (..., K), float32 or float64. generator: a Generator.

    Shape:
        output: alpha's shape.

    Example:
        >>> mg.manual_seed(0); sample_dirichlet(mg.ones(2, 3))       # rows sum to 1
    """
    gen, alphas = _concentrations("_sample_dirichlet", "dirichlet", alpha, generator)
    dtype = np.dtype(alpha.dtype)
    gammas = _at_least(_gammas(gen, alphas, False), np.finfo(np.float64).tiny)
    gammas = gammas.reshape(alpha.shape)
    with np.errstate(all="ignore"):
        ratio = gammas / gammas.sum(-1, keepdims=True)
    top = np.nextafter(dtype.type(1), dtype.type(0))
    draws = _at_least(ratio.astype(dtype), np.finfo(dtype).tiny)
    draws = np.where(draws < top, draws, top)
    return _Normalized.apply(alpha, result=alpha.xp.asarray(draws))
