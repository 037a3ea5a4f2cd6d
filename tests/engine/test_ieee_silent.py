"""IEEE corner cases (inf - inf, x / 0, overflow, the mean of an empty slice) give torch's
values and gradients silently, as torch does: NumPy's RuntimeWarnings do not leak out of the
ops. Each check runs with warnings as errors."""

import operator
import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

INF, NAN = float("inf"), float("nan")
A = [1.0, INF, -INF, 0.0, 0.0, 1e308, NAN]
B = [0.0, INF, INF, 0.0, -0.0, 2.0, 1.0]          # 1e308 · 2 overflows


def silently(function, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return function(*args)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv],
                         ids=lambda op: op.__name__)
def test_arithmetic_on_infinities_and_zeros_is_silent_and_as_torch(op):
    upstream = np.random.default_rng(0).standard_normal(len(A))
    ours = [mg.tensor(v, dtype=mg.float64, requires_grad=True) for v in (A, B)]
    theirs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (A, B)]

    def forward_backward(a, b, grad):
        out = op(a, b)
        out.backward(grad)
        return out

    out = silently(forward_backward, *ours, mg.tensor(upstream))
    expected = forward_backward(*theirs, torch.from_numpy(upstream))
    assert out.dtype == mg.float64
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-12, atol=0)


def test_float32_overflow_is_inf_silently():
    out = silently(lambda: mg.tensor([3e38], dtype=mg.float32) * 10)
    expected = torch.tensor([3e38], dtype=torch.float32) * 10
    assert out.dtype == mg.float32
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


@pytest.mark.parametrize("shape, dim", [((3, 0), 1), ((0, 4), 1), ((0,), 0), ((2, 0, 3), 1)])
def test_mean_of_empty_slices_is_nan_silently(shape, dim):
    x = np.zeros(shape)
    out = silently(lambda: mg.tensor(x).mean(dim))
    expected = torch.from_numpy(x).mean(dim)
    assert out.dtype == mg.float64 and out.shape == tuple(expected.shape)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_mean_of_rows_holding_infinities_is_silent_and_as_torch():
    x = np.array([[INF, 1.0], [-INF, INF], [NAN, 2.0], [0.1, 0.1]])
    out = silently(lambda: mg.tensor(x).mean(1))
    np.testing.assert_array_equal(out.numpy(), torch.from_numpy(x).mean(1).numpy())


UNARY = {"exp": [1000.0, -1e4, 0.0], "log": [0.0, -1.0, 2.0], "sqrt": [-1.0, 0.0, 4.0],
         "reciprocal": [0.0, -0.0, 2.0], "rsqrt": [0.0, -1.0, 4.0], "log1p": [-1.0, -2.0, 0.0],
         "log2": [0.0, -1.0, 8.0], "expm1": [1000.0, 0.0, 1.0]}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_overflowing_or_off_their_domain_are_silent_and_as_torch(name):
    values = UNARY[name]
    ours = mg.tensor(values, dtype=mg.float64, requires_grad=True)
    theirs = torch.tensor(values, dtype=torch.float64, requires_grad=True)

    def forward_backward(x):
        out = getattr(x, name)()
        (out * out).sum().backward()          # the backward's products overflow too
        return out

    out = silently(forward_backward, ours)
    expected = forward_backward(theirs)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12,
                               equal_nan=True)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12,
                               equal_nan=True)


def test_numpy_warns_again_after_an_op_and_after_an_op_that_raised():
    silently(lambda: mg.tensor([1000.0]).exp())
    with pytest.raises(ValueError, match="do not broadcast"):
        mg.ones(2) + mg.ones(3)
    with pytest.warns(RuntimeWarning, match="overflow"):
        np.exp(np.array([1000.0]))
    assert np.geterr()["over"] == "warn"


def test_warnings_stay_silent_in_another_thread_running_ops():
    import threading
    errors = []

    def run():
        try:
            silently(lambda: (mg.tensor([1000.0], requires_grad=True).exp() * 2).sum()
                     .backward())
        except Exception as error:            # pragma: no cover - reported below
            errors.append(error)
    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and np.geterr()["over"] == "warn"


def test_in_place_writes_without_a_graph_are_silent():
    def writes():
        big = mg.tensor([3e38, 1.0, 0.0], dtype=mg.float32)
        big.add_(big)
        big.mul_(10.0)
        big *= 10.0
        big.div_(0.0)
        return big
    out = silently(writes)
    assert np.isinf(out.numpy()[0]) and np.isnan(out.numpy()[2])


def test_gradients_accumulated_past_the_range_are_inf_silently():
    x = mg.tensor([1.0], dtype=mg.float32, requires_grad=True)

    def twice():
        for _ in range(2):
            (x * 3e38).sum().backward()
    silently(twice)
    assert np.isinf(x.grad.numpy()[0])


def test_a_captured_call_without_a_graph_is_silent_at_every_replay():
    step = mg.capture(lambda x, y: (x * y) / (x - x))
    x = mg.tensor([1e30, 2.0], dtype=mg.float32)
    y = mg.tensor([1e30, 0.0], dtype=mg.float32)
    with mg.no_grad():
        for _ in range(4):                         # two recordings, then replays
            out = silently(step, x, y)
    assert np.isinf(out.numpy()[0]) and np.isnan(out.numpy()[1])
