"""ops/binary.py against PyTorch: add/sub/mul/div by name with alpha and rounding_mode, the
two-argument functions (atan2, hypot, logaddexp, copysign, fmax, xlogy, float_power, pow
with a tensor exponent), lerp/addcmul/addcdiv, the in-place forms and the comparison
aliases: float64 values and gradients (singular points included), result dtypes, numbers
on either side, errors, and a hand-written Adam loop step for step beside torch's."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from strategies import arrays, broadcastable_pair

import microgradnorm as mg
from torch_compare import same_call

NAN, INF = float("nan"), float("inf")


def both(array, requires_grad=True):
    return mg.tensor(array, requires_grad=requires_grad), \
        torch.tensor(array, requires_grad=requires_grad)


def close(ours, theirs, atol=1e-12, rtol=1e-13):
    """Equal to within tolerances, with inf and NaN in the same places (NaN == NaN)."""
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=atol)


def check(ours, theirs, inputs, atol=1e-12, upstream=None):
    """Values, dtype, and the gradient of an upstream (random by default) into each input."""
    assert str(ours.dtype) == str(theirs.dtype), (ours, theirs)
    expected = theirs.detach().numpy()
    close(ours.detach().numpy(), expected, atol)
    if upstream is None:
        upstream = np.random.default_rng(0).standard_normal(expected.shape)
    ours.backward(np.asarray(upstream, dtype=expected.dtype))
    theirs.backward(torch.tensor(np.asarray(upstream, dtype=expected.dtype)))
    for a, b in inputs:
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            assert a.grad.dtype == np.dtype(str(b.grad.dtype).removeprefix("torch."))
            close(a.grad.numpy(), b.grad.numpy(), atol)


ULPS = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 3e-7, "complex64": 3e-7,
        "complex128": 1e-15}


def same(call, *args, rtol=None):
    """``torch_compare.same_call`` with this file's tolerances (``ULPS``)."""
    return same_call(call, *args, ulps=ULPS, rtol=rtol)


def sample(shape, seed=0, positive=False):
    data = np.random.default_rng(seed).standard_normal(shape) * 2
    return np.abs(data) + 0.1 if positive else data


# the two-argument functions: (positive operands?, numbers allowed as input / other)
BINARY = {"atan2": (False, ()), "arctan2": (False, ()), "hypot": (False, ()),
          "logaddexp": (False, ()), "logaddexp2": (False, ()), "copysign": (False, (1,)),
          "fmax": (False, ()), "fmin": (False, ()), "xlogy": (True, (0, 1)),
          "float_power": (True, (0, 1)), "pow": (True, (0, 1)), "add": (False, (0, 1)),
          "sub": (False, (0, 1)), "mul": (False, (0, 1)), "div": (False, (0, 1)),
          "subtract": (False, (0, 1)), "multiply": (False, (0, 1)), "divide": (False, (0, 1)),
          "true_divide": (False, (0, 1))}
SHAPES = [((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3)), ((2, 3), ()), ((0, 2), (2,)),
          ((), ())]


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_and_gradients_match_torch(name):
    positive = BINARY[name][0]
    for i, (shape_a, shape_b) in enumerate(SHAPES):
        a, at = both(sample(shape_a, i, positive))
        b, bt = both(sample(shape_b, i + 10, positive))
        check(getattr(mg, name)(a, b), getattr(torch, name)(at, bt), [(a, at), (b, bt)])
        a, at = both(sample(shape_a, i, positive))          # the method form, float32 too
        b, bt = both(sample(shape_b, i + 10, positive).astype(np.float32))
        check(getattr(a, name)(b), getattr(at, name)(bt), [(a, at), (b, bt)], atol=1e-6)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_dtypes_numbers_and_refusals_match_torch(name):
    operands = [np.array([1, -2, 3]), np.array([True, False, True]), np.array([2, 3], np.uint8),
                np.array([1.5, -2.5, 0.5], np.float16), np.array([0.5, 1.5, -1.0], np.float32),
                np.array(2.0), np.array(3, np.int32), np.array([1 + 2j, -1j], np.complex64),
                2, -1.5, True]
    for a in operands:
        for b in operands:
            if {type(a), type(b)} <= {int, float, bool} or (
                    np.shape(a) and np.shape(b) and np.shape(a) != np.shape(b)):
                continue
            if name == "pow" and _is_number(a) and np.asarray(b).dtype.kind == "c":
                continue                    # a number to a complex power: not implemented
            same(lambda lib, a, b: getattr(lib, name)(a, b), a, b)
    with pytest.raises(TypeError):
        getattr(mg, name)(mg.ones(2), [1.0, 2.0])


def _is_number(value):
    return isinstance(value, (int, float, bool))


def test_numbers_on_both_sides_match_torch():
    for name in ["add", "sub", "mul", "div", "true_divide", "multiply", "subtract"]:
        for a, b in [(2, 3), (2.5, 3), (True, True), (7, 2.0)]:
            if name in ("sub", "subtract") and a is True:
                continue
            same(lambda lib, a, b, name=name: getattr(lib, name)(a, b), a, b)
    same(lambda lib: lib.div(-7, 2, rounding_mode="floor"))
    same(lambda lib: lib.add(2, 3, alpha=2))
    for name in ["atan2", "xlogy", "copysign", "float_power", "hypot"]:
        same(lambda lib, name=name: getattr(lib, name)(2, 3))


# ----- singular points ------------------------------------------------------------------------
CORNERS = {
    "atan2": ([0.0, 1e-200, 1e-155, 0.0, -0.0, INF, NAN, 1.0, 0.0],
              [0.0, 1e-200, 0.0, -1.0, -1.0, INF, 1.0, INF, 1e-155]),
    "hypot": ([0.0, 3.0, INF, NAN, -0.0], [0.0, 4.0, 1.0, 1.0, 0.0]),
    "logaddexp": ([-INF, INF, 1.0, INF, NAN, -INF], [-INF, INF, 2.0, 1.0, 1.0, 3.0]),
    "logaddexp2": ([-INF, INF, 1.0, INF, -INF], [-INF, INF, 2.0, 1.0, 3.0]),
    "copysign": ([0.0, -0.0, 1.0, -2.0, NAN, 3.0], [-1.0, 1.0, -0.0, 3.0, -1.0, NAN]),
    "fmax": ([1.0, 2.0, NAN, 1.0, NAN, -0.0, 0.0], [1.0, 1.0, 1.0, NAN, NAN, 0.0, -0.0]),
    "fmin": ([1.0, 2.0, NAN, 1.0, NAN, -0.0, 0.0], [1.0, 1.0, 1.0, NAN, NAN, 0.0, -0.0]),
    "xlogy": ([0.0, 0.0, 0.0, 1.0, 2.0, -1.0, 0.0, 0.0, NAN],
              [0.0, NAN, 2.0, 0.0, 3.0, -1.0, INF, -1.0, 1.0]),
    "pow": ([0.0, 0.0, 0.0, 0.0, -2.0, 2.0, 0.0, -2.0, -0.0, INF, 1.0],
            [0.0, 0.5, 2.0, -1.0, 2.0, 0.5, 1.0, 0.5, -0.0, -1.0, NAN]),
    "float_power": ([0.0, 0.0, 0.0, 0.0, -2.0, -3.0], [0.0, 0.5, 2.0, -1.0, 2.0, 3.0]),
    "div": ([1.0, 0.0, -1.0, INF], [0.0, 0.0, 0.0, INF]),
}


@pytest.mark.parametrize("name", sorted(CORNERS))
def test_gradients_at_singular_points_match_torch(name):
    a_data, b_data = (np.array(v) for v in CORNERS[name])
    for upstream in [None, np.zeros(a_data.shape)]:      # a zero upstream: xlogy(0, ·)
        a, at = both(a_data)
        b, bt = both(b_data)
        check(getattr(mg, name)(a, b), getattr(torch, name)(at, bt), [(a, at), (b, bt)],
              upstream=upstream)


def test_a_number_beside_the_tensor_gets_torchs_gradient():
    data = np.array([0.0, 1.0, 2.0, -1.0])
    for call in [lambda lib, x: lib.xlogy(x, 2.0), lambda lib, x: lib.xlogy(x, 0.0),
                 lambda lib, x: lib.xlogy(2.0, x), lambda lib, x: lib.xlogy(0.0, x),
                 lambda lib, x: lib.copysign(x, -0.0), lambda lib, x: lib.float_power(x, 2),
                 lambda lib, x: lib.float_power(2.5, x), lambda lib, x: lib.pow(x, x[1]),
                 lambda lib, x: lib.add(3, x, alpha=-2), lambda lib, x: lib.sub(3.0, x),
                 lambda lib, x: lib.div(1.5, x), lambda lib, x: lib.mul(x, 2.5)]:
        x, xt = both(data)
        check(call(mg, x), call(torch, xt), [(x, xt)])


# ----- add and sub with alpha ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["add", "sub", "subtract"])
def test_alpha_scales_other_as_torch(name):
    for alpha in [2, -0.5, 0.37, 0]:
        for shape_a, shape_b in SHAPES:
            a, at = both(sample(shape_a, 1))
            b, bt = both(sample(shape_b, 2))
            check(getattr(mg, name)(a, b, alpha=alpha), getattr(torch, name)(at, bt, alpha=alpha),
                  [(a, at), (b, bt)])
        a, at = both(sample((3,), 1))
        check(getattr(a, name)(1.5, alpha=alpha), getattr(at, name)(1.5, alpha=alpha),
              [(a, at)])
    a, b = sample((100,), 3), sample((100,), 4)
    for dtype in ["float32", "float16"]:         # one rounding of a + alpha·b: within an ulp
        same(lambda lib, a, b: getattr(lib, name)(a, b, alpha=0.37), a.astype(dtype),
             b.astype(dtype))
        same(lambda lib, a: getattr(lib, name)(a, 2.5, alpha=-3.3), a.astype(dtype))
    a, at = both(np.array([1 + 2j, -1j]))
    b, bt = both(np.array([0.5 - 1j, 2j]))
    check(getattr(mg, name)(a, b, alpha=2 - 1j), getattr(torch, name)(at, bt, alpha=2 - 1j),
          [(a, at), (b, bt)])


def test_alpha_dtypes_and_refusals_match_torch():
    ints, bools = np.array([1, 2, -3]), np.array([True, False, True])
    floats, uint8 = np.array([0.5, 1.5, 2.5], np.float32), np.array([1, 2, 250], np.uint8)
    for name in ["add", "sub"]:
        for a, b, alpha in [(ints, ints, 2), (ints, ints, 0.5), (ints, ints, True),
                            (ints, floats, 0.5), (floats, ints, 0.5), (bools, bools, 2),
                            (bools, bools, True), (bools, bools, 0), (ints, 2, 1.0),
                            (ints, True, 2), (uint8, uint8, 3), (uint8, 2, -1),
                            (floats, floats, 1j), (floats, 2, None), (floats, ints, 1),
                            (ints, ints, np.int64(3)), (floats, 1, np.float64(0.25))]:
            same(lambda lib, a, b, alpha, name=name: getattr(lib, name)(a, b, alpha=alpha),
                 a, b, alpha)
    same(lambda lib, a: lib.add(a, 2, alpha=lib.tensor(2.0)), floats)
    same(lambda lib, a: lib.add(a, 2, alpha=lib.tensor([2.0, 3.0])), floats)
    with pytest.raises(TypeError):
        mg.add(mg.ones(2), mg.ones(2), 2)               # alpha is keyword-only, as torch's
    with pytest.raises(TypeError):
        mg.mul(mg.ones(2), 2, alpha=2)
    with pytest.raises(ValueError, match="broadcast"):
        mg.add(mg.ones(2), mg.ones(3), alpha=2)
    for call in [lambda: mg.ones(2).atan2(mg.ones(2), out=mg.ones(2)),  # methods: no out=
                 lambda: mg.add(mg.ones(2), 1, out=[0.0, 0.0]),         # out= not a Tensor
                 lambda: mg.ones(2).addcmul(mg.ones(2), mg.ones(2), out=mg.ones(2))]:
        with pytest.raises(TypeError, match="out"):
            call()


# ----- div with rounding_mode -----------------------------------------------------------------
def test_div_rounding_modes_match_torch_in_values_dtypes_and_zero_gradients():
    a = np.array([7.0, -7.0, 7.5, -7.5, 0.0, 1.0, -1.0, 0.0, INF, 3.0, -0.0])
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 0.0, 0.0, 0.0, 2.0, INF, 5.0])
    for mode in ["trunc", "floor"]:
        for dtype in ["float64", "float32", "float16"]:
            same(lambda lib, a, b, mode=mode: lib.div(a, b, rounding_mode=mode), a.astype(dtype),
                 b.astype(dtype))
        x, xt = both(a)
        y, yt = both(b)
        check(mg.div(x, y, rounding_mode=mode), torch.div(xt, yt, rounding_mode=mode),
              [(x, xt), (y, yt)], upstream=np.full(a.shape, INF))
        ints = np.array([7, -7, 7, -7, 0, 9, -9, 1])
        divisors = np.array([2, 2, -2, -2, 3, 4, 4, -1])
        for left, right in [(ints, divisors), (ints, 2), (ints, 2.5), (ints.astype(np.uint8), 3),
                            (-7, np.array(2)), (ints, np.array(-3, np.int32)),
                            (np.array([True]), np.array([True])), (ints, np.zeros(8, int)),
                            (a.astype(np.complex64), b), (a, "x")]:
            same(lambda lib, p, q, mode=mode: lib.div(p, q, rounding_mode=mode), left, right)
            same(lambda lib, p, q, mode=mode: lib.divide(p, q, rounding_mode=mode), left, right)
    for mode in ["bad", 3]:
        same(lambda lib, a, mode=mode: lib.div(a, 2, rounding_mode=mode), a)
    same(lambda lib, a: lib.true_divide(a, 2, rounding_mode="floor"), a)
    same(lambda lib, a: lib.div(a, 2, rounding_mode=None), np.array([1, 2]))


# ----- pow with a tensor exponent and float_power ---------------------------------------------
def test_pow_with_a_tensor_exponent_through_every_spelling():
    data, exponents = sample((3, 4), 1, positive=True), sample((4,), 2)
    for call in [lambda lib, x, e: lib.pow(x, e), lambda lib, x, e: x.pow(e),
                 lambda lib, x, e: x ** e, lambda lib, x, e: e ** x,
                 lambda lib, x, e: e.__rpow__(x)]:               # torch's: x ** e
        x, xt = both(data)
        e, et = both(np.abs(exponents) + 0.5)
        check(call(mg, x, e), call(torch, xt, et), [(x, xt), (e, et)])
    for base, exponent in [(np.array([2, -3, 0, 1, -1]), np.array([3, 2, 0, -1, -3])),
                           (np.array([True, False]), np.array([1, 2])),
                           (np.array([2, 3]), np.array([True, False])),
                           (np.array([True, False]), np.array([True, True])),
                           (np.array([2, 3], np.int32), np.array(2, np.int64)),
                           (np.array([1.5, 2.0], np.float32), np.array([2, 3])),
                           (np.array([4, 9]), np.array(0.5)),
                           (np.array([1.5, 2.5], np.float16), np.array([2.0, -1.0]))]:
        same(lambda lib, b, e: lib.pow(b, e), base, exponent)
        same(lambda lib, b, e: lib.float_power(b, e), base, exponent)
    x, xt = both(np.array([1.0, 2.0]))
    check(mg.float_power(x.float(), 2.5), torch.float_power(xt.float(), 2.5), [(x, xt)])
    with pytest.raises(ValueError, match="broadcast"):
        mg.pow(mg.ones(2), mg.ones(3))
    with pytest.raises(TypeError):
        mg.pow([1.0, 2.0], mg.ones(2))
    assert mg.pow(2.0, mg.tensor([1 + 1j])).dtype == mg.complex64   # as torch's
    for base in [np.array([1, 2]), np.array([True, False]), np.array([1, 2], np.uint8)]:
        for exponent in [-1, True, False, 2, 0.5]:
            same(lambda lib, b, e: lib.pow(b, e), base, exponent)


# ----- lerp, addcmul, addcdiv -----------------------------------------------------------------
def test_lerp_matches_torch_for_number_and_tensor_weights():
    for shapes in [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), ()), ((), (2, 3), (3,)),
                   ((0, 2), (2,), (1,))]:
        for weight in [0.3, 0.75, -1.0, 2, True]:
            a, at = both(sample(shapes[0], 1))
            b, bt = both(sample(shapes[1], 2))
            check(mg.lerp(a, b, weight), torch.lerp(at, bt, weight), [(a, at), (b, bt)])
        a, at = both(sample(shapes[0], 1))
        b, bt = both(sample(shapes[1], 2))
        w, wt = both(np.random.default_rng(3).uniform(-0.5, 1.5, shapes[2]))
        check(a.lerp(b, w), at.lerp(bt, wt), [(a, at), (b, bt), (w, wt)])
    a, at = both(np.array([0.0, INF, 1.0]))
    b, bt = both(np.array([1.0, 1.0, NAN]))
    w, wt = both(np.array([0.2, 0.7, 0.5]))
    check(mg.lerp(a, b, w), torch.lerp(at, bt, wt), [(a, at), (b, bt), (w, wt)])
    a, at = both(np.array([1.0, 2.0], np.float32))
    w, wt = both(np.array(0.25))                 # a 0-d weight of another dtype: allowed
    check(mg.lerp(a, a * 3, w), torch.lerp(at, at * 3, wt), [(a, at), (w, wt)], atol=1e-6)
    data = sample((50,), 4)
    for dtype in ["float32", "float16"]:
        same(lambda lib, a, b: lib.lerp(a, b, 0.3), data.astype(dtype), data[::-1].astype(dtype))
        same(lambda lib, a, b: lib.lerp(a, b, b), data.astype(dtype), data[::-1].astype(dtype))


def test_lerp_refuses_what_torch_refuses():
    floats, doubles = np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0])
    for start, end, weight in [(floats, doubles, 0.5), (floats, floats, doubles),
                               (np.array([1, 2]), np.array([1, 2]), 0.5), (floats, 2, 0.5),
                               (floats, floats, np.array(1)), (floats, floats, 1j),
                               (floats, floats, np.array([1, 2])), (floats, floats, None),
                               (np.array([True]), np.array([True]), 0.5),
                               (floats, floats, np.array(True)),
                               (np.array([1 + 1j]), np.array([2j]), 0.5)]:
        same(lambda lib, s, e, w: lib.lerp(s, e, w), start, end, weight)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_and_addcdiv_match_torch(name):
    for shapes in [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), ()), ((), (2, 3), (3,)),
                   ((0, 2), (2,), (1,))]:
        for value in [1, 0.5, -2]:
            t, tt = both(sample(shapes[0], 1))
            a, at = both(sample(shapes[1], 2))
            b, bt = both(sample(shapes[2], 3, positive=True))
            check(getattr(mg, name)(t, a, b, value=value),
                  getattr(torch, name)(tt, at, bt, value=value), [(t, tt), (a, at), (b, bt)])
    t, tt = both(np.array([1.0, 2.0]))
    a, at = both(np.array([3.0, 5.0]))
    b, bt = both(np.array([0.0, 0.75]))
    check(getattr(t, name)(a, b, value=0.5), getattr(tt, name)(at, bt, value=0.5),
          [(t, tt), (a, at), (b, bt)])
    data = sample((40,), 5)
    for dtype in ["float32", "float16"]:
        same(lambda lib, t, a: getattr(lib, name)(t, a, a, value=0.1), data.astype(dtype),
             data[::-1].astype(dtype))


def test_addcmul_and_addcdiv_dtypes_and_refusals_match_torch():
    f, d, i = np.array([1.0, 2.0], np.float32), np.array([1.5, -2.0]), np.array([1, 2])
    h, b, c = f.astype(np.float16), np.array([True, False]), np.array([1 + 1j, 2j])
    for name in ["addcmul", "addcdiv"]:
        for args, value in [((f, f, f), 1), ((i, i, i), 0.5), ((i, i, i), 2), ((f, i, i), 0.5),
                            ((i, f, f), 1), ((f, d, f), 1), ((f, f, d[0]), 1), ((f[0], f, f), 1),
                            ((b, b, b), 1), ((b, b, b), 2), ((h, h, h), 0.1), ((h, f, f), 1),
                            ((f, f, f), 1j), ((f, f, f), None), ((f, i, f), 1), ((f, f, i), 1),
                            ((i, i, i), True), ((c, c, c), 2 - 1j), ((f, d[0], d[0]), 1),
                            ((i.astype(np.uint8),) * 3, -1)]:
            same(lambda lib, t, a, b, v, name=name: getattr(lib, name)(t, a, b, value=v),
                 *args, value)
        same(lambda lib, t, name=name: getattr(lib, name)(t, t, 2), f)
        same(lambda lib, t, name=name: getattr(lib, name)(t, t, t, 2), f)
        with pytest.raises(ValueError, match="broadcast"):     # as x + y here (torch: Runtime)
            getattr(mg, name)(mg.ones(2), mg.ones(2), mg.ones(3))


# ----- in-place forms -------------------------------------------------------------------------
IN_PLACE = {"lerp_": lambda lib, o: (o, 0.3), "addcmul_": lambda lib, o: (o, o * 2),
            "addcdiv_": lambda lib, o: (o, o * o + 1), "atan2_": lambda lib, o: (o,),
            "arctan2_": lambda lib, o: (o,), "hypot_": lambda lib, o: (o,),
            "copysign_": lambda lib, o: (o,), "xlogy_": lambda lib, o: (o * o + 0.5,),
            "float_power_": lambda lib, o: (o,), "subtract_": lambda lib, o: (o,),
            "multiply_": lambda lib, o: (o,), "divide_": lambda lib, o: (o + 5,),
            "true_divide_": lambda lib, o: (o + 5,), "sub_": lambda lib, o: (o,),
            "div_": lambda lib, o: (o + 5,), "add_": lambda lib, o: (o,)}
KEYWORDS = {"addcmul_": {"value": -0.5}, "addcdiv_": {"value": 2}, "subtract_": {"alpha": 3},
            "sub_": {"alpha": 0.5}, "add_": {"alpha": -2}, "div_": {"rounding_mode": "floor"},
            "divide_": {"rounding_mode": "trunc"}}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_forms_match_torch(name):
    data, other = sample((3, 4), 1), sample((4,), 2)
    kwargs = KEYWORDS.get(name, {})

    def call(lib, x, o):
        return getattr(x, name)(*IN_PLACE[name](lib, o), **kwargs)
    x, xt = mg.tensor(data), torch.tensor(data)
    assert call(mg, x, mg.tensor(other)) is x
    call(torch, xt, torch.tensor(other))
    close(x.numpy(), xt.numpy())
    assert x._version == 1
    # on a non-leaf the write is recorded: gradients flow to self and the others, as torch's
    x, xt = both(data)
    o, ot = both(other)
    y, yt = x * 2.0, xt * 2.0
    call(mg, y, o)
    call(torch, yt, ot)
    check(y, yt, [(x, xt), (o, ot)])
    with pytest.raises(RuntimeError, match="leaf"):
        call(mg, mg.tensor(data, requires_grad=True), mg.tensor(other))
    with mg.no_grad():                  # an optimizer's path: allowed on a leaf
        call(mg, mg.tensor(data, requires_grad=True), mg.tensor(other))


def test_a_refused_in_place_call_changes_nothing():
    ints, floats = mg.tensor([1, 2, 3]), mg.tensor([1.0, 2.0, 3.0])
    for call in [lambda: ints.addcmul_(floats, floats), lambda: ints.atan2_(ints),
                 lambda: ints.div_(2), lambda: ints.lerp_(ints, 0.5),
                 lambda: floats.float_power_(2), lambda: ints.sub_(1, alpha=0.5),
                 lambda: ints.add_(1, alpha=0.5), lambda: floats.addcdiv_(ints, ints)]:
        with pytest.raises(RuntimeError):
            call()
    for call in [lambda: floats.lerp_(mg.ones(2, 3), 0.5), lambda: floats.xlogy_(mg.ones(2, 3)),
                 lambda: floats.addcmul_(mg.ones(2, 3), floats)]:
        with pytest.raises((RuntimeError, ValueError)):
            call()
    assert ints.tolist() == [1, 2, 3] and floats.tolist() == [1.0, 2.0, 3.0]
    assert ints._version == floats._version == 0
    same(lambda lib, x: x.clone().float_power_(2), np.array([1.5, -2.0]))     # float64 only
    same(lambda lib, x: x.clone().div_(2, rounding_mode="floor"), np.array([7, -7]))
    same(lambda lib, x: x.clone().sub_(x, 2), np.array([7.0]))           # alpha: keyword-only


def test_in_place_with_itself_as_an_argument_reads_its_old_values():
    # torch's backward refuses most of these (the saved self was overwritten); here the
    # recorded write reads a copy of the old values: torch's out-of-place gradient
    data = sample((3,), 1)
    for name, args in [("addcmul", lambda y: (y, y)), ("lerp", lambda y: (y * 3, y)),
                       ("atan2", lambda y: (y,)), ("xlogy", lambda y: (y.exp(),)),
                       ("sub", lambda y: (y,)), ("hypot", lambda y: (y,))]:
        kwargs = {"sub": {"alpha": 2}, "addcmul": {"value": 0.5}}.get(name, {})
        x, xt = both(data)
        y, yt = x * 1.5, xt * 1.5
        assert getattr(y, name + "_")(*args(y), **kwargs) is y
        check(y, getattr(torch, name)(yt, *args(yt), **kwargs), [(x, xt)])


@pytest.mark.skipif(mg.bfloat16 is None, reason="bfloat16 needs ml_dtypes")
def test_bfloat16_results_round_as_torchs():
    # (add with a non-dyadic alpha can differ by an ulp where the sum cancels: torch's
    # bfloat16 kernel rounds alpha · other to bfloat16 first, its float16 one does not)
    a, b, c = sample((3, 60), 9)
    c = np.abs(c) + 0.1
    for call in [lambda lib, a, b, c: lib.add(a, b, alpha=0.25), lambda lib, a, b, c: a.atan2(b),
                 lambda lib, a, b, c: lib.hypot(a, b), lambda lib, a, b, c: lib.logaddexp(a, b),
                 lambda lib, a, b, c: lib.xlogy(a, c), lambda lib, a, b, c: lib.fmin(a, b),
                 lambda lib, a, b, c: lib.lerp(a, b, 0.3), lambda lib, a, b, c: lib.pow(c, b),
                 lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.3),
                 lambda lib, a, b, c: lib.addcdiv(a, b, c, value=-0.3),
                 lambda lib, a, b, c: lib.div(a, c, rounding_mode="floor")]:
        got = call(mg, *(mg.tensor(v).astype(mg.bfloat16) for v in (a, b, c)))
        expected = call(torch, *(torch.tensor(v).bfloat16() for v in (a, b, c)))
        assert got.dtype == mg.bfloat16
        np.testing.assert_array_equal(got.astype(mg.float32).numpy(), expected.float().numpy())


# ----- comparison aliases ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["greater", "greater_equal", "less", "less_equal", "not_equal"])
def test_comparison_aliases_match_torch(name):
    a, b = np.array([1.0, 2.0, NAN, 3.0]), np.array([2.0, 2.0, 1.0, NAN])
    same(lambda lib, a, b: getattr(lib, name)(a, b), a, b)
    same(lambda lib, a: getattr(a, name)(2), a)
    same(lambda lib, a: getattr(lib, name)(1, a), a)
    same(lambda lib, a: getattr(lib, name)(a, np.array([1, 2])), np.array([1.5, 1.0]))
    assert getattr(mg, name).__name__ == name


# ----- hand-written Adam ----------------------------------------------------------------------
def adam_steps(lib, params, grads, steps=5, lr=1e-2, betas=(0.9, 0.999), eps=1e-8,
               weight_decay=0.01):
    """Adam (AdamW's decoupled decay) written as tutorials write it, with in-place ops."""
    beta1, beta2 = betas
    state = [(lib.zeros_like(p), lib.zeros_like(p)) for p in params]
    with lib.no_grad():
        for step in range(1, steps + 1):
            for p, g, (exp_avg, exp_avg_sq) in zip(params, grads[step - 1], state):
                p.mul_(1 - lr * weight_decay)
                exp_avg.mul_(beta1).add_(g, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                bias1, bias2 = 1 - beta1 ** step, 1 - beta2 ** step
                denom = (exp_avg_sq.sqrt() / bias2 ** 0.5).add_(eps)
                p.addcdiv_(exp_avg, denom, value=-lr / bias1)
                exp_avg.lerp_(exp_avg, 0.0)          # a no-op, through lerp_
    return params


def test_a_hand_written_adam_loop_matches_torch_step_for_step():
    rng = np.random.default_rng(7)
    shapes = [(4, 3), (3,), ()]
    start = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(5)]
    ours = adam_steps(mg, [mg.tensor(p, requires_grad=True) for p in start],
                      [[mg.tensor(g) for g in step] for step in grads])
    theirs = adam_steps(torch, [torch.tensor(p, requires_grad=True) for p in start],
                        [[torch.tensor(g) for g in step] for step in grads])
    for p, pt in zip(ours, theirs):
        close(p.detach().numpy(), pt.detach().numpy(), atol=1e-12, rtol=0)
        assert p.is_leaf and p.grad_fn is None
    optimizer = torch.optim.AdamW([torch.tensor(p, requires_grad=True) for p in start],
                                  lr=1e-2, weight_decay=0.01)
    for step in grads:                          # and torch's own AdamW agrees
        for p, g in zip(optimizer.param_groups[0]["params"], step):
            p.grad = torch.tensor(g)
        optimizer.step()
    for p, pt in zip(ours, optimizer.param_groups[0]["params"]):
        close(p.detach().numpy(), pt.detach().numpy(), atol=1e-12, rtol=0)


def test_pow_in_place():
    data = np.array([0.5, 1.5, 2.0])
    for exponent in (2, 0.5, -1.5, 0):
        x, xt = both(data, requires_grad=False)
        assert x.pow_(exponent) is x
        xt.pow_(exponent)
        close(x.numpy(), xt.numpy())
    # recorded, with a number and with a tensor exponent
    for exponent in (2.5, np.array([1.0, 2.0, 3.0])):
        a, at = both(data)
        x, xt = a * 1, at * 1
        e, et = both(exponent) if isinstance(exponent, np.ndarray) else (exponent, exponent)
        x.pow_(e)
        xt.pow_(et)
        check(x, xt, [(a, at)] + ([(e, et)] if isinstance(exponent, np.ndarray) else []))
    ints = mg.tensor([1, 2, 3])
    ints.pow_(2)
    assert ints.tolist() == [1, 4, 9] and ints.dtype == mg.int64
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="can't be cast"):
            lib.tensor([1, 2]).pow_(0.5)                     # a float result into int64
        with pytest.raises(RuntimeError, match="leaf"):
            lib.tensor(data, requires_grad=True).pow_(2)


def test_lerp_keeps_its_tensor_weight_not_a_copy():
    # the weight is saved for start's and end's gradients: changed in place before backward,
    # it is refused, as torch's
    for lib in (torch, mg):
        start = lib.tensor([0.0, 1.0], requires_grad=True)
        weight = lib.tensor([0.25, 0.75])
        out = lib.lerp(start, lib.tensor([2.0, 3.0]), weight)
        weight.mul_(2)
        with pytest.raises(RuntimeError, match="modified"):
            out.sum().backward()


# ----- hypothesis: broadcast shapes and finite differences ------------------------------------
@settings(max_examples=20, deadline=None)
@given(pair=broadcastable_pair(max_dims=3, max_side=3), data=arrays((2, 9), low=0.5, high=2.0))
def test_finite_differences_agree_on_drawn_shapes(pair, data):
    a_data, b_data = np.resize(data[0], pair[0]), np.resize(data[1], pair[1])
    for call in [mg.atan2, mg.hypot, mg.logaddexp, mg.xlogy, mg.pow,
                 lambda a, b: mg.lerp(a, b, b), lambda a, b: mg.addcdiv(a, b, a, value=0.3),
                 lambda a, b: mg.sub(a, b, alpha=0.7)]:
        a = mg.tensor(a_data, requires_grad=True)
        b = mg.tensor(b_data, requires_grad=True)
        assert mg.gradcheck(call, (a, b))


def test_complex_operands_get_torchs_conjugated_gradients():
    rng = np.random.default_rng(0)

    def draw():
        return rng.standard_normal(3) + 1j * rng.standard_normal(3)
    for call in [lambda lib, a, b, w: lib.pow(a, b), lambda lib, a, b, w: lib.logaddexp(a, b),
                 lambda lib, a, b, w: lib.lerp(a, b, w), lambda lib, a, b, w: a.lerp(b, 0.3 - 2j),
                 lambda lib, a, b, w: lib.addcmul(a, b, w, value=2 - 1j),
                 lambda lib, a, b, w: lib.addcdiv(a, b, w, value=2 - 1j),
                 lambda lib, a, b, w: lib.add(a, b, alpha=1.5 + 2j)]:
        data = [draw(), draw(), draw() * 0.3]
        ours = [mg.tensor(d, requires_grad=True) for d in data]
        theirs = [torch.tensor(d, requires_grad=True) for d in data]
        check(call(mg, *ours), call(torch, *theirs), list(zip(ours, theirs)), upstream=draw())


@pytest.mark.parametrize("name, call", [
    ("add", dict(alpha=2)), ("sub", {}), ("subtract", dict(alpha=0.5)), ("mul", {}),
    ("multiply", {}), ("div", {}), ("div", dict(rounding_mode="floor")), ("divide", {}),
    ("true_divide", {})])
@pytest.mark.parametrize("out_dtype, out_shape", [("float64", (2, 3)), ("float32", (2, 3)),
                                                  ("float64", (0,))])
def test_out_writes_into_the_given_tensor_as_torch(name, call, out_dtype, out_shape):
    a = np.arange(6.0).reshape(2, 3) - 2.5
    b = np.array([1.5, -2.0, 3.0])
    results = []
    for lib in (mg, torch):
        out = lib.full(out_shape, 7.0, dtype=getattr(lib, out_dtype))
        returned = getattr(lib, name)(lib.tensor(a), lib.tensor(b), **call, out=out)
        assert returned is out and tuple(out.shape) == (2, 3)
        results.append(out.numpy())
    assert results[0].dtype == results[1].dtype
    close(*results)


def test_out_refuses_what_torch_refuses_and_warns_as_torch():
    for lib in (mg, torch):
        x, long_out = lib.ones(2, 3), lib.zeros(2, 3, dtype=lib.int64)
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
            lib.add(x, x, out=long_out)
        needs_grad = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            lib.mul(needs_grad, 2, out=lib.empty(2))
        with lib.no_grad():
            assert lib.mul(needs_grad, 2, out=lib.empty(2)).tolist() == [2.0, 2.0]
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            lib.add(x, x, out=lib.empty(5))
        base = lib.zeros(2, 3)
        lib.add(lib.ones(3), 1, out=base[0])          # a view: its base sees the write
        assert base.tolist() == [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]]


@pytest.mark.parametrize("name", ["add", "mul", "div"])
def test_out_overlapping_an_operand_in_another_layout_is_refused_as_torchs(name):
    for lib in (mg, torch):
        x = lib.arange(4.0)
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            getattr(lib, name)(x[:3], x[1:], out=x[1:])
        y = lib.arange(1.0, 5.0)
        getattr(lib, name)(y, 2, out=y)             # the same view: in place, as torch's
        assert y.tolist() == getattr(lib, name)(lib.arange(1.0, 5.0), 2).tolist()


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "true_divide"])
def test_the_resize_warning_names_the_callers_line(name):
    with pytest.warns(UserWarning, match="was resized") as record:
        getattr(mg, name)(mg.ones(3), 1, out=mg.zeros(2))
    assert record[0].filename == __file__


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((64,), (64,)), ((5, 7), (7,)), ((), ()), ((0,), (0,)),
                                    ((3,), (2, 3)), ((4, 1), (4, 3))])
@pytest.mark.parametrize("alpha", [0.1, -0.01, 3, 2.5e-8, 1e38, 1e39, float("inf"),
                                   float("nan")])
@pytest.mark.parametrize("op", ["add_", "sub_"])
def test_in_place_add_with_an_alpha_rounds_once_as_torchs(dtype, shapes, alpha, op):
    # an optimizer's p.add_(g, alpha=-lr): written in place, float32's sum rounded once
    # (torch's fused multiply-add); float64 within an ulp (rounded twice here)
    rng = np.random.default_rng(len(shapes[0]) + len(shapes[1]))
    a = (rng.standard_normal(shapes[0]) * 10).astype(dtype)
    b = rng.standard_normal(shapes[1]).astype(dtype)

    def run(lib):
        x, y = lib.tensor(a.copy()), lib.tensor(b.copy())
        with lib.no_grad():
            try:
                assert getattr(x, op)(y, alpha=alpha) is x
            except RuntimeError:
                return "RuntimeError", x.numpy().copy()
        return x._version, x.numpy().copy()

    (t_version, t_values), (m_version, m_values) = run(torch), run(mg)
    assert m_version == t_version
    if dtype == "float32":
        np.testing.assert_array_equal(m_values, t_values)
    elif m_version != "RuntimeError":        # within an ulp of the terms' magnitude
        with np.errstate(invalid="ignore", over="ignore"):
            bound = 2.3e-16 * (np.abs(a) + np.abs(alpha * b))
            close = (m_values == t_values) | (np.abs(m_values - t_values) <= bound)
        assert (close | np.isnan(m_values) & np.isnan(t_values)).all()
