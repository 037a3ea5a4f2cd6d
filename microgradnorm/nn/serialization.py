"""``save`` and ``load`` (``mg.save``, ``mg.load``): ``torch.save`` / ``torch.load``'s contract
on a data-only file that nothing pickles, on either side (docs/training.md, "Saving and
loading"); what is not data is pickled (``pickled_files``: a file of the same kind with a
pickle member and a structure record of format ``microgradnorm.pickle``).

The file is an uncompressed ``.npz``: each array one ``.npy`` member (named by its key path,
``model/0.weight``, so ``np.load`` lists them), and one member ``__structure__.npy``, the
UTF-8 bytes of a JSON document ``{"format": "microgradnorm.save", "version": 1, "obj":
node}`` that describes the object. A node is JSON's null, true/false, a string, an int, a
finite float, or a list (a Python list); anything else is an object with one key, its tag:
``{"tuple": [node, ...]}`` (``"size"`` for a ``Size``), ``{"dict": [[key, node], ...]}``
(keys str or int, in order; ``"ordered_dict"`` for an OrderedDict, ``"counter"`` for a
Counter, as a scheduler's state dict holds; ``{"state_dict": [pairs,
node]}`` for one with torch's ``_metadata``, the node), ``{"float": "nan" |
"inf" | "-inf"}``, ``{"scalar": [dtype, value]}`` (a NumPy number), ``{"ndarray": {member,
dtype, shape, device}}`` and ``{"tensor": {member, dtype, shape, device, requires_grad,
ref, parameter}}`` (``ref``: the same Tensor saved twice comes back as one object).
bfloat16, which ``.npy`` cannot name, is stored as its uint16 bits and named in the node.
Arrays that share memory exactly (tied weights in a state dict) are stored once and come
back sharing one array. Tensors that view one memory in different layouts (a tensor and
its slices, reshapes, transposes) are saved as torch saves a storage: the whole memory once,
one member, and each tensor's node an ``offset`` and ``stride`` (in elements) into the
member's flat elements; so they come back sharing memory. A tensor alone is its own member,
in its shape, as ``np.load`` reads it.
"""

import collections
import inspect
import io
import json
import math
import os

import numpy as np

from .. import backend, dtypes
from ..savefile import (MAX_JSON_BYTES, NpzReader, atomic_write, decode_dtypes, parse_json,
                        write_arrays)
from ..ops.storage import _place
from ..tensor import Size, Tensor
from . import pickled_files, torch_files
from .module import Module, Parameter
from .pickled_files import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load",
           "safe_globals", "save"]

FORMAT = "microgradnorm.save"
VERSION = 1
STRUCTURE = "__structure__"      # the member holding the JSON, as a uint8 array
MAX_DEPTH = 100                  # containers nested in one another, saved or loaded
MAX_INT_BITS = 14_000            # ~4,200 digits: Python's int <-> str limit is 4,300
_PLAIN = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64")
_FLOAT_TAGS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_TENSOR_KEYS = {"member", "dtype", "shape", "device", "requires_grad", "ref", "parameter"}
_ARRAY_KEYS = {"member", "dtype", "shape", "device"}
_VIEW_KEYS = {"offset", "stride"}         # a view of its member (both, or neither)
_TYPES_SAVED = ("None, bool, int, float, str, lists, tuples, dicts with str or int keys, "
                "Tensors, NumPy arrays and NumPy numbers")


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write ``obj`` to ``f`` as ``torch.save`` does. Data is written without pickling: a
    file of arrays and one JSON record of the structure (this module's docstring has the
    format); anything else is pickled, as torch pickles it (``pickled_files``).

    Data: a Tensor, a state dict, an optimizer's ``state_dict()``, or dicts (str or int
    keys), lists and tuples of those, None, bool, int, float, str, numeric NumPy arrays and
    NumPy numbers, nested up to 100 deep. What is not data (a Module, an optimizer, a user's
    object, a set, a tuple key, a cycle, ...) is pickled, its Tensors and numeric arrays
    stored apart as array members, so tied weights and views still share memory; such a
    file loads with ``mg.load(f, weights_only=False)``, as torch's. Everything is encoded
    before anything is written; a path is written atomically (a temporary file moved over
    it), so a failed or interrupted save leaves the previous file as it was.

    Args:
        obj: what to save.
        f: a path, used exactly as given (str, bytes or os.PathLike: no suffix is added), or
            a binary file object open for writing (``io.BytesIO``, ``open(path, "wb")``).
        pickle_module, pickle_protocol: the pickler (a module with ``Pickler``; default
            ``pickle``) and protocol (default 2, torch's) for what is not data.
        _use_new_zipfile_serialization, _disable_byteorder_record: torch's, taken and unused.

    Raises:
        TypeError: a bad ``f``; a Tensor of a dtype no file holds (complex).
        pickle.PicklingError, AttributeError: what pickle raises for what it cannot pickle
            (a lambda, a local class), as ``torch.save``.
        OSError: the path cannot be written (its class and errno, naming the path).

    Example:
        >>> mg.save({"model": model.state_dict(), "iter_num": 100}, "ckpt.pt")
        >>> model.load_state_dict(mg.load("ckpt.pt")["model"])
        >>> mg.save(model, "model.pt")                 # the whole model, pickled
        >>> model = mg.load("model.pt", weights_only=False)
    """
    save_file(obj, f, "mg.save", (pickle_protocol, pickle_module))


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Read what ``save`` wrote (``torch.load``'s contract): the same structure, with
    Tensors, NumPy arrays and numbers, dicts, lists, tuples and plain values as saved; a
    pickled object (a whole Module, ...) with ``weights_only=False``.

    A data file is checked before and while it is read, never unpickled: a file not in this
    format, truncated or corrupt, a member that is not a numeric ``.npy``, an array header
    claiming more than the file holds or more memory than there is, or a structure record
    too large, too deep or naming what is not there is one ValueError naming the file (a
    truncated or corrupt archive a ``savefile.DamagedFileError``, also the RuntimeError
    torch raises). A missing path is a FileNotFoundError. A ``.npz`` state dict written
    by ``nn.save`` before this format loads as its {name: Tensor}; a checkpoint of that
    time loads with ``checkpoint.load_checkpoint``. A file ``torch.save`` wrote (its zip
    format) is read as torch's ``weights_only=True`` load reads it: Tensors, Parameters,
    containers and plain values; any other object in it is a ValueError naming it.

    Args:
        f: a path (str, bytes, os.PathLike) or a binary file object open for reading.
        map_location: where Tensors go. None: the device each was saved from, as torch
            (a CUDA tensor on a machine without CUDA is then an error: pass "cpu"); a
            device, ``"cpu"``, ``"cuda"``, ``"cuda:0"`` or a ``torch.device``; a dict from
            saved device to device (``{"cuda:0": "cpu"}``); or a function ``fn(tensor,
            location)`` called with each Tensor on the CPU and its saved location, returning
            a Tensor or None (None: the saved device). Arrays stay arrays (NumPy, or CuPy
            where a device or dict puts them on "cuda"; a function sees Tensors only).
        weights_only: for a file holding a pickle: True (the default, as torch's) reads
            its globals without running anything and refuses the first one not allowed
            (``pickle.UnpicklingError`` naming it; allow classes with
            ``serialization.add_safe_globals`` or ``safe_globals``); False unpickles it,
            which runs code the file names: use it only for files you trust. A data file
            reads alike either way.
        pickle_module, mmap, pickle_load_args: torch's (``encoding="latin1"``, ...), taken
            and unused: the arrays are read into memory.

    Example:
        >>> state = mg.load("ckpt.pt", map_location="cpu")
        >>> state["iter_num"]
        100
    """
    if weights_only not in (True, False, None):
        raise TypeError(f"mg.load: weights_only must be True or False, got {weights_only!r}")
    if torch_files.is_torch_file(f):              # torch.save's zip: read as weights only
        return torch_files.load(f, "mg.load", _placement(map_location, "mg.load"))
    return load_file(f, "mg.load", map_location, text=("meta",), legacy=_legacy_state_dict,
                     weights_only=weights_only is not False)


_MAPPING_TAGS = {dict: "dict", collections.OrderedDict: "ordered_dict",
                 collections.Counter: "counter"}


def save_file(obj, f, where, pickling=None):
    """``save`` for ``save`` and ``checkpoint``: errors start with ``where``; returns the path
    written (a str), or None for a file object. ``pickling``: None keeps a Module as its
    ``state_dict()`` and refuses what is not data (a checkpoint); ``(protocol,
    pickle_module)`` pickles what is not data (``mg.save``, ``pickled_files``).

    Example:
        >>> save_file(checkpoint, "run.npz", "save_checkpoint")
        'run.npz'
    """
    # checked and encoded whole first, so that an error writes nothing
    is_path = isinstance(f, (str, bytes, os.PathLike))
    if not is_path and not callable(getattr(f, "write", None)):
        raise TypeError(f"{where}: f must be a path (str, bytes or os.PathLike) or a binary "
                        f"file object open for writing, got {type(f).__name__}")
    if isinstance(f, io.TextIOBase):
        raise TypeError(f"{where}: the file is open in text mode; open it with 'wb'")
    encoder = _Encoder(where, modules_as_state=pickling is None)
    try:
        document = {"format": FORMAT, "version": VERSION, "obj": encoder.encode(obj, [])}
        encoder.share_memory()
        text = _json_text(document, where)
        members = dict(encoder.arrays)
    except (TypeError, ValueError):
        if pickling is None:
            raise
        # not data (a Module, an optimizer, a set, ...): pickled, as torch.save does
        members, document = pickled_files.members(obj, _Encoder(where), *pickling)
        text = _json_text(document, where)
    # the arrays first, the record of what they are last
    members[STRUCTURE] = np.frombuffer(text.encode("ascii"), np.uint8)
    if is_path:
        return atomic_write(f, lambda file: write_arrays(file, members), where)
    write_arrays(f, members)
    return None


def _json_text(document, where):
    # ASCII with escapes: any str comes back, lone surrogates included
    text = json.dumps(document, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    if len(text) > MAX_JSON_BYTES:
        raise ValueError(f"{where}: the structure of obj is {len(text):,} bytes of JSON, more "
                         f"than the {MAX_JSON_BYTES:,} a load reads: keep large data in "
                         "arrays or Tensors, not in lists of numbers")
    return text


def load_file(f, where, map_location=None, text=(), legacy=None, weights_only=None):
    """What ``f`` holds, for ``load`` and ``checkpoint``: the object of a file in ``save``'s
    format, else ``legacy(arrays, label, where, place)`` of a file from before it ({name:
    array}, bfloat16 restored, string members named in ``text`` kept).

    Args:
        f: a path or a binary file object; where: the caller, first in every error.
        map_location: as ``load``'s, checked before the file is opened.
        weights_only: for a file holding a pickle (``pickled_files``): True refuses the
            globals not allowed, False unpickles, None refuses the file (a checkpoint).

    Example:
        >>> load_file("run.npz", "load_checkpoint", "cpu", text=("meta",), legacy=convert)
    """
    place = _placement(map_location, where)
    with NpzReader(f, where, text) as reader:
        if STRUCTURE in reader.headers:
            return _Decoder(reader, where, place, weights_only).load()
        arrays = {name: reader.read(name) for name in reader.headers}
        decode_dtypes(arrays, where, reader.label)
        if legacy is None:
            raise ValueError(f"{where}: {reader.label} is a .npz without a structure record, "
                             "not a file written by mg.save")
        return legacy(arrays, reader.label, where, place)


def _legacy_state_dict(arrays, label, where, place):
    # the .npz of nn.save before this format: {name: array} -> {name: Tensor}
    if "meta" in arrays and arrays["meta"].dtype.kind == "U":
        raise ValueError(f"{where}: {label} is a checkpoint written before mg.save's format "
                         "(a 'meta' record): load it with "
                         "microgradnorm.checkpoint.load_checkpoint")
    return {name: place.tensor(array, "cpu", (name, "cpu"), False, False, where)
            for name, array in arrays.items()}


# ----- saving -----------------------------------------------------------------------------
class _Encoder:
    """obj -> JSON nodes, collecting the arrays to write ({member name: NumPy array})."""

    def __init__(self, where, modules_as_state=True):
        self.where, self.modules_as_state = where, modules_as_state
        self.arrays = {}
        self.shared = {}        # (address, shape, strides, dtype, device) -> member name
        self.refs = {}          # id(Tensor) -> ref number
        self.active = set()     # ids of the containers being walked: meeting one is a cycle
        self.alive = []         # every object whose id is a key above (ids stay unique)
        self.uses = collections.Counter()   # member -> nodes that name it
        self.tensor_nodes = []  # (node, array, path) of every tensor: share_memory's input

    def fail(self, error, path, why):
        return error(f"{self.where}: {_at(path)}{why}")

    def encode(self, value, path):
        kind = type(value)
        if value is None or kind in (bool, str):
            return value
        if kind is int:
            return self.integer(value, path)
        if kind is float:
            return _float_node(value)
        if isinstance(value, Tensor):
            return self.tensor(value, path)
        if isinstance(value, np.ndarray) or backend.is_cupy_array(value):
            return {"ndarray": self.array(value, path)}
        if isinstance(value, np.generic):
            return self.scalar(value, path)
        if isinstance(value, Module) and self.modules_as_state:
            value = value.state_dict()    # code is not data: its state, as nn.save always did
            kind = dict
        if kind in (list, tuple, Size, dict, collections.OrderedDict, collections.Counter):
            return self.container(value, kind, path)
        raise self.refusal(value, path)

    def integer(self, value, path):
        if value.bit_length() > MAX_INT_BITS:
            raise self.fail(ValueError, path, f": an int of {value.bit_length():,} bits can't "
                                              f"be saved (at most {MAX_INT_BITS:,})")
        return value

    def container(self, value, kind, path):
        if id(value) in self.active:
            raise self.fail(ValueError, path, f": a cycle: this {kind.__name__} contains "
                                              "itself, and only trees can be saved")
        if len(path) >= MAX_DEPTH:
            raise self.fail(ValueError, path, f": nested more than {MAX_DEPTH} containers "
                                              "deep, more than a load reads")
        self.active.add(id(value))
        try:
            if kind is list:
                return [self.encode(item, path + [i]) for i, item in enumerate(value)]
            if kind in (tuple, Size):
                return {kind.__name__.lower(): [self.encode(item, path + [i])
                                                for i, item in enumerate(value)]}
            items = [[self.key(key, path), self.encode(item, path + [key])]
                     for key, item in value.items()]
            metadata = getattr(value, "_metadata", None) if kind is not dict else None
            if metadata is not None:        # a state dict's module versions, as torch keeps
                return {"state_dict": [items, self.encode(metadata, path + ["_metadata"])]}
            return {_MAPPING_TAGS[kind]: items}
        finally:
            self.active.discard(id(value))

    def key(self, key, path):
        if type(key) is str:
            return key
        if type(key) is int:
            return self.integer(key, path + [key])
        # a bool, float, tuple or NumPy integer key would come back as another key
        raise self.fail(TypeError, path, f": the key {key!r} ({type(key).__name__}) can't be "
                                         "saved: keys must be str or int")

    def scalar(self, value, path):
        name = _dtype_name(value.dtype)
        if name is None:
            raise self.fail(TypeError, path, f": a NumPy {value.dtype} value can't be saved "
                                             "(NumPy numbers: bool, int, float)")
        return {"scalar": [name, _float_node(value.item()) if name != "bool" else value.item()]}

    def tensor(self, tensor, path):
        ref = self.refs.setdefault(id(tensor), len(self.refs))
        self.alive.append(tensor)
        node = {**self.array(tensor._array, path), "requires_grad": bool(tensor.requires_grad),
                "ref": ref}
        self.tensor_nodes.append((node, tensor._array, path))
        if isinstance(tensor, Parameter):
            node["parameter"] = True
        return {"tensor": node}

    def array(self, array, path):
        is_cupy = backend.is_cupy_array(array)
        if not is_cupy and type(array) is not np.ndarray:  # a mask or matrix would be lost
            raise self.fail(TypeError, path, f": a {type(array).__name__} can't be saved "
                                             "(plain np.ndarray only)")
        name = _dtype_name(array.dtype)
        if name is None:
            raise self.fail(TypeError, path, f" must be a numeric (bool, int or float) array, "
                                             f"got dtype {array.dtype} (files hold numbers "
                                             "only: no pickles)")
        device = backend.device_of(array)
        address = array.data.ptr if is_cupy else array.__array_interface__["data"][0]
        identity = (address, array.shape, array.strides, array.dtype.str, device)
        member = self.shared.get(identity)
        if member is None:                 # stored once for every array of this memory
            host = backend.to_numpy(array)
            if name == "bfloat16":
                host = host.view(np.uint16)
            elif not host.dtype.isnative:
                host = host.astype(host.dtype.newbyteorder("="))
            member = self.shared[identity] = self.member_name(path)
            self.arrays[member] = host
            self.alive.append(array)
        self.uses[member] += 1
        return {"member": member, "dtype": name, "shape": list(array.shape), "device": device}

    def share_memory(self):
        """Rewrite the nodes of tensors that view one memory in two or more layouts as views
        of one member holding that memory whole; a member no node names any more is
        dropped."""
        groups = collections.defaultdict(list)     # id(root) -> [(node, root, offset, stride)]
        for node, array, path in self.tensor_nodes:
            place = _place_in_root(array)
            if place is not None:
                groups[id(place[0])].append((node, path, *place))
        for views in groups.values():
            layouts = {(offset, tuple(node["shape"]), tuple(stride))
                       for node, _, _, offset, stride in views}
            if len(layouts) < 2:
                continue
            _, path, root, _, _ = views[0]
            whole = self.array(root, path)
            for node, _, _, offset, stride in views:
                self.uses[node["member"]] -= 1
                if not self.uses[node["member"]]:
                    del self.arrays[node["member"]]
                node.update(member=whole["member"], offset=offset, stride=stride)
                self.uses[whole["member"]] += 1

    def member_name(self, path):
        # the key path ("model/0.weight"), readable in np.load's list, or a number
        name = "/".join(str(key) for key in path) or "obj"
        parts = name.split("/")
        if (len(name) > 200 or not name.isprintable() or "\\" in name or name == STRUCTURE
                or any(part in ("", ".", "..") for part in parts) or name in self.arrays):
            number = len(self.arrays)
            while f"arrays/{number}" in self.arrays:
                number += 1
            name = f"arrays/{number}"
        return name

    def refusal(self, value, path):
        kind = type(value).__name__
        article = "an" if kind[:1] in "AEIOUaeiou" else "a"
        if inspect.isroutine(value):
            why = "a function can't be saved"
        elif inspect.isclass(value):
            why = "a class can't be saved"
        elif callable(getattr(value, "state_dict", None)):
            why = f"{article} {kind} can't be saved; save its state_dict()"
        else:
            why = f"{article} {kind} can't be saved (files hold {_TYPES_SAVED}: no pickles)"
        return self.fail(TypeError, path, ": " + why)


def _place_in_root(array):
    """``(root, offset, stride)``, in elements, where ``array`` reads the C-contiguous array
    of its dtype at the end of its base chain (``ops.storage._place``: the memory a torch
    storage would be, saved as one member) with strides >= 0; None for memory read otherwise
    (CuPy's, another dtype's or layout's, a negative stride, ...)."""
    place = _place(array) if isinstance(array, np.ndarray) else None
    if place is None:
        return None
    root, _, start, strides = place
    if root.dtype != array.dtype or not root.flags.c_contiguous or min(strides, default=0) < 0:
        return None
    return root, start, list(strides)


def _float_node(value):
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"}
    return value


def _dtype_name(dtype):
    if dtypes.bfloat16 is not None and dtype == dtypes.bfloat16:
        return "bfloat16"
    return dtype.name if dtype.name in _PLAIN and dtype.kind in "biuf" else None


def _at(path):
    return "obj" + "".join(f"[{key!r}]" for key in path)


# ----- loading ----------------------------------------------------------------------------
class _Placement:
    """Where a loaded Tensor goes: ``map_location`` resolved once, before the file is read."""

    def __init__(self, device=None, mapping=None, function=None):
        self.device, self.mapping, self.function = device, mapping, function
        self.moved = {}          # (member key, device) -> array: shared memory stays shared

    def device_for(self, saved):
        if self.device is not None:
            return self.device
        if self.mapping is not None:
            return self.mapping.get(saved, saved)
        return saved

    def put(self, array, key, device):
        if (key, device) not in self.moved:
            self.moved[key, device] = backend.to_device(array, device)
        return self.moved[key, device]

    def tensor(self, array, saved, key, requires_grad, parameter, where):
        cls = Parameter if parameter else Tensor
        if self.function is not None:
            placed = self.function(cls._leaf(where, array, requires_grad), saved)
            if placed is not None:
                if not isinstance(placed, Tensor):
                    raise TypeError(f"{where}: map_location returned a "
                                    f"{type(placed).__name__}, not a Tensor or None")
                return placed
        device = saved if self.function is not None else self.device_for(saved)
        return cls._leaf(where, self.put(array, key, device), requires_grad)

    def array(self, array, saved, key):
        # NumPy (CuPy) arrays follow a device or a dict; a function sees Tensors only
        device = "cpu" if self.function is not None else self.device_for(saved)
        return self.put(array, key, device)


def _placement(map_location, where):
    if map_location is None:
        return _Placement()
    if isinstance(map_location, dict):
        mapping = {}
        for saved, device in map_location.items():
            mapping[_device(saved, where)] = _device(device, where)
        return _Placement(mapping=mapping)
    if callable(map_location):
        return _Placement(function=map_location)
    return _Placement(device=_device(map_location, where))


def _device(device, where):
    # "cpu", "cuda", "cuda:0" or a torch.device: this library has one GPU, "cuda"
    name = str(device) if hasattr(device, "type") else device
    if isinstance(name, str):
        if name == "cpu" or name in ("cuda", "cuda:0"):
            return name[:4]
    raise ValueError(f"{where}: map_location must be None, a device ('cpu', 'cuda', "
                     f"'cuda:0'), a dict of devices or a function, got {device!r}")


class _Decoder:
    """JSON nodes -> the object, reading each array member the first time a node names it."""

    def __init__(self, reader, where, place, weights_only=None):
        self.reader, self.where, self.place = reader, where, place
        self.weights_only = weights_only
        self.label = reader.label
        self.arrays = {}       # member -> array as stored (read once: nodes share it)
        self.refs = {}         # ref -> Tensor

    def fail(self, path, why):
        return ValueError(f"{self.where}: {self.label}: {_at(path)} {why} (the file is "
                          "corrupt or was not written by mg.save)")

    def load(self):
        shape, dtype = self.reader.headers[STRUCTURE]
        if dtype != np.uint8 or len(shape) != 1 or shape[0] > MAX_JSON_BYTES:
            raise ValueError(f"{self.where}: {self.label}: its {STRUCTURE} member is "
                             f"{dtype}{list(shape)}, not the uint8 bytes of at most "
                             f"{MAX_JSON_BYTES:,} of JSON")
        data = self.reader.read(STRUCTURE).tobytes()
        document = parse_json(data, self.where, self.label, "structure record")
        if isinstance(document, dict) and document.get("format") == pickled_files.FORMAT:
            return pickled_files.load(self, document, self.weights_only)
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            found = document.get("format") if isinstance(document, dict) else None
            raise ValueError(f"{self.where}: {self.label}: its structure record is not "
                             f"{FORMAT!r} (format {found!r})")
        if document.get("version") != VERSION or "obj" not in document:
            raise ValueError(f"{self.where}: {self.label}: format version "
                             f"{document.get('version')!r}; this microgradnorm reads "
                             f"version {VERSION} (a newer one wrote it?)")
        return self.node(document["obj"], [])

    def node(self, node, path):
        kind = type(node)
        if node is None or kind in (bool, str, int, float):
            return node
        if kind is list:
            self.check_depth(path)
            return [self.node(item, path + [i]) for i, item in enumerate(node)]
        if kind is not dict or len(node) != 1:
            raise self.fail(path, "is not a node of this format")
        ((tag, body),) = node.items()
        if tag in ("tuple", "size") and type(body) is list:
            self.check_depth(path)
            items = tuple(self.node(item, path + [i]) for i, item in enumerate(body))
            if tag == "size" and not all(type(n) is int and n >= 0 for n in items):
                raise self.fail(path, "is a Size of what are not sizes")
            return Size(items) if tag == "size" else items
        if tag in _MAPPING_TAGS.values() and type(body) is list:
            self.check_depth(path)
            return self.mapping(tag, body, path)
        if tag == "state_dict" and type(body) is list and len(body) == 2 \
                and type(body[0]) is list:
            self.check_depth(path)
            result = self.mapping("ordered_dict", body[0], path)
            result._metadata = self.node(body[1], path + ["_metadata"])
            if not isinstance(result._metadata, dict):
                raise self.fail(path, "is a state dict whose _metadata is no dict")
            return result
        if tag == "float" and body in _FLOAT_TAGS:
            return _FLOAT_TAGS[body]
        if tag == "scalar":
            return self.scalar(body, path)
        if tag == "tensor" and type(body) is dict:
            return self.tensor(body, path)
        if tag == "ndarray" and type(body) is dict:
            self.check_keys(body, _ARRAY_KEYS, _ARRAY_KEYS, path)
            array, key = self.array(body, path)
            return self.place.array(array, body["device"], key)
        raise self.fail(path, f"is a {tag!r} node this format does not have")

    def check_depth(self, path):
        if len(path) >= MAX_DEPTH:
            raise self.fail(path, f"nests more than {MAX_DEPTH} containers deep")

    def mapping(self, tag, pairs, path):
        result = {value: key for key, value in _MAPPING_TAGS.items()}[tag]()
        for pair in pairs:
            if type(pair) is not list or len(pair) != 2 or type(pair[0]) not in (str, int):
                raise self.fail(path, "holds an entry that is not a [str or int key, value]")
            result[pair[0]] = self.node(pair[1], path + [pair[0]])
        return result

    def scalar(self, body, path):
        if type(body) is not list or len(body) != 2:
            raise self.fail(path, "is a NumPy number without [dtype, value]")
        name, value = body
        dtype = self.dtype(name, path)
        if type(value) is dict and len(value) == 1 and value.get("float") in _FLOAT_TAGS:
            value = _FLOAT_TAGS[value["float"]]
        allowed = {"b": (bool,), "i": (int,), "u": (int,)}.get(dtype.kind, (int, float))
        if type(value) not in allowed:
            raise self.fail(path, f"is a NumPy {name} of value {value!r}")
        try:
            return dtype.type(value)
        except (OverflowError, ValueError):
            raise self.fail(path, f"is a NumPy {name} of value {value!r}") from None

    def tensor(self, body, path):
        self.check_keys(body, _TENSOR_KEYS - {"parameter"}, _TENSOR_KEYS | _VIEW_KEYS, path)
        ref, requires_grad = body["ref"], body["requires_grad"]
        parameter = body.get("parameter", False)
        if type(ref) is not int or type(requires_grad) is not bool or parameter is not True \
                and parameter is not False:
            raise self.fail(path, "is a tensor with a bad ref, requires_grad or parameter")
        if ref in self.refs:
            return self.refs[ref]
        array, key = self.array(body, path)
        if requires_grad and not dtypes.is_floating(array.dtype):
            raise self.fail(path, f"is a {array.dtype} tensor that requires grad")
        tensor = self.place.tensor(array, body["device"], key, requires_grad, parameter,
                                   self.where)
        self.refs[ref] = tensor
        return tensor

    def check_keys(self, body, required, allowed, path):
        if not required <= set(body) <= allowed or len(_VIEW_KEYS & set(body)) == 1:
            raise self.fail(path, f"has fields {sorted(body)}, expected {sorted(required)}")
        if body["device"] not in ("cpu", "cuda"):
            raise self.fail(path, f"was saved on device {body['device']!r}")

    def dtype(self, name, path):
        if name == "bfloat16":
            if dtypes.bfloat16 is None:
                raise ValueError(f"{self.where}: {self.label}: {_at(path)} is bfloat16, which "
                                 "needs ml_dtypes (pip install ml_dtypes)")
            return dtypes.bfloat16
        if name not in _PLAIN:
            raise self.fail(path, f"has dtype {name!r}, not one this format stores")
        return np.dtype(name)

    def array(self, body, path):
        # the member's array, checked against what the node says it is; returns it with
        # the key that places share memory by
        member, shape = body["member"], body["shape"]
        dtype = self.dtype(body["dtype"], path)
        stored = np.dtype(np.uint16) if body["dtype"] == "bfloat16" else dtype
        if type(member) is not str or member == STRUCTURE or member not in self.reader.headers:
            raise self.fail(path, f"names the member {member!r}, which the file does not hold")
        if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape):
            raise self.fail(path, f"has shape {shape!r}, not a list of sizes")
        header_shape, header_dtype = self.reader.headers[member]
        if header_shape != tuple(shape) and "offset" not in body \
                or header_dtype.newbyteorder("=") != stored:
            raise self.fail(path, f"says {body['dtype']}{shape} but its member {member!r} holds "
                                  f"{header_dtype}{list(header_shape)}")
        if member not in self.arrays:
            array = self.reader.read(member)
            self.arrays[member] = array if array.dtype.isnative else array.astype(stored)
        array = self.arrays[member]
        array = array.view(dtype) if dtype != stored else array
        if "offset" not in body:
            return array, (member, body["dtype"])
        key = (member, body["dtype"], body["offset"], tuple(body["stride"]), tuple(shape))
        return self.view(array.reshape(-1), shape, body["offset"], body["stride"], path), key

    def view(self, flat, shape, offset, stride, path):
        """The elements of ``flat`` from ``offset`` by ``stride`` in ``shape``, each checked
        to lie in ``flat``: a view, sharing the member with every other view of it."""
        if type(offset) is not int or type(stride) is not list or len(stride) != len(shape) \
                or not all(type(step) is int for step in stride):
            raise self.fail(path, f"has offset {offset!r} and stride {stride!r}, not ints of "
                                  f"its {len(shape)} dims")
        first = offset + sum(min(0, (n - 1) * step) for n, step in zip(shape, stride))
        last = offset + sum(max(0, (n - 1) * step) for n, step in zip(shape, stride))
        if not 0 <= offset <= flat.size or 0 not in shape and (first < 0 or last >= flat.size):
            raise self.fail(path, f"views elements {first} to {last} of a member of "
                                  f"{flat.size}")
        # elements repeated (a stride 0 over a dim of 2 or more) read only, as an expand's
        repeated = any(step == 0 and n > 1 for n, step in zip(shape, stride))
        return np.lib.stride_tricks.as_strided(
            flat[offset:], shape, [step * flat.itemsize for step in stride],
            writeable=not repeated)
