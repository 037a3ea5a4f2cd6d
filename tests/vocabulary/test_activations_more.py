"""The rarer activations of ``F`` (activations.py, and relu6, rrelu and the in-place forms
of functional.py), their modules, gumbel_softmax, pairwise_distance and the distance modules,
against PyTorch: float64 values and the gradient of a random upstream, float32 values,
result dtypes for integer and bool inputs (or PyTorch's error class), 0-d and empty inputs,
the kinks and bounds, NaN and inf, in-place rules, torch's random draws, reprs."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings

import microgradnorm as mg
import microgradnorm.nn.functional as F
from microgradnorm import nn
from strategies import arrays, shapes
from torch_compare import check, pair, same, same_error

TF = torch.nn.functional


def both(name, *args, **kwargs):
    """(ours, theirs): the F function ``name`` of each library with these arguments."""
    return (lambda x: getattr(F, name)(x, *args, **kwargs),
            lambda x: getattr(TF, name)(x, *args, **kwargs))


ACTIVATIONS = {     # PyTorch's defaults and one other setting
    "relu6": both("relu6"),
    "hardsigmoid": both("hardsigmoid"),
    "hardswish": both("hardswish"),
    "selu": both("selu"),
    "celu": both("celu"),
    "celu_alpha": both("celu", 0.7),
    "softshrink": both("softshrink"),
    "softshrink_lambd": both("softshrink", 1.5),
    "softshrink_zero": both("softshrink", 0.0),
    "hardshrink": both("hardshrink"),
    "hardshrink_lambd": both("hardshrink", 2.0),
    "tanhshrink": both("tanhshrink"),
    "softsign": both("softsign"),
    "threshold": both("threshold", 0.5, -2.0),
    "threshold_at_zero": both("threshold", 0.0, 7.0),
    "rrelu_eval": both("rrelu"),
    "rrelu_eval_bounds": both("rrelu", 0.2, 0.6),
    "softmin": both("softmin", dim=-1),
    "glu": both("glu"),
    "glu_dim0": both("glu", 0),
}


def activation_inputs(n=36):
    data = 4 * np.random.default_rng(1).standard_normal(n)
    # the kinks and bounds of each: 0, ±0.5, ±1.5, ±2, ±3, 6, and far out
    corners = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.0, -2.0, 3.0, -3.0, 6.0, 7.0, 40.0, -40.0,
               700.0, -700.0, 1e-9, -1e-9]
    return np.concatenate([corners, data])[:n]


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_match_torch(name):
    ours, theirs = ACTIVATIONS[name]
    for shape in [(6, 6), (), (0, 4)]:
        data = activation_inputs()[:int(np.prod(shape))].reshape(shape)
        if name.startswith("glu") and not shape:
            same_error(lambda d=data: ours(mg.tensor(d)), lambda d=data: theirs(torch.tensor(d)))
            continue
        x, xt = pair(data)
        check(ours(x), theirs(xt), [(x, xt)])
    x32 = activation_inputs().astype(np.float32).reshape(6, 6)   # float32: to a few ulps
    np.testing.assert_allclose(ours(mg.tensor(x32)).numpy(), theirs(torch.tensor(x32)).numpy(),
                               rtol=1e-6, atol=1e-7)
    for dtype in ("float32", "float16", "int64", "uint8", "bool"):   # dtypes, or torch's error
        data = np.array([[-2, 0, 3, 1]]).astype(dtype)
        same(lambda d=data: ours(mg.tensor(d)), lambda d=data: theirs(torch.tensor(d)))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values_at_nan_and_inf_match_torch(name):
    # the values only: torch's own gradient at NaN differs between its vectorised and
    # scalar loops (a NaN's position in the tensor decides it)
    ours, theirs = ACTIVATIONS[name]
    data = np.array([[np.nan, np.inf, -np.inf, 1.0], [-1.0, np.nan, 0.0, -np.inf]])
    same(lambda: ours(mg.tensor(data)), lambda: theirs(torch.tensor(data)))


IN_PLACE = {    # F's in-place forms and the inplace=True of the functions that have one
    "relu_": (F.relu_, torch.relu_),
    "elu_": (lambda x: F.elu_(x, 0.5), lambda x: TF.elu_(x, 0.5)),
    "leaky_relu_": (lambda x: F.leaky_relu_(x, 0.2), lambda x: TF.leaky_relu_(x, 0.2)),
    "hardtanh_": (lambda x: F.hardtanh_(x, -2.0, 1.0), lambda x: TF.hardtanh_(x, -2.0, 1.0)),
    "selu_": (F.selu_, torch.selu_),
    "celu_": (lambda x: F.celu_(x, 2.0), lambda x: torch.celu_(x, 2.0)),
    "threshold_": (lambda x: F.threshold_(x, 0.5, 9.0), lambda x: TF.threshold_(x, 0.5, 9.0)),
    "rrelu_": (F.rrelu_, torch.rrelu_),
    "relu6": (lambda x: F.relu6(x, inplace=True), lambda x: TF.relu6(x, inplace=True)),
    "hardsigmoid": (lambda x: F.hardsigmoid(x, True), lambda x: TF.hardsigmoid(x, True)),
    "hardswish": (lambda x: F.hardswish(x, True), lambda x: TF.hardswish(x, True)),
    "selu": (lambda x: F.selu(x, True), lambda x: TF.selu(x, True)),
    "threshold": (lambda x: F.threshold(x, 1.0, 0.0, True),
                  lambda x: TF.threshold(x, 1.0, 0.0, True)),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_forms_write_into_the_input_and_keep_the_gradient(name):
    ours, theirs = IN_PLACE[name]
    data = activation_inputs()
    x, xt = pair(data)
    h, ht = x * 1.5, xt * 1.5                               # non-leaves: in place is allowed
    y, yt = ours(h), theirs(ht)
    assert y is h
    check(y, yt, [(x, xt)])
    plain = mg.tensor(data)                                 # no graph: a plain write
    assert ours(plain) is plain
    np.testing.assert_allclose(plain.numpy(), theirs(torch.tensor(data)).numpy(), atol=1e-12)
    leaf, leaf_t = pair(data)                               # a leaf that requires grad
    same_error(lambda: ours(leaf), lambda: theirs(leaf_t))
    np.testing.assert_array_equal(leaf.detach().numpy(), data)


def test_in_place_forms_keep_an_integer_tensor_integral_as_torch():
    for ours, theirs in [(lambda x: F.relu6(x, True), lambda x: TF.relu6(x, True)),
                         (lambda x: F.threshold_(x, 1.5, -9.7),
                          lambda x: TF.threshold_(x, 1.5, -9.7))]:
        data = np.array([-3, 0, 1, 2, 9])
        a, b = mg.tensor(data), torch.tensor(data)
        assert ours(a) is a
        theirs(b)
        assert a.dtype == np.int64
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_threshold_casts_its_bounds_to_an_integer_input_as_torch():
    data = np.array([-1, 0, 1, 2])
    for threshold, value in [(-0.5, 9.7), (1.5, -9.7), (0, 3)]:
        same(lambda t=threshold, v=value: F.threshold(mg.tensor(data), t, v),
             lambda t=threshold, v=value: TF.threshold(torch.tensor(data), t, v))


def test_threshold_converts_its_numbers_as_torchs_scalars():
    # cast to the input's dtype with torch's overflow check, without NumPy's warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = F.threshold(mg.tensor([1.0, 2.0, 3.0, np.nan], dtype=mg.bfloat16), 2.0, -2.0)
        want = TF.threshold(torch.tensor([1.0, 2.0, 3.0, np.nan], dtype=torch.bfloat16), 2.0,
                            -2.0)
        assert got.dtype == mg.bfloat16
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
        for data, dtype, threshold, value in [([1.0, 2.0], "float32", 1e39, 0.0),
                                              ([1.0, 2.0], "float16", 0.0, 1e5),
                                              ([1, 2], "int64", np.nan, 5),
                                              ([1, 2], "int64", 1.0, np.inf),
                                              ([1, 3], "uint8", 2, -2), ([1, 3], "uint8", 2, 300),
                                              ([1, 3], "int8", -1.5, -128),
                                              ([1, 3], "int8", -1.5, -128.7),
                                              ([1, 3], "uint8", 2, -2.0),
                                              ([1, 3], "uint8", 255.5, 0),
                                              ([1, 3], "int8", 127.0, -0.5)]:
            same(lambda d=data, t=dtype, a=threshold, b=value: F.threshold(
                     mg.tensor(np.array(d, t)), a, b),
                 lambda d=data, t=dtype, a=threshold, b=value: TF.threshold(
                     torch.tensor(np.array(d, t)), a, b))


def test_celu_takes_extreme_alphas_as_torch():
    data = np.array([-1.0, 0.5, -1e-310, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no overflow or division warnings
        for alpha in (1e-300, 1e-46, 3e38, 1e39, -1e39):
            x, xt = pair(data)
            y, yt = F.celu(x, alpha), TF.celu(xt, alpha)
            np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
            # the backward's 1 / alpha in float: inf for an alpha that rounds to 0, refused
            # for one beyond float's range
            if abs(alpha) > 3.5e38:
                same_error(lambda y=y: y.sum().backward(), lambda yt=yt: yt.sum().backward())
            else:
                check(y, yt, [(x, xt)])
        for dtype in ("float32", "bfloat16"):            # alpha and 1/alpha taken as float
            for alpha in (1e-300, 1e-40, 1e39):
                same_error(lambda d=dtype, a=alpha: F.celu(mg.ones(2, dtype=d), a),
                           lambda d=dtype, a=alpha: TF.celu(torch.ones(2, dtype=getattr(
                               torch, d)), a))


def test_argument_errors_as_torch():
    x, xt = pair(np.array([-1.0, 1.0]))
    same_error(lambda: F.celu(x, 0.0), lambda: TF.celu(xt, 0.0))
    same_error(lambda: F.softshrink(x, -0.1), lambda: TF.softshrink(xt, -0.1))
    for dtype in ("float64", "float32", "float16", "bfloat16"):   # 0 <= lambd <= finfo.max
        for lambd in (np.inf, 7e4, 3.39e38, 3.5e38, 1e300):
            same(lambda d=dtype, v=lambd: F.softshrink(mg.ones(2, dtype=d), v).float(),
                 lambda d=dtype, v=lambd: TF.softshrink(torch.ones(2, dtype=getattr(
                     torch, d)), v).float())
    same_error(lambda: F.rrelu(x, 0.5, 0.1), lambda: TF.rrelu(xt, 0.5, 0.1))
    same_error(lambda: F.rrelu(x, 0.5, 0.1, True), lambda: TF.rrelu(xt, 0.5, 0.1, True))
    same_error(lambda: F.glu(mg.ones(3, 5)), lambda: TF.glu(torch.ones(3, 5)))
    same_error(lambda: F.glu(mg.ones(3, 4), dim=2), lambda: TF.glu(torch.ones(3, 4), dim=2))
    same_error(lambda: F.glu(mg.ones(2, 4, dtype="int64")),
               lambda: TF.glu(torch.ones(2, 4, dtype=torch.int64)))
    for fn in (F.selu, F.hardswish, F.hardshrink, F.softsign, F.tanhshrink, F.relu6):
        with pytest.raises(TypeError):
            fn([1.0, 2.0])
    with pytest.raises(TypeError):
        F.softshrink(x, "0.5")
    y = F.hardshrink(x, -0.1)               # a negative lambd: every element kept, as torch
    np.testing.assert_array_equal(y.detach().numpy(), [-1.0, 1.0])


# ----- prelu -----------------------------------------------------------------------------
@pytest.mark.parametrize("shape, channels", [((4, 3, 2, 2), 3), ((4, 3, 2, 2), 1), ((5, 2), 2),
                                             ((5,), 1), ((), 1), ((0, 3), 3), ((2, 3, 4), 3)])
def test_prelu_values_and_gradients_match_torch(shape, channels):
    data = activation_inputs(int(np.prod(shape))).reshape(shape)
    slopes = np.linspace(-0.5, 0.75, channels)
    x, xt = pair(data)
    w, wt = pair(slopes)
    check(F.prelu(x, w), TF.prelu(xt, wt), [(x, xt), (w, wt)])
    x, xt = pair(data)
    w, wt = pair(np.array(0.3))                             # a 0-d weight: one slope
    check(F.prelu(x, w), TF.prelu(xt, wt), [(x, xt), (w, wt)])


def test_prelu_errors_as_torch():
    for data, weight in [(np.ones((2, 3)), np.ones(2)), (np.array(-1.0), np.ones(2)),
                         (np.ones(2), np.ones((1, 1))), (np.ones(2), np.ones(2))]:
        same_error(lambda d=data, w=weight: F.prelu(mg.tensor(d), mg.tensor(w)),
                   lambda d=data, w=weight: TF.prelu(torch.tensor(d), torch.tensor(w)))
    same_error(lambda: F.prelu(mg.ones(2, 3), mg.ones(3, dtype="float64")),
               lambda: TF.prelu(torch.ones(2, 3), torch.ones(3, dtype=torch.float64)))
    same_error(lambda: F.prelu(mg.tensor([1, 2]), mg.tensor([1])),
               lambda: TF.prelu(torch.tensor([1, 2]), torch.tensor([1])))
    with pytest.raises(TypeError):
        F.prelu(mg.ones(2, 3), [0.25])


def test_prelu_module_starts_at_init_and_learns_one_slope_per_channel():
    ours, theirs = nn.PReLU(3, init=0.1, dtype="float64"), torch.nn.PReLU(3, 0.1,
                                                                           dtype=torch.float64)
    assert repr(ours) == repr(theirs) == "PReLU(num_parameters=3)"
    assert [name for name, _ in ours.named_parameters()] == ["weight"]
    data = activation_inputs(24).reshape(2, 3, 4)
    x, xt = pair(data)
    check(ours(x), theirs(xt), [(x, xt), (ours.weight, theirs.weight)])
    assert nn.PReLU().weight.dtype == np.float32 and nn.PReLU().weight.shape == (1,)


def test_prelu_module_takes_no_slopes_as_torch():
    ours, theirs = nn.PReLU(0), torch.nn.PReLU(0)
    assert repr(ours) == repr(theirs) == "PReLU(num_parameters=0)"
    assert ours.weight.shape == tuple(theirs.weight.shape) == (0,)
    same(lambda: ours(mg.ones(2, 0)).detach(), lambda: theirs(torch.ones(2, 0)).detach())
    same_error(lambda: nn.PReLU(-1), lambda: torch.nn.PReLU(-1))


# ----- rrelu's random slopes: torch's draws --------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_rrelu_training_draws_torchs_slopes_for_the_same_seed(dtype):
    data = np.concatenate([activation_inputs(30), [np.nan, 0.0]]).astype(dtype).reshape(4, 8)
    mg.manual_seed(3)
    torch.manual_seed(3)
    x, xt = pair(data)
    y, yt = F.rrelu(x, training=True), TF.rrelu(xt, training=True)
    y2, yt2 = F.rrelu(x, 0.1, 0.9, True), TF.rrelu(xt, 0.1, 0.9, True)
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(y2.detach().numpy(), yt2.detach().numpy())
    (y.sum() + y2.sum()).backward()
    (yt.sum() + yt2.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())      # the slopes drawn
    # the generator moved as torch's: one 64-bit draw per element <= 0
    np.testing.assert_array_equal(mg.rand(3, dtype="float64").numpy(),
                                  torch.rand(3, dtype=torch.float64).numpy())


def test_rrelu_trains_in_bfloat16_with_torchs_draws_and_refuses_float16():
    # bfloat16: the slope drawn in float, x·r computed in float and rounded once; the
    # gradient the slope rounded to bfloat16 (the noise torch saves)
    data = np.concatenate([activation_inputs(60), [np.nan, 0.0, -0.0, -np.inf]])
    mg.manual_seed(5)
    torch.manual_seed(5)
    x = mg.tensor(data, dtype=mg.bfloat16, requires_grad=True)
    xt = torch.tensor(data).to(torch.bfloat16).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y, yt = F.rrelu(x, 0.1, 0.7, training=True), TF.rrelu(xt, 0.1, 0.7, training=True)
    assert y.dtype == mg.bfloat16
    np.testing.assert_array_equal(y.float().detach().numpy(), yt.float().detach().numpy())
    upstream = np.random.default_rng(6).standard_normal(data.shape)
    y.backward(mg.tensor(upstream, dtype=mg.bfloat16))
    yt.backward(torch.tensor(upstream).to(torch.bfloat16))
    np.testing.assert_array_equal(x.grad.float().numpy(), xt.grad.float().numpy())
    np.testing.assert_array_equal(mg.rand(3, dtype="float64").numpy(),
                                  torch.rand(3, dtype=torch.float64).numpy())
    same_error(lambda: F.rrelu(mg.ones(2, dtype=mg.float16), training=True),
               lambda: TF.rrelu(torch.ones(2, dtype=torch.float16), training=True))


BFLOAT16_NAN = {      # the activations that compare their input outside a node
    "leaky_relu": lambda f, lib, x: f.leaky_relu(x, 0.2),
    "elu": lambda f, lib, x: f.elu(x),
    "rrelu": lambda f, lib, x: f.rrelu(x),
    "threshold": lambda f, lib, x: f.threshold(x, 0.5, -1),
    "prelu": lambda f, lib, x: f.prelu(x, lib.tensor([0.25], dtype=lib.bfloat16)),
    "softplus": lambda f, lib, x: f.softplus(x, threshold=2),
    "hardtanh": lambda f, lib, x: f.hardtanh(x, -1, 1),
}


@pytest.mark.parametrize("name", sorted(BFLOAT16_NAN))
def test_a_bfloat16_nan_passes_silently_as_torch(name):
    # ml_dtypes' bfloat16 comparisons flag "invalid" at NaN, which NumPy turns into a warning
    call = BFLOAT16_NAN[name]
    data = np.array([np.nan, -1.0, 0.0, -0.0, 0.25, 2.5, np.inf, -np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = call(F, mg, mg.tensor(data, dtype=mg.bfloat16))
        want = call(TF, torch, torch.tensor(data).to(torch.bfloat16))
    assert got.dtype == mg.bfloat16
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


def test_rrelu_module_draws_while_training_and_uses_the_mean_slope_in_eval():
    ours, theirs = nn.RReLU(0.1, 0.3), torch.nn.RReLU(0.1, 0.3)
    data = activation_inputs(12)
    mg.manual_seed(8)
    torch.manual_seed(8)
    np.testing.assert_array_equal(ours(mg.tensor(data)).numpy(),
                                  theirs(torch.tensor(data)).numpy())
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(ours(mg.tensor(data)).numpy(),
                               theirs(torch.tensor(data)).numpy(), atol=1e-15)


# ----- modules: forward as torch's, reprs ------------------------------------------------
MODULES = [
    lambda m: m.ReLU6(), lambda m: m.ReLU6(inplace=True), lambda m: m.Hardsigmoid(),
    lambda m: m.Hardswish(inplace=True), lambda m: m.SELU(), lambda m: m.SELU(True),
    lambda m: m.CELU(), lambda m: m.CELU(0.5, True), lambda m: m.GLU(), lambda m: m.GLU(1),
    lambda m: m.Softsign(), lambda m: m.Softmin(1), lambda m: m.LogSigmoid(),
    lambda m: m.Threshold(0.1, 20), lambda m: m.Threshold(0.1, 20.0, True),
    lambda m: m.Softshrink(), lambda m: m.Softshrink(0.3), lambda m: m.Hardshrink(0.3),
    lambda m: m.Tanhshrink(), lambda m: m.RReLU(), lambda m: m.RReLU(0.1, 0.3, True),
    lambda m: m.Softmax2d(), lambda m: m.PairwiseDistance(), lambda m: m.CosineSimilarity(),
    lambda m: m.PairwiseDistance(1.0, 0.0, True), lambda m: m.CosineSimilarity(0, 1e-6),
    lambda m: m.Softmin(), lambda m: m.SiLU(), lambda m: m.SiLU(inplace=True),
]


@pytest.mark.parametrize("build", MODULES, ids=lambda b: repr(b(torch.nn)))
def test_modules_print_and_compute_as_torchs(build):
    ours, theirs = build(nn), build(torch.nn)
    assert repr(ours) == repr(theirs)
    ours.eval()
    theirs.eval()
    data = activation_inputs(48).reshape(2, 4, 3, 2)
    if isinstance(theirs, (torch.nn.PairwiseDistance, torch.nn.CosineSimilarity)):
        other = np.cos(data)
        got, want = ours(mg.tensor(data), mg.tensor(other)), theirs(torch.tensor(data),
                                                                     torch.tensor(other))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")           # Softmin(): the implicit dim's warning
            got, want = ours(mg.tensor(data)), theirs(torch.tensor(data))
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)


def test_softmin_without_dim_warns_and_takes_a_dtype_as_torch():
    data = activation_inputs(24).reshape(2, 3, 4)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        got = F.softmin(mg.tensor(data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = TF.softmin(torch.tensor(data))
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)
    same(lambda: F.softmin(mg.tensor([1, 2]), 0, dtype="float64"),
         lambda: TF.softmin(torch.tensor([1, 2]), 0, dtype=torch.float64))
    same(lambda: F.softmin(mg.tensor([1.0, 2.0]), 0, dtype=mg.float64),
         lambda: TF.softmin(torch.tensor([1.0, 2.0]), 0, dtype=torch.float64))


def softmin_without_dim(functional, x):
    return functional.softmin(x)                     # the line the warning names


def test_softmin_warning_names_its_callers_line_as_torch():
    line = softmin_without_dim.__code__.co_firstlineno + 1
    for functional, lib in [(F, mg), (TF, torch)]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            softmin_without_dim(functional, lib.ones(2, 3))
        assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_softmax2d_takes_3d_and_4d_inputs_as_torch():
    for shape in [(2, 3, 4), (2, 3, 2, 2)]:
        x, xt = pair(activation_inputs(24).reshape(shape))
        check(nn.Softmax2d()(x), torch.nn.Softmax2d()(xt), [(x, xt)])
    same_error(lambda: nn.Softmax2d()(mg.ones(2, 3)), lambda: torch.nn.Softmax2d()(
        torch.ones(2, 3)))


def test_the_new_activations_build_mlps():
    for name in ("relu6", "hardswish", "selu", "softsign"):
        model = nn.MLP(3, 4, 2, activation=name)
        assert model(mg.ones(5, 3)).shape == (5, 2)


# ----- gumbel_softmax: torch's exponential draws ----------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gumbel_softmax_draws_torchs_sample_for_the_same_seed(dtype):
    data = activation_inputs(24).reshape(4, 6).astype(dtype)
    for hard, dim in [(False, -1), (True, -1), (True, 0)]:
        mg.manual_seed(5)
        torch.manual_seed(5)
        x, xt = pair(data)
        y = F.gumbel_softmax(x, tau=0.7, hard=hard, dim=dim)
        yt = TF.gumbel_softmax(xt, tau=0.7, hard=hard, dim=dim)
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(),
                                   atol=1e-6 if dtype == "float32" else 1e-14)
        if dtype == "float64":
            check(y, yt, [(x, xt)], atol=1e-10)           # hard: the soft sample's gradient
    with pytest.warns(UserWarning, match="eps"):
        F.gumbel_softmax(mg.tensor(data), eps=1e-5)


# ----- pairwise_distance ----------------------------------------------------------------
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, np.inf, 0.0, -1.0, -np.inf])
def test_pairwise_distance_matches_torch(p):
    rng = np.random.default_rng(4)
    for a_shape, b_shape, keepdim in [((4, 5), (4, 5), False), ((4, 5), (5,), True),
                                      ((3, 1, 5), (4, 5), False), ((), (), False),
                                      ((0, 5), (0, 5), False)]:
        a, at = pair(rng.standard_normal(a_shape))
        b, bt = pair(rng.standard_normal(b_shape))
        y, yt = (F.pairwise_distance(a, b, p, keepdim=keepdim),
                 TF.pairwise_distance(at, bt, p, keepdim=keepdim))
        if p == 0:                  # a count: torch's gradient is None, ours zeros
            np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
            y.sum().backward()
            assert not a.grad.numpy().any()
            continue
        check(y, yt, [(a, at), (b, bt)])
    same(lambda: F.pairwise_distance(mg.tensor([[1, 2]]), mg.tensor([[0, 5]])),
         lambda: TF.pairwise_distance(torch.tensor([[1, 2]]), torch.tensor([[0, 5]])))
    with pytest.raises(ValueError):          # the project's broadcasting error
        F.pairwise_distance(mg.ones(3), mg.ones(2, 4))


@pytest.mark.parametrize("p", [3.0, 0.5, 1.5, -1.0, -0.5, -2.5, -np.inf, np.inf])
def test_pairwise_distance_gradient_at_a_zero_difference_is_torchs(p):
    # torch's norm_backward: 0 for a zero difference (no 0 · inf), NaN where the norm is
    a = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, np.nan, 3.0], [1.0, np.inf, 3.0]])
    b = np.array([[1.0, 2.0, 3.0], [1.0, 0.5, 3.5], [1.0, 2.0, 4.0], [1.0, 2.0, 2.0]])
    grads = []
    for lib, functional in [(mg, F), (torch, TF)]:
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        distance = functional.pairwise_distance(x, y, p, eps=0.0)
        distance.backward(lib.tensor([0.5, -1.0, 2.0, 1.5], dtype=lib.float64))
        grads.append((distance.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_pairwise_distance_gradient_at_a_zero_distance_is_torchs():
    a, at = pair(np.array([[1.0, 2.0], [1.0, 2.0]]))
    b = np.array([[1.0, 2.0], [0.0, 0.0]])
    check(F.pairwise_distance(a, mg.tensor(b), eps=0.0),
          TF.pairwise_distance(at, torch.tensor(b), eps=0.0), [(a, at)])


# ----- hypothesis: shapes -------------------------------------------------------------------
@settings(max_examples=25)
@given(shape=shapes(0, 3), data=arrays((24,), -5.0, 5.0))
def test_elementwise_activations_match_torch_on_drawn_shapes(shape, data):
    values = np.resize(data, shape)
    for name in ("hardswish", "selu", "softshrink", "hardsigmoid"):
        ours, theirs = ACTIVATIONS[name]
        x, xt = pair(values)
        check(ours(x), theirs(xt), [(x, xt)])


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_silu_refuses_integer_and_bool_inputs_in_place_or_not_as_torch(dtype):
    # an in-place silu must not truncate x * sigmoid(x) into the integers ([1, 2] -> [0, 1])
    data = np.array([1, 2, 3, 5]).astype(dtype)
    for ours, theirs in [(F.silu, TF.silu),
                         (lambda x: F.silu(x, inplace=True), lambda x: TF.silu(x, inplace=True)),
                         (nn.SiLU(), torch.nn.SiLU()),
                         (nn.SiLU(inplace=True), torch.nn.SiLU(inplace=True))]:
        x = mg.tensor(data)
        same_error(lambda f=ours, x=x: f(x), lambda f=theirs: f(torch.tensor(data)))
        np.testing.assert_array_equal(x.numpy(), data)


def test_threshold_of_a_half_input_compares_in_float32_as_torch():
    # torch's reduced-float kernel keeps the threshold in float32 (no rounding to the half
    # dtype, no half-range check); the value is still cast to the half dtype, checked
    base = np.array([-3.0, -1.0, 0.0, 1.0, 2.0, 100.0])
    cases = [([0.0999755859375, 0.10009765625], "float16", 0.09995, -1.0),
             ([0.10009765625, 0.1005859375], "bfloat16", 0.1002, -1.0)]
    for dtype in ("float16", "bfloat16"):
        cases += [(base, dtype, threshold, value) for threshold, value in
                  [(70000.0, 0), (1e10, 0), (2**63, 0), (np.inf, 0), (3.4e38, 0), (1e39, 0),
                   (0, 70000.0), (1.5, 2**63), (1.5, 2**64), (2**64, 0), (1.0, -2**63 - 1)]]
    for data, dtype, threshold, value in cases:
        def ours(inplace=False, d=data, t=dtype, a=threshold, b=value):
            return F.threshold(mg.tensor(d).to(getattr(mg, t)), a, b, inplace)

        def theirs(inplace=False, d=data, t=dtype, a=threshold, b=value):
            return TF.threshold(torch.tensor(d).to(getattr(torch, t)), a, b, inplace)
        for inplace in (False, True):
            try:
                expected = theirs(inplace)
            except Exception:                                 # noqa: BLE001 (torch's class)
                same_error(lambda i=inplace: ours(i), lambda i=inplace: theirs(i))
                continue
            got = ours(inplace)
            assert str(got.dtype) == f"torch.{dtype}"
            np.testing.assert_array_equal(got.float().numpy(), expected.float().numpy())
    x, xt = pair([0.0999755859375, 0.10009765625, 0.5, -2.0])     # the gradient's mask too
    y, yt = F.threshold(x.half(), 0.09995, -1.0), TF.threshold(xt.half(), 0.09995, -1.0)
    y.float().sum().backward()
    yt.float().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


def test_threshold_names_an_int_beyond_torchs_scalars():
    with pytest.raises(OverflowError, match="value 18446744073709551616"):
        F.threshold(mg.tensor([1.0]), 0.5, 2**64)
    with pytest.raises(OverflowError, match="threshold -9223372036854775809"):
        F.threshold(mg.tensor([1]), -2**63 - 1, 0)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_softshrink_keeps_the_sign_of_zero_as_torchs_scalar_loop(dtype):
    # torch's scalar loop (0-d and short inputs) gives x * 0 between -lambd and lambd
    for data in ([-0.3, 0.3, -0.0, 0.0, -0.5, 0.5], -0.3, 0.2):
        ours = F.softshrink(mg.tensor(data).to(getattr(mg, dtype)), 0.5)
        theirs = TF.softshrink(torch.tensor(data).to(getattr(torch, dtype)), 0.5)
        np.testing.assert_array_equal(np.signbit(ours.float().numpy()),
                                      torch.signbit(theirs).numpy())


def test_hardtanh_takes_torchs_deprecated_min_value_and_max_value():
    x = np.linspace(-3, 3, 13)
    for kwargs in ({"min_value": -0.5}, {"max_value": 2.0}, {"min_value": -2.0,
                                                             "max_value": 0.25}):
        with pytest.warns(FutureWarning, match="deprecated and renamed"):
            ours = nn.Hardtanh(**kwargs)
        with pytest.warns(FutureWarning, match="deprecated and renamed"):
            theirs = torch.nn.Hardtanh(**kwargs)
        assert repr(ours) == repr(theirs)
        xs = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ys = ours(xs[0]), theirs(xs[1])
        np.testing.assert_array_equal(ys[0].detach().numpy(), ys[1].detach().numpy())
        upstream = np.cos(x)
        ys[0].backward(mg.tensor(upstream))
        ys[1].backward(torch.tensor(upstream))
        np.testing.assert_array_equal(xs[0].grad.numpy(), xs[1].grad.numpy())
    with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="greater than"):
        nn.Hardtanh(max_value=-2.0)
