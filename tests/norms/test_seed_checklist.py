"""The source derivation's "Test cases to cover", one test (or parametrized test) per
checklist item.

Every test is named after its item: ``test_<section>_<item>``. The layers under test are the
seed-style ``forward(x)`` / ``backward(grad_output)`` classes of ``microgradnorm.layers``;
BatchNorm joins where an item applies to it (it normalizes each channel over the batch, so
"a vector to normalize" is a column of its input rather than a row).

Gradient checks follow the source derivation: central finite differences with h = 1e-5 in
float64 on the loss L = sum(y * dy) for a random dy, and relative error < 1e-5. The relative
error is taken element by element, |a - n| / max(|a| + |n|, 1e-12), and its maximum over the checked
elements must stay below 1e-5.

Where the source derivation and PyTorch disagree, PyTorch's convention wins: the source
says PyTorch has no RMSNorm, but ``torch.nn.functional.rms_norm`` / ``torch.nn.RMSNorm`` exist
since torch 2.4; the RMSNorm tests compare against it *and* against the source's LLaMA-style
reference class, always passing eps explicitly (torch's default is ``finfo(dtype).eps``,
not the source derivation's 1e-6).
"""

import math

import numpy as np
import pytest
import torch

from microgradnorm.layers import BatchNorm, LayerNorm, RMSNorm

H = 1e-5            # the source derivation's finite-difference step
GRAD_RTOL = 1e-5    # the source derivation's bound on the relative error
FULL_CHECK = 1024   # tensors up to this size are checked at every element; larger ones at
SUBSET = 40         # a fixed random subset of this many elements (every element of a
                    # (8, 32, 256) input would take 2 · 65536 forwards: far too slow)

ROW_NORMS = ["layernorm", "rmsnorm"]
ALL_NORMS = ["layernorm", "rmsnorm", "batchnorm"]
SEED_SHAPES = [(4, 64), (2, 10, 128), (1, 1, 512), (8, 32, 256)]


# ----- helpers ------------------------------------------------------------------------------
def make(kind, features, **kwargs):
    return {"layernorm": LayerNorm, "rmsnorm": RMSNorm, "batchnorm": BatchNorm}[kind](
        features, **kwargs)


def param_names(kind):
    return ["gamma"] if kind == "rmsnorm" else ["gamma", "beta"]


def feature_size(kind, shape):
    return shape[1] if kind == "batchnorm" else shape[-1]


def randomize_params(layer, rng):
    """γ ≠ 1 (signs mixed) and β ≠ 0, so every term of the backward is exercised."""
    layer.gamma = rng.uniform(0.5, 2.0, layer.gamma.shape) * rng.choice([-1, 1],
                                                                         layer.gamma.shape)
    if hasattr(layer, "beta"):
        layer.beta = rng.standard_normal(layer.beta.shape)


def analytic_grads(layer, x, dy):
    layer.forward(x)
    grads = {"x": layer.backward(dy).copy(), "gamma": layer.grad_gamma.copy()}
    if getattr(layer, "grad_beta", None) is not None:
        grads["beta"] = layer.grad_beta.copy()
    return grads


def numerical_grad(layer, x, dy, target, indices):
    """dL/d(target.flat[i]) for i in indices, L = sum(y * dy), by central differences.

    target is "x", "gamma" or "beta". L(+h) - L(-h) is summed as sum((y+ - y-) * dy): the
    rows a perturbation does not touch then cancel exactly instead of adding rounding error.
    """
    grads = []
    for i in indices:
        outputs = []
        for step in (H, -H):
            if target == "x":
                shifted = x.copy()
                shifted.flat[i] += step
                outputs.append(layer.forward(shifted))
            else:
                saved = getattr(layer, target)
                shifted = saved.copy()
                shifted.flat[i] += step
                setattr(layer, target, shifted)
                outputs.append(layer.forward(x))
                setattr(layer, target, saved)
        grads.append(np.sum((outputs[0] - outputs[1]) * dy) / (2 * H))
    return np.array(grads)


def relative_error(analytic, numeric):
    """max over elements of |a - n| / max(|a| + |n|, 1e-12)."""
    return float(np.max(np.abs(analytic - numeric)
                        / np.maximum(np.abs(analytic) + np.abs(numeric), 1e-12)))


def check_indices(size, rng):
    if size <= FULL_CHECK:
        return np.arange(size)
    return rng.choice(size, SUBSET, replace=False)


def assert_gradcheck(layer, x, dy, targets, rng):
    """Finite differences agree with forward/backward for each of targets, within 1e-5."""
    analytic = analytic_grads(layer, x, dy)
    for target in targets:
        size = x.size if target == "x" else getattr(layer, target).size
        indices = check_indices(size, rng)
        numeric = numerical_grad(layer, x, dy, target, indices)
        error = relative_error(analytic[target].reshape(-1)[indices], numeric)
        assert error < GRAD_RTOL, f"d{target}: relative error {error:.2e}"


def run(kind, x, dy=None, **kwargs):
    """Forward and backward with the layer's default γ/β; returns (layer, y, dx)."""
    layer = make(kind, feature_size(kind, x.shape), **kwargs)
    y = layer.forward(x)
    dx = layer.backward(np.ones_like(x) if dy is None else dy)
    return layer, y, dx


def as_batch(kind, vectors):
    """vectors (B, D): each row is one vector to normalize. LayerNorm/RMSNorm take them as
    rows; BatchNorm normalizes a channel over the batch, so it gets the transpose (D, B)."""
    return vectors.T.copy() if kind == "batchnorm" else vectors


def from_batch(kind, array):
    return array.T if kind == "batchnorm" else array


def torch_reference(kind, x, gamma, beta, dy, eps):
    """PyTorch float64 forward and autograd backward: (y, dx, dgamma, dbeta or None)."""
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    gt = torch.tensor(gamma, dtype=torch.float64, requires_grad=True)
    bt = None if beta is None else torch.tensor(beta, dtype=torch.float64, requires_grad=True)
    if kind == "layernorm":
        y = torch.nn.functional.layer_norm(xt, (x.shape[-1],), gt, bt, eps=eps)
    elif kind == "rmsnorm":
        y = torch.nn.functional.rms_norm(xt, (x.shape[-1],), gt, eps=eps)
    else:
        y = torch.nn.functional.batch_norm(xt, None, None, gt, bt, training=True, eps=eps)
    y.backward(torch.tensor(dy, dtype=torch.float64))
    return (y.detach().numpy(), xt.grad.numpy(), gt.grad.numpy(),
            None if bt is None else bt.grad.numpy())


def assert_layer_matches_torch(layer, kind, x, dy, atol=1e-10):
    """The layer's forward and gradients at (x, dy) against torch_reference (float64)."""
    y = layer.forward(x)
    dx = layer.backward(dy)
    ref = torch_reference(kind, x, layer.gamma, getattr(layer, "beta", None), dy, layer.eps)
    np.testing.assert_allclose(y, ref[0], rtol=0, atol=atol)
    np.testing.assert_allclose(dx, ref[1], rtol=0, atol=atol)
    np.testing.assert_allclose(layer.grad_gamma, ref[2], rtol=0, atol=atol)
    if ref[3] is not None:
        np.testing.assert_allclose(layer.grad_beta, ref[3], rtol=0, atol=atol)


def assert_matches_torch(kind, shape, rng, atol=1e-10):
    """A layer with random γ, β on a random float64 input agrees with PyTorch."""
    layer = make(kind, feature_size(kind, shape))
    randomize_params(layer, rng)
    assert_layer_matches_torch(layer, kind, rng.standard_normal(shape),
                               rng.standard_normal(shape), atol)


def broadcastable(kind, param):
    """A (D,) or (C,) parameter shaped to broadcast against the layer's input."""
    param = np.asarray(param)
    return param[:, None] if kind == "batchnorm" and param.ndim == 1 else param


@pytest.fixture
def rng():
    return np.random.default_rng(2024)


# ----- Basic correctness --------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 64), (2, 10, 128)])
def test_basic_layernorm_forward_xhat_has_mean_0_and_variance_1(rng, shape):
    layer = LayerNorm(shape[-1])
    randomize_params(layer, rng)                      # x̂ is taken before γ/β
    x = 3.0 * rng.standard_normal(shape) + 7.0
    layer.forward(x)
    x_hat = layer.x_hat
    np.testing.assert_allclose(x_hat.mean(axis=-1), 0.0, atol=1e-12)
    # var(x̂) = var / (var + eps): 1 up to eps / var ≈ 1e-6 here
    np.testing.assert_allclose(x_hat.var(axis=-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("shape", [(4, 64), (2, 10, 128)])
def test_basic_rmsnorm_forward_xhat_has_rms_1(rng, shape):
    layer = RMSNorm(shape[-1])
    randomize_params(layer, rng)
    x = 3.0 * rng.standard_normal(shape) + 7.0
    layer.forward(x)
    rms = np.sqrt((layer.x_hat ** 2).mean(axis=-1))
    np.testing.assert_allclose(rms, 1.0, atol=1e-6)


@pytest.mark.parametrize("kind", ALL_NORMS)
@pytest.mark.parametrize("shape", [(4, 16), (2, 5, 16)], ids=["2d", "3d"])
def test_basic_shape_preservation_2d_and_3d(rng, kind, shape):
    layer = make(kind, feature_size(kind, shape))
    x = rng.standard_normal(shape)
    y = layer.forward(x)
    dx = layer.backward(rng.standard_normal(shape))
    assert y.shape == shape and dx.shape == shape
    assert layer.grad_gamma.shape == layer.gamma.shape


@pytest.mark.parametrize("kind", ALL_NORMS)
def test_basic_default_parameters_output_equals_xhat(rng, kind):
    shape = (6, 3, 16)
    x = 2.0 * rng.standard_normal(shape) + 1.0
    _, y, _ = run(kind, x)
    # x̂ written out here from the source derivation's formulas, independently of the layer
    axes = (0, 2) if kind == "batchnorm" else -1
    if kind == "rmsnorm":
        x_hat = x / np.sqrt((x ** 2).mean(axis=axes, keepdims=True) + 1e-6)
    else:
        mean = x.mean(axis=axes, keepdims=True)
        x_hat = (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, x_hat, rtol=0, atol=1e-12)


def test_basic_hand_calculated_example_layernorm():
    # x = [1, 2, 3, 4]
    # mean  = (1 + 2 + 3 + 4) / 4                      = 10 / 4 = 2.5
    # x - mean                                         = [-1.5, -0.5, 0.5, 1.5]
    # var   = (2.25 + 0.25 + 0.25 + 2.25) / 4           = 5 / 4  = 1.25
    # x̂     = (x - mean) / sqrt(1.25 + 1e-5)            = [-1.5, -0.5, 0.5, 1.5] / sqrt(1.25001)
    #       ≈ [-1.3416354, -0.4472118, 0.4472118, 1.3416354]
    std = math.sqrt(1.25 + 1e-5)
    x_hat = np.array([-1.5 / std, -0.5 / std, 0.5 / std, 1.5 / std])
    np.testing.assert_allclose(x_hat, [-1.3416354, -0.4472118, 0.4472118, 1.3416354],
                               atol=1e-7)

    ln = LayerNorm(4)
    np.testing.assert_allclose(ln.forward(np.array([[1.0, 2.0, 3.0, 4.0]])), [x_hat],
                               rtol=0, atol=1e-15)
    # with γ = 2, β = 1:  y = 2·x̂ + 1 ≈ [-1.6832708, 0.1055764, 1.8944236, 3.6832708]
    ln.gamma, ln.beta = np.full(4, 2.0), np.full(4, 1.0)
    y = ln.forward(np.array([[1.0, 2.0, 3.0, 4.0]]))
    np.testing.assert_allclose(y, [2 * x_hat + 1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(y, [[-1.6832708, 0.1055764, 1.8944236, 3.6832708]], atol=1e-7)
    # backward of dy = [1, 1, 1, 1]: g = dy·γ = 2 is constant, so g - mean(g) = 0 and
    # sum(g·x̂) = 2·sum(x̂) = 0: dx = 0; grad_gamma = dy·x̂ = x̂; grad_beta = dy = 1
    dx = ln.backward(np.ones((1, 4)))
    np.testing.assert_allclose(dx, 0.0, atol=1e-15)
    np.testing.assert_allclose(ln.grad_gamma, x_hat, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(ln.grad_beta, [1.0, 1.0, 1.0, 1.0])


def test_basic_hand_calculated_example_rmsnorm():
    # x = [1, 2, 3, 4]
    # mean(x²) = (1 + 4 + 9 + 16) / 4 = 30 / 4 = 7.5
    # x̂ = x / sqrt(7.5 + 1e-6) ≈ [0.3651483, 0.7302967, 1.0954450, 1.4605934]
    rms = math.sqrt(7.5 + 1e-6)
    x_hat = np.array([1 / rms, 2 / rms, 3 / rms, 4 / rms])
    np.testing.assert_allclose(x_hat, [0.3651483, 0.7302967, 1.0954450, 1.4605934], atol=1e-7)
    rn = RMSNorm(4)
    np.testing.assert_allclose(rn.forward(np.array([[1.0, 2.0, 3.0, 4.0]])), [x_hat],
                               rtol=0, atol=1e-15)


# ----- Gradient checking --------------------------------------------------------------------
# BatchNorm is checked in training mode (its statistics depend on x) and in eval mode.
GRAD_LAYERS = [("layernorm", {}), ("rmsnorm", {}), ("batchnorm", {"train": True}),
               ("batchnorm", {"train": False})]
GRAD_IDS = ["layernorm", "rmsnorm", "batchnorm-train", "batchnorm-eval"]


def gradcheck_layer(kind, options, shape, rng):
    layer = make(kind, feature_size(kind, shape))
    randomize_params(layer, rng)
    if kind == "batchnorm":
        layer.running_mean = rng.standard_normal(layer.num_features)
        layer.running_var = rng.uniform(0.5, 2.0, layer.num_features)
        layer.train(options["train"])
    return layer


@pytest.mark.parametrize("kind, options", GRAD_LAYERS, ids=GRAD_IDS)
def test_gradcheck_dx_finite_differences(rng, kind, options):
    layer = gradcheck_layer(kind, options, (4, 64), rng)
    x, dy = rng.standard_normal((4, 64)), rng.standard_normal((4, 64))
    assert_gradcheck(layer, x, dy, ["x"], rng)


@pytest.mark.parametrize("kind, options", GRAD_LAYERS, ids=GRAD_IDS)
def test_gradcheck_dgamma_finite_differences(rng, kind, options):
    layer = gradcheck_layer(kind, options, (4, 64), rng)
    x, dy = rng.standard_normal((4, 64)), rng.standard_normal((4, 64))
    assert_gradcheck(layer, x, dy, ["gamma"], rng)


@pytest.mark.parametrize("kind, options", [g for g in GRAD_LAYERS if g[0] != "rmsnorm"],
                         ids=[i for i in GRAD_IDS if i != "rmsnorm"])
def test_gradcheck_dbeta_finite_differences_layernorm_only(rng, kind, options):
    layer = gradcheck_layer(kind, options, (4, 64), rng)
    x, dy = rng.standard_normal((4, 64)), rng.standard_normal((4, 64))
    assert_gradcheck(layer, x, dy, ["beta"], rng)
    assert not hasattr(RMSNorm(64), "beta")             # RMSNorm has no β to check


@pytest.mark.parametrize("kind", ROW_NORMS)
@pytest.mark.parametrize("shape", SEED_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gradcheck_multiple_input_shapes(rng, kind, shape):
    # x: every element up to 1024 elements, else 40 random ones (fixed seed); γ, β: all
    layer = gradcheck_layer(kind, {}, shape, rng)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    assert_gradcheck(layer, x, dy, ["x"] + param_names(kind), rng)


@pytest.mark.parametrize("kind, options", GRAD_LAYERS, ids=GRAD_IDS)
def test_gradcheck_nontrivial_gamma_beta(rng, kind, options):
    shape = (3, 4, 16) if kind == "batchnorm" else (2, 3, 16)
    layer = gradcheck_layer(kind, options, shape, rng)
    layer.gamma = rng.uniform(-3.0, 3.0, layer.gamma.shape)      # far from 1, mixed signs
    if kind != "rmsnorm":
        layer.beta = rng.uniform(-3.0, 3.0, layer.beta.shape)    # far from 0
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    assert_gradcheck(layer, x, dy, ["x"] + param_names(kind), rng)
    # γ really enters dx: with γ = 1 the input gradient differs
    layer.forward(x)
    dx = layer.backward(dy)
    layer.gamma = np.ones_like(layer.gamma)
    layer.forward(x)
    assert not np.allclose(layer.backward(dy), dx)


# ----- Numerical stability ------------------------------------------------------------------
def assert_finite(*arrays):
    for array in arrays:
        assert np.all(np.isfinite(array))


@pytest.mark.parametrize("kind", ALL_NORMS)
def test_stability_all_identical_inputs(kind):
    x = as_batch(kind, np.array([[5.0, 5.0, 5.0, 5.0]]))    # zero variance
    _, y, dx = run(kind, x, dy=np.arange(4.0).reshape(x.shape))
    assert_finite(y, dx)
    if kind == "rmsnorm":    # x̂ = 5 / sqrt(25 + 1e-6)
        np.testing.assert_allclose(y, 5 / math.sqrt(25 + 1e-6), rtol=1e-15)
    else:                    # x - mean = 0 exactly: x̂ = 0 = β
        np.testing.assert_array_equal(y, 0.0)


@pytest.mark.parametrize("kind", ALL_NORMS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stability_very_small_inputs(rng, kind, dtype):
    x = as_batch(kind, 1e-10 * rng.standard_normal((4, 16))).astype(dtype)
    dy = rng.standard_normal(x.shape).astype(dtype)
    layer, y, dx = run(kind, x, dy)
    assert_finite(y, dx)
    if dtype is np.float64:
        # eps dominates the variance (LayerNorm: x̂ ~ 1e-10 / sqrt(1e-5)); values as torch's
        assert_layer_matches_torch(layer, kind, x, dy, atol=1e-10)


@pytest.mark.parametrize("kind", ALL_NORMS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stability_very_large_inputs(rng, kind, dtype):
    vectors = 1e10 * rng.standard_normal((4, 16))
    x = as_batch(kind, vectors).astype(dtype)
    _, y, dx = run(kind, x, dy=rng.standard_normal(x.shape).astype(dtype))
    assert_finite(y, dx)
    y = from_batch(kind, y).astype(np.float64)
    # eps is negligible next to a variance of ~1e20: x̂ is exactly standardized
    if kind == "rmsnorm":
        np.testing.assert_allclose(np.sqrt((y ** 2).mean(axis=-1)), 1.0, rtol=1e-5)
    else:
        np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-5)
        np.testing.assert_allclose(y.var(axis=-1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("kind", ALL_NORMS)
def test_stability_all_zeros(rng, kind):
    x = np.zeros((4, 8))
    layer = make(kind, 8)
    beta = rng.standard_normal(8)
    if kind != "rmsnorm":
        layer.beta = beta
    y = layer.forward(x)
    dx = layer.backward(rng.standard_normal(x.shape))
    assert_finite(y, dx)
    if kind == "rmsnorm":
        np.testing.assert_array_equal(y, 0.0)                   # RMSNorm output is 0
    else:
        np.testing.assert_array_equal(y, np.broadcast_to(beta, x.shape))   # LayerNorm: β


@pytest.mark.parametrize("kind", ALL_NORMS)
def test_stability_mixed_scales(kind):
    x = as_batch(kind, np.array([[1e-8, 1e8]]))
    _, y, dx = run(kind, x, dy=as_batch(kind, np.array([[1.0, -2.0]])))
    assert_finite(y, dx)
    y = from_batch(kind, y)
    if kind == "rmsnorm":
        # mean(x²) = (1e-16 + 1e16) / 2 ≈ 5e15; x̂ = x / sqrt(5e15) = [√2·1e-16, √2]
        np.testing.assert_allclose(y, [[math.sqrt(2) * 1e-16, math.sqrt(2)]], rtol=1e-12)
    else:
        # mean ≈ 5e7, x - mean ≈ ∓5e7, var ≈ 2.5e15 ≫ eps: x̂ = [-1, 1]
        np.testing.assert_allclose(y, [[-1.0, 1.0]], rtol=1e-12)


@pytest.mark.parametrize("kind", ["layernorm", "batchnorm"])
@pytest.mark.parametrize("offset, dtype", [(1e6, np.float32), (1e8, np.float64)])
def test_stability_mixed_scales_no_catastrophic_cancellation(kind, offset, dtype):
    # The source derivation's example: a large offset plus a small spread. E[x²] - mean² loses every
    # digit of the variance here (x² needs more mantissa than the dtype has: 1e12 in float32,
    # 1e16 in float64); mean((x - mean)²) keeps it exact: x̂ equals that of x - offset.
    spread = np.array([[0.0, 1.0, 2.0, 3.0]])
    x = as_batch(kind, offset + spread).astype(dtype)
    _, y, dx = run(kind, x)
    assert_finite(y, dx)
    # x - offset = [0, 1, 2, 3]: mean 1.5, var 1.25, x̂ = [-1.5, -0.5, 0.5, 1.5] / sqrt(1.25001)
    expected = np.array([[-1.5, -0.5, 0.5, 1.5]]) / math.sqrt(1.25 + 1e-5)
    np.testing.assert_allclose(from_batch(kind, y), expected, rtol=1e-6)


# ----- PyTorch reference comparison ---------------------------------------------------------
@pytest.mark.parametrize("dtype, atol", [(np.float32, 1e-5), (np.float64, 1e-10)])
def test_pytorch_layernorm_forward_matches_torch_nn_layernorm(rng, dtype, atol):
    x = rng.standard_normal((2, 5, 64)).astype(dtype)
    ln_torch = torch.nn.LayerNorm(64, eps=1e-5).to(torch.float64 if dtype == np.float64
                                                   else torch.float32)
    with torch.no_grad():
        ln_torch.weight.copy_(torch.tensor(rng.standard_normal(64)))
        ln_torch.bias.copy_(torch.tensor(rng.standard_normal(64)))
    ln = LayerNorm(64)
    ln.gamma = ln_torch.weight.detach().numpy().astype(np.float64)
    ln.beta = ln_torch.bias.detach().numpy().astype(np.float64)
    y = ln.forward(x)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, ln_torch(torch.tensor(x)).detach().numpy(), rtol=0, atol=atol)


@pytest.mark.parametrize("dtype, atol", [(np.float32, 1e-5), (np.float64, 1e-10)])
def test_pytorch_layernorm_backward_matches_torch_autograd(rng, dtype, atol):
    # the source's example: dy = ones, plus a random dy (with ones, dx is ~0 and tests little)
    x = rng.standard_normal((2, 5, 64)).astype(dtype)
    torch_dtype = torch.float64 if dtype == np.float64 else torch.float32
    ln_torch = torch.nn.LayerNorm(64).to(torch_dtype)
    with torch.no_grad():
        ln_torch.weight.copy_(torch.tensor(rng.standard_normal(64)))
        ln_torch.bias.copy_(torch.tensor(rng.standard_normal(64)))
    ln = LayerNorm(64)
    ln.gamma = ln_torch.weight.detach().numpy().copy()
    ln.beta = ln_torch.bias.detach().numpy().copy()
    for dy in (np.ones_like(x), rng.standard_normal(x.shape).astype(dtype)):
        ln_torch.zero_grad()
        x_torch = torch.tensor(x, requires_grad=True)
        ln_torch(x_torch).backward(torch.tensor(dy))
        ln.forward(x)
        dx = ln.backward(dy)
        np.testing.assert_allclose(dx, x_torch.grad.numpy(), rtol=0, atol=atol)
        np.testing.assert_allclose(ln.grad_gamma, ln_torch.weight.grad.numpy(), rtol=0,
                                   atol=atol)
        np.testing.assert_allclose(ln.grad_beta, ln_torch.bias.grad.numpy(), rtol=0, atol=atol)


class RMSNormReference(torch.nn.Module):
    """The source derivation's LLaMA-style reference, verbatim."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        rms = torch.sqrt(torch.mean(x ** 2, dim=-1, keepdim=True) + self.eps)
        return x / rms * self.weight


@pytest.mark.parametrize("dtype, atol", [(np.float32, 1e-5), (np.float64, 1e-10)])
def test_pytorch_rmsnorm_forward_matches_reference_implementation(rng, dtype, atol):
    # The source derivation says PyTorch has no RMSNorm; it has one since torch 2.4
    # (torch.nn.functional.rms_norm, torch.nn.RMSNorm), so compare with both it and the
    # seed's LLaMA reference. eps is passed explicitly: torch defaults to finfo(dtype).eps.
    torch_dtype = torch.float64 if dtype == np.float64 else torch.float32
    x = rng.standard_normal((2, 5, 64)).astype(dtype)
    gamma = rng.standard_normal(64)
    rn = RMSNorm(64, eps=1e-6)
    rn.gamma = gamma
    y = rn.forward(x)
    assert y.dtype == dtype

    x_torch = torch.tensor(x)
    weight = torch.tensor(gamma, dtype=torch_dtype)
    builtin = torch.nn.functional.rms_norm(x_torch, (64,), weight, eps=1e-6)
    reference = RMSNormReference(64, eps=1e-6).to(torch_dtype)
    with torch.no_grad():
        reference.weight.copy_(weight)
    np.testing.assert_allclose(y, builtin.numpy(), rtol=0, atol=atol)
    np.testing.assert_allclose(y, reference(x_torch).detach().numpy(), rtol=0, atol=atol)


@pytest.mark.parametrize("shape", [(2, 5, 64), (3, 32)])
def test_pytorch_rmsnorm_backward_matches_numerical_gradients(rng, shape):
    layer = RMSNorm(shape[-1])
    randomize_params(layer, rng)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    assert_gradcheck(layer, x, dy, ["x", "gamma"], rng)
    # and PyTorch's autograd through the source derivation's reference agrees
    reference = RMSNormReference(shape[-1]).double()
    with torch.no_grad():
        reference.weight.copy_(torch.tensor(layer.gamma))
    x_torch = torch.tensor(x, requires_grad=True)
    reference(x_torch).backward(torch.tensor(dy))
    layer.forward(x)
    np.testing.assert_allclose(layer.backward(dy), x_torch.grad.numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(layer.grad_gamma, reference.weight.grad.numpy(), rtol=0,
                               atol=1e-10)


# ----- Edge cases ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ROW_NORMS)
@pytest.mark.parametrize("shape", [(1, 32), (1, 7, 32)], ids=["1xD", "1xLxD"])
def test_edge_batch_size_1(rng, kind, shape):
    assert_matches_torch(kind, shape, rng)
    layer = gradcheck_layer(kind, {}, shape, rng)
    assert_gradcheck(layer, rng.standard_normal(shape), rng.standard_normal(shape),
                     ["x"] + param_names(kind), rng)


def test_edge_batch_size_1_batchnorm_needs_eval():
    # the inference case is where BatchNorm breaks: one sample has no batch statistics
    bn = BatchNorm(4)
    with pytest.raises(ValueError, match="eval"):
        bn.forward(np.ones((1, 4)))
    bn.eval()
    assert bn.forward(np.ones((1, 4))).shape == (1, 4)


@pytest.mark.parametrize("kind", ROW_NORMS)
def test_edge_sequence_length_1(rng, kind):
    shape = (5, 1, 32)
    assert_matches_torch(kind, shape, rng)
    layer = gradcheck_layer(kind, {}, shape, rng)
    assert_gradcheck(layer, rng.standard_normal(shape), rng.standard_normal(shape),
                     ["x"] + param_names(kind), rng)


@pytest.mark.parametrize("kind", ROW_NORMS)
def test_edge_feature_dimension_1(rng, kind):
    shape = (3, 4, 1)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    layer = make(kind, 1)
    randomize_params(layer, rng)
    y = layer.forward(x)
    dx = layer.backward(dy)
    assert_finite(y, dx)
    if kind == "layernorm":
        # D = 1: x - mean = 0, so x̂ = 0 and the output is β, exactly; nothing reaches x or γ
        np.testing.assert_array_equal(y, np.broadcast_to(layer.beta, shape))
        np.testing.assert_array_equal(dx, 0.0)
        np.testing.assert_array_equal(layer.grad_gamma, [0.0])
        np.testing.assert_allclose(layer.grad_beta, [dy.sum()], rtol=1e-15)
    assert_matches_torch(kind, shape, rng)


@pytest.mark.parametrize("kind", ROW_NORMS)
def test_edge_single_element_input(rng, kind):
    x = np.array([[[2.5]]])
    layer, y, dx = run(kind, x, dy=np.array([[[1.5]]]))
    assert y.shape == dx.shape == (1, 1, 1)
    assert_finite(y, dx)
    if kind == "layernorm":
        np.testing.assert_array_equal(y, 0.0)                # β = 0
    else:   # 2.5 / sqrt(2.5² + 1e-6)
        np.testing.assert_allclose(y, 2.5 / math.sqrt(6.25 + 1e-6), rtol=1e-15)
    assert_matches_torch(kind, (1, 1, 1), rng)


@pytest.mark.parametrize("kind", ROW_NORMS)
def test_edge_all_identical_values_per_sample(rng, kind):
    shape = (3, 4, 16)
    values = rng.standard_normal((3, 4, 1))                  # one value per sample
    x = np.broadcast_to(values, shape).copy()
    layer = make(kind, 16)
    randomize_params(layer, rng)
    y = layer.forward(x)
    dx = layer.backward(rng.standard_normal(shape))
    assert_finite(y, dx)
    if kind == "layernorm":
        # the mean of D copies of v may round to v(1 ± 2⁻⁵³): x̂ ≈ 0 only to ~1e-13
        np.testing.assert_allclose(y, np.broadcast_to(layer.beta, shape), atol=1e-10)
    else:
        np.testing.assert_allclose(y, values / np.sqrt(values ** 2 + 1e-6) * layer.gamma,
                                   rtol=1e-12)
    # and the values match PyTorch's for the same input
    ref = torch_reference(kind, x, layer.gamma, getattr(layer, "beta", None),
                          np.ones(shape), layer.eps)
    layer.forward(x)
    np.testing.assert_allclose(layer.backward(np.ones(shape)), ref[1], atol=1e-8)


# ----- Learnable parameters -----------------------------------------------------------------
@pytest.mark.parametrize("kind", ALL_NORMS)
def test_params_gamma_initialized_to_ones(kind):
    layer = make(kind, 12)
    assert layer.gamma.shape == (12,)
    np.testing.assert_array_equal(layer.gamma, np.ones(12))


@pytest.mark.parametrize("kind", ["layernorm", "batchnorm"])
def test_params_beta_initialized_to_zeros_layernorm_only(kind):
    layer = make(kind, 12)
    assert layer.beta.shape == (12,)
    np.testing.assert_array_equal(layer.beta, np.zeros(12))
    assert not hasattr(RMSNorm(12), "beta")


@pytest.mark.parametrize("kind", ALL_NORMS)
def test_params_grads_reflect_most_recent_backward_not_accumulated(rng, kind):
    shape = (6, 4, 8)
    layer = make(kind, feature_size(kind, shape))
    names = param_names(kind)
    x = rng.standard_normal(shape)
    dy1, dy2 = rng.standard_normal(shape), rng.standard_normal(shape)

    def grads_of(dy):
        fresh = make(kind, feature_size(kind, shape))
        fresh.forward(x)
        fresh.backward(dy)
        return {n: getattr(fresh, f"grad_{n}").copy() for n in names}

    expected1, expected2 = grads_of(dy1), grads_of(dy2)
    layer.forward(x)
    layer.backward(dy1)
    for n in names:
        np.testing.assert_allclose(getattr(layer, f"grad_{n}"), expected1[n], rtol=1e-14)
    layer.backward(dy2)                                   # a second backward, same forward
    for n in names:
        np.testing.assert_allclose(getattr(layer, f"grad_{n}"), expected2[n], rtol=1e-14)
        assert not np.allclose(getattr(layer, f"grad_{n}"), expected1[n] + expected2[n])
    # a new forward and backward: the gradients are that call's alone
    x2 = rng.standard_normal(shape)
    layer.forward(x2)
    layer.backward(dy1)
    fresh = make(kind, feature_size(kind, shape))
    fresh.forward(x2)
    fresh.backward(dy1)
    for n in names:
        np.testing.assert_allclose(getattr(layer, f"grad_{n}"), getattr(fresh, f"grad_{n}"),
                                   rtol=1e-14)


@pytest.mark.parametrize("kind", ALL_NORMS)
def test_params_update_changes_output_and_lowers_loss(rng, kind):
    shape = (6, 4, 8)
    layer = make(kind, feature_size(kind, shape))
    randomize_params(layer, rng)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    lr = 0.1
    y = layer.forward(x)
    layer.backward(dy)
    beta = broadcastable(kind, getattr(layer, "beta", 0.0))
    x_hat = (y - beta) / broadcastable(kind, layer.gamma)
    loss = np.sum(y * dy)

    grad_gamma = layer.grad_gamma.copy()
    layer.gamma = layer.gamma - lr * grad_gamma
    y_new = layer.forward(x)
    # y is linear in γ: the output moves by exactly -lr·grad_gamma·x̂ ...
    np.testing.assert_allclose(y_new - y, -lr * broadcastable(kind, grad_gamma) * x_hat,
                               atol=1e-12)
    # ... and L = sum(y·dy) drops by exactly lr·|grad_gamma|²
    loss_new = np.sum(y_new * dy)
    assert loss_new < loss
    np.testing.assert_allclose(loss - loss_new, lr * np.sum(grad_gamma ** 2), rtol=1e-9)

    if kind != "rmsnorm":
        layer.backward(dy)
        grad_beta = layer.grad_beta.copy()
        layer.beta = layer.beta - lr * grad_beta
        y_newer = layer.forward(x)
        np.testing.assert_allclose(y_newer - y_new, np.broadcast_to(
            -lr * broadcastable(kind, grad_beta), shape), atol=1e-12)
        np.testing.assert_allclose(loss_new - np.sum(y_newer * dy),
                                   lr * np.sum(grad_beta ** 2), rtol=1e-9)

