"""``torch.optim.optimizer``, the module hand-written optimizers take their base from:
``from torch.optim.optimizer import Optimizer, required`` (``required``: the default of an
option that has none, which older optimizers test with ``lr is not required``)."""

from .optimizers import Optimizer

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """The marker of an option that must be given (torch's ``optimizer.required``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()
