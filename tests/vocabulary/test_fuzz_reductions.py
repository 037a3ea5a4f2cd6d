"""Reductions, selections and comparisons a differential fuzzer against PyTorch found
differing, each against torch: comparisons whose shapes do not broadcast (torch's
RuntimeError), beside a complex number (``==`` compares, ``<`` has no order) and of
bfloat16 NaN (silent); integer division and remainders of complex tensors (no kernel);
``clamp`` with no bound or a Tensor bound beside a number bound; ``bincount`` of an empty
input with weights; bit shifts whose shapes do not broadcast; ``topk`` and ``kthvalue``
given a ``k`` that is no int (a 0-d integer tensor is one); the degrees-of-freedom warning
of ``var``, ``std``, ``var_mean`` and ``std_mean``; ``mode``'s index among ties in
slices of more than 16 elements or holding NaN (the order C++'s ``std::sort`` leaves); and
which of equal values ``topk`` picks, and in what order (its C++ selection's moves)."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm.ops import introsort
from microgradnorm.ops.introsort import introsort_order

torch = pytest.importorskip("torch")

BUILTIN_ERRORS = (RuntimeError, TypeError, ValueError, IndexError)


def outcome(call):
    """``("ok", result)`` or ``("error", the builtin classes the exception is)``."""
    try:
        return "ok", call()
    except Exception as error:                   # noqa: BLE001 (compared below)
        return "error", {c for c in BUILTIN_ERRORS if isinstance(error, c)}


def assert_same_outcome(ours, theirs):
    """Both raise (ours at least every builtin class torch's is), or both return equal
    tensors of the same dtype."""
    (kind, value), (their_kind, their_value) = outcome(ours), outcome(theirs)
    assert kind == their_kind, (value, their_value)
    if kind == "error":
        assert their_value <= value, (value, their_value)
        return
    assert str(value.dtype) == str(their_value.dtype)
    np.testing.assert_array_equal(value.numpy(), their_value.numpy())


COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("shapes", [((3,), (4,)), ((2, 3), (2,)), ((2, 1), (3, 4))])
def test_comparison_of_shapes_that_do_not_broadcast(name, shapes):
    a, b = (np.ones(s) for s in shapes)
    assert_same_outcome(lambda: getattr(mg, name)(mg.tensor(a), mg.tensor(b)),
                        lambda: getattr(torch, name)(torch.tensor(a), torch.tensor(b)))
    assert_same_outcome(lambda: mg.tensor(a) < mg.tensor(b),
                        lambda: torch.tensor(a) < torch.tensor(b))


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
@pytest.mark.parametrize("number", [1 + 0j, 1 + 2j])
def test_comparison_with_a_complex_number(name, dtype, number):
    x = np.array([1, 0, 2]).astype(dtype)
    assert_same_outcome(lambda: getattr(mg, name)(mg.tensor(x), number),
                        lambda: getattr(torch, name)(torch.tensor(x), number))


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("other", [1.0, float("nan"), "tensor"])
def test_bfloat16_comparison_with_nan_is_silent(name, other):
    x = np.array([np.nan, 1.0, -np.inf, 2.0], dtype=np.float32)
    other_mg = mg.tensor(x[::-1].copy()).to(mg.bfloat16) if other == "tensor" else other
    other_torch = torch.tensor(x[::-1].copy()).bfloat16() if other == "tensor" else other
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = getattr(mg, name)(mg.tensor(x).to(mg.bfloat16), other_mg)
    theirs = getattr(torch, name)(torch.tensor(x).bfloat16(), other_torch)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", ["remainder", "fmod", "floor_divide"])
@pytest.mark.parametrize("dtypes", [("complex64", "complex64"), ("float32", "complex128"),
                                    ("complex128", "int64"), ("complex64", "float64")])
def test_integer_division_of_complex_tensors_has_no_kernel(name, dtypes):
    a, b = (np.array([3, -2]).astype(d) for d in dtypes)
    assert_same_outcome(lambda: getattr(mg, name)(mg.tensor(a), mg.tensor(b)),
                        lambda: getattr(torch, name)(torch.tensor(a), torch.tensor(b)))


@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("uint8", "int64"), ("bool", "int32")])
@pytest.mark.parametrize("shapes", [((4,), (1, 2)), ((2, 1), (3, 1)), ((2, 1), (1, 3))])
def test_shift_of_shapes(name, dtypes, shapes):
    a, b = (np.ones(s, d) for s, d in zip(shapes, dtypes))
    assert_same_outcome(lambda: getattr(mg, name)(mg.tensor(a), mg.tensor(b)),
                        lambda: getattr(torch, name)(torch.tensor(a), torch.tensor(b)))


@pytest.mark.parametrize("name", ["topk", "kthvalue"])
@pytest.mark.parametrize("k", [1, 2.0, True, np.int64(2), "tensor", "float tensor", "1-d tensor",
                               "2 elements", 5, 0])
def test_selection_k_types(name, k):
    x = np.array([3.0, 1.0, 2.0, 1.0])

    def call(lib):
        given = {"tensor": lib.tensor(2), "float tensor": lib.tensor(2.0),
                 "1-d tensor": lib.tensor([2]), "2 elements": lib.tensor([2, 1])}.get(k, k) \
            if isinstance(k, str) else k
        return getattr(lib, name)(lib.tensor(x), given).indices
    assert_same_outcome(lambda: call(mg), lambda: call(torch))


def bounds(lib, spec):
    return [None if s is None else s if isinstance(s, float) else lib.tensor(s)
            for s in spec]


CLAMP_BOUNDS = [(None, None), (np.zeros(3), 1.0), (-1.0, np.ones(3)), (np.array(0.0), 1.0),
                (np.zeros(3), np.array(1.0)), (None, np.ones(3)), (0.5, None),
                (np.zeros(3), np.ones(3))]


@pytest.mark.parametrize("spec", CLAMP_BOUNDS)
@pytest.mark.parametrize("form", ["function", "method", "clip", "in_place"])
def test_clamp_bounds(spec, form):
    x = np.array([-2.0, 0.5, 3.0])

    def call(lib):
        low, high = bounds(lib, spec)
        t = lib.tensor(x)
        if form == "function":
            return lib.clamp(t, low, high)
        if form == "method":
            return t.clamp(low, high)
        if form == "clip":
            return lib.clip(t, min=low, max=high)
        return t.clamp_(low, high)
    assert_same_outcome(lambda: call(mg), lambda: call(torch))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool", "complex64"])
@pytest.mark.parametrize("min, max", [(1 + 0j, None), (None, 0.5 + 0j), (1j, None), (0.0, 2j),
                                      (1 + 0j, 2.0)])
def test_clamp_with_a_complex_number(dtype, min, max):
    x = np.array([-2, 0, 3]).astype(dtype)
    assert_same_outcome(lambda: mg.clamp(mg.tensor(x), min, max),
                        lambda: torch.clamp(torch.tensor(x), min, max))


@pytest.mark.parametrize("weights", [None, "float32", "float64", "int64", "int8"])
@pytest.mark.parametrize("minlength", [0, 3])
def test_bincount_of_an_empty_input(weights, minlength):
    def call(lib):
        w = None if weights is None else lib.tensor(np.zeros(0, weights))
        return lib.bincount(lib.tensor(np.zeros(0, np.int64)), weights=w,
                            minlength=minlength)
    assert_same_outcome(lambda: call(mg), lambda: call(torch))


def warnings_of(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, sorted((w.category.__name__, str(w.message).split(" (Triggered")[0])
                          for w in caught)


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("shape, dim, correction", [
    ((3,), None, 3), ((3,), None, 2), ((3,), None, 2.5), ((1,), 0, 1), ((), None, 1),
    ((0,), None, 0), ((0, 3), 1, 1), ((2, 0), 1, 0), ((2, 3), (0, 1), 6), ((4, 2), 0, 1)])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_degrees_of_freedom_warning(name, shape, dim, correction, dtype):
    x = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    ours, ours_caught = warnings_of(
        lambda: getattr(mg, name)(mg.tensor(x), dim=dim, correction=correction))
    theirs, their_caught = warnings_of(
        lambda: getattr(torch, name)(torch.tensor(x), dim=dim, correction=correction))
    assert ours_caught == their_caught
    for a, b in zip(ours if isinstance(ours, tuple) else [ours],
                    theirs if isinstance(theirs, tuple) else [theirs]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def mode_inputs():
    rng = np.random.default_rng(2024)
    cases = []
    for n in (5, 16, 17, 40, 300):
        for spread in (1, 3):
            for nan in (False, True):
                x = rng.integers(-spread, spread + 1, (3, n)).astype(np.float64)
                if nan:
                    x[rng.random(x.shape) < 0.15] = np.nan
                cases.append(x)
    cases.append(np.sort(rng.integers(0, 4, (2, 64)), axis=1).astype(np.int64))
    cases.append(np.sort(rng.integers(0, 4, (2, 64)), axis=1)[:, ::-1].astype(np.float32))
    cases.append(np.zeros((2, 33), np.float32))
    return cases


@pytest.mark.parametrize("x", mode_inputs(), ids=lambda x: f"{x.dtype}{x.shape}")
@pytest.mark.parametrize("dim", [-1, 0])
def test_mode_index_among_ties(x, dim):
    leaf, their_leaf = mg.tensor(x), torch.tensor(x)
    if x.dtype == np.float64:
        leaf.requires_grad_(True)
        their_leaf.requires_grad_(True)
    ours, theirs = mg.mode(leaf, dim), torch.mode(their_leaf, dim)
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    np.testing.assert_array_equal(ours.values.detach().numpy(), theirs.values.detach().numpy())
    if x.dtype == np.float64:                     # the gradient reaches the indexed element
        grad = np.random.default_rng(0).standard_normal(tuple(theirs.values.shape))
        ours.values.backward(mg.tensor(grad))
        theirs.values.backward(torch.tensor(grad))
        np.testing.assert_array_equal(leaf.grad.numpy(), their_leaf.grad.numpy())


def adversary_input(n, distinct):
    """A slice on which the quicksort runs out of depth and heap-sorts (McIlroy's adversary:
    each value is fixed when a comparison first needs it); after ``distinct`` values are
    fixed, the rest stay equal and largest: ties whose order the heap sort decides."""
    value, state = [n] * n, {"fixed": 0, "candidate": 0}          # n: not fixed yet

    class Lazy:
        def __init__(self, i):
            self.i = i

        def __lt__(self, other):
            x, y = self.i, other.i
            if value[x] == value[y] == n and state["fixed"] < distinct:
                value[x if x == state["candidate"] else y] = state["fixed"]
                state["fixed"] += 1
            if n in (value[x], value[y]):
                state["candidate"] = x if value[x] == n else y
            return value[x] < value[y]
    introsort_order([Lazy(i) for i in range(n)])
    return value


@pytest.mark.parametrize("n, distinct", [(40, 20), (64, 32), (100, 54), (200, 124)])
def test_mode_index_among_ties_after_the_heap_sort(n, distinct, monkeypatch):
    x = np.array([adversary_input(n, distinct)], np.int64)            # (1, n)
    heap_sorts = []
    heap_sort = introsort._heap_sort
    monkeypatch.setattr(introsort, "_heap_sort",
                        lambda *args: heap_sorts.append(args[1:]) or heap_sort(*args))
    ours, theirs = mg.mode(mg.tensor(x)), torch.mode(torch.tensor(x))
    assert heap_sorts and (x == n).sum() > 1          # the path this test is about was taken
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())


def test_introsort_order_is_a_permutation_that_sorts():
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 17, 100, 1000):
        values = rng.integers(0, 5, n).tolist()
        order = introsort_order(values)
        assert sorted(order) == list(range(n))
        assert [values[i] for i in order] == sorted(values)


def topk_inputs():
    """Slices full of ties (a few distinct values, NaN, -0.0 beside 0.0) through both of
    torch's paths: std::nth_element then std::sort (64 k > n), std::partial_sort (64 k <= n)."""
    rng, cases = np.random.default_rng(11), []
    for dtype in (np.float64, np.float32, np.float16, np.int64, np.int8):
        for n in (1, 5, 17, 40, 130, 700):
            x = rng.integers(-2, 3, (3, n)).astype(dtype)
            if dtype in (np.float64, np.float32, np.float16):
                x[rng.random(x.shape) < 0.1] = np.nan
                x[x == 0] = rng.choice([0.0, -0.0], (x == 0).sum())
            for k in sorted({0, 1, 2, max(1, n // 64), n // 3, n - 1, n} - {-1}):
                cases.append((x, k))
    return cases


@pytest.mark.parametrize("x, k", topk_inputs(), ids=lambda v: f"{v.dtype}{v.shape}"
                         if isinstance(v, np.ndarray) else f"k{v}")
def test_topk_picks_and_orders_ties_as_torch(x, k):
    for largest in (True, False):
        for sorted_ in (True, False):
            for dim in (-1, 0):
                if k > x.shape[dim]:
                    continue
                ours = mg.topk(mg.tensor(x), k, dim, largest, sorted_)
                theirs = torch.topk(torch.from_numpy(x), k, dim, largest, sorted_)
                np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
                np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
