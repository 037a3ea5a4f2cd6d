"""Matrix products: ``a @ b`` with NumPy's (and PyTorch's) rules, and ``mm``/``bmm``."""

import math

import numpy as np

from ..autograd import Function
from ..dtypes import is_half
from .base import unbroadcast


def _check_matmul(a_shape, b_shape):
    if not a_shape or not b_shape:
        raise ValueError(f"matmul: both operands need at least 1 dim, got shapes "
                         f"{tuple(a_shape)} and {tuple(b_shape)}")
    k_b = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    if a_shape[-1] != k_b:
        which = "only dim" if len(b_shape) == 1 else "dim -2"
        raise ValueError(f"matmul: shapes {tuple(a_shape)} and {tuple(b_shape)} do not match: "
                         f"a's last dim is {a_shape[-1]}, b's {which} is {k_b}")
    batch_a, batch_b = a_shape[:-2], b_shape[:-2]
    if not batch_a or not batch_b or batch_a == batch_b:
        return                                   # the usual cases: nothing to broadcast
    try:
        np.broadcast_shapes(batch_a, batch_b)
    except ValueError:
        raise ValueError(f"matmul: the batch dims of shapes {tuple(a_shape)} and "
                         f"{tuple(b_shape)}, {tuple(batch_a)} and {tuple(batch_b)}, do not "
                         "broadcast") from None


def _matmul(a, b):
    # half precision accumulates in float32 (NumPy has no bfloat16 matmul loop)
    if a.dtype.itemsize >= 4 and b.dtype.itemsize >= 4:
        return a @ b                     # no half-precision operand: the usual case
    dtype = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
    if not is_half(dtype):
        return a @ b
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)


def _stacked_rows(a):
    # (..., n, k) -> (rows, k); not reshape(-1, k): ambiguous for a zero-size array
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


class MatMul(Function):
    """``a @ b``, batched; (..., n, k) @ (k, m) is one product of the stacked rows, forward
    and backward (docs/architecture.md)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        try:
            if a.ndim > 2 and b.ndim == 2:
                return _matmul(_stacked_rows(a), b).reshape(*a.shape[:-1], b.shape[1])
            return _matmul(a, b)
        except ValueError:            # the shapes, checked only when the product failed
            _check_matmul(a.shape, b.shape)
            raise

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        grad_a = grad_b = None
        if b.ndim == 2 and a.ndim >= 2:        # rows (R, k) @ (k, m), R = prod(...)·n
            grad_rows = grad if grad.ndim == 2 else _stacked_rows(grad)         # (R, m)
            if ctx.needs_input_grad[0]:
                grad_a = _matmul(grad_rows, b.T)                                # (R, k)
                grad_a = grad_a if a.ndim == 2 else grad_a.reshape(a.shape)     # (..., n, k)
            if ctx.needs_input_grad[1]:
                rows = a if a.ndim == 2 else _stacked_rows(a)
                grad_b = _matmul(rows.T, grad_rows)          # (k, R) @ (R, m): summed over R
            return grad_a, grad_b
        a2 = a[None, :] if a.ndim == 1 else a              # (..., n, k)
        b2 = b[:, None] if b.ndim == 1 else b              # (..., k, m)
        g2 = grad[..., None] if b.ndim == 1 else grad       # put back the removed axes,
        g2 = g2[..., None, :] if a.ndim == 1 else g2        # m first: (..., n, m)
        if ctx.needs_input_grad[0]:
            grad_a = _matmul(g2, b2.swapaxes(-1, -2))       # (..., n, k)
            grad_a = unbroadcast(grad_a[..., 0, :] if a.ndim == 1 else grad_a, a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = _matmul(a2.swapaxes(-1, -2), g2)       # (..., k, m)
            grad_b = unbroadcast(grad_b[..., 0] if b.ndim == 1 else grad_b, b.shape)
        return grad_a, grad_b


def matmul(a, b):
    """``a @ b`` (``torch.matmul``): (..., n, k) @ (..., k, m) -> (..., n, m), broadcast."""
    return MatMul.apply(a, b)


def mm(a, b):
    """The product of two 2-D tensors (``torch.mm``)."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    if len(a_shape) != 2 or len(b_shape) != 2:
        raise ValueError(f"mm: both operands must be 2-D, got shapes {a_shape} and {b_shape}")
    return MatMul.apply(a, b)


def bmm(a, b):
    """The batched product of two 3-D tensors of one batch size (``torch.bmm``)."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    if len(a_shape) != 3 or len(b_shape) != 3 or a_shape[0] != b_shape[0]:
        raise ValueError(f"bmm: both operands must be 3-D with the same batch size, got "
                         f"shapes {a_shape} and {b_shape}")
    return MatMul.apply(a, b)


def outer(a, b):
    """The outer product of two 1-D tensors, (n,) and (m,) -> (n, m) (``torch.outer``)."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    if len(a_shape) != 1 or len(b_shape) != 1:
        raise ValueError(f"outer: both operands must be 1-D, got shapes {a_shape} and {b_shape}")
    return a.reshape(-1, 1) * b.reshape(1, -1)
