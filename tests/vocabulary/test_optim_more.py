"""NAdam, RAdam, Adamax, Adadelta, Adafactor, ASGD, Rprop and the schedules ConstantLR,
MultiplicativeLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR and ChainedScheduler
against torch.optim: parameter trajectories (float64 to 1e-12, float32 to a few ulp), state
dicts (layout, values, torch's loaded into ours), rates and momenta over 40 steps bit for
bit, state dict round trips, constructor signatures and the errors torch raises."""

import inspect
import io
import warnings

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn, optim

torch = pytest.importorskip("torch")
from test_optim_schedulers import options_of, twin_optimizers  # noqa: E402  (after the skip)

SHAPES = [(3, 4), (5,), (), (2, 3, 4)]


def twin_params(dtype=np.float64, seed=0):
    """The same initial parameters as microgradnorm Parameters and torch leaves."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape).astype(dtype) for shape in SHAPES]
    return ([nn.Parameter(a.copy()) for a in arrays],
            [torch.tensor(a.copy(), requires_grad=True) for a in arrays])


def twin_optimizers_of(name, options, dtype=np.float64):
    """``twin_params`` and optimizer ``name`` with ``options`` on each: (params, params_t,
    opt, opt_t)."""
    params, params_t = twin_params(dtype)
    return (params, params_t, getattr(optim, name)(params, **options),
            getattr(torch.optim, name)(params_t, **options))


def gradients(rng, dtype, step):
    """One step's gradients; step 2 is all zeros (Rprop's sign, Adafactor's clipping)."""
    return [rng.standard_normal(shape).astype(dtype) * (step != 2) for shape in SHAPES]


def step_both(opt, opt_t, params, params_t, grads):
    for p, p_t, grad in zip(params, params_t, grads):
        p.grad, p_t.grad = mg.tensor(grad.copy()), torch.tensor(grad.copy())
    opt.step()
    opt_t.step()


def as_numpy(value):
    return value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


OPTIMIZERS = [
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.1, "betas": (0.5, 0.6), "weight_decay": 0.1}),   # rectified from step 2
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.3, 0.9), "weight_decay": 0.2, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-4, "weight_decay": 0.1, "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.1, "beta2_decay": -0.5, "eps": (1e-20, 1e-3), "d": 2.0,
                   "weight_decay": 0.1}),
    ("Adafactor", {"maximize": True, "eps": (None, 0.5)}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.1, "lambd": 0.1, "alpha": 0.5, "t0": 2, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 0, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.02, "etas": (0.3, 1.7), "step_sizes": (1e-3, 0.05), "maximize": True}),
]
NAMES = sorted({name for name, _ in OPTIMIZERS})


@pytest.mark.parametrize("name, options", OPTIMIZERS)
def test_trajectory_and_state_match_torch(name, options):
    params, params_t, opt, opt_t = twin_optimizers_of(name, options)
    rng = np.random.default_rng(1)
    for step in range(6):
        step_both(opt, opt_t, params, params_t, gradients(rng, np.float64, step))
        for p, p_t in zip(params, params_t):
            assert p.dtype == mg.float64
            np.testing.assert_allclose(p.detach().numpy(), p_t.detach().numpy(), rtol=0,
                                       atol=1e-12, err_msg=f"step {step}")
    ours, theirs = opt.state_dict(), opt_t.state_dict()
    assert set(ours["param_groups"][0]) == set(theirs["param_groups"][0])
    for index, entries in theirs["state"].items():
        assert set(ours["state"][index]) == set(entries)
        for key, value in entries.items():
            mine = np.asarray(ours["state"][index][key])
            assert mine.shape == tuple(value.shape), key
            np.testing.assert_allclose(mine, value.numpy(), rtol=0, atol=1e-12, err_msg=key)


@pytest.mark.parametrize("name, options", [case for case in OPTIMIZERS if case[1]])
def test_float32_stays_float32_within_a_few_ulp_of_torch(name, options):
    params, params_t, opt, opt_t = twin_optimizers_of(name, options, np.float32)
    rng = np.random.default_rng(2)
    for step in range(5):
        step_both(opt, opt_t, params, params_t, gradients(rng, np.float32, step))
    for p, p_t in zip(params, params_t):
        assert p.dtype == mg.float32
        theirs = p_t.detach().numpy()
        # ulps of the values' scale: a step that cancels most of a value keeps its error
        ulp = np.spacing(np.float32(max(1.0, np.abs(theirs).max(initial=0))))
        np.testing.assert_allclose(p.detach().numpy(), theirs, rtol=0, atol=4 * ulp)


@pytest.mark.parametrize("name, options, key", [
    ("NAdam", {}, "mu_product"), ("ASGD", {"t0": 1}, "eta"), ("ASGD", {"t0": 1}, "mu")])
@pytest.mark.parametrize("default", [np.float32, np.float64])
def test_per_parameter_numbers_round_in_torchs_scalar_dtype(name, options, key, default):
    before = mg.get_default_dtype(), torch.get_default_dtype()
    mg.set_default_dtype(default)
    torch.set_default_dtype(getattr(torch, np.dtype(default).name))
    try:
        params, params_t, opt, opt_t = twin_optimizers_of(name, options)
        rng = np.random.default_rng(3)
        for step in range(5):
            step_both(opt, opt_t, params, params_t, gradients(rng, np.float64, step))
        for p, p_t in zip(params, params_t):
            np.testing.assert_allclose(p.detach().numpy(), p_t.detach().numpy(), rtol=0,
                                       atol=1e-13)
        ours, theirs = opt.state_dict()["state"][0][key], opt_t.state_dict()["state"][0][key]
        assert ours.dtype == np.dtype(default) and ours.shape == ()
        assert ours == theirs.numpy()                           # bit for bit
    finally:
        mg.set_default_dtype(before[0])
        torch.set_default_dtype(before[1])


def torch_state_as_numpy(state_dict):
    return {"state": {index: {key: value.numpy() for key, value in entries.items()}
                      for index, entries in state_dict["state"].items()},
            "param_groups": [dict(group) for group in state_dict["param_groups"]]}


@pytest.mark.parametrize("name, options", [OPTIMIZERS[i] for i in (1, 5, 7, 9, 11, 14, 17)])
def test_resumes_bitwise_from_its_own_and_from_torchs_state_dict(name, options):
    rng = np.random.default_rng(4)
    grads = [gradients(rng, np.float64, step) for step in range(6)]
    params, params_t, opt, opt_t = twin_optimizers_of(name, options)
    for step_grads in grads[:3]:
        step_both(opt, opt_t, params, params_t, step_grads)
    buffer = io.BytesIO()
    mg.save(opt.state_dict(), buffer)                     # through the data-only file
    buffer.seek(0)
    saved, from_torch = mg.load(buffer), torch_state_as_numpy(opt_t.state_dict())
    resumed = [[nn.Parameter(p.detach().numpy().copy()) for p in params] for _ in range(2)]
    opts = [getattr(optim, name)(group, lr=123.0) for group in resumed]  # options: the state
    opts[0].load_state_dict(saved)
    opts[1].load_state_dict(from_torch)
    for step_grads in grads[3:]:
        step_both(opt, opt_t, params, params_t, step_grads)
        for group, optimizer in zip(resumed, opts):
            for p, grad in zip(group, step_grads):
                p.grad = mg.tensor(grad.copy())
            optimizer.step()
    for a, b, c, p_t in zip(params, *resumed, params_t):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        np.testing.assert_allclose(c.detach().numpy(), p_t.detach().numpy(), rtol=0,
                                   atol=1e-12)


@pytest.mark.parametrize("name", NAMES + ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_constructor_signature_is_torchs(name):
    ours = inspect.signature(getattr(optim, name)).parameters
    theirs = inspect.signature(getattr(torch.optim, name)).parameters
    positional = [n for n, p in theirs.items() if p.kind == p.POSITIONAL_OR_KEYWORD]
    assert [n for n, p in ours.items() if p.kind == p.POSITIONAL_OR_KEYWORD][
        :len(positional)] == positional
    for option, parameter in theirs.items():
        assert option in ours, option
        assert ours[option].default == parameter.default, option


@pytest.mark.parametrize("name", NAMES)
def test_implementation_switches_are_taken_and_change_nothing(name):
    keywords = inspect.signature(getattr(torch.optim, name)).parameters
    switches = {k: v for k, v in (("foreach", True), ("capturable", True), ("fused", True))
                if k in keywords}
    results = []
    for given in ({}, switches):
        params, _ = twin_params()
        opt = getattr(optim, name)(params, **given)
        assert all(opt.param_groups[0][k] == v for k, v in given.items())
        for step_grads in [gradients(np.random.default_rng(5), np.float64, 0)] * 2:
            for p, grad in zip(params, step_grads):
                p.grad = mg.tensor(grad)
            opt.step()
        results.append([p.detach().numpy() for p in params])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    refused = NotImplementedError if "differentiable" in keywords else TypeError
    with pytest.raises(refused, match="differentiable"):     # torch's Adafactor has none
        getattr(optim, name)(twin_params()[0], differentiable=True)
    with pytest.raises(ValueError, match="foreach must be None, True or False"):
        getattr(optim, name)(twin_params()[0], foreach="yes")


def test_adam_fused_with_foreach_is_torchs_runtime_error_and_adamw_is_decoupled():
    params, params_t = twin_params()
    with pytest.raises(RuntimeError) as theirs:
        torch.optim.AdamW(params_t, foreach=True, fused=True)
    with pytest.raises(type(theirs.value), match="`fused` and `foreach` cannot"):
        optim.AdamW(params, foreach=True, fused=True)
    assert optim.AdamW(params).param_groups[0]["decoupled_weight_decay"] is True
    # Adam(decoupled_weight_decay=True) is AdamW, in torch and here
    for decoupled in (optim.Adam(params, weight_decay=0.1, decoupled_weight_decay=True),
                      optim.AdamW(twin_params()[0], weight_decay=0.1)):
        adam_t = torch.optim.Adam(twin_params()[1], weight_decay=0.1,
                                  decoupled_weight_decay=True)
        ours, theirs = decoupled.param_groups[0]["params"], adam_t.param_groups[0]["params"]
        for _ in range(3):
            step_both(decoupled, adam_t, ours, theirs, gradients(np.random.default_rng(6),
                                                                 np.float64, 0))
        for p, p_t in zip(ours, theirs):
            np.testing.assert_allclose(p.detach().numpy(), p_t.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("name, options, match", [
    ("NAdam", {"lr": -0.1}, "lr must be"), ("NAdam", {"eps": -1.0}, "eps must be"),
    ("NAdam", {"betas": (1.0, 0.9)}, "betas must be"),
    ("NAdam", {"weight_decay": -1.0}, "weight_decay must be"),
    ("NAdam", {"momentum_decay": -0.1}, "momentum_decay must be"),
    ("RAdam", {"betas": (0.9, -0.1)}, "betas must be"), ("RAdam", {"lr": -1.0}, "lr must be"),
    ("Adamax", {"eps": -1e-8}, "eps must be"),
    ("Adamax", {"weight_decay": -0.1}, "weight_decay must be"),
    ("Adadelta", {"rho": 1.5}, "rho must be in"), ("Adadelta", {"rho": -0.5}, "rho must be"),
    ("Adadelta", {"lr": -1.0}, "lr must be"),
    ("Adafactor", {"beta2_decay": 0.5}, "beta2_decay must be"),
    ("Adafactor", {"eps": (-1.0, 1e-3)}, "eps1 must be"),
    ("Adafactor", {"eps": (None, -1e-3)}, "eps2 must be"),
    ("Adafactor", {"d": 0.5}, "d .the clipping threshold. must be"),
    ("Adafactor", {"weight_decay": -0.1}, "weight_decay must be"),
    ("ASGD", {"lr": -0.1}, "lr must be"), ("ASGD", {"weight_decay": -0.1}, "weight_decay"),
    ("Rprop", {"etas": (1.5, 1.2)}, "etas must be"), ("Rprop", {"etas": (0.5, 0.9)}, "etas"),
    ("Rprop", {"lr": -1.0}, "lr must be"),
])
def test_bad_options_raise_torchs_error(name, options, match):
    params, params_t = twin_params()
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)(params_t, **options)
    with pytest.raises(type(theirs.value), match=f"{name}: {match}"):
        getattr(optim, name)(params, **options)
    with pytest.raises(TypeError, match="lr must be a real number"):
        getattr(optim, name)(params, lr="0.1")


@pytest.mark.parametrize("name, options", [OPTIMIZERS[i] for i in (0, 3, 6, 8, 10, 13, 16)])
def test_a_failing_step_changes_nothing(name, options):
    params, _ = twin_params()
    opt = getattr(optim, name)(params, **options)
    for p, grad in zip(params, gradients(np.random.default_rng(7), np.float64, 0)):
        p.grad = mg.tensor(grad)
    opt.step()
    before = [p.detach().numpy().copy() for p in params[:-1]], opt.state_dict()
    params[-1].data = mg.zeros(7, dtype=mg.float64)     # the last one's state: another shape
    params[-1].grad = mg.ones(7, dtype=mg.float64)
    with pytest.raises(ValueError, match="has shape"):
        opt.step()
    for p, old in zip(params, before[0]):
        np.testing.assert_array_equal(p.detach().numpy(), old)
    after = opt.state_dict()
    for index, entries in before[1]["state"].items():
        for key, value in entries.items():
            np.testing.assert_array_equal(after["state"][index][key], value)


@pytest.mark.parametrize("name", NAMES)
def test_half_precision_updates_in_float32_and_rounds_once(name):
    values = np.random.default_rng(8).standard_normal((4, 3)).astype(np.float32)
    grad = np.random.default_rng(9).standard_normal((4, 3)).astype(np.float32)
    half = nn.Parameter(values.astype(np.float16))
    single = nn.Parameter(values.astype(np.float16).astype(np.float32))
    opts = [getattr(optim, name)([p], lr=0.05) for p in (half, single)]
    for _ in range(3):
        half.grad = mg.tensor(grad.astype(np.float16))
        single.grad = mg.tensor(grad.astype(np.float16).astype(np.float32))
        for opt in opts:
            opt.step()
        single.data = mg.tensor(single.detach().numpy().astype(np.float16).astype(np.float32))
    assert half.dtype == mg.float16
    np.testing.assert_array_equal(half.detach().numpy().astype(np.float32), single.data.numpy())
    state = opts[0].state_dict()["state"][0]
    assert all(v.dtype == np.float32 for k, v in state.items() if k != "step"
               and np.ndim(v) > 0)


def test_adafactor_factors_the_last_two_dimensions_and_checks_their_shapes():
    params, _ = twin_params()
    opt = optim.Adafactor(params)
    for p in params:
        p.grad = mg.ones_like(p)
    opt.step()
    shapes = {i: {k: np.shape(v) for k, v in e.items()} for i, e in opt.state_dict()["state"]
              .items()}
    assert shapes[0] == {"step": (), "row_var": (3, 1), "col_var": (1, 4)}
    assert shapes[1] == {"step": (), "variance": (5,)} and shapes[2]["variance"] == ()
    assert shapes[3] == {"step": (), "row_var": (2, 3, 1), "col_var": (2, 1, 4)}
    params[0].data = mg.zeros(4, 3, dtype=mg.float64)
    params[0].grad = mg.ones(4, 3, dtype=mg.float64)
    with pytest.raises(ValueError, match="state 'row_var' has shape"):
        opt.step()
    params[0].data = mg.zeros(3, 4, dtype=mg.float64)
    params[0].grad = mg.ones_like(params[0])
    empty = nn.Parameter(np.zeros((0, 3)))              # RMS of nothing: 0 / 0, as in torch
    opt.add_param_group({"params": [empty]})
    empty.grad = mg.zeros_like(empty)
    before = [p.detach().numpy().copy() for p in params]
    with pytest.raises(ZeroDivisionError):
        opt.step()
    for p, old in zip(params, before):                  # every other update was computed
        np.testing.assert_array_equal(p.detach().numpy(), old)
    saved = opt.state_dict()
    saved["state"][3]["col_var"] = np.zeros((2, 3, 4))
    with pytest.raises(ValueError, match=r"expected shape \(2, 1, 4\)"):
        optim.Adafactor([{"params": twin_params()[0]},
                         {"params": [nn.Parameter(np.zeros((0, 3)))]}]).load_state_dict(saved)


# ----- schedules --------------------------------------------------------------------------
SCHEDULES = {
    "constant": lambda m, o: m.ConstantLR(o, factor=0.3, total_iters=7),
    "constant_default": lambda m, o: m.ConstantLR(o),
    "multiplicative": lambda m, o: m.MultiplicativeLR(o, lambda t: 0.97 if t % 3 else 1.1),
    "multiplicative_per_group": lambda m, o: m.MultiplicativeLR(
        o, [lambda t: 0.9, lambda t: 1.0 + t / 100]),
    "polynomial": lambda m, o: m.PolynomialLR(o, total_iters=20, power=1.7),
    "polynomial_default": lambda m, o: m.PolynomialLR(o),
    "warm_restarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5),
    "warm_restarts_mult": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                     eta_min=0.01),
    "cyclic": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.5], step_size_up=4),
    "cyclic_triangular2": lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1,
                                                  step_size_up=3, step_size_down=5,
                                                  mode="triangular2", base_momentum=0.7,
                                                  max_momentum=[0.9, 0.95]),
    "cyclic_exp_range": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                                mode="exp_range", gamma=0.95),
    "cyclic_scale_fn": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                               scale_fn=lambda x: 1 / (x + 1),
                                               scale_mode="iterations", cycle_momentum=False),
    "chained": lambda m, o: m.ChainedScheduler([m.ConstantLR(o, factor=0.1, total_iters=4),
                                                m.ExponentialLR(o, gamma=0.9)], optimizer=o),
    "chained_recursive": lambda m, o: m.ChainedScheduler([
        m.LinearLR(o, start_factor=0.2, total_iters=6), m.CosineAnnealingLR(o, T_max=10),
        m.StepLR(o, 4, 0.5)]),
    "chained_products": lambda m, o: m.ChainedScheduler([
        m.PolynomialLR(o, total_iters=25, power=2.0), m.MultiStepLR(o, [3, 9], 0.5),
        m.MultiplicativeLR(o, lambda t: 0.99)]),
    "chained_cyclic": lambda m, o: m.ChainedScheduler([
        m.CyclicLR(o, 0.01, 0.1, step_size_up=3), m.ExponentialLR(o, 0.9)]),
    "sequential": lambda m, o: m.SequentialLR(o, [
        m.ConstantLR(o, factor=0.5, total_iters=3),
        m.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2)], milestones=[6]),
}
CYCLING = ("cyclic", "cyclic_triangular2", "cyclic_exp_range", "chained_cyclic")


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("name, options, momentum", [("SGD", {"momentum": 0.9}, "momentum"),
                                                     ("Adam", {}, "beta1")])
def test_schedule_is_torchs_bit_for_bit(schedule, name, options, momentum):
    opt, opt_t = twin_optimizers(name, **options)
    scheduler = SCHEDULES[schedule](optim.lr_scheduler, opt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                # torch's SequentialLR(step(0)) warns
        scheduler_t = SCHEDULES[schedule](torch.optim.lr_scheduler, opt_t)
        seen = set()
        for step in range(40):
            for key in ("lr", momentum):
                assert options_of(opt, key) == options_of(opt_t, key), f"{key}, step {step}"
            assert scheduler.get_last_lr() == scheduler_t.get_last_lr() \
                == options_of(opt, "lr")
            seen.add((str(options_of(opt, "lr")), str(options_of(opt, momentum))))
            opt.step()
            opt_t.step()
            scheduler.step()
            scheduler_t.step()
    assert len({rates for rates, _ in seen}) > 1                 # the rate did move
    if schedule in CYCLING:
        assert len({momenta for _, momenta in seen}) > 3          # and the momentum


@pytest.mark.parametrize("T_0, T_mult", [(3, 1), (3, 2), (2, 3)])
def test_warm_restarts_follow_torch_through_fractional_epochs(T_0, T_mult):
    opt, opt_t = twin_optimizers("SGD", momentum=0.9)
    lr_scheduler = optim.lr_scheduler
    scheduler = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0, T_mult, eta_min=1e-3)
    scheduler_t = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt_t, T_0, T_mult,
                                                                       eta_min=1e-3)
    epochs = [e + i / 4 for e in range(12) for i in range(4)] + [None] * 5 \
        + [30, 7.25, None, None, 0, 45.5, None]
    for epoch in epochs:
        scheduler.step(epoch)
        scheduler_t.step(epoch)
        assert scheduler.get_last_lr() == scheduler_t.get_last_lr() == options_of(opt, "lr")
        assert (scheduler.last_epoch, scheduler.T_cur, scheduler.T_i) == \
            (scheduler_t.last_epoch, scheduler_t.T_cur, scheduler_t.T_i), epoch
    resumed = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0, T_mult, eta_min=1e-3)
    resumed.load_state_dict(scheduler.state_dict())        # fractional T_cur carried over
    for _ in range(5):
        resumed.step()
        scheduler_t.step()
        assert resumed.get_last_lr() == scheduler_t.get_last_lr()
    with pytest.raises(ValueError, match="epoch must be >= 0"):
        resumed.step(-1)


def lr_sequence(make, steps, resume_at=None):
    """The rates and momenta of ``steps`` steps; with ``resume_at``, saved there and continued
    by a new optimizer and scheduler made from nothing but the two state dicts."""
    opt = twin_optimizers("SGD", momentum=0.9)[0]
    scheduler = make(optim.lr_scheduler, opt)
    rates = []
    for step in range(steps):
        if step == resume_at:
            buffer = io.BytesIO()
            mg.save({"scheduler": scheduler.state_dict(), "opt": opt.state_dict()}, buffer)
            buffer.seek(0)
            saved = mg.load(buffer)
            opt = twin_optimizers("SGD", momentum=0.9)[0]
            scheduler = make(optim.lr_scheduler, opt)
            opt.load_state_dict(saved["opt"])
            scheduler.load_state_dict(saved["scheduler"])
        rates.append((options_of(opt, "lr"), options_of(opt, "momentum"),
                      scheduler.get_last_lr()))
        scheduler.step()
    return rates


@pytest.mark.parametrize("schedule", [name for name in SCHEDULES if name != "sequential"])
def test_state_dict_round_trip_continues_the_same_sequence(schedule):
    whole = lr_sequence(SCHEDULES[schedule], 30)
    assert whole == lr_sequence(SCHEDULES[schedule], 30, resume_at=13)


def test_cyclic_momentum_needs_momentum_and_a_chain_one_optimizer():
    adagrad, adagrad_t = twin_optimizers("Adagrad")
    with pytest.raises(ValueError) as theirs:
        torch.optim.lr_scheduler.CyclicLR(adagrad_t, 0.01, 0.1)
    with pytest.raises(type(theirs.value), match="momentum or betas"):
        optim.lr_scheduler.CyclicLR(adagrad, 0.01, 0.1)
    optim.lr_scheduler.CyclicLR(adagrad, 0.01, 0.1, cycle_momentum=False)
    lr_scheduler = optim.lr_scheduler
    opt, other = twin_optimizers()[0], twin_optimizers()[0]
    with pytest.raises(ValueError, match="another optimizer"):
        lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(opt, 2),
                                       lr_scheduler.StepLR(other, 2)])
    late = lr_scheduler.StepLR(opt, 2)
    late.step()
    with pytest.raises(ValueError, match="different steps"):
        lr_scheduler.ChainedScheduler([late, lr_scheduler.ExponentialLR(opt, 0.9)])
    # torch meant a TypeError here (its own check), but reads .optimizer first
    with pytest.raises(TypeError, match="must be an LRScheduler"):
        lr_scheduler.ChainedScheduler([late, object()])


def test_polynomial_and_constant_reach_their_closed_forms():
    opt = twin_optimizers()[0]
    polynomial = optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
    rates = [polynomial.get_last_lr()[0]] + [polynomial.step() or polynomial.get_last_lr()[0]
                                            for _ in range(6)]
    np.testing.assert_allclose(rates, [0.1 * (1 - min(t, 4) / 4) ** 2 for t in range(7)],
                               rtol=1e-14, atol=0)
    assert rates[4:] == [0.0, 0.0, 0.0]
    opt = twin_optimizers()[0]
    constant = optim.lr_scheduler.ConstantLR(opt, factor=0.25, total_iters=2)
    rates = [constant.get_last_lr()[1]] + [constant.step() or constant.get_last_lr()[1]
                                          for _ in range(3)]
    assert rates == [0.075, 0.075, 0.3, 0.3]
