"""``F.linear`` as one ``Linear`` node (ops/linalg.py): values and the three gradients
against PyTorch's ``F.linear`` and against the graph it replaces (``x @ w.T + b``), for
every input rank, a 1-D weight, empty leading dims, exotic biases (which keep the graph),
the gradients asked for only, float32, and finite differences over drawn shapes."""

import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import arrays, shapes

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import dtypes, nn
from microgradnorm.ops import linalg

IN, OUT = 4, 3


def leaves(*arrays_, requires_grad=True):
    """Each array as a microgradnorm leaf and a torch leaf (None stays None)."""
    ours = [None if a is None else mg.tensor(a, requires_grad=requires_grad) for a in arrays_]
    theirs = [None if a is None else torch.tensor(a, requires_grad=requires_grad)
              for a in arrays_]
    return ours, theirs


def graph(x, w, b):
    """The graph ``F.linear`` recorded before it had its node: the oracle besides torch."""
    out = x @ (w.T if w.ndim == 2 else w)
    return out if b is None else out + b


def check_against_torch_and_graph(x, w, b, atol=1e-12):
    """Forward and the gradient of a random upstream into each input, against torch's
    F.linear and against ``graph`` on copies of the leaves."""
    (xs, ws, bs), (xt, wt, bt) = leaves(x, w, b)
    y, yt = F.linear(xs, ws, bs), TF.linear(xt, wt, bt)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=0, atol=atol)
    assert y.shape == tuple(yt.shape) and str(y.dtype) == str(yt.dtype)
    upstream = np.random.default_rng(1).standard_normal(yt.shape).astype(x.dtype)
    y.backward(upstream)
    yt.backward(torch.tensor(upstream))
    (xg, wg, bg), _ = leaves(x, w, b)
    graph(xg, wg, bg).backward(upstream)
    for ours, theirs, oracle in zip((xs, ws, bs), (xt, wt, bt), (xg, wg, bg)):
        if ours is None:
            continue
        assert ours.grad.shape == ours.shape and ours.grad.dtype == ours.dtype
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=0, atol=atol)
        np.testing.assert_allclose(ours.grad.numpy(), oracle.grad.numpy(), rtol=0, atol=atol)
    return y


def draw(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("lead", [(), (5,), (2, 5), (2, 3, 2)], ids=lambda s: f"lead{s}")
@pytest.mark.parametrize("with_bias", [False, True])
def test_every_rank_with_and_without_bias_is_one_node_as_torch(lead, with_bias):
    x, w = draw(lead + (IN,)), draw((OUT, IN), 1)
    b = draw((OUT,), 2) if with_bias else None
    y = check_against_torch_and_graph(x, w, b)
    assert y.grad_fn.name == "Linear" and repr(y.grad_fn).startswith("<LinearBackward")
    (xs, ws, bs), _ = leaves(x, w, b)
    stats = mg.graph_stats(F.linear(xs, ws, bs).sum())
    assert stats.nodes == 2 and stats.by_op == {"Linear": 1, "Sum": 1}


@pytest.mark.parametrize("lead", [(), (5,), (2, 5), (2, 3, 2)], ids=lambda s: f"lead{s}")
def test_a_1d_weight_gives_one_output_without_a_dim(lead):
    y = check_against_torch_and_graph(draw(lead + (IN,)), draw((IN,), 1), None)
    assert y.shape == lead and y.grad_fn.name == "Linear"


@pytest.mark.parametrize("x_shape, w_shape", [((0, IN), (OUT, IN)), ((2, 0, IN), (OUT, IN)),
                                              ((3, 0), (OUT, 0)), ((0, IN), (IN,))])
def test_empty_rows_or_features(x_shape, w_shape):
    b = draw((OUT,), 2) if len(w_shape) == 2 else None
    y = check_against_torch_and_graph(draw(x_shape), draw(w_shape, 1), b)
    assert y.grad_fn.name == "Linear"


@pytest.mark.parametrize("lead, b_shape", [((5,), (1, OUT)), ((5,), (1,)), ((5,), ()),
                                           ((5,), (5, OUT)), ((2, 5), (5, OUT)),
                                           ((2, 5), (2, 1, OUT))])
def test_a_bias_that_only_broadcasts_keeps_the_graph(lead, b_shape):
    y = check_against_torch_and_graph(draw(lead + (IN,)), draw((OUT, IN), 1),
                                      draw(b_shape, 2))
    assert y.grad_fn.name == "Add"
    assert "Linear" not in mg.graph_stats(y).by_op


@pytest.mark.parametrize("needs", [n for n in itertools.product([False, True], repeat=3)
                                   if any(n)], ids=lambda n: "".join("xwb"[i] for i in
                                                                      range(3) if n[i]))
def test_only_the_gradients_asked_for_are_computed_or_kept(needs, monkeypatch):
    calls = []

    def counting(a, b):
        calls.append((a.shape, b.shape))
        return real(a, b)

    real = linalg._matmul
    x, w, b = draw((2, 5, IN)), draw((OUT, IN), 1), draw((OUT,), 2)
    xs, ws, bs = (mg.tensor(a, requires_grad=n) for a, n in zip((x, w, b), needs))
    y = F.linear(xs, ws, bs)
    saved = [np.shares_memory(a, t._array) for t in (xs, ws) for a in
             y.grad_fn.saved_arrays()]
    # x is kept for dW only, W for dx only
    assert saved.count(True) == needs[1] + needs[0]
    monkeypatch.setattr(linalg, "_matmul", counting)
    y.backward(np.ones(y.shape))
    assert len(calls) == needs[0] + needs[1]                     # dx and dW: one GEMM each
    if needs[1]:
        assert ((OUT, 10), (10, IN)) in calls                   # all leading dims in one
    (xt, wt, bt) = (torch.tensor(a, requires_grad=n) for a, n in zip((x, w, b), needs))
    TF.linear(xt, wt, bt).backward(torch.ones(y.shape, dtype=torch.float64))
    for ours, theirs in zip((xs, ws, bs), (xt, wt, bt)):
        assert (ours.grad is None) == (theirs.grad is None)
        if ours.grad is not None:
            np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def test_float32_within_float32_rounding_of_torch():
    x, w, b = (draw(s, i, np.float32) for i, s in enumerate([(8, 16, 64), (32, 64), (32,)]))
    y = check_against_torch_and_graph(x, w, b, atol=1e-4)
    assert y.dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", [3, 4096, 2**20 // 256 + 1])    # BLAS's sum, then NumPy's
def test_the_bias_gradient_is_the_row_sum_on_both_sides_of_the_blas_size(rows, dtype):
    g = np.random.default_rng(rows).standard_normal((rows, 256)).astype(dtype)
    exact = g.astype(np.float64).sum(0)
    summed = linalg._row_sum(g)
    assert summed.dtype == dtype and summed.shape == (256,)
    np.testing.assert_allclose(summed, exact, rtol=0, atol=4 * np.finfo(dtype).eps * rows)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_rounds_once_as_torch(dtype):
    if dtype == "bfloat16" and not dtypes.has_bfloat16():
        pytest.skip("bfloat16 needs ml_dtypes")
    name, dtype = dtype, getattr(dtypes, dtype)
    # torch sums the product and adds the bias in float32, then rounds once (the graph
    # x @ w.T + b rounds the product, then the sum: an ulp apart in places)
    arrays_ = [draw(s, i).astype(np.float32) for i, s in enumerate([(2, 5, 8), (OUT, 8), (OUT,)])]
    ours = [mg.tensor(a).to(dtype).requires_grad_() for a in arrays_]
    theirs = [torch.tensor(a).to(getattr(torch, name)).requires_grad_() for a in arrays_]
    y, expected = F.linear(*ours), TF.linear(*theirs)
    y.backward(mg.ones(y.shape).to(dtype))
    expected.backward(torch.ones(expected.shape).to(expected.dtype))
    for got, want in zip([y, *(t.grad for t in ours)], [expected, *(t.grad for t in theirs)]):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.detach().float().numpy(), want.detach().float().numpy())


def test_complex_gradients_conjugate_as_torch():
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) + 1j * rng.standard_normal(s)
              for s in [(2, 5, IN), (OUT, IN), (OUT,)]]
    ours, theirs = leaves(*values)
    F.linear(*ours).abs().sum().backward()
    TF.linear(*theirs).abs().sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=0, atol=1e-12)


def test_nn_linear_and_multihead_attention_record_linear_nodes():
    x = mg.randn(2, 3, 8)
    assert mg.graph_stats(nn.Linear(8, 4)(x)).by_op == {"Linear": 1}
    attention = nn.MultiheadAttention(8, 2, batch_first=True)
    out, _ = attention(x, x, x)
    assert mg.graph_stats(out).by_op["Linear"] == 4              # q, k, v and out_proj


def test_an_in_place_change_of_a_kept_input_is_caught():
    x, w = mg.tensor(draw((5, IN)), requires_grad=True), mg.tensor(draw((OUT, IN), 1))
    y = F.linear(x, w)                             # W frozen: x is not kept, W is
    with mg.no_grad():
        x.add_(1.0)
    y.backward(np.ones(y.shape))                   # dx reads W only: x's change is harmless
    w = mg.tensor(draw((OUT, IN), 1), requires_grad=True)
    y = F.linear(x, w)
    with mg.no_grad():
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        y.backward(np.ones(y.shape))


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_gradcheck_over_drawn_shapes(data):
    lead = data.draw(shapes(0, 3, 3, min_side=0))
    in_features, out_features = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    kind = data.draw(st.sampled_from(["none", "bias", "1-D weight"]))
    w_shape = (in_features,) if kind == "1-D weight" else (out_features, in_features)
    inputs = [mg.tensor(data.draw(arrays(s)), requires_grad=True)
              for s in (lead + (in_features,), w_shape)]
    if kind == "bias":
        inputs.append(mg.tensor(data.draw(arrays((out_features,))), requires_grad=True))
    assert F.linear(*inputs).grad_fn.name == "Linear"
    assert mg.gradcheck(F.linear, inputs)
