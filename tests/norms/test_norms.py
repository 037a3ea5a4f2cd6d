"""The functional norms: F.layer_norm, F.rms_norm, F.batch_norm, F.add_layer_norm and
F.add_rms_norm, each with impl="fused" and impl="composite".

Checked four ways: against PyTorch (forward, every gradient, running statistics), fused
against composite over hypothesis-drawn shapes and dtypes, finite-difference gradcheck, and
the closed forms of docs/derivations.md (Jacobians §4, centering identity §5, numerics §6,
saved bytes §7, worked example §9).
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import dtypes
from microgradnorm.norms import NORMS

# bfloat16 (ml_dtypes, optional) joins every low-precision family when it is installed.
BFLOAT16 = pytest.param(dtypes.bfloat16, id="bfloat16",
                        marks=pytest.mark.skipif(not dtypes.has_bfloat16(),
                                                 reason="bfloat16 needs ml_dtypes"))

IMPLS = ("fused", "composite")
ROW_NORMS = ("layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm")
DEFAULT_EPS = {"layer_norm": 1e-5, "add_layer_norm": 1e-5, "rms_norm": 1e-6,
               "add_rms_norm": 1e-6, "batch_norm": 1e-5}
FLOAT64_TOL = 1e-10


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


# ----- building inputs and calling the norms ------------------------------------------------
def has_bias(norm):
    return norm in ("layer_norm", "add_layer_norm", "batch_norm")


def affine_choices(norm):
    return ("none", "weight", "bias", "both") if has_bias(norm) else ("none", "weight")


def make_arrays(norm, shape, param_shape, affine, seed, dtype=np.float64):
    """Random float64 inputs {name: array} (weight far from 1, bias far from 0), cast."""
    rng = np.random.default_rng(seed)
    arrays = {"x": rng.standard_normal(shape)}
    if norm.startswith("add_"):
        arrays["residual"] = rng.standard_normal(shape)
    if affine in ("weight", "both"):
        arrays["weight"] = 1 + 0.5 * rng.standard_normal(param_shape)
    if affine in ("bias", "both"):
        arrays["bias"] = 0.5 * rng.standard_normal(param_shape)
    return {name: a.astype(dtype) for name, a in arrays.items()}


def tensors_of(arrays):
    return {name: mg.tensor(a.copy(), requires_grad=True) for name, a in arrays.items()}


def output_count(norm):
    return 2 if norm.startswith("add_") else 1


def upstream_grads(norm, shape, seed, dtype=np.float64):
    rng = np.random.default_rng(seed + 1000)
    return [rng.standard_normal(shape).astype(dtype) for _ in range(output_count(norm))]


def call_row_norm(norm, impl, t, normalized_shape, eps):
    """Calls ``norm`` on {name: Tensor}; returns a tuple of outputs."""
    x, weight, bias = t["x"], t.get("weight"), t.get("bias")
    if norm == "layer_norm":
        return (F.layer_norm(x, normalized_shape, weight, bias, eps=eps, impl=impl),)
    if norm == "rms_norm":
        return (F.rms_norm(x, normalized_shape, weight, eps=eps, impl=impl),)
    if norm == "add_layer_norm":
        return F.add_layer_norm(x, t["residual"], normalized_shape, weight, bias, eps=eps,
                                impl=impl)
    return F.add_rms_norm(x, t["residual"], normalized_shape, weight, eps=eps, impl=impl)


def mg_row_norm(norm, impl, arrays, normalized_shape, eps, upstream):
    """(outputs as arrays, {name: gradient array}) of one call and one backward."""
    t = tensors_of(arrays)
    outputs = call_row_norm(norm, impl, t, normalized_shape, eps)
    grads = mg.grad(outputs, list(t.values()), upstream)
    return [o.data for o in outputs], dict(zip(t, grads))


def torch_row_norm(torch, norm, arrays, normalized_shape, eps, upstream):
    tf = torch.nn.functional
    t = {name: torch.tensor(a, requires_grad=True) for name, a in arrays.items()}
    s = t["x"] + t["residual"] if norm.startswith("add_") else t["x"]
    if norm in ("layer_norm", "add_layer_norm"):
        y = tf.layer_norm(s, normalized_shape, t.get("weight"), t.get("bias"), eps)
    else:
        y = tf.rms_norm(s, normalized_shape, t.get("weight"), eps=eps)
    outputs = (y, s) if norm.startswith("add_") else (y,)
    grads = torch.autograd.grad(outputs, list(t.values()),
                                [torch.tensor(g) for g in upstream])
    return [o.detach().numpy() for o in outputs], {n: g.numpy() for n, g in zip(t, grads)}


def assert_close_all(actual, expected, tol, what=""):
    """Every named array of ``actual`` within ``tol`` (absolute) of ``expected``."""
    assert set(actual) == set(expected)
    for name in expected:
        a, e = actual[name], expected[name]
        assert a is not None, f"{what}{name}: no gradient"
        assert a.shape == e.shape, f"{what}{name}: shape {a.shape} != {e.shape}"
        diff = np.max(np.abs(a.astype(np.float64) - e.astype(np.float64)), initial=0.0)
        assert diff <= tol, f"{what}{name}: max |difference| {diff:.3g} > {tol:g}"


def as_named(outputs, grads):
    named = {f"output {i}": o for i, o in enumerate(outputs)}
    named.update({f"grad {n}": g for n, g in grads.items()})
    return named


# ----- 1. parity with PyTorch: LayerNorm, RMSNorm and the residual forms --------------------
ROW_SHAPES = [
    ((5, 8), 8),                      # 2-D, normalized_shape given as an int
    ((5, 8), (8,)),
    ((2, 3, 4), (4,)),                # 3-D
    ((2, 3, 4), (3, 4)),
    ((2, 3, 4, 5), (4, 5)),           # 4-D, multi-dim normalized_shape
    ((2, 3, 4, 5), (3, 4, 5)),
    ((2, 3, 4, 5), (2, 3, 4, 5)),     # everything normalized
    ((7,), 7),                        # a single row
    ((6, 1), (1,)),                   # D = 1
    ((1, 6), (6,)),                   # batch 1
    ((3, 1, 6), (6,)),                # sequence 1
    ((1, 1, 1), (1,)),
]
ROW_CASES = [(norm, affine) for norm in ROW_NORMS for affine in affine_choices(norm)]


def param_shape_of(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape, normalized_shape", ROW_SHAPES, ids=str)
@pytest.mark.parametrize("norm, affine", ROW_CASES, ids="-".join)
def test_row_norm_matches_torch_forward_and_all_grads(torch, norm, affine, shape,
                                                      normalized_shape, impl):
    arrays = make_arrays(norm, shape, param_shape_of(normalized_shape), affine, seed=len(shape))
    upstream = upstream_grads(norm, shape, seed=3)
    eps = DEFAULT_EPS[norm]
    ours = mg_row_norm(norm, impl, arrays, normalized_shape, eps, upstream)
    ref = torch_row_norm(torch, norm, arrays, param_shape_of(normalized_shape), eps, upstream)
    assert_close_all(as_named(*ours), as_named(*ref), FLOAT64_TOL)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("eps", [0.0, 0.3, 2.0])
@pytest.mark.parametrize("norm", ROW_NORMS)
def test_row_norm_eps_sits_inside_the_sqrt_like_torch(torch, norm, eps, impl):
    # A large eps next to a small variance makes any other eps placement visible.
    arrays = make_arrays(norm, (4, 6), (6,), "both" if has_bias(norm) else "weight", seed=5)
    arrays["x"] *= 0.3
    upstream = upstream_grads(norm, (4, 6), seed=5)
    ours = mg_row_norm(norm, impl, arrays, 6, eps, upstream)
    ref = torch_row_norm(torch, norm, arrays, (6,), eps, upstream)
    assert_close_all(as_named(*ours), as_named(*ref), FLOAT64_TOL)


def test_rms_norm_default_eps_is_1e_minus_6_not_torchs(torch):
    x = np.random.default_rng(0).standard_normal((3, 4)) * 1e-3
    ours = F.rms_norm(mg.tensor(x), 4).data
    expected = torch.nn.functional.rms_norm(torch.tensor(x), (4,), eps=1e-6).numpy()
    assert np.max(np.abs(ours - expected)) <= FLOAT64_TOL


# ----- 1. parity with PyTorch: BatchNorm ----------------------------------------------------
BATCH_SHAPES = [(8, 3), (4, 3, 5), (1, 3, 5), (2, 2, 3, 4)]
BATCH_MODES = [(True, "array"), (True, "tensor"), (True, None),
               (False, "array"), (False, "tensor")]


def make_running(channels, seed):
    rng = np.random.default_rng(seed + 77)
    return rng.standard_normal(channels), rng.uniform(0.5, 2.0, channels)


def wrap_running(kind, array):
    if kind is None:
        return None
    return mg.tensor(array.copy()) if kind == "tensor" else array.copy()


def running_values(stat):
    return None if stat is None else (stat.data if isinstance(stat, mg.Tensor) else stat)


def mg_batch_norm(impl, arrays, running, training, momentum, eps, upstream):
    t = tensors_of(arrays)
    y = F.batch_norm(t["x"], running[0], running[1], t.get("weight"), t.get("bias"),
                     training=training, momentum=momentum, eps=eps, impl=impl)
    grads = mg.grad(y, list(t.values()), upstream[0])
    return [y.data], dict(zip(t, grads))


def torch_batch_norm(torch, arrays, running, training, momentum, eps, upstream):
    t = {name: torch.tensor(a, requires_grad=True) for name, a in arrays.items()}
    y = torch.nn.functional.batch_norm(t["x"], running[0], running[1], t.get("weight"),
                                       t.get("bias"), training=training, momentum=momentum,
                                       eps=eps)
    grads = torch.autograd.grad(y, list(t.values()), torch.tensor(upstream[0]))
    return [y.detach().numpy()], {n: g.numpy() for n, g in zip(t, grads)}


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("momentum", [0.1, 0.3])
@pytest.mark.parametrize("training, running_kind", BATCH_MODES, ids=str)
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
@pytest.mark.parametrize("shape", BATCH_SHAPES, ids=str)
def test_batch_norm_matches_torch_forward_grads_and_running_stats(
        torch, shape, affine, training, running_kind, momentum, impl):
    arrays = make_arrays("batch_norm", shape, (shape[1],), affine, seed=len(shape))
    upstream = upstream_grads("batch_norm", shape, seed=4)
    mean0, var0 = make_running(shape[1], seed=len(shape))
    ours_running = (wrap_running(running_kind, mean0), wrap_running(running_kind, var0))
    torch_running = ((None, None) if running_kind is None
                     else (torch.tensor(mean0.copy()), torch.tensor(var0.copy())))
    ours = mg_batch_norm(impl, arrays, ours_running, training, momentum, 1e-5, upstream)
    ref = torch_batch_norm(torch, arrays, torch_running, training, momentum, 1e-5, upstream)
    assert_close_all(as_named(*ours), as_named(*ref), FLOAT64_TOL)
    if running_kind is not None:
        for stat, expected in zip(ours_running, torch_running):
            assert np.max(np.abs(running_values(stat) - expected.numpy())) <= FLOAT64_TOL
        if not training:
            assert np.array_equal(running_values(ours_running[0]), mean0)
            assert np.array_equal(running_values(ours_running[1]), var0)


@pytest.mark.parametrize("impl", IMPLS)
def test_batch_norm_running_stats_match_worked_example(impl):
    # derivations.md §9: [1, 2, 3, 4] as a (4, 1) batch, one step with momentum 0.1.
    running_mean, running_var = np.zeros(1), np.ones(1)
    x = mg.tensor([[1.0], [2.0], [3.0], [4.0]], requires_grad=True)
    y = F.batch_norm(x, running_mean, running_var, training=True, impl=impl)
    np.testing.assert_allclose(running_mean, [0.25], rtol=0, atol=1e-15)
    np.testing.assert_allclose(running_var, [0.9 + 0.1 * 5 / 3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(y.data.ravel(), [-1.3416354200, -0.4472118067, 0.4472118067,
                                                1.3416354200], rtol=0, atol=1e-9)


@pytest.mark.parametrize("impl", IMPLS)
def test_batch_norm_running_stat_tensor_is_updated_in_place(impl):
    running_mean = mg.tensor(np.zeros(3))
    running_var = mg.tensor(np.ones(3))
    buffers = running_mean.data, running_var.data
    x = mg.tensor(np.random.default_rng(1).standard_normal((6, 3)), requires_grad=True)
    F.batch_norm(x, running_mean, running_var, training=True, impl=impl)
    assert running_mean.data is buffers[0] and running_var.data is buffers[1]
    np.testing.assert_allclose(running_mean.data, 0.1 * x.data.mean(0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(running_var.data, 0.9 + 0.1 * x.data.var(0, ddof=1), rtol=0,
                               atol=1e-15)


# ----- 2. composite and fused agree ---------------------------------------------------------
@st.composite
def row_norm_cases(draw, max_side=6):
    """(shape, normalized_shape, affine, seed): 2-4 dims, sides 1..max_side."""
    ndim = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.integers(1, max_side), min_size=ndim, max_size=ndim)))
    normalized_dims = draw(st.integers(1, ndim))
    affine = draw(st.sampled_from(("none", "weight", "bias", "both")))
    seed = draw(st.integers(0, 2**31 - 1))
    return shape, shape[ndim - normalized_dims:], affine, seed


@st.composite
def batch_norm_cases(draw, min_dims=2, max_dims=4, max_side=6):
    """(shape, affine, training, running_kind, momentum, seed); training has n = N·L >= 2."""
    ndim = draw(st.integers(min_dims, max_dims))
    shape = tuple(draw(st.lists(st.integers(1, max_side), min_size=ndim, max_size=ndim)))
    per_channel = int(np.prod(shape)) // shape[1]
    training = draw(st.booleans()) if per_channel >= 2 else False
    running_kind = draw(st.sampled_from(("array", "tensor", None) if training
                                        else ("array", "tensor")))
    affine = draw(st.sampled_from(("none", "weight", "bias", "both")))
    momentum = draw(st.sampled_from((0.0, 0.1, 0.3, 1.0)))
    seed = draw(st.integers(0, 2**31 - 1))
    return shape, affine, training, running_kind, momentum, seed


def affine_for(norm, affine):
    # RMSNorm has no bias: its "bias" and "both" draws become "none" and "weight".
    if has_bias(norm):
        return affine
    return {"none": "none", "bias": "none", "weight": "weight", "both": "weight"}[affine]


def run_both_row_impls(norm, arrays, normalized_shape, upstream, eps):
    return {impl: mg_row_norm(norm, impl, arrays, normalized_shape, eps, upstream)
            for impl in IMPLS}


@pytest.mark.parametrize("norm", ROW_NORMS)
@settings(max_examples=25, deadline=None)
@given(case=row_norm_cases())
def test_row_norm_composite_matches_fused_float64(norm, case):
    shape, normalized_shape, affine, seed = case
    arrays = make_arrays(norm, shape, normalized_shape, affine_for(norm, affine), seed)
    upstream = upstream_grads(norm, shape, seed)
    sides = run_both_row_impls(norm, arrays, normalized_shape, upstream, DEFAULT_EPS[norm])
    assert_close_all(as_named(*sides["composite"]), as_named(*sides["fused"]), FLOAT64_TOL)


def batch_norm_side(impl, arrays, case, dtype=np.float64):
    shape, _, training, running_kind, momentum, seed = case
    mean0, var0 = make_running(shape[1], seed)
    running = (wrap_running(running_kind, mean0.astype(dtype)),
               wrap_running(running_kind, var0.astype(dtype)))
    upstream = upstream_grads("batch_norm", shape, seed, dtype)
    outputs, grads = mg_batch_norm(impl, arrays, running, training, momentum, 1e-5, upstream)
    named = as_named(outputs, grads)
    if running_kind is not None:
        named["running_mean"] = running_values(running[0])
        named["running_var"] = running_values(running[1])
    return named


@settings(max_examples=30, deadline=None)
@given(case=batch_norm_cases())
def test_batch_norm_composite_matches_fused_float64(case):
    shape, affine, *_, seed = case
    arrays = make_arrays("batch_norm", shape, (shape[1],), affine, seed)
    sides = {impl: batch_norm_side(impl, arrays, case) for impl in IMPLS}
    assert_close_all(sides["composite"], sides["fused"], FLOAT64_TOL)


# About 20 units in the last place of float16 (2^-11), 32 of bfloat16 (2^-8): the composite
# graph rounds to bfloat16 after each of its ~10 ops, and with 2-element rows (x̂ = ±1, dx
# a cancellation) those roundings add up to ~25 units of the gradient's scale.
LOW_PRECISION = [pytest.param(np.float32, 1e-5, id="float32"),
                 pytest.param(np.float16, 1e-2, id="float16"),
                 pytest.param(dtypes.bfloat16, 1.25e-1, id="bfloat16",
                              marks=BFLOAT16.marks)]


def assert_low_precision_close(named, reference, dtype, tol, what):
    """Within tol·max(1, |reference|) elementwise; outputs and grads keep their dtype.

    A parameter gradient is a sum over every row (or every N·L value of a channel): the
    composite graph forms it in the low dtype, so its rounding error scales with the largest
    terms of the sum, not with the sum itself, which may cancel to nearly 0. Its tolerance
    is therefore normwise: tol·max(1, max |reference|) for the whole tensor.
    """
    for name, ref in reference.items():
        got = named[name]
        assert got.dtype == dtype, f"{what}{name}: dtype {got.dtype}, expected {dtype}"
        reduced = name in ("grad weight", "grad bias")
        scale = np.max(np.abs(ref), initial=0) if reduced else np.abs(ref)
        excess = np.abs(got.astype(np.float64) - ref) - tol * np.maximum(1, scale)
        assert excess.max(initial=0) <= 0, (
            f"{what}{name}: max |difference| {np.max(np.abs(got - ref)):.3g} over tolerance")


def conditioning(x, axes, eps, centered=True):
    """max(1, largest rstd): the composite graph's intermediate gradients are rstd·g large
    and cancel (for D = 1 exactly), so its rounding error grows with rstd."""
    x = x.astype(np.float64)
    if centered:
        x = x - x.mean(axes, keepdims=True)
    return max(1.0, float(np.max(1 / np.sqrt((x * x).mean(axes) + eps))))


def well_spread_rows(x, normalized_shape):
    """Add a fixed ramp along each row so no row is (nearly) constant: a float16 row whose
    variance is ~eps is ill-conditioned for any implementation that computes in float16."""
    size = int(np.prod(normalized_shape))
    return x + 2 * np.linspace(-1, 1, size).reshape(normalized_shape)


@pytest.mark.parametrize("dtype, tol", LOW_PRECISION)
@pytest.mark.parametrize("norm", ROW_NORMS)
@settings(max_examples=20, deadline=None)
@given(case=row_norm_cases())
def test_row_norm_low_precision_close_to_float64_and_keeps_dtype(norm, dtype, tol, case):
    shape, normalized_shape, affine, seed = case
    arrays = make_arrays(norm, shape, normalized_shape, affine_for(norm, affine), seed)
    arrays["x"] = well_spread_rows(arrays["x"], normalized_shape)
    low = {name: a.astype(dtype) for name, a in arrays.items()}
    upstream = upstream_grads(norm, shape, seed, dtype)
    eps = DEFAULT_EPS[norm]
    # The float64 computation on exactly the same (rounded) values.
    reference = as_named(*mg_row_norm(norm, "fused", {n: a.astype(np.float64)
                                                      for n, a in low.items()},
                                      normalized_shape, eps,
                                      [u.astype(np.float64) for u in upstream]))
    summed = low["x"].astype(np.float64) + low.get("residual", 0)
    axes = tuple(range(len(shape) - len(normalized_shape), len(shape)))
    if "rms" in norm and dtype == np.float16:
        # The composite graph's intermediate gradients grow like rstd³·|x| (Div, then Sqrt
        # backward): for a row whose RMS is ~0.001 they pass float16's 65504 and become inf,
        # a range limit of float16 arithmetic, not an error of either implementation.
        assume(np.sqrt((summed * summed).mean(axes)).min() >= 0.05)
    tol *= conditioning(summed, axes, eps, centered="layer" in norm)
    for impl in IMPLS:
        named = as_named(*mg_row_norm(norm, impl, low, normalized_shape, eps, upstream))
        assert_low_precision_close(named, reference, dtype, tol, f"{impl} ")


@pytest.mark.parametrize("dtype, tol", LOW_PRECISION)
@settings(max_examples=25, deadline=None)
@given(case=batch_norm_cases())
def test_batch_norm_low_precision_close_to_float64_and_keeps_dtype(dtype, tol, case):
    shape, affine, training, *_, seed = case
    arrays = make_arrays("batch_norm", shape, (shape[1],), affine, seed)
    # Spread each channel's values over N so no channel is (nearly) constant.
    ramp = np.linspace(-2, 2, shape[0]).reshape((shape[0],) + (1,) * (len(shape) - 1))
    arrays["x"] = arrays["x"] + ramp
    low = {name: a.astype(dtype) for name, a in arrays.items()}
    reference = batch_norm_side("fused", {n: a.astype(np.float64) for n, a in low.items()},
                                case, dtype=np.float64)
    if training:
        tol *= conditioning(low["x"], (0,) + tuple(range(2, len(shape))), 1e-5)
    for impl in IMPLS:
        named = batch_norm_side(impl, low, case, dtype=dtype)
        assert_low_precision_close(named, reference, dtype, tol, f"{impl} ")


@pytest.mark.parametrize("dtype", [np.float16, BFLOAT16, np.float32, np.float64])
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("norm", ROW_NORMS + ("batch_norm",))
def test_backward_fills_grad_with_each_tensors_dtype(norm, impl, dtype):
    arrays = make_arrays(norm, (4, 3, 5), (3, 5) if norm != "batch_norm" else (3,),
                         "both" if has_bias(norm) else "weight", seed=2, dtype=dtype)
    t = tensors_of(arrays)
    if norm == "batch_norm":
        outputs = (F.batch_norm(t["x"], None, None, t["weight"], t["bias"], training=True,
                                impl=impl),)
    else:
        outputs = call_row_norm(norm, impl, t, (3, 5), DEFAULT_EPS[norm])
    loss = outputs[0].sum() if len(outputs) == 1 else outputs[0].sum() + outputs[1].sum()
    loss.backward()
    for o in outputs:
        assert o.dtype == dtype and o.shape == (4, 3, 5)
    for name, tensor in t.items():
        assert tensor.grad is not None, name
        assert tensor.grad.dtype == dtype and tensor.grad.shape == tensor.shape, name
        assert np.all(np.isfinite(tensor.grad)), name


# ----- 3. finite-difference gradcheck -------------------------------------------------------
@st.composite
def small_row_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    normalized_dims = draw(st.integers(1, ndim))
    affine = draw(st.sampled_from(("none", "weight", "bias", "both")))
    seed = draw(st.integers(0, 2**31 - 1))
    return shape, shape[ndim - normalized_dims:], affine, seed


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("norm", ROW_NORMS)
@settings(max_examples=20, deadline=None)
@given(case=small_row_cases())
def test_row_norm_gradcheck(norm, impl, case):
    shape, normalized_shape, affine, seed = case
    arrays = make_arrays(norm, shape, normalized_shape, affine_for(norm, affine), seed)
    t = tensors_of(arrays)
    names = list(t)

    def fn(*inputs):
        return call_row_norm(norm, impl, dict(zip(names, inputs)), normalized_shape,
                             DEFAULT_EPS[norm])

    assert mg.gradcheck(fn, list(t.values()))


@pytest.mark.parametrize("impl", IMPLS)
@settings(max_examples=20, deadline=None)
@given(case=batch_norm_cases(max_dims=3, max_side=4))
def test_batch_norm_gradcheck_training_and_eval(impl, case):
    shape, affine, training, _, momentum, seed = case
    arrays = make_arrays("batch_norm", shape, (shape[1],), affine, seed)
    mean0, var0 = make_running(shape[1], seed)
    # In training the running statistics change on every call but never reach the output.
    running = (mean0, var0)
    t = tensors_of(arrays)
    names = list(t)

    def fn(*inputs):
        named = dict(zip(names, inputs))
        return F.batch_norm(named["x"], *running, named.get("weight"), named.get("bias"),
                            training=training, momentum=momentum, impl=impl)

    assert mg.gradcheck(fn, list(t.values()))


# ----- 4. centering identity (derivations.md §5) ----------------------------------------------
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape, normalized_shape", [((5, 8), (8,)), ((2, 3, 4), (4,)),
                                                     ((2, 3, 4), (3, 4)), ((3, 1), (1,))],
                         ids=str)
def test_layer_norm_is_centering_then_rms_norm_then_bias(impl, shape, normalized_shape):
    arrays = make_arrays("layer_norm", shape, normalized_shape, "both", seed=11)
    arrays["x"] += 3.0                                 # a mean far from 0
    eps = 1e-3
    dy = upstream_grads("layer_norm", shape, seed=11)
    axes = tuple(range(len(shape) - len(normalized_shape), len(shape)))

    t = tensors_of(arrays)
    lhs = F.layer_norm(t["x"], normalized_shape, t["weight"], t["bias"], eps=eps, impl=impl)
    lhs_grads = mg.grad(lhs, list(t.values()), dy[0])
    u = tensors_of(arrays)
    centered = u["x"] - u["x"].mean(axes, keepdims=True)
    rhs = F.rms_norm(centered, normalized_shape, u["weight"], eps=eps, impl=impl) + u["bias"]
    rhs_grads = mg.grad(rhs, list(u.values()), dy[0])

    assert np.max(np.abs(lhs.data - rhs.data)) <= 1e-12
    for name, a, b in zip(t, lhs_grads, rhs_grads):
        assert np.max(np.abs(a - b)) <= 1e-12, name


# ----- 5. Jacobians (derivations.md §4) -----------------------------------------------------
def layer_norm_jacobian_expected(x, gamma, eps):
    d = x.size
    rstd = 1 / np.sqrt(x.var() + eps)
    xhat = (x - x.mean()) * rstd
    j0 = rstd * (np.eye(d) - np.ones((d, d)) / d - np.outer(xhat, xhat) / d)
    return np.diag(gamma) @ j0, j0, rstd, xhat


def rms_norm_jacobian_expected(x, gamma, eps):
    d = x.size
    rstd = 1 / np.sqrt(np.mean(x * x) + eps)
    xhat = x * rstd
    j0 = rstd * (np.eye(d) - np.outer(xhat, xhat) / d)
    return np.diag(gamma) @ j0, j0, rstd, xhat


JACOBIAN_SIZES = [2, 3, 5, 8]


def numerical_rank(J, scale):
    """Rank with a cut-off relative to J's natural scale (rstd·|γ|), not to its largest
    singular value: for D = 2 LayerNorm's only non-zero singular value is eps·rstd³, tiny
    next to rstd, and matrix_rank's default cut-off would count rounding noise."""
    return int(np.linalg.matrix_rank(J, tol=1e-9 * scale))


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("d", JACOBIAN_SIZES)
def test_layer_norm_jacobian_closed_form_and_properties(impl, d):
    rng = np.random.default_rng(d)
    x = rng.standard_normal(d) * 0.2 + 1.0            # variance not far from eps·1e3
    eps = 1e-5
    J = mg.jacobian(lambda t: F.layer_norm(t, d, eps=eps, impl=impl), mg.tensor(x))
    _, j0, rstd, xhat = layer_norm_jacobian_expected(x, np.ones(d), eps)
    assert J.shape == (d, d)
    assert np.max(np.abs(J - j0)) <= 1e-10
    assert np.max(np.abs(J - J.T)) <= 1e-10                         # symmetric
    assert np.max(np.abs(J @ np.ones(d))) <= 1e-10                  # shift invariant
    assert np.max(np.abs(np.ones(d) @ J)) <= 1e-10                  # each dx row sums to 0
    assert numerical_rank(J, rstd) == d - 1
    # Scale invariant only up to eps: J x̂ = eps·rstd³·x̂, not 0.
    np.testing.assert_allclose(J @ xhat, eps * rstd**3 * xhat, rtol=1e-6, atol=1e-13)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("d", JACOBIAN_SIZES)
def test_layer_norm_jacobian_with_weight_is_diag_gamma_times_j0(impl, d):
    rng = np.random.default_rng(d + 100)
    x, gamma = rng.standard_normal(d), 1 + 0.5 * rng.standard_normal(d)
    eps = 1e-5
    w = mg.tensor(gamma)
    J = mg.jacobian(lambda t: F.layer_norm(t, d, w, eps=eps, impl=impl), mg.tensor(x))
    expected, j0, rstd, _ = layer_norm_jacobian_expected(x, gamma, eps)
    assert np.max(np.abs(J - expected)) <= 1e-10
    assert np.max(np.abs(J - gamma[:, None] * j0)) <= 1e-10
    assert np.max(np.abs(J @ np.ones(d))) <= 1e-10                  # J·1 = 0 for any γ
    assert numerical_rank(J, rstd * np.abs(gamma).min()) == d - 1


@pytest.mark.parametrize("impl", IMPLS)
def test_layer_norm_jacobian_of_single_value_is_zero(impl):
    J = mg.jacobian(lambda t: F.layer_norm(t, 1, impl=impl), mg.tensor([3.0]))
    assert J.shape == (1, 1) and J[0, 0] == 0


@pytest.mark.parametrize("impl", IMPLS)
def test_layer_norm_jacobian_worked_example(impl):
    # derivations.md §9: x = [1, 2, 3, 4]; diagonal and first column (= dx for dy = e1).
    J = mg.jacobian(lambda t: F.layer_norm(t, 4, impl=impl), mg.tensor([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(np.diag(J), [0.2683, 0.6261, 0.6261, 0.2683], atol=5e-5)
    np.testing.assert_allclose(J[:, 0], [0.2683303039, -0.3577683720, -0.0894434346,
                                         0.1788815028], atol=1e-10)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("d", JACOBIAN_SIZES)
def test_rms_norm_jacobian_closed_form_and_properties(impl, d):
    rng = np.random.default_rng(d + 200)
    x = rng.standard_normal(d)
    eps = 1e-6
    J = mg.jacobian(lambda t: F.rms_norm(t, d, eps=eps, impl=impl), mg.tensor(x))
    _, j0, rstd, xhat = rms_norm_jacobian_expected(x, np.ones(d), eps)
    assert np.max(np.abs(J - j0)) <= 1e-10
    assert np.max(np.abs(J - J.T)) <= 1e-10
    assert numerical_rank(J, rstd) == d                             # no null vector
    np.testing.assert_allclose(J @ xhat, eps * rstd**3 * xhat, rtol=1e-5, atol=1e-14)
    # Every direction orthogonal to x is scaled by rstd.
    v = rng.standard_normal(d)
    v -= (v @ x) / (x @ x) * x
    np.testing.assert_allclose(J @ v, rstd * v, atol=1e-10)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("d", JACOBIAN_SIZES)
def test_rms_norm_jacobian_with_weight_is_diag_gamma_times_j0(impl, d):
    rng = np.random.default_rng(d + 300)
    x, gamma = rng.standard_normal(d), 1 + 0.5 * rng.standard_normal(d)
    eps = 1e-6
    w = mg.tensor(gamma)
    J = mg.jacobian(lambda t: F.rms_norm(t, d, w, eps=eps, impl=impl), mg.tensor(x))
    expected, j0, _, _ = rms_norm_jacobian_expected(x, gamma, eps)
    assert np.max(np.abs(J - expected)) <= 1e-10
    assert np.max(np.abs(J - gamma[:, None] * j0)) <= 1e-10


# ----- 6. graph size and saved bytes --------------------------------------------------------
FUSED_OP = {"layer_norm": "LayerNorm", "rms_norm": "RMSNorm", "add_layer_norm": "AddLayerNorm",
            "add_rms_norm": "AddRMSNorm", "batch_norm": "BatchNorm"}


def graph_of(norm, impl, shape=(16, 64)):
    channels = shape[1] if norm == "batch_norm" else shape[-1]
    arrays = make_arrays(norm, shape, (channels,), "both" if has_bias(norm) else "weight",
                         seed=0)
    t = tensors_of(arrays)
    if norm == "batch_norm":
        outputs = (F.batch_norm(t["x"], np.zeros(channels), np.ones(channels), t["weight"],
                                t["bias"], training=True, impl=impl),)
    else:
        outputs = call_row_norm(norm, impl, t, channels, DEFAULT_EPS[norm])
    return mg.graph_stats(*outputs)


@pytest.mark.parametrize("norm", ROW_NORMS + ("batch_norm",))
def test_graph_stats_fused_is_one_node_and_saves_less(norm):
    fused, composite = graph_of(norm, "fused"), graph_of(norm, "composite")
    assert fused.nodes == 1
    assert fused.by_op == {FUSED_OP[norm]: 1}
    assert composite.nodes >= 6
    assert sum(composite.by_op.values()) == composite.nodes
    assert fused.saved_bytes < composite.saved_bytes


@pytest.mark.parametrize("norm", ROW_NORMS + ("batch_norm",))
def test_fused_saved_bytes_match_the_table_in_derivations(norm):
    # derivations.md §7: one full-size array (x or s), the weight, and the statistics.
    m, d = 16, 64
    full, weight = m * d * 8, d * 8
    expected = {"layer_norm": full + weight + 2 * m * 8,
                "add_layer_norm": full + weight + 2 * m * 8,
                "rms_norm": full + weight + m * 8,
                "add_rms_norm": full + weight + m * 8,
                "batch_norm": full + weight + 2 * d * 8}[norm]
    assert graph_of(norm, "fused").saved_bytes == expected


@pytest.mark.parametrize("norm", NORMS)
def test_compare_reports_one_fused_node_and_tiny_differences(norm):
    result = mg.compare(norm, (4, 6, 8), repeat=1)
    assert result.fused.nodes == 1
    assert result.composite.nodes >= 6
    assert result.fused.saved_bytes < result.composite.saved_bytes
    assert result.max_abs_diff
    assert all(diff <= FLOAT64_TOL for diff in result.max_abs_diff.values()), result.table()


# ----- 7. numerical stability through the functional API ------------------------------------
def run_any(norm, impl, x_array, seed=0):
    """Output and gradients (x, weight, bias) of ``norm`` on x_array with an affine."""
    d = x_array.shape[1] if norm == "batch_norm" else x_array.shape[-1]
    arrays = make_arrays(norm, x_array.shape, (d,), "both" if has_bias(norm) else "weight",
                         seed, dtype=x_array.dtype)
    arrays["x"] = x_array
    if "residual" in arrays:
        arrays["residual"] = np.zeros_like(x_array)     # x + residual is x_array itself
    t = tensors_of(arrays)
    upstream = upstream_grads(norm, x_array.shape, seed, x_array.dtype)
    if norm == "batch_norm":
        outputs = (F.batch_norm(t["x"], None, None, t["weight"], t["bias"], training=True,
                                impl=impl),)
    else:
        outputs = call_row_norm(norm, impl, t, d, DEFAULT_EPS[norm])
    grads = mg.grad(outputs, list(t.values()), upstream)
    return outputs[0].data, dict(zip(t, grads)), arrays


def row(values, rows=3):
    return np.tile(np.asarray(values, dtype=np.float64), (rows, 1))


EXTREME_INPUTS = {
    "constant rows": row([0.7] * 6),
    "all zeros": np.zeros((3, 6)),
    "tiny scale 1e-10": np.random.default_rng(0).standard_normal((3, 6)) * 1e-10,
    "huge scale 1e10": np.random.default_rng(1).standard_normal((3, 6)) * 1e10,
    "mixed 1e-8 and 1e8": row([1e-8, 1e8, -1e-8, -1e8, 1e-8, 1e8]),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("norm", ROW_NORMS + ("batch_norm",))
@pytest.mark.parametrize("case", EXTREME_INPUTS, ids=str)
def test_extreme_inputs_give_finite_outputs_and_grads(case, norm, impl, dtype):
    x = EXTREME_INPUTS[case].astype(dtype)
    if norm == "batch_norm":
        x = x.T.copy()                       # (6, 3): the same values along each channel
    y, grads, _ = run_any(norm, impl, x)
    assert y.dtype == dtype and np.all(np.isfinite(y)), y
    for name, g in grads.items():
        assert np.all(np.isfinite(g)), name


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("norm", ["layer_norm", "add_layer_norm", "batch_norm"])
def test_constant_input_normalizes_to_bias_with_bounded_grad(norm, impl):
    x = row([0.7] * 6) if norm != "batch_norm" else row([0.7] * 6).T.copy()
    y, grads, arrays = run_any(norm, impl, x)
    bias = arrays["bias"] if norm != "batch_norm" else arrays["bias"][None, :]
    np.testing.assert_allclose(y, np.broadcast_to(bias, y.shape), rtol=0, atol=1e-9)
    # dx = rstd·(g - mean(g)) with rstd <= 1/sqrt(eps): large but bounded.
    assert np.max(np.abs(grads["x"])) < 1e4


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("norm", ["layer_norm", "add_layer_norm"])
def test_mixed_magnitude_row_normalizes_like_float64_reference(norm, impl):
    x = row([1e-8, 1e8, -1e-8, -1e8, 1e-8, 1e8])
    arrays = make_arrays(norm, x.shape, (6,), "none", seed=0)
    arrays["x"] = x
    if norm == "add_layer_norm":
        arrays["residual"] = np.zeros_like(x)
    outputs, _ = mg_row_norm(norm, impl, arrays, 6, 1e-5, upstream_grads(norm, x.shape, 0))
    centered = x - x.mean(-1, keepdims=True)
    expected = centered / np.sqrt((centered**2).mean(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(outputs[0], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("norm", ["layer_norm", "add_layer_norm", "batch_norm"])
def test_large_offset_float32_uses_stable_two_pass_variance(norm, impl):
    # derivations.md §6.1: E[x²] - mean² gives variance 0 in float32 here, and ±158.
    x = np.array([[1e6, 1e6 + 1]], dtype=np.float32)
    t = mg.tensor(x.T.copy() if norm == "batch_norm" else x, requires_grad=True)
    if norm == "batch_norm":
        running_mean, running_var = np.zeros(1, np.float32), np.ones(1, np.float32)
        y = F.batch_norm(t, running_mean, running_var, training=True, impl=impl).data.ravel()
        np.testing.assert_allclose(running_var, [0.9 + 0.1 * 0.5], rtol=1e-6)
    elif norm == "add_layer_norm":
        y = F.add_layer_norm(t, mg.tensor(np.zeros_like(x)), 2, impl=impl)[0].data.ravel()
    else:
        y = F.layer_norm(t, 2, impl=impl).data.ravel()
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, [-1, 1], atol=1e-4)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("norm", ["rms_norm", "add_rms_norm"])
def test_rms_norm_of_zeros_is_zero_with_grad_rstd_times_g(norm, impl):
    x = np.zeros((3, 4))
    arrays = {"x": x}
    if norm == "add_rms_norm":
        arrays["residual"] = np.zeros_like(x)
    upstream = upstream_grads(norm, x.shape, seed=9)
    outputs, grads = mg_row_norm(norm, impl, arrays, 4, 1e-6, upstream)
    assert np.array_equal(outputs[0], x)
    extra = upstream[1] if norm == "add_rms_norm" else 0
    np.testing.assert_allclose(grads["x"], upstream[0] / np.sqrt(1e-6) + extra, rtol=1e-12)


# ----- 8. eval-mode BatchNorm touches nothing -----------------------------------------------
@pytest.mark.parametrize("kind", ["array", "tensor"])
@pytest.mark.parametrize("impl", IMPLS)
def test_eval_batch_norm_leaves_running_stats_and_parameters_untouched(impl, kind):
    rng = np.random.default_rng(21)
    mean0, var0 = make_running(3, seed=21)
    running = (wrap_running(kind, mean0), wrap_running(kind, var0))
    versions = [r._version for r in running] if kind == "tensor" else None
    weight = mg.tensor(1 + rng.standard_normal(3), requires_grad=True)
    bias = mg.tensor(rng.standard_normal(3), requires_grad=True)
    w0, b0 = weight.data.copy(), bias.data.copy()
    x = mg.tensor(rng.standard_normal((5, 3, 2)), requires_grad=True)
    for _ in range(2):
        y = F.batch_norm(x, *running, weight, bias, training=False, momentum=0.5, impl=impl)
        (y * y).sum().backward()
    assert np.array_equal(running_values(running[0]), mean0)
    assert np.array_equal(running_values(running[1]), var0)
    assert np.array_equal(weight.data, w0) and np.array_equal(bias.data, b0)
    if kind == "tensor":
        assert [r._version for r in running] == versions
    # eval normalizes with the running statistics, not the batch ones
    expected = ((x.data - mean0[:, None]) / np.sqrt(var0[:, None] + 1e-5) * w0[:, None]
                + b0[:, None])
    np.testing.assert_allclose(y.data, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("impl", IMPLS)
def test_eval_batch_norm_has_elementwise_gradient(impl):
    # derivations.md §3.5: dx = dy·γ/sqrt(running_var + eps), no coupling across the batch.
    rng = np.random.default_rng(22)
    mean0, var0 = make_running(3, seed=22)
    gamma = 1 + rng.standard_normal(3)
    x = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    dy = rng.standard_normal((4, 3))
    y = F.batch_norm(x, mean0, var0, mg.tensor(gamma), training=False, impl=impl)
    (dx,) = mg.grad(y, [x], dy)
    np.testing.assert_allclose(dx, dy * gamma / np.sqrt(var0 + 1e-5), rtol=0, atol=1e-12)
