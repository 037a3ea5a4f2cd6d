"""ops/torch_more.py, ops/gamma.py and torch_misc.py against PyTorch: the gamma family, i0,
gcd/lcm, heaviside, frexp/ldexp, nextafter, rsub, renorm and their in-place forms (float64
values and gradients, float32 values, result dtypes for integer, bool and half inputs,
poles, inf and NaN, errors); the dtype and shape helpers; torch's top-level in-place
functions; and the process-level settings. The statistics and creation functions are in
test_torch_more2.py."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from strategies import broadcastable_pair

import microgradnorm as mg
from microgradnorm import torch_misc
from microgradnorm.ops import gamma
from torch_compare import pair, same_call, same_error

ULPS = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6}


def same(call, *args, rtol=None):
    """``torch_compare.same_call`` with this file's tolerances (``ULPS``)."""
    return same_call(call, *args, ulps=ULPS, rtol=rtol)


def close(ours, theirs, rtol=1e-13, atol=0.0):
    """Equal to within rtol (atol), inf and NaN in the same places."""
    np.testing.assert_allclose(np.asarray(ours, np.float64), np.asarray(theirs, np.float64),
                               rtol=rtol, atol=atol)


def check(ours, theirs, inputs, rtol=1e-12, atol=1e-12):
    """Values, dtype, and the gradient of a random upstream into each input, against torch,
    relative to each value (the gamma family spans many decades)."""
    assert str(ours.dtype) == str(theirs.dtype)
    expected = theirs.detach().numpy()
    close(ours.detach().numpy(), expected, rtol, atol)
    upstream = np.asarray(np.random.default_rng(0).standard_normal(expected.shape))
    ours.backward(upstream.astype(expected.dtype))
    theirs.backward(torch.tensor(upstream, dtype=theirs.dtype))
    for a, b in inputs:
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            close(a.grad.numpy(), b.grad.numpy(), rtol, atol)


# the points where torch's kernels decide something: poles, ±0, the infinities, NaN, a tiny x
CORNERS = np.array([0.0, -0.0, -1.0, -2.0, -0.5, -2.5, 1.0, 2.0, 0.5, 1e-300, 1e-8, 9.5, 10.0,
                    25.0, 170.5, 1e17, np.inf, -np.inf, np.nan])


def sample(seed=0, shape=(40,)):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(-12, 12, shape[0] // 2), rng.uniform(0.01, 40, shape[0]
                                                                            - shape[0] // 2)])


# ----- the gamma family and i0 ----------------------------------------------------------------
UNARY = {"lgamma": torch.lgamma, "digamma": torch.digamma, "i0": torch.i0}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_special_unary_values_and_gradients_match_torch(name):
    for data in [sample(0), sample(1).reshape(4, 10), np.array(2.5), np.zeros((0, 3))]:
        x, xt = pair(data)
        check(getattr(mg, name)(x), UNARY[name](xt), [(x, xt)], atol=1e-12, rtol=1e-11)
    x, xt = pair(sample(2))
    check(getattr(x, name)(), getattr(xt, name)(), [(x, xt)], atol=1e-12, rtol=1e-11)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_special_unary_corners_and_their_gradients_are_torchs(name):
    x, xt = pair(CORNERS)
    ours, theirs = getattr(mg, name)(x), UNARY[name](xt)
    close(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    ours.backward(np.ones(CORNERS.shape))
    theirs.backward(torch.ones(CORNERS.shape, dtype=torch.float64))
    close(x.grad.numpy(), xt.grad.numpy(), rtol=1e-11)       # -inf, inf, NaN at the poles


@pytest.mark.parametrize("name", sorted(UNARY))
def test_special_unary_dtypes_and_float32_values_match_torch(name):
    ours = getattr(mg, name)(mg.tensor(sample(3).astype(np.float32)))
    theirs = UNARY[name](torch.tensor(sample(3).astype(np.float32)))
    assert ours.dtype == mg.float32           # torch's float32 kernels lose digits near
    close(ours.numpy(), theirs.numpy(), rtol=2e-6, atol=1e-6)     # digamma's root: atol
    for data in [np.array([1, 2, 7]), np.array([True, False]), np.array([1, 2], np.uint8),
                 np.array([0.5, 3.5], np.float16), np.array(4)]:
        same(lambda lib, x, name: getattr(lib, name)(x), data, name,
             rtol=2e-6 if data.dtype != np.float16 else None)
    same(lambda lib, x: lib.lgamma(x), np.array([1 + 2j]))        # complex: NotImplemented
    with pytest.raises(TypeError):
        getattr(mg, name)([1.0])


def test_the_array_functions_agree_with_their_oracles():
    # lgamma with math.lgamma; digamma with the log-gamma's centred difference; I0 with its
    # defining series in fractions-free float64; the polygammas with their series
    x = np.linspace(-30.25, 60, 2001)
    x = x[np.abs(x - np.round(x)) > 0.05]                     # away from the poles
    close(gamma.lgamma_array(x), [math.lgamma(v) for v in x], rtol=1e-12, atol=1e-14)
    h = 1e-5
    derivative = (gamma.lgamma_array(x + h) - gamma.lgamma_array(x - h)) / (2 * h)
    close(gamma.digamma_array(x), derivative, rtol=1e-6, atol=1e-6)
    a = np.linspace(0, 30, 301)
    term, series = np.ones_like(a), np.ones_like(a)
    for k in range(1, 150):                                   # Σ (a²/4)ᵏ / (k!)²
        term = term * (a * a / 4) / (k * k)
        series = series + term
    close(gamma.i0_array(a), series, rtol=1e-14)
    close(gamma.i1_array(a), np.gradient(gamma.i0_array(a), a, edge_order=2), rtol=5e-3,
          atol=1e-3)
    terms = 1 / (2.5 + np.arange(200000.0)) ** 4               # ψ'''(2.5) = 6 Σ 1/(2.5 + k)⁴
    tail = 1 / (3 * (200000 + 2.0) ** 3)                        # the rest, by its integral
    close(gamma.polygamma_array(3, np.array([2.5])), [6 * (terms.sum() + tail)], rtol=1e-13)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_polygamma_matches_torch_with_its_gradient_and_poles(n):
    x, xt = pair(sample(4))
    check(mg.polygamma(n, x), torch.polygamma(n, xt), [(x, xt)], atol=1e-10, rtol=1e-10)
    x, xt = pair(sample(5).reshape(2, 20))
    check(x.polygamma(n), xt.polygamma(n), [(x, xt)], atol=1e-10, rtol=1e-10)
    x, xt = pair(CORNERS[CORNERS > -1e3])
    ours, theirs = mg.polygamma(n, x), torch.polygamma(n, xt)
    close(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
    same(lambda lib, x, n: lib.polygamma(n, x), np.array([1, 2, 3]), n, rtol=2e-6)
    same(lambda lib, x, n: lib.polygamma(n, x), np.array([0.5, 3.0], np.float32), n, rtol=2e-6)


def test_polygamma_refuses_what_torch_refuses():
    x = np.array([1.0])
    for n in [-1, 1.0, "1"]:
        same(lambda lib, x, n: lib.polygamma(n, x), x, n)
    same(lambda lib, x: lib.polygamma(lib.tensor(2), x), x, rtol=1e-14)  # a 0-d integer n
    with pytest.raises(TypeError):
        mg.polygamma(1, [1.0])
    assert np.isnan(gamma.polygamma_array(2, np.array([-1e6 - 0.5]))[0])   # past the cap


def test_polygamma_of_high_orders_overflows_to_torchs_inf():
    # n! overflows float64 from n = 171: inf (or NaN times a zero), not an OverflowError
    same(lambda lib, x: lib.polygamma(171, x), np.array([1.0, 50.0, 300.0]))
    x, xt = pair(np.array([1.0, 50.0, 300.0]))
    mg.polygamma(170, x).sum().backward()
    torch.polygamma(170, xt).sum().backward()
    close(x.grad.numpy(), xt.grad.numpy())


def test_polygamma_sums_far_negative_inputs_up_to_the_cap():
    # the cap is x < -2**16 (NaN below); only the elements still summing are stepped
    data = np.array([-65530.5, -65535.5, -60000.25, 2.5])
    same(lambda lib, x: lib.polygamma(2, x), data, rtol=1e-10)
    assert np.isnan(gamma.polygamma_array(2, np.array([-65536.5]))).all()


def test_mvlgamma_matches_torch_with_its_gradient():
    for p in [1, 2, 3, 5]:
        x, xt = pair(np.random.default_rng(p).uniform(2.5, 9, (3, 4)))
        check(mg.mvlgamma(x, p), torch.mvlgamma(xt, p), [(x, xt)], atol=1e-11)
        x, xt = pair(np.array(4.25))
        check(x.mvlgamma(p), xt.mvlgamma(p), [(x, xt)], atol=1e-11)
    for data in [np.array([2, 3]), np.array([0.5, 3.0]), np.array([2.5, 3.5], np.float32),
                 np.zeros((0, 2))]:
        same(lambda lib, x: lib.mvlgamma(x, 2), data, rtol=2e-6)
    for p in [0, -1, 1.5]:
        same(lambda lib, x, p: lib.mvlgamma(x, p), np.array([2.5]), p)


# ----- gcd, lcm, heaviside, nextafter ---------------------------------------------------------
def test_gcd_and_lcm_match_torch_in_values_dtypes_and_errors():
    a, b = np.array([-4, 0, 0, 12, 7, 2**40]), np.array([6, 0, -5, 18, -21, 2**40 + 1])
    for name in ["gcd", "lcm"]:
        same(lambda lib, a, b, name: getattr(lib, name)(a, b), a, b, name)
        same(lambda lib, a, b, name: getattr(a, name)(b), a, b, name)
        same(lambda lib, a, b, name: getattr(lib, name)(a, b), np.array([4, 6], np.uint8),
             np.array([6, 9], np.int8), name)                        # promoted: int16
        same(lambda lib, a, b, name: getattr(lib, name)(a, b), np.array([[4], [6]], np.int32),
             np.array([6, 9, 0]), name)                              # broadcast
        same(lambda lib, a, b, name: getattr(lib, name)(a, b), np.array(8), np.array([6]),
             name)
        for bad in [np.array([4.0]), np.array([True])]:
            same(lambda lib, a, b, name: getattr(lib, name)(a, b), bad, bad, name)
        same(lambda lib, a, name: getattr(lib, name)(a, 6), np.array([4]), name)


def test_mvlgamma_refuses_bool_as_torch():
    same(lambda lib, x: lib.mvlgamma(x, 1), np.array([True, False]))
    same(lambda lib, x: lib.mvlgamma(x, 2), np.array([3, 4]), rtol=1e-6)


def test_lcm_takes_the_abs_after_the_product_as_torch():
    # torch wraps a / gcd · b first (a narrow dtype as C's int), then takes its abs
    for a, b, dtype in [([2**62, -2**62, 0, -4], [3 * 2**61, 3 * 2**61, 0, 6], np.int64),
                        ([-60, -128, 100, 0], [-45, 1, 3, 5], np.int8),
                        ([300, -2**15], [-7, 3], np.int16), ([200, 9], [3, 6], np.uint8)]:
        same(lambda lib, a, b: lib.lcm(a, b), np.array(a, dtype), np.array(b, dtype))


def test_heaviside_matches_torch_and_refuses_its_gradient():
    x = np.array([-1.0, 0.0, -0.0, 2.0, np.nan, np.inf, -np.inf])
    same(lambda lib, x, v: lib.heaviside(x, v), x, np.array([0.5]))
    same(lambda lib, x, v: lib.heaviside(x, v), x.reshape(-1, 1), np.array([0.5, 2.0]))
    same(lambda lib, x, v: x.heaviside(v), np.array([-1, 0, 2]), np.array([5]))
    same(lambda lib, x, v: lib.heaviside(x, v), np.array([True, False]), np.array([True]))
    same(lambda lib, x, v: lib.heaviside(x, v), x, np.array([5]))             # dtypes differ
    same(lambda lib, x, v: lib.heaviside(x, v), x, np.array(0.5, np.float32))
    same(lambda lib, x: lib.heaviside(x, 0.5), x)
    same(lambda lib, x: lib.heaviside(x, x), np.array([1j]))
    for lib in (mg, torch):
        y = lib.heaviside(lib.tensor([1.0, 0.0], requires_grad=True), lib.tensor([0.5, 0.5]))
        with pytest.raises(RuntimeError, match="heaviside"):
            y.sum().backward()


def test_nextafter_matches_torch_bit_for_bit_with_its_gradient():
    x = np.array([1.0, 2.0, 0.0, 0.0, -1.0, -1.0, np.inf, 3.0, np.nan, 5e-324, -0.0])
    y = np.array([3.0, 0.0, 1.0, -1.0, 0.0, -2.0, 0.0, 3.0, 1.0, 0.0, 1.0])
    for dtype in ["float64", "float32", "float16"]:
        same(lambda lib, x, y: lib.nextafter(x, y), x.astype(dtype), y.astype(dtype))
    same(lambda lib, x, y: lib.nextafter(x, y).float(), x, y)                  # mixed
    ours = mg.nextafter(mg.tensor(x).bfloat16(), mg.tensor(y).bfloat16()).float()  # its bits
    theirs = torch.nextafter(torch.tensor(x).bfloat16(), torch.tensor(y).bfloat16())
    np.testing.assert_array_equal(ours.numpy(), theirs.float().numpy())
    same(lambda lib, x, y: lib.nextafter(x, y), np.array([1, 2]), np.array([3, 0]))
    a, at = pair(np.array([1.0, 3.0]))
    b, bt = pair(np.array([[2.0, 0.0], [4.0, 5.0]]))
    check(mg.nextafter(a, b), torch.nextafter(at, bt), [(a, at), (b, bt)])


# ----- frexp, ldexp ---------------------------------------------------------------------------
def test_frexp_splits_as_torch_with_its_gradient():
    data = np.array([0.0, -0.0, 1.0, -3.5, 1e-310, 5e-324, np.inf, -np.inf, np.nan, 8.0, 0.1])
    for dtype in ["float64", "float32", "float16"]:
        for lib_result in [(mg.frexp(mg.tensor(data.astype(dtype))),
                            torch.frexp(torch.tensor(data.astype(dtype))))]:
            for ours, theirs in zip(*lib_result):
                assert str(ours.dtype) == str(theirs.dtype)
                np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours = mg.tensor([3.0, 0.75]).bfloat16().frexp()
    theirs = torch.tensor([3.0, 0.75]).bfloat16().frexp()
    np.testing.assert_array_equal(ours.mantissa.float().numpy(), theirs.mantissa.float().numpy())
    np.testing.assert_array_equal(ours.exponent.numpy(), theirs.exponent.numpy())
    assert ours.exponent is ours[1] and type(ours).__name__ == "frexp"
    x, xt = pair(np.array([[3.0, 0.0, -7.25], [1e-3, 64.0, 0.5]]))
    check(mg.frexp(x).mantissa, torch.frexp(xt).mantissa, [(x, xt)])
    for data in [np.array([1, 2]), np.array([True]), np.array([1j])]:
        same(lambda lib, x: lib.frexp(x)[0], data)


@pytest.mark.parametrize("exponent_dtype", ["int64", "int32", "bool", "float16", "float32",
                                            "float64"])
def test_ldexp_matches_torch_in_dtypes_values_and_gradients(exponent_dtype):
    exponents = np.array([3, 40, -2, 0, 150, -1074]).astype(exponent_dtype)
    for dtype in ["float16", "float32", "float64", "int64", "bool"]:
        values = np.array([1, 2, 3, 1, 1, 1]).astype(dtype)
        same(lambda lib, x, e: lib.ldexp(x, e), values, exponents, rtol=1e-6)
        same(lambda lib, x, e: x.ldexp(e), values[:, None], exponents, rtol=1e-6)  # broadcast
    same(lambda lib, x, e: lib.ldexp(x, e), np.array(1.5), exponents, rtol=1e-6)
    if exponent_dtype.startswith("float"):
        x, xt = pair(np.array([1.5, -2.0, 0.25]))
        e, et = pair(np.array([1.0, 0.5, -3.0]).astype(exponent_dtype))
        check(mg.ldexp(x, e), torch.ldexp(xt, et), [(x, xt), (e, et)], rtol=1e-3)
    elif exponent_dtype != "bool":                # (torch resizes an x that broadcasts)
        x, xt = pair(np.array([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]]))
        e = np.array([[1], [3]]).astype(exponent_dtype)
        check(mg.ldexp(x, mg.tensor(e)), torch.ldexp(xt, torch.tensor(e)), [(x, xt)])
        # a negative integer exponent: grad · 2^e (torch's backward gives 0, its integer 2^e)
        x = mg.tensor([1.5, -2.0], requires_grad=True)
        mg.ldexp(x, mg.tensor(np.array([-3, 2]).astype(exponent_dtype))).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.125, 4.0])


def test_ldexp_refuses_numbers_as_torch():
    same(lambda lib, x: lib.ldexp(x, 3), np.array([1.0]))
    same(lambda lib, e: lib.ldexp(2.0, e), np.array([1]))


# ----- rsub, renorm ---------------------------------------------------------------------------
def test_rsub_is_other_minus_alpha_input_as_torch():
    a, at = pair(np.array([1.0, 2.0, -3.0]))
    b, bt = pair(np.array([[3.0], [0.5]]))
    check(mg.rsub(a, b, alpha=2), torch.rsub(at, bt, alpha=2), [(a, at), (b, bt)])
    a, at = pair(np.array([1.0, 2.0]))
    check(mg.rsub(a, 3), torch.rsub(at, 3), [(a, at)])
    same(lambda lib, a: lib.rsub(a, 3.5), np.array([1, 2]))
    same(lambda lib, a: lib.rsub(a, 3, alpha=2), np.array([1, 2]))
    same(lambda lib, a: lib.rsub(a, 3, alpha=0.5), np.array([1, 2]))
    same(lambda lib, a: lib.rsub(a, 1), np.array([True]))
    same(lambda lib, a: lib.rsub(3, a), np.array([1.0]))


@pytest.mark.parametrize("p, dim, maxnorm", [(2, 0, 2.0), (1, 1, 3.0), (math.inf, 1, 2.0),
                                             (2, 0, 50.0), (3.5, -1, 1.0), (2, 2, 0.5),
                                             (0.5, 1, 4.0), (2, 0, 0.0)])
def test_renorm_matches_torch_with_the_norms_gradient(p, dim, maxnorm):
    data = np.random.default_rng(7).standard_normal((3, 4, 2)) * 2
    x, xt = pair(data)
    check(mg.renorm(x, p, dim, maxnorm), torch.renorm(xt, p, dim, maxnorm), [(x, xt)])
    x, xt = pair(data.astype(np.float32))
    check(x.renorm(p, dim, maxnorm), xt.renorm(p, dim, maxnorm), [(x, xt)], atol=1e-5,
          rtol=1e-5)


def test_renorm_refuses_what_torch_refuses():
    for args in [(2, 0, -2.0), (0, 0, 2.0), (-1, 0, 2.0), (2, 3, 2.0), (2, 0.5, 2.0)]:
        same(lambda lib, x, args: lib.renorm(x, *args), np.ones((2, 3)), args)
    same(lambda lib, x: lib.renorm(x, 2, 0, 2.0), np.ones(3))
    same(lambda lib, x: lib.renorm(x, 2, 0, 2.0), np.ones((2, 3), np.int64))


def test_renorm_of_half_precision_takes_the_norm_in_float32():
    # a float16 norm of [6e4, 6e4] overflows; a zero row's float16 scale 1 / 1e-7 too
    same(lambda lib, x: lib.renorm(x, 2, 0, 1.0),
         np.array([[6e4, 6e4], [3, 4]], np.float16))
    x, xt = pair(np.array([[0.0, 0.0], [3.0, 4.0]], np.float16))
    mg.renorm(x, 2, 0, 1.0).sum().backward()
    torch.renorm(xt, 2, 0, 1.0).sum().backward()
    assert x.grad.dtype == np.float16
    close(x.grad.numpy(), xt.grad.numpy(), rtol=2e-3)


# ----- the in-place forms ---------------------------------------------------------------------
IN_PLACE = [("lgamma_", (), np.array([0.5, 3.0, -2.5])),
            ("digamma_", (), np.array([0.5, 3.0, -2.5])),
            ("i0_", (), np.array([0.5, 3.0, -2.5])),
            ("polygamma_", (2,), np.array([0.5, 3.0, -2.5])),
            ("mvlgamma_", (2,), np.array([1.5, 3.0, 7.5])),
            ("renorm_", (2, 0, 1.0), np.array([[0.5, 3.0], [-2.5, 0.1]])),
            ("heaviside_", (np.array([0.5]),), np.array([0.5, 0.0, -2.5])),
            ("ldexp_", (np.array([2, 0, 3]),), np.array([0.5, 3.0, -2.5])),
            ("nextafter_", (np.array([1.0]),), np.array([0.5, 3.0, -2.5]))]


@pytest.mark.parametrize("name, args, data", IN_PLACE, ids=[c[0] for c in IN_PLACE])
def test_in_place_forms_match_torch_and_are_recorded(name, args, data):
    def run(lib):
        x = lib.tensor(data)
        given = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        assert getattr(x, name)(*given) is x
        return x
    same(run, rtol=1e-13)
    if name == "heaviside_":
        return
    leaf, leaf_t = pair(data)
    x, xt = leaf * 1.0, leaf_t * 1.0                            # non-leaves: recorded
    given, given_t = ([lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
                      for lib in (mg, torch))
    check(getattr(x, name)(*given), getattr(xt, name)(*given_t), [(leaf, leaf_t)])


def test_in_place_forms_refuse_as_torch_and_change_nothing():
    for call in [lambda lib, x: x.lgamma_(), lambda lib, x: x.i0_(),
                 lambda lib, x: x.polygamma_(1), lambda lib, x: x.ldexp_(lib.tensor([1.5]))]:
        x = mg.tensor([1, 2, 3])
        same_error(lambda call=call, x=x: call(mg, x), lambda call=call: call(torch,
                                                                             torch.tensor([1])))
        np.testing.assert_array_equal(x.numpy(), [1, 2, 3])
    for name in ["gcd_", "lcm_"]:
        same(lambda lib, a, b, name: getattr(a, name)(b), np.array([4, 6, -9]),
             np.array([6, 4, 6]), name)
        same(lambda lib, a, b, name: getattr(lib, name)(a, b), np.array([4, 6, -9]),
             np.array([6, 4, 6]), name)
        same(lambda lib, a, b, name: getattr(a, name)(b), np.array([4, 6], np.int8),
             np.array([600, 4]), name)                     # computed in int64, then cast
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.lgamma_()
    with pytest.raises(TypeError):
        mg.i0_([1.0])


# ----- torch's top-level in-place functions ---------------------------------------------------
TOP_LEVEL = ["abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
             "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "cos_", "cosh_",
             "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_",
             "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
             "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_",
             "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "zero_", "i0_"]


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_top_level_in_place_functions_are_the_methods(name):
    data = np.array([0.3, 0.6, 0.9]) if "cosh" not in name else np.array([1.5, 2.0, 3.0])
    same(lambda lib, x, name: getattr(lib, name)(x) if getattr(lib, name)(x) is x else None,
         data, name, rtol=1e-14)
    x = mg.tensor(data)
    assert getattr(mg, name)(x) is x
    with pytest.raises(TypeError, match=name):
        getattr(mg, name)(data.tolist())


def test_top_level_in_place_functions_with_arguments_and_fill():
    for call in [lambda lib, x: lib.clamp_(x, 0.4, 0.8), lambda lib, x: lib.clamp_min_(x, 0.5),
                 lambda lib, x: lib.clamp_max_(x, 0.5), lambda lib, x: lib.clip_(x, max=0.2),
                 lambda lib, x: lib.fill_(x, 7), lambda lib, x: lib.xlogy_(x, 2.0),
                 lambda lib, x: lib.gcd_(x.long(), lib.tensor([4])),
                 lambda lib, x: lib.ldexp_(x, lib.tensor([2])),
                 lambda lib, x: lib.fill(x, 2.5), lambda lib, x: lib.detach_(x)]:
        same(call, np.array([0.3, 0.6, 0.9]))
    leaf, leaf_t = pair(np.array([0.3, 0.6]))
    check(mg.fill(leaf, 2.0) * leaf, torch.fill(leaf_t, 2.0) * leaf_t, [(leaf, leaf_t)])
    value, value_t = pair(np.array(1.5))
    x, xt = mg.zeros(3, dtype=mg.float64), torch.zeros(3, dtype=torch.float64)
    check(mg.fill(x, value), torch.fill(xt, value_t), [(value, value_t)])


# ----- dtypes and shapes ----------------------------------------------------------------------
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def test_promote_types_and_can_cast_follow_torchs_tables():
    for first in DTYPES:
        for second in DTYPES:
            ours = mg.promote_types(mg.dtypes.as_dtype(first), mg.dtypes.as_dtype(second))
            theirs = torch.promote_types(getattr(torch, first), getattr(torch, second))
            if theirs != torch.complex32:                     # no NumPy complex32
                assert str(ours) == str(theirs), (first, second)
            assert mg.can_cast(mg.dtypes.as_dtype(first), mg.dtypes.as_dtype(second)) == \
                torch.can_cast(getattr(torch, first), getattr(torch, second)), (first, second)
    assert mg.promote_types("int32", mg.float32) == mg.float32
    for bad in [3, None, "nonsense"]:
        for call in [mg.promote_types, mg.can_cast]:
            with pytest.raises(TypeError):
                call(mg.float32, bad)


def test_result_type_types_numbers_as_torch():
    operands = [np.array([1, 2]), np.array([1.0, 2.0], np.float32), np.array(1.0),
                np.array([1.0], np.float16), np.array(3, np.int32), np.array([True]),
                np.array([1], np.uint8), np.array([1.0 + 2j], np.complex64), 1, 2.5, True,
                -1, 1j]
    for a in operands:
        for b in operands:
            if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
                continue
            if torch.result_type(torch.tensor(a) if isinstance(a, np.ndarray) else a, torch.tensor(
                    b) if isinstance(b, np.ndarray) else b) == torch.complex32:
                continue                                      # no NumPy complex32
            same(lambda lib, a, b: lib.zeros(1, dtype=lib.result_type(a, b)), a, b)
    same(lambda lib, a: lib.zeros(1, dtype=lib.result_type(tensor=a, other=2.0)),
         np.array([1, 2]))
    for a, b in [(1, 2.0), (1, 2), (True, 2), (True, False), (1, 2j), (2.0, 1j)]:
        assert str(mg.result_type(a, b)) == str(torch.result_type(a, b))
    with pytest.raises(TypeError):
        mg.result_type(mg.tensor([1]), "a")


def test_broadcast_shapes_matches_torch():
    for shapes in [((2, 1), (3,)), ((2, 1), 3), (), ((2, 1), (3, 2, 2)), ((0, 1), (3,)),
                   ((0, 1), (1,)), ([2, 1], torch.Size([3])), ((5,),), (1, 1), ((1, 4), (3, 1))]:
        ours = mg.broadcast_shapes(*shapes)
        assert ours == torch.broadcast_shapes(*shapes) and isinstance(ours, mg.Size)
    for shapes in [((2, 2), (3,)), ((2, 3), (2, 1, 4))]:
        same_error(lambda shapes=shapes: mg.broadcast_shapes(*shapes),
                   lambda shapes=shapes: torch.broadcast_shapes(*shapes))
    with pytest.raises(ValueError):
        mg.broadcast_shapes((2, -1), (3,))
    with pytest.raises(TypeError):
        mg.broadcast_shapes((2.0,), (3,))


@settings(max_examples=20, deadline=None)
@given(shapes=broadcastable_pair(max_dims=3, max_side=3))
def test_binary_functions_broadcast_drawn_shapes_as_torch(shapes):
    rng = np.random.default_rng(sum(shapes[0]) + 7 * len(shapes[1]))
    a, b = rng.uniform(-3, 3, shapes[0]).round(1), rng.uniform(-3, 3, shapes[1]).round(1)
    assert mg.broadcast_shapes(*shapes) == torch.broadcast_shapes(*shapes)
    same(lambda lib, a, b: lib.heaviside(a, b), a, b)
    same(lambda lib, a, b: lib.nextafter(a, b), a, b)
    same(lambda lib, a, b: lib.gcd(a, b), (a * 10).astype(np.int64), (b * 10).astype(np.int64))
    x, xt = pair(a)
    e, et = pair(b)
    check(mg.ldexp(x, e), torch.ldexp(xt, et), [(x, xt), (e, et)])
    x, xt = pair(np.abs(a) + 0.5)
    check(mg.lgamma(x) * mg.digamma(x), torch.lgamma(xt) * torch.digamma(xt), [(x, xt)],
          atol=1e-12)


# ----- the process-level settings -------------------------------------------------------------
@pytest.fixture
def fresh_settings(monkeypatch):
    """The recorded settings back as they were after each test."""
    monkeypatch.setattr(torch_misc, "_settings", dict(torch_misc._settings))
    threads = mg.get_num_threads()
    yield
    if torch_misc._settings["threads"] is not None:
        torch_misc.set_num_threads(threads)


def test_thread_counts_are_checked_as_torch_and_reach_the_blas(fresh_settings):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    assert isinstance(mg.get_num_threads(), int) and mg.get_num_threads() >= 1
    mg.set_num_threads(1)
    assert mg.get_num_threads() == 1
    blas = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    assert set(blas) <= {1}
    for bad in [0, -1, 2.0, "2", True]:
        same_error(lambda bad=bad: mg.set_num_threads(bad),
                   lambda bad=bad: torch.set_num_threads(bad))
        assert mg.get_num_threads() == 1
    for bad in [0, 2.0]:
        same_error(lambda bad=bad: mg.set_num_interop_threads(bad),
                   lambda bad=bad: torch.set_num_interop_threads(bad))
    mg.set_num_interop_threads(3)
    assert mg.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="interop"):
        mg.set_num_interop_threads(2)


def test_numpy_thread_counts_and_a_bool_debug_mode_are_taken_as_torch(fresh_settings):
    mg.set_num_threads(np.int64(2))                  # torch takes any integral number
    assert mg.get_num_threads() == 2 and type(mg.get_num_threads()) is int
    same_error(lambda: mg.set_num_threads(np.int64(0)), lambda: torch.set_num_threads(
        np.int64(0)))
    try:
        for mode in [True, False]:                   # a bool is an int to torch (True: warn)
            for lib in (mg, torch):
                lib.set_deterministic_debug_mode(mode)
            assert mg.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
        for bad in [np.int64(1), np.bool_(True)]:
            same_error(lambda bad=bad: mg.set_deterministic_debug_mode(bad),
                       lambda bad=bad: torch.set_deterministic_debug_mode(bad))
    finally:
        torch.use_deterministic_algorithms(False)


def test_matmul_precision_and_determinism_are_recorded_as_torch(fresh_settings):
    assert mg.get_float32_matmul_precision() == "highest"
    for value in ["high", "medium", "highest"]:
        mg.set_float32_matmul_precision(value)
        assert mg.get_float32_matmul_precision() == value
    with pytest.warns(UserWarning, match="no effect"):
        mg.set_float32_matmul_precision("low")
    assert mg.get_float32_matmul_precision() == "highest"
    same_error(lambda: mg.set_float32_matmul_precision(3),
               lambda: torch.set_float32_matmul_precision(3))
    for calls in [[("use", True, True)], [("use", True, False)], [("debug", "warn")],
                  [("debug", 2)], [("debug", "default")], [("use", True, True), ("use", False,
                                                                                True)]]:
        for lib in (mg, torch):
            for call in calls:
                if call[0] == "use":
                    lib.use_deterministic_algorithms(call[1], warn_only=call[2])
                else:
                    lib.set_deterministic_debug_mode(call[1])
        state = [(lib.are_deterministic_algorithms_enabled(),
                  lib.is_deterministic_algorithms_warn_only_enabled(),
                  lib.get_deterministic_debug_mode()) for lib in (mg, torch)]
        assert state[0] == state[1], calls
    torch.use_deterministic_algorithms(False)
    for bad in ["foo", 3, 1.0]:
        same_error(lambda bad=bad: mg.set_deterministic_debug_mode(bad),
                   lambda bad=bad: torch.set_deterministic_debug_mode(bad))
    same_error(lambda: mg.use_deterministic_algorithms(1),
               lambda: torch.use_deterministic_algorithms(1))
    assert not mg.are_deterministic_algorithms_enabled()


def test_default_device_is_the_cpu_until_set_and_a_block_overrides_it(fresh_settings):
    assert mg.get_default_device() == mg.device("cpu") == "cpu"
    mg.set_default_device("cpu")
    mg.set_default_device(mg.device("cpu"))
    same_error(lambda: mg.set_default_device("foo"), lambda: torch.set_default_device("foo"))
    try:
        mg.set_default_device("cuda")              # taken on any machine, as torch's
        if mg.cuda.is_available():
            assert repr(mg.get_default_device()) == repr(torch.device("cuda", 0))
        else:                                      # torch's CPU build: its AssertionError
            with pytest.raises(RuntimeError, match="GPU"):
                mg.get_default_device()
        with mg.device("cpu") as block:            # a block wins, in its thread
            assert block == "cpu" and mg.get_default_device() == "cpu"
            assert mg.zeros(2).device == mg.nn.Linear(2, 2).weight.device == "cpu"
        assert mg.backend.default_device() == "cuda"
        assert mg.ones(1, device="cpu").device == "cpu"     # an explicit device wins
        assert mg.from_numpy(np.ones(1)).device == "cpu"     # NumPy's memory stays there
    finally:
        mg.set_default_device(None)
    assert mg.zeros(2).device == "cpu" and mg.get_default_device() == "cpu"
    assert mg.zeros(2, device=mg.device("meta")).is_meta     # shapes only, no data


def test_compile_returns_the_model_itself_with_and_without_arguments():
    model = mg.nn.Linear(2, 3)
    assert mg.compile(model) is model
    assert mg.compile(model, mode="max-autotune", fullgraph=True, dynamic=False,
                      backend="inductor") is model

    @mg.compile
    def f(x):
        return x * 2

    @mg.compile(mode="reduce-overhead")
    def g(x):
        return x + 1
    assert f(mg.tensor([1.0])).item() == 2.0 and g(mg.tensor([1.0])).item() == 2.0
    assert f.__name__ == "f" and g.__name__ == "g"
    for kwargs in [{"mode": "foo"}, {"mode": "default", "options": {}}]:
        with pytest.raises(RuntimeError, match="mode"):             # torch's class
            mg.compile(f, **kwargs)
    with pytest.raises(AssertionError, match="callable"):           # torch's class
        mg.compile(3)
    with pytest.raises(TypeError):
        mg.compile(f, bogus=1)


def test_inference_mode_anomaly_warnings_and_denormals_are_answered_as_torch(fresh_settings):
    for lib in (mg, torch):
        assert not lib.is_inference_mode_enabled()
        with lib.inference_mode():
            assert lib.is_inference_mode_enabled()
            with lib.inference_mode(False):
                assert not lib.is_inference_mode_enabled() and lib.is_grad_enabled()
            with lib.no_grad():
                with lib.inference_mode(False):      # grad on again, even inside no_grad
                    assert lib.is_grad_enabled()
                assert lib.is_inference_mode_enabled()
        assert not lib.is_inference_mode_enabled()
        assert lib.inference_mode()(lib.is_inference_mode_enabled)()
    for lib in (mg, torch):
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
        lib.set_anomaly_enabled(True, check_nan=False)
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        lib.set_anomaly_enabled(False)
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
    same_error(lambda: mg.set_anomaly_enabled(1), lambda: torch.set_anomaly_enabled(1))
    mg.set_warn_always(True)
    assert mg.is_warn_always_enabled()
    mg.set_warn_always(False)
    same_error(lambda: mg.set_warn_always(1), lambda: torch.set_warn_always(1))
    assert mg.set_flush_denormal(True) is False and mg.set_flush_denormal(False) is False
    same_error(lambda: mg.set_flush_denormal(1), lambda: torch.set_flush_denormal(1))
