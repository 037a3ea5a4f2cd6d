"""The API contract of the seed-style layers (``microgradnorm.layers``).

Construction, errors (and that a failed call changes nothing), dtypes, the
source derivation's worked example, agreement with the functional fused and composite
graphs, BatchNorm's training/eval behaviour and running statistics against
``torch.nn.BatchNorm1d``, and ``x_hat``.
The source derivation's checklist itself lives in test_seed_checklist.py.
"""

import re

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm.layers import BatchNorm, LayerNorm, RMSNorm

CLASSES = {"layernorm": LayerNorm, "rmsnorm": RMSNorm, "batchnorm": BatchNorm}
ALL_NORMS = list(CLASSES)


def make(kind, features):
    return CLASSES[kind](features)


def input_shape(kind, features):
    """A 3-D input with `features` on the layer's feature axis (last, or 1 for BatchNorm)."""
    return (4, features, 3) if kind == "batchnorm" else (4, 3, features)


def param_grads(layer):
    grads = {"gamma": layer.grad_gamma}
    if hasattr(layer, "grad_beta"):
        grads["beta"] = layer.grad_beta
    return {name: None if g is None else g.copy() for name, g in grads.items()}


def state(layer):
    """Copies of everything a failed call must leave alone."""
    names = ["gamma", "beta", "grad_gamma", "grad_beta", "running_mean", "running_var"]
    return {n: getattr(layer, n).copy() for n in names if getattr(layer, n, None) is not None}


def assert_state_equal(before, after):
    assert before.keys() == after.keys()
    for name in before:
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


# ----- construction -------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [LayerNorm, RMSNorm])
@pytest.mark.parametrize("build", [lambda c: c(8), lambda c: c(d_model=8),
                                   lambda c: c(normalized_shape=8), lambda c: c((8,))],
                         ids=["positional", "d_model", "normalized_shape", "tuple"])
def test_constructor_takes_the_feature_size_in_each_form(cls, build):
    layer = build(cls)
    assert layer.normalized_shape == 8
    assert layer.gamma.shape == (8,)
    assert layer.forward(np.ones((2, 8))).shape == (2, 8)


@pytest.mark.parametrize("cls", [LayerNorm, RMSNorm])
def test_constructor_both_or_neither_feature_size_is_type_error(cls):
    with pytest.raises(TypeError, match="d_model"):
        cls(8, d_model=8)
    with pytest.raises(TypeError, match="d_model"):
        cls(normalized_shape=8, d_model=8)
    with pytest.raises(TypeError, match="normalized_shape"):
        cls()


# ----- errors, and nothing half-updated -----------------------------------------------------
@pytest.mark.parametrize("kind", ALL_NORMS)
def test_backward_before_forward_raises_runtime_error(kind):
    layer = make(kind, 8)
    with pytest.raises(RuntimeError, match="forward"):
        layer.backward(np.ones(input_shape(kind, 8)))
    assert layer.grad_gamma is None


@pytest.mark.parametrize("kind", ALL_NORMS)
def test_forward_wrong_feature_size_is_value_error_and_changes_nothing(rng, kind):
    layer = make(kind, 8)
    x, dy = rng.standard_normal(input_shape(kind, 8)), rng.standard_normal(input_shape(kind, 8))
    layer.forward(x)
    dx = layer.backward(dy)
    before = state(layer)

    bad = rng.standard_normal(input_shape(kind, 7))
    with pytest.raises(ValueError) as error:
        layer.forward(bad)
    assert re.search(r"\b8\b", str(error.value)), "the message names the expected size 8"
    assert "7" in str(error.value), "and the actual shape"
    assert_state_equal(before, state(layer))             # params, grads, running stats
    # the cache is the previous forward's: its backward still works, with the same result
    np.testing.assert_array_equal(layer.backward(dy), dx)
    assert_state_equal(before, state(layer))


@pytest.mark.parametrize("kind", ALL_NORMS)
def test_backward_wrong_grad_output_shape_is_value_error(rng, kind):
    layer = make(kind, 8)
    shape = input_shape(kind, 8)
    layer.forward(rng.standard_normal(shape))
    dx = layer.backward(np.ones(shape))
    before = state(layer)
    for bad_shape in [(4, 3, 9), (4, 24), shape + (1,)]:
        with pytest.raises(ValueError, match="grad_output"):
            layer.backward(np.ones(bad_shape))
    assert_state_equal(before, state(layer))
    np.testing.assert_array_equal(layer.backward(np.ones(shape)), dx)


@pytest.mark.parametrize("kind", ALL_NORMS)
@pytest.mark.parametrize("change", ["input", "gamma"])
def test_backward_is_that_of_the_forward_that_ran(rng, kind, change):
    # Changing x in place (a residual stream updated with `x += ...`) or γ (an optimizer
    # step) between forward and backward must not change the gradient of that forward
    # (DESIGN: what backward saved is not silently used after an in-place change).
    shape = input_shape(kind, 8)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    layer = make(kind, 8)
    layer.forward(x.copy())
    expected_dx, expected = layer.backward(dy), param_grads(layer)

    layer.forward(x)
    if change == "input":
        x *= 3.0
        x += 1.0
    else:
        layer.gamma -= 0.5
    np.testing.assert_allclose(layer.backward(dy), expected_dx, rtol=1e-14)
    for name, grad in param_grads(layer).items():
        np.testing.assert_allclose(grad, expected[name], rtol=1e-14, err_msg=name)


@pytest.mark.parametrize("kind", ALL_NORMS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_forward_integer_input_is_type_error(kind, dtype):
    layer = make(kind, 8)
    with pytest.raises(TypeError, match="dtype"):
        layer.forward(np.ones(input_shape(kind, 8), dtype=dtype))
    with pytest.raises(RuntimeError):                    # nothing was cached
        layer.backward(np.ones(input_shape(kind, 8)))


@pytest.mark.parametrize("kind", ALL_NORMS)
def test_float32_input_gives_float32_output_and_dx_with_float64_params(rng, kind):
    layer = make(kind, 8)
    x = rng.standard_normal(input_shape(kind, 8)).astype(np.float32)
    y = layer.forward(x)
    dx = layer.backward(np.ones_like(y))
    assert y.dtype == np.float32 and dx.dtype == np.float32
    assert layer.gamma.dtype == np.float64 and layer.grad_gamma.dtype == np.float64
    if kind != "rmsnorm":
        assert layer.beta.dtype == np.float64 and layer.grad_beta.dtype == np.float64
    # and the float32 results are the float64 ones, rounded
    reference = make(kind, 8)
    np.testing.assert_allclose(y, reference.forward(x.astype(np.float64)), atol=1e-5)
    np.testing.assert_allclose(dx, reference.backward(np.ones(x.shape)), atol=1e-4)


# ----- the source derivation's worked example -----------------------------------------------
# The notebook's import cell and its "Part 4: Verify Against Implementation" cell, verbatim,
# except the import line (`from ai_comps.normalization import LayerNorm, RMSNorm`); the import
# cell's notebook-relative `sys.path.insert(0, '..')` is left out.
SEED_000_PART_4 = '''
import numpy as np
import sys
from microgradnorm.layers import LayerNorm, RMSNorm

# Test our actual implementation
np.random.seed(123)
x = np.random.randn(2, 4, 8).astype(np.float32)  # (batch, seq, dim)
dy = np.random.randn(2, 4, 8).astype(np.float32)

# LayerNorm
ln = LayerNorm(d_model=8)
y_ln = ln.forward(x)
dx_ln = ln.backward(dy)

print("LayerNorm:")
print(f"  Input shape:  {x.shape}")
print(f"  Output shape: {y_ln.shape}")
print(f"  Output mean:  {y_ln.mean(axis=-1)[0,0]:.6f} (should be ≈0)")
print(f"  Output var:   {y_ln.var(axis=-1)[0,0]:.6f} (should be ≈1)")

# RMSNorm
rn = RMSNorm(d_model=8)
y_rn = rn.forward(x)
dx_rn = rn.backward(dy)

print("\\nRMSNorm:")
print(f"  Input shape:  {x.shape}")
print(f"  Output shape: {y_rn.shape}")
print(f"  Output RMS:   {np.sqrt((y_rn**2).mean(axis=-1))[0,0]:.6f} (should be ≈1)")
'''


def test_seed_000_part_4_runs_with_only_the_import_changed(capsys):
    namespace = {}
    exec(SEED_000_PART_4, namespace)
    out = capsys.readouterr().out

    def printed(label):
        return float(re.search(rf"{label}:\s+(-?[0-9.]+)", out).group(1))

    assert out.count("Input shape:  (2, 4, 8)") == 2
    assert out.count("Output shape: (2, 4, 8)") == 2
    assert abs(printed("Output mean")) <= 1e-6           # should be ≈0
    assert abs(printed("Output var") - 1) < 1e-3          # should be ≈1
    assert abs(printed("Output RMS") - 1) < 1e-3          # should be ≈1
    assert namespace["dx_ln"].shape == namespace["dx_rn"].shape == (2, 4, 8)
    assert namespace["dx_ln"].dtype == np.float32
    assert namespace["ln"].grad_gamma.shape == namespace["rn"].grad_gamma.shape == (8,)


# ----- agreement with the functional graphs -------------------------------------------------
def functional_row_norm(kind, x, gamma, beta, dy, impl):
    """F.layer_norm / F.rms_norm as a graph: (y, dx, dgamma, dbeta or None)."""
    xt = mg.tensor(x, requires_grad=True)
    weight = mg.tensor(gamma, requires_grad=True)
    if kind == "layernorm":
        bias = mg.tensor(beta, requires_grad=True)
        y = F.layer_norm(xt, x.shape[-1], weight, bias, eps=1e-5, impl=impl)
    else:
        bias = None
        y = F.rms_norm(xt, x.shape[-1], weight, eps=1e-6, impl=impl)
    y.backward(dy)
    return y.data, xt.grad, weight.grad, None if bias is None else bias.grad


@pytest.mark.parametrize("impl", ["fused", "composite"])
@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("shape", [(5, 16), (3, 4, 16)], ids=["2d", "3d"])
def test_row_norm_layers_agree_with_functional_graphs(rng, kind, impl, shape):
    layer = make(kind, 16)
    layer.gamma = rng.standard_normal(16)
    beta = None
    if kind == "layernorm":
        layer.beta = beta = rng.standard_normal(16)
    x, dy = 2.0 * rng.standard_normal(shape) + 0.5, rng.standard_normal(shape)
    y = layer.forward(x)
    dx = layer.backward(dy)
    ref = functional_row_norm(kind, x, layer.gamma, beta, dy, impl)
    np.testing.assert_allclose(y, ref[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(dx, ref[1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(layer.grad_gamma, ref[2], rtol=0, atol=1e-12)
    if kind == "layernorm":
        np.testing.assert_allclose(layer.grad_beta, ref[3], rtol=0, atol=1e-12)


@pytest.mark.parametrize("impl", ["fused", "composite"])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("shape", [(6, 5), (4, 5, 3)], ids=["NC", "NCL"])
def test_batchnorm_layer_agrees_with_functional_graphs(rng, impl, training, shape):
    bn = BatchNorm(5)
    bn.gamma, bn.beta = rng.standard_normal(5), rng.standard_normal(5)
    bn.running_mean, bn.running_var = rng.standard_normal(5), rng.uniform(0.5, 2.0, 5)
    bn.train(training)
    running_mean, running_var = bn.running_mean.copy(), bn.running_var.copy()
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    y = bn.forward(x)
    dx = bn.backward(dy)

    xt = mg.tensor(x, requires_grad=True)
    weight, bias = mg.tensor(bn.gamma, requires_grad=True), mg.tensor(bn.beta, requires_grad=True)
    yt = F.batch_norm(xt, running_mean, running_var, weight, bias, training=training,
                      momentum=0.1, eps=1e-5, impl=impl)
    yt.backward(dy)
    for ours, theirs in [(y, yt.data), (dx, xt.grad), (bn.grad_gamma, weight.grad),
                         (bn.grad_beta, bias.grad), (bn.running_mean, running_mean),
                         (bn.running_var, running_var)]:
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


# ----- BatchNorm: training vs eval ----------------------------------------------------------
def test_batchnorm_training_normalizes_with_batch_statistics(rng):
    bn = BatchNorm(4)
    x = 3.0 * rng.standard_normal((32, 4, 5)) + 2.0
    y = bn.forward(x)
    np.testing.assert_allclose(y.mean(axis=(0, 2)), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=(0, 2)), 1.0, atol=1e-5)
    # a sample's output depends on the rest of its batch
    other = x.copy()
    other[1:] += 10.0
    assert not np.allclose(bn.forward(other)[0], y[0])


def test_batchnorm_eval_normalizes_with_running_statistics(rng):
    bn = BatchNorm(4)
    bn.gamma, bn.beta = rng.standard_normal(4), rng.standard_normal(4)
    for _ in range(3):
        bn.forward(3.0 * rng.standard_normal((16, 4)) + 2.0)
    bn.eval()
    running_mean, running_var = bn.running_mean.copy(), bn.running_var.copy()
    x = rng.standard_normal((8, 4))
    y = bn.forward(x)
    expected = (x - running_mean) / np.sqrt(running_var + 1e-5) * bn.gamma + bn.beta
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(bn.running_mean, running_mean)     # not updated in eval
    np.testing.assert_array_equal(bn.running_var, running_var)
    # each sample on its own gives the same output as in the batch
    np.testing.assert_allclose(bn.forward(x[2:3]), y[2:3], rtol=0, atol=1e-15)
    # and the gradient is the constant-statistics one: dx = dy·γ/sqrt(running_var + eps)
    dy = rng.standard_normal(x.shape)
    bn.forward(x)
    np.testing.assert_allclose(bn.backward(dy), dy * bn.gamma / np.sqrt(running_var + 1e-5),
                               rtol=1e-14)


def test_batchnorm_single_sample_works_in_eval_but_not_in_training(rng):
    bn = BatchNorm(3)
    before = state(bn)
    with pytest.raises(ValueError, match=r"\(1, 3\)"):
        bn.forward(rng.standard_normal((1, 3)))
    assert_state_equal(before, state(bn))                 # running stats untouched
    bn.eval()
    y = bn.forward(rng.standard_normal((1, 3)))
    assert y.shape == (1, 3) and np.all(np.isfinite(y))
    assert np.all(np.isfinite(bn.backward(np.ones((1, 3)))))
    bn.train()
    with pytest.raises(ValueError):
        bn.forward(rng.standard_normal((1, 3)))


def torch_batchnorm(bn):
    """torch.nn.BatchNorm1d in float64 with the layer's parameters and running stats."""
    module = torch.nn.BatchNorm1d(bn.num_features, eps=bn.eps, momentum=bn.momentum).double()
    with torch.no_grad():
        module.weight.copy_(torch.tensor(bn.gamma))
        module.bias.copy_(torch.tensor(bn.beta))
        module.running_mean.copy_(torch.tensor(bn.running_mean))
        module.running_var.copy_(torch.tensor(bn.running_var))
    return module


@pytest.mark.parametrize("shape", [(8, 5), (4, 5, 6)], ids=["NC", "NCL"])
def test_batchnorm_running_stats_match_torch_batchnorm1d(rng, shape):
    bn = BatchNorm(5, momentum=0.1)
    module = torch_batchnorm(bn)
    for step in range(5):
        x = (step + 1.0) * rng.standard_normal(shape) + step
        bn.forward(x)
        module(torch.tensor(x))
        # momentum 0.1 and the unbiased batch variance in running_var, as torch
        np.testing.assert_allclose(bn.running_mean, module.running_mean.numpy(), rtol=1e-12)
        np.testing.assert_allclose(bn.running_var, module.running_var.numpy(), rtol=1e-12)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("shape", [(8, 5), (4, 5, 6)], ids=["NC", "NCL"])
def test_batchnorm_forward_backward_match_torch_batchnorm1d(rng, training, shape):
    bn = BatchNorm(5)
    bn.gamma, bn.beta = rng.standard_normal(5), rng.standard_normal(5)
    for _ in range(3):                                   # non-trivial running statistics
        bn.forward(2.0 * rng.standard_normal(shape) + 1.0)
    module = torch_batchnorm(bn)
    bn.train(training)
    module.train(training)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    y = bn.forward(x)
    dx = bn.backward(dy)
    x_torch = torch.tensor(x, requires_grad=True)
    y_torch = module(x_torch)
    y_torch.backward(torch.tensor(dy))
    np.testing.assert_allclose(y, y_torch.detach().numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(dx, x_torch.grad.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(bn.grad_gamma, module.weight.grad.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(bn.grad_beta, module.bias.grad.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(bn.running_mean, module.running_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var, module.running_var.numpy(), rtol=1e-12)


# ----- x_hat --------------------------------------------------------------------------------
def expected_x_hat(kind, x, layer):
    if kind == "rmsnorm":
        return x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + layer.eps)
    if kind == "layernorm":
        mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    elif layer.training:
        mean, var = x.mean(axis=(0, 2), keepdims=True), x.var(axis=(0, 2), keepdims=True)
    else:
        mean, var = layer.running_mean[:, None], layer.running_var[:, None]
    return (x - mean) / np.sqrt(var + layer.eps)


@pytest.mark.parametrize("kind", ALL_NORMS)
def test_x_hat_property_equals_the_normalized_input(rng, kind):
    layer = make(kind, 8)
    layer.gamma = rng.standard_normal(8)                  # x̂ is before γ and β
    if kind != "rmsnorm":
        layer.beta = rng.standard_normal(8)
    assert layer.x_hat is None                            # nothing normalized yet
    x = 2.0 * rng.standard_normal(input_shape(kind, 8)) + 1.0
    layer.forward(x)
    assert layer.x_hat.shape == x.shape
    np.testing.assert_allclose(layer.x_hat, expected_x_hat(kind, x, layer), rtol=0, atol=1e-12)
    if kind == "batchnorm":                               # in eval: the running statistics
        layer.eval()
        layer.forward(x)
        np.testing.assert_allclose(layer.x_hat, expected_x_hat(kind, x, layer), rtol=0,
                                   atol=1e-12)
