"""PyTorch's semantics at the core: ``.grad`` and ``.data`` are Tensors, and the default
floating dtype is float32, each checked against PyTorch doing the same thing."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn, optim

torch = pytest.importorskip("torch")


def both(values, requires_grad=True):
    """The same float64 leaf here and in torch."""
    values = np.asarray(values, dtype=np.float64)
    return (mg.tensor(values, requires_grad=requires_grad),
            torch.tensor(values, requires_grad=requires_grad))


# ----- .grad ----------------------------------------------------------------------------------
def test_grad_is_a_tensor_without_history_of_the_parameters_kind():
    for dtype in ("float32", "float64"):
        x = mg.ones(2, 3, dtype=dtype, requires_grad=True)
        (x * x).sum().backward()
        assert isinstance(x.grad, mg.Tensor)
        assert x.grad.shape == x.shape and x.grad.dtype == x.dtype
        assert x.grad.device == x.device
        assert x.grad.grad_fn is None and not x.grad.requires_grad and x.grad.is_leaf


def test_grad_accumulates_into_the_same_tensor_as_torch():
    x, tx = both([1.0, -2.0, 3.0])
    (x * x).sum().backward()
    (tx * tx).sum().backward()
    held, theld = x.grad, tx.grad
    (3 * x).sum().backward()
    (3 * tx).sum().backward()
    assert x.grad is held and tx.grad is theld          # both accumulate in place
    np.testing.assert_array_equal(held.numpy(), theld.numpy())


def test_the_habits_of_a_hand_written_training_loop():
    # Karpathy-style: raw tensors, a manual update through .data, grads zeroed by None
    w, tw = both([[0.5, -0.25], [1.5, 2.0]])
    xs = np.array([[1.0, 2.0], [3.0, -1.0]])
    for _ in range(3):
        loss = ((mg.tensor(xs) @ w) ** 2).mean()
        tloss = ((torch.tensor(xs) @ tw) ** 2).mean()
        w.grad, tw.grad = None, None
        loss.backward()
        tloss.backward()
        ratio = ((0.1 * w.grad).std() / w.data.std()).log().item()
        tratio = ((0.1 * tw.grad).std() / tw.data.std()).log().item()
        assert ratio == pytest.approx(tratio, rel=1e-12)       # unbiased std, as torch
        norm, tnorm = w.grad.norm().item(), tw.grad.norm().item()
        assert norm == pytest.approx(tnorm, rel=1e-12)
        w.data += -0.1 * w.grad
        tw.data += -0.1 * tw.grad
        np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-12)
    assert w.requires_grad and w.is_leaf


def test_grad_zero_in_place_and_none_after_zero_grad():
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)
    model(mg.ones(4, 3)).sum().backward()
    held = model.weight.grad
    held.zero_()
    assert model.weight.grad is held and not held.numpy().any()
    opt.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None
    model.weight.grad = mg.zeros(2, 3)                  # assigning a Tensor of the right kind
    assert model.weight.grad.shape == (2, 3)


@pytest.mark.parametrize("bad, error", [
    (np.zeros((2, 3), np.float32), TypeError),          # an array: torch refuses it too
    ("zeros", TypeError),
    ("shape", RuntimeError), ("dtype", RuntimeError)])
def test_assigning_a_grad_of_the_wrong_kind_is_refused_and_changes_nothing(bad, error):
    p = mg.zeros(2, 3, requires_grad=True)
    p.grad = mg.ones(2, 3)
    made = isinstance(bad, str) and bad != "zeros"
    value = {"shape": mg.ones(3, 2), "dtype": mg.ones(2, 3, dtype=mg.float64)}[bad] \
        if made else bad
    tp = torch.zeros(2, 3, requires_grad=True)
    tvalue = {"shape": torch.ones(3, 2), "dtype": torch.ones(2, 3, dtype=torch.float64)}[bad] \
        if made else bad
    with pytest.raises(error):
        tp.grad = tvalue
    with pytest.raises(error, match="grad"):
        p.grad = value
    assert p.grad.tolist() == [[1.0] * 3] * 2


def test_grad_of_a_function_returns_tensors():
    x, tx = both([0.5, 2.0])
    (g,) = mg.grad((x ** 3).sum(), [x])
    (tg,) = torch.autograd.grad((tx ** 3).sum(), [tx])
    assert isinstance(g, mg.Tensor) and not g.requires_grad
    np.testing.assert_array_equal(g.numpy(), tg.numpy())


# ----- .data ----------------------------------------------------------------------------------
def test_data_is_a_tensor_sharing_memory_outside_the_graph():
    x, tx = both([1.0, 2.0, 3.0])
    d, td = x.data, tx.data
    assert isinstance(d, mg.Tensor)
    assert d.requires_grad == td.requires_grad is False and d.grad_fn is None
    d[0] = 10.0
    td[0] = 10.0
    assert x.tolist() == tx.tolist() == [10.0, 2.0, 3.0]
    assert np.shares_memory(d.numpy(), x.detach().numpy())


def test_data_in_place_initialisation_as_model_files_write_it():
    layer = nn.Linear(4, 3)
    layer.weight.data.fill_(1.0)
    layer.bias.data.zero_()
    assert layer.weight.numpy(force=True).tolist() == [[1.0] * 4] * 3
    assert not layer.bias.numpy(force=True).any()
    layer.weight.data.mul_(0.5)
    assert layer.weight.sum().item() == 6.0


def test_data_writes_escape_the_version_check_as_in_torch():
    # torch: .data shares memory but not the version counter, so backward uses the new
    # values silently; detach() shares the counter and the write is an error at backward
    for way in ("data", "detach"):
        x, tx = both([1.0, 2.0])
        y, ty = x * x, tx * tx                          # saves x for backward
        alias, talias = getattr(x, way), getattr(tx, way)
        alias = alias() if way == "detach" else alias
        talias = talias() if way == "detach" else talias
        alias.mul_(2.0)
        talias.mul_(2.0)
        if way == "data":
            y.sum().backward()
            ty.sum().backward()
            np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
        else:
            with pytest.raises(RuntimeError):
                ty.sum().backward()
            with pytest.raises(RuntimeError):
                y.sum().backward()


def test_assigning_data_swaps_the_memory():
    x, tx = both([1.0, 2.0])
    x.data = mg.tensor(np.array([5.0, 6.0, 7.0]))
    tx.data = torch.tensor([5.0, 6.0, 7.0], dtype=torch.float64)
    assert x.shape == tuple(tx.shape) == (3,) and x.requires_grad
    with pytest.raises(TypeError, match="data"):
        x.data = np.zeros(3)
    assert x.tolist() == [5.0, 6.0, 7.0]
    x.data, tx.data = x.data.float(), tx.data.float()         # another dtype, as torch allows
    assert str(x.dtype) == str(tx.dtype) == "torch.float32"
    assert x.requires_grad and tx.requires_grad


# ----- the default dtype ----------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda m: m.tensor(1.5), lambda m: m.tensor([1, 2.5]), lambda m: m.tensor([[0.0]]),
    lambda m: m.tensor([]), lambda m: m.zeros(2), lambda m: m.ones(2, 3),
    lambda m: m.tensor([1, 2]) / 2, lambda m: m.tensor([1, 2]) * 1.5,
    lambda m: m.tensor([1, 2]).exp(), lambda m: m.tensor(True), lambda m: m.tensor(3),
    lambda m: m.tensor(np.zeros(2)), lambda m: m.tensor(np.zeros(2, np.float16)),
    lambda m: m.tensor([1.0, 2.0]) + np.float64(1.0), lambda m: m.tensor([np.float64(1.0)]),
    lambda m: m.tensor([np.float32(1.0), 2.0]), lambda m: m.tensor([[np.float16(1.0)], [2]]),
    lambda m: m.tensor(2) ** 0.5, lambda m: m.tensor([True, False]) ** 1.5],
    ids=["float", "mixed_list", "nested", "empty", "zeros", "ones", "int_div", "int_times_float",
         "int_exp", "bool", "int", "numpy_float64", "numpy_float16", "numpy_scalar",
         "list_of_numpy_float64", "numpy_float32_and_float", "nested_numpy_float16",
         "int_to_a_float_power", "bool_to_a_float_power"])
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_dtypes_follow_torchs_default(make, default):
    torch_default = torch.get_default_dtype()
    mg.set_default_dtype(getattr(mg, default))
    torch.set_default_dtype(getattr(torch, default))
    try:
        ours, theirs = make(mg), make(torch)
    finally:
        torch.set_default_dtype(torch_default)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-7)   # float32 exp: 1 ulp


def test_new_modules_take_the_default_dtype():
    assert nn.Linear(2, 3).weight.dtype == mg.float32 == mg.get_default_dtype()
    mg.set_default_dtype(mg.float64)
    assert nn.Linear(2, 3).weight.dtype == mg.float64
    assert nn.LayerNorm(4).weight.dtype == mg.float64
    assert nn.Linear(2, 3, dtype=mg.float16).weight.dtype == mg.float16


def test_set_default_dtype_refuses_what_torch_refuses():
    for bad, tbad in ((mg.int64, torch.int64), ("bogus", None), (mg.bool, torch.bool)):
        if tbad is not None:
            with pytest.raises(TypeError):
                torch.set_default_dtype(tbad)
        with pytest.raises(TypeError, match="default"):
            mg.set_default_dtype(bad)
        assert mg.get_default_dtype() == mg.float32


def test_float32_numpy_data_goes_into_a_default_model():
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    out = model(mg.tensor(np.ones((2, 3), np.float32)))
    assert out.dtype == mg.float32


def test_gradcheck_warns_on_float32_as_torch():
    x = mg.tensor([0.5, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="float64"):
        try:
            mg.gradcheck(lambda t: (t * t).sum(), x, atol=1e-2, rtol=1e-2, eps=1e-3)
        except mg.GradcheckError:
            pass
    tx = torch.tensor([0.5, 1.0], requires_grad=True)
    with pytest.warns(UserWarning):
        try:
            torch.autograd.gradcheck(lambda t: (t * t).sum(), (tx,), eps=1e-3, atol=1e-2,
                                     rtol=1e-2)
        except RuntimeError:
            pass


def test_a_zero_dim_tensor_formats_as_its_number():
    loss, tloss = mg.tensor(1.23456), torch.tensor(1.23456)
    assert f"{loss:.3f}" == f"{tloss:.3f}" == "1.235"
    with pytest.raises(TypeError):
        f"{mg.tensor([1.0, 2.0]):.3f}"
    with pytest.raises(TypeError):
        f"{torch.tensor([1.0, 2.0]):.3f}"


def test_manual_seed_leaves_numpys_global_state_alone_as_torch():
    np.random.seed(7)
    expected = np.random.random(3)
    np.random.seed(7)
    mg.manual_seed(0)
    torch.manual_seed(0)
    np.testing.assert_array_equal(np.random.random(3), expected)


def test_clip_grad_norm_returns_the_norm_as_torch_a_0_d_tensor():
    for dtype in ("float32", "float64"):
        p = mg.zeros(3, dtype=dtype, requires_grad=True)
        tp = torch.zeros(3, dtype=getattr(torch, dtype), requires_grad=True)
        p.grad, tp.grad = mg.full((3,), 2.0, dtype=dtype), torch.full((3,), 2.0,
                                                                       dtype=tp.dtype)
        norm = nn.utils.clip_grad_norm_([p], 1.0)
        tnorm = torch.nn.utils.clip_grad_norm_([tp], 1.0)
        assert isinstance(norm, mg.Tensor) and norm.shape == ()
        assert str(norm.dtype) == str(tnorm.dtype)
        assert norm.item() == pytest.approx(tnorm.item(), rel=1e-6)
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6)
    empty, tempty = nn.utils.clip_grad_norm_([], 1.0), torch.nn.utils.clip_grad_norm_([], 1.0)
    assert empty.item() == tempty.item() == 0.0 and str(empty.dtype) == str(tempty.dtype)
