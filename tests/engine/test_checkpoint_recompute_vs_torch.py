"""``checkpoint(..., use_reentrant=False)`` against torch's: the function runs again in
backward (counted by a side effect under both libraries), once per backward, from the
forward's random state, in ``context_fn``'s second context manager, stopping early; the
determinism check and its error class; and the activations no longer kept by the graph."""

import contextlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as torch_checkpoint  # noqa: E402

import microgradnorm as mg  # noqa: E402
from microgradnorm.utils import checkpoint as mg_checkpoint  # noqa: E402

LIBS = [(torch, torch_checkpoint), (mg, mg_checkpoint)]


def leaf(L, shape=(3, 4), requires_grad=True):
    data = np.linspace(-1.5, 2.0, int(np.prod(shape))).reshape(shape)
    return L.tensor(data, dtype=L.float64, requires_grad=requires_grad)


def numpy(t):
    return None if t is None else t.detach().numpy()


def counted(calls, name="fn"):
    def fn(x, scale=1.0):
        calls.append(name)
        h = (x * scale).sin()
        h = h * h.cos()
        return h.exp().sum()
    return fn


def both(run):
    """``run(L, C)`` under torch and mg: the two results."""
    return [run(L, C) for L, C in LIBS]


def assert_same(theirs, ours):
    assert type(theirs) is type(ours), (theirs, ours)
    if isinstance(theirs, (list, tuple)):
        assert len(theirs) == len(ours), (theirs, ours)
        for a, b in zip(theirs, ours):
            assert_same(a, b)
    elif isinstance(theirs, np.ndarray):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    else:
        assert theirs == ours


def calls_and_grads(how):
    def run(L, C):
        calls, x = [], leaf(L)
        y = C.checkpoint(counted(calls), x, use_reentrant=False)
        after_forward = len(calls)
        if how == "backward":
            y.backward()
            grads = [numpy(x.grad)]
        elif how == "grad":
            grads = [numpy(g) for g in L.autograd.grad(y, [x])]
        else:                                   # retain_graph=True, twice
            y.backward(retain_graph=True)
            first = numpy(x.grad).copy()
            y.backward()
            grads = [first, numpy(x.grad)]
        return [after_forward, len(calls), grads]
    return run


@pytest.mark.parametrize("how", ["backward", "grad", "retain_twice"])
def test_the_function_runs_again_once_per_backward(how):
    theirs, ours = both(calls_and_grads(how))
    assert_same(theirs, ours)
    assert ours[1] == (3 if how == "retain_twice" else 2)


def test_two_segments_nested_checkpoints_and_checkpoint_sequential_count_as_torch():
    def run(L, C):
        calls, x = [], leaf(L)
        a, b = counted(calls, "a"), counted(calls, "b")
        # two segments one after the other
        y = C.checkpoint(lambda t: a(t) * t, x, use_reentrant=False)
        z = C.checkpoint(b, y, use_reentrant=False)
        z.backward()
        segments = (list(calls), numpy(x.grad))
        # one checkpoint inside another
        calls.clear()
        x2 = leaf(L)

        def outer(t):
            calls.append("outer")
            return C.checkpoint(counted(calls, "inner"), t.tanh() * 2, use_reentrant=False) \
                * t.cos()

        C.checkpoint(outer, x2, use_reentrant=False).sum().backward()
        nested = (list(calls), numpy(x2.grad))
        # checkpoint_sequential over four counting layers, two segments
        calls.clear()
        x3 = leaf(L)

        def layer(i):
            def run_layer(t):
                calls.append(i)
                return (t * (i + 1)).sin()
            return run_layer

        layers = [layer(i) for i in range(4)]
        out = C.checkpoint_sequential(layers, 2, x3, use_reentrant=False)
        out.sum().backward()
        return [segments, nested, (list(calls), numpy(x3.grad))]

    theirs, ours = both(run)
    assert_same(theirs, ours)


def test_the_recomputation_stops_once_every_saved_tensor_is_there():
    def run(L, C, **options):
        calls, x = [], leaf(L)

        def fn(t):
            calls.append("start")
            y = t.sin()                         # the last op that saves a tensor
            calls.append("end")
            return y.sum()

        C.checkpoint(fn, x, use_reentrant=False, **options).backward()
        return calls

    assert_same(run(torch, torch_checkpoint), run(mg, mg_checkpoint))
    assert run(mg, mg_checkpoint) == ["start", "end", "start"]
    assert run(mg, mg_checkpoint, early_stop=False) == ["start", "end", "start", "end"]


def test_the_recomputation_draws_the_same_dropout_masks():
    def run(L, C, preserve=True):
        x = leaf(L, (6, 5))
        L.manual_seed(3)

        def fn(t):
            return L.nn.functional.dropout(t.exp(), 0.5, training=True) * t

        y = C.checkpoint(fn, x, use_reentrant=False, preserve_rng_state=preserve)
        after = L.rand(2)                       # the stream after the checkpoint
        (y * y).sum().backward()
        L.manual_seed(3)
        plain = fn(x.detach().requires_grad_())
        return [numpy(y), numpy(x.grad), numpy(after), numpy(plain)]

    theirs, ours = both(run)
    assert_same(theirs, ours)
    np.testing.assert_allclose(ours[0], ours[3])    # the forward's own mask


def changing_shape(L, sizes):
    # a Python-side choice: the saved tensor of the multiplication changes shape
    def fn(t):
        n = sizes.pop(0)
        return (t * L.ones(n, dtype=L.float64)).sum()
    return fn


def test_determinism_check_default_raises_torchs_error_class_and_none_does_not():
    def run(L, C, check):
        x = leaf(L, (3,))
        y = C.checkpoint(changing_shape(L, [1, 3]), x, use_reentrant=False,
                         determinism_check=check)
        try:
            y.backward()
        except Exception as error:              # noqa: BLE001 (the class is compared)
            return type(error).__name__, isinstance(error, RuntimeError)
        return numpy(x.grad)

    theirs, ours = both(lambda L, C: run(L, C, "default"))
    assert theirs == ours == ("CheckpointError", True)
    assert issubclass(mg_checkpoint.CheckpointError, RuntimeError)
    assert_same(*both(lambda L, C: run(L, C, "none")))


def test_context_fn_second_manager_wraps_the_recomputation():
    def run(L, C):
        entered, calls = [], []

        class note(contextlib.AbstractContextManager):    # re-entered at each recomputation
            def __init__(self, name):
                self.name = name

            def __enter__(self):
                entered.append(self.name)

            def __exit__(self, *exc):
                return False

        x = leaf(L)
        y = C.checkpoint(counted(calls), x, use_reentrant=False,
                         context_fn=lambda: (note("forward"), note("recompute")))
        seen = list(entered)
        y.backward(retain_graph=True)
        y.backward()
        return [seen, list(entered), len(calls), numpy(x.grad)]

    theirs, ours = both(run)
    assert_same(theirs, ours)
    assert ours[1] == ["forward", "recompute", "recompute"]


def test_keyword_arguments_and_outputs_with_non_tensor_entries():
    def run(L, C):
        calls, x = [], leaf(L)

        def fn(t, scale, *, shift):
            calls.append(1)
            h = (t * scale + shift).tanh()
            return {"h": h, "name": "hidden", "parts": (h.sum(), None, 3)}

        out = C.checkpoint(fn, x, 2.0, use_reentrant=False, shift=0.5)
        (out["h"] ** 2).sum().backward(retain_graph=True)
        out["parts"][0].backward()
        return [out["name"], out["parts"][1:], numpy(out["h"]), len(calls), numpy(x.grad)]

    theirs, ours = both(run)
    assert_same(theirs, ours)


def test_inputs_without_grad_reach_the_parameters_inside_and_no_grad_runs_once():
    def run(L, C):
        L.manual_seed(0)
        model = L.nn.Sequential(L.nn.Linear(4, 5), L.nn.Tanh(), L.nn.Linear(5, 2)).double()
        with L.no_grad():
            for p in model.parameters():
                p.copy_(L.tensor(np.cos(np.arange(p.numel())).reshape(p.shape)))
        calls, x = [], leaf(L, requires_grad=False)

        def fn(t):
            calls.append(1)
            return model(t)

        y = C.checkpoint(fn, x, use_reentrant=False)
        (y * y).sum().backward()
        grads = [numpy(p.grad) for p in model.parameters()]
        with L.no_grad():
            quiet = C.checkpoint(fn, x, use_reentrant=False)
        return [len(calls), grads, x.grad, quiet.requires_grad, numpy(quiet)]

    theirs, ours = both(run)
    assert_same(theirs, ours)


def test_double_backward_through_a_checkpoint():
    def run(L, C):
        calls, x = [], leaf(L)
        y = C.checkpoint(counted(calls), x, use_reentrant=False)
        (g,) = L.autograd.grad(y, [x], create_graph=True)
        (g * g).sum().backward()
        return [numpy(g), numpy(x.grad)]

    theirs, ours = both(run)
    assert_same(theirs, ours)


def test_in_place_ops_inside_the_function():
    def run(L, C):
        calls, x = [], leaf(L)

        def fn(t):
            calls.append(1)
            h = t * 2
            h.add_(1.0)
            h = h.sigmoid()
            h.mul_(t)
            return h.sum()

        C.checkpoint(fn, x, use_reentrant=False).backward()
        return [len(calls), numpy(x.grad)]

    theirs, ours = both(run)
    assert_same(theirs, ours)


def test_a_second_backward_after_the_graph_was_freed_raises_as_torch():
    def run(L, C):
        x = leaf(L)
        y = C.checkpoint(counted([]), x, use_reentrant=False)
        y.backward()
        try:
            y.backward()
        except Exception as error:              # noqa: BLE001 (the class is compared)
            return type(error).__name__
        return "ok"

    theirs, ours = both(run)
    assert theirs == ours == "RuntimeError"


def mlp(L):
    L.manual_seed(0)
    layers = [m for _ in range(4) for m in (L.nn.Linear(64, 64), L.nn.ReLU())]
    return L.nn.Sequential(*layers).double()


def test_the_graph_keeps_the_inputs_not_the_activations():
    def saved_bytes(L, C, checkpointed):
        # bytes packed by hooks around the call: a checkpoint saves only its input there
        model, x, sizes = mlp(L), leaf(L, (32, 64), requires_grad=False), []

        def pack(t):
            sizes.append(t.numel() * t.element_size())
            return t

        with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = C.checkpoint(model, x, use_reentrant=False) if checkpointed else model(x)
        y.sum().backward()
        return sum(sizes)

    input_bytes = 32 * 64 * 8
    theirs, ours = both(lambda L, C: saved_bytes(L, C, True))
    assert theirs == ours == input_bytes
    theirs, ours = both(lambda L, C: saved_bytes(L, C, False))      # the activations
    assert min(theirs, ours) > 4 * input_bytes

    # the memory timeline: after the forward, the graph holds the input, no activation
    model, x, kept = mlp(mg), leaf(mg, (32, 64), requires_grad=False), []
    plain = mg.memory_timeline(lambda: kept.append(model(x))).events[-1].total_bytes
    ours = mg.memory_timeline(
        lambda: kept.append(mg_checkpoint.checkpoint(model, x, use_reentrant=False)))
    assert ours.events[-1].total_bytes <= input_bytes < plain / 4
    assert mg.graph_stats(kept[1]).saved_bytes == 0 < mg.graph_stats(kept[0]).saved_bytes
    (kept[0].sum() + kept[1].sum()).backward()          # the blanked activations come back
    grads = [p.grad.numpy() for p in model.parameters()]
    model.zero_grad()
    (2 * model(x).sum()).backward()
    for ours_grad, plain_grad in zip(grads, model.parameters()):
        np.testing.assert_allclose(ours_grad, plain_grad.grad.numpy(), rtol=1e-12)


def test_intermediates_kept_by_the_caller_or_viewed_by_an_output_stay_whole():
    def run(L, C):
        x, stash = leaf(L), []

        def fn(t):
            h = t * 2.0
            stash.append(h)                     # kept outside: its data must survive
            u = (h + 1.0).tanh()
            return u.reshape(-1)[2:9], (u * t).sum()

        view, total = C.checkpoint(fn, x, use_reentrant=False)
        before = numpy(stash[0]).copy()         # (before a recomputation could restore it)
        (view.sum() + total).backward()
        return [before, numpy(stash[0]), numpy(view), numpy(x.grad)]

    theirs, ours = both(run)
    assert_same(theirs, ours)


def test_an_input_changed_in_place_after_the_forward_raises_as_torch():
    def run(L, C):
        a = leaf(L) * 1
        y = C.checkpoint(lambda t: t.sin().sum(), a, use_reentrant=False)
        with L.no_grad():
            a.add_(1)
        try:
            y.backward()
        except Exception as error:              # noqa: BLE001 (the class is compared)
            return type(error).__name__
        return "ok"

    theirs, ours = both(run)
    assert theirs == ours == "RuntimeError"
