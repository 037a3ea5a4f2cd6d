""".grad as PyTorch keeps it: the setter refuses what backward could not add to,
zero_grad(set_to_none=False) really zeroes; and backward frees the activations a kept
output would otherwise hold."""

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.nn as nn
from microgradnorm import optim, viz

torch = pytest.importorskip("torch")


# ----- the .grad setter ---------------------------------------------------------------------
@pytest.mark.parametrize("bad, error", [
    (np.zeros(4), RuntimeError), (np.zeros((1, 3)), RuntimeError),
    (np.zeros(3, dtype=np.float32), RuntimeError), (np.zeros(3, dtype=np.int64), RuntimeError),
    ([0.0, 0.0, 0.0], TypeError), (np.float64(0.0), TypeError), ("grad", TypeError),
    (np.zeros(3), TypeError)],
    ids=["shape", "extra_dim", "float32", "int64", "list", "numpy_scalar", "string", "array"])
def test_the_grad_setter_refuses_what_torch_refuses(bad, error):
    x = mg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    x.grad = mg.tensor(np.ones(3))
    tx = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    # an array is a Tensor on both sides for the shape and dtype cases, and a bare
    # ndarray (refused by both) for the last
    wrap = error is RuntimeError
    as_torch = torch.from_numpy(bad) if wrap else bad
    with pytest.raises(error):
        tx.grad = as_torch
    with pytest.raises(error, match="grad"):
        x.grad = mg.tensor(bad) if wrap else bad
    np.testing.assert_array_equal(x.grad, 1.0)            # unchanged
    (x * 2).sum().backward()                              # accumulates as before
    np.testing.assert_array_equal(x.grad, 3.0)


def test_the_grad_setter_takes_none_and_a_tensor_and_keeps_it():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    g = mg.tensor([0.5, 0.5])
    x.grad = g
    assert x.grad is g                                    # as torch: the object itself
    (x * 2).sum().backward()                              # accumulates into its memory
    assert x.grad is g and g.tolist() == [2.5, 2.5]
    x.grad = None
    assert x.grad is None


# ----- zero_grad(set_to_none=False) ---------------------------------------------------------
def test_zero_grad_without_none_zeroes_nan_and_inf_in_place():
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)
    tw = torch.zeros(2, 3, requires_grad=True)
    topt = torch.optim.SGD([tw], lr=0.1)
    for zero_grad, tzero in ((model.zero_grad, None), (opt.zero_grad, topt.zero_grad)):
        model.weight.grad = mg.full((2, 3), float("nan"))
        model.bias.grad = mg.tensor([float("inf"), -float("inf")])
        held = model.weight.grad
        zero_grad(set_to_none=False)
        assert model.weight.grad is held                   # in place, as torch
        np.testing.assert_array_equal(model.weight.grad, 0.0)
        np.testing.assert_array_equal(model.bias.grad, 0.0)
        if tzero is not None:
            tw.grad = torch.full((2, 3), float("nan"))
            tzero(set_to_none=False)
            assert torch.equal(tw.grad, torch.zeros(2, 3))


def test_a_nan_batch_does_not_poison_the_next_step():
    model = nn.Linear(2, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    for x in (np.array([[np.nan, 1.0]], np.float32), np.array([[1.0, 1.0]], np.float32)):
        opt.zero_grad(set_to_none=False)
        model(mg.tensor(x)).sum().backward()
    np.testing.assert_array_equal(model.weight.grad, [[1.0, 1.0]])


# ----- backward frees the activations -------------------------------------------------------
def mlp():
    np.random.seed(0)
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.LayerNorm(128),
                         nn.Linear(128, 128), nn.GELU(), nn.Linear(128, 1)).double()


def test_a_kept_loss_holds_no_activation_after_backward():
    model = mlp()
    x = mg.tensor(np.random.randn(32, 64))
    seen = []
    with mg.autograd.observe(type("Spy", (), {
            "on_forward": lambda self, node: seen.extend(
                weakref.ref(t._array) for t in node.inputs if t is not None and t.grad_fn),
            "on_backward": lambda *a: None, "on_free": lambda *a: None})()):
        loss = model(x).sum()
    assert len(seen) >= 5
    loss.backward()
    gc.collect()
    assert all(ref() is None for ref in seen)       # while loss is alive
    stats = mg.graph_stats(loss)
    assert stats.nodes == stats.freed > 0 and stats.saved_bytes == 0
    assert "freed by backward()" in viz.draw(loss, show_saved=True).source
    with pytest.raises(RuntimeError, match="a second time"):
        loss.backward()


def test_retain_graph_keeps_them():
    model = mlp()
    loss = model(mg.tensor(np.random.randn(8, 64))).sum()
    loss.backward(retain_graph=True)
    first = [p.grad.clone() for p in model.parameters()]
    loss.backward()
    for p, g in zip(model.parameters(), first):
        np.testing.assert_allclose(p.grad, 2 * g)


def test_memory_per_step_with_a_loss_history_stays_small():
    model = mlp()
    opt = optim.SGD(model.parameters(), lr=1e-3)
    x = mg.tensor(np.random.randn(256, 64))
    history = []

    def step():
        opt.zero_grad()
        loss = model(x).mean()
        loss.backward()
        opt.step()
        history.append(loss)

    step()
    step()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(4):
        step()
    growth = (tracemalloc.get_traced_memory()[0] - before) / 4
    tracemalloc.stop()
    activation = 256 * 128 * 8                 # one hidden activation: 262 kB
    assert growth < activation / 4, f"{growth:,.0f} B per step"


def test_post_accumulate_hooks_run_with_grad_off_after_every_grad_is_written():
    """torch runs a post-accumulate hook with grad mode off, once each ``.grad`` of the
    backward is written: a hook may update its leaf in place (an optimizer in the hook)."""
    def run(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        seen = []

        def hook(t):
            seen.append((lib.is_grad_enabled(), b.grad is not None))
            t.sub_(0.1 * t.grad)
        a.register_post_accumulate_grad_hook(hook)
        ((a * 2).sum() + (b * 3).sum()).backward()
        return np.round(a.detach().numpy().astype(float), 6).tolist(), seen

    assert run(mg) == run(torch) == ([0.8, 0.8], [(False, True)])
