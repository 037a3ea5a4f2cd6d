"""The CUDA kernels of norms.cu, run on the CPU: no GPU needed.

``tests/cuda_emulation/`` holds a host emulation of the few CUDA features the kernels use
(block and thread indices, ``__syncthreads``, ``__shfl_xor_sync``, ``__half`` and
``__nv_bfloat16``): g++ compiles norms.cu unchanged against it, every instantiation of
``kernels.cuda.name_expressions()``, into a small library. ``kernels.cuda`` then runs its
real launch path (launch configuration, realignment, partial buffers, ``sum_partials``)
with CuPy replaced by NumPy arrays and each launch handed to the library, and the results
go through the same checks as the GPU tests (tests/kernel_checks.py).

What this shows: the kernels compute the right numbers for these shapes (indexing, the
reductions, the dweight/dbias partial sums, the dtypes). What it cannot: speed, and what
only hardware shows (misaligned vector loads faulting, races between warps, register
limits). Skips without g++ (C++20) or ucontext.
"""

import ctypes
import os
import shutil
import subprocess
import sys

import kernel_checks
import numpy as np
import pytest
from kernel_checks import DTYPES, EPS, KERNELS, check_kernel, draw, run_backward, run_forward

from microgradnorm.kernels import cuda

EMULATION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda_emulation")


# ----- NumPy dressed as the part of CuPy that kernels.cuda uses -------------------------------
class _Memory:
    def __init__(self, ptr):
        self.ptr = ptr


class _Device:
    id = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class EmulatedArray(np.ndarray):
    """A NumPy array with CuPy's ``.data.ptr``, ``.device`` and ``.get()``."""

    @property
    def data(self):
        return _Memory(self.ctypes.data)

    @property
    def device(self):
        return _Device()

    def get(self):
        return np.array(self.view(np.ndarray))


def _dressed(value):
    if isinstance(value, np.ndarray) and not isinstance(value, EmulatedArray):
        return value.view(EmulatedArray)
    return value


class EmulatedCupy:
    """``cp.empty``, ``cp.full``, ... are NumPy's, returning ``EmulatedArray``s."""

    ndarray = EmulatedArray

    def __getattr__(self, name):
        function = getattr(np, name)
        return lambda *args, **kwargs: _dressed(function(*args, **kwargs))

    @staticmethod
    def asnumpy(array):
        return np.array(np.asarray(array).view(np.ndarray))


# ----- the emulated kernels -------------------------------------------------------------------
def _build(directory):
    if sys.platform != "linux" or shutil.which("g++") is None:
        pytest.skip("the CUDA emulation needs g++ and ucontext (Linux)")
    names = cuda.name_expressions()
    lines = [f"#define {cuda.BFLOAT16_OPTION[2:]}", '#include "cuda_fp16.h"',
             '#include "cuda_bf16.h"', f'#include "{cuda.SOURCE}"',
             '#include "launchers.h"', "static const Entry entries[] = {"]
    lines += [f'    {{"{name}", &run_{name}}},' for name in names]
    lines += ["};",
              'extern "C" int emu_run(const char* name, unsigned grid, unsigned block, '
              "void** args) {",
              "    for (const auto& e : entries) {",
              "        if (std::string(e.name) == name) { e.launcher(grid, block, args); "
              "return 0; }",
              "    }",
              "    return 1;",
              "}"]
    unit = os.path.join(directory, "emulated_kernels.cpp")
    with open(unit, "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")
    library = os.path.join(directory, "libemulated_kernels.so")
    result = subprocess.run(["g++", "-O1", "-std=c++20", "-shared", "-fPIC",
                             "-Wno-unknown-pragmas", f"-I{EMULATION}", "-o", library, unit],
                            capture_output=True, text=True, timeout=300)
    if result.returncode != 0 and "c++20" in result.stderr:
        pytest.skip(f"g++ without C++20: {result.stderr[:200]}")
    assert result.returncode == 0, result.stderr
    return ctypes.CDLL(library)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    return _build(str(tmp_path_factory.mktemp("cuda_emulation")))


def _argument(value):
    if isinstance(value, np.ndarray):
        return ctypes.c_void_p(value.ctypes.data)
    if isinstance(value, np.uint64):
        return ctypes.c_void_p(int(value) or None)             # the null pointer
    if isinstance(value, np.int32):
        return ctypes.c_int(int(value))
    if isinstance(value, np.float32):
        return ctypes.c_float(float(value))
    raise TypeError(f"unexpected kernel argument {type(value).__name__}")


@pytest.fixture
def emulated(library, monkeypatch):
    """kernels.cuda with its launches run by the emulation; returns the launch log."""
    launches = []

    def function(cp, name):
        def launch(grid, block, args):
            values = [_argument(a) for a in args]
            pointers = (ctypes.c_void_p * len(values))(
                *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])
            launches.append((name, grid[0], block[0]))
            assert library.emu_run(name.encode(), grid[0], block[0], pointers) == 0, name
        return launch

    fake = EmulatedCupy()
    monkeypatch.setattr(kernel_checks, "cp", fake)     # restored after the test
    monkeypatch.setattr(cuda, "_cupy", lambda: fake)
    monkeypatch.setattr(cuda, "_function", function)
    monkeypatch.setattr(cuda, "_sm_count", lambda cp: 2)   # few backward blocks: many rows each
    kernel_checks.poison(monkeypatch)
    return launches


# ----- the checks ---------------------------------------------------------------------------
COLS = [1, 33, 1024, pytest.param(8191, marks=pytest.mark.slow)]


@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_emulated_kernel_matches_float64_reference(emulated, kernel, dtype, cols):
    check_kernel(kernel, dtype, cols, rows=7)
    names = [name for name, _, _ in emulated]
    assert any(n.startswith("norm_forward<") for n in names)
    assert any(n.startswith("norm_backward<") for n in names)


@pytest.mark.parametrize("dtype", DTYPES)
def test_emulated_many_rows_per_group_and_partial_sums(emulated, dtype):
    """96 rows over the few backward groups of a 2-SM device: each group sums many rows."""
    check_kernel("add_layer_norm", dtype, 127, rows=96)
    backward = [(grid, block) for name, grid, block in emulated
                if name.startswith("norm_backward<")]
    assert backward and backward[0][0] <= cuda.BACKWARD_BLOCKS_PER_SM * 2


def test_emulated_backward_is_deterministic(emulated):
    data = draw("layer_norm", 40, 96, "float32", seed=3)
    saved = run_forward("layer_norm", data, EPS["layer_norm"])
    first, second = (run_backward("layer_norm", data, saved) for _ in range(2))
    for name, value in first.items():
        np.testing.assert_array_equal(np.asarray(value), np.asarray(second[name]))


def test_emulated_misaligned_view_gives_the_same_bits(emulated):
    fake = kernel_checks.cp
    data = draw("rms_norm", 8, 64, "float16", seed=4)
    x, weight = data["x"][0], data["weight"][0]
    shifted = fake.empty(x.size + 1, x.dtype)[1:].reshape(x.shape)   # starts mid-vector
    shifted[...] = x
    y, rstd = cuda.rms_norm_forward(x, weight, 1e-6)
    y_shifted, rstd_shifted = cuda.rms_norm_forward(shifted, weight, 1e-6)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(y_shifted))
    np.testing.assert_array_equal(np.asarray(rstd), np.asarray(rstd_shifted))


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_benchmark_validation_passes_and_catches_a_wrong_kernel(emulated, monkeypatch, norm,
                                                                dtype):
    from microgradnorm import backend
    from microgradnorm.cli import bench_cuda
    monkeypatch.setattr(backend, "_cupy_with_gpu", lambda: kernel_checks.cp)
    assert bench_cuda.validate(norm, 96, dtype, rows=16) <= 1
    wrong = "layer_norm_forward" if norm == "layernorm" else "rms_norm_forward"
    right = getattr(cuda, wrong)

    def off_by_a_bit(*args):                        # y scaled by 1.1: a wrong kernel
        y, *rest = right(*args)
        scaled = kernel_checks.from_device(y) * 1.1
        return (kernel_checks.to_device_storage(scaled, dtype)[0], *rest)

    monkeypatch.setattr(cuda, wrong, off_by_a_bit)
    with pytest.raises(bench_cuda.ValidationError, match="y differs"):
        bench_cuda.validate(norm, 96, dtype, rows=16)


# ----- casting modes and offset on the CUDA path ----------------------------------------------
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("casting", ["llama", "gemma", "none"])
def test_emulated_casting_modes_and_offset_match_the_reference(emulated, casting, residual):
    """kernels.conventions composes the CUDA kernels with casts exactly as the reference:
    float16 input, Gemma's offset 1, each casting mode, with and without the residual."""
    from microgradnorm.kernels import conventions, reference
    fake = kernel_checks.cp
    rng = np.random.default_rng(5)
    host = {"x": (0.5 + rng.standard_normal((12, 96))).astype(np.float16),
            "r": rng.standard_normal((12, 96)).astype(np.float16) if residual else None,
            "w": (0.3 * rng.standard_normal(96)).astype(np.float16),
            "dy": rng.standard_normal((12, 96)).astype(np.float16),
            "ds": rng.standard_normal((12, 96)).astype(np.float16) if residual else None}
    dev = {k: None if v is None else fake.asarray(v) for k, v in host.items()}
    results = []
    for kernels, a in ((cuda, dev), (reference, host)):
        y, s, rstd = conventions.rms_norm_forward(kernels, a["x"], a["r"], a["w"], 1e-6, 1.0,
                                                  casting)
        rows = a["x"] if s is None else s
        dx, dw = conventions.rms_norm_backward(kernels, a["dy"], a["ds"], rows, a["w"], rstd,
                                               1.0, casting)
        results.append([np.asarray(v, np.float64) for v in (y, rstd, dx, dw)])
    if residual:
        np.testing.assert_array_equal(np.asarray(s), host["x"] + host["r"])
    (y, rstd, dx, dw), (y_ref, rstd_ref, dx_ref, dw_ref) = results
    assert np.asarray(y).dtype == np.float64 and np.isfinite(y).all()
    np.testing.assert_allclose(rstd, rstd_ref, rtol=1e-6)
    ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(y_ref), 2.0 ** -14))) - 10)
    assert (np.abs(y - y_ref) / ulp).max() <= (2 if casting == "none" else 1)
    np.testing.assert_allclose(dx, dx_ref, atol=4e-3 * np.abs(dx_ref).max())
    np.testing.assert_allclose(dw, dw_ref, atol=4e-3 * np.abs(dw_ref).max())
    assert any(name.startswith("norm_forward<") for name, _, _ in emulated) or \
        casting == "gemma"
