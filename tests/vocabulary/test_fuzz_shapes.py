"""Shape, view and creation ops against PyTorch at the corners a differential fuzzer found:
the error classes of refused shapes, ``cat``'s result dtype, the sublist form of einsum,
in-place ``as_strided_``, the factories' dtypes and one-step ``logspace``."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]


def _both(values, dtype):
    """(ours, torch's) tensors of ``values`` in ``dtype``."""
    t = torch.tensor(np.asarray(values, dtype=np.float64)).to(getattr(torch, dtype))
    return mg.tensor(t.float().numpy() if dtype == "bfloat16" else t.numpy()).to(
        getattr(mg, dtype)), t


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(np.asarray(ours.detach().float().numpy()
                                             if str(ours.dtype) == "torch.bfloat16"
                                             else ours.detach().numpy()),
                                  theirs.detach().float().numpy()
                                  if theirs.dtype == torch.bfloat16 else theirs.detach().numpy())


# ----- what torch refuses with a RuntimeError is one here too --------------------------------
REFUSED = {
    "tril of 1-D": lambda L: L.tril(L.ones(3)),
    "triu_ of 0-d": lambda L: L.tensor(1.0).triu_(),
    "cat of 0-d": lambda L: L.cat([L.tensor(1.0), L.tensor(2.0)]),
    "concatenate, sizes": lambda L: L.concatenate([L.ones(2, 3), L.ones(2, 2)]),
    "stack, shapes": lambda L: L.stack([L.ones(2), L.ones(0)]),
    "chunk of 0-d": lambda L: L.tensor(1.0).chunk(2),
    "chunk 0": lambda L: L.ones(3).chunk(0),
    "split of 0-d": lambda L: L.tensor(1.0).split(1),
    "split, sizes": lambda L: L.ones(2, 3).split([2, 2], dim=-1),
    "t of 3-D": lambda L: L.ones(2, 3, 4).t(),
    "mT of 1-D": lambda L: L.ones(3).mT,
    "flatten, start after end": lambda L: L.ones(2, 3).flatten(1, 0),
    "view, count": lambda L: L.ones(2, 3).view(4, 2),
    "diagonal of 0-d": lambda L: L.diagonal(L.tensor(1.0), 0, 0, -1),
    "diag_embed of 0-d": lambda L: L.diag_embed(L.tensor(1.0), 0, -1, 0),
    "meshgrid, dtypes": lambda L: L.meshgrid(L.ones(2), L.arange(3), indexing="ij"),
    "arange against step": lambda L: L.arange(3, -3, 1),
    "arange, float against step": lambda L: L.arange(1.1, 1.0, 0.25),
    "arange step 0": lambda L: L.arange(0, 3, 0),
    "linspace, negative steps": lambda L: L.linspace(0, 1, -1),
    "range against step, before truncation": lambda L: L.range(0.5, 0.0, 2.0, dtype=L.int64),
    "chunk of 0-d, a dim past it": lambda L: L.tensor(0.0).chunk(4, 1),
    "repeat, fewer repeats than dims": lambda L: L.ones(2, 3).repeat(2),
    "split size 0": lambda L: L.ones(3).split(0),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_torch(name):
    call = REFUSED[name]
    with pytest.raises(Exception) as theirs, warnings.catch_warnings():
        warnings.simplefilter("ignore")              # torch.range's deprecation
        call(torch)
    assert isinstance(theirs.value, RuntimeError)
    with pytest.raises(type(theirs.value)), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(mg)                                     # the class torch raises (a subclass)


def test_stack_checks_the_dim_before_the_shapes():
    with pytest.raises(IndexError):
        torch.stack([torch.ones(3), torch.ones(0)], 2)
    with pytest.raises(IndexError):
        mg.stack([mg.ones(3), mg.ones(0)], 2)


# ----- cat: torch's result dtype over every input, the skipped empty ones included -----------
PAIRS = [("float32", "int64"), ("float16", "int32"), ("int32", "float16"), ("bool", "uint8"),
         ("int16", "bfloat16"), ("bfloat16", "float16"), ("uint8", "int8"),
         ("float16", "float32"), ("bool", "float64"), ("int8", "int64")]


@pytest.mark.parametrize("a, b", PAIRS)
@pytest.mark.parametrize("legacy_empty", [False, True])
def test_cat_promotes_as_torch(a, b, legacy_empty):
    xm, xt = _both([[1, -2, 3], [0, 5, 1]], a)
    if legacy_empty:                               # a (0,) tensor of b: skipped, yet counted
        ym, yt = _both([], b)
    else:
        ym, yt = _both([[2, 0, -1]], b)
    _same(mg.cat([xm, ym], 0), torch.cat([xt, yt], 0))
    _same(mg.cat((ym, xm), dim=-2 if not legacy_empty else 0), torch.cat(
        (yt, xt), dim=-2 if not legacy_empty else 0))


@pytest.mark.parametrize("a, b", [("float16", "float32"), ("float32", "float64"),
                                  ("bfloat16", "float64")])
def test_cat_gradient_in_each_input_dtype(a, b):
    xm, xt = _both([1.0, 2.0], a)
    ym, yt = _both([3.0, -1.0, 0.5], b)
    for x in (xm, xt, ym, yt):
        x.requires_grad_(True)
    w = np.array([1.0, -2.0, 0.5, 3.0, 0.25])
    (mg.cat([xm, ym]) * mg.tensor(w)).sum().backward()
    (torch.cat([xt, yt]) * torch.tensor(w)).sum().backward()
    _same(xm.grad, xt.grad)
    _same(ym.grad, yt.grad)


# ----- views ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_mT_of_0d_is_the_identity_with_torch_warning(dtype):
    xm, xt = _both(1.0, dtype)
    with warnings.catch_warnings():                  # torch warns once a process
        warnings.simplefilter("ignore")
        theirs = xt.mT
    with pytest.warns(UserWarning, match="deprecated on 0-D"):
        ours = xm.mT
    _same(ours, theirs)


@pytest.mark.parametrize("size, stride, offset", [((2, 2), (1, 2), None), ((3,), (2,), 0),
                                                  ((2, 2), (0, 1), 1), ((0,), (1,), None)])
def test_as_strided_in_place(size, stride, offset):
    xm, xt = mg.arange(6.0), torch.arange(6.0, dtype=torch.float32)
    vm, vt = xm._version, xt._version
    assert xm.as_strided_(size, stride, offset) is xm
    xt.as_strided_(size, stride, offset)
    _same(xm, xt)
    assert xm._version - vm == xt._version - vt
    if xt.numel() > 1:
        assert xm.stride() == xt.stride()


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_t_and_row_stack_at_the_top_level(shape):
    values = np.arange(int(np.prod(shape))).reshape(shape)
    _same(mg.t(mg.tensor(values)), torch.t(torch.tensor(values)))
    _same(mg.row_stack([mg.tensor(values)] * 2), torch.row_stack([torch.tensor(values)] * 2))


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_view_dtype_of_empty_transposed(dtype):
    xm, xt = mg.zeros(3, 4, 0, dtype=getattr(mg, dtype)), torch.zeros(3, 4, 0,
                                                                    dtype=getattr(torch, dtype))
    _same(xm.transpose(-1, -2).view(mg.bfloat16), xt.transpose(-1, -2).view(torch.bfloat16))


# ----- einsum's sublist form -----------------------------------------------------------------
SUBLISTS = [
    ([0, 1], [1, 2], [0, 2]),                      # a matrix product
    ([0, 1], [1, 2]),                              # implicit output: labels used once, sorted
    ([27, 1], [1, 2]),                             # a label past 26 (a lower-case letter)
    ([Ellipsis, 1], [1, 2], [Ellipsis, 2]),
    ([0, 1], [2, 3]),                              # an outer product
]


@pytest.mark.parametrize("sublists", SUBLISTS)
def test_einsum_sublist_form(sublists):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    am, bm = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
    at, bt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ours = mg.einsum(am, sublists[0], bm, *sublists[1:])
    theirs = torch.einsum(at, sublists[0], bt, *sublists[1:])
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(am.grad.numpy(), at.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(bm.grad.numpy(), bt.grad.numpy(), rtol=1e-12)


# ----- creation ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8"])
@pytest.mark.parametrize("step", [2, -1])
def test_from_numpy_shares_memory(dtype, step):
    array = np.arange(6).astype(dtype)
    if step < 0:              # torch's storage has no negative strides: both refuse
        with pytest.raises(ValueError):
            torch.from_numpy(array[::step])
        with pytest.raises(ValueError):
            mg.from_numpy(array[::step])
        return
    _same(mg.from_numpy(array[::step]), torch.from_numpy(array[::step]))
    mg.from_numpy(array[::step])[1] = 5
    assert array[::step][1] == 5


@pytest.mark.parametrize("fill", [1.5 - 2j, 1j, complex(0, 0)])
@pytest.mark.parametrize("dtype", [None, "complex128"])
def test_full_of_a_complex_number(fill, dtype):
    _same(mg.full((2, 3), fill, dtype=dtype and getattr(mg, dtype)),
          torch.full((2, 3), fill, dtype=dtype and getattr(torch, dtype)))


@pytest.mark.parametrize("inner", ["float16", "float64", "int64", "int32"])
@pytest.mark.parametrize("other", [1, 2.5, True])
def test_tensor_of_0d_tensors_keeps_their_dtype(inner, other):
    xm, xt = _both(1.5, inner)
    _same(mg.tensor([xm, other]), torch.tensor([xt, other]))


@pytest.mark.parametrize("start, end, steps, base", [(0.5, 0.0, 1, 0.5), (-2.5, 0.0, 1, 0.5),
                                                     (-2.5, 0.0, 3, 0.5), (1.7, 3.0, 1, 2.0),
                                                     (2.9, 5.0, 1, 10.0), (-2, 7, 3, 2.0),
                                                     (-2, -1, 3, 0.5), (3, -1, 5, 3.7)])
@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "bool"])
def test_logspace_integer_dtype(start, end, steps, base, dtype):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = torch.logspace(start, end, steps, base, dtype=getattr(torch, dtype))
    except (RuntimeError, NotImplementedError) as error:    # ends or power past the dtype
        with pytest.raises(type(error)):
            mg.logspace(start, end, steps, base, dtype=getattr(mg, dtype))
        return
    _same(mg.logspace(start, end, steps, base, dtype=getattr(mg, dtype)), theirs)


NUMBERS = [-4, 300, -129, -255, -256, 1.9, -2.7, -1.25, float("nan"), float("inf"), [2.0, -5],
           [False, -1.25], [[1, -3], [2.5, 7]]]


@pytest.mark.parametrize("data", NUMBERS, ids=repr)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int64"])
def test_tensor_of_numbers_into_an_integer_dtype(data, dtype):
    """torch.tensor's checked conversion: ints an unsigned dtype holds down to -max wrap,
    floats truncate where the dtype holds them, the rest is its RuntimeError."""
    try:
        theirs = torch.tensor(data, dtype=getattr(torch, dtype))
    except RuntimeError:
        with pytest.raises(RuntimeError):
            mg.tensor(data, dtype=getattr(mg, dtype))
        return
    _same(mg.tensor(data, dtype=getattr(mg, dtype)), theirs)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_tensor_of_numpy_arrays_keeps_their_dtype(dtype):
    rows = [np.array([1.5, 2.0]).astype(dtype), np.array([3.0, -4.0]).astype(dtype)]
    _same(mg.tensor(rows), torch.tensor(rows))
    mixed = [rows[0], [3.0, -4.0]]                   # a Python float: the default dtype counts
    _same(mg.tensor(mixed), torch.tensor(mixed))


NO_SIZE = {
    "view": lambda L: L.tensor(1.0).view(), "reshape": lambda L: L.tensor(1.0).reshape(),
    "permute": lambda L: L.tensor(1.0).permute(), "expand": lambda L: L.tensor(1.0).expand(),
    "repeat": lambda L: L.tensor(1.0).repeat(), "flip": lambda L: L.tensor(1.0).flip(),
    "tile": lambda L: L.tensor(1.0).tile(), "new_zeros": lambda L: L.tensor(1.0).new_zeros(),
    "resize_": lambda L: L.tensor(1.0).resize_(), "rand": lambda L: L.rand(),
    "randn": lambda L: L.randn(), "zeros": lambda L: L.zeros(), "ones": lambda L: L.ones(),
    "empty": lambda L: L.empty(),
}


@pytest.mark.parametrize("name", sorted(NO_SIZE))
def test_a_size_argument_is_required_as_torchs(name):
    # f() is torch's TypeError; f(()) and f(size=()) are the 0-d shape
    for lib in (torch, mg):
        with pytest.raises(TypeError):
            NO_SIZE[name](lib)
    assert mg.zeros(()).shape == mg.zeros(size=()).shape == torch.zeros(()).shape
