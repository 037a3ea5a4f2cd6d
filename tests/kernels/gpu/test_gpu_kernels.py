"""Every CUDA kernel against the float64 NumPy reference (needs CuPy and a GPU; skips without).

    python -m pytest tests/kernels/gpu                  # all of it
    python -m pytest tests/kernels/gpu -m "not slow"    # without the 4096-row cases of long rows

Each case draws random non-zero data (x with a non-zero mean, weight far from 1, bias far
from 0), rounds it to the storage dtype, and fills every output buffer with NaN before the
launch (``cuda._empty`` is the one place outputs are allocated), so an element a kernel
forgets to write fails the comparison. The expected values are the reference functions run
in float64 on the same rounded inputs; tolerances are per storage dtype. The checks live in
tests/helpers/kernel_checks.py, shared with the emulated run of the same kernels on the CPU.
"""

import kernel_checks
import numpy as np
import pytest
from kernel_checks import (DTYPES, EPS, KERNELS, PARAM_TOL, assert_close, check_kernel, draw,
                           expected_values, from_device, poison, run_backward, run_forward)

from microgradnorm import backend
from microgradnorm.kernels import cuda, launch, reference

cp = pytest.importorskip("cupy")
if not backend.cuda_available():
    pytest.skip("CuPy is installed but reaches no GPU", allow_module_level=True)

kernel_checks.use(cp)
COLS = (1, 3, 31, 32, 33, 127, 1000, 1024, 4096, 8191, 8192, 12288)
ROWS = (1, 7, 4096)


@pytest.fixture
def poisoned(monkeypatch):
    poison(monkeypatch)


def size_marks(rows, cols):
    return [pytest.mark.slow] if rows * cols >= 4096 * 1024 else []


CASES = [pytest.param(kernel, dtype, cols, rows, marks=size_marks(rows, cols),
                      id=f"{kernel}-{dtype}-D{cols}-M{rows}")
         for kernel in KERNELS for dtype in DTYPES for cols in COLS for rows in ROWS]


# ----- every kernel, forward and backward, against the float64 reference -------------------
@pytest.mark.parametrize("kernel, dtype, cols, rows", CASES)
def test_kernel_matches_float64_reference(poisoned, kernel, dtype, cols, rows):
    check_kernel(kernel, dtype, cols, rows)


def test_float32_denormals_are_flushed_as_compiled(poisoned):
    kernel_checks.check_denormals_flushed()


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("affine", ["none", "weight", "bias"])
@pytest.mark.parametrize("cols", [33, 1024, 8192])
def test_kernels_without_weight_or_bias(poisoned, kernel, affine, cols):
    """Null weight / bias pointers: γ = 1, β = 0, and no dweight / dbias."""
    if affine == "bias" and "layer" not in kernel:
        pytest.skip("RMSNorm has no bias")
    dtype = "float32"
    data = draw(kernel, 64, cols, dtype, seed=cols, affine=affine != "none")
    if affine == "bias":
        data.pop("weight")
    elif affine == "weight":
        data.pop("bias", None)
    eps = EPS[kernel]
    expected = expected_values(kernel, data, dtype, eps)
    got = {**run_forward(kernel, data, eps)}
    got.update(run_backward(kernel, data, got))
    for name in ("y", "dx", "dweight", "dbias"):
        if expected.get(name) is None:
            assert got[name] is None, name
        else:
            assert_close(from_device(got[name]), expected[name], PARAM_TOL[dtype], name,
                         scale=expected.get(f"{name} scale", 0.0))


# ----- layouts, determinism, fallbacks -------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cols", [32, 1024, 4096])
def test_non_contiguous_and_misaligned_inputs_give_the_same_bits(dtype, cols):
    data = draw("layer_norm", 96, cols, dtype, seed=5)
    x, weight, bias = data["x"][0], data["weight"][0], data["bias"][0]
    y, mean, rstd = cuda.layer_norm_forward(x, weight, bias, 1e-5)
    transposed = cp.ascontiguousarray(x.T).T                    # same values, column-major
    shifted = cp.empty(x.size + 1, x.dtype)[1:].reshape(x.shape)  # starts mid-vector
    shifted[...] = x
    for view in (transposed, shifted):
        y_view, mean_view, rstd_view = cuda.layer_norm_forward(view, weight, bias, 1e-5)
        for a, b in ((y, y_view), (mean, mean_view), (rstd, rstd_view)):
            np.testing.assert_array_equal(cp.asnumpy(a), cp.asnumpy(b))


@pytest.mark.parametrize("kernel", ["layer_norm", "add_rms_norm"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cols", [127, 1024, 8192])
def test_backward_is_deterministic(kernel, dtype, cols):
    """dweight / dbias come from fixed-order partial sums: two runs give the same bits."""
    data = draw(kernel, 4096, cols, dtype, seed=11)
    saved = run_forward(kernel, data, EPS[kernel])
    first = run_backward(kernel, data, saved)
    second = run_backward(kernel, data, saved)
    for name, value in first.items():
        if value is not None:
            np.testing.assert_array_equal(cp.asnumpy(value), cp.asnumpy(second[name]), name)


def test_float64_falls_back_to_the_reference_on_the_gpu():
    x = cp.asarray(np.random.default_rng(0).standard_normal((5, 7)))
    y, mean, rstd = cuda.layer_norm_forward(x, None, None, 1e-5)
    assert y.dtype == mean.dtype == rstd.dtype == np.float64
    expected = reference.layer_norm_forward(cp.asnumpy(x), None, None, 1e-5)[0]
    np.testing.assert_allclose(cp.asnumpy(y), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_too_long_for_registers_fall_back_to_the_reference(dtype):
    """bfloat16 included: the reference runs on the CuPy bfloat16 array in float32."""
    cols = launch.MAX_THREADS * 32 + 1                  # odd: scalar loads, one more than fits
    x = kernel_checks.to_device_storage(
        np.random.default_rng(1).standard_normal((2, cols)), dtype)[0]
    y, rstd = cuda.rms_norm_forward(x, None, 1e-6)
    assert y.dtype == x.dtype and rstd.shape == (2,) and rstd.dtype == np.float32
    expected = reference.rms_norm_forward(from_device(x), None, 1e-6)[0]
    assert_close(from_device(y), expected, kernel_checks.TOL[dtype], "y")


@pytest.mark.parametrize("dtype", DTYPES)
def test_no_rows(dtype):
    data = draw("add_layer_norm", 0, 64, dtype, seed=0)
    saved = run_forward("add_layer_norm", data, 1e-5)
    assert saved["y"].shape == saved["s"].shape == (0, 64) and saved["rstd"].shape == (0,)
    grads = run_backward("add_layer_norm", data, saved)
    assert grads["dx"].shape == (0, 64)
    assert not from_device(grads["dweight"]).any() and not from_device(grads["dbias"]).any()


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_of_no_elements_give_the_reference_results(dtype):
    data = draw("layer_norm", 3, 0, dtype, seed=0)
    with np.errstate(all="ignore"):
        saved = run_forward("layer_norm", data, 1e-5)
        grads = run_backward("layer_norm", data, saved)
    assert saved["y"].shape == (3, 0) and grads["dx"].shape == (3, 0)
    assert np.isnan(cp.asnumpy(saved["rstd"])).all()            # the reference's 0/0
    assert grads["dweight"].shape == grads["dbias"].shape == (0,)


def test_backward_grid_is_one_wave_of_the_kernels_occupancy():
    name = "norm_backward<float, 4, 4, 512>"                  # float32 D = 8192
    blocks = cuda._blocks_per_sm(cp, name, 512)
    assert 1 <= blocks <= 4                                   # 2048 threads an SM at most
    config = launch.backward_config(8192, 4)
    assert launch.backward_grid(10**6, config, cuda._sm_count(cp), blocks) == \
        blocks * cuda._sm_count(cp)


def test_loader_compiles_each_kernel_once_per_device():
    cuda.layer_norm_forward(cp.ones((2, 8), np.float32), None, None, 1e-5)
    [key] = [k for k in cuda._modules if k[2].startswith("norm_forward<float,")]
    module = cuda._modules[key]
    cuda.rms_norm_forward(cp.ones((3, 8), np.float32), None, 1e-6)    # the same kernel
    assert cuda._modules[key] is module and key[1] == cp.cuda.Device().id


# ----- RMSNorm conventions in the kernels (the emulated tests run the same checks) -----------
class _Logged:
    """A kernel that records its name in ``names`` each time it is launched."""

    def __init__(self, kernel, name, names):
        self.kernel, self.name, self.names = kernel.kernel, name, names
        self._launch = kernel

    def __call__(self, grid, block, args):
        self.names.append(self.name)
        return self._launch(grid, block, args)


@pytest.fixture
def launched(monkeypatch):
    """The names of the kernels launched during the test, in order."""
    names, real = [], cuda._function
    monkeypatch.setattr(cuda, "_function", lambda cp_, name: _Logged(real(cp_, name), name,
                                                                     names))
    return names


@pytest.mark.parametrize("casting, offset, x_dtype, weight_dtype, residual",
                         kernel_checks.CONVENTION_CASES, ids=kernel_checks.CONVENTION_IDS)
def test_conventions_match_the_reference_bit_for_bit(poisoned, launched, casting, offset,
                                                     x_dtype, weight_dtype, residual):
    """Exact statistics: y, s and rstd with the reference's bits (no FMA can change them:
    every product in the statistics is exact); dx, dweight to the kernel checks' tolerances;
    one launch each."""
    kernel_checks.check_conventions(casting, offset, x_dtype, weight_dtype, residual)
    kernel_checks.assert_one_launch_each(launched, x_dtype != weight_dtype)


@pytest.mark.parametrize("cols, rows", [(33, 7), (40, 7), (1024, 4096), (4096, 64),
                                        (8192, 16)])
@pytest.mark.parametrize("x_dtype, weight_dtype", kernel_checks.CONVENTION_DTYPES)
@pytest.mark.parametrize("casting", kernel_checks.CASTINGS)
def test_conventions_on_random_rows(poisoned, launched, casting, x_dtype, weight_dtype, cols,
                                    rows):
    """Random rows, Gemma's offset, the residual form, over the row mappings (scalar loads,
    a warp per row with many rows per group, a block per row, the longest rows)."""
    kernel_checks.check_conventions(casting, 1.0, x_dtype, weight_dtype, True, rows=rows,
                                    cols=cols, seed=cols, exact=False)
    kernel_checks.assert_one_launch_each(launched, x_dtype != weight_dtype)
