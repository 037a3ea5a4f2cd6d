"""Autograd's second round and ``torch.func`` against PyTorch, computed at test time: the
gradient under ``create_graph=True`` of the ops whose torch backward reads the input only
to mask or route the gradient (it requires grad, a second backward gives zeros, a third
reaches the first layer of a ReLU net), gradient penalties and physics-informed second
derivatives, ``autograd.grad``'s argument errors and ``is_grads_batched``, node hooks
under ``create_graph``, post-accumulate hooks, ``once_differentiable``, custom Functions
under ``torch.func`` transforms, ``func.jvp``, nested transforms' results and
``autograd.forward_ad``."""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

X = [[-1.5, 0.5, 2.0], [0.3, -0.2, 1.1]]


def outcome(fn):
    """("ok", value) or ("raise", exception class)."""
    try:
        return "ok", fn()
    except Exception as error:          # noqa: BLE001  (compared with torch's below)
        return "raise", type(error)


def values(t):
    return None if t is None else np.asarray(t.detach().tolist(), dtype=np.float64)


def assert_same(theirs, ours):
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "raise":
        assert issubclass(ours[1], theirs[1]), (ours[1], theirs[1])
        return
    a, b = theirs[1], ours[1]
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for u, v in zip(a, b):
            assert_same(("ok", u), ("ok", v))
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert a is not None and b is not None, (a, b)
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-12)
    else:
        assert a == b, (a, b)


def compare(run):
    assert_same(outcome(lambda: run(torch)), outcome(lambda: run(mg)))


# ----- create_graph=True through ops whose torch backward reads the input ---------------
MASKING = {
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x, 0.1),
    "leaky_relu_": lambda L, x: L.nn.functional.leaky_relu(x.clone(), 0.1, inplace=True),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "relu6": lambda L, x: L.nn.ReLU6()(x),
    "threshold": lambda L, x: L.nn.functional.threshold(x, 0.1, 20.0),
    "softshrink": lambda L, x: L.nn.functional.softshrink(x, 0.5),
    "hardshrink": lambda L, x: L.nn.functional.hardshrink(x, 0.5),
    "prelu": lambda L, x: L.nn.functional.prelu(x, L.tensor([0.25], dtype=L.float64)),
    "rrelu_eval": lambda L, x: L.nn.functional.rrelu(x, training=False),
    "copysign": lambda L, x: L.copysign(x, L.tensor(-1.0, dtype=L.float64)),
    "max_pool1d": lambda L, x: L.nn.functional.max_pool1d(x[None], 2),
    "max_pool2d": lambda L, x: L.nn.functional.max_pool2d(x[None, None], 2, 1),
    "avg_pool1d": lambda L, x: L.nn.functional.avg_pool1d(x[None], 2),
    "avg_pool2d": lambda L, x: L.nn.functional.avg_pool2d(x[None, None], 1),
    "adaptive_avg_pool1d": lambda L, x: L.nn.functional.adaptive_avg_pool1d(x[None], 2),
    "adaptive_avg_pool2d_1": lambda L, x: L.nn.functional.adaptive_avg_pool2d(x[None, None], 1),
    "adaptive_max_pool2d": lambda L, x: L.nn.functional.adaptive_max_pool2d(x[None, None], 1),
    "nll_loss": lambda L, x: L.nn.functional.nll_loss(x, L.tensor([0, 2])),
    "nll_loss_none": lambda L, x: L.nn.functional.nll_loss(x, L.tensor([0, 2]),
                                                           reduction="none"),
    "pad_reflect": lambda L, x: L.nn.functional.pad(x[None], (1, 1), mode="reflect"),
    "pad_replicate": lambda L, x: L.nn.functional.pad(x[None], (1, 1), mode="replicate"),
    "pad_circular": lambda L, x: L.nn.functional.pad(x[None], (1, 1), mode="circular"),
    "conv1d": lambda L, x: L.nn.functional.conv1d(x[None], L.ones(3, 2, 2, dtype=L.float64)),
    "conv_transpose1d": lambda L, x: L.nn.functional.conv_transpose1d(
        x[None], L.ones(2, 3, 2, dtype=L.float64)),
    "relu": lambda L, x: L.relu(x),
    "where": lambda L, x: L.where(x > 0, x, L.zeros_like(x)),
    "times_two": lambda L, x: 2 * x,
}


@pytest.mark.parametrize("second", ["grad", "allow_unused", "materialize", "backward"])
@pytest.mark.parametrize("op", sorted(MASKING))
def test_the_gradient_of_a_masking_op_depends_on_its_input_as_torch(op, second):
    def run(L):
        x = L.tensor(X, dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(MASKING[op](L, x).sum(), x, create_graph=True)
        if second == "backward":
            g.sum().backward()
            return g.requires_grad, values(x.grad)
        options = {"allow_unused": True} if second == "allow_unused" else \
            {"materialize_grads": True} if second == "materialize" else {}
        (h,) = L.autograd.grad(g.sum(), x, **options)
        return g.requires_grad, values(h)
    compare(run)


@pytest.mark.parametrize("act", ["ReLU", "LeakyReLU", "Hardtanh", "Softshrink", "Tanh", "PReLU"])
def test_third_derivatives_of_a_small_net_reach_the_layers_torch_reaches(act):
    weights = np.random.default_rng(0).standard_normal((2 * 8 + 8 + 8 + 1,)) * 0.7

    def run(L):
        net = L.nn.Sequential(L.nn.Linear(2, 8), getattr(L.nn, act)(), L.nn.Linear(8, 1)).double()
        with L.no_grad():
            flat = iter(weights.tolist())
            for p in list(net.parameters())[:4]:
                p.copy_(L.tensor([next(flat) for _ in range(p.numel())],
                                 dtype=L.float64).reshape(p.shape))
        x = L.tensor([[0.3, -0.6], [1.2, 0.4], [-0.7, 0.9]], dtype=L.float64,
                     requires_grad=True)
        (du,) = L.autograd.grad(net(x).sum(), x, create_graph=True)
        (d2,) = L.autograd.grad(du[:, 0].sum(), x, create_graph=True)
        third = L.autograd.grad(d2.sum(), list(net.parameters()) + [x], allow_unused=True)
        return (values(du), values(d2), d2.requires_grad) + tuple(values(g) for g in third)
    compare(run)


@pytest.mark.parametrize("act", ["LeakyReLU", "ReLU", "Hardtanh", "Tanh"])
def test_a_gradient_penalty_backpropagates_as_torch(act):
    rng = np.random.default_rng(1)
    real, fake, alpha = rng.standard_normal((6, 2)), rng.standard_normal((6, 2)), rng.random((6, 1))
    weights = rng.standard_normal(2 * 8 + 8 + 8 + 1)

    def run(L):
        net = L.nn.Sequential(L.nn.Linear(2, 8), getattr(L.nn, act)(), L.nn.Linear(8, 1)).double()
        with L.no_grad():
            flat = iter(weights.tolist())
            for p in net.parameters():
                p.copy_(L.tensor([next(flat) for _ in range(p.numel())],
                                 dtype=L.float64).reshape(p.shape))
        a = L.tensor(alpha)
        mixed = (a * L.tensor(real) + (1 - a) * L.tensor(fake)).requires_grad_(True)
        d = net(mixed)
        (g,) = L.autograd.grad(d, mixed, L.ones_like(d), create_graph=True, retain_graph=True)
        penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
        (d.mean() + 10 * penalty).backward()
        return (values(penalty), g.requires_grad) + tuple(values(p.grad)
                                                         for p in net.parameters())
    compare(run)


# ----- autograd.grad's arguments ---------------------------------------------------------
GRAD_ERRORS = {
    "input_not_a_tensor": lambda L, x: L.autograd.grad((x * 2).sum(), [x, 3]),
    "complex_grad_output": lambda L, x: L.autograd.grad(x * 2, x, L.ones(3, dtype=L.complex64)),
    "complex_output_implicit": lambda L, x: L.autograd.grad((x * (1 + 0j)).sum(), x),
    "complex_backward_implicit": lambda L, x: (x * (1 + 0j)).sum().backward(),
    "number_grad_outputs": lambda L, x: L.autograd.grad((x * 2).sum(), x, 2.0),
    "number_backward_gradient": lambda L, x: (x * 2).sum().backward(2.0),
    "number_in_grad_tensors": lambda L, x: L.autograd.backward([(x * 2).sum()], [3]),
}


@pytest.mark.parametrize("case", sorted(GRAD_ERRORS))
def test_bad_arguments_of_grad_raise_torch_classes(case):
    compare(lambda L: GRAD_ERRORS[case](L, L.ones(3, dtype=L.float64, requires_grad=True)))


BATCHED = {
    "eye": lambda L, x, y: L.autograd.grad(y, x, L.eye(3, dtype=L.float64),
                                           is_grads_batched=True),
    "two_outputs": lambda L, x, y: L.autograd.grad(
        [y, y.sum()], [x], [L.ones(4, 3, dtype=L.float64), L.arange(4.0, dtype=L.float64)],
        is_grads_batched=True),
    "unused": lambda L, x, y: L.autograd.grad(
        y, [x, L.ones(2, requires_grad=True)], L.ones(2, 3, dtype=L.float64),
        is_grads_batched=True, allow_unused=True),
    "materialized": lambda L, x, y: L.autograd.grad(
        y, [x, L.ones(2, dtype=L.float64, requires_grad=True)],
        L.ones(2, 3, dtype=L.float64), is_grads_batched=True, materialize_grads=True),
    "create_graph": lambda L, x, y: (lambda g: (g, L.autograd.grad(g.sum(), x)))(
        L.autograd.grad(y, x, L.arange(6.0, dtype=L.float64).reshape(2, 3),
                        is_grads_batched=True, create_graph=True)[0]),
    "shape_mismatch": lambda L, x, y: L.autograd.grad(y, x, L.ones(2, 1),
                                                      is_grads_batched=True),
    "sizes_differ": lambda L, x, y: L.autograd.grad(
        [y, y.sum()], [x], [L.ones(4, 3), L.ones(5)], is_grads_batched=True),
    "none_grad_output": lambda L, x, y: L.autograd.grad(
        [y, y.sum()], [x], [L.ones(4, 3), None], is_grads_batched=True),
    "empty_batch": lambda L, x, y: L.autograd.grad(y, x, L.ones(0, 3), is_grads_batched=True),
}


@pytest.mark.parametrize("case", sorted(BATCHED))
def test_is_grads_batched_gives_each_index_gradient_as_torch(case):
    def run(L):
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
        result = BATCHED[case](L, x, x * x.sin())
        return tuple(values(t) for t in _leaves(result))
    compare(run)


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [tree]


def _structure(result):
    if isinstance(result, (tuple, list)):
        return type(result).__name__, [_structure(r) for r in result]
    return "Tensor"


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
@pytest.mark.parametrize("shape", ["one", "inputs", "outputs", "both", "one_in_tuple"])
def test_jacobian_containers_are_torch_s(shape, strategy):
    def run(L):
        x, y = L.ones(2, dtype=L.float64), L.full((2,), 2.0, dtype=L.float64)
        func, inputs = {"one": (lambda a: a * 2, x), "inputs": (lambda a, b: a * b, (x, y)),
                        "outputs": (lambda a: (a * 2, a.sum()), x),
                        "both": (lambda a, b: (a * b, a.exp()), (x, y)),
                        "one_in_tuple": (lambda a: a * 2, (x,))}[shape]
        result = L.autograd.functional.jacobian(func, inputs, vectorize=True,
                                                strategy=strategy)
        return _structure(result), tuple(values(t) for t in _leaves(result))
    compare(run)


# ----- hooks ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["prehook", "hook", "both", "none_returned"])
def test_node_hooks_run_under_create_graph_as_torch(kind):
    def run(L):
        x = L.tensor([0.5, 1.0, 2.0], dtype=L.float64, requires_grad=True)
        y = x.exp() * x
        if kind in ("prehook", "both"):
            y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        if kind in ("hook", "both"):
            y.grad_fn.register_hook(lambda gi, go: tuple(None if g is None else g * 3
                                                         for g in gi))
        if kind == "none_returned":
            y.grad_fn.register_hook(lambda gi, go: None)
        (g,) = L.autograd.grad(y.sum(), x, create_graph=True)
        return values(g), g.requires_grad, values(L.autograd.grad(g.sum(), x)[0])
    compare(run)


@pytest.mark.parametrize("returned", [5, "grad"])
def test_a_post_accumulate_hook_returning_a_value_is_a_runtime_error(returned):
    def run(L):
        w = L.ones(3, requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda p: 5 if returned == 5 else p.grad * 2)
        (w * 3).sum().backward()
    compare(run)


# ----- custom Functions ----------------------------------------------------------------
def _square(L, setup=False, once=False, rule=None, own_vmap=False):
    body = {}
    if setup:
        body["forward"] = staticmethod(lambda x: x * x)

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
        body["setup_context"] = staticmethod(setup_context)
    else:
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x
        body["forward"] = staticmethod(forward)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g
    if once:
        backward = L.autograd.function.once_differentiable(backward)
    body["backward"] = staticmethod(backward)
    if rule is not None:
        body["generate_vmap_rule"] = rule
    if own_vmap:
        body["vmap"] = staticmethod(lambda info, in_dims, x: (x * x, in_dims[0]))
    return type("Square", (L.autograd.Function,), body)


@pytest.mark.parametrize("grad_output", ["plain", "with_history"])
def test_once_differentiable_gradients_have_history_only_from_the_grad_outputs(grad_output):
    def run(L):
        x = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        v = L.ones(2, dtype=L.float64, requires_grad=grad_output == "with_history")
        (g,) = L.autograd.grad(_square(L, once=True).apply(x), x, v, create_graph=True)
        return values(g), g.requires_grad, outcome(lambda: g.sum().backward())[0]
    compare(run)


TRANSFORMS = {
    "grad": lambda L, f, x: L.func.grad(lambda t: f.apply(t).sum())(x),
    "vjp": lambda L, f, x: L.func.vjp(f.apply, x)[1](L.ones_like(x)),
    "jacrev": lambda L, f, x: L.func.jacrev(f.apply)(x),
    "vmap": lambda L, f, x: L.func.vmap(f.apply)(x.reshape(3, 1)),
    "vmap_grad": lambda L, f, x: L.func.vmap(L.func.grad(lambda t: f.apply(t).sum()))(
        x.reshape(3, 1)),
}


@pytest.mark.parametrize("form", ["ctx", "setup", "setup_rule", "setup_own_vmap",
                                  "setup_rule_and_vmap"])
@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_custom_functions_under_func_transforms_are_refused_as_torch(transform, form):
    def run(L):
        f = _square(L, setup=form != "ctx", rule=True if "rule" in form else None,
                    own_vmap="vmap" in form)
        x = L.tensor([0.5, 1.0, 2.0], dtype=L.float64)
        return tuple(values(t) for t in _leaves(TRANSFORMS[transform](L, f, x)))
    compare(run)


# ----- torch.func ----------------------------------------------------------------------
JVP = {
    "sin": (lambda L: lambda x: x.sin(), 1),
    "two_args": (lambda L: lambda x, y: (x * y, x + y), 2),
    "pytree_out": (lambda L: lambda x: (x.sum(), {"a": x * 2}), 1),
    "matmul": (lambda L: lambda x: x @ x, 1),
    "relu": (lambda L: lambda x: L.relu(x - 1), 1),
    "constant": (lambda L: lambda x: L.ones(2), 1),
    "integer": (lambda L: lambda x: x.argmax(), 1),
    "grad_inside": (lambda L: L.func.grad(lambda x: (x ** 3).sum()), 1),
}


@pytest.mark.parametrize("case", sorted(JVP))
def test_func_jvp_is_torch_s(case):
    def run(L):
        make, count = JVP[case]
        xs = tuple(L.tensor([0.5, 1.0, 2.0], dtype=L.float64) * (i + 1) for i in range(count))
        ts = tuple(L.tensor([1.0, -1.0, 0.5], dtype=L.float64) + i for i in range(count))
        return tuple(values(t) for t in _leaves(L.func.jvp(make(L), xs, ts)))
    compare(run)


JVP_ERRORS = {
    "primals_not_tuple": lambda L, x: L.func.jvp(lambda a: a, x, (x,)),
    "structure": lambda L, x: L.func.jvp(lambda a: a, (x,), (x, x)),
    "shape": lambda L, x: L.func.jvp(lambda a: a, (x,), (L.ones(2),)),
    "empty": lambda L, x: L.func.jvp(lambda: 1, (), ()),
    "number_output": lambda L, x: L.func.jvp(lambda a: 3.0, (x,), (x,)),
    "integer_primal": lambda L, x: L.func.jvp(lambda a: a, (L.arange(3),), (L.arange(3),)),
    "integer_tangent": lambda L, x: L.func.jvp(lambda a: a, (x,), (L.arange(3),)),
    "aux_missing": lambda L, x: L.func.jvp(lambda a: a * 2, (x,), (x,), has_aux=True),
    "aux": lambda L, x: L.func.jvp(lambda a: (a.sin(), a * 2), (x,), (x,), has_aux=True),
}


@pytest.mark.parametrize("case", sorted(JVP_ERRORS))
def test_func_jvp_checks_its_arguments_as_torch(case):
    def run(L):
        x = L.tensor([0.5, 1.0, 2.0], dtype=L.float64)
        return tuple(values(t) for t in _leaves(JVP_ERRORS[case](L, x)))
    compare(run)


NESTED = {
    "grad_grad": lambda L, x: L.func.grad(
        lambda y: L.func.grad(lambda a: (a * y).sin().sum())(x).sum())(x),
    "grad_vjp": lambda L, x: L.func.grad(
        lambda y: L.func.vjp(lambda a: (a * y).sin(), x)[1](L.ones_like(x))[0].sum())(x),
    "grad_jvp": lambda L, x: L.func.grad(
        lambda y: L.func.jvp(lambda a: (a * y).sin(), (x,), (x,))[1].sum())(x),
    "grad_grad_grad": lambda L, x: L.func.grad(lambda z: L.func.grad(
        lambda y: L.func.grad(lambda a: (a * y * z).sin().sum())(x).sum())(z))(x),
    "hessian": lambda L, x: L.func.hessian(lambda a: (a.sin() * a).sum())(x),
    "vmap_grad": lambda L, x: L.func.grad(lambda y: L.func.vmap(
        L.func.grad(lambda a: (a * y).sin().sum()))(x.reshape(3, 1)).sum())(x[:1]),
}


@pytest.mark.parametrize("case", sorted(NESTED))
def test_nested_transforms_return_results_without_history(case):
    def run(L):
        result = NESTED[case](L, L.tensor([0.5, 1.0, 2.0], dtype=L.float64))
        return values(result), result.requires_grad
    compare(run)


# ----- forward_ad --------------------------------------------------------------------------
FORWARD = {
    "sin": lambda L, x: x.sin(),
    "square_sum": lambda L, x: (x * x).sum(),
    "matmul": lambda L, x: x @ L.ones(3, 2, dtype=x.dtype),
    "softmax": lambda L, x: L.softmax(x, -1),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (3,)),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x),
    "constant_sum": lambda L, x: x * 0 + L.ones_like(x),
    "detached": lambda L, x: x.detach(),
    "integer": lambda L, x: x.argmax(),
    "itself": lambda L, x: x,
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", sorted(FORWARD))
def test_forward_ad_tangents_are_torch_s(case, dtype):
    def run(L):
        fw = L.autograd.forward_ad
        x = L.tensor(X, dtype=getattr(L, dtype))
        with fw.dual_level():
            dual = fw.make_dual(x, L.tensor([[1.0, 2.0, -1.0], [0.5, 0.5, 3.0]],
                                            dtype=getattr(L, dtype)))
            primal, tangent = fw.unpack_dual(FORWARD[case](L, dual))
        return values(primal), values(tangent)
    theirs, ours = outcome(lambda: run(torch)), outcome(lambda: run(mg))
    assert ours[0] == theirs[0] == "ok"
    for a, b in zip(theirs[1], ours[1]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-5 if dtype == "float32" else 1e-7,
                                       atol=1e-6)


FORWARD_ERRORS = {
    "no_level": lambda L, fw: fw.make_dual(L.ones(3), L.ones(3)),
    "nested": lambda L, fw: fw.dual_level().__enter__() and fw.dual_level().__enter__(),
    "shape": lambda L, fw: fw.make_dual(L.ones(3), L.ones(2)),
    "integer": lambda L, fw: fw.make_dual(L.arange(3), L.arange(3)),
    "twice": lambda L, fw: (lambda d: fw.make_dual(d, L.ones(3)))(
        fw.make_dual(L.ones(3), L.ones(3))),
    "unpack_number": lambda L, fw: fw.unpack_dual(3.0),
}


@pytest.mark.parametrize("case", sorted(FORWARD_ERRORS))
def test_forward_ad_errors_are_torch_s(case):
    def run(L):
        fw = L.autograd.forward_ad
        if case in ("no_level", "nested"):
            try:
                return FORWARD_ERRORS[case](L, fw)
            finally:
                while (fw._current_level >= 0) if L is torch else fw._levels:
                    fw.exit_dual_level()
        with fw.dual_level():
            return FORWARD_ERRORS[case](L, fw)
    compare(run)


def test_forward_ad_keeps_the_primal_s_backward_history():
    def run(L):
        fw = L.autograd.forward_ad
        w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        with fw.dual_level():
            y = (fw.make_dual(w, L.tensor([0.5, 0.5, 2.0], dtype=L.float64)) ** 2).sum()
            primal, tangent = fw.unpack_dual(y)
            flags = (primal.requires_grad, tangent.requires_grad)
            y.backward()
        outside = fw.unpack_dual(y).tangent
        return values(primal), values(tangent), flags, values(w.grad), outside is None
    compare(run)
