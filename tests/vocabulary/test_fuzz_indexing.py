"""Indexing, the index ops, in-place writes and ``out=`` against PyTorch, at the corners a
differential fuzzer found: how torch reads each part of an index (uint8 masks, non-tuple
sequences, index dtypes), the index ops' dtype rules and error classes, partial memory
overlap between what an op reads and writes, in-place shape errors, ``copy_``'s shape rule,
``out=``'s version count and aliasing, and the Tensor methods that take no ``out=``."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

BUILTIN = (IndexError, TypeError, ValueError, RuntimeError, NotImplementedError)


def _outcome(lib, call):
    # (result as nested lists / error's builtin classes, the UserWarnings' messages)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = _plain(call(lib))
        except Exception as error:                          # noqa: BLE001 (compared below)
            result = ("raises", {c for c in BUILTIN if isinstance(error, c)})
    seen = sorted({str(w.message).split(" (Triggered")[0] for w in caught
                   if w.category is UserWarning})
    return result, seen


def _plain(value):
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        dtype = str(value.dtype).split(".")[-1]
        return dtype, tuple(value.shape), value.detach().numpy().tolist()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def same(call, warns=True):
    """``call(lib)`` for torch and mg: equal values, dtypes and shapes, or errors whose
    builtin classes include torch's; with ``warns``, the same UserWarnings."""
    expected, expected_warnings = _outcome(torch, call)
    got, got_warnings = _outcome(mg, call)
    if isinstance(expected, tuple) and expected and expected[0] == "raises":
        assert isinstance(got, tuple) and got[0] == "raises", got
        assert expected[1] <= got[1], (expected, got)
    else:
        assert got == expected
    if warns:
        assert got_warnings == expected_warnings


def _x(lib, shape=(4, 3)):
    return lib.arange(float(np.prod(shape))).reshape(shape)


# ----- how an index is read ------------------------------------------------------------------
GETS = {
    "uint8 mask": lambda lib: _x(lib)[lib.tensor([1, 0, 1, 0], dtype=lib.uint8)],
    "uint8 2-D mask": lambda lib: _x(lib)[(_x(lib) > 4).to(lib.uint8)],
    "uint8 numpy mask": lambda lib: _x(lib)[np.array([0, 1, 1, 0], np.uint8)],
    "0-d uint8": lambda lib: _x(lib)[lib.tensor(0, dtype=lib.uint8)],
    "uint8 mask beside int": lambda lib: _x(lib)[lib.tensor([1, 0, 1, 0], dtype=lib.uint8), 1],
    "sequence of lists": lambda lib: _x(lib)[[[0, 1], [1, 2]]],
    "sequence with a slice": lambda lib: _x(lib)[[slice(None), 1]],
    "sequence with None": lambda lib: _x(lib)[[None, 0]],
    "sequence of 0-d tensors": lambda lib: _x(lib)[[lib.tensor(0), lib.tensor(2)]],
    "list of ints": lambda lib: _x(lib)[[0, 3, 3]],
    "list of floats": lambda lib: _x(lib)[[1.7, 0.2]],
    "list of bools": lambda lib: _x(lib)[[True, False, True, False]],
    "numpy floats": lambda lib: _x(lib)[np.array([1.7, 0.2])],
    "numpy uint64": lambda lib: _x(lib)[np.array([3, 0], np.uint64)],
    "0-d numpy float": lambda lib: _x(lib)[np.array(2.5)],
    "int32 tensor": lambda lib: _x(lib)[lib.tensor([0, 2], dtype=lib.int32)],
    "int16 tensor": lambda lib: _x(lib)[lib.tensor([0, 2], dtype=lib.int16)],
    "int8 tensor": lambda lib: _x(lib)[:, lib.tensor([0, 2], dtype=lib.int8)],
    "float tensor": lambda lib: _x(lib)[lib.tensor([0.0])],
    "0-d int8 tensor": lambda lib: _x(lib)[lib.tensor(1, dtype=lib.int8)],
    "0-d float tensor": lambda lib: _x(lib)[lib.tensor(1.0)],
    "numpy bool scalar": lambda lib: _x(lib)[np.bool_(True)],
    "str": lambda lib: _x(lib)["a"],
}


@pytest.mark.parametrize("name", sorted(GETS))
def test_index_parts_read_as_torch(name):
    same(GETS[name])


def test_a_0d_numpy_int_is_a_view():
    for lib in (torch, mg):
        x = _x(lib)
        x[np.array(1)].add_(100)
        assert x[1].tolist() == [103.0, 104.0, 105.0]


def _set(index, value):
    def call(lib):
        x = _x(lib)
        x[index(lib)] = value(lib)
        return x
    return call


SETS = {
    "uint8 mask, number": _set(lambda lib: lib.tensor([1, 0, 1, 0], dtype=lib.uint8),
                               lambda lib: 5.0),
    "uint8 mask, one element": _set(lambda lib: lib.tensor([1, 0, 1, 0], dtype=lib.uint8),
                                    lambda lib: lib.tensor([5.0])),
    "uint8 mask, row": _set(lambda lib: lib.tensor([1, 0, 1, 0], dtype=lib.uint8),
                            lambda lib: lib.tensor([5.0, 6.0, 7.0])),
    "uint8 mask beside an int": _set(lambda lib: (lib.tensor([1, 0, 1, 0], dtype=lib.uint8), 0),
                                     lambda lib: 5.0),
    "0-d uint8": _set(lambda lib: lib.tensor(1, dtype=lib.uint8), lambda lib: 5.0),
    "bool mask, number": _set(lambda lib: lib.tensor([True, False, True, False]),
                              lambda lib: 5.0),
    "row into one element": _set(lambda lib: (np.array(1), 2), lambda lib: lib.ones(3)),
    "sequence index": _set(lambda lib: [[0, 1], [1, 2]], lambda lib: -1.0),
}


@pytest.mark.parametrize("name", sorted(SETS))
def test_setitem_reads_the_index_as_torch(name):
    same(SETS[name])


@pytest.mark.parametrize("index", [0, slice(1, 2), Ellipsis, None, (0, 1), "ids", "int-ids"])
def test_setitem_on_a_leaf_names_the_view(index):
    def call(lib):
        x = lib.zeros(3, 3, requires_grad=True)
        part = {"ids": lib.tensor([0]), "int-ids": (0, lib.tensor([1]))}.get(index, index) \
            if isinstance(index, str) else index
        x[part] = 1.0
    messages = []
    for lib in (torch, mg):
        with pytest.raises(RuntimeError) as error:
            call(lib)
        messages.append(str(error.value).startswith("a view of a leaf Variable"))
    assert messages[0] == messages[1]


# ----- the index ops ---------------------------------------------------------------------------
def _int_index(lib, dtype, shape=(2,)):
    return lib.tensor(np.arange(int(np.prod(shape))).reshape(shape) % 2,
                      dtype=getattr(lib, dtype))


INDEX_OPS = {
    "index_select": lambda lib, i: _x(lib).index_select(0, i),
    "index_add": lambda lib, i: _x(lib).index_add(0, i, lib.ones(2, 3)),
    "index_copy": lambda lib, i: _x(lib).index_copy(0, i, lib.ones(2, 3)),
    "index_fill": lambda lib, i: _x(lib).index_fill(0, i, 1.0),
    "gather": lambda lib, i: _x(lib).gather(0, i.reshape(1, 2)),
    "scatter": lambda lib, i: _x(lib).scatter(0, i.reshape(1, 2), _x(lib)),
    "scatter_add": lambda lib, i: _x(lib).scatter_add(0, i.reshape(1, 2), _x(lib)),
    "scatter_reduce": lambda lib, i: _x(lib).scatter_reduce(0, i.reshape(1, 2), _x(lib), "sum"),
    "take": lambda lib, i: _x(lib).take(i),
    "take_along_dim": lambda lib, i: _x(lib).take_along_dim(i.reshape(1, 2), 0),
    "index_put": lambda lib, i: _x(lib).index_put((i,), lib.tensor(1.0)),
}


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
@pytest.mark.parametrize("op", sorted(INDEX_OPS))
def test_index_dtypes_each_op_takes(op, dtype):
    same(lambda lib: INDEX_OPS[op](lib, _int_index(lib, dtype)), warns=False)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32", "bool"])
@pytest.mark.parametrize("op", ["gather", "scatter", "index_select"])
def test_an_empty_index_of_any_dtype(op, dtype):
    def call(lib):
        x, index = lib.arange(5.0), lib.zeros(0, dtype=getattr(lib, dtype))
        if op == "scatter":
            return x.scatter(0, index, x)
        return getattr(x, op)(0, index)
    same(call, warns=False)


def test_index_reduce_warns_that_it_is_beta():
    mg.backend._WARNED.discard("index_reduce() is in beta and the API may change at any time.")
    with pytest.warns(UserWarning, match="index_reduce"):
        mg.zeros(2).index_reduce(0, mg.tensor([0]), mg.ones(1), "amax")


@pytest.mark.parametrize("dtype, reduce", [("bool", "prod"), ("bool", "amax"),
                                           ("complex64", "mean"), ("complex64", "amin"),
                                           ("float32", "amin")])
def test_index_reduce_refuses_bool_and_complex(dtype, reduce):
    same(lambda lib: lib.ones(2, dtype=getattr(lib, dtype)).index_reduce(
        0, lib.tensor([0]), lib.ones(1, dtype=getattr(lib, dtype)), reduce), warns=False)


@pytest.mark.parametrize("dtype", ["complex64", "bool"])
@pytest.mark.parametrize("reduce", ["amax", "amin", "sum", "prod", "mean"])
@pytest.mark.parametrize("n", [1, 0])
def test_scatter_reduce_of_complex_and_bool(dtype, reduce, n):
    same(lambda lib: lib.ones(2, dtype=getattr(lib, dtype)).scatter_reduce(
        0, lib.zeros(n, dtype=lib.int64), lib.ones(n, dtype=getattr(lib, dtype)), reduce),
        warns=False)


@pytest.mark.parametrize("op", ["scatter_reduce", "index_reduce", "scatter", "scatter_add"])
def test_an_empty_index_still_gives_the_source_a_gradient(op):
    def call(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        if op != "index_reduce":
            src = lib.ones(0, 2, dtype=lib.float64, requires_grad=True)
            index = lib.zeros(0, 2, dtype=lib.int64)
            y = x.scatter_reduce(0, index, src, "sum", include_self=False) \
                if op == "scatter_reduce" else getattr(x, op)(0, index, src)
        else:
            src = lib.ones(2, 0, dtype=lib.float64, requires_grad=True)
            y = x.index_reduce(1, lib.zeros(0, dtype=lib.int64), src, "prod",
                               include_self=False)
        (y * y).sum().backward()
        return y, x.grad, src.grad
    same(call, warns=False)


def test_scatter_with_reduce_and_a_tensor_src_is_deprecated():
    mg.backend._WARNED.clear()
    with pytest.warns(UserWarning, match="reduce argument of torch.scatter"):
        mg.zeros(3).scatter(0, mg.tensor([0]), mg.tensor([2.0]), reduce="add")


@pytest.mark.parametrize("op", ["index_copy", "index_add"])
@pytest.mark.parametrize("index, source", [((0, 1, 2), (4, 3)), ((0, 1), (2, 4)),
                                           ((0,), (1, 3))])
def test_index_copy_and_index_add_count_errors(op, index, source):
    same(lambda lib: getattr(_x(lib, (3, 3)), op)(0, lib.tensor(index), lib.ones(source)))


@pytest.mark.parametrize("alpha", [0.5, 2, 0, -1, True, False])
def test_index_add_of_bools_takes_alpha_as_truth(alpha):
    same(lambda lib: lib.tensor([False, True]).index_add(
        0, lib.tensor([0, 1]), lib.tensor([True, True]), alpha=alpha))


MASKED = {
    "complex into float": lambda lib: lib.zeros(3).masked_fill(lib.ones(3, dtype=lib.bool), 1j),
    "complex 1+0j": lambda lib: lib.zeros(3).masked_fill(lib.ones(3, dtype=lib.bool), 1 + 0j),
    "complex into complex": lambda lib: lib.zeros(3, dtype=lib.complex64).masked_fill(
        lib.ones(3, dtype=lib.bool), 1j),
    "complex into bool": lambda lib: lib.zeros(2, dtype=lib.bool).masked_fill(
        lib.tensor([True, False]), 1j),
    "1-d value": lambda lib: lib.zeros(3).masked_fill(lib.ones(3, dtype=lib.bool),
                                                      lib.tensor([2.0])),
    "mask that does not broadcast": lambda lib: lib.zeros(3).masked_fill(
        lib.ones(2, dtype=lib.bool), 1.0),
    "where, uint8 condition": lambda lib: lib.where(lib.tensor([1, 0], dtype=lib.uint8),
                                                    1.0, 2.0),
    "where, shapes that do not broadcast": lambda lib: lib.where(
        lib.ones(2, dtype=lib.bool), lib.ones(3), 0.0),
}


@pytest.mark.parametrize("name", sorted(MASKED))
def test_masked_fill_and_where(name):
    same(MASKED[name], warns=False)


# ----- in-place writes ---------------------------------------------------------------------
def _overlap(kind):
    def call(lib):
        x = lib.arange(9.0).reshape(3, 3)
        v = x.reshape(-1)
        {"transposed": lambda: x.add_(x.t()),
         "shifted": lambda: v[1:].add_(v[:-1]),
         "shifted copy": lambda: v[1:4].copy_(v[:3]),
         "shifted setitem": lambda: v.__setitem__(slice(1, 4), v[:3]),
         "apart setitem": lambda: v.__setitem__(slice(3, 6), v[:3]),
         "row broadcast": lambda: x.add_(x[0]),
         "itself": lambda: x.mul_(x),
         "strided": lambda: v[:4].add_(v[::2][:4]),
         "ids setitem": lambda: v.__setitem__(lib.tensor([3, 4, 5]), v[:3]),
         "clamp by a shifted view": lambda: v[1:].clamp_(v[:-1]),
         "out= shifted": lambda: lib.add(v[1:], 1, out=v[:-1])}[kind]()
        return x
    return call


@pytest.mark.parametrize("kind", ["transposed", "shifted", "shifted copy", "shifted setitem",
                                  "apart setitem", "row broadcast", "itself", "strided",
                                  "ids setitem", "clamp by a shifted view", "out= shifted"])
def test_partial_overlap_between_read_and_written_memory(kind):
    same(_overlap(kind))


IN_PLACE = {
    "add_ broadcast past self": lambda lib: lib.zeros(1, 3).add_(lib.ones(2, 3)),
    "mul_ shapes that do not broadcast": lambda lib: lib.zeros(3, 3).mul_(lib.ones(2)),
    "+= of a 2-D into 1-D": lambda lib: lib.zeros(3).__iadd__(lib.ones(2, 2)),
    "int += float": lambda lib: lib.arange(3).__iadd__(1.5),
    "bool.add_(1)": lambda lib: lib.tensor([True]).add_(1),
    "div_ of ints": lambda lib: lib.arange(3).div_(2),
    "div_ floor of ints": lambda lib: lib.arange(3).div_(2, rounding_mode="floor"),
    "clamp_ of ints by floats": lambda lib: lib.arange(6).clamp_(0.5, 3.5),
    "clamp_ complex bound": lambda lib: lib.zeros(3).clamp_(max=1 + 2j),
    "clamp complex tensor": lambda lib: lib.zeros(3, dtype=lib.complex64).clamp(1j),
    "fill_ bool with complex": lambda lib: lib.zeros(2, dtype=lib.bool).fill_(1 + 2j),
    "copy_ of (1,) into 0-d": lambda lib: lib.zeros(()).copy_(lib.ones(1)),
    "copy_ of (1, 3) into (3,)": lambda lib: lib.zeros(3).copy_(lib.ones(1, 3)),
    "copy_ of (3,) into (1, 3)": lambda lib: lib.zeros(1, 3).copy_(lib.ones(3)),
    "copy_ of (3, 1) into (2, 3)": lambda lib: lib.zeros(2, 3).copy_(lib.ones(3, 1)),
    "write into an expand without repeats": lambda lib: _expanded_write(lib),
}


@pytest.mark.parametrize("write", [lambda x: x.__iadd__(1.5), lambda x: x.add_(0.5),
                                   lambda x: x.div_(2), lambda x: x.mul_(1.5)])
def test_in_place_cast_errors_name_torch_types(write):
    for lib in (torch, mg):
        with pytest.raises(RuntimeError,
                           match="result type Float can't be cast to the desired output type "
                                 "Long"):
            write(lib.arange(3))


def _expanded_write(lib):
    x = lib.zeros(1, 3)
    x.expand(1, 1, 3).add_(1)
    x[:1].expand(1, 3).mul_(3)
    return x


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_errors_and_results(name):
    same(IN_PLACE[name], warns=False)


def test_as_strided_in_place_refuses_a_leaf_first_and_a_failure_changes_nothing():
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            lib.zeros(4, requires_grad=True).as_strided_((5,), (1,))
        x = lib.arange(4.0)
        with pytest.raises(RuntimeError):
            x.as_strided_((5,), (1,))
        assert x.shape == (4,) and x._version == 0
        assert x.as_strided_((2, 2), (1, 1)).tolist() == [[0.0, 1.0], [1.0, 2.0]]


def test_narrow_copy_is_one_clone_of_the_narrowed_view():
    x = mg.arange(6.0, requires_grad=True)
    y = mg.narrow_copy(x, 0, 1, 3)
    assert y.grad_fn.name() == "CloneBackward0" and not np.shares_memory(y._array, x._array)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0, 0.0]


# ----- out= ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["add", "sub", "subtract", "mul", "multiply", "div", "divide",
                                "true_divide"])
def test_tensor_methods_take_no_out(fn):
    same(lambda lib: getattr(lib.ones(2), fn)(lib.ones(2), out=lib.zeros(2)))


@pytest.mark.parametrize("out_shape", [(3,), (2,), (0,), (1, 3)])
def test_out_counts_one_write(out_shape):
    def call(lib):
        out = lib.zeros(out_shape)
        lib.add(lib.ones(3), 1, out=out)
        return out, out._version
    same(call)


@pytest.mark.parametrize("which", ["a", "b"])
def test_an_operand_as_out_is_written_in_place_never_resized(which):
    def call(lib):
        a, b = lib.ones(3), lib.ones(2, 3)
        return lib.mul(a, b, out=a if which == "a" else b)
    same(call)
