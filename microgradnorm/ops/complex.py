"""Complex tensors, as far as rotary embeddings need them: ``polar`` and ``complex`` build
them, ``view_as_complex``/``view_as_real`` and ``x.real``/``x.imag`` read the same memory
the other way (views, as torch's), ``angle``, ``conj`` and ``is_complex``. ``METHODS``
names the functions ``ops/methods.py`` binds as ``Tensor`` methods (``real`` and ``imag`` as
properties).

Gradients follow torch's convention for a real loss L: the gradient of a complex
z = x + iy is dL/dx + i dL/dy (the conjugate Wirtinger derivative, doubled). So a view that
reinterprets memory reinterprets its gradient back, ``a * b`` hands a the gradient
``grad · conj(b)`` (ops/elementwise.py), and a real input takes the real part of a complex
gradient (autograd.py), as torch's engine does.

Example (meta-llama's rotary embedding)::

    freqs_cis = mg.polar(mg.ones_like(freqs), freqs)               # (T, D/2) complex64
    xq_ = mg.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xq_out = mg.view_as_real(xq_ * freqs_cis.view(1, T, 1, -1)).flatten(3)
"""

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from ..autograd.function import Function
from ..dtypes import complex_of, real_of
from .base import broadcast, check_tensor, complex_sign, float_input, unbroadcast


def _from_parts(real, imag):
    """The complex array ``real + i·imag`` (broadcast), at the parts' precision."""
    xp = backend.array_module(real)
    real, imag = xp.broadcast_arrays(real, imag)
    out = xp.empty(real.shape, complex_of(real.dtype))
    out.real, out.imag = real, imag
    return out


def _pairs(z):
    """A complex array's memory as (..., 2) real (real, imag) pairs: a view, no copy."""
    return z[..., None].view(real_of(z.dtype))       # (..., 1) complex → (..., 2) real


# ----- views: the same memory read the other way ----------------------------------------------
class ViewAsComplex(Function):
    """(..., 2) real → (...) complex, the same memory; its gradient is read back as pairs."""

    @staticmethod
    def forward(ctx, x):
        return x.view(complex_of(x.dtype))[..., 0]     # (..., 2) → (..., 1) → (...)

    @staticmethod
    def backward(ctx, grad):
        return _pairs(grad)                            # (...) complex → (..., 2) real


class ViewAsReal(Function):
    """(...) complex → (..., 2) real, the same memory; its gradient is read back as complex."""

    @staticmethod
    def forward(ctx, z):
        return _pairs(z)

    @staticmethod
    def backward(ctx, grad):
        return _from_parts(grad[..., 0], grad[..., 1])


class Real(Function):
    """The real parts of a complex array, a view; d(loss)/dz = grad + 0i."""

    @staticmethod
    def forward(ctx, z):
        return z.real

    @staticmethod
    def backward(ctx, grad):
        return grad.astype(complex_of(grad.dtype))


class Imag(Function):
    """The imaginary parts of a complex array, a view; d(loss)/dz = 0 + i·grad."""

    @staticmethod
    def forward(ctx, z):
        return z.imag

    @staticmethod
    def backward(ctx, grad):
        return _from_parts(backend.array_module(grad).zeros_like(grad), grad)


# ----- construction from parts ----------------------------------------------------------------
class Complex(Function):
    """``real + i·imag``, broadcast; each part takes its share of the gradient."""

    @staticmethod
    def forward(ctx, real, imag):
        ctx.shapes = real.shape, imag.shape
        return broadcast("complex", _from_parts, real, imag)

    @staticmethod
    def backward(ctx, grad):
        real_shape, imag_shape = ctx.shapes
        need_real, need_imag = ctx.needs_input_grad
        return (unbroadcast(grad.real, real_shape) if need_real else None,
                unbroadcast(grad.imag, imag_shape) if need_imag else None)


class Polar(Function):
    """``abs · (cos(angle) + i·sin(angle))``, one node: torch's closed form, whose gradient
    for ``abs`` is Re(conj(grad) · sgn(out)), 0 where abs is 0 and of the other sign where
    abs is negative (the product abs · cos(angle) composed of primitives would not be)."""

    @staticmethod
    def forward(ctx, abs, angle):
        xp = backend.array_module(abs)
        ctx.shapes = abs.shape, angle.shape
        out = broadcast("polar", _from_parts, abs * xp.cos(angle), abs * xp.sin(angle))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved
        abs_shape, angle_shape = ctx.shapes
        need_abs, need_angle = ctx.needs_input_grad
        grad_conj = grad.conj()
        grad_abs = grad_angle = None
        if need_abs:                                   # d out / d abs = out / abs
            grad_abs = unbroadcast((grad_conj * complex_sign(out)).real, abs_shape)
        if need_angle:                                 # d out / d angle = i · out
            grad_angle = unbroadcast((grad_conj * (out * 1j)).real, angle_shape)
        return grad_abs, grad_angle


# ----- functions of a complex array -----------------------------------------------------------
class Angle(Function):
    """The argument of each element, atan2(imag, real); of a real x, 0 or π by its sign
    (NaN stays NaN), whose gradient is 0, as torch's."""

    @staticmethod
    def forward(ctx, z):
        xp = backend.array_module(z)
        if dtypes.is_complex(z.dtype):
            ctx.save_for_backward(z)
            return xp.angle(z)
        x = float_input(z)
        ctx.save_for_backward(x)
        angle = xp.where(x < 0, np.pi, 0.0).astype(x.dtype)   # -0.0 too: 0, not NumPy's π
        return xp.where(xp.isnan(x), x, angle)

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved
        xp = backend.array_module(grad)
        if not dtypes.is_complex(z.dtype):
            return xp.zeros_like(grad)
        # d angle: (-y + ix) / |z|² for z = x + iy, 0 at z = 0 (torch's grad · z / |z|² · i)
        squared = xp.abs(z) ** 2
        along = grad * z / xp.where(squared == 0, 1, squared) * 1j
        return xp.where(z == 0, xp.zeros((), along.dtype), along)


class Conj(Function):
    """The complex conjugate, a copy (torch's is a lazy view: what it shows is the same)."""

    @staticmethod
    def forward(ctx, z):
        return z.conj()

    @staticmethod
    def backward(ctx, grad):
        return grad.conj()


# ----- the functions: mg.polar, mg.view_as_complex, x.real, ... -------------------------------
def _check_parts(fn, names, first, second):
    # torch.complex and torch.polar take two tensors of one dtype, float32 or float64
    for name, value in zip(names, (first, second)):
        if not isinstance(value, _tensor.Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, not "
                            f"{type(value).__name__}")
    if first.dtype != second.dtype:
        raise RuntimeError(f"{fn}(): {names[0]} and {names[1]} must have the same dtype, got "
                           f"{first.dtype} and {second.dtype}")
    if first.dtype not in (dtypes.float32, dtypes.float64):
        note = " (complex32 is not supported)" if dtypes.is_half(first.dtype) else ""
        raise RuntimeError(f"{fn}(): expected both inputs to be float32 or float64 "
                           f"tensors{note}, got {first.dtype} and {second.dtype}")


def complex(real, imag):
    """The complex tensor ``real + i·imag`` (``torch.complex``), broadcast.

    Args:
        real, imag: tensors of one dtype, float32 (giving complex64) or float64
            (complex128).

    Example:
        >>> mg.complex(mg.tensor([1.0, 3.0]), mg.tensor([2.0, -1.0]))
        tensor([1.+2.j, 3.-1.j])
    """
    _check_parts("complex", ("real", "imag"), real, imag)
    return Complex.apply(real, imag)


def polar(abs, angle):
    """The complex tensor ``abs · (cos(angle) + i·sin(angle))`` (``torch.polar``),
    broadcast; one node, differentiable in both.

    Args:
        abs, angle: tensors of one dtype, float32 (giving complex64) or float64.

    Example:
        >>> freqs_cis = mg.polar(mg.ones_like(freqs), freqs)     # rotary embeddings
    """
    _check_parts("polar", ("abs", "angle"), abs, angle)
    return Polar.apply(abs, angle)


def view_as_complex(input):
    """x's memory read as complex numbers (``torch.view_as_complex``): a view whose element
    i is ``x[..., i, 0] + i·x[..., i, 1]``; writes through either show in both.

    Args:
        input: a float32 (giving complex64) or float64 tensor whose last dim has size 2 and
            stride 1, its other strides even and its offset in memory even, as torch's.

    Shape:
        (..., 2) → (...).

    Example:
        >>> mg.view_as_complex(mg.tensor([[1.0, 2.0], [3.0, -1.0]]))
        tensor([1.+2.j, 3.-1.j])
    """
    if not isinstance(input, _tensor.Tensor):
        raise TypeError(f"view_as_complex(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"view_as_complex is only supported for float32 and float64 "
                           f"tensors, but got a tensor of dtype {input.dtype}")
    if input.ndim == 0:
        raise RuntimeError("view_as_complex: input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError(f"view_as_complex: tensor must have a last dimension of size 2, "
                           f"got shape {input.shape}")
    _check_pairs_in_memory(input._array)
    return ViewAsComplex.apply(input)


def _check_pairs_in_memory(array):
    # torch's rules for a (real, imag) view: each pair adjacent, each pair starting at an even
    # element of the memory (strides in elements; a size-1 dim's stride does not matter)
    if array.size == 0:
        return
    itemsize = array.itemsize
    if array.strides[-1] != itemsize:
        raise RuntimeError(f"view_as_complex: tensor must have a last dimension with stride "
                           f"1, got stride {array.strides[-1] // itemsize}")
    strides = [s // itemsize for s, n in zip(array.strides[:-1], array.shape) if n > 1]
    if any(s % 2 for s in strides):
        raise RuntimeError(f"view_as_complex: tensor must have a stride divisible by 2 for "
                           f"all but the last dimension, got strides {tuple(strides)}")
    if _storage_offset(array) % 2:
        raise RuntimeError("view_as_complex: tensor must have a storage offset divisible by "
                           f"2, got {_storage_offset(array)}")


def _storage_offset(array):
    # elements between the start of the memory ``array`` views and its first element
    owner = backend.memory_owner(array)
    if not hasattr(owner, "dtype"):          # memory from a buffer (np.frombuffer): no offset
        return 0
    return (_address(array) - _address(owner)) // array.itemsize


def _address(array):
    if backend.is_cupy_array(array):
        return int(array.data.ptr)
    return int(array.__array_interface__["data"][0])


def view_as_real(input):
    """A complex tensor's memory read as (real, imag) pairs (``torch.view_as_real``): a
    view; writes through either show in both.

    Args:
        input: a complex64 (giving float32) or complex128 (float64) tensor.

    Shape:
        (...) → (..., 2).

    Example:
        >>> mg.view_as_real(mg.tensor([1 + 2j, 3 - 1j]))
        tensor([[ 1.,  2.],
                [ 3., -1.]])
    """
    if not isinstance(input, _tensor.Tensor):
        raise TypeError(f"view_as_real(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    if not dtypes.is_complex(input.dtype):
        raise RuntimeError(f"view_as_real is only supported for complex tensors, got dtype "
                           f"{input.dtype}")
    return ViewAsReal.apply(input)


def _real(x):
    """The real parts of a complex tensor, a view of its memory (``x.real``); a real
    tensor's real part is the tensor itself, as torch's."""
    return Real.apply(x) if dtypes.is_complex(x.dtype) else x


def _imag(x):
    """The imaginary parts of a complex tensor, a view of its memory (``x.imag``); refused
    for a real tensor (RuntimeError), as torch's."""
    if not dtypes.is_complex(x.dtype):
        raise RuntimeError(f"imag is not implemented for tensors with non-complex dtypes, "
                           f"got {x.dtype}")
    return Imag.apply(x)


def real(input):
    """``torch.real``: the real parts of a complex tensor as a view of its memory; a real
    tensor itself. ``x.real`` is the same, as a property."""
    return _real(check_tensor("real", input))


def imag(input):
    """``torch.imag``: the imaginary parts of a complex tensor as a view of its memory
    (RuntimeError for a real tensor). ``x.imag`` is the same, as a property."""
    return _imag(check_tensor("imag", input))


real.method, imag.method = property(_real), property(_imag)     # x.real, x.imag


def angle(input):
    """The argument of each element in radians, atan2(imag, real) (``torch.angle``); of a
    real tensor, π where it is negative and 0 elsewhere (an integer one gives the default
    dtype), with gradient 0."""
    return Angle.apply(check_tensor("angle", input))


def conj(input):
    """The complex conjugate (``torch.conj``): a new tensor (torch's is a lazy view, with
    the same values); a real tensor itself."""
    check_tensor("conj", input)
    return Conj.apply(input) if dtypes.is_complex(input.dtype) else input


def conj_physical(input):
    """The complex conjugate in new memory (``torch.conj_physical``: torch's ``conj`` is
    lazy, this one computes; here both compute); a real tensor itself, as torch's.

    Example:
        >>> mg.tensor([1 + 2j]).conj_physical()                     # tensor([1.-2.j])
    """
    check_tensor("conj_physical", input)
    return Conj.apply(input) if dtypes.is_complex(input.dtype) else input


def is_complex(input):
    """True for a complex64 or complex128 tensor (``torch.is_complex``)."""
    return dtypes.is_complex(check_tensor("is_complex", input).dtype)


def cfloat(x, memory_format=None):
    """``x.to(complex64)``, in the graph; the tensor itself if it is complex64 (with
    ``memory_format=``, ``x.to(complex64, memory_format=memory_format)``)."""
    if memory_format is not None:
        return x.to(dtypes.complex64, memory_format=memory_format)
    return x.astype(dtypes.complex64, copy=False)


def cdouble(x, memory_format=None):
    """``x.to(complex128)``, in the graph; the tensor itself if it is complex128 (with
    ``memory_format=``, ``x.to(complex128, memory_format=memory_format)``)."""
    if memory_format is not None:
        return x.to(dtypes.complex128, memory_format=memory_format)
    return x.astype(dtypes.complex128, copy=False)


METHODS = ("real", "imag", "angle", "conj", "conj_physical", "is_complex", "cfloat", "cdouble")
