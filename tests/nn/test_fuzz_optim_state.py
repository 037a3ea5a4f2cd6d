"""The optimizers' state as torch's types (Tensors sharing the memory the update writes, a 0-d
``step`` Tensor), its state dicts against torch's (layout, a ``torch.save`` checkpoint loaded
and continued), and seeded sweeps of every optimizer's options and every schedule against
torch: values, errors and warnings."""

import copy
import io
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microgradnorm as mg

torch = pytest.importorskip("torch")

SHAPES = [(3, 2), (4,), ()]


def _params(lib, seed=0, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s), dtype=lib.float64, requires_grad=True)
            for s in shapes]


def _set_grads(lib, params, rng_seed, skip=None):
    rng = np.random.default_rng(rng_seed)
    for i, p in enumerate(params):
        g = rng.standard_normal(tuple(p.shape))
        p.grad = None if i == skip else lib.tensor(g, dtype=lib.float64)


def _run(lib, name, options, steps=5, groups=None, skip_first=None, seed=0):
    params = _params(lib, seed)
    arg = params if groups is None else [{"params": params[:1], **groups}, {"params": params[1:]}]
    opt = getattr(lib.optim, name)(arg, **options)
    for step in range(steps):
        _set_grads(lib, params, 100 * seed + step, skip_first if step < 2 else None)
        opt.step()
    return opt, params


def _close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(np.asarray(ours.detach().numpy(), dtype=np.float64),
                               theirs.detach().numpy(), rtol=tol, atol=tol)


def _dtype(tensor):
    return str(tensor.dtype).replace("torch.", "")


def _same_state(ours, theirs, tol=1e-10):
    assert list(ours) == list(theirs)
    for key, value in theirs.items():
        mine = ours[key]
        if isinstance(value, torch.Tensor):
            assert isinstance(mine, mg.Tensor), (key, type(mine))
            assert _dtype(mine) == _dtype(value), key
            assert tuple(mine.shape) == tuple(value.shape), key
            _close(mine, value, tol)
        else:
            assert type(mine) is type(value) and mine == value, key


OPTIONS = {
    "SGD": [{"lr": 0.1}, {"lr": 0.1, "momentum": 0.9, "nesterov": True},
            {"lr": 0.05, "momentum": 0.8, "dampening": 0.3, "weight_decay": 0.1},
            {"lr": 0.05, "momentum": 0.5, "maximize": True, "foreach": True}],
    "Adam": [{"lr": 0.01}, {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1},
             {"lr": 0.02, "maximize": True, "foreach": False, "betas": (0.5, 0.7)},
             {"lr": 0.01, "decoupled_weight_decay": True, "weight_decay": 0.2},
             {"lr": 0.01, "fused": True, "amsgrad": True}],
    "AdamW": [{"lr": 0.01}, {"lr": 0.01, "amsgrad": True, "maximize": True},
              {"lr": 0.01, "fused": True, "weight_decay": 0.1}],
    "Adamax": [{"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.01, "maximize": True}],
    "NAdam": [{"lr": 0.01, "momentum_decay": 0.01},
              {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}],
    "RAdam": [{"lr": 0.01}, {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}],
    "Adagrad": [{"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.5},
                {"lr": 0.1, "weight_decay": 0.1, "maximize": True},
                {"lr": 0.1, "fused": True, "lr_decay": 0.05}],
    "Adadelta": [{"lr": 1.0, "rho": 0.8, "weight_decay": 0.1}, {"maximize": True}],
    "RMSprop": [{"lr": 0.01, "centered": True, "momentum": 0.5},
                {"lr": 0.01, "alpha": 0.9, "weight_decay": 0.1, "maximize": True}],
    "Rprop": [{"lr": 0.01, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)},
              {"lr": 0.01, "maximize": True}],
    "ASGD": [{"lr": 0.01, "t0": 2, "lambd": 1e-3}, {"lr": 0.01, "weight_decay": 0.1}],
    "Adafactor": [{"lr": 0.01}, {"lr": 0.01, "weight_decay": 0.1, "maximize": True}],
}
CASES = [(name, i) for name, options in OPTIONS.items() for i in range(len(options))]


@pytest.mark.parametrize("name, index", CASES)
def test_every_optimizer_steps_and_keeps_its_state_as_torchs(name, index):
    options = OPTIONS[name][index]
    (ours, mine), (theirs, their) = (_run(lib, name, options, skip_first=1)
                                     for lib in (mg, torch))
    for a, b in zip(mine, their):
        _close(a, b)
    for p, q in zip(mine, their):             # the parameter skipped at first: as torch's
        assert (p in ours.state) == (q in theirs.state)
        _same_state(ours.state[p], theirs.state[q])
    a, b = ours.state_dict(), theirs.state_dict()
    assert list(a) == list(b) and list(a["state"]) == list(b["state"])
    assert [list(g) for g in a["param_groups"]] == [list(g) for g in b["param_groups"]]
    assert a["param_groups"] == b["param_groups"]
    for index_ in b["state"]:
        _same_state(a["state"][index_], b["state"][index_])


_RATES = st.sampled_from([0.0, 1e-3, 0.05, 0.5])


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(["SGD", "Adam", "RMSprop"]), lr=_RATES, decay=_RATES,
       momentum=st.sampled_from([0.0, 0.5, 0.9]), flag=st.booleans(), maximize=st.booleans(),
       seed=st.integers(0, 2 ** 16), steps=st.integers(1, 4))
def test_random_options_step_as_torchs(name, lr, decay, momentum, flag, maximize, seed, steps):
    options = {"lr": lr, "weight_decay": decay, "maximize": maximize}
    if name == "SGD":
        options.update(momentum=momentum, nesterov=flag and momentum > 0)
    elif name == "Adam":
        options.update(amsgrad=flag, betas=(momentum, 0.99))
    else:
        options.update(momentum=momentum, centered=flag)
    (ours, mine), (theirs, their) = (_run(lib, name, options, steps=steps, seed=seed)
                                     for lib in (mg, torch))
    for p, q in zip(mine, their):
        _close(p, q)
        _same_state(ours.state[p], theirs.state[q])


@pytest.mark.parametrize("name", ["Adam", "SGD", "RMSprop", "NAdam"])
def test_held_state_tensors_follow_the_steps_and_the_resume_idiom_works(name):
    options = {"lr": 0.01, "momentum": 0.9} if name in ("SGD", "RMSprop") else {"lr": 0.01}
    results = []
    for lib in (mg, torch):
        opt, params = _run(lib, name, options, steps=2)
        held = {k: v for k, v in opt.state[params[0]].items() if isinstance(v, lib.Tensor)}
        for state in opt.state.values():        # a resume's move of the state, as written
            for k, v in state.items():
                if isinstance(v, lib.Tensor):
                    state[k] = v.to("cpu")
        entry = opt.state[params[0]]
        for step in range(2, 4):
            _set_grads(lib, params, step)
            opt.step()
        assert opt.state[params[0]] is entry     # the entry's dict itself, as torch's
        results.append((params, {k: v.clone() for k, v in held.items()},
                        opt.state[params[0]]))
    (mine, held, state), (their, their_held, their_state) = results
    assert sorted(held) == sorted(their_held)
    for k in their_held:                         # held before: updated in place, as torch's
        _close(held[k], their_held[k])
        _close(state[k], their_state[k])
    assert state["step" if "step" in state else "momentum_buffer"].norm().item() == \
        pytest.approx(their_state["step" if "step" in state else "momentum_buffer"]
                      .norm().item())
    for a, b in zip(mine, their):
        _close(a, b)


@pytest.mark.parametrize("name, options", [("Adam", {"lr": 0.01, "amsgrad": True}),
                                           ("SGD", {"lr": 0.1, "momentum": 0.9}),
                                           ("RMSprop", {"lr": 0.01, "centered": True}),
                                           ("NAdam", {"lr": 0.01}), ("ASGD", {"lr": 0.01}),
                                           ("Adagrad", {"lr": 0.1}), ("Rprop", {})])
def test_a_torch_checkpoint_loads_and_continues_as_torchs(name, options, tmp_path):
    theirs, their = _run(torch, name, options, steps=3)
    path = tmp_path / "opt.pt"
    torch.save(theirs.state_dict(), path)
    ours, mine = _run(mg, name, options, steps=0)
    with torch.no_grad():
        for p, q in zip(mine, their):
            p.data = mg.tensor(q.detach().numpy().copy())
    ours.load_state_dict(mg.load(path))
    for p, q in zip(mine, their):
        _same_state(ours.state[p], theirs.state[q])
    for step in range(3, 6):
        _set_grads(mg, mine, step)
        _set_grads(torch, their, step)
        ours.step()
        theirs.step()
    for a, b in zip(mine, their):
        _close(a, b)
    for p, q in zip(mine, their):
        _same_state(ours.state[p], theirs.state[q])


def test_the_step_is_torchs_scalar_dtype_and_the_state_dict_prints_as_torchs():
    texts = []
    for lib in (mg, torch):
        p = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.5, momentum=0.5)
        for _ in range(2):
            p.grad = lib.tensor([0.5, 0.25])
            opt.step()
        texts.append(str(opt.state_dict()))
    assert texts[0] == texts[1]
    previous = mg.get_default_dtype()
    try:
        steps = []
        for lib in (mg, torch):
            lib.set_default_dtype(lib.float64)
            opt, _ = _run(lib, "Adam", {}, steps=1)
            steps.append(_dtype(opt.state_dict()["state"][0]["step"]))
            lib.set_default_dtype(lib.float32)
        assert steps[0] == steps[1] == "float64"
    finally:
        mg.set_default_dtype(previous)
        torch.set_default_dtype(torch.float32)


def test_deepcopy_and_a_round_trip_through_the_state_dict():
    ours, mine = _run(mg, "Adam", {"lr": 0.01}, steps=2)
    snapshot = copy.deepcopy(ours.state_dict())
    other = mg.optim.Adam(mine, lr=0.5)
    other.load_state_dict(snapshot)
    assert other.param_groups[0]["lr"] == 0.01
    for p in mine:
        for k, v in ours.state[p].items():
            assert other.state[p][k] is not v
            np.testing.assert_array_equal(other.state[p][k].numpy(), v.numpy())
    buf = io.BytesIO()
    mg.save(ours.state_dict(), buf)
    buf.seek(0)
    loaded = mg.load(buf)
    assert _dtype(loaded["state"][0]["step"]) == "float32"


def _lr_tensor_cases():
    return [("SGD", {"momentum": 0.9}), ("Adam", {}), ("AdamW", {}), ("RMSprop", {})]


@pytest.mark.parametrize("name, options", _lr_tensor_cases())
def test_flags_lr_tensor_zero_grad_and_groups_as_torchs(name, options):
    results = []
    for lib in (mg, torch):
        params = _params(lib, 3)
        opt = getattr(lib.optim, name)([{"lr": 0.05, "params": params[:1]}],   # (key order)
                                       lr=lib.tensor(0.01), foreach=False, **options)
        opt.add_param_group({"params": params[1:], "weight_decay": 0.1})
        for step in range(4):
            opt.zero_grad(set_to_none=step % 2 == 0)
            _set_grads(lib, params, step, skip=2 if step == 0 else None)
            opt.step()
        results.append((params, opt))
    (mine, ours), (their, theirs) = results
    for a, b in zip(mine, their):
        _close(a, b)
    assert [list(g) for g in ours.param_groups] == [list(g) for g in theirs.param_groups]
    ours.zero_grad(set_to_none=False)
    theirs.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in mine)
    ours.zero_grad()
    assert all(p.grad is None for p in mine)


@pytest.mark.parametrize("name, options", [
    ("Adamax", {}), ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("ASGD", {"lambd": 0.1, "t0": 2}), ("Adagrad", {"lr_decay": 0.1}),
    ("AdamW", {"amsgrad": True}), ("RAdam", {"weight_decay": 0.1}), ("Rprop", {}),
    ("Adadelta", {}), ("SGD", {"momentum": 0.9, "nesterov": True}),
    ("Adafactor", {"weight_decay": 0.1})])
def test_a_float32_tensor_rate_rounds_as_torchs(name, options):
    # torch computes with a Tensor rate in its dtype: step sizes rounded to float32
    (_, mine), (_, their) = (_run(lib, name, {"lr": lib.tensor(0.01), **options}, steps=7)
                             for lib in (mg, torch))
    for a, b in zip(mine, their):
        _close(a, b, 1e-13)


def _error(call):
    try:
        call()
    except Exception as error:                  # noqa: BLE001 - compared below
        return type(error), str(error)
    return None, ""


@pytest.mark.parametrize("case", ["negative_lr", "beta0", "beta1", "duplicate", "non_tensor",
                                  "negative_eps", "negative_momentum", "nesterov"])
def test_bad_options_raise_torchs_error_class_naming_the_argument(case):
    def make(lib):
        p, q = _params(lib, 0)[:2]
        return {
            "negative_lr": lambda: lib.optim.Adam([p], lr=-1.0),
            "beta0": lambda: lib.optim.Adam([p], betas=(1.0, 0.9)),
            "beta1": lambda: lib.optim.AdamW([p], betas=(0.9, -0.1)),
            "duplicate": lambda: lib.optim.SGD([{"params": [p]}, {"params": [p, q]}], lr=0.1),
            "non_tensor": lambda: lib.optim.SGD([p, 3], lr=0.1),
            "negative_eps": lambda: lib.optim.RMSprop([p], eps=-1.0),
            "negative_momentum": lambda: lib.optim.SGD([p], lr=0.1, momentum=-0.5),
            "nesterov": lambda: lib.optim.SGD([p], lr=0.1, nesterov=True),
        }[case]
    ours, theirs = _error(make(mg)), _error(make(torch))
    assert ours[0] is theirs[0], (ours, theirs)
    word = {"negative_lr": "lr", "beta0": "beta", "beta1": "beta", "duplicate": "more than one",
            "non_tensor": "Tensor", "negative_eps": "eps", "negative_momentum": "momentum",
            "nesterov": "esterov"}[case]
    assert word in ours[1], ours[1]


def test_a_duplicate_within_a_group_warns_as_torch():
    for lib in (mg, torch):
        p = _params(lib)[0]
        with pytest.warns(UserWarning, match="more than once|duplicate"):
            lib.optim.SGD([p, p], lr=0.1)


def _rosenbrock(lib, x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2 + (x[2:] ** 2).sum()


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_follows_torch_and_keeps_tensors(line_search):
    results = []
    for lib in (mg, torch):
        x = lib.tensor([-1.2, 1.0, 0.5, -0.3], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([x], lr=0.5, max_iter=8, history_size=4,
                              line_search_fn=line_search)

        def closure(x=x, opt=opt, lib=lib):
            opt.zero_grad()
            loss = _rosenbrock(lib, x)
            loss.backward()
            return loss
        losses = [float(opt.step(closure).detach()) for _ in range(3)]
        results.append((x, losses, opt.state[x]))
    (x, losses, state), (y, their_losses, their_state) = results
    # Rosenbrock's valley amplifies the last bits of the sums (summation orders differ)
    np.testing.assert_allclose(losses, their_losses, rtol=1e-6)
    _close(x, y, 1e-5)
    assert state["n_iter"] == their_state["n_iter"]
    assert state["func_evals"] == their_state["func_evals"]
    for key in ("d", "prev_flat_grad"):
        assert isinstance(state[key], mg.Tensor)
        _close(state[key], their_state[key], 1e-5)
    assert len(state["old_dirs"]) == len(their_state["old_dirs"])
    assert all(isinstance(v, mg.Tensor) for v in state["old_dirs"] + state["ro"])


# -- schedules ----------------------------------------------------------------------------

def _schedule(lib, kind, opt):
    s = lib.optim.lr_scheduler
    return {
        "step": lambda: s.StepLR(opt, 4, gamma=0.5),
        "multistep": lambda: s.MultiStepLR(opt, [3, 7, 7, 20], gamma=0.3),
        "constant": lambda: s.ConstantLR(opt, factor=0.25, total_iters=6),
        "linear": lambda: s.LinearLR(opt, 0.1, 0.9, total_iters=9),
        "exponential": lambda: s.ExponentialLR(opt, 0.93),
        "polynomial": lambda: s.PolynomialLR(opt, total_iters=17, power=1.7),
        "cosine": lambda: s.CosineAnnealingLR(opt, 11, eta_min=0.001),
        "warm_restarts": lambda: s.CosineAnnealingWarmRestarts(opt, 5, T_mult=2, eta_min=0.01),
        "cyclic_tri": lambda: s.CyclicLR(opt, 0.01, 0.1, step_size_up=4, step_size_down=3),
        "cyclic_tri2": lambda: s.CyclicLR(opt, 0.01, 0.1, step_size_up=3, mode="triangular2",
                                          base_momentum=0.7, max_momentum=0.95),
        "cyclic_exp": lambda: s.CyclicLR(opt, [0.01, 0.02], 0.1, step_size_up=5,
                                         mode="exp_range", gamma=0.97, scale_mode="iterations"),
        "onecycle_cos": lambda: s.OneCycleLR(opt, 0.2, total_steps=40, pct_start=0.3),
        "onecycle_lin3": lambda: s.OneCycleLR(opt, [0.2, 0.3], epochs=4, steps_per_epoch=10,
                                              anneal_strategy="linear", three_phase=True,
                                              div_factor=10, final_div_factor=100),
        "lambda": lambda: s.LambdaLR(opt, [lambda e: 1 / (1 + e), lambda e: 0.9 ** e]),
        "multiplicative": lambda: s.MultiplicativeLR(opt, lambda e: 0.95),
        "sequential": lambda: s.SequentialLR(opt, [s.LinearLR(opt, 0.2, total_iters=5),
                                                   s.ExponentialLR(opt, 0.9),
                                                   s.StepLR(opt, 3)], milestones=[5, 12]),
        "chained": lambda: s.ChainedScheduler([s.ConstantLR(opt, 0.5, total_iters=4),
                                               s.ExponentialLR(opt, 0.95)]),
    }[kind]()


SCHEDULES = ["step", "multistep", "constant", "linear", "exponential", "polynomial", "cosine",
             "warm_restarts", "cyclic_tri", "cyclic_tri2", "cyclic_exp", "onecycle_cos",
             "onecycle_lin3", "lambda", "multiplicative", "sequential", "chained"]


def _opt(lib, momentum=True):
    params = _params(lib, 1, [(2,), (3,)])
    options = {"lr": 0.1, "momentum": 0.9} if momentum else {"lr": 0.1}
    return lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.05}],
                         **options)


def _rates(opt):
    return [(g["lr"], g.get("momentum")) for g in opt.param_groups]


@pytest.mark.parametrize("kind", SCHEDULES)
def test_every_schedule_gives_torchs_rates_and_resumes(kind):
    runs = []
    for lib in (mg, torch):
        opt = _opt(lib)
        sched = _schedule(lib, kind, opt)
        rates, last = [_rates(opt)], [sched.get_last_lr()]
        saved = None
        for step in range(36):
            opt.step()
            sched.step()
            rates.append(_rates(opt))
            last.append(list(sched.get_last_lr()))
            if step == 14:
                saved = copy.deepcopy(sched.state_dict()), copy.deepcopy(opt.state_dict())
        runs.append((rates, last, saved, sched))
    (rates, last, saved, sched), (their_rates, their_last, _, _) = runs
    np.testing.assert_allclose(np.array(rates, dtype=float), np.array(their_rates, dtype=float),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(last, their_last, rtol=1e-12, atol=1e-15)
    if hasattr(runs[1][3], "last_epoch"):
        assert sched.last_epoch == runs[1][3].last_epoch
    # a fresh optimizer and schedule loaded at step 15 continue as the run did
    opt = _opt(mg)
    fresh = _schedule(mg, kind, opt)
    opt.load_state_dict(saved[1])
    fresh.load_state_dict(saved[0])
    for step in range(15, 36):
        opt.step()
        fresh.step()
        np.testing.assert_allclose(np.array(_rates(opt), dtype=float),
                                   np.array(their_rates[step + 1], dtype=float), rtol=1e-12)


def _resumed(s, opt, kind):
    return {"step": lambda: s.StepLR(opt, 3, last_epoch=7),
            "exponential": lambda: s.ExponentialLR(opt, 0.9, last_epoch=7),
            "cosine": lambda: s.CosineAnnealingLR(opt, 10, last_epoch=7),
            "multistep": lambda: s.MultiStepLR(opt, [9, 12], last_epoch=7),
            "polynomial": lambda: s.PolynomialLR(opt, 12, last_epoch=7)}[kind]()


@pytest.mark.parametrize("kind", ["step", "exponential", "cosine", "multistep", "polynomial"])
def test_last_epoch_resumption_as_torchs(kind):
    rates = []
    for lib in (mg, torch):
        opt = _opt(lib, momentum=False)
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"]
        sched = _resumed(lib.optim.lr_scheduler, opt, kind)
        got = [sched.get_last_lr()]
        for _ in range(8):
            opt.step()
            sched.step()
            got.append(sched.get_last_lr())
        rates.append(got)
    np.testing.assert_allclose(rates[0], rates[1], rtol=1e-12)


def test_warm_restarts_take_fractional_epochs_as_torch():
    rates = []
    for lib in (mg, torch):
        opt = _opt(lib, momentum=False)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, 3, T_mult=2)
        got = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in np.arange(0, 12, 0.35):
                opt.step()
                sched.step(float(epoch))
                got.append(sched.get_last_lr())
        rates.append(got)
    np.testing.assert_allclose(rates[0], rates[1], rtol=1e-12)


@pytest.mark.parametrize("case", ["onecycle_past_end", "cyclic_no_momentum", "plateau_mode",
                                  "plateau_factor", "sequential_milestones", "linear_factor",
                                  "constant_factor", "lambda_count"])
def test_schedule_errors_as_torchs(case):
    def make(lib):
        s = lib.optim.lr_scheduler

        def past_end():
            opt = _opt(lib)
            sched = s.OneCycleLR(opt, 0.1, total_steps=2)
            for _ in range(3):
                opt.step()
                sched.step()
        return {
            "onecycle_past_end": past_end,
            "cyclic_no_momentum": lambda: s.CyclicLR(
                lib.optim.Adagrad(_params(lib)[:1]), 0.01, 0.1),
            "plateau_mode": lambda: s.ReduceLROnPlateau(_opt(lib), mode="middle"),
            "plateau_factor": lambda: s.ReduceLROnPlateau(_opt(lib), factor=1.5),
            "sequential_milestones": lambda: s.SequentialLR(
                _opt(lib), [s.StepLR(_opt(lib), 2), s.StepLR(_opt(lib), 3)], [2, 4]),
            "linear_factor": lambda: s.LinearLR(_opt(lib), start_factor=1.5),
            "constant_factor": lambda: s.ConstantLR(_opt(lib), factor=2.0),
            "lambda_count": lambda: s.LambdaLR(_opt(lib), [lambda e: 1.0]),
        }[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _error(make(mg)), _error(make(torch))
    assert theirs[0] is not None and ours[0] is theirs[0], (ours, theirs)


def test_rates_as_math_at_a_glance():
    # the cosine schedule's closed form, as a check independent of torch
    opt = _opt(mg, momentum=False)
    sched = mg.optim.lr_scheduler.CosineAnnealingLR(opt, 10)
    for _ in range(5):
        opt.step()
        sched.step()
    assert sched.get_last_lr()[0] == pytest.approx(0.1 * (1 + math.cos(math.pi / 2)) / 2)
