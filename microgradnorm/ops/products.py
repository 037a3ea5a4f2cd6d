"""Products that rearrange their operands, and distances: ``kron``, ``tensordot`` and
``inner`` (a matrix product of permuted, flattened operands, torch's way), ``cross``,
``dist``, ``cdist`` and ``pdist``, as PyTorch defines them. Each is a composition of the primitives
(``matmul``, products, the ``PNorm`` node of ``norm``), which carry the gradients.

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import numbers
import warnings

import numpy as np

from .. import tensor as _tensor
from ..dtypes import is_floating, is_half
from . import elementwise, indexing, linalg, reductions
from .base import check_same_dtype, check_tensor, normalize_axis
from .shape import permute, reshape
from .vector_norm import PNorm, norm_order

METHODS = ("kron", "inner", "cross", "dist")
CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
               "donot_use_mm_for_euclid_dist")


def kron(input, other):
    r"""``torch.kron``: the Kronecker product, the blocks :math:`a_{i} \cdot b` laid out in
    order; the shorter shape gets leading 1s, each result dim is the product of the two.

    Example:
        >>> mg.kron(mg.eye(2), mg.ones(2, 2)).shape                           # (4, 4)
    """
    check_tensor("kron", input)
    check_tensor("kron", other)
    ndim = max(input.ndim, other.ndim)
    a_shape = (1,) * (ndim - input.ndim) + input.shape
    b_shape = (1,) * (ndim - other.ndim) + other.shape
    # (a0, 1, a1, 1, ...) · (1, b0, 1, b1, ...): every pair, then each (ai, bi) pair merged
    a = input.reshape(tuple(n for s in a_shape for n in (s, 1)))
    b = other.reshape(tuple(n for s in b_shape for n in (1, s)))
    return (a * b).reshape(tuple(m * n for m, n in zip(a_shape, b_shape)))


def _contracted(fn, a, b, dims):
    # (a's dims, b's dims) that tensordot contracts, from torch's forms of ``dims``
    if isinstance(dims, _tensor.Tensor):
        dims = dims.item() if dims.ndim == 0 else dims.tolist()
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"{fn}(): expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"{fn}(): dims {dims} is more than the dims of shapes "
                               f"{a.shape} and {b.shape}")
        return tuple(range(a.ndim - dims, a.ndim)), tuple(range(dims))
    if not isinstance(dims, (list, tuple)) or len(dims) != 2:
        raise TypeError(f"{fn}(): dims must be an int or a pair of lists of dims, got {dims!r}")
    pair = [[d] if isinstance(d, numbers.Integral) else list(d) for d in dims]
    if len(pair[0]) != len(pair[1]):
        raise RuntimeError(f"{fn}(): both dim lists should have same length, got {dims}")
    return tuple(tuple(normalize_axis(fn, d, t.ndim, single=True) for d in ds)
                 for ds, t in zip(pair, (a, b)))


def tensordot(a, b, dims=2):
    r"""``torch.tensordot``: :math:`\sum` of products over the dims ``dims`` pairs: an int n
    (a's last n with b's first n) or two lists ``([a dims], [b dims])``; the result's dims
    are a's others then b's others; a contracted dim of size 1 broadcasts (the other's dim
    summed first), as torch's. As torch computes it: a as (a's others, contracted), b as
    (contracted, b's others), one ``matmul``.

    Example:
        >>> mg.tensordot(mg.ones(2, 3, 4), mg.ones(3, 4, 5)).shape           # (2, 5)
    """
    check_tensor("tensordot", a)
    check_tensor("tensordot", b)
    check_same_dtype("tensordot", a, b)
    a_dims, b_dims = _contracted("tensordot", a, b, dims)
    for i, j in zip(a_dims, b_dims):          # a dim of size 1 broadcasts: the other's sum
        if b.shape[j] == 1:             # (in its own dtype: torch's int32 stays int32)
            a = a.sum(i, keepdim=True, dtype=a.dtype)
        elif a.shape[i] == 1:
            b = b.sum(j, keepdim=True, dtype=b.dtype)
        elif a.shape[i] != b.shape[j]:
            raise RuntimeError(f"tensordot(): contracted dimensions need to match, but first "
                               f"has size {a.shape[i]} in dim {i} and second has size "
                               f"{b.shape[j]} in dim {j}")
    a_free = [i for i in range(a.ndim) if i not in a_dims]
    b_free = [j for j in range(b.ndim) if j not in b_dims]
    def numel(t, dims):
        return int(np.prod([t.shape[d] for d in dims], dtype=np.int64))
    size = numel(a, a_dims)                                     # the contracted elements
    left = reshape(permute(a, a_free + list(a_dims)), (numel(a, a_free), size))
    right = reshape(permute(b, list(b_dims) + b_free), (size, numel(b, b_free)))
    shape = tuple(a.shape[i] for i in a_free) + tuple(b.shape[j] for j in b_free)
    return reshape(linalg.matmul(left, right), shape)          # (a's free, b's free)


def inner(input, other):
    r"""``torch.inner``: :math:`\sum_k a_{...k} b_{...k}` over the last dims, the result
    a's other dims then b's; a 0-d operand multiplies.

    Example:
        >>> mg.inner(mg.ones(2, 3), mg.ones(4, 3)).shape                      # (2, 4)
    """
    check_tensor("inner", input)
    check_tensor("inner", other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    check_same_dtype("inner", input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def cross(input, other, dim=None):
    """``torch.cross``: the 3-vector cross product along ``dim``, input and other broadcast
    (of one number of dims and one dtype). Without ``dim``, torch's default: the first dim
    of input of size 3, with torch's warning that it will become the last dim
    (``torch.linalg.cross``'s).

    Example:
        >>> mg.cross(mg.tensor([1.0, 0, 0]), mg.tensor([0.0, 1, 0]), dim=0)   # [0, 0, 1]
    """
    check_tensor("cross", input)
    check_tensor("cross", other)
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    check_same_dtype("cross", input, other)
    if input.dtype == np.bool_:
        raise NotImplementedError("cross: \"cross\" not implemented for 'Bool' (torch has no "
                                  "bool kernel)")
    if dim is None:
        warnings.warn("cross: using it without dim is deprecated (torch warns the same): "
                      "the default will become the last dim, as torch.linalg.cross's; "
                      "pass dim", UserWarning, stacklevel=2)
        dim = next((d for d, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f"cross: no dimension of size 3 in input {input.shape}")
    axis = normalize_axis("cross", dim, input.ndim, single=True)
    if input.ndim == 0 or input.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3, got "
                           f"shapes {input.shape} and {other.shape}")
    lead = (slice(None),) * axis

    def turned(t, order):                   # t's components in ``order`` along axis
        return indexing.getitem(t, lead + (t.xp.asarray(order),))
    # c = a × b: c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}, indices mod 3
    return turned(input, [1, 2, 0]) * turned(other, [2, 0, 1]) \
        - turned(input, [2, 0, 1]) * turned(other, [1, 2, 0])


def dist(input, other, p=2):
    r"""``torch.dist``: the p-norm of ``input - other`` (broadcast) over every element,
    :math:`(\sum |a - b|^p)^{1/p}`, ``norm``'s: p (a number or a 0-d tensor) may be 0 (the
    count of differences), negative, ``inf`` or ``-inf``; the gradient is 0 where a
    difference or the distance is 0. Floating or complex operands (one of them at least).

    Example:
        >>> mg.dist(mg.tensor([3.0, 4.0]), mg.zeros(2))                       # tensor(5.)
    """
    check_tensor("dist", input)
    check_tensor("dist", other)
    p = norm_order("dist", p)
    difference = input - other
    if not (is_floating(difference.dtype) or difference.dtype.kind == "c"):
        raise RuntimeError(f"dist(): input dtype should be either floating point or complex, "
                           f"got {difference.dtype}")
    return reductions.norm(difference, p)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    r"""``torch.cdist``: the p-norm distance between each row of ``x1`` (..., P, M) and each
    row of ``x2`` (..., R, M), shape (..., P, R), the batch dims broadcast; p >= 0 (``inf``
    too). Written as the ``PNorm`` of the (..., P, R, M) differences: exact (torch computes
    p = 2 by matrix products above 25 rows, rounding differently), memory P·R·M. The
    gradient is torch's: 0 at a zero distance, and with p = inf each of tied largest
    differences gets the whole of it.

    Args:
        x1, x2: float32 or float64 tensors of one dtype (torch's CPU has no half cdist).
        p: a number >= 0 (or a 0-d tensor).
        compute_mode: one of torch's three modes; each computes the same here.

    Example:
        >>> mg.cdist(mg.zeros(2, 3), mg.ones(4, 3)).shape                    # (2, 4)
    """
    if compute_mode not in CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode (one of "
                         f"{', '.join(CDIST_MODES)})")
    for name, x in (("x1", x1), ("x2", x2)):
        check_tensor("cdist", x)
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.ndim}D")
        if not is_floating(x.dtype):
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{x.dtype}")
    check_same_dtype("cdist", x1, x2, ("x1", "x2"))
    if is_half(x1.dtype):
        raise NotImplementedError(f"cdist: not implemented for {x1.dtype}")
    p = norm_order("cdist", p)
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: x1 and x2 must have the same number of columns, got "
                           f"{x1.shape[-1]} and {x2.shape[-1]}")
    difference = x1.unsqueeze(-2) - x2.unsqueeze(-3)                        # (..., P, R, M)
    return _distances(difference, p)


def _distances(difference, p):
    # the p-norms over the last dim; with p = 0 a NaN difference makes its distance NaN:
    # torch's distance kernels count min(ceil(|d|), 1), where vector_norm counts d != 0
    out = PNorm.apply(difference, p=p, axis=(difference.ndim - 1,), keepdims=False,
                      share_ties=False)
    if p == 0:
        nan = difference.xp.isnan(difference._array).any(axis=-1)
        if nan.any():
            out = elementwise.masked_fill(out, _tensor.Tensor._from_op(nan, None), np.nan)
    return out


def pdist(input, p=2):
    r"""``torch.pdist`` (``F.pdist``): the p-norm distance :math:`\lVert x_i - x_j \rVert_p`
    between each pair of rows i < j of ``input`` (N, M), in torch's order (0, 1), (0, 2),
    ..., (1, 2), ...: the upper triangle of ``cdist(input, input)`` read by rows, shape
    (N (N - 1) / 2,). Written as cdist is, the ``PNorm`` of the pairs' differences (memory
    N (N - 1) / 2 · M), so the gradient is torch's: 0 at a zero distance (and for p = 0),
    and with p = inf each of tied largest differences gets the whole of it.

    Args:
        input: a float32 or float64 matrix (N, M).
        p: a number >= 0 (``inf`` too), or a 0-d tensor.

    Example:
        >>> mg.pdist(mg.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))     # [5., 10., 5.]
    """
    check_tensor("pdist", input)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not is_floating(input.dtype):
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {input.dtype}")
    if is_half(input.dtype):
        raise NotImplementedError(f"pdist: not implemented for {input.dtype}")
    p = norm_order("pdist", p)
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got {p}")
    # (P,) each, P = N(N-1)/2, on input's device
    first, second = (input.xp.asarray(rows) for rows in np.triu_indices(input.shape[0], 1))
    difference = input[first] - input[second]                                 # (P, M)
    return _distances(difference, p)
