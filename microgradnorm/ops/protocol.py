"""A tensor in Python's and NumPy's protocols as torch's: ``copy.deepcopy`` (a leaf only; views
of one memory stay views of one copied memory), NumPy's ufuncs (``np.exp(t)`` is a Tensor),
``apply_``/``map_`` (a Python function per element, in place), and torch's legacy type classes
(``mg.FloatTensor(2, 3)``, ``isinstance(t, mg.LongTensor)``, ``t.type(mg.DoubleTensor)``).
``METHODS`` names what ``ops/methods.py`` binds as ``Tensor`` methods."""

import copy
import numbers

import numpy as np

from .. import dtypes, tensor_data
from ..meta_arrays import is_meta_array
from ..autograd import views
from ..autograd.inference import new_counter
from ..tensor import Size, Tensor
from .legacy_storages import wrapping_tensor
from .storage import TypedStorage, _place

__all__ = ["LEGACY_TYPES", "LegacyType", "apply_", "map_"]

METHODS = ("apply_", "map_", "__deepcopy__", "__reduce_ex__", "__array_wrap__")

# the fields every Tensor has (``Tensor._from_op``) or gets as a view or by writes: a deep
# copy makes its own; the rest of ``__dict__`` (a Parameter's, a user's) is deep-copied
_OWN_FIELDS = {"_array", "_grad", "_requires_grad", "grad_fn", "_output_index",
               "_version_box", "_retains_grad", "_base", "_view_version", "_history"}
_HOOKS = {"_hooks", "_post_accumulate_hooks"}      # every copy drops them, as torch's


def _copied_array(array, memo):
    """A copy of ``array`` that shares memory with the copies of other views of its memory
    made in the same deepcopy (``memo``), as torch copies a storage once."""
    place = _place(array) if isinstance(array, np.ndarray) and \
        not is_meta_array(array) else None
    if place is None:                 # no one block of host memory (a meta array's: none)
        return array.copy()
    root, flat, start, _ = place
    key = ("storage", id(root))
    if key not in memo:               # the bytes, which views of other dtypes share too
        memo[key] = (root, flat.view(np.uint8).copy())  # the root alive while its id is a key
    copied = np.ndarray(array.shape, array.dtype, buffer=memo[key][1],
                        offset=start * array.itemsize, strides=array.strides)
    copied.flags.writeable = array.flags.writeable      # an expanded view stays read-only
    return copied


def __deepcopy__(self, memo):
    """``copy.deepcopy(t)``: a leaf with its own memory (views of one memory deep-copied
    together still share theirs), ``requires_grad``, a deep copy of ``.grad`` and of the
    other attributes, no hooks, ``_version`` 1 (a Parameter's: 0), as torch's; torch's
    RuntimeError for a tensor an op made."""
    if self.grad_fn is not None:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                           "support the deepcopy protocol at the moment")
    if id(self) in memo:
        return memo[id(self)]
    new = type(self).__new__(type(self))
    memo[id(self)] = new
    new.__dict__.update(copy.deepcopy({name: value for name, value in vars(self).items()
                                       if name not in _OWN_FIELDS and name not in _HOOKS},
                                      memo))
    new._array = _copied_array(self._array, memo)
    new._grad = copy.deepcopy(self._grad, memo)
    new._requires_grad, new.grad_fn, new._output_index = self._requires_grad, None, 0
    new._version_box, new._retains_grad = new_counter(), False     # (inference_mode's)
    new._bump_version()         # torch's copy is an empty tensor that a set_ fills: version 1
    return new


def __reduce_ex__(self, protocol):
    """What ``pickle`` and ``copy.copy`` rebuild, as torch's: a leaf of the same class over
    the data (``copy.copy``: the same memory), ``requires_grad`` and the other attributes
    kept; no ``.grad``, no node, no hooks."""
    state = {name: value for name, value in vars(self).items()
             if name not in _OWN_FIELDS and name not in _HOOKS}
    return _rebuilt, (type(self), self._array, bool(self._requires_grad), state)


def _rebuilt(cls, array, requires_grad, state):
    tensor = cls.__new__(cls)
    vars(tensor).update(vars(Tensor._leaf("pickle", array, requires_grad)))
    vars(tensor).update(state)
    return tensor


def __array_wrap__(self, array, context=None, return_scalar=False):
    """A NumPy ufunc of tensors (``np.exp(t)``, ``np.add(t, 1)``): a Tensor sharing the
    result, 0-d included; torch's RuntimeError where an input requires grad (NumPy passes
    ``context``: the ufunc, its inputs, the output's index). A bool result (``np.isnan(t)``)
    stays bool, so that ``t[np.isnan(t)]`` is a mask: torch 2.13 gives uint8, which its
    indexing reads as a mask under a deprecation warning and its index writes refuse."""
    if context is not None and any(isinstance(arg, Tensor) and arg._requires_grad
                                   for arg in context[1]):
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    return Tensor._from_op(np.asarray(array), None)


def _check_plain(fn, tensor):
    if tensor._requires_grad:
        raise RuntimeError(f"Can't call {fn}() on Variable that requires grad. Use "
                           f"var.detach().{fn}() instead.")
    if tensor.device != "cpu":
        raise TypeError(f"{fn}_ is only implemented on CPU tensors")


def _type_name(value):
    # as torch names a type in its TypeErrors: "float", "numpy.float32"
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def _number(value, dtype):
    """``value`` if torch's ``apply_``/``map_`` writes it into ``dtype``, else its TypeError:
    a real number (``__float__`` or ``__index__``; a complex dtype: ``__complex__`` too) for
    a floating or complex dtype; an int, a float or an ``__index__`` for an integer one
    (bool: a complex, NumPy's bool too)."""
    kind = type(value)
    if dtypes.is_floating(dtype) or dtypes.is_complex(dtype):
        if isinstance(value, (str, bytes)) or not (
                hasattr(kind, "__float__") or hasattr(kind, "__index__")
                or dtypes.is_complex(dtype) and hasattr(kind, "__complex__")):
            raise TypeError(f"must be real number, not {_type_name(value)}")
        return value
    if isinstance(value, (int, float)) or dtype == np.bool_ and isinstance(
            value, (complex, np.bool_)):
        return value
    if not hasattr(kind, "__index__"):
        raise TypeError(f"'{_type_name(value)}' object cannot be interpreted as an integer")
    return value.__index__()            # (a non-integer tensor's TypeError, as torch's)


def _write(tensor, values):
    # the Python numbers written back in the tensor's dtype as torch.tensor converts them
    # (-1 wraps into uint8, 1.5 is 1); one the dtype cannot hold is torch's error: a
    # ValueError past int64, a RuntimeError past a narrower dtype (NaN, 255.5 for uint8 too)
    values = [_number(value, tensor.dtype) for value in values]
    if tensor.dtype.kind in "iu":
        if any(isinstance(value, int) and not -2**63 <= value < 2**63 for value in values):
            raise ValueError(f"value cannot be converted to type {tensor.dtype} without "
                             "overflow")
        values = tensor_data.converted_ints(values, tensor.dtype)
    with np.errstate(over="ignore"):            # 1e300 into float32: inf, silently
        array = np.asarray(values, dtype=tensor.dtype)
    tensor[...] = array.reshape(tensor._array.shape)
    return tensor


def apply_(self, callable):
    """In place: each element replaced by ``callable(element)`` (a Python number), as
    torch's ``Tensor.apply_``; slow, CPU only, refused for a tensor that requires grad.

    Example:
        >>> mg.tensor([1, 2]).apply_(lambda v: v * 10)          # tensor([10, 20])
    """
    _check_plain("apply_", self)
    return _write(self, [callable(value) for value in self._array.reshape(-1).tolist()])


def map_(self, tensor, callable):
    """In place: each element replaced by ``callable(element, other)``, ``other`` the
    element of ``tensor`` broadcast to this shape, as torch's ``Tensor.map_``.

    Example:
        >>> mg.tensor([1, 2]).map_(mg.tensor([3, 4]), lambda a, b: a * b)   # tensor([3, 8])
    """
    _check_plain("map_", self)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"map_(): argument 'other' (position 1) must be Tensor, not "
                        f"{_type_name(tensor)}")
    if tensor.dtype != self.dtype:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {tensor.type()})")
    # expanded to this shape (a shape it does not expand to: torch's RuntimeError)
    other = np.asarray(tensor.detach().expand(self.shape)._array)
    return _write(self, [callable(a, b) for a, b in zip(self._array.reshape(-1).tolist(),
                                                        other.reshape(-1).tolist())])


class LegacyType(type):
    """torch's ``FloatTensor``, ... : a class that makes tensors of its dtype and that the
    CPU tensors of that dtype are instances of."""

    def __instancecheck__(cls, instance):
        return (isinstance(instance, Tensor) and instance.device == "cpu"
                and instance.dtype == cls.dtype)

    def __call__(cls, *args, device=None):
        # mg.FloatTensor(2, 3): uninitialised (zeros here); (data): its values (an array of
        # the class's dtype shared, a tensor aliased, as torch's); (): (0,)
        if device not in (None, "cpu"):
            raise RuntimeError(f"legacy constructor expects device type: cpu but device "
                               f"type: {device} was passed")
        dtypes.as_dtype(cls.dtype)        # BFloat16Tensor without ml_dtypes: says what to install
        if all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in args):
            for n in args:
                if n < 0:
                    raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                                       f"{[int(n) for n in args]}")
            return Tensor(np.zeros(args if args else (0,), cls.dtype), dtype=cls.dtype)
        if len(args) != 1:
            raise TypeError(f"{cls.__name__}(): expected sizes or one sequence of data")
        data = args[0]
        if isinstance(data, (numbers.Number, np.generic)):    # 2.5, True: no sequence
            raise TypeError(f"new(): data must be a sequence (got {_type_name(data)})")
        if isinstance(data, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{_type_name(data)}'")
        if isinstance(data, Tensor):
            if data.dtype != cls.dtype:
                raise TypeError(f"expected {cls.dtype} (got {data.dtype})")
            return views.alias(data)        # torch's alias: the same memory, in the graph
        if isinstance(data, Size):
            return Tensor(np.zeros(data, cls.dtype), dtype=cls.dtype)
        if isinstance(data, TypedStorage):      # FloatTensor(storage): its memory, shared
            return wrapping_tensor(data, cls.dtype,
                                   lambda array: Tensor._leaf(cls.__name__, array, False))
        if data.__class__ is np.ndarray and data.dtype == cls.dtype and data.flags.writeable:
            tensor_data.legacy_data(data, ())    # a negative stride: torch's ValueError
            return Tensor._leaf(cls.__name__, data, False)     # shared, as torch.from_numpy
        return Tensor(data, dtype=cls.dtype)


# the classes by name, as torch's top level holds them: FloatTensor, LongTensor, ...; without
# ml_dtypes, BFloat16Tensor holds the dtype's name and calling it says what to install
_LEGACY_DTYPES = {"BFloat16Tensor": "bfloat16", **{
    name: dtype for dtype, name in dtypes.TENSOR_TYPES.items() if dtype.kind != "c"}}
LEGACY_TYPES = {name: LegacyType(name, (), {
    "dtype": dtype, "__module__": "microgradnorm",
    "__doc__": f"torch's legacy {name}: {name}(2, 3) is a {dtype} tensor of that shape, "
               f"{name}([1, 2]) of those values; every CPU {dtype} tensor is an instance."})
    for name, dtype in _LEGACY_DTYPES.items()}
