"""What every op family shares: PyTorch's dtype promotion, ``unbroadcast``, half-precision
sums, the errors, and the one reading of an ``axis``."""

import functools
import numbers

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from ..autograd import is_grad_enabled
from ..dtypes import (bfloat16, complex_of, factory_shape, finfo, get_default_dtype,
                      half_through_float, index_of, is_floating, is_half, upcast_half)


# ----- dtypes ---------------------------------------------------------------------------------
def _category(dtype):
    """0 bool, 1 integer, 2 floating, 3 complex: PyTorch's type categories."""
    kind = dtype.kind
    return 0 if kind == "b" else 3 if kind == "c" else 2 if is_floating(dtype) else 1


def result_dtype(a, b):
    """The dtype PyTorch gives a binary op on arrays ``a`` and ``b``."""
    da, db = a.dtype, b.dtype
    if da == db:
        return da
    ca, cb = _category(da), _category(db)
    if (a.ndim == 0) != (b.ndim == 0):                 # one 0-d operand
        (dims, dims_cat), (zero, zero_cat) = ((db, cb), (da, ca)) if a.ndim == 0 \
            else ((da, ca), (db, cb))
        if zero_cat <= dims_cat:
            return dims
        # a complex 0-d operand beside floating dims: complex at the dims' precision
        return complex_of(dims) if zero_cat == 3 and dims_cat == 2 else zero
    dtypes.check_float8_promotion(da, db)              # float8 beside another: refused
    if ca != cb:
        high, low = (da, db) if ca > cb else (db, da)
        if {ca, cb} == {2, 3}:                         # float64 with complex64: complex128
            return np.promote_types(high, complex_of(low))
        return high
    if ca == 2 and is_half(da) and is_half(db):        # float16 with bfloat16
        return np.dtype(np.float32)
    return np.promote_types(da, db)


def promote(a, b, opmath=False):
    """``(a, b, dtype)``: the operands to compute with and ``result_dtype(a, b)``; with
    ``opmath``, half precision beside a 0-d operand computes in float32 (the caller rounds):
    the 0-d operand at float32, one with dims cast to the half dtype first, as torch's."""
    if a.dtype == b.dtype:
        return a, b, a.dtype
    dtype = result_dtype(a, b)
    compute = dtype
    if opmath and is_half(dtype) and (a.ndim == 0 or b.ndim == 0):
        compute = np.dtype(np.float32)
    with backend.silent_floats():         # a number past float16 is inf there, as torch's
        return (a if a.dtype in (dtype, compute) else a.astype(compute if a.ndim == 0 else dtype),
                b if b.dtype in (dtype, compute) else b.astype(compute if b.ndim == 0 else dtype),
                dtype)


def integer_power(xp, base, exponent):
    """torch's integer pow of arrays: wraps on overflow, and a negative exponent gives 1 for
    base 1, ±1 for base -1 and 0 for any other base (NumPy refuses negative exponents)."""
    negative = exponent < 0
    out = xp.power(base, xp.where(negative, 0, exponent).astype(exponent.dtype, copy=False))
    if negative.any():
        odd = exponent % 2 != 0
        by_base = xp.where(base == 1, 1, xp.where(base == -1, xp.where(odd, -1, 1), 0))
        out = xp.where(negative, by_base, out).astype(out.dtype, copy=False)
    return out


def half_rounded(xp, a, b, dtype, mode, divisor=None):
    """``a / b`` rounded by ``mode`` for a float16 or bfloat16 result ``dtype``, as torch's
    CPU kernels: a divisor of one element (a number, a 0-d or one-element tensor: its
    TensorIterator's scalar) is read in float32 as given, unrounded, and the quotient of a
    (rounded to dtype) is computed in float32 and rounded once; otherwise both are rounded
    to dtype and so is each step: trunc(a / b), and for floor c10's ``div_floor_floating``
    (mod = fmod(a, b); div = (a - mod) / b, less 1 where mod's sign is not b's; its floor,
    plus 1 where div - floor > 1/2; a signed 0 where div is 0; a / b where b is 0)."""
    f32 = np.float32

    def r(v):                                     # one step, rounded to dtype
        return v.astype(dtype).astype(f32)

    a = r(a)
    if b.size == 1:
        b = b.astype(f32) if divisor is None else xp.asarray(divisor, dtype=f32)
        out = xp.floor_divide(a, b) if mode == "floor" else xp.trunc(a / b)
        return out.astype(dtype)
    b = r(b)
    quotient = r(a / b)
    if mode == "trunc":
        return xp.trunc(quotient).astype(dtype)
    mod = xp.fmod(a, b)                           # exact
    div = r(r(a - mod) / b)
    div = xp.where((mod != 0) & ((b < 0) != (mod < 0)), r(div - 1), div)
    floor = xp.floor(div)
    floor = xp.where(div - floor > 0.5, r(floor + 1), floor)
    out = xp.where(div != 0, floor, xp.copysign(xp.zeros((), f32), quotient))
    return xp.where(b == 0, quotient, out).astype(dtype)


def rounded(out, dtype):
    """``out`` rounded to ``dtype``; a float quotient of integers stays float."""
    if out.dtype == dtype or (out.dtype.kind == "f" and not is_floating(dtype)):
        return out
    return out.astype(dtype)


def broadcast(op, combine, a, b):
    """``combine(a, b)``; a broadcasting error names the op and both shapes. IEEE results
    (inf - inf, x / 0, overflow) come silently, as in torch: ops run inside
    ``Function.apply`` and the backward loop, which silence NumPy's warnings."""
    try:
        return combine(a, b)
    except ValueError as error:
        if "broadcast" not in str(error):
            raise
        raise BroadcastError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                             "broadcast (compared from the last dim, each pair of sizes must "
                             "be equal or one of them 1)") from None


BroadcastError = _tensor.BroadcastError     # shapes that do not broadcast (tensor.py's)


def broadcast_shape(fn, *shapes):
    """The shape ``shapes`` broadcast to, or a ``BroadcastError`` naming ``fn`` and them."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise BroadcastError(f"{fn}(): shapes {', '.join(str(tuple(s)) for s in shapes)} do "
                             "not broadcast") from None


def arithmetic(op, combine, a, b):
    """``combine(a, b)`` in ``result_dtype(a, b)``; backward formulas use it too, so each
    intermediate is rounded where PyTorch's is."""
    if a.dtype == b.dtype:                       # the usual case: nothing to promote
        return broadcast(op, combine, a, b)
    a, b, dtype = promote(a, b, opmath=True)
    return rounded(broadcast(op, combine, a, b), dtype)


def float_input(x):
    """``x``, or a copy in the default dtype of an integer or bool ``x`` (torch's rule)."""
    return x.astype(get_default_dtype()) if x.dtype.kind in "biu" else x


def check_orderable(fn, x):
    """Raise torch's error (NotImplementedError, a RuntimeError) for a complex array ``x``:
    ``fn`` orders values (a comparison, max, relu, sort, ...), and complex numbers have none."""
    if x.dtype.kind == "c":
        raise NotImplementedError(f"{fn}: not implemented for complex tensors (dtype {x.dtype}): "
                                  "complex numbers have no order; compare x.abs() or x.real")


def check_not_bool(fn, x):
    """Raise torch's error (NotImplementedError, a RuntimeError; torch's argmax and topk
    raise a RuntimeError) for a bool tensor ``x``: ``fn`` has no kernel for bools in torch.
    Returns x."""
    if x.dtype == np.bool_:
        raise NotImplementedError(f"{fn}: not implemented for bool tensors, as in torch; "
                                  "cast first (x.to(mg.uint8))")
    return x


def subtraction(fn, a, b):
    """``(a, b)`` for ``a - b`` as torch takes them, or its RuntimeError for a bool there: a
    bool tensor (or array) on either side, or a Python bool (``x - True``, ``True - x``); a
    NumPy bool is the number torch reads it as, a float (``x - np.True_`` is ``x - 1.0``)."""
    for value in (a, b):
        kind, dtype = type(value), getattr(value, "dtype", None)
        if kind is bool or dtype is not None and dtype.kind == "b" and kind is not np.bool_:
            raise RuntimeError(f"{fn}: subtraction, the `-` operator, with a bool tensor is "
                               "not supported; to invert a mask use `~` or logical_not()")
    if type(a) is np.bool_ or type(b) is np.bool_:
        return (float(a) if type(a) is np.bool_ else a), (float(b) if type(b) is np.bool_ else b)
    return a, b


def torch_sign(x):
    """A new array of -1, 0 or 1 by the sign of ``x``, +0 for NaN and ±0 (torch's)."""
    check_orderable("sign", x)           # torch.sgn is the complex one
    if x.dtype == np.bool_:
        return x.copy()
    xp = backend.array_module(x)
    out = xp.sign(x)                 # a NumPy scalar for a 0-d x: where() makes an array
    if is_floating(x.dtype):         # bfloat16's sign(-0.0) is -0.0
        out = xp.where(xp.isnan(out) | (out == 0), xp.zeros((), out.dtype), out)
    return xp.asarray(out)


def scalar_power(x, exponent):
    """``x ** exponent`` for a number ``exponent``, as torch's kernels take it: x^-0.5 is
    ``rsqrt`` (-inf at -0.0, NaN at -inf, where C's pow gives inf and 0) but in float16;
    x^2 is x·x, x^3 x·x·x and x^-2 1/(x·x), each step rounded, but in float16 (bfloat16 by
    its exponent rounded to bfloat16). Half precision rounds the exponent to its dtype: 1
    where that is 0 (NaN too), x where 1, x·x where 2 (exact in float32), else C's pow in
    float32, rounded once (NumPy's half loops); bfloat16's x^0.5 is sqrt, x^-1 1/x."""
    if x.dtype.kind == "c":
        return x ** exponent
    if exponent == -0.5 and x.dtype != np.float16:
        return rsqrt_array(x)
    if x.dtype.itemsize > 2 or not is_floating(x.dtype):          # not half precision
        if exponent in (3, -2) and x.dtype.kind == "f":
            square = x * x
            return square * x if exponent == 3 else 1 / square
        return x ** exponent                        # x ** 2: NumPy's square, x·x
    xp = backend.array_module(x)
    if abs(exponent) < 6e4:
        rounded_exponent = x.dtype.type(exponent)
    else:
        with np.errstate(over="ignore"):            # 7e4 is inf in float16
            rounded_exponent = x.dtype.type(exponent)
    if rounded_exponent in (0, 1, 2):
        return xp.ones_like(x) if rounded_exponent == 0 else xp.square(x) \
            if rounded_exponent == 2 else x.copy()
    if x.dtype == bfloat16 and (exponent in (0.5, -1) or rounded_exponent in (3, -2)):
        if exponent in (0.5, -1):
            return xp.sqrt(x) if exponent == 0.5 else x.dtype.type(1) / x
        square = x * x
        return square * x if rounded_exponent == 3 else x.dtype.type(1) / square
    return xp.power(x, rounded_exponent)


def power_slope(x, exponent):
    """``exponent · x^(exponent - 1)``, the slope of ``x ** exponent`` for a real ``x``, as
    torch's backward rounds it: the power in x's dtype, the product in float32 for half
    precision (the number not rounded to it), rounded once."""
    power = scalar_power(x, exponent - 1)
    if not is_half(x.dtype):
        return exponent * power
    return (np.float32(exponent) * power.astype(np.float32)).astype(x.dtype)


def rsqrt_array(x):
    """1 / sqrt(x) of a floating or complex array, half precision computed in float32 and
    rounded once (torch's ``rsqrt``)."""
    return (1 / backend.array_module(x).sqrt(upcast_half(x))).astype(x.dtype, copy=False)


def c_power(xp, base, exponent):
    """``xp.power(base, exponent)`` as C's pow at every element, as torch's pow of two
    tensors: NumPy's loop takes a repeated exponent (0-d, broadcast, or of stride 0) of 0.5
    as sqrt, NaN at -inf and -0.0 at -0.0 where pow gives inf and 0."""
    shape = np.broadcast_shapes(base.shape, exponent.shape)
    if exponent.shape == shape and shape and 0 not in exponent.strides:
        return xp.power(base, exponent)
    exponent = xp.array(xp.broadcast_to(exponent, shape or (1,)))     # a contiguous copy
    return xp.power(base if shape else base.reshape(1), exponent).reshape(shape)


def conj(*arrays):
    """The complex conjugate of each array, real arrays and None as they are. A backward
    formula reads conj(b) where it reads b: torch's gradient of a real loss through complex
    operands (``a * b`` hands a ``grad · conj(b)``; ops/complex.py)."""
    return tuple(a.conj() if a is not None and a.dtype.kind == "c" else a for a in arrays)


def complex_sign(z):
    """z / |z| for a complex array ``z``, 0 where z is 0 (``torch.sgn``)."""
    xp = backend.array_module(z)
    magnitude = xp.abs(z)
    return xp.where(magnitude == 0, 0, z / xp.where(magnitude == 0, 1, magnitude))


# ----- masks ----------------------------------------------------------------------------------
def keep(values, mask):
    """``where(mask, values, 0)``, broadcast, taken on the bits: each value's bits times 0 or
    1, so an inf or NaN outside ``mask`` becomes 0 (``values * mask`` would make it NaN), at
    a product's speed. NumPy's ``where`` branches per element: on a random mask it is about
    7 times slower (1.1 ms against 0.16 for 256x1024 float32). A dtype of 16-byte elements
    (complex128) takes ``where``."""
    if values.itemsize not in (1, 2, 4, 8):
        return backend.array_module(values).where(mask, values, values.dtype.type(0))
    return (values.view(f"u{values.itemsize}") * mask).view(values.dtype)


def select(condition, a, b):
    """``where(condition, a, b)`` for ``a`` and ``b`` of one dtype, broadcast, by ``keep``:
    the bits of one side times 1 plus those of the other times 0, exact."""
    if a.dtype != b.dtype or a.itemsize not in (1, 2, 4, 8):
        return backend.array_module(a).where(condition, a, b)
    u = f"u{a.itemsize}"
    return (a.view(u) * condition + b.view(u) * ~condition).view(a.dtype)


# ----- shapes and reductions ------------------------------------------------------------------
def unbroadcast(grad, shape):
    """Sum ``grad`` over the axes that broadcasting added or stretched to reach its shape."""
    if grad.shape == tuple(shape):
        return grad                                # the usual case: nothing was broadcast
    extra = grad.ndim - len(shape)
    if not shape:                                  # keepdims: a 0-d array, not a scalar
        return reduce_sum(grad, None, True).reshape(())
    if extra:
        grad = reduce_sum(grad, tuple(range(extra)), False)  # leading axes broadcast added
    if 1 in shape:
        stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
        if stretched:
            grad = reduce_sum(grad, stretched, True)           # size-1 axes it stretched
    return grad


def reduce_sum(x, axis, keepdims, mean=False):
    """Sum (or mean) of ``x`` over ``axis``; half precision accumulates in float32."""
    if mean and x.size == 0:             # each slice empty: 0 / 0 is NaN, silently, as torch's
        with np.errstate(invalid="ignore"):
            return x.sum(axis=axis, keepdims=keepdims) / 0
    if x.dtype.kind == "u" and not mean:     # NumPy sums unsigned ints in uint64, torch int64
        return x.sum(axis=axis, keepdims=keepdims, dtype=np.int64)
    if x.dtype.itemsize >= 4 or not is_half(x.dtype):     # (itemsize: no calls, mostly)
        return (x.mean if mean else x.sum)(axis=axis, keepdims=keepdims)
    dtypes.check_float8_compute("mean" if mean else "sum", x.dtype)    # torch: no kernel
    total = x.sum(axis=axis, keepdims=keepdims, dtype=np.float32)
    if mean:
        total /= reduced_size(x.shape, axis)
    return total.astype(x.dtype)


def reduced_size(shape, axis):
    """How many elements a reduction over ``axis`` (None or a tuple) combines into one."""
    axes = range(len(shape)) if axis is None else axis
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def empty_in_order(xp, shape, dtype, order):
    """An uninitialised ``xp`` array of ``shape`` whose memory holds its dims in ``order``,
    outermost first: ``(0, 2, 3, 1)`` makes an (N, C, H, W) array stored as (N, H, W, C), the
    channels-last layout (``ops/memory_formats.py``); None: row-major."""
    if order is None:
        return xp.empty(shape, dtype)
    stored = xp.empty(tuple(shape[d] for d in order), dtype)          # (shape permuted)
    return stored.transpose(sorted(range(len(order)), key=list(order).__getitem__))


def copy_in_order(array, order, dtype=None):
    """``array``'s values (cast to ``dtype``, as ``converted``) in new memory laid out as
    ``empty_in_order``."""
    out = empty_in_order(backend.array_module(array), array.shape,
                         array.dtype if dtype is None else dtype, order)
    out[...] = array if dtype is None else converted(array, dtype)
    return out


def converted(array, dtype):
    """``array.astype(dtype)`` as torch converts: float64 into float16 through float32
    (``dtypes.half_through_float``), and NaN or inf into an integer silently, as C's cast
    (NumPy warns)."""
    dtype = np.dtype(dtype)
    if dtypes.is_float8(dtype) or dtypes.is_float8(array.dtype):    # torch's saturation and
        return dtypes.float8_converted(array, dtype)     # NaN bytes (e5m2's kind is "f")
    if array.dtype.kind == "c" and dtype.kind not in "cb":  # torch's UserWarning, not NumPy's
        backend.warn_complex_to_real()
        array = array.real
    array = half_through_float(array, dtype)
    if dtype.kind in "iu" and array.dtype.kind in "fc":
        with np.errstate(invalid="ignore"):
            return array.astype(dtype)
    return array.astype(dtype)


# ----- errors and arguments -------------------------------------------------------------------
class OutOfRangeError(IndexError, ValueError, RuntimeError):
    """An index or class id out of range: an IndexError as in PyTorch's indexing, a
    RuntimeError as in its scatter, gather, index_add, ... and a ValueError."""


class ShapeError(RuntimeError, ValueError):
    """A shape, dim count or size an op cannot take (``t()`` of 3 dims, ``cat`` of 0-d
    tensors, split sizes that do not add up): torch's RuntimeError, and a ValueError."""


class EmptyReductionError(IndexError, ValueError, RuntimeError):
    """A max, min or arg-reduction over an empty dim: an IndexError as in PyTorch (with a
    dim), a RuntimeError as in PyTorch (without one: ``x.max()``), and a ValueError."""


class AxisError(np.exceptions.AxisError):
    """An axis out of range: an IndexError, as in PyTorch, and a ValueError, as in NumPy."""


class RepeatedAxisError(RuntimeError, ValueError):
    """An axis named twice in a reduction: a RuntimeError, as in PyTorch, and a ValueError."""


class Default:
    """A default value (``axis=DIM_0``) that ``dim_alias`` tells from the same value given."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return repr(self.value)


ALL_DIMS, DIM_0, LAST_DIM = Default(None), Default(0), Default(-1)     # axis defaults


def dim_alias(fn, axis, dim):
    """``axis``, or ``dim`` (PyTorch's name) instead; both given is a TypeError, as torch's."""
    if isinstance(axis, Default):
        return axis.value if dim is None else dim
    if dim is not None:
        raise TypeError(f"{fn}(): got both axis={axis!r} and dim={dim!r}; pass one")
    return axis


def normalize_axis(fn, axis, ndim, *, dim=None, single=False, insert=False, reduce=False):
    """The one reading of an ``axis`` (or ``dim``) argument: with ``single`` one non-negative
    int, else None or a sorted tuple. ``insert``: a place for a new dim, one of ndim + 1.
    ``reduce``: an empty tuple is every dim, None (torch's reductions: ``x.sum(dim=())``
    sums everything, while ``x.squeeze(dim=())`` and ``x.any(dim=())`` touch nothing)."""
    axis = dim_alias(fn, axis, dim)
    if axis is None and not single:
        return None
    axes = (axis := index_of(axis),)     # a 0-d integer tensor is its int, as torch's
    if not single and not isinstance(axis, numbers.Integral):
        try:
            axes = tuple(axis)
            if not all(a.__class__ is int for a in axes):    # (0, True) is (0, 1), as torch's
                axes = factory_shape(axes, f"{fn}(): dim")
        except TypeError:
            pass                         # not a sequence: refused just below
    span = ndim + 1 if insert else max(ndim, 1)
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, numbers.Integral):
            kind = "an int" if single else "an int or a sequence of ints"
            raise TypeError(f"{fn}: axis must be {kind}, got {axis!r}")
        if not -span <= a < span:
            raise AxisError(f"{fn}: axis {a} is out of range for a tensor with {ndim} dims "
                            f"(expected -{span} <= axis < {span})")
    if single:
        return int(axis) % span
    if reduce and not axes and ndim:
        return None
    normalized = tuple(sorted(int(a) % span for a in axes))
    if len(set(normalized)) != len(normalized):
        raise RepeatedAxisError(f"{fn}: axis {axis!r} names a dim twice ({ndim}-dim tensor)")
    return () if ndim == 0 else normalized     # reducing a 0-d tensor reduces nothing


def check_reducible(fn, shape, axis):
    """Raise ``EmptyReductionError`` if a max/min over ``axis`` meets an empty dim."""
    if 0 in shape and (axis is None or any(shape[a] == 0 for a in axis)):
        raise EmptyReductionError(f"{fn}(): cannot reduce over an empty dim (there is no value "
                                  f"to return); tensor of shape {tuple(shape)}, axis {axis}")


@functools.lru_cache(maxsize=256)
def row_major_strides(shape):
    """The row-major strides of ``shape`` in elements, a size-1 or empty dim's too (the
    stride torch's copies give it): (2, 3, 4) -> (12, 4, 1)."""
    strides, following = [], 1
    for n in reversed(shape):
        strides.append(following)
        following *= max(n, 1)
    return tuple(reversed(strides))


def sizes_of(args, given=None, name="size"):
    """``(2, 3)`` from the arguments of ``f(2, 3)``, ``f((2, 3))`` or ``f(name=(2, 3))``
    (``given``, torch's keyword): PyTorch takes all three, and refuses a keyword beside them."""
    if given is not None:
        if args:
            raise TypeError(f"got multiple values for argument '{name}'")
        args = (given,)
    elif not args:                      # f(): torch's TypeError (a 0-d shape is f(()))
        raise TypeError(f'missing 1 required positional arguments: "{name}"')
    return tuple(args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args)


def size_args(fn, size, given=None):
    """``sizes_of(size, given)``: ints only, none negative."""
    size = sizes_of(size, given)
    for i, n in enumerate(size):  # (an int tensor of one element, a bool not first: ints)
        if (not isinstance(n, numbers.Integral) or isinstance(n, bool) and i == 0) and not (
                isinstance(n, _tensor.Tensor) and n.size == 1 and n.dtype.kind in "iu"):
            raise TypeError(f"{fn}: size must be ints, got {n!r} in {size}")
        if n < 0:
            raise ShapeError(f"{fn}: size must be non-negative, got {tuple(size)}")
    return tuple(int(n) for n in size)


def number_of(fn, name, value):
    """``value`` as a Python number where it is a 0-d Tensor (torch's factories take one for
    a number: ``linspace(torch.tensor(0.0), 1, 5)``), else ``value`` itself; a Tensor of more
    dims is torch's RuntimeError."""
    if isinstance(value, _tensor.Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"{fn} only supports 0-dimensional {name} tensors, but got "
                               f"{name} with {value.ndim} dimension(s).")
        return value.item()
    return value


def check_tensor(fn, x):
    """``x`` itself if it is a Tensor, else a TypeError naming ``fn``."""
    if not isinstance(x, _tensor.Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(x).__name__}")
    return x


def check_same_dtype(fn, input, other, names=("input", "other")):
    """Raise torch's RuntimeError unless the Tensors ``input`` and ``other`` (called
    ``names`` in the message) have one dtype: the ops that do not promote."""
    if other.dtype != input.dtype:
        raise RuntimeError(f"{fn}(): {names[0]} and {names[1]} must have the same dtype, got "
                           f"{input.dtype} and {other.dtype}")


@functools.lru_cache(maxsize=None)
def _largest(dtype):
    # a floating dtype's max as a float, once per dtype: a number checked per call
    return float(finfo(dtype).max)


def check_fits(fn, value, dtype):
    """Raise torch's RuntimeError (``c10::checked_convert``) unless ``dtype`` holds the number
    ``value``: an integer dtype [min, max] (an unsigned one an integer down to -max too: it
    wraps), a floating or complex one any part with |part| <= its max, inf and NaN; a real
    dtype a complex number only with imaginary part 0."""
    if isinstance(value, np.generic):       # np.float32(2) <= 1.8e308 would cast the bound
        value = value.item()
    if type(value) is int:
        _tensor.check_int(value)            # 2**70: torch's OverflowError, before any dtype
    lost = False                            # an imaginary part a real dtype would lose
    if isinstance(value, complex) and dtype.kind != "c":
        lost, value = value.imag != 0, value.real      # c10's rule: lost is an overflow
    if lost:
        fits = False
    elif dtype.kind in "iu":
        info, integral = np.iinfo(dtype), isinstance(value, (numbers.Integral, np.bool_))
        low = -int(info.max) if dtype.kind == "u" and integral else int(info.min)
        fits = (integral or bool(np.isfinite(value))) and low <= value <= info.max
    elif dtype.kind in "fc" or is_floating(dtype):        # bfloat16's kind is "V"
        parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
        fits = all(not (isinstance(v, numbers.Integral) or np.isfinite(v))     # 2**1100 too
                   or abs(v) <= _largest(dtype) for v in parts)
    else:
        fits = True
    if not fits:
        raise RuntimeError(f"{fn}(): value {value!r} cannot be converted to type {dtype} "
                           "without overflow")


def fitted(fn, value, dtype):
    """The number ``value`` checked (``check_fits``) and made what NumPy writes into ``dtype``
    as torch converts it: an int wrapped into an integer dtype (-1 is 255 in uint8), any
    number a float for a floating one (2**63 into bfloat16)."""
    check_fits(fn, value, dtype)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, complex) and dtype.kind != "c":
        value = value.real
    if dtype.kind in "iu" and not isinstance(value, bool):
        return _tensor.wrapped_int(int(value), dtype)      # a float truncated
    if is_floating(dtype) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def int_as_read(value, like):
    """``value``, but for a Python int beside an integer Tensor ``like`` whose dtype cannot
    hold it, the int as torch reads it, an int64 (a uint64 from 2**63) constant: for the ops
    that compute integers in floating point (true division, atan2, xlogy, float_power),
    which cast each operand straight to their float, u8 / 300 is u8 / 300.0, not the
    u8 / 44 of the int wrapped into uint8 (``tensor.as_tensor``, the others' rule)."""
    if type(value) is not int or not isinstance(like, _tensor.Tensor) or \
            like.dtype.kind not in "iu" or _tensor.wrapped_int(value, like.dtype) == value:
        return value
    return constant(like.xp.asarray(value, dtype=np.uint64 if value >= 1 << 63 else np.int64))


def check_number_fits(fn, value, like):
    """Raise torch's RuntimeError unless a number ``value`` fits the dtype of its result beside
    the Tensor ``like`` (``check_fits``): ``where`` and ``clamp`` convert a number so, where
    ``+`` wraps it (int8 beside 300: an error there, 44 here; uint8 beside -1: 255)."""
    if not isinstance(like, _tensor.Tensor) or not isinstance(value, (numbers.Number, np.generic)):
        return
    if _number_category(value) <= _category(like.dtype):   # it takes like's dtype, as torch's
        check_fits(fn, value, like.dtype)
    else:                                       # like's dtype is promoted to the number's
        check_fits(fn, value, _tensor.as_tensor(value, like).dtype)


def _number_category(value):
    # a number's category, as ``_category`` gives a dtype's
    if isinstance(value, (bool, np.bool_)):
        return 0
    if isinstance(value, numbers.Integral):
        return 1
    return 3 if isinstance(value, (complex, np.complexfloating)) else 2


class IndexDtypeError(TypeError, RuntimeError, IndexError):
    """A mask or index of a dtype the op does not take: torch's RuntimeError (IndexError for
    ``index_fill_``), and a TypeError."""


def as_array(fn, name, value, like, kind):
    """``value`` as an array on ``like``'s device, of a dtype kind in ``kind`` ("b", "iu")."""
    data = value._array if isinstance(value, _tensor.Tensor) else like.xp.asarray(value)
    if data.dtype.kind not in kind:
        what = "be a bool tensor" if kind == "b" else "hold integers"
        raise IndexDtypeError(f"{fn}: {name} must {what}, got dtype {data.dtype}")
    return data


def _augmented(in_place, out_of_place):
    """``x += y`` and the like (``x op= y``): in place, but out of place for an element of a
    recorded tensor (``indexing.getitem``), whose statement ``y[i] += v`` then assigns the
    result back; that result is checked as the in-place op would check it."""
    def augmented(self, other):
        if getattr(self, "_element", False) and is_grad_enabled():
            result = out_of_place(self, other)
            _tensor.check_inplace_result(self, result)
            return result
        return in_place(self, other)
    augmented.__name__ = augmented.__qualname__ = in_place.__name__
    return augmented


def kept(value, array):
    """What an op hands ``Function.apply`` for a non-differentiable ``array`` its node keeps
    (a mask, an index): ``value`` itself when it is the Tensor of that array, so that apply
    records its version (an in-place change before backward raises), else the array, which
    apply copies."""
    return value if isinstance(value, _tensor.Tensor) and value._array is array else array


def raw(value):
    """A Tensor's array; anything else as it is."""
    return value._array if isinstance(value, _tensor.Tensor) else value


def raw_number(value, like):
    """``raw(value)``, but a Python int beside the Tensor ``like`` as ``tensor.as_tensor``
    types it, for NumPy's in-place arithmetic: wrapped into an integer dtype (int8's
    ``add_(300)`` adds 44, as torch's), torch's OverflowError past [-2**63, 2**64)."""
    if isinstance(value, np.integer):          # a NumPy int is a Python int to torch
        value = int(value)
    if type(value) is not int:
        return raw(value)
    if like.dtype.kind in "iu":
        return _tensor.wrapped_int(value, like.dtype)
    _tensor.check_int(value)
    return value


def raw_index(index):
    """An index with its Tensors replaced by their arrays."""
    return tuple(raw(i) for i in index) if isinstance(index, tuple) else raw(index)


def constant(array):
    """A Tensor of ``array`` outside the graph."""
    return _tensor.Tensor._from_op(array, None, 0)


# ----- what the fused arithmetic shares (ops/binary.py, ops/ternary.py) ----------------------
def result_type(*tensors):
    """torch's result dtype of several tensors: those with dims decide among themselves,
    then the 0-d ones count only where of a higher category (bool < integer < floating <
    complex), as ``result_dtype`` does for two."""
    key = tuple((t.dtype, t.ndim > 0) for t in tensors)
    dtype = _RESULT_TYPES.get(key)
    if dtype is None:                    # a few dtype combinations: each worked out once
        dtype = _RESULT_TYPES[key] = _result_type(key)
    return dtype


_RESULT_TYPES = {}


def _result_type(shaped):
    def joined(group):
        out = None
        for dtype in group:
            out = dtype if out is None else result_dtype(np.empty(1, out), np.empty(1, dtype))
        return out
    dims = joined([dtype for dtype, has_dims in shaped if has_dims])
    zero = joined([dtype for dtype, has_dims in shaped if not has_dims])
    if dims is None or zero is None:
        return zero if dims is None else dims
    return result_dtype(np.empty(1, dims), np.empty((), zero))


def fma(coeff, x, base, dtype):
    """``coeff · x + base`` in ``dtype``, rounded once where torch's vectorized kernels fuse
    it (an FMA, ``backend.fused_multiply_add``): float32 and float64, and half precision
    computed in float32 then rounded to it, as torch's; complex and integers as written."""
    if base.dtype.kind == "f":
        return backend.fused_multiply_add(x, coeff, base).astype(dtype, copy=False)
    return (base + coeff * x).astype(dtype, copy=False)
