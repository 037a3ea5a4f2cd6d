"""What a graph node keeps, and when: ``Function.apply``'s one pass over its inputs, the
versions a node records of the arrays it saved, and what ``Context.free`` leaves behind."""

import weakref

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm.autograd.function import Function


class SameArray(Function):
    """An op whose output is its input's array itself (no view, so its own version)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_a_write_through_either_tensor_holding_a_saved_array_is_caught():
    for written in ("h", "y"):
        a = mg.tensor([1.0, 2.0], requires_grad=True)
        h = a * 1.0
        y = SameArray.apply(h)                  # y._array is h._array, two version counters
        assert y._array is h._array
        z = h * y                               # saves that one array (twice)
        with mg.no_grad():
            {"h": h, "y": y}[written].add_(1.0)
        with pytest.raises(RuntimeError, match="modified in place"):
            z.sum().backward()


def test_a_tensor_subclass_and_numbers_take_the_checked_path_to_the_same_result():
    class Sub(mg.Tensor):
        pass

    x = mg.tensor([1.0, -2.0], dtype=mg.float64, requires_grad=True)
    w = mg.nn.Parameter(np.array([3.0, 4.0]))
    s = Sub([0.5, 0.5], dtype=mg.float64)
    out = (x * w + s + 2.0).tanh().sum()
    out.backward()
    tx = torch.tensor([1.0, -2.0], requires_grad=True, dtype=torch.float64)
    tw = torch.tensor([3.0, 4.0], requires_grad=True, dtype=torch.float64)
    tout = (tx * tw + torch.tensor([0.5, 0.5], dtype=torch.float64) + 2.0).tanh().sum()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad, tw.grad.numpy(), rtol=1e-12)


def test_a_freed_node_keeps_its_structure_and_nothing_forward_stored():
    x = mg.tensor([[1.0, 2.0]], requires_grad=True)
    b = mg.tensor([3.0, 4.0], requires_grad=True)
    h = x * 2.0
    y = h + b                                   # Add keeps the shapes (an option) in forward
    node = y.grad_fn
    assert node.shapes == ((1, 2), (2,))
    y.sum().backward()
    assert node._freed and not hasattr(node, "shapes")
    assert node.saved_arrays() == () and node.needs_input_grad == (True, True)
    assert node.inputs[1] is b                  # a parameter-like leaf stays
    assert node.inputs[0].grad_fn is h.grad_fn and node.inputs[0]._array is None
    assert weakref.ref(node)() is node
    assert mg.graph_stats(y).nodes == 2        # the graph can still be walked
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()


@pytest.mark.parametrize("a_shape, b_shape", [
    ((), (3,)), ((3,), ()), ((2, 5), (3, 4)), ((5,), (4,)), ((2, 3), (4,)), ((4,), (3, 2)),
    ((2, 2, 3), (4, 5)), ((2, 2, 3), (3, 3, 4)), ((3, 1, 2), (2, 3, 4)),
])
@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_a_matmul_that_torch_refuses_is_a_value_error_naming_both_shapes(a_shape, b_shape,
                                                                         dtype):
    a, b = np.ones(a_shape, dtype), np.ones(b_shape, dtype)
    with pytest.raises(RuntimeError):
        torch.from_numpy(a).float() @ torch.from_numpy(b).float()
    ta = mg.tensor(a, requires_grad=True)
    with pytest.raises(ValueError, match=r"^matmul: .*shapes? "):
        ta @ mg.tensor(b)
    assert ta.grad is None
