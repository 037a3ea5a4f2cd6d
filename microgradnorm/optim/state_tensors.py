"""An optimizer's per-parameter state as torch keeps it: Tensors (``exp_avg``, ``sum``, ...),
a 0-d ``step`` Tensor in torch's scalar dtype (float32, float64 where that is the default
dtype), NAdam's and ASGD's numbers as 0-d Tensors. Each Tensor holds the array the update
reads and writes, so what a user holds (``opt.state[p]["exp_avg"]``, a state dict's entry)
follows the steps, as torch's do.

The updates themselves run on arrays: ``as_arrays`` gives an update the arrays of an entry
(the step as an int), and ``store`` writes what it returned back into the entry's Tensors,
in place where the shapes and dtypes agree (a Tensor someone holds sees the new values).
``loaded_value`` makes a saved entry (``load_state_dict``) one of the parameter's: the saved
Tensor itself where it already has the dtype and device, else a copy, as torch 2.13 loads it.
"""

import numbers

import numpy as np

from .. import backend
from ..dtypes import get_default_dtype, is_half, is_numeric
from ..tensor import Tensor

__all__ = ["advance", "as_arrays", "complex_update", "loaded_value", "rate_rounding",
           "scalar_dtype", "state_tensor", "step_count", "step_tensor", "store", "tensor_rate"]

_wrap = Tensor._from_op          # a constant Tensor of the array itself (no copy)


def scalar_dtype():
    """torch's dtype for an optimizer's per-parameter numbers (``_get_scalar_dtype``): float64
    where that is the default dtype, else float32; their products round in it."""
    return np.dtype(np.float64) if get_default_dtype() == np.float64 else np.dtype(np.float32)


def state_tensor(array):
    """A state entry of ``array`` itself (its memory shared; a NumPy scalar, which an
    operation on 0-d arrays gives, as a 0-d array of it)."""
    return _wrap(np.array(array) if isinstance(array, np.generic) else array, None)


def step_tensor(count, dtype=None):
    """A step counter as torch's: a 0-d Tensor of ``count`` in the scalar dtype."""
    return _wrap(np.array(count, dtype or scalar_dtype()), None)


def advance(state):
    """Count one more step in an entry's ``step`` Tensor, in place (a number someone stored
    becomes one); returns the new count."""
    counter = state["step"]
    if type(counter) is not Tensor:
        counter = state["step"] = step_tensor(step_count(counter))
    step = int(counter._array) + 1
    counter._array[()] = step
    return step


def step_count(value):
    """The number of steps an entry's ``step`` holds (a Tensor, an array or a number)."""
    if type(value) is Tensor:                    # the common case: a 0-d array of a count
        return int(value._array)
    array = value._array if isinstance(value, Tensor) else value
    return int(array) if isinstance(array, numbers.Integral) else int(float(array))


def as_arrays(entries):
    """The arrays of a state entry, for an update: Tensors as their arrays, ``step`` as an
    int."""
    arrays = {key: value._array if isinstance(value, Tensor) else value
              for key, value in entries.items()}
    if "step" in arrays:
        arrays["step"] = step_count(entries["step"])
    return arrays


def store(entries, arrays, int_step=False, avoid=()):
    """The entry ``entries`` (Tensors) updated in place to an update's ``arrays``: each
    Tensor of the same shape and dtype takes its new values (the new array itself where the
    update made it, a copy where it is a view or one whose ``id`` is in ``avoid``: the
    parameter's and gradient's arrays), else a new Tensor holds a copy; ``step`` as torch's
    0-d Tensor (``int_step``: an int). The dict itself is kept, as a user may hold it;
    returned."""
    for key, value in arrays.items():
        held = entries.get(key)
        if type(held) is Tensor:                 # the common cases first: per step
            array = held._array
            if key == "step":
                if not int_step and type(value) is int and array.ndim == 0:
                    array[()] = value
                    continue
            elif type(value) is np.ndarray and value.shape == array.shape \
                    and value.dtype == array.dtype:
                if value is not array:
                    if value.base is None and id(value) not in avoid:
                        held._array = value      # an array of the update's own: taken
                    else:
                        array[...] = value
                continue
        entries[key] = _new_entry(key, value, int_step)
    if len(entries) > len(arrays):               # a key the update dropped
        for key in [key for key in entries if key not in arrays]:
            del entries[key]
    return entries


def _new_entry(key, value, int_step):
    # a state value without a Tensor of its shape and dtype to take it
    if key == "step" and isinstance(value, numbers.Integral):
        return int(value) if int_step else step_tensor(value)
    if isinstance(value, Tensor) or not hasattr(value, "shape"):
        return value                             # numbers, lists: as the update left them
    return _wrap(np.array(value) if isinstance(value, np.generic) else value.copy(), None)


def _same(value):
    return value


def rate_rounding(group):
    """How torch rounds what it computes from a group's rate: a Tensor rate (``step`` gives
    the group its dtype, ``lr_dtype``) makes each product and quotient with it a Tensor of its
    dtype, so each is rounded to it (float32: to 24 bits); a number rate rounds nothing."""
    dtype = group.get("lr_dtype")
    if dtype is None:
        return _same
    return lambda value: float(dtype(value))


def tensor_rate(param, lr, weight_decay, beta1_power, group, dtype):
    """Adam's rate and weight decay where the group's rate is a Tensor of ``dtype``."""
    # torch's Adam with a Tensor rate computes the step size lr/(1-β1^t) and AdamW's decay
    # 1 - lr·λ as Tensors of the rate's dtype: both rounded to it. The decay is applied
    # here; the rate returned gives the kernel that step size (to a float64 ulp)
    bias_correction1 = 1 - beta1_power
    step_size = float(dtype(dtype(lr) / dtype(bias_correction1)))
    if group["decoupled_weight_decay"] and weight_decay:
        param *= float(dtype(1 - dtype(dtype(lr) * dtype(weight_decay))))
        weight_decay = 0.0
    return step_size * bias_correction1, weight_decay


def loaded_value(optimizer, index, key, value, param, own=False, float32_step=False):
    """A saved state entry (``load_state_dict``) as the entry of ``param``: checked against it
    and copied onto its device and dtype as a state Tensor (the saved Tensor itself where it
    already has them, shared with the state dict), as torch loads it; ``own``: of an
    optimizer with its own ``step()``, loaded by torch's rule alone; ``float32_step``: the
    saved group is ``capturable`` or ``fused``, whose ``step`` torch loads as float32."""
    if own:
        return _own_value(key, value, param, float32_step)
    name = type(optimizer).__name__
    given = value if type(value) is Tensor else None
    value = value._array if isinstance(value, Tensor) else value
    if key == "step" and (isinstance(value, numbers.Number) or np.ndim(value) == 0):
        if not optimizer.tensor_step:
            return int(value)
        # torch keeps a saved step as it is: a float Tensor stays one of its dtype (the
        # Tensor itself, shared with the state dict, as torch 2.13's)
        dtype = np.dtype(np.float32) if float32_step else getattr(value, "dtype", None)
        if _shareable(given, dtype if dtype in (np.float32, np.float64) else None, ()):
            return given
        return step_tensor(float(value), dtype if dtype in (np.float32, np.float64) else None)
    if key in optimizer.scalar_state:         # a number: on the host, in its float dtype
        value = np.asarray(backend.to_numpy(value) if backend.is_cupy_array(value) else value)
        if value.shape != () or value.dtype.kind not in "iuf":
            raise ValueError(f"{name}.load_state_dict: state {key!r} of parameter {index} "
                             f"must be a number, got shape {value.shape} and dtype "
                             f"{value.dtype}")
        keep = value.dtype in (np.float32, np.float64)
        if keep and _shareable(given, value.dtype, ()):
            return given
        return state_tensor(np.array(value, dtype=value.dtype if keep else scalar_dtype()))
    value = value if backend.is_cupy_array(value) else np.asarray(value)
    expected = optimizer._state_shape(key, param.shape)
    if tuple(value.shape) != expected or not is_numeric(value.dtype):
        raise ValueError(f"{name}.load_state_dict: state {key!r} of parameter {index} "
                         f"has shape {tuple(value.shape)} and dtype {value.dtype}, expected "
                         f"shape {expected} and a numeric dtype")
    # half-precision parameters keep float32 states (and float32 master copies)
    dtype = np.float32 if is_half(param.dtype) else param.dtype
    if _shareable(given, dtype, expected, param.device):
        return given          # torch 2.13 keeps a Tensor already of the dtype and device
    return state_tensor(backend.to_device(value, param.device).astype(dtype, copy=True))


def _shareable(given, dtype, shape, device=None):
    # a saved Tensor the loaded state may hold itself, as torch's ``Tensor.to`` returns it
    # unchanged: already of the dtype, shape and device, and writable (the updates write
    # into it, so the state dict follows the steps, as torch's does)
    if given is None or dtype is None:
        return False
    array = given._array
    return (array.dtype == dtype and array.shape == shape
            and (device is None or backend.device_of(array) == device)
            and getattr(array.flags, "writeable", True))


def _own_value(key, value, param, float32_step=False):
    # what a hand-written step() stored, loaded by torch's rule: every Tensor (an integer one
    # too) in a floating parameter's dtype and on its device, ``step`` as saved (float32 for
    # a capturable or fused group); the rest (numbers, lists, None) as saved
    if not isinstance(value, Tensor) or key == "step" and not float32_step:
        return value
    if key == "step":
        return value.to(dtype=np.float32, device=param.device)
    dtype = param.dtype if param.is_floating_point() else value.dtype
    return value.to(dtype=dtype, device=param.device)


def complex_update(update, param, grad, state):
    """``update(param, grad, state)`` on a complex parameter as torch runs it: the parameter,
    its gradient and every complex state array viewed as real arrays of shape
    ``shape + (2,)`` (``view_as_real``), so each real and imaginary part updates as a real
    number. The state ``update`` leaves is stored back as complex arrays (a state Tensor
    kept, its memory the same where the update wrote into the view); returns the new
    complex value of the parameter (``param`` itself where the update wrote into it)."""
    viewed, real = {}, {}
    for key, value in state.items():
        array = value._array if type(value) is Tensor else value
        if getattr(array, "dtype", None) is not None and array.dtype.kind == "c":
            view = _real_view(array)
            viewed[key] = view if array.flags.c_contiguous else None   # a copy: stored back
            real[key] = _wrap(view, None) if type(value) is Tensor else view
        else:
            real[key] = value
    param_view = _real_view(param)
    new = update(param_view, _real_view(grad), real)
    shape = param.shape + (2,)
    for key in [key for key in state if key not in real]:
        del state[key]
    for key, value in real.items():
        array = value._array if type(value) is Tensor else value
        if getattr(array, "shape", None) != shape or (key in viewed and array is viewed[key]):
            if key not in viewed:                # numbers, steps: as the update left them
                state[key] = value
            continue                             # written into the complex array's view
        held = state.get(key)
        if type(held) is Tensor:                 # kept: whoever holds it sees the values
            held._array = _complex_of(array, param.dtype)
        elif type(value) is Tensor:
            state[key] = _wrap(_complex_of(array, param.dtype), None)
        else:
            state[key] = _complex_of(array, param.dtype)
    if new is param_view and param.flags.c_contiguous:
        return param
    return _complex_of(new, param.dtype)


def _real_view(array):
    # ``view_as_real``: the memory itself where the array is contiguous (a 0-d one too,
    # whose dtype NumPy cannot change without a dimension to widen)
    if not array.flags.c_contiguous:
        array = array.copy()
    return array.reshape(array.shape + (1,)).view(array.real.dtype)


def _complex_of(array, dtype):
    # a real array of shape ``shape + (2,)`` as the complex array of ``shape``
    xp = backend.array_module(array)
    array = xp.ascontiguousarray(array, dtype=np.dtype(dtype).type(0).real.dtype)
    return array.view(dtype).reshape(array.shape[:-1])
