"""What is particular to one norm: LayerNorm's and RMSNorm's multi-dim ``normalized_shape``
and eps placement, RMSNorm's default eps, BatchNorm's running statistics (as arrays, as
Tensors, absent; any momentum) and eval mode, and the closed forms of docs/derivations.md
(Jacobians §4, centering identity §5, numerics §6, saved bytes §7, worked example §9).
What every norm shares is tested once, from the registry, in test_norms.py.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from norm_cases import (FLOAT64_TOL, IMPLS, assert_close, inputs, run, spec_id, tensors_of,
                        upstream)

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn
from microgradnorm.norms import NORMS

ROW_NORMS = [NORMS[name] for name in ("layer_norm", "rms_norm", "add_layer_norm",
                                       "add_rms_norm")]
BATCH_NORM = NORMS["batch_norm"]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


# ----- LayerNorm and RMSNorm: any normalized_shape, any eps ----------------------------------
def row_arrays(spec, shape, normalized_shape, seed, params=None):
    """Random float64 inputs whose parameters have ``normalized_shape`` (weight far from 1,
    bias far from 0)."""
    rng = np.random.default_rng(seed)
    arrays = {"x": rng.standard_normal(shape)}
    if spec.residual:
        arrays["residual"] = rng.standard_normal(shape)
    for name in spec.params if params is None else params:
        arrays[name] = (name == "weight") + 0.5 * rng.standard_normal(normalized_shape)
    return arrays


def call_row(spec, impl, t, normalized_shape, eps):
    first = (t["x"], t["residual"]) if spec.residual else (t["x"],)
    params = {name: t[name] for name in spec.params if name in t}
    out = spec.function(*first, normalized_shape, **params, eps=eps, impl=impl)
    return out if isinstance(out, tuple) else (out,)


def row_run(spec, impl, arrays, normalized_shape, eps, grads):
    t = tensors_of(arrays)
    outputs = call_row(spec, impl, t, normalized_shape, eps)
    named = {name: o.data for name, o in zip(spec.outputs, outputs)}
    return named | {f"grad {n}": g for n, g in zip(t, mg.grad(outputs, list(t.values()),
                                                                grads))}


def row_torch(torch, spec, arrays, normalized_shape, eps, grads):
    t = {name: torch.tensor(a, requires_grad=True) for name, a in arrays.items()}
    s = t["x"] + t["residual"] if spec.residual else t["x"]
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
    if "layer" in spec.name:
        y = torch.nn.functional.layer_norm(s, shape, t.get("weight"), t.get("bias"), eps)
    else:
        y = torch.nn.functional.rms_norm(s, shape, t.get("weight"), eps=eps)
    outputs = (y, s) if spec.residual else (y,)
    torch_grads = torch.autograd.grad(outputs, list(t.values()),
                                      [torch.tensor(g) for g in grads])
    return ({name: o.detach().numpy() for name, o in zip(spec.outputs, outputs)}
            | {f"grad {n}": g.numpy() for n, g in zip(t, torch_grads)})


MULTI_DIM = [((5, 8), 8),                     # normalized_shape given as an int
             ((2, 3, 4), (3, 4)), ((2, 3, 4, 5), (4, 5)), ((2, 3, 4, 5), (3, 4, 5)),
             ((2, 3, 4, 5), (2, 3, 4, 5))]    # everything normalized


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape, normalized_shape", MULTI_DIM, ids=str)
@pytest.mark.parametrize("spec", ROW_NORMS, ids=spec_id)
def test_multi_dim_normalized_shape_matches_torch(torch, spec, shape, normalized_shape, impl):
    param_shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
    arrays = row_arrays(spec, shape, param_shape, seed=len(shape))
    grads = upstream(spec, shape, seed=3)
    ours = row_run(spec, impl, arrays, normalized_shape, spec.eps, grads)
    assert_close(ours, row_torch(torch, spec, arrays, normalized_shape, spec.eps, grads),
                 FLOAT64_TOL)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("eps", [0.0, 0.3, 2.0])
@pytest.mark.parametrize("spec", ROW_NORMS, ids=spec_id)
def test_eps_sits_inside_the_sqrt_like_torch(torch, spec, eps, impl):
    # A large eps next to a small variance makes any other eps placement visible.
    arrays = row_arrays(spec, (4, 6), (6,), seed=5)
    arrays["x"] *= 0.3
    grads = upstream(spec, (4, 6), seed=5)
    assert_close(row_run(spec, impl, arrays, 6, eps, grads),
                 row_torch(torch, spec, arrays, 6, eps, grads), FLOAT64_TOL)


@st.composite
def multi_dim_cases(draw):
    """(shape, normalized_shape, params, seed): 1-3 dims of sides 1..4, the trailing
    1..ndim of them normalized."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    normalized_dims = draw(st.integers(1, len(shape)))
    params = draw(st.sampled_from(((), ("weight",), ("bias",), ("weight", "bias"))))
    return shape, shape[len(shape) - normalized_dims:], params, draw(st.integers(0, 2**31 - 1))


@pytest.mark.parametrize("spec", ROW_NORMS, ids=spec_id)
@settings(max_examples=20, deadline=None)
@given(case=multi_dim_cases())
def test_multi_dim_normalized_shape_composite_matches_fused_and_gradcheck(spec, case):
    shape, normalized_shape, params, seed = case
    arrays = row_arrays(spec, shape, normalized_shape, seed,
                        [p for p in params if p in spec.params])
    grads = upstream(spec, shape, seed)
    composite, fused = (row_run(spec, impl, arrays, normalized_shape, spec.eps, grads)
                        for impl in IMPLS)
    assert_close(composite, fused, FLOAT64_TOL)
    t = tensors_of(arrays)
    for impl in IMPLS:
        def fn(*tensors, impl=impl):
            return call_row(spec, impl, dict(zip(t, tensors)), normalized_shape, spec.eps)

        assert mg.gradcheck(fn, list(t.values()))


def test_rms_norm_default_eps_is_torchs_machine_epsilon(torch):
    # small rows, where 1e-6 (LLaMA's, passed explicitly) and finfo(float64).eps differ
    x = np.random.default_rng(0).standard_normal((3, 4)) * 1e-3
    ours = F.rms_norm(mg.tensor(x), 4).numpy()
    expected = torch.nn.functional.rms_norm(torch.tensor(x), (4,)).numpy()
    assert np.max(np.abs(ours - expected)) <= FLOAT64_TOL
    llama = torch.nn.functional.rms_norm(torch.tensor(x), (4,), eps=1e-6).numpy()
    assert np.max(np.abs(F.rms_norm(mg.tensor(x), 4, eps=1e-6).numpy() - llama)) <= FLOAT64_TOL
    assert np.max(np.abs(ours - llama)) > 1e-3


# ----- BatchNorm: running statistics as arrays, Tensors or absent; any momentum --------------
def wrap_running(kind, running):
    if kind is None:
        return None
    return {n: mg.tensor(a.copy()) if kind == "tensor" else a.copy() for n, a in running.items()}


def values(stat):
    return stat.data if isinstance(stat, mg.Tensor) else stat


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("momentum", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("training, kind", [(True, "array"), (True, "tensor"), (True, None),
                                            (False, "tensor")], ids=str)
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (2, 2, 3, 4)], ids=str)
def test_batch_norm_running_stat_kinds_and_momentum_match_torch(torch, shape, training, kind,
                                                                 momentum, impl):
    arrays, running = inputs(BATCH_NORM, shape, seed=len(shape))
    grads = upstream(BATCH_NORM, shape, seed=4)
    ours_running = wrap_running(kind, running)
    stats = (None, None) if kind is None else ours_running.values()
    t = tensors_of(arrays)
    y = F.batch_norm(t["x"], *stats, t["weight"], t["bias"],
                     training=training, momentum=momentum, impl=impl)
    ours = {"output": y.data} | {f"grad {n}": g for n, g in
                                 zip(t, mg.grad(y, list(t.values()), grads[0]))}
    t = {name: torch.tensor(a, requires_grad=True) for name, a in arrays.items()}
    torch_running = None if kind is None else {n: torch.tensor(a.copy())
                                               for n, a in running.items()}
    stats = (None, None) if kind is None else torch_running.values()
    y = torch.nn.functional.batch_norm(t["x"], *stats, t["weight"],
                                       t["bias"], training=training, momentum=momentum)
    ref = {"output": y.detach().numpy()} | {f"grad {n}": g.numpy() for n, g in zip(
        t, torch.autograd.grad(y, list(t.values()), torch.tensor(grads[0])))}
    if kind is not None:
        ours |= {n: values(stat) for n, stat in ours_running.items()}
        ref |= {n: stat.numpy() for n, stat in torch_running.items()}
    assert_close(ours, ref, FLOAT64_TOL)


@pytest.mark.parametrize("impl", IMPLS)
def test_batch_norm_running_stats_match_worked_example(impl):
    # derivations.md §9: [1, 2, 3, 4] as a (4, 1) batch, one step with momentum 0.1.
    running_mean, running_var = np.zeros(1), np.ones(1)
    x = mg.tensor([[1.0], [2.0], [3.0], [4.0]], dtype=mg.float64, requires_grad=True)
    y = F.batch_norm(x, running_mean, running_var, training=True, impl=impl)
    np.testing.assert_allclose(running_mean, [0.25], rtol=0, atol=1e-15)
    np.testing.assert_allclose(running_var, [0.9 + 0.1 * 5 / 3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(y.detach().numpy().ravel(), [-1.3416354200, -0.4472118067,
                                                            0.4472118067, 1.3416354200],
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("impl", IMPLS)
def test_batch_norm_running_stat_tensor_is_updated_in_place(impl):
    running_mean = mg.tensor(np.zeros(3))
    running_var = mg.tensor(np.ones(3))
    buffers = running_mean.numpy(), running_var.numpy()
    x = mg.tensor(np.random.default_rng(1).standard_normal((6, 3)), requires_grad=True)
    F.batch_norm(x, running_mean, running_var, training=True, impl=impl)
    # the same memory, updated: a view taken before the call sees the new values
    assert np.shares_memory(running_mean.numpy(), buffers[0])
    assert np.shares_memory(running_var.numpy(), buffers[1])
    xs = x.detach().numpy()
    np.testing.assert_allclose(buffers[0], 0.1 * xs.mean(0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(buffers[1], 0.9 + 0.1 * xs.var(0, ddof=1), rtol=0,
                               atol=1e-15)


@pytest.mark.parametrize("kind", ["array", "tensor"])
@pytest.mark.parametrize("impl", IMPLS)
def test_eval_batch_norm_leaves_running_stats_and_parameters_untouched(impl, kind):
    arrays, running = inputs(BATCH_NORM, (5, 3, 2), seed=21)
    stats = wrap_running(kind, running)
    versions = [s._version for s in stats.values()] if kind == "tensor" else None
    t = tensors_of(arrays)
    for _ in range(2):
        y = F.batch_norm(t["x"], *stats.values(), t["weight"], t["bias"], training=False,
                         momentum=0.5, impl=impl)
        (y * y).sum().backward()
    for name, stat in stats.items():
        assert np.array_equal(values(stat), running[name]), name
    for name in ("weight", "bias"):
        assert np.array_equal(t[name].data, arrays[name]), name
    if kind == "tensor":
        assert [s._version for s in stats.values()] == versions
    # eval normalizes with the running statistics, not the batch ones
    mean, var = (running[n][:, None] for n in ("running_mean", "running_var"))
    expected = ((arrays["x"] - mean) / np.sqrt(var + 1e-5) * arrays["weight"][:, None]
                + arrays["bias"][:, None])
    np.testing.assert_allclose(y.data, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("impl", IMPLS)
def test_eval_batch_norm_has_elementwise_gradient(impl):
    # derivations.md §3.5: dx = dy·γ/sqrt(running_var + eps), no coupling across the batch.
    arrays, running = inputs(BATCH_NORM, (4, 3), seed=22)
    grads = upstream(BATCH_NORM, (4, 3), seed=22)
    named = run(BATCH_NORM, impl, arrays, running, False, grads)
    np.testing.assert_allclose(named["grad x"], grads[0] * arrays["weight"]
                               / np.sqrt(running["running_var"] + 1e-5), rtol=0, atol=1e-12)


# ----- centering identity (derivations.md §5) -----------------------------------------------
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape, normalized_shape", [((5, 8), (8,)), ((2, 3, 4), (4,)),
                                                     ((2, 3, 4), (3, 4)), ((3, 1), (1,))],
                         ids=str)
def test_layer_norm_is_centering_then_rms_norm_then_bias(impl, shape, normalized_shape):
    arrays = row_arrays(NORMS["layer_norm"], shape, normalized_shape, seed=11)
    arrays["x"] += 3.0                                 # a mean far from 0
    eps = 1e-3
    dy = upstream(NORMS["layer_norm"], shape, seed=11)
    axes = tuple(range(len(shape) - len(normalized_shape), len(shape)))
    t = tensors_of(arrays)
    lhs = F.layer_norm(t["x"], normalized_shape, t["weight"], t["bias"], eps=eps, impl=impl)
    lhs_grads = mg.grad(lhs, list(t.values()), dy[0])
    u = tensors_of(arrays)
    centered = u["x"] - u["x"].mean(axes, keepdims=True)
    rhs = F.rms_norm(centered, normalized_shape, u["weight"], eps=eps, impl=impl) + u["bias"]
    rhs_grads = mg.grad(rhs, list(u.values()), dy[0])

    assert np.max(np.abs(np.asarray(lhs.data - rhs.data))) <= 1e-12
    for name, a, b in zip(t, lhs_grads, rhs_grads):
        assert np.max(np.abs(np.asarray(a - b))) <= 1e-12, name


# ----- Jacobians (derivations.md §4) -----------------------------------------------------
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
    J = mg.jacobian(lambda t: F.layer_norm(t, 4, impl=impl),
                    mg.tensor([1.0, 2.0, 3.0, 4.0], dtype=mg.float64))
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


# ----- saved bytes (derivations.md §7) and numerics (§6) ------------------------------------
@pytest.mark.parametrize("spec", ROW_NORMS + [BATCH_NORM], ids=spec_id)
def test_fused_saved_bytes_match_the_table_in_derivations(spec):
    # One full-size array (x or s), the weight, and the statistics (2 per row or channel
    # for mean and rstd, 1 per row for RMSNorm's rstd); the composite graph saves far more.
    m, d = 16, 64
    arrays, running = inputs(spec, (m, d))
    stats = {impl: mg.graph_stats(*spec.run(tensors_of(arrays), impl, running))
             for impl in IMPLS}
    per_stat = 1 if "rms" in spec.name else 2
    assert stats["fused"].saved_bytes == m * d * 8 + d * 8 + per_stat * (
        d if spec.per_channel else m) * 8
    assert stats["composite"].nodes >= 6
    assert stats["fused"].saved_bytes < stats["composite"].saved_bytes


def run_on(spec, impl, x, seed=0):
    """``run`` with every parameter on a given x (and a zero residual: x + residual = x)."""
    arrays, _ = inputs(spec, x.shape, seed=seed, dtype=x.dtype)
    arrays["x"] = x
    if spec.residual:
        arrays["residual"] = np.zeros_like(x)
    return run(spec, impl, arrays, None, True, upstream(spec, x.shape, seed, x.dtype)), arrays


def rows(values, count=3):
    return np.tile(np.asarray(values, dtype=np.float64), (count, 1))


CENTERED = [NORMS["layer_norm"], NORMS["add_layer_norm"], BATCH_NORM]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec", CENTERED, ids=spec_id)
def test_constant_input_normalizes_to_bias_with_bounded_grad(spec, impl):
    x = rows([0.7] * 6).T.copy() if spec.per_channel else rows([0.7] * 6)
    named, arrays = run_on(spec, impl, x)
    bias = arrays["bias"][None, :] if spec.per_channel else arrays["bias"]
    np.testing.assert_allclose(named["output"], np.broadcast_to(bias, x.shape), rtol=0,
                               atol=1e-9)
    # dx = rstd·(g - mean(g)) with rstd <= 1/sqrt(eps): large but bounded.
    assert np.max(np.abs(named["grad x"])) < 1e4


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec", CENTERED[:2], ids=spec_id)
def test_mixed_magnitude_row_normalizes_like_float64_reference(spec, impl):
    x = rows([1e-8, 1e8, -1e-8, -1e8, 1e-8, 1e8])
    named, arrays = run_on(spec, impl, x)
    centered = x - x.mean(-1, keepdims=True)
    xhat = centered / np.sqrt((centered**2).mean(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(named["output"], xhat * arrays["weight"] + arrays["bias"],
                               rtol=1e-12, atol=1e-12 * np.abs(arrays["weight"]).max())


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec", CENTERED, ids=spec_id)
def test_large_offset_float32_uses_stable_two_pass_variance(spec, impl):
    # derivations.md §6.1: E[x²] - mean² gives variance 0 in float32 here, and ±158.
    x = np.array([[1e6, 1e6 + 1]], dtype=np.float32)
    x = x.T.copy() if spec.per_channel else x
    running = {"running_mean": np.zeros(1, np.float32), "running_var": np.ones(1, np.float32)}
    t = {"x": mg.tensor(x, requires_grad=True)}
    if spec.residual:
        t["residual"] = mg.tensor(np.zeros_like(x))
    y = spec.run(t, impl, running if spec.per_channel else None)[0].detach().numpy().ravel()
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, [-1, 1], atol=1e-4)
    if spec.per_channel:
        np.testing.assert_allclose(running["running_var"], [0.9 + 0.1 * 0.5], rtol=1e-6)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec", [NORMS["rms_norm"], NORMS["add_rms_norm"]], ids=spec_id)
def test_rms_norm_of_zeros_is_zero_with_grad_rstd_times_g(spec, impl):
    arrays = {name: np.zeros((3, 4)) for name in ("x", "residual")[:1 + spec.residual]}
    grads = upstream(spec, (3, 4), seed=9)
    named = run(spec, impl, arrays, None, True, grads)
    assert np.array_equal(named["output"], arrays["x"])
    extra = grads[1] if spec.residual else 0
    eps = np.finfo(np.float64).eps                     # the default: x's machine epsilon
    np.testing.assert_allclose(named["grad x"], grads[0] / np.sqrt(eps) + extra, rtol=1e-12)


def test_float16_input_with_a_float32_weight_is_the_same_through_nn_and_functional():
    # one check for both doors: nn.RMSNorm's forward is F.rms_norm's one line
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 8)), dtype="float16")
    rms = nn.RMSNorm(8, dtype="float32")
    y, ref = rms(x), F.rms_norm(x, 8, rms.weight)
    assert y.dtype == ref.dtype == np.float32          # "llama": Hugging Face's float32 result
    np.testing.assert_array_equal(y.detach().numpy(), ref.detach().numpy())


@pytest.mark.parametrize("impl", IMPLS)
def test_eps_inf_is_taken_as_pytorch_takes_it(impl, torch):
    # PyTorch refuses no eps >= 0: with eps = inf every output is its bias, every dx zero
    x = np.random.default_rng(3).standard_normal((3, 4))
    for name in ("layer_norm", "rms_norm"):
        t, tt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y = getattr(F, name)(t, 4, eps=float("inf"), impl=impl)
        ty = getattr(torch.nn.functional, name)(tt, (4,), eps=float("inf"))
        y.sum().backward()
        ty.sum().backward()
        np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
        np.testing.assert_array_equal(t.grad, tt.grad.numpy())


@pytest.mark.parametrize("module", [nn.LayerNorm(4), nn.RMSNorm(4)], ids=["LayerNorm", "RMSNorm"])
def test_row_norm_modules_take_an_array_as_linear_does(module):
    # float32, the modules' (default) dtype: an array keeps its dtype, as mg.tensor does
    x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(module(x).detach().numpy(),
                                  module(mg.tensor(x)).detach().numpy())
    assert nn.Sequential(module, nn.Linear(4, 2))(x).shape == (3, 2)
