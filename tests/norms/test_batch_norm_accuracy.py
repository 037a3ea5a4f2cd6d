"""The fused BatchNorm on float32 CPU arrays computes its statistics and its backward's sums
in float64 (``reference.batch_norm_dtype``): where float32 loses its digits to cancellation
(a few values per channel around a mean large against their spread), y and every gradient
stay within 1e-6 of the float64 result at its scale, where float32 statistics (and
PyTorch's float32 kernel) are off by 1e-4 to 1e-2; the outputs keep x's and the
parameters' dtypes."""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm.kernels import reference

torch = pytest.importorskip("torch")

BOUND = 1e-6                   # of max(1, |float64 result|), each of y, dx, dweight, dbias


def ill_conditioned(seed, n=3, channels=4, offset=100.0):
    """Few values per channel around a large mean, as float32 numbers, and y's gradient."""
    rng = np.random.default_rng(seed)
    x = (offset + 1e-2 * rng.standard_normal((n, channels, 1))).astype(np.float32)
    w = rng.uniform(0.5, 2, channels).astype(np.float32)
    b = rng.standard_normal(channels).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    return x, w, b, dy


def ours(x, w, b, dy):
    xs = [mg.tensor(a, requires_grad=True) for a in (x, w, b)]
    y = F.batch_norm(xs[0], None, None, xs[1], xs[2], training=True, impl="fused")
    y.backward(mg.tensor(dy))
    return [y.detach().numpy()] + [t.grad.numpy() for t in xs]


def exact(x, w, b, dy):
    """PyTorch in float64 on the same float32 numbers."""
    ts = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in (x, w, b)]
    y = torch.nn.functional.batch_norm(ts[0], None, None, ts[1], ts[2], training=True)
    y.backward(torch.tensor(dy.astype(np.float64)))
    return [y.detach().numpy()] + [t.grad.numpy() for t in ts]


def worst(results, truths):
    return max(np.abs(got - truth).max() / max(1.0, np.abs(truth).max())
               for got, truth in zip(results, truths))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("offset, n", [(100.0, 3), (1000.0, 3), (1000.0, 2), (1e4, 5)])
def test_float32_stays_within_a_few_ulps_of_float64(seed, offset, n):
    data = ill_conditioned(seed, n=n, offset=offset)
    results = ours(*data)
    assert [r.dtype for r in results] == [np.float32] * 4
    assert worst(results, exact(*data)) <= BOUND


def test_float32_statistics_would_fail_the_bound():
    x, w, b, dy = ill_conditioned(0, offset=1000.0)
    mean, var = reference._channel_moments(x, np.float32)          # float32 statistics
    y, rstd = reference.batch_norm_forward(x, mean, var, w, b, 1e-5)
    results = [y, *reference.batch_norm_backward(dy, x, w, mean, rstd, True)]
    assert worst(results, exact(x, w, b, dy)) > 100 * BOUND


def test_the_statistics_dtype():
    assert reference.batch_norm_dtype(np.zeros(2, np.float32)) == np.float64
    assert reference.batch_norm_dtype(np.zeros(2, np.float64)) == np.float64
    assert reference.batch_norm_dtype(np.zeros(2, np.float16)) == np.float32
    y = F.batch_norm(mg.ones(3, 2, dtype=mg.float16), None, None, training=True)
    assert y.dtype == mg.float16
