"""Attention, softmax, log_softmax and cross-entropy both ways (``norms.FUSED_OPS``): against
PyTorch in float64, finite differences, each other, and the tools' saved bytes."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import arrays, shapes

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import backend, viz
from microgradnorm.norms import FUSED_OPS

IMPLS = ("composite", "fused")
SHAPES = {"softmax": (3, 4, 7), "log_softmax": (5, 6), "cross_entropy": (6, 5), "gelu": (4, 6),
          "scaled_dot_product_attention": (2, 3, 4, 5)}


def leaves(*arrays_):
    return [mg.tensor(a, requires_grad=True) for a in arrays_]


def torch_leaves(*arrays_):
    return [torch.tensor(a, requires_grad=True) for a in arrays_]


def backward_both(out, t_out, rng):
    g = rng.standard_normal(out.shape)
    (out * mg.tensor(g)).sum().backward()
    (t_out * torch.tensor(g)).sum().backward()


def assert_close(ours, theirs, tol=1e-12):
    np.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=tol, atol=tol)


# ----- every FUSED_OPS spec, as the tools run it ------------------------------------------
@pytest.mark.parametrize("name", list(FUSED_OPS))
@pytest.mark.parametrize("impl", IMPLS)
def test_spec_matches_torch_float64(name, impl):
    spec = FUSED_OPS[name]
    arrays_ = spec.make_inputs(SHAPES[name], "float64", seed=1)
    ours = {k: mg.tensor(a, requires_grad=k not in spec.constants) for k, a in arrays_.items()}
    theirs = {k: torch.tensor(a, requires_grad=k not in spec.constants)
              for k, a in arrays_.items()}
    (out,), (t_out,) = spec.run(ours, impl), spec.run_torch(TF, theirs)
    assert_close(out.data, t_out)
    backward_both(out, t_out, np.random.default_rng(2))
    for k in ours:
        if k not in spec.constants:
            assert_close(ours[k].grad, theirs[k].grad)


@pytest.mark.parametrize("name", list(FUSED_OPS))
def test_fused_saves_no_more_than_composite_by_the_tools(name):
    """mg.compare and viz.compare count both sides; attention's fused node keeps no L×S."""
    result = mg.compare(name, SHAPES[name], repeat=1)
    twin = viz.compare(name, SHAPES[name]).twin
    assert result.fused.nodes == twin.fused.nodes == 1 < result.composite.nodes
    assert result.fused.saved_bytes == twin.fused.saved_bytes
    assert result.composite.saved_bytes == twin.composite.saved_bytes
    if name == "cross_entropy":          # logits + logsumexp vs exp(logits) + the sum
        assert result.fused.saved_bytes <= result.composite.saved_bytes
    else:
        assert result.fused.saved_bytes < result.composite.saved_bytes
    assert max(result.max_abs_diff.values()) < 1e-12


def test_attention_saved_bytes_grow_with_length_only_in_the_composite():
    small = mg.compare("sdpa", (1, 2, 8, 4), repeat=1)
    large = mg.compare("sdpa", (1, 2, 32, 4), repeat=1)
    # the L×S probabilities: 16 times the bytes for 4 times the length
    assert large.composite.saved_bytes > 10 * small.composite.saved_bytes
    assert large.fused.saved_bytes <= 4 * small.fused.saved_bytes


def test_visualizer_colours_the_fused_nodes():
    source = viz.compare("scaled_dot_product_attention", (1, 2, 3, 4)).source
    assert "ScaledDotProductAttention" in source and "saved: logsumexp" in source
    assert "#c9ecc9" in source                      # the fused style


# ----- attention --------------------------------------------------------------------------
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "causal", "dead rows",
                                       "float dead rows"])
def test_attention_matches_torch(impl, mask_kind):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s) for s in [(2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)])
    options = {}
    if mask_kind == "bool" or mask_kind == "dead rows":
        mask = rng.random((4, 6)) > 0.3
        if mask_kind == "dead rows":
            mask[1] = False                      # a query that may attend to nothing
        options["attn_mask"] = mask
    elif mask_kind in ("float", "float dead rows"):
        options["attn_mask"] = rng.standard_normal((3, 4, 6))
        if mask_kind == "float dead rows":       # -inf everywhere: zeros, zero gradients
            options["attn_mask"][1, 2] = -np.inf
    elif mask_kind == "causal":
        options["is_causal"] = True
    ours, theirs = leaves(q, k, v), torch_leaves(q, k, v)
    out = F.scaled_dot_product_attention(*ours, impl=impl, scale=0.7, **options)
    t_options = {key: torch.tensor(m) if key == "attn_mask" else m
                 for key, m in options.items()}
    t_out = TF.scaled_dot_product_attention(*theirs, scale=0.7, **t_options)
    assert_close(out.data, t_out)
    backward_both(out, t_out, rng)
    for a, b in zip(ours, theirs):
        assert_close(a.grad, b.grad)


@pytest.mark.parametrize("impl", IMPLS)
def test_attention_float_mask_gradient_and_gqa_match_torch(impl):
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(s) for s in [(2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 3)])
    mask = rng.standard_normal((4, 3, 6))
    ours, theirs = leaves(q, k, v, mask), torch_leaves(q, k, v, mask)
    out = F.scaled_dot_product_attention(*ours[:3], attn_mask=ours[3], enable_gqa=True,
                                         impl=impl)
    t_out = TF.scaled_dot_product_attention(*theirs[:3], attn_mask=theirs[3],
                                            enable_gqa=True)
    assert_close(out.data, t_out)
    backward_both(out, t_out, rng)
    for a, b in zip(ours, theirs):
        assert_close(a.grad, b.grad)


def test_attention_dropout_same_mask_both_ways_and_in_backward():
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 5, 4)) for _ in range(3))
    results = []
    for impl in IMPLS:
        mg.manual_seed(7)
        ours = leaves(q, k, v)
        out = F.scaled_dot_product_attention(*ours, dropout_p=0.4, impl=impl)
        out.sum().backward()
        results.append([out.data] + [t.grad for t in ours])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, atol=1e-12)

    def dropped(*t):
        mg.manual_seed(7)                        # the same seed: the same mask each call
        return F.scaled_dot_product_attention(*t, dropout_p=0.4)

    assert mg.gradcheck(dropped, leaves(q, k, v))


@pytest.mark.parametrize("impl", IMPLS)
def test_attention_dropout_one_gives_torchs_zeros(impl):
    # p = 1 drops every probability: zeros out and zero gradients, as torch's (no 1 / 0)
    rng = np.random.default_rng(6)
    data = [rng.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 2))]
    ours, theirs = leaves(*data), torch_leaves(*data)
    out = F.scaled_dot_product_attention(*ours, dropout_p=1.0, impl=impl)
    t_out = TF.scaled_dot_product_attention(*theirs, dropout_p=1.0)
    assert_close(out.data, t_out)
    backward_both(out, t_out, rng)
    for a, b in zip(ours, theirs):
        assert_close(a.grad, b.grad)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_attention_dropout_draws_torchs_mask(impl, dtype):
    # torch's CPU attention drops its probabilities out as F.dropout does: one seed gives
    # torch's output and gradients (key and value broadcast over the heads, a float mask),
    # and leaves the generator where torch's leaves it
    rng = np.random.default_rng(8)
    data = [rng.standard_normal(s).astype(dtype) for s in ((2, 2, 3, 4), (2, 1, 5, 4),
                                                            (2, 1, 5, 3), (3, 5))]
    ours, theirs = leaves(*data[:3]), torch_leaves(*data[:3])
    mg.manual_seed(5)
    torch.manual_seed(5)
    out = F.scaled_dot_product_attention(*ours, attn_mask=mg.tensor(data[3]), dropout_p=0.3,
                                         impl=impl)
    t_out = TF.scaled_dot_product_attention(*theirs, attn_mask=torch.tensor(data[3]),
                                            dropout_p=0.3)
    assert mg.rand(3).tolist() == torch.rand(3).tolist()
    tol = 1e-12 if dtype == "float64" else 2e-6
    assert_close(out.data, t_out, tol)
    backward_both(out, t_out, rng)
    for a, b in zip(ours, theirs):
        assert_close(a.grad, b.grad, tol)


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_attention_gradcheck_over_drawn_shapes(data):
    batch = data.draw(shapes(0, 2, 3))
    length, keys, dim, dim_v = (data.draw(st.integers(1, 4)) for _ in range(4))
    q = data.draw(arrays(batch + (length, dim)))
    k = data.draw(arrays(batch + (keys, dim)))
    v = data.draw(arrays(batch + (keys, dim_v)))
    causal = data.draw(st.booleans())
    for impl in IMPLS:
        assert mg.gradcheck(lambda *t, impl=impl: F.scaled_dot_product_attention(
            *t, is_causal=causal, impl=impl), leaves(q, k, v))


@pytest.mark.parametrize("impl", IMPLS)
def test_attention_zero_size(impl):
    for shapes_ in ([(0, 3, 4), (0, 5, 4), (0, 5, 2)], [(2, 0, 4), (2, 5, 4), (2, 5, 2)],
                    [(2, 3, 4), (2, 0, 4), (2, 0, 2)]):
        arrays_ = [np.ones(s) for s in shapes_]
        ours, theirs = leaves(*arrays_), torch_leaves(*arrays_)
        out = F.scaled_dot_product_attention(*ours, impl=impl)
        t_out = TF.scaled_dot_product_attention(*theirs)
        assert out.shape == tuple(t_out.shape)
        assert_close(out.data, t_out)
        out.sum().backward()
        t_out.sum().backward()
        for a, b in zip(ours, theirs):
            assert_close(a.grad, b.grad)


@pytest.mark.parametrize("mask", ["causal", "float"])
@pytest.mark.parametrize("dtype, tol", [("float16", 4e-3), ("bfloat16", 3e-2),
                                        ("float32", 1e-5)])
@pytest.mark.parametrize("impl", IMPLS)
def test_attention_keeps_a_low_precision_dtype_and_matches_torch(impl, dtype, tol, mask):
    """Output and every gradient (the float mask's too) in the inputs' dtype; the fused
    node computes half precision in float32, the composite graph in the dtype."""
    rng = np.random.default_rng(5)
    data = [rng.standard_normal(s) for s in ((2, 2, 5, 4), (2, 2, 6, 4), (2, 2, 6, 3))]
    extra = {"is_causal": True} if mask == "causal" else {}
    if mask == "float":
        data.append(rng.standard_normal((5, 6)))
    ours = [mg.tensor(a, dtype=dtype, requires_grad=True) for a in data]
    theirs = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in data]
    out = F.scaled_dot_product_attention(*ours[:3], *ours[3:], impl=impl, **extra)
    t_out = TF.scaled_dot_product_attention(*theirs[:3], *theirs[3:], **extra)
    g = rng.standard_normal(out.shape)
    out.backward(mg.tensor(g, dtype=dtype))
    t_out.backward(torch.tensor(g, dtype=getattr(torch, dtype)))
    assert str(out.dtype) == f"torch.{dtype}"
    np.testing.assert_allclose(np.asarray(out.data, np.float64), t_out.double().detach(),
                               rtol=tol, atol=tol)
    for a, b in zip(ours, theirs):
        assert str(a.grad.dtype) == f"torch.{dtype}"
        np.testing.assert_allclose(np.asarray(a.grad, np.float64), b.grad.double(),
                                   rtol=4 * tol, atol=4 * tol)


@pytest.mark.parametrize("call, words", [
    (lambda q: F.scaled_dot_product_attention(q, q[:, :2, :3], q), "key must be"),
    (lambda q: F.scaled_dot_product_attention(q, q, q, dropout_p=1.5), "dropout_p"),
    (lambda q: F.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((3, 3), bool),
                                              is_causal=True), "not both"),
    (lambda q: F.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((2, 2), bool)),
     "attn_mask of shape"),
    (lambda q: F.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((5, 2, 3, 3), bool)),
     r"attn_mask of shape \(5, 2, 3, 3\) does not broadcast to the scores' shape \(2, 3, 3\)"),
    (lambda q: F.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((3, 3), np.int64)),
     "attn_mask must be bool"),
    (lambda q: F.scaled_dot_product_attention(q, q, q, impl="flash"), "impl"),
])
def test_attention_bad_arguments(call, words):
    with pytest.raises((TypeError, ValueError), match=words):
        call(mg.tensor(np.ones((2, 3, 4))))


# ----- softmax, log_softmax, cross-entropy ----------------------------------------------
@settings(max_examples=20, deadline=None)
@given(st.data())
def test_softmax_family_gradcheck_over_drawn_shapes(data):
    shape = data.draw(shapes(1, 3, 4))
    x = data.draw(arrays(shape))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    for fn in (F.softmax, F.log_softmax):
        for impl in IMPLS:
            assert mg.gradcheck(lambda t, fn=fn, impl=impl: fn(t, dim=dim, impl=impl),
                                leaves(x))
    logits = x.reshape(-1, shape[-1])
    target = data.draw(st.lists(st.integers(0, shape[-1] - 1), min_size=len(logits),
                                max_size=len(logits)))
    for reduction in ("mean", "sum", "none"):
        for impl in IMPLS:
            assert mg.gradcheck(lambda t, r=reduction, impl=impl: F.cross_entropy(
                t, np.array(target), reduction=r, impl=impl), leaves(logits))


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_nonfinite_rows_and_zero_size_as_torch(fn, impl):
    x = np.array([[-np.inf] * 3, [1.0, np.inf, 2.0], [1.0, np.nan, 2.0], [-np.inf, 0.0, 1.0],
                  [1e308, -1e308, 0.0]])
    ours = getattr(F, fn)(mg.tensor(x), dim=-1, impl=impl)
    theirs = getattr(torch, fn)(torch.tensor(x), dim=-1)
    np.testing.assert_array_equal(np.isnan(ours.data), theirs.isnan().numpy())
    assert_close(ours.data, theirs)
    for shape, dim in (((0, 3), -1), ((3, 0), -1), ((3, 0), 0)):
        out = getattr(F, fn)(mg.tensor(np.ones(shape), requires_grad=True), dim=dim, impl=impl)
        assert out.shape == shape


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_ignore_index_and_masked_logits_as_torch(impl, reduction):
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((2, 4, 5))
    logits[0, 1, 0] = -np.inf                    # a masked class, the target of no row
    target = rng.integers(1, 5, (2, 4))
    target[1, 2] = -100
    ours, theirs = leaves(logits), torch_leaves(logits)
    out = F.cross_entropy(ours[0].reshape(-1, 5), target.reshape(-1), reduction=reduction,
                          impl=impl)
    t_out = TF.cross_entropy(theirs[0].reshape(-1, 5), torch.tensor(target.reshape(-1)),
                             reduction=reduction)
    assert_close(out.data.reshape(-1), t_out.reshape(-1))
    backward_both(out, t_out.reshape(out.shape), rng)
    assert_close(ours[0].grad, theirs[0].grad)


@pytest.mark.parametrize("impl", IMPLS)
def test_cross_entropy_all_ignored_is_nan_with_zero_gradients(impl):
    x = mg.tensor(np.ones((3, 4)), requires_grad=True)
    loss = F.cross_entropy(x, np.full(3, -100), impl=impl)
    loss.backward()
    assert math.isnan(float(loss.data)) and not x.grad.numpy().any()


# ----- erf ----------------------------------------------------------------------------------
def ulps(got, want):
    return np.abs(got.astype(np.float64) - want.astype(np.float64)) / np.spacing(
        np.abs(want)).astype(np.float64).clip(5e-324)


def test_erf_within_one_ulp_of_math_erf():
    edges = [np.nextafter(b, d) for b in (1.0, 2.0, 3.5, 6.0) for d in (0, 10)]
    x = np.concatenate([np.linspace(-7, 7, 200_001), np.geomspace(5e-324, 1e-3, 2000),
                        -np.geomspace(5e-324, 1e-3, 2000), edges, [0.0, -0.0, 1, 2, 3.5, 6]])
    want = np.array([math.erf(v) for v in x])
    assert ulps(backend.erf(x), want).max() <= 1
    x32 = x.astype(np.float32)
    want32 = np.array([math.erf(v) for v in x32.astype(np.float64)]).astype(np.float32)
    got32 = backend.erf(x32)
    assert got32.dtype == np.float32 and ulps(got32, want32).max() <= 1


def test_erf_special_values_as_torch():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324])
    got, want = backend.erf(x), torch.erf(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert isinstance(backend.erf(np.array(0.5)), np.ndarray)        # 0-d stays an array
