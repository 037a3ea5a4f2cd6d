"""The rest of torch.Tensor's dense methods and class attributes (ops/tensor_rest.py): each
case run under torch and here at test time, values, warnings and error classes compared;
and the names torch.Tensor has that Tensor lacks are exactly the families left out."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

LIBS = (mg, torch)

# the families Tensor leaves out: sparse layouts, quantized tensors, other devices, nested
# tensors, and functorch.dim's first-class dims (``index``)
SPARSE = {"ccol_indices", "col_indices", "crow_indices", "indices",
          "resize_as_sparse_", "row_indices", "smm", "sparse_mask", "sparse_resize_",
          "sparse_resize_and_clear_", "sspaddmm", "to_sparse_bsc", "to_sparse_bsr",
          "to_sparse_coo", "to_sparse_csc", "to_sparse_csr", "values"}
QUANTIZED = {"dequantize", "int_repr", "q_per_channel_axis", "q_per_channel_scales",
             "q_per_channel_zero_points", "q_scale", "q_zero_point", "qscheme"}
DEVICES = {"ipu", "mtia", "xpu", "to_mkldnn", "record_stream"}
OTHERS = {"to_padded_tensor", "index"}


def test_the_names_missing_are_exactly_the_families_left_out():
    missing = {n for n in dir(torch.Tensor) if not n.startswith("_")
               and not hasattr(mg.Tensor, n)}
    assert missing <= SPARSE | QUANTIZED | DEVICES | OTHERS, missing - (
        SPARSE | QUANTIZED | DEVICES | OTHERS)


def outcome(fn):
    """(value or error class, the warnings' categories and first words) of ``fn()``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn()
        except Exception as error:      # noqa: BLE001 -- the class is what is compared
            value = type(error)
    said = [(w.category, str(w.message)[:24]) for w in caught]
    return value, said


def plain(value):
    if isinstance(value, (mg.Tensor, torch.Tensor)):
        return np.asarray(value.detach().cpu().numpy()).tolist()
    return value


def same(make):
    ours, theirs = outcome(lambda: make(mg)), outcome(lambda: make(torch))
    if isinstance(theirs[0], type) and issubclass(theirs[0], BaseException):
        assert isinstance(ours[0], type) and issubclass(ours[0], theirs[0]), (ours, theirs)
    else:
        assert plain(ours[0]) == plain(theirs[0]), (ours, theirs)
    assert ours[1] == theirs[1]
    return ours[0], theirs[0]


def grid(lib, dtype=None):
    return lib.arange(6.).reshape(2, 3) if dtype is None else \
        lib.arange(6).reshape(2, 3).to(getattr(lib, dtype))


@pytest.mark.parametrize("name", ["grad_fn", "grad_dtype", "volatile", "name"])
def test_instance_attributes_are_on_the_class(name):
    assert hasattr(torch.Tensor, name) and hasattr(mg.Tensor, name)


CASES = {
    "name": lambda lib: grid(lib).name,
    "volatile": lambda lib: grid(lib).volatile,
    "volatile set": lambda lib: setattr(grid(lib), "volatile", True),
    "grad_dtype leaf": lambda lib: str(lib.ones(2, requires_grad=True).grad_dtype)[-7:],
    "grad_dtype set": lambda lib: _grad_dtype_set(lib, "float64"),
    "grad_dtype none": lambda lib: _grad_dtype_set(lib, None),
    "grad_dtype bad": lambda lib: _grad_dtype_set(lib, "float64 as text"),
    "grad_dtype non-leaf": lambda lib: (lib.ones(2, requires_grad=True) * 2).grad_dtype,
    "const_data_ptr": lambda lib: grid(lib).const_data_ptr() == grid(lib).data_ptr() or True,
    "dim_order": lambda lib: grid(lib).dim_order(),
    "dim_order t": lambda lib: grid(lib).t().dim_order(),
    "dim_order 0-d": lambda lib: lib.tensor(1.).dim_order(),
    "dim_order expand": lambda lib: lib.ones(2, 3).expand(4, 2, 3).dim_order(),
    "dim_order slice": lambda lib: lib.ones(2, 4)[:, ::2].dim_order(),
    "dim_order 4-d": lambda lib: lib.ones(2, 3, 4, 5).permute(0, 2, 3, 1).dim_order(),
    "dim_order ambiguous": lambda lib: lib.ones(2, 1, 3).dim_order(ambiguity_check=True),
    "dim_order unique": lambda lib: grid(lib).dim_order(ambiguity_check=True),
    "dim_order formats": lambda lib: lib.ones(2, 3, 4, 5).permute(0, 2, 3, 1).dim_order(
        ambiguity_check=[lib.channels_last]),
    "dim_order bad check": lambda lib: grid(lib).dim_order(ambiguity_check=3),
    "is_set_to self": lambda lib: _set_to(lib, lambda t: t),
    "is_set_to view": lambda lib: _set_to(lib, lambda t: t.view(6)),
    "is_set_to clone": lambda lib: _set_to(lib, lambda t: t.clone()),
    "is_set_to number": lambda lib: grid(lib).is_set_to(3),
    "is_shared": lambda lib: grid(lib).is_shared(),
    "share_memory_": lambda lib: grid(lib).share_memory_().is_shared(),
    "is_distributed": lambda lib: grid(lib).is_distributed(),
    "is_coalesced": lambda lib: grid(lib).is_coalesced(),
    "dense_dim": lambda lib: grid(lib).dense_dim(),
    "sparse_dim": lambda lib: grid(lib).sparse_dim(),
    "resize": lambda lib: grid(lib).resize(3, 2),
    "resize tuple": lambda lib: grid(lib).resize((6,)),
    "resize count": lambda lib: grid(lib).resize(2, 2),
    "resize_as": lambda lib: grid(lib).resize_as(lib.ones(6)),
    "storage_type": lambda lib: grid(lib).storage_type().__name__,
    "storage_type long": lambda lib: grid(lib, "int64").storage_type().__name__,
    "map2_": lambda lib: grid(lib).map2_(lib.ones(3), grid(lib), lambda a, b, c: a + b * c),
    "map2_ dtype": lambda lib: grid(lib).map2_(grid(lib, "int64"), grid(lib), max),
    "map2_ grad": lambda lib: lib.ones(3, requires_grad=True).map2_(
        lib.ones(3), lib.ones(3), max),
    "module_load": lambda lib: grid(lib).module_load(lib.ones(2, 3)),
    "module_load assign": lambda lib: grid(lib).module_load(lib.ones(2, 3), assign=True),
    "conj_physical_": lambda lib: lib.view_as_real(lib.tensor([1 + 2j, -3j]).conj_physical_()),
    "conj_physical_ real": lambda lib: grid(lib).conj_physical_(),
    "conj_physical_ leaf": lambda lib: lib.ones(2, requires_grad=True).conj_physical_(),
    "conj_physical_ version": lambda lib: grid(lib).conj_physical_()._version,
    "as_strided_scatter": lambda lib: grid(lib).as_strided_scatter(lib.zeros(2), (2,), (1,)),
    "slice_inverse": lambda lib: _slice_inverse(lib),
    "slice_inverse past": lambda lib: lib.zeros(2, 3).slice_inverse(lib.ones(4, 3), 0, 1, 3),
    "hash_tensor": lambda lib: grid(lib).hash_tensor(),
    "hash_tensor dim": lambda lib: grid(lib).hash_tensor(dim=1),
    "hash_tensor keepdim": lambda lib: grid(lib).hash_tensor(0, keepdim=True),
    "hash_tensor negative": lambda lib: lib.tensor([-1.5, 2.]).hash_tensor(),
    "hash_tensor int8": lambda lib: lib.tensor([-1, 2], dtype=lib.int8).hash_tensor(),
    "hash_tensor bool": lambda lib: lib.tensor([True, False]).hash_tensor(),
    "hash_tensor empty": lambda lib: lib.zeros(0).hash_tensor(),
    "hash_tensor empty dim": lambda lib: lib.zeros(2, 0).hash_tensor(1),
    "hash_tensor empty other": lambda lib: lib.zeros(2, 0).hash_tensor(0),
    "hash_tensor bad dim": lambda lib: grid(lib).hash_tensor(2),
    "hash_tensor 0-d": lambda lib: lib.tensor(3.).hash_tensor(0),
    "hash_tensor last": lambda lib: grid(lib).hash_tensor(-1),
    "hash_tensor mode": lambda lib: grid(lib).hash_tensor(mode=1),
    "hash_tensor complex": lambda lib: lib.tensor([1 + 2j]).hash_tensor(),
    "eig": lambda lib: grid(lib).eig(),
    "lstsq": lambda lib: grid(lib).lstsq(grid(lib)),
    "solve": lambda lib: grid(lib).solve(grid(lib)),
    "symeig": lambda lib: grid(lib).symeig(),
    "reinforce": lambda lib: grid(lib).reinforce(1.0),
}


def _grad_dtype_set(lib, dtype):
    x = lib.ones(2, requires_grad=True)
    x.grad_dtype = getattr(lib, dtype) if dtype in ("float64",) else dtype
    return None if x.grad_dtype is None else str(x.grad_dtype)[-7:]


def _set_to(lib, other):
    t = grid(lib)
    return t.is_set_to(other(t))


def _slice_inverse(lib):
    x = lib.arange(12.).reshape(4, 3)
    out = x[1:3].slice_inverse(x, 0, 1, 3)
    return out.data_ptr() == x.data_ptr(), plain(out)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_case_as_torch(case):
    same(CASES[case])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32",
                                   "int64", "uint8", "int16"])
def test_the_hash_of_each_dtype_as_torch(dtype):
    same(lambda lib: (lib.arange(-3, 5) * 7.25).reshape(2, 4).to(
        getattr(lib, dtype)).hash_tensor((0, 1)))


def test_resize_shares_memory_and_keeps_the_graph():
    for lib in LIBS:
        x = lib.arange(6., requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = (x * 1).resize(2, 3)
        (y * lib.arange(6.).reshape(2, 3)).sum().backward()
        assert plain(x.grad) == list(range(6))


def test_as_subclass_shares_memory_and_keeps_the_graph():
    results = []
    for lib in LIBS:
        class Marked(lib.Tensor):
            pass
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        marked = y.as_subclass(Marked)
        assert type(marked) is Marked and marked.requires_grad and not marked.is_leaf
        assert marked.data_ptr() == y.data_ptr()
        (marked * lib.tensor([1., 2., 3.])).sum().backward()
        leaf = x.as_subclass(Marked)
        results.append((plain(x.grad), leaf.is_leaf, leaf.requires_grad,
                        leaf.data_ptr() == x.data_ptr(), marked.grad_fn.name()))
    assert results[0] == results[1]
    for lib in LIBS:
        with pytest.raises(TypeError):
            lib.ones(2).as_subclass(int)


def test_conj_physical_writes_in_place_as_torch():
    for lib in LIBS:
        z = lib.tensor([1 + 2j])
        assert z.conj_physical_() is z and plain(lib.view_as_real(z)) == [[1.0, -2.0]]
