"""A small training state to checkpoint, shared by the checkpoint and save/load tests."""

import numpy as np

import microgradnorm as mg
from microgradnorm import nn, optim


def trained(seed=0):
    """A model, AdamW, scheduler and batch rng after one step; the same for the same seed."""
    mg.manual_seed(seed)                      # the weights
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    optimizer = optim.AdamW(model.parameters(), lr=0.1)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, 10)
    model(mg.ones((2, 3))).sum().backward()
    optimizer.step()
    scheduler.step()
    return model, optimizer, scheduler, np.random.default_rng(3)
