"""Checks of the CUDA kernels against the float64 reference, shared by the GPU tests
(tests/kernels/gpu/test_gpu_kernels.py, on CuPy) and the emulated ones
(tests/kernels/test_cuda_emulated.py, the same kernels run on the CPU).

Call ``use(cp)`` first with the CuPy module (or its stand-in): the helpers move data
with it. Inputs are random and non-zero (x with a non-zero mean, weight far from 1,
bias far from 0), rounded to the storage dtype; the expected values are the reference
functions run in float64 on the same rounded inputs.
"""

import numpy as np

from microgradnorm import dtypes
from microgradnorm.kernels import CASTINGS, cuda, reference

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


# ----- RMSNorm conventions: offset, casting modes, a float32 weight -------------------------
# The CUDA kernels do the reference's roundings in their one launch; the oracle is the
# reference kernels (NumPy, bfloat16 through ml_dtypes).


def rms_forward(kernels, x, residual, weight, eps, offset, casting):
    """y, s (None without ``residual``), rstd of ``kernels``' RMSNorm or its residual form."""
    if residual is None:
        y, rstd = kernels.rms_norm_forward(x, weight, eps, offset=offset, casting=casting)
        return y, None, rstd
    return kernels.add_rms_norm_forward(x, residual, weight, eps, offset=offset,
                                        casting=casting)


def rms_backward(kernels, dy, ds, rows, weight, rstd, offset, casting):
    """dx (+ ds with a residual) and dweight of ``kernels``' RMSNorm backward."""
    if ds is None:
        return kernels.rms_norm_backward(dy, rows, weight, rstd, offset=offset,
                                         casting=casting)
    return kernels.add_rms_norm_backward(dy, ds, rows, weight, rstd, offset=offset,
                                         casting=casting)
# (x dtype, weight dtype): each dtype with its own weight, and 16-bit x with a float32 one.
CONVENTION_DTYPES = (("float16", "float16"), ("float16", "float32"), ("bfloat16", "bfloat16"),
                     ("bfloat16", "float32"), ("float32", "float32"))
MANTISSA_BITS = {"float16": 10, "bfloat16": 7, "float32": 23}
# (casting, offset, x dtype, weight dtype, residual): every combination.
CONVENTION_CASES = [(casting, offset, x_dtype, weight_dtype, residual)
                    for casting in CASTINGS for offset in (0, 1)
                    for x_dtype, weight_dtype in CONVENTION_DTYPES for residual in (False, True)]


def convention_id(case):
    casting, offset, x_dtype, weight_dtype, residual = case
    return (f"{casting}-offset{offset}-{x_dtype}-w{weight_dtype}-"
            f"{'add' if residual else 'plain'}")


CONVENTION_IDS = [convention_id(case) for case in CONVENTION_CASES]


def host_dtype(name):
    """The NumPy dtype of the reference side: ml_dtypes' bfloat16 for "bfloat16"."""
    if name == "bfloat16":
        from microgradnorm import dtypes
        if not dtypes.has_bfloat16():
            import pytest
            pytest.skip("bfloat16 on the reference side needs ml_dtypes")
        return dtypes.bfloat16
    return np.dtype(name)


def to_device(host):
    """A reference-side array -> the device (bfloat16 stays ml_dtypes' bfloat16)."""
    return None if host is None else cp.asarray(host)


def to_host(device, like):
    """A kernel output -> NumPy, of the dtype of the reference's ``like``."""
    host = cp.asnumpy(device)
    assert host.dtype == like.dtype, (host.dtype, like.dtype)
    return host


def assert_same_bits(got, expected, what):
    """Equal dtype and shape, and the same bits (so also the same signed zeros)."""
    assert got.dtype == expected.dtype and got.shape == expected.shape, \
        (what, got.dtype, expected.dtype, got.shape, expected.shape)
    bits = np.dtype(f"u{expected.dtype.itemsize}")
    different = got.view(bits) != expected.view(bits)
    if different.any():
        where = np.argwhere(different)[0]
        raise AssertionError(f"{what}: {different.sum()} of {different.size} elements differ, "
                             f"first at {tuple(where)}: got {got[tuple(where)]}, expected "
                             f"{expected[tuple(where)]}")


def ulps(got, expected, dtype_name):
    """|got - expected| in units in the last place of ``dtype_name`` at |expected|."""
    got, expected = (np.asarray(a, np.float64) for a in (got, expected))
    tiny = 2.0 ** -14 if dtype_name == "float16" else 2.0 ** -126
    exponent = np.floor(np.log2(np.maximum(np.abs(expected), tiny)))
    return np.abs(got - expected) / 2.0 ** (exponent - MANTISSA_BITS[dtype_name])


def convention_inputs(rows, cols, x_dtype, weight_dtype, residual, seed, exact):
    """Reference-side inputs. ``exact``: x, residual, dy, ds are multiples of 1/8 in
    [-4, 4], so every square and every partial sum of the mean square is exact in float32,
    whatever the order of the sums: with a power-of-two row length (1/D exact too) the
    kernels' rstd has the reference's bits. Otherwise standard normal (x with mean 0.5).
    The weight (far from 1, with bits beyond 16-bit's when float32) is the same either
    way."""
    rng = np.random.default_rng(seed)
    dtype = host_dtype(x_dtype)

    def draw_rows(shift=0.0):
        if exact:
            return rng.integers(-32, 33, (rows, cols)) / 8.0
        return shift + rng.standard_normal((rows, cols))

    inputs = {"x": draw_rows(0.5).astype(dtype),
              "residual": draw_rows().astype(dtype) if residual else None,
              "weight": (0.3 * rng.standard_normal(cols) - 0.2).astype(host_dtype(weight_dtype)),
              "dy": draw_rows(), "ds": draw_rows().astype(dtype) if residual else None}
    return inputs


def check_conventions(casting, offset, x_dtype, weight_dtype, residual, rows=12, cols=64,
                      seed=0, exact=True):
    """RMSNorm with ``offset`` and ``casting`` on the CUDA kernels against the reference
    kernels. Forward, with ``exact`` data and a power-of-two row length: y, s and
    rstd bit for bit (the kernel's roundings are the reference's, one for one). Otherwise
    the statistics' float32 sums run in another order (a warp tree against BLAS), rstd
    differs in its last bits and y by at most 1 unit of x's dtype, the one x̂ or y is
    rounded to (2 for "none", which rounds rstd to it too; 4 for float32 x, where rstd's
    last bits reach y unrounded). Backward, on the reference forward's s and rstd:
    mean(g·x̂) and Σ dy·x̂ are summed in another order, so dx and dweight agree to the
    kernel checks' tolerances (TOL, PARAM_TOL), not bit for bit. Returns the device
    outputs."""
    host = convention_inputs(rows, cols, x_dtype, weight_dtype, residual, seed, exact)
    dev = {name: to_device(a) for name, a in host.items() if name != "dy"}
    eps = 1e-6
    y_ref, s_ref, rstd_ref = rms_forward(
        reference, host["x"], host["residual"], host["weight"], eps, offset, casting)
    y, s, rstd = rms_forward(
        cuda, dev["x"], dev["residual"], dev["weight"], eps, offset, casting)
    y_host, rstd_host = to_host(y, y_ref), to_host(rstd, rstd_ref)
    mixed = x_dtype != weight_dtype
    assert y_ref.dtype == (np.float32 if mixed and casting == "llama" else host["x"].dtype)
    if residual:
        assert_same_bits(to_host(s, s_ref), s_ref, "s")
    else:
        assert s is None
    if exact and cols & (cols - 1) == 0:
        assert_same_bits(rstd_host, rstd_ref, "rstd")
        assert_same_bits(y_host, y_ref, "y")
    else:
        assert rstd_host.dtype == np.float32
        np.testing.assert_allclose(rstd_host, rstd_ref, rtol=2e-6)
        assert y_host.dtype == y_ref.dtype
        # float32 x: rstd's few last bits pass through x·rstd and ·w' unrounded to 16-bit.
        allowed = 4 if x_dtype == "float32" else 2 if casting == "none" else 1
        worst = ulps(y_host, y_ref, x_dtype).max()
        assert worst <= allowed, f"y: {worst} units in the last place of {x_dtype}"
    # Backward, on the reference's rows and rstd, dy in y's dtype.
    rows_ref = host["x"] if s_ref is None else s_ref
    dy_ref = host["dy"].astype(y_ref.dtype)
    dx_ref, dw_ref = rms_backward(
        reference, dy_ref, host["ds"], rows_ref, host["weight"], rstd_ref, offset, casting)
    dx, dw = rms_backward(
        cuda, to_device(dy_ref), dev["ds"], to_device(rows_ref), dev["weight"],
        cp.asarray(rstd_ref), offset, casting)
    dx_host, dw_host = to_host(dx, dx_ref), to_host(dw, dw_ref)
    assert dx_host.dtype == dx_ref.dtype == host["x"].dtype
    assert dw_host.dtype == dw_ref.dtype == host["weight"].dtype
    assert_close(dx_host.astype(np.float64), dx_ref.astype(np.float64), TOL[x_dtype], "dx")
    assert_close(dw_host.astype(np.float64), dw_ref.astype(np.float64), PARAM_TOL[x_dtype],
                 "dweight")
    if mixed and casting == "none":        # w' in x's dtype: dweight rounded through it
        through = dw_host.astype(host["x"].dtype).astype(np.float32)
        assert_same_bits(through, dw_host, "dweight rounded through x's dtype")
    return {"y": y, "s": s, "rstd": rstd, "dx": dx, "dweight": dw}


def assert_one_launch_each(names, mixed):
    """The launches (kernel names, in order) of one forward and one backward: one
    norm_forward, one norm_backward, then sum_partials; W = float exactly for a float32
    weight beside 16-bit x. No composed multiplies and no reference fallback ran."""
    norms = [name for name in names if name.startswith("norm_")]
    assert [n.split("<")[0] for n in norms] == ["norm_forward", "norm_backward"], names
    # <T, VEC, NV, MAX_BLOCK[, W[, UNEVEN]]>: W is the fifth argument, T's by default
    arguments = [n[n.index("<") + 1:-1].split(", ") for n in norms]
    assert all((a[4:5] == ["float"] and a[0] != "float") == mixed for a in arguments), norms
    assert all(n.startswith(("norm_", "sum_partials<")) for n in names), names

