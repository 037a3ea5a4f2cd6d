"""``mg.capture``: a recorded step replayed gives the eager step's numbers bit for bit, its
outputs hang on one node, and every call that does not match the capture is refused with
a message naming what changed, changing nothing."""

import re
import threading

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn, optim, viz
from microgradnorm.capture import CaptureError
from microgradnorm.cli.bench_train import load_model_file

torch = pytest.importorskip("torch")

VOCAB, CONTEXT, BATCH = 16, 8, 2


def batches(n, seed=1):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        tokens = rng.integers(0, VOCAB, (BATCH, CONTEXT + 1))
        yield tokens[:, :-1], tokens[:, 1:]


def gpt_and_optimizer(impl, dtype):
    mg.manual_seed(0)
    model = nn.GPT(VOCAB, CONTEXT, 16, 2, 2, impl=impl, dtype=dtype)
    return model, optim.AdamW(model.parameters(), lr=1e-2)


def gpt_loss(model):
    def loss_fn(idx, targets):
        return F.cross_entropy(model(idx).reshape(-1, VOCAB), targets.reshape(-1))
    return loss_fn


def assert_same_grads(eager_params, captured_params):
    for p, q in zip(eager_params, captured_params):
        assert p.grad.dtype == q.grad.dtype
        assert np.array_equal(p.grad.numpy(), q.grad.numpy()), p.name


# ----- the eager step's numbers, bit for bit ---------------------------------------------
@pytest.mark.parametrize("impl", ["fused", "composite"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_adamw_trained_gpt_matches_the_eager_step_bit_for_bit(impl, dtype):
    eager, eager_opt = gpt_and_optimizer(impl, dtype)
    model, opt = gpt_and_optimizer(impl, dtype)
    step = mg.capture(gpt_loss(model))
    for idx, targets in batches(5):                   # calls 1-2 record, 3-5 replay
        expected = gpt_loss(eager)(mg.tensor(idx), mg.tensor(targets))
        eager_opt.zero_grad()
        expected.backward()
        loss = step(idx, targets)
        opt.zero_grad()
        loss.backward()
        assert loss.dtype == expected.dtype and loss.item() == expected.item()
        assert_same_grads(eager.parameters(), model.parameters())
        eager_opt.step()
        opt.step()
    assert step.captured
    assert all(np.array_equal(p.detach().numpy(), q.detach().numpy())
               for p, q in zip(eager.parameters(), model.parameters()))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_pytorch_style_model_file_matches_the_eager_step(dtype):
    def build():
        module = load_model_file(False)
        mg.manual_seed(0)
        config = module.GPTConfig(block_size=CONTEXT, vocab_size=VOCAB, n_layer=2, n_head=2,
                                  n_embd=16, flash=True)
        model = module.GPT(config).to(getattr(mg, dtype))
        return model, model.configure_optimizers(0.1, 1e-2, (0.9, 0.95))
    (eager, eager_opt), (model, opt) = build(), build()
    step = mg.capture(model)                          # a Module: (logits, loss)
    for idx, targets in batches(4):
        idx, targets = mg.tensor(idx), mg.tensor(targets)
        _, expected = eager(idx, targets)
        eager_opt.zero_grad(set_to_none=True)
        expected.backward()
        logits, loss = step(idx, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()                               # the logits' gradient: none reached
        assert loss.item() == expected.item() and logits.shape == (BATCH, CONTEXT, VOCAB)
        assert_same_grads(eager.parameters(), model.parameters())
        eager_opt.step()
        opt.step()


def test_a_replayed_mlp_matches_pytorchs_gradients_in_float64():
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    ours = [mg.tensor(w, requires_grad=True) for w in (w1, w2)]
    theirs = [torch.tensor(w, requires_grad=True) for w in (w1, w2)]
    step = mg.capture(lambda x: (F.gelu(x @ ours[0]) @ ours[1]).softmax(-1).log().sum())
    for _ in range(3):
        x = rng.standard_normal((4, 5))
        step(x).backward()
        expected = (torch.nn.functional.gelu(torch.from_numpy(x) @ theirs[0]) @ theirs[1])
        expected.softmax(-1).log().sum().backward()
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-12)


# ----- what a replay traces --------------------------------------------------------------
def test_ops_on_arguments_that_record_no_node_are_replayed_on_each_calls_data():
    # targets.view(-1) records no node (targets needs no grad), yet feeds the loss
    w = mg.tensor(np.random.default_rng(0).standard_normal((4, 6)), requires_grad=True)

    def loss_fn(x, targets):
        return F.cross_entropy(x @ w, targets.view(-1))
    step = mg.capture(loss_fn)
    rng = np.random.default_rng(1)
    for _ in range(4):
        x, targets = rng.standard_normal((6, 4)), rng.integers(0, 6, (2, 3))
        w.grad = None
        loss = step(x, targets)
        loss.backward()
        got = w.grad.numpy().copy()
        w.grad = None
        expected = loss_fn(mg.tensor(x), mg.tensor(targets))
        expected.backward()
        assert loss.item() == expected.item() and np.array_equal(got, w.grad.numpy())


def test_kept_option_arrays_follow_the_arguments():
    # an index kept by its node (x[idx]'s GetItem, embedding ids) is traced, not frozen
    table = mg.tensor(np.random.default_rng(0).standard_normal((10, 3)), requires_grad=True)
    step = mg.capture(lambda ids, rows: (F.embedding(ids, table) * table[rows]).sum())
    rng = np.random.default_rng(2)
    for _ in range(4):
        ids, rows = rng.integers(0, 10, 5), rng.integers(0, 10, (5,))
        table.grad = None
        step(ids, rows).backward()
        got = table.grad.numpy().copy()
        table.grad = None
        (F.embedding(mg.tensor(ids), table) * table[mg.tensor(rows)]).sum().backward()
        assert np.array_equal(got, table.grad.numpy())


def test_a_detached_parameter_is_read_where_the_optimizer_writes():
    w = mg.tensor(np.random.default_rng(0).standard_normal((3, 3)), requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def loss_fn(x):                          # the detached use comes first
        return ((x @ w.detach()) * (x @ w)).sum()
    step = mg.capture(loss_fn)
    x = np.random.default_rng(1).standard_normal((2, 3))
    for _ in range(4):
        expected = loss_fn(mg.tensor(x))
        loss = step(x)
        assert loss.item() == expected.item()
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_a_fused_batch_norm_updates_its_running_statistics_at_each_replay():
    def build():
        mg.manual_seed(0)
        return nn.Sequential(nn.Linear(6, 4, dtype="float64"), nn.BatchNorm1d(4, dtype="float64"))
    eager, model = build(), build()
    step = mg.capture(lambda x: (model(x) ** 2).sum())
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = rng.standard_normal((5, 6))
        (eager(mg.tensor(x)) ** 2).sum().backward()
        step(x).backward()
        for name in ("running_mean", "running_var"):
            assert np.array_equal(getattr(eager[1], name).numpy(), getattr(model[1], name).numpy())
    assert_same_grads(eager.parameters(), model.parameters())


def test_an_argument_with_a_graph_passes_its_gradient_on():
    w = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    step = mg.capture(lambda h: (h * h).sum())
    for scale in (1.0, 2.0, 3.0):
        w.grad = None
        step(w * scale).backward()
        np.testing.assert_array_equal(w.grad.numpy(), 2 * scale * scale * w.detach().numpy())


# ----- the graph it leaves ---------------------------------------------------------------
def test_a_captured_output_hangs_on_one_node_instead_of_the_steps_graph():
    model, _ = gpt_and_optimizer("fused", "float64")
    step = mg.capture(gpt_loss(model))
    idx, targets = next(batches(1))
    eager_nodes = mg.graph_stats(gpt_loss(model)(mg.tensor(idx), mg.tensor(targets))).nodes
    for _ in range(3):
        loss = step(idx, targets)
        assert mg.graph_stats(loss).nodes == 1 and loss.grad_fn.name == "CapturedStep"
        assert step.nodes == eager_nodes > 40
        loss.backward()


def test_the_viewer_draws_the_recorded_graph_as_the_eager_one():
    model, _ = gpt_and_optimizer("composite", "float64")
    loss_fn = gpt_loss(model)
    step = mg.capture(loss_fn)
    idx, targets = next(batches(1))
    for _ in range(3):                                # drawn after recording and replaying
        step(idx, targets).backward()
    eager = viz.draw(loss_fn(mg.tensor(idx), mg.tensor(targets)))

    def count(dot, kind):
        return len(re.findall(rf"^\s*{kind}\d+ \[", dot.source, re.M))
    for drawing in (viz.draw(step), step.draw(cluster=True)):
        assert count(drawing, "op") == count(eager, "op") == step.nodes
        assert count(drawing, "leaf") == count(eager, "leaf") == len(model.parameters())


# ----- autograd as after an eager call ---------------------------------------------------
def linear_step():
    rng = np.random.default_rng(0)
    w = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    b = mg.tensor(rng.standard_normal(3), requires_grad=True)

    def loss_fn(x):
        return ((x @ w + b).tanh() ** 2).sum()
    xs = [rng.standard_normal((2, 4)) for _ in range(4)]
    return loss_fn, w, b, xs


def test_gradients_accumulate_over_calls_as_eager_ones_do():
    loss_fn, w, b, xs = linear_step()
    step = mg.capture(loss_fn)
    for x in xs:                                      # backward after each call
        step(x).backward()
    first = step(xs[0])                               # two calls, then one backward
    second = step(xs[1])
    (first + second).backward()
    got = w.grad.numpy().copy(), b.grad.numpy().copy()
    w.grad = b.grad = None
    for x in xs:
        loss_fn(mg.tensor(x)).backward()
    (loss_fn(mg.tensor(xs[0])) + loss_fn(mg.tensor(xs[1]))).backward()
    assert np.array_equal(got[0], w.grad.numpy()) and np.array_equal(got[1], b.grad.numpy())


def test_retain_graph_allows_a_second_backward_and_its_absence_refuses_one():
    loss_fn, w, _, xs = linear_step()
    step = mg.capture(loss_fn)
    for x in xs[:2]:
        step(x).backward()
    w.grad = None
    loss = step(xs[2])
    loss.backward(retain_graph=True)
    loss.backward()
    got = w.grad.numpy().copy()
    w.grad = None
    expected = loss_fn(mg.tensor(xs[2]))
    expected.backward(retain_graph=True)
    expected.backward()
    assert np.array_equal(got, w.grad.numpy())
    loss = step(xs[3])
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_mg_grad_of_a_captured_output_touches_no_grad():
    loss_fn, w, b, xs = linear_step()
    step = mg.capture(loss_fn)
    for x in xs:
        got = mg.grad(step(x), [w, b])
        expected = mg.grad(loss_fn(mg.tensor(x)), [w, b])
        assert all(np.array_equal(g.numpy(), e.numpy()) for g, e in zip(got, expected))
    assert w.grad is None and b.grad is None


def test_a_hook_on_a_parameter_sees_the_replayed_gradient():
    loss_fn, w, _, xs = linear_step()
    step = mg.capture(loss_fn)
    seen = []
    w.register_hook(lambda g: seen.append(g.numpy().copy()))
    for x in xs:
        step(x).backward()
    assert len(seen) == len(xs) and np.array_equal(sum(seen), w.grad.numpy())


def test_a_function_without_parameters_replays_its_arguments_gradient():
    step = mg.capture(lambda x: (x * x.exp()).sum())
    rng = np.random.default_rng(3)
    for _ in range(4):
        data = rng.standard_normal(5)
        x, eager = (mg.tensor(data, requires_grad=True) for _ in range(2))
        step(x).backward()
        (eager * eager.exp()).sum().backward()
        assert np.array_equal(x.grad.numpy(), eager.grad.numpy())
    plain = mg.capture(lambda x: (x * x.exp()).sum())     # nothing requires grad
    for _ in range(3):
        x = rng.standard_normal(5)
        out = plain(x)
        expected = (mg.tensor(x) * mg.tensor(x).exp()).sum()
        assert not out.requires_grad and out.item() == expected.item()


def test_a_capture_under_no_grad_replays_inference():
    loss_fn, w, _, xs = linear_step()
    with mg.no_grad():
        step = mg.capture(loss_fn)
        outs = [step(x) for x in xs]
        with pytest.raises(CaptureError, match="grad mode is on, it was off at capture"):
            with mg.enable_grad():
                step(xs[0])
    assert [o.item() for o in outs] == [loss_fn(mg.tensor(x)).item() for x in xs]
    assert all(o.grad_fn is None and not o.requires_grad for o in outs)


def test_another_threads_ops_stay_off_the_tape():
    loss_fn, w, _, xs = linear_step()
    started, done = threading.Event(), threading.Event()

    def other():
        started.wait()
        for _ in range(20):
            (mg.tensor(np.ones(3), requires_grad=True) * 2).sum().backward()
        done.set()

    def step_fn(x):
        h = x @ w
        started.set()
        done.wait()                                   # the other thread's ops run here
        return (h.tanh() ** 2).sum()
    thread = threading.Thread(target=other)
    thread.start()
    step = mg.capture(step_fn)
    loss = step(xs[0])
    thread.join()
    loss.backward()
    assert step.nodes == 4                            # Mm, Tanh, Pow, Sum
    got = w.grad.numpy().copy()
    w.grad = None
    ((mg.tensor(xs[0]) @ w).tanh() ** 2).sum().backward()
    assert np.array_equal(got, w.grad.numpy())


# ----- refused: what changed is named, nothing changes -----------------------------------
def captured_linear():
    loss_fn, w, b, xs = linear_step()
    step = mg.capture(loss_fn)
    for x in xs[:2]:
        step(x).backward()
    return step, w, b, xs


@pytest.mark.parametrize("args, message", [
    (lambda xs: (xs[0], xs[1]), "got 2 arguments, expected 1"),
    (lambda xs: (np.ones((3, 4)),), r"argument 0 has shape \(3, 4\), expected \(2, 4\)"),
    (lambda xs: (xs[0].astype(np.float32),), "argument 0 has dtype float32, expected float64"),
    (lambda xs: (mg.tensor(xs[0], requires_grad=True),),
     "argument 0 has requires_grad True, expected False"),
    (lambda xs: (np.asfortranarray(xs[0]),), "argument 0 has strides"),
    (lambda xs: (3,), "argument 0 is a int, expected a Tensor"),
])
def test_a_call_unlike_the_capture_is_refused_and_changes_nothing(args, message):
    step, w, b, xs = captured_linear()
    before = w.grad.numpy().copy(), w.detach().numpy().copy()
    with pytest.raises(CaptureError, match=message):
        step(*args(xs))
    assert np.array_equal(w.grad.numpy(), before[0]) and np.array_equal(w.numpy(force=True),
                                                                      before[1])
    step(xs[2]).backward()                            # the capture still works


def test_a_changed_python_value_argument_is_refused():
    w = mg.tensor(np.ones(3), requires_grad=True)
    step = mg.capture(lambda x, power: (x * w ** power).sum())
    step(np.ones(3), 2)
    step(np.ones(3), 2)
    with pytest.raises(CaptureError, match="argument 1 is 3, expected 2"):
        step(np.ones(3), 3)


def test_grad_mode_other_than_at_capture_is_refused():
    step, w, _, xs = captured_linear()
    with mg.no_grad(), pytest.raises(CaptureError, match="grad mode is off, it was on"):
        step(xs[0])


def test_a_replaced_parameter_is_refused_until_it_is_back():
    model = nn.Linear(4, 3, dtype="float64")
    step = mg.capture(lambda x: model(x).sum())
    x = np.ones((2, 4))
    step(x).backward()
    step(x).backward()
    old = model.weight
    model.weight = nn.Parameter(old.detach().numpy().copy())
    with pytest.raises(CaptureError, match="'weight' was replaced by another tensor"):
        step(x)
    model.weight = old
    step(x).backward()
    step.reset()                                      # a new capture takes the new one
    model.weight = nn.Parameter(old.detach().numpy() * 2)
    for _ in range(3):
        loss = step(x)
    assert loss.item() == model(mg.tensor(x)).sum().item()


def test_a_replaced_submodule_is_refused():
    model = nn.Module()
    model.fc = nn.Linear(4, 3, dtype="float64")
    step = mg.capture(lambda x: model.fc(x).sum())
    for _ in range(2):
        step(np.ones((2, 4)))
    model.fc = nn.Linear(4, 3, dtype="float64")
    with pytest.raises(CaptureError, match="'fc.weight' was replaced by another module"):
        step(np.ones((2, 4)))


@pytest.mark.parametrize("change, message", [
    (lambda p: p.requires_grad_(False), "requires_grad=False; at capture .* requires_grad=True"),
    (lambda p: setattr(p, "data", p.data.astype("float32")), "float32"),
    (lambda p: setattr(p, "data", mg.zeros(5, 4, dtype="float64")), r"\(5, 4\)"),
])
def test_a_parameter_reshaped_recast_or_frozen_is_refused(change, message):
    model = nn.Linear(4, 3, dtype="float64")
    step = mg.capture(lambda x: model(x).sum())
    for _ in range(2):
        step(np.ones((2, 4)))
    change(model.weight)
    with pytest.raises(CaptureError, match="parameter 'weight' is now .*" + message):
        step(np.ones((2, 4)))


def test_optimizer_updates_between_calls_are_read_by_the_replay():
    model = nn.Linear(4, 3, dtype="float64")
    opt = optim.SGD(model.parameters(), lr=0.5)
    step = mg.capture(lambda x: model(x).pow(2).sum())
    x = np.random.default_rng(0).standard_normal((2, 4))
    for _ in range(4):
        loss = step(x)
        assert loss.item() == model(mg.tensor(x)).pow(2).sum().item()
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_a_parameter_changed_in_place_before_backward_is_refused():
    step, w, _, xs = captured_linear()
    loss = step(xs[0])
    with mg.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


def test_a_step_steered_by_a_counter_is_refused_at_the_second_call():
    w = mg.tensor(np.ones(3), requires_grad=True)
    calls = [0]

    def loss_fn(x):
        calls[0] += 1
        return (x * w * calls[0]).sum()
    step = mg.capture(loss_fn)
    step(np.ones(3)).backward()
    with pytest.raises(CaptureError, match="second call ran another computation.*constant "
                       "input of shape \\(\\) changed.*depends on data that its ops do not trace"):
        step(np.ones(3))


def test_a_branch_on_the_data_is_refused_when_the_two_calls_differ():
    w = mg.tensor(np.ones(3), requires_grad=True)

    def loss_fn(x):
        h = x * w
        return h.sum() if h.sum().item() > 0 else h.exp().sum()
    step = mg.capture(loss_fn)
    step(np.ones(3))
    with pytest.raises(CaptureError, match="call 1 ran 3 ops, call 2 ran 4"):
        step(-np.ones(3))


def test_dropout_drawn_in_python_is_refused_and_the_generator_left_alone():
    w = mg.tensor(np.ones((4, 4)), requires_grad=True)
    step = mg.capture(lambda x: F.dropout(x @ w, 0.5).sum())
    state = mg.default_generator.get_state()
    with pytest.raises(CaptureError, match="drew random numbers from the generator outside "
                       "an op.*F.dropout"):
        step(np.ones((2, 4)))
    assert np.array_equal(mg.default_generator.get_state(), state)
    assert not step.captured


def test_in_place_writes_inside_the_step_are_refused():
    w = mg.tensor(np.ones((4, 3)), requires_grad=True)

    def into_an_intermediate(x):
        h = x @ w
        h += 1.0
        return h.sum()

    def into_an_argument(x):
        x.mul_(2.0)
        return (x @ w).sum()
    with pytest.raises(CaptureError, match="writes in place into a tensor of shape \\(2, 3\\) "
                       "made inside the step"):
        mg.capture(into_an_intermediate)(np.ones((2, 4)))
    with pytest.raises(CaptureError, match="writes in place into argument 0"):
        mg.capture(into_an_argument)(np.ones((2, 4)))


def test_hooks_registered_inside_the_step_are_refused():
    w = mg.tensor(np.ones((4, 3)), requires_grad=True)

    def on_an_intermediate(x):
        h = x @ w
        h.register_hook(lambda g: g * 2)
        return h.sum()

    def on_a_parameter(x):
        w.register_hook(lambda g: None)
        return (x @ w).sum()
    with pytest.raises(CaptureError,
                       match="registers a hook on an output or the node of op #0 \\(Mm\\)"):
        mg.capture(on_an_intermediate)(np.ones((2, 4)))
    step = mg.capture(on_a_parameter)
    step(np.ones((2, 4)))
    with pytest.raises(CaptureError, match="a hook is registered on the leaf tensor at each "
                       "call"):
        step(np.ones((2, 4)))


def test_an_input_with_a_graph_from_outside_the_step_is_refused():
    w = mg.tensor(np.ones(3), requires_grad=True)
    outside = w * 2
    with pytest.raises(CaptureError, match="computed \\(by Mul\\) outside the captured"):
        mg.capture(lambda x: (x * outside).sum())(np.ones(3))


def test_captures_do_not_nest_and_outputs_must_be_tensors():
    inner = mg.capture(lambda x: x.sum())
    with pytest.raises(CaptureError, match="captures do not nest"):
        mg.capture(lambda x: inner(x) * 2)(mg.tensor(np.ones(3), requires_grad=True))
    with pytest.raises(CaptureError, match="must return a Tensor or a tuple of Tensors"):
        mg.capture(lambda x: 3.0)(np.ones(3))
    with pytest.raises(CaptureError, match="output 0 .* was not computed by an op"):
        mg.capture(lambda x: x.argmax())(mg.tensor(np.ones(3), requires_grad=True))


# ----- calls whose arguments share memory, outputs written, backward inside ----------------
def test_arguments_sharing_one_array_are_part_of_the_capture():
    w = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def loss_fn(a, b):
        return (a * w).sum() + (b * 2 * w).sum()
    step = mg.capture(loss_fn)
    x = mg.tensor([1.0, 1.0, 1.0])
    step(x, x)
    step(x, x)
    y = mg.tensor([4.0, 5.0, 6.0])
    with pytest.raises(CaptureError, match="argument 1 is an array of its own, at capture "
                                           "the array of argument 0"):
        step(x, y)
    assert step(x, x).item() == loss_fn(x, x).item() == 18.0


def test_a_view_met_while_recording_keeps_its_slot():
    class Take(mg.Function):                 # an op keeping an index: the argument's view
        kept_options = ("index",)

        @staticmethod
        def forward(ctx, w, index):
            ctx.index, ctx.size = index, w.shape[0]
            return w[index]

        @staticmethod
        def backward(ctx, g):
            grad = np.zeros(ctx.size, g.dtype)
            np.add.at(grad, ctx.index, g)
            return grad

    w = mg.tensor(np.arange(10.0) * 10, requires_grad=True)

    def loss_fn(a, b):                       # two views made and dropped in turn
        first = Take.apply(w, index=a.numpy().reshape(-1)).sum()
        return first + 2 * Take.apply(w, index=b.numpy().reshape(-1)).sum()
    step = mg.capture(loss_fn)
    a, b = mg.tensor(np.array([[1, 2]])), mg.tensor(np.array([[3, 4]]))
    for _ in range(3):
        assert step(a, b).item() == loss_fn(a, b).item()
    c, d = mg.tensor(np.array([[5, 6]])), mg.tensor(np.array([[7, 8]]))
    assert step(c, d).item() == loss_fn(c, d).item() == 110 + 2 * 150


def test_an_output_written_in_place_before_backward_is_refused_as_eager():
    w = mg.tensor([0.1, 0.2], requires_grad=True)

    def f(x):
        return (x * w).exp()
    step = mg.capture(f)
    x = mg.tensor([1.0, 2.0])
    for _ in range(3):
        y = step(x)
    with mg.no_grad():
        y.add_(100)
    with pytest.raises(RuntimeError, match="modified in place"):
        y.sum().backward()
    assert w.grad is None


@pytest.mark.parametrize("retain_graph", [False, True])
def test_backward_inside_the_captured_function_is_refused(retain_graph):
    w = mg.tensor([1.0, 2.0], requires_grad=True)

    def step_fn(x):
        loss = (x * w).sum()
        loss.backward(retain_graph=retain_graph)
        return loss
    with pytest.raises(CaptureError, match="backward\\(\\) or grad\\(\\) was called inside"):
        mg.capture(step_fn)(mg.tensor([1.0, 1.0]))
    assert w.grad is None


def test_value_arguments_holding_tensors_are_refused_and_nan_equals_nan():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    step = mg.capture(lambda xs: (xs[0] * w).sum())
    with pytest.raises(CaptureError, match="argument 0 is a list holding tensors"):
        step([mg.tensor([1.0, 1.0])])
    scaled = mg.capture(lambda x, s: (x * w).sum() * (1.0 if s != s else s))
    x = mg.tensor([1.0, 1.0])
    for _ in range(3):
        assert scaled(x, float("nan")).item() == 3.0
