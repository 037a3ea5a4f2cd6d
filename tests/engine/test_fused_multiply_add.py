"""fma.fused_multiply_add, compiled and in NumPy, against exact rational arithmetic:
``a·b + c`` computed with ``fractions.Fraction`` and rounded once to the dtype here, by its
own rule (nearest, ties to even, overflow past the largest finite plus half an ulp to inf),
over hypothesis-drawn float16, bfloat16, float32 and float64 triples: halfway cases,
subnormals, overflow, inf, NaN and the sign of a zero as IEEE 754's fma gives them.
ops.ternary.lerp_arrays against torch.lerp."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microgradnorm import dtypes, fma
from microgradnorm.ops.ternary import lerp_arrays

DTYPES = {"float16": np.dtype(np.float16), "float32": np.dtype(np.float32),
          "float64": np.dtype(np.float64)}
if dtypes.bfloat16 is not None:
    DTYPES["bfloat16"] = dtypes.bfloat16

# (precision in bits, smallest normal exponent, largest exponent) of each dtype
FORMATS = {"float16": (11, -14, 15), "bfloat16": (8, -126, 127), "float32": (24, -126, 127),
           "float64": (53, -1022, 1023)}


def rounded(exact, name):
    """The Fraction ``exact`` rounded to nearest, ties to even, in the format ``name``."""
    precision, emin, emax = FORMATS[name]
    if exact == 0:
        return 0.0
    sign, magnitude = (-1 if exact < 0 else 1), abs(exact)
    estimate = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    exponent = max(estimate, emin)                  # within one of floor(log2(magnitude))
    while Fraction(2) ** exponent > magnitude and exponent > emin:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= magnitude:
        exponent += 1
    quantum = Fraction(2) ** (exponent - precision + 1)         # the ulp there
    units, remainder = divmod(magnitude, quantum)
    if remainder * 2 > quantum or (remainder * 2 == quantum and units % 2):
        units += 1
    value = units * quantum
    largest = (2 - Fraction(2) ** (1 - precision)) * Fraction(2) ** emax
    if value > largest:
        return sign * math.inf
    return sign * float(value)


def expected(a, b, c, name):
    a, b, c = float(a), float(b), float(c)
    if not all(map(math.isfinite, (a, b, c))):
        if math.isfinite(a) and math.isfinite(b):
            return c                                    # inf or NaN addend
        return a * b + c                                # inf·0 NaN, inf + -inf NaN, ...
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:           # -0 only for a zero product and a zero addend both negative
        product_negative = a * b == 0 and math.copysign(1, a) * math.copysign(1, b) < 0
        return -0.0 if product_negative and math.copysign(1, c) < 0 else 0.0
    value = rounded(exact, name)
    return math.copysign(0.0, exact) if value == 0 else value


def floats_of(name):
    # any value of the dtype, from its bits: subnormals, huge values, inf, NaN, -0.0
    dtype = DTYPES[name]
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
    return st.integers(0, (1 << (8 * dtype.itemsize)) - 1).map(
        lambda i: np.array(i, bits).view(dtype)[()])


def halfway_triples(name):
    # (1 + 2**-q)(1 + 2**-r) with q + r = precision is exact (in float64 below float64) and
    # one of the dtype's halfway points; c a tiny push either way (or none): the sums a
    # double rounding, or an FMA rounding its low parts to nearest, gets wrong
    precision = FORMATS[name][0]

    def build(q, sign, scale, push, push_sign):
        a = sign * (1 + 2.0 ** -q) * 2.0 ** scale
        b = 1 + 2.0 ** -(precision - q)
        c = 0.0 if push is None else push_sign * 2.0 ** (scale - push)
        return a, b, c
    return st.builds(build, st.integers(1, precision - 1), st.sampled_from([1.0, -1.0]),
                     st.integers(-4, 4), st.none() | st.integers(precision + 1, 2 * precision + 12),
                     st.sampled_from([1.0, -1.0]))


# both forms, which must give the same bits: the compiled loop (where numba imports; the
# NumPy form otherwise) and the NumPy arithmetic
FORMS = {"compiled": fma.fused_multiply_add, "numpy": fma.numpy_fused_multiply_add}


def check(a, b, c, name, form):
    dtype = DTYPES[name]
    a, b, c = (np.asarray(v, dtype) for v in (a, b, c))
    if not all(np.isnan(v) or float(v) == float(v.astype(np.float64)) for v in (a, b, c)):
        return
    got = float(FORMS[form](a.reshape(1), b, c)[0])
    want = expected(a, b, c, name)
    if math.isnan(want):
        assert math.isnan(got), (a, b, c, got)
    else:
        assert got == want and math.copysign(1, got) == math.copysign(1, want), \
            (name, float(a), float(b), float(c), got, want)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("name", list(DTYPES))
@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_any_floats_round_once(name, form, data):
    a, b, c = (data.draw(floats_of(name)) for _ in range(3))
    check(a, b, c, name, form)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("name", list(DTYPES))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_halfway_cases_round_once(name, form, data):
    a, b, c = data.draw(halfway_triples(name))
    dtype = DTYPES[name]
    check(dtype.type(a), dtype.type(b), dtype.type(c), name, form)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("name", list(DTYPES))
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_arrays_match_elementwise(name, form, data):
    # a batch (the vectorized paths, the chunked float64 one included) equals one at a time
    dtype = DTYPES[name]
    n = data.draw(st.sampled_from([5, 70_000]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype) if data.draw(st.booleans()) else dtype.type(0.3)
    c = rng.standard_normal(n).astype(dtype)
    picks = rng.choice(n, 5, replace=False)
    a[picks[:2]] = [data.draw(floats_of(name)) for _ in range(2)]
    got = FORMS[form](a, b, c)
    b = np.broadcast_to(b, a.shape)
    for i in np.concatenate([picks, rng.choice(n, 20)]):
        want = expected(a[i], b[i], c[i], name)
        assert got[i] == want or (math.isnan(want) and np.isnan(got[i])), (i, got[i], want)


@pytest.mark.parametrize("form", list(FORMS))
def test_exact_product_fast_path_still_rounds_once(form):
    # b = 2: a·2 exact, the sum rounded once; an overflowing a·2 with a finite result
    a = np.array([1e308, 0.1, -0.0])
    got = FORMS[form](a, 2.0, np.array([-1e308, 0.2, -0.0]))
    assert got[0] == 1e308 and got[1] == 0.1 * 2 + 0.2
    assert got[2] == 0 and math.copysign(1, got[2]) < 0


@pytest.mark.parametrize("name", ["float32", "float64"])
@pytest.mark.parametrize("weight", [0.1, 0.5, 0.9, -0.7, 1.3, "tensor"])
def test_lerp_arrays_matches_torch(name, weight):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    start, end = (rng.standard_normal(10_000).astype(name) for _ in range(2))
    if weight == "tensor":
        weight = rng.uniform(-1, 2, 10_000).astype(name)
        want = torch.lerp(torch.from_numpy(start), torch.from_numpy(end),
                          torch.from_numpy(weight)).numpy()
    else:
        want = torch.lerp(torch.from_numpy(start), torch.from_numpy(end), weight).numpy()
    np.testing.assert_array_equal(lerp_arrays(start, end, weight), want)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("shapes", [((1,), (2, 3), (3,)), ((), (3,), ()), ((3,), (2, 1), (1,)),
                                    ((2, 1), (3,), (2, 3)), ((1, 1), (), (4,))])
def test_operands_broadcast_as_numpy(form, shapes):
    # any operand may be the one that sets the shape, a one-element a included
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(shape) for shape in shapes)
    got = FORMS[form](np.asarray(a), b, c)
    want = np.vectorize(lambda *v: float(Fraction(v[0]) * Fraction(v[1]) + Fraction(v[2])))(
        *np.broadcast_arrays(a, b, c))
    assert got.shape == want.shape and np.array_equal(got, want)
