"""Arrays a node keeps besides its inputs (an index, a mask, a condition, a target): a
tensor changed in place before backward raises as in torch; a NumPy array or a list is
copied, so reusing it cannot re-route the gradient."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F

TF = torch.nn.functional

# (name, forward(lib, x, kept), make the kept thing (lib), change it in place)
CASES = {
    "getitem with an index tensor": (
        lambda lib, x, i: x[i], lambda lib: lib.tensor([0, 2, 2]), lambda i: i.fill_(1)),
    "getitem with a bool mask": (
        lambda lib, x, m: x[m], lambda lib: lib.tensor([True, False, True, False]),
        lambda m: m.fill_(True)),
    "getitem with a tuple of index tensors": (
        lambda lib, x, i: x.reshape(2, 2)[i, i], lambda lib: lib.tensor([0, 1]),
        lambda i: i.fill_(0)),
    "gather": (
        lambda lib, x, i: x.gather(0, i), lambda lib: lib.tensor([3, 3, 0]),
        lambda i: i.fill_(1)),
    "masked_fill": (
        lambda lib, x, m: x.masked_fill(m, 0.0), lambda lib: lib.tensor([True, False] * 2),
        lambda m: m.fill_(False)),
    "where": (
        lambda lib, x, c: lib.where(c, x, 2 * x), lambda lib: lib.tensor([True, False] * 2),
        lambda c: c.fill_(True)),
    "embedding ids": (
        lambda lib, x, i: (TF if lib is torch else F).embedding(i, x.reshape(2, 2)),
        lambda lib: lib.tensor([0, 1, 1]), lambda i: i.fill_(0)),
}


@pytest.mark.parametrize("case", CASES)
def test_a_kept_tensor_changed_in_place_raises_as_in_torch(case):
    forward, make, change = CASES[case]
    for lib in (torch, mg):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
        kept = make(lib)
        out = forward(lib, x, kept)
        change(kept)
        with pytest.raises(RuntimeError, match="in ?place|inplace"):
            out.sum().backward()


def test_a_cross_entropy_target_changed_in_place_leaves_the_gradient_of_the_forward():
    # torch raises here; this node keeps a copy of the flattened targets instead, so the
    # gradient is that of the loss computed, never one re-routed to the new targets
    x = mg.tensor([[1.0, 2.0], [3.0, 5.0]], dtype=mg.float64, requires_grad=True)
    target = mg.tensor([0, 1])
    F.cross_entropy(x, target).backward()
    expected = x.grad.numpy().copy()
    x.grad = None
    loss = F.cross_entropy(x, target)
    target.fill_(1)
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)


NUMPY_CASES = {
    "getitem with an index array": (lambda x, i: x[i], np.array([0, 2, 2])),
    "getitem with a list": (lambda x, i: x[i], [0, 2, 2]),
    "getitem with a bool array": (lambda x, m: x[m], np.array([True, False, True, False])),
    "gather with an array": (lambda x, i: x.gather(0, i), np.array([3, 3, 0])),
    "masked_fill with an array": (lambda x, m: x.masked_fill(m, 0.0),
                                  np.array([True, False] * 2)),
    "where with an array": (lambda x, c: mg.where(c, x, 2 * x), np.array([True, False] * 2)),
    "cross_entropy with an array": (lambda x, t: F.cross_entropy(x.reshape(2, 2), t),
                                    np.array([0, 1])),
}


@pytest.mark.parametrize("case", NUMPY_CASES)
def test_a_kept_numpy_array_reused_does_not_reroute_the_gradient(case):
    forward, kept = NUMPY_CASES[case]
    x = mg.tensor([1.0, 2.0, 3.0, 4.0], dtype=mg.float64, requires_grad=True)
    forward(x, kept).sum().backward()
    expected = x.grad.numpy().copy()
    x.grad = None
    out = forward(x, kept)
    if isinstance(kept, list):
        kept[:] = [1] * len(kept)
    else:
        kept[...] = np.roll(kept, 1)           # the next micro-batch, written in place
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)
