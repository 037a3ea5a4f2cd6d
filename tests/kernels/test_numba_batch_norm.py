"""The numba BatchNorm kernels (``kernels.numba_batch_norm``, re-exported by ``numba_cpu``)
against the reference's: statistics, forward and backward in training and eval, for
BatchNorm1d's (N, C) rows (L = 1) and (N, C, L) blocks, float32 and float64, with and
without weight and bias, within a few float64 ulps of the reference's float64 sums (y and
dx within an ulp or two of their dtype); inf and NaN where the reference has them; and
what they hand to the reference (half precision, an empty batch), exactly."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microgradnorm.kernels import reference

pytest.importorskip("numba")
from microgradnorm.kernels import numba_cpu  # noqa: E402  (after the skip)

NAMES = ("batch_norm_statistics", "batch_norm_forward", "batch_norm_backward")


def case(shape, dtype, affine, seed, offset=5.0):
    rng = np.random.default_rng(seed)
    x = (3 * rng.standard_normal(shape) + offset).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    channels = shape[1]
    weight = (rng.standard_normal(channels) + 1.5).astype(dtype) if affine else None
    bias = rng.standard_normal(channels).astype(dtype) if affine else None
    return x, dy, weight, bias


def run(module, x, dy, weight, bias, training):
    mean, var = module.batch_norm_statistics(x)
    y, rstd = module.batch_norm_forward(x, mean, var, weight, bias, 1e-5)
    grads = module.batch_norm_backward(dy, x, weight, mean, rstd, training, bias is not None)
    return (mean, var, rstd, y) + tuple(grads)


def assert_close(actual, expected, ulps):
    assert (actual is None) == (expected is None)
    if actual is None:
        return
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(actual[~finite], expected[~finite])
    scale = max(1.0, float(np.abs(expected[finite]).max(initial=0)))
    error = np.abs(actual[finite].astype(np.float64) - expected[finite]).max(initial=0)
    assert error <= ulps * np.finfo(actual.dtype).eps * scale, error


@pytest.fixture
def no_reference(monkeypatch):
    """The reference's BatchNorm kernels made to fail: a delegation would show."""
    for name in NAMES:
        monkeypatch.setattr(reference, name, None)


@settings(max_examples=40, deadline=None)
@given(shape=st.sampled_from([(64, 16, 1), (1, 3, 1), (2, 1, 7), (8, 4, 9), (3, 5, 100),
                              (5, 2, 1), (2, 3, 33)]),
       dtype=st.sampled_from([np.float32, np.float64]), affine=st.booleans(),
       training=st.booleans(), seed=st.integers(0, 2**16))
def test_the_compiled_kernels_agree_with_the_reference(shape, dtype, affine, training, seed):
    x, dy, weight, bias = case(shape, dtype, affine, seed)
    expected = run(reference, x, dy, weight, bias, training)
    original = {name: getattr(reference, name) for name in NAMES}
    try:
        for name in NAMES:
            setattr(reference, name, None)
        actual = run(numba_cpu, x, dy, weight, bias, training)
    finally:
        for name, function in original.items():
            setattr(reference, name, function)
    for a, e in zip(actual, expected):
        # float64 (the statistics; every output of float64 x): sums in another order;
        # float32 outputs: rounded once from float64 values that agree to that
        assert_close(a, e, 64 if a is None or a.dtype == np.float64 else 2)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")             # the reference's inf - inf
@pytest.mark.parametrize("length", [1, 6])
@pytest.mark.parametrize("training", [True, False])
def test_inf_and_nan_propagate_as_in_the_reference(length, training, monkeypatch):
    x, dy, weight, bias = case((4, 3, length), np.float32, True, 1)
    x[1, 0, 0], x[2, 1, 0] = np.inf, np.nan                    # channel 2 stays finite
    with np.errstate(all="ignore"):
        expected = run(reference, x, dy, weight, bias, training)
        for name in NAMES:
            monkeypatch.setattr(reference, name, None)          # a delegation would fail
        actual = run(numba_cpu, x, dy, weight, bias, training)
    for a, e in zip(actual, expected):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
        np.testing.assert_array_equal(np.isinf(a), np.isinf(e))
    assert np.isfinite(actual[3][:, 2]).all()                   # y of the finite channel


@pytest.mark.parametrize("args", [
    pytest.param((np.float16, (6, 3, 2)), id="float16"),
    pytest.param((np.float32, (0, 3, 2)), id="empty batch"),
    pytest.param((np.float32, (4, 3, 0)), id="empty length"),
])
def test_the_rest_is_the_references_exactly(args, monkeypatch):
    dtype, shape = args
    x, dy, weight, bias = case(shape, dtype, True, 2)
    with np.errstate(all="ignore"):
        expected = run(reference, x, dy, weight, bias, True)
        calls = []
        for name in NAMES:
            original = getattr(reference, name)
            monkeypatch.setattr(reference, name, lambda *a, _o=original, _n=name:
                                calls.append(_n) or _o(*a))
        actual = run(numba_cpu, x, dy, weight, bias, True)
    assert calls == list(NAMES)
    for a, e in zip(actual, expected):
        np.testing.assert_array_equal(a, e)


def test_a_gradient_that_is_a_view_runs_compiled(no_reference):
    x, dy, weight, bias = case((16, 4, 1), np.float64, True, 3)
    mean, var = numba_cpu.batch_norm_statistics(x)
    _, rstd = numba_cpu.batch_norm_forward(x, mean, var, weight, bias, 1e-5)
    ones = np.broadcast_to(1.0, x.shape)                       # a sum's backward
    for a, e in zip(numba_cpu.batch_norm_backward(ones, x, weight, mean, rstd, True),
                    numba_cpu.batch_norm_backward(np.ones(x.shape), x, weight, mean, rstd,
                                                  True)):
        np.testing.assert_array_equal(a, e)


def test_a_large_mean_keeps_the_variance(no_reference):
    """Two passes (the deviations from the first mean): a mean of 1e8 and a spread of 1
    keep the variance to float64's precision, where E[x²] - E[x]² would lose it all."""
    rng = np.random.default_rng(4)
    x = (1e8 + rng.standard_normal((1000, 2, 1))).reshape(1000, 2, 1)
    _, var = numba_cpu.batch_norm_statistics(x)
    exact = x.astype(np.float64).var(axis=(0, 2))
    np.testing.assert_allclose(var, exact, rtol=1e-9)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")             # the reference's x² = inf
def test_an_overflowing_correction_keeps_the_variance_inf(monkeypatch):
    """Values near float64's max: the deviations' sum overflows (or the sum does, and the
    first mean is inf), so the mean's correction or its square is not finite. The variance
    is inf as the reference's and torch's (y 0, running_var inf), not inf - inf = NaN."""
    torch = pytest.importorskip("torch")
    rows = [[1e308, -1e308, 1e308], [1e308, 1e308, -1e308], [-1e308, 1e308, 1e308],
            [1.0, 2.0, 4.0], [1e300, -1e300, 2e300]]
    x = np.array(rows).T[:, :, None].copy()                    # (3, 5, 1): a channel a row
    expected = reference.batch_norm_statistics(x)
    for name in NAMES:
        monkeypatch.setattr(reference, name, None)              # a delegation would fail
    mean, var = numba_cpu.batch_norm_statistics(x)
    for a, e in zip((mean, var), expected):
        assert_close(a, e, 4)
    y, _ = numba_cpu.batch_norm_forward(x, mean, var, None, None, 1e-5)
    running_mean, running_var = np.zeros(5), np.ones(5)
    reference.update_running_stats(running_mean, running_var, mean, var, 3, 0.1)
    theirs_mean, theirs_var = torch.zeros(5, dtype=torch.float64), torch.ones(5).double()
    theirs = torch.nn.functional.batch_norm(torch.from_numpy(x[:, :, 0]), theirs_mean,
                                            theirs_var, training=True)
    np.testing.assert_allclose(y[:, :, 0], theirs.numpy(), rtol=1e-14)     # NaN where NaN
    np.testing.assert_array_equal(running_var, theirs_var.numpy())


@pytest.mark.parametrize("layout", ["channels last", "transposed sequence"])
@pytest.mark.parametrize("training", [True, False])
def test_a_strided_x_runs_compiled_in_its_layout(layout, training, no_reference):
    """A channels-last (N, C, H, W) x, seen as (N, C, H·W), and ``BatchNorm1d`` on an
    (N, L, C) sequence's transpose: the contiguous case's values, y and dx in x's memory
    order (channels-last: torch's strides)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    stored = rng.standard_normal((4, 5, 6, 3) if layout == "channels last" else (4, 7, 3))
    x = np.moveaxis(stored, -1, 1)                          # (N, C, *), C-strides 1
    x3 = x.reshape(x.shape[0], 3, -1)                       # (N, C, L), a view
    dy = rng.standard_normal(x3.shape)
    weight, bias = rng.standard_normal(3) + 1.5, rng.standard_normal(3)
    assert not x3.flags.c_contiguous and np.shares_memory(x3, stored)
    expected = run(numba_cpu, np.ascontiguousarray(x3), dy, weight, bias, training)
    actual = run(numba_cpu, x3, dy, weight, bias, training)
    for a, e in zip(actual, expected):
        np.testing.assert_array_equal(a, e)
    y, dx = actual[3], actual[4]
    assert y.strides == dx.strides == np.empty_like(x3).strides
    if layout == "channels last":
        theirs = torch.nn.functional.batch_norm(
            torch.from_numpy(x), torch.zeros(3).double(), torch.ones(3).double(),
            training=training)
        assert [s // 8 for s in y.reshape(x.shape).strides] == list(theirs.stride())


def test_a_first_value_far_from_the_mean_falls_back_to_two_passes(no_reference):
    """One pass about each channel's first value, except where that value is more than 4
    standard deviations from the mean (its cancellation would cost up to (K - m)²/var ulps):
    an outlier first in one channel keeps that channel's variance exact, the others too."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4000, 3, 1))
    x[0, 1, 0] = 1e9                                        # channel 1: K far from the mean
    mean, var = numba_cpu.batch_norm_statistics(x)
    np.testing.assert_allclose(mean, x.mean(axis=(0, 2)), rtol=1e-13)
    centred = x - x.mean(axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(var, (centred ** 2).mean(axis=(0, 2)), rtol=1e-12)
