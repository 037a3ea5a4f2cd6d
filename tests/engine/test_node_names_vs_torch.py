"""The names of the nodes of the common shape, index, reduction and product ops against
PyTorch's: ``y.grad_fn.name()`` and the ``grad_fn=<...>`` of a printed tensor are torch's for
every public function whose op is one node in both libraries, though several of them share
one op here (a subclass that only renames it: ``autograd/graph.py``'s ``node_alias``). The values,
the gradient and the second derivative of each call are torch's too (float64), so a renamed
node computes as its op did; the profiler reads each new name as torch's aten op."""

import pickle
import re

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm.autograd.profiler import event_name
from microgradnorm.ops import (elementwise, indexing, linalg, masking, memory_formats, methods,
                               pointwise, reductions)
from microgradnorm.ops import shape
from torch_compare import one_torch_thread  # noqa: F401  (autouse: one torch thread)


def _rows(L):
    return L.tensor([0, 2])


# name: a call on either library (L: torch or mg) and x, the (4, 6) input; its result's node
# is one op in both libraries
CASES = {
    # views and reshapes: ViewBackward0, UnsqueezeBackward0, SqueezeBackward0/1/2
    "view": lambda L, x: x.view(-1),
    "view_sizes": lambda L, x: x.view(2, 12),
    "view_as": lambda L, x: x.view_as(x),
    "reshape": lambda L, x: x.reshape(6, 4),
    "reshape_same": lambda L, x: x.reshape(4, 6),
    "reshape_3d": lambda L, x: x.reshape(2, 3, 4).reshape(-1, 4),
    "reshape_of_rows": lambda L, x: x[1:3].reshape(-1),
    "flatten": lambda L, x: x.flatten(),
    "flatten_3d": lambda L, x: x.reshape(2, 2, 6).flatten(1),
    "flatten_0d": lambda L, x: x[0, 0].flatten(),
    "unflatten": lambda L, x: x.unflatten(1, (2, 3)),
    "unsqueeze": lambda L, x: x.unsqueeze(0),
    "unsqueeze_neg": lambda L, x: x.unsqueeze(-1),
    "unsqueeze_1d": lambda L, x: x[0].unsqueeze(1),
    "squeeze": lambda L, x: x.unsqueeze(0).squeeze(),
    "squeeze_none_of_size_1": lambda L, x: x.squeeze(),
    "squeeze_dim": lambda L, x: x.unsqueeze(0).squeeze(0),
    "squeeze_neg_dim": lambda L, x: x.unsqueeze(-1).squeeze(-1),
    "squeeze_dim_not_1": lambda L, x: x.squeeze(1),
    "squeeze_dims": lambda L, x: x.unsqueeze(0).squeeze((0,)),
    "squeeze_dims_3d": lambda L, x: x.reshape(1, 4, 1, 6).squeeze((0, 2)),
    # transposes: TransposeBackward0, TBackward0, PermuteBackward0
    "transpose": lambda L, x: x.transpose(0, 1),
    "transpose_neg": lambda L, x: x.reshape(2, 2, 6).transpose(-1, -3),
    "swapaxes": lambda L, x: x.swapaxes(0, 1),
    "mT": lambda L, x: x.mT,
    "mT_3d": lambda L, x: x.reshape(2, 2, 6).mT,
    "t": lambda L, x: x.t(),
    "t_1d": lambda L, x: x[0].t(),
    "T": lambda L, x: x.T,
    "permute": lambda L, x: x.permute(1, 0),
    "movedim": lambda L, x: x.reshape(2, 2, 6).movedim(0, -1),
    "expand": lambda L, x: x.unsqueeze(0).expand(3, 4, 6),
    # joins: CatBackward0
    "cat": lambda L, x: L.cat([x, x]),
    "cat_dim": lambda L, x: L.cat([x, x * 2], dim=-1),
    "cat_3d": lambda L, x: L.cat([x.reshape(2, 2, 6)] * 3, 1),
    # indexing: SelectBackward0, SliceBackward0, IndexBackward0, UnsqueezeBackward0, ...
    "select": lambda L, x: x[0],
    "select_neg": lambda L, x: x[-1],
    "select_col": lambda L, x: x[:, 2],
    "select_ellipsis": lambda L, x: x[..., 1],
    "select_two": lambda L, x: x[0, 1],
    "select_after_slice": lambda L, x: x[1:3, 0],
    "select_after_none": lambda L, x: x[None, 1],
    "select_0d_tensor": lambda L, x: x[L.tensor(1)],
    "slice": lambda L, x: x[1:3],
    "slice_all": lambda L, x: x[:],
    "slice_cols": lambda L, x: x[:, 1:3],
    "slice_step": lambda L, x: x[::2],
    "slice_neg": lambda L, x: x[-2:],
    "slice_after_select": lambda L, x: x[0, 1:3],
    "slice_1d": lambda L, x: x[0][1:4],
    "narrow": lambda L, x: x.narrow(1, 1, 2),
    "narrow_rows": lambda L, x: x.narrow(0, 0, 4),
    "none": lambda L, x: x[None],
    "none_after_select": lambda L, x: x[0, None],
    "none_last": lambda L, x: x[..., None],
    "index_long": lambda L, x: x[_rows(L)],
    "index_list": lambda L, x: x[[0, 1]],
    "index_mask": lambda L, x: x[x > 0],
    "index_cols": lambda L, x: x[:, _rows(L)],
    "index_after_select": lambda L, x: x[0, [0, 1]],
    "index_with_slice": lambda L, x: x[[0, 1], 1:3],
    "alias": lambda L, x: x[:, :],
    "alias_ellipsis": lambda L, x: x[...],
    "index_select": lambda L, x: x.index_select(0, _rows(L)),
    "index_select_neg": lambda L, x: x.index_select(-1, _rows(L)),
    "index_select_3d": lambda L, x: x.reshape(2, 2, 6).index_select(1, L.tensor([1])),
    "embedding": lambda L, x: L.nn.functional.embedding(L.tensor([[0, 2], [3, 3]]), x),
    "gather": lambda L, x: x.gather(1, L.tensor([[0], [1], [2], [3]])),
    "sort": lambda L, x: x.sort().values,
    "sort_dim": lambda L, x: x.sort(0, descending=True).values,
    "topk": lambda L, x: x.topk(2).values,
    "topk_dim": lambda L, x: x.topk(3, 0, largest=False).values,
    # masks and clamps: MaskedFillBackward0/1, TrilBackward0, TriuBackward0, ClampBackward0/1
    "masked_fill": lambda L, x: x.masked_fill(x > 0, 0.0),
    "masked_fill_tensor": lambda L, x: x.masked_fill(x > 0, L.tensor(1.0, dtype=L.float64)),
    "where": lambda L, x: L.where(x > 0, x, 0.0),
    "tril": lambda L, x: x.tril(),
    "triu": lambda L, x: x.triu(1),
    "tril_3d": lambda L, x: x.reshape(2, 2, 6).tril(-1),
    "clamp": lambda L, x: x.clamp(-0.5, 0.5),
    "clamp_min": lambda L, x: x.clamp(min=0),
    "clamp_max": lambda L, x: x.clamp(max=0),
    "clip": lambda L, x: x.clip(-1, 1),
    "clamp_tensor": lambda L, x: x.clamp(L.zeros(6, dtype=L.float64)),
    # arithmetic and casts: RsubBackward1, ToCopyBackward0
    "rsub": lambda L, x: 1 - x,
    "rsub_float": lambda L, x: 2.5 - x,
    "sub": lambda L, x: x - 1,
    "sub_tensors": lambda L, x: x - x * 2,
    "float": lambda L, x: x.float(),
    "half": lambda L, x: x.half(),
    "to": lambda L, x: x.to(L.float32),
    "to_dtype": lambda L, x: x.to(dtype=L.float32),
    # reductions and scans: SumBackward1, MeanBackward1, ProdBackward1, CumsumBackward0, ...
    "sum": lambda L, x: x.sum(),
    "sum_dim": lambda L, x: x.sum(0),
    "sum_neg_keepdim": lambda L, x: x.sum(-1, keepdim=True),
    "sum_dims": lambda L, x: x.sum((0, 1)),
    "sum_3d": lambda L, x: x.reshape(2, 2, 6).sum((0, 2)),
    "mean": lambda L, x: x.mean(),
    "mean_dim": lambda L, x: x.mean(0),
    "mean_dims": lambda L, x: x.mean((0, 1)),
    "mean_keepdim": lambda L, x: x.mean(-1, keepdim=True),
    "mean_1d": lambda L, x: x[0].mean(0),
    "prod": lambda L, x: x.prod(),
    "prod_dim": lambda L, x: x.prod(0),
    "prod_keepdim": lambda L, x: x.prod(1, keepdim=True),
    "prod_1d": lambda L, x: x[0].prod(-1),
    "cumsum": lambda L, x: x.cumsum(0),
    "cumsum_neg": lambda L, x: x.cumsum(-1),
    "cumsum_fn": lambda L, x: L.cumsum(x[0], 0),
    "cumprod": lambda L, x: x.cumprod(1),
    "amax": lambda L, x: x.amax(0),
    "amax_all": lambda L, x: x.amax(),
    "amax_dims": lambda L, x: x.amax((0, 1)),
    "amin": lambda L, x: x.amin(-1, keepdim=True),
    "max": lambda L, x: x.max(),
    "min": lambda L, x: x.min(),
    "max_fn": lambda L, x: L.max(x),
    "median": lambda L, x: x.median(),
    # products: MmBackward0, BmmBackward0, DotBackward0, MvBackward0
    "matmul_2d": lambda L, x: x @ x.t(),
    "matmul_fn": lambda L, x: L.matmul(x, x.T),
    "mm": lambda L, x: x.mm(x.t()),
    "mm_fn": lambda L, x: L.mm(x.t(), x),
    "t_at_x": lambda L, x: x.t() @ x,
    "bmm": lambda L, x: L.bmm(x.unsqueeze(0), x.t().unsqueeze(0)),
    "bmm_batched": lambda L, x: x.reshape(2, 2, 6).bmm(x.reshape(2, 6, 2)),
    "dot": lambda L, x: x[0] @ x[1],
    "dot_fn": lambda L, x: L.dot(x[0], x[1]),
    "mv": lambda L, x: x @ x[0],
    "mv_fn": lambda L, x: L.mv(x.t(), x[:, 1]),
}

# ops whose node was already torch's, kept as they are (PermuteBackward0, SumBackward0, ...)
SAME_BEFORE = {"T", "permute", "movedim", "expand", "gather", "where", "clamp_tensor", "sub",
               "sub_tensors", "sum", "mean", "prod"}


def _input(L, seed=0):
    values = np.random.default_rng(seed).standard_normal((4, 6))
    return L.tensor(values, dtype=L.float64, requires_grad=True)


def _grad_fn_text(t):
    """The node's name as a printed tensor shows it: ``grad_fn=<ViewBackward0>``."""
    return re.search(r"grad_fn=<(\w+)>", repr(t)).group(1)


@pytest.mark.parametrize("case", sorted(CASES))
def test_node_name_is_torchs(case):
    call = CASES[case]
    ours, theirs = call(mg, _input(mg)), call(torch, _input(torch))
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert _grad_fn_text(ours) == _grad_fn_text(theirs) == theirs.grad_fn.name()
    assert repr(ours.grad_fn).startswith(f"<{theirs.grad_fn.name()} object at ")


@pytest.mark.parametrize("case", sorted(CASES))
def test_renamed_node_computes_as_torchs(case):
    """The values, the gradient of a random upstream and the second derivative (create_graph:
    the base op's graph formulas, inherited) of each call, in float64, against torch's."""
    call = CASES[case]
    x, tx = _input(mg), _input(torch)
    y, ty = call(mg, x), call(torch, tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    if not ty.dtype.is_floating_point or ty.dtype != torch.float64:
        (g,) = mg.autograd.grad(y.sum(), x)
        (tg,) = torch.autograd.grad(ty.sum(), tx)
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-3)
        return
    upstream = np.random.default_rng(1).standard_normal(tuple(ty.shape))
    w, tw = mg.tensor(upstream), torch.tensor(upstream)
    (g,) = mg.autograd.grad((y * y * w).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad((ty * ty * tw).sum(), tx, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-10, atol=1e-12)
    (gg,) = mg.autograd.grad((g * g).sum(), x)
    (tgg,) = torch.autograd.grad((tg * tg).sum(), tx)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", sorted(set(CASES) - SAME_BEFORE))
def test_profiler_reads_the_new_names_as_aten_ops(case):
    node = CASES[case](mg, _input(mg)).grad_fn
    assert event_name(node).startswith("aten::"), (node.name(), event_name(node))


ALIASES = [shape.View, shape.Unsqueeze, shape.Squeeze, shape.SqueezeDim, shape.SqueezeDims,
           shape.Transpose, shape.T, shape.Cat, indexing.Select, indexing.Slice,
           indexing.UnsqueezeIndex, indexing.Index, indexing.Alias, indexing.IndexSelect,
           indexing.Embedding, indexing.Sort, indexing.Topk, masking.MaskedFill,
           masking.MaskedFillTensor, masking.Tril, masking.Triu, methods.Rsub,
           elementwise.ClampScalars, memory_formats.ToCopy, reductions.SumDims,
           reductions.MeanDims, reductions.Amax, reductions.Amin, reductions.MaxOfAll,
           reductions.MinOfAll, reductions.Median, pointwise.ProdDim, pointwise.Cumsum,
           pointwise.Cumprod, linalg.Mm, linalg.Bmm, linalg.Dot, linalg.Mv]


@pytest.mark.parametrize("alias", ALIASES, ids=lambda c: c.__qualname__)
def test_alias_only_renames(alias):
    """A renaming subclass adds nothing but its name: forward, backward and the graph
    formulas are its base's, and pickle finds it by its module-level name."""
    base = alias.__mro__[1]
    assert set(vars(alias)) <= {"node_suffix", "_node_name", "__module__", "__qualname__",
                                "__doc__"}
    assert alias.forward is base.forward and alias.backward is base.backward
    assert getattr(alias, "graph_backward", None) is getattr(base, "graph_backward", None)
    assert pickle.loads(pickle.dumps(alias)) is alias
    assert alias._node_name() == alias.__name__ + alias.node_suffix
