"""``mg.backends``: the switches of ``torch.backends`` that training files set on any
machine (``torch.backends.cuda.matmul.allow_tf32 = True``). They are recorded and read back;
nothing here computes in TF32 or uses cuDNN, so they change no result."""

import types

__all__ = ["cuda", "cudnn", "mps"]


class _Flags(types.SimpleNamespace):
    """Settable flags with torch's defaults; an unknown flag is an AttributeError, so a typo
    is not silently recorded."""

    def __setattr__(self, name, value):
        if name not in vars(self):
            raise AttributeError(f"{type(self).__name__}: no flag {name!r}; known: "
                                 f"{sorted(vars(self))}")
        super().__setattr__(name, value)


cuda = types.SimpleNamespace(
    matmul=_Flags(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                  allow_bf16_reduced_precision_reduction=True),
    is_built=lambda: False)
cuda.is_built.__doc__ = "False: no CUDA build of torch's kind here (GPU arrays are CuPy's)."
cudnn = _Flags(enabled=True, benchmark=False, deterministic=False, allow_tf32=True)
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
mps.is_available.__doc__ = "False: no Apple GPU backend here."
