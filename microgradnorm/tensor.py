"""``Tensor``: an array, its gradient, and the graph node that produced it.

dtype rules (PyTorch's, with NumPy's float64 as the default float):
  * Python floats become float64, Python ints int64; arrays keep their dtype.
  * float16, bfloat16, float32 and float64 tensors can require gradients; integer and bool
    tensors cannot (``requires_grad=True`` on them is a TypeError). Integer tensors are for
    indices (embeddings, targets) and take part in ops as constants.
  * A binary op promotes as PyTorch does (``ops.result_dtype``): float32 with float64
    gives float64, but a higher category wins outright (float16 with int64 is float16) and
    a Python number or a 0-d tensor never widens a dimensioned tensor of its category
    (float32 * 2.0 stays float32). A gradient always has the dtype of its tensor.
  * bfloat16 is ml_dtypes' NumPy dtype (optional: ``pip install ml_dtypes``); pass
    ``dtype="bfloat16"``. On "cuda" it is the same dtype on a CuPy array (CuPy 14 carries
    ml_dtypes' bfloat16; the fused norms run the bfloat16 CUDA kernels on its memory).
"""

import numbers
import warnings

import numpy as np

from . import autograd, backend, dtypes
from .dtypes import check_number, is_floating, is_half, is_numeric
from .tensor_methods import TorchMethods

FLOAT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)) + (
    (dtypes.bfloat16,) if dtypes.has_bfloat16() else ())


class Tensor(TorchMethods):
    """An n-dimensional array that can record the ops applied to it.

    Besides the methods below, it has the everyday ``torch.Tensor`` methods of
    ``TorchMethods`` (tensor_methods.py): min, amin, clamp, sigmoid, softmax, where,
    masked_fill, repeat, mm, gather, register_hook, ...

    Args:
        data: array_like (nested lists, numbers, a NumPy or CuPy array, or a Tensor). It is
            always copied, as by ``torch.tensor``: an in-place update of the tensor (an
            optimizer step) never writes into the caller's array.
        requires_grad: record ops on this tensor so ``backward`` can fill ``.grad``.
        dtype: NumPy dtype (or name: ``"bfloat16"`` too) to convert to; by default the
            data's own (float64 for Python floats).
        device: ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy).

    Example:
        >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        array([[2., 4.],
               [6., 8.]])
    """

    __array_priority__ = 100      # ndarray + Tensor calls Tensor.__radd__, not NumPy's add
    _hooks = None                 # a leaf's gradient hooks, {handle id: hook} (register_hook)

    def __init__(self, data, requires_grad=False, dtype=None, device="cpu"):
        backend.check_device(device)
        if isinstance(data, Tensor):
            data = data.data
        dtype = dtypes.as_dtype(dtype)
        array = backend.new_array(data, dtype, device)
        if not is_numeric(array.dtype):
            raise TypeError(f"Tensor: data must be numeric (float, int or bool), "
                            f"got dtype {array.dtype}")
        self._init(array, requires_grad)
        if requires_grad and not is_floating(array.dtype):
            raise TypeError(f"Tensor: only floating-point tensors can require grad, "
                            f"got dtype {array.dtype}")

    def _init(self, array, requires_grad, grad_fn=None, output_index=0):
        self.data = array
        self._grad = None
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn            # the Context (graph node) that made this tensor
        self._output_index = output_index
        self._version_box = [0]           # bumped by every in-place op; shared by detach()
        self._retains_grad = False
        self.name = None                  # a parameter name, set by nn.Module (for viz)

    @classmethod
    def _new(cls, fn, array, requires_grad):
        """A leaf holding ``array`` itself (not a copy), for the factories; ``fn`` names
        the caller in the error for ``requires_grad`` on a non-floating dtype."""
        if not isinstance(requires_grad, bool):
            raise TypeError(f"{fn}: requires_grad must be True or False, got {requires_grad!r}")
        if requires_grad and not is_floating(array.dtype):
            raise TypeError(f"{fn}: only floating-point tensors can require grad, got dtype "
                            f"{array.dtype}")
        if not is_numeric(array.dtype):
            raise TypeError(f"{fn}: data must be numeric (float, int or bool), got dtype "
                            f"{array.dtype}")
        tensor = cls.__new__(cls)
        tensor._init(array, requires_grad)
        return tensor

    @classmethod
    def _from_op(cls, array, ctx, output_index):
        # _init's fields, set directly: this runs once per op output
        tensor = cls.__new__(cls)
        tensor.data = array
        tensor._grad = None
        tensor.requires_grad = ctx is not None
        tensor.grad_fn = ctx
        tensor._output_index = output_index
        tensor._version_box = [0]
        tensor._retains_grad = False
        tensor.name = None
        return tensor

    # ----- properties -------------------------------------------------------------------
    @property
    def shape(self):
        """The size of each dim, a tuple of ints (``x.shape == (2, 3)``)."""
        return tuple(self.data.shape)

    @property
    def dtype(self):
        """The NumPy dtype of the data (float64, float32, int64, ...)."""
        return self.data.dtype

    @property
    def ndim(self):
        """The number of dims, ``len(x.shape)``."""
        return self.data.ndim

    @property
    def size(self):
        """The number of elements, an int (NumPy's ``size``; PyTorch's ``numel()``)."""
        return int(self.data.size)

    @property
    def device(self):
        """``"cpu"`` (the data is a NumPy array) or ``"cuda"`` (a CuPy array)."""
        return backend.device_of(self.data)

    @property
    def xp(self):
        """The array module of the data: ``numpy`` or ``cupy``."""
        return backend.array_module(self.data)

    @property
    def _version(self):
        return self._version_box[0]

    @property
    def is_leaf(self):
        """True for a tensor no recorded op made: created by the user, or a result computed
        without grad. Only leaves (and tensors that ``retain_grad()``) get ``.grad``."""
        return self.grad_fn is None

    @property
    def grad(self):
        """The gradient accumulated by ``backward()``: an array of this tensor's shape,
        dtype and device, or None. Filled for leaves that require grad, and for non-leaves
        only after ``retain_grad()``; reading it on another non-leaf warns, as in PyTorch."""
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                f"reading .grad of a non-leaf tensor (made by {self.grad_fn.name}): backward() "
                "does not fill it, so it stays None. Call .retain_grad() on the tensor before "
                "backward(), or use mg.grad(output, [tensor]) to get the gradient.",
                UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        self._grad = value

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self):
        body = np.array2string(backend.to_numpy(self.data), separator=", ", prefix="tensor(")
        extras = [f"dtype={self.dtype}"]
        if self.device != "cpu":
            extras.append(f"device={self.device!r}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"tensor({body}, {', '.join(extras)})"

    # ----- conversion -------------------------------------------------------------------
    def numpy(self, force=False):
        """The data as a NumPy array: the tensor's own memory on the CPU (a write through it
        changes the tensor), a copy for a "cuda" tensor.

        As in PyTorch, a tensor that requires grad refuses: a write through the array
        would bypass the version counter and silently corrupt the gradients of the graph
        that saved it. Call ``t.detach().numpy()`` (or ``t.numpy(force=True)``, its
        PyTorch spelling) for the shared memory at your own risk, or
        ``t.detach().numpy().copy()`` for a copy.

        Args:
            force: ``t.detach().numpy()``: hand out the memory (a copy for "cuda") also for
                a tensor that requires grad, as ``torch.Tensor.numpy(force=True)`` does.
        """
        if force:
            return backend.to_numpy(self.data)
        if self.requires_grad:
            raise RuntimeError(
                "numpy(): can't hand out the memory of a tensor that requires grad (writing "
                "to it would corrupt the gradients); use t.detach().numpy() for the shared "
                "memory, or t.detach().numpy().copy() for a copy")
        return backend.to_numpy(self.data)

    def item(self):
        """The value of a one-element tensor as a Python number (float, int or bool)."""
        if self.size != 1:
            raise ValueError(f"item(): only a one-element tensor converts to a number, "
                             f"got shape {self.shape}")
        return self.data.reshape(()).item()

    def _scalar(self, kind):
        if self.size != 1:
            raise ValueError(f"{kind}(): only a one-element tensor converts to a Python "
                             f"number, got shape {self.shape}; use .numpy() or .tolist()")
        return self.item()

    def __float__(self):
        return float(self._scalar("float"))

    def __int__(self):
        return int(self._scalar("int"))

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(t)``: the data as a NumPy array. A tensor that requires grad gives a
        copy, never its live buffer (an in-place change to the result must not bypass
        autograd); other CPU tensors share memory, as ``torch.Tensor.__array__`` does."""
        array = backend.to_numpy(self.data)              # a copy already for "cuda"
        shared = array is self.data
        if copy is False and (self.requires_grad or not shared):
            raise ValueError("np.asarray(t, copy=False): this tensor can only be copied (it "
                             "requires grad, or lives on the GPU); use t.detach().numpy()")
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:
                raise ValueError(f"np.asarray(t, dtype={np.dtype(dtype)}, copy=False): "
                                 f"converting from {array.dtype} needs a copy")
            return array.astype(dtype)                   # a new array
        if copy is True or (self.requires_grad and shared):
            return array.copy()
        return array

    def tolist(self):
        """The data as (nested) Python numbers; a copy, so allowed with requires_grad."""
        return backend.to_numpy(self.data).tolist()

    def to(self, *args, device=None, dtype=None):
        """A copy on ``device`` and/or in ``dtype`` (the tensor itself when nothing changes),
        keeping the graph: gradients flow back to the original device and dtype.

        The positional forms are PyTorch's: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)`` and ``to(other)`` (other's device and dtype). A dtype is a
        NumPy dtype, a type or a name (``"float32"``, ``"bfloat16"``).

        Example:
            >>> h = x.to(dtype="bfloat16")             # a Cast node; x.grad stays float64
            >>> h = x.to("float32")                    # the same, positionally
        """
        device, dtype = to_arguments("to()", args, device, dtype)
        out = self
        if dtype is not None and dtype != self.dtype:
            out = out.astype(dtype)
        if device is not None:
            if device != out.device:
                out = ops.ToDevice.apply(out, device=device)
        return out

    def cpu(self):
        """``self.to("cpu")``: a NumPy-backed copy, in the graph."""
        return self.to("cpu")

    def cuda(self):
        """``self.to("cuda")``: a CuPy-backed copy, in the graph (needs CuPy and a GPU)."""
        return self.to("cuda")

    def astype(self, dtype):
        """A copy converted to ``dtype``, recorded in the graph: the gradient is converted
        back to this tensor's dtype. An integer or bool result is outside the graph (it has
        no gradient), as in PyTorch. Shape: unchanged."""
        dtype = dtypes.as_dtype(dtype)
        if not is_floating(dtype):
            return Tensor._from_op(self.data.astype(dtype), None, 0)
        return ops.Cast.apply(self, dtype=dtype)

    def float(self):
        """``astype(float32)``. (To get a Python number use ``float(t)`` or ``t.item()``.)"""
        return self.astype(np.float32)

    def double(self):
        """``astype(float64)``."""
        return self.astype(np.float64)

    def half(self):
        """``astype(float16)``."""
        return self.astype(np.float16)

    def bfloat16(self):
        """``self.astype("bfloat16")`` (needs ml_dtypes), as torch's ``Tensor.bfloat16``."""
        return self.astype("bfloat16")

    def detach(self):
        """A new leaf that shares this tensor's data and version counter, outside the graph."""
        detached = Tensor._from_op(self.data, None, 0)
        detached._version_box = self._version_box
        return detached

    def clone(self):
        """A copy of the data in new memory, recorded in the graph (gradient passes through
        unchanged). Shape: unchanged."""
        return ops.Clone.apply(self)

    # ----- autograd ---------------------------------------------------------------------
    def backward(self, grad=None, retain_graph=False):
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad.

        Args:
            grad: the gradient of some scalar with respect to this tensor (array or Tensor
                of this tensor's shape); may be omitted for a one-element tensor.
            retain_graph: keep the saved arrays so backward can run through the graph again.
        """
        autograd.backward(self, grad, retain_graph)

    def retain_grad(self):
        """Also fill ``.grad`` of this non-leaf tensor during backward."""
        self._retains_grad = self.grad_fn is not None
        return self

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place (leaves only; floating dtypes only); returns self."""
        if requires_grad and not is_floating(self.dtype):
            raise TypeError(f"only floating-point tensors can require grad, got {self.dtype}")
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError("requires_grad_(False) on a non-leaf tensor; use detach()")
        self.requires_grad = requires_grad
        return self

    # ----- in-place ops (not recorded; they bump the version counter) -------------------
    def _inplace(self, update):
        if self.requires_grad and autograd.is_grad_enabled():
            raise RuntimeError(
                "in-place ops on a tensor that requires grad are not recorded in the graph; "
                "do them under mg.no_grad() (as optimizers do), or write x = x + y")
        update(self.data)
        self._version_box[0] += 1
        return self

    def add_(self, other, alpha=1.0):
        """In place ``self += alpha * other`` (not recorded; bumps the version counter).
        On a tensor that requires grad only under ``mg.no_grad()``."""
        other = _raw(other)
        return self._inplace(lambda d: d.__iadd__(other * alpha if alpha != 1.0 else other))

    def sub_(self, other):
        """In place ``self -= other``; the rules of ``add_``."""
        return self._inplace(lambda d: d.__isub__(_raw(other)))

    def mul_(self, other):
        """In place ``self *= other``; the rules of ``add_``."""
        return self._inplace(lambda d: d.__imul__(_raw(other)))

    def div_(self, other):
        """In place ``self /= other``; the rules of ``add_``."""
        return self._inplace(lambda d: d.__itruediv__(_raw(other)))

    def copy_(self, other):
        """In place: overwrite every element with ``other`` (broadcast to this shape); the
        rules of ``add_``."""
        other = _raw(other)
        return self._inplace(lambda d: d.__setitem__(Ellipsis, other))

    def fill_(self, value):
        """In place: set every element to ``value``; the rules of ``add_``."""
        return self._inplace(lambda d: d.fill(value))

    def zero_(self):
        """In place: set every element to 0; the rules of ``add_``."""
        return self.fill_(0)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    def __setitem__(self, index, value):
        value = _raw(value)
        self._inplace(lambda d: d.__setitem__(_raw_index(index), value))

    # ----- differentiable ops (defined in ops.py) ---------------------------------------
    def __add__(self, other):
        return ops.Add.apply(self, other)

    def __radd__(self, other):
        return ops.Add.apply(other, self)

    def __sub__(self, other):
        return ops.Sub.apply(self, other)

    def __rsub__(self, other):
        return ops.Sub.apply(other, self)

    def __mul__(self, other):
        return ops.Mul.apply(self, other)

    def __rmul__(self, other):
        return ops.Mul.apply(other, self)

    def __truediv__(self, other):
        return ops.Div.apply(self, other)

    def __rtruediv__(self, other):
        return ops.Div.apply(other, self)

    def __neg__(self):
        return ops.Neg.apply(self)

    def __pow__(self, exponent):
        return ops.pow(self, exponent)

    def __matmul__(self, other):
        return ops.MatMul.apply(self, other)

    def __rmatmul__(self, other):
        return ops.MatMul.apply(other, self)

    def __getitem__(self, index):
        return ops.GetItem.apply(self, index=_raw_index(index))

    def exp(self):
        """Elementwise e**x. Shape: unchanged. Backward: grad * exp(x) (the output is saved)."""
        return ops.Exp.apply(self)

    def log(self):
        """Elementwise natural logarithm. Shape: unchanged. Backward: grad / x."""
        return ops.Log.apply(self)

    def sqrt(self):
        """Elementwise square root. Shape: unchanged. Backward: grad / (2 sqrt(x))."""
        return ops.Sqrt.apply(self)

    def tanh(self):
        """Elementwise tanh. Shape: unchanged. Backward: grad * (1 - tanh(x)²)."""
        return ops.Tanh.apply(self)

    def relu(self):
        """Elementwise max(x, 0). Shape: unchanged. Backward: grad where x > 0, else 0."""
        return ops.ReLU.apply(self)

    def maximum(self, other):
        """Elementwise maximum with ``other`` (broadcast); ties split the gradient in half,
        as ``torch.maximum``. Shape: the broadcast shape."""
        return ops.Maximum.apply(self, other)

    def sum(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Sum over ``axis`` (None: every element; an int or a tuple; negative counts from
        the end). ``dim``/``keepdim`` are PyTorch's names for ``axis``/``keepdims``.

        Shape: the input's, without the reduced dims (with size 1 there if ``keepdims``).
        """
        axis, keepdims = axis_args("sum", axis, keepdims, dim, keepdim)
        return ops.Sum.apply(self, axis=ops.normalize_axis(axis, self.ndim), keepdims=keepdims)

    def mean(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Arithmetic mean over ``axis``; arguments and shape as in ``sum``."""
        axis, keepdims = axis_args("mean", axis, keepdims, dim, keepdim)
        return ops.Mean.apply(self, axis=ops.normalize_axis(axis, self.ndim), keepdims=keepdims)

    def max(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Maximum over ``axis`` (values only, like ``torch.amax``; tied maxima share the
        gradient); arguments and shape as in ``sum``. Reducing over an empty dim is an
        error (``ops.EmptyReductionError``, an IndexError and a ValueError): the maximum of
        no values is undefined, as in PyTorch."""
        axis, keepdims = axis_args("max", axis, keepdims, dim, keepdim)
        axis = ops.normalize_axis(axis, self.ndim)
        ops.check_reducible("max", self.shape, axis)
        return ops.Max.apply(self, axis=axis, keepdims=keepdims)

    def var(self, axis=None, keepdims=False, correction=1, *, dim=None, keepdim=None,
            unbiased=None):
        """Variance over ``axis``, sum((x - mean)²) / (n - correction), from the centred
        values (the stable two-pass formula). As in PyTorch, ``correction=1`` (the unbiased
        estimate) is the default; ``correction=0`` is the biased variance the norms
        normalize with. ``unbiased=True/False`` is PyTorch's older spelling of 1/0. With
        n - correction <= 0 the result is NaN (inf for a nonzero sum), as in PyTorch.
        Arguments and shape as in ``sum``."""
        axis, keepdims = axis_args("var", axis, keepdims, dim, keepdim)
        if unbiased is not None:
            if not isinstance(unbiased, bool):
                raise TypeError(f"var: unbiased must be True or False, got {unbiased!r}")
            correction = int(unbiased)
        check_number("var", "correction", correction)
        centered = self - self.mean(axis, keepdims=True)
        n = ops.reduced_size(self.shape, ops.normalize_axis(axis, self.ndim))
        with np.errstate(divide="ignore", invalid="ignore"):      # n <= correction: NaN
            return (centered * centered).sum(axis, keepdims=keepdims) / max(n - correction, 0)

    def std(self, axis=None, keepdims=False, correction=1, *, dim=None, keepdim=None,
            unbiased=None):
        """Standard deviation, ``sqrt(var(...))`` with the same arguments (unbiased by
        default, as in PyTorch). Backward: grad / (2 std) · dvar, and 0 where the standard
        deviation is 0 (a constant slice), as in PyTorch."""
        return ops_extra.StdFromVar.apply(self.var(axis, keepdims, correction, dim=dim,
                                                   keepdim=keepdim, unbiased=unbiased))

    def abs(self):
        """Elementwise |x|. Shape: unchanged. Backward: grad · sign(x) (0 at x = 0, as in
        PyTorch)."""
        return ops.Abs.apply(self)

    __abs__ = abs

    def argmax(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """The index of the largest value over ``axis`` (None: of the flattened tensor), an
        int64 tensor with no gradient; the first one of ties, and of NaNs, which count as
        the largest, as in PyTorch. An empty reduced dim is a ValueError."""
        return self._arg_reduce("argmax", axis, keepdims, dim, keepdim)

    def argmin(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """The index of the smallest value over ``axis``; the rules of ``argmax`` (NaN
        counts as the smallest)."""
        return self._arg_reduce("argmin", axis, keepdims, dim, keepdim)

    def _arg_reduce(self, name, axis, keepdims, dim, keepdim):
        axis, keepdims = axis_args(name, axis, keepdims, dim, keepdim)
        if axis is not None:
            if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
                raise TypeError(f"{name}: axis must be an int or None, got {axis!r}")
            axis = ops.normalize_axis(axis, self.ndim)
            axis = axis[0] if axis else None
        ops.check_reducible(name, self.shape, None if axis is None else (axis,))
        data = self.data if self.ndim else self.data.reshape(1)
        index = getattr(data, name)(axis=axis, keepdims=keepdims and self.ndim > 0)
        if axis is None and keepdims:
            index = index.reshape((1,) * self.ndim)
        return Tensor._from_op(self.xp.asarray(index, dtype=np.int64), None, 0)

    def reshape(self, *shape):
        """The same elements in ``shape`` (ints or one tuple; one -1 is inferred), a view
        when NumPy can make one. ``view`` is the same method. Shape: ``shape``."""
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return ops.Reshape.apply(self, shape=tuple(shape))

    view = reshape

    def flatten(self, start_dim=0):
        """Merge the dims from ``start_dim`` on into one: (2, 3, 4) -> (24,), or
        (2, 12) with ``start_dim=1``."""
        return self.reshape(self.shape[:start_dim] + (-1,))

    def split(self, split_size_or_sections, axis=0, *, dim=None):
        """Pieces along ``axis`` (``torch.Tensor.split``); see ``ops.split``."""
        return ops.split(self, split_size_or_sections, axis, dim=dim)

    def permute(self, *axes):
        """Reorder the dims (ints or one tuple): shape (s[axes[0]], s[axes[1]], ...)."""
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        return ops.Permute.apply(self, axes=tuple(axes))

    def transpose(self, axis0=-2, axis1=-1):
        """Swap two dims (by default the last two, as ``torch.transpose(x, -2, -1)``); a 0-d
        tensor takes dims 0 and -1 (and stays as it is), as in PyTorch."""
        (a,) = ops.normalize_axis(axis0, self.ndim) or (0,)
        (b,) = ops.normalize_axis(axis1, self.ndim) or (0,)
        axes = list(range(self.ndim))
        if self.ndim:
            axes[a], axes[b] = axes[b], axes[a]
        return self.permute(axes)

    @property
    def T(self):
        """All dims reversed: (a, b) -> (b, a), (a, b, c) -> (c, b, a)."""
        return self.permute(tuple(reversed(range(self.ndim))))

    def expand(self, *shape):
        """Broadcast to ``shape`` without copying (-1 keeps a dim); backward sums the
        gradient back over the broadcast dims."""
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return ops.Expand.apply(self, shape=tuple(shape))

    def unsqueeze(self, axis=None, *, dim=None):
        """A view with a new dim of size 1 at ``axis`` (``dim``: PyTorch's name);
        ``axis=-1`` appends one. Shape: (*s[:axis], 1, *s[axis:])."""
        axis, _ = axis_args("unsqueeze", axis, False, dim, None)
        if axis is None:
            raise TypeError("unsqueeze() missing the axis (or dim) to insert")
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise TypeError(f"unsqueeze: axis must be an int, got {axis!r}")
        if not -self.ndim - 1 <= axis <= self.ndim:
            raise ops.AxisError(f"unsqueeze: axis {axis} is out of range for a tensor with "
                                f"{self.ndim} dims (valid: {-self.ndim - 1} to {self.ndim})")
        axis = axis if axis >= 0 else axis + self.ndim + 1
        return self.reshape(self.shape[:axis] + (1,) + self.shape[axis:])

    def squeeze(self, axis=None, *, dim=None):
        """Remove size-1 dims: all of them with no axis, or those of ``axis`` (an int or a
        tuple) that have size 1; a named dim of another size stays, as ``torch.squeeze``
        does. A 0-d tensor takes axis 0 and -1."""
        axis, _ = axis_args("squeeze", axis, False, dim, None)
        axes = range(self.ndim) if axis is None else ops.normalize_axis(axis, self.ndim)
        drop = {a for a in axes if self.shape[a] == 1}
        return self.reshape(tuple(n for i, n in enumerate(self.shape) if i not in drop))

    # ----- comparisons: constant boolean tensors, no gradient ---------------------------
    def _compare(self, other, op):
        # compared in the dtype PyTorch would compute in (float32 x == 0-d float64 0.1
        # compares float32 values); a number takes x's dtype, as in arithmetic
        a, b, _ = ops.promote(self.data, as_tensor(other, self).data)
        return Tensor._from_op(op(a, b), None, 0)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other):
        return self._compare(other, lambda a, b: a != b)

    __hash__ = object.__hash__      # tensors are dict keys by identity, as in PyTorch

    def __bool__(self):
        if self.size != 1:
            raise RuntimeError(f"the truth value of a tensor with {self.size} elements is "
                               "ambiguous; use (t > 0).numpy().any() or .all()")
        return bool(self.item())


def axis_args(fn, axis, keepdims, dim, keepdim):
    """``axis``/``keepdims`` with PyTorch's ``dim``/``keepdim`` accepted as aliases."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"{fn}(): got both axis={axis!r} and dim={dim!r}; pass one")
        axis = dim
    if keepdim is not None:
        if keepdims:
            raise TypeError(f"{fn}(): got both keepdims and keepdim; pass one")
        keepdims = keepdim
    return axis, bool(keepdims)


def tensor(data, requires_grad=False, dtype=None, device="cpu"):
    """Create a Tensor; same arguments as ``Tensor``."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def as_tensor(value, like=None):
    """``value`` as a Tensor: tensors pass through; numbers and arrays become constants on
    ``like``'s device. A Python number takes ``like``'s dtype the way NumPy promotes it."""
    if isinstance(value, Tensor):
        return value
    if like is None:
        return Tensor(value)
    xp = like.xp
    if isinstance(value, (bool, int, float)):
        # A floating tensor keeps its dtype (NumPy does so for float16 by itself; ml_dtypes'
        # bfloat16 would widen to float64 through result_type). A half-precision one with
        # dims takes the number at float32, as PyTorch does: ops.promote then computes in
        # float32 and rounds the result to half once (and a comparison rounds the number to
        # half). A 0-d half one takes it at its own dtype: a float32 0-d stand-in would be
        # a 0-d tensor of the same category and widen it (0-d float16 * 0.1 is float16).
        dtype = (np.float32 if is_half(like.dtype) and like.ndim else like.dtype) \
            if is_floating(like.dtype) else xp.result_type(like.data, value)
        return Tensor._from_op(xp.asarray(value, dtype=dtype), None, 0)
    return Tensor._from_op(xp.asarray(value), None, 0)


def _raw(value):
    return value.data if isinstance(value, Tensor) else value


def _raw_index(index):
    if isinstance(index, tuple):
        return tuple(_raw(i) for i in index)
    return _raw(index)


from . import ops, ops_extra  # noqa: E402  (they build on Tensor; Tensor's methods call them)


def to_arguments(name, args, device=None, dtype=None):
    """``(device, dtype)`` from the arguments of a ``to`` call (``Tensor.to``,
    ``nn.Module.to``), which accept PyTorch's positional forms: ``(device)``, ``(dtype)``,
    ``(device, dtype)`` and ``(tensor)``, and the keywords. The device is checked and the
    dtype is a NumPy dtype (or None); ``name`` starts the error messages."""
    if len(args) > 2:
        raise TypeError(f"{name} takes at most 2 positional arguments (device, dtype), "
                        f"got {len(args)}")
    if len(args) == 1 and isinstance(args[0], Tensor):
        if device is not None or dtype is not None:
            raise TypeError(f"{name} with a tensor takes its device and dtype; give no "
                            "device= or dtype= beside it")
        return args[0].device, args[0].dtype
    for i, arg in enumerate(args):
        if isinstance(arg, Tensor):
            raise TypeError(f"{name}: a tensor argument must come alone, got it at "
                            f"position {i} of {len(args)}")
        if isinstance(arg, str) and arg in backend.DEVICES:
            if device is not None or i > 0:
                raise TypeError(f"{name}: the device must come first and once, got "
                                f"{arg!r} at position {i}")
            device = arg
        else:
            if dtype is not None:
                raise TypeError(f"{name}: dtype given twice ({dtype!r} and {arg!r})")
            dtype = arg
    if device is not None:
        backend.check_device(device)
    if dtype is not None:
        try:
            dtype = dtypes.as_dtype(dtype)
        except TypeError as error:
            if isinstance(dtype, str):
                raise ValueError(f"{name}: {dtype!r} is neither a device {backend.DEVICES} "
                                 "nor a dtype") from error
            raise
    return device, dtype
