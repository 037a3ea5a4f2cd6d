"""The blocked NumPy kernels (``kernels.blocked``, the CPU default): row blocks, scratch
buffers, in-place arithmetic. Blocks are forced small here so that every test crosses block
boundaries (uneven last block, one row per block), and the results are held to the
textbook formulas written out plainly below. In-place work must never touch an input or a
saved array."""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm.kernels import blocked

ROW_NORMS = ("layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm")


@pytest.fixture(params=[24, 8, 1], ids=["3-rows-per-block", "1-row-per-block", "tiny"])
def small_blocks(request, monkeypatch):
    """D = 8 features: 24 values is 3 rows per block, 8 and 1 are one row per block."""
    monkeypatch.setattr(blocked, "BLOCK_ELEMENTS", request.param)
    return request.param


# ----- the textbook formulas, float64, full-size temporaries --------------------------------
def plain_layer_norm(x, w, b, eps, rms=False):
    mean = 0 if rms else x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    xhat = (x - mean) / np.sqrt(var + eps)
    return xhat * (1 if w is None else w) + (0 if b is None else b), xhat, 1 / np.sqrt(var + eps)


def plain_layer_norm_backward(dy, xhat, rstd, w, rms=False):
    g = dy * (1 if w is None else w)
    centring = 0 if rms else g.mean(axis=1, keepdims=True)
    dx = rstd * (g - centring - xhat * (g * xhat).mean(axis=1, keepdims=True))
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


def arrays(rows, size=8, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, size)) * 3 + 1
    dy = rng.standard_normal((rows, size))
    w = 1 + 0.5 * rng.standard_normal(size)
    b = rng.standard_normal(size)
    return [a.astype(dtype) for a in (x, dy, w, b)]


@pytest.mark.parametrize("rows", [1, 2, 3, 7, 10])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm_blocks_match_the_textbook(small_blocks, rows, affine):
    x, dy, w, b = arrays(rows)
    w, b = (None, None) if affine == "none" else (w, b if affine == "both" else None)
    y, mean, rstd = blocked.layer_norm_forward(x, w, b, 1e-5)
    y_ref, xhat, rstd_ref = plain_layer_norm(x, w, b, 1e-5)
    np.testing.assert_allclose(y, y_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mean, x.mean(axis=1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rstd, rstd_ref[:, 0], rtol=1e-12)
    dx, dw, db = blocked.layer_norm_backward(dy, x, w, mean, rstd, b is not None)
    dx_ref, dw_ref, db_ref = plain_layer_norm_backward(dy, xhat, rstd_ref, w)
    np.testing.assert_allclose(dx, dx_ref, rtol=0, atol=1e-12)
    assert (dw is None) == (w is None) and (db is None) == (b is None)
    if w is not None:
        np.testing.assert_allclose(dw, dw_ref, rtol=0, atol=1e-12)
    if b is not None:
        np.testing.assert_allclose(db, db_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("rows", [1, 3, 7, 10])
@pytest.mark.parametrize("with_weight", [False, True])
def test_rms_norm_blocks_match_the_textbook(small_blocks, rows, with_weight):
    x, dy, w, _ = arrays(rows, seed=1)
    w = w if with_weight else None
    y, rstd = blocked.rms_norm_forward(x, w, 1e-6)
    y_ref, xhat, rstd_ref = plain_layer_norm(x, w, None, 1e-6, rms=True)
    np.testing.assert_allclose(y, y_ref, rtol=0, atol=1e-12)
    dx, dw = blocked.rms_norm_backward(dy, x, w, rstd)
    dx_ref, dw_ref, _ = plain_layer_norm_backward(dy, xhat, rstd_ref, w, rms=True)
    np.testing.assert_allclose(dx, dx_ref, rtol=0, atol=1e-12)
    if with_weight:
        np.testing.assert_allclose(dw, dw_ref, rtol=0, atol=1e-12)
    else:
        assert dw is None


@pytest.mark.parametrize("rows", [3, 10])
def test_float16_blocks_accumulate_in_float32(small_blocks, rows):
    x, dy, w, b = arrays(rows, seed=2, dtype=np.float16)
    y, mean, rstd = blocked.layer_norm_forward(x, w, b, 1e-5)
    assert y.dtype == np.float16 and mean.dtype == rstd.dtype == np.float32
    dx, dw, db = blocked.layer_norm_backward(dy, x, w, mean, rstd)
    assert dx.dtype == dw.dtype == db.dtype == np.float16
    as64 = [a.astype(np.float64) for a in (x, dy, w, b)]
    y_ref, xhat, rstd_ref = plain_layer_norm(as64[0], as64[2], as64[3], 1e-5)
    dx_ref, dw_ref, db_ref = plain_layer_norm_backward(as64[1], xhat, rstd_ref, as64[2])
    for actual, expected in ((y, y_ref), (dx, dx_ref), (dw, dw_ref), (db, db_ref)):
        scale = np.abs(expected).max()
        np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=0,
                                   atol=4e-3 * scale)


def test_residual_forms_add_ds_to_the_norm_gradient(small_blocks):
    x, dy, w, b = arrays(7, seed=3)
    residual, ds = arrays(7, seed=4)[:2]
    y, s, mean, rstd = blocked.add_layer_norm_forward(x, residual, w, b, 1e-5)
    np.testing.assert_array_equal(s, x + residual)
    np.testing.assert_array_equal(y, blocked.layer_norm_forward(s, w, b, 1e-5)[0])
    dsum, _, _ = blocked.add_layer_norm_backward(dy, ds, s, w, mean, rstd)
    dx, _, _ = blocked.layer_norm_backward(dy, s, w, mean, rstd)
    np.testing.assert_allclose(dsum, dx + ds, rtol=0, atol=1e-14)
    y, s, rstd = blocked.add_rms_norm_forward(x, residual, w, 1e-6)
    np.testing.assert_array_equal(y, blocked.rms_norm_forward(s, w, 1e-6)[0])
    dsum, _ = blocked.add_rms_norm_backward(dy, ds, s, w, rstd)
    np.testing.assert_allclose(dsum, blocked.rms_norm_backward(dy, s, w, rstd)[0] + ds,
                               rtol=0, atol=1e-14)


def test_blocked_and_unblocked_agree_on_a_large_array(monkeypatch):
    x, dy, w, b = arrays(300, size=64, seed=5)
    whole = blocked.layer_norm_forward(x, w, b, 1e-5)
    whole_dx = blocked.layer_norm_backward(dy, x, w, *whole[1:])
    monkeypatch.setattr(blocked, "BLOCK_ELEMENTS", 64 * 7)        # 43 blocks, last of 6
    small = blocked.layer_norm_forward(x, w, b, 1e-5)
    small_dx = blocked.layer_norm_backward(dy, x, w, *small[1:])
    for a, c in zip(whole + whole_dx, small + small_dx):
        np.testing.assert_allclose(a, c, rtol=0, atol=1e-12)


# ----- through the graph: inputs and saved arrays stay untouched ----------------------------
def call(norm, t, size):
    if norm == "layer_norm":
        return (F.layer_norm(t["x"], size, t["weight"], t["bias"]),)
    if norm == "rms_norm":
        return (F.rms_norm(t["x"], size, t["weight"]),)
    if norm == "add_layer_norm":
        return F.add_layer_norm(t["x"], t["residual"], size, t["weight"], t["bias"])
    if norm == "add_rms_norm":
        return F.add_rms_norm(t["x"], t["residual"], size, t["weight"])
    return (F.batch_norm(t["x"], t["running_mean"], t["running_var"], t["weight"], t["bias"],
                         training=True),)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("norm", [*ROW_NORMS, "batch_norm"])
def test_inputs_and_upstream_grads_are_unchanged_and_a_second_backward_agrees(
        small_blocks, norm, dtype):
    rng = np.random.default_rng(6)
    values = {name: rng.standard_normal((10, 8)).astype(dtype)
              for name in ("x", "residual")}
    values.update(weight=(1 + rng.standard_normal(8)).astype(dtype),
                  bias=rng.standard_normal(8).astype(dtype))
    t = {name: mg.tensor(a, requires_grad=True) for name, a in values.items()}
    t.update(running_mean=np.zeros(8, dtype), running_var=np.ones(8, dtype))
    before = {name: tensor.detach().clone() for name, tensor in t.items()
              if isinstance(tensor, mg.Tensor)}
    outputs = call(norm, t, 8)
    upstream = [rng.standard_normal((10, 8)).astype(dtype) for _ in outputs]
    upstream_before = [g.copy() for g in upstream]
    leaves = [t[name] for name in before]
    first = mg.grad(outputs, leaves, upstream, retain_graph=True, allow_unused=True)
    second = mg.grad(outputs, leaves, upstream, retain_graph=True, allow_unused=True)
    for name, value in before.items():
        np.testing.assert_array_equal(t[name].data, value, err_msg=name)
    for g, g_before in zip(upstream, upstream_before):
        np.testing.assert_array_equal(g, g_before)
    for a, b in zip(first, second):
        if a is None:
            assert b is None
        else:
            np.testing.assert_array_equal(a, b)
    y_again = call(norm, {**t, "running_mean": None, "running_var": None} if norm ==
                   "batch_norm" else t, 8)
    np.testing.assert_array_equal(y_again[0].data, outputs[0].data)


def test_a_graph_that_is_never_back_propagated_is_freed_without_the_cycle_collector():
    import gc
    import weakref
    x = mg.tensor(np.random.default_rng(7).standard_normal((4, 8)), requires_grad=True)
    gc.disable()
    try:
        y = F.layer_norm(x, 8, impl="composite").tanh()    # nodes that save their output
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None
    finally:
        gc.enable()
