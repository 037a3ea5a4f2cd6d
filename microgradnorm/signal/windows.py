r"""``mg.signal.windows``, ``torch.signal.windows``: the windows of M points by their
formulas, symmetric (``sym=True``, the filter-design form) or periodic (``sym=False``: the
symmetric window of M + 1 points without its last, the form for a DFT), over the checks and
the leaf of ``ops/creation.py``'s ``torch.*_window`` functions; computed in float64 and
rounded once to ``dtype`` (the default dtype, or float32 or float64). One point gives
``[1.]``, none an empty tensor; without a gradient, as torch's (a leaf with
``requires_grad`` if asked)."""

import math

import numpy as np

from .. import dtypes
from ..ops.creation import _window
from ..ops.gamma import i0_array
from ..ops.storage import strided

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _points(n):
    return np.arange(n, dtype=np.float64)


def _windowed(fn, M, sym, dtype, device, requires_grad, values, layout=None):
    # values(n): the symmetric window of n points, in float64
    _check_layout(fn, layout)
    _check_dtype(fn, dtype)
    return _window(fn, M, not sym, dtype, device, requires_grad,
                   lambda n, dtype: values(n).astype(dtype))


def _check_dtype(fn, dtype):
    dtype = dtypes.as_dtype(dtype)
    if dtype is not None and dtype not in (np.float32, np.float64):
        raise ValueError(f"{fn} expects float32 or float64 dtypes, got: {dtype}")


def _check_layout(fn, layout):
    if layout is not None and layout is not strided:
        raise ValueError(f"{fn}: only the strided layout (mg.strided) is supported, got "
                         f"{layout}")


def _check(fn, name, value, positive=True):
    dtypes.check_number(fn, name, value)
    if positive and not value > 0:
        raise ValueError(f"{fn}: {name} must be positive, got {value}")


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    r""":math:`w_i = \sum_j (-1)^j a_j \cos(2\pi j i / (M - 1))` (M in place of M - 1 when
    ``sym=False``) (``torch.signal.windows.general_cosine``); ``a`` a list of numbers."""
    if not isinstance(a, (list, tuple)):
        raise TypeError(f"general_cosine: a must be a list of numbers, got {a!r}")
    if not a:
        raise ValueError("general_cosine: the coefficients a cannot be empty")
    for value in a:
        dtypes.check_number("general_cosine", "a", value)

    def values(n):
        angle = _points(n) * (2 * math.pi / (n - 1))
        return sum((-1) ** j * w * np.cos(j * angle) for j, w in enumerate(a))
    return _windowed("general_cosine", M, sym, dtype, device, requires_grad, values, layout)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    r"""``general_cosine(M, a=[alpha, 1 - alpha])``: :math:`\alpha - (1 - \alpha)
    \cos(2\pi i / (M - 1))` (``torch.signal.windows.general_hamming``)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """``general_hamming(M, alpha=0.54)`` (``torch.signal.windows.hamming``)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """``general_hamming(M, alpha=0.5)``: sin²(πi / (M - 1)) (``torch.signal.windows.hann``)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """``general_cosine(M, a=[0.42, 0.5, 0.08])`` (``torch.signal.windows.blackman``)."""
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """``general_cosine`` with Nuttall's four coefficients (0.3635819, 0.4891775, 0.1365995,
    0.0106411) (``torch.signal.windows.nuttall``)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    r"""The triangle :math:`1 - |2i / (M - 1) - 1|` (``torch.signal.windows.bartlett``)."""
    return _windowed("bartlett", M, sym, dtype, device, requires_grad,
                     lambda n: 1 - np.abs(_points(n) * (2 / (n - 1)) - 1), layout)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    r""":math:`\sin(\pi (i + 1/2) / M)` (M + 1 when ``sym=False``)
    (``torch.signal.windows.cosine``)."""
    return _windowed("cosine", M, sym, dtype, device, requires_grad,
                     lambda n: np.sin((_points(n) + 0.5) * (math.pi / n)), layout)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    r""":math:`\exp(-(i - (M - 1)/2)^2 / (2\,\mathrm{std}^2))`
    (``torch.signal.windows.gaussian``); ``std`` > 0."""
    _check("gaussian", "std", std)
    return _windowed("gaussian", M, sym, dtype, device, requires_grad,
                     lambda n: np.exp(-((_points(n) - (n - 1) / 2) / (std * math.sqrt(2))) ** 2),
                     layout)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    r""":math:`\exp(-|i - \mathrm{center}| / \tau)` (``torch.signal.windows.exponential``),
    the centre (M - 1)/2 by default; a ``center`` goes with ``sym=False`` only, as torch's;
    ``tau`` > 0."""
    _check("exponential", "tau", tau)
    if center is not None:
        if sym:
            raise ValueError("exponential: center must be None for symmetric windows")
        dtypes.check_number("exponential", "center", center)
        _check_layout("exponential", layout)
        _check_dtype("exponential", dtype)
        window = _window("exponential", M, False, dtype, device, requires_grad,
                         lambda n, dtype: np.exp(-np.abs(_points(n) - center) / tau
                                                 ).astype(dtype))
        if M == 1:                  # one point: its value at 0, not 1 (the centre is given)
            window._array[...] = math.exp(-abs(center) / tau)
        return window
    return _windowed("exponential", M, sym, dtype, device, requires_grad,
                     lambda n: np.exp(-np.abs(_points(n) - (n - 1) / 2) / tau), layout)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    r""":math:`I_0(\beta \sqrt{1 - (2i / (M - 1) - 1)^2}) / I_0(\beta)`
    (``torch.signal.windows.kaiser``), :math:`I_0` the modified Bessel function
    (``mg.i0``); ``beta`` >= 0."""
    _check("kaiser", "beta", beta, positive=False)
    if beta < 0:
        raise ValueError(f"kaiser: beta must be non-negative, got {beta}")

    def values(n):
        ratio = np.minimum(_points(n) * (2 / (n - 1)) - 1, 1.0)
        return i0_array(beta * np.sqrt(1 - ratio ** 2)) / i0_array(np.float64(beta))
    return _windowed("kaiser", M, sym, dtype, device, requires_grad, values, layout)
