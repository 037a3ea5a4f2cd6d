"""nn.init and the in-place samplers refuse what torch refuses, with torch's error classes,
and trunc_normal_ returns however far in a tail its window lies."""

import time

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm.nn import init

REFUSED = {
    "normal_ std < 0": (lambda m, t: m.nn.init.normal_(t(3), std=-1.0), RuntimeError),
    "uniform_ from > to": (lambda m, t: m.nn.init.uniform_(t(3), 1.0, 0.0), RuntimeError),
    "Tensor.normal_ std < 0": (lambda m, t: t(3).normal_(0.0, -1.0), RuntimeError),
    "Tensor.uniform_ from > to": (lambda m, t: t(3).uniform_(2.0, 1.0), RuntimeError),
    "random_ from >= to": (lambda m, t: t(3).random_(5, 2), RuntimeError),
    "bernoulli_ p > 1": (lambda m, t: t(3).bernoulli_(2.0), RuntimeError),
    "exponential_ lambd < 0": (lambda m, t: t(3).exponential_(-1.0), RuntimeError),
    "normal std < 0": (lambda m, t: m.normal(0.0, -1.0, (3,)), RuntimeError),
    "normal_ of int64": (lambda m, t: m.nn.init.normal_(m.zeros(3, dtype=m.long)),
                         NotImplementedError),
    "uniform_ of int64": (lambda m, t: m.nn.init.uniform_(m.zeros(3, dtype=m.long)),
                          NotImplementedError),
    "xavier_uniform_ of int64": (lambda m, t: m.nn.init.xavier_uniform_(
        m.zeros(3, 3, dtype=m.long)), NotImplementedError),
    "kaiming_normal_ of int64": (lambda m, t: m.nn.init.kaiming_normal_(
        m.zeros(3, 3, dtype=m.long)), NotImplementedError),
    "trunc_normal_ of int64": (lambda m, t: m.nn.init.trunc_normal_(m.zeros(3, dtype=m.long)),
                               NotImplementedError),
    "randn int64": (lambda m, t: m.randn(3, dtype=m.long), NotImplementedError),
}


@pytest.mark.parametrize("case", REFUSED)
def test_refused_with_torchs_error_class_and_nothing_changed(case):
    call, error = REFUSED[case]
    for lib in (torch, mg):
        made = []

        def fresh(n, lib=lib, made=made):
            made.append(lib.zeros(n, dtype=lib.float64))
            return made[-1]
        with pytest.raises(error):
            call(lib, fresh)
        assert all((t == 0).all() for t in made)


@pytest.mark.parametrize("a, b", [(-1e4 - 1, -1e4), (1e4, 1e4 + 1), (-5e3, -4e3)])
def test_trunc_normal_far_in_a_tail_returns_at_once_with_the_right_law(a, b):
    # torch's rejection loop runs for minutes here; the density falls as exp(-|a| t) from
    # the bound nearest the mean, so the draws sit within a few 1/|a| of it, mean 1/|a|
    x = mg.zeros(2000, dtype=mg.float64)
    start = time.perf_counter()
    with pytest.warns(UserWarning, match="more than 2 std"):
        init.trunc_normal_(x, a=a, b=b)
    assert time.perf_counter() - start < 20
    values = x.numpy()
    near = b if b < 0 else a
    offsets = np.abs(values - near)
    assert ((values >= a) & (values <= b)).all()
    assert abs(offsets.mean() * abs(near) - 1) < 0.1
    assert offsets.max() < 20 / abs(near)


def test_trunc_normal_an_ordinary_window_still_draws_torchs_values():
    x, xt = mg.zeros(500, dtype=mg.float64), torch.zeros(500, dtype=torch.float64)
    init.trunc_normal_(x, std=1.0, a=1.5, b=3.0, generator=mg.Generator().manual_seed(3))
    torch.nn.init.trunc_normal_(xt, std=1.0, a=1.5, b=3.0,
                                generator=torch.Generator().manual_seed(3))
    np.testing.assert_array_equal(x.numpy(), xt.numpy())
