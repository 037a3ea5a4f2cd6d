"""RMSNorm as real models write it: Gemma's offset and the "llama" / "gemma" / "none"
casting modes, and the bfloat16 Tensor dtype they mostly run in.

The reference is a PyTorch re-implementation of Hugging Face's formulas (LlamaRMSNorm,
GemmaRMSNorm, and Liger-Kernel's "none"), run in the same low dtype and in float64.
"""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import dtypes, kernels, nn
from microgradnorm.kernels import CASTINGS, blocked, reference

torch = pytest.importorskip("torch")

IMPLS = ("fused", "composite")
EPS = 1e-6
LOW = [pytest.param("float16", id="float16"),
       pytest.param("bfloat16", id="bfloat16",
                    marks=pytest.mark.skipif(not dtypes.has_bfloat16(),
                                             reason="bfloat16 needs ml_dtypes"))]
MANTISSA_BITS = {"float16": 10, "bfloat16": 7}
# "none" rounds mean(x²), rstd, x̂ and y each to the low dtype: a one-ulp difference in
# rstd between two orders of the same sum moves y by up to 2 ulps. The other modes round
# once (gemma) or twice with float32 statistics (llama): 1 ulp.
ULPS = {"llama": 1, "gemma": 1, "none": 2}


def hf_rms_norm(x, weight, eps, offset, casting):
    """Hugging Face's RMSNorm, by casting mode, on torch tensors."""
    dtype = x.dtype
    if casting == "none":
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (offset + weight)
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    if casting == "llama":
        return (offset + weight) * h.to(dtype)                 # LlamaRMSNorm
    return (h * (offset + weight.float())).to(dtype)           # GemmaRMSNorm


def to_torch(array, dtype):
    return torch.tensor(array.astype(np.float64)).to(getattr(torch, dtype))


def from_torch(t):
    return t.detach().double().numpy()


def ulps(got, expected, dtype):
    """|got - expected| in units of the last place of ``dtype`` at expected's magnitude."""
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    tiny = 2.0 ** (-14 if dtype == "float16" else -126)
    exponent = np.floor(np.log2(np.maximum(np.abs(expected), tiny)))
    return np.abs(got - expected) / 2.0 ** (exponent - MANTISSA_BITS[dtype])


def draw(dtype, rows=6, cols=48, seed=0, offset=0.0, weight_dtype=None):
    rng = np.random.default_rng(seed)
    x = (0.5 + rng.standard_normal((rows, cols))).astype(dtypes.as_dtype(dtype))
    w = (1 - offset + 0.3 * rng.standard_normal(cols)).astype(
        dtypes.as_dtype(weight_dtype or dtype))
    dy = rng.standard_normal((rows, cols))
    return x, w, dy


def mg_side(impl, x, w, dy, offset, casting):
    xt, wt = mg.tensor(x, requires_grad=True), mg.tensor(w, requires_grad=True)
    y = F.rms_norm(xt, x.shape[-1], wt, EPS, impl, offset=offset, casting=casting)
    y.backward(dy.astype(y.dtype))
    return y, xt.grad, wt.grad


def torch_side(x, w, dy, offset, casting, dtype, weight_dtype=None):
    xt = to_torch(x, dtype).requires_grad_()
    wt = to_torch(w, weight_dtype or dtype).requires_grad_()
    y = hf_rms_norm(xt, wt, EPS, offset, casting)
    y.backward(torch.tensor(dy).to(y.dtype))
    return y, xt.grad, wt.grad


@pytest.mark.parametrize("offset", [0.0, 1.0])
@pytest.mark.parametrize("casting", CASTINGS)
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", LOW)
def test_matches_hugging_face_formula_in_the_low_dtype(dtype, impl, casting, offset):
    x, w, dy = draw(dtype, offset=offset)
    y, dx, dw = mg_side(impl, x, w, dy, offset, casting)
    ty, tdx, tdw = torch_side(x, w, dy, offset, casting, dtype)
    assert y.dtype == dtypes.as_dtype(dtype) and str(ty.dtype).endswith(dtype)
    assert dx.dtype == x.dtype and dw.dtype == w.dtype
    # The forward rounds like the formula: at most 1 unit in the last place apart.
    assert ulps(y.detach().numpy(), from_torch(ty), dtype).max() <= ULPS[casting]
    # Gradients: same formula, other rounding order; within a few units of the scale.
    for got, expected in ((dx, tdx), (dw, tdw)):
        expected = from_torch(expected)
        scale = np.abs(expected).max()
        tol = 2.0 ** -MANTISSA_BITS[dtype] * (8 if got is dx else 8 * np.sqrt(x.shape[0]))
        assert np.abs(got.astype(np.float64) - expected).max() <= tol * scale


@pytest.mark.parametrize("casting", CASTINGS)
@pytest.mark.parametrize("dtype", LOW)
def test_fused_and_composite_agree_within_an_ulp_or_two(dtype, casting):
    x, w, dy = draw(dtype, rows=32, cols=96, seed=1, offset=1.0)
    fused = mg_side("fused", x, w, dy, 1.0, casting)
    composite = mg_side("composite", x, w, dy, 1.0, casting)
    assert ulps(fused[0].detach().numpy(), composite[0].detach().numpy(),
                dtype).max() <= ULPS[casting]
    assert fused[0].dtype == composite[0].dtype


@pytest.mark.parametrize("casting", CASTINGS)
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", LOW)
def test_close_to_float64_formula(dtype, impl, casting):
    x, w, dy = draw(dtype, offset=1.0, seed=2)
    y, dx, dw = mg_side(impl, x, w, dy, 1.0, casting)
    ty, tdx, tdw = torch_side(x, w, dy, 1.0, casting, "float64")
    rel = (np.abs(y.detach().numpy().astype(np.float64) - from_torch(ty))
           / np.abs(from_torch(ty)).max())
    assert rel.max() <= 4 * 2.0 ** -MANTISSA_BITS[dtype]


@pytest.mark.parametrize("casting", ["llama", "gemma"])
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", LOW)
def test_float32_weight_with_half_input_gives_hugging_faces_dtype(dtype, impl, casting):
    x, w, dy = draw(dtype, weight_dtype="float32", seed=3)
    y, dx, dw = mg_side(impl, x, w, dy, 0.0, casting)
    ty, tdx, tdw = torch_side(x, w, dy, 0.0, casting, dtype, weight_dtype="float32")
    expected_dtype = np.float32 if casting == "llama" else dtypes.as_dtype(dtype)
    assert y.dtype == expected_dtype and str(ty.dtype).endswith(str(np.dtype(expected_dtype)))
    assert dx.dtype == x.dtype and dw.dtype == np.float32
    if casting == "gemma":                               # rounded once to x's dtype
        assert ulps(y.detach().numpy(), from_torch(ty), dtype).max() <= 1
    else:                                                # w (float32) · x̂ rounded to x's dtype
        np.testing.assert_allclose(y.detach().numpy(), from_torch(ty),
                                   rtol=2 ** -MANTISSA_BITS[dtype])
    np.testing.assert_allclose(dw, from_torch(tdw),
                               atol=2.0 ** -MANTISSA_BITS[dtype] * 8 * np.abs(dw).max())


@pytest.mark.parametrize("dtype", LOW)
def test_mixing_where_hugging_face_defines_nothing_is_an_error(dtype):
    x, w, _ = draw(dtype, weight_dtype="float32")
    xt, wt = mg.tensor(x), mg.tensor(w)
    with pytest.raises(TypeError, match="casting 'llama' or 'gemma'"):
        F.rms_norm(xt, x.shape[-1], wt, casting="none")
    with pytest.raises(TypeError, match="dtype"):
        F.layer_norm(xt, x.shape[-1], wt)
    # a float64 weight beside half x: no convention's, but torch's composite, as torch's
    with pytest.warns(UserWarning, match="weight dtype torch.float64"):
        y = F.rms_norm(xt, x.shape[-1], mg.tensor(w.astype(np.float64)))
    tx = torch.tensor(x.astype(np.float32)).to(getattr(torch, dtype))
    expected = torch.nn.functional.rms_norm(tx, x.shape[-1:], torch.tensor(w.astype(np.float64)))
    assert y.dtype == xt.dtype
    np.testing.assert_array_equal(y.float().numpy(), expected.float().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("casting", CASTINGS)
def test_float32_and_float64_results_are_bitwise_unchanged(dtype, casting):
    x, w, dy = draw(dtype, rows=9, cols=40, seed=4)
    default = kernels.for_array(x)                                  # the default CPU kernels
    y_kernel, rstd = default.rms_norm_forward(x, w, EPS)
    dx_kernel, dw_kernel = default.rms_norm_backward(dy.astype(dtype), x, w, rstd)
    y, dx, dw = mg_side("fused", x, w, dy, 0.0, casting)
    np.testing.assert_array_equal(y.detach().numpy(), y_kernel)
    np.testing.assert_array_equal(dx, dx_kernel)
    np.testing.assert_array_equal(dw, dw_kernel)
    xt, wt = mg.tensor(x), mg.tensor(w)
    plain = xt / ((xt * xt).mean(-1, keepdims=True) + EPS).sqrt() * wt   # the textbook graph
    composite = F.rms_norm(xt, 40, wt, EPS, "composite", casting=casting)
    np.testing.assert_array_equal(composite.numpy(), plain.numpy())
    assert not {"Cast", "ToCopy"} & set(mg.graph_stats(composite).by_op)


@pytest.mark.parametrize("casting, casts", [("llama", 2), ("gemma", 3), ("none", 0)])
@pytest.mark.parametrize("dtype", LOW)
def test_composite_graph_shows_each_cast(dtype, casting, casts):
    x, w, _ = draw(dtype)
    y = F.rms_norm(mg.tensor(x, requires_grad=True), x.shape[-1],
                   mg.tensor(w, requires_grad=True), impl="composite", casting=casting)
    assert mg.graph_stats(y).by_op.get("ToCopy", 0) == casts        # torch's ToCopyBackward0
    fused = F.rms_norm(mg.tensor(x, requires_grad=True), x.shape[-1],
                       mg.tensor(w, requires_grad=True), casting=casting)
    assert mg.graph_stats(fused).by_op == {"RMSNorm": 1}


def test_float16_none_composite_overflows_where_fused_does_not():
    x = np.full((2, 16), 300.0, np.float16)                   # x² = 90000 > 65504
    with np.errstate(over="ignore"):                          # the overflow under test
        composite = F.rms_norm(mg.tensor(x), 16, impl="composite", casting="none").numpy()
    fused = F.rms_norm(mg.tensor(x), 16, casting="none").numpy()
    llama = F.rms_norm(mg.tensor(x), 16, impl="composite").numpy()
    assert np.all(composite == 0)              # x / sqrt(inf): zeros, without a word
    np.testing.assert_allclose(fused.astype(np.float64), 1.0, rtol=1e-3)
    np.testing.assert_allclose(llama.astype(np.float64), 1.0, rtol=1e-3)


@pytest.mark.parametrize("impl", IMPLS)
def test_residual_form_takes_offset_and_casting(impl):
    x, w, _ = draw("float16", offset=1.0, seed=5)
    residual = draw("float16", seed=6)[0]
    y, s = F.add_rms_norm(mg.tensor(x), mg.tensor(residual), x.shape[-1], mg.tensor(w),
                          impl=impl, offset=1.0, casting="gemma")
    alone = F.rms_norm(mg.tensor(x + residual), x.shape[-1], mg.tensor(w), impl=impl,
                       offset=1.0, casting="gemma")
    np.testing.assert_array_equal(s.numpy(), x + residual)
    assert ulps(y.numpy(), alone.numpy(), "float16").max() <= 1


def test_gemma_module_starts_at_identity_weight():
    gemma = nn.RMSNorm(8, offset=1.0, casting="gemma")
    plain = nn.RMSNorm(8)
    np.testing.assert_array_equal(gemma.weight.detach().numpy(), np.zeros(8))
    x = mg.tensor(np.random.default_rng(7).standard_normal((3, 8)), dtype=mg.float32)
    np.testing.assert_array_equal(gemma(x).detach().numpy(), plain(x).detach().numpy())
    assert "offset=1.0" in repr(gemma) and "casting='gemma'" in repr(gemma)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"casting": "mistral"}, ValueError, "casting must be one of"),
    ({"casting": None}, ValueError, "casting must be one of"),
    ({"casting": ["gemma"]}, ValueError, "casting must be one of"),
    ({"offset": "1"}, TypeError, "offset must be a real number"),
    ({"offset": True}, TypeError, "offset must be a real number"),
    ({"offset": float("nan")}, ValueError, "offset must be a finite number"),
    ({"offset": float("inf")}, ValueError, "offset must be a finite number"),
])
def test_bad_casting_or_offset_is_a_clear_error(kwargs, error, match):
    """The public functions check the conventions: the kernels take them as given."""
    x = mg.tensor(np.ones((2, 4)))
    with pytest.raises(error, match=match):
        F.rms_norm(x, 4, mg.tensor(np.ones(4)), **kwargs)
    with pytest.raises(error, match=match):
        F.add_rms_norm(x, x, 4, mg.tensor(np.ones(4)), **kwargs)


def test_offset_without_weight_is_an_error():
    with pytest.raises(ValueError, match="needs a weight"):
        F.rms_norm(mg.tensor(np.ones((2, 4))), 4, offset=1.0)
    with pytest.raises(ValueError, match="elementwise_affine"):
        nn.RMSNorm(4, offset=1.0, elementwise_affine=False)


@pytest.mark.parametrize("module", [reference, blocked], ids=["reference", "blocked"])
def test_every_casting_mode_is_the_same_arithmetic_for_wide_dtypes(module):
    x, w, dy = draw("float32", seed=8)
    y, rstd = module.rms_norm_forward(x, w, EPS, offset=0.5, casting="gemma")
    dx, dw = module.rms_norm_backward(dy.astype(np.float32), x, w, rstd, offset=0.5,
                                      casting="gemma")
    for casting in ("llama", "none"):
        y_other, rstd_other = module.rms_norm_forward(x, w, EPS, offset=0.5, casting=casting)
        grads = module.rms_norm_backward(dy.astype(np.float32), x, w, rstd, offset=0.5,
                                         casting=casting)
        for a, b in zip((y_other, rstd_other, *grads), (y, rstd, dx, dw)):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(y, module.rms_norm_forward(x, w + np.float32(0.5), EPS)[0])


@pytest.mark.parametrize("casting", CASTINGS)
@pytest.mark.parametrize("impl", IMPLS)
def test_gradcheck_with_offset_in_float64(impl, casting):
    rng = np.random.default_rng(9)
    x = mg.tensor(rng.standard_normal((3, 7)), requires_grad=True)
    w = mg.tensor(0.2 * rng.standard_normal(7), requires_grad=True)
    assert mg.gradcheck(lambda a, b: F.rms_norm(a, 7, b, 1e-6, impl, offset=1.0,
                                                casting=casting), [x, w])
