"""Tensor factories with PyTorch's names: float64 unless dtype is given (torch's default is
float32), random tensors from NumPy's global generator, which ``manual_seed`` seeds."""

import numbers

import numpy as np

from . import backend, dtypes
from .ops.base import size_args
from .tensor import Tensor

__all__ = ["arange", "empty", "from_numpy", "full", "manual_seed", "multinomial", "ones",
           "ones_like", "rand", "randint", "randn", "randperm", "zeros", "zeros_like"]


def _make(fn, array, dtype, device, requires_grad):
    backend.check_device(device)
    if dtype is not None:
        array = array.astype(dtypes.as_dtype(dtype), copy=False)
    return Tensor._leaf(fn, backend.to_device(array, device), requires_grad)


def zeros(*size, dtype=None, device="cpu", requires_grad=False):
    """Zeros of ``size`` (ints or one tuple), float64 unless dtype is given (torch: float32)."""
    return _make("zeros", np.zeros(size_args("zeros", size)), dtype, device, requires_grad)


def ones(*size, dtype=None, device="cpu", requires_grad=False):
    """Ones of ``size`` (ints or one tuple), float64 unless dtype is given (torch: float32)."""
    return _make("ones", np.ones(size_args("ones", size)), dtype, device, requires_grad)


def empty(*size, dtype=None, device="cpu", requires_grad=False):
    """Uninitialized values of ``size``, float64 unless dtype is given (torch: float32)."""
    return _make("empty", np.empty(size_args("empty", size)), dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device="cpu", requires_grad=False):
    """A tensor of ``size`` filled with ``fill_value``, by default of its kind (``torch.full``)."""
    size = size_args("full", (size,))
    if isinstance(fill_value, Tensor):
        if fill_value.size != 1:
            raise ValueError(f"full: fill_value must be a number or a one-element tensor, "
                             f"got shape {fill_value.shape}")
        fill_value = fill_value.item()
    if not isinstance(fill_value, numbers.Real):
        raise TypeError(f"full: fill_value must be a real number, got "
                        f"{type(fill_value).__name__} {fill_value!r}")
    default = np.bool_ if isinstance(fill_value, (bool, np.bool_)) else \
        np.int64 if isinstance(fill_value, numbers.Integral) else np.float64
    array = np.full(size, fill_value, dtype=dtypes.as_dtype(dtype) or default)
    return _make("full", array, None, device, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device="cpu", requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step`` (``torch.arange``): int64 if
    all three are ints, else float64, unless dtype is given."""
    if end is None:
        start, end = 0, start
    for name, value in (("start", start), ("end", end), ("step", step)):
        if not isinstance(value, numbers.Real):        # bools count as ints, as in torch
            raise TypeError(f"arange: {name} must be a real number, got "
                            f"{type(value).__name__} {value!r}")
    if step == 0:
        raise ValueError("arange: step must be nonzero, got 0")
    if (end - start) * step < 0:
        raise ValueError(f"arange: the range from start {start} to end {end} goes against "
                         f"step {step}")
    integral = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    array = np.arange(start, end, step, dtype=np.int64 if integral else np.float64)
    return _make("arange", array, dtype, device, requires_grad)


def randn(*size, dtype=None, device="cpu", requires_grad=False):
    """Standard normal samples of ``size``, float64 unless dtype is given (torch: float32)."""
    array = np.asarray(np.random.standard_normal(size_args("randn", size)))
    return _make("randn", array, dtype, device, requires_grad)


def rand(*size, dtype=None, device="cpu", requires_grad=False):
    """Uniform samples on [0, 1) of ``size``, float64 unless dtype is given (torch: float32)."""
    array = np.asarray(np.random.random_sample(size_args("rand", size)))
    return _make("rand", array, dtype, device, requires_grad)


def randint(*args, size=None, dtype=None, device="cpu", requires_grad=False):
    """Integers drawn uniformly from [low, high) (``torch.randint(high, size)`` or
    ``randint(low, high, size)``), int64 unless dtype is given."""
    if size is not None:
        args = (*args, size)
    if len(args) not in (2, 3):
        raise TypeError(f"randint: expected (high, size) or (low, high, size), got "
                        f"{len(args)} arguments")
    *bounds, size = args
    low, high = (0, *bounds) if len(bounds) == 1 else bounds
    for name, value in (("low", low), ("high", high)):
        dtypes.check_number("randint", name, value, integer=True)
    if low >= high:
        raise ValueError(f"randint: low must be below high, got low {low}, high {high}")
    array = np.random.randint(low, high, size_args("randint", (size,)), dtype=np.int64)
    return _make("randint", array, dtype, device, requires_grad)


def randperm(n, *, dtype=None, device="cpu", requires_grad=False):
    """A random permutation of ``0 .. n-1``, int64 unless dtype is given (``torch.randperm``)."""
    dtypes.check_number("randperm", "n", n, integer=True)
    if n < 0:
        raise ValueError(f"randperm: n must be non-negative, got {n}")
    return _make("randperm", np.random.permutation(int(n)), dtype, device, requires_grad)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` int64 class indices per row, drawn with probabilities proportional
    to the row of ``input``'s non-negative weights (1-D (C,) or 2-D (N, C))
    (``torch.multinomial``). ``generator``: a ``numpy.random.Generator``, by default NumPy's
    global state. Example: ``idx_next = mg.multinomial(probs, num_samples=1)``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial: input must be a Tensor, got {type(input).__name__}")
    dtypes.check_positive_ints("multinomial", num_samples=num_samples)
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise ValueError(f"multinomial: input must be 1-D or 2-D with at least one category, "
                         f"got shape {input.shape}")
    weights = np.asarray(backend.to_numpy(input.data), dtype=np.float64).reshape(-1,
                                                                              input.shape[-1])
    if not np.isfinite(weights).all() or (weights < 0).any() or (weights.sum(1) <= 0).any():
        raise ValueError("multinomial: every row of input must hold finite, non-negative "
                         "weights with a positive sum")
    if not replacement and num_samples > (weights > 0).sum(1).min():
        raise ValueError(f"multinomial: cannot draw {num_samples} samples without replacement "
                         f"from a row with only {(weights > 0).sum(1).min()} nonzero weights")
    choice = np.random.choice if generator is None else generator.choice
    rows = [choice(len(w), num_samples, replace=replacement, p=w / w.sum()) for w in weights]
    samples = np.asarray(rows, dtype=np.int64).reshape(*input.shape[:-1], num_samples)
    return _make("multinomial", samples, None, input.device, False)


def _like(fn, value, other, dtype, device, requires_grad):
    if not isinstance(other, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(other).__name__}")
    dtype = other.dtype if dtype is None else dtype
    device = other.device if device is None else device
    return _make(fn, np.full(other.shape, value, dtype=dtypes.as_dtype(dtype)), None, device,
                 requires_grad)


def zeros_like(other, *, dtype=None, device=None, requires_grad=False):
    """Zeros of ``other``'s shape, dtype and device (``torch.zeros_like``)."""
    return _like("zeros_like", 0, other, dtype, device, requires_grad)


def ones_like(other, *, dtype=None, device=None, requires_grad=False):
    """Ones of ``other``'s shape, dtype and device (``torch.ones_like``)."""
    return _like("ones_like", 1, other, dtype, device, requires_grad)


def from_numpy(array):
    """A CPU tensor sharing ``array``'s memory (``torch.from_numpy``)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    return Tensor._leaf("from_numpy", array, False)


def manual_seed(seed):
    """Seed NumPy's global generator, which every random draw uses (``torch.manual_seed``)."""
    dtypes.check_number("manual_seed", "seed", seed, integer=True)
    if not 0 <= seed < 2 ** 32:
        raise ValueError(f"manual_seed: seed must be in [0, 2**32), got {seed}")
    np.random.seed(int(seed))
