"""In-place ops under autograd follow PyTorch: recorded into the graph (the target keeps its
memory and takes a new node), refused on a leaf that requires grad, caught at backward when
they overwrote a saved array; and a write through a view is refused, never silently lost."""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

A, B = [0.5, -1.5, 2.0, 3.0], [4.0, 5.0, -6.0, 0.25]


def both(values):
    """The same leaf in both libraries, float64, requiring grad."""
    return (mg.tensor(values, dtype=mg.float64, requires_grad=True),
            torch.tensor(values, dtype=torch.float64, requires_grad=True))


def check_grads(pairs):
    for ours, theirs in pairs:
        if theirs.grad is None:
            assert ours.grad is None
            continue
        np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-12, atol=0)


# Each case runs on mg and torch alike: lib is the module, (a, b) two leaves of 4 elements.
def setitem_of_a_product(lib, a, b):
    x = lib.zeros(4, dtype=a.dtype) if lib is torch else lib.zeros(4)
    x[0] = b[1] * 3
    return x * a


def copy_into_float32(lib, a, b):
    x = lib.zeros(4, dtype=torch.float32) if lib is torch else lib.zeros(4, dtype="float32")
    x.copy_(b * 2)
    return x * 1


def mul_into_a_non_leaf(lib, a, b):
    c = a * 1
    c.mul_(b)
    return c


def consumer_recorded_before_the_write(lib, a, b):
    c = a * 1
    d = c + 1                      # sees c before the write
    c.mul_(3)
    return d + c * b


def add_self(lib, a, b):
    c = a * b
    c.add_(c)
    return c


def div_by_a_leaf(lib, a, b):
    c = a * 2
    c.div_(b)
    return c


def sub_with_alpha_add(lib, a, b):
    c = a * 1
    c.sub_(b)
    c.add_(b, alpha=0.5)
    return c * a


def repeated_index_setitem(lib, a, b):
    x = a * 0
    index = [0, 0, 2]
    x[index] = b[1:4] * 2         # duplicate index: torch keeps one write, sends both grads
    return x * a


def bool_mask_setitem(lib, a, b):
    mask = [True, False, True, False]
    mask = torch.tensor(mask) if lib is torch else np.array(mask)
    x = a * 1
    x[mask] = b[mask] ** 2
    return x


def masked_fill_with_a_0d_value(lib, a, b):
    mask = [False, True, True, False]
    mask = torch.tensor(mask) if lib is torch else np.array(mask)
    x = a * 1
    x.masked_fill_(mask, b.sum())
    return x * b


def fill_and_zero_of_non_leaves(lib, a, b):
    c, d = a * 1, b * 1
    c.fill_(2.0)
    d.zero_()
    return c * a + d * b + a


def a_loop_of_row_writes(lib, a, b):
    # out[i] = f(out[i - 1]): each write reads a view taken before it
    out = lib.zeros((4, 4), dtype=a.dtype) if lib is torch else lib.zeros((4, 4))
    out[0] = a
    for i in range(1, 4):
        out[i] = (out[i - 1] + b) * 2        # (out[i - 1] * b: torch also refuses it)
    return out


def inplace_operators(lib, a, b):
    c = a * 1
    c += b
    c *= a
    c -= 1
    c /= b
    return c


CASES = [setitem_of_a_product, copy_into_float32, mul_into_a_non_leaf,
         consumer_recorded_before_the_write, add_self, div_by_a_leaf, sub_with_alpha_add,
         repeated_index_setitem, bool_mask_setitem, masked_fill_with_a_0d_value,
         fill_and_zero_of_non_leaves, a_loop_of_row_writes, inplace_operators]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_recorded_inplace_matches_torch(case):
    (a, ta), (b, tb) = both(A), both(B)
    ours, theirs = case(mg, a, b), case(torch, ta, tb)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)
    weights = np.arange(1.0, 1.0 + ours.size).reshape(ours.shape)
    (ours * weights).sum().backward()
    (theirs * torch.tensor(weights, dtype=theirs.dtype)).sum().backward()
    check_grads([(a, ta), (b, tb)])


def test_the_target_keeps_its_memory_and_takes_a_node():
    b = mg.tensor([1.0, 2.0], requires_grad=True)
    x = mg.zeros(4)
    view, data = x[1:3], x._array
    x[1:3] = b * 2
    assert x._array is data and x.requires_grad and x.grad_fn is not None
    np.testing.assert_array_equal(view.numpy(), [2.0, 4.0])       # the old view sees it
    assert x._version == 1


def test_an_inplace_op_on_a_leaf_that_requires_grad_is_refused_unless_no_grad():
    a, ta = both(A)
    for lib_a in (a, ta):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib_a.add_(1.0)
    assert a.tolist() == A and a._version == 0
    with mg.no_grad():
        a.add_(1.0)
    assert a.grad_fn is None and a.tolist() == [v + 1 for v in A]


@pytest.mark.parametrize("write", ["mul_self", "exp_then_mul_", "saved_by_a_consumer"])
def test_an_overwritten_saved_array_fails_at_backward_as_in_torch(write):
    def run(lib, a):
        if write == "mul_self":
            c = a * 1
            c.mul_(c)
            return c
        if write == "exp_then_mul_":
            c = a.exp()                        # Exp saves its output
            c.mul_(2)
            return c
        x = lib.zeros(4, dtype=a.dtype)
        d = x * a                              # Mul saves x, for a's gradient
        x[0] = a[1]
        return d + x
    a, ta = both(A)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(torch, ta).sum().backward()
    with pytest.raises(RuntimeError, match="modified in place"):
        run(mg, a).sum().backward()
    assert a.grad is None


def test_a_write_through_a_view_is_recorded_on_its_base():
    b = mg.tensor([1.0, 2.0], requires_grad=True)
    x = mg.zeros(4)
    view = x[1:3]
    view.copy_(b)                          # torch's CopySlices: x now depends on b
    assert x.tolist() == [0.0, 1.0, 2.0, 0.0] and x.requires_grad
    (x * mg.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    np.testing.assert_array_equal(b.grad, [2.0, 3.0])
    y = mg.zeros(4)
    with mg.no_grad():
        y[1:3].copy_(b)                    # no graph: a plain write
    assert y.tolist() == [0.0, 1.0, 2.0, 0.0] and not y.requires_grad


def test_a_view_made_stale_by_a_recorded_write_reads_the_written_base():
    a = mg.tensor(A, requires_grad=True)
    c = a * 1
    view = c[0:2]
    c.mul_(2)                              # view's values change, and so does its node
    (view * 1).sum().backward()            # as torch's: the view is replayed from c
    np.testing.assert_array_equal(a.grad, [2.0, 2.0, 0.0, 0.0])


@pytest.mark.parametrize("bad", ["broadcast_to_a_larger_shape", "float_into_int"])
def test_an_impossible_recorded_inplace_changes_nothing(bad):
    b = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    tb = torch.tensor(b.tolist(), requires_grad=True)
    if bad == "broadcast_to_a_larger_shape":
        x, tx, value, tvalue = mg.zeros(3), torch.zeros(3), b, tb
    else:
        x, tx = mg.zeros(3, dtype="int64"), torch.zeros(3, dtype=torch.long)
        value, tvalue = b[0], tb[0]
    with pytest.raises(RuntimeError):
        tx.add_(tvalue)
    with pytest.raises(RuntimeError, match="shape|cast"):
        x.add_(value)
    assert x.tolist() == [0, 0, 0] and x._version == 0 and x.grad_fn is None


def test_plain_inplace_stays_outside_the_graph():
    x = mg.zeros(3)
    x.add_(1.0)
    x[0] = 5.0
    x.mul_(mg.tensor([1.0, 2.0, 3.0]))
    assert x.grad_fn is None and not x.requires_grad and x._version == 3
    assert x.tolist() == [5.0, 2.0, 3.0]
