"""``torch.nn.grad``: a convolution's gradients with respect to its input and its weight,
given the gradient of its output, as functions (``conv1d_input``, ``conv2d_weight``, ...).

Custom ``autograd.Function``s that write a convolution's backward by hand call them. Each is
the backward of the library's own convolution node, run by ``autograd.grad`` at a zero
operand of the given size: the convolution is linear in each operand, so that gradient does
not depend on the operand's value, and under grad mode the graph of the backward is recorded,
so the result is differentiable in the other operand and in ``grad_output``, as torch's."""

from .. import autograd
from .. import functional as F
from ..factories import zeros
from ..tensor import Tensor

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]

_CONVOLUTIONS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _size(name, value, dims):
    """``value`` as a tuple of ``dims`` ints (a torch.Size, tuple or list), or a clear error."""
    try:
        size = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of ints, got {type(value).__name__}") \
            from None
    if len(size) != dims + 2:
        raise RuntimeError(f"{name} must have {dims + 2} entries (batch, channels and {dims} "
                           f"spatial sizes) for a {dims}-d convolution, got {list(size)}")
    return size


def _gradient(dims, wrt, fixed, size, grad_output, stride, padding, dilation, groups):
    """The gradient of ``conv{dims}d`` at operand ``wrt`` ("input" or "weight") of ``size``,
    the other operand ``fixed``, for ``grad_output``."""
    other = "weight" if wrt == "input" else "input"
    for name, value in (("grad_output", grad_output), (other, fixed)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name} must be a Tensor, got {type(value).__name__}")
    if grad_output.dtype != fixed.dtype:       # torch's kernels take one dtype, no promotion
        raise RuntimeError(f"grad_output's dtype {grad_output.dtype} must be the {other}'s, "
                           f"{fixed.dtype}")
    free = zeros(size, dtype=fixed.dtype, device=fixed.device, requires_grad=True)
    operands = (free, fixed) if wrt == "input" else (fixed, free)
    with autograd.enable_grad():
        output = _CONVOLUTIONS[dims](*operands, None, stride, padding, dilation, groups)
    if tuple(output.shape) != tuple(grad_output.shape):
        raise RuntimeError(f"grad_output has shape {list(grad_output.shape)}, but the "
                           f"convolution's output has shape {list(output.shape)}")
    record = autograd.is_grad_enabled() and (fixed.requires_grad or grad_output.requires_grad)
    (gradient,) = autograd.grad(output, free, grad_output, create_graph=record)
    return gradient


def _input_function(dims):
    def conv_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        size = _size("input_size", input_size, dims)
        return _gradient(dims, "input", weight, size, grad_output, stride, padding, dilation,
                         groups)

    conv_input.__name__ = conv_input.__qualname__ = f"conv{dims}d_input"
    conv_input.__doc__ = f"""The gradient of ``conv{dims}d(input, weight)`` with respect to
    its input: the transposed convolution of ``grad_output`` with ``weight``, sized to
    ``input_size``.

    Args:
        input_size: the input's shape, (N, C_in, *spatial) with {dims} spatial sizes.
        weight: the convolution's weight, (C_out, C_in / groups, *kernel).
        grad_output: the gradient of the convolution's output, (N, C_out, *spatial_out).
        stride, padding, dilation, groups: the convolution's, as ``F.conv{dims}d`` takes them.

    Shape:
        returns a tensor of ``input_size``.

    Example:
        >>> g = nn.grad.conv{dims}d_input(x.shape, w, grad_out)   # == x.grad of conv{dims}d
    """
    return conv_input


def _weight_function(dims):
    def conv_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,
                    groups=1):
        size = _size("weight_size", weight_size, dims)
        return _gradient(dims, "weight", input, size, grad_output, stride, padding, dilation,
                         groups)

    conv_weight.__name__ = conv_weight.__qualname__ = f"conv{dims}d_weight"
    conv_weight.__doc__ = f"""The gradient of ``conv{dims}d(input, weight)`` with respect to
    its weight: each kernel entry's correlation of ``input`` with ``grad_output``, summed
    over the batch.

    Args:
        input: the convolution's input, (N, C_in, *spatial) with {dims} spatial sizes.
        weight_size: the weight's shape, (C_out, C_in / groups, *kernel).
        grad_output: the gradient of the convolution's output, (N, C_out, *spatial_out).
        stride, padding, dilation, groups: the convolution's, as ``F.conv{dims}d`` takes them.

    Shape:
        returns a tensor of ``weight_size``.

    Example:
        >>> g = nn.grad.conv{dims}d_weight(x, w.shape, grad_out)   # == w.grad of conv{dims}d
    """
    return conv_weight


conv1d_input, conv2d_input, conv3d_input = (_input_function(d) for d in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_weight_function(d) for d in (1, 2, 3))
