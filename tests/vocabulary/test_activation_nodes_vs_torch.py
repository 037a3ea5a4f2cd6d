"""The common activations as one node each (activation_nodes.py: silu, leaky_relu, elu,
softplus, mish, hardtanh, relu6, glu; selu and celu of activations.py; relu) against
PyTorch: the node's name, the values and the gradient of a random upstream in float64,
float32, bfloat16 and float16 on inputs with 0, -0.0, NaN, ±inf and each function's branch
points; second derivatives (create_graph) in float64; gradcheck and gradgradcheck over
hypothesis-drawn shapes; ``inplace=True``."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings

import microgradnorm as mg
import microgradnorm.nn.functional as F
from strategies import arrays, shapes
from torch_compare import one_torch_thread  # noqa: F401  (autouse: one torch thread)

TF = torch.nn.functional


def both(name, *args, **kwargs):
    """(ours, theirs): the F function ``name`` of each library with these arguments."""
    return (lambda x, **more: getattr(F, name)(x, *args, **kwargs, **more),
            lambda x, **more: getattr(TF, name)(x, *args, **kwargs, **more))


# name: (ours, theirs), torch's node name, the branch points (kinks) of the function
CASES = {
    "silu": (both("silu"), "SiluBackward0", []),
    "leaky_relu": (both("leaky_relu"), "LeakyReluBackward0", [0.0]),
    "leaky_relu_slope": (both("leaky_relu", 0.3), "LeakyReluBackward0", [0.0]),
    "elu": (both("elu"), "EluBackward0", [0.0]),
    "elu_alpha": (both("elu", 0.5), "EluBackward0", [0.0]),
    "selu": (both("selu"), "EluBackward0", [0.0]),
    "celu": (both("celu", 0.7), "CeluBackward0", [0.0]),
    "softplus": (both("softplus"), "SoftplusBackward0", [20.0]),
    "softplus_beta": (both("softplus", 2.0, 5.0), "SoftplusBackward0", [2.5]),
    "softplus_beta_thirds": (both("softplus", 3.0, 1.0), "SoftplusBackward0", [1 / 3]),
    "mish": (both("mish"), "MishBackward0", []),
    "hardtanh": (both("hardtanh"), "HardtanhBackward0", [-1.0, 1.0]),
    "hardtanh_bounds": (both("hardtanh", -0.5, 2.0), "HardtanhBackward0", [-0.5, 2.0]),
    "relu6": (both("relu6"), "HardtanhBackward0", [0.0, 6.0]),
    "relu": (both("relu"), "ReluBackward0", [0.0]),
}
# torch's elu backward gives NaN at a NaN x in its vectorised loop and the gradient times
# the scale in its scalar loop (a tensor's tail, a short tensor): the scalar loop's is the
# one here (as before it was one node), so those points are left out of that comparison
ELU_FAMILY = {"elu", "elu_alpha", "selu", "celu"}
IN_PLACE = ["silu", "leaky_relu", "elu", "selu", "celu", "mish", "hardtanh", "relu6", "relu"]
# (rtol, atol) of each dtype against torch: the same formula, its exp and log1p NumPy's
TOLERANCES = {"float64": (1e-12, 1e-300), "float32": (2e-6, 1e-37),
              "bfloat16": (2 ** -7, 1e-30), "float16": (2 ** -10, 1e-7)}


def special_inputs(kinks, n=40, seed=0):
    """0, -0.0, NaN, ±inf, far out, the kinks themselves and either side of them, then
    random values."""
    points = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 30.0, -30.0, 100.0, -100.0,
              1e-8, -1e-8]
    for kink in kinks:
        points += [kink, np.nextafter(kink, np.inf), np.nextafter(kink, -np.inf)]
    random = 3 * np.random.default_rng(seed).standard_normal(n)
    return np.concatenate([points, random])


def as_float64(t):
    return t.detach().to(mg.float64).numpy() if isinstance(t, mg.Tensor) \
        else t.detach().double().numpy()


def run(fn, library, data, dtype, upstream):
    """(the output, x's gradient, the node's name) of fn on data in dtype."""
    if library is mg:
        x = mg.tensor(data).to(getattr(mg, dtype)).requires_grad_()
        out = fn(x)
        out.backward(mg.tensor(upstream).to(getattr(mg, dtype)))
    else:
        x = torch.tensor(data).to(getattr(torch, dtype)).requires_grad_()
        out = fn(x)
        out.backward(torch.tensor(upstream).to(getattr(torch, dtype)))
    return as_float64(out), as_float64(x.grad), out.grad_fn.name()


def assert_close(got, expected, dtype):
    rtol, atol = TOLERANCES[dtype]
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", list(TOLERANCES))
@pytest.mark.parametrize("name", list(CASES))
def test_values_gradients_and_node_name_match_torch(name, dtype):
    (ours, theirs), node, kinks = CASES[name]
    data = special_inputs(kinks)
    upstream = np.random.default_rng(1).standard_normal(data.shape)
    try:
        expected = run(theirs, torch, data, dtype, upstream)
    except RuntimeError:                     # no torch CPU kernel for this dtype
        pytest.skip(f"torch has no CPU {name} for {dtype}")
    got = run(ours, mg, data, dtype, upstream)
    assert got[2] == expected[2] == node
    assert_close(got[0], expected[0], dtype)
    compared = ~np.isnan(data) if name in ELU_FAMILY else Ellipsis
    assert_close(got[1][compared], expected[1][compared], dtype)


@pytest.mark.parametrize("dtype", list(TOLERANCES))
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_values_gradients_and_node_name_match_torch(dim, dtype):
    data = special_inputs([], n=47).reshape(6, 10)
    upstream = np.random.default_rng(2).standard_normal(data.shape)
    upstream = upstream[:3] if dim == 0 else upstream[:, :5]
    expected = run(lambda x: TF.glu(x, dim), torch, data, dtype, upstream)
    got = run(lambda x: F.glu(x, dim), mg, data, dtype, upstream)
    assert got[2] == expected[2] == "GluBackward0"
    assert_close(got[0], expected[0], dtype)
    assert_close(got[1], expected[1], dtype)


def second_derivatives(fn, library, data, upstream, direction):
    """x's and the upstream's gradients of sum(dx · direction), dx = the gradient of fn at
    x for the upstream (create_graph=True)."""
    x = library.tensor(data, requires_grad=True)
    grad = library.tensor(upstream, requires_grad=True)
    (dx,) = library.autograd.grad(fn(x), x, grad, create_graph=True)
    assert dx.requires_grad
    (dx * library.tensor(direction)).sum().backward()
    zeros = np.zeros(data.shape)
    return [zeros if t.grad is None else t.grad.numpy() for t in (x, grad)]


@pytest.mark.parametrize("name", list(CASES) + ["glu"])
def test_second_derivatives_match_torch(name):
    if name == "glu":
        ours, theirs, kinks = (lambda x: F.glu(x, 0)), (lambda x: TF.glu(x, 0)), []
    else:
        (ours, theirs), _, kinks = CASES[name]
    # finite inputs: the kinks, either side, 0, far out and random values
    data = special_inputs(kinks, n=30, seed=3)
    data = data[np.isfinite(data)][:32]
    out_shape = (16,) if name == "glu" else data.shape
    rng = np.random.default_rng(4)
    upstream, direction = rng.standard_normal(out_shape), rng.standard_normal(data.shape)
    expected = second_derivatives(theirs, torch, data, upstream, direction)
    got = second_derivatives(ours, mg, data, upstream, direction)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


def away_from(values, kinks, gap=1e-3):
    """values moved off each kink (finite differences straddling one disagree)."""
    values = np.array(values, dtype=np.float64)
    for kink in kinks:
        values = np.where(np.abs(values - kink) < gap, values + 10 * gap, values)
    return values


GRADCHECKED = ["silu", "leaky_relu_slope", "elu_alpha", "celu", "softplus_beta", "mish",
               "hardtanh_bounds", "relu6"]


@settings(max_examples=15, deadline=None)
@given(shape=shapes(0, 3), data=arrays((24,), -3.0, 3.0))
def test_gradcheck_and_gradgradcheck_on_drawn_shapes(shape, data):
    for name in GRADCHECKED:
        (ours, _), _, kinks = CASES[name]
        # scaled so that relu6's and softplus_beta's branch points lie among the values
        values = away_from(np.resize(data, shape) * 2.5, kinks)
        x = mg.tensor(values, requires_grad=True)
        assert mg.autograd.gradcheck(ours, (x,)), name
        assert mg.autograd.gradgradcheck(ours, (x,)), name


@settings(max_examples=15, deadline=None)
@given(shape=shapes(1, 3), data=arrays((24,), -3.0, 3.0))
def test_glu_gradcheck_and_gradgradcheck_on_drawn_shapes(shape, data):
    doubled = shape[:-1] + (2 * shape[-1],)
    x = mg.tensor(np.resize(data, doubled), requires_grad=True)
    assert mg.autograd.gradcheck(F.glu, (x,))
    assert mg.autograd.gradgradcheck(F.glu, (x,))


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_matches_torch(name):
    # written into a non-leaf: the values, the input's gradient, the result is the input
    (ours, theirs), _, kinks = CASES[name]
    data = special_inputs(kinks)
    data = data[np.isfinite(data)]
    upstream = np.random.default_rng(5).standard_normal(data.shape)
    results = []
    for library, fn in ((mg, ours), (torch, theirs)):
        x = library.tensor(data, requires_grad=True)
        y = x * 1
        out = fn(y, inplace=True)
        assert out is y
        out.backward(library.tensor(upstream))
        results.append((as_float64(out), x.grad.numpy()))
    # torch's in-place elu differentiates from its result: the last bits of tiny slopes
    # (celu's, with its 1/α rounded to float, in the seventh digit); here from the input
    rtol = 1e-6 if name == "celu" else 1e-12
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_on_a_leaf_that_requires_grad_is_refused_as_torch(name):
    (ours, theirs), _, _ = CASES[name]
    with pytest.raises(RuntimeError):
        theirs(torch.ones(3, requires_grad=True), inplace=True)
    x = mg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        ours(x, inplace=True)
    np.testing.assert_array_equal(x.detach().numpy(), np.ones(3))


def test_hardtanh_of_integers_stays_integral_as_torch():
    data = np.array([-3, -1, 0, 1, 4])
    for dtype in ("int64", "int32"):
        got = F.hardtanh(mg.tensor(data.astype(dtype)))
        expected = TF.hardtanh(torch.tensor(data.astype(dtype)))
        assert str(got.dtype) == str(expected.dtype)
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
