"""CausalSelfAttention under the fused impl is one scaled_dot_product_attention node (the
numba kernels' blocked online softmax by default): its output and every gradient agree with
the explicit graph of the composite impl in float64; with dropout acting it keeps the graph,
whose mask is nn.Dropout's."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn
from microgradnorm.autograd import topological_order


def functions(out):
    """The names of the functions of the nodes behind ``out``."""
    return {node.function.__name__ for node in topological_order([out.grad_fn])}


def run(module, x, upstream, impl):
    """Output and the gradients of x and every parameter, under ``impl``."""
    module.set_impl(impl)
    module.zero_grad()
    xt = mg.tensor(x, requires_grad=True)
    out = module(xt)
    (out * mg.tensor(upstream)).sum().backward()
    grads = [xt.grad.numpy()] + [p.grad.numpy() for p in module.parameters()]
    return out, grads


@pytest.mark.parametrize("kernels", ["numba", "reference"])
@pytest.mark.parametrize("T", [1, 11, 70])            # 70: more than one block of queries
def test_the_fused_module_agrees_with_the_explicit_graph(T, kernels):
    if kernels == "numba":
        pytest.importorskip("numba")
    mg.manual_seed(0)
    module = nn.CausalSelfAttention(32, 4, dtype=mg.float64)
    rng = np.random.default_rng(T)
    x, upstream = rng.standard_normal((2, T, 32)), rng.standard_normal((2, T, 32))
    with mg.cpu_kernels(kernels):
        fused, fused_grads = run(module, x, upstream, "fused")
    composite, composite_grads = run(module, x, upstream, "composite")
    assert "ScaledDotProductAttention" in functions(fused)
    assert "ScaledDotProductAttention" not in functions(composite)
    np.testing.assert_allclose(fused.detach().numpy(), composite.detach().numpy(),
                               rtol=0, atol=1e-12)
    for got, want in zip(fused_grads, composite_grads):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_the_comparison_can_fail():
    """The causal mask matters: attention over every position differs from the graph."""
    mg.manual_seed(0)
    module = nn.CausalSelfAttention(16, 2, dtype=mg.float64)
    x = mg.tensor(np.random.default_rng(1).standard_normal((1, 5, 16)))
    q, k, v = (t.reshape(1, 5, 2, 8).transpose(1, 2) for t in module.qkv(x).split(16, axis=-1))
    full = mg.functional.scaled_dot_product_attention(q, k, v)
    full = module.proj(full.transpose(1, 2).reshape(1, 5, 16))
    module.set_impl("composite")
    assert np.abs(full.detach().numpy() - module(x).detach().numpy()).max() > 1e-3


def test_with_dropout_acting_the_fused_impl_keeps_the_graph_and_its_mask():
    module = nn.CausalSelfAttention(16, 2, dropout=0.3, dtype=mg.float64)
    x = mg.tensor(np.random.default_rng(2).standard_normal((2, 6, 16)), requires_grad=True)
    outputs = {}
    for impl in ("fused", "composite"):
        module.set_impl(impl)
        mg.manual_seed(5)                          # the same nn.Dropout mask both times
        outputs[impl] = module(x)
    assert "ScaledDotProductAttention" not in functions(outputs["fused"])
    np.testing.assert_allclose(outputs["fused"].detach().numpy(),   # (softmax: fused
                               outputs["composite"].detach().numpy(),  # or composite)
                               rtol=0, atol=1e-12)
    module.set_impl("fused").eval()                # dropout off: the one node again
    assert "ScaledDotProductAttention" in functions(module(x))
