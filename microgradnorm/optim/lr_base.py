"""``LRScheduler``, the base of every learning-rate schedule, and the checks the schedules
share; ``lr_scheduler`` and ``lr_cycles`` both build on it (and users find it in
``lr_scheduler``)."""

import numbers
import warnings

from ..dtypes import check_number
from ..tensor import Tensor
from . import lr_scheduler_state
from .option_numbers import kept_number
from .optimizers import Optimizer, lr_value

__all__ = ["LRScheduler", "_LRScheduler"]

# torch's warning when a schedule's first step comes before its optimizer's first step
STEP_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
    "value of the learning rate schedule.")
# ... and when the optimizer's ``step`` was replaced on the instance after the first schedule
STEP_OVERRIDDEN_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    "`lr_scheduler.step()`.")


class MissingInitialLR(KeyError, ValueError):
    """A schedule resumed (``last_epoch >= 0``) on groups without ``initial_lr``: torch's
    KeyError, a ValueError too."""

    def __str__(self):
        return str(self.args[0])

# what torch warns on ``scheduler.step(epoch)`` (its EPOCH_DEPRECATION_WARNING, shortened)
EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the "
    "new chainable form, where available.")


class LRScheduler:
    """Base class: ``step()``, ``get_last_lr()``, ``state_dict()``, ``load_state_dict()``.
    The library's schedules define ``lr_at(step, base_lr, group_index)``, the learning rate
    at ``step``; ``chain_step`` (a step from a given rate, what torch's ``get_lr`` does with
    the groups' rates) and ``closed_form`` (what ``step(epoch)`` sets) default to it.

    A user's subclass (of this class, ``_LRScheduler`` or a built-in schedule) that defines
    ``get_lr()`` runs as torch runs it: each ``step()`` moves ``last_epoch`` and sets the
    rates ``get_lr()`` returns (``step(epoch)``: ``_get_closed_form_lr()`` if the class has
    one), with ``base_lrs``, ``_step_count``, ``_is_initial`` and ``get_last_lr()`` as in
    torch; its ``state_dict()`` holds every attribute but the optimizer, its own too.

    Example:
        >>> class Warmup(LRScheduler):
        ...     def get_lr(self):
        ...         return [base * min(1.0, (self.last_epoch + 1) / 4) for base in self.base_lrs]
        >>> scheduler = Warmup(opt)          # the rate base / 4, then 2/4, 3/4, 1 at each step
    """

    # torch's ``_is_initial``: the schedules whose constructor, resuming (last_epoch >= 0),
    # keeps the rate the optimizer holds rather than taking a step from it
    keeps_rate_on_resume = False
    # ReduceLROnPlateau: its step needs a metric, so no SequentialLR or chain can step it
    steps_with_metric = False
    # MultiplicativeLR, SWALR: the rate at a SequentialLR's milestone (``restart_rate``) is taken
    # from the rate the scheduler before it left, so a jump past that milestone replays it
    restarts_from_rate = False
    # torch's base step warns when it comes before the optimizer's first step; the
    # schedules whose own step torch writes without that check say False
    checks_step_order = True
    # torch's flags of a step in progress, which a user's ``get_lr`` may read
    _is_initial = False
    _get_lr_called_within_step = False
    # a user's class whose ``get_lr`` is its own: stepped as torch steps it (``_update_lr``)
    _own_get_lr = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        owner = next(base for base in cls.__mro__ if "get_lr" in vars(base))
        cls._own_get_lr = not owner.__module__.startswith(__name__.split(".")[0] + ".")

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(type(self).__name__, optimizer)
        if isinstance(last_epoch, bool) or not isinstance(last_epoch, int) or last_epoch < -1:
            raise ValueError(f"{type(self).__name__}: last_epoch must be an int >= -1, got "
                             f"{last_epoch!r}")
        added = [group for group in optimizer.param_groups
                 if last_epoch == -1 and "initial_lr" not in group]
        for group in added:                      # a Tensor rate: a copy, as torch's
            lr = group["lr"]
            group["initial_lr"] = lr.clone() if isinstance(lr, Tensor) else lr
        missing = [i for i, g in enumerate(optimizer.param_groups) if "initial_lr" not in g]
        if missing:
            raise MissingInitialLR(
                f"{type(self).__name__}: param 'initial_lr' is not specified in "
                f"param_groups{missing} when resuming a scheduler with "
                f"last_epoch={last_epoch}: load the optimizer's state dict first")
        if not self._own_get_lr:           # a user's get_lr: torch's attributes only
            self._order_checked = False
        self.optimizer = optimizer
        self.base_lrs = [_group_value(group, "initial_lr") if self._own_get_lr
                         else lr_value(group["initial_lr"]) for group in optimizer.param_groups]
        self.last_epoch, self._step_count = last_epoch, 0       # torch's count of steps
        if not getattr(optimizer, "_steps_watched", False):
            # torch's wrapper of optimizer.step, put on by the first schedule: the
            # optimizer's steps count from here
            optimizer._steps_watched, optimizer._opt_called = True, False
            optimizer._watched_step = optimizer.__dict__.get("step")   # an instance's own
        self._initial_step()

    def _initial_step(self):
        # torch's constructor step, from the rates the groups hold: a schedule made after
        # another on the same optimizer composes with it (what ChainedScheduler takes), and
        # one resumed with last_epoch=k continues from the checkpoint's rate
        if self._own_get_lr:                       # torch's: its step, get_lr in "initial" mode
            self._step_count, self._is_initial = 0, True
            try:
                self.step()
            finally:
                self._is_initial = False
            return
        epoch = self.last_epoch + 1
        current = [lr_value(group["lr"]) for group in self.optimizer.param_groups]
        if epoch > 0 and self.keeps_rate_on_resume:
            lrs = current
        else:
            lrs = [self.chain_step(epoch, lr, i) for i, lr in enumerate(current)]
        self._commit(epoch, self.base_lrs, lrs)
        self._step_count = 1

    def lr_at(self, step, base_lr, group_index):
        """The learning rate of group ``group_index`` at ``step`` (defined by subclasses)."""
        raise NotImplementedError

    def step(self, epoch=None):
        """Advance one step and write the new learning rate into every parameter group.
        ``step(epoch)``, deprecated in torch (which warns, as here), goes to the int
        ``epoch`` by the closed form where torch has one. A user's class that defines
        ``get_lr`` is stepped as torch steps it: ``last_epoch`` moved, then its ``get_lr()``
        (or its ``_get_closed_form_lr()`` for ``step(epoch)``) sets the rates."""
        self._check_step_order()
        if self._own_get_lr:
            self._step_count += 1
            if epoch is not None:
                warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
            self._update_lr(epoch)
            return
        if epoch is None:
            self._go_to(self.last_epoch + 1, self.base_lrs)
        else:
            epoch = self._epoch_argument(epoch)
            lrs = [self.closed_form(epoch, i) for i in range(len(self.base_lrs))]
            self._commit(epoch, self.base_lrs, lrs)
        self._step_count = getattr(self, "_step_count", 0) + 1

    def _update_lr(self, epoch=None):
        # torch's step of a user's get_lr: ``last_epoch`` first, then the rates, computed
        # "within the step" (get_lr's warning off); step(epoch) takes the closed form where
        # the class has one (its own ``_get_closed_form_lr``, or a built-in's of torch's)
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                if hasattr(self, "_get_closed_form_lr"):
                    values = self._get_closed_form_lr()
                elif lr_scheduler_state.kind(self) in CLOSED_FORMS:
                    values = [self.closed_form(epoch, i) for i in range(len(self.base_lrs))]
                else:
                    values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        values, groups = list(values), self.optimizer.param_groups
        if len(values) != len(groups):
            raise ValueError(f"{type(self).__name__}.get_lr: expected {len(groups)} rates "
                             f"(one per parameter group), got {len(values)}")
        for group, lr in zip(groups, values):
            set_lr(group, lr)
        self._last_lr = [_group_value(group, "lr") for group in groups]

    def _check_step_order(self):
        # torch's warning at a schedule's first step, if the optimizer has not stepped
        if self._own_get_lr:                  # torch's test: the step after the constructor's
            if self._step_count != 1:
                return
        elif not self.checks_step_order or getattr(self, "_order_checked", True):
            return
        self._order_checked = True
        optimizer = self.optimizer
        if optimizer.__dict__.get("step") is not optimizer.__dict__.get("_watched_step"):
            warnings.warn(STEP_OVERRIDDEN_WARNING, UserWarning, stacklevel=3)
        elif not getattr(optimizer, "_opt_called", True):
            warnings.warn(STEP_ORDER_WARNING, UserWarning, stacklevel=3)

    def get_lr(self):
        """torch's chainable form at ``last_epoch`` from the rates the groups hold, with its
        warning: ``get_last_lr()`` is the rate the latest step set."""
        if not self._get_lr_called_within_step:   # a user's get_lr calling it in a step
            warnings.warn("To get the last learning rate computed by the scheduler, please "
                          "use `get_last_lr()`.", UserWarning, stacklevel=2)
        groups = self.optimizer.param_groups
        if self._is_initial and self.last_epoch > 0 and self.keeps_rate_on_resume:
            return [group["lr"] for group in groups]
        return [self.chain_step(self.last_epoch, lr_value(group["lr"]), i)
                for i, group in enumerate(groups)]

    def _epoch_argument(self, epoch):
        # step(epoch)'s: torch's deprecation warning, then an int >= 0
        warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=3)
        name = f"{type(self).__name__}.step"
        check_number(name, "epoch", epoch, integer=True)
        if epoch < 0:
            raise ValueError(f"{name}: epoch must be >= 0, got {epoch!r}")
        return int(epoch)

    def chain_step(self, step, lr, group_index):
        """The rate torch's own update gives at ``step`` from the current rate ``lr`` (what
        ``ChainedScheduler`` composes): for a schedule torch writes as a closed form, that
        form, whatever ``lr`` is."""
        return self.lr_at(step, self.base_lrs[group_index], group_index)

    def closed_form(self, step, group_index):
        """The rate ``step(epoch)`` sets at ``step``: torch's closed form (from the base
        rate), ``lr_at`` unless a schedule says otherwise."""
        return self.lr_at(step, self.base_lrs[group_index], group_index)

    def restart_rate(self, lr, group_index):
        """The rate a SequentialLR's milestone sets, where this scheduler starts at its own
        step 0 and the group's rate is ``lr``: torch's ``_update_lr(0)``, the closed form at
        step 0 (from the base rate, whatever ``lr`` is) unless a schedule says otherwise."""
        return self.closed_form(0, group_index)

    def _restart(self):
        # a SequentialLR's milestone: this scheduler's step 0 from the rates the groups hold
        # (torch's ``_update_lr(0)``)
        if self._own_get_lr:
            self._update_lr(0)
            return
        groups = self.optimizer.param_groups
        rates = [lr_value(group["lr"]) for group in groups]
        lrs = [self.restart_rate(lr, i) for i, lr in enumerate(rates)]
        self._follow(0, rates, lrs)
        for group, lr in zip(groups, lrs):
            set_lr(group, lr)

    def _go_to(self, epoch, base_lrs):
        if self._own_get_lr:
            # a user's get_lr stepped by a SequentialLR: its step to ``epoch``; step 0 from
            # the initial rates, torch's reset of the groups
            if epoch == 0:
                for group in self.optimizer.param_groups:
                    set_lr(group, _group_value(group, "initial_lr"))
            self.last_epoch = epoch - 1
            self._update_lr()
            return
        # the rates first: a schedule function that raises leaves everything as it was
        lrs = [self.lr_at(epoch, base, i) for i, base in enumerate(base_lrs)]
        self._commit(epoch, base_lrs, lrs)

    def _commit(self, epoch, base_lrs, lrs):
        # the step to ``epoch`` with its rates computed: nothing left to fail
        self._on_step(epoch)
        self.base_lrs, self.last_epoch, self._last_lr = base_lrs, epoch, list(lrs)
        for group, lr in zip(self.optimizer.param_groups, lrs):
            set_lr(group, lr)

    def _on_step(self, epoch):
        # what else the step to ``epoch`` moves, called before ``last_epoch`` does (on every
        # path: a step, a jump, a chain's step): the momentum of a cyclic schedule, the
        # place in CosineAnnealingWarmRestarts' cycle
        return None

    def _follow(self, epoch, lrs_in, lrs_out):
        # the step to ``epoch`` a ChainedScheduler took for this scheduler, from the rates
        # ``lrs_in`` to ``lrs_out`` (one per group; the chain writes the groups' rates)
        self._on_step(epoch)
        self.last_epoch, self._last_lr = epoch, list(lrs_out)

    def get_last_lr(self):
        """The learning rates the latest ``step()`` set, one per parameter group."""
        return list(self._last_lr)

    def __repr__(self):
        return (f"{type(self).__name__}(last_epoch={self.last_epoch}, "
                f"last_lr={self.get_last_lr()}, optimizer={type(self.optimizer).__name__})")

    def state_dict(self):
        """torch's state dict: every attribute torch's scheduler of this class holds (its
        ``__dict__`` less the optimizer), under torch's names, in torch's order: the
        schedule's own options, then ``base_lrs``, ``last_epoch``, ``_step_count``,
        ``_is_initial``, ``_get_lr_called_within_step`` and ``_last_lr``; ``LambdaLR`` and
        ``MultiplicativeLR`` add ``lr_lambdas`` (per group, a callable object's attributes,
        None for a function or a lambda)."""
        return lr_scheduler_state.state_dict(self)

    def load_state_dict(self, state_dict):
        """Continue from a ``state_dict()``, this library's or one torch's scheduler of the
        same class saved: its options, then the rates of its step (the parameter groups'
        ``lr`` set to match, walked from the base rates), its count and last rates; a
        callable object's attributes from ``"lr_lambdas"``. A bad dict changes nothing."""
        where = lr_scheduler_state.check_keys(self, state_dict)
        if self._own_get_lr:                    # torch's: the attributes as saved, the rates
            lr_scheduler_state.load_state_dict(  # the optimizer's state dict holds
                self, state_dict, lambda scheduler: lr_scheduler_state.load_attributes(
                    scheduler, state_dict, where, rates=True))
            return
        epoch, base_lrs = _checked_state(where, self.optimizer, state_dict)

        def jump(scheduler):
            scheduler._last_lr = None      # a jump, even to the next step: the walk from the base
            scheduler._go_to(epoch, base_lrs)
            scheduler._order_checked = True             # torch's restored step count

        lr_scheduler_state.load_state_dict(self, state_dict, jump)


class _LRScheduler(LRScheduler):
    """torch's older name of ``LRScheduler``, which user code still subclasses."""


# the built-in schedules whose torch class has a ``_get_closed_form_lr`` (what ``step(epoch)``
# of a subclass with its own get_lr takes)
CLOSED_FORMS = ("StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
                "PolynomialLR", "CosineAnnealingLR")


def _group_value(group, key):
    # torch's copy of a group's entry: a Tensor cloned, anything else as it is
    value = group[key]
    return value.clone() if isinstance(value, Tensor) else value


def set_lr(group, lr):
    """Write a schedule's rate into ``group``: a Tensor rate filled in place, as torch's, so
    the Tensor the optimizer was given follows the schedule."""
    if isinstance(group["lr"], Tensor):
        group["lr"].fill_(lr.item() if isinstance(lr, Tensor) else lr)
    else:
        group["lr"] = lr


def _checked_state(name, optimizer, state_dict):
    # a state_dict's last_epoch (an int >= 0) and base_lrs (a number >= 0 per group)
    base_lrs, last_epoch = list(state_dict["base_lrs"]), state_dict["last_epoch"]
    if len(base_lrs) != len(optimizer.param_groups):
        raise ValueError(f"{name}: {len(base_lrs)} base_lrs for {len(optimizer.param_groups)} "
                         f"parameter groups")
    if not isinstance(last_epoch, numbers.Integral) or last_epoch < 0:
        raise ValueError(f"{name}: last_epoch must be an int >= 0, got {last_epoch!r}")
    if not all(isinstance(lr, numbers.Real) and not isinstance(lr, bool) and lr >= 0
               for lr in base_lrs):
        raise ValueError(f"{name}: base_lrs must be numbers >= 0, got {base_lrs!r}")
    return int(last_epoch), base_lrs


def _cooldown_running(scheduler):
    """Whether the cooldown after a reduction still runs (ReduceLROnPlateau's ``in_cooldown``,
    torch's property)."""
    return scheduler.cooldown_counter > 0


def _check_optimizer(where, optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{where}: optimizer must be an optim.Optimizer, got "
                        f"{type(optimizer).__name__}")


def _members(where, schedulers, optimizer=None):
    # SequentialLR's and ChainedScheduler's schedulers (torch's checks): a non-empty list of
    # schedulers that step without a metric, all of ``optimizer`` (the first one's if None)
    schedulers = list(schedulers) if isinstance(schedulers, (list, tuple)) else schedulers
    if not isinstance(schedulers, list) or not schedulers:
        raise ValueError(f"{where}: expected a non-empty list of schedulers, got "
                         f"{schedulers!r}")
    for index, scheduler in enumerate(schedulers):
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(f"{where}: schedulers[{index}] must be an LRScheduler, got "
                            f"{type(scheduler).__name__}")
        if scheduler.steps_with_metric:
            raise ValueError(f"{where}: schedulers[{index}] is a {type(scheduler).__name__}, "
                             f"whose step needs a metric")
    optimizer = schedulers[0].optimizer if optimizer is None else optimizer
    _check_optimizer(where, optimizer)
    for index, scheduler in enumerate(schedulers):
        if scheduler.optimizer is not optimizer:
            raise ValueError(f"{where}: schedulers[{index}] ({type(scheduler).__name__}) "
                             f"belongs to another optimizer")
    return schedulers, optimizer


def _lr_lambdas(where, optimizer, lr_lambda):
    # LambdaLR's and MultiplicativeLR's lr_lambda: one function for every group, or a list
    # of one per group (a wrong count: ValueError; not a function: TypeError, as torch's call)
    _check_optimizer(where, optimizer)
    groups = len(optimizer.param_groups)
    lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * groups
    if len(lambdas) != groups:
        raise ValueError(f"{where}: expected {groups} lr_lambdas, got {len(lambdas)}: "
                         f"lr_lambda must be a function or a list of {groups} functions "
                         f"(one per parameter group)")
    for function in lambdas:
        if not callable(function):
            raise TypeError(f"{where}: lr_lambda must be a function, got "
                            f"{type(function).__name__}")
    return lambdas


def _momentum_kind(where, optimizer, cycle_momentum):
    # whether a cyclic schedule (OneCycleLR, CyclicLR) moves Adam's beta1 rather than the
    # momentum; with cycle_momentum, an optimizer with neither is torch's ValueError
    if not isinstance(cycle_momentum, bool):
        raise ValueError(f"{where}: cycle_momentum must be True or False, got "
                         f"{cycle_momentum!r}")
    use_beta1 = "betas" in optimizer.defaults
    if cycle_momentum and "momentum" not in optimizer.defaults and not use_beta1:
        raise ValueError(f"{where}: cycle_momentum=True needs an optimizer with momentum or "
                         f"betas, got {type(optimizer).__name__}")
    return use_beta1


def _write_momentum(group, momentum, use_beta1):
    # the momentum a cyclic schedule sets: Adam's beta1, or SGD's and RMSprop's momentum
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _per_group(where, name, value, groups):
    # one number for every parameter group, or a list of one per group (torch's _format_param)
    values = list(value) if isinstance(value, (list, tuple)) else [value] * groups
    if len(values) != groups:
        raise ValueError(f"{where}: expected {groups} values of {name} (one per parameter "
                         f"group), got {len(values)}")
    return [kept_number(where, name, item) for item in values]


def _int_list(where, name, values):
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{where}: {name} must be a list of ints, got {type(values).__name__}")
    values = list(values)
    for item in values:
        check_number(where, name, item, integer=True)
    return list(values)
