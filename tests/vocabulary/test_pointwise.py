"""ops/pointwise.py against PyTorch: the unary functions, rounding, prod, the scans, diff,
the one-sided clamps, the in-place forms and a number to a tensor's power (``2 ** x``):
float64 values and gradients, result dtypes for integer and bool inputs, errors, 0-d and
empty tensors."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
from torch_compare import same_call


def both(array, requires_grad=True):
    return mg.tensor(array, requires_grad=requires_grad), \
        torch.tensor(array, requires_grad=requires_grad)


def check(ours, theirs, inputs, atol=1e-12):
    """Values, dtype, and the gradient of a random upstream into each input, against torch."""
    assert str(ours.dtype) == str(theirs.dtype)
    expected = theirs.detach().numpy()
    np.testing.assert_allclose(ours.detach().numpy(), expected, rtol=0, atol=atol)
    upstream = np.random.default_rng(0).standard_normal(expected.shape)
    ours.backward(upstream)
    theirs.backward(torch.tensor(upstream))
    for a, b in inputs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=0, atol=atol)


ULPS = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 3e-7}      # vectorized libm: an ulp


def same(call, *args, rtol=None):
    """``torch_compare.same_call`` with this file's tolerances (``ULPS``)."""
    return same_call(call, *args, ulps=ULPS, rtol=rtol)


UNARY = {"sin": "normal", "cos": "normal", "log10": "positive", "log2": "positive",
         "log1p": "positive", "expm1": "normal", "reciprocal": "positive", "floor": "normal",
         "ceil": "normal", "round": "normal", "trunc": "normal", "frac": "normal"}


def sample(domain, shape, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape) * 2
    return np.abs(data) + 0.1 if domain == "positive" else data


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_and_gradients_match_torch(name):
    for shape in [(3, 4), (), (0, 2)]:
        x, xt = both(sample(UNARY[name], shape))
        check(getattr(mg, name)(x), getattr(torch, name)(xt), [(x, xt)])
        x, xt = both(sample(UNARY[name], shape, seed=1))
        check(getattr(x, name)(), getattr(xt, name)(), [(x, xt)])       # the method form


def test_unary_dtypes_for_integer_bool_and_half_inputs_match_torch():
    inputs = [np.array([1, -2, 3]), np.array([True, False]), np.array([1, 2], np.uint8),
              np.array([1.5, -2.5], np.float16), np.array(4, np.int32)]
    for name in UNARY:
        for data in inputs:
            same(lambda lib, x, name: getattr(lib, name)(x), data, name)


def test_small_arguments_keep_their_precision_in_log1p_and_expm1():
    x, xt = both(np.array([1e-12, -3e-10, 2e-8]))
    check(mg.log1p(x), torch.log1p(xt), [(x, xt)], atol=1e-24)
    x, xt = both(np.array([1e-12, -3e-10, 2e-8]))
    check(mg.expm1(x), torch.expm1(xt), [(x, xt)], atol=1e-24)


def test_limits_match_torch():
    data = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0])
    for name in ["log10", "log2", "log1p", "reciprocal", "frac", "floor", "expm1"]:
        same(lambda lib, x, name: getattr(lib, name)(x), data, name)


def test_round_halves_to_even_and_takes_decimals_as_torch():
    data = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.125, 0.135, 1234.5678, 15.0, 25.0])
    for dtype in ["float64", "float32", "float16"]:
        for decimals in [0, 1, 2, -1, -2]:
            same(lambda lib, x, decimals: lib.round(x, decimals=decimals),
                 data.astype(dtype), decimals)
    x, xt = both(data)
    check(x.round(decimals=2), xt.round(decimals=2), [(x, xt)])
    same(lambda lib, x: lib.round(x, decimals=1), np.array([1, 2]))
    with pytest.raises(TypeError):
        mg.round(mg.tensor([1.5]), decimals=1.0)
    with pytest.raises(TypeError):
        mg.sin([1.0])


# ----- prod -----------------------------------------------------------------------------------
@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_prod_gradient_is_exact_with_zeros_in_the_input(zeros):
    data = np.random.default_rng(2).uniform(0.5, 1.5, (3, 4)) * np.array([1, -1, 1, -1])
    data[0, :zeros] = 0.0                    # row 0 holds the zeros, column 0 too
    data[1:1 + zeros, 2] = 0.0
    for dim, keepdim in [(None, False), (0, False), (1, True), (-1, False)]:
        x, xt = both(data)
        kwargs = {} if dim is None else {"dim": dim, "keepdim": keepdim}
        check(mg.prod(x, **kwargs), torch.prod(xt, **kwargs), [(x, xt)])


def test_prod_dtypes_empty_and_0d_match_torch():
    for data in [np.array([[1, -2], [3, 4]]), np.array([True, False]),
                 np.array([2, 3], np.uint8), np.array([1.5, -2.5, 0.5]), np.zeros((0, 3)),
                 np.array(3.0), np.array([1.5, 2.5], np.float16)]:
        same(lambda lib, x: lib.prod(x), data)
        same(lambda lib, x: x.prod(0), data)
        same(lambda lib, x: lib.prod(x, -1, keepdim=True), data)
        for dtype in ["int64", "float64"]:
            same(lambda lib, x, dtype: lib.prod(x, dtype=getattr(lib, dtype)), data, dtype)
    x, xt = both(np.array(3.0))
    check(mg.prod(x, 0), torch.prod(xt, 0), [(x, xt)])
    x, xt = both(np.zeros((0, 3)))
    check(mg.prod(x, 0), torch.prod(xt, 0), [(x, xt)])


def test_prod_in_bool_stays_bool_as_torch():
    for data in [np.array([[True, False], [True, True]]), np.ones((2, 3)), np.zeros((0, 2))]:
        same(lambda lib, x: lib.prod(x, dtype=lib.bool), data)
        same(lambda lib, x: x.prod(1, keepdim=True, dtype=lib.bool), data)


def test_prod_refuses_what_torch_refuses():
    x = mg.ones(2, 3)
    with pytest.raises(TypeError, match="keepdim"):
        mg.prod(x, keepdim=True)
    with pytest.raises(IndexError):
        mg.prod(x, 2)
    with pytest.raises(TypeError):
        mg.prod(x, 0.5)
    with pytest.raises(TypeError):
        mg.prod(np.ones(3))


# ----- cumsum, cumprod, diff ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_match_torch_in_values_gradients_and_dtypes(name):
    data = np.random.default_rng(3).standard_normal((3, 5))
    for dim in [0, 1, -1]:
        x, xt = both(data)
        check(getattr(mg, name)(x, dim), getattr(torch, name)(xt, dim), [(x, xt)])
    for data in [np.array([[1, -2], [3, 4]]), np.array([True, False, True]),
                 np.array([3, 4], np.uint8), np.array([1, 2], np.int32), np.array(2.5),
                 np.zeros((2, 0)), np.array([1.5, 2.5, 3.5], np.float16)]:
        same(lambda lib, x, name: getattr(lib, name)(x, 0), data, name)
        same(lambda lib, x, name: getattr(x, name)(-1, dtype=lib.float64), data, name)
    x, xt = both(np.array(2.5))
    check(getattr(x, name)(0), getattr(xt, name)(0), [(x, xt)])
    x, xt = both(np.zeros((2, 0)))
    check(getattr(x, name)(1), getattr(xt, name)(1), [(x, xt)])
    for dim in [2, -3]:
        same(lambda lib, x, name, dim: getattr(lib, name)(x, dim), np.ones((2, 2)), name, dim)
    with pytest.raises(TypeError):
        getattr(mg, name)(mg.ones(2), 0.0)


def test_cumprod_gradient_is_exact_with_one_or_several_zeros():
    data = np.array([[2.0, 0.0, 3.0, 0.5, 4.0],       # one zero
                     [0.0, 1.5, 0.0, 2.0, -1.0],      # two zeros, one first
                     [1.5, -2.0, 0.5, 3.0, 0.0],      # a zero last
                     [0.0, 0.0, 0.0, 1.0, 2.0]])      # only zeros before
    for dim in [1, 0]:
        x, xt = both(data)
        check(mg.cumprod(x, dim), torch.cumprod(xt, dim), [(x, xt)])


def test_diff_matches_torch():
    data = np.random.default_rng(4).standard_normal((3, 4))
    for n, dim in [(1, -1), (2, 0), (0, 1), (3, 0), (5, 1)]:
        x, xt = both(data)
        check(mg.diff(x, n, dim), torch.diff(xt, n, dim), [(x, xt)])
    x, xt = both(data)
    (p, pt), (a, at) = both(np.ones((3, 1))), both(np.arange(6.0).reshape(3, 2))
    check(x.diff(dim=1, prepend=p, append=a), xt.diff(dim=1, prepend=pt, append=at),
          [(x, xt), (p, pt), (a, at)])
    cases = [(np.array([True, False, False, True]), {}),
             (np.array([1, 5, 2]), {"append": np.array([1.5])}),
             (np.array([1.5, 2.0], np.float32), {"prepend": np.array([1])}),
             (np.array(1.0), {}), (np.array([1.0, 2.0]), {"n": -1}),
             (np.ones((2, 3)), {"dim": 0, "prepend": np.ones(3)}),
             (np.ones((2, 3)), {"dim": 0, "prepend": np.ones((1, 2))}),
             (np.ones(3), {"dim": 1})]

    def call(lib, x, kwargs):
        kwargs = {k: v if isinstance(v, int) else lib.tensor(v) for k, v in kwargs.items()}
        return lib.diff(x, **kwargs)
    for data, kwargs in cases:
        same(call, data, kwargs)
    with pytest.raises(TypeError):
        mg.diff(mg.ones(3), prepend=1.0)


def test_diff_of_order_0_is_a_copy_without_prepend_or_append():
    data = np.random.default_rng(5).standard_normal((3, 4))
    (x, xt), (p, pt), (a, at) = both(data), both(np.ones((1, 4))), both(np.ones((2, 4)))
    check(mg.diff(x, 0, 0, p, a), torch.diff(xt, 0, 0, pt, at), [(x, xt)])
    assert p.grad is None and pt.grad is None and a.grad is None and at.grad is None
    y = mg.diff(x, 0)
    assert y is not x and not np.shares_memory(y.detach().numpy(), x.detach().numpy())
    # not joined, but checked: ends that could not be joined are torch's errors
    for kwargs in [{"prepend": np.zeros(1)}, {"append": np.zeros((2, 1))},
                   {"prepend": np.zeros((1, 3)), "append": np.zeros((1, 1), np.int64)}]:
        same(lambda lib, x, kwargs=kwargs: lib.diff(
            x, n=0, **{k: lib.tensor(v) for k, v in kwargs.items()}), np.ones((1, 1)))
    with pytest.raises(TypeError, match="prepend"):
        mg.diff(mg.ones(3), 0, prepend=[0.0])


# ----- clamp_min, clamp_max and the in-place forms --------------------------------------------
def test_one_sided_clamps_match_torch():
    data = np.array([-2.0, 0.5, 3.0, 0.5])
    x, xt = both(data)
    check(mg.clamp_min(x, 0.5) + x.clamp_max(1.0),
          torch.clamp_min(xt, 0.5) + xt.clamp_max(1.0), [(x, xt)])
    same(lambda lib, x: lib.clamp_min(x, 0.5), np.array([1, 2, -3]))
    same(lambda lib, x: x.clamp_max(1), np.array([1, 2, -3]))


IN_PLACE = [("clamp_", (0.0, 1.0)), ("clamp_min_", (0.2,)), ("clamp_max_", (0.2,)),
            ("exp_", ()), ("log_", ()), ("sqrt_", ()), ("abs_", ()), ("sigmoid_", ()),
            ("tanh_", ()), ("relu_", ()), ("sin_", ()), ("cos_", ()), ("floor_", ()),
            ("ceil_", ()), ("round_", ()), ("trunc_", ()), ("frac_", ()), ("reciprocal_", ())]


@pytest.mark.parametrize("name, args", IN_PLACE)
def test_in_place_forms_write_into_the_tensor_as_torch(name, args):
    data = np.array([0.25, 1.5, 2.75, 0.5])
    x, xt = mg.tensor(data), torch.tensor(data)
    version = x._version
    assert getattr(x, name)(*args) is x and x._version == version + 1
    getattr(xt, name)(*args)
    np.testing.assert_allclose(x.numpy(), xt.numpy(), rtol=0, atol=1e-12)
    same(lambda lib, x: getattr(x, name)(*args), np.array([1, 2]))
    # on a non-leaf the write is recorded: the gradient flows through it as torch's
    x, xt = both(data)
    y, yt = x * 2.0, xt * 2.0
    getattr(y, name)(*args)
    getattr(yt, name)(*args)
    check(y, yt, [(x, xt)])
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(mg.tensor(data, requires_grad=True), name)(*args)


def test_a_refused_in_place_call_changes_nothing():
    x = mg.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.exp_()
    with pytest.raises(RuntimeError, match="shape"):
        mg.tensor([1.0, 2.0, 3.0]).clamp_(mg.zeros(2, 3))
    assert x.tolist() == [1, 2, 3] and x._version == 0
    x = mg.tensor([0.5, 2.0])
    with mg.no_grad():
        mg.tensor([1.0], requires_grad=True).clamp_(0, 1)       # optimizers' path: allowed
    x.clamp_(max=1.0)
    assert x.tolist() == [0.5, 1.0]


# ----- a number to a tensor's power -----------------------------------------------------------
@pytest.mark.parametrize("base", [2.0, 2, 0, 0.0, -2.0, 1, -1.5, 2.5])
def test_a_number_to_a_float_tensor_power_matches_torch(base):
    data = np.array([[-1.0, 0.0, 0.5, 2.0], [1.5, -0.5, 3.0, 1.0]])
    x, xt = both(data)
    check(base ** x, base ** xt, [(x, xt)])
    x, xt = both(data[0])
    check(mg.pow(base, x), torch.pow(base, xt), [(x, xt)])
    x, xt = both(np.array(0.5))
    check(base ** x, base ** xt, [(x, xt)])


def test_a_number_to_an_integer_or_bool_power_keeps_torchs_dtype():
    exponents = [np.array([0, 1, 3, -1, -2, 62]), np.array([1, 2], np.int32),
                 np.array([1, 2], np.uint8), np.array([True, False]), np.array(3),
                 np.array([1.5, -0.5], np.float16), np.array([], np.int64)]
    for data in exponents:
        for base in [2, -1, 1, 0, 3, True, 2.5, -2, np.float64(1.5)]:
            if data.dtype == np.uint8 and base < 0:
                continue        # torch wraps -1 to 255 in uint8; NumPy refuses the number
            same(lambda lib, x, base: base ** x, data, base)
    with pytest.raises(TypeError):
        "2" ** mg.tensor([1.0])


def test_reflected_subtraction_and_division_promote_and_differentiate_as_torch():
    for data in [np.array([1, 2, -3]), np.array(2), np.array([1.5, 2.0], np.float16),
                 np.array([True, False])]:
        for number in [1.5, 1, 0]:
            same(lambda lib, x, number: number - x, data, number)
            with np.errstate(divide="ignore", invalid="ignore"):          # x / 0: inf, NaN
                same(lambda lib, x, number: number / x, data, number)
    x, xt = both(np.array([[0.5, -2.0], [1.5, 3.0]]))
    check(1.5 - x + 2 / x, 1.5 - xt + 2 / xt, [(x, xt)])
    x, xt = both(np.array(0.75))
    check(3 - x + 1.5 / x, 3 - xt + 1.5 / xt, [(x, xt)])
