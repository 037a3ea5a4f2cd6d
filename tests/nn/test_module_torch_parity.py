"""nn.Module and the containers against torch.nn: each case runs the same code on both
libraries (``lib`` is ``torch`` or ``microgradnorm``) and compares what it returns, or the
class of the exception it raises."""

import copy
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from module_parity import LIBS, names, outcome, same_on_both

import microgradnorm as mg

def three(lib):
    return lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU(), lib.nn.Tanh())


def named_three(lib):
    return lib.nn.Sequential(OrderedDict([("a", lib.nn.Linear(2, 2)), ("b", lib.nn.ReLU()),
                                          ("c", lib.nn.Tanh())]))


def edit(build, change):
    # the container after ``change``, as (names, child types)
    def case(lib):
        module = build(lib)
        result = change(lib, module)
        return names(module), type(result).__name__
    return case


SEQUENTIAL_EDITS = {
    "append": lambda lib, m: m.append(lib.nn.Sigmoid()),
    "insert": lambda lib, m: m.insert(1, lib.nn.Sigmoid()),
    "insert -1": lambda lib, m: m.insert(-1, lib.nn.Sigmoid()),
    "insert out of range": lambda lib, m: m.insert(5, lib.nn.Sigmoid()),
    "insert a non-module": lambda lib, m: m.insert(0, 3),
    "extend": lambda lib, m: m.extend([lib.nn.Sigmoid(), lib.nn.ELU()]),
    "pop": lambda lib, m: m.pop(1),
    "pop -1": lambda lib, m: m.pop(-1),
    "pop out of range": lambda lib, m: m.pop(7),
    "del": lambda lib, m: m.__delitem__(0),
    "del slice": lambda lib, m: m.__delitem__(slice(0, 2)),
    "set": lambda lib, m: m.__setitem__(-1, lib.nn.Sigmoid()),
    "set a non-module": lambda lib, m: m.__setitem__(0, 3),
    "get out of range": lambda lib, m: m[3],
    "get by name": lambda lib, m: m["0"],
    "+=": lambda lib, m: m.__iadd__(lib.nn.Sequential(lib.nn.Sigmoid())),
    "+= a list": lambda lib, m: m.__iadd__([lib.nn.Sigmoid()]),
    "*=": lambda lib, m: m.__imul__(2),
    "*= 0": lambda lib, m: m.__imul__(0),
}


@pytest.mark.parametrize("change", SEQUENTIAL_EDITS.values(), ids=SEQUENTIAL_EDITS)
@pytest.mark.parametrize("build", [three, named_three], ids=["numbered", "named"])
def test_sequential_list_methods_name_and_raise_as_torch(build, change):
    same_on_both(edit(build, change))


@pytest.mark.parametrize("operation", [
    lambda lib, m: m[1:], lambda lib, m: m[::2], lambda lib, m: m[:0],
    lambda lib, m: m + lib.nn.Sequential(lib.nn.Sigmoid()), lambda lib, m: m * 2,
    lambda lib, m: 2 * m, lambda lib, m: m + [lib.nn.Sigmoid()], lambda lib, m: m * 1.5,
], ids=["slice", "step", "empty", "+", "*", "rmul", "+ list", "* float"])
@pytest.mark.parametrize("build", [three, named_three], ids=["numbered", "named"])
def test_sequential_slices_and_operators_give_new_sequentials_as_torch(build, operation):
    def case(lib):
        module = build(lib)
        result = operation(lib, module)
        shared = [any(child is mine for mine in module) for child in result]
        return type(result).__name__, names(result), shared, names(module)
    same_on_both(case)


def test_sequential_runs_its_modules_in_order_as_torch_in_float64():
    ours = named_three(mg).double()
    theirs = named_three(torch).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 2))
    np.testing.assert_allclose(ours[1:](ours[:1](mg.tensor(x))).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    assert ours.a is ours[0] and len(ours) == 3 and [type(m) for m in ours][2] is mg.nn.Tanh
    assert isinstance(mg.nn.Sequential(), mg.nn.Module)
    assert not isinstance(ours, mg.nn.ModuleList)      # torch's Sequential is not one


def modules4(lib):
    return lib.nn.ModuleList([lib.nn.ReLU(), lib.nn.Tanh(), lib.nn.Sigmoid(), lib.nn.ELU()])


MODULELIST_EDITS = {
    "insert": lambda lib, m: m.insert(1, lib.nn.Softsign()),
    "insert past the end": lambda lib, m: m.insert(9, lib.nn.Softsign()),
    "insert -1": lambda lib, m: m.insert(-1, lib.nn.Softsign()),
    "extend": lambda lib, m: m.extend([lib.nn.Softsign()]),
    "extend a number": lambda lib, m: m.extend(3),
    "extend with a number": lambda lib, m: m.extend([3]),
    "append a number": lambda lib, m: m.append(3),
    "set": lambda lib, m: m.__setitem__(-2, lib.nn.Softsign()),
    "set out of range": lambda lib, m: m.__setitem__(4, lib.nn.Softsign()),
    "del": lambda lib, m: m.__delitem__(1),
    "del -1": lambda lib, m: m.__delitem__(-1),
    "del step": lambda lib, m: m.__delitem__(slice(None, None, 2)),
    "del out of range": lambda lib, m: m.__delitem__(4),
    "pop": lambda lib, m: m.pop(0),
    "+=": lambda lib, m: m.__iadd__([lib.nn.Softsign()]),
    "+": lambda lib, m: m + lib.nn.ModuleList([lib.nn.Softsign()]),
    "+ list": lambda lib, m: m + [lib.nn.Softsign()],
    "slice": lambda lib, m: m[1:3],
    "get by name": lambda lib, m: m["1"],
    "get a float": lambda lib, m: m[1.0],
}


@pytest.mark.parametrize("change", MODULELIST_EDITS.values(), ids=MODULELIST_EDITS)
def test_module_list_methods_renumber_and_raise_as_torch(change):
    def case(lib):
        module = modules4(lib)
        result = change(lib, module)
        extra = names(result) if isinstance(result, lib.nn.Module) and len(result) else None
        return names(module), type(result).__name__, extra, [getattr(module, str(i)) is m
                                                               for i, m in enumerate(module)]
    same_on_both(case)


def test_module_list_repr_dir_and_none_as_torch():
    for lib in LIBS:
        blocks = lib.nn.ModuleList([lib.nn.Linear(2, 2, bias=False) for _ in range(3)]
                                   + [lib.nn.ReLU(), lib.nn.ReLU(), lib.nn.Tanh()])
        assert repr(blocks) == (
            "ModuleList(\n  (0-2): 3 x Linear(in_features=2, out_features=2, bias=False)\n"
            "  (3-4): 2 x ReLU()\n  (5): Tanh()\n)")
        assert repr(lib.nn.ModuleList()) == "ModuleList()" and len(lib.nn.ModuleList(None)) == 0
        assert "0" not in dir(blocks) and "append" in dir(blocks)


def modules_dict(lib):
    return lib.nn.ModuleDict({"b": lib.nn.ReLU(), "a": lib.nn.Tanh()})


MODULEDICT_EDITS = {
    "pop": lambda lib, m: m.pop("b"),
    "pop absent": lambda lib, m: m.pop("x"),
    "get absent": lambda lib, m: m["x"],
    "del": lambda lib, m: m.__delitem__("a"),
    "del absent": lambda lib, m: m.__delitem__("x"),
    "clear": lambda lib, m: m.clear(),
    "update pairs": lambda lib, m: m.update([("c", lib.nn.ELU()), ("b", lib.nn.Sigmoid())]),
    "update a ModuleDict": lambda lib, m: m.update(lib.nn.ModuleDict({"z": lib.nn.ELU()})),
    "update a number": lambda lib, m: m.update(3),
    "update triples": lambda lib, m: m.update([("c", lib.nn.ELU(), 1)]),
    "update numbers": lambda lib, m: m.update([3]),
    "set a number": lambda lib, m: m.__setitem__("c", 3),
}


@pytest.mark.parametrize("change", MODULEDICT_EDITS.values(), ids=MODULEDICT_EDITS)
def test_module_dict_methods_as_torch(change):
    def case(lib):
        module = modules_dict(lib)
        result = change(lib, module)
        return (names(module), list(module), list(module.keys()),
                [type(v).__name__ for v in module.values()],
                [k for k, _ in module.items()], type(result).__name__, "a" in module,
                hasattr(module, "a"))
    same_on_both(case)


def params(lib):
    return lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2)), lib.zeros(3)])


def param_dict(lib):
    return lib.nn.ParameterDict({"b": lib.nn.Parameter(lib.ones(2)), "a": lib.zeros(3)})


PARAMETER_CONTAINER_CASES = {
    "list extend and +=": lambda lib: params(lib).extend([lib.ones(1)]).__iadd__([lib.ones(4)]),
    "list set": lambda lib: params(lib).__setitem__(0, lib.ones(5)),
    "list set out of range": lambda lib: params(lib).__setitem__(2, lib.ones(5)),
    "list slice": lambda lib: params(lib)[1:],
    "list -1": lambda lib: params(lib)[-1],
    "list extend a tensor": lambda lib: params(lib).extend(lib.ones(2)),
    "list call": lambda lib: params(lib)(1),
    "dict pop": lambda lib: param_dict(lib).pop("b"),
    "dict popitem": lambda lib: param_dict(lib).popitem(),
    "dict popitem empty": lambda lib: lib.nn.ParameterDict().popitem(),
    "dict get": lambda lib: (param_dict(lib).get("x"), param_dict(lib).get("a")),
    "dict setdefault": lambda lib: param_dict(lib).setdefault("c", lib.ones(1)),
    "dict copy": lambda lib: param_dict(lib).copy(),
    "dict |": lambda lib: param_dict(lib) | lib.nn.ParameterDict({"z": lib.ones(1)}),
    "dict ror": lambda lib: lib.nn.ParameterDict({"z": lib.ones(1)}) | param_dict(lib),
    "dict fromkeys": lambda lib: param_dict(lib).fromkeys(["x", "y"], lib.ones(1)),
    "dict reversed": lambda lib: list(reversed(param_dict(lib))),
    "dict clear": lambda lib: param_dict(lib).clear(),
    "dict missing key": lambda lib: param_dict(lib)["x"],
    "dict int key": lambda lib: param_dict(lib).__setitem__(1, lib.ones(1)),
    "dict del missing": lambda lib: param_dict(lib).__delitem__("x"),
    "dict update a number": lambda lib: param_dict(lib).update(3),
    "dict call": lambda lib: param_dict(lib)(1),
}


@pytest.mark.parametrize("case", PARAMETER_CONTAINER_CASES.values(),
                         ids=PARAMETER_CONTAINER_CASES)
def test_parameter_containers_as_torch(case):
    def summary(lib):
        result = case(lib)
        result = result[1] if isinstance(result, tuple) and len(result) == 2 and \
            isinstance(result[0], str) else result
        if isinstance(result, lib.nn.Module):
            return type(result).__name__, [(n, tuple(p.shape)) for n, p in
                                           result.named_parameters()]
        if isinstance(result, lib.Tensor):
            return type(result).__name__, tuple(result.shape)
        return result if not isinstance(result, tuple) else [
            None if r is None else tuple(r.shape) for r in result]
    same_on_both(summary)


def test_parameter_container_reprs_and_missing_key_errors():
    assert repr(params(mg)) == ("ParameterList(\n    (0): Parameter containing: [torch.float32 of "
                                "size 2]\n    (1): Parameter containing: [torch.float32 of size "
                                "3]\n)")
    # a ParameterList names the dtype as torch prints it, whatever it is
    same_on_both(lambda lib: repr(lib.nn.ParameterList(
        [lib.ones(2, dtype=lib.float64), lib.nn.Parameter(lib.ones(1, dtype=lib.int64),
                                                          requires_grad=False)])))
    with pytest.raises(KeyError):                     # a dict's habit ...
        param_dict(mg)["x"]
    with pytest.raises(AttributeError):               # ... and torch's class
        param_dict(mg)["x"]


# ----- keywords of the Module methods -------------------------------------------------------
def shared_tree(lib):
    model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
    model.append(model[0])
    model[1].register_buffer("alias", model[1].running_mean)
    return model


METHOD_CASES = {
    "named_parameters": lambda lib, m: [n for n, _ in m.named_parameters("p", False)]
    + [n for n, _ in m.named_parameters(prefix="q", remove_duplicate=False)],
    "parameters": lambda lib, m: [len(list(m.parameters(recurse=False))),
                                  tuple(next(m.parameters()).shape), len(list(m.parameters()))],
    "named_buffers": lambda lib, m: [n for n, _ in m.named_buffers(prefix="b")]
    + [n for n, _ in m.named_buffers(remove_duplicate=False)]
    + [n for n, _ in m[1].named_buffers(recurse=False)],
    "buffers": lambda lib, m: [len(list(m.buffers())), len(list(m.buffers(recurse=False)))],
    "named_modules": lambda lib, m: [n for n, _ in m.named_modules()]
    + [n for n, _ in m.named_modules(remove_duplicate=False)]
    + [n for n, _ in m.named_modules(None, "top")],
    "named_modules memo": lambda lib, m: [n for n, _ in m.named_modules({m[0]})],
    "modules": lambda lib, m: [len(list(m.modules())),
                               len(list(m.modules(remove_duplicate=False))),
                               [type(c).__name__ for c in m.modules(False)]],
    "children": lambda lib, m: [type(c).__name__ for c in m.children()],
    "get_buffer": lambda lib, m: tuple(m.get_buffer("1.running_var").shape),
    "get_buffer of a parameter": lambda lib, m: m.get_buffer("0.weight"),
    "get_parameter of a buffer": lambda lib, m: m.get_parameter("1.running_mean"),
    "get_parameter absent": lambda lib, m: m.get_parameter("1.nope"),
    "get_submodule of a parameter": lambda lib, m: m.get_submodule("0.weight"),
    "get_submodule absent": lambda lib, m: m.get_submodule("7"),
    "set_submodule": lambda lib, m: (m.set_submodule("1", lib.nn.Identity()), names(m))[1],
    "set_submodule strict": lambda lib, m: m.set_submodule("0.act", lib.nn.ReLU(), strict=True),
    "set_submodule a number": lambda lib, m: m.set_submodule("0", 3),
    "add_module int name": lambda lib, m: m.add_module(3, lib.nn.ReLU()),
    "add_module dotted": lambda lib, m: m.add_module("a.b", lib.nn.ReLU()),
    "add_module forward": lambda lib, m: m.add_module("forward", lib.nn.ReLU()),
    "register_module": lambda lib, m: (m.register_module("x", lib.nn.ReLU()), names(m))[1],
    "register_buffer int name": lambda lib, m: m.register_buffer(1, lib.ones(1)),
    "register_parameter tensor": lambda lib, m: m.register_parameter("w", lib.ones(1)),
    "zero_grad": lambda lib, m: [m[0].weight.__setattr__("grad", lib.ones(2, 2)),
                                 m.zero_grad(False), m[0].weight.grad.tolist(),
                                 m.zero_grad(), m[0].weight.grad][2:],
    "requires_grad_": lambda lib, m: (m.requires_grad_(requires_grad=False) is m,
                                      [p.requires_grad for p in m.parameters()]),
    "to forms": lambda lib, m: [m.to("cpu", lib.float64, True)[0].weight.dtype,
                                m[1].num_batches_tracked.dtype,
                                m.to(lib.ones(1, dtype=lib.float32))[0].weight.dtype,
                                m.to(dtype=lib.float64, non_blocking=True)[0].bias.dtype,
                                m.type(lib.float32)[0].weight.dtype,
                                m[1].num_batches_tracked.dtype, m.share_memory() is m],
    "to an integer dtype": lambda lib, m: m.to(lib.int64),
    "dir": lambda lib, m: [k in dir(m[0]) for k in ("weight", "bias", "training", "forward",
                                                   "in_features", "_parameters", "0")],
    "repr": lambda lib, m: repr(m),
    "_get_name": lambda lib, m: m._get_name(),
    "compile": lambda lib, m: m.compile(),
    "compile a bad mode": lambda lib, m: m.compile(mode="fastest"),
}


@pytest.mark.parametrize("case", METHOD_CASES.values(), ids=METHOD_CASES)
def test_module_methods_take_torchs_keywords_and_raise_its_errors(case):
    same_on_both(lambda lib: case(lib, shared_tree(lib)))


def test_repr_lays_out_extra_lines_and_children_as_torch():
    def case(lib):
        class Block(lib.nn.Module):
            def __init__(self, extra):
                super().__init__()
                self.extra = extra
                self.fc = lib.nn.Linear(2, 2)

            def extra_repr(self):
                return self.extra

        class Leaf(lib.nn.Module):
            def extra_repr(self):
                return "a=1\nb=2"
        return [repr(Block("a=1")), repr(Block("a=1\nb=2")), repr(Block("")), repr(Leaf())]
    same_on_both(case)


def test_plain_attributes_before_init_are_allowed_and_modules_are_not():
    def case(lib):
        class Early(lib.nn.Module):
            def __init__(self, value):
                self.value = value
                super().__init__()
        return Early(3).value, outcome(lambda _: Early(lib.nn.ReLU()), lib)
    same_on_both(case)


# ----- state dicts ---------------------------------------------------------------------------
STATE_CASES = {
    "keys and metadata": lambda lib, m: (type(m.state_dict()).__name__, list(m.state_dict()),
                                         dict(m.state_dict()._metadata)),
    "detached and shared": lambda lib, m: [
        (v.requires_grad, type(v).__name__, v.data_ptr() == getattr(
            m.get_submodule(k.rpartition(".")[0]), k.rpartition(".")[2]).data_ptr())
        for k, v in m.state_dict().items()],
    "keep_vars": lambda lib, m: [type(v).__name__ for v in m.state_dict(keep_vars=True).values()]
    + [m.state_dict(keep_vars=True)["0.weight"] is m[0].weight],
    "destination and prefix": lambda lib, m: (lambda d: (m.state_dict(destination=d,
                                                                      prefix="x.") is d,
                                                         list(d)))(OrderedDict()),
    "positional": lambda lib, m: list(m.state_dict({}, "y.")),
    "load strict": lambda lib, m: m.load_state_dict({"0.weight": lib.ones(2, 2)}),
    "load not strict": lambda lib, m: tuple(m.load_state_dict({"0.weight": lib.ones(2, 2),
                                                               "z": lib.ones(1)}, False)),
    "load shape": lambda lib, m: m.load_state_dict({**m.state_dict(),
                                                    "0.weight": lib.ones(3, 2)}),
    "load a list": lambda lib, m: m.load_state_dict([("0.weight", lib.ones(2, 2))]),
    "load 1-element into 0-d": lambda lib, m: (m.load_state_dict({
        **m.state_dict(), "1.num_batches_tracked": lib.tensor([7])}),
        m[1].num_batches_tracked.item()),
    "assign": lambda lib, m: (lambda sd: (m.load_state_dict(sd, assign=True),
                                          type(m[0].weight).__name__, m[0].weight.requires_grad,
                                          m[0].weight.data_ptr() == sd["0.weight"].data_ptr(),
                                          m[0].weight.dtype, m[1].running_mean is
                                          sd["1.running_mean"]))(
        {k: v.double() if v.is_floating_point() else v.clone()
         for k, v in m.state_dict().items()}),
}


def bn_tree(lib):
    return lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))


@pytest.mark.parametrize("case", STATE_CASES.values(), ids=STATE_CASES)
def test_state_dict_keywords_and_load_errors_as_torch(case):
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = outcome(lambda _: case(lib, bn_tree(lib)), lib)
        return result, [w.category.__name__ for w in caught]
    same_on_both(run)


def test_a_failed_load_is_a_runtime_error_and_a_value_error_and_loads_nothing():
    model = bn_tree(mg)
    before = copy.deepcopy(model.state_dict())
    state = {**bn_tree(mg).state_dict(), "1.bias": mg.ones(5)}
    for error in (RuntimeError, ValueError):
        with pytest.raises(error, match=r"Error\(s\) in loading state_dict for Sequential"):
            model.load_state_dict(state)
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key].numpy())


def test_overridden_load_from_state_dict_hooks_and_extra_state_as_torch():
    def case(lib):
        class Renamed(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(2, 2)
                self.steps = 0

            def _load_from_state_dict(self, state_dict, prefix, *args):
                old = prefix + "old.weight"
                if old in state_dict:
                    state_dict[prefix + "fc.weight"] = state_dict.pop(old)
                super()._load_from_state_dict(state_dict, prefix, *args)

            def get_extra_state(self):
                return {"steps": self.steps}

            def set_extra_state(self, state):
                self.steps = state["steps"]

        outer = lib.nn.Sequential(Renamed())
        log = []
        outer[0]._register_state_dict_hook(lambda m, sd, prefix, meta: log.append(prefix))
        outer[0].register_state_dict_pre_hook(lambda m, prefix, keep: log.append(keep))
        outer[0].register_load_state_dict_post_hook(
            lambda m, keys: log.append(list(keys.missing_keys)))
        outer[0].register_load_state_dict_pre_hook(
            lambda m, sd, prefix, *rest: log.append(sorted(sd)))
        saved = outer.state_dict()
        keys = list(saved)
        saved["0._extra_state"] = {"steps": 5}
        saved["0.old.weight"] = saved.pop("0.fc.weight") * 0 + 2
        result = outer.load_state_dict(saved)
        failed = outcome(lambda _: outer.load_state_dict({}), lib)
        return keys, repr(result), outer[0].steps, outer[0].fc.weight.tolist(), log, failed
    ours, theirs = case(mg), case(torch)
    assert ours[:4] == theirs[:4] and ours[5] == theirs[5]
    # a failed load runs the post-hooks before it raises, as torch's (its missing keys)
    assert ours[4] == theirs[4] and theirs[4][-1] == ours[0]


# ----- train/eval, reprs, loads as torch's -----------------------------------------------
def test_train_calls_each_childs_own_train_and_takes_only_a_bool():
    def case(lib):
        class FrozenNorm(lib.nn.BatchNorm1d):
            def train(self, mode=True):             # the usual "keep BatchNorm frozen"
                return super().train(False)
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(FrozenNorm(2)))
        model.eval()
        model.train()
        modes = [m.training for m in model.modules()]
        return modes, outcome(lambda _: model.train("no"), lib), model.train(True) is model
    same_on_both(case)


def test_repr_shows_a_none_child_as_torch():
    def case(lib):
        class Block(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(2, 2)
                self.act = None
                self.register_module("norm", None)
        return repr(Block())
    same_on_both(case)


def test_parameter_containers_print_what_is_not_a_tensor_as_torch():
    same_on_both(lambda lib: [repr(lib.nn.ParameterList([None])),
                              repr(lib.nn.ParameterDict({"a": None}))])
    assert repr(mg.nn.ParameterList([None, mg.ones(1)])) == (
        "ParameterList(\n    (0): Object of type: NoneType\n"
        "    (1): Parameter containing: [torch.float32 of size 1]\n)")


def test_an_overridden_load_from_state_dict_sees_the_loaded_values_as_torch():
    def case(lib):
        class Cached(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.zeros(2))
                self.cached = None

            def _load_from_state_dict(self, *args):
                super()._load_from_state_dict(*args)
                self.cached = self.w.detach().clone().tolist()   # after the write
        model = lib.nn.Sequential(Cached(), lib.nn.Linear(1, 1))
        model.load_state_dict({"0.w": lib.ones(2), "1.weight": lib.ones(1, 1),
                               "1.bias": lib.ones(1)})
        return model[0].cached, model[0].w.tolist()
    same_on_both(case)


def test_a_bad_entry_after_an_override_wrote_still_leaves_the_model_as_it_was():
    class Counting(mg.nn.Linear):
        def get_extra_state(self):
            return {"steps": self.steps}

        def set_extra_state(self, state):
            self.steps = state["steps"]
    model = mg.nn.Sequential(Counting(2, 2), mg.nn.Linear(2, 2, bias=False))
    model[0].steps = 1
    model[1].weight = model[0].weight                  # tied: written under two names
    before = copy.deepcopy(model.state_dict())
    state = {**{k: v + 1 if isinstance(v, mg.Tensor) else v
                for k, v in model.state_dict().items()},
             "0._extra_state": {"steps": 9}, "1.weight": mg.ones(3, 3)}
    weight = model[0].weight
    with pytest.raises(RuntimeError, match="1.weight"):
        model.load_state_dict(state)
    assert model[0].weight is weight and model[0].steps == 1
    for key, value in model.state_dict().items():
        if key != "0._extra_state":
            np.testing.assert_array_equal(value.numpy(), before[key].numpy())
    # assigned, then put back
    with pytest.raises(RuntimeError, match=r"Missing key\(s\) in state_dict"):
        model.load_state_dict({"0.weight": mg.ones(2, 2)}, assign=True)
    assert model[0].weight is weight and model[1].weight is weight


def test_load_with_assign_keeps_a_given_parameter_with_the_targets_flag_as_torch():
    def case(lib):
        source, target = lib.nn.Linear(2, 2), lib.nn.Linear(2, 2)
        target.bias.requires_grad_(False)
        target.load_state_dict(source.state_dict(keep_vars=True), assign=True)
        return (target.weight is source.weight, target.bias is source.bias,
                source.bias.requires_grad, type(target.weight).__name__,
                [n for n, _ in target.named_parameters()])
    same_on_both(case)


def test_parameters_restart_and_loop_again_as_docs_pytorch_md_says():
    # a documented difference: parameters() is a list that next() also steps through
    model = mg.nn.Linear(2, 2)
    members = model.parameters()
    next(members)
    assert len(list(members)) == 2                     # torch's generator: 1 left
    assert len([p for _ in range(2) for p in members]) == 4       # torch's: 0 the 2nd time


def test_a_state_dict_hook_that_is_not_callable_names_the_method():
    for method in ("register_state_dict_pre_hook", "register_load_state_dict_post_hook"):
        with pytest.raises(TypeError, match=method):
            getattr(mg.nn.Linear(1, 1), method)(3)
