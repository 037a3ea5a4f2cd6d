"""What a PyTorch user types in the first hour works, or fails with a message that says
what to do instead (docs/tutorial.md, "Differences from PyTorch")."""

import operator
import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn, optim


def leaf(shape=(2, 3, 4), seed=0):
    data = np.random.default_rng(seed).standard_normal(shape)
    return mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)


# ----- dim= / keepdim= ----------------------------------------------------------------------
@pytest.mark.parametrize("method", ["sum", "mean", "amax"])
@pytest.mark.parametrize("dim, keepdim", [(1, False), (-1, True), ((0, 2), True)])
def test_reductions_take_dim_and_keepdim(method, dim, keepdim):
    x, tx = leaf()
    mine = getattr(x, method)(dim=dim, keepdim=keepdim)
    theirs = getattr(tx, method)(dim=dim, keepdim=keepdim)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    mine.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-12)


def test_var_takes_dim_keepdim_and_correction():
    x, tx = leaf()
    mine = x.var(dim=1, keepdim=True, correction=1)
    np.testing.assert_allclose(mine.detach().numpy(),
                               tx.var(dim=1, keepdim=True).detach().numpy())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_std_of_a_constant_slice_has_zero_gradient_as_torch(dtype):
    # torch's std backward is 0 where std is 0; sqrt's grad / (2·0) · 0 would be NaN
    data = np.array([[1.0, 1.0, 1.0], [0.5, 2.0, -1.0]], dtype=dtype)
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    mine, theirs = x.std(dim=1), tx.std(dim=1)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)
    mine.sum().backward()
    theirs.sum().backward()
    assert not np.isnan(x.grad).any() and x.grad.dtype == dtype
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_pow_0_has_zero_gradient_at_0_as_torch():
    data = np.array([0.0, -0.0, 2.0])
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    (x ** 0).sum().backward()
    (tx ** 0).sum().backward()
    np.testing.assert_array_equal(x.grad, tx.grad.numpy())


def test_abs_gradient_at_a_masked_nan_is_0_as_torch():
    # torch's abs backward is grad · sign(x) with sign(NaN) = 0: a NaN that where() drops
    # must not turn its gradient NaN (0 · NaN)
    data, keep = np.array([np.nan, -2.0, 0.0, 3.0]), np.array([False, True, True, True])
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    mg.where(mg.tensor(keep), x.abs(), 0.0).sum().backward()
    torch.where(torch.tensor(keep), tx.abs(), 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad, tx.grad.numpy())


@pytest.mark.parametrize("bound", [0.1, "0-d float32"])
def test_clamp_half_at_its_rounded_bound_passes_the_gradient_as_torch(bound):
    # float16(0.1) is clamped to float16(0.1): inside [min, max], so its gradient is 1
    data = np.array([0.1, 0.5, 0.05], dtype=np.float16)
    low, tlow = (0.1, 0.1) if bound == 0.1 else (mg.tensor(np.float32(0.1)), torch.tensor(0.1))
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    x.clamp(low, 0.5).sum().backward()
    tx.clamp(tlow, 0.5).sum().backward()
    np.testing.assert_array_equal(x.grad, tx.grad.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", [operator.mul, operator.add, operator.sub, operator.truediv,
                                operator.eq, operator.lt])
def test_a_0d_half_tensor_with_a_python_number_stays_half_as_torch(dtype, op):
    # a 0-d loss times a scale: the number must not widen the 0-d tensor to float32
    mine = op(mg.tensor(0.1, dtype=dtype), 0.1)
    theirs = op(torch.tensor(0.1, dtype=getattr(torch, dtype)), 0.1)
    assert str(mine.dtype) == str(theirs.dtype)
    assert float(mine.item()) == float(theirs.item())
    reverse = op(0.5, mg.tensor(3.0, dtype=dtype))
    assert str(reverse.dtype) == str(op(0.5, torch.tensor(3.0, dtype=getattr(torch, dtype))).dtype)


@pytest.mark.parametrize("fn, torch_fn", [(F.softmax, torch.softmax),
                                          (F.log_softmax, torch.log_softmax)])
def test_softmax_and_log_softmax_take_dim(fn, torch_fn):
    x, tx = leaf()
    np.testing.assert_allclose(fn(x, dim=1).detach().numpy(),
                               torch_fn(tx, dim=1).detach().numpy(),
                               rtol=1e-12)


SOFTMAX_FORMS = {
    "torch.softmax": lambda lib, x: lib.softmax(x, 1),
    "x.softmax": lambda lib, x: x.softmax(-1),
    "dim=": lambda lib, x: x.softmax(dim=0),
    "dtype positional": lambda lib, x: lib.softmax(x.float(), 1, lib.float64),
    "dtype=": lambda lib, x: x.log_softmax(1, dtype=lib.float32),
    "torch.log_softmax": lambda lib, x: lib.log_softmax(x, 2),
    "special.softmax": lambda lib, x: lib.special.softmax(x, 1),
    "special.log_softmax": lambda lib, x: lib.special.log_softmax(x, -1),
    "F.softmax positional": lambda lib, x: lib.nn.functional.softmax(x.float(), 1, 3, lib.float64),
}


@pytest.mark.parametrize("form", SOFTMAX_FORMS)
def test_torch_softmax_and_the_methods_are_one_node_as_torchs(form):
    """``torch.softmax(x, d)`` and ``x.softmax(d)``, not only ``F.softmax``: one
    SoftmaxBackward0 (LogSoftmaxBackward0) node, torch's values, dtype and gradient; under
    ``mg.norm_impl("composite")`` the graph of primitives, with the same values."""
    x, tx = leaf()
    mine, theirs = SOFTMAX_FORMS[form](mg, x), SOFTMAX_FORMS[form](torch, tx)
    assert mine.grad_fn.name() == theirs.grad_fn.name()
    assert str(mine.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)
    weights = np.random.default_rng(1).standard_normal(tuple(theirs.shape))
    (grad,) = mg.autograd.grad((mine * mg.tensor(weights).to(mine.dtype)).sum(), x)
    (tgrad,) = torch.autograd.grad((theirs * torch.tensor(weights).to(theirs.dtype)).sum(), tx)
    np.testing.assert_allclose(grad.numpy(), tgrad.numpy(), rtol=1e-5, atol=1e-7)
    with mg.norm_impl("composite"):
        composite = SOFTMAX_FORMS[form](mg, x)
    assert composite.grad_fn.name() != mine.grad_fn.name()
    np.testing.assert_allclose(composite.detach().numpy(), mine.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", [lambda lib, x: lib.softmax(x), lambda lib, x: x.softmax(),
                                  lambda lib, x: x.log_softmax(None),
                                  lambda lib, x: lib.log_softmax(x)])
def test_torch_softmax_needs_its_dim(call):
    # F.softmax(x) takes torch's legacy implicit dim; torch.softmax and the methods do not
    x, tx = leaf()
    with pytest.raises(TypeError):
        call(torch, tx)
    with pytest.raises(TypeError, match="dim"):
        call(mg, x)


def test_shape_functions_take_dim():
    x, _ = leaf((2, 1, 3))
    assert mg.stack([x, x], dim=1).shape == (2, 2, 1, 3)
    assert mg.concatenate([x, x], dim=2).shape == (2, 1, 6)
    assert x.unsqueeze(dim=0).shape == (1, 2, 1, 3)
    assert x.squeeze(dim=1).shape == (2, 3)
    assert x.squeeze().shape == (2, 3)                  # every size-1 dim, as torch


@pytest.mark.parametrize("shape, dims", [((2, 3), (1, 1)), ((5,), ()), ((2, 3), (0, 0)),
                                         ((2, 3, 4), (1,)), ((2, 0, 4), (1,)), ((), ())])
def test_flatten_returns_the_tensor_itself_where_torch_does(shape, dims):
    # no dims merged (one dim, or start == end): torch returns the input object
    data = np.ones(shape)
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    mine, theirs = x.flatten(*dims), tx.flatten(*dims)
    assert (mine is x) == (theirs is tx)
    assert mine.shape == tuple(theirs.shape)


def test_unsqueeze_checks_its_axis():
    x, _ = leaf((2, 3))
    with pytest.raises(TypeError, match="unsqueeze: axis must be an int, got 1.5"):
        x.unsqueeze(1.5)                              # was a bare slice-index TypeError
    with pytest.raises(ValueError, match=r"unsqueeze: axis 4 .* \(expected -3 <= axis < 3\)"):
        x.unsqueeze(4)
    assert x.unsqueeze(-3).shape == (1, 2, 3) and x.unsqueeze(2).shape == (2, 3, 1)


def test_axis_and_dim_together_is_a_type_error():
    x, _ = leaf()
    with pytest.raises(TypeError, match="both axis=1 and dim=2"):
        x.sum(1, dim=2)
    with pytest.raises(TypeError, match="keepdims and keepdim"):
        x.mean(keepdims=True, keepdim=True)
    with pytest.raises(TypeError, match="softmax"):
        F.softmax(x, 0, dim=1)
    # the joining functions too: before, dim silently won over a different axis
    for join in (mg.concatenate, mg.stack):
        with pytest.raises(TypeError, match="both axis=1 and dim=0"):
            join([x, x], 1, dim=0)
    with pytest.raises(TypeError, match="split.*both axis=1 and dim=0"):
        x.split(1, 1, dim=0)



@pytest.mark.parametrize("call", [
    lambda x, m: m.cat([x, x], 0, dim=1), lambda x, m: m.stack([x, x], 0, dim=1),
    lambda x, m: x.sum(1, dim=1), lambda x, m: x.sum(None, dim=1),
    lambda x, m: x.softmax(-1, dim=0), lambda x, m: x.argmax(None, dim=0),
    lambda x, m: x.split(1, 0, dim=1), lambda x, m: x.squeeze(None, dim=1)],
    ids=["cat", "stack", "sum", "sum None", "softmax", "argmax", "split", "squeeze"])
def test_axis_and_dim_both_given_is_a_type_error_even_at_the_default(call):
    # an axis equal to the default (or to dim) once let dim win silently
    x, tx = leaf()
    with pytest.raises(TypeError):
        call(tx, torch)
    with pytest.raises(TypeError, match="got both axis=.* and dim=.*; pass one"):
        call(x, mg)

# ----- Python numbers and NumPy arrays from tensors -----------------------------------------
def test_float_int_bool_of_one_element_tensors():
    assert float(mg.tensor([[2.5]])) == 2.5
    assert int(mg.tensor(7)) == 7 and isinstance(int(mg.tensor(7.9)), int)
    assert bool(mg.tensor([0.0])) is False
    loss = (leaf()[0] ** 2).mean()
    assert isinstance(float(loss), float) and float(loss) == loss.item()
    with pytest.raises(ValueError, match=r"float\(\): only a one-element tensor .* \(2,\)"):
        float(mg.tensor([1.0, 2.0]))


@pytest.mark.parametrize("convert", [np.asarray, np.array, lambda t: np.asarray(t, np.float32),
                                     lambda t: np.exp(t), lambda t: np.stack([t, t])],
                         ids=["asarray", "array", "asarray_dtype", "ufunc", "stack"])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")     # torch's __array_wrap__'s
def test_numpy_of_a_tensor_that_requires_grad_is_refused_as_torch(convert):
    """torch refuses to hand NumPy a tensor that requires grad (the values would leave the
    graph unseen), in every NumPy entry; detach() first is the way, in both."""
    torch = pytest.importorskip("torch")
    values = np.array([0.5, -1.0, 2.0])
    for lib in (torch, mg):
        x = lib.tensor(values, requires_grad=True)
        with pytest.raises(RuntimeError, match="requires grad"):
            convert(x)
        np.testing.assert_array_equal(convert(x.detach()), convert(values))
        assert x.grad is None and x.requires_grad


LISTS_OF_TENSORS = {
    "two_vectors": lambda lib: [lib.ones(2), lib.zeros(2)],
    "one_element_each": lambda lib: [lib.ones(1), lib.tensor([2.5])],
    "nested_vector": lambda lib: [[lib.ones(2)]],
    "nested_one_element": lambda lib: [[lib.ones(1)], [lib.tensor(3.0)]],
    "scalar_then_vector": lambda lib: [lib.tensor(1.0), lib.ones(2)],
    "integer_vectors": lambda lib: [lib.arange(2), lib.arange(2)],
    "empty_tensor": lambda lib: [lib.ones(0)],
    "requires_grad_scalar": lambda lib: [lib.tensor(1.5, requires_grad=True)],
    "float64_scalar": lambda lib: [[lib.tensor(1.0, dtype=lib.float64)]],
    "bools": lambda lib: (lib.tensor(True), lib.tensor(False)),
    "int_and_float": lambda lib: [lib.tensor(2), 2.5],
}


@pytest.mark.parametrize("name", list(LISTS_OF_TENSORS))
@pytest.mark.filterwarnings("ignore::UserWarning")     # torch's on a scalar that requires grad
def test_tensor_of_a_list_of_tensors_as_torch(name):
    """torch.tensor reads a one-element tensor in a list, at any depth, as its number, and
    refuses a larger one (ValueError; TypeError for integer tensors): no stacking."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (torch, mg):
        try:
            made = lib.tensor(LISTS_OF_TENSORS[name](lib))
        except (TypeError, ValueError) as error:
            results.append(type(error))
        else:
            results.append((str(made.dtype).split(".")[-1], made.tolist(), made.requires_grad))
    assert results[1] == results[0]


def test_np_asarray_of_a_constant_tensor_shares_its_memory_like_torch():
    t = mg.tensor([1.0, 2.0])
    assert np.shares_memory(np.asarray(t), t.data)
    assert not np.shares_memory(np.array(t, copy=True), t.data)
    with pytest.raises(ValueError, match="needs a copy"):     # NumPy's copy=False contract
        np.asarray(t, dtype=np.float64, copy=False)
    np.testing.assert_array_equal(np.exp(mg.tensor(np.array([0.0, 1.0]))), np.exp([0.0, 1.0]))


# ----- autograd habits ----------------------------------------------------------------------
def test_grad_of_an_unused_input_raises_unless_allow_unused():
    x, _ = leaf((3,))
    unused = mg.tensor(np.ones(2), requires_grad=True)
    out = (x * x).sum()
    with pytest.raises(RuntimeError, match=r"do not depend on inputs\[1\] \(shape \(2,\)\).*"
                                           "allow_unused=True"):
        mg.grad(out, [x, unused], retain_graph=True)
    gx, gu = mg.grad(out, [x, unused], allow_unused=True)
    np.testing.assert_allclose(gx, 2 * x.data)
    assert gu is None


def test_grad_of_an_input_that_does_not_require_grad_raises():
    x, _ = leaf((3,))
    constant = mg.tensor(np.ones(3))
    with pytest.raises(RuntimeError, match=r"inputs\[0\] .* does not require grad"):
        mg.grad((x * constant).sum(), [constant])


def test_reading_grad_of_a_non_leaf_warns_and_retain_grad_silences_it():
    x, _ = leaf((3,))
    hidden = x * 2.0
    kept = x * 3.0
    kept.retain_grad()
    (hidden + kept).sum().backward()
    with pytest.warns(UserWarning, match=r"non-leaf tensor \(made by Mul\).*retain_grad\(\)"):
        assert hidden.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(kept.grad, np.ones(3))
        np.testing.assert_allclose(x.grad, 5 * np.ones(3))     # leaves never warn


# ----- nn ---------------------------------------------------------------------------------
def test_linear_with_float64_input_and_float32_weights_names_module_dtypes_and_fix():
    fc = nn.Linear(3, 4)                                  # float32, the default
    with pytest.raises(TypeError) as error:
        fc(mg.tensor(np.ones((2, 3))))                    # NumPy's float64 stays float64
    message = str(error.value)
    assert message.startswith("Linear(in_features=3, out_features=4")
    assert "float32" in message and "float64" in message
    assert 'model.to(dtype="float64")' in message
    fc.to(dtype="float64")
    assert fc(mg.tensor(np.ones((2, 3)))).dtype == np.float64


def test_norm_modules_say_how_to_fix_a_dtype_or_shape_mismatch():
    # the module's one-line forward: its functional norm's checks speak for it
    with pytest.raises(TypeError, match=r"^layer_norm: weight must have x's dtype "
                                        r"torch\.float64, got torch\.float32.*"
                                        r"model\.to\(dtype=\"float64\"\)"):
        nn.LayerNorm(4)(mg.tensor(np.ones((2, 4))))
    # RMSNorm takes it, as torch's: its composite, with a warning, in x's dtype
    x = np.arange(8.0).reshape(2, 4)
    with pytest.warns(UserWarning,
                      match="input dtype torch.float64 and weight dtype torch.float32"):
        y = nn.RMSNorm(4)(mg.tensor(x))
    expected = torch.nn.RMSNorm(4)(torch.tensor(x))
    assert y.dtype == mg.float64
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-15)
    with pytest.raises(ValueError, match=r"^layer_norm: normalized_shape \(4,\) must equal "
                                         r"the trailing dims of x; x has shape \(2, 5\)"):
        nn.LayerNorm(4)(mg.tensor(np.ones((2, 5))))


@pytest.mark.parametrize("args", [(2, 16, 2), ([2, 16, 2],), ((2, 16, 2),)])
def test_mlp_takes_sizes_as_arguments_or_a_list(args):
    mlp = nn.MLP(*args, activation="tanh")
    assert mlp.sizes == [2, 16, 2]
    assert mlp(mg.ones(5, 2)).shape == (5, 2)


def test_mlp_bad_sizes_say_how_to_give_them():
    with pytest.raises(ValueError, match=r"MLP\(\[2, 16, 2\]\).*MLP\(2, 16, 2\)"):
        nn.MLP(2)
    with pytest.raises(TypeError, match="keyword"):
        nn.MLP([2, 16, 2], "relu")


# ----- errors that name the op or the layer ---------------------------------------------------
@pytest.mark.parametrize("op, name", [(lambda a, b: a + b, "add"), (lambda a, b: a - b, "sub"),
                                      (lambda a, b: a * b, "mul"), (lambda a, b: a / b, "div"),
                                      (mg.maximum, "maximum")])
def test_broadcast_errors_name_the_op_and_both_shapes(op, name):
    a, b = mg.tensor(np.ones((2, 3))), mg.tensor(np.ones(4))
    with pytest.raises(ValueError, match=rf"^{name}: shapes \(2, 3\) and \(4,\) do not "
                                         "broadcast"):
        op(a, b)


def test_reshape_error_gives_both_shapes_and_sizes():
    with pytest.raises(ValueError, match=r"^reshape: .* shape \(2, 3\) \(6 elements\) as "
                                         r"shape \(3, 3\)"):
        mg.tensor(np.ones((2, 3))).reshape(3, 3)


def test_matmul_errors_give_both_shapes_and_the_dims_that_differ():
    a = mg.tensor(np.ones((2, 5)))
    with pytest.raises(ValueError, match=r"^matmul: shapes \(2, 5\) and \(3, 4\) do not "
                                         r"match: a's last dim is 5, b's dim -2 is 3"):
        a @ mg.tensor(np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"batch dims .* \(2,\) and \(3,\)"):
        mg.tensor(np.ones((2, 1, 3))) @ mg.tensor(np.ones((3, 3, 1)))


def test_linear_shape_error_names_the_module_its_config_and_the_input_dim():
    with pytest.raises(ValueError, match=r"^Linear\(in_features=3, out_features=4, bias=True\):"
                                         r" input's last dim is 5, expected in_features=3"):
        nn.Linear(3, 4)(mg.tensor(np.ones((2, 5))))


def test_a_layer_inside_a_model_is_named_with_its_path():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(4, 1))
    with pytest.raises(ValueError, match=r"^Linear\(in_features=4, .*\) at '2': input's last "
                                         "dim is 3"):
        model(mg.ones(5, 2))


def test_a_failed_op_changes_nothing():
    x, _ = leaf((2, 3))
    before = x.detach().numpy().copy()
    with pytest.raises(ValueError):
        (x * mg.tensor(np.ones(4))).sum().backward()
    assert x.grad is None and np.array_equal(x.data, before)


def test_attention_names_itself_and_d_model():
    attn = nn.CausalSelfAttention(8, 2)
    with pytest.raises(ValueError, match=r"^CausalSelfAttention\(d_model=8, n_heads=2\): "
                                         "input's last dim is 6, expected d_model=8"):
        attn(mg.tensor(np.ones((2, 3, 6))))
    with pytest.raises(ValueError, match=r"shape \(B, T, d_model\), got \(3, 8\)"):
        attn(mg.tensor(np.ones((3, 8))))


def test_a_layer_takes_a_numpy_array_and_names_itself_for_anything_else():
    fc = nn.Linear(3, 4)
    assert fc(np.ones((2, 3), np.float32)).shape == (2, 4)
    with pytest.raises(TypeError, match=r"^Linear\(in_features=3.*got list; wrap data with "
                                        r"mg.tensor"):
        fc([[1.0, 2.0, 3.0]])


def test_array_op_tensor_still_records_the_op_despite_array_protocol():
    t = mg.tensor([1.0, 2.0], requires_grad=True)
    for result in (np.ones(2) + t, np.ones(2) * t, np.ones((2, 2)) @ t, np.float64(2) * t):
        assert isinstance(result, mg.Tensor) and result.grad_fn is not None


def test_to_takes_torchs_positional_forms():
    x = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    assert x.to("float32").dtype == np.float32                  # to(dtype)
    assert x.to(np.float16).dtype == np.float16
    assert x.to("cpu", "float32").dtype == np.float32           # to(device, dtype)
    assert x.to("cpu") is x                                     # nothing changes: itself
    like = mg.tensor([0.0], dtype="float32")
    assert x.to(like).dtype == np.float32                       # to(other)
    x.to("float32").sum().backward()
    assert x.grad.dtype == np.float64                           # the graph is kept
    model = nn.Linear(2, 2).to("float32")
    assert model.weight.dtype == np.float32
    assert nn.Linear(2, 2).to("cpu", np.float16).bias.dtype == np.float16


@pytest.mark.parametrize("args, kwargs, error, match", [
    (("cdua",), {}, ValueError, "neither a device"),
    (("float32", "cpu"), {}, TypeError, "device must come first"),
    (("cpu", "float32", "x"), {}, TypeError, "at most 2 positional"),
    (("float32",), {"dtype": "float16"}, TypeError, "dtype given twice"),
    ((mg.tensor([1.0]),), {"dtype": "float16"}, TypeError, "takes its device and dtype"),
])
def test_to_rejects_ambiguous_arguments_and_changes_nothing(args, kwargs, error, match):
    model = nn.Linear(2, 2)
    before = model.weight.detach().numpy().copy()
    with pytest.raises(error, match=match):
        mg.tensor([1.0]).to(*args, **kwargs)
    with pytest.raises(error, match=match):
        model.to(*args, **kwargs)
    assert model.weight.dtype == np.float32 and np.array_equal(model.weight.data, before)


@pytest.mark.parametrize("call", [
    lambda t: t.sum(axis=2), lambda t: t.mean(axis=-3), lambda t: t.max(axis=5),
    lambda t: t.transpose(0, 2), lambda t: t.squeeze(2), lambda t: t.unsqueeze(4),
    lambda t: t.split(1, axis=2), lambda t: mg.concatenate([t, t], axis=2),
    lambda t: F.softmax(t, axis=2),
])
def test_an_axis_out_of_range_is_an_index_error_as_in_torch(call):
    t = mg.tensor(np.ones((2, 3)))
    with pytest.raises(IndexError, match="out of range"):
        call(t)
    with pytest.raises(ValueError):                 # and a ValueError, as NumPy's AxisError
        call(t)


@pytest.mark.parametrize("call", [lambda t: t.sum(axis=1.0), lambda t: t.split(1, axis=True),
                                  lambda t: t.sum(axis=True), lambda t: t.unsqueeze(0.5)])
def test_an_axis_of_the_wrong_type_is_a_type_error(call):
    with pytest.raises(TypeError, match="axis must be an int"):
        call(mg.tensor(np.ones((2, 3))))


@pytest.mark.parametrize("make", [
    lambda: F.layer_norm(mg.tensor(np.ones((2, 3))), 3, eps="1e-5"),
    lambda: F.rms_norm(mg.tensor(np.ones((2, 3))), 3, mg.tensor(np.ones(3)), offset="1"),
    lambda: F.batch_norm(mg.tensor(np.ones((2, 3))), None, None, training=True, momentum="0.1"),
    lambda: F.dropout(mg.tensor(np.ones(3)), p="0.5"),
    lambda: nn.Dropout(p=None), lambda: nn.Linear(2.0, 3), lambda: nn.LayerNorm(4, eps=None),
    lambda: nn.BatchNorm1d(4, momentum="0.1"), lambda: nn.RMSNorm(4, offset=[1.0]),
    lambda: optim.SGD([nn.Parameter(np.ones(1))], lr="0.1"),
])
def test_an_argument_that_is_not_a_number_is_a_type_error_as_in_torch(make):
    with pytest.raises(TypeError, match="must be a real number|must be an int"):
        make()


PROMOTION_DTYPES = ["bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def _ones(shape, dtype):
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    return mg.tensor(np.ones(shape, dtype=bool)) if dtype == "bool" \
        else mg.tensor(np.ones(shape)).to(dtype=dtype)


@pytest.mark.parametrize("shapes", [((2,), (2,)), ((), (2,)), ((2,), ()), ((), ())])
@pytest.mark.parametrize("da", PROMOTION_DTYPES)
def test_binary_ops_promote_as_torch_does(da, shapes):
    sa, sb = shapes
    for db in PROMOTION_DTYPES:
        a, b = _ones(sa, da), _ones(sb, db)
        ta, tb = (torch.ones(s, dtype=getattr(torch, d)) for s, d in ((sa, da), (sb, db)))
        for op in (operator.mul, operator.add, operator.truediv, lambda x, y: x.maximum(y),
                   operator.lt, operator.eq):
            try:
                expected = str(op(ta, tb).dtype)
            except RuntimeError:
                continue                                  # bool - bool and the like
            assert str(op(a, b).dtype) == expected, (da, sa, db, sb, op)


def test_a_zero_dim_operand_keeps_the_dimensioned_dtype_and_grads_come_back_in_their_own():
    x = mg.tensor(np.arange(4.0), dtype="float16", requires_grad=True)
    scale = mg.tensor(0.1, dtype=mg.float64, requires_grad=True)     # 0-d float64
    y = x * scale
    assert y.dtype == np.float16
    tx = torch.arange(4.0, dtype=torch.float16, requires_grad=True)
    tscale = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
    ty = tx * tscale
    np.testing.assert_array_equal(y.data, ty.detach().numpy())      # computed in float16
    y.sum().backward()
    ty.sum().backward()
    assert x.grad.dtype == np.float16 and scale.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad, tx.grad.numpy())
    np.testing.assert_array_equal(scale.grad, tscale.grad.numpy())
    assert (mg.tensor([0.1], dtype="float32") == mg.tensor(0.1)).tolist() == [True]


def test_var_and_std_are_unbiased_by_default_as_in_torch():
    data = np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    x, t = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    for mine, theirs in [(x.var(), t.var()), (x.std(axis=1), t.std(1)),
                         (x.var(unbiased=False), t.var(unbiased=False)),
                         (x.var(dim=0, correction=0), t.var(0, correction=0))]:
        np.testing.assert_allclose(mine.data, theirs.detach().numpy(), rtol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # torch warns: no degrees of freedom
        assert np.isnan(mg.tensor([1.0]).var().item()) and np.isnan(torch.tensor([1.0]).var())


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("args, kwargs", [
    ((1, True), {}), ((1, False, True), {}), ((True,), {}), ((False,), {}),
    ((), {"dim": None, "correction": None}), ((0,), {"keepdim": True, "correction": None}),
])
def test_var_and_std_take_torchs_positional_overloads(name, args, kwargs):
    # torch's var(dim, unbiased, keepdim) and var(unbiased); correction=None is the default
    data = np.random.default_rng(0).standard_normal((3, 4))
    x, t = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    mine, theirs = getattr(x, name)(*args, **kwargs), getattr(t, name)(*args, **kwargs)
    assert mine.shape == tuple(theirs.shape)
    np.testing.assert_allclose(mine.data, theirs.detach().numpy(), rtol=1e-12)
    upstream = np.random.default_rng(1).standard_normal(mine.shape)
    mine.backward(upstream)
    theirs.backward(torch.tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    fn_mine, fn_theirs = getattr(mg, name), getattr(torch, name)
    np.testing.assert_allclose(fn_mine(x, *args, **kwargs).data,
                               fn_theirs(t, *args, **kwargs).detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("data, kwargs", [
    (np.random.default_rng(2).standard_normal((4, 6)), {"dim": 1}),
    (np.random.default_rng(3).standard_normal((3, 4, 5)), {"dim": (0, 2), "keepdim": True}),
    (np.random.default_rng(4).standard_normal((3, 2)), {"dim": 0, "correction": 5}),
    (np.array([[1.0, np.inf, 2.0], [1.0, 2.0, 4.0]]), {"dim": 1}),
    (np.array([[1.0, 2.0]]), {"dim": 0}),
])
def test_var_is_one_node_with_torchs_gradient(data, kwargs):
    """x.var(): one VarBackward0 node as torch's, whose gradient is torch's 2/dof·g·(x - mean)
    (a dof below 0 as it is, an inf in the slice: -inf and NaN as torch's); std through it;
    and a second derivative through both."""
    mine, theirs = {}, {}
    for out, lib in ((mine, mg), (theirs, torch)):
        x = lib.tensor(data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                 # no degrees of freedom
            v, s = x.var(**kwargs), x.std(**kwargs)
        out["name"] = v.grad_fn.name()
        out["values"] = v.detach().numpy()
        out["grads"] = [g.numpy() for g in lib.autograd.grad(v.sum(), x)] + \
            [g.numpy() for g in lib.autograd.grad(s.sum(), x)]
    assert mine["name"] == theirs["name"] == "VarBackward0"
    np.testing.assert_allclose(mine["values"], theirs["values"], rtol=1e-12)
    for a, b in zip(mine["grads"], theirs["grads"]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    if np.isfinite(data).all() and data.shape[0] > 1 and "correction" not in kwargs:
        assert mg.autograd.gradgradcheck(lambda t: t.var(**kwargs).exp(),
                                         (mg.tensor(data, requires_grad=True),))


def test_argmax_argmin_abs_follow_torch():
    data = np.array([[1.0, 5.0, np.nan, 5.0], [4.0, 2.0, 6.0, 6.0]])
    x, t = mg.tensor(data), torch.tensor(data)
    assert x.argmax().item() == t.argmax().item()                  # the first NaN
    assert x.argmax(axis=1).tolist() == t.argmax(1).tolist()       # the first of ties
    assert x.argmin(dim=1, keepdim=True).tolist() == t.argmin(1, keepdim=True).tolist()
    assert x.argmax(keepdims=True).shape == tuple(t.argmax(keepdim=True).shape)
    assert x.argmax().dtype == np.int64 and not x.argmax().requires_grad
    with pytest.raises(ValueError, match="empty"):
        mg.tensor(np.zeros((0, 3))).argmax(axis=0)
    a = mg.tensor([0.0, -2.0, 3.0], requires_grad=True)
    abs(a).sum().backward()
    assert a.grad.tolist() == [0.0, -1.0, 1.0]                     # sign(0) = 0, as torch


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "tanh", "sigmoid", "rsqrt"])
def test_unary_ops_of_integer_tensors_give_the_default_float_as_in_torch(op, dtype):
    values = np.array([1, 2, 0]).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # log(0), rsqrt(0)
        mine = getattr(mg.tensor(values), op)()
        theirs = getattr(torch.tensor(values), op)()
    assert mine.dtype == np.float32 == theirs.numpy().dtype   # the default float, as torch
    np.testing.assert_allclose(mine.data, theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", [lambda t: t.max(axis=0), lambda t: t.amin(0),
                                  lambda t: t.argmax(axis=0), lambda t: t.argmin(0),
                                  lambda t: t.max()])
def test_a_reduction_over_an_empty_dim_is_an_index_error_as_in_torch(call):
    with pytest.raises(IndexError, match="empty dim"):
        call(mg.tensor(np.zeros((0, 3))))
    with pytest.raises(ValueError, match="empty dim"):           # and a ValueError, as before
        call(mg.tensor(np.zeros((0, 3))))
