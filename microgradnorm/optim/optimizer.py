"""``torch.optim.optimizer``, the module hand-written optimizers take their base from:
``from torch.optim.optimizer import Optimizer, required`` (``required``: the default of an
option that has none, which older optimizers test with ``lr is not required``), and the
hooks of every optimizer's step (``register_optimizer_step_pre_hook``, ``..._post_hook``)."""

from .optimizer_hooks import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from .optimizers import Optimizer

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook",
           "required"]


class _RequiredParameter:
    """The marker of an option that must be given (torch's ``optimizer.required``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()
