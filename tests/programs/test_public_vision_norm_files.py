"""Vision and diffusion model files built around their normalization (a ConvNeXt with its
channels-first LayerNorm and stochastic depth, a timm-style vision transformer, a diffusion
UNet of GroupNorm residual and attention blocks trained on a DDPM schedule, a ResNet fused
conv-into-BN for inference), written in the idioms of their public implementations and run
twice: under PyTorch, then here from PyTorch's initial weights (copied across through
``load_state_dict``), the same text given either library. Forward outputs, gradients and the
weights after the optimizer's steps must agree to rounding: rtol 1e-9 in float64, float32
rounding in float32. The seeded initial weights are compared too (the generator is torch's).
The programs live beside this file, in ``vision_norm_programs.py``."""

import itertools
import warnings

import numpy as np
import pytest
from vision_norm_programs import convnext, diffusion_unet, resnet_fused, vision_transformer

import microgradnorm as mg

torch = pytest.importorskip("torch")

from torch_compare import LIBRARIES  # noqa: E402

TOLERANCES = {"float64": (1e-9, 1e-12), "float32": (2e-5, 2e-6)}


def plain(value):
    """Tensors as (dtype name, float64 array), containers walked; NumPy arrays as theirs."""
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        return (str(value.dtype).replace("torch.", ""),
                np.asarray(value.detach().numpy(), dtype=np.float64))
    if isinstance(value, np.ndarray):
        return str(value.dtype), value.astype(np.float64)
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def assert_close(got, expected, rtol, atol, where="result"):
    """``got`` against ``expected``: arrays by shape, then elementwise within rtol/atol (NaN
    matching NaN), numbers the same way, anything else exactly; ``where`` names the item."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and list(got) == list(expected), (where, got, expected)
        for key in expected:
            assert_close(got[key], expected[key], rtol, atol, f"{where}[{key!r}]")
    elif isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray) and got.shape == expected.shape, (where, got)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(expected, (list, tuple)):
        assert isinstance(got, type(expected)) and len(got) == len(expected), (where, got)
        for index, (ours, theirs) in enumerate(zip(got, expected)):
            assert_close(ours, theirs, rtol, atol, f"{where}[{index}]")
    elif isinstance(expected, float):
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=where)
    else:
        assert got == expected, (where, got, expected)


def run_both(program, dtype, **options):
    """``program`` under torch, then here from torch's initial weights, in ``dtype``."""
    results = {}
    previous = torch.get_default_dtype(), mg.get_default_dtype()
    try:
        torch.set_default_dtype(getattr(torch, dtype))
        mg.set_default_dtype(getattr(mg, dtype))
        weights = None
        for name in ("torch", "microgradnorm"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                results[name] = program(*LIBRARIES[name], weights=weights, **options)
            weights = results["torch"]["init"]
    finally:
        torch.set_default_dtype(previous[0])
        mg.set_default_dtype(previous[1])
    return plain(results["microgradnorm"]), plain(results["torch"])


CASES = {
    "convnext": (convnext, {}),
    "vit_fused_attention": (vision_transformer, {}),
    "vit_explicit_attention": (vision_transformer, {"fused_attn": False}),
    "resnet_fused": (resnet_fused, {}),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES)
def test_program_agrees_with_torch(case, dtype):
    program, options = CASES[case]
    ours, theirs = run_both(program, dtype, **options)
    assert_close(ours, theirs, *TOLERANCES[dtype])


def test_diffusion_unet_agrees_with_torch():
    # the UNet's habits compute in float32 (GroupNorm32's `.float()`, the float32 timestep
    # frequencies and buffers), so it runs as the files run it: in float32
    ours, theirs = run_both(diffusion_unet, "float32")
    assert_close(ours, theirs, *TOLERANCES["float32"])


# ----- torch._foreach_*: the list ops of EMA and gradient-norm code -------------------------
def weights(lib, scale=1.0):
    rng = np.random.default_rng(7)
    return [lib.tensor(rng.uniform(0.2, 0.9, shape) * scale) for shape in ((2, 3), (4,), ())]


def second_operands(lib):
    """What a binary _foreach_ op takes besides its list: a number, a 0-d Tensor, a list of
    numbers, a list of Tensors."""
    return {"number": 0.6, "0-d tensor": lib.tensor(0.4, dtype=lib.float64),
            "numbers": [0.3, 0.5, 0.7], "tensors": weights(lib, 0.5)}


def foreach_calls(lib):
    """name -> a call of lib's _foreach_ function of that name on fresh lists."""
    calls = {}
    for op in ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp",
               "expm1", "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg",
               "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan",
               "tanh", "trunc", "zero_", "clone", "max", "norm"):
        for name in {f"_foreach_{op}", f"_foreach_{op}_"}:
            if hasattr(torch, name):
                calls[name] = lambda name=name: getattr(lib, name)(weights(lib))
    for op in ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max",
               "pow"):
        for name in (f"_foreach_{op}", f"_foreach_{op}_"):
            for kind in second_operands(lib):
                calls[f"{name}({kind})"] = lambda name=name, kind=kind: getattr(lib, name)(
                    weights(lib), second_operands(lib)[kind])
    for name in ("_foreach_addcmul", "_foreach_addcdiv", "_foreach_lerp"):
        for suffix in ("", "_"):
            third = [0.3] + ([[0.1, 0.2, 0.3]] if name != "_foreach_lerp" else
                             [[0.1, 0.2, 0.3], weights(lib, 0.5)])
            for index, last in enumerate(third):
                extra = ((weights(lib, 2.0), last) if name == "_foreach_lerp" else
                         (weights(lib), weights(lib, 2.0), last))
                calls[f"{name}{suffix}[{index}]"] = (
                    lambda name=name + suffix, extra=extra: getattr(lib, name)(
                        weights(lib), *extra))
    calls.update({
        "_foreach_add(alpha)": lambda: lib._foreach_add(weights(lib), weights(lib), alpha=2),
        "_foreach_sub_(alpha)": lambda: lib._foreach_sub_(weights(lib), weights(lib, 3.0),
                                                          alpha=0.5),
        "_foreach_pow(number base)": lambda: lib._foreach_pow(2.0, weights(lib)),
        "_foreach_norm(inf)": lambda: lib._foreach_norm(weights(lib), float("inf")),
        "_foreach_norm(3, float64)": lambda: lib._foreach_norm(
            [w.float() for w in weights(lib)], 3, dtype=lib.float64),
        "_foreach_addcdiv(tensor of values)": lambda: lib._foreach_addcdiv(
            weights(lib), weights(lib), weights(lib, 2.0), lib.tensor([0.1, 0.2, 0.3])),
        "_foreach_copy_": lambda: lib._foreach_copy_(weights(lib), weights(lib, 2.0)),
        # refused as torch refuses: an empty list, lists of different lengths, a scalar list
        # of another length, what is not a list of Tensors, shapes that do not broadcast
        "empty": lambda: lib._foreach_add([], 1),
        "lengths": lambda: lib._foreach_add(weights(lib), weights(lib)[:2]),
        "scalar list length": lambda: lib._foreach_mul(weights(lib), [1.0]),
        "not a number": lambda: lib._foreach_add(weights(lib), "x"),
        "not a list": lambda: lib._foreach_add(weights(lib)[0], 1),
        "shapes": lambda: lib._foreach_add(weights(lib), weights(lib)[::-1]),
        # a Tensor for every tensor is a 0-d one; a list holds one kind; alpha goes with
        # Tensors; addcmul's Tensor of values is 1-D
        "1-d tensor for all": lambda: lib._foreach_add(weights(lib), lib.ones(1)),
        "numbers and tensors": lambda: lib._foreach_mul(weights(lib),
                                                        [2.0, lib.tensor(2.0), 1.0]),
        "alpha with a number": lambda: lib._foreach_add(weights(lib), 1.0, alpha=2),
        "alpha with numbers": lambda: lib._foreach_add(weights(lib), [1.0, 2, 3], alpha=2),
        "alpha with a 0-d tensor": lambda: lib._foreach_add(weights(lib), lib.tensor(0.5),
                                                            alpha=2),
        "0-d tensor of values": lambda: lib._foreach_addcmul(
            weights(lib), weights(lib), weights(lib), lib.tensor(0.5)),
        "in place, the second fails": lambda: lib._foreach_add_(
            weights(lib), [lib.ones(2, 3), lib.ones(5), lib.ones(())]),
    })
    return calls


def outcome(call):
    """What a call gave: its results as arrays (a tuple, or the list it wrote) or the class of
    its error."""
    try:
        result = call()
    except Exception as error:         # noqa: BLE001 (the class is what is compared)
        return type(error)
    return type(result).__name__, [np.asarray(t.detach().numpy()) for t in result]


def test_foreach_functions_agree_with_torch():
    ours, theirs = foreach_calls(mg), foreach_calls(torch)
    assert list(ours) == list(theirs)
    for name in theirs:
        expected, got = outcome(theirs[name]), outcome(ours[name])
        if isinstance(expected, type):          # torch's class, or a subclass of it
            assert isinstance(got, type) and issubclass(got, expected), (name, got, expected)
            continue
        assert not isinstance(got, type) and got[0] == expected[0], (name, got, expected)
        for a, b in zip(got[1], expected[1], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=name)


def test_foreach_in_place_returns_its_list_and_out_of_place_records_gradients():
    for lib in (torch, mg):
        params = weights(lib)
        assert lib._foreach_mul_(params, 2.0) is params
    found = []
    for lib in (torch, mg):
        params = [w.requires_grad_() for w in weights(lib)]
        scaled = lib._foreach_mul(params, [1.0, 2.0, 3.0])
        sum(s.sum() for s in lib._foreach_exp(scaled)).backward()
        found.append([p.grad.numpy() for p in params])
    for a, b in zip(*found):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_failed_in_place_call_has_written_the_tensors_before_the_failing_one():
    found = []
    for lib in (torch, mg):
        params = weights(lib)
        with pytest.raises(RuntimeError):
            lib._foreach_add_(params, [lib.ones(2, 3), lib.ones(5), lib.ones(())])
        found.append([p.numpy().copy() for p in params])
    for ours, theirs in zip(found[1], found[0], strict=True):
        np.testing.assert_array_equal(ours, theirs)


# ----- antialiased resizing (timm's position-table resampling, torchvision's Resize) -------
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialiased_interpolate_agrees_with_torch(mode):
    # downsampling (the filter widened by the scale), upsampling, by size and by scale
    # factor, both align_corners; the values and the gradient. (An output width of 1 is
    # left out: torch's kernel repeats its first row down the whole column there.)
    rng = np.random.default_rng(11)
    specs = ({"size": (2, 4)}, {"size": (5, 13)}, {"scale_factor": 0.37},
             {"scale_factor": (0.5, 1.7)}, {"size": (1, 3)})
    for dtype, align_corners, spec in itertools.product(("float64", "float32"),
                                                        (False, True), specs):
        x = rng.normal(size=(2, 3, 16, 9))
        results = []
        for lib in (torch, mg):
            t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            y = lib.nn.functional.interpolate(t, mode=mode, align_corners=align_corners,
                                              antialias=True, **spec)
            (y * y).sum().backward()
            results.append([y.detach().numpy(), t.grad.numpy()])
        rtol, atol = TOLERANCES[dtype]
        for ours, theirs in zip(results[1], results[0]):
            assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
            np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol * 10,
                                       err_msg=f"{dtype} {align_corners} {spec}")
