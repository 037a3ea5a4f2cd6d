"""Every implementation agrees with PyTorch at the edge where the statistics degenerate: a
row (or BatchNorm channel) whose values are all equal. Its mean must come out exactly, so
that x - mean is 0: y is then b (eps > 0) or NaN (eps = 0, 0 · inf), as in PyTorch, whose
Welford mean is exact there. A mean off by one rounding gives ±1 instead (±1 · rstd · w)."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import kernels
from norm_cases import SPECS, at_least, run, run_torch, spec_id

# 0.1 and 1/3 are the values whose sum/count is off by a rounding; 3 is exact either way
VALUES = (0.1, 1 / 3, -7.7, 0.0)
WIDTHS = (1, 3, 7, 100)
# the composite graph runs no kernel: once; the fused node on each CPU kernel
RUNS = [("composite", "numpy")] + [("fused", name) for name in kernels.CPU_KERNELS]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def constant_inputs(spec, value, width, dtype):
    """x constant along each statistic (rows of width ``width``, or channels), parameters
    drawn, residual 0 (so the normalized sum is constant too)."""
    shape = (2, 3, width) if spec.per_channel else at_least(spec, (3, width))
    arrays = spec.make_inputs(shape, dtype="float64")
    if spec.per_channel:
        x = value * np.arange(1, 4)[None, :, None]
    else:
        x = (value * np.arange(1, 4)[:, None]).reshape(at_least(spec, (3, 1)))
    arrays[spec.x] = np.broadcast_to(x, shape).copy()
    for added in spec.inputs_of("like-x"):
        arrays[added.name] = np.zeros(shape)
    return {name: a.astype(dtype) for name, a in arrays.items()}


def assert_same_as_torch(actual, expected, tol, scale):
    for name, e in expected.items():
        a = actual[name]
        assert np.array_equal(np.isnan(a), np.isnan(e)), f"{name}: NaN where torch has none " \
            f"or the reverse: {a.ravel()[:4]} vs torch {e.ravel()[:4]}"
        # the largest finite value: an inf beside it would make atol inf, and the check empty
        scale = max(scale, float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0)))
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol * scale, equal_nan=True,
                                   err_msg=name)


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@pytest.mark.parametrize("impl, cpu_kernels", RUNS)
@pytest.mark.parametrize("dtype, tol", [("float64", 1e-12), ("float32", 1e-5)])
@pytest.mark.parametrize("eps", [0.0, 1e-5])
# eps = 0: the fused kernels' 1/sqrt(0) and 0·inf warn (torch's are silent); the values are the
# point, and they are checked
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning",
                            "ignore:invalid value encountered:RuntimeWarning")
def test_constant_rows_match_torch(torch, spec, impl, cpu_kernels, dtype, tol, eps):
    if not spec.has_eps:
        pytest.skip(f"{spec.name} declares no eps (and so no statistic to degenerate)")
    if cpu_kernels == "numba":
        pytest.importorskip("numba")
    with mg.cpu_kernels(cpu_kernels):
        check_constant_rows(torch, spec, impl, dtype, tol, eps)


def check_constant_rows(torch, spec, impl, dtype, tol, eps):
    training = not (spec.per_channel and eps == 0)  # torch refuses eps 0 in training
    for value in VALUES:
        for width in WIDTHS:
            arrays = constant_inputs(spec, value, width, dtype)
            running = spec.running_stats(arrays)
            if running is not None and not training:
                # eval with a zero variance and the channel's value as the mean: 0 · inf.
                # (With mean 0, torch's folded form x·α + (b - mean·α) gives NaN, ours inf:
                # docs/pytorch.md.)
                running["running_var"][:] = 0
                running["running_mean"][:] = arrays[spec.x][0, :, 0]
            shape = arrays[spec.x].shape
            grads = [np.ones(shape, dtype) for _ in spec.outputs]
            try:
                theirs = run_torch(torch, spec, arrays, running, training, grads, eps=eps)
            except (ValueError, RuntimeError) as refusal:   # one value per statistic
                with pytest.raises(type(refusal)):
                    run(spec, impl, arrays, running, training, grads, eps=eps)
                continue
            if eps == 0 and training and not any(np.isnan(t).any() for t in theirs.values()):
                # torch's statistics of this constant channel carry a rounding, so its
                # 0/0 comes out as rounding noise (instance_norm): nothing to agree with
                continue
            ours = run(spec, impl, arrays, running, training, grads, eps=eps)
            # dx carries rstd = eps^-1/2 times a rounding of 1 (a composite's mean(dy)), and
            # torch's BatchNorm mean is not exact on a constant channel (ours is): its x̂
            # there is a rounding of |x| times rstd, summed over the channel in dweight
            x = arrays[spec.x]
            count = x.size // x.shape[1] if spec.per_channel else 1
            scale = (1 + count * abs(value) * 3) / np.sqrt(eps) if eps else 1.0
            assert_same_as_torch(ours, theirs, tol, scale)


@pytest.mark.parametrize("eps", [0.0, 0])
def test_batch_norm_refuses_eps_zero_in_training_as_torch(eps):
    x = mg.tensor(np.ones((4, 3)))
    running_mean, running_var = np.zeros(3), np.ones(3)
    with pytest.raises(ValueError, match="eps must be positive during training, got 0"):
        mg.functional.batch_norm(x, running_mean, running_var, training=True, eps=eps)
    np.testing.assert_array_equal(running_mean, 0)        # nothing changed
    with pytest.raises(ValueError, match="eps must be positive during training"):
        mg.nn.BatchNorm1d(3, eps=eps)(x.float())     # the module's dtype, float32


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("which", ["running_mean", "running_var"])
def test_batch_norm_refuses_running_stats_that_require_grad(torch, training, which):
    x = mg.tensor(np.random.default_rng(0).standard_normal((4, 3)), dtype=mg.float32,
                  requires_grad=True)                 # the statistics' (default) dtype
    stats = {"running_mean": mg.zeros(3), "running_var": mg.ones(3)}
    stats[which].requires_grad_()
    before = {name: s.detach().clone() for name, s in stats.items()}
    with pytest.raises(RuntimeError, match=f"{which} requires grad"):
        mg.functional.batch_norm(x, stats["running_mean"], stats["running_var"],
                                 training=training)
    for name, s in stats.items():
        np.testing.assert_array_equal(s.data, before[name])
    # torch refuses the same call
    t = {name: torch.tensor(s.detach().numpy(), requires_grad=name == which)
         for name, s in stats.items()}
    with pytest.raises(RuntimeError, match="requires_grad"):
        torch.nn.functional.batch_norm(torch.tensor(x.detach().numpy()), t["running_mean"],
                                       t["running_var"], training=training)
    with mg.no_grad():          # no graph, no gradient to lose: allowed, as in torch
        mg.functional.batch_norm(x, stats["running_mean"], stats["running_var"],
                                 training=training)


def test_corrected_mean_is_exact_on_constant_slices_and_keeps_inf_and_nan():
    from microgradnorm.backend import corrected_mean
    for value in VALUES:
        for width in WIDTHS:
            row = np.full((2, width), value)
            assert (corrected_mean(row, axis=1) == value).all()
            assert (mg.tensor(row).mean(1).numpy() == value).all()  # the composite's mean
    x = np.array([[np.inf, 1.0], [np.nan, 1.0], [-np.inf, np.inf]])
    with np.errstate(invalid="ignore"):                 # NumPy's own mean of -inf and inf
        expected = np.mean(x, axis=1)
    np.testing.assert_array_equal(corrected_mean(x, axis=1), expected)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 6, 7))
    for axis in (None, 0, (0, 2), -1):
        np.testing.assert_allclose(corrected_mean(x, axis), np.mean(x, axis), rtol=1e-14)
        assert corrected_mean(x, axis, keepdims=True).shape == np.mean(x, axis,
                                                                      keepdims=True).shape


def test_batch_norm_module_with_a_buffer_that_requires_grad_changes_nothing():
    bn = mg.nn.BatchNorm1d(3)
    bn.running_var.requires_grad_()
    x = mg.tensor(np.random.default_rng(1).standard_normal((5, 3)), dtype=mg.float32)
    with pytest.raises(RuntimeError, match="running_var requires grad"):
        bn(x)
    assert int(bn.num_batches_tracked.item()) == 0
    np.testing.assert_array_equal(bn.running_mean.data, 0)


@pytest.mark.parametrize("impl", ["fused", "composite"])
def test_constant_rows_give_exactly_the_bias(impl):
    # eps > 0: x - mean is exactly 0, so y is exactly b, as torch's layer_norm gives
    x = mg.tensor(np.full((4, 7), 0.1), requires_grad=True)
    bias = mg.tensor(np.arange(7.0))
    y = mg.functional.layer_norm(x, (7,), bias=bias, impl=impl)
    np.testing.assert_array_equal(y.data, np.broadcast_to(bias.data, (4, 7)))
