"""torch's everyday Tensor methods and ``mg.*`` functions (ops/, factories.py): values and
gradients against PyTorch at the corners (NaN, ties, bounds, repeated indices), gradchecks,
the factories' dtype/shape/device/requires_grad, tensor gradient hooks, and bad input."""

import itertools

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm.ops import AxisError, OutOfRangeError

NAN = float("nan")


def pair(data, requires_grad=True):
    data = np.asarray(data, dtype=np.float64)
    return (mg.tensor(data, requires_grad=requires_grad),
            torch.tensor(data, requires_grad=requires_grad))


def randn(*shape, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def check_against_torch(mine, theirs, leaves, torch_leaves, upstream_seed=1):
    """Forward values and gradients (under one random upstream gradient) agree."""
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12,
                               equal_nan=True)
    upstream = np.random.default_rng(upstream_seed).standard_normal(mine.shape)
    got = mg.grad(mine, leaves, upstream, allow_unused=True)
    want = torch.autograd.grad(theirs, torch_leaves, torch.tensor(upstream), allow_unused=True)
    for g, w, t in zip(got, want, leaves):
        g = np.zeros(t.shape) if g is None else g
        w = np.zeros(t.shape) if w is None else w.numpy()
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15, equal_nan=True)


# ----- corners against torch --------------------------------------------------------------
@pytest.mark.parametrize("method", ["amin", "min"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), (0, True), ((0, 1), True)])
def test_min_and_amin_propagate_nan_and_treat_ties_as_torch(method, dim, keepdim):
    # amin splits a tie's gradient; min(dim) sends it to the first index; min() splits it
    # (a NaN result's among the NaNs); min over several dims is amin's job, as in torch
    data = [[1.0, 1.0, 3.0], [2.0, NAN, 0.5], [4.0, 0.5, 0.5]]
    x, tx = pair(data)
    kwargs = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    if method == "min" and isinstance(dim, tuple):
        with pytest.raises(TypeError):
            tx.min(**kwargs)
        with pytest.raises(TypeError, match="amin"):
            x.min(**kwargs)
        return
    mine, theirs = getattr(x, method)(**kwargs), getattr(tx, method)(**kwargs)
    if method == "min" and dim is not None:          # (values, indices)
        assert mine.indices.tolist() == theirs.indices.tolist()
        mine, theirs = mine.values, theirs.values
    check_against_torch(mine, theirs, [x], [tx])


def test_minimum_and_maximum_ties_and_nan_as_torch():
    a, ta = pair([1.0, 2.0, NAN, 3.0, 0.0])
    b, tb = pair([1.0, 5.0, 1.0, NAN, -1.0])
    check_against_torch(mg.minimum(a, b), torch.minimum(ta, tb), [a, b], [ta, tb])
    check_against_torch(a.minimum(b), torch.minimum(ta, tb), [a, b], [ta, tb])
    # a NaN passes the whole gradient to both inputs, as in torch
    check_against_torch(mg.maximum(a, b), torch.maximum(ta, tb), [a, b], [ta, tb])


@pytest.mark.parametrize("low, high", [(-1.0, 1.0), (None, 0.5), (0.0, None), (1.0, -1.0),
                                       (1.0, 1.0)])
def test_clamp_gradient_is_inclusive_and_nan_stays_nan(low, high):
    # the bounds themselves appear in x: torch's gradient passes at x == min and x == max
    x, tx = pair([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0, NAN])
    check_against_torch(x.clamp(low, high), tx.clamp(low, high), [x], [tx])
    check_against_torch(x.clip(min=low, max=high), tx.clip(low, high), [x], [tx])


def test_clamp_with_tensor_bounds_gives_bounds_torchs_gradients():
    x, tx = pair(np.linspace(-2, 2, 12).reshape(3, 4))
    low, tlow = pair([[-1.0, 0.5, 2.0, -3.0]])
    high, thigh = pair([[1.0, 0.0, 3.0, 3.0]])           # 0.5 > 0.0: min > max there
    check_against_torch(x.clamp(low, high), tx.clamp(tlow, thigh), [x, low, high],
                        [tx, tlow, thigh])
    check_against_torch(x.clamp(min=low), tx.clamp(min=tlow), [x, low], [tx, tlow])


def test_sign_is_zero_at_nan_and_has_zero_gradient():
    x, tx = pair([-2.0, -0.0, 0.0, 3.0, NAN])
    check_against_torch(x.sign(), tx.sign(), [x], [tx])


@pytest.mark.parametrize("name", ["sigmoid", "rsqrt", "square", "neg"])
def test_unary_methods_match_torch(name):
    x, tx = pair([0.25, 1.0, 4.0, 30.0, 1e-3])
    check_against_torch(getattr(x, name)(), getattr(tx, name)(), [x], [tx])


def test_sigmoid_does_not_overflow():
    x = mg.tensor([-1000.0, 1000.0], requires_grad=True)
    with np.errstate(all="raise"):
        y = mg.sigmoid(x)
        y.sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), [0.0, 1.0])


def test_pow_and_square_keep_the_dtype_rules():
    x, tx = pair([1.0, 2.0, 3.0])
    check_against_torch(x.pow(3), tx.pow(3), [x], [tx])
    assert mg.tensor([1, 2, 3]).square().dtype == np.int64


def test_masked_fill_gradient_is_zero_where_filled_and_value_gets_the_rest():
    x, tx = pair(np.arange(6.0).reshape(2, 3))
    value, tvalue = pair(7.0)
    mask = np.array([True, False, True])
    check_against_torch(x.masked_fill(mg.tensor(mask), value),
                        tx.masked_fill(torch.tensor(mask), tvalue), [x, value], [tx, tvalue])
    check_against_torch(x.masked_fill(mask, float("-inf")),
                        tx.masked_fill(torch.tensor(mask), float("-inf")), [x], [tx])


@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_masked_fill_with_a_complex_value_follows_torch(dtype):
    # a 0-d complex value fills a real tensor only where its imaginary part is 0
    x, tx = mg.zeros(2, dtype=dtype), torch.zeros(2, dtype=getattr(torch, dtype))
    mask, tmask = mg.tensor(True), torch.tensor(True)
    filled = x.masked_fill(mask, mg.tensor(3 + 0j))
    np.testing.assert_array_equal(filled.numpy(), tx.masked_fill(tmask, torch.tensor(3 + 0j)))
    assert str(filled.dtype) == f"torch.{dtype}"
    with pytest.raises(RuntimeError):
        tx.masked_fill(tmask, torch.tensor(1 + 2j))
    with pytest.raises(RuntimeError, match="without overflow"):
        x.masked_fill(mask, mg.tensor(1 + 2j))


def test_where_is_differentiable_in_both_branches_and_broadcasts():
    a, ta = pair(np.arange(6.0).reshape(2, 3))
    b, tb = pair([[10.0], [20.0]])
    cond = np.array([True, False, True])
    check_against_torch(mg.where(mg.tensor(cond), a, b), torch.where(torch.tensor(cond), ta, tb),
                        [a, b], [ta, tb])
    check_against_torch(a.where(cond, 0.0), ta.where(torch.tensor(cond), 0.0), [a], [ta])


@pytest.mark.parametrize("sizes", [(2, 1), (1, 3), (2, 2, 2), (0, 1)])
def test_repeat_backward_sums_the_copies(sizes):
    x, tx = pair(np.arange(6.0).reshape(2, 3))
    check_against_torch(x.repeat(*sizes), tx.repeat(*sizes), [x], [tx])
    check_against_torch(x.repeat(sizes), tx.repeat(sizes), [x], [tx])


@pytest.mark.parametrize("shape, sizes", [((1, 3), (2, 1)), ((2, 3), (1, 1)), ((2, 3), (3, 1, 1)),
                                          ((2, 3), (2, 2))])
def test_repeat_copies_as_torch_even_when_a_view_would_do(shape, sizes):
    # repeating only size-1 dims (or nothing) once gave a read-only view of x sharing its
    # memory and version counter
    for change_input in (True, False):
        x, tx = mg.ones(shape), torch.ones(shape)
        y, ty = x.repeat(*sizes), tx.repeat(*sizes)
        (x if change_input else y).add_(1.0)
        (tx if change_input else ty).add_(1.0)
        assert x.tolist() == tx.tolist() and y.tolist() == ty.tolist()


def test_repeat_saves_nothing_of_its_input_as_torch():
    # the input changed in place (an optimizer step) before backward: torch's repeat saved
    # nothing of it, and the product saved the copy, so backward goes through
    w, tw = pair(np.ones((1, 3)))
    losses = [(y * y).sum() for y in (w.repeat(4, 1), tw.repeat(4, 1))]
    with mg.no_grad(), torch.no_grad():
        w.mul_(2.0)
        tw.mul_(2.0)
    for loss in losses:
        loss.backward()
    np.testing.assert_array_equal(w.grad, tw.grad.numpy())


def test_gather_and_index_select_accumulate_repeated_indices():
    x, tx = pair(np.arange(12.0).reshape(3, 4))
    index = np.array([[0, 0, 2, 1], [2, 2, 2, 0]])
    check_against_torch(x.gather(0, index), tx.gather(0, torch.tensor(index)), [x], [tx])
    check_against_torch(x.gather(1, index[:, :3]), tx.gather(1, torch.tensor(index[:, :3])),
                        [x], [tx])
    rows = np.array([2, 0, 2, 2])
    check_against_torch(x.index_select(0, rows), tx.index_select(0, torch.tensor(rows)),
                        [x], [tx])
    check_against_torch(x.index_select(-1, mg.tensor(rows[:2])),
                        tx.index_select(-1, torch.tensor(rows[:2])), [x], [tx])


@pytest.mark.parametrize("n, chunks", [(6, 4), (5, 3), (6, 3), (1, 4), (0, 3)])
def test_chunk_sizes_as_torch(n, chunks):
    x, tx = pair(np.arange(n * 2.0).reshape(n, 2))
    mine, theirs = x.chunk(chunks), tx.chunk(chunks)
    assert [p.shape for p in mine] == [tuple(p.shape) for p in theirs]
    assert [q.shape for q in x.chunk(2, dim=1)] == [(n, 1), (n, 1)]


def test_matrix_products_and_transposes():
    a, ta = pair(np.arange(6.0).reshape(2, 3))
    b, tb = pair(np.arange(12.0).reshape(3, 4))
    check_against_torch(a.mm(b), ta.mm(tb), [a, b], [ta, tb])
    check_against_torch(a.matmul(b), ta.matmul(tb), [a, b], [ta, tb])
    p, tp = pair(np.arange(24.0).reshape(2, 3, 4))
    q, tq = pair(np.arange(16.0).reshape(2, 4, 2))
    check_against_torch(p.bmm(q), tp.bmm(tq), [p, q], [tp, tq])
    assert a.t().shape == (3, 2) and mg.tensor([1.0, 2.0]).t().shape == (2,)
    assert p.mT.shape == (2, 4, 3)
    check_against_torch(p.mT, tp.mT, [p], [tp])


def test_softmax_methods_match_functional_and_torch():
    x, tx = pair(np.random.default_rng(0).standard_normal((3, 5)))
    check_against_torch(x.softmax(dim=0), tx.softmax(dim=0), [x], [tx])
    check_against_torch(x.log_softmax(-1), tx.log_softmax(-1), [x], [tx])


def test_small_methods():
    x = mg.tensor(np.zeros((2, 3)))
    assert x.numel() == 6 and x.dim() == 2
    y = mg.tensor([[1.5, -2.5]], requires_grad=True)
    for method, dtype in (("long", np.int64), ("int", np.int32), ("bool", np.bool_)):
        out = getattr(y, method)()
        assert out.dtype == dtype and not out.requires_grad and out.is_leaf
    assert y.bool().tolist() == [[True, True]]
    assert y.type_as(mg.tensor([1.0], dtype="float32")).dtype == np.float32
    assert y.contiguous() is y
    transposed = mg.tensor(np.arange(6.0).reshape(2, 3)).T
    copy = transposed.contiguous()
    assert copy.numpy().flags.c_contiguous and copy.tolist() == transposed.tolist()


# ----- gradchecks ---------------------------------------------------------------------------
GRADCHECKS = {
    "amin": lambda x: x.amin(dim=1),
    "min": lambda x: x.min(),
    "minimum": lambda x: x.minimum(mg.tensor([[0.2], [-0.4], [0.0]])),
    "clamp": lambda x: x.clamp(-0.5, 0.7),
    "clamp_tensor": lambda x: x.clamp(mg.tensor([[-0.3, 0.1, 0.6, -2.0]])),
    "sigmoid": lambda x: x.sigmoid(),
    "rsqrt": lambda x: (x * x + 1).rsqrt(),
    "square": lambda x: x.square(),
    "sign": lambda x: x.sign() * x,
    "softmax": lambda x: x.softmax(0),
    "repeat": lambda x: x.repeat(2, 1, 3),
    "masked_fill": lambda x: x.masked_fill(x.detach() > 0, 2.0),
    "where": lambda x: mg.where(x.detach() > 0, x * 3, x.exp()),
    "gather": lambda x: x.gather(1, np.array([[0, 0, 3], [1, 2, 2], [3, 3, 3]])),
    "index_select": lambda x: x.index_select(1, mg.tensor([3, 0, 3])),
    "chunk": lambda x: x.chunk(2, 1)[1] * 2,
    "mm": lambda x: x.mm(x.t()),
    "bmm": lambda x: x.reshape(1, 3, 4).bmm(x.reshape(1, 4, 3)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    x = randn(3, 4, seed=3)
    assert mg.gradcheck(GRADCHECKS[name], x)


def test_masked_fill_value_and_clamp_bounds_gradcheck():
    x, value = randn(3, 4), mg.tensor(0.3, dtype=mg.float64, requires_grad=True)
    mask = np.array([True, False, False, True])
    assert mg.gradcheck(lambda t, v: t.masked_fill(mask, v), (x, value))
    low, high = randn(1, 4, seed=1) - 1, randn(3, 1, seed=2) + 1
    assert mg.gradcheck(lambda t, lo, hi: t.clamp(lo, hi), (x, low, high))


# ----- factories ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "randn", "rand"])
def test_size_factories(name):
    make = getattr(mg, name)
    t = make(2, 3)
    assert t.shape == (2, 3) and t.dtype == np.float32 and t.device == "cpu"
    assert not t.requires_grad and t.is_leaf
    assert make((4,)).shape == (4,) and make([]).shape == ()
    t = make(2, dtype="float32", requires_grad=True)
    assert t.dtype == np.float32 and t.requires_grad
    with pytest.raises(TypeError, match="floating"):
        make(2, dtype=np.int64, requires_grad=True)
    with pytest.raises(ValueError, match="non-negative"):
        make(2, -1)
    with pytest.raises(TypeError, match="size must be ints"):
        make(2.0)
    with pytest.raises(ValueError, match="device"):
        make(2, device="tpu")


def test_zeros_ones_values():
    assert mg.zeros(2).tolist() == [0.0, 0.0] and mg.ones(1, 2).tolist() == [[1.0, 1.0]]


def test_requires_grad_must_be_a_bool_as_in_torch():
    with pytest.raises(TypeError):
        torch.tensor([1.0], requires_grad=1)
    for make in (lambda: mg.tensor([1.0], requires_grad=1), lambda: mg.zeros(2, requires_grad=1)):
        with pytest.raises(TypeError, match="requires_grad must be True or False, got 1"):
            make()


@pytest.mark.parametrize("name", ["float", "double", "half", "bfloat16", "long", "int", "bool",
                                  "cpu", "cuda", "new_zeros", "new_ones"])
def test_conversions_and_new_tensors_have_their_own_help(name):
    # as partialmethods they showed functools.partial's name and docstring in help()
    method = getattr(mg.Tensor, name)
    assert method.__name__ == name and method.__doc__ and "\n" not in method.__doc__.strip()


def test_random_factories_follow_manual_seed():
    assert mg.manual_seed(5) is mg.default_generator          # as torch: the generator
    a, u = mg.randn(3), mg.rand(3)
    mg.manual_seed(5)
    np.testing.assert_array_equal(mg.randn(3).numpy(), a.numpy())
    np.testing.assert_array_equal(mg.rand(3).numpy(), u.numpy())
    assert 0 <= u.numpy().min() and u.numpy().max() < 1
    assert mg.manual_seed(1.5).initial_seed() == 1          # int(seed) first, as torch
    with pytest.raises(TypeError, match="seed"):
        mg.Generator().manual_seed(1.5)


def test_like_factories_and_new_tensors():
    x = mg.tensor(np.ones((2, 3)), dtype="float32")
    for made in (mg.zeros_like(x), x.new_zeros(2, 3), x.new_zeros((2, 3))):
        assert made.shape == (2, 3) and made.dtype == np.float32 and made.tolist()[0][0] == 0
    o = mg.ones_like(x, dtype=np.float64, requires_grad=True)
    assert o.dtype == np.float64 and o.requires_grad and o.tolist()[1][2] == 1
    n = x.new_ones(4, dtype=np.int64)
    assert n.dtype == np.int64 and n.tolist() == [1, 1, 1, 1]
    with pytest.raises(TypeError, match="expected a Tensor"):
        mg.zeros_like(np.ones(2))


@pytest.mark.parametrize("args, kwargs", [((5,), {}), ((1, 4), {}), ((0, 1, 0.25), {}),
                                          ((3, -2, -1), {}), ((2.5,), {}),
                                          ((0, 5), {"dtype": "float32"}),
                                          # an integer dtype truncates the ends and the step
                                          ((0.0, -8.000001, -4.0), {"dtype": "int64"}),
                                          ((0.1, -7.9, -4.0), {"dtype": "int64"}),
                                          ((0.5, 3.7, 1.5), {"dtype": "int32"})])
def test_arange_as_torch(args, kwargs):
    mine = mg.arange(*args, **kwargs)
    theirs = torch.arange(*args, dtype=getattr(torch, kwargs["dtype"]) if kwargs else None)
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert mine.dtype == theirs.numpy().dtype


@pytest.mark.parametrize("args, kwargs", [
    ((-2.0, -3, 1), {}), ((5, 9, 1), {"dtype": "int64"}),        # one step: the start
    ((4.3, -3, 50), {"dtype": "int64"}), ((-3.7, 8.9, 7), {"dtype": "int32"}),
    ((mg.tensor(1), mg.tensor(5.0), 3), {}), ((mg.tensor(-2.0), 4, 5), {"dtype": "int64"}),
    ((0, mg.tensor(2.5), 4), {"dtype": "float64"})])
def test_linspace_as_torch(args, kwargs):
    # torch's kernel: [start] for one step, ends cast to an integer dtype first, 0-d tensors
    # for the ends
    theirs = torch.linspace(*(torch.tensor(a.item()) if isinstance(a, mg.Tensor) else a
                              for a in args),
                            dtype=getattr(torch, kwargs["dtype"]) if kwargs else None)
    mine = mg.linspace(*args, **kwargs)
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert mine.dtype == theirs.numpy().dtype
    ends = [(mg.tensor(a), torch.tensor(a)) for a in ([0.0, 1.0], 2.0)]
    np.testing.assert_allclose(mg.logspace(ends[1][0], 3.0, 4).numpy(),
                               torch.logspace(ends[1][1], 3.0, 4).numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="0-dimensional"):
        mg.linspace(ends[0][0], 3.0, 4)



@pytest.mark.filterwarnings("error")
def test_linspace_ends_as_torch_converts_them():
    # an integer dtype: each end the kernel uses converted to it first (-3 wraps to 253 in
    # uint8; -3.7, 300, inf, NaN there are torch's error); inf ends in floats: NaNs, quietly
    inf, nan = float("inf"), float("nan")
    for start, end, steps in itertools.product([-300, -3.7, -3, 2.5, 200, inf, nan],
                                               [-3, 3.9, 255, -inf], [0, 1, 2, 4]):
        for dtype in ["int64", "int16", "int8", "uint8", "float64"]:
            try:
                theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
            except RuntimeError:
                with pytest.raises(RuntimeError, match="linspace.*without overflow"):
                    mg.linspace(start, end, steps, dtype=dtype)
                continue
            mine = mg.linspace(start, end, steps, dtype=dtype)
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy(),
                                          err_msg=str((start, end, steps, dtype)))
            assert mine.dtype == theirs.numpy().dtype

def test_arange_and_full_errors_and_dtypes():
    with pytest.raises(ValueError, match="step"):
        mg.arange(0, 3, 0)
    with pytest.raises(ValueError, match="against"):
        mg.arange(3, 0, 1)
    with pytest.raises(TypeError, match="end"):
        mg.arange(0, "3")
    assert mg.full((2,), 3).dtype == np.int64 and mg.full((2,), True).dtype == np.bool_
    assert mg.full((2, 2), 0.5).dtype == np.float32 and mg.full(3, 1.5).tolist() == [1.5] * 3
    assert mg.full((2,), 1, dtype="float32", requires_grad=True).requires_grad
    with pytest.raises(TypeError, match="fill_value"):
        mg.full((2,), "x")



ARANGE_DTYPES = ["int64", "int32", "int16", "int8", "uint8", "float64", "float32", "float16"]


@pytest.mark.parametrize("dtype", ARANGE_DTYPES)
def test_arange_grid_as_torch(dtype):
    # the step's sign and (but for int64) the length come from the values as given, the
    # elements from the truncated start and step; the errors are where torch's are
    for start, end, step in itertools.product([-2.5, -1, -0.5, 0, 0.4, 2],
                                              [-3, -1, 0, 0.5, 2.7, 4],
                                              [-1.5, -1, -0.4, 0, 0.4, 1, 2]):
        try:
            theirs = torch.arange(start, end, step, dtype=getattr(torch, dtype)).numpy()
        except (RuntimeError, ValueError):
            with pytest.raises((RuntimeError, ValueError)):
                mg.arange(start, end, step, dtype=dtype)
            continue
        mine = mg.arange(start, end, step, dtype=dtype).numpy()
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, (start, end, step)
        if theirs.dtype.kind in "iu":
            np.testing.assert_array_equal(mine, theirs, err_msg=str((start, end, step)))
        else:       # torch's vectorized kernel adds the steps in another order: ulps apart
            np.testing.assert_allclose(mine, theirs, rtol=np.finfo(theirs.dtype).eps,
                                       atol=1e-15, err_msg=str((start, end, step)))


def test_arange_takes_0d_tensors_and_refuses_what_torch_refuses():
    for args in [(mg.tensor(5),), (mg.tensor(5.0),), (mg.tensor(1), mg.tensor(2.5), 0.5)]:
        theirs = torch.arange(*(torch.tensor(a.item()) if isinstance(a, mg.Tensor) else a
                                for a in args))
        np.testing.assert_array_equal(mg.arange(*args).numpy(), theirs.numpy())
        assert mg.arange(*args).dtype == theirs.numpy().dtype
    with pytest.raises(TypeError, match="end"):
        mg.arange(mg.tensor([5]))
    with pytest.raises(RuntimeError, match="unsupported range"):
        mg.arange(0, float("inf"))
    for args in [(0, 5, float("inf")), (0, 1e30, 1)]:
        with pytest.raises(RuntimeError, match="without overflow"):
            mg.arange(*args, dtype="int64")

def test_from_numpy_shares_memory():
    array = np.arange(3.0)
    t = mg.from_numpy(array)
    array[0] = 9.0
    assert t.tolist()[0] == 9.0
    t.data[1] = 7.0
    assert array[1] == 7.0 and t.dtype == np.float64 and not t.requires_grad
    with pytest.raises(TypeError, match="numpy.ndarray"):
        mg.from_numpy([1.0, 2.0])


def test_functional_aliases():
    x, tx = pair([0.5, 1.5])
    for name in ("exp", "log", "tanh", "sigmoid"):
        check_against_torch(getattr(mg, name)(x), getattr(torch, name)(tx), [x], [tx])
    assert mg.cat([x, x], dim=0).shape == (4,)
    with pytest.raises(TypeError, match="expected a Tensor"):
        mg.exp(np.ones(2))


# ----- tensor hooks -------------------------------------------------------------------------
def test_hook_on_a_leaf_sees_the_total_and_replaces_it():
    x, tx = pair([1.0, 2.0, 3.0])
    seen, tseen = [], []
    x.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    tx.register_hook(lambda g: tseen.append(g.clone()) or g * 10)
    ((x * x).sum() + x.sum()).backward()
    ((tx * tx).sum() + tx.sum()).backward()
    assert len(seen) == len(tseen) == 1                  # once, with the summed gradient
    np.testing.assert_allclose(seen[0], tseen[0].numpy())
    np.testing.assert_allclose(x.grad, tx.grad.numpy())


def test_hook_on_a_non_leaf_changes_what_flows_on_and_what_is_retained():
    x, tx = pair([1.0, -2.0, 3.0])
    y, ty = x * 2, tx * 2
    for t in (y, ty):
        t.retain_grad()
        t.register_hook(lambda g: g + 1)
        t.register_hook(lambda g: g * 3)                 # runs on the first one's result
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x.grad, tx.grad.numpy())
    np.testing.assert_allclose(y.grad, ty.grad.numpy())


def test_hook_returning_none_observes_and_remove_unregisters():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad, [3.0, 3.0])
    handle.remove()
    handle.remove()                                      # a second remove does nothing
    (x * 3).sum().backward()
    assert calls == [1]


def test_hooks_run_under_mg_grad_and_on_the_root():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * 0)
    x.register_hook(lambda g: g + 5)
    (gx,) = mg.grad(y, [x], np.ones(2))
    np.testing.assert_allclose(gx, [5.0, 5.0])          # torch: the same
    z = x.sum()
    with z.register_hook(lambda g: g * 2):
        z.backward()
    np.testing.assert_allclose(x.grad, [7.0, 7.0])      # (1 * 2) + 5 per element


def test_hook_on_one_output_of_split():
    x, tx = pair(np.arange(4.0))
    a, b = x.split(2)
    ta, tb = tx.split(2)
    b.register_hook(lambda g: g * -1)
    tb.register_hook(lambda g: g * -1)
    (a * b).sum().backward()
    (ta * tb).sum().backward()
    np.testing.assert_allclose(x.grad, tx.grad.numpy())


def test_hook_errors():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="doesn't require grad"):
        mg.tensor([1.0]).register_hook(lambda g: g)
    with pytest.raises(TypeError, match="callable"):
        x.register_hook(3)
    x.register_hook(lambda g: g[:1])
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).sum().backward()
    assert x.grad is None                                # a failed backward writes nothing


# ----- bad input ----------------------------------------------------------------------------
def test_bad_input_names_the_argument():
    x = randn(2, 3)
    with pytest.raises(ValueError, match="at least one of min and max"):
        x.clamp()
    with pytest.raises(TypeError, match="min must be"):
        x.clamp("0")
    with pytest.raises(TypeError, match="mask must be a bool"):
        x.masked_fill(np.ones(3), 0.0)
    with pytest.raises(ValueError, match="does not broadcast"):
        x.masked_fill(np.ones(4, bool), 0.0)
    with pytest.raises(ValueError, match="value must be"):
        x.masked_fill(np.ones(3, bool), mg.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="condition must be a bool"):
        mg.where(np.ones(3), x, 0.0)
    with pytest.raises(ValueError, match="repeat"):
        x.repeat(2)
    with pytest.raises(OutOfRangeError, match="index 3 is out of bounds"):
        x.gather(1, np.array([[0, 3, 0], [0, 0, 0]]))
    with pytest.raises(OutOfRangeError, match="index -1"):
        x.index_select(0, mg.tensor([-1]))
    with pytest.raises(TypeError, match="expected dtype int32 or int64"):
        x.index_select(0, mg.tensor([0.5]))
    with pytest.raises(ValueError, match="as many dims"):
        x.gather(0, np.zeros(2, np.int64))
    with pytest.raises(AxisError, match="axis 2 is out of range"):
        x.gather(2, np.zeros((2, 3), np.int64))
    with pytest.raises(ValueError, match="chunks must be at least 1"):
        x.chunk(0)
    with pytest.raises(ValueError, match="mm: both operands must be 2-D"):
        x.mm(randn(3))
    with pytest.raises(ValueError, match="bmm"):
        x.bmm(x)
    with pytest.raises(ValueError, match="t\\(\\) expects"):
        randn(2, 3, 4).t()
    with pytest.raises(ValueError, match="mT needs"):
        _ = randn(3).mT
    with pytest.raises(ValueError, match="empty dim"):
        mg.zeros(0, 2).amin(dim=0)
