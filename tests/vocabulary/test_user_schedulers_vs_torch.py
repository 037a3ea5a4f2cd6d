"""A user's own learning-rate schedule (a subclass of ``LRScheduler`` or ``_LRScheduler`` that
defines ``get_lr``, of a built-in schedule, of ``ReduceLROnPlateau``), alone or inside
``SequentialLR``/``ChainedScheduler``: each case runs the same program under torch and under
this library at test time, and the rates, the warnings, the state dicts and the errors must
agree."""

import math
import numbers
import warnings

import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def _optimizer(lib, lrs=(0.1,), **options):
    groups = [{"params": [lib.nn.Parameter(lib.zeros(2))], "lr": lr} for lr in lrs]
    return lib.optim.SGD(groups, lr=lrs[0], **options)


def _warmup_cosine(lib, base=None):
    base = base or lib.optim.lr_scheduler.LRScheduler

    class WarmupCosine(base):
        # the transformer recipe: linear warmup, then a half cosine to zero
        def __init__(self, optimizer, warmup, total, last_epoch=-1):
            self.warmup, self.total = warmup, total
            super().__init__(optimizer, last_epoch)
            self.note = {"kind": "cosine"}       # set after the base constructor

        def get_lr(self):
            step = self.last_epoch
            if step < self.warmup:
                factor = (step + 1) / self.warmup
            else:
                done = (step - self.warmup) / max(1, self.total - self.warmup)
                factor = 0.5 * (1 + math.cos(math.pi * min(done, 1.0)))
            return [base_lr * factor for base_lr in self.base_lrs]
    return WarmupCosine


def _noam(lib):
    class Noam(lib.optim.lr_scheduler._LRScheduler):
        # Attention-is-all-you-need rate, read off the step count torch keeps
        def __init__(self, optimizer, d_model, warmup):
            self.d_model, self.warmup = d_model, warmup
            super().__init__(optimizer)

        def get_lr(self):
            step = max(1, self._step_count)
            scale = self.d_model ** -0.5 * min(step ** -0.5, step * self.warmup ** -1.5)
            return [base_lr * scale for base_lr in self.base_lrs]
    return Noam


def _poly_closed(lib):
    class PolyWarmup(lib.optim.lr_scheduler.LRScheduler):
        # chainable get_lr (reads the groups' rates) with a closed form for step(epoch)
        def __init__(self, optimizer, total, power=2.0, last_epoch=-1):
            self.total, self.power = total, power
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            if self.last_epoch == 0 or self.last_epoch > self.total:
                return [group["lr"] for group in self.optimizer.param_groups]
            ratio = (1 - self.last_epoch / self.total) / (1 - (self.last_epoch - 1) / self.total)
            return [group["lr"] * ratio ** self.power for group in self.optimizer.param_groups]

        def _get_closed_form_lr(self):
            done = min(self.last_epoch, self.total) / self.total
            return [base_lr * (1 - done) ** self.power for base_lr in self.base_lrs]
    return PolyWarmup


def _step_warmup(lib):
    class WarmStep(lib.optim.lr_scheduler.StepLR):
        # a built-in's chainable get_lr after a warmup of its own
        def __init__(self, optimizer, warmup, **kwargs):
            self.warmup_steps = warmup
            super().__init__(optimizer, **kwargs)

        def get_lr(self):
            if self.last_epoch < self.warmup_steps:
                return [b * (self.last_epoch + 1) / self.warmup_steps for b in self.base_lrs]
            return super().get_lr()
    return WarmStep


class Halving:
    """A callable object as lr_lambda: torch saves its attributes."""

    def __init__(self, every):
        self.every, self.calls = every, 0

    def __call__(self, epoch):
        self.calls += 1
        return 0.5 ** (epoch // self.every)


def _normal(value):
    # a state-dict or rate value in a form both libraries give alike
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        return ("tensor", float(value.item()))
    if isinstance(value, dict):
        return {key: _normal(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(item) for item in value]
    return value


def _close(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_close, a, b))
    if isinstance(a, numbers.Real) and not isinstance(a, bool):
        return isinstance(b, numbers.Real) and (a == b or math.isclose(a, b, rel_tol=1e-12))
    return a == b


def _record(lib, program):
    # the program's observations, the warnings it raised (class and start) and its error
    log = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            program(lib, log)
        except Exception as error:                 # the class is what must agree
            error_class = type(error)
        else:
            error_class = None
    log = _normal(log)
    log.append([(w.category.__name__, str(w.message)[:40]) for w in caught])
    return log, error_class


def _rates(optimizer):
    return [group["lr"] for group in optimizer.param_groups]


def _run(lib, log, make, steps=8, metric=None, optimizer_first=True):
    # make(lib, optimizer) -> scheduler; then ``steps`` steps, the rates after each
    optimizer = _optimizer(lib, (0.1, 0.02))
    scheduler = make(lib, optimizer)
    log.append((_rates(optimizer), scheduler.get_last_lr()))
    for step in range(steps):
        if optimizer_first:
            optimizer.step()
        scheduler.step() if metric is None else scheduler.step(metric(step))
        log.append((_rates(optimizer), scheduler.get_last_lr()))
    log.append(scheduler.state_dict())
    return optimizer, scheduler


def _plateau(lib):
    class CountingPlateau(lib.optim.lr_scheduler.ReduceLROnPlateau):
        def __init__(self, optimizer, **kwargs):
            self.reductions = 0
            super().__init__(optimizer, **kwargs)

        def _is_better(self, a, best):      # a user's test of improvement
            return a < best - 0.05
    return CountingPlateau


def _chained_user(lib):
    lr = lib.optim.lr_scheduler

    def make(lib, opt):
        return lr.ChainedScheduler([_poly_closed(lib)(opt, total=5),
                                    lr.ExponentialLR(opt, gamma=0.9)])
    return make


PROGRAMS = {
    "warmup_cosine": lambda lib, log: _run(lib, log, lambda lib, o: _warmup_cosine(lib)(o, 3, 7)),
    "noam": lambda lib, log: _run(lib, log, lambda lib, o: _noam(lib)(o, d_model=16, warmup=4)),
    "chainable_get_lr": lambda lib, log: _run(lib, log, lambda lib, o: _poly_closed(lib)(o, 5)),
    "step_before_optimizer": lambda lib, log: _run(
        lib, log, lambda lib, o: _warmup_cosine(lib)(o, 2, 5), steps=3, optimizer_first=False),
    "steplr_subclass_get_lr": lambda lib, log: _run(
        lib, log, lambda lib, o: _step_warmup(lib)(o, 2, step_size=2, gamma=0.5)),
    "exponential_subclass_get_lr": lambda lib, log: _run(lib, log, lambda lib, o: type(
        "Flat", (lib.optim.lr_scheduler.ExponentialLR,),
        {"get_lr": lambda self: [g["lr"] * 0.5 if self.last_epoch % 3 == 0 else g["lr"]
                                 for g in self.optimizer.param_groups]})(o, gamma=0.9)),
    "warmup_cosine_on_cosine_base": lambda lib, log: _run(lib, log, lambda lib, o: _warmup_cosine(
        lib, lib.optim.lr_scheduler._LRScheduler)(o, 4, 9)),
    "lambda_callable_object": lambda lib, log: _run(
        lib, log, lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, Halving(3))),
    "sequential_user_then_cosine": lambda lib, log: _run(lib, log, lambda lib, o: (
        lib.optim.lr_scheduler.SequentialLR(o, [
            _warmup_cosine(lib)(o, 3, 3), lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4)],
            milestones=[3])), steps=9),
    "sequential_step_then_user": lambda lib, log: _run(lib, log, lambda lib, o: (
        lib.optim.lr_scheduler.SequentialLR(o, [
            lib.optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.5), _poly_closed(lib)(o, 4)],
            milestones=[2])), steps=7),
    "chained_user_and_exponential": lambda lib, log: _run(lib, log, _chained_user(lib)),
    "plateau_subclass": lambda lib, log: _run(
        lib, log, lambda lib, o: _plateau(lib)(o, patience=1, factor=0.5),
        metric=lambda step: [1.0, 0.99, 0.98, 0.97, 0.5, 0.49, 0.48, 0.47][step]),
    "steplr_subclass_own_attributes": lambda lib, log: _run(lib, log, lambda lib, o: type(
        "Tagged", (lib.optim.lr_scheduler.StepLR,),
        {"__init__": lambda self, opt: (setattr(self, "tag", "a"), lib.optim.lr_scheduler.StepLR
                                        .__init__(self, opt, 3), setattr(self, "after", 2.5))[1]}
    )(o)),
}


def _get_lr_outside_step(lib, log):
    optimizer = _optimizer(lib)
    for scheduler in (lib.optim.lr_scheduler.StepLR(optimizer, step_size=2),
                      _step_warmup(lib)(optimizer, 1, step_size=2)):
        log.append(scheduler.get_lr())


def _epoch_argument(lib, log):
    optimizer = _optimizer(lib, (0.1, 0.3))
    for make in (lambda: _poly_closed(lib)(optimizer, 6), lambda: _warmup_cosine(lib)(
            optimizer, 2, 6), lambda: _step_warmup(lib)(optimizer, 1, step_size=2)):
        scheduler = make()
        optimizer.step()
        for epoch in (3, 1, 5):
            scheduler.step(epoch)
            log.append((_rates(optimizer), scheduler.get_last_lr(), scheduler.last_epoch))


def _resume(lib, log):
    # stepped, saved, loaded into a fresh one, stepped on: the same run as not stopping
    optimizer = _optimizer(lib, (0.1, 0.02))
    first = _warmup_cosine(lib)(optimizer, 3, 9)
    for _ in range(4):
        optimizer.step()
        first.step()
    saved = first.state_dict()
    second = _warmup_cosine(lib)(optimizer, 1, 2)
    second.load_state_dict(saved)
    log.append(second.state_dict())
    for _ in range(3):
        optimizer.step()
        second.step()
        log.append((_rates(optimizer), second.get_last_lr()))


def _resume_last_epoch(lib, log):
    optimizer = _optimizer(lib)
    _warmup_cosine(lib)(optimizer, 2, 6)
    scheduler = _noam(lib)(optimizer, 8, 2)
    resumed = _warmup_cosine(lib)(optimizer, 2, 6, last_epoch=3)
    log.append((_rates(optimizer), resumed.get_last_lr(), scheduler.get_last_lr()))


def _missing_initial_lr(lib, log):
    _warmup_cosine(lib)(_optimizer(lib), 2, 6, last_epoch=3)


def _wrong_count(lib, log):
    class Short(lib.optim.lr_scheduler.LRScheduler):
        def get_lr(self):
            return [0.1]
    Short(_optimizer(lib, (0.1, 0.2)))


def _no_get_lr(lib, log):
    class Bare(lib.optim.lr_scheduler.LRScheduler):
        pass
    Bare(_optimizer(lib))


def _base_get_lr_in_user_code(lib, log):
    class CallsBase(lib.optim.lr_scheduler.LRScheduler):
        def get_lr(self):
            return super().get_lr()
    CallsBase(_optimizer(lib))


def _plateau_state_roundtrip(lib, log):
    optimizer = _optimizer(lib)
    scheduler = _plateau(lib)(optimizer, patience=0)
    for metric in (1.0, 1.0, 0.5):
        scheduler.step(metric)
    scheduler.reductions = 7
    other = _plateau(lib)(_optimizer(lib))
    other.load_state_dict(scheduler.state_dict())
    log.append(other.state_dict())


def _lambda_object_roundtrip(lib, log):
    optimizer = _optimizer(lib)
    scheduler = lib.optim.lr_scheduler.LambdaLR(optimizer, Halving(2))
    for _ in range(3):
        optimizer.step()
        scheduler.step()
    saved = scheduler.state_dict()
    log.append(saved)
    fresh = Halving(5)
    lib.optim.lr_scheduler.LambdaLR(_optimizer(lib), fresh).load_state_dict(saved)
    log.append(fresh.every)


def _ramp(lib):
    class Ramp(lib.optim.lr_scheduler.LRScheduler):
        # a chainable get_lr of its own, reading the rates the last step set
        def __init__(self, optimizer, parts, last_epoch=-1):
            self.parts = parts
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            if self.last_epoch == 0:
                return [base / self.parts for base in self.base_lrs]
            return [min(base, last + base / self.parts)
                    for base, last in zip(self.base_lrs, self.get_last_lr())]
    return Ramp


def _counting_cosine(lib):
    class CountingCosine(lib.optim.lr_scheduler.CosineAnnealingLR):
        # the built-in's chainable form through super(), and a step of its own
        def get_lr(self):
            return [lr * 1.0 for lr in super().get_lr()]

        def step(self, epoch=None):
            super().step(epoch)
            self.steps_seen = getattr(self, "steps_seen", 0) + 1
    return CountingCosine


def _tensor_rate(lib, log):
    param = lib.nn.Parameter(lib.ones(2))
    optimizer = lib.optim.SGD([param], lr=lib.tensor(0.1))
    scheduler = _ramp(lib)(optimizer, 4)
    for _ in range(5):
        optimizer.step()
        scheduler.step()
        log.append((optimizer.param_groups[0]["lr"], scheduler.get_last_lr()))


def _sequential_state(lib, log):
    def build(optimizer):
        return lib.optim.lr_scheduler.SequentialLR(optimizer, [
            _ramp(lib)(optimizer, 3), lib.optim.lr_scheduler.ExponentialLR(optimizer, 0.5)],
            milestones=[3])
    optimizer = _optimizer(lib)
    scheduler = build(optimizer)
    for _ in range(5):
        optimizer.step()
        scheduler.step()
        log.append(scheduler.get_last_lr())
    saved = scheduler.state_dict()
    log.append(saved)
    other = _optimizer(lib)
    resumed = build(other)
    resumed.load_state_dict(saved)
    other.param_groups[0]["lr"] = optimizer.param_groups[0]["lr"]   # the optimizer's part
    for _ in range(2):
        other.step()
        resumed.step()
        log.append(resumed.get_last_lr())


def _resumed_subclass(lib, log):
    optimizer = _optimizer(lib)
    _counting_cosine(lib)(optimizer, T_max=5)
    scheduler = _counting_cosine(lib)(optimizer, T_max=5, last_epoch=2)
    log.append((_rates(optimizer), scheduler.get_last_lr(), scheduler.state_dict()))


PROGRAMS.update({
    "tensor_rate": _tensor_rate,
    "cosine_subclass_super_get_lr_and_step": lambda lib, log: _run(
        lib, log, lambda lib, o: _counting_cosine(lib)(o, T_max=5)),
    "sequential_user_state_dict": _sequential_state,
    "chained_user_state_dict": lambda lib, log: _run(lib, log, lambda lib, o: (
        lib.optim.lr_scheduler.ChainedScheduler([
            _ramp(lib)(o, 3), lib.optim.lr_scheduler.ExponentialLR(o, 0.5)])), steps=4),
    "resumed_subclass": _resumed_subclass,
    "get_lr_outside_step": _get_lr_outside_step,
    "step_epoch_deprecated": _epoch_argument,
    "state_dict_resume": _resume,
    "resume_last_epoch": _resume_last_epoch,
    "missing_initial_lr": _missing_initial_lr,
    "get_lr_wrong_count": _wrong_count,
    "no_get_lr": _no_get_lr,
    "base_get_lr_from_user": _base_get_lr_in_user_code,
    "plateau_subclass_state": _plateau_state_roundtrip,
    "lambda_object_state": _lambda_object_roundtrip,
})


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_user_scheduler_matches_torch(name):
    (ours, our_error), (theirs, their_error) = _record(mg, PROGRAMS[name]), _record(
        torch, PROGRAMS[name])
    # the error class: torch's, or a subclass of it
    assert (our_error is None) == (their_error is None), (our_error, their_error)
    assert their_error is None or issubclass(our_error, their_error), (our_error, their_error)
    assert _close(ours, theirs), f"\nours:  {ours}\ntorch: {theirs}"


def test_user_schedulers_are_stepped_by_their_get_lr():
    # the cases above must be able to fail: a get_lr ignored would leave the rate fixed
    optimizer = _optimizer(mg)
    scheduler = _warmup_cosine(mg)(optimizer, 4, 8)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.025)
    optimizer.step()
    scheduler.step()
    assert scheduler.get_last_lr() == [pytest.approx(0.05)]
