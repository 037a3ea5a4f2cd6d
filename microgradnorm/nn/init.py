"""Initialisers with ``torch.nn.init``'s names and formulas: each fills a tensor's data in
place outside the graph (``torch.no_grad``), bumps its version counter and returns it.
Draws come from NumPy's global generator (``mg.manual_seed``) unless ``generator``, a
``numpy.random.Generator``, is given."""

import math
import numbers

import numpy as np

from .. import backend
from ..dtypes import check_number
from ..tensor import Tensor

__all__ = ["calculate_gain", "constant_", "eye_", "kaiming_normal_", "kaiming_uniform_",
           "normal_", "ones_", "orthogonal_", "trunc_normal_", "uniform_", "xavier_normal_",
           "xavier_uniform_", "zeros_"]

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
        if isinstance(slope, bool) or not isinstance(slope, numbers.Real):
            raise ValueError(f"calculate_gain: negative_slope {slope!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _fill(fn, tensor, values):
    # in place, as torch's no_grad fill: optimizers and modules hold the same object
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(tensor).__name__}")
    values = values(tensor.shape) if callable(values) else values
    tensor.data[...] = backend.to_device(np.asarray(values), tensor.device).astype(tensor.dtype)
    tensor._version_box[0] += 1
    return tensor


def _rng(generator):
    # NumPy's global generator (np.random) or a numpy.random.Generator: both draw alike
    return np.random if generator is None else generator


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with draws from U(a, b)."""
    check_number("uniform_", "a", a)
    check_number("uniform_", "b", b)
    return _fill("uniform_", tensor, lambda shape: _rng(generator).uniform(a, b, shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with draws from N(mean, std²). Example: ``nn.init.normal_(w, std=0.02)``."""
    check_number("normal_", "mean", mean)
    check_number("normal_", "std", std)
    return _fill("normal_", tensor,
                 lambda shape: mean + std * _rng(generator).standard_normal(shape))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with draws from N(mean, std²) kept within [a, b] (redrawn until they are)."""
    for name, value in (("mean", mean), ("std", std), ("a", a), ("b", b)):
        check_number("trunc_normal_", name, value)
    if not a < b:
        raise ValueError(f"trunc_normal_: a must be below b, got a {a}, b {b}")

    def draw(shape):
        values = mean + std * _rng(generator).standard_normal(shape)
        outside = (values < a) | (values > b)
        while outside.any():                   # redraw the rejects only
            values[outside] = mean + std * _rng(generator).standard_normal(int(outside.sum()))
            outside = (values < a) | (values > b)
        return values
    return _fill("trunc_normal_", tensor, draw)


def constant_(tensor, val):
    """Fill with ``val``."""
    check_number("constant_", "val", val)
    return _fill("constant_", tensor, val)


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


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Fill with U(-a, a), a = gain · √(6 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = _fans("xavier_uniform_", tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Fill with N(0, std²), std = gain · √(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans("xavier_normal_", tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(fn, tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{fn}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(fn, tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        raise ValueError(f"{fn}: cannot initialise a tensor with a zero fan, shape "
                         f"{tensor.shape}")
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Fill with U(-b, b), b = gain · √(3 / fan) (He et al.); ``a``: leaky_relu's slope."""
    std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    return uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Fill with N(0, std²), std = gain / √fan (He et al.)."""
    std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1.0, generator=None):
    """Fill with a (semi-)orthogonal matrix times ``gain``, the dims after the first
    flattened (Saxe et al.): the Q of a QR of normal draws, signs fixed by R's diagonal."""
    if not isinstance(tensor, Tensor) or tensor.ndim < 2:
        raise ValueError(f"orthogonal_: expected a Tensor of at least 2 dims, got "
                         f"{getattr(tensor, 'shape', type(tensor).__name__)}")
    rows = tensor.shape[0]
    cols = tensor.size // rows if rows else 0
    flat = _rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))                # unique: R's diagonal made positive
    if rows < cols:
        q = q.T
    return _fill("orthogonal_", tensor, gain * q.reshape(tensor.shape))
