"""``mg.func.functional_call`` against ``torch.func.functional_call`` in float64: replaced
parameters and buffers for one call (values, gradients to the given tensors, a buffer the
call updates in place), the module's own tensors afterwards, several dicts, tied weights,
``strict`` and the errors."""

import numpy as np
import pytest
import torch

import microgradnorm as mg


def model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3),
                             lib.nn.Linear(3, 1)).double()


def pair():
    theirs = model(torch)
    ours = model(mg)
    ours.load_state_dict({k: mg.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return {mg: ours, torch: theirs}


def test_replaced_tensors_for_one_call_with_their_gradients_as_torchs():
    x = np.random.default_rng(0).standard_normal((4, 2))
    got = {}
    for lib, net in pair().items():
        own = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
        w = lib.tensor(np.arange(3.0).reshape(1, 3), requires_grad=True)
        mean = lib.zeros(3, dtype=lib.float64)
        y = lib.func.functional_call(net, ({"2.weight": w}, {"1.running_mean": mean}),
                                     (lib.tensor(x),))
        y.sum().backward()
        for k in ("2.weight", "1.running_mean"):               # the module's own, untouched
            np.testing.assert_array_equal(net.state_dict()[k].detach().numpy(), own[k])
        assert net[2].weight.grad is None and isinstance(net[2].weight, lib.nn.Parameter)
        got[lib] = (y.detach().numpy(), w.grad.numpy(), mean.numpy(),
                    net[1].running_var.numpy())              # not replaced: updated, as torch
    for a, b in zip(got[mg], got[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_a_tied_weight_is_replaced_under_every_name():
    got = {}
    for lib in (mg, torch):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False),
                                lib.nn.Linear(2, 2, bias=False))
        net[1].weight = net[0].weight
        got[lib] = lib.func.functional_call(net, {"0.weight": 2 * lib.eye(2)},
                                            lib.ones(1, 2)).tolist()
        with pytest.raises(ValueError, match="which are tied"):
            lib.func.functional_call(net, {"0.weight": lib.eye(2), "1.weight": lib.eye(2)},
                                     lib.ones(1, 2))
        untied = lib.func.functional_call(net, {"0.weight": 2 * lib.eye(2)}, lib.ones(1, 2),
                                          tie_weights=False)
        got[lib, "untied"] = untied.shape
    assert got[mg] == got[torch] == [[4.0, 4.0]]
    assert tuple(got[mg, "untied"]) == tuple(got[torch, "untied"])


def test_strict_names_and_ambiguous_dicts_are_torchs_errors():
    for lib, net in pair().items():
        with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'nope'.\n\tMissing "
                                               "key\\(s\\): '0.bias'"):
            lib.func.functional_call(net, {"nope": lib.ones(1)}, lib.ones(2, 2).double(),
                                     strict=True)
        with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
            lib.func.functional_call(net, ({"0.bias": lib.ones(3)}, {"0.bias": lib.ones(3)}),
                                     lib.ones(2, 2).double())
    with pytest.raises(TypeError, match="module must be an nn.Module"):
        mg.func.functional_call(lambda x: x, {}, mg.ones(1))
