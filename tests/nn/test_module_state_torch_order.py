"""Module and optimizer state as torch keeps it: ParameterDict's order, tied weights loaded
in module order, an array assigned to a buffer's name."""

from collections import OrderedDict

import numpy as np
import pytest
import torch

import microgradnorm as mg


def _keys(lib, build):
    return list(build(lib).keys())


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.ParameterDict({"b": lib.nn.Parameter(lib.ones(1)),
                                      "a": lib.nn.Parameter(lib.ones(1))}),
    lambda lib: lib.nn.ParameterDict(OrderedDict(b=lib.nn.Parameter(lib.ones(1)),
                                                 a=lib.nn.Parameter(lib.ones(1)))),
    lambda lib: lib.nn.ParameterDict([("z", lib.nn.Parameter(lib.ones(1))),
                                      ("a", lib.nn.Parameter(lib.ones(1)))]),
], ids=["dict: sorted", "OrderedDict: kept", "pairs: kept"])
def test_parameter_dict_orders_as_torch(build):
    assert _keys(mg, build) == _keys(torch, build)


def test_parameter_dict_update_and_named_parameters_order_as_torch():
    def build(lib):
        d = lib.nn.ParameterDict({"c": lib.nn.Parameter(lib.ones(1))})
        d.update({"b": lib.nn.Parameter(lib.ones(1)), "a": lib.nn.Parameter(lib.ones(1))})
        d["0"] = lib.nn.Parameter(lib.ones(1))
        return [name for name, _ in d.named_parameters()]
    assert build(mg) == build(torch) == ["c", "a", "b", "0"]


def test_tied_weights_with_conflicting_values_load_in_module_order():
    def load(lib):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(2, 2, bias=False)
                self.b = lib.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight
        model = Tied()
        model.load_state_dict({"a.weight": lib.zeros(2, 2), "b.weight": lib.ones(2, 2)})
        return model.a.weight.detach().numpy().copy()
    np.testing.assert_array_equal(load(mg), load(torch))


def test_an_array_assigned_to_a_buffer_name_is_a_type_error_and_changes_nothing():
    for lib in (torch, mg):
        module = lib.nn.Module()
        module.register_buffer("b", lib.zeros(2))
        with pytest.raises(TypeError, match="buffer 'b'"):
            module.b = np.ones(2)
        assert (module.b == 0).all()


def test_a_parameter_in_two_optimizer_groups_is_a_value_error():
    for lib in (torch, mg):
        p, q = lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.ones(1))
        with pytest.raises(ValueError, match="more than one parameter group"):
            lib.optim.SGD([{"params": [p]}, {"params": [q, p]}], lr=0.1)
        optimizer = lib.optim.SGD([p], lr=0.1)
        with pytest.raises(ValueError, match="more than one parameter group"):
            optimizer.add_param_group({"params": [p]})
        optimizer.add_param_group({"params": q, "lr": 0.5})
        assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.5]


def test_a_parameter_listed_twice_in_a_group_warns_as_torch():
    for lib in (torch, mg):
        p = lib.nn.Parameter(lib.ones(1))
        with pytest.warns(UserWarning, match="more than once|duplicate"):
            lib.optim.SGD([p, p], lr=0.1)


def test_an_optimizer_step_that_cannot_write_every_parameter_writes_none():
    a, b = mg.nn.Parameter(mg.ones(2)), mg.nn.Parameter(mg.ones(2))
    optimizer = mg.optim.SGD([a, b], lr=0.1)
    (a.sum() + b.sum()).backward()
    b._array.flags.writeable = False            # a parameter over read-only memory
    with pytest.raises(ValueError, match="read-only"):
        optimizer.step()
    assert (a == 1).all() and (b == 1).all()


def test_load_state_dict_into_a_read_only_buffer_loads_nothing():
    module = mg.nn.Linear(2, 2)
    frozen = np.zeros(2, np.float32)
    frozen.flags.writeable = False
    module.register_buffer("frozen", mg.from_numpy(frozen))
    state = {name: value + 1 for name, value in module.state_dict().items()}
    before = module.weight.detach().numpy().copy()
    with pytest.raises(ValueError, match="frozen: .*read-only"):
        module.load_state_dict(state)
    np.testing.assert_array_equal(module.weight.detach().numpy(), before)
