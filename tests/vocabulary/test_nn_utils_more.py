"""The vision functions of ``F`` (vision.py: interpolate and Upsample, pad's reflect,
replicate and circular modes and the padding modules, pixel_shuffle), ``nn.utils``
(clip_grad_value_, get_total_norm, clip_grads_with_norm_, parameters_to_vector,
vector_to_parameters) and ``nn.init`` (dirac_, sparse_, orthogonal_, the deprecated names)
against PyTorch: values (interpolate's nearest modes bit for bit, its linear ones to a few
ulp), gradients of a
random upstream, errors, reprs, and torch's random draws for the same seed."""

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.nn.functional as F
from microgradnorm import nn
from torch_compare import check, pair, same, same_error

TF = torch.nn.functional


# ----- interpolate: torch's indices and weights, its values to a few ulp ----------------
def interpolation_cases(seed, count):
    """(shape, keywords) of random calls: every mode, size or scale_factor, both
    align_corners, outputs on both sides of torch's bilinear kernels' 128 threshold."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        mode = ["nearest", "nearest-exact", "linear", "bilinear"][i % 4]
        dims = 1 if mode == "linear" else int(rng.integers(1, 3)) if "nearest" in mode else 2
        big = i % 8 >= 6                              # out_h + out_w > 128: the generic kernel
        sides = tuple(int(n) for n in rng.integers(2, 70 if big else 9, dims))
        channels = int(rng.choice([1, 2, 3, 4, 5, 9]))
        keywords = {"mode": mode}
        if mode in ("linear", "bilinear"):
            keywords["align_corners"] = bool(rng.integers(2))
        if rng.integers(2):
            keywords["size"] = tuple(int(n) for n in rng.integers(1, 140 if big else 12, dims))
        else:
            scales = [float(s) for s in rng.choice([0.5, 1.0, 1.5, 1.7, 2.0, 2.5, 3.0], dims)]
            if any(int(n * s) == 0 for n, s in zip(sides, scales)):
                continue
            keywords["scale_factor"] = scales[0] if rng.integers(2) else tuple(scales)
            if rng.integers(4) == 0:
                keywords["recompute_scale_factor"] = True
        yield (int(rng.integers(1, 3)), channels) + sides, keywords


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_interpolate_gives_torchs_values(dtype):
    # nearest copies exactly; linear sums the same two products per dim as torch's kernels
    # (one wrong source index or weight is off by the data's scale, not by an ulp)
    for shape, keywords in interpolation_cases(0, 40):
        data = (3 * np.random.default_rng(1).standard_normal(shape)).astype(dtype)
        got = F.interpolate(mg.tensor(data), **keywords)
        want = TF.interpolate(torch.tensor(data), **keywords)
        assert got.dtype == np.dtype(dtype)
        ulps = 0 if "nearest" in keywords["mode"] else 4
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0,
                                   atol=ulps * np.finfo(dtype).eps * np.abs(data).max(),
                                   err_msg=f"{shape} {keywords}")


def test_interpolate_gradients_match_torch():
    for shape, keywords in interpolation_cases(2, 16):
        x, xt = pair(np.random.default_rng(3).standard_normal(shape))
        check(F.interpolate(x, **keywords), TF.interpolate(xt, **keywords), [(x, xt)])


def test_interpolate_area_nearest_3d_and_uint8_as_torch():
    data = np.random.default_rng(5).standard_normal((2, 3, 7, 9))
    for size in [(3, 4), (7, 9), (10, 2)]:
        x, xt = pair(data)
        check(F.interpolate(x, size=size, mode="area"), TF.interpolate(xt, size=size,
                                                                       mode="area"), [(x, xt)])
    x, xt = pair(data[:, :, 0])
    check(F.interpolate(x, scale_factor=0.5, mode="area"),
          TF.interpolate(xt, scale_factor=0.5, mode="area"), [(x, xt)])
    x, xt = pair(np.random.default_rng(6).standard_normal((1, 2, 3, 4, 5)))
    check(F.interpolate(x, scale_factor=(2, 0.5, 1.5)),
          TF.interpolate(xt, scale_factor=(2, 0.5, 1.5)), [(x, xt)])
    image = np.arange(12, dtype=np.uint8).reshape(1, 1, 3, 4)
    same(lambda: F.interpolate(mg.tensor(image), size=(5, 7)),
         lambda: TF.interpolate(torch.tensor(image), size=(5, 7)))
    empty = np.ones((0, 2, 3, 3))
    same(lambda: F.interpolate(mg.tensor(empty), scale_factor=2, mode="bilinear"),
         lambda: TF.interpolate(torch.tensor(empty), scale_factor=2, mode="bilinear"))


def test_interpolate_errors_as_torch():
    x4, x3 = np.ones((1, 2, 3, 4)), np.ones((1, 2, 5))
    calls = [
        (x4, {"size": 4, "scale_factor": 2}), (x4, {}),
        (x4, {"scale_factor": 2, "align_corners": False}),
        (x4, {"scale_factor": 2, "mode": "linear"}), (x3, {"scale_factor": 2, "mode": "bilinear"}),
        (x3, {"scale_factor": 2, "mode": "foo"}), (x4, {"size": (2, 3, 4)}),
        (x4, {"scale_factor": (2.0, 3.0, 4.0)}), (np.ones((2, 3)), {"scale_factor": 2}),
        (x4, {"size": (0, 3)}), (x4, {"scale_factor": 0.1}), (np.ones((1, 0, 2, 2)), {"size": 3}),
        (x4, {"scale_factor": 0.5, "antialias": True}), (x4, {"size": 3.0}),
        (x4, {"size": 3, "recompute_scale_factor": True}),
        (x4.astype(np.int64), {"scale_factor": 2}),
        (x4.astype(np.int64), {"scale_factor": 2, "mode": "bilinear"}),
        (x4.astype(bool), {"scale_factor": 2}),
    ]
    for data, keywords in calls:
        same_error(lambda d=data, k=keywords: F.interpolate(mg.tensor(d), **k),
                   lambda d=data, k=keywords: TF.interpolate(torch.tensor(d), **k))


# torch's 2-D nearest forward takes the out = in and out = 2·in shortcuts, its 1-D and 3-D
# forward read the scale's index (2.2 on 3 positions: [0, 0, 0, 1, 1, 2], not j >> 1), and its
# backward takes the shortcuts in every dimensionality
NEAREST_SCALES = [((2, 3, 3), 2.2), ((1, 2, 3), 1.3), ((1, 1, 5), 2.1), ((1, 2, 4), 2.0),
                  ((1, 2, 1, 3, 3), (1, 1.3, 1)), ((1, 1, 2, 3, 4), (2.2, 1.3, 2.4)),
                  ((1, 2, 3, 3), (2.2, 1.3)), ((2, 1, 3, 4), (1.3, 2.4))]


@pytest.mark.parametrize(("shape", "scale"), NEAREST_SCALES)
def test_interpolate_nearest_reads_torchs_indices_and_gives_torchs_gradient(shape, scale):
    data = np.random.default_rng(12).standard_normal(shape)
    x, xt = pair(data)
    check(F.interpolate(x, scale_factor=scale), TF.interpolate(xt, scale_factor=scale),
          [(x, xt)])
    image = np.arange(data.size, dtype=np.uint8).reshape(shape)
    same(lambda: F.interpolate(mg.tensor(image), scale_factor=scale),
         lambda: TF.interpolate(torch.tensor(image), scale_factor=scale))


def linear_gradients(lib, functional, data, upstream, **keywords):
    x = lib.tensor(data, requires_grad=True)
    functional.interpolate(x, **keywords).backward(lib.tensor(upstream))
    return x.grad.numpy()


def test_linear_interpolation_sends_an_inf_or_nan_upstream_to_two_neighbours_as_torch():
    # each output adds w0·g to i0 and w1·g to i1, a zero weight times inf or NaN included; a
    # dense transposed matrix would smear it over the whole row
    nan_at_corner = np.zeros((1, 1, 4, 6), np.float32)
    nan_at_corner[0, 0, 0, 0] = np.nan
    inf_first = np.array([[[np.inf, 0.0, 0.0, 0.0, 0.0, 0.0]]])
    cases = [(np.ones((1, 1, 2, 3), np.float32), nan_at_corner,
              {"scale_factor": 2, "mode": "bilinear"}),
             (np.ones((1, 1, 3)), inf_first, {"scale_factor": 2, "mode": "linear"})]
    rng = np.random.default_rng(13)
    for i in range(24):
        mode = ("linear", "bilinear")[i % 2]
        sides = tuple(int(n) for n in rng.integers(1, 6, 1 + i % 2))
        keywords = {"mode": mode, "align_corners": bool(i % 4 >= 2),
                    "size": tuple(int(n) for n in rng.integers(1, 9, len(sides)))}
        upstream = rng.standard_normal((2, 2) + keywords["size"])
        upstream[tuple(int(rng.integers(n)) for n in upstream.shape)] = (np.nan, np.inf,
                                                                          -np.inf)[i % 3]
        cases.append((rng.standard_normal((2, 2) + sides), upstream, keywords))
    for data, upstream, keywords in cases:
        got = linear_gradients(mg, F, data, upstream, **keywords)
        want = linear_gradients(torch, TF, data, upstream, **keywords)
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{data.shape} {keywords}")


def test_upsample_modules_print_and_compute_as_torchs():
    data = np.random.default_rng(7).standard_normal((2, 2, 3, 5))
    for build in [lambda m: m.Upsample(scale_factor=2),
                  lambda m: m.Upsample(size=(4, 7), mode="bilinear"),
                  lambda m: m.Upsample(scale_factor=(2, 1.5), mode="bilinear",
                                       align_corners=True),
                  lambda m: m.Upsample(size=6, mode="nearest-exact"),
                  lambda m: m.UpsamplingNearest2d(scale_factor=3),
                  lambda m: m.UpsamplingBilinear2d(size=(5, 4))]:
        ours, theirs = build(nn), build(torch.nn)
        assert repr(ours) == repr(theirs)
        assert ours.scale_factor == theirs.scale_factor
        x, xt = pair(data)
        check(ours(x), theirs(xt), [(x, xt)])
    for name in ("upsample", "upsample_nearest", "upsample_bilinear"):
        with pytest.warns(UserWarning, match="deprecated"):
            got = getattr(F, name)(mg.tensor(data), scale_factor=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(TF, name)(torch.tensor(data), scale_factor=2)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=1e-15)


# ----- pad: reflect, replicate, circular ------------------------------------------------------
PADS = [((3, 5), (1, 2)), ((2, 3, 5), (2, 4)), ((2, 3, 5), (-1, 2)), ((2, 3, 5), (-3, 1)),
        ((2, 3, 4), (1, 0, 2, 1)), ((2, 3, 4, 5), (3, 1, 1, 2)), ((2, 3, 4, 5), (0, -1, 2, 1)),
        ((2, 3, 4, 5), (1, 1, 1, 1, 1, 0)), ((1, 2, 3, 4, 5), (2, 1, 0, 3, 1, 2)),
        ((0, 3, 5), (2, 2))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes_match_torch(mode):
    rng = np.random.default_rng(8)
    for shape, amounts in PADS:
        if mode == "circular" and amounts == (-3, 1):
            continue                          # torch reads past its input there
        data = rng.standard_normal(shape)
        x, xt = pair(data)
        check(F.pad(x, amounts, mode=mode), TF.pad(xt, amounts, mode=mode), [(x, xt)])
        same(lambda d=data, a=amounts: F.pad(mg.tensor(d.astype(np.int64)), a, mode=mode),
             lambda d=data, a=amounts: TF.pad(torch.tensor(d.astype(np.int64)), a, mode=mode))
    x, xt = pair(rng.standard_normal((2, 3, 5)))
    check(F.pad(x, (1, 1), mode, 0.0), TF.pad(xt, (1, 1), mode, 0.0), [(x, xt)])


CONSTANT_PADS = PADS[:-1] + [((2, 3, 5), (-2, -3)), ((4,), (0, 0)), ((2, 3), (3, -3, 1, 0)),
                             ((2, 3, 4, 5), (1, 1, -1, -1, 2, 0, 0, 1))]


@pytest.mark.parametrize("shape, amounts", CONSTANT_PADS)
def test_constant_pad_is_one_node_with_torchs_values_and_gradients(shape, amounts):
    """F.pad's constant mode (pads, crops, both at once, every dim): one
    ConstantPadNdBackward0 node as torch's, its values, its gradient; and a second
    derivative through it (the gradient is the same pad negated, again one node)."""
    data = np.random.default_rng(9).standard_normal(shape)
    x, xt = pair(data)
    mine, theirs = F.pad(x, amounts, value=0.25), TF.pad(xt, amounts, value=0.25)
    assert mine.grad_fn.name() == theirs.grad_fn.name() == "ConstantPadNdBackward0"
    check(mine, theirs, [(x, xt)])
    assert mg.autograd.gradgradcheck(lambda t: F.pad(t, amounts, value=1.5) ** 2,
                                     (mg.tensor(data, requires_grad=True),))


def test_pad_errors_as_torch():
    x3 = np.arange(6.0).reshape(1, 2, 3)
    calls = [(np.arange(3.0), (1, 1), "reflect"), (x3, (3, 0), "reflect"),
             (x3, (4, 0), "circular"), (x3, (1, 1, 1, 1, 1, 1), "replicate"),
             (np.ones((1, 1, 3, 4)), (1, 1), "reflect"), (x3.astype(bool), (1, 1), "reflect"),
             (np.ones((1, 2, 0)), (1, 1), "replicate"), (np.ones((1, 0, 3)), (1, 1), "reflect"),
             (x3, (1, 1), "foo"), (x3, (1,), "reflect"), (x3, (1,) * 8, "constant")]
    for data, amounts, mode in calls:
        same_error(lambda d=data, a=amounts, m=mode: F.pad(mg.tensor(d), a, m),
                   lambda d=data, a=amounts, m=mode: TF.pad(torch.tensor(d), a, m))
    same_error(lambda: F.pad(mg.tensor(x3), (1, 1), "reflect", 1.0),
               lambda: TF.pad(torch.tensor(x3), (1, 1), "reflect", 1.0))
    for value in (None, 2.7):                         # constant: an integer input stays so
        same(lambda v=value: F.pad(mg.tensor(x3.astype(np.int64)), (1, 2), value=v),
             lambda v=value: TF.pad(torch.tensor(x3.astype(np.int64)), (1, 2), value=v))
    same(lambda: F.pad(mg.tensor(x3.astype(bool)), (1, 1), "circular"),
         lambda: TF.pad(torch.tensor(x3.astype(bool)), (1, 1), "circular"))


def test_circular_padding_refuses_to_wrap_a_dim_cropped_to_nothing():
    # torch reads memory past its input there; a zero-length remainder is no period to wrap
    data = mg.tensor(np.arange(10.0).reshape(2, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for amounts in [(-5, 1), (1, -5), (-4, 2)]:
            with pytest.raises(RuntimeError, match="wraps around"):
                F.pad(data, amounts, "circular")


PADDING_MODULES = [
    lambda m: m.ZeroPad1d(2), lambda m: m.ZeroPad2d((1, 2, 0, 1)), lambda m: m.ZeroPad3d(1),
    lambda m: m.ConstantPad1d(2, 3.5), lambda m: m.ConstantPad2d((1, 0, 2, 1), -1.0),
    lambda m: m.ConstantPad3d(1, 2), lambda m: m.ReflectionPad1d((2, 1)),
    lambda m: m.ReflectionPad2d(1), lambda m: m.ReflectionPad3d((1, 0, 1, 1, 0, 1)),
    lambda m: m.ReplicationPad1d((1, 3)), lambda m: m.ReplicationPad2d(2),
    lambda m: m.ReplicationPad3d(1), lambda m: m.CircularPad1d(2),
    lambda m: m.CircularPad2d((1, 2, 2, 1)), lambda m: m.CircularPad3d(1),
]


@pytest.mark.parametrize("build", PADDING_MODULES, ids=lambda b: repr(b(torch.nn)))
def test_padding_modules_print_and_compute_as_torchs(build):
    ours, theirs = build(nn), build(torch.nn)
    assert repr(ours) == repr(theirs)
    dims = len(theirs.padding) // 2
    x, xt = pair(np.random.default_rng(9).standard_normal((2, 3, 4, 5, 3)[:dims + 2]))
    check(ours(x), theirs(xt), [(x, xt)])
    if isinstance(theirs, torch.nn.modules.padding._CircularPadNd):
        same_error(lambda: ours(mg.ones(*(3,) * (dims + 3))),
                   lambda: theirs(torch.ones(*(3,) * (dims + 3))))


# ----- pixel_shuffle ------------------------------------------------------------------------
def test_pixel_shuffle_and_unshuffle_match_torch():
    rng = np.random.default_rng(10)
    for shape, r in [((1, 8, 2, 3), 2), ((4, 2, 3), 2), ((2, 2, 18, 1, 2), 3)]:
        x, xt = pair(rng.standard_normal(shape))
        check(F.pixel_shuffle(x, r), TF.pixel_shuffle(xt, r), [(x, xt)])
    same(lambda: F.pixel_shuffle(mg.ones(0, 4, 1, 1), 2),   # (torch's backward fails there)
         lambda: TF.pixel_shuffle(torch.ones(0, 4, 1, 1), 2))
    for shape, r in [((1, 2, 4, 6), 2), ((3, 6, 3), 3), ((2, 1, 2, 4, 2), 2)]:
        x, xt = pair(rng.standard_normal(shape))
        check(F.pixel_unshuffle(x, r), TF.pixel_unshuffle(xt, r), [(x, xt)])
    same(lambda: F.pixel_shuffle(mg.tensor(np.arange(8).reshape(1, 8, 1, 1)), 2),
         lambda: TF.pixel_shuffle(torch.tensor(np.arange(8).reshape(1, 8, 1, 1)), 2))
    for fn, data, r in [("pixel_shuffle", np.ones((1, 6, 1, 1)), 2),
                        ("pixel_shuffle", np.ones((6, 1)), 2),
                        ("pixel_shuffle", np.ones((1, 8, 1, 1)), 0),
                        ("pixel_shuffle", np.ones((1, 8, 1, 1)), 2.0),
                        ("pixel_unshuffle", np.ones((1, 1, 3, 4)), 2),
                        ("pixel_unshuffle", np.ones((1, 1, 4, 3)), 2),
                        ("pixel_unshuffle", np.ones((1, 1, 4, 4)), -1)]:
        same_error(lambda f=fn, d=data, k=r: getattr(F, f)(mg.tensor(d), k),
                   lambda f=fn, d=data, k=r: getattr(TF, f)(torch.tensor(d), k))
    for build in [lambda m: m.PixelShuffle(3), lambda m: m.PixelUnshuffle(2)]:
        assert repr(build(nn)) == repr(build(torch.nn))
    np.testing.assert_array_equal(nn.PixelUnshuffle(2)(nn.PixelShuffle(2)(
        mg.tensor(np.arange(16.0).reshape(1, 4, 2, 2)))).numpy(),
        np.arange(16.0).reshape(1, 4, 2, 2))


# ----- nn.utils -------------------------------------------------------------------------
def parameters_with_grads(dtype="float32", nan=False):
    """Three parameters of each library with the same gradients (one without)."""
    rng = np.random.default_rng(11)
    shapes, ours, theirs = [(3, 4), (5,), (2, 2)], [], []
    for i, shape in enumerate(shapes):
        data, grad = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape)
        if nan and i == 1:
            grad[2] = np.nan
        ours.append(nn.Parameter(mg.tensor(data)))
        theirs.append(torch.nn.Parameter(torch.tensor(data)))
        if i < 2:
            ours[-1].grad = mg.tensor((grad * 3).astype(dtype))
            theirs[-1].grad = torch.tensor((grad * 3).astype(dtype))
    return ours, theirs


def assert_same_grads(ours, theirs):
    for a, b in zip(ours, theirs):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_clip_grad_value_clamps_in_place_as_torch():
    for clip in (0.5, 2, -0.5):
        ours, theirs = parameters_with_grads(nan=True)
        assert nn.utils.clip_grad_value_(ours, clip) is None
        torch.nn.utils.clip_grad_value_(theirs, clip)
        assert_same_grads(ours, theirs)
    ours, theirs = parameters_with_grads()
    nn.utils.clip_grad_value_(ours[0], 0.1, foreach=True)          # one tensor
    torch.nn.utils.clip_grad_value_(theirs[0], 0.1)
    assert_same_grads(ours, theirs)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3, np.inf, 0.0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_total_norm_and_clipping_by_it_match_torch(norm_type, dtype):
    ours, theirs = parameters_with_grads(dtype)
    got = nn.utils.get_total_norm([p.grad for p in ours if p.grad is not None], norm_type)
    want = torch.nn.utils.get_total_norm([p.grad for p in theirs if p.grad is not None],
                                         norm_type)
    assert got.dtype == np.dtype(dtype) and got.shape == ()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert nn.utils.clip_grads_with_norm_(ours, 1.5, mg.tensor(want.numpy())) is None
    torch.nn.utils.clip_grads_with_norm_(theirs, 1.5, want)
    assert_same_grads(ours, theirs)                 # the scale computed as torch's, exactly
    ours, theirs = parameters_with_grads(dtype)
    got = nn.utils.clip_grad_norm_(iter(ours), 2.0, norm_type, foreach=None)
    want = torch.nn.utils.clip_grad_norm_(iter(theirs), 2.0, norm_type)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    for a, b in zip(ours, theirs):
        if a.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6)


def test_total_norm_corners_as_torch():
    same(lambda: nn.utils.get_total_norm([]), lambda: torch.nn.utils.get_total_norm([]))
    nan = [mg.tensor([1.0, np.nan])]
    same_error(lambda: nn.utils.get_total_norm(nan, error_if_nonfinite=True),
               lambda: torch.nn.utils.get_total_norm([torch.tensor([1.0, np.nan])],
                                                     error_if_nonfinite=True))
    ours, theirs = parameters_with_grads(nan=True)
    nn.utils.clip_grads_with_norm_(ours, 1.0, mg.tensor(np.float32(np.inf)))
    torch.nn.utils.clip_grads_with_norm_(theirs, 1.0, torch.tensor(np.float32(np.inf)))
    assert_same_grads(ours, theirs)
    with pytest.warns(UserWarning, match="empty generator"):
        nn.utils.clip_grad_norm_((p for p in []), 1.0)


def test_norm_type_may_be_a_string_as_torch():
    grads, grads_t = [mg.tensor([3.0, -4.0])], [torch.tensor([3.0, -4.0])]
    for norm_type in ("inf", "-inf", "2", " 1.5 "):       # float() reads it, as torch's
        ours, theirs = parameters_with_grads()
        got = nn.utils.clip_grad_norm_(ours, 1.0, norm_type)
        want = torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        for a, b in zip(ours, theirs):
            if a.grad is not None:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6)
        same(lambda n=norm_type: nn.utils.get_total_norm(grads, n),
             lambda n=norm_type: torch.nn.utils.get_total_norm(grads_t, n))
    ours, theirs = parameters_with_grads()
    same_error(lambda: nn.utils.clip_grad_norm_(ours, 1.0, "two"),
               lambda: torch.nn.utils.clip_grad_norm_(theirs, 1.0, "two"))
    same_error(lambda: nn.utils.get_total_norm([mg.ones(2)], None),
               lambda: torch.nn.utils.get_total_norm([torch.ones(2)], None))


def test_parameters_to_vector_and_back_as_torch():
    ours, theirs = parameters_with_grads("float64")
    vec, vec_t = nn.utils.parameters_to_vector(ours), torch.nn.utils.parameters_to_vector(theirs)
    check(vec, vec_t, [(p, q) for p, q in zip(ours, theirs)])
    new = np.arange(vec.numel(), dtype=np.float64)
    target, target_t = mg.tensor(new), torch.tensor(new)
    assert nn.utils.vector_to_parameters(target, ours) is None
    torch.nn.utils.vector_to_parameters(target_t, theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    target[0] = -5.0                                   # the parameters view the vector
    assert ours[0].detach().numpy()[0, 0] == -5.0
    same_error(lambda: nn.utils.vector_to_parameters(new, ours),
               lambda: torch.nn.utils.vector_to_parameters(new, theirs))
    model = nn.Linear(3, 2)
    assert nn.utils.parameters_to_vector(model.parameters()).shape == (8,)
    same_error(lambda: nn.utils.parameters_to_vector([]),
               lambda: torch.nn.utils.parameters_to_vector([]))


# ----- nn.init --------------------------------------------------------------------------
def test_dirac_and_eye_fill_as_torch():
    for shape, groups in [((4, 2, 3), 2), ((3, 5, 3, 3), 1), ((6, 2, 3, 2, 4), 3),
                          ((2, 4, 5), 1)]:
        got = nn.init.dirac_(mg.empty(*shape), groups)
        np.testing.assert_array_equal(got.numpy(), torch.nn.init.dirac_(torch.empty(*shape),
                                                                        groups).numpy())
    for shape, groups in [((2, 3), 1), ((3, 3, 3), 2)]:
        same_error(lambda s=shape, g=groups: nn.init.dirac_(mg.empty(*s), g),
                   lambda s=shape, g=groups: torch.nn.init.dirac_(torch.empty(*s), g))
    np.testing.assert_array_equal(nn.init.eye_(mg.empty(2, 3)).numpy(),
                                  torch.nn.init.eye_(torch.empty(2, 3)).numpy())
    same_error(lambda: nn.init.eye_(mg.empty(2, 3, 4)),
               lambda: torch.nn.init.eye_(torch.empty(2, 3, 4)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_and_orthogonal_draw_torchs_values_for_the_same_seed(dtype):
    torch_dtype = getattr(torch, dtype)
    for shape, sparsity in [((6, 4), 0.4), ((5, 3), 0.0), ((3, 7), 1.0)]:
        mg.manual_seed(4)
        torch.manual_seed(4)
        got = nn.init.sparse_(mg.empty(*shape, dtype=dtype), sparsity, std=0.5)
        want = torch.nn.init.sparse_(torch.empty(*shape, dtype=torch_dtype), sparsity, std=0.5)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = nn.init.sparse_(mg.empty(4, 3, dtype=dtype), 0.5, generator=mg.Generator()
                          .manual_seed(2))
    want = torch.nn.init.sparse_(torch.empty(4, 3, dtype=torch_dtype), 0.5,
                                 generator=torch.Generator().manual_seed(2))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    for shape, gain in [((5, 3), 1.0), ((3, 5), 2.0), ((4, 2, 3), 0.5), ((4, 4), 1.0)]:
        mg.manual_seed(9)
        torch.manual_seed(9)
        got = nn.init.orthogonal_(mg.empty(*shape, dtype=dtype), gain)
        want = torch.nn.init.orthogonal_(torch.empty(*shape, dtype=torch_dtype), gain)
        np.testing.assert_allclose(got.numpy(), want.numpy(),     # LAPACK's QR, to rounding
                                   atol=1e-6 if dtype == "float32" else 1e-13)
    same_error(lambda: nn.init.sparse_(mg.empty(2, 3, 4), 0.1),
               lambda: torch.nn.init.sparse_(torch.empty(2, 3, 4), 0.1))


def test_deprecated_init_names_warn_and_fill_as_torch():
    for name, args in [("uniform", (-1.0, 2.0)), ("normal", (0.5, 2.0)), ("constant", (0.3,)),
                       ("xavier_uniform", ()), ("xavier_normal", ()), ("kaiming_uniform", ()),
                       ("kaiming_normal", ()), ("orthogonal", ()), ("sparse", (0.5,)),
                       ("eye", ()), ("dirac", ())]:
        shape = (3, 2, 3) if name == "dirac" else (4, 3)
        mg.manual_seed(6)
        torch.manual_seed(6)
        with pytest.warns(FutureWarning) as record:
            got = getattr(nn.init, name)(mg.empty(*shape, dtype="float64"), *args)
        with warnings.catch_warnings(record=True) as theirs_record:
            warnings.simplefilter("always")
            want = getattr(torch.nn.init, name)(torch.empty(*shape, dtype=torch.float64), *args)
        assert str(record[0].message) == str(theirs_record[0].message)
        assert record[0].filename == __file__                 # the caller's line, as torch's
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-13)
        assert getattr(nn.init, name).__name__ == name
