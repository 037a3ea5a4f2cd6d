"""Tensor-op corners a differential fuzzer against PyTorch found, each family of inputs
against torch: the error classes of refused calls (and inputs left as they were), result
dtypes of ``dtype=`` scans, torch's CPU accumulation of float32 scans, bool inputs torch has
no kernel for, bfloat16 NaN ordering, kthvalue's index at ties, indexes that mix ints and
arrays, the dtype and overflow rules of ``x[index] = value``, the index checks of the
index_* ops, clamp's result dtype and number bounds, and in-place writes into an expanded
tensor or across integer kinds."""

import ml_dtypes
import numpy as np
import pytest
import torch

import microgradnorm as mg


def make(lib, array):
    """``array`` as a tensor of ``lib``; bfloat16 through float32 (it holds it exactly)."""
    if array.dtype == ml_dtypes.bfloat16:
        return lib.tensor(array.astype(np.float32)).to(lib.bfloat16)
    return lib.tensor(array)


def values(t):
    """A tensor of either library as a float64 (or bool, or integer) NumPy array."""
    if t.dtype in (torch.bfloat16, mg.bfloat16):
        t = t.float()
    array = t.detach().numpy()
    return array.astype(np.float64) if array.dtype.kind == "f" else array


def flat(result):
    return [r for part in result for r in flat(part)] if isinstance(result, tuple) \
        else [result]


def same(call, *arrays, tol=0.0):
    """``call(lib, *tensors)`` in both libraries: torch raises and so does mg, an instance of
    torch's class, leaving its inputs as they were; or equal dtypes, shapes and values (NaN
    where torch's), outputs and inputs (an in-place call) alike."""
    def run(lib):
        tensors = [make(lib, a) for a in arrays]
        try:
            return call(lib, *tensors), tensors
        except Exception as error:                      # noqa: BLE001 (torch's class)
            return error, tensors
    expected, theirs = run(torch)
    got, ours = run(mg)
    if isinstance(expected, Exception):
        assert isinstance(got, type(expected)), (got, expected)
        for t, a in zip(ours, arrays):
            np.testing.assert_array_equal(values(t), values(make(mg, a)))
        return
    assert not isinstance(got, Exception), (got, expected)
    for a, b in zip(flat(got) + ours, flat(expected) + theirs):
        assert str(a.dtype) == str(b.dtype), (a, b)
        assert tuple(a.shape) == tuple(b.shape), (a, b)
        np.testing.assert_allclose(values(a), values(b), rtol=tol, atol=0)


RNG = np.random.default_rng(0)
TIES = RNG.integers(-2, 3, (5, 7)).astype(np.float64)
BF16_NAN = np.array([[1.0, np.nan, 3.0, -1.0, np.nan, 0.5], [2.0, 2.0, np.nan, 1.0, 1.0, 0.0]],
                    dtype=ml_dtypes.bfloat16)


# ----- refused calls: the class torch raises, nothing written ------------------------------
REFUSED = {
    "max of nothing": lambda L, x: x.max(),                  # RuntimeError without a dim
    "amin of nothing": lambda L, x: L.amin(x),
    "argmax of nothing": lambda L, x: L.argmax(x),
    "max over an empty dim": lambda L, x: x.max(1),          # IndexError with one
    "gather past the end": lambda L, x: L.gather(x, 0, L.tensor([[0], [3]])),
    "scatter past the end": lambda L, x: x.clone().scatter_(0, L.tensor([[5]]), 1.0),
    "gather an index too large": lambda L, x: L.gather(x, 1, L.zeros(5, 1, dtype=L.int64)),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_calls_raise_torchs_class(name):
    shape = (2, 0) if "nothing" in name or "empty" in name else (2, 3)
    same(REFUSED[name], np.zeros(shape))


EXPANDED_WRITES = {    # (torch's fill_, zero_, masked_fill_, index_fill_, index_put_ write)
    "add_": lambda L, x: x.add_(1.0), "mul_": lambda L, x: x.mul_(2.0),
    "exp_": lambda L, x: x.exp_(), "x[...] = v": lambda L, x: x.__setitem__(..., 1.0),
    "copy_": lambda L, x: x.copy_(L.ones(2, 3, dtype=L.float64)),
    "scatter_": lambda L, x: x.scatter_(1, L.tensor([[0], [1]]), 7.0),
    "clamp_": lambda L, x: x.clamp_(0.5, 1.0),
}


@pytest.mark.parametrize("name", sorted(EXPANDED_WRITES))
def test_in_place_writes_into_an_expanded_tensor_raise_torchs_runtime_error(name):
    def call(lib, base):
        return EXPANDED_WRITES[name](lib, base.expand(2, 3))
    same(call, np.arange(3.0).reshape(1, 3))


@pytest.mark.parametrize("other", ["int8", "int16", "int32", "uint8"])
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_"])
def test_in_place_integer_ops_cast_across_signedness_as_torch(op, other):
    # NumPy's same_kind rule refuses int16 into uint8; torch casts (wrapping) within integers
    same(lambda L, x, y: getattr(x, op)(y), np.array([5, 250, 0], np.uint8),
         np.array([-3, 7, 2]).astype(other))
    same(lambda L, x, y: getattr(x, op)(y), np.array([5, -128, 0], np.int8),
         np.array([3, 7, 200], np.uint8))


# ----- scans and products ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "float16", "bool"])
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "prod"])
def test_dtype_argument_is_the_result_dtype(op, dtype):
    data = np.array([[100, 100, 3], [-2, 7, 1]])
    call = (lambda L, x: getattr(L, op)(x, 1, dtype=getattr(L, dtype))) if op != "prod" or \
        dtype != "bool" else (lambda L, x: L.prod(x, 1, dtype=L.bool))
    same(call, data)
    same(lambda L, x: getattr(L, op)(x, 0, dtype=getattr(L, dtype)), np.array(3))  # 0-d


@pytest.mark.parametrize("data", [[16777216.0, 1.0, 1.0, 1.0], [3e38, 10.0, 1e-2, -5.0],
                                  [1e-30, 1e-20, 1e30, 1e25], RNG.standard_normal(64)],
                         ids=["2**24 and ones", "past the max", "past the min", "normal"])
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "logcumsumexp"])
def test_float32_scans_accumulate_in_float64_as_torchs_cpu_kernels(op, data):
    same(lambda L, x: getattr(L, op)(x, 0), np.array(data, np.float32))      # to the bit


def test_logcumsumexp_checks_the_dim_before_the_dtype():
    same(lambda L, x: L.logcumsumexp(x, 2), np.array([1, 2]))
    same(lambda L, x: L.logcumsumexp(x, 0), np.array([1, 2]))


# ----- bool inputs, bfloat16 with NaN, ties -----------------------------------------------
BOOL_REFUSED = {
    "argmax": lambda L, x: L.argmax(x), "argmin": lambda L, x: L.argmin(x, 0),
    "median": lambda L, x: L.median(x), "median(dim)": lambda L, x: L.median(x, 0),
    "nanmedian": lambda L, x: L.nanmedian(x, 0), "kthvalue": lambda L, x: L.kthvalue(x, 1),
    "topk": lambda L, x: L.topk(x, 1),
}


@pytest.mark.parametrize("name", sorted(BOOL_REFUSED))
@pytest.mark.parametrize("data", [[True, False, True], True], ids=["1-d", "0-d"])
def test_ops_without_a_bool_kernel_in_torch_refuse_bool(name, data):
    same(BOOL_REFUSED[name], np.array(data))


BF16_OPS = {
    "sort": lambda L, x: L.sort(x, 1), "sort descending": lambda L, x: L.sort(x, 1, True),
    "argsort": lambda L, x: L.argsort(x, dim=1, stable=True),
    "kthvalue": lambda L, x: L.kthvalue(x, 2, 1), "median": lambda L, x: L.median(x, 1),
    "median of all": lambda L, x: L.median(x), "nanmedian": lambda L, x: L.nanmedian(x, 1),
    "nanmedian of all": lambda L, x: L.nanmedian(x), "unique": lambda L, x: L.unique(x),
    "topk": lambda L, x: L.topk(x, 2, 1),
    "msort": lambda L, x: L.msort(x.T),
}


@pytest.mark.parametrize("name", sorted(BF16_OPS))
def test_bfloat16_orders_nan_last_as_torch(name):
    same(BF16_OPS[name], BF16_NAN)


@pytest.mark.parametrize("k", range(1, 8))
@pytest.mark.parametrize("dtype", ["float64", "int64", "float32"])
def test_kthvalue_picks_torchs_index_among_ties(k, dtype):
    data = TIES.astype(dtype)
    data[0, 1] = np.nan if dtype != "int64" else data[0, 1]
    same(lambda L, x: L.kthvalue(x, k, 1), data)
    same(lambda L, x: L.kthvalue(x, min(k, 5), 0, keepdim=True), data)


@pytest.mark.parametrize("op", ["topk", "kthvalue"])
def test_k_out_of_range_is_torchs_runtime_error(op):
    same(lambda L, x: getattr(L, op)(x, 4), np.zeros(3))


@pytest.mark.parametrize("shape, dim", [((2, 0), 0), ((0, 1, 3), 2), ((0, 0), 1), ((0, 3), 0)])
def test_unique_over_a_dim_refuses_other_empty_dims_as_torch(shape, dim):
    same(lambda L, x: L.unique(x, dim=dim), np.zeros(shape))


# ----- indexing: ints beside arrays, and writes -------------------------------------------
MIXED = [(-1, slice(None), [0, 2, 3]), (0, slice(None), slice(None), [1, 2]),
         ([0, 1], slice(None), 0), (0, Ellipsis, [1, 0]), (None, 0, slice(None), [3, 0]),
         (1, slice(1, 3), [0, 2], [1, 1]), (0, [1, 2]), (slice(None), 0, slice(None), [4, 1])]


def indexed(lib, index):
    return tuple(lib.tensor(p) if isinstance(p, list) else p for p in index)


@pytest.mark.parametrize("index", MIXED, ids=str)
def test_ints_beside_arrays_index_as_torch(index):
    data = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
    same(lambda L, x: x[indexed(L, index)], data)

    def write(lib, x):
        x[indexed(lib, index)] = lib.ones(x[indexed(lib, index)].shape, dtype=lib.float64)
        return x
    same(write, data)
    x, xt = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    out, expected = x[indexed(mg, index)], xt[indexed(torch, index)]
    upstream = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


SETITEM = {   # index (a builder of lib), value (a builder of lib)
    "mask, 0-d float into uint8": (lambda L: L.tensor([True, False, True]),
                                   lambda L: L.tensor(2.5)),
    "mask, one float into uint8": (lambda L: L.tensor([True, False, True]),
                                   lambda L: L.tensor([2.5])),
    "mask, two floats into uint8": (lambda L: L.tensor([True, False, True]),
                                    lambda L: L.tensor([2.5, 7.0])),
    "0-d mask, 0-d int32": (lambda L: L.tensor(True), lambda L: L.tensor(1, dtype=L.int32)),
    "int tensor, floats": (lambda L: L.tensor([0, 1]), lambda L: L.tensor([2.5, 7.0])),
    "list, floats": (lambda L: [0, 1], lambda L: L.tensor([2.5, 7.0])),
    "int tensor, 0-d float": (lambda L: (L.tensor([0, 1]),), lambda L: L.tensor(2.0)),
    "slice, floats": (lambda L: slice(0, 2), lambda L: L.tensor([2.5, 7.0])),
    "mask, 300": (lambda L: L.tensor([True, False, True]), lambda L: 300),
    "mask, -2.0": (lambda L: L.tensor([True, False, True]), lambda L: -2.0),
    "mask, 2.7": (lambda L: L.tensor([True, False, True]), lambda L: 2.7),
    "slice, -1": (lambda L: slice(None), lambda L: -1),
    "slice, 256": (lambda L: slice(None), lambda L: 256),
    "int, nan": (lambda L: 0, lambda L: float("nan")),
    "int, inf": (lambda L: 1, lambda L: float("inf")),
    "int tensor, value of a wrong shape": (lambda L: L.tensor(1), lambda L: L.ones(2)),
    "empty list": (lambda L: [], lambda L: 4),
}


@pytest.mark.parametrize("name", sorted(SETITEM))
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_setitem_casts_and_checks_values_as_torch(name, dtype):
    index, value = SETITEM[name]

    def write(lib, x):
        x[index(lib)] = value(lib)
        return x
    same(write, np.array([5, 6, 7]).astype(dtype))


INDEX_OPS = {
    "index_fill_ int32": lambda L, x: x.index_fill_(0, L.tensor([1], dtype=L.int32), 2.0),
    "index_copy_ int32": lambda L, x: x.index_copy_(0, L.tensor([1], dtype=L.int32),
                                                    L.ones(1, 2, dtype=L.float64)),
    "index_add_ int16": lambda L, x: x.index_add_(0, L.tensor([1], dtype=L.int16),
                                                  L.ones(1, 2, dtype=L.float64)),
    "index_add_ int32": lambda L, x: x.index_add_(0, L.tensor([1, 1], dtype=L.int32),
                                                  L.ones(2, 2, dtype=L.float64)),
    "index_add of a 0-d tensor": lambda L, x: L.index_add(x[0, 0], 0, L.tensor([0, 0]),
                                                          x[0, 1]),
    "index_copy of a 0-d tensor": lambda L, x: L.index_copy(x[0, 0], 0, L.tensor([0, 0]),
                                                            x[0, 1]),
    "masked_fill_ uint8 mask": lambda L, x: x.masked_fill_(L.ones(2, dtype=L.uint8), 1.0),
    "masked_fill_ wider mask": lambda L, x: x.masked_fill_(L.ones(1, 3, 2, dtype=L.bool), 1.0),
    "x[[]]": lambda L, x: x[[]],
}


@pytest.mark.parametrize("name", sorted(INDEX_OPS))
def test_index_ops_check_their_arguments_as_torch(name):
    same(INDEX_OPS[name], np.arange(6.0).reshape(3, 2))


# ----- arithmetic: clamp, sub_, round -----------------------------------------------------
CLAMP = {
    "bool bounds": (lambda L, x: L.clamp(x, False, True), "int64"),
    "bool min": (lambda L, x: L.clamp(x, True), "float32"),
    "0-d float16 min, bfloat16 max": (lambda L, x: L.clamp(
        x, L.tensor(0.5, dtype=L.float16), L.tensor([1.5, 2.0, 2.0], dtype=L.bfloat16)),
        "int32"),
    "0-d float64 min, float32 max": (lambda L, x: L.clamp(
        x, L.tensor(-1.0, dtype=L.float64), L.tensor([1.3, 2.0, 2.5], dtype=L.float32)),
        "int16"),
    "float min, a large int max": (lambda L, x: L.clamp(x, 0.5, 2 ** 40), "int32"),
    "int8 max 300": (lambda L, x: L.clamp(x, -2, 300), "int8"),
    "bool x, number bounds": (lambda L, x: L.clamp(x > 0, 0, 1), "int64"),
    "bool x, bool numbers": (lambda L, x: L.clamp(x > 0, min=True), "int64"),
    "bool x, two bool tensors": (lambda L, x: L.clamp(x > 0, x > 1, L.tensor(True)), "int64"),
    "bool x, one bool tensor": (lambda L, x: L.clamp(x > 0, max=L.tensor(False)), "int64"),
}


@pytest.mark.parametrize("name", sorted(CLAMP))
def test_clamp_result_dtype_and_bounds_as_torch(name):
    call, dtype = CLAMP[name]
    same(call, np.array([-5, 0, 3]).astype(dtype))


@pytest.mark.parametrize("other", [np.array([True, False, True]), np.array(False)],
                         ids=["tensor", "0-d"])
@pytest.mark.parametrize("dtype", ["int8", "float32", "bool"])
def test_sub_in_place_refuses_bool_as_torch(dtype, other):
    same(lambda L, x, y: x.sub_(y), np.array([1, 0, 2]).astype(dtype), other)
    same(lambda L, x: x.sub_(True), np.array([1, 0, 2]).astype(dtype))


@pytest.mark.parametrize("dtype", ["int16", "uint8", "int64", "float32"])
@pytest.mark.parametrize("decimals", [None, 0, 1])
def test_round_with_decimals_refuses_integers_as_torch(dtype, decimals):
    call = (lambda L, x: L.round(x)) if decimals is None else \
        (lambda L, x: L.round(x, decimals=decimals))
    same(call, np.array([1.25, -2.5, 7.0]).astype(dtype))


TERNARY = {   # input and end: float32 0-d, float32 with dims, float16 and bfloat16 with dims
    "lerp, 0-d float64 weight": (lambda L, a, b: L.lerp(a, b, L.tensor(-3.0, dtype=L.float64)),
                                 ["0-d", "dims", "half", "bf16"]),
    "lerp, 0-d float32 weight": (lambda L, a, b: L.lerp(a, b, L.tensor(0.3333, dtype=L.float32)),
                                 ["half", "bf16"]),
    "addcmul, 0-d float32 tensor2": (lambda L, a, b: L.addcmul(
        a, b, L.tensor(0.10729067, dtype=L.float32)), ["half", "bf16"]),
    "addcdiv, 0-d float32 tensor2": (lambda L, a, b: L.addcdiv(
        a, b, L.tensor(0.10729067, dtype=L.float32)), ["half", "bf16"]),
    "lerp, weight 2**40": (lambda L, a, b: L.lerp(a, b, 2 ** 40), ["half"]),
    "lerp, weight 1e39": (lambda L, a, b: L.lerp(a, b, 1e39), ["half", "dims"]),
    "addcmul, value 1e10": (lambda L, a, b: L.addcmul(a, a, b, value=1e10), ["half"]),
    "addcdiv, value 1e10": (lambda L, a, b: L.addcdiv(a, a, b, value=1e10), ["half"]),
}
HALF_ENDS = (np.linspace(-3, 3, 41), np.linspace(1, 2, 41))
ENDS = {"0-d": (np.float32(1.5), np.float32(7.25)), "dims": ([1.5, -2.0], [7.25, 0.5]),
        "half": HALF_ENDS, "bf16": HALF_ENDS}


@pytest.mark.parametrize("name", sorted(TERNARY))
def test_ternary_result_dtype_and_number_checks_as_torch(name):
    call, kinds = TERNARY[name]
    for kind in kinds:           # torch checks a half tensor's number against float32
        dtype = {"half": np.float16, "bf16": ml_dtypes.bfloat16}.get(kind, np.float32)
        same(call, *(np.array(e, dtype) for e in ENDS[kind]))


# ----- half precision beside a number, and number / x --------------------------------------
SCALARS = {"number": lambda L: 1 / 3, "0-d float64": lambda L: L.tensor(7.77, dtype=L.float64),
           "0-d float32": lambda L: L.tensor(0.1, dtype=L.float32), "2**40": lambda L: 2 ** 40,
           "0-d int32": lambda L: L.tensor(-2147483647, dtype=L.int32)}
BINARY = {"x + s": lambda x, s: x + s, "s + x": lambda x, s: s + x, "x - s": lambda x, s: x - s,
          "s - x": lambda x, s: s - x, "x * s": lambda x, s: x * s, "s * x": lambda x, s: s * x,
          "x / s": lambda x, s: x / s, "s / x": lambda x, s: s / x,
          "add_": lambda x, s: x.add_(s), "sub_": lambda x, s: x.sub_(s),
          "mul_": lambda x, s: x.mul_(s), "div_": lambda x, s: x.div_(s),
          "x.mul(s)": lambda x, s: x.mul(s), "x.div(s)": lambda x, s: x.div(s),
          "x // s": lambda x, s: x // s, "x //= s": lambda x, s: x.__ifloordiv__(s)}


@pytest.mark.parametrize("scalar", sorted(SCALARS))
@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_a_scalar_beside_a_tensor_rounds_as_torch(dtype, op, scalar):
    # torch's add and sub round a scalar to a half dtype first, its mul, div and floor
    # division keep it in float32 when it is the second operand (a 0-d x too), and
    # number / x is x.reciprocal() * number
    data = np.linspace(-3, 3, 40).astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    same(lambda L, x: BINARY[op](x, SCALARS[scalar](L)), data)
    for value in data[::7]:                                            # 0-d tensors
        same(lambda L, x: BINARY[op](x, SCALARS[scalar](L)), np.array(value))


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_in_place_ops_with_another_dtype_round_as_torch(dtype, op):
    data = np.linspace(-3, 3, 40).astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    same(lambda L, x, y: getattr(x, op)(y), data, np.arange(2041, 2081))     # int64, with dims
    same(lambda L, x: getattr(x, op)(L.tensor(0.1, dtype=L.float64)), data)   # 0-d float64


def test_a_number_over_x_differentiates_as_torchs_reciprocal_product():
    data = np.linspace(0.5, 3, 7)
    x, xt = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    (7.3 / x).sum().backward()
    (7.3 / xt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-15)


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["x * s", "x / s", "x + s", "s * x"])
def test_an_integer_tensor_beside_a_0d_half_is_rounded_to_half_first(op, half):
    # the 0-d half operand stays at float32, the int32 tensor is cast to the half dtype
    # (2147483646 is inf in float16, 2049 is 2048), as torch's
    data = np.array([3, 2049, 2051, -2147483647, 2147483646], np.int32)
    for value in (0.0, 1.5, 1 / 3):
        same(lambda L, x, v=value: BINARY[op](x, L.tensor(v, dtype=getattr(L, half))), data)
