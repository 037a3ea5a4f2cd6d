"""Learning-rate schedules with ``torch.optim.lr_scheduler``'s names and semantics, each a
closed form of the step (docs/training.md, "Learning-rate schedules")."""

import math
import numbers

from ..dtypes import check_number, check_positive_ints
from .optimizers import Optimizer

__all__ = ["CosineAnnealingLR", "LRScheduler", "LambdaLR", "LinearLR", "warmup_cosine"]


class LRScheduler:
    """Base class: ``step()``, ``get_last_lr()``, ``state_dict()``, ``load_state_dict()``.
    Subclasses define ``lr_at(step, base_lr, group_index)``, the learning rate at ``step``."""

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(type(self).__name__, optimizer)
        if isinstance(last_epoch, bool) or not isinstance(last_epoch, int) or last_epoch < -1:
            raise ValueError(f"{type(self).__name__}: last_epoch must be an int >= -1, got "
                             f"{last_epoch!r}")
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        missing = [i for i, g in enumerate(optimizer.param_groups) if "initial_lr" not in g]
        if missing:
            raise ValueError(f"{type(self).__name__}: last_epoch={last_epoch} needs "
                             f"'initial_lr' in every parameter group, missing in {missing}")
        self.optimizer = optimizer
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def lr_at(self, step, base_lr, group_index):
        """The learning rate of group ``group_index`` at ``step`` (defined by subclasses)."""
        raise NotImplementedError

    def step(self):
        """Advance one step and write the new learning rate into every parameter group."""
        self._go_to(self.last_epoch + 1, self.base_lrs)

    def _go_to(self, epoch, base_lrs):
        # the rates first: a schedule function that raises leaves everything as it was
        lrs = [self.lr_at(epoch, base, i) for i, base in enumerate(base_lrs)]
        self.base_lrs, self.last_epoch = base_lrs, epoch
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = lrs

    def get_last_lr(self):
        """The learning rates the latest ``step()`` set, one per parameter group."""
        return list(self._last_lr)

    def __repr__(self):
        return (f"{type(self).__name__}(last_epoch={self.last_epoch}, "
                f"last_lr={self.get_last_lr()}, optimizer={type(self.optimizer).__name__})")

    def state_dict(self):
        """``{"last_epoch": int, "base_lrs": [...]}``; ``lr_lambda`` is not saved."""
        return {"last_epoch": self.last_epoch, "base_lrs": list(self.base_lrs)}

    def load_state_dict(self, state_dict):
        """Continue from a ``state_dict()``; sets the parameter groups' ``lr`` to match."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or set(state_dict) != {"last_epoch", "base_lrs"}:
            raise ValueError(f"{name}.load_state_dict: expected keys ['base_lrs', "
                             f"'last_epoch'], got {state_dict!r}")
        base_lrs, last_epoch = list(state_dict["base_lrs"]), state_dict["last_epoch"]
        if len(base_lrs) != len(self.optimizer.param_groups):
            raise ValueError(f"{name}.load_state_dict: {len(base_lrs)} base_lrs for "
                             f"{len(self.optimizer.param_groups)} parameter groups")
        if not isinstance(last_epoch, numbers.Integral) or last_epoch < 0:
            raise ValueError(f"{name}.load_state_dict: last_epoch must be an int >= 0, got "
                             f"{last_epoch!r}")
        if not all(isinstance(lr, numbers.Real) and not isinstance(lr, bool) and lr >= 0
                   for lr in base_lrs):
            raise ValueError(f"{name}.load_state_dict: base_lrs must be numbers >= 0, got "
                             f"{base_lrs!r}")
        self._go_to(int(last_epoch), base_lrs)


class LambdaLR(LRScheduler):
    r"""``lr = initial_lr * lr_lambda(step)``: the hook for any schedule.

    ``lr_lambda``: a function of the step, or one per parameter group.

    Example:
        >>> scheduler = LambdaLR(opt, lambda step: 0.95 ** step)
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        _check_optimizer("LambdaLR", optimizer)
        groups = len(optimizer.param_groups)
        lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) \
            else [lr_lambda] * groups
        if len(lambdas) != groups or not all(callable(f) for f in lambdas):
            raise ValueError(f"LambdaLR: lr_lambda must be a function or a list of {groups} "
                             f"functions (one per parameter group), got {lr_lambda!r}")
        self.lr_lambdas = lambdas
        super().__init__(optimizer, last_epoch)

    def lr_at(self, step, base_lr, group_index):
        """``base_lr * lr_lambda(step)``."""
        return base_lr * self.lr_lambdas[group_index](step)


class LinearLR(LRScheduler):
    r"""Linear ramp of the factor, then constant: :math:`\eta_t = \eta_0 (s + (e - s)
    \min(t, T) / T)` with s = ``start_factor``, e = ``end_factor``, T = ``total_iters``."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1] and end_factor in "
                             f"[0, 1], got {start_factor!r} and {end_factor!r}")
        check_positive_ints("LinearLR", total_iters=total_iters)
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def lr_at(self, step, base_lr, group_index):
        """The ramped rate at ``step``."""
        progress = min(step, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress)


class CosineAnnealingLR(LRScheduler):
    r"""Cosine decay to ``eta_min`` over ``T_max`` steps:
    :math:`\eta_t = \eta_{min} + \tfrac12(\eta_0 - \eta_{min})(1 + \cos(\pi t / T_{max}))`."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        check_positive_ints("CosineAnnealingLR", T_max=T_max)
        check_number("CosineAnnealingLR", "eta_min", eta_min)
        if eta_min < 0:
            raise ValueError(f"CosineAnnealingLR: eta_min must be a non-negative number, "
                             f"got {eta_min!r}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, step, base_lr, group_index):
        """The annealed rate at ``step``."""
        cosine = 1 + math.cos(math.pi * step / self.T_max)
        return self.eta_min + (base_lr - self.eta_min) * cosine / 2


def warmup_cosine(warmup_steps, total_steps, min_factor=0.0):
    """nanoGPT's schedule as a ``LambdaLR`` factor: linear warmup (t + 1)/W over
    ``warmup_steps``, then a cosine from 1 to ``min_factor`` at ``total_steps``.

    Example:
        >>> scheduler = LambdaLR(opt, warmup_cosine(10, 200, min_factor=0.1))
    """
    check_positive_ints("warmup_cosine", total_steps=total_steps)
    if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) \
            or not 0 <= warmup_steps < total_steps:
        raise ValueError(f"warmup_cosine: warmup_steps must be an int in [0, total_steps="
                         f"{total_steps}), got {warmup_steps!r}")
    check_number("warmup_cosine", "min_factor", min_factor)
    if not 0 <= min_factor <= 1:
        raise ValueError(f"warmup_cosine: min_factor must be in [0, 1], got {min_factor!r}")

    def factor(step):
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
        return min_factor + (1 - min_factor) * (1 + math.cos(math.pi * progress)) / 2

    return factor


def _check_optimizer(where, optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{where}: optimizer must be an optim.Optimizer, got "
                        f"{type(optimizer).__name__}")

