"""``mg.profiler`` (torch.profiler, torch.autograd.profiler) and torch.autograd.graph's
hooks on saved tensors, against torch: which ops a training step records and how often,
their input shapes and bytes, the table's columns, the trace, the schedule; which tensors
are packed and unpacked, how often, and the gradients that come out."""

import contextlib
import gzip
import json
import threading
import time
import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm.autograd import profiler as autograd_profiler
from microgradnorm.autograd import scopes
from microgradnorm.autograd.graph import save_on_cpu, saved_tensors_hooks
from microgradnorm.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                                    schedule, tensorboard_trace_handler)


# ----- the profiler -------------------------------------------------------------------------
def _mlp_step(lib, profiler, **options):
    """One step of a 4-8-3 MLP with cross-entropy under ``lib``'s profiler, in a range."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x, y = lib.randn(5, 4), lib.tensor([0, 1, 2, 0, 1])
    cross_entropy = lib.nn.functional.cross_entropy if lib is torch else F.cross_entropy
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], **options) as prof:
        with profiler.record_function("step"):
            cross_entropy(model(x), y).backward()
    return prof


@pytest.fixture(scope="module")
def mlp_profiles():
    return (_mlp_step(mg, mg.profiler, record_shapes=True, profile_memory=True),
            _mlp_step(torch, torch.profiler, record_shapes=True, profile_memory=True))


def test_an_mlp_step_records_torchs_aten_ops_as_often(mlp_profiles):
    ours, theirs = ({e.key: e for e in prof.key_averages()} for prof in mlp_profiles)
    aten = {key for key in ours if key.startswith("aten::")}
    assert aten == {"aten::linear", "aten::relu", "aten::cross_entropy_loss", "aten::view"}
    for key in aten - {"aten::view"} | {"step"}:
        assert ours[key].count == theirs[key].count, key
    # cross_entropy's view of the logits (losses.py), one of torch's: it records its views
    # inside its composite ops too
    assert 1 == ours["aten::view"].count <= theirs["aten::view"].count
    # one event per node backward runs: each forward node's gradient, once (the targets'
    # reshape before the loss is a node here)
    backward = {key: e.count for key, e in ours.items() if key.endswith("Backward0")}
    assert backward == {"LinearBackward0": 2, "ReluBackward0": 1, "CrossEntropyBackward0": 1,
                        "ViewBackward0": 1}
    assert sum(backward.values()) == sum(e.count for key, e in ours.items()
                                         if key.startswith("aten::"))
    assert ours["ReluBackward0"].count == theirs["ReluBackward0"].count
    # the bytes of the outputs (a backward node: of its gradients), as torch's allocator
    for key in ("aten::linear", "aten::relu"):
        assert ours[key].cpu_memory_usage == theirs[key].cpu_memory_usage, key
    assert ours["ReluBackward0"].cpu_memory_usage == theirs["ReluBackward0"].cpu_memory_usage


def test_input_shapes_are_torchs(mlp_profiles):
    def shapes(prof, key):
        return sorted(str(e.input_shapes) for e in prof.key_averages(group_by_input_shape=True)
                      if e.key == key)
    for key in ("aten::linear", "aten::relu"):
        assert shapes(mlp_profiles[0], key) == shapes(mlp_profiles[1], key), key
    assert shapes(mlp_profiles[0], "aten::linear") == ["[[5, 4], [8, 4], [8]]",
                                                       "[[5, 8], [3, 8], [3]]"]


def test_the_table_has_torchs_columns(mlp_profiles):
    for group in (False, True):
        tables = [prof.key_averages(group_by_input_shape=group).table(
            sort_by="cpu_time_total", row_limit=5) for prof in mlp_profiles]
        ours, theirs = ([line for line in table.splitlines() if line] for table in tables)
        assert " ".join(ours[1].split()) == " ".join(theirs[1].split())
        assert len(ours) == len(theirs) == 10          # 3 rules, header, 5 rows, total
        assert ours[-1].startswith("Self CPU time total: ")
        assert set(ours[0]) == {"-", " "} and len(ours[0]) == len(ours[1])
    # sorted by CPU total: the range holds everything
    rows = mlp_profiles[0].key_averages().table(sort_by="cpu_time_total").splitlines()
    assert rows[3].split()[0] == "step" and rows[3].split()[3] == "100.00%"


def test_a_range_holds_its_ops_and_self_times_add_up(mlp_profiles):
    events = mlp_profiles[0].events()
    [step] = [e for e in events if e.name == "step"]
    assert {c.name for c in step.cpu_children} >= {"aten::linear", "LinearBackward0"}
    assert len(step.cpu_children) == len(events) - 1 and step.cpu_parent is None
    assert step.cpu_time_total == pytest.approx(events.self_cpu_time_total, rel=1e-9)
    assert step.cpu_time_total == pytest.approx(
        step.self_cpu_time_total + sum(c.cpu_time_total for c in step.cpu_children))
    assert all(e.cpu_time_total >= 0 for e in events)


class _Slow(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        time.sleep(0.03)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        time.sleep(0.04)
        return grad * 2


def test_the_time_of_an_op_and_of_its_backward_is_their_own():
    x = mg.randn(3, requires_grad=True)
    with mg.autograd.profiler.profile() as prof:
        y = _Slow.apply(x).sum()
        y.backward()
    rows = {e.key: e for e in prof.key_averages()}
    assert set(rows) == {"_Slow", "aten::sum", "SumBackward0", "_SlowBackward", "aten::mul"}
    # as torch's: the ops forward and backward run, not recorded, nest in their op's event
    assert rows["aten::mul"].count == 2
    muls = [e for e in prof.events() if e.name == "aten::mul"]
    assert sorted(m.cpu_parent.name for m in muls) == ["_Slow", "_SlowBackward"]
    assert rows["_Slow"].cpu_time_total >= 30e3               # µs
    assert rows["_SlowBackward"].cpu_time_total >= 40e3
    assert rows["aten::sum"].cpu_time_total < 30e3     # the sleep before it is not its time
    assert "_Slow" in prof.table() and prof.self_cpu_time_total >= 70e3


def test_the_chrome_trace_is_valid_and_nested(mlp_profiles, tmp_path):
    for name in ("trace.json", "trace.json.gz"):
        mlp_profiles[0].export_chrome_trace(str(tmp_path / name))
        raw = (tmp_path / name).read_bytes()
        trace = json.loads(gzip.decompress(raw) if name.endswith(".gz") else raw)
        spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        assert sum(e["name"] == "aten::linear" for e in spans) == 2
        [step] = [e for e in spans if e["name"] == "step"]
        assert step["cat"] == "user_annotation"
        for e in spans:
            assert step["ts"] <= e["ts"] and e["ts"] + e["dur"] <= step["ts"] + step["dur"] + 1e-6
        linear = next(e for e in spans if e["name"] == "aten::linear")
        assert linear["args"]["Input Dims"] == [[5, 4], [8, 4], [8]]


@pytest.mark.parametrize("options", [dict(wait=1, warmup=1, active=2, repeat=1),
                                     dict(wait=0, warmup=1, active=1, repeat=2, skip_first=2),
                                     dict(wait=2, warmup=1, active=3),
                                     dict(wait=1, warmup=0, active=1, skip_first=1,
                                          skip_first_wait=1)])
def test_schedule_is_torchs(options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = schedule(**options), torch.profiler.schedule(**options)
    assert [ours(i).name for i in range(16)] == [theirs(i).name for i in range(16)]


def _scheduled(lib, profiler, steps, handler, **options):
    x = lib.randn(3, requires_grad=True)
    with profiler.profile(schedule=profiler.schedule(**options), on_trace_ready=handler) as p:
        for _ in range(steps):
            (x * 2).sum().backward()
            p.step()


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")    # torch's, once
def test_a_scheduled_profile_calls_on_trace_ready_per_cycle_as_torch():
    def counts(prof):
        return {e.key: e.count for e in prof.key_averages()}
    ours, theirs = [], []
    options = dict(wait=1, warmup=1, active=2, repeat=2)
    _scheduled(mg, mg.profiler, 10, lambda p: ours.append(counts(p)), **options)
    _scheduled(torch, torch.profiler, 10, lambda p: theirs.append(counts(p)), **options)
    assert len(ours) == len(theirs) == 2
    for mine, torchs in zip(ours, theirs):
        assert mine["ProfilerStep*"] == torchs["ProfilerStep*"] == 2
        assert mine["aten::sum"] == torchs["aten::sum"] == 2
        assert mine["MulBackward0"] == torchs["MulBackward0"] == 2


def test_tensorboard_trace_handler_writes_a_trace_per_cycle(tmp_path):
    _scheduled(mg, mg.profiler, 6, tensorboard_trace_handler(str(tmp_path / "log"), "w"),
               wait=0, warmup=1, active=1, repeat=2)
    files = sorted((tmp_path / "log").glob("w.*.pt.trace.json"))
    assert len(files) == 2
    names = {e["name"] for e in json.loads(files[0].read_text())["traceEvents"]}
    assert {"ProfilerStep#1", "aten::mul", "MulBackward0"} <= names


def test_nothing_is_observed_outside_a_profile():
    x = mg.randn(3, requires_grad=True)
    with pytest.raises(ValueError, match="inside"):
        with profile():
            raise ValueError("inside")
    assert scopes._observers == [] and autograd_profiler._recorders == []
    with record_function("alone"):                     # no profile: a no-op
        (x * 2).sum().backward()
    with profile() as prof:
        with mg.no_grad():
            x * 2                                      # records no node: seen, as torch's
        x * 3
    assert [(e.key, e.count) for e in prof.key_averages()] == [("aten::mul", 2)]
    assert scopes._observers == [] and autograd_profiler._recorders == []
    with pytest.raises(RuntimeError, match="didn't finish"):
        mg.autograd.profiler.profile().key_averages()


def test_record_function_as_decorator_and_the_autograd_aliases(tmp_path):
    @record_function("inner")
    def inner(x, depth):
        return (x * 2) if depth == 0 else inner(x, depth - 1)

    assert mg.autograd.profiler.record_function is record_function
    x = mg.randn(3, requires_grad=True)
    with mg.autograd.profiler.profile(with_stack=True) as prof:
        inner(x, 2)
    rows = {e.key: e for e in prof.key_averages()}
    assert rows["inner"].count == 3 and rows["aten::mul"].count == 1
    ranges = [e for e in prof.events() if e.name == "inner"]
    assert [len(r.cpu_children) for r in ranges] == [1, 1, 1]   # nested, innermost the op
    [mul] = [e for e in prof.events() if e.name == "aten::mul"]
    assert mul.cpu_parent is ranges[-1] and any(__file__ in frame for frame in mul.stack)
    assert "Source Location" in prof.key_averages(group_by_stack_n=1).table()
    prof.export_stacks(str(tmp_path / "stacks.txt"))       # flame graphs' collapsed stacks
    [line] = (tmp_path / "stacks.txt").read_text().splitlines()[-1:]
    assert line.rsplit(" ", 1)[0].endswith(";aten::mul") and int(line.rsplit(" ", 1)[1]) >= 0
    with mg.autograd.profiler.profile(enabled=False) as off:
        x * 2
    with pytest.raises(RuntimeError):
        off.table()


def test_activities_are_torchs_names():
    assert mg.profiler.supported_activities() == {ProfilerActivity.CPU}
    assert {a.name for a in ProfilerActivity} <= {a.name for a in torch.profiler.ProfilerActivity
                                                  .__members__.values()}
    assert {a.name for a in ProfilerAction} <= {a.name for a in torch.profiler.ProfilerAction}
    with pytest.raises(AssertionError, match="No valid"):
        profile(activities=[])
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        mg.randn(2, requires_grad=True).exp()
    assert [e.key for e in prof.key_averages()] == ["aten::exp"]


def _without_grad(lib, model):
    model.requires_grad_(False)           # no input requires grad: no node is recorded
    return contextlib.nullcontext()


INFERENCE_BLOCKS = {"no_grad": lambda lib, model: lib.no_grad(),
                    "inference_mode": lambda lib, model: lib.inference_mode(),
                    "no input requires grad": _without_grad}


def _inference(lib, block):
    """torch's profiler recipe: a small conv net's inference in a range, under ``block``."""
    nn, profiler = lib.nn, lib.profiler
    lib.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(64, 5))
    x = lib.randn(2, 3, 8, 8)
    with block(lib, model), profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                                             record_shapes=True, profile_memory=True) as prof:
        with profiler.record_function("model_inference"):
            model(x)
    return prof


@pytest.mark.parametrize("block", sorted(INFERENCE_BLOCKS))
def test_an_inference_that_records_no_node_shows_torchs_ops(block):
    profiles = [_inference(lib, INFERENCE_BLOCKS[block]) for lib in (mg, torch)]
    ours, theirs = ({e.key: e for e in prof.key_averages()} for prof in profiles)
    keys = ("aten::conv2d", "aten::relu", "aten::max_pool2d", "aten::linear")
    for key in keys + ("model_inference",):
        assert ours[key].count == theirs[key].count == 1, key
    for key in keys:                     # the bytes of the result, as torch's allocator nets
        assert ours[key].cpu_memory_usage == theirs[key].cpu_memory_usage, key

    def shapes(prof):
        return sorted((e.key, str(e.input_shapes))
                      for e in prof.key_averages(group_by_input_shape=True) if e.key in keys)
    assert shapes(profiles[0]) == shapes(profiles[1])
    for prof in profiles:                # each op inside the range, as torch nests them
        for event in prof.events():
            if event.name in keys:
                assert event.cpu_parent.name == "model_inference", event.name
        rows = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
        assert rows.splitlines()[3].split()[0] == "model_inference"
    [conv] = [e for e in profiles[0].events() if e.name == "aten::conv2d"]
    assert {c.name for c in conv.cpu_children} >= {"Im2Col", "aten::matmul", "aten::add"}
    assert conv.cpu_time_total >= sum(c.cpu_time_total for c in conv.cpu_children)


def test_an_observer_sees_the_calls_that_record_no_node_only_when_it_asks():
    class Spy:
        def __init__(self):
            self.seen = []

        def on_forward(self, node):
            self.seen.append(("node", node.name))

        def on_unrecorded(self, ctx, outputs):
            self.seen.append(("call", ctx.name, [tuple(t.shape) for t in outputs]))

        def on_backward(self, node, pending, captured):
            self.seen.append(("backward", node.name))

        def on_free(self, nodes):
            pass

    x = mg.randn(3, requires_grad=True)
    plain, asking = Spy(), Spy()
    with scopes.observe(plain), scopes.observe(asking, unrecorded=True):
        y = (x * 2).sum()
        with mg.no_grad():
            x.exp()
        mg.ones(2).exp()
        y.backward()
    recorded = [("node", "Mul"), ("node", "Sum"), ("backward", "Sum"), ("backward", "Mul")]
    assert plain.seen == recorded                # the memory timeline's view: unchanged
    assert asking.seen == recorded[:2] + [("call", "Exp", [(3,)]), ("call", "Exp", [(2,)])] \
        + recorded[2:]
    assert scopes._observers == []


def test_no_profile_costs_the_engine_one_test(monkeypatch):
    from microgradnorm.autograd import function

    def refuse(*args):
        raise AssertionError("an observer was called with none active")
    monkeypatch.setattr(function, "notify_forward", refuse)
    monkeypatch.setattr(autograd_profiler, "_aten_range", refuse)
    x = mg.randn(1, 2, 5, 5, requires_grad=True)
    with mg.no_grad():
        F.max_pool2d(F.conv2d(x, mg.randn(3, 2, 3, 3)), 2).relu()
    F.conv2d(x, mg.randn(3, 2, 3, 3)).sum().backward()


# ----- hooks on saved tensors ---------------------------------------------------------------
OPS = {  # name: (function of the inputs, their shapes)
    "mul": (lambda a, b: a * b, [(3, 4), (3, 4)]),
    "div": (lambda a, b: a / b, [(3, 4), (3, 4)]),
    "add": (lambda a, b: a + b, [(3, 4), (3, 4)]),
    "exp": (lambda a: a.exp(), [(3, 4)]),
    "pow": (lambda a: a ** 2, [(3, 4)]),
    "tanh": (lambda a: a.tanh(), [(3, 4)]),
    "sigmoid": (lambda a: a.sigmoid(), [(3, 4)]),
    "relu": (lambda a: a.relu(), [(3, 4)]),
    "sum": (lambda a: a.sum(), [(3, 4)]),
    "mean": (lambda a: a.mean(), [(3, 4)]),
    "mm": (lambda a, b: a @ b, [(3, 4), (4, 5)]),
}


def _hooked(lib, hooks, function, arrays):
    """Pack and unpack calls (shape, whether the packed tensor is an input) of one
    forward and backward in float64, and the inputs' gradients."""
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    packed, unpacked = [], []

    def pack(t):
        packed.append((tuple(t.shape), any(t is x for x in inputs)))
        return t

    def unpack(t):
        unpacked.append(tuple(t.shape))
        return t

    with hooks(pack, unpack):
        y = function(*inputs)
    y.sum().backward()
    return sorted(packed), sorted(unpacked), [x.grad.numpy() for x in inputs]


@pytest.mark.parametrize("name", sorted(OPS))
def test_each_saved_tensor_is_packed_and_unpacked_once_as_torchs(name):
    function, shapes = OPS[name]
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2.0, s) for s in shapes]
    ours = _hooked(mg, saved_tensors_hooks, function, arrays)
    theirs = _hooked(torch, torch.autograd.graph.saved_tensors_hooks, function, arrays)
    assert ours[:2] == theirs[:2]
    for mine, torchs in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(mine, torchs, rtol=1e-12)


def test_linear_packs_two_tensors_as_torchs():
    def packs(lib, hooks, linear):
        x, w, b = (lib.randn(*s, requires_grad=True) for s in ((3, 4), (5, 4), (5,)))
        calls = []
        with hooks(lambda t: calls.append(t.shape) or t, lambda t: t):
            linear(x, w, b).sum().backward()
        return len(calls)
    assert packs(mg, saved_tensors_hooks, F.linear) == \
        packs(torch, torch.autograd.graph.saved_tensors_hooks, torch.nn.functional.linear) == 2


def _values_through_hooks(lib, hooks, pack, unpack):
    x = lib.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    with hooks(pack, unpack):
        y = (x * x).exp().sum()
    y.backward()
    return x.grad.numpy()


@pytest.mark.parametrize("kind", ["unpack changes", "pack changes", "numpy copy"])
def test_what_the_hooks_return_is_what_backward_reads(kind):
    hooks = {
        "unpack changes": lambda lib: (lambda t: t, lambda t: t * 0 + 2),
        "pack changes": lambda lib: (lambda t: t * 0 + 1, lambda t: t),
        "numpy copy": lambda lib: (lambda t: t.detach().numpy().copy(),
                                   lambda a: lib.tensor(a)),
    }[kind]
    ours = _values_through_hooks(mg, saved_tensors_hooks, *hooks(mg))
    theirs = _values_through_hooks(torch, torch.autograd.graph.saved_tensors_hooks,
                                   *hooks(torch))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_save_on_cpu_gives_the_gradients_without_hooks():
    def grads(lib, block):
        lib.manual_seed(0)
        x = lib.randn(4, 3, dtype=lib.float64, requires_grad=True)
        w = lib.randn(3, 2, dtype=lib.float64, requires_grad=True)
        with block():
            loss = (x @ w).tanh().pow(2).mean()
        loss.backward()
        return x.grad.numpy(), w.grad.numpy()
    plain = grads(mg, contextlib.nullcontext)
    for ours, torchs, without in zip(grads(mg, save_on_cpu),
                                     grads(torch, torch.autograd.graph.save_on_cpu), plain):
        np.testing.assert_allclose(ours, torchs, rtol=1e-12)
        np.testing.assert_array_equal(ours, without)


def test_hooks_nest_and_keep_the_unpack_of_their_time():
    x = mg.randn(3, requires_grad=True)
    calls = []
    with saved_tensors_hooks(lambda t: calls.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: calls.append("inner") or ("box", t),
                                 lambda p: calls.append("unpack") or p[1]):
            y = x.exp()
        y2 = x.exp()
    assert calls == ["inner", "outer"]
    (y.sum() + y2.sum()).backward()                  # after the blocks: the inner unpack
    assert calls == ["inner", "outer", "unpack"]
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()), rtol=1e-6)


def test_unpack_runs_at_each_read_as_torchs():
    def reads(lib, hooks, function_class):
        class Twice(function_class):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                (x,), (again,) = ctx.saved_tensors, ctx.saved_tensors     # two reads
                return grad * (x + again) / x
        x = lib.randn(3, requires_grad=True)
        unpacks = []
        with hooks(lambda t: t, lambda t: unpacks.append(1) or t):
            y = x.exp().sum()
            z = Twice.apply(x).sum()
        y.backward(retain_graph=True)
        y.backward()
        z.backward()
        return len(unpacks)
    assert reads(mg, saved_tensors_hooks, mg.autograd.Function) == \
        reads(torch, torch.autograd.graph.saved_tensors_hooks, torch.autograd.Function) == 4


def test_what_packs_nothing_as_torch():
    def packs(lib, hooks):
        x = lib.randn(3, requires_grad=True)
        calls = []

        def pack(t):
            calls.append(1)
            t * t                                    # inside a pack hook: packs nothing
            return t
        with hooks(pack, lambda t: t):
            with lib.no_grad():
                x.exp()
            lib.randn(3).exp()                       # no input requires grad
            x * x
        return len(calls)
    assert packs(mg, saved_tensors_hooks) == \
        packs(torch, torch.autograd.graph.saved_tensors_hooks) == 2


def test_disable_saved_tensors_hooks_as_torch():
    def errors(lib, graph):
        found = []
        with graph.disable_saved_tensors_hooks("no hooks here"):
            try:
                with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            except RuntimeError as e:
                found.append(str(e))
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            try:
                with graph.disable_saved_tensors_hooks("hooks are on"):
                    pass
            except RuntimeError as e:
                found.append(str(e))

        @graph.disable_saved_tensors_hooks("decorated")
        def decorated():
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        try:
            decorated()
        except RuntimeError as e:
            found.append(str(e))
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):   # re-enabled after
            pass
        return found
    assert errors(mg, mg.autograd.graph) == errors(torch, torch.autograd.graph) == \
        ["no hooks here", "hooks are on", "decorated"]


def test_an_unpack_that_returns_no_tensor_is_torchs_type_error():
    for lib, hooks in ((mg, saved_tensors_hooks),
                       (torch, torch.autograd.graph.saved_tensors_hooks)):
        x = lib.randn(3, requires_grad=True)
        with hooks(lambda t: 1, lambda p: p):
            y = x.exp().sum()
        with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result "
                                            "of type int"):
            y.backward()


def test_a_packed_copy_may_be_written_after_and_an_inplace_square_stays_right():
    for lib, hooks in ((mg, saved_tensors_hooks),
                       (torch, torch.autograd.graph.saved_tensors_hooks)):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with hooks(lambda t: t.detach().clone(), lambda t: t):
            a = x * 1
            y = a * a
        a.add_(1)                                    # the packed copy is what backward reads
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 1
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        a.mul_(a)                                    # the node reads the old a, kept aside
    a.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_hooks_are_per_thread():
    x = mg.randn(3, requires_grad=True)
    calls = []
    with saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t):
        worker = threading.Thread(target=lambda: x.exp())
        worker.start()
        worker.join()
    assert calls == []


def test_a_pack_hook_that_keeps_a_view_sees_an_in_place_ops_old_values():
    found = []
    for lib in (mg, torch):
        a = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
            x = a * 1
            x.sin_()
        x.sum().backward()
        found.append(a.grad.numpy())
    np.testing.assert_allclose(found[0], found[1])


def test_is_contiguous_of_an_empty_tensor_in_every_format():
    for lib in (mg, torch):
        for shape in ((0, 3, 4, 5), (2, 3, 0, 5)):
            x = lib.ones(*shape).to(memory_format=lib.channels_last)
            assert x.is_contiguous(memory_format=lib.channels_last)


def test_pooling_events_take_torchs_names_and_argument_counts():
    def pools(lib):
        x = lib.ones(1, 2, 8)
        lib.nn.functional.max_pool1d(x, 2, return_indices=True)
        lib.nn.functional.max_pool2d(x[None], 2)
        lib.nn.functional.avg_pool1d(x, 2)
        lib.nn.functional.avg_pool2d(x[None], 2)
    seen = {}
    for lib in (mg, torch):
        with lib.no_grad(), lib.profiler.profile(record_shapes=True) as prof:
            pools(lib)
        names = [(e.name, len(e.input_shapes)) for e in prof.events()
                 if e.name.startswith("aten::") and "pool" in e.name]
        seen[lib] = sorted(set(names))
    assert seen[mg] == [n for n in seen[torch] if n in seen[mg]]
    assert [n for n, _ in seen[mg]] == ["aten::avg_pool1d", "aten::avg_pool2d",
                                        "aten::max_pool1d_with_indices", "aten::max_pool2d"]
