"""nn.Module's hooks against torch.nn's: forward pre-hooks and hooks with their keywords,
full backward hooks and pre-hooks (the gradients they see and replace, in float64), and the
deprecated ``register_backward_hook``."""

import warnings

import numpy as np
import pytest
import torch
from module_parity import LIBS, outcome, same_on_both

import microgradnorm as mg


# ----- backward hooks ----------------------------------------------------------------------
def hooked_linear(lib, seed=0):
    layer = lib.nn.Linear(3, 2).double()
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(rng.standard_normal((2, 3))))
        layer.bias.copy_(lib.tensor(rng.standard_normal(2)))
    return layer


def arrays(grads):
    return [None if g is None else g.detach().numpy().copy() for g in grads]


def assert_same_grads(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


def record_hooks(lib, build, run, replace=None, replace_pre=None):
    """Every call of the hooks of ``build(lib)`` while ``run`` runs, and x's gradient."""
    module = build(lib)
    calls = []

    def hook(m, grad_input, grad_output):
        calls.append(("hook", arrays(grad_input), arrays(grad_output)))
        return None if replace is None else replace(grad_input)

    def pre_hook(m, grad_output):
        calls.append(("pre", arrays(grad_output)))
        return None if replace_pre is None else replace_pre(grad_output)

    module.register_full_backward_hook(hook)
    module.register_full_backward_pre_hook(pre_hook)
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), requires_grad=True)
    run(lib, module, x)
    return calls, arrays([x.grad, module.weight.grad])


BACKWARD_RUNS = {
    "once": lambda lib, m, x: (m(x) ** 2).sum().backward(),
    "called twice": lambda lib, m, x: (m(x).sum() + (m(x * 2) ** 3).sum()).backward(),
    "retain_graph": lambda lib, m, x: [y.backward(retain_graph=True) for y in [m(x).sum()]
                                       for _ in range(2)],
    "output used twice": lambda lib, m, x: [(y * y + y).sum().backward() for y in [m(x)]],
}


@pytest.mark.parametrize("run", BACKWARD_RUNS.values(), ids=BACKWARD_RUNS)
@pytest.mark.parametrize("replace, replace_pre", [
    (None, None), (lambda g: (g[0] * 10,), None), (None, lambda g: (g[0] * -3,)),
    (lambda g: [None], None)], ids=["observe", "replace grad_input", "replace grad_output",
                                    "drop grad_input"])
def test_full_backward_hooks_see_and_replace_torchs_gradients_in_float64(run, replace,
                                                                         replace_pre):
    ours = record_hooks(mg, hooked_linear, run, replace, replace_pre)
    theirs = record_hooks(torch, hooked_linear, run, replace, replace_pre)
    assert [c[0] for c in ours[0]] == [c[0] for c in theirs[0]]
    for a, b in zip(ours[0], theirs[0]):
        for grads_a, grads_b in zip(a[1:], b[1:]):
            assert_same_grads(grads_a, grads_b)
    assert_same_grads(ours[1], theirs[1])


class TwoOut:
    @staticmethod
    def make(lib):
        class Two(lib.nn.Module):
            def forward(self, x, n, y, scale=None):
                return x * n + y * 2, x * scale if scale is not None else x.exp()
        return Two()


@pytest.mark.parametrize("uses", ["first", "second", "both"])
@pytest.mark.parametrize("y_requires_grad", [False, True])
def test_full_backward_hooks_with_mixed_inputs_and_tuple_outputs_as_torch(uses,
                                                                        y_requires_grad):
    def case(lib):
        module, calls = TwoOut.make(lib), []
        module.register_full_backward_hook(
            lambda m, gin, gout: calls.append((arrays(gin), arrays(gout))))
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=y_requires_grad)
        scale = lib.tensor([4.0, 5.0], dtype=lib.float64, requires_grad=True)
        a, b = module(x, 3, y, scale=scale)
        loss = {"first": a, "second": b, "both": a * b}[uses]
        loss.sum().backward()
        return calls, arrays([x.grad, scale.grad])
    ours, theirs = case(mg), case(torch)
    assert len(ours[0]) == len(theirs[0]) == 1
    for got, expected in zip(ours[0][0], theirs[0][0]):
        assert_same_grads(got, expected)
    assert_same_grads(ours[1], theirs[1])


def test_a_module_whose_inputs_need_no_grad_runs_its_hooks_with_a_warning_as_torch():
    def case(lib):
        layer, calls = hooked_linear(lib), []
        layer.register_full_backward_hook(lambda m, gin, gout: calls.append(
            (gin, arrays(gout))))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer(lib.ones(4, 3, dtype=lib.float64)).sum().backward()
        return calls, [w.category for w in caught]
    ours, theirs = case(mg), case(torch)
    assert ours[1] == theirs[1] == [UserWarning]
    assert ours[0][0][0] == theirs[0][0][0] == (None,)
    assert_same_grads(ours[0][0][1], theirs[0][0][1])
    for lib in LIBS:
        layer = hooked_linear(lib)
        layer.register_full_backward_hook(lambda m, gin, gout, lib=lib: (lib.ones(4, 3),))
        with pytest.raises(RuntimeError, match="should always return None"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer(lib.ones(4, 3, dtype=lib.float64)).sum().backward()


HOOK_ERRORS = {
    "too many grad_input": lambda lib, m: m.register_full_backward_hook(
        lambda mod, gin, gout: (gin[0], gin[0])),
    "too many grad_output": lambda lib, m: m.register_full_backward_pre_hook(
        lambda mod, gout: (gout[0], gout[0])),
    "a tensor for a tuple": lambda lib, m: m.register_full_backward_pre_hook(
        lambda mod, gout: gout[0] * 2),
    "both kinds": lambda lib, m: (m.register_full_backward_hook(lambda *a: None),
                                  m.register_backward_hook(lambda *a: None)),
    "both kinds, other order": lambda lib, m: (m.register_backward_hook(lambda *a: None),
                                               m.register_full_backward_hook(lambda *a: None)),
}


@pytest.mark.parametrize("register", HOOK_ERRORS.values(), ids=HOOK_ERRORS)
def test_bad_backward_hooks_raise_as_torch(register):
    def case(lib):
        layer = hooked_linear(lib)
        register(lib, layer)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer(lib.ones(4, 3, dtype=lib.float64, requires_grad=True)).sum().backward()
        return "ran"
    same_on_both(case)


def test_hook_order_prepend_removal_and_the_warning_for_a_dict_output():
    def case(lib):
        layer, order = hooked_linear(lib), []
        layer.register_full_backward_hook(lambda m, gi, go: order.append("a"))
        layer.register_full_backward_hook(lambda m, gi, go: order.append("b"), prepend=True)
        handle = layer.register_full_backward_pre_hook(lambda m, go: order.append("pa"))
        layer.register_full_backward_pre_hook(lambda m, go: order.append("pb"), prepend=True)
        x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        y = layer(x)
        handle.remove()                  # taken at the call: still runs for y
        y.sum().backward()
        layer(x).sum().backward()
        return order

    class AsDict:
        @staticmethod
        def case(lib):
            class D(lib.nn.Module):
                def forward(self, x):
                    return {"y": x * 2}
            module, calls = D(), []
            module.register_full_backward_hook(lambda *a: calls.append(1))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                module(lib.ones(2, requires_grad=True))["y"].sum().backward()
            return calls, [w.category for w in caught]
    same_on_both(case)
    same_on_both(AsDict.case)


def test_hooked_calls_are_views_that_refuse_in_place_ops_and_plain_calls_add_no_node():
    for lib in LIBS:
        relu = lib.nn.ReLU(inplace=True)
        relu.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError):
            relu(lib.ones(3, requires_grad=True) * 1)
    layer = hooked_linear(mg)
    x = mg.ones(4, 3, dtype=mg.float64, requires_grad=True)
    assert layer(x).grad_fn.inputs[0] is x                       # no hook: no extra node
    handle = layer.register_full_backward_hook(lambda *a: None)
    y = layer(x)
    assert y.grad_fn.name == "BackwardHookFunction"               # torch's node name
    handle.remove()
    assert layer(x).grad_fn.name != "BackwardHookFunction"


def legacy_calls(lib, build, x_requires_leaf):
    module, calls = build(lib), []
    module.register_backward_hook(lambda m, gin, gout: calls.append((arrays(gin),
                                                                     arrays(gout))))
    x = lib.tensor(np.linspace(-1, 1, 8).reshape(4, 2), requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = module(x if x_requires_leaf else x * 1)
    (y * y).sum().backward()
    return calls, [w.category for w in caught]


@pytest.mark.parametrize("build", [lambda lib: lib.nn.Tanh(),
                                   lambda lib: lib.nn.LayerNorm(2).double()],
                         ids=["Tanh", "LayerNorm"])
@pytest.mark.parametrize("leaf", [True, False])
def test_deprecated_backward_hook_gives_torchs_last_node_gradients_and_warnings(build, leaf):
    ours, theirs = legacy_calls(mg, build, leaf), legacy_calls(torch, build, leaf)
    assert ours[1] == theirs[1]
    assert len(ours[0]) == len(theirs[0]) == 1
    for got, expected in zip(ours[0][0], theirs[0][0]):
        assert_same_grads(got, expected)


def test_deprecated_backward_hook_on_linear_sees_this_librarys_node_and_can_replace():
    layer, seen = hooked_linear(mg), []

    def hook(m, grad_input, grad_output):
        seen.append([g.shape for g in grad_input])
        return grad_input[0] * 0, grad_input[1], grad_input[2]
    layer.register_backward_hook(hook)
    x = mg.ones(4, 3, dtype=mg.float64, requires_grad=True)
    with pytest.warns(FutureWarning, match="multiple autograd Nodes"):
        y = layer(x)
    y.sum().backward()
    assert seen == [[(4, 3), (2, 3), (2,)]]                       # x, weight, bias
    assert (x.grad.numpy() == 0).all() and (layer.weight.grad.numpy() == 4).all()


# ----- forward hooks -------------------------------------------------------------------------
FORWARD_HOOK_CASES = {
    "prepend": lambda lib, m, log: [
        m.register_forward_pre_hook(lambda mod, a: log.append("a")),
        m.register_forward_pre_hook(lambda mod, a: log.append("b"), prepend=True),
        m.register_forward_hook(lambda mod, a, o: log.append("c")),
        m.register_forward_hook(lambda mod, a, o: log.append("d"), prepend=True)],
    "with_kwargs": lambda lib, m, log: [
        m.register_forward_pre_hook(lambda mod, a, kw: (a, {"scale": 3.0}), with_kwargs=True),
        m.register_forward_hook(lambda mod, a, kw, o: log.append(sorted(kw)) or o * 2,
                                with_kwargs=True)],
    "pre-hook returns a tensor": lambda lib, m, log: [
        m.register_forward_pre_hook(lambda mod, a: a[0] + 1)],
    "bad with_kwargs result": lambda lib, m, log: [
        m.register_forward_pre_hook(lambda mod, a, kw: a, with_kwargs=True)],
    "positional prepend": lambda lib, m, log: [
        m.register_forward_hook(lambda mod, a, o: None, True)],
}


@pytest.mark.parametrize("register", FORWARD_HOOK_CASES.values(), ids=FORWARD_HOOK_CASES)
def test_forward_hooks_take_torchs_keywords(register):
    def case(lib):
        class Scale(lib.nn.Module):
            def forward(self, x, scale=1.0):
                return x * scale
        module, log = Scale(), []
        register(lib, module, log)
        return module(lib.ones(2), scale=2.0).tolist(), log
    same_on_both(case)


def test_always_call_forward_hooks_run_after_an_error_as_torch():
    def case(lib):
        class Broken(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        module, log = Broken(), []
        module.register_forward_hook(lambda m, a, o: log.append(("always", o)),
                                     always_call=True)
        module.register_forward_hook(lambda m, a, o: log.append("never"))
        module.register_forward_hook(lambda m, a, o: 1 / 0, always_call=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            error = outcome(lambda _: module(lib.ones(2)), lib)
        return log, error, [w.category for w in caught]
    same_on_both(case)


# ----- the hook tables ---------------------------------------------------------------------
def test_each_module_owns_hook_tables_that_library_code_edits_as_torch():
    def case(lib):
        import copy
        first, second, seen = lib.nn.Linear(2, 2), lib.nn.Linear(2, 2), []
        first._forward_hooks[1] = lambda *a: seen.append("forward")
        first._backward_hooks[2] = lambda *a: seen.append("backward")
        first._is_full_backward_hook = True
        first(lib.ones(1, 2, requires_grad=True)).sum().backward()
        second._backward_hooks.clear()
        second._state_dict_hooks.clear()
        copies = [type(copy.copy(t)).__name__ for t in (second._backward_hooks,
                                                         second._forward_pre_hooks_with_kwargs)]
        return (seen, copies, len(second._backward_hooks), len(second._forward_hooks),
                type(lib.nn.ReLU()._load_state_dict_post_hooks).__name__)
    same_on_both(case)


# what torch's Module.__setstate__ adds to a module pickled before these tables existed
LATER_TABLES = ("_forward_pre_hooks", "_forward_hooks_with_kwargs",
                "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs",
                "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                "_load_state_dict_post_hooks", "_backward_pre_hooks")


def observe(module, args, output):
    return None


def test_a_module_unpickled_from_an_older_state_gets_its_tables_as_torch():
    def case(lib, dropped=LATER_TABLES):
        import copy
        import pickle
        layer = lib.nn.Linear(2, 2)
        layer.register_forward_hook(observe)             # picklable: a module's function
        old = lib.nn.Linear.__new__(lib.nn.Linear)
        old.__setstate__({k: v for k, v in layer.__dict__.items() if k not in dropped})
        seen = []
        old.register_forward_pre_hook(lambda *a: seen.append("pre"))
        old.register_full_backward_pre_hook(lambda *a: seen.append("backward pre"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            old(lib.ones(1, 2))[0].sum().backward()
        again = pickle.loads(pickle.dumps(layer))
        return (seen, len(old.state_dict()), len(again._forward_hooks),
                len(copy.deepcopy(layer)._backward_hooks))
    same_on_both(case)
    ours = case(mg, LATER_TABLES + ("_forward_hooks", "_backward_hooks"))   # torch's always
    assert ours == case(torch)


def test_full_backward_hooks_are_skipped_off_the_paths_to_inputs_as_torchs():
    # backward(inputs=...) runs only the nodes on a path to those inputs, as torch's engine
    def case(lib):
        model, seen = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 1)), []
        model[0].register_full_backward_hook(lambda m, gi, go: seen.append("hook 0"))
        model[1].register_full_backward_pre_hook(lambda m, go: seen.append("pre 1"))
        model(lib.ones(1, 2, requires_grad=True)).sum().backward(inputs=[model[1].weight])
        return seen, model[0].weight.grad is None
    assert case(torch) == (["pre 1"], True)
    assert case(mg) == (["pre 1"], True)
