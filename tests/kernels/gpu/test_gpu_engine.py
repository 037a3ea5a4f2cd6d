"""Tensors, norms and a small model on the GPU, against the same on the CPU (needs CuPy and a
GPU; skips without). The fused row norms run the CUDA kernels in float32 / float16 /
bfloat16 and the reference functions through CuPy in float64; BatchNorm and the composite
graphs are CuPy array code in every dtype. bfloat16 is ml_dtypes' dtype on CuPy arrays
(its cases skip without ml_dtypes).
"""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import backend, dtypes
from microgradnorm.norms import NORMS

cp = pytest.importorskip("cupy")
if not backend.cuda_available():
    pytest.skip("CuPy is installed but reaches no GPU", allow_module_level=True)

# max |gpu - cpu| allowed, relative to max(1, max |cpu|): about 20 units of the dtype
DEVICE_TOL = {"float64": 1e-10, "float32": 1e-4, "float16": 1e-2, "bfloat16": 8e-2}
BFLOAT16 = pytest.param("bfloat16", marks=pytest.mark.skipif(
    not dtypes.has_bfloat16(), reason="bfloat16 needs ml_dtypes"))
LOW_DTYPES = ["float64", "float32", "float16", BFLOAT16]


def run(norm, impl, arrays, device, dtype, seed=3):
    """Outputs, input gradients and running statistics of ``norm`` on ``device``, as NumPy."""
    tensors = {name: mg.tensor(a, requires_grad=True, dtype=dtype, device=device)
               for name, a in arrays.items()}
    running = {name: mg.tensor(a, dtype=dtype, device=device)
               for name, a in (NORMS[norm].running_stats(arrays) or {}).items()}
    outputs = NORMS[norm].run(tensors, impl, running)
    rng = np.random.default_rng(seed)
    loss = None
    for out in outputs:
        upstream = mg.tensor(rng.standard_normal(out.shape), dtype=dtype, device=device)
        term = (out * upstream).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    result = {f"out{i}": out.detach().numpy() for i, out in enumerate(outputs)}
    result.update({f"grad {name}": t.grad.get() if device == "cuda" else t.grad
                   for name, t in tensors.items()})
    for name, t in (running or {}).items():
        result[name] = t.numpy()
    return result


def assert_same(got, expected, tol):
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        value = value.astype(np.float64)
        scale = max(1.0, float(np.max(np.abs(value), initial=0.0)))
        diff = float(np.max(np.abs(got[name].astype(np.float64) - value), initial=0.0))
        assert diff <= tol * scale, f"{name}: max |diff| {diff:.3g} > {tol * scale:.3g}"


# ----- tensors and devices ------------------------------------------------------------------
def test_tensor_to_cuda_and_back_carries_gradients():
    x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    on_gpu = x.to("cuda")
    assert on_gpu.device == "cuda" and isinstance(on_gpu.data, cp.ndarray)
    (on_gpu * on_gpu).sum().backward()
    assert x.grad is not None and isinstance(x.grad, np.ndarray)
    np.testing.assert_array_equal(x.grad, 2 * x.detach().numpy())
    back = on_gpu.to("cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.detach().numpy(), x.detach().numpy())


def test_tensor_created_on_cuda_keeps_dtype_and_copies():
    source = cp.arange(4, dtype=cp.float32)
    t = mg.tensor(source, device="cuda")
    source[0] = 100
    assert t.dtype == np.float32 and t.device == "cuda" and float(t.data[0]) == 0.0


def test_mixing_devices_in_one_op_is_a_value_error():
    a = mg.tensor(np.ones(3), device="cuda")
    b = mg.tensor(np.ones(3))
    with pytest.raises(ValueError, match="one device"):
        a + b
    with pytest.raises(ValueError, match="device"):
        F.layer_norm(a, 3, weight=mg.tensor(np.ones(3)))


# ----- bfloat16 on the GPU -------------------------------------------------------------------
needs_bfloat16 = pytest.mark.skipif(not dtypes.has_bfloat16(), reason="needs ml_dtypes")


@needs_bfloat16
def test_bfloat16_tensor_on_cuda_holds_the_cpu_bits_and_carries_gradients():
    values = np.random.default_rng(0).standard_normal((3, 5)) * 100
    cpu = mg.tensor(values, dtype="bfloat16")
    made = mg.tensor(values, dtype="bfloat16", device="cuda")
    moved = cpu.to("cuda")
    for t in (made, moved):
        assert t.device == "cuda" and t.dtype == dtypes.bfloat16
        assert isinstance(t.data, cp.ndarray) and t.data.dtype == dtypes.bfloat16
        np.testing.assert_array_equal(t.data.get().view(np.uint16), cpu.data.view(np.uint16))
    back = moved.cpu()
    assert back.device == "cpu" and back.dtype == dtypes.bfloat16
    np.testing.assert_array_equal(back.data.view(np.uint16), cpu.data.view(np.uint16))
    # rounded on the device (CuPy's cast) as on the host (ml_dtypes): nearest, ties to even
    on_device = mg.tensor(values, dtype=np.float32, device="cuda").to(dtype="bfloat16")
    assert on_device.dtype == dtypes.bfloat16 and on_device.device == "cuda"
    np.testing.assert_array_equal(on_device.data.get().view(np.uint16),
                                  cpu.data.view(np.uint16))
    x = mg.tensor(values, requires_grad=True)                  # float64 on the CPU
    h = x.to("cuda", dtype="bfloat16")
    (h * h).sum().backward()
    assert x.grad.dtype == np.float64 and isinstance(x.grad, np.ndarray)
    np.testing.assert_allclose(x.grad, 2 * cpu.data.astype(np.float64), rtol=2**-7)


@needs_bfloat16
@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm"])
def test_fused_bfloat16_on_gpu_runs_the_kernels_and_matches_cpu_bfloat16(norm, monkeypatch):
    from microgradnorm.kernels import cuda
    launched = []
    forward = cuda._forward
    monkeypatch.setattr(cuda, "_forward", lambda *a, **k: launched.append(1) or forward(*a, **k))
    arrays = NORMS[norm].make_inputs((4, 9, 1024), "float64", seed=4)
    gpu = run(norm, "fused", arrays, "cuda", "bfloat16")
    cpu = run(norm, "fused", arrays, "cpu", "bfloat16")
    assert launched, "the bfloat16 CUDA kernels did not run"
    assert_same(gpu, cpu, DEVICE_TOL["bfloat16"])


@needs_bfloat16
def test_nn_module_to_cuda_bfloat16_steps_like_cpu_bfloat16():
    """Module.to(device="cuda", dtype="bfloat16") and an AdamW step with float32 master
    weights, against the same model on the CPU in bfloat16."""
    nn = pytest.importorskip("microgradnorm.nn")
    optim = pytest.importorskip("microgradnorm.optim")
    models = []
    for _ in range(2):
        model = nn.Sequential(nn.Linear(32, 64), nn.RMSNorm(64), nn.Linear(64, 32),
                              nn.LayerNorm(32))
        if models:
            model.load_state_dict(models[0].state_dict())
        models.append(model)
    cpu_model = models[0].to(dtype="bfloat16")
    gpu_model = models[1].to(device="cuda", dtype="bfloat16")
    rng = np.random.default_rng(2)
    x, target = rng.standard_normal((16, 32)), rng.standard_normal((16, 32))

    def train(model, device):
        optimizer = optim.AdamW(model.parameters(), lr=1e-2, master_weights=True)
        inputs = mg.tensor(x, dtype="bfloat16", device=device)
        targets = mg.tensor(target, dtype="bfloat16", device=device)
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = ((model(inputs) - targets) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.item()))
        return losses

    gpu_losses, cpu_losses = train(gpu_model, "cuda"), train(cpu_model, "cpu")
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=3e-2)
    for (name, p_cpu), (_, p_gpu) in zip(cpu_model.named_parameters(),
                                         gpu_model.named_parameters()):
        assert p_gpu.device == "cuda" and p_gpu.dtype == dtypes.bfloat16, name
        assert p_gpu.grad.dtype == dtypes.bfloat16, name
        np.testing.assert_allclose(p_gpu.numpy().astype(np.float64),
                                   p_cpu.numpy().astype(np.float64), atol=3e-2, err_msg=name)


# ----- norms: GPU equals CPU; composite equals fused on the GPU -------------------------------
@pytest.mark.parametrize("dtype", LOW_DTYPES)
@pytest.mark.parametrize("impl", ["fused", "composite"])
@pytest.mark.parametrize("norm", NORMS)
def test_norm_on_gpu_equals_cpu(norm, impl, dtype):
    shape = (8, 6, 40) if NORMS[norm].per_channel else (4, 9, 1000)
    arrays = NORMS[norm].make_inputs(shape, "float64", seed=1)
    gpu = run(norm, impl, arrays, "cuda", dtype)
    cpu = run(norm, impl, arrays, "cpu", dtype)
    assert_same(gpu, cpu, DEVICE_TOL[dtype])


@pytest.mark.parametrize("dtype", LOW_DTYPES)
@pytest.mark.parametrize("norm", NORMS)
def test_composite_equals_fused_on_gpu(norm, dtype):
    shape = (8, 6, 40) if NORMS[norm].per_channel else (4, 9, 1024)
    arrays = NORMS[norm].make_inputs(shape, "float64", seed=2)
    fused = run(norm, "fused", arrays, "cuda", dtype)
    composite = run(norm, "composite", arrays, "cuda", dtype)
    assert_same(fused, composite, DEVICE_TOL[dtype])


# ----- a few training steps: the GPU follows the CPU ----------------------------------------
def train_functional_model(device, dtype, steps=4, lr=0.05):
    """A two-layer residual model built from mg ops and the fused norms, trained with plain
    SGD; returns the losses and the final parameters (NumPy)."""
    rng = np.random.default_rng(0)
    d_model, hidden, n = 64, 128, 32
    init = {"w_in": rng.standard_normal((d_model, hidden)) / np.sqrt(d_model),
            "w_out": rng.standard_normal((hidden, d_model)) / np.sqrt(hidden),
            "ln_weight": 1 + 0.1 * rng.standard_normal(d_model),
            "ln_bias": 0.1 * rng.standard_normal(d_model),
            "rms_weight": 1 + 0.1 * rng.standard_normal(d_model)}
    params = {name: mg.tensor(a, requires_grad=True, dtype=dtype, device=device)
              for name, a in init.items()}
    x = mg.tensor(rng.standard_normal((n, d_model)), dtype=dtype, device=device)
    target = mg.tensor(rng.standard_normal((n, d_model)), dtype=dtype, device=device)
    losses = []
    for _ in range(steps):
        h = F.rms_norm(x, d_model, params["rms_weight"])
        update = F.relu(h @ params["w_in"]) @ params["w_out"]
        out, stream = F.add_layer_norm(update, x, d_model, params["ln_weight"],
                                       params["ln_bias"])
        loss = ((out + stream - target) ** 2).mean()
        for p in params.values():
            p.grad = None
        loss.backward()
        with mg.no_grad():
            for p in params.values():
                p.data -= lr * p.grad
        losses.append(float(loss.item()))
    return np.array(losses), {name: p.detach().numpy() for name, p in params.items()}


@pytest.mark.parametrize("dtype, tol", [("float64", 1e-10), ("float32", 1e-4)])
def test_functional_model_trains_the_same_on_gpu_and_cpu(dtype, tol):
    gpu_losses, gpu_params = train_functional_model("cuda", dtype)
    cpu_losses, cpu_params = train_functional_model("cpu", dtype)
    assert gpu_losses[-1] < gpu_losses[0]                    # it does learn
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=tol, atol=tol)
    for name in cpu_params:
        np.testing.assert_allclose(gpu_params[name], cpu_params[name], rtol=tol, atol=tol,
                                   err_msg=name)


def test_nn_model_trains_the_same_on_gpu_and_cpu():
    """The same with nn Modules and an optimizer: one model's state is loaded into a second,
    which Module.to moves to the GPU; both train three SGD steps."""
    nn = pytest.importorskip("microgradnorm.nn")
    optim = pytest.importorskip("microgradnorm.optim")

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = nn.MLP([16, 32, 16])
            self.norm = nn.LayerNorm(16)

        def forward(self, x):
            return self.norm(self.mlp(x))

    cpu_model, gpu_model = Model(), Model()
    gpu_model.load_state_dict(cpu_model.state_dict())
    gpu_model.to("cuda")
    dtype = next(iter(cpu_model.parameters())).dtype
    rng = np.random.default_rng(1)
    x, target = rng.standard_normal((8, 16)), rng.standard_normal((8, 16))

    def train(model, device):
        optimizer = optim.SGD(model.parameters(), lr=0.1)
        inputs = mg.tensor(x, dtype=dtype, device=device)
        targets = mg.tensor(target, dtype=dtype, device=device)
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = ((model(inputs) - targets) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.item()))
        return losses

    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(train(gpu_model, "cuda"), train(cpu_model, "cpu"),
                               rtol=tol, atol=tol)
    for (name, p_cpu), (_, p_gpu) in zip(cpu_model.named_parameters(),
                                         gpu_model.named_parameters()):
        assert p_gpu.device == "cuda", name
        np.testing.assert_allclose(p_gpu.detach().numpy(), p_cpu.detach().numpy(), rtol=tol,
                                   atol=tol, err_msg=name)


# ----- RMSNorm conventions through the fused node: the CUDA kernels against the CPU's --------
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("weight_dtype", ["float16", "float32"])
@pytest.mark.parametrize("offset", [0.0, 1.0])
@pytest.mark.parametrize("casting", ["llama", "gemma", "none"])
def test_fused_rms_norm_conventions_on_gpu_match_cpu(casting, offset, weight_dtype, residual):
    """float16 x, Gemma's offset or none, each casting mode, a float16 or float32 weight
    (mixing is refused for "none", as on the CPU): y, dx, d(residual) and dweight from the
    CUDA kernels (one launch each way) against the CPU's reference kernels. Both do the same
    roundings; the statistics' sums run in another order, so rstd's last bit may move x̂ (and
    "none"'s rounded rstd) by a unit: y within 2 units of float16, the gradients to
    DEVICE_TOL."""
    if casting == "none" and weight_dtype == "float32":
        pytest.skip("a float32 weight with float16 x needs casting 'llama' or 'gemma'")
    rng = np.random.default_rng(7)
    arrays = {"x": 0.5 + rng.standard_normal((6, 64)), "w": 0.3 * rng.standard_normal(64),
              "r": rng.standard_normal((6, 64)), "up": rng.standard_normal((6, 64))}
    results = {}
    for device in ("cpu", "cuda"):
        x = mg.tensor(arrays["x"], dtype="float16", device=device, requires_grad=True)
        r = mg.tensor(arrays["r"], dtype="float16", device=device, requires_grad=True)
        w = mg.tensor(arrays["w"], dtype=weight_dtype, device=device, requires_grad=True)
        if residual:
            y, s = F.add_rms_norm(x, r, (64,), w, impl="fused", offset=offset, casting=casting)
        else:
            y = F.rms_norm(x, (64,), w, impl="fused", offset=offset, casting=casting)
        up = mg.tensor(arrays["up"], dtype=y.dtype, device=device)
        loss = (y * up).sum() + ((s * up).sum() if residual else 0)
        loss.backward()
        grads = {"dx": x.grad, "dw": w.grad, **({"dr": r.grad} if residual else {})}
        results[device] = {"y": y.detach().numpy(), **{k: v.get() if device == "cuda" else v
                                             for k, v in grads.items()}}
    cpu, gpu = results["cpu"], results["cuda"]
    assert gpu["y"].dtype == cpu["y"].dtype and gpu["dw"].dtype == cpu["dw"].dtype
    y_cpu = cpu["y"].astype(np.float64)
    unit = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(y_cpu), 2.0 ** -14))) - 10)
    assert (np.abs(gpu["y"].astype(np.float64) - y_cpu) / unit).max() <= 2
    assert_same({k: v for k, v in gpu.items() if k != "y"},
                {k: v for k, v in cpu.items() if k != "y"}, DEVICE_TOL["float16"])
