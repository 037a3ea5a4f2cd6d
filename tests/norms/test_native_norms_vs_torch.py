"""torch's native norm functions (mg.native_layer_norm, native_batch_norm, native_group_norm,
_native_batch_norm_legit, batch_norm_update_stats) and their neighbours (native_dropout,
_softmax_backward_data, native_channel_shuffle) against torch at test time: statistics'
shapes, dtypes and gradient flags, running statistics, error classes, and what the OpInfo
sweep (tests/engine/test_opinfo_generic.py) does not reach."""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def _pair(shape, dtype="float64", seed=0, requires_grad=False):
    data = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    t = torch.tensor(data, requires_grad=requires_grad)
    m = mg.tensor(data.copy(), requires_grad=requires_grad)
    return m, t


def _close(ours, theirs, rtol=1e-7, atol=1e-9):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    half = str(ours.dtype) in ("torch.float16", "torch.bfloat16")
    np.testing.assert_allclose(np.asarray(ours.detach().float() if half else ours.detach()),
                               (theirs.detach().float() if half else theirs.detach()).numpy(),
                               rtol, atol)


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_native_layer_norm_statistics(dtype):
    m, t = _pair((2, 3, 4), dtype, requires_grad=dtype == "float64")
    ours = mg.native_layer_norm(m, [3, 4], None, None, 1e-5)
    theirs = torch.native_layer_norm(t, [3, 4], None, None, 1e-5)
    tol = (1e-7, 1e-9) if dtype == "float64" else (2e-3, 2e-3)
    for a, b in zip(ours, theirs):
        _close(a, b, *tol)
        assert a.requires_grad == b.requires_grad


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_native_batch_norm_outputs_and_running_stats(training, dtype):
    m, t = _pair((4, 3, 5), dtype)
    # float32 parameters beside a half input, as torch's CPU kernel takes them
    kind = "float64" if dtype == "float64" else "float32"
    mk, tk = getattr(mg, kind), getattr(torch, kind)
    rm, rv = mg.zeros(3, dtype=mk) + 0.5, mg.ones(3, dtype=mk) * 2
    trm, trv = torch.zeros(3, dtype=tk) + 0.5, torch.ones(3, dtype=tk) * 2
    ours = mg.native_batch_norm(m, mg.ones(3, dtype=mk), mg.zeros(3, dtype=mk), rm, rv,
                                training, 0.3, 1e-5)
    theirs = torch.native_batch_norm(t, torch.ones(3, dtype=tk), torch.zeros(3, dtype=tk),
                                     trm, trv, training, 0.3, 1e-5)
    tol = (1e-6, 1e-7) if dtype == "float64" else (2e-3, 2e-3)
    for a, b in zip(ours, theirs):
        _close(a, b, *tol)
    _close(rm, trm, 1e-6, 1e-7)
    _close(rv, trv, 1e-6, 1e-7)


def test_native_batch_norm_legit_overloads():
    m, t = _pair((4, 3), requires_grad=True)
    for args in [(True, 0.1, 1e-5)]:
        ours = mg._native_batch_norm_legit(m, None, None, *args)
        theirs = torch._native_batch_norm_legit(t, None, None, *args)
        for a, b in zip(ours, theirs):
            _close(a, b)
            assert a.requires_grad == b.requires_grad
    rm, rv = mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    ours = mg._native_batch_norm_legit(m, None, None, rm, rv, True, 0.1, 1e-5)
    theirs = torch._native_batch_norm_legit(t, None, None, trm, trv, True, 0.1, 1e-5)
    for a, b in zip(ours + (rm, rv), theirs + (trm, trv)):
        _close(a, b)


def test_native_batch_norm_output_gradient():
    m, t = _pair((4, 3, 2), requires_grad=True)
    w, tw = _pair((3,), seed=1, requires_grad=True)
    rm, rv = mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    ours, mean, invstd = mg.native_batch_norm(m, w, None, rm, rv, True, 0.1, 1e-5)
    theirs, tmean, tinvstd = torch.native_batch_norm(t, tw, None, trm, trv, True, 0.1, 1e-5)
    for a, b in ((mean, tmean), (invstd, tinvstd), (rm, trm), (rv, trv)):
        _close(a, b)
        assert a.requires_grad == b.requires_grad
    up = np.random.default_rng(2).standard_normal((4, 3, 2))
    ours.backward(mg.tensor(up))
    theirs.backward(torch.tensor(up))
    _close(m.grad, t.grad)
    _close(w.grad, tw.grad)


def test_native_group_norm_gradient_through_mean_and_rstd():
    m, t = _pair((2, 4, 3), requires_grad=True)
    ours = mg.native_group_norm(m, None, None, 2, 4, 3, 2, 1e-5)
    theirs = torch.native_group_norm(t, None, None, 2, 4, 3, 2, 1e-5)
    for a, b in zip(ours, theirs):
        _close(a, b)
        assert a.requires_grad == b.requires_grad
    (ours[1] * 3 + ours[2] * ours[2]).sum().backward()
    (theirs[1] * 3 + theirs[2] * theirs[2]).sum().backward()
    _close(m.grad, t.grad)


def test_batch_norm_update_stats():
    m, t = _pair((5, 3, 2), "float32")
    rm, rv = mg.zeros(3), mg.ones(3)
    trm, trv = torch.zeros(3), torch.ones(3)
    ours = mg.batch_norm_update_stats(m, rm, rv, 0.2)
    theirs = torch.batch_norm_update_stats(t, trm, trv, 0.2)
    for a, b in zip(ours + (rm, rv), theirs + (trm, trv)):
        _close(a, b, 1e-5, 1e-6)


def _error_class(call_ours, call_theirs):
    with pytest.raises(Exception) as theirs:
        call_theirs()
    with pytest.raises(Exception) as ours:
        call_ours()
    assert isinstance(ours.value, type(theirs.value)), (ours.value, theirs.value)


@pytest.mark.parametrize("case", ["shape", "empty_shape", "weight", "groups", "mixed",
                                  "empty_batch"])
def test_error_classes(case):
    m, t = _pair((2, 3, 4))
    calls = {
        "shape": lambda lib, x: lib.native_layer_norm(x, [5], None, None, 1e-5),
        "empty_shape": lambda lib, x: lib.native_layer_norm(x, [], None, None, 1e-5),
        "weight": lambda lib, x: lib.native_layer_norm(
            x, [4], lib.ones(5, dtype=lib.float64), None, 1e-5),
        "groups": lambda lib, x: lib.native_group_norm(x, None, None, 2, 3, 4, 2, 1e-5),
        "mixed": lambda lib, x: lib.native_batch_norm(
            x, lib.ones(3), None, None, None, True, 0.1, 1e-5),
        "empty_batch": lambda lib, x: lib.native_batch_norm(
            x[:0], None, None, None, None, True, 0.1, 1e-5),
    }
    _error_class(lambda: calls[case](mg, m), lambda: calls[case](torch, t))


def test_native_batch_norm_eval_without_running_stats_raises():
    # torch's CPU kernel reads missing running statistics (a crash); here a RuntimeError
    with pytest.raises(RuntimeError, match="running_mean"):
        mg.native_batch_norm(mg.randn(2, 3), None, None, None, None, False, 0.1, 1e-5)


@pytest.mark.parametrize("p, train", [(0.0, True), (0.5, False), (1.0, True), (0.3, True)])
def test_native_dropout(p, train):
    m, t = _pair((6, 5), "float32")
    ours = mg.native_dropout(m, p, train)
    theirs = torch.native_dropout(t, p, train)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype) == str(b.dtype)
    if p in (0.0, 1.0) or not train:
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(np.asarray(a), b.numpy())
    out, mask = ours
    scale = 1 / (1 - p) if train and p < 1 else 1.0
    np.testing.assert_allclose(np.asarray(out), np.asarray(m) * np.asarray(mask) * scale,
                               1e-6)


def test_softmax_backward_data_and_channel_shuffle():
    y, ty = _pair((3, 4), seed=3)
    y, ty = y.softmax(1), ty.softmax(1)
    g, tg = _pair((3, 4), seed=4)
    for dim in (0, 1):
        _close(mg._softmax_backward_data(g, y, dim, mg.float64),
               torch._softmax_backward_data(tg, ty, dim, torch.float64))
    x, tx = _pair((2, 6, 3))
    _close(mg.native_channel_shuffle(x, 3), torch.native_channel_shuffle(tx, 3))


@pytest.mark.parametrize("name", ["_native_batch_norm_legit", "_softmax_backward_data"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_private_opinfos_match_pytorch(name, dtype, monkeypatch):
    # torch's OpInfo samples of the underscore names, which the generic sweep does not
    # resolve: each found here by the same name
    pytest.importorskip("expecttest")
    import opinfo_generic
    monkeypatch.setattr(opinfo_generic, "resolve", lambda op: getattr(mg, op.name))
    op = opinfo_generic.op_table()[(name, "")]
    ran, failures = opinfo_generic.run_op(op, getattr(torch, dtype), max_samples=10**6)
    assert not failures, "\n".join(failures)
    assert ran


def _split_batch(counts=(4, 3), seed=5):
    x, tx = _pair((sum(counts), 3, 2), seed=seed)
    g, tg = _pair((sum(counts), 3, 2), seed=seed + 1)
    w, tw = _pair((3,), seed=seed + 2)
    b, tb = _pair((3,), seed=seed + 3)
    bounds = np.cumsum((0,) + counts)
    parts = [(x[lo:hi], g[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])]
    return (x, g, w, b), (tx, tg, tw, tb), parts


@pytest.mark.parametrize("counts", [(4, 3), (3, 3)])
def test_sync_batch_norm_pieces_match_native_batch_norm(counts):
    # SyncBatchNorm's pieces over a batch split between processes give torch's
    # native_batch_norm of the whole batch: statistics, running statistics, output, gradients
    (x, g, w, b), (tx, tg, tw, tb), parts = _split_batch(counts)
    tx.requires_grad_(True)
    tw.requires_grad_(True)
    tb.requires_grad_(True)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    out, save_mean, save_invstd = torch.native_batch_norm(tx, tw, tb, trm, trv, True, 0.2,
                                                          1e-5)
    out.backward(tg)

    stats = [mg.batch_norm_stats(p, 1e-5) for p, _ in parts]
    means, invstds = mg.stack([s[0] for s in stats]), mg.stack([s[1] for s in stats])
    rm, rv = mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64)
    n = [p.shape[0] * p.shape[2] for p, _ in parts]
    if len(set(counts)) == 1:
        mean, invstd = mg.batch_norm_gather_stats(x, means, invstds, rm, rv, 0.2, 1e-5, n[0])
    else:
        mean, invstd = mg.batch_norm_gather_stats_with_counts(
            x, means, invstds, rm, rv, 0.2, 1e-5, mg.tensor(n, dtype=mg.float64))
    for a, c in ((mean, save_mean), (invstd, save_invstd), (rm, trm), (rv, trv)):
        _close(a, c, 1e-9, 1e-11)
    y = mg.cat([mg.batch_norm_elemt(p, w, b, mean, invstd, 1e-5) for p, _ in parts])
    _close(y, out, 1e-9, 1e-11)

    reduced = [mg.batch_norm_backward_reduce(gp, p, mean, invstd, w, True, True, True)
               for p, gp in parts]
    sum_dy, sum_dy_xmu, grad_w, grad_b = (sum(r[i] for r in reduced) for i in range(4))
    _close(grad_w, tw.grad, 1e-9, 1e-11)
    _close(grad_b, tb.grad, 1e-9, 1e-11)
    dx = mg.cat([mg.batch_norm_backward_elemt(gp, p, mean, invstd, w, sum_dy, sum_dy_xmu,
                                              mg.tensor(n, dtype=mg.int32))
                 for p, gp in parts])
    _close(dx, tx.grad, 1e-9, 1e-11)


def test_batch_norm_stats_of_one_process_match_native_batch_norm():
    for dtype, tol in (("float64", (1e-9, 1e-11)), ("float32", (1e-5, 1e-6))):
        m, t = _pair((5, 4, 3), dtype, seed=9)
        _, save_mean, save_invstd = torch.native_batch_norm(t, None, None, None, None, True,
                                                            0.1, 1e-3)
        mean, invstd = mg.batch_norm_stats(m, 1e-3)
        _close(mean, save_mean, *tol)
        _close(invstd, save_invstd, *tol)


@pytest.mark.parametrize("p", [2, 1, 3.5, float("inf")])
def test_native_norm_matches_torch_sparse_kernel(p):
    # torch's CPU build runs native_norm on sparse tensors only (over every element)
    m, t = _pair((3, 4), seed=11, requires_grad=True)
    ours = mg.native_norm(m, p)
    theirs = torch.native_norm(t.to_sparse(), p)
    _close(ours, theirs)
    ours.backward()
    torch.linalg.vector_norm(t, p).backward()
    _close(m.grad, t.grad)


@pytest.mark.parametrize("shape, normalized", [((0, 4), [4]), ((2, 0), [0]), ((3,), [3])])
def test_native_layer_norm_empty_and_whole_input(shape, normalized):
    m, t = _pair(shape, "float32", seed=12)
    for a, b in zip(mg.native_layer_norm(m, normalized, None, None, 1e-5),
                    torch.native_layer_norm(t, normalized, None, None, 1e-5)):
        _close(a, b, 1e-5, 1e-6)
