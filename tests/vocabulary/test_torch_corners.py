"""Tensor semantics where PyTorch code meets a corner, against torch: ``x.shape`` is a
``Size``; ``view`` refuses what torch's refuses (and reads bytes as another dtype);
``x[::-1]`` and iterating a 0-d tensor raise; ``mean``/``var`` of integers raise, and the
reductions' ``dtype=`` casts first; products of two dtypes raise; ``norm`` takes "fro" and
"nuc". Values, dtypes, gradients (float64) and error classes are torch's."""

import pickle
import random

import numpy as np
import pytest
import torch
from torch_compare import check, pair, same_call

import microgradnorm as mg
import microgradnorm.nn.functional as F


def same(call, *args, rtol=1e-12):
    """``call(lib, *args)`` of each library: the same error class, or one dtype and values."""
    same_call(call, *args, ulps={}, rtol=rtol)


def raises_as_torch(call, *args, match):
    """torch's ``call`` raises; ours raises the same class with ``match`` in its message."""
    with pytest.raises(Exception) as theirs:                   # noqa: PT011 (torch's class)
        call(torch, *[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
    with pytest.raises(theirs.type, match=match):
        call(mg, *[mg.tensor(a) if isinstance(a, np.ndarray) else a for a in args])


def normal(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ----- x.shape is a Size --------------------------------------------------------------------
def test_shape_is_a_size_whose_slices_sums_and_products_stay_sizes_as_torchs():
    for lib in (mg, torch):
        shape = lib.ones(2, 3).shape
        assert isinstance(shape, lib.Size) and isinstance(shape, tuple)
        assert shape.numel() == 6 and shape == (2, 3) and hash(shape) == hash((2, 3))
        made = [shape[1:], shape + (4,), (4,) + shape, shape * 2, 2 * shape, shape[::-1]]
        assert all(type(s) is lib.Size for s in made)
        assert [tuple(s) for s in made] == [(3,), (2, 3, 4), (4, 2, 3), (2, 3, 2, 3),
                                            (2, 3, 2, 3), (3, 2)]
        assert type(shape[0]) is int and type(shape + lib.Size([1])) is lib.Size
        assert type(lib.ones(2).size()) is lib.Size and type(lib.nn.Parameter(
            lib.ones(2)).shape) is lib.Size
        for bad in (lambda s: s + [4], lambda s: [4] + s, lambda s: s * 1.5):
            with pytest.raises(TypeError):
                bad(shape)
    shape = mg.ones(2, 3).shape
    assert type(pickle.loads(pickle.dumps(shape))) is mg.Size
    assert repr(shape) == "Size([2, 3])" and repr(mg.tensor(1.0).shape) == "Size([])"
    assert str(shape) == f"{shape}" == "(2, 3)"            # messages print shapes as before
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(4, 5\)"):
        mg.ones(2, 3) @ mg.ones(4, 5)


# ----- view: a reshape that refuses to copy -------------------------------------------------
VIEWS = {
    "contiguous": (lambda x: x, (3, 8)),
    "size-1 dims": (lambda x: x[:, :1], (2, 4)),
    "transposed, dims kept apart": (lambda x: x.transpose(0, 1), (3, 2, 2, 2)),
    "transposed, dims merged": (lambda x: x.transpose(0, 1), (3, 8)),
    "transposed, flattened": (lambda x: x.transpose(1, 2), (-1,)),
    "2-D transpose": (lambda x: x[0].T, (-1,)),
    "2-D transpose, unit dim": (lambda x: x[0].T, (4, 1, 3)),
    "transpose then unsqueeze": (lambda x: x[0].T.unsqueeze(1), (4, 3)),
    "sliced rows": (lambda x: x[:, 1:], (2, 8)),
    "sliced rows, merged": (lambda x: x[:, 1:], (-1,)),
    "strided": (lambda x: x[:, ::2], (2, 2, 2, 2)),
    "expanded": (lambda x: x[:, :1].expand(2, 3, 4), (2, 12)),
    "expanded, kept": (lambda x: x[:, :1].expand(2, 3, 4), (2, 3, 2, 2)),
    "empty transposed": (lambda x: x[:, :0].transpose(0, 2), (-1,)),
    "empty, other shape": (lambda x: x[:0].transpose(1, 2), (0, 6, 2)),
    "0-d": (lambda x: x[0, 0, 0], (1, 1)),
}


@pytest.mark.parametrize("name", VIEWS)
def test_view_refuses_where_torch_refuses_and_views_where_it_views(name):
    make, shape = VIEWS[name]
    x, xt = pair(np.arange(24.0).reshape(2, 3, 4))
    try:
        theirs = make(xt).view(shape)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            make(x).view(shape)
        return
    base = make(x)
    ours = base.view(shape)
    assert ours.shape == theirs.shape
    assert np.shares_memory(ours._array, base._array) or ours.numel() == 0
    check(ours * 1.0, theirs * 1.0, [(x, xt)])


def test_view_agrees_with_torch_on_random_permutes_slices_and_shapes():
    rng = random.Random(0)
    for _ in range(300):
        shape = tuple(rng.choice([1, 2, 3]) for _ in range(rng.randint(1, 4)))
        order = list(range(len(shape)))
        rng.shuffle(order)
        step = rng.choice([1, 2])
        data = np.arange(float(np.prod(shape))).reshape(shape)
        made = [lib.tensor(data).permute(*order)[..., ::step] for lib in (mg, torch)]
        count, sizes = made[1].numel(), []
        while count > 1 and len(sizes) < 3:                  # a random factorisation
            factor = rng.choice([d for d in range(1, count + 1) if count % d == 0])
            sizes.append(factor)
            count //= factor
        new = tuple(sizes) + (count,)
        try:
            expected = made[1].view(new)
        except RuntimeError:
            with pytest.raises(RuntimeError, match="view size is not compatible"):
                made[0].view(new)
            continue
        np.testing.assert_array_equal(made[0].view(new).numpy(), expected.numpy())


def test_view_of_an_op_result_views_as_torchs_whatever_numpys_memory_order():
    # torch's results of indexing and softmax are contiguous; NumPy's are not: not refused
    data = normal((2, 3, 4))
    for make in [lambda lib, x: x[:, [0, 2]], lambda lib, x: x[..., [0, 2]][0],
                 lambda lib, x: lib.softmax(x.transpose(1, 2), -1),
                 lambda lib, x: x.transpose(1, 2).cumsum(1),
                 lambda lib, x: x.index_select(2, lib.tensor([0, 3]))]:
        same(lambda lib, x, make=make: make(lib, x).view(-1), data)
    same(lambda lib, x: x.transpose(1, 2).contiguous().view(2, 12), data)
    same(lambda lib, x: x.transpose(1, 2).reshape(-1), data)        # reshape copies
    same(lambda lib, x: x.transpose(1, 2).view_as(x), data)         # refused, as view


def test_view_shares_memory_and_version_with_its_base():
    x = mg.arange(6.0)
    v = x.view(2, 3)
    v[1, 2] = 10.0
    assert x[5].item() == 10.0 and x._version == v._version


@pytest.mark.parametrize("case", [
    ("float32", (6,), "int16"), ("float32", (6,), "float64"), ("float32", (6,), "int32"),
    ("float32", (2, 3), "int16"), ("float32", (), "int16"), ("float32", (), "int32"),
    ("float32", (5,), "float64"), ("float64", (2, 2), "float32"), ("int64", (4,), "uint8")])
def test_view_as_another_dtype_reads_the_same_bytes_as_torchs(case):
    dtype, shape, new = case
    data = np.arange(1, 1 + int(np.prod(shape))).reshape(shape).astype(dtype)
    same(lambda lib, x: x.view(getattr(lib, new)), data)
    if len(shape) == 2:                                # the last dim's step not 1
        same(lambda lib, x: x.T.view(getattr(lib, new)), data)


def test_view_as_another_dtype_is_outside_the_graph_and_writes_through():
    for lib in (mg, torch):
        x = lib.arange(4.0, requires_grad=True)
        y = x.view(lib.float32)
        assert not y.requires_grad and y.grad_fn is None
        z = x.detach()
        z.view(lib.int32)[0] = 0x3F800000                  # the bits of 1.0
        assert z[0].item() == 1.0


# ----- negative steps, 0-d iteration ----------------------------------------------------------
@pytest.mark.parametrize("index", [slice(None, None, -1), (slice(None), slice(None, None, -2)),
                                   (0, slice(3, 0, -1)), slice(None, None, 0)])
def test_a_slice_stepping_backwards_or_by_zero_raises_torchs_value_error(index):
    data = normal((4, 5))
    raises_as_torch(lambda lib, x: x[index], data, match="step")
    raises_as_torch(lambda lib, x: x.__setitem__(index, 0.0), data, match="step")


def test_positive_steps_index_and_write_as_torchs():
    data = normal((4, 5))
    same(lambda lib, x: x[1::2, ::3], data)
    same(lambda lib, x: (x.__setitem__((slice(None, None, 2), 1), 7.0), x)[1], data)
    x, xt = pair(data)
    check(x[::3, 1:4:2] * 1.0, xt[::3, 1:4:2] * 1.0, [(x, xt)])


def test_iterating_or_taking_len_of_a_0d_tensor_raises_as_torch():
    raises_as_torch(lambda lib, x: list(x), np.array(3.0), match="iteration over a 0-d tensor")
    raises_as_torch(lambda lib, x: iter(x), np.array(3.0), match="iteration over a 0-d tensor")
    raises_as_torch(lambda lib, x: len(x), np.array(3.0), match=r"len\(\) of a 0-d tensor")
    data = normal((3, 2))
    rows = list(mg.tensor(data))
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    np.testing.assert_array_equal(np.stack([r.numpy() for r in rows]), data)
    assert list(mg.zeros(0, 2)) == []


# ----- integer reductions; dtype= casts first ------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib, x: x.mean(), lambda lib, x: x.mean(1), lambda lib, x: lib.mean(x, 0, True),
    lambda lib, x: x.bool().mean(), lambda lib, x: x.var(), lambda lib, x: x.std(1),
    lambda lib, x: lib.var(x, 0), lambda lib, x: lib.std(x), lambda lib, x: x.nanmean(),
    lambda lib, x: x.mean(dtype=lib.int64), lambda lib, x: x.float().mean(dtype=lib.int32)])
def test_mean_var_and_std_of_integers_raise_torchs_runtime_error(call):
    raises_as_torch(call, np.arange(6).reshape(2, 3),
                    match="could not infer output dtype|floating point")


def test_float32_mean_of_a_mask_or_a_count_is_torchs_to_the_bit():
    """``(x > t).float().mean()``, the fraction training loops print: the sum is exact, so
    torch's mean is sum/n correctly rounded, and so is ours, over every dim and in keepdim."""
    x = np.random.default_rng(3).standard_normal((32, 50, 3))
    for threshold in (0.5, 1.2, 2.0):
        for dims in ((), (0,), (1,), (0, 1), (0, 2)):
            ours = (mg.tensor(x).abs() > threshold).float().mean(dims, keepdim=True)
            theirs = (torch.tensor(x).abs() > threshold).float().mean(dims, keepdim=True)
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    counts = np.random.default_rng(4).integers(0, 40, (27, 27)).astype(np.float32)
    np.testing.assert_array_equal(mg.tensor(counts).mean(1).numpy(),
                                  torch.tensor(counts).mean(1).numpy())


@pytest.mark.parametrize("call", [
    lambda lib, x: x.sum(dtype=lib.float64), lambda lib, x: x.sum(1, dtype=lib.float32),
    lambda lib, x: lib.sum(x, 1, True, dtype=lib.float32), lambda lib, x: x.mean(dtype=lib.float32),
    lambda lib, x: lib.mean(x, 0, True, dtype=lib.float64),
    lambda lib, x: x.prod(dtype=lib.float64), lambda lib, x: x.cumsum(1, dtype=lib.float64),
    lambda lib, x: x.cumprod(0, dtype=lib.float32), lambda lib, x: x.softmax(1, dtype=lib.float64),
    lambda lib, x: x.log_softmax(0, dtype=lib.float32), lambda lib, x: x.sum(dtype=lib.int32),
    lambda lib, x: x.float().sum(dtype=lib.int32), lambda lib, x: x.norm(dtype=lib.float32)])
def test_reductions_cast_integers_to_their_dtype_first_as_torchs(call):
    same(call, np.arange(1, 7).reshape(2, 3), rtol=1e-6)


@pytest.mark.parametrize("name, dtype", [
    ("sum", "float64"), ("mean", "float64"), ("softmax", "float64"), ("log_softmax", "float64"),
    ("F.softmax", "float64"), ("F.log_softmax", "float64"), ("norm", "float64"),
    ("sum", "float32")])
def test_the_gradient_flows_through_a_reductions_cast(name, dtype):
    def call(lib, x):
        functional = lib.nn.functional if lib is torch else F
        if name.startswith("F."):
            return getattr(functional, name[2:])(x, 1, dtype=getattr(lib, dtype))
        dim = {"softmax": 1, "log_softmax": 1}.get(name)
        args = () if dim is None else (dim,)
        return getattr(x, name)(*args, dtype=getattr(lib, dtype))
    data = normal((3, 4)).astype(np.float32 if dtype == "float64" else np.float64)
    x, xt = pair(data)
    ours, theirs = call(mg, x), call(torch, xt)
    assert str(ours.dtype) == f"torch.{dtype}" and x.grad is None
    check(ours, theirs, [(x, xt)], rtol=1e-6, atol=1e-6)
    assert x.grad.dtype == data.dtype


def test_an_integer_dtype_for_an_input_that_requires_grad_raises_as_torch():
    for lib in (mg, torch):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError):
            x.sum(dtype=lib.int64)
        with lib.no_grad():
            assert x.sum(dtype=lib.int64).item() == 3


# ----- matrix products of two dtypes ---------------------------------------------------------
@pytest.mark.parametrize("dtypes", [("int64", "float32"), ("float32", "float64"),
                                    ("float64", "float32"), ("int32", "int64")])
@pytest.mark.parametrize("ndims", [(1, 1), (2, 1), (1, 2), (2, 2), (3, 3), (3, 2), (2, 3),
                                   (4, 2)])
def test_matmul_of_two_dtypes_raises_torchs_runtime_error(dtypes, ndims):
    a, b = (np.ones((2,) * n, dtype) for n, dtype in zip(ndims, dtypes))
    raises_as_torch(lambda lib, a, b: a @ b, a, b, match="same dtype")
    raises_as_torch(lambda lib, a, b: lib.matmul(a, b), a, b, match="same dtype")
    same(lambda lib, a, b: a @ b.to(a.dtype), a, b)          # one dtype: computed


@pytest.mark.parametrize("call, shapes", [
    (lambda lib, a, b: lib.mm(a, b), ((2, 2), (2, 2))),
    (lambda lib, a, b: lib.bmm(a, b), ((1, 2, 2), (1, 2, 2))),
    (lambda lib, a, b: lib.dot(a, b), ((2,), (2,))),
    (lambda lib, a, b: lib.mv(a, b), ((2, 2), (2,))),
    (lambda lib, a, b: lib.addmm(a, a, b), ((2, 2), (2, 2))),
    (lambda lib, a, b: F.linear(a, b) if lib is mg else lib.nn.functional.linear(a, b),
     ((2, 2), (2, 2)))])
def test_the_named_products_of_two_dtypes_raise_as_torchs(call, shapes):
    a, b = np.ones(shapes[0], np.float32), np.ones(shapes[1], np.float64)
    raises_as_torch(call, a, b, match="dtype")


# ----- norm: "fro" and "nuc" ------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib, x: x.norm(), lambda lib, x: x.norm("fro"), lambda lib, x: lib.norm(x, p="fro"),
    lambda lib, x: x.norm(p="fro", dim=(0, 1)), lambda lib, x: x.norm("fro", dim=1, keepdim=True),
    lambda lib, x: lib.norm(x, "nuc"), lambda lib, x: x.norm("nuc", keepdim=True),
    lambda lib, x: x.norm(None), lambda lib, x: x.norm("nuc", dim=(1, 0)),
    lambda lib, x: x.norm("nuc", dtype=lib.float64)])
def test_norm_takes_fro_and_nuc_as_torchs_with_gradients(call):
    x, xt = pair(normal((3, 4)))
    check(call(mg, x), call(torch, xt), [(x, xt)])


@pytest.mark.parametrize("call", [
    lambda lib, x: x.norm("nuc", dim=(0, 2)), lambda lib, x: x.norm("nuc", dim=(-1, 1)),
    lambda lib, x: x.norm("fro", dim=2), lambda lib, x: x.norm(p="fro"),
    lambda lib, x: x.norm("fro", dim=(0, 1), keepdim=True)])
def test_norm_of_three_dims_matches_torch(call):
    x, xt = pair(normal((2, 3, 4), 1))
    check(call(mg, x), call(torch, xt), [(x, xt)])


@pytest.mark.parametrize("call, message", [
    (lambda lib, x: x.norm("foo"), "Order foo not supported"),
    (lambda lib, x: x.norm("nuc", dim=1), "dim must be a 2-tuple. Got 1"),
    (lambda lib, x: x[0].norm("nuc"), "at least 2 dimensions"),
    (lambda lib, x: x.norm("nuc", dim=(0, 0)), r"dims must be different. Got \(0, 0\)"),
    (lambda lib, x: x.unsqueeze(0).norm("nuc"), "dim must be a 2-tuple. Got 0 1 2"),
    (lambda lib, x: x.unsqueeze(0).norm(dim=(0, 1, 2)), "dim must be a 2-tuple"),
    (lambda lib, x: x.norm(dtype=lib.float16), "without narrowing"),
    (lambda lib, x: x.norm(dtype=lib.int64), "floating point or complex"),
    (lambda lib, x: x.long().norm(dtype=lib.float64), "floating point or complex")])
def test_norm_refuses_what_torch_refuses(call, message):
    raises_as_torch(call, normal((3, 4)).astype(np.float32), match=message)


# ----- found by a second read ------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "bool"])
def test_integer_and_bool_sums_are_int64_as_torchs(dtype):
    values = np.array([1, 0, 1, 1]).astype(dtype)
    for axis in (None, 0):
        ours = mg.tensor(values).sum() if axis is None else mg.tensor(values).sum(axis)
        theirs = torch.tensor(values).sum() if axis is None else torch.tensor(values).sum(axis)
        assert str(ours.dtype) == str(theirs.dtype)
        assert (ours - 10).tolist() == (theirs - 10).tolist()          # -7, not 2**64 - 7


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_dtype_casts_first_and_refuses_what_torch_refuses(fn):
    ints = [[1, 2, 3]]
    for ours in (getattr(F, fn), getattr(mg, fn)):
        got = ours(mg.tensor(ints), 1, dtype=mg.float64)
        want = getattr(torch, fn)(torch.tensor(ints), 1, dtype=torch.float64)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-15)
        for dtype in (mg.int64, mg.complex64):
            with pytest.raises(NotImplementedError, match=fn):
                ours(mg.tensor([[1.0, 2.0]]), 1, dtype=dtype)
    with pytest.raises(NotImplementedError):
        getattr(torch, fn)(torch.tensor([[1.0, 2.0]]), 1, dtype=torch.int64)


def test_in_place_arithmetic_takes_numpy_ints_as_python_ints():
    for lib in (mg, torch):
        x = lib.tensor([5, 250], dtype=lib.uint8)
        x.add_(np.int64(1))
        x += np.int32(10)
        x.mul_(np.int16(2))
        assert x.tolist() == [32, 10]                 # (250 + 11) * 2 wraps, as torch's


def test_pow_in_place_and_membership_are_torchs():
    for lib in (mg, torch):
        x = lib.tensor([3.0, 2.0])
        alias = x
        x **= 2
        assert alias.tolist() == [9.0, 4.0]
        grid = lib.tensor([[1, 2], [3, 4]])
        assert 3 in grid and 5 not in grid and lib.tensor(4) in grid
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        _ = "a" in mg.ones(2)


def test_size_takes_ints_only_and_is_never_equal_to_a_tensor():
    for lib in (mg, torch):
        assert (lib.Size([2]) == lib.tensor([2])) is False
        assert (lib.Size([2]) != lib.tensor([2])) is True
        assert lib.Size([2, 3]) == (2, 3) and hash(lib.Size([2, 3])) == hash((2, 3))
        with pytest.raises(TypeError, match="iterable of 'int'"):
            lib.Size([2.0, 3])


def test_a_bad_norm_order_is_named_before_the_dims():
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="Order foo not supported"):
            lib.ones(2, 3).norm("foo", dim=1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_keeps_its_left_tail(dtype):
    x = np.linspace(-80, 80, 16001).astype(dtype)
    ours = mg.sigmoid(mg.tensor(x)).numpy().astype(np.float64)
    exact = torch.sigmoid(torch.tensor(x, dtype=torch.float64)).numpy()
    ulp = np.spacing(exact.astype(dtype)).astype(np.float64)
    assert np.max(np.abs(ours - exact) / ulp) <= 4                 # 1 + tanh(x/2): 47 ulps
    assert mg.sigmoid(mg.tensor([-40.0], dtype=mg.float64)).item() == pytest.approx(4.248e-18,
                                                                                     rel=1e-3)


def test_finfo_without_a_dtype_is_the_default_dtypes():
    assert mg.finfo().eps == torch.finfo().eps == np.finfo(np.float32).eps
    previous = mg.get_default_dtype()
    mg.set_default_dtype(mg.float64)
    try:
        assert mg.finfo().eps == np.finfo(np.float64).eps
    finally:
        mg.set_default_dtype(previous)


@pytest.mark.parametrize("dtype, value", [("int8", 300), ("int8", -129), ("uint8", 256),
                                          ("int16", 40000), ("uint8", -1), ("int8", -128),
                                          ("bool", 2)])
def test_an_int_written_by_index_is_checked_and_wrapped_as_torchs(dtype, value):
    results = []
    for lib in (mg, torch):
        x = lib.zeros(3, dtype=getattr(lib, dtype))
        try:
            x[0] = value
            x[1:] = value
            results.append(x.tolist())
        except RuntimeError as error:
            results.append(("RuntimeError", "cannot be converted" in str(error)))
    assert results[0] == results[1]
