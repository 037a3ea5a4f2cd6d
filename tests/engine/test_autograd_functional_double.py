"""PyTorch's higher-order autograd API over ``create_graph=True``: ``autograd.functional``'s
``hessian``, ``hvp``, ``vhp``, ``jvp`` (the double-backward trick), and ``vjp`` /
``jacobian`` with ``create_graph``; ``gradgradcheck``; double backward through a custom
``autograd.Function`` (``once_differentiable`` included); the Bregman KL of an exponential
family. Each against torch in float64, and the second derivatives against finite
differences of the gradient."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import microgradnorm as mg
import microgradnorm.distributions as MD
from microgradnorm.autograd.function import once_differentiable

LIBS = (mg, torch)


def values(t):
    return None if t is None else np.asarray(t.detach().numpy(), dtype=np.float64)


def assert_same(ours, theirs, rtol=1e-10):
    """Equal nesting, shapes and (float64) values; a Tensor's history, too."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, rtol)
    elif theirs is None:
        assert ours is None
    else:
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.requires_grad == theirs.requires_grad
        np.testing.assert_allclose(values(ours), values(theirs), rtol=rtol, atol=1e-12)


def both(make):
    return make(mg), make(torch)


def leaves(lib, arrays, requires_grad=False):
    return tuple(lib.tensor(a, dtype=lib.float64, requires_grad=requires_grad) for a in arrays)


def flat(result):
    """The Tensors of a nested result, in order."""
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in flat(r)]
    return [result]


# scalar functions of one or two inputs: broadcasting, a matmul, a 0-d input
SCALAR = [
    (lambda x: (x ** 3).sum(), ((2, 3),)),
    (lambda x, y: ((x @ y).tanh() ** 2).sum() + (x.exp() * x).sum(), ((2, 3), (3,))),
    (lambda x, y: (x.sin() * y).sum() / (1 + (y * y).sum()), ((2, 3), (3,))),
    (lambda x: x * x * x.exp(), ((),)),
]
# functions with several outputs, for jvp and the Jacobian
VECTOR = [
    (lambda x: x.exp() * x, ((3,),)),
    (lambda x, y: (x * y, x.sum() * y.sigmoid()), ((2,), (2,))),
    (lambda x, y: (x @ y).sin(), ((2, 3), (3,))),
]


def draw(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("func, shapes", SCALAR)
def test_hessian_hvp_and_vhp_match_torch(func, shapes):
    arrays, directions = draw(shapes), draw(shapes, seed=1)
    single = len(shapes) == 1

    def run(lib):
        fun, inputs = lib.autograd.functional, leaves(lib, arrays)
        v = leaves(lib, directions)
        inputs, v = (inputs[0], v[0]) if single else (inputs, v)
        return fun.hessian(func, inputs), fun.hvp(func, inputs, v), fun.vhp(func, inputs, v)
    ours, theirs = both(run)
    assert_same(ours, theirs)
    hessian, (_, hvp), (_, vhp) = ours          # H·v = vᵀ·H here: H is symmetric
    for a, b in zip(flat(hvp), flat(vhp)):
        np.testing.assert_allclose(values(a), values(b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("func, shapes", SCALAR)
def test_create_graph_results_differentiate_again_as_torchs(func, shapes):
    # every result with create_graph=True has history back to the inputs: a random scalar
    # of them back-propagated (third derivatives for the Hessian) gives torch's .grad
    arrays, directions = draw(shapes), draw(shapes, seed=1)

    def run(lib):
        fun = lib.autograd.functional
        inputs, v = leaves(lib, arrays, requires_grad=True), leaves(lib, directions)
        results = (fun.hessian(func, inputs, create_graph=True),
                   fun.hvp(func, inputs, v, create_graph=True),
                   fun.vhp(func, inputs, v, create_graph=True),
                   fun.vjp(func, inputs, create_graph=True),
                   fun.jacobian(func, inputs, create_graph=True))
        rng = np.random.default_rng(2)
        total = sum((t * lib.tensor(rng.standard_normal(tuple(t.shape)))).sum()
                    for t in flat(results))
        total.backward()
        return results, [t.grad for t in inputs]
    assert_same(*both(run))


@pytest.mark.parametrize("func, shapes", VECTOR)
def test_jvp_by_the_double_backward_trick_and_jacobian_match_torch(func, shapes):
    arrays, directions = draw(shapes), draw(shapes, seed=1)

    def run(lib):
        fun = lib.autograd.functional
        inputs, v = leaves(lib, arrays, requires_grad=True), leaves(lib, directions)
        plain = fun.jvp(func, inputs, v), fun.jacobian(func, inputs)
        graph = fun.jvp(func, inputs, v, create_graph=True), \
            fun.jacobian(func, inputs, create_graph=True)
        sum(t.sum() for t in flat(graph)).backward()
        return plain, graph, [t.grad for t in inputs]
    assert_same(*both(run))


def test_a_single_element_input_takes_v_none_and_a_tuple_input_gives_tuples():
    def run(lib):
        fun, x = lib.autograd.functional, lib.tensor([0.7], dtype=lib.float64)
        cube = lambda t: (t ** 3).sum()           # noqa: E731
        pair = lambda a, b: (a * b.exp()).sum()   # noqa: E731
        two = (lib.tensor([1.0, 2.0], dtype=lib.float64), lib.tensor(0.5, dtype=lib.float64))
        return (fun.hvp(cube, x), fun.vhp(cube, x), fun.jvp(lambda t: t * 3, x),
                fun.hessian(pair, two), fun.hessian(cube, x))
    ours, theirs = both(run)
    assert_same(ours, theirs)
    assert isinstance(ours[3], tuple) and isinstance(ours[3][0], tuple)   # H[i][j]


def test_strict_mode_and_unused_inputs_as_torch():
    def run(lib):
        fun = lib.autograd.functional
        x, y = leaves(lib, draw(((2,), (2,))))
        linear = lambda a, b: (a * 2).sum()       # noqa: E731
        zeros = fun.hessian(linear, (x, y)), fun.hvp(linear, (x, y), (x, y))
        with pytest.raises(RuntimeError, match="jacobian of the user-provided function"):
            fun.hessian(linear, (x, y), strict=True)
        with pytest.raises(RuntimeError, match="independent of input 1"):
            fun.vhp(lambda a, b: (a ** 3).sum(), (x, y), (x, y), strict=True)
        with pytest.raises(RuntimeError, match="independent of input 1"):
            fun.vjp(lambda a, b: (a ** 3).sum(), (x, y), strict=True)
        return zeros
    assert_same(*both(run))


def test_the_errors_torch_raises():
    for lib in LIBS:
        fun = lib.autograd.functional
        x = lib.tensor([1.0, 2.0], dtype=lib.float64)
        for f in (fun.hessian, fun.hvp, fun.vhp):
            args = (x,) if f is fun.hessian else (x, x)
            with pytest.raises(RuntimeError, match="should contain a single element"):
                f(lambda t: t ** 3, *args)
            with pytest.raises(RuntimeError, match="should return a single Tensor"):
                f(lambda t: ((t ** 3).sum(),), *args)
        for f in (fun.hvp, fun.vhp, fun.jvp):
            with pytest.raises(RuntimeError, match="v can only be None"):
                f(lambda t: (t ** 3).sum(), x)
            with pytest.raises(RuntimeError, match="v has invalid size"):
                f(lambda t: (t ** 3).sum(), x, lib.ones(3, dtype=lib.float64))
        with pytest.raises(RuntimeError, match="v is a tuple of invalid length"):
            fun.hvp(lambda a, b: (a * b).sum(), (x, x), (x,))
        with pytest.raises(TypeError, match="must be either a Tensor or a tuple"):
            fun.hessian(lambda t: t.sum(), [x, 3.0])
        with pytest.raises(AssertionError, match="Expected strategy"):
            fun.hessian(lambda t: t.sum(), x, outer_jacobian_strategy="sideways")
        with pytest.raises(NotImplementedError, match="vectorize=True"):
            fun.hessian(lambda t: t.sum(), x, outer_jacobian_strategy="forward-mode")
        with pytest.raises(NotImplementedError, match="create_graph=True"):
            fun.jacobian(lambda t: t * 2, x, create_graph=True, strategy="forward-mode",
                         vectorize=True)
        with pytest.raises(RuntimeError, match="are not supported together"):
            fun.jacobian(lambda t: t * 2, x, strict=True, vectorize=True)


@settings(max_examples=8, deadline=None)
@given(st.data())
def test_the_hessian_is_the_finite_difference_jacobian_of_the_gradient(data):
    sides = data.draw(st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple))
    x = np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal(sides)

    def f(t):
        return (t.sin() * t.exp()).sum() + (t * t).sum().sqrt()

    def gradient(array):
        leaf = mg.tensor(array, requires_grad=True)
        return mg.autograd.grad(f(leaf), leaf)[0].numpy()

    eps, numerical = 1e-6, np.zeros(sides + sides)
    for index in np.ndindex(sides):
        step = np.zeros(sides)
        step[index] = eps
        numerical[(Ellipsis,) + index] = (gradient(x + step) - gradient(x - step)) / (2 * eps)
    hessian = mg.autograd.functional.hessian(f, mg.tensor(x))
    np.testing.assert_allclose(hessian.numpy(), numerical, rtol=1e-6, atol=1e-7)


# ----- gradgradcheck ------------------------------------------------------------------------
def cube_class(lib, wrong=False, once=False):
    """x³·eʸ, saving an input and its output; ``wrong``: a backward whose first derivative
    is right and whose own derivative by x is not (x read as a constant)."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = x ** 3 * y.exp()
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        def backward(ctx, g):
            x, out = ctx.saved_tensors
            base = x.detach() if wrong else x
            per_y = (g * out).reshape(-1, out.shape[-1]).sum(0)       # y broadcast over rows
            return g * 3 * base ** 2 * (out / x ** 3), per_y

    if once:
        decorate = once_differentiable if lib is mg else \
            torch.autograd.function.once_differentiable
        Cube.backward = staticmethod(decorate(Cube.backward))
    return Cube


def test_gradgradcheck_passes_the_formulas_and_catches_a_wrong_double_backward():
    rng = np.random.default_rng(4)
    for shape in ((3,), (2, 3)):
        x = mg.tensor(rng.standard_normal(shape), requires_grad=True)
        y = mg.tensor(rng.standard_normal(shape[-1:]), requires_grad=True)
        assert mg.gradgradcheck(lambda a, b: ((a @ b.reshape(-1, 1)).tanh(), a * b.sin()),
                                (x, y))
        assert mg.autograd.gradgradcheck(cube_class(mg).apply, (x, y))
    arrays = (np.abs(rng.standard_normal((2, 3))) + 0.5, rng.standard_normal(3))
    for lib in LIBS:
        x, y = leaves(lib, arrays, requires_grad=True)
        wrong = cube_class(lib, wrong=True).apply
        assert lib.autograd.gradcheck(wrong, (x, y))          # the first derivative is right
        assert lib.autograd.gradgradcheck(wrong, (x, y), raise_exception=False) is False
    x, y = leaves(mg, arrays, requires_grad=True)
    with pytest.raises(mg.GradcheckError, match="gradient of input 0"):
        mg.gradgradcheck(cube_class(mg, wrong=True).apply, (x, y))
    with pytest.raises(NotImplementedError, match="check_fwd_over_rev"):
        mg.autograd.gradgradcheck(cube_class(mg).apply, (x, y), check_fwd_over_rev=True)


# ----- custom Functions ---------------------------------------------------------------------
def test_a_custom_functions_backward_is_differentiated_as_torchs():
    # saved input and saved output both read with their history; a gradient penalty of it
    arrays = (np.abs(draw(((2, 3),))[0]) + 0.5, draw(((3,),), seed=1)[0])

    def run(lib):
        x, y = leaves(lib, arrays, requires_grad=True)
        out = cube_class(lib).apply(x.sin() + 1, y)
        gx, gy = lib.autograd.grad((out * out).sum(), (x, y), create_graph=True)
        ((gx * gx).sum() + gy.cos().sum()).backward()
        return gx, gy, x.grad, y.grad
    assert_same(*both(run))


def test_once_differentiable_gives_the_first_derivative_and_refuses_a_second():
    arrays = (np.abs(draw(((2, 3),))[0]) + 0.5, draw(((3,),), seed=1)[0])
    found = []
    for lib in LIBS:
        x, y = leaves(lib, arrays, requires_grad=True)
        out = cube_class(lib, once=True).apply(x, y)
        upstream = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)   # with history
        gx, gy = lib.autograd.grad(out, (x, y), upstream, create_graph=True)
        found.append((gx, gy))
        with pytest.raises(RuntimeError, match="differentiate twice a function that was "
                                               "marked with @once_differentiable"):
            gx.sum().backward()
    assert_same(*found)


# ----- distributions ------------------------------------------------------------------------
def test_the_bregman_kl_of_an_exponential_family_is_torchs_with_its_gradients():
    rng = np.random.default_rng(5)
    arrays = rng.standard_normal(3), rng.uniform(0.5, 2, 3), rng.standard_normal(3)

    def run(lib, dist):
        p_loc, p_scale, q_loc = leaves(lib, arrays, requires_grad=True)
        p, q = dist.Normal(p_loc, p_scale), dist.Normal(q_loc, p_scale.detach() * 2)
        kl = dist.kl._kl_expfamily_expfamily(p, q)
        kl.sum().backward()
        return kl, p_loc.grad, q_loc.grad, dist.kl_divergence(p, q)
    ours, theirs = run(mg, MD), run(torch, torch.distributions)
    assert_same(ours, theirs)
    assert ours[1] is None                    # p's parameters are detached copies, as torch's
    np.testing.assert_allclose(values(ours[0]), values(ours[3]), rtol=1e-10)  # closed form
