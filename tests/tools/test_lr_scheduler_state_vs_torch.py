"""Every learning-rate schedule's ``state_dict()`` holds torch's keys, in torch's order, with
torch's values (after 0, 1 and 5 steps), and ``load_state_dict`` of the dict torch's
scheduler of the same class saved continues with torch's rates. Compared at test time."""

import copy
import io
import math
import warnings

import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")
from torch.optim import lr_scheduler as tl  # noqa: E402
from torch.optim import swa_utils as tswa  # noqa: E402

ml = mg.optim.lr_scheduler


class Decay:
    """A callable object: its attributes are what a state dict saves of it."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, step):
        return self.rate ** step


def _optimizer(lib):
    # two groups of different rates, SGD with momentum (what the cyclic schedules move)
    if lib is torch:
        make = [torch.nn.Parameter(torch.zeros(2)) for _ in range(2)]
        optim = torch.optim.SGD
    else:
        make = [mg.zeros(2, requires_grad=True) for _ in range(2)]
        optim = mg.optim.SGD
    return optim([{"params": [make[0]]}, {"params": [make[1]], "lr": 0.05}], lr=0.1,
                 momentum=0.9)


def _schedulers(lib, opt):
    # name -> a scheduler of that class on ``opt``, the same options in both libraries
    mod = tl if lib is torch else ml
    swalr = tswa.SWALR if lib is torch else mg.optim.swa_utils.SWALR
    return {
        "LambdaLR": lambda: mod.LambdaLR(opt, [lambda e: 0.9 ** e, Decay(0.8)]),
        "MultiplicativeLR": lambda: mod.MultiplicativeLR(opt, lambda e: 0.95),
        "StepLR": lambda: mod.StepLR(opt, 2, 0.5),
        "MultiStepLR": lambda: mod.MultiStepLR(opt, [2, 4, 4], 0.5),
        "ConstantLR": lambda: mod.ConstantLR(opt, factor=0.5, total_iters=3),
        "LinearLR": lambda: mod.LinearLR(opt, start_factor=0.25, total_iters=4),
        "ExponentialLR": lambda: mod.ExponentialLR(opt, 0.9),
        "PolynomialLR": lambda: mod.PolynomialLR(opt, total_iters=4, power=2.0),
        "CosineAnnealingLR": lambda: mod.CosineAnnealingLR(opt, T_max=4, eta_min=0.01),
        "CosineAnnealingWarmRestarts":
            lambda: mod.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.001),
        "CyclicLR": lambda: mod.CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=0.1,
                                         step_size_up=2, mode="triangular2"),
        "CyclicLR-no-momentum": lambda: mod.CyclicLR(opt, 0.01, 0.1, step_size_up=3,
                                                     cycle_momentum=False),
        "OneCycleLR": lambda: mod.OneCycleLR(opt, max_lr=0.5, total_steps=12),
        "OneCycleLR-three-phase": lambda: mod.OneCycleLR(
            opt, max_lr=[0.5, 0.3], total_steps=12, three_phase=True,
            anneal_strategy="linear", cycle_momentum=False),
        "ReduceLROnPlateau": lambda: mod.ReduceLROnPlateau(opt, patience=1, cooldown=1),
        "ReduceLROnPlateau-max": lambda: mod.ReduceLROnPlateau(
            opt, mode="max", min_lr=[0.0, 0.01], threshold_mode="abs", patience=0),
        "SWALR": lambda: swalr(opt, swa_lr=0.05, anneal_epochs=3),
        "SequentialLR": lambda: mod.SequentialLR(
            opt, [mod.LinearLR(opt, start_factor=0.5, total_iters=2),
                  mod.ExponentialLR(opt, 0.9)], milestones=[2]),
        "ChainedScheduler": lambda: mod.ChainedScheduler(
            [mod.StepLR(opt, 2, 0.5), mod.ExponentialLR(opt, 0.9)]),
    }


NAMES = list(_schedulers(torch, None))
METRICS = [3.0, 2.0, 2.5, 2.5, 1.0, 1.0, 1.5, 0.5, 0.5, 0.6]


def _make(lib, name):
    opt = _optimizer(lib)
    return opt, _schedulers(lib, opt)[name]()


def _step(scheduler, index):
    if "ReduceLROnPlateau" in type(scheduler).__name__:
        scheduler.step(METRICS[index])
    else:
        scheduler.step()


def _same(ours, theirs, where):
    # equal structure; numbers to a few ulps (the recursive forms are torch's, in order)
    if isinstance(theirs, dict):
        assert type(ours) is type(theirs), (where, type(ours), type(theirs))
        assert list(ours) == list(theirs), f"{where}: keys {list(ours)} vs {list(theirs)}"
        for key in theirs:
            _same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (where, ours, theirs)
        for index, (a, b) in enumerate(zip(ours, theirs)):
            _same(a, b, f"{where}[{index}]")
    elif isinstance(theirs, float):
        assert isinstance(ours, (int, float)) and not isinstance(ours, bool), (where, ours)
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15) \
            or (math.isinf(theirs) and ours == theirs), (where, ours, theirs)
    else:
        assert type(ours) is type(theirs) and ours == theirs, (where, ours, theirs)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_holds_torchs_keys_and_values(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (_, theirs), (_, ours) = _make(torch, name), _make(mg, name)
        for index in range(6):
            if index in (0, 1, 5):
                _same(ours.state_dict(), theirs.state_dict(), f"{name} after {index} steps")
            _step(theirs, index)
            _step(ours, index)


@pytest.mark.parametrize("steps", [0, 1, 5])
@pytest.mark.parametrize("name", NAMES)
def test_load_of_torchs_state_dict_continues_torchs_rates(name, steps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        topt, theirs = _make(torch, name)
        for index in range(steps):
            topt.step()
            _step(theirs, index)
        saved = copy.deepcopy(theirs.state_dict())
        opt, ours = _make(mg, name)
        # what an optimizer's load restores first: the groups' rates and momenta
        for group, tgroup in zip(opt.param_groups, topt.param_groups):
            group["lr"], group["momentum"] = tgroup["lr"], tgroup["momentum"]
        ours.load_state_dict(saved)
        _same(ours.state_dict(), theirs.state_dict(), f"{name} loaded at {steps}")
        for index in range(steps, steps + 4):
            _step(theirs, index)
            _step(ours, index)
            _same(ours.get_last_lr(), theirs.get_last_lr(), f"{name} step {index + 1}")
            _same([g["lr"] for g in opt.param_groups], [g["lr"] for g in topt.param_groups],
                  f"{name} groups' lr at step {index + 1}")


def test_a_callable_objects_attributes_are_saved_and_restored_as_torchs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (_, theirs), (_, ours) = _make(torch, "LambdaLR"), _make(mg, "LambdaLR")
        theirs.lr_lambdas[1].rate = 0.5
        _, other = _make(mg, "LambdaLR")
        other.load_state_dict(copy.deepcopy(theirs.state_dict()))
        assert other.lr_lambdas[1].rate == 0.5
        assert ours.state_dict()["lr_lambdas"] == [None, {"rate": 0.8}]


@pytest.mark.parametrize("name", ["StepLR", "SequentialLR", "ChainedScheduler",
                                  "ReduceLROnPlateau"])
def test_a_dict_with_a_key_torch_does_not_have_is_refused_and_changes_nothing(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt, ours = _make(mg, name)
        _step(ours, 0)
        before, rates = ours.state_dict(), [g["lr"] for g in opt.param_groups]
        bad = {**copy.deepcopy(before), "last_epoch": 3, "gamma_typo": 0.5}
        with pytest.raises(ValueError, match="gamma_typo"):
            ours.load_state_dict(bad)
        _same(ours.state_dict(), before, name)
        assert [g["lr"] for g in opt.param_groups] == rates


@pytest.mark.parametrize("name", ["MultiStepLR", "SequentialLR", "OneCycleLR", "CyclicLR"])
def test_a_state_dict_torch_saved_to_a_file_loads_through_mg_load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        topt, theirs = _make(torch, name)
        for index in range(3):
            topt.step()
            _step(theirs, index)
        buffer = io.BytesIO()
        torch.save(theirs.state_dict(), buffer)
        buffer.seek(0)
        saved = mg.load(buffer)
        _same(saved, theirs.state_dict(), f"{name} read by mg.load")
        opt, ours = _make(mg, name)
        ours.load_state_dict(saved)
        again = io.BytesIO()                  # and this library's file keeps it as it is
        mg.save(ours.state_dict(), again)
        again.seek(0)
        _same(mg.load(again), theirs.state_dict(), f"{name} through mg.save")
        for index in range(3, 7):
            _step(theirs, index)
            _step(ours, index)
            _same(ours.get_last_lr(), theirs.get_last_lr(), f"{name} step {index + 1}")
