"""``mg.Tensor(array)`` as ``torch.Tensor(array)``: the legacy constructor gives the default
float dtype whatever the array's, and shares the array's memory when it already holds that
dtype (a copy otherwise). Compared with torch at test time."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

ARRAYS = {
    "float64": lambda: np.array([1.5, -2.25, 3.0]),
    "float32": lambda: np.array([1.5, -2.25, 3.0], np.float32),
    "float16": lambda: np.array([1.5, -2.25], np.float16),
    "int64": lambda: np.array([[1, 2], [3, 4]]),
    "uint8": lambda: np.array([0, 200, 255], np.uint8),
    "bool": lambda: np.array([True, False]),
    "0-d": lambda: np.array(3.25),
    "empty": lambda: np.zeros((0, 3)),
    "strided": lambda: np.arange(12.0).reshape(3, 4)[:, ::2],
    "transposed": lambda: np.arange(6.0, dtype=np.float32).reshape(2, 3).T,
}


def _shares(tensor, array):
    return np.shares_memory(np.asarray(tensor.detach().numpy()), array)


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize("name", ARRAYS)
def test_an_array_becomes_the_default_dtype_and_is_shared_when_it_has_it(name, default):
    before = mg.get_default_dtype(), torch.get_default_dtype()
    mg.set_default_dtype(getattr(mg, default))
    torch.set_default_dtype(getattr(torch, default))
    try:
        ours, theirs = mg.Tensor(ARRAYS[name]()), torch.Tensor(ARRAYS[name]())
        assert str(ours.dtype) == str(theirs.dtype)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        array, reference = ARRAYS[name](), ARRAYS[name]()
        ours, theirs = mg.Tensor(array), torch.Tensor(reference)
        assert _shares(ours, array) == _shares(theirs, reference)
        if array.size:                      # a write to the array shows where it is shared
            array.reshape(-1)[:1] = 7 if array.flags.c_contiguous else array.reshape(-1)[:1]
            reference.reshape(-1)[:1] = 7 if reference.flags.c_contiguous else \
                reference.reshape(-1)[:1]
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    finally:
        mg.set_default_dtype(before[0])
        torch.set_default_dtype(before[1])


def test_a_complex_array_loses_its_imaginary_part_with_torchs_warning():
    data = np.array([1 + 2j, -3j])
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        ours = mg.Tensor(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.Tensor(data)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_shared_tensor_writes_through_to_the_array_as_torchs_does():
    ours_array, their_array = np.zeros(3, np.float32), np.zeros(3, np.float32)
    ours, theirs = mg.Tensor(ours_array), torch.Tensor(their_array)
    ours.add_(2)
    theirs.add_(2)
    np.testing.assert_array_equal(ours_array, their_array)


def test_a_read_only_array_is_copied_and_the_copy_can_be_written():
    array = np.ones(3, np.float32)
    array.flags.writeable = False
    ours = mg.Tensor(array)
    assert not _shares(ours, array)
    ours.add_(1)
    np.testing.assert_array_equal(ours.numpy(), [2, 2, 2])


def test_a_reversed_view_is_refused_as_torch_refuses_it():
    with pytest.raises(ValueError):
        torch.Tensor(np.arange(3.0)[::-1])
    with pytest.raises(ValueError, match="negative"):
        mg.Tensor(np.arange(3.0)[::-1])


def test_dtype_given_keeps_its_meaning_and_subclasses_keep_the_arrays_dtype():
    # ``dtype=`` beside data is this library's (torch's Tensor(array, dtype=...) is a
    # TypeError); Parameter and the library's own arrays keep their dtype
    assert mg.Tensor(np.array([1, 2]), dtype=mg.float64).dtype == np.float64
    assert mg.nn.Parameter(np.zeros(2)).dtype == np.float64
    assert mg.nn.Linear(2, 3, dtype=mg.float64).weight.dtype == np.float64
    assert mg.nn.BatchNorm1d(2).num_batches_tracked.dtype == np.int64
    assert mg.tensor(np.array([1.0, 2.0])).dtype == np.float64        # torch.tensor's rule


def test_the_comparison_can_fail():
    with pytest.raises(AssertionError):
        assert str(mg.tensor(np.array([1.0])).dtype) == \
            str(torch.Tensor(np.array([1.0])).dtype).removeprefix("torch.")


def _name(node):
    return None if node is None else node.name()


def _alias_facts(lib):
    # Tensor(t) of a Tensor t: memory, version counter, base, flags, node and gradients
    facts = []
    base = lib.arange(6.0)
    t = base[1:4]
    a = lib.Tensor(t)
    a[0] = 50.0                                        # through the alias into t and base
    facts += [base.tolist(), t._version, a._version, a._base is base, a.requires_grad,
              _name(a.grad_fn), a.is_leaf, a.data_ptr() == t.data_ptr()]
    for dtype in (lib.float64, lib.int64, lib.bool):
        x = lib.zeros(2, dtype=dtype)
        y = lib.Tensor(x)
        facts += [str(y.dtype).removeprefix("torch."), y.data_ptr() == x.data_ptr()]
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.Tensor(w)
    facts += [b.requires_grad, _name(b.grad_fn), b.is_leaf, b._base is w, type(b).__name__]
    (b * b).sum().backward()
    facts.append(w.grad.tolist())
    with lib.no_grad():
        c = lib.Tensor(w)
    facts += [c.requires_grad, _name(c.grad_fn), c.is_leaf, c._base is w]
    y = w * 1.0                                        # an in-place write through the alias
    saved = (y * y).sum()                              # bumps y's version: y was saved
    lib.Tensor(y).mul_(2.0)
    try:
        saved.backward()
        facts.append("ran")
    except RuntimeError:
        facts.append(RuntimeError)
    x = lib.tensor([0.5, -1.0], requires_grad=True)    # twice differentiable
    (g,) = lib.autograd.grad((lib.Tensor(x) ** 3).sum(), x, create_graph=True)
    g.sum().backward()
    facts += [g.tolist(), x.grad.tolist()]
    p = lib.nn.Parameter(lib.ones(2))
    q = lib.Tensor(p)
    facts += [type(q).__name__, q.requires_grad, _name(q.grad_fn), q.data_ptr() == p.data_ptr()]
    return facts


def test_tensor_of_a_tensor_is_torchs_alias():
    """Same memory and version counter, ``_base``, an ``AliasBackward0`` node where the
    tensor requires grad (none under ``no_grad``, where the flag is kept), as torch's."""
    assert _alias_facts(mg) == _alias_facts(torch)


# arrays no tensor is made of, or not as they are: each constructor's answer is torch's
UNREADABLE = {
    "object of numbers": lambda: np.array([1.5, 2], dtype=object),
    "object of mixed": lambda: np.array(["a", 1], dtype=object),
    "empty object": lambda: np.array([], dtype=object),
    "str": lambda: np.array(["ab", "c"]),
    "bytes": lambda: np.array([b"ab", b"c"]),
    "structured": lambda: np.zeros(2, dtype=[("a", "f4"), ("b", "i4")]),
    "void": lambda: np.zeros(2, dtype="V4"),
    "datetime64": lambda: np.array(["2020-01-01", "2021-06-30"], dtype="datetime64[D]"),
    "timedelta64": lambda: np.array([1, 2], dtype="timedelta64[s]"),
    "big-endian float64": lambda: np.array([1.5, 2.0], dtype=">f8"),
    "big-endian int32": lambda: np.array([[1, 2]], dtype=">i4"),
    "big-endian 0-d": lambda: np.array(1.5, dtype=">f4"),
    "big-endian empty": lambda: np.zeros((0, 2), dtype=">f8"),
    "little-endian float64": lambda: np.array([1.5, 2.0], dtype="<f8"),
    "native bool": lambda: np.array([True, False], dtype="=?"),
}
CONSTRUCTORS = {
    "Tensor": lambda lib, a: lib.Tensor(a),
    "tensor": lambda lib, a: lib.tensor(a),
    "tensor dtype=float32": lambda lib, a: lib.tensor(a, dtype=lib.float32),
    "as_tensor": lambda lib, a: lib.as_tensor(a),
    "as_tensor dtype=float64": lambda lib, a: lib.as_tensor(a, dtype=lib.float64),
    "asarray": lambda lib, a: lib.asarray(a),
    "from_numpy": lambda lib, a: lib.from_numpy(a),
    "FloatTensor": lambda lib, a: lib.FloatTensor(a),
    "LongTensor": lambda lib, a: lib.LongTensor(a),
    "DoubleTensor": lambda lib, a: lib.DoubleTensor(a),
}


def _outcome(lib, constructor, name):
    # (dtype, values) of the tensor made, or the error's class
    try:
        made = CONSTRUCTORS[constructor](lib, UNREADABLE[name]())
    except Exception as error:                 # the class is what is compared
        return type(error)
    return str(made.dtype).removeprefix("torch."), made.tolist()


@pytest.mark.parametrize("constructor", CONSTRUCTORS)
@pytest.mark.parametrize("name", UNREADABLE)
def test_an_unreadable_array_gets_torchs_answer_from_every_constructor(name, constructor):
    theirs = _outcome(torch, constructor, name)
    ours = _outcome(mg, constructor, name)
    if isinstance(theirs, type):
        assert isinstance(ours, type) and issubclass(ours, theirs), (ours, theirs)
    else:
        assert ours == theirs


@pytest.mark.parametrize("name, error, words", [
    ("object of numbers", TypeError, "object"), ("str", TypeError, "str"),
    ("datetime64", TypeError, "datetime64"), ("big-endian float64", ValueError, "byte order")])
def test_the_refusal_names_the_constructor_and_what_is_wrong(name, error, words):
    for constructor, fn in (("tensor", "tensor"), ("Tensor", "Tensor()"),
                            ("from_numpy", "from_numpy")):
        with pytest.raises(error, match=words) as caught:
            CONSTRUCTORS[constructor](mg, UNREADABLE[name]())
        assert str(caught.value).startswith(fn + ":")


def test_a_refused_array_is_left_as_it_was():
    array = np.array([1.5, 2.0], dtype=">f8")
    with pytest.raises(ValueError):
        mg.from_numpy(array)
    assert array.dtype == np.dtype(">f8") and array.tolist() == [1.5, 2.0]
    converted = array.astype(array.dtype.newbyteorder("="))    # the way the message gives
    assert mg.from_numpy(converted).tolist() == torch.from_numpy(converted).tolist()


@pytest.mark.parametrize("make", [
    lambda lib: lib.Tensor([1e40, -1e40, 1.0]),
    lambda lib: lib.Tensor(np.array([1e40, -1e40, 1.0])),
    lambda lib: lib.tensor([1e40, -1e40, 1.0], dtype=lib.float32),
    lambda lib: lib.tensor(np.array([1e40, 1.0]), dtype=lib.float16)])
def test_a_value_past_the_dtypes_range_is_inf_silently_as_torchs(make):
    # a RuntimeWarning from the library fails the test (the suite's filterwarnings)
    ours, theirs = make(mg), make(torch)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
