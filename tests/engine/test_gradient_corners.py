"""Gradient corners as torch: cross-entropy whose kept targets all weigh 0, in-place on a
0-d result, and the rest of the corners of reliability round three."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F

TF = torch.nn.functional

LOSSES = {
    "cross_entropy, weights 0": lambda f, lib, x: f.cross_entropy(
        x, lib.tensor([0, 1]), weight=lib.tensor([0.0, 0.0], dtype=lib.float64)),
    "cross_entropy, weight 0 and one ignored": lambda f, lib, x: f.cross_entropy(
        x, lib.tensor([0, -100]), weight=lib.tensor([0.0, 1.0], dtype=lib.float64)),
    "cross_entropy, all ignored": lambda f, lib, x: f.cross_entropy(x, lib.tensor([-100, -100])),
    "cross_entropy, weights 0, smoothed": lambda f, lib, x: f.cross_entropy(
        x, lib.tensor([0, 1]), weight=lib.tensor([0.0, 0.0], dtype=lib.float64),
        label_smoothing=0.1),
    "nll_loss, weights 0": lambda f, lib, x: f.nll_loss(
        x, lib.tensor([0, 1]), weight=lib.tensor([0.0, 0.0], dtype=lib.float64)),
    "nll_loss, all ignored": lambda f, lib, x: f.nll_loss(x, lib.tensor([-100, -100])),
}


@pytest.mark.parametrize("case", LOSSES)
def test_a_mean_over_no_weight_is_nan_with_torchs_gradient(case):
    grads = []
    for f, lib in ((TF, torch), (F, mg)):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        loss = LOSSES[case](f, lib, x)
        assert np.isnan(loss.item())
        loss.backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])       # NaN where torch's is NaN


@pytest.mark.parametrize("op", ["add_", "mul_", "sub_", "div_"])
def test_in_place_on_a_0d_result_works_as_torch(op):
    values = []
    for lib in (torch, mg):
        x = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        c = x * 3
        getattr(c, op)(lib.tensor(4.0, dtype=lib.float64))
        c.backward()
        values.append((c.item(), x.grad.item()))
    assert values[0] == values[1]


def test_augmented_assignment_on_a_0d_result():
    x = mg.tensor(2.0, requires_grad=True)
    c = x * 3
    c += mg.tensor(1.0)
    c.backward()
    assert c.item() == 7.0 and x.grad.item() == 3.0
