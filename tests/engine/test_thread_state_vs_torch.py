"""Which global state is kept per thread and which per process, measured under PyTorch and
this library at test time, never assumed: the main thread holds one value, a
``threading.Thread`` reads the state when it starts, holds a value of its own while the main
thread reads, and the main thread reads once more after the thread has ended. Both libraries
must give the same six readings. This package's own switches (``norm_impl``, ``cpu_kernels``)
have no torch counterpart: their documented choice is tested at the end."""

import contextlib
import threading

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def _probe(read, main_hold, thread_hold):
    """(main before, main holding, thread at start, thread holding, main while the thread
    holds, main after the thread ended): what ``read()`` gives at each point."""
    readings, lock_held, main_read = {}, threading.Event(), threading.Event()

    def worker():
        try:
            readings["thread start"] = read()
            with thread_hold():
                readings["thread holding"] = read()
                lock_held.set()
                main_read.wait(10)
        except BaseException as error:          # reported in the main thread
            readings["thread error"] = repr(error)
        finally:
            lock_held.set()

    readings["main before"] = read()
    with main_hold():
        readings["main holding"] = read()
        thread = threading.Thread(target=worker)
        thread.start()
        lock_held.wait(10)
        readings["main while thread holds"] = read()
        main_read.set()
        thread.join(10)
        readings["main after thread"] = read()
    return readings


@contextlib.contextmanager
def _setting(get, set_, value):
    """Hold ``value`` by calling the setter; restore the old one on leaving."""
    old = get()
    set_(value)
    try:
        yield
    finally:
        set_(old)


@contextlib.contextmanager
def _set_only(set_, value):
    """Set ``value`` and leave it: what the thread does, so that the main thread's reading
    after the thread ended shows whether the thread's setting outlived it."""
    set_(value)
    yield


def _setter_case(get, set_, main_value, thread_value):
    """The state read by ``get``, held by calling ``set_`` in both threads; the value found
    first reads as "first" (a random seed differs between the libraries)."""
    first = get()

    def read():
        value = get()
        return "first" if value == first else value
    return (read, lambda: _setting(get, set_, main_value), lambda: _set_only(set_, thread_value))


def _hook_read(lib, tags):
    """Which saved-tensor pack hook runs for an op in this thread (its tag, or None)."""
    def read():
        tags.clear()
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        (x * x).sum()                   # saves x: the innermost pack hook in force sees it
        return tags[-1] if tags else None
    return read


def _hooks(lib, tags, tag):
    def pack(tensor):
        tags.append(tag)
        return tensor
    return lambda: lib.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor)


def _hooks_allowed(lib):
    """Whether this thread may install saved-tensor hooks (not inside a disable block)."""
    def read():
        try:
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                return True
        except RuntimeError:
            return False
    return read


def _dual_allowed(lib):
    """Whether ``make_dual`` works here: a forward-AD level is open for this thread."""
    def read():
        try:
            lib.autograd.forward_ad.make_dual(lib.ones(2, dtype=lib.float64),
                                              lib.ones(2, dtype=lib.float64))
            return True
        except RuntimeError:
            return False
    return read


def _mutation_allowed(lib):
    """Whether a saved tensor may be written before backward (inside
    ``allow_mutation_on_saved_tensors``)."""
    def read():
        a = lib.ones(2, dtype=lib.float64, requires_grad=True).clone()
        b = a * a
        with lib.no_grad():
            a.add_(1)
        try:
            b.sum().backward()
            return True
        except RuntimeError:
            return False
    return read


def _dtype_name(get):
    return lambda: str(get()).replace("torch.", "")


def _cases(lib):
    """Each state: (read, main's hold, the thread's hold), ``lib`` torch or microgradnorm."""
    is_mg = lib is mg
    tags = []
    nothing = contextlib.nullcontext
    autograd = lib.autograd
    cases = {
        "set_grad_enabled": _setter_case(lib.is_grad_enabled, lib.set_grad_enabled, False, True),
        "no_grad": (lib.is_grad_enabled, lib.no_grad, lib.enable_grad),
        "inference_mode": (lib.is_inference_mode_enabled, lib.inference_mode,
                           lambda: lib.inference_mode(False)),
        "set_detect_anomaly": _setter_case(lib.is_anomaly_enabled, lib.set_anomaly_enabled,
                                           True, False),
        "detect_anomaly": (lib.is_anomaly_enabled, autograd.detect_anomaly, nothing),
        "anomaly check_nan": _setter_case(
            lib.is_anomaly_check_nan_enabled,
            lambda flag: lib.set_anomaly_enabled(lib.is_anomaly_enabled(), flag), False, True),
        "saved_tensors_hooks": (_hook_read(lib, tags), _hooks(lib, tags, "main"),
                                _hooks(lib, tags, "thread")),
        "disable_saved_tensors_hooks, main": (
            _hooks_allowed(lib), lambda: autograd.graph.disable_saved_tensors_hooks("no"),
            nothing),
        "disable_saved_tensors_hooks, thread": (
            _hooks_allowed(lib), nothing,
            lambda: autograd.graph.disable_saved_tensors_hooks("no")),
        "dual_level, main": (_dual_allowed(lib), autograd.forward_ad.dual_level, nothing),
        "dual_level, thread": (_dual_allowed(lib), nothing, autograd.forward_ad.dual_level),
        "allow_mutation_on_saved_tensors, main": (
            _mutation_allowed(lib), autograd.graph.allow_mutation_on_saved_tensors, nothing),
        "allow_mutation_on_saved_tensors, thread": (
            _mutation_allowed(lib), nothing, autograd.graph.allow_mutation_on_saved_tensors),
        "set_multithreading_enabled": _setter_case(
            autograd.is_multithreading_enabled, autograd.set_multithreading_enabled,
            False, True),
        "set_default_dtype": _setter_case(_dtype_name(lib.get_default_dtype),
                                          lambda name: lib.set_default_dtype(
                                              getattr(lib, name)), "float64", "float16"),
        # "cpu" set as None: torch's set_default_device("cpu") leaves a TorchFunctionMode
        # pushed, which other tests of the process would then see (has_torch_function)
        "set_default_device": _setter_case(
            lambda: str(lib.get_default_device()),
            lambda device: lib.set_default_device(None if device == "cpu" else device),
            "meta", "cpu"),
        "manual_seed": _setter_case(lib.initial_seed, lib.manual_seed, 11, 12),
        "set_printoptions": _setter_case(
            lambda: (mg.printing.get_printoptions() if is_mg
                     else torch._tensor_str.PRINT_OPTS.__dict__)["precision"],
            lambda digits: lib.set_printoptions(precision=digits), 2, 6),
        "use_deterministic_algorithms": _setter_case(
            lib.are_deterministic_algorithms_enabled, lib.use_deterministic_algorithms,
            True, False),
        "set_deterministic_debug_mode": _setter_case(
            lib.get_deterministic_debug_mode, lib.set_deterministic_debug_mode, 1, 2),
        "set_float32_matmul_precision": _setter_case(
            lib.get_float32_matmul_precision, lib.set_float32_matmul_precision,
            "medium", "high"),
        "set_warn_always": _setter_case(lib.is_warn_always_enabled, lib.set_warn_always,
                                        True, False),
        "backends.cuda.matmul.allow_tf32": _setter_case(
            lambda: lib.backends.cuda.matmul.allow_tf32,
            lambda flag: setattr(lib.backends.cuda.matmul, "allow_tf32", flag), True, False),
        "backends.cudnn.benchmark": _setter_case(
            lambda: lib.backends.cudnn.benchmark, _cudnn_setter(lib, is_mg), True, False),
        "backends.cuda.enable_flash_sdp": _setter_case(
            lib.backends.cuda.flash_sdp_enabled, lib.backends.cuda.enable_flash_sdp,
            False, True),
        "autocast": (lambda: lib.is_autocast_enabled("cpu"),
                     lambda: lib.autocast("cpu", dtype=lib.bfloat16),
                     lambda: lib.autocast("cpu", enabled=False)),
    }
    return cases


def _cudnn_setter(lib, is_mg):
    # torch refuses a plain assignment once its test utilities ran disable_global_flags()
    # (another test of the session may have imported them): its own escape hatch then
    def set_flag(flag):
        if is_mg:
            lib.backends.cudnn.benchmark = flag
            return
        with getattr(torch.backends, "__allow_nonbracketed_mutation")():
            torch.backends.cudnn.benchmark = flag
    return set_flag


@pytest.mark.parametrize("name", sorted(_cases(mg)))
def test_thread_state_as_torch(name):
    """The six readings of each state agree: kept per thread where torch keeps it so, shared
    across threads where torch shares it, and a new thread starting from the same value."""
    expected = _probe(*_cases(torch)[name])
    got = _probe(*_cases(mg)[name])
    assert "thread error" not in expected, expected
    assert got == expected


def test_num_threads_start_as_torch_and_shared_by_blas():
    """A new thread reads the count the main thread set, under both libraries. Torch's count
    is OpenMP's, kept per thread (the main thread keeps its count while a thread sets
    another); here it is the BLAS's one count for the process (docs/pytorch.md), so the main
    thread reads the thread's."""
    first = mg.get_num_threads()
    main_count, thread_count = [n for n in (1, 2, 3) if n != torch.get_num_threads()]
    expected = _probe(*_setter_case(torch.get_num_threads, torch.set_num_threads,
                                    main_count, thread_count))
    got = _probe(*_setter_case(mg.get_num_threads, mg.set_num_threads, main_count,
                               thread_count))
    mg.set_num_threads(first)
    assert got["thread start"] == expected["thread start"] == main_count
    assert expected["main while thread holds"] == main_count      # torch: the thread's own
    assert got["main while thread holds"] == got["main after thread"] == thread_count


def test_flush_denormal_is_torch_per_thread_and_not_done_here():
    """Torch flushes denormals in the thread that asks (the CPU's per-thread control
    register, copied into the threads it starts); NumPy cannot, so ``set_flush_denormal``
    answers False here and a denormal product stays denormal in every thread."""
    def flushed(lib):
        return lambda: (lib.tensor([1e-310], dtype=lib.float64) * 1.0).item() == 0
    if not torch.set_flush_denormal(False):
        pytest.skip("torch cannot flush denormals on this CPU")
    readings = _probe(*_setter_case(flushed(torch), torch.set_flush_denormal, True, False))
    assert readings["main holding"] is True and readings["thread holding"] == "first"
    assert readings["main while thread holds"] is True      # per thread
    assert mg.set_flush_denormal(True) is False
    assert _probe(*_setter_case(flushed(mg), mg.set_flush_denormal, True, False)) == {
        key: "first" for key in readings}


def test_norm_impl_is_per_thread():
    """``mg.norm_impl`` (no torch counterpart) is this package's choice, documented: per
    thread as grad mode, a new thread starting from "fused" whatever its starter holds."""
    readings = _probe(mg.get_norm_impl, lambda: mg.norm_impl("composite"),
                      lambda: mg.norm_impl("fused"))
    assert readings == {"main before": "fused", "main holding": "composite",
                        "thread start": "fused", "thread holding": "fused",
                        "main while thread holds": "composite",
                        "main after thread": "composite"}
    x = mg.tensor(np.ones((2, 4)), requires_grad=True)
    with mg.norm_impl("composite"):
        seen = []
        thread = threading.Thread(target=lambda: seen.append(
            mg.functional.layer_norm(x, (4,)).grad_fn.name()))
        thread.start()
        thread.join()
        here = mg.functional.layer_norm(x, (4,)).grad_fn.name()
    assert (seen[0], here) == ("LayerNormBackward0", "DivBackward0")   # fused there, graph here


def test_cpu_kernels_are_per_process():
    """``mg.cpu_kernels`` / ``set_cpu_kernels`` (no torch counterpart): the process's choice,
    documented, so a thread sees the block its starter holds and the main thread the
    thread's choice."""
    choices = [name for name in ("numpy", "reference") if name != mg.get_cpu_kernels()]
    readings = _probe(mg.get_cpu_kernels, lambda: mg.cpu_kernels(choices[0]),
                      lambda: mg.cpu_kernels("reference" if choices[0] == "numpy" else "numpy"))
    assert readings["thread start"] == readings["main holding"] == choices[0]
    assert readings["main while thread holds"] == readings["thread holding"] != choices[0]
    assert readings["main after thread"] == choices[0]       # the thread's block restored
