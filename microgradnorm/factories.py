"""Tensor factories with PyTorch's names: floating ones in the default dtype (float32 unless
``mg.set_default_dtype`` changed it) when dtype is not given; random ones drawn from a
``Generator`` (generator.py: PyTorch's CPU streams, so ``mg.manual_seed(s)`` then
``mg.randn(...)`` gives ``torch.manual_seed(s)`` then ``torch.randn(...)``'s values)."""

import numbers
import operator

import numpy as np

from . import backend, dtypes, tensor_data
from . import generator as streams
from . import sampling
from .ops import creation, memory_formats
from .ops import shape as shape_ops
from .ops.base import broadcast_shape, check_fits, fitted, number_of, size_args, sizes_of
from .ops.storage import contiguous_format, factory_memory, preserve_format
from .ops.tensor_more import ConstantResult
from .autograd import is_grad_enabled
from .autograd.inputs import RequiresGradError
from .tensor import Tensor, tensor

__all__ = ["arange", "as_tensor", "bernoulli", "empty", "empty_like", "eye", "from_numpy",
           "full", "full_like", "get_rng_state", "initial_seed", "is_tensor", "linspace",
           "manual_seed", "multinomial", "normal", "ones", "ones_like", "rand", "rand_like",
           "randint", "randint_like", "randn", "randn_like", "randperm", "seed",
           "set_rng_state", "zeros", "zeros_like"]


def _make(fn, array, dtype, device, requires_grad, layout=None, pin_memory=False):
    # every factory's layout= and pin_memory= are checked here (or in _check, before a draw)
    if layout is not None or pin_memory is not False:
        factory_memory(fn, layout, pin_memory)
    backend.check_device(device)
    if dtype is not None:
        array = array.astype(dtypes.as_dtype(dtype), copy=False)
    return Tensor._leaf(fn, backend.to_device(array, device), requires_grad)


def zero_gradient(draw, *sources):
    """``draw`` in the graph of each Tensor in ``sources`` that requires grad, with a zero
    gradient to it: torch records ``normal(mean, std)``, ``bernoulli(p)`` and
    ``poisson(rates)`` so (the draw does not move with its parameters). One
    ``ConstantResult`` node, the in-place comparisons' (ops/tensor_more.py)."""
    needing = [t for t in sources if isinstance(t, Tensor) and t.requires_grad]
    if needing and is_grad_enabled():
        return ConstantResult.apply(*needing, result=draw._array)
    return draw


def _check(fn, device, requires_grad, dtype=None, memory=(None, False)):
    # before any draw: a failed call leaves the generator where it was
    factory_memory(fn, *memory)
    backend.check_device(device)
    if not isinstance(requires_grad, bool):
        raise TypeError(f"{fn}: requires_grad must be True or False, got {requires_grad!r}")
    if requires_grad and dtype is not None and not (dtypes.is_floating(dtype)
                                                    or dtypes.is_complex(dtype)):
        raise RequiresGradError(f"{fn}: only floating-point and complex tensors can require "
                                f"grad, got dtype {dtype}")


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False, layout=None,
          pin_memory=False):
    """Zeros of ``size`` (ints, one tuple or ``size=``), in the default float dtype unless
    dtype is given (``torch.zeros``)."""
    array = np.zeros(size_args("zeros", sizes, size), dtypes.default_float(dtype))
    return _make("zeros", array, None, device, requires_grad, layout, pin_memory)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False, layout=None,
         pin_memory=False):
    """Ones of ``size`` (ints, one tuple or ``size=``), in the default float dtype unless
    dtype is given (``torch.ones``)."""
    array = np.ones(size_args("ones", sizes, size), dtypes.default_float(dtype))
    return _make("ones", array, None, device, requires_grad, layout, pin_memory)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False, layout=None,
          pin_memory=False, memory_format=contiguous_format):
    """Uninitialized values of ``size``, in the default float dtype unless dtype is given
    (``torch.empty``), laid out in ``memory_format`` (``mg.channels_last`` for a 4-D size:
    strides (HWC, 1, WC, C))."""
    array = memory_formats.empty(size_args("empty", sizes, size), dtypes.default_float(dtype),
                                 memory_format)
    return _make("empty", array, None, device, requires_grad, layout, pin_memory)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
         pin_memory=False):
    """A tensor of ``size`` filled with ``fill_value``, by default of its kind: bool, int64,
    or the default float dtype for a float (``torch.full``)."""
    size = size_args("full", (size,))
    if isinstance(fill_value, Tensor):       # torch reads a number from a 0-d one only
        if fill_value.ndim != 0:
            raise TypeError(f"full: fill_value must be a number or a 0-d tensor, got a "
                            f"tensor of shape {tuple(fill_value.shape)}")
        fill_value = fill_value.item()
    if isinstance(fill_value, numbers.Complex) and not isinstance(fill_value, numbers.Real) \
            and (dtype is None or dtypes.as_dtype(dtype).kind == "c"):
        dtype = dtypes.as_dtype(dtype) or dtypes.complex_of(dtypes.get_default_dtype())
        return _make("full", np.full(size, fill_value, dtype), None, device, requires_grad,
                     layout, pin_memory)
    if not isinstance(fill_value, (numbers.Number, np.bool_)):
        raise TypeError(f"full: fill_value must be a number, got "
                        f"{type(fill_value).__name__} {fill_value!r}")
    # a NumPy bool is a number to torch (its default float dtype), a Python bool a bool
    default = np.bool_ if isinstance(fill_value, bool) else \
        np.int64 if isinstance(fill_value, numbers.Integral) else dtypes.get_default_dtype()
    array = shape_ops.filled("full", size, fill_value, dtypes.as_dtype(dtype) or default)
    return _make("full", array, None, device, requires_grad, layout, pin_memory)


class RangeError(RuntimeError, ValueError):
    """A range a factory cannot make (a zero step, ends against the step's sign, negative
    steps): torch's RuntimeError, and a ValueError."""


def arange(start=None, end=None, step=1, *, dtype=None, device=None, requires_grad=False,
           layout=None, pin_memory=False):
    r"""Values from ``start`` to ``end`` (exclusive) by ``step`` (``torch.arange``): int64 if
    all three are ints, else the default float dtype, unless dtype is given.

    Formula:
        :math:`\lceil(\text{end} - \text{start}) / \text{step}\rceil` elements, element i
        :math:`\text{start} + \text{step}\,i` in float64, then rounded to the dtype. The
        step's sign is checked, and the length taken, on the values as given; for an
        integer dtype start and step are then truncated to ints (torch's kernel casts them;
        the values wrap: -2 is 254 in uint8), and for int64 alone the length too comes from
        the truncated start, end and step (a step that truncates to 0 is an error there).

    Args:
        start, end, step: real numbers or 0-d tensors; ``arange(end)`` starts at 0.

    Example:
        >>> mg.arange(-2.5, 0, 1, dtype=mg.int32)      # 3 elements, from -2
        tensor([-2, -1,  0], dtype=int32)
    """
    if end is None and step != 1:          # torch's arange(end) takes no step
        raise TypeError(f"arange(): a step ({step!r}) needs a start and an end")
    start, end = (0, start) if end is None else (0 if start is None else start, end)
    if end is None:
        raise TypeError("arange() missing 1 required positional argument: 'end'")
    start, end, step = (value.item() if isinstance(value, Tensor) and value.ndim == 0
                        else value for value in (start, end, step))
    for name, value in (("start", start), ("end", end), ("step", step)):
        if not isinstance(value, numbers.Real):        # bools count as ints, as in torch
            raise TypeError(f"arange: {name} must be a real number, got "
                            f"{type(value).__name__} {value!r}")
    if dtype is not None and dtypes.as_dtype(dtype).kind in "bc":
        raise NotImplementedError(f"\"arange_cpu\" not implemented for {dtypes.as_dtype(dtype)} "
                                  "(torch has no bool or complex arange); cast a real one")
    if step == 0:
        raise RangeError("arange: step must be nonzero, got 0")
    if not (np.isfinite(start) and np.isfinite(end)):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end}")
    if (end - start) * step < 0:
        raise RangeError(f"arange: the range from start {start} to end {end} goes against "
                         f"step {step}")
    integral = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    dtype = dtypes.as_dtype(dtype) if dtype is not None else \
        np.dtype(np.int64) if integral else dtypes.get_default_dtype()
    count = int(np.ceil((float(end) - float(start)) / float(step)))
    if dtype.kind not in "iu":
        array = float(start) + float(step) * np.arange(count, dtype=np.float64)
        return _make("arange", array, dtype, device, requires_grad, layout, pin_memory)
    for value in (start, end, step):
        check_fits("arange", value, np.dtype(np.int64))      # inf, 1e30: torch's error
    first, stride = int(start), int(step)
    if dtype == np.int64:
        if stride == 0:
            raise RangeError(f"arange: step must be nonzero, got {step} (0 as an int64)")
        count = -(-(int(end) - first) // stride)                 # the ceiling, in ints
    array = first + stride * np.arange(count, dtype=np.int64)
    return _make("arange", array, dtype, device, requires_grad, layout, pin_memory)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    r"""``steps`` evenly spaced values from ``start`` to ``end``, both included
    (``torch.linspace``), in the default float dtype unless dtype is given.

    Formula:
        :math:`h = (\text{end} - \text{start}) / (\text{steps} - 1)`; element i is
        :math:`\text{start} + h\,i` in the first half and :math:`\text{end} - h\,(\text{steps}
        - 1 - i)` in the second (torch's split, so both ends are exact), in the dtype,
        each rounded once (a fused multiply-add, as torch's compiled kernel; halves and
        complex dtypes round the product and the sum apart, as torch's arithmetic). For
        an integer dtype the ends are first converted to it, as torch's kernel does (-3 is
        253 in uint8; inf, NaN or out of range is torch's RuntimeError), h and the elements
        computed in float64, then truncated.

    Args:
        start, end: real or complex numbers (or 0-d tensors of them); a complex one gives
            the default complex dtype. steps: an int >= 0 (or a 0-d integer tensor); 1
            gives ``[start]``.

    Example:
        >>> mg.linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    start, end, steps, dtype = creation.spaced_arguments("linspace", start, end, steps, dtype,
                                                         RangeError)
    work = dtype if dtypes.is_floating(dtype) or dtype.kind == "c" else np.dtype(np.float64)
    if dtype.kind in "iu":      # torch casts the ends to the dtype first: -3 is 253 in uint8
        if steps > 0:                             # (none for no step, the start for one)
            start = fitted("linspace", start, dtype)
        if steps > 1:
            end = fitted("linspace", end, dtype)
    index = np.arange(steps)
    half = steps // 2
    with backend.silent_floats():                 # inf ends: NaNs, as torch's, no warnings
        first, last = np.asarray(start).astype(work), np.asarray(end).astype(work)
        step = (last - first) / work.type(max(steps - 1, 1))
        if work.kind == "f" and work.itemsize >= 4:    # torch's contracted FMA, one rounding
            fused = backend.fused_multiply_add          # (halves round product and sum);
            # each half computed on its own slice: the FMA costs some twenty passes
            values = np.concatenate([fused(index[:half].astype(work), step, first),
                                     fused((steps - 1 - index[half:]).astype(work), -step,
                                           last)])
        else:
            values = np.where(index < half, first + step * index.astype(work),
                              last - step * (steps - 1 - index).astype(work))
    if steps == 1:                                        # torch: the start alone
        values = first.reshape(1)
    return _make("linspace", values.astype(dtype, copy=False), None, device, requires_grad,
                 layout, pin_memory)


def _sample(fn, size, dtype, device, requires_grad, memory, draw):
    # draw(n) fills a fresh array of ``size`` in ``dtype`` (checked first: no draw on error)
    size = size_args(fn, size)
    _check(fn, device, requires_grad, dtype, memory)
    array = backend.empty_array(size, dtype, device)         # meta: no draw (torch's)
    streams.fill(array, lambda n, contiguous: draw(n))
    return _make(fn, array, None, device, requires_grad)


def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False,
          layout=None, pin_memory=False):
    r"""Samples of N(0, 1) of ``size`` (ints or one tuple), in the default float dtype
    unless dtype is given (``torch.randn``).

    Formula:
        Box-Muller on ``generator``'s uniforms, PyTorch's CPU algorithm (generator.py): the
        same seed gives torch's values bit for bit.

    Args:
        generator: a ``mg.Generator``, by default ``mg.default_generator``.

    Example:
        >>> mg.manual_seed(0); mg.randn(3)       # torch.manual_seed(0); torch.randn(3)
        tensor([ 1.5410, -0.2934, -2.1788])
    """
    gen = streams.check_generator("randn", generator)
    dtype = dtypes.default_float(dtype)
    return _sample("randn", (sizes_of(sizes, size),), dtype, device, requires_grad,
                   (layout, pin_memory), lambda n: sampling.normal(gen, n, dtype))


def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False,
         layout=None, pin_memory=False):
    r"""Samples of U[0, 1) of ``size`` (ints or one tuple), in the default float dtype
    unless dtype is given (``torch.rand``).

    Formula:
        :math:`(w \bmod 2^{24})\,2^{-24}` of one 32-bit word (float64: 53 bits of two),
        PyTorch's CPU algorithm (generator.py).

    Args:
        generator: a ``mg.Generator``, by default ``mg.default_generator``.

    Example:
        >>> mg.manual_seed(0); mg.rand(3)        # torch.manual_seed(0); torch.rand(3)
        tensor([0.4963, 0.7682, 0.0885])
    """
    gen = streams.check_generator("rand", generator)
    dtype = dtypes.default_float(dtype)
    return _sample("rand", (sizes_of(sizes, size),), dtype, device, requires_grad,
                   (layout, pin_memory), lambda n: sampling.uniform(gen, n, dtype))


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None,
            requires_grad=False, layout=None, pin_memory=False):
    r"""Integers drawn uniformly from [low, high) (``torch.randint(high, size)`` or
    ``randint(low, high, size)``), int64 unless dtype is given.

    Formula:
        :math:`(w \bmod (\text{high} - \text{low})) + \text{low}`, w a 32-bit word (a 64-bit
        draw for a range of :math:`2^{28}` or more), as PyTorch's CPU ``random_``.

    Args:
        generator: a ``mg.Generator``, by default ``mg.default_generator``.

    Example:
        >>> mg.manual_seed(0); mg.randint(10, (4,))
        tensor([4, 9, 3, 0])
    """
    gen = streams.check_generator("randint", generator)
    # torch's keywords: randint(low=0, high=10, size=(3,)), randint(high=10, size=(3,)),
    # randint(0, high=10, size=(3,)): a keyword bound needs high= and size=, low= no
    # positional bound (randint(low=2, size=s) must not read as randint(2, s))
    if (low is not None or high is not None) and (
            size is None or high is None or low is not None and args):
        raise TypeError("randint: a keyword low= or high= needs high= and size= as keywords, "
                        "and low= no positional bound")
    args = (() if low is None else (low,)) + args + (() if high is None else (high,))
    if size is not None:
        args = (*args, size)
    if len(args) not in (2, 3):
        raise TypeError(f"randint: expected (high, size) or (low, high, size), got "
                        f"{len(args)} arguments")
    *bounds, size = args
    low, high = map(dtypes.index_of, (0, *bounds) if len(bounds) == 1 else bounds)  # tensor(5)
    for name, value in (("low", low), ("high", high)):
        dtypes.check_number("randint", name, value, integer=True)
    if low >= high:
        raise sampling.DistributionRangeError(f"randint: low must be below high, got low {low}, "
                                              f"high {high}")
    dtype = dtypes.as_dtype(dtype) or np.dtype(np.int64)
    return _sample("randint", (size,), dtype, device, requires_grad, (layout, pin_memory),
                   lambda n: sampling.random_integers(gen, n, dtype, low, high))


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    """A random permutation of ``0 .. n-1``, int64 unless dtype is given (``torch.randperm``,
    its CPU swaps: the same seed gives the same permutation).

    Args:
        generator: a ``mg.Generator``, by default ``mg.default_generator``.

    Example:
        >>> mg.manual_seed(0); mg.randperm(5)
        tensor([4, 0, 1, 3, 2])
    """
    gen = streams.check_generator("randperm", generator)
    dtypes.check_number("randperm", "n", n, integer=True)
    dtype = dtypes.as_dtype(dtype) or np.dtype(np.int64)
    sampling.check_randperm(n, dtype)
    return _sample("randperm", (n,), dtype, device, requires_grad, (layout, pin_memory),
                   lambda count: sampling.randperm(gen, count))


def _check_multinomial(input, num_samples, replacement):
    # torch's checks, in its order, each its RuntimeError (a ValueError too, as before)
    fail = sampling.DistributionRangeError
    if not dtypes.is_floating(input.dtype):
        raise dtypes.NotFloatingError(f"multinomial only supports floating-point dtypes for "
                                      f"input, got: {input.dtype}")
    if input.ndim not in (1, 2):
        raise fail(f"multinomial: prob_dist must be 1 or 2 dim, got shape {input.shape}")
    if num_samples <= 0:
        raise fail(f"multinomial: cannot sample n_sample <= 0 samples, got {num_samples}")
    if not replacement and num_samples > input.shape[-1]:
        raise fail(f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples without "
                   f"replacement: {num_samples} from {input.shape[-1]} categories")
    if input.shape[-1] > 1 << 24:
        raise fail(f"multinomial: number of categories cannot exceed 2^24, got "
                   f"{input.shape[-1]}")
    if not input.numel():
        if input.ndim == 2 and not input.shape[0]:       # no row: nothing to draw
            return
        raise fail("multinomial: cannot compute aminmax over an empty dimension (a row of no "
                   "category)")
    weights = np.asarray(backend.to_numpy(input._array), np.float64).reshape(
        -1, input.shape[-1])            # (rows, categories), at least one of each
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise fail("multinomial: probability tensor contains either `inf`, `nan` or element "
                   "< 0: every weight must be finite and non-negative")
    if (weights.sum(1) <= 0).any():
        raise fail("multinomial: invalid multinomial distribution (sum of probabilities <= 0): "
                   "every row needs a positive sum")


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` int64 class indices per row, drawn with probabilities proportional
    to the row of ``input``'s non-negative weights (1-D (C,) or 2-D (N, C), floating)
    (``torch.multinomial``, its CPU algorithm: the same seed gives the same indices).

    Args:
        generator: a ``mg.Generator``, by default ``mg.default_generator``.

    Example:
        >>> idx_next = mg.multinomial(probs, num_samples=1)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial: input must be a Tensor, got {type(input).__name__}")
    gen = streams.check_generator("multinomial", generator)
    num_samples = number_of("multinomial", "num_samples", num_samples)
    dtypes.check_number("multinomial", "num_samples", num_samples, integer=True)
    _check_multinomial(input, num_samples, replacement)
    rows = input.shape[0] if input.ndim == 2 else 1
    probs = np.asarray(backend.to_numpy(input._array)).reshape(rows, input.shape[-1])
    samples = sampling.multinomial(gen, probs, num_samples, replacement)
    samples = samples.reshape(*input.shape[:-1], num_samples)
    return _make("multinomial", samples, None, input.device, False)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, layout=None,
           device=None, requires_grad=False, pin_memory=False):
    r"""Samples of N(mean, std²) (``torch.normal``): numbers with a ``size``, or a Tensor
    ``mean`` and/or ``std`` (then the result has their broadcast shape and mean's dtype, or
    std's, and no ``size``).

    Formula:
        numbers: ``empty(size).normal_(mean, std)``; Tensor mean: N(0, std) draws plus
        mean; Tensor std: N(0, 1) draws times std plus mean (torch's order of operations).

    Args:
        generator: a ``mg.Generator``, by default ``mg.default_generator``.
        layout, pin_memory: as every factory's (``ops/storage.py`` ``factory_memory``).

    Example:
        >>> mg.normal(0.0, 0.02, (768, 768))          # a weight matrix
        >>> mg.normal(mg.zeros(3), mg.tensor([1.0, 2.0, 3.0]))
    """
    gen = streams.check_generator("normal", generator)
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        dtypes.check_number("normal", "mean", mean)
        dtypes.check_number("normal", "std", std)
        if size is None:
            raise TypeError("normal: size is required when mean and std are numbers")
        if not std >= 0:
            raise sampling.DistributionRangeError(f"normal: expects std >= 0.0, got "
                                                  f"std={std}")
        dtype = dtypes.default_float(dtype)
        return _sample("normal", (size,), dtype, device, requires_grad, (layout, pin_memory),
                       lambda n: sampling.normal(gen, n, dtype, mean, std))
    if size is not None:
        raise TypeError("normal: size goes with numbers; with a Tensor mean or std the shape "
                        "is theirs")
    like = mean if isinstance(mean, Tensor) else std
    for name, value in (("mean", mean), ("std", std)):
        if isinstance(value, Tensor):
            if not dtypes.is_floating(value.dtype):
                raise dtypes.NotFloatingError(f"normal: {name} must be a floating tensor, got "
                                              f"dtype {value.dtype}")
        else:
            dtypes.check_number("normal", name, value)
    std_array = np.asarray(backend.to_numpy(std._array)) if isinstance(std, Tensor) else std
    if not (np.asarray(std_array) >= 0).all():
        raise sampling.DistributionRangeError("normal: expects every std >= 0.0")
    mean_array = np.asarray(backend.to_numpy(mean._array)) if isinstance(mean, Tensor) \
        else mean
    dtype = like.dtype
    shape = broadcast_shape("normal", np.shape(mean_array), np.shape(std_array))
    if isinstance(std, Tensor):
        z = sampling.normal(gen, int(np.prod(shape, dtype=np.int64)), dtype).reshape(shape)
        array = z * std_array.astype(dtype) + np.asarray(mean_array).astype(dtype)
    else:
        z = sampling.normal(gen, int(np.prod(shape, dtype=np.int64)), dtype, 0.0, std)
        array = z.reshape(shape) + mean_array.astype(dtype)
    return zero_gradient(_make("normal", np.asarray(array, dtype), None, like.device, False),
                         mean, std)


def bernoulli(input, p=None, *, generator=None):
    """Draws of 1 with probability ``input`` (each element, in [0, 1]) else 0, in input's
    dtype and shape (``torch.bernoulli``); with ``p`` given, every element has
    probability ``p`` instead.

    Formula:
        ``u < p``: u a float32 uniform for float32 (float16, bfloat16) probabilities, a
        float64 uniform for float64 ones or a number ``p`` (torch's CPU kernel).

    Args:
        generator: a ``mg.Generator``, by default ``mg.default_generator``.

    Example:
        >>> mask = mg.bernoulli(mg.full((4,), 0.9))       # keep each with probability 0.9
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli: input must be a Tensor, got {type(input).__name__}")
    gen = streams.check_generator("bernoulli", generator)
    if p is None and not dtypes.is_floating(input.dtype):
        raise dtypes.NotFloatingError(f"bernoulli: input holds the probabilities and must be "
                                      f"floating, got dtype {input.dtype}")
    source = np.asarray(backend.to_numpy(input._array))
    # torch's empty_like(input, LEGACY_CONTIGUOUS_MEMORY_FORMAT): row-major whatever input's
    # layout (a transposed or an expanded p), the draws in row-major order
    array = np.empty(source.shape, source.dtype)
    if p is None:
        probs = streams.fill_order(array, source)
        streams.fill(array, lambda n, c: sampling.bernoulli(gen, n, array.dtype, probs))
    else:
        streams.fill(array, lambda n, c: sampling.bernoulli(gen, n, array.dtype, p))
    return zero_gradient(_make("bernoulli", array, None, input.device, False), input)


def _random_like(fn, other, dtype, device, requires_grad, memory_format, memory, draw):
    # torch's empty_like(other, memory_format=) then the sampler, which writes in memory
    # order: other's layout (or the format's), dtype and device
    if not isinstance(other, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(other).__name__}")
    device = other.device if device is None else device
    dtype = other.dtype if dtype is None else dtypes.as_dtype(dtype)
    _check(fn, device, requires_grad, dtype, memory)
    array = memory_formats.empty_like_array(fn, other._array, dtype, memory_format, device)
    streams.fill(array, lambda n, contiguous: draw(n, dtype, contiguous))
    return _make(fn, array, None, device, requires_grad)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
              layout=None, pin_memory=False, memory_format=preserve_format):
    """U[0, 1) samples of ``input``'s shape, dtype and device (``torch.rand_like``), laid out
    as ``input`` (or in ``memory_format``), drawn in memory order as torch's.

    Example:
        >>> noise = mg.rand_like(x)
    """
    gen = streams.check_generator("rand_like", generator)
    return _random_like("rand_like", input, dtype, device, requires_grad, memory_format,
                        (layout, pin_memory), lambda n, dtype, c: sampling.uniform(gen, n, dtype))


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
               layout=None, pin_memory=False, memory_format=preserve_format):
    """N(0, 1) samples of ``input``'s shape, dtype and device (``torch.randn_like``), laid out
    as ``input`` (or in ``memory_format``), drawn in memory order as torch's.

    Example:
        >>> noise = mg.randn_like(x)
    """
    gen = streams.check_generator("randn_like", generator)
    return _random_like("randn_like", input, dtype, device, requires_grad, memory_format,
                        (layout, pin_memory),
                        lambda n, dtype, c: sampling.normal(gen, n, dtype, contiguous=c))


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False, layout=None, pin_memory=False, memory_format=preserve_format):
    """Integers from [low, high) of ``input``'s shape, dtype and device
    (``torch.randint_like(input, high)`` or ``randint_like(input, low, high)``).

    Example:
        >>> ids = mg.randint_like(targets, 100)
    """
    gen = streams.check_generator("randint_like", generator)
    if high is None:
        low, high = 0, low
    for name, value in (("low", low), ("high", high)):
        dtypes.check_number("randint_like", name, value, integer=True)
    if low >= high:
        raise sampling.DistributionRangeError(f"randint_like: low must be below high, got "
                                              f"low {low}, high {high}")
    return _random_like("randint_like", input, dtype, device, requires_grad, memory_format,
                        (layout, pin_memory),
                        lambda n, dtype, c: sampling.random_integers(gen, n, dtype, low, high))


def _like(fn, value, other, dtype, device, requires_grad, memory_format, layout, pin_memory):
    # torch's empty_like(other, memory_format=) then a fill: other's layout by default
    if not isinstance(other, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(other).__name__}")
    dtype = other.dtype if dtype is None else dtypes.as_dtype(dtype)
    device = other.device if device is None else device
    array = memory_formats.empty_like_array(fn, other._array, dtype, memory_format, device)
    array[...] = value
    return _make(fn, array, None, device, requires_grad, layout, pin_memory)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False, memory_format=preserve_format):
    """Zeros of ``input``'s shape, dtype and device (``torch.zeros_like``), laid out as
    ``input`` (a channels-last one stays channels-last) or in ``memory_format``."""
    return _like("zeros_like", 0, input, dtype, device, requires_grad, memory_format, layout,
                 pin_memory)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False, memory_format=preserve_format):
    """Ones of ``input``'s shape, dtype and device (``torch.ones_like``), laid out as
    ``input`` or in ``memory_format``."""
    return _like("ones_like", 1, input, dtype, device, requires_grad, memory_format, layout,
                 pin_memory)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False, memory_format=preserve_format):
    """``fill_value`` in ``input``'s shape, dtype and device unless given
    (``torch.full_like``), laid out as ``input`` or in ``memory_format``; a value the dtype
    cannot hold (NaN or 300 in int8) is refused as torch refuses it, a float in an integer
    dtype is truncated."""
    if not isinstance(input, Tensor):
        raise TypeError(f"full_like: input must be a Tensor, got {type(input).__name__}")
    dtype = input.dtype if dtype is None else dtypes.as_dtype(dtype)
    filled = shape_ops.filled("full_like", input.shape, fill_value, dtype)
    array = memory_formats.empty_like_array("full_like", input._array, dtype, memory_format)
    array[...] = filled
    return _make("full_like", array, None, input.device if device is None else device,
                 requires_grad, layout, pin_memory)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False, memory_format=preserve_format):
    """A tensor of ``input``'s shape, dtype and device unless given (``torch.empty_like``),
    laid out as ``input`` (a dense one keeps its strides, any other gets the dense order of
    them) or in ``memory_format``; its values are zeros here."""
    return _like("empty_like", 0, input, dtype, device, requires_grad, memory_format, layout,
                 pin_memory)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """The (n, m) matrix with ones on the diagonal, zeros elsewhere (``torch.eye``); m is n
    unless given; the default float dtype unless dtype is given."""
    n, m = (operator.index(v) if isinstance(v, Tensor) and v.dtype.kind in "iu" else v
            for v in (n, m))                  # a one-element int tensor: its int, as torch's
    for name, value in (("n", n), ("m", n if m is None else m)):
        dtypes.check_number("eye", name, value, integer=True)
        if value < 0:
            raise RuntimeError(f"eye: {name} must be greater or equal to 0, got {value}")
    array = np.eye(n, n if m is None else m, dtype=dtypes.default_float(dtype))
    return _make("eye", array, None, device, requires_grad, layout, pin_memory)


def as_tensor(data, dtype=None, device=None):
    """``data`` as a tensor, sharing its memory where it can (``torch.as_tensor``): a Tensor
    of that dtype and device is returned itself (else ``data.to(device, dtype)``, in the
    graph); a NumPy (CuPy) array of that dtype on that device is wrapped, not copied; other
    data (numbers, lists) is copied as ``mg.tensor`` does. A NumPy array with a negative
    stride (``a[::-1]``) raises torch's ValueError.

    Example:
        >>> a = np.zeros(3); t = mg.as_tensor(a); a[0] = 1    # t[0] is 1 too
    """
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray) or backend.is_cupy_array(data):
        tensor_data.check_array("as_tensor", data)      # torch's refusals, as from_numpy's
        dtype = data.dtype if dtype is None else dtypes.as_dtype(dtype)
        device = backend.device_of(data) if device is None else backend.check_device(device)
        if dtype == data.dtype and device == backend.device_of(data):
            return Tensor._leaf("as_tensor", data, False)
        return Tensor._leaf("as_tensor", backend.new_array(data, dtype, device), False)
    return tensor(data, dtype=dtype, device=device)


def is_tensor(obj):
    """True when ``obj`` is a Tensor (a Parameter too) (``torch.is_tensor``)."""
    return isinstance(obj, Tensor)


def from_numpy(array):
    """A CPU tensor sharing ``array``'s memory (``torch.from_numpy``). As torch's, a
    TypeError for what is not a NumPy array and a ValueError for an array with a negative
    stride (``a[::-1]``: copy it first)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    tensor_data.check_array("from_numpy", array)   # object, str, reversed, ...: torch's errors
    return Tensor._leaf("from_numpy", array, False)


def manual_seed(seed):
    """Seed the default generator (``torch.manual_seed``); returns it. As torch's, it leaves
    NumPy's global state (``np.random``) alone: seed that with ``np.random.seed``.

    Args:
        seed: an int in [-2**63, 2**64); a negative one counts modulo 2**64, as in torch.
            Anything ``int()`` takes is converted first, as torch does (``1.5`` seeds 1,
            ``"7"`` 7, a one-element tensor its value).

    Example:
        >>> mg.manual_seed(0); x = mg.randn(3)       # torch.manual_seed(0); torch.randn(3)
    """
    return streams.default_generator.manual_seed(int(seed))     # checks the seed first


def seed():
    """Seed the default generator from the operating system's entropy and return the seed
    (``torch.seed``)."""
    return streams.default_generator.seed()


def initial_seed():
    """The default generator's seed (``torch.initial_seed``)."""
    return streams.default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 Tensor of 5056 bytes, torch's layout
    (``torch.get_rng_state``): ``torch.set_rng_state`` accepts it, and the reverse.

    Example:
        >>> state = mg.get_rng_state(); a = mg.rand(2)
        >>> mg.set_rng_state(state); b = mg.rand(2)      # a == b
    """
    return streams.default_generator.get_state()


# Generator.get_state gives torch's uint8 Tensor (the generator sits below tensors)
streams.state_tensor = lambda array: Tensor._leaf("get_state", array, False)


def set_rng_state(new_state):
    """Restore the default generator's state from ``get_rng_state`` (a uint8 Tensor, array
    or bytes; torch's states too) (``torch.set_rng_state``)."""
    state = new_state._array if isinstance(new_state, Tensor) else new_state
    streams.default_generator.set_state(backend.to_numpy(state) if backend.is_cupy_array(
        state) else state)
