"""Transposed convolutions, fold, adaptive max and 1-D average pooling, max unpooling,
bilinear, channel_shuffle, local_response_norm, dropout1d and alpha_dropout against PyTorch:
float64 values and the gradient of a random upstream into every input, result dtypes,
batch-less and empty inputs, errors of the same class, seeded draws, and the nn Modules'
parameters, initialisation, reprs and state dicts."""

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn

from torch_compare import compare_functional, compare_module, pair, same_error, seeded_twins

RNG = np.random.default_rng(0)


def compare(name, arrays, atol=1e-12, **options):
    """``torch_compare.compare_functional`` with this module's generator."""
    compare_functional(name, arrays, RNG, atol, **options)


def same_error_of(name, arrays, **options):
    """``same_error`` of ``F.name`` and torch's on the same arrays (random for shapes)."""
    arrays = [RNG.standard_normal(a) if isinstance(a, tuple) else a for a in arrays]
    same_error(lambda: getattr(F, name)(*(mg.tensor(a) for a in arrays), **options),
               lambda: getattr(TF, name)(*(torch.tensor(a) for a in arrays), **options))


# ----- transposed convolutions ------------------------------------------------------------
@pytest.mark.parametrize("name, x, w, options", [
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0),
                                                         output_padding=(1, 0), groups=2,
                                                         dilation=(1, 2))),
    ("conv_transpose2d", (2, 3, 4, 4), (3, 2, 3, 3), dict(stride=2, dilation=3,
                                                         output_padding=2)),   # op >= stride
    ("conv_transpose2d", (3, 5, 4), (3, 2, 2, 3), dict(stride=3, padding=1)),  # unbatched
    ("conv_transpose2d", (1, 4, 3, 3), (4, 1, 3, 3), dict(padding=1, groups=4)),  # depthwise
    ("conv_transpose2d", (2, 2, 3, 3), (2, 2, 1, 1), dict(padding=[1, 0])),    # crops
    ("conv_transpose1d", (2, 6, 7), (6, 2, 4), dict(stride=3, padding=2, dilation=2, groups=3,
                                                   output_padding=1)),
    ("conv_transpose1d", (3, 7), (3, 2, 4), dict(stride=(2,), output_padding=(1,))),
])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose_matches_torch(name, x, w, options, bias):
    in_channels, out_channels = w[0], w[1] * options.get("groups", 1)
    assert (x[0] if len(x) == len(w) - 1 else x[1]) == in_channels
    compare(name, [x, w] + ([(out_channels,)] if bias else []), **options)


def test_conv_transpose_of_an_empty_batch_and_other_dtypes():
    compare("conv_transpose2d", [(0, 2, 3, 3), (2, 3, 3, 3), (3,)], stride=2)
    x, w = RNG.standard_normal((2, 3, 4, 5)), RNG.standard_normal((3, 2, 3, 3))
    for dtype, atol in (("float32", 1e-5), ("float16", 5e-2)):
        compare("conv_transpose2d", [x.astype(dtype), w.astype(dtype)], atol=atol, stride=2)
    ints = [RNG.integers(-5, 5, s) for s in ((2, 3, 7), (3, 2, 3), (2,))]
    compare("conv_transpose1d", ints, stride=2, padding=1)
    for dtype in ("int32", "bool"):
        same_error_of("conv_transpose1d", [a.astype(dtype) for a in ints])
    # a bias of a lower dtype joins the output, as torch's; a higher one is refused
    compare("conv_transpose2d", [x, w, RNG.standard_normal(2).astype("float32")])
    same_error_of("conv_transpose2d", [x.astype("float32"), w.astype("float32"),
                                       RNG.standard_normal(2)])


@pytest.mark.parametrize("name, x, w, options", [
    ("conv_transpose2d", (2, 2, 4, 4), (2, 2, 4, 5), dict(stride=(3, 2), padding=(1, 2),
                                                         output_padding=(2, 3), groups=2,
                                                         dilation=(4, 4))),
    ("conv_transpose2d", (1, 3, 4, 4), (3, 3, 3, 3), dict(stride=2, padding=2,
                                                         output_padding=1)),
    ("conv_transpose1d", (2, 6, 7), (6, 2, 4), dict(stride=3, padding=2, dilation=2, groups=3,
                                                   output_padding=1)),
])
def test_half_precision_conv_transpose_rounds_once(name, x, w, options):
    """float16: the product, the overlapping windows' sums and the bias in float32, rounded
    once: torch's float32 result rounded to float16, within a float16 ulp (BLAS's order of
    the float32 sums). torch's own float16 kernel rounds once where oneDNN takes the call
    and once per window where its col2im does, by CPU and arguments."""
    out_channels = w[1] * options.get("groups", 1)
    arrays = [RNG.standard_normal(s).astype(np.float16) for s in (x, w, (out_channels,))]
    got = getattr(F, name)(*(mg.tensor(a) for a in arrays), **options)
    want = getattr(TF, name)(*(torch.tensor(a).float() for a in arrays), **options).half()
    assert got.dtype == mg.float16
    np.testing.assert_array_max_ulp(got.numpy(), want.numpy(), maxulp=1)


def test_conv_transpose_is_the_adjoint_of_conv():
    """⟨conv2d(x, w), y⟩ = ⟨x, conv_transpose2d(y, w)⟩, independently of either's code."""
    x, w = mg.tensor(RNG.standard_normal((2, 4, 9, 8))), mg.tensor(RNG.standard_normal((6, 2,
                                                                                      3, 2)))
    options = dict(stride=(2, 3), padding=(1, 1), dilation=(2, 1), groups=2)
    y = F.conv2d(x, w, **options)
    other = mg.tensor(RNG.standard_normal(y.shape))
    back = F.conv_transpose2d(other, w, output_padding=(0, 2), **options)
    assert back.shape == x.shape
    assert abs((y * other).sum().item() - (x * back).sum().item()) < 1e-10


@pytest.mark.parametrize("x, w, options", [
    ((2, 4, 5, 5), (3, 3, 3, 3), dict()),                       # input channels
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(groups=3)),               # groups must divide C_in
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(groups=0)),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(groups=1.0)),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(stride=2, output_padding=2)),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(output_padding=1)),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(output_padding=-1, stride=2)),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(padding=-1)),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(padding=4)),              # output too small
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(padding="same")),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(stride=0)),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(dilation=0)),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(stride=(1, 1, 1))),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(stride=1.5)),
    ((5, 5), (4, 3, 3, 3), dict()),                             # input dims
    ((2, 4, 5, 5), (4, 3, 3), dict()),                          # weight dims
    ((2, 4, 5, 5), (4, 0, 3, 3), dict()),                       # empty weight
    ((2, 4, 0, 5), (4, 3, 3, 3), dict()),                       # empty spatial dim
    ((2, 4, 5, 5), (4, 3, 3, 0), dict()),                       # empty kernel
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(bias=(4,))),              # bias shape
])
def test_conv_transpose_errors_have_torchs_class(x, w, options):
    bias = options.pop("bias", None)
    same_error_of("conv_transpose2d", [x, w] + ([bias] if bias else []), **options)


def test_conv_transpose_refuses_a_weight_of_another_dtype_and_non_tensors():
    x, w = RNG.standard_normal((2, 4, 5, 5)), RNG.standard_normal((4, 3, 3, 3))
    same_error(lambda: F.conv_transpose2d(mg.tensor(x), mg.tensor(w, dtype="float32")),
               lambda: TF.conv_transpose2d(torch.tensor(x), torch.tensor(w).float()))
    same_error(lambda: F.conv_transpose2d(x, mg.tensor(w)),
               lambda: TF.conv_transpose2d(x, torch.tensor(w)))


# ----- fold -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, options", [
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=2)),
    ((2, 8, 24), dict(output_size=(4, 6), kernel_size=(2, 1), dilation=(1, 2), padding=1,
                      stride=(2, 1))),
    ((18, 4), dict(output_size=4, kernel_size=3, padding=1, stride=2)),        # unbatched
    ((0, 12, 16), dict(output_size=(5, 5), kernel_size=2)),                    # empty batch
])
def test_fold_matches_torch(shape, options):
    compare("fold", [shape], **options)


def test_fold_of_unfold_counts_each_pixels_windows():
    x = mg.tensor(RNG.standard_normal((2, 3, 6, 7)))
    options = dict(kernel_size=(3, 2), padding=1, stride=(1, 2))
    counts = F.fold(F.unfold(mg.ones(1, 3, 6, 7, dtype="float64"), **options), (6, 7),
                    **options)
    np.testing.assert_allclose(F.fold(F.unfold(x, **options), (6, 7), **options).numpy(),
                               (x * counts).numpy(), atol=1e-12)


@pytest.mark.parametrize("dtype", ["bool", "float16", "int64", "int32"])
def test_fold_dtypes_as_torch(dtype):
    x = RNG.integers(0, 2, (2, 12, 16)).astype(dtype)
    try:
        expected = TF.fold(torch.tensor(x), (5, 5), 2)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            F.fold(mg.tensor(x), (5, 5), 2)
        return
    out = F.fold(mg.tensor(x), (5, 5), 2)
    assert str(out.dtype) == f"torch.{dtype}"
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


@pytest.mark.parametrize("shape, options", [
    ((1, 2, 12, 16), dict(output_size=(5, 5), kernel_size=2)),                # dims
    ((2, 10, 16), dict(output_size=(5, 5), kernel_size=2)),                   # C·k
    ((2, 12, 15), dict(output_size=(5, 5), kernel_size=2)),                   # blocks
    ((2, 12, 16), dict(output_size=(0, 5), kernel_size=2)),
    ((2, 12, 16), dict(output_size=(5, 5, 5), kernel_size=2)),
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=0)),
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=2, stride=0)),
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=2, padding=-1)),
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=2, dilation=0)),
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=2.0)),
    ((2, 0, 16), dict(output_size=(5, 5), kernel_size=2)),
    ((2, 36, 1), dict(output_size=(2, 2), kernel_size=3)),                    # no block fits
])
def test_fold_errors_have_torchs_class(shape, options):
    same_error_of("fold", [shape], **options)


# ----- adaptive pooling -------------------------------------------------------------------
@pytest.mark.parametrize("name, shape, output_size", [
    ("adaptive_max_pool2d", (2, 3, 7, 9), (3, 4)),
    ("adaptive_max_pool2d", (3, 7, 9), (5, 2)),
    ("adaptive_max_pool2d", (2, 3, 7, 9), (None, 4)),
    ("adaptive_max_pool2d", (2, 3, 4, 5), (10, 7)),                 # larger than the input
    ("adaptive_max_pool2d", (2, 3, 7, 9), 1),
    ("adaptive_max_pool2d", (0, 3, 7, 9), 2),
    ("adaptive_max_pool1d", (2, 3, 11), 4),
    ("adaptive_max_pool1d", (3, 11), (5,)),
    ("adaptive_max_pool1d", (3, 4), 9),
])
@pytest.mark.parametrize("ties", [False, True])
def test_adaptive_max_pool_matches_torch(name, shape, output_size, ties):
    """Values, indices and gradients; with ties (many equal maxima) the gradient goes to
    each window's first maximum, as torch's scan."""
    x = RNG.integers(0, 3, shape).astype(float) if ties else RNG.standard_normal(shape)
    compare(name, [x], output_size=output_size, return_indices=True)
    compare(name, [x], output_size=output_size)


def test_adaptive_max_pool_takes_the_last_nan_as_torch():
    x = RNG.standard_normal((1, 2, 6, 6))
    x[0, 0, 1, 1] = x[0, 0, 1, 0] = x[0, 1, 4, 4] = np.nan
    compare("adaptive_max_pool2d", [x], output_size=(2, 3), return_indices=True)
    compare("adaptive_max_pool1d", [x[0, :, 1]], output_size=2, return_indices=True)


def test_the_with_indices_forms_always_return_indices():
    x = RNG.standard_normal((2, 3, 6, 6))
    for name, options in (("adaptive_max_pool2d_with_indices", dict(output_size=4)),
                          ("adaptive_max_pool1d_with_indices", dict(output_size=4)),
                          ("max_pool2d_with_indices", dict(kernel_size=3, stride=2, padding=1)),
                          ("max_pool1d_with_indices", dict(kernel_size=2))):
        data = x[0] if "1d" in name else x
        compare(name, [data], **options)


def test_adaptive_max_pool_to_an_empty_output():
    x = RNG.standard_normal((2, 3, 6))
    out, index = F.adaptive_max_pool1d(mg.tensor(x), 0, return_indices=True)
    assert out.shape == index.shape == (2, 3, 0)


@pytest.mark.parametrize("name, shape, output_size", [
    ("adaptive_max_pool2d", (2, 3, 7, 9), (-1, 4)),
    ("adaptive_max_pool2d", (2, 3, 7, 9), (1, 2, 3)),
    ("adaptive_max_pool2d", (7, 9), 2),
    ("adaptive_max_pool2d", (2, 0, 7, 9), 2),
    ("adaptive_max_pool2d", (2, 3, 0, 9), 2),
    ("adaptive_max_pool2d", (2, 3, 7, 9), 2.0),
    ("adaptive_max_pool1d", (3, 7, 9), (4, 4)),
    ("adaptive_max_pool1d", (3, 7, 9), None),
    ("adaptive_max_pool1d", (3, 7, 9), -1),
    ("adaptive_max_pool1d", (9,), 3),
    ("adaptive_max_pool1d", (2, 3, 7, 9), 3),
    ("adaptive_max_pool1d", (3, 7, 0), 3),
    ("adaptive_avg_pool1d", (3, 7, 9), (3, 3)),
    ("adaptive_avg_pool1d", (3, 7, 9), None),
    ("adaptive_avg_pool1d", (3, 7, 9), -2),
    ("adaptive_avg_pool1d", (9,), 3),
    ("adaptive_avg_pool1d", (2, 3, 7, 9), 3),
    ("adaptive_avg_pool1d", (2, 3, 0), 0),
    ("adaptive_max_pool2d", (2, 3, 7, 9), None), ("adaptive_max_pool2d", (2, 3, 7, 9), [3]),
    ("adaptive_avg_pool2d", (2, 3, 7, 9), None), ("adaptive_avg_pool2d", (2, 3, 7, 9), (3,)),
])
def test_adaptive_pool_errors_have_torchs_class(name, shape, output_size):
    same_error_of(name, [shape], output_size=output_size)


@pytest.mark.parametrize("name", ["adaptive_max_pool2d", "adaptive_max_pool1d",
                                  "adaptive_avg_pool1d"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_adaptive_pool_dtypes_as_torch(name, dtype):
    x = RNG.integers(-5, 5, (2, 3, 7, 9) if name.endswith("2d") else (2, 3, 9)).astype(dtype)
    if dtype == "float32":
        compare(name, [x], atol=1e-6, output_size=3)
    else:                                               # torch's kernels: floating only
        same_error_of(name, [x], output_size=3)


@pytest.mark.parametrize("shape, output_size", [((2, 3, 11), 4), ((3, 11), (3,)),
                                                ((2, 3, 5), 5), ((2, 3, 4), 7), ((0, 3, 4), 2),
                                                ((2, 0, 4), 2), ((2, 3, 4), 0)])
def test_adaptive_avg_pool1d_matches_torch(shape, output_size):
    compare("adaptive_avg_pool1d", [shape], output_size=output_size)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_adaptive_avg_pool_keeps_inf_and_nan_in_their_windows(bad):
    x = RNG.standard_normal((2, 3, 7, 9))
    x[0, 1, 0, 0] = x[1, 2, 4, 5] = bad
    compare("adaptive_avg_pool2d", [x], output_size=(3, 4))
    compare("adaptive_avg_pool2d", [x], output_size=(None, 1))
    compare("adaptive_avg_pool1d", [x[:, :, 0]], output_size=4)
    compare("adaptive_avg_pool2d", [(2, 0, 4, 5)], output_size=2)      # no channels: torch's


# ----- max unpooling ----------------------------------------------------------------------
@pytest.mark.parametrize("shape, pool, unpool", [
    ((2, 3, 6, 6), dict(kernel_size=2), dict(kernel_size=2)),
    ((2, 3, 7, 7), dict(kernel_size=2), dict(kernel_size=2, output_size=(7, 7))),
    ((3, 7, 8), dict(kernel_size=3, stride=2, padding=1),
     dict(kernel_size=3, stride=2, padding=1, output_size=(7, 8))),
    ((2, 3, 6, 6), dict(kernel_size=3, stride=1), dict(kernel_size=3, stride=1)),  # repeats
    ((0, 3, 6, 6), dict(kernel_size=2), dict(kernel_size=2)),
])
def test_max_unpool2d_matches_torch(shape, pool, unpool):
    values, index = TF.max_pool2d(torch.tensor(RNG.standard_normal(shape)),
                                  return_indices=True, **pool)
    compare("max_unpool2d", [values.numpy(), index.numpy()], **unpool)


@pytest.mark.parametrize("change, options", [
    ("none", dict(kernel_size=2, output_size=(8, 7))),
    ("none", dict(kernel_size=2, output_size=(7,))),
    ("none", dict(kernel_size=1, padding=2)),                     # negative output size
    ("int32", dict(kernel_size=2)),
    ("float", dict(kernel_size=2)),
    ("out of range", dict(kernel_size=2)),
    ("negative", dict(kernel_size=2)),
    ("shape", dict(kernel_size=2)),
    ("2-D", dict(kernel_size=2)),
    ("int64 input", dict(kernel_size=2)),
    ("none", dict(kernel_size=(2, 2, 2))), ("none", dict(kernel_size=(2,))),
    ("none", dict(kernel_size=2, stride=(2,))), ("none", dict(kernel_size=2, output_size=7)),
    ("no channels", dict(kernel_size=2)), ("no rows", dict(kernel_size=2)),
])
def test_max_unpool2d_errors_have_torchs_class(change, options):
    values, index = TF.max_pool2d(torch.tensor(RNG.standard_normal((2, 3, 6, 6))), 2,
                                  return_indices=True)
    values, index = values.numpy(), index.numpy()
    changed = {"int32": (values, index.astype("int32")), "float": (values, index * 1.0),
               "out of range": (values, index + 100), "negative": (values, index - 100),
               "shape": (values, index[:, :, :2]), "2-D": (values[0, 0], index[0, 0]),
               "int64 input": (values.astype("int64"), index),
               "no channels": (values[:, :0], index[:, :0]),
               "no rows": (values[:, :, :0], index[:, :, :0])}.get(change, (values, index))
    same_error_of("max_unpool2d", list(changed), **options)


# ----- bilinear, channel_shuffle, local_response_norm -------------------------------------
@pytest.mark.parametrize("shapes", [
    [(4, 3), (4, 5), (2, 3, 5), (2,)],
    [(2, 4, 3), (2, 4, 5), (2, 3, 5)],
    [(3,), (5,), (2, 3, 5), (2,)],
    [(0, 3), (0, 5), (2, 3, 5), (2,)],
])
def test_bilinear_matches_torch(shapes):
    compare("bilinear", shapes)


def test_bilinear_of_integers_as_torch():
    ints = [RNG.integers(-4, 4, s) for s in ((4, 3), (4, 5), (2, 3, 5), (2,))]
    compare("bilinear", ints)


@pytest.mark.parametrize("shapes", [
    [(3, 3), (4, 5), (2, 3, 5), (2,)],                  # batch dims
    [(1, 3), (4, 5), (2, 3, 5), (2,)],                  # no broadcasting
    [(4, 5), (4, 5), (2, 3, 5), (2,)],                  # in1
    [(4, 3), (4, 5), (3, 5), (2,)],                     # weight dims
    [(4, 3), (4, 5), (2, 3, 5), (3,)],                  # bias
    [(4, 3), (4, 5), (2, 3, 5), (1, 2)],
    [(4, 3), (1, 4, 5), (2, 3, 5), (2,)],               # input dims
    [(), (), (2, 3, 5), (2,)],                          # 0-d
    [(4, 0), (4, 5), (2, 0, 5), (2,)], [(4, 3), (4, 0), (2, 3, 0)],    # no features
])
def test_bilinear_errors_have_torchs_class(shapes):
    same_error_of("bilinear", shapes)


def test_bilinear_refuses_mixed_dtypes():
    a, b, w = (RNG.standard_normal(s) for s in ((4, 3), (4, 5), (2, 3, 5)))
    same_error(lambda: F.bilinear(mg.tensor(a, dtype="float32"), mg.tensor(b), mg.tensor(w)),
               lambda: TF.bilinear(torch.tensor(a).float(), torch.tensor(b), torch.tensor(w)))


@pytest.mark.parametrize("shape, groups", [((2, 6, 3), 2), ((2, 6, 2, 2), 3), ((1, 4, 5), 4),
                                           ((0, 6, 3), 3), ((2, 0, 3), 3)])
def test_channel_shuffle_matches_torch(shape, groups):
    compare("channel_shuffle", [shape], groups=groups)
    compare("channel_shuffle", [RNG.integers(0, 9, shape)], groups=groups)


@pytest.mark.parametrize("shape, groups", [((6, 3), 2), ((3,), 3), ((2, 6, 3), 4),
                                           ((2, 6, 3), 0), ((2, 6, 3), -2), ((2, 6, 3), 2.0)])
def test_channel_shuffle_errors_have_torchs_class(shape, groups):
    same_error_of("channel_shuffle", [shape], groups=groups)


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_channel_shuffle_returns_new_memory_as_torch(groups):
    x = mg.zeros(2, 4, 3)
    F.channel_shuffle(x, groups).add_(1)
    assert not x.numpy().any()


@pytest.mark.parametrize("shape, options", [
    ((2, 6, 3), dict(size=3)),
    ((2, 6, 3, 2, 2), dict(size=4, alpha=0.1, beta=0.6, k=2.0)),
    ((2, 6, 3, 2), dict(size=20, alpha=0.5, beta=0.75, k=1.0)),     # wider than C
    ((2, 5, 4), dict(size=1, alpha=1.0)),
    ((0, 6, 3), dict(size=4)),
])
def test_local_response_norm_matches_torch(shape, options):
    compare("local_response_norm", [shape], **options)


@pytest.mark.parametrize("shape, size", [((6, 3), 2), ((2, 6, 3), 0), ((2, 6, 3), 2.0)])
def test_local_response_norm_errors_have_torchs_class(shape, size):
    same_error_of("local_response_norm", [shape], size=size)
    if size == 0:
        with pytest.raises(RuntimeError, match="local_response_norm: size"):
            F.local_response_norm(mg.zeros(*shape), size)
        assert F.local_response_norm(mg.zeros(0, 6, 3), size).shape == (0, 6, 3)   # torch's


# ----- dropout ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("p", [0.3, 0.9])
def test_alpha_dropout_draws_torchs_values_and_gradient(dtype, p):
    x = RNG.standard_normal((3, 4, 5)).astype(dtype)
    ours, theirs = pair(x)
    mg.manual_seed(3)
    torch.manual_seed(3)
    out, expected = F.alpha_dropout(ours, p, True), TF.alpha_dropout(theirs, p, True)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    upstream = RNG.standard_normal(x.shape).astype(dtype)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    mg.manual_seed(3)
    torch.manual_seed(3)
    inplace, expected = mg.tensor(x), torch.tensor(x)
    F.alpha_dropout(inplace, p, True, inplace=True)
    TF.alpha_dropout(expected, p, True, inplace=True)
    np.testing.assert_array_equal(inplace.numpy(), expected.numpy())


def test_alpha_dropouts_constant_is_selus_lambda_alpha():
    from microgradnorm import activations, convolution_more
    assert convolution_more.LAMBDA_ALPHA == pytest.approx(activations.SELU_SCALE *
                                                          activations.SELU_ALPHA, rel=1e-15)


@pytest.mark.parametrize("name", ["dropout", "dropout1d", "alpha_dropout"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float16"])
@pytest.mark.parametrize("inplace", [False, True])
def test_dropout_of_p_1_keeps_the_dtype_as_torch(name, dtype, inplace):
    x = RNG.integers(0, 2, (2, 3, 4)).astype(dtype)
    if inplace and dtype == "bool":
        return
    out = getattr(F, name)(mg.tensor(x), 1.0, True, inplace)
    expected = getattr(TF, name)(torch.tensor(x), 1.0, True, inplace)
    assert str(out.dtype) == str(expected.dtype)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_alpha_dropout_keeps_zero_mean_and_unit_variance():
    mg.manual_seed(0)
    out = F.alpha_dropout(mg.randn(200_000, dtype="float64"), 0.2, training=True).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.std() - 1) < 0.01


def test_alpha_dropout_edges_as_torch():
    x = RNG.standard_normal((2, 3))
    t = mg.tensor(x)
    assert F.alpha_dropout(t, 0.5) is t                      # training=False by default
    assert F.alpha_dropout(t, 0.0, True) is t
    np.testing.assert_array_equal(F.alpha_dropout(t, 1.0, True).numpy(),
                                  TF.alpha_dropout(torch.tensor(x), 1.0, True).numpy())
    ints = RNG.integers(0, 5, (2, 3))
    same_error_of("alpha_dropout", [ints], p=0.5, training=True)     # a floating result
    assert F.alpha_dropout(mg.tensor(ints), 0.5).dtype == np.int64
    for p in (2, "a", -0.1):
        same_error_of("alpha_dropout", [x], p=p)


@pytest.mark.parametrize("shape", [(3, 4, 5), (4, 5)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_dropout1d_draws_torchs_channels(shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    ours, theirs = pair(x)
    mg.manual_seed(5)
    torch.manual_seed(5)
    out, expected = F.dropout1d(ours, 0.4), TF.dropout1d(theirs, 0.4)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@pytest.mark.parametrize("data, options", [
    ((1, 3, 4, 5), dict(p=0.5)), ((5,), dict(p=0.5)), ((3, 4), dict(p=1.5)),
    ((3, 4), dict(p=-1)), ("ints", dict(p=0.5)),
])
def test_dropout1d_errors_have_torchs_class(data, options):
    array = RNG.integers(0, 5, (3, 4)) if data == "ints" else RNG.standard_normal(data)
    same_error_of("dropout1d", [array], **options)


# ----- modules ----------------------------------------------------------------------------
@pytest.mark.parametrize("cls, args, options", [
    ("ConvTranspose2d", (4, 6, 3), dict()),
    ("ConvTranspose2d", (4, 6, (3, 2)), dict(stride=2, padding=(1, 0), output_padding=(1, 0),
                                             groups=2, bias=False, dilation=(1, 2))),
    ("ConvTranspose1d", (3, 4, 5), dict(stride=3, padding=1, output_padding=2)),
])
def test_conv_transpose_modules_as_torch(cls, args, options):
    ours, theirs = seeded_twins(cls, *args, **options)
    x = RNG.standard_normal((2, args[0]) + (5,) * (2 if cls.endswith("2d") else 1))
    out = ours(mg.tensor(x, dtype="float32"))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.detach().numpy(),
                               theirs(torch.tensor(x, dtype=torch.float32)).detach().numpy(),
                               atol=1e-5)
    # a torch float64 state dict loads, and every gradient is torch's
    theirs.double()
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    ours.double()
    compare_module(ours, theirs, [x], RNG)


@pytest.mark.parametrize("output_size", [(12, 12), (1, 16, 11, 12), (11, 11), (13, 12), (12,)])
def test_conv_transpose_output_size_as_torch(output_size):
    ours, theirs = seeded_twins("ConvTranspose2d", 16, 16, 3, stride=2, padding=1)
    x = RNG.standard_normal((1, 16, 6, 6)).astype("float32")
    try:
        expected = theirs(torch.tensor(x), output_size=output_size)
    except ValueError:
        with pytest.raises(ValueError):
            ours(mg.tensor(x), output_size=output_size)
        return
    out = ours(mg.tensor(x), output_size=output_size)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-5)


@pytest.mark.parametrize("module", [nn.ConvTranspose1d(2, 3, 3, stride=2), nn.MaxUnpool2d(2)])
def test_an_int_output_size_is_a_type_error_naming_it(module):
    x = mg.zeros((1, 2, 7) if isinstance(module, nn.ConvTranspose1d) else (1, 2, 3, 3))
    index = mg.zeros(x.shape, dtype="int64")
    with pytest.raises(TypeError, match="output_size"):                 # torch: a TypeError
        module(x, output_size=15) if x.ndim == 3 else module(x, index, output_size=7)


@pytest.mark.parametrize("options", [dict(groups=3), dict(groups=0), dict(padding_mode="zeros"),
                                     dict(padding_mode="reflect"), dict(padding_mode="mirror")])
def test_conv_transpose_module_arguments_as_torch(options):
    if options.get("padding_mode") == "zeros":
        assert nn.ConvTranspose2d(4, 6, 3, **options).padding_mode == "zeros"
        return
    same_error(lambda: nn.ConvTranspose2d(4, 6, 3, **options),
               lambda: torch.nn.ConvTranspose2d(4, 6, 3, **options))


@pytest.mark.parametrize("cls, args, options, shape", [
    ("Fold", ((5, 5), 2), dict(), (2, 12, 16)),
    ("Fold", (4, 3), dict(padding=1, stride=2), (18, 4)),
    ("Unfold", ((2, 3),), dict(dilation=(2, 1), padding=1, stride=(1, 2)), (2, 3, 6, 7)),
    ("AdaptiveMaxPool2d", ((3, None),), dict(), (2, 3, 7, 9)),
    ("AdaptiveMaxPool1d", (4,), dict(), (2, 3, 9)),
    ("AdaptiveAvgPool1d", (4,), dict(), (3, 9)),
    ("ChannelShuffle", (3,), dict(), (2, 6, 4)),
    ("LocalResponseNorm", (3,), dict(alpha=0.1, beta=0.5, k=2.0), (2, 6, 4, 3)),
])
def test_shape_modules_as_torch(cls, args, options, shape):
    ours, theirs = seeded_twins(cls, *args, **options)
    compare_module(ours, theirs, [RNG.standard_normal(shape)], RNG)


def test_pooling_modules_with_indices_and_unpooling_as_torch():
    x = RNG.standard_normal((2, 3, 7, 9))
    for cls in ("AdaptiveMaxPool2d", "AdaptiveMaxPool1d"):
        data = x[0] if cls.endswith("1d") else x
        ours, theirs = seeded_twins(cls, 3, return_indices=True)
        (out, index), (expected, expected_index) = ours(data), theirs(torch.tensor(data))
        np.testing.assert_array_equal(index.numpy(), expected_index.numpy())
        np.testing.assert_allclose(out.numpy(), expected.numpy(), atol=1e-12)
    values, index = TF.max_pool2d(torch.tensor(x), 2, stride=2, return_indices=True)
    ours, theirs = seeded_twins("MaxUnpool2d", 2, padding=0)
    np.testing.assert_array_equal(
        ours(mg.tensor(values.numpy()), mg.tensor(index.numpy()), output_size=(7, 9)).numpy(),
        theirs(values, index, output_size=(7, 9)).numpy())
    np.testing.assert_array_equal(ours(values.numpy(), index.numpy(), (7, 9)).numpy(),
                                  theirs(values, index, (7, 9)).numpy())


def test_bilinear_module_as_torch():
    ours, theirs = seeded_twins("Bilinear", 3, 5, 2)
    seeded_twins("Bilinear", 3, 5, 4, bias=False)
    ours.double()
    theirs.double()
    compare_module(ours, theirs, [RNG.standard_normal((4, 3)), RNG.standard_normal((4, 5))], RNG)
    same_error(lambda: nn.Bilinear(0, 5, 2), lambda: torch.nn.Bilinear(0, 5, 2))


def test_lazy_linear_becomes_torchs_linear_at_its_first_call():
    mg.manual_seed(2)
    torch.manual_seed(2)
    ours, theirs = nn.LazyLinear(3), torch.nn.LazyLinear(3)
    assert repr(ours) == repr(theirs)
    assert isinstance(ours.weight, nn.UninitializedParameter) and ours.weight.size == 0
    assert repr(ours.weight) == "<UninitializedParameter>"
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "bias"]
    x = RNG.standard_normal((2, 4)).astype("float32")
    out, expected = ours(x), theirs(torch.tensor(x))
    assert type(ours) is nn.Linear and type(ours.weight) is nn.Parameter
    assert repr(ours) == repr(theirs) == "Linear(in_features=4, out_features=3, bias=True)"
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-6)
    no_bias = nn.LazyLinear(2, bias=False)
    assert no_bias.bias is None and no_bias(np.ones((1, 5), "float32")).shape == (1, 2)
    with pytest.raises(TypeError):               # its parameters are float32, as torch's
        nn.LazyLinear(2)(np.ones((1, 5)))
    # 0 features: torch's Linear(0, 2), its bias left as allocated; here zeros, no draw
    lazy, theirs = nn.LazyLinear(2), torch.nn.LazyLinear(2)
    state = mg.default_generator.get_state()
    out = lazy(np.ones((3, 0), "float32"))
    assert out.shape == tuple(theirs(torch.ones(3, 0)).shape)
    assert not np.any(out.detach().numpy())
    assert repr(lazy) == repr(theirs)
    np.testing.assert_array_equal(mg.default_generator.get_state(), state)


@pytest.mark.parametrize("cls", ["Dropout1d", "AlphaDropout"])
def test_dropout_modules_draw_torchs_values(cls):
    ours, theirs = seeded_twins(cls, 0.3)
    x = RNG.standard_normal((3, 4, 5))
    mg.manual_seed(4)
    torch.manual_seed(4)
    np.testing.assert_array_equal(ours(x).numpy(), theirs(torch.tensor(x)).numpy())
    ours.eval()
    assert np.array_equal(ours(x).numpy(), x)
    same_error(lambda: getattr(nn, cls)(1.5), lambda: getattr(torch.nn, cls)(1.5))


# ----- names --------------------------------------------------------------------------------
FUNCTIONS = ["adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
             "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "alpha_dropout",
             "bilinear", "channel_shuffle", "conv_transpose1d", "conv_transpose2d", "dropout1d",
             "fold", "local_response_norm", "max_pool1d_with_indices",
             "max_pool2d_with_indices", "max_unpool2d"]
MODULES = ["AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AlphaDropout",
           "Bilinear", "ChannelShuffle", "ConvTranspose1d", "ConvTranspose2d", "Dropout1d",
           "Fold", "LazyLinear", "LocalResponseNorm", "MaxUnpool2d", "UninitializedParameter",
           "Unfold"]


def _names(function):
    # the parameters torch's callers may pass: all but our keyword-only extras
    return [name for name, p in inspect.signature(function).parameters.items()
            if p.kind != p.KEYWORD_ONLY]


def test_names_and_signatures_are_torchs():
    """Registered in F and nn, with torch's parameter names in torch's order (where
    torch's Python signature says; its C functions have none to compare)."""
    for name in FUNCTIONS:
        assert name in F.__all__ and hasattr(TF, name), name
        try:
            expected = _names(getattr(TF, name))
        except ValueError:
            continue
        if expected != ["args", "kwargs"]:                   # torch's boolean dispatch
            assert _names(getattr(F, name)) == expected, name
    for name in MODULES:
        assert name in nn.__all__ and hasattr(torch.nn, name), name
        for method in ("__init__", "forward"):
            if name != "UninitializedParameter":
                assert _names(getattr(getattr(nn, name), method)) == \
                    _names(getattr(getattr(torch.nn, name), method)), (name, method)
