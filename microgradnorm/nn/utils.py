"""Utilities on modules and parameters, ``torch.nn.utils``'s: gradient clipping
(``clip_grad_norm_`` = ``get_total_norm`` + ``clip_grads_with_norm_``, ``clip_grad_value_``),
``parameters_to_vector`` and ``vector_to_parameters``; save and load (``mg.save`` and
``mg.load``, whose one home is ``nn.serialization``); ``nn.utils.rnn``, the padded and
packed sequences of the recurrent layers (``nn/rnn_utils.py``); weight and spectral
normalization, the hook forms (``nn/weight_norm.py``, ``nn/spectral_norm.py``) and
``nn.utils.parametrize`` / ``nn.utils.parametrizations`` (``nn/parametrize.py``,
``nn/parametrizations.py``)."""

import math
import sys
import types
import warnings

import numpy as np

from .. import backend, ops
from ..dtypes import check_number, get_default_dtype
from ..ops.vector_norm import p_norm
from ..tensor import Tensor
from . import parametrizations, parametrize
from . import rnn_utils as rnn
from .serialization import load, save
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

# ``from torch.nn.utils.rnn import pad_sequence`` reads here as microgradnorm.nn.utils.rnn
sys.modules[__name__ + ".rnn"] = rnn
sys.modules[__name__ + ".parametrize"] = parametrize
sys.modules[__name__ + ".parametrizations"] = parametrizations

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "load", "parameters_to_vector", "rnn", "save", "vector_to_parameters",
           "parametrizations", "parametrize", "remove_spectral_norm", "remove_weight_norm",
           "spectral_norm", "weight_norm"]


def _as_list(parameters):
    # a Tensor or an iterable, as a list: a generator would be used up by a first pass
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    r"""Scale the gradients in place by :math:`\min(1, \text{max\_norm} / (n + 10^{-6}))`,
    n their joint ``norm_type``-norm; returns n before clipping, as torch's: a 0-d Tensor in
    the gradients' dtype and on their device. ``get_total_norm`` of the gradients, then
    ``clip_grads_with_norm_``, as torch's.

    ``norm_type``: a real number, or a string of one (``'inf'``), as torch's.
    ``error_if_nonfinite``: raise a RuntimeError for a NaN or infinite n, changing nothing.
    ``foreach``: accepted for torch's signature; one implementation serves both.

    Example:
        >>> norm = nn.clip_grad_norm_(model.parameters(), 1.0); print(f"{norm:.4f}")
    """
    check_number("clip_grad_norm_", "max_norm", max_norm)
    norm_type = _norm_order("clip_grad_norm_", norm_type)
    generator = isinstance(parameters, types.GeneratorType)
    parameters = _as_list(parameters)
    if generator and not parameters:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                      stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = _total_norm("clip_grad_norm_", grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    r"""The ``norm_type``-norm of the tensors' norms (``nn.utils.get_total_norm``): their
    norm as one vector, but for order 0, where it counts the tensors holding a nonzero, as
    torch's. A 0-d Tensor in their dtype (0 of the default dtype for none).

    Example:
        >>> norm = nn.utils.get_total_norm([p.grad for p in model.parameters()])
    """
    norm_type = _norm_order("get_total_norm", norm_type)
    return _total_norm("get_total_norm", _as_list(tensors), norm_type, error_if_nonfinite)


def _norm_order(fn, norm_type):
    # a real number, or a string float() reads ("inf", as torch documents), as torch's
    if isinstance(norm_type, str):
        try:
            return float(norm_type)
        except ValueError:
            raise ValueError(f"{fn}: norm_type must be a number or a string of one (such as "
                             f"'inf'), got {norm_type!r}") from None
    check_number(fn, "norm_type", norm_type)
    return norm_type


def _total_norm(fn, tensors, norm_type, error_if_nonfinite):
    arrays = [t._array for t in tensors if t.numel()]
    if not arrays:
        return _norm_tensor(0.0, [t._array for t in tensors])
    norm_type = float(norm_type)
    # the norm of the per-tensor norms (the same number as one joint norm for every order
    # but 0), each torch.linalg.vector_norm's: half precision in float32, NaN wins at inf
    with backend.silent_floats():                   # 0 ** negative order: inf, as torch
        norms = np.array([float(p_norm(a, norm_type)) for a in arrays])
        total = float(p_norm(norms, norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"{fn}: The total norm of order {norm_type} for gradients from "
                           f"`parameters` is non-finite ({total}), so it cannot be clipped; set "
                           "error_if_nonfinite=False to scale by it anyway")
    return _norm_tensor(total, arrays)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    r"""Scale the gradients in place by :math:`\min(1, \text{max\_norm} / (n + 10^{-6}))`
    for a given total norm n (``nn.utils.clip_grads_with_norm_``), computed as torch's in
    n's dtype (the reciprocal of n + 10⁻⁶, times max_norm); NaN scales to NaN, an infinite
    n to 0.

    Example:
        >>> n = nn.utils.get_total_norm(grads); nn.utils.clip_grads_with_norm_(params, 1.0, n)
    """
    check_number("clip_grads_with_norm_", "max_norm", max_norm)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    total = backend.to_numpy(total_norm._array) if isinstance(total_norm, Tensor) else \
        np.asarray(float(total_norm))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        shifted = total + np.asarray(1e-6, total.dtype)
        scale = np.minimum((np.asarray(1, total.dtype) / shifted) * np.asarray(
            max_norm, total.dtype), np.asarray(1, total.dtype))      # NaN stays NaN
        for grad in grads:                # inf · 0 = NaN: the intended result
            grad._array[...] = (grad._array * backend.to_device(
                scale, grad.device)).astype(grad.dtype, copy=False)
            grad._bump_version()


def _norm_tensor(total, grads):
    # the total norm as torch returns it: 0-d, the gradients' dtype (else the default)
    if not grads:
        return Tensor(np.asarray(total, get_default_dtype()))
    dtype = np.result_type(*[g.dtype for g in grads])
    return Tensor(np.asarray(total, dtype), device=backend.device_of(grads[0]))


def clip_grad_value_(parameters, clip_value, foreach=None):
    r"""Clamp each gradient in place to [-clip_value, clip_value]
    (``nn.utils.clip_grad_value_``); NaN stays NaN. Returns None.

    Example:
        >>> nn.utils.clip_grad_value_(model.parameters(), 0.5)
    """
    check_number("clip_grad_value_", "clip_value", clip_value)
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:         # torch's clamp_min_(-v) then clamp_max_(v)
            data = p.grad._array
            data[...] = p.grad.xp.minimum(p.grad.xp.maximum(data, -clip_value), clip_value)
            p.grad._bump_version()


def _check_same_device(parameters):
    devices = {p.device for p in parameters}
    if len(devices) > 1:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")


def parameters_to_vector(parameters):
    """The parameters flattened and joined into one 1-D tensor
    (``nn.utils.parameters_to_vector``), in the graph: its gradient flows back to them.

    Example:
        >>> vec = nn.utils.parameters_to_vector(model.parameters())   # (num_params,)
    """
    parameters = _as_list(parameters)
    _check_same_device(parameters)
    if not parameters:
        raise ValueError("parameters_to_vector: expected a non-empty list of Tensors")
    return ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Each parameter's ``.data`` set to its slice of ``vec``, in order, as a view of
    ``vec`` (``nn.utils.vector_to_parameters``: the parameters then share vec's memory and
    take its dtype, as torch's). Returns None.

    Example:
        >>> nn.utils.vector_to_parameters(vec, model.parameters())
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__module__}."
                        f"{type(vec).__name__}")
    parameters = _as_list(parameters)
    _check_same_device(parameters)
    pointer = 0
    for param in parameters:
        count = param.numel()
        if pointer + count > vec.numel():
            raise RuntimeError(f"vector_to_parameters: vec has {vec.numel()} elements, fewer "
                               f"than the parameters' {sum(p.numel() for p in parameters)}")
        param.data = vec.detach()[pointer:pointer + count].reshape(param.shape)
        pointer += count
