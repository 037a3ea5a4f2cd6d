"""Grad mode inside a backward: every hook and a custom Function's backward see it off
(``is_grad_enabled()`` False, what they compute has no history) unless the backward is
``create_graph=True``, whatever mode the caller is in, compared with torch."""

import warnings

import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

CALLS = ["backward", "backward_create_graph", "backward_inputs", "grad",
         "grad_create_graph", "grad_nonleaf"]
CALLERS = ["enabled", "no_grad"]


def _survey(T, call, caller):
    """{hook kind: (is_grad_enabled, requires_grad, grad_fn is None)} as each hook saw it
    the first time it ran, for one kind of backward call made under ``caller``'s mode."""
    seen = {}

    def note(kind, value):
        seen.setdefault(kind, (T.is_grad_enabled(), value.requires_grad,
                               value.grad_fn is None))

    weight = T.ones(3, requires_grad=True)

    class Triple(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 3

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            note("function", grad * x * weight)
            return grad * 3

    def unpacked(x):
        note("unpack", x * weight)
        return x

    leaf = T.full((3,), 0.5, requires_grad=True)
    layer = T.nn.Linear(3, 3)
    layer.register_full_backward_pre_hook(lambda m, go: note("module_pre", go[0] * weight))
    layer.register_full_backward_hook(lambda m, gi, go: note("module", go[0] * weight))
    with T.autograd.graph.saved_tensors_hooks(lambda x: x, unpacked):
        middle = leaf * 2
        out = Triple.apply(layer(middle))
        loss = (out * out).sum()
    leaf.register_hook(lambda g: note("leaf", g * weight))
    leaf.register_post_accumulate_grad_hook(lambda t: note("post_accumulate",
                                                           t.grad * weight))
    middle.register_hook(lambda g: note("nonleaf", g * weight))
    middle.grad_fn.register_prehook(lambda go: note("node_pre", go[0] * weight))
    middle.grad_fn.register_hook(lambda gi, go: note("node", go[0] * weight))
    T.autograd.graph.register_multi_grad_hook(
        (middle, out), lambda grads: note("multi", grads[0] * weight))
    mode = T.no_grad() if caller == "no_grad" else T.enable_grad()
    with mode, warnings.catch_warnings():
        warnings.simplefilter("ignore")           # create_graph's reference-cycle warning
        if call == "backward":
            loss.backward()
        elif call == "backward_create_graph":
            loss.backward(create_graph=True)
        elif call == "backward_inputs":
            loss.backward(inputs=[leaf])
        elif call == "grad":
            T.autograd.grad(loss, [leaf])
        elif call == "grad_create_graph":
            T.autograd.grad(loss, [leaf], create_graph=True)
        else:                                     # a hooked non-leaf asked for itself
            T.autograd.grad(loss, [middle])
        after = T.is_grad_enabled()
    return seen, after


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("call", CALLS)
def test_hooks_see_torch_grad_mode(call, caller):
    ours, ours_after = _survey(mg, call, caller)
    theirs, theirs_after = _survey(torch, call, caller)
    assert ours == theirs
    assert ours_after == theirs_after             # the caller's mode is back afterwards
    assert len(theirs) >= 6                       # the survey reached the hooks


def test_grad_mode_comes_back_after_a_hook_raises():
    a = mg.ones(2, requires_grad=True)
    b = a * 2

    def fail(grad):
        raise ValueError("stop")

    b.register_hook(fail)
    with pytest.raises(ValueError):
        b.sum().backward()
    assert mg.is_grad_enabled()
    loss = (a * 2 + b).sum()
    with mg.no_grad(), pytest.raises(ValueError):
        mg.autograd.grad(loss, [a], create_graph=True)
    assert mg.is_grad_enabled()


def test_a_hook_may_run_a_backward_of_its_own():
    """A hook that turns grad mode on and differentiates something else, as torch allows."""
    def run(T):
        w = T.tensor([1.0, 2.0], requires_grad=True)
        a = T.tensor([3.0, 4.0], requires_grad=True)
        found = []

        def hook(grad):
            with T.enable_grad():
                inner, = T.autograd.grad((w * w).sum(), [w])
            found.append((inner.tolist(), T.is_grad_enabled()))

        b = a * 2
        b.register_hook(hook)
        b.sum().backward()
        return found, a.grad.tolist()

    assert run(mg) == run(torch)
