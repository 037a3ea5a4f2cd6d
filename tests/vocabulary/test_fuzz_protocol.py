"""The tensor protocol as torch's, corner by corner, each against torch: the legacy type
classes (``FloatTensor``), ``apply_``/``map_``, ``copy.deepcopy`` of views and non-leaves,
``pickle`` and ``copy.copy`` (hooks dropped by each), NumPy's ufuncs on tensors (a bool
result a mask, as torch's uint8 one indexes; torch's error for a tensor that requires grad),
``as_strided`` over the memory order, the scalar conversions (``item``,
``float``, ``complex``), ``~`` of a non-integer tensor, ``finfo``/``iinfo`` and the views a
``save``/``load`` keeps shared."""

import copy
import functools
import io
import math
import operator
import pickle
import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]
# torch's own __array_wrap__ takes one argument, which NumPy 2 warns about
pytestmark = pytest.mark.filterwarnings("ignore:__array_wrap__ must accept")

LEGACY = ["BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor",
          "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor"]


def pair(values, dtype):
    """The same values as a torch tensor and one of ours, of ``dtype``."""
    theirs = torch.tensor(values).to(getattr(torch, dtype))
    return theirs, mg.tensor(theirs.float().numpy() if dtype == "bfloat16" else theirs.numpy(),
                             dtype=dtype)


def values_of(tensor):
    """A tensor's dtype name, shape and values, comparable across the two libraries."""
    if isinstance(tensor, torch.Tensor):
        name = str(tensor.dtype)
        data = tensor.detach().float() if tensor.dtype == torch.bfloat16 else tensor.detach()
        return name, tuple(tensor.shape), data.numpy().tolist()
    data = tensor.detach().numpy()
    data = data.astype(np.float32) if str(data.dtype) == "bfloat16" else data
    return str(tensor.dtype), tuple(tensor.shape), data.tolist()


def raised(call):
    """The exception class ``call()`` raises, or None."""
    try:
        call()
    except Exception as error:       # noqa: BLE001  (any class: compared below)
        return type(error)
    return None


def assert_raises_as_torch(theirs, ours):
    expected, got = raised(theirs), raised(ours)
    assert expected is not None and got is not None and issubclass(got, expected), (expected,
                                                                                     got)


def message(call):
    """The class and words of what ``call()`` raises."""
    try:
        call()
    except Exception as error:       # noqa: BLE001  (any class: compared below)
        return type(error), str(error)
    raise AssertionError("nothing raised")


def assert_says_as_torch(theirs, ours):
    (expected, words), (got, our_words) = message(theirs), message(ours)
    assert issubclass(got, expected) and our_words == words, ((expected, words), (got, our_words))


def assert_same(ours, theirs):
    """The same dtype, shape and values, NaN where torch's NaN is."""
    (name, shape, values), expected = values_of(ours), values_of(theirs)
    assert (name, shape) == expected[:2]
    np.testing.assert_array_equal(np.array(values), np.array(expected[2]))


# ----- torch's legacy type classes --------------------------------------------------------
@pytest.mark.parametrize("name", LEGACY)
def test_legacy_type_classes_make_and_recognise_their_dtype(name):
    theirs_class, ours_class = getattr(torch, name), getattr(mg, name)
    assert tuple(ours_class(2, 3).shape) == tuple(theirs_class(2, 3).shape)
    assert tuple(ours_class().shape) == tuple(theirs_class().shape)
    assert values_of(ours_class([1, 0, 2])) == values_of(theirs_class([1, 0, 2]))
    for dtype in DTYPES:
        theirs, ours = pair([1, 0], dtype)
        assert isinstance(ours, ours_class) == isinstance(theirs, theirs_class), dtype
        assert values_of(ours.type(ours_class)) == values_of(theirs.type(theirs_class)), dtype
        assert ours.type() == theirs.type()


# ----- apply_ and map_ --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_apply_and_map_write_each_element_as_torch(dtype):
    def double(value):
        return value * 2

    def combined(a, b):
        return a + 2 * b

    theirs, ours = pair([[1, 0, 3], [2, 5, 1]], dtype)
    other_theirs, other_ours = pair([0, 1, 1], dtype)
    assert values_of(ours.clone().apply_(double)) == values_of(theirs.clone().apply_(double))
    assert values_of(ours.clone().map_(other_ours, combined)) == values_of(
        theirs.clone().map_(other_theirs, combined))
    view = ours.clone()
    assert view.apply_(double) is view


RETURNED = {"None": None, "str": "1", "list": [1], "complex": 1j, "NumPy float32": np.float32(2.5),
            "NumPy bool": np.True_, "NumPy complex": np.complex64(1j), "half": 1.5, "minus one": -1,
            "minus a half": -0.5, "a bool": True, "300": 300, "NaN": math.nan, "inf": math.inf,
            "past float32": 1e300}


@pytest.mark.parametrize("returned", RETURNED)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int64", "float16", "float32",
                                   "float64", "complex64"])
def test_apply_and_map_take_or_refuse_what_the_function_returns_as_torch(returned, dtype):
    value = RETURNED[returned]
    if dtype == "bool" and returned == "NumPy complex":
        pytest.skip("torch raises its own ComplexWarning class")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)      # 1e300 into float32: inf, quietly
        theirs, ours = (lib.ones(2, dtype=getattr(lib, dtype)) for lib in (torch, mg))
        calls = {"apply_": lambda t: t.apply_(lambda _: value),
                 "map_": lambda t: t.map_(t.clone(), lambda *_: value)}
        for call in calls.values():
            their_call, our_call = (functools.partial(call, t.clone()) for t in (theirs, ours))
            if raised(their_call) is None:
                assert_same(our_call(), their_call())
            elif returned in ("None", "str", "list"):
                assert_says_as_torch(their_call, our_call)
            else:
                assert_raises_as_torch(their_call, our_call)


OTHERS = {"a list": lambda lib: [1.0, 2.0, 3.0], "int64": lambda lib: lib.tensor([1, 2, 3]),
          "float64": lambda lib: lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64),
          "too long": lambda lib: lib.ones(4), "more dims": lambda lib: lib.ones(2, 3),
          "broadcast": lambda lib: lib.tensor([2.0]), "a row": lambda lib: lib.ones(1, 3)}


@pytest.mark.parametrize("other", OTHERS)
def test_map_takes_a_tensor_of_its_dtype_that_expands_to_its_shape_as_torch(other):
    theirs, ours = torch.tensor([1.0, 2.0, 3.0]), mg.tensor([1.0, 2.0, 3.0])

    def call(tensor, lib):
        return tensor.map_(OTHERS[other](lib), lambda a, b: a + 2 * b)

    if raised(lambda: call(theirs.clone(), torch)) is None:
        assert_same(call(ours.clone(), mg), call(theirs.clone(), torch))
    elif other in ("a list", "int64", "float64"):             # torch's TypeError, its words
        assert_says_as_torch(lambda: call(theirs, torch), lambda: call(ours, mg))
    else:
        assert_raises_as_torch(lambda: call(theirs, torch), lambda: call(ours, mg))


@pytest.mark.parametrize("case", ["requires_grad", "int16 overflow", "int16 past int64",
                                  "int64 past int64"])
def test_apply_and_map_refuse_as_torch(case):
    if case == "requires_grad":
        theirs = torch.ones(2, requires_grad=True)
        ours = mg.ones(2, requires_grad=True)
        def function(value): return value
    else:
        dtype = case.split()[0]
        theirs, ours = pair([1, 2], dtype)
        power = 20 if case.endswith("overflow") else 70
        def function(value): return value * 2 ** power
    assert_raises_as_torch(lambda: theirs.apply_(function), lambda: ours.apply_(function))
    assert_raises_as_torch(lambda: theirs.map_(theirs, lambda a, b: function(a)),
                           lambda: ours.map_(ours, lambda a, b: function(a)))


LEGACY_ARGUMENTS = {"a float": (2.5,), "a bool": (True,), "a NumPy float": (np.float32(1),),
                    "a negative size": (-1,), "a negative second size": (2, -1),
                    "a NumPy int": (np.int64(2),), "a 0-d array": (np.array(2.5),),
                    "a tuple": ((1, 2),), "sizes": (2, 0), "a str": ("ab",)}


@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "BoolTensor"])
@pytest.mark.parametrize("arguments", LEGACY_ARGUMENTS)
def test_legacy_type_classes_take_sizes_or_a_sequence_as_torch(name, arguments):
    given = LEGACY_ARGUMENTS[arguments]
    theirs, ours = (functools.partial(getattr(lib, name), *given) for lib in (torch, mg))
    if raised(theirs) is None:                 # sizes: torch's memory uninitialised
        if all(isinstance(n, (int, np.integer)) for n in given):
            assert values_of(ours())[:2] == values_of(theirs())[:2]
        else:
            assert_same(ours(), theirs())
    else:
        assert_says_as_torch(theirs, ours)


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor"])
def test_legacy_type_classes_share_an_array_of_their_dtype_and_alias_a_tensor_as_torch(name):
    def facts(lib):
        dtype = getattr(lib, name)(0).dtype
        same, other = (np.arange(3).astype(str(d).removeprefix("torch."))
                       for d in (dtype, "int32"))
        made = [getattr(lib, name)(same), getattr(lib, name)(other)]
        same[0] = other[0] = 7                         # shared where the dtype is the class's
        w = lib.zeros(2, dtype=dtype, requires_grad=dtype.is_floating_point
                      if lib is torch else dtype.kind == "f")
        alias = getattr(lib, name)(w)
        return [values_of(t) for t in made] + [alias._base is w, alias.requires_grad,
                                               raised(lambda: getattr(lib, name)(same[::-1]))]
    assert facts(mg) == facts(torch)


# ----- copy.deepcopy ----------------------------------------------------------------------
VIEWS = {"slice": lambda x: x[:, 1:], "transpose": lambda x: x.t(),
         "reshape": lambda x: x.reshape(-1), "row": lambda x: x[1], "step": lambda x: x[:, ::2],
         "expand": lambda x: x[:1].expand(3, 3)}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64"])
def test_deepcopy_keeps_views_of_one_memory_sharing_and_copies_grad(view, dtype):
    results = []
    for base in pair([[1, 2, 3], [4, 5, 6]], dtype):
        if dtype == "float32":
            base.grad = base.detach() * 10
        copied_base, copied_view = copy.deepcopy([base, VIEWS[view](base)])
        copied_base.fill_(7)                  # seen through the copied view, not the original
        grad = copied_base.grad
        results.append((values_of(copied_view), values_of(base),
                        None if grad is None else values_of(grad), grad is base.grad,
                        written_to(copied_view)))               # an expand's: refused
    assert results[1] == results[0]


def written_to(tensor):
    """Whether ``tensor.add_(1)`` writes (True) or raises a RuntimeError (False)."""
    error = raised(functools.partial(tensor.add_, 1))
    assert error is None or issubclass(error, RuntimeError)
    return error is None


def test_deepcopy_refuses_a_tensor_an_op_made_and_keeps_a_parameter():
    assert_raises_as_torch(lambda: copy.deepcopy(torch.ones(2, requires_grad=True) * 2),
                           lambda: copy.deepcopy(mg.ones(2, requires_grad=True) * 2))
    theirs, ours = torch.nn.Parameter(torch.ones(2)), mg.nn.Parameter(mg.ones(2))
    copied_theirs, copied_ours = copy.deepcopy(theirs), copy.deepcopy(ours)
    assert type(copied_ours) is type(ours) and type(copied_theirs) is type(theirs)
    assert copied_ours.requires_grad == copied_theirs.requires_grad
    assert copied_ours.is_leaf == copied_theirs.is_leaf
    assert repr(copied_ours) == repr(copied_theirs)


@pytest.mark.filterwarnings("ignore:backward hook")          # torch's: not serialized
@pytest.mark.parametrize("how", ["deepcopy", "pickle", "copy"])
def test_copies_drop_the_hooks_as_torch(how):
    results = []
    for lib in (torch, mg):
        calls = []
        leaf = lib.ones(2, requires_grad=True)
        leaf.register_hook(lambda grad: grad * 10)
        leaf.register_post_accumulate_grad_hook(functools.partial(calls.append))
        copied = {"deepcopy": copy.deepcopy, "copy": copy.copy,
                  "pickle": lambda t: pickle.loads(pickle.dumps(t))}[how](leaf)
        (copied * 3).sum().backward()
        results.append((values_of(copied.grad), calls))
    assert results[1] == results[0]


@pytest.mark.parametrize("layout", ["C", "F"])
def test_deepcopy_and_as_strided_read_the_memory_of_views_of_other_dtypes_and_layouts(layout):
    results = []
    values = np.asarray(np.arange(6, dtype=np.float32).reshape(2, 3), order=layout)
    for lib, base in ((torch, torch.from_numpy(values.copy(order=layout))),
                      (mg, mg.tensor(values.copy(order=layout)))):
        bits = base.view(lib.int32)
        strided = base.as_strided((3, 2), (1, 3), 0)           # the memory's order
        copied_base, copied_bits = copy.deepcopy([base, bits])
        copied_base.add_(1)                                   # seen through the copied bits
        results.append((values_of(strided), values_of(copied_bits), values_of(bits)))
    assert results[1] == results[0]


COPIES = {"pickle": lambda t: pickle.loads(pickle.dumps(t)), "copy": copy.copy}


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("kind", ["leaf", "made", "parameter"])
def test_pickle_and_copy_rebuild_a_leaf_without_grad_as_torch(how, kind):
    results = []
    for lib in (torch, mg):
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        tensor = {"leaf": leaf, "made": leaf * 2,
                  "parameter": lib.nn.Parameter(lib.ones(2))}[kind]
        if tensor.is_leaf:
            tensor.grad = lib.ones(2)
            tensor.note = "kept"
        copied = COPIES[how](tensor)
        results.append((type(copied).__name__, copied.requires_grad, copied.is_leaf,
                        copied.grad is None, getattr(copied, "note", None),
                        copied.data_ptr() == tensor.data_ptr(), values_of(copied)))
    assert results[1] == results[0]


# ----- NumPy's ufuncs on a tensor ---------------------------------------------------------
UFUNCS = {"exp": np.exp, "isnan": np.isnan, "negative": np.negative,
          "add one": lambda t: np.add(t, 1), "sqrt": np.sqrt}


@pytest.mark.parametrize("ufunc", UFUNCS)
@pytest.mark.parametrize("dtype", ["bool", "int32", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_a_numpy_ufunc_of_a_tensor_is_a_tensor(ufunc, dtype, shape):
    values = np.arange(int(np.prod(shape))).reshape(shape) % 3
    theirs, ours = pair(values.tolist(), dtype)
    if raised(lambda: UFUNCS[ufunc](theirs)) is not None:         # NumPy's: -bool
        assert_raises_as_torch(lambda: UFUNCS[ufunc](theirs), lambda: UFUNCS[ufunc](ours))
        return
    expected, got = UFUNCS[ufunc](theirs), UFUNCS[ufunc](ours)
    assert isinstance(expected, torch.Tensor) and isinstance(got, mg.Tensor)
    if got.dtype == mg.bool and expected.dtype == torch.uint8:    # a mask: bool (see below)
        expected = expected.bool()
    assert values_of(got) == values_of(expected)


MASKS = {"isnan": np.isnan, "isfinite": np.isfinite, "isinf": np.isinf, "signbit": np.signbit,
         "greater": lambda t: np.greater(t, 1), "logical_not": lambda t: np.logical_not(t)}


@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("shape", [(6,), (2, 3)])
def test_a_bool_ufunc_result_is_a_mask_as_torchs_is(mask, shape):
    # torch gives uint8, which its indexing reads as a mask (with a deprecation warning)
    # and its index writes refuse: ours stays bool, the same mask
    values = np.array([1.0, math.nan, -math.inf, 2.0, -0.0, math.inf]).reshape(shape)
    theirs, ours = torch.tensor(values), mg.tensor(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert_same(ours[MASKS[mask](ours)], theirs[MASKS[mask](theirs)])
    their_mask = MASKS[mask](theirs).bool()
    assert_same(~MASKS[mask](ours), ~their_mask)
    written_theirs, written_ours = theirs.clone(), ours.clone()
    written_theirs[their_mask] = 0
    written_ours[MASKS[mask](ours)] = 0
    assert_same(written_ours, written_theirs)


REQUIRING_GRAD = {"exp": lambda t, plain: np.exp(t), "add": lambda t, plain: np.add(t, 1),
                  "radd": lambda t, plain: np.add(1, t), "two": lambda t, plain: np.add(plain, t),
                  "isnan": lambda t, plain: np.isnan(t), "divmod": lambda t, plain: np.divmod(t, 2),
                  "0-d": lambda t, plain: np.exp(t.sum())}


@pytest.mark.parametrize("call", REQUIRING_GRAD)
def test_a_numpy_ufunc_of_a_tensor_that_requires_grad_raises_as_torch(call):
    theirs, ours = (functools.partial(REQUIRING_GRAD[call], lib.ones(2, requires_grad=True),
                                      lib.ones(2)) for lib in (torch, mg))
    assert_says_as_torch(theirs, ours)


# ----- one element as a Python number -----------------------------------------------------
@pytest.mark.parametrize("convert", ["item", "float", "int", "complex", "bool"])
@pytest.mark.parametrize("values", [[1.5, 2.5], [], [[3.0]], 2.0, [1 + 2j], 0j, [2 + 0j]])
def test_scalar_conversions_take_and_refuse_as_torch(convert, values):
    theirs, ours = torch.tensor(values), mg.tensor(values)
    function = {"item": lambda t: t.item(), "float": float, "int": int, "complex": complex,
                "bool": bool}[convert]
    expected = raised(lambda: function(theirs))
    if expected is None:
        assert function(ours) == function(theirs)
        assert type(function(ours)) is type(function(theirs))
    else:
        assert_raises_as_torch(lambda: function(theirs), lambda: function(ours))


@pytest.mark.parametrize("values", [[1.0, 2.0], [], [[True, False]]])
def test_bool_of_other_than_one_element_says_torchs_words(values):
    messages = []
    for lib in (torch, mg):
        with pytest.raises(RuntimeError) as info:
            bool(lib.tensor(values))
        messages.append(str(info.value).split(";")[0])
    assert messages[1] == messages[0]


@pytest.mark.parametrize("dtype", DTYPES + ["complex64"])
def test_invert_takes_integers_and_bools_only(dtype):
    theirs = torch.tensor([1, 0]).to(getattr(torch, dtype))
    ours = mg.tensor(theirs.numpy() if dtype != "bfloat16" else [1, 0], dtype=dtype)
    if raised(lambda: ~theirs) is None:
        assert values_of(~ours) == values_of(~theirs)
    else:
        assert_raises_as_torch(lambda: ~theirs, lambda: ~ours)
    if dtype.startswith("int") or dtype == "uint8":
        assert operator.index(ours[:1]) == operator.index(theirs[:1])


# ----- finfo and iinfo --------------------------------------------------------------------
FIELDS = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")


@pytest.mark.parametrize("name", ["finfo", "iinfo"])
@pytest.mark.parametrize("dtype", DTYPES + ["complex64", "complex128", None])
def test_finfo_and_iinfo_give_torchs_fields(name, dtype):
    if name == "iinfo" and dtype is None:
        pytest.skip("iinfo takes a dtype")
    given = [] if dtype is None else [getattr(torch, dtype)], \
        [] if dtype is None else [getattr(mg, dtype)]
    theirs = functools.partial(getattr(torch, name), *given[0])
    ours = functools.partial(getattr(mg, name), *given[1])
    if raised(theirs) is not None:
        assert_raises_as_torch(theirs, ours)
        return
    for field in FIELDS:
        if hasattr(theirs(), field):
            expected, got = getattr(theirs(), field), getattr(ours(), field)
            if field == "dtype":
                expected = str(expected).removeprefix("torch.")
            assert type(got) is type(expected) and got == expected, field
    assert repr(ours()) == repr(theirs())


def test_is_storage_as_torch():
    theirs, ours = torch.ones(2), mg.ones(2)
    for pick in (lambda t: t, lambda t: t.untyped_storage(), lambda t: t.tolist()):
        assert mg.is_storage(pick(ours)) == torch.is_storage(pick(theirs))


# ----- save and load: views of one memory stay views of one memory ------------------------
SAVED_VIEWS = {"slice": lambda x: x.reshape(-1)[1:], "transpose": lambda x: x.t(),
               "reshape": lambda x: x.reshape(3, 2), "row": lambda x: x[1],
               "step": lambda x: x[:, ::2], "expand": lambda x: x[:1].expand(3, 3)}


def saved_and_loaded(lib, obj):
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return lib.load(buffer, weights_only=True)


@pytest.mark.parametrize("view", SAVED_VIEWS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int16", "bool"])
def test_save_load_keeps_views_sharing_memory(view, dtype):
    results = []
    for lib, base in zip((torch, mg), pair([[1, 0, 3], [4, 5, 0]], dtype)):
        loaded = saved_and_loaded(lib, {"base": base, "nested": [SAVED_VIEWS[view](base)]})
        loaded["base"].fill_(1)               # seen through the loaded view
        results.append((values_of(loaded["nested"][0]), values_of(loaded["base"])))
    assert results[1] == results[0]


def test_a_loaded_expanded_view_refuses_writes_as_an_expanded_tensor():
    base = mg.arange(6.0).reshape(2, 3)
    loaded = saved_and_loaded(mg, [base, base[:1].expand(4, 3)])
    assert loaded[1].shape == (4, 3) and math.isclose(loaded[1][3, 2].item(), 2.0)
    with pytest.raises(RuntimeError, match="single memory location"):
        loaded[1].add_(1)
