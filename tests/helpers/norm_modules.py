"""What the norm-module tests against PyTorch share: a module built both ways with torch's
state loaded into ours (``pair``), one forward and backward of both compared (``step``),
and their state dicts compared (``assert_same_state``), in float64 to ``TOL``."""

import numpy as np
import torch

import microgradnorm as mg
from microgradnorm import nn

TOL = 1e-12


def pair(name, *args, **kwargs):
    """(ours, PyTorch's) module ``name`` in float64, PyTorch's state loaded into ours."""
    ours = getattr(nn, name)(*args, **kwargs).to(mg.float64)
    theirs = getattr(torch.nn, name)(*args, **kwargs).to(torch.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.numpy().copy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def assert_same_state(ours, theirs):
    mine = ours.state_dict()
    assert list(mine) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert mine[key].dtype == value.numpy().dtype, key
        np.testing.assert_allclose(mine[key].numpy(), value.numpy(), rtol=0, atol=TOL,
                                   err_msg=key)


def step(ours, theirs, shape, seed=0):
    """Forward and backward of both on one input and upstream gradient: the output, the
    input's and every parameter's gradient, then every buffer, compared."""
    rng = np.random.default_rng(seed)
    x, dy = rng.normal(1.0, 2.0, shape), rng.standard_normal(shape)
    x_ours, x_theirs = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
    np.testing.assert_allclose(y_ours.detach().numpy(), y_theirs.detach().numpy(), rtol=0,
                               atol=TOL, err_msg="output")
    names = [n for n, _ in theirs.named_parameters()]
    assert names == [n for n, _ in ours.named_parameters()]
    got = mg.grad(y_ours, [x_ours] + [dict(ours.named_parameters())[n] for n in names], dy)
    expected = torch.autograd.grad(y_theirs, [x_theirs] + list(theirs.parameters()),
                                   torch.tensor(dy))
    for name, g, e in zip(["input"] + names, got, expected):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=0, atol=TOL, err_msg=name)
    assert_same_state(ours, theirs)
