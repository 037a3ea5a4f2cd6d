"""``bench --device cuda``: the CUDA kernels against the GPU's own copy bandwidth, our
composite graph and PyTorch, after each kernel has been checked against the reference.

It extends the harness (``bench_harness``: ``time_call``, ``copy_bandwidth``, ``BenchRow``,
``format_table``) with what a GPU needs:

  * ``cuda_event_timer``: one call timed by two CUDA events on the stream, so the time is
    the GPU's, not the host's; ``cuda_synchronize`` for the wall-clock timer.
  * ``validate``: before a kernel is timed, its forward and backward on a sample of the
    same row length and dtype are compared with the float64 reference; a mismatch stops
    the run.
  * the cases of the GPU table: LayerNorm and RMSNorm for D in 1024, 2048, 4096, 8192, with
    M rows so that x holds at least 256 MiB (``gpu_shapes``), in float32, float16 and
    bfloat16, forward and backward timed separately (backward alone, through a retained
    graph). Implementations: ``kernel`` (the kernels called directly), ``fused`` and
    ``composite`` (microgradnorm tensors on the GPU, the whole graph machinery included),
    ``torch`` (``F.layer_norm`` / ``F.rms_norm`` on CUDA, when PyTorch sees a GPU).
  * ``host_overhead``: the host-side microseconds of one fused call.

GB/s counts the minimal bytes (forward reads x and writes y: 2·M·D·itemsize; backward
reads x and dy and writes dx: 3·M·D·itemsize); ``% copy`` divides by the device-to-device
copy bandwidth measured in the same run. bfloat16 is ml_dtypes' dtype on CuPy arrays and
tensors alike (docs/gpu.md), so every implementation has bfloat16 rows.
"""

import numpy as np

from .. import backend, dtypes
from ..autograd import grad
from ..kernels import cuda as cuda_kernels
from ..kernels import defines, reference
from ..norms import NORMS, lookup
from ..tensor import Tensor
from .bench_harness import (BenchRow, copy_bandwidth, fill_ratios, format_table,
                            machine_description, minimal_bytes, progress_printer, time_call)

GPU_COLS = (1024, 2048, 4096, 8192)
GPU_DTYPES = ("float32", "float16", "bfloat16")
GPU_IMPLS = ("kernel", "fused", "composite", "torch")
GPU_PHASES = ("forward", "backward")
MIN_INPUT_BYTES = 256 * 2**20          # x at least this large: far beyond any cache
QUICK_INPUT_BYTES = 16 * 2**20
# validate(): |kernel - reference| <= tol·(|reference| + rms(reference)), per storage dtype
VALIDATE_TOL = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 4e-2}


# ----- shapes and bytes (no GPU needed) -----------------------------------------------------
def itemsize(dtype):
    """Bytes per element of ``dtype`` (a name): bfloat16 is 2, with or without ml_dtypes."""
    return 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize


def rows_for(cols, dtype, min_bytes=MIN_INPUT_BYTES):
    """The fewest rows M such that an (M, cols) array of ``dtype`` holds ``min_bytes``."""
    return -(-min_bytes // (cols * itemsize(dtype)))


def gpu_shapes(dtype, cols=GPU_COLS, min_bytes=MIN_INPUT_BYTES):
    return [(rows_for(d, dtype, min_bytes), d) for d in cols]


def phase_bytes(norm, shape, dtype, phase):
    """Minimal bytes of ``phase`` ("forward", "backward"), as ``minimal_bytes``."""
    return minimal_bytes(norm, shape, np.uint8, phase) * itemsize(dtype)   # bytes x elements


# ----- timing on the GPU --------------------------------------------------------------------
def cuda_event_timer(cp):
    """``timer(fn) -> seconds`` between two CUDA events recorded around ``fn()``."""
    def timer(fn):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop) / 1e3
    return timer


def cuda_synchronize(cp):
    return cp.cuda.get_current_stream().synchronize


# ----- inputs in a storage dtype ------------------------------------------------------------
def _to_gpu(cp, array64, dtype):
    """Rounded once on the host (ml_dtypes for bfloat16), then copied: the bits the CPU
    tensors would hold."""
    return cp.asarray(array64.astype(dtypes.as_dtype(dtype)))


def _to_float64(cp, array):
    return cp.asnumpy(array).astype(np.float64)


def _inputs(norm, shape, seed=0):
    """float64 x, weight (and bias) and an upstream gradient dy, as NumPy arrays."""
    arrays = lookup(norm).make_inputs(shape, "float64", seed=seed)
    arrays["dy"] = np.random.default_rng(seed + 1).standard_normal(shape)
    return arrays


# ----- the kernels, called directly ---------------------------------------------------------
# The norms the GPU table times: those whose spec says how to call its kernels
# (``Norm.kernel_calls``) and whose kernels ``kernels.cuda`` defines (not the reference's).
GPU_NORMS = tuple(name for name, norm in NORMS.items()
                  if norm.kernel_calls is not None and defines(cuda_kernels, norm.kernels))


def kernel_calls(norm, arrays, kernels=None):
    """(forward, backward) closures calling ``kernels`` (default ``kernels.cuda``) on
    ``arrays`` (x, weight, bias, dy) with the norm's default options; backward uses the
    statistics of one forward run here (``Norm.kernel_calls``)."""
    norm = lookup(norm, "kernel_calls: norm", among=GPU_NORMS)
    return norm.kernel_calls(cuda_kernels if kernels is None else kernels, arrays,
                             **norm.defaults)


class ValidationError(AssertionError):
    """A kernel disagrees with the float64 reference: its timings would mean nothing."""


def validate(norm, cols, dtype, rows=2048, seed=0):
    """Run the kernels (forward, then backward) on a (rows, cols) sample in ``dtype`` and
    compare every output with the float64 reference on the same rounded inputs. Returns
    the worst error relative to the tolerance (<= 1 passes); raises ``ValidationError``."""
    cp = backend._cupy_with_gpu()
    arrays = _inputs(norm, (rows, cols), seed)
    dev = {name: _to_gpu(cp, a, dtype) for name, a in arrays.items()}
    host = {name: _to_float64(cp, a) for name, a in dev.items()}   # the rounded inputs
    got = [out for call in kernel_calls(norm, dev) for out in call()]
    expected = [out for call in kernel_calls(norm, host, reference) for out in call()]
    names = lookup(norm).kernel_outputs
    worst = 0.0
    for name, value, want in zip(names, got, expected):
        value = _to_float64(cp, value)
        scale = np.sqrt(np.mean(want ** 2))
        ratio = np.max(np.abs(value - want) / (VALIDATE_TOL[dtype] * (np.abs(want) + scale)))
        if not np.isfinite(ratio) or ratio > 1:
            raise ValidationError(f"{norm} D={cols} {dtype}: {name} differs from the float64 "
                                  f"reference by {ratio:.3g}x the tolerance")
        worst = max(worst, float(ratio))
    return worst


# ----- the graph implementations and PyTorch ------------------------------------------------
def engine_calls(norm, impl, arrays, dtype):
    """(forward, backward) of microgradnorm's ``impl`` on GPU tensors; backward runs
    ``mg.grad`` through one retained graph, so only backward is timed."""
    tensors = {name: Tensor(a, requires_grad=True, dtype=dtype, device="cuda")
               for name, a in arrays.items() if name != "dy"}
    dy = backend.to_device(arrays["dy"].astype(dtypes.as_dtype(dtype)), "cuda")
    inputs = list(tensors.values())

    def forward():
        return lookup(norm).run(tensors, impl)

    outputs = forward()
    return forward, lambda: grad(outputs, inputs, [dy], retain_graph=True)


def torch_cuda_available():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def torch_calls(norm, arrays, dtype):
    """(forward, backward) of PyTorch's own norm (``Norm.run_torch``) on CUDA."""
    import torch
    import torch.nn.functional as TF

    tensors = {name: torch.tensor(a, device="cuda").to(getattr(torch, dtype))
               for name, a in arrays.items()}
    dy = tensors.pop("dy")
    for t in tensors.values():
        t.requires_grad_(True)

    def forward():
        return lookup(norm).run_torch(TF, tensors)

    out = forward()
    inputs = list(tensors.values())
    return forward, lambda: torch.autograd.grad(out, inputs, [dy], retain_graph=True)


# ----- the table ----------------------------------------------------------------------------
def run_gpu_bench(norms=GPU_NORMS, cols=GPU_COLS, dtypes=GPU_DTYPES, impls=GPU_IMPLS,
                  min_bytes=MIN_INPUT_BYTES, shapes=None, repeat=10, warmup=2,
                  copy_gbps=None, progress=None):
    """Validate every kernel, then time every (norm, shape, dtype, impl, phase) with CUDA
    events; returns ``BenchRow``s (device "cuda") with ratios to composite and PyTorch.

    Args:
        shapes: explicit (M, D) shapes instead of ``gpu_shapes(dtype, cols, min_bytes)``.
        norms: of ``GPU_NORMS`` (or their aliases). Others as in ``bench.run_norm_bench``.
    """
    cp = backend._cupy_with_gpu()
    timer = cuda_event_timer(cp)
    impls = [i for i in impls if i != "torch" or torch_cuda_available()]
    rows = []
    for norm in (lookup(name, "run_gpu_bench: norm", GPU_NORMS).name for name in norms):
        for dtype in dtypes:
            for shape in shapes or gpu_shapes(dtype, cols, min_bytes):
                if progress is not None:
                    progress(f"validating {norm} D={shape[1]} {dtype}")
                validate(norm, shape[1], dtype)
                arrays = _inputs(norm, shape)
                for impl in impls:
                    if progress is not None:
                        progress(f"{norm} {shape} {dtype} {impl}")
                    calls = _calls(cp, norm, impl, arrays, dtype)
                    for phase, fn in zip(GPU_PHASES, calls):
                        timing = time_call(fn, repeat, warmup, timer=timer)
                        rows.append(BenchRow("cuda", norm, tuple(shape), dtype, impl, phase,
                                             timing, phase_bytes(norm, shape, dtype, phase),
                                             copy_gbps))
                    del calls
                    cp.get_default_memory_pool().free_all_blocks()
    return fill_ratios(rows)


def _calls(cp, norm, impl, arrays, dtype):
    if impl == "kernel":
        dev = {name: _to_gpu(cp, a, dtype) for name, a in arrays.items()}
        return kernel_calls(norm, dev)
    if impl == "torch":
        return torch_calls(norm, arrays, dtype)
    return engine_calls(norm, impl, arrays, dtype)


def device_copy_bandwidth(nbytes=MIN_INPUT_BYTES, repeat=10):
    """GB/s of a device-to-device copy of ``nbytes`` (read + write), timed by CUDA events:
    ``copy_bandwidth`` with CuPy as the array module."""
    cp = backend._cupy_with_gpu()
    return copy_bandwidth(cp, nbytes=nbytes, repeat=repeat, warmup=2,
                          timer=cuda_event_timer(cp))


def host_overhead(norm="layer_norm", shape=(8, 1024), dtype="float32", calls=2000):
    """Host-side microseconds per fused forward call: ``calls`` calls in a row on a tiny
    input (the GPU finishes each faster than the host issues the next), synchronized once
    at the end. Returns {"kernel": µs, "fused": µs}: the kernel functions alone, and
    ``F.layer_norm`` / ``F.rms_norm`` on GPU tensors (graph recording included)."""
    cp = backend._cupy_with_gpu()
    arrays = _inputs(norm, shape)
    dev = {name: _to_gpu(cp, a, dtype) for name, a in arrays.items()}
    results = {}
    for impl, fn in (("kernel", kernel_calls(norm, dev)[0]),
                     ("fused", engine_calls(norm, "fused", arrays, dtype)[0])):
        timing = time_call(lambda fn=fn: [fn() for _ in range(calls)], repeat=5, warmup=1,
                           synchronize=cuda_synchronize(cp))
        results[impl] = timing.median / calls * 1e6
    return results


def device_description():
    cp = backend._cupy_with_gpu()
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return (f"{name}, {props['multiProcessorCount']} SMs, CuPy {cp.__version__}, "
            f"CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}")


# ----- the command ------------------------------------------------------------------------
def run(args):
    """``bench --device cuda``: validate each CUDA kernel against the float64 reference,
    then time kernel, fused, composite and PyTorch with CUDA events (docs/gpu.md)."""
    if not backend.cuda_available():
        raise ValueError("--device cuda needs CuPy and a GPU (pip install -e \".[gpu]\")")
    norms = args.norm or GPU_NORMS
    unknown = sorted(set(norms) - set(GPU_NORMS))
    if unknown:
        raise ValueError(f"--device cuda times {GPU_NORMS}, got {unknown}")
    dtypes = args.dtype or GPU_DTYPES
    if "float64" in dtypes:
        raise ValueError("--device cuda times float32, float16 and bfloat16 (the kernels' "
                         "dtypes), not float64")
    if args.shape and any(len(shape) != 2 for shape in args.shape):
        raise ValueError(f"--shape takes 2-D shapes M,D, got {args.shape}")
    repeat = args.repeat or (3 if args.quick else 10)
    min_bytes = QUICK_INPUT_BYTES if args.quick else MIN_INPUT_BYTES
    cols = (1024, 4096) if args.quick else GPU_COLS
    print("microgradnorm bench --device cuda: kernel vs fused vs composite vs PyTorch, "
          "medians of CUDA-event times")
    for line in machine_description("cuda"):
        print(f"  {line}")
    print(f"  gpu: {device_description()}")
    copy_gbps = device_copy_bandwidth(nbytes=min_bytes, repeat=repeat)
    print(f"  device-to-device copy: {copy_gbps:.1f} GB/s (read + write)")
    overhead = host_overhead()
    print(f"  host time per fused forward call, (8, 1024) float32: kernel functions "
          f"{overhead['kernel']:.1f} us, F.layer_norm on GPU tensors {overhead['fused']:.1f} us")
    rows = run_gpu_bench(norms, cols, dtypes, min_bytes=min_bytes, shapes=args.shape,
                         repeat=repeat, copy_gbps=copy_gbps, progress=progress_printer(args))
    print("  every kernel matched the float64 reference before it was timed")
    print()
    print(format_table(rows))
