"""Utilities on modules and parameters: gradient clipping; save and load (``mg.save`` and
``mg.load``, whose one home is ``nn.serialization``)."""

import math

import numpy as np

from .. import backend
from ..dtypes import check_number, get_default_dtype
from ..tensor import Tensor
from .serialization import load, save

__all__ = ["clip_grad_norm_", "load", "save"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    r"""Scale the gradients in place by :math:`\min(1, \text{max\_norm} / (n + 10^{-6}))`,
    n their joint ``norm_type``-norm; returns n before clipping, as torch's: a 0-d Tensor in
    the gradients' dtype and on their device.

    ``error_if_nonfinite``: raise a RuntimeError for a NaN or infinite n, changing nothing.

    Example:
        >>> norm = nn.clip_grad_norm_(model.parameters(), 1.0); print(f"{norm:.4f}")
    """
    check_number("clip_grad_norm_", "max_norm", max_norm)
    check_number("clip_grad_norm_", "norm_type", norm_type)
    # A list first: a generator would be used up by the norm and leave nothing to scale.
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad._array for p in parameters if p.grad is not None and p.grad.numel()]
    if not grads:
        return _norm_tensor(0.0, [p.grad._array for p in parameters if p.grad is not None])
    norm_type = float(norm_type)
    # As torch: the norm of the per-tensor norms (the same number as one joint norm for
    # every order but 0, where it counts the tensors holding a nonzero)
    total = float(_vector_norm(np.array([float(_vector_norm(g, norm_type)) for g in grads]),
                               norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                           f"gradients is {total}; set error_if_nonfinite=False to clip anyway")
    scale = max_norm / (total + 1e-6)
    if not scale < 1 and not math.isnan(scale):
        return _norm_tensor(total, grads)     # within max_norm: nothing to scale
    with np.errstate(invalid="ignore"):         # inf · 0 = NaN is the intended result
        for p in parameters:
            if p.grad is not None:
                p.grad._array *= scale        # NaN for a NaN norm, 0 for an infinite one
    return _norm_tensor(total, grads)


def _norm_tensor(total, grads):
    # the total norm as torch returns it: 0-d, the gradients' dtype (else the default)
    if not grads:
        return Tensor(np.asarray(total, get_default_dtype()))
    dtype = np.result_type(*[g.dtype for g in grads])
    return Tensor(np.asarray(total, dtype), device=backend.device_of(grads[0]))


def _vector_norm(values, order):
    # torch.linalg.vector_norm of an array of any shape: inf, -inf and 0 by their limits
    magnitudes = abs(values)
    if order == math.inf:
        return magnitudes.max()                      # NaN wins, as in torch
    if order == -math.inf:
        return magnitudes.min()
    if order == 0:
        return (magnitudes != 0).sum()               # NaN counts as nonzero, as in torch
    with np.errstate(divide="ignore", over="ignore"):   # 0 ** negative order: inf, as torch
        return (magnitudes ** order).sum() ** (1.0 / order)
