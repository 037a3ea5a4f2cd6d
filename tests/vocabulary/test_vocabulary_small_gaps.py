"""Small pieces of PyTorch's vocabulary, against PyTorch: ``nn.Buffer``; the constant tensor
flags and ``layout``; ``Tensor.new``; ``resize_``/``resize_as_``; storages and their
``data_ptr`` sharing; ``unsafe_split``/``unsafe_chunk``/``unsafe_split_with_sizes``;
``conj_physical``; ``hardshrink``/``prelu`` as methods; ``nonzero_static``; the random fills
``cauchy_``, ``log_normal_``, ``geometric_`` (torch's draws for one seed, bit for bit);
``feature_alpha_dropout``, ``lp_pool1d``/``2d``, ``max_unpool1d`` and their modules;
``cumsum_``/``cumprod_`` of bool refused as torch refuses them."""

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm import functional as F
from microgradnorm import nn
from microgradnorm.ops import storage as storage_ops
from torch_compare import pair, same_error

RNG = np.random.default_rng(0)
DATA = RNG.standard_normal((2, 3, 11))


def libs():
    return ((mg, mg.nn), (torch, torch.nn))


# ----- nn.Buffer ----------------------------------------------------------------------------
def test_buffer_is_the_detached_tensor_marked():
    for lib, lib_nn in libs():
        data = lib.ones(2)
        buffer = lib_nn.Buffer(data)
        assert type(buffer) is lib.Tensor and isinstance(buffer, lib_nn.Buffer)
        assert not isinstance(data, lib_nn.Buffer)
        assert buffer.data_ptr() == data.data_ptr() and buffer.persistent is True
        assert lib_nn.Buffer(persistent=False).persistent is False
        assert tuple(lib_nn.Buffer().shape) == (0,) and lib_nn.Buffer().dtype == lib.float32
        leaf = lib.ones(2, requires_grad=True)
        made = lib_nn.Buffer(leaf * 2)
        assert made.requires_grad and made.grad_fn is None and made.is_leaf
        with pytest.raises(TypeError):
            lib_nn.Buffer(data, False)                       # persistent is keyword-only


def buffer_story(lib, lib_nn):
    """What a module registers along a script's assignments, step by step."""
    seen = []
    module = lib_nn.Module()

    def look():
        seen.append((sorted(module.state_dict()), [n for n, _ in module.named_buffers()],
                     sorted(module._non_persistent_buffers_set)))
    module.x = lib_nn.Buffer(lib.zeros(3), persistent=False)
    module.y = lib_nn.Buffer(lib.ones(2))
    look()
    module.x = lib.ones(4)                       # a plain Tensor: still a non-persistent buffer
    look()
    seen.append(isinstance(module.x, lib_nn.Buffer))
    module.x = lib_nn.Buffer(lib.ones(1))        # persistent now
    module.y = lib_nn.Buffer(lib.ones(1), persistent=False)
    look()
    module.p = lib_nn.Parameter(lib.ones(1))
    module.x = lib_nn.Parameter(lib.ones(1))     # a Parameter takes a buffer's name
    look()
    seen.append([n for n, _ in module.named_parameters()])
    module.y = None
    look()
    return seen


def test_assigning_a_buffer_registers_it_as_torch():
    assert buffer_story(mg, mg.nn) == buffer_story(torch, torch.nn)


@pytest.mark.parametrize("name", ["parameter", "child", "plain attribute", "dotted"])
def test_assigning_a_buffer_where_torch_refuses(name):
    def assign(lib, lib_nn):
        module = lib_nn.Module()
        module.parameter = lib_nn.Parameter(lib.ones(1))
        module.child = lib_nn.Linear(1, 1)
        module.__dict__["plain attribute"] = 3
        setattr(module, {"dotted": "a.b"}.get(name, name), lib_nn.Buffer(lib.ones(1)))
    same_error(lambda: assign(mg, mg.nn), lambda: assign(torch, torch.nn))


@pytest.mark.parametrize("lib", [mg, torch], ids=["mg", "torch"])
def test_buffer_before_init(lib):
    class Early(lib.nn.Module):
        def __init__(self):
            self.b = lib.nn.Buffer(lib.ones(1))
    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


@pytest.mark.parametrize("persistent", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_buffer_through_to_and_deepcopy(persistent, dtype):
    # torch: to() that changes a buffer puts a plain Tensor in its place (no longer an
    # nn.Buffer; one to() leaves alone stays one); its persistence stays the module's
    def run(lib):
        module = lib.nn.Module()
        module.w = lib.nn.Buffer(lib.ones(2), persistent=persistent)
        marks = [isinstance(module.w, lib.nn.Buffer)]
        module.to(getattr(lib, dtype))
        marks.append(isinstance(module.w, lib.nn.Buffer))
        twin = copy.deepcopy(module)
        marks.append(isinstance(twin.w, lib.nn.Buffer))
        dtype_name = str(module.w.dtype).replace("torch.", "")
        return marks, dtype_name, list(module.state_dict()), list(twin.state_dict())

    assert run(mg) == run(torch)


# ----- flags, layout ------------------------------------------------------------------------
FLAGS = ["is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested", "is_mkldnn",
         "is_xpu", "is_mps", "is_ipu", "is_xla", "is_vulkan", "is_maia", "is_mtia"]


@pytest.mark.parametrize("make", [lambda lib: lib.ones(2, 3), lambda lib: lib.arange(4)[1:],
                                  lambda lib: lib.ones(3, 2).T, lambda lib: lib.tensor(True)])
def test_flags_and_layout_as_torch(make):
    ours, theirs = make(mg), make(torch)
    for name in FLAGS:
        assert getattr(ours, name) is getattr(theirs, name) is False, name
    assert ours.layout is mg.strided and theirs.layout is torch.strided
    assert repr(ours.layout) == repr(theirs.layout) == str(ours.layout) == "torch.strided"


def test_layout_objects():
    for name in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                 "sparse_bsc", "jagged"):
        ours = getattr(mg, name)
        assert repr(ours) == repr(getattr(torch, name)) and isinstance(ours, mg.layout)
        assert pickle.loads(pickle.dumps(ours)) is ours and copy.deepcopy(ours) is ours
    assert mg.strided != mg.sparse_coo
    same_error(lambda: mg.layout(), lambda: torch.layout())


# ----- Tensor.new ---------------------------------------------------------------------------
NEW_CASES = {
    "sizes": ((2, 3), {}), "one size": ((4,), {}), "zero size": ((2, 0), {}),
    "nothing": ((), {}), "size keyword": ((), {"size": (1, 2)}),
    "a Size": (("SIZE",), {}), "a list": (([1.5, -2.0],), {}), "a tuple": (((2, 3),), {}),
    "nested": (([[1, 2], [3, 4]],), {}), "empty list": (([],), {}),
    "an array": ((np.array([1, 2]),), {}), "a NumPy int": ((np.int64(3),), {}),
    "device": ((2,), {"device": "cpu"}),
    "a float": ((2.5,), {}), "a bool": ((True,), {}), "a string": (("ab",), {}),
    "None": ((None,), {}), "a float size": ((2, 3.0), {}), "negative": ((-1,), {}),
    "ragged": (([[1, 2], [3]],), {}), "dtype keyword": ((2,), {"dtype": "float64"}),
}


@pytest.mark.parametrize("case", list(NEW_CASES))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_new_as_torch(case, dtype):
    args, kwargs = NEW_CASES[case]

    def run(lib):
        x = lib.zeros(1, dtype=getattr(lib, dtype))
        given = [lib.Size([2, 3]) if a == "SIZE" else a for a in args]
        keywords = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        return x.new(*given, **keywords)
    try:
        want = run(torch)
    except Exception as error:                                # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            run(mg)
        return
    got = run(mg)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype) == f"torch.{dtype}"
    if case not in ("sizes", "one size", "a Size", "size keyword", "device", "a NumPy int"):
        assert got.tolist() == want.tolist()                  # (sizes: uninitialised there)
    assert not got.requires_grad


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_new_of_a_tensor_is_an_alias_and_of_a_storage_its_memory():
    for lib in (mg, torch):
        x = lib.arange(4.0, requires_grad=True)
        alias = x.new(x)
        assert alias is not x and alias.data_ptr() == x.data_ptr() and alias.requires_grad
        (alias * 3).sum().backward()
        assert x.grad.tolist() == [3.0] * 4
        with pytest.raises(TypeError):
            x.new(lib.tensor([1, 2]))                        # another dtype
        with pytest.raises(RuntimeError, match="Legacy"):
            x.new(x, device="cpu")
        floats = lib.arange(4.0)
        as_ints = lib.zeros(1, dtype=lib.int32).new(floats.untyped_storage())
        assert as_ints.data_ptr() == floats.data_ptr()
        assert as_ints.tolist() == floats.numpy().view(np.int32).tolist()
    same_error(lambda: mg.zeros(1, dtype=mg.int64).new(mg.arange(4.0).storage()),
               lambda: torch.zeros(1, dtype=torch.int64).new(torch.arange(4.0).storage()))


# ----- resize_, resize_as_ ------------------------------------------------------------------
RESIZES = {
    "same count": (lambda lib: lib.arange(6.0), (2, 3)),
    "same shape": (lambda lib: lib.arange(6.0).reshape(2, 3), (2, 3)),
    "shrink": (lambda lib: lib.arange(6.0), (2,)),
    "shrink to empty": (lambda lib: lib.arange(6.0), (0, 3)),
    "a tuple": (lambda lib: lib.arange(6.0), ((2, 2),)),
    "a Size": (lambda lib: lib.arange(6.0), ("SIZE",)),
    "slice of columns": (lambda lib: lib.arange(12.0).reshape(3, 4)[:, :2], (2, 2)),
    "a row, grown in its base": (lambda lib: lib.arange(12.0).reshape(3, 4)[1], (8,)),
    "a row, shrunk": (lambda lib: lib.arange(12.0).reshape(3, 4)[1], (2,)),
    "transpose, same shape": (lambda lib: lib.arange(12.0).reshape(3, 4).t(), (4, 3)),
    "integers": (lambda lib: lib.arange(6), (3, 2)),
    "grown": (lambda lib: lib.arange(6.0), (2, 4)),
    "grown from empty": (lambda lib: lib.zeros(0), (3,)),
    "negative": (lambda lib: lib.arange(6.0), (-1,)),
    "a float": (lambda lib: lib.arange(6.0), (2.0,)),
}


@pytest.mark.parametrize("case", list(RESIZES))
def test_resize_as_torch(case):
    make, sizes = RESIZES[case]

    def run(lib):
        x = make(lib)
        version = x._version
        given = [lib.Size([2, 3]) if s == "SIZE" else s for s in sizes]
        out = x.resize_(*given)
        assert out is x
        return x, x._version - version
    try:
        want, want_bumps = run(torch)
    except Exception as error:                                # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            run(mg)
        return
    got, bumps = run(mg)
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    assert bumps == want_bumps and got.storage_offset() == want.storage_offset()
    # past the storage torch's new elements are uninitialised (zeros here): the old compared
    kept = min(got.numel(), make(mg).untyped_storage().nbytes() // got.element_size())
    assert got.reshape(-1)[:kept].tolist() == want.reshape(-1)[:kept].tolist()
    assert got.reshape(-1)[kept:].tolist() == [0.0] * (got.numel() - kept)


def test_resize_shares_memory_where_torch_does():
    for lib in (mg, torch):
        base = lib.arange(12.0).reshape(3, 4)
        row = base[1].resize_(2)                              # shrunk: the base's memory
        row[0] = 100.0
        assert base[1, 0].item() == 100.0 and row.storage_offset() == 4
        x = lib.arange(6.0)
        x.resize_as_(lib.zeros(2, 2, dtype=lib.int64))
        assert tuple(x.shape) == (2, 2) and x.dtype == lib.float32
    same_error(lambda: mg.arange(6.0).resize_as_([1]), lambda: torch.arange(6.0).resize_as_([1]))


@pytest.mark.parametrize("make", [lambda lib: lib.ones(3, requires_grad=True),
                                  lambda lib: lib.ones(3, requires_grad=True) * 2])
def test_resize_refuses_a_tensor_that_requires_grad(make):
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            make(lib).resize_(3)
        x = make(lib)
        with lib.no_grad(), pytest.raises(RuntimeError, match="require grad"):
            x.resize_(2)


# ----- storages -----------------------------------------------------------------------------
VIEWS = {
    "itself": lambda t: t, "a row": lambda t: t[1], "a transpose": lambda t: t.t(),
    "expanded": lambda t: t[:1].expand(3, 4), "detached": lambda t: t.detach(),
    ".data": lambda t: t.data, "columns": lambda t: t[:, 1:3], "view": lambda t: t.view(2, 6),
    "reshape": lambda t: t.reshape(-1), "diagonal": lambda t: t.diagonal(),
    "unsqueezed": lambda t: t.unsqueeze(0), "narrow": lambda t: t.narrow(1, 1, 2),
    "unfold": lambda t: t.unfold(1, 2, 1), "split": lambda t: t.split(1)[2],
    "clone": lambda t: t.clone(), "flip": lambda t: t.flip(0),
    "contiguous of a transpose": lambda t: t.t().contiguous(), "sum": lambda t: t.sum(0),
    "to float64": lambda t: t.double(), "float of itself": lambda t: t.float(),
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_storage_sharing_and_offsets_as_torch(view):
    def run(lib):
        x = lib.arange(12.0).reshape(3, 4)
        y = VIEWS[view](x)
        storage = y.untyped_storage()
        shared = storage.data_ptr() == x.untyped_storage().data_ptr()
        return (shared, storage == x.untyped_storage(), storage.nbytes(), storage.size(),
                len(storage), storage.element_size(), y.data_ptr() - storage.data_ptr())
    assert run(mg) == run(torch)


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_typed_storage_as_torch():
    storage_ops._warned_typed[0] = False
    for lib in (mg, torch):
        x = lib.arange(6.0).reshape(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            typed = x[1].storage()
        if lib is mg:                  # (torch's first warning may have come in another test)
            assert any("TypedStorage is deprecated" in str(w.message) for w in caught)
        assert (typed.size(), len(typed), typed.element_size(), typed.nbytes()) == (6, 6, 4, 24)
        assert typed.data_ptr() == x.untyped_storage().data_ptr() == typed.untyped().data_ptr()
        assert typed[4] == 4.0 and typed.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        assert str(typed.dtype) == "torch.float32"
        assert x.untyped_storage().tolist()[4:8] == [0, 0, 128, 63]       # 1.0f, little-endian
        assert x.untyped_storage()[7] == 63
        empty = lib.zeros(0).untyped_storage()
        assert (empty.data_ptr(), empty.nbytes()) == (0, 0)
    with warnings.catch_warnings(record=True) as caught:      # once per process, as torch's
        warnings.simplefilter("always")
        mg.ones(1).storage()
    assert not caught
    assert repr(mg.arange(2.0).storage()).endswith(
        "[torch.storage.TypedStorage(dtype=torch.float32, device=cpu) of size 2]")


# ----- unsafe splits, conj_physical, hardshrink/prelu methods -------------------------------
SPLITS = [("unsafe_split", (2,), {}), ("unsafe_split", (2, 1), {}),
          ("unsafe_split", (1,), {"dim": -1}), ("unsafe_split", (0,), {}),
          ("unsafe_split", (-1,), {}), ("unsafe_split", ([1, 1],), {}),
          ("unsafe_split", (True,), {}), ("unsafe_chunk", (2,), {}),
          ("unsafe_chunk", (3, 1), {}), ("unsafe_chunk", (0,), {}),
          ("unsafe_chunk", (2.0,), {}), ("unsafe_split_with_sizes", ([1, 1],), {}),
          ("unsafe_split_with_sizes", ([1, 2],), {"dim": 1}),
          ("unsafe_split_with_sizes", ([1, -1, 2],), {}),
          ("unsafe_split_with_sizes", (2,), {})]


@pytest.mark.parametrize("name, args, kwargs", SPLITS)
def test_unsafe_splits_as_torch(name, args, kwargs):
    def run(lib, x):
        return getattr(x, name)(*args, **kwargs)
    (ours, theirs) = pair(DATA[:, :, :3])
    try:
        want = run(torch, theirs)
    except Exception as error:                                # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            run(mg, ours)
        return
    got = run(mg, ours)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    weights = [float(i + 1) for i in range(len(got))]
    sum(w * (a ** 2).sum() for w, a in zip(weights, got)).backward()
    sum(w * (b ** 2).sum() for w, b in zip(weights, want)).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-15)
    top = getattr(mg, name)(ours, *args, **kwargs)
    assert [t.tolist() for t in top] == [t.tolist() for t in got]
    same_error(lambda: mg.tensor(1.0).unsafe_split(1), lambda: torch.tensor(1.0).unsafe_split(1))
    same_error(lambda: mg.tensor(1.0).unsafe_chunk(1), lambda: torch.tensor(1.0).unsafe_chunk(1))


def test_conj_physical_as_torch():
    values = np.array([1 + 2j, -3 - 0.5j, 0j])
    ours, theirs = mg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    got, want = ours.conj_physical(), torch.conj_physical(theirs)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    upstream = np.array([1 - 1j, 2 + 0.5j, -1j])
    got.backward(mg.tensor(upstream))
    want.backward(torch.tensor(upstream))
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    for lib in (mg, torch):
        real = lib.arange(3.0, requires_grad=True)
        assert lib.conj_physical(real) is real and real.conj_physical() is real
    assert mg.conj_physical(mg.arange(3)).dtype == mg.int64


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_hardshrink_and_prelu_methods_are_Fs(dtype):
    values = np.array([[-2.0, 0.3, 0.5, -0.5, 1.0, 0.0]]).astype(dtype)
    for method, args in (("hardshrink", ()), ("hardshrink", (0.3,)),
                         ("prelu", ("WEIGHT",))):
        (ours, theirs), (w, tw) = pair(values), pair(np.array([0.25], dtype))
        got = getattr(ours, method)(*[w if a == "WEIGHT" else a for a in args])
        want = getattr(theirs, method)(*[tw if a == "WEIGHT" else a for a in args])
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        got.backward(mg.tensor(values * 3))
        want.backward(torch.tensor(values * 3))
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
        if method == "prelu":
            np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
        assert type(got.grad_fn).__name__ == type(
            getattr(F, method)(ours, *[w if a == "WEIGHT" else a for a in args]).grad_fn).__name__


# ----- nonzero_static -----------------------------------------------------------------------
@pytest.mark.parametrize("values", [[[1, 0, 2], [0, 3, 0]], 5.0, 0.0, [np.nan, 0.0],
                                    [True, False], [1 + 0j, 0j], np.zeros((0, 3))])
@pytest.mark.parametrize("size, fill_value", [(2, -1), (5, -1), (5, 7), (0, -1), (3, 0)])
def test_nonzero_static_as_torch(values, size, fill_value):
    ours, theirs = mg.tensor(values), torch.tensor(values)
    got = mg.nonzero_static(ours, size=size, fill_value=fill_value)
    want = torch.nonzero_static(theirs, size=size, fill_value=fill_value)
    assert got.dtype == mg.int64 and tuple(got.shape) == tuple(want.shape)
    assert got.tolist() == want.tolist()
    assert ours.nonzero_static(size=size, fill_value=fill_value).tolist() == want.tolist()


@pytest.mark.parametrize("kwargs", [{"size": -1}, {"size": 2.0}, {"size": True},
                                    {"size": 2, "fill_value": 2.5}, {}])
def test_nonzero_static_errors_as_torch(kwargs):
    same_error(lambda: mg.tensor([1, 0]).nonzero_static(**kwargs),
               lambda: torch.tensor([1, 0]).nonzero_static(**kwargs))


# ----- random fills: torch's draws for one seed ---------------------------------------------
FILLS = [("cauchy_", ()), ("cauchy_", (0.3, 2.7)), ("cauchy_", (-1.5, 0.01)),
         ("log_normal_", ()), ("log_normal_", (0.0, 1.0)), ("log_normal_", (-0.4, 0.3)),
         ("geometric_", (0.3,)), ("geometric_", (0.01,)), ("geometric_", (0.95,))]


@pytest.mark.parametrize("name, args", FILLS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_fills_draw_torchs_values(name, args, dtype):
    for seed, size in ((0, 1), (1, 3), (2, 15), (3, 16), (4, 17), (5, (5, 7))):
        mg.manual_seed(seed)
        torch.manual_seed(seed)
        ours = getattr(mg.empty(size, dtype=dtype), name)(*args)
        theirs = getattr(torch.empty(size, dtype=getattr(torch, dtype)), name)(*args)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=f"{seed} {size}")
        # the generators end where torch's do: the next draws agree
        np.testing.assert_array_equal(mg.rand(3).numpy(), torch.rand(3).numpy())


@pytest.mark.parametrize("name, args", [FILLS[1], FILLS[4], FILLS[6]])
def test_random_fills_of_a_transpose_with_a_generator_and_after_normal(name, args):
    ours_gen, theirs_gen = mg.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    mg.empty(3).normal_(generator=ours_gen)             # an odd count: a cached normal left
    torch.empty(3).normal_(generator=theirs_gen)
    ours = getattr(mg.empty(6, 4).t(), name)(*args, generator=ours_gen)
    theirs = getattr(torch.empty(6, 4).t(), name)(*args, generator=theirs_gen)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name, args", [FILLS[1], FILLS[3], FILLS[6]])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_random_fills_of_half_dtypes_round_torchs_float64_draws(name, args, dtype):
    mg.manual_seed(9)
    torch.manual_seed(9)
    ours = getattr(mg.empty(50, dtype=dtype), name)(*args)
    theirs = getattr(torch.empty(50, dtype=getattr(torch, dtype)), name)(*args)
    assert ours.float().tolist() == theirs.float().tolist()


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float16"])
def test_geometric_fills_other_dtypes_as_torch(dtype):
    mg.manual_seed(11)
    torch.manual_seed(11)
    ours = mg.empty(40, dtype=dtype).geometric_(0.4)
    theirs = torch.empty(40, dtype=getattr(torch, dtype)).geometric_(0.4)
    assert str(ours.dtype) == f"torch.{dtype}" and ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(3).geometric_(0), lambda lib: lib.empty(3).geometric_(1),
    lambda lib: lib.empty(3).geometric_(-0.5), lambda lib: lib.empty(3, dtype=lib.bool)
    .geometric_(0.5), lambda lib: lib.empty(3).cauchy_(0, 0), lambda lib: lib.empty(3)
    .cauchy_(0, -1), lambda lib: lib.empty(3, dtype=lib.int64).cauchy_(),
    lambda lib: lib.empty(3).log_normal_(0, 0), lambda lib: lib.empty(3, dtype=lib.int64)
    .log_normal_(), lambda lib: lib.ones(3, requires_grad=True).cauchy_()])
def test_random_fill_errors_as_torch(call):
    same_error(lambda: call(mg), lambda: call(torch))


def test_random_fills_in_a_graph_have_zero_gradient():
    for lib in (mg, torch):
        leaf = lib.ones(4, requires_grad=True)
        out = leaf * 2
        out.cauchy_()
        out.sum().backward()
        assert leaf.grad.tolist() == [0.0] * 4
        assert lib.empty(2).cauchy_(float("nan"), 1).isnan().all()


# ----- feature_alpha_dropout ----------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 5, 3, 2), (3, 6), (2, 3, 17)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("inplace", [False, True])
def test_feature_alpha_dropout_draws_torchs(shape, dtype, inplace):
    x = RNG.standard_normal(shape).astype(dtype)
    for seed, p in ((0, 0.3), (1, 0.5)):
        mg.manual_seed(seed)
        torch.manual_seed(seed)
        ours, theirs = pair(x)
        a, b = ours * 1, theirs * 1                           # non-leaves: in place allowed
        got = F.feature_alpha_dropout(a, p, True, inplace)
        want = torch.nn.functional.feature_alpha_dropout(b, p, True, inplace)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        assert (got is a) == inplace
        got.backward(mg.tensor(x))
        want.backward(torch.tensor(x))
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@pytest.mark.parametrize("call", [
    lambda lib, F: F.feature_alpha_dropout(lib.ones(2, 3), 0.5, False),
    lambda lib, F: F.feature_alpha_dropout(lib.ones(2, 3), 0.0, True),
    lambda lib, F: F.feature_alpha_dropout(lib.ones(2, 3), 1.0, True),
    lambda lib, F: F.feature_alpha_dropout(lib.ones(3), 1.0, True),
    lambda lib, F: F.feature_alpha_dropout(lib.ones(3), 0.5, True),
    lambda lib, F: F.feature_alpha_dropout(lib.ones(2, 3), 1.5, True),
    lambda lib, F: F.feature_alpha_dropout(lib.ones(2, 3, dtype=lib.int64), 0.5, True)])
def test_feature_alpha_dropout_corners_as_torch(call):
    try:
        want = call(torch, torch.nn.functional)
    except Exception as error:                                # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            call(mg, F)
        return
    assert call(mg, F).tolist() == want.tolist()


def test_feature_alpha_dropout_module_as_torch():
    x = RNG.standard_normal((2, 4, 3))
    ours, theirs = nn.FeatureAlphaDropout(0.2, inplace=True), torch.nn.FeatureAlphaDropout(0.2,
                                                                                          True)
    assert repr(ours) == repr(theirs)
    mg.manual_seed(5)
    torch.manual_seed(5)
    a, b = mg.tensor(x), torch.tensor(x)
    got, want = ours(a), theirs(b)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got is not a and a.tolist() == x.tolist()          # inplace kept, not passed on
    assert ours.eval()(a) is a and theirs.eval()(b) is b


# ----- lp_pool1d, lp_pool2d -----------------------------------------------------------------
LP1 = [(2, 3, 2, False), (2.0, 3, None, True), (1, 2, 1, True), (3, 3, 2, False),
       (1.5, 4, 3, True), (float("inf"), 3, 2, False), (-float("inf"), 2, None, True)]
LP2 = [(2, 3, 2, False), (3, (2, 3), None, True), (1.5, 2, (1, 2), False),
       (float("inf"), (3, 2), 2, True)]


def lp_check(fn, x, args, tolerance):
    (ours, theirs) = pair(x)
    got, want = getattr(F, fn)(ours, *args), getattr(torch.nn.functional, fn)(theirs, *args)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tolerance,
                               atol=0)
    upstream = RNG.standard_normal(want.shape).astype(x.dtype)
    got.backward(mg.tensor(upstream))
    want.backward(torch.tensor(upstream))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=tolerance,
                               atol=tolerance)


@pytest.mark.parametrize("args", LP1)
def test_lp_pool1d_as_torch(args):
    lp_check("lp_pool1d", DATA, args, 1e-13)
    # float32 (mg.pow and torch's differ by an ulp: positive x, no cancelling sums)
    lp_check("lp_pool1d", np.abs(DATA).astype(np.float32) + 0.1, args, 2e-6)


@pytest.mark.parametrize("args", LP2)
def test_lp_pool2d_as_torch(args):
    x = RNG.standard_normal((2, 3, 7, 8))
    lp_check("lp_pool2d", x, args, 1e-13)
    lp_check("lp_pool2d", np.abs(x).astype(np.float32) + 0.1, args, 2e-6)


def test_lp_pool_of_a_zero_window_has_zero_gradient_and_modules_as_torch():
    for lib, functional in ((mg, F), (torch, torch.nn.functional)):
        x = lib.zeros(1, 1, 4, requires_grad=True)
        functional.lp_pool1d(x, 2, 2).sum().backward()
        assert x.grad.tolist() == [[[0.0] * 4]]
    for ours, theirs in ((nn.LPPool1d(2, 3, stride=2), torch.nn.LPPool1d(2, 3, stride=2)),
                         (nn.LPPool2d(1.5, (2, 3)), torch.nn.LPPool2d(1.5, (2, 3)))):
        assert repr(ours) == repr(theirs)
        x = RNG.random((2, 3, 9)) if isinstance(ours, nn.LPPool1d) else RNG.random((3, 6, 7))
        np.testing.assert_allclose(ours(mg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                                   rtol=1e-13)


# ----- max_unpool1d -------------------------------------------------------------------------
@pytest.mark.parametrize("shape, pool, unpool", [
    ((2, 3, 9), (2, 2, 0), {}), ((3, 8), (3, 2, 1), {}),
    ((2, 3, 9), (2, 2, 0), {"output_size": [9]}), ((1, 2, 9), (2, 2, 0),
                                                    {"output_size": (1, 2, 9)}),
    ((2, 3, 9), (2, 2, 0), {"output_size": [12]}), ((2, 3, 9), (2, 2, 0),
                                                     {"output_size": [1, 2]})])
def test_max_unpool1d_as_torch(shape, pool, unpool):
    x = RNG.standard_normal(shape)
    kernel, stride, padding = pool
    _, index = torch.nn.functional.max_pool1d(torch.tensor(x), kernel, stride, padding,
                                              return_indices=True)
    (ours, theirs) = pair(x[..., :index.shape[-1]])
    ours_index = mg.tensor(index.numpy())

    def run(lib, functional, values, indices):
        return functional.max_unpool1d(values, indices, kernel, stride, padding, **unpool)
    try:
        want = run(torch, torch.nn.functional, theirs, index)
    except Exception as error:                                # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            run(mg, F, ours, ours_index)
        return
    got = run(mg, F, ours, ours_index)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    upstream = RNG.standard_normal(want.shape)
    got.backward(mg.tensor(upstream))
    want.backward(torch.tensor(upstream))
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_max_unpool1d_module_as_torch():
    x = np.array([[[1.0, 2, 3, 4, 5, 6, 7, 8, 9]]])
    ours, theirs = nn.MaxUnpool1d(2), torch.nn.MaxUnpool1d(2)
    assert repr(ours) == repr(theirs)
    y, index = nn.MaxPool1d(2, return_indices=True)(mg.tensor(x))
    ty, tindex = torch.nn.MaxPool1d(2, return_indices=True)(torch.tensor(x))
    assert ours(y, index).tolist() == theirs(ty, tindex).tolist()
    assert ours(y, index, output_size=[1, 1, 9]).tolist() == \
        theirs(ty, tindex, output_size=torch.Size([1, 1, 9])).tolist()
    with pytest.raises(RuntimeError):                         # an index past the output
        F.max_unpool1d(y, index + 10, 2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_relu_gradient_stops_an_inf_or_nan_at_a_zero_output_as_torchs(dtype):
    values, grads = [-1.0, 0.0, 2.0, float("nan"), 3.0], [np.inf, np.nan, 2.0, 5.0, -np.inf]
    found = []
    for lib in (mg, torch):
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        x.relu().backward(lib.tensor(grads, dtype=getattr(lib, dtype)))
        found.append(x.grad.float().numpy() if lib is torch else x.grad.numpy().astype(np.float32))
    np.testing.assert_array_equal(*found)


@pytest.mark.parametrize("features", [(8, 0), (0, 3), (0, 0)])
def test_linear_of_zero_features_is_built_as_torchs(features):
    found = []
    for lib in (mg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer = lib.nn.Linear(*features)
        out = layer(lib.ones(2, features[0]))
        found.append((repr(layer), tuple(out.shape), out.detach().numpy().tolist(),
                      [str(w.message) for w in caught]))
    assert found[0] == found[1]


def test_review_corners_of_the_new_vocabulary_match_torch():
    import microgradnorm.nn.functional as mF
    assert mg.cholesky_inverse(mg.zeros(3, 0, 0, dtype=mg.float64)).shape == (3, 0, 0)
    with pytest.raises(RuntimeError, match="offsets"):
        mF.embedding_bag(mg.tensor([1, 2, 3, 4, 5, 6]), mg.randn(10, 3), mg.tensor([0, 5, 3]))
    rows = [[0.0, float("nan"), 1.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]]
    for name in ("cdist", "pdist"):
        args = (rows, rows) if name == "cdist" else (rows,)
        ours = getattr(mg, name)(*[mg.tensor(a) for a in args], p=0)
        theirs = getattr(torch, name)(*[torch.tensor(a) for a in args], p=0)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for lib in (mg, torch):
        assert isinstance(lib.nn.ConvTranspose2d(4, 6, 3), lib.nn.modules.conv._ConvNd)
        pooling = lib.nn.modules.pooling
        assert isinstance(lib.nn.MaxPool2d(2), pooling._MaxPoolNd)
        assert isinstance(lib.nn.AvgPool3d(2), pooling._AvgPoolNd)
        assert isinstance(lib.nn.AdaptiveMaxPool2d(2), pooling._AdaptiveMaxPoolNd)


def test_grad_fills_retain_grad_tensors_its_nodes_reach_as_torchs():
    found = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        v = x * 3
        v.retain_grad()
        (g,) = lib.autograd.grad((v * v).sum(), x)
        w = x * 3
        w.retain_grad()
        u = x * 2
        lib.autograd.grad((w * u).sum(), u)          # w's node is on no path to u
        found.append((g.numpy().tolist(), v.grad.numpy().tolist(), w.grad))
    assert found[0] == found[1]


# ----- cumsum_ / cumprod_ of bool ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_in_place_cumulative_of_bool_is_torchs_not_implemented_and_writes_nothing(name):
    ours, theirs = mg.tensor([True, False, True]), torch.tensor([True, False, True])
    same_error(lambda: getattr(ours, name)(0), lambda: getattr(theirs, name)(0))
    assert ours.tolist() == theirs.tolist() == [True, False, True]
    # another dtype is still written in place, as torch's
    ints, torch_ints = mg.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    getattr(ints, name)(0), getattr(torch_ints, name)(0)
    assert ints.tolist() == torch_ints.tolist()
