"""No silent aliasing: numpy() refuses a tensor that requires grad; gradients given by
the user must be real; lists are accepted as gradients."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import optim


def test_numpy_refuses_a_tensor_that_requires_grad():
    a = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * a
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        a.numpy()
    with pytest.raises(RuntimeError, match="requires grad"):
        b.numpy()                                  # a non-leaf too
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 4.0, 6.0]     # nothing could write into a's memory


def test_numpy_force_shares_like_detach_as_in_torch():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    assert np.shares_memory(a.numpy(force=True), a.data)   # torch: detach().cpu().numpy()
    assert np.shares_memory(a.detach().numpy(), a.data)
    plain = mg.tensor([1.0, 2.0])
    assert np.shares_memory(plain.numpy(), plain.data)   # as torch: no grad, no copy
    with mg.no_grad():
        assert (a * 2.0).numpy().tolist() == [2.0, 4.0]


def test_tolist_works_with_requires_grad():
    assert mg.tensor([[1.0]], requires_grad=True).tolist() == [[1.0]]


def test_complex_upstream_gradient_is_refused():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    with pytest.raises(TypeError, match="complex"):
        y.backward(np.ones(2, dtype=complex))
    assert x.grad is None
    with pytest.raises(TypeError, match="complex"):
        mg.grad(y, x, np.ones(2, dtype=complex))


def test_a_list_as_gradient_is_accepted_and_nonsense_is_a_type_error():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    y.backward([1.0, 0.5], retain_graph=True)
    assert x.grad.tolist() == [3.0, 1.5]
    with pytest.raises(TypeError, match="nested lists of numbers"):
        y.backward(["a", "b"])
    with pytest.raises(ValueError, match="shape"):
        y.backward([1.0])
    assert x.grad.tolist() == [3.0, 1.5]


@pytest.mark.parametrize("make", [optim.SGD, optim.Adam, optim.AdamW])
def test_optimizers_refuse_a_complex_gradient_and_change_nothing(make):
    p = mg.tensor([1.0, 2.0], requires_grad=True)
    q = mg.tensor([3.0], requires_grad=True)
    opt = make([p, q], lr=0.1)
    q.grad = mg.ones(1)
    with pytest.raises(TypeError, match="grad"):      # the setter refuses an array
        p.grad = np.array([1 + 1j, 1 - 1j])
    # past the setter, a complex gradient: the step refuses it too
    p._grad = mg.Tensor._from_op(np.array([1 + 1j, 1 - 1j]), None)
    with pytest.raises(TypeError, match="imaginary"):
        opt.step()
    assert p.tolist() == [1.0, 2.0] and q.tolist() == [3.0] and opt.state == {}
