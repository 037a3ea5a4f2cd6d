"""The tensor factories torch has beyond ``factories.py``: ``asarray``, ``scalar_tensor``,
``logspace``, ``tril_indices``/``triu_indices``, ``cartesian_prod``, ``combinations``,
``block_diag``, the windows of signal processing (``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window``, ``kaiser_window``), ``empty_strided``, the
deprecated ``range`` (its end included), ``concat`` and ``unravel_index``.

A factory of numbers computes each step in the result's dtype in torch's formula's order (a
window's ``arange · 2π/(L - 1)``, ``cos``, ``· -β``, ``+ α``), so float32 results are near
torch's, not equal (its vectorised ``cos`` and ``pow`` round differently: a window within
6e-8, an ulp of 1; ``logspace`` within a few ulp); the ones built from tensors
(``cartesian_prod``, ``combinations``, ``block_diag``) are compositions of ``meshgrid``,
``index_select`` and ``cat``, in the graph."""

import builtins
import itertools
import numbers
import warnings

import numpy as np

from .. import backend, dtypes, tensor_data
from .. import tensor as _tensor
from .base import (check_fits, check_tensor, constant, fitted, number_of, result_type,
                   size_args)
from .gamma import i0_array
from .storage import factory_memory, strided
from .indexing import index_select
from .shape import concatenate, meshgrid, stack

concat = concatenate                     # torch.concat: torch.cat's other name


def _leaf(fn, array, device, requires_grad, layout=None, pin_memory=False):
    # a new leaf of ``array`` on ``device`` (None: the CPU); layout= and pin_memory= checked
    factory_memory(fn, layout, pin_memory)
    device = backend.check_device(device)
    return _tensor.Tensor._leaf(fn, backend.to_device(array, device), requires_grad)


def _floating(fn, dtype):
    dtype = dtypes.default_float(dtype)
    if not dtypes.is_floating(dtype):
        raise RuntimeError(f"{fn} expects floating point dtypes, got: {dtype}")
    return dtype


# ----- asarray, scalar_tensor -----------------------------------------------------------------
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """``obj`` as a tensor, sharing memory where it can (``torch.asarray``).

    Args:
        obj: a Tensor (itself when dtype and device match and ``copy`` is not True; else
            ``to``/``clone``, in the graph), a NumPy (CuPy) array (wrapped, not copied,
            when it matches; one with a negative stride is torch's ValueError), or numbers
            and nested lists (a new tensor, torch's dtypes).
        dtype, device: of the result; None keeps obj's (the default dtype for floats in
            lists).
        copy: True always copies; False never does (a ValueError where it must); None
            copies only where it must.
        requires_grad: None keeps a tensor's flag (False for other data); True or False
            sets it, on obj itself when obj is returned, as torch's.

    Example:
        >>> a = np.zeros(3); t = mg.asarray(a); a[0] = 1        # t[0] is 1 too
    """
    dtype = dtypes.as_dtype(dtype)
    device = None if device is None else backend.check_device(device)
    if isinstance(obj, _tensor.Tensor):
        same = (dtype is None or dtype == obj.dtype) and device in (None, obj.device)
        if copy is False and not same:
            raise ValueError(f"asarray: can't alias a {obj.dtype} tensor on {obj.device} "
                             f"into dtype {dtype or obj.dtype} on {device or obj.device} "
                             "with copy=False")
        out = obj.to(device=device, dtype=dtype)
        if copy and out is obj:
            out = obj.clone()
        if requires_grad is not None and out.requires_grad != requires_grad:
            out.requires_grad_(requires_grad)
        return out
    if isinstance(obj, np.ndarray) or backend.is_cupy_array(obj):
        tensor_data.check_array("asarray", obj)        # torch's refusals, whatever copy=
        same = (dtype is None or dtype == obj.dtype) and device in (None,
                                                                   backend.device_of(obj))
        if copy is False and not same:
            raise ValueError(f"asarray: can't alias an array of dtype {obj.dtype} into "
                             f"dtype {dtype} on {device or backend.device_of(obj)} with "
                             "copy=False")
        array = obj if same and not copy else backend.new_array(obj, dtype or obj.dtype,
                                                                device or "cpu")
        return _leaf("asarray", array, device or backend.device_of(obj), bool(requires_grad))
    if copy is False:
        raise ValueError("asarray: can't alias an arbitrary sequence into a tensor "
                         "(copy=False)")
    if isinstance(obj, str):
        raise TypeError(f"asarray: invalid data type {type(obj).__name__!r}")
    out = _tensor.tensor(obj, dtype=dtype, device=device)
    return out.requires_grad_(bool(requires_grad)) if requires_grad else out


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False):
    """A 0-d tensor of the number ``s`` (or a 0-d tensor's value) in the default float dtype
    unless ``dtype`` is given (``torch.scalar_tensor``: an int or bool too); ``layout`` and
    ``pin_memory`` as every factory's."""
    if type(layout).__name__ == "layout":     # torch's builds a strided tensor whatever layout
        layout = None
    if isinstance(s, _tensor.Tensor) and s.ndim == 0:
        s = s.item()
    if not isinstance(s, (numbers.Number, np.bool_)):
        raise TypeError(f"scalar_tensor(): argument 's' must be a number, got "
                        f"{type(s).__name__}")
    dtype = dtypes.default_float(dtype)
    if isinstance(s, complex) and dtype.kind != "c":
        raise RuntimeError(f"scalar_tensor: value {s!r} cannot be converted to type {dtype} "
                           "without overflow")
    check_fits("scalar_tensor", s, dtype)
    with backend.silent_floats():
        array = np.asarray(s).astype(dtype)
    return _leaf("scalar_tensor", array, device, requires_grad, layout, pin_memory)


# ----- logspace, tril_indices, triu_indices ---------------------------------------------------
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    r"""``steps`` values from :math:`b^{\text{start}}` to :math:`b^{\text{end}}`, their
    exponents evenly spaced (``torch.logspace``): element i is :math:`b^{e_i}` with
    :math:`e_i = \text{start} + h i` in the first half and :math:`\text{end} - h (n - 1 - i)`
    in the second, :math:`h = (\text{end} - \text{start}) / (n - 1)`, the exponents in the
    dtype (float64 for an integer dtype, start and end truncated beyond one step) and the
    power in float64:
    torch's formula, within a few ulp of its float32 values (its vectorised ``pow`` rounds
    differently). The default float dtype unless ``dtype`` is given.

    Example:
        >>> mg.logspace(0, 2, 3)                             # tensor([  1.,  10., 100.])
    """
    dtypes.check_number("logspace", "base", base)
    start, end, steps, dtype = spaced_arguments("logspace", start, end, steps, dtype,
                                                RuntimeError)
    if dtype.kind in "biu":                      # the exponents in float64, from integers
        if dtype.kind in "iu" and steps > 1:       # torch casts the ends, checked: -2 is 254
            start, end = fitted("logspace", start, dtype), fitted("logspace", end, dtype)
        work, first, last = np.dtype(np.float64), float(int(start)), float(int(end))
    else:
        work = dtype if dtypes.is_floating(dtype) or dtype.kind == "c" else np.dtype(np.float64)
        with backend.silent_floats():     # an end past the dtype in no step, or one
            first, last = np.asarray([start, end], dtype=work)
    index = np.arange(steps)
    with backend.silent_floats():
        step = (work.type(last) - work.type(first)) / work.type(max(steps - 1, 1))
        exponents = np.where(index < steps // 2, first + step * index.astype(work),
                             last - step * (steps - 1 - index).astype(work)).astype(work)
    if steps == 1:              # torch's one-step case: base ** start, start not truncated,
        exponents = np.asarray([float(start) if dtype.kind in "biu" else first], dtype=work)
        if dtype.kind in "iu":  # the power cast checked (an overflow to inf refused there)
            with backend.silent_floats():
                power = float(np.float64(base) ** exponents[0])
            check_fits("logspace", power, dtype)
    wide = np.complex128 if dtype.kind == "c" else np.float64
    with backend.silent_floats():
        values = np.power(wide(base), exponents.astype(wide)).astype(dtype)
    return _leaf("logspace", values, device, requires_grad, layout, pin_memory)


def spaced_arguments(fn, start, end, steps, dtype, range_error):
    """``(start, end, steps, dtype)`` of ``linspace`` and ``logspace`` as torch reads them:
    0-d tensors as numbers (an integer one for ``steps``); real or complex ends, a complex
    one making the default complex dtype, which a real ``dtype`` refuses (torch's
    RuntimeError); ``steps`` below 0 is ``range_error``, and a bool ``dtype`` past one step
    torch's NotImplementedError. ``dtype`` is returned a NumPy dtype, the default float one
    for None."""
    start, end = number_of(fn, "start", start), number_of(fn, "end", end)
    if isinstance(steps, _tensor.Tensor) and steps.ndim == 0 and steps.dtype.kind in "iu":
        steps = steps.item()
    complex_ends = False
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
            complex_ends = True
        else:
            dtypes.check_number(fn, name, value)
    dtypes.check_number(fn, "steps", steps, integer=True)
    if steps < 0:
        raise range_error(f"{fn}: number of steps must be non-negative, got {steps}")
    if complex_ends:
        inferred = dtypes.complex_of(dtypes.get_default_dtype())
        if dtype is not None and dtypes.as_dtype(dtype).kind != "c":
            raise RuntimeError(f"{fn}(): inferred dtype {inferred} can't be safely cast to "
                               f"passed dtype {dtypes.as_dtype(dtype)}")
        dtype, start, end = dtype or inferred, complex(start), complex(end)
    dtype = dtypes.default_float(dtype)
    if dtype.kind == "b" and steps > 1:
        raise NotImplementedError(f'"{fn}_cpu" not implemented for \'Bool\' (more than one '
                                  'step; one step works)')
    if steps > 1 and dtype.kind not in "biu":
        for value in (start, end):          # torch casts the ends to the dtype, checked
            check_fits(fn, value, dtype)
    return start, end, steps, dtype


def _triangle_indices(fn, numpy_fn, row, col, offset, dtype, device, memory):
    factory_memory(fn, *memory)
    if str(memory[0]).endswith("jagged"):       # torch's triangles take the strided one only
        raise RuntimeError(f"{fn}(): only support layout=torch.strided, got {memory[0]}")
    row, col, offset = map(dtypes.index_of, (row, col, offset))    # tensor(3): its int
    for name, value in (("row", row), ("col", col), ("offset", offset)):
        dtypes.check_number(fn, name, value, integer=True)
    for name, value in (("row", row), ("col", col)):
        if value < 0:
            raise RuntimeError(f"{fn}: {name} must be non-negative, got {value}")
    dtype = np.dtype(np.int64) if dtype is None else dtypes.as_dtype(dtype)
    if dtype.kind not in "iu":
        raise NotImplementedError(f"{fn}: not implemented for {dtype} (integer dtypes only)")
    rows, cols = numpy_fn(int(row), int(offset), int(col))
    return _leaf(fn, np.stack([rows, cols]).astype(dtype), device, False)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 pin_memory=False):
    """The (2, N) indices of the lower triangle of a row × col matrix, the elements with
    ``j - i <= offset``, row by row (``torch.tril_indices``); int64 unless ``dtype``;
    ``layout`` and ``pin_memory`` as every factory's.

    Example:
        >>> r, c = mg.tril_indices(3, 3); m[r, c]              # the lower triangle of m
    """
    return _triangle_indices("tril_indices", np.tril_indices, row, col, offset, dtype, device,
                             (layout, pin_memory))


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 pin_memory=False):
    """The (2, N) indices of the upper triangle, ``j - i >= offset`` (``torch.triu_indices``);
    as ``tril_indices``."""
    return _triangle_indices("triu_indices", np.triu_indices, row, col, offset, dtype, device,
                             (layout, pin_memory))


# ----- cartesian_prod, combinations, block_diag -----------------------------------------------
def cartesian_prod(*tensors):
    """Every tuple of one element from each 1-D tensor, in lexicographic order
    (``torch.cartesian_prod``): (Π nᵢ, len(tensors)), or the one tensor itself; a
    ``meshgrid`` stacked, in the graph. The tensors must share one dtype."""
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if check_tensor("cartesian_prod", t).ndim != 1:
            raise RuntimeError(f"cartesian_prod: expect a 1D vector, but got shape {t.shape}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"meshgrid expects all tensors to have the same dtype, got "
                               f"{tensors[0].dtype} and {t.dtype}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([grid.reshape(-1) for grid in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-D tensor's elements, in lexicographic order of
    their positions (``torch.combinations``, Python's ``itertools.combinations``):
    (C(n, r), r); ``with_replacement`` repeats elements. r = 0 gives an empty 1-D tensor.
    One ``index_select``: the gradient sums back into each element."""
    check_tensor("combinations", input)
    if input.ndim != 1:
        raise RuntimeError(f"combinations: expect a 1D vector, but got shape {input.shape}")
    dtypes.check_number("combinations", "r", r, integer=True)
    if r < 0:
        raise RuntimeError(f"combinations: expect a non-negative number, but got {r}")
    if r == 0:
        return constant(input.xp.empty(0, input.dtype))
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    index = np.array(list(pick(builtins.range(input.shape[0]), r)), dtype=np.int64)
    index = index.reshape(-1, r)                                        # (C(n, r), r)
    positions = constant(input.xp.asarray(index.reshape(-1)))
    return index_select(input, 0, positions).reshape(index.shape)


def block_diag(*tensors):
    """The tensors on the diagonal of one matrix, zeros elsewhere (``torch.block_diag``): a
    0-d tensor counts as 1 × 1, a 1-D one as one row; the dtype torch's arithmetic gives them
    all. Rows of zeros and blocks joined by ``cat``, in the graph; no tensors give (1, 0)."""
    if not tensors:
        return constant(np.empty((1, 0), dtypes.get_default_dtype()))
    blocks = []
    for i, t in enumerate(tensors):
        if check_tensor("block_diag", t).ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    dtype = result_type(*tensors)
    width, xp = sum(b.shape[1] for b in blocks), tensors[0].xp
    rows, left = [], 0
    for block in blocks:
        height, right = block.shape[0], width - left - block.shape[1]
        rows.append(concatenate([constant(xp.zeros((height, left), dtype)),
                                 block.astype(dtype, copy=False),
                                 constant(xp.zeros((height, right), dtype))], 1))
        left += block.shape[1]
    return concatenate(rows, 0)


# ----- windows --------------------------------------------------------------------------------
def _window(fn, window_length, periodic, dtype, device, requires_grad, values, layout=None,
            pin_memory=False):
    """The window of ``values(n, dtype)`` (n points, the symmetric form), with torch's
    checks; ``periodic`` takes n + 1 points and drops the last. ``layout`` and
    ``pin_memory`` as every factory's (``factory_memory``)."""
    factory_memory(fn, layout, pin_memory)
    dtypes.check_number(fn, "window_length", window_length, integer=True)
    if window_length < 0:
        raise dtypes.ArgumentError(f"{fn} requires non-negative window_length, got "
                                   f"window_length={window_length}")
    dtype = _floating(fn, dtype)
    if window_length <= 1:
        array = np.ones(window_length, dtype)
    else:
        n = window_length + 1 if periodic else window_length
        array = values(n, dtype)[:window_length]
    return _leaf(fn, array, device, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   device=None, requires_grad=False, layout=None, pin_memory=False):
    r"""The generalized Hamming window (``torch.hamming_window``):
    :math:`w_i = \alpha - \beta \cos(2\pi i / (N - 1))`, N = window_length (+ 1 when
    ``periodic``, which drops the last point: the window for a DFT). One point gives 1,
    none an empty tensor; the default float dtype unless ``dtype`` (floating) is given."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _hamming_values(alpha, beta), layout, pin_memory)


def _hamming_values(alpha, beta):
    # values(n, dtype) of _window: α - β cos(2π i / (n - 1)), i < n, in dtype
    def values(n, dtype):
        angle = np.arange(n).astype(dtype) * dtype.type(2 * np.pi / (n - 1))
        return np.cos(angle) * dtype.type(-beta) + dtype.type(alpha)
    return values


def hann_window(window_length, periodic=True, *, dtype=None, device=None,
                requires_grad=False, layout=None, pin_memory=False):
    r"""The Hann window, :math:`w_i = 1/2 - 1/2 \cos(2\pi i / (N - 1)) = \sin^2(\pi i /
    (N - 1))` (``torch.hann_window``): ``hamming_window`` with α = β = 1/2."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _hamming_values(0.5, 0.5), layout, pin_memory)


def blackman_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False, layout=None, pin_memory=False):
    r"""The Blackman window (``torch.blackman_window``):
    :math:`w_i = 0.42 - 0.5 \cos(2\pi i / (N - 1)) + 0.08 \cos(4\pi i / (N - 1))`; N and
    ``periodic`` as ``hamming_window``'s."""
    def values(n, dtype):
        angle = np.arange(n).astype(dtype) * dtype.type(np.pi / (n - 1))
        return (np.cos(angle * dtype.type(4)) * dtype.type(0.08)
                - np.cos(angle * dtype.type(2)) * dtype.type(0.5) + dtype.type(0.42))
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   values, layout, pin_memory)


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False, layout=None, pin_memory=False):
    r"""The Bartlett (triangular) window (``torch.bartlett_window``): :math:`w_i = 2i/(N-1)`
    up to the middle, :math:`2 - 2i/(N-1)` after it; N and ``periodic`` as
    ``hamming_window``'s."""
    def values(n, dtype):
        out = np.arange(n).astype(dtype) * dtype.type(2 / (n - 1))
        first_half = (n - 1) // 2 + 1
        out[first_half:] = out[first_half:] * dtype.type(-1) + dtype.type(2)
        return out
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   values, layout, pin_memory)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None,
                  requires_grad=False, layout=None, pin_memory=False):
    r"""The Kaiser window (``torch.kaiser_window``):
    :math:`w_i = I_0(\beta \sqrt{1 - ((i - a)/a)^2}) / I_0(\beta)` with a = (N - 1)/2 and
    :math:`I_0` the modified Bessel function (``mg.i0``); N and ``periodic`` as
    ``hamming_window``'s, computed in float64 and rounded once."""
    dtypes.check_number("kaiser_window", "beta", beta)

    def values(n, dtype):
        middle = (n - 1) / 2
        ratio = (np.arange(n, dtype=np.float64) - middle) / middle
        return (i0_array(beta * np.sqrt(1 - ratio ** 2)) / i0_array(np.float64(beta))
                ).astype(dtype)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   values, layout, pin_memory)


# ----- empty_strided, range, unravel_index ----------------------------------------------------
def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False):
    """Uninitialized values of ``size`` with the element strides ``stride``
    (``torch.empty_strided``): a strided view of a fresh block of memory just large enough
    for it, as torch's storage of ``1 + Σ (size_k - 1) · stride_k`` elements (none for an
    empty size); transposed, overlapping (a zero stride) and gapped layouts alike. Its values
    are zeros here.

    Args:
        size, stride: tuples of ints of one length, the strides in elements (>= 0).
        dtype: of the result; the default dtype when None.
        device, requires_grad, layout, pin_memory: as torch's factories take them.

    Example:
        >>> mg.empty_strided((2, 3), (1, 2)).stride()                        # (1, 2)
    """
    size, stride = size_args("empty_strided", (size,)), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"empty_strided: dimensionality of sizes ({len(size)}) must match "
                           f"dimensionality of strides ({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided: Storage size calculation overflowed with "
                           f"sizes={list(size)} and strides={list(stride)}")
    dtype = dtypes.default_float(dtype)
    needed = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    memory = np.zeros(needed, dtype)
    array = np.lib.stride_tricks.as_strided(memory, size, [s * memory.itemsize for s in stride])
    return _leaf("empty_strided", array, device, requires_grad, layout, pin_memory)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """Uninitialized values of ``size`` laid out in memory in the order of dims
    ``physical_layout``, outermost first (``torch.empty_permuted``): ``(0, 2, 3, 1)`` of an
    (N, C, H, W) size is channels-last. ``layout`` and ``pin_memory`` are taken, as torch's
    CPU defaults.

    Example:
        >>> mg.empty_permuted((2, 3, 4), (0, 2, 1)).stride()                  # (12, 1, 3)
    """
    size, order = size_args("empty_permuted", (size,)), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError("Duplicate dim not allowed")
    array = np.empty([size[d] for d in order], dtypes.default_float(dtype))
    return _leaf("empty_permuted", array.transpose(np.argsort(order)), device, requires_grad,
                 layout, pin_memory)


def range(start, end, step=1, *, dtype=None, device=None, requires_grad=False,
          layout=strided):
    """Values from ``start`` to ``end`` **included** by ``step`` (``torch.range``, deprecated:
    it warns, as torch's; use ``arange``, which excludes ``end``): ⌊(end - start)/step⌋ + 1
    values start + i·step, computed in float64 (integers for an integer ``dtype``, the
    arguments truncated), in the default float dtype unless ``dtype`` is given; ``layout`` as
    every factory's, but a layout (None is torch's TypeError); no ``pin_memory``, as torch's."""
    if layout is None:
        raise TypeError("range(): argument 'layout' must be torch.layout, not NoneType")
    factory_memory("range", layout, False)
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    for name, value in (("start", start), ("end", end), ("step", step)):
        dtypes.check_number("range", name, value)
    dtype = dtypes.default_float(dtype)
    if dtype == np.bool_:
        raise NotImplementedError('"range_cpu" not implemented for \'Bool\'')
    if (step > 0 and end < start) or (step < 0 and end > start):   # the values as given
        raise RuntimeError("range: upper bound and lower bound inconsistent with step sign")
    if not (dtypes.is_floating(dtype) or dtype.kind == "c"):
        start, end, step = int(start), int(end), int(step)
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    if not (np.isfinite(start) and np.isfinite(end)):
        raise RuntimeError(f"range: unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("range: upper bound and lower bound inconsistent with step sign")
    count = int((end - start) / step + 1)
    values = start + np.arange(count) * (step if isinstance(step, int) else float(step))
    with backend.silent_floats():
        return _leaf("range", np.asarray(values).astype(dtype), device, requires_grad)


def unravel_index(indices, shape):
    """The coordinates in a tensor of ``shape`` of each flat index (``torch.unravel_index``):
    a tuple of int64 tensors, one per dim, each of indices' shape. Indices wrap modulo the
    size, as torch's (-1 is the last element).

    Example:
        >>> mg.unravel_index(mg.tensor([4, 1]), (2, 3))     # (tensor([1, 0]), tensor([1, 1]))
    """
    check_tensor("unravel_index", indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: expected 'indices' to be integer dtype, but got "
                        f"{indices.dtype}")
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list, _tensor.Size)):
        raise TypeError(f"unravel_index: expected 'shape' to be int or sequence of ints, but "
                        f"got {type(shape).__name__}")
    for n in shape:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise TypeError(f"unravel_index: expected 'shape' sequence to only contain ints, "
                            f"but got {type(n).__name__}")
    if any(n < 0 for n in shape):
        raise ValueError(f"unravel_index: 'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    if 0 in shape:
        raise RuntimeError(f"unravel_index: ZeroDivisionError (shape {tuple(shape)} holds "
                           "no element)")
    sizes = np.asarray(shape, dtype=np.int64)
    strides = np.cumprod(np.concatenate([sizes[1:], [1]])[::-1])[::-1]      # row-major
    flat = backend.to_numpy(indices._array).astype(np.int64)[..., None]
    coordinates = flat // strides % sizes                                   # (..., ndim)
    xp = indices.xp
    return tuple(constant(xp.asarray(coordinates[..., d])) for d in np.arange(len(shape)))
