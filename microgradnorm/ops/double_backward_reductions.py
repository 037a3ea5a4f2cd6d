"""Double backward, continued (``double_backward.py`` holds the engine's side and the
elementwise ops): the gradients of the reductions, the scans and the index writes written
with Tensor ops, each the op's closed-form backward again.

Each formula reads the node's input Tensors (``ctx.inputs``) where the gradient depends on
them, and recomputes an output it needs (a norm, a running product) by applying the op
again, so that a second backward reaches the input through it; masks and index arrays
come from what forward saved, as constants.

Example:
    >>> x = mg.tensor([[3.0, 4.0]], requires_grad=True)
    >>> (g,) = mg.autograd.grad(x.norm(2, dim=1).sum(), x, create_graph=True)   # x / |x|
    >>> g[0, 0].backward(); x.grad                     # (1/|x| - x₀²/|x|³, -x₀x₁/|x|³)
    tensor([[ 0.1280, -0.0960]])
"""

import numpy as np

from .. import backend, dtypes
from . import indexing, pointwise, reductions, scans, shape, variance, vector_norm
from .double_backward import _conj, _const, _fit, _formula, _safe, _select, _zero_where


def _kept_shape(shape, axis):
    # the reduced dims (an int, a tuple, None: all) as size 1: what keepdim gives
    axes = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    return tuple(1 if d in axes else n for d, n in enumerate(shape))


# ----- reductions -----------------------------------------------------------------------------
@_formula(vector_norm.PNorm)
def _p_norm(ctx, g):
    r"""torch's norm_backward on Tensors: with n the norm (applied again: it depends on x)
    and s = sgn(x), p = 1: g·s; 2: g·x/n; ±inf: g·s shared by the extremes; p < 1:
    g·s·|x|^(p-1)·n^(1-p); else g·s·|x|^(p-1)/n^(p-1), each 0 where torch's is."""
    x_saved, n_saved = ctx.saved
    x, p, axis = ctx.inputs[0], ctx.p, ctx.axis
    if p == 0:
        return g.new_zeros(x.shape)
    kept = _kept_shape(x.shape, axis)
    g, n_saved = g.reshape(kept), n_saved.reshape(kept)
    xp = backend.array_module(x_saved)
    if p == 1:
        return pointwise.sgn(x) * g
    if np.isinf(p):                 # the extremes: a step function of the saved values
        size = xp.abs(x_saved)
        mask = (size == n_saved) | xp.isnan(size)
        share = mask.sum(axis=tuple(range(x.ndim)) if axis is None else axis, keepdims=True) \
            if ctx.share_ties else 1
        return pointwise.sgn(x) * (g / _const(xp.asarray(share, g.dtype)) * _const(mask))
    n = vector_norm.PNorm.apply(x, p=p, axis=axis, keepdims=True, share_ties=ctx.share_ties)
    empty = n_saved == 0                                             # (kept dims)
    if p == 2:
        return g * _zero_where(empty, x / _safe(empty, n))
    if p < 1:
        at_zero = x_saved == 0
        scaled = pointwise.sgn(x) * _zero_where(at_zero, _safe(at_zero, x.abs()) ** (p - 1))
        return scaled * g * n ** (1 - p)
    scaled = pointwise.sgn(x) * x.abs() ** (p - 1) if p < 2 else x * x.abs() ** (p - 2)
    return scaled * _zero_where(empty, g / _safe(empty, n) ** (p - 1))


@_formula(variance.StdFromVar)
def _std_from_var(ctx, g):
    # g / (2 sqrt(var)), 0 where the result is 0
    at_zero = ctx.saved[0] == 0
    std = variance.StdFromVar.apply(ctx.inputs[0])
    return _zero_where(at_zero, g / (2 * _safe(at_zero, std)))


@_formula(variance.Var)
def _var(ctx, g):
    # g·2(x - mean)/dof, g with the reduced dims back; x centred by Tensor ops
    x = ctx.inputs[0] if ctx.inputs[0] is not None else _const(ctx.saved[0])
    if not ctx.keepdims:
        g = g.reshape(_kept_shape(tuple(x.shape), ctx.axis))
    return g * (x - x.mean(ctx.axis, keepdims=True)) * variance.two_over(ctx.dof)


@_formula(reductions.Extreme)
def _extreme(ctx, g):
    # the extremes share g evenly: masks of the saved values (max, min, median, nanmedian)
    x, returned = ctx.saved
    out = returned.reshape(ctx.kept_shape)
    is_extreme = x == out                                            # (x.shape) bool
    if ctx.function.nan_ties:
        xp = backend.array_module(x)
        is_extreme = is_extreme | (xp.isnan(x) & xp.isnan(out))
    count = is_extreme.sum(axis=ctx.axis, keepdims=True).astype(g.dtype)
    return _const(is_extreme.astype(g.dtype)) * (g.reshape(ctx.kept_shape) / _const(count))


@_formula(reductions.NanSum)
def _nan_sum(ctx, g):
    kept = _kept_shape(ctx.shape, ctx.axis)
    return g.reshape(kept).expand(ctx.shape) * _const(~ctx.saved[0])


@_formula(pointwise.Prod)
def _prod(ctx, g):
    # the product of the others, from exclusive running products on each side (torch's
    # prod_safe_zeros_backward): exact with zeros, and a polynomial in x, so its own
    # gradient is too
    x, axis = ctx.inputs[0], ctx.axis
    rows = x.reshape(-1) if axis is None else x
    along = 0 if axis is None else axis
    size = rows.shape[along]
    if size == 0:
        return g.reshape(_kept_shape(x.shape, axis)).expand(x.shape)
    ones = g.new_ones(rows.shape[:along] + (1,) + rows.shape[along + 1:])
    before = shape.cat([ones, rows.narrow(along, 0, size - 1)], along).cumprod(along)
    after = shape.cat([ones, rows.narrow(along, 1, size - 1).flip(along)], along)
    others = before * after.cumprod(along).flip(along)
    return g.reshape(_kept_shape(x.shape, axis)) * _conj(others.reshape(x.shape))


# ----- scans ----------------------------------------------------------------------------------
def _reversed_cumsum(t, axis):
    return t.flip(axis).cumsum(axis).flip(axis)


@_formula(pointwise.CumSum)
def _cumsum(ctx, g):
    return _reversed_cumsum(g, ctx.axis)


@_formula(pointwise.CumProd)
def _cumprod(ctx, g):
    r"""Without a zero, :math:`\sum_{k \ge i} g_k out_k / x_i`. With one, that quotient is
    not a function of x near the zero, so each position's gradient is built from the
    products that leave it out (torch's O(n²) form under grad mode): for position k,
    :math:`\sum_{j \ge k} g_j \prod_{i \le j, i \ne k} x_i`."""
    x_saved = ctx.saved[0]
    x, axis = ctx.inputs[0], ctx.axis
    if not (x_saved == 0).any():
        out = pointwise.CumProd.apply(x, axis=axis)
        return _reversed_cumsum(g * _conj(out), axis) / _conj(x)
    x, size = _conj(x), x.shape[axis]
    parts = []
    for k in range(size):
        before = x.narrow(axis, 0, k).prod(axis, keepdim=True) if k else \
            g.new_ones(x.shape[:axis] + (1,) + x.shape[axis + 1:])
        left_out = before                                     # (.., n - k, ..): skips x_k
        if k < size - 1:
            later = x.narrow(axis, k + 1, size - k - 1).cumprod(axis)
            left_out = shape.cat([before, before * later], axis)
        parts.append((g.narrow(axis, k, size - k) * left_out).sum(axis, keepdim=True))
    return shape.cat(parts, axis)


@_formula(scans.LogCumSumExp)
def _log_cumsum_exp(ctx, g):
    # torch's, in log space: exp(x + rlcse(log g± - out)), the positive and negative parts
    # of g apart, rlcse the running logsumexp from the end, out applied again
    x, axis = ctx.inputs[0], ctx.axis
    out = scans.LogCumSumExp.apply(x, axis=axis)
    lowest = g.new_full((), float(dtypes.finfo(g.dtype).min))              # log 0, finite
    g_values = g._array                      # its signs: a step function, constants
    log_abs = _safe(g_values == 0, g.abs()).log()
    parts = []
    for sign in (g_values > 0, g_values < 0):
        logs = _select(sign, log_abs, lowest) - out
        rlcse = scans.LogCumSumExp.apply(logs.flip(axis), axis=axis).flip(axis)
        parts.append((rlcse + x).exp())
    return parts[0] - parts[1]


# ----- indexing -------------------------------------------------------------------------------
@_formula(indexing.Gather)
def _gather(ctx, g):
    # zeros with g added where each element was picked: scatter_add, whose gradient gathers
    return indexing.ScatterAdd.apply(g.new_zeros(ctx.shape), g, index=ctx.where)


@_formula(indexing.ScatterAdd)
def _scatter_add(ctx, g):
    need_x, need_src = ctx.needs_input_grad
    return (g if need_x else None,
            _fit(indexing.GetItem.apply(g, index=ctx.index), ctx.src_shape) if need_src
            else None)


@_formula(indexing.IndexPut)
def _index_put(ctx, g):
    # x's gradient is g with 0 where value was written (the op itself); value's, g there
    need_x, need_value = ctx.needs_input_grad
    return (indexing.IndexPut.apply(g, g.new_zeros(()), index=ctx.index) if need_x else None,
            _fit(indexing.GetItem.apply(g, index=ctx.index), ctx.value_shape) if need_value
            else None)


# gradients moved or summed, not read from the inputs' values
for _op in (indexing.Gather, indexing.ScatterAdd, indexing.IndexPut, pointwise.CumSum):
    _op.graph_reads_inputs = False
