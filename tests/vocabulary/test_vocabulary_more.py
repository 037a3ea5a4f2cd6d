"""More of torch's vocabulary against PyTorch: the reductions (logsumexp, var_mean/std_mean,
count_nonzero, nansum/nanmean, cummax/cummin, logcumsumexp; ops/reductions.py) and the
shapes (ops/arrange.py: broadcast_to, swapaxes, view_as, diagonals, tile, stacks, splits,
rot90, flips, tril_/triu_) and products (ops/products.py: kron, tensordot, inner, cross,
dist, cdist): float64 values and gradients of a random upstream, result dtypes of integer,
bool and half inputs, 0-d and empty tensors, NaN and inf, and torch's exception classes.
The indexing ops are in test_vocabulary_more_indexing.py."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import microgradnorm as mg
from microgradnorm.ops import AxisError

RNG = np.random.default_rng(0)
ULPS = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-6}


def _tensors(result):
    # the tensors of a result: a tensor, or a (named) tuple / list of them, in order
    if isinstance(result, (tuple, list)):
        return [t for part in result for t in _tensors(part)]
    return [result]


def same(call, *args, grad=True, atol=1e-12, rtol=None):
    """``call(lib, *args)`` for torch and for mg, each NumPy array among ``args`` a tensor of
    that library (floating ones requiring grad, with ``grad``): both raise the same class,
    or give results of one structure, dtype and values (NaN == NaN), and then the gradient of
    a random upstream into each input agrees (NaN where torch's is NaN)."""
    def run(lib):
        inputs = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f")
                  if isinstance(a, np.ndarray) else a for a in args]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(lib, *inputs), inputs
    try:
        expected, theirs = run(torch)
    except Exception as error:                               # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            run(mg)
        return
    got, ours = run(mg)
    if type(expected).__module__ == "torch.return_types":           # a named tuple
        assert type(got).__name__ == type(expected).__name__
    assert isinstance(got, (tuple, list)) == isinstance(expected, (tuple, list))
    got_list, expected_list = _tensors(got), _tensors(expected)
    assert len(got_list) == len(expected_list)
    for g, e in zip(got_list, expected_list):
        assert str(g.dtype) == str(e.dtype), (g, e)
        assert tuple(g.shape) == tuple(e.shape), (g.shape, e.shape)
        tolerance = ULPS.get(str(g.dtype).removeprefix("torch."), 0) if rtol is None else rtol
        wide = np.complex128 if e.is_complex() else np.float64           # (keeps the imag)
        np.testing.assert_allclose(g.detach().numpy().astype(wide),
                                   e.detach().numpy().astype(wide) if e.is_complex()
                                   else e.detach().double().numpy(), rtol=tolerance,
                                   atol=atol if tolerance == 0 else 0)
    if not grad:
        return
    pairs = [(g, e) for g, e in zip(got_list, expected_list) if e.requires_grad]
    if not pairs:
        return
    upstream = [RNG.standard_normal(e.shape) for _, e in pairs]
    sum((g * mg.tensor(u, dtype=g.dtype)).sum() for (g, _), u in zip(pairs, upstream)) \
        .backward()
    sum((e * torch.tensor(u, dtype=e.dtype)).sum() for (_, e), u in zip(pairs, upstream)) \
        .backward()
    for a, b in zip(ours, theirs):
        if isinstance(b, torch.Tensor) and b.requires_grad:
            expected_grad = np.zeros(b.shape) if b.grad is None else b.grad.double().numpy()
            got_grad = np.zeros(a.shape) if a.grad is None else a.grad.numpy()
            tolerance = 10 * ULPS.get(str(a.dtype).removeprefix("torch."), 1e-10)
            np.testing.assert_allclose(got_grad.astype(np.float64), expected_grad,
                                       atol=max(atol, tolerance), rtol=tolerance)


def data(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape)


# ----- logsumexp ------------------------------------------------------------------------------
@pytest.mark.parametrize("dim,keepdim", [(1, False), (0, True), (-1, True), ((0, 1), False),
                                         ((0, -1), True), ([1], False)])
def test_logsumexp_matches_torch(dim, keepdim):
    same(lambda lib, x: lib.logsumexp(x, dim, keepdim), data(3, 4))
    same(lambda lib, x: x.logsumexp(dim=dim, keepdim=keepdim), data(2, 5) * 300)   # no overflow


def test_logsumexp_infinite_rows_nan_and_empty_match_torch():
    inf, nan = np.inf, np.nan
    rows = np.array([[-inf, -inf, -inf], [1.0, inf, 2.0], [1.0, 2.0, 3.0], [-inf, 0.0, 1.0],
                     [inf, -inf, 0.0], [nan, 1.0, 2.0]])
    same(lambda lib, x: lib.logsumexp(x, 1), rows)          # NaN gradients where torch's
    same(lambda lib, x: lib.logsumexp(x, 0), np.zeros((0, 3)))
    same(lambda lib, x: lib.logsumexp(x, 1), np.zeros((0, 3)))
    same(lambda lib, x: lib.logsumexp(x, 0), np.array(2.5))


def test_logsumexp_dtypes_and_errors_match_torch():
    for array in [np.array([1, 2, 3]), np.array([True, False]), np.array([1, 2], np.uint8),
                  np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0], np.float16)]:
        same(lambda lib, x: lib.logsumexp(x, 0), array)
    same(lambda lib, x: lib.logsumexp(x, 2), data(2, 3))
    same(lambda lib, x: lib.logsumexp(x, (0, 0)), data(2, 3))
    with pytest.raises(TypeError):
        mg.logsumexp(mg.ones(2))
    with pytest.raises(TypeError):
        mg.logsumexp(mg.ones(2), None)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_logsumexp_over_drawn_shapes_matches_torch(shape, draw):
    dim = draw.draw(st.integers(-len(shape), len(shape) - 1))
    same(lambda lib, x: lib.logsumexp(x, dim), data(*shape) * 10)


# ----- var_mean, std_mean, count_nonzero --------------------------------------------------------
@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_and_std_mean_match_torch_in_every_form(name):
    forms = [lambda f, x: f(x), lambda f, x: f(x, 0), lambda f, x: f(x, 1, keepdim=True),
             lambda f, x: f(x, (0, 1), correction=0), lambda f, x: f(x, dim=0, correction=2),
             lambda f, x: f(x, False), lambda f, x: f(x, True), lambda f, x: f(x, 0, False),
             lambda f, x: f(x, 1, True, True), lambda f, x: f(x, 0, unbiased=False),
             lambda f, x: f(x, correction=0.5), lambda f, x: f(x, None, keepdim=True)]
    for form in forms:
        same(lambda lib, x, form=form: form(getattr(lib, name), x), data(3, 4))
    for array in [np.array(3.0), np.ones(1), np.zeros(0), np.array([1, 2])]:
        same(lambda lib, x: getattr(lib, name)(x), array)
    same(lambda lib, x: getattr(lib, name)(x, 0, unbiased=False, correction=1), data(3))
    # float32: fixed values (a drawn near-constant slice cancels: torch's Welford and the
    # two passes here then differ beyond a few ulp)
    same(lambda lib, x: getattr(lib, name)(x, 0), np.array([0.5, -1.25, 2.0], np.float32))
    assert type(mg.var_mean(mg.ones(3))) is tuple



def test_var_mean_and_std_mean_parse_as_var_and_std():
    # one parser: a non-bool unbiased is torch's TypeError in every form, and each error
    # names the function called
    for name in ["var", "std", "var_mean", "std_mean"]:
        same(lambda lib, x, name=name: getattr(lib, name)(x, 1, 2), data(3, 4))
        same(lambda lib, x, name=name: getattr(lib, name)(x, True, False), data(3, 4))
        with pytest.raises(TypeError, match=f"^{name}: unbiased"):
            getattr(mg, name)(mg.tensor(data(3, 4)), 1, 2)
        with pytest.raises(TypeError, match=f"^{name}\\(\\): give unbiased or correction"):
            getattr(mg, name)(mg.tensor(data(3, 4)), 0, True, correction=1)
    with pytest.raises(AxisError, match="^std: "):
        mg.std(mg.tensor(data(3, 4)), 2)

def test_count_nonzero_matches_torch():
    array = np.array([[0.0, 1.0, np.nan], [-0.0, 2.0, 0.0]])
    for dim in [None, 0, 1, -1, (0, 1), [0, 1]]:
        same(lambda lib, x, dim=dim: lib.count_nonzero(x, dim), array, grad=False)
    same(lambda lib, x: x.count_nonzero(dim=-1), np.array([[1, 0], [True, 2]]), grad=False)
    same(lambda lib, x: lib.count_nonzero(x, 0), np.array(3.0), grad=False)
    same(lambda lib, x: lib.count_nonzero(x), np.zeros((0, 2)), grad=False)
    same(lambda lib, x: lib.count_nonzero(x, 2), array, grad=False)
    with pytest.raises(TypeError):
        mg.count_nonzero(mg.ones(2), 0, keepdim=True)


# ----- nansum, nanmean ------------------------------------------------------------------------
def test_nansum_and_nanmean_values_and_gradients_match_torch():
    nan = np.nan
    array = np.array([[1.0, nan, 2.0], [nan, nan, nan], [3.0, -1.0, 0.5]])
    for dim, keepdim in [(None, False), (1, False), (0, True), ((0, 1), True), (-1, False)]:
        same(lambda lib, x, dim=dim, keepdim=keepdim: lib.nansum(x, dim, keepdim), array)
        same(lambda lib, x, dim=dim, keepdim=keepdim: lib.nanmean(x, dim, keepdim),
             array)                                      # NaN grads in the slice of NaN
        same(lambda lib, x, dim=dim, keepdim=keepdim: x.nanmean(dim=dim, keepdim=keepdim),
             data(3, 2))
    same(lambda lib, x: lib.nansum(x), np.array([nan, nan]))
    same(lambda lib, x: lib.nanmean(x), np.array([nan, nan]))
    same(lambda lib, x: lib.nanmean(x), np.zeros(0))
    same(lambda lib, x: lib.nansum(x), np.array(nan))


def test_nansum_and_nanmean_dtypes_match_torch():
    for array in [np.array([1, 2]), np.array([True, True]), np.array([1, 2], np.uint8),
                  np.array([1.0, np.nan], np.float16), np.array([1.0, np.nan], np.float32)]:
        same(lambda lib, x: lib.nansum(x), array)
        same(lambda lib, x: lib.nanmean(x), array)
    same(lambda lib, x: lib.nansum(x, dtype=lib.float64), np.array([1.0, np.nan], np.float32))
    same(lambda lib, x: lib.nanmean(x, dtype=lib.float64), np.array([1, 2]))
    same(lambda lib, x: lib.nansum(x, 3), data(2))


# ----- cummax, cummin, logcumsumexp -----------------------------------------------------------
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_and_cummin_values_indices_and_gradients_match_torch(name):
    nan = np.nan
    for array, dim in [(np.array([1.0, 3.0, 2.0, 3.0, nan, 1.0, nan, -1.0]), 0),
                       (np.array([2.0, 1.0, 1.0, 0.0, 0.0, 5.0]), 0), (data(3, 5), 1),
                       (data(4, 3), 0), (data(2, 3, 2), -2), (np.array(2.0), 0),
                       (np.zeros((0, 2)), 0), (np.zeros((2, 0)), 1)]:
        same(lambda lib, x, dim=dim: getattr(lib, name)(x, dim), array)
    for array in [np.array([1, 3, 2, 3]), np.array([False, True, False]),
                  np.array([1.0, 3.0], np.float32)]:
        same(lambda lib, x: getattr(x, name)(0), array)
    result = getattr(mg, name)(mg.tensor([1.0, 2.0]), 0)
    assert type(result).__name__ == name and result.values is result[0]
    same(lambda lib, x: getattr(lib, name)(x, 2), data(2, 2))
    with pytest.raises(TypeError):
        getattr(mg, name)(mg.ones(2))


def test_logcumsumexp_matches_torch():
    inf, nan = np.inf, np.nan
    for array, dim in [(data(3, 4), 1), (data(4, 3) * 400, 0), (np.array(1.5), 0),
                       (np.zeros(0), 0), (np.array([-inf, -inf, 1.0, 2.0]), 0),
                       (np.array([1.0, inf, 2.0, -inf]), 0),
                       (np.array([-inf, 1.0, nan, 2.0]), 0)]:
        same(lambda lib, x, dim=dim: lib.logcumsumexp(x, dim), array)
    same(lambda lib, x: x.logcumsumexp(-1), data(2, 3).astype(np.float32))
    for array in [np.array([1, 2]), np.array([True])]:
        same(lambda lib, x: lib.logcumsumexp(x, 0), array)


# ----- broadcast_to, broadcast_tensors, swaps, view_as ------------------------------------------
def test_broadcast_to_and_broadcast_tensors_match_torch():
    x = data(2, 3)
    for size in [(4, 2, 3), (4, -1, 3), (2, 3), (-1, 2, 3), (3, 3), (3,), (2, 1, 3)]:
        same(lambda lib, x, size=size: lib.broadcast_to(x, size), x)
    same(lambda lib, x: x.broadcast_to(2, 2, 3), x)
    same(lambda lib, x: lib.broadcast_to(x, (0, 3)), data(1, 3))
    same(lambda lib, x: lib.broadcast_to(x, 3), x)
    same(lambda lib, a, b, c: lib.broadcast_tensors(a, b, c), x, data(4, 1, 1),
         np.array(2))
    same(lambda lib, a, b: lib.broadcast_tensors(a, b), x, data(4))
    same(lambda lib, a: lib.broadcast_tensors(a), x)
    assert mg.broadcast_tensors() == ()


def test_swapaxes_swapdims_view_as_and_reshape_as_match_torch():
    x = data(2, 3, 4)
    for a, b in [(0, 1), (-1, 0), (2, 2), (0, 3)]:
        same(lambda lib, x, a=a, b=b: lib.swapaxes(x, a, b), x)
        same(lambda lib, x, a=a, b=b: x.swapdims(a, b), x)
    same(lambda lib, x: lib.swapaxes(x, 0, -1), np.array(1.0))
    same(lambda lib, x, y: x.view_as(y), data(24), x)
    same(lambda lib, x, y: x.reshape_as(y), x, data(6, 4))
    same(lambda lib, x, y: x.view_as(y), data(5), x)
    same(lambda lib, x, y: x.reshape_as(y), data(5), x)
    with pytest.raises(TypeError):
        mg.ones(6).view_as(3)


# ----- diagonals ------------------------------------------------------------------------------
def test_diagonal_matches_torch_and_is_a_view():
    for shape, args in [((3, 4), (0,)), ((3, 4), (1,)), ((3, 4), (-2,)), ((3, 4), (5,)),
                        ((3, 4), (-5,)), ((2, 3, 4), (0, 2, 0)), ((2, 3, 4), (1, -1, 1)),
                        ((2, 3, 4), (0, 1, 1)), ((3,), ()), ((0, 3), ()), ((2, 2), (0, 0, 2))]:
        same(lambda lib, x, args=args: lib.diagonal(x, *args), data(*shape))
    same(lambda lib, x: x.diagonal(offset=1, dim1=1, dim2=0), data(3, 4))
    with mg.no_grad():
        x = mg.zeros(3, 3)
        x.diagonal().fill_(1.0)                         # torch's idiom: writes into x
        x.diagonal(1).add_(2.0)
    np.testing.assert_array_equal(x.numpy(), np.eye(3) + 2 * np.eye(3, k=1))


def test_diag_diag_embed_and_trace_match_torch():
    for array, k in [(data(3), 0), (data(3), 1), (data(3), -2), (data(3, 4), 0),
                     (data(3, 4), -1), (data(3, 4), 7), (np.zeros(0), 0), (np.array(2.0), 0),
                     (data(2, 2, 2), 0), (np.array([1, 2, 3]), 1)]:
        same(lambda lib, x, k=k: lib.diag(x, k), array)
    for args in [(), (1,), (-1, 0, 2), (0, -1, -2), (0, 0, 0), (0, 0, 3)]:
        same(lambda lib, x, args=args: lib.diag_embed(x, *args), data(2, 3))
    same(lambda lib, x: x.diag_embed(offset=1, dim1=0, dim2=2), data(2, 3))
    same(lambda lib, x: lib.diag_embed(x), np.array(1.0))
    for array in [data(3, 4), data(4, 3), np.arange(12).reshape(3, 4), np.zeros((0, 3)),
                  np.ones((2, 2), np.uint8), np.ones((2, 2), np.float16), data(3),
                  np.array([[True, False], [True, True]])]:
        same(lambda lib, x: lib.trace(x), array)


# ----- tile, stacks, atleast ------------------------------------------------------------------
def test_tile_matches_torch():
    x = data(2, 3)
    for dims in [(2,), (2, 1, 2), (), (0,), (1, 1), (3, 2), (-1,), (2.0,)]:
        same(lambda lib, x, dims=dims: lib.tile(x, dims), x)
    same(lambda lib, x: x.tile(2, 2), x)
    same(lambda lib, x: x.tile([2]), x)
    same(lambda lib, x: x.tile(2, 3), np.array(1.0))
    same(lambda lib, x: lib.tile(x, (2,)), np.array([1, 2], np.int32))


def test_the_stacks_match_torch():
    cases = [[data(2), data(3)], [np.array(1.0), np.array(2)], [data(2, 3), data(2, 1)],
             [data(2), data(2, 1)], [data(3), data(2, 3)], [data(3), data(3)],
             [data(2, 2, 2), data(2, 1, 2)], [np.ones(2), np.ones(2, np.int64)],
             [np.ones(2, np.float32), np.ones(2, np.float16)], [data(2, 3)]]
    for name in ["hstack", "vstack", "dstack", "column_stack"]:
        for tensors in cases:
            same(lambda lib, *ts, name=name: getattr(lib, name)(list(ts)), *tensors)
        same(lambda lib, *ts, name=name: getattr(lib, name)(ts), data(2), data(2))
        same(lambda lib, name=name: getattr(lib, name)([]))


def test_atleast_nd_match_torch():
    for name in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        for array in [np.array(1.0), data(3), data(2, 3), data(2, 3, 4), np.zeros(0)]:
            same(lambda lib, x, name=name: getattr(lib, name)(x), array)
        same(lambda lib, a, b, name=name: getattr(lib, name)(a, b), np.array(1.0), data(2))
        same(lambda lib, a, b, name=name: getattr(lib, name)([a, b]), np.array(1.0), data(2))
        same(lambda lib, a, name=name: getattr(lib, name)((a,)), np.array(1.0))
        assert len(getattr(mg, name)()) == 0


# ----- splits ---------------------------------------------------------------------------------
def test_tensor_split_matches_torch():
    x = data(7)
    for split in [3, 1, 7, 9, [1, 5], [5, 1], [-2, 10], [], (2,), 0, -1, 2.0]:
        same(lambda lib, x, split=split: lib.tensor_split(x, split), x)
    same(lambda lib, x: lib.tensor_split(x, lib.tensor(3)), x)
    same(lambda lib, x: lib.tensor_split(x, lib.tensor([1, 4])), x)
    same(lambda lib, x: lib.tensor_split(x, lib.tensor([[1]])), x)
    same(lambda lib, x: lib.tensor_split(x, lib.tensor([1.0])), x)
    same(lambda lib, x: lib.tensor_split(x, indices=[2]), x)
    same(lambda lib, x: lib.tensor_split(x, sections=2), x)
    same(lambda lib, x: x.tensor_split(2, -1), data(2, 3))
    same(lambda lib, x: lib.tensor_split(x, (1,), 1), data(2, 3))
    same(lambda lib, x: lib.tensor_split(x, 1), np.array(1.0))
    pieces = mg.tensor_split(mg.arange(6.0), 3)
    assert all(p._array.base is not None for p in pieces)          # views, as torch's


def test_hsplit_vsplit_dsplit_match_torch():
    for name, shapes in [("hsplit", [(2, 6), (4,), ()]), ("vsplit", [(4, 2), (4,)]),
                         ("dsplit", [(2, 2, 4), (2, 4)])]:
        for shape in shapes:
            for split in [2, [1], 3, [1, 3]]:
                same(lambda lib, x, split=split, name=name: getattr(lib, name)(x, split),
                     data(*shape))
        same(lambda lib, x, name=name: getattr(x, name)(2), data(4, 4, 4))


# ----- rot90, flips ---------------------------------------------------------------------------
def test_rot90_and_the_flips_match_torch():
    x = data(2, 3, 4)
    for k, dims in [(1, (0, 1)), (-1, (1, 0)), (2, (0, 1)), (3, (0, 2)), (5, [1, 2]),
                    (0, (0, 1)), (4, (2, 0)), (1, (0, 0)), (1, (0, -3)), (1, (0, 1, 2)),
                    (1, (0, 3))]:
        same(lambda lib, x, dims=dims, k=k: lib.rot90(x, k, dims), x)
    same(lambda lib, x: x.rot90(), data(2, 3))
    same(lambda lib, x: lib.rot90(x), data(3))
    for array in [data(2, 3), data(3), np.array(1.0), data(2, 3, 2)]:
        same(lambda lib, x: lib.fliplr(x), array)
        same(lambda lib, x: x.flipud(), array)


# ----- tril_, triu_ ---------------------------------------------------------------------------
def test_tril_and_triu_in_place_follow_the_in_place_rules():
    for name in ["tril", "triu"]:
        for k in [0, 1, -1]:
            array = data(3, 4)
            x, xt = mg.tensor(array), torch.tensor(array)
            expected = getattr(torch, name)(xt, k)
            assert getattr(x, name + "_")(k) is x
            np.testing.assert_array_equal(x.numpy(), expected.numpy())
        # recorded on a non-leaf: the gradient of the kept triangle flows back
        array = data(3, 3)
        leaf, leaf_t = mg.tensor(array, requires_grad=True), torch.tensor(array,
                                                                          requires_grad=True)
        y, yt = leaf * 2, leaf_t * 2
        getattr(y, name + "_")()
        getattr(yt, name + "_")()
        y.sum().backward()
        yt.sum().backward()
        np.testing.assert_array_equal(leaf.grad.numpy(), leaf_t.grad.numpy())
        with pytest.raises(RuntimeError):
            getattr(mg.tensor(data(2, 2), requires_grad=True), name + "_")()


# ----- kron, tensordot, inner, cross ------------------------------------------------------------
def test_kron_tensordot_and_inner_match_torch():
    for a, b in [(data(2, 3), data(4)), (data(2, 2), data(3, 2)), (np.array(2.0), data(3)),
                 (data(2), np.array([1, 2])), (np.arange(4).reshape(2, 2), np.arange(4))]:
        same(lambda lib, a, b: lib.kron(a, b), a, b)
    a, b = data(2, 3, 4), data(3, 4, 5)
    for dims in [2, 1, 0, 3, -1, ([1, 2], [0, 1]), [[1], [0]], ([1], [0]), ([0], [0]),
                 ([-1], [1]), ([2, 1], [1, 0]), ([1], [0, 1])]:
        same(lambda lib, a, b, dims=dims: lib.tensordot(a, b, dims=dims), a, b)
    same(lambda lib, a, b: lib.tensordot(a, b, dims=lib.tensor(2)), a, b)
    same(lambda lib, a, b: lib.tensordot(a, b, 0), data(2), data(3))
    same(lambda lib, a, b: lib.tensordot(a, b, 1), data(2), data(2).astype(np.float32))
    same(lambda lib, a, b: lib.tensordot(a, b, 1), np.ones(2, np.int64), np.ones(2, np.int64))
    for a, b in [(data(2, 3), data(4, 3)), (np.array(2.0), data(4, 3)), (data(3), data(3)),
                 (data(2, 3), data(4, 2)), (data(3), data(3).astype(np.float32)),
                 (np.array(2), data(3)), (data(2, 1, 3), data(3))]:
        same(lambda lib, a, b: lib.inner(a, b), a, b)
        same(lambda lib, a, b: a.inner(b), a, b)


def test_cross_matches_torch_and_its_default_dim():
    for a, b, dim in [(data(4, 3), data(4, 3), 1), (data(3, 2), data(3, 2), 0),
                      (data(3, 4), data(3, 1), 0), (data(2, 3), data(2, 3), -1),
                      (data(3, 3), data(3, 3), None), (data(3, 2), data(3, 2), None),
                      (data(2, 2), data(2, 2), None), (data(3, 2), data(3, 2), 1),
                      (data(4, 3), data(3), -1), (np.ones(3, np.int64), data(3), 0),
                      (np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3) % 4, 1)]:
        same(lambda lib, a, b, dim=dim: lib.cross(a, b, dim=dim), a, b)
    same(lambda lib, a, b: a.cross(b, 1), data(2, 3), data(2, 3))
    with pytest.warns(UserWarning):
        mg.cross(mg.ones(3), mg.ones(3))


# ----- dist, cdist ----------------------------------------------------------------------------
def test_dist_matches_torch():
    a, b = data(2, 3), data(3)
    for p in [2, 1, 3, 0.5, 0, np.inf, -np.inf, -1, 2.5]:
        same(lambda lib, a, b, p=p: lib.dist(a, b, p), a, b, grad=p != 0)   # torch's p=0 backward
    same(lambda lib, a, b: lib.dist(a, b, 0), np.array([np.nan, 0.0, 2.0]), np.zeros(3),
         grad=False)                                                  # raises: values only
    same(lambda lib, a, b: a.dist(b), data(3), data(3))
    same(lambda lib, a, b: lib.dist(a, b), np.array([1, 0, 2]), np.zeros(3, np.int64))
    same(lambda lib, a, b: lib.dist(a, b), np.array([1, 0, 2]), np.zeros(3))
    same(lambda lib, a, b: lib.dist(a, b), np.ones(3, np.float16), np.zeros(3, np.float32))
    for p in [2, 1, np.inf]:                      # the gradient at a zero distance: 0
        same(lambda lib, a, b, p=p: lib.dist(a, b, p), np.ones(3), np.ones(3))


def test_cdist_matches_torch():
    for x1, x2 in [(data(3, 4), data(5, 4)), (data(2, 3, 4), data(5, 4)),
                   (data(2, 1, 3, 2), data(4, 5, 2))]:
        for p in [2.0, 1.0, 0.0, 3.0, np.inf]:
            same(lambda lib, a, b, p=p: lib.cdist(a, b, p), x1, x2, atol=1e-10)
    same(lambda lib, a, b: lib.cdist(a, b), np.ones((2, 3)), np.ones((1, 3)))   # 0 distance
    for x1, x2, p in [(data(4), data(5, 4), 2.0), (data(3, 4), data(5, 3), 2.0),
                      (data(3, 4), data(5, 4), -1.0),
                      (np.ones((3, 4), np.int64), np.ones((5, 4), np.int64), 2.0)]:
        same(lambda lib, a, b, p=p: lib.cdist(a, b, p), x1, x2)


# ----- p-norms: torch's gradient at zero differences, every p ---------------------------------
@pytest.mark.parametrize("p", [3.0, 0.5, 1.5, -1.0, -0.5, 2.5, 1.0, 2.0, np.inf, -np.inf, 0.0])
def test_norm_and_dist_gradients_at_a_zero_element_match_torch(p):
    # abs(x) ** p and sum ** (1/p) would give NaN there: the PNorm node gives torch's 0
    for array in [np.array([0.0, 1.0, -2.0]), np.zeros(3), np.array([[0.0, 0.0], [3.0, -4.0]]),
                  np.array([np.nan, 1.0, 0.0]), np.array([1.0, -1.0, 1.0])]:
        same(lambda lib, x: lib.norm(x, p), array, grad=p != 0)       # torch's p=0: None
        same(lambda lib, x: x.norm(p, dim=-1, keepdim=True), array, grad=p != 0)
    same(lambda lib, x: x.norm(p, dim=(0, 2)), data(3, 4, 2), grad=p != 0)
    same(lambda lib, x: lib.norm(x, p), np.array([1 + 1j, 0, -2 + 0.5j]), grad=p != 0)
    same(lambda lib, x: lib.norm(x, p), np.array([300.0, -400.0, 0.5], np.float16),
         grad=p != 0)                                    # torch's half backward: NaN here
    if p != 0:
        same(lambda lib, a, b: lib.dist(a, b, p), np.array([1.0, 2.0, 3.0]),
             np.array([1.0, 0.0, 5.0]))
        a = np.array([1.0, 2.0])
        same(lambda lib, a: lib.dist(a, a.detach(), p), a)               # distance 0


@pytest.mark.parametrize("p", [3.0, 0.5, 1.5, 1.0, 2.0, np.inf, 0.0])
def test_cdist_gradient_at_a_zero_distance_matches_torch(p):
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    same(lambda lib, a: lib.cdist(a, a, p=p), x)
    same(lambda lib, a, b: lib.cdist(a, b, p=p), np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]]),
         np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 3.0]]))
    # torch's cdist gives each of tied largest differences the whole gradient (its norm
    # shares it)
    same(lambda lib, a, b: lib.cdist(a, b, p=p), np.array([[1.0, 2.0], [1.0, 5.0]]),
         np.array([[1.0, 2.0], [2.0, 6.0]]))


def test_norm_refuses_what_torch_refuses():
    same(lambda lib, x: lib.norm(x), np.array([3, 4]))                       # integer input
    same(lambda lib, x: lib.norm(x), np.array([True]))
    for p in [np.inf, -np.inf, -1.0]:                     # no identity over an empty dim
        same(lambda lib, x, p=p: lib.norm(x, p), np.zeros(0))
        same(lambda lib, x, p=p: lib.norm(x, p, dim=1), np.zeros((2, 0)))
        same(lambda lib, x, p=p: lib.norm(x, p, dim=0), np.zeros((2, 0)))
    same(lambda lib, x: lib.norm(x, 3.0), np.zeros(0))


def test_cdist_dist_and_tensordot_arguments_as_torch_takes_them():
    x = data(2, 3)
    same(lambda lib, a, b: lib.cdist(a, b, compute_mode="foo"), x, x)
    same(lambda lib, a, b: lib.cdist(a, b, compute_mode=None), x, x)
    for mode in ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                 "donot_use_mm_for_euclid_dist"]:
        same(lambda lib, a, b, mode=mode: lib.cdist(a, b, compute_mode=mode), x, data(4, 3),
             atol=1e-10)
    same(lambda lib, a, b: lib.cdist(a, b), x, x.astype(np.float32))          # one dtype
    for p in [np.inf, 2.0, 0.0]:                                               # no columns
        same(lambda lib, a, b, p=p: lib.cdist(a, b, p), np.zeros((2, 0)), np.ones((4, 0)))
    same(lambda lib, a, b: lib.cdist(a, b), x.astype(np.float16), x.astype(np.float16))
    same(lambda lib, a, b: lib.dist(a, b, p=lib.tensor(3.0)), data(3), data(3))
    same(lambda lib, a, b: lib.dist(a, b, p=lib.tensor(3)), data(3), data(3))
    a, b = np.ones([1] * 30), np.ones([1] * 30)                   # 56 dims: 52 letters
    same(lambda lib, a, b: lib.tensordot(a, b, dims=2), a, b)
    same(lambda lib, a, b: lib.tensordot(a, b, dims=1), data(2, 0), data(0, 3))


# ----- complex inputs: var, std, var_mean, std_mean, dist; logsumexp refused --------------------
def complex_gradients_agree(call, *arrays):
    """The gradient of 2·Re + 3·Im of each output of ``call(lib, *inputs)`` into each complex
    input, torch's against mg's (``same`` leaves complex inputs without a gradient)."""
    grads = []
    for lib in (torch, mg):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        loss = 0
        for out in _tensors(call(lib, *inputs)):
            loss = loss + 2 * lib.real(out).sum()
            if "complex" in str(out.dtype):
                loss = loss + 3 * lib.imag(out).sum()
        loss.backward()
        grads.append([np.asarray(t.grad.numpy(), np.complex128) for t in inputs])
    for theirs, ours in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-12)


def test_var_std_and_dist_of_complex_match_torch():
    z = np.array([[1 + 1j, 2], [3 - 2j, 0.5j]])
    for call in [lambda lib, x: lib.var(x), lambda lib, x: lib.std(x, 1),
                 lambda lib, x: lib.var_mean(x, 0), lambda lib, x: lib.norm(x, 3),
                 lambda lib, x: lib.dist(x, x.detach() * 0.5)]:
        complex_gradients_agree(call, z)
    same(lambda lib, x: lib.var(x), z)
    same(lambda lib, x: lib.var(x, 0), z)
    same(lambda lib, x: lib.std(x, 1), z)
    same(lambda lib, x: lib.var_mean(x), z)
    same(lambda lib, x: lib.std_mean(x, dim=1, correction=0), z)
    same(lambda lib, x: lib.var_mean(x), z.astype(np.complex64))
    same(lambda lib, a, b: lib.dist(a, b), np.array([1 + 1j, 2]), np.zeros(2, np.complex128))
    same(lambda lib, a, b: lib.dist(a, b, 3), np.array([1 + 1j, 2]), np.array([0, 1j]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # no ComplexWarning, no wrong value
        with pytest.raises(NotImplementedError, match="complex"):
            mg.logsumexp(mg.tensor([1 + 1j, 2]), 0)


# ----- nansum, nanmean: dtypes, half counts ---------------------------------------------------
def test_nanmean_of_many_halves_and_nansum_dtypes_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # the count no longer overflows fp16
        got = mg.nanmean(mg.full((70000,), 0.5, dtype=mg.float16))
        assert got.dtype == mg.float16 and got.item() == 0.5
        assert mg.nansum(mg.tensor([1.0, np.nan]), dtype=mg.int64).item() == 1
    same(lambda lib, x: lib.nanmean(x), np.full(70000, 1.0, np.float16), grad=False)  # inf
    same(lambda lib, x: lib.nanmean(x, dtype=lib.float32), np.array([1.0, 2.0], np.float16))
    same(lambda lib, x: lib.nanmean(x, dtype=lib.int64), np.array([1.0, 2.0]))
    same(lambda lib, x: lib.nansum(x, dtype=lib.int64), np.array([1.5, 2.5, np.nan]))
    same(lambda lib, x: lib.nansum(x, dtype=lib.int32), np.array([1.0, np.nan]))
    same(lambda lib, x: lib.nansum(x, dtype=lib.int32), np.array([1, 2], np.int32))
    same(lambda lib, x: lib.nansum(x, dtype=lib.float64), np.array([1, 2], np.int32))
    same(lambda lib, x: lib.nansum(x, dtype=lib.bool), np.array([True, True]))
    same(lambda lib, x: lib.nansum(x), np.array([1, 2], np.int32))


# ----- an empty tuple of dims reduces every dim, as torch's reductions --------------------------
@pytest.mark.parametrize("dims", [(), []], ids=["tuple", "list"])
def test_an_empty_dim_list_reduces_every_dim(dims):
    x = np.array([[1.0, np.nan, 2.0], [0.0, 3.0, -1.0]])
    y = data(2, 3)
    for name in ["sum", "mean", "amax", "amin", "nansum", "nanmean", "count_nonzero"]:
        same(lambda lib, a, name=name: getattr(lib, name)(a, dim=dims), x if "nan" in name
             else y)
    same(lambda lib, a: a.sum(dims, keepdim=True), y)
    same(lambda lib, a: a.norm(3, dim=dims), y)
    # var's value only: torch's backward divides by N - 1 with N = 1 there (inf)
    for name in ["var", "std", "var_mean", "std_mean"]:
        same(lambda lib, a, name=name: getattr(lib, name)(a, dim=dims), y, grad=False)
    # torch's logsumexp fails on it; every dim, as the others
    got = mg.logsumexp(mg.tensor(y), dims)
    np.testing.assert_allclose(got.numpy(), torch.logsumexp(torch.tensor(y), (0, 1)).numpy())
    # not a reduction: nothing squeezed, nothing reduced by any/all, as torch
    same(lambda lib, a: a.squeeze(dim=dims), np.zeros((1, 2, 1)))
    same(lambda lib, a: lib.any(a > 0, dim=dims), y, grad=False)


# ----- the p-norm's order as a tensor, its one home for the total norm ------------------------
def test_norm_takes_a_0d_tensor_p_as_dist_and_torch_do():
    x = data(3, 4)
    for p, dtype in [(1.0, np.float32), (3, np.int64), (np.inf, np.float64), (0.5, np.float64),
                     (2, np.uint8)]:
        same(lambda lib, a, p=p, dtype=dtype: a.norm(lib.tensor(np.array(p, dtype))), x)
        same(lambda lib, a, p=p, dtype=dtype: lib.norm(a, lib.tensor(np.array(p, dtype)),
                                                       dim=1, keepdim=True), x)
        same(lambda lib, a, p=p, dtype=dtype: lib.dist(a, a.detach() * 0,
                                                       lib.tensor(np.array(p, dtype))), x)
    same(lambda lib, a: a.norm(lib.tensor([1.0])), x)             # not 0-d: torch's TypeError
    for lib in (torch, mg):                     # a string is a matrix norm's order
        with pytest.raises(RuntimeError, match="Order 2 not supported"):
            lib.tensor(x).norm("2")


class _MaxWithoutInitial(np.ndarray):
    # cupy.ndarray.max's signature: no `initial`
    def max(self, axis=None, out=None, keepdims=False):
        return np.ndarray.max(self, axis=axis, out=out, keepdims=keepdims)


def test_the_inf_norm_over_no_element_is_zero_as_torchs_cdist():
    # the largest |x| of no element: 0, without `initial` (which CuPy's max lacks)
    same(lambda lib, a, b: lib.cdist(a, b, p=np.inf), np.zeros((2, 0)), np.zeros((3, 0)))
    same(lambda lib, a, b: lib.cdist(a, b, p=np.inf), np.zeros((0, 2)), np.zeros((3, 2)))
    from microgradnorm.ops.vector_norm import p_norm
    x = np.array([[1.0, -3.0], [np.nan, 0.0]])
    for array, axis, expected in [(x, (1,), [3.0, np.nan]), (x, None, np.nan),
                                  (np.zeros((2, 0)), (1,), [0.0, 0.0]),
                                  (np.zeros((0, 2)), (1,), np.zeros(0))]:
        got = p_norm(array.view(_MaxWithoutInitial), np.inf, axis)
        np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, np.inf, 0.0, -1.0])
def test_the_total_norm_of_half_gradients_computes_in_float32_as_torchs(norm_type):
    # each tensor's norm as torch.linalg.vector_norm's, in float32: the squares of 1000
    # tens sum past float16's max (inf in float16)
    values = [np.full(1000, 10.0, np.float16), np.array([3.0, -4.0, 0.0], np.float16)]
    got = mg.nn.utils.get_total_norm([mg.tensor(v) for v in values], norm_type)
    expected = torch.nn.utils.get_total_norm([torch.tensor(v) for v in values], norm_type)
    assert str(got.dtype) == "torch.float16" and expected.dtype == torch.float16
    assert got.item() == expected.item() or np.isnan(got.item()) and expected.isnan()
