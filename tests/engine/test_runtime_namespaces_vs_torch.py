"""The runtime namespaces a script sets up first, against PyTorch's CPU build at test time:
``accelerator``, ``cuda`` (devices, streams, events, random states, legacy types), ``mps``,
``xpu``, ``backends.mps``, ``multiprocessing`` (``spawn``, queues, sharing strategies) and
the top-level names beside them (``newaxis``, ``is_same_size``, ``is_signed``,
``get_device``, ``get_device_module``, ``storage``, ``OutOfMemoryError``, the unsigned
dtypes). Each case runs the same call on both libraries: the same value, or an error of
torch's class (ours may be a subclass)."""

import multiprocessing as std_multiprocessing
import operator
import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

# torch here is a CPU build; the comparisons of "no device" answers need the same here
NO_GPU = not mg.cuda.is_available()
needs_no_gpu = pytest.mark.skipif(not NO_GPU, reason="CuPy sees a GPU: the device answers")


def outcome(call, lib):
    """("value", normalized result) or ("raises", exception class) of ``call(lib)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = call(lib)
    except Exception as error:      # noqa: BLE001 (the class is what is compared)
        return "raises", type(error)
    return "value", normalize(value)


def normalize(value):
    # what the two libraries' answers are compared as
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(normalize(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return set(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (mg.device, torch.device)):
        return ("device", str(value))
    if type(value).__name__ == "module":
        return ("module", value.__name__.rsplit(".", 1)[-1])
    if isinstance(value, (mg.Tensor, torch.Tensor)):
        return ("tensor", str(value.dtype).removeprefix("torch."), tuple(value.shape),
                value.detach().numpy().tolist())
    return ("object", type(value).__name__)


def same(call):
    theirs, ours = outcome(call, torch), outcome(call, mg)
    if theirs[0] == "raises":
        assert ours[0] == "raises", f"torch raises {theirs[1].__name__}, ours gives {ours}"
        assert issubclass(ours[1], theirs[1]), (ours[1].__mro__, theirs[1])
    else:
        assert ours == theirs


def enter(manager):
    with manager:
        return "entered"


ACCELERATOR = {
    "is_available": lambda lib: lib.accelerator.is_available(),
    "current_accelerator": lambda lib: lib.accelerator.current_accelerator(),
    "current_accelerator_checked": lambda lib: lib.accelerator.current_accelerator(True),
    "device_count": lambda lib: lib.accelerator.device_count(),
    "current_device_index": lambda lib: lib.accelerator.current_device_index(),
    "current_device_idx": lambda lib: lib.accelerator.current_device_idx(),
    "set_device_index": lambda lib: lib.accelerator.set_device_index(0),
    "synchronize": lambda lib: lib.accelerator.synchronize(),
    "current_stream": lambda lib: lib.accelerator.current_stream(),
    "memory_allocated": lambda lib: lib.accelerator.memory_allocated(),
    "max_memory_allocated": lambda lib: lib.accelerator.max_memory_allocated(),
    "reset_peak_memory_stats": lambda lib: lib.accelerator.reset_peak_memory_stats(),
    "empty_cache": lambda lib: lib.accelerator.empty_cache(),
    "get_memory_info": lambda lib: lib.accelerator.get_memory_info(),
    "device_index_none": lambda lib: enter(lib.accelerator.device_index(None)),
    "device_index_0": lambda lib: enter(lib.accelerator.device_index(0)),
}

MPS_XPU = {
    "backends.mps.is_available": lambda lib: lib.backends.mps.is_available(),
    "backends.mps.is_built": lambda lib: lib.backends.mps.is_built(),
    "mps.is_available": lambda lib: lib.mps.is_available(),
    "mps.device_count": lambda lib: lib.mps.device_count(),
    "mps.manual_seed": lambda lib: lib.mps.manual_seed(0),
    "mps.synchronize": lambda lib: lib.mps.synchronize(),
    "mps.empty_cache": lambda lib: lib.mps.empty_cache(),
    "mps.current_allocated_memory": lambda lib: lib.mps.current_allocated_memory(),
    "mps.driver_allocated_memory": lambda lib: lib.mps.driver_allocated_memory(),
    "mps.get_rng_state": lambda lib: lib.mps.get_rng_state(),
    "mps.seed": lambda lib: lib.mps.seed(),
    "xpu.is_available": lambda lib: lib.xpu.is_available(),
    "xpu.device_count": lambda lib: lib.xpu.device_count(),
    "xpu.is_initialized": lambda lib: lib.xpu.is_initialized(),
    "xpu.is_bf16_supported": lambda lib: lib.xpu.is_bf16_supported(),
    "xpu.manual_seed": lambda lib: lib.xpu.manual_seed(0),
    "xpu.manual_seed_all": lambda lib: lib.xpu.manual_seed_all(0),
    "xpu.seed": lambda lib: lib.xpu.seed(),
    "xpu.empty_cache": lambda lib: lib.xpu.empty_cache(),
    "xpu.memory_allocated": lambda lib: lib.xpu.memory_allocated(),
    "xpu.memory_reserved": lambda lib: lib.xpu.memory_reserved(),
    "xpu.max_memory_allocated": lambda lib: lib.xpu.max_memory_allocated(),
    "xpu.memory_stats": lambda lib: lib.xpu.memory_stats(),
    "xpu.synchronize": lambda lib: lib.xpu.synchronize(),
    "xpu.current_device": lambda lib: lib.xpu.current_device(),
    "xpu.get_device_name": lambda lib: lib.xpu.get_device_name(),
    "xpu.get_device_properties": lambda lib: lib.xpu.get_device_properties(),
    "xpu.get_rng_state": lambda lib: lib.xpu.get_rng_state(),
    "xpu.set_device": lambda lib: lib.xpu.set_device(0),
    "xpu.Event": lambda lib: lib.xpu.Event(),
    "xpu.Stream": lambda lib: lib.xpu.Stream(),
}

CUDA = {
    "get_device_capability": lambda lib: lib.cuda.get_device_capability(),
    "get_device_capability_0": lambda lib: lib.cuda.get_device_capability(0),
    "get_device_properties_0": lambda lib: lib.cuda.get_device_properties(0),
    "Event_timing": lambda lib: lib.cuda.Event(enable_timing=True),
    "Event": lambda lib: lib.cuda.Event(),
    "Stream": lambda lib: lib.cuda.Stream(),
    "current_stream": lambda lib: lib.cuda.current_stream(),
    "default_stream": lambda lib: lib.cuda.default_stream(),
    "stream_none": lambda lib: enter(lib.cuda.stream(None)),
    "synchronize": lambda lib: lib.cuda.synchronize(),
    "get_rng_state": lambda lib: lib.cuda.get_rng_state(),
    "get_rng_state_all": lambda lib: lib.cuda.get_rng_state_all(),
    "set_rng_state": lambda lib: lib.cuda.set_rng_state(lib.get_rng_state()),
    "set_rng_state_all": lambda lib: lib.cuda.set_rng_state_all([]),
    "seed": lambda lib: lib.cuda.seed(),
    "seed_all": lambda lib: lib.cuda.seed_all(),
    "initial_seed": lambda lib: lib.cuda.initial_seed(),
    "device_0": lambda lib: enter(lib.cuda.device(0)),
    "device_minus_1": lambda lib: enter(lib.cuda.device(-1)),
    "device_cpu": lambda lib: lib.cuda.device("cpu"),
    "device_of_cpu_tensor": lambda lib: enter(lib.cuda.device_of(lib.zeros(1))),
    "set_device_minus_1": lambda lib: lib.cuda.set_device(-1),
    "is_initialized": lambda lib: lib.cuda.is_initialized(),
    "init": lambda lib: lib.cuda.init(),
    "get_arch_list": lambda lib: lib.cuda.get_arch_list(),
    "memory_stats": lambda lib: lib.cuda.memory_stats(),
    "mem_get_info": lambda lib: lib.cuda.mem_get_info(),
    "ipc_collect": lambda lib: lib.cuda.ipc_collect(),
    "current_device": lambda lib: lib.cuda.current_device(),
    "FloatTensor_call": lambda lib: lib.cuda.FloatTensor(2),
    "LongTensor_call": lambda lib: lib.cuda.LongTensor([1]),
    "FloatTensor_isinstance": lambda lib: isinstance(lib.zeros(1), lib.cuda.FloatTensor),
    "LongTensor_isinstance": lambda lib: isinstance(lib.zeros(1, dtype=lib.long),
                                                    lib.cuda.LongTensor),
    "oom_is_torch_level": lambda lib: lib.cuda.OutOfMemoryError is lib.OutOfMemoryError,
    "oom_is_runtime_error": lambda lib: issubclass(lib.OutOfMemoryError, RuntimeError),
}


@needs_no_gpu
@pytest.mark.parametrize("name", sorted(ACCELERATOR))
def test_accelerator_answers_as_torchs(name):
    same(ACCELERATOR[name])


@needs_no_gpu
@pytest.mark.parametrize("name", sorted(MPS_XPU))
def test_mps_and_xpu_answer_as_torchs(name):
    same(MPS_XPU[name])


@needs_no_gpu
@pytest.mark.parametrize("name", sorted(CUDA))
def test_cuda_answers_as_torchs(name):
    same(CUDA[name])


def test_current_device_selection_idiom_gives_the_same_device():
    for lib in (torch, mg):
        device = (lib.accelerator.current_accelerator() if lib.accelerator.is_available()
                  else lib.device("cpu"))
        x = lib.ones(2, device=device)
        if NO_GPU:
            assert str(device) == "cpu" and x.device.type == "cpu"
    for lib in (torch, mg):            # the older spelling of the same choice
        backend = lib.backends.mps
        kind = "cuda" if lib.cuda.is_available() else "mps" if backend.is_available() else "cpu"
        assert lib.zeros(1, device=kind).device.type == kind


def test_oom_handler_catches_torchs_spellings():
    for lib in (torch, mg):
        for raised in (lib.OutOfMemoryError, lib.cuda.OutOfMemoryError):
            try:
                raise raised("out of memory")
            except lib.cuda.OutOfMemoryError as error:
                assert "out of memory" in str(error)
            with pytest.raises(RuntimeError):
                raise raised("out of memory")


@needs_no_gpu
def test_cuda_legacy_types_refuse_before_making_anything():
    for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
                 "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"):
        same(lambda lib, name=name: getattr(lib.cuda, name)(3))
        same(lambda lib, name=name: isinstance(lib.zeros(1), getattr(lib.cuda, name)))


@pytest.mark.parametrize("device", [None, "cpu", "cuda", "mps", "xpu", "cuda:0", "cpu:0",
                                    "meta", "hip", "foo", 3, "device"])
def test_get_device_module_as_torchs(device):
    if device is None and not NO_GPU:
        pytest.skip("CuPy sees a GPU: the current accelerator's module differs")
    same(lambda lib: lib.get_device_module(lib.device("cuda:1") if device == "device"
                                           else device))


# ----- the top-level names ------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.newaxis,
    lambda lib: lib.arange(3)[:, lib.newaxis].shape,
    lambda lib: lib.arange(6).reshape(2, 3)[lib.newaxis, ..., lib.newaxis].shape,
    lambda lib: lib.is_same_size(lib.zeros(2, 3), lib.ones(2, 3)),
    lambda lib: lib.is_same_size(lib.zeros(2, 3), lib.ones(3, 2)),
    lambda lib: lib.is_same_size(lib.zeros(()), lib.ones(())),
    lambda lib: lib.is_same_size(lib.zeros(0), lib.zeros(0, 1)),
    lambda lib: lib.is_same_size(lib.zeros(2), 2),
    lambda lib: lib.is_same_size([0, 0], lib.zeros(2)),
    lambda lib: lib.is_signed(3),
    lambda lib: lib.get_device(lib.zeros(2)),
    lambda lib: lib.get_device(lib.zeros(())),
    lambda lib: lib.get_device(3),
    lambda lib: lib.storage.UntypedStorage is lib.UntypedStorage,
    lambda lib: lib.storage.TypedStorage is lib.TypedStorage,
    lambda lib: isinstance(lib.zeros(2).untyped_storage(), lib.storage.UntypedStorage),
], ids=["newaxis", "newaxis_index", "newaxis_two", "same_size", "other_size", "same_0d",
        "empty", "not_tensor_other", "not_tensor_input", "signed_not_tensor", "get_device",
        "get_device_0d", "get_device_not_tensor", "untyped_storage", "typed_storage",
        "storage_isinstance"])
def test_top_level_names_as_torchs(call):
    same(call)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64",
                                   "int64", "int32", "int16", "int8", "uint8", "bool",
                                   "uint16", "uint32", "uint64"])
def test_is_signed_of_each_dtype(dtype):
    same(lambda lib: lib.is_signed(lib.zeros(2, dtype=getattr(lib, dtype))))


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_unsigned_dtypes_are_made_converted_and_bounded_as_torchs(dtype):
    same(lambda lib: lib.zeros(3, dtype=getattr(lib, dtype)))
    same(lambda lib: lib.tensor([0, 7, 300], dtype=getattr(lib, dtype)))
    same(lambda lib: lib.tensor([1, 2, 3]).to(getattr(lib, dtype)).to(lib.int64))
    same(lambda lib: lib.tensor([0.0, 2.5, 9.0]).to(getattr(lib, dtype)).to(lib.float32))
    same(lambda lib: (lib.iinfo(getattr(lib, dtype)).min, lib.iinfo(getattr(lib, dtype)).max,
                      lib.iinfo(getattr(lib, dtype)).bits))
    same(lambda lib: lib.tensor([1, 2], dtype=getattr(lib, dtype)).sum())
    same(lambda lib: lib.tensor([1, 2], dtype=getattr(lib, dtype)).element_size())


# ----- multiprocessing ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["Process", "Queue", "SimpleQueue", "Pool", "Event", "Lock",
                                  "Manager", "cpu_count", "current_process", "get_context",
                                  "get_start_method", "set_start_method",
                                  "get_all_start_methods", "active_children", "spawn",
                                  "start_processes", "ProcessContext",
                                  "ProcessRaisedException", "ProcessExitedException",
                                  "get_all_sharing_strategies", "get_sharing_strategy",
                                  "set_sharing_strategy"])
def test_multiprocessing_has_torchs_names(name):
    for lib in (torch, mg):
        assert hasattr(lib.multiprocessing, name), (lib.__name__, name)
        if name in std_multiprocessing.__all__ and not name.startswith("Process"):
            assert getattr(lib.multiprocessing, name) == getattr(std_multiprocessing, name)
    same(lambda lib: lib.multiprocessing.cpu_count())


def test_exception_classes_are_torchs():
    for name in ("ProcessRaisedException", "ProcessExitedException"):
        theirs = [c.__name__ for c in getattr(torch.multiprocessing, name).__mro__]
        ours = [c.__name__ for c in getattr(mg.multiprocessing, name).__mro__]
        assert ours == theirs


def test_sharing_strategies_as_torchs():
    same(lambda lib: lib.multiprocessing.get_all_sharing_strategies())
    same(lambda lib: lib.multiprocessing.get_sharing_strategy())
    same(lambda lib: lib.multiprocessing.set_sharing_strategy("shared_nothing"))
    same(lambda lib: lib.multiprocessing.set_sharing_strategy(None))
    for lib in (torch, mg):
        first = lib.multiprocessing.get_sharing_strategy()
        try:
            lib.multiprocessing.set_sharing_strategy("file_system")
            assert lib.multiprocessing.get_sharing_strategy() == "file_system"
        finally:
            lib.multiprocessing.set_sharing_strategy(first)
        assert lib.multiprocessing.get_sharing_strategy() == first


def test_a_tensor_arrives_through_a_queue_with_its_values():
    def round_trip(lib):
        queue = lib.multiprocessing.Queue()
        try:
            sent = lib.arange(6.0).reshape(2, 3) * 0.5
            queue.put(sent)
            got = queue.get(timeout=10)
            return got, got.dtype == sent.dtype, got.shape == sent.shape
        finally:
            queue.close()
            queue.join_thread()
    same(round_trip)
    same(lambda lib: round_trip(lib)[0].requires_grad)


def test_spawn_runs_fn_with_each_index_and_reports_a_child_error():
    got = {}
    # ours by spawn's defaults (start_method "spawn"); torch's forked: the same fn(i, *args)
    # per index, where a child of torch's spawn would spend seconds importing torch
    for lib, method in ((torch, "fork"), (mg, "spawn")):
        queue = std_multiprocessing.get_context(method).SimpleQueue()
        # fn(i, *args) in each child: the queue's put, so a child imports no test module
        start = lib.multiprocessing.spawn if method == "spawn" else \
            lib.multiprocessing.start_processes
        assert start(queue.put, args=(), nprocs=2, start_method=method) is None
        got[lib.__name__] = sorted(queue.get() for _ in range(2))
        queue.close()
    assert got["microgradnorm"] == got["torch"] == [0, 1]

    errors = {}
    for lib in (torch, mg):
        # 0 / 0 in the child: its ZeroDivisionError comes back with its traceback
        with pytest.raises(lib.multiprocessing.ProcessRaisedException) as error:
            lib.multiprocessing.start_processes(operator.truediv, args=(0,), nprocs=1,
                                                start_method="fork")
        errors[lib.__name__] = error.value
    for error in errors.values():
        assert "ZeroDivisionError" in str(error) and error.error_index == 0
        assert isinstance(error.error_pid, int)


def test_spawn_without_join_returns_a_context_to_join():
    for lib in (torch, mg):
        context = lib.multiprocessing.start_processes(np.sqrt, nprocs=1, join=False,
                                                      start_method="fork")
        assert type(context).__name__ == "ProcessContext"
        assert len(context.pids()) == 1
        while not context.join():
            pass
        assert context.join() is True
