"""create_graph=True: the backward recorded as a graph (autograd/double.py) and the
primitives' formulas (ops/double_backward.py), against PyTorch in float64 and against finite
differences of the first gradient."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import microgradnorm as mg
from microgradnorm.autograd.function import Function


def _leaves(lib, arrays):
    if lib is torch:
        return [torch.tensor(a, requires_grad=True) for a in arrays]
    return [mg.tensor(a, dtype=mg.float64, requires_grad=True) for a in arrays]


def second_order(lib, fn, arrays, weights):
    """The leaves' .grad of Σ w·g, g the gradients of fn's output taken with create_graph."""
    leaves = _leaves(lib, arrays)
    out = fn(lib, *leaves)
    grads = lib.autograd.grad(out.sum(), leaves, create_graph=True, allow_unused=True)
    total = sum((g * lib.tensor(w)).sum() for g, w in zip(grads, weights) if g is not None)
    total.backward()
    return [g.detach().numpy() for g in grads if g is not None], \
        [t.grad.numpy() if t.grad is not None else None for t in leaves]


def assert_second_order_matches_torch(fn, shapes, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    if positive:
        arrays = [np.abs(a) + 0.5 for a in arrays]
    weights = [rng.standard_normal(s) for s in shapes]
    (ours_g, ours), (theirs_g, theirs) = (second_order(lib, fn, arrays, weights)
                                          for lib in (mg, torch))
    for a, b in zip(ours_g, theirs_g):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


CASES = {
    "cube": (lambda lib, x: x ** 3, [(3,)], False),
    "tanh-mlp": (lambda lib, x, w: lib.tanh(x @ w), [(4, 3), (3, 2)], False),
    "linear": (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b).exp(),
               [(2, 4, 3), (2, 3), (2,)], False),
    "linear-1d-weight": (lambda lib, x, w: lib.nn.functional.linear(x, w).sin(), [(5, 3), (3,)],
                         False),
    "relu-broadcast-mul": (lambda lib, x, w: x.relu() * w * x, [(4, 3), (3,)], False),
    "broadcast-add-sub-div": (lambda lib, a, b: (a + b) * (a - b) / (b * b + 1),
                              [(2, 1, 3), (4, 1)], False),
    "unary-chain": (lambda lib, x: lib.sigmoid(x).log() + x.cos().sin() + x.sqrt().rsqrt()
                    + x.log1p().expm1().reciprocal() + x.atan() * x.erf(), [(5,)], True),
    "index-and-reduce": (lambda lib, x: (x[1:, :2] / x.sum(0)[:2]).sqrt()
                         + x[[0, 0, 2]].mean(0)[:2], [(4, 3)], True),
    "max-cat-clamp": (lambda lib, x, y: lib.maximum(x, y).abs().sum() + lib.cat([x, y]).pow(2).sum()
                      + x.reshape(-1).clamp(-1, 0.5).exp().sum(), [(4, 3), (4, 3)], False),
    "where-permute-expand": (lambda lib, x: lib.where(x > 0.3, x * x, -x).sum()
                             + (x.permute(1, 0).expand(2, 3, 4) ** 2).sum() + x.mean(),
                             [(4, 3)], False),
    "vector-matmuls": (lambda lib, x, v: (x @ v) * (v @ x), [(3,), (3,)], False),
    "batched-matmul": (lambda lib, a, b: (a @ b).tanh(), [(2, 3, 4), (4, 5)], False),
    "matrix-vector": (lambda lib, a, v: (a @ v).exp() + (v @ a.transpose(-1, -2)).sin(),
                      [(2, 3, 4), (4,)], False),
    "split-chunk": (lambda lib, x: x.split([1, 2], dim=1)[1].pow(3).sum()
                    + x.chunk(2, 0)[0].exp().sum(), [(4, 3)], False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivatives_match_torch(name):
    fn, shapes, positive = CASES[name]
    assert_second_order_matches_torch(fn, shapes, positive=positive)


@given(rows=st.integers(1, 4), cols=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_the_gradient_of_the_gradient_agrees_with_finite_differences(rows, cols, seed):
    rng = np.random.default_rng(seed)
    w = mg.tensor(rng.standard_normal((cols, 2)), dtype=mg.float64)

    def gradient(x):              # d/dx of a small network: itself differentiable in x
        out = (mg.tanh(x @ w) * x.sum(1, keepdim=True)).exp().mean()
        return mg.autograd.grad(out, x, create_graph=True)[0]

    start = rng.standard_normal((rows, cols)) * 0.5
    v = rng.standard_normal((rows, cols))
    x = mg.tensor(start, dtype=mg.float64, requires_grad=True)
    (gradient(x) * mg.tensor(v)).sum().backward()         # d<g(x), v>/dx by double backward
    numerical = np.zeros_like(start)
    for i in np.ndindex(start.shape):                     # central differences of <g(x), v>
        step = np.zeros_like(start)
        step[i] = 1e-6
        value = [(gradient(mg.tensor(start + s, dtype=mg.float64, requires_grad=True))
                  .detach().numpy() * v).sum() for s in (step, -step)]
        numerical[i] = (value[0] - value[1]) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), numerical, rtol=1e-5, atol=1e-7)


def test_backward_with_create_graph_fills_grad_with_history_as_torch():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        first = x.grad
        assert first.requires_grad and first.grad_fn is not None
        (x ** 2).sum().backward(create_graph=True)   # adds out of place: 3x² + 2x
        assert x.grad is not first
        total = x.grad
        x.grad = None
        total.sum().backward()                        # 6x + 2
        return first.detach().numpy(), total.detach().numpy(), x.grad.numpy()
    for a, b in zip(run(mg), run(torch)):
        np.testing.assert_allclose(a, b)


def test_create_graph_keeps_the_graph_unless_told_not_to():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    mg.autograd.grad(y, x, create_graph=True)
    mg.autograd.grad(y, x)                             # retained by create_graph
    z = (x.exp()).sum()
    mg.autograd.grad(z, x, create_graph=True, retain_graph=False)
    with pytest.raises(RuntimeError, match="second time|freed"):
        mg.autograd.grad(z, x)


def test_a_grad_output_with_history_is_differentiated_too():
    # the double-backward trick: d/dv of <grad(f)(x), v> ... here vᵀ J, J of x ↦ x², in v
    def run(lib):
        x = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        v = lib.tensor([0.3, 0.2, -1.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x * x, x, grad_outputs=v, create_graph=True)
        (g * g).sum().backward()
        return g.detach().numpy(), x.grad.numpy(), v.grad.numpy()
    for a, b in zip(run(mg), run(torch)):
        np.testing.assert_allclose(a, b)


def test_tensor_hooks_see_gradients_with_history():
    x = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    y = x * x
    seen = []
    y.register_hook(lambda g: seen.append(g.requires_grad) or g * 3)
    (g,) = mg.autograd.grad((y * x).sum(), x, create_graph=True)   # 3 · (x · 2x) + x²
    np.testing.assert_allclose(g.detach().numpy(), 7 * x.detach().numpy() ** 2)
    assert seen == [True] and g.requires_grad


class _Square(Function):
    """An op of the engine's own kind with no formula for its gradient."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return 2 * x * grad


def test_an_op_without_a_formula_gives_its_first_gradient_and_refuses_the_second():
    x = mg.tensor([1.0, 3.0], dtype=mg.float64, requires_grad=True)
    (g,) = mg.autograd.grad(_Square.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [2.0, 6.0])
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="double backward through _SquareBackward0"):
        g.sum().backward()
    assert x.grad is None


def test_an_input_written_in_place_after_the_op_is_refused():
    x = mg.tensor([1.0, 3.0], dtype=mg.float64, requires_grad=True)
    a = x * 1
    y = a.sin()
    a.mul_(2)
    with pytest.raises(RuntimeError, match="modified"):
        mg.autograd.grad(y.sum(), x, create_graph=True)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_runs_only_the_nodes_on_a_path_to_its_inputs(create_graph):
    # as torch's: the graph above x was freed by a backward, and grad() never goes there
    def run(lib):
        w = lib.ones(3, dtype=lib.float64, requires_grad=True)
        x = (w * 2).exp()
        x.sum().backward()
        a = lib.ones(3, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad((x * x).sum(), x, create_graph=create_graph)
        (h,) = lib.autograd.grad((x * a).sum(), a, create_graph=create_graph)
        (x * a * a).sum().backward(inputs=[a])
        return g.detach().numpy(), h.detach().numpy(), a.grad.numpy(), w.grad.numpy()
    for a, b in zip(run(mg), run(torch)):
        np.testing.assert_allclose(a, b)


def _in_both(run):
    for a, b in zip(run(mg), run(torch)):
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float))


def test_a_hook_on_a_non_leaf_input_runs_in_grad_as_torchs():
    def run(lib):
        x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        h = x * 2
        h.register_hook(lambda g: g * 100)
        (g,) = lib.autograd.grad((h * h).sum(), [h])
        (k,) = lib.autograd.grad((h * h).sum(), [h], create_graph=True)
        return g.numpy(), k.detach().numpy()
    _in_both(run)


def test_create_graph_grad_is_a_tensor_of_its_own_per_leaf():
    def run(lib):
        u = lib.ones(3, dtype=lib.float64, requires_grad=True)
        v = lib.ones(3, dtype=lib.float64, requires_grad=True)
        (u + v).sum().backward(create_graph=True)
        assert u.grad is not v.grad
        with lib.no_grad():
            u.grad.mul_(2)
        return u.grad.detach().numpy(), v.grad.detach().numpy()
    _in_both(run)


def test_in_place_writes_that_no_formula_reads_are_allowed_as_in_torch():
    def run(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        a = x * 2
        b = a + 1
        a.mul_(3)                                  # Add's formula reads no value of a
        (g1,) = lib.autograd.grad((b * b).sum(), x, create_graph=True)
        y = x * 1
        z = y.exp().sum()                          # exp's formula reads its saved output
        y.add_(1)
        (g2,) = lib.autograd.grad(z, x, create_graph=True)
        w = x * 1
        w[0:1].mul_(2)                             # a write through a view
        (g3,) = lib.autograd.grad(w.sum(), x, create_graph=True)
        g2.sum().backward()
        return g1.detach().numpy(), g2.detach().numpy(), g3.detach().numpy(), x.grad.numpy()
    _in_both(run)


def test_a_complex_gradient_reaching_a_real_input_takes_the_real_part_silently():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = mg.tensor([2.0], dtype=mg.float64, requires_grad=True)
        c = mg.tensor([1 + 2j])
        (g,) = mg.autograd.grad((c / r).abs().sum(), r, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [-np.sqrt(5) / 4])


def test_linear_with_zero_features_under_create_graph():
    for x_shape, w_shape in (((2, 3), (0, 3)), ((0,), (3, 0))):
        x = mg.ones(*x_shape, requires_grad=True)
        w = mg.ones(*w_shape, requires_grad=True)
        gx, gw = mg.autograd.grad(mg.nn.functional.linear(x, w).sum(), [x, w],
                                  create_graph=True)
        assert gx.shape == x_shape and gw.shape == w_shape


def test_a_masked_gradient_depends_on_the_input_with_a_zero_derivative_as_torchs():
    def run(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.relu(x).sum() + x.clamp(-1, 2).sum(), x,
                                 create_graph=True)
        assert g.requires_grad
        (g * g).sum().backward()
        return g.detach().numpy(), x.grad.numpy()
    _in_both(run)


def test_a_captured_step_refuses_a_backward_with_create_graph():
    w = mg.nn.Parameter(mg.ones(3))

    def step(x):
        (g,) = mg.autograd.grad((w * x).sum(), w, create_graph=True)
        return g.sum()
    captured = mg.capture(step)
    with pytest.raises(Exception, match="backward"):
        captured(mg.ones(3))
