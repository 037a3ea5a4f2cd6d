"""The CPU side of the CUDA backend: launch configuration, the instantiation table, the
bfloat16 storage, the kernel dispatch and the device errors. None of it needs a GPU or CuPy;
the kernels themselves are tested in tests/kernels/gpu/ and compiled by test_cuda_compile.py.
"""

import inspect
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import microgradnorm as mg
from microgradnorm import backend, kernels
from microgradnorm.kernels import cuda, launch, reference

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU_TEST_COLS = (1, 3, 31, 32, 33, 127, 1000, 1024, 4096, 8191, 8192, 12288)
BENCH_COLS = (1024, 2048, 4096, 8192)


def fake_cupy_array(shape=(2, 3), dtype=np.float32):
    """An object that the backend takes for a CuPy array (its type's module is cupy's)."""
    fake_type = type("ndarray", (), {"__module__": "cupy._core.core", "shape": shape,
                                     "dtype": np.dtype(dtype), "ndim": len(shape)})
    return fake_type()


# ----- vector width ---------------------------------------------------------------------------
@pytest.mark.parametrize("itemsize, vec", [(4, 4), (2, 8)])
def test_vector_width_is_16_bytes_when_rows_and_pointers_allow(itemsize, vec):
    assert launch.vector_width(itemsize, 64 * vec, [0, 256, 4096]) == vec


@pytest.mark.parametrize("itemsize", [4, 2])
def test_vector_width_falls_back_to_scalar_only_for_a_misaligned_address(itemsize):
    vec = 16 // itemsize
    assert launch.vector_width(itemsize, 64 * vec + 1, [0]) == vec        # odd row length
    assert launch.vector_width(itemsize, vec + vec // 2, [0]) == vec      # rows start mid-pack
    assert launch.vector_width(itemsize, 64 * vec, [0, 256 + itemsize]) == 1   # a shifted view


@pytest.mark.parametrize("cols, vec, packs", [(8, 8, 1), (1, 8, 1), (9, 8, 2), (10, 8, 3),
                                              (1025, 4, 257), (4100, 8, 514)])
def test_rows_vec_does_not_divide_cover_one_pack_more(cols, vec, packs):
    """A row starting `head` elements into a pack covers ceil((head + cols) / vec) packs."""
    assert launch.row_packs(cols, vec) == packs
    assert packs == max(-(-(head + cols) // vec) for head in range(vec if cols % vec else 1))


@pytest.mark.parametrize("rows", [1, 7, 50, 10**6])
@pytest.mark.parametrize("cols, vec, rows_per_block", [(1025, 8, 1), (33, 8, 4), (4100, 8, 1),
                                                       (1025, 4, 1), (2048, 8, 1)])
def test_uniform_heads_give_every_row_of_a_group_the_same_head(rows, cols, vec, rows_per_block):
    config = launch.LaunchConfig(vec, 1, 32 if rows_per_block > 1 else 256,
                               32 * rows_per_block if rows_per_block > 1 else 256,
                               rows_per_block)
    for grid in (1, 3, 4, 132, 264):
        fixed = launch.uniform_heads(grid, rows, cols, config)
        groups = fixed * rows_per_block
        assert 1 <= fixed <= launch.forward_grid(rows, config)
        if groups < rows:                            # groups loop over rows
            assert groups * cols % vec == 0
            assert fixed <= max(grid, vec)


# ----- launch configuration -------------------------------------------------------------------
@given(cols=st.integers(1, 20000), vec=st.sampled_from([1, 4, 8]),
       target=st.sampled_from([launch.FORWARD_TARGET_THREADS, launch.BACKWARD_TARGET_THREADS]))
def test_launch_config_covers_each_row_once_with_an_instantiated_kernel(cols, vec, target):
    config = launch.launch_config(cols, vec, target)
    n_vec = launch.row_packs(cols, vec)          # one more where rows start inside a pack
    if config is None:
        assert n_vec > launch.MAX_THREADS * max(launch.nv_choices(vec))
        return
    # Thread `lane` of a group holds vectors lane + i·G for i < nv: all of them cover the row.
    assert config.nv * config.threads_per_row >= n_vec
    assert config.nv in launch.nv_choices(vec)
    assert config.threads_per_row % 32 == 0 and config.block % config.threads_per_row == 0
    assert config.block == config.threads_per_row * config.rows_per_block
    assert config.block <= launch.MAX_THREADS
    assert config.nv * config.vec <= launch.MAX_ELEMENTS_PER_THREAD
    if config.threads_per_row == 32:
        assert n_vec <= 32 * launch.WARP_MAX_NV and config.rows_per_block > 1
    else:
        assert n_vec > 32 * launch.WARP_MAX_NV and config.rows_per_block == 1
        # no whole warp idle: fewer threads would not hold the row
        assert (config.threads_per_row - 32) * config.nv < n_vec


@pytest.mark.parametrize("cols, vec, expected", [
    (1, 1, (1, 1, 32, 128, 4)),          # one element: a warp per row, 4 rows per block
    (33, 1, (2, 32, 128)),               # scalar, odd: 2 elements per lane
    (512, 4, (4, 32, 128)),              # the longest float32 row a warp takes
    (1024, 4, (1, 256, 256)),            # a block per row, 1 vector per thread
    (8192, 4, (8, 256, 256)),
    (12288, 4, (8, 384, 384)),
    (8192, 8, (4, 256, 256)),            # float16 / bfloat16
    (8191, 1, (16, 512, 512)),           # odd: scalar loads, the most a block holds
])
def test_launch_config_examples(cols, vec, expected):
    config = launch.launch_config(cols, vec, launch.FORWARD_TARGET_THREADS)
    if len(expected) == 5:
        assert tuple(config) == expected
    else:
        assert (config.nv, config.threads_per_row, config.block) == expected


@pytest.mark.parametrize("dtype", sorted(launch.CXX_TYPES))
@pytest.mark.parametrize("cols", GPU_TEST_COLS + BENCH_COLS)
def test_every_tested_and_benchmarked_row_length_runs_a_kernel(dtype, cols):
    """No row length of the GPU tests or benchmark falls back to the reference, and every
    kernel it needs is in the loader's name_expressions. (Misaligned views are copied to
    aligned buffers first, so the address is always aligned here.)"""
    names = set(launch.name_expressions())
    vec = launch.vector_width(launch.ITEMSIZE[dtype], cols, [256])
    for kernel, pick in (("norm_forward", launch.forward_config),
                         ("norm_backward", launch.backward_config)):
        config = pick(cols, vec)
        assert config is not None
        assert launch.kernel_name(kernel, launch.CXX_TYPES[dtype], config.vec, config.nv,
                                launch.launch_bound(config), None, cols % config.vec != 0) in names


def test_only_misaligned_views_are_realigned():
    assert launch.needs_realignment(4, 1024, 256 + 4)
    assert not launch.needs_realignment(4, 1024, 256)
    assert launch.needs_realignment(4, 1023, 256 + 4)          # vectors for uneven rows too
    assert launch.needs_realignment(2, 8, 2) and launch.needs_realignment(2, 12, 2)


@pytest.mark.parametrize("cols, vec, expected", [
    (8192, 4, (4, 512, 512)),            # backward: more threads, fewer registers each
    (8192, 8, (2, 512, 512)),
    (4096, 8, (1, 512, 512)),
    (1024, 8, (4, 32, 128)),             # 16-bit: a warp holding 32 (255 registers allowed)
    (1024, 4, (1, 256, 256)),
    (512, 4, (4, 32, 128)),              # a warp per row, 4 rows per block, 16 per thread
    (512, 8, (2, 32, 128)),
    (12288, 4, (8, 384, 384)),           # 16 per thread cannot hold it: 32, as forward
    (16384, 8, (4, 512, 512)),
])
def test_backward_launch_config_examples(cols, vec, expected):
    config = launch.backward_config(cols, vec)
    assert (config.nv, config.threads_per_row, config.block) == expected


@given(cols=st.integers(1, 16384), vec=st.sampled_from([1, 4, 8]))
def test_backward_blocks_hold_at_most_16_per_thread_where_512_threads_can(cols, vec):
    if cols % vec:
        return
    config = launch.backward_config(cols, vec)
    if config is None:
        return
    per_thread = config.nv * config.vec
    if config.rows_per_block > 1:                # the warp mapping folds through shared memory
        assert cols <= launch.FOLD_COLS and config == launch.forward_config(cols, vec)
        assert launch.launch_bound(config) == (256 if per_thread > 16 else 512)
        return
    fits = -(-cols // vec) <= 512 * max(launch.nv_choices(vec, 16))
    assert per_thread <= 16 if fits else per_thread > 16


def test_launch_bounds_admit_every_block_and_hold_small_blocks_to_no_512_budget():
    config = launch.LaunchConfig
    assert launch.launch_bound(config(4, 8, 256, 256, 1)) == 256     # 32 values: 255 registers
    assert launch.launch_bound(config(8, 4, 32, 128, 4)) == 256
    assert launch.launch_bound(config(4, 8, 384, 384, 1)) == 512     # more than 256 threads
    assert launch.launch_bound(config(4, 4, 32, 128, 4)) == 512      # 16 values fit in 128
    assert launch.launch_bound(config(1, 16, 512, 512, 1)) == 512
    for name in launch.name_expressions():
        if name.startswith("norm_"):
            assert int(name[:-1].split(",")[3]) in launch.LAUNCH_BOUNDS


def test_sum_partials_launches_reduce_to_one_chunk_in_a_fixed_tree():
    assert launch.sum_partials_launches(1, 1024) == [(8, 1, 2)]
    assert launch.sum_partials_launches(32, 1000) == [(8, 1, 2)]
    assert launch.sum_partials_launches(33, 129) == [(2, 2, 2), (2, 1, 2)]
    assert launch.sum_partials_launches(1056, 4096) == [(32, 33, 2), (32, 2, 2), (32, 1, 2)]
    assert launch.partial_stride(33) == 36 and launch.partial_stride(1024) == 1024


def test_too_long_rows_have_no_config():
    assert launch.launch_config(launch.MAX_THREADS * 16 + 1, 1) is None
    assert launch.launch_config(launch.MAX_THREADS * 32 + 4, 4) is None
    assert launch.launch_config(launch.MAX_THREADS * 32, 4) is not None


@pytest.mark.parametrize("rows", [1, 3, 4, 5, 4096, 10**6])
def test_grids(rows):
    warp = launch.launch_config(64, 4)
    block = launch.launch_config(4096, 4)
    assert launch.forward_grid(rows, warp) * warp.rows_per_block >= rows
    assert (launch.forward_grid(rows, warp) - 1) * warp.rows_per_block < rows
    assert launch.forward_grid(rows, block) == rows
    for config in (warp, block):
        for blocks_per_sm in (1, 2, 6):
            grid = launch.backward_grid(rows, config, sm_count=132, blocks_per_sm=blocks_per_sm)
            assert 1 <= grid <= blocks_per_sm * 132            # one wave
            assert grid <= launch.forward_grid(rows, config)    # no block without a row
            wanted = -(-launch.BACKWARD_RESIDENT_THREADS // config.block)   # 1024 threads an SM
            if rows >= 10**6:
                assert grid == min(blocks_per_sm, wanted) * 132
            wave = launch.forward_wave(rows, config, sm_count=132, blocks_per_sm=blocks_per_sm)
            assert wave == min(launch.forward_grid(rows, config), blocks_per_sm * 132)


def test_only_one_vector_a_thread_prefetches():
    """The kernels prefetch the next row where a thread holds one vector (norms.cu's
    NORM_PREFETCH_NV): those forwards get a one-wave grid."""
    with open(cuda.SOURCE, encoding="utf-8") as file:
        assert f"#define NORM_PREFETCH_NV {launch.PREFETCH_NV}\n" in file.read()
    assert launch.prefetches(launch.forward_config(2048, 8))          # 16-bit: 256 x 1
    assert not launch.prefetches(launch.forward_config(8192, 8))      # 256 x 4


def test_forward_grid_stays_within_cudas_limit_for_any_row_count():
    block = launch.launch_config(4096, 4)
    for rows in (2**31 - 1, 2**31, 2**31 + 5, 2**40):
        assert launch.forward_grid(rows, block) == min(rows, launch.MAX_GRID_BLOCKS)
    assert launch.MAX_GRID_BLOCKS == 2**31 - 1


def test_row_counts_travel_as_64_bit_integers():
    """rows >= 2^31 would wrap in a 32-bit int: the kernels take ``long long rows``."""
    with open(cuda.SOURCE, encoding="utf-8") as file:
        source = file.read()
    assert source.count("long long rows") == 2
    assert not re.search(r"\bint rows\b", source)


def test_constants_shared_with_the_source_match():
    with open(cuda.SOURCE, encoding="utf-8") as file:
        source = file.read()
    assert f"#define NORM_FOLD_COLS {launch.FOLD_COLS}" in source
    assert f"#define SUM_WARPS {launch.SUM_WARPS}" in source
    assert f"#define SUM_CHUNK {launch.SUM_CHUNK}" in source
    assert launch.SUM_COLS == 32 * 4                      # a warp of float4 loads
    bounds = "__launch_bounds__(MAX_BLOCK, MIN_BLOCKS(MAX_BLOCK, NV * VEC, UNEVEN))"
    assert source.count(bounds) == 2


def test_name_expressions_name_kernels_of_the_source():
    with open(cuda.SOURCE, encoding="utf-8") as file:
        source = file.read()
    names = launch.name_expressions()
    assert len(names) == len(set(names))
    for name in names:
        kernel = name.split("<")[0]
        assert re.search(rf"__global__ void[^;{{]*\b{kernel}\(", source), kernel
        cxx = re.search(r"<([^,>]+)", name).group(1)
        assert cxx in launch.CXX_TYPES.values()
    for cxx in launch.CXX_TYPES.values():
        assert f"sum_partials<{cxx}>" in names


@pytest.mark.parametrize("dtype, name", [(np.float32, "float32"), (np.float16, "float16"),
                                         ("bfloat16", "bfloat16"), (np.uint16, None),
                                         (np.float64, None), (np.int32, None)])
def test_storage_name(dtype, name):
    if dtype == "bfloat16" and not mg.dtypes.has_bfloat16():
        pytest.skip("needs ml_dtypes")
    assert launch.storage_name(mg.dtypes.as_dtype(dtype)) == name


# ----- bfloat16 storage -----------------------------------------------------------------------
# A bfloat16 array (CPU or CuPy) is rounded on the host by ml_dtypes, and its memory is what
# the kernels read as __nv_bfloat16: the rounding must be torch's (and __float2bfloat16_rn's).
needs_bfloat16 = pytest.mark.skipif(not mg.dtypes.has_bfloat16(), reason="needs ml_dtypes")


@needs_bfloat16
def test_bfloat16_rounds_like_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    values = np.concatenate([
        rng.standard_normal(1000).astype(np.float32) * 10.0 ** rng.integers(-40, 38, 1000),
        np.array([0.0, -0.0, 1.0, np.inf, -np.inf, 3.4e38, 1e-45, -1e-40], np.float32),
        # exact ties between two bfloat16 numbers: round to the even one
        (np.arange(1, 9, dtype=np.uint32) << 16 | 0x8000).view(np.float32),
    ]).astype(np.float32)
    ours = values.astype(mg.bfloat16)
    expected = torch.from_numpy(values).to(torch.bfloat16)
    np.testing.assert_array_equal(ours.view(np.uint16),
                                  expected.view(torch.int16).numpy().view(np.uint16))
    np.testing.assert_array_equal(ours.astype(np.float32), expected.float().numpy())


@needs_bfloat16
def test_bfloat16_keeps_nan_and_round_trips_exactly():
    stored = np.array([np.nan, -np.nan, 1.5, -2.75], np.float32).astype(mg.bfloat16)
    back = stored.astype(np.float32)
    assert np.isnan(back[:2]).all()
    np.testing.assert_array_equal(back[2:], [1.5, -2.75])
    np.testing.assert_array_equal(back[2:].astype(mg.bfloat16).view(np.uint16),
                                  stored[2:].view(np.uint16))


KERNEL_SUFFIXES = ("_forward", "_backward", "_statistics", "_stats")   # the kernel interface


# ----- dispatch -------------------------------------------------------------------------------
def test_for_array_picks_blocked_for_numpy_and_cuda_for_cupy():
    with kernels.cpu_kernels("numpy"):
        assert kernels.for_array(np.zeros(3)) is kernels.blocked
        assert kernels.for_array(fake_cupy_array()) is cuda


def test_cuda_has_every_reference_function_with_its_signature():
    public = [name for name, value in vars(reference).items()
              if inspect.isfunction(value) and name.endswith(KERNEL_SUFFIXES)]
    assert "layer_norm_backward" in public and "batch_norm_forward" in public
    for name in public:
        ours = list(inspect.signature(getattr(cuda, name)).parameters.values())
        theirs = list(inspect.signature(getattr(reference, name)).parameters.values())
        assert ours[:len(theirs)] == theirs, name
        assert len(ours) == len(theirs), name


def test_importing_the_package_and_the_cuda_kernels_imports_no_cupy():
    code = ("import sys, microgradnorm, microgradnorm.functional, microgradnorm.kernels.cuda;"
            "assert not any(m == 'cupy' or m.startswith('cupy.') for m in sys.modules)")
    env = dict(os.environ, PYTHONPATH=REPO)
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# ----- devices --------------------------------------------------------------------------------
def test_mixing_devices_in_one_op_is_a_value_error():
    on_gpu = mg.Tensor._from_op(fake_cupy_array((2, 3)), None, 0)
    assert on_gpu.device == "cuda"
    with pytest.raises(ValueError, match="one device"):
        mg.tensor(np.ones((2, 3), np.float32)) + on_gpu


def test_bad_device_name_is_a_value_error():
    with pytest.raises(ValueError, match="device"):
        mg.tensor([1.0], device="gpu")
    with pytest.raises(ValueError, match="device"):
        mg.tensor([1.0]).to("cuda:0")


def test_cuda_without_a_usable_gpu_is_a_clear_runtime_error():
    if backend.cuda_available():
        pytest.skip("a GPU is usable here")
    with pytest.raises(RuntimeError, match="CuPy") as error:
        mg.tensor([1.0], device="cuda")
    assert "pip install" in str(error.value) or "GPU" in str(error.value)
    x = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="CuPy"):
        x.to("cuda")
    with pytest.raises(RuntimeError, match="CuPy"):
        cuda._cupy()
    assert x.grad is None and x.device == "cpu"


def test_every_kernel_belongs_to_exactly_one_module():
    groups = launch.MODULE_DTYPES
    assert sorted(d for group in groups for d in group) == sorted(launch.KINDS)
    assert set(launch.CXX_TYPES) < set(launch.KINDS)
    for group in groups:
        for name in launch.name_expressions(group):
            assert launch.module_dtypes(name) == group, name
    assert sorted(n for g in groups for n in launch.name_expressions(g)) == sorted(
        launch.name_expressions())
    assert launch.compile_options(("bfloat16",)) == (launch.BFLOAT16_OPTION,)
    assert launch.compile_options(("float32", "float16")) == ()
    assert launch.compile_options(("bfloat16/float32",)) == (launch.BFLOAT16_OPTION,)
    assert launch.compile_options(("float16/float32",)) == ()


@needs_bfloat16
def test_kernels_take_one_floating_dtype_and_refuse_uint16_bits():
    x = np.zeros((2, 8), mg.bfloat16)
    assert cuda._kernels_take(x, np.ones(8, mg.bfloat16), None)
    assert not cuda._kernels_take(x, np.ones(8, np.float32))   # mixed: the reference
    assert not cuda._kernels_take(np.zeros((2, 8)), None)      # float64: the reference
    with pytest.raises(TypeError, match=r"got uint16 .*view\(ml_dtypes.bfloat16\)"):
        cuda._kernels_take(x.view(np.uint16), None)
    with pytest.raises(TypeError, match="got int32"):
        cuda._kernels_take(np.zeros((2, 8), np.float32), np.ones(8, np.int32))


@needs_bfloat16
def test_cupy_carries_ml_dtypes_bfloat16_with_loops_for_the_engines_ufuncs():
    """What a bfloat16 Tensor on "cuda" relies on, checked on the host (no GPU needed): CuPy
    takes ml_dtypes' bfloat16 as a dtype and has bfloat16 loops ('E') for the elementwise
    ops and the sums of the engine. ``erf`` has none (float16 would even widen to float64),
    so ``backend.erf`` computes both in float32 and rounds once."""
    cupy = pytest.importorskip("cupy")
    bf16 = mg.bfloat16
    assert cupy.dtype(bf16) == bf16 and cupy.dtype(bf16).itemsize == 2
    for name in ("add", "subtract", "multiply", "true_divide", "negative", "power", "exp",
                 "log", "sqrt", "tanh", "maximum", "greater", "absolute"):
        signatures = [t for t in getattr(cupy, name).types if isinstance(t, str)]
        assert any(t.startswith("E") for t in signatures), name
    from cupy._core import _routines_math        # private: the sum's loop table
    sum_loops = getattr(_routines_math, "_sumprod_types", None)
    assert sum_loops is None or any("bfloat16" in str(op) for op in sum_loops)
    from cupyx.scipy.special import erf
    assert not any("E" in t for t in erf.types if isinstance(t, str))


class _RecordingCupy:
    """Stands in for CuPy where only the calls matter: what reaches the device, in which
    dtype."""

    def __init__(self):
        self.calls = []

    def asarray(self, array):
        self.calls.append(("asarray", array))
        return array

    def array(self, data, dtype=None, copy=True):
        self.calls.append(("array", data, dtype))
        return data


@needs_bfloat16
def test_bfloat16_data_for_cuda_is_rounded_on_the_host_then_copied(monkeypatch):
    """mg.tensor(..., dtype="bfloat16", device="cuda") rounds with ml_dtypes on the host and
    copies those bits: the same bits as a CPU tensor of the same numbers."""
    fake = _RecordingCupy()
    monkeypatch.setattr(backend, "_cupy_with_gpu", lambda: fake)
    values = [[1.0 + 2.0**-8, -3.14159, 1e30], [0.1, 65504.0, -0.0]]   # a tie, pi, ...
    backend.new_array(values, mg.bfloat16, "cuda")
    [(call, uploaded)] = fake.calls
    assert call == "asarray" and uploaded.dtype == mg.bfloat16
    np.testing.assert_array_equal(uploaded.view(np.uint16),
                                  np.array(values).astype(mg.bfloat16).view(np.uint16))


def test_a_numpy_array_for_cuda_is_uploaded_without_a_host_copy(monkeypatch):
    """The upload (cupy.asarray of host memory) is the copy the new tensor owns: a NumPy
    array already in the asked dtype goes to it as it is, not copied on the host first."""
    fake = _RecordingCupy()
    monkeypatch.setattr(backend, "_cupy_with_gpu", lambda: fake)
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    backend.new_array(data, None, "cuda")
    backend.new_array(data, np.float32, "cuda")
    assert [(call, uploaded is data) for call, uploaded in fake.calls] == \
        [("asarray", True), ("asarray", True)]


def test_erf_of_half_precision_on_cuda_computes_in_float32(monkeypatch):
    """cupyx's erf has no float16/bfloat16 loop (float16 would come back float64):
    backend.erf hands it float32 and rounds the result to the input dtype."""
    seen = []

    def fake_erf(array):
        seen.append(array.dtype)
        return np.vectorize(math.erf, otypes=[array.dtype])(array)

    import types
    special = types.SimpleNamespace(erf=fake_erf)
    monkeypatch.setitem(sys.modules, "cupyx.scipy.special", special)
    monkeypatch.setattr(backend, "is_cupy_array", lambda array: True)
    halves = [np.float16] + ([mg.bfloat16] if mg.dtypes.has_bfloat16() else [])
    for dtype in halves + [np.float32]:
        x = np.linspace(-2, 2, 9).astype(dtype)
        y = backend.erf(x)
        assert y.dtype == dtype
        np.testing.assert_array_equal(
            y, np.array([math.erf(v) for v in x.astype(np.float32)], np.float32).astype(dtype))
    assert seen == [np.float32] * len(halves) + [np.float32]


# ----- RMSNorm conventions: the instantiation table and the host's share of the arithmetic ----
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_kernels_are_instantiated_again_with_a_float32_weight(dtype):
    """Every (vec, nv, bound) of a 16-bit dtype also exists with W = float, in a module of
    its own (a program without mixed weights never compiles it), with the float32
    sum_partials it needs: any row length that runs the kernels runs them for a float32
    weight too."""
    cxx = launch.CXX_TYPES[dtype]
    own = [n for n in launch.name_expressions((dtype,)) if n.startswith("norm_")]
    mixed = launch.name_expressions((f"{dtype}/float32",))
    with_float = [n.replace(f", {cxx}, true>", ", float, true>") if n.endswith("true>")
                  else n[:-1] + ", float>" for n in own]
    assert own and mixed == with_float + [f"sum_partials<float, {cxx}>"]
    for name in mixed:
        assert launch.module_dtypes(name) == (f"{dtype}/float32",)
    assert not [n for n in launch.name_expressions(("float32",)) if "__" in n]


def test_kernel_name_spells_the_weight_type_only_when_it_differs():
    assert launch.kernel_name("norm_forward", "__half", 8, 4, 256) == \
        "norm_forward<__half, 8, 4, 256>"
    assert launch.kernel_name("norm_forward", "__half", 8, 4, 256, "__half") == \
        "norm_forward<__half, 8, 4, 256>"
    assert launch.kernel_name("norm_backward", "__half", 8, 4, 256, "float") == \
        "norm_backward<__half, 8, 4, 256, float>"
    assert launch.sum_partials_name("float", "float") == "sum_partials<float>"


@pytest.mark.parametrize("casting", ["llama", "gemma", "none"])
@pytest.mark.parametrize("x_dtype, weight_dtype", [
    (np.float16, np.float16), (np.float16, np.float32), (np.float32, np.float32)])
def test_host_side_dtypes_follow_conventions(casting, x_dtype, weight_dtype):
    """What the launcher decides (y's dtype, w''s dtype, the offset it passes) is what
    the reference does, on NumPy."""
    x = np.ones((2, 4), x_dtype)
    weight = np.full(4, 0.1, weight_dtype)
    y, _ = reference.rms_norm_forward(x, weight, 1e-6, offset=1.0, casting=casting)
    assert cuda.output_dtype(x.dtype, weight.dtype, casting) == y.dtype
    compute = reference.effective_weight(weight, 1.0, x.dtype, casting).dtype
    assert cuda.weight_compute_dtype(x.dtype, weight.dtype, casting) == compute
    offset = cuda._kernel_offset(x.dtype, weight.dtype, 0.1, casting)
    assert offset.dtype == np.float32 and offset == np.float32(np.asarray(0.1, compute))


@needs_bfloat16
def test_offset_is_rounded_to_bfloat16_when_w_prime_is_bfloat16():
    bf16 = mg.bfloat16
    assert cuda._kernel_offset(bf16, bf16, 0.1, "none") == np.float32(0.10009765625)
    assert cuda._kernel_offset(bf16, np.float32, 0.1, "gemma") == np.float32(0.1)
    assert cuda._kernel_offset(bf16, bf16, 1.0, "llama") == np.float32(1.0)
    assert cuda._kernel_offset(bf16, None, 1.0, "llama") == np.float32(0.0)   # no weight


@needs_bfloat16
def test_rms_plan_takes_a_float32_weight_beside_16_bit_x():
    x, w32 = np.zeros((2, 8), mg.bfloat16), np.ones(8, np.float32)
    assert cuda._rms_plan(x, w32, "gemma")
    assert cuda._rms_plan(x, w32, "llama", dy=np.zeros((2, 8), np.float32))
    assert cuda._rms_plan(x, w32, "none", dy=x)
    assert not cuda._rms_plan(x, w32, "llama", dy=x)       # llama's y, so dy, is float32
    assert not cuda._rms_plan(x, np.ones(8, np.float16), "gemma")      # the reference's
    with pytest.raises(TypeError, match="got uint16"):
        cuda._rms_plan(x.view(np.uint16), w32, "gemma")
    half = np.zeros((2, 8), np.float16)
    assert not cuda._rms_plan(half, np.ones(8, np.float64), "gemma")   # the reference's
    assert not cuda._rms_plan(np.zeros((2, 8), np.float32), np.ones(8, np.float16), "llama")
    assert not cuda._rms_plan(half, w32, "llama", dy=half)
