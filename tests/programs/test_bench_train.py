"""``bench --train``: the PyTorch twin of nn.GPT, the one-thread setting, the command."""

import re

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn
from microgradnorm.cli import bench_train
from test_bench import run_cli

torch = pytest.importorskip("torch")


def copy_weights(ours, theirs):
    """Our parameters into the PyTorch twin (Linear weights are (out, in) in both)."""
    names = {"attn.qkv": "qkv", "attn.proj": "proj", "mlp.fc1": "fc1", "mlp.fc2": "fc2"}
    state = {}
    for name, p in ours.named_parameters():
        for old, new in names.items():
            name = name.replace(old, new)
        state[name] = torch.from_numpy(p.detach().numpy().copy())
    missing, unexpected = theirs.load_state_dict(state, strict=False)
    assert not unexpected and all(m.endswith("mask") for m in missing), (missing, unexpected)


@pytest.mark.parametrize("n_layers", [1, 2])
def test_the_torch_twin_computes_nn_gpts_logits_and_gradients(n_layers):
    mg.manual_seed(0)
    ours = nn.GPT(11, 6, d_model=8, n_heads=2, n_layers=n_layers, dtype="float64")
    theirs = bench_train.torch_gpt(11, 6, 8, 2, n_layers, dtype="float64")
    assert (sum(p.numel() for p in theirs.parameters())
            == sum(p.numel() for p in ours.parameters()))
    copy_weights(ours, theirs)
    idx = np.random.default_rng(1).integers(0, 11, (3, 5))
    logits = ours(idx)
    expected = theirs(torch.from_numpy(idx))
    np.testing.assert_allclose(logits.data, expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    upstream = np.random.default_rng(2).standard_normal(logits.shape)
    logits.backward(upstream)
    expected.backward(torch.from_numpy(upstream))
    torch_grads = dict(theirs.named_parameters())
    ours_named = dict(ours.named_parameters())
    np.testing.assert_allclose(ours_named["lm_head.weight"].grad,
                               torch_grads["lm_head.weight"].grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours_named["blocks.0.attn.qkv.weight"].grad,
                               torch_grads["blocks.0.qkv.weight"].grad.numpy(),
                               rtol=1e-9, atol=1e-12)


def test_single_thread_pins_torch_and_restores_it():
    given = torch.get_num_threads()
    torch.set_num_threads(2)           # the suite runs torch on one thread (tests/conftest.py)
    try:
        with bench_train.single_thread() as text:
            assert torch.get_num_threads() == 1
            assert "torch 1 thread" in text
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(given)


def test_step_comparison_times_every_impl_and_counts_fewer_nodes_when_fused():
    result = bench_train.train_step_comparison(8, 1, 8, 2, n_heads=2, vocab_size=11, repeat=2,
                                               warmup=0)
    assert set(result.timings) == {"fused", "composite", "torch"}
    assert all(len(t.samples) == 2 for t in result.timings.values())
    assert result.nodes["fused"] < result.nodes["composite"]
    assert result.vs_torch("fused") == pytest.approx(
        result.timings["fused"].median / result.timings["torch"].median)


def test_the_captured_step_is_timed_beside_the_eager_one_and_hangs_on_one_node():
    result = bench_train.train_step_comparison(8, 1, 8, 2, n_heads=2, vocab_size=11,
                                               impls=("fused", "captured", "torch"), repeat=2,
                                               warmup=1)
    assert set(result.timings) == {"fused", "captured", "torch"}
    assert result.nodes["captured"] == 1 < result.nodes["fused"]
    assert re.search(r"captured +[0-9.]+ ms \([0-9.]+x torch\)",
                     bench_train.format_train_steps([result]))


def test_engine_comparison_counts_the_same_nodes_in_both_engines():
    result = bench_train.engine_comparison(layers=4, repeat=2, warmup=0)
    assert result.nodes == 3 * 4 + 1
    assert set(result.timings) == {"microgradnorm", "torch"}
    assert re.search(r"engine: [0-9.]+ us per node.*torch [0-9.]+ us per op",
                     bench_train.format_engine(result))


def test_bench_train_quick_prints_steps_and_writes_the_plot(tmp_path):
    result = run_cli("bench", "--train", "--quick", "--quiet", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "torch 1 thread" in out
    assert re.search(r"engine: [0-9.]+ us per node", out)
    steps = re.findall(r"fused +([0-9.]+) ms \(([0-9.]+)x torch\), captured +([0-9.]+) ms "
                       r"\(([0-9.]+)x torch\), composite +([0-9.]+) ms", out)
    assert len(steps) == 1 + 2 * len(bench_train.QUICK_SWEEP)
    assert all(float(ms) > 0 for step in steps for ms in step)
    files = re.findall(r"(nanoGPT-style file|nn.GPT \(fused\)) +(float64|float32): ours +"
                       r"[0-9.]+ ms, torch +[0-9.]+ ms, ratio [0-9.]+\??", out)
    assert len(files) == 4
    png = tmp_path / bench_train.PLOT_NAME
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_train_refuses_cuda_and_a_zero_repeat():
    assert run_cli("bench", "--train", "--device", "cuda").returncode == 2
    result = run_cli("bench", "--train", "--quick", "--repeat", "0")
    assert result.returncode == 2 and "--repeat" in result.stderr



def test_model_file_runs_here_with_only_its_imports_changed():
    """The file under PyTorch is the file here with three import lines swapped."""
    ours, theirs = bench_train.load_model_file(False), bench_train.load_model_file(True)
    assert ours.torch.__name__ == "microgradnorm" and theirs.torch.__name__ == "torch"
    source = bench_train.MODEL_FILE.read_text()
    assert all(source.count(line) == 1 for line in bench_train.TORCH_IMPORTS)


def test_model_file_comparison_times_both_models_in_both_dtypes():
    timings = bench_train.model_file_comparison(8, 1, 8, 2, n_heads=2, vocab_size=11,
                                                repeat=2, warmup=0)
    assert list(timings) == ["float64", "float32"]
    for cells in timings.values():
        assert set(cells) == {"file", "file torch", "gpt", "gpt torch"}
        assert all(len(t.samples) == 2 and t.median > 0 for t in cells.values())
    lines = bench_train.format_model_files(timings).splitlines()
    assert sum("ratio" in line for line in lines) == 4
