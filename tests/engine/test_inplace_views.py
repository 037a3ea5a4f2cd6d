"""In-place ops on a view of a recorded tensor, as PyTorch records them: the write lands in
the base, whose gradient then skips the overwritten elements and routes them to what was
written; the view reads the base again. Each case runs here and under torch on the same
values; the results and every gradient are compared."""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def run(case):
    """``case(lib, x, w)`` returns a scalar loss of x (3, 4) and w (4,), both requiring grad;
    the loss and both gradients, compared between the libraries."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal(4)
    results = []
    for lib in (mg, torch):
        tx, tw = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        loss = case(lib, tx, tw)
        loss.backward()
        results.append([loss.detach().numpy()] + [
            np.zeros_like(a) if t.grad is None else t.grad.numpy()
            for t, a in ((tx, x), (tw, w))])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def row_scaled(lib, x, w):
    y = x * 2
    y[0].mul_(w)
    return (y * y).sum()


def column_set(lib, x, w):
    y = x * 3
    y[:, 1].copy_(w[:3])
    return (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 4)).sum()


def transposed_add(lib, x, w):
    y = x + 0
    y.t().add_(w[:, None])
    return (y ** 2).sum()


def narrowed_zero(lib, x, w):
    y = x * w
    y.narrow(1, 1, 2).zero_()
    return (y.sin()).sum()


def view_of_a_view(lib, x, w):
    y = x * 1
    y[1:][:, ::2].mul_(3)
    return (y * w).sum()


def diagonal_fill(lib, x, w):
    y = x[:, :3] * 1
    y.diagonal().fill_(2.0)
    return (y.exp() * w[:3]).sum()


def written_twice(lib, x, w):
    y = x * 1
    v = y[2]
    v.add_(w)
    v.mul_(w)
    return (y.tanh() * 3).sum() + v.sum()


def base_without_grad(lib, x, w):
    y = lib.zeros(3, 4, dtype=lib.float64)
    y[1].copy_(w * 2)
    return (y * x).sum()


def reshaped_relu(lib, x, w):
    y = x * w
    lib.nn.functional.relu(y.view(12)[4:], inplace=True)
    return (y ** 3).sum()


@pytest.mark.parametrize("case", [row_scaled, column_set, transposed_add, narrowed_zero,
                                  view_of_a_view, diagonal_fill, written_twice,
                                  base_without_grad, reshaped_relu])
def test_a_write_through_a_view_gives_torchs_values_and_gradients(case):
    run(case)


def test_the_view_reads_its_written_base_and_a_saved_base_refuses_backward():
    x = mg.ones(2, 3, requires_grad=True)
    y = x * 2
    z = y * y                                   # saves y: its values change below
    row = y[0]
    row.mul_(5)
    assert y.tolist() == [[10.0, 10.0, 10.0], [2.0, 2.0, 2.0]]
    assert row.tolist() == [10.0, 10.0, 10.0] and row.grad_fn is not None
    with pytest.raises(RuntimeError, match="modified in place"):
        z.sum().backward()


def test_a_view_of_a_leaf_that_requires_grad_is_refused_as_torchs():
    for lib in (mg, torch):
        x = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="view of a leaf Variable"):
            x[0].mul_(2)


def test_an_op_that_saved_its_output_refuses_a_write_through_a_view_as_torchs():
    for lib in (mg, torch):
        y = lib.ones(3, 4, requires_grad=True).exp()        # exp saves y
        y[:, 1].copy_(lib.zeros(3))
        with pytest.raises(RuntimeError, match="modified"):
            y.sum().backward()


# ----- found by a second read ------------------------------------------------------------
def view_of_the_written_tensor(lib, x, w):
    y = (x * 2).reshape(12).view(3, 4)          # y is itself a view; y[0] writes its base
    y[0].mul_(3)
    return (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 4)).sum()


def sibling_taken_before(lib, x, w):
    y = x * 2
    sibling = y[1]
    y[0].mul_(w)
    return (sibling * 5).sum() + (y ** 2).sum()


def permuted_then_written(lib, x, w):
    y = (x * 2).permute(1, 0)
    y[0].mul_(3)
    return (y * lib.arange(12.0, dtype=lib.float64).reshape(4, 3)).sum()


def view_of_a_view_used_after(lib, x, w):
    y = x * 2
    v = y[1:]
    v[0].mul_(w)
    return (v ** 2).sum()


@pytest.mark.parametrize("case", [view_of_the_written_tensor, sibling_taken_before,
                                  permuted_then_written, view_of_a_view_used_after])
def test_a_view_taken_before_the_write_reads_the_written_base_as_torchs(case):
    run(case)


def test_a_zero_dim_base_gets_torchs_gradient():
    grads = []
    for lib in (mg, torch):
        x = lib.tensor(2.0, requires_grad=True)
        y = x * 1
        y.view(1).mul_(3)
        (y * y).backward()
        grads.append(x.grad.item())
    assert grads[0] == grads[1] == 36.0


def test_writes_torch_refuses_are_refused():
    for lib in (mg, torch):
        y = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True) * 1
        with pytest.raises(RuntimeError, match="single memory location"):
            y.expand(3, 4).mul_(2)                    # one element under many
    z = mg.tensor([1 + 2j, 3 - 1j], requires_grad=True) * 1
    with pytest.raises(RuntimeError, match="in-place op on a view"):
        z.real.mul_(3)                                # torch records it; refused here
    assert z.tolist() == [1 + 2j, 3 - 1j]


def test_a_stale_view_of_a_tensor_without_grad_is_read_again_without_a_node():
    for lib in (mg, torch):
        mask = lib.ones(4, 4)
        window = mask[:2, :2]
        with lib.no_grad():
            mask.mul_(2)                          # the base moves on, the view is stale
        w = lib.ones(2, 2, requires_grad=True)
        out = (window * w).sum()                  # read again: a constant, no node
        out.backward()
        assert window.grad_fn is None and not window.requires_grad
        assert w.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]
