"""PyTorch's autograd names as PyTorch code uses them: ``autograd.Function`` written with
Tensors, ``autograd.backward`` / ``grad`` with their keywords, ``autograd.functional``,
anomaly detection, ``autograd.gradcheck`` and ``Variable``; each run here and under torch
on the same inputs and compared."""

import numpy as np
import pytest
import torch

import microgradnorm as mg

LIBS = (mg, torch)


def values(t):
    return None if t is None else np.asarray(t.detach().numpy(), dtype=np.float64)


def assert_same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    elif theirs is None:
        assert ours is None
    else:
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(values(ours), values(theirs), rtol=1e-12, atol=1e-12)


def both(make):
    """``make(lib)`` run with mg and with torch."""
    return make(mg), make(torch)


# ----- Function written with Tensors --------------------------------------------------------
def relu_class(lib):
    class MyReLU(lib.autograd.Function):          # PyTorch's tutorial, as written
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input
    return MyReLU


def test_the_tutorial_relu_gives_torchs_values_and_gradients():
    rng = np.random.default_rng(0)
    data, upstream = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def run(lib):
        x = lib.tensor(data, requires_grad=True)
        y = relu_class(lib).apply(x)
        y.backward(lib.tensor(upstream))
        return y, x.grad
    assert_same(*both(run))


def linear_class(lib, setup_form):
    """y = x @ w + b with the gradients each input needs; the setup_context form or not."""
    def linear_backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = g @ w.t() if ctx.needs_input_grad[0] else None
        gw = x.t() @ g if ctx.needs_input_grad[1] else None
        gb = g.sum(0) * ctx.scale if ctx.needs_input_grad[2] else None
        return gx, gw, gb, None

    if setup_form:
        class Linear(lib.autograd.Function):
            @staticmethod
            def forward(x, w, b, scale=1.0):
                return x @ w + b * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0], inputs[1])
                ctx.scale = inputs[3]
            backward = staticmethod(linear_backward)
    else:
        class Linear(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, w, b, scale=1.0):
                ctx.save_for_backward(x, w)
                ctx.scale = scale
                return x @ w + b * scale
            backward = staticmethod(linear_backward)
    return Linear


@pytest.mark.parametrize("setup_form", [False, True])
@pytest.mark.parametrize("grads", [(True, True, True), (True, False, True), (False, True, False)])
def test_a_function_of_several_inputs_and_a_number_matches_torch(setup_form, grads):
    rng = np.random.default_rng(1)
    arrays = rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)
    upstream = rng.standard_normal((4, 2))

    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=r) for a, r in zip(arrays, grads))
        y = linear_class(lib, setup_form).apply(x, w, b, scale=2.5)
        y.backward(lib.tensor(upstream))
        return [y] + [t.grad for t in (x, w, b)]
    assert_same(*both(run))


def test_ctx_needs_input_grad_has_one_flag_per_forward_argument():
    seen = {}

    def run(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, y):
                seen[lib.__name__] = ctx.needs_input_grad
                return x * k + y

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, None
        Scale.apply(lib.ones(2, requires_grad=True), 2.0, lib.ones(2)).sum().backward()
    both(run)
    assert seen["microgradnorm"] == seen["torch"] == (True, False, False)


def test_non_differentiable_and_integer_outputs_get_no_gradient_and_zeros_reach_backward():
    received = {}

    def run(lib):
        class Top(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                total = x.sum()
                ctx.mark_non_differentiable(total)
                return x * 2, x.argmax(), total

            @staticmethod
            def backward(ctx, g, g_index, g_total):
                received[lib.__name__] = (values(g_index), values(g_total))
                return g * 2
        x = lib.tensor([1.0, 3.0, 2.0], requires_grad=True)
        y, index, total = Top.apply(x)
        y.sum().backward()
        assert not index.requires_grad and index.grad_fn is None
        assert not total.requires_grad and total.grad_fn is None
        return y, x.grad
    assert_same(*both(run))
    assert received["microgradnorm"] == received["torch"] == (0.0, 0.0)


def test_a_saved_input_written_in_place_before_backward_raises_as_torchs():
    def run(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * x
        x = lib.ones(2, requires_grad=True)
        h = x * 1
        y = Twice.apply(h)
        h.add_(1)
        with pytest.raises(RuntimeError, match="modified"):
            y.sum().backward()
    both(run)


@pytest.mark.parametrize("returned, error", [
    (lambda g: g, "incorrect number of gradients"),            # one for two arguments
    (lambda g: (g, g * 0 + 1), "not a"),                       # a gradient for a number
    (lambda g: (g, None, g), "incorrect number of gradients"),  # an extra one not None
])
def test_backward_returning_the_wrong_gradients_raises_as_torchs(returned, error):
    def run(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return returned(g)
        with pytest.raises(RuntimeError, match=error):
            Scale.apply(lib.ones(2, requires_grad=True), 3.0).sum().backward()
    both(run)


def test_extra_trailing_none_gradients_are_accepted():
    def run(lib):
        class Plus(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x + 1

            @staticmethod
            def backward(ctx, g):
                return g * 3, None, None
        x = lib.ones(2, requires_grad=True)
        Plus.apply(x).sum().backward()
        return x.grad
    assert_same(*both(run))


def test_without_an_input_requiring_grad_or_under_no_grad_no_node_is_recorded():
    for lib in LIBS:
        Relu = relu_class(lib)
        assert Relu.apply(lib.ones(2)).grad_fn is None
        with lib.no_grad():
            y = Relu.apply(lib.ones(2, requires_grad=True))
        assert y.grad_fn is None and not y.requires_grad


def test_forward_runs_with_grad_disabled_and_the_node_is_named_after_the_class():
    modes = []

    class Probe(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            modes.append(mg.is_grad_enabled())
            return x * 2

        @staticmethod
        def backward(ctx, g):
            modes.append(mg.is_grad_enabled())
            return g
    y = Probe.apply(mg.ones(2, requires_grad=True))
    assert "ProbeBackward" in repr(y.grad_fn)
    y.sum().backward()
    assert modes == [False, False]


def test_once_differentiable_and_function_ctx_are_importable_where_torch_has_them():
    from microgradnorm.autograd.function import FunctionCtx, once_differentiable

    class Twice(mg.autograd.Function):
        @staticmethod
        def forward(ctx: FunctionCtx, x):
            return x * 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            return g * 2
    x = mg.ones(2, requires_grad=True)
    Twice.apply(x).sum().backward()
    assert values(x.grad).tolist() == [2.0, 2.0]


def test_a_non_tensor_forward_result_is_returned_and_function_itself_cannot_apply():
    def run(lib):
        class Number(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return 5

            @staticmethod
            def backward(ctx, g):
                return g
        return Number.apply(lib.ones(2, requires_grad=True))
    ours, theirs = both(run)
    assert ours == theirs
    with pytest.raises(RuntimeError, match="subclass"):
        mg.autograd.Function.apply(mg.ones(2))


def test_the_engine_base_on_arrays_stays_mg_function():
    assert mg.Function is not mg.autograd.Function
    assert issubclass(relu_class(mg)._node, mg.Function)     # each class's node is the engine's


# ----- backward and grad with PyTorch's keywords --------------------------------------------
def test_autograd_backward_of_several_tensors_and_inputs_matches_torch():
    rng = np.random.default_rng(2)
    data = rng.standard_normal(3)

    def run(lib):
        a = lib.tensor(data, requires_grad=True)
        b = lib.tensor(data * 2, requires_grad=True)
        lib.autograd.backward([(a * b).sum(), (a * a).sum()])
        first = (a.grad.clone(), b.grad.clone())
        a.grad = b.grad = None
        h = a * 3
        (h * b).sum().backward(inputs=[h, b])
        return first + (a.grad, h.grad, b.grad)
    assert_same(*both(run))


def test_backward_takes_gradient_by_torchs_keyword_and_refuses_empty_inputs():
    def run(lib):
        a = lib.ones(2, requires_grad=True)
        (a * 2).backward(gradient=lib.tensor([1.0, 3.0]))
        with pytest.raises(RuntimeError, match="cannot be empty"):
            (a * 2).sum().backward(inputs=[])
        return a.grad
    assert_same(*both(run))


def test_grad_materializes_unused_inputs_as_zeros_and_takes_one_gradient_as_a_list():
    def run(lib):
        x, z = lib.ones(2, requires_grad=True), lib.ones(3, requires_grad=True)
        zero = lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
        listed = lib.autograd.grad(x * 2, x, [lib.tensor([1.0, 2.0])])
        return zero + listed
    assert_same(*both(run))


# ----- autograd.functional -----------------------------------------------------------------
FUNCTIONS = [
    (lambda a: a.exp() * a, ((3,),)),
    (lambda a: (a ** 2).sum(), ((2, 2),)),
    (lambda a, b: (a * b, a.sum() * b), ((2,), (2,))),
    (lambda a, b: a @ b, ((2, 3), (3,))),
]


@pytest.mark.parametrize("func, shapes", FUNCTIONS)
def test_jacobian_vjp_and_jvp_match_torch(func, shapes):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in shapes]

    def run(lib):
        inputs = tuple(lib.tensor(a) for a in arrays)
        outputs = func(*inputs)
        single = isinstance(outputs, lib.Tensor)
        v_out = outputs.detach() * 0 + 0.5 if single else tuple(o.detach() * 0 + 0.5
                                                                for o in outputs)
        v_in = tuple(t * 0 + 2 for t in inputs)
        fun = lib.autograd.functional
        return (fun.jacobian(func, inputs), fun.vjp(func, inputs, v_out),
                fun.jvp(func, inputs, v_in))
    assert_same(*both(run))


def test_jacobian_of_one_input_and_strict_mode_as_torch():
    def run(lib):
        fun = lib.autograd.functional
        single = fun.jacobian(lambda t: t * 2, lib.ones(3))
        unused = fun.jacobian(lambda a, b: a * 2, (lib.ones(2), lib.ones(2)))
        with pytest.raises(RuntimeError, match="independent"):
            fun.jacobian(lambda a, b: a * 2, (lib.ones(2), lib.ones(2)), strict=True)
        return single, unused
    assert_same(*both(run))


def test_the_second_order_functions_follow_torch():
    # the values against torch: tests/engine/test_autograd_functional_double.py
    def run(lib):
        fun = lib.autograd.functional
        x = lib.tensor([1.0, 2.0])
        with pytest.raises(RuntimeError, match="single element"):
            fun.hessian(lambda t: t ** 3, x)
        return fun.hessian(lambda t: (t ** 3).sum(), x), fun.hvp(
            lambda t: (t ** 3).sum(), x, lib.ones(2))
    assert_same(*both(run))


# ----- anomaly detection, gradcheck, Variable ----------------------------------------------
@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")   # torch's notes
@pytest.mark.filterwarnings("ignore:Error detected in")
def test_anomaly_detection_names_the_node_that_returned_nan():
    for lib in LIBS:
        a = lib.tensor([-1.0, 1.0], requires_grad=True)
        with lib.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="Sqrt.*returned nan values in its 0th"):
                a.sqrt().sum().backward()
        assert not lib.is_anomaly_enabled()
        a.sqrt().sum().backward()                  # off again: no check
        with lib.autograd.set_detect_anomaly(True):
            assert lib.is_anomaly_enabled()
        assert not lib.is_anomaly_enabled()


def test_autograd_gradcheck_passes_a_right_gradient_and_catches_a_wrong_one():
    class Wrong(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3
    x = mg.tensor(np.random.default_rng(4).standard_normal(3), requires_grad=True)
    assert mg.autograd.gradcheck(lambda t: t.sin(), (x,))
    assert mg.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False
    with pytest.raises(RuntimeError):                    # torch's GradcheckError class
        mg.autograd.gradcheck(Wrong.apply, (x,))
    assert mg.autograd.gradcheck(lambda t: t.sin(), (x,), check_forward_ad=True)

    class WrongTangent(Wrong):
        @staticmethod
        def jvp(ctx, t):
            return t * 3
    # the forward-mode check alone: the tangent is wrong, the gradient is not looked at
    assert mg.autograd.gradcheck(WrongTangent.apply, (x,), check_forward_ad=True,
                                 check_backward_ad=False, raise_exception=False) is False
    with pytest.raises(AssertionError, match="check_forward_ad or check_backward_ad"):
        mg.autograd.gradcheck(lambda t: t.sin(), (x,), check_backward_ad=False)
    with pytest.raises(NotImplementedError, match="check_batched_grad"):
        mg.autograd.gradcheck(lambda t: t.sin(), (x,), check_batched_grad=True)


def test_variable_is_a_tensor_sharing_memory():
    t = mg.ones(2)
    v = mg.autograd.Variable(t, requires_grad=True)
    assert v.requires_grad and v.is_leaf and not t.requires_grad
    with mg.no_grad():
        v.add_(1)
    assert values(t).tolist() == [2.0, 2.0]


# ----- what a first version got wrong ------------------------------------------------------
def scale_class(lib):
    class Scale(lib.autograd.Function):          # a number before the Tensor
        @staticmethod
        def forward(ctx, k, x):
            ctx.k = k
            clipped = x.clone()
            clipped[clipped < -100] = -100           # a write into forward's own temporary
            return clipped * k

        @staticmethod
        def backward(ctx, g):
            return None, g * ctx.k
    return Scale


def test_a_captured_step_replays_a_function_with_its_gradients():
    Scale = scale_class(mg)
    w = mg.nn.Parameter(mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64))

    @mg.capture
    def step(x):
        return Scale.apply(2.0, x * w).sum()

    x = mg.tensor([3.0, 4.0, 5.0], dtype=mg.float64)
    for _ in range(4):                            # two recordings, then replays
        w.grad = None
        step(x).backward()
        np.testing.assert_array_equal(values(w.grad), [6.0, 8.0, 10.0])


@pytest.mark.parametrize("name", ["inputs", "function", "module", "seq", "positions", "dirty"])
def test_any_ctx_attribute_name_is_the_users(name):
    def run(lib):
        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                setattr(ctx, name, x.shape)
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                assert tuple(getattr(ctx, name)) == (2,)
                return 2 * x * g
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        Keep.apply(x).sum().backward()
        return x.grad
    assert_same(*both(run))


def test_functional_results_stay_finite_beside_an_infinite_input():
    def run(lib):
        fun = lib.autograd.functional
        x = lib.tensor([float("inf"), 1.0])
        return (fun.jvp(lambda a: a * 2, x, lib.ones(2))[1],
                fun.vjp(lambda a: a.sum(), x)[1],
                fun.jacobian(lambda a, b: a * 2, (lib.ones(2), x))[1])
    assert_same(*both(run))


def test_jvp_runs_func_once_and_takes_a_tangent_of_another_dtype():
    calls = []

    def func(a):
        calls.append(1)
        return a * 3

    def run(lib):
        out, tangent = lib.autograd.functional.jvp(
            func, lib.ones(3), lib.ones(3, dtype=lib.float64))
        return out, tangent
    ours, theirs = both(run)
    assert len(calls) == 2 and ours[1].dtype == mg.float32
    assert_same(ours, theirs)


def test_grad_of_a_list_of_outputs_takes_one_tensor_gradient_and_refuses_no_inputs():
    def run(lib):
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        y = x * x
        with pytest.raises(RuntimeError, match="cannot be empty"):
            lib.autograd.grad(y.sum(), [])
        return lib.autograd.grad([y], [x], lib.tensor([1.0, 1.0]))
    assert_same(*both(run))


def test_backward_with_inputs_also_fills_retained_gradients():
    def run(lib):
        a = lib.ones(2, requires_grad=True)
        h = a * 2
        h.retain_grad()
        (h * 3).sum().backward(inputs=[a])
        return a.grad, h.grad
    assert_same(*both(run))


def test_the_corners_torch_refuses():
    for lib in LIBS:
        fun = lib.autograd.functional
        with pytest.raises(RuntimeError, match="floating point"):
            fun.jacobian(lambda a: a * 2, lib.tensor([1, 2]))
        with pytest.raises(NotImplementedError):
            fun.jacobian(lambda a: a * 2, lib.ones(2), strategy="forward-mode")
        with pytest.raises(TypeError):
            fun.jacobian(lambda a: [a * 2], lib.ones(2))

        class Dirty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        class Number(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return 1.5
        with pytest.raises(RuntimeError, match="leaf Variable"):
            Dirty.apply(lib.ones(2, requires_grad=True))
        with pytest.raises(RuntimeError):
            Number.apply(lib.ones(2, requires_grad=True)).sum().backward()


def test_a_function_defining_vjp_alone_uses_it():
    def run(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 2
        x = lib.ones(2, requires_grad=True)
        Twice.apply(x).sum().backward()
        return x.grad
    assert_same(*both(run))
