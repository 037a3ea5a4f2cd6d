"""ops/index_writes.py against PyTorch: index_put, put, masked_scatter, scatter_reduce and
index_reduce (every reduction, with and without include_self), fill_diagonal_ and the
diagonal/select/slice scatters, out of place and in place: float64 values and gradients
of a random upstream (ties and zeros included, where the gradients of amax/amin and prod
have their corners), dtypes, 0-d and empty tensors, and torch's exception classes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_vocabulary_more import data, same

import microgradnorm as mg


def ints(*values):
    return np.array(values, dtype=np.int64)


def index(lib, *arrays):
    return tuple(lib.tensor(a) for a in arrays)


# ----- index_put ------------------------------------------------------------------------------
INDEX_PUT = [((ints(0, 2),), ()), ((ints(0, 2), ints(1, 3)), (2,)), ((ints(0, 2), ints(1, 3)), ()),
             ((ints(0, 0), ints(1, 1)), (2,)), ((np.array([[0], [2]]), ints(1, 3)), (2, 2)),
             ((np.array([True, False, True]),), (4,)), ((ints(-1),), (1, 4)),
             ((np.array([[True, False, True, False]] * 3),), ()),
             ((ints(1, 1, 2),), (3, 4)), ((np.array([1, 2], np.int32),), (4,)),
             ((np.zeros(0, np.int64),), (4,))]


@pytest.mark.parametrize("indices, value_shape", INDEX_PUT)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_values_and_gradients_match_torch(indices, value_shape, accumulate):
    # repeated places: accumulate sums, and without it torch writes one of them (here the
    # last); the value's gradient is grad at each place either way
    repeats = any(len(np.unique(i)) < np.size(i) for i in indices if i.dtype != bool)
    same(lambda lib, x, v: lib.index_put(x, index(lib, *indices), v, accumulate=accumulate),
         data(3, 4), data(*value_shape), grad=not repeats or accumulate)
    same(lambda lib, x, v: (x * 1.0).index_put_(index(lib, *indices), v, accumulate),
         data(3, 4), data(*value_shape), grad=not repeats or accumulate)


def test_index_put_corners_and_refusals_match_torch():
    x = data(3, 4)
    for indices, value in [((ints(0),), data(2)), ((np.array([1.0]),), data()),
                           ((ints(5),), data()), ((ints(1), ints(1), ints(1)), data()),
                           ((ints(0, 1),), data(3, 4)), ((ints(0, 1), ints(0, 1, 2)), data()),
                           ((np.array([True, False]),), data()), ((ints(-4),), data())]:
        same(lambda lib, x, v, indices=indices: lib.index_put(x, index(lib, *indices), v), x,
             value, grad=False)
    same(lambda lib, x, v: x.index_put((lib.tensor(ints(0)),), v), x,
         data().astype(np.float32), grad=False)                    # dtypes must match
    same(lambda lib, x: x.index_put(lib.tensor(ints(0)), lib.tensor(1.0)), x, grad=False)
    same(lambda lib, x: x.index_put((lib.tensor(ints(0)),), 1.0), x, grad=False)
    same(lambda lib, x: x.index_put((None, lib.tensor(ints(0))), lib.tensor(1.0)), x,
         grad=False)
    same(lambda lib, x, v: lib.index_put(x, (lib.tensor(1),), v), data(3), data())
    same(lambda lib, x, v: lib.index_put(x, (lib.tensor(ints(0, 2)),), v, True),
         ints(1, 2, 3), ints(5, 6))
    same(lambda lib, x, v: lib.index_put(x, (lib.tensor(ints(0, 1)),), v), np.array(
        [True, False]), np.array([False, True]))
    x = mg.zeros(3)
    with pytest.raises(IndexError):
        x.index_put_((mg.tensor(ints(7)),), mg.tensor(1.0))
    assert x._version == 0 and x.tolist() == [0.0, 0.0, 0.0]


# ----- put ------------------------------------------------------------------------------------
def test_put_values_gradients_and_refusals_match_torch():
    for positions, accumulate in [(ints(0, 5, -1), False), (ints(0, 5, 5), True),
                                  (np.array([[0], [4]]), False), (ints(), False)]:
        src = data(*positions.shape)
        same(lambda lib, x, s, p=positions, a=accumulate: x.put(lib.tensor(p), s, a),
             data(2, 3), src, grad=accumulate or len(set(positions.ravel())) == positions.size)
        same(lambda lib, x, s, p=positions, a=accumulate: (x * 1.0).put_(lib.tensor(p), s, a),
             data(2, 3), src, grad=accumulate or len(set(positions.ravel())) == positions.size)
        same(lambda lib, x, s, p=positions: lib.put(x, lib.tensor(p), s), data(2, 3), src,
             grad=False)
    for positions, src in [(ints(0, 5), data(3)), (ints(0, 6), data(2)), (ints(0, -7), data(2)),
                           (np.array([0, 1], np.int32), data(2)),
                           (ints(0, 1), data(2).astype(np.float32))]:
        same(lambda lib, x, s, p=positions: x.put(lib.tensor(p), s), data(2, 3), src,
             grad=False)
    same(lambda lib, x, s: x.put(lib.tensor(ints(0)), s), np.array(3.0), data(1))
    same(lambda lib, x, s: x.put(lib.tensor(ints()), s), np.zeros(0), data(0))
    same(lambda lib, x, s: x.put(lib.tensor(ints(0)), s), np.zeros(0), data(1), grad=False)


# ----- masked_scatter -------------------------------------------------------------------------
def test_masked_scatter_values_gradients_and_refusals_match_torch():
    mask = np.array([[True, False, True], [False, True, False]])
    for shape, mask_, source_shape in [((2, 3), mask, (7,)), ((2, 3), mask[0], (6,)),
                                       ((3,), mask, (2, 3)), ((2, 3), np.array(True), (6,)),
                                       ((), np.array(False), (1,)), ((2, 3), mask, (3,)),
                                       ((0, 3), np.zeros((0, 3), bool), (0,))]:
        same(lambda lib, x, s, m=mask_: x.masked_scatter(lib.tensor(m), s), data(*shape),
             data(*source_shape))
        same(lambda lib, x, s, m=mask_: (x * 1.0).masked_scatter_(lib.tensor(m), s),
             data(*shape), data(*source_shape))
    for x, m, s in [(data(2, 3), mask, data(2)), (data(2, 3), mask.astype(np.int64), data(6)),
                    (data(2, 3), mask, np.arange(6)), (data(2, 4), mask, data(6))]:
        same(lambda lib, x, s, m=m: lib.masked_scatter(x, lib.tensor(m), s), x, s, grad=False)
    same(lambda lib, x, s: x.masked_scatter(lib.tensor(mask), s), ints(0, 0, 0).repeat(2)
         .reshape(2, 3), np.arange(6))
    same(lambda lib, x: x.masked_scatter(lib.tensor(mask), 1.0), data(2, 3), grad=False)


# ----- scatter_reduce, index_reduce -----------------------------------------------------------
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _tied(*shape):
    # few distinct values, zeros among them: ties for amax/amin, zeros for prod
    return np.random.default_rng(sum(shape)).integers(-2, 3, shape).astype(np.float64)


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_values_and_gradients_match_torch(reduce, include_self):
    # torch's backward takes a src of index's shape only (its gradient has index's shape):
    # the larger ones are compared by value
    index2 = np.array([[0, 1, 0, 2], [2, 2, 0, 0]])
    for x, dim, idx, src in [(data(4), 0, ints(0, 0, 2, 2, 2), data(5)),
                             (_tied(4), 0, ints(0, 0, 2, 2, 2), _tied(5)),
                             (_tied(3, 4), 0, index2, _tied(2, 4)),
                             (data(3, 4), 1, index2 % 4, data(2, 4)),
                             (data(3, 4).astype(np.float32), 1, index2 % 4,
                              data(2, 4).astype(np.float32)),
                             (data(3, 4), 1, index2 % 4, data(2, 5)),
                             (_tied(3, 4), -1, index2, _tied(3, 4)),
                             (np.array(2.0), 0, np.array(0), np.array(3.0)),
                             (np.zeros((2, 0)), 0, np.zeros((1, 0), np.int64), np.zeros((1, 0)))]:
        grad = src.shape == idx.shape
        same(lambda lib, x, s, dim=dim, idx=idx: x.scatter_reduce(
            dim, lib.tensor(idx), s, reduce, include_self=include_self), x, src, grad=grad)
        same(lambda lib, x, s, dim=dim, idx=idx: (x * 1.0).scatter_reduce_(
            dim, lib.tensor(idx), s, reduce=reduce, include_self=include_self), x, src,
             grad=grad)
    for x, src in [(ints(1, 2, 3, 4), ints(5, 6, 7, 8, 9)),
                   (-ints(1, 2, 3, 4), ints(5, 6, 7, 8, 9)),
                   (np.array([1, -7, 2, 0], np.int32), np.array([1, 1, -3, 2, 5], np.int32)),
                   (np.array([True, False, False, True]), np.array([True, True, False, True,
                                                                     False])),
                   (np.array([np.nan, 1.0, 2.0, np.inf]), np.array([2.0, np.nan, 3.0, -1.0, 0.5])),
                   (data(4).astype(np.float32), data(5).astype(np.float32))]:
        same(lambda lib, x, s: lib.scatter_reduce(x, 0, lib.tensor(ints(0, 0, 2, 2, 3)), s,
                                                  reduce, include_self=include_self), x, src,
             grad=False)


def test_scatter_reduce_refuses_what_torch_refuses():
    x, src = data(4), data(5)
    for idx, s, reduce in [(ints(0, 1), src, "add"), (ints(0, 1), src.astype(np.float32), "sum"),
                           (ints(5), src, "sum"), (ints(-1), src, "sum"),
                           (ints(0, 1, 2, 3, 0), src[:3], "sum"), (np.array([0.0]), src, "sum"),
                           (np.array([[0]]), src, "sum"), (ints(0, 1), src, 5),
                           (ints(0, 1), src, None)]:
        same(lambda lib, x, s, idx=idx, reduce=reduce: x.scatter_reduce(0, lib.tensor(idx), s,
                                                                        reduce), x, s,
             grad=False)
    same(lambda lib, x, s: x.scatter_reduce(0, lib.tensor(ints(0, 1)), s, "mean"),
         np.array([True, False]), np.array([True, True]), grad=False)
    same(lambda lib, x, s: x.scatter_reduce(2, lib.tensor(ints(0, 1)), s, "sum"), x, src,
         grad=False)
    # "max" and "min": torch's forward takes them, its backward refuses them
    for reduce in ["max", "min"]:
        same(lambda lib, x, s, reduce=reduce: x.scatter_reduce(0, lib.tensor(ints(0, 0, 2)), s,
                                                               reduce), x, src[:3], grad=False)
        y = mg.tensor(x, requires_grad=True).scatter_reduce(0, mg.tensor(ints(0)),
                                                            mg.tensor([1.0]).double(), reduce)
        with pytest.raises(RuntimeError, match="amax"):
            y.sum().backward()
    x = mg.ones(3)
    with pytest.raises(RuntimeError):
        x.scatter_reduce_(0, mg.tensor(ints(4)), mg.ones(1), "sum")
    assert x._version == 0 and x.tolist() == [1.0, 1.0, 1.0]


@settings(max_examples=20)
@given(st.sampled_from(REDUCES), st.booleans(), st.integers(1, 4), st.integers(1, 4),
       st.integers(0, 2 ** 16))
def test_scatter_reduce_matches_torch_on_drawn_shapes(reduce, include_self, rows, cols, seed):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, rows, (rng.integers(1, rows + 2), cols))
    x, src = rng.integers(-2, 3, (rows, cols)) * 1.0, rng.integers(-2, 3, idx.shape) * 1.0
    same(lambda lib, x, s: x.scatter_reduce(0, lib.tensor(idx), s, reduce,
                                            include_self=include_self), x, src)


@pytest.mark.parametrize("reduce", REDUCES[1:])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_values_and_gradients_match_torch(reduce, include_self):
    for x, dim, idx, src in [(_tied(3, 2), 0, ints(0, 2, 0), _tied(3, 2)),
                             (data(3, 2), 0, ints(0, 2, 0), data(3, 2)),
                             (data(3, 2).astype(np.float32), 0, ints(0, 2, 0),
                              data(3, 2).astype(np.float32)),
                             (_tied(2, 4), 1, ints(3, 3, 0), _tied(2, 3)),
                             (_tied(2, 3, 2), -2, ints(1, 1), _tied(2, 2, 2)),
                             (np.array(2.0), 0, ints(0), np.array(3.0)),
                             (data(3, 2), 0, ints(), np.zeros((0, 2)))]:
        same(lambda lib, x, s, dim=dim, idx=idx: x.index_reduce(
            dim, lib.tensor(idx), s, reduce, include_self=include_self), x, src)
        same(lambda lib, x, s, dim=dim, idx=idx: lib.index_reduce(
            x * 1.0, dim, lib.tensor(idx), s, reduce, include_self=include_self), x, src)
        same(lambda lib, x, s, dim=dim, idx=idx: (x * 1.0).index_reduce_(
            dim, lib.tensor(idx), s, reduce, include_self=include_self), x, src)
    same(lambda lib, x, s: x.index_reduce(0, lib.tensor(ints(0, 0)), s, reduce,
                                          include_self=include_self), ints(1, 2, 3), ints(2, 3))


def test_index_reduce_refuses_what_torch_refuses():
    x = data(3, 2)
    for idx, src, reduce in [(ints(0), data(1, 2), "sum"), (ints(-1), data(1, 2), "prod"),
                             (ints(3), data(1, 2), "prod"), (ints(0, 1), data(1, 2), "prod"),
                             (np.array([[0]]), data(1, 2), "prod"), (ints(0), data(1, 3), "prod"),
                             (ints(0), data(1, 2).astype(np.float32), "amax"),
                             (np.array([0], np.int32), data(1, 2), "mean"),
                             (ints(0), data(1, 2), 5), (ints(0), data(1, 2), "add")]:
        same(lambda lib, x, s, idx=idx, reduce=reduce: x.index_reduce(0, lib.tensor(idx), s,
                                                                      reduce), x, src,
             grad=False)
    same(lambda lib, x, s: x.index_reduce(0, lib.tensor(ints(0)), s, "prod"), np.array(2.0),
         data(1), grad=False)


# ----- fill_diagonal_ and the scatters into a view --------------------------------------------
def test_fill_diagonal_matches_torch():
    for shape in [(7, 3), (3, 7), (3, 3), (2, 2, 2), (0, 0), (4, 1)]:
        for wrap in (False, True):
            same(lambda lib, x, wrap=wrap: x.clone().fill_diagonal_(5.0, wrap=wrap),
                 data(*shape), grad=False)
            same(lambda lib, x, wrap=wrap: (x * 1.0).fill_diagonal_(-1.5, wrap), data(*shape))
    for array, value in [(np.zeros((3, 3), np.int64), 2.7), (np.zeros((3, 3), np.uint8), -1),
                         (np.zeros((3, 3), np.uint8), 300), (data(2, 3, 2), 5),
                         (data(3), 5), (np.zeros((2, 2), bool), 1)]:
        same(lambda lib, x, value=value: x.clone().fill_diagonal_(value), array, grad=False)
    same(lambda lib, x: x.clone().fill_diagonal_(lib.tensor(2.0)), data(3, 3), grad=False)
    with pytest.raises(RuntimeError, match="leaf"):
        mg.zeros(2, 2, requires_grad=True).fill_diagonal_(1.0)


def test_diagonal_select_and_slice_scatter_match_torch():
    cases = [(lambda lib, x, s: lib.diagonal_scatter(x, s), (3, 3), (3,)),
             (lambda lib, x, s: lib.diagonal_scatter(x, s, 1), (3, 3), (2,)),
             (lambda lib, x, s: x.diagonal_scatter(s, -2), (3, 4), (1,)),
             (lambda lib, x, s: lib.diagonal_scatter(x, s, 0, 0, 2), (2, 3, 4), (3, 2)),
             (lambda lib, x, s: lib.diagonal_scatter(x, s, 5), (3, 3), (0,)),
             (lambda lib, x, s: lib.select_scatter(x, s, 0, 1), (2, 3), (3,)),
             (lambda lib, x, s: x.select_scatter(s, 1, -1), (2, 3), (2,)),
             (lambda lib, x, s: lib.select_scatter(x, s, 0, 0), (3,), ()),
             (lambda lib, x, s: lib.slice_scatter(x, s, 0, 1, 3), (4, 3), (2, 3)),
             (lambda lib, x, s: lib.slice_scatter(x, s, step=2), (4, 3), (2, 3)),
             (lambda lib, x, s: x.slice_scatter(s, 1, None, None, 2), (4, 3), (4, 2)),
             (lambda lib, x, s: lib.slice_scatter(x, s, 0, -1), (4, 3), (1, 3)),
             (lambda lib, x, s: lib.slice_scatter(x, s, 0, 5, 10), (4, 3), (0, 3)),
             (lambda lib, x, s: lib.slice_scatter(x, s, 0, -10, 3), (4, 3), (3, 3)),
             (lambda lib, x, s: lib.slice_scatter(x, s, 0, 3, 1), (4, 3), (0, 3)),
             (lambda lib, x, s: lib.slice_scatter(x, s), (4, 3), (4, 3))]
    for call, shape, src_shape in cases:
        same(call, data(*shape), data(*src_shape))
        same(call, data(*shape).astype(np.float32), data(*src_shape))     # src cast to x's
        same(call, data(*shape), np.ones(src_shape, np.int64))


def test_view_scatters_refuse_what_torch_refuses():
    for call, shape, src_shape in [
            (lambda lib, x, s: lib.diagonal_scatter(x, s, 1), (3, 3), (3,)),
            (lambda lib, x, s: lib.diagonal_scatter(x, s), (3, 3), (1, 3)),
            (lambda lib, x, s: lib.diagonal_scatter(x, s), (3,), (1,)),
            (lambda lib, x, s: lib.diagonal_scatter(x, s, 0, 1, 1), (3, 3), (3,)),
            (lambda lib, x, s: lib.select_scatter(x, s, 0, 2), (2, 3), (3,)),
            (lambda lib, x, s: lib.select_scatter(x, s, 0, 0), (2, 3), (1, 3)),
            (lambda lib, x, s: lib.select_scatter(x, s, 0, 0), (), ()),
            (lambda lib, x, s: lib.slice_scatter(x, s, 0), (), ()),
            (lambda lib, x, s: lib.slice_scatter(x, s, 0, 3, 1), (4, 3), (2, 3)),
            (lambda lib, x, s: lib.slice_scatter(x, s, 0, 0, 4, 0), (4, 3), (2, 3)),
            (lambda lib, x, s: lib.slice_scatter(x, s, 0, 0, 4, -1), (4, 3), (2, 3)),
            (lambda lib, x, s: lib.slice_scatter(x, s, 2), (4, 3), (4, 3)),
            (lambda lib, x, s: lib.select_scatter(x, s, 0, 1.0), (2, 3), (3,)),
            (lambda lib, x, s: lib.slice_scatter(x, s, 0, 1.0), (4, 3), (3, 3))]:
        same(call, data(*shape), data(*src_shape), grad=False)
    with pytest.raises(TypeError):
        mg.select_scatter(mg.zeros(2, 3), [1.0, 2.0, 3.0], 0, 0)
