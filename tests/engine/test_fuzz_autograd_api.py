"""The corners of the autograd API that a differential fuzzer against PyTorch found apart:
errors of gradients and flags, in-place checks of 0-d saved outputs, gradients a custom
Function returns broadcast, version counters, accumulation into a ``.grad`` with history,
anomaly mode's warnings, grad mode inside ``inference_mode`` and saved-tensor hooks beside
Python numbers. Each case runs in both libraries and compares."""

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg

LIBS = (torch, mg)


def outcome(fn):
    """("ok", value) or ("raise", exception class)."""
    try:
        return "ok", fn()
    except Exception as error:          # noqa: BLE001  (compared with torch's below)
        return "raise", type(error)


def assert_same_outcome(run):
    theirs, ours = outcome(lambda: run(torch)), outcome(lambda: run(mg))
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "raise":            # torch's own classes (GradcheckError): by name
        assert issubclass(ours[1], theirs[1]) or ours[1].__name__ == theirs[1].__name__ \
            and issubclass(ours[1], theirs[1].__mro__[1]), (ours[1], theirs[1])
    return ours, theirs


def values(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


# ----- errors of gradients and flags ---------------------------------------------------------
@pytest.mark.parametrize("entry", ["backward", "autograd.backward", "grad"])
@pytest.mark.parametrize("shape, grad_shape", [((3,), (4,)), ((2, 3), (3, 2)), ((), (1,)),
                                               ((2, 0), (5,))])
def test_a_gradient_of_another_shape_is_a_runtime_error(entry, shape, grad_shape):
    def run(lib):
        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        y = x * 2
        g = lib.ones(grad_shape, dtype=lib.float64)
        if entry == "backward":
            return y.backward(g)
        if entry == "autograd.backward":
            return lib.autograd.backward([y], [g])
        return lib.autograd.grad([y], [x], [g])

    (_, ours), _ = assert_same_outcome(run)
    assert issubclass(ours, ValueError)     # and still the ValueError it was


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
@pytest.mark.parametrize("entry", ["tensor", "requires_grad_", "zeros"])
def test_requires_grad_of_an_integer_tensor_is_a_runtime_error(dtype, entry):
    def run(lib):
        dt = getattr(lib, dtype)
        if entry == "tensor":
            return lib.tensor(np.ones(3, dtype=dtype), requires_grad=True)
        if entry == "zeros":
            return lib.zeros(3, dtype=dt, requires_grad=True)
        return lib.tensor(np.ones(3, dtype=dtype)).requires_grad_()

    (_, ours), _ = assert_same_outcome(run)
    assert issubclass(ours, TypeError)


@pytest.mark.parametrize("make", ["constant", "detached", "no_grad"])
def test_retain_grad_of_a_tensor_without_grad_raises(make):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        if make == "constant":
            t = lib.ones(3)
        elif make == "detached":
            t = (x * 2).detach()
        else:
            with lib.no_grad():
                t = x * 2
        return t.retain_grad()

    assert_same_outcome(run)


@pytest.mark.parametrize("position", [0, 1])
@pytest.mark.parametrize("grad_outputs", [False, True])
def test_grad_of_an_output_that_does_not_require_grad_raises(position, grad_outputs):
    def run(lib):
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        outs = [(x * x).sum(), lib.ones((), dtype=lib.float64)]
        if position == 0:
            outs.reverse()
        go = [lib.ones((), dtype=lib.float64)] * 2 if grad_outputs else None
        return lib.autograd.grad(outs, [x], go)

    assert_same_outcome(run)


@pytest.mark.parametrize("entry", ["grad", "autograd.backward"])
@pytest.mark.parametrize("given", [0, 1])       # more than the outputs: refused here only
def test_a_count_of_output_gradients_that_does_not_match_is_a_runtime_error(entry, given):
    def run(lib):
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        outs = [(x * x).sum(), (x * 3).sum()]
        grads = [lib.ones((), dtype=lib.float64)] * given
        if entry == "grad":
            return lib.autograd.grad(outs, [x], grads)
        return lib.autograd.backward(outs, grads)

    (_, ours), _ = assert_same_outcome(run)
    assert issubclass(ours, ValueError)


@pytest.mark.parametrize("inputs", ["h", "h x", "h w", "x"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_fills_the_grad_of_a_retaining_tensor_wherever_its_gradient_is_computed(
        inputs, create_graph):
    found = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([3.0, -4.0], dtype=lib.float64, requires_grad=True)
        h = x * w
        h.retain_grad()
        named = {"h": h, "x": x, "w": w}
        got = lib.autograd.grad((h * h).sum(), [named[k] for k in inputs.split()],
                                create_graph=create_graph)
        found.append((None if h.grad is None else values(h.grad), x.grad, w.grad,
                      got[0] is h.grad))
    (t_h, t_x, t_w, t_same), (o_h, o_x, o_w, o_same) = found
    assert (o_h is None) == (t_h is None) and o_x is t_x is None and o_w is t_w is None
    assert o_same == t_same
    if t_h is not None:
        np.testing.assert_allclose(o_h, t_h)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("as_dict", [False, True])
def test_grad_materializes_zeros_and_takes_a_dict_as_torch(create_graph, as_dict):
    found = []
    for lib in LIBS:
        x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        z = lib.tensor([0.5, 3.0], dtype=lib.float64, requires_grad=True)
        inputs = {"x": x, "unused": z} if as_dict else [x, z]
        got = lib.autograd.grad((x ** 3).sum(), inputs, create_graph=create_graph,
                                materialize_grads=True)
        items = got.items() if as_dict else enumerate(got)
        found.append((type(got).__name__,
                      [(k, values(g).tolist(), g.requires_grad) for k, g in items]))
    assert found[1] == found[0]


@pytest.mark.parametrize("value", ["int64", "bool", "float16", "float64"])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_data_of_a_tensor_that_requires_grad_takes_floating_values_only(value, requires_grad):
    def run(lib):
        x = lib.ones(2, requires_grad=requires_grad)
        x.data = lib.tensor(np.ones(3, dtype=value))
        return str(x.dtype).replace("torch.", ""), tuple(x.shape)

    ours, theirs = assert_same_outcome(run)
    assert theirs[0] == "raise" or ours[1] == theirs[1]


# ----- hooks ---------------------------------------------------------------------------------
@pytest.mark.parametrize("on", ["leaf", "non-leaf"])
@pytest.mark.parametrize("returned", ["float64", "float16", "same", "None"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_a_tensor_hook_that_changes_the_dtype_raises(on, returned, create_graph):
    def run(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)       # float32
        y = x * 2
        target = x if on == "leaf" else y

        def hook(g):
            if returned == "None":
                return None
            return g * 3 if returned == "same" else g.to(getattr(lib, returned))

        target.register_hook(hook)
        (y * y).sum().backward(create_graph=create_graph)
        return values(x.grad).tolist()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch's create_graph reference-cycle note
        ours, theirs = assert_same_outcome(run)
    assert theirs[0] == "raise" or ours[1] == theirs[1]


# ----- an in-place write into a saved 0-d output -----------------------------------------
@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "sqrt", "relu"])
@pytest.mark.parametrize("write", ["add_", "zero_", "mul_", "fill_"])
@pytest.mark.parametrize("shape", [(), (2,)])
def test_writing_a_saved_output_in_place_raises_at_every_rank(op, write, shape):
    def run(lib):
        x = lib.full(shape, 0.7, dtype=lib.float64, requires_grad=True)
        y = getattr(x, op)()
        getattr(y, write)(*(() if write == "zero_" else (2.0,)))
        assert y._version == 1
        y.sum().backward()
        return values(x.grad)

    assert_same_outcome(run)


# ----- custom Functions ----------------------------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("shape, grad_shape", [((2, 1), (4, 2, 1)), ((2, 1), (2, 3)),
                                               ((1,), (0,)), ((), (3,)), ((2, 2), (2, 3)),
                                               ((3,), (3, 1))])
def test_a_custom_gradient_of_the_broadcast_shape_is_summed_back(create_graph, shape,
                                                                 grad_shape):
    def run(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return lib.arange(int(np.prod(grad_shape)), dtype=lib.float64).reshape(
                    grad_shape) * g.sum()

        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        Scale.apply(x).sum().backward(create_graph=create_graph)
        return values(x.grad)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch's create_graph reference-cycle note
        ours, theirs = assert_same_outcome(run)
    if theirs[0] == "ok":
        np.testing.assert_allclose(ours[1], theirs[1])


@pytest.mark.parametrize("write", ["add_", "mul_", "zero_"])
@pytest.mark.parametrize("dirty", [True, False])
def test_a_write_in_a_custom_forward_moves_the_callers_version(write, dirty):
    def run(lib):
        class Write(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                getattr(x, write)(*(() if write == "zero_" else (2.0,)))
                if dirty:
                    ctx.mark_dirty(x)
                    return x
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g

        y = lib.ones(3, dtype=lib.float64, requires_grad=True) * 1
        Write.apply(y)
        return y._version

    ours, theirs = assert_same_outcome(run)
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("saved", ["float", "int", "list", "array"])
def test_save_for_backward_of_a_non_tensor_is_a_type_error(saved):
    value = {"float": 2.0, "int": 3, "list": [1.0], "array": np.ones(2)}[saved]

    def run(lib):
        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, value)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        return Keep.apply(lib.ones(2, requires_grad=True))

    assert_same_outcome(run)


@pytest.mark.filterwarnings("ignore:.*should not be instantiated")   # both warn so
def test_calling_a_function_instance_is_torch_s_legacy_error():
    def run(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        return Double()(lib.ones(2, requires_grad=True))

    assert_same_outcome(run)


@pytest.mark.parametrize("call", ["positional", "keyword", "default"])
@pytest.mark.parametrize("grads", [1, 2])
def test_a_keyword_argument_of_apply_counts_as_a_forward_argument(call, grads):
    def run(lib):
        seen = []

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=2.0):
                ctx.k = k
                return x * k

            @staticmethod
            def backward(ctx, g):
                seen.append(tuple(ctx.needs_input_grad))
                return (g * ctx.k, None)[:grads]

        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        y = {"positional": lambda: Scale.apply(x, 3.0), "keyword": lambda: Scale.apply(x, k=3.0),
             "default": lambda: Scale.apply(x)}[call]()
        y.sum().backward()
        return seen, values(x.grad).tolist()

    ours, theirs = assert_same_outcome(run)
    assert theirs[0] == "raise" or ours[1] == theirs[1]


GRADCHECK_FNS = {"constant of x": lambda x: x.detach() * 0, "detached": lambda x: x.detach() * 3,
                 "one of two detached": lambda x: (x * 2, x.detach() * 3),
                 "a constant beside": lambda x: (x * 2, x.detach().sum() * 0 + 1.0),
                 "an integer beside": lambda x: (x.detach() * 0, (x.detach() * 2).long())}


@pytest.mark.parametrize("name", list(GRADCHECK_FNS))
@pytest.mark.parametrize("raise_exception", [False, True])
def test_gradcheck_of_outputs_without_grad_as_torch(name, raise_exception):
    def run(lib):
        x = lib.tensor([0.5, -1.5], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(GRADCHECK_FNS[name], (x,),
                                      raise_exception=raise_exception)

    ours, theirs = assert_same_outcome(run)
    assert theirs[0] == "raise" or ours[1] == theirs[1]


# ----- accumulation into a .grad with history --------------------------------------------
@pytest.mark.parametrize("second", ["penalty", "plain"])
def test_a_grad_with_history_accumulates_in_place_and_keeps_it(second):
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x ** 3).sum().backward(create_graph=True)
        held = x.grad
        loss = (x.grad ** 2).sum() if second == "penalty" else (x * 4).sum()
        loss.backward()
        results.append((values(x.grad), x.grad is held, x.grad.requires_grad))
    (theirs, t_same, t_req), (ours, o_same, o_req) = results
    np.testing.assert_allclose(ours, theirs)
    assert (o_same, o_req) == (t_same, t_req)


# ----- anomaly mode --------------------------------------------------------------------
@pytest.mark.parametrize("op", ["sqrt", "log"])
def test_anomaly_mode_warns_as_torch_before_naming_the_node(op):
    caught = []
    for lib in LIBS:
        x = lib.zeros(2, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                y = (getattr(x, op)() * 0).sum()         # 0 · inf: NaN in op's backward
                with pytest.raises(RuntimeError, match="returned nan values"):
                    y.backward()
        texts = [str(w.message) for w in seen if w.category is UserWarning]
        caught.append((any(t.startswith("Anomaly Detection has been enabled") for t in texts),
                       [t.split(".")[0] for t in texts if t.startswith("Error detected in")]))
    assert caught[0][0] and caught[1][0]
    assert len(caught[1][1]) == len(caught[0][1]) == 1


# ----- grad mode inside inference_mode ---------------------------------------------------
@pytest.mark.parametrize("inner", ["enable_grad", "set_grad_enabled", "set_grad_enabled call",
                                   "no_grad", "inference_mode(False)"])
def test_grad_mode_inside_inference_mode_records_as_torch(inner):
    found = []
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            if inner == "enable_grad":
                with lib.enable_grad():
                    y = x * 2
            elif inner == "set_grad_enabled":
                with lib.set_grad_enabled(True):
                    y = x * 2
            elif inner == "set_grad_enabled call":
                lib.set_grad_enabled(True)
                y = x * 2
            elif inner == "no_grad":
                with lib.no_grad():
                    y = x * 2
            else:
                with lib.inference_mode(False):
                    y = x * 2
            z = x * 3
        found.append((y.requires_grad, y.grad_fn is None, z.requires_grad,
                      lib.is_inference_mode_enabled(), lib.is_grad_enabled()))
    assert found[1] == found[0]


# ----- saved-tensor hooks beside Python numbers -------------------------------------------
OPS = {"x * 3": lambda x, w: x * 3, "3 * x": lambda x, w: 3 * x, "x / 3": lambda x, w: x / 3,
       "x * 3 + w": lambda x, w: x * 3 + w, "x * w": lambda x, w: x * w,
       "x * x": lambda x, w: x * x, "x ** 2": lambda x, w: x ** 2, "w / x": lambda x, w: w / x,
       "x * 0-d": lambda x, w: x * w.sum()}


@pytest.mark.parametrize("name", list(OPS))
def test_saved_tensor_hooks_pack_what_torch_packs_beside_numbers(name):
    counts, grads = [], []
    for lib in LIBS:
        packed, unpacked = [], []
        x = lib.tensor([[1.5, -2.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([[2.0, 1.0], [-1.0, 0.5]], dtype=lib.float64)
        with lib.autograd.graph.saved_tensors_hooks(
                lambda t, seen=packed: seen.append(1) or t,
                lambda t, seen=unpacked: seen.append(1) or t):
            y = OPS[name](x, w)
        y.sum().backward()
        counts.append((len(packed), len(unpacked)))
        grads.append(values(x.grad))
    assert counts[1] == counts[0]
    np.testing.assert_allclose(grads[1], grads[0])


@pytest.mark.parametrize("leaf", [True, False])
def test_retain_grad_returns_none_as_torchs(leaf):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        return (x if leaf else x * 2).retain_grad()

    assert_same_outcome(run)
