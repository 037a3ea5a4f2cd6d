"""torch's legacy storage classes (``FloatStorage``, ``LongStorage``, ..., and ``Storage``,
``FloatStorage``'s old name): ``TypedStorage``s of one dtype, made from a size (zeros here;
torch's memory is uninitialised) or a sequence, with torch's deprecation warning, and
read by ``FloatTensor(storage)`` (the same memory). A tensor's ``storage()`` of that dtype is
an instance, and ``x.storage_type()`` is the class."""

import numbers

import numpy as np

from .. import dtypes
from .storage import TypedStorage, UntypedStorage, warn_typed_storage

# the class name's prefix and its dtype's name, as torch's top level holds them
_PREFIXES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
             "Long": "int64", "Int": "int32", "Short": "int16", "Char": "int8",
             "Byte": "uint8", "Bool": "bool", "ComplexFloat": "complex64",
             "ComplexDouble": "complex128"}


class _LegacyStorageType(type):
    """Every ``TypedStorage`` of the class's dtype is an instance, as torch's."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, TypedStorage) and instance.dtype == cls.dtype


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageType):
    """A ``TypedStorage`` of the class's dtype: ``(size)`` zeros, ``(sequence)`` its values
    rounded to the dtype, ``()`` empty, ``(wrap_storage=untyped)`` those bytes."""

    dtype = None

    def __init__(self, *args, wrap_storage=None):
        warn_typed_storage()
        dtype = dtypes.as_dtype(self.dtype)      # bfloat16 without ml_dtypes: what to install
        name = type(self).__name__
        if wrap_storage is not None:
            if args or not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"{name}(): wrap_storage must be an UntypedStorage, given "
                                f"alone")
            super().__init__(wrap_storage, dtype)
            return
        if len(args) > 1:
            raise TypeError(f"{name}(): expected no arguments, a size or a sequence, got "
                            f"{len(args)} arguments")
        data = args[0] if args else 0
        if isinstance(data, numbers.Integral) and not isinstance(data, bool):
            if data < 0:
                raise RuntimeError(f"{name}(): size must be non-negative, got {data}")
            array = np.zeros(int(data), dtype)
        elif isinstance(data, (list, tuple, range)):
            array = np.array(data, dtype=np.float64 if dtype.kind in "iub" else None)
            array = (np.trunc(array) if dtype.kind in "iu" else array).astype(dtype)
        else:
            raise TypeError(f"{name}(): expected a size (int) or a sequence of numbers, got "
                            f"{type(data).__name__}")
        super().__init__(UntypedStorage._of(array.reshape(-1)), dtype)


def _storage_class(prefix, dtype_name):
    name = f"{prefix}Storage"
    return _LegacyStorageType(name, (_LegacyStorage,), {
        # without ml_dtypes bfloat16's class holds the name, and making one says what to install
        "dtype": (dtypes.bfloat16 or dtype_name) if dtype_name == "bfloat16"
        else np.dtype(dtype_name), "__module__": "microgradnorm",
        "__doc__": f"torch's legacy {name}: a TypedStorage of {dtype_name}; {name}(3) three "
                   f"zeros, {name}([1, 2]) those values.\n\n    Example:\n"
                   f"        >>> mg.{name}(2).tolist()"})


STORAGES = {f"{prefix}Storage": _storage_class(prefix, name)
            for prefix, name in _PREFIXES.items()}


def wrapping_tensor(storage, dtype, make):
    """The tensor ``make(array)`` over a legacy storage's memory (``FloatTensor(storage)``),
    or torch's RuntimeError for a storage of another dtype."""
    if storage.dtype != dtype:
        raise RuntimeError(f"Expected a Storage of dtype {dtype} or an UntypedStorage, but got "
                           f"{storage.dtype} for argument 1 'storage'")
    return make(storage.untyped()._items(dtype))
