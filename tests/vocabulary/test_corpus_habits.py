"""Names public training files reach for on any machine: an integer tensor as an index,
torch.dtype, meshgrid, Dropout2d, torch.backends flags, autocast and GradScaler where
mixed precision is off; each against torch."""

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg


@pytest.mark.parametrize("value", [3, [3], True])
def test_a_one_element_integer_tensor_is_an_index(value):
    data = list(range(10))
    for lib in (torch, mg):
        i = lib.tensor(value)
        assert data[i] == data[int(value if not isinstance(value, list) else value[0])]
        assert data[i:i + 2] == data[int(i):int(i) + 2]
    ix = mg.randint(0, 8, (4,))
    assert [data[i:i + 2] for i in ix] == [data[int(i):int(i) + 2] for i in ix.tolist()]


@pytest.mark.parametrize("value", [3.0, [1, 2]])
def test_a_float_or_longer_tensor_is_no_index(value):
    for lib in (torch, mg):
        with pytest.raises(TypeError, match="only integer tensors of a single element"):
            [0, 1, 2][lib.tensor(value)]


def test_dtype_is_the_class_of_every_dtype():
    assert isinstance(mg.float32, mg.dtype) and isinstance(mg.ones(2).dtype, mg.dtype)
    assert isinstance(torch.float32, torch.dtype)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_torch_with_gradients(indexing):
    a, b, c = (np.arange(n, dtype=np.float64) + 1 for n in (3, 4, 2))
    ours = [mg.tensor(v, requires_grad=True) for v in (a, b, c)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, b, c)]
    got = mg.meshgrid(*ours, indexing=indexing)
    expected = torch.meshgrid(*theirs, indexing=indexing)
    weights = np.random.default_rng(0).standard_normal(expected[0].shape)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.detach().numpy(), e.detach().numpy())
    sum(((g * mg.tensor(weights)) * (k + 1)).sum() for k, g in enumerate(got)).backward()
    sum(((e * torch.tensor(weights)) * (k + 1)).sum() for k, e in enumerate(expected)).backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), atol=1e-12)


def test_meshgrid_warns_without_indexing_and_refuses_what_torch_refuses():
    for lib in (torch, mg):
        with pytest.warns(UserWarning):
            lib.meshgrid(lib.arange(2), lib.arange(3))
        with pytest.raises(RuntimeError):
            lib.meshgrid(lib.ones(2, 2), indexing="ij")


@pytest.mark.parametrize("shape", [(4, 6, 3, 3), (4, 6, 5)])
def test_dropout2d_zeroes_torchs_channels_for_the_same_seed(shape):
    x = np.random.default_rng(1).standard_normal(shape)
    torch.manual_seed(7)
    mg.manual_seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # torch warns about a 3-D input's reading
        expected = torch.nn.Dropout2d(0.3)(torch.tensor(x)).numpy()
    got = mg.nn.Dropout2d(0.3)(mg.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-15)
    assert repr(mg.nn.Dropout2d(0.3)) == repr(torch.nn.Dropout2d(0.3))
    module = mg.nn.Dropout2d(0.3)
    module.eval()
    np.testing.assert_array_equal(module(mg.tensor(x)).numpy(), x)


def test_backends_flags_are_taken_as_torchs_and_typos_refused():
    mg.backends.cuda.matmul.allow_tf32 = True
    mg.backends.cudnn.allow_tf32 = True
    assert mg.backends.cuda.matmul.allow_tf32 and not mg.backends.mps.is_available()
    assert mg.backends.cudnn.allow_tf32 == torch.backends.cudnn.allow_tf32
    with pytest.raises(AttributeError, match="allow_tf33"):
        mg.backends.cudnn.allow_tf33 = True
    mg.backends.cuda.matmul.allow_tf32 = False


def test_autocast_and_grad_scaler_pass_through_as_torchs_disabled_ones():
    model = mg.nn.Linear(3, 1)
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    x = mg.ones(2, 3)
    before = model.weight.detach().numpy().copy()
    scaler = mg.cuda.amp.GradScaler(enabled=False)
    with mg.autocast(device_type="cpu", dtype=mg.bfloat16, enabled=False):
        loss = model(x).sum()
    assert loss.dtype == mg.float32
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    assert not (model.weight.detach().numpy() == before).all()
    assert scaler.get_scale() == torch.amp.GradScaler("cpu", enabled=False).get_scale()

    @mg.cuda.amp.autocast(enabled=False)
    def forward(t):
        return t * 2
    assert (forward(x) == 2).all()


def test_tril_and_the_cos_method_match_torch_with_gradients():
    x = np.random.default_rng(2).standard_normal((3, 4))
    ours, theirs = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got = mg.tril(ours, 1) + ours.tril(-1) + ours.cos()
    expected = torch.tril(theirs, 1) + theirs.tril(-1) + theirs.cos()
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    got.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8",
                                   "bool", "complex64"])
def test_type_names_and_casts_as_torch(dtype):
    ours, theirs = mg.zeros(2, dtype=getattr(mg, dtype)), torch.zeros(2, dtype=getattr(torch,
                                                                                       dtype))
    assert ours.type() == theirs.type()
    with warnings.catch_warnings(record=True) as caught:      # complex to real: as torch,
        warnings.simplefilter("always")                      # a warning that the
        assert ours.type(mg.float64).dtype == mg.float64       # imaginary part goes
        assert ours.type(theirs.double().type()).dtype == mg.float64
    assert bool(caught) == (dtype == "complex64")
    assert all(w.category is UserWarning for w in caught)
    with pytest.raises(ValueError, match="unknown tensor type"):
        ours.type("torch.NoSuchTensor")


def test_torch_cuda_amp_imports_as_a_module():
    from microgradnorm.cuda.amp import GradScaler, autocast
    assert autocast is mg.amp.autocast and GradScaler is mg.amp.GradScaler
