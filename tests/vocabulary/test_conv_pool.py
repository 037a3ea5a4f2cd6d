"""Convolutions, pooling and unfold against PyTorch: float64 values and the gradient of a
random upstream into every input, result dtypes, batch-less and empty-batch inputs, errors
of the same class, and the nn Modules' shapes, initialisation and reprs."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn

from torch_compare import same_error

RNG = np.random.default_rng(0)
# torch's note that its own 'same' padding of an even kernel copies the input
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


def _both(array, requires_grad=True):
    return (mg.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def compare(name, shapes, *, values=None, **options):
    """Run ``F.name`` and ``torch.nn.functional.name`` on the same float64 inputs (random,
    or from ``values``) and compare the output, the indices if any, and each input's
    gradient of a random upstream."""
    arrays = values if values is not None else [RNG.standard_normal(s) for s in shapes]
    ours, theirs = zip(*[_both(a) for a in arrays])
    out, expected = getattr(F, name)(*ours, **options), getattr(TF, name)(*theirs, **options)
    if isinstance(expected, tuple):                              # return_indices
        assert out[1].dtype == np.int64
        np.testing.assert_array_equal(out[1].numpy(), expected[1].numpy())
        out, expected = out[0], expected[0]
    assert out.shape == tuple(expected.shape) and out.dtype == np.float64
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    upstream = RNG.standard_normal(out.shape)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), atol=1e-12)



# ----- convolutions -----------------------------------------------------------------------
@pytest.mark.parametrize("name, x, w, options", [
    ("conv2d", (2, 4, 7, 6), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                                groups=2)),
    ("conv2d", (2, 3, 6, 6), (4, 3, 2, 4), dict(padding="same", dilation=(2, 1))),
    ("conv2d", (3, 5, 5), (2, 3, 3, 3), dict(padding="valid", stride=2)),
    ("conv2d", (1, 4, 5, 5), (4, 1, 3, 3), dict(padding=1, groups=4)),       # depthwise
    ("conv1d", (2, 6, 11), (3, 2, 4), dict(stride=3, padding=2, dilation=2, groups=3)),
    ("conv1d", (4, 9), (5, 4, 4), dict(padding="same")),
])
@pytest.mark.parametrize("bias", [True, False])
def test_convolution_matches_torch(name, x, w, options, bias):
    shapes = [x, w] + ([(w[0],)] if bias else [])
    compare(name, shapes, **options)


def test_convolution_of_an_empty_batch():
    compare("conv2d", [(0, 2, 5, 5), (3, 2, 3, 3), (3,)], padding=1)
    compare("conv1d", [(0, 2, 5), (3, 2, 3)])


def test_convolution_dtypes():
    x, w = RNG.standard_normal((2, 3, 5, 5)), RNG.standard_normal((4, 3, 3, 3))
    assert F.conv2d(mg.tensor(x, dtype="float32"), mg.tensor(w, dtype="float32")).dtype == \
        np.float32
    ints = [RNG.integers(-5, 5, size) for size in ((2, 3, 7), (4, 3, 2), (4,))]
    out = F.conv1d(*(mg.tensor(a) for a in ints), stride=2, padding=1)
    expected = TF.conv1d(*(torch.tensor(a) for a in ints), stride=2, padding=1)
    assert out.dtype == np.int64 and str(expected.dtype) == "torch.int64"
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def _conv_calls(x_shape, w_shape, b_shape=None, dtypes=("float64",) * 3, **options):
    arrays = [RNG.standard_normal(s) for s in (x_shape, w_shape) + ((b_shape,) if b_shape
                                                                   else ())]
    fn = "conv1d" if len(w_shape) == 3 else "conv2d"
    ours = [mg.tensor(a, dtype=d) for a, d in zip(arrays, dtypes)]
    theirs = [torch.tensor(a, dtype=getattr(torch, d)) for a, d in zip(arrays, dtypes)]
    return (lambda: getattr(F, fn)(*ours, **options),
            lambda: getattr(TF, fn)(*theirs, **options))


@pytest.mark.parametrize("case", [
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 3, 3, 3)),                     # channels
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), groups=3),           # groups
    dict(x_shape=(2, 4, 5, 5), w_shape=(5, 2, 3, 3), groups=2),           # out_channels
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), groups=0),
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 7, 7)),                     # kernel too large
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), stride=0),
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), padding=-1),
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), dilation=0),
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), padding="full"),
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), padding="same", stride=2),
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), stride=(1, 1, 1)),
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), stride=1.5),
    dict(x_shape=(4, 5), w_shape=(6, 4, 3, 3)),                           # input dims
    dict(x_shape=(2, 4, 5), w_shape=(6, 4, 3, 3, 1)),                     # weight dims
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), b_shape=(5,)),
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), dtypes=("float32", "float64")),
    dict(x_shape=(2, 4, 5, 5), w_shape=(6, 4, 3, 3), b_shape=(6,),
         dtypes=("float64", "float64", "float32")),
])
def test_convolution_errors_have_torchs_class(case):
    same_error(*_conv_calls(**case))


def test_convolution_refuses_what_is_not_a_tensor():
    w = RNG.standard_normal((2, 1, 3, 3))
    same_error(lambda: F.conv2d(np.ones((1, 1, 4, 4)), mg.tensor(w)),
               lambda: TF.conv2d(np.ones((1, 1, 4, 4)), torch.tensor(w)))


# ----- pooling ----------------------------------------------------------------------------
@pytest.mark.parametrize("name, shape, options", [
    ("max_pool2d", (2, 3, 7, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool2d", (3, 8, 7), dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1))),
    ("max_pool1d", (2, 3, 10), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    ("max_pool1d", (3, 9), dict(kernel_size=3, stride=1, dilation=3)),
])
def test_max_pool_matches_torch(name, shape, options):
    compare(name, [shape], return_indices=True, **options)
    compare(name, [shape], **options)


def test_max_pool_gradient_goes_to_the_first_maximum():
    ties = RNG.integers(0, 3, (2, 2, 6, 6)).astype(np.float64)        # many equal maxima
    compare("max_pool2d", [], values=[ties], kernel_size=3, stride=1, padding=1,
            return_indices=True)
    compare("max_pool1d", [], values=[ties[0]], kernel_size=2, return_indices=True)


def test_max_pool_propagates_nan_as_torch():
    x = RNG.standard_normal((1, 2, 4, 4))
    x[0, 0, 1, 2] = x[0, 1, 3, 3] = np.nan
    out, index = F.max_pool2d(mg.tensor(x), 2, return_indices=True)
    expected, expected_index = TF.max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    np.testing.assert_array_equal(index.numpy(), expected_index.numpy())


@pytest.mark.parametrize("name, shape, options", [
    ("avg_pool2d", (2, 3, 7, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                      count_include_pad=False)),
    ("avg_pool2d", (2, 3, 7, 8), dict(kernel_size=(3, 2), stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", (3, 7, 8), dict(kernel_size=(3, 2), divisor_override=5)),
    ("avg_pool1d", (3, 10), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool1d", (2, 3, 10), dict(kernel_size=4, padding=2, count_include_pad=False)),
])
def test_avg_pool_matches_torch(name, shape, options):
    compare(name, [shape], **options)


@pytest.mark.parametrize("output_size", [(3, 4), 1, (None, 4), (5, 2), (2, None)])
def test_adaptive_avg_pool_matches_torch(output_size):
    compare("adaptive_avg_pool2d", [(2, 3, 7, 9)], output_size=output_size)
    compare("adaptive_avg_pool2d", [(3, 7, 9)], output_size=output_size)


def test_pooling_of_empty_batches_and_empty_outputs():
    for name, options in (("max_pool2d", dict(kernel_size=2)), ("avg_pool2d", dict(kernel_size=2)),
                          ("adaptive_avg_pool2d", dict(output_size=3))):
        compare(name, [(0, 3, 6, 6)], **options)
    compare("max_pool1d", [(0, 3, 6)], kernel_size=2)
    x = RNG.standard_normal((2, 3, 4, 4))      # (torch's backward refuses an empty output)
    assert F.adaptive_avg_pool2d(mg.tensor(x), 0).shape == \
        tuple(TF.adaptive_avg_pool2d(torch.tensor(x), 0).shape)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16"])
def test_result_dtypes_and_refusals_as_torch(dtype):
    """Each function on each dtype: torch's values in torch's dtype, or its class of error
    (its kernels take integers here and there: max_pool2d all, avg_pool int64 only)."""
    x = RNG.integers(-9, 9, (2, 3, 7, 7)).astype(dtype)
    weight = RNG.integers(-2, 3, (2, 3, 2, 2)).astype(dtype)
    for name, options in (("max_pool2d", dict(kernel_size=3, padding=1, return_indices=True)),
                          ("max_pool1d", dict(kernel_size=2)),
                          ("avg_pool2d", dict(kernel_size=2, ceil_mode=True)),
                          ("avg_pool2d", dict(kernel_size=3, padding=1, divisor_override=-4)),
                          ("avg_pool1d", dict(kernel_size=3, stride=2, padding=1)),
                          ("adaptive_avg_pool2d", dict(output_size=3)),
                          ("unfold", dict(kernel_size=2)), ("conv2d", dict(stride=2))):
        data = x[0] if name.endswith("1d") else x
        args = (data, weight) if name == "conv2d" else (data,)
        try:
            expected = getattr(TF, name)(*(torch.tensor(a) for a in args), **options)
        except Exception as error:                       # noqa: BLE001 (its class is the test)
            with pytest.raises(type(error)):
                getattr(F, name)(*(mg.tensor(a) for a in args), **options)
            continue
        out = getattr(F, name)(*(mg.tensor(a) for a in args), **options)
        if isinstance(out, tuple):
            np.testing.assert_array_equal(out[1].numpy(), expected[1].numpy())
            out, expected = out[0], expected[0]
        assert out.dtype == np.dtype(dtype) and str(expected.dtype) == f"torch.{dtype}", name
        np.testing.assert_allclose(out.numpy().astype(float), expected.numpy().astype(float),
                                   atol=1e-2, rtol=1e-3, err_msg=name)


@pytest.mark.parametrize("name, shape, options", [
    ("max_pool2d", (2, 4, 5, 5), dict(kernel_size=2, padding=2)),
    ("max_pool2d", (2, 4, 5, 5), dict(kernel_size=0)),
    ("max_pool2d", (2, 4, 5, 5), dict(kernel_size=2, stride=0)),
    ("max_pool2d", (2, 4, 5, 5), dict(kernel_size=6)),
    ("max_pool2d", (2, 4, 5, 5), dict(kernel_size=2, dilation=0)),
    ("max_pool2d", (5, 5), dict(kernel_size=2)),
    ("max_pool2d", (2, 0, 4, 4), dict(kernel_size=2)),
    ("max_pool1d", (5,), dict(kernel_size=2)),
    ("avg_pool2d", (2, 4, 5, 5), dict(kernel_size=2, padding=2)),
    ("avg_pool2d", (2, 4, 5, 5), dict(kernel_size=6)),
    ("avg_pool1d", (2, 3, 5), dict(kernel_size=6)),
    ("avg_pool2d", (2, 4, 5, 5), dict(kernel_size=0)),
    ("adaptive_avg_pool2d", (2, 4, 5, 5), dict(output_size=-1)),
    ("adaptive_avg_pool2d", (5, 5), dict(output_size=2)),
    ("adaptive_avg_pool2d", (2, 3, 0, 5), dict(output_size=2)),
    ("unfold", (1, 3, 5, 5), dict(kernel_size=6)),
    ("unfold", (1, 3, 5, 5), dict(kernel_size=2, padding=-1)),
    ("unfold", (1, 3, 5, 5), dict(kernel_size=2, stride=0)),
    ("unfold", (1, 3, 5, 5), dict(kernel_size=0)),
])
def test_pooling_errors_have_torchs_class(name, shape, options):
    x = RNG.standard_normal(shape)
    same_error(lambda: getattr(F, name)(mg.tensor(x), **options),
               lambda: getattr(TF, name)(torch.tensor(x), **options))


# ----- unfold -----------------------------------------------------------------------------
def test_unfold_matches_torch():
    compare("unfold", [(2, 3, 6, 7)], kernel_size=(2, 3), dilation=(2, 1), padding=1,
            stride=(1, 2))
    compare("unfold", [(3, 6, 7)], kernel_size=2)
    compare("unfold", [(0, 3, 6, 7)], kernel_size=3, padding=1)


def test_convolution_is_unfold_then_matmul():
    """The docstring's claim, checked independently of the convolution's own code path."""
    x, w = mg.tensor(RNG.standard_normal((2, 3, 6, 6))), mg.tensor(RNG.standard_normal((4, 3,
                                                                                      3, 3)))
    cols = F.unfold(x, 3, padding=1)                                    # (2, 27, 36)
    by_hand = (w.reshape(4, -1) @ cols).reshape(2, 4, 6, 6)
    np.testing.assert_allclose(F.conv2d(x, w, padding=1).numpy(), by_hand.numpy(), atol=1e-12)


# ----- modules ----------------------------------------------------------------------------
@pytest.mark.parametrize("cls, args, options", [
    ("Conv2d", (3, 6, 3), dict()),
    ("Conv2d", (4, 6, (3, 2)), dict(stride=2, padding=(1, 0), dilation=(1, 2), groups=2,
                                    bias=False)),
    ("Conv2d", (2, 2, 3), dict(padding="same")),
    ("Conv1d", (4, 2, 5), dict(padding="valid", stride=(2,))),
])
def test_conv_modules_as_torch(cls, args, options):
    mg.manual_seed(7)
    torch.manual_seed(7)
    ours, theirs = getattr(nn, cls)(*args, **options), getattr(torch.nn, cls)(*args, **options)
    assert repr(ours) == repr(theirs)
    state, expected = ours.state_dict(), theirs.state_dict()
    assert list(state) == list(expected)
    for key in expected:                  # the same seed draws torch's float32 values
        np.testing.assert_array_equal(state[key].numpy(), expected[key].numpy())
    x = RNG.standard_normal((2, args[0]) + (8,) * (2 if cls == "Conv2d" else 1))
    out = ours(mg.tensor(x, dtype="float32"))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.detach().numpy(),
                               theirs(torch.tensor(x, dtype=torch.float32)).detach().numpy(),
                               atol=1e-5)


@pytest.mark.parametrize("args, options", [
    ((4, 6, 3), dict(groups=3)),
    ((4, 6, 3), dict(groups=0)),
    ((4, 6, 3), dict(padding="full")),
    ((4, 6, 3), dict(padding="same", stride=2)),
    ((4, 6, 3), dict(padding_mode="mirror")),
])
def test_conv_module_arguments_as_torch(args, options):
    same_error(lambda: nn.Conv2d(*args, **options), lambda: torch.nn.Conv2d(*args, **options))


@pytest.mark.parametrize("cls, args, options", [
    ("MaxPool2d", (2,), dict()),
    ("MaxPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True)),
    ("MaxPool1d", (3,), dict(stride=1, dilation=2)),
    ("AvgPool2d", ((3, 2),), dict(stride=1, padding=1, count_include_pad=False)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1, ceil_mode=True)),
    ("AdaptiveAvgPool2d", ((2, None),), dict()),
])
def test_pooling_modules_as_torch(cls, args, options):
    ours, theirs = getattr(nn, cls)(*args, **options), getattr(torch.nn, cls)(*args, **options)
    assert repr(ours) == repr(theirs)
    x = RNG.standard_normal((2, 3, 7) + ((7,) if cls.endswith("2d") else ()))
    np.testing.assert_allclose(ours(x).numpy(), theirs(torch.tensor(x)).numpy(), atol=1e-12)


def test_a_tiny_cnn_trains_as_torch():
    """Conv2d -> ReLU -> MaxPool2d -> reshape -> Linear on (8, 1, 12, 12): the loss and
    every parameter's gradient equal torch's with the same weights."""
    def build(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3, padding=1), lib.nn.ReLU(),
                                 lib.nn.MaxPool2d(2))
    features, head = build(mg), nn.Linear(4 * 6 * 6, 10)
    torch_features, torch_head = build(torch), torch.nn.Linear(4 * 6 * 6, 10)
    for ours, theirs in ((features, torch_features), (head, torch_head)):
        ours.double()
        theirs.double().load_state_dict({k: torch.tensor(v.numpy())
                                         for k, v in ours.state_dict().items()})
    x, targets = RNG.standard_normal((8, 1, 12, 12)), RNG.integers(0, 10, 8)
    h = features(mg.tensor(x))
    loss = F.cross_entropy(head(h.reshape(8, -1)), targets)
    loss.backward()
    torch_h = torch_features(torch.tensor(x))
    torch_loss = TF.cross_entropy(torch_head(torch_h.reshape(8, -1)), torch.tensor(targets))
    torch_loss.backward()
    assert abs(loss.item() - torch_loss.item()) < 1e-12
    ours = dict(features.named_parameters()) | {f"head.{k}": v
                                               for k, v in head.named_parameters()}
    theirs = dict(torch_features.named_parameters()) | {f"head.{k}": v for k, v in
                                                       torch_head.named_parameters()}
    for name, parameter in theirs.items():
        np.testing.assert_allclose(ours[name].grad.numpy(), parameter.grad.numpy(), atol=1e-12)
