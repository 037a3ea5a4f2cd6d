"""Reading a file that ``torch.save`` wrote (its zip format: ``<name>/data.pkl``, the pickled
structure, and ``<name>/data/<key>``, each storage's raw bytes) for ``mg.load``, as torch's
``weights_only=True`` load reads it: the pickle is read by an unpickler that rebuilds only
containers, numbers, strings, Tensors, Parameters, ``Size``, dtypes and devices; any other
global in the file is a ValueError naming it, and nothing else runs. Tensors that view one
storage come back sharing one array, as torch's."""

import collections
import io
import os
import pickle
import struct
import zipfile
import zlib

import numpy as np

from .. import backend, dtypes
from ..savefile import available_memory
from ..tensor import Size, Tensor
from .parameter import Parameter

# torch's storage classes -> the dtype of their elements (bfloat16 from ml_dtypes)
_STORAGES = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
             "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
             "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
             "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
             "ComplexDoubleStorage": "complex128", "UntypedStorage": "uint8"}
_DTYPES = {"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "bool", "complex64", "complex128", "float", "double", "half", "long",
           "int", "short"}


def is_torch_file(f):
    """True where ``f`` (a path or a seekable binary file object, left where it was) is a
    zip with a ``data.pkl`` member: a file ``torch.save`` wrote.

    Example:
        >>> is_torch_file("model.pt")
        True
    """
    try:
        if isinstance(f, (str, bytes, os.PathLike)):
            f = os.fsdecode(f)
            if not os.path.isfile(f) or not zipfile.is_zipfile(f):
                return False
            with zipfile.ZipFile(f) as archive:
                return _pickle_name(archive) is not None
        if not (callable(getattr(f, "seekable", None)) and f.seekable()):
            return False
        start = f.tell()
        try:
            with zipfile.ZipFile(f) as archive:
                return _pickle_name(archive) is not None
        finally:
            f.seek(start)
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


def _pickle_name(archive):
    names = [n for n in archive.namelist() if n == "data.pkl" or n.endswith("/data.pkl")]
    return names[0] if len(names) == 1 else None


def load(f, where, place):
    """The object of the torch file ``f``, its Tensors put where ``place`` (``mg.load``'s
    resolved ``map_location``) says; a ValueError naming ``where`` and the file for a global
    that is not data, a missing storage or a damaged archive.

    Example:
        >>> load("model.pt", "mg.load", placement)["weight"].shape
    """
    label = os.fsdecode(f) if isinstance(f, (str, bytes, os.PathLike)) else \
        f"the {type(f).__name__}"
    if isinstance(f, (str, bytes, os.PathLike)):
        f = os.fsdecode(f)
    try:
        with zipfile.ZipFile(f) as archive:
            name = _pickle_name(archive)
            infos = archive.infolist()
            total, available = sum(info.file_size for info in infos), available_memory()
            if available is not None and total > available:   # a zip bomb: refused unread
                raise ValueError(f"{where}: {label}: its members unpack to {total:,} bytes, "
                                 f"more than the {available:,} bytes of memory available")
            prefix = name[:-len("data.pkl")]
            order = prefix + "byteorder"
            big = order in archive.namelist() and archive.read(order).strip() == b"big"
            unpickler = _Unpickler(io.BytesIO(archive.read(name)), archive, prefix, big,
                                   where, label, place)
            return unpickler.load()
    except (ValueError, TypeError) as error:
        if str(error).startswith(f"{where}:"):        # refused, named (or map_location's)
            raise
        raise ValueError(f"{where}: {label}: a damaged torch file ({error})") from None
    except (zipfile.BadZipFile, EOFError, pickle.UnpicklingError, KeyError, AttributeError,
            IndexError, zlib.error, struct.error, OverflowError, RuntimeError,
            NotImplementedError) as error:              # a malformed pickle or archive
        raise ValueError(f"{where}: {label}: a damaged torch file ({error})") from None


class _Storage:
    """One storage of the file: its elements as a flat array, read once."""

    def __init__(self, array, key, location):
        self.array, self.key, self.location = array, key, location


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, archive, prefix, big, where, label, place):
        super().__init__(file)
        self.archive, self.prefix, self.big = archive, prefix, big
        self.where, self.label, self.place = where, label, place
        self.storages = {}

    def fail(self, why):
        return ValueError(f"{self.where}: {self.label}: {why}")

    def find_class(self, module, name):
        if module == "collections" and name in ("OrderedDict", "Counter"):
            return getattr(collections, name)
        if module == "builtins" and name in ("set", "frozenset", "complex", "slice"):
            return {"set": set, "frozenset": frozenset, "complex": complex,
                    "slice": slice}[name]
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_parameter",
                                                 "_rebuild_parameter_with_state"):
            return getattr(self, name)
        if module == "torch._tensor" and name == "_rebuild_from_type_v2":
            return lambda func, new_type, args, state: func(*args)
        if module == "torch":
            if name in _STORAGES:
                return _STORAGES[name]
            if name == "Size":
                return Size
            if name == "device":
                return backend.Device
            if name in _DTYPES:                           # torch.float32: mg.float32
                return dtypes.torch_dtype(dtypes.as_dtype(
                    {"float": "float32", "double": "float64", "half": "float16",
                     "long": "int64", "int": "int32", "short": "int16"}.get(name, name)))
        raise self.fail(f"holds the global {module}.{name}, which a weights-only load does "
                        "not rebuild (only tensors, containers and plain values)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise self.fail(f"holds a persistent id {pid!r:.60} that is no storage")
        _, dtype_name, key, location, numel = pid
        if key not in self.storages:
            dtype = dtypes.as_dtype(dtype_name)
            info = self.archive.getinfo(f"{self.prefix}data/{key}")
            if not (isinstance(numel, int) and 0 <= numel * dtype.itemsize <= info.file_size):
                raise self.fail(f"its storage {key} holds {info.file_size} bytes, fewer than "
                                f"{numel} {dtype} elements")     # checked before reading
            stored = dtype.newbyteorder(">") if self.big and dtype.itemsize > 1 else dtype
            array = np.frombuffer(self.archive.read(info), stored, count=numel).astype(dtype)
            self.storages[key] = _Storage(array, key,
                                          str(location).split(":")[0])
        return self.storages[key]

    def _rebuild_tensor_v2(self, storage, offset, size, stride, requires_grad,
                           backward_hooks=None, metadata=None):
        array = storage.array
        size, stride = tuple(size), tuple(stride)
        extent = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 \
            if all(size) else offset
        if offset < 0 or extent > array.size or min(stride, default=0) < 0:
            raise self.fail(f"holds a tensor of size {list(size)} that reads past its "
                            f"storage of {array.size} elements")
        view = np.lib.stride_tricks.as_strided(
            array[offset:], size, [s * array.itemsize for s in stride])
        key = (storage.key, offset, size, stride)
        device = "cuda" if storage.location == "cuda" else "cpu"
        return self.place.tensor(view, device, key, bool(requires_grad), False, self.where)

    def _rebuild_parameter(self, data, requires_grad, backward_hooks):
        return Parameter(data, requires_grad=requires_grad) if isinstance(data, Tensor) \
            else data

    def _rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        return self._rebuild_parameter(data, requires_grad, backward_hooks)
