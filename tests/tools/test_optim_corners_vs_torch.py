"""The optimizers, schedules and ``swa_utils`` in their corners, each case run by both
libraries on the same starting values and gradients: parameter trajectories, the state's keys,
dtypes and values, the state dict's layout, ``load_state_dict`` sharing the loaded Tensors,
complex parameters (updated as their real and imaginary parts), the global step hooks,
a ``LambdaLR`` of a callable object through its state dict, and the schedules' rates."""

import importlib
import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

LIBS = (torch, mg)
RNG = np.random.default_rng(7)
START = [RNG.standard_normal((3, 2)).astype(np.float32), RNG.standard_normal(4).astype(np.float32)]
GRADS = [[RNG.standard_normal(a.shape).astype(np.float32) for a in START] for _ in range(6)]

OPTIMIZERS = [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.1}), ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1,
                                     "maximize": True}),
    ("Adam", {"lr": 0.1, "decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.1, "amsgrad": True}), ("Adamax", {"lr": 0.1, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}),
    ("Adadelta", {"weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("Rprop", {"lr": 0.01}), ("ASGD", {"lr": 0.01, "t0": 2, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.01, "weight_decay": 0.1}),
    ("SGD", {"lr": "tensor", "momentum": 0.9}), ("Adam", {"lr": "tensor"}),
    ("NAdam", {"lr": "tensor"}), ("RMSprop", {"lr": "tensor"}),
]


def _options(lib, options):
    options = dict(options)
    if options.get("lr") == "tensor":            # a 0-d Tensor rate
        options["lr"] = lib.tensor(0.01)
    return options


def _run(lib, name, options, skip_some=True, steps=6):
    # six steps; the second parameter has no gradient at every other step (skipped)
    params = [lib.nn.Parameter(lib.tensor(a.copy())) for a in START]
    opt = getattr(lib.optim, name)(params, **_options(lib, options))
    for step in range(steps):
        for i, p in enumerate(params):
            skipped = skip_some and i == 1 and step % 2 == 1
            p.grad = None if skipped else lib.tensor(GRADS[step][i])
        opt.step()
    return params, opt


def _array(value):
    return np.asarray(value.detach().numpy() if hasattr(value, "detach") else value)


def _dtype(value):
    return str(value.dtype).replace("torch.", "") if hasattr(value, "dtype") else type(value)


@pytest.mark.parametrize("name, options", OPTIMIZERS, ids=lambda v: str(v))
def test_six_steps_give_torch_s_parameters_state_and_state_dict(name, options):
    (tp, topt), (mp, mopt) = (_run(lib, name, options) for lib in LIBS)
    for t, m in zip(tp, mp):
        np.testing.assert_allclose(_array(m), _array(t), rtol=1e-5, atol=1e-6)
    for t, m in zip(tp, mp):
        t_state, m_state = topt.state[t], mopt.state[m]
        assert list(m_state) == list(t_state)
        for key, value in t_state.items():
            assert _dtype(m_state[key]) == _dtype(value), key
            np.testing.assert_allclose(_array(m_state[key]).astype(np.float64),
                                       _array(value).astype(np.float64), rtol=1e-4, atol=1e-6)
    t_sd, m_sd = topt.state_dict(), mopt.state_dict()
    assert list(m_sd["state"]) == list(t_sd["state"])
    t_group, m_group = t_sd["param_groups"][0], m_sd["param_groups"][0]
    assert list(m_group) == list(t_group)         # the defaults torch adds, in its order
    for key, value in t_group.items():
        if key != "lr":
            assert repr(m_group[key]) == repr(value), key


COMPLEX = [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.1, "amsgrad": True}),
           ("AdamW", {"lr": 0.1}), ("Adagrad", {"lr": 0.1}), ("Adadelta", {}),
           ("RMSprop", {"lr": 0.1, "centered": True, "momentum": 0.5}), ("Adamax", {"lr": 0.1}),
           ("NAdam", {"lr": 0.1}), ("RAdam", {"lr": 0.1}), ("ASGD", {"lr": 0.1}),
           ("Rprop", {"lr": 0.1})]
Z = np.array([1 + 2j, 3 - 1j, -0.5 + 0.5j], np.complex64)
GZ = [np.array([0.3 - 0.1j, -1 + 2j, 0.2 + 0.2j], np.complex64) * (k + 1) for k in range(4)]


@pytest.mark.parametrize("name, options", COMPLEX, ids=lambda v: str(v))
def test_a_complex_parameter_updates_as_its_real_and_imaginary_parts(name, options):
    results = []
    for lib in LIBS:
        p = lib.nn.Parameter(lib.tensor(Z.copy()))
        opt = getattr(lib.optim, name)([p], **options)
        p.grad = lib.tensor(GZ[0])
        opt.step()
        held = dict(opt.state[p])                # what a user holds follows the steps
        for g in GZ[1:]:
            p.grad = lib.tensor(g)
            opt.step()
        assert all(opt.state[p][key] is value for key, value in held.items())
        results.append((_array(p), {k: (_dtype(v), _array(v)) for k, v in held.items()}))
    (t_param, t_state), (m_param, m_state) = results
    np.testing.assert_allclose(m_param, t_param, rtol=1e-5, atol=1e-6)
    assert list(m_state) == list(t_state)
    for key, (dtype, value) in t_state.items():
        assert m_state[key][0] == dtype, key
        np.testing.assert_allclose(m_state[key][1], value, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("case", ["adafactor", "sparse_adam"])
def test_optimizers_that_refuse_complex_parameters_raise_torch_s_class(case):
    classes = []
    for lib in LIBS:
        p = lib.nn.Parameter(lib.tensor(Z.copy()))
        before = _array(p).copy()
        try:
            if case == "adafactor":
                opt = lib.optim.Adafactor([p])
                p.grad = lib.tensor(GZ[0])
                opt.step()
            else:
                lib.optim.SparseAdam([p])
        except Exception as error:              # noqa: BLE001 - the class is compared
            classes.append(type(error).__name__)
        np.testing.assert_array_equal(_array(p), before)
    assert classes[1] == classes[0] and len(classes) == 2


@pytest.mark.parametrize("name, options", [("Adam", {"lr": 0.1}), ("SGD", {"momentum": 0.9}),
                                           ("NAdam", {}), ("ASGD", {}), ("RMSprop", {})],
                         ids=lambda v: str(v))
def test_load_state_dict_keeps_the_loaded_tensors_as_torch_2_13(name, options):
    for lib in LIBS:
        params, opt = _run(lib, name, options, skip_some=False, steps=2)
        sd = opt.state_dict()
        fresh = [lib.nn.Parameter(lib.tensor(a.copy())) for a in START]
        opt2 = getattr(lib.optim, name)(fresh, **options)
        opt2.load_state_dict(sd)
        for index, p in enumerate(fresh):
            for key, value in sd["state"][index].items():
                assert opt2.state[p][key] is value, (lib.__name__, key)
        saved = {k: _array(v).copy() for k, v in sd["state"][0].items()}
        fresh[0].grad = lib.ones_like(fresh[0])
        opt2.step()                              # the shared Tensors follow the step
        changed = [k for k, v in sd["state"][0].items() if not np.array_equal(_array(v),
                                                                               saved[k])]
        assert changed, lib.__name__


def test_a_float64_state_loads_cast_onto_a_float32_parameter_with_its_step_kept():
    seen = []
    for lib in LIBS:
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.Adam([p], lr=0.1)
        groups = opt.state_dict()["param_groups"]
        state = {"step": lib.tensor(3.0, dtype=lib.float64),
                 "exp_avg": lib.full((3,), 0.5, dtype=lib.float64),
                 "exp_avg_sq": lib.full((3,), 0.25, dtype=lib.float64)}
        opt.load_state_dict({"state": {0: state}, "param_groups": groups})
        loaded = opt.state[p]
        seen.append((_dtype(loaded["exp_avg"]), _dtype(loaded["step"]),
                     loaded["exp_avg"] is state["exp_avg"], loaded["step"] is state["step"]))
        p.grad = lib.ones(3)
        opt.step()
        seen.append((_array(p).tolist(), float(loaded["step"])))
    assert seen[2:] == seen[:2]


def _hooked_steps(lib):
    # a global pre- and post-hook around an optimizer with hooks of its own, then removed
    module = importlib.import_module(lib.__name__ + ".optim.optimizer")
    log = []
    pre = module.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre"))
    post = module.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post"))
    try:
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
        opt.register_step_post_hook(lambda o, a, k: log.append("post"))
        opt.step()
    finally:
        pre.remove()
        post.remove()
    opt.step()                                   # removed: the optimizer's own alone
    return log


def test_global_step_hooks_run_around_every_optimizer_s_own_in_torch_s_order():
    assert _hooked_steps(mg) == _hooked_steps(torch)


def _group_errors_and_zero_grad(lib):
    p, q = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([p], lr=0.1)
    attempts = (lambda: opt.add_param_group({"params": [p]}),
                lambda: lib.optim.SGD([{"params": [q]}, {"params": [q]}], lr=0.1),
                lambda: lib.optim.SGD([q], lr=0.1, nesterov=True),
                lambda: lib.optim.Adam([q], lr=-1.0))
    errors = []
    for attempt in attempts:
        with pytest.raises(Exception) as info:  # noqa: PT011 - the class is compared
            attempt()
        errors.append(type(info.value).__name__)
    p.grad = lib.full((2,), 3.0)
    grad = p.grad
    opt.zero_grad(set_to_none=False)
    return errors, len(opt.param_groups), p.grad is grad, _array(p.grad).tolist()


def test_parameter_group_errors_and_zero_grad_without_none_match_torch():
    assert _group_errors_and_zero_grad(mg) == _group_errors_and_zero_grad(torch)


class Halving:
    """A schedule's factor with state of its own, which torch's state dict keeps."""

    def __init__(self, base):
        self.base = base

    def __call__(self, step):
        return self.base ** step


def test_lambda_lr_of_a_callable_object_round_trips_its_attributes():
    seen = []
    for lib in LIBS:
        schedulers = lib.optim.lr_scheduler
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        sched = schedulers.LambdaLR(opt, Halving(0.5))
        opt.step()
        sched.step()
        sd = sched.state_dict()
        opt2 = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        sched2 = schedulers.LambdaLR(opt2, Halving(0.9))
        sched2.load_state_dict(sd)
        opt2.step()
        sched2.step()
        plain = schedulers.LambdaLR(lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1),
                                    lambda step: 1.0)
        seen.append((sd["lr_lambdas"], sched2.lr_lambdas[0].base, sched2.last_epoch,
                     [round(v, 9) for v in sched2.get_last_lr()],
                     plain.state_dict()["lr_lambdas"]))
    assert seen[1] == seen[0]


def _schedule(lib, name):
    s = lib.optim.lr_scheduler
    return {
        "StepLR": lambda o: s.StepLR(o, 3, 0.5),
        "MultiStepLR": lambda o: s.MultiStepLR(o, [2, 2, 5], 0.5),
        "LinearLR": lambda o: s.LinearLR(o, 0.2, 0.9, 5),
        "PolynomialLR": lambda o: s.PolynomialLR(o, 5, 2.0),
        "CosineAnnealingLR": lambda o: s.CosineAnnealingLR(o, 3, 0.01),
        "WarmRestarts": lambda o: s.CosineAnnealingWarmRestarts(o, 3, 2, 0.01),
        "CyclicLR": lambda o: s.CyclicLR(o, 0.01, 0.1, 3),
        "CyclicLR_exp_range": lambda o: s.CyclicLR(o, 0.01, 0.1, 2, 3, mode="exp_range",
                                                   gamma=0.9),
        "CyclicLR_no_momentum": lambda o: s.CyclicLR(o, 0.01, 0.1, 3, cycle_momentum=False),
        "OneCycleLR": lambda o: s.OneCycleLR(o, 1.0, total_steps=12),
        "OneCycleLR_three_phase": lambda o: s.OneCycleLR(o, 1.0, total_steps=12,
                                                         three_phase=True,
                                                         anneal_strategy="linear"),
        "SequentialLR": lambda o: s.SequentialLR(o, [s.ConstantLR(o, 0.5, 2),
                                                     s.ExponentialLR(o, 0.9)], [3]),
        "ChainedScheduler": lambda o: s.ChainedScheduler([s.ConstantLR(o, 0.5, 2),
                                                          s.ExponentialLR(o, 0.9)]),
        "Plateau": lambda o: s.ReduceLROnPlateau(o, patience=1, cooldown=1, min_lr=[0.02]),
        "Plateau_max_abs": lambda o: s.ReduceLROnPlateau(o, "max", 0.5, 0, threshold=0.1,
                                                         threshold_mode="abs"),
    }[name]


METRICS = [1, 1, 1, 1, 1.05, 1.2, 0.5, 0.5, 0.5, 2, 2, 2]


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "LinearLR", "PolynomialLR",
                                  "CosineAnnealingLR", "WarmRestarts", "CyclicLR",
                                  "CyclicLR_exp_range", "CyclicLR_no_momentum", "OneCycleLR",
                                  "OneCycleLR_three_phase", "SequentialLR", "ChainedScheduler",
                                  "Plateau", "Plateau_max_abs"])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_schedules_give_torch_s_rates_and_momenta(name, optimizer):
    runs = []
    for lib in LIBS:
        options = {"lr": 0.1, "momentum": 0.9} if optimizer == "SGD" else {"lr": 0.1}
        opt = getattr(lib.optim, optimizer)([lib.nn.Parameter(lib.ones(2))], **options)
        sched = _schedule(lib, name)(opt)
        rates = []
        for metric in METRICS:
            opt.step()
            sched.step(metric) if name.startswith("Plateau") else sched.step()
            group = opt.param_groups[0]
            momentum = group["momentum"] if "momentum" in group else group["betas"][0]
            rates.append([*sched.get_last_lr(), momentum])
        runs.append(np.array(rates, dtype=np.float64))
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-6, atol=1e-9)


def test_two_schedules_on_one_optimizer_compose_as_torch_s():
    runs = []
    for lib in LIBS:
        s = lib.optim.lr_scheduler
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        first, second = s.StepLR(opt, 2, 0.5), s.ExponentialLR(opt, 0.9)
        rates = []
        for _ in range(6):
            opt.step()
            first.step()
            second.step()
            rates.append([*first.get_last_lr(), *second.get_last_lr(), opt.param_groups[0]["lr"]])
        runs.append(np.array(rates))
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-12)


def test_warm_restarts_at_fractional_epochs_and_the_early_step_warning():
    runs = []
    for lib in LIBS:
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, 2, 2, 0.01)
        seen = []
        for epoch in [0.5, 1.5, 2.0, 3.7, 7.1, 1.0]:
            opt.step()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # step(epoch)'s deprecation, in both
                sched.step(epoch)
            seen.append([*sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch])
        early = lib.optim.lr_scheduler.StepLR(lib.optim.SGD([lib.nn.Parameter(lib.ones(2))],
                                                            lr=0.1), 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            early.step()                         # before any optimizer.step()
        runs.append((np.array(seen, dtype=np.float64),
                     sorted({w.category.__name__ for w in caught})))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-9)
    assert runs[1][1] == runs[0][1] == ["UserWarning"]


@pytest.mark.parametrize("kind", ["mean", "ema", "ema_with_buffers", "ema_avg_fn"])
def test_swa_utils_average_and_update_bn_as_torch(kind):
    weight, bias = START[0], START[1][:3]
    inputs = RNG.standard_normal((8, 2)).astype(np.float32)
    results = []
    for lib in LIBS:
        swa = lib.optim.swa_utils
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        with lib.no_grad():
            model[0].weight.copy_(lib.tensor(weight))
            model[0].bias.copy_(lib.tensor(bias))
        averaged = {
            "mean": lambda m, swa=swa: swa.AveragedModel(m),
            "ema": lambda m, swa=swa: swa.AveragedModel(
                m, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9)),
            "ema_with_buffers": lambda m, swa=swa: swa.AveragedModel(
                m, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9), use_buffers=True),
            "ema_avg_fn": lambda m, swa=swa: swa.AveragedModel(m,
                                                               avg_fn=swa.get_ema_avg_fn(0.8)),
        }[kind](model)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        sched = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy="linear")
        rates = []
        for _ in range(6):
            opt.zero_grad()
            model(lib.tensor(inputs)).pow(2).sum().backward()
            opt.step()
            averaged.update_parameters(model)
            sched.step()
            rates.append(sched.get_last_lr()[0])
        swa.update_bn([lib.tensor(inputs[:4]), lib.tensor(inputs[4:])], averaged)
        state = {k: _array(v).astype(np.float64) for k, v in averaged.state_dict().items()}
        results.append((rates, state))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-9)
    assert list(results[1][1]) == list(results[0][1])
    for key, value in results[0][1].items():
        np.testing.assert_allclose(results[1][1][key], value, rtol=1e-4, atol=1e-5,
                                   err_msg=key)


def _lbfgs_loaded(lib):
    # two steps, then the state dict loaded into a fresh LBFGS: what is shared with it
    def run(param, opt):
        def closure():
            opt.zero_grad()
            loss = ((param - 0.3) ** 4).sum() + (param ** 2).sum()
            loss.backward()
            return loss
        opt.step(closure)

    p = lib.nn.Parameter(lib.tensor([1.5, -0.5]))
    opt = lib.optim.LBFGS([p], max_iter=3, history_size=2)
    run(p, opt)
    run(p, opt)
    sd = opt.state_dict()
    q = lib.nn.Parameter(lib.tensor([1.5, -0.5]))
    fresh = lib.optim.LBFGS([q], max_iter=3, history_size=2)
    fresh.load_state_dict(sd)
    state, saved = fresh.state[q], sd["state"][0]
    shared = {key: (state[key] is value, all(a is b for a, b in zip(state[key], value)))
              if isinstance(value, list) else state[key] is value
              for key, value in saved.items() if key != "t"}
    run(q, fresh)
    return sd["state"][0] is opt.state[p], shared, _array(q)


def test_lbfgs_state_dict_and_load_share_the_history_as_torch_s():
    (t_same, t_shared, t_value), (m_same, m_shared, m_value) = map(_lbfgs_loaded, LIBS)
    assert (m_same, m_shared) == (t_same, t_shared)
    np.testing.assert_allclose(m_value, t_value, rtol=1e-5)


def _overridden_step_warning(lib):
    opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
    sched = lib.optim.lr_scheduler.StepLR(opt, 1)
    opt.step = lambda *args, **kwargs: None      # replaced after the schedule was made
    opt.step()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.step()
    return [(w.category.__name__, str(w.message)[:60]) for w in caught]


def test_a_replaced_optimizer_step_gives_torch_s_overridden_warning():
    assert _overridden_step_warning(mg) == _overridden_step_warning(torch)


def _state_dict_hooks(lib):
    # every hook of state_dict and load_state_dict, one rewriting what is loaded
    log = []
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.Adam([p], lr=0.1)
    opt.register_state_dict_pre_hook(lambda o: log.append("state pre"))
    opt.register_state_dict_post_hook(lambda o, sd: log.append(("state post", sorted(sd))))

    def rewrite(o, sd):
        log.append(("load pre", sd is given))
        sd["param_groups"][0]["lr"] = 0.5

    opt.register_load_state_dict_pre_hook(rewrite)
    handle = opt.register_load_state_dict_post_hook(lambda o: log.append("load post"),
                                                    prepend=True)
    p.grad = lib.ones(2)
    opt.step()
    given = opt.state_dict()
    opt.load_state_dict(given)
    handle.remove()
    opt.load_state_dict(opt.state_dict())
    return log, opt.param_groups[0]["lr"], opt.state[p]["exp_avg"] is given["state"][0]["exp_avg"]


def test_state_dict_and_load_hooks_run_as_torch_s():
    assert _state_dict_hooks(mg) == _state_dict_hooks(torch)


CROSS = [("Adam", {"lr": 0.1}), ("AdamW", {"lr": 0.1, "amsgrad": True}),
         ("SGD", {"lr": 0.1, "momentum": 0.9}),
         ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
         ("Adagrad", {"lr": 0.1}), ("LBFGS", {"lr": 0.5, "history_size": 3, "max_iter": 4})]


def _cross_steps(lib, name, opt, params, steps, first):
    # ``steps`` steps from gradient set ``first``; LBFGS by a closure of a quadratic
    for step in range(first, first + steps):
        targets = [lib.tensor(g.astype(np.float64), dtype=p.dtype)
                   for g, p in zip(GRADS[step], params)]
        if name == "LBFGS":
            def closure(targets=targets):
                opt.zero_grad()
                loss = sum(((p - t) ** 2).sum() for p, t in zip(params, targets))
                loss.backward()
                return loss
            opt.step(closure)
        else:
            for p, t in zip(params, targets):
                p.grad = t
            opt.step()


def _summary(value):
    # a state entry as (dtype, values): Tensors copied, LBFGS's lists entry by entry
    if isinstance(value, list):
        return [_summary(v) for v in value]
    if hasattr(value, "dtype"):
        return _dtype(value), _array(value).astype(np.float64).copy()
    return type(value).__name__, value


def _cross_loaded(lib, name, options, saved_dtype, loaded_dtype):
    made = [lib.nn.Parameter(lib.tensor(a, dtype=getattr(lib, saved_dtype))) for a in START]
    opt = getattr(lib.optim, name)(made, **options)
    _cross_steps(lib, name, opt, made, 2, 0)
    fresh = [lib.nn.Parameter(lib.tensor(a, dtype=getattr(lib, loaded_dtype))) for a in START]
    opt2 = getattr(lib.optim, name)(fresh, **options)
    opt2.load_state_dict(opt.state_dict())
    state = [{k: _summary(v) for k, v in opt2.state[p].items()} for p in fresh if p in opt2.state]
    _cross_steps(lib, name, opt2, fresh, 1, 2)
    return state, [(_dtype(p), _array(p).astype(np.float64)) for p in fresh]


def _assert_same(theirs, ours, where):
    if isinstance(theirs, dict):
        assert set(theirs) == set(ours), where
        for key in theirs:
            _assert_same(theirs[key], ours[key], f"{where}[{key!r}]")
    elif isinstance(theirs, (list, tuple)) and not isinstance(theirs, np.ndarray):
        assert isinstance(ours, (list, tuple)) and len(theirs) == len(ours), (where, ours)
        for i, (a, b) in enumerate(zip(theirs, ours)):
            _assert_same(a, b, f"{where}[{i}]")
    elif isinstance(theirs, np.ndarray):      # (LBFGS's float32 history: its sums' order)
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6, err_msg=where)
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-6), (where, theirs, ours)
    else:
        assert theirs == ours, (where, theirs, ours)


@pytest.mark.parametrize("name, options", CROSS, ids=lambda v: str(v))
@pytest.mark.parametrize("saved, loaded", [("float64", "float32"), ("float32", "float64")])
def test_a_state_dict_loads_into_parameters_of_another_dtype_as_torch_s(name, options, saved,
                                                                        loaded):
    """Floating states cast to the parameter's dtype, the step as saved, and the next step's
    parameters: torch's."""
    theirs = _cross_loaded(torch, name, options, saved, loaded)
    ours = _cross_loaded(mg, name, options, saved, loaded)
    _assert_same(theirs, ours, f"{name} {saved} -> {loaded}")


def _pinned_and_own_states(lib):
    # a capturable (or fused) group's step loads as float32; a hand-written optimizer's
    # Tensors, an integer one too, load in the floating parameter's dtype
    seen = []
    for flag in ("capturable", "fused"):
        p = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        opt = lib.optim.Adam([p], **{flag: True})
        groups = opt.state_dict()["param_groups"]
        state = {"step": lib.tensor(3.0, dtype=lib.float64), "exp_avg": lib.tensor([1, 2]),
                 "exp_avg_sq": lib.ones(2)}
        opt.load_state_dict({"state": {0: state}, "param_groups": groups})
        seen.append({k: _dtype(v) for k, v in opt.state[p].items()})

    class Own(lib.optim.Optimizer):
        def __init__(self, params, capturable):
            super().__init__(params, {"lr": 0.1, "capturable": capturable})

        def step(self, closure=None):
            for p in self.param_groups[0]["params"]:
                self.state[p].update(count=lib.tensor(3), buf=lib.ones(2, dtype=lib.float64),
                                     step=lib.tensor(2.0, dtype=lib.float64), n=5)

    for capturable in (False, True):
        opt = Own([lib.nn.Parameter(lib.ones(2))], capturable)
        opt.step()
        q = lib.nn.Parameter(lib.ones(2))
        loaded = Own([q], capturable)
        loaded.load_state_dict(opt.state_dict())
        seen.append({k: _dtype(v) for k, v in loaded.state[q].items()})
    return seen


def test_capturable_steps_and_a_hand_written_optimizer_s_states_load_as_torch_s():
    assert _pinned_and_own_states(mg) == _pinned_and_own_states(torch)


def _mismatch_errors(lib, name, options):
    params = [lib.nn.Parameter(lib.tensor(a)) for a in START]
    saved = getattr(lib.optim, name)(params, **options).state_dict()
    targets = [params[:1]]
    if name != "LBFGS":                          # LBFGS takes one group only
        targets.append([{"params": params[:1]}, {"params": params[1:]}])
    classes = []
    for target in targets:
        opt = getattr(lib.optim, name)(target, **options)
        before = opt.state_dict()
        try:
            opt.load_state_dict(saved)
            classes.append(None)
        except Exception as error:                # noqa: BLE001 (the class is the outcome)
            classes.append(type(error))
        assert len(opt.state_dict()["param_groups"]) == len(before["param_groups"])
    return classes


@pytest.mark.parametrize("name, options", CROSS, ids=lambda v: str(v))
def test_a_state_dict_of_other_groups_or_counts_is_torch_s_value_error(name, options):
    theirs, ours = _mismatch_errors(torch, name, options), _mismatch_errors(mg, name, options)
    assert all(t is not None and o is not None and issubclass(o, t)
               for t, o in zip(theirs, ours)), (theirs, ours)
    assert len(theirs) == len(ours)
