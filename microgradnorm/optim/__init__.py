"""Optimizers and learning-rate schedules with ``torch.optim``'s names and semantics."""

from . import lr_scheduler
from .optimizers import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
