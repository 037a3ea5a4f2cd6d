"""What a newcomer sees when they print an optimizer, a scheduler, a graph node or a
comparison: PyTorch's forms where PyTorch has one, and a short table for ``mg.compare``."""

import re

import numpy as np
import torch

import microgradnorm as mg
from microgradnorm import optim


def test_optimizer_repr_is_pytorchs_for_the_options_both_have():
    ours = optim.AdamW([mg.tensor(np.ones(2), requires_grad=True)], lr=0.01)
    theirs = torch.optim.AdamW([torch.ones(2, requires_grad=True)], lr=0.01)
    lines = repr(ours).splitlines()
    assert lines[:2] == ["AdamW (", "Parameter Group 0"] and lines[-1] == ")"
    assert set(lines) <= set(repr(theirs).splitlines())
    assert "    lr: 0.01" in lines


def test_scheduler_repr_names_its_step_and_rate():
    optimizer = optim.SGD([mg.tensor(np.ones(2), requires_grad=True)], lr=0.1)
    scheduler = optim.lr_scheduler.LinearLR(optimizer, start_factor=0.5, total_iters=4)
    assert repr(scheduler) == "LinearLR(last_epoch=0, last_lr=[0.05], optimizer=SGD)"


def test_grad_fn_repr_reads_like_pytorchs():
    x = mg.tensor(np.ones(2), requires_grad=True)
    ours = repr((x * 2).sum().grad_fn)
    theirs = repr((torch.ones(2, requires_grad=True) * 2).sum().grad_fn)
    assert re.fullmatch(r"<SumBackward0 object at 0x[0-9a-f]+>", ours)
    assert theirs.startswith("<SumBackward")


def test_compare_prints_a_short_table_and_keeps_its_arrays():
    result = mg.compare("layer_norm", (2, 4, 8), repeat=1)
    text = repr(result)
    assert text == result.table() and len(text.splitlines()) <= 20 and "array" not in text
    assert "op nodes" in text
    assert result.fused.grads["grad x"].shape == (2, 4, 8)
    assert result.max_abs_diff["output"] <= 1e-12 and result.composite.nodes > 1
