"""Weight averaging (``torch.optim.swa_utils``): ``AveragedModel`` keeps a running average of
a model's parameters (stochastic weight averaging's equal weights, or an exponential moving
average), ``update_bn`` recomputes the BatchNorm statistics of the averaged weights from
data, and ``SWALR`` anneals the learning rate to a constant for the averaging phase.

The averaged weights never saw the batches whose statistics BatchNorm's running buffers
hold: either average the buffers too (``use_buffers=True``) or pass the data through once
more with ``update_bn``, which resets each BatchNorm's running statistics and accumulates
them as a cumulative average (``momentum=None``) over the loader.

Example:
    >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    >>> for x, y in loader:
    ...     loss_fn(model(x), y).backward(); opt.step(); opt.zero_grad()
    ...     ema.update_parameters(model)
"""

import copy
import itertools
import math
import numbers

from ..autograd import no_grad
from ..tensor import tensor as _tensor
from ..nn.module import Module
from ..nn.normalization import _BatchNorm
from .lr_base import _check_optimizer, _checked_state, _per_group
from .lr_scheduler import _Recursive

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]


def _check_decay(decay):
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    r"""The in-place exponential moving average of lists of parameters:
    :math:`W^{ema} \leftarrow W^{ema} + (1 - \text{decay})(W^{model} - W^{ema})` (torch's
    ``lerp_``), for ``AveragedModel(multi_avg_fn=...)``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_params, current_params, _):
        for ema, current in zip(ema_params, current_params):
            if ema.is_floating_point() or ema.is_complex():
                ema.lerp_(current, 1 - decay)
            else:
                ema.copy_(ema * decay + current * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    r"""The in-place equal-weight average of lists of parameters, with n already averaged:
    :math:`W^{swa} \leftarrow W^{swa} + (W^{model} - W^{swa}) / (n + 1)`."""
    @no_grad()
    def swa_update(averaged_params, current_params, num_averaged):
        n = int(num_averaged)
        for averaged, current in zip(averaged_params, current_params):
            if averaged.is_floating_point() or averaged.is_complex():
                averaged.lerp_(current, 1 / (n + 1))
            else:
                averaged.add_((current - averaged) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    r"""The exponential moving average of one parameter, returned:
    :math:`\text{decay}\, W^{ema} + (1 - \text{decay}) W^{model}`."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    r"""The equal-weight average of one parameter, returned:
    :math:`W^{swa} + (W^{model} - W^{swa}) / (n + 1)`."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) are the
    running average of ``model``'s at each ``update_parameters(model)``; the first call
    copies them. Without ``avg_fn`` or ``multi_avg_fn`` the average is SWA's equal-weight
    one; ``n_averaged`` (a long buffer) counts the calls. Its forward is the copy's.

    Args:
        model: the Module to average (deep-copied).
        device: where the copy lives (None: where ``model`` is).
        avg_fn: ``fn(averaged, current, n_averaged) -> new averaged`` per parameter.
        multi_avg_fn: ``fn(averaged_list, current_list, n_averaged)``, in place.
        use_buffers: average the buffers too; else they are copied from ``model``.
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor(0, dtype="int64", device=device or "cpu"))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Average ``model``'s parameters (and buffers, with ``use_buffers``) into this
        copy's; copy its buffers otherwise."""
        ours = itertools.chain(self.module.parameters(), self.module.buffers()) \
            if self.use_buffers else self.parameters()
        theirs = itertools.chain(model.parameters(), model.buffers()) \
            if self.use_buffers else model.parameters()
        averaged, current = [], []
        first = int(self.n_averaged) == 0
        for mine, other in zip(ours, theirs):
            other = other.detach().to(mine.device)
            averaged.append(mine.detach())
            current.append(other)
            if first:
                mine.detach().copy_(other)
        if not first:
            n = self.n_averaged
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(averaged, current, n)
            else:                       # torch's CPU path: one parameter at a time, copied
                average = self.avg_fn or get_swa_avg_fn()      # (an integer buffer casts)
                with no_grad():
                    for mine, other in zip(averaged, current):
                        mine.copy_(average(mine, other, n))
        if not self.use_buffers:
            with no_grad():
                for mine, other in zip(self.module.buffers(), model.buffers()):
                    mine.copy_(other.detach().to(mine.device))
        with no_grad():
            self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute every BatchNorm's running statistics in ``model`` from one pass over
    ``loader`` (batches, or lists/tuples whose first item is the input): each is reset and
    accumulates a cumulative average (``momentum=None``) in training mode; the momenta and
    ``model``'s mode come back afterwards."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    try:
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    finally:
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(_Recursive):
    r"""Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` steps (cosine
    or linear), then hold it (``torch.optim.swa_utils.SWALR``). As torch's, each step moves
    from the rate the group holds: with α_t the annealing factor at step t,
    :math:`\eta_t = \alpha_t\, \eta_{swa} + (1 - \alpha_t)\, \hat\eta_{t-1}`, where
    :math:`\hat\eta_{t-1} = (\eta_{t-1} - \alpha_{t-1}\eta_{swa}) / (1 - \alpha_{t-1})` undoes
    the previous step's mix. The rate it moves from is the group's ``lr``, whatever set it:
    after another schedule's steps (torch's recipe: CosineAnnealingLR, then SWALR), at a
    SequentialLR's milestone or in a ChainedScheduler, it anneals from the rate that one left.
    Its t is its count of steps, torch's ``_step_count``, not ``last_epoch``: the constructor's
    step is t = 0 whatever ``last_epoch`` says, and ``step(epoch)`` (deprecated, it warns)
    takes the next t, setting ``last_epoch`` to ``epoch``; ``load_state_dict`` restores the
    count and leaves the groups' rates to the optimizer's own ``load_state_dict``.

    Args:
        optimizer: the optimizer whose groups' ``lr`` it sets (each gets ``swa_lr``).
        swa_lr: the final rate, one number or one per group.
        anneal_epochs: steps to reach it (>= 0). anneal_strategy: ``"cos"`` or ``"linear"``.
        last_epoch: a resumed run's step (the groups need ``initial_lr``).

    Example:
        >>> swa = SWALR(optimizer, swa_lr=0.05, anneal_epochs=5)
        >>> for epoch in range(epochs):
        ...     train_one_epoch(model, optimizer)
        ...     if epoch >= swa_start:
        ...         averaged.update_parameters(model); swa.step()
    """

    restarts_from_rate = True
    # the state torch's state_dict holds, past the base's; its two flags of the step in
    # progress are taken from a torch state_dict and ignored
    _STATE = ("_step_count", "anneal_epochs", "_anneal_strategy", "_last_lr")
    _TORCH_FLAGS = ("_is_initial", "_get_lr_called_within_step")

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        _check_optimizer("SWALR", optimizer)
        rates = _per_group("SWALR", "swa_lr", swa_lr, len(optimizer.param_groups))
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        if isinstance(anneal_epochs, bool) or not isinstance(anneal_epochs, int) \
                or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        for rate, group in zip(rates, optimizer.param_groups):
            group["swa_lr"] = rate
        self.anneal_epochs, self.anneal_strategy = anneal_epochs, anneal_strategy
        self._step_count = 0
        super().__init__(optimizer, last_epoch)

    def _initial_step(self):
        # torch's constructor step: t = 0 from the rates the groups hold, a resumed
        # last_epoch too (its count starts here)
        self._step_count = 1
        lrs = [self.chain_step(0, group["lr"], i)
               for i, group in enumerate(self.optimizer.param_groups)]
        self._commit(self.last_epoch + 1, self.base_lrs, lrs)

    def step(self, epoch=None):
        """One step: t is the count of steps taken, from the rates the groups hold;
        ``step(epoch)`` warns, as torch's, sets ``last_epoch`` to ``epoch`` and anneals by the
        count all the same (SWALR has no closed form in t = epoch)."""
        self._check_step_order()
        epoch = self.last_epoch + 1 if epoch is None else self._epoch_argument(epoch)
        lrs = [self.chain_step(self._step_count, group["lr"], i)
               for i, group in enumerate(self.optimizer.param_groups)]
        self._step_count += 1
        self._commit(epoch, self.base_lrs, lrs)

    def load_state_dict(self, state_dict):
        """Continue from a ``state_dict()`` (ours or torch's): the count, the annealing and
        the last rates; the groups' rates stay as they are, as torch's (load the optimizer's
        state for them). A state dict of only ``last_epoch`` and ``base_lrs`` (written by
        this library's older versions) keeps this scheduler's count and annealing, as
        torch's ``__dict__.update`` of such a dict does."""
        name = "SWALR.load_state_dict"
        keys = {"last_epoch", "base_lrs", *self._STATE}
        if isinstance(state_dict, dict) and set(state_dict) == {"last_epoch", "base_lrs"}:
            state_dict = {**self.state_dict(), **state_dict}
        if not isinstance(state_dict, dict) or not keys <= set(state_dict) \
                or not set(state_dict) <= keys | set(self._TORCH_FLAGS):
            raise ValueError(f"{name}: expected keys {sorted(keys)}, got {state_dict!r}")
        count, epochs = state_dict["_step_count"], state_dict["anneal_epochs"]
        strategy, last_lr = state_dict["_anneal_strategy"], state_dict["_last_lr"]
        for key, value, least in (("_step_count", count, 1), ("anneal_epochs", epochs, 0)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
                    or value < least:
                raise ValueError(f"{name}: {key} must be an int >= {least}, got {value!r}")
        if strategy not in ("cos", "linear"):
            raise ValueError(f"{name}: _anneal_strategy must be 'cos' or 'linear', got "
                             f"{strategy!r}")
        if not isinstance(last_lr, (list, tuple)) or len(last_lr) != len(self.base_lrs):
            raise ValueError(f"{name}: _last_lr must hold one rate per parameter group, got "
                             f"{last_lr!r}")
        epoch, base_lrs = _checked_state(name, self.optimizer, state_dict)
        self.last_epoch, self.base_lrs, self._last_lr = epoch, base_lrs, list(last_lr)
        self._step_count, self.anneal_epochs = int(count), int(epochs)
        self.anneal_strategy = strategy

    def _anneal(self, t):
        return (1 - math.cos(math.pi * t)) / 2 if self.anneal_strategy == "cos" else t

    def chain_step(self, step, lr, group_index):
        """One step from the rate ``lr`` the group held (torch's ``get_lr``)."""
        swa_lr = self.optimizer.param_groups[group_index]["swa_lr"]
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        previous = self._anneal(max(0, min(1, (step - 1) / span)))
        before = swa_lr if previous == 1 else (lr - previous * swa_lr) / (1 - previous)
        alpha = self._anneal(max(0, min(1, step / span)))
        return swa_lr * alpha + before * (1 - alpha)

    def lr_at(self, step, base_lr, group_index):
        """The next step from the rate the group holds (torch's ``get_lr``, which another
        schedule may have set); a jump walks the chain from ``base_lr``."""
        if step == self.last_epoch + 1 and base_lr == self.base_lrs[group_index]:
            lr = self.optimizer.param_groups[group_index]["lr"]
            return self.chain_step(step, lr, group_index)
        return super().lr_at(step, base_lr, group_index)

    def restart_rate(self, lr, group_index):
        """At a SequentialLR's milestone, torch's ``get_lr`` at step 0 from the current rate
        ``lr`` (SWALR has no closed form)."""
        return self.chain_step(0, lr, group_index)
