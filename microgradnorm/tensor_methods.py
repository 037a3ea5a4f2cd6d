"""``TorchMethods``: the everyday ``torch.Tensor`` methods that ``Tensor`` inherits, apart
from the core ones in tensor.py: min/amin/amax, clamp, sigmoid, softmax, pow, rsqrt,
sign, where, masked_fill, repeat, mm/bmm, t/mT, gather, index_select, chunk, integer
conversions, ``new_zeros``/``new_ones``, ``register_hook``.

Each method checks its arguments and calls a ``Function`` of ``ops`` or ``ops_extra``; the
names, argument names and corner cases are PyTorch's (``dim``/``keepdim`` are accepted
beside ``axis``/``keepdims``, as in the reductions of tensor.py).
"""

import numbers

import numpy as np

from . import autograd, backend, dtypes, ops, ops_extra


def _size_args(fn, size):
    """``(2, 3)`` from ``(2, 3)`` or ``((2, 3),)``: ints only, none negative."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
            raise TypeError(f"{fn}: size must be ints, got {n!r} in {size}")
        if n < 0:
            raise ValueError(f"{fn}: size must be non-negative, got {tuple(size)}")
    return tuple(int(n) for n in size)


class TorchMethods:
    """The ``torch.Tensor`` methods of ``Tensor`` defined in this module (see its
    docstring); a mixin with no state of its own."""

    __slots__ = ()

    # ----- reductions ---------------------------------------------------------------------
    def amax(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Maximum over ``axis`` (``torch.amax``), the same as ``max``: values only, NaN
        propagates, tied maxima share the gradient."""
        return self.max(axis, keepdims, dim=dim, keepdim=keepdim)

    def amin(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Minimum over ``axis`` (``torch.amin``): NaN propagates, tied minima share the
        gradient evenly; arguments and shape as in ``sum``. An empty reduced dim is a
        ValueError."""
        axis, keepdims = _axis_args("amin", axis, keepdims, dim, keepdim)
        return ops_extra.amin(self, axis, keepdims)

    def min(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Minimum over ``axis``: values only, like ``torch.amin`` (and like ``max`` here;
        for torch's indices use ``argmin``). NaN propagates; tied minima share the
        gradient."""
        axis, keepdims = _axis_args("min", axis, keepdims, dim, keepdim)
        return ops_extra.amin(self, axis, keepdims)

    def numel(self):
        """The number of elements, an int (``size`` here)."""
        return self.size

    def dim(self):
        """The number of dims, an int (``ndim``)."""
        return self.ndim

    # ----- elementwise --------------------------------------------------------------------
    def minimum(self, other):
        """Elementwise minimum with ``other`` (broadcast), ``torch.minimum``: NaN
        propagates, ties split the gradient in half. Shape: the broadcast shape."""
        return ops_extra.Minimum.apply(self, other)

    def clamp(self, min=None, max=None):
        """Each element limited to [min, max], ``torch.clamp``: min(max(x, min), max), so
        min > max gives max; NaN in x stays NaN. Bounds: numbers or tensors (broadcast), one
        may be None. Backward: the gradient passes where min <= x <= max (inclusive)."""
        return ops_extra.clamp(self, min, max)

    clip = clamp

    def sigmoid(self):
        r"""Elementwise :math:`\sigma(x) = 1/(1 + e^{-x})`, one node. Backward:
        grad · σ(1 - σ)."""
        return ops_extra.Sigmoid.apply(self)

    def pow(self, exponent):
        """``self ** exponent`` for a number ``exponent``. Backward: grad · p · x^(p-1)."""
        return ops.pow(self, exponent)

    def square(self):
        """Elementwise x² (keeps an integer dtype, as torch). Backward: 2 x · grad."""
        return ops.pow(self, 2)

    def rsqrt(self):
        """Elementwise 1 / sqrt(x). Backward: -grad / (2 x^(3/2))."""
        return ops_extra.Rsqrt.apply(self)

    def neg(self):
        """Elementwise -x (``-self``)."""
        return ops.Neg.apply(self)

    def sign(self):
        """Elementwise -1, 0 or 1 by sign (0 for NaN, as torch); the gradient is 0."""
        return ops_extra.Sign.apply(self)

    def softmax(self, axis=-1, *, dim=None):
        r"""Softmax along ``axis`` (``dim``: PyTorch's name),
        :math:`e^{x_i - m} / \sum_j e^{x_j - m}` with :math:`m = \max_j x_j` (stable).
        Shape: unchanged; slices along ``axis`` sum to 1."""
        return ops_extra.softmax(self, ops.dim_alias("softmax", axis, dim, -1))

    def log_softmax(self, axis=-1, *, dim=None):
        r"""Stable :math:`(x_i - m) - \log\sum_j e^{x_j - m}` along ``axis`` (``dim``)."""
        return ops_extra.log_softmax(self, ops.dim_alias("log_softmax", axis, dim, -1))

    def where(self, condition, other):
        """``self`` where ``condition`` is True, else ``other``:
        ``torch.where(condition, self, other)``."""
        return ops_extra.where(condition, self, other)

    def masked_fill(self, mask, value):
        """A copy with ``value`` where the bool ``mask`` (broadcast) is True; the gradient
        is 0 there. ``value``: a number or a 0-d tensor. Example: an attention mask,
        ``scores.masked_fill(~causal, float("-inf"))``."""
        return ops_extra.masked_fill(self, mask, value)

    # ----- matrix products ----------------------------------------------------------------
    def matmul(self, other):
        """``self @ other`` (``mg.matmul``): batched, broadcast, 1-D operands as vectors."""
        return ops.MatMul.apply(self, other)

    def mm(self, other):
        """The matrix product of two 2-D tensors: (n, k) @ (k, m) -> (n, m), no
        broadcasting (``torch.mm``)."""
        other_shape = getattr(other, "shape", np.shape(other))
        if self.ndim != 2 or len(other_shape) != 2:
            raise ValueError(f"mm: both operands must be 2-D, got shapes {self.shape} and "
                             f"{tuple(other_shape)}")
        return ops.MatMul.apply(self, other)

    def bmm(self, other):
        """The batched product of two 3-D tensors: (b, n, k) @ (b, k, m) -> (b, n, m), the
        batch sizes equal (``torch.bmm``; no broadcasting)."""
        other_shape = tuple(getattr(other, "shape", np.shape(other)))
        if self.ndim != 3 or len(other_shape) != 3 or self.shape[0] != other_shape[0]:
            raise ValueError(f"bmm: both operands must be 3-D with the same batch size, got "
                             f"shapes {self.shape} and {other_shape}")
        return ops.MatMul.apply(self, other)

    def t(self):
        """The transpose of a tensor with at most 2 dims (``torch.Tensor.t``); 0-d and 1-d
        tensors come back as they are. Use ``transpose`` or ``mT`` for more dims."""
        if self.ndim > 2:
            raise ValueError(f"t() expects a tensor with <= 2 dims, got shape {self.shape}; "
                             "use transpose(dim0, dim1) or .mT")
        return self.permute(tuple(reversed(range(self.ndim))))

    @property
    def mT(self):
        """The last two dims swapped (a batch of transposed matrices); needs >= 2 dims."""
        if self.ndim < 2:
            raise ValueError(f"mT needs a tensor with at least 2 dims, got shape {self.shape}")
        return self.transpose(-2, -1)

    # ----- shape and indexing -------------------------------------------------------------
    def repeat(self, *sizes):
        """Tile the tensor ``sizes[d]`` times along dim d (ints or one tuple), as
        ``torch.Tensor.repeat``: more sizes than dims add leading dims. Backward sums
        the copies. Shape: (sizes[0]·s0, sizes[1]·s1, ...)."""
        sizes = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
        return ops_extra.repeat(self, sizes)

    def chunk(self, chunks, dim=0):
        """At most ``chunks`` views along ``dim``, each ceil(n / chunks) long, the last
        smaller (``torch.chunk``); a tuple."""
        return ops_extra.chunk(self, chunks, dim)

    def gather(self, dim, index):
        """Values along ``dim`` at ``index`` (``torch.gather``): for dim 0,
        ``out[i][j] = self[index[i][j]][j]``. Shape: index's. Backward: scatter-add."""
        return ops_extra.gather(self, dim, index)

    def index_select(self, dim, index):
        """The slices at ``index`` (1-D integers) along ``dim`` (``torch.index_select``).
        Backward: each slice's gradient added into its source slice."""
        return ops_extra.index_select(self, dim, index)

    def contiguous(self):
        """The tensor itself when its memory is in C order, else a C-ordered copy in the
        graph (``torch.Tensor.contiguous``)."""
        if self.data.flags.c_contiguous:
            return self
        return ops.Clone.apply(self)

    # ----- conversions and new tensors ----------------------------------------------------
    def long(self):
        """``astype(int64)``: an integer tensor, outside the graph (no gradient)."""
        return self.astype(np.int64)

    def int(self):
        """``astype(int32)``: an integer tensor, outside the graph (no gradient)."""
        return self.astype(np.int32)

    def bool(self):
        """``astype(bool)``: True where nonzero, outside the graph (no gradient)."""
        return self.astype(np.bool_)

    def type_as(self, other):
        """``astype(other.dtype)`` (``torch.Tensor.type_as``); recorded when floating."""
        return self.astype(other.dtype)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        """A tensor of zeros of ``size`` (ints or one tuple) with this tensor's dtype and
        device unless given (``torch.Tensor.new_zeros``)."""
        return self._new_filled("new_zeros", size, 0, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """A tensor of ones of ``size``, with this tensor's dtype and device unless given
        (``torch.Tensor.new_ones``)."""
        return self._new_filled("new_ones", size, 1, dtype, device, requires_grad)

    def _new_filled(self, fn, size, value, dtype, device, requires_grad):
        size = _size_args(fn, size)
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        device = self.device if device is None else backend.check_device(device)
        xp = backend.array_module(self.data) if device == self.device else None
        array = xp.full(size, value, dtype=dtype) if xp is not None else \
            backend.to_device(np.full(size, value, dtype=dtype), device)
        return _tensor.Tensor._new(fn, array, requires_grad)

    # ----- autograd -----------------------------------------------------------------------
    def register_hook(self, hook):
        """Call ``hook(grad)`` each time backward has computed this tensor's total
        gradient (an array of its shape, NumPy or CuPy); the hook may return a replacement
        (same shape), which is what flows on (or lands in ``.grad`` for a leaf), or None.
        Hooks run in registration order, each on the previous one's result
        (``torch.Tensor.register_hook``). Do not modify the array in place: return a new
        one.

        Returns:
            a handle whose ``remove()`` unregisters the hook.

        Example:
            >>> h = x.register_hook(lambda g: g * 0.5)     # halve x's gradient
            >>> h.remove()
        """
        return autograd.register_hook(self, hook)


def _axis_args(fn, axis, keepdims, dim, keepdim):
    return _tensor.axis_args(fn, axis, keepdims, dim, keepdim)


from . import tensor as _tensor  # noqa: E402  (tensor builds Tensor on this module's mixin)
