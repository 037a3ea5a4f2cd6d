"""factories.py's creation vocabulary, ``mg.device`` and ``mg.cuda`` against PyTorch: eye,
full_like, empty_like, the *_like keywords, as_tensor (memory shared as torch shares it),
is_tensor, arange's dtypes; devices built, compared, hashed, printed and refused as
torch's, and accepted wherever a device string is; torch.cuda's answers without a GPU."""

import pickle
from functools import partial

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm import backend, nn


def dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def same_tensor(ours, theirs):
    """One dtype, shape and values (NaN == NaN)."""
    assert dtype_name(ours.dtype) == dtype_name(theirs.dtype), (ours, theirs)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def raises_like(ours, theirs):
    """torch's call raises; ours raises the same class."""
    with pytest.raises(Exception) as error:            # noqa: B017 (the class is torch's)
        theirs()
    with pytest.raises(error.type):
        ours()


# ----- eye, full_like, empty_like, the *_like keywords -------------------------------------
def test_eye_values_dtypes_and_errors():
    for args, kwargs in [((3,), {}), ((2, 3), {}), ((3, 2), {}), ((0,), {}),
                         ((2,), {"dtype": "bool"}), ((2, 3), {"dtype": "int64"})]:
        theirs = {k: getattr(torch, v) for k, v in kwargs.items()}
        same_tensor(mg.eye(*args, **kwargs), torch.eye(*args, **theirs))
    mg.set_default_dtype(mg.float64)
    torch.set_default_dtype(torch.float64)
    try:
        same_tensor(mg.eye(2), torch.eye(2))
    finally:
        torch.set_default_dtype(torch.float32)
    assert mg.eye(2, requires_grad=True).requires_grad
    for args in [(-1,), (2, -1), (2.0,), (True,), (2, 1.5)]:
        raises_like(partial(mg.eye, *args), partial(torch.eye, *args))


def test_full_like_keeps_the_dtype_and_refuses_what_it_cannot_hold():
    cases = [("int64", 2.7), ("int64", -2.7), ("int64", True), ("float32", float("nan")),
             ("float32", float("inf")), ("bool", 2), ("uint8", -1), ("float16", 65504.0),
             ("int8", 127), ("float64", 1e300)]
    for dtype, value in cases:
        x, tx = mg.zeros(2, 3, dtype=dtype), torch.zeros(2, 3, dtype=getattr(torch, dtype))
        same_tensor(mg.full_like(x, value), torch.full_like(tx, value))
    x, tx = mg.zeros(2), torch.zeros(2)
    same_tensor(mg.full_like(x, 2, dtype=mg.int32), torch.full_like(tx, 2, dtype=torch.int32))
    same_tensor(mg.full_like(x, mg.tensor(3.0)), torch.full_like(tx, torch.tensor(3.0)))
    same_tensor(mg.full_like(mg.zeros(0, 2), 1.0), torch.full_like(torch.zeros(0, 2), 1.0))
    same_tensor(mg.full_like(mg.tensor(1.0), 5), torch.full_like(torch.tensor(1.0), 5))
    for dtype, value in [("int8", 300), ("int64", float("nan")), ("float32", 1e300),
                         ("float16", 1e6), ("uint8", 256), ("int64", float("inf"))]:
        x, tx = mg.zeros(2, dtype=dtype), torch.zeros(2, dtype=getattr(torch, dtype))
        raises_like(partial(mg.full_like, x, value), partial(torch.full_like, tx, value))
    raises_like(partial(mg.full_like, [1.0], 2), partial(torch.full_like, [1.0], 2))
    raises_like(partial(mg.full_like, x, "x"), partial(torch.full_like, tx, "x"))
    raises_like(partial(mg.full_like, x, mg.zeros(2)), partial(torch.full_like, tx,
                                                                torch.zeros(2)))


def test_like_factories_take_dtype_device_and_requires_grad():
    x, tx = mg.zeros(2, 3, dtype="int32"), torch.zeros(2, 3, dtype=torch.int32)
    for name in ("zeros_like", "ones_like", "empty_like", "full_like"):
        value = (7,) if name == "full_like" else ()
        ours, theirs = getattr(mg, name)(x, *value), getattr(torch, name)(tx, *value)
        assert dtype_name(ours.dtype) == dtype_name(theirs.dtype) and ours.shape == (2, 3)
        if name != "empty_like":
            same_tensor(ours, theirs)
        made = getattr(mg, name)(x, *value, dtype=mg.float64, device=mg.device("cpu"),
                                 requires_grad=True)
        expected = getattr(torch, name)(tx, *value, dtype=torch.float64,
                                        device=torch.device("cpu"), requires_grad=True)
        assert made.requires_grad and expected.requires_grad and made.is_leaf
        assert dtype_name(made.dtype) == dtype_name(expected.dtype)
        assert made.device == mg.device("cpu") and str(made.device) == str(expected.device)
        with pytest.raises(TypeError):                 # an int tensor cannot require grad
            getattr(mg, name)(x, *value, requires_grad=True)


# ----- as_tensor, is_tensor, arange --------------------------------------------------------
def test_as_tensor_shares_memory_where_torch_does():
    array = np.arange(3.0)
    ours, theirs = mg.as_tensor(array), torch.as_tensor(array)
    array[0] = 9.0                                    # both see the write: shared memory
    same_tensor(ours, theirs)
    assert ours[0].item() == 9.0
    transposed = np.arange(6.0).reshape(2, 3).T
    ours, theirs = mg.as_tensor(transposed), torch.as_tensor(transposed)
    transposed[0, 0] = 7.0
    same_tensor(ours, theirs)
    array = np.arange(3.0)
    ours = mg.as_tensor(array, dtype=mg.float32)
    theirs = torch.as_tensor(array, dtype=torch.float32)
    array[0] = 9.0                                    # another dtype: a copy
    same_tensor(ours, theirs)
    for data in ([1, 2], [1.0, 2], 3.0, True, np.float32(2), np.arange(3, dtype=np.int32),
                 [[1, 2], [3, 4]], np.array(5)):
        same_tensor(mg.as_tensor(data), torch.as_tensor(data))
        same_tensor(mg.as_tensor(data, dtype=mg.float64),
                    torch.as_tensor(data, dtype=torch.float64))
    raises_like(partial(mg.as_tensor, np.array(["a"])), partial(torch.as_tensor, np.array(["a"])))


def test_as_tensor_of_a_tensor_is_the_tensor_or_a_recorded_copy():
    x, tx = mg.zeros(2), torch.zeros(2)
    assert mg.as_tensor(x) is x and torch.as_tensor(tx) is tx
    assert mg.as_tensor(x, dtype=mg.float32, device="cpu") is x
    leaf = mg.tensor([1.0, 2.0], requires_grad=True)
    torch_leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    ours, theirs = mg.as_tensor(leaf, dtype=mg.float64), torch.as_tensor(torch_leaf,
                                                                       dtype=torch.float64)
    assert ours is not leaf and ours.requires_grad == theirs.requires_grad
    (ours * mg.tensor([3.0, 4.0], dtype="float64")).sum().backward()
    (theirs * torch.tensor([3.0, 4.0], dtype=torch.float64)).sum().backward()
    same_tensor(leaf.grad, torch_leaf.grad)


def test_is_tensor():
    for ours, theirs in [(mg.zeros(1), torch.zeros(1)), (np.zeros(1), np.zeros(1)),
                         (nn.Parameter(mg.zeros(1)), torch.nn.Parameter(torch.zeros(1))),
                         (1.0, 1.0), ([mg.zeros(1)], [torch.zeros(1)])]:
        assert mg.is_tensor(ours) is torch.is_tensor(theirs)


def test_arange_dtypes_follow_torch():
    for args in [(0, 1, 0.25), (0.0, 3), (3,), (np.float64(3),), (0, 1, 0.1), (5, 1, -1.5),
                 (np.int32(4),), (True, 3)]:
        same_tensor(mg.arange(*args), torch.arange(*args))
    mg.set_default_dtype(mg.float64)
    torch.set_default_dtype(torch.float64)
    try:
        same_tensor(mg.arange(0, 1, 0.25), torch.arange(0, 1, 0.25))
    finally:
        torch.set_default_dtype(torch.float32)
    same_tensor(mg.arange(4, dtype=mg.float16), torch.arange(4, dtype=torch.float16))


# ----- mg.device ---------------------------------------------------------------------------
DEVICE_ARGS = [("cpu",), ("cuda",), ("cuda:0",), ("cuda", 0), ("cuda:3",), ("cpu", 0),
               ("cpu:0",)]


def test_devices_are_built_compared_and_printed_as_torchs():
    for args in DEVICE_ARGS:
        ours, theirs = mg.device(*args), torch.device(*args)
        assert (ours.type, ours.index) == (theirs.type, theirs.index), args
        assert str(ours) == str(theirs) and repr(ours) == repr(theirs), args
        assert mg.device(ours) == ours and pickle.loads(pickle.dumps(ours)) == ours
        for other in DEVICE_ARGS:
            equal = torch.device(*args) == torch.device(*other)
            assert (ours == mg.device(*other)) is equal, (args, other)
            if equal:
                assert hash(ours) == hash(mg.device(*other))
    assert len({mg.device("cuda", 0), mg.device("cuda:0"), mg.device("cpu")}) == 2


def test_a_device_also_equals_its_strings():
    # not torch's (its device never equals a str): the library compares devices to strings
    assert mg.device("cpu") == "cpu" and "cpu" == mg.device("cpu")
    assert mg.device("cuda:0") == "cuda" and mg.device("cuda") == "cuda:0"
    assert mg.device("cpu") != "cuda" and mg.device("cuda:0") != "cuda:1"
    assert mg.device("cpu") != "float32" and mg.device("cpu") != 0
    assert {"cpu": 1}[mg.device("cpu")] == 1 and {"cuda:0": 2}[mg.device("cuda", 0)] == 2


def test_bad_devices_raise_torchs_classes():
    for args in [("gpu",), ("cuda:x",), ("cuda:",), ("cuda:0", 0), ("cuda", -1), ("cuda", 1.0),
                 (None,), ("cuda:0", "x"), ("cuda", True)]:
        raises_like(partial(mg.device, *args), partial(torch.device, *args))


def test_tensor_device_is_a_device_and_devices_work_wherever_strings_do():
    x, tx = mg.zeros(2), torch.zeros(2)
    assert isinstance(x.device, mg.device) and x.device == mg.device("cpu") == tx.device.type
    assert str(x.device) == str(tx.device) and repr(x.device) == repr(tx.device)
    assert x.device == "cpu" and x.to(mg.device("cpu")) is x and x.to("cpu:0") is x
    assert x.to(mg.device("cpu"), mg.float64).dtype == np.float64
    made = [mg.zeros(2, device=mg.device("cpu")), mg.tensor([1.0], device="cpu:0"),
            mg.randn(2, device=mg.device("cpu")), mg.eye(2, device=mg.device("cpu")),
            mg.zeros_like(x, device=mg.device("cpu")), x.new_zeros(2, device=mg.device("cpu")),
            x.new_full((2,), 1.0, device=mg.device("cpu")), mg.arange(3, device="cpu:0")]
    assert all(t.device == mg.device("cpu") for t in made)
    model = nn.Linear(2, 3)
    assert model.to(mg.device("cpu")) is model and model.weight.device == "cpu"
    before = x.numpy().copy()
    for device in ("cuda:1", mg.device("cuda", 2)):
        with pytest.raises(RuntimeError, match="invalid device ordinal"):
            mg.zeros(2, device=device)
        with pytest.raises(RuntimeError, match="cuda:"):
            x.to(device)
    np.testing.assert_array_equal(x.numpy(), before)
    with pytest.raises(ValueError, match="device"):   # the class this library raised before
        mg.zeros(2, device="tpu")


def test_an_int_device_is_a_gpus_index_as_torchs():
    # torch reads device=0 and x.to(0) as the accelerator's index: cuda:0 in a CUDA build
    x = mg.zeros(2)
    assert backend.check_device(0) == "cuda" and mg.device(0) == mg.device("cuda:0")
    for call in (lambda: x.to(0), lambda: x.to(device=0), lambda: x.to(0, mg.float64),
                 lambda: mg.zeros(2, device=0), lambda: x.cuda(0)):
        if GPUS:
            assert call().device == mg.device("cuda:0")
        else:                                          # as x.to("cuda") without a GPU
            with pytest.raises(AssertionError, match="GPU|CuPy"):
                call()
    for index, error in ((1, "invalid device ordinal"), (-1, "must not be negative")):
        with pytest.raises(RuntimeError, match=error):
            x.to(index)
    with pytest.raises(TypeError, match="float 1.5"):
        mg.zeros(2, device=1.5)
    assert x.to(mg.float64).dtype == np.float64 and x.to(None) is x


NONE_DEVICE = [("tensor", ([1.0, 2.0],)), ("Tensor", ([1.0, 2.0],)), ("zeros", (2, 3)),
               ("ones", (2,)), ("empty", (2,)), ("full", ((2,), 1.5)), ("arange", (3,)),
               ("linspace", (0, 1, 3)), ("logspace", (0, 1, 3)), ("eye", (2,)),
               ("rand", (2,)), ("randn", (2,)), ("randint", (0, 3, (2,))), ("randperm", (3,)),
               ("normal", (0.0, 1.0, (2,))), ("as_tensor", ([1.0],)), ("asarray", ([1.0],))]


@pytest.mark.parametrize("name, args", NONE_DEVICE, ids=[name for name, _ in NONE_DEVICE])
def test_device_none_is_the_default_device_as_torchs(name, args):
    # torch's factories take device=None (what a model passes on as **factory_kwargs)
    ours, theirs = getattr(mg, name)(*args, device=None), getattr(torch, name)(*args, device=None)
    assert ours.device == mg.device("cpu") == mg.get_default_device() and \
        str(ours.device) == str(theirs.device)
    assert ours.shape == tuple(theirs.shape) and dtype_name(ours.dtype) == dtype_name(theirs.dtype)
    assert mg.zeros_like(ours, device=None).device == ours.device
    assert mg.tensor([1.0]).to(device=None).device == mg.device("cpu")


# ----- mg.cuda -----------------------------------------------------------------------------
def _gpus_seen():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:                                  # noqa: BLE001 (no CuPy, no driver)
        return 0


GPUS = _gpus_seen()


def test_cuda_is_available_and_device_count_match_cupy_and_torch_without_a_gpu():
    assert mg.cuda.is_available() is (GPUS > 0) and mg.cuda.device_count() == GPUS
    if GPUS == 0 and not torch.cuda.is_available():
        assert (mg.cuda.is_available(), mg.cuda.device_count()) == \
            (torch.cuda.is_available(), torch.cuda.device_count())
        # a training script's dtype choice: 'bfloat16' if available and supported
        assert mg.cuda.is_bf16_supported() is torch.cuda.is_bf16_supported() is False
        assert mg.cuda.is_bf16_supported(including_emulation=False) is False
    assert mg.cuda.is_bf16_supported() is (GPUS > 0)


def test_cuda_is_available_never_raises(monkeypatch):
    def broken():
        raise OSError("libcuda.so: cannot open shared object file")
    monkeypatch.setattr(backend, "_cupy_with_gpu", broken)
    assert mg.cuda.is_available() is False and mg.cuda.device_count() == 0
    with pytest.raises(mg.cuda.NoGPUError):            # no GPU to wait for, as torch's
        mg.cuda.synchronize()


def test_cuda_seeds_are_taken_and_leave_the_cpu_stream_alone():
    mg.manual_seed(3)
    torch.manual_seed(3)
    for seed in (0, 2**40, "5"):
        assert mg.cuda.manual_seed(seed) is torch.cuda.manual_seed(seed)
        assert mg.cuda.manual_seed_all(seed) is torch.cuda.manual_seed_all(seed)
    same_tensor(mg.rand(3), torch.rand(3))
    for bad in ("x", None, [1]):
        raises_like(partial(mg.cuda.manual_seed, bad), partial(torch.cuda.manual_seed, bad))


@pytest.mark.skipif(GPUS > 0, reason="the calls that need a GPU succeed on one")
def test_cuda_calls_that_need_a_gpu_raise_torchs_class_without_one():
    for name in ("current_device", "get_device_name", "synchronize"):
        with pytest.raises((AssertionError, RuntimeError)) as error:
            getattr(torch.cuda, name)()
        with pytest.raises(error.type, match="no GPU"):
            getattr(mg.cuda, name)()


@pytest.mark.skipif(GPUS > 0, reason="the calls that need a GPU succeed on one")
@pytest.mark.parametrize("call", [lambda lib: lib.ones(2).cuda(),
                                  lambda lib: lib.zeros(2, device="cuda"),
                                  lambda lib: lib.nn.Linear(2, 1).cuda(),
                                  lambda lib: lib.ones(2).to("cuda")])
def test_cuda_where_no_gpu_is_reached_is_torchs_assertion_error(call):
    # torch's CPU build: "Torch not compiled with CUDA enabled", an AssertionError
    with pytest.raises(AssertionError):
        call(torch)
    with pytest.raises(AssertionError, match="GPU|CuPy") as error:
        call(mg)
    assert isinstance(error.value, RuntimeError)       # the DeviceError it was before
