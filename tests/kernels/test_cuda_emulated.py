"""The CUDA kernels of norms.cu, run on the CPU: no GPU needed.

``tests/kernels/cuda_emulation/`` holds a host emulation of the few CUDA features the kernels use
(block and thread indices, ``__syncthreads``, ``__shfl_xor_sync``, ``__half`` and
``__nv_bfloat16``): g++ compiles norms.cu unchanged against it, every instantiation of
``kernels.cuda.name_expressions()``, into a small library (``emulation.build``).
``kernels.cuda`` then runs its real launch path (launch configuration, realignment, partial
buffers, ``sum_partials``) with CuPy replaced by NumPy arrays and each launch handed to the
library, and the results go through the same checks as the GPU tests
(tests/helpers/kernel_checks.py).

What this shows: the kernels compute the right numbers for these shapes (indexing, the
reductions, the dweight/dbias partial sums, the dtypes), and every launch passes the
emulation's own checks (barriers every thread reaches, whole-warp shuffles, aligned vector
types, inputs unchanged). What it cannot: speed and register limits; out-of-bounds reads and
races are test_cuda_sanitizers.py's. Skips without g++ (C++20) or ucontext, except in CI
(``CI=true``), where .ci/run installs them: there it fails.
"""

import os
import sys

import kernel_checks
import numpy as np
import pytest
from kernel_checks import DTYPES, EPS, KERNELS, check_kernel, draw, run_backward, run_forward

from microgradnorm.kernels import cuda, launch, reference

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda_emulation"))
import emulation  # noqa: E402  (lives beside the emulation's headers)


@pytest.fixture
def emulated(plain_emulation, monkeypatch):
    """kernels.cuda with its launches run by the emulation (the plain build, conftest.py);
    returns the launch log."""
    return emulation.install(plain_emulation, monkeypatch.setattr)


# ----- the checks ---------------------------------------------------------------------------
# The GPU tests' row lengths; the longest are slow here (a fiber per thread).
COLS = [1, 3, 31, 32, 33, 127, 1000, 1024, 1025] + [
    pytest.param(cols, marks=pytest.mark.slow) for cols in (4096, 4100, 8191, 8192, 12288)]


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
    assert backward and backward[0][0] <= 2 * 2           # blocks per SM x SMs


@pytest.mark.parametrize("dtype", DTYPES)
def test_emulated_warp_rows_fold_within_the_block(emulated, dtype):
    """Rows of 512 elements: a warp per row, 4 rows per block, the warps' dweight/dbias sums
    folded through shared memory into one partial row per block."""
    check_kernel("layer_norm", dtype, 512, rows=40)
    backward = [(grid, block) for name, grid, block in emulated
                if name.startswith("norm_backward<")]
    assert backward == [(4, 128)]                        # 2 SMs x 2 blocks, 4 warps each


def test_emulated_second_stage_reduces_many_partial_rows_in_a_tree(emulated, monkeypatch):
    """80 blocks' partial rows (40 SMs here): three chunks of 32, then one, two launches."""
    monkeypatch.setattr(cuda, "_sm_count", lambda cp: 40)
    check_kernel("add_layer_norm", "float32", 160, rows=400)
    stages = [grid for name, grid, _ in emulated if name.startswith("sum_partials<")]
    assert stages == [(2, 3, 2), (2, 1, 2)]


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


def _ordered(bits):
    """bfloat16 bits (uint16) -> integers in the order of the values: neighbours differ by 1,
    and -0 and +0 are both 0."""
    bits = bits.astype(np.int32)
    return np.where(bits < 0x8000, bits, 0x8000 - bits)


@pytest.mark.skipif("bfloat16" not in DTYPES, reason="bfloat16 needs ml_dtypes")
@pytest.mark.parametrize("kernel", KERNELS)
def test_emulated_bfloat16_arrays_come_back_bfloat16_with_the_reference_bits(emulated, kernel):
    """A bfloat16 array goes into the kernel entry as it is (its memory is the
    __nv_bfloat16 bits) and y, s, dx, dweight, dbias come back as bfloat16 arrays. The
    kernels and the CPU reference both compute in float32 and round at the same steps
    (once; RMSNorm's default "llama" rounds x̂, then y), so y and s are the reference's
    bits, but where the two float32 results (summed in different orders) fall on either
    side of a rounding boundary: one unit apart. The gradients' float32 sums
    cancel (dx = rstd·(g - mean(g) - x̂·mean(g·x̂))) and the residual forms add ds in
    another order, so they agree to a few units of the row's scale instead (the
    float64 checks above bound each against the truth)."""
    bf16 = kernel_checks.dtypes.bfloat16
    data = draw(kernel, 24, 96, "bfloat16", seed=8)
    saved = run_forward(kernel, data, EPS[kernel])
    got = {**saved, **run_backward(kernel, data, saved)}
    host = {name: np.asarray(pair[0]).view(np.ndarray) for name, pair in data.items()}
    assert all(a.dtype == bf16 for a in host.values())
    expected = _reference_forward(kernel, host)
    expected.update(_reference_backward(kernel, host, {n: np.asarray(expected[n]) for n in
                                                       ("s", "mean", "rstd") if n in expected}))
    for name in ("y", "s", "dx", "dweight", "dbias"):
        if expected.get(name) is None:
            assert got.get(name) is None, name
            continue
        value = np.asarray(got[name]).view(np.ndarray)
        assert value.dtype == bf16 and expected[name].dtype == bf16, name
        if name in ("y", "s"):
            apart = np.abs(_ordered(value.view(np.uint16))
                           - _ordered(expected[name].view(np.uint16)))
            assert apart.max() <= 1, f"{name}: {apart.max()} units of bfloat16 apart"
            assert np.mean(apart == 0) >= 0.95, f"{name}: {np.mean(apart != 0):.1%} differ"
        else:
            want = expected[name].astype(np.float64)
            scale = np.sqrt(np.mean(want ** 2, axis=-1, keepdims=True))
            units = np.abs(value.astype(np.float64) - want) / (2.0 ** -8 * scale)
            assert units.max() <= 8, f"{name}: {units.max():.2f} units of the row's scale"


def test_emulated_kernels_flush_float32_denormals_as_the_gpu_build_does(emulated):
    kernel_checks.check_denormals_flushed()


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


# ----- the kernel API refuses what the kernels would read out of bounds -----------------------
def _arguments(kernel, rows=6, cols=64, dtype="float32"):
    """(function name, {argument: device array}) for ``kernel``'s forward and backward."""
    data = draw(kernel, rows, cols, dtype, seed=5)
    dev = {name: pair[0] for name, pair in data.items()}
    saved = run_forward(kernel, data, EPS[kernel])
    return dev, saved


BAD_CALLS = [
    # (function, argument, replaced by: f(dev, saved) -> wrong array, error, message)
    ("layer_norm_forward", "weight", lambda d, s: d["weight"][:-1], ValueError, "weight"),
    ("layer_norm_forward", "bias", lambda d, s: d["bias"][None], ValueError, "bias"),
    ("layer_norm_forward", "x", lambda d, s: d["x"][0], ValueError, "2-D"),
    ("rms_norm_forward", "weight", lambda d, s: d["weight"][:3], ValueError, "weight"),
    ("add_layer_norm_forward", "residual", lambda d, s: d["residual"][:-1], ValueError,
     "residual"),
    ("add_rms_norm_forward", "residual", lambda d, s: d["residual"][:, :-1], ValueError,
     "residual"),
    ("layer_norm_backward", "dy", lambda d, s: d["dy"][:, :-1], ValueError, "dy"),
    ("layer_norm_backward", "weight", lambda d, s: d["weight"][:-2], ValueError, "weight"),
    ("layer_norm_backward", "mean", lambda d, s: s["mean"][:-1], ValueError, "mean"),
    ("layer_norm_backward", "rstd", lambda d, s: s["rstd"].astype(np.float64), TypeError,
     "rstd must be float32"),
    ("layer_norm_backward", "mean", lambda d, s: s["mean"].astype(np.float16), TypeError,
     "mean must be float32"),
    ("rms_norm_backward", "rstd", lambda d, s: s["rstd"][:-1], ValueError, "rstd"),
    ("rms_norm_backward", "dy", lambda d, s: d["dy"][:-1], ValueError, "dy"),
    ("add_layer_norm_backward", "ds", lambda d, s: d["ds"][:, 1:], ValueError, "ds"),
    ("add_layer_norm_backward", "rstd", lambda d, s: s["rstd"][None], ValueError, "rstd"),
    ("add_rms_norm_backward", "ds", lambda d, s: d["ds"][:-1], ValueError, "ds"),
    ("add_rms_norm_backward", "weight", lambda d, s: d["weight"][1:], ValueError, "weight"),
    ("add_rms_norm_backward", "rstd", lambda d, s: s["rstd"].astype(np.float64), TypeError,
     "rstd"),
]


def _call(function, dev, saved, **replaced):
    """Calls ``cuda.<function>`` with the arguments of ``dev``/``saved``, some replaced."""
    kernel = function.rsplit("_", 1)[0]
    args = {**dev, **saved, **replaced}
    weight, bias = args.get("weight"), args.get("bias")
    calls = {
        "layer_norm_forward": lambda: cuda.layer_norm_forward(args["x"], weight, bias, 1e-5),
        "rms_norm_forward": lambda: cuda.rms_norm_forward(args["x"], weight, 1e-6),
        "add_layer_norm_forward": lambda: cuda.add_layer_norm_forward(
            args["x"], args["residual"], weight, bias, 1e-5),
        "add_rms_norm_forward": lambda: cuda.add_rms_norm_forward(args["x"], args["residual"],
                                                                  weight, 1e-6),
        "layer_norm_backward": lambda: cuda.layer_norm_backward(
            args["dy"], args["x"], weight, args["mean"], args["rstd"]),
        "rms_norm_backward": lambda: cuda.rms_norm_backward(args["dy"], args["x"], weight,
                                                            args["rstd"]),
        "add_layer_norm_backward": lambda: cuda.add_layer_norm_backward(
            args["dy"], args["ds"], args["s"], weight, args["mean"], args["rstd"]),
        "add_rms_norm_backward": lambda: cuda.add_rms_norm_backward(
            args["dy"], args["ds"], args["s"], weight, args["rstd"]),
    }
    assert kernel in KERNELS
    return calls[function]()


@pytest.mark.parametrize("function, argument, wrong, error, message", BAD_CALLS,
                         ids=[f"{c[0]}-{c[1]}-{c[3].__name__}" for c in BAD_CALLS])
def test_kernel_api_refuses_arguments_the_kernels_would_misread(emulated, function, argument,
                                                                 wrong, error, message):
    dev, saved = _arguments(function.rsplit("_", 1)[0])
    launched = len(emulated)
    bad = wrong(dev, saved)
    with pytest.raises(error, match=message) as caught:
        _call(function, dev, saved, **{argument: bad})
    assert function in str(caught.value)
    assert len(emulated) == launched                   # nothing ran


@pytest.mark.parametrize("kernel", KERNELS)
def test_strided_statistics_are_read_as_their_values(emulated, kernel):
    """A view of every other element of a longer rstd/mean is not what the kernel's index
    reads: it is made contiguous first."""
    dev, saved = _arguments(kernel, rows=8, cols=128)
    function = kernel + "_backward"
    expected = _call(function, dev, saved)
    strided = {}
    for name in ("mean", "rstd"):
        if name in saved:
            wide = kernel_checks.cp.full(2 * saved[name].size, np.nan, np.float32)
            wide[::2] = saved[name]
            strided[name] = wide[::2]
    got = _call(function, dev, saved, **strided)
    for e, g in zip(expected, got):
        if e is not None:
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


@pytest.mark.parametrize("shape", [(0, 64), (5, 0), (0, 0)])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_no_rows_or_empty_rows_give_the_reference_results(emulated, kernel, dtype, shape):
    """M = 0 and D = 0 launch nothing (a zero-sized grid is a CUDA error) and return what the
    reference returns: empty outputs, zero parameter gradients, and for D = 0 the
    reference's NaN statistics."""
    rows, cols = shape
    data = draw(kernel, rows, cols, dtype, seed=6)
    with np.errstate(all="ignore"):                    # the reference's 0/0 for D = 0
        saved = run_forward(kernel, data, EPS[kernel])
        got = {**saved, **run_backward(kernel, data, saved)}
        host = {name: np.asarray(pair[0]).view(np.ndarray) for name, pair in data.items()}
        expected = {**_reference_forward(kernel, host), **_reference_backward(
            kernel, host, {n: np.asarray(a).view(np.ndarray) for n, a in saved.items()})}
    assert not emulated                                  # nothing launched
    for name, value in expected.items():
        if value is None:
            assert got[name] is None, name
            continue
        assert got[name].shape == value.shape and got[name].dtype == value.dtype, name
        np.testing.assert_array_equal(np.asarray(got[name]), value, err_msg=name)


def _reference_forward(kernel, a):
    weight, bias = a.get("weight"), a.get("bias")
    if kernel == "layer_norm":
        return dict(zip(("y", "mean", "rstd"),
                        reference.layer_norm_forward(a["x"], weight, bias, EPS[kernel])))
    if kernel == "rms_norm":
        return dict(zip(("y", "rstd"), reference.rms_norm_forward(a["x"], weight, EPS[kernel])))
    if kernel == "add_layer_norm":
        return dict(zip(("y", "s", "mean", "rstd"), reference.add_layer_norm_forward(
            a["x"], a["residual"], weight, bias, EPS[kernel])))
    return dict(zip(("y", "s", "rstd"), reference.add_rms_norm_forward(
        a["x"], a["residual"], weight, EPS[kernel])))


def _reference_backward(kernel, a, saved):
    weight = a.get("weight")
    if kernel == "layer_norm":
        out = reference.layer_norm_backward(a["dy"], a["x"], weight, saved["mean"],
                                            saved["rstd"], "bias" in a)
    elif kernel == "rms_norm":
        out = (*reference.rms_norm_backward(a["dy"], a["x"], weight, saved["rstd"]), None)
    elif kernel == "add_layer_norm":
        out = reference.add_layer_norm_backward(a["dy"], a["ds"], saved["s"], weight,
                                                saved["mean"], saved["rstd"], "bias" in a)
    else:
        out = (*reference.add_rms_norm_backward(a["dy"], a["ds"], saved["s"], weight,
                                                saved["rstd"]), None)
    return dict(zip(("dx", "dweight", "dbias"), out))


@pytest.mark.parametrize("cols", [64, 1024])
def test_rows_beyond_the_grid_limit_loop_in_the_kernel(emulated, monkeypatch, cols):
    """More rows than CUDA's grid holds (2^31 - 1 blocks; here 2, to run it) are covered by
    each group looping over rows group + k·groups; rows travel as 64-bit integers."""
    monkeypatch.setattr(launch, "MAX_GRID_BLOCKS", 2)
    check_kernel("add_layer_norm", "float32", cols, rows=13)
    forward = [grid for name, grid, _ in emulated if name.startswith("norm_forward<")]
    assert forward == [2]


# ----- casting modes and offset on the CUDA path ----------------------------------------------
def _conventions_on_device_and_host(host, casting, offset=1.0):
    """(y, s, rstd, dx, dweight) of RMSNorm with ``offset`` and ``casting`` on the CUDA
    kernels (``host``'s arrays moved to the fake device) and on the reference kernels, in
    that order."""
    fake = kernel_checks.cp
    dev = {k: None if v is None else fake.asarray(v) for k, v in host.items()}
    for kernels, a in ((cuda, dev), (reference, host)):
        y, s, rstd = kernel_checks.rms_forward(kernels, a["x"], a["r"], a["w"], 1e-6, offset,
                                               casting)
        rows = a["x"] if s is None else s
        dx, dw = kernel_checks.rms_backward(kernels, a["dy"], a["ds"], rows, a["w"], rstd,
                                            offset, casting)
        yield y, s, rstd, dx, dw


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("casting", ["llama", "gemma", "none"])
def test_emulated_casting_modes_and_offset_match_the_reference(emulated, casting, residual):
    """The CUDA kernels round as the reference does: float16 input, Gemma's offset 1, each
    casting mode, with and without the residual."""
    rng = np.random.default_rng(5)
    host = {"x": (0.5 + rng.standard_normal((12, 96))).astype(np.float16),
            "r": rng.standard_normal((12, 96)).astype(np.float16) if residual else None,
            "w": (0.3 * rng.standard_normal(96)).astype(np.float16),
            "dy": rng.standard_normal((12, 96)).astype(np.float16),
            "ds": rng.standard_normal((12, 96)).astype(np.float16) if residual else None}
    (y, s, rstd, dx, dw), (y_ref, _, rstd_ref, dx_ref, dw_ref) = (
        [None if v is None else np.asarray(v, np.float64) for v in outputs]
        for outputs in _conventions_on_device_and_host(host, casting))
    if residual:
        np.testing.assert_array_equal(s, host["x"] + host["r"])
    assert np.asarray(y).dtype == np.float64 and np.isfinite(y).all()
    np.testing.assert_allclose(rstd, rstd_ref, rtol=1e-6)
    ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(y_ref), 2.0 ** -14))) - 10)
    assert (np.abs(y - y_ref) / ulp).max() <= (2 if casting == "none" else 1)
    np.testing.assert_allclose(dx, dx_ref, atol=4e-3 * np.abs(dx_ref).max())
    np.testing.assert_allclose(dw, dw_ref, atol=4e-3 * np.abs(dw_ref).max())
    assert any(name.startswith("norm_forward<") for name, _, _ in emulated) or \
        casting == "gemma"


# ----- the conventions, in the kernels: every mode, offset and dtype pairing ------------------
def _one_launch_each(launches, mixed):
    kernel_checks.assert_one_launch_each([name for name, _, _ in launches], mixed)


@pytest.mark.parametrize("casting, offset, x_dtype, weight_dtype, residual",
                         kernel_checks.CONVENTION_CASES, ids=kernel_checks.CONVENTION_IDS)
def test_emulated_conventions_match_the_reference_bit_for_bit(emulated, casting, offset,
                                                              x_dtype, weight_dtype,
                                                              residual):
    """Exact statistics (see kernel_checks.convention_inputs), so y, s and rstd must have the
    reference's bits; dx and dweight its values to the kernel checks' tolerances."""
    kernel_checks.check_conventions(casting, offset, x_dtype, weight_dtype, residual)
    _one_launch_each(emulated, x_dtype != weight_dtype)


@pytest.mark.parametrize("cols", [33, 40, 2048])
@pytest.mark.parametrize("x_dtype, weight_dtype", kernel_checks.CONVENTION_DTYPES)
@pytest.mark.parametrize("casting", kernel_checks.CASTINGS)
def test_emulated_conventions_on_random_rows(emulated, casting, x_dtype, weight_dtype, cols):
    """Random rows, Gemma's offset, the residual form: scalar loads (33), vector loads of a
    row length that 1/D does not divide exactly (40), a block per row (2048). rstd's last
    bit may differ (sums in another order): y within 1 unit (2 for "none")."""
    kernel_checks.check_conventions(casting, 1.0, x_dtype, weight_dtype, True, rows=6,
                                    cols=cols, seed=cols, exact=cols == 2048)
    _one_launch_each(emulated, x_dtype != weight_dtype)


@pytest.mark.parametrize("casting", kernel_checks.CASTINGS)
def test_emulated_casting_modes_give_different_bits(emulated, casting):
    """The check can fail: each mode's y differs from the other two somewhere (float16, a
    float32 weight with bits beyond float16's), so a kernel doing another mode's roundings
    fails the bitwise comparison above."""
    host = kernel_checks.convention_inputs(12, 64, "float16", "float32", False, 0, True)
    ys = {mode: np.asarray(reference.rms_norm_forward(
        host["x"], host["weight"], 1e-6, offset=1.0, casting=mode)[0], np.float64)
        for mode in kernel_checks.CASTINGS}
    for other in set(kernel_checks.CASTINGS) - {casting}:
        assert (ys[casting] != ys[other]).any(), (casting, other)


def test_llama_with_a_float32_weight_and_a_16_bit_dy_falls_back(emulated):
    """"llama" with a float32 weight gives float32 y, so the kernels read a float32 dy; a
    bfloat16 dy is not what they read: the reference runs it, nothing is launched, and the
    numbers are the reference's."""
    host = kernel_checks.convention_inputs(6, 64, "bfloat16", "float32", False, 1, True)
    x, w = host["x"], host["weight"]
    dy = host["dy"].astype(x.dtype)
    rstd = reference.rms_norm_forward(x, None, 1e-6)[1]
    fake = kernel_checks.cp
    dx, dw = cuda.rms_norm_backward(fake.asarray(dy), fake.asarray(x), fake.asarray(w),
                                    fake.asarray(rstd), offset=1.0, casting="llama")
    dx_ref, dw_ref = reference.rms_norm_backward(dy, x, w, rstd, offset=1.0, casting="llama")
    assert not [name for name, _, _ in emulated if name.startswith("norm_backward")]
    kernel_checks.assert_same_bits(np.asarray(dx).view(np.ndarray), dx_ref, "dx")
    kernel_checks.assert_same_bits(np.asarray(dw).view(np.ndarray), dw_ref, "dweight")


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("casting", kernel_checks.CASTINGS)
def test_float64_with_an_offset_runs_the_reference_on_device_arrays(emulated, casting,
                                                                    residual):
    """float64 is no kernel dtype: with Gemma's offset the reference runs it on the device
    arrays (w' = offset + w formed there, with a scalar: CuPy
    refuses a 0-d NumPy array), nothing is launched, and the numbers are the reference's."""
    rng = np.random.default_rng(11)
    host = {"x": rng.standard_normal((5, 48)), "w": 0.1 * rng.standard_normal(48),
            "r": rng.standard_normal((5, 48)) if residual else None,
            "dy": rng.standard_normal((5, 48)),
            "ds": rng.standard_normal((5, 48)) if residual else None}
    results = [[np.asarray(v).view(np.ndarray) for i, v in enumerate(outputs) if i != 1]
               for outputs in _conventions_on_device_and_host(host, casting)]
    assert not emulated                                  # nothing launched
    for name, got, want in zip(("y", "rstd", "dx", "dweight"), *results):
        assert got.dtype == want.dtype == np.float64, name
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_partial_buffers_are_written_padding_columns_included(emulated, monkeypatch):
    """D = 3: rows of 4 floats in the partial buffers (sum_partials loads float4s). The
    backward and the first sum_partials stage write every column, the padding as zeros, so
    no load reads memory nothing wrote (the buffers start as NaN here)."""
    monkeypatch.setattr(cuda, "_sm_count", lambda cp: 40)        # 80 partial rows: two stages
    buffers = []
    poisoned = cuda._empty

    def recording(cp_, shape, dtype):
        array = poisoned(cp_, shape, dtype)
        if len(shape) == 2 and shape[1] == launch.partial_stride(3):
            buffers.append(array)
        return array

    monkeypatch.setattr(cuda, "_empty", recording)
    check_kernel("add_layer_norm", "float32", 3, rows=400)
    assert len(buffers) == 4                       # dweight, dbias; then the chunks' sums
    for array in buffers:
        assert np.isfinite(np.asarray(array)).all()


@pytest.mark.parametrize("cols", [32, 2048])
@pytest.mark.parametrize("dtype", DTYPES)
def test_emulated_prefetching_kernels_loop_over_rows(emulated, dtype, cols):
    """One vector a thread: one wave of blocks (4 on the emulated 2 SMs), each group looping
    over rows with the next row's loads issued before the current one is reduced."""
    check_kernel("add_layer_norm", dtype, cols, rows=50)
    prefetching = {name.split("<")[0]: grid for name, grid, _ in emulated
                   if name.startswith("norm_") and int(name.split(",")[2]) == launch.PREFETCH_NV}
    assert "norm_backward" in prefetching
    assert all(grid <= 2 * 2 for grid in prefetching.values())   # 16 groups at most: < 50


@pytest.mark.parametrize("cols", [33, 1025, 2050])
@pytest.mark.parametrize("dtype", DTYPES)
def test_emulated_uneven_rows_move_vectors_with_partial_end_packs(emulated, dtype, cols):
    """Rows that 16 bytes do not divide: vector loads with the partial packs at each row's
    ends element by element, over many rows per group (the rows of a group start at the same
    place in their pack: ``uniform_heads``)."""
    check_kernel("add_layer_norm", dtype, cols, rows=50)
    norms = [name for name, _, _ in emulated if name.startswith("norm_")]
    assert norms and all(name.endswith(", true>") for name in norms), norms


@pytest.mark.parametrize("cols", [3, 7, 100, 1025])
@pytest.mark.parametrize("dtype", DTYPES)
def test_emulated_constant_rows_have_an_exact_mean(emulated, dtype, cols):
    # sum/D of 0.1 seven times is off by a rounding in float32; the correction step makes it
    # exact, so x - mean is 0: y is exactly b, and with eps = 0 NaN, as on the CPU and in torch
    data = draw("layer_norm", 4, cols, dtype, seed=3)
    values = np.repeat(np.array([0.1, 1 / 3, -7.7, 0.0])[:, None], cols, axis=1)
    data["x"] = kernel_checks.to_device_storage(values, dtype)
    x = data["x"][1]                                     # the stored values, in float64
    for eps, expected_y in ((1e-5, np.broadcast_to(data["bias"][1], x.shape)), (0.0, np.nan)):
        saved = run_forward("layer_norm", data, eps)
        np.testing.assert_array_equal(kernel_checks.from_device(saved["mean"]),
                                      x[:, 0].astype(np.float32))
        np.testing.assert_array_equal(kernel_checks.from_device(saved["y"]),
                                      np.broadcast_to(expected_y, x.shape))
