"""Elementwise math and gradient corners a differential fuzzer against PyTorch found, each
family of inputs against torch's values and autograd: ``x ** -0.5`` as torch's rsqrt (and
the gradient of ``x ** 0.5``), half-precision powers of every value (the exponent rounded to
the dtype, bfloat16's own kernels), the pow of two tensors as C's pow where NumPy's loop
takes a repeated exponent of 0.5 as sqrt, ``float_power`` of a number, cumprod's gradient
with inf before a zero, past a second zero and along a dim of one, ``sign`` of a bfloat16
zero, ``special.erfcx`` far left in float64, softmax of integers without ``dtype=`` (empty
ones at every entry point), the in-place logical ops on an expanded tensor, lgamma by its
zeros at 1 and 2 and on its series' interval, and isclose of integers."""

import ml_dtypes
import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F

INF, NAN = np.inf, np.nan
CORNERS = np.array([-INF, -4.0, -1.0, -0.0, 0.0, 1e-300, 0.25, 1.0, 4.0, INF, NAN])


def make(lib, array, requires_grad=False):
    """``array`` as a tensor of ``lib``; bfloat16 through float32 (it holds it exactly)."""
    if array.dtype == ml_dtypes.bfloat16:
        return lib.tensor(array.astype(np.float32)).to(lib.bfloat16)
    return lib.tensor(array, requires_grad=requires_grad)


def values(t):
    """A tensor of either library as a NumPy array (bfloat16 as float64)."""
    if t.dtype in (torch.bfloat16, mg.bfloat16):
        t = t.float()
    array = t.detach().numpy()
    return array.astype(np.float64) if array.dtype.kind == "f" else array


def assert_same(ours, theirs, rtol=0.0):
    """Equal dtypes and values, NaN where torch's, and the sign of every zero and inf."""
    assert str(ours.dtype) == str(theirs.dtype), (ours, theirs)
    a, b = values(ours), values(theirs)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0)
    assert np.array_equal(np.signbit(a[a == 0]), np.signbit(b[b == 0])), (a, b)


def forward_and_grad(call, *arrays):
    """``call(lib, *tensors)`` and the gradients of its sum weighted by fixed draws, for
    torch and mg; returns (ours, theirs) pairs: the output, then each input's gradient."""
    weights = None
    results = {}
    for lib in (torch, mg):
        leaves = [make(lib, a, requires_grad=True) for a in arrays]
        out = call(lib, *leaves)
        if weights is None:
            weights = np.random.default_rng(0).standard_normal(tuple(out.shape))
        (out * lib.tensor(weights)).sum().backward()
        results[lib] = [out] + [leaf.grad for leaf in leaves]
    return list(zip(results[mg], results[torch]))


@pytest.mark.parametrize("exponent", [-0.5, 0.5, 1.5, -1.5, 2, 0, -1])
@pytest.mark.parametrize("form", ["pow", "operator", "float_power", "tensor"])
def test_power_of_a_number_at_zero_and_infinities(form, exponent):
    # torch's kernel takes x^-0.5 as rsqrt (-inf at -0.0, NaN at -inf), so x^0.5's gradient
    # too; the pow of two tensors runs C's pow at every element, a 0-d exponent included
    calls = {"pow": lambda L, x: L.pow(x, exponent), "operator": lambda L, x: x ** exponent,
             "float_power": lambda L, x: L.float_power(x, exponent),
             "tensor": lambda L, x: L.pow(x, L.tensor(float(exponent), dtype=L.float64))}
    for ours, theirs in forward_and_grad(calls[form], CORNERS):
        assert_same(ours, theirs, rtol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_power_minus_half_in_other_float_dtypes(dtype):
    x = CORNERS.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    assert_same(make(mg, x) ** -0.5, make(torch, x) ** -0.5, rtol=1e-3)


@pytest.mark.parametrize("exponent", [0.5, -0.5, 1.5, 1.3, 2])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_power_in_half_precision_and_its_gradient(dtype, exponent):
    # bfloat16 takes torch's sqrt and rsqrt; float16 C's pow in float32 for every exponent
    # (NumPy's float16 x ** 0.5 is sqrt, NaN at -inf)
    results = []
    for lib in (torch, mg):
        x = lib.tensor([-0.0, -INF, 0.0, 4.0, INF, NAN, -2.0, 0.3], dtype=getattr(lib, dtype),
                       requires_grad=True)
        y = x ** exponent
        y.sum().backward()
        results.append((y, x.grad))
    for ours, theirs in zip(results[1], results[0]):
        assert_same(ours, theirs, rtol=1e-2)


@pytest.mark.parametrize("exponent", [1 / 3, -2 / 3, 0.1, 1e-8, 0.5, -0.5, -1, 2, 3, -2, 2.5,
                                      -1.5, 0, 3.001, -2.001, 1.0001])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_power_of_every_half_precision_value_and_its_gradient(dtype, exponent):
    # torch rounds the exponent to x's dtype; bfloat16 has its own x*x*x, 1/(x*x) and rsqrt
    # kernels, each step rounded; the slope is exponent · x^(exponent-1) rounded once
    bits = np.arange(2**16, dtype=np.uint16)
    wide = bits.view(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16)
    weights = np.random.default_rng(1).standard_normal(bits.size).astype(np.float32)
    results = []
    for lib in (mg, torch):
        x = lib.tensor(wide.astype(np.float32)).to(getattr(lib, dtype)).requires_grad_()
        y = x ** exponent
        y.backward(lib.tensor(weights).to(getattr(lib, dtype)))
        results.append((y, x.grad))
    for ours, theirs in zip(*results):
        assert_same(ours, theirs)


@pytest.mark.parametrize("exponent", [[0.5, 0.5], [0.5], 0.5, 1.5])
@pytest.mark.parametrize("base_shape", [(), (2,), (3, 2)])
def test_pow_of_two_tensors_with_a_repeated_half_exponent(base_shape, exponent):
    base = np.resize(CORNERS, base_shape) if base_shape else np.array(-INF)
    e = np.array(exponent)
    if e.ndim and base_shape and base_shape[-1] != e.shape[-1] and e.shape[-1] != 1:
        pytest.skip("shapes that do not broadcast")
    for ours, theirs in forward_and_grad(lambda L, x, y: L.pow(x, y), base, e):
        assert_same(ours, theirs, rtol=1e-15)


@pytest.mark.parametrize("base", [0.001, 3, -2.5, 1e-10])
@pytest.mark.parametrize("dtype", ["int8", "int64", "float16", "float32"])
def test_float_power_of_a_number_base_is_read_in_float64(base, dtype):
    exponent = np.array([-3, 0, 2, 5]).astype(dtype)
    assert_same(mg.float_power(base, make(mg, exponent)),
                torch.float_power(base, make(torch, exponent)), rtol=1e-15)


@pytest.mark.parametrize("row", [[2.0, INF, 0.0], [INF, -0.0, 1.0], [-INF, 2.0, -0.0, 3.0],
                                 [2.0, 0.0, INF, 3.0], [NAN, 0.0, 1.0], [1.0, 2.0, 3.0],
                                 [0.0, 0.0, 2.0], [INF], [NAN], [-INF], [-0.0, 0.0, -INF],
                                 [1.0, 0.0, 2.0, INF, 0.0, 5.0], [0.0, INF, 0.0, 1.0],
                                 [1.0, 0.0, 2.0, 3.0, 0.0, INF]])
def test_cumprod_gradient_with_infinities_and_zeros(row):
    for ours, theirs in forward_and_grad(lambda L, x: L.cumprod(x, 0), np.array(row)):
        assert_same(ours, theirs, rtol=1e-15)


@pytest.mark.parametrize("value", [INF, -INF, NAN, 0.0, 2.0])
def test_cumprod_gradient_along_a_dim_of_one_is_the_gradient(value):
    x = np.full((3, 1), value)
    for ours, theirs in forward_and_grad(lambda L, t: L.cumprod(t, 1), x):
        assert_same(ours, theirs)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", ["sign", "sgn"])
def test_sign_of_a_zero_is_plus_zero(name, dtype):
    x = np.array([-0.0, 0.0, NAN, -INF, 3.0]).astype(
        ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    assert_same(getattr(mg, name)(make(mg, x)), getattr(torch, name)(make(torch, x)))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_erfcx_far_left_is_inf(dtype):
    # exp(x²) past float32's range: its split square was inf · 0
    x = np.array([-1e300, -1e39, -3e38, -27.0, -26.0, -1.0, 1e300, INF, -INF, NAN])
    x = x[np.abs(x) < 1e38] if dtype == "float32" else x
    x = x.astype(dtype)
    ours, theirs = mg.special.erfcx(make(mg, x)), torch.special.erfcx(make(torch, x))
    assert_same(ours, theirs, rtol=1e-6 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("namespace", ["torch", "functional", "special"])
def test_softmax_of_integers_needs_a_floating_dtype(namespace, name, dtype):
    x = np.array([[1, 0, 1]]).astype(dtype)
    space = {"torch": (mg, torch), "functional": (F, torch.nn.functional),
             "special": (mg.special, torch.special)}[namespace]
    fns = [getattr(s, name) for s in space]
    with pytest.raises(NotImplementedError):
        fns[1](make(torch, x), 1)
    with pytest.raises(NotImplementedError):
        fns[0](make(mg, x), 1)
    assert_same(fns[0](make(mg, x), 1, dtype=mg.float64),
                fns[1](make(torch, x), 1, dtype=torch.float64), rtol=1e-15)


SOFTMAX_ENTRIES = {
    "softmax": lambda L, x: L.softmax(x, 1), "log_softmax": lambda L, x: L.log_softmax(x, 1),
    "method": lambda L, x: x.softmax(1), "log_method": lambda L, x: x.log_softmax(1),
    "special": lambda L, x: L.special.softmax(x, 1),
    "functional": lambda L, x: L.nn.functional.softmax(x, dim=1),
    "functional_log": lambda L, x: L.nn.functional.log_softmax(x, dim=1),
    "softmin": lambda L, x: L.nn.functional.softmin(x, dim=1),
    "module": lambda L, x: L.nn.Softmax(1)(x), "log_module": lambda L, x: L.nn.LogSoftmax(1)(x),
    "softmin_module": lambda L, x: L.nn.Softmin(1)(x)}


@pytest.mark.parametrize("size", [0, 3])
@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64"])
@pytest.mark.parametrize("entry", sorted(SOFTMAX_ENTRIES))
def test_softmax_of_integers_at_every_entry_point(entry, dtype, size):
    # an empty integer input gives an empty copy of its dtype, a non-empty one torch's
    # NotImplementedError, by whichever name it is called
    x = np.ones((2, size), dtype)
    call = SOFTMAX_ENTRIES[entry]
    if size:
        for lib in (torch, mg):
            with pytest.raises(NotImplementedError):
                call(lib, make(lib, x))
    else:
        assert_same(call(mg, make(mg, x)), call(torch, make(torch, x)))


@pytest.mark.parametrize("name", ["logical_not_", "logical_and_", "logical_or_",
                                  "logical_xor_"])
def test_in_place_logical_ops_refuse_an_expanded_tensor_as_torch(name):
    results = []
    for lib in (torch, mg):
        base = lib.tensor([1, 0, 2])
        x = base.expand(2, 3)
        args = () if name == "logical_not_" else (lib.tensor([[1, 1, 0], [0, 0, 1]]),)
        with pytest.raises(RuntimeError, match="single memory location"):
            getattr(x, name)(*args)
        results.append((base.tolist(), base._version))
    assert results[0] == results[1]


@pytest.mark.parametrize("centre", [1.0, 2.0])
@pytest.mark.parametrize("offset", [0.0, 1e-12, -1e-9, 1e-6, -1e-4, 3e-3, -0.05, 0.2, -0.4])
def test_lgamma_is_relatively_precise_by_its_zeros_at_one_and_two(centre, offset):
    # Lanczos's sum is precise only absolutely: 3000 ulp at 0.999 before the series
    x = np.array([centre + offset])
    ours, theirs = mg.lgamma(make(mg, x)), torch.lgamma(make(torch, x))
    assert_same(ours, theirs, rtol=16 * np.finfo(np.float64).eps)


@pytest.mark.parametrize("start", [0.5, 1.0, 1.4, 1.5, 1.515, 2.0, 2.4, 2.9])
@pytest.mark.parametrize("others", [[], [-3.5, -1.0, 0.0, 0.25, 3.0, 40.0, INF, NAN]])
def test_lgamma_on_its_series_interval_within_a_few_ulp(start, others):
    # log a + log Γ(a) cancelled as a → 1/2 (14 ulp at 1.515205): the series at 1 and 2 are
    # within 5 ulp of the exact value (torch's, glibc's, within 1) on [0.5, 3), beside
    # values Lanczos's formula takes
    x = np.concatenate([np.minimum(np.linspace(start, start + 0.1, 2001), np.nextafter(3.0, 0)),
                        others])
    ours, theirs = mg.lgamma(make(mg, x)), torch.lgamma(make(torch, x))
    assert_same(ours, theirs, rtol=8 * np.finfo(np.float64).eps)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("name", ["isclose", "allclose"])
def test_isclose_of_integers_does_not_wrap_around(name, dtype):
    # |a - b| in the default dtype, as torch's: 4 - 5 in uint8 is 255, not close to 1
    info = np.iinfo(dtype)
    a = np.array([4, 4, -1, info.min, info.max, 0]).clip(info.min, info.max).astype(dtype)
    b = np.array([5, 7, info.max, info.max, info.min, 1]).clip(info.min, info.max)
    for atol in (0.0, 2.0, 1e30):
        ours = getattr(mg, name)(make(mg, a), make(mg, b.astype(dtype)), atol=atol)
        theirs = getattr(torch, name)(make(torch, a), make(torch, b.astype(dtype)), atol=atol)
        if name == "allclose":
            assert ours == theirs
        else:
            assert_same(ours, theirs)


@pytest.mark.parametrize("value", [6e4, 7e4, 3e38, 4e38, 1e39, INF, -7e4])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("op", ["pow", "clamp", "where"])
def test_a_number_past_the_dtype_max_is_refused_as_torch(op, dtype, value):
    # the max of each dtype, read once per dtype, against torch's checked conversion
    calls = {"pow": lambda L, x: x ** value, "clamp": lambda L, x: L.clamp(x, max=value),
             "where": lambda L, x: L.where(x > 0, x, value)}
    outcomes = []
    for lib in (torch, mg):
        try:
            calls[op](lib, lib.ones(2, dtype=getattr(lib, dtype)))
            outcomes.append("ok")
        except RuntimeError:
            outcomes.append("RuntimeError")
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["asin", "acos", "asinh", "acosh", "rsqrt"])
def test_half_precision_rsqrt_and_the_gradients_through_it_round_once(name, dtype):
    # one rsqrt for rsqrt, x ** -0.5 and the inverse functions' slopes: in float32, rounded
    # once to the half dtype, as torch's vector loop (1 / sqrt rounded twice before; a size
    # it takes whole: its tail may round each step)
    rng = np.random.default_rng(2)
    x = rng.uniform(-0.99, 0.99, 4096).astype(np.float32)
    x = 1 + 3 * np.abs(x) if name in ("acosh", "rsqrt") else x
    weights = rng.standard_normal(x.size).astype(np.float32)
    results = []
    for lib in (mg, torch):
        t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        y = getattr(lib, name)(t)
        y.backward(lib.tensor(weights).to(getattr(lib, dtype)))
        results.append(t.grad)
    assert_same(*results)          # the values: NumPy's asin and torch's may differ by an ulp


@pytest.mark.parametrize("exponent", [3, -2, 2, -1, 3.0000000001, 4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_small_integral_powers_as_torch_multiplies(dtype, exponent):
    # x² is x·x, x³ x·x·x and x⁻² 1/(x·x), each step rounded, by the exponent as given (C's
    # pow rounds once: a third of float32 values differed); the slopes by them
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(4096) * np.exp(rng.uniform(-20, 20, 4096))).astype(dtype)
    results = []
    for lib in (mg, torch):
        t = lib.tensor(x, requires_grad=True)
        y = t ** exponent
        y.backward(lib.ones_like(y))
        results.append((y, t.grad))
    if exponent not in (4, 3.0000000001):       # C's pow, NumPy's: an ulp off at times
        assert_same(results[0][0], results[1][0])
    if exponent not in (-2, 3.0000000001):      # the slope x^-3, x^2.0000000001: C's pow
        assert_same(results[0][1], results[1][1])
