"""More of torch's indexing vocabulary against PyTorch: the writes out of place and in
place (scatter, scatter_add, index_add, index_fill, index_copy; ops/indexing.py, with their
``_`` forms in ops/arrange.py), the picks (take, take_along_dim, masked_select) and the index
constants (argwhere, unique, bincount, searchsorted, bucketize, isin; ops/search.py):
float64 values and gradients, dtypes, 0-d and empty tensors, and torch's exception classes
(an index out of range is ``ops.OutOfRangeError`` here, an IndexError: docs/pytorch.md)."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_vocabulary_more import data, same

import microgradnorm as mg
from microgradnorm.ops import OutOfRangeError


def ints(*values):
    return np.array(values, dtype=np.int64)


# ----- scatter, scatter_add -------------------------------------------------------------------
def test_scatter_values_and_gradients_match_torch():
    index = ints(0, 1, 2, 0).reshape(1, 4)
    # torch's backward refuses a src larger than index (its gradient has index's shape):
    # values only there, and the gradient where src has index's shape
    for dim, idx, src_shape in [(0, index, (3, 4)), (1, ints(3, 0, 1).reshape(1, 3), (2, 5)),
                                (0, ints(2, 0).reshape(2, 1), (2, 2)), (-1, index, (1, 4)),
                                (1, np.array([[3, 0], [1, 1], [2, 2]]), (3, 2))]:
        same(lambda lib, x, s, dim=dim, idx=idx: lib.scatter(x, dim, lib.tensor(idx), s),
             data(3, 4), data(*src_shape), grad=src_shape == idx.shape)
        same(lambda lib, x, s, dim=dim, idx=idx: x.scatter(dim, lib.tensor(idx), src=s), data(3, 4),
             data(*src_shape), grad=src_shape == idx.shape)
        same(lambda lib, x, dim=dim, idx=idx: lib.scatter(x, dim, lib.tensor(idx), 5.0), data(3, 4))
        same(lambda lib, x, dim=dim, idx=idx: x.scatter(dim, lib.tensor(idx), value=-1), data(3, 4))
    same(lambda lib, x, s: lib.scatter(x, 0, lib.tensor(0), s), np.array(1.0), np.array(5.0))
    same(lambda lib, x, s: lib.scatter(x, 0, lib.tensor(np.zeros((0, 4), np.int64)), s),
         data(3, 4), data(3, 4), grad=False)                  # torch's backward fails
    same(lambda lib, x: lib.scatter(x, 0, lib.tensor(ints(1)), 2.5), ints(0, 0, 0))
    same(lambda lib, x: lib.scatter(x, 0, lib.tensor(index.astype(np.int32)), 1.0),
         data(3, 4))


def test_scatter_with_reduce_matches_torch():
    index = ints(0, 1, 0, 0).reshape(1, 4)
    same(lambda lib, x, s: lib.scatter(x, 1, lib.tensor(index), s, reduce="add"),
         data(2, 4), data(2, 4), grad=False)
    same(lambda lib, x, s: lib.scatter(x, 1, lib.tensor(index), s, reduce="multiply"),
         data(2, 4), data(2, 4), grad=False)
    same(lambda lib, x: lib.scatter(x, 1, lib.tensor(index), 2.0, reduce="add"), data(2, 4),
         grad=False)
    same(lambda lib, x, s: lib.scatter(x, 1, lib.tensor(index), s, reduce="mean"),
         data(2, 4), data(2, 4), grad=False)


def test_scatter_and_scatter_add_refuse_what_torch_refuses():
    x, index = data(3, 4), ints(0, 1, 2, 0).reshape(1, 4)
    bad = [(ints(0, 0, 0, 0, 0).reshape(1, 5), (3, 4)), (np.zeros((4, 4), np.int64), (4, 4)),
           (np.zeros((3, 4), np.int64), (2, 4)), (ints(0), (3, 4)),
           (np.array([[0.0]]), (3, 4))]
    for name in ["scatter", "scatter_add"]:
        for idx, src_shape in bad:
            same(lambda lib, x, s, idx=idx, name=name:
                 getattr(lib, name)(x, 0, lib.tensor(idx), s), x, data(*src_shape))
        same(lambda lib, x, s, name=name: getattr(lib, name)(x, 0, lib.tensor(index), s), x,
             data(3, 4).astype(np.float32))
        same(lambda lib, x, s, name=name: getattr(lib, name)(x, 2, lib.tensor(index), s), x,
             data(3, 4))
        for idx in [ints(3), ints(-1)]:           # out of range: torch's RuntimeError here
            with pytest.raises(OutOfRangeError):
                getattr(mg, name)(mg.tensor(x), 0, mg.tensor(idx.reshape(1, 1)),
                                  mg.tensor(data(1, 1)))
    same(lambda lib, x, s: lib.scatter(x, 0, lib.tensor(index), s), x, np.array(2.0))
    same(lambda lib, x: lib.scatter_add(x, 0, lib.tensor(index), 1.0), x)
    same(lambda lib, x: lib.scatter(x, 0, lib.tensor(ints(0)), 300), np.zeros(3, np.uint8))


def test_scatter_add_values_and_gradients_match_torch():
    for dim, idx, src_shape in [(0, ints(0, 1, 2, 0).reshape(1, 4), (3, 4)),
                                (1, ints(0, 0, 0).reshape(1, 3), (3, 4)),
                                (1, ints(0, 0, 0).reshape(1, 3), (1, 3)),
                                (1, np.array([[3, 3, 0], [1, 1, 1]]), (2, 3))]:
        same(lambda lib, x, s, dim=dim, idx=idx: lib.scatter_add(x, dim, lib.tensor(idx), s),
             data(3, 4), data(*src_shape), grad=src_shape == idx.shape)
        same(lambda lib, x, s, dim=dim, idx=idx: x.scatter_add(dim, lib.tensor(idx), s), data(3, 4),
             data(*src_shape), grad=src_shape == idx.shape)


def test_scatter_sends_src_the_gathered_gradient_and_nothing_beyond_index():
    # what torch's formula gives (gather(grad)), padded with 0 where index does not reach
    for name in ["scatter", "scatter_add"]:
        x, src = mg.tensor(data(3, 4), requires_grad=True), mg.tensor(data(3, 4),
                                                                      requires_grad=True)
        index = ints(2, 0, 1, 2).reshape(1, 4)
        upstream = data(3, 4)
        getattr(mg, name)(x, 0, mg.tensor(index), src).backward(upstream)
        expected = np.zeros((3, 4))
        expected[0] = upstream[index[0], np.arange(4)]
        np.testing.assert_array_equal(src.grad.numpy(), expected)
        written = np.zeros((3, 4), bool)
        written[index[0], np.arange(4)] = name == "scatter"
        np.testing.assert_array_equal(x.grad.numpy(), np.where(written, 0, upstream))
    same(lambda lib, x, s: lib.scatter_add(x, 0, lib.tensor(ints(1, 1, 0)), s), ints(0, 0),
         ints(1, 2, 3))


# ----- index_add, index_fill, index_copy --------------------------------------------------------
def test_index_add_matches_torch():
    for dim, idx, src_shape in [(0, ints(0, 0, 2), (3, 4)), (1, ints(3, 0), (3, 2)),
                                (-1, ints(1), (3, 1)), (0, ints(0), (1, 4))]:
        same(lambda lib, x, s, dim=dim, idx=idx: lib.index_add(x, dim, lib.tensor(idx), s),
             data(3, 4), data(*src_shape))
        same(lambda lib, x, s, dim=dim, idx=idx: x.index_add(dim, lib.tensor(idx), s,
                                                             alpha=2.5),
             data(3, 4), data(*src_shape))
    same(lambda lib, x, s: lib.index_add(x, 0, lib.tensor(ints(0)), s, alpha=2.5),
         ints(0, 0, 0), ints(3))
    same(lambda lib, x, s: lib.index_add(x, 0, lib.tensor(ints(0)), s), np.array(1.0),
         np.array(2.0))
    same(lambda lib, x, s: lib.index_add(x, 0, lib.tensor(0), s), np.array(1.0),
         np.array(2.0))
    same(lambda lib, x, s: lib.index_add(x, 0, lib.tensor(ints(0)), s),
         np.zeros(3, bool), np.ones(1, bool))
    x = data(3, 4)
    for idx, src in [(ints(0, 0), data(3, 4)), (np.array([[0, 0, 2]]), data(3, 4)),
                     (ints(0, 0, 2), data(3, 4).astype(np.float32)), (ints(0), data(4)),
                     (ints(0), data(1, 3)), (np.array([0.0]), data(1, 4))]:
        same(lambda lib, x, s, idx=idx: lib.index_add(x, 0, lib.tensor(idx), s), x, src)
    with pytest.raises(OutOfRangeError):
        mg.index_add(mg.tensor(x), 0, mg.tensor(ints(3)), mg.tensor(data(1, 4)))
    rows = np.random.default_rng(1).integers(-20, 20, 300)     # the batched sums' path
    same(lambda lib, x, s: lib.index_add(x, 0, lib.tensor(rows % 20), s), data(20, 3),
         data(300, 3), atol=1e-10)


def test_index_fill_and_index_copy_match_torch():
    for dim, idx in [(1, ints(0, 2)), (0, ints(2, 2)), (1, ints(-1)), (-1, ints(0, 0, 3))]:
        same(lambda lib, x, dim=dim, idx=idx: lib.index_fill(x, dim, lib.tensor(idx), -1.0),
             data(3, 4))
        same(lambda lib, x, v, dim=dim, idx=idx: x.index_fill(dim, lib.tensor(idx), v), data(3, 4),
             np.array(2.0), grad=idx.min() >= 0)  # a 0-d value: the sum of its places
        # (torch's backward for a tensor value fails on a negative index: values only)
    same(lambda lib, x: lib.index_fill(x, 0, lib.tensor(ints(1)), 2.5), ints(0, 0, 0))
    same(lambda lib, x: lib.index_fill(x, 0, lib.tensor(0), 2), np.array(1.0))
    same(lambda lib, x: lib.index_fill(x, 0, lib.tensor(ints(0)), 1), np.zeros(3, bool))
    same(lambda lib, x: lib.index_fill(x, 0, lib.tensor(ints(0)), 300), np.zeros(3, np.uint8))
    same(lambda lib, x, v: lib.index_fill(x, 1, lib.tensor(ints(0)), v), data(3, 4), data(1))
    same(lambda lib, x: lib.index_fill(x, 0, lib.tensor([[0]]), 1.0), data(3, 4))
    for dim, idx, src_shape in [(0, ints(2, 0), (2, 4)), (1, ints(3), (3, 1)),
                                (-1, ints(1, 0, 2, 3), (3, 4))]:
        same(lambda lib, x, s, dim=dim, idx=idx: lib.index_copy(x, dim, lib.tensor(idx), s),
             data(3, 4), data(*src_shape))
        same(lambda lib, x, s, dim=dim, idx=idx: x.index_copy(dim, lib.tensor(idx), s), data(3, 4),
             data(*src_shape))
    same(lambda lib, x, s: lib.index_copy(x, 0, lib.tensor(ints(0)), s), np.array(1.0),
         np.array(3.0))
    for idx, src in [(ints(1), data(1, 3)), (ints(2, 0), data(2, 4).astype(np.float32))]:
        same(lambda lib, x, s, idx=idx: lib.index_copy(x, 0, lib.tensor(idx), s), data(3, 4), src)
    for name in ["index_fill", "index_copy"]:
        with pytest.raises(IndexError):
            getattr(mg, name)(mg.tensor(data(3, 4)), 1, mg.tensor(ints(4)),
                              1.0 if name == "index_fill" else mg.tensor(data(3, 1)))


# ----- the in-place forms ---------------------------------------------------------------------
IN_PLACE = [
    ("scatter_", lambda lib: (0, lib.tensor(ints(2, 0, 1, 0).reshape(1, 4)),
                              lib.tensor(np.arange(1.0, 5.0).reshape(1, 4)))),
    ("scatter_add_", lambda lib: (1, lib.tensor(ints(0, 0, 3).reshape(1, 3)),
                                  lib.tensor(np.ones((1, 3))))),
    ("index_add_", lambda lib: (0, lib.tensor(ints(2, 2)), lib.tensor(np.ones((2, 4))))),
    ("index_fill_", lambda lib: (1, lib.tensor(ints(0, 3)), -2.0)),
    ("index_copy_", lambda lib: (0, lib.tensor(ints(1)), lib.tensor(np.full((1, 4), 7.0)))),
]


@pytest.mark.parametrize("name,arguments", IN_PLACE, ids=[n for n, _ in IN_PLACE])
def test_the_in_place_index_writes_follow_the_in_place_rules(name, arguments):
    array = data(3, 4)
    x, xt = mg.tensor(array), torch.tensor(array)
    assert getattr(x, name)(*arguments(mg)) is x
    getattr(xt, name)(*arguments(torch))
    np.testing.assert_array_equal(x.numpy(), xt.numpy())
    if name == "index_add_":
        x.index_add_(0, mg.tensor(ints(0)), mg.tensor(np.ones((1, 4))), alpha=3)
        xt.index_add_(0, torch.tensor(ints(0)), torch.tensor(np.ones((1, 4))), alpha=3)
        np.testing.assert_array_equal(x.numpy(), xt.numpy())
    # recorded on a non-leaf: gradients as torch's
    leaf, leaf_t = mg.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)
    y, yt = leaf * 3, leaf_t * 3
    getattr(y, name)(*arguments(mg))
    getattr(yt, name)(*arguments(torch))
    upstream = data(3, 4)
    y.backward(upstream)
    yt.backward(torch.tensor(upstream))
    np.testing.assert_allclose(leaf.grad.numpy(), leaf_t.grad.numpy(), atol=1e-12)
    with pytest.raises(RuntimeError):                  # a leaf that requires grad: refused
        getattr(mg.tensor(array, requires_grad=True), name)(*arguments(mg))
    before = x.numpy().copy()
    with pytest.raises((RuntimeError, TypeError)):     # a failed call changes nothing
        getattr(x, name)(0, mg.tensor(np.array([[0.5]])), 1.0)
    np.testing.assert_array_equal(x.numpy(), before)


def test_scatter_in_place_sends_the_gradient_to_src():
    src, src_t = mg.tensor(data(1, 4), requires_grad=True), None
    src_t = torch.tensor(src.detach().numpy(), requires_grad=True)
    x, xt = mg.zeros(3, 4, dtype=mg.float64), torch.zeros(3, 4, dtype=torch.float64)
    index = ints(2, 0, 1, 2).reshape(1, 4)
    x.scatter_(0, mg.tensor(index), src)
    xt.scatter_(0, torch.tensor(index), src_t)
    (x * x).sum().backward()
    (xt * xt).sum().backward()
    np.testing.assert_allclose(src.grad.numpy(), src_t.grad.numpy(), atol=1e-12)


# ----- take, take_along_dim, masked_select ------------------------------------------------------
def test_take_matches_torch():
    x = data(2, 3)
    for idx in [np.array([[0, 5], [-1, 2]]), ints(1, 1, 1), np.array(4), np.zeros(0, np.int64),
                ints(1).astype(np.int32)]:
        same(lambda lib, x, idx=idx: lib.take(x, lib.tensor(idx)), x)
        same(lambda lib, x, idx=idx: x.take(lib.tensor(idx)), x)
    same(lambda lib, x: lib.take(x, lib.tensor(np.zeros(0, np.int64))), np.zeros(0))
    same(lambda lib, x: lib.take(x, lib.tensor(ints(0))), np.array(3.0))
    for idx in [ints(6), ints(-7)]:
        with pytest.raises(IndexError):
            mg.take(mg.tensor(x), mg.tensor(idx))
    with pytest.raises(IndexError):
        mg.take(mg.zeros(0), mg.tensor(ints(0)))


def test_take_along_dim_matches_torch():
    x = data(2, 3)
    for idx, dim in [(np.array([[0, 2], [1, 0]]), 1), (np.array([[0], [2]]), 1),
                     (np.array([[0, 1, 1]]), 0), (np.array([[1, 0, 1], [0, 0, 0]]), 0),
                     (np.array([[-1], [-3]]), 1), (np.array([[[0]]]), 0), (ints(0), 0),
                     (np.array([[5, 0], [1, 1]]), None), (ints(2, 1), None),
                     (np.array([[0]], np.int32), 1), (np.array([[0.0]]), 1),
                     (np.array([[0, 1], [1, 0]]), -2), (np.zeros((2, 0), np.int64), 1)]:
        same(lambda lib, x, dim=dim, idx=idx: lib.take_along_dim(x, lib.tensor(idx), dim), x)
        same(lambda lib, x, dim=dim, idx=idx: x.take_along_dim(lib.tensor(idx), dim=dim), x)
    same(lambda lib, x: lib.take_along_dim(x, x.argmax(1, keepdim=True), 1), x)
    same(lambda lib, x: lib.take_along_dim(x, x.argsort(1), 1), data(3, 4, 2))
    same(lambda lib, x: lib.take_along_dim(x, lib.tensor(np.array(0)), 0), np.array(3.0))
    for idx, dim in [(np.array([[3]]), 1), (np.array([[-4]]), 1), (ints(-1), None),
                     (ints(6), None)]:             # torch: garbage or RuntimeError
        with pytest.raises(OutOfRangeError):
            mg.take_along_dim(mg.tensor(x), mg.tensor(idx), dim)


def test_masked_select_matches_torch():
    x = data(2, 3)
    for mask in [x > 0, np.array([True, False, True]), np.ones((2, 1), bool),
                 np.zeros((2, 3), bool), np.ones((4, 2, 3), bool) & (data(4, 2, 3) > 0),
                 np.ones((2, 3), np.uint8), np.ones(4, bool), np.array(True)]:
        same(lambda lib, x, mask=mask: lib.masked_select(x, lib.tensor(mask)), x)
        same(lambda lib, x, mask=mask: x.masked_select(lib.tensor(mask)), x)
    same(lambda lib, x: lib.masked_select(x, lib.tensor(np.ones((2, 3), bool))), data(3))
    same(lambda lib, x: lib.masked_select(x, lib.tensor(np.array(True))), np.array(1.0))
    same(lambda lib, x: lib.masked_select(x, lib.tensor(np.ones(2, bool))), np.array(1.0))
    same(lambda lib, x: lib.masked_select(x, lib.tensor(ints(1, 0) > 0)), ints(3, 4))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_the_index_writes_and_picks_over_drawn_shapes_match_torch(shape, draw):
    axis = draw.draw(st.integers(0, len(shape) - 1))
    seed = draw.draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    index = rng.integers(0, shape[axis], size=shape)         # repeats: they accumulate
    same(lambda lib, x, s: lib.scatter_add(x, axis, lib.tensor(index), s), data(*shape),
         data(*shape))
    same(lambda lib, x: lib.take_along_dim(x, lib.tensor(index), axis), data(*shape))
    rows = rng.integers(0, shape[axis], size=3)
    source = shape[:axis] + [3] + shape[axis + 1:]
    same(lambda lib, x, s: lib.index_add(x, axis, lib.tensor(rows), s, alpha=0.5),
         data(*shape), data(*source))


# ----- index constants ------------------------------------------------------------------------
def test_argwhere_matches_torch():
    for array in [np.array([[0, 1], [2, 0]]), np.array(1.0), np.array(0.0),
                  np.array([np.nan, 0.0]), np.zeros((0, 3)), np.array([True, False, True])]:
        same(lambda lib, x: lib.argwhere(x), array, grad=False)
        same(lambda lib, x: x.argwhere(), array, grad=False)


@pytest.mark.parametrize("inverse,counts", [(False, False), (True, False), (False, True),
                                            (True, True)])
def test_unique_matches_torch(inverse, counts):
    nan = np.nan
    for array, dim in [(np.array([3, 1, 2, 1, 5, 0]), None), (np.array([[1, 2], [1, 2], [0, 5]]),
                                                             None),
                       (np.array([[1, 2], [1, 2], [0, 5]]), 0), (np.array([[1, 2], [1, 2]]), 1),
                       (np.array([[2, 1], [2, 0], [1, 9]]), -2),
                       (np.array([3.0, nan, 1.0, nan, 3.0]), None), (np.array(3.0), None),
                       (np.zeros(0), None), (np.zeros((0, 2)), 0),
                       (np.array([True, False, True]), None), (np.array(3.0), 0),
                       (np.array([[1.0, nan], [1.0, nan]]), 0), (np.arange(6).reshape(2, 3), 2)]:
        for sorted_ in [True, False]:
            same(lambda lib, x, dim=dim, sorted_=sorted_: lib.unique(
                x, sorted=sorted_, return_inverse=inverse, return_counts=counts, dim=dim),
                array, grad=False)
    same(lambda lib, x: x.unique(return_counts=counts), np.array([2, 2, 1]), grad=False)
    assert not mg.unique(mg.tensor([1.0, 2.0], requires_grad=True)).requires_grad


def test_bincount_matches_torch():
    for array in [ints(1, 1, 3), np.zeros(0, np.int64), np.array([1], np.uint8), ints(-1),
                  np.array([[1]]), np.array([1.0]), np.array([True])]:
        same(lambda lib, x: lib.bincount(x), array, grad=False)
        same(lambda lib, x: x.bincount(minlength=6), array, grad=False)
    for weights in [np.array([0.5, 1.0, 2.0]), np.array([0.5, 1.0, 2.0], np.float32),
                    ints(1, 1, 2), np.ones(3, np.float16), np.ones(3, bool), np.ones(2)]:
        same(lambda lib, x, w: lib.bincount(x, w), ints(1, 1, 3), weights, grad=False)
    same(lambda lib, x: lib.bincount(x, minlength=-1), ints(1), grad=False)


def test_searchsorted_and_bucketize_match_torch():
    boundaries = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    values = np.array([3.0, 6.0, 9.0, 10.0, 0.0, np.nan])
    for kwargs in [{}, {"right": True}, {"side": "right"}, {"side": "left"},
                   {"out_int32": True}, {"right": True, "side": "left"}, {"side": "middle"}]:
        same(lambda lib, s, v, kwargs=kwargs: lib.searchsorted(s, v, **kwargs), boundaries, values,
             grad=False)
    rows = np.array([[1.0, 3.0], [2.0, 4.0]])
    for v in [np.array([[2.0], [3.0]]), np.array([2.0]), np.array([[2.0]]),
              np.array([[0.0, 5.0, 2.0], [4.0, 4.0, 1.0]])]:
        same(lambda lib, s, v: lib.searchsorted(s, v), rows, v, grad=False)
    for v in [4.0, 4, np.array(4.0), ints(4)]:
        same(lambda lib, s, v: lib.searchsorted(s, v), boundaries, v, grad=False)
    same(lambda lib, s, v: lib.searchsorted(s, v), np.array(1.0), np.array([2.0]), grad=False)
    same(lambda lib, s, v: lib.searchsorted(s, v, sorter=lib.tensor(ints(1, 2, 0))),
         np.array([3.0, 1.0, 2.0]), np.array([2.0, 0.0, 4.0]), grad=False)
    for v in [np.array([[3.0, 6.0], [9.0, 10.0]]), np.array(3.0), 3, 3.5]:
        for right in [False, True]:
            same(lambda lib, v, b, right=right: lib.bucketize(v, b, right=right), v, boundaries,
                 grad=False)
    same(lambda lib, v, b: lib.bucketize(v, b, out_int32=True), np.array(3.0), boundaries,
         grad=False)
    same(lambda lib, v, b: lib.bucketize(v, b), np.array([3.0]), np.ones((2, 2)), grad=False)


def test_isin_matches_torch():
    for elements, tests in [(np.array([[1, 2], [3, 4]]), ints(2, 3)), (np.array(2), ints(2, 3)),
                            (np.array([1.0, np.nan]), np.array([np.nan, 1.0])),
                            (ints(1, 2), np.array([2.5, 1.0])), (ints(1, 2), 2), (2, ints(1, 2)),
                            (np.array([True]), ints(1)), (np.zeros(0), ints(1))]:
        for invert in [False, True]:
            same(lambda lib, e, t, invert=invert: lib.isin(e, t, invert=invert), elements,
                 tests, grad=False)
    same(lambda lib: lib.isin(2, 3))


# ----- the index writes: the target as its own source, values a dtype cannot hold --------------
@pytest.mark.parametrize("name", ["scatter_", "scatter_add_"])
def test_an_in_place_write_of_a_tensor_into_itself_sends_the_old_values_their_gradient(name):
    # the node reads x before its write; torch refuses the overlap, its result on a copy of x
    # is what the write means
    index, upstream = ints(2, 1, 0), np.array([1.0, 2.0, 3.0])
    w, wt = mg.arange(3.0).requires_grad_(), torch.arange(3.0, dtype=torch.float64)
    wt.requires_grad_()
    x, xt = w * 1, wt * 1
    getattr(x, name)(0, mg.tensor(index), x)
    getattr(xt, name)(0, torch.tensor(index), xt.clone())
    np.testing.assert_array_equal(x.detach().numpy(), xt.detach().numpy())
    x.backward(mg.tensor(upstream, dtype=mg.float32))
    xt.backward(torch.tensor(upstream))
    np.testing.assert_array_equal(w.grad.numpy(), wt.grad.numpy())   # [3, 2, 1], [4, 4, 4]


def test_fill_values_out_of_the_dtypes_range_raise_torchs_error_without_a_warning():
    index = ints(1)
    for dtype, value in [(np.float16, 1e6), (np.float16, 70000), (np.float16, 65519.0),
                         (np.float32, 1e39), (np.uint8, -256), (np.uint8, -1.0),
                         (np.int8, 127.9), (np.int8, 200)]:
        for call in [lambda lib, x, v: lib.scatter(x, 0, lib.tensor(index), v),
                     lambda lib, x, v: x.index_fill(0, lib.tensor(index), v)]:
            same(lambda lib, x, call=call, value=value: call(lib, x, value),
                 np.zeros(3, dtype))
            with warnings.catch_warnings():
                warnings.simplefilter("error")                # no RuntimeWarning leaks
                with pytest.raises(RuntimeError, match="overflow"):
                    call(mg, mg.zeros(3, dtype=dtype), value)
    for dtype, value in [(np.float16, np.inf), (np.float16, np.nan), (np.float16, 65504.0),
                         (np.uint8, -1), (np.uint8, -255), (np.uint8, 2.7), (np.int8, -128)]:
        same(lambda lib, x, value=value: x.index_fill(0, lib.tensor(index), value),
             np.zeros(3, dtype))                              # -1 in uint8 wraps to 255
        same(lambda lib, x, value=value: lib.scatter(x, 0, lib.tensor(index), value),
             np.zeros(3, dtype))
    same(lambda lib, x, v: x.index_fill(0, lib.tensor(index), v.double()), np.zeros(3),
         np.array(1e39), grad=False)                          # a 0-d tensor value too
    same(lambda lib, x: x.index_fill(0, lib.tensor(index), 1 + 2j), np.zeros(3, np.complex64))
    same(lambda lib, x: x.index_fill(0, lib.tensor(index), 1 + 2j), np.zeros(3))


def test_index_add_of_bool_through_the_batched_path_matches_torch():
    rows = np.arange(300) % 5                                 # 256 or more: sorted sums
    same(lambda lib, x, s: lib.index_add(x, 0, lib.tensor(rows), s), np.zeros(5, bool),
         np.ones(300, bool))
    same(lambda lib, x, s: lib.index_add(x, 0, lib.tensor(rows), s), np.zeros((5, 2), bool),
         np.arange(600).reshape(300, 2) % 3 == 0)


def test_scatter_multiply_runs_without_a_graph():
    index = ints(2)
    for lib in (torch, mg):
        x = lib.tensor([0.0, 1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            out = x.scatter(0, lib.tensor(index), 5.0, reduce="multiply")
            assert out.tolist() == [0.0, 1.0, 10.0] and not out.requires_grad
            w, src = lib.tensor([0.0, 1.0, 2.0]), lib.tensor([5.0], requires_grad=True)
            w.scatter_(0, lib.tensor(index), src, reduce="multiply")
            assert w.tolist() == [0.0, 1.0, 10.0]
        with pytest.raises(RuntimeError):   # recorded: no derivative (torch's at backward)
            x.scatter(0, lib.tensor(index), 5.0, reduce="multiply").sum().backward()


def test_scatter_takes_a_0d_input_and_a_0d_index_as_1d_as_torch():
    for idx in [ints(0), ints(0, 0), np.array(0)]:
        same(lambda lib, x, idx=idx: lib.scatter(x, 0, lib.tensor(idx), 5.0), np.array(1.0))
        same(lambda lib, x, s, idx=idx: lib.scatter_add(x, 0, lib.tensor(idx), s),
             np.array(1.0), np.array([5.0, 6.0]), grad=False)
        same(lambda lib, x, s, idx=idx: lib.scatter(x, -1, lib.tensor(idx), s), np.array(1.0),
             np.array(5.0), grad=False)
    same(lambda lib, x: lib.scatter(x, 0, lib.tensor(1), 5.0), data(3))
    same(lambda lib, x, s: lib.scatter_add(x, 0, lib.tensor(1), s), data(3), data(2),
         grad=False)                          # torch's backward fails on the 0-d index
    same(lambda lib, x, s: lib.scatter(x, 0, lib.tensor(0), s), data(2, 3), data(2, 3))
    with pytest.raises(OutOfRangeError):                     # a 0-d input holds index 0
        mg.scatter(mg.tensor(1.0), 0, mg.tensor(ints(1)), mg.tensor([5.0]))


@pytest.mark.parametrize("name", ["scatter", "scatter_add", "index_add", "index_copy", "take"])
def test_an_index_changed_in_place_before_backward_raises_as_torch(name):
    index = ints(0, 2) if name.startswith(("index", "take")) else np.array([[0, 2], [1, 0]])
    for lib in (torch, mg):
        x = lib.tensor(data(3, 2), requires_grad=True)
        source = lib.tensor(data(2, 2), requires_grad=True)
        i = lib.tensor(index)
        y = x.take(i) if name == "take" else getattr(x, name)(0, i, source)
        i.add_(0)
        with pytest.raises(RuntimeError, match="modified"):
            y.sum().backward()


# ----- search: numbers in the tensor's dtype, torch's binary search, sorter --------------------
def test_numbers_beside_a_tensor_are_compared_in_its_dtype():
    f32 = np.array([0.1, 0.2], np.float32)
    for right in [False, True]:
        same(lambda lib, s, right=right: lib.searchsorted(s, 0.1, right=right), f32, grad=False)
        same(lambda lib, s, right=right: lib.bucketize(0.1, s, right=right), f32, grad=False)
        same(lambda lib, s, v, right=right: lib.searchsorted(s, v, right=right), f32,
             np.array(0.1), grad=False)                  # a 0-d float64: float32 too
        same(lambda lib, s, v, right=right: lib.searchsorted(s, v, right=right), f32,
             np.array([0.1]), grad=False)                # dims: float64
    same(lambda lib, s: lib.searchsorted(s, 2.5), np.array([1, 2, 3]), grad=False)
    same(lambda lib, s, v: lib.searchsorted(s, v), np.array([1.0, 2.0], np.float32),
         np.array([1, 2]), grad=False)
    same(lambda lib, e: lib.isin(e, 0.2), f32, grad=False)
    same(lambda lib, t: lib.isin(0.1, t), np.array([0.1], np.float32), grad=False)
    same(lambda lib, e, t: lib.isin(e, t), f32, np.array([0.2]), grad=False)
    same(lambda lib, e, t: lib.isin(e, t), np.array([16777217]), np.array([16777216.0],
                                                                            np.float32),
         grad=False)                                     # compared in float32: equal
    same(lambda lib, e: lib.isin(e, 2.5), np.array([1, 2]), grad=False)
    same(lambda lib, e, t: lib.isin(e, t), np.array([1 + 1j]), np.array([1 + 1j]), grad=False)
    same(lambda lib, s, v: lib.searchsorted(s, v), np.array([1 + 1j]), np.array([1j]),
         grad=False)


def test_searchsorted_follows_torchs_binary_search_and_checks_the_sorter():
    nan = np.nan
    for boundaries in [np.array([1.0, 2.0, nan]), np.array([1.0, nan, 3.0, 4.0]),
                       np.array([nan, nan])]:
        for right in [False, True]:
            same(lambda lib, s, v, right=right: lib.searchsorted(s, v, right=right),
                 boundaries, np.array([5.0, nan, 1.5, 0.0, 3.5, 1.0]), grad=False)
    for boundaries, values in [(np.zeros((2, 0)), np.zeros((2, 1))),
                               (np.zeros((0, 3)), np.zeros((0, 1))),
                               (np.zeros((0, 3)), np.zeros((0, 4))), (np.zeros(0), np.ones(3)),
                               (np.zeros((2, 3, 0)), np.zeros((2, 3, 2)))]:
        same(lambda lib, s, v: lib.searchsorted(s, v), boundaries, values, grad=False)
    unsorted = np.array([3.0, 1.0, 2.0])
    for order in [ints(1, 2), ints(1, 2, 0).astype(np.int32), ints(1, 2, 3), ints(1, 2, -1),
                  np.array([1.0, 2.0, 0.0]), np.array([[1, 2, 0]]), ints(1, 2, 0)]:
        same(lambda lib, s, v, order=order: lib.searchsorted(s, v, sorter=lib.tensor(order)),
             unsorted, np.array([2.0, 0.5]), grad=False)
    rows = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    same(lambda lib, s, v: lib.searchsorted(s, v, sorter=s.argsort()), rows,
         np.array([[2.5], [4.5]]), grad=False)


def test_bincount_of_complex_weights_warns_and_takes_the_real_part_as_torch():
    with pytest.warns(UserWarning, match="imaginary"):
        got = mg.bincount(mg.tensor(ints(0, 1, 1)), mg.tensor(np.array([1 + 1j, 2, 3j])))
    with warnings.catch_warnings():              # torch warns once per process
        warnings.simplefilter("ignore")
        expected = torch.bincount(torch.tensor(ints(0, 1, 1)),
                                  torch.tensor(np.array([1 + 1j, 2, 3j])))
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


# ----- numbers past a tensor's dtype: cast as torch casts them, and no RuntimeWarning ----------
def _agree_quietly(call, array, number):
    # call(lib, tensor, number): mg's with every warning an error, the same dtype and values
    expected = call(torch, torch.tensor(array), number)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = call(mg, mg.tensor(array), number)
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("boundaries", [[1.0, 3.0, 5.0], [1.0, 3.0, np.inf]])
def test_a_number_past_float16_is_searched_as_its_inf(boundaries):
    h = np.array(boundaries, np.float16)              # 1e10 in float16: inf, silently
    for number in [1e10, -1e10]:
        for right in [False, True]:
            _agree_quietly(lambda lib, s, n, right=right: lib.searchsorted(s, n, right=right),
                           h, number)
            _agree_quietly(lambda lib, s, n, right=right: lib.bucketize(n, s, right=right),
                           h, number)
        _agree_quietly(lambda lib, s, n: lib.isin(s, n), h, number)
        _agree_quietly(lambda lib, s, n: lib.isin(n, s), h, number)


def test_a_numpy_scalar_fill_value_is_checked_without_a_warning():
    # np.float32(2) <= float64's max cast the bound to float32 (overflow, a RuntimeWarning)
    index = ints(0, 2)
    for dtype, value in [(np.float64, np.float32(2.5)), (np.float64, np.float16(-1.5)),
                         (np.float32, np.float16(3.0)), (np.float64, np.int64(7)),
                         (np.uint8, np.int64(-1)), (np.float32, np.float64(1e39)),
                         (np.int8, np.float32(127.9)), (np.float16, np.float32(np.inf))]:
        for call in [lambda lib, x, v: x.index_fill(0, lib.tensor(index), v),
                     lambda lib, x, v: lib.scatter(x, 0, lib.tensor(index), v)]:
            try:
                expected = call(torch, torch.zeros(3, dtype=getattr(torch, str(
                    np.dtype(dtype)))), value)
            except RuntimeError:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    with pytest.raises(RuntimeError, match="overflow"):
                        call(mg, mg.zeros(3, dtype=dtype), value)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                got = call(mg, mg.zeros(3, dtype=dtype), value)
            assert str(got.dtype) == str(expected.dtype)
            np.testing.assert_array_equal(got.numpy(), expected.numpy())
