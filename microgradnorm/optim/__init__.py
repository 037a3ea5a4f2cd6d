"""Optimizers and learning-rate schedules with ``torch.optim``'s names and semantics."""

from . import lr_scheduler, optimizer, swa_utils
from .lbfgs import LBFGS
from .muon import Muon
from .optimizers import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop
from .variants import ASGD, Adadelta, Adafactor, Adamax, NAdam, RAdam, Rprop, SparseAdam

__all__ = ["ASGD", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "Adamax", "AdamW", "LBFGS",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam",
           "lr_scheduler", "optimizer", "swa_utils"]
