"""ops/logical.py against PyTorch: isnan/isinf/isfinite, any/all, isclose/allclose/equal,
nonzero and where(condition), the comparisons, logical and bitwise functions and operators,
and floor_divide/remainder/fmod (``//``, ``%``) with their gradients: values, result dtypes
for integer and bool inputs, errors, 0-d and empty tensors."""

import numpy as np
import pytest
import torch

import microgradnorm as mg

FLOATS = np.array([[1.5, -2.5, np.nan], [np.inf, -np.inf, 0.0]])
INPUTS = [FLOATS, np.array([[1, 0, -3], [4, 0, 2]]), np.array([True, False, True]),
          np.array([3, 0, 1], np.uint8), np.array(0.0), np.array(2), np.zeros((0, 3)),
          np.array([1.5, 0.0], np.float16), np.array([2, -4], np.int32)]


def same(call, *args):
    """``call(mg, *args)`` and ``call(torch, *args)``, each NumPy array among ``args`` made a
    tensor of that library: both raise the same class, or give equal results (tensors of one
    dtype and shape with equal values, NaN == NaN; tuples of them; Python values)."""
    def run(lib):
        return call(lib, *[lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
    try:
        expected = run(torch)
    except Exception as error:                               # noqa: BLE001 (torch's class)
        # a dim named twice: a ValueError for every op here (docs/pytorch.md)
        kind = ValueError if "appears multiple times" in str(error) else type(error)
        with pytest.raises(kind):
            run(mg)
        return
    equal_results(run(mg), expected)


def equal_results(got, expected):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for ours, theirs in zip(got, expected):
            equal_results(ours, theirs)
    elif not isinstance(expected, torch.Tensor):
        assert type(got) is type(expected) and got == expected
    else:
        assert str(got.dtype) == str(expected.dtype), (got, expected)
        assert got.shape == tuple(expected.shape)
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def both(array, requires_grad=True):
    return mg.tensor(array, requires_grad=requires_grad), \
        torch.tensor(array, requires_grad=requires_grad)


# ----- tests and truth reductions -------------------------------------------------------------
def test_isnan_isinf_isfinite_match_torch_for_every_dtype():
    for name in ["isnan", "isinf", "isfinite"]:
        for data in INPUTS:
            same(lambda lib, x, name: getattr(lib, name)(x), data, name)
            same(lambda lib, x, name: getattr(x, name)(), data, name)
    with pytest.raises(TypeError):
        mg.isnan(np.ones(2))


@pytest.mark.parametrize("name", ["any", "all"])
def test_any_and_all_match_torch_over_dims_dtypes_and_empty(name):
    for data in INPUTS:
        same(lambda lib, x: getattr(lib, name)(x), data)
        for dim, keepdim in [(0, False), (-1, True), ((0, -1), False), (None, True), (1, False),
                             ((0, 0), False)]:
            same(lambda lib, x, dim, keepdim: getattr(x, name)(dim=dim, keepdim=keepdim),
                 data, dim, keepdim)


# ----- closeness and equality -----------------------------------------------------------------
def test_isclose_and_allclose_match_torch():
    a = np.array([1.0, 1.0 + 1e-6, 1.1, np.inf, -np.inf, np.nan, 0.0, 1e-9])
    b = np.array([1.0, 1.0, 1.0, np.inf, np.inf, np.nan, 1e-8, 0.0])
    pairs = [(a, b), (a.astype(np.float32), b.astype(np.float32)),
             (a.astype(np.float16), b.astype(np.float16)),
             (np.array([1, 5, -3]), np.array([1, 6, -2])), (np.array([True, False]),) * 2,
             (a, b[:1]), (a, np.array(1.0)), (np.zeros((0, 2)), np.zeros(2)),
             (a, b.astype(np.float32)), (np.array([1, 2]), np.array([1.0, 2.0])),
             ]
    for x, y in pairs:
        for kwargs in [{}, {"equal_nan": True}, {"rtol": 0.2}, {"atol": 1.0, "rtol": 0},
                       {"rtol": 0, "atol": 0}, {"rtol": -1.0}, {"atol": -0.5}]:
            for name in ["isclose", "allclose"]:
                same(lambda lib, x, y, name, kw: getattr(lib, name)(x, y, **kw),
                     x, y, name, kwargs)
    with pytest.raises(ValueError, match="broadcast"):         # torch: a RuntimeError
        mg.isclose(mg.tensor(a), mg.tensor(b[:3]))
    x = mg.tensor(a)
    assert x.allclose(x, equal_nan=True) is True and not x.allclose(x)
    with pytest.raises(TypeError):
        mg.allclose(x, 1.0)


def test_equal_matches_torch():
    cases = [(FLOATS, FLOATS), (np.array([1, 2]), np.array([1.0, 2.0])),
             (np.array([True, False]), np.array([1, 0], np.int32)),
             (np.ones(3), np.ones(1)), (np.ones((2, 1)), np.ones(2)), (np.array(2.0),) * 2,
             (np.zeros((0, 2)),) * 2, (np.array([1.0, 2.0]), np.array([1.0, 2.5]))]
    for x, y in cases:
        same(lambda lib, x, y: lib.equal(x, y), x, y)
        same(lambda lib, x, y: x.equal(y), x, y)
    same(lambda lib, x: lib.equal(x, 1.0), np.ones(2))


def test_nonzero_and_one_argument_where_match_torch():
    cases = INPUTS + [np.array([[[0, 1], [2, 0]], [[0, 0], [3, 4]]]),
                      np.array([np.nan, 0.0, -0.0, 1e-300])]
    for data in cases:
        same(lambda lib, x: lib.nonzero(x), data)
        same(lambda lib, x: x.nonzero(as_tuple=True), data)
        same(lambda lib, x: lib.where(x), data)
    x = mg.tensor([[1.0, 0.0], [0.0, 2.0]])
    assert x[mg.where(x)].tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="both"):
        mg.where(x > 0, x)


# ----- comparisons, logical and bitwise -------------------------------------------------------
PAIRS = [(FLOATS, np.array([1.5, 0.0, 2.0])), (np.array([1, 2, 3]), 2.5),
         (np.array([1, 2, 3]), np.array(2.0)), (np.array([True, False]), True),
         (np.array([1.5, 2.0], np.float16), 1.5), (np.array([3, 0], np.uint8), 3),
         (np.array(2.0), np.array([1, 2, 3])), (np.zeros((0, 3)), np.ones(3)),
         (np.array([1, 2], np.int32), np.array([1, 2], np.int64))]


def test_comparisons_by_name_match_torch():
    for name in ["eq", "ne", "lt", "le", "gt", "ge"]:
        for x, y in PAIRS:
            same(lambda lib, x, y, name: getattr(lib, name)(x, y), x, y, name)
            same(lambda lib, x, y, name: getattr(x, name)(y), x, y, name)
        with pytest.raises(TypeError):
            getattr(mg, name)(mg.ones(2), "a")


def test_logical_functions_match_torch():
    for name in ["logical_and", "logical_or", "logical_xor"]:
        for x, y in PAIRS:
            if isinstance(y, np.ndarray):
                same(lambda lib, x, y, name: getattr(lib, name)(x, y), x, y, name)
                same(lambda lib, x, y, name: getattr(x, name)(y), x, y, name)
        same(lambda lib, x, name: getattr(lib, name)(x, 1.0), np.ones(2), name)
    for data in INPUTS:
        same(lambda lib, x: lib.logical_not(x), data)


BITWISE = {"bitwise_and": "__and__", "bitwise_or": "__or__", "bitwise_xor": "__xor__"}


def test_bitwise_functions_and_operators_match_torch():
    pairs = PAIRS + [(np.array([6, -3, 12]), np.array([3, 5, -1])), (np.array([6, 3]), 1.5),
                     (np.array([True, False]), np.array([5, 2])), (np.array([6, 3]), True)]
    for name, dunder in BITWISE.items():
        for x, y in pairs:
            same(lambda lib, x, y, name: getattr(lib, name)(x, y), x, y, name)
            same(lambda lib, x, y, dunder: getattr(x, dunder)(y), x, y, dunder)
            same(lambda lib, x, y, dunder: getattr(x, "__r" + dunder[2:])(y), x, y, dunder)
    i, b = mg.tensor([6, -3]), mg.tensor([True, False])
    assert (i & 3).tolist() == [2, 1] and (5 | i).tolist() == [7, -3]
    assert (True ^ b).tolist() == [False, True] and (b & b).dtype == mg.bool
    for data in INPUTS:
        same(lambda lib, x: ~x, data)
        same(lambda lib, x: lib.bitwise_not(x), data)
    with pytest.raises(TypeError):
        i & "a"
    with pytest.raises(TypeError):
        "a" | i


# ----- floor_divide, remainder, fmod ----------------------------------------------------------
DIVISIONS = {"floor_divide": "__floordiv__", "remainder": "__mod__", "fmod": None}


def test_integer_division_values_and_dtypes_match_torch():
    pairs = [(np.array([7, -7, 6, -6, 0]), np.array([2, 2, -4, -4, 3])),
             (np.array([7, -7, 6]), 2), (np.array([7, -7, 6]), -2.5),
             (np.array([7.5, -7.5, 0.5, -0.0, np.inf, 3.0]),
              np.array([2.0, 2.0, -0.3, 1.0, 2.0, np.inf])),
             (np.array([1.5, -2.5, 0.5], np.float16), 0.3), (np.array([True, False]),) * 2,
             (np.array([True, False]), 2), (np.array([7, -7], np.int32), np.array(3)),
             (np.array([7, -7, 0]), np.array([0, 1, 2])), (np.array([1.5, -1.5, 0.0]), 0.0),
             (np.array(7.5), np.array([2.0, -2.0])), (np.zeros((0, 2)), np.zeros(2)),
             (np.array([3, 4], np.uint8), np.array([2, 3], np.uint8))]
    for name, dunder in DIVISIONS.items():
        for x, y in pairs:
            with np.errstate(divide="ignore", invalid="ignore"):
                same(lambda lib, x, y, name: getattr(lib, name)(x, y), x, y, name)
                if dunder:
                    same(lambda lib, x, y, dunder: getattr(x, dunder)(y), x, y, dunder)
                    same(lambda lib, x, y, dunder: getattr(x, "__r" + dunder[2:])(y), x, y,
                         dunder)
        same(lambda lib, y, name: getattr(lib, name)(7, y), np.array([2, -3]), name)
    assert (7 // mg.tensor([2, -2])).tolist() == [3, -4] == (7 // torch.tensor([2, -2])).tolist()
    assert (-7.5 % mg.tensor([2.0])).tolist() == [0.5]


@pytest.mark.parametrize("name", ["remainder", "fmod"])
def test_remainder_and_fmod_gradients_match_torch(name):
    a = np.array([[5.5, -3.2, 4.0], [-7.25, 0.5, 9.0]])
    b = np.array([2.0, 1.5, -3.0])
    (x, xt), (y, yt) = both(a), both(b)
    out, out_t = getattr(mg, name)(x, y), getattr(torch, name)(xt, yt)
    upstream = np.random.default_rng(0).standard_normal(out.shape)
    out.backward(upstream)
    out_t.backward(torch.tensor(upstream))
    np.testing.assert_allclose(out.detach().numpy(), out_t.detach().numpy(), rtol=0,
                               atol=1e-12)
    for ours, theirs in [(x, xt), (y, yt)]:
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=0, atol=1e-12)
    x, xt = both(np.array(2.75))
    out, out_t = getattr(x, name)(0.5), getattr(xt, name)(0.5)
    out.backward()
    out_t.backward()
    assert out.item() == out_t.item() and x.grad.item() == xt.grad.item()


def test_floor_divide_has_no_derivative_as_in_torch():
    x, xt = both(np.array([5.5, -3.2]))
    out, out_t = x // 2.0, xt // 2.0
    assert out.requires_grad and out_t.requires_grad
    with pytest.raises(RuntimeError, match="not implemented"):
        out_t.sum().backward()
    with pytest.raises(RuntimeError, match="not implemented"):
        out.sum().backward()
    assert x.grad is None
    with pytest.raises(TypeError):
        mg.fmod(7, mg.tensor([2]))
    for a, b in ((7, 2), (7.5, 2), (-4.8, -7.5)):      # two numbers: a 0-d tensor, as torch's
        ours, theirs = mg.floor_divide(a, b), torch.floor_divide(a, b)
        assert str(ours.dtype) == str(theirs.dtype)
        assert ours.item() == theirs.item()
