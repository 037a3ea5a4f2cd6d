"""The 3-D convolutions, pooling and dropout, and the lazy convolutions, against PyTorch:
float64 values and the gradient of a random upstream into every input over strides,
paddings, dilations, groups and ceil_mode; indices; float32 and integer dtypes; errors of
torch's class naming the argument; the Modules' parameters for one seed, reprs, state dicts
and padding modes; the lazy modules' first call and their load of a trained state."""

import inspect
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn

from torch_compare import compare_functional, compare_module, same_error, seeded_twins

RNG = np.random.default_rng(3)


def compare(name, arrays, atol=1e-12, **options):
    """``torch_compare.compare_functional`` with this module's generator."""
    compare_functional(name, arrays, RNG, atol, **options)


# ----- convolutions -----------------------------------------------------------------------
@pytest.mark.parametrize("x, w, options", [
    ((2, 3, 5, 6, 7), (4, 3, 3, 3, 3), dict()),
    ((2, 4, 6, 5, 7), (6, 2, 3, 2, 3), dict(stride=(1, 2, 1), padding=(1, 0, 2),
                                           dilation=(2, 1, 1), groups=2)),
    ((1, 2, 5, 5, 5), (2, 2, 2, 3, 4), dict(padding="same", dilation=(1, 2, 1))),
    ((1, 2, 5, 5, 5), (3, 2, 2, 2, 2), dict(padding="valid", stride=2)),
    ((3, 4, 4, 5), (3, 3, 1, 2, 2), dict(padding=1)),                      # unbatched
    ((1, 4, 3, 4, 4), (4, 1, 3, 3, 3), dict(padding=[1, 1, 1], groups=4)),  # depthwise
])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.filterwarnings("ignore:Using padding='same'")       # torch's, of an even kernel
def test_conv3d_matches_torch(x, w, options, bias):
    compare("conv3d", [x, w] + ([(w[0],)] if bias else []), **options)


@pytest.mark.parametrize("x, w, options", [
    ((2, 4, 3, 4, 3), (4, 3, 3, 2, 3), dict(stride=(2, 1, 2), padding=(1, 0, 1),
                                           output_padding=(1, 0, 0), groups=2,
                                           dilation=(1, 2, 1))),
    ((1, 3, 2, 3, 3), (3, 2, 2, 2, 2), dict(stride=2, dilation=3, output_padding=2)),
    ((3, 2, 3, 2), (3, 2, 2, 2, 2), dict(stride=3, padding=1)),              # unbatched
])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose3d_matches_torch(x, w, options, bias):
    compare("conv_transpose3d", [x, w] + ([(w[1] * options.get("groups", 1),)] if bias
                                          else []), **options)


def test_conv3d_in_float32_and_int64_and_its_second_derivative():
    x, w = RNG.standard_normal((2, 3, 4, 5, 6)), RNG.standard_normal((4, 3, 2, 3, 2))
    # float32: sums of 36 products of size ~1, a few float32 ulps of values up to ~40 apart
    compare("conv3d", [x.astype("float32"), w.astype("float32")], atol=1e-4, stride=2,
            padding=1)
    compare("conv_transpose3d", [x.astype("float32"), w.transpose(1, 0, 2, 3, 4).astype(
        "float32")], atol=1e-4, stride=2)
    ints = [RNG.integers(-4, 4, s) for s in ((1, 3, 4, 4, 4), (2, 3, 2, 2, 2))]
    compare("conv3d", ints, padding=1)
    # create_graph: the gradient of Σ (∂L/∂x)² with respect to w, through Im2Col's own
    # backward node, is torch's
    results = []
    for lib, fn in ((mg, F.conv3d), (torch, TF.conv3d)):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        (gx,) = lib.autograd.grad((fn(xt, wt, padding=1) ** 2).sum(), [xt], create_graph=True)
        (gx * gx).sum().backward()
        results.append(wt.grad.numpy())
    np.testing.assert_allclose(*results, atol=1e-9)


def test_conv3d_is_the_adjoint_of_conv_transpose3d():
    """⟨conv3d(x, w), y⟩ = ⟨x, conv_transpose3d(y, w)⟩, independently of torch."""
    x = mg.tensor(RNG.standard_normal((2, 4, 7, 6, 5)))
    w = mg.tensor(RNG.standard_normal((6, 2, 3, 2, 2)))
    options = dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)
    y = F.conv3d(x, w, **options)
    other = mg.tensor(RNG.standard_normal(y.shape))
    back = F.conv_transpose3d(other, w, output_padding=(0, 0, 1), **options)
    assert back.shape == x.shape
    assert abs((y * other).sum().item() - (x * back).sum().item()) < 1e-10


@pytest.mark.parametrize("name, x, w, options, match", [
    ("conv3d", (1, 3, 4, 4, 4), (2, 3, 3, 3), dict(), "weight"),
    ("conv3d", (1, 3, 4, 4, 4), (2, 2, 3, 3, 3), dict(), "channels"),
    ("conv3d", (1, 4, 4, 4, 4), (3, 2, 3, 3, 3), dict(groups=2), "groups"),
    ("conv3d", (1, 3, 4, 4, 4), (2, 3, 3, 3, 3), dict(stride=0), "stride"),
    ("conv3d", (1, 3, 4, 4, 4), (2, 3, 3, 3, 3), dict(padding=(1, 1)), "padding"),
    ("conv3d", (1, 3, 4, 4, 4), (2, 3, 3, 3, 3), dict(padding="same", stride=2), "same"),
    ("conv3d", (1, 3, 4, 4, 4), (2, 3, 3, 3, 3), dict(dilation=-1), "dilation"),
    ("conv3d", (1, 3, 2, 4, 4), (2, 3, 3, 3, 3), dict(), "kernel"),
    ("conv3d", (3, 4, 4), (2, 3, 3, 3, 3), dict(), "input"),
    ("conv_transpose3d", (1, 4, 3, 3, 3), (4, 2, 3, 3, 3), dict(output_padding=1),
     "output_padding"),
    ("conv_transpose3d", (1, 4, 3, 3, 3), (4, 2, 3, 3, 3), dict(groups=3), "groups"),
    ("conv_transpose3d", (1, 3, 3, 3, 3), (4, 2, 3, 3, 3), dict(), "channels"),
])
def test_convolution_errors_name_the_argument(name, x, w, options, match):
    x, w = RNG.standard_normal(x), RNG.standard_normal(w)
    same_error(lambda: getattr(F, name)(mg.tensor(x), mg.tensor(w), **options),
               lambda: getattr(TF, name)(torch.tensor(x), torch.tensor(w), **options), match)


# ----- pooling ----------------------------------------------------------------------------
@pytest.mark.parametrize("shape, options", [
    ((2, 3, 4, 6, 5), dict(kernel_size=2)),
    ((2, 3, 5, 7, 6), dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 1),
                           ceil_mode=True)),
    ((2, 2, 7, 6, 7), dict(kernel_size=2, stride=1, dilation=(2, 1, 3))),
    ((3, 5, 5, 5), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),   # unbatched
])
def test_max_pool3d_matches_torch_with_indices(shape, options):
    compare("max_pool3d", [shape], **options)
    compare("max_pool3d", [shape], return_indices=True, **options)
    compare("max_pool3d_with_indices", [shape], **options)


def test_max_pool3d_gradient_goes_to_the_first_maximum_as_torchs():
    ties = RNG.integers(0, 2, (1, 2, 4, 4, 4)).astype(float)
    compare("max_pool3d", [ties], kernel_size=2, stride=1, return_indices=True)


@pytest.mark.parametrize("shape, options", [
    ((2, 3, 4, 6, 5), dict(kernel_size=2)),
    ((2, 3, 5, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                           count_include_pad=False)),
    ((2, 2, 5, 6, 7), dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0))),
    ((2, 2, 5, 6, 7), dict(kernel_size=3, padding=1, divisor_override=5)),
    ((3, 5, 4, 5), dict(kernel_size=2, ceil_mode=True)),                       # unbatched
])
def test_avg_pool3d_matches_torch(shape, options):
    compare("avg_pool3d", [shape], **options)


@pytest.mark.parametrize("output_size", [1, (2, 3, 4), (3, None, 2), (5, 7, 6)])
def test_adaptive_pools_match_torch(output_size):
    shape = (2, 3, 5, 7, 6)
    compare("adaptive_avg_pool3d", [shape], output_size=output_size)
    compare("adaptive_max_pool3d", [shape], output_size=output_size, return_indices=True)
    compare("adaptive_max_pool3d_with_indices", [shape[1:]], output_size=output_size)


def test_adaptive_pools_to_an_empty_output():
    x = RNG.standard_normal((2, 3, 5, 7, 6))      # (torch's backward refuses an empty output)
    for name in ("adaptive_avg_pool3d", "adaptive_max_pool3d"):
        assert getattr(F, name)(mg.tensor(x), (0, 1, 2)).shape == \
            tuple(getattr(TF, name)(torch.tensor(x), (0, 1, 2)).shape) == (2, 3, 0, 1, 2)


def test_adaptive_max_pool3d_takes_the_last_nan_as_torch():
    x = RNG.standard_normal((1, 2, 3, 4, 4))
    x[0, 0, 1, 1, :2] = np.nan
    x[0, 1, 0, 0, 0] = np.inf
    compare("adaptive_max_pool3d", [x], output_size=(2, 2, 2), return_indices=True)


@pytest.mark.parametrize("shape, pool, unpool", [
    ((2, 3, 6, 8, 4), dict(kernel_size=2), dict()),
    ((2, 3, 6, 8, 4), dict(kernel_size=(2, 3, 2), stride=(2, 2, 1), padding=(1, 1, 0)),
     dict(output_size=(6, 8, 4))),
    ((2, 3, 7, 9, 5), dict(kernel_size=2), dict(output_size=(7, 9, 5))),
    ((2, 3, 7, 9, 5), dict(kernel_size=2), dict(output_size=(2, 3, 7, 9, 5))),
])
def test_max_unpool3d_matches_torch(shape, pool, unpool):
    x = torch.tensor(RNG.standard_normal(shape))
    values, index = TF.max_pool3d(x, return_indices=True, **pool)
    options = {k: pool[k] for k in ("kernel_size", "stride", "padding") if k in pool} | unpool
    compare("max_unpool3d", [values.numpy(), index.numpy()], **options)
    compare("max_unpool3d", [values[0].numpy(), index[0].numpy()], **options)     # unbatched


@pytest.mark.parametrize("name, shape, options, match", [
    ("max_pool3d", (1, 2, 4, 4, 4), dict(kernel_size=2, padding=2), "padding"),
    ("max_pool3d", (1, 2, 4, 4, 4), dict(kernel_size=0), "kernel_size"),
    ("max_pool3d", (1, 2, 4, 4, 4), dict(kernel_size=2, stride=0), "stride"),
    ("max_pool3d", (1, 2, 4, 4, 4), dict(kernel_size=5), None),
    ("max_pool3d", (1, 2, 4, 4, 4), dict(kernel_size=2, dilation=0), "dilation"),
    ("max_pool3d", (4, 4, 4), dict(kernel_size=2), "input"),
    ("avg_pool3d", (1, 2, 4, 4, 4), dict(kernel_size=2, padding=2), "padding"),
    ("avg_pool3d", (1, 2, 4, 4, 4), dict(kernel_size=2, divisor_override=0),
     "divisor_override"),
    ("adaptive_avg_pool3d", (1, 2, 4, 4, 4), dict(output_size=-1), "output_size"),
    ("adaptive_avg_pool3d", (1, 2, 4, 4, 4), dict(output_size=(2, 2)), "output_size"),
    ("adaptive_max_pool3d", (1, 2, 0, 4, 4), dict(output_size=2), None),
    ("adaptive_max_pool3d", (1, 2, 4, 4, 4), dict(output_size=(2, 2)), "output_size"),
])
def test_pooling_errors_name_the_argument(name, shape, options, match):
    x = RNG.standard_normal(shape)
    same_error(lambda: getattr(F, name)(mg.tensor(x), **options),
               lambda: getattr(TF, name)(torch.tensor(x), **options), match)


@pytest.mark.parametrize("options, match", [
    (dict(kernel_size=2, output_size=(4, 4)), "output_size"),
    (dict(kernel_size=2, output_size=(9, 4, 4)), "output_size"),
    (dict(kernel_size=(2, 2)), "kernel_size"),
])
def test_max_unpool3d_errors_name_the_argument(options, match):
    x, index = torch.tensor(RNG.standard_normal((1, 2, 2, 2, 2))), torch.zeros(
        (1, 2, 2, 2, 2), dtype=torch.int64)
    same_error(lambda: F.max_unpool3d(mg.tensor(x.numpy()), mg.tensor(index.numpy()),
                                      **options),
               lambda: TF.max_unpool3d(x, index, **options), match)
    bad = index.clone()
    bad[0, 0, 0, 0, 0] = 64
    same_error(lambda: F.max_unpool3d(mg.tensor(x.numpy()), mg.tensor(bad.numpy()), 2),
               lambda: TF.max_unpool3d(x, bad, 2), "index")


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16"])
def test_dtypes_as_torch(dtype):
    """Each function on each dtype: torch's values in torch's dtype, or its class of error
    (torch's CPU kernels take integers in conv3d and max_pool3d, int64 in avg_pool3d and
    conv_transpose3d; half precision everywhere but avg_pool3d, taken here too)."""
    x = RNG.integers(-9, 9, (1, 2, 4, 4, 4)).astype(dtype)
    weight = RNG.integers(-2, 3, (3, 2, 2, 2, 2)).astype(dtype)
    for name, args, options in (
            ("conv3d", (x, weight), dict(stride=2)),
            ("conv_transpose3d", (x, weight.transpose(1, 0, 2, 3, 4)), dict(stride=2)),
            ("max_pool3d", (x,), dict(kernel_size=3, padding=1, return_indices=True)),
            ("avg_pool3d", (x,), dict(kernel_size=3, padding=1, divisor_override=-4)),
            ("adaptive_avg_pool3d", (x,), dict(output_size=3)),
            ("adaptive_max_pool3d", (x,), dict(output_size=3))):
        try:
            expected = getattr(TF, name)(*(torch.tensor(a) for a in args), **options)
        except Exception as error:                       # noqa: BLE001 (its class is the test)
            if dtype == "float16" and name == "avg_pool3d":
                assert F.avg_pool3d(mg.tensor(x), **options).dtype == np.float16
                continue
            with pytest.raises(type(error)):
                getattr(F, name)(*(mg.tensor(a) for a in args), **options)
            continue
        out = getattr(F, name)(*(mg.tensor(a) for a in args), **options)
        if isinstance(out, tuple):
            np.testing.assert_array_equal(out[1].numpy(), expected[1].numpy())
            out, expected = out[0], expected[0]
        assert out.dtype == np.dtype(dtype) and str(expected.dtype) == f"torch.{dtype}", name
        np.testing.assert_allclose(out.numpy().astype(float), expected.numpy().astype(float),
                                   atol=1e-2, rtol=2e-3, err_msg=name)


# ----- dropout3d --------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 3, 2, 3, 2), (3, 2, 3, 2)])
@pytest.mark.parametrize("inplace", [False, True])
def test_dropout3d_draws_torchs_channels(shape, inplace):
    x = RNG.standard_normal(shape)
    mg.manual_seed(5)
    torch.manual_seed(5)
    ours, theirs = mg.tensor(x), torch.tensor(x)
    out, expected = F.dropout3d(ours, 0.4, inplace=inplace), TF.dropout3d(theirs, 0.4,
                                                                          inplace=inplace)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert (out is ours) is inplace
    kept = (out.numpy() != 0).reshape(-1, int(np.prod(shape[-3:])))
    assert (kept.all(axis=1) | ~kept.any(axis=1)).all()        # whole channels
    assert F.dropout3d(ours, 0.4, training=False) is ours


def test_dropout3d_of_other_dims_warns_and_errors_as_torch():
    x = RNG.standard_normal((4, 3, 5))
    mg.manual_seed(1)
    torch.manual_seed(1)
    with pytest.warns(UserWarning, match="dropout3d"):
        out = F.dropout3d(mg.tensor(x), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(out.numpy(), TF.dropout3d(torch.tensor(x), 0.5).numpy())
    same_error(lambda: F.dropout3d(mg.tensor(x), 1.5), lambda: TF.dropout3d(torch.tensor(x),
                                                                             1.5), "p")
    ints = np.ones((2, 2, 2, 2, 2), np.int64)
    same_error(lambda: F.dropout3d(mg.tensor(ints)), lambda: TF.dropout3d(torch.tensor(ints)))
    assert F.dropout3d(mg.tensor(ints), 1.0).dtype == np.int64                  # x · 0


# ----- modules ----------------------------------------------------------------------------
@pytest.mark.parametrize("cls, args, options", [
    ("Conv3d", (3, 4, 3), dict()),
    ("Conv3d", (4, 6, (3, 2, 2)), dict(stride=(2, 1, 1), padding=(1, 0, 1), dilation=(1, 2, 1),
                                       groups=2, bias=False)),
    ("Conv3d", (2, 2, 3), dict(padding="same", padding_mode="reflect")),
    ("Conv3d", (2, 3, (2, 3, 3)), dict(padding=(1, 2, 1), padding_mode="replicate")),
    ("Conv3d", (2, 3, 2), dict(padding=1, stride=2, padding_mode="circular")),
    ("ConvTranspose3d", (4, 6, 3), dict()),
    ("ConvTranspose3d", (4, 6, (3, 2, 2)), dict(stride=2, padding=(1, 0, 1),
                                                output_padding=(1, 0, 1), groups=2,
                                                bias=False, dilation=(1, 2, 1))),
])
def test_conv_modules_as_torch(cls, args, options):
    ours, theirs = seeded_twins(cls, *args, **options)
    assert ours.transposed is theirs.transposed
    x = RNG.standard_normal((2, args[0], 4, 5, 5))
    out = ours(mg.tensor(x, dtype="float32"))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.detach().numpy(),
                               theirs(torch.tensor(x, dtype=torch.float32)).detach().numpy(),
                               atol=1e-5)
    # a torch float64 state dict loads, and every gradient is torch's; ours goes back
    theirs.double()
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    ours.double()
    compare_module(ours, theirs, [x], RNG)
    compare_module(ours, theirs, [x[0]], RNG)                                      # unbatched
    again = getattr(nn, cls)(*args, **options).double()
    again.load_state_dict(ours.state_dict())
    for key, value in ours.state_dict().items():
        np.testing.assert_array_equal(again.state_dict()[key].numpy(), value.numpy())


def test_conv_transpose3d_output_size_as_torch():
    ours, theirs = seeded_twins("ConvTranspose3d", 2, 2, 3, stride=2, padding=1)
    x = RNG.standard_normal((1, 2, 3, 4, 3)).astype("float32")
    for output_size in ((6, 8, 6), (1, 2, 5, 7, 6), (5, 7, 5), (7, 7, 5)):
        try:
            expected = theirs(torch.tensor(x), output_size=output_size)
        except ValueError:
            with pytest.raises(ValueError, match="output size"):
                ours(mg.tensor(x), output_size=output_size)
            continue
        np.testing.assert_allclose(ours(mg.tensor(x), output_size=output_size).detach().numpy(),
                                   expected.detach().numpy(), atol=1e-5)


@pytest.mark.parametrize("cls, options", [
    ("Conv3d", dict(groups=3)), ("Conv3d", dict(padding="same", stride=2)),
    ("Conv3d", dict(padding_mode="mirror")), ("Conv3d", dict(groups=0)),
    ("ConvTranspose3d", dict(padding_mode="reflect")), ("ConvTranspose3d", dict(groups=4)),
    ("LazyConv3d", dict(groups=0)), ("LazyConvTranspose3d", dict(padding_mode="circular")),
    ("LazyConv3d", dict(padding="full")),
])
def test_module_arguments_as_torch(cls, options):
    args = (6, 3) if cls.startswith("Lazy") else (4, 6, 3)
    same_error(lambda: getattr(nn, cls)(*args, **options),
               lambda: getattr(torch.nn, cls)(*args, **options))


@pytest.mark.parametrize("cls, args, options, shape", [
    ("MaxPool3d", (2,), dict(), (2, 3, 4, 6, 5)),
    ("MaxPool3d", ((3, 2, 3),), dict(stride=2, padding=1, ceil_mode=True, dilation=1),
     (2, 3, 5, 6, 7)),
    ("AvgPool3d", (3,), dict(stride=1, padding=1, count_include_pad=False), (2, 3, 4, 5, 5)),
    ("AvgPool3d", ((2, 1, 2),), dict(ceil_mode=True, divisor_override=3), (3, 5, 4, 5)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), dict(), (2, 3, 5, 4, 7)),
    ("AdaptiveMaxPool3d", (3,), dict(), (2, 3, 5, 4, 7)),
])
def test_pooling_modules_as_torch(cls, args, options, shape):
    ours, theirs = seeded_twins(cls, *args, **options)
    compare_module(ours, theirs, [RNG.standard_normal(shape)], RNG)


def test_modules_with_indices_unpooling_and_dropout_as_torch():
    x = RNG.standard_normal((2, 3, 4, 6, 5))
    for cls, args in (("MaxPool3d", (2,)), ("AdaptiveMaxPool3d", ((2, 3, 2),))):
        ours, theirs = seeded_twins(cls, *args, return_indices=True)
        (out, index), (expected, expected_index) = ours(x), theirs(torch.tensor(x))
        np.testing.assert_array_equal(index.numpy(), expected_index.numpy())
        np.testing.assert_allclose(out.numpy(), expected.numpy(), atol=1e-12)
    values, index = TF.max_pool3d(torch.tensor(x), 2, return_indices=True)
    ours, theirs = seeded_twins("MaxUnpool3d", 2, padding=0)
    np.testing.assert_array_equal(ours(values.numpy(), index.numpy(), (4, 6, 5)).numpy(),
                                  theirs(values, index, (4, 6, 5)).numpy())
    ours, theirs = seeded_twins("Dropout3d", 0.3)
    mg.manual_seed(4)
    torch.manual_seed(4)
    np.testing.assert_array_equal(ours(x).numpy(), theirs(torch.tensor(x)).numpy())
    ours.eval()
    assert np.array_equal(ours(x).numpy(), x)
    # the 2-D and 3-D forms are siblings, as torch's: a 3-D module is no 2-D one
    assert not isinstance(nn.AvgPool3d(2), nn.AvgPool2d)
    assert not isinstance(nn.AdaptiveMaxPool3d(2), (nn.AdaptiveMaxPool2d, nn.AdaptiveMaxPool1d))


# ----- the lazy convolutions --------------------------------------------------------------
LAZY = [("LazyConv1d", (4, 3), dict(stride=2), (2, 3, 9)),
        ("LazyConv2d", (4, 3), dict(padding="same", groups=2, bias=False), (2, 6, 5, 5)),
        ("LazyConv3d", (4, (2, 3, 3)), dict(padding=1, padding_mode="reflect"), (1, 2, 3, 4, 4)),
        ("LazyConvTranspose1d", (4, 3), dict(stride=2, output_padding=1), (2, 3, 6)),
        ("LazyConvTranspose2d", (6, 3), dict(groups=3, dilation=2), (3, 4, 4)),   # unbatched
        ("LazyConvTranspose3d", (2, 2), dict(stride=2, bias=False), (1, 3, 2, 3, 2))]


@pytest.mark.parametrize("cls, args, options, shape", LAZY)
def test_lazy_convolutions_become_torchs_modules_at_their_first_call(cls, args, options,
                                                                     shape):
    mg.manual_seed(6)
    torch.manual_seed(6)
    ours, theirs = getattr(nn, cls)(*args, **options), getattr(torch.nn, cls)(*args, **options)
    assert repr(ours) == repr(theirs) and ours.in_channels == 0       # LazyConv2d(0, 4, ...)
    assert isinstance(ours, nn.modules.lazy.LazyModuleMixin) and ours.has_uninitialized_params()
    assert isinstance(ours.weight, nn.UninitializedParameter) and ours.weight.size == 0
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = RNG.standard_normal(shape).astype("float32")
    out, expected = ours(x), theirs(torch.tensor(x))
    assert type(ours) is getattr(nn, cls.removeprefix("Lazy")) and type(ours).__name__ == \
        type(theirs).__name__
    assert repr(ours) == repr(theirs) and type(ours.weight) is nn.Parameter
    for key, value in theirs.state_dict().items():              # the same seed's draws
        np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-5)


@pytest.mark.parametrize("cls, args, options, shape", LAZY)
def test_lazy_convolutions_load_a_trained_state(cls, args, options, shape):
    """torch's load hook: the shapes taken from the state; the next call gives in_channels
    from the loaded weight and runs as the plain module; a failed load leaves it lazy."""
    plain = getattr(torch.nn, cls.removeprefix("Lazy"))
    channels = shape[1] if len(shape) == int(cls[-2]) + 2 else shape[0]
    trained = plain(channels, *args, dtype=torch.float64, **options)
    state = {k: v.numpy() for k, v in trained.state_dict().items()}
    ours = getattr(nn, cls)(*args, dtype="float64", **options)
    ours.load_state_dict(state)
    assert not ours.has_uninitialized_params()
    x = RNG.standard_normal(shape)
    compare_module(ours, trained, [x], RNG)
    assert type(ours).__name__ == plain.__name__ and ours.in_channels == channels
    assert repr(ours) == repr(trained).replace(", dtype=torch.float64", "")
    failed = getattr(nn, cls)(*args, **options)
    with pytest.raises(RuntimeError, match=r"key\(s\)"):
        failed.load_state_dict({"weight": state["weight"], "extra": np.ones(2)})
    assert failed.has_uninitialized_params()
    assert repr(failed.weight) == "<UninitializedParameter>"


def test_lazy_convolution_errors_as_torch():
    for cls, shape, args in (("LazyConv2d", (2, 3, 4), (4, 3)),        # unbatched: it runs
                             ("LazyConv2d", (2, 3, 4, 4, 4), (4, 3)),      # too many dims
                             ("LazyConv3d", (1, 3, 4, 4, 4), (4, 3)),      # 3 channels, 2 groups
                             ("LazyConvTranspose1d", (1, 4, 2, 2), (2, 3))):   # 4-D
        x = RNG.standard_normal(shape).astype("float32")
        options = dict(groups=2) if cls == "LazyConv3d" else {}
        ours = getattr(nn, cls)(*args, **options)
        try:
            getattr(torch.nn, cls)(*args, **options)(torch.tensor(x))
        except Exception as error:                       # noqa: BLE001 (its class is the test)
            with pytest.raises(type(error)):
                ours(x)
            assert ours.has_uninitialized_params()
            continue
        assert ours(x).shape                                           # torch ran it: so do we
    with pytest.raises(ValueError, match="out_channels"):    # torch: its first call's conv
        nn.LazyConv2d(5, 3, groups=2)


# ----- names --------------------------------------------------------------------------------
FUNCTIONS = ["adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
             "avg_pool3d", "conv3d", "conv_transpose3d", "dropout3d", "max_pool3d",
             "max_pool3d_with_indices", "max_unpool1d", "max_unpool3d"]
MODULES = ["AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "AvgPool3d", "Conv3d", "ConvTranspose3d",
           "Dropout3d", "MaxPool3d", "MaxUnpool3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


def _names(function):
    # the parameters torch's callers may pass: all but our keyword-only extras
    return [name for name, p in inspect.signature(function).parameters.items()
            if p.kind != p.KEYWORD_ONLY]


def test_names_and_signatures_are_torchs():
    for name in FUNCTIONS:
        assert name in F.__all__ and hasattr(TF, name), name
        try:
            expected = _names(getattr(TF, name))
        except ValueError:                               # torch's C functions have none
            continue
        if expected != ["args", "kwargs"]:               # torch's boolean dispatch
            assert _names(getattr(F, name)) == expected, name
    for name in MODULES:
        assert name in nn.__all__ and hasattr(torch.nn, name), name
        for method in ("__init__", "forward"):
            assert _names(getattr(getattr(nn, name), method)) == \
                _names(getattr(getattr(torch.nn, name), method)), (name, method)
        torch_file = getattr(torch.nn, name).__module__.rsplit(".", 1)[1]
        assert getattr(getattr(nn.modules, torch_file), name) is getattr(nn, name)
    assert nn.LazyConv3d.cls_to_become is nn.Conv3d
    assert nn.LazyConvTranspose2d.cls_to_become is nn.ConvTranspose2d
