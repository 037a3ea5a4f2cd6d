"""Learning-rate schedules with ``torch.optim.lr_scheduler``'s names and semantics: each a
function of the step (docs/training.md, "Learning-rate schedules"), the recursive ones
(StepLR, MultiStepLR, ExponentialLR, ConstantLR, MultiplicativeLR, PolynomialLR, LinearLR,
CosineAnnealingLR) computed as torch's chains of updates, bit for bit; ReduceLROnPlateau
follows a metric instead. The base class is in ``lr_base.py``; the cyclic schedules and
ChainedScheduler are in ``lr_cycles.py``; both re-exported here."""

import bisect
import math
import warnings

from ..dtypes import check_number, check_positive_ints
from . import lr_scheduler_state
from .option_numbers import kept_number
from .lr_base import (EPOCH_DEPRECATION_WARNING, LRScheduler, _check_optimizer,
                      _cooldown_running, _int_list, _LRScheduler, _lr_lambdas, _members,
                      _momentum_kind, _per_group, _write_momentum, lr_value, set_lr)
from .lr_cycles import ChainedScheduler, CosineAnnealingWarmRestarts, CyclicLR

__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR",
           "MultiStepLR", "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau",
           "SequentialLR", "StepLR", "_LRScheduler", "warmup_cosine"]


class LambdaLR(LRScheduler):
    r"""``lr = initial_lr * lr_lambda(step)``: the hook for any schedule.

    ``lr_lambda``: a function of the step, or one per parameter group.

    Example:
        >>> scheduler = LambdaLR(opt, lambda step: 0.95 ** step)
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _lr_lambdas("LambdaLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, step, base_lr, group_index):
        """``base_lr * lr_lambda(step)``."""
        return base_lr * self.lr_lambdas[group_index](step)


class _Recursive(LRScheduler):
    # A schedule torch writes as an update of the current rate, lr_t = f(t, lr_{t-1})
    # (``chain_step``): updated here the same way, so the rates agree with torch's bit for
    # bit. A step updates the rate the group holds, as torch's: a rate changed from outside,
    # or by another schedule, goes on from there; a jump (load_state_dict) walks the chain
    # from the base rate.

    def lr_at(self, step, base_lr, group_index):
        """The rate at ``step``: ``base_lr`` through every update up to it, in order."""
        if getattr(self, "_last_lr", None) is not None and step == self.last_epoch + 1 \
                and base_lr == self.base_lrs[group_index]:
            current = self.optimizer.param_groups[group_index]["lr"]
            return self.chain_step(step, lr_value(current), group_index)
        lr = base_lr
        for at in range(step + 1):
            lr = self.chain_step(at, lr, group_index)
        return lr


class LinearLR(_Recursive):
    r"""Linear ramp of the factor, then constant: :math:`\eta_t = \eta_0 (s + (e - s)
    \min(t, T) / T)` with s = ``start_factor``, e = ``end_factor``, T = ``total_iters``,
    computed as torch's recursive update of the rate (bit for bit)."""

    keeps_rate_on_resume = True

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1] and end_factor in "
                             f"[0, 1], got {start_factor!r} and {end_factor!r}")
        check_positive_ints("LinearLR", total_iters=total_iters)
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def closed_form(self, step, group_index):
        """The ramped rate at ``step`` from the base rate (torch's order of operations)."""
        ramp = (self.end_factor - self.start_factor) * min(self.total_iters, step)
        return self.base_lrs[group_index] * (self.start_factor + ramp / self.total_iters)

    def chain_step(self, step, lr, group_index):
        """torch's recursive update of the current rate ``lr``."""
        start, end, total = self.start_factor, self.end_factor, self.total_iters
        if step == 0:
            return lr * start
        if step > total:
            return lr
        return lr * (1.0 + (end - start) / (total * start + (step - 1) * (end - start)))


class CosineAnnealingLR(_Recursive):
    r"""Cosine decay to ``eta_min`` over ``T_max`` steps (and back up over the next T_max):
    :math:`\eta_t = \eta_{min} + \tfrac12(\eta_0 - \eta_{min})(1 + \cos(\pi t / T_{max}))`,
    computed as torch's recursive update of the rate (bit for bit; the closed form differs
    from it in the last bits, and more past the first trough)."""

    keeps_rate_on_resume = True

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        check_positive_ints("CosineAnnealingLR", T_max=T_max)
        eta_min = kept_number("CosineAnnealingLR", "eta_min", eta_min)
        if eta_min < 0:
            raise ValueError(f"CosineAnnealingLR: eta_min must be a non-negative number, "
                             f"got {eta_min!r}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def closed_form(self, step, group_index):
        """The annealed rate at ``step`` from the base rate."""
        cosine = 1 + math.cos(math.pi * step / self.T_max)
        return self.eta_min + (self.base_lrs[group_index] - self.eta_min) * cosine / 2

    def chain_step(self, step, lr, group_index):
        """torch's recursive update of the current rate ``lr``."""
        if step == 0:
            return lr
        if (step - 1 - self.T_max) % (2 * self.T_max) == 0:     # the trough: cos/cos is 0/0
            base_lr = self.base_lrs[group_index]
            return lr + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
        ratio = (1 + math.cos(math.pi * step / self.T_max)) \
            / (1 + math.cos(math.pi * (step - 1) / self.T_max))
        return ratio * (lr - self.eta_min) + self.eta_min


class _Multiplicative(_Recursive):
    # A schedule torch writes as a chain of products, lr_t = lr_{t-1} * factor(t):
    # multiplied here the same way, in the same order (a closed form gamma ** k differs
    # from torch's rates in the last bits).

    def step_factor(self, step, group_index):
        """The multiplier applied at ``step`` >= 1, or None where the rate stays."""
        raise NotImplementedError

    def first_factor(self):
        """The multiplier of step 0, the scheduler's first (None: the rate stays)."""
        return None

    def chain_step(self, step, lr, group_index):
        """The rate at ``step`` from the rate ``lr`` of the step before: one link."""
        factor = self.first_factor() if step == 0 else self.step_factor(step, group_index)
        return lr if factor is None else lr * factor


class StepLR(_Multiplicative):
    r"""Decay by ``gamma`` every ``step_size`` steps:
    :math:`\eta_t = \eta_0\, \gamma^{\lfloor t / \text{step\_size} \rfloor}`
    (one product per decay, as torch computes it).

    ``step_size`` may be a positive float, as torch takes it (``StepLR(opt, 1.0, gamma=0.1)``,
    the text-classification tutorial's call): the decays fall where ``t % step_size == 0``.

    Example:
        >>> scheduler = StepLR(opt, step_size=30, gamma=0.1)
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        if isinstance(step_size, float):
            if not (step_size > 0 and math.isfinite(step_size)):
                raise ValueError(f"StepLR: step_size must be positive and finite, got "
                                 f"{step_size!r}")
        else:
            check_positive_ints("StepLR", step_size=step_size)
        gamma = kept_number("StepLR", "gamma", gamma)
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def step_factor(self, step, group_index):
        """``gamma`` at each multiple of ``step_size``."""
        return self.gamma if step % self.step_size == 0 else None

    def closed_form(self, step, group_index):
        """``base_lr * gamma ** (step // step_size)``."""
        return self.base_lrs[group_index] * self.gamma ** (step // self.step_size)


class MultiStepLR(_Multiplicative):
    r"""Decay by ``gamma`` at each milestone: :math:`\eta_t = \eta_0\,\gamma^{k}`, k the
    number of milestones at or before t (a milestone listed twice counts twice, as in torch).

    Example:
        >>> scheduler = MultiStepLR(opt, milestones=[30, 80], gamma=0.1)
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        milestones = _int_list("MultiStepLR", "milestones", milestones)
        gamma = kept_number("MultiStepLR", "gamma", gamma)
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def step_factor(self, step, group_index):
        """``gamma ** n`` at a milestone listed n times."""
        count = self.milestones.count(step)
        return self.gamma ** count if count else None

    def first_factor(self):
        """A milestone at 0 counts from the start, as in torch."""
        return self.step_factor(0, 0)

    def closed_form(self, step, group_index):
        """``base_lr * gamma ** k``, k the milestones at or before ``step``."""
        passed = bisect.bisect_right(self.milestones, step)
        return self.base_lrs[group_index] * self.gamma ** passed


class ExponentialLR(_Multiplicative):
    r"""Decay by ``gamma`` every step: :math:`\eta_t = \eta_0\, \gamma^t` (t products).

    Example:
        >>> scheduler = ExponentialLR(opt, gamma=0.95)
    """

    keeps_rate_on_resume = True

    def __init__(self, optimizer, gamma, last_epoch=-1):
        gamma = kept_number("ExponentialLR", "gamma", gamma)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def step_factor(self, step, group_index):
        """``gamma``, every step."""
        return self.gamma

    def closed_form(self, step, group_index):
        """``base_lr * gamma ** step``."""
        return self.base_lrs[group_index] * self.gamma ** step


class ConstantLR(_Multiplicative):
    r"""The rate times ``factor`` for the first ``total_iters`` steps, then the rate itself:
    :math:`\eta_t = \eta_0 f` for t < T, :math:`\eta_0 f \cdot (1/f)` from T on (torch's
    two products; a factor of 0 makes step T a ZeroDivisionError, as in torch).

    Example:
        >>> scheduler = ConstantLR(opt, factor=0.5, total_iters=4)
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        factor = kept_number("ConstantLR", "factor", factor)
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be in [0, 1] (the constant multiplicative "
                             f"factor), got {factor!r}")
        check_number("ConstantLR", "total_iters", total_iters, integer=True)
        if total_iters < 0:
            raise ValueError(f"ConstantLR: total_iters must be an int >= 0, got {total_iters!r}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def first_factor(self):
        """``factor``, from the start."""
        return self.factor

    def step_factor(self, step, group_index):
        """``1 / factor`` at ``total_iters``: the rate back to its base."""
        return 1.0 / self.factor if step == self.total_iters else None

    def closed_form(self, step, group_index):
        """``base_lr * factor`` before ``total_iters``, ``base_lr`` from it."""
        back = (step >= self.total_iters) * (1 - self.factor)
        return self.base_lrs[group_index] * (self.factor + back)


class MultiplicativeLR(_Multiplicative):
    r"""Multiply the rate by ``lr_lambda(t)`` at every step t >= 1:
    :math:`\eta_t = \eta_{t-1}\, \lambda(t)` (torch's chain of products).

    ``lr_lambda``: a function of the step, or one per parameter group; as for LambdaLR it is
    not saved in ``state_dict()``, and is called again for every step on a jump
    (``load_state_dict``), so it should depend on the step only.

    Example:
        >>> scheduler = MultiplicativeLR(opt, lr_lambda=lambda step: 0.95)
    """

    keeps_rate_on_resume = True
    restarts_from_rate = True

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _lr_lambdas("MultiplicativeLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def step_factor(self, step, group_index):
        """``lr_lambda(step)`` of the group."""
        return self.lr_lambdas[group_index](step)

    def closed_form(self, step, group_index):
        """No closed form (torch's ``get_lr``): the group's rate times ``lr_lambda(step)``."""
        return self.optimizer.param_groups[group_index]["lr"] * self.lr_lambdas[group_index](step)

    def restart_rate(self, lr, group_index):
        """At a SequentialLR's milestone, torch's ``get_lr`` at step 0 (no closed form): the
        current rate ``lr`` times ``lr_lambda(0)``."""
        return lr * self.lr_lambdas[group_index](0)


class PolynomialLR(_Multiplicative):
    r"""Polynomial decay to 0 over ``total_iters`` steps:
    :math:`\eta_t = \eta_0 (1 - \min(t, T)/T)^p`, computed as torch's chain of ratios
    :math:`\eta_t = \eta_{t-1} \big(\frac{1 - t/T}{1 - (t-1)/T}\big)^p` (bit for bit);
    ``total_iters=0`` keeps the rate, as torch's.

    Example:
        >>> scheduler = PolynomialLR(opt, total_iters=100, power=2.0)
    """

    keeps_rate_on_resume = True

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        check_number("PolynomialLR", "total_iters", total_iters, integer=True)
        if total_iters < 0:
            raise ValueError(f"PolynomialLR: total_iters must be an int >= 0, got "
                             f"{total_iters!r}")
        power = kept_number("PolynomialLR", "power", power)
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def step_factor(self, step, group_index):
        """The ratio of the decay at ``step`` to the decay at the step before, up to T."""
        if step > self.total_iters:
            return None
        total = self.total_iters
        return ((1.0 - step / total) / (1.0 - (step - 1) / total)) ** self.power

    def closed_form(self, step, group_index):
        """``base_lr * (1 - min(step, T) / T) ** power`` (T = 0: torch's ZeroDivisionError)."""
        decay = 1.0 - min(self.total_iters, step) / self.total_iters
        return self.base_lrs[group_index] * decay ** self.power


class OneCycleLR(LRScheduler):
    r"""The one-cycle policy (``torch.optim.lr_scheduler.OneCycleLR``): the rate rises from
    ``max_lr / div_factor`` to ``max_lr`` over the first ``pct_start`` of ``total_steps``,
    then anneals to ``initial_lr / final_div_factor``; ``three_phase=True`` comes back down to
    the initial rate symmetrically before the final annealing. Each phase interpolates

    .. math::
        \text{cos: } e + \tfrac{s - e}{2}(1 + \cos \pi p), \qquad
        \text{linear: } s + (e - s)\,p

    from its start s to its end e as p runs from 0 to 1. With ``cycle_momentum`` (the
    default) the momentum (SGD, RMSprop) or Adam's beta1 moves the opposite way between
    ``max_momentum`` and ``base_momentum``. As torch, it writes ``initial_lr``, ``max_lr``,
    ``min_lr`` (and ``max_momentum``, ``base_momentum``) into every parameter group, and
    stepping past ``total_steps`` is a ValueError.

    Args:
        max_lr: the peak rate, or one per parameter group.
        total_steps: the cycle's length; or give ``epochs`` and ``steps_per_epoch``.

    Example:
        >>> scheduler = OneCycleLR(opt, max_lr=0.1, total_steps=1000)
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        name = "OneCycleLR"
        _check_optimizer(name, optimizer)
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError(f"{name}: give total_steps, or epochs and steps_per_epoch")
            check_positive_ints(name, epochs=epochs, steps_per_epoch=steps_per_epoch)
            total_steps = epochs * steps_per_epoch
        check_positive_ints(name, total_steps=total_steps)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:   # torch's test
            raise ValueError(f"{name}: pct_start must be a float in [0, 1], got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{name}: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        div_factor, final_div_factor = (kept_number(name, option, value) for option, value in (
            ("div_factor", div_factor), ("final_div_factor", final_div_factor)))
        for option, value in (("div_factor", div_factor), ("final_div_factor", final_div_factor)):
            if not value > 0:
                raise ValueError(f"{name}: {option} must be positive, got {value!r}")
        if not isinstance(cycle_momentum, bool) or not isinstance(three_phase, bool):
            raise ValueError(f"{name}: cycle_momentum and three_phase must be True or False, "
                             f"got {cycle_momentum!r} and {three_phase!r}")
        groups = optimizer.param_groups
        max_lrs = _per_group(name, "max_lr", max_lr, len(groups))
        self.use_beta1 = _momentum_kind(name, optimizer, cycle_momentum)
        if cycle_momentum:
            momenta = list(zip(_per_group(name, "max_momentum", max_momentum, len(groups)),
                               _per_group(name, "base_momentum", base_momentum, len(groups))))
        self.total_steps, self.anneal_strategy = total_steps, anneal_strategy
        self.cycle_momentum = cycle_momentum
        self.phases = _one_cycle_phases(total_steps, pct_start, three_phase)
        if last_epoch == -1:
            for group, peak in zip(groups, max_lrs):
                group.update(initial_lr=peak / div_factor, max_lr=peak,
                             min_lr=peak / div_factor / final_div_factor)
            if cycle_momentum:
                for group, (top, bottom) in zip(groups, momenta):
                    group.update(max_momentum=top, base_momentum=bottom)
        super().__init__(optimizer, last_epoch)

    def _position(self, step):
        # (phase, fraction of it done) at ``step``; the last phase takes any later step
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; total_steps is "
                             f"{self.total_steps}")
        start = 0.0
        for number, phase in enumerate(self.phases):
            end = phase[0]
            if step <= end or number == len(self.phases) - 1:
                return phase, (step - start) / (end - start)
            start = end

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def lr_at(self, step, base_lr, group_index):
        """The rate of the phase ``step`` falls in (``base_lr`` is the initial rate)."""
        (_, lr_from, lr_to, _, _), pct = self._position(step)
        values = {**self.optimizer.param_groups[group_index], "initial_lr": base_lr}
        return self._anneal(values[lr_from], values[lr_to], pct)

    def _on_step(self, epoch):
        if not self.cycle_momentum:
            return
        (_, _, _, momentum_from, momentum_to), pct = self._position(epoch)
        for group in self.optimizer.param_groups:
            momentum = self._anneal(group[momentum_from], group[momentum_to], pct)
            _write_momentum(group, momentum, self.use_beta1)


class SequentialLR(LRScheduler):
    r"""Run ``schedulers`` one after another: the i-th from ``milestones[i - 1]`` on, counting
    its own steps from 0 there, as torch's milestones do
    (``torch.optim.lr_scheduler.SequentialLR``): its rate there is its closed form at step 0,
    from its own base rates (``initial_lr`` when it was made); MultiplicativeLR, which has
    none, multiplies the current rate by ``lr_lambda(0)``, and SWALR anneals from the
    current rate, as torch's. Made with
    ``last_epoch=k`` or loaded from a ``state_dict()``, it sets the rate of that step of the
    run from step 0, whatever rates the schedulers' own constructors left.

    Example:
        >>> warmup = LinearLR(opt, start_factor=0.1, total_iters=5)
        >>> decay = ExponentialLR(opt, gamma=0.9)
        >>> scheduler = SequentialLR(opt, [warmup, decay], milestones=[5])
    """

    checks_step_order = False              # torch's own step has no order check

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        name = "SequentialLR"
        _check_optimizer(name, optimizer)
        schedulers, _ = _members(name, schedulers, optimizer)
        milestones = _int_list(name, "milestones", milestones)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"{name}: expected {len(schedulers) - 1} milestones for "
                             f"{len(schedulers)} schedulers, got {len(milestones)}")
        self.schedulers, self.milestones = schedulers, milestones
        super().__init__(optimizer, last_epoch)
        if last_epoch == -1:              # torch's undo of the steps the others' made
            lr_scheduler_state.undo_waiting(self)

    def load_state_dict(self, state_dict):
        """Continue from a ``state_dict()`` (torch's: ``_milestones``, ``last_epoch``,
        ``_last_lr`` and every scheduler's state dict): the run to that step replayed."""
        lr_scheduler_state.load_composite(self, state_dict)

    def _initial_step(self):
        # step 0: the first scheduler's, from its own base rates (torch's reset); resumed
        # (last_epoch=k), step k + 1 of the run from step 0 (the members' constructors have
        # stepped from the checkpoint's rate, which is not that run)
        self._go_to(self.last_epoch + 1, self.base_lrs, jump=self.last_epoch >= 0)

    def step(self):
        """One step of the scheduler running there (torch's takes no epoch)."""
        scheduler, own_step = self._current(self.last_epoch + 1)
        if own_step:                               # its own step, with torch's order check
            scheduler._check_step_order()
        super().step()

    def get_lr(self):
        """torch's NotImplementedError: its schedulers compute the rates
        (``get_last_lr()`` reads the latest)."""
        raise NotImplementedError

    def _current(self, step):
        # the scheduler that runs at ``step``, and its own step count there
        index = bisect.bisect_right(self.milestones, step)
        return self.schedulers[index], step - (self.milestones[index - 1] if index else 0)

    def lr_at(self, step, base_lr, group_index):
        """The rate the scheduler running at ``step`` gives at its own step, from its own
        base rate."""
        scheduler, own_step = self._current(step)
        return scheduler.lr_at(own_step, scheduler.base_lrs[group_index], group_index)

    def chain_step(self, step, lr, group_index):
        """In a chain: the running scheduler's update of ``lr`` at its own step; at its own
        step 0 (a milestone) its rate there, as torch's restart sets it."""
        scheduler, own_step = self._current(step)
        if own_step == 0:
            return scheduler.restart_rate(lr, group_index)
        return scheduler.chain_step(own_step, lr, group_index)

    def _follow(self, epoch, lrs_in, lrs_out):
        scheduler, own_step = self._current(epoch)
        scheduler._follow(own_step, lrs_in, lrs_out)
        self.last_epoch, self._last_lr = epoch, list(lrs_out)

    def _go_to(self, epoch, base_lrs, jump=None):
        # a step, or a jump (load_state_dict, a resumed start), where what the members last
        # did is not this history: the run to ``epoch`` is replayed
        if jump is None:
            jump = epoch != self.last_epoch + 1
        saved = self._saved()
        try:
            if jump:
                self._replay(epoch)
            else:
                self._advance(epoch)
        except Exception:
            self._restore(saved)                        # a failure changes nothing
            raise
        self.base_lrs = base_lrs

    def _advance(self, epoch):
        # the step to ``epoch`` from ``epoch - 1``, whose rates the groups hold
        scheduler, own_step = self._current(epoch)
        if own_step == 0:
            # its start: it counts its own steps from here (its constructor's step is not
            # this run); at a milestone, its rate there from the current one (torch's restart)
            scheduler.last_epoch, scheduler._last_lr = -1, None
            if epoch == 0:
                scheduler._go_to(0, scheduler.base_lrs)
                scheduler._step_count = 1           # torch's constructor step, again
            else:
                scheduler._restart()
        else:
            scheduler._go_to(own_step, scheduler.base_lrs)
            scheduler._step_count = getattr(scheduler, "_step_count", 0) + 1
        self.last_epoch, self._last_lr = epoch, scheduler.get_last_lr()

    def _replay(self, epoch):
        # the steps to ``epoch`` from the milestone before it; a scheduler that starts from
        # the rate the one before left (restarts_from_rate) needs that one's steps first
        scheduler, own_step = self._current(epoch)
        start = epoch - own_step
        if start > 0 and scheduler.restarts_from_rate:
            self._replay(start - 1)
        for step in range(start, epoch + 1):
            self._advance(step)

    def _saved(self):
        # what a step or a jump may change: the groups' entries and the attributes of every
        # scheduler inside (of a chain or sequence inside too)
        schedulers, todo = [], [self]
        while todo:
            scheduler = todo.pop()
            schedulers.append(scheduler)
            todo.extend(getattr(scheduler, "schedulers", None)
                        or getattr(scheduler, "_schedulers", []))
        return ([dict(group) for group in self.optimizer.param_groups],
                [(scheduler, dict(vars(scheduler))) for scheduler in schedulers])

    def _restore(self, saved):
        groups, schedulers = saved
        for group, entries in zip(self.optimizer.param_groups, groups):
            group.clear()
            group.update(entries)
        for scheduler, attributes in schedulers:
            vars(scheduler).clear()
            vars(scheduler).update(attributes)


class ReduceLROnPlateau(LRScheduler):
    r"""Multiply the rate by ``factor`` when a metric has not improved for more than
    ``patience`` steps (``torch.optim.lr_scheduler.ReduceLROnPlateau``): call
    ``step(metric)``. Improving means below :math:`b (1 - \text{threshold})` (mode "min",
    threshold_mode "rel"), :math:`b - \text{threshold}` ("abs"), or above
    :math:`b (1 + \text{threshold})`, :math:`b + \text{threshold}` (mode "max"), b the best
    so far. After a reduction, ``cooldown`` steps count no bad steps; a rate never goes below
    ``min_lr`` (one per group, or one for all), and a change smaller than ``eps`` is skipped.

    Example:
        >>> scheduler = ReduceLROnPlateau(opt, patience=3)
        >>> for epoch in range(50):
        ...     scheduler.step(validation_loss(model))
    """

    steps_with_metric = True

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        name = "ReduceLROnPlateau"
        _check_optimizer(name, optimizer)
        factor = kept_number(name, "factor", factor)
        if not factor < 1.0:
            raise ValueError(f"{name}: factor must be below 1.0, got {factor!r}")
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise ValueError(f"{name}: mode must be 'min' or 'max' and threshold_mode 'rel' or "
                             f"'abs', got {mode!r} and {threshold_mode!r}")
        for option, value in (("patience", patience), ("cooldown", cooldown)):
            check_number(name, option, value, integer=True)
        threshold = kept_number(name, "threshold", threshold)
        eps = kept_number(name, "eps", eps)
        self.min_lrs = _per_group(name, "min_lr", min_lr, len(optimizer.param_groups))
        self.default_min_lr = None if isinstance(min_lr, (list, tuple)) else min_lr
        self.optimizer, self.mode, self.factor = optimizer, mode, factor
        self.patience, self.threshold, self.threshold_mode = patience, threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.last_epoch, self.best = 0, math.inf if mode == "min" else -math.inf
        self.num_bad_epochs, self.cooldown_counter = 0, 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def _is_better(self, metric, best):
        # torch's hook, a subclass's to override: ``metric`` beats ``best`` by the threshold
        if self.threshold_mode == "rel":
            scale = 1 - self.threshold if self.mode == "min" else 1 + self.threshold
            return metric < best * scale if self.mode == "min" else metric > best * scale
        if self.mode == "min":
            return metric < best - self.threshold
        return metric > best + self.threshold

    in_cooldown = property(_cooldown_running)

    def step(self, metrics, epoch=None):
        """Count a step with the metric (a number or 1-element Tensor); ``epoch``: deprecated."""
        current = float(metrics)
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:                        # bad steps in a cooldown do not count
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(self.last_epoch)
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [lr_value(group["lr"]) for group in self.optimizer.param_groups]

    def _reduce_lr(self, epoch):
        # torch's hook (a subclass may override it): every group's rate times ``factor``
        for group, floor in zip(self.optimizer.param_groups, self.min_lrs):
            reduced = max(float(group["lr"]) * self.factor, floor)
            if float(group["lr"]) - reduced > self.eps:
                set_lr(group, reduced)

    def lr_at(self, step, base_lr, group_index):
        """Not a function of the step: the rate depends on the metrics seen."""
        raise TypeError("ReduceLROnPlateau: the rate depends on the metrics, not the step")

    def get_lr(self):
        """torch's NotImplementedError: the rate follows the metrics (``get_last_lr()``)."""
        raise NotImplementedError

    def load_state_dict(self, state_dict):
        """Continue from a ``state_dict()`` (torch's keys: the options, the counters, the
        best metric and the last rates; the rates themselves are in the optimizer's)."""
        lr_scheduler_state.load_plateau(self, state_dict)


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


def _one_cycle_phases(total_steps, pct_start, three_phase):
    # (last step, lr from, lr to, momentum from, momentum to), the ends as group keys: torch's
    rise = float(pct_start * total_steps) - 1
    if not three_phase:
        return [(rise, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
    return [(rise, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
            (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
             "max_momentum"),
            (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]

