"""bfloat16 as a Tensor dtype (ml_dtypes): creation, every primitive op against PyTorch's
bfloat16, reductions that accumulate in float32, casts, modules and optimizers."""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import backend, dtypes, nn, optim
from op_table import BINARY as BINARY_OPS
from op_table import REDUCTIONS
from op_table import UNARY as UNARY_OPS

pytestmark = pytest.mark.skipif(not dtypes.has_bfloat16(), reason="bfloat16 needs ml_dtypes")
torch = pytest.importorskip("torch")

BF16 = dtypes.bfloat16
ULP = 2.0 ** -8          # bfloat16's relative spacing (7 stored mantissa bits)


def pair(array, requires_grad=True):
    """The same bfloat16 values as a microgradnorm and as a torch tensor."""
    ours = mg.tensor(array, dtype="bfloat16", requires_grad=requires_grad)
    theirs = torch.tensor(np.asarray(ours.data, np.float32)).to(torch.bfloat16)
    return ours, theirs.requires_grad_(requires_grad)


def f64(value):
    if isinstance(value, torch.Tensor):
        return value.detach().double().numpy()
    return np.asarray(value, np.float32).astype(np.float64)


def assert_bf16_close(got, expected, ulps=2, what=""):
    """Within ``ulps`` bfloat16 units of the larger magnitude of the two tensors."""
    got, expected = f64(got), f64(expected)
    scale = max(np.abs(expected).max(initial=0), 1e-30)
    assert np.abs(got - expected).max(initial=0) <= ulps * ULP * scale, what


def _guarded(op, fn):
    if op in BINARY_OPS.values():        # a second operand made from x, in the domain
        return lambda t: fn(t, op.guard(t * 0.5 - 0.25))
    return lambda t: fn(op.guard(t))


# the op table's ops (each input guarded into its domain), reductions over one axis, and a
# few compositions: (ours, torch)
UNARY = {**{name: (_guarded(op, op.ours), _guarded(op, op.torch))
            for name, op in {**UNARY_OPS, **BINARY_OPS}.items()},
         **{name: ((lambda op, a: lambda t: op.ours(t, a, False))(op, axis),   # noqa: B023
                   (lambda op, a: lambda t: op.torch(t, a, False))(op, axis))  # noqa: B023
            for (name, op), axis in zip(REDUCTIONS.items(), (1, 0, 1))},
         "scalar": (lambda t: t * 2.5 - 1.0,) * 2,
         "layer_norm": (lambda t: F.layer_norm(t, 16),
                        lambda t: torch.nn.functional.layer_norm(t, (16,)))}


@pytest.mark.parametrize("name", UNARY)
def test_op_matches_torch_bfloat16_forward_and_backward(name):
    ours_fn, torch_fn = UNARY[name]
    rng = np.random.default_rng(0)
    x, tx = pair(rng.standard_normal((6, 16)))
    y, ty = ours_fn(x), torch_fn(tx)
    assert y.dtype == BF16 and ty.dtype == torch.bfloat16
    assert_bf16_close(y.data, ty, ulps=2, what=f"{name} forward")
    dy = rng.standard_normal(y.shape)
    y.backward(dy.astype(BF16))
    ty.backward(torch.tensor(np.asarray(dy.astype(BF16), np.float32)).to(torch.bfloat16))
    assert x.grad.dtype == BF16
    # Gradients go through a few more roundings: a few units of the gradient's scale.
    assert_bf16_close(x.grad, tx.grad, ulps=8, what=f"{name} backward")


def test_matmul_accumulates_in_float32_like_torch():
    rng = np.random.default_rng(1)
    a, ta = pair(rng.standard_normal((5, 300)))
    b, tb = pair(rng.standard_normal((300, 4)))
    y, ty = a @ b, ta @ tb
    assert y.dtype == BF16
    assert_bf16_close(y.data, ty, ulps=1)
    y.sum().backward()
    ty.sum().backward()
    assert_bf16_close(a.grad, ta.grad, ulps=1)
    assert_bf16_close(b.grad, tb.grad, ulps=1)


@pytest.mark.parametrize("dtype, count", [("bfloat16", 1000), ("float16", 3000)])
def test_sums_accumulate_in_float32_and_round_once(dtype, count):
    # Accumulating in the low dtype would stall: bfloat16 at 256 (1 + 256 rounds to 256),
    # float16 at 2048. torch accumulates in float32 and rounds once; so do we.
    ones = mg.tensor(np.ones(count), dtype=dtype, requires_grad=True)
    total, mean = ones.sum(), (ones * 3.0).mean()
    assert total.item() == count == torch.ones(count, dtype=getattr(torch, dtype)).sum().item()
    assert mean.item() == 3.0
    total.backward()
    assert ones.grad.dtype == dtypes.as_dtype(dtype) and np.all(f64(ones.grad) == 1)


def test_creation_casts_and_device_rules():
    x = mg.tensor([1.0, 2.0, 3.0], dtype="bfloat16", requires_grad=True)
    assert x.dtype == BF16 == mg.bfloat16 and "bfloat16" in repr(x)
    assert mg.tensor([1.0], dtype=mg.bfloat16).dtype == BF16
    w = mg.tensor([0.1, 0.2, 0.3], dtype=mg.float64, requires_grad=True)   # float64 master
    h = w.to(dtype="bfloat16")
    assert h.dtype == BF16 and mg.graph_stats(h).by_op == {"ToCopy": 1}
    (h * x).sum().backward()
    assert w.grad.dtype == np.float64 and x.grad.dtype == BF16
    np.testing.assert_allclose(w.grad, [1, 2, 3])
    assert w.bfloat16().dtype == BF16 and h.float().dtype == np.float32
    assert w.to() is w and w.to(dtype=np.float64) is w
    if not backend.cuda_available():   # bfloat16 is a dtype on "cuda" too: only no GPU stops it
        with pytest.raises(RuntimeError, match='device "cuda"'):
            mg.tensor([1.0], dtype="bfloat16", device="cuda")
        with pytest.raises(RuntimeError, match='device "cuda"'):
            x.to("cuda")


def test_as_dtype_without_ml_dtypes_names_the_package(monkeypatch):
    monkeypatch.setattr(dtypes, "bfloat16", None)
    with pytest.raises(TypeError, match="pip install ml_dtypes"):
        dtypes.as_dtype("bfloat16")


def test_module_to_bfloat16_trains_and_master_weights_keep_small_updates():
    np.random.seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.RMSNorm(8), nn.Linear(8, 2)).to(dtype="bfloat16")
    assert all(p.dtype == BF16 for p in model.parameters())
    x = mg.tensor(np.random.randn(16, 4), dtype="bfloat16")
    target = np.random.randint(0, 2, 16)
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(20):
        loss = F.cross_entropy(model(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.dtype == BF16 for p in model.parameters())
    assert losses[-1] < losses[0]
    # An update of 1e-3 on a weight of 1 is below bfloat16's spacing (2^-8 below 1): without
    # master weights it rounds away every step; with them it accumulates.
    for master, expected in ((False, 1.0), (True, 253 / 256)):     # 0.99, rounded
        p = nn.Parameter(np.ones(3), dtype="bfloat16")
        opt = optim.SGD([p], lr=1e-3, master_weights=master)
        for _ in range(10):
            p.grad = mg.tensor(np.ones(3, BF16))
            opt.step()
        assert np.all(f64(p.data) == expected), master
        if master:
            assert opt.state[id(p)]["master"].dtype == np.float32


def test_state_dict_round_trips_bfloat16():
    layer = nn.Linear(3, 2, dtype="bfloat16")
    state = layer.state_dict()
    other = nn.Linear(3, 2, dtype="bfloat16")
    other.load_state_dict(state)
    np.testing.assert_array_equal(f64(other.weight.data), f64(layer.weight.data))


def test_compare_command_takes_bfloat16(capsys):
    from microgradnorm import cli
    assert cli.main(["compare", "--norm", "rmsnorm", "--dtype", "bfloat16", "--repeat",
                     "1"]) == 0
    out = capsys.readouterr().out
    assert "dtype=bfloat16" in out and "grad weight" in out


def test_tiny_gpt_trains_in_bfloat16_with_master_weights():
    np.random.seed(0)
    model = nn.GPT(vocab_size=20, context_length=8, d_model=16, n_layers=2, n_heads=2,
                   norm="rmsnorm").to(dtype="bfloat16")
    opt = optim.AdamW(model.parameters(), lr=3e-3, master_weights=True)
    ids = np.random.randint(0, 20, (4, 9))
    losses = []
    for _ in range(12):
        loss = F.cross_entropy(model(ids[:, :-1]).reshape(-1, 20), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert loss.dtype == BF16 and np.isfinite(losses).all()
    assert losses[-1] < losses[0] - 0.3
