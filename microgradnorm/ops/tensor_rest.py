"""The rest of ``torch.Tensor``'s dense vocabulary: the attributes torch exposes on the class
(``grad_fn``, ``name``, ``volatile``, ``grad_dtype``), subclass views (``as_subclass``), the
layout questions (``dim_order``, ``is_set_to``, ``const_data_ptr``, ``dense_dim``, ...),
the deprecated and removed methods with torch's warnings and errors (``resize``, ``eig``,
``reinforce``, ...), ``map2_``, ``module_load``, ``hash_tensor`` and ``slice_inverse``.

``METHODS`` names what ``ops/methods.py`` binds as ``Tensor`` methods."""

import warnings

import numpy as np

from .. import dtypes
from . import base
from ..autograd import views
from ..tensor import Tensor
from .complex import conj_physical
from .index_writes import as_strided_scatter  # noqa: F401 -- bound as the method
from .protocol import _check_plain, _type_name, _write
from . import storage as storage_ops
from .legacy_storages import STORAGES
from .storage import TypedStorage, memory_format

METHODS = ("grad_fn", "name", "volatile", "grad_dtype", "_grad_cast", "_check_grad_dtype",
           "as_subclass", "const_data_ptr",
           "dim_order", "is_set_to", "is_shared", "is_distributed", "is_coalesced",
           "dense_dim", "sparse_dim", "resize", "resize_as", "map2_", "module_load",
           "conj_physical_", "as_strided_scatter", "slice_inverse", "hash_tensor", "eig",
           "lstsq", "solve", "symeig", "reinforce", "storage_type")

# torch's instance attributes are descriptors on its class (code asks
# ``hasattr(torch.Tensor, "grad_fn")``); here every Tensor sets its own in ``_from_op``, so a
# class-level default answers the class without a property on the hot path
grad_fn = None
name = None


def _volatile_get(self):
    """Always False, with torch's warning: ``volatile`` was removed (use ``mg.no_grad()``);
    setting it only warns."""
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _volatile_set(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                  "instead.", UserWarning, stacklevel=2)


volatile = property(_volatile_get, _volatile_set)

_UNSET = object()


def _leaf_only(self, verb):
    if self.grad_fn is not None:
        raise RuntimeError(f"grad_dtype can only be {verb} on leaf tensors.")


def _grad_dtype_get(self):
    """The dtype of a leaf's gradient: the tensor's dtype unless set, as torch's. Set to a
    dtype, every gradient that reaches the leaf is cast to it (its hooks, ``mg.grad`` and
    ``.grad`` see that dtype) and a ``.grad`` of that dtype may be assigned; None keeps the
    gradient's dtype and takes a ``.grad`` of any dtype. Only a leaf has it: reading or
    setting it on a non-leaf is torch's RuntimeError, and so is setting it to a dtype other
    than that of a ``.grad`` already held.

    Example:
        >>> x = mg.ones(2, dtype=mg.float16, requires_grad=True)
        >>> x.grad_dtype = mg.float32
        >>> (x * 2).sum().backward(); x.grad.dtype                # float32
    """
    _leaf_only(self, "accessed")
    given = self.__dict__.get("_grad_dtype", _UNSET)
    return self.dtype if given is _UNSET else given


def _grad_dtype_set(self, value):
    _leaf_only(self, "set")
    if value is not None and not dtypes.is_dtype(value):
        raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got "
                           f"{_type_name(value)}")
    held = self._grad
    if held is not None and value is not None and held.dtype != value:
        raise RuntimeError(f"Cannot set grad_dtype to {value} because there is already a "
                           f"gradient with dtype {held.dtype}: set .grad = None first, or "
                           "choose the gradient's dtype")
    self._grad_dtype = value
    self._grad_cast = True       # the engine's cue to cast the leaf's gradient (hooks.py)


# a class default: the engine reads it for each leaf it reached, without a property call
_grad_cast = False


def _check_grad_dtype(self, dtype):
    """Refuse assigning a ``.grad`` of ``dtype`` where ``grad_dtype`` does not allow it."""
    allowed = self.__dict__.get("_grad_dtype", self.dtype)
    if allowed is not None and dtype != allowed:
        raise RuntimeError(f"assigned grad has data of dtype {dtype}, different from the "
                           f"tensor's grad_dtype {allowed} (its dtype unless grad_dtype is "
                           "set; None allows any)")


grad_dtype = property(_grad_dtype_get, _grad_dtype_set)


def as_subclass(self, cls):
    """The same memory as a ``cls`` instance, still in the graph (an alias node), as torch's
    ``Tensor.as_subclass``; ``cls`` must be a subclass of Tensor (else TypeError).

    Args:
        cls (type): a subclass of ``Tensor``.

    Example:
        >>> class Marked(mg.Tensor): pass
        >>> m = mg.ones(2).as_subclass(Marked)      # m[0] = 5 writes the original too
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        f"Tensor is not possible (got {cls!r}). Make sure your class "
                        "inherits from Tensor.")
    out = views.alias(self)
    out.__class__ = cls        # the alias's fields and node, seen as the subclass
    return out


def const_data_ptr(self):
    """The address of the first element, as ``data_ptr()`` (torch's read-only spelling)."""
    return self.data_ptr()


def _should_swap(shape, strides, a, b):
    # torch's elementwise output order: a zero stride decides nothing; equal strides put the
    # larger dim outside
    if strides[a] == 0 or strides[b] == 0:
        return 0
    if strides[a] != strides[b]:
        return -1 if strides[a] < strides[b] else 1
    return 1 if shape[a] > shape[b] else 0


def dim_order(self, *, ambiguity_check=False):
    """The dims from the outermost in memory to the innermost, as torch's ``dim_order``.

    Args:
        ambiguity_check (bool or list of memory formats): True: a tensor with a size-1 dim
            or two equal neighbouring strides (more than one order fits) raises
            RuntimeError; a list: it raises unless exactly one of those formats fits.

    Example:
        >>> mg.ones(2, 3).t().dim_order()       # (1, 0)
    """
    if not isinstance(ambiguity_check, bool) and not (
            isinstance(ambiguity_check, list)
            and all(isinstance(f, memory_format)
                    for f in ambiguity_check)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                        f"formats (got {ambiguity_check!r}).")
    shape, strides = tuple(self.shape), self.stride()
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    if ambiguity_check is not False:
        several = any(s == 1 for s in shape) or any(a == b for a, b in zip(strides, strides[1:]))
        fits = sum(bool(self.is_contiguous(memory_format=f)) for f in formats)
        if several and fits != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "exact one of the given memory formats.")
    perm = list(reversed(range(len(shape))))
    for i in range(1, len(perm)):
        right = i
        for left in reversed(range(i)):
            order = _should_swap(shape, strides, perm[left], perm[right])
            if order > 0:
                perm[left], perm[right] = perm[right], perm[left]
                right = left
            elif order < 0:
                break
    return tuple(reversed(perm))


def is_set_to(self, tensor):
    """True when ``tensor`` shows this tensor's memory exactly: the same storage, offset,
    sizes and strides, as torch's ``is_set_to``.

    Example:
        >>> t = mg.ones(2, 3); t.is_set_to(t), t.is_set_to(t.view(6))     # True, False
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{_type_name(tensor)}")
    return (self.untyped_storage() == tensor.untyped_storage()
            and self.storage_offset() == tensor.storage_offset()
            and tuple(self.shape) == tuple(tensor.shape) and self.stride() == tensor.stride())


def is_shared(self):
    """Whether ``share_memory_()`` was called on this tensor (one process holds the data
    here, so that call only marks it)."""
    return bool(self.__dict__.get("_shared", False))


def is_distributed(self):
    """False: no tensor here is spread over processes, as torch's dense tensors."""
    return False


def _check_sparse(self, fn):
    if str(self.layout) == "torch.strided":
        raise RuntimeError(f"{fn} expected sparse coordinate tensor layout but got Strided")


def is_coalesced(self):
    """A sparse tensor's question: a dense (strided) tensor raises torch's RuntimeError."""
    _check_sparse(self, "is_coalesced")
    return True


def dense_dim(self):
    """The number of dense dims: all of a strided tensor's (``ndim``), as torch's."""
    return self.ndim


def sparse_dim(self):
    """The number of sparse dims: 0 for a strided tensor, as torch's."""
    return 0


def _resized(self, sizes, fn):
    warnings.warn(f"non-inplace {fn} is deprecated", UserWarning, stacklevel=3)
    if not all(isinstance(size, int) for size in sizes):
        # torch's autograd resize takes the sizes one by one: a sequence is one odd size
        raise RuntimeError(f"requested resize to {', '.join(map(str, sizes))}: {fn} takes "
                           "the sizes as separate ints, and the number of elements cannot "
                           "change")
    count = int(np.prod(sizes, dtype=np.int64))
    if count != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({count} "
                           f"elements in total), but the given tensor has a size of "
                           f"{'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           f"autograd's {fn} can only change the shape of a given tensor, "
                           "while preserving the number of elements.")
    return self.reshape(sizes)


def resize(self, *sizes):
    """Deprecated (torch's UserWarning): this tensor in the shape ``sizes``, which must hold
    as many elements (else RuntimeError), as torch's autograd ``resize``.

    Example:
        >>> mg.arange(6.).resize(2, 3)          # warns; shape (2, 3)
    """
    return _resized(self, sizes, "resize")


def resize_as(self, tensor):
    """Deprecated (torch's UserWarning): ``resize(*tensor.shape)``."""
    return _resized(self, tuple(tensor.shape), "resize_as")


def map2_(self, x, y, callable):
    """In place: each element replaced by ``callable(element, a, b)``, ``a`` and ``b`` the
    elements of ``x`` and ``y`` broadcast to this shape, as torch's ``Tensor.map2_``.

    Args:
        x, y (Tensor): of this tensor's dtype (else TypeError), broadcastable to its shape.

    Example:
        >>> mg.tensor([1., 2.]).map2_(mg.tensor([3., 4.]), mg.tensor(2.), lambda s, a, b: s + a * b)
    """
    _check_plain("map2_", self)
    for label, other in (("x", x), ("y", y)):
        if not isinstance(other, Tensor):
            raise TypeError(f"map2_(): argument '{label}' must be Tensor, not "
                            f"{_type_name(other)}")
        if other.dtype != self.dtype:
            raise TypeError(f"map2_: expected {self.type()} for argument '{label}' (got "
                            f"{other.type()})")
    a, b = (np.asarray(t.detach().expand(self.shape)._array).reshape(-1).tolist()
            for t in (x, y))
    return _write(self, [callable(s, p, q) for s, p, q in
                         zip(self._array.reshape(-1).tolist(), a, b)])


def module_load(self, other, assign=False):
    """What ``Module.load_state_dict`` swaps in for this parameter or buffer when
    ``mg.__future__`` swaps tensors: ``other.detach()`` with ``assign``, else this tensor
    written with ``other``'s values, detached, as torch's default ``module_load``.

    Args:
        other (Tensor): the state dict's value for this tensor.
        assign (bool): the ``assign`` given to ``load_state_dict``.
    """
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def conj_physical_(self):
    """In place: the complex conjugate written into this tensor (a real tensor is left
    as it is, its version still moved), as torch's ``conj_physical_``."""
    return self.copy_(conj_physical(self))


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The tensor ``src`` would be if this tensor were ``src``'s slice
    ``[start:end:step]`` along ``dim``: ``src``'s sizes and strides over this tensor's
    memory, starting ``start`` steps before it (torch's ``slice_inverse``); memory the
    storage does not hold is torch's RuntimeError.

    Example:
        >>> x = mg.arange(12.).reshape(4, 3); x[1:3].slice_inverse(x, 0, 1, 3)   # x's values
    """
    dim = dim + src.ndim if dim < 0 else dim
    first = 0 if start is None else start
    first = max(0, first + src.shape[dim] if first < 0 else first)
    offset = input.storage_offset() - first * src.stride()[dim]
    return input.as_strided(tuple(src.shape), src.stride(), offset)


_HASH_SOURCE = {"f": np.float64, "i": np.int64, "u": np.int64, "b": np.int64}


def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """The xor of the elements' bits, each first widened to float64 or int64 and read as
    uint64, over ``dim`` (all dims by default), as torch's ``hash_tensor`` (mode 0, the
    only one). A uint64 tensor, not differentiable.

    Args:
        dim (int or tuple of ints, optional): the dims reduced; an empty tensor needs one.
        keepdim (bool): keep the reduced dims as size 1.
        mode (int): 0.

    Example:
        >>> mg.tensor([1, 2]).hash_tensor()          # tensor(3, dtype=torch.uint64)
    """
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    kind = input.dtype.kind if input.dtype != dtypes.bfloat16 else "f"
    if kind not in _HASH_SOURCE:
        raise NotImplementedError(f'"xor_sum_cpu" not implemented for {input.type()!r}')
    if dim is None and input.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    axes = base.normalize_axis("hash_tensor", dim, input.ndim, reduce=True)
    axes = tuple(range(input.ndim)) if axes is None else axes
    for axis in axes:
        if input.shape[axis] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {axis} to have non-zero "
                             "size.")
    array = np.asarray(input.detach().cpu()._array).astype(_HASH_SOURCE[kind])
    bits = array.view(np.uint64)
    result = np.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim) if axes else bits
    return Tensor._from_op(np.asarray(result, dtype=np.uint64), None).to(input.device)


def _removed(fn, use):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now "
                           f"removed: torch.{fn}() and Tensor.{fn}() are gone; use {use} "
                           f"instead.")
    method.__name__ = method.__qualname__ = fn
    method.__doc__ = (f"Removed in torch 1.9 (torch's RuntimeError, as ``torch.{fn}`` and as "
                      f"the method): use ``{use}``.")
    return method


eig = _removed("eig", "torch.linalg.eig(A) (complex eigenvalues and vectors)")
lstsq = _removed("lstsq", "torch.linalg.lstsq(A, B) (arguments reversed)")
solve = _removed("solve", "torch.linalg.solve(A, B) (arguments reversed)")
symeig = _removed("symeig", "torch.linalg.eigh(A) (the lower triangle by default)")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed in torch 1.9 (torch's RuntimeError; a function only, no Tensor method): use
    ``torch.linalg.matrix_rank(A)``, whose ``hermitian`` was ``symmetric``."""
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed: "
                       "torch.matrix_rank() is gone; use torch.linalg.matrix_rank(A) "
                       "('symmetric' is now 'hermitian') instead.")


def reinforce(self, reward):
    """Removed (torch's RuntimeError): write the policy gradient with
    ``mg.distributions``: ``loss = -m.log_prob(action) * reward``."""
    raise RuntimeError("reinforce() was removed. Use torch.distributions instead: "
                       "m = Categorical(probs); action = m.sample(); "
                       "loss = -m.log_prob(action) * reward; loss.backward()")


_STORAGE_TYPES = dict(STORAGES)      # torch's classes: FloatStorage, LongStorage, ...


def storage_type(self):
    """The legacy storage class of this tensor's dtype, named as torch's (``FloatStorage``
    for float32, ``LongStorage`` for int64, ...): a ``TypedStorage`` subclass, with torch's
    warning the first time a typed storage is asked for (TypedStorage is deprecated).

    Example:
        >>> mg.ones(2).storage_type().__name__           # 'FloatStorage'
    """
    storage_ops.warn_typed_storage()
    label = self.type().rsplit(".", 1)[-1].replace("Tensor", "Storage")   # FloatStorage
    if label not in _STORAGE_TYPES:
        _STORAGE_TYPES[label] = type(label, (TypedStorage,), {"dtype": self.dtype})
    return _STORAGE_TYPES[label]
