"""``torch.utils``'s counterparts: ``data`` (datasets, samplers, DataLoader),
``tensorboard`` (SummaryWriter, when the ``tensorboard`` package is installed) and
``checkpoint`` (activation checkpointing)."""

from . import checkpoint, data, tensorboard

__all__ = ["checkpoint", "data", "tensorboard"]
