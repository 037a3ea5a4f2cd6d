"""The schedules that restart (``CyclicLR``, ``CosineAnnealingWarmRestarts``) and
``ChainedScheduler``, with ``torch.optim.lr_scheduler``'s names and semantics; re-exported
by ``lr_scheduler``, where users find them."""

import math

from ..dtypes import check_number
from . import lr_scheduler_state
from .option_numbers import kept_number
from .lr_base import (LRScheduler, _check_optimizer, _members, _momentum_kind, _per_group,
                      _write_momentum, lr_value, set_lr)

__all__ = ["ChainedScheduler", "CosineAnnealingWarmRestarts", "CyclicLR"]


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing with warm restarts (SGDR; ``torch.optim.lr_scheduler``'s):

    .. math::
        \eta = \eta_{min} + \tfrac12(\eta_0 - \eta_{min})(1 + \cos(\pi T_{cur} / T_i))

    with :math:`T_{cur}` the steps since the last restart and :math:`T_i` the length of the
    current cycle: ``T_0`` first, ``T_mult`` times longer after each restart. ``step()``
    advances by one; ``step(epoch)`` goes to ``epoch``, which may be fractional (call it
    after every batch with ``epoch + i / iters``), with torch's formula for the cycle. Over
    whole steps the rate is a closed form of the step; after a fractional epoch the position
    in the cycle is part of the state, so ``state_dict()`` also holds ``T_cur`` and ``T_i``.

    Args:
        T_0: the first cycle's length, a positive int.
        T_mult: how much longer each cycle is than the one before, an int >= 1.
        eta_min: the rate at the end of a cycle.

    Example:
        >>> scheduler = CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2)
        >>> for epoch in range(30):
        ...     for i in range(iters):
        ...         scheduler.step(epoch + i / iters)
    """

    checks_step_order = False              # torch's own step has no order check

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        name = "CosineAnnealingWarmRestarts"
        if isinstance(T_0, bool) or not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"{name}: T_0 must be a positive int, got {T_0!r}")
        if isinstance(T_mult, bool) or not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"{name}: T_mult must be an int >= 1, got {T_mult!r}")
        if not isinstance(eta_min, (float, int)):              # torch's test: a bool passes
            raise ValueError(f"{name}: eta_min must be a float or an int, got {eta_min!r}")
        self.T_0, self.T_mult, self.eta_min = T_0, T_mult, eta_min
        self.T_i, self.T_cur = T_0, last_epoch
        super().__init__(optimizer, last_epoch)

    def _cycle(self, step):
        # (T_cur, T_i) at a whole step: torch's recursion, exact in integers
        if self.T_mult == 1:
            return step % self.T_0, self.T_0
        position, length = step, self.T_0
        while position >= length:
            position, length = position - length, length * self.T_mult
        return position, length

    def _rate(self, base_lr, position, length):
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * position
                                                                       / length)) / 2

    def _position(self, step):
        # (T_cur, T_i) at the whole step ``step``: for the next step, torch's recursion from
        # the current place (which a fractional epoch or a resumed start moves off the
        # closed form); for any other, counted from the start
        if step != self.last_epoch + 1 or self.last_epoch < 0:
            return self._cycle(step)
        position, length = self.T_cur + 1, self.T_i
        if position >= length:
            position, length = position % length, length * self.T_mult
        return position, length

    def lr_at(self, step, base_lr, group_index):
        """The rate at the whole step ``step``."""
        return self._rate(base_lr, *self._position(step))

    def _on_step(self, epoch):
        # every whole step moves the place in the cycle: its own, a chain's, a jump
        self.T_cur, self.T_i = self._position(epoch)

    def step(self, epoch=None):
        """One step on, or to ``epoch`` (a number >= 0, fractional or not) as torch goes."""
        if epoch is None and self.last_epoch >= 0:
            super().step()
            return
        epoch = 0 if epoch is None else epoch
        check_number("CosineAnnealingWarmRestarts.step", "epoch", epoch)
        if epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts.step: epoch must be >= 0, got "
                             f"{epoch!r}")
        if epoch < self.T_0:
            position, length = epoch, self.T_0
        elif self.T_mult == 1:
            position, length = epoch % self.T_0, self.T_0
        else:                    # torch's closed form: the cycle n from a logarithm
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            position = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            length = self.T_0 * self.T_mult ** n
        self._set(math.floor(epoch), position, length)

    def _set(self, last_epoch, position, length):
        lrs = [self._rate(base, position, length) for base in self.base_lrs]
        self.last_epoch, self.T_cur, self.T_i = last_epoch, position, length
        for group, lr in zip(self.optimizer.param_groups, lrs):
            set_lr(group, lr)
        self._last_lr = lrs

    def load_state_dict(self, state_dict):
        """Continue from a ``state_dict()`` (torch's keys); sets the parameter groups' ``lr``
        to match, at the saved place in the cycle (``T_cur``, ``T_i``)."""
        name = "CosineAnnealingWarmRestarts.load_state_dict"
        keys = {"last_epoch", "base_lrs", "T_cur", "T_i"}
        if not isinstance(state_dict, dict) or not keys <= set(state_dict):
            raise ValueError(f"{name}: expected keys {sorted(keys)}, got {state_dict!r}")
        check_number(name, "T_cur", state_dict["T_cur"])
        check_number(name, "T_i", state_dict["T_i"])
        first = state_dict.get("T_0", self.T_0)
        if not 0 <= state_dict["T_cur"] < state_dict["T_i"] or state_dict["T_i"] < first:
            raise ValueError(f"{name}: T_cur must be in [0, T_i) and T_i >= T_0={first}, "
                             f"got T_cur={state_dict['T_cur']!r}, T_i={state_dict['T_i']!r}")
        super().load_state_dict(state_dict)
        self._set(self.last_epoch, state_dict["T_cur"], state_dict["T_i"])


class CyclicLR(LRScheduler):
    r"""The cyclical learning rate policy (``torch.optim.lr_scheduler.CyclicLR``): the rate
    runs from ``base_lr`` up to ``max_lr`` over ``step_size_up`` steps and back down over
    ``step_size_down`` (default: the same), the height of cycle c scaled by

    .. math::
        \text{triangular: } 1, \qquad \text{triangular2: } 2^{1-c}, \qquad
        \text{exp\_range: } \gamma^{t}

    (or by ``scale_fn``, of the cycle or of the step as ``scale_mode`` says). A closed form
    of the step t. As torch: building it sets each group's rate to ``base_lr``; with
    ``cycle_momentum`` (the default) the momentum (SGD, RMSprop) or Adam's beta1 moves the
    opposite way between ``max_momentum`` and ``base_momentum``, which it writes into the
    groups; ``step()`` is meant to be called after every batch.

    Args:
        base_lr, max_lr: the bounds, one number or one per parameter group.
        step_size_up, step_size_down: the steps of the rising and the falling half.
        mode: "triangular", "triangular2" or "exp_range" (ignored with a ``scale_fn``).

    Example:
        >>> scheduler = CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=10)
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        name = "CyclicLR"
        _check_optimizer(name, optimizer)
        groups = optimizer.param_groups
        base_lrs = _per_group(name, "base_lr", base_lr, len(groups))
        self.max_lrs = _per_group(name, "max_lr", max_lr, len(groups))
        up = self._half(step_size_up, "step_size_up")
        down = up if step_size_down is None else self._half(step_size_down, "step_size_down")
        self.total_size, self.step_ratio = up + down, up / (up + down)
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"{name}: mode must be 'triangular', 'triangular2' or "
                             f"'exp_range' when scale_fn is None, got {mode!r}")
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"{name}: scale_fn must be a function, got "
                            f"{type(scale_fn).__name__}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"{name}: scale_mode must be 'cycle' or 'iterations', got "
                             f"{scale_mode!r}")
        gamma = kept_number(name, "gamma", gamma)
        self.use_beta1 = _momentum_kind(name, optimizer, cycle_momentum)
        self.mode, self.gamma, self._scale_fn_custom = mode, gamma, scale_fn
        # the built-in modes fix what they scale by, as torch's do
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums = _per_group(name, "base_momentum", base_momentum, len(groups))
            self.max_momentums = _per_group(name, "max_momentum", max_momentum, len(groups))
        if last_epoch == -1:
            for group, lr in zip(groups, base_lrs):
                set_lr(group, lr)
            if cycle_momentum:
                for group, top, bottom in zip(groups, self.max_momentums, self.base_momentums):
                    _write_momentum(group, top, self.use_beta1)
                    group.update(max_momentum=top, base_momentum=bottom)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs           # after the first step, as torch sets them

    @staticmethod
    def _half(value, name):
        value = kept_number("CyclicLR", name, value)
        if not value > 0 and not (name == "step_size_down" and value == 0):
            raise ValueError(f"CyclicLR: {name} must be a positive number, got {value!r}")
        return float(value)

    def scale_fn(self, x):
        """The height's scale at cycle (or step) ``x``: the mode's, or ``scale_fn``'s."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def _place(self, step):
        # (the cycle, 1-based; the fraction of the height reached at ``step``), torch's way
        cycle = math.floor(1 + step / self.total_size)
        x = 1.0 + step / self.total_size - cycle
        if x <= self.step_ratio:
            return cycle, x / self.step_ratio
        return cycle, (x - 1) / (self.step_ratio - 1)

    def _scale(self, step, cycle):
        return self.scale_fn(cycle if self.scale_mode == "cycle" else step)

    def lr_at(self, step, base_lr, group_index):
        """``base_lr`` plus the scaled height reached at ``step``."""
        cycle, fraction = self._place(step)
        height = (self.max_lrs[group_index] - base_lr) * fraction
        return base_lr + height * self._scale(step, cycle)

    def _on_step(self, epoch):
        if not self.cycle_momentum:
            return
        cycle, fraction = self._place(epoch)
        for group, bottom, top in zip(self.optimizer.param_groups, self.base_momentums,
                                      self.max_momentums):
            momentum = top - (top - bottom) * fraction * self._scale(epoch, cycle)
            _write_momentum(group, momentum, self.use_beta1)


class ChainedScheduler(LRScheduler):
    r"""Step several schedulers of one optimizer at once, composed as torch composes them
    (``torch.optim.lr_scheduler.ChainedScheduler``): at each step every scheduler, in order,
    turns the current rate into its next one; a multiplicative schedule (StepLR,
    ExponentialLR, ConstantLR, LinearLR, PolynomialLR, ...) scales it, CosineAnnealingLR
    follows torch's recursive update, and a closed form (LambdaLR, OneCycleLR, CyclicLR, ...)
    replaces it. A chain inside the chain composes its own schedulers the same way; a
    SequentialLR updates the rate by the scheduler running there, and at a milestone sets
    that one's first rate. The schedulers must be at the same step (freshly made, as a
    rule); the rate before the first step is the one their constructors left, as in torch.
    ``state_dict()`` holds torch's: the last rates and each scheduler's ``state_dict()``.

    Example:
        >>> scheduler = ChainedScheduler([ConstantLR(opt, factor=0.1, total_iters=2),
        ...                               ExponentialLR(opt, gamma=0.9)], optimizer=opt)
    """

    checks_step_order = False              # torch's own step has no order check

    def __init__(self, schedulers, optimizer=None):
        name = "ChainedScheduler"
        schedulers, optimizer = _members(name, schedulers, optimizer)
        steps = sorted({scheduler.last_epoch for scheduler in schedulers})
        if len(steps) != 1:
            raise ValueError(f"{name}: the schedulers are at different steps {steps}; chain "
                             f"schedulers made together")
        self.optimizer, self._schedulers = optimizer, schedulers
        self.base_lrs = [lr_value(group["initial_lr"]) for group in optimizer.param_groups]
        self.last_epoch = steps[0]
        # read, not written: each scheduler's constructor already stepped from the rate the
        # one before it left
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def step(self):
        """One step of every scheduler, in order (torch's takes no epoch)."""
        if any(scheduler._own_get_lr for scheduler in self._schedulers):
            self._step_each()
            return
        for scheduler in self._schedulers:       # each one's own step checks the order
            scheduler._check_step_order()
        super().step()
        for scheduler in self._schedulers:       # and counts the step, as torch's
            scheduler._step_count = getattr(scheduler, "_step_count", 0) + 1

    def _step_each(self):
        # a user's scheduler (its own get_lr) in the chain: torch's loop, each scheduler
        # stepping from the rates the one before it left in the groups
        groups = self.optimizer.param_groups
        for scheduler in self._schedulers:
            if scheduler._own_get_lr:
                scheduler.step()
                continue
            scheduler._check_step_order()
            epoch, rates = scheduler.last_epoch + 1, [lr_value(group["lr"]) for group in groups]
            lrs = [scheduler.chain_step(epoch, lr, i) for i, lr in enumerate(rates)]
            scheduler._follow(epoch, rates, lrs)
            for group, lr in zip(groups, lrs):
                set_lr(group, lr)
            scheduler._step_count = getattr(scheduler, "_step_count", 0) + 1
        self.last_epoch += 1
        self._last_lr = [group["lr"] for group in groups]

    def get_lr(self):
        """torch's NotImplementedError: its schedulers compute the rates
        (``get_last_lr()`` reads the latest)."""
        raise NotImplementedError

    def _rates(self, step, base_lr, group_index):
        # the rate before ``step`` and after each scheduler at it: from the composed rate of
        # the step before (kept), or walked from the base rate on a jump
        last = getattr(self, "_last_lr", None)
        if last is not None and step == self.last_epoch + 1 \
                and base_lr == self.base_lrs[group_index]:
            lr = last[group_index]
        else:
            lr = base_lr
            for at in range(step):
                lr = self.chain_step(at, lr, group_index)
        rates = [lr]
        for scheduler in self._schedulers:
            rates.append(scheduler.chain_step(step, rates[-1], group_index))
        return rates

    def chain_step(self, step, lr, group_index):
        """Every scheduler's update of ``lr`` at ``step``, in order (a chain in a chain)."""
        for scheduler in self._schedulers:
            lr = scheduler.chain_step(step, lr, group_index)
        return lr

    def lr_at(self, step, base_lr, group_index):
        """The composed rate at ``step``."""
        return self._rates(step, base_lr, group_index)[-1]

    def _go_to(self, epoch, base_lrs):
        # every rate first: a schedule that raises leaves everything as it was
        rates = [self._rates(epoch, base, i) for i, base in enumerate(base_lrs)]
        for index, scheduler in enumerate(self._schedulers):
            scheduler._follow(epoch, [group_rates[index] for group_rates in rates],
                              [group_rates[index + 1] for group_rates in rates])
        self._commit(epoch, base_lrs, [group_rates[-1] for group_rates in rates])

    def _follow(self, epoch, lrs_in, lrs_out):
        # a chain inside a chain: its schedulers follow in turn, from the rates handed in
        lrs = list(lrs_in)
        for scheduler in self._schedulers:
            out = [scheduler.chain_step(epoch, lr, i) for i, lr in enumerate(lrs)]
            scheduler._follow(epoch, lrs, out)
            lrs = out
        self.last_epoch, self._last_lr = epoch, list(lrs_out)

    def load_state_dict(self, state_dict):
        """Continue from a ``state_dict()`` (torch's: ``_last_lr`` and every scheduler's
        state dict): every scheduler's options, the composed rate of their step (walked from
        the base rates), then each one's count and last rates as saved."""
        lr_scheduler_state.load_composite(self, state_dict)
