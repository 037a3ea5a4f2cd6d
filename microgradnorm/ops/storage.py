"""The memory behind a tensor, as scripts written for PyTorch inspect it: ``x.layout``
(``mg.strided``), the memory formats (``mg.channels_last``, ...: the type and its four
objects; ``memory_formats.py`` reads and changes them) and the flags that are constant here
(``is_sparse``, ``is_quantized``, ``is_meta``, ...); ``untyped_storage()`` and ``storage()``,
whose ``data_ptr()`` tells which tensors share memory; ``resize_`` and ``resize_as_``; the
legacy constructor ``x.new(...)``; the elements' count, size and address (``nelement``,
``element_size``, ``nbytes``, ``data_ptr``).

A tensor's storage is the array at the root of its NumPy (or CuPy) array's ``base`` chain:
every view of it (a slice, a transpose, an expansion, ``detach()``, ``.data``) reads that
memory, so their storages' ``data_ptr()`` agree, as torch's do; a copy has its own.

``METHODS`` names what ``ops/methods.py`` binds as ``Tensor`` methods."""

import math
import numbers
import warnings

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from ..autograd import is_grad_enabled
from ..autograd.function import Function
from ..autograd.inference import refuse_write
from . import arrange
from .base import row_major_strides, size_args, sizes_of
from .shape import filled

__all__ = ["TypedStorage", "UntypedStorage", "channels_last", "channels_last_3d",
           "contiguous_format", "jagged", "layout", "memory_format", "preserve_format",
           "sparse_bsc", "sparse_bsr", "sparse_coo", "sparse_csc", "sparse_csr", "strided"]


# ----- layouts and the flags of a dense CPU tensor -----------------------------------------
class _Named:
    """A value of one of torch's small enumerations (``torch.layout``,
    ``torch.memory_format``): one object per name, printed ``torch.<name>`` as torch prints
    it, pickled by name (this module's object again); none made by calling the class."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"cannot create 'torch.{cls.__name__}' instances")

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name

    @classmethod
    def _named(cls, *names):
        made = []
        for name in names:
            value = object.__new__(cls)
            value._name = name
            made.append(value)
        return made


class layout(_Named):
    """How a tensor's elements lie in memory (``torch.layout``): every tensor here is
    ``mg.strided`` (dense, with strides); the sparse layouts are named for code that
    compares with them. One object per name, printed as torch prints it.

    Example:
        >>> mg.ones(2).layout == mg.strided, mg.strided            # (True, torch.strided)
    """

    __slots__ = ()


strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged = layout._named(
    "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged")


def factory_memory(fn, layout, pin_memory):
    """Check the ``layout=`` and ``pin_memory=`` of a factory (``mg.zeros``, ``mg.arange``,
    ``mg.ones_like``, ``x.new_zeros``, ...): ``strided`` and None (and ``jagged``, which
    torch's factories build strided) are taken; a sparse layout is refused with a
    NotImplementedError (a RuntimeError, torch's class where it refuses one: a tensor here
    owns a dense array); ``pin_memory`` as ``backend.check_pin_memory``.

    Example:
        >>> mg.zeros(3, layout=mg.strided, pin_memory=False)         # a tensor([0., 0., 0.])
    """
    if not (layout is None or layout is strided or layout is jagged):
        # a torch.layout too (code written for torch passes torch.strided), read by name
        name = layout._name if isinstance(layout, type(strided)) else str(layout)[6:] if (
            type(layout).__name__ == "layout" and str(layout).startswith("torch.")) else None
        if name is None:
            raise TypeError(f"{fn}(): argument 'layout' must be torch.layout, got "
                            f"{type(layout).__name__} {layout!r}")
        if name in ("strided", "jagged"):
            return backend.check_pin_memory(fn, pin_memory)
        raise NotImplementedError(f"{fn}(): layout={layout!r} is not supported: every tensor "
                                  "here is dense (mg.strided); build it dense, then "
                                  "mg.sparse_coo_tensor where a sparse API is needed")
    backend.check_pin_memory(fn, pin_memory)


class memory_format(_Named):
    """The order in which a strided tensor's elements lie in memory (``torch.memory_format``),
    read from its strides (``ops/memory_formats.py``): ``mg.contiguous_format`` (row-major),
    ``mg.channels_last`` (an (N, C, H, W) tensor stored as (N, H, W, C): strides
    (HWC, 1, WC, C)), ``mg.channels_last_3d`` (its 5-D form, stored (N, D, H, W, C)) and
    ``mg.preserve_format`` (a copy keeps its source's order). One object per name, printed
    as torch prints it.

    Example:
        >>> mg.ones(2, 3, 4, 5).to(memory_format=mg.channels_last).stride()   # (60, 1, 15, 3)
    """

    __slots__ = ()


contiguous_format, channels_last, channels_last_3d, preserve_format = memory_format._named(
    "contiguous_format", "channels_last", "channels_last_3d", "preserve_format")


def _layout_of(x):
    """``mg.strided``: every tensor here is dense (``torch.Tensor.layout``)."""
    return strided


def _never(name, what):
    def flag(x):
        return False
    flag.__name__ = flag.__qualname__ = name
    flag.__doc__ = f"False: {what} (``torch.Tensor.{name}``, as torch answers on the CPU)."
    return property(flag)


is_sparse = _never("is_sparse", "no sparse COO tensor here")
is_sparse_csr = _never("is_sparse_csr", "no compressed sparse tensor here")
is_quantized = _never("is_quantized", "no quantized dtype here")


@property
def is_meta(x):
    """True for a tensor of the meta device: a shape and a dtype, no data
    (``torch.Tensor.is_meta``)."""
    return backend.is_meta_array(x._array)


is_nested = _never("is_nested", "no nested (jagged) tensor here")
is_mkldnn = _never("is_mkldnn", "no oneDNN layout here")
is_xpu = _never("is_xpu", "no Intel GPU here")
is_mps = _never("is_mps", "no Apple GPU here")
is_ipu = _never("is_ipu", "no Graphcore IPU here")
is_xla = _never("is_xla", "no XLA device here")
is_vulkan = _never("is_vulkan", "no Vulkan device here")
is_maia = _never("is_maia", "no MAIA device here")
is_mtia = _never("is_mtia", "no MTIA device here")
FLAGS = ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested", "is_mkldnn",
         "is_xpu", "is_mps", "is_ipu", "is_xla", "is_vulkan", "is_maia", "is_mtia")
tensor_layout = property(_layout_of)         # x.layout (ops/methods.py binds it)


# ----- storages ------------------------------------------------------------------------------
def _root(array):
    # the array at the end of the base chain (through NumPy's as_strided wrappers, which
    # are no arrays): the memory this array reads
    root, link = array, getattr(array, "base", None)
    while link is not None:
        if isinstance(link, np.ndarray) or backend.is_cupy_array(link):
            root = link
        link = getattr(link, "base", None)
    return root


def _bytes_of(root):
    """``root``'s memory as a flat uint8 view in memory order, or None where it is not one
    contiguous block (then no view of it can be resized in place)."""
    if root.flags.c_contiguous:
        return root.reshape(-1).view(np.uint8)
    if root.flags.f_contiguous:
        return root.T.reshape(-1).view(np.uint8)
    return None


def _place(array):
    """``(root, flat, start, strides)``: where ``array`` lies in the memory it reads as
    torch's storage: ``root`` (``_root``), its memory as a flat array of ``array``'s dtype
    in memory order, the place of ``array``'s first element in it and ``array``'s strides,
    in elements. None where that memory is not one block (``_bytes_of``) or ``array`` does
    not start and step in it by whole elements."""
    root = _root(array)
    memory = _bytes_of(root) if hasattr(root, "flags") else None
    size = array.itemsize
    if memory is None or memory.size % size:
        return None
    start = backend.data_address(array) - backend.data_address(root)
    if start % size or any(step % size for step in array.strides):
        return None
    return root, memory.view(array.dtype), start // size, tuple(s // size for s in array.strides)


class UntypedStorage:
    """The bytes a tensor reads (``torch.UntypedStorage``): ``x.untyped_storage()``, which
    views of x share. ``UntypedStorage(n)`` makes n zero bytes.

    Example:
        >>> x = mg.arange(6.0); v = x[2:].view(2, 2)
        >>> v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()     # True
    """

    def __init__(self, size=0, *, device="cpu"):
        backend.check_device(device)
        self._array = backend.to_device(np.zeros(int(size), np.uint8), device)

    @classmethod
    def _of(cls, array):
        storage = cls.__new__(cls)
        storage._array = _root(array)
        return storage

    def data_ptr(self):
        """The address of the first byte, an int (0 for an empty storage)."""
        return backend.data_address(self._array) if self._array.nbytes else 0

    def nbytes(self):
        """The size in bytes, an int."""
        return int(self._array.nbytes)

    def size(self):
        """The size in bytes, an int (``nbytes()``)."""
        return self.nbytes()

    def element_size(self):
        """1: an untyped storage counts bytes."""
        return 1

    @property
    def device(self):
        """The ``mg.device`` that holds the memory."""
        return backend.torch_device(self._array)

    def _items(self, dtype):
        # the bytes on the host read as ``dtype``, whole elements only
        flat = _bytes_of(self._array)
        if flat is None:                # not one block: the root's elements, copied
            flat = np.ascontiguousarray(backend.to_numpy(self._array)).reshape(-1).view(
                np.uint8)
        flat = backend.to_numpy(flat)
        return flat[:flat.size - flat.size % np.dtype(dtype).itemsize].view(dtype)

    def tolist(self):
        """The bytes as a list of ints."""
        return self._items(np.uint8).tolist()

    def __len__(self):
        return self.size()

    def __getitem__(self, index):
        return self._items(np.uint8)[index].tolist()

    def __eq__(self, other):        # torch hands out one object per storage: `is`, `==`
        return isinstance(other, UntypedStorage) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return str(self.device), self.data_ptr(), self.nbytes()

    def __repr__(self):
        body = "".join(f" {value}\n" for value in self.tolist())
        return f"{body}[torch.storage.UntypedStorage(device={self.device}) of size {len(self)}]"


_warned_typed = [False]


class TypedStorage:
    """A tensor's storage read as its dtype (``torch.TypedStorage``, which torch deprecates
    for ``UntypedStorage``): ``x.storage()``, warning once as torch does.

    Example:
        >>> mg.arange(3.0).storage().tolist()                       # [0.0, 1.0, 2.0]
    """

    def __init__(self, untyped, dtype):
        # its dtype as torch's dtype object (torch.float32), which NumPy reads as its own
        self._untyped, self.dtype = untyped, dtypes.torch_dtype(np.dtype(dtype))

    def untyped(self):
        """The ``UntypedStorage`` underneath."""
        return self._untyped

    def data_ptr(self):
        """The address of the first byte, an int (0 for an empty storage)."""
        return self._untyped.data_ptr()

    def nbytes(self):
        """The size in bytes, an int."""
        return self._untyped.nbytes()

    def element_size(self):
        """The bytes of one element of ``dtype``."""
        return int(self.dtype.itemsize)

    def size(self):
        """The number of elements of ``dtype`` the bytes hold."""
        return self.nbytes() // self.element_size()

    @property
    def device(self):
        """The ``mg.device`` that holds the memory."""
        return self._untyped.device

    def tolist(self):
        """The elements as Python numbers."""
        return self._untyped._items(self.dtype).tolist()

    def __len__(self):
        return self.size()

    def __getitem__(self, index):
        return self._untyped._items(self.dtype)[index].tolist()

    def __eq__(self, other):
        return isinstance(other, TypedStorage) and (self._untyped, self.dtype) == (
            other._untyped, other.dtype)

    def __hash__(self):
        return hash((self._untyped, self.dtype))

    def __repr__(self):
        body = "".join(f" {value}\n" for value in self.tolist())
        return (f"{body}[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) "
                f"of size {len(self)}]")


def is_storage(obj):
    """True for a storage (``UntypedStorage``, ``TypedStorage``), as ``torch.is_storage``;
    a Tensor is none."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


def untyped_storage(x):
    """The bytes x reads, shared with every view of the same memory
    (``torch.Tensor.untyped_storage``): an ``UntypedStorage``.

    Example:
        >>> x.untyped_storage().data_ptr() == x.T.untyped_storage().data_ptr()     # True
    """
    return UntypedStorage._of(x._array)


def warn_typed_storage(stacklevel=3):
    """torch's deprecation warning for a typed storage, the first time one is asked for."""
    if not _warned_typed[0]:
        _warned_typed[0] = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=stacklevel)


def storage(x):
    """x's storage read as x's dtype (``torch.Tensor.storage``): a ``TypedStorage``; warns
    the first time, as torch's (TypedStorage is deprecated there)."""
    warn_typed_storage()
    return TypedStorage(untyped_storage(x), x.dtype)


# ----- resize_ -----------------------------------------------------------------------------
def _shape(fn, sizes):
    shape = sizes_of(sizes)
    if len(shape) == 1 and isinstance(shape[0], _tensor.Size):
        shape = tuple(shape[0])
    for n in shape:
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
            raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(n).__name__}")
        if n < 0:
            raise RuntimeError(f"{fn}: Trying to create tensor with negative dimension {n}: "
                               f"{list(shape)}")
    return tuple(int(n) for n in shape)


def resize_(x, *sizes, size=None, memory_format=None):
    """Resize x in place to ``sizes`` (ints or one tuple), reading its storage from x's
    offset, laid out in ``memory_format`` (``torch.Tensor.resize_``; None: row-major, and
    the same shape leaves x as it is); the same or fewer elements keep the first ones of the
    storage (x stays a view of the memory it shared, at its offset, resized to no element
    and back too); more than the storage holds gives x new memory holding the old bytes
    first and zeros after (torch leaves them uninitialised, and grows the storage it shares
    with its base: NumPy cannot). Refused on a tensor that requires grad, as torch's.

    Example:
        >>> mg.arange(6.0).resize_(2, 2)               # tensor([[0., 1.], [2., 3.]])
        >>> mg.arange(24.0).resize_(1, 2, 3, 4, memory_format=mg.channels_last).stride()
        (24, 1, 8, 2)
    """
    shape = _shape("resize_", (sizes_of(sizes, size),))
    order = None
    if memory_format is not None:           # (memory_formats imports this module)
        from .memory_formats import check_format, format_order
        order = format_order(check_format("resize_", memory_format), len(shape))
    if x.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    array = x._array
    same = shape == tuple(array.shape)      # torch: no version bump, a new format or not
    if same and order is None:
        return x
    refuse_write(x)                         # an inference tensor outside its mode: unchanged
    root = _root(array)
    memory = _bytes_of(root)
    start = 0
    if memory is None:                  # no flat memory to read: x's values, as a copy
        memory = backend.array_module(array).ascontiguousarray(array).reshape(-1).view(np.uint8)
    else:                               # (an empty x too: resize_(0) kept its place below)
        start = min(max(backend.data_address(array) - backend.data_address(root), 0),
                    memory.size)
    end = start + math.prod(shape) * array.dtype.itemsize
    if end > memory.size:               # grown: new memory, the old bytes first
        grown = backend.array_module(array).zeros(end, np.uint8)
        grown[:memory.size] = memory
        memory = grown
        x._base = x._view_version = None             # it shares no base's memory now
    # NumPy points an empty slice at its parent's start: none elements are cut from one
    # (the storage offset kept for a later resize_, as torch's)
    part = memory[start:end] if end > start or start == memory.size \
        else memory[start:start + 1][:0]
    part = part.view(array.dtype)
    if order is None or list(order) == sorted(order):
        x._array = part.reshape(shape)
    else:                                   # the dims in memory order, viewed back
        x._array = part.reshape([shape[d] for d in order]).transpose(np.argsort(order))
    if not same:
        x._bump_version()
    return x


def resize_as_(input, the_template, memory_format=None):
    """``x.resize_(the_template.shape, memory_format=...)`` (``torch.Tensor.resize_as_``; the
    dtype stays x's): ``preserve_format`` takes the format torch suggests for the template.

    Example:
        >>> mg.arange(6.0).resize_as_(mg.zeros(2, 2))
    """
    if not isinstance(the_template, _tensor.Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, "
                        f"not {type(the_template).__name__}")
    if memory_format is preserve_format:
        from .memory_formats import suggest_memory_format
        memory_format = suggest_memory_format(the_template._array)
    return resize_(input, tuple(the_template.shape), memory_format=memory_format)


# ----- set_ ----------------------------------------------------------------------------------
def set_(x, source=None, storage_offset=0, size=None, stride=None):
    """Make x, in place, a view of other memory (``torch.Tensor.set_``): ``set_()`` empty,
    in memory of its own; ``set_(t)`` t's memory, offset, shape and strides (t of x's dtype);
    ``set_(t, storage_offset, size, stride=None)`` t's storage from t's own offset plus
    ``storage_offset``, as a storage (no graph from t);
    ``set_(storage, storage_offset=0, size=None, stride=None)`` the storage's elements from
    ``storage_offset`` in ``size`` (all of them, 1-D, by default) and ``stride`` (row-major
    by default), an UntypedStorage read as x's dtype. x shares the memory, not the version
    counter, and is no view in the graph: a write through it changes what the source
    reads. While grad is enabled, x then requires grad where the source Tensor does or x
    did, as torch's: a non-leaf whose backward raises (torch defines no derivative for
    ``set_``). Refused on a leaf that requires grad while grad is enabled, and past the
    storage's end (torch grows the storage there: NumPy cannot grow memory that others view).

    Example:
        >>> base = mg.arange(10.0)
        >>> mg.tensor([]).set_(base.untyped_storage(), 2, (2, 2), (3, 1))   # [[2, 3], [5, 6]]
    """
    grad = is_grad_enabled()
    if x._requires_grad and x.grad_fn is None and grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if source is None:
        array = x.xp.zeros((0,), x.dtype)
    elif isinstance(source, _tensor.Tensor):
        if source.dtype != x.dtype:
            raise RuntimeError(f"Could not set tensor of type {x.dtype} to a tensor of type "
                               f"{source.dtype}")
        if size is None:
            if storage_offset != 0:
                raise TypeError("set_(): a Tensor source takes a storage_offset only with "
                                "a size (source, storage_offset, size, stride=None)")
            array = source._array.view()        # its memory, offset, shape and strides
        else:     # torch's: the source's storage from its own offset on, and no graph
            array = _view_of_storage(x, source.untyped_storage(),
                                     source.storage_offset() + storage_offset, size, stride)
            source = None
    elif isinstance(source, (UntypedStorage, TypedStorage)):
        array = _view_of_storage(x, source, storage_offset, size, stride)
    else:
        raise TypeError(f"set_(): source must be a Tensor or a storage, got "
                        f"{type(source).__name__}")
    refuse_write(x)                         # an inference tensor outside its mode: unchanged
    inputs = [t for t in (x, source) if isinstance(t, _tensor.Tensor) and t._requires_grad]
    if grad and inputs:                     # torch's node without a derivative
        node = Set_.apply(*[_tensor._snapshot(t, [0]) if t is x else t for t in inputs],
                          value=array)
        x.grad_fn, x._output_index, x._requires_grad = node.grad_fn, node._output_index, True
    x._array = array
    x._base = x._view_version = None
    x._bump_version()
    return x


class Set_(Function):
    """The node of ``set_`` on a tensor that requires grad, or from one: torch records one
    whose backward raises, having no derivative for it."""

    @staticmethod
    def forward(ctx, *arrays, value):
        return value                        # x's new memory: the node's output is x

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for set_ is not implemented")


def _storage_bytes(fn, x, storage):
    # (the storage's flat bytes, how many of x's dtype they hold); a typed storage of
    # another dtype is torch's RuntimeError
    if isinstance(storage, TypedStorage):
        if storage.dtype != x.dtype:
            raise RuntimeError(f"Expected a Storage of type {x.dtype} or an UntypedStorage, "
                               f"but got type {storage.dtype} for argument 1 'storage'")
        storage = storage.untyped()
    memory = _bytes_of(storage._array)
    if memory is None:
        raise RuntimeError(f"{fn}: the storage is not one contiguous block")
    return memory, memory.size // x.dtype.itemsize


def _view_of_storage(x, storage, storage_offset, size, stride):
    # the storage's elements from storage_offset in size and stride, x's dtype, shared
    memory, count = _storage_bytes("set_", x, storage)
    if isinstance(storage_offset, numbers.Integral) and storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    offset = _shape("set_", (storage_offset,))[0]
    shape = (count - min(offset, count),) if size is None else _shape("set_", (size,))
    if stride is None:
        stride = row_major_strides(shape)
    stride = _shape("set_", (stride,)) if len(tuple(stride)) else ()
    if len(stride) != len(shape):
        raise RuntimeError(f"unequal size length ({len(shape)}) and stride length "
                           f"({len(stride)})")
    needed = offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) \
        else offset
    if needed > count:
        raise RuntimeError(f"set_: sizes {list(shape)}, strides {list(stride)} and storage "
                           f"offset {offset} reach element {needed - 1} of a storage of "
                           f"{count}: torch grows the storage, which NumPy cannot")
    elements = memory[:count * x.dtype.itemsize].view(x.dtype)
    # (an empty view at the end of the storage: NumPy points an empty slice at its start)
    first = elements[offset:] if offset < count else elements[:0]
    xp = backend.array_module(memory)
    return xp.lib.stride_tricks.as_strided(first, shape,
                                           [s * x.dtype.itemsize for s in stride])


# ----- the legacy constructor ------------------------------------------------------------
def new(x, *args, device=None, size=None):
    """torch's legacy ``x.new(...)``, of x's dtype and device (``torch.Tensor.new``):
    ``new(2, 3)`` or ``new(size=(2, 3))`` or ``new(mg.Size([2, 3]))`` an uninitialised tensor
    (zeros here); ``new([1, 2])`` (a list, a tuple, an array) a copy of that data in x's
    dtype; ``new()`` an empty one; ``new(other)`` a view of ``other`` (of x's dtype and
    device); ``new(storage)`` the storage's memory read as x's dtype.

    Example:
        >>> x = mg.ones(2, dtype=mg.float64); x.new(2, 3).shape, x.new([1, 2]).dtype
    """
    if device is not None and backend.check_device(device) != x.device.type:
        raise RuntimeError(f"legacy constructor expects device type: {x.device.type} but "
                           f"device type: {backend.check_device(device)} was passed")
    if size is not None:
        if args:
            raise TypeError("new() received an invalid combination of arguments: sizes given "
                            "both positionally and as size=")
        return _uninitialised(x, _shape("new", (size,)))
    if not args:
        return _uninitialised(x, (0,))
    data = args[0]
    if len(args) > 1 or isinstance(data, numbers.Integral) and not isinstance(
            data, (bool, np.bool_)):
        return _uninitialised(x, _shape("new", args))        # new(2, 3), new(4): sizes
    if isinstance(data, _tensor.Size):
        return _uninitialised(x, tuple(data))
    if isinstance(data, (UntypedStorage, TypedStorage)):
        return _over_storage(x, data)
    if isinstance(data, _tensor.Tensor):
        if device is not None:
            raise RuntimeError("Legacy tensor new of the form tensor.new(tensor, device=device) "
                               "is not supported.  Use torch.as_tensor(...) instead.")
        if data.dtype != x.dtype or data.device != x.device:
            raise TypeError(f"new(): expected a tensor of dtype {x.dtype} on {x.device}, got "
                            f"{data.dtype} on {data.device}")
        return arrange.view(data, tuple(data.shape))    # torch's alias: the same memory
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if not isinstance(data, (list, tuple, np.ndarray)) and not backend.is_cupy_array(data):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    array = backend.new_array(data, x.dtype, x.device)
    return _tensor.Tensor._leaf("new", array, False)


def _uninitialised(x, shape):
    return _tensor.Tensor._leaf("new", x.xp.zeros(shape, x.dtype), False)


def _over_storage(x, storage):
    # the storage's bytes as x's dtype: shared memory, as torch's Tensor.new(storage)
    memory, count = _storage_bytes("new(storage)", x, storage)
    return _tensor.Tensor._leaf("new", memory[:count * x.dtype.itemsize].view(x.dtype), False)


# ----- the sizes and address of a tensor's elements -------------------------------------------
def nelement(x):
    """The number of elements, an int (``numel``)."""
    return int(x._array.size)


def element_size(x):
    """The bytes of one element, an int (4 for float32)."""
    return int(x._array.dtype.itemsize)


def _nbytes(x):
    """The bytes of the elements, ``numel() * element_size()``, an int (an expanded view
    counts each element it shows, as torch's)."""
    return int(x._array.size) * int(x._array.dtype.itemsize)


nbytes = property(_nbytes)


def data_ptr(x):
    """The address of x's first element, an int (a view's is inside its base's memory); 0
    for an empty tensor, as torch's."""
    return 0 if x._array.size == 0 else backend.data_address(x._array)


# ----- x.new_full, x.new_empty: the factories of x's dtype and device -----------------------
def new_full(x, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    """A tensor of ``size`` (a tuple of ints) filled with ``fill_value``, of x's dtype and
    device unless given (``torch.Tensor.new_full``); ``layout`` and ``pin_memory`` checked as
    every factory's (``factory_memory``).

    Example:
        >>> mg.zeros(2, dtype=mg.int64).new_full((2, 3), 7)    # int64 sevens, (2, 3)
    """
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full: size must be a tuple of ints, got {type(size).__name__} "
                        f"{size!r}")
    factory_memory("new_full", layout, pin_memory)
    size = size_args("new_full", (size,))
    dtype = x.dtype if dtype is None else dtypes.as_dtype(dtype)
    array = filled("new_full", size, fill_value, dtype)
    device = x.device if device is None else device
    return _tensor.Tensor._leaf("new_full", backend.to_device(array, device), requires_grad)


def new_empty(x, *sizes, size=None, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    """A tensor of ``size`` (ints, one tuple or ``size=``) of x's dtype and device unless
    given (``torch.Tensor.new_empty``); its values are zeros here. ``layout`` and
    ``pin_memory`` as every factory's.

    Example:
        >>> mg.ones(3).new_empty(2, 4).shape                  # (2, 4), x's dtype
    """
    return x._new_filled("new_empty", 0, sizes_of(sizes, size), dtype, device, requires_grad,
                         layout, pin_memory)


METHODS = ("untyped_storage", "storage", "resize_", "resize_as_", "set_", "new", "nelement",
           "element_size", "nbytes", "data_ptr", "new_full", "new_empty", *FLAGS)
