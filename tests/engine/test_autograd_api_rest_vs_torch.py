"""The rest of torch.autograd's, torch.autograd.graph's and torch.func's public names, run
side by side with torch: ``register_multi_grad_hook`` (which gradients "all" hands over,
when it fires among the other hooks, "any"'s first gradient, the handle, the refusals),
``allow_mutation_on_saved_tensors`` (the gradient of the value saved, the errors after and
nested), ``func.linearize``, ``func.functionalize``, ``func.replace_all_batch_norm_modules_``,
``set_multithreading_enabled`` and the other settings, ``Variable``/``variable``,
``anomaly_mode`` and ``SavedTensor``."""

import threading

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
LIBS = (mg, torch)


def leaves(lib, arrays):
    return [lib.tensor(a, requires_grad=True) for a in arrays]


def same(ours, theirs):
    """Lists of gradients (None or tensors) agree."""
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


def error_class(fn):
    try:
        fn()
    except Exception as error:      # noqa: BLE001  (the class is what is compared)
        return type(error)
    return None


# ----- register_multi_grad_hook ------------------------------------------------------------

def multi_all_run(lib, backward):
    """Each backward of ``backward`` under an "all" hook on (a, b, c, d): the lists fn got."""
    arrays = [RNG.standard_normal((2, 3)) for _ in range(2)]
    a, b = leaves(lib, arrays)
    c, d = a * b, (a * b).exp()
    calls = []
    handle = lib.autograd.graph.register_multi_grad_hook((a, b, c, d), calls.append)
    backward(lib, a, b, c, d)
    return calls, handle, (a, b, c, d)


@pytest.mark.parametrize("case", [
    lambda lib, a, b, c, d: c.sum().backward(retain_graph=True),
    lambda lib, a, b, c, d: (c.sum() + d.sum()).backward(),
    lambda lib, a, b, c, d: c.sum().backward(inputs=(a,), retain_graph=True),
    lambda lib, a, b, c, d: lib.autograd.backward([d.sum()], inputs=[c, b]),
    lambda lib, a, b, c, d: lib.autograd.grad((c * d).sum(), (c,)),
    lambda lib, a, b, c, d: [c.sum().backward(retain_graph=True) for _ in range(3)],
], ids=["backward", "both", "inputs_leaf", "inputs_mixed", "grad_nonleaf", "reruns"])
def test_multi_grad_all_hands_over_what_this_backward_computes(case):
    state = RNG.bit_generator.state
    ours, _, _ = multi_all_run(mg, case)
    RNG.bit_generator.state = state
    theirs, _, _ = multi_all_run(torch, case)
    assert len(ours) == len(theirs) and len(ours) >= 1
    for got, want in zip(ours, theirs):
        same(got, want)


def test_multi_grad_all_fires_when_its_last_gradient_is_computed():
    """fn runs inside the backward, after the hooks of every tensor it waits for and
    before the nodes further down run."""
    def events(lib, x):
        log = []
        y = lib.tensor(x, requires_grad=True) * 2
        z = y.sin()
        w = z * 3
        y.register_hook(lambda g: log.append("y"))
        w.register_hook(lambda g: log.append("w"))
        lib.autograd.graph.register_multi_grad_hook(
            (w, z), lambda gs: log.append(("fn", [g is None for g in gs])))
        z.register_hook(lambda g: log.append("z"))
        w.sum().backward()
        return log

    x = RNG.standard_normal(3)
    assert events(mg, x) == events(torch, x)


def test_multi_grad_all_with_a_sibling_output_that_got_no_gradient():
    for lib in LIBS:
        x = lib.tensor(RNG.standard_normal(4), requires_grad=True)
        p, q = x.split(2)
        got = []
        lib.autograd.graph.register_multi_grad_hook((p, q), got.append)
        (p * 2).sum().backward()
        assert len(got) == 1 and got[0][1] is None and got[0][0] is not None


def test_multi_grad_all_refuses_a_leaf_input_of_grad_as_torch():
    def refused(lib):
        a, b = leaves(lib, [RNG.standard_normal(3), RNG.standard_normal(3)])
        lib.autograd.graph.register_multi_grad_hook((a, b), lambda gs: None)
        return error_class(lambda: lib.autograd.grad((a * b).sum(), (a,)))

    classes = [refused(lib) for lib in LIBS]
    assert classes[0] is not None and issubclass(classes[0], classes[1])


def test_multi_grad_all_sees_its_own_run_after_a_backward_raised_in_a_hook():
    """A backward that raises in a hook ends there: the backward whose hook started it (a
    nested one) and the next backward on the thread each hand over their own gradients."""
    def run(lib, x):
        log, grads = [], []

        def failing(_):
            with lib.enable_grad():                 # (a backward's hooks run without it)
                u = lib.tensor(x, requires_grad=True) * 5
                v = u.cos()
                u.register_hook(lambda g: 1 / 0)    # before the hook below: it never fires
                lib.autograd.graph.register_multi_grad_hook(
                    (v, u), lambda gs: log.append("inner"))
                try:
                    v.sum().backward()
                except ZeroDivisionError:
                    log.append("raised")

        y = lib.tensor(x, requires_grad=True) * 2
        z = y.sin()
        w = z * 3
        lib.autograd.graph.register_multi_grad_hook(
            (w, y), lambda gs: (log.append("fn"), grads.append(gs)))
        z.register_hook(failing)
        w.sum().backward(retain_graph=True)          # one raised nested in its hook
        failing(None)                                # one raised on its own
        w.sum().backward()
        return log, grads

    x = RNG.standard_normal(3)
    (ours, got), (theirs, want) = run(mg, x), run(torch, x)
    assert ours == theirs and ours.count("fn") == 2
    for a, b in zip(got, want):
        same(a, b)


def test_multi_grad_any_gets_the_first_gradient_once_per_backward():
    seen = {}
    for lib in LIBS:
        a, b = leaves(lib, [RNG.standard_normal(3), RNG.standard_normal(3)])
        c = a * b
        got = seen[lib] = []
        handle = lib.autograd.graph.register_multi_grad_hook(
            (a, b, c, lib.ones(3)), got.append, mode="any")     # one not requiring grad: left
        c.sum().backward(retain_graph=True)
        (a * 2).sum().backward()
        handle.remove()
        c.sum().backward()
    assert len(seen[mg]) == len(seen[torch]) == 2
    same(seen[mg], seen[torch])


def test_multi_grad_handle_removes_every_hook():
    for lib in LIBS:
        a, b = leaves(lib, [RNG.standard_normal(3), RNG.standard_normal(3)])
        got = []
        handle = lib.autograd.graph.register_multi_grad_hook((a, b), got.append)
        handle.remove()
        (a * b).sum().backward()
        assert got == []


@pytest.mark.parametrize("call", [
    lambda lib, a: lib.autograd.graph.register_multi_grad_hook((a,), print, mode="every"),
    lambda lib, a: lib.autograd.graph.register_multi_grad_hook((a, lib.ones(2)), print),
], ids=["bad_mode", "no_grad_tensor_in_all"])
def test_multi_grad_refusals_have_torchs_classes(call):
    ours = error_class(lambda: call(mg, mg.ones(2, requires_grad=True)))
    theirs = error_class(lambda: call(torch, torch.ones(2, requires_grad=True)))
    assert theirs is not None and ours is not None and issubclass(ours, theirs)


# ----- allow_mutation_on_saved_tensors -----------------------------------------------------

def mutated_saved(lib, op):
    a = lib.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        b = a.clone()
        out = op(b)
        b.mul_(3).sin_()
        out.sum().backward()
    return a.grad


@pytest.mark.parametrize("op", [lambda b: b ** 2, lambda b: b * b, lambda b: b.exp() * b,
                                lambda b: b[0].tanh()], ids=["pow", "mul", "exp_mul", "view"])
def test_mutation_of_a_saved_tensor_keeps_its_saved_value(op):
    state = RNG.bit_generator.state
    ours = mutated_saved(mg, op)
    RNG.bit_generator.state = state
    same([ours], [mutated_saved(torch, op)])


def test_mutation_outside_the_block_still_refuses():
    for lib in LIBS:
        a = lib.ones(3, requires_grad=True)
        b = a.clone()
        out = (b * b).sum()
        b.add_(1)
        with pytest.raises(RuntimeError):
            out.backward()


def refusal(lib, which):
    allow = lib.autograd.graph.allow_mutation_on_saved_tensors
    if which == "after":
        with allow():
            a = lib.ones(3, requires_grad=True)
            out = (a.clone() ** 2).sum()
        return error_class(out.backward)

    def nest():
        with allow(), allow():
            pass
    found = error_class(nest)
    with allow():           # a fresh block works again
        pass
    return found


def test_backward_after_the_block_and_nested_blocks_raise_as_torch():
    for which in ("after", "nested"):
        classes = [refusal(lib, which) for lib in LIBS]
        assert classes[1] is not None and issubclass(classes[0], classes[1])


# ----- torch.func: linearize, functionalize, replace_all_batch_norm_modules_ ---------------

def test_linearize_matches_torch():
    x, t1, t2 = (RNG.standard_normal((2, 3)) for _ in range(3))
    results = {}
    for lib in LIBS:
        def f(v):
            return (v.sin() * v).sum(1), v.exp()
        out, jvp_fn = lib.func.linearize(f, lib.tensor(x))
        results[lib] = list(out) + list(jvp_fn(lib.tensor(t1))) + list(jvp_fn(lib.tensor(t2)))
    same(results[mg], results[torch])


@pytest.mark.parametrize("tangents", [lambda lib: (lib.ones(2),),
                                      lambda lib: (lib.ones(3, dtype=lib.float64),),
                                      lambda lib: (lib.ones(3), lib.ones(3))],
                         ids=["shape", "dtype", "structure"])
def test_linearize_refuses_tangents_as_torch(tangents):
    def refused(lib):
        _, jvp_fn = lib.func.linearize(lambda v: v * 2, lib.ones(3))
        return error_class(lambda: jvp_fn(*tangents(lib)))

    classes = [refused(lib) for lib in LIBS]
    assert classes[1] is not None and issubclass(classes[0], classes[1])


def test_functionalize_computes_the_same_values_and_checks_remove():
    x = RNG.standard_normal(4)
    results = {}
    for lib in LIBS:
        def f(v):
            y = v.clone()
            y.add_(1).mul_(2)
            v.sub_(1)                   # an input's change reaches the caller in both
            return y.view(2, 2)
        inp = lib.tensor(x)
        for remove in ("mutations", "mutations_and_views"):
            out = lib.func.functionalize(f, remove=remove)(inp)
        results[lib] = [out, inp]
    same(results[mg], results[torch])
    ours = error_class(lambda: mg.func.functionalize(print, remove="views"))
    theirs = error_class(lambda: torch.func.functionalize(print, remove="views"))
    assert theirs is not None and issubclass(ours, theirs)


def test_replace_all_batch_norm_modules_as_torch():
    states, data = {}, RNG.standard_normal((4, 3))
    for lib in LIBS:
        net = lib.nn.Sequential(lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 2),
                                lib.nn.Sequential(lib.nn.BatchNorm2d(2, track_running_stats=False)),
                                lib.nn.LayerNorm(2))
        assert lib.func.replace_all_batch_norm_modules_(net) is net
        states[lib] = (sorted(net.state_dict()),
                       [(m.running_mean is None, m.running_var is None,
                         m.num_batches_tracked is None, m.track_running_stats)
                        for m in (net[0], net[2][0])])
        net.eval()                      # batch statistics still
        x = lib.tensor(data, dtype=lib.float32)
        states[lib] += (net[0](x).detach().numpy(),)
    assert states[mg][:2] == states[torch][:2]
    np.testing.assert_allclose(states[mg][2], states[torch][2], rtol=1e-5, atol=1e-6)


# ----- settings, Variable, anomaly_mode, SavedTensor ---------------------------------------

def multithreading_states(ag):
    seen = [ag.is_multithreading_enabled(), ag.is_view_replay_enabled()]
    with ag.set_multithreading_enabled(False):
        seen.append(ag.is_multithreading_enabled())
        other = []
        thread = threading.Thread(target=lambda: other.append(ag.is_multithreading_enabled()))
        thread.start()
        thread.join()
        seen += other                   # per thread: the other thread's is its own
    seen.append(ag.is_multithreading_enabled())
    setting = ag.set_multithreading_enabled(False)        # a call: in force now
    seen += [ag.is_multithreading_enabled(), setting.mode, setting.prev]
    ag.set_multithreading_enabled(True)

    @ag.set_multithreading_enabled(False)
    def decorated():
        return ag.is_multithreading_enabled()
    seen += [ag.is_multithreading_enabled(), decorated(), ag.is_multithreading_enabled()]
    ag.set_multithreading_enabled(True)
    seen.append(error_class(lambda: ag.set_multithreading_enabled(1)).__name__)
    return seen


def test_multithreading_setting_as_torch():
    assert multithreading_states(mg.autograd) == multithreading_states(torch.autograd)


def test_variable_and_the_module_paths_as_torch():
    for lib in LIBS:
        x = lib.tensor(RNG.standard_normal(3), requires_grad=True)
        y = x * 2
        v = lib.autograd.Variable(y, requires_grad=True)
        assert type(v) is type(x) and v.is_leaf and v.requires_grad
        assert isinstance(x, lib.autograd.Variable) and not isinstance(3, lib.autograd.Variable)
        assert tuple(lib.autograd.Variable().shape) == (0,)
        with pytest.raises(TypeError):
            lib.autograd.Variable(3)
        with pytest.raises(RuntimeError):
            lib.autograd.variable(x)
        assert lib.autograd.variable.Variable is lib.autograd.Variable
        assert lib.autograd.anomaly_mode.detect_anomaly is lib.autograd.detect_anomaly
        assert lib.autograd.anomaly_mode.set_detect_anomaly is lib.autograd.set_detect_anomaly
        assert type((x * x).grad_fn._raw_saved_self) is lib.autograd.SavedTensor
