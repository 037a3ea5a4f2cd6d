"""Behaviours PyTorch's own reference inputs (``op_db``) found different, now torch's (or,
where torch's CPU kernel is wrong, its correct path's): the LDL factorization of empty
matrices, ``embedding_bag``'s ``scale_grad_by_freq`` and ``sparse``, and ``log_ndtr``'s
gradient in the far left tail."""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def close(ours, theirs, rtol=1e-12, atol=1e-14):
    np.testing.assert_allclose(np.asarray(ours.detach()), theirs.detach().numpy(), rtol, atol)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 4, 4), (2, 0, 3, 3)])
def test_ldl_factor_and_solve_of_empty_matrices_as_torch(shape):
    a = np.zeros(shape)
    b = np.zeros(shape[:-1] + (5,))
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a))
    ours = mg.linalg.ldl_factor_ex(mg.tensor(a))
    for got, expected in zip(ours, theirs):
        assert tuple(got.shape) == tuple(expected.shape)
        assert str(got.dtype) == str(expected.dtype)
    x = torch.linalg.ldl_solve(theirs.LD, theirs.pivots, torch.tensor(b))
    got = mg.linalg.ldl_solve(ours.LD, ours.pivots, mg.tensor(b))
    assert tuple(got.shape) == tuple(x.shape)
    LD, pivots = mg.linalg.ldl_factor(mg.tensor(a))
    assert tuple(LD.shape) == shape and tuple(pivots.shape) == shape[:-1]


BAGS = [([1, 2, 1, 4, 1, 0], [0, 2, 5]), ([3, 3, 0, 0, 2, 2, 2], [0, 3]),
        ([[4, 1, 1], [0, 4, 4]], None)]


def _bags(lib, ids, offsets, weight, **options):
    return lib.nn.functional.embedding_bag(lib.tensor(ids), weight, None if offsets is None
                                           else lib.tensor(offsets), **options)


def _embedding_then_bags(ids, offsets, weight, mode, psw):
    # torch's F.embedding (its scale_grad_by_freq divides by each id's own count), then
    # each bag's sum or mean: the bags' gradient as the option defines it
    flat = torch.tensor(ids).reshape(-1)
    rows = torch.nn.functional.embedding(flat, weight, scale_grad_by_freq=True)
    if psw is not None:
        rows = rows * psw.reshape(-1, 1)
    starts = list(offsets) if offsets is not None else \
        list(range(0, flat.numel(), len(ids[0])))
    ends = starts[1:] + [flat.numel()]
    out = [rows[s:e].sum(0) / (1 if mode == "sum" else max(e - s, 1))
           for s, e in zip(starts, ends)]
    return torch.stack(out)


@pytest.mark.parametrize("ids,offsets", BAGS)
@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_bag_scales_the_gradient_by_each_ids_count(ids, offsets, mode, weighted):
    rng = np.random.default_rng(3)
    table = rng.standard_normal((5, 3))
    psw = rng.standard_normal(np.shape(ids)) if weighted and mode == "sum" else None
    up = rng.standard_normal((len(offsets) if offsets is not None else len(ids), 3))
    tw = torch.tensor(table, requires_grad=True)
    tp = None if psw is None else torch.tensor(psw, requires_grad=True)
    expected = _embedding_then_bags(ids, offsets, tw, mode, tp)
    mw = mg.tensor(table, requires_grad=True)
    mp = None if psw is None else mg.tensor(psw, requires_grad=True)
    got = _bags(mg, ids, offsets, mw, mode=mode, scale_grad_by_freq=True,
                per_sample_weights=mp)
    close(got, expected)
    expected.backward(torch.tensor(up))
    got.backward(mg.tensor(up))
    close(mw.grad, tw.grad)
    if psw is not None:
        close(mp.grad, tp.grad)


def test_embedding_bag_scaled_gradient_is_torchs_where_its_cpu_kernel_counts_right():
    # ids whose k-th distinct value's count is the count of the k-th sorted entry's id
    table = np.random.default_rng(4).standard_normal((5, 3))
    for mode in ("sum", "mean"):
        tw, mw = torch.tensor(table, requires_grad=True), mg.tensor(table, requires_grad=True)
        ids, offsets = [3, 3, 0, 0, 3, 0], [0, 4]
        _bags(torch, ids, offsets, tw, mode=mode, scale_grad_by_freq=True).sum().backward()
        _bags(mg, ids, offsets, mw, mode=mode, scale_grad_by_freq=True).sum().backward()
        close(mw.grad, tw.grad)


def test_embedding_bag_sparse_gives_the_dense_values_of_torchs_sparse_gradient():
    table = np.random.default_rng(5).standard_normal((6, 2))
    ids, offsets = [1, 5, 1, 2], [0, 1]
    tw, mw = torch.tensor(table, requires_grad=True), mg.tensor(table, requires_grad=True)
    _bags(torch, ids, offsets, tw, mode="mean", sparse=True).pow(2).sum().backward()
    _bags(mg, ids, offsets, mw, mode="mean", sparse=True).pow(2).sum().backward()
    assert tw.grad.is_sparse
    close(mw.grad, tw.grad.to_dense())
    for lib, w in ((torch, tw), (mg, mw)):       # scaled and sparse: torch's backward error
        out = _bags(lib, ids, offsets, w, mode="sum", sparse=True, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
            out.sum().backward()
    with pytest.raises(ValueError):              # max mode still refuses both, as torch's
        _bags(mg, ids, offsets, mw, mode="max", sparse=True)


def test_embedding_bag_module_takes_the_options_with_torchs_repr():
    options = dict(mode="sum", scale_grad_by_freq=True, sparse=True)
    ours, theirs = mg.nn.EmbeddingBag(5, 3, **options), torch.nn.EmbeddingBag(5, 3, **options)
    assert repr(ours) == repr(theirs)
    assert ours.scale_grad_by_freq is True and ours.sparse is True


def test_log_ndtr_gradient_is_precise_in_the_far_left_tail():
    x = np.array([-4988429.2, -1e5, -1e3, -60.0])
    m = mg.tensor(x, requires_grad=True)
    mg.special.log_ndtr(m).sum().backward()
    # φ(x)/Φ(x) from the asymptotic series of Mills' ratio: |x| / (1 - 1/x² + 3/x⁴ - ...)
    y = 1 / (x * x)
    expected = -x / (1 - y + 3 * y**2 - 15 * y**3 + 105 * y**4 - 945 * y**5)
    np.testing.assert_allclose(np.asarray(m.grad), expected, rtol=1e-14)


def test_log_ndtr_gradient_elsewhere_as_torch():
    x = np.concatenate([np.linspace(-38, 8, 93), [-1.0, -1.0 - 1e-12, -np.inf, np.inf, np.nan]])
    m, t = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    mg.special.log_ndtr(m).sum().backward()
    torch.special.log_ndtr(t).sum().backward()
    np.testing.assert_allclose(np.asarray(m.grad), t.grad.numpy(), 1e-12, 0, equal_nan=True)
    m32 = mg.tensor(x.astype(np.float32), requires_grad=True)
    mg.special.log_ndtr(m32).sum().backward()
    assert m32.grad.dtype == mg.float32
