"""Every CUDA kernel against the float64 NumPy reference (needs CuPy and a GPU; skips without).

    python -m pytest tests/gpu                  # all of it
    python -m pytest tests/gpu -m "not slow"    # without the 4096-row cases of long rows

Each case draws random non-zero data (x with a non-zero mean, weight far from 1, bias far
from 0), rounds it to the storage dtype, and fills every output buffer with NaN before the
launch (``cuda._empty`` is the one place outputs are allocated), so an element a kernel
forgets to write fails the comparison. The expected values are the reference functions run
in float64 on the same rounded inputs; tolerances are per storage dtype.
"""

import numpy as np
import pytest

from microgradnorm import backend
from microgradnorm.kernels import bfloat16, cuda, reference

cp = pytest.importorskip("cupy")
if not backend.cuda_available():
    pytest.skip("CuPy is installed but reaches no GPU", allow_module_level=True)

COLS = (1, 3, 31, 32, 33, 127, 1000, 1024, 4096, 8191, 8192, 12288)
ROWS = (1, 7, 4096)
DTYPES = ("float32", "float16", "bfloat16")
KERNELS = ("layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm")
# |got - expected| <= TOL * (|expected| + rms(expected)): a few units in the last place of
# the storage dtype (2^-24, 2^-11, 2^-8 relative), and float32 sums over 4096 rows for the
# parameter gradients.
TOL = {"float32": 2e-5, "float16": 4e-3, "bfloat16": 1.6e-2}
PARAM_TOL = {"float32": 2e-4, "float16": 4e-3, "bfloat16": 1.6e-2}
EPS = {"layer_norm": 1e-5, "add_layer_norm": 1e-5, "rms_norm": 1e-6, "add_rms_norm": 1e-6}


# ----- storage dtypes -----------------------------------------------------------------------
def to_device_storage(array64, dtype):
    """float64 NumPy -> (CuPy array in the kernels' storage, the rounded values in float64)."""
    if dtype == "bfloat16":
        bits = bfloat16.to_bfloat16(array64.astype(np.float32))
        return cp.asarray(bits), bfloat16.from_bfloat16(bits).astype(np.float64)
    stored = array64.astype(dtype)
    return cp.asarray(stored), stored.astype(np.float64)


def from_device(array):
    """A kernel output (CuPy, storage dtype) -> float64 NumPy."""
    host = cp.asnumpy(array)
    if host.dtype == np.uint16:
        host = bfloat16.from_bfloat16(host)
    return host.astype(np.float64)


def round_to(array64, dtype):
    if dtype == "bfloat16":
        return bfloat16.from_bfloat16(bfloat16.to_bfloat16(array64)).astype(np.float64)
    return array64.astype(dtype).astype(np.float64)


@pytest.fixture
def poisoned(monkeypatch):
    """Every output buffer starts as NaN (for bfloat16 bits: a quiet NaN)."""
    def empty(cp_, shape, dtype):
        fill = 0x7FC0 if np.dtype(dtype) == np.uint16 else np.nan
        return cp_.full(shape, fill, dtype=dtype)
    monkeypatch.setattr(cuda, "_empty", empty)


def rms(array):
    return float(np.sqrt(np.mean(array ** 2))) if array.size else 0.0


def assert_close(got, expected, tol, what, scale=0.0):
    """|got - expected| <= tol·(|expected| + max(rms(expected), scale)); ``scale`` (a number
    or one per row) is the size of the terms the value is computed from, times how much the
    row amplifies float32 rounding (see ``expected_values``)."""
    assert got.shape == expected.shape, what
    assert np.isfinite(got).all(), f"{what}: not every element was written (NaN left)"
    scale = np.maximum(rms(expected), scale)
    excess = np.abs(got - expected) - tol * (np.abs(expected) + scale)
    worst = np.unravel_index(np.argmax(excess), excess.shape)
    assert excess[worst] <= 0, (f"{what}: got {got[worst]}, expected {expected[worst]} "
                                f"at {worst} (tolerance {tol})")


# ----- inputs -------------------------------------------------------------------------------
def draw(kernel, rows, cols, dtype, seed, affine=True):
    """{name: (device array, float64 rounded copy)} for a kernel's forward and backward."""
    rng = np.random.default_rng(seed)
    arrays = {"x": 0.5 + rng.standard_normal((rows, cols)),
              "dy": rng.standard_normal((rows, cols))}
    if kernel.startswith("add_"):
        arrays["residual"] = rng.standard_normal((rows, cols))
        arrays["ds"] = rng.standard_normal((rows, cols))
    if affine:
        arrays["weight"] = 1 + 0.5 * rng.standard_normal(cols)
        if "layer" in kernel:
            arrays["bias"] = 0.5 * rng.standard_normal(cols)
    return {name: to_device_storage(a, dtype) for name, a in arrays.items()}


def size_marks(rows, cols):
    return [pytest.mark.slow] if rows * cols >= 4096 * 1024 else []


CASES = [pytest.param(kernel, dtype, cols, rows, marks=size_marks(rows, cols),
                      id=f"{kernel}-{dtype}-D{cols}-M{rows}")
         for kernel in KERNELS for dtype in DTYPES for cols in COLS for rows in ROWS]


# ----- every kernel, forward and backward, against the float64 reference -------------------
def run_forward(kernel, data, eps):
    dev = {name: pair[0] for name, pair in data.items()}
    weight, bias = dev.get("weight"), dev.get("bias")
    if kernel == "layer_norm":
        y, mean, rstd = cuda.layer_norm_forward(dev["x"], weight, bias, eps)
        return {"y": y, "mean": mean, "rstd": rstd}
    if kernel == "rms_norm":
        y, rstd = cuda.rms_norm_forward(dev["x"], weight, eps)
        return {"y": y, "rstd": rstd}
    if kernel == "add_layer_norm":
        y, s, mean, rstd = cuda.add_layer_norm_forward(dev["x"], dev["residual"], weight,
                                                       bias, eps)
        return {"y": y, "s": s, "mean": mean, "rstd": rstd}
    y, s, rstd = cuda.add_rms_norm_forward(dev["x"], dev["residual"], weight, eps)
    return {"y": y, "s": s, "rstd": rstd}


def run_backward(kernel, data, saved):
    dev = {name: pair[0] for name, pair in data.items()}
    weight = dev.get("weight")
    if kernel == "layer_norm":
        dx, dweight, dbias = cuda.layer_norm_backward(dev["dy"], dev["x"], weight,
                                                      saved["mean"], saved["rstd"],
                                                      "bias" in dev)
    elif kernel == "rms_norm":
        (dx, dweight), dbias = cuda.rms_norm_backward(dev["dy"], dev["x"], weight,
                                                      saved["rstd"]), None
    elif kernel == "add_layer_norm":
        dx, dweight, dbias = cuda.add_layer_norm_backward(dev["dy"], dev["ds"], saved["s"],
                                                          weight, saved["mean"],
                                                          saved["rstd"], "bias" in dev)
    else:
        (dx, dweight), dbias = cuda.add_rms_norm_backward(dev["dy"], dev["ds"], saved["s"],
                                                          weight, saved["rstd"]), None
    return {"dx": dx, "dweight": dweight, "dbias": dbias}


def expected_values(kernel, data, dtype, eps):
    """The reference in float64 on the rounded inputs. The residual sum is rounded to the
    storage dtype, as the kernel stores it and normalizes what it stored."""
    host = {name: pair[1] for name, pair in data.items()}
    weight, bias = host.get("weight"), host.get("bias")
    x = host["x"]
    expected = {}
    if kernel.startswith("add_"):
        x = round_to(host["x"] + host["residual"], dtype)
        expected["s"] = x
    if "layer" in kernel:
        y, mean, rstd = reference.layer_norm_forward(x, weight, bias, eps)
        dx, dweight, dbias = reference.layer_norm_backward(host["dy"], x, weight, mean, rstd,
                                                           bias is not None)
        expected.update(mean=mean, dbias=dbias)
    else:
        y, rstd = reference.rms_norm_forward(x, weight, eps)
        dx, dweight = reference.rms_norm_backward(host["dy"], x, weight, rstd)
    # Rounding x to float32 moves x̂ by about 2^-24·|x|·rstd: rows whose spread is small
    # next to their values (a tiny variance) amplify it by kappa; y and dx inherit that.
    kappa = 1 + np.sqrt(np.mean(x ** 2, axis=1, keepdims=True)) * rstd[:, None]   # (M, 1)
    g = host["dy"] if weight is None else host["dy"] * weight
    expected["y scale"] = kappa * (1.0 if weight is None else rms(weight))
    expected["dx scale"] = kappa * np.sqrt(np.mean((rstd[:, None] * g) ** 2, axis=1,
                                                   keepdims=True))
    if kernel.startswith("add_"):
        dx = dx + host["ds"]
    expected.update(y=y, rstd=rstd, dx=dx, dweight=dweight)
    return expected


@pytest.mark.parametrize("kernel, dtype, cols, rows", CASES)
def test_kernel_matches_float64_reference(poisoned, kernel, dtype, cols, rows):
    eps = EPS[kernel]
    data = draw(kernel, rows, cols, dtype, seed=cols * 31 + rows)
    expected = expected_values(kernel, data, dtype, eps)
    saved = run_forward(kernel, data, eps)
    grads = run_backward(kernel, data, saved)
    got = {**saved, **grads}
    assert got["rstd"].dtype == np.float32
    if "s" in got:   # the stored sum is the rounded exact sum: equal, not close
        np.testing.assert_array_equal(from_device(got["s"]), expected["s"])
    for name in ("mean", "rstd"):
        if name in expected:
            assert_close(from_device(got[name]), expected[name], TOL[dtype], name)
    for name in ("y", "dx"):
        assert_close(from_device(got[name]), expected[name], TOL[dtype], name,
                     scale=expected[f"{name} scale"])
    for name in ("dweight", "dbias"):
        if expected.get(name) is not None:
            assert got[name].dtype == data["x"][0].dtype, name
            assert_close(from_device(got[name]), expected[name], PARAM_TOL[dtype], name)
        else:
            assert got[name] is None, name


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


def test_rows_too_long_for_registers_fall_back_or_fail_clearly():
    cols = cuda.MAX_THREADS * 16 + 1                  # odd: scalar loads, one more than fits
    x = cp.asarray(np.random.default_rng(1).standard_normal((2, cols)), dtype=np.float32)
    y, rstd = cuda.rms_norm_forward(x, None, 1e-6)
    assert rstd.shape == (2,)
    expected = reference.rms_norm_forward(cp.asnumpy(x).astype(np.float64), None, 1e-6)[0]
    np.testing.assert_allclose(cp.asnumpy(y), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="bfloat16"):
        cuda.rms_norm_forward(x.view(np.uint16)[:, :cols], None, 1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_no_rows(dtype):
    data = draw("add_layer_norm", 0, 64, dtype, seed=0)
    saved = run_forward("add_layer_norm", data, 1e-5)
    assert saved["y"].shape == saved["s"].shape == (0, 64) and saved["rstd"].shape == (0,)
    grads = run_backward("add_layer_norm", data, saved)
    assert grads["dx"].shape == (0, 64)
    assert not from_device(grads["dweight"]).any() and not from_device(grads["dbias"]).any()


def test_loader_compiles_once_per_device():
    cuda.layer_norm_forward(cp.ones((2, 8), np.float32), None, None, 1e-5)
    module = cuda._modules[(cuda.SOURCE, cp.cuda.Device().id)]
    cuda.rms_norm_forward(cp.ones((2, 8), np.float16), None, 1e-6)
    assert cuda._modules[(cuda.SOURCE, cp.cuda.Device().id)] is module
