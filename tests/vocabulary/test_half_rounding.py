"""Where torch's float16 and bfloat16 kernels do not compute in float32 and round once,
bit for bit against PyTorch: ``div`` with ``rounding_mode`` (a divisor of one element read
unrounded in float32; two tensors rounded at each step of c10's algorithm) and ``logit``
(eps, 1 - eps and each step in the tensor's dtype, its gradient too), with logit's gradient
at -0.0."""

import numpy as np
import pytest
import torch

import microgradnorm as mg

HALF = {"float16": torch.float16, "bfloat16": torch.bfloat16}
RNG = np.random.default_rng(0)


def ours(values, dtype, requires_grad=False):
    return mg.tensor(np.asarray(values, np.float32)).to(dtype).detach().requires_grad_(
        requires_grad)


def theirs(values, dtype, requires_grad=False):
    return torch.tensor(np.asarray(values, np.float32)).to(HALF[dtype]).requires_grad_(
        requires_grad)


def bits_equal(got, expected):
    """Equal values with equal signs (0.0 and -0.0 differ), NaN where torch has NaN."""
    got, expected = got.detach().to(mg.float32).numpy(), expected.detach().float().numpy()
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan], expected[~nan])
    np.testing.assert_array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))


def dividends_and_divisors(n=4096):
    a = RNG.standard_normal(n) * RNG.choice([1, 10, 100, 1000], n)
    b = RNG.standard_normal(n) * RNG.choice([0.01, 1, 10], n)
    b[:20], a[:5], a[5:10], b[10:15], a[15:18], a[18:30] = 0, 0, np.inf, -np.inf, np.nan, -0.0
    return a.astype(np.float32), b.astype(np.float32)


# ----- div with rounding_mode ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", sorted(HALF))
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounded_of_two_half_tensors(mode, dtype):
    a, b = dividends_and_divisors()
    got = mg.div(ours(a, dtype), ours(b, dtype), rounding_mode=mode)
    assert str(got.dtype) == f"torch.{dtype}"
    bits_equal(got, torch.div(theirs(a, dtype), theirs(b, dtype), rounding_mode=mode))
    # broadcast: (64, 1) by (1, 64)
    got = mg.div(ours(a[:64, None], dtype), ours(b[None, 100:164], dtype), rounding_mode=mode)
    bits_equal(got, torch.div(theirs(a[:64, None], dtype), theirs(b[None, 100:164], dtype),
                              rounding_mode=mode))


@pytest.mark.parametrize("dtype", sorted(HALF))
@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize("number", [0.1, 0.3, -0.7, 7, 1e-3])
def test_div_rounded_by_a_number_or_one_element(number, mode, dtype):
    a, _ = dividends_and_divisors(1024)

    def cases(lib, make):
        x = make(a, dtype)
        return [lib.div(x, number, rounding_mode=mode),              # read in float32
                lib.div(number, x, rounding_mode=mode),              # rounded to dtype
                lib.div(x, make([number], dtype), rounding_mode=mode),   # one element
                lib.div(x, lib.tensor(number, dtype=lib.float64), rounding_mode=mode),
                lib.div(make(a[40], dtype), number, rounding_mode=mode),   # 0-d
                lib.div(number, make(a[41], dtype), rounding_mode=mode)]
    for got, expected in zip(cases(mg, ours), cases(torch, theirs)):
        assert str(got.dtype) == str(expected.dtype)
        bits_equal(got, expected)


def test_div_rounded_examples():
    for dtype, mode, expected in (("float16", "floor", 14), ("bfloat16", "trunc", 15)):
        got = mg.div(ours([1.5], dtype), 0.1, rounding_mode=mode)
        assert got.item() == expected == torch.div(theirs([1.5], dtype), 0.1,
                                                   rounding_mode=mode).item()
    x = ours([1.5], "float16")
    x.div_(0.1, rounding_mode="floor")                 # in place: the same kernel
    assert x.item() == 14


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounded_in_single_and_double_precision(mode, dtype):
    a, b = (v.astype(dtype) for v in dividends_and_divisors(2048))
    for args in ((a, b), (a, 0.1), (0.1, a)):
        got = mg.div(*[mg.tensor(v) if isinstance(v, np.ndarray) else v for v in args],
                     rounding_mode=mode)
        expected = torch.div(*[torch.tensor(v) if isinstance(v, np.ndarray) else v
                               for v in args], rounding_mode=mode)
        assert str(got.dtype) == str(expected.dtype)
        bits_equal(got, expected)


# ----- logit ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", sorted(HALF))
@pytest.mark.parametrize("eps", [None, 1e-6, 1e-3, 0.1, 0.3])
def test_logit_in_half_precision(eps, dtype):
    x = np.concatenate([RNG.uniform(-0.1, 1.1, 2000), [0, -0.0, 1, 0.5, 1e-6, 1 - 1e-6,
                                                        0.1, 0.9, np.nan]])
    upstream = RNG.standard_normal(x.size)
    a, b = ours(x, dtype, requires_grad=True), theirs(x, dtype, requires_grad=True)
    got, expected = mg.logit(a, eps), torch.logit(b, eps)
    assert str(got.dtype) == f"torch.{dtype}"
    bits_equal(got, expected)
    got.backward(ours(upstream, dtype).numpy())
    expected.backward(theirs(upstream, dtype))
    bits_equal(a.grad, b.grad)


def test_logit_examples():
    # 1 - 1e-6 rounds to 1 in float16: inf, as torch's
    assert mg.logit(ours([1.0], "float16"), eps=1e-6).item() == float("inf")
    # eps rounds to x's dtype: fp16(0.1) is inside [eps, 1 - eps], where the gradient flows
    for dtype in HALF:
        x, t = ours([0.1], dtype, True), theirs([0.1], dtype, True)
        mg.logit(x, eps=0.1).backward(ours([1.0], dtype).numpy())
        torch.logit(t, eps=0.1).backward(theirs([1.0], dtype))
        assert x.grad.item() == t.grad.item() > 11


@pytest.mark.parametrize("eps", [None, 0.0])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_logit_gradient_at_zero_and_one(dtype, eps):
    # grad / (x (1 - x)) is +inf at -0.0 as at 0 and 1 (torch's kernel, a few elements)
    x = np.array([-0.0, 0.0, 1.0])
    for upstream, sign in ((np.ones(3), 1), (-np.ones(3), -1)):
        a = mg.tensor(x.astype(dtype), requires_grad=True)
        b = torch.tensor(x.astype(dtype), requires_grad=True)
        mg.logit(a, eps).backward(upstream.astype(dtype))
        torch.logit(b, eps).backward(torch.tensor(upstream.astype(dtype)))
        np.testing.assert_array_equal(a.grad.numpy(), sign * np.full(3, np.inf))
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
