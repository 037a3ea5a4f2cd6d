"""The host's work of a fused norm on the CUDA path, counted without a GPU: CuPy is the
stand-in of tests/helpers/fake_cupy.py (arrays without values, launches recorded), and
``sys.setprofile`` counts the Python-level calls ('call' and 'c_call' events) of the whole
call: argument checks, the autograd node, the kernel module, the launch. A launch of a
16-bit D = 1024 norm at M = 32768 takes about 45-67 µs of GPU time (docs/gpu.md), so these
counts decide whether small-batch training is bound by the host."""

import fake_cupy
import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import backend
from microgradnorm.autograd import function, hooks, scopes
from microgradnorm.kernels import cuda, launch

D = 1024
# The most calls a call like one seen before may make (measured: LayerNorm 40 forward, one of
# them ``unrows``, which spares a 2-D input the view's bookkeeping, and 73 backward, RMSNorm
# 39 and 65; among them ``accumulate`` and the lock it holds, one ``_bump_version`` per
# leaf whose .grad takes the sum in place, NumPy's float-error state set and reset around
# the forward (2 calls), the backward loop and the accumulation into .grad (4 each, a
# context manager), and the record of the run multi-grad hooks read (4: runs.py); before
# launch plans 295-312 and 334-350).
MAX_FORWARD_CALLS = 40
MAX_BACKWARD_CALLS = 73


@pytest.fixture
def fake(monkeypatch):
    """The fake CuPy, with the loader's caches of kernels and modules of its own."""
    for cache in ("_modules", "_functions", "_sm_counts", "_occupancy"):
        monkeypatch.setattr(cuda, cache, {})
    # once any post-accumulate hook has been registered in the process (another test),
    # every backward() looks for them: these counts are those of a process without one
    monkeypatch.setattr(hooks, "_post_hooks", [])
    return fake_cupy.install(monkeypatch, backend)


def _leaf(shape, dtype):
    tensor = mg.Tensor._from_op(fake_cupy.ndarray(shape, dtype), None, 0)
    tensor.requires_grad = True
    return tensor


def _norm(norm, dtype):
    x, w, b = _leaf((8, 4096, D), dtype), _leaf((D,), dtype), _leaf((D,), dtype)
    if norm == "layer_norm":
        return (x, w, b), lambda: F.layer_norm(x, (D,), w, b)
    return (x, w), lambda: F.rms_norm(x, (D,), w)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_a_fused_norm_call_seen_before_costs_a_few_dozen_python_calls(fake, norm, dtype):
    leaves, forward = _norm(norm, dtype)
    y = forward()
    dy = fake_cupy.ndarray(y.shape, y.dtype)
    y.backward(dy)                                       # plans made, kernels "compiled"
    compiled, launched = len(fake.compiled), len(fake.launches)
    # a tape or observer left active by other code would add its calls to every op's
    assert not function._tapes and not scopes._observers, (function._tapes, scopes._observers)
    y, forward_calls = fake_cupy.count_calls(forward)
    _, backward_calls = fake_cupy.count_calls(y.backward, dy)
    assert forward_calls <= MAX_FORWARD_CALLS, forward_calls
    assert backward_calls <= MAX_BACKWARD_CALLS, backward_calls
    assert len(fake.compiled) == compiled                # nothing compiled again
    assert len(fake.launches) == 2 * launched            # and the same launches
    assert all(leaf.grad is not None for leaf in leaves)


@pytest.mark.parametrize("kernel", ["layer_norm", "rms_norm", "add_layer_norm",
                                    "add_rms_norm"])
def test_a_planned_call_launches_what_the_first_call_launched(fake, kernel):
    """The first call works the launch out (and keeps it); the second takes the kept plan:
    the same kernels, grids, blocks and arguments (other than the buffers' addresses)."""
    arrays = {name: fake_cupy.ndarray(shape, np.float16) for name, shape in
              (("x", (300, 1000)), ("r", (300, 1000)), ("w", (1000,)), ("b", (1000,)),
               ("dy", (300, 1000)), ("ds", (300, 1000)))}
    stat = fake_cupy.ndarray((300,), np.float32)
    calls = {
        "layer_norm": lambda a: (cuda.layer_norm_forward(a["x"], a["w"], a["b"], 1e-5),
                                 cuda.layer_norm_backward(a["dy"], a["x"], a["w"], stat,
                                                          stat)),
        "rms_norm": lambda a: (cuda.rms_norm_forward(a["x"], a["w"], 1e-6, 1.0, "gemma"),
                               cuda.rms_norm_backward(a["dy"], a["x"], a["w"], stat, 1.0,
                                                      "gemma")),
        "add_layer_norm": lambda a: (
            cuda.add_layer_norm_forward(a["x"], a["r"], a["w"], a["b"], 1e-5),
            cuda.add_layer_norm_backward(a["dy"], a["ds"], a["x"], a["w"], stat, stat)),
        "add_rms_norm": lambda a: (
            cuda.add_rms_norm_forward(a["x"], a["r"], a["w"], 1e-6),
            cuda.add_rms_norm_backward(a["dy"], a["ds"], a["x"], a["w"], stat)),
    }
    calls[kernel](arrays)
    first = list(fake.launches)
    plans = dict(cuda._plans)
    assert len(plans) == 2
    fake.launches.clear()
    calls[kernel](arrays)
    assert cuda._plans == plans

    def described(launch):
        name, grid, block, args = launch
        return name, grid, block, [type(a).__name__ if isinstance(a, fake_cupy.ndarray)
                                   else (type(a).__name__, a.item()) for a in args]
    assert [described(launch) for launch in fake.launches] == \
        [described(launch) for launch in first]


def test_a_kernel_is_compiled_alone_on_first_use_and_once(fake):
    """The loader compiles the one instantiation a call needs (seconds), not a module of
    every instantiation of its dtype (a minute), and compiles it once per device."""
    x = fake_cupy.ndarray((4, 1024), np.float16)
    cuda.rms_norm_forward(x, None, 1e-6)
    [module] = fake.compiled
    config = launch.forward_config(1024, 8)
    assert module.name_expressions == (launch.kernel_name(
        "norm_forward", "__half", 8, config.nv, launch.launch_bound(config)),)
    assert module.options == launch.compile_options(("float16",))
    cuda.rms_norm_forward(fake_cupy.ndarray((7, 1024), np.float16), None, 1e-6)  # new plan
    assert len(fake.compiled) == 1                       # the same kernel: no compile


def test_plans_are_kept_per_layout_and_a_misaligned_view_is_copied_first(fake):
    x = fake_cupy.ndarray((4, 1024), np.float32)
    cuda.rms_norm_forward(x, None, 1e-6)
    shifted = fake_cupy.ndarray((4, 1024), np.float32)
    shifted.data.ptr += 4                                # a view starting mid-vector
    cuda.rms_norm_forward(shifted, None, 1e-6)
    launched = fake.launches[-1][3][0]
    assert launched is not shifted and launched.data.ptr % launch.VECTOR_BYTES == 0
    assert len(cuda._plans) == 1                         # the copy's plan is the first's
