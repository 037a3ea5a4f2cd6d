"""The CPU side of ``bench --device cuda``: shapes, bytes, the CUDA-event timer and the
command's errors, the kernel calls' wiring. The timings themselves need a GPU (docs/gpu.md)."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import backend, cli
from microgradnorm.cli import bench_cuda, bench_harness
from microgradnorm.kernels import reference
from microgradnorm.norms import NORMS


@pytest.mark.parametrize("dtype", bench_cuda.GPU_DTYPES)
@pytest.mark.parametrize("cols", bench_cuda.GPU_COLS)
def test_rows_make_x_at_least_256_mib_and_no_more_rows_than_needed(dtype, cols):
    rows = bench_cuda.rows_for(cols, dtype)
    size = bench_cuda.itemsize(dtype)
    assert rows * cols * size >= 256 * 2**20
    assert (rows - 1) * cols * size < 256 * 2**20


def test_gpu_shapes_follow_the_row_lengths():
    shapes = bench_cuda.gpu_shapes("bfloat16")
    assert [d for _, d in shapes] == list(bench_cuda.GPU_COLS)
    assert shapes[0] == (131072, 1024)                 # 256 MiB of 2-byte numbers


@pytest.mark.parametrize("dtype, size", [("float32", 4), ("float16", 2), ("bfloat16", 2)])
def test_minimal_bytes_forward_2_and_backward_3_arrays(dtype, size):
    for norm in bench_cuda.GPU_NORMS:
        m, d = 4096, 1024
        assert bench_cuda.phase_bytes(norm, (m, d), dtype, "forward") == 2 * m * d * size
        assert bench_cuda.phase_bytes(norm, (m, d), dtype, "backward") == 3 * m * d * size


class FakeEvent:
    clock = []

    def record(self):
        FakeEvent.clock.append(self)

    def synchronize(self):
        pass


class FakeCuda:
    Event = FakeEvent

    @staticmethod
    def get_elapsed_time(start, stop):            # milliseconds, as CuPy's
        assert FakeEvent.clock[-2:] == [start, stop]
        return 2.5


class FakeCupy:
    cuda = FakeCuda


def test_cuda_event_timer_reports_seconds_between_events_around_the_call():
    calls = []
    timer = bench_cuda.cuda_event_timer(FakeCupy)
    timing = bench_harness.time_call(lambda: calls.append(1), repeat=3, warmup=1, timer=timer)
    assert len(calls) == 4 and timing.samples == (0.0025,) * 3


def test_bench_cuda_without_a_gpu_is_a_clear_error(capsys):
    if backend.cuda_available():
        pytest.skip("a GPU is usable here")
    assert cli.main(["bench", "--device", "cuda", "--quick"]) == 2
    assert "needs CuPy and a GPU" in capsys.readouterr().err


def test_bfloat16_is_refused_on_the_cpu(capsys):
    assert cli.main(["bench", "--dtype", "bfloat16", "--quick"]) == 2
    assert "bfloat16" in capsys.readouterr().err


def test_validation_tolerances_cover_every_dtype():
    assert set(bench_cuda.VALIDATE_TOL) == set(bench_cuda.GPU_DTYPES)


@pytest.mark.parametrize("norm", bench_cuda.GPU_NORMS)
def test_kernel_calls_match_the_composite_graph(norm):
    # The table of kernel calls, run with the NumPy reference kernels, against the composite
    # graph: the arguments (eps, statistics, dy) reach the kernels in the right order.
    arrays = bench_cuda._inputs(norm, (5, 16), seed=3)
    forward, backward = bench_cuda.kernel_calls(norm, arrays, reference)
    tensors = {name: mg.tensor(a, requires_grad=True) for name, a in arrays.items()
               if name != "dy"}
    (y,) = NORMS[norm].run(tensors, "composite")
    grads = mg.grad([y], list(tensors.values()), [arrays["dy"]])
    assert not NORMS[norm].residual and not NORMS[norm].per_channel
    np.testing.assert_allclose(forward()[0], y.data, atol=1e-12)
    for got, want in zip(backward(), grads):                 # dx, dweight (, dbias)
        np.testing.assert_allclose(got, want, atol=1e-12)
