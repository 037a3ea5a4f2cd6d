r"""``torch.fft`` as ``mg.fft``: the discrete Fourier transforms of one, two or n dims,
complex (``fft``, ``ifft``), real to one-sided (``rfft``, ``irfft``) and Hermitian
(``hfft``, ``ihfft``), with torch's signatures (``n``/``s``, ``dim``, ``norm``, ``out``),
dtypes, errors and gradients; the sample frequencies and the shifts that centre them.
``out=`` follows ops/out_arguments.py's ``FFT`` rule (the result cast into ``out``, which
must be complex or floating as the result is), installed at the end of this module.

Formula (one dim, ``n`` points; ``norm`` puts the factor c on one side)::

    fft:  y_k = c Σ_j x_j exp(-2πi jk/n)      c = 1 ("backward"), 1/√n ("ortho"), 1/n ("forward")
    ifft: x_j = c Σ_k y_k exp(+2πi jk/n)      c = 1/n ("backward"), 1/√n, 1 ("forward")

Each transform is one node of ``ops/fft.py`` over NumPy's pocketfft (CuPy's cuFFT for GPU
arrays), whose values are within rounding of torch's (on the CPU torch transforms with
oneMKL in its x86 builds, pocketfft in builds without MKL). A
float32 input gives complex64, float64 complex128; an integer or bool input is promoted to
the default float dtype first; float16 and bfloat16 are refused, as torch refuses them on
the CPU. The Hermitian transforms compose the real ones
with a conjugate: ``hfft(x) = irfft(conj(x))`` with the dual ``norm``, ``ihfft(x) =
conj(rfft(x))``; ``fftshift`` is a ``roll``.

Example (FNet's token mixing)::

    >>> h = mg.fft.fft(mg.fft.fft(x, dim=-1), dim=-2).real       # (B, T, C)
"""

import numbers

from . import dtypes
from .ops.base import AxisError, check_tensor, normalize_axis
from .ops.complex import conj
from .ops.fft import DUAL, FFT, IRFFT, NORMS, RFFT, frequencies
from .ops import out_arguments as _out_arguments
from .ops.shape import roll
from .tensor import Tensor

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
           "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]

TORCH_NAMES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble",
               "float16": "Half", "bfloat16": "BFloat16"}


# ----- the checks every transform makes -------------------------------------------------------
def _input(fn, x, real=False):
    """x at a dtype the transforms take: an integer or bool tensor promoted to the default
    float dtype; half precision refused (torch's CPU has no half transform); with ``real``,
    a complex x refused."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{fn}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if dtypes.is_half(x.dtype):
        raise RuntimeError(f"Unsupported dtype {TORCH_NAMES[x.dtype.name]}")
    if real and dtypes.is_complex(x.dtype):
        kind = "real-valued" if fn.endswith("n") else "real"           # torch's words
        raise RuntimeError(f"{fn} expects a {kind} input tensor, but got "
                           f"{TORCH_NAMES[x.dtype.name]}")
    if not (dtypes.is_floating(x.dtype) or dtypes.is_complex(x.dtype)):
        x = x.to(dtypes.get_default_dtype())
    return x


def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _points(fn, n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"fft_{fn}(): argument 'n' must be int, not {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return int(n)


def _dim(fn, x, dim):
    if x.ndim == 0:
        raise AxisError(f"Dimension specified as {dim} but tensor has no dimensions")
    return normalize_axis(fn, dim, x.ndim, single=True)


def _one_dim(fn, x, n, dim, default=None):
    """The axis and length of a one-dim transform: (axis,), (n,); ``default(length)`` gives
    n when it is None (irfft's 2(L - 1))."""
    axis = _dim(fn, x, dim)
    if n is None:
        n = default(x.shape[axis]) if default else x.shape[axis]
    return (axis,), (_points(fn, n),)


def _dims(fn, x, s, dim, last_default=None):
    """The axes and lengths of an n-dim transform, as torch reads ``s`` and ``dim``: both
    given, one length per dim; only ``s``, the last len(s) dims; neither, every dim. A
    length of -1 (or none given) keeps the input's, but for the last axis of irfftn:
    ``last_default(length)``."""
    if isinstance(s, numbers.Integral):
        s = (s,)
    if dim is not None:
        dim = dtypes.index_of(dim)         # a 0-d integer tensor is its int, as torch's
        dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
        axes = tuple(_dim(fn, x, d) for d in dims)
        if len(set(axes)) != len(axes):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(axes):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.ndim} dimensions.")
        axes = tuple(range(x.ndim - len(s), x.ndim))
    else:
        axes = tuple(range(x.ndim))
    sizes = []
    for i, axis in enumerate(axes):
        n = -1 if s is None else s[i]
        if n == -1:
            last = last_default is not None and i == len(axes) - 1
            n = last_default(x.shape[axis]) if last else x.shape[axis]
        sizes.append(_points(fn, n))
    return axes, tuple(sizes)


def _some_axis(fn, axes):
    if not axes:
        raise RuntimeError(f"{fn} must transform at least one axis")
    return axes


def _half_length(length):
    return 2 * (length - 1)                # the signal a one-sided spectrum of ``length`` has


# ----- complex to complex ---------------------------------------------------------------------
def fft(input, n=None, dim=-1, norm=None):
    r"""The one-dimensional discrete Fourier transform (``torch.fft.fft``):
    :math:`y_k = c \sum_{j<n} x_j e^{-2\pi i\, jk/n}`.

    Args:
        input: a tensor (real, complex, or integer: promoted to the default float dtype).
        n: the signal length: ``input`` is zero-padded or cut to it along ``dim``.
        dim: the dim to transform. norm: ``"backward"`` (c = 1, the default), ``"ortho"``
            (1/√n) or ``"forward"`` (1/n).

    Shape:
        (..., L, ...) → (..., n, ...), complex.

    Example:
        >>> mg.fft.fft(mg.tensor([1.0, 0.0, 0.0, 0.0]))
        tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    x = _input("fft", input)
    axes, sizes = _one_dim("fft", x, n, dim)
    return FFT.apply(x, axes=axes, sizes=sizes, norm=_norm(norm), inverse=False)


def ifft(input, n=None, dim=-1, norm=None):
    r"""The inverse of ``fft`` (``torch.fft.ifft``):
    :math:`x_j = c \sum_{k<n} y_k e^{+2\pi i\, jk/n}`, c = 1/n by default (``norm`` as in
    ``fft``: ``"backward"`` 1/n, ``"ortho"`` 1/√n, ``"forward"`` 1)."""
    x = _input("ifft", input)
    axes, sizes = _one_dim("ifft", x, n, dim)
    return FFT.apply(x, axes=axes, sizes=sizes, norm=_norm(norm), inverse=True)


def fftn(input, s=None, dim=None, norm=None):
    r"""The n-dimensional transform (``torch.fft.fftn``): ``fft`` along each of ``dim``.

    Args:
        s: the signal length per transformed dim (-1 keeps the input's); only ``s``: the
            last len(s) dims. dim: the dims (default: every dim, or the last len(s)).
        norm: as ``fft``'s, with n the product of the lengths.

    Example:
        >>> mg.fft.fftn(mg.ones(2, 3)).abs()         # 6 at the origin, 0 elsewhere
    """
    x = _input("fftn", input)
    axes, sizes = _dims("fftn", x, s, dim)
    return FFT.apply(x, axes=axes, sizes=sizes, norm=_norm(norm), inverse=False)


def ifftn(input, s=None, dim=None, norm=None):
    """The inverse of ``fftn`` (``torch.fft.ifftn``); arguments as ``fftn``'s."""
    x = _input("ifftn", input)
    axes, sizes = _dims("ifftn", x, s, dim)
    return FFT.apply(x, axes=axes, sizes=sizes, norm=_norm(norm), inverse=True)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """``fftn`` over the last two dims by default (``torch.fft.fft2``)."""
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """``ifftn`` over the last two dims by default (``torch.fft.ifft2``)."""
    return ifftn(input, s, dim, norm)


# ----- real to one-sided, and back -------------------------------------------------------------
def rfft(input, n=None, dim=-1, norm=None):
    r"""The transform of a real signal, its n//2 + 1 non-negative frequencies
    (``torch.fft.rfft``): the others are their conjugates, :math:`y_{n-k} = \bar{y}_k`.

    Args:
        input: a real tensor (complex: RuntimeError). n, dim, norm: as ``fft``'s.

    Shape:
        (..., L, ...) → (..., n//2 + 1, ...), complex.

    Example:
        >>> spectrum = mg.fft.rfft(signal)               # (B, T) → (B, T//2 + 1)
    """
    x = _input("rfft", input, real=True)
    axes, sizes = _one_dim("rfft", x, n, dim)
    return RFFT.apply(x, axes=axes, sizes=sizes, norm=_norm(norm))


def irfft(input, n=None, dim=-1, norm=None):
    r"""The real signal of n points whose one-sided spectrum is ``input``
    (``torch.fft.irfft``), the inverse of ``rfft``: ``irfft(rfft(x), n=x.shape[-1])`` is x.

    Args:
        input: the spectrum's n//2 + 1 non-negative frequencies along ``dim`` (cut or
            zero-padded to that many); the imaginary parts of bin 0, and of bin n/2 for an
            even n, are ignored. n: the output length (default 2(L - 1)). norm: as ``ifft``'s.

    Shape:
        (..., L, ...) → (..., n, ...), real.

    Example:
        >>> y = mg.fft.irfft(mg.fft.rfft(x) * filter, n=x.shape[-1])     # a convolution
    """
    x = _input("irfft", input)
    axes, sizes = _one_dim("irfft", x, n, dim, default=_half_length)
    return IRFFT.apply(x, axes=axes, sizes=sizes, norm=_norm(norm))


def rfftn(input, s=None, dim=None, norm=None):
    """``rfft`` over the last of ``dim``, ``fft`` over the others (``torch.fft.rfftn``);
    ``s`` and ``dim`` as ``fftn``'s. Shape: the last transformed dim becomes s[-1]//2 + 1."""
    x = _input("rfftn", input, real=True)
    axes, sizes = _dims("rfftn", x, s, dim)
    return RFFT.apply(x, axes=_some_axis("rfftn", axes), sizes=sizes, norm=_norm(norm))


def irfftn(input, s=None, dim=None, norm=None):
    """The inverse of ``rfftn`` (``torch.fft.irfftn``): the output's last transformed dim
    has s[-1] points (default 2(L - 1)), the others s's lengths (default the input's)."""
    x = _input("irfftn", input)
    axes, sizes = _dims("irfftn", x, s, dim, last_default=_half_length)
    return IRFFT.apply(x, axes=_some_axis("irfftn", axes), sizes=sizes, norm=_norm(norm))


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """``rfftn`` over the last two dims by default (``torch.fft.rfft2``)."""
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """``irfftn`` over the last two dims by default (``torch.fft.irfft2``)."""
    return irfftn(input, s, dim, norm)


# ----- Hermitian: the real transforms of the conjugate ------------------------------------------
def hfft(input, n=None, dim=-1, norm=None):
    r"""The (real) transform of a signal with Hermitian symmetry given by its first half
    (``torch.fft.hfft``): :math:`\mathrm{irfft}(\bar{x})` scaled as a forward transform.

    Args:
        input: the first n//2 + 1 values of the signal. n: the output length (default
            2(L - 1)). dim, norm: as ``fft``'s.

    Example:
        >>> mg.fft.hfft(mg.fft.ihfft(x), n=x.shape[-1])      # x again
    """
    x = _input("hfft", input)
    axes, sizes = _one_dim("hfft", x, n, dim, default=_half_length)
    return IRFFT.apply(conj(x), axes=axes, sizes=sizes, norm=DUAL[_norm(norm)])


def ihfft(input, n=None, dim=-1, norm=None):
    r"""The inverse of ``hfft`` (``torch.fft.ihfft``): the n//2 + 1 first values of the
    inverse transform of a real signal, :math:`\overline{\mathrm{rfft}(x)}` scaled as an
    inverse transform."""
    x = _input("ihfft", input, real=True)
    axes, sizes = _one_dim("ihfft", x, n, dim)
    return conj(RFFT.apply(x, axes=axes, sizes=sizes, norm=DUAL[_norm(norm)]))


def hfftn(input, s=None, dim=None, norm=None):
    """``hfft`` over the last of ``dim`` and the complex transform over the others
    (``torch.fft.hfftn``): ``irfftn`` of the conjugate with the dual ``norm``."""
    x = _input("hfftn", input)
    axes, sizes = _dims("hfftn", x, s, dim, last_default=_half_length)
    return IRFFT.apply(conj(x), axes=_some_axis("hfftn", axes), sizes=sizes,
                       norm=DUAL[_norm(norm)])


def ihfftn(input, s=None, dim=None, norm=None):
    """The inverse of ``hfftn`` (``torch.fft.ihfftn``): the conjugate of ``rfftn`` with
    the dual ``norm``."""
    x = _input("ihfftn", input)
    axes, sizes = _dims("ihfftn", x, s, dim)
    norm = DUAL[_norm(norm)]
    _input("ihfftn", x, real=True)            # after the dims and norm: torch's order
    return conj(RFFT.apply(x, axes=_some_axis("ihfftn", axes), sizes=sizes, norm=norm))


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    """``hfftn`` over the last two dims by default (``torch.fft.hfft2``)."""
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """``ihfftn`` over the last two dims by default (``torch.fft.ihfft2``)."""
    return ihfftn(input, s, dim, norm)


# ----- frequencies and shifts -----------------------------------------------------------------
def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The frequencies of an n-point ``fft``'s bins, in cycles per unit of the sample
    spacing ``d`` (``torch.fft.fftfreq``): [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d·n).

    Example:
        >>> mg.fft.fftfreq(4)                       # tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    return frequencies("fftfreq", n, d, False, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The frequencies of an n-point ``rfft``'s bins (``torch.fft.rfftfreq``):
    [0, 1, ..., n//2] / (d·n)."""
    return frequencies("rfftfreq", n, d, True, dtype, device, requires_grad)


def _shift(fn, x, dim, amount):
    check_tensor(fn, x)
    if dim is None:
        axes = tuple(range(x.ndim))
    else:                      # each dim checked; one named twice is rolled twice, as torch's
        dim = dtypes.index_of(dim)         # a 0-d integer tensor is its int, as torch's
        dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
        axes = tuple(_dim(fn, x, d) for d in dims)
    if not axes:
        raise RuntimeError("`shifts` required")
    return roll(x, [amount(x.shape[a]) for a in axes], axes)


def fftshift(input, dim=None):
    """Each of ``dim`` (default: every dim) rolled by n//2, bringing frequency 0 to the
    centre (``torch.fft.fftshift``); in the graph.

    Example:
        >>> mg.fft.fftshift(mg.fft.fftfreq(5))       # [-0.4, -0.2, 0.0, 0.2, 0.4]
    """
    return _shift("fftshift", input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    """The inverse of ``fftshift`` (``torch.fft.ifftshift``): each dim rolled by -(n//2)."""
    return _shift("ifftshift", input, dim, lambda n: -(n // 2))


# each transform takes torch's out= (ops/out_arguments.py's FFT rule), installed here, once,
# so that mg.fft's functions are the wrappers whatever imports them
_out_arguments.install({}, others={"fft": globals()})
