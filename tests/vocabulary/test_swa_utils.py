"""``optim.swa_utils`` against torch's, float64 with copied weights: AveragedModel's equal
(SWA) and exponential (EMA) averages through ``multi_avg_fn`` and ``avg_fn``, with and
without the buffers; SWALR's annealed rates (cos, linear, no annealing, one rate per
group; step(epoch), a resumed last_epoch, state_dict round trips mid-anneal);
``update_bn``'s recomputed BatchNorm statistics and restored momenta and mode; the state
dict's keys; the argument errors."""

import numpy as np
import pytest
import torch

import microgradnorm as mg


def model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.BatchNorm1d(8), lib.nn.ReLU(),
                             lib.nn.Linear(8, 2)).double()


def pair():
    theirs = model(torch)
    ours = model(mg)
    ours.load_state_dict({k: mg.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def train(lib, net, averaged, steps, scheduler=None, seed=1):
    optimizer = lib.optim.SGD(net.parameters(), lr=0.1)
    schedule = scheduler(lib, optimizer) if scheduler else None
    rng, rates = np.random.default_rng(seed), []
    for _ in range(steps):
        x = lib.tensor(rng.standard_normal((6, 4)))
        loss = net(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        averaged.update_parameters(net)
        if schedule:
            schedule.step()
            rates.append(schedule.get_last_lr())
    return rates


def same(ours, theirs):
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=name)


@pytest.mark.parametrize("kind", ["swa", "ema multi", "ema one", "swa buffers"])
def test_averaged_models_match_torchs(kind):
    ours, theirs = pair()
    made = {}
    for lib, net in ((mg, ours), (torch, theirs)):
        su = lib.optim.swa_utils
        options = {"swa": {}, "swa buffers": {"use_buffers": True},
                   "ema multi": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)},
                   "ema one": {"avg_fn": su.get_ema_avg_fn(0.8)}}[kind]
        made[lib] = su.AveragedModel(net, **options)
        train(lib, net, made[lib], 5)
    same(made[mg], made[torch])
    assert int(made[mg].n_averaged) == int(made[torch].n_averaged) == 5
    x = np.random.default_rng(2).standard_normal((3, 4))
    made[mg].eval(), made[torch].eval()
    np.testing.assert_allclose(made[mg](mg.tensor(x)).detach().numpy(),
                               made[torch](torch.tensor(x)).detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("options", [
    {"swa_lr": 0.05, "anneal_epochs": 3},
    {"swa_lr": 0.05, "anneal_epochs": 4, "anneal_strategy": "linear"},
    {"swa_lr": 0.02, "anneal_epochs": 0},
])
def test_swalr_anneals_as_torchs(options):
    ours, theirs = pair()
    rates = {}
    for lib, net in ((mg, ours), (torch, theirs)):
        averaged = lib.optim.swa_utils.AveragedModel(net)
        rates[lib] = train(lib, net, averaged, 7, lambda lib_, opt: lib_.optim.swa_utils
                           .SWALR(opt, **options))
    np.testing.assert_allclose(rates[mg], rates[torch], rtol=1e-15)


def swalr_after(lib, kind, steps=9):
    # two parameter groups at lr 1 and 0.5: a schedule first, then SWALR from the rate it
    # left ("switch": each step calls only the running scheduler's step(), torch's recipe)
    w, v = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))
    optimizer = lib.optim.SGD([{"params": [w]}, {"params": [v], "lr": 0.5}], lr=1.0)
    schedules, swa_utils = lib.optim.lr_scheduler, lib.optim.swa_utils
    if kind == "sequential":
        first = schedules.ExponentialLR(optimizer, 0.5)
        swa = swa_utils.SWALR(optimizer, swa_lr=0.05, anneal_epochs=3)
        scheduler = schedules.SequentialLR(optimizer, [first, swa], milestones=[3])
    else:
        first = schedules.CosineAnnealingLR(optimizer, T_max=10)
        swa = swa_utils.SWALR(optimizer, swa_lr=[0.05, 0.02], anneal_epochs=3)
        scheduler = schedules.ChainedScheduler([first, swa]) if kind == "chained" else None
    rates = []
    for step in range(steps):
        (scheduler or (first if step < 4 else swa)).step()
        rates.append([group["lr"] for group in optimizer.param_groups])
    return rates


@pytest.mark.parametrize("kind", ["switch", "sequential", "chained"])
@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step")
def test_swalr_anneals_from_the_rate_another_schedule_set(kind):
    np.testing.assert_allclose(swalr_after(mg, kind), swalr_after(torch, kind), rtol=1e-15)


SWALR_OPTIONS = [{"swa_lr": 0.05}, {"swa_lr": 0.05, "anneal_epochs": 3},
                 {"swa_lr": 0.05, "anneal_epochs": 0},
                 {"swa_lr": 0.05, "anneal_epochs": 4, "anneal_strategy": "linear"},
                 {"swa_lr": [0.05, 0.02], "anneal_epochs": 3}]


def two_groups(lib, **options):
    """SGD over two groups at lr 1 and 0.5, and SWALR over it with ``options``."""
    w, v = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))
    optimizer = lib.optim.SGD([{"params": [w]}, {"params": [v], "lr": 0.5}], lr=1.0)
    return optimizer, lib.optim.swa_utils.SWALR(optimizer, **options)


def seen(optimizer, scheduler):
    # every rate at a step: the groups', last_epoch, get_last_lr()
    return [group["lr"] for group in optimizer.param_groups] + [scheduler.last_epoch] \
        + list(scheduler.get_last_lr())


def swalr_epochs(lib, options):
    # plain steps and deprecated step(epoch)s, forwards and back: t counts the steps
    optimizer, scheduler = two_groups(lib, **options)
    rates = [seen(optimizer, scheduler)]
    for epoch in (None, None, 5, None, 2, None, 0, None, None, 20, None):
        if epoch is None:
            scheduler.step()
        else:
            with pytest.warns(UserWarning, match="epoch parameter"):
                scheduler.step(epoch)
        rates.append(seen(optimizer, scheduler))
    return rates


@pytest.mark.parametrize("options", SWALR_OPTIONS)
@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step")
def test_swalr_step_with_an_epoch_anneals_by_its_count_as_torchs(options):
    np.testing.assert_allclose(swalr_epochs(mg, options), swalr_epochs(torch, options),
                               rtol=1e-15, atol=0)


def swalr_resumed(lib, options, steps, load_optimizer, state=None):
    # ``steps`` steps, then a new optimizer and SWALR loaded from their states (with or
    # without the optimizer's) and stepped on; ``state``: the SWALR state to load instead
    optimizer, scheduler = two_groups(lib, **options)
    rates = []
    for _ in range(steps):
        scheduler.step()
        rates.append(seen(optimizer, scheduler))
    saved = scheduler.state_dict() if state is None else state
    again, resumed = two_groups(lib, **{**options, "anneal_epochs": 7})   # the state's win
    if load_optimizer:
        again.load_state_dict(optimizer.state_dict())
    resumed.load_state_dict(saved)
    rates.append(seen(again, resumed))
    for _ in range(6):
        resumed.step()
        rates.append(seen(again, resumed))
    return rates, scheduler.state_dict()


@pytest.mark.parametrize("options", SWALR_OPTIONS)
@pytest.mark.parametrize("steps", [1, 2, 4])
@pytest.mark.parametrize("load_optimizer", [True, False], ids=["with optimizer", "alone"])
@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step")
def test_swalr_state_dict_round_trip_mid_anneal_as_torchs(options, steps, load_optimizer):
    ours, our_state = swalr_resumed(mg, options, steps, load_optimizer)
    theirs, their_state = swalr_resumed(torch, options, steps, load_optimizer)
    np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=0)
    assert set(our_state) <= set(their_state)
    for key in our_state:
        assert our_state[key] == their_state[key], key
    # torch's own state_dict loads here and continues as torch's
    from_torch, _ = swalr_resumed(mg, options, steps, load_optimizer, state=their_state)
    np.testing.assert_allclose(from_torch, theirs, rtol=1e-15, atol=0)


@pytest.mark.parametrize("options", SWALR_OPTIONS)
@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step")
def test_swalr_made_with_last_epoch_starts_its_count_as_torchs(options):
    def run(lib):
        optimizer, scheduler = two_groups(lib, **options)
        for _ in range(3):
            scheduler.step()
        resumed = lib.optim.swa_utils.SWALR(optimizer, last_epoch=3, **options)
        rates = [seen(optimizer, resumed)]
        for _ in range(5):
            resumed.step()
            rates.append(seen(optimizer, resumed))
        return rates
    np.testing.assert_allclose(run(mg), run(torch), rtol=1e-15, atol=0)


def test_swalr_load_state_dict_checks_the_state():
    _, scheduler = two_groups(mg, swa_lr=0.05)
    state = scheduler.state_dict()
    for change in ({"_step_count": 0}, {"anneal_epochs": -1}, {"_anneal_strategy": "step"},
                   {"_last_lr": [0.1]}, {"last_epoch": -2}, {"extra": 1}):
        with pytest.raises(ValueError, match="SWALR.load_state_dict"):
            scheduler.load_state_dict({**state, **change})
    assert scheduler.state_dict() == state


def test_swalr_takes_one_rate_per_group_and_checks_its_arguments():
    w, v = mg.nn.Parameter(mg.ones(2)), mg.nn.Parameter(mg.ones(2))
    optimizer = mg.optim.SGD([{"params": [w]}, {"params": [v], "lr": 0.5}], lr=0.1)
    scheduler = mg.optim.swa_utils.SWALR(optimizer, swa_lr=[0.01, 0.2], anneal_epochs=2)
    for _ in range(3):
        scheduler.step()
    assert scheduler.get_last_lr() == pytest.approx([0.01, 0.2])
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        mg.optim.swa_utils.SWALR(optimizer, 0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        mg.optim.swa_utils.SWALR(optimizer, 0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="expected 2 values of swa_lr"):
        mg.optim.swa_utils.SWALR(optimizer, [0.1])
    assert "swa_lr" in optimizer.state_dict()["param_groups"][0]
    mg.optim.SGD([w], lr=0.1).load_state_dict(
        mg.optim.SGD([w], lr=0.1).state_dict())


def test_update_bn_recomputes_the_statistics_and_restores_momentum_and_mode():
    ours, theirs = pair()
    rng = np.random.default_rng(3)
    batches = [rng.standard_normal((5, 4)) for _ in range(3)]
    for lib, net in ((mg, ours), (torch, theirs)):
        net.eval()
        loader = [(lib.tensor(b), lib.tensor(0)) for b in batches]      # (input, target)
        lib.optim.swa_utils.update_bn(loader, net)
        assert not net.training and net[1].momentum == 0.1
    same(ours, theirs)
    assert int(ours[1].num_batches_tracked) == 3


def test_average_function_errors_are_torchs():
    for lib in (mg, torch):
        with pytest.raises(ValueError, match="Invalid decay value"):
            lib.optim.swa_utils.get_ema_multi_avg_fn(1.5)
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            lib.optim.swa_utils.AveragedModel(lib.nn.Linear(2, 2), avg_fn=lambda *a: a[0],
                                              multi_avg_fn=lambda *a: None)


def test_a_two_key_state_dict_loads_as_torchs_keeping_the_count():
    # {last_epoch, base_lrs}: what older versions of this library wrote; torch's load
    # updates those two and keeps the rest
    rates = {}
    for lib in (mg, torch):
        p = lib.nn.Parameter(lib.zeros(2))
        optimizer = lib.optim.SGD([p], lr=0.5)
        scheduler = lib.optim.swa_utils.SWALR(optimizer, swa_lr=0.1, anneal_epochs=3)
        scheduler.load_state_dict({"last_epoch": 3, "base_lrs": [0.5]})
        rates[lib] = []
        for _ in range(4):
            optimizer.step()
            scheduler.step()
            rates[lib].append(optimizer.param_groups[0]["lr"])
        assert scheduler.last_epoch == 7
    assert rates[mg] == rates[torch]
