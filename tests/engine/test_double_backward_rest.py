"""Double (and third) backward through the nodes whose formulas sit beside them rather than in
ops/double_backward*.py: the writes through views (``WriteThroughView``, ``ViewOfBase``),
``binary_cross_entropy``, linear and nearest ``interpolate`` (``LinearResample``,
``NearestSelect`` and the gradient nodes they pair with), a module's full backward hooks
(``BackwardHookFunction``), ``scatter_reduce``/``index_reduce`` with "prod", the helper
nodes of eigvalsh's, svdvals' and as_strided's gradients (``_Again``, ``_StridedAdd``) and
the zero-derivative mark of masked gradients (``_DependsOn``): against PyTorch in float64,
each derivative of a random weighted sum of the previous one, and the first gradient under
``create_graph=True`` against the ordinary backward in float32."""

import numpy as np
import pytest
import torch

import microgradnorm as mg


def _tensor(lib, array, dtype="float64", requires_grad=False):
    make = torch.tensor if lib is torch else mg.tensor
    return make(array, dtype=getattr(lib, dtype), requires_grad=requires_grad)


def derivatives(lib, fn, arrays, order, seed=1):
    """[each input's first gradient, ..., each input's ``order``-th, as arrays]: the first
    of Σ v·fn(inputs), the k-th of Σ w·(the (k-1)-th)², every pass but the last with
    create_graph, v and the w drawn from ``seed`` (the same in both libraries)."""
    draw = np.random.default_rng(seed)
    leaves = [_tensor(lib, a, requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    total = (out * _tensor(lib, draw.standard_normal(tuple(out.shape)))).sum()
    results = []
    for k in range(order):
        grads = lib.autograd.grad(total, leaves, create_graph=k < order - 1,
                                  allow_unused=True, materialize_grads=True)
        results += [g.detach().numpy() for g in grads]
        total = sum((g * g * _tensor(lib, draw.standard_normal(tuple(g.shape)))).sum()
                    for g in grads)
    return results


def assert_matches_torch(fn, arrays, order=3, rtol=1e-10, atol=1e-12):
    ours, theirs = (derivatives(lib, fn, arrays, order) for lib in (mg, torch))
    for k, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"result {k}")


R = np.random.default_rng(0)
X34 = R.standard_normal((3, 4))


# ----- writes through views -------------------------------------------------------------
def _mul_slice(lib, x):
    y = x * x
    y[0:1].mul_(2)
    return y.sin()


def _set_column(lib, x, z):
    y = x * x
    y.t()[0] = z.exp()                 # (y[:, 0] = ... writes y itself: an index_put)
    return y * x


def _transposed_add(lib, x):
    y = x.sin()
    y.view(4, 3).t().add_((x * x).reshape(3, 4))
    return y * y


def _view_read_again(lib, x):
    # the view written, then read: its node is the base's again (ViewOfBase)
    y = x * 1
    v = y[1:3, ::2]
    v.add_(x[0:2, 1:3] ** 2)
    return v.sin().sum() * y[2:3].cos() + v.exp()[0:1, 0:1] * y


def _diagonal_write(lib, x):
    y = x.cos()
    y.diagonal().add_(x[0, :3] ** 3)
    return y * x


VIEWS = {
    "mul-slice": (_mul_slice, [X34]),
    "set-column": (_set_column, [X34, R.standard_normal(3)]),
    "view-t-add": (_transposed_add, [X34]),
    "view-read-again": (_view_read_again, [X34]),
    "diagonal-add": (_diagonal_write, [X34]),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_writes_through_views_match_torch_to_third_order(name):
    fn, arrays = VIEWS[name]
    assert_matches_torch(fn, arrays)


# ----- binary cross-entropy -------------------------------------------------------------
P34 = 1 / (1 + np.exp(-X34))
T34 = R.uniform(0.05, 0.95, (3, 4))


def _bce(reduction, weighted, target_grad):
    # (torch takes no gradient to the weight)
    def fn(lib, x, t, w):
        target = t.sigmoid() if target_grad else t.detach().sigmoid()
        return lib.nn.functional.binary_cross_entropy(
            x.sigmoid(), target, weight=(w * w).detach() if weighted else None,
            reduction=reduction).reshape(-1) ** 2        # (the node's gradient depends on x)
    return fn


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("target_grad", [False, True])
def test_binary_cross_entropy_matches_torchs_double_backward(reduction, weighted, target_grad):
    # torch's second derivative divides by (x + ε)² (1 - x + ε)², ε = 1e-12, where this
    # one's is the closed form's own (x (1 - x))²: the same to 1e-11 away from 0 and 1
    fn = _bce(reduction, weighted, target_grad)
    weights = np.random.default_rng(4).standard_normal(4)      # its own draw: any test order
    assert_matches_torch(fn, [X34, T34, weights], order=2, rtol=1e-9, atol=1e-10)


# ----- interpolate ----------------------------------------------------------------------
# each resampled value goes on through a nonlinear op: its gradient, the one the gradient
# node takes, depends on x too, so that node's own backward runs
INTERPOLATIONS = {
    "linear": (lambda lib, x: lib.nn.functional.interpolate(
        (x * x).reshape(1, 3, 4), size=7, mode="linear").sin(), [X34]),
    "linear-scale-corners": (lambda lib, x: lib.nn.functional.interpolate(
        x.exp().reshape(1, 3, 4), scale_factor=1.7, mode="linear", align_corners=True) ** 2,
        [X34]),
    "bilinear": (lambda lib, x: lib.nn.functional.interpolate(
        (x * x).reshape(1, 1, 3, 4), size=(5, 6), mode="bilinear").cos(), [X34]),
    "bilinear-down": (lambda lib, x: lib.nn.functional.interpolate(
        x.sin().reshape(1, 1, 3, 4), size=(2, 3), mode="bilinear", align_corners=True) ** 3,
        [X34]),
    # the scale's index differs from the shortcut torch's backward takes: NearestSelect
    "nearest-scale-2.2": (lambda lib, x: lib.nn.functional.interpolate(
        (x * x).reshape(1, 3, 4), scale_factor=2.2, mode="nearest").sin(), [X34]),
    "nearest-scale-1.2": (lambda lib, x: lib.nn.functional.interpolate(     # out == in
        (x * x).reshape(3, 1, 4), scale_factor=1.2, mode="nearest").exp(), [X34]),
    "nearest-3d": (lambda lib, x: lib.nn.functional.interpolate(
        (x * x).reshape(1, 1, 1, 3, 4), scale_factor=(1, 2.2, 2.2), mode="nearest") ** 3,
        [X34]),
}


@pytest.mark.parametrize("name", sorted(INTERPOLATIONS))
def test_interpolate_matches_torch_to_third_order(name):
    fn, arrays = INTERPOLATIONS[name]
    assert_matches_torch(fn, arrays)


# ----- full backward hooks --------------------------------------------------------------
def _hooked_run(lib):
    layer = lib.nn.Linear(4, 3).double()
    with lib.no_grad():
        layer.weight.copy_(_tensor(lib, X34 * 0.5))
        layer.bias.copy_(_tensor(lib, [0.1, -0.2, 0.3]))
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append((grad_input[0].requires_grad, grad_output[0].requires_grad))
        return (grad_input[0] * grad_input[0],)

    layer.register_full_backward_hook(hook)
    layer.register_full_backward_pre_hook(lambda module, grad_output: (grad_output[0] * 3,))
    x = _tensor(lib, X34[:2], requires_grad=True)
    (g,) = lib.autograd.grad(layer(x).tanh().sum(), x, create_graph=True)
    g.sin().sum().backward()
    return [g.detach().numpy(), x.grad.numpy(), layer.weight.grad.numpy(),
            layer.bias.grad.numpy()], seen


def test_full_backward_hooks_see_and_return_gradients_with_history_as_torchs():
    (ours, seen), (theirs, torch_seen) = _hooked_run(mg), _hooked_run(torch)
    assert seen == torch_seen == [(True, True), (False, False)]
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# ----- scatter_reduce and index_reduce with prod ----------------------------------------
_PLACES = np.array([0, 1, 0, 2, 1, 0])


def _with_zeros(x_zeros, src_zeros):
    rng = np.random.default_rng(5)
    x, src = rng.standard_normal(4), rng.standard_normal(6)
    x[list(x_zeros)], src[list(src_zeros)] = 0, 0
    return [x, src]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("x_zeros, src_zeros", [((), ()), ((0,), ()), ((), (1,)),
                                                 ((1, 3), (0, 3))])
def test_prod_scatter_reduce_matches_torch(include_self, x_zeros, src_zeros):
    def fn(lib, x, src):
        return x.scatter_reduce(0, lib.tensor(_PLACES), src, "prod", include_self=include_self)
    assert_matches_torch(fn, _with_zeros(x_zeros, src_zeros))


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")      # torch's
@pytest.mark.parametrize("include_self", [True, False])
def test_prod_index_reduce_matches_torch(include_self):
    def fn(lib, x, src):
        return x.index_reduce(0, lib.tensor([0, 2, 0]), src, "prod", include_self=include_self)
    rng = np.random.default_rng(6)
    x, src = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    src[0, 1] = 0
    assert_matches_torch(fn, [x, src])


def test_two_zeros_of_src_in_one_place_refuse_src_second_gradient_with_torchs_error():
    for lib in (mg, torch):
        x = _tensor(lib, [1.0, 2.0, 3.0, 4.0], requires_grad=True)
        src = _tensor(lib, [0.0, 2.0, 0.0, 3.0, 1.0, 5.0], requires_grad=True)
        out = x.scatter_reduce(0, lib.tensor(_PLACES), src, "prod")
        grad_x, grad_src = lib.autograd.grad((out * out).sum(), (x, src), create_graph=True)
        np.testing.assert_allclose(grad_src.detach().numpy(), [0, 16, 0, 54, 32, 0])
        with pytest.raises(RuntimeError, match="unsupported for src when >1 zeros"):
            grad_src.sum().backward()
        grad_x.sum().backward()                            # x's own goes through
        np.testing.assert_allclose(x.grad.numpy(), [0, 8, 18, 2])


# ----- the helper nodes: eigvalsh, svdvals, as_strided; masked gradients ----------------
HELPERS = {
    "eigvalsh": (lambda lib, a: lib.linalg.eigvalsh(a + a.mT), [R.standard_normal((3, 3))]),
    "svdvals-wide": (lambda lib, a: lib.linalg.svdvals(a), [X34]),
    "svdvals-tall-batched": (lambda lib, a: lib.linalg.svdvals(a.exp()),
                             [R.standard_normal((2, 4, 2))]),
    "as_strided-overlapping": (lambda lib, x: (x * x).as_strided((3, 3), (1, 1)).sin(),
                               [R.standard_normal(6)]),
    "as_strided-offset": (lambda lib, x: x.exp().as_strided((2, 2), (3, 2), 1) ** 3,
                          [R.standard_normal((3, 3))]),
    # relu's and clamp's gradients, masks of a constant v: _DependsOn's
    "relu-cubed": (lambda lib, x: (x * x * x).relu() + x.clamp(-0.5, 0.5), [X34]),
}


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_helper_nodes_give_third_derivatives_as_torch(name):
    fn, arrays = HELPERS[name]
    assert_matches_torch(fn, arrays)


@pytest.mark.parametrize("name", ["as_strided-overlapping", "linear", "mul-slice"])
def test_the_linear_pairs_differentiate_each_other_to_fourth_order(name):
    # the fourth pass goes back through each pair's other half (_StridedAdd transposed,
    # LinearResample again, ViewOfBase / WriteThroughView's put and take)
    fn, arrays = {**HELPERS, **INTERPOLATIONS, **VIEWS}[name]
    assert_matches_torch(fn, arrays, order=4, rtol=1e-9)


def test_a_once_differentiable_function_still_refuses_a_second_backward():
    class Square(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @mg.autograd.function.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = _tensor(mg, [1.0, 2.0], requires_grad=True)
    v = _tensor(mg, [1.0, 1.0], requires_grad=True)     # torch's error needs a grad with history
    (g,) = mg.autograd.grad(Square.apply(x), x, v, create_graph=True)
    with pytest.raises(RuntimeError, match="differentiate twice"):
        g.sum().backward()


# ----- the first gradient in float32 ----------------------------------------------------
FLOAT32 = {**VIEWS, **INTERPOLATIONS, **HELPERS,
           "bce": (_bce("mean", True, True), [X34, T34, R.standard_normal(4)])}


@pytest.mark.parametrize("name", sorted(FLOAT32))
def test_the_first_gradient_in_float32_is_the_ordinary_backwards(name):
    fn, arrays = FLOAT32[name]

    def first(create_graph):
        leaves = [_tensor(mg, a, "float32", requires_grad=True) for a in arrays]
        out = fn(mg, *leaves)
        v = _tensor(mg, np.random.default_rng(2).standard_normal(tuple(out.shape)), "float32")
        grads = mg.autograd.grad(out, leaves, v, create_graph=create_graph,
                                 allow_unused=True, materialize_grads=True)
        return [g.detach().numpy() for g in grads]
    for a, b in zip(first(True), first(False)):
        assert a.dtype == b.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_second_derivative_in_x_matches_torch(name):
    found = []
    for lib in (mg, torch):
        a = lib.tensor([0.5, 2.0, 3.5], dtype=lib.float64)
        x = lib.tensor([0.3, 1.5, 4.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(getattr(lib, name)(a, x).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        found.append((g.detach().numpy(), h.numpy()))
    for ours, theirs in zip(*found):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
