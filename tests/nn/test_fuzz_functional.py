"""Argument corners of ``nn.functional`` and the nn modules, against PyTorch: padding that
crops to nothing, interpolate's error order and 5-D area mode, unfold's and the
convolutions' empty dims, pooling's padding and 3-D average checks, LP pooling in 3-D,
dropout2d of a 1-D input, normalize over several dims, shapes that do not broadcast,
linear's 1-D weight, attention's grouped heads, embedding's ``scale_grad_by_freq`` and
gumbel_softmax of an empty dim. Each case compares values, float64 gradients, or the
error's class with torch's."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn
from torch_compare import pair, same_error

TF = torch.nn.functional


def check_call(call, *arrays, atol=1e-12):
    """``call(lib, *tensors)`` in both libraries: torch's error class, or the same shape,
    dtype, values and float64 gradients of every floating input for one upstream."""
    ours, theirs = zip(*[pair(a) for a in arrays])
    try:
        expected = call(torch, *theirs)
    except Exception as error:                                 # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            call(mg, *ours)
        return
    out = call(mg, *ours)
    assert out.shape == tuple(expected.shape)
    assert str(out.dtype) == str(expected.dtype)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=atol)
    if out.size == 0 or not expected.requires_grad:
        return
    upstream = np.random.default_rng(0).standard_normal(out.shape)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    for mine, reference in zip(ours, theirs):
        if reference.requires_grad:
            np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), atol=atol)


def randn(*shape):
    return np.random.default_rng(sum(shape) + len(shape)).standard_normal(shape)


# ----- pad: negative amounts that crop to nothing or past the input ------------------------
CROPS = [(0, 1, -1, -2),          # the first padded dim's output 0, the other's 5
         (0, -4), (-2, -2),       # the only padded dim's output 0
         (-2, -2, -1, -2),        # every padded dim's output 0
         (0, 1, -1, -3),          # a negative output size
         (0, 0, -4, 1)]
PAST = [(-5, 3), (1, -5), (-2, -3), (1, -4), (-4, 1), (-4, 4)]   # crops past the input, pads


@pytest.mark.parametrize("mode, pad", [(mode, pad) for mode in ("constant", "reflect",
                                                                "replicate", "circular")
                                       for pad in CROPS] +
                         [(mode, pad) for mode in ("constant", "reflect", "replicate")
                          for pad in PAST])      # circular: refused, docs/pytorch.md
def test_pad_crops_to_nothing_as_torch(mode, pad):
    check_call(lambda lib, x: lib.nn.functional.pad(x, pad, mode=mode), randn(1, 3, 4))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(0, 0, 0, 0, -1, -2), (-2, -2, 0, 0, -1, -2),
                                 (-2, -2, -2, -1, -1, -2), (0, 0, -2, -1, 0, 0)])
def test_pad_3d_empty_outputs_as_torch(mode, pad):
    check_call(lambda lib, x: lib.nn.functional.pad(x, pad, mode=mode), randn(1, 3, 3, 4))


@pytest.mark.parametrize("cls, padding", [("ReplicationPad2d", (0, 1, -1, -2)),
                                          ("ReflectionPad2d", (0, 1, -1, -2)),
                                          ("ZeroPad2d", (0, 1, -1, -4)),
                                          ("ConstantPad3d", (-1, -1, 3, -1, 0, 0))])
def test_pad_modules_crop_as_torch(cls, padding):
    check_call(lambda lib, x: getattr(lib.nn, cls)(padding)(x), randn(1, 3, 3, 4))


# ----- interpolate: the error order of torch's checks, area in 3-D ------------------------
@pytest.mark.parametrize("shape", [(3, 3), (4,)])
@pytest.mark.parametrize("options", [
    dict(size=(4,), mode="bicubic"), dict(scale_factor=(0.3,), mode="nearest"),
    dict(size=4, mode="nearest"), dict(size=(2,), mode="trilinear", align_corners=False),
    dict(scale_factor=2.0, mode="linear"), dict(size=(), mode="area"),
])
def test_interpolate_errors_in_torch_order(shape, options):
    same_error(lambda: F.interpolate(mg.tensor(randn(*shape)), **options),
               lambda: TF.interpolate(torch.tensor(randn(*shape)), **options))


@pytest.mark.parametrize("options", [dict(size=(7, 4, 4)), dict(size=1),
                                     dict(scale_factor=(0.5, 1.0, 3.0)),
                                     dict(scale_factor=(0.7, 0.7, 0.5),
                                          recompute_scale_factor=True)])
def test_interpolate_area_of_volumes_as_torch(options):
    check_call(lambda lib, x: lib.nn.functional.interpolate(x, mode="area", **options),
               randn(2, 2, 3, 2, 4))
    check_call(lambda lib, x: lib.nn.Upsample(mode="area", **options)(x), randn(1, 2, 4, 3, 2))


# ----- unfold and the convolutions: empty dims ---------------------------------------------
@pytest.mark.parametrize("shape", [(3, 2), (3,), (2, 1, 0, 4), (2, 0, 3), (1, 0, 2, 3),
                                   (0, 2, 3, 3), (1, 1, 1, 2, 2)])
def test_unfold_rank_and_empty_dims_as_torch(shape):
    check_call(lambda lib, x: lib.nn.functional.unfold(x, 1, padding=1), randn(*shape))
    check_call(lambda lib, x: lib.nn.Unfold((1, 2))(x), randn(*shape))


@pytest.mark.parametrize("shape, padding", [((1, 1, 0, 3), 0), ((1, 1, 0, 3), 1),
                                            ((0, 1, 0, 3), 0), ((0, 1, 0, 3), 1),
                                            ((1, 0, 0, 3), 0), ((0, 1, 3, 3), 0)])
def test_conv_empty_spatial_dims_as_torch(shape, padding):
    weight = randn(1, shape[1], 1, 1)
    check_call(lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=padding),
               randn(*shape), weight)
    volume = randn(*shape[:2], 2, *shape[2:])
    check_call(lambda lib, x, w: lib.nn.functional.conv3d(x, w[..., None], padding=padding),
               volume, weight)


# ----- pooling: padding against the undilated kernel, avg_pool3d's input size -------------
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("kernel, padding, dilation", [(3, 2, 2), (3, 1, 2), (2, 1, 3),
                                                       (4, 2, 1), (4, 3, 1)])
def test_max_pool_padding_half_the_undilated_kernel(dims, kernel, padding, dilation):
    pool = f"max_pool{dims}d"
    check_call(lambda lib, x: getattr(lib.nn.functional, pool)(x, kernel, padding=padding,
                                                               dilation=dilation),
               randn(1, 2, *(7,) * dims))


@pytest.mark.parametrize("shape, kernel, padding, ceil_mode", [
    ((1, 3, 1, 5, 4), (4, 4, 2), (2, 1, 0), True),      # fits only with the padding
    ((1, 6, 6, 3), 4, 0, True), ((2, 1, 5, 2, 5), 4, 1, False),
    ((1, 1, 4, 4, 4), 4, 2, True), ((1, 1, 3, 4, 5), (3, 4, 5), 0, False),
])
def test_avg_pool3d_input_smaller_than_kernel_as_torch(shape, kernel, padding, ceil_mode):
    check_call(lambda lib, x: lib.nn.functional.avg_pool3d(x, kernel, padding=padding,
                                                           ceil_mode=ceil_mode), randn(*shape))
    check_call(lambda lib, x: lib.nn.AvgPool3d(kernel, padding=padding,
                                               ceil_mode=ceil_mode)(x), randn(*shape))


# ----- LP pooling in 3-D ---------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("kernel, stride, ceil_mode", [(2, None, False), ((2, 1, 3), 2, True),
                                                       ((1, 2, 2), (1, 1, 2), False)])
def test_lp_pool3d_as_torch(norm_type, kernel, stride, ceil_mode):
    x = randn(2, 2, 3, 4, 5)
    check_call(lambda lib, a: lib.nn.functional.lp_pool3d(a, norm_type, kernel, stride,
                                                          ceil_mode), x)
    check_call(lambda lib, a: lib.nn.LPPool3d(norm_type, kernel, stride, ceil_mode)(a), x[0])
    assert repr(nn.LPPool3d(norm_type, kernel, stride)) == repr(
        torch.nn.LPPool3d(norm_type, kernel, stride))


def test_lp_pool1d_and_2d_unchanged_by_the_move():
    check_call(lambda lib, a: lib.nn.functional.lp_pool1d(a, 2.0, 3, 2), randn(2, 3, 7))
    check_call(lambda lib, a: lib.nn.functional.lp_pool2d(a, 3.0, (2, 3), 1, True),
               randn(2, 3, 5, 6))


# ----- dropout2d of a 1-D input: torch checks the dims only where it draws ----------------
@pytest.mark.parametrize("p, training", [(1.0, True), (0.5, False), (0.0, True), (0.5, True)])
def test_dropout2d_of_1d_input_as_torch(p, training):
    with pytest.warns(UserWarning):
        check_call(lambda lib, x: lib.nn.functional.dropout2d(x, p, training), randn(3))


# ----- normalize over several dims; shapes that do not broadcast -----------------------------
@pytest.mark.parametrize("dim", [(0, -1), (1,), (0, 1, 2), None, (0, 0)])
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, float("inf")])
def test_normalize_over_several_dims_as_torch(dim, p):
    check_call(lambda lib, x: lib.nn.functional.normalize(x, p=p, dim=dim), randn(3, 4, 2))


@pytest.mark.parametrize("call", [
    lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b),
    lambda lib, a, b: lib.nn.PairwiseDistance(p=0.5)(a, b),
    lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, dim=-1),
    lambda lib, a, b: a - b,
    lambda lib, a, b: a * b,
], ids=["pairwise_distance", "PairwiseDistance", "cosine_similarity", "sub", "mul"])
def test_shapes_that_do_not_broadcast_raise_runtime_error(call):
    check_call(call, randn(2, 3, 3), randn(2, 3, 4))
    check_call(call, randn(3), randn(4))


# ----- the norms' argument errors ----------------------------------------------------------
@pytest.mark.parametrize("shape", [(4,), (1,)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_of_1d_input_raises_runtime_error(shape, training):
    check_call(lambda lib, x, m, v: lib.nn.functional.batch_norm(x, m, v, training=training),
               randn(*shape), np.zeros(shape), np.ones(shape))


@pytest.mark.parametrize("shape", [(0, 2), (2, 0), (2, 3, 1), (0, 2, 3), (2, 3), (1, 2, 0),
                                   (0, 2, 1, 1)])
def test_instance_norm_spatial_size_checks_as_torch(shape):
    check_call(lambda lib, x: lib.nn.functional.instance_norm(x), randn(*shape))


# ----- linear with a 1-D weight and a 0-d bias ---------------------------------------------
@pytest.mark.parametrize("input_shape", [(3,), (2, 3), (2, 2, 3), (2, 2, 2, 3), (1, 0, 3)])
@pytest.mark.parametrize("bias_shape", [(), (1,), (2,), None])
def test_linear_1d_weight_with_bias_as_torch(input_shape, bias_shape):
    arrays = [randn(*input_shape), randn(3)] + ([] if bias_shape is None else
                                                [randn(*bias_shape)])
    check_call(lambda lib, *t: lib.nn.functional.linear(*t), *arrays)


# ----- attention: grouped heads need a heads dim -------------------------------------------
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3), (2, 3)), ((1, 2, 3), (2, 3), (2, 3)),
                                    ((2, 3), (1, 2, 3), (1, 2, 3)),
                                    ((4, 2, 3), (2, 2, 3), (2, 2, 3))])
def test_sdpa_enable_gqa_needs_heads_as_torch(shapes):
    arrays = [randn(*s) for s in shapes]
    check_call(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, enable_gqa=True), *arrays)


# ----- embedding's scale_grad_by_freq ------------------------------------------------------
@pytest.mark.parametrize("padding_idx", [None, 1, -2])
@pytest.mark.parametrize("ids", [[[0, 1, 1], [3, 1, 0]], [4, 4, 4, 4], [], 2],
                         ids=["repeats", "one-id", "empty", "scalar"])
@pytest.mark.parametrize("max_norm", [None, 1.0])
def test_embedding_scale_grad_by_freq_as_torch(padding_idx, ids, max_norm):
    ids = np.array(ids, dtype=np.int64)
    options = dict(padding_idx=padding_idx, max_norm=max_norm, scale_grad_by_freq=True)
    check_call(lambda lib, w: lib.nn.functional.embedding(lib.tensor(ids), w, **options),
               randn(5, 3))
    ours = nn.Embedding(5, 3, **options, dtype=mg.float64)
    theirs = torch.nn.Embedding(5, 3, **options, dtype=torch.float64)
    ours.load_state_dict({"weight": theirs.weight.detach().numpy().copy()})
    out, expected = ours(mg.tensor(ids)), theirs(torch.tensor(ids))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    upstream = np.random.default_rng(1).standard_normal(out.shape)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               atol=1e-12)


def test_embedding_scale_grad_by_freq_errors_first_as_torch():
    table = randn(3, 2)
    for ids, options in (([3], {}), ([-1, 1], {}), ([0], dict(padding_idx=3))):
        check_call(lambda lib, w, ids=ids, options=options: lib.nn.functional.embedding(
            lib.tensor(np.array(ids)), w, scale_grad_by_freq=True, **options), table)
    grads = []                                   # sparse=True: torch's gradient, dense here
    for lib in (torch, mg):
        w = lib.tensor(table, requires_grad=True)
        (lib.nn.functional.embedding(lib.tensor([0, 2, 0]), w, sparse=True) * 2).sum().backward()
        grads.append(w.grad.to_dense().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


# ----- gumbel_softmax(hard=True) over an empty dim -----------------------------------------
@pytest.mark.parametrize("shape, dim", [((0,), -1), ((0, 1, 0), -1), ((1, 0, 3), -2)])
def test_gumbel_softmax_hard_of_empty_dim_as_torch(shape, dim):
    same_error(lambda: F.gumbel_softmax(mg.zeros(*shape), hard=True, dim=dim),
               lambda: TF.gumbel_softmax(torch.zeros(shape), hard=True, dim=dim))


# ----- adaptive average pooling of empty dims: torch's mean shortcut at output 1 -----------
@pytest.mark.parametrize("name, shape, output_size", [
    ("adaptive_avg_pool2d", (2, 0, 3, 3), 2), ("adaptive_avg_pool3d", (2, 0, 3, 3, 3), 2),
    ("adaptive_avg_pool3d", (2, 0, 3, 3, 3), 1), ("adaptive_avg_pool2d", (2, 3, 0, 3), 2),
    ("adaptive_avg_pool2d", (2, 3, 0, 3), 1), ("adaptive_avg_pool1d", (2, 3, 0), 1),
    ("adaptive_avg_pool3d", (3, 0, 2, 2), (1, 1, 1)), ("adaptive_avg_pool3d", (2, 2, 2, 0),
                                                       (1, None, 1)),
])
def test_adaptive_avg_pool_of_empty_dims_as_torch(name, shape, output_size):
    check_call(lambda lib, x: getattr(lib.nn.functional, name)(x, output_size),
               np.zeros(shape))


# ----- bfloat16: cosine_similarity keeps the dtype, attention masks are floating ----------
def test_bfloat16_cosine_similarity_and_attention_mask_as_torch():
    x = randn(3, 4).astype(np.float32)
    ours = F.cosine_similarity(mg.tensor(x).bfloat16(), mg.tensor(2 * x - 1).bfloat16())
    theirs = TF.cosine_similarity(torch.tensor(x).bfloat16(), torch.tensor(2 * x - 1).bfloat16())
    assert str(ours.dtype) == "torch.bfloat16"
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())
    mg.manual_seed(0)
    torch.manual_seed(0)
    attention = nn.MultiheadAttention(4, 2).bfloat16()
    reference = torch.nn.MultiheadAttention(4, 2).bfloat16()
    query, mask = randn(3, 1, 4).astype(np.float32), np.triu(np.full((3, 3), -np.inf), 1)
    out = attention(*[mg.tensor(query).bfloat16()] * 3,
                    attn_mask=mg.tensor(mask.astype(np.float32)).bfloat16())[0]
    expected = reference(*[torch.tensor(query).bfloat16()] * 3,
                         attn_mask=torch.tensor(mask.astype(np.float32)).bfloat16())[0]
    np.testing.assert_allclose(out.float().detach().numpy(),
                               expected.float().detach().numpy(), atol=0.05)
