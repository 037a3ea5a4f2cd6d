"""Checks of the CUDA kernels against the float64 reference, shared by the GPU tests
(tests/gpu/test_gpu_kernels.py, on CuPy) and the emulated ones
(tests/test_cuda_emulated.py, the same kernels run on the CPU).

Call ``use(cp)`` first with the CuPy module (or its stand-in): the helpers move data
with it. Inputs are random and non-zero (x with a non-zero mean, weight far from 1,
bias far from 0), rounded to the storage dtype; the expected values are the reference
functions run in float64 on the same rounded inputs.
"""

import numpy as np

from microgradnorm import dtypes
from microgradnorm.kernels import cuda, reference

cp = None


def use(array_module):
    """Set the GPU array module (``cupy``) the helpers use."""
    global cp
    cp = array_module


def poison(monkeypatch):
    """Every output buffer ``kernels.cuda`` allocates starts as NaN, so an element a kernel
    forgets to write fails the comparison."""
    def empty(cp_, shape, dtype):
        return cp_.full(shape, np.nan, dtype=dtype)
    monkeypatch.setattr(cuda, "_empty", empty)

DTYPES = ("float32", "float16") + (("bfloat16",) if dtypes.has_bfloat16() else ())
KERNELS = ("layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm")
# |got - expected| <= TOL * (|expected| + rms(expected)): a few units in the last place of
# the storage dtype (2^-24, 2^-11, 2^-8 relative), and float32 sums over 4096 rows for the
# parameter gradients.
TOL = {"float32": 2e-5, "float16": 4e-3, "bfloat16": 1.6e-2}
PARAM_TOL = {"float32": 2e-4, "float16": 4e-3, "bfloat16": 1.6e-2}
EPS = {"layer_norm": 1e-5, "add_layer_norm": 1e-5, "rms_norm": 1e-6, "add_rms_norm": 1e-6}


# ----- storage dtypes -----------------------------------------------------------------------
def to_device_storage(array64, dtype):
    """float64 NumPy -> (CuPy array of ``dtype``, the rounded values in float64). bfloat16
    is ml_dtypes' dtype, rounded on the host."""
    stored = array64.astype(dtypes.as_dtype(dtype))
    return cp.asarray(stored), stored.astype(np.float64)


def from_device(array):
    """A kernel output (CuPy, any float dtype, bfloat16 too) -> float64 NumPy."""
    return cp.asnumpy(array).astype(np.float64)


def round_to(array64, dtype):
    return array64.astype(dtypes.as_dtype(dtype)).astype(np.float64)


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



def check_kernel(kernel, dtype, cols, rows):
    """Forward then backward of ``kernel`` on random (rows, cols) data in ``dtype``,
    every output against the float64 reference."""
    eps = EPS[kernel]
    data = draw(kernel, rows, cols, dtype, seed=cols * 31 + rows)
    expected = expected_values(kernel, data, dtype, eps)
    saved = run_forward(kernel, data, eps)
    grads = run_backward(kernel, data, saved)
    got = {**saved, **grads}
    assert got["rstd"].dtype == np.float32
    for name in ("y", "s", "dx"):        # bfloat16 in, bfloat16 out: the dtype, not bits
        if name in got:
            assert got[name].dtype == data["x"][0].dtype, name
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


def check_denormals_flushed():
    """CuPy compiles every RawModule with -ftz=true (test_cuda_compile.py checks it), so
    float32 denormals are zero to the kernels. A row of denormals then has RMS 0: y = 0 and
    rstd = 1/sqrt(eps), where the reference (no flushing) gives y = x·rstd, about 1e-36.
    float16 denormals are normal float32 numbers once loaded: nothing of theirs is flushed."""
    denormals = np.full((4, 64), 1e-40, np.float32) * np.arange(1, 65, dtype=np.float32)
    y, rstd = cuda.rms_norm_forward(cp.asarray(denormals), None, 1e-6)
    y_reference, _ = reference.rms_norm_forward(denormals, None, 1e-6)
    assert (y_reference != 0).all()                   # the reference does not flush
    np.testing.assert_array_equal(cp.asnumpy(y), 0.0)
    np.testing.assert_array_equal(cp.asnumpy(rstd), np.float32(1) / np.sqrt(np.float32(1e-6)))
    half = np.full((2, 64), 2.0**-20, np.float16)     # a float16 denormal
    y_half, _ = cuda.rms_norm_forward(cp.asarray(half), None, 0.0)
    np.testing.assert_array_equal(cp.asnumpy(y_half), 1.0)
