"""``mg.backends``: the switches of ``torch.backends`` that training files set on any
machine (``torch.backends.cuda.matmul.allow_tf32 = True``), and the attention kernels' flags
(``enable_flash_sdp``, ``sdp_kernel``, which ``nn.attention.sdpa_kernel`` sets too). They are
recorded and read back; nothing here computes in TF32, uses cuDNN or picks an attention
kernel by them (``F.scaled_dot_product_attention`` has its own two implementations), so they
change no result."""

import contextlib
import enum
import types
import warnings

__all__ = ["SDPBackend", "cuda", "cudnn", "mps"]


class _Flags(types.SimpleNamespace):
    """Settable flags with torch's defaults; an unknown flag is an AttributeError, so a typo
    is not silently recorded."""

    def __setattr__(self, name, value):
        if name not in vars(self):
            raise AttributeError(f"{type(self).__name__}: no flag {name!r}; known: "
                                 f"{sorted(vars(self))}")
        super().__setattr__(name, value)


class SDPBackend(enum.Enum):
    """The kernels of scaled dot-product attention (``torch.nn.attention.SDPBackend``), with
    torch's names and values."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# which attention kernels are enabled: torch's flags, all on at first
_SDP = {SDPBackend.FLASH_ATTENTION: True, SDPBackend.EFFICIENT_ATTENTION: True,
        SDPBackend.MATH: True, SDPBackend.CUDNN_ATTENTION: True}
_SDP_NAMES = {SDPBackend.FLASH_ATTENTION: "flash", SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
              SDPBackend.MATH: "math", SDPBackend.CUDNN_ATTENTION: "cudnn"}


def _sdp_setter(backend):
    def enable(enabled):
        if not isinstance(enabled, bool):
            raise RuntimeError(f"set_sdp_use_{_SDP_NAMES[backend]} expects a bool, but got "
                               f"{type(enabled).__name__}")
        _SDP[backend] = enabled
    enable.__name__ = f"enable_{_SDP_NAMES[backend]}_sdp"
    enable.__doc__ = (f"Record whether the {backend.name} attention kernel may run "
                      f"(``torch.backends.cuda.{enable.__name__}``); read back by "
                      f"``{_SDP_NAMES[backend]}_sdp_enabled()``.")
    return enable


def _sdp_getter(backend):
    def enabled():
        return _SDP[backend]
    enabled.__name__ = f"{_SDP_NAMES[backend]}_sdp_enabled"
    enabled.__doc__ = f"What ``enable_{_SDP_NAMES[backend]}_sdp`` recorded; True at first."
    return enabled


def sdp_backends():
    """The attention kernels whose flags are on, in ``SDPBackend`` order."""
    return [backend for backend in SDPBackend if _SDP.get(backend)]


def set_sdp_backends(backends):
    """Turn on exactly ``backends`` (``nn.attention.sdpa_kernel``'s switch)."""
    for backend in _SDP:
        _SDP[backend] = backend in backends


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """The attention kernels' flags set for a block, the previous ones put back after
    (``torch.backends.cuda.sdp_kernel``, deprecated for ``nn.attention.sdpa_kernel``: the
    same FutureWarning); yields ``{}``, as torch's."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see `torch.nn.attention.sdpa_kernel()` "
                  "for the new context manager, with updated signature.", FutureWarning,
                  stacklevel=3)
    previous = sdp_backends()
    wanted = {SDPBackend.FLASH_ATTENTION: enable_flash, SDPBackend.MATH: enable_math,
              SDPBackend.EFFICIENT_ATTENTION: enable_mem_efficient,
              SDPBackend.CUDNN_ATTENTION: enable_cudnn}
    try:
        for backend, enabled in wanted.items():
            _sdp_setter(backend)(enabled)
        yield {}
    finally:
        set_sdp_backends(previous)


cuda = types.SimpleNamespace(
    matmul=_Flags(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                  allow_bf16_reduced_precision_reduction=True),
    is_built=lambda: False, SDPBackend=SDPBackend, sdp_kernel=sdp_kernel,
    is_flash_attention_available=lambda: False,
    **{f.__name__: f for backend in _SDP for f in (_sdp_setter(backend), _sdp_getter(backend))})
cuda.is_built.__doc__ = "False: no CUDA build of torch's kind here (GPU arrays are CuPy's)."
cuda.is_flash_attention_available.__doc__ = "False: no flash-attention kernel here."
cudnn = _Flags(enabled=True, benchmark=False, deterministic=False, allow_tf32=True)
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
mps.is_available.__doc__ = "False: no Apple GPU backend here."
