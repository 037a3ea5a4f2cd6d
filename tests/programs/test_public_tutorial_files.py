"""More of PyTorch's own tutorials run as written (a deep Q-network, FGSM adversarial examples,
conv and batch norm fused by custom autograd.Functions, double backward through custom
Functions, "what is torch.nn really?", a spatial transformer network), once under PyTorch and
once here, the same text given either library's (torch, nn, F). Both runs seed the same
generator (ours is torch's), so the initial weights agree and are compared too; outputs,
gradients, gradcheck's answers, losses and the weights after the optimizer's steps must agree
to rounding: rtol 1e-9 in float64, float32 rounding in float32. The programs live beside this
file, in ``tutorial_programs_more.py``."""

import itertools
import warnings

import numpy as np
import pytest
from tutorial_programs_more import (deep_q_network, double_backward_functions, fgsm_attack,
                                    fused_conv_batch_norm, nn_really, spatial_transformer)

import microgradnorm as mg

torch = pytest.importorskip("torch")

from torch_compare import LIBRARIES  # noqa: E402
from test_public_vision_norm_files import assert_close, plain  # noqa: E402

# float32: torch's vectorised and blocked sums against NumPy's pairwise ones, through a few
# training steps
TOLERANCES = {"float64": (1e-9, 1e-12), "float32": (2e-5, 2e-6)}


def run_both(program, dtype):
    """``program`` under torch, then here, both with ``dtype`` the default."""
    results = {}
    previous = torch.get_default_dtype(), mg.get_default_dtype()
    try:
        torch.set_default_dtype(getattr(torch, dtype))
        mg.set_default_dtype(getattr(mg, dtype))
        for name in ("torch", "microgradnorm"):
            with warnings.catch_warnings():
                # torch's notes on affine_grid's align_corners default are not output
                warnings.simplefilter("ignore", UserWarning)
                results[name] = plain(program(*LIBRARIES[name]))
    finally:
        torch.set_default_dtype(previous[0])
        mg.set_default_dtype(previous[1])
    return results["microgradnorm"], results["torch"]


PROGRAMS = {"dqn": deep_q_network, "fgsm": fgsm_attack, "fused_conv_bn": fused_conv_batch_norm,
            "nn_really": nn_really, "spatial_transformer": spatial_transformer}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_tutorial_agrees_with_torch(name, dtype):
    ours, theirs = run_both(PROGRAMS[name], dtype)
    assert_close(ours, theirs, *TOLERANCES[dtype])


def test_double_backward_functions_agree_with_torch():
    # the tutorial's tensors are double whatever the default
    ours, theirs = run_both(double_backward_functions, "float32")
    assert_close(ours, theirs, *TOLERANCES["float64"])
    assert all(value is True for key, value in ours.items() if key.endswith("check"))


# ----- what the programs needed: torch.nn.grad, grid_sample's positions ----------------------
CONVOLUTIONS = {  # dims: (input shape, weight shape, stride, padding, dilation, groups)
    1: ((2, 4, 9), (6, 2, 3), 2, 1, 2, 2),
    2: ((2, 4, 7, 6), (6, 2, 3, 3), 2, 1, (1, 2), 2),
    3: ((1, 2, 5, 4, 5), (3, 2, 2, 3, 2), (1, 2, 1), 0, 1, 1),
}


@pytest.mark.parametrize("dims", CONVOLUTIONS)
def test_nn_grad_convolution_gradients_and_their_gradients_agree_with_torch(dims):
    in_shape, w_shape, stride, padding, dilation, groups = CONVOLUTIONS[dims]
    options = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    results = {}
    for name, (lib, _, F) in LIBRARIES.items():
        lib.manual_seed(5)
        x = lib.randn(*in_shape, dtype=lib.float64, requires_grad=True)
        w = lib.randn(*w_shape, dtype=lib.float64, requires_grad=True)
        out = getattr(F, f"conv{dims}d")(x, w, **options)
        g = lib.randn(*out.shape, dtype=lib.float64, requires_grad=True)
        grad_input = getattr(lib.nn.grad, f"conv{dims}d_input")(x.shape, w, g, **options)
        grad_weight = getattr(lib.nn.grad, f"conv{dims}d_weight")(x, w.shape, g, **options)
        # the backward of the convolution itself, and a second derivative through both
        by_backward = lib.autograd.grad(out, (x, w), g)
        (grad_input.sin().sum() + grad_weight.cos().sum()).backward()
        results[name] = plain([grad_input, grad_weight, list(by_backward), x.grad, w.grad,
                               g.grad])
    assert_close(results["microgradnorm"], results["torch"], *TOLERANCES["float64"])
    ours = results["microgradnorm"]
    assert_close(ours[:2], ours[2], *TOLERANCES["float64"])


def test_nn_grad_refuses_sizes_that_do_not_fit_with_torchs_error_class():
    for lib, _, _ in LIBRARIES.values():
        w, g = lib.ones(3, 2, 2, 2), lib.ones(1, 3, 3, 3)
        with pytest.raises(RuntimeError):
            lib.nn.grad.conv2d_input((1, 2, 4), w, g)          # 3 entries for a 2-d conv
        with pytest.raises(RuntimeError):
            lib.nn.grad.conv2d_weight(lib.ones(1, 2, 5, 5), w.shape, g)   # output is 4 x 4
    with mg.no_grad():
        assert not mg.nn.grad.conv2d_input((1, 2, 4, 4), mg.ones(3, 2, 2, 2, requires_grad=True),
                                           mg.ones(1, 3, 3, 3)).requires_grad


@pytest.mark.parametrize("mode, dtype", [("bilinear", "float64"), ("bilinear", "float32"),
                                         ("bicubic", "float64")])
def test_grid_sample_grid_gradient_on_pixel_centres_agrees_with_torch(mode, dtype):
    """The identity grid puts every position on a pixel's centre, a whole number or a rounding
    off it; which, decides the floor and so the grid's gradient (torch's CPU kernels round
    linspace's points and the position (x + 1)·size/2 - 1/2 once each, as fused
    multiply-adds)."""
    results = {}
    for name, (lib, _, F) in LIBRARIES.items():
        dt = getattr(lib, dtype)
        theta = lib.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=dt)
        x = lib.arange(28 * 27, dtype=dt).pow(2).reshape(1, 1, 28, 27) / 700
        grid = F.affine_grid(theta, (1, 1, 28, 27), align_corners=False).requires_grad_()
        out = F.grid_sample(x, grid, mode=mode, align_corners=False)
        out.sum().backward()
        results[name] = plain([grid, out, grid.grad])
    assert_close(results["microgradnorm"], results["torch"], *TOLERANCES[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_linspace_rounds_each_point_as_torch(dtype):
    # torch's kernel computes start + step·i (end - step·(n - 1 - i) past halfway) as one FMA
    for steps in (2, 7, 27, 28, 40, 101, 1000):
        for start, end in ((-1, 1), (-3.7, 11.3), (250, -4)):
            theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
            ours = mg.linspace(start, end, steps, dtype=getattr(mg, dtype)).numpy()
            assert ours.dtype == theirs.dtype and (ours == theirs).all(), (steps, start, end)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_of_many_points_and_its_corners_round_as_torch(dtype):
    # past 65536 points the float64 FMA runs in chunks; inf and NaN ends as plain arithmetic
    cases = [(-3.3, 7.1, 300001), (1e5, -2.5, 70001), (0.0, 1.0, 0), (2.5, 2.5, 1),
             (-1e38, 3e38, 9), (float("-inf"), 1.0, 5), (0.0, float("nan"), 4)]
    if dtype == "float64":
        cases.append((-1e300, 1e300, 9))              # the step overflows: inf, NaN points
    for start, end, steps in cases:
        theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
        ours = mg.linspace(start, end, steps, dtype=getattr(mg, dtype)).numpy()
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, theirs, err_msg=str((start, end, steps)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_on_the_identity_grid_in_every_mode_is_torchs(dtype, padding_mode):
    for mode, align_corners in itertools.product(("bilinear", "nearest", "bicubic"),
                                                 (False, True)):
        results = {}
        for name, (lib, _, F) in LIBRARIES.items():
            dt = getattr(lib, dtype)
            theta = lib.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=dt)
            x = (lib.arange(13 * 28, dtype=dt).pow(2).reshape(1, 1, 13, 28) / 99).requires_grad_()
            grid = F.affine_grid(theta, (1, 1, 13, 28), align_corners=align_corners)
            grid.requires_grad_()
            out = F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode,
                                align_corners=align_corners)
            out.sum().backward()
            results[name] = plain([out, x.grad, grid.grad])
        assert_close(results["microgradnorm"], results["torch"], *TOLERANCES[dtype])


def test_nn_grad_refuses_a_grad_output_of_another_dtype_as_torch():
    for lib in (torch, mg):
        with pytest.raises(RuntimeError):
            lib.nn.grad.conv2d_input((1, 1, 4, 4), lib.ones(1, 1, 2, 2),
                                     lib.ones(1, 1, 3, 3, dtype=lib.float64))
        with pytest.raises(RuntimeError):
            lib.nn.grad.conv2d_weight(lib.ones(1, 1, 4, 4), (1, 1, 2, 2),
                                      lib.ones(1, 1, 3, 3, dtype=lib.float64))
