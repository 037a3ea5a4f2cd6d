"""RMSNorm as real models compute it: Gemma's weight offset and the casting modes.

Hugging Face's models and Liger-Kernel's ``LigerRMSNorm(casting_mode=...)`` write
RMSNorm three ways for half-precision input (float16, bfloat16), with w' = offset + w:

  * ``"llama"`` (``LlamaRMSNorm``): statistics in float32, x̂ = x·rstd cast back to the
    input dtype, then ``w' * x̂`` in the weight's dtype (float32 result for a float32
    weight, as Hugging Face returns it).
  * ``"gemma"`` (``GemmaRMSNorm``, which adds the offset 1 to a zero-initialised weight):
    everything in float32, ``(x̂ · (1 + w.float())).to(input dtype)`` at the end.
  * ``"none"``: every step in the input dtype.

These functions are thin wrappers around a kernel module's ``rms_norm_forward`` /
``rms_norm_backward`` (and the residual forms), which compute the statistics in float32
and round y once. On ``reference`` (the definition, and the oracle of the CUDA kernels)
they compose: "gemma" is the kernels' own arithmetic with w' in float32; "llama" asks the
kernels for x̂ alone (weight None: x̂ rounded to the input dtype) and multiplies by w'
afterwards; "none" rounds rstd to the input dtype and forms x̂ and y there. A kernel
module with ``NATIVE_CONVENTIONS`` (``cuda``) takes ``offset=`` and ``casting=`` itself
and does the same roundings inside its one kernel launch; the call is handed to it as
it is. One difference from the "none" formula remains on purpose: the fused kernels
accumulate the mean square in float32 from x, never forming x² in the input dtype, so
float16 rows with |x| > 256 do not overflow as the composite graph (and Liger's "none"
kernel) do.

float32 and float64 input needs no cast in any mode: the kernels run as they always do,
with w' in place of w. The backward is the kernels' closed form with w' (d/dw' = d/dw):
dx = rstd·(g - x̂·mean(g·x̂)), g = dy·w', dweight = Σ dy·x̂, all accumulated in float32.
It treats every cast as the identity, as autograd does (a Cast's gradient is the incoming
one, cast back), so for "llama" dweight sums dy·x̂ with x̂ in float32 where the composite
graph sums dy times the rounded x̂: the two differ by x̂'s rounding, one unit of x's dtype.
"""

import numpy as np

from ..backend import array_module

CASTINGS = ("llama", "gemma", "none")


def weight_dtype(kernels, x, weight, casting):
    """The dtype w' = offset + w is formed in: float32 for "gemma" on half input, x's
    dtype for "none", the weight's own otherwise (None for no weight)."""
    if weight is None:
        return None
    return weight_dtype_for(x.dtype, weight.dtype, kernels.accumulation_dtype(x.dtype),
                            casting)


def weight_dtype_for(x_dtype, weight_dtype, accumulation, casting):
    """``weight_dtype`` from the dtypes alone (``accumulation``: the kernels' accumulation
    dtype for x), for launchers that decide before any array exists (``kernels.cuda``)."""
    if np.dtype(accumulation) == np.dtype(x_dtype) or casting == "llama":
        return np.dtype(weight_dtype)
    return np.dtype(accumulation) if casting == "gemma" else np.dtype(x_dtype)


def effective_weight(weight, offset, dtype):
    """w' = offset + w in ``dtype`` (None for no weight). The offset is added as a NumPy
    scalar of ``dtype``: CuPy's ufuncs take scalars but refuse NumPy arrays, 0-d ones too."""
    if weight is None:
        return None
    weight = weight.astype(dtype, copy=False)
    return weight + np.asarray(offset, dtype)[()] if offset else weight


def rms_norm_forward(kernels, x, residual, weight, eps, offset, casting):
    """y, s (None without ``residual``), rstd (float32 for half input) of RMSNorm(x [+
    residual]) with ``casting`` and w' = offset + w."""
    if getattr(kernels, "NATIVE_CONVENTIONS", False):
        if residual is None:
            y, rstd = kernels.rms_norm_forward(x, weight, eps, offset=offset, casting=casting)
            return y, None, rstd
        return kernels.add_rms_norm_forward(x, residual, weight, eps, offset=offset,
                                            casting=casting)
    w = effective_weight(weight, offset, weight_dtype(kernels, x, weight, casting))
    if kernels.accumulation_dtype(x.dtype) == x.dtype or casting == "gemma":
        return _kernel_forward(kernels, x, residual, w, eps)
    xhat, s, rstd = _kernel_forward(kernels, x, residual, None, eps)   # x̂ in x's dtype
    if casting == "none":
        rows = x if s is None else s
        xhat = rows * rstd.astype(x.dtype)[:, None]                    # (M, D) in x's dtype
    if w is None:
        return xhat, s, rstd
    if w.dtype == xhat.dtype:
        return array_module(xhat).multiply(xhat, w, out=xhat), s, rstd   # x̂ is ours: in place
    return xhat * w, s, rstd                          # float32 w: float32 y (Hugging Face's)


def rms_norm_backward(kernels, dy, ds, x, weight, rstd, offset, casting):
    """dx (dx + ds with a residual) and dweight, for the forward above; ``x`` is the
    normalized rows (s with a residual)."""
    if getattr(kernels, "NATIVE_CONVENTIONS", False):
        if ds is None:
            return kernels.rms_norm_backward(dy, x, weight, rstd, offset=offset,
                                             casting=casting)
        return kernels.add_rms_norm_backward(dy, ds, x, weight, rstd, offset=offset,
                                             casting=casting)
    w = effective_weight(weight, offset, weight_dtype(kernels, x, weight, casting))
    if ds is None:
        dx, dweight = kernels.rms_norm_backward(dy, x, w, rstd)
    else:
        dx, dweight = kernels.add_rms_norm_backward(dy, ds, x, w, rstd)
    return dx, None if dweight is None else dweight.astype(weight.dtype, copy=False)


def _kernel_forward(kernels, x, residual, weight, eps):
    if residual is None:
        y, rstd = kernels.rms_norm_forward(x, weight, eps)
        return y, None, rstd
    return kernels.add_rms_norm_forward(x, residual, weight, eps)
