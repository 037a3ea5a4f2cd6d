"""Tensor creation and type promotion against torch, each corner computed by torch at test
time: NumPy scalars beside a tensor read as the Python numbers torch reads (a float, an int
as read for true division, a NumPy bool a float), a number to a complex tensor's power,
Python ints past int64 and ragged lists in ``mg.tensor`` (torch's error classes, bfloat16's
conversion), ``linspace``/``logspace`` with complex ends, tensor steps, bool dtypes and ends
past a half dtype, ``arange`` of bool and complex dtypes, complex fill values of
``full``/``full_like``, complex random tensors that require grad, and 0-d integer tensors
taken as sizes, ``eye``'s n and m and ``tril``'s diagonal."""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64"]
VALUES = {"bool": [True, False, True], "uint8": [0, 200, 7], "int8": [-128, -5, 127],
          "int32": [-7, 2 ** 20, 1], "int64": [-2 ** 40, -3, 0], "float16": [1.5, -0.0, -7.25],
          "bfloat16": [1.5, -2.25, 3.0], "float32": [1.5, float("nan"), -float("inf")],
          "float64": [1e-300, -2.5, 7.0], "complex64": [1 + 2j, -0.5j, 3]}


def pair(dtype, values=None):
    """The same values as a torch tensor and one of ours, of ``dtype``."""
    values = VALUES[dtype] if values is None else values
    theirs = torch.tensor(values, dtype=getattr(torch, dtype))
    data = theirs.float().numpy() if dtype == "bfloat16" else theirs.numpy()
    return theirs, mg.tensor(data, dtype=dtype)


def outcome(call, lib):
    """What ``call(lib)`` gives, comparable across the libraries: (dtype name, shape, values)
    for a tensor, the class for an exception."""
    try:
        out = call(lib)
    except Exception as error:       # noqa: BLE001  (any class: compared below)
        return error
    if isinstance(out, torch.Tensor):
        data = out.detach()
        data = data.float() if data.dtype == torch.bfloat16 else data
        return str(out.dtype), tuple(out.shape), data.numpy()
    assert isinstance(out, mg.Tensor), type(out)      # never a NumPy array
    data = out.detach().numpy()
    data = data.astype(np.float32) if str(data.dtype) == "bfloat16" else data
    return str(out.dtype), tuple(out.shape), data


def assert_as_torch(call, rtol=1e-6, atol=0.0):
    theirs, ours = outcome(call, torch), outcome(call, mg)
    if isinstance(theirs, Exception):
        assert isinstance(ours, type(theirs)), (theirs, ours)
        return
    assert not isinstance(ours, Exception), (theirs, ours)
    assert ours[:2] == theirs[:2], (theirs, ours)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=rtol, atol=atol, equal_nan=True)


NUMPY_SCALARS = [np.float16(1.5), np.float32(2.0), np.float64(-0.5), np.int32(3),
                 np.int64(-3), np.uint8(3), np.bool_(True)]
OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "==", "<"]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "float16", "float32"])
@pytest.mark.parametrize("scalar", NUMPY_SCALARS, ids=repr)
def test_numpy_scalars_beside_a_tensor_are_the_python_numbers_torch_reads(dtype, scalar):
    # np.float16(1.5) + int8 is float32 (a weak float), u8 / np.int64(-3) divides by -3,
    # np.True_ is 1.0: each result a tensor of torch's dtype and values
    theirs, ours = pair(dtype)
    for op in OPERATORS:
        for left in (True, False):
            def call(lib, op=op, left=left):
                x = theirs if lib is torch else ours
                return eval(f"x {op} s" if left else f"s {op} x", {"x": x, "s": scalar})
            assert_as_torch(call, rtol=1e-3 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("base", [2, 2.5, -1, True, np.float32(2), 2 ** 40])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_a_number_to_a_complex_tensors_power_is_torchs_with_its_gradient(base, dtype):
    values = [1 + 1j, 0.5 - 2j, 3, -1j]
    t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
    m = mg.tensor(values, dtype=dtype, requires_grad=True)
    theirs, ours = base ** t, base ** m
    assert str(ours.dtype) == f"torch.{dtype}"
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5)
    theirs.abs().sum().backward()
    ours.abs().sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-4)


@pytest.mark.parametrize("number", [1 + 1j, 2j, np.complex128(0.5 - 1j)], ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
@pytest.mark.parametrize("number_first", [True, False])
def test_complex_numbers_and_tensors_power_each_other_as_torchs(number, dtype, number_first):
    # (1 + 1j) ** x and x ** 1j: the number as a complex 0-d tensor, with torch's gradient
    values = [True, False, True] if dtype == "bool" else [1, 2, 0] if dtype == "int64" else \
        [0.5, -2.0, 3.0]
    grad = dtype not in ("int64", "bool")
    t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=grad)
    m = mg.tensor(values, dtype=dtype, requires_grad=grad)
    theirs, ours = (number ** t, number ** m) if number_first else (t ** number, m ** number)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5,
                               equal_nan=True)
    if grad:
        theirs.abs().sum().backward()
        ours.abs().sum().backward()
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-6)


WIDE_INTS = ["2 ** 63", "[2 ** 63]", "[1, 2 ** 63]", "[[1], [2 ** 63]]", "[-2 ** 63 - 1]",
             "[10 ** 30]", "[True, 2 ** 63]", "[1.5, 2 ** 64]", "[2 ** 64, 1j]",
             "[[1.5], [2 ** 70]]", "[2 ** 62, 1]"]


@pytest.mark.parametrize("data", WIDE_INTS)
@pytest.mark.parametrize("dtype", [None, "int64", "int8", "uint8", "bool", "float32",
                                   "bfloat16", "float64"])
def test_python_ints_past_int64_are_read_as_torch_reads_them(data, dtype):
    # no dtype or an integer one: torch's ValueError (an int64 it does not fit); beside a
    # float, or into a floating dtype (bfloat16 too), the number
    if dtype is None:
        assert_as_torch(lambda lib: lib.tensor(eval(data)))
    else:
        assert_as_torch(lambda lib: lib.tensor(eval(data), dtype=getattr(lib, dtype)),
                        rtol=1e-2)


RAGGED = ["[[1, 2], [3]]", "[1, [2]]", "[[1], 2]", "[[1, 2], 3]", "[[[1]], [2]]",
          "[[1], [[2]]]", "[1.5, [2]]", "[[1.5], 2]", "[(1, 2), [3]]", "[[1], [2, 3]]",
          "[[1], []]", "[[1, 2], (3, 4, 5)]"]


@pytest.mark.parametrize("data", RAGGED)
@pytest.mark.parametrize("dtype", [None, "int64", "float32", "bfloat16"])
@pytest.mark.parametrize("factory", ["tensor", "as_tensor", "asarray"])
def test_ragged_lists_raise_torchs_class_by_where_they_are_ragged(data, dtype, factory):
    # a list where a number should be, a number where a list should be: TypeError; a list
    # of another length: ValueError
    def call(lib):
        kwargs = {} if dtype is None else {"dtype": getattr(lib, dtype)}
        return getattr(lib, factory)(eval(data), **kwargs)
    theirs, ours = outcome(call, torch), outcome(call, mg)
    assert isinstance(theirs, (TypeError, ValueError)) and type(ours) is type(theirs), \
        (theirs, ours)


def test_a_list_of_zero_d_tensors_and_wide_ints_take_bfloat16():
    assert_as_torch(lambda lib: lib.tensor([lib.tensor(1.5), lib.tensor(-2.0)],
                                           dtype=lib.bfloat16))
    assert_as_torch(lambda lib: lib.tensor(-2 ** 63 - 1, dtype=lib.bfloat16), rtol=1e-2)


ONE_ELEMENT_ITEMS = {
    "1-d": lambda lib: [lib.tensor([1.0]), lib.tensor([2.0])],
    "2-d and 0-d": lambda lib: [lib.tensor([[1]]), lib.tensor(2), 3],
    "float64 items": lambda lib: [lib.tensor([0.5], dtype=lib.float64), lib.tensor(1.5)],
    "nested": lambda lib: [lib.tensor([1.5]), [2.5]],
}


@pytest.mark.parametrize("items", ONE_ELEMENT_ITEMS)
def test_one_element_tensors_in_a_list_are_read_as_their_numbers_as_torchs(items):
    assert_as_torch(lambda lib: lib.tensor(ONE_ELEMENT_ITEMS[items](lib)))


def test_a_tensor_of_a_tensor_warns_and_copies_as_torchs():
    for lib in (torch, mg):
        w = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning):
            copy = lib.tensor(w)
        copy[0] = 5.0
        assert not copy.requires_grad and w.tolist() == [1.0, 1.0]


SPACED_ENDS = [(0, 1 + 1j), (-1 - 2j, 3 + 1j), (1j, 2), (0, 1), (-5, 5), (2.5, 2)]


@pytest.mark.parametrize("fn", ["linspace", "logspace"])
@pytest.mark.parametrize("ends", SPACED_ENDS)
@pytest.mark.parametrize("dtype", [None, "float32", "float64", "complex64", "complex128",
                                   "int64", "bool"])
def test_linspace_and_logspace_take_complex_ends_tensor_steps_and_refuse_as_torch(
        fn, ends, dtype):
    for steps in (0, 1, 2, 5, 7, -1, "tensor", "float tensor"):
        def call(lib, steps=steps):
            n = lib.tensor(4) if steps == "tensor" else lib.tensor(4.0) if \
                steps == "float tensor" else steps
            start = lib.tensor(ends[0]) if isinstance(ends[0], complex) else ends[0]
            kwargs = {} if dtype is None else {"dtype": getattr(lib, dtype)}
            return getattr(lib, fn)(start, ends[1], n, **kwargs)
        assert_as_torch(call, rtol=1e-5, atol=1e-6)   # (a zero's last bit: docs/pytorch.md)


@pytest.mark.parametrize("fn", ["linspace", "logspace"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("end", [1e5, 1e10, 1e39, 1e300])
@pytest.mark.parametrize("steps", [0, 1, 3])
def test_spaced_ends_past_a_float_dtype_are_torchs_error(fn, dtype, end, steps):
    assert_as_torch(lambda lib: getattr(lib, fn)(0, end, steps, dtype=getattr(lib, dtype)),
                    rtol=1e-2)


@pytest.mark.parametrize("args", [(0, 10, 3), (0, 1, 0.1), (1, 0, 1), (0, 1, 0), (0, 0, 1),
                                  (0, float("inf"), 1)])
@pytest.mark.parametrize("dtype", ["bool", "complex64", "complex128", "int32", "float64"])
def test_arange_of_bool_and_complex_dtypes_is_torchs_not_implemented(args, dtype):
    assert_as_torch(lambda lib: lib.arange(*args, dtype=getattr(lib, dtype)))


@pytest.mark.parametrize("fill", [1 + 1j, 2 + 0j, -0.5j, 3, 1.5])
@pytest.mark.parametrize("dtype", [None, "complex64", "complex128", "float32", "int64",
                                   "uint8"])
def test_full_and_full_like_take_complex_fill_values_as_torch(fill, dtype):
    kwargs = (lambda lib: {}) if dtype is None else \
        (lambda lib: {"dtype": getattr(lib, dtype)})
    assert_as_torch(lambda lib: lib.full((2, 3), fill, **kwargs(lib)))
    for like in ("complex64", "float32", "int64"):
        def call(lib, like=like):
            x = pair(like)[0 if lib is torch else 1]
            return lib.full_like(x, fill, **kwargs(lib))
        assert_as_torch(call)


@pytest.mark.parametrize("factory", ["rand", "randn", "rand_like", "randn_like", "zeros",
                                     "ones_like", "empty"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "int64"])
def test_complex_random_tensors_may_require_grad_as_torchs(factory, dtype):
    def call(lib):
        if factory.endswith("_like"):
            return getattr(lib, factory)(lib.ones(2, dtype=getattr(lib, dtype)),
                                         requires_grad=True)
        return getattr(lib, factory)(2, dtype=getattr(lib, dtype), requires_grad=True)
    theirs, ours = outcome(call, torch), outcome(call, mg)
    if isinstance(theirs, Exception):
        assert isinstance(ours, RuntimeError), (theirs, ours)
    else:
        assert not isinstance(ours, Exception) and ours[:2] == theirs[:2], (theirs, ours)
        assert call(mg).requires_grad


@pytest.mark.parametrize("call", [
    lambda lib, n: lib.zeros(n), lambda lib, n: lib.ones([n, n]),
    lambda lib, n: lib.empty(n, 2).zero_(), lambda lib, n: lib.full((n,), 1.5),
    lambda lib, n: lib.eye(n), lambda lib, n: lib.eye(3, n), lambda lib, n: lib.eye(n, -1),
    lambda lib, n: lib.tril(lib.ones(4, 5), n), lambda lib, n: lib.ones(4, 5).triu(n),
    lambda lib, n: lib.triu(lib.ones(2, 3, 3), diagonal=n)])
@pytest.mark.parametrize("number", ["int", "tensor", "int32 tensor", "float tensor",
                                    "1-d tensor", "negative tensor"])
def test_zero_d_integer_tensors_are_sizes_and_diagonals_as_torchs(call, number):
    def make(lib):
        return {"int": 2, "tensor": lib.tensor(2), "int32 tensor": lib.tensor(2, dtype=lib.int32),
                "float tensor": lib.tensor(2.0), "1-d tensor": lib.tensor([2]),
                "negative tensor": lib.tensor(-1)}[number]
    theirs, ours = outcome(lambda lib: call(lib, make(lib)), torch), \
        outcome(lambda lib: call(lib, make(lib)), mg)
    if isinstance(theirs, Exception):            # torch's TypeError or RuntimeError
        assert isinstance(ours, (TypeError, RuntimeError)), (theirs, ours)
        return
    assert not isinstance(ours, Exception), (theirs, ours)
    assert ours[:2] == theirs[:2]
    np.testing.assert_array_equal(ours[2], theirs[2])
