"""DyT (Dynamic Tanh) against its PyTorch twin, the formula in torch ops: values and every
gradient in float64 for both implementations, gradcheck, dtypes, bad input, 0-d and empty
x, saturation, the numba kernels against the reference, what the fused node saves, the nn
module, and a tiny GPT that trains with it. The registry's generic tests run DyT too; this
file holds what is particular to it."""

from pathlib import Path

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn
from microgradnorm.cli.main import main as cli_main
from microgradnorm.kernels import reference
from microgradnorm.train import TrainConfig, train_tiny_gpt

TOL = 1e-12
IMPLS = ("fused", "composite")
DERIVATIONS = Path(__file__).parents[2] / "docs" / "derivations.md"


def draw(shape, alpha_shape=(1,), weight=True, bias=True, seed=0):
    """{name: float64 array}: x spread wide enough to saturate some tanh, α, γ, β."""
    rng = np.random.default_rng(seed)
    arrays = {"x": 3 * rng.standard_normal(shape),
              "alpha": 0.5 + 0.3 * rng.standard_normal(alpha_shape)}
    if weight:
        arrays["weight"] = 1 + 0.5 * rng.standard_normal(shape[-1:])
    if bias:
        arrays["bias"] = 0.5 * rng.standard_normal(shape[-1:])
    return arrays


def ours(arrays, upstream, impl):
    """(y, {name: gradient}) of F.dyt."""
    t = {name: mg.tensor(a, requires_grad=True) for name, a in arrays.items()}
    y = F.dyt(t["x"], t["alpha"], t.get("weight"), t.get("bias"), impl=impl)
    grads = mg.grad([y], list(t.values()), [upstream])
    return y.detach().numpy(), {name: g.numpy() for name, g in zip(t, grads)}


def theirs(arrays, upstream):
    """(y, {name: gradient}) of γ·tanh(α·x) + β written in torch ops."""
    t = {name: torch.tensor(a, requires_grad=True) for name, a in arrays.items()}
    y = torch.tanh(t["alpha"] * t["x"])
    y = y * t["weight"] if "weight" in t else y
    y = y + t["bias"] if "bias" in t else y
    grads = torch.autograd.grad(y, list(t.values()), torch.tensor(upstream))
    return y.detach().numpy(), {name: g.numpy() for name, g in zip(t, grads)}


def scale(a):
    """max(1, max |a|): a sum's rounding grows with its terms."""
    return max(1.0, float(np.abs(a).max(initial=0)))


def assert_same(actual, expected, tol=TOL):
    (y, grads), (y_ref, grads_ref) = actual, expected
    assert y.shape == y_ref.shape and y.dtype == y_ref.dtype
    np.testing.assert_allclose(y, y_ref, rtol=0, atol=tol, equal_nan=True)
    for name, g in grads_ref.items():
        assert grads[name].shape == g.shape and grads[name].dtype == g.dtype, name
        np.testing.assert_allclose(grads[name], g, rtol=0, atol=tol * scale(g), equal_nan=True,
                                   err_msg=name)


# ----- values and gradients against PyTorch --------------------------------------------------
CASES = [((5, 8), (1,), True, True), ((2, 3, 4), (), True, True), ((7,), (1,), True, False),
         ((4, 6), (1,), False, True), ((3, 5), (), False, False), ((1, 1), (1,), True, True)]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape, alpha_shape, weight, bias", CASES, ids=str)
def test_matches_torch_formula_values_and_every_gradient(shape, alpha_shape, weight, bias,
                                                         impl):
    arrays = draw(shape, alpha_shape, weight, bias)
    upstream = np.random.default_rng(1).standard_normal(shape)
    assert_same(ours(arrays, upstream, impl), theirs(arrays, upstream))


@pytest.mark.parametrize("kernels", ["numba", "numpy", "reference"])
def test_fused_agrees_with_composite_on_every_cpu_kernel(kernels):
    if kernels == "numba":
        pytest.importorskip("numba")
    arrays = draw((3, 40, 33), seed=2)
    upstream = np.random.default_rng(3).standard_normal((3, 40, 33))
    with mg.cpu_kernels(kernels):
        assert_same(ours(arrays, upstream, "fused"), ours(arrays, upstream, "composite"))


@pytest.mark.parametrize("impl", IMPLS)
def test_gradcheck(impl):
    t = [mg.tensor(a, requires_grad=True) for a in draw((3, 4), seed=4).values()]
    assert mg.gradcheck(lambda x, a, w, b: F.dyt(x, a, w, b, impl=impl), t)


# ----- dtypes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype, tol", [("float32", 1e-6), ("float16", 2e-3)])
def test_low_precision_keeps_dtypes_and_stays_close_to_torch(dtype, tol, impl):
    arrays = {n: a.astype(dtype) for n, a in draw((4, 6), seed=5).items()}
    upstream = np.random.default_rng(6).standard_normal((4, 6)).astype(dtype)
    y, grads = ours(arrays, upstream, impl)
    # PyTorch in float64 on the same rounded values, the result rounded to dtype
    y_ref, grads_ref = theirs({n: a.astype(np.float64) for n, a in arrays.items()},
                              upstream.astype(np.float64))
    assert y.dtype == dtype and all(g.dtype == dtype for g in grads.values())
    np.testing.assert_allclose(y, y_ref, rtol=0, atol=tol * 2)
    for name, g in grads_ref.items():
        np.testing.assert_allclose(grads[name], g, rtol=0, atol=tol * scale(g), err_msg=name)


def t(a):
    return mg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


# ----- bad input: PyTorch's error classes, the argument named, nothing changed ----------------
BAD = [("alpha of 2 numbers", {"alpha": t([0.5, 0.5])}, ValueError,
        r"alpha must be one number, a Tensor of shape \(1,\) or \(\), got shape \(2,\)"),
       ("alpha a float", {"alpha": 0.5}, TypeError, "alpha must be a microgradnorm Tensor"),
       ("alpha float32", {"alpha": t([0.5]).float()}, TypeError,
        "alpha must have x's dtype torch.float64, got torch.float32"),
       ("x of int64", {"x": mg.tensor(np.ones((2, 4), np.int64))}, TypeError,
        "x must be a floating-point tensor"),
       ("weight of the wrong width", {"weight": t(np.ones(3))}, ValueError,
        r"weight must have shape \(4,\), got \(3,\)"),
       ("bias unlike weight", {"bias": t(np.ones((2, 4)))}, ValueError,
        r"bias must have shape \(4,\), got \(2, 4\)"),
       ("impl", {"impl": "fast"}, ValueError, "impl must be one of")]


@pytest.mark.parametrize("change, error, message", [case[1:] for case in BAD],
                         ids=[case[0] for case in BAD])
def test_bad_input_is_refused_naming_the_argument_and_changes_nothing(change, error, message):
    given = {"x": t(np.ones((2, 4))), "alpha": t([0.5]), "weight": t(np.ones(4)),
             "bias": t(np.zeros(4)), "impl": "fused"}
    versions = {name: v._version for name, v in given.items() if isinstance(v, mg.Tensor)}
    with pytest.raises(error, match=f"^dyt: {message}"):
        F.dyt(**(given | change))
    for name, version in versions.items():
        assert given[name]._version == version and given[name].grad is None, name


# ----- 0-d and empty x, saturation ------------------------------------------------------------
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("alpha_shape", [(), (1,)], ids=str)
def test_0d_x_broadcasts_as_torch(alpha_shape, impl):
    arrays = {"x": np.array(1.7), "alpha": np.full(alpha_shape, 0.8)}
    upstream = np.full(alpha_shape, 1.3)                    # () or (1,): torch's result shape
    assert_same(ours(arrays, upstream, impl), theirs(arrays, upstream))


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape", [(0, 4), (2, 0, 3)], ids=str)
def test_empty_x_gives_an_empty_output_and_zero_gradients(shape, impl):
    arrays = draw(shape)
    upstream = np.zeros(shape)
    result = ours(arrays, upstream, impl)
    assert_same(result, theirs(arrays, upstream))
    assert not any(g.any() for g in result[1].values())


@pytest.mark.filterwarnings("ignore:invalid value encountered")      # NumPy's 0·inf
@pytest.mark.parametrize("impl", IMPLS)
def test_saturated_and_infinite_x_as_torch(impl):
    arrays = draw((2, 5))
    arrays["x"][0] = [np.inf, -np.inf, 1e4, -1e4, 0.0]      # tanh = ±1: dx = 0, dα = 0·inf
    upstream = np.ones((2, 5))
    result = ours(arrays, upstream, impl)
    assert_same(result, theirs(arrays, upstream))
    assert np.isnan(result[1]["alpha"]).all() and np.isfinite(result[1]["x"]).all()


# ----- the kernels and what the fused node keeps ----------------------------------------------
def kernel_outputs(k, a, weight, bias):
    y = k.dyt_forward(a["x"], a["alpha"], weight, bias)
    return (y, *k.dyt_backward(a["dy"], a["x"], a["alpha"], weight, bias is not None))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weight, bias", [(True, True), (True, False), (False, True),
                                          (False, False)])
def test_numba_kernels_agree_with_the_reference(dtype, weight, bias):
    numba_cpu = pytest.importorskip("microgradnorm.kernels.numba_cpu")
    rng = np.random.default_rng(7)
    rows = numba_cpu.DYT_BLOCK // 53 * 2 + 5                 # three blocks of rows
    a = {"x": 3 * rng.standard_normal((rows, 53)), "dy": rng.standard_normal((rows, 53)),
         "alpha": np.array([0.7]), "weight": 1 + rng.standard_normal(53),
         "bias": rng.standard_normal(53)}
    a = {name: v.astype(dtype) for name, v in a.items()}
    w, b = a["weight"] if weight else None, a["bias"] if bias else None
    tol = 1e-12 if dtype == "float64" else 1e-5
    for got, want in zip(kernel_outputs(numba_cpu, a, w, b), kernel_outputs(reference, a, w, b)):
        assert (got is None) == (want is None)
        if want is not None:
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale(want))


def test_fused_node_saves_x_alpha_weight_and_the_documented_bytes():
    def saved(function, *args, **options):
        return mg.graph_stats(function(*args, **options))

    rng = np.random.default_rng(8)
    x = mg.tensor(rng.standard_normal((1024, 768)), dtype="float32", requires_grad=True)
    alpha = mg.tensor([0.5], dtype="float32", requires_grad=True)
    weight, bias = (mg.tensor(np.full(768, v), dtype="float32", requires_grad=True)
                    for v in (1.0, 0.0))
    node = F.dyt(x, alpha, weight, bias).grad_fn
    assert [name for name, _ in node.named_saved_arrays()] == ["x", "alpha", "weight"]
    assert node.named_saved_arrays()[0][1] is x._array            # x itself, not a copy
    fused = saved(F.dyt, x, alpha, weight, bias)
    composite = saved(F.dyt, x, alpha, weight, bias, impl="composite")
    layer_norm = saved(F.layer_norm, x, 768, weight, bias)
    assert (fused.nodes, composite.nodes) == (1, 4)
    assert fused.saved_bytes == x._array.nbytes + weight._array.nbytes + alpha._array.nbytes
    text = DERIVATIONS.read_text()                          # the table of derivations §12
    for stats in (fused, composite, layer_norm):
        assert f"| {stats.saved_bytes:,} |" in text


# ----- the module -----------------------------------------------------------------------------
def test_module_defaults_state_dict_and_the_paper_module():
    dyt = nn.DyT(6)
    assert nn.DynamicTanh is nn.DyT
    assert dyt.alpha.shape == (1,) and dyt.alpha.item() == 0.5 and dyt.alpha.dtype == "float32"
    np.testing.assert_array_equal(dyt.weight.detach().numpy(), np.ones(6, np.float32))
    np.testing.assert_array_equal(dyt.bias.detach().numpy(), np.zeros(6, np.float32))
    assert list(dyt.state_dict()) == ["alpha", "weight", "bias"]
    assert repr(dyt) == "DyT((6,), alpha_init_value=0.5, elementwise_affine=True)"
    plain = nn.DyT((2, 3), alpha_init_value=2.0, elementwise_affine=False, dtype="float64")
    assert plain.weight is None and plain.bias is None and list(plain.state_dict()) == ["alpha"]
    assert nn.DyT(6, bias=False).bias is None

    # the paper's module, with our parameters loaded into it: y = γ·tanh(αx) + β
    rng = np.random.default_rng(9)
    trained = {"alpha": rng.standard_normal(1), "weight": rng.standard_normal(6),
               "bias": rng.standard_normal(6)}
    dyt = nn.DyT(6, dtype="float64")
    dyt.load_state_dict({name: mg.tensor(v) for name, v in trained.items()})
    x_data, r_data = rng.standard_normal((2, 3, 6)), rng.standard_normal((2, 3, 6))
    ref = {name: torch.tensor(v) for name, v in trained.items()}
    expected = torch.tanh(ref["alpha"] * torch.tensor(x_data)) * ref["weight"] + ref["bias"]
    np.testing.assert_allclose(dyt(mg.tensor(x_data)).detach().numpy(), expected, atol=TOL)
    y, s = dyt(mg.tensor(x_data - r_data), mg.tensor(r_data))      # a block's residual form
    np.testing.assert_allclose(s.numpy(), x_data, atol=TOL)
    np.testing.assert_allclose(y.detach().numpy(), expected, atol=TOL)


@pytest.mark.parametrize("make, error, message", [
    (lambda: nn.DyT(6, alpha_init_value="big"), TypeError, "DyT: alpha_init_value must be"),
    (lambda: nn.DyT(-1), ValueError, "DyT: normalized_shape must be"),
    (lambda: nn.DyT(6, impl="fast"), ValueError, "DyT: impl must be one of"),
    (lambda: nn.DyT(6)(mg.ones((2, 5))), ValueError, r"DyT\(.*\): input's last dim is 5"),
    (lambda: nn.DyT(6)(mg.ones((2, 6)), mg.ones((2, 5))), ValueError,
     "DyT: residual must have the shape of x")])
def test_module_refuses_bad_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make()


# ----- in a model -----------------------------------------------------------------------------
TEXT = "Beautiful is better than ugly. Explicit is better than implicit. " * 4


@pytest.mark.parametrize("norm", ["dyt", "rms_norm"])
def test_tiny_gpt_trains_with_the_norm(norm):
    config = TrainConfig(steps=30, norm=norm, d_model=16, context_length=16, batch_size=8,
                         text=TEXT, lr=1e-2)
    run = train_tiny_gpt(config, progress=False)
    assert type(run.model.blocks[1].ln2).norm == norm
    assert np.mean(run.losses[-5:]) < np.mean(run.losses[:5]) - 0.3


def test_blocks_and_the_train_command_take_dyt(capsys):
    block = nn.TransformerBlock(8, 2, norm="dyt", placement="sandwich")
    assert all(isinstance(m, nn.DyT) for m in (block.ln1, block.ln2, block.ln1_out))
    assert nn.GPT(10, 4, d_model=8, norm="dynamic_tanh").ln_f.norm == "dyt"      # an alias
    assert cli_main(["train", "--norm", "dyt", "--steps", "2", "--d-model", "8",
                     "--context", "8", "--sample", "0", "--no-progress"]) in (0, None)
    assert "dyt pre-norm" in capsys.readouterr().out
