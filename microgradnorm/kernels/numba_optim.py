"""The numba kernel of the optimizers: Adam's and AdamW's update, ``kernels.reference``'s
``adam_update`` (same name and signature) as one loop over the elements, compiled for
C-contiguous float32 and float64 NumPy arrays of one dtype; ``numba_cpu`` re-exports it.
Everything else (half precision, views, mixed dtypes, CuPy) is the reference's.

The reference makes about a dozen passes over memory and allocates five temporaries a
parameter; this loop reads θ, g, m, v once and writes θ, m, v once. It computes what the
reference does, bit for bit but for the sign bit of a NaN: the same operations in the same
order, each rounded in the arrays' dtype (the Python numbers cast to it first, as NumPy
casts them), compiled without fast-math, so nothing is reassociated or contracted into a
fused multiply-add.
"""

import math

import numpy as np

from . import reference
from .numba_jit import DTYPES, IEEE_OPTIONS, _jit

__all__ = ["adam_update"]


@_jit(options=IEEE_OPTIONS)
def _adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, amsgrad, maximize, l2,
          constants):
    # constants, in the arrays' dtype: β1, 1-β1, β2, 1-β2, √(1-β2^t), ε, η/(1-β1^t),
    # AdamW's decay 1-ηλ (else 1), Adam's λ; ``l2``: whether Adam adds λθ (λ != 0 as the
    # Python number: a λ that rounds to 0 in float32 still adds 0·θ, NaN for an inf θ)
    beta1, c1, beta2, c2, root_bias2, eps, step_size, decay, weight_decay = constants
    # maximize as a factor -1, not a branch in the loop, which kept LLVM from vectorizing
    # it (7x slower); -1·g is -g, every bit but a NaN's sign
    sign = param.dtype.type(-1.0 if maximize else 1.0)
    for i in range(param.size):
        g = sign * grad[i]
        p = param[i]
        if decay != 1:                             # p·1 is p, every bit
            p = p * decay
        if l2:
            g = g + weight_decay * p
        m = beta1 * exp_avg[i] + c1 * g
        v = beta2 * exp_avg_sq[i] + c2 * g * g
        exp_avg[i] = m
        exp_avg_sq[i] = v
        if amsgrad:
            top = max_exp_avg_sq[i]
            if v > top or v != v:             # np.maximum's: NaN wins
                top = v
            max_exp_avg_sq[i] = top
            v = top
        param[i] = p - step_size * m / (math.sqrt(v) / root_bias2 + eps)


def adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1, beta2, eps,
                weight_decay, decoupled, maximize):
    """``reference.adam_update``, compiled (float32 and float64, C-contiguous, one dtype and
    shape; a gradient that is a view is copied first)."""
    if type(grad) is np.ndarray and not grad.flags.c_contiguous:
        grad = np.ascontiguousarray(grad)          # a sum's broadcast ones, a transpose
    amsgrad = max_exp_avg_sq is not None
    arrays = (param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq if amsgrad else exp_avg_sq)
    dtype = param.dtype
    if dtype not in DTYPES or not all(type(a) is np.ndarray and a.dtype == dtype
                                      and a.shape == param.shape and a.flags.c_contiguous
                                      for a in arrays):
        return reference.adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step,
                                     lr, beta1, beta2, eps, weight_decay, decoupled, maximize)
    # the Python numbers rounded to the dtype once, as NumPy rounds them in the reference
    constants = np.array([beta1, 1 - beta1, beta2, 1 - beta2, math.sqrt(1 - beta2 ** step),
                          eps, lr / (1 - beta1 ** step), 1 - lr * weight_decay if decoupled else 1,
                          weight_decay], dtype)
    l2 = bool(weight_decay) and not decoupled
    _adam(*[a.reshape(-1) for a in arrays], amsgrad, bool(maximize), l2, constants)
