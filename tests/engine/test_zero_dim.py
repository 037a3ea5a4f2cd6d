"""PyTorch's 0-d and zero-size semantics, without torch's tables (test_opinfo runs those):
an explicit axis on a 0-d tensor, softmax of 0-d and empty inputs, transpose/squeeze of
0-d tensors, concatenate with an empty 1-D tensor."""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from op_table import REDUCTIONS


def scalar(v=2.0):
    return mg.tensor(np.array(v), requires_grad=True)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [0, -1, (0,), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_on_0d_with_an_axis(name, axis, keepdims):
    x = scalar()
    y = REDUCTIONS[name].ours(x, axis, keepdims)
    assert y.shape == () and y.item() == 2.0
    y.backward()
    assert x.grad == 1.0


def test_axis_out_of_range_on_0d_is_clear():
    with pytest.raises(ValueError, match=r"axis 1 is out of range .* 0 dims"):
        scalar().sum(1)
    with pytest.raises(ValueError, match="names a dim twice"):
        mg.tensor(np.ones((2, 3))).sum((1, -1))


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_of_0d_and_zero_size(fn):
    x = scalar(3.0)
    y = fn(x, 0)
    assert y.shape == () and y.item() == (1.0 if fn is F.softmax else 0.0)
    for shape, axis in (((0,), 0), ((3, 0), -1), ((0, 4), 1), ((5, 0, 0), -1)):
        e = mg.tensor(np.zeros(shape), requires_grad=True)
        out = fn(e, axis)
        assert out.shape == shape
        out.sum().backward()
        assert e.grad.shape == shape


def test_max_over_an_empty_dim_is_a_clear_error():
    with pytest.raises(ValueError, match="empty dim"):
        mg.tensor(np.zeros((3, 0))).max(1)


def test_transpose_and_squeeze_of_0d():
    x = scalar()
    assert x.transpose(0, 0).shape == () and x.transpose(-1, 0).shape == ()
    assert x.squeeze(0).shape == () and x.squeeze().shape == ()
    y = mg.tensor(np.ones((5, 1, 5, 1)))
    assert y.squeeze().shape == (5, 5) and y.squeeze((1, 3)).shape == (5, 5)
    assert y.squeeze(0).shape == (5, 1, 5, 1)


def test_concatenate_skips_an_empty_1d_tensor():
    a = mg.tensor(np.zeros(0), requires_grad=True)
    b = mg.tensor(np.ones((5, 5)), requires_grad=True)
    y = mg.concatenate([a, b], axis=1)
    assert y.shape == (5, 5)
    y.sum().backward()
    assert a.grad.shape == (0,) and b.grad.shape == (5, 5)
    assert mg.concatenate([a, a]).shape == (0,)
    with pytest.raises(ValueError, match="same number of dims"):
        mg.concatenate([mg.tensor(np.ones(3)), b])
    with pytest.raises(ValueError, match="sizes must match except along axis 0"):
        mg.concatenate([mg.tensor(np.ones((2, 3))), b])
