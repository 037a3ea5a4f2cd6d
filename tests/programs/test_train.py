"""The training loop in microgradnorm.train and `microgradnorm train` (the README's
training script is run by test_docs.py)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from microgradnorm import train

ROOT = Path(__file__).parents[2]


def test_composite_and_fused_training_agree_in_float64():
    kwargs = {"steps": 50, "dtype": "float64", "seed": 3, "progress": False, "d_model": 16,
              "n_layers": 2, "context_length": 16, "batch_size": 8}
    fused = train.train_tiny_gpt(impl="fused", **kwargs)
    composite = train.train_tiny_gpt(impl="composite", **kwargs)
    assert len(fused.losses) == len(composite.losses) == 50
    assert max(abs(a - b) for a, b in zip(fused.losses, composite.losses)) <= 1e-8
    assert fused.losses[-1] < fused.losses[0] - 0.5              # it does learn
    assert fused.graph_nodes < composite.graph_nodes
    assert fused.saved_bytes < composite.saved_bytes
    assert fused.seconds_per_step > 0


def test_compare_impls_reports_both_runs_and_their_difference():
    result = train.compare_impls(12, progress=False, d_model=8, n_layers=1,
                                 context_length=8, norm="rmsnorm", placement="post")
    diffs = [abs(a - b) for a, b in zip(result.composite.losses, result.fused.losses)]
    assert result.max_loss_diff == max(diffs) <= 1e-8
    assert result.composite.config["impl"] == "composite"
    assert result.fused.config["impl"] == "fused"
    assert result.fused.config["norm"] == "rmsnorm"


@pytest.mark.parametrize("placement", ["post", "sandwich", "deepnorm"])
def test_every_placement_and_rmsnorm_trains(placement):
    result = train.train_tiny_gpt(30, norm="rmsnorm", placement=placement, progress=False,
                                  d_model=16, n_layers=2, context_length=16, batch_size=8)
    assert np.isfinite(result.losses).all()
    assert result.losses[-1] < result.losses[0]


def test_same_seed_same_run_and_float32():
    kwargs = {"steps": 5, "progress": False, "d_model": 8, "n_layers": 1,
              "context_length": 8, "batch_size": 4, "dtype": "float32"}
    a, b = train.train_tiny_gpt(seed=1, **kwargs), train.train_tiny_gpt(seed=1, **kwargs)
    assert a.losses == b.losses
    assert a.model.lm_head.weight.dtype == np.float32
    assert a.losses != train.train_tiny_gpt(seed=2, **kwargs).losses


def test_sample_and_tokenizer():
    result = train.train_tiny_gpt(5, progress=False, d_model=8, n_layers=1, context_length=8)
    text = result.sample("Beautiful", length=40)
    assert text.startswith("Beautiful") and len(text) == len("Beautiful") + 40
    assert set(text) <= set(result.tokenizer.chars)
    assert result.model.training                                  # sampling restores mode
    tok = train.CharTokenizer("abca")
    assert tok.decode(tok.encode("cab")) == "cab"
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.encode("xyz")


def test_zen_of_python_is_decoded_and_not_printed(capfd):
    text = train.zen_of_python()
    assert text.startswith("The Zen of Python") and "Beautiful is better than ugly." in text
    assert capfd.readouterr().out == ""


def test_bad_arguments():
    with pytest.raises(ValueError, match="steps"):
        train.train_tiny_gpt(-1, progress=False)
    with pytest.raises(ValueError, match="impl"):
        train.train_tiny_gpt(1, impl="cuda", progress=False)
    with pytest.raises(ValueError, match="characters"):
        train.train_tiny_gpt(1, text="short", progress=False)


def cli_env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_cli_train():
    result = subprocess.run(
        [sys.executable, "-m", "microgradnorm", "train", "--steps", "15", "--d-model", "16",
         "--layers", "1", "--norm", "rmsnorm", "--impl", "composite", "--sample", "30",
         "--no-progress"], check=False, capture_output=True, text=True, timeout=120,
        env=cli_env())
    assert result.returncode == 0, result.stderr
    match = re.search(r"loss ([0-9.]+) -> ([0-9.]+) in 15 steps", result.stdout)
    assert match and float(match[2]) < float(match[1])
    assert "rmsnorm pre-norm, impl=composite" in result.stdout
    assert "sample:" in result.stdout


def test_cli_train_bad_argument():
    result = subprocess.run([sys.executable, "-m", "microgradnorm", "train", "--steps", "-3"],
                            check=False,
                            capture_output=True, text=True, timeout=60, env=cli_env())
    assert result.returncode == 2 and "steps" in result.stderr
