"""Utilities on modules and parameters, ``torch.nn.utils``'s: gradient clipping
(``clip_grad_norm_`` = ``get_total_norm`` + ``clip_grads_with_norm_``, ``clip_grad_value_``),
``parameters_to_vector`` and ``vector_to_parameters``; save and load (``mg.save`` and
``mg.load``, whose one home is ``nn.serialization``); ``nn.utils.rnn``, the padded and
packed sequences of the recurrent layers (``nn/rnn_utils.py``); weight and spectral
normalization, the hook forms (``nn/weight_norm.py``, ``nn/spectral_norm.py``) and
``nn.utils.parametrize`` / ``nn.utils.parametrizations`` (``nn/parametrize.py``,
``nn/parametrizations.py``); ``nn.utils.prune``, pruning through masks (``nn/prune.py``)."""

import inspect
import math
import sys
import types
import warnings

import numpy as np

from .. import backend, ops, random
from ..dtypes import (accumulation_dtype, check_number, get_default_dtype, is_complex,
                      is_floating, real_of)
from ..ops.vector_norm import p_norm
from ..tensor import Tensor
from . import fusion, parametrizations, parametrize, prune, stateless
from . import rnn_utils as rnn
from .conv import Conv2d, Conv3d
from .conv_more import ConvTranspose2d, ConvTranspose3d
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                     fuse_linear_bn_weights)
from .module import Module
from .serialization import load, save
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

# ``from torch.nn.utils.rnn import pad_sequence`` reads here as microgradnorm.nn.utils.rnn
sys.modules[__name__ + ".rnn"] = rnn
sys.modules[__name__ + ".parametrize"] = parametrize
sys.modules[__name__ + ".parametrizations"] = parametrizations
sys.modules[__name__ + ".stateless"] = stateless
sys.modules[__name__ + ".fusion"] = fusion
sys.modules[__name__ + ".prune"] = prune

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "load", "parameters_to_vector", "rnn", "save", "vector_to_parameters",
           "parametrizations", "parametrize", "remove_spectral_norm", "remove_weight_norm",
           "spectral_norm", "weight_norm", "clip_grad_norm", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "fusion",
           "skip_init", "stateless", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format", "prune"]


def _as_list(parameters):
    # a Tensor or an iterable, as a list: a generator would be used up by a first pass
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    r"""Scale the gradients in place by :math:`\min(1, \text{max\_norm} / (n + 10^{-6}))`,
    n their joint ``norm_type``-norm; returns n before clipping, as torch's: a 0-d Tensor in
    the gradients' dtype and on their device. ``get_total_norm`` of the gradients, then
    ``clip_grads_with_norm_``, as torch's.

    ``norm_type``, ``max_norm``: a real number, a one-element Tensor or a string of a number
    (``'inf'``), what torch's ``float()`` takes. Empty gradients count as norm 0, except
    for the orders without an identity (negative, ±inf): a RuntimeError, as torch's.
    ``error_if_nonfinite``: raise a RuntimeError for a NaN or infinite n, changing nothing.
    ``foreach``: accepted for torch's signature; one implementation serves both.

    Example:
        >>> norm = nn.clip_grad_norm_(model.parameters(), 1.0); print(f"{norm:.4f}")
    """
    max_norm = _real("clip_grad_norm_", "max_norm", max_norm)
    norm_type = _real("clip_grad_norm_", "norm_type", norm_type)
    generator = isinstance(parameters, types.GeneratorType)
    parameters = _as_list(parameters)
    if generator and not parameters:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                      stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = _total_norm("clip_grad_norm_", grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """``clip_grad_norm_`` under its old name (``nn.utils.clip_grad_norm``), after torch's
    FutureWarning that it is deprecated.

    Example:
        >>> norm = nn.utils.clip_grad_norm(model.parameters(), 1.0)     # FutureWarning
    """
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` without its initial draws (``nn.utils.skip_init``):
    built as usual, then ``to_empty(device=...)`` (the ``device`` keyword, "cpu" by
    default), so its parameters and buffers hold zeros here (torch's: uninitialised
    values); the default generator is left as it was. ``module_cls`` must take ``device``.

    Example:
        >>> fc = nn.utils.skip_init(nn.Linear, 6, 1)                # then load its values
    """
    if not issubclass(module_cls, Module):            # a TypeError for a non-class, as torch
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    with random.fork_rng():                           # torch builds it on "meta": no draws
        return module_cls(*args, **kwargs).to_empty(device=device)


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lay out the weight of every ``nn.Conv2d`` and ``nn.ConvTranspose2d`` in ``module``
    (itself included) in ``memory_format`` (``mg.channels_last``: (O, kH, kW, I) in memory),
    in place, keeping the Parameter objects (``nn.utils.convert_conv2d_weight_memory_format``);
    returns ``module``. Values and results are unchanged.

    Example:
        >>> nn.utils.convert_conv2d_weight_memory_format(model, mg.channels_last)
    """
    return _convert_weights(module, (Conv2d, ConvTranspose2d), memory_format)


def convert_conv3d_weight_memory_format(module, memory_format):
    """``convert_conv2d_weight_memory_format`` for ``nn.Conv3d`` and ``nn.ConvTranspose3d``
    (``mg.channels_last_3d``: (O, kD, kH, kW, I) in memory).

    Example:
        >>> nn.utils.convert_conv3d_weight_memory_format(model, mg.channels_last_3d)
    """
    return _convert_weights(module, (Conv3d, ConvTranspose3d), memory_format)


def _convert_weights(module, kinds, memory_format):
    for layer in module.modules():
        if isinstance(layer, kinds):
            layer.weight.data = layer.weight.detach().clone(memory_format=memory_format)
    return module


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    r"""The ``norm_type``-norm of the tensors' norms (``nn.utils.get_total_norm``): their
    norm as one vector, but for order 0, where it counts the tensors holding a nonzero, as
    torch's. A 0-d Tensor in their dtype (0 of the default dtype for none).

    Example:
        >>> norm = nn.utils.get_total_norm([p.grad for p in model.parameters()])
    """
    norm_type = _real("get_total_norm", "norm_type", norm_type)
    return _total_norm("get_total_norm", _as_list(tensors), norm_type, error_if_nonfinite)


def _real(fn, name, value):
    # what torch's float(value) takes: a real number, a one-element real Tensor, or a string
    # of a number ("inf", as torch documents for norm_type)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"{fn}: {name} must be a number or a string of one (such as "
                             f"'inf'), got {value!r}") from None
    if isinstance(value, Tensor) and value.numel() == 1 and not is_complex(value.dtype):
        return float(value.item())
    check_number(fn, name, value)
    return value


def _total_norm(fn, tensors, norm_type, error_if_nonfinite):
    for t in tensors:
        if not (is_floating(t.dtype) or is_complex(t.dtype)):
            raise RuntimeError(f"{fn}: expected floating point or complex tensors, as "
                               f"linalg.vector_norm, got {t.dtype}")
    if (norm_type < 0 or norm_type == math.inf) and any(not t.numel() for t in tensors):
        raise RuntimeError(f"{fn}: cannot compute the {norm_type} norm of an empty gradient "
                           "(as linalg.vector_norm: the operation does not have an identity)")
    arrays = [t._array for t in tensors if t.numel()]
    if not arrays:
        return _norm_tensor(0.0, [t._array for t in tensors])
    norm_type = float(norm_type)
    # the norm of the per-tensor norms (the same number as one joint norm for every order
    # but 0), each torch.linalg.vector_norm's: half precision in float32, NaN wins at inf;
    # the outer one in the norms' joint dtype, as torch's norm of their stack
    dtype = real_of(np.result_type(*[a.dtype for a in arrays]))
    with backend.silent_floats():                   # 0 ** negative order: inf, as torch
        norms = np.array([float(p_norm(a, norm_type)) for a in arrays], dtype)
        total = float(p_norm(norms, norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"{fn}: The total norm of order {norm_type} for gradients from "
                           f"`parameters` is non-finite ({total}), so it cannot be clipped; set "
                           "error_if_nonfinite=False to scale by it anyway")
    return _norm_tensor(total, arrays)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    r"""Scale the gradients in place by :math:`\min(1, \text{max\_norm} / (n + 10^{-6}))`
    for a given total norm n (``nn.utils.clip_grads_with_norm_``), computed as torch's in
    n's dtype (the reciprocal of n + 10⁻⁶, times max_norm; each step of a half-precision n
    in float32, then rounded); NaN scales to NaN, an infinite n to 0.

    Example:
        >>> n = nn.utils.get_total_norm(grads); nn.utils.clip_grads_with_norm_(params, 1.0, n)
    """
    max_norm = _real("clip_grads_with_norm_", "max_norm", max_norm)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    total = backend.to_numpy(total_norm._array) if isinstance(total_norm, Tensor) else \
        np.asarray(float(total_norm))
    narrow, wide = total.dtype.type, accumulation_dtype(total.dtype).type
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # each step rounded to n's dtype; half precision beside a Python scalar computes in
        # float32 (torch's opmath), not in half
        shifted = narrow(wide(total) + wide(1e-6))
        coef = narrow(wide(narrow(1 / wide(shifted))) * wide(max_norm))
        scale = np.minimum(coef, narrow(1))                         # NaN stays NaN
        for grad in grads:                # inf · 0 = NaN: the intended result
            # torch's product of a tensor and a 0-d one: the scale in the gradient's dtype
            grad._array *= backend.to_device(scale.astype(grad.dtype), grad.device)
            grad._bump_version()


def _norm_tensor(total, grads):
    # the total norm as torch returns it: 0-d, the gradients' real dtype (else the default)
    if not grads:
        return Tensor(np.asarray(total, get_default_dtype()))
    dtype = real_of(np.result_type(*[g.dtype for g in grads]))
    return Tensor(np.asarray(total, dtype), dtype=dtype, device=backend.device_of(grads[0]))


def clip_grad_value_(parameters, clip_value, foreach=None):
    r"""Clamp each gradient in place to [-clip_value, clip_value]
    (``nn.utils.clip_grad_value_``); NaN stays NaN. Returns None.

    Example:
        >>> nn.utils.clip_grad_value_(model.parameters(), 0.5)
    """
    clip_value = float(_real("clip_grad_value_", "clip_value", clip_value))
    parameters = _as_list(parameters)
    if any(p.grad is not None and is_complex(p.grad.dtype) for p in parameters):
        raise NotImplementedError("clip_grad_value_: clamp is not supported for complex types")
    for p in parameters:
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
    Each is flattened by ``view(-1)``, as torch's: a RuntimeError for one whose strides
    allow no such view (a transposed or channels-last one).

    Example:
        >>> vec = nn.utils.parameters_to_vector(model.parameters())   # (num_params,)
    """
    parameters = _as_list(parameters)
    _check_same_device(parameters)
    if not parameters:
        raise ValueError("parameters_to_vector: expected a non-empty list of Tensors")
    return ops.cat([p.view(-1) for p in parameters])     # torch's view: strided ones refused


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
