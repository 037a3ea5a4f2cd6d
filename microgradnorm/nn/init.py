"""Initialisers with ``torch.nn.init``'s names and formulas: each fills a tensor's data in
place outside the graph (``torch.no_grad``), bumps its version counter and returns it.
Draws come from the tensor's in-place samplers (``uniform_``, ``normal_``) and so from
``mg.default_generator`` unless ``generator`` (a ``mg.Generator``) is given, as torch's do:
after the same seed, the same calls give torch's weights."""

import math
import warnings

import numpy as np

from .. import backend
from .. import generator as streams
from .. import sampling
from ..autograd import no_grad
from ..autograd.inference import refuse_write
from ..dtypes import check_number, float_of
from ..tensor import Tensor

__all__ = ["calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_",
           "kaiming_uniform_", "normal_", "ones_", "orthogonal_", "sparse_", "trunc_normal_",
           "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_",
           # the deprecated names without the underscore, which warn as torch's
           "constant", "dirac", "eye", "kaiming_normal", "kaiming_uniform", "normal",
           "orthogonal", "sparse", "uniform", "xavier_normal", "xavier_uniform"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The gain torch recommends for ``nonlinearity``: 1 (linear, conv, sigmoid), 5/3 (tanh),
    √2 (relu), √(2 / (1 + slope²)) (leaky_relu, ``param`` the slope, 0.01 if None), 3/4
    (selu)."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "selu":
        return 3.0 / 4
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):   # torch's test
            raise ValueError(f"calculate_gain: negative_slope {slope!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _fill(fn, tensor, values):
    # in place, as torch's no_grad fill: optimizers and modules hold the same object
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(tensor).__name__}")
    refuse_write(tensor)            # an inference tensor outside its mode: left unwritten
    values = values(tensor.shape) if callable(values) else values
    tensor._array[...] = backend.to_device(np.asarray(values), tensor.device).astype(tensor.dtype)
    tensor._bump_version()
    return tensor


def _number(fn, name, value, one_element=False, several=RuntimeError):
    # a float argument as torch reads it (``float_of``); a Tensor of several elements is
    # torch's RuntimeError (its arithmetic's or comparison's), or ``several``
    if isinstance(value, Tensor) and value.numel() > 1:
        raise several(f"{fn}: {name} must be a number or a one-element Tensor, got a "
                           f"Tensor of shape {tuple(value.shape)}")
    return float_of(value, fn, name, one_element)


def _check_tensor(fn, tensor):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(tensor).__name__}")
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with draws from U(a, b): ``tensor.uniform_(a, b)`` under no_grad, as torch."""
    a, b = float_of(a, "uniform_", "a"), float_of(b, "uniform_", "b")
    with no_grad():
        return _check_tensor("uniform_", tensor).uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with draws from N(mean, std²): ``tensor.normal_`` under no_grad, as torch.
    Example: ``nn.init.normal_(w, std=0.02)``."""
    mean, std = float_of(mean, "normal_", "mean"), float_of(std, "normal_", "std")
    with no_grad():
        return _check_tensor("normal_", tensor).normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    r"""Fill with draws from N(mean, std²) truncated to [a, b], by rejection as torch does.

    Formula:
        with :math:`P = \Phi(\beta) - \Phi(\alpha)` (α, β: a and b standardised): if
        P > 0.3, ``normal_(mean, std)`` then, while any value lies outside [a, b], a fresh
        ``normal_`` of the whole tensor replaces the ones outside; else uniforms on [a, b]
        kept when :math:`\ln u \le -\frac12((x - \text{mean})/\text{std})^2 -
        \ln\text{peak}`, a fresh uniform pair for every rejected element each round. After
        1,000 rounds (a window so far in a tail that rejection all but never accepts, where
        torch's loop runs on) the elements left are drawn by inverting the truncated
        density's CDF on a grid of 4,097 points, so the call always returns.

    The draws are torch's, so the wide case (``std=0.02, a=-2, b=2``: ViT's) gives torch's
    values bit for bit; the narrow case compares with ``log u`` rounded from float64, where
    torch's vectorised log may differ in the last bit and flip an acceptance at the edge.

    Example:
        >>> nn.init.trunc_normal_(w, std=0.02)            # ViT's weights
    """
    mean, std = _number("trunc_normal_", "mean", mean), _number("trunc_normal_", "std", std)
    a, b = _number("trunc_normal_", "a", a, True), _number("trunc_normal_", "b", b, True)
    if not a <= b:                        # torch's uniform_(a, b) refuses it (a == b: all a)
        raise sampling.DistributionRangeError(f"trunc_normal_: a must not exceed b, got a {a}, "
                                              f"b {b}")
    _check_tensor("trunc_normal_", tensor)
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("trunc_normal_: mean is more than 2 std from [a, b]; the distribution "
                      "of values may be incorrect (PyTorch warns the same)", stacklevel=2)

    def cdf(x):                                  # the standard normal's CDF
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    dtype = tensor.dtype
    gen = streams.check_generator("trunc_normal_", generator)
    cast = np.asarray(0, dtype).dtype.type

    def fresh(draw):
        # torch's tensor.<sampler>_() or empty_like(tensor).<sampler>_(): the tensor's
        # layout; drawn aside, so the tensor is written (and its version bumped) once
        layout = tensor._array if isinstance(tensor._array, np.ndarray) else \
            np.empty(tensor.shape)
        return streams.fill(np.empty_like(layout, dtype), draw)
    with no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            low, high = float(cast(a)), float(cast(b))            # the bounds in the dtype
            values = fresh(lambda n, c: sampling.normal(gen, n, dtype, mean, std, c))
            outside = (values < low) | (values > high)
            while outside.any():
                redraw = fresh(lambda n, c: sampling.normal(gen, n, dtype, mean, std, c))
                values = np.where(outside, redraw, values)
                outside = (values < low) | (values > high)
        else:
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2

            def rejected(x):                     # torch's in-place float steps, then log u
                scaled = (x - cast(mean)) / cast(std)
                log_density = scaled * scaled * cast(-0.5) - cast(log_peak)
                u = fresh(lambda n, c: sampling.uniform(gen, n, dtype))
                with np.errstate(divide="ignore"):
                    return np.log(u.astype(np.float64)).astype(dtype) > log_density
            values = fresh(lambda n, c: sampling.uniform(gen, n, dtype, a, b))
            pending = rejected(values)
            for _ in range(_MOST_ROUNDS):
                if not pending.any():
                    break
                candidates = fresh(lambda n, c: sampling.uniform(gen, n, dtype, a, b))
                values = np.where(pending, candidates, values)
                pending = pending & rejected(candidates)
            else:       # a window far in a tail: torch's loop would all but never end
                values = np.where(pending, _inverse_cdf_on_grid(gen, values.shape, dtype,
                                                                mean, std, a, b), values)
        refuse_write(tensor)
        tensor._array[...] = backend.to_device(values.astype(dtype), tensor.device)
        tensor._bump_version()
    return tensor


_MOST_ROUNDS = 1000      # of trunc_normal_'s rejection, before the grid takes the rest


def _inverse_cdf_on_grid(gen, shape, dtype, mean, std, a, b):
    # the truncated density, exp(-z²/2) relative to its peak, integrated by the trapezoid
    # rule on 4,097 points and inverted at uniform draws: exact to the grid, however far in
    # a tail the window lies, where rejection accepts almost nothing. The grid spans the
    # part of [a, b] within e⁻⁴⁰ of the peak, so it resolves a density that falls within
    # a sliver of the bound nearest the mean.
    z_mode = (max(a, min(mean, b)) - mean) / std
    reach = std * math.sqrt(z_mode * z_mode + 80.0)
    grid = np.linspace(max(a, mean - reach), min(b, mean + reach), 4097)
    log_density = -0.5 * ((grid - mean) / std) ** 2
    density = np.exp(log_density - log_density.max())
    cdf = np.concatenate([[0.0], np.cumsum((density[1:] + density[:-1]) / 2)])
    u = sampling.uniform(gen, int(np.prod(shape, dtype=np.int64)), np.float64)
    return np.interp(u * cdf[-1], cdf, grid).reshape(shape).astype(dtype)


def constant_(tensor, val):
    """Fill with ``val``: a number, a bool, a complex number or a 0-d Tensor, as
    ``tensor.fill_(val)`` under no_grad (torch's)."""
    if isinstance(val, (Tensor, complex)):
        with no_grad():
            return _check_tensor("constant_", tensor).fill_(val)
    return _fill("constant_", tensor, float_of(val, "constant_", "val"))


def ones_(tensor):
    """Fill with 1."""
    return _fill("ones_", tensor, 1)


def zeros_(tensor):
    """Fill with 0."""
    return _fill("zeros_", tensor, 0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity (ones on the diagonal, zeros elsewhere)."""
    if not isinstance(tensor, Tensor) or tensor.ndim != 2:
        raise ValueError(f"eye_: expected a 2-D Tensor, got "
                         f"{getattr(tensor, 'shape', type(tensor).__name__)}")
    return _fill("eye_", tensor, np.eye(*tensor.shape))


def _fans(fn, tensor):
    # torch's fans: (in, out) times the receptive field, the dims after the first two
    if not isinstance(tensor, Tensor) or tensor.ndim < 2:
        raise ValueError(f"{fn}: fan in and fan out need a Tensor of at least 2 dims, got "
                         f"{getattr(tensor, 'shape', type(tensor).__name__)}")
    receptive = int(np.prod(tensor.shape[2:], dtype=np.int64))
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_fan_in_and_fan_out(tensor):
    """``(fan_in, fan_out)`` of a weight of at least 2 dims: torch's private helper, which
    modules' ``reset_parameters`` copied from torch's call (``nn.Linear``'s bias bound)."""
    return _fans("_calculate_fan_in_and_fan_out", tensor)


def _calculate_correct_fan(tensor, mode):
    """The fan ``mode`` ("fan_in" or "fan_out", any case) names: torch's private helper."""
    return _mode_fan("_calculate_correct_fan", tensor, mode)


def _mode_fan(fn, tensor, mode):
    # the fan ``mode`` names, in any case as torch's; the mode checked before the tensor
    mode = mode.lower() if isinstance(mode, str) else mode
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{fn}: mode must be 'fan_in' or 'fan_out' (any case), got {mode!r}")
    fan_in, fan_out = _fans(fn, tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Fill with U(-a, a), a = √3 · gain · √(2 / (fan_in + fan_out)) (Glorot & Bengio;
    torch's order of operations, so the bound rounds as torch's)."""
    fan_in, fan_out = _fans("xavier_uniform_", tensor)
    gain = float_of(gain, "xavier_uniform_", "gain")
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Fill with N(0, std²), std = gain · √(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans("xavier_normal_", tensor)
    gain = float_of(gain, "xavier_normal_", "gain")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(fn, tensor, a, mode, nonlinearity):
    fan = _mode_fan(fn, tensor, mode)
    if fan == 0:
        raise ValueError(f"{fn}: cannot initialise a tensor with a zero fan, shape "
                         f"{tensor.shape}")
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Fill with U(-b, b), b = gain · √(3 / fan) (He et al.); ``a``: leaky_relu's slope.
    A tensor of no elements is returned as it is, with torch's warning."""
    if isinstance(tensor, Tensor) and 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    return uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Fill with N(0, std²), std = gain / √fan (He et al.); none of no elements, as above."""
    if isinstance(tensor, Tensor) and 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1.0, generator=None):
    """Fill with a (semi-)orthogonal matrix times ``gain``, the dims after the first
    flattened (Saxe et al.): the Q of a QR of normal draws, signs fixed by R's diagonal.
    The draws are torch's (``normal_`` of a rows x cols tensor); the QR is NumPy's LAPACK,
    so Q agrees with torch's to rounding, not bit for bit."""
    if not isinstance(tensor, Tensor) or tensor.ndim < 2:
        raise ValueError(f"orthogonal_: expected a Tensor of at least 2 dims, got "
                         f"{getattr(tensor, 'shape', type(tensor).__name__)}")
    gain = _number("orthogonal_", "gain", gain, True)
    if tensor.size == 0:                       # nothing to fill, nothing drawn (torch)
        return tensor
    rows = tensor.shape[0]
    cols = tensor.size // rows
    # torch's draws (new_empty((rows, cols)).normal_()), then the QR in float64
    flat = Tensor(np.empty((rows, cols), tensor.dtype), dtype=tensor.dtype).normal_(
        generator=generator)
    flat = backend.to_numpy(flat._array).astype(np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))                # unique: R's diagonal made positive
    if rows < cols:
        q = q.T
    return _fill("orthogonal_", tensor, gain * q.reshape(tensor.shape))


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-D tensor (a conv weight, (out, in, *kernel)) with the Dirac delta:
    1 at the kernel's centre where out channel g · out/groups + d meets in channel d, so
    the convolution preserves as many input channels as it can (per group); 0 elsewhere.

    Example:
        >>> nn.init.dirac_(conv.weight)                    # conv(x) = x, for in == out
    """
    _check_tensor("dirac_", tensor)
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("dirac_: Only tensors with 3, 4, or 5 dimensions are supported")
    check_number("dirac_", "groups", groups, integer=True)
    if groups <= 0 or tensor.shape[0] % groups:
        raise ValueError(f"dirac_: dim 0 must be divisible by groups, got {tensor.shape[0]} "
                         f"and {groups}")
    per_group = tensor.shape[0] // groups
    centre = tuple(n // 2 for n in tensor.shape[2:])
    values = np.zeros(tensor.shape)
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _fill("dirac_", tensor, values)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D tensor with N(0, std²) draws, then zero ⌈sparsity · rows⌉ of each column
    (Martens 2010), as torch's: ``normal_`` from ``generator``, then per column the first
    rows of ``randperm(rows)``, drawn from the default generator as torch's are.

    Example:
        >>> nn.init.sparse_(w, sparsity=0.1)
    """
    _check_tensor("sparse_", tensor)
    if tensor.ndim != 2:
        raise ValueError("sparse_: Only tensors with 2 dimensions are supported")
    sparsity = _number("sparse_", "sparsity", sparsity, True, ValueError)
    std = float_of(std, "sparse_", "std")
    rows, cols = tensor.shape
    zeros = math.ceil(sparsity * rows)
    normal_(tensor, 0.0, std, generator)
    values = backend.to_numpy(tensor._array).copy()
    for col in range(cols):
        values[sampling.randperm(streams.default_generator, rows)[:zeros], col] = 0
    return _fill("sparse_", tensor, values)


def _deprecated(function):
    # torch's _make_deprecate: the name without its underscore, warning each call
    new_name = function.__name__
    old_name = new_name[:-1]

    def deprecated(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return function(*args, **kwargs)
    deprecated.__name__ = deprecated.__qualname__ = old_name
    deprecated.__doc__ = f"``{new_name}``, under its deprecated name (warns, as torch's)."
    return deprecated


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
