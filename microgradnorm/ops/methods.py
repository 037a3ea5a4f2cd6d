"""The Tensor methods that are ops — ``x + y``, ``x.sum()``, ``x.reshape()``, ``x.to()``,
``x.add_()``, ... — bound to ``Tensor`` when ``ops`` is imported (``bind``).

``tensor.py`` says what a tensor is: its array, its gradient, the node that made it, the
in-place rules. The ops come above it and attach themselves here, so that the import
direction is one way, autograd → tensor → ops, with no circle (docs/architecture.md).
Each method is the function of its ``ops`` family module: ``Tensor.tanh`` is
``elementwise.tanh.method``, the unchecked twin of ``mg.tanh`` (``self`` is a Tensor)."""

import math
import numbers
import operator

import numpy as np

from .. import backend, dtypes
from ..dtypes import is_floating
from ..autograd import graph, is_grad_enabled
from ..autograd.function import _next_seq
from ..autograd.inference import refuse_view_write
from ..tensor import (BroadcastError, Size, Tensor, _snapshot, check_inplace_result,
                      check_no_partial_overlap)
from . import arrange, base, binary, elementwise, indexing, linalg, logical, pointwise
from .legacy_overloads import scalar_first
from .shape_arguments import to_arguments
from . import decompositions, factorizations, products, reductions, search, special, ternary
from . import complex as complex_ops, random as random_ops
from . import shape as shape_ops          # not `shape`: that is a Tensor property
from . import index_writes, memory_formats, protocol, sorting, tensor_more
from .memory_formats import ToCopy
from . import storage as storage_ops      # not `storage`: that is a Tensor method
from . import statistics, tensor_algebra, tensor_rest, torch_more
from .base import _augmented
from .numpy_names import numpy_dim
from .elementwise import Add, Div, Mul, Sub, ToDevice
from .linalg import MatMul

__all__ = ["bind"]


class _Numel(int):
    # ``x.size``: the element count (an int, as NumPy's ``size``) that is also PyTorch's
    # method: ``x.size()`` is the shape, ``x.size(d)`` the size of dim d
    def __call__(self, dim=None):
        if dim is None:
            return Size(self.shape)
        return self.shape[base.normalize_axis("size", dim, len(self.shape), single=True)]


def _operator(function, reflected=False):
    # x + y is Add(x, y); the reflected 2 - x is Sub(2, x)
    if reflected:
        return lambda self, other: function.apply(other, self)
    return lambda self, other: function.apply(self, other)


def _numpy_write(tensor, raw, op):
    # ``data op= raw``, NumPy's in-place arithmetic, where it rounds as torch's: raw of the
    # tensor's dtype, or a number beside single or double precision, or float16 += and -=
    # a number. Else None, torch's Function out of place: NumPy computes float16 *= int64 in
    # float64 and rounds a number to float16 first (torch's mul keeps it in float32; its add
    # rounds it to float16 too, as NumPy's, bit for bit over every finite float16; not so
    # bfloat16's add: ml_dtypes rounds its sums otherwise)
    dtype = tensor._array.dtype
    if hasattr(raw, "dtype"):
        same = raw.dtype == dtype
    else:
        same = dtype.itemsize > 2 or not dtypes.is_half(dtype) or (dtype, op) in _HALF_ADDS
    return (lambda data: op(data, raw)) if same else None


_HALF_ADDS = {(np.dtype(np.float16), operator.iadd), (np.dtype(np.float16), operator.isub)}
_WIDE_SCALES = {np.dtype(np.float32): np.float32, np.dtype(np.float64): np.float64}
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _scaled_write(tensor, other, alpha):
    # ``data += alpha · other`` written in place where no graph is involved (an optimizer's
    # ``p.add_(g, alpha=-lr)``): single or double precision, ``other`` a Tensor of the same
    # dtype, alpha a real number. As ``binary.AddScaled``: alpha in the tensor's dtype,
    # float32's product exact in float64 and the sum rounded once, as torch's fused kernel.
    # Else None: ``binary.add_scaled_``, which checks and records
    scale_type = _WIDE_SCALES.get(tensor._array.dtype)
    if scale_type is None or type(alpha) not in (float, int) or type(other) is not Tensor \
            or other._array.dtype != tensor._array.dtype or other._requires_grad \
            or tensor._requires_grad and is_grad_enabled() or not abs(alpha) <= _FLOAT32_MAX:
        return None            # (an alpha past float32's range: the checked path's error)
    scale, raw = np.float64(scale_type(alpha)), other._array
    if scale_type is np.float64:
        return lambda data: np.add(data, raw * scale, out=data)

    def write(data):
        wide = np.multiply(raw, scale, out=np.empty(np.broadcast_shapes(raw.shape, data.shape)))
        np.copyto(data, np.add(wide, data, out=wide), casting="same_kind")
    return write
_FLOATING = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64),
             *([dtypes.bfloat16] if dtypes.bfloat16 is not None else [])}
_FLOAT32, _FLOAT32_MAX = np.dtype(np.float32), float(np.finfo(np.float32).max)
_INT64 = 1 << 63


def _broadcast(*shapes):
    # the broadcast shape, or None where the shapes do not broadcast
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


def _put_value(tensor, index, value):
    """``value`` as ``tensor[index] = value`` writes it, checked as torch's. A Python int is
    an int64 (else torch's ValueError); an int or a float into a floating dtype is written
    as it is: past float16's and bfloat16's range it is ±inf, as torch's (so any real number
    into those), and only float32 refuses a finite float past its max (an int64 never
    overflows it: one comparison). Any other number is ``base.fitted``'s (an integer dtype's
    range and wrap, NaN into it, a complex number's imaginary part); a Tensor
    ``index_writes.put_value``'s; a str or None is torch's TypeError."""
    dtype = tensor._array.dtype
    kind = type(value)
    if kind is int and not -_INT64 <= value < _INT64:
        raise ValueError(f"Overflow when unpacking long long: {value} (x[index] = value "
                         "reads an int as an int64, as torch's)")
    if (kind is int or kind is float) and dtype in _FLOATING:
        if kind is int or dtype != _FLOAT32 or abs(value) <= _FLOAT32_MAX \
                or not math.isfinite(value):
            return value
    elif isinstance(value, Tensor):
        value = index_writes.put_value(index, value, dtype)
        shape = value._array.shape
        return _without_leading_ones(value, shape) if shape and shape[0] == 1 else value
    elif not isinstance(value, (numbers.Number, np.generic)):
        if isinstance(value, (str, bytes)) or value is None:
            raise TypeError(f"can't assign a {kind.__name__} to a {dtype} tensor")
        if isinstance(value, np.ndarray) and value.shape and value.shape[0] == 1:
            return _without_leading_ones(value, value.shape)
        return value                            # a list: NumPy's reading
    elif isinstance(value, numbers.Real) and dtypes.is_half(dtype) and kind is not bool:
        return value
    return base.fitted("__setitem__", value, dtype)


def _without_leading_ones(value, shape):
    """``value`` (of ``shape``, led by a 1) without its leading dims of size 1, as torch's
    ``x[index] = value`` views it before broadcasting (``slicePrefix1sSize``): a (1,) value
    fills one element, a (1, 3) one a row picked by a mask."""
    k = 1
    while k < len(shape) and shape[k] == 1:
        k += 1
    return value.reshape(tuple(shape[k:]))


def _subtract(a, b, node=Sub):
    # a - b: a Python bool refused, a NumPy bool a float (base.subtraction); a bool tensor
    # or array is Sub.forward's refusal (the same helper's); node: Rsub for 2 - x
    if type(a) in _BOOLS or type(b) in _BOOLS:
        a, b = base.subtraction("sub", a, b)
    return node.apply(a, b)


_BOOLS = frozenset((bool, np.bool_))
Rsub = graph.node_alias(Sub, "Rsub", "Backward1", module=__name__)    # 2 - x: RsubBackward1


def _rtruediv(self, other):
    # torch's number / x is x.reciprocal() * number: two roundings (its MulBackward0)
    return pointwise.reciprocal(self) * other


def _cast(name, dtype, note=""):
    # x.float(), x.long(), ...: astype(dtype) under torch's name, with its own help(); as
    # torch's, the tensor itself when it already has the dtype (same memory, same node)
    def cast(self, memory_format=None):
        if memory_format is None:
            return self.astype(dtype, copy=False)
        return self.to(dtype, memory_format=memory_format)
    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"``astype({dtype}, copy=False)``{note}; the tensor itself if {dtype}; " \
        f"with ``memory_format=``, ``to({dtype}, memory_format=memory_format)``."
    return cast


class _Methods:
    """The methods ``bind`` copies onto ``Tensor``, in the families of ``ops``."""

    @property
    def size(self):
        """The number of elements, an int (NumPy's ``size``); called, PyTorch's ``size()``:
        ``x.size()`` is the shape (a ``Size``), ``x.size(d)`` the size of dim ``d``."""
        size = _Numel(self._array.size)
        size.shape = tuple(self._array.shape)
        return size

    # ----- conversion (ops/elementwise.py: ToCopy, ToDevice; clone: ops/memory_formats.py) --
    def to(self, *args, device=None, dtype=None, non_blocking=False, copy=False,
           memory_format=None):
        """A copy on ``device``, in ``dtype`` and/or laid out in ``memory_format`` (the tensor
        itself when nothing changes, unless ``copy=True``), in the graph: ``to(device)``,
        ``to(dtype)``, ``to(device, dtype)``, ``to(other)``, each with ``memory_format=``
        (``mg.channels_last``, ...; x itself where that is already its suggested format; a
        copy keeps a dense tensor's strides, else takes the dense order of its strides:
        ops/memory_formats.py). ``non_blocking`` is taken for PyTorch's code: every copy here
        is synchronous; as torch's, ``non_blocking`` and ``copy`` may follow positionally."""
        flags = len(args)
        if args and type(args[-1]) in _BOOLS:        # (rare: the scan only then)
            flags = next(i for i, a in enumerate(args) if type(a) in _BOOLS)
        if len(args) - flags > 2:
            raise TypeError(f"to() takes at most 2 positional flags (non_blocking, copy), got "
                            f"{len(args) - flags}")
        args, (non_blocking, copy) = args[:flags], \
            args[flags:] + (non_blocking, copy)[len(args) - flags:]
        device, dtype = to_arguments("to()", args, device, dtype)
        moved = device is not None and device != self.device
        recast = dtype is not None and dtype != self.dtype
        order = memory_formats.to_order(self, memory_format, recast or moved or bool(copy))
        out = memory_formats.to_layout(self, dtype, order)
        if copy and out is self and not moved:     # nothing else changes: a copy all the same
            out = memory_formats.clone(self)
        if moved:
            out = ToDevice.apply(out, device=device)
        return out

    def cpu(self, *, memory_format=None):
        """``to("cpu", memory_format=...)``: a NumPy-backed copy, in the graph (or x)."""
        return self.to("cpu", memory_format=memory_format)

    def cuda(self, device=None, non_blocking=False, *, memory_format=None):
        """``to("cuda")`` (device None, an index or "cuda:i"): a CuPy-backed copy, in the graph."""
        device = "cuda" if device is None else \
            f"cuda:{device}" if isinstance(device, int) and not isinstance(device, bool) \
            else device
        return self.to(device, non_blocking=non_blocking, memory_format=memory_format)

    def astype(self, dtype, copy=True):
        """A copy in ``dtype``, in the graph; an integer or bool result is a constant.

        Args:
            dtype: the result's dtype.
            copy: as NumPy's: False returns the tensor itself when it already has ``dtype``
                (torch's ``x.to(dtype)``, ``x.float()``); True always copies.

        Example:
            >>> x.astype("float64", copy=False) is x        # True for a float64 x
        """
        dtype = dtypes.as_dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        # torch's copy to a dtype (preserve_format): a dense tensor's strides, size-1 dims'
        # too, else the dense order of its strides (a transpose, channels-last, a slice);
        # a C-contiguous array without a size-1 dim is row-major as it is (the usual case)
        array = self._array
        order = None if dtype == self.dtype or array.flags.c_contiguous and 1 not in array.shape \
            else memory_formats.to_order(self, None, True)
        if order is not None:
            return memory_formats.to_layout(self, dtype, order)
        if not (is_floating(dtype) or dtypes.is_complex(dtype)):
            return Tensor._from_op(base.converted(self._array, dtype), None)
        return ToCopy.apply(self, dtype=dtype)

    float = _cast("float", "float32", " (``float(t)`` gives a Python number)")
    double = _cast("double", "float64")
    half = _cast("half", "float16")
    bfloat16 = _cast("bfloat16", "bfloat16", " (needs ml_dtypes)")
    long = _cast("long", "int64", ": a constant, outside the graph")
    int = _cast("int", "int32", ": a constant, outside the graph")
    bool = _cast("bool", "bool", ", True where nonzero: a constant, outside the graph")
    short = _cast("short", "int16", ": a constant, outside the graph")
    char = _cast("char", "int8", ": a constant, outside the graph")
    byte = _cast("byte", "uint8", ": a constant, outside the graph")

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """Without ``dtype``, torch's legacy type name ("torch.FloatTensor",
        "torch.cuda.LongTensor"); with one (a dtype or such a name), ``astype(dtype,
        copy=False)``. ``non_blocking`` (and torch's legacy ``async``) is taken: every copy
        here is synchronous."""
        unknown = set(kwargs) - {"async"}
        if unknown:
            raise TypeError(f"type() got an unexpected keyword argument '{unknown.pop()}'")
        if dtype is None:
            place = "torch.cuda." if self.device == "cuda" else "torch."
            return place + dtypes.TENSOR_TYPES[self.dtype]
        if isinstance(dtype, str) and dtype.endswith("Tensor"):
            dtype = dtypes.tensor_type_dtype(dtype)
        elif isinstance(dtype, protocol.LegacyType):          # t.type(mg.DoubleTensor)
            dtype = dtype.dtype
        return self.astype(dtype, copy=False)

    def type_as(self, other):
        """``astype(other.dtype, copy=False)``: the tensor itself if the dtypes match."""
        return self.astype(other.dtype, copy=False)

    # ----- what a tensor is: device, memory layout, flags (torch's habits) ---------------
    @property
    def is_cuda(self):
        """True for data on the GPU (a CuPy array)."""
        return self.device == "cuda"

    @property
    def is_cpu(self):
        """True for data in host memory (a NumPy array)."""
        return self.device == "cpu"

    layout = storage_ops.tensor_layout           # mg.strided (ops/storage.py: the flags)

    @property
    def itemsize(self):
        """The bytes of one element, an int (``element_size()``)."""
        return int(self._array.dtype.itemsize)

    @property
    def retains_grad(self):
        """True for a non-leaf tensor whose ``.grad`` backward fills (``retain_grad()``)."""
        return bool(getattr(self, "_retains_grad", False)) and self.grad_fn is not None

    def ndimension(self):
        """The number of dims (``dim()``)."""
        return self._array.ndim

    def get_device(self):
        """The GPU's index for a CUDA tensor (0), -1 for a CPU one, as torch's."""
        return 0 if self.device == "cuda" else -1

    def stride(self, dim=None):
        """The step in elements between neighbours along each dim (a tuple), or along
        ``dim``: NumPy's byte strides divided by the item size, torch's value where NumPy
        has 0 for a dim of size 1 or an empty array (``memory_formats.element_strides``)."""
        steps = memory_formats.element_strides(self._array)
        if dim is None:
            return steps
        return steps[base.normalize_axis("stride", dim, self._array.ndim, single=True)]

    def storage_offset(self):
        """Where the first element lies in the memory it shares with its base, in elements
        (0 for a tensor that owns its memory; an empty one's place as ``resize_`` left it:
        NumPy's own empty slices point where their parent starts)."""
        array = self._array
        owner = storage_ops._root(array)       # (through as_strided's wrappers too)
        if owner is array:
            return 0
        start = backend.data_address(array) - backend.data_address(owner)
        return start // array.itemsize

    def is_signed(self):
        """True for a dtype that holds negative numbers (floats, signed integers)."""
        return self._array.dtype.kind in "fic" or self.dtype == dtypes.as_dtype("bfloat16")

    def is_same_size(self, other):
        """``self.shape == other.shape``."""
        return tuple(self._array.shape) == tuple(other.shape)

    def is_nonzero(self):
        """The one element as a bool; RuntimeError for no element or more than one, as
        torch's."""
        if self._array.size != 1:
            raise RuntimeError("Boolean value of Tensor with "
                               + ("no values" if self._array.size == 0 else
                                  "more than one value") + " is ambiguous")
        return bool(self.item())

    def is_inference(self):
        """Whether this is an inference tensor (``torch.Tensor.is_inference``): made inside
        ``mg.inference_mode()``, or a view or ``detach()`` of one. Outside the mode such a
        tensor takes no in-place write, no ``requires_grad_(True)``, and is not saved for
        backward (torch's RuntimeErrors); an op's result made outside the mode, its
        ``clone()`` included, is an ordinary tensor.

        Example:
            >>> with mg.inference_mode():
            ...     y = model(x)
            >>> y.is_inference(), y.clone().is_inference()           # (True, False)
        """
        return self._version_box.__class__ is not list

    def pin_memory(self, device=None):
        """Where CuPy sees a GPU, the tensor itself: NumPy memory is what a copy to the GPU
        reads here, so there is no page-locked copy to make (torch copies into pinned
        memory). Without a GPU, torch's RuntimeError, as on its CPU-only machines."""
        if not backend.cuda_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self

    def is_pinned(self, device=None):
        """False: see ``pin_memory``."""
        return False

    def share_memory_(self):
        """The tensor itself: one process holds the data here (DataLoader workers run in
        the calling process)."""
        self._shared = True       # is_shared() answers True from now, as torch's
        return self

    def detach_(self):
        """Detach in place: no node, no gradient requirement; refused for a view, as torch's
        (detach() it instead). Nodes recorded before still backpropagate through it, but one
        that saved it raises at backward, as torch's."""
        if self._view_version is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        if self.grad_fn is not None:     # the nodes that read it so far keep what they read,
            self._history = (self._history or ()) + ((_next_seq(), _snapshot(self, [0])),)
            self._bump_version()         # and one that saved it refuses, as torch's
        self.grad_fn, self._output_index, self._requires_grad = None, 0, False
        return self

    def select(self, dim=None, index=None, *, axis=None):
        """The slice at ``index`` along ``dim``, that dim removed (``x.select(1, 2)`` is
        ``x[:, 2]``): a view in the graph. ``axis``: NumPy's name for ``dim``, as torch's."""
        if dim is None or index is None or axis is not None:
            dim = numpy_dim("select", dim, axis, missing=index is None)
        axis = base.normalize_axis("select", dim, self._array.ndim, single=True)
        index = dtypes.index_of(index)
        if index.__class__ is not int:          # a float or bool: torch's parser's TypeError
            raise TypeError(f"select(): argument 'index' must be int, not {type(index).__name__}")
        return self[(slice(None),) * axis + (index,)]

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """``mg.multinomial(self, num_samples, replacement, generator=generator)``."""
        from ..factories import multinomial              # a layer above ops
        return multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self, p=None, *, generator=None):
        """``mg.bernoulli(self, p, generator=generator)``: 1 with each element's
        probability."""
        from ..factories import bernoulli                # a layer above ops
        return bernoulli(self, p, generator=generator)

    def new_zeros(self, *sizes, size=None, dtype=None, device=None, requires_grad=False,
                  layout=None, pin_memory=False):
        """Zeros of ``size`` (ints, a tuple, ``size=``), of self's dtype and device unless given."""
        return self._new_filled("new_zeros", 0, base.sizes_of(sizes, size), dtype, device,
                                requires_grad, layout, pin_memory)

    def new_ones(self, *sizes, size=None, dtype=None, device=None, requires_grad=False,
                 layout=None, pin_memory=False):
        """Ones of ``size``, of this tensor's dtype and device unless given."""
        return self._new_filled("new_ones", 1, base.sizes_of(sizes, size), dtype, device,
                                requires_grad, layout, pin_memory)

    def _new_filled(self, fn, value, size, dtype, device, requires_grad, layout=None,
                    pin_memory=False):
        storage_ops.factory_memory(fn, layout, pin_memory)     # the factories' check
        size = base.size_args(fn, (size,))
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        device = self.device if device is None else backend.check_device(device)
        array = backend.to_device(self.xp.full(size, value, dtype=dtype), device)
        return Tensor._leaf(fn, array, requires_grad)

    # ----- in-place ops: written plainly, or recorded (Tensor._inplace) --------------------
    def add_(self, other, *deprecated, alpha=1.0):
        """In place ``self += alpha * other``, recorded when a graph needs it (a leaf that
        requires grad: only under ``mg.no_grad()``, as optimizers do); an alpha other than 1
        is ``mg.add``'s (checked as torch's, the sum rounded once). Torch's deprecated
        ``add_(alpha, other)`` is taken, with its warning (ops/legacy_overloads.py)."""
        if deprecated:
            alpha, (other,) = scalar_first("add_", (other, *deprecated), 1, "alpha",
                                           alpha != 1.0, "Number alpha, Tensor other",
                                           "Tensor other, *, Number alpha = 1")
        if alpha != 1.0 or alpha is True:       # (a bool alpha: checked as torch's)
            write = _scaled_write(self, other, alpha)
            if write is None:
                return binary.add_scaled_(self, other, alpha=alpha)
            check_no_partial_overlap(self._array, other)
            return self._inplace(write, None, other)
        raw = base.raw_number(other, self)
        check_no_partial_overlap(self._array, other)
        return self._inplace(_numpy_write(self, raw, operator.iadd), Add.apply, other)

    def sub_(self, other, *deprecated, alpha=1):
        """In place ``self -= alpha * other``; the rules of ``add_``."""
        if deprecated:
            alpha, (other,) = scalar_first("sub_", (other, *deprecated), 1, "alpha",
                                           alpha != 1, "Number alpha, Tensor other",
                                           "Tensor other, *, Number alpha = 1")
        if alpha != 1 or alpha is True:         # (a bool alpha: checked as torch's)
            write = None if alpha is True else _scaled_write(self, other, -alpha)
            if write is None:
                return binary.sub_scaled_(self, other, alpha=alpha)
            check_no_partial_overlap(self._array, other)
            return self._inplace(write, None, other)
        if type(other) is not float and type(other) is not int or self.dtype.kind == "b":
            other = base.subtraction("sub_", self, other)[1]    # a bool: torch's error
        raw = base.raw_number(other, self)
        check_no_partial_overlap(self._array, other)
        return self._inplace(_numpy_write(self, raw, operator.isub), Sub.apply, other)

    def mul_(self, other):
        """In place ``self *= other``; the rules of ``add_``."""
        raw = base.raw_number(other, self)
        check_no_partial_overlap(self._array, other)
        return self._inplace(_numpy_write(self, raw, operator.imul), Mul.apply, other)

    def div_(self, other, *, rounding_mode=None):
        """In place ``self /= other``; the rules of ``add_``. ``rounding_mode`` "trunc" or
        "floor" rounds the quotient, as ``mg.div``'s; an integer tensor takes only those."""
        if rounding_mode is not None or self.dtype.kind in "biu":
            return binary.div_checked_(self, other, rounding_mode=rounding_mode)
        raw = base.raw_number(other, self)
        check_no_partial_overlap(self._array, other)
        return self._inplace(_numpy_write(self, raw, operator.itruediv), Div.apply, other)

    def copy_(self, other, non_blocking=False):
        """In place: every element from ``other``, which must broadcast to this tensor's
        shape (torch's RuntimeError otherwise, where ``x[...] = other`` also drops leading
        dims of size 1); the rules of ``add_``. ``non_blocking`` is taken (copies are
        synchronous here)."""
        shape, own = (other._array.shape if isinstance(other, Tensor) else np.shape(other),
                      self._array.shape)
        if shape != own and _broadcast(shape, own) != own:
            raise BroadcastError(f"copy_(): output with shape {list(self.shape)} doesn't "
                                 f"match the broadcast shape {list(shape)}")
        if isinstance(other, Tensor) and other.is_meta and not self.is_meta:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")   # torch's
        return self.__setitem__(Ellipsis, other)

    def fill_(self, value):
        """In place: every element set to ``value``; the rules of ``add_``. A number the
        dtype cannot hold raises torch's error."""
        if isinstance(value, (int, float, complex, np.number, np.bool_)):
            if self.dtype == np.bool_:
                value = bool(value)                     # any nonzero number, as torch's
            value = base.fitted("fill_", value, self.dtype)
        elif isinstance(value, Tensor) and value._array.ndim:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return self.__setitem__(Ellipsis, value)

    def zero_(self):
        """In place: every element set to 0; the rules of ``add_``."""
        return self.__setitem__(Ellipsis, 0)

    def masked_fill_(self, mask, value):
        """In place ``masked_fill``; the rules of ``add_`` (a mask that broadcasts self to
        more dims is torch's RuntimeError)."""
        def write(data):
            filled = self.masked_fill(mask, value)
            check_inplace_result(self, filled)
            data[...] = filled._array
        return self._inplace(write, lambda before, v: before.masked_fill(mask, v), value)

    # ----- random fills in place (ops/random.py): torch's CPU streams -------------------
    uniform_ = random_ops.uniform_
    normal_ = random_ops.normal_
    random_ = random_ops.random_
    bernoulli_ = random_ops.bernoulli_
    exponential_ = random_ops.exponential_
    cauchy_ = random_ops.cauchy_
    log_normal_ = random_ops.log_normal_
    geometric_ = random_ops.geometric_

    __iadd__ = _augmented(add_, Add.apply)
    __isub__ = _augmented(sub_, _subtract)
    __imul__ = _augmented(mul_, Mul.apply)
    __itruediv__ = _augmented(div_, Div.apply)
    __idiv__ = __itruediv__                   # Python 2's names, which torch's Tensor keeps

    def __setitem__(self, index, value):
        # x[::-1] = v: torch's ValueError; x[uint8 mask] = 5: its error (as masked_fill_)
        index, split = indexing.parsed(index, value)
        if self._version_box.__class__ is not list and indexing.views_first(index):
            refuse_view_write(self)        # an inference tensor's view: torch's refusal
        if self._requires_grad and self.grad_fn is None and is_grad_enabled() \
                and indexing.views_first(index):
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation. (Writes into a leaf that requires grad "
                               "are allowed only under mg.no_grad().)")
        if split is not None:                           # x[0, :, [1, 2]] = v: torch's dims
            if is_grad_enabled() and (self._requires_grad or
                                      getattr(value, "requires_grad", False)):
                self[split[0]].__setitem__(split[1], value)     # recorded through the view
                return self
            value = _put_value(self, split[1], value)
            ints, rest, raw = split[0], base.raw_index(split[1]), base.raw(value)
            return self._inplace(lambda d: indexing.put(d[ints], rest, raw), None, value)
        value = _put_value(self, index, value)
        raw, raw_index = base.raw(value), base.raw_index(index)
        if isinstance(value, Tensor) and (self._array.base is not None or
                                          value._array.base is not None):
            # x[1:4] = x[:3]: torch's error (arrays that own their memory share none)
            check_no_partial_overlap(self._array[raw_index] if indexing._is_basic_index(index)
                                     else self._array, value)
        return self._inplace(lambda d: indexing.put(d, raw_index, raw),
                             lambda before, v: indexing.index_put(before, index, v), value)

    # ----- operators (ops/elementwise.py, ops/linalg.py, ops/indexing.py) -----------------
    __add__, __radd__ = _operator(Add), _operator(Add, reflected=True)
    __sub__, __rsub__ = _subtract, lambda self, other: _subtract(other, self, Rsub)
    __mul__, __rmul__ = _operator(Mul), _operator(Mul)      # 2 * x is torch's x * 2
    __truediv__, __rtruediv__ = _operator(Div), _rtruediv
    __div__, __rdiv__ = __truediv__, __rtruediv__       # (torch's aliases, called by name)
    __rmatmul__ = _operator(MatMul, reflected=True)
    __neg__ = elementwise.neg
    __pos__ = pointwise.positive
    __pow__, __rpow__ = elementwise.pow, elementwise.rpow
    __floordiv__, __rfloordiv__ = logical.operators(logical.floor_divide)     # ops/logical.py
    __mod__, __rmod__ = logical.operators(logical.remainder)
    __and__, __rand__ = logical.operators(logical.bitwise_and)
    __or__, __ror__ = logical.operators(logical.bitwise_or)
    __xor__, __rxor__ = logical.operators(logical.bitwise_xor)
    __invert__ = logical.invert
    __abs__ = elementwise.abs.method
    __matmul__ = linalg.matmul
    __getitem__ = indexing.getitem

    __lt__, __le__ = logical.comparison(operator.lt), logical.comparison(operator.le)
    __gt__, __ge__ = logical.comparison(operator.gt), logical.comparison(operator.ge)
    __eq__, __ne__ = logical.comparison(operator.eq), logical.comparison(operator.ne)
    __hash__ = object.__hash__      # tensors are dict keys by identity, as in PyTorch

    # ----- elementwise (ops/elementwise.py) -----------------------------------------------
    exp = elementwise.exp.method           # .method: self is a Tensor, nothing to check
    log = elementwise.log.method
    sqrt = elementwise.sqrt.method
    rsqrt = elementwise.rsqrt.method
    tanh = elementwise.tanh.method
    sigmoid = elementwise.sigmoid.method
    relu = elementwise.relu.method
    abs = elementwise.abs.method
    sign = elementwise.sign.method
    neg = elementwise.neg
    pow = elementwise.pow
    square = elementwise.square
    maximum = elementwise.maximum
    minimum = elementwise.minimum
    clamp = clip = elementwise.clamp
    masked_fill = elementwise.masked_fill
    tril = elementwise.tril
    triu = elementwise.triu

    def where(self, condition, other):
        """``mg.where(condition, self, other)``."""
        return elementwise.where(condition, self, other)

    # ----- reductions (ops/reductions.py) -------------------------------------------------
    sum = reductions.sum
    mean = reductions.mean
    max = reductions.max              # x.max(dim): (values, indices), as torch's
    min = reductions.min
    amax = reductions.amax
    amin = reductions.amin
    aminmax = reductions.aminmax
    median = reductions.median
    var = reductions.var
    std = reductions.std
    argmax = reductions.argmax
    argmin = reductions.argmin
    # softmax and log_softmax: fused/softmax.py binds them (their default is the fused node)
    norm = reductions.norm

    # ----- shape (ops/shape.py) -----------------------------------------------------------
    reshape = shape_ops.reshape       # view: arrange.py (reshape without a copy)
    flatten = shape_ops.flatten
    permute = shape_ops.permute
    transpose = shape_ops.transpose
    T = property(shape_ops.reversed_dims)
    t = shape_ops.t
    mT = property(shape_ops.matrix_transpose)
    expand = shape_ops.expand
    unsqueeze = shape_ops.unsqueeze
    squeeze = shape_ops.squeeze
    split = shape_ops.split_method
    chunk = shape_ops.chunk
    repeat = shape_ops.repeat

    # ----- indexing and matrix products (ops/indexing.py, ops/linalg.py) ------------------
    gather = indexing.gather
    index_select = indexing.index_select
    sort = sorting.sort
    argsort = sorting.argsort
    topk = sorting.topk
    kthvalue = sorting.kthvalue
    mode = sorting.mode
    matmul = linalg.matmul
    mm = linalg.mm
    bmm = linalg.bmm


# what every class body has, which is not a method to copy
_NOT_METHODS = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                "__firstlineno__", "__static_attributes__"}


def bind(tensor_class=Tensor):
    """Give ``tensor_class`` the op methods: those of ``_Methods``, then each family's
    ``METHODS`` (a checked function's ``.method`` is its unchecked twin for ``self``)."""
    for name, value in vars(_Methods).items():
        if name not in _NOT_METHODS:
            setattr(tensor_class, name, value)
    for family in (pointwise, special, binary, ternary, logical, shape_ops, linalg, complex_ops,
                   reductions, indexing, search, arrange, products, decompositions,
                   tensor_more, index_writes, torch_more, statistics, storage_ops,
                   factorizations, tensor_algebra, memory_formats, protocol, tensor_rest):
        for name in family.METHODS:
            function = getattr(family, name)
            setattr(tensor_class, name, getattr(function, "method", function))
