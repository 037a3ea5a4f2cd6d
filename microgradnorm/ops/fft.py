r"""The discrete Fourier transforms as graph nodes, over the array module's ``fft``
(NumPy's pocketfft, or CuPy's cuFFT): ``FFT``, complex to complex over any dims, forward
or inverse; ``RFFT``, a real signal to its one-sided spectrum; ``IRFFT``, a one-sided
spectrum back to a real signal. ``mg.fft`` (fft.py) checks the arguments and composes them
(``hfft`` is an ``IRFFT`` of the conjugate, ``fftshift`` a ``roll``). Each result, forward
and backward, is cast to torch's dtype (complex64 from float32 or complex64, float32 from
irfft's complex64): NumPy 1.x transforms in double precision, NumPy 2 keeps single (the
cast is then free).

Each transform is linear, :math:`y = A x`, so torch's gradient of a real loss (the conjugate
Wirtinger derivative, doubled: ops/complex.py) is :math:`A^H \bar{y}`: an inverse transform
of the upstream gradient with the *dual* scaling (``"backward"`` ↔ ``"forward"``, ``"ortho"``
itself), cut or zero-padded back to the input's length where the forward padded or cut it.
The one-sided transforms follow torch's formulas (``fft_r2c_backward``, ``fft_c2r_backward``):

- ``RFFT``: the upstream half spectrum zero-padded to the full length, an inverse
  complex transform, its real part;
- ``IRFFT``: a one-sided forward transform of the upstream signal, its bins 1 .. n - (n//2+1)
  doubled (each stands for itself and its mirror image, which the half spectrum omits).
"""

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..tensor import Tensor

NORMS = ("backward", "ortho", "forward")
DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def fitted(array, shape, axes):
    """``array`` cut or zero-padded at the end of each of ``axes`` to ``shape``'s length."""
    xp = backend.array_module(array)
    cut = tuple(slice(0, min(array.shape[a], shape[a])) if a in axes else slice(None)
                for a in range(array.ndim))
    array = array[cut]
    padding = [(0, shape[a] - array.shape[a] if a in axes else 0) for a in range(array.ndim)]
    if any(after for _, after in padding):
        array = xp.pad(array, padding)
    return array


def _c2c(array, sizes, axes, norm, inverse):
    # the n-dimensional complex transform; over no dims, the array as complex (torch's fftn)
    xp = backend.array_module(array)
    dtype = dtypes.complex_of(array.dtype)
    if not axes:
        return array.astype(dtype)
    transform = xp.fft.ifftn if inverse else xp.fft.fftn
    return transform(array, s=sizes, axes=axes, norm=norm).astype(dtype, copy=False)


class FFT(Function):
    """:math:`y_k = c \\sum_j x_j e^{\\mp 2\\pi i\\, jk/n}` over ``axes`` (each padded with
    zeros or cut to its size in ``sizes``): ``-`` forward, ``+`` with ``inverse``; c is 1,
    1/√n or 1/n by ``norm``. Its gradient: the other direction with the dual scaling."""

    @staticmethod
    def forward(ctx, x, axes, sizes, norm, inverse):
        ctx.shape, ctx.axes, ctx.norm, ctx.inverse = x.shape, axes, norm, inverse
        ctx.real = not dtypes.is_complex(x.dtype)
        return _c2c(x, sizes, axes, norm, inverse)

    @staticmethod
    def backward(ctx, grad):
        grad_x = _c2c(grad, None, ctx.axes, DUAL[ctx.norm], not ctx.inverse)   # Aᴴ ȳ
        grad_x = fitted(grad_x, ctx.shape, ctx.axes)
        return grad_x.real if ctx.real else grad_x


class RFFT(Function):
    """The transform of a real x over ``axes``, keeping bins 0 .. n//2 of the last axis (the
    others mirror them: :math:`y_{n-k} = \\bar{y}_k`)."""

    @staticmethod
    def forward(ctx, x, axes, sizes, norm):
        xp = backend.array_module(x)
        ctx.shape, ctx.axes, ctx.sizes, ctx.norm = x.shape, axes, sizes, norm
        spectrum = xp.fft.rfftn(x, s=sizes, axes=axes, norm=norm)
        return spectrum.astype(dtypes.complex_of(x.dtype), copy=False)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        full = list(grad.shape)
        full[ctx.axes[-1]] = ctx.sizes[-1]                  # (..., n//2+1) → (..., n)
        spectrum = fitted(grad, full, ctx.axes[-1:])        # the omitted half: zeros
        grad_x = xp.fft.ifftn(spectrum, axes=ctx.axes, norm=DUAL[ctx.norm]).real
        return fitted(grad_x.astype(dtypes.real_of(grad.dtype), copy=False), ctx.shape,
                      ctx.axes)


class IRFFT(Function):
    """The real signal of ``sizes`` whose spectrum over ``axes`` is z's Hermitian extension:
    z's last axis cut or padded to n//2+1 bins, the others to their sizes; the imaginary
    parts of bin 0 (and of bin n/2 for an even n) are ignored, as pocketfft's (and torch's)
    complex-to-real transform ignores them."""

    @staticmethod
    def forward(ctx, z, axes, sizes, norm):
        xp = backend.array_module(z)
        ctx.shape, ctx.axes, ctx.sizes, ctx.norm = z.shape, axes, sizes, norm
        ctx.real = not dtypes.is_complex(z.dtype)
        if z.shape[axes[-1]] == 0:       # NumPy's irfft reads memory past an empty spectrum:
            bins = list(z.shape)         # its zero bins given explicitly
            bins[axes[-1]] = sizes[-1] // 2 + 1
            z = fitted(z, bins, axes[-1:])
        signal = xp.fft.irfftn(z, s=sizes, axes=axes, norm=norm)
        return signal.astype(dtypes.real_of(z.dtype), copy=False)

    @staticmethod
    def backward(ctx, grad):
        xp = backend.array_module(grad)
        grad_z = xp.fft.rfftn(grad, axes=ctx.axes, norm=DUAL[ctx.norm])   # (..., n//2+1)
        grad_z = grad_z.astype(dtypes.complex_of(grad.dtype), copy=False)
        n, last = ctx.sizes[-1], ctx.axes[-1]
        mirrored = n - (n // 2 + 1)                  # bins whose mirror image is omitted
        if mirrored:
            index = [slice(None)] * grad_z.ndim
            index[last] = slice(1, 1 + mirrored)
            grad_z[tuple(index)] *= 2
        grad_z = fitted(grad_z, ctx.shape, ctx.axes)
        return grad_z.real if ctx.real else grad_z


def _spacing(fn, d):
    # torch reads a 0-d tensor without a graph as its number (a bool as 0 or 1)
    if d.ndim or d.requires_grad:
        raise TypeError(f"fft_{fn}(): argument 'd' (position 2) must be float, not Tensor")
    if dtypes.is_complex(d.dtype):
        raise RuntimeError("value cannot be converted to type double without overflow")
    return float(d.item())


def frequencies(fn, n, d, onesided, dtype, device, requires_grad):
    """The sample frequencies of an ``n``-point transform with spacing ``d`` (a number, or
    a 0-d tensor): 0, 1, ..., then the negative ones (or only 0 .. n//2 when ``onesided``),
    times 1/(d·n), as torch's ``fftfreq``/``rfftfreq`` compute them (an ``arange`` times the
    reciprocal, so a floating ``dtype``: a complex one is refused as torch's ``arange``)."""
    dtypes.check_number(fn, "n", n, integer=True)
    d = _spacing(fn, d) if isinstance(d, Tensor) else d
    dtypes.check_number(fn, "d", d)
    dtype = dtypes.default_float(dtype)
    if dtypes.is_complex(dtype):
        raise NotImplementedError(f'"arange_cpu" not implemented for '
                                  f"'{dtypes.torch_name(dtype)}'")
    if not dtypes.is_floating(dtype):
        raise RuntimeError(f"{fn} requires a floating point or complex dtype")
    # torch's size: n//2 + 1 bins with C's division, truncated toward 0 (so rfftfreq(-1)
    # has one bin, -0.0), refused below 0 as any tensor of a negative size
    size = int(n / 2) + 1 if onesided else n
    if size < 0:
        raise RuntimeError(f"{fn}: Trying to create tensor with negative dimension {size}: "
                           f"[{size}] (n = {n})")
    work = dtypes.accumulation_dtype(dtype)
    values = np.arange(size).astype(work)
    if not onesided:
        values[(n + 1) // 2:] -= n
    with backend.silent_floats():                    # d = 0: torch's inf and NaN
        values *= work.type(np.float64(1.0) / np.float64(n * d))
    values = values.astype(dtype)
    device = backend.check_device("cpu" if device is None else device)
    return Tensor._leaf(fn, backend.to_device(values, device), requires_grad)
