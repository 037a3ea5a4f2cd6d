"""``mg.testing``, ``torch.testing``'s comparison and creation helpers: ``assert_close`` (and
its deprecated form ``assert_allclose``) and ``make_tensor``.

``assert_close`` follows torch's rules: two inputs are paired as torch pairs them (both
None; both bools; both numbers; two tensors, or two NumPy arrays, directly related by type;
sequences and mappings elementwise), each pair is checked the same way (shape, then device,
dtype and, if asked, strides; then the values), and the first failure raises torch's error
class with torch's message: an AssertionError that says "Tensor-likes are not close!" with
the count of mismatched elements and the greatest absolute and relative differences, and
where in a nested input it occurred. Two values are close when

    |actual - expected| <= atol + rtol · |expected|

(infinities equal only to themselves, NaN to NaN only with ``equal_nan``), with torch's
default tolerances per dtype (``DTYPE_PRECISIONS``; exact for integers and bools). The
values are compared on NumPy arrays and record no graph. ``make_tensor`` draws from the
default generator as torch's does, so a seed gives torch's values."""

import cmath
import collections.abc
import math
import warnings

import numpy as np

from . import backend, dtypes
from .factories import as_tensor, empty, randint
from .ops.complex import view_as_complex
from .ops.torch_more import promote_types
from .tensor import Tensor

__all__ = ["DTYPE_PRECISIONS", "assert_allclose", "assert_close", "make_tensor"]

# {dtype: (rtol, atol)}: torch.testing's defaults; a dtype not listed (integers, bool) is exact
DTYPE_PRECISIONS = {dtypes.float16: (1e-3, 1e-5), dtypes.float32: (1.3e-6, 1e-5),
                    dtypes.float64: (1e-7, 1e-7), dtypes.complex64: (1.3e-6, 1e-5),
                    dtypes.complex128: (1e-7, 1e-7)}
if dtypes.has_bfloat16():
    DTYPE_PRECISIONS[dtypes.bfloat16] = (0.016, 1e-5)
# the dtype a Python number counts as, for its tolerances
_NUMBER_DTYPES = {int: dtypes.int64, float: dtypes.float64, complex: dtypes.complex128}


class _Failure(Exception):
    """One pair's failure: the error class torch raises, its message, and the place in a
    nested input (a tuple of indices and keys)."""

    def __init__(self, error, message, place=()):
        super().__init__(message)
        self.error, self.message, self.place = error, message, place

    def to_error(self, msg=None):
        if isinstance(msg, str):
            return self.error(msg)
        message = self.message
        if self.place:
            message += ("\n\nThe failure occurred for item "
                        + "".join(str([item]) for item in self.place))
        return self.error(msg(message) if callable(msg) else message)


class _Unsupported(Exception):
    """This kind of pair does not take these inputs: the next kind is tried."""


def _tolerances(dtype_list, rtol, atol, place):
    if (rtol is None) != (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or "
                                   f"omitted, but got no {'rtol' if rtol is None else 'atol'}.",
                       place)
    if rtol is not None:
        return rtol, atol
    found = [DTYPE_PRECISIONS.get(np.dtype(dtype), (0.0, 0.0)) for dtype in dtype_list]
    return max(r for r, _ in found), max(a for _, a in found)


def _mismatch_message(identifier, extra, abs_diff, rel_diff, rtol, atol, abs_at=None,
                      rel_at=None):
    # torch's _make_mismatch_msg: "equal" when no tolerance is allowed
    equality = rtol == 0 and atol == 0
    lines = [f"{identifier} are not {'equal' if equality else 'close'}!", "", extra]
    for kind, diff, at, tol in (("absolute", abs_diff, abs_at, atol),
                                ("relative", rel_diff, rel_at, rtol)):
        line = (f"{kind.title()} difference: {diff}" if at is None
                else f"Greatest {kind} difference: {diff} at index {at}")
        lines.append(line if equality else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = math.inf if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff,
                             rel_diff, rtol, atol)


# ----- the pairs: None, bools, numbers, tensor-likes ------------------------------------------
# Each takes two inputs and returns the check that compares them, or raises _Unsupported when
# it does not take them (torch builds every pair of a nested input before comparing any).
def _pair_none(actual, expected, place, options):
    if actual is not None and expected is not None:
        raise _Unsupported

    def check():
        if actual is not expected:
            raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", place)
    return check


def _pair_bools(actual, expected, place, options):
    if not all(isinstance(v, (bool, np.bool_)) for v in (actual, expected)):
        raise _Unsupported

    def check():
        if bool(actual) is not bool(expected):
            raise _Failure(AssertionError, f"Booleans mismatch: {bool(actual)} is not "
                                           f"{bool(expected)}", place)
    return check


def _pair_numbers(actual, expected, place, options):
    if not all(isinstance(v, (int, float, complex, np.number)) for v in (actual, expected)):
        raise _Unsupported
    actual, expected = (v.item() if isinstance(v, np.number) else v for v in (actual, expected))
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(v)] for v in (actual, expected)],
                             options["rtol"], options["atol"], place)

    def check():
        if options["check_dtype"] and type(actual) is not type(expected):
            raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                           f"{type(expected)}.", place)
        if actual == expected or (options["equal_nan"] and cmath.isnan(actual)
                                  and cmath.isnan(expected)):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
            return
        raise _Failure(AssertionError, _scalar_message(actual, expected, rtol, atol), place)
    return check


def _as_tensor_like(value):
    # a Tensor as it is; anything else torch.as_tensor would take (a NumPy array), made one
    if isinstance(value, Tensor):
        return value
    try:
        return as_tensor(value)
    except Exception:
        raise _Unsupported from None


def _pair_tensor_likes(actual, expected, place, options):
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if not related or (not options["allow_subclasses"] and type(actual) is not type(expected)):
        raise _Unsupported
    actual, expected = _as_tensor_like(actual), _as_tensor_like(expected)
    rtol, atol = _tolerances([actual.dtype, expected.dtype], options["rtol"], options["atol"],
                             place)
    return lambda: _compare_tensors(actual, expected, rtol, atol, place, options)


def _compare_tensors(actual, expected, rtol, atol, place, options):
    def mismatch(attribute, a, e):
        raise _Failure(AssertionError, f"The values for attribute '{attribute}' do not "
                                       f"match: {a} != {e}.", place)

    if actual.shape != expected.shape:
        mismatch("shape", repr(actual.shape), repr(expected.shape))
    if options["check_stride"] and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if options["check_device"] and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if options["check_dtype"] and actual.dtype != expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)
    a, e = backend.to_numpy(actual.detach()._array), backend.to_numpy(expected.detach()._array)
    if a.dtype != e.dtype:                    # check_dtype=False: torch's promotion
        common = promote_types(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    matches = _close(a, e, rtol, atol, options["equal_nan"])
    if matches.all():
        return
    if a.ndim == 0:
        message = _scalar_message(a.item(), e.item(), rtol, atol)
    else:
        message = _tensor_message(a, e, matches, rtol, atol)
    raise _Failure(AssertionError, message, place)


def _close(a, e, rtol, atol, equal_nan):
    """torch.isclose on arrays of one dtype: equal, or both finite and within the bound."""
    if a.dtype.kind in "biu" and rtol == 0 and atol == 0:
        return a == e
    if not (dtypes.is_floating(a.dtype) or dtypes.is_complex(a.dtype)):
        a, e = a.astype(np.float64), e.astype(np.float64)
    elif dtypes.is_half(a.dtype):
        a, e = a.astype(np.float32), e.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        close = a == e
        finite = np.isfinite(a) & np.isfinite(e)
        close |= finite & (np.abs(a - e) <= atol + rtol * np.abs(e))
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    return close


def _tensor_message(a, e, matches, rtol, atol):
    # torch's make_tensor_mismatch_msg: the differences of the mismatched elements only, in
    # the compared dtype (integers and bools as int64); the index of the first greatest one
    shape, total = matches.shape, matches.size
    mismatched = int(total - matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a, e, matches = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if a.dtype.kind in "biu":
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[matches] = 0
        rel_diff = abs_diff / np.abs(e)
    rel_diff[matches] = 0
    abs_at, rel_at = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))

    def index(flat):
        return tuple(int(i) for i in np.unravel_index(flat, shape))
    return _mismatch_message("Tensor-likes", extra, abs_diff[abs_at].item(),
                             rel_diff[rel_at].item(), rtol, atol, index(abs_at), index(rel_at))


_PAIRS = (_pair_none, _pair_bools, _pair_numbers, _pair_tensor_likes)


def _pairs(actual, expected, place, options):
    """The checks of ``actual`` against ``expected``: nested sequences and mappings
    elementwise, as torch's ``originate_pairs``; a structure that differs raises here."""
    if (isinstance(actual, collections.abc.Sequence) and not isinstance(actual, str)
            and isinstance(expected, collections.abc.Sequence)
            and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: "
                                           f"{len(actual)} != {len(expected)}", place)
        return [check for i in range(len(actual))
                for check in _pairs(actual[i], expected[i], place + (i,), options)]
    if (isinstance(actual, collections.abc.Mapping)
            and isinstance(expected, collections.abc.Mapping)):
        keys, expected_keys = set(actual.keys()), set(expected.keys())
        if keys != expected_keys:
            raise _Failure(AssertionError, "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(expected_keys - keys)}\n"
                           f"Additional keys in the actual mapping: "
                           f"{sorted(keys - expected_keys)}", place)
        try:
            keys = sorted(keys)
        except TypeError:                         # keys of mixed types: any order
            pass
        return [check for key in keys
                for check in _pairs(actual[key], expected[key], place + (key,), options)]
    for pair in _PAIRS:
        try:
            return [pair(actual, expected, place, options)]
        except _Unsupported:
            continue
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type "
                              f"{type(actual)} and {type(expected)}.", place)


# ----- the public functions -------------------------------------------------------------------
def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` are close (``torch.testing.assert_close``):

        |actual - expected| <= atol + rtol · |expected|

    elementwise, with ``rtol`` and ``atol`` both given or both left to the dtypes' defaults
    (the looser of the two inputs'): float16 1e-3 and 1e-5, bfloat16 1.6e-2 and 1e-5,
    float32 and complex64 1.3e-6 and 1e-5, float64 and complex128 1e-7 and 1e-7, exact
    for integers and bools; a Python float counts as float64, an int as int64.

    Args:
        actual, expected: Tensors (or NumPy arrays, compared with NumPy arrays), Python
            numbers, bools, None, or sequences and mappings of them, nested.
        allow_subclasses: a Parameter compares with a Tensor; False: the types must match.
        rtol, atol: the tolerances; one without the other is a ValueError.
        equal_nan: NaN equals NaN.
        check_device, check_dtype, check_stride: the attributes checked before the values;
            a dtype left unchecked is promoted as ``mg.promote_types`` does first.
        check_layout: taken; every tensor here is strided.
        msg: replaces the message, or (a callable) is given the message and returns one.

    Raises:
        AssertionError: the first pair that differs ("Tensor-likes are not close!" with
            the count of mismatched elements and the greatest absolute and relative
            differences; a shape, device or dtype that differs), and where it is in a
            nested input; TypeError: inputs no pair takes (a Tensor and a list).

    Example:
        >>> mg.testing.assert_close(mg.tensor([1.0, 2.0]), mg.tensor([1.0, 2.0 + 1e-9]))
    """
    __tracebackhide__ = True         # pytest shows the caller's line
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                   equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    try:
        for check in _pairs(actual, expected, (), options):
            check()
    except _Failure as failure:
        raise failure.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated since torch 1.12, still in torch (``torch.testing.assert_allclose``): warns
    FutureWarning, makes Tensors of non-Tensors (``expected`` in ``actual``'s dtype), and
    calls ``assert_close`` with its older tolerances (float16 1e-3 and 1e-3, float32 1e-4
    and 1e-5, float64 1e-5 and 1e-8), ``equal_nan=True`` and ``check_dtype=False``."""
    __tracebackhide__ = True
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead.", FutureWarning, stacklevel=2)
    actual = actual if isinstance(actual, Tensor) else as_tensor(actual)
    if not isinstance(expected, Tensor):
        expected = as_tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        older = {dtypes.float16: (1e-3, 1e-3), dtypes.float32: (1e-4, 1e-5),
                 dtypes.float64: (1e-5, 1e-8)}
        found = [older.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(r for r, _ in found), max(a for _, a in found)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)


def _low_high(low, high, dtype, lowest, highest, default_low, default_high, integral):
    """torch's ``modify_low_high``: the defaults, the checks, the clamp to the dtype."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and not integral:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. "
                      "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, "
                         f"{high}), but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if integral:            # low ceiled to stay in the interval; randint's high is exclusive
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` with values drawn uniformly from [low, high)
    (``torch.testing.make_tensor``), from the default generator in torch's order: after
    the same ``manual_seed``, torch's values.

    The defaults: [-9, 9) for floating and complex dtypes, [-9, 10) for signed integers
    ([0, 10) for uint8), [0, 2) for bool; a bound outside the dtype's range is clamped
    to it.

    Args:
        shape: ints, or one sequence of them.
        dtype, device: the tensor's (keyword-only, as torch's).
        low, high: the interval; ``low >= high``, or a NaN, is a ValueError.
        requires_grad: for floating and complex dtypes (a ValueError for the others).
        noncontiguous: taken; every tensor here owns a contiguous array (the values are
            those of torch's non-contiguous tensor: every other one of twice as many).
        exclude_zero: zeros replaced by 1 (integers, bool) or the dtype's ``tiny``.
        memory_format: the layout (``mg.channels_last``, ...; not with ``noncontiguous``).

    Example:
        >>> mg.manual_seed(0)
        >>> x = mg.testing.make_tensor(2, 3, dtype=mg.float32, device="cpu", low=-1, high=1)
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    dtype = dtypes.as_dtype(dtype)
    floating = dtypes.is_floating(dtype) or dtypes.is_complex(dtype)
    if dtype.kind not in "biu" and not floating:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor().")
    if requires_grad and not floating:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:               # twice the last dim, every other element kept below
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype.kind == "b":
        low, high = _low_high(low, high, dtype, 0, 2, 0, 2, True)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        highest = int(info.max) + (1 if dtype != np.int64 else 0)
        low, high = _low_high(low, high, dtype, int(info.min), highest, -9, 10, True)
        result = randint(low, high, shape, device=device, dtype=dtype)
    else:
        real = dtypes.real_of(dtype)
        info = dtypes.finfo(real)
        low, high = _low_high(low, high, dtype, float(info.min), float(info.max), -9, 9,
                              False)
        # torch fills view_as_real(result) of a complex dtype: (..., 2) in the same order
        draws = empty(shape + ((2,) if dtypes.is_complex(dtype) else ()), dtype=real,
                      device=device)
        if high - low >= float(info.max):         # uniform_ needs high - low finite
            draws.uniform_(low / 2, high / 2).mul_(2)
        else:
            draws.uniform_(low, high)
        result = view_as_complex(draws) if dtypes.is_complex(dtype) else draws
    if noncontiguous:
        result = result[..., 1::2].contiguous()
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        tiny = 1 if not floating else float(dtypes.finfo(dtypes.real_of(dtype)).tiny)
        result[result == 0] = tiny
    if floating:
        result.requires_grad_(requires_grad)
    return result
