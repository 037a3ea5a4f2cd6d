"""Habits of public vision and generative-model code (vision transformers, diffusion models,
normalizing flows, older layer code), each as a short program run twice: under PyTorch and
here, the same text given either library (``torch``, ``nn``, ``F``); the two runs must agree
to rounding. The habits: a position embedding resized by bicubic interpolation (and volumes
by trilinear), parameters made by the legacy constructor ``torch.Tensor(out, in)`` and then
initialised, NumPy's argument names ``axis=`` / ``keepdims=`` given to torch functions
(``torch.cumprod(alphas, axis=0)`` in noise schedules), torch's constants (``torch.pi``) and
its annotation-only names (``torch.DeviceObjType``, ``torch.typename``)."""

import math

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

from torch_compare import under_both  # noqa: E402
from test_public_code_habits import assert_close as _assert_close  # noqa: E402


def plain(value):
    """Tensors as nested lists of floats (with their dtype's name and shape), containers
    walked, dtypes by name."""
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        array = np.asarray(value.detach().numpy(), dtype=np.float64)
        return [str(value.dtype).replace("torch.", ""), list(array.shape), array.tolist()]
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (torch.dtype, np.dtype, mg.dtype)):
        return str(value).replace("torch.", "")
    return value


def assert_close(got, expected, rtol=1e-5, atol=1e-6):
    """test_public_code_habits' comparison, at float32 training's tolerances."""
    _assert_close(got, expected, rtol, atol)


def run_both(program, *args):
    return under_both(program, plain, *args, ignore=UserWarning)


# ----- bicubic and trilinear resampling -------------------------------------------------
def resized_position_embedding(torch, nn, F):
    # a ViT trained on a 3x3 grid of patches run on 4x5: the patch part of its position
    # table resized as an image by bicubic interpolation, the class token's row kept
    torch.manual_seed(3)
    dim, side = 6, 3
    table = nn.Parameter(torch.randn(1, side * side + 1, dim) * 0.02)
    grid = table[:, 1:].reshape(1, side, side, dim).permute(0, 3, 1, 2)
    resized = F.interpolate(grid, scale_factor=((4 + 0.1) / side, (5 + 0.1) / side),
                            mode="bicubic")
    tokens = torch.cat((table[:, :1], resized.permute(0, 2, 3, 1).reshape(1, -1, dim)), dim=1)
    (tokens ** 2).sum().backward()
    return [tokens, table.grad, list(resized.shape)]


@pytest.mark.parametrize("mode, shape, kw", [
    ("bicubic", (2, 3, 5, 7), dict(scale_factor=2)),
    ("bicubic", (1, 2, 4, 4), dict(size=(3, 9), align_corners=True)),
    ("bicubic", (1, 2, 6, 2), dict(scale_factor=(0.5, 2.5))),
    ("bicubic", (1, 1, 1, 3), dict(size=(4, 1))),
    ("bicubic", (1, 2, 5, 6), dict(scale_factor=(1.7, 0.6), recompute_scale_factor=True)),
    ("trilinear", (1, 2, 3, 4, 5), dict(scale_factor=2)),
    ("trilinear", (1, 1, 4, 2, 3), dict(size=(2, 5, 3), align_corners=True)),
    ("trilinear", (2, 1, 3, 3, 3), dict(scale_factor=(1.5, 0.7, 2.0))),
])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_bicubic_and_trilinear_resample_as_torch_does(mode, shape, kw, dtype):
    def program(torch, nn, F):
        x = torch.tensor(np.random.default_rng(0).standard_normal(shape),
                         dtype=getattr(torch, dtype), requires_grad=True)
        y = F.interpolate(x, mode=mode, **kw)
        weights = torch.arange(y.numel(), dtype=y.dtype).reshape(y.shape) % 7 - 3
        (y * weights).sum().backward()
        return [y, x.grad] if dtype != "bfloat16" else [y.dtype, y.float(), x.grad.float()]
    expected, got = run_both(program)
    # bfloat16: within one of its ulps (2⁻⁷ relative), as torch's kernels round in other orders
    tolerance = {"float64": 1e-12, "float32": 1e-5, "bfloat16": 1e-2}[dtype]
    assert_close(got, expected, rtol=tolerance, atol=tolerance)


def test_a_resized_position_embedding_computes_as_under_pytorch():
    expected, got = run_both(resized_position_embedding)
    assert_close(got, expected)


# ----- the legacy constructor: torch.Tensor(sizes) and torch.Tensor(data) --------------------
def legacy_constructed_layer(torch, nn, F):
    # older layer code: parameters of torch.Tensor(out, in) / torch.Tensor(out), filled by
    # its own reset_parameters; constants from torch.Tensor(list), which is float
    class Affine(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.weight = nn.Parameter(torch.Tensor(n_out, n_in))
            self.bias = nn.Parameter(torch.Tensor(n_out))
            self.register_buffer("scale", torch.Tensor([2, 1, 1]))
            self.reset_parameters()

        def reset_parameters(self):
            nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            bound = 1 / math.sqrt(self.weight.size(1))
            nn.init.uniform_(self.bias, -bound, bound)

        def forward(self, x):
            return F.linear(x, self.weight, self.bias) * self.scale

    torch.manual_seed(5)
    layer = Affine(4, 3)
    x = torch.randn(2, 4)
    layer(x).pow(2).mean().backward()
    shapes = [list(torch.Tensor(*sizes).shape) for sizes in [(2, 3), (4,), (0,), ()]]
    return [layer.weight, layer.bias, layer.scale, layer.weight.grad, shapes,
            torch.Tensor(torch.Size([2, 1])).shape == (2, 1), torch.Tensor((3, 4)),
            torch.Tensor([[True, False]]), torch.Tensor([0.5, 1.5]).mean(),
            torch.tensor(3).dtype, torch.as_tensor(4).dtype]


def refused_legacy_sizes(torch, nn, F):
    outcomes = []
    for args in [(2, -1), (2, 2.5), ([1, 2], True)]:
        try:
            torch.Tensor(*args)
            outcomes.append("made")
        except (TypeError, RuntimeError) as error:
            outcomes.append(type(error).__name__)
    return outcomes


@pytest.mark.parametrize("program", [legacy_constructed_layer, refused_legacy_sizes])
def test_the_legacy_constructor_reads_sizes_and_float_data(program):
    expected, got = run_both(program)
    assert_close(got, expected)


# ----- NumPy's argument names: axis= for dim=, keepdims= for keepdim= ------------------------
def noise_schedule(torch, nn, F):
    # a diffusion model's cosine schedule, written with NumPy's habits
    steps = 8
    x = torch.linspace(0, steps, steps + 1)
    alphas_bar = torch.cos(((x / steps) + 0.008) / 1.008 * torch.pi * 0.5) ** 2
    betas = torch.clip(1 - alphas_bar[1:] / alphas_bar[:-1], 0.0001, 0.9999)
    alphas_cumprod = torch.cumprod(1.0 - betas, axis=0)
    previous = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
    t = torch.tensor([0, 3, 7])
    picked = alphas_cumprod.gather(-1, t).reshape(3, *((1,) * 3))
    return [betas, alphas_cumprod, previous, picked,
            alphas_cumprod.cumsum(axis=0), torch.logsumexp(betas, axis=0, keepdims=True)]


AXIS_CALLS = {
    "cumsum": lambda torch, x: torch.cumsum(x, axis=1),
    "cumprod method": lambda torch, x: x.cumprod(axis=0),
    "prod keepdims": lambda torch, x: torch.prod(x, axis=1, keepdims=True),
    "logsumexp": lambda torch, x: x.logsumexp(axis=-1, keepdims=True),
    "median": lambda torch, x: torch.median(x, axis=0, keepdims=True).values,
    "sort": lambda torch, x: torch.sort(x, axis=0, descending=True).values,
    "argsort": lambda torch, x: x.argsort(axis=1),
    "topk": lambda torch, x: torch.topk(x, 2, axis=0).indices,
    "cummax": lambda torch, x: torch.cummax(x, axis=1).values,
    "logcumsumexp": lambda torch, x: torch.logcumsumexp(x, axis=0),
    "nansum": lambda torch, x: torch.nansum(x, axis=1, keepdims=True),
    "gather": lambda torch, x: torch.gather(x, axis=1, index=torch.tensor([[1], [0], [2]])),
    "index_select": lambda torch, x: x.index_select(axis=0, index=torch.tensor([2, 0])),
    "unbind": lambda torch, x: torch.unbind(x, axis=1)[1],
    "diff": lambda torch, x: torch.diff(x, axis=0),
    "select": lambda torch, x: x.select(axis=1, index=2),
    "count_nonzero": lambda torch, x: torch.count_nonzero(x > 5, axis=0),
    "both spellings": lambda torch, x: torch.cumsum(x, dim=0, axis=0),
    "both spellings, wrapped": lambda torch, x: torch.median(x, 0, axis=0),
    "both keepdims": lambda torch, x: x.logsumexp(1, keepdim=True, keepdims=False),
    "both spellings, method": lambda torch, x: x.select(0, 1, axis=0),
    "narrow": lambda torch, x: x.narrow(axis=1, start=1, length=2),
    "narrow without length": lambda torch, x: x.narrow(axis=1, start=1),
    "scatter_add": lambda torch, x: x.scatter_add(axis=0, index=torch.tensor([[2, 0]]),
                                                  src=torch.ones(1, 2, dtype=x.dtype)),
}


@pytest.mark.parametrize("name", list(AXIS_CALLS))
def test_numpy_argument_names_reach_torch_functions(name):
    def program(torch, nn, F):
        x = torch.tensor(np.arange(1.0, 13.0).reshape(3, 4) % 5)
        try:
            return AXIS_CALLS[name](torch, x)
        except TypeError:
            return "TypeError"
    expected, got = run_both(program)
    assert_close(got, expected)


def test_a_schedule_written_with_numpy_names_computes_as_under_pytorch():
    expected, got = run_both(noise_schedule)
    assert_close(got, expected)


# ----- torch's constants and its names used in annotations ---------------------------------
def constants_and_annotations(torch, nn, F):
    def set_steps(steps: int, device: torch.DeviceObjType) -> int:
        return steps

    return [torch.pi, torch.e, torch.inf, torch.nan, set_steps(3, torch.device("cpu")),
            torch.typename(torch.zeros(2)), torch.typename(torch.zeros(2, dtype=torch.int64)),
            torch.typename(3), torch.typename(2.5)]


def test_constants_and_annotation_names_exist():
    expected, got = run_both(constants_and_annotations)
    assert_close(got, expected)


def test_the_comparison_can_fail():
    expected, _ = run_both(noise_schedule)
    changed = [expected[0][:2] + [np.add(expected[0][2], 1e-4).tolist()]] + expected[1:]
    with pytest.raises(AssertionError):
        assert_close(changed, expected)
