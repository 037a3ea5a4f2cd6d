"""RMSprop, Adagrad and the schedules StepLR, MultiStepLR, ExponentialLR, OneCycleLR,
SequentialLR and ReduceLROnPlateau against torch.optim: parameter trajectories over 20 steps
(float64), learning-rate (and momentum) sequences over 40 steps, state dict round trips,
and the errors torch raises."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn, optim

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), ()]


def twin_params(dtype=np.float64, seed=0):
    """The same initial parameters as microgradnorm Parameters and torch leaves."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape).astype(dtype) for shape in SHAPES]
    return ([nn.Parameter(a.copy()) for a in arrays],
            [torch.tensor(a.copy(), requires_grad=True) for a in arrays])


def step_both(opt, opt_t, params, params_t, rng, dtype=np.float64):
    """One step of each optimizer with the same random gradients."""
    for p, p_t in zip(params, params_t):
        grad = rng.standard_normal(p.shape).astype(dtype)
        p.grad, p_t.grad = mg.tensor(grad.copy()), torch.tensor(grad.copy())
    opt.step()
    opt_t.step()


OPTIMIZERS = [
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.02, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "maximize": True, "weight_decay": 0.05}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1,
                 "initial_accumulator_value": 0.5, "eps": 1e-6}),
    ("Adagrad", {"lr": 0.05, "maximize": True}),
]


@pytest.mark.parametrize("name, options", OPTIMIZERS)
def test_trajectory_and_state_match_torch(name, options):
    params, params_t = twin_params()
    opt = getattr(optim, name)(params, **options)
    opt_t = getattr(torch.optim, name)(params_t, **options)
    rng = np.random.default_rng(1)
    for step in range(20):
        step_both(opt, opt_t, params, params_t, rng)
        for p, p_t in zip(params, params_t):
            assert p.dtype == mg.float64
            np.testing.assert_allclose(p.detach().numpy(), p_t.detach().numpy(), rtol=0,
                                       atol=1e-12, err_msg=f"step {step}")
    ours, theirs = opt.state_dict(), opt_t.state_dict()
    assert set(ours["param_groups"][0]) <= set(theirs["param_groups"][0])
    for index, entries in theirs["state"].items():
        assert set(ours["state"][index]) == set(entries)
        for key, value in entries.items():
            np.testing.assert_allclose(np.asarray(ours["state"][index][key]), value.numpy(),
                                       rtol=0, atol=1e-12, err_msg=key)


def test_adagrad_has_state_for_every_parameter_from_the_start_as_torch():
    params, params_t = twin_params()
    ours = optim.Adagrad(params, initial_accumulator_value=0.25).state_dict()
    theirs = torch.optim.Adagrad(params_t, initial_accumulator_value=0.25).state_dict()
    assert set(ours["state"]) == set(theirs["state"]) == {0, 1, 2}
    for index, entries in theirs["state"].items():
        assert ours["state"][index]["step"] == entries["step"].item() == 0
        np.testing.assert_array_equal(ours["state"][index]["sum"], entries["sum"].numpy())


@pytest.mark.parametrize("name, options", [OPTIMIZERS[2], OPTIMIZERS[5]])
def test_float32_parameters_stay_float32_and_follow_torch(name, options):
    params, params_t = twin_params(np.float32)
    opt = getattr(optim, name)(params, **options)
    opt_t = getattr(torch.optim, name)(params_t, **options)
    rng = np.random.default_rng(2)
    for _ in range(5):
        step_both(opt, opt_t, params, params_t, rng, np.float32)
    for p, p_t in zip(params, params_t):
        assert p.dtype == mg.float32 and p_t.dtype == torch.float32
        np.testing.assert_allclose(p.detach().numpy(), p_t.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("name, options", [OPTIMIZERS[2], OPTIMIZERS[5]])
def test_resumed_from_state_dict_continues_bitwise(name, options):
    rng = np.random.default_rng(3)
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(6)]

    def run(opt, params, steps):
        for step_grads in steps:
            for p, g in zip(params, step_grads):
                p.grad = mg.tensor(g)
            opt.step()

    params, _ = twin_params()
    opt = getattr(optim, name)(params, **options)
    run(opt, params, grads)
    first, _ = twin_params()
    opt_first = getattr(optim, name)(first, **options)
    run(opt_first, first, grads[:3])
    resumed = [nn.Parameter(p.detach().numpy().copy()) for p in first]
    opt_resumed = getattr(optim, name)(resumed, lr=123.0)   # options come from the state
    opt_resumed.load_state_dict(opt_first.state_dict())
    run(opt_resumed, resumed, grads[3:])
    for a, b in zip(params, resumed):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("name, option, value", [
    ("RMSprop", "lr", -0.1), ("RMSprop", "alpha", -0.5), ("RMSprop", "eps", -1e-8),
    ("RMSprop", "momentum", -0.9), ("RMSprop", "weight_decay", -1.0),
    ("Adagrad", "lr", -0.1), ("Adagrad", "lr_decay", -0.1), ("Adagrad", "eps", -1.0),
    ("Adagrad", "initial_accumulator_value", -0.1), ("Adagrad", "weight_decay", -1.0)])
def test_bad_options_raise_torchs_error(name, option, value):
    params, params_t = twin_params()
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)(params_t, **{option: value})
    with pytest.raises(type(theirs.value), match=f"{name}: {option} must be"):
        getattr(optim, name)(params, **{option: value})


# ----- schedules --------------------------------------------------------------------------
def twin_optimizers(name="SGD", **options):
    """Two parameter groups with different rates, in microgradnorm and in torch."""
    groups = [{"params": [nn.Parameter(np.zeros(2))]},
              {"params": [nn.Parameter(np.zeros(1))], "lr": 0.3}]
    groups_t = [{"params": [torch.zeros(2, requires_grad=True)]},
                {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.3}]
    return (getattr(optim, name)(groups, lr=0.1, **options),
            getattr(torch.optim, name)(groups_t, lr=0.1, **options))


def options_of(opt, key):
    if key == "beta1":
        return [group["betas"][0] for group in opt.param_groups]
    return [group[key] for group in opt.param_groups]


SCHEDULES = {
    "step": lambda m, o: m.StepLR(o, step_size=3, gamma=0.7),
    "multistep": lambda m, o: m.MultiStepLR(o, milestones=[2, 5, 5, 11], gamma=0.3),
    "exponential": lambda m, o: m.ExponentialLR(o, gamma=0.93),
    "onecycle": lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=40),
    "onecycle_linear_three_phase": lambda m, o: m.OneCycleLR(
        o, max_lr=0.8, epochs=4, steps_per_epoch=10, pct_start=0.25, anneal_strategy="linear",
        three_phase=True, div_factor=10.0, final_div_factor=100.0),
    "onecycle_fixed_momentum": lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=40,
                                                         cycle_momentum=False),
    "sequential": lambda m, o: m.SequentialLR(
        o, [m.OneCycleLR(o, max_lr=0.5, total_steps=12), m.ExponentialLR(o, gamma=0.9),
            m.MultiStepLR(o, milestones=[3, 3, 9], gamma=0.5)], milestones=[12, 20]),
}


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("name, options, momentum", [("SGD", {"momentum": 0.9}, "momentum"),
                                                     ("Adam", {}, "beta1")])
def test_schedule_is_torchs_bit_for_bit(schedule, name, options, momentum):
    opt, opt_t = twin_optimizers(name, **options)
    scheduler = SCHEDULES[schedule](optim.lr_scheduler, opt)
    scheduler_t = SCHEDULES[schedule](torch.optim.lr_scheduler, opt_t)
    for step in range(40):
        for key in ("lr", momentum):
            assert options_of(opt, key) == options_of(opt_t, key), f"{key}, step {step}"
        assert scheduler.get_last_lr() == scheduler_t.get_last_lr() == options_of(opt, "lr")
        opt.step()
        opt_t.step()
        if schedule.startswith("onecycle") and step == 39:
            break                                    # the cycle is 40 steps long
        scheduler.step()
        scheduler_t.step()


def test_onecycle_cycles_rmsprop_momentum_and_refuses_adagrad_and_the_step_past_the_end():
    opt, opt_t = twin_optimizers("RMSprop")
    scheduler = optim.lr_scheduler.OneCycleLR(opt, max_lr=0.4, total_steps=5)
    scheduler_t = torch.optim.lr_scheduler.OneCycleLR(opt_t, max_lr=0.4, total_steps=5)
    opt_t.step()                  # (torch warns when its scheduler steps first)
    for _ in range(5):
        assert options_of(opt, "momentum") == options_of(opt_t, "momentum")
        scheduler.step()
        scheduler_t.step()
    before = [dict(group, params=None) for group in opt.param_groups]
    with pytest.raises(ValueError) as theirs:
        scheduler_t.step()
    with pytest.raises(type(theirs.value), match="total_steps is 5"):
        scheduler.step()
    assert [dict(group, params=None) for group in opt.param_groups] == before
    adagrad, adagrad_t = twin_optimizers("Adagrad")
    with pytest.raises(ValueError) as theirs:
        torch.optim.lr_scheduler.OneCycleLR(adagrad_t, max_lr=0.1, total_steps=5)
    with pytest.raises(type(theirs.value), match="momentum or betas"):
        optim.lr_scheduler.OneCycleLR(adagrad, max_lr=0.1, total_steps=5)


@pytest.mark.parametrize("make, match", [
    (lambda m, o: m.OneCycleLR(o, max_lr=0.1), "total_steps, or epochs"),
    (lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=0), "total_steps must be"),
    (lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=9, pct_start=1.5), "pct_start"),
    (lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=9, anneal_strategy="exp"),
     "anneal_strategy"),
    (lambda m, o: m.OneCycleLR(o, max_lr=[0.1], total_steps=9), "expected 2 values"),
    (lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2)], milestones=[3]), "expected 0 mile"),
    (lambda m, o: m.SequentialLR(o, [], milestones=[]), "non-empty"),
    (lambda m, o: m.ReduceLROnPlateau(o, factor=1.0), "factor"),
    (lambda m, o: m.ReduceLROnPlateau(o, mode="up"), "mode"),
    (lambda m, o: m.ReduceLROnPlateau(o, threshold_mode="log"), "threshold_mode"),
    (lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1, 0.2, 0.3]), "expected 2 values"),
    # ConstantLR, MultiplicativeLR, the warm restarts, CyclicLR, ChainedScheduler
    (lambda m, o: m.ConstantLR(o, factor=1.5), "factor"),
    (lambda m, o: m.ConstantLR(o, factor=-0.1), "factor"),
    (lambda m, o: m.MultiplicativeLR(o, [lambda t: 1.0]), "expected 2 lr_lambdas"),
    (lambda m, o: m.MultiplicativeLR(o, [lambda t: 1.0, 0.5]), "must be a function"),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0), "T_0 must be a positive int"),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2.5), "T_0 must be a positive int"),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), "T_mult must be"),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"), "eta_min must be"),
    (lambda m, o: m.CyclicLR(o, 0.01, 0.1, mode="sawtooth"), "mode must be"),
    (lambda m, o: m.CyclicLR(o, [0.01], 0.1), "expected 2 values of base_lr"),
    (lambda m, o: m.CyclicLR(o, 0.01, 0.1, max_momentum=[0.9] * 3),
     "expected 2 values of max_momentum"),
    (lambda m, o: m.ChainedScheduler([]), "non-empty"),
    (lambda m, o: m.ChainedScheduler([m.ReduceLROnPlateau(o)]), "ReduceLROnPlateau"),
])
def test_bad_schedule_arguments_raise_torchs_error(make, match):
    opt, opt_t = twin_optimizers("SGD", momentum=0.9)
    with pytest.raises(Exception) as theirs:
        make(torch.optim.lr_scheduler, opt_t)
    with pytest.raises(type(theirs.value), match=match):
        make(optim.lr_scheduler, opt)


def test_sequential_refuses_a_scheduler_of_another_optimizer_or_a_plateau():
    opt, other = twin_optimizers()[0], twin_optimizers()[0]
    lr_scheduler = optim.lr_scheduler
    with pytest.raises(ValueError, match="another optimizer"):
        lr_scheduler.SequentialLR(opt, [lr_scheduler.StepLR(opt, 2),
                                        lr_scheduler.StepLR(other, 2)], milestones=[3])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        lr_scheduler.SequentialLR(opt, [lr_scheduler.ReduceLROnPlateau(opt)], milestones=[])
    with pytest.raises(TypeError, match="must be an LRScheduler"):
        lr_scheduler.SequentialLR(opt, [object()], milestones=[])


PLATEAUS = [{}, {"mode": "max", "factor": 0.5, "patience": 2, "cooldown": 2},
            {"threshold_mode": "abs", "threshold": 0.05, "patience": 1, "min_lr": [0.05, 0.01]},
            {"mode": "max", "threshold_mode": "abs", "patience": 0, "eps": 0.02}]


@pytest.mark.parametrize("options", PLATEAUS)
def test_reduce_on_plateau_follows_torch(options):
    opt, opt_t = twin_optimizers()
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(opt, **options)
    scheduler_t = torch.optim.lr_scheduler.ReduceLROnPlateau(opt_t, **options)
    metrics = np.random.default_rng(4).standard_normal(40).cumsum() * 0.1
    for step, metric in enumerate(metrics):
        scheduler.step(mg.tensor(metric) if step % 2 else metric)
        scheduler_t.step(metric)
        assert scheduler.get_last_lr() == scheduler_t.get_last_lr(), f"step {step}"
        assert (scheduler.num_bad_epochs, scheduler.cooldown_counter, scheduler.best) == \
            (scheduler_t.num_bad_epochs, scheduler_t.cooldown_counter, scheduler_t.best)


def lr_sequence(make, name, options, steps, resume_at=None, plateau=False):
    """The rates of ``steps`` steps; with ``resume_at``, saved there and continued by a new
    optimizer and scheduler made from nothing but the two state dicts."""
    opt = twin_optimizers(name, **options)[0]
    scheduler = make(optim.lr_scheduler, opt)
    metrics = np.sin(np.arange(steps))
    rates = []
    for step in range(steps):
        if step == resume_at:
            saved, saved_opt = scheduler.state_dict(), opt.state_dict()
            opt = twin_optimizers(name, **options)[0]
            scheduler = make(optim.lr_scheduler, opt)
            opt.load_state_dict(saved_opt)
            scheduler.load_state_dict(saved)
        rates.append((options_of(opt, "lr"), scheduler.get_last_lr()))
        scheduler.step(metrics[step]) if plateau else scheduler.step()
    return rates


@pytest.mark.parametrize("schedule", ["step", "multistep", "exponential", "onecycle",
                                      "sequential", "plateau"])
def test_state_dict_round_trip_continues_the_same_sequence(schedule):
    plateau = schedule == "plateau"
    make = ((lambda m, o: m.ReduceLROnPlateau(o, patience=1, cooldown=1)) if plateau
            else SCHEDULES[schedule])
    whole = lr_sequence(make, "Adam", {}, 35, plateau=plateau)
    assert whole == lr_sequence(make, "Adam", {}, 35, resume_at=13, plateau=plateau)
    assert len({str(rates) for rates, _ in whole}) > 3          # the rate did move


def test_onecycle_group_keys_survive_the_optimizers_state_dict():
    opt = twin_optimizers("SGD", momentum=0.9)[0]
    optim.lr_scheduler.OneCycleLR(opt, max_lr=0.4, total_steps=10)
    opt_t = twin_optimizers("SGD", momentum=0.9)[1]
    torch.optim.lr_scheduler.OneCycleLR(opt_t, max_lr=0.4, total_steps=10)
    assert set(opt.param_groups[0]) <= set(opt_t.param_groups[0])
    for key in ("initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum"):
        assert options_of(opt, key) == options_of(opt_t, key), key
    fresh = twin_optimizers("SGD", momentum=0.9)[0]
    fresh.load_state_dict(opt.state_dict())
    assert options_of(fresh, "max_lr") == [0.4, 0.4]
