"""The dtypes as torch's dtype objects, against PyTorch: how each prints (alone and in a
tensor's repr), its facts (``is_floating_point``, ``is_complex``, ``is_signed``,
``itemsize``), ``to_real`` and ``to_complex`` with torch's error, one object per dtype
(``x.dtype is mg.float32``), and what stays NumPy's: equality with and hashing as the NumPy
dtype (a dict or set mixes both), names, NumPy functions taking it, pickling and
``get_default_dtype``."""

import copy
import io
import pickle

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm import dtypes

NAMES = list(dtypes.TORCH_DTYPE_NAMES)          # float32, ..., bfloat16, the float8 dtypes
ALIASES = ["half", "float", "double", "short", "int", "long", "cfloat", "cdouble"]


def pair(name):
    return getattr(mg, name), getattr(torch, name)


@pytest.mark.parametrize("name", NAMES + ALIASES)
def test_prints_as_torch(name):
    ours, theirs = pair(name)
    assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
    assert f"{ours}" == f"{theirs}" and str([ours]) == str([theirs])


@pytest.mark.parametrize("name", NAMES)
def test_facts_as_torch(name):
    ours, theirs = pair(name)
    assert ours.is_floating_point is theirs.is_floating_point
    assert ours.is_complex is theirs.is_complex
    assert ours.is_signed is theirs.is_signed
    assert ours.itemsize == theirs.itemsize
    assert str(ours.to_real()) == str(theirs.to_real())


@pytest.mark.parametrize("name", NAMES)
def test_to_complex_as_torch(name):
    ours, theirs = pair(name)
    if name == "float16":             # torch's complex32 has no NumPy twin: complex64 here
        assert theirs.to_complex() == torch.complex32 and ours.to_complex() is mg.complex64
        return
    try:
        expected = str(theirs.to_complex())
    except RuntimeError as error:
        with pytest.raises(RuntimeError, match=f"^{error}$"):
            ours.to_complex()
        return
    assert str(ours.to_complex()) == expected


@pytest.mark.parametrize("name", NAMES)
def test_tensor_repr_as_torch(name):
    # values every dtype holds exactly (float8_e8m0fnu: powers of two only)
    values = [1.0, 2.0] if name != "bool" else [True, False]
    theirs = torch.tensor(values).to(getattr(torch, name))
    ours = mg.tensor(values).to(getattr(mg, name))
    if name.startswith("float8"):            # torch prints a float8 tensor's values as floats
        assert repr(ours.dtype) == repr(theirs.dtype) and f"dtype={theirs.dtype}" in repr(ours)
        return
    assert repr(ours) == repr(theirs)
    assert str(ours.dtype) == str(theirs.dtype)


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "bool", "complex64"])
def test_tensor_repr_with_grad_and_shape_as_torch(name):
    def make(lib):
        x = lib.zeros(2, 0, dtype=getattr(lib, name))
        return repr(x), repr(lib.ones(3, dtype=getattr(lib, name))[:0])
    assert make(mg) == make(torch)
    for lib in (mg, torch):
        lib.set_default_dtype(lib.float64)
    try:
        ours, theirs = mg.ones(2, requires_grad=True) * 2, torch.ones(2, requires_grad=True) * 2
        assert repr(ours.float()).split(", grad_fn")[0] == repr(theirs.float()).split(
            ", grad_fn")[0]
    finally:
        mg.set_default_dtype(mg.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", ["float32", "int64", "bfloat16", "float8_e5m2", "bool"])
def test_one_object_per_dtype(name):
    ours = getattr(mg, name)
    x = mg.zeros(2, dtype=ours)
    assert x.dtype is ours and x.clone().dtype is ours and x[:1].dtype is ours
    assert isinstance(x.dtype, mg.dtype) and isinstance(ours, mg.dtype)
    assert isinstance(torch.zeros(2).dtype, torch.dtype)        # (torch's, for the record)
    assert mg.zeros(2, dtype=np.dtype(ours.dtype)).dtype is ours      # a NumPy dtype given
    assert mg.float is mg.float32 and mg.long is mg.int64 and mg.cdouble is mg.complex128


def test_equal_to_numpy_dtypes_strings_and_each_other():
    x = mg.ones(2)
    assert x.dtype == mg.float32 == np.float32 == np.dtype("float32") == "float32"
    assert x.dtype != mg.float64 and x.dtype != np.float64 and x.dtype != "int64"
    assert mg.float32 != torch.float32 and mg.float32 != 3 and mg.float32 is not None
    assert mg.int64 == mg.long and not mg.int64 != mg.long
    assert np.dtype("float64") == mg.float64 and np.float64 == mg.float64   # NumPy's side
    assert mg.bfloat16 == dtypes.bfloat16 and mg.bfloat16 != mg.float16


def test_hashing_mixes_with_numpy_dtypes():
    table = {np.dtype("float32"): "f", mg.int64: "l"}
    assert table[mg.float32] == "f" and table[np.dtype("int64")] == "l"
    assert table[mg.ones(2).dtype] == "f"
    assert {mg.float32, np.dtype("float32"), mg.float} == {mg.float32}
    assert len({mg.float32, mg.float64, np.dtype("float64")}) == 2
    assert hash(mg.float32) == hash(np.dtype("float32"))


def test_numpy_takes_it_as_its_dtype():
    assert np.dtype(mg.float32) == np.float32 and np.empty(2, mg.int16).dtype == np.int16
    assert np.zeros(2).astype(mg.ones(1, dtype=mg.half).dtype).dtype == np.float16
    assert np.result_type(mg.float32, mg.float64) == np.float64
    assert np.finfo(mg.float32).eps == np.finfo(np.float32).eps
    assert mg.float32.kind == "f" and mg.int8.type is np.int8 and mg.complex64.char == "F"


@pytest.mark.parametrize("name", ["float32", "bfloat16", "complex128", "bool", "uint16"])
def test_pickles_as_itself(name):
    ours = getattr(mg, name)
    assert pickle.loads(pickle.dumps(ours)) is ours
    assert copy.copy(ours) is ours and copy.deepcopy([ours])[0] is ours


def test_save_load_keeps_dtype_objects():
    buffer = io.BytesIO()
    mg.save({"dtype": mg.float32, "more": [mg.long, mg.bfloat16],
             "x": mg.ones(2, dtype=mg.float16)}, buffer)
    buffer.seek(0)
    loaded = mg.load(buffer)                     # weights_only: dtypes allowed, as torch's
    assert loaded["dtype"] is mg.float32 and loaded["more"] == [mg.long, mg.bfloat16]
    assert loaded["more"][1] is mg.bfloat16 and loaded["x"].dtype is mg.float16


def test_torch_saved_dtypes_load_as_ours():
    buffer = io.BytesIO()
    torch.save({"dtype": torch.float32, "more": [torch.long, torch.bfloat16],
                "x": torch.ones(2, dtype=torch.float16)}, buffer)
    buffer.seek(0)
    loaded = mg.load(buffer)
    assert loaded["dtype"] is mg.float32 and loaded["more"][0] is mg.int64
    assert str(loaded["more"][1]) == str(torch.bfloat16) and loaded["x"].dtype is mg.float16


def test_default_dtype_and_promotion_as_torch():
    assert str(mg.get_default_dtype()) == str(torch.get_default_dtype())
    assert mg.get_default_dtype() is mg.float32
    for lib in (mg, torch):
        lib.set_default_dtype(lib.float64)
    try:
        assert str(mg.get_default_dtype()) == str(torch.get_default_dtype())
        assert mg.get_default_dtype() is mg.float64 and mg.tensor([1.5]).dtype is mg.float64
    finally:
        mg.set_default_dtype(mg.float32)
        torch.set_default_dtype(torch.float32)
    for first, second in [("uint8", "int8"), ("float16", "bfloat16"), ("int64", "float16"),
                          ("bool", "int32"), ("float32", "complex128")]:
        ours = mg.promote_types(getattr(mg, first), getattr(mg, second))
        assert str(ours) == str(torch.promote_types(getattr(torch, first),
                                                    getattr(torch, second)))
        assert isinstance(ours, mg.dtype)
    ours = mg.result_type(mg.tensor([1, 2]), 1.0)
    assert str(ours) == str(torch.result_type(torch.tensor([1, 2]), 1.0)) and ours is mg.float32


def test_grad_dtype_and_view_take_dtype_objects():
    x = mg.ones(2, dtype=mg.float16, requires_grad=True)
    x.grad_dtype = mg.float32
    (x * 2).sum().backward()
    assert x.grad.dtype is mg.float32
    assert mg.ones(2).view(mg.int32).dtype is mg.int32
    assert mg.ones(2).view(np.dtype("int32")).dtype is mg.int32
    assert mg.ones(2).type() == torch.ones(2).type()
    assert str(mg.finfo(mg.bfloat16)) == str(torch.finfo(torch.bfloat16))


def test_autocast_dtype_as_torch():
    for device in ("cpu", "cuda"):
        ours = mg.get_autocast_dtype(device)
        assert str(ours) == str(torch.get_autocast_dtype(device)) and isinstance(ours, mg.dtype)
