"""ops/special.py and the newer unary functions of ops/pointwise.py against PyTorch: tan, the
hyperbolic and inverse functions and their aliases, erfc, erfinv, exp2, logit, sinc,
deg2rad/rad2deg, sgn, signbit, fix, nan_to_num, the top-level abs/neg/sign/square/erf/clip,
and the in-place forms: float64 values and gradients, domain edges (inf and NaN, silently),
result dtypes, complex inputs, errors."""

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from strategies import arrays, shapes

import microgradnorm as mg
from torch_compare import same_call
from microgradnorm.ops import special


def both(array, requires_grad=True):
    return mg.tensor(array, requires_grad=requires_grad), \
        torch.tensor(array, requires_grad=requires_grad)


def close(ours, theirs, rtol=1e-14, atol=1e-300):
    """Equal to within rtol, with inf and NaN in the same places (NaN == NaN)."""
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=atol)


def check(ours, theirs, inputs, rtol=1e-14):
    """Values, dtype and the gradient of a random upstream into each input, against torch."""
    assert str(ours.dtype) == str(theirs.dtype)
    expected = theirs.detach().numpy()
    close(ours.detach().numpy(), expected, rtol)
    upstream = np.random.default_rng(0).standard_normal(expected.shape)
    ours.backward(upstream)
    theirs.backward(torch.tensor(upstream))
    for a, b in inputs:
        close(a.grad.numpy(), b.grad.numpy(force=True), rtol)     # force: a ZeroTensor


ULPS = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 3e-7}    # 2 ulps (vectorized libm)


def same(call, *args, rtol=None):
    """``torch_compare.same_call`` with this file's tolerances (``ULPS``)."""
    return same_call(call, *args, ulps=ULPS, rtol=rtol)


UNARY = {"tan": (-1.4, 1.4), "sinh": (-4, 4), "cosh": (-4, 4), "asin": (-0.99, 0.99),
         "acos": (-0.99, 0.99), "atan": (-5, 5), "asinh": (-5, 5), "acosh": (1.01, 6),
         "atanh": (-0.99, 0.99), "erfc": (-4, 8), "erfinv": (-0.95, 0.95), "exp2": (-5, 5),
         "logit": (0.01, 0.99), "sinc": (-3, 3), "deg2rad": (-400, 400),
         "rad2deg": (-7, 7), "sgn": (-2, 2), "fix": (-4, 4), "nan_to_num": (-2, 2)}
ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
           "arccosh": "acosh", "arctanh": "atanh", "absolute": "abs", "negative": "neg",
           "fix": "trunc", "clip": "clamp"}


def sample(name, shape, seed=0):
    low, high = UNARY[name]
    return np.random.default_rng(seed).uniform(low, high, shape)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_and_gradients_match_torch_in_float64(name):
    for shape in [(3, 4), (), (0, 2)]:
        x, xt = both(sample(name, shape))
        check(getattr(mg, name)(x), getattr(torch, name)(xt), [(x, xt)])
        x, xt = both(sample(name, shape, seed=1))
        check(getattr(x, name)(), getattr(xt, name)(), [(x, xt)])       # the method form
    x, xt = both(sample(name, (5,), seed=2))
    check(getattr(mg, name)(input=x), getattr(torch, name)(input=xt), [(x, xt)])


def test_aliases_are_the_same_functions_and_methods():
    for alias, name in ALIASES.items():
        assert getattr(mg, alias) is getattr(mg, name)
        if alias != "clip":
            assert getattr(mg.Tensor, alias + "_") is getattr(mg.Tensor, name + "_")
    x, xt = both(np.array([-1.5, 0.5, 2.0]))
    check(x.negative() + mg.negative(x) + x.absolute() + x.clip(0, 1),
          xt.negative() + torch.negative(xt) + xt.absolute() + xt.clip(0, 1), [(x, xt)])


@pytest.mark.parametrize("name", sorted(UNARY) + ["abs", "neg", "sign", "square", "erf",
                                                  "absolute", "negative", "signbit"])
def test_result_dtypes_for_integer_bool_and_half_inputs_match_torch(name):
    inputs = [np.array([1, -2, 0]), np.array([True, False]), np.array([1, 2], np.uint8),
              np.array([0.5, -0.25, 0.75], np.float16), np.array([0.5, -0.2], np.float32),
              np.array(0, np.int32), np.array([], np.int64)]
    for data in inputs:
        same(lambda lib, x: getattr(lib, name)(x), data)


def test_bfloat16_computes_in_float32_and_rounds_once():
    data = np.array([0.5, -0.25, 0.75, 0.125])
    for name in ["tan", "asin", "erfc", "erfinv", "exp2", "logit", "sinc", "deg2rad"]:
        x, xt = mg.tensor(data).bfloat16(), torch.tensor(data).bfloat16()
        same(lambda lib, x, name: getattr(lib, name)(x), x.float().numpy(), name)
        got, expected = getattr(mg, name)(x), getattr(torch, name)(xt)
        assert str(got.dtype) == "torch.bfloat16"
        close(got.float().numpy(), expected.float().numpy(), rtol=8e-3)


# ----- domain edges: inf and NaN, silently ------------------------------------------------------
EDGES = {"asin": [1.0, -1.0, 1.5, -1.5, 0.0], "acos": [1.0, -1.0, 1.5, -2.0, 0.0],
         "acosh": [1.0, -1.0, 0.5, -2.0, 1.5], "atanh": [1.0, -1.0, 1.5, -1.5, 0.0],
         "erfinv": [1.0, -1.0, 1.5, -1.0001, 0.0], "logit": [0.0, 1.0, -0.5, 1.5, 0.5],
         "sinc": [0.0, -0.0, 1e-10, 1.0, np.inf], "tan": [np.pi / 2, -np.pi / 2, 0.0],
         "erfc": [np.inf, -np.inf, 27.5, -27.5, 0.0], "exp2": [1100.0, -1100.0, -np.inf]}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_gradients_at_the_domain_edges_match_torch_without_warnings(name):
    data = np.array(EDGES[name] + [np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # no RuntimeWarning from NumPy
        x, xt = both(data)
        y, yt = getattr(mg, name)(x), getattr(torch, name)(xt)
        y.backward(np.ones(len(data)))
        yt.backward(torch.ones(len(data), dtype=torch.float64))
        close(y.detach().numpy(), yt.detach().numpy())
        close(x.grad.numpy(), xt.grad.numpy())
        same(lambda lib, x: getattr(lib, name)(x), data.astype(np.float32))


# ----- erfc and erfinv: precision -----------------------------------------------------------------
def test_erfc_keeps_its_relative_precision_across_the_tail():
    x = np.concatenate([np.linspace(-6, 27, 20001),
                        np.random.default_rng(3).uniform(-6, 27, 20000)])
    got = mg.erfc(mg.tensor(x)).numpy()
    expected = torch.erfc(torch.tensor(x)).numpy()
    libm = np.array([math.erfc(v) for v in x])
    normal = libm > np.finfo(np.float64).tiny          # subnormal from x ≈ 26.55
    for reference in (expected, libm):
        close(got[normal], reference[normal], rtol=1e-15)
        close(got[~normal], reference[~normal], rtol=0, atol=1e-323)     # an ulp or two
    assert mg.erfc(mg.tensor(10.0)).item() == pytest.approx(2.088487583762545e-45, rel=1e-15)
    assert 1 - mg.erf(mg.tensor(10.0)).item() == 0
    np.testing.assert_array_equal(special.erfc_array(np.array([np.inf, -np.inf, 30.0])),
                                  [0.0, 2.0, 0.0])
    same(lambda lib, x: lib.erfc(x), x[x < 9].astype(np.float32))   # float32 normal: < 9.2


def test_erfinv_matches_torch_and_inverts_erf():
    y = np.concatenate([np.linspace(-0.9, 0.9, 4001),
                        np.random.default_rng(4).uniform(-0.9, 0.9, 4000)])
    close(mg.erfinv(mg.tensor(y)).numpy(), torch.erfinv(torch.tensor(y)).numpy(), rtol=1e-15)
    # near ±1 the problem is ill-conditioned: dx = dy · √π/2 · exp(x²), both libraries
    # within a few ulps of y of each other
    y = 1 - np.geomspace(1e-16, 0.1, 2000)
    y = np.concatenate([y, -y])
    got, expected = mg.erfinv(mg.tensor(y)).numpy(), torch.erfinv(torch.tensor(y)).numpy()
    slope = np.sqrt(np.pi) / 2 * np.exp(expected ** 2)
    assert np.all(np.abs(got - expected) <= 4 * np.spacing(1.0) * slope + 4 * np.spacing(got))
    same(lambda lib, x: lib.erfinv(x), y.astype(np.float32)[::50])
    x = np.linspace(-3, 3, 601)
    close(mg.erfinv(mg.erf(mg.tensor(x))).numpy(), x, rtol=2e-12)


# ----- logit ------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [None, 0.1, 0.0, -0.1, 0.6, 0.5, 1e-6, True])
def test_logit_clamps_with_eps_and_its_gradient_is_torchs(eps):
    data = np.array([0.0, 1.0, -0.5, 1.5, 0.3, 0.05, 0.95, 0.5, 0.55, np.nan])
    x, xt = both(data)
    y, yt = mg.logit(x, eps), torch.logit(xt, eps)
    y.backward(np.ones(len(data)))
    yt.backward(torch.ones(len(data), dtype=torch.float64))
    close(y.detach().numpy(), yt.detach().numpy())
    close(x.grad.numpy(), xt.grad.numpy())
    same(lambda lib, x: lib.logit(x, eps=eps), data.astype(np.float32))
    same(lambda lib, x: x.logit(eps), np.array([0, 1, 2]))


def test_logit_takes_a_tensor_eps_and_refuses_other_things():
    x, xt = both(np.array([0.01, 0.5, 0.99]))
    check(mg.logit(x, mg.tensor(0.1)), torch.logit(xt, torch.tensor(0.1)), [(x, xt)])
    with pytest.raises(TypeError, match="eps"):
        mg.logit(mg.tensor([0.5]), "0.1")
    with pytest.raises(TypeError):
        mg.logit([0.5])
    for call in (lambda: mg.tensor([0.5]).logit(out=mg.tensor([0.0])),   # methods: no out=
                 lambda: mg.tensor([0.5]).tan(out=mg.tensor([0.0]))):
        with pytest.raises(TypeError, match="out"):
            call()


# ----- sinc, sgn, signbit, nan_to_num -----------------------------------------------------------
def test_sinc_is_one_at_zero_with_gradient_zero():
    x, xt = both(np.array([0.0, -0.0, 1e-300, 1e-8, 0.5, -2.0, 3.0]))
    check(mg.sinc(x), torch.sinc(xt), [(x, xt)])
    assert mg.sinc(mg.tensor(0.0)).item() == 1.0


def test_sgn_and_signbit_match_torch():
    data = np.array([-2.0, -0.0, 0.0, 3.0, np.nan, -np.nan, np.inf, -np.inf])
    for dtype in [np.float64, np.float32, np.float16]:
        same(lambda lib, x: lib.signbit(x), data.astype(dtype))
        same(lambda lib, x: x.sgn(), data.astype(dtype))
    for ints in [np.array([-3, 0, 2]), np.array([True, False]), np.array([0, 200], np.uint8)]:
        same(lambda lib, x: lib.signbit(x), ints)
        same(lambda lib, x: x.sgn(), ints)
    signs = mg.signbit(mg.tensor([-1.0, 1.0], requires_grad=True))
    assert not signs.requires_grad and signs.dtype == mg.bool
    bits = mg.signbit(mg.tensor(data).bfloat16()).numpy()
    np.testing.assert_array_equal(bits, np.signbit(data))


def test_nan_to_num_replaces_non_finite_values_and_gates_the_gradient():
    data = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0, 0.0])
    x, xt = both(data)
    check(mg.nan_to_num(x), torch.nan_to_num(xt), [(x, xt)])
    x, xt = both(data)
    check(x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3), xt.nan_to_num(1.0, 2.0, -3),
          [(x, xt)])
    for dtype in [np.float32, np.float16]:
        for kwargs in [{}, {"nan": 7}, {"posinf": 1e300}, {"neginf": -1.0, "nan": None}]:
            same(lambda lib, x, kwargs: lib.nan_to_num(x, **kwargs), data.astype(dtype), kwargs)
    bfloat = mg.nan_to_num(mg.tensor(data).bfloat16()).float().numpy()
    np.testing.assert_array_equal(bfloat, torch.nan_to_num(torch.tensor(data).bfloat16())
                                  .float().numpy())
    for ints in [np.array([1, -2]), np.array([True, False]), np.array(3, np.uint8)]:
        same(lambda lib, x: lib.nan_to_num(x, nan=1.0), ints)
    same(lambda lib, x: lib.nan_to_num(x, nan=lib.tensor(4.0)), data)
    with pytest.raises(TypeError, match="nan"):
        mg.nan_to_num(mg.tensor(data), nan="a")


# ----- complex inputs ---------------------------------------------------------------------------
COMPLEX = ["tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "exp2",
           "sinc", "sgn"]


@pytest.mark.parametrize("name", COMPLEX)
def test_complex_values_and_gradients_match_torch(name):
    data = np.array([1 + 1j, 0.5 - 2j, -0.3 + 0.2j, 0j, -1.5 - 0.5j])
    upstream = np.random.default_rng(5).standard_normal((5, 2))
    z, zt = both(data)
    y, yt = getattr(mg, name)(z), getattr(torch, name)(zt)
    (mg.view_as_real(y) * mg.tensor(upstream)).sum().backward()
    (torch.view_as_real(yt) * torch.tensor(upstream)).sum().backward()
    close(y.detach().numpy(), yt.detach().numpy())
    close(z.grad.numpy(), zt.grad.numpy(), rtol=1e-13)


def test_complex_inputs_are_refused_where_torch_refuses_them():
    data = np.array([1 + 1j, 0.5 - 2j])
    for name in ["erfc", "erfinv", "logit", "deg2rad", "rad2deg", "signbit", "fix", "sign",
                 "erf"]:
        same(lambda lib, x, name: getattr(lib, name)(x), data, name)
    same(lambda lib, x: lib.nan_to_num(x), np.array([complex(np.nan, np.inf), 1 - 1j]))
    with pytest.raises(RuntimeError, match="complex"):
        mg.nan_to_num(mg.tensor(data, requires_grad=True))


# ----- the elementwise functions now at the top level -------------------------------------------
def test_top_level_elementwise_functions_match_torch():
    x, xt = both(np.array([-1.5, 0.0, 2.0, 0.25]))
    check(mg.abs(x) + mg.neg(x) + mg.sign(x) + mg.square(x) + mg.erf(x) + mg.clip(x, -1, 1),
          torch.abs(xt) + torch.neg(xt) + torch.sign(xt) + torch.square(xt) + torch.erf(xt)
          + torch.clip(xt, -1, 1), [(x, xt)])
    x, xt = both(np.array([0.5, -1.0]))
    check(x.erf(), xt.erf(), [(x, xt)])
    for name in ["abs", "neg", "sign", "square", "erf", "sgn", "tan", "nan_to_num"]:
        with pytest.raises(TypeError):
            getattr(mg, name)([1.0])
    same(lambda lib, x: -x, np.array([True, False]))


# ----- in-place forms ---------------------------------------------------------------------------
IN_PLACE = [("tan_", ()), ("sinh_", ()), ("cosh_", ()), ("asin_", ()), ("acos_", ()),
            ("atan_", ()), ("asinh_", ()), ("acosh_", ()), ("atanh_", ()), ("arcsin_", ()),
            ("arccos_", ()), ("arctan_", ()), ("arcsinh_", ()), ("arctanh_", ()),
            ("erfc_", ()), ("erfinv_", ()), ("exp2_", ()), ("logit_", ()),
            ("logit_", (0.3,)), ("sinc_", ()), ("deg2rad_", ()), ("rad2deg_", ()),
            ("expm1_", ()), ("log10_", ()), ("log2_", ()), ("log1p_", ()), ("erf_", ()),
            ("neg_", ()), ("negative_", ()), ("sign_", ()), ("sgn_", ()), ("rsqrt_", ()),
            ("square_", ()), ("absolute_", ()), ("fix_", ()), ("nan_to_num_", ()),
            ("nan_to_num_", (1.0, 2.0))]
NOT_RECORDED_BY_TORCH = {"asinh_", "acosh_", "atanh_", "arcsinh_", "arccosh_", "arctanh_"}


@pytest.mark.parametrize("name, args", IN_PLACE)
def test_in_place_forms_write_into_the_tensor_as_torch(name, args):
    data = np.array([0.25, 0.5, 0.75, 0.125]) * (8 if "acosh" in name else 1) + \
        (1 if "acosh" in name else 0)
    x, xt = mg.tensor(data), torch.tensor(data)
    version = x._version
    assert getattr(x, name)(*args) is x and x._version == version + 1
    getattr(xt, name)(*args)
    close(x.numpy(), xt.numpy())
    same(lambda lib, x: getattr(x, name)(*args), np.array([1, 2]))       # int: refused or not
    x, xt = both(data)
    y, yt = x * 1.5, xt * 1.5                 # a non-leaf: the write is recorded
    getattr(y, name)(*args)
    if name in NOT_RECORDED_BY_TORCH:         # torch: "not implemented"; here recorded
        yt = getattr(torch, name.rstrip("_").replace("arc", "a"))(xt * 1.5)
    else:
        getattr(yt, name)(*args)
    check(y, yt, [(x, xt)])
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(mg.tensor(data, requires_grad=True), name)(*args)


def test_a_refused_in_place_call_changes_nothing():
    mask = mg.tensor([True, False])
    with pytest.raises(RuntimeError, match="bool"):
        mask.neg_()
    with pytest.raises(RuntimeError, match="can't be cast"):
        mask.square_()
    ints = mg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        ints.erfc_()
    assert mask.tolist() == [True, False] and ints.tolist() == [1, 2]
    assert mask._version == ints._version == 0


def test_torchs_keyword_names():
    data = np.array([-1.5, 0.5, 2.0])
    for call in [lambda lib, t: lib.square(input=t), lambda lib, t: lib.pow(input=t, exponent=3),
                 lambda lib, t: t.pow(exponent=2), lambda lib, t: lib.clamp_min(input=t, min=0.0),
                 lambda lib, t: lib.clamp_max(input=t, max=0.7)]:
        same(call, data)
    # x^0.5 is √x rounded once here; torch's float64 pow and sqrt give 0.5 and 2.0 an ulp
    # below that on an Intel AVX-512 CPU (0.7071067811865475, 1.414213562373095)
    same(lambda lib, t: lib.pow(t, exponent=0.5), data, rtol=2.3e-16)


def test_erfinv_output_may_change_in_place_before_backward():
    # erfinv saves its input, as torch's, not its output
    data = np.array([0.25, -0.5, 0.75])
    x, xt = both(data)
    y, yt = mg.erfinv(x), torch.erfinv(xt)
    y.mul_(2)
    yt.mul_(2)
    close(y.detach().numpy(), yt.detach().numpy())
    y.sum().backward()
    yt.sum().backward()
    close(x.grad.numpy(), xt.grad.numpy())
    for lib in (torch, mg):                  # its input changed in place: refused, as torch's
        a = lib.tensor(data, requires_grad=True).clone()
        y = lib.erfinv(a)
        a.mul_(2)
        with pytest.raises(RuntimeError, match="modified"):
            y.sum().backward()


# ----- hypothesis: shapes and finite differences ------------------------------------------------
@settings(max_examples=25)
@given(shape=shapes(max_dims=3, max_side=4), data=arrays((7,), low=-0.9, high=0.9))
def test_finite_differences_agree_on_drawn_shapes(shape, data):
    values = np.resize(data, shape)
    for name in ["tan", "asin", "atanh", "erfc", "erfinv", "sinc", "asinh"]:
        x = mg.tensor(values, requires_grad=True)
        assert mg.gradcheck(getattr(mg, name), x)
        close(getattr(mg, name)(x).detach().numpy(),
              getattr(torch, name)(torch.tensor(values)).numpy(), rtol=1e-14)
    x = mg.tensor(values * 0.45 + 0.5, requires_grad=True)          # in [0.095, 0.905]
    assert mg.gradcheck(lambda t: mg.logit(t, 0.05), x)
