"""The optimizers on inf and NaN gradients (silent, torch's values; Rprop's NaN-as-0 sign) and
the schedules where torch's recursive forms show: ChainedScheduler with chains and
SequentialLRs inside, CosineAnnealingWarmRestarts stepped by a chain, resuming with
``last_epoch=k``, ``step(epoch)``, LinearLR and CosineAnnealingLR bit for bit, against
torch.optim."""

import io
import warnings

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn, optim

torch = pytest.importorskip("torch")

ALL_OPTIMIZERS = [
    ("SGD", {"momentum": 0.9}), ("Adam", {}), ("AdamW", {}), ("RMSprop", {"centered": True}),
    ("Adagrad", {}), ("NAdam", {}), ("RAdam", {}), ("Adamax", {}), ("Adadelta", {}),
    ("Adafactor", {}), ("ASGD", {"lambd": 0.1, "t0": 2}), ("Rprop", {}),
]


def run_both(name, options, gradients, dtype=np.float64):
    """Parameters of shapes (2, 3) and (4,) stepped by ``gradients`` (one list a step):
    microgradnorm's under RuntimeWarnings as errors, torch's with its warnings ignored."""
    start = [np.linspace(-1, 1, 6).reshape(2, 3).astype(dtype), np.arange(1.0, 5.0)]
    params = [nn.Parameter(a.copy()) for a in start]
    params_t = [torch.tensor(a.copy(), requires_grad=True) for a in start]
    opt = getattr(optim, name)(params, **options)
    opt_t = getattr(torch.optim, name)(params_t, **options)
    for grads in gradients:
        for p, p_t, grad in zip(params, params_t, grads):
            p.grad, p_t.grad = mg.tensor(grad.copy()), torch.tensor(grad.copy())
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            opt.step()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt_t.step()
    return params, params_t, opt, opt_t


@pytest.mark.parametrize("name, options", ALL_OPTIMIZERS)
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_an_inf_or_nan_gradient_is_silent_and_gives_torchs_values(name, options, bad):
    rng = np.random.default_rng(0)
    gradients = [[np.zeros((2, 3)), np.ones(4)]]
    for _ in range(5):                       # ASGD averages from step 4 on (t0=2)
        gradients.append([rng.standard_normal((2, 3)), rng.standard_normal(4)])
    gradients[1][0][0, 1] = bad              # beside a stored 0 (Rprop: inf * 0)
    gradients[2][1][2] = bad
    params, params_t, _, _ = run_both(name, options, gradients)
    for p, p_t in zip(params, params_t):
        np.testing.assert_allclose(p.detach().numpy(), p_t.detach().numpy(), rtol=1e-12,
                                   atol=1e-15, equal_nan=True)


@pytest.mark.parametrize("bad, moved, size", [(np.nan, 0.99, 0.01), (np.inf, 0.978, 0.012)])
def test_rprop_takes_a_nan_sign_as_zero_as_torch(bad, moved, size):
    # gradients 0, then NaN (or inf: inf * 0 is NaN), then 1: torch neither moves that
    # coordinate nor changes its step size where the sign product is NaN
    gradients = [[np.zeros((2, 3)), np.zeros(4)], [np.full((2, 3), bad), np.full(4, bad)],
                 [np.ones((2, 3)), np.ones(4)]]
    params, params_t, opt, opt_t = run_both("Rprop", {}, gradients)
    for p, p_t in zip(params, params_t):
        state, state_t = opt.state[id(p)], opt_t.state[p_t]
        np.testing.assert_array_equal(state["step_size"], state_t["step_size"].numpy())
        np.testing.assert_array_equal(state["prev"], state_t["prev"].numpy())
        np.testing.assert_array_equal(p.detach().numpy(), p_t.detach().numpy())
    np.testing.assert_allclose(opt.state[id(params[1])]["step_size"], size, rtol=1e-15)
    np.testing.assert_allclose(params[1].detach().numpy(), np.arange(1.0, 5.0) - 1 + moved,
                               rtol=1e-15)


@pytest.mark.parametrize("name", ["Rprop", "Adam", "Adafactor"])
def test_half_precision_parameters_are_silent_too(name):
    p = nn.Parameter(np.ones((2, 3), np.float16))
    opt = getattr(optim, name)([p])
    for grad in (np.zeros((2, 3)), np.full((2, 3), np.inf), np.ones((2, 3))):
        p.grad = mg.tensor(grad.astype(np.float16))
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            opt.step()
    assert p.dtype == mg.float16


# ----- schedules --------------------------------------------------------------------------
def twin_optimizers(name="SGD"):
    """Two parameter groups with different rates, in microgradnorm and in torch."""
    options = {"momentum": 0.9} if name == "SGD" else {}
    groups = [{"params": [nn.Parameter(np.zeros(2))]},
              {"params": [nn.Parameter(np.zeros(1))], "lr": 0.03}]
    groups_t = [{"params": [torch.zeros(2, requires_grad=True)]},
                {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.03}]
    return (getattr(optim, name)(groups, lr=0.1, **options),
            getattr(torch.optim, name)(groups_t, lr=0.1, **options))


def groups_of(opt):
    """The rates and momenta (or betas) of every group."""
    return [(group["lr"], group.get("momentum"), group.get("betas")) for group in opt.param_groups]


CHAINS = {
    "chain_in_chain": lambda m, o: m.ChainedScheduler([
        m.ChainedScheduler([m.ExponentialLR(o, 0.9), m.StepLR(o, 3, 0.5)]),
        m.ConstantLR(o, 0.5, 4)]),
    "three_deep": lambda m, o: m.ChainedScheduler([
        m.ChainedScheduler([m.ChainedScheduler([m.LinearLR(o, 0.3, 1.0, 5)]),
                            m.MultiStepLR(o, [2, 6], 0.5)]),
        m.ChainedScheduler([m.CosineAnnealingLR(o, 7, 0.001)])]),
    "sequential_in_chain": lambda m, o: m.ChainedScheduler([
        m.SequentialLR(o, [m.ConstantLR(o, 0.5, 2), m.ExponentialLR(o, 0.9)], [3]),
        m.StepLR(o, 4, 0.5)]),
    "sequential_recursive": lambda m, o: m.ChainedScheduler([
        m.StepLR(o, 5, 0.5),
        m.SequentialLR(o, [m.LinearLR(o, 0.2, 1.0, 4), m.CosineAnnealingLR(o, 6),
                           m.PolynomialLR(o, 8, 2.0)], [5, 12])]),
    "sequential_restarts": lambda m, o: m.ChainedScheduler([
        m.SequentialLR(o, [m.ConstantLR(o, 0.5, 2), m.CosineAnnealingWarmRestarts(o, 3, 2)],
                       [4]),
        m.ExponentialLR(o, 0.95)]),
    "restarts": lambda m, o: m.ChainedScheduler([
        m.ExponentialLR(o, 0.97), m.CosineAnnealingWarmRestarts(o, 3, 2, 0.001)]),
    "constant_then_cyclic": lambda m, o: m.ChainedScheduler([
        m.ConstantLR(o, 0.5, 4), m.CyclicLR(o, 0.01, 0.1, step_size_up=3)]),
    "constant_twice": lambda m, o: m.ChainedScheduler([m.ConstantLR(o, 0.5, 3),
                                                       m.ConstantLR(o, 0.5, 5)]),
    "milestone_zero": lambda m, o: m.ChainedScheduler([
        m.MultiStepLR(o, [0, 2], 0.5), m.MultiplicativeLR(o, lambda t: 1.01)]),
    "sequential_multiplicative": lambda m, o: m.ChainedScheduler([
        m.SequentialLR(o, [m.LinearLR(o, 0.1, 1.0, 4), m.MultiplicativeLR(o, lambda t: 0.8)],
                       [2]),
        m.ExponentialLR(o, 0.9)]),
}


def members(scheduler):
    return getattr(scheduler, "_schedulers", None) or getattr(scheduler, "schedulers", [])


@pytest.mark.parametrize("chain", CHAINS)
@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_chains_with_chains_and_sequences_inside_are_torchs_bit_for_bit(chain, name):
    opt, opt_t = twin_optimizers(name)
    scheduler = CHAINS[chain](optim.lr_scheduler, opt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # torch's SequentialLR warns
        scheduler_t = CHAINS[chain](torch.optim.lr_scheduler, opt_t)
        for step in range(30):
            assert groups_of(opt) == groups_of(opt_t), f"step {step}"
            assert scheduler.get_last_lr() == scheduler_t.get_last_lr()
            for member, member_t in zip(members(scheduler), members(scheduler_t)):
                assert member.get_last_lr() == member_t.get_last_lr(), f"step {step}"
            scheduler.step()
            scheduler_t.step()


def test_the_chain_takes_the_rate_its_schedulers_left():
    # torch's chain reads the groups' rates; CyclicLR's first step there used initial_lr
    def rates(lr_scheduler, opt):
        chain = lr_scheduler.ChainedScheduler([lr_scheduler.ConstantLR(opt, 0.5, 4),
                                               lr_scheduler.CyclicLR(opt, 0.01, 0.1, 3)])
        first = chain.get_last_lr()
        chain.step()
        return first, chain.get_last_lr(), [group["lr"] for group in opt.param_groups]

    opt, opt_t = twin_optimizers()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = rates(torch.optim.lr_scheduler, opt_t)
    assert rates(optim.lr_scheduler, opt) == theirs
    assert theirs[0] == [0.1, 0.03]


@pytest.mark.parametrize("chain", ["chain_in_chain", "three_deep", "sequential_in_chain",
                                   "sequential_recursive", "sequential_restarts", "restarts"])
def test_a_nested_chain_continues_the_same_rates_from_its_state_dict(chain):
    def rates(resume_at=None):
        opt = twin_optimizers()[0]
        scheduler = CHAINS[chain](optim.lr_scheduler, opt)
        seen = []
        for step in range(25):
            if step == resume_at:
                buffer = io.BytesIO()
                mg.save({"opt": opt.state_dict(), "scheduler": scheduler.state_dict()}, buffer)
                buffer.seek(0)
                saved = mg.load(buffer)
                opt = twin_optimizers()[0]
                scheduler = CHAINS[chain](optim.lr_scheduler, opt)
                opt.load_state_dict(saved["opt"])
                scheduler.load_state_dict(saved["scheduler"])
            seen.append((groups_of(opt), scheduler.get_last_lr()))
            scheduler.step()
        return seen

    assert rates() == rates(resume_at=11)


def test_warm_restarts_stepped_by_a_chain_keep_their_place_in_the_cycle():
    def run(lr_scheduler, opt):
        restarts = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4)
        chain = lr_scheduler.ChainedScheduler([restarts, lr_scheduler.ExponentialLR(opt, 0.9)])
        for _ in range(6):
            chain.step()
        place = (restarts.T_cur, restarts.T_i, restarts.last_epoch)
        restarts.step()                              # stepped alone, from there
        return place, restarts.get_last_lr()

    opt, opt_t = twin_optimizers()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = run(torch.optim.lr_scheduler, opt_t)
    ours = run(optim.lr_scheduler, opt)
    assert ours == theirs
    assert ours[0] == (2, 4, 6)


RESUMABLE = {
    "step": lambda m, o, k: m.StepLR(o, 2, 0.5, last_epoch=k),
    "multistep": lambda m, o, k: m.MultiStepLR(o, [2, 4, 4, 5], 0.5, last_epoch=k),
    "multistep_at_0": lambda m, o, k: m.MultiStepLR(o, [0, 2], 0.5, last_epoch=k),
    "constant": lambda m, o, k: m.ConstantLR(o, 0.5, 5, last_epoch=k),
    "linear": lambda m, o, k: m.LinearLR(o, 0.2, 1.0, 6, last_epoch=k),
    "linear_down": lambda m, o, k: m.LinearLR(o, 1.0, 0.1, 7, last_epoch=k),
    "cosine": lambda m, o, k: m.CosineAnnealingLR(o, 8, 0.001, last_epoch=k),
    "lambda": lambda m, o, k: m.LambdaLR(o, lambda t: 0.9 ** t, last_epoch=k),
    "onecycle": lambda m, o, k: m.OneCycleLR(o, 0.5, total_steps=30, last_epoch=k),
    "cyclic": lambda m, o, k: m.CyclicLR(o, 0.01, 0.1, 3, last_epoch=k),
    "restarts": lambda m, o, k: m.CosineAnnealingWarmRestarts(o, 3, 2, 0.001, last_epoch=k),
    "exponential": lambda m, o, k: m.ExponentialLR(o, 0.9, last_epoch=k),
    "multiplicative": lambda m, o, k: m.MultiplicativeLR(o, lambda t: 0.9, last_epoch=k),
    "polynomial": lambda m, o, k: m.PolynomialLR(o, 10, 1.0, last_epoch=k),
    "polynomial_squared": lambda m, o, k: m.PolynomialLR(o, 6, 2.0, last_epoch=k),
}


def resumed_rates(lr_scheduler, twin, make, k):
    """k steps; then a new optimizer with the groups' options restored (the checkpoint)
    and the scheduler made with last_epoch=k: its next 8 rates and momenta."""
    opt = twin()
    scheduler = make(lr_scheduler, opt, -1)
    for _ in range(k):
        scheduler.step()
    saved = [{key: value for key, value in group.items() if key != "params"}
             for group in opt.param_groups]
    opt = twin()
    for group, options in zip(opt.param_groups, saved):
        group.update(options)
    scheduler = make(lr_scheduler, opt, k)
    seen = []
    for _ in range(8):
        seen.append((groups_of(opt), scheduler.get_last_lr(), scheduler.last_epoch))
        scheduler.step()
    return seen


@pytest.mark.parametrize("schedule", RESUMABLE)
@pytest.mark.parametrize("k", [3, 7])
def test_resuming_with_last_epoch_is_torchs(schedule, k):
    # torch's ExponentialLR, MultiplicativeLR, PolynomialLR, LinearLR and CosineAnnealingLR
    # keep the loaded rate on the constructor's step (their _is_initial)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = resumed_rates(torch.optim.lr_scheduler, lambda: twin_optimizers()[1],
                               RESUMABLE[schedule], k)
    ours = resumed_rates(optim.lr_scheduler, lambda: twin_optimizers()[0],
                         RESUMABLE[schedule], k)
    assert ours == theirs


EPOCHS = [None, None, 5, None, None, 2, None, 0, None, 9, 9, None, 12, None, 3]


@pytest.mark.parametrize("schedule", [name for name in RESUMABLE if name != "restarts"])
def test_step_with_an_epoch_warns_and_goes_where_torchs_goes(schedule):
    opt, opt_t = twin_optimizers()
    scheduler = RESUMABLE[schedule](optim.lr_scheduler, opt, -1)
    scheduler_t = RESUMABLE[schedule](torch.optim.lr_scheduler, opt_t, -1)
    for epoch in EPOCHS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scheduler.step(epoch)
            scheduler_t.step(epoch)
        ours = [w for w in caught if "epoch parameter" in str(w.message)]
        assert len(ours) == (0 if epoch is None else 2)
        assert groups_of(opt) == groups_of(opt_t), epoch
        assert scheduler.last_epoch == scheduler_t.last_epoch
    with pytest.raises(ValueError, match="epoch must be >= 0"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler.step(-1)


def test_chains_and_sequences_take_no_epoch_as_torchs():
    opt = twin_optimizers()[0]
    lr_scheduler = optim.lr_scheduler
    for scheduler in (lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(opt, 2)]),
                      lr_scheduler.SequentialLR(opt, [lr_scheduler.StepLR(opt, 2)], [])):
        with pytest.raises(TypeError):
            scheduler.step(3)


@pytest.mark.parametrize("make", [
    lambda m, o: m.LinearLR(o, 0.1, 1.0, 7),
    lambda m, o: m.LinearLR(o, 1.0, 0.2, 5),
    lambda m, o: m.CosineAnnealingLR(o, 12, 0.001),
    lambda m, o: m.CosineAnnealingLR(o, 5),
    lambda m, o: m.SequentialLR(o, [m.ExponentialLR(o, 0.9), m.LinearLR(o, 0.4, 1.0, 5)], [3]),
    lambda m, o: m.SequentialLR(o, [m.LinearLR(o, 0.1, 1.0, 3), m.CosineAnnealingLR(o, 10)],
                                [3]),
    lambda m, o: m.PolynomialLR(o, total_iters=0),
    lambda m, o: m.MultiStepLR(o, [0, 0, 3], 0.5),
])
def test_recursive_schedules_are_torchs_bit_for_bit_past_the_first_trough(make):
    opt, opt_t = twin_optimizers()
    scheduler = make(optim.lr_scheduler, opt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler_t = make(torch.optim.lr_scheduler, opt_t)
        for step in range(40):
            assert scheduler.get_last_lr() == scheduler_t.get_last_lr() == \
                [group["lr"] for group in opt.param_groups], f"step {step}"
            scheduler.step()
            scheduler_t.step()


@pytest.mark.parametrize("schedule", ["LambdaLR", "MultiplicativeLR"])
@pytest.mark.parametrize("lr_lambda, error", [(0.5, TypeError), ([lambda t: 1.0], ValueError)])
def test_a_bad_lr_lambda_is_torchs_error(schedule, lr_lambda, error):
    opt, opt_t = twin_optimizers()
    with pytest.raises(error):
        getattr(torch.optim.lr_scheduler, schedule)(opt_t, lr_lambda)
    with pytest.raises(error, match="lr_lambda"):
        getattr(optim.lr_scheduler, schedule)(opt, lr_lambda)


def test_a_sequence_jump_that_fails_changes_nothing():
    opt = twin_optimizers()[0]
    lr_scheduler = optim.lr_scheduler
    decay = lr_scheduler.MultiplicativeLR(opt, lambda t: 1 / (4 - t))
    sequence = lr_scheduler.SequentialLR(opt, [lr_scheduler.ConstantLR(opt, 0.5, 2), decay],
                                         [2])
    sequence.step()
    before = (sequence.state_dict(), groups_of(opt), decay.last_epoch, decay.get_last_lr())
    with pytest.raises(ZeroDivisionError):
        sequence.load_state_dict({"last_epoch": 6, "base_lrs": [0.1, 0.03]})
    assert (sequence.state_dict(), groups_of(opt), decay.last_epoch,
            decay.get_last_lr()) == before


SEQUENCES = {
    "linear_cosine": lambda m, o, k: m.SequentialLR(
        o, [m.LinearLR(o, 0.1, 1.0, 4), m.CosineAnnealingLR(o, 5, 0.01)], [4], last_epoch=k),
    "multiplicative": lambda m, o, k: m.SequentialLR(
        o, [m.LinearLR(o, 0.1, 1.0, 4), m.MultiplicativeLR(o, lambda t: 0.5 + t / 10),
            m.MultiplicativeLR(o, lambda t: 0.9)], [2, 5], last_epoch=k),
    "cosine_multiplicative": lambda m, o, k: m.SequentialLR(
        o, [m.CosineAnnealingLR(o, 3, 0.01), m.ExponentialLR(o, 0.8),
            m.MultiplicativeLR(o, lambda t: 0.7)], [0, 6], last_epoch=k),
}


def sequence_run(lr_scheduler, opt, make, steps):
    """The groups' rates at step 0 of a new sequence and after each of ``steps`` steps."""
    scheduler = make(lr_scheduler, opt, -1)
    run = [scheduler.get_last_lr()]
    for _ in range(steps):
        scheduler.step()
        run.append(scheduler.get_last_lr())
    assert run[-1] == [group["lr"] for group in opt.param_groups]
    return run


@pytest.mark.parametrize("sequence", SEQUENCES)
def test_a_sequence_restarts_at_a_milestone_as_torchs(sequence):
    # at a milestone torch takes the closed form at step 0; MultiplicativeLR has none and
    # multiplies the current rate by lr_lambda(0), where a restart from its base rate would not
    opt, opt_t = twin_optimizers()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # torch's SequentialLR warns
        theirs = sequence_run(torch.optim.lr_scheduler, opt_t, SEQUENCES[sequence], 12)
    assert sequence_run(optim.lr_scheduler, opt, SEQUENCES[sequence], 12) == theirs


@pytest.mark.parametrize("sequence", SEQUENCES)
def test_a_resumed_or_loaded_sequence_continues_the_run_at_every_step(sequence):
    # torch's SequentialLR(last_epoch=k) restarts its first scheduler; here the checkpoint's
    # run goes on, even where step k + 1 is a scheduler's own step 0 or 1 (k = 0, a milestone)
    make = SEQUENCES[sequence]
    run = sequence_run(optim.lr_scheduler, twin_optimizers()[0], make, 14)
    for k in range(10):
        # a checkpoint after step k: a new optimizer holding that step's rates
        opt = twin_optimizers()[0]
        for group, lr in zip(opt.param_groups, run[k]):
            group.update(lr=lr, initial_lr=group["lr"])
        scheduler = make(optim.lr_scheduler, opt, k)
        resumed = [scheduler.get_last_lr()]
        for _ in range(4):
            scheduler.step()
            resumed.append(scheduler.get_last_lr())
        assert resumed == run[k + 1:k + 6], f"last_epoch={k}"
        assert [group["lr"] for group in opt.param_groups] == run[k + 5]
        assert scheduler.last_epoch == k + 5
        state = scheduler.state_dict()
        scheduler.step()
        scheduler.load_state_dict({**state, "last_epoch": k})
        assert scheduler.get_last_lr() == [group["lr"] for group in opt.param_groups] == run[k]


@pytest.mark.parametrize("name, options", ALL_OPTIMIZERS)
def test_step_takes_a_closure_as_torchs(name, options):
    # step(closure): the closure runs first, with grad enabled (under no_grad too), and its
    # loss is returned; the update then uses the gradients it computed
    losses, weights = [], []
    for lib in (mg, torch):
        w = lib.tensor(np.array([0.5, -1.5, 2.0]), requires_grad=True)
        optimizer = getattr(lib.optim, name)([w], **options)
        scale = lib.tensor(np.array([1.0, 2.0, 3.0]))

        def closure(optimizer=optimizer, w=w, scale=scale):
            optimizer.zero_grad()
            loss = ((w - 1) ** 2 * scale).sum()
            loss.backward()
            return loss
        with lib.no_grad():
            returned = [optimizer.step(closure).item() for _ in range(3)]
        assert optimizer.step() is None
        losses.append(returned)
        weights.append(w.detach().numpy())
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-12)
    np.testing.assert_allclose(weights[0], weights[1], rtol=1e-12, atol=1e-15)
