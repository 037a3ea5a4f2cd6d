"""The arrays of the "meta" device (torch's ``device="meta"``): a shape and a dtype, no data.

A meta array is a ``MetaArray``, an ndarray subclass whose every element is one stored
element (all strides 0): an ``(50257, 768)`` weight holds one float. NumPy's functions and
ufuncs given one run on that stand-in and give back meta arrays of their results' shapes and
dtypes, so every kernel and op runs unchanged on meta tensors (torch runs shape functions;
here the values are computed and dropped: the same shapes and dtypes, transient memory and
time). A write into a meta array (``out=``, ``a[...] = b``, ``np.copyto``) does nothing, as
torch's in-place ops on meta tensors; the functions whose result's shape depends on the
values (``nonzero``, ``unique``, boolean-mask selection) raise torch's NotImplementedError
where the ops ask (``refuse_values``).
"""

import numpy as np

__all__ = ["META_NUMPY", "MetaArray", "as_meta", "is_meta_array", "memory_root", "meta_array",
           "refuse_mixed", "refuse_values", "stand_in", "takes_cpu_beside_meta"]

# NumPy functions whose result's shape depends on the values: torch has no meta kernel
_DATA_DEPENDENT = {np.nonzero, np.flatnonzero, np.argwhere, np.unique, np.extract,
                   np.compress, np.bincount, np.trim_zeros}
_WRITES = {np.copyto, np.put, np.place, np.putmask, np.put_along_axis, np.fill_diagonal}


def refuse_values(name, *arrays):
    """torch's NotImplementedError where an op whose result's shape depends on the values
    (``nonzero``, ``unique``, ``masked_select``, ``x[mask]``) is given a meta array: torch has
    no meta kernel for those. The ops call it; a kernel's or a loss's own use of such a
    NumPy function (the rows a norm corrects, the targets a loss counts) runs on the
    stand-in, as its result's shape does not depend on it."""
    if any(isinstance(a, MetaArray) for a in arrays):
        raise NotImplementedError(
            f"{name}: the result's shape depends on the values, and a meta tensor has none "
            "(torch: attempted to run this operator with Meta tensors, but there was no fake "
            "impl or Meta kernel registered)")


# the ops whose meta kernels in torch check no device: the matrix products (mm, bmm,
# matmul, linear) of operands with at least 2 dims; dot and mv (a 1-d operand) check
_DEVICE_BLIND = frozenset({"MatMul", "Mm", "Bmm", "Linear"})


def takes_cpu_beside_meta(op_name, tensors):
    """torch's rule for an op given meta and CPU tensors (``tensors``, None skipped): a 0-d
    CPU tensor is a wrapped number, taken beside meta ones; the matrix products take CPU
    operands with dims too (``_DEVICE_BLIND``); any other mix is its device RuntimeError
    (the caller raises it)."""
    tensors = [t for t in tensors if t is not None]
    if all(t.device.type == "meta" or t.ndim == 0 for t in tensors):
        return True
    return op_name in _DEVICE_BLIND and all(t.ndim >= 2 for t in tensors)


def refuse_mixed(name, *arrays):
    """torch's device RuntimeError (``backend.DeviceError``) where an op that reads its
    operands as arrays (the comparisons, ``where``'s condition) is given a meta array beside
    a CPU one with dims; a 0-d CPU array (a wrapped number) is taken, as torch's."""
    arrays = [a for a in arrays if isinstance(a, np.ndarray)]
    if any(isinstance(a, MetaArray) for a in arrays) and any(
            not isinstance(a, MetaArray) and a.ndim > 0 for a in arrays):
        from .backend import DeviceError     # (backend imports this module)
        shown = ", ".join(f"{'meta' if isinstance(a, MetaArray) else 'cpu'} {a.shape}"
                          for a in arrays)
        raise DeviceError(f"{name}: all inputs must be on one device, got {shown} (a meta "
                          "tensor takes a CPU one only as a 0-d number)")


def meta_array(shape, dtype):
    """A ``MetaArray`` of ``shape`` and ``dtype`` holding one element (zero).

    Example:
        >>> a = meta_array((3, 4), np.float32)
        >>> a.shape, a.strides, memory_root(a).nbytes
        ((3, 4), (0, 0), 4)
    """
    one = np.zeros(1, dtype)
    shape = tuple(int(n) for n in shape)
    return np.ndarray.__new__(MetaArray, shape, one.dtype, one, 0, (0,) * len(shape))


def memory_root(array):
    """The array at the root of ``array``'s ``base`` chain: the memory it holds."""
    while isinstance(getattr(array, "base", None), np.ndarray):
        array = array.base
    return array


def is_meta_array(array):
    """True for a ``MetaArray`` (an array of the meta device)."""
    return isinstance(array, MetaArray)


def stand_in(value):
    """``value`` with each meta array in it (lists, tuples, dict values) as the plain
    ndarray of its one element, broadcast: what NumPy and the kernels compute on."""
    if isinstance(value, MetaArray):
        return value.view(np.ndarray)
    if isinstance(value, (list, tuple)):
        return type(value)(stand_in(v) for v in value)
    if isinstance(value, dict):
        return {key: stand_in(v) for key, v in value.items()}
    return value


def as_meta(value):
    """A result (an array, a NumPy scalar, or lists and tuples of them) as meta arrays of
    its shapes and dtypes: its memory dropped."""
    if isinstance(value, np.ndarray):
        if isinstance(value, MetaArray) or memory_root(value).size <= 1 and value.size > 0:
            return value.view(MetaArray)     # a view of a meta array's element: no memory
        return meta_array(value.shape, value.dtype)
    if isinstance(value, np.generic):
        return meta_array((), value.dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(as_meta(v) for v in value)
    return value


class MetaArray(np.ndarray):
    """An array of the meta device: its shape and dtype, all strides 0 over one element.

    Built by ``meta_array``; NumPy functions, ufuncs and methods on it give meta arrays,
    writes into it do nothing, and reading its values (``item``, ``tolist``) raises.

    Example:
        >>> (meta_array((2, 3), np.float32) @ np.ones((3, 5), np.float32)).shape
        (2, 5)
    """

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        writes = out is not None and any(isinstance(o, MetaArray) for o in out)
        if out is not None and not writes:
            kwargs["out"] = out
        result = getattr(ufunc, method)(*stand_in(inputs), **stand_in(kwargs))
        if writes:                                   # an in-place op on a meta array: none
            return out[0] if len(out) == 1 else out
        if out is not None:
            return result
        return as_meta(result)

    def __array_function__(self, func, types, args, kwargs):
        if func in _DATA_DEPENDENT:                  # an index computed on the stand-in
            return func(*stand_in(args), **stand_in(kwargs))    # (refuse_values: the ops)
        if func in _WRITES and isinstance(args[0] if args else None, MetaArray):
            return None
        out = kwargs.get("out")
        if _holds_meta(out):                         # a write into a meta array: none
            kwargs = {key: v for key, v in kwargs.items() if key != "out"}
        result = func(*stand_in(args), **stand_in(kwargs))
        if out is not None:
            return out
        return as_meta(result)

    def __getitem__(self, index):
        return as_meta(np.ndarray.__getitem__(self.view(np.ndarray), stand_in(index)))

    def __setitem__(self, index, value):
        pass                                         # a write into a meta array: none

    def astype(self, dtype, *args, **kwargs):
        return meta_array(self.shape, np.dtype(dtype))

    def copy(self, order="C"):
        return meta_array(self.shape, self.dtype)

    def reshape(self, *shape, **kwargs):
        return as_meta(self.view(np.ndarray).reshape(*shape, **kwargs))

    def ravel(self, order="C"):
        return meta_array((self.size,), self.dtype)

    def flatten(self, order="C"):
        return meta_array((self.size,), self.dtype)

    def fill(self, value):
        pass

    def item(self, *args):
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    def tolist(self):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return as_meta(array)

    def __reduce__(self):
        return meta_array, (self.shape, self.dtype)


class _MetaNumPy:
    """The array module of meta arrays (``backend.array_module``): NumPy, but its
    conversions (``asarray``, ...) keep a meta array meta, and its factories (``zeros``,
    ``empty``, ``arange``, ...) make meta arrays, so an op's fresh result buffer lives where
    its input does, as an op on CuPy arrays makes CuPy buffers."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def _converted(convert):
        def meta_conversion(a, *args, **kwargs):
            result = convert(stand_in(a), *args, **kwargs)
            return as_meta(result) if _holds_meta(a) else result
        meta_conversion.__name__ = convert.__name__
        return meta_conversion

    @staticmethod
    def _made(make):
        def meta_factory(*args, **kwargs):
            return as_meta(make(*stand_in(args), **stand_in(kwargs)))
        meta_factory.__name__ = make.__name__
        return meta_factory


def _holds_meta(value):
    if isinstance(value, MetaArray):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_meta(v) for v in value)


for _name in ("asarray", "array", "asanyarray", "ascontiguousarray", "asfortranarray",
              "require"):
    setattr(_MetaNumPy, _name, staticmethod(_MetaNumPy._converted(getattr(np, _name))))
for _name in ("zeros", "ones", "empty", "full", "arange", "linspace", "eye", "identity",
              "tri", "indices"):
    setattr(_MetaNumPy, _name, staticmethod(_MetaNumPy._made(getattr(np, _name))))
META_NUMPY = _MetaNumPy()
