"""Optimizers and learning-rate schedules with ``torch.optim``'s names and semantics."""

from . import lr_scheduler
from .optimizers import SGD, Adam, AdamW, Optimizer

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler"]
