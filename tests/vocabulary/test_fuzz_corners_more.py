"""More tensor-op corners against torch 2.13: ``x[index] = value`` beside a bool mask (torch's
masked fill whatever ints, slices, None or ``...`` stand beside it), numbers past half
precision's range, values torch refuses by kind; which subtractions refuse a bool; in-place
writes into read-only memory leaving everything as it was; float16 ``add_``/``sub_`` of a
number bit for bit; float32 scans along every dim bit for bit (the row-at-a-time path too);
kthvalue's index at ties from the vectorized quickselect, against torch and against the
one-row oracle; ``x[0, :, idx]`` read in one pass or recorded as torch's two nodes; and
the index_* ops on tensors without elements."""

import ml_dtypes
import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm.ops.sorting import _quickselect, _quickselect_rows
from microgradnorm.tensor import OverlapWriteError


def values(t):
    """A tensor of either library as a NumPy array (bfloat16 through float32)."""
    if t.dtype in (torch.bfloat16, mg.bfloat16):
        t = t.float()
    return t.detach().numpy()


def same(call, *builders):
    """``call(lib, *tensors)`` in both libraries (``builders``: lib -> tensor): torch raises
    and so does mg, an instance of torch's class, its tensors as they were; or the same
    dtypes, shapes and values (NaN where torch's) of the results and the tensors."""
    def run(lib):
        tensors = [build(lib) for build in builders]
        before = [values(t).copy() for t in tensors]
        try:
            return call(lib, *tensors), tensors, before
        except Exception as error:                      # noqa: BLE001 (torch's class)
            return error, tensors, before
    expected, theirs, _ = run(torch)
    got, ours, before = run(mg)
    if isinstance(expected, Exception):
        assert isinstance(got, type(expected)), (got, expected)
        for t, was in zip(ours, before):
            np.testing.assert_array_equal(values(t), was)
        return
    assert not isinstance(got, Exception), (got, expected)
    results = [got] if isinstance(got, mg.Tensor) else []
    wanted = [expected] if isinstance(expected, torch.Tensor) else []
    for a, b in zip(results + ours, wanted + theirs):
        assert str(a.dtype) == str(b.dtype), (a, b)
        assert tuple(a.shape) == tuple(b.shape), (a, b)
        np.testing.assert_array_equal(values(a), values(b))


# ----- x[index] = value: torch's masked fill beside other parts, index_put_ otherwise -------
S = slice(None)
INDEXES = {
    ":, mask": lambda L: (S, L.tensor([True, False])),
    "..., mask": lambda L: (Ellipsis, L.tensor([True, False])),
    "mask, :": lambda L: (L.tensor([True, False, True]), S),
    "0, mask": lambda L: (0, L.tensor([True, False])),
    "mask, 0": lambda L: (L.tensor([True, False, True]), 0),
    "None, mask": lambda L: (None, L.tensor([True, False, True])),
    "mask, None": lambda L: (L.tensor([True, False, True]), None),
    "0-d int tensor, mask": lambda L: (L.tensor(0), L.tensor([True, False])),
    "slice, mask": lambda L: (slice(1, 3), L.tensor([True, False])),
    "2-d mask": lambda L: L.tensor([[True, False], [False, True], [True, True]]),
    "None, 2-d mask": lambda L: (None, L.tensor([[True, False], [False, True], [True, True]])),
    ":, list of bools": lambda L: (S, [True, False]),
    "mask selecting nothing": lambda L: L.tensor([False, False, False]),
    "True": lambda L: True,
    "True, mask": lambda L: (True, L.tensor([True, False, True])),
    "0-d mask": lambda L: L.tensor(True),
    "0-d mask, mask": lambda L: (L.tensor(True), L.tensor([True, False, True])),
    "mask, int tensor": lambda L: (L.tensor([True, False, True]), L.tensor([1])),
    "int tensor, mask": lambda L: (L.tensor([0, 2]), L.tensor([True, False])),
    "mask, mask": lambda L: (L.tensor([True, False, True]), L.tensor([True, False])),
    "int tensor": lambda L: L.tensor([0, 2]),
}
VALUES = {
    "int64 0-d": lambda L: L.tensor(5),
    "float64 [1]": lambda L: L.tensor([2.5], dtype=L.float64),
    "bool 0-d": lambda L: L.tensor(True),
    "int32 [1, 1]": lambda L: L.tensor([[7]], dtype=L.int32),
    "float64 past float32": lambda L: L.tensor(1e300, dtype=L.float64),
    "float64 NaN": lambda L: L.tensor(float("nan"), dtype=L.float64),
    "float64 [2]": lambda L: L.tensor([1.5, 2.5], dtype=L.float64),
    "float16 0-d": lambda L: L.tensor(1.5, dtype=L.float16),
    "complex 0-d": lambda L: L.tensor(1 + 2j),
}


@pytest.mark.filterwarnings("ignore:Casting complex values to real")     # (the next test's)
@pytest.mark.parametrize("value", sorted(VALUES))
@pytest.mark.parametrize("index", sorted(INDEXES))
@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_one_value_beside_one_mask_is_torchs_masked_fill(dtype, index, value):
    def write(L, x, v):
        x[INDEXES[index](L)] = v
    same(write, lambda L: L.zeros(3, 2, dtype=getattr(L, dtype)), VALUES[value])


@pytest.mark.filterwarnings("ignore:Casting complex values to real")
@pytest.mark.parametrize("index", [Ellipsis, True, (0, slice(None))])
def test_a_complex_value_copied_into_a_real_tensor_warns_as_torch(index):
    """torch's warning (once a process there: its TORCH_WARN_ONCE), and its real parts."""
    def write(L, x):
        x[index] = L.tensor([1 + 2j, 3 - 1j])
    same(write, lambda L: L.zeros(3, 2))
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        write(mg, mg.zeros(3, 2))


@pytest.mark.parametrize("index", ["2-d mask", ":, mask", "0, mask"])
def test_a_masked_fill_of_a_one_element_value_differentiates_as_torch(index):
    grads = []
    for L in (torch, mg):
        x = L.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        v = L.tensor([[2.5]], dtype=L.float64, requires_grad=True)
        z = x * 1
        z[INDEXES[index](L)] = v
        (z * L.tensor(np.arange(1.0, 7.0).reshape(3, 2))).sum().backward()
        grads.append((values(z), values(x.grad), values(v.grad)))
    for ours, theirs in zip(grads[1], grads[0]):
        np.testing.assert_array_equal(ours, theirs)


NUMBERS = {   # a number written by x[0] = number, x[mask] = number
    "1e6": 1e6, "-1e9": -1e9, "65520.0": 65520.0, "1e39": 1e39, "1e300": 1e300,
    "int 70000": 70000, "int 2**62": 2 ** 62, "int 2**63": 2 ** 63, "int -2**63 - 1": -2 ** 63 - 1,
    "nan": float("nan"), "-inf": float("-inf"), "np.float64(1e39)": np.float64(1e39),
    "np.int64(70000)": np.int64(70000), "True": True, "complex": 1 + 2j,
    "complex, no imaginary part": 1 + 0j, "np.complex128": np.complex128(1 + 2j),
    "str": "a", "None": None,
}


@pytest.mark.parametrize("number", sorted(NUMBERS))
@pytest.mark.parametrize("index", ["int", "mask", "slice"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32",
                                   "uint8"])
def test_numbers_written_by_setitem_as_torch(dtype, index, number):
    """float16 and bfloat16 take any real number (±inf past their range); float32 refuses a
    finite float past its max, integer dtypes what they cannot hold; a complex number only
    without an imaginary part; a str or None is a TypeError, an int past int64 a
    ValueError."""
    where = {"int": lambda L: 0, "mask": lambda L: L.tensor([True, False]),
             "slice": lambda L: slice(0, 1)}[index]

    def write(L, x):
        x[where(L)] = NUMBERS[number]
    same(write, lambda L: L.zeros(2, dtype=getattr(L, dtype)))


@pytest.mark.parametrize("number", [1 + 2j, 1 + 0j, np.complex128(3 - 1j), 1e39])
@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64"])
def test_fill_checks_a_number_as_torch(dtype, number):
    same(lambda L, x: x.fill_(number), lambda L: L.zeros(2, dtype=getattr(L, dtype)))


def test_a_value_of_the_wrong_shape_is_torchs_runtime_error():
    same(lambda L, x: x.__setitem__(L.tensor([0, 1]), L.ones(3)), lambda L: L.zeros(2))
    same(lambda L, x: x.__setitem__(L.tensor(1), L.ones(2)), lambda L: L.zeros(3))


# ----- subtraction with a bool ---------------------------------------------------------------
TENSORS = {"float": lambda L: L.ones(2), "int": lambda L: L.ones(2, dtype=L.int64),
           "bool": lambda L: L.tensor([True, False]), "0-d bool": lambda L: L.tensor(True)}
OTHERS = {"True": True, "False": False, "np.True_": np.True_, "1": 1, "1.5": 1.5}
SUBTRACTIONS = {
    "a - b": lambda L, a, b: a - b, "b - a": lambda L, a, b: b - a,
    "a.sub_(b)": lambda L, a, b: a.sub_(b), "a -= b": lambda L, a, b: a.__isub__(b),
    "sub(a, b)": lambda L, a, b: L.sub(a, b), "sub(b, a)": lambda L, a, b: L.sub(b, a),
    "sub(a, b, alpha=2)": lambda L, a, b: L.sub(a, b, alpha=2),
    "a.sub_(b, alpha=2)": lambda L, a, b: a.sub_(b, alpha=2),
    "rsub(a, b)": lambda L, a, b: L.rsub(a, b), "a.sub(b)": lambda L, a, b: a.sub(b),
}


@pytest.mark.parametrize("other", sorted(OTHERS) + sorted(TENSORS))
@pytest.mark.parametrize("tensor", sorted(TENSORS))
@pytest.mark.parametrize("op", sorted(SUBTRACTIONS))
def test_subtraction_refuses_bools_as_torch(op, tensor, other):
    """A bool tensor on either side or a Python bool is torch's RuntimeError; a NumPy bool
    is the float 1.0 (``x - np.True_``, float even beside an integer tensor)."""
    if other in OTHERS:
        same(lambda L, a: SUBTRACTIONS[op](L, a, OTHERS[other]), TENSORS[tensor])
    else:
        same(lambda L, a, b: SUBTRACTIONS[op](L, a, b), TENSORS[tensor], TENSORS[other])


# ----- in-place writes into read-only memory -------------------------------------------------
WRITES = {
    "add_": lambda L, x: x.add_(1.0), "mul_": lambda L, x: x.mul_(2),
    "sub_ tensor": lambda L, x: x.sub_(L.ones(2, 3)), "div_": lambda L, x: x.div_(2.0),
    "clamp_": lambda L, x: x.clamp_(min=0.5), "+=": lambda L, x: x.__iadd__(1),
    "exp_": lambda L, x: x.exp_(),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_refused_write_into_an_expanded_tensor_changes_nothing(name):
    """torch's RuntimeError, raised by NumPy's read-only flag before any element is written
    (no check before the write on the fast path)."""
    same(lambda L, base: WRITES[name](L, base.expand(2, 3)), lambda L: L.arange(3.0))
    base = mg.arange(3.0)
    with pytest.raises(OverlapWriteError):
        WRITES[name](mg, base.expand(2, 3))
    assert base._version == 0


@pytest.mark.parametrize("write", ["x[...] = 1", "masked_fill_", "fill_"])
def test_writes_torch_lets_into_shared_memory_raise_before_writing(write):
    base = mg.arange(3.0)
    x = base.expand(2, 3)
    call = {"x[...] = 1": lambda: x.__setitem__(Ellipsis, 1.0),
            "masked_fill_": lambda: x.masked_fill_(mg.ones(2, 3, dtype=mg.bool), 5.0),
            "fill_": lambda: x.fill_(5.0)}[write]
    with pytest.raises(RuntimeError, match="single memory location"):
        call()
    np.testing.assert_array_equal(base.numpy(), [0.0, 1.0, 2.0])
    assert base._version == 0


def test_a_refused_random_fill_leaves_the_generator_as_it_was():
    draws = []
    for L in (torch, mg):
        L.manual_seed(0)
        with pytest.raises(RuntimeError):
            L.zeros(3).expand(2, 3).uniform_()
        draws.append(values(L.zeros(4).uniform_()))
    np.testing.assert_array_equal(draws[1], draws[0])


# ----- float16 add_/sub_ of a number, NumPy's in-place loop: torch's bits ---------------------
FLOAT16 = np.arange(0, 65536, dtype=np.uint16).view(np.float16)
FLOAT16 = FLOAT16[np.isfinite(FLOAT16)]


@pytest.mark.parametrize("number", [0.1, 1 / 3, 3, -7, 70000.0, 2.5e-8, 1e39, 2 ** 40 + 1])
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_in_place_arithmetic_with_a_number_is_torchs_bit_for_bit(dtype, op, number):
    start = FLOAT16 if dtype == "float16" else \
        FLOAT16.astype(np.float32).astype(ml_dtypes.bfloat16)
    got = getattr(mg.tensor(start.copy()), op)(number)
    expected = getattr(torch.tensor(start.astype(np.float32)).to(getattr(torch, dtype)),
                       op)(number)
    np.testing.assert_array_equal(values(got), values(expected))


# ----- float32 (and half) scans along every dim: torch's float64 (float32) accumulation -----
@pytest.mark.parametrize("shape", [(7, 300), (3, 5, 257), (2, 1000, 3), (64, 64), (513, 9),
                                   (300, 2, 2)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_scans_along_every_dim_are_torchs_bits(dtype, op, shape):
    rng = np.random.default_rng(sum(shape))
    data = rng.standard_normal(shape) * rng.choice([1.0, 1e3], size=shape)
    if op == "cumprod":
        data = 1 + data * 1e-3
    data.flat[::97] = np.nan if op == "cumsum" else np.inf
    data = data.astype(np.float32)      # (float64 to float16: torch rounds through float32)
    for dim in range(len(shape)):
        got = getattr(mg.tensor(data).to(getattr(mg, dtype)), op)(dim)
        expected = getattr(torch.tensor(data).to(getattr(torch, dtype)), op)(dim)
        np.testing.assert_array_equal(values(got), values(expected))


def test_a_scan_taken_a_row_at_a_time_differentiates_as_torch():
    data = np.random.default_rng(3).standard_normal((300, 4, 2)).astype(np.float32)
    grads = []
    for L in (torch, mg):
        x = L.tensor(data, requires_grad=True)
        (x.cumsum(0) * L.tensor(np.arange(2400.0, dtype=np.float32).reshape(300, 4, 2))) \
            .sum().backward()
        grads.append(values(x.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


# ----- kthvalue at ties: the vectorized quickselect -------------------------------------------
def test_the_vectorized_quickselect_is_the_one_row_oracle():
    rng = np.random.default_rng(11)
    for _ in range(300):
        n, m = int(rng.integers(1, 40)), int(rng.integers(1, 5))
        rows = rng.integers(0, int(rng.integers(1, 6)), (m, n)).astype(np.float64)
        if rng.random() < 0.4:
            rows[rng.random((m, n)) < 0.2] = np.nan
        k = int(rng.integers(0, n))
        picks = _quickselect_rows(rows, k)
        assert picks.tolist() == [_quickselect(row.tolist(), k) for row in rows], (rows, k)


@pytest.mark.parametrize("shape, high, dtype", [
    ((3000, 6), 3, "int64"),          # many short rows: one quickselect a pattern of order
    ((700, 15), 4, "float32"),
    ((40, 300), 5, "float64"),        # long rows in lockstep
    ((3, 4000), 20, "int32"),
    ((200, 9), 2, "bfloat16"),
    ((50, 33), 3, "float16"),
])
def test_kthvalue_takes_torchs_index_among_ties(shape, high, dtype):
    rng = np.random.default_rng(shape[0])
    data = rng.integers(0, high, shape).astype(np.float64)
    if dtype[0] in "fb":
        data[rng.random(shape) < 0.1] = np.nan
    for dim in (1, 0):
        for k in sorted({1, 2, shape[dim] // 2, shape[dim]}):
            got = mg.kthvalue(mg.tensor(data).to(getattr(mg, dtype)), k, dim)
            expected = torch.kthvalue(torch.tensor(data).to(getattr(torch, dtype)), k, dim)
            np.testing.assert_array_equal(got.indices.numpy(), expected.indices.numpy())
            np.testing.assert_array_equal(values(got.values), values(expected.values))


# ----- x[0, :, idx]: torch's dims, one pass unrecorded, torch's two nodes recorded ------------
MIXED = [lambda L: (0, S, L.tensor([2, 0])), lambda L: (S, 0, S, L.tensor([1, 3])),
         lambda L: (0, S, L.tensor([[1, 2], [0, 3]])), lambda L: (Ellipsis, 0, S, [2, 0]),
         lambda L: (0, S, L.tensor([True, False, True, True]))]


@pytest.mark.parametrize("index", range(len(MIXED)))
def test_ints_beside_arrays_read_in_one_pass_without_a_graph(index):
    data = np.arange(120.0).reshape(2, 3, 4, 5)
    out = mg.tensor(data)[MIXED[index](mg)]
    expected = torch.tensor(data)[MIXED[index](torch)]
    assert out.grad_fn is None and tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert out._array.flags.c_contiguous


@pytest.mark.parametrize("index", range(len(MIXED)))
def test_ints_beside_arrays_record_two_nodes_as_torch(index):
    data = np.arange(120.0).reshape(2, 3, 4, 5)
    outs = []
    for L in (torch, mg):
        x = L.tensor(data, requires_grad=True)
        out = x[MIXED[index](L)]
        outs.append((out, x))
        assert out.grad_fn.next_functions[0][0].next_functions[0][0] is not None
        (out * L.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))) \
            .sum().backward()
    (out, x), (expected, xt) = outs[1], outs[0]
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("index", range(len(MIXED)))
def test_ints_beside_arrays_write_as_torch(index):
    def write(L, x):
        shape = tuple(x[MIXED[index](L)].shape)
        x[MIXED[index](L)] = L.tensor(np.arange(1000.0, 1000.0 + np.prod(shape)).reshape(shape))
    same(write, lambda L: L.tensor(np.arange(120.0).reshape(2, 3, 4, 5)))


@pytest.mark.parametrize("step", [-1, 0])
def test_a_slice_stepping_backwards_or_by_zero_is_torchs_value_error(step):
    same(lambda L, x: x[::step], lambda L: L.zeros(3))
    same(lambda L, x: x.__setitem__((0, slice(None, None, step)), 1.0),
         lambda L: L.zeros(2, 3))


# ----- the index_* ops on a tensor without elements -------------------------------------------
@pytest.mark.parametrize("shape, dim", [((0, 3), 0), ((2, 0), 1), ((0,), 0)])
@pytest.mark.parametrize("op", ["index_add_", "index_copy_", "index_fill_"])
def test_an_index_along_an_empty_dim_with_slices_raises_where_torch_does(op, shape, dim):
    def call(L, x):
        index, source = L.tensor([0]), L.ones(*shape[:dim], 1, *shape[dim + 1:])
        return x.index_fill_(dim, index, 1.0) if op == "index_fill_" \
            else getattr(x, op)(dim, index, source)
    expected = None
    try:
        call(torch, torch.zeros(*shape))
    except Exception as error:                          # noqa: BLE001 (torch's class)
        expected = type(error)
    if expected is None:              # index_add_ of 2-D and up: torch returns, mg raises
        assert op == "index_add_" and len(shape) > 1
        with pytest.raises(RuntimeError):
            call(mg, mg.zeros(*shape))
    else:
        with pytest.raises(expected):
            call(mg, mg.zeros(*shape))
