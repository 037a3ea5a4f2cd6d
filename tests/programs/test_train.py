"""The training loop in microgradnorm.train and `microgradnorm train` (the README's
training script is run by test_docs.py)."""

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from microgradnorm import train
from microgradnorm.train import TrainConfig

ROOT = Path(__file__).parents[2]


def test_composite_and_fused_training_agree_in_float64():
    kwargs = {"steps": 50, "dtype": "float64", "seed": 3, "d_model": 16, "n_layers": 2,
              "context_length": 16, "batch_size": 8}
    fused = train.train_tiny_gpt(TrainConfig(impl="fused", **kwargs), progress=False)
    composite = train.train_tiny_gpt(TrainConfig(impl="composite", **kwargs), progress=False)
    assert len(fused.losses) == len(composite.losses) == 50
    assert max(abs(a - b) for a, b in zip(fused.losses, composite.losses)) <= 1e-8
    assert fused.losses[-1] < fused.losses[0] - 0.5              # it does learn
    assert fused.graph_nodes < composite.graph_nodes
    assert fused.saved_bytes < composite.saved_bytes
    assert fused.seconds_per_step > 0


def test_compare_impls_reports_both_runs_and_their_difference():
    config = TrainConfig(steps=12, d_model=8, n_layers=1, context_length=8, norm="rmsnorm",
                         placement="post")
    result = train.compare_impls(config, progress=False)
    diffs = [abs(a - b) for a, b in zip(result.composite.losses, result.fused.losses)]
    assert result.max_loss_diff == max(diffs) <= 1e-8
    assert result.composite.config.impl == "composite"
    assert result.fused.config == config                      # fused is the default impl
    with pytest.raises(TypeError, match="config must be a TrainConfig or None, got int"):
        train.compare_impls(12)


@pytest.mark.parametrize("placement", ["post", "sandwich", "deepnorm"])
def test_every_placement_and_rmsnorm_trains(placement):
    config = TrainConfig(steps=30, norm="rmsnorm", placement=placement, d_model=16,
                         n_layers=2, context_length=16, batch_size=8)
    result = train.train_tiny_gpt(config, progress=False)
    assert np.isfinite(result.losses).all()
    assert result.losses[-1] < result.losses[0]


def test_same_seed_same_run_and_float32():
    config = TrainConfig(steps=5, d_model=8, n_layers=1, context_length=8, batch_size=4,
                         dtype="float32", seed=1)
    a, b = train.train_tiny_gpt(config, False), train.train_tiny_gpt(config, False)
    assert a.losses == b.losses
    assert a.model.lm_head.weight.dtype == np.float32
    other_seed = dataclasses.replace(config, seed=2)
    assert a.losses != train.train_tiny_gpt(other_seed, progress=False).losses


def test_sample_and_tokenizer():
    config = TrainConfig(steps=5, d_model=8, n_layers=1, context_length=8)
    result = train.train_tiny_gpt(config, progress=False)
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


def test_defaults_and_bad_arguments():
    assert train.train_tiny_gpt(TrainConfig(steps=0), progress=False).losses == []
    assert TrainConfig().steps == 300 and TrainConfig().training_text == train.zen_of_python()
    with pytest.raises(ValueError, match="TrainConfig: steps must be an int >= 0, got -1"):
        TrainConfig(steps=-1)
    with pytest.raises(TypeError, match="TrainConfig: batch_size must be an int, got float"):
        TrainConfig(batch_size=2.0)
    with pytest.raises(TypeError, match="TrainConfig: text must be a str or None, got list"):
        TrainConfig(text=["a"])
    with pytest.raises(ValueError, match="context_length \\+ 2 = 34 characters, got 5"):
        TrainConfig(text="short").check_text()
    with pytest.raises(ValueError, match="steps must be an int >= 0"):
        dataclasses.replace(TrainConfig(), steps=-1)      # a changed copy is checked again
    with pytest.raises(dataclasses.FrozenInstanceError):
        TrainConfig().steps = 5
    with pytest.raises(TypeError):
        TrainConfig(5)                                    # options by name only
    with pytest.raises(ValueError, match="impl"):
        train.train_tiny_gpt(TrainConfig(steps=1, impl="cuda"), progress=False)
    with pytest.raises(TypeError, match="train_tiny_gpt: config must be a TrainConfig"):
        train.train_tiny_gpt({"steps": 1})


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
    assert "rms_norm pre-norm, impl=composite" in result.stdout   # the alias, canonical
    assert "sample:" in result.stdout


def test_cli_train_bad_argument():
    result = subprocess.run([sys.executable, "-m", "microgradnorm", "train", "--steps", "-3"],
                            check=False,
                            capture_output=True, text=True, timeout=60, env=cli_env())
    assert result.returncode == 2 and "steps" in result.stderr


def test_a_context_longer_than_the_text_is_refused_by_the_loop_not_by_the_config():
    # memory builds a TrainConfig but trains on random ids: only the loop needs the text
    config = TrainConfig(context_length=900, text="abc" * 10)
    with pytest.raises(ValueError, match=r"text must have at least context_length \+ 2 = 902"):
        train.train_tiny_gpt(config, progress=False)


@pytest.mark.parametrize("field, value, error", [("grad_clip", -1.0, ValueError),
                                                 ("checkpoint", 5, TypeError),
                                                 ("resume", 5, TypeError)])
def test_train_config_refuses_what_would_train_wrong_or_fail_late(field, value, error):
    with pytest.raises(error, match=f"TrainConfig: {field} must be"):
        TrainConfig(**{field: value})
