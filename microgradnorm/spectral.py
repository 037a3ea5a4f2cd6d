"""The short-time Fourier transform and its inverse, ``torch.stft`` and ``torch.istft``
(and the Tensor methods), composed of existing nodes: the padding of ``F.pad``, the frames
of ``Tensor.unfold``, the transforms of ``mg.fft`` and, for the inverse, the overlap-add of
``F.fold``; so both take gradients (and double backward) from those nodes. Torch's
defaults, checks and errors: ``return_complex`` required for a real input, a window
shorter than ``n_fft`` zero-padded on both sides, ``normalized`` the 1/√n_fft scaling,
the inverse's division by the windows' overlapped squares (refused where they vanish)."""

import warnings

from . import backend, fft
from .convolution_more import fold
from .ops.complex import view_as_complex, view_as_real
from .tensor import Tensor
from .padding import pad as _pad

__all__ = ["istft", "stft"]


def _window(fn, window, win_length, n_fft, like):
    # the window of win_length, zero-padded on both sides to n_fft (torch's placement)
    if window is None:
        if fn == "stft":
            backend.warn_once(
                "A window was not provided. A rectangular window will be applied,which is "
                "known to cause spectral leakage. Other windows such as torch.hann_window or "
                "torch.hamming_window are recommended to reduce spectral leakage.To suppress "
                "this warning and use a rectangular window, explicitly set "
                "`window=torch.ones(n_fft, device=<device>)`.", stacklevel=4)
        else:
            backend.warn_once(
                "A window was not provided. A rectangular window will be applied.Please "
                "provide the same window used by stft to make the inversion lossless.To "
                "suppress this warning and use a rectangular window, explicitly set "
                "`window=torch.ones(n_fft, device=<device>)`.", stacklevel=4)
        window = like.new_ones((win_length,)) if like.dtype.kind != "c" else \
            like.real.new_ones((win_length,))
    elif not isinstance(window, Tensor):
        raise TypeError(f"{fn}(): argument 'window' must be Tensor, not {type(window).__name__}")
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{fn}: expected a 1D window tensor of size equal to win_length="
                           f"{win_length}, but got window with size {list(window.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = _pad(window, (left, n_fft - win_length - left))
    return window


def _lengths(fn, n_fft, hop_length, win_length):
    if hop_length is None:
        hop_length = n_fft // 4
    if win_length is None:
        win_length = n_fft
    if hop_length <= 0:
        raise RuntimeError(f"{fn}: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{fn}: expected 0 < win_length <= n_fft, but got win_length="
                           f"{win_length}")
    return int(hop_length), int(win_length)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    r"""The short-time Fourier transform (``torch.stft``): the DFT of each frame of
    ``n_fft`` samples, ``hop_length`` apart, times the window.

    :math:`X[\omega, m] = \sum_{k=0}^{n\_fft-1} w[k]\, x[m \cdot hop + k]\,
    e^{-2\pi i\, \omega k / n\_fft}`, with x padded by n_fft // 2 on both sides
    (``pad_mode``) when ``center``.

    Args:
        input: (L,) or (B, L), real or complex. n_fft: the frame size, in (0, L].
        hop_length: default n_fft // 4. win_length: default n_fft, at most n_fft.
        window: (win_length,), default all ones; zero-padded to n_fft on both sides.
        center: pad the signal so frame m is centred at m·hop. pad_mode: ``F.pad``'s mode.
        normalized: multiply by 1/√n_fft. onesided: the n_fft // 2 + 1 non-negative
            frequencies only (default for real input and window).
        return_complex: required for a real input; False gives ``view_as_real`` of the
            result, with torch's deprecation warning.
        align_to_window: with ``center=False`` only; False or None (True is refused here).

    Shape: (B?, n_freq, n_frames) complex, n_frames = 1 + (L' − n_fft) // hop.

    Example:
        >>> mg.stft(x, 16, 4, window=mg.hann_window(16), return_complex=True)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' must be Tensor, not {type(input).__name__}")
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if align_to_window:
        raise NotImplementedError("stft: align_to_window=True is not supported here")
    complex_in = input.dtype.kind == "c" or (isinstance(window, Tensor)
                                             and window.dtype.kind == "c")
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D")
    if center:
        extended = input.reshape((1,) * (3 - input.ndim) + tuple(input.shape))
        half = n_fft // 2
        input = _pad(extended, (half, half), pad_mode).reshape(
            tuple(input.shape[:-1]) + (input.shape[-1] + 2 * half,))
    length = input.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    hop_length, win_length = _lengths("stft", n_fft, hop_length, win_length)
    window = _window("stft", window, win_length, n_fft, input)
    if onesided is None:
        onesided = not complex_in
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    frames = input.unfold(-1, n_fft, hop_length) * window           # (B?, n_frames, n_fft)
    norm = "ortho" if normalized else "backward"
    spectrum = fft.rfft(frames, dim=-1, norm=norm) if onesided else \
        fft.fft(frames, dim=-1, norm=norm)
    spectrum = spectrum.transpose(-1, -2)                          # (B?, n_freq, n_frames)
    if return_complex:
        return spectrum
    warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, "
                  "stft will return complex tensors for all inputs, and return_complex=False "
                  "will raise an error.\nNote: you can still call torch.view_as_real on the "
                  "complex output to recover the old return format.", UserWarning, stacklevel=2)
    return view_as_real(spectrum)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    r"""The inverse short-time Fourier transform (``torch.istft``): each frame's inverse
    DFT times the window, overlapped and added, divided by the overlapped squared windows
    (the least-squares inverse of ``stft`` with the same arguments).

    :math:`x[t] = \sum_m w[t - m\,hop]\, y_m[t - m\,hop] / \sum_m w^2[t - m\,hop]`.

    Args:
        input: (B?, n_freq, n_frames) complex (or its ``view_as_real``, with a last dim of
            2). n_fft, hop_length, win_length, window, center, normalized: as ``stft``'s.
        onesided: whether ``input`` holds n_fft // 2 + 1 frequencies (default: when
            n_freq != n_fft). length: the output's length, cut or zero-padded.
        return_complex: a complex output (two-sided input, ``ifft``) instead of a real one.

    Shape: (B?, length), by default n_fft + hop·(n_frames − 1), less n_fft on both ends
    when ``center``.

    Example:
        >>> x2 = mg.istft(mg.stft(x, 16, return_complex=True), 16, length=x.shape[-1])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dtype.kind != "c":
        if input.ndim >= 1 and input.shape[-1] == 2:
            warnings.warn("istft will require a complex-valued input tensor in a future "
                          "PyTorch release. Matching the output from stft with "
                          "return_complex=True. ", UserWarning, stacklevel=2)
            input = view_as_complex(input)
        else:
            raise RuntimeError("istft requires a complex-valued input tensor matching the "
                               "output from stft with return_complex=True.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex, "
                           f"got {input.ndim}")
    hop_length, win_length = _lengths("istft", n_fft, hop_length, win_length)
    n_freq, n_frames = input.shape[-2], input.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided and n_fft // 2 + 1 != n_freq:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{n_freq}")
    if not onesided and n_fft != n_freq:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {n_freq}")
    if n_frames < 1:
        raise RuntimeError("istft: expected at least one frame")
    real_part = input.real
    window = _window("istft", window, win_length, n_fft, real_part)
    frames_in = input.transpose(-1, -2)                             # (B?, n_frames, n_freq)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        frames = fft.ifft(frames_in, dim=-1, norm=norm)
    else:
        if window.dtype.kind == "c":
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            frames_in = frames_in[..., :n_fft // 2 + 1]
        frames = fft.irfft(frames_in, n=n_fft, dim=-1, norm=norm)
    frames = frames * window                                        # (B?, n_frames, n_fft)
    batched = frames.ndim == 3
    columns = (frames if batched else frames.unsqueeze(0)).transpose(-1, -2)   # (B, n_fft, F)
    expected = n_fft + hop_length * (n_frames - 1)
    kernel = dict(output_size=(1, expected), kernel_size=(1, n_fft), stride=(1, hop_length))
    if columns.dtype.kind == "c":
        signal = view_as_complex(fold(view_as_real(columns).movedim(-1, 1).reshape(
            columns.shape[0], 2 * n_fft, n_frames), **kernel).reshape(
            columns.shape[0], 2, expected).movedim(1, -1).contiguous())
    else:
        signal = fold(columns, **kernel).reshape(columns.shape[0], expected)
    squares = (window * window).reshape(1, n_fft, 1).expand(1, n_fft, n_frames)
    envelope = fold(squares, **kernel).reshape(1, expected)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = expected - n_fft // 2
    else:
        end = expected
    stop = min(end, expected)
    signal, envelope = signal[:, start:stop], envelope[:, start:stop]
    if envelope.numel() and float(envelope.abs().min().item()) < 1e-11:
        raise RuntimeError(f"istft(...): window overlap add min: "
                           f"{float(envelope.abs().min().item())}")
    signal = signal / envelope
    if not batched:
        signal = signal.squeeze(0)
    if end > expected:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        signal = _pad(signal, (0, end - expected))
    return signal


def _stft_method(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
                 pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
                 align_to_window=None):
    """``mg.stft(self, ...)`` (``Tensor.stft``)."""
    return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                onesided, return_complex, align_to_window)


def _istft_method(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
                  normalized=False, onesided=None, length=None, return_complex=False):
    """``mg.istft(self, ...)`` (``Tensor.istft``)."""
    return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided,
                 length, return_complex)


_stft_method.__name__ = _stft_method.__qualname__ = "stft"
_istft_method.__name__ = _istft_method.__qualname__ = "istft"
Tensor.stft, Tensor.istft = _stft_method, _istft_method
