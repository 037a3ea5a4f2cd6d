"""GELU, exact and tanh, both ways (``norms.FUSED_OPS["gelu"]``): against PyTorch in
float64, finite differences over drawn shapes, non-finite and empty inputs, and a model's
impl reaching its GELUs."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import arrays, shapes

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn

IMPLS = ("composite", "fused")
FORMS = ("none", "tanh")


def gelu_both(x, approximate, impl, g):
    """(our y, our dx), (torch's y, torch's dx) for the upstream gradient g."""
    ours, theirs = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = F.gelu(ours, approximate, impl=impl)
    t_out = TF.gelu(theirs, approximate=approximate)
    (out * mg.tensor(g)).sum().backward()
    (t_out * torch.tensor(g)).sum().backward()
    return (out.data, ours.grad), (t_out.detach().numpy(), theirs.grad.numpy())


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("approximate", FORMS)
def test_gelu_matches_torch_float64(impl, approximate):
    rng = np.random.default_rng(0)
    x = 3 * rng.standard_normal((5, 7))
    x[0, :3] = [0.0, 40.0, -40.0]                    # the flat tails
    (y, dx), (t_y, t_dx) = gelu_both(x, approximate, impl, rng.standard_normal(x.shape))
    np.testing.assert_allclose(y, t_y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dx, t_dx, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("approximate", FORMS)
def test_fused_gelu_is_one_node_saving_x(approximate):
    x = mg.tensor(np.linspace(-3, 3, 12).reshape(3, 4), requires_grad=True)
    fused = F.gelu(x, approximate, impl="fused")
    composite = F.gelu(x, approximate, impl="composite")
    assert mg.graph_stats(fused).nodes == 1 < mg.graph_stats(composite).nodes
    assert mg.graph_stats(fused).saved_bytes == x.detach().numpy().nbytes
    assert fused.grad_fn.name == "Gelu"


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_gelu_gradcheck_over_drawn_shapes(data):
    x = data.draw(arrays(data.draw(shapes(0, 3, 4)), low=-4.0, high=4.0))
    for approximate in FORMS:
        for impl in IMPLS:
            assert mg.gradcheck(lambda t, a=approximate, i=impl: F.gelu(t, a, impl=i),
                                [mg.tensor(x, requires_grad=True)])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")    # the composite's inf · 0
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("approximate", FORMS)
def test_gelu_non_finite_and_extreme_inputs_as_torch(impl, approximate):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e10, -1e10, 30.0, -30.0, 1e200])
    (y, dx), (t_y, t_dx) = gelu_both(x, approximate, impl, np.ones_like(x))
    np.testing.assert_array_equal(y, t_y)            # NaN where torch has NaN, same signs
    np.testing.assert_allclose(dx, t_dx, rtol=1e-12, atol=0)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 4)])
def test_gelu_zero_size(impl, shape):
    x = mg.tensor(np.zeros(shape), requires_grad=True)
    y = F.gelu(x, "tanh", impl=impl)
    y.sum().backward()
    assert y.shape == x.grad.shape == shape


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("approximate", FORMS)
def test_fused_gelu_keeps_the_dtype_and_matches_torch(dtype, approximate):
    x = np.random.default_rng(1).standard_normal((4, 5))
    ours = mg.tensor(x, dtype=dtype, requires_grad=True)
    theirs = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    y, t_y = F.gelu(ours, approximate, impl="fused"), TF.gelu(theirs, approximate=approximate)
    y.sum().backward()
    t_y.sum().backward()
    assert str(y.dtype) == str(ours.grad.dtype) == f"torch.{dtype}"
    tol = 1e-6 if dtype == "float32" else 1e-2
    np.testing.assert_allclose(np.asarray(y.data, np.float64), t_y.double().detach().numpy(),
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(ours.grad, np.float64), theirs.grad.double().numpy(),
                               rtol=tol, atol=tol)


def test_gelu_bad_arguments():
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh', got 'erf'"):
        F.gelu(mg.tensor([1.0]), "erf")
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        F.gelu(mg.tensor([1, 2]))
    with pytest.raises(ValueError, match="impl"):
        F.gelu(mg.tensor([1.0]), impl="numba")


@pytest.mark.parametrize("impl", IMPLS)
def test_a_models_impl_reaches_its_gelus(impl):
    """GPT(impl=) and set_impl switch the feed-forward's tanh GELU with the norms."""
    model = nn.GPT(vocab_size=11, context_length=4, d_model=8, n_heads=2, n_layers=1, impl=impl,
                   dtype="float64")
    logits = model(np.array([[1, 2, 3]]))
    by_op = mg.graph_stats(logits).by_op
    assert ("Gelu" in by_op) == (impl == "fused")
    assert ("Tanh" in by_op) == (impl == "composite")
    block = nn.Sequential(nn.Linear(3, 3, dtype="float64"), nn.GELU()).set_impl("composite")
    assert "Erf" in mg.graph_stats(block(mg.tensor(np.ones((2, 3))))).by_op
