"""Optimizers and learning-rate schedules with ``torch.optim``'s names and semantics:
``optim.SGD``, ``optim.Adam``, ``optim.AdamW`` (``optimizers.py``) and
``optim.lr_scheduler`` (``LambdaLR``, ``LinearLR``, ``CosineAnnealingLR``, ``warmup_cosine``)."""

from . import lr_scheduler
from .optimizers import SGD, Adam, AdamW, Optimizer

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler"]
