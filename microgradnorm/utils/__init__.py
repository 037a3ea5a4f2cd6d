"""``torch.utils``'s counterparts: ``data`` (datasets, samplers, DataLoader),
``tensorboard`` (SummaryWriter, when the ``tensorboard`` package is installed) and
``checkpoint`` (activation checkpointing), ``hooks`` (``RemovableHandle``)."""

from . import checkpoint, data, hooks, tensorboard

__all__ = ["checkpoint", "data", "hooks", "tensorboard"]
