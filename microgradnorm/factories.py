"""Tensor factories with PyTorch's names: float64 unless dtype is given (torch's default is
float32), random tensors from NumPy's global generator, which ``manual_seed`` seeds."""

import numbers

import numpy as np

from . import backend, dtypes
from .ops.base import size_args
from .tensor import Tensor

__all__ = ["arange", "empty", "from_numpy", "full", "manual_seed", "ones", "ones_like", "rand",
           "randn", "zeros", "zeros_like"]


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
