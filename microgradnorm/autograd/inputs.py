"""What ``Function.apply`` takes: tensors, numbers and arrays as constants, the arrays a
node keeps (checked or copied), and the views whose version counter an output shares; and
what ``backward`` and ``grad`` take: the outputs' gradients, checked (``_root_grad``), and
the gradients each node's backward returns, fitted to its inputs (``_fit``)."""

import numpy as np

from .. import dtypes
from ..backend import (CPU, META, DeviceError, array_module, device_of, is_cupy_array,
                       memory_owner)
from ..meta_arrays import takes_cpu_beside_meta
from .inference import DetachedVersions, InferenceVersions, refuse_saved


class _TensorType:
    """The ``Tensor`` class and ``as_tensor``, given by ``tensor.py`` when it is imported
    (``register_tensor``): autograd sits below the tensor and imports none of it."""

    Tensor = as_tensor = None


_tensor = _TensorType()


class GradientMismatchError(RuntimeError, ValueError):
    """Output gradients that do not match the outputs, in number or an output's shape:
    PyTorch's RuntimeError ("Mismatch in shape", "got 2 tensors and 1 gradients"), a
    ValueError too."""


class RequiresGradError(RuntimeError, TypeError):
    """``requires_grad=True`` asked of an integer or bool tensor: PyTorch's RuntimeError
    ("Only Tensors of floating point and complex dtype can require gradients"), a TypeError
    too."""


class GradientTypeError(RuntimeError, TypeError):
    """A value of the wrong kind given to ``grad`` or ``backward`` (an input that is not a
    Tensor, a complex gradient of a real output) or returned by a post-accumulate hook:
    PyTorch's RuntimeError, a TypeError too."""


def register_tensor(tensor_class, as_tensor):
    """Make ``tensor_class`` the type of the outputs ``Function.apply`` makes and the type
    the engine accepts, ``as_tensor(value, like)`` what turns numbers into constants."""
    _tensor.Tensor, _tensor.as_tensor = tensor_class, as_tensor


def _kept_constants(ctx, options, names, record):
    # The arrays a node keeps besides its inputs (an index, a mask, a target: the options
    # its Function names in ``kept_options``): a tensor is handed over as its array with
    # its version recorded, so that an in-place change before backward raises, as torch's;
    # an array or a list is copied, so that its owner may reuse it (the next micro-batch's
    # ids) without re-routing this node's gradient.
    Tensor = _tensor.Tensor
    options = dict(options)
    for name in names:
        value = options.get(name)
        if isinstance(value, tuple):
            options[name] = tuple([_kept(ctx, v, record, Tensor) for v in value])
        elif value is not None:
            options[name] = _kept(ctx, value, record, Tensor)
    return options


def _kept(ctx, value, record, Tensor):
    if isinstance(value, Tensor):
        if record:
            if value._version_box.__class__ is not list:    # an inference tensor: torch's
                refuse_saved()
            ctx._kept_versions += ((value._version_box, value._version_box[0], value.shape),)
        return value._array
    if record:
        if isinstance(value, np.ndarray) or is_cupy_array(value):
            return value.copy()
        if isinstance(value, list):
            return np.array(value)
    return value


def _refuse_stale_view(op_name, view):
    raise RuntimeError(
        f"{op_name}: an input (shape {view.shape}) is a view whose base was written in place "
        "after the view was made; its grad_fn no longer matches its values. Take the view "
        "again after the in-place op (or clone() it before).")


def _unpack(op_name, inputs):
    """(Tensors, their arrays, which require grad); numbers and arrays become constants like
    the first Tensor, None stays None; every array must be on one device."""
    Tensor = _tensor.Tensor
    arrays, needs_input_grad, kind = [], [], None
    for t in inputs:                      # the usual case: Tensors of one array type
        if type(t) is not Tensor and not isinstance(t, Tensor):        # (a Parameter is)
            return _unpack_mixed(op_name, inputs)
        data = t._array
        if type(data) is not kind:
            if kind is not None:
                return _unpack_mixed(op_name, inputs)
            kind = type(data)
        if t._view_version is not None and t._view_version != t._version_box[0]:
            return _unpack_mixed(op_name, inputs)     # a view whose base was written
        arrays += [data]                  # (+=, not append: no call, as counted in tests)
        needs_input_grad += [t._requires_grad]
    return inputs, arrays, tuple(needs_input_grad)


def _unpack_mixed(op_name, inputs):
    # None, numbers, arrays, or arrays of two types: the checked path
    Tensor = _tensor.Tensor
    like = next((t for t in inputs if isinstance(t, Tensor)), None)
    tensors = tuple(t if t is None or isinstance(t, Tensor) else _tensor.as_tensor(t, like)
                    for t in inputs)
    for t in tensors:                     # a view whose base was written: read it again
        if t is not None and t._view_version is not None \
                and t._view_version != t._version_box[0]:
            from .views import refreshed  # (views.py's nodes are Functions: imported late)
            refreshed(t)
    devices = {t.device for t in tensors if t is not None}
    if len(devices) > 1 and not (devices == {META, CPU}
                                 and takes_cpu_beside_meta(op_name, tensors)):
        shown = ", ".join(f"{t.device} {t.shape}" for t in tensors if t is not None)
        raise DeviceError(f"{op_name}: all inputs must be on one device, got {shown}")
    return (tensors, [None if t is None else t._array for t in tensors],
            tuple([t is not None and t._requires_grad for t in tensors]))


def _share_versions_with_bases(inputs, outputs):
    # A view output shares its input's version counter, as in PyTorch: an in-place change
    # through either one invalidates what was saved of both.
    for out in outputs:
        base = getattr(out._array, "base", None)
        if base is None:
            continue                  # most ops make new arrays: nothing to look up
        owner = memory_owner(base)
        for t in inputs:              # a loop, not a dict of owners: a fused norm's view of
            data = None if t is None else t._array
            if data is owner or (data is not None and data.base is not None
                                 and memory_owner(data) is owner):
                box = t._version_box      # its own output matches no input
                if box.__class__ is DetachedVersions:      # an inference tensor that takes
                    box = InferenceVersions([0])         # writes: its views do not (torch's)
                out._version_box = box
                out._view_version = box[0]      # a later write makes its grad_fn stale
                out._base = t if t._base is None else t._base     # (views.py writes through)


def _root_grad(root, grad, name, as_tensor=False):
    # name starts the messages: "grad(): grad_outputs[0]"; as_tensor (create_graph): a
    # Tensor given stays that Tensor, history and all
    if as_tensor and isinstance(grad, _tensor.Tensor):
        _root_grad(root, grad._array, name)
        return grad if grad.dtype == root.dtype else grad.to(root.dtype)
    data = root._array
    if type(grad) is type(data) and grad.dtype == data.dtype and grad.shape == data.shape:
        return grad                           # the usual case: an array like the output's
    if grad is None:
        if root.size != 1:
            raise RuntimeError(f"{name} can be omitted only for a one-element "
                               f"output, got shape {root.shape}")
        if root.dtype.kind == "c":
            raise RuntimeError(f"{name}: grad can be implicitly created only for real "
                               f"scalar outputs but got {root.dtype}")
        return root.xp.ones(root.shape, dtype=root.dtype)
    if isinstance(grad, (int, float, complex)):          # torch's: not a sequence of them
        raise TypeError(f"{name}: gradients can be either Tensors or None, but got "
                        f"{type(grad).__name__}")
    grad = grad._array if isinstance(grad, _tensor.Tensor) else grad
    if not hasattr(grad, "shape") or not hasattr(grad, "dtype"):     # a list, a number
        try:
            grad = root.xp.asarray(grad)
        except (ValueError, TypeError):
            grad = None
        if grad is None or not _is_real(grad.dtype):
            raise TypeError(f"{name} must be an array, a Tensor or nested lists "
                            f"of numbers of the output's shape {root.shape}")
    if grad.dtype.kind == "c" and root.dtype.kind != "c":
        raise GradientTypeError(f"{name} is complex ({grad.dtype}) but the output is "
                                f"real ({root.dtype}); the imaginary part would be dropped")
    if not _is_real(grad.dtype) and grad.dtype.kind != "c":
        raise TypeError(f"{name} must hold real numbers, got dtype {grad.dtype}")
    if tuple(grad.shape) != root.shape:
        raise GradientMismatchError(f"{name} has shape {tuple(grad.shape)}, expected the "
                                    f"output's shape {root.shape}")
    if device_of(grad) != root.device:
        raise ValueError(f"{name} is on {device_of(grad)}, the output on "
                         f"{root.device}")
    # a gradient has its tensor's dtype, rounded into it as torch's engine does
    return dtypes.half_through_float(grad, root.dtype).astype(root.dtype, copy=False)


def _is_real(dtype):
    return dtype.kind in "iub" or dtypes.is_floating(dtype)


def _zeros_for_missing(grads, outputs_meta):
    xp = array_module(next(g for g in grads if g is not None))
    return [g if g is not None else xp.zeros(shape, dtype=dtype)
            for g, (shape, dtype) in zip(grads, outputs_meta)]


def _fit(g, shape, dtype, node):
    # a gradient of an input of ``shape`` and ``dtype``: the engine's and a replay's check
    if g.shape != shape:
        g = _summed_to(g, shape, node)
    return g if g.dtype == dtype else dtypes.cast_gradient(g, dtype)


def _summed_to(g, shape, node):
    # a gradient of the input broadcast (torch's validate_outputs): summed back to ``shape``
    axes = _broadcast_axes(tuple(g.shape), tuple(shape), f"{node.name}.backward")
    return g.sum(axis=axes, keepdims=True).reshape(shape)


def _broadcast_axes(gshape, shape, name):
    """The axes of a gradient of shape ``gshape`` to sum for an input of ``shape`` that
    broadcasts to it, as torch's engine sums them; a RuntimeError where it does not."""
    lead = len(gshape) - len(shape)
    if lead < 0 or any(n != m and n != 1 for n, m in zip(shape, gshape[lead:])):
        raise RuntimeError(f"{name} returned a gradient of shape {gshape} for an input of "
                           f"shape {shape}")
    return tuple(range(lead)) + tuple(lead + i for i, (n, m)
                                      in enumerate(zip(shape, gshape[lead:])) if n != m)
