"""Floating dtypes, bfloat16 included (optional ``ml_dtypes``), the complex dtypes, and number
checks. Half precision (float16, bfloat16) accumulates in float32 and rounds once
(docs/precision.md)."""

import numbers
import operator

import numpy as np

try:
    import ml_dtypes
except ImportError:                       # optional: only bfloat16 needs it
    ml_dtypes = None

bfloat16 = None if ml_dtypes is None else np.dtype(ml_dtypes.bfloat16)

# torch's 8-bit floats (float8.py: the dtypes, torch's conversions into and out of them)
from .float8 import (FLOAT8, FLOAT8_NAMES, FLOAT8_TORCH_NAMES, Float8Error,  # noqa: E402, F401
                     Float8PromotionError, float8_converted, float8_e4m3fn, float8_e4m3fnuz,
                     float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, is_float8)
from .float8 import FLOAT8_DTYPES as _FLOAT8_DTYPES  # noqa: E402

# PyTorch's dtype names as NumPy dtypes, what the package's own code reads (the public
# ``mg.float32``, ``t.dtype`` are their torch dtype objects: ``dtype`` below); ``mg.float``,
# ``mg.long``, ... are ``TORCH_ALIASES``
float16, float32, float64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
uint8, int8, int16 = np.dtype("uint8"), np.dtype("int8"), np.dtype("int16")
int32, int64, bool_ = np.dtype("int32"), np.dtype("int64"), np.dtype("bool")
# torch's "barebones" unsigned dtypes: tensors of them are made, stored and converted
uint16, uint32, uint64 = np.dtype("uint16"), np.dtype("uint32"), np.dtype("uint64")
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")
TORCH_ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16,
                 "int": int32, "long": int64, "bool": bool_, "cfloat": complex64,
                 "cdouble": complex128}


_default_dtype = float32                   # torch's default floating dtype


def get_default_dtype():
    """The floating dtype of Python floats, lists and factories without ``dtype=``
    (``torch.get_default_dtype``): float32 unless ``set_default_dtype`` changed it."""
    return _default_dtype


def torch_default_dtype():
    """``torch.get_default_dtype()``: the default floating dtype as torch's dtype object
    (``torch.float32``); the package's own code reads ``get_default_dtype``'s NumPy dtype."""
    return torch_dtype(_default_dtype)


def set_default_dtype(dtype):
    """Make ``dtype`` (float16, bfloat16, float32 or float64) the default floating dtype, for
    the whole process, as ``torch.set_default_dtype``. NumPy arrays keep their own dtype.

    Example:
        >>> mg.set_default_dtype(mg.float64)      # teach in float64
        >>> mg.tensor([1.0]).dtype
        torch.float64
    """
    global _default_dtype
    try:
        resolved = as_dtype(dtype)
    except TypeError as error:
        raise TypeError(f"set_default_dtype: dtype must be a floating dtype (float16, bfloat16, "
                        f"float32 or float64), got {dtype!r}") from error
    if not is_floating(resolved):
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the "
                        f"default type, got {resolved}")
    _default_dtype = resolved


def default_float(dtype=None):
    """``dtype`` as a NumPy dtype, or the default floating dtype when it is None."""
    return _default_dtype if dtype is None else as_dtype(dtype)


def has_bfloat16():
    """True when ``ml_dtypes`` is installed, so bfloat16 tensors can be made."""
    return bfloat16 is not None


def as_dtype(dtype):
    """``dtype`` (a NumPy dtype, a type, or a name such as ``"bfloat16"``) as a NumPy dtype."""
    if dtype is None:
        return None
    if dtype.__class__ is globals()["dtype"]:     # torch's dtype object: its NumPy dtype
        return dtype.dtype
    if isinstance(dtype, str) and (dtype == "bfloat16" or dtype in FLOAT8):
        found = bfloat16 if dtype == "bfloat16" else FLOAT8[dtype]
        if found is None or isinstance(found, str):         # ml_dtypes is not installed
            raise TypeError(f'dtype "{dtype}" needs ml_dtypes: pip install ml_dtypes '
                            '(or "microgradnorm[bf16]")')
        return found
    return np.dtype(dtype)


def check_float8_promotion(first, second):
    """Raise torch's error where ``first`` and ``second`` differ and one is a float8 dtype
    (``torch.promote_types``: "Promotion for Float8 Types is not supported")."""
    if first != second and (first in _FLOAT8_DTYPES or second in _FLOAT8_DTYPES):
        raise Float8PromotionError(f"Promotion for Float8 Types is not supported, attempted "
                                   f"to promote {torch_name(first)} and {torch_name(second)}")


def is_floating(dtype):
    """float16, bfloat16, float32 or float64 (any NumPy float), or one of ml_dtypes' float8
    dtypes (torch's ``is_floating_point``)."""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or (bfloat16 is not None and dtype == bfloat16) or \
        dtype in _FLOAT8_DTYPES


def is_complex(dtype):
    """complex64 or complex128 (torch's complex dtypes; its complex32 has no NumPy twin)."""
    return np.dtype(dtype).kind == "c"


def complex_of(dtype):
    """The complex dtype whose parts are as precise as ``dtype``'s: complex128 for float64
    and complex128, complex64 for any other (torch's ``toComplexType``, except that float16
    and bfloat16 get complex64: NumPy has no complex32). ``complex_of(get_default_dtype())``
    is torch's default complex dtype.

    Example:
        >>> complex_of(float64)
        dtype('complex128')
    """
    return complex128 if np.dtype(dtype) in (float64, complex128) else complex64


def real_of(dtype):
    """The dtype of a complex dtype's parts (float32 for complex64, float64 for complex128);
    any other dtype as it is (``x.real.dtype``)."""
    dtype = np.dtype(dtype)
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


def scalar_dtype(value, beside):
    """The dtype torch gives a Python number ``value`` beside a tensor of dtype ``beside``
    where NumPy's differs: for a complex number (``x * 1j``), the complex of a floating or
    complex ``beside``, else the default complex dtype; None for any other value (NumPy's
    dtype is torch's)."""
    if not isinstance(value, complex):
        return None
    beside = np.dtype(beside)
    return complex_of(beside if beside.kind in "fc" else _default_dtype)


# The Python type torch reads each NumPy scalar type as beside a tensor (``python_number``)
PYTHON_NUMBER = {**{np.dtype(code).type: int for code in "bBhHiIlLqQ"},
                 **{kind: float for kind in (np.float16, np.float32, np.float64, np.longdouble,
                                             np.bool_)},
                 **{kind: complex for kind in (np.complex64, np.complex128, np.clongdouble)}}


def python_number(value):
    """The Python number torch reads a NumPy scalar ``value`` as beside a tensor (a weak
    number, typed by the tensor): an int for ``np.integer``, a complex for
    ``np.complexfloating``, a float for ``np.floating`` and for ``np.bool_`` (torch reads a
    NumPy bool as a float: ``x + np.True_`` is ``x + 1.0``); anything else as it is."""
    convert = PYTHON_NUMBER.get(value.__class__)
    return value if convert is None else convert(value)


class ComplexScalarError(RuntimeError, TypeError):
    """A complex number where an op takes a real one (a norm's order, ``addmm``'s scales for
    real operands): PyTorch's RuntimeError, and a TypeError (a number of the wrong kind)."""


class ArgumentError(RuntimeError, ValueError):
    """An argument PyTorch refuses with a RuntimeError (``clamp`` with neither bound): a
    ValueError too, as this package raised before."""


class NotFloatingError(NotImplementedError, TypeError):
    """An integer or bool tensor (or dtype) where only floating ones are taken: PyTorch's
    NotImplementedError (no kernel for the dtype; a RuntimeError too), and a TypeError."""


def half_through_float(array, dtype):
    """``array`` as torch rounds it into ``dtype``: float64 into float16 through float32 (c10's
    Half is built from a float, so torch rounds twice: 7 in 100,000 normal values differ from
    one rounding); any other pair is the array itself."""
    if array.dtype == np.float64 and dtype == np.float16:
        return array.astype(np.float32)
    return array


def cast_gradient(grad, dtype):
    """``grad`` (an array) cast to its input's ``dtype``: a real input takes the real part of
    a complex gradient, as torch's engine hands it (without NumPy's ComplexWarning)."""
    if grad.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        grad = grad.real
    return half_through_float(grad, dtype).astype(dtype)


def is_numeric(dtype):
    """bool, integer or floating: what tensors, state dicts and saved files may hold."""
    dtype = np.dtype(dtype)
    return (dtype.kind in "biuf" and not dtype.hasobject) or is_floating(dtype)


def check_number(where, name, value, integer=False):
    """Raise a TypeError naming ``name`` unless ``value`` is a real number (or an int)."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, kind):
        raise TypeError(f"{where}: {name} must be {'an int' if integer else 'a real number'}, "
                        f"got {type(value).__name__} {value!r}")


def check_bool(where, name, value):
    """Raise a TypeError naming ``name`` unless ``value`` is a bool (not 0, 1 or a string)."""
    if not isinstance(value, bool):
        raise TypeError(f"{where}: {name} must be a bool, got {type(value).__name__} "
                        f"{value!r}")


def check_positive_ints(where, **values):
    """Raise unless every value is an int (TypeError) >= 1 (ValueError), naming it."""
    for name, value in values.items():
        check_number(where, name, value, integer=True)
        if value < 1:
            raise ValueError(f"{where}: {name} must be a positive int, got {value!r}")


def check_nonnegative_ints(where, leading=None, **values):
    """Raise unless every value is an int (TypeError) >= 0, naming it: a size that may be 0,
    as a Linear layer's features or a Conv's channels in torch, which builds the empty
    weight. A negative one raises ``ArgumentError``: torch's RuntimeError (its allocation
    refuses the size), a ValueError too.

    ``leading`` (names, for a module that builds its parameters from the values) takes a
    Python bool as the int it is, as torch's modules do (``nn.Linear(True, 3)``), except for
    the names it lists, the first dim of a parameter's shape, where torch's factory refuses
    a bool (a TypeError); None refuses bools everywhere.

    Returns the values in order as the module keeps them: a 0-d integer Tensor (or any
    ``__index__`` but a bool's) as its int, as torch's modules take ``torch.tensor(3)``."""
    kept = []
    for name, value in values.items():
        value = index_of(value)
        kept.append(value)
        if leading is not None and value.__class__ is bool and name not in leading:
            continue
        check_number(where, name, value, integer=True)
        if value < 0:
            raise ArgumentError(f"{where}: {name} must be a non-negative int, got {value!r}")
    return tuple(kept)


def factory_shape(shape, where="shape"):
    """``shape`` as torch's factories and ``view`` read a list of sizes: a bool first is
    refused (a TypeError naming ``where``), a bool after it is the int it is
    (``torch.zeros(3, True)`` is (3, 1)), an integer NumPy scalar or one-element Tensor its
    int; anything else is left for the caller to refuse. A module's parameter shapes built
    from its sizes go through here."""
    shape = tuple(shape)
    for n in shape:                 # ints only, the common call: as they are, at no cost
        if n.__class__ is not int:
            break
    else:
        return shape
    if shape and isinstance(shape[0], (bool, np.bool_)):
        raise TypeError(f"{where} must be a tuple of ints, but found element of type bool at "
                        f"pos 0 in {shape}")
    return tuple(int(n) if isinstance(n, (bool, np.integer)) else index_of(n) for n in shape)


def index_of(value):
    """``value`` as torch reads an int argument: an object with ``__index__`` that is not a
    number already (a one-element integer Tensor) as its int; anything else as it is, so a
    bool stays the bool a module's repr shows, and a float is left to be refused. An integer
    NumPy scalar is its int too."""
    if value.__class__ is int or value is None:        # the common calls, at no cost
        return value
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (numbers.Number, np.bool_)) or not hasattr(type(value), "__index__"):
        return value
    try:
        return operator.index(value)
    except TypeError:                    # a float Tensor: refused by the caller, naming it
        return value


class NotGiven:
    """The default of a ``dim`` that torch types as a plain int (``cat``, ``sort``,
    ``softmax``, ``max``, ...): it tells a dim left out, which takes the function's own
    default, from ``dim=None`` given, which torch's argument parser refuses."""

    def __repr__(self):
        return "<not given>"


NOT_GIVEN = NotGiven()


def int_dim(fn, dim, name="dim"):
    """``dim`` as given to a function whose ``dim`` torch types as a plain int: None where it
    was not given (``NOT_GIVEN``, for the function's own default), torch's TypeError where
    None was given, else ``dim`` itself (its type and range are the caller's to check).

    Args:
        fn: the function's name, for the message.
        dim: the argument as given.
        name: the argument's name, for the message.

    Example:
        >>> int_dim("cat", NOT_GIVEN), int_dim("cat", 1)           # doctest: +SKIP
        (None, 1)
        >>> int_dim("cat", None)                                   # doctest: +SKIP
        TypeError: cat(): argument 'dim' must be int, not NoneType
    """
    if dim is NOT_GIVEN:
        return None
    if dim is None:
        raise TypeError(f"{fn}(): argument '{name}' must be int, not NoneType (leave it out "
                        "for the default)")
    return dim


def int_argument(fn, name, value, position=None):
    """``value`` as torch's argument parser reads an argument typed ``int`` (``tensorinv``'s
    ``ind``, ``vander``'s ``N``, ``native_group_norm``'s sizes, ``grid_sampler``'s modes): an
    int, an integer NumPy scalar or a one-element integer Tensor as its int (``index_of``);
    a bool, a float, a string, None, ... torch's TypeError naming the argument.

    Args:
        fn: the function's name, for the message.
        name: the argument's name, for the message.
        value: the argument as given.
        position: its place in torch's signature (1 for the first), for the message.

    Example:
        >>> int_argument("linalg.vander", "N", np.int64(3))          # doctest: +SKIP
        3
        >>> int_argument("linalg.vander", "N", 2.5)                   # doctest: +SKIP
        TypeError: linalg.vander(): argument 'N' must be int, not float
    """
    value = index_of(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    where = "" if position is None else f" (position {position})"
    raise TypeError(f"{fn}(): argument '{name}'{where} must be int, not {type(value).__name__}")


def float_of(value, where, name, one_element=False):
    """``value`` as torch reads a float argument (``eps``, ``p``, ``negative_slope``, ...): a
    Python float or int as it is; a bool as 0.0 or 1.0; a NumPy float, int or bool scalar as
    its Python float (int); a 0-d Tensor of a real dtype that does not require grad as its
    value (``one_element``: any one-element Tensor, as torch's functions written in Python
    read one through tensor arithmetic). A complex number, or a complex Tensor, raises
    ``ComplexScalarError`` (torch's RuntimeError or TypeError); anything else, a string, None,
    a Tensor of several elements, a TypeError naming ``name`` of ``where``.

    Example:
        >>> float_of(True, "dropout", "p"), float_of(np.float32(0.5), "dropout", "p")
        (1.0, 0.5)
    """
    if value.__class__ is float or value.__class__ is int:     # the common calls, free
        return value
    if isinstance(value, (bool, np.bool_, np.floating)):
        return float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (complex, np.complexfloating)):
        raise ComplexScalarError(f"{where}: {name} must be a real number, got complex "
                                 f"{value!r}")
    if isinstance(value, numbers.Real):
        return float(value)
    array = getattr(value, "_array", None)      # a Tensor (this layer knows no Tensor class)
    if array is not None and not isinstance(value, np.ndarray):
        if array.size == 1 and (array.ndim == 0 or one_element):
            if array.dtype.kind == "c":
                raise ComplexScalarError(f"{where}: {name} must be a real number, got a "
                                         f"complex Tensor {value!r}")
            if one_element or not getattr(value, "requires_grad", False):
                item = array.reshape(()).item()
                return float(item) if array.dtype.kind not in "iu" else item
        raise TypeError(f"{where}: {name} must be a real number or a 0-d Tensor that does not "
                        f"require grad, got a Tensor of shape {tuple(array.shape)}")
    raise TypeError(f"{where}: {name} must be a real number, got {type(value).__name__} "
                    f"{value!r}")


def is_half(dtype):
    """float16 or bfloat16: the dtypes that accumulate in float32."""
    return is_floating(dtype) and np.dtype(dtype).itemsize < 4


def accumulation_dtype(dtype):
    """float32 for half precision, else the dtype itself."""
    return np.dtype(np.float32) if is_half(dtype) else np.dtype(dtype)


def upcast_half(array):
    """``array`` in its accumulation dtype: half precision cast to float32 (where the fused
    nodes compute it), anything else as it is, not copied. A float8 array is refused as
    torch's CPU kernels refuse it (``check_float8_compute``)."""
    if not is_half(array.dtype):
        return array
    check_float8_compute("opmath", array.dtype)
    return array.astype(np.float32)


def check_float8_compute(fn, dtype):
    """Raise torch's NotImplementedError where ``dtype`` is a float8 dtype: torch's CPU has
    no arithmetic kernel for them (add, sum, exp, lt, ...; mul, abs, == and copies it has).
    Called only on half precision's paths (``is_half`` holds for float8 too), so float32
    and float64 never reach it: a test on every op cost 3 % per node."""
    if dtype in _FLOAT8_DTYPES:
        raise Float8Error(f'"{fn}" not implemented for \'{torch_name(dtype)}\': torch has no '
                          "CPU kernel for this op on float8; convert first (x.float())")


def sortable(array):
    """``array`` in a dtype NumPy's sorts order with NaN last: bfloat16 as float32, which
    holds each of its values exactly (NumPy cannot sort ml_dtypes' bfloat16 around a NaN);
    anything else as it is, not copied."""
    return array.astype(np.float32) if array.dtype == bfloat16 else array


class iinfo:
    """The limits of an integer dtype as ``torch.iinfo`` gives them: ``bits``, ``min``,
    ``max`` (Python ints), ``dtype`` its name; a bool or floating dtype is torch's TypeError.

    Example:
        >>> iinfo(int8).min, iinfo(uint8).max
        (-128, 255)
    """

    def __init__(self, dtype):
        dtype = np.dtype(dtype)
        if dtype.kind not in "iu":
            raise TypeError(f"iinfo() requires an integer input type, got {dtype}; "
                            "use finfo for a floating one")
        info = np.iinfo(dtype)
        self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        self.dtype = str(dtype)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


class finfo:
    """The limits of a floating dtype as ``torch.finfo`` gives them: ``bits``, then ``eps``,
    ``max``, ``min``, ``tiny`` (= ``smallest_normal``) and ``resolution`` (10^-digits) as
    Python floats, ``dtype`` its name; a complex dtype's are its real part's; of the default
    float dtype when none is given. NumPy's ``finfo`` (``ml_dtypes``' for bfloat16) gives
    the values.

    Example:
        >>> finfo(float32).resolution, finfo(bfloat16).eps
        (1e-06, 0.0078125)
    """

    def __init__(self, dtype=None):
        dtype = np.dtype(get_default_dtype() if dtype is None else dtype)
        if dtype.kind not in "fc" and dtype != bfloat16 and dtype not in _FLOAT8_DTYPES:
            raise TypeError(f"finfo() requires a floating point input type, got {dtype}; "
                            "use iinfo for an integer one")
        info = np.finfo(dtype) if dtype.kind in "fc" and dtype not in _FLOAT8_DTYPES \
            else ml_dtypes.finfo(dtype)
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)    # NumPy's is rounded to the dtype
        if dtype in _FLOAT8_DTYPES:     # torch's digits, floor(nmant log10 2): 0 for float8
            self.resolution = 10.0 ** -int(info.nmant * 0.30102999566398120)
        if dtype == float8_e5m2fnuz:    # c10's epsilon() constant is 2**-3, not 2**-2
            self.eps = 0.125
        self.dtype = str(info.dtype)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


# torch's legacy tensor type names (``x.type()``: "torch.FloatTensor"), by dtype
TENSOR_TYPES = {float32: "FloatTensor", float64: "DoubleTensor", float16: "HalfTensor",
                int64: "LongTensor", int32: "IntTensor", int16: "ShortTensor",
                int8: "CharTensor", uint8: "ByteTensor", bool_: "BoolTensor",
                complex64: "ComplexFloatTensor", complex128: "ComplexDoubleTensor",
                **({} if bfloat16 is None else {bfloat16: "BFloat16Tensor"})}


def torch_name(dtype):
    """torch's name of ``dtype`` in its messages: "Long", "Half", "ComplexFloat"."""
    if dtype in _FLOAT8_DTYPES:
        return FLOAT8_TORCH_NAMES[dtype]
    return TENSOR_TYPES.get(dtype, str(dtype)).removesuffix("Tensor")


def tensor_type_dtype(name):
    """The dtype of a legacy type name, ``"torch.DoubleTensor"`` or ``"DoubleTensor"`` (a CUDA
    one too); a ValueError naming the known ones otherwise."""
    short = name.rsplit(".", 1)[-1]
    for dtype, known in TENSOR_TYPES.items():
        if known == short:
            return dtype
    raise ValueError(f"type: unknown tensor type {name!r}; expected one of "
                     f"{sorted(TENSOR_TYPES.values())}")


def wrapped_int(value, dtype):
    """The Python int ``value`` cast to the integer ``dtype`` as C casts it (modulo 2**bits,
    into the dtype's range: -1 is 255 in uint8, 300 is 44 in int8), as torch casts a number
    beside a tensor into the dtype an op computes in; one torch cannot read raises its
    OverflowError (``check_int``)."""
    dtype = np.dtype(dtype)
    bits = 8 * dtype.itemsize
    low = -(1 << bits - 1) if dtype.kind == "i" else 0      # (np.iinfo costs a microsecond)
    if low <= value < low + (1 << bits):
        return value
    check_int(value)
    return (value - low) % (1 << bits) + low


def check_int(value):
    """Raise torch's OverflowError for a Python int outside [-2**63, 2**64): torch reads a
    number as an int64, or as a uint64 from 2**63, before any op sees it."""
    if value >= 1 << 64:
        raise OverflowError(f"int too big to convert: {value} (a number beside a tensor "
                            "must lie in [-2**63, 2**64))")
    if value < -(1 << 63):
        raise OverflowError(f"can't convert negative int to unsigned: {value} (a number "
                            "beside a tensor must lie in [-2**63, 2**64))")


# ----- torch's dtype objects ---------------------------------------------------------------
class dtype:
    """A dtype as torch shows it (``torch.dtype``): ``mg.float32``, ``x.dtype``. It prints as
    torch's (``torch.float32``) and has torch's attributes (``is_floating_point``,
    ``is_complex``, ``is_signed``, ``itemsize``, ``to_real()``, ``to_complex()``); it is also
    a NumPy dtype to every NumPy function (``np.empty(2, mg.float32)``, ``a.astype(x.dtype)``:
    NumPy reads its ``dtype`` attribute), equal to and hashed as that NumPy dtype
    (``x.dtype == np.float32``), with its attributes (``kind``, ``type``, ...). One object per
    dtype: ``x.dtype is mg.float32``."""

    __slots__ = ("dtype", "kind", "itemsize", "type", "char", "num", "is_floating_point",
                 "is_complex", "is_signed", "_name")

    def __init__(self, numpy_dtype, name):
        self.dtype = numpy_dtype                  # what NumPy reads (its dtype protocol)
        self.kind, self.itemsize, self.type = numpy_dtype.kind, numpy_dtype.itemsize, \
            numpy_dtype.type
        self.char, self.num = numpy_dtype.char, numpy_dtype.num
        self.is_floating_point = is_floating(numpy_dtype)
        self.is_complex = numpy_dtype.kind == "c"
        # torch's unsigned ones: bool, uint8..uint64, and float8_e8m0fnu (an exponent alone)
        self.is_signed = (numpy_dtype.kind in "ifc" or self.is_floating_point) \
            and name != "float8_e8m0fnu"
        self._name = name

    def __eq__(self, other):
        if other.__class__ is dtype:
            return self is other
        try:
            return self.dtype == other
        except TypeError:
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"torch.{self._name}"

    __str__ = __repr__

    def __getattr__(self, name):           # the rest of NumPy's dtype: name, str, names, ...
        return getattr(object.__getattribute__(self, "dtype"), name)

    def __reduce__(self):
        return (_torch_dtype_named, (self._name,))

    def to_real(self):
        """The real dtype of a complex one (float32 of complex64), any other itself."""
        return TORCH_DTYPES[real_of(self.dtype)]

    def to_complex(self):
        """The complex dtype of a floating one (complex64 of float32), a complex one itself;
        float16's is complex64 (torch's complex32 has no NumPy twin). An integer, bool or
        float8 dtype has none: torch's RuntimeError."""
        if not (self.is_complex or self._name in ("float16", "bfloat16", "float32", "float64")):
            name = torch_name(self.dtype)                 # c10's: "Long", "Float8_e4m3fn"
            name = "UInt" + name[4:] if name.startswith("uint") else name
            raise RuntimeError(f"Unknown Complex ScalarType for {name}")
        return TORCH_DTYPES[complex_of(self.dtype)]


def _torch_dtype_named(name):
    # how a pickled dtype comes back (dtype.__reduce__): the one object of its name
    found = TORCH_DTYPE_NAMES.get(name)
    return torch_dtype(as_dtype(name)) if found is None else found


TORCH_DTYPE_NAMES = {}                      # "float32": mg.float32, ...
TORCH_DTYPES = {}                           # {NumPy dtype: mg dtype}
for _numpy, _name in [(float16, "float16"), (float32, "float32"), (float64, "float64"),
                      (uint8, "uint8"), (int8, "int8"), (int16, "int16"), (int32, "int32"),
                      (int64, "int64"), (bool_, "bool"), (uint16, "uint16"),
                      (uint32, "uint32"), (uint64, "uint64"), (complex64, "complex64"),
                      (complex128, "complex128")] + \
        ([] if bfloat16 is None else [(bfloat16, "bfloat16")]) + \
        [(d, n) for n, d in FLOAT8.items() if not isinstance(d, str) and d is not None]:
    TORCH_DTYPES[_numpy] = TORCH_DTYPE_NAMES[_name] = dtype(_numpy, _name)


def is_dtype(value):
    """Whether ``value`` is a dtype itself: a NumPy dtype (``np.dtype("float32")``) or torch's
    dtype object (``mg.float32``, ``x.dtype``); a type (``np.float32``) or a name is not."""
    return value.__class__ is dtype or isinstance(value, np.dtype)


def torch_dtype(numpy_dtype):
    """The torch dtype object of a NumPy dtype (``x.dtype``; a type or a name such as
    ``np.float16`` or ``"bfloat16"`` too); a NumPy dtype torch lacks gets one of its own,
    named by NumPy."""
    found = TORCH_DTYPES.get(numpy_dtype)
    if found is None:
        numpy_dtype = as_dtype(numpy_dtype)
        found = TORCH_DTYPES.get(numpy_dtype)
        if found is None:
            found = TORCH_DTYPES[numpy_dtype] = dtype(numpy_dtype, str(numpy_dtype))
    return found
