"""The engine: accumulation, requires_grad and no_grad, freed graphs and retain_graph, the
version counter, dtypes, multi-output Functions, ``mg.grad``, deep graphs, and the
checking tools (``gradcheck``, ``jacobian``, ``graph_stats``)."""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import dtypes, ops

BFLOAT16 = pytest.param(dtypes.bfloat16, id="bfloat16",
                        marks=pytest.mark.skipif(not dtypes.has_bfloat16(),
                                                 reason="bfloat16 needs ml_dtypes"))


def assert_close(actual, expected, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def leaf(values, dtype=np.float64):
    return mg.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ----- accumulation and requires_grad ---------------------------------------------------
def test_gradients_accumulate_across_backward_calls():
    x = leaf([1.0, -2.0, 3.0])
    (x * 2.0).sum().backward()                     # first graph: d/dx = 2
    (x * x).sum().backward()                       # second graph: d/dx = 2x
    assert_close(x.grad, 2.0 + 2.0 * np.array([1.0, -2.0, 3.0]))


def test_tensor_used_twice_gets_the_sum_of_its_gradients():
    values = np.array([0.5, -1.0, 2.0])
    x = leaf(values)
    (x * x + x).sum().backward()                   # x twice in one node, once in another
    assert_close(x.grad, 2 * values + 1)

    y = leaf(values)
    (y.exp() + y.tanh()).sum().backward()          # two branches joining again
    assert_close(y.grad, np.exp(values) + 1 - np.tanh(values) ** 2)


def test_only_inputs_that_require_grad_get_grad():
    x = leaf([1.0, 2.0])
    constant = mg.tensor([3.0, 4.0])
    (x * constant + constant).sum().backward()
    assert_close(x.grad, [3.0, 4.0])
    assert constant.grad is None


@pytest.mark.parametrize("op", [
    lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a @ b.T, lambda a, b: a.maximum(b),
    lambda a, b: ops.concatenate([a, b]),
])
@pytest.mark.parametrize("a_grad, b_grad", [(True, True), (True, False), (False, True),
                                            (False, False)])
def test_requires_grad_propagates_from_any_input(op, a_grad, b_grad):
    a = mg.tensor(randn(2, 3, seed=1), requires_grad=a_grad)
    b = mg.tensor(randn(2, 3, seed=2), requires_grad=b_grad)
    out = op(a, b)
    assert out.requires_grad == (a_grad or b_grad)
    assert (out.grad_fn is not None) == (a_grad or b_grad)
    assert out.is_leaf == (not (a_grad or b_grad))


def test_no_grad_records_nothing():
    x = leaf([1.0, 2.0])
    with mg.no_grad():
        assert not mg.is_grad_enabled()
        y = (x * 2.0).exp()
    assert y.grad_fn is None and not y.requires_grad
    assert mg.is_grad_enabled()
    with pytest.raises(RuntimeError):
        y.sum().backward()                         # nothing recorded to go back through


def test_no_grad_nests_and_restores_even_after_an_error():
    assert mg.is_grad_enabled()
    with mg.no_grad():
        with mg.no_grad():
            assert not mg.is_grad_enabled()
        assert not mg.is_grad_enabled()            # the inner exit keeps the outer state
    assert mg.is_grad_enabled()
    with pytest.raises(KeyError):
        with mg.no_grad():
            raise KeyError("boom")
    assert mg.is_grad_enabled()
    x = leaf([1.0])
    assert (x * 2.0).grad_fn is not None


def test_detach_cuts_the_graph_and_shares_data():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2.0
    d = y.detach()
    assert d.grad_fn is None and not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.data, y.data)
    (d * x).sum().backward()                       # no path back through d
    assert_close(x.grad, [2.0, 4.0, 6.0])


def test_non_leaf_grad_is_none_unless_retain_grad():
    x = leaf([1.0, 2.0])
    hidden = x * 3.0
    kept = x * 3.0
    kept.retain_grad()
    (hidden * hidden + kept * 2.0).sum().backward()
    with pytest.warns(UserWarning, match="retain_grad"):
        assert hidden.grad is None
    assert_close(kept.grad, [2.0, 2.0])
    assert_close(x.grad, 2 * 9.0 * np.array([1.0, 2.0]) + 6.0)


def test_backward_on_non_scalar_without_grad_raises_runtime_error():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError):
        (x * 2.0).backward()
    assert x.grad is None


def test_backward_with_grad_of_wrong_shape_raises_value_error():
    x = leaf([1.0, 2.0])
    with pytest.raises(ValueError, match=r"shape"):
        (x * 2.0).backward(np.ones(3))
    assert x.grad is None


def test_backward_accepts_a_tensor_grad_and_one_element_roots():
    x = leaf([[1.0, 2.0]])
    (x * 3.0).backward(mg.tensor([[1.0, -1.0]]))
    assert_close(x.grad, [[3.0, -3.0]])
    y = leaf([[2.0]])
    (y * y).backward()                             # shape (1, 1): grad may be omitted
    assert_close(y.grad, [[4.0]])


def _retained(t):
    t.retain_grad()
    return t


@pytest.mark.parametrize("make_root", [lambda x: x, lambda x: _retained(x * 2.0)],
                         ids=["leaf_root", "retained_root"])
def test_backward_grad_argument_takes_the_dtype_of_the_tensor(make_root):
    # "A gradient always has the dtype of its tensor", also where the root itself is
    # captured (a leaf root, or a root that retains its grad).
    x = leaf([1.0, 2.0])
    root = make_root(x)
    root.backward(np.ones(2, dtype=np.float32))
    assert root.grad.dtype == np.float64
    assert x.grad.dtype == np.float64


# ----- freed graphs and retain_graph ----------------------------------------------------
def test_second_backward_raises_without_retain_graph():
    x = leaf([1.0, 2.0])
    loss = (x * x).sum()                           # Mul saves its inputs
    loss.backward()
    grad_after_first = x.grad.clone()
    with pytest.raises(RuntimeError, match="retain_graph"):
        loss.backward()
    assert_close(x.grad, grad_after_first)


def test_second_backward_raises_also_through_nodes_that_saved_nothing():
    # Add and Sum keep no arrays for backward, but they read Exp's output, whose node saved
    # it: the graph is freed all the same. Over the leaf alone they run again, as torch's.
    x = leaf([1.0, 2.0])
    loss = (x.exp() + 1.0).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        loss.backward()
    assert_close(x.grad, np.exp([1.0, 2.0]))
    x.grad = None
    loss = (x + 1.0).sum()
    loss.backward()
    loss.backward()
    assert_close(x.grad, [2.0, 2.0])


def test_retain_graph_allows_a_second_backward_that_doubles_grad():
    values = np.array([1.0, -2.0])
    x = leaf(values)
    loss = (x * x).exp().sum()
    loss.backward(retain_graph=True)
    once = x.grad.clone()
    assert_close(once, 2 * values * np.exp(values ** 2))
    loss.backward()
    assert_close(x.grad, 2 * once)


def test_backward_frees_the_saved_arrays():
    x = leaf(randn(3, 4))
    loss = (x * x).sum()
    assert mg.graph_stats(loss).saved_bytes > 0
    loss.backward()
    assert mg.graph_stats(loss).saved_bytes == 0


# ----- the version counter --------------------------------------------------------------
def test_inplace_change_of_a_saved_constant_input_is_detected():
    x = leaf([1.0, 2.0])
    constant = mg.tensor(np.array([3.0, 4.0]))     # requires no grad: in-place is allowed
    loss = (x * constant).sum()                    # Mul saves constant
    constant.add_(1.0)
    with pytest.raises(RuntimeError, match="in place"):
        loss.backward()
    assert x.grad is None


def test_inplace_change_of_a_saved_leaf_under_no_grad_is_detected():
    x = leaf([1.0, 2.0])
    (x * 5.0).sum().backward()                     # x.grad = [5, 5] before the failure
    loss = (x * x).sum()
    with mg.no_grad():
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="in place"):
        loss.backward()
    assert_close(x.grad, [5.0, 5.0])


def test_inplace_change_of_a_saved_output_is_detected():
    x = leaf([0.5, 1.0])
    y = x.exp()                                    # Exp saves its own output
    loss = y.sum()
    with mg.no_grad():
        y.mul_(2.0)
    with pytest.raises(RuntimeError, match="in place"):
        loss.backward()
    assert x.grad is None


@pytest.mark.parametrize("keepdims", [True, False])
def test_inplace_change_of_a_max_output_is_detected(keepdims):
    # Max saves its output (torch.amax does too): changing it would move the argmax mask.
    x = leaf(randn(3, 4))
    y = x.amax(axis=1, keepdims=keepdims)
    loss = (y * 1.0).sum()
    with mg.no_grad():
        y.mul_(0.0)
    with pytest.raises(RuntimeError, match="in place"):
        loss.backward()
    assert x.grad is None


@pytest.mark.parametrize("make_view", [lambda c: c[:3], lambda c: c.reshape(3, 1)[:, 0],
                                       lambda c: c.T], ids=["slice", "reshape", "T"])
def test_inplace_change_of_the_base_of_a_saved_view_is_detected(make_view):
    # The view's data is the base's memory: an in-place op on the base changes what Mul
    # saved (PyTorch shares one version counter between a base and its views).
    x = leaf([1.0, 2.0, 3.0])
    base = mg.tensor(np.array([3.0, 4.0, 5.0]))
    loss = (x * make_view(base)).sum()
    base.add_(1.0)
    with pytest.raises(RuntimeError, match="in place"):
        loss.backward()
    assert x.grad is None


@pytest.mark.parametrize("inplace", [
    lambda t: t.add_(1.0), lambda t: t.sub_(1.0), lambda t: t.mul_(2.0),
    lambda t: t.div_(2.0), lambda t: t.fill_(0.0), lambda t: t.zero_(),
    lambda t: t.copy_(np.zeros(2)), lambda t: t.__setitem__(0, 7.0),
], ids=["add_", "sub_", "mul_", "div_", "fill_", "zero_", "copy_", "setitem"])
def test_inplace_op_on_tensor_requiring_grad_raises_outside_no_grad(inplace):
    x = leaf([1.0, 2.0])
    version = x._version
    with pytest.raises(RuntimeError, match="no_grad"):
        inplace(x)
    assert_close(x.data, [1.0, 2.0])
    assert x._version == version
    with mg.no_grad():
        inplace(x)                                 # allowed, as optimizers do
    assert x._version == version + 1


def test_augmented_assignment_on_tensor_requiring_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError):
        x += 1.0
    assert_close(x.data, [1.0, 2.0])


def test_detach_shares_the_version_counter():
    x = leaf([1.0, 2.0])
    loss = (x * x).sum()
    detached = x.detach()
    detached.add_(1.0)                             # allowed: detached requires no grad
    assert x._version == detached._version == 1
    assert_close(x.data, [2.0, 3.0])               # same memory
    with pytest.raises(RuntimeError, match="in place"):
        loss.backward()
    assert x.grad is None


def test_failing_backward_leaves_every_grad_untouched():
    a, b = leaf([1.0, 2.0]), leaf([0.5, -0.5])
    constant = mg.tensor(np.array([2.0, 3.0]))
    (a * 1.0 + b * 1.0).sum().backward()           # both grads = [1, 1]
    # b's branch needs nothing modified; a's branch saved `constant`.
    loss = (b.exp() * 2.0).sum() + (a * constant).sum() + (b * b).sum()
    constant.add_(1.0)
    with pytest.raises(RuntimeError, match="in place"):
        loss.backward()
    assert_close(a.grad, [1.0, 1.0])
    assert_close(b.grad, [1.0, 1.0])


def test_tensor_copies_its_data_like_torch_tensor():
    array = np.array([1.0, 2.0])
    x = mg.tensor(array, requires_grad=True)
    with mg.no_grad():
        x.add_(1.0)                                # what an optimizer step does
    assert_close(array, [1.0, 2.0])
    assert_close(mg.Tensor(x).data, [2.0, 3.0])
    assert np.shares_memory(mg.Tensor(x).data, x.data)     # torch's legacy alias


# ----- dtypes ---------------------------------------------------------------------------
def test_integer_and_python_number_dtypes():
    assert mg.tensor([1, 2, 3]).dtype == np.int64
    assert mg.tensor([1.0, 2.0]).dtype == np.float32          # the default, as torch
    assert mg.tensor(1.5).dtype == np.float32
    assert mg.tensor(np.array([1.0, 2.0])).dtype == np.float64  # NumPy's dtype kept
    assert mg.tensor([[1, 2]], dtype=np.float32).dtype == np.float32
    with pytest.raises(TypeError):
        mg.tensor([1, 2, 3], requires_grad=True)
    with pytest.raises(TypeError):
        mg.tensor([1, 2, 3]).requires_grad_()


def test_integer_tensor_is_a_constant_in_ops():
    x = leaf([0.5, 1.5, 2.5])
    ids = mg.tensor([1, 2, 3])
    (x * ids).sum().backward()
    assert_close(x.grad, [1.0, 2.0, 3.0])
    assert ids.grad is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BFLOAT16])
def test_dtype_is_preserved_through_ops_and_grads_have_it(dtype):
    x = leaf(np.linspace(0.5, 1.5, 6).reshape(2, 3), dtype=dtype)
    w = leaf(np.linspace(-1.0, 1.0, 12).reshape(3, 4), dtype=dtype)
    steps = [x * 2.0 + 1, (x / 3).exp(), x.tanh(), x.sqrt(), x.log(), x.relu(), x ** 2,
             x - 0.5, -x, x.maximum(1.0), x @ w, x.reshape(3, 2), x.T, x[0], x.expand(2, 2, 3),
             x.sum(axis=0), x.mean(), x.max(axis=1).values, ops.stack([x, x])]
    for i, out in enumerate(steps):
        assert out.dtype == dtype, f"step {i}: {out.dtype}"
    loss = steps[0].sum()
    for out in steps[1:]:
        loss = loss + out.sum()
    assert loss.dtype == dtype
    loss.backward()
    assert x.grad.dtype == dtype and w.grad.dtype == dtype


# ----- multi-output Functions -----------------------------------------------------------
class SplitRows(mg.Function):
    """x (n, d) -> (x[:k], x[k:]): two outputs from one node."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x[:k].copy(), x[k:].copy()

    @staticmethod
    def backward(ctx, grad_top, grad_bottom):
        return np.concatenate([grad_top, grad_bottom], axis=0)


@pytest.mark.parametrize("used", ["top", "bottom", "both"])
def test_multi_output_function_fills_unused_outputs_with_zero(used):
    x = leaf(randn(4, 3))
    top, bottom = SplitRows.apply(x, k=1)
    assert top.grad_fn is bottom.grad_fn
    loss = {"top": lambda: (top * 2.0).sum(), "bottom": lambda: (bottom * 3.0).sum(),
            "both": lambda: (top * 2.0).sum() + (bottom * 3.0).sum()}[used]()
    loss.backward()
    expected = np.zeros((4, 3))
    if used in ("top", "both"):
        expected[:1] = 2.0
    if used in ("bottom", "both"):
        expected[1:] = 3.0
    assert_close(x.grad, expected)


@pytest.mark.parametrize("impl", ["fused", "composite"])
@pytest.mark.parametrize("used", ["normed", "residual", "both"])
def test_add_layer_norm_backpropagates_through_either_or_both_outputs(impl, used):
    torch = pytest.importorskip("torch")
    x_np, r_np, w_np, b_np = randn(3, 4, seed=1), randn(3, 4, seed=2), randn(4, seed=3), \
        randn(4, seed=4)
    g_y, g_s = randn(3, 4, seed=5), randn(3, 4, seed=6)
    x, r, w, b = leaf(x_np), leaf(r_np), leaf(w_np), leaf(b_np)
    y, s = F.add_layer_norm(x, r, 4, w, b, eps=1e-5, impl=impl)
    tx, tr, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x_np, r_np, w_np, b_np))
    ts = tx + tr
    ty = torch.nn.functional.layer_norm(ts, (4,), tw, tb, eps=1e-5)
    assert_close(y.data, ty.detach().numpy(), rtol=1e-9, atol=1e-10)
    assert_close(s.data, ts.detach().numpy())

    def project(out, tout, g):
        return (out * g).sum(), (tout * torch.from_numpy(g)).sum()

    parts = {"normed": [project(y, ty, g_y)], "residual": [project(s, ts, g_s)]}
    parts["both"] = parts["normed"] + parts["residual"]
    loss, tloss = parts[used][0]
    for extra, textra in parts[used][1:]:
        loss, tloss = loss + extra, tloss + textra
    loss.backward()
    tloss.backward()
    for mine, theirs in [(x, tx), (r, tr)]:
        assert_close(mine.grad, theirs.grad.numpy(), rtol=1e-9, atol=1e-10)
    for mine, theirs in [(w, tw), (b, tb)]:
        if used == "residual":
            assert mine.grad is None or np.all(mine.grad == 0)
        else:
            assert_close(mine.grad, theirs.grad.numpy(), rtol=1e-9, atol=1e-10)


# ----- mg.grad --------------------------------------------------------------------------
def test_grad_returns_gradients_without_touching_dot_grad():
    values = np.array([0.5, -1.0, 2.0])
    x, w = leaf(values), leaf([2.0, 3.0, 4.0])
    w.grad = mg.tensor([9.0, 9.0, 9.0], dtype=w.dtype)   # an earlier gradient stays as it was
    out = (x * w).exp().sum()
    gx, gw = mg.grad(out, [x, w])
    expected = np.exp(values * np.array([2.0, 3.0, 4.0]))
    assert_close(gx, expected * np.array([2.0, 3.0, 4.0]))
    assert_close(gw, expected * values)
    assert x.grad is None
    assert_close(w.grad, [9.0, 9.0, 9.0])


def test_grad_with_grad_outputs_for_several_outputs():
    x = leaf([1.0, 2.0])
    unused = leaf([5.0])
    hidden = x * 3.0
    first, second = hidden * hidden, hidden + 1.0
    upstream = [np.array([1.0, 2.0]), np.array([10.0, 20.0])]
    (g_hidden, g_x, g_unused) = mg.grad([first, second], [hidden, x, unused], upstream,
                                        allow_unused=True)
    h = np.array([3.0, 6.0])
    assert_close(g_hidden, 2 * h * [1.0, 2.0] + [10.0, 20.0])
    assert_close(g_x, 3.0 * g_hidden)
    assert g_unused is None
    assert x.grad is None and hidden._grad is None


def test_grad_of_non_scalar_output_needs_grad_outputs():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError):
        mg.grad(x * 2.0, x)
    with pytest.raises(RuntimeError, match=r"^grad\(\): grad_outputs\[0\] can be omitted"):
        mg.grad(x * 2.0, x)                    # the message names grad(), not backward()


def test_grad_needs_one_grad_output_per_output():
    x = leaf([1.0, 2.0])
    first, second = x * 2.0, x * 3.0
    with pytest.raises(ValueError, match="2 outputs but 1 grad_outputs"):
        mg.grad([first, second], [x], grad_outputs=[np.ones(2)])   # was: second dropped
    (g,) = mg.grad([first, second], [x], grad_outputs=[np.ones(2), np.ones(2)])
    assert_close(g, [5.0, 5.0])


# ----- deep graphs ----------------------------------------------------------------------
def test_deep_chain_of_5000_ops_backpropagates():
    x = leaf([1.0, -0.5])
    y = x
    for i in range(5000):
        y = y * 1.0001 if i % 2 == 0 else y + 0.5
    y.sum().backward()                             # no RecursionError
    assert_close(x.grad, np.full(2, 1.0001 ** 2500), rtol=1e-9)
    stats = mg.graph_stats(y)
    assert stats.by_op == {"Mul": 2500, "Add": 2500}


# ----- gradcheck ------------------------------------------------------------------------
class Cube(mg.Function):
    """x ** 3, the way users extend the engine: forward and backward on plain arrays."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return grad * 3 * x * x


def test_custom_cube_function_passes_gradcheck_and_matches_the_formula():
    values = randn(3, 4)
    x = leaf(values)
    y = Cube.apply(x)
    assert y.grad_fn is not None and y.grad_fn.name == "Cube"
    assert_close(y.data, values ** 3)
    (y * 2.0).sum().backward()
    assert_close(x.grad, 6 * values ** 2)
    assert mg.graph_stats(Cube.apply(x)).by_op == {"Cube": 1}
    assert mg.gradcheck(Cube.apply, leaf(values))
    assert mg.gradcheck(lambda t: Cube.apply(t.tanh()).sum(), leaf(values))


class LoggedSub(ops.Sub):
    """A subclass of a library op, as users extend one: it must keep the op's gradient."""


def test_a_subclass_of_sub_keeps_the_sign_of_its_gradient():
    # Add.backward once told Sub apart by identity, so a subclass got +grad for b
    a, b = leaf([1.0, 2.0]), leaf([3.0, 5.0])
    LoggedSub.apply(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [-1.0, -1.0]
    assert mg.gradcheck(LoggedSub.apply, [leaf([1.0, 2.0]), leaf([3.0, 5.0])])


class WrongAtOneElement(mg.Function):
    """a * b with a backward that is wrong for a at element (1, 2) only."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        grad_a = grad * b
        grad_a[1, 2] += 1.0
        return grad_a, grad * a


def test_gradcheck_returns_true_for_a_correct_op():
    a, b = leaf(randn(2, 3, seed=1)), leaf(randn(3, seed=2))
    assert mg.gradcheck(lambda x, y: (x * y).tanh(), [a, b]) is True


def test_gradcheck_names_the_input_and_the_element_of_a_wrong_backward():
    a, b = leaf(randn(2, 3, seed=1)), leaf(randn(2, 3, seed=2))
    with pytest.raises(mg.GradcheckError) as caught:
        mg.gradcheck(WrongAtOneElement.apply, [a, b])
    assert isinstance(caught.value, AssertionError)
    message = str(caught.value)
    assert "input 0" in message and "(1, 2)" in message
    # The same wrong gradient as the second input: reported as input 1.
    with pytest.raises(mg.GradcheckError, match=r"input 1.*\(1, 2\)"):
        mg.gradcheck(lambda x, y: WrongAtOneElement.apply(y, x), [b, a])


def test_gradcheck_warns_on_float32_inputs_as_torch():
    x = leaf(randn(2, 2), dtype=np.float32)
    with pytest.warns(UserWarning, match="input 0 requires grad and is torch.float32"):
        assert mg.gradcheck(lambda t: t * 2.0, x, eps=1e-2, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("fn", [lambda t, u: (t * u).sum(), WrongAtOneElement.apply],
                         ids=["passing", "failing"])
def test_gradcheck_leaves_inputs_data_and_grad_unchanged(fn):
    values = randn(2, 3)
    x, y = leaf(values), leaf(values + 1.0)
    x.grad = mg.full((2, 3), 7.0, dtype=x.dtype)
    try:
        mg.gradcheck(fn, [x, y])
    except mg.GradcheckError:
        pass
    assert_close(x.data, values, rtol=0, atol=0)
    assert_close(x.grad, np.full((2, 3), 7.0), rtol=0, atol=0)
    assert y.grad is None


# ----- jacobian -------------------------------------------------------------------------
def test_jacobian_of_a_linear_map_is_its_matrix_transposed():
    a = randn(3, 4, seed=1)
    x = leaf(randn(3, seed=2))
    jac = mg.jacobian(lambda t: t @ a, x)
    assert jac.shape == (4, 3)
    assert_close(jac, a.T)
    assert x.grad is None


def test_jacobian_shape_is_output_shape_then_input_shape():
    a = randn(3, 4, seed=1)
    x = leaf(randn(2, 3, seed=2))
    x.grad = mg.ones((2, 3), dtype=x.dtype)
    jac = mg.jacobian(lambda t: t @ a, x)
    assert jac.shape == (2, 4, 2, 3)
    # out[i, j] = sum_k x[i, k] a[k, j]  =>  d out[i, j] / d x[p, k] = [i == p] a[k, j]
    assert_close(jac, np.einsum("ip,kj->ijpk", np.eye(2), a))
    assert_close(x.grad, np.ones((2, 3)), rtol=0, atol=0)


# ----- graph_stats ----------------------------------------------------------------------
def test_graph_stats_counts_nodes_by_op_and_saved_bytes():
    a, b = leaf(randn(3, 4, seed=1)), leaf(randn(4, seed=2))
    out = ((a * b) + a).sum()                      # Mul saves a and b; Add and Sum nothing
    stats = mg.graph_stats(out)
    assert stats.nodes == 3
    assert stats.by_op == {"Mul": 1, "Add": 1, "Sum": 1}
    assert stats.saved_bytes == a.numpy(force=True).nbytes + b.numpy(force=True).nbytes


def test_graph_stats_counts_a_buffer_saved_twice_once():
    a, b, c = leaf(randn(3, 4, seed=1)), leaf(randn(4, seed=2)), leaf(randn(3, 1, seed=3))
    out = (a * b) + (a * c)                        # both Muls save a
    stats = mg.graph_stats(out)
    assert stats.by_op == {"Mul": 2, "Add": 1}
    assert stats.saved_bytes == sum(t.numpy(force=True).nbytes for t in (a, b, c))


def test_graph_stats_counts_views_of_one_buffer_once():
    a = leaf(randn(3, 4, seed=1))
    buffer = mg.tensor(randn(2, 3, 4, seed=2))
    out = a * buffer[0]               # Mul saves what a's gradient reads: a view into buffer
    # A view keeps its whole base alive, so the base's bytes are what count.
    assert mg.graph_stats(out).saved_bytes == buffer.numpy(force=True).nbytes
    square = a * a[0:1]                                       # a and a view into a
    assert mg.graph_stats(square).saved_bytes == a.numpy(force=True).nbytes


def test_graph_stats_of_several_outputs_counts_shared_nodes_once():
    x = leaf(randn(2, 3))
    h = x * x
    first, second = h.sum(), h.mean()
    stats = mg.graph_stats(first, second)
    assert stats.nodes == 3 and stats.by_op == {"Mul": 1, "Sum": 1, "Mean": 1}
    assert stats.saved_bytes == x.numpy(force=True).nbytes


def test_gradcheck_accepts_an_input_the_output_does_not_depend_on():
    x = mg.tensor(np.random.default_rng(0).standard_normal(3), requires_grad=True)
    unused = mg.tensor(np.ones(2), requires_grad=True)
    assert mg.gradcheck(lambda a, b: (a * a).sum(), (x, unused))


def test_a_scalar_leaf_broadcast_against_a_matrix_gets_an_array_gradient():
    x = mg.tensor(2.0, requires_grad=True)
    (x * mg.tensor(np.ones((3, 4)))).sum().backward()
    assert isinstance(x.grad, mg.Tensor) and x.grad.shape == () and x.grad.item() == 12.0


def test_gradients_summed_from_many_consumers_are_right_and_never_aliased():
    # h feeds five uses: h + h (one node returning the same array for both inputs), h * 2,
    # h itself summed, and a retained h2 = h * h; the engine adds the third and later
    # gradients of h in place into the sum it made for the first two.
    x = mg.tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    h = x * 3.0
    h.retain_grad()
    h2 = h * h
    h2.retain_grad()
    loss = ((h + h) + h * 2.0 + h + h2).sum()
    loss.backward()
    hv = 3.0 * x.data
    np.testing.assert_allclose(h.grad, 2 + 2 + 1 + 2 * hv)
    np.testing.assert_allclose(x.grad, 3 * (5 + 2 * hv))
    np.testing.assert_allclose(h2.grad, np.ones(3))
    before = x.grad.clone()
    h.grad += 100.0                               # the gradients share no memory
    np.testing.assert_array_equal(x.grad, before)
    np.testing.assert_allclose(h2.grad, np.ones(3))


def test_a_sum_passed_on_to_two_inputs_is_not_added_into_later():
    # a = h + k is used three times, so its gradient is a sum the engine made; Add's
    # backward hands that one array to h and to k, and k keeps it as its .grad. h then
    # gets k's backward too: adding that to h's gradient must not change k.grad.
    x = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    h = x * 3.0
    k = h * 4.0
    k.retain_grad()
    a = h + k
    (a + a * 2.0 + a).sum().backward()
    np.testing.assert_allclose(k.grad, [4.0, 4.0])
    np.testing.assert_allclose(x.grad, [3 * (4 + 4 * 4)] * 2)
