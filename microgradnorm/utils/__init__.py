"""``torch.utils``'s counterparts: ``data`` (datasets, samplers, DataLoader) and
``tensorboard`` (SummaryWriter, when the ``tensorboard`` package is installed)."""

from . import data, tensorboard

__all__ = ["data", "tensorboard"]
