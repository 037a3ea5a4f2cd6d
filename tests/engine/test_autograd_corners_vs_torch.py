"""The autograd engine's user-visible corners, each scenario run with microgradnorm and with
PyTorch and compared: what a custom ``autograd.Function`` returns (non-Tensor outputs,
``mark_dirty``'s input itself, ``set_materialize_grads(False)``'s None gradients, on every
path of the backward loop), the warnings of ``grad(only_inputs=False)`` and
``backward(create_graph=True)``, the type of a tensor hook's bad result, anomaly mode's
checks of its flag, ``is_inference``, and accumulation, hooks, grad modes and
``autograd.functional`` on 0-d and empty tensors."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import backend

torch = pytest.importorskip("torch")


def plain(value):
    """A comparable form of what a scenario returns: tensors as (shape, dtype name, values
    with NaN spelled out), containers element by element, anything else as it is."""
    if isinstance(value, (mg.Tensor, torch.Tensor)):
        array = np.asarray(value.detach().numpy(), dtype=np.float64)
        return ("tensor", tuple(value.shape), str(value.dtype).split(".")[-1],
                np.where(np.isnan(array), -12345.0, array).tolist())
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [plain(v) for v in value]
    return value


def outcome(run, lib):
    """("ok", plain result, warning classes) or ("raise", exception class, warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", plain(run(lib)))
        except Exception as error:      # noqa: BLE001  (compared with torch's below)
            result = ("raise", type(error))
    return result + ([w.category.__name__ for w in caught],)


def same(ours, theirs):
    """Equal, but floats to float32's rounding (a gradient may add in another order)."""
    if isinstance(theirs, float) and isinstance(ours, float):
        return bool(np.isclose(ours, theirs, rtol=1e-6, atol=1e-7))
    if isinstance(theirs, (tuple, list)) and isinstance(ours, (tuple, list)):
        return type(ours) is type(theirs) and len(ours) == len(theirs) and all(
            same(a, b) for a, b in zip(ours, theirs))
    return type(ours) is type(theirs) and ours == theirs


def assert_same(run):
    theirs, ours = outcome(run, torch), outcome(run, mg)
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "raise":
        assert issubclass(ours[1], theirs[1]), (ours[1], theirs[1])
    else:
        assert same(ours[1], theirs[1]), (ours[1], theirs[1])
    assert ours[2] == theirs[2], ("warnings", ours[2], theirs[2])
    return ours


# ----- custom Functions: what forward returns ------------------------------------------------
def _function(lib, forward, backward, setup=None):
    body = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    if setup is not None:
        body["setup_context"] = staticmethod(setup)
    return type("Op", (lib.autograd.Function,), body)


def _mixed(lib):
    seen = []
    op = _function(lib, lambda ctx, x: (x * 2, None, 5, x * 3),
                   lambda ctx, *g: seen.append([a is None for a in g]) or g[0] * 2 + g[3] * 3)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    out = op.apply(x)
    (out[0] * out[3]).sum().backward()
    return out[1:3], out[0].grad_fn is out[3].grad_fn, x.grad, seen


def _mixed_graph(lib):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return "label", x ** 2

    def backward(ctx, g_label, g):
        x, = ctx.saved_tensors
        return 2 * x * g * (g_label is None)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    label, y = _function(lib, forward, backward).apply(x)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    return label, g, lib.autograd.grad(g.sum(), x)


def _only_non_tensor(lib, value):
    op = _function(lib, lambda ctx, x: value, lambda ctx, g: g)
    return op.apply(lib.ones(2, requires_grad=True))


def _setup_form_non_tensor(lib):
    def setup(ctx, inputs, output):
        ctx.k = inputs[1]
    op = _function(lib, lambda x, k: (x * k, k), lambda ctx, g, g_k: (g * ctx.k, None), setup)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y, k = op.apply(x, 3.0)
    y.sum().backward()
    return k, x.grad


def _list_output(lib):
    op = _function(lib, lambda ctx, x: [x * 2, x * 3], lambda ctx, g: g)
    out = op.apply(lib.tensor([1.0, 2.0], requires_grad=True))
    return type(out).__name__, out, [t.requires_grad for t in out]


def _no_grad_non_tensor(lib):
    op = _function(lib, lambda ctx, x: (x * 2, 7), lambda ctx, g, g2: g)
    with lib.no_grad():
        y, n = op.apply(lib.ones(2, requires_grad=True))
    return y.requires_grad, n


OUTPUTS = {
    "a tuple with None and an int between tensors": _mixed,
    "a string beside a tensor, double backward": _mixed_graph,
    "an int alone": lambda lib: _only_non_tensor(lib, 5),
    "None alone": lambda lib: _only_non_tensor(lib, None),
    "a 1-tuple of a float": lambda lib: _only_non_tensor(lib, (2.5,)),
    "setup_context form": _setup_form_non_tensor,
    "a list, returned unrecorded": _list_output,
    "under no_grad": _no_grad_non_tensor,
}


@pytest.mark.parametrize("case", OUTPUTS)
def test_a_non_tensor_output_of_a_custom_function_is_returned_as_torch(case):
    assert_same(OUTPUTS[case])


def _dirty(lib):
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    return _function(lib, forward, lambda ctx, g: g * 2)


def _dirty_chain(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    b = x * 3
    c = _dirty(lib).apply(b)
    same, name = c is b, b.grad_fn.name()
    (c * c).sum().backward()
    return same, name, b._version, x.grad, b.grad_fn.next_functions[0][0].name()


def _dirty_after_use(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    b = x * 3
    e = b * b                           # saved b before the write
    _dirty(lib).apply(b)
    e.sum().backward()


def _dirty_double(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    c = _dirty(lib).apply(x * 1)
    g, = lib.autograd.grad((c ** 3).sum(), x, create_graph=True)
    return g, lib.autograd.grad(g.sum(), x)


def _dirty_retained(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    b = x * 1
    b.retain_grad()
    _dirty(lib).apply(b).sum().backward()
    return b.grad, x.grad


def _dirty_constant(lib):
    def forward(ctx, x, w):
        x.mul_(w)
        ctx.mark_dirty(x)
        return x
    op = _function(lib, forward, lambda ctx, g: (g, g))
    a, w = lib.tensor([1.0, 2.0]), lib.tensor([3.0, 3.0], requires_grad=True)
    c = op.apply(a, w)
    flags = c is a, a.requires_grad, a.is_leaf
    c.sum().backward()
    return flags, w.grad, a


def _dirty_no_grad(lib):
    a = lib.tensor([1.0, 2.0])
    c = _dirty(lib).apply(a)
    return c is a, a, a._version


def _dirty_zero_dim(lib):
    x = lib.tensor(2.0, requires_grad=True)
    b = x * 1
    c = _dirty(lib).apply(b)
    c.backward()
    return c is b, x.grad


def _dirty_leaf(lib):
    _dirty(lib).apply(lib.ones(2, requires_grad=True))


DIRTY = {"chain": _dirty_chain, "saved before the write": _dirty_after_use,
         "double backward": _dirty_double, "retained": _dirty_retained,
         "an input that needs no grad": _dirty_constant, "without grad": _dirty_no_grad,
         "0-d": _dirty_zero_dim, "a leaf": _dirty_leaf}


@pytest.mark.parametrize("case", DIRTY)
def test_mark_dirty_returns_the_input_itself_as_torch(case):
    assert_same(DIRTY[case])


def _materialize(lib, path, materialize=False):
    seen = []

    def forward(ctx, x):
        ctx.set_materialize_grads(materialize)
        return x * 2, x * 3

    def backward(ctx, g1, g2):
        seen.append((g1 is None, g2 is None))
        return (0 if g1 is None else g1 * 2) + (0 if g2 is None else g2 * 3)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    a, b = _function(lib, forward, backward).apply(x)
    if path == "node hooks":
        b.grad_fn.register_prehook(lambda grads: seen.append([g is None for g in grads]))
    if path == "create_graph":
        g, = lib.autograd.grad((b ** 2).sum(), x, create_graph=True)
        return seen, g, g.requires_grad
    if path == "both reached":
        (a + b).sum().backward()
    else:
        b.sum().backward()
    return seen, x.grad


@pytest.mark.parametrize("materialize", [False, True])
@pytest.mark.parametrize("path", ["backward", "node hooks", "create_graph", "both reached"])
def test_set_materialize_grads_false_passes_none_as_torch(path, materialize):
    assert_same(lambda lib: _materialize(lib, path, materialize))


# ----- warnings and refusals -----------------------------------------------------------------
def test_grad_only_inputs_false_warns_as_torch():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        return lib.autograd.grad((x ** 3).sum(), x, only_inputs=False)
    assert assert_same(run)[2] == ["FutureWarning"]


def test_backward_with_create_graph_warns_of_the_cycle_once_as_torch():
    # once a process in both: torch's may have gone out earlier in this process, so its
    # message is compared where it comes now, and ours is made to come again here
    backend._WARNED.discard(next((k for k in backend._WARNED if "reference cycle" in k), None))
    for attempt in range(2):
        messages = {}
        for lib in (torch, mg):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                (x * x).sum().backward(create_graph=True)
            messages[lib] = [(w.category, str(w.message)) for w in caught]
        if attempt == 0:
            assert len(messages[mg]) == 1 and messages[mg][0][0] is UserWarning
            assert "reference cycle" in messages[mg][0][1]
            if messages[torch]:     # torch adds where its C++ raised it
                (category, message), = messages[torch]
                assert category is UserWarning and message.startswith(messages[mg][0][1])
        else:
            assert messages[mg] == messages[torch] == []


@pytest.mark.parametrize("returned", ["float", "list", "string"])
@pytest.mark.parametrize("where", ["leaf", "non-leaf", "create_graph"])
def test_a_tensor_hook_returning_a_non_tensor_is_a_type_error(returned, where):
    value = {"float": 3.0, "list": [1.0, 1.0], "string": "g"}[returned]

    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x if where == "leaf" else x * 1
        h.register_hook(lambda g: value)
        y = (h * h).sum()
        if where == "create_graph":
            return lib.autograd.grad(y, x, create_graph=True)
        y.backward()
    assert_same(run)


@pytest.mark.parametrize("form", ["detect_anomaly", "set_detect_anomaly"])
@pytest.mark.parametrize("check_nan", ["yes", 1, None])
def test_anomaly_modes_check_nan_must_be_a_bool(form, check_nan):
    def run(lib):
        if form == "detect_anomaly":
            with lib.autograd.detect_anomaly(check_nan=check_nan):
                pass
        else:
            lib.autograd.set_detect_anomaly(True, check_nan=check_nan)
    try:
        assert_same(run)
    finally:
        mg.autograd.set_detect_anomaly(False)
        torch.autograd.set_detect_anomaly(False)
    assert not mg.is_anomaly_enabled()


@pytest.mark.parametrize("make", ["inside", "outside", "view inside", "detached",
                                  "nested False", "not a tensor"])
def test_is_inference_as_a_function_as_torch(make):
    def run(lib):
        plain_tensor = lib.ones(3)
        with lib.inference_mode():
            inner = lib.ones(3)
            view = plain_tensor[1:]
            with lib.inference_mode(False):
                nested = lib.ones(3)
        made = {"inside": inner, "outside": plain_tensor, "view inside": view,
                "detached": inner.detach(), "nested False": nested, "not a tensor": 3}[make]
        return lib.is_inference(made)
    assert_same(run)


# ----- 0-d and empty tensors through the API -------------------------------------------------
def _zero_dim_everything(lib):
    x = lib.tensor(2.0, requires_grad=True)
    h = x * 3
    h.retain_grad()
    h.register_hook(lambda g: g * 2)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(float(t.grad)))
    (h * h).backward(retain_graph=True)
    first = id(x.grad)
    (h * h).backward()
    return x.grad, h.grad, seen, id(x.grad) == first


def _empty_everything(lib):
    x = lib.zeros(0, 3, requires_grad=True)
    y = (x ** 2).sum()
    g, = lib.autograd.grad(y, x, create_graph=True)
    batched = lib.autograd.grad(x * 2, x, grad_outputs=lib.zeros(4, 0, 3),
                                is_grads_batched=True)
    (x * 2).sum().backward(inputs=[x])
    return g, g.requires_grad, batched, x.grad


def _zero_dim_batched(lib):
    x = lib.tensor(2.0, requires_grad=True)
    return lib.autograd.grad(x ** 3, x, grad_outputs=lib.tensor([1.0, 2.0]),
                             is_grads_batched=True)


def _zero_dim_functional(lib):
    f = lib.autograd.functional
    x = lib.tensor(1.5)
    return (f.jacobian(lambda t: t ** 3, x), f.hessian(lambda t: t ** 3, x),
            f.vjp(lambda t: t ** 3, x), f.jvp(lambda t: t ** 3, x),
            f.hvp(lambda t: t ** 3, x), f.vhp(lambda t: t ** 3, x, lib.tensor(2.0)))


def _empty_custom(lib):
    seen = []

    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x.sum()

    def backward(ctx, g, g_sum):
        seen.append((tuple(g.shape), g_sum is None))
        return g * 2
    x = lib.zeros(0, 2, requires_grad=True)
    y, _ = _function(lib, forward, backward).apply(x)
    y.sum().backward()
    return seen, x.grad


def _zero_dim_inputs(lib):
    x, w = lib.tensor(2.0, requires_grad=True), lib.tensor(3.0, requires_grad=True)
    (x * w).backward(inputs=[w])
    return x.grad, w.grad


CORNERS = {"0-d: retain, hooks, accumulation": _zero_dim_everything,
           "empty: grad, batched, inputs=": _empty_everything,
           "0-d output, batched grads": _zero_dim_batched,
           "0-d through autograd.functional": _zero_dim_functional,
           "empty through a custom Function": _empty_custom,
           "0-d with inputs=": _zero_dim_inputs}


@pytest.mark.parametrize("case", CORNERS)
def test_zero_dim_and_empty_tensors_through_the_api(case):
    assert_same(CORNERS[case])


# ----- accumulation and inputs= ----------------------------------------------------------------
def _inputs_then_plain(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    y = (h * h).sum()
    y.backward(inputs=[h], retain_graph=True)
    flags = h.retains_grad, x.grad
    y.backward()                        # h retains its gradient now: it accumulates
    return flags, h.grad, x.grad


def _expanded_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x.grad = lib.ones(1).expand(2)
    (x * 2).sum().backward()


def _complex_gradient(lib, dtype):
    op = _function(lib, lambda ctx, x: x * 2, lambda ctx, g: g.to(getattr(lib, dtype)))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    op.apply(x).sum().backward()
    return x.grad


ACCUMULATION = {"inputs= then plain backward": _inputs_then_plain,
                "into an expanded .grad": _expanded_grad,
                "a complex gradient of a real input": lambda lib: _complex_gradient(
                    lib, "complex64"),
                "a float64 gradient of a float32 input": lambda lib: _complex_gradient(
                    lib, "float64")}


@pytest.mark.parametrize("case", ACCUMULATION)
def test_accumulation_corners_as_torch(case):
    assert_same(ACCUMULATION[case])


# ----- gradient edges --------------------------------------------------------------------------
def _edges(lib, case):
    edge = lib.autograd.graph.get_gradient_edge
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    out = (y * 3 + y.exp()).sum()
    if case == "inputs":
        return lib.autograd.grad(out, [edge(y), edge(x), x])
    if case == "one edge, create_graph":
        g, = lib.autograd.grad(out, edge(y), create_graph=True)
        return g, lib.autograd.grad(g.sum(), x)
    if case == "an output":
        return lib.autograd.grad([edge(y)], [x], grad_outputs=[lib.ones(2)])
    if case == "one of several outputs":
        first, second = x.unbind()
        return lib.autograd.grad(second * 5 + first, edge(second))
    if case == "0-d":
        s = x.sum()
        return lib.autograd.grad(s * s, edge(s))
    if case == "unused":
        z = lib.tensor(1.0, requires_grad=True) * 2
        return lib.autograd.grad(out, [x, edge(z)], allow_unused=True)


@pytest.mark.parametrize("case", ["inputs", "one edge, create_graph", "an output",
                                  "one of several outputs", "0-d", "unused"])
def test_grad_takes_gradient_edges_as_torch(case):
    assert_same(lambda lib: _edges(lib, case))


# ----- grad modes as decorators ----------------------------------------------------------------
@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_a_grad_mode_decorating_a_class_warns_and_builds_it_in_the_mode(mode):
    def run(lib):
        outside = lib.is_grad_enabled()
        with lib.no_grad() if mode == "enable_grad" else lib.enable_grad():
            @getattr(lib, mode)()
            class Probe:
                def __init__(self, scale):
                    self.state = lib.is_grad_enabled(), lib.is_inference_mode_enabled(), scale
            made = Probe(3)
        return type(made).__name__, made.state, outside == lib.is_grad_enabled()
    assert "FutureWarning" in assert_same(run)[2]
