"""``torch.utils``'s counterparts: ``data`` (datasets, samplers, DataLoader),
``tensorboard`` (SummaryWriter, when the ``tensorboard`` package is installed) and
``checkpoint`` (activation checkpointing), ``hooks`` (``RemovableHandle``), ``benchmark``
(``Timer``, ``Measurement``, ``Compare``)."""

from . import benchmark, checkpoint, data, hooks, tensorboard

__all__ = ["benchmark", "checkpoint", "data", "hooks", "tensorboard"]
