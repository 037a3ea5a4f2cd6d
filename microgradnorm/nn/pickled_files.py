"""``mg.save`` of what a data-only file cannot hold (a Module, an optimizer, a user's object,
a set, ...) and ``mg.load`` of it, as ``torch.save`` / ``torch.load`` do: the object is
pickled, and every Tensor and numeric NumPy array in it is stored apart, as an array member
of the same ``.npz`` that ``nn.serialization`` writes, referenced from the pickle by a
persistent id (``("tensor", n)`` or ``("ndarray", n)``: the n-th node of the structure
record). So tensors keep their memory sharing (tied weights, views) as torch's storages do,
and ``map_location`` places them.

The file: the array members, ``__pickle__`` (the pickle's bytes, uint8) and
``__structure__``, the JSON ``{"format": "microgradnorm.pickle", "version": 1, "pickle":
"__pickle__", "objects": [node, ...]}`` whose nodes are ``nn.serialization``'s tensor and
ndarray nodes. A ``weights_only=True`` load (the default) reads the pickle's globals without
running it and refuses the first one not allowed, as torch's: ``pickle.UnpicklingError``
naming it and ``weights_only=False``; ``weights_only=False`` unpickles, which runs the code
that the file names (load only files you trust).
"""

import _codecs
import _compat_pickle
import collections
import io
import pickle
import pickletools

import numpy as np

from .. import backend, dtypes
from ..tensor import Size, Tensor
from .module import _Table, _TreeTable

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

FORMAT = "microgradnorm.pickle"
VERSION = 1
PICKLE = "__pickle__"           # the member holding the pickle, as a uint8 array
_SAFE_GLOBALS = []


# ----- torch.serialization's allowlist of globals ------------------------------------------
def add_safe_globals(safe_globals):
    """Allow ``safe_globals`` in a ``weights_only=True`` load, as
    ``torch.serialization.add_safe_globals``: classes and functions, or ``(object, name)``
    pairs naming one by ``"module.name"``. An allowed class may be rebuilt from a file
    (``cls.__new__`` and its ``__setstate__`` or ``__dict__``), as torch's.

    Args:
        safe_globals: a list of classes, functions or (object, "module.name") pairs.

    Example:
        >>> mg.serialization.add_safe_globals([Net, nn.Linear])
        >>> model = mg.load("model.pt")          # weights_only=True, Net now allowed
    """
    if not isinstance(safe_globals, (list, tuple)):
        raise TypeError(f"add_safe_globals: expected a list, got {type(safe_globals).__name__}")
    _SAFE_GLOBALS.extend(safe_globals)


def get_safe_globals():
    """The globals ``add_safe_globals`` allowed, a list."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals():
    """Forget every global ``add_safe_globals`` allowed."""
    _SAFE_GLOBALS.clear()


class safe_globals:
    """``with safe_globals([...]):`` allows them for the block, then the list is as
    before (``torch.serialization.safe_globals``).

    Example:
        >>> with mg.serialization.safe_globals([Net, nn.Linear]):
        ...     model = mg.load("model.pt")
    """

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self.before = get_safe_globals()
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _SAFE_GLOBALS[:] = self.before
        return False


def _name_of(obj):
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', None)}"


def _allowed():
    """{"module.name": object} a weights-only load rebuilds: torch's defaults that exist
    here (containers, complex, bytes, Size, dtypes, a Module's and an optimizer's tables),
    then the user's."""
    allowed = {"collections.OrderedDict": collections.OrderedDict,
               "collections.Counter": collections.Counter, "builtins.set": set,
               "builtins.complex": complex, "builtins.bytearray": bytearray,
               "_codecs.encode": _codecs.encode,
               "microgradnorm.tensor.Size": Size, "microgradnorm.nn.module._Table": _Table,
               "microgradnorm.nn.module._TreeTable": _TreeTable,
               # a dtype (mg.float32) pickles as its name; torch allows its dtypes too
               "microgradnorm.dtypes._torch_dtype_named": dtypes._torch_dtype_named}
    for entry in _SAFE_GLOBALS:
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
            allowed[entry[1]] = entry[0]
        else:
            allowed[_name_of(entry)] = entry
    return allowed


# ----- saving -----------------------------------------------------------------------------
def members(obj, encoder, protocol, pickle_module):
    """The members of ``obj``'s file ({name: array}, without the structure record) and the
    structure document: ``obj`` pickled (with ``pickle_module``, torch's default ``pickle``,
    at ``protocol``), its Tensors and numeric arrays encoded by ``encoder``
    (``nn.serialization``'s) as array members. Raises what pickling raises (a lambda, a
    local class: ``pickle.PicklingError`` or ``AttributeError``, as ``torch.save``).

    Example:
        >>> arrays, document = members(model, _Encoder("mg.save"), 2, None)
    """
    objects, seen = [], {}

    def persistent_id(value):
        if isinstance(value, Tensor):
            kind = "tensor"
        elif (type(value) is np.ndarray and value.dtype.kind in "biuf") \
                or backend.is_cupy_array(value):
            kind = "ndarray"
        else:
            return None
        if id(value) not in seen:
            path = ["objects", len(objects)]
            try:
                node = encoder.tensor(value, path) if kind == "tensor" else \
                    {"ndarray": encoder.array(value, path)}
            except TypeError:           # a complex Tensor: no member holds it
                raise TypeError(f"{encoder.where}: a {type(value).__name__} of dtype "
                                f"{value.dtype} in obj can't be saved (files hold bool, int "
                                "and float arrays)") from None
            seen[id(value)] = len(objects)
            objects.append(node)
            encoder.alive.append(value)
        return (kind, seen[id(value)])

    module = pickle if pickle_module is None else pickle_module
    buffer = io.BytesIO()
    pickler = module.Pickler(buffer, protocol)
    pickler.persistent_id = persistent_id
    pickler.dump(obj)
    encoder.share_memory()
    document = {"format": FORMAT, "version": VERSION, "pickle": PICKLE, "objects": objects}
    data = np.frombuffer(buffer.getvalue(), np.uint8)
    return {**encoder.arrays, PICKLE: data}, document


# ----- loading ----------------------------------------------------------------------------
def load(decoder, document, weights_only):
    """The object of a pickle-holding file, read through ``decoder`` (``nn.serialization``'s
    ``_Decoder``: its reader, file label and placement). ``weights_only``: True refuses the
    first global not allowed before anything is unpickled; False unpickles everything.

    Example:
        >>> load(decoder, document, weights_only=False)
    """
    where, label, reader = decoder.where, decoder.label, decoder.reader
    objects = document.get("objects")
    if document.get("version") != VERSION or document.get("pickle") != PICKLE \
            or type(objects) is not list or PICKLE not in reader.headers:
        raise ValueError(f"{where}: {label}: a pickle-holding file of version "
                         f"{document.get('version')!r} without its pickle; this microgradnorm "
                         f"reads version {VERSION}")
    if weights_only is None:
        raise ValueError(f"{where}: {label} holds a pickled object (written by mg.save), "
                         "not a checkpoint")
    shape, dtype = reader.headers[PICKLE]
    if dtype != np.uint8 or len(shape) != 1:
        raise ValueError(f"{where}: {label}: its {PICKLE} member is {dtype}{list(shape)}, "
                         "not the uint8 bytes of a pickle")
    data = reader.read(PICKLE).tobytes()
    allowed = _allowed() if weights_only else None
    if allowed is not None:
        refused = _first_refused(data, allowed)
        if refused is not None:
            raise pickle.UnpicklingError(_refusal(where, label, refused))
    unpickler = _Unpickler(io.BytesIO(data), decoder, objects, allowed)
    return unpickler.load()


def _refusal(where, label, name):
    return (f"{where}: {label}: Weights only load failed: the file holds the global {name}, "
            "which a weights_only=True load does not allow. Re-running mg.load with "
            "weights_only=False will likely succeed, but it runs code the file names: do it "
            f"only if you trust the file's source. Or allow it: "
            f"mg.serialization.add_safe_globals([{name}]) or the "
            f"mg.serialization.safe_globals([{name}]) context manager.")


def _fixed(module, name):
    # the names pickle's Unpickler looks up (fix_imports: protocol 2 writes Python 2's
    # names, "__builtin__.set"; no Python 3 module has those names, so all are mapped)
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[module, name]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _first_refused(data, allowed):
    """The first global of the pickle ``data`` not in ``allowed``, "module.name", read by
    walking its opcodes (nothing runs); None when all are allowed. A global whose name the
    walk cannot tell (a hostile stream) counts as refused."""
    strings, memo = [], {}
    try:
        for opcode, arg, _ in pickletools.genops(data):
            name = opcode.name
            if name in ("GLOBAL", "INST"):
                module, attr = arg.split(" ", 1)
                module, attr = _fixed(module, attr)
                if f"{module}.{attr}" not in allowed:
                    return f"{module}.{attr}"
            elif name == "STACK_GLOBAL":
                if len(strings) < 2 or not all(isinstance(s, str) for s in strings[-2:]):
                    return "an unnamed global"
                module, attr = _fixed(strings[-2], strings[-1])
                if f"{module}.{attr}" not in allowed:
                    return f"{module}.{attr}"
            elif name in ("EXT1", "EXT2", "EXT4", "OBJ"):
                return f"a global by {name}"
            elif "UNICODE" in name or name in ("STRING", "BINSTRING", "SHORT_BINSTRING"):
                strings.append(arg)
            elif name == "MEMOIZE":
                memo[len(memo)] = strings[-1] if strings else None
            elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[arg] = strings[-1] if strings else None
            elif name in ("GET", "BINGET", "LONG_BINGET"):
                strings.append(memo.get(arg))
    except ValueError as error:          # a stream pickletools cannot walk
        raise pickle.UnpicklingError(f"damaged pickle ({error})") from None
    return None


class _Unpickler(pickle.Unpickler):
    """The file's pickle, its persistent ids read from the structure's nodes; with
    ``allowed``, every global looked up must be in it (the walk above checked them first)."""

    def __init__(self, file, decoder, objects, allowed):
        super().__init__(file)
        self.decoder, self.objects, self.allowed = decoder, objects, allowed
        self.loaded = {}

    def find_class(self, module, name):
        if self.allowed is None:
            return super().find_class(module, name)
        module, name = _fixed(module, name)
        if f"{module}.{name}" not in self.allowed:
            raise pickle.UnpicklingError(_refusal(self.decoder.where, self.decoder.label,
                                                  f"{module}.{name}"))
        return self.allowed[f"{module}.{name}"]

    def persistent_load(self, pid):
        if not (type(pid) is tuple and len(pid) == 2 and pid[0] in ("tensor", "ndarray")
                and type(pid[1]) is int and 0 <= pid[1] < len(self.objects)):
            raise pickle.UnpicklingError(f"{self.decoder.where}: {self.decoder.label}: a "
                                         f"persistent id {pid!r:.60} that names no array")
        kind, index = pid
        if index not in self.loaded:
            node = self.objects[index]
            if type(node) is not dict or list(node) != [kind]:
                raise self.decoder.fail(["objects", index], f"is not the {kind} its pickle "
                                                            "names")
            self.loaded[index] = self.decoder.node(node, ["objects", index])
        return self.loaded[index]

