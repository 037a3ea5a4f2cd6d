"""``Tensor``: an array, its gradient, and the graph node that produced it; the rules of
in-place writes. The methods that are ops (``x + y``, ``x.sum()``, ``x.to()``, ...) are the
functions of the ``ops`` family modules, which bind them when ``ops`` is imported
(``ops/methods.py``): tensor imports autograd, ops imports tensor, never the other way;
dtypes promote as PyTorch's (docs/architecture.md, "dtypes")."""

import warnings

import numpy as np

from . import autograd, backend, dtypes, printing, tensor_data
from .autograd import inference, saved_hooks, views
from .autograd import requires_grad as flags
from .autograd.inputs import RequiresGradError
from .dtypes import check_int, is_floating, is_half, wrapped_int   # (ops.base: from here)
from .dtypes import TORCH_DTYPES as _TORCH_DTYPES, torch_dtype as _torch_dtype

_grad_enabled, _modes = autograd.is_grad_enabled, autograd._state
_open = inference._inference_open         # inference_mode blocks open, in any thread

__all__ = ["Size", "Tensor", "as_tensor", "tensor"]


class Size(tuple):
    """A shape, as ``x.shape`` and ``x.size()`` give it: a tuple of ints (``torch.Size``).
    A slice of it, ``+`` a tuple (on either side) and ``*`` an int give a Size, as torch's;
    ``repr`` reads ``Size([2, 3])``, ``str`` (so an f-string, an error message) ``(2, 3)``.

    Example:
        >>> mg.ones(2, 3).shape[1:] + (4,)                         # Size([3, 4])
    """

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for i, n in enumerate(sizes):
            if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
                raise TypeError(f"Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(n).__name__}')")
        return tuple.__new__(cls, [int(n) for n in sizes])

    def numel(self):
        """The number of elements of a tensor of this shape."""
        return int(np.prod(self, dtype=np.int64))

    def __eq__(self, other):                  # a Tensor is no shape: False, as torch's
        return False if isinstance(other, Tensor) else tuple.__eq__(self, other)

    def __ne__(self, other):
        return True if isinstance(other, Tensor) else tuple.__ne__(self, other)

    __hash__ = tuple.__hash__

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return _size(Size, item) if isinstance(index, slice) else item

    def __add__(self, other):
        return Size(tuple.__add__(self, other))       # a list: tuple's TypeError

    def __radd__(self, other):                         # (4,) + x.shape
        return Size(tuple.__add__(other, self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, times):
        out = tuple.__mul__(self, times)
        return out if out is NotImplemented else _size(Size, out)

    __rmul__ = __mul__

    def __repr__(self):
        return f"Size({list(self)})"

    __str__ = tuple.__repr__


_size, _Marked = tuple.__new__, inference.InferenceVersions     # (an inference counter)
_LEGACY = frozenset((int, list, tuple, Size, bool, float, np.int64, np.ndarray))  # torch.Tensor's
_SCALARS = frozenset(np.dtype(c).type for c in "?bhilqBHILQefd")  # read so without dtype=
_AS_DATA = object()     # Tensor(data, _AS_DATA): data as mg.tensor reads it (ints stay int64)


class Tensor:
    """An n-dimensional array that can record the ops applied to it; ``data`` (array_like)
    is copied to ``device``, ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy). As ``torch.Tensor``'s
    legacy constructor, ints are a shape (``Tensor(2, 3)``: zeros, where torch's are
    uninitialised), a list of ints or bools is data in the default dtype (``mg.tensor``
    keeps it int64), and so is a NumPy array, shared when it holds that dtype already.

    Example:
        >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> (x * x).sum().backward()             # x.grad: 2 x
    """

    __array_priority__ = 100      # ndarray + Tensor calls Tensor.__radd__, not NumPy's add
    _hooks = None                 # a leaf's gradient hooks, {handle id: hook} (register_hook)
    _post_accumulate_hooks = None  # run after .grad accumulated (autograd/hooks.py)
    _history = None               # ((node seq, snapshot), ...): in-place writes recorded
    _view_version = None          # a view's version when made (_record_inplace)
    _base = None                  # a view's base: the tensor whose memory it shows

    def __init__(self, data=(), *sizes, requires_grad=False, dtype=None, device=None):
        if (sizes or data.__class__ in _LEGACY or dtype is None and data.__class__ in _SCALARS) \
                and not (sizes and sizes[0] is _AS_DATA):
            data = tensor_data.legacy_data(data, sizes)    # torch's legacy forms: Tensor(2, 3),
            if data.__class__ is np.ndarray and dtype is None and self.__class__ is Tensor:
                dtype = dtypes.get_default_dtype()    # Tensor([1, 2]) of floats; an array
                if data.dtype == dtype and device in (None, "cpu") and data.flags.writeable:
                    return self._become_leaf("Tensor", data, requires_grad)   # in it: shared
        if isinstance(data, Tensor):
            if not (sizes or requires_grad or self.__class__ is not Tensor) \
                    and dtype is device is None:  # torch's alias: the same memory, in the graph
                return self._become(views.alias(data))
            data = data._array
        device = backend.check_device(device)
        dtype = dtypes.as_dtype(dtype)
        if dtype is None and not isinstance(data, (np.ndarray, np.generic)) \
                and not backend.is_cupy_array(data):
            try:                                  # Python numbers and lists: torch's
                given, data = data, np.asarray(data)   # defaults, floats in the default dtype
            except ValueError as error:
                data = tensor_data.torch_readable(data, None, error)      # ragged: torch's error
            if data.dtype.kind in "fc":
                dtype = tensor_data.inferred_float(given)
            elif data.dtype.kind in "uO":         # an int past int64: torch's ValueError
                dtype = tensor_data.check_python_ints(given)    # (beside a float: its dtype)
        try:
            array = backend.new_array(data, dtype, device)
        except (OverflowError, ValueError, TypeError) as error:  # numbers NumPy refuses
            array = backend.new_array(tensor_data.torch_readable(data, dtype, error), dtype, device)
        self._become_leaf("Tensor", array, requires_grad)

    def _become_leaf(self, fn, array, requires_grad):
        # this object takes _from_op's fields (listed there only) for a leaf of ``array``
        # itself, one by one: vars(self).update() slows reads
        self._become(Tensor._leaf(fn, array, requires_grad))

    def _become(self, other):
        # this object takes the fields of the Tensor ``other``, the same memory and node
        for field, value in vars(other).items():
            setattr(self, field, value)

    _wrapped_number = False     # a Python number an op took (as_tensor), as torch's

    @classmethod
    def _from_op(cls, array, ctx, output_index=0):
        """A Tensor of ``array`` itself: output ``output_index`` of ``ctx``, or a constant."""
        # every Tensor's fields, set here only (directly: this runs once per op output)
        tensor = cls.__new__(cls)
        tensor._array = array
        tensor._grad = None
        tensor._requires_grad = ctx is not None
        tensor.grad_fn = ctx              # the Context (graph node) that made this tensor
        tensor._output_index = output_index
        # bumped by every in-place op, shared by detach(); inference_mode's: marked (as torch)
        tensor._version_box = [0] if ctx is not None or not (_open[0] and _modes.inference) \
            else _Marked([0])
        tensor._retains_grad = False
        tensor.name = None                # a parameter name, set by nn.Module (for viz)
        return tensor

    @classmethod
    def _leaf(cls, fn, array, requires_grad):
        """A leaf of ``array`` itself (the constructor's, the factories'); ``fn`` starts the
        errors."""
        flags.check_new_leaf(fn, array.dtype, requires_grad)
        leaf = cls._from_op(array, None)
        leaf._requires_grad = requires_grad
        return leaf

    # ----- properties ---------------------------------------------------------------------
    @property
    def shape(self):
        """The size of each dim, a ``Size`` (a tuple of ints, ``torch.Size``)."""
        return _size(Size, self._array.shape)         # (NumPy's ints: no check to make)

    @property
    def dtype(self):
        """The dtype of the data, as torch's (``torch.float32``; also its NumPy dtype)."""
        try:
            return _TORCH_DTYPES[self._array.dtype]      # read by every op: one dict lookup
        except KeyError:
            return _torch_dtype(self._array.dtype)

    @property
    def ndim(self):
        """The number of dims, ``len(x.shape)``."""
        return self._array.ndim

    def numel(self):
        """The number of elements, an int."""
        return int(self._array.size)

    dim = ndim.fget                   # PyTorch's name, as a method

    def is_floating_point(self):
        """True for float16, bfloat16, float32 and float64 tensors."""
        return is_floating(self.dtype)

    @property
    def device(self):
        """A ``mg.device``: cpu (NumPy data) or cuda:0 (CuPy); equal to "cpu" or "cuda"."""
        return backend.torch_device(self._array)

    @property
    def xp(self):
        """The array module of the data: ``numpy`` or ``cupy``."""
        return backend.array_module(self._array)

    @property
    def _version(self):
        if self._version_box.__class__ is _Marked:          # an inference tensor: torch's
            inference.refuse_version()
        return self._version_box[0]

    def _bump_version(self):
        """Count one in-place change of this tensor's memory: the one place the version
        counter (shared with its views and ``detach()``) moves; what a node saved of it
        before then fails its check at backward. Outside ``inference_mode``, an inference
        tensor's write is refused here if not before (after it, as torch's)."""
        if self._version_box.__class__ is not list:
            inference.refuse_write(self)
        self._version_box[0] += 1

    @property
    def is_leaf(self):
        """True for a tensor no recorded op made; only leaves get ``.grad``."""
        return self.grad_fn is None

    @property
    def output_nr(self):
        """Which output of its ``grad_fn`` this tensor is (0 for a leaf), as the index in
        the ``next_functions`` edges that lead to it."""
        return self._output_index

    @property
    def data(self):
        """This tensor's memory as a new Tensor outside the graph (PyTorch's ``.data``): what
        is written through it shows here. Unlike ``detach()``, its in-place writes are not
        seen by the graph's version checks, so they can corrupt a gradient; PyTorch code
        uses it for updates such as ``p.data += -lr * p.grad``. ``.numpy()`` gives the array.
        Assigning a Tensor (``p.data = t``) makes this tensor share ``t``'s memory, whatever
        its shape, dtype or device, as torch's (``p.data = p.data.half()``); a tensor that
        requires grad takes floating or complex data only (torch's RuntimeError)."""
        data = Tensor._from_op(self._array, None)     # torch's: no counter shared, but an
        data._version_box = [0] if self._version_box.__class__ is list \
            else inference.detached_counter()      # inference tensor's .data is one too
        return data

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be set to a Tensor, got {type(value).__name__}")
        if self._requires_grad and not (is_floating(value.dtype) or dtypes.is_complex(value.dtype)):
            raise RequiresGradError("data set to a tensor that requires gradients must be "
                                    f"floating point or complex dtype, got {value.dtype}")
        self._array = value._array

    @property
    def grad(self):
        """The gradient ``backward()`` accumulated, a Tensor without history of this tensor's
        shape, dtype and device, or None; a non-leaf's warns (use ``retain_grad()``)."""
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                f"reading .grad of a non-leaf tensor (made by {self.grad_fn.name}): backward() "
                "does not fill it, so it stays None. Call .retain_grad() on the tensor before "
                "backward(), or use mg.grad(output, [tensor]) to get the gradient.",
                UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        # PyTorch's rules: None, or a Tensor of this shape, grad_dtype and device (kept as it is)
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value.device != self.device:
                raise RuntimeError(f"assigned grad has data located on {value.device}, "
                                   f"different from the tensor's device {self.device}")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has data of shape {value.shape}, "
                                   f"different from the tensor's shape {self.shape}")
            if value.dtype != self.dtype or self._grad_cast:    # grad_dtype's rule
                self._check_grad_dtype(value.dtype)
        self._grad = value

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self):
        # the slices along dim 0, x[0], x[1], ... (torch's unbind); a 0-d tensor has none
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._array.shape[0]))

    def __repr__(self):
        # torch's text (printing.py): str() falls back to it, and a Parameter prefixes it
        grad_fn = None if self.grad_fn is None else self.grad_fn.name()    # MulBackward0
        return printing.tensor_repr(self._array, grad_fn=grad_fn,
                                    requires_grad=self._requires_grad)

    # ----- conversion ---------------------------------------------------------------------
    def numpy(self, force=False):
        """The data as a NumPy array (shared on the CPU); refused if it requires grad, unless
        ``force`` (then shared all the same, as ``detach().numpy()``)."""
        if self._requires_grad and not force:
            raise RuntimeError(
                "numpy(): can't hand out the memory of a tensor that requires grad (writing "
                "to it would corrupt the gradients); use t.detach().numpy() for the shared "
                "memory, or t.detach().numpy().copy() for a copy")
        array = backend.to_numpy(self._array, for_numpy=True)
        return np.asarray(array) if isinstance(array, np.generic) else array

    def item(self):
        """The value of a one-element tensor as a Python number (float, int or bool)."""
        return self._scalar("item")

    def _scalar(self, kind):
        if self._array.size != 1:
            # torch's words: item()'s RuntimeError, float()'s and int()'s ValueError
            raise ScalarConversionError(
                f"{kind}(): only a one-element tensor converts to a Python number, got shape "
                f"{self.shape} (a Tensor with {self._array.size} elements cannot be converted "
                f"to Scalar); use .numpy() or .tolist()")
        return self._array.reshape(()).item()

    def _real(self, value, ctype):
        # a complex one converts where it is real
        if value.imag:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return value.real

    def __format__(self, spec):
        # f"{loss:.3f}": a one-element 0-d tensor formats as its number, as torch's
        if self.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __float__(self):
        value = self._scalar("float")         # (inline: float(loss) is called per step)
        return float(self._real(value, "double") if type(value) is complex else value)

    def __int__(self):
        value = self._scalar("int")
        return int(self._real(value, "int64_t") if type(value) is complex else value)

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __index__(self):        # data[i:i + T] for i in ix: an integer tensor as an index
        if self._array.size != 1 or self.dtype.kind not in "biu":
            raise TypeError("only integer tensors of a single element can be converted to "
                            "an index")
        return int(self._array.reshape(()).item())

    def __array__(self, dtype=None, copy=None):
        # np.asarray(t) shares a CPU tensor's memory; refused if it requires grad, as torch's
        # (NumPy would read the values outside the graph: t.detach() says so)
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")          # torch's words
        array = backend.to_numpy(self._array)              # a copy already for "cuda"
        shared = array is self._array
        if isinstance(array, np.generic):       # a 0-d op result can be a NumPy scalar
            array = np.asarray(array)
        if copy is False and not shared:
            raise ValueError("np.asarray(t, copy=False): a GPU tensor can only be copied; "
                             "use t.cpu().numpy()")
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:
                raise ValueError(f"np.asarray(t, dtype={np.dtype(dtype)}, copy=False): "
                                 f"converting from {array.dtype} needs a copy")
            return array.astype(dtype)                   # a new array
        if copy is True:
            return array.copy()
        return array

    def tolist(self):
        """The data as (nested) Python numbers; a copy, so allowed with requires_grad."""
        return backend.to_numpy(self._array).tolist()

    def detach(self):
        """A new leaf that shares this tensor's data and version counter, outside the graph."""
        detached = Tensor._from_op(self._array, None)
        box = self._version_box         # an inference tensor's: a counter of its own (torch's)
        detached._version_box = box if box.__class__ is list else inference.detached_counter()
        return detached

    # ----- autograd -----------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad.

        Args:
            gradient: d(loss)/d(self), of self's shape; None for a one-element tensor.
            retain_graph: keep the saved arrays, to backward through the graph again.
            create_graph: record the backward as a graph, for double backward.
            inputs: a Tensor or sequence of Tensors: accumulate into their ``.grad`` only.
        """
        if inputs is None and not create_graph:
            autograd.engine.backward(self, gradient, bool(retain_graph))
        else:
            autograd.backward(self, gradient, retain_graph, create_graph, inputs)

    def retain_grad(self):
        """Also fill ``.grad`` of this non-leaf tensor during backward (a leaf's is filled
        anyway); a RuntimeError for a tensor that does not require grad, as PyTorch's. Returns
        None, as torch's."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        self._retains_grad = self.grad_fn is not None

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place, a bool (torch's TypeError), by the assignment's
        rules but ``True`` allowed on a non-leaf (which requires grad already); returns self."""
        return flags.requires_grad_(self, requires_grad)

    @property
    def requires_grad(self):
        """Whether ops on this tensor are recorded for backward. Assigned as torch's: a bool,
        on a leaf only, ``True`` for floating or complex tensors and, outside
        ``inference_mode``, no inference tensor (RuntimeErrors)."""
        return self._requires_grad        # (the engine reads _requires_grad itself)

    requires_grad = requires_grad.setter(flags.set_flag)

    def register_hook(self, hook):
        """Call ``hook(grad)`` on this tensor's total gradient each backward; hooks run in
        registration order, each may return a replacement (not modify grad in place).
        Returns a handle whose ``remove()`` unregisters the hook."""
        return autograd.register_hook(self, hook)

    # ----- in-place: a plain write, or recorded as PyTorch does (_record_inplace) ----------
    def _inplace(self, write, compute, value=None):
        # write(data) when no graph is involved (the fast path; None: none rounds as torch's);
        # else compute(before, value), out of place from a snapshot of this tensor, and this
        # tensor takes the result
        if self._version_box.__class__ is not list:     # an inference tensor: outside the
            inference.refuse_write(self)                # mode refused, unwritten
        if _grad_enabled() and (self._requires_grad or getattr(value, "requires_grad", False)):
            return _record_inplace(self, compute, value)
        try:
            with backend.silent_floats():        # inf and NaN silently, as in Function.apply
                if write is not None:
                    try:
                        write(self._array)
                    except TypeError as error:   # NumPy's same_kind rule refused: unwritten
                        if "Cannot cast ufunc" not in str(error):
                            raise
                        write = None
                if write is None:
                    # out of place, then the cast torch allows (check_inplace_result): where
                    # NumPy refuses it (int16 into uint8, which wraps as C does) or rounds
                    # otherwise
                    result = compute(self, value)
                    check_inplace_result(self, result)
                    self._array[...] = result._array
        except ValueError as error:
            # read-only memory (an expanded tensor), or a result that does not broadcast to
            # the tensor's shape: NumPy checks both before it writes any element, so the
            # tensor is as it was; no check up front on the fast path
            if isinstance(error, RuntimeError):     # the library's own (BroadcastError)
                raise
            if "broadcast" in str(error):
                raise BroadcastError(f"in-place op: {error}") from None
            if "read-only" not in str(error) or getattr(self._array.flags, "writeable", True):
                raise
            raise _overlap_error() from None
        self._bump_version()
        return self

    def __bool__(self):
        if self._array.size != 1:
            # torch's words
            amount = "no values" if self._array.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {amount} is ambiguous; use "
                               "t.any() or t.all()")
        return bool(self.item())


class ScalarConversionError(RuntimeError, ValueError):
    """A tensor of other than one element read as a Python number: torch's RuntimeError
    (``item()``) and its ValueError (``float(t)``, ``int(t)``)."""


class BroadcastError(RuntimeError, ValueError):
    """Shapes that do not broadcast, or an in-place result whose shape is not the tensor's
    (``x.add_(y)`` with y broadcasting past x): torch's RuntimeError, and the ValueError
    NumPy raises."""


class InPlaceCastError(RuntimeError, TypeError):
    """An in-place op whose result type the tensor cannot hold (a float into an integer
    tensor, a complex into a real one): torch's RuntimeError, and NumPy's TypeError too."""


def _record_inplace(target, compute, value):
    """An in-place op the graph must record (PyTorch's rules): ``compute(before, value)``
    makes the result out of place from a snapshot of the target; the target keeps its
    memory, takes the result's values and node, and the node's input is the snapshot."""
    if target._requires_grad and target.grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation: "
            "in-place ops on a tensor that requires grad and is a leaf are allowed only "
            "under mg.no_grad() (as optimizers do); write x = x + y otherwise")
    base = positions = None
    if target._view_version is not None:        # a view: the write lands in its base too
        base = target._base
        check_writable(target._array)
        if base is not None and not getattr(target, "_element", False):
            positions = views.view_positions(base._array, target._array)
        if positions is None:
            what = ("an element x[i] of a recorded tensor, a copy here (the write would be "
                    "lost)" if getattr(target, "_element", False) else
                    "a view made inside a custom node, or of memory the graph does not know")
            raise RuntimeError(
                f"in-place op on a view (shape {tuple(target.shape)}) while the graph records "
                f"it: {what}; write into the base (x[index] = value), or clone() the view "
                "first")
        if base._requires_grad and base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
    before = _snapshot(target, [0])     # its own counter: the write below is not its change
    if saved_hooks._hooks:              # a pack hook sees the old values, as torch's
        before._array = target._array.copy()
    if value is target:                 # x.mul_(x): the old x, saved and then overwritten
        value = _snapshot(target, target._version_box)
        value._array = before._array
    result = compute(before, value)
    check_inplace_result(target, result)
    node = result.grad_fn
    if any(a is target._array for a in node._saved):      # the old values, about to go
        old = target._array.copy()
        node._saved = tuple(old if a is target._array else a for a in node._saved)
        for snapshot in (before, value):  # the node's inputs: create_graph's formulas read them
            if isinstance(snapshot, Tensor) and snapshot._array is target._array:
                snapshot._array = old
    if result.dtype != target.dtype:
        result = result.astype(target.dtype)
    target._history = (target._history or ()) + ((node.seq, before),)
    if base is not None:                         # the base's node records the write
        views.write_through(target, base, result, positions, _snapshot(base, [0]))
        return target
    target._array[...] = result._array
    target._bump_version()
    target.grad_fn, target._output_index = result.grad_fn, result._output_index
    target._requires_grad = True
    return target


class OverlapWriteError(RuntimeError, ValueError):
    """A write into read-only memory: an expanded tensor, whose elements share memory
    (torch's RuntimeError), or an ``as_strided`` view (NumPy's ValueError too)."""


def check_writable(array):
    """Raise torch's error before a write into an array NumPy holds read-only (the
    stride-0 dims of ``expand``, ``as_strided``'s views)."""
    if not getattr(array.flags, "writeable", True):                  # (CuPy: no such flag)
        raise _overlap_error()


def check_no_partial_overlap(target, value):
    """torch's refusal of an op that writes the array ``target`` while reading ``value``, a
    Tensor that shares part of its memory (``backend.partly_overlap``), before any element
    is written; anything else is let through."""
    # two arrays that own their memory share none: the common case, checked first
    if isinstance(value, Tensor) and (target.base is not None or value._array.base is not None) \
            and backend.partly_overlap(value._array, target):
        raise OverlapWriteError("unsupported operation: some elements of the input tensor "
                                "and the written-to tensor refer to a single memory "
                                "location. Please clone() the tensor before performing "
                                "the operation.")


def _overlap_error():
    return OverlapWriteError("unsupported operation: more than one element of the written-to "
                             "tensor refers to a single memory location (its array is "
                             "read-only). Please clone() the tensor before performing the "
                             "operation.")


def check_inplace_result(target, result):
    """Raise torch's error unless ``target`` can take ``result`` in place: the same shape,
    a dtype it can be cast to (``_can_cast``)."""
    if result.shape != target.shape:
        raise BroadcastError(f"in-place op: output with shape {target.shape} doesn't "
                             f"match the broadcast shape {result.shape}")
    if not _can_cast(result.dtype, target.dtype):
        raise InPlaceCastError(f"in-place op: result type {dtypes.torch_name(result.dtype)} "
                               "can't be cast to the desired output type "
                               f"{dtypes.torch_name(target.dtype)}")


def _snapshot(tensor, version_box):
    # the tensor's state now (data, node, output index) as a tensor of its own
    before = Tensor._from_op(tensor._array, tensor.grad_fn, tensor._output_index)
    before._requires_grad, before.name = tensor._requires_grad, tensor.name
    before._version_box = version_box
    return before


def _can_cast(source, target):
    # PyTorch's in-place rule: no complex result into a real tensor, no float into an
    # integer one, no int into bool
    if source.kind == "c":
        return target.kind == "c"
    return is_floating(target) or target.kind == "c" or source.kind in "iub" and (
        target.kind != "b" or source.kind == "b")


def tensor(data, requires_grad=False, dtype=None, device=None, *, pin_memory=False):
    """Create a Tensor of ``data`` in its own dtype (``torch.tensor``: ``tensor(3)`` is an
    int64 0-d tensor, where ``Tensor(3)`` has 3 elements); the arguments as ``Tensor``'s."""
    tensor_data.check_array("tensor", data)     # object, str, reversed, ...: torch's errors
    backend.check_pin_memory("tensor", pin_memory)      # as the factories' (storage.py)
    if isinstance(data, Tensor):                        # torch's advice, its UserWarning
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    elif data.__class__ in (list, tuple) and data and _first_leaf(data).__class__ is not float:
        data = _scalars_of_tensors(data)
    return Tensor(data, _AS_DATA, requires_grad=requires_grad, dtype=dtype, device=device)


def _first_leaf(data):
    while data.__class__ in (list, tuple) and data:
        data = data[0]
    return data


def _scalars_of_tensors(data):
    # torch reads a one-element tensor among a list's items, at any depth, as its number
    # ([t([1.]), t([2.])], of a tensor that requires grad too) and refuses a larger one
    if isinstance(data, Tensor):
        if data.numel() != 1:
            raise (TypeError("only integer tensors of a single element can be converted to an "
                             "index") if data.dtype.kind in "iub" else ValueError(
                "only one element tensors can be converted to Python scalars")) from None
        return data.detach().reshape(())
    if data.__class__ in (list, tuple):
        return [_scalars_of_tensors(item) for item in data]
    return data


def as_tensor(value, like=None):
    """``value`` as a Tensor: numbers and arrays become constants on ``like``'s device, a
    Python number in the dtype PyTorch gives it beside ``like``."""
    if isinstance(value, Tensor):
        return value
    if like is None:
        return tensor(value)
    xp = like.xp
    convert = dtypes.PYTHON_NUMBER.get(value.__class__)
    if convert is not None:                         # a NumPy scalar: the Python number
        value = convert(value)                      # torch reads it as, a weak one
    if isinstance(value, (bool, int, float)):
        if type(value) is int and not -(1 << 63) <= value < 1 << 64:
            check_int(value)                        # torch's OverflowError
        # A floating tensor keeps its dtype, except that a half one with dims takes the
        # number at float32 (``promote`` computes in float32 and rounds once).
        if is_floating(like.dtype):
            dtype = np.float32 if is_half(like.dtype) and like.ndim else like.dtype
        elif isinstance(value, float):              # beside an integer tensor: the default
            dtype = dtypes.get_default_dtype()
        elif like.dtype.kind in "iu" and type(value) is int:
            # wrapped into the tensor's dtype, the one add, mul, comparisons and bitwise ops
            # compute in: int8 + 300 is int8 + 44, as torch's (the ops that compute integers
            # in floating point, u8 / 300, take the int as read: ``ops.base.int_as_read``)
            dtype = like.dtype
            if not 0 <= value < 128:                # (which every integer dtype holds)
                value = wrapped_int(value, dtype)
        else:                                       # beside bool: int64; complex
            dtype = xp.result_type(like._array, value)
        if -65504.0 <= value <= 65504.0:            # (float16's range: no cast overflows)
            number = Tensor._from_op(xp.asarray(value, dtype=dtype), None)
        else:
            with backend.silent_floats():          # 1e40 in float32: inf, as torch's
                number = Tensor._from_op(xp.asarray(value, dtype=dtype), None)
        number._wrapped_number = True      # torch's: no saved-tensor hook packs it
        return number
    return Tensor._from_op(xp.asarray(value, dtype=dtypes.scalar_dtype(value, like.dtype)), None)


autograd.register_tensor(Tensor, as_tensor)    # the type Function.apply makes
