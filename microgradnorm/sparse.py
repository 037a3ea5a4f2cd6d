"""``torch.sparse`` and the sparse constructors, on dense tensors: there is no sparse layout
here, so a COO triple (indices, values, size) becomes the dense tensor it stands for, and the
sparse products are the dense ones. Values, products and gradients (to the values and to the
dense operand) are torch's; the result's layout is ``strided`` (``is_sparse`` False, no
``indices()``/``values()``/``_nnz()``). ``coalesce()`` is taken: it has nothing left to do.

``sparse_coo_tensor``, ``spmm`` and the methods ``to_sparse`` / ``to_dense`` / ``coalesce``
are also at the top level and on ``Tensor``; ``mm``, ``addmm``, ``sum`` and the legacy
``FloatTensor(indices, values, size)`` constructors live here, as ``torch.sparse.*``."""

import numpy as np

from . import backend, dtypes
from .factories import zeros
from .ops.index_writes import index_put
from .ops.linalg import addmm as _addmm
from .ops.linalg import mm as _mm
from .ops.reductions import sum as _sum
from .tensor import Tensor, tensor

__all__ = ["sparse_coo_tensor", "spmm", "mm", "addmm", "sum", "to_sparse", "to_dense",
           "coalesce", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor"]


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """The tensor of ``size`` that is zero except at the columns of ``indices``, where it
    holds ``values`` (a repeated index sums its values, as torch's ``to_dense()``):
    ``out[indices[0, k], ..., indices[d-1, k]] = sum of values[k]``. Dense here.

    Args:
        indices: (d, nnz) integers, one column per stored entry (floats or flags are cast
            to int64, rounded toward zero, as torch's).
        values: (nnz, *dense_shape) values; a list or array is read as ``tensor`` reads it.
        size: the full shape (d sparse dims, then ``dense_shape``); None: one past the
            largest index of each sparse dim.
        dtype, device: of the result (default: the values'); requires_grad: make it a leaf
            that requires grad. check_invariants, is_coalesced: taken, no effect.

    Shape:
        indices (d, nnz), values (nnz, *dense_shape) -> (size) = (*sparse_sizes, *dense_shape)

    Example:
        >>> mg.sparse_coo_tensor([[0, 1, 1], [1, 0, 1]], [1., 2., 3.], (2, 2))
        ... # [[0., 1.], [2., 3.]]
    """
    indices = indices if isinstance(indices, Tensor) else tensor(indices)
    values = values if isinstance(values, Tensor) else tensor(values, dtype=dtype)
    if indices.ndim != 2:
        raise RuntimeError(f"sparse_coo_tensor: indices must be a 2-D tensor (d, nnz), "
                           f"got {indices.dtype} of shape {tuple(indices.shape)}")
    if indices.dtype.kind not in "iu":
        indices = indices.long()        # floats and flags as torch's: cast, rounded to zero
    d, nnz = indices.shape
    if values.ndim == 0 or values.shape[0] != nnz:
        raise RuntimeError(f"sparse_coo_tensor: indices and values must have the same number "
                           f"of elements, but got {nnz} and "
                           f"{values.shape[0] if values.ndim else 1}")
    found = indices.detach().numpy().max(1) + 1 if nnz else np.zeros(d, np.int64)
    if size is None:
        size = tuple(int(n) for n in found) + tuple(values.shape[1:])
    size = tuple(int(n) for n in size)
    if len(size) != d + values.ndim - 1 or size[d:] != tuple(values.shape[1:]):
        raise RuntimeError(f"sparse_coo_tensor: size {size} does not fit {d} sparse dims and "
                           f"values of shape {tuple(values.shape)}")
    if (indices.detach().numpy().min(initial=0) < 0) or any(
            int(f) > n for f, n in zip(found, size)):
        raise RuntimeError(f"sparse_coo_tensor: an index lies outside size {size}")
    if dtype is not None:
        values = values.to(dtypes.as_dtype(dtype))
    out = index_put(zeros(size, dtype=values.dtype, device=device or values.device),
                    tuple(indices.to(values.device)), values, accumulate=True)
    return out.detach().requires_grad_() if requires_grad else out


def spmm(input, mat2):
    """``torch.spmm``: the product of a sparse (here dense) matrix and a dense one, ``mm``.

    Args:
        input: (n, m) matrix; mat2: (m, p) matrix.

    Shape:
        (n, m), (m, p) -> (n, p)

    Example:
        >>> mg.spmm(mg.sparse_coo_tensor([[0], [1]], [2.], (2, 2)), mg.ones(2, 1))  # [[2.], [0.]]
    """
    return _mm(input, mat2)


def mm(mat1, mat2, reduce="sum"):
    """``torch.sparse.mm``: the matrix product ``mat1 @ mat2`` (``reduce="sum"`` only).

    Args:
        mat1: (n, m) matrix; mat2: (m, p) matrix; reduce: "sum".

    Shape:
        (n, m), (m, p) -> (n, p)

    Example:
        >>> mg.sparse.mm(mg.eye(2), mg.ones(2, 3)).shape               # (2, 3)
    """
    if reduce != "sum":
        raise NotImplementedError(f"sparse.mm: reduce={reduce!r} is not implemented here (sum)")
    return _mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)``, ``addmm`` with a
    sparse (here dense) ``mat1``; the gradient reaches each input, as torch's.

    Args:
        mat: (n, p) matrix added; mat1: (n, m) matrix; mat2: (m, p) matrix;
        beta, alpha: the factors of ``mat`` and of the product.

    Shape:
        (n, p), (n, m), (m, p) -> (n, p)

    Example:
        >>> mg.sparse.addmm(mg.ones(2, 3), mg.eye(2), mg.ones(2, 3), beta=0.5)  # all 1.5
    """
    return _addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    """``torch.sparse.sum``: the sum over ``dim`` (all dims when None).

    Args:
        input: a tensor; dim: an int or a tuple of ints; dtype: of the result.

    Shape:
        (*) -> the shape without ``dim``

    Example:
        >>> mg.sparse.sum(mg.ones(2, 3), dim=1)                       # [3., 3.]
    """
    return _sum(input, dtype=dtype) if dim is None else _sum(input, dim, dtype=dtype)


def to_sparse(self, *args, **kwargs):
    """``Tensor.to_sparse()``: the same values in a new tensor (dense here; the arguments,
    a sparse dim count or a layout, are taken and change nothing).

    Example:
        >>> mg.eye(2).to_sparse().to_dense()                         # the identity
    """
    return self.clone()


def to_dense(self, dtype=None, *, masked_grad=None):
    """``Tensor.to_dense()``: the tensor itself (every tensor is dense here), or a copy in
    ``dtype``.

    Example:
        >>> x = mg.ones(2); x.to_dense() is x                         # True
    """
    return self if dtype is None else self.to(dtype)


def coalesce(self):
    """``Tensor.coalesce()``: the tensor itself. torch's sums the values of repeated indices
    and sorts the indices; a COO tensor here is already the dense tensor it stands for, its
    repeated indices summed by ``sparse_coo_tensor``, so nothing is left to do (and the
    gradient reaches the values through it, as torch's).

    Example:
        >>> adj = mg.sparse_coo_tensor([[0, 0], [1, 1]], [1., 2.], (2, 2)).coalesce()
        >>> adj.to_dense()                                            # [[0., 3.], [0., 0.]]
    """
    return self


def _legacy(dtype):
    def construct(*args, device=None):
        if all(isinstance(n, (int, np.integer)) for n in args):      # sizes: all zeros
            return zeros(args if args else (0,), dtype=dtype, device=device)
        if len(args) not in (2, 3) or not isinstance(args[0], Tensor):
            raise TypeError("sparse legacy constructor: expected (indices, values[, size]) or "
                            "sizes")
        backend.warn_once("torch.sparse.SparseTensor(indices, values, shape, *, device=) is "
                          "deprecated.  Please use torch.sparse_coo_tensor(indices, values, "
                          "shape, dtype=, device=).")         # once a process, as torch's
        values = args[1]            # a Tensor keeps its dtype, as torch's
        return sparse_coo_tensor(args[0], values, *args[2:], device=device,
                                 dtype=None if isinstance(values, Tensor) else dtype)
    construct.__doc__ = (f"torch.sparse's legacy constructor of {np.dtype(dtype)}: "
                         "(indices, values, size), as ``sparse_coo_tensor`` (values given as a "
                         "Tensor keep their dtype), with torch's deprecation warning once; "
                         "(*sizes): zeros.\n\n    Example:\n"
                         "        >>> mg.sparse.FloatTensor(mg.tensor([[0], [1]]), "
                         "mg.tensor([2.]), (2, 2))")
    return construct


FloatTensor = _legacy(np.float32)
DoubleTensor = _legacy(np.float64)
LongTensor = _legacy(np.int64)
IntTensor = _legacy(np.int32)

Tensor.to_sparse = to_sparse
Tensor.to_dense = to_dense
Tensor.coalesce = coalesce
